/* SPDX-License-Identifier: MIT */
/*
 * udprecv PORTFILE SECONDS: run OUTSIDE moat. Binds a UDP socket on
 * 127.0.0.1, writes its port to PORTFILE, prints every datagram it receives
 * for SECONDS, then exits.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t l = sizeof(a);
	char buf[512];

	if (argc < 3)
		return 2;
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &l) < 0)
		return 2;
	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 2;
	fprintf(f, "%d\n", ntohs(a.sin_port));
	fclose(f);
	struct pollfd p = {s, POLLIN, 0};
	while (poll(&p, 1, atoi(argv[2]) * 1000) > 0) {
		ssize_t n = recv(s, buf, sizeof(buf) - 1, 0);
		if (n < 0)
			break;
		buf[n] = '\0';
		printf("received: %s\n", buf);
		fflush(stdout);
	}
	return 0;
}
