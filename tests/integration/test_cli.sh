#!/bin/sh
# moat check / mounts / default-policy as a user runs them: exit codes, output
# lines, policy errors naming file:line:col and key, and the mount export.
set -u
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/home/.ssh" "$T/repo/src" "$T/repo/vendor" "$T/other"
echo key >"$T/home/.ssh/id_rsa"
echo x >"$T/repo/src/a.c"
ln -s "$T/home/.ssh/id_rsa" "$T/repo/src/link"
export HOME="$T/home"

cat >"$T/p.json" <<JSON
{
  "version": 1,
  "surface": {
    "cwd": "rw",
    "read": ["./vendor"],
    "deny": ["~/.ssh", "**/.env"],
    "system": false,
    "tooling": false
  }
}
JSON

# --- check: decisions, exit codes ---
run "$MOAT" check --policy "$T/p.json" --cwd "$T/repo" src/a.c
expect_rc 0
expect_out "src/a.c -> $T/repo/src/a.c: read allowed by cwd (rw)"

run "$MOAT" check --policy "$T/p.json" --cwd "$T/repo" --access write vendor/x
expect_rc 1
expect_out "write denied (EACCES) by read \"./vendor\""

# A symlink in the cwd to a denied file is decided on its target.
run "$MOAT" check --policy "$T/p.json" --cwd "$T/repo" src/link
expect_rc 1
expect_out "src/link -> $T/home/.ssh/id_rsa: read denied (EACCES) by deny \"~/.ssh\""

# '..' escapes are folded before the decision.
run "$MOAT" check --policy "$T/p.json" --cwd "$T/repo" ../other/x
expect_rc 1
expect_out "no rule matches"

run "$MOAT" check --policy "$T/p.json" --cwd "$T/repo" --access stat "$T/home/.ssh/id_rsa"
expect_rc 1
expect_out "stat denied (ENOENT)"

run "$MOAT" check --policy "$T/p.json" --cwd "$T/repo" --access stat "$T"
expect_rc 0
expect_out "stat allowed as an ancestor of $T/repo (cwd"

run "$MOAT" check --policy "$T/p.json" --cwd "$T/repo" --json src/.env
expect_rc 1
expect_out '"decision":"deny","errno":"EACCES"'
expect_out '"kind":"deny","glob":true'

# One denied path among allowed ones makes the exit status 1.
run "$MOAT" check --policy "$T/p.json" --cwd "$T/repo" src/a.c src/link
expect_rc 1

# --- check: usage and policy errors exit 2 and name what is wrong ---
run "$MOAT" check --access bogus x
expect_rc 2
expect_err "--access 'bogus': expected read, write, exec or stat"

printf '{\n  "version": 1,\n  "surface": {\n    "wrte": []\n  }\n}\n' >"$T/bad.json"
run "$MOAT" check --policy "$T/bad.json"
expect_rc 2
expect_err "$T/bad.json:4:5: surface.wrte: unknown key"

printf '{"version": 1, "surface": {"write": ["/a", 7]}}' >"$T/bad2.json"
run "$MOAT" check --policy "$T/bad2.json"
expect_rc 2
expect_err "$T/bad2.json:1:44: surface.write[1]: expected a string, got a number"

run "$MOAT" check --policy "$T/missing.json"
expect_rc 2
expect_err "$T/missing.json: No such file or directory"

run "$MOAT" check --cwd "$T/nope" x
expect_rc 2

# --- check with no path validates ---
run "$MOAT" check --policy "$T/p.json" --cwd "$T/repo"
expect_rc 0
expect_out "$T/p.json: valid:"

run "$MOAT" check
expect_rc 0
expect_out "<default>: valid:"

# --- the embedded default ---
run "$MOAT" check --cwd "$T/repo" "$T/home/.ssh/id_rsa" /etc/shadow
expect_rc 1
run "$MOAT" check --cwd "$T/repo" src/a.c /etc/passwd /usr/bin/env
expect_rc 0
run "$MOAT" default-policy
expect_rc 0
expect_out '"version": 1'
"$MOAT" default-policy >"$T/default.json"
run "$MOAT" check --policy "$T/default.json" --cwd "$T/repo"
expect_rc 0

# --- mounts ---
run "$MOAT" mounts --policy "$T/p.json" --cwd "$T/repo" --format bwrap
expect_rc 0
expect_out "--bind $T/repo $T/repo"
expect_out "--ro-bind $T/repo/vendor $T/repo/vendor"
expect_err "glob /**/.env"

run "$MOAT" mounts --policy "$T/p.json" --cwd "$T/repo" --format oci
expect_rc 0
expect_out '"destination": "'"$T/repo"'"'

run "$MOAT" mounts --format nope
expect_rc 2
expect_err "--format 'nope': expected bwrap, docker or oci"

# --- help and version are there and say what the commands are ---
run "$MOAT" --help
expect_rc 0
expect_out "check"
expect_out "mounts"
for c in check mounts default-policy; do
	run "$MOAT" "$c" --help
	expect_rc 0
	expect_out "Usage: moat $c"
done
run "$MOAT" --version
expect_rc 0
expect_out "moat "
run "$MOAT" frobnicate
expect_rc 2
expect_err "unknown command 'frobnicate'"

finish
