#!/bin/sh
# Requests per second of an http relay on a fresh relayd and after
# reloads: does a reloaded daemon serve as fast as a new one?
#
#   reloadbench.sh [ROUNDS [RELOADS [SECONDS]]]
#
# Each round starts relayd (prefork 1, an http relay in front of
# relaybench's http backend), runs wrk (one thread, 64 connections,
# GET of 1 KiB) for SECONDS (default 10), then reloads it RELOADS times
# (default 100) with relayctl, each reload waited for, and runs wrk
# again.  Prints, a line each:
#
#   fresh|reloaded N req/s CPU_US proxy us/req RSS_KIB relay kB
#
# (the proxy's CPU is that of all relayd's processes; RSS that of the
# relay process).  Fresh and reloaded alternate, so that a machine that
# gets slower or faster meanwhile shows on both.  As root.

TOP=$(cd "$(dirname "$0")/../.." && pwd)
RB=$TOP/regress/perf/relaybench
RELAYD=$TOP/usr.sbin/relayd/relayd
RELAYCTL=$TOP/usr.sbin/relayctl/relayctl
# shellcheck source=regress/perf/benchlib.sh
. "$TOP/regress/perf/benchlib.sh"
rounds=${1:-3} reloads=${2:-100} secs=${3:-10}

[ "$(id -u)" -eq 0 ] || { echo "reloadbench: run as root" >&2; exit 2; }
command -v wrk >/dev/null || { echo "reloadbench: no wrk (make bench-deps)" >&2; exit 2; }
[ -x "$RB" ] || { echo "reloadbench: build $RB first" >&2; exit 2; }
sh "$TOP/etc/mkuser.sh" || exit 1

bench_work

"$RB" http "$work/http.port" 100000 & pids="$pids $!"
i=0
while [ ! -s "$work/http.port" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "reloadbench: no backend" >&2; exit 1; }
	sleep 0.1
done
# below the ephemeral ports, where a client's TIME_WAIT could hold it
port=$((20000 + $$ % 10000))
cat >"$work/relayd.conf" <<CONF
prefork 1
socket "$work/relayd.sock"
http protocol h { tcp { nodelay, backlog 512 } }
relay h {
	listen on 127.0.0.1 port $port
	protocol h
	forward to 127.0.0.1 port $(cat "$work/http.port")
}
CONF
chmod 600 "$work/relayd.conf"

# one wrk run: its line
run()
{
	c0=$(tree_ticks "$rpid")
	wrk -t 1 -c 64 -d "${secs}s" "http://127.0.0.1:$port/1024" >"$work/wrk.out"
	c1=$(tree_ticks "$rpid")
	relay=$(pgrep -P "$rpid" -f 'relayd: relay')
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$relay/status")
	awk -v what="$1" -v t=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" \
	    -v rss="$rss" '
	/requests in/ { n = $1 }
	/^Requests\/sec:/ { r = $2 }
	END { printf "%-8s %d req/s %.1f proxy us/req %d relay kB\n", what, r,
	    (n > 0) ? t / hz * 1e6 / n : 0, rss }' "$work/wrk.out"
}

r=0
while [ $r -lt "$rounds" ]; do
	"$RELAYD" -d -f "$work/relayd.conf" 2>"$work/relayd.log" &
	rpid=$!
	i=0
	until "$RB" probe "$port" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 100 ] && { cat "$work/relayd.log" >&2; exit 1; }
		sleep 0.1
	done
	run fresh
	n=0
	while [ $n -lt "$reloads" ]; do
		"$RELAYCTL" -s "$work/relayd.sock" reload >/dev/null ||
		    { echo "reloadbench: reload $n failed" >&2; exit 1; }
		n=$((n + 1))
	done
	run reloaded
	kill "$rpid"; wait "$rpid" 2>/dev/null; rpid=""
	r=$((r + 1))
done
