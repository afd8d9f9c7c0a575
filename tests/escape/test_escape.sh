#!/bin/sh
# Red-team regression tests for `moat run`: every attack an agent could make on
# the boundary, run under the real supervisor with the embedded default policy
# (or a small policy where an attack needs a rule). Each assertion states what
# must hold; an attack that works today stays here as a failing assertion.
#
# Canaries: $HOME/.ssh/id_rsa (denied by name) and $OUT/secret (outside the
# surface: /srv/... as root, else $HOME/.gnupg/..., also denied).
# Env: MOAT_BIN (dir of moat), MOAT_ESCAPE (dir of the programs built from
# tests/escape/*.c). Exit 77: skipped (no seccomp user notification here).
set -u
. "$(dirname "$0")/../integration/lib.sh"

E="${MOAT_ESCAPE:?MOAT_ESCAPE is not set}"
[ -x "$MOAT" ] && [ -x "$E/readpaths" ] || exit 77
"$MOAT" run -- /bin/true 2>/dev/null || exit 77

ROOT=0
[ "$(id -u)" = 0 ] && ROOT=1
# /tmp is rw in the default policy: the session lives there, the canaries are denied by name.
T=$(mktemp -d /tmp/moat-escape.XXXXXX)
export HOME="$T/home"
REPO="$HOME/repo"
B="$T/bin"
PIDS=""
MOUNTED=""
OUT=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for m in $MOUNTED; do umount "$m" 2>/dev/null; done
	[ -n "$OUT" ] && rm -rf "$OUT"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mkdir -p "$HOME/.ssh" "$REPO" "$B"
cp "$E"/* "$B"/
S="MOAT-CANARY-$$"
echo "$S-ssh" >"$HOME/.ssh/id_rsa"
if [ "$ROOT" = 1 ] && mkdir "/srv/moat-escape.$$" 2>/dev/null; then
	OUT="/srv/moat-escape.$$"
else
	mkdir -p "$HOME/.gnupg/outside"
	OUT="$HOME/.gnupg/outside"
fi
echo "$S-out" >"$OUT/secret"
"$B/mktool" "$OUT/tool" "$S-tool-ran"
printf '#!/bin/echo %s-shebang\n' "$S" >"$OUT/script"
chmod 755 "$OUT/script"
cd "$REPO" || exit 1

# moat run with a time limit; the default policy unless POLICY is set.
POLICY=""
mrun() {
	if [ -n "$POLICY" ]; then
		run timeout "${TMO:-30}" "$MOAT" run --policy "$POLICY" -- "$@"
	else
		run timeout "${TMO:-30}" "$MOAT" run -- "$@"
	fi
}

# The canary must not appear in what the attack printed.
no_leak() {
	if grep -qF -- "$S" "$_out" "$_err"; then _fail "LEAK: $1"; else _pass; fi
}
leak_is_known_gap() {
	if grep -qF -- "$S" "$_out" "$_err"; then known_gap "LEAK: $1"; else _pass; fi
}
not_out() {
	if grep -qF -- "$1" "$_out"; then _fail "$2"; else _pass; fi
}
# Waits until FILE holds a line (a helper started in the background is ready).
wait_file() {
	i=0
	while [ ! -s "$1" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}

# ---------------------------------------------------------------- baseline
mrun cat "$HOME/.ssh/id_rsa" "$OUT/secret"
no_leak "cat of both canaries"
expect_rc 1

# Path spellings that must all be decided on the object they reach.
ln -s "$HOME/.ssh" l
ln -s "$OUT/secret" s
mrun "$B/readpaths" "$S" "$HOME/.ssh/id_rsa" "$OUT/secret" ../.ssh/id_rsa l/id_rsa s \
	"/proc/self/root$HOME/.ssh/id_rsa" /proc/self/cwd/../.ssh/id_rsa \
	"/proc/thread-self/root$OUT/secret" "/dev/fd/../root$OUT/secret" "//proc/self/root$OUT/secret" \
	"/proc/./self/root$OUT/secret" "$REPO/./l/../l/id_rsa" "w:$HOME/.ssh/id_rsa" "w:$OUT/secret" \
	"w:/etc/passwd" "w:/proc/self/mem"
no_leak "path spellings (.., symlinks, /proc/self/root, /proc/self/cwd, /dev/fd)"
expect_rc 0

# --------------------------------------- /proc/self/fd/../../PID: the own-fd shortcut
# resolve.c marks a path "own fd" by its *spelling* (prefix /proc/TID/fd/), and
# sv_decide_fd() then allows any object without a path: deleted files, memfds,
# pipes. "/proc/self/fd/../../PID/fd/N" has that prefix and reaches PID's fds.
"$B/holder" "$S-held" "$OUT/held" >"$T/holder" &
PIDS="$PIDS $!"
wait_file "$T/holder"
read -r HP HF HM HPIPE <"$T/holder"
mrun "$B/readpaths" "$S" "/proc/$HP/fd/$HF" "/proc/self/fd/../../$HP/fd/$HF" \
	"/dev/fd/../../$HP/fd/$HM" "/proc/self/fd/../../$HP/fd/$HPIPE" "w:/proc/self/fd/../../$HP/fd/$HF"
no_leak "another process's deleted file / memfd / pipe via /proc/self/fd/../../PID/fd/N"
expect_rc 0

# ------------------------------------------------ aliases of a denied object
# Decisions are on the path string /proc/self/fd/N shows; an object with a
# second name in the surface is readable by it.
ln "$HOME/.ssh/id_rsa" hardlink 2>/dev/null &&
	{
		mrun "$B/readpaths" "$S" hardlink
		no_leak "a pre-existing hard link in the working directory to ~/.ssh/id_rsa"
		rm -f hardlink
	}
if [ "$ROOT" = 1 ] && mkdir bindalias && mount --bind "$HOME/.ssh" bindalias 2>/dev/null; then
	MOUNTED="$REPO/bindalias"
	mrun "$B/readpaths" "$S" bindalias/id_rsa
	no_leak "a pre-existing bind mount of ~/.ssh inside the working directory"
	# The object set is built when the session starts: a file created in the
	# denied tree afterwards is known by path only, and its alias is not.
	(run timeout 30 "$MOAT" run -- sh -c \
		'i=0; while [ ! -e bindalias/late_key ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; cat bindalias/late_key') &
	LP=$!
	sleep 1
	echo "$S-late" >"$HOME/.ssh/late_key"
	wait $LP
	leak_is_known_gap "a file created in ~/.ssh during the session, read through a bind mount alias"
	rm -f "$HOME/.ssh/late_key"
	umount bindalias && MOUNTED=""
fi
# The object set holds at most 50,000 objects, filled in the order of the deny
# entries: a large tree first leaves ~/.ssh known by path only.
ln "$HOME/.ssh/id_rsa" hardlink2 2>/dev/null && [ -d /usr/share ] &&
	{
		cat >"$T/big.json" <<JSON
{"version": 1, "surface": {"cwd": "rw", "read": ["$B"], "deny": ["/usr/share", "~/.ssh"]}}
JSON
		POLICY="$T/big.json"
		mrun "$B/readpaths" "$S" hardlink2
		leak_is_known_gap "a hard link to ~/.ssh/id_rsa when an earlier deny entry (/usr/share) fills the object set"
		POLICY=""
		rm -f hardlink2
	}
# Another mount namespace of the same user: /proc/PID/root/... is decided on the
# path inside that namespace ("/opt/secret" is under the system set's /opt).
if [ "$ROOT" = 1 ] && command -v unshare >/dev/null; then
	unshare -m --propagation private sh -c \
		"mount -t tmpfs none /opt && echo $S-otherns >/opt/secret && echo ready >$T/ns && exec sleep 60" &
	NSP=$!
	PIDS="$PIDS $NSP"
	wait_file "$T/ns"
	if [ -s "$T/ns" ]; then
		mrun "$B/readpaths" "$S" "/proc/$NSP/root/opt/secret"
		no_leak "a file of another mount namespace through /proc/PID/root (decided as /opt/secret)"
	fi
fi

# Path arguments at the edges of the target's memory: the same errno as natively.
"$B/path_edges" >"$T/edges.native" 2>&1
mrun "$B/path_edges"
if cmp -s "$T/edges.native" "$_out"; then _pass; else
	_fail "path edge cases differ from native: $(diff "$T/edges.native" "$_out" | tr '\n' ' ')"
fi

# Calls by path on the denied file, and the odd corners of open.
if command -v python3 >/dev/null; then
	cat >"$T/misc.py" <<'PY'
import ctypes, errno, os, sys
S, home, out = sys.argv[1], os.environ["HOME"], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
bad = False
def rd(fd):
    global bad
    data = os.read(fd, 200)
    if S.encode() in data:
        bad = True
        return "LEAK " + data.decode(errors="replace")
    return "read, no secret"
def t(name, fn, must_fail=True):
    global bad
    try:
        r = fn()
        if must_fail:
            bad = True
            r = "SUCCEEDED: " + str(r)
    except OSError as e:
        r = "refused: " + errno.errorcode.get(e.errno, str(e.errno))
    print(f"{name:44} {r}")
class How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]
def oa2(dfd, p, flags=0, res=0):
    h = How(flags, 0, res)
    r = libc.syscall(437, dfd, p.encode(), ctypes.byref(h), ctypes.sizeof(h))
    if r < 0:
        raise OSError(ctypes.get_errno(), "")
    return rd(r)
def tmpfile_link():
    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600)
    os.link(f"/proc/self/fd/{fd}", f"{home}/.ssh/planted", follow_symlinks=True)
def inotify():
    w = libc.inotify_add_watch(libc.inotify_init(), f"{home}/.ssh".encode(), 0xfff)
    if w < 0:
        raise OSError(ctypes.get_errno(), "")
    return w
cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
k = f"{home}/.ssh/id_rsa"
t("O_TMPFILE in cwd + linkat into ~/.ssh", tmpfile_link)
t("openat2(cwd, ../.ssh/id_rsa)", lambda: oa2(cwd, "../.ssh/id_rsa"))
t("openat2(cwd, /../../.ssh/id_rsa, IN_ROOT)", lambda: oa2(cwd, "/../../.ssh/id_rsa", 0, 0x10))
t("openat2(~/.ssh/id_rsa, NO_SYMLINKS)", lambda: oa2(-100, k, 0, 0x04))
t("openat2 with an unknown resolve bit", lambda: oa2(-100, "edge.txt", 0, 1 << 40))
t("/proc/self/cwd/../.ssh/id_rsa", lambda: rd(os.open("/proc/self/cwd/../.ssh/id_rsa", os.O_RDONLY)))
t("/proc/self/root/OUT/secret", lambda: rd(os.open("/proc/self/root" + out, os.O_RDONLY)))
t("truncate ~/.ssh/id_rsa", lambda: os.truncate(k, 0))
t("utime ~/.ssh/id_rsa", lambda: os.utime(k))
t("chmod ~/.ssh/id_rsa", lambda: os.chmod(k, 0o644))
t("setxattr ~/.ssh/id_rsa", lambda: os.setxattr(k, "user.x", b"1"))
t("rename ~/.ssh/id_rsa", lambda: os.rename(k, "stolen"))
t("link ~/.ssh/id_rsa", lambda: os.link(k, "stolen"))
t("mkdir ~/.ssh/x", lambda: os.mkdir(f"{home}/.ssh/x"))
t("unlink ~/.ssh/id_rsa", lambda: os.unlink(k))
t("inotify_add_watch ~/.ssh", inotify)
sys.exit(1 if bad else 0)
PY
	mrun python3 "$T/misc.py" "$S" "$OUT/secret"
	no_leak "O_TMPFILE, openat2 flags, /proc/self/cwd|root, mutations of the denied file"
	expect_rc 0
fi

# --------------------------------------------------------------- open races
for m in thread clonevm vfork symlink; do
	mrun "$B/open_race" "$m" "$HOME/.ssh/id_rsa" "$S" 3000
	no_leak "open race ($m)"
	expect_rc 0
done
mrun "$B/open_race" dirfd "$OUT/secret" "$S" 3000
no_leak "open race (dirfd swapped by dup2)"
mrun "$B/chdir_race" "$REPO" "$OUT" secret "$S"
no_leak "chdir race, then open/list the denied working directory"
expect_rc 0

# A core dump is written by the kernel into the working directory: no syscall
# to trap. chdir is CONTINUEd after its check, so it can land in a denied one.
mrun "$B/coredump" "$HOME/.ssh" "$REPO"
if [ -e "$HOME/.ssh/core" ]; then _fail "chdir race + abort(): the kernel wrote ~/.ssh/core"; else _pass; fi
rm -f "$HOME/.ssh/core"
if [ "$ROOT" = 1 ] && [ ! -e /core ]; then
	# chdir to any directory the agent may stat is allowed: "/" is an ancestor of everything.
	mrun "$B/coredump" /
	if [ -e /core ]; then _fail "chdir / + abort(): the kernel wrote /core"; else _pass; fi
	rm -f /core
fi

# -------------------------------------------------------------------- exec
mrun "$OUT/tool"
no_leak "exec of a denied binary"
printf '#!%s\n' "$OUT/tool" >script-denied-interp
chmod +x script-denied-interp
mrun ./script-denied-interp
no_leak "a script whose #! interpreter is denied"
# The ELF interpreter (PT_INTERP) is opened by the kernel inside execve: not decided.
"$B/mkinterp" "$B/readpaths" ./elf-denied-interp ./i && ln -s "$OUT/tool" i
mrun ./elf-denied-interp
no_leak "an ELF whose PT_INTERP is a denied binary"
rm -f i
# The path is read again by the kernel after the check: the exec stop catches a
# swapped ELF (killed), but the killed child stays a zombie traced by the
# supervisor, so its parent's waitpid() never returns.
TMO=8
mrun "$B/exec_race" path /bin/true "$OUT/tool" 300
TMO=30
no_leak "exec path race: /bin/true <-> denied ELF"
if [ "$_rc" = 124 ]; then _fail "exec path race: the agent hung (the killed child was never reaped)"; else _pass; fi
# A swapped *script* passes the exec-stop check when its interpreter is the
# binary that was checked: /proc/PID/exe is the interpreter. The denied script's
# #! line (here: its secret argument) reaches the program.
mrun "$B/exec_race" path /bin/echo "$OUT/script" 100
no_leak "exec path race: /bin/echo <-> denied script '#!/bin/echo SECRET'"

# exec.rules decide on argv read once; the kernel reads it again.
cat >"$T/exec.json" <<JSON
{"version": 1, "surface": {"cwd": "rw", "read": ["$B"], "deny": ["~/.ssh"]},
 "exec": {"default": "allow", "rules": [{"path": "/usr/bin/echo", "argv": ["FORBIDDEN*"], "action": "deny"}]}}
JSON
POLICY="$T/exec.json"
mrun /bin/echo FORBIDDEN
expect_rc 126
mrun "$B/exec_race" argv /bin/echo harmless FORBIDDEN 300
not_out FORBIDDEN "exec rule bypassed by rewriting argv after the check"
# Only the first 255 arguments (64 KiB of text) are matched.
mrun sh -c '/bin/echo $(seq 300) FORBIDDEN'
not_out FORBIDDEN "exec rule bypassed with 300 arguments before the denied one"
mrun sh -c '/bin/echo "$(head -c 70000 /dev/zero | tr "\0" a)" FORBIDDEN'
not_out FORBIDDEN "exec rule bypassed with a 70 KB argument before the denied one"
POLICY=""

# -------------------------------------------------- mutations, new syscalls
# Deny entries are fixed paths: renaming an ancestor carries the secret out
# from under them. cwd = $HOME, deny ~/.config/gcloud (default policy).
mkdir -p "$HOME/.config/gcloud"
echo "$S-gcloud" >"$HOME/.config/gcloud/credentials.db"
(cd "$HOME" && run timeout 30 "$MOAT" run -- sh -c 'mv .config cfg && cat cfg/gcloud/credentials.db; mv cfg .config')
no_leak "rename of an ancestor of a denied entry (~/.config -> ~/cfg, then read cfg/gcloud/...)"
# Deny globs are not walked into the object set: the README's own example.
cat >"$T/glob.json" <<JSON
{"version": 1, "surface": {"cwd": "rw", "read": ["$B"], "deny": ["\$HOME/.config/*/credentials*"]}}
JSON
(cd "$HOME" && run timeout 30 "$MOAT" run --policy "$T/glob.json" -- \
	sh -c 'cat .config/gcloud/credentials.db; mv .config cfg && cat cfg/gcloud/credentials.db; mv cfg .config')
no_leak "rename of an ancestor of a deny glob (\$HOME/.config/*/credentials*)"

python3 -c "import os,sys; os.setxattr(sys.argv[1], 'user.moat', sys.argv[2].encode())" \
	"$HOME/.ssh/id_rsa" "$S-xattr" 2>/dev/null
mrun "$B/newsyscalls" "$HOME/.ssh/id_rsa" "$S"
no_leak "getxattrat on a denied file"
expect_rc 0

# A denial must not tell an existing denied path from a missing one.
mrun "$B/errno_leak" l id_rsa no-such-key "$HOME/.ssh"
expect_rc 0

# ------------------------------------------------ refused outright, foreign ABIs
mrun "$B/denied_calls"
expect_rc 0
mrun "$B/arch_calls" "$OUT/secret"
no_leak "x32 / i386 syscalls"
expect_rc 0

# ----------------------------------------------------- the supervisor itself
for m in sigio setsig thread sched; do
	mrun "$B/svkill" "$m"
	expect_rc 0
	expect_out survived
done

# ------------------------------------------------------------------ network
"$B/udprecv" "$T/port" 4 >"$T/udp" &
PIDS="$PIDS $!"
wait_file "$T/port"
mrun "$B/netbypass" "$(cat "$T/port")"
expect_rc 0
sleep 0.3
if grep -q EXFIL "$T/udp"; then _fail "UDP to a denied address arrived: $(cat "$T/udp")"; else _pass; fi

# Another terminal of the same user (/dev/pts is rw in the system set).
"$B/ptyhold" "$T/pty" &
PIDS="$PIDS $!"
wait_file "$T/pty"
mrun "$B/readpaths" "$S" "w:$(cat "$T/pty")"
expect_rc 0

# ------------------------------------------------------ robustness, resources
mrun "$B/flood" "$OUT/secret" 1000
expect_rc 0
# fds and threads of the supervisor at rest, after killed calls, after abandoned FIFO opens.
count() { printf '%s/%s' "$(ls "/proc/$1/fd" 2>/dev/null | wc -l)" \
	"$(awk '/^Threads/ {print $2}' "/proc/$1/status" 2>/dev/null)"; }
# Each count waits a moment after the mark: the agent's sh may still be starting
# the command after it (a redirected exec holds a ticket's descriptors meanwhile).
"$MOAT" run -- sh -c 'echo ready >rest.mark; sleep 2' &
MP=$!
wait_file rest.mark
sleep 0.5
REST=$(count $MP)
wait $MP
"$MOAT" run -- sh -c "$B/midcall 300 3 >mid.mark" &
MP=$!
wait_file mid.mark
sleep 0.5
MID=$(count $MP)
wait $MP
"$MOAT" run -- sh -c "$B/fifoleak 150 3 >fifo.mark" &
MP=$!
wait_file fifo.mark
sleep 0.5
FIFO=$(count $MP)
wait $MP
if [ "$MID" = "$REST" ]; then _pass; else _fail "fds/threads after 300 killed calls: $MID, at rest: $REST"; fi
if [ "$FIFO" = "$REST" ]; then _pass; else known_gap "fds/threads after 150 abandoned FIFO opens: $FIFO, at rest: $REST"; fi

# Blocking FIFO opens and blocking connects share a pool of 8 workers: abandoned
# FIFO opens hold them for good, and then a connect never returns (no signal
# interrupts a received call either: only SIGKILL ends the agent).
run timeout -k 2 8 "$MOAT" run -- "$B/poolstall" 24
if grep -qF "connect(127.0.0.1:443): ECONNREFUSED" "$_out"; then _pass; else
	known_gap "abandoned FIFO opens hold every worker: a later blocking connect waits"
fi

# A datagram send the supervisor performs can block its only loop.
cat >"$T/unix.json" <<JSON
{"version": 1, "surface": {"cwd": "rw", "read": ["$B"]},
 "net": {"connect": ["unix:$REPO/*"], "bind": ["unix:$REPO/*"]}}
JSON
POLICY="$T/unix.json"
mrun "$B/dgram_block"
expect_rc 0
POLICY=""

# What the session leaves running is killed when it ends, by rounds of "kill my
# children"; a chain of processes deeper than the rounds outlives it.
mkdir -p "$T/chain"
run timeout 30 "$MOAT" run -- "$B/deepchain" 100 "$T/chain"
sleep 2.5
if grep -q outlived "$T/chain/alive" 2>/dev/null; then
	_fail "a 100-deep process chain outlived the session (moat kills 64 levels)"
else
	_pass
fi

# ------------------------------------------------- persistence outside moat
# The working directory is rw, .git/config included: core.fsmonitor runs on
# the user's next `git status`, outside moat.
if command -v git >/dev/null; then
	git init -q . 2>/dev/null
	mrun sh -c "git config core.fsmonitor 'cat \$HOME/.ssh/id_rsa >\$PWD/fsmonitor.out; false'"
	git status >/dev/null 2>&1
	if grep -qF "$S" fsmonitor.out 2>/dev/null; then
		known_gap "the agent planted .git/config core.fsmonitor, which ran outside moat and read the canary"
	else
		_pass
	fi
	rm -rf .git fsmonitor.out
fi

# ------------------------------------------------ root: capabilities are kept
if [ "$ROOT" = 1 ]; then
	# mknod is carried out by the (root) supervisor: a device node in the working
	# directory is a path the policy allows. /dev/kmsg itself is outside the surface.
	mrun sh -c 'head -n 1 /dev/kmsg; mknod kmsg c 1 11 && head -n 1 ./kmsg'
	if [ -s "$_out" ]; then _fail "mknod: a device node in cwd reads what /dev/kmsg denies"; else _pass; fi
	rm -f kmsg
	# RENAME_WHITEOUT leaves a 0:0 character device where the source was: a device
	# node, made by the supervisor's CAP_MKNOD, which the agent does not have.
	: >wo-src
	mrun python3 -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.renameat2(-100, b"wo-src", -100, b"wo-dst", 4)
print("renameat2 WHITEOUT:", r, os.strerror(ctypes.get_errno()) if r else "")'
	expect_line "renameat2 WHITEOUT: -1 Operation not permitted"
	if [ -c wo-src ]; then _fail "RENAME_WHITEOUT made a device node"; else _pass; fi
	rm -f wo-src wo-dst
	if command -v ip >/dev/null; then
		mrun ip addr add 192.0.2.77/32 dev lo
		if ip addr show dev lo | grep -q 192.0.2.77; then
			_fail "netlink is let through: the agent reconfigured the host's network"
			ip addr del 192.0.2.77/32 dev lo
		else
			_pass
		fi
	fi
fi

finish
