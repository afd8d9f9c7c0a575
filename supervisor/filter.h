/* SPDX-License-Identifier: MIT */
/*
 * The agent's seccomp filter: which system calls are trapped to the supervisor,
 * which are refused outright, and which kill. Built with libseccomp, exported as
 * BPF and loaded with seccomp(2) directly, because libseccomp 2.5.4 cannot set
 * SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV.
 */
#ifndef MOAT_SUPERVISOR_FILTER_H
#define MOAT_SUPERVISOR_FILTER_H

#include <linux/filter.h>
#include <stdbool.h>
#include <sys/types.h>

enum sv_disposition {
	SV_TRAP,   /* SECCOMP_RET_USER_NOTIF: decided by the supervisor */
	SV_DENY,   /* EPERM */
	SV_ENOSYS, /* ENOSYS, so that libc falls back (clone3 -> clone) */
	/*
	 * Trapped when argument 4 (an address) is not NULL: sendto on a connected
	 * socket has nothing to decide (its peer was decided at connect), and
	 * send() is sendto(fd, buf, len, flags, NULL, 0).
	 */
	SV_TRAP_ADDRESSED,
	SV_DISPOSITION_MAX,
};

/* One row of the syscall table the filter and the handlers share. */
struct sv_syscall {
	const char *name;
	enum sv_disposition disposition;
};

/* A syscall's number on this architecture, or -1. */
int sv_syscall_nr(const char *name);

/* The table, and its length. */
const struct sv_syscall *sv_syscall_table(size_t *ret_n);

/* Processes the agent must not signal, trace or re-limit: the supervisor. */
struct sv_filter_opts {
	pid_t supervisor_pid;
	pid_t supervisor_pgrp;
	const pid_t *supervisor_tids; /* every thread of the supervisor */
	size_t n_supervisor_tids;
	/*
	 * A runner task's filter instead: nothing trapped (no supervisor listens),
	 * the same refusals and kills, no supervisor to protect.
	 */
	bool task;
};

/* Builds the filter program; free ret->filter with free(). */
int sv_filter_build(const struct sv_filter_opts *opts, struct sock_fprog *ret);

/*
 * In the agent, before exec: sets no_new_privs and loads prog with
 * NEW_LISTENER and WAIT_KILLABLE_RECV. Returns the listener fd or -errno.
 * Async-signal-safe: it is called between fork and exec.
 */
int sv_filter_load(const struct sock_fprog *prog);

#endif
