#!/bin/sh
# moat run: connect, sendto, sendmsg and bind against net rules. A listener run
# natively (python3) offers an allowed and a denied TCP port, an allowed and a
# denied UDP port, an allowed and a denied unix socket and two abstract ones;
# the agent may reach only what the policy lists, a denied address fails with
# EACCES, and the listener must see nothing from a denied attempt. The same
# calls succeed natively, so every refusal is moat's.
set -u
. "$(dirname "$0")/lib_run.sh"

if [ -z "$PY" ]; then
	echo "skip: python3 is needed for the listener"
	exit 77
fi

ABS="moat-test-$$"
cat >"$T/listen.py" <<'PY'
import os, selectors, socket, sys
d, abstract = sys.argv[1], sys.argv[2]
sel = selectors.DefaultSelector()
socks = {}
def stream(name, family, addr):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.bind(addr)
    s.listen(16)
    socks[name] = s
def dgram(name):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    socks[name] = s
stream("tcp_ok", socket.AF_INET, ("127.0.0.1", 0))
stream("tcp_no", socket.AF_INET, ("127.0.0.1", 0))
stream("unix_ok", socket.AF_UNIX, d + "/ok.sock")
stream("unix_no", socket.AF_UNIX, d + "/no.sock")
stream("abs_ok", socket.AF_UNIX, "\0" + abstract + "-ok")
stream("abs_no", socket.AF_UNIX, "\0" + abstract + "-no")
dgram("udp_ok")
dgram("udp_no")
for name, s in socks.items():
    sel.register(s, selectors.EVENT_READ, name)
log = open(d + "/../events", "a", buffering=1)
with open(d + "/../ports.tmp", "w") as f:
    for name in ("tcp_ok", "tcp_no", "udp_ok", "udp_no"):
        f.write("%s=%d\n" % (name.upper(), socks[name].getsockname()[1]))
os.rename(d + "/../ports.tmp", d + "/../ports")
while True:
    for key, _ in sel.select():
        name, s = key.data, key.fileobj
        if s.type == socket.SOCK_DGRAM:
            data, _ = s.recvfrom(4096)
        else:
            c, _ = s.accept()
            c.settimeout(2)
            try:
                data = c.recv(100)
            except OSError:
                data = b"?"
            c.close()
        log.write("%s %s\n" % (name, data.decode(errors="replace").strip()))
PY
"$PY" "$T/listen.py" "$T/repo" "$ABS" &
LISTENER=$!
CLEANUP="kill $LISTENER 2>/dev/null; $CLEANUP"
if ! wait_for "$T/ports"; then
	echo "FAIL: the listener did not start"
	exit 1
fi
. "$T/ports"
ln -s no.sock no-link.sock

write_policy '"net": {"connect": ["tcp:127.0.0.1:'"$TCP_OK"'", "udp:127.0.0.1:'"$UDP_OK"'",
    "unix:'"$T"'/repo/ok.sock", "unix:@'"$ABS"'-ok"],
  "bind": ["unix:'"$T"'/repo/mine.sock"]}'

# expect_event LINE / expect_no_event NAME: what the listener logged.
expect_event() {
	_n=30
	while ! grep -qxF -- "$1" "$T/events" 2>/dev/null && [ "$_n" -gt 0 ]; do
		sleep 0.1
		_n=$((_n - 1))
	done
	if grep -qxF -- "$1" "$T/events" 2>/dev/null; then _pass; else _fail "the listener did not log: $1"; fi
}
expect_no_event() {
	if grep -q "^$1 " "$T/events" 2>/dev/null; then
		_fail "the listener got something on $1: $(grep "^$1 " "$T/events")"
	else
		_pass
	fi
}

# --- natively every address is reachable: the refusals below are moat's ---
nrun "$PROGS/probe" tcp,127.0.0.1,"$TCP_NO" udp,127.0.0.1,"$UDP_NO",native unix,no.sock
expect_line "tcp 127.0.0.1:$TCP_NO: ok"
expect_line "udp 127.0.0.1:$UDP_NO: ok"
expect_line "unix no.sock: ok"
expect_event "tcp_no probe"
expect_event "udp_no native"
expect_event "unix_no probe"
: >"$T/events"

# --- TCP ---
mrun "$PROGS/probe" tcp,127.0.0.1,"$TCP_OK" tcp,127.0.0.1,"$TCP_NO" tcp,127.0.0.2,"$TCP_OK" \
	tcp6,::1,"$TCP_OK" tcp6,::ffff:127.0.0.1,"$TCP_OK" tcp6,::ffff:127.0.0.1,"$TCP_NO" \
	tcp,10.255.255.1,443
expect_rc 0
expect_line "tcp 127.0.0.1:$TCP_OK: ok"
expect_line "tcp 127.0.0.1:$TCP_NO: EACCES"
expect_line "tcp 127.0.0.2:$TCP_OK: EACCES"
expect_line "tcp6 ::1:$TCP_OK: EACCES"
# An IPv4-mapped IPv6 address matches the IPv4 rule.
expect_line "tcp6 ::ffff:127.0.0.1:$TCP_OK: ok"
expect_line "tcp6 ::ffff:127.0.0.1:$TCP_NO: EACCES"
expect_line "tcp 10.255.255.1:443: EACCES"
expect_event "tcp_ok probe"
expect_no_event tcp_no

# --- UDP: sendto, sendmsg, connect + send ---
mrun "$PROGS/probe" udp,127.0.0.1,"$UDP_OK",sendto-ok udp,127.0.0.1,"$UDP_NO",sendto-no \
	udpmsg,127.0.0.1,"$UDP_OK",sendmsg-ok udpmsg,127.0.0.1,"$UDP_NO",sendmsg-no \
	udpconn,127.0.0.1,"$UDP_OK",conn-ok udpconn,127.0.0.1,"$UDP_NO",conn-no \
	udp,127.0.0.1,"$TCP_OK",wrong-protocol
expect_rc 0
expect_line "udp 127.0.0.1:$UDP_OK: ok"
expect_line "udp 127.0.0.1:$UDP_NO: EACCES"
expect_line "udpmsg 127.0.0.1:$UDP_OK: ok"
expect_line "udpmsg 127.0.0.1:$UDP_NO: EACCES"
expect_line "udpconn 127.0.0.1:$UDP_OK: ok"
expect_line "udpconn 127.0.0.1:$UDP_NO: EACCES"
# A tcp: rule does not allow UDP to the same port.
expect_line "udp 127.0.0.1:$TCP_OK: EACCES"
expect_event "udp_ok sendto-ok"
expect_event "udp_ok sendmsg-ok"
expect_event "udp_ok conn-ok"
expect_no_event udp_no

# --- unix sockets: by path (absolute, relative, through a symlink) and abstract ---
mrun "$PROGS/probe" unix,"$T/repo/ok.sock" unix,ok.sock unix,"$T/repo/no.sock" unix,no.sock \
	unix,no-link.sock abstract,"$ABS-ok" abstract,"$ABS-no" unixbind,mine.sock \
	unixbind,other.sock unixbind,"$T/outside/x.sock"
expect_rc 0
expect_line "unix $T/repo/ok.sock: ok"
expect_line "unix ok.sock: ok"
expect_line "unix $T/repo/no.sock: EACCES"
expect_line "unix no.sock: EACCES"
expect_line "unix no-link.sock: EACCES"
expect_line "abstract $ABS-ok: ok"
expect_line "abstract $ABS-no: EACCES"
expect_line "unixbind mine.sock: ok"
expect_line "unixbind other.sock: EACCES"
expect_line "unixbind $T/outside/x.sock: EACCES"
expect_true "the allowed bind did not create mine.sock" test -S mine.sock
expect_true "a refused bind created other.sock" test ! -e other.sock
expect_true "a refused bind created outside/x.sock" test ! -e "$T/outside/x.sock"
expect_event "abs_ok probe"
expect_no_event unix_no
expect_no_event abs_no
expect_true "the allowed unix connects were not both seen" \
	test "$(grep -c '^unix_ok probe$' "$T/events")" -eq 2

# --- python3 as a client ---
: >"$T/events"
mrun "$PY" -c 'import socket, sys
ok, no = int(sys.argv[1]), int(sys.argv[2])
c = socket.create_connection(("127.0.0.1", ok)); c.sendall(b"python\n"); c.close()
print("allowed connected")
try:
    socket.create_connection(("127.0.0.1", no), timeout=5)
    print("denied connected")
except PermissionError:
    print("denied PermissionError")' "$TCP_OK" "$TCP_NO"
expect_rc 0
expect_line "allowed connected"
expect_line "denied PermissionError"
expect_event "tcp_ok python"
expect_no_event tcp_no

finish
