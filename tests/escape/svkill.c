/* SPDX-License-Identifier: MIT */
/*
 * svkill MODE: the agent (moat's direct child) tries to stop its supervisor.
 * The filter refuses kill/tgkill/pidfd_open/prlimit… naming the supervisor's
 * pid, but:
 *   sigio   F_SETOWN(supervisor) + O_ASYNC on a pipe: the kernel sends SIGIO,
 *           whose default action kills the supervisor
 *   setsig  the same with F_SETSIG(SIGKILL)
 *   thread  kill() a helper thread of the supervisor (it spawns one for a
 *           blocking FIFO open): a thread id is not the pid the filter names;
 *           kcmp(KCMP_VM) tells which thread ids are the supervisor's
 *   sched   sched_setattr(supervisor, SCHED_IDLE) is not on the list either
 * Prints "survived" and exits 0 if the agent is still running afterwards
 * (with a live supervisor, moat then exits 0).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct sched_attr_v1 {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t prio;
	uint64_t runtime, deadline, period;
	uint32_t util_min, util_max;
};

static void *
fifo_open(void *arg)
{
	(void)arg;
	open("svkill.fifo", O_RDONLY); /* blocks: no writer */
	return NULL;
}

int
main(int argc, char **argv)
{
	pid_t sv = getppid();
	int p[2];

	if (argc < 2)
		return 2;
	const char *mode = argv[1];
	printf("supervisor pid %d\n", (int)sv);
	fflush(stdout);
	if (strcmp(mode, "sigio") == 0 || strcmp(mode, "setsig") == 0) {
		if (pipe(p) < 0)
			return 2;
		if (fcntl(p[0], F_SETOWN, sv) < 0) {
			/* Refused: there is no owner to signal. */
			printf("F_SETOWN(supervisor): %s\n", strerrorname_np(errno));
			fflush(stdout);
			sleep(1);
			printf("survived\n");
			return 0;
		}
		if (strcmp(mode, "setsig") == 0 && fcntl(p[0], F_SETSIG, SIGKILL) < 0)
			return 2;
		if (fcntl(p[0], F_SETFL, O_ASYNC) < 0 || write(p[1], "x", 1) != 1)
			return 2;
	} else if (strcmp(mode, "thread") == 0) {
		pthread_t t;
		unlink("svkill.fifo");
		if (mkfifo("svkill.fifo", 0600) < 0)
			return 2;
		pthread_create(&t, NULL, fifo_open, NULL);
		usleep(300000);
		for (pid_t tid = sv + 1; tid < sv + 65536; tid++) {
			if (syscall(SYS_kcmp, sv, tid, 1 /* KCMP_VM */, 0, 0) != 0)
				continue;
			int r = kill(tid, SIGKILL);
			printf("kill(supervisor thread %d): %s\n", (int)tid,
			       r < 0 ? strerrorname_np(errno) : "sent");
			fflush(stdout);
		}
	} else if (strcmp(mode, "sched") == 0) {
		struct sched_attr_v1 a = {.size = sizeof(a), .policy = 5 /* SCHED_IDLE */};
		long r = syscall(SYS_sched_setattr, sv, &a, 0);
		printf("sched_setattr(supervisor, SCHED_IDLE): %s\n",
		       r < 0 ? strerrorname_np(errno) : "CHANGED");
		if (r == 0)
			return 1;
	} else {
		return 2;
	}
	sleep(1);
	printf("survived\n");
	return 0;
}
