#!/bin/sh
# moat run: cat, python3, sh and a statically linked program reading allowed and
# denied files; denied opens fail with EACCES and denied stats with ENOENT,
# whether or not the path exists; writes inside the cwd and the write set
# succeed, writes anywhere else are refused and leave nothing behind.
set -u
. "$(dirname "$0")/lib_run.sh"

ID_RSA="$HOME/.ssh/id_rsa"

# --- cat: allowed files, from every part of the readable set ---
mrun cat a.txt sub/b.txt vendor/v.txt "$T/ro/r.txt" /etc/passwd
expect_rc 0
expect_out "hello from repo"
expect_out "bee"
expect_out "vendored"
expect_out "read only"
expect_out "root:"

# --- cat: every kind of denied file, existing or not: EACCES, nothing read ---
for f in "$ID_RSA" "$HOME/.ssh/missing" .env sub/.env secret/s.txt secret/missing \
	"$T/outside/o.txt" "$T/outside/missing" /etc/shadow; do
	mrun cat "$f"
	expect_rc 1
	expect_err "$f: Permission denied"
	expect_no_canary
done

# --- the same through probe: the exact errno per call ---
mrun "$PROGS/probe" cat,"$ID_RSA" cat,"$HOME/.ssh/missing" stat,"$ID_RSA" \
	stat,"$HOME/.ssh/missing" lstat,"$ID_RSA" access,"$ID_RSA",f readlink,"$ID_RSA" \
	stat,"$HOME/.ssh" ls,"$HOME/.ssh" stat,.env stat,secret stat,"$T/outside/o.txt" \
	cat,a.txt stat,a.txt access,a.txt,r stat,"$T" ls,"$T"
expect_rc 0
expect_line "cat $ID_RSA: EACCES"
expect_line "cat $HOME/.ssh/missing: EACCES"
expect_line "stat $ID_RSA: ENOENT"
expect_line "stat $HOME/.ssh/missing: ENOENT"
expect_line "lstat $ID_RSA: ENOENT"
expect_line "access $ID_RSA: ENOENT"
expect_line "readlink $ID_RSA: ENOENT"
expect_line "stat $HOME/.ssh: ENOENT"
expect_line "ls $HOME/.ssh: EACCES"
expect_line "stat .env: ENOENT"
expect_line "stat secret: ENOENT"
expect_line "stat $T/outside/o.txt: ENOENT"
expect_line "cat a.txt: ok hello from repo"
expect_out "stat a.txt: ok ino="
expect_line "access a.txt: ok"
# An ancestor of the cwd: stat allowed, listing it is not.
expect_out "stat $T: ok ino="
expect_line "ls $T: EACCES"
expect_no_canary

# --- a statically linked program: the same answers ---
mrun "$PROGS/probe_static" cat,a.txt cat,"$ID_RSA" cat,.env stat,"$ID_RSA" \
	stat,"$HOME/.ssh/missing" put,static.txt,s put,"$T/outside/static.txt",s
expect_rc 0
expect_line "cat a.txt: ok hello from repo"
expect_line "cat $ID_RSA: EACCES"
expect_line "cat .env: EACCES"
expect_line "stat $ID_RSA: ENOENT"
expect_line "stat $HOME/.ssh/missing: ENOENT"
expect_line "put static.txt: ok"
expect_line "put $T/outside/static.txt: EACCES"
expect_no_canary
expect_true "probe_static did not create static.txt" test -f static.txt
expect_true "probe_static created a file outside the surface" test ! -e "$T/outside/static.txt"

# --- python3 ---
if [ -n "$PY" ]; then
	cat >"$T/read.py" <<'PY'
import errno, os, sys
home = os.environ["HOME"]
print("a.txt:", open("a.txt").read().strip())
for path in [home + "/.ssh/id_rsa", home + "/.ssh/missing", ".env", "secret/s.txt",
             "../outside/o.txt", "key-link"]:
    try:
        data = open(path).read()
        print("open", path, "READ", data.strip())
    except OSError as e:
        print("open", path, errno.errorcode[e.errno])
    try:
        os.stat(path)
        print("stat", path, "visible")
    except OSError as e:
        print("stat", path, errno.errorcode[e.errno])
    print("exists", path, os.path.exists(path))
try:
    os.listdir(home + "/.ssh")
    print("listdir visible")
except OSError as e:
    print("listdir", errno.errorcode[e.errno])
with open("py.txt", "w") as f:
    f.write("from python\n")
try:
    open(home + "/.ssh/authorized_keys", "a").write("ssh-ed25519 AAAA attacker\n")
    print("append authorized_keys WROTE")
except OSError as e:
    print("append authorized_keys", errno.errorcode[e.errno])
PY
	cp "$T/read.py" "$T/ro/read.py"
	mrun "$PY" "$T/ro/read.py"
	expect_rc 0
	expect_line "a.txt: hello from repo"
	for p in "$ID_RSA" "$HOME/.ssh/missing" .env secret/s.txt ../outside/o.txt key-link; do
		expect_line "open $p EACCES"
		expect_line "stat $p ENOENT"
		expect_line "exists $p False"
	done
	expect_line "listdir EACCES"
	expect_line "append authorized_keys EACCES"
	expect_no_canary
	expect_true "python3 did not write py.txt" grep -qx "from python" py.txt
	expect_true "python3 created authorized_keys" test ! -e "$HOME/.ssh/authorized_keys"
fi

# --- sh: redirections are opens too ---
mrun sh -c 'read l < a.txt; echo "got $l"
	if cat < "$HOME/.ssh/id_rsa"; then echo "read key"; fi
	if [ -e "$HOME/.ssh/id_rsa" ]; then echo visible; else echo invisible; fi
	if [ -d "$HOME/.ssh" ]; then echo dir-visible; else echo dir-invisible; fi
	echo made > sh.txt && echo wrote-cwd
	if echo x > "'"$T"'/outside/sh.txt"; then echo wrote-outside; fi
	echo appended >> "'"$T"'/rw/log.txt" && echo wrote-rw'
expect_rc 0
expect_line "got hello from repo"
expect_err "cannot open $ID_RSA: Permission denied"
expect_out_not "read key"
expect_line "invisible"
expect_line "dir-invisible"
expect_line "wrote-cwd"
expect_out_not "wrote-outside"
expect_line "wrote-rw"
expect_no_canary
expect_true "sh did not create sh.txt" grep -qx made sh.txt
expect_true "sh wrote outside the surface" test ! -e "$T/outside/sh.txt"
expect_true "sh did not append to rw/log.txt" grep -qx appended "$T/rw/log.txt"

# --- writes: inside the cwd and the write set only ---
mrun "$PROGS/probe" put,new.txt,1 put,sub/new.txt,2 put,"$T/rw/w.txt",3 mkdir,newdir \
	put,newdir/x,4 symlink,a.txt,alink rename,new.txt,renamed.txt chmod,renamed.txt,600 \
	truncate,sub/new.txt,0 unlink,sub/b.txt \
	put,"$T/ro/x",5 put,vendor/x,6 put,"$T/outside/x",7 put,/etc/moat-test-x,8 \
	put,"$HOME/x",9 put,"$HOME/.ssh/authorized_keys",10 put,.env,11 put,sub/deeper/.env,12 \
	mkdir,"$T/outside/d" unlink,"$T/ro/r.txt" unlink,vendor/v.txt rename,a.txt,"$T/outside/a.txt" \
	rename,"$T/ro/r.txt",stolen.txt chmod,"$T/ro/r.txt",666 truncate,vendor/v.txt,0 \
	truncate,.env,0 unlink,.env mkdir,secret/d symlink,a.txt,"$T/outside/l" \
	rename,renamed.txt,.env put,nodir/x,y put,"$T/outside/nodir/x",z
expect_rc 0
# Allowed but impossible: the kernel's errno. Denied: EACCES, existing or not.
expect_line "put nodir/x: ENOENT"
expect_line "put $T/outside/nodir/x: EACCES"
for ok in "put new.txt" "put sub/new.txt" "put $T/rw/w.txt" "mkdir newdir" "put newdir/x" \
	"symlink alink" "rename new.txt" "chmod renamed.txt" "truncate sub/new.txt" \
	"unlink sub/b.txt"; do
	expect_line "$ok: ok"
done
for denied in "put $T/ro/x" "put vendor/x" "put $T/outside/x" "put /etc/moat-test-x" \
	"put $HOME/x" "put $HOME/.ssh/authorized_keys" "put .env" "mkdir $T/outside/d" \
	"unlink $T/ro/r.txt" "unlink vendor/v.txt" "rename a.txt" "rename $T/ro/r.txt" \
	"chmod $T/ro/r.txt" "truncate vendor/v.txt" "truncate .env" "unlink .env" \
	"mkdir secret/d" "symlink $T/outside/l" "rename renamed.txt"; do
	expect_line "$denied: EACCES"
done
# A .env that does not exist yet, in a directory that does not exist either:
# EACCES (the policy's answer), not the kernel's ENOENT.
expect_line "put sub/deeper/.env: EACCES"
# What the allowed calls did, seen natively.
expect_true "new.txt was not renamed" test -f renamed.txt -a ! -e new.txt
expect_true "chmod 600 did not take" test "$(stat -c %a renamed.txt)" = 600
expect_true "rw/w.txt missing" test -f "$T/rw/w.txt"
expect_true "sub/b.txt not removed" test ! -e sub/b.txt
expect_true "alink is not a link to a.txt" test "$(readlink alink)" = a.txt
# What the denied calls did not do.
for f in "$T/ro/x" vendor/x "$T/outside/x" /etc/moat-test-x "$HOME/x" \
	"$HOME/.ssh/authorized_keys" "$T/outside/d" "$T/outside/a.txt" stolen.txt secret/d \
	"$T/outside/l"; do
	expect_true "a denied call created $f" test ! -e "$f" -a ! -L "$f"
done
expect_true "ro/r.txt changed" test "$(cat "$T/ro/r.txt")" = "read only"
expect_true "ro/r.txt mode changed" test "$(stat -c %a "$T/ro/r.txt")" = 644
expect_true "vendor/v.txt changed" test "$(cat vendor/v.txt)" = vendored
expect_true ".env changed" test "$(cat .env)" = CANARY-dotenv
expect_true "a.txt moved" test -f a.txt
rm -f /etc/moat-test-x

# --- **/.env at any depth of the cwd, and below a directory named .env ---
mkdir -p deep/er/est cfg/.env
echo "CANARY-deep" >deep/er/est/.env
echo "CANARY-below" >cfg/.env/inner
mrun "$PROGS/probe" cat,deep/er/est/.env stat,deep/er/est/.env cat,cfg/.env/inner \
	ls,cfg/.env put,deep/.env,x cat,deep/er/est/../est/.env
expect_rc 0
expect_line "cat deep/er/est/.env: EACCES"
expect_line "stat deep/er/est/.env: ENOENT"
expect_line "cat cfg/.env/inner: EACCES"
expect_line "ls cfg/.env: EACCES"
expect_line "put deep/.env: EACCES"
expect_line "cat deep/er/est/../est/.env: EACCES"
expect_no_canary
expect_true "deep/.env was created" test ! -e deep/.env

finish
