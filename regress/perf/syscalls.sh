#!/bin/sh
# System calls of relayd's relay process per TCP session and per HTTP
# keep-alive request, counted by strace -c on 127.0.0.1.
#
#   syscalls.sh [SECONDS]
#
# tcp: relaybench conn (connect, 100 bytes each way, close; one client)
# through a tcp relay to an echo backend; http: wrk, one connection,
# GET of 1 KiB answers through an http relay; tls: openssl s_time
# -reuse -tls1_2 -www /1 (a resumed TLS 1.2 session, a 1-byte answer)
# through a tcp relay that terminates TLS; tls-new: openssl s_time -new
# -tls1_3 (a full handshake, the client leaves after it) through the same
# relay, counted in the relay process and, apart, in its ca process,
# which signs for it.  Prints a table: the calls per session or request,
# and each call's share.  strace slows the relay down: the counts are
# what matters here, not the rates.

cd "$(dirname "$0")" || exit 1
PERF=$(pwd)
TOP=$(cd ../.. && pwd)
RB=$PERF/relaybench
RELAYD=$TOP/usr.sbin/relayd/relayd
secs=${1:-3}

[ "$(id -u)" -eq 0 ] || { echo "syscalls: run as root" >&2; exit 1; }
command -v strace >/dev/null || { echo "syscalls: no strace (make bench-deps)" >&2; exit 1; }
sh "$TOP/etc/mkuser.sh" || exit 1

work=$(mktemp -d)
pids=""
cleanup()
{
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

"$RB" echo "$work/echo.port" 600 & pids="$pids $!"
"$RB" http "$work/http.port" 600 & pids="$pids $!"
while [ ! -s "$work/echo.port" ] || [ ! -s "$work/http.port" ]; do
	sleep 0.1
done
lt=$((20000 + $$ % 10000))
mkdir -p "$work/ssl/private"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$work/ssl/private/sc.key" -out "$work/ssl/sc.crt" -days 2 \
    -subj /CN=127.0.0.1 2>/dev/null || { echo "syscalls: no key" >&2; exit 1; }
cat >"$work/relayd.conf" <<CONF
prefork 1
socket "$work/relayd.sock"
tls directory "$work/ssl"
protocol t { tcp { nodelay, backlog 512 } }
http protocol h { tcp { nodelay, backlog 512 } }
protocol s {
	tcp { nodelay, backlog 512 }
	tls keypair sc
	tls session tickets
}
relay t {
	listen on 127.0.0.1 port $lt
	protocol t
	forward to 127.0.0.1 port $(cat "$work/echo.port")
}
relay h {
	listen on 127.0.0.1 port $((lt + 1))
	protocol h
	forward to 127.0.0.1 port $(cat "$work/http.port")
}
relay s {
	listen on 127.0.0.1 port $((lt + 2)) tls
	protocol s
	forward to 127.0.0.1 port $(cat "$work/http.port")
}
CONF
chmod 600 "$work/relayd.conf"
"$RELAYD" -d -f "$work/relayd.conf" 2>"$work/relayd.log" &
rpid=$!
pids="$pids $rpid"
i=0
until "$RB" probe $lt 2>/dev/null && "$RB" probe $((lt + 1)) 2>/dev/null &&
    "$RB" probe $((lt + 2)) 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 100 ] && { cat "$work/relayd.log"; exit 1; }
	sleep 0.1
done
relay=$(pgrep -P $rpid -f 'relayd: relay')
ca=$(pgrep -P $rpid -f 'relayd: ca')

# count WHAT UNITS: the strace -c table in $work/WHAT, per unit
count()
{
	awk -v n="$2" -v what="$1" '
	$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" {
		c[$NF] = $4; total += $4 }
	END {
		printf "%s: %d, %.1f system calls each\n", what, n,
		    (n > 0) ? total / n : 0
		for (k in c)
			printf "  %-14s %6.2f\n", k, (n > 0) ? c[k] / n : 0
	}' "$work/$1" | { read -r head; echo "$head"; sort -k2 -rn; }
}

strace -c -f -p "$relay" -o "$work/tcp" 2>/dev/null &
spid=$!
sleep 0.5
n=$("$RB" conn $lt "$secs" 1 | awk -v s="$secs" '{ print $1 * s }')
sleep 0.2
kill -INT $spid; wait $spid
count tcp "$n"

if command -v wrk >/dev/null; then
	strace -c -f -p "$relay" -o "$work/http" 2>/dev/null &
	spid=$!
	sleep 0.5
	n=$(wrk -t 1 -c 1 -d "${secs}s" "http://127.0.0.1:$((lt + 1))/1024" |
	    awk '/requests in/ { print $1 }')
	sleep 0.2
	kill -INT $spid; wait $spid
	count http "$n"
else
	echo "http: no wrk (make bench-deps)"
fi

strace -c -f -p "$relay" -o "$work/tls" 2>/dev/null &
spid=$!
sleep 0.5
n=$(openssl s_time -connect "127.0.0.1:$((lt + 2))" -reuse -tls1_2 \
    -www /1 -time "$secs" 2>/dev/null |
    awk '/connections in .* real/ { print $1 }')
sleep 0.2
kill -INT $spid; wait $spid
count tls "${n:-0}"

# a full TLS 1.3 handshake: the relay and its ca, each counted apart
strace -c -f -p "$relay" -o "$work/tls-new" 2>/dev/null &
spid=$!
strace -c -f -p "$ca" -o "$work/tls-new-ca" 2>/dev/null &
cpid=$!
sleep 0.5
n=$(openssl s_time -connect "127.0.0.1:$((lt + 2))" -new -tls1_3 \
    -time "$secs" 2>/dev/null |
    awk '/connections in .* real/ { print $1 }')
sleep 0.2
kill -INT $spid $cpid; wait $spid $cpid
count tls-new "${n:-0}"
count tls-new-ca "${n:-0}"
