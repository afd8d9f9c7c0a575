# Helpers for the integration scripts: run a command, then assert on its exit
# status and output. Every failed assertion is printed; finish() sets the status.
# shellcheck shell=sh

MOAT="${MOAT_BIN:?MOAT_BIN is not set}/moat"
_failed=0
_passed=0
_gaps=0
_out=$(mktemp)
_err=$(mktemp)

run() {
	_cmd="$*"
	"$@" >"$_out" 2>"$_err"
	_rc=$?
}

_fail() {
	printf 'FAIL: %s\n  command: %s\n  stdout: %s\n  stderr: %s\n' "$1" "$_cmd" \
		"$(head -c 2000 "$_out")" "$(head -c 2000 "$_err")"
	_failed=$((_failed + 1))
}

_pass() { _passed=$((_passed + 1)); }

expect_rc() {
	if [ "$_rc" -eq "$1" ]; then _pass; else _fail "exit status $_rc, expected $1"; fi
}

expect_out() {
	if grep -qF -- "$1" "$_out"; then _pass; else _fail "stdout lacks: $1"; fi
}

expect_err() {
	if grep -qF -- "$1" "$_err"; then _pass; else _fail "stderr lacks: $1"; fi
}

# A weakness that is known, written down in the issue's closing note and not yet
# fixed: reported and counted on every run, never silently passed. When it is
# fixed, the caller's check passes instead and the gap disappears from the count.
known_gap() {
	printf 'KNOWN GAP: %s\n' "$1"
	_gaps=$((_gaps + 1))
}

finish() {
	rm -f "$_out" "$_err"
	[ "$_gaps" -eq 0 ] || printf '%d known gaps (see above)\n' "$_gaps"
	printf '%d passed, %d failed\n' "$_passed" "$_failed"
	[ "$_failed" -eq 0 ]
}
