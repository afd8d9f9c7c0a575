#!/bin/sh
# moat run: a multi-threaded agent served by several receiver threads at once.
# progs/threads runs 8 threads of mixed path calls (reads by absolute, relative,
# dirfd, ".." and symlinked paths, the stat family, access, O_PATH, readlink,
# create/write/fstat/rename/unlink, mkdir/rmdir, a pty of its own, denied opens,
# stats and creates) while one more thread forks and execs /bin/true (the tracer
# thread's work), and compares every result with what it must be. It runs
# natively first (the program is right, and its checks fail where moat is not
# there to deny), then under moat with 1, 2 and 4 receivers,
# then with a full audit log whose every line must be JSON and whose lines per
# thread must be exactly the calls that thread made: a lost, torn or misfiled
# line fails. MOAT_NOTIFY_THREADS outside 1..4 is refused. Times are printed.
# Run 8 x 120 on a 2-CPU VM: 2-3.5 s per moat run, about 12 s in all (17 s with ASan).
set -u
. "$(dirname "$0")/lib_run.sh"

if [ -z "$PY" ]; then
	echo "skip: python3 is needed to read the audit log"
	exit 77
fi
TH="$PROGS/threads"
# A run takes a few seconds; one that hangs (a lost answer) fails well within ctest's 300 s.
RUN_TIMEOUT=40
N=8
K=120

# now_ms: a clock for the record.
now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# timed LABEL CMD...: run CMD (mrun, nrun or run) and print how long it took.
timed() {
	_label=$1
	shift
	_t0=$(now_ms)
	"$@"
	printf '  %s: %d ms, rc %d, %s\n' "$_label" $(($(now_ms) - _t0)) "$_rc" \
		"$(grep -E '^(exec|threads):' "$_out" | tr '\n' ' ')"
}

# expect_clean: nothing a run made is left behind, and nothing was made where
# the surface denies it. Then whatever is there goes, so that one failed run does
# not fail the next (its O_EXCL creates) as well.
expect_clean() {
	_left=$(find . -maxdepth 1 -name 'thr-*' | tr '\n' ' ')
	expect_true "left in the cwd: $_left" test -z "$_left"
	_made=$(find "$T/outside" secret -mindepth 1 ! -name o.txt ! -name s.txt | tr '\n' ' ')
	expect_true "created where the surface denies it: $_made" test -z "$_made"
	rm -rf ./thr-* "$T"/outside/thr-* secret/thr-*
}

# --- natively: every check passes with the kernel's own answers ---
timed native nrun "$TH" native "$N" "$K"
expect_rc 0
expect_line "threads: $N x $K ok"
expect_clean

# --- natively with moat's expectations: the denial checks do fail without moat ---
# (One thread, one round: every mismatch is printed, in whatever order.)
nrun "$TH" moat 1 1
expect_rc 1
expect_out "thw00 open .env: expected EACCES, got ok"
expect_out "thw00 open key-link: expected EACCES, got ok"
expect_out "thw00 stat .env: expected ENOENT, got ok"
expect_out "thw00 statx secret/s.txt: expected ENOENT, got ok"
expect_out "thw00 readlink $HOME/.ssh/id_rsa: expected ENOENT, got EINVAL"
expect_out "thw00 create ../outside/thr-00.x: expected EACCES, got ok"
expect_out "thw00 mkdir secret/thr-00: expected EACCES, got ok"
expect_line "threads: 1 x 1: 18 mismatches"
# The program reads the canaries natively but never prints them.
expect_no_canary
expect_clean

# --- under moat: one, two and four receivers serving the same threads ---
for n in 1 2 4; do
	export MOAT_NOTIFY_THREADS=$n
	timed "moat, $n receivers" mrun "$TH" moat "$N" "$K"
	expect_rc 0
	expect_line "threads: $N x $K ok"
	expect_out_not " expected "
	expect_no_canary
	expect_clean
done

# --- the audit log of a run with four receivers: every call, whole, once ---
# check_audit LOG OUT: every line is JSON; the first is the session line; each
# worker thread (by tid, from OUT) has exactly as many call lines as it made
# trapped calls, all with its comm, and as many denials as it expected, each
# with the errno its call got; one allowed execve of /bin/true per exec.
cat >"$T/check_audit.py" <<'PY'
import json, os, re, sys
log, out = sys.argv[1:3]
fails = []
events = []
for i, line in enumerate(open(log, encoding="utf-8", errors="replace").read().split("\n")):
    if not line:
        continue
    try:
        events.append(json.loads(line))
    except ValueError as e:
        fails.append("line %d is not JSON (%s): %.120s" % (i + 1, e, line))
if not events or events[0].get("event") != "session":
    fails.append("the first line is not the session line")
calls = [e for e in events if e.get("event") == "call"]
if len(calls) != len(events) - 1:
    fails.append("%d lines are neither the session nor a call" % (len(events) - 1 - len(calls)))
threads = re.findall(r"^thread (\d+) tid=(\d+) calls=(\d+) denied=(\d+)$", open(out).read(), re.M)
execs = re.findall(r"^exec: execs=(\d+)$", open(out).read(), re.M)
if not threads or len(execs) != 1:
    fails.append("the program's counts are missing from its output")
by_tid = {}
for e in calls:
    by_tid.setdefault(e.get("pid"), []).append(e)
# The errno contract: what only looks is told ENOENT, what reads or writes EACCES.
want_errno = {"stat": "ENOENT", "read": "EACCES", "write": "EACCES"}
total = 0
for idx, tid, n, denied in threads:
    mine = by_tid.get(int(tid), [])
    total += len(mine)
    if len(mine) != int(n):
        fails.append("thread %s (tid %s): %d call lines, it made %s calls" % (idx, tid, len(mine), n))
    comms = set(e.get("comm") for e in mine)
    if comms - {"thw" + idx}:
        fails.append("thread %s: lines with comm %r" % (idx, sorted(comms - {"thw" + idx})))
    d = [e for e in mine if e.get("decision") == "deny"]
    if len(d) != int(denied):
        fails.append("thread %s: %d denials logged, %s expected" % (idx, len(d), denied))
    bad = [e for e in d if e.get("errno") != want_errno.get(e.get("access"))]
    if bad:
        fails.append("thread %s: a denial with the wrong errno: %r" % (idx, bad[0]))
true = os.path.realpath("/bin/true")
x = [e for e in calls if e.get("syscall") == "execve" and e.get("path") == true]
if execs and (len(x) != int(execs[0]) or any(e.get("decision") != "allow" for e in x)):
    fails.append("%d execve lines for %s, %s execs made" % (len(x), true, execs[0]))
for f in fails[:20]:
    print("FAIL: %s: %s" % (log, f))
print("checked %d lines, %d of them the %d workers' calls" % (len(events), total, len(threads)))
PY

# check_audit LOG: runs the checker on LOG with the last run's stdout; every FAIL counts.
check_audit() {
	"$PY" "$T/check_audit.py" "$1" "$_out" >"$T/check.out" 2>&1
	sed 's/^/  /' "$T/check.out"
	if grep -q '^FAIL' "$T/check.out"; then
		_failed=$((_failed + 1))
	elif grep -q '^checked ' "$T/check.out"; then
		_pass
	else
		_fail "the audit checker did not finish"
	fi
}

export MOAT_NOTIFY_THREADS=4
LOG="$T/threads.ndjson"
timed "moat, 4 receivers, audit all" run timeout -k 5 "$RUN_TIMEOUT" "$MOAT" run \
	--policy "$POLICY" --audit "$LOG" --audit-level all -- "$TH" moat "$N" "$K"
expect_rc 0
expect_line "threads: $N x $K ok"
expect_no_canary
expect_clean
# moat says so at exit when lines were dropped.
if grep -q "could not be written" "$_err"; then _fail "audit lines were lost"; else _pass; fi
check_audit "$LOG"
expect_true "no denied call in the audit log" grep -q '"decision":"deny"' "$LOG"

# The checker itself fails on a torn line and on a line missing (so that it can fail
# above): one worker line cut in two, one worker line dropped.
_tid=$(sed -n 's/^thread 03 tid=\([0-9]*\) .*/\1/p' "$_out")
_nr=$(grep -n "\"pid\":$_tid," "$LOG" | sed -n '50{s/:.*//;p}')
if [ -n "$_nr" ]; then
	awk -v n="$_nr" 'NR == n { print substr($0, 1, 90); print substr($0, 91); next } 1' \
		"$LOG" >"$T/torn.ndjson"
	awk -v n="$_nr" 'NR != n' "$LOG" >"$T/short.ndjson"
	for bad in torn short; do
		"$PY" "$T/check_audit.py" "$T/$bad.ndjson" "$_out" >"$T/check.out" 2>&1
		expect_true "the checker passed a $bad log" grep -q '^FAIL' "$T/check.out"
	done
else
	_fail "no 50th audit line of thread 03 to corrupt"
fi

# --- MOAT_NOTIFY_THREADS outside 1..4: refused before anything runs ---
for v in 0 x 5; do
	export MOAT_NOTIFY_THREADS=$v
	mrun sh -c 'echo ran'
	expect_rc 125
	expect_err "MOAT_NOTIFY_THREADS='$v'"
	expect_out_not "ran"
done
unset MOAT_NOTIFY_THREADS

finish
