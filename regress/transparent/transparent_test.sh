#! /usr/bin/env atf-sh
# Transparent relays in network namespaces this test makes: a client, the
# relay and a server, joined by two veth pairs; the relay's namespace gets
# the nft rules and policy routing relayd.conf(5) gives.  Everything is
# torn down by the cleanup, pass or fail.  A PROXY protocol case uses the
# same namespaces without firewall rules; a NAT64 case maps redirected
# destinations into the other address family; and one reads what
# "egress" names in each of them.
#
#   client 10.77.1.2 fd77:1::2 --- 10.77.1.1 fd77:1::1 relay
#   relay  10.77.2.1 fd77:2::1 --- 10.77.2.2 fd77:2::2 server

. "$(atf_get_srcdir)/../lib.sh"

# The three namespaces (lib.sh), and the policy routing of marked packets.
setup_ns()
{
	netns3 77 r
	# marked packets are for a local (transparent) socket
	ip -n $R rule add fwmark 1 lookup 100
	ip -n $R route add local 0.0.0.0/0 dev lo table 100
	ip -n $R -6 rule add fwmark 1 lookup 100
	ip -n $R -6 route add local ::/0 dev lo table 100
}

# The server: says who connected, on port $1 over IPv4 and IPv6; its
# shell writes to the socket itself (nofork), so a client that closes
# its side first still gets the answer.
start_server()
{
	ip netns exec $S socat TCP4-LISTEN:$1,fork,reuseaddr \
	    SYSTEM:'echo peer $SOCAT_PEERADDR',nofork >/dev/null 2>&1 &
	echo $! >server4-$1.pid
	ip netns exec $S socat TCP6-LISTEN:$1,fork,reuseaddr,ipv6only=1 \
	    SYSTEM:'echo peer $SOCAT_PEERADDR',nofork >/dev/null 2>&1 &
	echo $! >server6-$1.pid
	wait_for 10 ip netns exec $S sh -c "ss -ltn | grep -q ':$1 '" ||
	    atf_fail "server on $1 did not start"
}

# What the server says to a client connecting to $1 (address) $2 (port).
ask()
{
	case $1 in
	*:*)	_a="TCP6:[$1]:$2" ;;
	*)	_a="TCP4:$1:$2" ;;
	esac
	ip netns exec $C timeout 10 socat -t 3 - "$_a" </dev/null 2>&1
}

# What the server says to a client at $1 port $2 must be $3 (or nothing).
answer_is()
{
	ask "$1" "$2" >answer
	if [ -n "$3" ]; then
		atf_check -o inline:"$3\n" cat answer
	else
		atf_check -o empty cat answer
	fi
}

start_relayd_ns()
{
	: >relayd.log
	ip netns exec $R "$RELAYD" -dv -f relayd.conf 2>>relayd.log &
	echo $! >relayd.pid
	RELAYS=${RELAYS:-1} PREFORK=1 wait_started
}

atf_test_case transparent_forward cleanup
transparent_forward_head()
{
	atf_set descr "transparent forward: the server sees the client's address, IPv4 and IPv6"
	atf_set require.user root
	atf_set timeout 60
}
transparent_forward_body()
{
	require_netns
	setup_ns
	ip netns exec $R nft -f - <<NFT || atf_fail "nft"
table inet relayd {
	chain prerouting {
		type filter hook prerouting priority mangle;
		meta l4proto tcp socket transparent 1 meta mark set 1 accept
	}
}
NFT
	start_server 9000
	cat >relayd.conf <<CONF
prefork 1
socket "$PWD/relayd.sock"
log connection
relay t4 {
	listen on 10.77.1.1 port 8080
	transparent forward to 10.77.2.2 port 9000
}
relay t6 {
	listen on fd77:1::1 port 8080
	transparent forward to fd77:2::2 port 9000
}
CONF
	RELAYS=2 start_relayd_ns
	answer_is 10.77.1.1 8080 "peer 10.77.1.2"
	answer_is fd77:1::1 8080 "peer [fd77:0001:0000:0000:0000:0000:0000:0002]"
	wait_log 10 "relay t6, session .*, done" || atf_fail "no end line"
	atf_check -o match:"relay t4, session [0-9]+ \(1 active\), 0, 10\.77\.1\.2 -> 10\.77\.2\.2:9000, done" \
	    -o not-match:"no policy route" cat relayd.log
}
transparent_forward_cleanup()
{
	cleanup_ns
}

atf_test_case forward_to_destination cleanup
forward_to_destination_head()
{
	atf_set descr "forward to destination: a TPROXY rule brings connections for the server's address to the relay, which forwards each to its destination"
	atf_set require.user root
	atf_set timeout 60
}
forward_to_destination_body()
{
	require_netns
	setup_ns
	ip netns exec $R nft -f - <<NFT || atf_fail "nft"
table inet relayd {
	chain prerouting {
		type filter hook prerouting priority mangle;
		ip daddr 10.77.2.2 tcp dport 9000 tproxy ip to 10.77.1.1:8081 meta mark set 1 accept
		ip6 daddr fd77:2::2 tcp dport 9000 tproxy ip6 to [fd77:1::1]:8081 meta mark set 1 accept
	}
}
NFT
	start_server 9000
	cat >relayd.conf <<CONF
prefork 1
socket "$PWD/relayd.sock"
log connection
relay d4 {
	listen on 10.77.1.1 port 8081
	forward to destination
}
relay d6 {
	listen on fd77:1::1 port 8081
	forward to destination
}
CONF
	RELAYS=2 start_relayd_ns
	# the relay owns neither address; the server sees the relay
	answer_is 10.77.2.2 9000 "peer 10.77.2.1"
	answer_is fd77:2::2 9000 "peer [fd77:0002:0000:0000:0000:0000:0000:0001]"
	wait_log 10 "relay d6, session .*, done" || atf_fail "no end line"
	atf_check -o match:"relay d4, session [0-9]+ \(1 active\), 0, 10\.77\.1\.2 -> 10\.77\.2\.2:9000, done" \
	    cat relayd.log
	# straight to the listener: it would loop, so the session aborts
	answer_is 10.77.1.1 8081 ""
	wait_log 10 "relay d4, session .*, session aborted" ||
	    atf_fail "no session aborted"
}
forward_to_destination_cleanup()
{
	cleanup_ns
}

atf_test_case forward_to_nat_lookup cleanup
forward_to_nat_lookup_head()
{
	atf_set descr "forward to nat lookup: after a REDIRECT the relay forwards to the destination before it; a connection that was not redirected aborts"
	atf_set require.user root
	atf_set timeout 60
}
forward_to_nat_lookup_body()
{
	require_netns
	setup_ns
	ip netns exec $R nft -f - <<NFT || atf_fail "nft"
table inet relayd {
	chain prerouting {
		type nat hook prerouting priority dstnat;
		ip daddr 10.77.2.2 tcp dport 9001 redirect to :8082
		ip6 daddr fd77:2::2 tcp dport 9001 redirect to :8082
	}
}
NFT
	start_server 9001
	cat >relayd.conf <<CONF
prefork 1
socket "$PWD/relayd.sock"
log connection
relay n4 {
	listen on 10.77.1.1 port 8082
	forward to nat lookup
}
relay n6 {
	listen on fd77:1::1 port 8082
	forward to nat lookup
}
CONF
	RELAYS=2 start_relayd_ns
	answer_is 10.77.2.2 9001 "peer 10.77.2.1"
	answer_is fd77:2::2 9001 "peer [fd77:0002:0000:0000:0000:0000:0000:0001]"
	wait_log 10 "relay n6, session .*, done" || atf_fail "no end line"
	atf_check -o match:"relay n6, session [0-9]+ \(1 active\), 0, fd77:1::2 -> fd77:2::2:9001, done" \
	    cat relayd.log
	answer_is 10.77.1.1 8082 ""
	wait_log 10 "relay n4, session .*, session aborted" ||
	    atf_fail "no session aborted"
}
forward_to_nat_lookup_cleanup()
{
	cleanup_ns
}

atf_test_case missing_policy_route cleanup
missing_policy_route_head()
{
	atf_set descr "a transparent relay without the policy route for marked packets starts with a warning that says what is missing"
	atf_set require.user root
	atf_set timeout 60
}
missing_policy_route_body()
{
	require_netns
	setup_ns
	ip -n $R rule del fwmark 1 lookup 100 || atf_fail "ip rule del"
	cat >relayd.conf <<CONF
prefork 1
socket "$PWD/relayd.sock"
relay t4 {
	listen on 10.77.1.1 port 8080
	transparent forward to 10.77.2.2 port 9000
}
relay d6 {
	listen on fd77:1::1 port 8081
	forward to destination
}
CONF
	RELAYS=2 start_relayd_ns
	atf_check -o match:"relay t4: no policy route for marked packets, its connections will hang: ip rule add fwmark 1 lookup 100; ip route add local 0\.0\.0\.0/0 dev lo table 100" \
	    -o not-match:"relay d6: no policy route" cat relayd.log
}
missing_policy_route_cleanup()
{
	cleanup_ns
}

atf_test_case proxy_protocol_netns cleanup
proxy_protocol_netns_head()
{
	atf_set descr "forward ... proxy-protocol v1 and v2 across namespaces: the server reads the client's and the relay's addresses, IPv4 and IPv6"
	atf_set require.user root
	atf_set timeout 60
}
proxy_protocol_netns_body()
{
	require_netns
	setup_ns
	for a in 10.77.2.2 fd77:2::2; do
		ip netns exec $S python3 "$TOP/regress/tools/pptool.py" server \
		    "$PWD/pp-$a.port" 60 $a >/dev/null 2>&1 &
		echo $! >"pp-$a.pid"
		wait_for 10 test -s "pp-$a.port" || atf_fail "no header server on $a"
	done
	cat >relayd.conf <<CONF
prefork 1
socket "$PWD/relayd.sock"
log connection
relay p4 {
	listen on 10.77.1.1 port 8082
	forward to 10.77.2.2 port $(cat pp-10.77.2.2.port) proxy-protocol v1
}
relay p6 {
	listen on fd77:1::1 port 8082
	forward to fd77:2::2 port $(cat pp-fd77:2::2.port) proxy-protocol v2
}
CONF
	RELAYS=2 start_relayd_ns
	answer_is 10.77.1.1 8082 ""
	answer_is fd77:1::1 8082 ""
	wait_for 10 test -s pp-fd77:2::2.port.headers || atf_fail "no v2 header"
	atf_check -o match:"^v1 TCP4 10\.77\.1\.2 10\.77\.1\.1 [0-9]+ 8082\$" \
	    cat pp-10.77.2.2.port.headers
	atf_check -o match:"^v2 TCP6 fd77:1::2 fd77:1::1 [0-9]+ 8082\$" \
	    cat pp-fd77:2::2.port.headers
}
proxy_protocol_netns_cleanup()
{
	cleanup_ns
}

atf_test_case nat64_nat_lookup cleanup
nat64_nat_lookup_head()
{
	atf_set descr "forward to nat lookup inet and inet6 PREFIX: IPv6 clients of 64:ff9b::/96 reach an IPv4 server, IPv4 clients an IPv6 server at the prefix"
	atf_set require.user root
	atf_set timeout 60
}
nat64_nat_lookup_body()
{
	require_netns
	setup_ns
	# 10.77.2.2 in the server's IPv6 prefix: fd77:2::a4d:202, on the
	# server's end of the link (named by netns3 in lib.sh)
	# shellcheck disable=SC2154
	ip -n "$S" addr add fd77:2::a4d:202/64 dev "rs$id" nodad ||
	    atf_fail "ip addr add"
	ip netns exec "$R" nft -f - <<NFT || atf_fail "nft"
table inet relayd {
	chain prerouting {
		type nat hook prerouting priority dstnat;
		ip6 daddr 64:ff9b::/96 tcp dport 9002 redirect to :8083
		ip daddr 10.77.2.2 tcp dport 9003 redirect to :8084
	}
}
NFT
	start_server 9002
	start_server 9003
	cat >relayd.conf <<CONF
prefork 1
socket "$PWD/relayd.sock"
log connection
relay nat64 {
	listen on fd77:1::1 port 8083
	forward to nat lookup inet
}
relay nat46 {
	listen on 10.77.1.1 port 8084
	forward to nat lookup inet6 fd77:2::
}
CONF
	RELAYS=2 start_relayd_ns
	# the server says whom it saw: the relay over IPv4 for the IPv6
	# client, over IPv6 for the IPv4 one
	answer_is 64:ff9b::a4d:202 9002 "peer 10.77.2.1"
	answer_is 10.77.2.2 9003 "peer [fd77:0002:0000:0000:0000:0000:0000:0001]"
	wait_log 10 "relay nat46, session .*, done" || atf_fail "no end line"
	atf_check -o match:"relay nat64, session [0-9]+ \(1 active\), 0, fd77:1::2 -> 10\.77\.2\.2:9002, done" \
	    -o match:"relay nat46, session [0-9]+ \(1 active\), 0, 10\.77\.1\.2 -> fd77:2::a4d:202:9003, done" \
	    cat relayd.log
}
nat64_nat_lookup_cleanup()
{
	cleanup_ns
}

atf_test_case listen_on_egress cleanup
listen_on_egress_head()
{
	atf_set descr "listen on egress: the first address of an interface with a default route, IPv4 before IPv6; none without one"
	atf_set require.user root
	atf_set timeout 60
}
listen_on_egress_body()
{
	require_netns
	netns3 78 e
	cat >relayd.conf <<CONF
relay a {
	listen on egress port 8080
	forward to 127.0.0.1 port 80
}
CONF
	# the client has default routes through its link, both families
	atf_check -o match:"^	listen on 10\.78\.1\.2 port 8080\$" \
	    -e inline:"configuration OK\n" \
	    ip netns exec "$C" "$RELAYD" -nv -f relayd.conf
	# the relay has none
	atf_check -s exit:1 \
	    -e inline:"relayd.conf:2: invalid listen address: egress\n" \
	    ip netns exec "$R" "$RELAYD" -n -f relayd.conf
	# the server without its IPv4 default: its link holds the IPv6 one
	ip -n "$S" route del default || atf_fail "ip route del"
	atf_check -o match:"^	listen on 10\.78\.2\.2 port 8080\$" \
	    -e inline:"configuration OK\n" \
	    ip netns exec "$S" "$RELAYD" -nv -f relayd.conf
	# and without an IPv4 address, an IPv6 one
	# shellcheck disable=SC2154
	ip -n "$S" addr del 10.78.2.2/24 dev "es$id" || atf_fail "ip addr del"
	atf_check -o match:"^	listen on (fd78:2::2|fe80::[0-9a-f:]+%es[0-9]+) port 8080\$" \
	    -e inline:"configuration OK\n" \
	    ip netns exec "$S" "$RELAYD" -nv -f relayd.conf
}
listen_on_egress_cleanup()
{
	cleanup_ns
}

atf_init_test_cases()
{
	atf_add_test_case transparent_forward
	atf_add_test_case forward_to_destination
	atf_add_test_case forward_to_nat_lookup
	atf_add_test_case missing_policy_route
	atf_add_test_case proxy_protocol_netns
	atf_add_test_case nat64_nat_lookup
	atf_add_test_case listen_on_egress
}
