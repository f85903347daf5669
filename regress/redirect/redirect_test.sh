#! /usr/bin/env atf-sh
# Redirections (nftables) and routers (rtnetlink) in network namespaces
# this test makes: a client, the relayd host and three servers (one
# namespace, one address each), joined by two veth pairs.  The cleanup
# deletes the namespaces, and with them every table and route.
#
#   client 10.78.1.2 fd78:1::2 --- 10.78.1.1 fd78:1::1 relayd host
#   relayd 10.78.2.1 fd78:2::1 --- 10.78.2.11-13 fd78:2::11-13 servers
#
# The virtual addresses 10.78.9.9 and fd78:9::9 exist only in the rules.

. "$(atf_get_srcdir)/../lib.sh"

# The three namespaces (lib.sh), three server addresses, forwarding.
setup_ns()
{
	netns3 78 x
	for i in 11 12 13; do
		ip -n $S addr add 10.78.2.$i/24 dev xs$id
		ip -n $S addr add fd78:2::$i/64 dev xs$id nodad
	done
	ip netns exec $R sysctl -qw net.ipv4.ip_forward=1 \
	    net.ipv6.conf.all.forwarding=1 || atf_fail "forwarding"
}

# Server N (11, 12 or 13) on port 8080, IPv4 and IPv6: says "sN", then
# echoes.  The servers here run their shell with nofork, on the socket
# itself: with a socat between them, the answer of a client that closed
# its side first was sometimes lost (a FIN and no data, in a capture).
start_server()
{
	ip netns exec $S socat TCP4-LISTEN:8080,bind=10.78.2.$1,fork,reuseaddr \
	    SYSTEM:"echo s$1; cat",nofork >/dev/null 2>&1 &
	echo $! >server4-$1.pid
	ip netns exec $S socat \
	    TCP6-LISTEN:8080,bind="[fd78:2::$1]",fork,reuseaddr,ipv6only=1 \
	    SYSTEM:"echo s$1; cat",nofork >/dev/null 2>&1 &
	echo $! >server6-$1.pid
	wait_for 10 ip netns exec $S sh -c \
	    "ss -ltn | grep -q '10.78.2.$1:8080' && ss -ltn | grep -q 'fd78:2::$1\]:8080'" ||
	    atf_fail "server $1 did not start"
}

stop_server()
{
	for f in server4-$1.pid server6-$1.pid; do
		kill "$(cat $f)"
		rm -f $f
	done
	wait_for 10 sh -c "! ip netns exec $S ss -ltn | grep -q '10.78.2.$1:8080'"
}

# Who answers a client connecting to $1 port 80 (from namespace $2).
ask()
{
	case $1 in
	*:*)	_a="TCP6:[$1]:80" ;;
	*)	_a="TCP4:$1:80" ;;
	esac
	ip netns exec ${2:-$C} timeout 5 socat -t 1 - "$_a" </dev/null 2>/dev/null
}

# The answers of $2 connections to $1, one per line.
ask_n()
{
	_i=0
	while [ $_i -lt "$2" ]; do
		ask "$1"
		_i=$((_i + 1))
	done
}

# SIGKILL: what relayd had in the kernel stays
kill_relayd()
{
	kill -9 "$(cat relayd.pid)"
	wait_for 10 sh -c "! pgrep -f 'relayd -dv -f relayd.conf' >/dev/null"
	rm relayd.pid
}

# A relay only: nothing of relayd's own in the kernel
plain_conf()
{
	{ conf_head; cat <<CONF
relay "r" {
	listen on 127.0.0.1 port 7777
	forward to 127.0.0.1 port 7778
}
CONF
	} >relayd.conf
}

start_plain()
{
	plain_conf
	start_relayd_ns
}

start_relayd_ns()
{
	: >relayd.log
	ip netns exec $R "$RELAYD" -dv -f relayd.conf 2>>relayd.log &
	echo $! >relayd.pid
	wait_for 10 test -S relayd.sock || {
		cat relayd.log >&2
		atf_fail "relayd did not start"
	}
}

# The redirection's chain in the kernel.
rdr_chain()
{
	ip netns exec $R nft list chain inet relayd_rdr rdr${1:-1} 2>/dev/null
	# roundrobin's and random's hosts, in maps of their own
	for _f in 4 6; do
		ip netns exec $R nft list map inet relayd_rdr \
		    hosts${1:-1}_$_f 2>/dev/null
	done
}

# Do the rules of redirection $1 (its chain and hosts maps) have $2?
rdr_has()
{
	rdr_chain "$1" | grep -q "$2"
}

rdr_lacks()
{
	! rdr_has "$@"
}

# Wait until rdr1's rules have (or, with !, have not) $1.
wait_chain()
{
	if [ "$1" = "!" ]; then
		wait_for 10 rdr_lacks 1 "$2"
	else
		wait_for 10 rdr_has 1 "$1"
	fi
}

conf_head()
{
	cat <<CONF
socket "$PWD/relayd.sock"
interval 1
log state changes
CONF
}

# relayd's tables and their base chains, with their kernel handles: a
# chain replaced gets a new one, a table replaced too.
base_chains()
{
	ip netns exec $R nft -a list ruleset | awk '
	    /^table / { print $2, $3, $NF }
	    /^\tchain / { c = $2 " " $NF; next }
	    c != "" && / hook / { print c }
	    { c = "" }' | sort
}

# Servers 11 and 12, relayd with the redirection www to both on
# 10.78.9.9 port 80, its rules in place.
setup_www()
{
	setup_ns
	start_server 11
	start_server 12
	{ conf_head; cat <<CONF
table <web> { 10.78.2.11, 10.78.2.12 }
redirect "www" {
	listen on 10.78.9.9 port 80
	forward to <web> port 8080 check tcp
}
CONF
	} >relayd.conf
	start_relayd_ns
	wait_chain "10.78.2.12" || atf_fail "no rule: $(rdr_chain)"
}

atf_test_case rdr_roundrobin cleanup
rdr_roundrobin_head()
{
	atf_set descr "redirect: roundrobin over the hosts that are up, IPv4 and IPv6, from outside and from the host itself; counters in show redirects"
	atf_set require.user root
	atf_set timeout 90
}
rdr_roundrobin_body()
{
	require_netns
	setup_ns
	start_server 11
	start_server 12
	{ conf_head; cat <<CONF
table <web> { 10.78.2.11, 10.78.2.12, fd78:2::11, fd78:2::12 }
redirect "www" {
	listen on 10.78.9.9 port 80
	listen on fd78:9::9 port 80
	forward to <web> port 8080 check tcp
}
CONF
	} >relayd.conf
	start_relayd_ns
	wait_chain "10.78.2.12" || atf_fail "no rule: $(rdr_chain)"
	wait_chain "fd78:2::12" || atf_fail "no IPv6 rule: $(rdr_chain)"
	rdr_chain >out
	atf_check -o match:"numgen inc mod 2" cat out
	ask_n 10.78.9.9 6 >v4
	atf_check -o inline:"3\n" grep -c '^s11$' v4
	atf_check -o inline:"3\n" grep -c '^s12$' v4
	ask_n fd78:9::9 4 >v6
	atf_check -o inline:"2\n" grep -c '^s11$' v6
	atf_check -o inline:"2\n" grep -c '^s12$' v6
	# from the relayd host itself (the output hook)
	ip -n $R route add 10.78.9.0/24 dev xq$id
	ask 10.78.9.9 $R >out
	atf_check -o match:'^s1[12]$' cat out
	# the kernel's counters reach relayctl within its 2 s
	wait_for 10 sh -c "'$RELAYCTL' -s '$PWD/relayd.sock' show redirects | grep -q 'total: 11 sessions'" ||
	    atf_fail "counters: $(relayctl show redirects)"
	relayctl show redirects >show
	atf_check -o match:"^1 +	redirect	www +	 +	active$" cat show
	atf_check -o match:"packets: [1-9][0-9]*, bytes: [1-9][0-9]*" cat show
	atf_check -o match:"active: [0-9]+ states" cat show
	# OpenBSD's lines, in its order
	atf_check -o match:"total: 11 sessions" cat show
	atf_check -o match:"last: [0-9]+/60s [0-9]+/h [0-9]+/d sessions" cat show
	atf_check -o match:"average: [0-9]+/60s [0-9]+/h [0-9]+/d sessions" cat show
	atf_check -o match:'^relayd_redirect_sessions_total\{redirect="www"\} 11$' \
	    "$RELAYCTL" -s relayd.sock show metrics
}
rdr_roundrobin_cleanup()
{
	cleanup_ns
}

atf_test_case rdr_modes cleanup
rdr_modes_head()
{
	atf_set descr "redirect: source-hash keeps a client on one host, random reaches both, sticky-address keeps a client's host"
	atf_set require.user root
	atf_set timeout 90
}
rdr_modes_body()
{
	require_netns
	setup_ns
	start_server 11
	start_server 12
	{ conf_head; cat <<CONF
table <web> { 10.78.2.11, 10.78.2.12 }
redirect "hash" {
	listen on 10.78.9.1 port 80
	forward to <web> port 8080 mode source-hash check tcp
}
redirect "rand" {
	listen on 10.78.9.2 port 80
	forward to <web> port 8080 mode random check tcp
}
redirect "sticky" {
	listen on 10.78.9.3 port 80
	forward to <web> port 8080 check tcp
	sticky-address
	session timeout 60
}
CONF
	} >relayd.conf
	start_relayd_ns
	for n in 2 3; do
		wait_for 10 rdr_has $n 10.78.2.12 ||
		    atf_fail "no rule for rdr$n: $(rdr_chain $n)"
	done
	# source-hash: its hosts are in its Maglev map
	wait_for 10 sh -c "ip netns exec $R nft list map inet relayd_rdr mag1_4 | grep -q 10.78.2.12" ||
	    atf_fail "no map for rdr1: $(rdr_chain 1)"
	rdr_chain 1 >out
	atf_check -o match:"jhash ip saddr mod 8191 seed 0x[0-9a-f]+ map @mag1_4" cat out
	rdr_chain 2 >out
	atf_check -o match:"numgen random mod 2" cat out
	rdr_chain 3 >out
	atf_check -o match:"ip saddr @sticky3_4" cat out
	ask_n 10.78.9.1 8 | sort -u >hash
	atf_check -o match:'^1 ' wc -l hash
	ask_n 10.78.9.2 40 | sort -u >rand
	atf_check -o inline:"s11\ns12\n" cat rand
	ask_n 10.78.9.3 8 | sort -u >sticky
	atf_check -o match:'^1 ' wc -l sticky
	atf_check -o match:"10.78.1.2 expires [0-9a-z]+ : 10.78.2.1[12]" \
	    ip netns exec $R nft list map inet relayd_rdr sticky3_4
}
rdr_modes_cleanup()
{
	cleanup_ns
}

atf_test_case rdr_hash_seed cleanup
rdr_hash_seed_head()
{
	atf_set descr "redirect: the source-hash seed comes from the key of mode source-hash (the same on two nodes, and after a restart), and without a key a reload keeps it"
	atf_set require.user root
	atf_set timeout 60
}
rdr_hash_seed_body()
{
	require_netns
	setup_ns
	start_server 11
	start_server 12
	{ conf_head; cat <<CONF
table <web> { 10.78.2.11, 10.78.2.12 }
redirect "keyed" {
	listen on 10.78.9.1 port 80
	forward to <web> port 8080 mode source-hash "pair of nodes" check tcp
}
redirect "random" {
	listen on 10.78.9.2 port 80
	forward to <web> port 8080 mode source-hash check tcp
}
CONF
	} >relayd.conf
	start_relayd_ns
	seeds >seeds.1
	# a reload that adds a redirection, to see it done
	cat >>relayd.conf <<CONF
redirect "added" {
	listen on 10.78.9.3 port 80
	forward to <web> port 8080 check tcp
}
CONF
	"$RELAYCTL" -s relayd.sock reload >/dev/null || atf_fail "reload"
	wait_for 10 rdr_has 3 10.78.2.12 ||
	    atf_fail "reload not done: $(cat relayd.log)"
	seeds >seeds.2
	atf_check cmp seeds.1 seeds.2
	kill "$(cat relayd.pid)"
	wait "$(cat relayd.pid)"
	rm -f relayd.pid
	start_relayd_ns
	seeds >seeds.3
	atf_check -o inline:"$(head -1 seeds.1)\n" head -1 seeds.3
	# 1 in 2^32 that a new random seed is the old one
	[ "$(tail -1 seeds.1)" != "$(tail -1 seeds.3)" ] ||
	    atf_fail "the seed without a key did not change with a restart"
	# the key's: SipHash-2-4 of the name, folded to 32 bits
	atf_check -o inline:"$(head -1 seeds.1)\n" python3 -c '
import sys
def sip(k, m):
    M = (1 << 64) - 1
    rl = lambda x, b: ((x << b) | (x >> (64 - b))) & M
    k0 = int.from_bytes(k[:8], "little"); k1 = int.from_bytes(k[8:], "little")
    v = [k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d,
         k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573]
    def rnd():
        v[0] = (v[0] + v[1]) & M; v[1] = rl(v[1], 13) ^ v[0]; v[0] = rl(v[0], 32)
        v[2] = (v[2] + v[3]) & M; v[3] = rl(v[3], 16) ^ v[2]
        v[0] = (v[0] + v[3]) & M; v[3] = rl(v[3], 21) ^ v[0]
        v[2] = (v[2] + v[1]) & M; v[1] = rl(v[1], 17) ^ v[2]; v[2] = rl(v[2], 32)
    b = len(m) << 56
    while len(m) >= 8:
        w = int.from_bytes(m[:8], "little"); m = m[8:]
        v[3] ^= w; rnd(); rnd(); v[0] ^= w
    w = b | int.from_bytes(m, "little")
    v[3] ^= w; rnd(); rnd(); v[0] ^= w
    v[2] ^= 0xff
    for _ in range(4): rnd()
    return v[0] ^ v[1] ^ v[2] ^ v[3]
h = sip(b"pair of nodes".ljust(16, b"\0"), bytes(8) + b"keyed")
print("0x%08x" % ((h ^ (h >> 32)) & 0xffffffff))'
}
rdr_hash_seed_cleanup()
{
	stop_all
	cleanup_ns
}

# The seeds of the jhash of rdr1 and rdr2, one a line
seeds()
{
	for n in 1 2; do
		wait_for 10 sh -c "ip netns exec $R nft list chain inet relayd_rdr rdr$n | grep -q 'seed 0x'" ||
		    atf_fail "no hash in rdr$n: $(rdr_chain $n)"
		rdr_chain $n | sed -n 's/.* seed \(0x[0-9a-f]*\).*/\1/p' | head -1
	done
}

atf_test_case rdr_maglev cleanup
rdr_maglev_head()
{
	atf_set descr "redirect source-hash: a Maglev table; a host that goes down moves only its own clients; with a key the table is the same after a restart"
	atf_set require.user root
	atf_set timeout 90
}
rdr_maglev_body()
{
	require_netns
	setup_ns
	for i in 11 12 13; do
		start_server $i
	done
	_i=100
	while [ $_i -lt 200 ]; do
		ip -n $C addr add 10.78.1.$_i/24 dev "$(ip -n $C -o link | sed -n 's/^[0-9]*: \([^@:]*\).*/\1/p' | grep -v '^lo$' | head -1)" ||
		    atf_fail "address"
		_i=$((_i + 1))
	done
	{ conf_head; cat <<CONF
table <web> { 10.78.2.11, 10.78.2.12, 10.78.2.13 }
redirect "keyed" {
	listen on 10.78.9.1 port 80
	forward to <web> port 8080 mode source-hash "pair of nodes" check tcp
}
CONF
	} >relayd.conf
	start_relayd_ns
	mag()
	{
		ip netns exec $R nft list map inet relayd_rdr mag1_4 2>/dev/null
	}
	wait_for 10 sh -c "ip netns exec $R nft list map inet relayd_rdr mag1_4 | grep -q 10.78.2.13" ||
	    atf_fail "no Maglev map: $(rdr_chain 1)"
	rdr_chain 1 >chain
	atf_check -o match:"jhash ip saddr mod 8191 seed 0x[0-9a-f]+ map @mag1_4" cat chain
	mag | grep -o '[0-9]* : 10\.78\.2\.1[123]' | wc -l >slots
	atf_check -o inline:"8191\n" cat slots
	# who answers each of 100 sources
	who()
	{
		ip netns exec $C python3 -c '
import socket
for i in range(100, 200):
    s = socket.socket()
    s.settimeout(3)
    try:
        s.bind(("10.78.1.%d" % i, 0))
        s.connect(("10.78.9.1", 80))
        print(i, s.recv(16).decode().strip() or "-")
    except OSError:
        print(i, "-")
    s.close()'
	}
	who >before
	atf_check -o inline:"0\n" sh -c "awk '\$2 == \"-\"' before | wc -l"
	for n in 11 12 13; do
		grep -q " s$n\$" before || atf_fail "s$n has no client: $(cat before)"
	done
	mag >map.1
	stop_server 13
	wait_for 10 sh -c "! ip netns exec $R nft list map inet relayd_rdr mag1_4 | grep -q 10.78.2.13" ||
	    atf_fail "13 stays in the map"
	who >after
	atf_check -o inline:"0\n" sh -c "awk '\$2 == \"-\"' after | wc -l"
	# clients of 11 and 12 keep their host
	moved=$(join before after | awk '$2 != "s13" && $2 != $3' | wc -l)
	[ "$moved" -eq 0 ] || atf_fail "$moved clients of hosts that stayed moved"
	# back: the same table as before, and after a restart too (the key)
	start_server 13
	wait_for 10 sh -c "ip netns exec $R nft list map inet relayd_rdr mag1_4 | grep -q 10.78.2.13" ||
	    atf_fail "13 not back in the map"
	mag >map.2
	atf_check cmp map.1 map.2
	kill "$(cat relayd.pid)"
	wait_for 10 sh -c "! kill -0 $(cat relayd.pid)" || atf_fail "no stop"
	rm relayd.pid
	start_relayd_ns
	wait_for 10 sh -c "ip netns exec $R nft list map inet relayd_rdr mag1_4 | grep -q 10.78.2.13" ||
	    atf_fail "no map after a restart"
	mag >map.3
	atf_check cmp map.1 map.3
}
rdr_maglev_cleanup()
{
	stop_all
	cleanup_ns
}

atf_test_case rdr_options cleanup
rdr_options_head()
{
	atf_set descr "redirect: interface (and the host's own connections), udp, port ranges, pftag marks the admin's rules see, session timeout as the flows' conntrack timeout, pflog's log rule"
	atf_set require.user root
	atf_set timeout 90
}
rdr_options_body()
{
	require_netns
	setup_ns
	start_server 11
	ip netns exec $S socat UDP4-RECVFROM:8080,bind=10.78.2.11,fork \
	    SYSTEM:"echo u11" >/dev/null 2>&1 &
	echo $! >udp.pid
	for p in 9000 9001; do
		ip netns exec $S socat TCP4-LISTEN:$p,bind=10.78.2.11,fork,reuseaddr \
		    SYSTEM:"echo p$p",nofork >/dev/null 2>&1 &
		echo $! >p$p.pid
	done
	# the admin's own rules: count what relayd's marks select
	ip netns exec $R nft -f - <<NFT || atf_fail "nft"
table inet admin {
	chain forward {
		type filter hook forward priority filter; policy accept;
		meta mark 0x72650001 counter
		ct mark 0x72640001 ct expiration < 31s counter
	}
}
NFT
	{ conf_head; cat <<CONF
table <web> { 10.78.2.11 }
redirect "www" {
	listen on 10.78.9.9 port 80 interface xr$id pflog
	listen on 10.78.9.8 port 80 interface nosuchif
	listen on 10.78.9.9 udp port 53
	forward to <web> port 8080 check tcp
	pftag WEB
	session timeout 30
}
redirect "range" {
	listen on 10.78.9.7 port 9000:9002
	forward to <web> port 9000 check tcp
}
CONF
	} >relayd.conf
	start_relayd_ns
	wait_chain "10.78.2.11" || atf_fail "no rule: $(rdr_chain)"
	wait_for 10 rdr_has 2 10.78.2.11 ||
	    atf_fail "no range rule: $(rdr_chain 2)"
	rdr_chain >out
	atf_check -o match:'iifname "xr[0-9]+" ip daddr 10.78.9.9 tcp dport 80 .*log prefix "relayd/www: " group 0' cat out
	atf_check -o match:'ip daddr 10.78.9.9 udp dport 53 .*dnat ip to 10.78.2.11:8080' cat out
	# held open, so that the conntrack entry is established
	mkfifo in
	ip netns exec $C timeout 30 socat -t 20 - TCP4:10.78.9.9:80 <in >held &
	echo $! >held.pid
	exec 3>in
	wait_for 10 test -s held || atf_fail "no answer through interface xr$id"
	echo ping >&3
	wait_for 10 grep -q ping held || atf_fail "no echo"
	ip netns exec $R nft list chain inet admin forward >admin
	atf_check -o match:"meta mark 0x72650001 counter packets [1-9]" cat admin
	atf_check -o match:"ct expiration < 31s counter packets [1-9]" cat admin
	exec 3>&-
	# another interface's virtual address is not redirected
	ask 10.78.9.8 >out
	atf_check -o empty cat out
	# the host's own connections are, whatever the interface
	ip -n $R route add 10.78.9.0/24 dev xq$id
	ask 10.78.9.9 $R >out
	atf_check -o inline:"s11\n" cat out
	ask 10.78.9.8 $R >out
	atf_check -o inline:"s11\n" cat out
	# udp: the server answers the first datagram
	echo q | ip netns exec $C timeout 5 socat -t 2 - UDP4:10.78.9.9:53 >udp 2>&1
	atf_check -o inline:"u11\n" cat udp
	# a range to the same first port: each port kept
	ip netns exec $C timeout 5 socat -t 1 - TCP4:10.78.9.7:9001 </dev/null >range 2>/dev/null
	atf_check -o inline:"p9001\n" cat range
	ip netns exec $R "$RELAYD" -nv -f relayd.conf >conf.out 2>&1
	atf_check -o match:'pftag "WEB"	# packet mark 0x72650001' cat conf.out
}
rdr_options_cleanup()
{
	cleanup_ns
}

atf_test_case rdr_route_to cleanup
rdr_route_to_head()
{
	atf_set descr "redirect with route to (direct server return): packets forwarded unchanged to the hosts that are up, which answer the client themselves; a dead host leaves the rule; a reload keeps the base chains"
	atf_set require.user root
	atf_set timeout 90
}
rdr_route_to_body()
{
	require_netns
	setup_ns
	# two servers behind a bridge of the relayd host, each with the
	# virtual address on its loopback, as direct server return wants
	ip -n $R link add xb$id type bridge || atf_fail "bridge"
	ip -n $R addr add 10.78.3.1/24 dev xb$id
	ip -n $R link set xb$id up
	for i in 11 12; do
		n=xu$i$id
		ip netns add $n || atf_fail "netns $n"
		echo $n >>ns.list
		ip -n $n link set lo up
		ip link add xw$i$id type veth peer name xp$i$id || atf_fail "veth"
		ip link set xw$i$id netns $n
		ip link set xp$i$id netns $R
		ip -n $R link set xp$i$id master xb$id
		ip -n $R link set xp$i$id up
		ip -n $n addr add 10.78.3.$i/24 dev xw$i$id
		ip -n $n addr add 10.78.9.9/32 dev lo
		ip -n $n link set xw$i$id up
		ip -n $n route add default via 10.78.3.1
		ip netns exec $n sysctl -qw net.ipv4.conf.all.arp_ignore=1 \
		    net.ipv4.conf.all.arp_announce=2
		ip netns exec $n socat TCP4-LISTEN:80,fork,reuseaddr \
		    SYSTEM:'echo u'$i' $SOCAT_PEERADDR',nofork >/dev/null 2>&1 &
		echo $! >dsr$i.pid
		wait_for 10 ip netns exec $n sh -c "ss -ltn | grep -q ':80 '" ||
		    atf_fail "server $i did not start"
	done
	{ conf_head; cat <<CONF
table <dsr> { 10.78.3.11, 10.78.3.12 }
redirect "dsr" {
	listen on 10.78.9.9 port 80 interface xr$id
	route to <dsr> port 80 check tcp interface xb$id
}
CONF
	} >relayd.conf
	start_relayd_ns
	wait_for 10 sh -c "ip netns exec $R nft list chain netdev relayd_rdr rdr1_v0 | grep -q 'fwd ip to jhash'" ||
	    atf_fail "no rule: $(ip netns exec $R nft list ruleset)"
	ip netns exec $R nft list chain netdev relayd_rdr rdr1_v0 >out
	atf_check -o match:"device \"xb$id\"" cat out
	# no NAT: the server sees the client, and the client the virtual
	# address; both servers get some of 30 connections
	ask_n 10.78.9.9 30 >answers
	atf_check -o match:"^u11 10.78.1.2$" cat answers
	atf_check -o match:"^u12 10.78.1.2$" cat answers
	atf_check -o inline:"30\n" sh -c "grep -c '^u1[12] 10.78.1.2$' answers"
	# the inet table has no DNAT for it
	atf_check -o not-match:"dnat" ip netns exec $R nft list table inet relayd_rdr
	# a dead host leaves the rule
	kill "$(cat dsr12.pid)"
	rm dsr12.pid
	wait_for 10 sh -c "ip netns exec $R nft list chain netdev relayd_rdr rdr1_v0 | grep -q 'fwd ip to 10.78.3.11 '" ||
	    atf_fail "not shrunk: $(ip netns exec $R nft list chain netdev relayd_rdr rdr1_v0)"
	ask_n 10.78.9.9 5 | sort -u >after
	atf_check -o inline:"u11 10.78.1.2\n" cat after
	wait_for 10 sh -c "'$RELAYCTL' -s '$PWD/relayd.sock' show redirects | grep -q 'total: 35 sessions'" ||
	    atf_fail "counters: $("$RELAYCTL" -s relayd.sock show redirects)"
	# source-hash: through the Maglev map of the netdev table; the
	# reload changes the tables and their base chains in place
	base_chains >chains.before
	sed -i 's/check tcp interface/mode source-hash check tcp interface/' \
	    relayd.conf
	"$RELAYCTL" -s relayd.sock reload >/dev/null || atf_fail "reload"
	ip netns exec xu12$id socat TCP4-LISTEN:80,fork,reuseaddr \
	    SYSTEM:'echo u12 $SOCAT_PEERADDR',nofork >/dev/null 2>&1 &
	echo $! >dsr12.pid
	wait_for 10 sh -c "ip netns exec $R nft list map netdev relayd_rdr mag1_4 | grep -q 10.78.3.12" ||
	    atf_fail "no map: $(ip netns exec $R nft list table netdev relayd_rdr)"
	atf_check -o match:"fwd ip to jhash ip saddr mod 8191 seed 0x[0-9a-f]+ map @mag1_4" \
	    ip netns exec $R nft list chain netdev relayd_rdr rdr1_v0
	ask 10.78.9.9 >one
	atf_check -o match:"^u1[12] 10.78.1.2$" cat one
	base_chains >chains.after
	atf_check -o file:chains.before cat chains.after
	atf_check -o match:"^rdr1_v0 " cat chains.after
	# SIGTERM: the netdev table goes too
	kill "$(cat relayd.pid)"
	wait_for 10 sh -c "! kill -0 $(cat relayd.pid)" || atf_fail "no stop"
	rm relayd.pid
	atf_check -o not-match:relayd_rdr ip netns exec $R nft list tables
}
rdr_route_to_cleanup()
{
	cleanup_ns
}

atf_test_case rdr_failover cleanup
rdr_failover_head()
{
	atf_set descr "redirect: a dead host leaves the map within interval x retry, a live connection to another host stays; the backup table serves when none is up"
	atf_set require.user root
	atf_set timeout 90
}
rdr_failover_body()
{
	require_netns
	setup_ns
	start_server 11
	start_server 12
	start_server 13
	{ conf_head; cat <<CONF
table <web> { 10.78.2.11, 10.78.2.12 }
table <spare> { 10.78.2.13 }
redirect "www" {
	listen on 10.78.9.9 port 80
	forward to <web> port 8080 check tcp
	forward to <spare> port 8080 check tcp
}
CONF
	} >relayd.conf
	start_relayd_ns
	wait_chain "10.78.2.12" || atf_fail "no rule: $(rdr_chain)"
	# a connection that stays open: to whichever host it reached
	mkfifo in
	ip netns exec $C timeout 60 socat -t 30 - TCP4:10.78.9.9:80 <in >held &
	echo $! >held.pid
	exec 3>in
	wait_for 10 test -s held || atf_fail "the held connection got nothing"
	held=$(cat held)
	case $held in
	s11)	other=12 ;;
	s12)	other=11 ;;
	*)	atf_fail "held connection: $held" ;;
	esac
	stop_server $other
	wait_chain ! "10.78.2.$other" || atf_fail "10.78.2.$other still in $(rdr_chain)"
	ask_n 10.78.9.9 6 | sort -u >after
	atf_check -o inline:"$held\n" cat after
	# the held one still works: its host echoes
	echo ping >&3
	wait_for 10 grep -q ping held || atf_fail "the held connection broke"
	exec 3>&-
	# none up in <web>: the backup table
	stop_server ${held#s}
	wait_chain "10.78.2.13" || atf_fail "no backup: $(rdr_chain)"
	atf_check -o match:"active \(using backup table\)" "$RELAYCTL" -s relayd.sock show redirects
	ask 10.78.9.9 >out
	atf_check -o inline:"s13\n" cat out
	# and back
	start_server 11
	wait_chain "10.78.2.11" || atf_fail "not back: $(rdr_chain)"
	ask 10.78.9.9 >out
	atf_check -o inline:"s11\n" cat out
	# nothing up anywhere: no rule
	stop_server 11
	stop_server 13
	wait_for 10 sh -c "! ip netns exec $R nft list chain inet relayd_rdr rdr1 | grep -q dnat" ||
	    atf_fail "rule left: $(rdr_chain)"
	atf_check -o match:"	down$" "$RELAYCTL" -s relayd.sock show redirects
}
rdr_failover_cleanup()
{
	cleanup_ns
}

atf_test_case rdr_reload_no_gap cleanup
rdr_reload_no_gap_head()
{
	atf_set descr "redirect: 50 reloads while a client connects every 10 ms: a reload that keeps the redirection never leaves its rules empty, no connection fails; the nat base chains stay the same chains"
	atf_set require.user root
	atf_set timeout 120
}
rdr_reload_no_gap_body()
{
	require_netns
	setup_www
	base_chains >chains.before
	# a connection every 10 ms until reloads.done, 3000 at most
	ip netns exec $C python3 - "$PWD/reloads.done" >client.out 2>&1 <<'PY' &
import os, socket, sys, time
ok = failed = 0
errors = {}
while not os.path.exists(sys.argv[1]) and ok + failed < 3000:
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("10.78.9.9", 80))
        s.shutdown(socket.SHUT_WR)
        if s.recv(16).startswith(b"s1"):
            ok += 1
        else:
            failed += 1
            errors["no answer"] = errors.get("no answer", 0) + 1
    except OSError as e:
        failed += 1
        errors[str(e)] = errors.get(str(e), 0) + 1
    s.close()
    time.sleep(0.01)
print("ok %d failed %d %s" % (ok, failed, errors))
PY
	echo $! >client.pid
	for i in $(seq 1 50); do
		"$RELAYCTL" -s relayd.sock reload || atf_fail "reload $i failed"
		sleep 0.05
	done
	touch reloads.done
	wait "$(cat client.pid)"
	rm -f client.pid
	cat client.out >&2
	atf_check -o match:"^ok [1-9][0-9]+ failed 0 " cat client.out
	atf_check -o inline:"50\n" grep -c "reloading configuration" relayd.log
	# A base chain replaced leaves an instant when a packet meets the
	# new one before its rules are there and the old one after its are
	# gone (the client above sees it only now and then): the reloads
	# changed the chains, they did not replace them.
	base_chains >chains.after
	atf_check -o file:chains.before cat chains.after
	rdr_chain >out
	atf_check -o match:"dnat ip to numgen inc mod 2 map" cat out
}
rdr_reload_no_gap_cleanup()
{
	stop_all
	cleanup_ns
}

atf_test_case rdr_reload_in_place cleanup
rdr_reload_in_place_head()
{
	atf_set descr "redirect: a reload changes relayd's nftables table in place: the table and its base chains stay, what the new configuration no longer has goes, what it changes is the new one's"
	atf_set require.user root
	atf_set timeout 60
}
rdr_reload_in_place_body()
{
	require_netns
	setup_ns
	start_server 11
	start_server 12
	{ conf_head; cat <<CONF
table <web> { 10.78.2.11, 10.78.2.12, fd78:2::11, fd78:2::12 }
redirect "one" {
	listen on 10.78.9.1 port 80
	listen on fd78:9::1 port 80
	forward to <web> port 8080 check tcp
	sticky-address
	session timeout 30
}
redirect "two" {
	listen on 10.78.9.2 port 80
	listen on 10.78.9.2 udp port 53
	forward to <web> port 8080 mode source-hash check tcp
}
CONF
	} >relayd.conf
	start_relayd_ns
	wait_for 10 sh -c "ip netns exec $R nft list chain inet relayd_rdr rdr2 | grep -q @mag2_4" ||
	    atf_fail "no rule: $(ip netns exec $R nft list table inet relayd_rdr)"
	base_chains >chains.before
	# one: source-hash now, no IPv6, no sticky-address, another
	# timeout; two goes
	{ conf_head; cat <<CONF
table <web> { 10.78.2.11, 10.78.2.12, fd78:2::11, fd78:2::12 }
redirect "one" {
	listen on 10.78.9.1 port 80
	forward to <web> port 8080 mode source-hash check tcp
	session timeout 60
}
CONF
	} >relayd.conf
	atf_check "$RELAYCTL" -s relayd.sock reload
	wait_for 10 sh -c "ip netns exec $R nft list chain inet relayd_rdr rdr1 | grep -q @mag1_4" ||
	    atf_fail "not reloaded: $(ip netns exec $R nft list table inet relayd_rdr)"
	base_chains >chains.after
	atf_check -o file:chains.before cat chains.after
	ip netns exec $R nft -t list table inet relayd_rdr >table
	atf_check -o not-match:"rdr2|sticky|mag2_|rdr1_tcp6" cat table
	atf_check -o match:"established : 60 " cat table
	atf_check -o not-match:"in place" cat relayd.log
	ask 10.78.9.1 >out
	atf_check -o match:"^s1[12]$" cat out
	# a table someone else changed: the next reload replaces it whole
	ip netns exec $R nft flush table inet relayd_rdr
	ip netns exec $R nft delete chain inet relayd_rdr rdr1_out
	atf_check "$RELAYCTL" -s relayd.sock reload
	wait_for 10 sh -c "ip netns exec $R nft list chain inet relayd_rdr rdr1_out | grep -q @mag1_4" ||
	    atf_fail "not replaced: $(ip netns exec $R nft list table inet relayd_rdr)"
	atf_check -o match:"could not be changed in place, replacing them" \
	    cat relayd.log
	ask 10.78.9.1 >out
	atf_check -o match:"^s1[12]$" cat out
}
rdr_reload_in_place_cleanup()
{
	cleanup_ns
}

atf_test_case rdr_control cleanup
rdr_control_head()
{
	atf_set descr "relayctl redirect/host/table disable and enable act on the kernel's rules at once; reload changes the table"
	atf_set require.user root
	atf_set timeout 90
}
rdr_control_body()
{
	require_netns
	setup_www
	atf_check -o inline:"command succeeded\n" "$RELAYCTL" -s relayd.sock redirect disable www
	rdr_chain >out
	atf_check -o not-match:dnat cat out
	atf_check -o match:"	disabled$" "$RELAYCTL" -s relayd.sock show redirects
	ask 10.78.9.9 >out
	atf_check -o empty cat out
	atf_check -o inline:"command succeeded\n" "$RELAYCTL" -s relayd.sock redirect enable 1
	wait_chain "10.78.2.12" || atf_fail "not enabled: $(rdr_chain)"
	atf_check -o inline:"command succeeded\n" "$RELAYCTL" -s relayd.sock host disable 10.78.2.11
	rdr_chain >out
	atf_check -o not-match:"10.78.2.11" cat out
	ask_n 10.78.9.9 2 >out
	atf_check -o inline:"s12\ns12\n" cat out
	atf_check -o inline:"command succeeded\n" "$RELAYCTL" -s relayd.sock host enable 10.78.2.11
	wait_chain "10.78.2.11" || atf_fail "host not back: $(rdr_chain)"
	atf_check -o inline:"command failed\n" -s exit:1 "$RELAYCTL" -s relayd.sock redirect disable nosuch
	# reload: the table has one host now
	sed -i 's/10.78.2.11, 10.78.2.12/10.78.2.12/' relayd.conf
	atf_check "$RELAYCTL" -s relayd.sock reload
	wait_for 10 sh -c "ip netns exec $R nft list chain inet relayd_rdr rdr1 | grep -q 'dnat ip to 10.78.2.12:8080'" ||
	    atf_fail "after reload: $(rdr_chain)"
	ask_n 10.78.9.9 3 >out
	atf_check -o inline:"s12\ns12\ns12\n" cat out
}
rdr_control_cleanup()
{
	cleanup_ns
}

atf_test_case rdr_ownership cleanup
rdr_ownership_head()
{
	atf_set descr "SIGTERM leaves no table and no route; what a SIGKILLed relayd left is replaced at the next start; other tables are untouched"
	atf_set require.user root
	atf_set timeout 90
}
rdr_ownership_body()
{
	require_netns
	setup_ns
	start_server 11
	start_server 12
	ip netns exec $R nft add table inet admin || atf_fail "nft"
	{ conf_head; cat <<CONF
table <web> { 10.78.2.11 }
table <gws> { 10.78.2.11, 10.78.2.12 }
redirect "www" {
	listen on 10.78.9.9 port 80
	forward to <web> port 8080 check tcp
}
router "uplinks" {
	route 10.99.0.0/16
	forward to <gws> port 8080 check tcp
	rtable 7
}
CONF
	} >relayd.conf
	start_relayd_ns
	wait_chain "10.78.2.11" || atf_fail "no rule: $(rdr_chain)"
	wait_for 10 sh -c "ip -n $R route show table 7 | grep -q 10.78.2.12" ||
	    atf_fail "no route: $(ip -n $R route show table 7)"
	kill "$(cat relayd.pid)"
	wait_for 10 sh -c "! kill -0 $(cat relayd.pid)" || atf_fail "no stop"
	rm relayd.pid
	atf_check -o not-match:relayd_rdr ip netns exec $R nft list tables
	atf_check -o match:"table inet admin" ip netns exec $R nft list tables
	atf_check -o empty ip -n $R route show table 7
	# killed: its table and route stay, until the next start
	start_relayd_ns
	wait_for 10 sh -c "ip -n $R route show table 7 | grep -q 10.78.2.12" ||
	    atf_fail "no route"
	ip netns exec $R nft add chain inet relayd_rdr stale || atf_fail "nft"
	kill_relayd
	atf_check -o match:"stale" ip netns exec $R nft list table inet relayd_rdr
	atf_check -o match:"10.99.0.0/16" ip -n $R route show table 7
	# a configuration without either: both go
	start_plain
	wait_log 10 "removed a route a previous relayd left" ||
	    atf_fail "stale route: $(ip -n $R route show table 7)"
	atf_check -o empty ip -n $R route show table 7
	atf_check -o not-match:relayd_rdr ip netns exec $R nft list tables
	atf_check -o match:"table inet admin" ip netns exec $R nft list tables
}
rdr_ownership_cleanup()
{
	cleanup_ns
}

atf_test_case router_ecmp cleanup
router_ecmp_head()
{
	atf_set descr "router: a route through the gateways that are up, in its table, with the rtlabel's protocol; it shrinks and goes as they fail; a reload that drops a router or a redirection removes its routes or table"
	atf_set require.user root
	atf_set timeout 90
}
router_ecmp_body()
{
	require_netns
	setup_ns
	start_server 11
	start_server 12
	{ conf_head; cat <<CONF
table <gws> { 10.78.2.11, 10.78.2.12 }
table <gws6> { fd78:2::11, fd78:2::12 }
router "uplinks" {
	route 10.99.0.0/16
	route 10.98.0.0/16
	forward to <gws> port 8080 check tcp
	rtable 7
	rtlabel "wan"
}
router "v6" {
	route fd99::/32
	forward to <gws6> port 8080 check tcp
}
CONF
	} >relayd.conf
	start_relayd_ns
	wait_for 10 sh -c "ip -n $R route show table 7 10.99.0.0/16 | grep -q 'nexthop via 10.78.2.12'" ||
	    atf_fail "no route: $(ip -n $R route show table 7)"
	ip -n $R route show table 7 >routes
	atf_check -o match:"^10.99.0.0/16 nhid [0-9]+ proto 202" cat routes
	atf_check -o match:"^10.98.0.0/16 nhid [0-9]+ proto 202" cat routes
	atf_check -o match:"nexthop via 10.78.2.11" cat routes
	wait_for 10 sh -c "ip -n $R -6 route show fd99::/32 | grep -q 'nexthop via fd78:2::12'" ||
	    atf_fail "no IPv6 route: $(ip -n $R -6 route)"
	atf_check -o match:"proto 201" ip -n $R -6 route show fd99::/32
	relayctl show routers >show
	atf_check -o match:"	router +	uplinks +	 +	active$" cat show
	atf_check -o match:"rtable: 7$" cat show
	atf_check -o match:"rtlabel: wan$" cat show
	atf_check -o match:"route: 10.98.0.0/16$" cat show
	stop_server 11
	wait_for 10 sh -c "ip -n $R route show table 7 10.99.0.0/16 | grep -q 'via 10.78.2.12' && ! ip -n $R route show table 7 10.99.0.0/16 | grep -q 10.78.2.11" ||
	    atf_fail "not shrunk: $(ip -n $R route show table 7)"
	stop_server 12
	wait_for 10 sh -c "[ -z \"\$(ip -n $R route show table 7)\" ]" ||
	    atf_fail "not gone: $(ip -n $R route show table 7)"
	atf_check -o empty ip -n $R -6 route show fd99::/32
	atf_check -o match:"^relayd_router_gateways_up\{router=\"uplinks\"\} 0$" \
	    "$RELAYCTL" -s relayd.sock show metrics
	# back up, then a reload that keeps one router and drops the other,
	# and adds a redirection; then one that drops everything
	start_server 11
	wait_for 10 sh -c "ip -n $R route show table 7 | grep -q 10.99.0.0/16" ||
	    atf_fail "not back: $(ip -n $R route show table 7)"
	wait_for 10 sh -c "ip -n $R -6 route show fd99::/32 | grep -q via" ||
	    atf_fail "IPv6 not back"
	{ conf_head; cat <<CONF
table <gws6> { fd78:2::11, fd78:2::12 }
table <web> { 10.78.2.11 }
router "v6" {
	route fd99::/32
	forward to <gws6> port 8080 check tcp
}
redirect "www" {
	listen on 10.78.9.9 port 80
	forward to <web> port 8080 check tcp
}
CONF
	} >relayd.conf
	lines=$(wc -l <relayd.log)
	atf_check "$RELAYCTL" -s relayd.sock reload
	wait_for 10 sh -c "[ -z \"\$(ip -n $R route show table 7)\" ]" ||
	    atf_fail "a dropped router's routes stay: $(ip -n $R route show table 7)"
	wait_chain "10.78.2.11" || atf_fail "no rule after reload: $(rdr_chain)"
	atf_check -o match:"via fd78:2::11" ip -n $R -6 route show fd99::/32
	# the router kept was never without its route
	wait_for 10 sh -c "tail -n +$((lines + 1)) relayd.log | grep -q 'router v6: 1 gateways'" ||
	    atf_fail "no sync of v6"
	tail -n +"$((lines + 1))" relayd.log >after
	atf_check -s exit:1 grep "router v6: 0 gateways" after
	plain_conf
	atf_check "$RELAYCTL" -s relayd.sock reload
	wait_for 10 sh -c "! ip netns exec $R nft list tables | grep -q relayd_rdr" ||
	    atf_fail "the table stays after a reload without redirections"
	wait_for 10 sh -c "[ -z \"\$(ip -n $R -6 route show fd99::/32)\" ]" ||
	    atf_fail "routes stay after a reload without routers"
}
router_ecmp_cleanup()
{
	cleanup_ns
}

atf_test_case router_resilient cleanup
router_resilient_head()
{
	atf_set descr "router: its route goes through a resilient nexthop group; a gateway that goes down gives up only its own buckets, one that comes back takes none of the others' busy buckets; stop and SIGKILL leave no nexthop object after the next start"
	atf_set require.user root
	atf_set timeout 90
}
router_resilient_body()
{
	require_netns
	setup_ns
	for i in 11 12 13; do
		start_server $i
	done
	{ conf_head; cat <<CONF
table <gws> { 10.78.2.11, 10.78.2.12, 10.78.2.13 }
router "edge" {
	route 10.99.0.0/16
	forward to <gws> port 8080 check tcp
	rtable 7
}
CONF
	} >relayd.conf
	start_relayd_ns
	wait_for 10 sh -c "ip -n $R route show table 7 10.99.0.0/16 | grep -c 'nexthop via' | grep -qx 3" ||
	    atf_fail "no route through 3 gateways: $(ip -n $R route show table 7)"
	gid=$(ip -n $R route show table 7 10.99.0.0/16 |
	    sed -n 's/.*nhid \([0-9]*\).*/\1/p')
	[ -n "$gid" ] || atf_fail "no group: $(ip -n $R route show table 7)"
	atf_check -o match:"id $gid group .* type resilient buckets 512 idle_timer 120" \
	    ip -n $R nexthop show id "$gid"
	atf_check -o match:"proto 201" ip -n $R -d nexthop show id "$gid"
	# which nexthop object is which gateway's
	nh()
	{
		ip -n $R nexthop show | sed -n "s/^id \([0-9]*\) via 10.78.2.$1 .*/\1/p"
	}
	n11=$(nh 11) n12=$(nh 12) n13=$(nh 13)
	[ -n "$n11" ] && [ -n "$n12" ] && [ -n "$n13" ] ||
	    atf_fail "nexthops: $(ip -n $R nexthop show)"
	# buckets: "INDEX NHID" each
	buckets()
	{
		ip -n $R nexthop bucket show id "$gid" |
		    sed -n 's/.* index \([0-9]*\) .* nhid \([0-9]*\).*/\1 \2/p' |
		    sort -n
	}
	buckets >before
	[ "$(wc -l <before)" -eq 512 ] || atf_fail "buckets: $(wc -l <before)"
	for n in $n11 $n12 $n13; do
		grep -q " $n\$" before || atf_fail "nexthop $n has no bucket"
	done
	stop_server 13
	wait_for 10 sh -c "ip -n $R nexthop show id $gid | grep -q 'group $n11/$n12 \|group $n12/$n11 '" ||
	    atf_fail "not shrunk: $(ip -n $R nexthop show id $gid)"
	buckets >after
	[ "$(wc -l <after)" -eq 512 ] || atf_fail "buckets after: $(wc -l <after)"
	# every bucket of 11 and 12 stays theirs; 13's went to them
	moved=$(join before after | awk -v a="$n11" -v b="$n12" -v c="$n13" '
	    ($2 == a || $2 == b) && $2 != $3 { m++ }
	    $3 == c { m++ }
	    END { print m + 0 }')
	[ "$moved" -eq 0 ] || atf_fail "$moved buckets of the others moved"
	# the same group, the same route
	atf_check -o match:"nhid $gid " ip -n $R route show table 7 10.99.0.0/16
	# traffic through every bucket (8192 destinations, 512 buckets): a
	# bucket that carried a packet in the last 120 s keeps its gateway
	ip -n $R rule add to 10.99.0.0/16 lookup 7 prio 100 || atf_fail "rule"
	ip netns exec $R python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(8192):
    s.sendto(b"x", ("10.99.%d.%d" % (i // 256 + 1, i % 256), 9))' ||
	    atf_fail "no traffic"
	start_server 13
	wait_for 10 sh -c "ip -n $R nexthop show id $gid | grep -q '/.*/'" ||
	    atf_fail "13 not back: $(ip -n $R nexthop show id $gid)"
	buckets >back
	moved=$(join after back | awk '$2 != $3' | wc -l)
	[ "$moved" -eq 0 ] || atf_fail "$moved busy buckets moved when 13 came back"
	# stopped: no route, no nexthop object; killed: gone at the next start
	kill "$(cat relayd.pid)"
	wait_for 10 sh -c "! kill -0 $(cat relayd.pid)" || atf_fail "no stop"
	rm relayd.pid
	atf_check -o empty ip -n $R route show table 7
	atf_check -o empty ip -n $R nexthop show
	start_relayd_ns
	wait_for 10 sh -c "ip -n $R nexthop show | grep -q group" ||
	    atf_fail "no group after a restart"
	kill_relayd
	atf_check -o match:"group" ip -n $R nexthop show
	start_plain
	wait_log 10 "nexthop objects a previous relayd left" ||
	    atf_fail "stale nexthops: $(ip -n $R nexthop show)"
	atf_check -o empty ip -n $R nexthop show
	atf_check -o empty ip -n $R route show table 7
}
router_resilient_cleanup()
{
	cleanup_ns
}

atf_test_case pfe_unprivileged cleanup
pfe_unprivileged_head()
{
	atf_set descr "with redirections, pfe keeps no capability, stays chrooted and sandboxed, holds no netlink socket; the parent does"
	atf_set require.user root
	atf_set timeout 60
}
pfe_unprivileged_body()
{
	require_netns
	setup_ns
	start_server 11
	{ conf_head; cat <<CONF
table <web> { 10.78.2.11 }
redirect "www" {
	listen on 10.78.9.9 port 80
	forward to <web> port 8080 check tcp
}
CONF
	} >relayd.conf
	start_relayd_ns
	wait_chain "10.78.2.11" || atf_fail "no rule: $(rdr_chain)"
	pfe=
	for c in $(pgrep -P "$(cat relayd.pid)"); do
		tr '\0' ' ' <"/proc/$c/cmdline" | grep -q pfe && pfe=$c
	done
	[ -n "$pfe" ] || atf_fail "no pfe"
	for cap in CapInh CapPrm CapEff CapAmb; do
		atf_check -o match:"^$cap:[[:space:]]+0+\$" grep "^$cap:" /proc/$pfe/status
	done
	atf_check -o match:"^Seccomp:[[:space:]]+2\$" grep '^Seccomp:' /proc/$pfe/status
	home=$(getent passwd _relayd | cut -d: -f6)
	atf_check -o inline:"$(readlink -f "${home:-/var/empty}")\n" readlink /proc/$pfe/root
	# no netlink socket in pfe: its sockets are none of the namespace's
	# netlink sockets (the parent holds those)
	for fd in /proc/$pfe/fd/*; do
		readlink "$fd"
	done | sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' >pfe.inodes
	[ -s pfe.inodes ] || atf_fail "pfe has no socket at all?"
	awk 'NR > 1 { print $NF }' /proc/$pfe/net/netlink >netlink.inodes
	[ -s netlink.inodes ] || atf_fail "no netlink socket in the namespace?"
	atf_check -s exit:1 grep -qxFf netlink.inodes pfe.inodes
	parent=$(cat relayd.pid)
	for fd in /proc/$parent/fd/*; do
		readlink "$fd"
	done | sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' >parent.inodes
	atf_check -o ignore grep -xFf netlink.inodes parent.inodes
}
pfe_unprivileged_cleanup()
{
	cleanup_ns
}

# The unit's capability bounding set, for setpriv: +net_admin,+...
unit_caps()
{
	sed -n '/^CapabilityBoundingSet=/,/[^\\]$/p' \
	    "$TOP/etc/systemd/relayd.service" | sed 's/^CapabilityBoundingSet=//;
	    s/\\$//' | tr ' ' '\n' | sed -n 's/^CAP_\(.*\)/\1/p' |
	    tr 'A-Z' 'a-z'
}

# relayd in the relay namespace with only the capabilities $@ bound
start_relayd_caps()
{
	_set=-all
	for _c in "$@"; do
		_set="$_set,+$_c"
	done
	ip netns exec $R setpriv --bounding-set="$_set" -- \
	    "$RELAYD" -dv -f relayd.conf 2>relayd.log &
	echo $! >relayd.pid
	# up, or gone (a capability it cannot do without)
	wait_for 5 sh -c "test -S relayd.sock || ! kill -0 $(cat relayd.pid)"
	wait_started_quiet
}

# cap_next MODE WORD: go on with the checks (not quick, or WORD worked)
cap_next()
{
	[ "$1" != quick ] && return 0
	case " $_ok " in
	*" $2 "*)	return 0 ;;
	esac
	return 1
}

# relayd's relays run (quietly: a relayd that exited is an answer too)
wait_started_quiet()
{
	wait_for 5 sh -c "grep -q 'relay_launch: running relay script' relayd.log || ! kill -0 $(cat relayd.pid)"
}

# What works of the configuration of unit_capabilities, one word each:
# rdr (a redirection), router (a route through gateways checked with
# icmp), tls (a TLS listener on port 443 whose transparent forward
# shows the client's address), unix (a listener owned by nobody),
# script (a hanging check script killed at its timeout), stop (the
# parent and every child gone 5 s after SIGTERM).  With "quick", the
# checks end at the first that fails (enough to tell it is not all).
cap_checks()
{
	_ok=""
	if ! kill -0 "$(cat relayd.pid)" 2>/dev/null; then
		# it did not start: nothing works, and nothing is left to stop
		rm -f relayd.pid relay.sock relayd.sock
		echo "stop"
		return
	fi
	_go=1
	wait_for 5 grep -q "check script $sdir/hang.sh, host 127.0.0.1: timeout after 200ms, killed" \
	    relayd.log && ! pgrep -f "sleep 37" >/dev/null && _ok="$_ok script"
	cap_next "$1" script || _go=0
	if [ $_go = 1 ]; then
		case "$(ask 10.78.9.9)" in s1[12]) _ok="$_ok rdr" ;; esac
		cap_next "$1" rdr || _go=0
	fi
	if [ $_go = 1 ]; then
		wait_for 5 sh -c "ip -n $R route show table 7 |
		    grep -q 10.99.0.0/16" && _ok="$_ok router"
		cap_next "$1" router || _go=0
	fi
	if [ $_go = 1 ]; then
		echo | ip netns exec $C timeout 5 openssl s_client -quiet \
		    -connect 10.78.1.1:443 >tls.out 2>/dev/null
		grep -q "^peer 10.78.1.2" tls.out && _ok="$_ok tls"
		cap_next "$1" tls || _go=0
	fi
	[ $_go = 1 ] && [ "$(stat -c %U relay.sock 2>/dev/null)" = nobody ] &&
	    _ok="$_ok unix"
	_p=$(cat relayd.pid)
	_kids=$(pgrep -P "$_p" | tr '\n' ' ')
	kill "$_p" 2>/dev/null
	if wait_for 5 sh -c "! kill -0 $_p 2>/dev/null" &&
	    wait_for 5 sh -c "! ps -p '${_kids:-0}' >/dev/null 2>&1"; then
		_ok="$_ok stop"
	fi
	for _k in $_kids; do
		kill -9 "$_k" 2>/dev/null
	done
	kill -9 "$_p" 2>/dev/null
	# a check script the parent could not kill
	pkill -f "sleep 37"
	rm -f relayd.pid relay.sock relayd.sock
	ip netns exec $R nft delete table inet relayd_rdr 2>/dev/null
	ip -n $R route flush table 7 2>/dev/null
	echo "${_ok# }"
}

atf_test_case unit_capabilities cleanup
unit_capabilities_head()
{
	atf_set descr "the systemd unit's capability bounding set is enough for a redirection, a router with icmp checks, a TLS listener on a low port with a transparent forward and a unix listener owned by another user, and each of its capabilities is needed"
	atf_set require.user root
	atf_set timeout 300
}
unit_capabilities_body()
{
	require_netns
	command -v setpriv >/dev/null || atf_skip "no setpriv"
	setup_ns
	start_server 11
	start_server 12
	ip netns exec $S socat TCP4-LISTEN:9000,bind=10.78.2.11,fork,reuseaddr \
	    SYSTEM:'echo peer $SOCAT_PEERADDR',nofork >/dev/null 2>&1 &
	echo $! >peer.pid
	ip netns exec $R nft -f - <<NFT || atf_fail "nft"
table inet relayd {
	chain prerouting {
		type filter hook prerouting priority mangle;
		meta l4proto tcp socket transparent 1 meta mark set 1 accept
	}
}
NFT
	ip -n $R rule add fwmark 1 lookup 100 &&
	    ip -n $R route add local 0.0.0.0/0 dev lo table 100 ||
	    atf_fail "policy route"
	# where _relayd may run it
	sdir=$(mktemp -d /tmp/relayd-cap.XXXXXX)
	echo "$sdir" >sdir
	printf '#!/bin/sh\nexec sleep 37\n' >"$sdir/hang.sh"
	chmod 755 "$sdir" "$sdir/hang.sh"
	mkdir -p ssl/private
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=10.78.1.1 \
	    -keyout ssl/private/10.78.1.1.key -out ssl/10.78.1.1.crt \
	    2>/dev/null || atf_fail "no certificate"
	{ conf_head; cat <<CONF
prefork 1
tls directory "$PWD/ssl"
table <web> { 10.78.2.11, 10.78.2.12 }
table <gws> { 10.78.2.11, 10.78.2.12 }
redirect "www" {
	listen on 10.78.9.9 port 80
	forward to <web> port 8080 check tcp
}
router "uplinks" {
	route 10.99.0.0/16
	forward to <gws> check icmp
	rtable 7
}
relay "tls" {
	listen on 10.78.1.1 port 443 tls
	transparent forward to 10.78.2.11 port 9000
}
relay "unix" {
	listen on "$PWD/relay.sock" owner nobody
	forward to 10.78.2.11 port 8080
}
table <scr> { 127.0.0.1 }
relay "script" {
	listen on 127.0.0.1 port 8081
	forward to <scr> port 9 timeout 200 check script "$sdir/hang.sh"
}
CONF
	} >relayd.conf
	caps=$(unit_caps)
	[ -n "$caps" ] || atf_fail "no CapabilityBoundingSet in the unit"
	all="script rdr router tls unix stop"
	# shellcheck disable=SC2086
	start_relayd_caps $caps || { cat relayd.log >&2; atf_fail "no start"; }
	got=$(cap_checks)
	[ "$got" = "$all" ] || {
		cat relayd.log >&2
		atf_fail "with the unit's capabilities only '$got' of '$all' work"
	}
	# each one is needed for something
	for c in $caps; do
		# shellcheck disable=SC2086
		start_relayd_caps $(echo $caps | tr ' ' '\n' | grep -vx "$c")
		got=$(cap_checks quick)
		echo "without $c: $got"
		[ "$got" != "$all" ] ||
		    atf_fail "everything works without $c: the unit need not have it"
	done
}
unit_capabilities_cleanup()
{
	cleanup_ns
	pkill -f "sleep 37"
	[ -f sdir ] && rm -rf "$(cat sdir)"
	return 0
}

# relayd in the relay namespace without CAP_NET_ADMIN, as root in a
# container that does not grant it; its exit status in relayd.rc
start_relayd_no_net_admin()
{
	: >relayd.log
	rm -f relayd.rc relayd.pid
	# relayd.pid is relayd's: ip netns exec and setpriv exec it
	{ sh -c 'echo $$ >relayd.pid; exec "$@"' sh \
	    ip netns exec "$R" setpriv --bounding-set=-net_admin -- \
	    "$RELAYD" -dv -f relayd.conf 2>>relayd.log; echo $? >relayd.rc; } &
	wait_for 10 sh -c "grep -q 'relay_launch: running relay' relayd.log || test -s relayd.rc"
}

atf_test_case no_net_admin cleanup
no_net_admin_head()
{
	atf_set descr "without CAP_NET_ADMIN relays run and nftables is not asked; a transparent relay is warned about, redirections and routers are refused, with the reason"
	atf_set require.user root
	atf_set timeout 60
}
no_net_admin_body()
{
	require_netns
	command -v setpriv >/dev/null || atf_skip "no setpriv"
	setup_ns
	start_server 11
	{ conf_head; cat <<CONF
prefork 1
relay "www" {
	listen on 10.78.1.1 port 80
	forward to 10.78.2.11 port 8080
}
relay "tp" {
	listen on 10.78.1.1 port 81
	transparent forward to 10.78.2.11 port 8080
}
CONF
	} >relayd.conf
	start_relayd_no_net_admin
	[ ! -s relayd.rc ] || { cat relayd.log >&2; atf_fail "relayd exited"; }
	[ "$(ask 10.78.1.1)" = s11 ] || atf_fail "the relay does not answer"
	atf_check -o inline:"relay tp: transparent relaying needs CAP_NET_ADMIN, which relayd does not have: its connections will fail\n" \
	    grep "relay tp:" relayd.log
	# libnftables writes its own "Operation not permitted (you must be
	# root)" to stderr when it is asked
	atf_check -s exit:1 grep -i "not permitted\|must be root\|nftables" \
	    relayd.log
	# a reload that adds a redirection is refused; the relay goes on
	cat >>relayd.conf <<CONF
table <web> { 10.78.2.11 }
redirect "www" {
	listen on 10.78.9.9 port 80
	forward to <web> port 8080 check tcp
}
CONF
	atf_check -s exit:1 -o ignore -e ignore "$RELAYCTL" -s "$PWD/relayd.sock" reload
	atf_check -o match:"^redirections need CAP_NET_ADMIN, which relayd does not have$" \
	    cat relayd.log
	[ "$(ask 10.78.1.1)" = s11 ] || atf_fail "the relay stopped"
	stop_all

	for what in redirections routers; do
		{ conf_head; cat <<CONF
table <web> { 10.78.2.11 }
CONF
		if [ $what = redirections ]; then cat <<CONF
redirect "www" {
	listen on 10.78.9.9 port 80
	forward to <web> port 8080 check tcp
}
CONF
		else cat <<CONF
router "uplinks" {
	route 10.99.0.0/16
	forward to <web> port 8080 check tcp
}
CONF
		fi
		} >relayd.conf
		start_relayd_no_net_admin
		wait_for 10 test -s relayd.rc || atf_fail "$what: relayd runs"
		atf_check -o inline:"1\n" cat relayd.rc
		atf_check -o inline:"$what need CAP_NET_ADMIN, which relayd does not have\n" \
		    grep "need CAP_NET_ADMIN" relayd.log
		atf_check -s exit:1 grep -i "must be root" relayd.log
		rm -f relayd.pid
	done
}
no_net_admin_cleanup()
{
	cleanup_ns
}

atf_init_test_cases()
{
	atf_add_test_case unit_capabilities
	atf_add_test_case rdr_roundrobin
	atf_add_test_case rdr_modes
	atf_add_test_case rdr_hash_seed
	atf_add_test_case rdr_options
	atf_add_test_case rdr_route_to
	atf_add_test_case rdr_failover
	atf_add_test_case rdr_reload_no_gap
	atf_add_test_case rdr_reload_in_place
	atf_add_test_case rdr_control
	atf_add_test_case rdr_ownership
	atf_add_test_case router_ecmp
	atf_add_test_case router_resilient
	atf_add_test_case rdr_maglev
	atf_add_test_case pfe_unprivileged
	atf_add_test_case no_net_admin
}
