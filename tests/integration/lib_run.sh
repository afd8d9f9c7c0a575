# Helpers for the `moat run` tests: a fixture tree with canaries, a policy that
# does not depend on this machine, and assertions on what the agent saw.
# shellcheck shell=sh
#
# The tree, under $T (canonical):
#   home/            HOME; home/.ssh/id_rsa holds a canary (denied: "~/.ssh")
#   repo/            the working directory (cwd: rw)
#     a.txt          "hello from repo"
#     sub/b.txt      "bee"
#     .env sub/.env  canaries (denied: "**/.env")
#     secret/s.txt   a canary (denied: "./secret")
#     vendor/v.txt   read-only ("read": ["./vendor"])
#     key-link       a symlink to home/.ssh/id_rsa
#   ro/r.txt         read-only ("read")
#   rw/              writable ("write")
#   outside/o.txt    a canary no rule names (denied)
# Every canary contains "CANARY"; no test output may ever contain it unless the
# test reads it natively on purpose.
# (Sourced from another directory, the caller names this one in TEST_LIB.)
. "${TEST_LIB:-$(dirname "$0")}/lib.sh"

# Descriptors inherited from the caller (ctest leaves some open) would shift the
# fd numbers the tests expect: the agent starts with 0, 1 and 2 only.
exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-

PROGS="${MOAT_PROGS:?MOAT_PROGS is not set}"
# Not the caller's PATH: shims under /root (pyenv, cargo) are not in the surface.
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
PY=
for p in /usr/bin/python3 /bin/python3; do
	if [ -x "$p" ]; then
		PY=$p
		break
	fi
done
# How long one `moat run` may take before it counts as hung.
RUN_TIMEOUT=${RUN_TIMEOUT:-60}

T=$(cd "$(mktemp -d)" && pwd -P)
CLEANUP=""
_cleanup() {
	eval "$CLEANUP"
	rm -rf "$T"
}
trap _cleanup EXIT
trap 'exit 1' INT TERM

export HOME="$T/home"
umask 022
mkdir -p "$HOME/.ssh" "$T/repo/sub" "$T/repo/secret" "$T/repo/vendor" "$T/ro" "$T/rw" \
	"$T/outside"
echo "CANARY-ssh-private-key" >"$HOME/.ssh/id_rsa"
echo "hello from repo" >"$T/repo/a.txt"
echo "bee" >"$T/repo/sub/b.txt"
echo "CANARY-dotenv" >"$T/repo/.env"
echo "CANARY-sub-dotenv" >"$T/repo/sub/.env"
echo "CANARY-secret" >"$T/repo/secret/s.txt"
echo "vendored" >"$T/repo/vendor/v.txt"
echo "read only" >"$T/ro/r.txt"
echo "CANARY-outside" >"$T/outside/o.txt"
ln -s "$HOME/.ssh/id_rsa" "$T/repo/key-link"
cd "$T/repo" || exit 1

# write_policy [EXTRA_JSON]: the policy in $POLICY; EXTRA_JSON is appended to the
# top-level object (e.g. '"net": {...}').
POLICY="$T/policy.json"
write_policy() {
	cat >"$POLICY" <<JSON
{
  "version": 1,
  "surface": {
    "cwd": "rw",
    "read": ["$T/ro", "./vendor", "$PROGS"],
    "write": ["$T/rw"],
    "deny": ["~/.ssh", "**/.env", "./secret"],
    "system": true,
    "tooling": false
  },
  "exec": {"default": "allow"}${1:+,
  $1}
}
JSON
}
write_policy

# mrun CMD [ARGS...]: CMD under moat with $POLICY, through lib.sh's run.
mrun() {
	run timeout -k 5 "$RUN_TIMEOUT" "$MOAT" run --policy "$POLICY" -- "$@"
}

# nrun CMD [ARGS...]: the same command natively, for comparisons.
nrun() {
	run timeout -k 5 "$RUN_TIMEOUT" "$@"
}

# expect_line LINE: stdout has exactly this line.
expect_line() {
	if grep -qxF -- "$1" "$_out"; then _pass; else _fail "stdout lacks the line: $1"; fi
}

# expect_no_canary: neither stdout nor stderr holds a canary.
expect_no_canary() {
	if grep -q CANARY "$_out" "$_err"; then
		_fail "a denied file's content (CANARY) reached the agent"
	else
		_pass
	fi
}

expect_out_not() {
	if grep -qF -- "$1" "$_out"; then _fail "stdout has: $1"; else _pass; fi
}

# expect_true DESCRIPTION CMD...: CMD succeeds.
expect_true() {
	_what=$1
	shift
	if "$@"; then _pass; else _fail "$_what"; fi
}

# save NAME: keep the last run's stdout as $T/NAME.
save() {
	cp "$_out" "$T/$1"
}

# expect_same_file A B DESCRIPTION: the two files are identical (diff shown if not).
expect_same_file() {
	if cmp -s "$1" "$2"; then
		_pass
	else
		printf 'FAIL: %s\n' "$3"
		diff "$1" "$2" | head -60 | sed 's/^/  /'
		_failed=$((_failed + 1))
	fi
}

# wait_for FILE [TENTHS]: until FILE exists (default 10 s); false on timeout.
wait_for() {
	_n=${2:-100}
	while [ ! -e "$1" ] && [ "$_n" -gt 0 ]; do
		sleep 0.1
		_n=$((_n - 1))
	done
	[ -e "$1" ]
}

# gone PID [TENTHS]: until PID no longer exists (a zombie counts as gone).
gone() {
	_n=${2:-50}
	while [ "$_n" -gt 0 ]; do
		if ! kill -0 "$1" 2>/dev/null; then return 0; fi
		case $(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) in Z | X | '') return 0 ;; esac
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}
