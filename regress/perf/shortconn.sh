#!/bin/sh
# Short connections over a real link: a client, a proxy and an echo
# server in three network namespaces of their own, joined by two veth
# pairs (not loopback, where the kernel reuses TIME_WAIT ports at once).
# The client opens connections to the proxy for SECONDS, 100 bytes each
# way and close, 4 at a time; the proxy's connections to the server end
# in TIME_WAIT on the proxy's side, the case of a busy relay.
#
#   shortconn.sh relayd|haproxy TW_REUSE SECONDS [PORT_RANGE]
#
# TW_REUSE is net.ipv4.tcp_tw_reuse in the proxy's namespace, PORT_RANGE
# its net.ipv4.ip_local_port_range (default: the kernel's).  Prints
#
#   PROXY conn/s OK ERRORS TIMEWAIT
#
# (sessions per second that moved their 100 bytes both ways, how many
# did, how many did not, the proxy's TIME_WAIT sockets at the end).  The
# proxy's log is left in $SHORTCONN_LOG if set.  The namespaces, links
# and processes are gone when it exits, whatever happened.
#
#   client 10.78.1.2 --- 10.78.1.1 proxy 10.78.2.1 --- 10.78.2.2 server

TOP=$(cd "$(dirname "$0")/../.." && pwd)
RB=$TOP/regress/perf/relaybench
RELAYD=$TOP/usr.sbin/relayd/relayd
proxy=$1 reuse=$2 secs=$3 range=$4

case $proxy in
relayd|haproxy) ;;
*)	echo "usage: shortconn.sh relayd|haproxy TW_REUSE SECONDS [RANGE]" >&2
	exit 2 ;;
esac
[ -x "$RB" ] || { echo "shortconn: build $RB first" >&2; exit 2; }

id=$$
C=scc$id R=scr$id S=scs$id
work=$(mktemp -d)
ME=shortconn
. "$(dirname "$0")/nslib.sh"

ns_triangle 78
# the client's own ports are not what is measured
ip netns exec $C sysctl -qw net.ipv4.tcp_tw_reuse=1 || fail "sysctl"
ip netns exec $R sysctl -qw net.ipv4.tcp_tw_reuse="$reuse" || fail "sysctl"
if [ -n "$range" ]; then
	ip netns exec $R sysctl -qw net.ipv4.ip_local_port_range="$range" ||
	    fail "sysctl"
fi

RB_ADDR=10.78.2.2 ip netns exec $S "$RB" echo "$work/echo.port" \
    $((secs + 60)) &
pids="$pids $!"
i=0
while [ ! -s "$work/echo.port" ]; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "no echo server"
	sleep 0.1
done
echo=$(cat "$work/echo.port")

log=${SHORTCONN_LOG:-$work/proxy.log}
if [ "$proxy" = relayd ]; then
	cat >"$work/relayd.conf" <<CONF
prefork 1
socket "$work/relayd.sock"
log connection errors
relay short {
	listen on 10.78.1.1 port 7000
	forward to 10.78.2.2 port $echo
}
CONF
	chmod 600 "$work/relayd.conf"
	ip netns exec $R "$RELAYD" -d -f "$work/relayd.conf" 2>"$log" &
else
	command -v haproxy >/dev/null || fail "no haproxy"
	cat >"$work/haproxy.cfg" <<CONF
global
	nbthread 1
defaults
	mode tcp
	timeout connect 5s
	timeout client 60s
	timeout server 60s
listen short
	bind 10.78.1.1:7000
	server s 10.78.2.2:$echo
CONF
	ip netns exec $R haproxy -db -f "$work/haproxy.cfg" >"$log" 2>&1 &
fi
pids="$pids $!"
listening $R 10.78.1.1:7000 || fail "$proxy did not start"

out=$(RB_ADDR=10.78.1.1 ip netns exec $C "$RB" conn 7000 "$secs" 4) ||
    fail "client"
tw=$(ip netns exec $R ss -tanH state time-wait | wc -l)
set -- $out
echo "$proxy $1 $(($1 * secs)) $2 $tw"
