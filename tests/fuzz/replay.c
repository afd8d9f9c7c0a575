/* SPDX-License-Identifier: MIT */
/* Runs a libFuzzer target over files and directories, for builds without libFuzzer. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return perror(path), -1;
	static uint8_t buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

int
main(int argc, char **argv)
{
	size_t count = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0)
			return perror(argv[i]), 1;
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]) < 0)
				return 1;
			count++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		if (!d)
			return perror(argv[i]), 1;
		struct dirent *e;
		while ((e = readdir(d))) {
			char path[4096];
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (run_file(path) < 0)
				return closedir(d), 1;
			count++;
		}
		closedir(d);
	}
	printf("replayed %zu inputs\n", count);
	return count ? 0 : 1;
}
