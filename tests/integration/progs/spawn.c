/* SPDX-License-Identifier: MIT */
/*
 * spawn HOW PATH [ARGS...]: starts PATH the way HOW says and prints
 * "HOW: exit N", "HOW: signal N" or "HOW: errno NAME" (the exec failed):
 *
 *   vfork        vfork + execve
 *   fork         fork + execve
 *   posix_spawn  posix_spawn (glibc: clone(CLONE_VM|CLONE_VFORK) + execve)
 *   thread       execve from a second thread of a multithreaded process
 *                (the whole process becomes PATH: this one does not return)
 *   execveat     fork + execveat(fd of PATH opened O_PATH, "", AT_EMPTY_PATH)
 *   fexecve      fork + fexecve(fd of PATH opened O_RDONLY)
 *
 * The child's stdout and stderr are this process's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "progs.h"

extern char **environ;

static void
report(const char *how, pid_t pid, int exec_errno)
{
	int status;

	if (waitpid(pid, &status, 0) < 0) {
		printf("%s: waitpid %s\n", how, err_name(errno));
	} else if (exec_errno) {
		printf("%s: errno %s\n", how, err_name(exec_errno));
	} else if (WIFEXITED(status)) {
		printf("%s: exit %d\n", how, WEXITSTATUS(status));
	} else {
		printf("%s: signal %d\n", how, WTERMSIG(status));
	}
	fflush(stdout);
}

static char **child_argv;

static void *
exec_from_thread(void *arg)
{
	execve(child_argv[0], child_argv, environ);
	printf("thread: errno %s\n", err_name(errno));
	fflush(stdout);
	_exit(0);
}

/* The child of fork(): exec, or send errno up the pipe. */
static void
child_exec(const char *how, int up)
{
	if (strcmp(how, "execveat") == 0) {
		int fd = open(child_argv[0], O_PATH | O_CLOEXEC);
		if (fd >= 0)
			syscall(SYS_execveat, fd, "", child_argv, environ, AT_EMPTY_PATH);
	} else if (strcmp(how, "fexecve") == 0) {
		int fd = open(child_argv[0], O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			fexecve(fd, child_argv, environ);
	} else {
		execve(child_argv[0], child_argv, environ);
	}
	int e = errno;
	(void)!write(up, &e, sizeof(e));
	_exit(127);
}

int
main(int argc, char **argv)
{
	const char *how = argc > 2 ? argv[1] : "";
	static volatile int vfork_errno;
	int e = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: spawn vfork|fork|posix_spawn|thread|execveat|fexecve PATH "
		                "[ARGS...]\n");
		return 2;
	}
	child_argv = argv + 2;
	fflush(stdout);
	if (strcmp(how, "vfork") == 0) {
		vfork_errno = 0;
		pid_t pid = vfork();
		if (pid == 0) {
			execve(child_argv[0], child_argv, environ);
			vfork_errno = errno;
			_exit(127);
		}
		report(how, pid, vfork_errno);
	} else if (strcmp(how, "posix_spawn") == 0) {
		pid_t pid;
		e = posix_spawn(&pid, child_argv[0], NULL, NULL, child_argv, environ);
		if (e) {
			printf("%s: errno %s\n", how, err_name(e));
			fflush(stdout);
		} else {
			report(how, pid, 0);
		}
	} else if (strcmp(how, "thread") == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, exec_from_thread, NULL) != 0)
			return 2;
		pthread_join(t, NULL);
	} else {
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0)
			return 2;
		pid_t pid = fork();
		if (pid == 0)
			child_exec(how, p[1]);
		close(p[1]);
		if (read(p[0], &e, sizeof(e)) != sizeof(e))
			e = 0;
		report(how, pid, e);
	}
	return 0;
}
