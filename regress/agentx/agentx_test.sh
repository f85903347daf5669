#! /usr/bin/env atf-sh
# agentx: relayd as an AgentX subagent of a real net-snmp snmpd, which
# listens on 127.0.0.1 and on an AgentX socket in the test's directory;
# snmpwalk reads the OPENBSD-RELAYD-MIB objects (relaydInfo,
# 1.3.6.1.4.1.30155.3.2) through it.

. "$(atf_get_srcdir)/../lib.sh"

RELAYDINFO=.1.3.6.1.4.1.30155.3.2

require_snmpd()
{
	require_daemon
	command -v snmpd >/dev/null || atf_skip "no snmpd (make deps installs it)"
	command -v snmpwalk >/dev/null || atf_skip "no snmpwalk (make deps installs snmp)"
}

start_snmpd()
{
	[ -n "${sport:-}" ] || sport=$(freeport)
	cat >snmpd.conf <<CONF
master agentx
agentXSocket $PWD/master
agentXPerms 0660 0750
rocommunity public 127.0.0.1
CONF
	snmpd -f -Lf snmpd.log -C -c "$PWD/snmpd.conf" -p "$PWD/snmpd.pidfile" \
	    udp:127.0.0.1:$sport &
	echo $! >snmpd.pid
	wait_for 10 test -S master || atf_fail "snmpd did not start"
}

walk()
{
	snmpwalk -v2c -c public -On -t 2 -r 1 127.0.0.1:$sport "$RELAYDINFO" 2>&1
}

setup_relayd()
{
	port=$(freeport)
	bport=$(start_backend back echo)
	cat >relayd.conf <<CONF
socket "$PWD/relayd.sock"
interval 1
agentx path "$PWD/master"
table <webhosts> { 127.0.0.1, 127.0.0.2 }
relay "www" {
	listen on 127.0.0.1 port $port
	forward to <webhosts> port $bport check tcp
}
CONF
	start_relayd
	wait_log 10 "agentx: registered with the master" ||
	    atf_fail "no agentx session: $(cat relayd.log)"
}

atf_test_case snmpwalk cleanup
snmpwalk_head()
{
	atf_set descr "snmpwalk through net-snmp's snmpd shows the relays, tables and hosts of OPENBSD-RELAYD-MIB"
	atf_set require.user root
	atf_set timeout 60
}
snmpwalk_body()
{
	require_snmpd
	start_snmpd
	setup_relayd
	# a session, so that the relay's count moves
	wait_for 10 sh -c "'$RELAYCTL' -s '$PWD/relayd.sock' show hosts | grep -q '127.0.0.1 .*up'" ||
	    atf_fail "no host up"
	"$RTOOL" client "$port" 1 100 5 >/dev/null 2>&1
	walk >walk1
	# relays: index, status, name
	atf_check -o match:"^$RELAYDINFO.2.1.1.1 = INTEGER: 1$" cat walk1
	atf_check -o match:"^$RELAYDINFO.2.1.3.1 = STRING: \"www\"$" cat walk1
	# hosts: names, addresses, status (0 up, 2 down), checks
	atf_check -o match:"^$RELAYDINFO.5.1.4.1 = STRING: \"127.0.0.1\"$" cat walk1
	atf_check -o match:"^$RELAYDINFO.5.1.4.2 = STRING: \"127.0.0.2\"$" cat walk1
	atf_check -o match:"^$RELAYDINFO.5.1.5.1 = Hex-STRING: 7F 00 00 01 $" cat walk1
	atf_check -o match:"^$RELAYDINFO.5.1.7.1 = INTEGER: 0$" cat walk1
	atf_check -o match:"^$RELAYDINFO.5.1.8.1 = Counter64: [1-9]" cat walk1
	# tables: name and status
	atf_check -o match:"^$RELAYDINFO.7.1.2.1 = STRING: \"webhosts:$bport\"$" cat walk1
	atf_check -o match:"^$RELAYDINFO.7.1.3.1 = INTEGER: 0$" cat walk1
	# a single get, and nothing past the end of the subtree
	atf_check -o inline:"$RELAYDINFO.2.1.3.1 = STRING: \"www\"\n" \
	    snmpget -v2c -c public -On 127.0.0.1:$sport $RELAYDINFO.2.1.3.1
	atf_check -o match:"No Such" \
	    snmpget -v2c -c public -On 127.0.0.1:$sport $RELAYDINFO.2.1.3.99
	# the host that goes down says so
	"$RELAYCTL" -s relayd.sock host disable 127.0.0.2 >/dev/null
	walk >walk2
	atf_check -o match:"^$RELAYDINFO.5.1.7.2 = INTEGER: 1$" cat walk2
}
snmpwalk_cleanup()
{
	stop_all
}

atf_test_case master_restart cleanup
master_restart_head()
{
	atf_set descr "a master agent that goes and comes back gets relayd's registration again"
	atf_set require.user root
	atf_set timeout 60
}
master_restart_body()
{
	require_snmpd
	start_snmpd
	setup_relayd
	walk >w
	atf_check -o match:"STRING: \"www\"" cat w
	kill "$(cat snmpd.pid)"
	wait_log 10 "agentx: session closed" || atf_fail "no close"
	rm -f snmpd.pid master
	start_snmpd
	wait_for 20 sh -c "[ \$(grep -c 'agentx: registered with the master' relayd.log) -ge 2 ]" ||
	    atf_fail "no new registration: $(cat relayd.log)"
	walk >w
	atf_check -o match:"STRING: \"www\"" cat w
	# relayd still runs
	atf_check -o match:"relay" "$RELAYCTL" -s relayd.sock show summary
}
master_restart_cleanup()
{
	stop_all
}

atf_test_case bad_master cleanup
bad_master_head()
{
	atf_set descr "a master agent socket that talks garbage closes the session, pfe lives"
	atf_set require.user root
	atf_set timeout 60
}
bad_master_body()
{
	require_daemon
	command -v python3 >/dev/null || atf_skip "no python3"
	python3 - "$PWD/master" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(4)
for i in range(3):
    c, _ = s.accept()
    c.recv(4096)
    # a header that claims a huge, odd payload, then junk
    c.sendall(bytes([1, 18, 0x10, 0]) + b"\0" * 12 + b"\x7f\xff\xff\xf1" + os.urandom(64))
    c.close()
PY
	echo $! >fake.pid
	wait_for 10 test -S master || atf_fail "no fake master"
	port=$(freeport)
	cat >relayd.conf <<CONF
socket "$PWD/relayd.sock"
agentx path "$PWD/master"
relay "www" {
	listen on 127.0.0.1 port $port
	forward to 127.0.0.1 port 9
}
CONF
	start_relayd
	wait_log 10 "agentx: session closed" || atf_fail "$(cat relayd.log)"
	atf_check -o match:"relay" "$RELAYCTL" -s relayd.sock show summary
	atf_check -s exit:1 grep -q "lost child" relayd.log
}
bad_master_cleanup()
{
	stop_all
}

atf_test_case master_not_reading cleanup
master_not_reading_head()
{
	atf_set descr "a master that sends GetBulk after GetBulk and never reads the answers: pfe closes the session past its bound, logged once, and does not grow"
	atf_set require.user root
	atf_set timeout 60
}
master_not_reading_body()
{
	require_daemon
	command -v python3 >/dev/null || atf_skip "no python3"
	python3 - "$PWD/master" >master.out 2>&1 <<'PY' &
import socket, struct, sys, time

def pdu(t, sid, pid, payload, flags=0x10):
    return struct.pack("!BBBBIIII", 1, t, flags, 0, sid, 0, pid,
                       len(payload)) + payload

def read_pdu(c):
    h = b""
    while len(h) < 20:
        h += c.recv(20 - len(h))
    n = struct.unpack("!I", h[16:20])[0]
    b = b""
    while len(b) < n:
        b += c.recv(n - len(b))
    return h[1], struct.unpack("!I", h[12:16])[0], b

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(4)
c, _ = s.accept()
t, pid, _ = read_pdu(c)                 # Open
c.sendall(pdu(18, 7, pid, struct.pack("!IHH", 0, 0, 0)))
while True:                             # Register(s)
    t, pid, _ = read_pdu(c)
    c.sendall(pdu(18, 7, pid, struct.pack("!IHH", 0, 0, 0)))
    if t == 3:
        break
# relaydInfo, 1.3.6.1.4.1.30155.3.2: prefix 4, then 1.30155.3.2
start = struct.pack("!BBBB", 4, 4, 0, 0) + struct.pack("!IIII", 1, 30155, 3, 2)
end = struct.pack("!BBBB", 0, 0, 0, 0)
bulk = pdu(7, 7, 0, struct.pack("!HH", 0, 500) + start + end)
c.setblocking(False)
sent = 0
deadline = time.time() + 20
while time.time() < deadline:
    try:
        c.send(bulk)
        sent += 1
    except BlockingIOError:
        time.sleep(0.01)
    except OSError:
        break
print("sent", sent, flush=True)
time.sleep(30)
PY
	echo $! >fake.pid
	wait_for 10 test -S master || atf_fail "no fake master"
	port=$(freeport)
	cat >relayd.conf <<CONF
socket "$PWD/relayd.sock"
agentx path "$PWD/master"
table <webhosts> { 127.0.0.1, 127.0.0.2 }
relay "www" {
	listen on 127.0.0.1 port $port
	forward to <webhosts> port 9
}
CONF
	start_relayd
	pfe=$(pgrep -P "$(cat relayd.pid)" -f "relayd: pfe")
	before=$(rss_kib "$pfe")
	wait_log 30 "agentx: session closed: the master does not read its answers" ||
	    atf_fail "the session was not closed"
	after=$(rss_kib "$pfe")
	echo "pfe: $before KiB before, $after KiB after" >&2
	[ "$after" -lt $((before + 32768)) ] ||
	    atf_fail "pfe grew from $before to $after KiB"
	atf_check -o inline:"1\n" grep -c "does not read its answers" relayd.log
	atf_check -o match:"www" "$RELAYCTL" -s relayd.sock show summary
	atf_check -s exit:1 grep -q "lost child" relayd.log
}
master_not_reading_cleanup()
{
	stop_all
}

atf_test_case master_queue_full cleanup
master_queue_full_head()
{
	atf_set descr "a master whose listen queue is full never blocks the parent: relayctl reload answers at once, pfe asks again later"
	atf_set require.user root
	atf_set timeout 60
}
master_queue_full_body()
{
	require_daemon
	command -v python3 >/dev/null || atf_skip "no python3"
	# a listener that never accepts, its queue filled
	python3 - "$PWD/master" >master.out 2>&1 <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(0)
held = []
for i in range(64):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.setblocking(False)
    try:
        c.connect(sys.argv[1])
        held.append(c)
    except BlockingIOError:
        c.close()
        break
print("full after", len(held), flush=True)
time.sleep(60)
PY
	echo $! >fake.pid
	wait_for 10 grep -q "full after" master.out || atf_fail "no fake master"
	port=$(freeport)
	cat >relayd.conf <<CONF
socket "$PWD/relayd.sock"
agentx path "$PWD/master"
relay "www" {
	listen on 127.0.0.1 port $port
	forward to 127.0.0.1 port 9
}
CONF
	start_relayd
	for i in 1 2 3; do
		start=$(date +%s%N)
		atf_check "$RELAYCTL" -s relayd.sock reload
		ms=$((($(date +%s%N) - start) / 1000000))
		echo "reload $i: $ms ms" >&2
		[ "$ms" -lt 2000 ] || atf_fail "reload $i took $ms ms"
	done
	atf_check -o match:"www" "$RELAYCTL" -s relayd.sock show summary
	atf_check -s exit:1 grep -q "agentx: registered" relayd.log
}
master_queue_full_cleanup()
{
	stop_all
}

atf_init_test_cases()
{
	atf_add_test_case snmpwalk
	atf_add_test_case master_restart
	atf_add_test_case bad_master
	atf_add_test_case master_not_reading
	atf_add_test_case master_queue_full
}
