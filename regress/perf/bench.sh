#!/bin/sh
# relayd beside a direct connection, HAProxy and nginx, on 127.0.0.1, in
# one run.  make bench [QUICK=1]; README.md in this directory says what
# each figure means.

cd "$(dirname "$0")" || exit 1
PERF=$(pwd)
TOP=$(cd ../.. && pwd)
RB=$PERF/relaybench
RELAYD=$TOP/usr.sbin/relayd/relayd
SBTEST=$TOP/regress/daemon/relayd-sbtest
BARE=$PERF/barerelay
BARETLS=$PERF/baretls
# shellcheck source=regress/perf/proxyconf.sh
. "$PERF/proxyconf.sh"

if [ "${QUICK:-0}" = 1 ]; then
	HBYTES=268435456	# HTTP: 256 MiB bodies
	HSECS=2			# HTTP: seconds of requests
	BYTES1=268435456	# 256 MiB on one stream
	BYTES4=67108864		# 64 MiB on each of four
	RTTS=2000
	CONNSECS=1
	IDLE=500
	REPEAT=1
	SETTLE=0.2
	SCSECS=10		# short connections over veth
	DSECS=2			# DNS: seconds a row
	LSECS=3			# limits: seconds of flood a round
	RDSECS=2		# redirections: seconds of connections
	RDBYTES=268435456	# redirections: bytes a stream
else
	HBYTES=1073741824	# HTTP: 1 GiB bodies
	HSECS=10		# HTTP: seconds of requests
	BYTES1=4294967296	# 4 GiB on one stream
	BYTES4=1073741824	# 1 GiB on each of four
	RTTS=100000
	CONNSECS=10
	IDLE=${IDLE:-10000}
	REPEAT=${REPEAT:-3}
	SETTLE=1
	SCSECS=90
	DSECS=10
	LSECS=10
	RDSECS=10
	RDBYTES=1073741824
fi
WORKERS=1
# PIN=1: client and backends on CPU 0, every proxy process on CPU 1.
if [ "${PIN:-0}" = 1 ] && command -v taskset >/dev/null; then
	ONCLIENT="taskset -c 0"
	ONPROXY="taskset -c 1"
else
	PIN=0
	ONCLIENT=""
	ONPROXY=""
fi

[ "$(id -u)" -eq 0 ] || { echo "bench: run as root (relayd needs it)" >&2; exit 1; }
[ -x "$RELAYD" ] || { echo "bench: build relayd first (make)" >&2; exit 1; }
sh "$TOP/etc/mkuser.sh" || exit 1
# Client, proxy and backend each hold a descriptor per idle session.
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] && hard=1048576
want=$((IDLE * 4 + 4096))
if [ "$want" -gt "$hard" ]; then
	IDLE=$(((hard - 4096) / 4))
	echo "bench: descriptor limit $hard: $IDLE idle sessions" >&2
	want=$hard
fi
ulimit -n "$want"

work=$(mktemp -d)
mkdir -p "$PERF/results"
pids=""
cleanup()
{
	for p in $pids; do kill "$p" 2>/dev/null; done
	[ -f "$work/proxy.pid" ] && kill "$(cat "$work/proxy.pid")" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

$ONCLIENT "$RB" sink "$work/sink.port" 100000 & pids="$pids $!"
$ONCLIENT "$RB" echo "$work/echo.port" 100000 & pids="$pids $!"
i=0
while [ ! -s "$work/sink.port" ] || [ ! -s "$work/echo.port" ]; do
	i=$((i + 1)); [ $i -gt 50 ] && { echo "no backends" >&2; exit 1; }
	sleep 0.1
done
SINK=$(cat "$work/sink.port")
ECHO=$(cat "$work/echo.port")
LT=18301
LE=18302
ENV_T=""	# RB_UNIX=PATH: the clients connect to a unix socket
ENV_E=""
LH=18303	# HTTP contenders listen here

# Every process of the proxy: the one in proxy.pid and its children.
proxy_pids()
{
	[ -f "$work/proxy.pid" ] || return 0
	p=$(cat "$work/proxy.pid")
	echo "$p"
	pgrep -P "$p"
}

cpu_ticks()
{
	t=0
	for p in $(proxy_pids); do
		v=$(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null)
		t=$((t + ${v:-0}))
	done
	echo "$t"
}

# The CPU ticks of the proxy's processes whose title has $1 ("relayd:
# ca"): a share of cpu_ticks
cpu_ticks_of()
{
	t=0
	for p in $(proxy_pids); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "$1" ||
		    continue
		v=$(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null)
		t=$((t + ${v:-0}))
	done
	echo "$t"
}

rss_kib()
{
	t=0
	for p in $(proxy_pids); do
		v=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
		t=$((t + ${v:-0}))
	done
	echo "$t"
}

# Established connections to the echo backend (the proxy's side).
backend_sessions()
{
	ss -Htn state established "( dport = :$ECHO )" | wc -l
}

wait_port()
{
	i=0
	until "$RB" probe "$1" 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 100 ] && return 1
		sleep 0.1
	done
}

# ONLY="name ...": just these contenders
selected()
{
	[ -z "${ONLY:-}" ] && return 0
	case " $ONLY " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

# CPU seconds per GiB: cpu_per_gib TICKS BYTES
cpu_per_gib()
{
	awk -v t="$1" -v b="$2" -v hz="$(getconf CLK_TCK)" \
	    'BEGIN { printf "%.2f\n", t / hz / (b / 1073741824) }'
}

# The proxy's CPU microseconds per operation: cpu_us_per TICKS COUNT
# ("-" without a proxy or without operations)
cpu_us_per()
{
	awk -v t="$1" -v n="$2" -v hz="$(getconf CLK_TCK)" \
	    'BEGIN { if (t > 0 && n > 0) printf "%.0f\n", t / hz * 1e6 / n
	    else print "-" }'
}

# Start a proxy in the background: its output in $work/NAME.log, its pid
# in proxy.pid.  run_proxy NAME COMMAND...
run_proxy()
{
	_log=$1
	shift
	$ONPROXY "$@" >"$work/$_log.log" 2>&1 &
	echo $! >"$work/proxy.pid"
}

start_relayd()
{
	# start_relayd ENGINE TCPOPTS [LISTEN-T LISTEN-E FORWARD-T FORWARD-E]
	cat >"$work/relayd.conf" <<CONF
prefork $WORKERS
socket "$work/relayd.sock"
splice engine $1
protocol p {
	tcp { nodelay, backlog 512 $2 }
}
relay t {
	listen on ${3:-127.0.0.1 port $LT}
	protocol p
	forward to ${5:-127.0.0.1 port $SINK}
}
relay e {
	listen on ${4:-127.0.0.1 port $LE}
	protocol p
	forward to ${6:-127.0.0.1 port $ECHO}
}
CONF
	run_proxy relayd "$RELAYD" -d -f "$work/relayd.conf"
}

start_bare()
{
	run_proxy bare "$BARE" "$1" "$LT" "$SINK" "$LE" "$ECHO"
}

# barerelay in front of the HTTP backend (its second listener is unused)
start_bare_http()
{
	run_proxy bare "$BARE" "$1" "$LH" "$HTTPB" "$LE" "$HTTPB"
}

start_haproxy()
{
	# start_haproxy OPTION [BIND-T BIND-E SERVER-T SERVER-E]
	cat >"$work/haproxy.cfg" <<CONF
global
	nbthread $WORKERS
	maxconn $((IDLE + 500))
defaults
	mode tcp
	$1
	timeout connect 5s
	timeout client 600s
	timeout server 600s
	option tcp-smart-accept
listen t
	bind ${2:-127.0.0.1:$LT}
	server s ${4:-127.0.0.1:$SINK}
listen e
	bind ${3:-127.0.0.1:$LE}
	server s ${5:-127.0.0.1:$ECHO}
CONF
	run_proxy haproxy haproxy -db -f "$work/haproxy.cfg"
}

start_nginx()
{
	cat >"$work/nginx.conf" <<CONF
$(nginx_head)
stream {
	server { listen 127.0.0.1:$LT; proxy_pass 127.0.0.1:$SINK; }
	server { listen 127.0.0.1:$LE; proxy_pass 127.0.0.1:$ECHO; }
}
CONF
	run_proxy nginx nginx -c "$work/nginx.conf" -g 'daemon off;'
}

stop_proxy()
{
	[ -f "$work/proxy.pid" ] || return 0
	p=$(cat "$work/proxy.pid")
	kill "$p" 2>/dev/null
	i=0
	while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	kill -9 "$p" 2>/dev/null
	rm -f "$work/proxy.pid"
	sleep 0.5
}

median()
{
	sort -n | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "-"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		if (NR > 1) printf "%s (%s-%s)\n", m, v[1], v[NR]; else print m }'
}

# One contender: every figure, REPEAT times.
measure()
{
	name=$1
	t0=$(date +%s)
	: >"$work/t1"; : >"$work/t4"; : >"$work/cpu"; : >"$work/rttm"
	: >"$work/rttp"; : >"$work/cps"; : >"$work/err"; : >"$work/mem"
	: >"$work/cpc"
	r=0
	while [ $r -lt "$REPEAT" ]; do
		c0=$(cpu_ticks)
		$ONCLIENT env $ENV_T "$RB" tput "$PT" 1 "$BYTES1" >>"$work/t1"
		$ONCLIENT env $ENV_T "$RB" tput "$PT" 4 "$BYTES4" >>"$work/t4"
		c1=$(cpu_ticks)
		awk -v t=$((c1 - c0)) -v b=$((BYTES1 + 4 * BYTES4)) -v hz="$(getconf CLK_TCK)" \
		    'BEGIN { printf "%.2f\n", t / hz / (b / 1073741824) }' >>"$work/cpu"
		$ONCLIENT env $ENV_E "$RB" rtt "$PE" "$RTTS" >"$work/rtt.one"
		awk '{ print $1 }' "$work/rtt.one" >>"$work/rttm"
		awk '{ print $2 }' "$work/rtt.one" >>"$work/rttp"
		c0=$(cpu_ticks)
		$ONCLIENT env $ENV_E "$RB" conn "$PE" "$CONNSECS" 4 >"$work/conn.one"
		c1=$(cpu_ticks)
		cpu_us_per $((c1 - c0)) "$(awk -v s="$CONNSECS" \
		    '{ print $1 * s }' "$work/conn.one")" >>"$work/cpc"
		awk '{ print $1 }' "$work/conn.one" >>"$work/cps"
		awk '{ print $2 }' "$work/conn.one" >>"$work/err"
		if [ "$name" != direct ] && [ -z "${NOIDLE:-}" ]; then
			m0=$(rss_kib)
			$ONCLIENT "$RB" idle "$PE" "$IDLE" 120 >"$work/idle.out" 2>&1 &
			ip=$!
			# the client is ready when the kernel has its
			# handshakes; the proxy when it holds every session
			# to the backend
			i=0
			until grep -q ready "$work/idle.out" || [ $i -gt 600 ]; do
				sleep 0.1; i=$((i + 1))
			done
			until [ "$(backend_sessions)" -ge "$IDLE" ] || [ $i -gt 600 ]; do
				sleep 0.1; i=$((i + 1))
			done
			[ $i -gt 600 ] && echo "  $name: $(backend_sessions) of $IDLE idle sessions after 60 s" >&2
			sleep "$SETTLE"
			m1=$(rss_kib)
			kill "$ip" 2>/dev/null; wait "$ip" 2>/dev/null
			awk -v d=$((m1 - m0)) -v n="$IDLE" 'BEGIN { printf "%.1f\n", d / n }' >>"$work/mem"
			sleep "$SETTLE"
		fi
		r=$((r + 1))
	done
	printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$name" \
	    "$(median <"$work/t1")" "$(median <"$work/t4")" \
	    "$(median <"$work/cpu")" "$(median <"$work/rttm")" \
	    "$(median <"$work/rttp")" "$(median <"$work/cps")" \
	    "$(median <"$work/err")" "$(sort -n "$work/mem" | tail -1)" \
	    "$(median <"$work/cpc")" >>"$work/${RESULTS:-results}.csv"
	echo "  $name done in $(($(date +%s) - t0)) s" >&2
}

contender()
{
	name=$1
	shift
	selected "$name" || return
	case "$name" in
	direct)
		PT=$SINK; PE=$ECHO ;;
	*)
		"$@"
		PT=$LT; PE=$LE
		if ! wait_port "$LT" || ! wait_port "$LE"; then
			echo "  $name did not start, skipped" >&2
			stop_proxy
			return
		fi ;;
	esac
	measure "$name"
	stop_proxy
}

# The sections, their contenders, and the seconds each took in a whole
# run of one repeat on this kind of machine (2 cores), full and QUICK=1.
# A run writes what its sections took to results/timings-MODE, and the
# next run's estimate starts from that.
SECTIONS="tcp unix http tls h2 h2b shortconn rdr dns limits failover maglev scaleout"
sec_contenders()
{
	case $1 in
	tcp)	echo "direct bare-pipe bare-copy relayd-pipe relayd-copy relayd-nosplice haproxy-splice haproxy nginx-stream" ;;
	unix)	echo "relayd-unix relayd-tcp-unix haproxy-unix haproxy-tcp-unix" ;;
	http)	echo "http-direct http-bare-copy relayd-http relayd-http-rules relayd-http-nosplice haproxy-http-splice haproxy-http haproxy-http-rules nginx-proxy" ;;
	tls)	echo "relayd-tls-ec relayd-tls-ec-local haproxy-tls-ec nginx-tls-ec bare-tls-ec-key bare-tls-ec-local bare-tls-ec-ca relayd-tls-rsa relayd-tls-rsa-local haproxy-tls-rsa nginx-tls-rsa bare-tls-rsa-key bare-tls-rsa-local bare-tls-rsa-ca" ;;
	h2)	echo "relayd-h2 haproxy-h2 nginx-h2" ;;
	h2b)	echo "relayd-h2b haproxy-h2b nginx-h2b" ;;
	shortconn) echo "relayd-shortconn haproxy-shortconn" ;;
	rdr)	echo "rdr-direct rdr-redirect rdr-relay" ;;
	dns)	echo "dns-direct relayd-dns dnsdist-dns dnsdist-ports-dns" ;;
	limits)	echo "relayd-limits haproxy-limits nginx-limits dnsdist-limits" ;;
	failover) echo "ha-failover ha-streams" ;;
	maglev)	echo "rdr-maglev" ;;
	scaleout) echo "cluster" ;;
	esac
}
MODE=full
[ "${QUICK:-0}" = 1 ] && MODE=quick
if [ "$MODE" = full ]; then
	SEC_DEFAULT="tcp 246 unix 86 http 109 tls 300 h2 50 h2b 100 shortconn 362 rdr 39 dns 95 limits 110 failover 60 maglev 1 scaleout 90"
else
	SEC_DEFAULT="tcp 26 unix 9 http 29 tls 75 h2 10 h2b 20 shortconn 42 rdr 10 dns 29 limits 45 failover 60 maglev 1 scaleout 90"
fi
# the estimate: each section's seconds a repeat, for the share of its
# contenders that run (shortconn runs once, whatever REPEAT says)
estimate()
{
	_rec=$PERF/results/timings-$MODE
	_tot=0
	for _s in $SECTIONS; do
		_t=$(echo "$SEC_DEFAULT" | tr ' ' '\n' | sed -n "/^$_s\$/{n;p;}")
		if [ -s "$_rec" ]; then
			_r=$(awk -v s="$_s" '$1 == s { print $2 }' "$_rec")
			[ -n "$_r" ] && _t=$_r
		fi
		_all=$(sec_contenders "$_s" | wc -w)
		_sel=0
		for _c in $(sec_contenders "$_s"); do
			selected "$_c" && _sel=$((_sel + 1))
		done
		if [ "$_s" = shortconn ]; then
			_tot=$((_tot + _t * _sel / _all))
		else
			_tot=$((_tot + _t * _sel / _all * REPEAT))
		fi
	done
	echo "$_tot"
}
# time each section: section NAME ends the one before
sec_name=""
section()
{
	if [ -n "$sec_name" ]; then
		_d=$(($(date +%s) - sec_t0))
		[ "$sec_name" = shortconn ] || _d=$((_d / REPEAT))
		echo "$sec_name $_d" >>"$work/timings"
		echo "bench: section $sec_name took $(($(date +%s) - sec_t0)) s" >&2
	fi
	sec_name=${1:-}
	sec_t0=$(date +%s)
}
est=$(estimate)
echo "bench: ${REPEAT} repeat(s) of each figure, about $((est / 60 + 1)) minutes (from each section's time, results/timings-$MODE when a run wrote it)" >&2
echo "bench: 2 cores shared by client, proxy and backend; $WORKERS worker process for every proxy" >&2
[ "$PIN" = 1 ] && echo "bench: client and backends pinned to CPU 0, proxy to CPU 1" >&2

: >"$work/results.csv"
: >"$work/timings"
section tcp
contender direct
if [ -x "$BARE" ]; then
	contender bare-pipe start_bare pipe
	contender bare-copy start_bare copy
fi
contender relayd-pipe start_relayd pipe ""
contender relayd-copy start_relayd copy ""
contender relayd-nosplice start_relayd auto ", no splice"
if command -v haproxy >/dev/null; then
	contender haproxy-splice start_haproxy "option splice-auto"
	contender haproxy start_haproxy ""
else
	echo "  haproxy not installed (make bench-deps), skipped" >&2
fi
if command -v nginx >/dev/null; then
	contender nginx-stream start_nginx
else
	echo "  nginx not installed (make bench-deps), skipped" >&2
fi

stamp=$(date +%Y%m%d-%H%M%S)
{
	echo "contender,gbps_1,gbps_4,cpu_s_per_gib,rtt_median_us,rtt_p99_us,conn_per_s,conn_errors,kib_per_idle_session,cpu_us_per_conn"
	cat "$work/results.csv"
} >"$PERF/results/bench-$stamp.csv"

awk -F, -v direct="$(grep '^direct,' "$work/results.csv")" \
    -v hap="$(grep '^haproxy-splice,' "$work/results.csv")" \
    -v bpipe="$(grep '^bare-pipe,' "$work/results.csv")" \
    -v bcopy="$(grep '^bare-copy,' "$work/results.csv")" '
function num(s) { split(s, a, " "); return a[1] + 0 }
function ratio(x, y) { return (y > 0) ? sprintf("%.2f", x / y) : "-" }
BEGIN {
	split(direct, d, ","); split(hap, h, ",")
	split(bpipe, bp, ","); split(bcopy, bc, ",")
	print "| contender | 1-stream Gbit/s | 4-stream Gbit/s | vs direct (1/4) | vs bare relay (1/4) | vs HAProxy splice (1/4) | proxy CPU s/GiB | RTT median/p99 us | conn/s (errors) | proxy CPU us/conn | KiB/idle session |"
	print "|---|---|---|---|---|---|---|---|---|---|---|"
}
{
	vb = "-"
	if ($1 == "relayd-pipe")
		vb = ratio(num($2), num(bp[2])) "/" ratio(num($3), num(bp[3]))
	else if ($1 == "relayd-copy" || $1 == "relayd-nosplice")
		vb = ratio(num($2), num(bc[2])) "/" ratio(num($3), num(bc[3]))
	printf "| %s | %s | %s | %s/%s | %s | %s/%s | %s | %s / %s | %s (%s) | %s | %s |\n",
	    $1, $2, $3,
	    ratio(num($2), num(d[2])), ratio(num($3), num(d[3])), vb,
	    ratio(num($2), num(h[2])), ratio(num($3), num(h[3])),
	    $4, $5, $6, $7, $8, $10, $9
}' "$work/results.csv"
echo
echo "Medians of $REPEAT run(s), ranges in parentheses; CSV in regress/perf/results/bench-$stamp.csv"
echo "relayd-nosplice is compared with bare-copy, the userland ceiling."

section unix
# Unix-domain sockets (ours): relayd and HAProxy from a unix socket to a
# unix-socket backend, and from TCP to one; the figures of the TCP table
# (no idle sessions), against relayd-pipe's TCP loopback figures.
start_relayd_unix()
{
	if [ "$1" = unix ]; then
		start_relayd pipe "" "\"$work/ut.sock\"" "\"$work/ue.sock\"" \
		    "\"$work/usink.sock\"" "\"$work/uecho.sock\""
	else
		start_relayd pipe "" "" "" "\"$work/usink.sock\"" \
		    "\"$work/uecho.sock\""
	fi
}

start_haproxy_unix()
{
	if [ "$1" = unix ]; then
		start_haproxy "" "$work/ut.sock" "$work/ue.sock" \
		    "$work/usink.sock" "$work/uecho.sock"
	else
		start_haproxy "" "" "" "$work/usink.sock" "$work/uecho.sock"
	fi
}

unix_contender()
{
	name=$1
	how=$3
	selected "$name" || return
	"$2" "$how"
	if [ "$how" = unix ]; then
		ENV_T="RB_UNIX=$work/ut.sock"; ENV_E="RB_UNIX=$work/ue.sock"
	else
		ENV_T=""; ENV_E=""
	fi
	i=0
	until env $ENV_T "$RB" probe "$LT" 2>/dev/null &&
	    env $ENV_E "$RB" probe "$LE" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 100 ]; then
			echo "  $name did not start, skipped" >&2
			tail -3 "$work/${name%%-*}.log" >&2
			stop_proxy
			ENV_T=""; ENV_E=""
			return
		fi
		sleep 0.1
	done
	RESULTS=unix NOIDLE=1
	measure "$name"
	RESULTS=results NOIDLE=
	stop_proxy
	ENV_T=""; ENV_E=""
}

: >"$work/unix.csv"
if selected relayd-unix || selected relayd-tcp-unix ||
    selected haproxy-unix || selected haproxy-tcp-unix; then
	RB_UNIX=$work/usink.sock $ONCLIENT "$RB" sink "$work/usink.port" 100000 &
	pids="$pids $!"
	RB_UNIX=$work/uecho.sock $ONCLIENT "$RB" echo "$work/uecho.port" 100000 &
	pids="$pids $!"
	i=0
	while [ ! -S "$work/usink.sock" ] || [ ! -S "$work/uecho.sock" ]; do
		i=$((i + 1)); [ $i -gt 50 ] && { echo "no unix backends" >&2; exit 1; }
		sleep 0.1
	done
	unix_contender relayd-unix start_relayd_unix unix
	unix_contender relayd-tcp-unix start_relayd_unix tcp
	if command -v haproxy >/dev/null; then
		unix_contender haproxy-unix start_haproxy_unix unix
		unix_contender haproxy-tcp-unix start_haproxy_unix tcp
	fi
fi
if [ -s "$work/unix.csv" ]; then
	{
		echo "contender,gbps_1,gbps_4,cpu_s_per_gib,rtt_median_us,rtt_p99_us,conn_per_s,conn_errors,kib_per_idle_session,cpu_us_per_conn"
		cat "$work/unix.csv"
	} >"$PERF/results/unix-$stamp.csv"
	echo
	awk -F, -v tcp="$(grep '^relayd-pipe,' "$work/results.csv")" '
function num(s) { split(s, a, " "); return a[1] + 0 }
function ratio(x, y) { return (x > 0 && y > 0) ? sprintf("%.2f", x / y) : "-" }
BEGIN {
	split(tcp, t, ",")
	print "| unix contender | 1-stream Gbit/s | 4-stream Gbit/s | vs relayd TCP (1/4) | vs HAProxy, same sockets (1/4) | proxy CPU s/GiB | vs relayd TCP | RTT median/p99 us | conn/s (errors) |"
	print "|---|---|---|---|---|---|---|---|---|"
}
{ row[NR] = $0; split($1, n, "-"); if (n[1] == "haproxy") h[substr($1, 9)] = $0 }
END {
	for (i = 1; i <= NR; i++) {
		split(row[i], f, ","); split(f[1], n, "-")
		split(h[substr(f[1], length(n[1]) + 2)], g, ",")
		printf "| %s | %s | %s | %s/%s | %s/%s | %s | %s | %s / %s | %s (%s) |\n",
		    f[1], f[2], f[3],
		    ratio(num(f[2]), num(t[2])), ratio(num(f[3]), num(t[3])),
		    ratio(num(f[2]), num(g[2])), ratio(num(f[3]), num(g[3])),
		    f[4], ratio(num(f[4]), num(t[4])), f[5], f[6], f[7], f[8]
	}
}' "$work/unix.csv"
	echo
	echo "Unix sockets: relayd-unix listens on and forwards to unix sockets, relayd-tcp-unix listens on TCP; \"vs relayd TCP\" divides by relayd-pipe's TCP loopback figures (- when that row did not run); CSV in regress/perf/results/unix-$stamp.csv"
fi

section http
# HTTP: relayd's http relay beside HAProxy in http mode and nginx
# proxy_pass, one worker each, the same backend (relaybench http),
# keep-alive on both sides.
# ten typical filter rules, for the -rules contenders
RELAYD_RULES='match request header set "X-Forwarded-For" value "$REMOTE_ADDR"
	match request header set "X-Forwarded-By" value "$SERVER_ADDR:$SERVER_PORT"
	match request path "/api/*" forward to <api>
	match request header remove "X-Debug"
	match request cookie log "session"
	match response header remove "Server"
	match response header set "X-Frame-Options" value "DENY"
	block request path "/admin*"
	pass request method GET
	match request header "User-Agent" value "bad*" tag "bad"'

start_relayd_http()
{
	cat >"$work/relayd.conf" <<CONF
prefork $WORKERS
socket "$work/relayd.sock"
table <back> { 127.0.0.1 }
table <api> { 127.0.0.1 }
http protocol h {
	tcp { nodelay, backlog 512 $1 }
	$2
}
relay h {
	listen on 127.0.0.1 port $LH
	protocol h
	forward to <back> port $HTTPB
	forward to <api> port $HTTPB
}
CONF
	run_proxy relayd "$RELAYD" -d -f "$work/relayd.conf"
}

# the same rules for HAProxy
HAPROXY_RULES='http-request set-header X-Forwarded-For %[src]
	http-request set-header X-Forwarded-By %[dst]:%[dst_port]
	use_backend api if { path_beg /api/ }
	http-request del-header X-Debug
	capture cookie session len 32
	http-response del-header Server
	http-response set-header X-Frame-Options DENY
	http-request deny if { path_beg /admin }
	http-request allow if METH_GET
	http-request set-var(txn.tag) str(bad) if { req.hdr(User-Agent) -m beg bad }'

# start_haproxy_http [DEFAULTS LINES [FRONTEND LINES [BIND OPTIONS]]]
start_haproxy_http()
{
	cat >"$work/haproxy.cfg" <<CONF
global
	nbthread $WORKERS
	maxconn 1000
defaults
	mode http
	$1
	timeout connect 5s
	timeout client 600s
	timeout server 600s
frontend h
	bind 127.0.0.1:$LH $3
	$2
	default_backend b
backend b
	server s 127.0.0.1:$HTTPB
backend api
	server s 127.0.0.1:$HTTPB
CONF
	run_proxy haproxy haproxy -db -f "$work/haproxy.cfg"
}

# start_nginx_http [LISTEN OPTIONS [SERVER LINES]]
start_nginx_http()
{
	cat >"$work/nginx.conf" <<CONF
$(nginx_head)
http {
	access_log off;
	upstream b { server 127.0.0.1:$HTTPB; keepalive 128; }
	server {
		listen 127.0.0.1:$LH ${1:-};
		${2:-}
		client_max_body_size 0;
		location / {
			proxy_pass http://b;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_buffering off;
			proxy_request_buffering off;
		}
	}
}
CONF
	run_proxy nginx nginx -c "$work/nginx.conf" -g 'daemon off;'
}

# requests/s of 1 KiB answers on 64 connections, and GiB bodies down and
# up with the proxy's CPU seconds per GiB, REPEAT times
measure_http()
{
	name=$1
	: >"$work/hr"; : >"$work/hd"; : >"$work/hdc"; : >"$work/hu"; : >"$work/huc"
	: >"$work/hrc"
	r=0
	while [ $r -lt "$REPEAT" ]; do
		c0=$(cpu_ticks)
		$ONCLIENT wrk -t 1 -c 64 -d "${HSECS}s" "http://127.0.0.1:$PH/1024" \
		    >"$work/wrk.out"
		c1=$(cpu_ticks)
		awk '/^Requests\/sec:/ { printf "%d\n", $2 }' "$work/wrk.out" >>"$work/hr"
		cpu_us_per $((c1 - c0)) "$(awk '/requests in/ { print $1 }' \
		    "$work/wrk.out")" >>"$work/hrc"
		# the rule contenders: requests only
		case $name in *-rules) r=$((r + 1)); continue ;; esac
		for dir in get put; do
			c0=$(cpu_ticks)
			g=$($ONCLIENT "$RB" "$dir" "$PH" "$HBYTES")
			c1=$(cpu_ticks)
			f=hd; [ $dir = put ] && f=hu
			echo "$g" >>"$work/$f"
			cpu_per_gib $((c1 - c0)) "$HBYTES" >>"$work/${f}c"
		done
		r=$((r + 1))
	done
	printf '%s,%s,%s,%s,%s,%s,%s\n' "$name" "$(median <"$work/hr")" \
	    "$(median <"$work/hd")" "$(median <"$work/hdc")" \
	    "$(median <"$work/hu")" "$(median <"$work/huc")" \
	    "$(median <"$work/hrc")" >>"$work/http.csv"
	echo "  $name done" >&2
}

http_contender()
{
	name=$1
	shift
	selected "$name" || return
	if [ "$name" = http-direct ]; then
		PH=$HTTPB
	else
		"$@"
		PH=$LH
		if ! wait_port "$LH"; then
			echo "  $name did not start, skipped" >&2
			stop_proxy
			return
		fi
	fi
	measure_http "$name"
	stop_proxy
}

if command -v wrk >/dev/null; then
	$ONCLIENT "$RB" http "$work/http.port" 100000 & pids="$pids $!"
	i=0
	while [ ! -s "$work/http.port" ] && [ $i -lt 50 ]; do
		i=$((i + 1)); sleep 0.1
	done
	HTTPB=$(cat "$work/http.port")
	: >"$work/http.csv"
	http_contender http-direct
	http_contender http-bare-copy start_bare_http copy
	http_contender relayd-http start_relayd_http ""
	http_contender relayd-http-rules start_relayd_http "" "$RELAYD_RULES"
	http_contender relayd-http-nosplice start_relayd_http ", no splice"
	if command -v haproxy >/dev/null; then
		http_contender haproxy-http-splice start_haproxy_http "option splice-auto"
		http_contender haproxy-http start_haproxy_http ""
		http_contender haproxy-http-rules start_haproxy_http "" "$HAPROXY_RULES"
	fi
	command -v nginx >/dev/null && http_contender nginx-proxy start_nginx_http
	{
		echo "contender,req_per_s_1k,down_gbps,down_cpu_s_per_gib,up_gbps,up_cpu_s_per_gib,cpu_us_per_req_1k"
		cat "$work/http.csv"
	} >"$PERF/results/http-$stamp.csv"
	echo
	awk -F, -v hs="$(grep '^haproxy-http-splice,' "$work/http.csv")" \
	    -v h="$(grep '^haproxy-http,' "$work/http.csv")" \
	    -v hr="$(grep '^haproxy-http-rules,' "$work/http.csv")" '
function num(s) { split(s, a, " "); return a[1] + 0 }
function ratio(x, y) { return (x > 0 && y > 0) ? sprintf("%.2f", x / y) : "-" }
BEGIN {
	split(hs, s, ","); split(h, p, ","); split(hr, q, ",")
	print "| HTTP contender | req/s, 1 KiB, 64 conns | vs HAProxy | proxy CPU us/req | download Gbit/s | CPU s/GiB | upload Gbit/s | CPU s/GiB | vs HAProxy splice: down/up Gbit/s, down/up CPU | vs HAProxy: down/up Gbit/s, down/up CPU |"
	print "|---|---|---|---|---|---|---|---|---|---|"
}
{
	# rules against rules
	ref = ($1 ~ /-rules$/) ? q[2] : p[2]
	printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s/%s, %s/%s | %s/%s, %s/%s |\n",
	    $1, $2, ratio(num($2), num(ref)), $7, $3, $4, $5, $6,
	    ratio(num($3), num(s[3])), ratio(num($5), num(s[5])),
	    ratio(num($4), num(s[4])), ratio(num($6), num(s[6])),
	    ratio(num($3), num(p[3])), ratio(num($5), num(p[5])),
	    ratio(num($4), num(p[4])), ratio(num($6), num(p[6]))
}' "$work/http.csv"
	echo
	echo "HTTP: wrk -t 1 -c 64 for ${HSECS} s on 1 KiB answers; one body of $HBYTES bytes each way; CSV in regress/perf/results/http-$stamp.csv"
	echo "The -rules rows run ten typical filter rules (HAProxy: the same as http-request rules) and are compared with each other."
else
	echo "No HTTP rows: wrk is not installed (make bench-deps)"
fi

section tls
# TLS: new TLS 1.3 handshakes per second (openssl s_time -new, one
# client) with an ECDSA P-256 and an RSA 2048 certificate, and a TLS
# terminated stream (curl over https, a tcp relay to the HTTP backend)
# with the proxy's CPU per GiB.  One worker each; relayd's keys are in
# its ca process, so each handshake costs one round trip to it.
start_relayd_tls()
{
	tls_relayd_conf "$1"
	run_proxy relayd "$RELAYD" -d -f "$work/relayd.conf"
}

# relayd's test build, its relay signing with the key itself: what
# keeping the key in ca costs relayd (beside bare-tls-*-local and -ca)
start_relayd_tls_local()
{
	tls_relayd_conf "$1"
	run_proxy relayd env RELAYD_KEYOPS_TEST="$work/ssl/private/bench-$1.key" \
	    "$SBTEST" -d -f "$work/relayd.conf"
}

start_haproxy_tls()
{
	tls_haproxy_conf "$1"
	run_proxy haproxy haproxy -db -f "$work/haproxy.cfg"
}

start_nginx_tls()
{
	tls_nginx_conf "$1"
	run_proxy nginx nginx -c "$work/nginx.conf" -g 'daemon off;'
}

# baretls, the floor of a handshake: the key in OpenSSL (key), behind a
# key method (local), behind the same method in a child process (ca);
# a request opens a connection to the HTTP backend, as the proxies do,
# and goes to it
start_bare_tls()
{
	run_proxy bare "$BARETLS" "$2" "$work/ssl/bench-$1.crt" \
	    "$work/ssl/private/bench-$1.key" "$LS" "$HTTPB"
}

# The CPU ticks of the two parts of a TLS proxy that signs in another
# process: relayd's relay and ca processes, baretls's parent and child.
# split_ticks relay|ca
split_ticks()
{
	case $name in
	bare-*)	m=$(awk '{ print $14 + $15 }' "/proc/$(cat "$work/proxy.pid")/stat")
		[ "$1" = relay ] && echo "$m" || echo $(($(cpu_ticks) - m)) ;;
	*)	cpu_ticks_of "relayd: $1" ;;
	esac
}

# From s_time's output: connections per second to $work/WHAT and the
# proxy's CPU microseconds per connection to $work/WHATc.
# tls_rate WHAT TICKS
tls_rate()
{
	awk '/connections in .* real/ { printf "%d\n", $1 / $4 }' \
	    "$work/stime.out" >>"$work/$1"
	cpu_us_per "$2" "$(awk '/connections in .* real/ { print $1 }' \
	    "$work/stime.out")" >>"$work/$1c"
}

# One round of every TLS figure of a contender, added to its files
# $work/tls.NAME.*.  The rounds of all contenders take turns (the loop
# below), so that a machine that gets slower or faster during the run
# moves every contender's figures alike, not one contender's.
measure_tls()
{
	name=$1
	f=$work/tls.$name
	c0=$(cpu_ticks)
	r0=$(split_ticks relay)
	a0=$(split_ticks ca)
	$ONCLIENT openssl s_time -connect "127.0.0.1:$LS" -new -tls1_3 \
	    -time "$HSECS" 2>/dev/null >"$work/stime.out"
	c1=$(cpu_ticks)
	r1=$(split_ticks relay)
	a1=$(split_ticks ca)
	tls_rate "tls.$name.th" $((c1 - c0))
	# the relay and the ca processes' shares
	n=$(awk '/connections in .* real/ { print $1 }' "$work/stime.out")
	if [ $((a1 - a0)) -gt 0 ]; then
		cpu_us_per $((r1 - r0)) "$n" >>"$f.thr"
		cpu_us_per $((a1 - a0)) "$n" >>"$f.tha"
	fi
	# relayd signing in its relay, and baretls signing through a key
	# method, make new handshakes only; resumed sessions sign nothing
	case $name in
	bare-*-key) ;;
	bare-*|*-local)	return ;;
	esac
	# resumed: TLS 1.3 tickets, TLS 1.2 tickets or session ids; a
	# request read to its end (a TLS 1.3 ticket comes after the
	# handshake)
	for v in 3 2; do
		c0=$(cpu_ticks)
		$ONCLIENT openssl s_time -connect "127.0.0.1:$LS" \
		    -reuse -tls1_$v -www /1 -time "$HSECS" 2>/dev/null \
		    >"$work/stime.out"
		c1=$(cpu_ticks)
		tls_rate "tls.$name.tr$v" $((c1 - c0))
	done
	# baretls relays no stream
	case $name in
	bare-*)	return ;;
	esac
	c0=$(cpu_ticks)
	b=$($ONCLIENT curl -sk -o /dev/null -w '%{speed_download}' \
	    "https://127.0.0.1:$LS/$HBYTES")
	c1=$(cpu_ticks)
	awk -v b="$b" 'BEGIN { printf "%.2f\n", b * 8 / 1e9 }' >>"$f.tb"
	cpu_per_gib $((c1 - c0)) "$HBYTES" >>"$f.tbc"
}

# A contender's CPU per new handshake (thc) or per GiB of the stream
# (tbc) over HAProxy's with the same key in the same round, a ratio a
# round: the median and range of those.  The machine's drift from round
# to round moves both alike, so the ratio varies less than the two
# medians do.  "-" without HAProxy or with a round missing.
# paired_ratio NAME thc|tbc
paired_ratio()
{
	h=$work/tls.haproxy-tls-$(echo "$1" | cut -d- -f3).$2
	f=$work/tls.$1.$2
	if [ ! -s "$h" ] || [ "$(wc -l <"$f")" -ne "$(wc -l <"$h")" ]; then
		echo "-"
		return
	fi
	# a round without a figure ("-") makes no ratio
	if paste -d' ' "$f" "$h" | awk '!($1 + 0 > 0 && $2 + 0 > 0) { exit 1 }
	    { printf "%.2f\n", $1 / $2 }' >"$work/ratios"; then
		median <"$work/ratios"
	else
		echo "-"
	fi
}

# The medians of a contender's rounds: its line of tls.csv
tls_row()
{
	f=$work/tls.$1
	for x in th tb tbc tr3 tr2 thc tr3c tr2c thr tha; do
		[ -f "$f.$x" ] || : >"$f.$x"
	done
	split="-"
	[ -s "$f.tha" ] && split="$(median <"$f.thr") + $(median <"$f.tha")"
	printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$1" \
	    "$(median <"$f.th")" "$(median <"$f.tb")" "$(median <"$f.tbc")" \
	    "$(median <"$f.tr3")" "$(median <"$f.tr2")" \
	    "$(median <"$f.thc")" "$(median <"$f.tr3c")" \
	    "$(median <"$f.tr2c")" "$split" "$(paired_ratio "$1" thc)" \
	    "$(paired_ratio "$1" tbc)" >>"$work/tls.csv"
}

# tls_contender NAME START-FUNCTION ARGS: one round of NAME
tls_contender()
{
	name=$1
	shift
	selected "$name" || return
	"$@"
	if ! wait_port "$LS"; then
		echo "  $name did not start, skipped" >&2
		stop_proxy
		return
	fi
	grep -qx "$name" "$work/tls.names" || echo "$name" >>"$work/tls.names"
	measure_tls "$name"
	stop_proxy
	echo "  $name round $((tr + 1)) of $REPEAT done" >&2
}

if [ -n "${HTTPB:-}" ]; then
	LS=$LH
	tls_keys || echo "bench: no TLS keys" >&2
	: >"$work/tls.csv"
	: >"$work/tls.names"
	tr=0
	while [ $tr -lt "$REPEAT" ]; do
		for k in ec rsa; do
			tls_contender relayd-tls-$k start_relayd_tls $k
			tls_contender relayd-tls-$k-local \
			    start_relayd_tls_local $k
			command -v haproxy >/dev/null &&
			    tls_contender haproxy-tls-$k start_haproxy_tls $k
			command -v nginx >/dev/null &&
			    tls_contender nginx-tls-$k start_nginx_tls $k
			for m in key local ca; do
				tls_contender bare-tls-$k-$m start_bare_tls $k $m
			done
		done
		tr=$((tr + 1))
	done
	while read -r name; do
		tls_row "$name"
	done <"$work/tls.names"
	{
		echo "contender,handshakes_per_s,stream_gbps,stream_cpu_s_per_gib,resumed_tls13_per_s,resumed_tls12_per_s,cpu_us_per_handshake,cpu_us_per_resumed_tls13,cpu_us_per_resumed_tls12,cpu_us_per_handshake_relay_plus_ca,cpu_per_handshake_vs_haproxy_same_round,stream_cpu_vs_haproxy_same_round"
		cat "$work/tls.csv"
	} >"$PERF/results/tls-$stamp.csv"
	echo
	awk -F, '
function ratio(x, y) { return (x > 0 && y > 0) ? sprintf("%.2f", x / y) : "-" }
{ row[NR] = $0; split($1, n, "-"); if (n[1] == "haproxy") h[n[3]] = $0 }
END {
	print "| TLS contender | TLS 1.3 handshakes/s | vs HAProxy | resumed TLS 1.3/s | resumed TLS 1.2/s | vs HAProxy (1.3/1.2) | proxy CPU us/handshake (new/1.3/1.2) | new: relay + ca | CPU new vs HAProxy, same round | stream Gbit/s | vs HAProxy | CPU s/GiB | vs HAProxy, same round |"
	print "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= NR; i++) {
		split(row[i], f, ","); split(f[1], n, "-"); split(h[n[3]], g, ",")
		printf "| %s | %s | %s | %s | %s | %s/%s | %s/%s/%s | %s | %s | %s | %s | %s | %s |\n", f[1],
		    f[2], ratio(f[2], g[2]), f[5], f[6], ratio(f[5], g[5]),
		    ratio(f[6], g[6]), f[7], f[8], f[9], f[10], f[11], f[3],
		    ratio(f[3], g[3]), f[4], f[12]
	}
}' "$work/tls.csv"
	echo
	echo "TLS: openssl s_time -new -tls1_3 for ${HSECS} s (one client), and -reuse -tls1_3, -tls1_2 -www /1 for resumed handshakes, each with a 1-byte request (relayd with tls session tickets); a $HBYTES-byte download over https through a TLS-terminating tcp relay; CSV in regress/perf/results/tls-$stamp.csv"
fi

section h2
# HTTP/2 over TLS (h2load, ALPN h2) to the HTTP/1.1 backend: 1 KiB
# answers, one connection with 100 streams at once, then 64 connections
# with 10 each.  relayd's row needs "http http2": a relayd without it
# says so and the row is skipped.
# start_relayd_h2 [OPTION PORT NAME]: relayd with "http OPTION" (http2)
# to 127.0.0.1 port PORT ($HTTPB), its row NAME (relayd-h2)
start_relayd_h2()
{
	cat >"$work/relayd.conf" <<CONF
prefork $WORKERS
socket "$work/relayd.sock"
tls directory "$work/ssl"
http protocol h {
	tcp { nodelay, backlog 512 }
	http ${1:-http2}
	tls keypair bench-ec
}
relay h {
	listen on 127.0.0.1 port $LS tls
	protocol h
	forward to 127.0.0.1 port ${2:-$HTTPB}
}
CONF
	if ! "$RELAYD" -n -f "$work/relayd.conf" >"$work/relayd-n.out" 2>&1; then
		echo "  ${3:-relayd-h2}: relayd does not take \"http ${1:-http2}\", skipped" >&2
		return 1
	fi
	run_proxy relayd "$RELAYD" -d -f "$work/relayd.conf"
}

start_haproxy_h2()
{
	start_haproxy_http "http-reuse always" "" \
	    "ssl crt $work/ssl/bench-ec.pem alpn h2,http/1.1"
}

# nginx's keepalive_requests: its default of 1000 ends a connection
# (GOAWAY) that h2load does not open again.  ssl_protocols: Debian 12's
# nginx (1.22) leaves TLS 1.3 out by default, and its clients would be
# on TLS 1.2 while relayd's and HAProxy's are on 1.3 (Debian's own
# nginx.conf names 1.3 too).
start_nginx_h2()
{
	start_nginx_http "ssl http2" "ssl_certificate $work/ssl/bench-ec.crt;
		ssl_certificate_key $work/ssl/private/bench-ec.key;
		ssl_protocols TLSv1.2 TLSv1.3;
		keepalive_requests 100000000;"
}

# h2load for HSECS seconds: requests/s to $work/WHAT, the proxy's CPU
# microseconds per request to $work/WHATc.  h2_run WHAT CONNS STREAMS
h2_run()
{
	c0=$(cpu_ticks)
	$ONCLIENT h2load -D "$HSECS" -c "$2" -m "$3" \
	    "https://127.0.0.1:$LS/1024" >"$work/h2load.out" 2>&1
	c1=$(cpu_ticks)
	awk '/^finished in/ { sub(/,/, "", $4); printf "%d\n", $4 }' \
	    "$work/h2load.out" >>"$work/$1"
	cpu_us_per $((c1 - c0)) "$(awk '/^requests:/ { print $8 }' \
	    "$work/h2load.out")" >>"$work/$1c"
}

# h2load, one connection with 100 streams to an answer of 1 s: seconds
# to the last answer to $work/WHAT.  A pool that pipelines makes the
# later streams wait for the earlier ones.  h2_slow_run WHAT
h2_slow_run()
{
	$ONCLIENT h2load -c 1 -m 100 -n 100 \
	    "https://127.0.0.1:$LS/1024?ms=1000" >"$work/h2slow.out" 2>&1
	awk '/^finished in/ { sub(/s,$/, "", $3); print $3 }' \
	    "$work/h2slow.out" >>"$work/$1"
}

# The TLS version a client gets from the proxy on $LS, to the log: the
# HTTP/2 tables compare like with like only when every proxy says the
# same.  tls_said NAME
tls_said()
{
	v=$(timeout 5 openssl s_client -connect "127.0.0.1:$LS" -alpn h2 \
	    </dev/null 2>/dev/null | sed -n 's/^New, \(TLSv[0-9.]*\),.*/\1/p')
	echo "  $1 speaks ${v:-no TLS}" >&2
}

h2_contender()
{
	name=$1
	shift
	selected "$name" || return
	"$@" || return
	if ! wait_port "$LS"; then
		echo "  $name did not start, skipped" >&2
		stop_proxy
		return
	fi
	tls_said "$name"
	: >"$work/h1"; : >"$work/h1c"; : >"$work/h64"; : >"$work/h64c"
	: >"$work/hslow"
	r=0
	while [ $r -lt "$REPEAT" ]; do
		h2_run h1 1 100
		h2_run h64 64 10
		h2_slow_run hslow
		r=$((r + 1))
	done
	printf '%s,%s,%s,%s,%s,%s\n' "$name" "$(median <"$work/h1")" \
	    "$(median <"$work/h1c")" "$(median <"$work/h64")" \
	    "$(median <"$work/h64c")" "$(median <"$work/hslow")" \
	    >>"$work/h2.csv"
	echo "  $name done" >&2
	stop_proxy
}

if [ -n "${HTTPB:-}" ] && command -v h2load >/dev/null &&
    { selected relayd-h2 || selected haproxy-h2 || selected nginx-h2; }; then
	LS=$LH
	: >"$work/h2.csv"
	h2_contender relayd-h2 start_relayd_h2
	command -v haproxy >/dev/null && h2_contender haproxy-h2 start_haproxy_h2
	command -v nginx >/dev/null && h2_contender nginx-h2 start_nginx_h2
	{
		echo "contender,req_per_s_1x100,cpu_us_per_req_1x100,req_per_s_64x10,cpu_us_per_req_64x10,s_to_last_of_100x1s"
		cat "$work/h2.csv"
	} >"$PERF/results/h2-$stamp.csv"
	echo
	awk -F, '
function ratio(x, y) { return (x > 0 && y > 0) ? sprintf("%.2f", x / y) : "-" }
{ row[NR] = $0; split($1, n, "-"); if (n[1] != "relayd") { for (i = 2; i <= 4; i += 2) if ($i + 0 > best[i] + 0) best[i] = $i + 0 } }
END {
	print "| HTTP/2 contender | req/s, 1 conn x 100 streams | proxy CPU us/req | req/s, 64 conns x 10 streams | proxy CPU us/req | vs the better peer (1x100 / 64x10) | s to the last of 100 streams to a 1 s answer |"
	print "|---|---|---|---|---|---|---|"
	for (i = 1; i <= NR; i++) {
		split(row[i], f, ",")
		printf "| %s | %s | %s | %s | %s | %s / %s | %s |\n", f[1], f[2],
		    f[3], f[4], f[5], ratio(f[2], best[2]), ratio(f[4], best[4]),
		    f[6]
	}
}' "$work/h2.csv"
	echo
	echo "HTTP/2: h2load -D ${HSECS} over TLS (ALPN h2, ECDSA key) for GET /1024, to the HTTP/1.1 backend with keep-alive; and one connection of 100 streams to an answer that takes 1 s (h2load -c 1 -m 100 -n 100: seconds until the last answer); medians of $REPEAT run(s); CSV in regress/perf/results/h2-$stamp.csv"
fi

section h2b
# HTTP/2 to HTTP/2 backends: h2load over TLS (ALPN h2) for a 1 KiB file
# of nghttpd (cleartext, prior knowledge), 64 connections with 10
# streams each; then gRPC unary calls to a python3-grpcio server (ghz
# when make bench-deps could have it from Go's module proxy, else
# h2load with a gRPC body).  relayd with "http http2 backend", HAProxy
# with "proto h2", nginx with grpc_pass (its one HTTP/2 upstream).
# The backend connections the proxy held at the end of each run count.
H2BDOC=$work/h2bdocs
H2BN=18311	# nghttpd
GHZ=$(command -v ghz || { [ -x "$HOME/go/bin/ghz" ] && echo "$HOME/go/bin/ghz"; })
GRATE=${GRATE:-2000}	# gRPC calls a second, paced
GRPCECHO=$PERF/grpcecho/grpcecho
GRPCSERVER=${GRPCSERVER:-go}	# or python: regress/tools/grpctool.py
start_relayd_h2b()
{
	start_relayd_h2 "http2 backend" "$H2BPORT" relayd-h2b
}

start_haproxy_h2b()
{
	cat >"$work/haproxy.cfg" <<CONF
global
	nbthread $WORKERS
	maxconn 1000
defaults
	mode http
	timeout connect 5s
	timeout client 600s
	timeout server 600s
	http-reuse always
frontend h
	bind 127.0.0.1:$LS ssl crt $work/ssl/bench-ec.pem alpn h2,http/1.1
	default_backend b
backend b
	server s 127.0.0.1:$H2BPORT proto h2
CONF
	run_proxy haproxy haproxy -db -f "$work/haproxy.cfg"
}

start_nginx_h2b()
{
	cat >"$work/nginx.conf" <<CONF
$(nginx_head)
http {
	access_log off;
	upstream b { server 127.0.0.1:$H2BPORT; keepalive 128; }
	server {
		listen 127.0.0.1:$LS ssl http2;
		ssl_certificate $work/ssl/bench-ec.crt;
		ssl_certificate_key $work/ssl/private/bench-ec.key;
		ssl_protocols TLSv1.2 TLSv1.3;
		keepalive_requests 100000000;
		location / { grpc_pass grpc://b; }
	}
}
CONF
	run_proxy nginx nginx -c "$work/nginx.conf" -g 'daemon off;'
}

# Established connections from the proxy to port $1
h2b_conns()
{
	ss -Htn state established "( dport = :$1 )" | wc -l
}

# A figure of a round to $hb.WHAT, "-" for none, so that the lines of
# every contender's files are its rounds.  h2b_put WHAT VALUE
h2b_put()
{
	echo "${2:--}" >>"$hb.$1"
}

# h2load for HSECS s to nghttpd's file: req/s, CPU us/req, connections
h2b_run()
{
	c0=$(cpu_ticks)
	$ONCLIENT h2load -D "$HSECS" -c 64 -m 10 \
	    "https://127.0.0.1:$LS/1024" >"$work/h2load.out" 2>&1
	c1=$(cpu_ticks)
	h2b_put bconns "$(h2b_conns "$H2BPORT")"
	h2b_put hreq "$(awk '/^finished in/ { sub(/,/, "", $4);
	    printf "%d\n", $4 }' "$work/h2load.out")"
	h2b_put hcpu "$(cpu_us_per $((c1 - c0)) "$(awk '/^requests:/ {
	    print $8 }' "$work/h2load.out")")"
}

# gRPC unary calls for HSECS s, at RATE a second (none: as fast as
# they go): calls/s to $hb.REQ, the proxy's CPU us/call to $hb.CPU.
# h2b_grpc_calls RATE REQ CPU
h2b_grpc_calls()
{
	c0=$(cpu_ticks)
	if [ -n "$GHZ" ]; then
		$ONCLIENT "$GHZ" --skipTLS --proto "$work/t.proto" \
		    --call t.T.Echo -d '{"b":"aGVsbG8="}' -z "${HSECS}s" \
		    ${1:+--rps "$1"} -c 50 --connections 10 "127.0.0.1:$LS" \
		    >"$work/ghz.out" 2>&1
		c1=$(cpu_ticks)
		n=$(awk '/^  Count:/ { print $2 }' "$work/ghz.out")
		h2b_put "$2" "$(awk '/Requests\/sec:/ { printf "%d\n", $2 }' \
		    "$work/ghz.out")"
	else
		$ONCLIENT h2load -D "$HSECS" -c 10 -m 5 \
		    ${1:+--rps $(($1 / 10))} -d "$work/grpc.msg" \
		    -H 'content-type: application/grpc' -H 'te: trailers' \
		    "https://127.0.0.1:$LS/t.T/Echo" >"$work/h2load.out" 2>&1
		c1=$(cpu_ticks)
		n=$(awk '/^requests:/ { print $8 }' "$work/h2load.out")
		h2b_put "$2" "$(awk '/^finished in/ { sub(/,/, "", $4);
		    printf "%d\n", $4 }' "$work/h2load.out")"
	fi
	h2b_put "$3" "$(cpu_us_per $((c1 - c0)) "$n")"
}

# gRPC unary calls: as fast as they go, with the backend connections the
# proxy held; then at GRATE a second, which every proxy keeps: like work
# for each, where the rate of the first moves with the proxy (and with
# the server's pace), and the CPU per call with the rate
h2b_grpc_run()
{
	h2b_grpc_calls "" greq gcpu
	h2b_put gconns "$(h2b_conns "$GRPCPORT")"
	h2b_grpc_calls "$GRATE" gpreq gpcpu
}

# One round of a contender: an h2load run to nghttpd, then the gRPC
# calls (with the gRPC server), the proxy started afresh for each.
# h2b_contender NAME START-FUNCTION
h2b_contender()
{
	name=$1
	hb=$work/h2b.$name
	H2BPORT=$H2BN
	if ! "$2"; then
		# it takes no HTTP/2 backends: not in this round or the next
		echo "$name" >>"$work/h2b.out"
		return
	fi
	if ! wait_port "$LS"; then
		echo "  $name did not start, skipped" >&2
		stop_proxy
		echo "$name" >>"$work/h2b.out"
		return
	fi
	grep -qx "$name" "$work/h2b.names" || echo "$name" >>"$work/h2b.names"
	[ "$hr" -eq 0 ] && tls_said "$name"
	h2b_run
	stop_proxy
	if [ -n "${GRPCPORT:-}" ]; then
		H2BPORT=$GRPCPORT
		if "$2" && wait_port "$LS"; then
			h2b_grpc_run
		else
			for x in greq gcpu gconns gpreq gpcpu; do
				h2b_put $x -
			done
		fi
		stop_proxy
	fi
	echo "  $name round $((hr + 1)) of $REPEAT done" >&2
}

# The median of the rounds of $hb.WHAT that have a figure
h2b_median()
{
	[ -f "$hb.$1" ] || : >"$hb.$1"
	grep -v '^-$' "$hb.$1" | median
}

# A contender's CPU per request or call (hcpu, gcpu, gpcpu) over the
# lower of HAProxy's and nginx's in the same round, a ratio a round:
# the median and range of those, as for TLS.  "-" without a peer.
# h2b_ratio NAME WHAT
h2b_ratio()
{
	for c in haproxy-h2b nginx-h2b; do
		[ -s "$work/h2b.$c.$2" ] || : >"$work/h2b.$c.$2"
	done
	if paste -d' ' "$work/h2b.$1.$2" "$work/h2b.haproxy-h2b.$2" \
	    "$work/h2b.nginx-h2b.$2" | awk '
	    { b = ""
	      if ($2 + 0 > 0) b = $2
	      if ($3 + 0 > 0 && (b == "" || $3 + 0 < b + 0)) b = $3
	      if ($1 + 0 > 0 && b != "") { printf "%.2f\n", $1 / b; n++ } }
	    END { exit n == 0 }' >"$work/ratios"; then
		median <"$work/ratios"
	else
		echo "-"
	fi
}

if command -v h2load >/dev/null && command -v nghttpd >/dev/null &&
    { selected relayd-h2b || selected haproxy-h2b || selected nginx-h2b; }; then
	LS=$LH
	mkdir -p "$H2BDOC"
	head -c 1024 /dev/zero | tr '\0' x >"$H2BDOC/1024"
	$ONCLIENT nghttpd --no-tls -n 1 -d "$H2BDOC" "$H2BN" \
	    >"$work/nghttpd.log" 2>&1 & pids="$pids $!"
	# the gRPC server: grpc-go's (make bench-deps builds it), else
	# python3-grpcio's; GRPCSERVER=python takes the latter
	GRPCPORT=
	GRPCNAME=
	if [ "$GRPCSERVER" != python ] && [ -x "$GRPCECHO" ]; then
		$ONCLIENT "$GRPCECHO" "$work/grpc.port" 100000 &
		pids="$pids $!"
		GRPCNAME="a grpc-go server (regress/perf/grpcecho)"
	elif /usr/bin/python3 -c 'import grpc' 2>/dev/null; then
		$ONCLIENT /usr/bin/python3 "$TOP/regress/tools/grpctool.py" \
		    server "$work/grpc.port" 100000 & pids="$pids $!"
		GRPCNAME="a python3-grpcio server"
	fi
	if [ -n "$GRPCNAME" ]; then
		i=0
		while [ ! -s "$work/grpc.port" ] && [ $i -lt 100 ]; do
			i=$((i + 1)); sleep 0.1
		done
		GRPCPORT=$(cat "$work/grpc.port")
		printf 'syntax = "proto3";\npackage t;\nmessage M { bytes b = 1; }\nservice T { rpc Echo(M) returns (M); }\n' \
		    >"$work/t.proto"
		# "hello" as message M, framed for gRPC (h2load's body)
		printf '\000\000\000\000\007\012\005hello' >"$work/grpc.msg"
	fi
	wait_port "$H2BN" || echo "  nghttpd did not start" >&2
	: >"$work/h2b.csv"
	: >"$work/h2b.names"
	: >"$work/h2b.out"
	# the contenders there are, each round in another order: the
	# machine's drift from minute to minute moves all of them alike
	all="relayd-h2b"
	command -v haproxy >/dev/null && all="$all haproxy-h2b"
	command -v nginx >/dev/null && all="$all nginx-h2b"
	# (hr, hi, hn: the functions called use r, i and n of their own)
	hn=$(echo "$all" | wc -w)
	hr=0
	while [ $hr -lt "$REPEAT" ]; do
		hi=0
		while [ $hi -lt "$hn" ]; do
			name=$(echo "$all" | cut -d' ' -f$(((hi + hr) % hn + 1)))
			if selected "$name" && ! grep -qx "$name" "$work/h2b.out"
			then
				h2b_contender "$name" "start_${name%-h2b}_h2b"
			fi
			hi=$((hi + 1))
		done
		hr=$((hr + 1))
	done
	while read -r name; do
		hb=$work/h2b.$name
		printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$name" \
		    "$(h2b_median hreq)" "$(h2b_median hcpu)" \
		    "$(h2b_median bconns)" "$(h2b_median greq)" \
		    "$(h2b_median gcpu)" "$(h2b_median gconns)" \
		    "$(h2b_median gpreq)" "$(h2b_median gpcpu)" \
		    "$(h2b_ratio "$name" hcpu)" "$(h2b_ratio "$name" gcpu)" \
		    "$(h2b_ratio "$name" gpcpu)" >>"$work/h2b.csv"
	done <"$work/h2b.names"
	{
		echo "contender,req_per_s_64x10,cpu_us_per_req,backend_conns,grpc_calls_per_s,cpu_us_per_call,grpc_backend_conns,grpc_paced_calls_per_s,cpu_us_per_paced_call,cpu_per_req_vs_better_peer_same_round,cpu_per_call_vs_better_peer_same_round,cpu_per_paced_call_vs_better_peer_same_round"
		cat "$work/h2b.csv"
	} >"$PERF/results/h2b-$stamp.csv"
	echo
	awk -F, '
BEGIN {
	print "| HTTP/2 backends | req/s, 64 conns x 10 streams | proxy CPU us/req | backend conns | gRPC unary calls/s | proxy CPU us/call | backend conns | calls/s, paced at '"$GRATE"' | proxy CPU us/call | CPU vs the better peer, same round (req / call / paced call) |"
	print "|---|---|---|---|---|---|---|---|---|---|"
}
{
	printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s |\n",
	    $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12
}' "$work/h2b.csv"
	echo
	echo "HTTP/2 backends: h2load -D ${HSECS} -c 64 -m 10 over TLS (ALPN h2, ECDSA key) for a 1 KiB file of nghttpd (h2c); gRPC unary calls to ${GRPCNAME:-no gRPC server} ($( [ -n "$GHZ" ] && echo "ghz -c 50 --connections 10" || echo "h2load -c 10 -m 5 with a gRPC body")), unpaced and then paced at $GRATE a second (GRATE=N); relayd \"http http2 backend\", HAProxy \"proto h2\", nginx grpc_pass; backend conns: the proxy's connections to the backend after a run; medians of $REPEAT round(s), the contenders in turn, each round in another order; CPU vs the better peer: a contender's CPU over the lower of HAProxy's and nginx's in the same round, the median of the rounds; CSV in regress/perf/results/h2b-$stamp.csv"
fi

section shortconn
# Short connections over veth links in network namespaces of their own
# (shortconn.sh): connect, 100 bytes each way, close, 4 at a time, for
# SCSECS seconds, with the kernel's port range; the relay's connections
# to the server end in TIME_WAIT on its side.  tcp_tw_reuse 0, and 1 (a
# new namespace's default is 2: loopback only).
if { selected relayd-shortconn || selected haproxy-shortconn; } &&
    ip netns add "rdbench$$" 2>/dev/null; then
	ip netns del "rdbench$$"
	stop_proxy
	: >"$work/short.txt"
	for reuse in 0 1; do
		for p in relayd haproxy; do
			selected $p-shortconn || continue
			[ $p = haproxy ] && ! command -v haproxy >/dev/null &&
			    continue
			echo "bench: $p-shortconn, tcp_tw_reuse $reuse, ${SCSECS} s" >&2
			sh "$PERF/shortconn.sh" $p $reuse "$SCSECS" |
			    sed "s/^/$reuse /" >>"$work/short.txt"
		done
	done
	{
		echo "tw_reuse,contender,conn_per_s,ok,failed,timewait"
		tr ' ' , <"$work/short.txt"
	} >"$PERF/results/shortconn-$stamp.csv"
	echo
	awk '{ t = $4 + $5
	    if (NR == 1) {
		print "| short connections over veth | tcp_tw_reuse | conn/s | sessions | failed | failed % | TIME_WAIT at the end |"
		print "|---|---|---|---|---|---|---|" }
	    printf "| %s | %s | %s | %s | %s | %.1f | %s |\n", $2, $1, $3, t, $5,
		(t > 0) ? 100 * $5 / t : 0, $6 }' "$work/short.txt"
	echo
	echo "Short connections: client, proxy and server in three network namespaces on veth links, ${SCSECS} s a row; CSV in regress/perf/results/shortconn-$stamp.csv"
fi

section rdr
# Redirections (rdrbench.sh): in network namespaces, a direct routed
# connection, a redirection (nftables DNAT) and a relay (splice) to the
# same server: 1 and 4 streams, short connections; then how long a dead
# host takes to leave the redirection's rules.
if { selected rdr-direct || selected rdr-redirect || selected rdr-relay; } &&
    ip netns add "rdbench$$" 2>/dev/null; then
	ip netns del "rdbench$$"
	stop_proxy
	: >"$work/rdr.txt"
	rd=""
	for c in direct redirect relay; do
		selected rdr-$c && rd="$rd $c"
	done
	r=0
	while [ $r -lt "$REPEAT" ]; do
		echo "bench: redirections run $((r + 1)) of $REPEAT" >&2
		# shellcheck disable=SC2086
		RDRBYTES=$RDBYTES sh "$PERF/rdrbench.sh" "$RDSECS" $rd \
		    >>"$work/rdr.txt"
		r=$((r + 1))
	done
	{
		echo "contender,gbit_1,gbit_4,conn_per_s,conn_errors"
		grep -v '^rdr-failover' "$work/rdr.txt" | tr ' ' ,
	} >"$PERF/results/rdr-$stamp.csv"
	echo
	# medians by 4-stream throughput; ratios to the direct row
	grep -v '^rdr-failover' "$work/rdr.txt" | sort -k1,1 -k3,3n | awk '
function ratio(x, y) { return (x > 0 && y > 0) ? sprintf("%.2f", x / y) : "-" }
{ n[$1]++; row[$1, n[$1]] = $0 }
END {
	for (c in n) med[c] = row[c, int((n[c] + 1) / 2)]
	split(med["rdr-direct"], d, " ")
	print "| redirection contender | 1 stream Gbit/s | 4 streams Gbit/s | conn/s | vs direct (1 / 4 / conn) | errors |"
	print "|---|---|---|---|---|---|"
	split("rdr-direct rdr-redirect rdr-relay", order, " ")
	for (i = 1; i <= 3; i++) {
		if (!(order[i] in med)) continue
		split(med[order[i]], f, " ")
		printf "| %s | %s | %s | %s | %s / %s / %s | %s |\n", f[1], f[2],
		    f[3], f[4], ratio(f[2], d[2]), ratio(f[3], d[3]),
		    ratio(f[4], d[4]), f[5]
	}
}'
	awk '$1 == "rdr-failover" { ms = ms (n++ ? ", " : "") $2 }
	    END { if (n) printf "\nFailover: a dead host left the redirection'"'"'s rules in %s ms (check tcp, interval 1 s).\n", ms }' \
	    "$work/rdr.txt"
	echo
	echo "Redirections: client, relayd host and server in three network namespaces on veth links; ${RDSECS} s of short connections, $RDBYTES bytes a stream; medians of $REPEAT run(s); CSV in regress/perf/results/rdr-$stamp.csv"
fi

section dns
# DNS over UDP (dnsbench.sh): dnsperf against a fast local server,
# directly, through relayd's dns relay and through dnsdist (one outgoing
# socket, its default, and 16), each proxy on one CPU; DSECS seconds at
# full load, then DSECS at a steady rate for the latency.
if { selected dns-direct || selected relayd-dns || selected dnsdist-dns ||
    selected dnsdist-ports-dns; } &&
    command -v dnsperf >/dev/null; then
	stop_proxy
	: >"$work/dns.txt"
	dns=""
	for c in dns-direct relayd-dns dnsdist-dns dnsdist-ports-dns; do
		selected $c && dns="$dns $c"
	done
	r=0
	while [ $r -lt "$REPEAT" ]; do
		echo "bench: dns run $((r + 1)) of $REPEAT, ${DSECS} s a row" >&2
		# shellcheck disable=SC2086
		sh "$PERF/dnsbench.sh" "$DSECS" $dns >>"$work/dns.txt"
		r=$((r + 1))
	done
	{
		echo "contender,queries_per_s,lost,cpu_s_per_100k,avg_us,p99_us"
		tr ' ' , <"$work/dns.txt"
	} >"$PERF/results/dns-$stamp.csv"
	echo
	# the median run of each contender, by queries/s
	sort -k1,1 -k2,2n "$work/dns.txt" | awk '
function ratio(x, y) { return (x > 0 && y > 0) ? sprintf("%.2f", x / y) : "-" }
{ n[$1]++; row[$1, n[$1]] = $0 }
END {
	for (c in n) { split(row[c, int((n[c] + 1) / 2)], f, " "); med[c] = row[c, int((n[c] + 1) / 2)] }
	split(med["dnsdist-dns"], g, " "); split(med["dns-direct"], d, " ")
	print "| DNS contender | queries/s | vs direct | vs dnsdist | lost | CPU s/100k queries | latency avg/p99 us |"
	print "|---|---|---|---|---|---|---|"
	split("dns-direct relayd-dns dnsdist-dns dnsdist-ports-dns", order, " ")
	for (i = 1; i <= 4; i++) {
		if (!(order[i] in med)) continue
		split(med[order[i]], f, " ")
		printf "| %s | %s | %s | %s | %s | %s | %s / %s |\n", f[1], f[2],
		    ratio(f[2], d[2]), ratio(f[2], g[2]), f[3], f[4], f[5], f[6]
	}
}'
	echo
	echo "DNS: dnsperf, one client, 500 queries in flight, ${DSECS} s; latency at ${RATE:-20000} queries/s; dnsdist-ports-dns: 16 outgoing sockets a backend, randomized if the dnsdist has it (1.8 and later), in turn otherwise; relayd: a pool of 16 a backend, renewed after 1024 queries or a second; medians of $REPEAT run(s); CSV in regress/perf/results/dns-$stamp.csv"
fi

section limits
# Limits per client source under a flood (limbench.sh): relayd, HAProxy
# with a stick table, nginx with limit_conn/limit_req and dnsdist with
# MaxQPSIPRule, the same limits, in a network namespace; a flood of
# connections, of HTTP requests, then of DNS queries, from one source,
# while ten others make theirs.
if { selected relayd-limits || selected haproxy-limits ||
    selected nginx-limits || selected dnsdist-limits; } &&
    ip netns add "limbench$$" 2>/dev/null; then
	ip netns del "limbench$$"
	stop_proxy
	: >"$work/lim.txt"
	lc=""
	for c in relayd haproxy nginx dnsdist; do
		selected $c-limits || continue
		[ $c != relayd ] && ! command -v $c >/dev/null && continue
		lc="$lc $c"
	done
	r=0
	while [ $r -lt "$REPEAT" ]; do
		echo "bench: limits run $((r + 1)) of $REPEAT, ${LSECS} s of flood a round" >&2
		# shellcheck disable=SC2086
		sh "$PERF/limbench.sh" "$LSECS" $lc >>"$work/lim.txt"
		r=$((r + 1))
	done
	{
		echo "contender,round,refused,cpu_us_per_refused,good,p99ms_alone,p99ms_flood,cpu_pct"
		awk '{ print $1 "," $2 "," $4 "," $6 "," $8 "," $10 "," $12 "," $14 }' \
		    "$work/lim.txt"
	} >"$PERF/results/limits-$stamp.csv"
	echo
	# the median run of each contender and round, by CPU per refusal
	sort -k1,1 -k2,2 -k6,6n "$work/lim.txt" | awk '
function ratio(x, y) { return (x + 0 > 0 && y + 0 > 0) ? sprintf("%.2f", x / y) : "-" }
{ k = $1 " " $2; n[k]++; row[k, n[k]] = $0 }
END {
	for (k in n) med[k] = row[k, int((n[k] + 1) / 2)]
	print "| limits contender | flood | refused | proxy CPU the flood added, us/refused | vs peer | proxy CPU over the flood, % of a core | good clients served | their p99 ms alone / under the flood |"
	print "|---|---|---|---|---|---|---|---|"
	# the peer: HAProxy, for DNS dnsdist
	nr = 0
	split("conn http dns", want, " ")
	for (w = 1; w <= 3; w++)
		for (k in n) {
			split(k, kr, " ")
			if (kr[2] == want[w] && !(want[w] in seen)) {
				seen[want[w]] = 1
				rounds[++nr] = want[w]
			}
		}
	split("relayd haproxy nginx dnsdist", order, " ")
	for (j = 1; j <= nr; j++) {
		# (in, not a lookup, which would make an empty row of it)
		pk = (rounds[j] == "dns" ? "dnsdist " : "haproxy ") rounds[j]
		split(pk in med ? med[pk] : "", h, " ")
		for (i = 1; i <= 4; i++) {
			k = order[i] " " rounds[j]
			if (!(k in med)) continue
			split(med[k], f, " ")
			printf "| %s | %s | %s | %s | %s | %s | %s | %s / %s |\n",
			    f[1] "-limits", f[2], f[4], f[6], ratio(f[6], h[6]),
			    f[14] == "" ? "-" : f[14], f[8], f[10], f[12]
		}
	}
}'
	echo
	echo "Limits: in a network namespace; conn: 20 connections at once and 50 a second a source (nginx: 20 at once, it has no rate for streams), relaybench's short connections from 127.0.0.1 (32 processes) for ${LSECS} s, as fast as they go, a connection not made in a millisecond failed (relayd drops SYNs over a limit, as pf does); http: 50 requests a second a source, burst 50, 429 over it (relayd reads a connection again after a 429 when its source may ask again, at most a second later; HAProxy and nginx answer each request at once), wrk (16 connections) from 127.0.0.1 for ${LSECS} s; dns: 50 queries a second a source, dropped over it, dnsperf from 127.0.0.1 for ${LSECS} s, the peer is dnsdist; the floods as fast as they go at nice 19; meanwhile ten other sources make ten connections, requests or queries a second each (from the flood's second second to its last but one, and as long before it); relayd keeps its connection limits in nftables; one worker each; medians of $REPEAT run(s); CSV in regress/perf/results/limits-$stamp.csv"
fi

section failover
# High availability: the keepalived pair of regress/ha (two nodes, a
# client, in network namespaces), each failure of the active node and
# the client's outage; redirected streams through a failover.
if { selected ha-failover || selected ha-streams; } &&
    command -v keepalived >/dev/null && command -v kyua >/dev/null &&
    ip netns add "habench$$" 2>/dev/null; then
	ip netns del "habench$$"
	stop_proxy
	cases=""
	selected ha-failover && cases="ha_test.sh:failover"
	selected ha-streams &&
	    cases="$cases ha_test.sh:rdr_streams_hash ha_test.sh:rdr_streams_conntrackd"
	: >"$work/ha.txt"
	r=0
	while [ $r -lt "$REPEAT" ]; do
		echo "bench: failover run $((r + 1)) of $REPEAT" >&2
		# shellcheck disable=SC2086
		(cd "$TOP/regress/ha" && kyua --logfile=/dev/null test \
		    --results-file="$work/ha$r.db" $cases >/dev/null 2>&1)
		(cd "$TOP/regress/ha" && kyua --logfile=/dev/null report \
		    --results-file="$work/ha$r.db" --verbose \
		    --results-filter=passed,failed,broken,skipped) | awk '
/^===> ha_test.sh:/ { c = substr($2, 12) }
/^Result:/ && $2 != "passed" { print c, "result", $2 }
/: outage [0-9]+ ms lost/ { sub(/:/, ""); n = split($0, f, " ");
	what = f[1]; for (i = 2; i <= n - 5; i++) what = what "_" f[i]
	print c, what, f[n - 3], f[n] }
/^streams [0-9]+ ok/ { print c, "streams", $4, $2 }' >>"$work/ha.txt"
		r=$((r + 1))
	done
	{
		echo "case,what,value,of"
		tr ' ' , <"$work/ha.txt"
	} >"$PERF/results/failover-$stamp.csv"
	echo
	sort -k1,1 -k2,2 -k3,3n "$work/ha.txt" | awk '
$2 == "result" { bad = bad " " $1 " " $3; next }
{ k = $1 " " $2; n[k]++; v[k, n[k]] = $3; o[k, n[k]] = $4 }
function med(k) { return v[k, int((n[k] + 1) / 2)] }
function row(k, label) {
	if (!(k in n)) return
	if (k ~ /streams/)
		printf "| %s | %s of %s survived (%s) |\n", label, med(k),
		    o[k, 1], range(k)
	else
		printf "| %s | %s ms (%s), %s probes lost |\n", label, med(k),
		    range(k), o[k, int((n[k] + 1) / 2)]
}
function range(k,   i, s) {
	for (i = 1; i <= n[k]; i++) s = s (i > 1 ? ", " : "") v[k, i]
	return s
}
END {
	print "| failure of the active node | client outage (runs) |"
	print "|---|---|"
	row("failover backends_gone", "all its backends down (demote)")
	row("failover relayd_stopped", "relayd stopped (SIGTERM, demote)")
	row("failover relayd_killed", "relayd killed (SIGKILL, keepalived script)")
	row("failover relay_process_hung", "relay process hung (SIGSTOP, heartbeat)")
	row("failover failback", "failback when it recovers")
	row("rdr_streams_hash streams", "redirected streams, one source-hash key on both nodes")
	row("rdr_streams_conntrackd streams", "redirected streams, conntrackd (FTFW)")
	if (bad != "") print "\nNot passed:" bad
}'
	echo
	echo "Failover: the keepalived pair of regress/ha (unicast VRRP, advert 1 s, priorities 250/200, relayd interval 1); a client connecting every 100 ms (300 ms timeout), outage from its last answer before to its first after; medians of $REPEAT run(s); CSV in regress/perf/results/failover-$stamp.csv"
fi

section maglev
# Source-hash redirections when one of N hosts goes down: the clients
# that change host with relayd's Maglev table and with a hash modulo
# the hosts that are up (maglevbench: the same table code, 100,000
# random clients, each host lost in turn).
if selected rdr-maglev && [ -x "$PERF/maglevbench" ]; then
	echo
	echo "| hosts | clients moved, Maglev (worst) | clients moved, hash mod N (worst) | the lost host's share | clients of the hosts that stay moved, Maglev |"
	echo "|---|---|---|---|---|"
	for n in 4 8 16 32; do
		"$PERF/maglevbench" $n | awk '{ printf "| %s | %s %% (%s %%) | %s %% (%s %%) | %s %% | %s %% |\n",
		    $1, $3, $5, $7, $9, $11, $13 }'
	done
	echo
	echo "Maglev: $(awk '/define MAGLEV_SLOTS/ { print $3 }' "$TOP/usr.sbin/relayd/relayd.h") slots; the target is at most 1/N + 2 % of the clients moved"
fi

section scaleout
# Scaling out: the three nodes of regress/cluster behind BIRD's plain
# ECMP and behind relayd's router (a resilient nexthop group), each
# failure of node 1: when it was withdrawn, the outage of a client
# connecting every 50 ms, and the established flows of nodes 2 and 3
# that were cut; and the redirection's clients that moved.
if selected cluster && command -v bird >/dev/null &&
    command -v kyua >/dev/null && ip netns add "clbench$$" 2>/dev/null; then
	ip netns del "clbench$$"
	stop_proxy
	: >"$work/cluster.txt"
	r=0
	while [ $r -lt "$REPEAT" ]; do
		echo "bench: scale-out run $((r + 1)) of $REPEAT" >&2
		(cd "$TOP/regress/cluster" && kyua --logfile=/dev/null \
		    --variable="test_suites.relayd.cluster_edge_failures=backends sigterm sigkill sigstop link" \
		    test --results-file="$work/cl$r.db" >/dev/null 2>&1)
		(cd "$TOP/regress/cluster" && kyua --logfile=/dev/null report \
		    --results-file="$work/cl$r.db" --verbose \
		    --results-filter=passed,failed,broken,skipped) | awk '
/^===> cluster_test.sh:/ { c = substr($2, 17) }
/^Result:/ && $2 != "passed" { print c, "result", $2 }
/: withdrawn in [0-9]+ ms, outage/ { sub(/:/, "", $1)
	print c, $1, $4, $7, $15, $17 }
/^host loss: clients moved/ { print c, "hostloss", $5, $9, 0, 0 }
/^node loss: clients moved/ { print c, "nodeloss", $5, 0, 0, 0 }' \
		    >>"$work/cluster.txt"
		r=$((r + 1))
	done
	{
		echo "case,what,a,b,c,d"
		tr ' ' , <"$work/cluster.txt"
	} >"$PERF/results/scaleout-$stamp.csv"
	mod=$("$PERF/maglevbench" 4 2>/dev/null | awk '{ print $7 }')
	echo
	sort -k1,1 -k2,2 "$work/cluster.txt" | awk -v mod="$mod" '
$2 == "result" { bad = bad " " $1 " " $3; next }
{ k = $1 " " $2; n[k]++; w[k, n[k]] = $3; o[k, n[k]] = $4
  c[k, n[k]] = $5; t[k, n[k]] = $6 }
function med(a, k,   i, j, x, v) {
	for (i = 1; i <= n[k]; i++) v[i] = a[k, i]
	for (i = 2; i <= n[k]; i++)
		for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
			x = v[j]; v[j] = v[j - 1]; v[j - 1] = x }
	return v[int((n[k] + 1) / 2)]
}
function cell(e, f,   k) {
	k = e " " f
	if (!(k in n)) return " - | - | - "
	return sprintf(" %s ms | %s ms | %s of %s ", med(w, k), med(o, k),
	    med(c, k), med(t, k))
}
function row(f, label) {
	printf "| %s |%s|%s|\n", label, cell("failures", f),
	    cell("edge_resilient", f)
}
END {
	print "| failure of node 1 | withdrawn, BIRD ECMP | outage | flows of nodes 2-3 cut | withdrawn, relayd router | outage | flows of nodes 2-3 cut |"
	print "|---|---|---|---|---|---|---|"
	row("backends", "its backends down (next check)")
	row("sigterm", "relayd stopped (SIGTERM)")
	row("sigkill", "relayd killed (SIGKILL)")
	row("sigstop", "relay process hung (SIGSTOP)")
	row("link", "its link down (BFD / the check)")
	k = "rdr_maglev hostloss"
	if (k in n)
		printf "\nRedirection (source-hash over 4 hosts, 64 clients): a host lost moved %s clients of 64 (the lost host had %s; none of the others), Maglev; a hash modulo the hosts moves %s %% of all clients (maglevbench, 4 hosts).  A node lost: %s clients changed host.\n",
		    med(w, k), med(o, k), mod, med(w, "rdr_maglev nodeloss")
	if (bad != "") print "\nNot passed:" bad
}'
	echo
	echo "Scale-out: regress/cluster, three relayd nodes (interval 1) behind a router, BIRD 2 with BGP and BFD (100 ms x 3) or relayd's router (resilient nexthop group, interval 1); withdrawn: from the failure to the router's route without node 1; outage: a client connecting every 50 ms (300 ms timeout), from its last answer before to its first after; 60 flows held over the three nodes; medians of $REPEAT run(s); CSV in regress/perf/results/scaleout-$stamp.csv"
fi

section
# a whole run's section times are the next estimate's
[ -z "${ONLY:-}" ] && cp "$work/timings" "$PERF/results/timings-$MODE"

# The chart: each table's headline, and the proxy's CPU for a unit of
# its work, a row of two panels a table that ran.
# chart_dat CSV NAMECOL RATECOL CPUCOL: "name rate cpu", first numbers
chart_dat()
{
	[ -s "$1" ] || return 0
	awk -F, -v n="$2" -v r="$3" -v c="$4" 'NR > 1 {
	    split($r, a, " "); split($c, b, " ")
	    if (a[1] != "" && a[1] != "-") print $n, a[1], (b[1] == "-" || b[1] == "") ? 0 : b[1] }' "$1"
}
if command -v gnuplot >/dev/null; then
	R=$PERF/results
	awk -F, '{ split($2, a, " "); split($4, c, " ")
	    print $1, a[1], c[1] }' "$work/results.csv" >"$work/p-tcp.dat"
	chart_dat "$R/http-$stamp.csv" 1 2 7 >"$work/p-http.dat"
	chart_dat "$R/tls-$stamp.csv" 1 2 7 >"$work/p-tls.dat"
	chart_dat "$R/dns-$stamp.csv" 1 2 4 >"$work/p-dns.dat"
	chart_dat "$R/rdr-$stamp.csv" 1 4 4 | awk '{ print $1, $2, 0 }' >"$work/p-rdr.dat"
	rows=0
	plots=""
	for t in tcp http tls dns rdr; do
		[ -s "$work/p-$t.dat" ] || continue
		rows=$((rows + 1))
		case $t in
		tcp)	rl="TCP: Gbit/s, 1 stream"; cl="proxy CPU s/GiB" ;;
		http)	rl="HTTP: requests/s (1 KiB)"; cl="proxy CPU us/request" ;;
		tls)	rl="TLS: new handshakes/s"; cl="proxy CPU us/handshake" ;;
		dns)	rl="DNS: queries/s"; cl="proxy CPU s/100k queries" ;;
		rdr)	rl="redirections: connections/s"; cl="" ;;
		esac
		plots="$plots
set title \"$rl\"
plot \"$work/p-$t.dat\" using 2:xtic(1) notitle lc rgb \"#4466aa\"
"
		if [ -n "$cl" ]; then
			plots="$plots
set title \"$cl\"
plot \"$work/p-$t.dat\" using 3:xtic(1) notitle lc rgb \"#aa4444\"
"
		else
			plots="$plots
set multiplot next
"
		fi
	done
	if [ "$rows" -gt 0 ] && gnuplot <<PLOT 2>"$work/gnuplot.err"; then
set terminal pngcairo size 1400,$((rows * 330 + 60)) noenhanced
set output "$R/bench-$stamp.png"
set multiplot layout $rows,2 title "relayd bench $stamp ($REPEAT run(s), medians, loopback, 2 cores)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set grid ytics
set xtics rotate by -20 font ",8"
set yrange [0:*]
$plots
unset multiplot
PLOT
		echo "Chart in regress/perf/results/bench-$stamp.png"
	else
		echo "No chart: nothing to plot"
	fi
else
	echo "No chart: gnuplot is not installed (make bench-deps)"
fi
