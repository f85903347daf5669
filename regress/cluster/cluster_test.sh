#! /usr/bin/env atf-sh
# Scaling out: three relayd nodes active at once behind an ECMP router,
# each announcing its service addresses by BGP (BIRD) while relayd says
# it can serve them, in network namespaces this test makes and deletes.
#
#   client 10.80.0.2, sources 10.80.0.10-73 --- 10.80.0.1 router
#   router 10.81.0.1 (bridge br0) --- node N 10.81.0.1N (N = 1, 2, 3)
#
# Every node has 10.82.0.1 and 10.82.0.2 on lo: relay www listens on
# the first (to a backend on 127.0.0.1:8080 that says the node's name),
# redirection svc on the second (source-hash over hosts h1-h4 at
# 10.83.0.1-4:8080, on the node's lo, each saying its name).  The
# router runs BIRD (plain ECMP, BFD) or relayd's router (a resilient
# nexthop group, check tcp on each node's relay port).

. "$(atf_get_srcdir)/../lib.sh"

CLUTOOL=$TOP/regress/tools/clutool.py
FAILOVER=$TOP/regress/tools/failover.py

require_cluster()
{
	require_netns
	command -v bird >/dev/null ||
	    atf_skip "no bird (make deps installs bird2)"
	[ -c /dev/net/tun ] || atf_skip "no /dev/net/tun: announce needs it"
}

cl_ns()
{
	ip netns add $1 || atf_fail "netns $1"
	echo $1 >>ns.list
	ip -n $1 link set lo up
}

# The namespaces and links; sets id, R, C and N1-N3.
cluster()
{
	id=$$
	R=clr$id C=clc$id N1=cla$id N2=clb$id N3=clcc$id
	for _ns in $R $C $N1 $N2 $N3; do
		cl_ns $_ns
	done
	ip netns exec $R sysctl -qw net.ipv4.ip_forward=1 \
	    net.ipv4.fib_multipath_hash_policy=1
	ip link add cc$id type veth peer name cr$id || atf_fail "veth"
	ip link set cc$id netns $C
	ip link set cr$id netns $R
	ip -n $C addr add 10.80.0.2/24 dev cc$id
	for _i in $(seq 10 73); do
		ip -n $C addr add 10.80.0.$_i/24 dev cc$id
	done
	ip -n $C link set cc$id up
	ip -n $C route add default via 10.80.0.1
	ip -n $R addr add 10.80.0.1/24 dev cr$id
	ip -n $R link set cr$id up
	ip -n $R link add br0 type bridge || atf_fail "bridge"
	ip -n $R addr add 10.81.0.1/24 dev br0
	ip -n $R link set br0 up
	for _n in 1 2 3; do
		eval _ns=\$N$_n
		ip link add cn$_n$id type veth peer name cb$_n$id ||
		    atf_fail "veth"
		ip link set cn$_n$id netns $_ns
		ip link set cb$_n$id netns $R
		ip -n $R link set cb$_n$id master br0 up
		ip -n $_ns addr add 10.81.0.1$_n/24 dev cn$_n$id
		ip -n $_ns link set cn$_n$id up
		ip -n $_ns route add default via 10.81.0.1
		ip -n $_ns addr add 10.82.0.1/32 dev lo
		ip -n $_ns addr add 10.82.0.2/32 dev lo
		for _h in 1 2 3 4; do
			ip -n $_ns addr add 10.83.0.$_h/32 dev lo
		done
		mkdir -p n$_n
		serve $_n 127.0.0.1 n$_n
		for _h in 1 2 3 4; do
			serve $_n 10.83.0.$_h h$_h
		done
	done
}

# serve N ADDR NAME: on node N, a server on ADDR port 8080 saying NAME
serve()
{
	eval _ns=\$N$1
	ip netns exec $_ns python3 "$CLUTOOL" backend $2 8080 $3 \
	    >/dev/null 2>&1 &
	echo $! >back-$1-$3.pid
	wait_for 10 ip netns exec $_ns sh -c "ss -ltn | grep -q $2:8080" ||
	    atf_fail "no server $3 on node $1"
}

# node_conf N [LISTEN]: node N's relayd.conf; LISTEN, a second address
# relay www listens on
node_conf()
{
	cat >n$1/relayd.conf <<CONF
prefork 1
interval 1
socket "$PWD/n$1/relayd.sock"
announce table 231
table <back> { 127.0.0.1 }
table <hosts> { 10.83.0.1 10.83.0.2 10.83.0.3 10.83.0.4 }
relay www {
	listen on 10.82.0.1 port 80
${2:+	listen on $2 port 80
}	forward to <back> port 8080 check tcp
	announce
}
redirect svc {
	listen on 10.82.0.2 port 80
	forward to <hosts> port 8080 mode source-hash "cluster" check tcp
	announce
}
CONF
}

# node_start N: relayd on node N, its routes announced
node_start()
{
	eval _ns=\$N$1
	rm -f n$1/relayd.sock
	ip netns exec $_ns "$RELAYD" -dv -f n$1/relayd.conf \
	    2>>n$1/relayd.log &
	echo $! >relayd-$1.pid
	wait_for 10 test -S n$1/relayd.sock || {
		cat n$1/relayd.log >&2; atf_fail "relayd on node $1"; }
	wait_for 10 grep -q "address 10.82.0.1 announced" n$1/relayd.log ||
	    atf_fail "node $1 announces nothing"
}

# bird_node N: BIRD on node N, exporting what relayd announces
bird_node()
{
	eval _ns=\$N$1
	cat >n$1/bird.conf <<CONF
router id 10.81.0.1$1;
protocol device { }
# relayd's announce: its routes in table 231, protocol 250
protocol kernel relayd4 {
	kernel table 231;
	learn;
	ipv4 { import where krt_source = 250; export none; };
}
protocol bfd {
	interface "cn*" { interval 100 ms; multiplier 3; };
}
protocol bgp edge {
	local 10.81.0.1$1 as 65001;
	neighbor 10.81.0.1 as 65000;
	bfd on;
	connect delay time 1;
	connect retry time 1;
	error wait time 1, 5;
	ipv4 { import none; export where proto = "relayd4"; next hop self; };
}
CONF
	ip netns exec $_ns bird -f -c n$1/bird.conf -s n$1/bird.ctl \
	    >/dev/null 2>&1 &
	echo $! >bird-$1.pid
}

# BIRD on the router: ECMP over the nodes that announce, BFD to each
edge_bird()
{
	mkdir -p r
	cat >r/bird.conf <<CONF
router id 10.81.0.1;
protocol device { }
protocol kernel {
	merge paths on;
	ipv4 { import none; export all; };
}
protocol bfd {
	interface "br0" { interval 100 ms; multiplier 3; };
}
template bgp node {
	local 10.81.0.1 as 65000;
	bfd on;
	connect delay time 1;
	connect retry time 1;
	error wait time 1, 5;
	ipv4 { import all; export none; };
}
protocol bgp n1 from node { neighbor 10.81.0.11 as 65001; }
protocol bgp n2 from node { neighbor 10.81.0.12 as 65001; }
protocol bgp n3 from node { neighbor 10.81.0.13 as 65001; }
CONF
	ip netns exec $R bird -f -c r/bird.conf -s r/bird.ctl \
	    >/dev/null 2>&1 &
	echo $! >bird-r.pid
}

# relayd's router on the router: the health-checked ECMP edge, each
# node checked through its relay (a hung relay process answers nothing);
# a node that comes back takes buckets idle for a second
edge_relayd()
{
	mkdir -p r
	cat >r/relayd.conf <<CONF
interval 1
socket "$PWD/r/relayd.sock"
table <nodes> { 10.81.0.11 10.81.0.12 10.81.0.13 }
router edge {
	route 10.82.0.1/32
	forward to <nodes> port 80 check send nothing expect "n*"
	buckets 128
	bucket-idle 1
}
CONF
	ip netns exec $R "$RELAYD" -dv -f r/relayd.conf 2>r/relayd.log &
	echo $! >relayd-r.pid
	wait_for 10 test -S r/relayd.sock || {
		cat r/relayd.log >&2; atf_fail "relayd on the router"; }
}

# gateways ADDR: how many nodes the router sends ADDR's flows to
gateways()
{
	_r=$(ip -n $R route show $1/32)
	case $_r in
	"")		echo 0 ;;
	*nhid*)		_g=$(ip -n $R nexthop show id \
			    "$(echo "$_r" | sed -n 's/.*nhid \([0-9]*\).*/\1/p')" |
			    sed -n 's/.*group \([0-9/]*\).*/\1/p')
			echo "$_g" | tr '/' '\n' | grep -c . ;;
	*nexthop*)	echo "$_r" | grep -c "nexthop via" ;;
	*)		echo 1 ;;
	esac
}

stopped()
{
	! running $1
}

is_gateways()
{
	[ "$(gateways $1)" -eq $2 ]
}

now_ms()
{
	echo $(($(date +%s%N) / 1000000))
}

# wait_gateways ADDR COUNT SECONDS: milliseconds it took, or fail
wait_gateways()
{
	_t0=$(now_ms)
	while ! is_gateways $1 $2; do
		[ $(($(now_ms) - _t0)) -lt $(($3 * 1000)) ] || atf_fail \
		    "$1: $(gateways $1) gateways, not $2, after $3 s"
		sleep 0.02
	done
	echo $(($(now_ms) - _t0))
}

# who ADDR N: "SOURCE NAME" from N client sources
who()
{
	ip netns exec $C python3 "$CLUTOOL" who $1 80 10.80.0.10 $2
}

# cluster_up EDGE [self]: the whole cluster, relay www on every node
# (self: also on the node's own address, for relayd's checks), EDGE
# (bird or relayd) sending 10.82.0.1's flows to all three
cluster_up()
{
	cluster
	for _n in 1 2 3; do
		node_conf $_n ${2:+10.81.0.1$_n}
		node_start $_n
	done
	if [ "$1" = bird ]; then
		edge_bird
		for _n in 1 2 3; do
			bird_node $_n
		done
	else
		edge_relayd
	fi
	wait_gateways 10.82.0.1 3 20 >/dev/null
}

# flows_start N: N flows to 10.82.0.1 held open; their nodes in ready
flows_start()
{
	rm -f ready go flows.out
	ip netns exec $C python3 "$CLUTOOL" flows 10.82.0.1 80 $1 \
	    10.80.0.10 64 ready go >flows.out &
	echo $! >flows.pid
	wait_for 20 test -f ready || atf_fail "the flows did not start"
}

# flows_end: every flow tried again; "NAME kept K cut C" in flows.out
flows_end()
{
	touch go
	wait_for 20 grep -q "^total" flows.out || atf_fail "flows did not end"
}

mono()
{
	python3 -c 'import time; print(time.monotonic())'
}

# probe_start: a client connecting to 10.82.0.1 every 50 ms
probe_start()
{
	ip netns exec $C python3 "$FAILOVER" probe 10.82.0.1 80 probe.out \
	    150 50 &
	echo $! >probe.pid
	wait_for 10 grep -q " ok " probe.out || atf_fail "no probe answered"
}

# failure EDGE F: node 1 fails (F), with 60 flows held and the probe
# running; it is withdrawn, new connections go to nodes 2 and 3; then
# it recovers and takes new flows again.  Says "F: withdrawn in MS ms,
# outage MS ms lost N, other nodes' flows cut C of T".
failure()
{
	flows_start 60
	grep -q "^n1 " ready || atf_fail "$2: no flow on node 1"
	since=$(mono)
	limit=1000
	case $2 in
	backends)
		# a check every second, so up to one interval more
		limit=1600
		kill "$(cat back-1-n1.pid)"
		;;
	sigterm)
		kill "$(cat relayd-1.pid)"
		;;
	sigkill)
		kill -9 "$(cat relayd-1.pid)"
		;;
	sigstop)
		p=$(ps -o pid=,args= --ppid "$(cat relayd-1.pid)" |
		    awk '/relayd: relay/ { print $1; exit }')
		[ -n "$p" ] || atf_fail "no relay process on node 1"
		echo $p >stopped
		kill -STOP $p
		;;
	link)
		ip -n $N1 link set cn1$id down
		;;
	esac
	# relayd's router finds it at its next check (interval 1)
	[ $1 = relayd ] && limit=1600
	ms=$(wait_gateways 10.82.0.1 2 5)
	[ "$ms" -le $limit ] ||
	    atf_fail "$2: withdrawn in $ms ms, more than $limit"
	# relayctl says so
	case $1$2 in
	birdbackends|birdsigstop)
		atf_check -o match:"^address 10\.82\.0\.1: withdrawn\$" \
		    "$RELAYCTL" -s "$PWD/n1/relayd.sock" status
		;;
	esac
	who 10.82.0.1 16 >after.out
	! grep -q -e " n1\$" -e " -\$" after.out ||
	    atf_fail "$2: $(tr '\n' ' ' <after.out)"
	flows_end
	grep -q "^n1 kept 0 cut [1-9]" flows.out ||
	    atf_fail "$2: node 1's flows: $(grep ^n1 flows.out)"
	cut=$(awk '$1 == "n2" || $1 == "n3" { c += $5; t += $3 + $5 }
	    END { print c + 0, "of", t + 0 }' flows.out)
	until=$(mono)
	echo "$2: withdrawn in $ms ms," \
	    "$(python3 "$FAILOVER" outage probe.out $since $until)," \
	    "other nodes' flows cut $cut"
	[ $1 = bird ] || [ "${cut%% *}" -eq 0 ] ||
	    atf_fail "$2: the resilient edge cut $cut flows of nodes 2 and 3"
	case $2 in
	backends)
		serve 1 127.0.0.1 n1
		;;
	sigterm|sigkill)
		wait_for 10 stopped "$(cat relayd-1.pid)"
		node_start 1
		;;
	sigstop)
		kill -CONT "$(cat stopped)"
		rm stopped
		;;
	link)
		# the link's routes went with it
		ip -n $N1 link set cn1$id up
		ip -n $N1 route replace default via 10.81.0.1
		;;
	esac
	wait_gateways 10.82.0.1 3 15 >/dev/null
	# relayd's router: once buckets have idled a second
	wait_for 10 back_on_n1 ||
	    atf_fail "$2: node 1 is back but takes no new flow"
}

back_on_n1()
{
	who 10.82.0.1 64 >back.out
	grep -q " n1\$" back.out
}

atf_test_case failures cleanup
failures_head()
{
	atf_set descr "three nodes behind BIRD's ECMP (plain multipath, BFD): flows spread over all; a reload withdraws nothing; a node whose backends are down, whose relayd stops, is killed or hangs, or whose link goes down is withdrawn (within 1 s, the backends within the check interval) and new connections go to the other two; back, it takes new flows again; outages and the other nodes' flows cut measured"
	atf_set require.user root
	atf_set timeout 180
}
failures_body()
{
	require_cluster
	cluster_up bird
	who 10.82.0.1 64 >spread.out
	for _n in n1 n2 n3; do
		grep -q " $_n\$" spread.out ||
		    atf_fail "no flow to $_n: $(awk '{print $2}' spread.out |
		    sort | uniq -c | tr '\n' ' ')"
	done
	# a reload withdraws nothing that stays up
	_l=$(($(wc -l <n1/relayd.log) + 1))
	atf_check -o ignore "$RELAYCTL" -s "$PWD/n1/relayd.sock" reload
	wait_for 10 sh -c "tail -n +$_l n1/relayd.log |
	    grep -q 'host 127.0.0.1, check tcp.*-> up'" ||
	    atf_fail "node 1: no check after the reload"
	! grep -q withdrawn n1/relayd.log || atf_fail "the reload withdrew"
	is_gateways 10.82.0.1 3 || atf_fail "the reload withdrew node 1"
	atf_check -o match:"^address 10\.82\.0\.1: announced\$" \
	    -o match:"^address 10\.82\.0\.2: announced\$" \
	    "$RELAYCTL" -s "$PWD/n1/relayd.sock" status
	atf_check -o match:'^relayd_announced\{address="10\.82\.0\.1"\} 1$' \
	    "$RELAYCTL" -s "$PWD/n1/relayd.sock" show metrics
	probe_start
	for f in backends sigterm sigkill sigstop link; do
		failure bird $f
	done
}
failures_cleanup()
{
	[ -f stopped ] && kill -CONT "$(cat stopped)" 2>/dev/null
	cleanup_ns
}

atf_test_case edge_resilient cleanup
edge_resilient_head()
{
	atf_set descr "relayd's router as the ECMP edge (a resilient nexthop group; each node checked through its relay): a node killed is withdrawn, and no established flow of the other two nodes is cut"
	atf_set require.user root
	atf_set timeout 180
}
edge_resilient_body()
{
	require_cluster
	cluster_up relayd self
	gid=$(ip -n $R route show 10.82.0.1/32 |
	    sed -n 's/.*nhid \([0-9]*\).*/\1/p')
	atf_check -o match:"type resilient buckets 128 idle_timer 1 " \
	    ip -n $R nexthop show id "$gid"
	probe_start
	# make bench: -v test_suites.relayd.cluster_edge_failures="..."
	for f in $(atf_config_get cluster_edge_failures sigkill); do
		failure relayd $f
	done
}
edge_resilient_cleanup()
{
	[ -f stopped ] && kill -CONT "$(cat stopped)" 2>/dev/null
	cleanup_ns
}

atf_test_case rdr_maglev cleanup
rdr_maglev_head()
{
	atf_set descr "a source-hash redirection announced by three nodes: when a host goes down, only its clients change host (Maglev); when a node is killed, its clients keep their hosts on the other two (the same table on every node)"
	atf_set require.user root
	atf_set timeout 120
}
rdr_maglev_body()
{
	require_cluster
	cluster_up bird
	wait_gateways 10.82.0.2 3 10 >/dev/null
	who 10.82.0.2 64 >before.out
	! grep -q " -\$" before.out || atf_fail "a client got no answer"
	for _n in 1 2 3; do
		kill "$(cat back-$_n-h2.pid)"
	done
	for _n in 1 2 3; do
		wait_for 10 grep -q "host 10.83.0.2, .* up -> down" \
		    n$_n/relayd.log || atf_fail "h2 not down on node $_n"
	done
	who 10.82.0.2 64 >lost.out
	! grep -q -e " h2\$" -e " -\$" lost.out ||
	    atf_fail "h2's clients: $(tr '\n' ' ' <lost.out)"
	moved=$(join before.out lost.out | awk '$2 != "h2" && $2 != $3' |
	    wc -l)
	echo "host loss: clients moved $(join before.out lost.out |
	    awk '$2 != $3' | wc -l) of 64, h2's $(grep -c ' h2$' before.out)"
	[ "$moved" -eq 0 ] || atf_fail "$moved clients of other hosts moved"
	kill -9 "$(cat relayd-1.pid)"
	wait_gateways 10.82.0.2 2 5 >/dev/null
	who 10.82.0.2 64 >failover.out
	moved=$(join lost.out failover.out | awk '$2 != $3' | wc -l)
	echo "node loss: clients moved $moved of 64"
	[ "$moved" -eq 0 ] ||
	    atf_fail "$moved clients changed host when node 1 went"
}
rdr_maglev_cleanup()
{
	cleanup_ns
}

atf_test_case announce_routes cleanup
announce_routes_head()
{
	atf_set descr "announce without BGP: a route to each address (IPv4 and IPv6) in the table of announce table, protocol 250, through relayd0, while every relay on it can serve; a table disabled withdraws, enabled announces again; a killed relayd leaves no route and no device"
	atf_set require.user root
	atf_set timeout 60
}
announce_routes_body()
{
	require_netns
	[ -c /dev/net/tun ] || atf_skip "no /dev/net/tun: announce needs it"
	N1=cla$$
	cl_ns $N1
	ip -n $N1 addr add 10.82.0.1/32 dev lo
	ip -n $N1 addr add fd82::1/128 dev lo nodad
	mkdir -p n1
	serve 1 127.0.0.1 n1
	serve 1 127.0.0.2 m1
	cat >n1/relayd.conf <<CONF
prefork 1
interval 1
socket "$PWD/n1/relayd.sock"
announce table 232
table <back> { 127.0.0.1 }
table <other> { 127.0.0.2 }
relay www {
	listen on 10.82.0.1 port 80
	listen on fd82::1 port 80
	forward to <back> port 8080 check tcp
	announce
}
# the same address: announced while both can serve
relay www2 {
	listen on 10.82.0.1 port 81
	forward to <other> port 8080 check tcp
	announce
}
CONF
	node_start 1
	wait_for 10 grep -q "address fd82::1 announced" n1/relayd.log ||
	    atf_fail "fd82::1 not announced"
	atf_check -o match:"^10\.82\.0\.1 dev relayd0 proto 250 scope link" \
	    ip -n $N1 route show table 232
	atf_check -o match:"^fd82::1 dev relayd0 proto 250" \
	    ip -n $N1 -6 route show table 232
	# one of the two relays on 10.82.0.1 cannot serve: withdrawn
	atf_check -o ignore "$RELAYCTL" -s "$PWD/n1/relayd.sock" \
	    table disable other
	wait_for 10 sh -c "! ip -n $N1 route show table 232 | grep -q ." ||
	    atf_fail "10.82.0.1 not withdrawn"
	atf_check -o match:"^fd82::1 dev relayd0" \
	    ip -n $N1 -6 route show table 232
	atf_check -o match:"^address 10\.82\.0\.1: withdrawn\$" \
	    -o match:"^address fd82::1: announced\$" \
	    "$RELAYCTL" -s "$PWD/n1/relayd.sock" status
	atf_check -o ignore "$RELAYCTL" -s "$PWD/n1/relayd.sock" \
	    table enable other
	wait_for 10 sh -c "ip -n $N1 route show table 232 | grep -q 10.82.0.1" ||
	    atf_fail "10.82.0.1 not announced again"
	# killed: the device goes, and its routes with it
	kill -9 "$(cat relayd-1.pid)"
	wait_for 10 sh -c "! ip -n $N1 link show relayd0" ||
	    atf_fail "relayd0 outlived relayd"
	atf_check -o empty ip -n $N1 route show table 232
	atf_check -o empty ip -n $N1 -6 route show table 232
}
announce_routes_cleanup()
{
	cleanup_ns
}

atf_init_test_cases()
{
	atf_add_test_case announce_routes
	atf_add_test_case failures
	atf_add_test_case edge_resilient
	atf_add_test_case rdr_maglev
}
