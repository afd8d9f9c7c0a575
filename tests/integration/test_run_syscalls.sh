#!/bin/sh
# moat run: the calls that are refused outright (EPERM; ENOSYS for clone3, so
# that glibc falls back to clone), and the ones that kill: an x32 system call
# number and the i386 int 0x80 gate end the process with SIGSYS, which moat
# reports as 128+31 = 159. Natively the same calls go through (where this
# machine allows them), so each refusal is the filter's.
set -u
. "$(dirname "$0")/lib_run.sh"

REFUSED="io_uring_setup ptrace_traceme ptrace_attach ptrace_seize process_vm_readv
process_vm_writev unshare_user unshare_mount clone_newuser setns chroot mount bpf
perf_event_open userfaultfd handles pidfd_getfd seccomp_listener keyctl"

# shellcheck disable=SC2086
mrun "$PROGS/refuse" $REFUSED clone3
expect_rc 0
for name in io_uring_setup ptrace_traceme ptrace_attach ptrace_seize process_vm_readv \
	process_vm_writev unshare_user unshare_mount clone_newuser setns chroot mount bpf \
	perf_event_open userfaultfd name_to_handle_at open_by_handle_at pidfd_getfd \
	seccomp_listener keyctl; do
	expect_line "$name: EPERM"
done
expect_line "clone3: ENOSYS"

# Natively (in a child of its own, so that PTRACE_TRACEME and unshare stay there)
# the harmless ones succeed: the refusals above are moat's.
for name in io_uring_setup ptrace_attach process_vm_readv pidfd_getfd seccomp_listener clone3; do
	nrun "$PROGS/refuse" "$name"
	grep -qx "$name: ok" "$_out" || echo "note: natively refused here too: $(cat "$_out")"
done

# fork, clone and threads still work (clone3 falls back to clone).
mrun sh -c 'echo one & wait; echo two | cat'
expect_rc 0
expect_line "one"
expect_line "two"
mrun "$PROGS/racer" open "$T/repo/a.txt" "$T/repo/b.txt" 10
expect_rc 0
expect_out "open: tries="

# --- foreign system call conventions: killed by SIGSYS ---
for how in x32 int80; do
	nrun "$PROGS/badarch" "$how"
	expect_out "survived"
	mrun "$PROGS/badarch" "$how"
	expect_rc 159
	expect_out_not "survived"
done
# From a child of the agent too: the child dies, the agent sees SIGSYS.
mrun sh -c '"$0" x32; echo "child status $?"' "$PROGS/badarch"
expect_rc 0
expect_line "child status 159"
expect_out_not "survived"

finish
