#!/bin/sh
# moat run: exec redirection. Every exec made by a child of CMD runs in the
# embedded runner while the agent waits for a stand-in (moat-shim); the agent
# must not be able to tell. Each transparency point is ONE check: the same
# program natively and under `moat run` (the embedded default policy) gives the
# same stdout bytes, the same stderr bytes and the same exit status, and under
# moat at least one exec was redirected (its audit log says so): fork+execve,
# vfork, posix_spawn, system(), popen(), Python subprocess, Node child_process,
# bash pipelines, $(...), background jobs, exit statuses 0..255, signal deaths,
# stdin streaming, signals sent to the child, ENOENT and EACCES from the spawn
# call, #! scripts, odd argv bytes, the environment, 100 MB of output, a pty,
# a line protocol over stdin/stdout. Then what redirection is for: private
# config hidden from tasks, a task's view of processes, a time-of-check race on
# the exec path and argv, the audit decisions (redirect, deny, allow), and the
# lifecycle (the agent exits with a task running; the runner dies).
set -u
# By hand, MOAT_BIN alone will do: the helpers are next to it in the build tree.
MOAT_PROGS=${MOAT_PROGS:-${MOAT_BIN:-}/../tests/progs}
export MOAT_PROGS
. "$(dirname "$0")/lib_run.sh"
# Nothing here reads a terminal unless a check makes one on purpose.
exec </dev/null
ulimit -c 0 2>/dev/null || :

if [ -z "$PY" ]; then
	echo "SKIP: test_redirect.sh needs python3"
	exit 77
fi
NODE=$(command -v node || :)
U=$$
# The real home: with another HOME, moat warns on stderr (the real home's tree
# is denied then), which would differ from every native run. Section 14 sets a
# HOME of its own.
FAKE_HOME=$HOME
HOME=$(getent passwd "$(id -u)" | cut -d: -f6)
export HOME
# The helper programs, where the default surface lets the agent run them (the cwd).
mkdir bin
for p in spawn sysrun exec_race; do
	if ! cp "$PROGS/$p" bin/; then
		echo "FAIL: $PROGS/$p is missing: build the tests (cmake --build)"
		exit 1
	fi
done
B=$(pwd -P)/bin

# Processes started in the background here, killed at exit if still there.
BG_MOAT=""
CLEANUP='[ -z "$BG_MOAT" ] || kill -9 "$BG_MOAT" 2>/dev/null
for p in $(pgrep -f "sleep 100\.$U" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
'"$CLEANUP"

# drun CMD...: CMD under moat with the embedded default policy, every decision
# in $T/audit.
drun() {
	rm -f "$T/audit"
	run timeout -k 5 "$RUN_TIMEOUT" "$MOAT" run --audit "$T/audit" --audit-level all -- "$@"
}

# keep PREFIX: the last run's stdout, stderr and status as $T/PREFIX.{out,err,rc}.
keep() {
	cp "$_out" "$T/$1.out"
	cp "$_err" "$T/$1.err"
	echo "$_rc" >"$T/$1.rc"
}

# show FILE: at most 12 lines of FILE, bytes that are not printable escaped.
show() {
	if [ ! -s "$1" ]; then
		echo "    (empty)"
	else
		head -c 1500 "$1" | od -An -c -w64 | head -12 | sed 's/^/    /'
	fi
}

# compare NAME [-E]: ONE check on $T/n.* (native) and $T/m.* (moat): the same
# stdout bytes, the same stderr bytes (not with -E) and the same status, and a
# redirected exec in $T/audit.
compare() {
	_what=$1
	_why=""
	cmp -s "$T/n.out" "$T/m.out" || _why="$_why stdout"
	if [ "${2:-}" != -E ]; then cmp -s "$T/n.err" "$T/m.err" || _why="$_why stderr"; fi
	cmp -s "$T/n.rc" "$T/m.rc" || _why="$_why status"
	grep -q '"decision":"redirect"' "$T/audit" 2>/dev/null || _why="$_why no-redirect-in-audit"
	if [ -z "$_why" ]; then
		_pass
		return
	fi
	printf 'FAIL: %s: native and moat differ in:%s\n  command: %s\n' "$_what" "$_why" "$_cmd"
	for f in out err; do
		if ! cmp -s "$T/n.$f" "$T/m.$f"; then
			printf '  native std%s (%s bytes):\n' "$f" "$(wc -c <"$T/n.$f")"
			show "$T/n.$f"
			printf '  moat std%s (%s bytes):\n' "$f" "$(wc -c <"$T/m.$f")"
			show "$T/m.$f"
		fi
	done
	printf '  status: native %s, moat %s\n' "$(cat "$T/n.rc")" "$(cat "$T/m.rc")"
	_failed=$((_failed + 1))
}

# same NAME [-E] CMD...: CMD natively, then under moat; compare.
same() {
	_name=$1
	shift
	_e=""
	if [ "$1" = -E ]; then
		_e=-E
		shift
	fi
	nrun "$@"
	keep n
	drun "$@"
	keep m
	compare "$_name" $_e
}

# samepy NAME [-E] SCRIPT [ARGS...]: a python program (the agent) given as text.
samepy() {
	_name=$1
	shift
	_e=""
	if [ "$1" = -E ]; then
		_e=-E
		shift
	fi
	_src=$1
	shift
	printf '%s\n' "$_src" >"$T/agent.py"
	same "$_name" $_e "$PY" "$T/agent.py" "$@"
}

# samenode NAME SCRIPT: a node program (the agent) given as text.
samenode() {
	printf '%s\n' "$2" >"$T/agent.js"
	same "$1" "$NODE" "$T/agent.js"
}

SH_OUT_ERR='echo "out: $1"; echo "err: $1" >&2; exit 3'

# ============ 1. libc and the kernel's ways to start a command ============

same "fork + execve" "$B/spawn" fork /bin/sh -c "$SH_OUT_ERR" sh "a b"
same "vfork + execve" "$B/spawn" vfork /bin/sh -c "$SH_OUT_ERR" sh "a b"
same "posix_spawn" "$B/spawn" posix_spawn /bin/sh -c "$SH_OUT_ERR" sh "a b"
same "system()" "$B/sysrun" system 'echo "sys out"; echo "sys err" >&2; exit 7'
same "popen(r)" "$B/sysrun" popen 'seq 1 3000; echo "popen err" >&2; exit 5'
same "popen(w) into wc -l" "$B/sysrun" popen-w 'wc -l; exit 6'

# ============ 2. Python subprocess ============

samepy "python subprocess.run(capture_output=True)" 'import subprocess
r = subprocess.run(["sh", "-c", "echo out; echo err >&2; exit 4"], capture_output=True)
print(repr(r.stdout), repr(r.stderr), r.returncode)
r = subprocess.run(["printf", "%s|", "a b", "c"], capture_output=True, text=True)
print(repr(r.stdout), r.returncode)
print(subprocess.check_output("echo $((6 * 7))", shell=True))'

samepy "python Popen with pipes" 'import hashlib, subprocess
data = b"".join(b"line %d\n" % i for i in range(20000))
p = subprocess.Popen(["sh", "-c", "cat; echo done >&2; exit 2"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
out, err = p.communicate(data)
print(len(out), hashlib.sha256(out).hexdigest() == hashlib.sha256(data).hexdigest(),
      repr(err), p.returncode)
p = subprocess.Popen(["tr", "a-z", "A-Z"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
print(p.communicate(b"shout\n"), p.returncode)'

# ============ 3. Node child_process ============

if [ -n "$NODE" ]; then
	samenode "node child_process.spawn" 'const { spawn } = require("child_process");
const c = spawn("sh", ["-c", "echo out; echo err >&2; read l; echo \"got $l\"; exit 3"]);
let out = "", err = "";
c.stdout.on("data", (d) => (out += d));
c.stderr.on("data", (d) => (err += d));
c.stdin.end("typed\n");
c.on("close", (code, signal) => {
  console.log(JSON.stringify({ out, err, code, signal }));
  const k = spawn("sleep", ["30"]);
  k.on("spawn", () => setTimeout(() => k.kill("SIGTERM"), 200));
  k.on("close", (code, signal) => console.log(JSON.stringify({ killed: { code, signal } })));
});'
	samenode "node child_process.execFile" 'const { execFile } = require("child_process");
execFile("/bin/echo", ["a b", "c"], (e, out, err) => {
  console.log(JSON.stringify({ e: e && e.code, out, err }));
  execFile("sh", ["-c", "echo o; echo e >&2; exit 4"], (e, out, err) => {
    console.log(JSON.stringify({ code: e && e.code, out, err }));
    execFile("/usr/bin/does-not-exist", [], (e) => console.log(JSON.stringify({ e: e.code, errno: e.errno })));
  });
});'
	samenode "node child_process.exec" 'const { exec, execSync } = require("child_process");
exec("echo $((6 * 7)) | tr 4 X; echo e >&2; exit 2", (e, out, err) => {
  console.log(JSON.stringify({ code: e && e.code, out, err }));
  console.log(JSON.stringify(execSync("seq 3 | wc -l").toString()));
});'
else
	echo "SKIP: node is not installed: the child_process checks"
fi

# ============ 4. shells ============

same "bash pipelines" bash -c 'seq 1 5000 | grep 7 | sort -rn | tail -3
echo "status ${PIPESTATUS[*]}"
yes | head -1; echo "sigpipe ${PIPESTATUS[*]}"
seq 1 1000000 | head -1; echo "sigpipe ${PIPESTATUS[*]}"
false | true | (exit 3); echo "status ${PIPESTATUS[*]}"
set -o pipefail; sh -c "exit 4" | cat; echo "pipefail $?"
printf "b\na\nc\n" | sort | tr a-z A-Z | paste -sd,'
same '$(...)' bash -c 'a=$(echo inner; exit 3); echo "a=$a rc=$?"
b=$(printf "x\n\n\n"); echo "[$b]"
echo "$(basename "$(dirname /a/b/c)")"
c=$(seq 1 100000 | wc -l); echo "c=$c"
d=`echo back tick`; echo "$d"'
same "background jobs and wait" bash -c 'sh -c "sleep 0.3; echo slow; exit 3" & p1=$!
sh -c "echo fast; exit 5" & p2=$!
wait $p2; echo "p2=$?"
wait $p1; echo "p1=$?"
(sleep 0.1; echo sub) & wait; echo "all done $?"
sleep 5 & p3=$!; kill $p3; wait $p3; echo "killed=$?"'

same "500 redirected execs in a row" sh -c 'i=0; while [ $i -lt 500 ]; do
/bin/true || echo "exec $i: status $?"; i=$((i + 1)); done; echo "done $i"'

# ============ 5. exit statuses and signal deaths ============

same "exit statuses 0..255" sh -c 'for c in 0 1 2 3 42 100 125 126 127 128 129 200 254 255; do
sh -c "exit $c"; echo "$c -> $?"; done'
samepy "signal deaths (WIFSIGNALED/WTERMSIG)" 'import os, subprocess
# 32-34 and 64 too: the stand-in dies by the same number even where its libc keeps some
for s in ["TERM", "INT", "HUP", "KILL", "USR1", "PIPE", "QUIT", "SEGV", "ABRT", "32", "33",
          "34", "64"]:
    r = subprocess.run(["sh", "-c", "kill -%s $$" % s])
    pid = os.fork()
    if pid == 0:
        try:
            os.execv("/bin/sh", ["sh", "-c", "kill -%s $$" % s])
        finally:
            os._exit(127)
    _, st = os.waitpid(pid, 0)
    print(s, r.returncode, os.WIFSIGNALED(st), os.WIFSIGNALED(st) and os.WTERMSIG(st),
          os.WIFEXITED(st))'

# ============ 6. stdin streaming and EOF ============

samepy "stdin streaming and EOF" 'import hashlib, subprocess, threading
lines = [b"line %d %s\n" % (i, b"x" * (i % 97)) for i in range(5000)]
p = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def feed():
    for l in lines:
        p.stdin.write(l)
    p.stdin.close()
threading.Thread(target=feed).start()
out = p.stdout.read()
print("cat", len(out), out == b"".join(lines), p.wait())
p = subprocess.Popen(["wc", "-l"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
print("wc", p.communicate(b"".join(lines))[0], p.returncode)
p = subprocess.Popen(["sh", "-c", "while read l; do echo \"got $l\"; done; echo eof"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
for i in range(3):
    p.stdin.write(b"%d\n" % i)
    p.stdin.flush()
    print(p.stdout.readline())
p.stdin.close()
print(p.stdout.read(), p.wait())'

# A child's stdin and stdout pipes are the agent's own (handed to the task): a
# child that reads one line leaves the rest to the next; a reader that goes
# away is SIGPIPE to the writer; the pipe a child writes is the one it was given.
same "stdin pipe not read ahead" sh -c 'printf "a\nb\nc\n" | { sh -c "read x; echo got \$x"; head -1; cat; }'
same "SIGPIPE to a writer whose reader left" sh -c '{ yes; echo "yes: $?" >&2; } | head -2
{ seq 1 100000; echo "seq: $?" >&2; } | sed 3q'
same "a child writes into the pipe it was given" sh -c '{ readlink /proc/self/fd/1
sh -c "readlink /proc/self/fd/1"; } | uniq | wc -l'
# A closed stdin, stdout or stderr stays closed for the child.
same "closed stdin, stdout, stderr" sh -c 'sh -c "read x; echo \"in \$?\"" <&-
sh -c "echo out; echo rc=\$? >&2" >&-
sh -c "echo err >&2; echo rc=\$?" 2>&-'
# A named FIFO (a host inode) is never handed to a task, only relayed: what
# comes through is the same, and the task's chmod through /proc/self/fd/1 meets
# the relay's pipe, not the FIFO (natively, the child's chmod would reach it).
drun sh -c 'mkfifo -m 644 f; cat f >f.got & c=$!
sh -c "chmod 666 /proc/self/fd/1 2>/dev/null; echo through" >f; wait $c
cat f.got; stat -c %a f; rm -f f f.got'
printf 'through\n644\n' >"$T/fifo.expected"
if cmp -s "$T/fifo.expected" "$_out"; then _pass; else
	_fail "a named FIFO as a redirected child's stdout: $(tr '\n' ' ' <"$_out")"
fi
# Into a file and out of one: not pipes, streamed.
same "stdout to a file, stdin from one" sh -c 'seq 1 20000 >seq.out; wc -l <seq.out
sha256sum <seq.out | cut -c1-16; rm -f seq.out' 

# ============ 7. signals sent by the agent to its child ============

cat >"$T/sigchild.py" <<'PY'
import signal, sys, time
mode = sys.argv[1]
if mode == "catch":
    def on(sig, frame):
        print("got", signal.Signals(sig).name, flush=True)
        sys.exit(3)
    signal.signal(signal.SIGINT, on)
    signal.signal(signal.SIGTERM, on)
else:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
time.sleep(30)
print("not interrupted", flush=True)
PY
SIGLIB='import signal, subprocess, sys, time
def ready(p):
    return p.stdout.readline().decode().strip()
def timed(p, timeout=10):
    t = time.monotonic()
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "TIMEOUT then %s" % p.wait()
    return rc, "fast" if time.monotonic() - t < 5 else "slow"
C = sys.argv[1]'
samepy "SIGINT reaches the command" "$SIGLIB"'
p = subprocess.Popen(["sleep", "30"])
time.sleep(0.3)
p.send_signal(signal.SIGINT)
print("sleep", timed(p))
p = subprocess.Popen([sys.executable, C, "catch"], stdout=subprocess.PIPE)
print(ready(p))
p.send_signal(signal.SIGINT)
print(p.stdout.read().decode().strip(), timed(p))' "$T/sigchild.py"
samepy "SIGTERM reaches the command" "$SIGLIB"'
p = subprocess.Popen(["sleep", "30"])
time.sleep(0.3)
p.terminate()
print("sleep", timed(p))
p = subprocess.Popen([sys.executable, C, "catch"], stdout=subprocess.PIPE)
print(ready(p))
p.terminate()
print(p.stdout.read().decode().strip(), timed(p))' "$T/sigchild.py"
samepy "SIGKILL after a timeout" "$SIGLIB"'
p = subprocess.Popen([sys.executable, C, "ignore"], stdout=subprocess.PIPE)
print(ready(p))
p.terminate()
try:
    p.wait(timeout=1)
    print("SIGTERM was not ignored")
except subprocess.TimeoutExpired:
    p.kill()
print(p.stdout.read().decode().strip(), timed(p))' "$T/sigchild.py"

# ============ 8. errors straight from the spawn call ============

SPAWNERR='import subprocess, sys
print("first", subprocess.run(["sh", "-c", "exit 0"]).returncode)
try:
    subprocess.run([sys.argv[1], "arg"])
    print("ran")
except OSError as e:
    print(type(e).__name__, e.errno, e.strerror, e.filename)'
samepy "ENOENT for a missing binary" "$SPAWNERR" /usr/bin/does-not-exist
printf '#!/bin/sh\necho should not run\n' >notexec
chmod 644 notexec
samepy "EACCES for a non-executable file" "$SPAWNERR" ./notexec

# ============ 9. #! scripts ============

mkdir -p sub
printf '#!/bin/sh\necho "0=$0 n=$# args=$*"\n' >script.sh
printf '#!/bin/sh -e\necho "errexit 0=$0"\nfalse\necho not reached\n' >errexit.sh
printf '#!/usr/bin/env python3\nimport sys\nprint("py", sys.argv)\n' >pyscript
chmod 755 script.sh errexit.sh pyscript
same "#! scripts" sh -c './script.sh a "b c"; echo "rc=$?"
"$PWD/script.sh" abs
sh_in=script.sh; ./$sh_in
./errexit.sh; echo "errexit rc=$?"
./pyscript 1 "2 3"
cd sub && ../script.sh up && ../pyscript up'

# ============ 10. argv bytes and the environment ============

samepy "argv with spaces, newlines, non-UTF-8 bytes" 'import subprocess, sys
args = [b"plain", b"with space", b"new\nline", b"\xff\xfe\x80 not utf-8", b"", b"tab\there",
        b"*", b"$HOME", b"-", b"\xc3\xa9t\xc3\xa9"]
child = "import os, sys\nfor a in sys.argv[1:]: print(os.fsencode(a).hex())"
r = subprocess.run([sys.executable, "-c", child] + args, capture_output=True)
print(r.stdout.decode(), r.stderr, r.returncode)
r = subprocess.run([b"/bin/sh", b"-c", b"printf \"%s\\n\" \"$@\" | od -An -tx1", b"sh"] + args,
                   capture_output=True)
print(r.stdout.decode(), r.returncode)'

# HOME and TMPDIR of the agent's own choosing (names that are no secret's).
same "the environment a child sees" env -i PATH="$PATH" HOME="$T/envhome" TMPDIR="$T" LANG=C.UTF-8 \
	"MOAT_T_SPACE=a b" "MOAT_T_NL=x
y" "$(printf 'MOAT_T_BYTES=\377\376')" MOAT_T_EMPTY= sh -c 'env | LC_ALL=C sort'

# ============ 11. 100 MB of output ============

samepy "100 MB of output through a pipe (sha256)" 'import hashlib, subprocess, sys
gen = "import sys\nb = bytes(range(256)) * 4096\nfor _ in range(100): sys.stdout.buffer.write(b)"
p = subprocess.Popen([sys.executable, "-c", gen], stdout=subprocess.PIPE)
h, n = hashlib.sha256(), 0
while True:
    b = p.stdout.read(1 << 16)
    if not b:
        break
    h.update(b)
    n += len(b)
print(n, h.hexdigest(), p.wait())'

# ============ 12. a terminal ============

# script(1) gives the agent a pty (of a fixed size, set before moat starts).
# ptyrun WHO INPUT CMD: CMD (moat run ... or the native command) under script,
# its stdin the output of the shell command INPUT; stdout, stderr and status
# kept as $T/WHO.*.
ptyrun() {
	rm -f "$T/audit"
	_cmd="($2) | script -qec \"stty rows 33 cols 77; $3\" /dev/null"
	(eval "$2") | timeout -k 5 "$RUN_TIMEOUT" script -qec "stty rows 33 cols 77; $3" /dev/null \
		>"$_out" 2>"$_err"
	_rc=$?
	keep "$1"
}
MRUN="'$MOAT' run --audit '$T/audit' --audit-level all --"
# The terminal's input stays open (no EOF) while the child runs.
PTYCMD='sh -c "tty >/dev/null && echo TTY; stty size; test -t 0 && echo stdin-tty"'
ptyrun n "sleep 1" "sh -c '$PTYCMD'"
ptyrun m "sleep 1" "$MRUN sh -c '$PTYCMD'"
compare "an interactive child under a pty"
# A line typed once the child runs, read by the child.
PTYREAD='sh -c "read x; echo got \$x"'
ptyrun n "sleep 1; echo typed line; sleep 0.5" "sh -c '$PTYREAD'"
ptyrun m "sleep 1; echo typed line; sleep 0.5" "$MRUN sh -c '$PTYREAD'"
compare "a line typed at the pty, read by the child"
# Typed ahead, before the child starts, then the end of input. Known gap: the
# agent's terminal echoed the line before the stand-in made it raw, and the
# task's own pty echoes it again (README, known limits of redirection).
ptyrun n "echo typed ahead" "sh -c '$PTYREAD'"
ptyrun m "echo typed ahead" "$MRUN sh -c '$PTYREAD'"
if cmp -s "$T/n.out" "$T/m.out"; then
	compare "type-ahead and EOF at the pty"
else
	known_gap "type-ahead at a pty is echoed twice (the agent's terminal and the task's pty)"
fi

# ============ 13. a line protocol (an MCP server, say) ============

cat >"$T/server.py" <<'PY'
import sys
for line in sys.stdin:
    n = int(line.split()[1])
    sys.stdout.write("reply %d %d\n" % (n, n * n))
    sys.stdout.flush()
sys.stdout.write("server saw EOF\n")
PY
samepy "a long-lived child speaking a line protocol" 'import hashlib, subprocess, sys, time
p = subprocess.Popen([sys.executable, sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
h = hashlib.sha256()
t = time.monotonic()
for i in range(500):
    p.stdin.write(b"req %d\n" % i)
    p.stdin.flush()
    r = p.stdout.readline()
    if r != b"reply %d %d\n" % (i, i * i):
        print("bad reply", i, r)
        break
    h.update(r)
p.stdin.close()
print(p.stdout.read(), p.wait(), h.hexdigest(), "fast" if time.monotonic() - t < 10 else "slow")' \
	"$T/server.py"

# ============ 14. private config is the agent's, not the tasks' ============

# HOME is a fixture of ours here (moat warns on stderr about the real home's
# tree, denied then; nothing compares stderr in this section).
H=$FAKE_HOME
mkdir -p "$H/.claude"
echo "TOKEN-$U-claude" >"$H/.claude/token"
echo '{"token": "TOKEN-'"$U"'-json"}' >"$H/.claude.json"
echo "visible-$U" >"$H/visible.txt"
# hrun CMD...: moat run (and so its policy's "~") with HOME=$H.
hrun() {
	run env HOME="$H" timeout -k 5 "$RUN_TIMEOUT" "$MOAT" run -- "$@"
}
# Natively, both are there to read.
run env HOME="$H" sh -c 'cat ~/.claude/token ~/.claude.json'
expect_rc 0
expect_out "TOKEN-$U-claude"
hrun sh -c 'cat ~/.claude/token; echo "rc=$?"'
expect_out_not "TOKEN-$U"
if grep -qx 'rc=[1-9][0-9]*' "$_out"; then _pass; else _fail "a task read ~/.claude/token"; fi
# A private file may be masked by an empty one: no content, or no file.
hrun sh -c 'cat ~/.claude.json; echo "rc=$?"'
expect_out_not "TOKEN-$U"
if grep -qx 'rc=[1-9][0-9]*' "$_out" || [ "$(cat "$_out")" = "rc=0" ]; then
	_pass
else
	_fail "a task read something from ~/.claude.json"
fi
# The same task sees the rest of that home directory: the rule is what hides.
hrun sh -c 'cat ~/visible.txt'
expect_rc 0
expect_line "visible-$U"
# A builtin: the agent reads it itself.
hrun sh -c 'read t < ~/.claude/token; echo "$t"'
expect_rc 0
expect_line "TOKEN-$U-claude"

# ============ 15. a task does not see the agent's processes ============

drun sh -c 'ps ax -o comm='
expect_rc 0
printf 'moat-init\nps\n' >"$T/ps.want"
expect_same_file "$T/ps.want" "$_out" "a task's ps ax lists more than moat-init and ps"

# ============ 16. a time-of-check race on the exec path and argv ============

# exec_race flips "DIR/okk --safe" (harmless) and "DIR/bad" / "--evil" (the
# canary: it writes DIR/marker) under vfork children; the policy denies the
# canary both ways. Once redirected (default), once run in place (an allow rule).
mkdir race
RD=$(cd race && pwd -P)
cp "$B/exec_race" race/okk
cp "$B/exec_race" race/bad
"$MOAT" default-policy >"$T/default.json"
"$PY" - "$T/default.json" "$RD" "$T" <<'PY'
import json, sys
src, d, t = sys.argv[1:4]
p = json.load(open(src))
deny = [{"path": d + "/bad", "action": "deny"},
        {"path": d + "/okk", "argv": ["--evil"], "action": "deny"}]
p["exec"]["rules"] = deny
json.dump(p, open(t + "/race-redirect.json", "w"), indent=1)
p["exec"]["rules"] = deny + [{"path": d + "/okk", "action": "allow"}]
json.dump(p, open(t + "/race-allow.json", "w"), indent=1)
p["exec"]["rules"] = [{"path": "/usr/bin/id", "action": "deny"},
                      {"path": "/usr/bin/readlink", "action": "allow"}]
json.dump(p, open(t + "/rules.json", "w"), indent=1)
PY
# Without a race first: the canary, both ways, from a child of the agent.
run timeout -k 5 30 "$MOAT" run --policy "$T/race-redirect.json" -- sh -c \
	'"$1/bad" --safe "$1"; echo "bad=$?"; "$1/okk" --evil "$1"; echo "evil=$?"
"$1/okk" --safe "$1"; echo "safe=$?"' sh "$RD"
expect_line "bad=126"
expect_line "evil=126"
expect_line "safe=0"
expect_out_not "CANARY-RAN"
for how in redirect allow; do
	rm -f race/marker
	# Up to 2,500 tries or 16 s: a loaded sanitizer build makes ~100 tries a second.
	run timeout -k 5 45 "$MOAT" run --policy "$T/race-$how.json" -- race/okk "$RD" 16 2500
	_cmd="$_cmd ($how)"
	expect_rc 0
	expect_out "canary=0 "
	expect_out_not "CANARY-RAN"
	expect_true "race ($how): the canary ran: $(cat race/marker 2>/dev/null | head -3)" \
		test ! -e race/marker
	# Both sides of the race were reached, often enough to mean something.
	if sed -n 's/^race: tries=\([0-9]*\) ok=\([1-9][0-9]*\) eacces=\([1-9][0-9]*\) .*/\1/p' \
		"$_out" | grep -q '^[0-9]\{4,\}$'; then
		_pass
	else
		_fail "race ($how): fewer than 1000 tries, or no harmless run, or no refusal"
	fi
	echo "  race ($how): $(grep '^race:' "$_out")"
	sort "$_err" | uniq -c | sort -rn | head -3 | sed "s/^/  race ($how) stderr: /"
done

# ============ 17. audit: redirect, deny, allow ============

# audit_has FILE KEY=VALUE...: FILE has a call line with all these (JSON) values;
# "KEY~TEXT": TEXT is in that value; "K1|K2~TEXT": in either.
cat >"$T/audit_has.py" <<'PY'
import json, sys
want = sys.argv[2:]
for line in open(sys.argv[1]):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    ok = True
    for w in want:
        if "~" in w:
            k, v = w.split("~", 1)
            ok = ok and any(v in json.dumps(e.get(kk)) for kk in k.split("|"))
        else:
            k, v = w.split("=", 1)
            ok = ok and json.dumps(e.get(k)) == v
    if ok:
        print(line.strip())
        sys.exit(0)
sys.exit(1)
PY
audit_has() {
	_what=$1
	shift
	if "$PY" "$T/audit_has.py" "$T/audit" "$@" >/dev/null; then
		_pass
	else
		printf 'FAIL: audit: no line with %s (%s)\n' "$*" "$_what"
		grep '"syscall":"execve' "$T/audit" | grep -v '"errno":"ENOENT"' | head -5 |
			cut -c1-400 | sed 's/^/  /'
		_failed=$((_failed + 1))
	fi
}

drun sh -c '/bin/echo hi'
expect_rc 0
expect_line hi
audit_has "a redirected exec" 'syscall="execve"' 'path="/usr/bin/echo"' 'decision="redirect"'

run timeout -k 5 "$RUN_TIMEOUT" "$MOAT" run --policy "$T/rules.json" --audit "$T/audit.rules" \
	--audit-level all -- "$PY" -c 'import subprocess
try:
    subprocess.run(["id", "-u"])
    print("id ran")
except OSError as e:
    print(type(e).__name__, e.errno)
print(subprocess.run(["readlink", "/proc/self/ns/pid"], capture_output=True, text=True).stdout.strip())
print(subprocess.run(["cat", "/proc/self/cgroup"], capture_output=True).returncode)'
cp "$T/audit.rules" "$T/audit"
expect_rc 0
expect_line "PermissionError 13"
expect_out_not "id ran"
audit_has "an exec.rules deny" 'syscall="execve"' 'path="/usr/bin/id"' 'decision="deny"' \
	'errno="EACCES"' 'rule|exec_rule~/usr/bin/id'
# readlink runs in place: the agent's pid namespace (the host's), not a task's.
expect_line "$(readlink /proc/self/ns/pid)"
audit_has "an exec.rules allow" 'syscall="execve"' 'path="/usr/bin/readlink"' 'decision="allow"' \
	'rule|exec_rule~/usr/bin/readlink'
audit_has "the default next to the rules" 'syscall="execve"' 'path="/usr/bin/cat"' \
	'decision="redirect"'

# ============ 18. lifecycle ============

# The agent exits while a redirected sleep runs in the background: nothing is left.
drun sh -c "sleep 100.$U & echo started"
expect_rc 0
expect_line started
_n=30
while pgrep -f "sleep 100\.$U" >/dev/null && [ "$_n" -gt 0 ]; do
	sleep 0.1
	_n=$((_n - 1))
done
run pgrep -af "sleep 100\.$U"
expect_rc 1

# The runner dies under a running agent: later redirected execs fail, with an
# error on stderr; the agent runs on and its builtins work.
rm -f ready go
mkfifo go
"$MOAT" run -- sh -c '/bin/echo before; : >ready; read x <go; /bin/echo after; echo "rc=$?"
echo "builtin still works"' >"$T/bg.out" 2>"$T/bg.err" &
BG_MOAT=$!
wait_for ready 100
RUNNER=$(pgrep -P "$BG_MOAT" -x moat-runner)
_cmd="kill -KILL the moat-runner (child of moat $BG_MOAT: '${RUNNER:-none}')"
if [ -n "$RUNNER" ]; then
	kill -KILL $RUNNER
	gone "$RUNNER" 30
	_pass
else
	_fail "no moat-runner child of moat"
fi
echo go >go &
_n=100
while kill -0 "$BG_MOAT" 2>/dev/null && [ "$(cut -d' ' -f3 "/proc/$BG_MOAT/stat")" != Z ] &&
	[ "$_n" -gt 0 ]; do
	sleep 0.1
	_n=$((_n - 1))
done
[ "$_n" -gt 0 ] || kill -9 "$BG_MOAT"
wait "$BG_MOAT"
_rc=$?
BG_MOAT=""
cp "$T/bg.out" "$_out"
cp "$T/bg.err" "$_err"
_cmd="moat run -- sh -c '/bin/echo before; ...; /bin/echo after; echo rc=\$?; ...' (runner killed)"
expect_rc 0
expect_line before
expect_out_not after
if grep -qx 'rc=[1-9][0-9]*' "$_out"; then _pass; else _fail "the exec after the runner died succeeded"; fi
expect_line "builtin still works"
if [ -s "$_err" ]; then _pass; else _fail "no error on stderr for the failed exec"; fi

# moat itself is killed with SIGKILL while the agent runs a command and a setsid'd
# one: where the agent's tree is in a cgroup (root), the runner kills what is left.
"$MOAT" run -- sh -c "setsid sh -c 'sleep 200.$U' & sleep 201.$U" >/dev/null 2>&1 &
KM=$!
_n=50
while ! pgrep -f "sleep 20[01]\.$U" >/dev/null && [ "$_n" -gt 0 ]; do
	sleep 0.1
	_n=$((_n - 1))
done
kill -KILL "$KM"
wait "$KM" 2>/dev/null
_n=30
while pgrep -f "sleep 20[01]\.$U" >/dev/null && [ "$_n" -gt 0 ]; do
	sleep 0.1
	_n=$((_n - 1))
done
_cmd="kill -KILL moat while its agent runs 'sleep 201.$U' and a setsid'd 'sleep 200.$U'"
if ! pgrep -f "sleep 20[01]\.$U" >/dev/null; then
	_pass
elif [ -w /sys/fs/cgroup/pids ]; then
	_fail "processes left after moat was killed: $(pgrep -af "sleep 20[01]\.$U" | tr '\n' ' ')"
else
	known_gap "no writable cgroup: the agent's descendants outlive a SIGKILLed moat"
fi
pkill -KILL -f "sleep 20[01]\.$U" 2>/dev/null

finish
