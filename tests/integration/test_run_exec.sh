#!/bin/sh
# moat run: execs. vfork + exec, fork + exec, posix_spawn, execveat, fexecve and
# an exec from a second thread run an allowed binary exactly as natively (same
# output, same status); a denied binary fails with EACCES however it is
# reached (directly, through a symlink, as a #! interpreter); a missing one
# with ENOENT, as natively. exec.rules deny by argv. The agent itself: a denied
# CMD exits 126, a missing one 127.
set -u
. "$(dirname "$0")/lib_run.sh"

cp /bin/true "$T/ro/tool"
cp /bin/true secret/tool
cp /bin/true "$T/outside/tool"
cp /bin/true tool-in-cwd
ln -s secret/tool tool-link
printf '#!/bin/sh\necho "script ran $1"\n' >ok.sh
printf '#!%s\n' "$T/outside/tool" >bad-interp.sh
chmod +x ok.sh bad-interp.sh
write_policy '"exec": {"default": "allow", "rules": [
    {"path": "'"$T"'/repo/tool-in-cwd", "argv": ["--forbidden*"], "action": "deny"}]}'
# write_policy appended a second "exec" key: keep the last one only.
sed '/"exec": {"default": "allow"},$/d' "$POLICY" >"$T/p" && mv "$T/p" "$POLICY"

HOWS="vfork fork posix_spawn execveat fexecve"

# --- an allowed binary: the same bytes and status as natively ---
for how in $HOWS; do
	nrun "$PROGS/spawn" "$how" /bin/echo "hi from $how"
	save "native.$how"
	mrun "$PROGS/spawn" "$how" /bin/echo "hi from $how"
	expect_rc 0
	save "moat.$how"
	expect_same_file "$T/native.$how" "$T/moat.$how" "$how + exec of /bin/echo differs from native"
	expect_line "hi from $how"
	expect_line "$how: exit 0"
done
# A second thread execs: the whole process becomes the new program. (A short
# timeout: a supervisor that loses track of such an exec hangs here.)
RUN_TIMEOUT=10
mrun "$PROGS/spawn" thread /bin/echo "hi from a thread"
RUN_TIMEOUT=60
expect_rc 0
expect_line "hi from a thread"
# Read-only and cwd binaries may be executed; exit statuses come through.
mrun "$PROGS/spawn" fork "$T/ro/tool"
expect_line "fork: exit 0"
mrun "$PROGS/spawn" vfork "$T/repo/tool-in-cwd"
expect_line "vfork: exit 0"
mrun "$PROGS/spawn" posix_spawn /bin/sh -c "exit 3"
expect_line "posix_spawn: exit 3"
mrun "$PROGS/spawn" fork "$T/repo/ok.sh" arg
expect_line "script ran arg"
expect_line "fork: exit 0"

# --- denied binaries: EACCES, however spawned; nothing runs ---
for how in vfork fork posix_spawn fexecve; do
	for bin in "$T/repo/secret/tool" "$T/outside/tool" "$T/repo/tool-link"; do
		mrun "$PROGS/spawn" "$how" "$bin"
		expect_rc 0
		expect_line "$how: errno EACCES"
	done
done
# execveat needs an O_PATH fd; a denied binary cannot be opened O_PATH (ENOENT, stat).
mrun "$PROGS/spawn" execveat "$T/outside/tool"
expect_out_not "execveat: exit"
# A #! script whose interpreter is denied.
mrun "$PROGS/spawn" fork "$T/repo/bad-interp.sh"
expect_line "fork: errno EACCES"

# --- errors that are the kernel's: the same errno as natively ---
for bin in "$T/repo/missing" "$T/repo/a.txt" "$T/repo/sub"; do
	for how in vfork fork posix_spawn; do
		nrun "$PROGS/spawn" "$how" "$bin"
		save native.err
		mrun "$PROGS/spawn" "$how" "$bin"
		save moat.err
		expect_same_file "$T/native.err" "$T/moat.err" "$how of $bin: errno differs from native"
	done
done

# --- exec.rules: a deny rule with an argv pattern ---
mrun "$PROGS/spawn" fork "$T/repo/tool-in-cwd" --forbidden-flag
expect_line "fork: errno EACCES"
mrun "$PROGS/spawn" fork "$T/repo/tool-in-cwd" --allowed
expect_line "fork: exit 0"

# --- shells and python spawning children ---
mrun sh -c 'echo piped | tr a-z A-Z; (exit 4); echo "sub $?"; "$0"; echo "denied $?"' \
	"$T/outside/tool"
expect_line "PIPED"
expect_line "sub 4"
expect_line "denied 126"
expect_err "Permission denied"
if [ -n "$PY" ]; then
	mrun "$PY" -c 'import subprocess, sys
print(subprocess.run(["/bin/echo", "from child"], capture_output=True).stdout.decode().strip())
print("rc", subprocess.run(["/bin/sh", "-c", "exit 5"]).returncode)
try:
    subprocess.run([sys.argv[1]])
    print("denied binary ran")
except PermissionError:
    print("PermissionError")
try:
    subprocess.run([sys.argv[2]])
except FileNotFoundError:
    print("FileNotFoundError")' "$T/outside/tool" "$T/repo/no-such-tool"
	expect_rc 0
	expect_line "from child"
	expect_line "rc 5"
	expect_line "PermissionError"
	expect_line "FileNotFoundError"
fi

# --- the agent's own exec ---
mrun "$T/outside/tool"
expect_rc 126
expect_err "Permission denied"
mrun moat-no-such-command
expect_rc 127
mrun "$T/ro/tool"
expect_rc 0

finish
