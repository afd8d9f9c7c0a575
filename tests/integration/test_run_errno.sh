#!/bin/sh
# moat run: what the policy allows behaves exactly as without moat. errno_table
# performs the same list of calls (ENOENT, EEXIST, EISDIR, ENOTDIR, ELOOP,
# ENAMETOOLONG, EXDEV, O_TMPFILE + linkat, O_CREAT modes under a umask,
# O_APPEND, O_CLOEXEC, O_DIRECTORY, O_PATH, unlink/rmdir/rename errors, readlink,
# openat2, xattrs, ...) natively and under moat, each in a fresh directory the
# policy makes rw, and the two outputs must be identical line for line.
#
# The one expected difference: a file the kernel lets us write but the policy
# makes read-only. There moat answers EACCES to open(O_WRONLY) and to
# access(W_OK), where the kernel alone says 0 (the "policy" lines).
set -u
. "$(dirname "$0")/lib_run.sh"

# A second writable file system for EXDEV: /dev/shm when it is not the one $T is on.
OTHER=""
if [ -d /dev/shm ] && [ -w /dev/shm ] &&
	[ "$(stat -c %d /dev/shm)" != "$(stat -c %d "$T")" ]; then
	OTHER=$(cd "$(mktemp -d -p /dev/shm)" && pwd -P)
	CLEANUP="rm -rf '$OTHER'; $CLEANUP"
	mkdir "$OTHER/native" "$OTHER/moat"
fi
write_policy
if [ -n "$OTHER" ]; then
	sed "s|\"write\": \\[|\"write\": [\"$OTHER\", |" "$POLICY" >"$T/p" && mv "$T/p" "$POLICY"
fi
mkdir native moat

nrun "$PROGS/errno_table" "$T/repo/native" "${OTHER:+$OTHER/native}" "$T/ro/r.txt"
expect_rc 0
grep -v '^policy ' "$_out" >"$T/native.table"
grep '^policy ' "$_out" >"$T/native.policy"

mrun "$PROGS/errno_table" "$T/repo/moat" "${OTHER:+$OTHER/moat}" "$T/ro/r.txt"
expect_rc 0
grep -v '^policy ' "$_out" >"$T/moat.table"
grep '^policy ' "$_out" >"$T/moat.policy"

# The table is long enough to be the table, and the same under moat.
expect_true "errno_table printed too little natively" \
	test "$(wc -l <"$T/native.table")" -gt 150
expect_same_file "$T/native.table" "$T/moat.table" \
	"errno table for allowed paths differs from native (< native, > moat)"
if [ -n "$OTHER" ]; then
	expect_true "no EXDEV line" grep -qx "rename_exdev -1 EXDEV" "$T/moat.table"
fi

# The documented difference, checked explicitly both ways.
expect_true "native: the ro file is writable for the kernel" \
	grep -qx "policy open_wronly_ro 0 0" "$T/native.policy"
expect_true "native: access(W_OK) on the ro file is 0" \
	grep -qx "policy access_w_ro 0 0" "$T/native.policy"
expect_true "moat: open(O_WRONLY) of a read-only-by-policy file is not EACCES" \
	grep -qx "policy open_wronly_ro -1 EACCES" "$T/moat.policy"
expect_true "moat: access(W_OK) on a read-only-by-policy file is not EACCES" \
	grep -qx "policy access_w_ro -1 EACCES" "$T/moat.policy"
expect_true "moat: access(R_OK) on a read-only-by-policy file is not 0" \
	grep -qx "policy access_r_ro 0 0" "$T/moat.policy"
expect_true "the ro file was changed" test "$(cat "$T/ro/r.txt")" = "read only"

# What the calls left on disk is the same too: names, types and modes.
listing() {
	(cd "$1" && find . -path ./d -prune -o -printf '%p %y %m %s\n' | sort)
}
listing "$T/repo/native" >"$T/native.ls"
listing "$T/repo/moat" >"$T/moat.ls"
expect_same_file "$T/native.ls" "$T/moat.ls" \
	"the files left behind differ from native (< native, > moat)"

finish
