#!/bin/sh
# moat run: lifetime. The exit status is CMD's (128+N for a signal death);
# stdout, stderr and stdin carry the same bytes as natively; SIGTERM, SIGHUP and
# SIGUSR1 sent to moat reach the agent; the agent cannot signal its supervisor
# (kill, tkill, tgkill, sigqueue, pidfd, /proc, a supervisor helper thread);
# when moat is killed the agent dies with it, and what the agent leaves behind
# does not outlive the session.
set -u
. "$(dirname "$0")/lib_run.sh"
ulimit -c 0 2>/dev/null || :

# Processes this test leaves behind on purpose (sleep 30 in the agent), killed
# at exit if still there: by pid, and only if the pid still runs "sleep 30".
STARTED=""
BG_MOAT=""
kill_sleeper() {
	if tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q '^sleep 30 $'; then
		kill -9 "$1" 2>/dev/null
	fi
}
CLEANUP='for p in $STARTED; do kill_sleeper "$p"; done
[ -z "$BG_MOAT" ] || kill -9 "$BG_MOAT" 2>/dev/null; '"$CLEANUP"

# bg_moat CMD...: moat run in the background, no wrapper: $MOAT_PID is moat itself.
bg_moat() {
	"$MOAT" run --policy "$POLICY" -- "$@" >"$T/bg.out" 2>"$T/bg.err" &
	MOAT_PID=$!
	BG_MOAT=$MOAT_PID
}

# bg_wait: waits for the background moat (at most 20 s); its status in $_rc.
bg_wait() {
	_n=200
	while kill -0 "$MOAT_PID" 2>/dev/null && [ "$_n" -gt 0 ]; do
		case $(cut -d' ' -f3 "/proc/$MOAT_PID/stat" 2>/dev/null) in Z) break ;; esac
		sleep 0.1
		_n=$((_n - 1))
	done
	if [ "$_n" -eq 0 ]; then
		kill -9 "$MOAT_PID"
	fi
	wait "$MOAT_PID"
	_rc=$?
	BG_MOAT=""
	_cmd="moat run (background) $*"
	cp "$T/bg.out" "$_out"
	cp "$T/bg.err" "$_err"
}

# --- exit status ---
for code in 0 1 7 255; do
	mrun sh -c "exit $code"
	expect_rc "$code"
done
mrun sh -c 'kill -KILL $$'
expect_rc 137
mrun sh -c 'kill -TERM $$'
expect_rc 143
mrun sh -c 'kill -SEGV $$'
expect_rc 139
mrun "$PROGS/probe" cat,a.txt
expect_rc 0

# --- the same bytes on stdout and stderr as natively ---
head -c 1048576 /dev/urandom >random.bin
# moat's own diagnostics ("moat: ..." lines before the agent starts) are not
# the agent's bytes: they are left out of the comparison, and only those.
strip_moat_lines() {
	_k=0
	_lines=$(wc -l <"$1")
	while [ "$_k" -lt "$_lines" ] && head -n $((_k + 1)) "$1" | tail -n 1 | grep -q '^moat: '; do
		_k=$((_k + 1))
	done
	tail -n +$((_k + 1)) "$1"
}
compare_native() {
	nrun "$@"
	_nrc=$_rc
	cp "$_out" "$T/native.out"
	cp "$_err" "$T/native.err"
	mrun "$@"
	expect_rc "$_nrc"
	expect_same_file "$T/native.out" "$_out" "stdout of '$*' differs from native"
	strip_moat_lines "$_err" >"$T/moat.err"
	expect_same_file "$T/native.err" "$T/moat.err" "stderr of '$*' differs from native"
}
compare_native sh -c 'printf "out\000bin\377\n"; printf "err line\n" >&2; printf tail; exit 3'
compare_native cat random.bin
compare_native sh -c 'cat random.bin; cat random.bin >&2'
if [ -n "$PY" ]; then
	compare_native "$PY" -c 'import sys
sys.stdout.buffer.write(bytes(range(256)) * 4096)
sys.stderr.buffer.write(bytes(range(255, -1, -1)) * 16)
sys.exit(9)'
fi
# stdin: the agent reads what moat was given.
timeout 60 "$MOAT" run --policy "$POLICY" -- cat <random.bin >"$T/stdin.out" 2>"$T/stdin.err"
_rc=$?
_cmd="moat run -- cat < random.bin"
expect_rc 0
expect_same_file random.bin "$T/stdin.out" "stdin did not reach the agent unchanged"

# --- signals sent to moat reach the agent ---
for sig in USR1 HUP TERM; do
	rm -f ready
	bg_moat sh -c 'trap "echo got-'$sig'; exit 3" '$sig'; : >ready; while :; do sleep 0.05; done'
	if wait_for ready; then
		kill -s "$sig" "$MOAT_PID"
	fi
	bg_wait "signal $sig"
	expect_rc 3
	expect_line "got-$sig"
done
# An agent that does not catch it dies of it, and moat says so.
rm -f ready
bg_moat sh -c ': >ready; exec sleep 30'
if wait_for ready; then
	sleep 0.2
	kill -TERM "$MOAT_PID"
fi
bg_wait "SIGTERM to an agent that does not catch it"
expect_rc 143

# --- on a terminal: Ctrl-C and a window size change reach the agent ---
if [ -n "$PY" ]; then
	cat >"$T/onpty.py" <<'PY'
import fcntl, os, pty, select, struct, sys, termios, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
buf = b""
def until(token, seconds=10):
    global buf
    end = time.time() + seconds
    while token not in buf and time.time() < end:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                data = os.read(fd, 4096)
            except OSError:
                break
            if not data:
                break
            buf += data
until(b"ready")
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 77, 0, 0))
until(b"winch 33 77")
os.write(fd, b"\x03")
until(b"got-int")
_, status = os.waitpid(pid, 0)
sys.stdout.write(buf.decode(errors="replace").replace("\r", ""))
print("status %d" % os.waitstatus_to_exitcode(status))
PY
	run timeout 60 "$PY" "$T/onpty.py" "$MOAT" run --policy "$POLICY" -- sh -c \
		'trap "echo winch \$(stty size)" WINCH; trap "echo got-int; exit 5" INT
		echo ready; while :; do sleep 0.05; done'
	expect_line "winch 33 77"
	expect_out "got-int"
	expect_line "status 5"
fi

# --- the agent cannot signal or otherwise reach its supervisor ---
mrun "$PROGS/refuse" kill_parent kill_parent_group kill_all tgkill_parent tkill_parent \
	rt_sigqueueinfo_parent pidfd_open_parent prlimit_parent setpriority_parent proc_parent
expect_rc 0
for name in kill_parent_0 kill_parent_KILL kill_parent_group kill_all tgkill_parent \
	tkill_parent rt_sigqueueinfo_parent pidfd_open_parent prlimit_parent setpriority_parent; do
	expect_line "$name: EPERM"
done
expect_line "proc_parent_open: EACCES"
# From a grandchild, which names the supervisor by its pid.
mrun sh -c '"$0" kill_pid=$PPID; echo "still here"' "$PROGS/refuse"
expect_rc 0
expect_line "kill_pid_0: EPERM"
expect_line "kill_pid_KILL: EPERM"
expect_line "still here"

# A helper thread of the supervisor (it opens a FIFO off its loop): its tid is
# as much the supervisor as the main thread's. The test hands the agent the
# tids, which an agent could guess (they are allocated in sequence).
rm -f fifo fifo.ready tids
bg_moat "$PROGS/refuse" fifo_hold="$T/repo/fifo" tkill_tids="$T/repo/tids" \
	fifo_release="$T/repo/fifo"
if wait_for fifo.ready; then
	: >tids.tmp
	for task in /proc/"$MOAT_PID"/task/*; do
		[ "${task##*/}" = "$MOAT_PID" ] || echo "${task##*/}" >>tids.tmp
	done
	mv tids.tmp tids
fi
bg_wait "tkill of the supervisor's helper threads"
expect_rc 0
expect_line "fifo_release: ok"
expect_out_not "tkill_supervisor_thread: ok"
if [ ! -s tids ]; then
	echo "note: the supervisor had no helper thread while the FIFO open was pending"
fi

# --- the supervisor killed from outside: the agent dies too ---
rm -f agent.pid bg.pid
bg_moat sh -c 'echo $$ >agent.pid; sleep 30 & echo $! >bg.pid; wait'
if wait_for bg.pid; then
	sleep 0.2
	AGENT=$(cat agent.pid)
	BG=$(cat bg.pid)
	STARTED="$STARTED $BG"
	kill -9 "$MOAT_PID"
	bg_wait "then kill -9 of moat"
	expect_rc 137
	expect_true "the agent (pid $AGENT) survived its supervisor" gone "$AGENT" 50
	if gone "$BG" 50; then _pass; else
		known_gap "the agent's child (pid $BG) survived a SIGKILL of the supervisor"
		kill -9 "$BG" 2>/dev/null
	fi
else
	_fail "the agent did not start"
fi

# --- what the agent leaves running when it exits goes too ---
rm -f left.pid setsid.pid
mrun sh -c 'sleep 30 & echo $! >left.pid; setsid sleep 30 & echo $! >setsid.pid'
expect_rc 0
if [ -s left.pid ] && [ -s setsid.pid ]; then
	LEFT=$(cat left.pid)
	SETSID=$(cat setsid.pid)
	STARTED="$STARTED $LEFT $SETSID"
	expect_true "a background child (pid $LEFT) outlived moat run" gone "$LEFT" 30
	expect_true "a background child in its own session (pid $SETSID) outlived moat run" \
		gone "$SETSID" 30
else
	_fail "the background children did not start"
fi

finish
