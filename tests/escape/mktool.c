/* SPDX-License-Identifier: MIT */
/*
 * mktool OUT MESSAGE: writes a minimal position-independent x86-64 ELF that
 * prints MESSAGE and exits 0. It needs no libc and no relocation, so it also
 * runs when the kernel loads it as another program's ELF interpreter (PT_INTERP).
 * Placed in a denied directory, it is "a denied binary" whose running is visible.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	static unsigned char code[] = {
	    0xb8, 0x01, 0x00, 0x00, 0x00,             /* mov eax, 1 (write) */
	    0xbf, 0x01, 0x00, 0x00, 0x00,             /* mov edi, 1 */
	    0x48, 0x8d, 0x35, 0x10, 0x00, 0x00, 0x00, /* lea rsi, [rip+16]: the message */
	    0xba, 0x00, 0x00, 0x00, 0x00,             /* mov edx, len */
	    0x0f, 0x05,                               /* syscall */
	    0xb8, 0xe7, 0x00, 0x00, 0x00,             /* mov eax, 231 (exit_group) */
	    0x31, 0xff,                               /* xor edi, edi */
	    0x0f, 0x05,                               /* syscall */
	};
	unsigned char file[4096];
	Elf64_Ehdr *eh = (Elf64_Ehdr *)file;
	Elf64_Phdr *ph = (Elf64_Phdr *)(file + sizeof(*eh));
	size_t code_at = sizeof(*eh) + sizeof(*ph);

	if (argc < 3)
		return 2;
	size_t len = strlen(argv[2]);
	if (code_at + sizeof(code) + len + 1 > sizeof(file) || len > 255)
		return 2;
	memset(file, 0, sizeof(file));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = code_at;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	code[18] = (unsigned char)(len + 1);
	memcpy(file + code_at, code, sizeof(code));
	memcpy(file + code_at + sizeof(code), argv[2], len);
	file[code_at + sizeof(code) + len] = '\n';
	size_t total = code_at + sizeof(code) + len + 1;
	ph->p_type = PT_LOAD;
	ph->p_flags = PF_R | PF_X;
	ph->p_offset = 0;
	ph->p_vaddr = ph->p_paddr = 0;
	ph->p_filesz = ph->p_memsz = total;
	ph->p_align = 0x1000;
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd < 0 || write(fd, file, total) != (ssize_t)total) {
		perror(argv[1]);
		return 1;
	}
	return close(fd) < 0;
}
