/* SPDX-License-Identifier: MIT */
/*
 * poolstall N: N children each open a FIFO nobody writes and are killed. The
 * supervisor carries a blocking FIFO open on a worker thread of a small fixed
 * pool; an abandoned one holds its worker for the rest of the session. Then a
 * blocking connect() to 127.0.0.1:443 (allowed by the default policy; nothing
 * listens, so natively ECONNREFUSED at once), which also needs a worker. The
 * caller's time limit tells: no signal interrupts a call the supervisor has
 * received (WAIT_KILLABLE_RECV), so the agent hangs until SIGKILL.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 16;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(443)};

	unlink("stall.fifo");
	if (mkfifo("stall.fifo", 0600) < 0)
		return 2;
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p == 0) {
			open("stall.fifo", O_RDONLY);
			_exit(0);
		}
		usleep(20000);
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
	}
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	printf("connecting after %d abandoned FIFO opens\n", n);
	fflush(stdout);
	int r = connect(s, (struct sockaddr *)&a, sizeof(a));
	printf("after %d abandoned FIFO opens, connect(127.0.0.1:443): %s\n", n,
	       r < 0 ? strerrorname_np(errno) : "connected");
	fflush(stdout);
	unlink("stall.fifo");
	_exit(0);
}
