#!/bin/sh
# DNS over UDP: dnsperf (one client, one thread, 500 queries in flight)
# for SECONDS against a fast local DNS server (dnsecho: one A record for
# any name), directly, through a dns relay of relayd (prefork 1) and
# through dnsdist (no cache) as it comes and with DNSDIST_SOCKETS (16)
# outgoing sockets a backend (randomized where the dnsdist has
# setRandomizedOutgoingSockets and setRandomizedIdsOverUDP, 1.8 and
# later; 1.7 takes the sockets in turn), each proxy on CPU 1 (taskset),
# dnsperf and the server on CPU 0.  Then the latency at a steady RATE
# queries per second (default 20000), below what any of them can do, for
# SECONDS.
#
#   [RATE=N] [RELAYD=PATH] dnsbench.sh SECONDS [CONTENDER ...]
#
# (RELAYD: another relayd binary to measure, the tree's by default.)
# CONTENDER is dns-direct, relayd-dns, dnsdist-dns or dnsdist-ports-dns
# (default: all).
# Prints, a line each:
#
#   CONTENDER queries/s lost cpu_s_per_100k avg_us p99_us
#
# (answers per second and queries without an answer at full load, the
# proxy's CPU seconds, user and system, per 100,000 of them, and the mean
# and 99th percentile latency of the answers at RATE).

TOP=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=regress/perf/benchlib.sh
. "$TOP/regress/perf/benchlib.sh"
ECHO=$TOP/regress/perf/dnsecho
RELAYD=${RELAYD:-$TOP/usr.sbin/relayd/relayd}
secs=${1:-10}
shift
want=${*:-dns-direct relayd-dns dnsdist-dns dnsdist-ports-dns}
DNSDIST_SOCKETS=${DNSDIST_SOCKETS:-16}

command -v dnsperf >/dev/null ||
    { echo "dnsbench: no dnsperf (make bench-deps)" >&2; exit 2; }
[ -x "$ECHO" ] || { echo "dnsbench: build $ECHO first" >&2; exit 2; }
if command -v taskset >/dev/null; then
	ONCLIENT="taskset -c 0"
	ONPROXY="taskset -c 1"
else
	ONCLIENT=""
	ONPROXY=""
fi

work=$(mktemp -d)
pids=""
cleanup()
{
	for p in $pids; do kill "$p" 2>/dev/null; done
	[ -f "$work/proxy.pid" ] && kill "$(cat "$work/proxy.pid")" 2>/dev/null
	[ -n "${DNSBENCH_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

$ONCLIENT "$ECHO" "$work/echo.port" 3600 & pids="$pids $!"
i=0
until [ -s "$work/echo.port" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "dnsbench: no server" >&2; exit 1; }
	sleep 0.1
done
EPORT=$(cat "$work/echo.port")
LPORT=18353
i=0
while [ $i -lt 10000 ]; do
	echo "host$i.bench.test A"
	i=$((i + 1))
done >"$work/queries"
echo "probe.bench.test A" >"$work/probe"

proxy_ticks()
{
	[ -f "$work/proxy.pid" ] || { echo 0; return; }
	tree_ticks "$(cat "$work/proxy.pid")"
}

# an answer from PORT, or give up after 5 s
wait_dns()
{
	i=0
	until dnsperf -s 127.0.0.1 -p "$1" -d "$work/probe" -n 1 -t 1 \
	    -c 1 -q 1 2>/dev/null | grep -q "Queries completed: *[1-9]"; do
		i=$((i + 1)); [ $i -gt 5 ] && return 1
		sleep 0.1
	done
}

measure()
{
	name=$1 port=$2
	if ! wait_dns "$port"; then
		echo "dnsbench: $name does not answer" >&2
		return
	fi
	t0=$(proxy_ticks)
	$ONCLIENT dnsperf -s 127.0.0.1 -p "$port" -d "$work/queries" \
	    -l "$secs" -c 1 -T 1 -q 500 >"$work/perf.out" 2>&1
	t1=$(proxy_ticks)
	$ONCLIENT dnsperf -s 127.0.0.1 -p "$port" -d "$work/queries" \
	    -l "$secs" -c 1 -T 1 -q 500 -Q "${RATE:-20000}" -v \
	    >"$work/lat.out" 2>&1
	cat "$work/perf.out" "$work/lat.out" | awk -v name="$name" \
	    -v ticks=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" '
/Queries per second:/ && !qps { qps = $4 }
/Queries completed:/ && !done { done = $3 }
/Queries lost:/ && !seen { lost = $3; seen = 1 }
/^> NOERROR / {
	us = int($5 * 1000000); sum += us; n++
	b = (us < 10000) ? int(us / 10) : 1000 + int(us / 1000)
	h[b]++
}
END {
	want = n * 0.99
	for (b = 0; b <= 1100 && c < want; b++)
		c += h[b]
	b--
	p99 = (b < 1000) ? b * 10 + 10 : (b - 1000) * 1000 + 1000
	printf "%s %.0f %d %.3f %.0f %d\n", name, qps, lost,
	    ((done > 0) ? ticks / hz / (done / 100000) : 0),
	    ((n > 0) ? sum / n : 0), p99
}'
}

stop_proxy()
{
	[ -f "$work/proxy.pid" ] || return 0
	p=$(cat "$work/proxy.pid")
	kill "$p" 2>/dev/null
	i=0
	while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	rm -f "$work/proxy.pid"
}

for c in $want; do
	case $c in
	dns-direct)
		measure dns-direct "$EPORT"
		;;
	relayd-dns)
		cat >"$work/relayd.conf" <<CONF
prefork 1
socket "$work/relayd.sock"
dns protocol bench
relay bench {
	listen on 127.0.0.1 port $LPORT
	protocol bench
	forward to 127.0.0.1 port $EPORT
}
CONF
		$ONPROXY "$RELAYD" -d -f "$work/relayd.conf" \
		    >"$work/relayd.log" 2>&1 &
		echo $! >"$work/proxy.pid"
		measure relayd-dns "$LPORT"
		stop_proxy
		;;
	dnsdist-dns|dnsdist-ports-dns)
		command -v dnsdist >/dev/null || continue
		echo 'setSecurityPollSuffix("")' >"$work/dnsdist.conf"
		socks=""
		if [ "$c" = dnsdist-ports-dns ]; then
			socks=", sockets=$DNSDIST_SOCKETS"
			printf '%s\n' 'setRandomizedOutgoingSockets(true)' \
			    'setRandomizedIdsOverUDP(true)' >"$work/rand.conf"
			dnsdist --check-config -C "$work/rand.conf" \
			    >/dev/null 2>&1 &&
			    cat "$work/rand.conf" >>"$work/dnsdist.conf"
		fi
		cat >>"$work/dnsdist.conf" <<CONF
setLocal("127.0.0.1:$LPORT")
newServer({address="127.0.0.1:$EPORT", checkInterval=3600$socks})
CONF
		$ONPROXY dnsdist --supervised --disable-syslog \
		    -C "$work/dnsdist.conf" >"$work/dnsdist.log" 2>&1 &
		echo $! >"$work/proxy.pid"
		measure "$c" "$LPORT"
		stop_proxy
		;;
	esac
done
