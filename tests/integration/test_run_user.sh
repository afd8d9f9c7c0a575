#!/bin/sh
# moat run as an ordinary user: no privilege beyond no_new_privs is needed. As
# root, the test drops to nobody with setpriv (util-linux) in a directory nobody
# cannot write; as another user it runs as that user. An allowed read works, a
# denied read fails with EACCES though the kernel alone would allow it, and
# the kernel's own refusals (a cwd nobody may not write) stay the kernel's.
set -u
. "$(dirname "$0")/lib_run.sh"

AS=""
if [ "$(id -u)" -eq 0 ]; then
	if ! command -v setpriv >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1; then
		echo "skip: running as root without setpriv or a nobody user"
		exit 77
	fi
	GROUP=$(id -gn nobody)
	AS="setpriv --reuid=nobody --regid=$GROUP --clear-groups --"
	# nobody must reach the binaries, the tree and the policy, and write nothing.
	for d in "$MOAT_BIN" "$PROGS"; do
		if ! $AS test -x "$d"; then
			echo "skip: nobody cannot reach $d"
			exit 77
		fi
	done
	chmod 755 "$T" "$T/home" "$HOME/.ssh" "$T/repo" "$T/outside"
	chmod 644 "$HOME/.ssh/id_rsa" "$POLICY" "$T/repo/a.txt" "$T/outside/o.txt"
fi
ID_RSA="$HOME/.ssh/id_rsa"

# As the user, natively: the key is readable (so the refusal below is moat's),
# and the cwd is not writable.
run $AS "$PROGS/probe" cat,"$ID_RSA" put,native.txt,x
expect_line "cat $ID_RSA: ok CANARY-ssh-private-key"
if [ -n "$AS" ]; then
	expect_line "put native.txt: EACCES"
fi

run timeout 60 $AS "$MOAT" run --policy "$POLICY" -- "$PROGS/probe" pid cat,a.txt \
	cat,"$ID_RSA" stat,"$ID_RSA" cat,"$T/outside/o.txt" cat,/etc/passwd put,new.txt,x \
	put,"$T/outside/x",y
expect_rc 0
expect_line "cat a.txt: ok hello from repo"
expect_line "cat $ID_RSA: EACCES"
expect_line "stat $ID_RSA: ENOENT"
expect_line "cat $T/outside/o.txt: EACCES"
expect_out "cat /etc/passwd: ok root:"
expect_line "put $T/outside/x: EACCES"
expect_no_canary
if [ -n "$AS" ]; then
	# The policy allows writing the cwd, the kernel does not let nobody: EACCES, no file.
	expect_line "put new.txt: EACCES"
	expect_true "a file was created in a directory nobody cannot write" test ! -e new.txt
	# The supervisor itself runs as nobody too: it gains nothing the user lacks.
	run timeout 60 $AS "$MOAT" run --policy "$POLICY" -- sh -c 'id -u; cat /etc/shadow'
	expect_line "$(id -u nobody)"
	expect_err "Permission denied"
else
	expect_line "put new.txt: ok"
fi

# cat and sh, as the user.
run timeout 60 $AS "$MOAT" run --policy "$POLICY" -- sh -c 'cat a.txt; cat "$1"; echo "rc=$?"' \
	sh "$ID_RSA"
expect_rc 0
expect_line "hello from repo"
expect_line "rc=1"
expect_err "Permission denied"
expect_no_canary

finish
