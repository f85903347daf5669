#!/bin/sh
# Limits per client source under a flood: relayd, HAProxy (a stick
# table), nginx (limit_conn, limit_req) and dnsdist (MaxQPSIPRule) with
# the same limits, in a network namespace of this script's own (relayd
# keeps its limits in nftables there, and nothing of them reaches the
# host's).
#
#   limbench.sh SECONDS [CONTENDER ...]
#
# CONTENDER is relayd, haproxy, nginx or dnsdist (all four by default);
# RELAYD=PATH measures another relayd binary.
# Each runs the rounds it can, each with one worker process:
#
#   conn:  a TCP proxy to an echo server with at most 20 connections at
#          once and 50 new ones a second per source (nginx's stream
#          module has no connection rate: 20 at once only); the flood is
#          relaybench's short connections from 127.0.0.1, 32 processes,
#          as fast as they go, for SECONDS; a connection not made in
#          1 ms failed (relayd drops the SYNs over a limit, as pf does:
#          a flood's client that waited for its retransmissions would
#          all but stop)
#   http:  an HTTP proxy to relaybench's backend with 50 requests a second
#          per source (burst 50), over it 429; the flood is wrk, 16
#          keep-alive connections from 127.0.0.1, for SECONDS
#   dns:   a DNS proxy (relayd, dnsdist) to dnsecho with 50 queries a
#          second per source, over it dropped; the flood is dnsperf from
#          127.0.0.1, up to 10000 queries in flight, each given 0.1 s,
#          for SECONDS
#
# The floods as fast as they go run at nice 19: on this shared machine
# they would otherwise take the CPU from the good clients themselves,
# which a flood from another machine cannot.  Meanwhile ten well-behaved
# clients (127.0.0.10 to .19, limtool.py) each make ten connections,
# requests or queries a second, from the flood's second second to its
# last but one; they also run as long before the flood, for their
# latency without it (SECONDS at least 3).  Prints one line a round:
#
#   CONTENDER ROUND refused N cpu_us_per_refused C good OK/ALL
#   p99ms_alone A p99ms_flood F cpu_pct P
#
# where N is what the flood had refused (failed connections, non-2xx
# answers, queries lost), C the CPU the flood added to the proxy's (user
# and system, all its processes: over the flood, less what the good
# clients alone cost it for as long) divided by N, and P the proxy's CPU
# over the flood in per cent of one core.  relayd reads a connection
# again after a 429 only when its source may ask again (at most a second
# later): it refuses fewer of the flood's requests than the proxies that
# answer each at once, and spends less in all, which P shows.

cd "$(dirname "$0")" || exit 1
PERF=$(pwd)
TOP=$(cd ../.. && pwd)
. "$PERF/benchlib.sh"
. "$PERF/proxyconf.sh"
RB=$PERF/relaybench
LIMTOOL=$TOP/regress/tools/limtool.py
RELAYD=${RELAYD:-$TOP/usr.sbin/relayd/relayd}
secs=${1:-5}
shift
conts=${*:-relayd haproxy nginx dnsdist}
GOOD=20

[ "$(id -u)" -eq 0 ] || { echo "limbench: run as root" >&2; exit 1; }
sh "$TOP/etc/mkuser.sh" || exit 1
bench_work
NS=rdlimb$$
ip netns add "$NS" || { echo "limbench: no network namespace" >&2; exit 1; }
ip -n "$NS" link set lo up
trap 'bench_cleanup; ip netns pids "$NS" 2>/dev/null | xargs -r kill -9;
    ip netns del "$NS" 2>/dev/null' EXIT
nsx="ip netns exec $NS"
DNSECHO=$PERF/dnsecho
SRCS="127.0.0.10 127.0.0.11 127.0.0.12 127.0.0.13 127.0.0.14 127.0.0.15
127.0.0.16 127.0.0.17 127.0.0.18 127.0.0.19"
BP=9101
LP=9100

# conf CONTENDER ROUND: the proxy's configuration in $work
conf()
{
	case $1-$2 in
	relayd-*)
		{
			echo "prefork 1"
			echo "socket \"$work/relayd.sock\""
			[ "$2" = http ] && echo "http protocol p { }"
			[ "$2" = dns ] && echo "dns protocol p"
			echo "relay r {"
			echo "	listen on 127.0.0.1 port $LP"
			[ "$2" = http ] || [ "$2" = dns ] && echo "	protocol p"
			echo "	forward to 127.0.0.1 port $BP"
			if [ "$2" = conn ]; then
				echo "	max-src-conn 20"
				echo "	max-src-conn-rate 50/1"
			else
				echo "	max-src-request-rate 50/1"
			fi
			echo "}"
		} >"$work/relayd.conf" ;;
	dnsdist-dns)
		{
			echo 'setSecurityPollSuffix("")'
			echo "setLocal(\"127.0.0.1:$LP\")"
			echo "newServer({address=\"127.0.0.1:$BP\", checkInterval=3600})"
			echo "addAction(MaxQPSIPRule(50, 32, 64, 50), DropAction())"
		} >"$work/dnsdist.conf" ;;
	haproxy-*)
		{
			printf 'global\n\tnbthread 1\n\tmaxconn 2000\n'
			printf 'defaults\n\tmode %s\n' \
			    "$([ "$2" = conn ] && echo tcp || echo http)"
			printf '\ttimeout connect 5s\n\ttimeout client 30s\n'
			printf '\ttimeout server 30s\n'
			printf 'frontend f\n\tbind 127.0.0.1:%s\n' "$LP"
			if [ "$2" = conn ]; then
				printf '\tstick-table type ip size 100k expire 30s store conn_cur,conn_rate(1s)\n'
				printf '\ttcp-request connection track-sc0 src\n'
				printf '\ttcp-request connection reject if { sc_conn_cur(0) gt 20 } || { sc_conn_rate(0) gt 50 }\n'
			else
				printf '\tstick-table type ip size 100k expire 30s store http_req_rate(1s)\n'
				printf '\thttp-request track-sc0 src\n'
				printf '\thttp-request deny deny_status 429 if { sc_http_req_rate(0) gt 50 }\n'
			fi
			printf '\tdefault_backend b\nbackend b\n'
			printf '\tserver s 127.0.0.1:%s\n' "$BP"
		} >"$work/haproxy.cfg" ;;
	nginx-conn*)
		{
			WORKERS=1 nginx_head
			echo "stream {"
			echo "	limit_conn_zone \$binary_remote_addr zone=c:10m;"
			echo "	server { listen 127.0.0.1:$LP; limit_conn c 20;"
			echo "	    proxy_pass 127.0.0.1:$BP; }"
			echo "}"
		} >"$work/nginx.conf" ;;
	nginx-http)
		{
			WORKERS=1 nginx_head
			echo "http {"
			echo "	access_log off;"
			echo "	limit_req_zone \$binary_remote_addr zone=r:10m rate=50r/s;"
			echo "	upstream b { server 127.0.0.1:$BP; keepalive 16; }"
			echo "	server { listen 127.0.0.1:$LP;"
			echo "	    location / { limit_req zone=r burst=50 nodelay;"
			echo "	    limit_req_status 429; proxy_pass http://b;"
			echo "	    proxy_http_version 1.1;"
			echo "	    proxy_set_header Connection \"\"; } }"
			echo "}"
		} >"$work/nginx.conf" ;;
	esac
}

# start CONTENDER: the proxy in the namespace, its pid in $rpid
start()
{
	case $1 in
	relayd)
		$nsx "$RELAYD" -d -f "$work/relayd.conf" 2>"$work/relayd.log" &
		rpid=$! ;;
	haproxy)
		$nsx haproxy -db -f "$work/haproxy.cfg" >"$work/proxy.log" 2>&1 &
		rpid=$! ;;
	nginx)
		$nsx nginx -c "$work/nginx.conf" -g "daemon off;" \
		    >/dev/null 2>&1 &
		rpid=$! ;;
	dnsdist)
		$nsx dnsdist --supervised --disable-syslog \
		    -C "$work/dnsdist.conf" >"$work/proxy.log" 2>&1 &
		rpid=$! ;;
	esac
	_i=0
	while ! ready "$2"; do
		_i=$((_i + 1))
		[ $_i -gt 100 ] && { echo "limbench: $1 did not start:" \
		    "$(grep ALERT "$work/proxy.log" 2>/dev/null | head -2)" >&2; return 1; }
		sleep 0.1
	done
	# relayd's limits are in nftables: the probe counted in none
	sleep 1
}

# ready ROUND: the proxy answers
ready()
{
	if [ "$1" = dns ]; then
		$nsx python3 "$LIMTOOL" dns 127.0.0.1 "$LP" 127.0.0.2 1 |
		    grep -q "answered 1"
	else
		$nsx "$RB" probe "$LP" 2>/dev/null
	fi
}

# good ROUND: the ten sources' "ok K refused R p99ms P"
good()
{
	case $1 in
	conn)	_m=good ;;
	http)	_m=httpgood ;;
	dns)	_m=dnsgood ;;
	esac
	# shellcheck disable=SC2086
	LIMTOOL_SPREAD=${SPREAD:-0} $nsx python3 "$LIMTOOL" $_m 127.0.0.1 \
	    "$LP" $GOOD $SRCS
}

# flood ROUND: one source's flood, for $secs, its report in $work/flood
flood()
{
	case $1 in
	conn)
		RB_CONNWAIT=1 $nsx nice -n 19 "$RB" conn "$LP" "$secs" 32 ;;
	http)
		$nsx nice -n 19 wrk -t 1 -c 16 -d "${secs}s" \
		    "http://127.0.0.1:$LP/10" ;;
	dns)
		$nsx nice -n 19 dnsperf -s 127.0.0.1 -p "$LP" \
		    -d "$work/queries" -l "$secs" -c 1 -T 1 -q 10000 -t 0.1 ;;
	esac >"$work/flood" 2>&1
}

# refused ROUND: what the flood in $work/flood had refused
refused()
{
	case $1 in
	conn)	awk '{ print $2 }' "$work/flood" ;;
	http)	sed -n 's/.*Non-2xx or 3xx responses: *//p' "$work/flood" ;;
	dns)	sed -n 's/.*Queries lost: *\([0-9]*\).*/\1/p' "$work/flood" ;;
	esac
}

# backend ROUND: the backend for the round, its port in $BP, pid in $bpid
backend()
{
	rm -f "$work/back.port"
	case $1 in
	conn)	$nsx "$RB" echo "$work/back.port" $((secs * 4 + 60)) ;;
	http)	$nsx "$RB" http "$work/back.port" $((secs * 4 + 60)) ;;
	dns)	$nsx "$DNSECHO" "$work/back.port" $((secs * 4 + 60)) ;;
	esac >/dev/null 2>&1 &
	bpid=$!
	# the backend picks its port: the configuration needs it
	_i=0
	while [ ! -s "$work/back.port" ] && [ $_i -lt 100 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	BP=$(cat "$work/back.port")
}

i=0
while [ $i -lt 10000 ]; do
	echo "q$i.bench.test A"
	i=$((i + 1))
done >"$work/queries"

for c in $conts; do
	case $c in
	relayd)		rounds=${LIMROUNDS:-"conn http dns"} ;;
	haproxy|nginx)	rounds="conn http" ;;
	dnsdist)	rounds="dns" ;;
	*)		echo "limbench: no contender $c" >&2; continue ;;
	esac
	command -v "$c" >/dev/null || [ $c = relayd ] || continue
	for r in $rounds; do
		backend $r
		conf "$c" "$r"
		start "$c" "$r" || { kill $bpid; continue; }
		GOOD=2 good $r >/dev/null	# warm: the first tries of a process
		# ten a second from each source: within every limit
		a0=$(tree_ticks "$rpid")
		w0=$(date +%s%N)
		alone=$(GOOD=$((secs * 10)) SPREAD=$secs good $r)
		a1=$(tree_ticks "$rpid")
		w1=$(date +%s%N)
		t0=$(tree_ticks "$rpid")
		flood $r &
		fpid=$!
		# the flood's first second is its start, not the flood
		sleep 1
		during=$(GOOD=$(((secs - 2) * 10)) SPREAD=$((secs - 2)) good $r)
		wait $fpid
		t1=$(tree_ticks "$rpid")
		w2=$(date +%s%N)
		n=$(refused $r)
		kill "$rpid" $bpid 2>/dev/null
		wait "$rpid" $bpid 2>/dev/null
		rpid=""
		# what the flood added: its CPU less the good clients' alone
		echo "$c $r refused ${n:-0} $alone $during" | awk -v \
		    hz="$(getconf CLK_TCK)" -v dt=$((t1 - t0)) \
		    -v da=$((a1 - a0)) -v wa=$((w1 - w0)) -v wf=$((w2 - w1)) '{
			# c r refused N ok K refused R p99ms A ok K refused R p99ms F
			n = $4
			add = dt - (wa > 0 ? da * wf / wa : 0)
			if (add < 0)
				add = 0
			printf "%s %s refused %d cpu_us_per_refused %s good %d/%d p99ms_alone %s p99ms_flood %s cpu_pct %.1f\n",
			    $1, $2, n, (n > 0 ? sprintf("%.1f", add * 1e6 / hz / n) : "-"),
			    $12, $12 + $14, $10, $16, dt * 100 / hz / (wf / 1e9) }'
	done
done
