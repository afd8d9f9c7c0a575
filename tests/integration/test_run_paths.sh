#!/bin/sh
# moat run: ways to name a denied object through an allowed spelling. Symlinks
# in the cwd, "..", relative opens through dirfds (an allowed dir, an ancestor
# opened O_PATH), openat2 RESOLVE_* (errno compared with the native call),
# /proc/self/fd/N re-opens, /proc/self/root and /proc/PID/root, O_PATH
# re-opens, hard links (made by the agent, or already there), bind mounts.
set -u
. "$(dirname "$0")/lib_run.sh"

ID_RSA="$HOME/.ssh/id_rsa"
ln -s "$HOME/.ssh" ssh-dir
ln -s key-link chain1
ln -s chain1 chain2
ln -s ../home/.ssh/id_rsa rel-link
ln -s ../outside outside-dir

# --- symlinks in the cwd to denied objects: decided on the target ---
mrun "$PROGS/probe" cat,key-link cat,chain2 cat,rel-link cat,ssh-dir/id_rsa ls,ssh-dir \
	cat,outside-dir/o.txt stat,key-link lstat,key-link readlink,key-link put,key-link,x \
	put,ssh-dir/new,x
expect_rc 0
expect_line "cat key-link: EACCES"
expect_line "cat chain2: EACCES"
expect_line "cat rel-link: EACCES"
expect_line "cat ssh-dir/id_rsa: EACCES"
expect_line "ls ssh-dir: EACCES"
expect_line "cat outside-dir/o.txt: EACCES"
expect_line "stat key-link: ENOENT"
# The link itself lives in the cwd: it may be seen and read as a link.
expect_out "lstat key-link: ok ino="
expect_line "readlink key-link: ok $ID_RSA"
expect_line "put key-link: EACCES"
expect_line "put ssh-dir/new: EACCES"
expect_no_canary
expect_true "the key was overwritten through a symlink" \
	grep -qx CANARY-ssh-private-key "$ID_RSA"
expect_true "a file was created through a symlink" test ! -e "$HOME/.ssh/new"

# A symlink the agent makes itself: the text decides nothing, the target does.
mrun "$PROGS/probe" symlink,"$ID_RSA",made-link cat,made-link symlink,../outside/o.txt,made2 \
	cat,made2
expect_rc 0
expect_line "symlink made-link: ok"
expect_line "cat made-link: EACCES"
expect_line "cat made2: EACCES"
expect_no_canary

# --- ".." escapes ---
mrun "$PROGS/probe" cat,../outside/o.txt cat,sub/../../outside/o.txt \
	cat,./sub/../../home/.ssh/id_rsa cat,"$T/repo/../outside/o.txt" \
	cat,"$T/repo/sub/../../home/.ssh/id_rsa" cat,sub/../a.txt cat,../repo/a.txt \
	chdir,sub cat,../../outside/o.txt cat,../a.txt cat,../.env chdir,"$T" cat,outside/o.txt \
	cat,repo/a.txt chdir,"$T/outside"
expect_rc 0
expect_line "cat ../outside/o.txt: EACCES"
expect_line "cat sub/../../outside/o.txt: EACCES"
expect_line "cat ./sub/../../home/.ssh/id_rsa: EACCES"
expect_line "cat $T/repo/../outside/o.txt: EACCES"
expect_line "cat $T/repo/sub/../../home/.ssh/id_rsa: EACCES"
expect_line "cat sub/../a.txt: ok hello from repo"
expect_line "cat ../repo/a.txt: ok hello from repo"
expect_line "chdir sub: ok"
expect_line "cat ../../outside/o.txt: EACCES"
expect_line "cat ../a.txt: ok hello from repo"
expect_line "cat ../.env: EACCES"
# An ancestor is a place to stand (stat access), but grants nothing below it.
expect_line "chdir $T: ok"
expect_line "cat outside/o.txt: EACCES"
expect_line "cat repo/a.txt: ok hello from repo"
expect_line "chdir $T/outside: ENOENT"
expect_no_canary

# --- relative opens through a dirfd on an allowed directory ---
mrun "$PROGS/probe" open,"$T/repo/sub",rdonly\|directory catat,@0,b.txt catat,@0,../a.txt \
	catat,@0,../secret/s.txt catat,@0,../../home/.ssh/id_rsa catat,@0,.env \
	catat,@0,../../outside/o.txt statat,@0,../../home/.ssh/id_rsa fchdir,@0 \
	cat,../secret/s.txt cat,b.txt
expect_rc 0
expect_line "catat b.txt: ok bee"
expect_line "catat ../a.txt: ok hello from repo"
expect_line "catat ../secret/s.txt: EACCES"
expect_line "catat ../../home/.ssh/id_rsa: EACCES"
expect_line "catat .env: EACCES"
expect_line "catat ../../outside/o.txt: EACCES"
expect_line "statat ../../home/.ssh/id_rsa: ENOENT"
expect_line "fchdir @0: ok"
expect_line "cat ../secret/s.txt: EACCES"
expect_line "cat b.txt: ok bee"
expect_no_canary

# --- an ancestor opened O_PATH (stat access), then a path into a denied subtree ---
mrun "$PROGS/probe" open,"$T",path catat,@0,home/.ssh/id_rsa catat,@0,outside/o.txt \
	catat,@0,repo/secret/s.txt catat,@0,repo/a.txt statat,@0,home/.ssh/id_rsa \
	open,"$T",rdonly\|directory
expect_rc 0
expect_line "open $T: fd 3"
# (If the O_PATH open itself failed, what follows would only repeat that failure.)
if grep -qx "open $T: fd 3" "$_out"; then
	expect_line "catat home/.ssh/id_rsa: EACCES"
	expect_line "catat outside/o.txt: EACCES"
	expect_line "catat repo/secret/s.txt: EACCES"
	expect_line "catat repo/a.txt: ok hello from repo"
	expect_line "statat home/.ssh/id_rsa: ENOENT"
fi
# Opening the ancestor for reading would list it: refused.
expect_line "open $T: EACCES"
expect_no_canary

# --- openat2 RESOLVE_*: the same errno as natively for allowed targets ---
ln -s /a.txt in-root-link
mkdir -p "$T/repo/sub2"
OPENAT2_OPS="open,$T/repo/sub,rdonly|directory
openat2,@0,../a.txt,rdonly,beneath
openat2,@0,b.txt,rdonly,beneath
openat2,@0,/b.txt,rdonly,in_root
openat2,@0,../../../b.txt,rdonly,in_root
openat2,@0,$T/repo/a.txt,rdonly,beneath
openat2,cwd,in-root-link,rdonly,in_root
openat2,cwd,in-root-link,rdonly,0
openat2,cwd,key-link,rdonly,no_symlinks
openat2,cwd,a.txt,rdonly,no_symlinks
openat2,cwd,/proc/self/cwd/a.txt,rdonly,no_magiclinks
openat2,cwd,/proc/self/cwd/a.txt,rdonly,0
openat2,cwd,sub/b.txt,rdonly,no_xdev
openat2,@0,new.txt,wronly|creat,beneath
openat2,@0,../new.txt,wronly|creat,beneath
chdir,sub2
openat2,cwd,/a.txt,rdonly,in_root
openat2,cwd,../a.txt,rdonly,beneath"
# shellcheck disable=SC2086
set -f
IFS_SAVE=$IFS
IFS='
'
nrun "$PROGS/probe" $OPENAT2_OPS
save openat2.native
rm -f sub/new.txt new.txt
mrun "$PROGS/probe" $OPENAT2_OPS
save openat2.moat
IFS=$IFS_SAVE
set +f
expect_rc 0
expect_same_file "$T/openat2.native" "$T/openat2.moat" \
	"openat2 with RESOLVE_* flags differs from the native call (< native, > moat)"
# The same flags with denied targets: refused, never read.
mrun "$PROGS/probe" open,"$T/repo/sub",rdonly\|directory \
	openat2,@0,../secret/s.txt,rdonly,beneath openat2,@0,../../home/.ssh/id_rsa,rdonly,0 \
	openat2,@0,/../.env,rdonly,in_root openat2,cwd,key-link,rdonly,0 \
	openat2,cwd,"$T/repo/key-link",rdonly,no_magiclinks
expect_rc 0
expect_line "openat2 ../../home/.ssh/id_rsa: EACCES"
expect_line "openat2 /../.env: EACCES"
expect_line "openat2 key-link: EACCES"
expect_line "openat2 $T/repo/key-link: EACCES"
# RESOLVE_BENEATH fails natively with EXDEV here; the policy's EACCES is fine too.
expect_out_not "openat2 ../secret/s.txt: fd"
expect_no_canary

# --- /proc/self/fd/N re-opens ---
# Registers: @0 = fd 3 (ro/r.txt, O_RDONLY), @1 = fd 4 (its O_RDONLY re-open),
# @2 = fd 5 (w.txt), @3 = fd 6 (w.txt re-opened for writing), @4 = fd 7 (sub/).
echo writable >w.txt
mrun "$PROGS/probe" open,"$T/ro/r.txt",rdonly reopen,@0,wronly reopen,@0,rdwr \
	reopen,@0,rdonly\|trunc reopen,@0,rdonly read,@1 \
	open,w.txt,rdonly reopen,@2,wronly write,@3,X \
	open,"$T/repo/sub",rdonly\|directory cat,/proc/self/fd/7/b.txt \
	cat,/proc/self/fd/7/../secret/s.txt cat,/proc/self/fd/7/../../home/.ssh/id_rsa \
	cat,/dev/fd/7/../.env cat,/proc/thread-self/fd/7/b.txt
expect_rc 0
expect_line "open $T/ro/r.txt: fd 3"
# Only the O_RDONLY re-open of the read-only file may succeed.
expect_true "a read-only file was re-opened for writing through /proc/self/fd" \
	test "$(grep -c '^reopen /proc/self/fd/3: EACCES$' "$_out")" -eq 3
expect_line "reopen /proc/self/fd/3: fd 4"
expect_line "read @1: ok read only"
# A writable file may be re-opened for writing.
expect_line "reopen /proc/self/fd/5: fd 6"
expect_line "write @3: ok"
expect_line "cat /proc/self/fd/7/b.txt: ok bee"
expect_line "cat /proc/self/fd/7/../secret/s.txt: EACCES"
expect_line "cat /proc/self/fd/7/../../home/.ssh/id_rsa: EACCES"
expect_line "cat /dev/fd/7/../.env: EACCES"
expect_line "cat /proc/thread-self/fd/7/b.txt: ok bee"
expect_no_canary
expect_true "ro/r.txt was changed through /proc/self/fd" test "$(cat "$T/ro/r.txt")" = "read only"
expect_true "w.txt was not written through its re-opened fd" grep -qx Xritable w.txt

# --- /proc/self/root, /proc/self/cwd, /proc/PID/root (own and the supervisor's) ---
mrun sh -c 'exec "$0" cat,/proc/self/root"$1"/.ssh/id_rsa cat,/proc/self/root"$2"/a.txt \
	cat,/proc/self/cwd/a.txt cat,/proc/self/cwd/../outside/o.txt cat,/proc/self/cwd/.env \
	cat,/proc/$$/root"$1"/.ssh/id_rsa cat,/proc/$$/cwd/a.txt cat,/proc/$$/cwd/secret/s.txt \
	cat,/proc/$PPID/root"$1"/.ssh/id_rsa cat,/proc/$PPID/cwd/a.txt \
	cat,/proc/1/root/etc/passwd' "$PROGS/probe" "$HOME" "$T/repo"
expect_rc 0
expect_line "cat /proc/self/root$HOME/.ssh/id_rsa: EACCES"
expect_line "cat /proc/self/root$T/repo/a.txt: ok hello from repo"
expect_line "cat /proc/self/cwd/a.txt: ok hello from repo"
expect_line "cat /proc/self/cwd/../outside/o.txt: EACCES"
expect_line "cat /proc/self/cwd/.env: EACCES"
expect_out "/root$HOME/.ssh/id_rsa: EACCES"
expect_out_not "/.ssh/id_rsa: ok"
expect_out_not "/secret/s.txt: ok"
# Another process's /proc entry (the supervisor's, init's) is not in the surface.
expect_out_not "/root/etc/passwd: ok"
expect_no_canary

# --- /proc/self is the agent's, not the supervisor's ---
mrun sh -c 'cd sub && exec "$0" cat,/proc/self/comm readlink,/proc/self/exe \
	readlink,/proc/self/cwd cat,/proc/thread-self/comm' "$PROGS/probe"
expect_rc 0
expect_line "cat /proc/self/comm: ok probe"
expect_line "readlink /proc/self/exe: ok $PROGS/probe"
expect_line "readlink /proc/self/cwd: ok $T/repo/sub"
expect_line "cat /proc/thread-self/comm: ok probe"
# /dev/stdout and /dev/stderr: on pipes, and on a file in the cwd.
NL='
'
mrun sh -c '"$0" put,/dev/stderr,"$1" put,/proc/self/fd/1,"$2" 2>&1 | cat' \
	"$PROGS/probe" "to-stderr$NL" "to-stdout$NL"
expect_rc 0
expect_line "put /dev/stderr: ok"
expect_line "put /proc/self/fd/1: ok"
expect_line "to-stderr"
expect_line "to-stdout"
timeout 60 "$MOAT" run --policy "$POLICY" -- "$PROGS/probe" put,/dev/stderr,"to-file$NL" \
	>"$_out" 2>"$T/repo/stderr.txt"
_rc=$?
_cmd="moat run -- probe put,/dev/stderr,to-file 2> cwd/stderr.txt"
cp "$T/repo/stderr.txt" "$_err"
expect_rc 0
expect_line "put /dev/stderr: ok"
expect_err "to-file"

# --- O_PATH: allowed where stat is, and a re-open is decided again ---
mrun "$PROGS/probe" open,"$T/ro/r.txt",path reopen,@0,rdonly reopen,@0,wronly \
	open,"$ID_RSA",path open,"$T",path reopen,@2,rdonly\|directory open,key-link,path\|nofollow \
	reopen,@3,rdonly
expect_rc 0
expect_line "open $T/ro/r.txt: fd 3"
expect_line "open $ID_RSA: ENOENT"
expect_no_canary
if grep -qx "open $T/ro/r.txt: fd 3" "$_out"; then
	expect_line "reopen /proc/self/fd/3: fd 4"
	expect_line "reopen /proc/self/fd/3: EACCES"
	expect_line "open $T: fd 5"
	expect_line "reopen /proc/self/fd/5: EACCES"
	expect_line "open key-link: fd 6"
	# An O_PATH fd on the link itself: re-opening it cannot reach the key.
	expect_out_not "reopen /proc/self/fd/6: fd"
fi

# --- hard links: the agent cannot make one to a file it may not write ---
mrun "$PROGS/probe" link,"$ID_RSA",stolen link,.env,env-link link,"$T/ro/r.txt",ro-link \
	link,vendor/v.txt,v-link link,secret/s.txt,s-link link,a.txt,a-link cat,a-link \
	link,a.txt,"$T/outside/a-link"
expect_rc 0
expect_line "link $ID_RSA: EACCES"
expect_line "link .env: EACCES"
expect_line "link $T/ro/r.txt: EACCES"
expect_line "link vendor/v.txt: EACCES"
expect_line "link secret/s.txt: EACCES"
expect_line "link a.txt: ok"
expect_line "cat a-link: ok hello from repo"
expect_line "link a.txt: EACCES"
for f in stolen env-link ro-link v-link s-link "$T/outside/a-link"; do
	expect_true "a refused link created $f" test ! -e "$f"
done

# --- a hard link that is already there: the object is denied, whatever its name ---
if ln "$ID_RSA" "$T/repo/hard-key" 2>/dev/null; then
	mrun "$PROGS/probe" cat,hard-key
	expect_line "cat hard-key: EACCES"
	expect_no_canary
	rm -f "$T/repo/hard-key"
fi

# --- a bind mount of a denied directory into the cwd (root only) ---
mkdir -p "$T/repo/mnt"
if [ "$(id -u)" -eq 0 ] && mount --bind "$HOME/.ssh" "$T/repo/mnt" 2>/dev/null; then
	CLEANUP="umount '$T/repo/mnt' 2>/dev/null; $CLEANUP"
	mrun "$PROGS/probe" cat,mnt/id_rsa ls,mnt
	expect_line "cat mnt/id_rsa: EACCES"
	expect_line "ls mnt: EACCES"
	expect_no_canary
	umount "$T/repo/mnt"
fi

finish
