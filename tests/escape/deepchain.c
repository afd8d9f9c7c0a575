/* SPDX-License-Identifier: MIT */
/*
 * deepchain DEPTH MARK: builds a chain of DEPTH processes, each the parent of
 * the next, then the agent exits. moat kills what the session leaves behind by
 * rounds: each round SIGKILLs its direct children (orphans re-parented to it as
 * a subreaper), and the next level is orphaned for the next round, for at most
 * 64 rounds. The last process of the chain writes MARK/alive after 2 s if it
 * still exists, which the caller checks once moat has exited. Each level is in
 * a session of its own, out of the agent's process group.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 100;

	if (argc < 3)
		return 2;
	/* The file is opened now, while the supervisor still answers. */
	char path[4096];
	snprintf(path, sizeof(path), "%s/alive", argv[2]);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 2;
	int ready[2];
	if (pipe(ready) < 0)
		return 2;
	for (int i = 0; i < depth; i++) {
		pid_t p = fork();
		if (p < 0)
			return 2;
		if (p == 0)
			setsid(); /* out of the agent's process group, which moat kills first */
		if (p > 0) {
			if (i == 0) {
				/* the agent itself exits once the chain is built: the session ends */
				char b;
				close(ready[1]);
				return read(ready[0], &b, 1) == 1 ? 0 : 1;
			}
			sleep(
			    6); /* every other level waits, then goes: nothing is left behind for long */
			return 0;
		}
	}
	(void)!write(ready[1], "x", 1);
	sleep(2);
	static const char m[] = "the end of the chain outlived the session\n";
	(void)!write(fd, m, sizeof(m) - 1);
	return 0;
}
