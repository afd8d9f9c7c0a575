#!/bin/sh
# moat's benchmarks, measured in one run and printed as ratios.
#
#   bench/run.sh [BUILD_DIR] [--quick] [supervisor | runner]
#
# BUILD_DIR (default: build, in the repository) must hold bin/moat and
# bench/{bench_calls,bare_notify,bench_steps} for the supervisor's sections (1-3),
# bin/moat-runner and bench/runner_launch for the runner's (4): this script
# builds nothing. `supervisor` runs only sections 1-3, `runner` only section 4.
#
# 1. Per call (bench_calls): openat+close, statx, connect (unix) + close and
#    fork+execve(/bin/true)+wait, natively, under the bare notify peer
#    (bare_notify: moat's filter, every call answered CONTINUE) in its four loop
#    variants, under `moat run` and under `strace -f`. Two diagnostic rows:
#    openat-rel (a relative name: the target's cwd is opened through /proc) and
#    connect-nb (a non-blocking socket: moat connects inline instead of on a thread).
#    The peer also runs with --emulate (openat and statx carried out as plainly
#    as possible, the fd injected with ADDFD): the floor of any emulation, which
#    splits moat's share into emulating at all and moat's own safety steps.
#    Then moat and the peer pinned to one CPU, to show what cross-CPU wake-ups
#    cost, and bench_steps: each system call a handler makes, timed natively.
# 2. Macro: `git status` in a generated 10,000-file repository, `find` over it,
#    and an import-heavy Python start-up: native, bare, moat and strace -f, with
#    hyperfine when it is installed.
# 3. The issue's goals, each stated as met or not met with its numbers.
# 4. The runner (runner_launch, against its own moat-runner daemon on a
#    temporary socket, stopped at the end): the launch latency of `true`
#    natively, through `moat-runner exec`, through an in-process client that
#    speaks the protocol, under bwrap and under unshare (median, p90, p99);
#    stdout throughput of `head -c N /dev/zero` through the runner against a
#    native pipe, free and pinned to one CPU; the daemon's memory idle, with 1
#    and with 100 `sleep` tasks.
#
# Nothing here asserts a timing. Environment: PYTHON (default /usr/bin/python3),
# MOAT_BENCH_REPO (default /tmp/moat-bench-repo, generated once and kept).
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=
QUICK=0
SECTION=all
for arg in "$@"; do
	case $arg in
	--quick) QUICK=1 ;;
	supervisor | runner) SECTION=$arg ;;
	-h | --help)
		sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	-*)
		echo "run.sh: unknown option $arg" >&2
		exit 2
		;;
	*) BUILD=$arg ;;
	esac
done
GIVEN=${BUILD:-$ROOT/build}
if ! BUILD=$(cd "$GIVEN" 2>/dev/null && pwd); then
	echo "run.sh: no build directory $GIVEN" >&2
	exit 2
fi
MOAT=$BUILD/bin/moat
CALLS=$BUILD/bench/bench_calls
BARE=$BUILD/bench/bare_notify
STEPS=$BUILD/bench/bench_steps
RUNNER=$BUILD/bin/moat-runner
RLAUNCH=$BUILD/bench/runner_launch
NEEDED="$MOAT $CALLS $BARE $STEPS $RUNNER $RLAUNCH"
[ "$SECTION" = supervisor ] && NEEDED="$MOAT $CALLS $BARE $STEPS"
[ "$SECTION" = runner ] && NEEDED="$RUNNER $RLAUNCH"
for b in $NEEDED; do
	if [ ! -x "$b" ]; then
		echo "run.sh: $b is missing: build first (ninja -C $BUILD)" >&2
		exit 2
	fi
done
HAVE_STRACE=0
command -v strace >/dev/null 2>&1 && HAVE_STRACE=1
HAVE_HYPERFINE=0
command -v hyperfine >/dev/null 2>&1 && HAVE_HYPERFINE=1
if [ -n "${PYTHON:-}" ]; then
	:
elif [ -x /usr/bin/python3 ]; then
	PYTHON=/usr/bin/python3 # not a pyenv shim: the interpreter, not a shell script
else
	PYTHON=$(command -v python3 || echo python3)
fi
REPO=${MOAT_BENCH_REPO:-/tmp/moat-bench-repo}

if [ "$QUICK" -eq 1 ]; then
	CALL_OPTS="--runs 3 --run-ms 60 --warmup-ms 20"
	NATIVE_RUNS=5 MOAT_RUNS=3 STRACE_RUNS=2 STEP_ITER=3000
	LAUNCH_ITER=50 THROUGHPUT_BYTES=$((256 << 20)) THROUGHPUT_RUNS=1 MEMORY_TASKS=100
else
	CALL_OPTS="--runs 5 --run-ms 150 --warmup-ms 50"
	NATIVE_RUNS=15 MOAT_RUNS=10 STRACE_RUNS=5 STEP_ITER=20000
	LAUNCH_ITER=200 THROUGHPUT_BYTES=$((1 << 30)) THROUGHPUT_RUNS=3 MEMORY_TASKS=100
fi

WORK=$(mktemp -d /tmp/moat-bench.XXXXXX)
RUNNER_PID=
# stop_runner: the runner daemon section 4 started, if it is still running.
stop_runner() {
	[ -n "$RUNNER_PID" ] || return 0
	kill -TERM "$RUNNER_PID" 2>/dev/null || true
	wait "$RUNNER_PID" 2>/dev/null || true
	RUNNER_PID=
}
trap 'stop_runner; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# The policy: the bench's directory and the repository rw, the build tree
# readable (the programs run from it), execs in place, the bench's unix socket.
POLICY=$WORK/policy.json
cat >"$POLICY" <<EOF
{
  "version": 1,
  "surface": { "cwd": "rw", "write": ["$WORK", "$REPO"], "read": ["$BUILD"] },
  "exec": { "default": "allow" },
  "net": { "connect": ["unix:$WORK/bench.sock"], "bind": ["unix:$WORK/bench.sock"] }
}
EOF

START=$(date +%s)

# ---- helpers ----

# val FILE CALL FIELD: a field of bench_calls --tsv (2 ns, 3 p50, 4 p99, 5 worst p99/p50).
val() {
	[ -f "$1" ] || {
		echo "-"
		return
	}
	awk -F '\t' -v c="$2" -v f="$3" '$1 == c { print $f; found = 1 } END { if (!found) print "-" }' "$1"
}

# ratio A B [FMT]: A/B, or "-" if either is missing.
ratio() {
	awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" 'BEGIN {
		if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf f "\n", a / b }'
}

# diff A B: A-B.
diff_ns() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.0f\n", a - b }'
}

# us NS: nanoseconds as microseconds with one decimal.
us() {
	awk -v a="$1" 'BEGIN { if (a == "-") print "-"; else printf "%.1f\n", a / 1000 }'
}

# Busy CPU time of the whole machine (jiffies), and of our waited-for children (seconds).
cpu_jiffies() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
child_secs() {
	# In this shell: a command substitution's subshell would have no children of its own.
	times >"$WORK/times"
	awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }' \
		"$WORK/times"
}
NCPU=$(nproc)
HZ=$(getconf CLK_TCK)

# foreign NAME J0 C0 T0: after a step, the share (%) of the machine's CPU time other
# processes used while it ran; over 5% the step is listed in $WORK/loaded.
foreign() {
	child_secs >"$WORK/c1"
	awk -v n="$1" -v j0="$2" -v j1="$(cpu_jiffies)" -v c0="$3" -v c1="$(cat "$WORK/c1")" \
		-v t0="$4" -v t1="$(date +%s%N)" -v hz="$HZ" -v cpus="$NCPU" 'BEGIN {
		el = (t1 - t0) / 1e9; f = (j1 - j0) / hz - (c1 - c0); if (f < 0) f = 0
		p = 100 * f / (el * cpus)
		printf " %5.1f s, others used %2.0f%% of the CPUs\n", el, p > "/dev/stderr"
		if (p > 5) printf "%s (%.0f%%) ", n, p >> "'"$WORK/loaded"'" }'
}

# calls NAME CMD...: bench_calls under a wrapper, results to $WORK/NAME.tsv.
calls() {
	name=$1
	shift
	printf '  %-22s' "$name" >&2
	child_secs >"$WORK/c0"
	j0=$(cpu_jiffies) c0=$(cat "$WORK/c0") t0=$(date +%s%N)
	if (cd "$WORK" && "$@" >"$WORK/$name.tsv" 2>"$WORK/$name.err"); then
		foreign "$name" "$j0" "$c0" "$t0"
	else
		printf ' FAILED: %s\n' "$(head -c 300 "$WORK/$name.err")" >&2
		rm -f "$WORK/$name.tsv"
	fi
}

# busy: the share of CPU time (%) this machine spent busy over half a second.
busy() {
	a=$(head -1 /proc/stat)
	sleep 0.5
	b=$(head -1 /proc/stat)
	printf '%s\n%s\n' "$a" "$b" | awk '{ t = 0; for (i = 2; i <= NF; i++) t += $i
		idle[NR] = $5 + $6; tot[NR] = t }
		END { printf "%.0f\n", 100 * (1 - (idle[2] - idle[1]) / (tot[2] - tot[1])) }'
}

# ---- 4. the runner (a function: run last, or alone with `run.sh runner`) ----

# start_runner SOCKET: a daemon of our own; waits (up to 5 s) until it listens.
start_runner() {
	"$RUNNER" --socket "$1" >"$WORK/runner.log" 2>&1 &
	RUNNER_PID=$!
	i=0
	while [ ! -S "$1" ]; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$RUNNER_PID" 2>/dev/null; then
			echo "run.sh: the runner did not start: $(head -c 300 "$WORK/runner.log")" >&2
			stop_runner
			return 1
		fi
		sleep 0.05
	done
}

runner_section() {
	# The socket's directory is hidden from the tasks: their cwd must be elsewhere.
	rsock=$WORK/runner/r.sock
	rcwd=$WORK/runner-cwd
	mkdir -p "$rcwd"
	methods=a,b,b2
	command -v bwrap >/dev/null 2>&1 && methods=$methods,c
	command -v unshare >/dev/null 2>&1 && methods=$methods,d
	load=$(busy)
	echo >&2
	echo "runner: the machine was ${load}% busy; daemon on $rsock" >&2
	start_runner "$rsock" || return 0
	echo
	echo "== Runner (section 4): launch, stdout throughput, memory =="
	echo "   the machine was ${load}% busy before it: every hop of a launch is a wake-up, so"
	echo "   the runner's ratios suffer more than the peers' from a loaded machine"
	echo "   a native, b moat-runner exec (a process), b2 in-process client (connect to exit frame),"
	echo "   c bwrap --unshare-pid --unshare-net --ro-bind / / --dev /dev --proc /proc,"
	echo "   d unshare --pid --mount --net --fork --mount-proc; every runner task gets its own"
	echo "   pid, mount and network namespaces, a masked view and a seccomp filter"
	(
		cd "$rcwd"
		# One task first, so the policy and the view are cached before "idle" is read.
		"$RUNNER" exec --socket "$rsock" -- true </dev/null >/dev/null || true
		"$RLAUNCH" --socket "$rsock" --memory "$MEMORY_TASKS" || echo "runner memory failed"
		echo
		"$RLAUNCH" --socket "$rsock" --runner "$RUNNER" --methods "$methods" \
			--iterations "$LAUNCH_ITER" || echo "runner launch failed"
		echo
		"$RLAUNCH" --socket "$rsock" --runner "$RUNNER" --throughput "$THROUGHPUT_BYTES" \
			--runs "$THROUGHPUT_RUNS" || echo "runner throughput failed"
		# A native pipe has two processes, the runner's path three (the command, the
		# daemon, the client): with fewer idle CPUs than that the ratio measures the
		# machine. The same on one CPU, the daemon pinned there too, compares the work.
		if command -v taskset >/dev/null 2>&1 && taskset -a -p -c 0 "$RUNNER_PID" >/dev/null; then
			echo
			echo "the same, everything on CPU 0 (taskset -c 0):"
			taskset -c 0 "$RLAUNCH" --socket "$rsock" --runner "$RUNNER" \
				--throughput "$THROUGHPUT_BYTES" --runs "$THROUGHPUT_RUNS" ||
				echo "runner throughput (1 CPU) failed"
		fi
	) || true
	stop_runner
	if grep -qv '^moat-runner: serving' "$WORK/runner.log"; then
		echo "the runner said:"
		grep -v '^moat-runner: serving' "$WORK/runner.log" | tail -n 20
	fi
}

if [ "$SECTION" = runner ]; then
	runner_section
	echo
	echo "total $(($(date +%s) - START)) s"
	exit 0
fi

# ---- 1. per call ----

LOAD_START=$(busy)
echo "moat supervisor benchmarks: $(uname -r), $(nproc) CPUs, build $BUILD" >&2
echo "the machine was ${LOAD_START}% busy before the run" >&2
echo "per-call runs (bench_calls $CALL_OPTS):" >&2
# shellcheck disable=SC2086
{
	calls native "$CALLS" --tsv $CALL_OPTS
	calls bare "$BARE" -- "$CALLS" --tsv $CALL_OPTS
	calls bare-thread "$BARE" --loop thread -- "$CALLS" --tsv $CALL_OPTS
	calls bare-nosync "$BARE" --no-sync-wake -- "$CALLS" --tsv $CALL_OPTS
	calls bare-thread-nosync "$BARE" --loop thread --no-sync-wake -- "$CALLS" --tsv $CALL_OPTS
	calls moat "$MOAT" run --policy "$POLICY" -- "$CALLS" --tsv $CALL_OPTS
	if [ "$HAVE_STRACE" -eq 1 ]; then
		calls strace strace -f -qq -o /dev/null "$CALLS" --tsv $CALL_OPTS
	fi
	EMU="--calls openat,statx"
	calls bare-emulate "$BARE" --emulate -- "$CALLS" --tsv $CALL_OPTS $EMU
	PINNED="--calls openat,openat-rel,statx,connect-nb"
	calls bare-1cpu taskset -c 0 "$BARE" -- "$CALLS" --tsv $CALL_OPTS $PINNED
	calls bare-emulate-1cpu taskset -c 0 "$BARE" --emulate -- "$CALLS" --tsv $CALL_OPTS $EMU
	calls moat-1cpu taskset -c 0 "$MOAT" run --policy "$POLICY" -- "$CALLS" --tsv $CALL_OPTS $PINNED
}

ALL_CALLS="openat openat-rel statx connect connect-nb exec"

echo
echo "== Per call: microseconds per call (median of runs), ratios =="
echo "   bare = moat's filter answered CONTINUE from a poll()+RECV loop with SYNC_WAKE_UP"
echo "   share = moat - bare: what moat's handler adds to the round trip"
printf '%-11s %9s %9s %9s %9s  %8s %8s %8s %9s %9s\n' call native bare moat strace \
	moat/nat moat/bare str/moat "share us" "moat p99"
for c in $ALL_CALLS; do
	n=$(val "$WORK/native.tsv" "$c" 2)
	b=$(val "$WORK/bare.tsv" "$c" 2)
	m=$(val "$WORK/moat.tsv" "$c" 2)
	s=$(val "$WORK/strace.tsv" "$c" 2)
	printf '%-11s %9s %9s %9s %9s  %8s %8s %8s %9s %9s\n' "$c" "$(us "$n")" "$(us "$b")" \
		"$(us "$m")" "$(us "$s")" "$(ratio "$m" "$n")" "$(ratio "$m" "$b")" \
		"$(ratio "$s" "$m")" "$(us "$(diff_ns "$m" "$b")")" \
		"$(us "$(val "$WORK/moat.tsv" "$c" 4)")"
done

echo
echo "== Tail: p99 / p50 of the per-iteration samples, worst single run =="
printf '%-11s %8s %8s %8s %8s %8s %8s\n' call native bare bare-thr moat strace moat-p50us
for c in $ALL_CALLS; do
	printf '%-11s %8s %8s %8s %8s %8s %8s\n' "$c" "$(val "$WORK/native.tsv" "$c" 5)" \
		"$(val "$WORK/bare.tsv" "$c" 5)" "$(val "$WORK/bare-thread.tsv" "$c" 5)" \
		"$(val "$WORK/moat.tsv" "$c" 5)" "$(val "$WORK/strace.tsv" "$c" 5)" \
		"$(us "$(val "$WORK/moat.tsv" "$c" 3)")"
done

echo
echo "== Loop design of the bare peer: microseconds per call (p99/p50 worst run) =="
printf '%-11s %16s %16s %16s %16s\n' call poll+sync thread+sync poll thread
for c in $ALL_CALLS; do
	line=$(printf '%-11s' "$c")
	for cfg in bare bare-thread bare-nosync bare-thread-nosync; do
		cell="$(us "$(val "$WORK/$cfg.tsv" "$c" 2)") ($(val "$WORK/$cfg.tsv" "$c" 5))"
		line="$line $(printf '%16s' "$cell")"
	done
	echo "$line"
done

echo
echo "== Where moat's share goes: microseconds per call =="
echo "   emul = the peer with --emulate: read the path, open + ADDFD (or statx + write back);"
echo "   it emulates absolute paths only: openat-rel and connect-nb have no emul column"
echo "   emulating = emul - bare; safety = moat - emul (O_PATH, readlink, reopen, policy)"
echo "   1cpu = everything pinned to CPU 0 (taskset -c 0): no cross-CPU wake-up possible"
printf '%-11s %5s %8s %8s %8s %10s %8s %9s\n' call cpus bare emul moat emulating safety moat/bare
for c in openat openat-rel statx connect-nb; do
	for sfx in "" -1cpu; do
		cpus=2
		[ -n "$sfx" ] && cpus=1
		b=$(val "$WORK/bare$sfx.tsv" "$c" 2)
		e=$(val "$WORK/bare-emulate$sfx.tsv" "$c" 2)
		m=$(val "$WORK/moat$sfx.tsv" "$c" 2)
		printf '%-11s %5s %8s %8s %8s %10s %8s %9s\n' "$c" "$cpus" \
			"$(us "$b")" "$(us "$e")" "$(us "$m")" "$(us "$(diff_ns "$e" "$b")")" \
			"$(us "$(diff_ns "$m" "$e")")" "$(ratio "$m" "$b")"
	done
done

echo
echo "== The system calls of moat's handlers, natively (bench_steps, ns per call) =="
(cd "$WORK" && "$STEPS" --iterations "$STEP_ITER") || echo "bench_steps failed"

# ---- 2. macro ----

make_repo() {
	[ -f "$REPO/.git/moat-bench-ok" ] && return 0
	echo "generating $REPO (10,000 files) ..." >&2
	rm -rf "$REPO"
	mkdir -p "$REPO"
	(
		cd "$REPO"
		a=0
		while [ $a -lt 10 ]; do
			b=0
			while [ $b -lt 10 ]; do
				mkdir -p "d$a/s$b"
				c=0
				while [ $c -lt 100 ]; do
					printf 'file %d %d %d\n' $a $b $c >"d$a/s$b/f$c.txt"
					c=$((c + 1))
				done
				b=$((b + 1))
			done
			a=$((a + 1))
		done
		git init -q
		git add -A
		git -c user.name=moat-bench -c user.email=bench@localhost commit -q -m "10,000 files"
		git status >/dev/null # the index's stat data, fresh
		touch .git/moat-bench-ok
	)
}

# quote ARGS...: the arguments as one shell-quoted command line (for hyperfine -N).
quote() {
	for a in "$@"; do
		printf "'%s' " "$(printf '%s' "$a" | sed "s/'/'\\\\''/g")"
	done
}

# median_ms RUNS CMD...: the median wall time of RUNS runs (one warm-up), in ms.
median_ms() {
	runs=$1
	shift
	if [ "$HAVE_HYPERFINE" -eq 1 ]; then
		hyperfine -N --style none --warmup 1 --runs "$runs" --export-json "$WORK/hf.json" \
			"$(quote "$@")" >/dev/null 2>"$WORK/hf.err" || {
			echo "-"
			return
		}
		sed -n 's/.*"median": *\([0-9.eE+-]*\).*/\1/p' "$WORK/hf.json" | head -1 |
			awk '{ printf "%.1f\n", $1 * 1000 }'
		return
	fi
	"$@" >/dev/null 2>&1 || true
	i=0
	: >"$WORK/times"
	while [ $i -lt "$runs" ]; do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1 || true
		t1=$(date +%s%N)
		echo $((t1 - t0)) >>"$WORK/times"
		i=$((i + 1))
	done
	sort -n "$WORK/times" | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f\n", m / 1e6 }'
}

# macro NAME CMD...: native, bare, moat and strace, from $REPO; results in $WORK/macro.
macro() {
	name=$1
	shift
	printf '  %-14s' "$name" >&2
	child_secs >"$WORK/c0"
	j0=$(cpu_jiffies) c0=$(cat "$WORK/c0") t0=$(date +%s%N)
	cd "$REPO"
	n=$(median_ms "$NATIVE_RUNS" "$@")
	b=$(median_ms "$MOAT_RUNS" "$BARE" -- "$@")
	m=$(median_ms "$MOAT_RUNS" "$MOAT" run --policy "$POLICY" -- "$@")
	s=-
	if [ "$HAVE_STRACE" -eq 1 ]; then
		s=$(median_ms "$STRACE_RUNS" strace -f -qq -o /dev/null "$@")
	fi
	cd "$WORK"
	printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$n" "$b" "$m" "$s" >>"$WORK/macro"
	foreign "$name" "$j0" "$c0" "$t0"
}

make_repo
echo "macro runs ($([ "$HAVE_HYPERFINE" -eq 1 ] && echo hyperfine || echo 'date +%s%N loop'):" \
	"native $NATIVE_RUNS, bare and moat $MOAT_RUNS, strace $STRACE_RUNS runs; medians):" >&2
: >"$WORK/macro"
macro "git status" git status
macro "find" find .
macro "python import" "$PYTHON" -c \
	'import json, email, http.client, asyncio, sqlite3, decimal, argparse, unittest'

echo
echo "== Macro: milliseconds (median), from $REPO; python is $PYTHON =="
echo "   str/bare: how far ahead of strace -f any notify supervisor could be (CONTINUE only)"
printf '%-14s %9s %9s %9s %9s  %8s %8s %8s %8s\n' workload native bare moat strace moat/nat \
	moat/bare str/moat str/bare
while IFS="$(printf '\t')" read -r name n b m s; do
	printf '%-14s %9s %9s %9s %9s  %8s %8s %8s %8s\n' "$name" "$n" "$b" "$m" "$s" \
		"$(ratio "$m" "$n")" "$(ratio "$m" "$b")" "$(ratio "$s" "$m")" "$(ratio "$s" "$b")"
done <"$WORK/macro"

# ---- 3. goals ----

verdict() { # verdict LABEL VALUE OP LIMIT DETAIL
	awk -v l="$1" -v v="$2" -v op="$3" -v lim="$4" -v d="$5" 'BEGIN {
		if (v == "-") { printf "  %-44s unknown (not measured)\n", l; exit }
		ok = op == "<=" ? v + 0 <= lim + 0 : v + 0 >= lim + 0
		printf "  %-44s %s: %s (goal %s %s)\n", l, ok ? "MET    " : "NOT MET", d, op, lim }'
}

echo
echo "== Goals of issue 3 =="
o_r=$(ratio "$(val "$WORK/moat.tsv" openat 2)" "$(val "$WORK/bare.tsv" openat 2)")
verdict "openat+close <= 2x bare CONTINUE" "$o_r" "<=" 2 \
	"moat $(us "$(val "$WORK/moat.tsv" openat 2)") us / bare $(us "$(val "$WORK/bare.tsv" openat 2)") us = ${o_r}x"
s_r=$(ratio "$(val "$WORK/moat.tsv" statx 2)" "$(val "$WORK/bare.tsv" statx 2)")
verdict "statx <= 1.6x bare CONTINUE" "$s_r" "<=" 1.6 \
	"moat $(us "$(val "$WORK/moat.tsv" statx 2)") us / bare $(us "$(val "$WORK/bare.tsv" statx 2)") us = ${s_r}x"
for c in openat statx connect exec; do
	w=$(val "$WORK/moat.tsv" "$c" 5)
	verdict "p99 <= 3x median on every run: $c" "$w" "<=" 3 "worst run p99/p50 = $w"
done
# A cross-CPU wake-up on every call keeps p99/p50 low and the median high: compare with 1 CPU.
for c in openat statx connect-nb; do
	x=$(ratio "$(val "$WORK/moat.tsv" "$c" 2)" "$(val "$WORK/moat-1cpu.tsv" "$c" 2)")
	verdict "no cross-CPU wake-ups: $c" "$x" "<=" 1.25 \
		"moat on 2 CPUs / pinned to 1 = ${x}x"
done
while IFS="$(printf '\t')" read -r name n b m s; do
	r=$(ratio "$s" "$m" "%.1f")
	verdict "$name >= 10x faster than strace -f" "$r" ">=" 10 \
		"strace $s ms / moat $m ms = ${r}x"
done <"$WORK/macro"
pt=$(ratio "$(val "$WORK/bare-thread.tsv" openat 2)" "$(val "$WORK/bare.tsv" openat 2)")
echo "  loop design: dedicated RECV thread / poll()+RECV = ${pt}x on openat" \
	"($(us "$(val "$WORK/bare-thread.tsv" openat 2)") vs $(us "$(val "$WORK/bare.tsv" openat 2)") us)"
ns=$(ratio "$(val "$WORK/bare-nosync.tsv" openat 2)" "$(val "$WORK/bare.tsv" openat 2)")
echo "  SYNC_WAKE_UP: bare openat without / with = ${ns}x" \
	"($(us "$(val "$WORK/bare-nosync.tsv" openat 2)") vs $(us "$(val "$WORK/bare.tsv" openat 2)") us)"
if [ "$LOAD_START" -gt 10 ] || [ -s "$WORK/loaded" ]; then
	echo "  NOTE: other processes were using the CPUs (${LOAD_START}% before the run; during:"
	echo "        $(cat "$WORK/loaded" 2>/dev/null)). Their time slices show up as"
	echo "        tails, and with a CPU taken the target and the supervisor share the other,"
	echo "        which hides the cross-CPU wake-ups of an idle machine. Rerun when it is idle."
fi
[ "$SECTION" = all ] && runner_section
echo
echo "total $(($(date +%s) - START)) s"
