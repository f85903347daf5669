#! /usr/bin/env atf-sh
# High availability: relayd as one node of a pair, in network namespaces
# this test makes and deletes.

. "$(atf_get_srcdir)/../lib.sh"

# A namespace, its name in $N (and in ns.list for cleanup_ns), with a
# veth pair d0-d1 up and no address on it.
node_ns()
{
	N=ha$$
	ha_ns $N
	ip -n $N link add d0 type veth peer name d1 || atf_fail "veth"
	ip -n $N link set d0 up
	ip -n $N link set d1 up
}

# What 10.79.0.100 (or $1) port 80 echoes of "hello", from the node
hello()
{
	case ${1:-10.79.0.100} in
	*:*)	_a="TCP6:[$1]:80" ;;
	*)	_a="TCP4:${1:-10.79.0.100}:80" ;;
	esac
	echo hello | ip netns exec $N timeout 5 socat -t 2 - "$_a" 2>/dev/null
}

FAILOVER=$TOP/regress/tools/failover.py

# A LAN: a bridge in namespace $L joins the client $C (10.79.1.10) and
# the nodes $A (10.79.1.1, keepalived priority 250) and $B (10.79.1.2,
# 200); the shared address 10.79.1.100 is keepalived's.  Each node runs
# a backend on 127.0.0.1 port 8080 that says its name, relayd relaying
# 10.79.1.100 port 80 to it with "demote www", and keepalived tracking
# the demote file and, for a crash, relayctl status.
pair_ns()
{
	id=$$
	L=hal$id C=hac$id A=haa$id B=hab$id
	for _ns in $L $C $A $B; do
		ha_ns $_ns
	done
	lan_bridge br0
	lan_join br0 hc$id $C 10.79.1.10
	lan_join br0 ha$id $A 10.79.1.1
	lan_join br0 hb$id $B 10.79.1.2
}

# A namespace of the test's: in ns.list for cleanup_ns, loopback up
ha_ns()
{
	ip netns add $1 || atf_fail "netns $1"
	echo $1 >>ns.list
	ip -n $1 link set lo up
}

# lan_bridge BRIDGE: a LAN, as a bridge in $L
lan_bridge()
{
	ip -n $L link add $1 type bridge || atf_fail "bridge"
	ip -n $L link set $1 up
}

# lan_join BRIDGE IF NS ADDR...: NS on the LAN, by a veth IF with the
# addresses ADDR/24, its peer IFl on BRIDGE
lan_join()
{
	_br=$1 _if=$2 _ns=$3
	shift 3
	ip link add $_if type veth peer name ${_if}l || atf_fail "veth"
	ip link set ${_if}l netns $L
	ip -n $L link set ${_if}l master $_br up
	ip link set $_if netns $_ns
	for _a; do
		ip -n $_ns addr add $_a/24 dev $_if
	done
	ip -n $_ns link set $_if up
}

# backend NODE NAME: the node's server, on 127.0.0.1 port 8080
backend()
{
	ip netns exec $1 socat TCP4-LISTEN:8080,bind=127.0.0.1,fork,reuseaddr \
	    SYSTEM:"echo $2",nofork >/dev/null 2>&1 &
	echo $! >back-$2.pid
	wait_for 10 ip netns exec $1 sh -c "ss -ltn | grep -q 127.0.0.1:8080" ||
	    atf_fail "no backend on $2"
}

# node NODE NAME ADDR PEER PRIORITY IF [SERVERIF]: relayd and keepalived
# on it; relayd's configuration is NAME/relayd.conf if the caller wrote
# one.  With SERVERIF, keepalived holds the servers' gateway 10.79.2.254
# there too, and runs NAME/notify.sh on each change of state if there is
# one.
node()
{
	mkdir -p $2
	[ -f $2/relayd.conf ] || cat >$2/relayd.conf <<CONF
prefork 1
interval 1
socket "$PWD/$2/relayd.sock"
demote directory "$PWD/$2/demote"
table <back> { 127.0.0.1 }
relay www {
	listen on 10.79.1.100 port 80
	forward to <back> port 8080 check tcp demote www
}
CONF
	ip netns exec $1 "$RELAYD" -dv -f $2/relayd.conf 2>$2/relayd.log &
	echo $! >relayd-$2.pid
	wait_for 10 test -S $2/relayd.sock || {
		cat $2/relayd.log >&2; atf_fail "relayd on $2"; }
	_notify=
	[ -f $2/notify.sh ] && _notify="notify \"$PWD/$2/notify.sh\""
	cat >$2/keepalived.conf <<CONF
global_defs {
	script_user root
	enable_script_security
}
track_file relayd_www {
	file "$PWD/$2/demote/www"
	weight 0
}
vrrp_script relayd_alive {
	script "$RELAYCTL -s $PWD/$2/relayd.sock status"
	interval 1
	timeout 1
	fall 1
	rise 1
}
vrrp_instance www {
	state BACKUP
	interface $6
	virtual_router_id 79
	priority $5
	advert_int 1
	unicast_src_ip $3
	unicast_peer {
		$4
	}
	virtual_ipaddress {
		10.79.1.100/24 dev $6
		${7:+10.79.2.254/24 dev $7}
	}
	$_notify
	track_file {
		relayd_www
	}
	track_script {
		relayd_alive
	}
}
CONF
	ip netns exec $1 keepalived --vrrp --dont-fork --log-console \
	    --use-file "$PWD/$2/keepalived.conf" --pid "$PWD/$2/k.pid" \
	    --vrrp_pid "$PWD/$2/kv.pid" >$2/keepalived.log 2>&1 &
	echo $! >keepalived-$2.pid
}

# Who holds the shared address
holder()
{
	for _n in $A $B; do
		ip -n $_n addr show | grep -q 10.79.1.100 && echo $_n
	done
}

now()
{
	python3 -c 'import time; print(time.monotonic())'
}

# Wait until $1 holds the address and answers the client
wait_holder()
{
	wait_for 15 sh -c "ip -n $1 addr show | grep -q 10.79.1.100" || {
		tail -n 20 node-a/keepalived.log node-b/keepalived.log \
		    node-a/relayd.log >&2
		atf_fail "$1 does not hold the address: $(holder)"
	}
}

# The outage since $1, printed (the figures are the README's), and at
# most $2 ms: a bound that catches a failover that does not happen, not a
# measure of speed on a loaded machine
outage()
{
	_o=$(python3 "$FAILOVER" outage probe.out "$1") ||
	    atf_fail "no answer after the failover: $_o"
	echo "$3: $_o"
	_ms=$(echo "$_o" | awk '{ print $2 }')
	[ "$_ms" -le "$2" ] || atf_fail "$3: outage $_ms ms, above $2"
}

atf_test_case standby_without_address cleanup
standby_without_address_head()
{
	atf_set descr "a standby starts, and reloads, with listeners on shared addresses it does not hold yet (no sysctl), says so once, and serves them when they come; a port taken is still refused"
	atf_set require.user root
	atf_set timeout 60
}
standby_without_address_body()
{
	require_netns
	node_ns
	atf_check -o inline:"0\n" ip netns exec $N \
	    sysctl -n net.ipv4.ip_nonlocal_bind
	ip netns exec $N "$RTOOL" echo "$PWD/echo.port" 60 >echo.out 2>&1 &
	echo $! >echo.pid
	wait_for 10 test -s echo.port || atf_fail "no backend"
	cat >relayd.conf <<CONF
prefork 1
socket "$PWD/relayd.sock"
relay www {
	listen on 10.79.0.100 port 80
	forward to 127.0.0.1 port $(cat echo.port)
}
relay www6 {
	listen on fd79::100 port 80
	forward to 127.0.0.1 port $(cat echo.port)
}
dns protocol d {
}
relay dns {
	listen on 10.79.0.100 port 53
	protocol d
	forward to 127.0.0.1 port 5353
}
CONF
	: >relayd.log
	ip netns exec $N "$RELAYD" -dv -f relayd.conf 2>>relayd.log &
	echo $! >relayd.pid
	RELAYS=3 PREFORK=1 wait_started
	atf_check -o inline:"3\n" -x \
	    "grep -c 'is not on this host yet: listening for it' relayd.log"
	atf_check -o match:"relay www: 10.79.0.100 is not on this host yet" \
	    -o match:"relay www6: fd79::100 is not on this host yet" cat relayd.log
	# the address comes (a failover): served at once
	ip -n $N addr add 10.79.0.100/24 dev d0
	ip -n $N addr add fd79::100/64 dev d0 nodad
	[ "$(hello 10.79.0.100)" = hello ] || atf_fail "10.79.0.100 not served"
	[ "$(hello fd79::100)" = hello ] || atf_fail "fd79::100 not served"
	# a reload that adds a listener on another shared address
	sed "s/^relay www {/relay www2 {\n\tlisten on 10.79.0.101 port 80\n\tforward to 127.0.0.1 port $(cat echo.port)\n}\nrelay www {/" \
	    relayd.conf >two.conf
	atf_check -o empty ip netns exec $N "$RELAYCTL" -s "$PWD/relayd.sock" \
	    load "$PWD/two.conf"
	wait_log 10 "relay www2: 10.79.0.101 is not on this host yet" ||
	    atf_fail "no word of 10.79.0.101"
	# what is wrong still is: a port taken
	sed "s/^relay www {/relay taken {\n\tlisten on 127.0.0.1 port $(cat echo.port)\n\tforward to 127.0.0.1 port 9\n}\nrelay www {/" \
	    relayd.conf >taken.conf
	atf_check -s exit:1 -o match:"reload failed" ip netns exec $N \
	    "$RELAYCTL" -s "$PWD/relayd.sock" load "$PWD/taken.conf"
	atf_check -o match:"relay taken: cannot listen on 127.0.0.1 port .*Address already in use" \
	    cat relayd.log
	[ "$(hello 10.79.0.100)" = hello ] || atf_fail "no longer served"
}
standby_without_address_cleanup()
{
	cleanup_ns
}

atf_test_case demote_count cleanup
demote_count_head()
{
	atf_set descr "demote GROUP on Linux: a file per group keepalived tracks, 1 from the start until every table is checked, then the group's tables that are down; status and metrics show it; a clean stop demotes"
	atf_set require.user root
	atf_set timeout 60
}
demote_count_body()
{
	require_daemon
	eport=$(start_backend echo echo)
	closed=$(freeport)
	# a check that takes 2.5 s: the first round is over only then
	start_stalled_backend
	cat >relayd.conf <<CONF
prefork 1
interval 4
socket "$PWD/relayd.sock"
demote directory "$PWD/demote"
table <up> { 127.0.0.1 }
table <down> { 127.0.0.1 }
table <slow> { 127.0.0.1 }
relay r1 {
	listen on 127.0.0.1 port $(freeport)
	forward to <up> port $eport check tcp demote grp1
}
relay r2 {
	listen on 127.0.0.1 port $(freeport)
	forward to <down> port $closed check tcp demote grp2
}
relay r3 {
	listen on 127.0.0.1 port $(freeport)
	forward to <slow> port $bport timeout 2500 check tcp
}
CONF
	atf_check -e inline:"configuration OK\n" "$RELAYD" -n -f relayd.conf
	RELAYS=3 PREFORK=1 start_relayd
	# until <slow> is checked, every group is demoted (grp2's table
	# is down besides, or soon)
	atf_check -o inline:"1\n" cat demote/grp1
	[ "$(cat demote/grp2)" -ge 1 ] || atf_fail "grp2 not demoted"
	wait_for 10 sh -c "[ \"\$(cat demote/grp1)\" = 0 ]" ||
	    atf_fail "grp1 still $(cat demote/grp1)"
	atf_check -o inline:"1\n" cat demote/grp2
	atf_check -o match:"^demote group grp1: 0$" \
	    -o match:"^demote group grp2: 1 \(demoted\)$" \
	    "$RELAYCTL" -s relayd.sock status
	atf_check -o match:"^relayd_demote_count\{group=\"grp2\"\} 1$" \
	    "$RELAYCTL" -s relayd.sock show metrics
	# the backend of grp2 comes: no longer demoted
	"$RTOOL" echo "$PWD/late.port" 60 >/dev/null 2>&1 &
	echo $! >late.pid
	wait_for 10 test -s late.port || atf_fail "no backend"
	sed "s/port $closed check/port $(cat late.port) check/" relayd.conf \
	    >late.conf
	atf_check -o empty "$RELAYCTL" -s relayd.sock load "$PWD/late.conf"
	wait_for 10 sh -c "[ \"\$(cat demote/grp2)\" = 0 ]" ||
	    atf_fail "grp2 still $(cat demote/grp2)"
	wait_log 10 "demote group grp2: no longer demoted" ||
	    atf_fail "not logged"
	# a table disabled is down
	atf_check -o ignore "$RELAYCTL" -s relayd.sock table disable up
	wait_for 10 sh -c "[ \"\$(cat demote/grp1)\" = 1 ]" ||
	    atf_fail "grp1 not demoted: $(cat demote/grp1)"
	atf_check -o ignore "$RELAYCTL" -s relayd.sock table enable up
	wait_for 10 sh -c "[ \"\$(cat demote/grp1)\" = 0 ]" ||
	    atf_fail "grp1 still $(cat demote/grp1)"
	# a clean stop gives the address up
	kill "$(cat relayd.pid)"
	wait "$(cat relayd.pid)"
	rm -f relayd.pid
	atf_check -o inline:"1\n" cat demote/grp1
	atf_check -o inline:"1\n" cat demote/grp2
	atf_check -o empty find demote -name ".*"
}
demote_count_cleanup()
{
	stop_all
}

# relayd under a service manager with a watchdog, one relay process
# whose check demotes grp1; the notify socket's receiver lives $1 s.
start_watched()
{
	require_daemon
	eport=$(start_backend echo echo)
	lport=$(freeport)
	cat >relayd.conf <<CONF
prefork 1
interval 1
socket "$PWD/relayd.sock"
demote directory "$PWD/demote"
table <up> { 127.0.0.1 }
relay r1 {
	listen on 127.0.0.1 port $lport
	forward to <up> port $eport check tcp demote grp1
}
CONF
	python3 "$TOP/regress/tools/notifyrecv.py" "$PWD/notify.sock" \
	    notify.out "$lport" "$1" &
	echo $! >notify.pid
	wait_for 10 test -S notify.sock || atf_fail "no notify socket"
	NOTIFY_SOCKET=$PWD/notify.sock WATCHDOG_USEC=10000000 \
	    "$RELAYD" -dv -f relayd.conf 2>relayd.log &
	echo $! >relayd.pid
	PREFORK=1 wait_started
	wait_for 10 sh -c "[ \"\$(cat demote/grp1)\" = 0 ]" ||
	    atf_fail "grp1: $(cat demote/grp1)"
}

# stall PROC: its process (pid in $sp) stopped once the watchdog is fed:
# grp1 demoted, the parent says so.
stall()
{
	sp=$(pgrep -P "$(cat relayd.pid)" -f "relayd: $1")
	[ -n "$sp" ] || atf_fail "no $1 process"
	wait_for 10 sh -c "[ \$(grep -c WATCHDOG=1 notify.out) -ge 2 ]" ||
	    atf_fail "no watchdog: $(cat notify.out)"
	_st=$(now)
	kill -STOP "$sp"
	echo "$sp" >stopped
	wait_for 10 sh -c "[ \"\$(cat demote/grp1)\" = 1 ]" ||
	    atf_fail "grp1 not demoted with $1 stopped: $(cat demote/grp1)"
	_ms=$(python3 -c "print(int(($(now) - $_st) * 1000))")
	echo "$1 stopped: demoted after $_ms ms" >&2
	# a heartbeat every 200 ms, silent 0.6 s after the last one
	[ "$_ms" -le 1300 ] || atf_fail "$1 stopped: demoted after $_ms ms"
	atf_check -o match:"$1 process 0 \(pid $sp\) does not answer: demoting" \
	    cat relayd.log
	[ "$1" = pfe ] && return
	# status and metrics say what the file says, and who is silent
	atf_check -o match:"^not answering: $1 0 \(pid $sp\) \(every demote group demoted\)\$" \
	    -o match:"^demote group grp1: 1 \(demoted\)\$" \
	    "$RELAYCTL" -s relayd.sock status
	atf_check -o match:"^relayd_demote_count\{group=\"grp1\"\} 1\$" \
	    -o match:"^relayd_processes_not_answering 1\$" \
	    "$RELAYCTL" -s relayd.sock show metrics
}

# unstall PROC: no watchdog while it hangs; once it goes on, grp1 back to
# 0, the parent says so, the watchdog fed again.
unstall()
{
	_n=$(grep -c WATCHDOG=1 notify.out)
	sleep 2
	[ "$(grep -c WATCHDOG=1 notify.out)" -eq "$_n" ] ||
	    atf_fail "the watchdog was fed while $1 hung"
	kill -CONT "$sp"
	rm -f stopped
	wait_for 10 sh -c "[ \"\$(cat demote/grp1)\" = 0 ]" ||
	    atf_fail "grp1 still demoted after $1: $(cat demote/grp1)"
	wait_log 10 "$1 process 0 (pid $sp) answers again" ||
	    atf_fail "$1: not logged"
	wait_for 10 sh -c "[ \$(grep -c WATCHDOG=1 notify.out) -gt $_n ]" ||
	    atf_fail "no watchdog after $1"
}

atf_test_case relay_stalled cleanup
relay_stalled_head()
{
	atf_set descr "a relay process that stops answering (SIGSTOP) demotes every group within 1.3 s, shows in status and metrics (named, the demote count the file has), starves the service manager's watchdog, and all comes back when it answers"
	atf_set require.user root
	atf_set timeout 60
}
relay_stalled_body()
{
	start_watched 50
	stall relay
	atf_check -o match:"^relayd_relay_processes_stalled 1$" \
	    "$RELAYCTL" -s relayd.sock show metrics
	unstall relay
	atf_check -o not-match:"not answering" \
	    -o match:"^demote group grp1: 0\$" \
	    "$RELAYCTL" -s relayd.sock status
}
relay_stalled_cleanup()
{
	[ -f stopped ] && kill -CONT "$(cat stopped)" 2>/dev/null
	stop_all
}

atf_test_case failover cleanup
failover_head()
{
	atf_set descr "a keepalived pair: the address moves when the active node's backends are gone, when its relayd stops, is killed, or its relay process hangs, and comes back; each outage measured and bounded"
	atf_set require.user root
	atf_set timeout 300
}
failover_body()
{
	require_netns
	command -v keepalived >/dev/null ||
	    atf_skip "no keepalived (make deps installs it)"
	pair_ns
	backend $A node-a
	backend $B node-b
	node $A node-a 10.79.1.1 10.79.1.2 250 ha$id
	node $B node-b 10.79.1.2 10.79.1.1 200 hb$id
	wait_holder $A
	ip netns exec $C python3 "$FAILOVER" probe 10.79.1.100 80 probe.out \
	    240 &
	echo $! >probe.pid
	wait_for 10 grep -q "ok node-a" probe.out || atf_fail "node-a does not answer"

	# 1. node-a's backend is gone: its table down, its group demoted
	t=$(now)
	kill "$(cat back-node-a.pid)"
	wait_holder $B
	wait_for 10 sh -c "tail -1 probe.out | grep -q 'ok node-b'" ||
	    atf_fail "node-b does not answer"
	outage "$t" 5000 "backends gone"
	# back: node-a takes the address again
	t=$(now)
	backend $A node-a
	wait_holder $A
	wait_for 10 sh -c "tail -1 probe.out | grep -q 'ok node-a'" ||
	    atf_fail "no failback"
	outage "$t" 5000 "failback"

	# 2. relayd on node-a stopped on purpose (SIGTERM)
	t=$(now)
	kill "$(cat relayd-node-a.pid)"
	wait_holder $B
	wait_for 10 sh -c "tail -1 probe.out | grep -q 'ok node-b'" ||
	    atf_fail "node-b does not answer"
	outage "$t" 5000 "relayd stopped"
	node_restart
	# 3. relayd on node-a killed (SIGKILL): keepalived's relayctl status
	t=$(now)
	kill -9 "$(cat relayd-node-a.pid)"
	wait_holder $B
	wait_for 10 sh -c "tail -1 probe.out | grep -q 'ok node-b'" ||
	    atf_fail "node-b does not answer"
	outage "$t" 6000 "relayd killed"
	node_restart
	# 4. node-a's relay process hangs (SIGSTOP): the heartbeat
	rp=$(pgrep -P "$(cat relayd-node-a.pid)" -f "relayd: relay")
	echo "$rp" >stopped
	t=$(now)
	kill -STOP "$rp"
	wait_holder $B
	wait_for 10 sh -c "tail -1 probe.out | grep -q 'ok node-b'" ||
	    atf_fail "node-b does not answer"
	outage "$t" 8000 "relay process hung"
	kill -CONT "$rp"
	rm -f stopped
	wait_holder $A
}
failover_cleanup()
{
	[ -f stopped ] && kill -CONT "$(cat stopped)" 2>/dev/null
	cleanup_ns
}

# relayd on node-a again, after one of its ends; node-a takes the address
node_restart()
{
	wait_for 10 sh -c "! kill -0 $(cat relayd-node-a.pid) 2>/dev/null"
	ip netns exec $A "$RELAYD" -dv -f node-a/relayd.conf \
	    2>>node-a/relayd.log &
	echo $! >relayd-node-a.pid
	wait_holder $A
	wait_for 10 sh -c "tail -1 probe.out | grep -q 'ok node-a'" ||
	    atf_fail "node-a does not answer again"
}

# Redirected streams across a failover.  pair_ns, plus a servers' LAN: a
# bridge in $L joins the nodes (10.79.2.1, 10.79.2.2) and the namespace
# $S of two servers (10.79.2.11 and .12, port 8080: "sN", then an echo),
# whose gateway is 10.79.2.254, keepalived's on the active node.  The
# client has ten more addresses, 10.79.1.20 to 29.  Each node redirects
# 10.79.1.100 port 8080 to both servers, mode source-hash $1 (a key, or
# nothing for a random seed).
rdr_pair_ns()
{
	pair_ns
	S=has$id
	ha_ns $S
	lan_bridge br1
	lan_join br1 hsa$id $A 10.79.2.1
	lan_join br1 hsb$id $B 10.79.2.2
	lan_join br1 hss$id $S 10.79.2.11 10.79.2.12
	ip -n $S route add default via 10.79.2.254 || atf_fail "route"
	for _i in $(seq 20 29); do
		ip -n $C addr add 10.79.1.$_i/24 dev hc$id
	done
	for _ns in $A $B; do
		ip netns exec $_ns sysctl -qw net.ipv4.ip_forward=1 ||
		    atf_fail "forwarding"
	done
	for _s in 11 12; do
		ip netns exec $S socat \
		    TCP4-LISTEN:8080,bind=10.79.2.$_s,fork,reuseaddr \
		    SYSTEM:"echo s$_s; cat",nofork >/dev/null 2>&1 &
		echo $! >server-$_s.pid
	done
	wait_for 10 ip netns exec $S sh -c \
	    "ss -ltn | grep -q 10.79.2.11:8080 && ss -ltn | grep -q 10.79.2.12:8080" ||
	    atf_fail "no servers"
	for _n in node-a node-b; do
		mkdir -p $_n
		cat >$_n/relayd.conf <<CONF
interval 1
socket "$PWD/$_n/relayd.sock"
demote directory "$PWD/$_n/demote"
table <srv> { 10.79.2.11, 10.79.2.12 }
redirect www {
	listen on 10.79.1.100 port 8080
	forward to <srv> port 8080 mode source-hash $1 check tcp demote www
}
CONF
	done
}

# conntrackd NODE NAME ADDR PEER IF: conntrackd (FTFW over UDP to the
# peer) on the node, and the notify script keepalived runs: the README's.
# The peer's states go straight into the kernel (no external cache):
# keepalived runs the script after the address moved, and a stream's
# packet that came before the commit would be hashed anew.
conntrackd_node()
{
	mkdir -p $2
	cat >$2/conntrackd.conf <<CONF
Sync {
	Mode FTFW {
		DisableExternalCache on
	}
	UDP {
		IPv4_address $3
		IPv4_Destination_Address $4
		Port 3780
		Interface $5
		Checksum on
	}
}
General {
	HashSize 8192
	HashLimit 65536
	LogFile $PWD/$2/conntrackd.log
	Syslog off
	LockFile $PWD/$2/conntrackd.lock
	UNIX {
		Path $PWD/$2/conntrackd.ctl
	}
	NetlinkBufferSize 2097152
	NetlinkBufferSizeMaxGrowth 8388608
	Filter From Userspace {
		Protocol Accept {
			TCP
		}
		Address Ignore {
			IPv4_address 127.0.0.1
			IPv4_address $3
			IPv4_address 10.79.2.1
			IPv4_address 10.79.2.2
			IPv4_address 10.79.2.254
		}
	}
}
CONF
	cat >$2/notify.sh <<SCRIPT
#!/bin/sh
# keepalived: notify TYPE NAME STATE PRIORITY
c="conntrackd -C $PWD/$2/conntrackd.conf"
case \$3 in
MASTER)	\$c -c; \$c -f; \$c -R; \$c -B ;;
BACKUP)	\$c -t; \$c -n ;;
FAULT)	\$c -t ;;
esac
exit 0
SCRIPT
	chmod 755 $2/notify.sh
	ip netns exec $1 conntrackd -C $2/conntrackd.conf \
	    >$2/conntrackd.out 2>&1 &
	echo $! >conntrackd-$2.pid
	wait_for 10 test -S $2/conntrackd.ctl || {
		cat $2/conntrackd.out $2/conntrackd.log >&2
		atf_fail "conntrackd on $2"; }
}

# Ten streams through the pair; relayd on the active node stopped on
# purpose; all ten must go on through the other node.
rdr_streams()
{
	node $A node-a 10.79.1.1 10.79.1.2 250 ha$id hsa$id
	node $B node-b 10.79.1.2 10.79.1.1 200 hb$id hsb$id
	wait_holder $A
	for _n in $A $B; do
		# source-hash: the hosts are in the Maglev map
		wait_for 10 sh -c "ip netns exec $_n nft list table inet relayd_rdr | grep -q 10.79.2.12" ||
		    atf_fail "no rules on $_n"
	done
	ip netns exec $C python3 "$TOP/regress/tools/streams.py" 10.79.1.20 10 \
	    10.79.1.100 8080 "$PWD/streams.stop" 60 >streams.out 2>&1 &
	echo $! >streams.pid
	wait_for 10 grep -q connected streams.out ||
	    atf_fail "no streams: $(cat streams.out)"
	[ -z "$1" ] || wait_for 10 sh -c \
	    "[ \$(ip netns exec $B $1 2>/dev/null | grep -c 'dst=10.79.1.100 ') -ge 10 ]" ||
	    atf_fail "not synced: $(ip netns exec $B $1)"
	kill "$(cat relayd-node-a.pid)"
	wait_holder $B
	# two seconds of lines (20 rounds) through node-b
	_r=$(cat streams.stop.round)
	wait_for 20 sh -c "[ \$(cat streams.stop.round) -ge $((_r + 20)) ]" ||
	    atf_fail "the streams stopped: $(cat streams.out)"
	touch streams.stop
	wait "$(cat streams.pid)"
	rm -f streams.pid
	cat streams.out
	atf_check -o match:"^streams 10 ok 10 broken 0$" cat streams.out
}

atf_test_case rdr_streams_hash cleanup
rdr_streams_hash_head()
{
	atf_set descr "redirected streams survive a failover without state sync when both nodes hash with the same key: 10 of 10"
	atf_set require.user root
	atf_set timeout 120
}
rdr_streams_hash_body()
{
	require_netns
	command -v keepalived >/dev/null ||
	    atf_skip "no keepalived (make deps installs it)"
	rdr_pair_ns '"pair of nodes"'
	rdr_streams
	# the key spreads these ten clients over both servers
	atf_check -o match:"^s11 " -o match:"^s12 " cat streams.out
}
rdr_streams_hash_cleanup()
{
	cleanup_ns
}

atf_test_case rdr_streams_conntrackd cleanup
rdr_streams_conntrackd_head()
{
	atf_set descr "redirected streams survive a failover with conntrackd (FTFW) and keepalived's notify scripts, the hash seeds being different: 10 of 10"
	atf_set require.user root
	atf_set timeout 120
}
rdr_streams_conntrackd_body()
{
	require_netns
	command -v keepalived >/dev/null ||
	    atf_skip "no keepalived (make deps installs it)"
	command -v conntrackd >/dev/null && command -v conntrack >/dev/null ||
	    atf_skip "no conntrackd (make deps installs it)"
	rdr_pair_ns ""
	conntrackd_node $A node-a 10.79.1.1 10.79.1.2 ha$id
	conntrackd_node $B node-b 10.79.1.2 10.79.1.1 hb$id
	rdr_streams "conntrack -L -p tcp"
}
rdr_streams_conntrackd_cleanup()
{
	cleanup_ns
}

atf_test_case process_stalled cleanup
process_stalled_head()
{
	atf_set descr "hce, ca or pfe stopped (SIGSTOP): demotes every group within 1.3 s, named in status, and starves the watchdog, until it answers again"
	atf_set require.user root
	atf_set timeout 90
}
process_stalled_body()
{
	start_watched 80
	for proc in hce ca pfe; do
		stall "$proc"
		unstall "$proc"
		: >notify.out
	done
	# relaying went on through it all
	atf_check -o ignore "$RTOOL" client "$lport" 1 1000
}
process_stalled_cleanup()
{
	[ -f stopped ] && kill -CONT "$(cat stopped)" 2>/dev/null
	stop_all
}

atf_init_test_cases()
{
	atf_add_test_case failover
	atf_add_test_case rdr_streams_hash
	atf_add_test_case rdr_streams_conntrackd
	atf_add_test_case relay_stalled
	atf_add_test_case process_stalled
	atf_add_test_case demote_count
	atf_add_test_case standby_without_address
}
