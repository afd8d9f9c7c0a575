#!/bin/sh
# moat run --audit: the NDJSON log of a scripted run. The session line comes
# first (the policy's SHA-256 as sha256sum computes it, moat's version, the
# surface); a denied call gives a line with pid, comm, syscall, path, access,
# decision "deny", the rule and the errno; level "all" adds the allowed calls,
# level "deny" (the default) only the denials. The policy's audit section is
# used without --audit, "-" writes to stdout, and an audit sink that cannot be
# written (/dev/full, a closed pipe) changes no decision.
set -u
. "$(dirname "$0")/lib_run.sh"

if [ -z "$PY" ]; then
	echo "skip: python3 is needed to read the JSON"
	exit 77
fi
ID_RSA="$HOME/.ssh/id_rsa"
VERSION=$("$MOAT" --version | cut -d' ' -f2)
SHA=$(sha256sum "$POLICY" | cut -d' ' -f1)

# The scripted run: probe (prints its pid) and cat, each denied something.
SCRIPT='"$0" pid cat,a.txt cat,"$1" stat,"$1" put,new.txt,x put,"$2"/x,y tcp,127.0.0.1,9
cat "$1"; echo "cat=$?"'

# check_log FILE LEVEL: every assertion on one log, in python; prints FAIL lines.
cat >"$T/check.py" <<'PY'
import json, sys
path, level, sha, version, pid, id_rsa, outside, policy, cwd = sys.argv[1:10]
fails = []
def check(cond, what):
    if not cond:
        fails.append(what)
lines = [l for l in open(path).read().splitlines() if l.strip()]
try:
    events = [json.loads(l) for l in lines]
except ValueError as e:
    print("FAIL: %s: a line is not JSON: %s" % (path, e))
    sys.exit(0)
check(len(events) > 1, "fewer than two lines")
s = events[0] if events else {}
check(s.get("event") == "session", "the first line is not the session line: %r" % s)
check(s.get("policy_sha256") == sha, "policy_sha256 %r != sha256sum %r" % (s.get("policy_sha256"), sha))
check(s.get("version") == version, "version %r != moat --version %r" % (s.get("version"), version))
check(s.get("policy") == policy, "policy %r != %r" % (s.get("policy"), policy))
check(any(r.get("path") == cwd and r.get("kind") == "cwd" and r.get("mode") == "rw"
          for r in s.get("surface", []) if isinstance(r, dict)),
      "the surface does not list the cwd as rw: %r" % s.get("surface"))
check(len(s.get("session", "")) >= 16, "no session id")
check(all(e.get("session") == s.get("session") for e in events), "session ids differ between lines")
check(all("ts" in e for e in events), "a line without ts")
calls = [e for e in events[1:] if e.get("event") == "call"]
check(len(calls) == len(events) - 1, "lines after the session line that are not calls")
for e in calls:
    for k in ("pid", "comm", "syscall", "path", "access", "decision", "rule", "errno"):
        check(k in e, "a call line without %r: %r" % (k, e))
def find(**kw):
    return [e for e in calls if all(e.get(k) == v for k, v in kw.items())]
d = find(pid=int(pid), syscall="openat", path=id_rsa)
check(len(d) == 1, "no single line for probe's denied open of the key: %r" % d)
if d:
    d = d[0]
    check(d["comm"] == "probe", "comm %r" % d["comm"])
    check(d["access"] == "read", "access %r" % d["access"])
    check(d["decision"] == "deny", "decision %r" % d["decision"])
    check(d["errno"] == "EACCES", "errno %r" % d["errno"])
    rule = d.get("rule") or {}
    check(rule.get("kind") == "deny" and rule.get("text") == "~/.ssh" and
          rule.get("source") == policy and rule.get("key") == "surface.deny[0]",
          "rule %r" % rule)
st = find(pid=int(pid), path=id_rsa, access="stat")
check(len(st) == 1 and st[0]["decision"] == "deny" and st[0]["errno"] == "ENOENT"
      and st[0]["syscall"] in ("newfstatat", "stat", "statx"), "the denied stat: %r" % st)
w = find(pid=int(pid), path=outside + "/x")
check(len(w) == 1 and w[0]["access"] == "write" and w[0]["decision"] == "deny"
      and w[0]["errno"] == "EACCES" and w[0]["rule"] is None, "the denied write: %r" % w)
c = find(pid=int(pid), syscall="connect")
check(len(c) == 1 and c[0]["path"] == "127.0.0.1:9" and c[0]["decision"] == "deny"
      and c[0]["errno"] == "EACCES", "the denied connect: %r" % c)
k = find(comm="cat", syscall="openat", path=id_rsa)
check(len(k) == 1 and k[0]["decision"] == "deny" and k[0]["pid"] != int(pid),
      "cat's denied open: %r" % k)
allowed = [e for e in calls if e["decision"] == "allow"]
a = find(pid=int(pid), syscall="openat", path=cwd + "/a.txt")
n = find(pid=int(pid), path=cwd + "/new.txt")
if level == "all":
    check(len(a) == 1 and a[0]["decision"] == "allow" and a[0]["errno"] is None
          and (a[0]["rule"] or {}).get("kind") == "cwd", "the allowed open of a.txt: %r" % a)
    check(len(n) >= 1 and all(x["decision"] == "allow" and x["access"] == "write" for x in n),
          "the allowed create of new.txt: %r" % n)
    check(any(e["syscall"] == "execve" for e in allowed), "no allowed execve line")
else:
    check(not allowed, "level deny logged allowed calls: %r" % allowed[:3])
for f in fails:
    print("FAIL: %s (%s): %s" % (path, level, f))
print("checked %d lines" % len(events))
PY

check_log() {
	_pid=$(sed -n 's/^pid //p' "$_out" | head -1)
	"$PY" "$T/check.py" "$1" "$2" "$SHA" "$VERSION" "${_pid:-0}" "$ID_RSA" "$T/outside" \
		"$POLICY" "$T/repo" >"$T/check.out"
	if grep -q '^FAIL' "$T/check.out"; then
		cat "$T/check.out"
		_failed=$((_failed + $(grep -c '^FAIL' "$T/check.out")))
	else
		_pass
	fi
}

# --- level all ---
run timeout 60 "$MOAT" run --policy "$POLICY" --audit "$T/all.ndjson" --audit-level all -- \
	sh -c "$SCRIPT" "$PROGS/probe" "$ID_RSA" "$T/outside"
expect_rc 0
expect_line "cat $ID_RSA: EACCES"
expect_line "cat=1"
expect_no_canary
check_log "$T/all.ndjson" all

# --- the default level: denials only ---
run timeout 60 "$MOAT" run --policy "$POLICY" --audit "$T/deny.ndjson" -- \
	sh -c "$SCRIPT" "$PROGS/probe" "$ID_RSA" "$T/outside"
expect_rc 0
check_log "$T/deny.ndjson" deny
expect_true "level all logged no more than level deny" \
	test "$(wc -l <"$T/all.ndjson")" -gt "$(wc -l <"$T/deny.ndjson")"

# --- the log is appended to, one session line per run ---
run timeout 60 "$MOAT" run --policy "$POLICY" --audit "$T/deny.ndjson" -- true
expect_rc 0
expect_true "a second run did not append its session line" \
	test "$(grep -c '"event":"session"' "$T/deny.ndjson")" -eq 2

# --- the policy's audit section, without --audit ---
write_policy '"audit": {"path": "'"$T"'/policy.ndjson", "level": "all"}'
SHA=$(sha256sum "$POLICY" | cut -d' ' -f1)
mrun sh -c "$SCRIPT" "$PROGS/probe" "$ID_RSA" "$T/outside"
expect_rc 0
expect_true "the policy's audit.path was not written" test -s "$T/policy.ndjson"
check_log "$T/policy.ndjson" all
# --audit-level on the command line wins over the policy's level.
rm -f "$T/policy.ndjson"
run timeout 60 "$MOAT" run --policy "$POLICY" --audit-level deny -- \
	sh -c "$SCRIPT" "$PROGS/probe" "$ID_RSA" "$T/outside"
check_log "$T/policy.ndjson" deny
write_policy
SHA=$(sha256sum "$POLICY" | cut -d' ' -f1)

# --- --audit - : the lines go to moat's stdout ---
run timeout 60 "$MOAT" run --policy "$POLICY" --audit - -- "$PROGS/probe" cat,"$ID_RSA"
expect_rc 0
expect_line "cat $ID_RSA: EACCES"
expect_out '"event":"session"'
expect_out '"decision":"deny"'

# --- a sink that cannot be written changes no decision ---
run timeout 60 "$MOAT" run --policy "$POLICY" --audit /dev/full --audit-level all -- \
	"$PROGS/probe" cat,a.txt cat,"$ID_RSA" put,full.txt,x
expect_rc 0
expect_line "cat a.txt: ok hello from repo"
expect_line "cat $ID_RSA: EACCES"
expect_line "put full.txt: ok"
expect_no_canary
# A pipe whose reader is gone.
(timeout 60 "$MOAT" run --policy "$POLICY" --audit /dev/fd/9 --audit-level all -- \
	sh -c 'sleep 0.3; "$0" cat,a.txt cat,"$1"' "$PROGS/probe" "$ID_RSA" \
	9>&1 >"$T/pipe.out" 2>"$T/pipe.err"; echo "rc=$?" >"$T/pipe.rc") | true
_cmd="moat run --audit /dev/fd/9 (a closed pipe)"
cp "$T/pipe.out" "$_out"
cp "$T/pipe.err" "$_err"
expect_line "cat a.txt: ok hello from repo"
expect_line "cat $ID_RSA: EACCES"
expect_true "moat did not exit 0 with a closed audit pipe" grep -qx "rc=0" "$T/pipe.rc"

finish
