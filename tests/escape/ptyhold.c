/* SPDX-License-Identifier: MIT */
/*
 * ptyhold FILE: run OUTSIDE moat. Opens a new pseudo-terminal (standing for
 * another terminal session of the same user), writes its slave's path to FILE
 * and keeps the master open until killed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0)
		return 2;
	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 2;
	fprintf(f, "%s\n", ptsname(m));
	fclose(f);
	for (;;)
		pause();
}
