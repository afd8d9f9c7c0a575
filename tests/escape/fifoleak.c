/* SPDX-License-Identifier: MIT */
/*
 * fifoleak N SECONDS: N times, a child opens a FIFO nobody writes (the
 * supervisor opens it on a helper thread, off its loop) and is killed. Every
 * abandoned open leaves that thread blocked in open(2) for the rest of the
 * session. Then sleeps SECONDS so that the caller can count the supervisor's
 * threads (/proc/PID/status) from outside.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;

	unlink("leak.fifo");
	if (mkfifo("leak.fifo", 0600) < 0)
		return 2;
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p == 0) {
			open("leak.fifo", O_RDONLY);
			_exit(0);
		}
		usleep(3000);
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
	}
	printf("abandoned %d fifo opens\n", n);
	fflush(stdout);
	sleep(argc > 2 ? (unsigned)atoi(argv[2]) : 2);
	unlink("leak.fifo");
	return 0;
}
