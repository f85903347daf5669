#!/bin/sh
# Redirections: a client, the relayd host and a server in three network
# namespaces of their own, joined by two veth pairs.  The same load goes
# to the server three ways: directly (routed by the relayd host), through
# a redirection (nftables DNAT kept by relayd), and through a relay
# (relayd splicing).  Then a host of a redirection is killed and the time
# until it has left the rules is measured.
#
#   rdrbench.sh SECONDS [direct|redirect|relay ...]
#
# Prints one line per contender,
#
#   rdr-CONTENDER GBITS_1_STREAM GBITS_4_STREAMS CONN_PER_S CONN_ERRORS
#
# (SECONDS of short connections, 100 bytes each way, 4 at a time; each
# stream moves RDRBYTES bytes, default 1 GiB), then
#
#   rdr-failover MS INTERVAL_MS
#
# (from the kill of a host to the end of the transaction that takes it
# out, with check tcp every INTERVAL).  The namespaces, links and
# processes are gone when it exits, whatever happened.
#
#   client 10.79.1.2 --- 10.79.1.1 relayd host 10.79.2.1 --- 10.79.2.2-3 server

TOP=$(cd "$(dirname "$0")/../.." && pwd)
RB=$TOP/regress/perf/relaybench
RELAYD=$TOP/usr.sbin/relayd/relayd
secs=${1:-5}
shift
contenders=${*:-direct redirect relay}
bytes=${RDRBYTES:-1073741824}

[ -x "$RB" ] || { echo "rdrbench: build $RB first" >&2; exit 2; }

id=$$
C=rbc$id R=rbr$id S=rbs$id
work=$(mktemp -d)
ME=rdrbench
. "$(dirname "$0")/nslib.sh"

# $1 seconds at most until the file $2 is not empty
waitfile()
{
	i=0
	until [ -s "$2" ]; do
		i=$((i + 1))
		[ $i -gt $(($1 * 10)) ] && return 1
		sleep 0.1
	done
}

# The rules of redirection $1: its chain, and its hosts map (roundrobin)
rdr_rules()
{
	ip netns exec $R nft list chain inet relayd_rdr "rdr$1" 2>/dev/null
	ip netns exec $R nft list map inet relayd_rdr "hosts$1_4" 2>/dev/null
}

ns_triangle 79
ip -n $S addr add 10.79.2.3/24 dev s$id
ip netns exec $C sysctl -qw net.ipv4.tcp_tw_reuse=1 || fail "sysctl"
ip netns exec $R sysctl -qw net.ipv4.ip_forward=1 || fail "sysctl"

RB_ADDR=10.79.2.2 ip netns exec $S "$RB" sink "$work/sink.port" \
    $((secs * 4 + 300)) &
pids="$pids $!"
RB_ADDR=10.79.2.2 ip netns exec $S "$RB" echo "$work/echo.port" \
    $((secs * 4 + 300)) &
pids="$pids $!"
waitfile 10 "$work/sink.port" || fail "no sink"
waitfile 10 "$work/echo.port" || fail "no echo server"
sink=$(cat "$work/sink.port")
echo=$(cat "$work/echo.port")

cat >"$work/relayd.conf" <<CONF
prefork 1
socket "$work/relayd.sock"
interval 1
table <sink> { 10.79.2.2 }
table <echo> { 10.79.2.2 }
redirect "sink" {
	listen on 10.79.9.9 port $sink
	forward to <sink> port $sink check tcp
}
redirect "echo" {
	listen on 10.79.9.9 port $echo
	forward to <echo> port $echo check tcp
}
relay "sink" {
	listen on 10.79.1.1 port 7001
	forward to 10.79.2.2 port $sink
}
relay "echo" {
	listen on 10.79.1.1 port 7002
	forward to 10.79.2.2 port $echo
}
CONF
chmod 600 "$work/relayd.conf"
ip netns exec $R "$RELAYD" -d -f "$work/relayd.conf" 2>"$work/relayd.log" &
rpid=$!
pids="$pids $rpid"
listening $R 10.79.1.1:7002 || fail "relayd did not start"
i=0
until ip netns exec $R nft list chain inet relayd_rdr rdr2 2>/dev/null |
    grep -q dnat; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "no redirection rule"
	sleep 0.1
done

for c in $contenders; do
	case $c in
	direct)	addr=10.79.2.2 sp=$sink ep=$echo ;;
	redirect) addr=10.79.9.9 sp=$sink ep=$echo ;;
	relay)	addr=10.79.1.1 sp=7001 ep=7002 ;;
	*)	fail "unknown contender $c" ;;
	esac
	t1=$(RB_ADDR=$addr ip netns exec $C "$RB" tput "$sp" 1 "$bytes") ||
	    fail "$c: tput"
	t4=$(RB_ADDR=$addr ip netns exec $C "$RB" tput "$sp" 4 "$bytes") ||
	    fail "$c: tput"
	cs=$(RB_ADDR=$addr ip netns exec $C "$RB" conn "$ep" "$secs" 4) ||
	    fail "$c: conn"
	# shellcheck disable=SC2086
	set -- $t1 $t4 $cs
	echo "rdr-$c $1 $2 $3 $4"
done

# Failover: two hosts on one port, check tcp every second; the time from
# killing one to the transaction that leaves only the other.
kill "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null
for a in 2 3; do
	ip netns exec $S socat TCP4-LISTEN:8080,bind=10.79.2.$a,fork,reuseaddr \
	    SYSTEM:"echo $a" >/dev/null 2>&1 &
	echo $! >"$work/fo$a.pid"
	pids="$pids $!"
	listening $S 10.79.2.$a:8080 || fail "no failover server"
done
cat >"$work/relayd.conf" <<CONF
prefork 1
socket "$work/relayd.sock"
interval 1
table <two> { 10.79.2.2, 10.79.2.3 }
redirect "two" {
	listen on 10.79.9.8 port 80
	forward to <two> port 8080 check tcp
}
CONF
rm -f "$work/relayd.sock"
ip netns exec $R "$RELAYD" -d -f "$work/relayd.conf" 2>"$work/relayd.log" &
pids="$pids $!"
i=0
until rdr_rules 1 | grep -q "10.79.2.3"; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "no failover rule"
	sleep 0.1
done
kill "$(cat "$work/fo3.pid")"
t0=$(date +%s%N)
until ! rdr_rules 1 | grep -q "10.79.2.3"; do
	[ $(($(date +%s%N) - t0)) -gt 30000000000 ] && fail "no failover"
	sleep 0.01
done
echo "rdr-failover $((($(date +%s%N) - t0) / 1000000)) 1000"
