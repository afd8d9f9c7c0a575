#!/bin/sh
# moat run: no decision rests on memory the agent can change after the check.
# racer's second thread flips a path buffer between an allowed and a denied
# file (one byte apart) 100,000 times while its first thread opens (or stats,
# or execs) the path in a loop; the denied object must never be reached. The
# same race is run natively first, to show that it does reach the denied file
# there (so the test can fail). Counts are printed for the record.
set -u
. "$(dirname "$0")/lib_run.sh"

mkdir -p race/a race/d
echo "allowed" >race/a/f
echo "CANARY-race" >race/d/f
cp /bin/true race/a/x
cp /bin/false race/d/x
ln -s a/f race/lnk
echo "allowed" >race/lnk.ok
write_policy
sed 's|"deny": \[|"deny": ["./race/d", |' "$POLICY" >"$T/p" && mv "$T/p" "$POLICY"
A="$T/repo/race/a"
D="$T/repo/race/d"
INO=$(stat -c %i "$D/f")

report() {
	printf '  %s %s\n' "$1" "$(grep -E '^[a-z]+: tries=' "$_out")"
}

# --- open: natively the race reaches the canary; under moat never ---
nrun "$PROGS/racer" open "$A/f" "$D/f"
report native
expect_rc 1
mrun "$PROGS/racer" open "$A/f" "$D/f"
report moat
expect_rc 0
expect_out "open: tries="
expect_out "leaked=0 flips=100000"
expect_out_not "refused=0 "
expect_out_not " ok=0 "

# --- stat: never a successful stat of the denied file ---
nrun "$PROGS/racer" stat "$A/f" "$D/f" 100000 "$INO"
report native
expect_rc 1
mrun "$PROGS/racer" stat "$A/f" "$D/f" 100000 "$INO"
report moat
expect_rc 0
expect_out "leaked=0 flips=100000"
expect_out_not "refused=0 "
expect_out_not " ok=0 "

# --- a symlink swapped on disk between an allowed and a denied target ---
nrun "$PROGS/racer" symlink "$T/repo/race/lnk" "$D/f" 5000
report native
mrun "$PROGS/racer" symlink "$T/repo/race/lnk" "$D/f" 5000
report moat
expect_rc 0
expect_out "leaked=0"
expect_no_canary

# --- exec: vfork + execve of a path flipped between true (allowed) and false (denied) ---
nrun "$PROGS/racer" exec "$A/x" "$D/x" 300
report native
expect_rc 1
RUN_TIMEOUT=90
mrun "$PROGS/racer" exec "$A/x" "$D/x" 300
RUN_TIMEOUT=60
report moat
expect_rc 0
expect_out "exec: tries=300 "
expect_out "leaked=0"
expect_out_not " ok=0 "

finish
