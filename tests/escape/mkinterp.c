/* SPDX-License-Identifier: MIT */
/*
 * mkinterp IN OUT INTERP: copies the dynamically linked ELF IN to OUT with its
 * PT_INTERP replaced by INTERP (no longer than the original). The kernel opens
 * an ELF's interpreter itself, inside execve: no syscall the filter could trap.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct stat st;

	if (argc < 4)
		return 2;
	int in = open(argv[1], O_RDONLY);
	if (in < 0 || fstat(in, &st) < 0)
		return perror(argv[1]), 1;
	unsigned char *b = malloc((size_t)st.st_size);
	if (!b || read(in, b, (size_t)st.st_size) != st.st_size)
		return 1;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	int done = 0;
	for (int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr *ph = (Elf64_Phdr *)(b + eh->e_phoff + (size_t)i * eh->e_phentsize);
		if (ph->p_type != PT_INTERP)
			continue;
		if (strlen(argv[3]) + 1 > ph->p_filesz)
			return fprintf(stderr, "mkinterp: %s is too long\n", argv[3]), 1;
		memset(b + ph->p_offset, 0, ph->p_filesz);
		memcpy(b + ph->p_offset, argv[3], strlen(argv[3]));
		done = 1;
	}
	if (!done)
		return fprintf(stderr, "mkinterp: %s has no PT_INTERP\n", argv[1]), 1;
	int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (out < 0 || write(out, b, (size_t)st.st_size) != st.st_size)
		return perror(argv[2]), 1;
	close(out);
	free(b);
	return 0;
}
