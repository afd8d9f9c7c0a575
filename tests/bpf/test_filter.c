/* SPDX-License-Identifier: MIT */
/*
 * The generated filter, run by a small classic-BPF interpreter against synthetic
 * seccomp_data: what the kernel would decide for each call, checked without
 * privilege and without loading anything.
 */
#include <linux/audit.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <termios.h>

#include <cmocka.h>

#include "filter.h"
#include "moat/macro.h"

#define SUP_PID  4242
#define SUP_PGRP 4200
#define SUP_TID2 4243

static struct sock_fprog prog;

/* Runs a seccomp cBPF program; aborts the test on anything the kernel would reject. */
static uint32_t
run(const struct sock_fprog *p, const struct seccomp_data *d)
{
	uint32_t A = 0, X = 0, M[BPF_MEMWORDS] = {0};
	const uint8_t *data = (const uint8_t *)d;

	for (unsigned pc = 0; pc < p->len; pc++) {
		const struct sock_filter *f = &p->filter[pc];
		uint32_t src = BPF_SRC(f->code) == BPF_X ? X : f->k;
		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (BPF_MODE(f->code) == BPF_ABS) {
				assert_true(f->k + 4 <= sizeof(*d));
				memcpy(&A, data + f->k, 4);
			} else if (BPF_MODE(f->code) == BPF_MEM) {
				A = M[f->k];
			} else if (BPF_MODE(f->code) == BPF_IMM) {
				A = f->k;
			} else {
				fail_msg("unsupported ld mode %#x", f->code);
			}
			break;
		case BPF_LDX:
			X = BPF_MODE(f->code) == BPF_MEM ? M[f->k] : f->k;
			break;
		case BPF_ST:
			M[f->k] = A;
			break;
		case BPF_STX:
			M[f->k] = X;
			break;
		case BPF_ALU:
			switch (BPF_OP(f->code)) {
			case BPF_ADD:
				A += src;
				break;
			case BPF_SUB:
				A -= src;
				break;
			case BPF_AND:
				A &= src;
				break;
			case BPF_OR:
				A |= src;
				break;
			case BPF_XOR:
				A ^= src;
				break;
			case BPF_LSH:
				A <<= src;
				break;
			case BPF_RSH:
				A >>= src;
				break;
			case BPF_NEG:
				A = -A;
				break;
			default:
				fail_msg("unsupported alu op %#x", f->code);
			}
			break;
		case BPF_JMP: {
			bool t;
			switch (BPF_OP(f->code)) {
			case BPF_JA:
				pc += f->k;
				continue;
			case BPF_JEQ:
				t = A == src;
				break;
			case BPF_JGT:
				t = A > src;
				break;
			case BPF_JGE:
				t = A >= src;
				break;
			case BPF_JSET:
				t = (A & src) != 0;
				break;
			default:
				fail_msg("unsupported jmp op %#x", f->code);
				return 0;
			}
			pc += t ? f->jt : f->jf;
			break;
		}
		case BPF_RET:
			return BPF_RVAL(f->code) == BPF_A ? A : f->k;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				X = A;
			else
				A = X;
			break;
		default:
			fail_msg("unsupported class %#x", f->code);
		}
	}
	fail_msg("fell off the end of the program");
	return 0;
}

static uint32_t
decide(uint32_t arch, int nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	struct seccomp_data d = {.nr = nr, .arch = arch, .args = {a0, a1, a2}};
	return run(&prog, &d);
}

static uint32_t
decide_a4(int nr, uint64_t a4)
{
	struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64, .args = {3, 0, 0, 0, a4}};
	return run(&prog, &d);
}

#define NATIVE       AUDIT_ARCH_X86_64
#define NR(name)     seccomp_syscall_resolve_name(name)
#define RET_ERRNO(e) (SECCOMP_RET_ERRNO | (e))

static int
setup(void **state)
{
	static const pid_t tids[] = {SUP_PID, SUP_TID2};
	struct sv_filter_opts o = {
	    .supervisor_pid = SUP_PID,
	    .supervisor_pgrp = SUP_PGRP,
	    .supervisor_tids = tids,
	    .n_supervisor_tids = ARRAY_SIZE(tids),
	};
	return sv_filter_build(&o, &prog) == 0 ? 0 : -1;
}

static int
teardown(void **state)
{
	free(prog.filter);
	return 0;
}

static void
test_table(void **state)
{
	size_t n;
	const struct sv_syscall *t = sv_syscall_table(&n);
	static const uint32_t expect[SV_DISPOSITION_MAX] = {
	    [SV_TRAP] = SECCOMP_RET_USER_NOTIF,
	    [SV_DENY] = RET_ERRNO(EPERM),
	    [SV_ENOSYS] = RET_ERRNO(ENOSYS),
	    [SV_TRAP_ADDRESSED] = SECCOMP_RET_ALLOW, /* as decide() calls it: no address */
	};
	size_t checked = 0;

	for (size_t i = 0; i < n; i++) {
		int nr = NR(t[i].name);
		if (strcmp(t[i].name, "fchmodat2") == 0)
			nr = 452;
		assert_int_not_equal(nr, __NR_SCMP_ERROR);
		uint32_t got = decide(NATIVE, nr, 0, 0, 0);
		if (got != expect[t[i].disposition])
			fail_msg("%s: got %#x, want %#x", t[i].name, got, expect[t[i].disposition]);
		checked++;
	}
	assert_true(checked > 100);
}

/* sendto is trapped for its address only: send() on a connected socket stays in the kernel. */
static void
test_sendto_address(void **state)
{
	int nr = NR("sendto");

	assert_int_equal(decide_a4(nr, 0), SECCOMP_RET_ALLOW);
	assert_int_equal(decide_a4(nr, 0x7ffc0000ULL), SECCOMP_RET_USER_NOTIF);
	/* Any bit of the 64-bit pointer counts, the high half too. */
	assert_int_equal(decide_a4(nr, 1ULL << 40), SECCOMP_RET_USER_NOTIF);
	assert_int_equal(decide_a4(NR("sendmsg"), 0), SECCOMP_RET_USER_NOTIF);
}

struct row {
	const char *what;
	uint32_t arch;
	int nr;
	uint64_t a0, a1;
	uint32_t want;
	uint64_t a2;
};

static void
test_rows(void **state)
{
	const struct row rows[] = {
	    {"read stays in the kernel", NATIVE, NR("read"), 0, 0, SECCOMP_RET_ALLOW},
	    {"close is never trapped", NATIVE, NR("close"), 3, 0, SECCOMP_RET_ALLOW},
	    {"fork is never trapped", NATIVE, NR("fork"), 0, 0, SECCOMP_RET_ALLOW},
	    {"plain clone", NATIVE, NR("clone"), CLONE_VM | CLONE_VFORK | SIGCHLD, 0,
	     SECCOMP_RET_ALLOW},
	    {"clone with a new user namespace", NATIVE, NR("clone"), CLONE_NEWUSER | SIGCHLD, 0,
	     RET_ERRNO(EPERM)},
	    {"clone with a new mount namespace", NATIVE, NR("clone"), CLONE_NEWNS, 0,
	     RET_ERRNO(EPERM)},
	    {"clone3 falls back", NATIVE, NR("clone3"), 0, 0, RET_ERRNO(ENOSYS)},
	    {"openat is trapped", NATIVE, NR("openat"), 0, 0, SECCOMP_RET_USER_NOTIF},
	    {"execve is trapped", NATIVE, NR("execve"), 0, 0, SECCOMP_RET_USER_NOTIF},
	    {"i386 is killed", AUDIT_ARCH_I386, 5, 0, 0, SECCOMP_RET_KILL_PROCESS},
	    {"aarch64 is killed", AUDIT_ARCH_AARCH64, 56, 0, 0, SECCOMP_RET_KILL_PROCESS},
	    {"x32 openat is killed", NATIVE, 0x40000000 | 257, 0, 0, SECCOMP_RET_KILL_PROCESS},
	    {"x32 read is killed", NATIVE, 0x40000000 | 0, 0, 0, SECCOMP_RET_KILL_PROCESS},
	    {"kill(supervisor)", NATIVE, NR("kill"), SUP_PID, 9, RET_ERRNO(EPERM)},
	    {"kill(supervisor) with junk above 32 bits", NATIVE, NR("kill"),
	     0xdead000000000000ull | SUP_PID, 9, RET_ERRNO(EPERM)},
	    {"kill(-supervisor group)", NATIVE, NR("kill"), (uint32_t)-SUP_PGRP, 15,
	     RET_ERRNO(EPERM)},
	    {"kill(-1)", NATIVE, NR("kill"), (uint32_t)-1, 9, RET_ERRNO(EPERM)},
	    {"kill(another pid)", NATIVE, NR("kill"), 777, 9, SECCOMP_RET_ALLOW},
	    {"kill(0): the agent's own group", NATIVE, NR("kill"), 0, 2, SECCOMP_RET_ALLOW},
	    {"tkill(supervisor thread)", NATIVE, NR("tkill"), SUP_TID2, 9, RET_ERRNO(EPERM)},
	    {"tgkill(supervisor)", NATIVE, NR("tgkill"), SUP_PID, SUP_PID, RET_ERRNO(EPERM)},
	    {"pidfd_open(supervisor)", NATIVE, NR("pidfd_open"), SUP_PID, 0, RET_ERRNO(EPERM)},
	    {"pidfd_open(child)", NATIVE, NR("pidfd_open"), 999, 0, SECCOMP_RET_ALLOW},
	    {"prlimit64(supervisor)", NATIVE, NR("prlimit64"), SUP_PID, 7, RET_ERRNO(EPERM)},
	    {"ioctl TIOCSTI", NATIVE, NR("ioctl"), 0, TIOCSTI, RET_ERRNO(EPERM)},
	    {"ioctl TCGETS", NATIVE, NR("ioctl"), 0, TCGETS, SECCOMP_RET_ALLOW},
	    {"seccomp with a new listener", NATIVE, NR("seccomp"), SECCOMP_SET_MODE_FILTER,
	     SECCOMP_FILTER_FLAG_NEW_LISTENER, RET_ERRNO(EPERM)},
	    {"getxattrat (newer than libseccomp) falls back", NATIVE, 464, 0, 0, RET_ERRNO(ENOSYS)},
	    {"file_getattr falls back", NATIVE, 468, 0, 0, RET_ERRNO(ENOSYS)},
	    {"a number from the future", NATIVE, 600, 0, 0, RET_ERRNO(ENOSYS)},
	    {"mseal stays in the kernel", NATIVE, 462, 0, 0, SECCOMP_RET_ALLOW},
	    {"F_SETOWN to the supervisor", NATIVE, NR("fcntl"), 3, F_SETOWN, RET_ERRNO(EPERM),
	     SUP_PID},
	    {"F_SETOWN to its group", NATIVE, NR("fcntl"), 3, F_SETOWN, RET_ERRNO(EPERM),
	     (uint32_t)-SUP_PGRP},
	    {"F_SETOWN to the agent itself", NATIVE, NR("fcntl"), 3, F_SETOWN, SECCOMP_RET_ALLOW,
	     777},
	    {"F_SETOWN_EX", NATIVE, NR("fcntl"), 3, F_SETOWN_EX, RET_ERRNO(EPERM)},
	    {"F_GETFL", NATIVE, NR("fcntl"), 3, F_GETFL, SECCOMP_RET_ALLOW},
	    {"ioctl FIOSETOWN", NATIVE, NR("ioctl"), 3, FIOSETOWN, RET_ERRNO(EPERM)},
	    {"seccomp adding a plain filter", NATIVE, NR("seccomp"), SECCOMP_SET_MODE_FILTER, 0,
	     SECCOMP_RET_ALLOW},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		uint32_t got = decide(rows[i].arch, rows[i].nr, rows[i].a0, rows[i].a1, rows[i].a2);
		if (got != rows[i].want)
			fail_msg("%s: got %#x, want %#x", rows[i].what, got, rows[i].want);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_sendto_address),
	    cmocka_unit_test(test_rows),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
