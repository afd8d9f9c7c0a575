/* SPDX-License-Identifier: MIT */
/*
 * sysrun HOW CMD: runs the shell command CMD through libc and prints what the
 * caller sees:
 *
 *   system   system(CMD); prints "system: exit N" or "system: signal N"
 *   popen    popen(CMD, "r"); prints the bytes read (as they came), then
 *            "popen: N bytes, exit N" (or "signal N") from pclose
 *   popen-w  popen(CMD, "w"); writes the lines "line 1".."line 500", then
 *            prints "popen-w: exit N" (or "signal N") from pclose
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static void
status(const char *how, int st)
{
	if (st == -1)
		printf("%s: failed\n", how);
	else if (WIFEXITED(st))
		printf("%s: exit %d\n", how, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		printf("%s: signal %d\n", how, WTERMSIG(st));
	else
		printf("%s: status %#x\n", how, st);
}

int
main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: sysrun system|popen|popen-w CMD\n");
		return 2;
	}
	const char *how = argv[1], *cmd = argv[2];

	if (strcmp(how, "system") == 0) {
		fflush(stdout);
		status("system", system(cmd));
	} else if (strcmp(how, "popen") == 0) {
		FILE *f = popen(cmd, "r");
		char buf[4096];
		size_t n, total = 0;

		if (!f) {
			perror("popen");
			return 1;
		}
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
			fwrite(buf, 1, n, stdout);
			total += n;
		}
		printf("popen: %zu bytes, ", total);
		status("pclose", pclose(f));
	} else if (strcmp(how, "popen-w") == 0) {
		fflush(stdout);
		FILE *f = popen(cmd, "w");

		if (!f) {
			perror("popen");
			return 1;
		}
		for (int i = 1; i <= 500; i++)
			fprintf(f, "line %d\n", i);
		status("popen-w", pclose(f));
	} else {
		fprintf(stderr, "sysrun: unknown HOW %s\n", how);
		return 2;
	}
	return 0;
}
