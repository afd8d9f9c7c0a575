/* SPDX-License-Identifier: MIT */
/*
 * netbypass PORT: the network policy (here: no UDP to 127.0.0.1:PORT, no bind
 * at all) against the kernel's compatibility rules.
 *  - udp_sendmsg() takes a destination whose family is AF_UNSPEC as AF_INET;
 *    the supervisor lets AF_UNSPEC through undecided ("disconnect").
 *  - inet_bind() takes AF_UNSPEC with INADDR_ANY as AF_INET.
 *  - listen() on an unbound TCP socket binds an ephemeral port; listen is not trapped.
 * Prints one line per attempt; exits 1 if any attempt got past the policy.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	int port = argc > 1 ? atoi(argv[1]) : 9;
	int escaped = 0;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	socklen_t l;

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	ssize_t n = sendto(s, "EXFIL-AF_INET", 13, 0, (struct sockaddr *)&a, sizeof(a));
	printf("udp sendto AF_INET 127.0.0.1:%d: %s\n", port,
	       n < 0 ? strerrorname_np(errno) : "SENT");
	escaped |= n >= 0;
	a.sin_family = AF_UNSPEC;
	n = sendto(s, "EXFIL-AF_UNSPEC", 15, 0, (struct sockaddr *)&a, sizeof(a));
	printf("udp sendto AF_UNSPEC 127.0.0.1:%d: %s\n", port,
	       n < 0 ? strerrorname_np(errno) : "SENT");
	escaped |= n >= 0;
	struct msghdr m = {.msg_name = &a,
	                   .msg_namelen = sizeof(a),
	                   .msg_iov = &(struct iovec){(void *)"EXFIL-SENDMSG", 13},
	                   .msg_iovlen = 1};
	n = sendmsg(s, &m, 0);
	printf("udp sendmsg AF_UNSPEC: %s\n", n < 0 ? strerrorname_np(errno) : "SENT");
	escaped |= n >= 0;

	struct sockaddr_in b = {.sin_family = AF_INET, .sin_port = 0};
	int t = socket(AF_INET, SOCK_STREAM, 0);
	int r = bind(t, (struct sockaddr *)&b, sizeof(b));
	printf("tcp bind AF_INET 0.0.0.0:0: %s\n", r < 0 ? strerrorname_np(errno) : "BOUND");
	escaped |= r == 0;
	b.sin_family = AF_UNSPEC;
	r = bind(t, (struct sockaddr *)&b, sizeof(b));
	printf("tcp bind AF_UNSPEC 0.0.0.0:0: %s\n", r < 0 ? strerrorname_np(errno) : "BOUND");
	escaped |= r == 0;

	int u = socket(AF_INET, SOCK_STREAM, 0);
	r = listen(u, 1);
	l = sizeof(b);
	getsockname(u, (struct sockaddr *)&b, &l);
	printf("tcp listen without bind: %s port %d\n",
	       r < 0 ? strerrorname_np(errno) : "LISTENING", ntohs(b.sin_port));
	escaped |= r == 0;
	return escaped;
}
