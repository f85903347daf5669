#!/bin/sh
# What a session costs a relay that forwards with TLS, by the size of
# its tls ca file: one CA, or the system's bundle with that CA.
#
#   fwdtlsbench.sh [SESSIONS [ROUNDS]]
#
# A backend (openssl s_server -www, a certificate of a CA made here),
# relayd (prefork 1) with a plain listener and "forward with tls" to
# it, and a client that makes SESSIONS (default 300) sessions one after
# the other, each a GET of the backend's page.  Each round runs both
# files, in turn; prints a line each:
#
#   one-ca|bundle N CAs: S sessions/s CPU_US relayd us/session
#
# (relayd's CPU is that of all its processes).  As root.

TOP=$(cd "$(dirname "$0")/../.." && pwd)
RELAYD=$TOP/usr.sbin/relayd/relayd
# shellcheck source=regress/perf/benchlib.sh
. "$TOP/regress/perf/benchlib.sh"
sessions=${1:-300} rounds=${2:-3}
BUNDLE=/etc/ssl/certs/ca-certificates.crt

[ "$(id -u)" -eq 0 ] || { echo "fwdtlsbench: run as root" >&2; exit 2; }
for c in openssl python3; do
	command -v $c >/dev/null ||
	    { echo "fwdtlsbench: no $c (make deps)" >&2; exit 2; }
done
[ -f $BUNDLE ] ||
    { echo "fwdtlsbench: no $BUNDLE (make bench-deps)" >&2; exit 2; }
sh "$TOP/etc/mkuser.sh" || exit 1

bench_work

cd "$work" || exit 1
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout ca.key -out ca.crt -days 2 -subj "/CN=bench CA" 2>/dev/null &&
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout back.key -out back.csr -subj /CN=back 2>/dev/null &&
    openssl x509 -req -in back.csr -CA ca.crt -CAkey ca.key \
    -CAcreateserial -days 2 -out back.crt 2>/dev/null ||
    { echo "fwdtlsbench: no certificates" >&2; exit 1; }
cat $BUNDLE ca.crt >bundle.pem
# below the ephemeral ports, where a client's TIME_WAIT could hold them
bport=$((20000 + $$ % 5000)) port=$((25000 + $$ % 5000))
openssl s_server -accept "127.0.0.1:$bport" -cert back.crt -key back.key \
    -www -quiet >/dev/null 2>&1 &
pids="$pids $!"

# SESSIONS sessions through the relay: their seconds, or "failed"
client()
{
	python3 - "$port" "$sessions" <<'PY'
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
t0 = time.monotonic()
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
    got = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        got += d
    s.close()
    if not got.startswith(b"HTTP/1.0 200"):
        print("failed")
        sys.exit(1)
print("%.3f" % (time.monotonic() - t0))
PY
}

# one run with tls ca file $2: its line, named $1
run()
{
	cat >relayd.conf <<CONF
prefork 1
socket "$work/relayd.sock"
tcp protocol t {
	tls ca file "$work/$2"
}
relay fwd {
	listen on 127.0.0.1 port $port
	protocol t
	forward with tls to 127.0.0.1 port $bport
}
CONF
	chmod 600 relayd.conf
	"$RELAYD" -d -f relayd.conf 2>relayd.log &
	rpid=$!
	i=0
	until python3 -c "import socket
socket.create_connection(('127.0.0.1', $port)).close()" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 100 ] && { cat relayd.log >&2; exit 1; }
		sleep 0.1
	done
	c0=$(tree_ticks "$rpid")
	secs=$(client)
	c1=$(tree_ticks "$rpid")
	kill "$rpid"; wait "$rpid" 2>/dev/null; rpid=""
	[ "$secs" = failed ] &&
	    { echo "fwdtlsbench: $1: a session failed" >&2; exit 1; }
	awk -v what="$1" -v cas="$(grep -c 'BEGIN CERT' "$2")" -v n="$sessions" \
	    -v s="$secs" -v t=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" 'BEGIN {
	    printf "%-6s %3d CAs: %6.0f sessions/s %6.0f relayd us/session\n",
	    what, cas, n / s, t / hz * 1e6 / n }'
}

r=0
while [ $r -lt "$rounds" ]; do
	run one-ca ca.crt
	run bundle bundle.pem
	r=$((r + 1))
done
