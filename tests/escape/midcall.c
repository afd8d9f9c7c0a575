/* SPDX-License-Identifier: MIT */
/*
 * midcall N SECONDS: N children each spin on trapped calls (open, stat,
 * connect, exec of a missing file) and are SIGKILLed at a random moment,
 * often while the supervisor handles their call. Then sleeps SECONDS so that
 * the caller can count the supervisor's fds and threads from outside; they must
 * be what they were at rest.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 300;
	struct stat st;

	srand((unsigned)getpid());
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p == 0) {
			struct sockaddr_un a = {.sun_family = AF_UNIX, .sun_path = "midcall.sock"};
			for (;;) {
				int fd = open("/etc/hostname", O_RDONLY);
				if (fd >= 0)
					close(fd);
				stat("/usr", &st);
				int s = socket(AF_UNIX, SOCK_STREAM, 0);
				connect(s, (struct sockaddr *)&a, sizeof(a));
				close(s);
				execl("./no-such-binary", "x", (char *)NULL);
			}
		}
		usleep((useconds_t)(rand() % 2000));
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
	}
	printf("midcall: killed %d children mid-call\n", n);
	fflush(stdout);
	sleep(argc > 2 ? (unsigned)atoi(argv[2]) : 2);
	return 0;
}
