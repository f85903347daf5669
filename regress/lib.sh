# Helpers for the end-to-end tests: sourced by every ATF-sh program.
# They start the real daemon, privilege separation on, and talk to it
# over real sockets on 127.0.0.1.

TOP=$(cd "$(atf_get_srcdir)/../.." && pwd)
RELAYD=$TOP/usr.sbin/relayd/relayd
RELAYCTL=$TOP/usr.sbin/relayctl/relayctl
RTOOL=$TOP/regress/tools/rtool
HTTPD=$TOP/regress/tools/httpd.py

# Skip, with the reason, where the daemon cannot run.
require_daemon()
{
	[ "$(id -u)" -eq 0 ] || atf_skip "the daemon needs root"
	id _relayd >/dev/null 2>&1 || atf_skip "no _relayd user (run 'make install' or the tests as root)"
	[ -x "$RELAYD" ] || atf_fail "relayd is not built"
}

# Does this host have ::1?  (/proc's files have no size for test -s.)
have_ipv6_loopback()
{
	grep -q '^00000000000000000000000000000001 ' /proc/net/if_inet6 \
	    2>/dev/null
}

freeport()
{
	"$RTOOL" freeport
}

# Wait until a command succeeds: every 0.1 s, at most $1 seconds.
wait_for()
{
	_t=$(($1 * 10))
	shift
	while [ "$_t" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		_t=$((_t - 1))
	done
	return 1
}

# Wait until the log has a line matching $2, at most $1 seconds.
wait_log()
{
	wait_for "$1" grep -q -- "$2" relayd.log
}

# A backend: rtool MODE PORTFILE [ARGS], its port in NAME.port and on
# stdout.  Its own output goes to a file: callers use $(start_backend).
start_backend()
{
	_name=$1
	_mode=$2
	shift 2
	rm -f "$_name.port"
	"$RTOOL" "$_mode" "$PWD/$_name.port" "${@:-120}" >"$_name.out" 2>&1 &
	echo $! >"$_name.pid"
	wait_for 10 test -s "$_name.port" || atf_fail "backend $_name did not start"
	cat "$_name.port"
}

# A backend that never accepts: its queue is full, later handshakes go
# unanswered.  Its port in $bport.
start_stalled_backend()
{
	bport=$(start_backend stall stall 60)
	"$RTOOL" hold "$bport" 3 60 >/dev/null 2>&1 &
	echo $! >hold.pid
}

# Start relayd -dv on relayd.conf and wait for its relays to run.
start_relayd()
{
	start_relayd_bg "$@"
	wait_started
}

# The log is emptied here, not by the background job's redirection:
# that one may come after wait_started looked, which would find the
# last relayd's "running relay" lines (a test that starts relayd twice).
start_relayd_bg()
{
	: >relayd.log
	"$RELAYD" -dv -f relayd.conf "$@" 2>>relayd.log &
	echo $! >relayd.pid
}

wait_started()
{
	_want=${RELAYS:-1}
	_prefork=${PREFORK:-3}
	_n=$((_want * _prefork))
	_t=100
	while [ "$_t" -gt 0 ]; do
		_c=$(grep -c "relay_launch: running relay" relayd.log)
		[ "$_c" -ge "$_n" ] && return 0
		kill -0 "$(cat relayd.pid)" 2>/dev/null || break
		sleep 0.1
		_t=$((_t - 1))
	done
	cat relayd.log >&2
	atf_fail "relayd did not start"
}

# libfaketime's library in $_ft, or skip.
faketime_lib()
{
	_ft=
	for _f in /usr/lib/*/faketime/libfaketime.so.1; do
		[ -f "$_f" ] && _ft=$_f
	done
	[ -n "$_ft" ] || atf_skip "libfaketime is not installed (make deps)"
}

# start_relayd_clockstep STEP SECONDS [relayd args]: start relayd whose
# processes see the wall clock stepped by STEP ("+1h", "-1h") SECONDS
# after each of them started, and the monotonic clock as it is: what an
# NTP step at boot, a restored virtual machine or date(1) does to a
# running daemon, without stepping this host's clock.  libfaketime
# shifts what the clock calls return; the kernel, the sockets and the
# timers are the real ones.
start_relayd_clockstep()
{
	faketime_lib
	_step=$1
	_after=$2
	shift 2
	LD_PRELOAD=$_ft FAKETIME=$_step FAKETIME_START_AFTER_SECONDS=$_after \
	    FAKETIME_DONT_FAKE_MONOTONIC=1 start_relayd "$@"
}

relayctl()
{
	"$RELAYCTL" -s "$PWD/relayd.sock" "$@"
}

# Does process $1 still run?  An exited one waits, a zombie, for a
# parent that is gone to be reaped by init, which can take a second here.
running()
{
	[ -r "/proc/$1/stat" ] || return 1
	case $(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) in
	Z*|X*|"")	return 1 ;;
	esac
	return 0
}

# Stop everything this test started; used by every cleanup.
stop_all()
{
	for _p in *.pid; do
		[ -f "$_p" ] || continue
		kill "$(cat "$_p")" 2>/dev/null
	done
	for _p in *.pid; do
		[ -f "$_p" ] || continue
		_i=50
		while running "$(cat "$_p")" && [ "$_i" -gt 0 ]; do
			sleep 0.1
			_i=$((_i - 1))
		done
		kill -9 "$(cat "$_p")" 2>/dev/null
		rm -f "$_p"
	done
	return 0
}

# The resident memory of process $1, KiB.
rss_kib()
{
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# Children of a pid, with their user and title.
children()
{
	for _c in $(pgrep -P "$1"); do
		printf '%s %s %s\n' "$_c" "$(ps -o user= -p "$_c")" \
		    "$(tr '\0' '\n' <"/proc/$_c/cmdline" | head -1)"
	done
}

# The HTTP backend regress/tools/httpd.py: its port in back.port and in
# $bport, the request lines it read in back.port.requests.
start_httpd()
{
	rm -f back.port
	python3 "$HTTPD" "$PWD/back.port" 120 >back.out 2>&1 &
	echo $! >back.pid
	wait_for 10 test -s back.port || atf_fail "the backend did not start"
	bport=$(cat back.port)
}

# held429 FILE: FILE has a line "CODE CONNECTS SECONDS" a request (curl's
# http_code, num_connects and time_total, one connection for all): the
# first 429 came at once, and the request after it only when the source
# could ask again, a second later (max-src-request-rate's hold)
held429()
{
	awk '$1 == 429 && ++n == 1 { first = $3 }
	    $1 == 429 && n == 2 { second = $3; conns = $2 }
	    END {
		if (n < 2 || first >= 0.9 || second < 0.9 || conns != 0) {
			printf "first 429 in %s s, next in %s s, %s connects\n",
			    first, second, conns
			exit 1
		}
	    }' "$1"
}

# sha256 of the first $1 bytes of httpd.py's pattern
pattern_sha()
{
	python3 -c "
import hashlib, sys
p = bytes(range(256)) * 256
n = int(sys.argv[1]); h = hashlib.sha256()
while n > 0:
    h.update(p[:min(n, len(p))]); n -= min(n, len(p))
print(h.hexdigest())" "$1"
}

# A CA, and certificates it signs: NAME KEYTYPE (rsa or ec) SUBJECTALT.
# The certificate goes to ssl/NAME.crt, the key to ssl/private/NAME.key.
mkca()
{
	mkdir -p ssl/private
	openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key \
	    -out ca.crt -days 2 -subj "/CN=relayd test CA" 2>/dev/null ||
	    atf_fail "no CA"
}

mkcert()
{
	case $2 in
	rsa)	_kopt="-newkey rsa:2048" ;;
	rsa4096) _kopt="-newkey rsa:4096" ;;
	ec)	_kopt="-newkey ec -pkeyopt ec_paramgen_curve:P-256" ;;
	esac
	# shellcheck disable=SC2086
	if ! openssl req -new $_kopt -nodes -keyout "ssl/private/$1.key" \
	    -out "$1.csr" -subj "/CN=$1" 2>/dev/null ||
	    ! printf 'subjectAltName=%s\n' "$3" >"$1.ext" ||
	    ! openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key \
	    -CAcreateserial -days 2 -extfile "$1.ext" \
	    -out "ssl/$1.crt" 2>/dev/null; then
		atf_fail "no certificate $1"
	fi
}

# The head of a test's relayd.conf: one relay process, the control
# socket and TLS files here, connections logged.
conf_head()
{
	cat <<CONF
prefork 1
socket "$PWD/relayd.sock"
log connection
tls directory "$PWD/ssl"
CONF
}

# tls_conf PROTOTYPE "PROTOCOL LINES" [RELAY LINES]: a relay with a TLS
# listener on $lport to the backend on $bport.
tls_conf()
{
	lport=$(freeport)
	{
		conf_head
		cat <<CONF
$1 protocol p {
	$2
}
relay r {
	listen on 127.0.0.1 port $lport tls
	protocol p
	forward to 127.0.0.1 port $bport
	$3
}
CONF
	} >relayd.conf
}

# Skip, with the reason, where network namespaces (and nftables in
# them) cannot be had.
require_netns()
{
	require_daemon
	command -v ip >/dev/null || atf_skip "no ip (make deps installs iproute2)"
	command -v nft >/dev/null || atf_skip "no nft (make deps installs nftables)"
	command -v socat >/dev/null || atf_skip "no socat (make deps installs it)"
	ip netns add "rdprobe$$" 2>/dev/null ||
	    atf_skip "cannot make network namespaces here"
	ip netns exec "rdprobe$$" nft add table inet probe 2>/dev/null
	_ok=$?
	ip netns del "rdprobe$$"
	[ "$_ok" -eq 0 ] || atf_skip "no nftables in a network namespace here"
}

# Three namespaces, a client, a relay and a server, joined by two veth
# pairs; $1 picks the addresses (10.$1.x, fd$1:x::), $2 prefixes the
# names.  Sets id, C, R and S; the names go in ns.list for cleanup_ns.
#
#   client 10.N.1.2 fdN:1::2 (Pc) --- (Pr) 10.N.1.1 fdN:1::1 relay
#   relay  10.N.2.1 fdN:2::1 (Pq) --- (Ps) 10.N.2.2 fdN:2::2 server
netns3()
{
	_n=$1 _p=$2
	id=$$
	C=${_p}dc$id R=${_p}dr$id S=${_p}ds$id
	for _ns in $C $R $S; do
		ip netns add "$_ns" || atf_fail "netns $_ns"
		echo "$_ns" >>ns.list
		ip -n "$_ns" link set lo up
	done
	ip link add "${_p}c$id" type veth peer name "${_p}r$id" || atf_fail "veth"
	ip link add "${_p}s$id" type veth peer name "${_p}q$id" || atf_fail "veth"
	ip link set "${_p}c$id" netns "$C"
	ip link set "${_p}r$id" netns "$R"
	ip link set "${_p}s$id" netns "$S"
	ip link set "${_p}q$id" netns "$R"
	ip -n "$C" addr add "10.$_n.1.2/24" dev "${_p}c$id"
	ip -n "$C" addr add "fd$_n:1::2/64" dev "${_p}c$id" nodad
	ip -n "$R" addr add "10.$_n.1.1/24" dev "${_p}r$id"
	ip -n "$R" addr add "fd$_n:1::1/64" dev "${_p}r$id" nodad
	ip -n "$R" addr add "10.$_n.2.1/24" dev "${_p}q$id"
	ip -n "$R" addr add "fd$_n:2::1/64" dev "${_p}q$id" nodad
	ip -n "$S" addr add "10.$_n.2.2/24" dev "${_p}s$id"
	ip -n "$S" addr add "fd$_n:2::2/64" dev "${_p}s$id" nodad
	ip -n "$C" link set "${_p}c$id" up
	ip -n "$R" link set "${_p}r$id" up
	ip -n "$R" link set "${_p}q$id" up
	ip -n "$S" link set "${_p}s$id" up
	ip -n "$C" route add default via "10.$_n.1.1"
	ip -n "$C" -6 route add default via "fd$_n:1::1"
	ip -n "$S" route add default via "10.$_n.2.1"
	ip -n "$S" -6 route add default via "fd$_n:2::1"
}

# Everything a namespace test started, and its namespaces.
cleanup_ns()
{
	stop_all
	[ -f ns.list ] || return 0
	while read -r _ns; do
		ip netns del "$_ns" 2>/dev/null
	done <ns.list
	rm -f ns.list
	return 0
}
