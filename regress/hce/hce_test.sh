#! /usr/bin/env atf-sh
# Health checks through the real daemon: every check type passing and
# failing for its reason, retry counting, relays that follow host state,
# backup tables, and relayctl's view and commands.

. "$(atf_get_srcdir)/../lib.sh"

# hce_conf TEXT: relayd.conf with a 1 s interval around TEXT
hce_conf()
{
	cat >relayd.conf <<CONF
interval 1
prefork 1
socket "$PWD/relayd.sock"
log connection
$1
CONF
}

start_hce()
{
	PREFORK=1 RELAYS=${RELAYS:-1} start_relayd
}

# expect_check HOST TYPE RESULT STATE: the log line of a check.
expect_check()
{
	wait_log "${5:-10}" "^host $1, check $2 ([0-9]*ms,$3), state [a-z]* -> $4, availability [0-9.]*%*\$" && return 0
	cat relayd.log >&2
	atf_fail "no check line: host $1, check $2 ($3), -> $4"
}

# A file for rtool answer: printf FORMAT ARGS
resp()
{
	_f=$1
	shift
	# shellcheck disable=SC2059
	printf "$@" >"$_f"
}

ident()
{
	"$RTOOL" ident "$1" "$2" "$3" 120 >/dev/null 2>&1 &
	echo $! >"ident-$3.pid"
	wait_for 5 "$RTOOL" get "$2" || atf_fail "ident $3 did not start"
}

# What the relay on $1 answers, one session.
through()
{
	"$RTOOL" get "$1" 2>/dev/null
}

atf_test_case tcp cleanup
tcp_head()
{
	atf_set descr "check tcp: a listening backend is up, a refusing one down"
	atf_set require.user root
	atf_set timeout 60
}
tcp_body()
{
	require_daemon
	up=$(freeport)
	dead=$(freeport)
	ident 127.0.0.1 "$up" A
	hce_conf "table <up> { 127.0.0.1 }
table <down> { 127.0.0.1 }
relay r {
	listen on 127.0.0.1 port $(freeport)
	forward to <up> port $up check tcp
	forward to <down> port $dead check tcp
}"
	start_hce
	expect_check 127.0.0.1 tcp "tcp connect ok" up
	expect_check 127.0.0.1 tcp "tcp connect failed" down
	atf_check -o match:"state unknown -> up, availability 100.00%" cat relayd.log
}
tcp_cleanup()
{
	stop_all
}

atf_test_case http cleanup
http_head()
{
	atf_set descr "check http code: ok, mismatch (with the code), malformed"
	atf_set require.user root
	atf_set timeout 60
}
http_body()
{
	require_daemon
	resp ok.resp 'HTTP/1.0 200 OK\r\nServer: t\r\n\r\nhello'
	resp nf.resp 'HTTP/1.1 404 Not Found\r\n\r\n'
	resp bad.resp 'SSH-2.0-OpenSSH\r\n'
	ok=$(start_backend ok answer "$PWD/ok.resp" 120)
	nf=$(start_backend nf answer "$PWD/nf.resp" 120)
	bad=$(start_backend bad answer "$PWD/bad.resp" 120)
	hce_conf "table <t> { 127.0.0.1 }
relay r {
	listen on 127.0.0.1 port $(freeport)
	forward to <t> port $ok check http \"/\" host \"www\" code 200
	forward to <t> port $nf check http \"/\" code 200
	forward to <t> port $bad check http \"/\" code 200
}"
	start_hce
	expect_check 127.0.0.1 "http code" "http code ok" up
	expect_check 127.0.0.1 "http code" "http code mismatch,404" down
	expect_check 127.0.0.1 "http code" "http code malformed" down
}
http_cleanup()
{
	stop_all
}

atf_test_case http2 cleanup
http2_head()
{
	atf_set descr "check http2 code: nghttpd in cleartext and over TLS (ALPN h2) and a gRPC server up, a missing path a mismatch, an HTTP/1.1 server malformed"
	atf_set require.user root
	atf_set timeout 60
}
http2_body()
{
	require_daemon
	command -v nghttpd >/dev/null ||
	    atf_skip "no nghttpd (make deps installs nghttp2-server)"
	mkdir docs
	echo up >docs/health
	h2=$(freeport)
	nghttpd --no-tls -d "$PWD/docs" "$h2" >nghttpd.out 2>&1 &
	echo $! >nghttpd.pid
	wait_for 10 "$RTOOL" probe "$h2" || atf_fail "nghttpd did not start"
	mkca
	mkcert 127.0.0.1 ec IP:127.0.0.1
	h2s=$(freeport)
	nghttpd -d "$PWD/docs" "$h2s" ssl/private/127.0.0.1.key \
	    ssl/127.0.0.1.crt >nghttpds.out 2>&1 &
	echo $! >nghttpds.pid
	wait_for 10 "$RTOOL" probe "$h2s" ||
	    atf_fail "nghttpd with TLS did not start"
	resp h1.resp 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'
	h1=$(start_backend h1 answer "$PWD/h1.resp" 120)
	grpc=""
	if /usr/bin/python3 -c "import grpc" 2>/dev/null; then
		/usr/bin/python3 "$TOP/regress/tools/grpctool.py" server \
		    "$PWD/grpc.port" 120 >grpc.out 2>&1 &
		echo $! >grpc.pid
		wait_for 20 test -s grpc.port ||
		    atf_fail "gRPC server did not start"
		grpc="forward to <g> port $(cat grpc.port) check http2 \"/\" code 200"
	fi
	hce_conf "table <t> { 127.0.0.1 }
table <u> { 127.0.0.1 }
table <g> { 127.0.0.1 }
table <s> { 127.0.0.1 }
relay r {
	listen on 127.0.0.1 port $(freeport)
	forward to <t> port $h2 check http2 \"/health\" code 200
	forward to <u> port $h2 check http2 \"/none\" host \"www\" code 200
	forward to <t> port $h1 check http2 \"/\" code 200
}
relay s {
	listen on 127.0.0.1 port $(freeport)
	${grpc:-forward to <g> port $h2 check http2 \"/health\" code 200}
	forward to <s> port $h2s check http2 \"/health\" host \"127.0.0.1\" code 200 tls
}"
	start_hce
	expect_check 127.0.0.1 "http2 code" "http code ok" up
	expect_check 127.0.0.1 "http2 code" "http code mismatch,404" down
	expect_check 127.0.0.1 "http2 code" "http code malformed" down
	# three tables up: nghttpd's file in cleartext and over TLS, and
	# the gRPC server's answer (or nghttpd's file again)
	wait_for 10 sh -c "[ \$(grep -cE 'check http2 code( use tls)? \\([0-9]*ms,http code ok\\), state unknown -> up' relayd.log) -eq 3 ]" ||
	    atf_fail "not three tables up: $(grep 'http2 code' relayd.log | tr '\n' ' ')"
	atf_check -o match:"check http2 code use tls \([0-9]*ms,http code ok\)" \
	    cat relayd.log
	"$RELAYD" -nv -f relayd.conf >printed 2>&1
	atf_check -o match:"check http2 \"/none\" host \"www\" code 200," \
	    cat printed
	atf_check -o match:"check http2 \"/health\" host \"127.0.0.1\" code 200 tls," \
	    cat printed
}
http2_cleanup()
{
	for p in nghttpd nghttpds grpc; do
		[ -f $p.pid ] && kill "$(cat $p.pid)" 2>/dev/null
	done
	stop_all
}

atf_test_case digest cleanup
digest_head()
{
	atf_set descr "check http digest: SHA1 and MD5 of a binary body"
	atf_set require.user root
	atf_set timeout 60
}
digest_body()
{
	require_daemon
	printf 'a\000b\377c\n' >body
	sha1=$(sha1sum <body | cut -d' ' -f1)
	md5=$(md5sum <body | cut -d' ' -f1)
	resp d.resp 'HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\n'
	cat body >>d.resp
	d=$(start_backend d answer "$PWD/d.resp" 120)
	d2=$(start_backend d2 answer "$PWD/d.resp" 120)
	d3=$(start_backend d3 answer "$PWD/d.resp" 120)
	hce_conf "table <t> { 127.0.0.1 }
relay r {
	listen on 127.0.0.1 port $(freeport)
	forward to <t> port $d check http \"/\" digest \"$sha1\"
	forward to <t> port $d2 check http \"/\" digest \"$md5\"
	forward to <t> port $d3 check http \"/\" digest \"0000000000000000000000000000000000000000\"
}"
	start_hce
	wait_log 10 "http digest mismatch" || atf_fail "no mismatch"
	atf_check -o inline:"2\n" sh -c "grep -c 'check http digest ([0-9]*ms,http digest ok), state unknown -> up' relayd.log"
	expect_check 127.0.0.1 "http digest" "http digest mismatch" down
}
digest_cleanup()
{
	stop_all
}

atf_test_case send_expect cleanup
send_expect_head()
{
	atf_set descr "check send/expect and binary send/expect: match, mismatch, silence"
	atf_set require.user root
	atf_set timeout 60
}
send_expect_body()
{
	require_daemon
	resp banner.resp '220 mail.example ESMTP\r\n'
	resp bin.resp '\001\002\003\377'
	b=$(start_backend banner answer "$PWD/banner.resp" 120)
	bin=$(start_backend bin answer "$PWD/bin.resp" 120)
	quiet=$(start_backend quiet sink 120)
	hce_conf "table <t> { 127.0.0.1 }
relay r {
	listen on 127.0.0.1 port $(freeport)
	forward to <t> port $b check send \"EHLO x\\r\\n\" expect \"220 *\"
	forward to <t> port $quiet check send nothing expect \"220 *\"
	forward to <t> port $bin check binary send \"00\" expect \"010203FF\"
}
relay s {
	listen on 127.0.0.1 port $(freeport)
	forward to <t> port $b check send nothing expect \"500 *\"
	forward to <t> port $bin check binary send \"00\" expect \"0103\"
}"
	RELAYS=2 start_hce
	expect_check 127.0.0.1 "send expect" "send/expect ok" up
	expect_check 127.0.0.1 "send expect" "send/expect failed" down
	expect_check 127.0.0.1 "send expect" "tcp read timeout" down
	expect_check 127.0.0.1 "binary send expect" "send/expect ok" up
	expect_check 127.0.0.1 "binary send expect" "send/expect failed" down
}
send_expect_cleanup()
{
	stop_all
}

atf_test_case tls cleanup
tls_head()
{
	atf_set descr "check tls, check https and send/expect with tls against a TLS server"
	atf_set require.user root
	atf_set timeout 60
}
tls_body()
{
	require_daemon
	command -v openssl >/dev/null || atf_skip "openssl is not installed"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem \
	    -out cert.pem -subj /CN=localhost -days 1 >/dev/null 2>&1 ||
	    atf_fail "no certificate"
	command -v socat >/dev/null || atf_skip "socat is not installed"
	resp ok.resp 'HTTP/1.0 200 OK\r\n\r\nhello'
	tp=$(freeport)
	socat "OPENSSL-LISTEN:$tp,bind=127.0.0.1,reuseaddr,fork,cert=cert.pem,key=key.pem,verify=0" \
	    SYSTEM:"cat $PWD/ok.resp" 2>socat.err &
	echo $! >socat.pid
	wait_for 10 "$RTOOL" probe "$tp" || atf_fail "socat did not start"
	plain=$(freeport)
	ident 127.0.0.1 "$plain" P
	hce_conf "table <t> { 127.0.0.1 }
relay r {
	listen on 127.0.0.1 port $(freeport)
	forward to <t> port $tp check tls
	forward to <t> port $plain check tls
}
relay s {
	listen on 127.0.0.1 port $(freeport)
	forward to <t> port $tp check https \"/\" code 200
	forward to <t> port $tp check send \"GET /\" expect \"HTTP/1.0 200 *\" tls
}"
	RELAYS=2 start_hce
	expect_check 127.0.0.1 "tcp use tls" "tls connect ok" up
	expect_check 127.0.0.1 "tcp use tls" "tls connect failed" down
	expect_check 127.0.0.1 "http code use tls" "http code ok" up
	expect_check 127.0.0.1 "send expect use tls" "send/expect ok" up
}
tls_cleanup()
{
	stop_all
}

atf_test_case https_sni cleanup
https_sni_head()
{
	atf_set descr "check https with host asks the backend's TLS for that name (SNI): a backend with a site per name answers that site"
	atf_set require.user root
	atf_set timeout 60
}
https_sni_body()
{
	require_daemon
	for _c in openssl python3; do
		command -v $_c >/dev/null || atf_skip "$_c is not installed"
	done
	openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem \
	    -out cert.pem -subj /CN=www.test -days 1 >/dev/null 2>&1 ||
	    atf_fail "no certificate"
	# a backend with one site, www.test: another name, or none, is a 404
	cat >sni.py <<'PY'
import socket, ssl, sys
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain("cert.pem", "key.pem")
def sni(sock, name, c):
	sock.sni = name
ctx.sni_callback = sni
ls = socket.create_server(("127.0.0.1", int(sys.argv[1])))
while True:
	c, _ = ls.accept()
	try:
		t = ctx.wrap_socket(c, server_side=True)
		t.recv(4096)
		ok = getattr(t, "sni", None) == "www.test"
		t.sendall(b"HTTP/1.0 200 OK\r\n\r\n" if ok else
		    b"HTTP/1.0 404 Not Found\r\n\r\n")
		t.close()
	except (OSError, ssl.SSLError):
		c.close()
PY
	tp=$(freeport)
	python3 sni.py "$tp" 2>sni.err &
	echo $! >sni.pid
	wait_for 10 "$RTOOL" probe "$tp" || atf_fail "the backend did not start"
	hce_conf "table <www> { 127.0.0.1 }
table <other> { 127.0.0.1 }
relay r {
	listen on 127.0.0.1 port $(freeport)
	forward to <www> port $tp check https \"/\" host \"www.test\" code 200
}
relay s {
	listen on 127.0.0.1 port $(freeport)
	forward to <other> port $tp check https \"/\" host \"other.test\" code 200
}"
	RELAYS=2 start_hce
	expect_check 127.0.0.1 "http code use tls" "http code ok" up
	expect_check 127.0.0.1 "http code use tls" "http code mismatch,404" down
	atf_check -o match:"www:$tp .*active" -o match:"other:$tp .*empty" \
	    "$RELAYCTL" -s "$PWD/relayd.sock" show hosts
}
https_sni_cleanup()
{
	stop_all
}

atf_test_case icmp cleanup
icmp_head()
{
	atf_set descr "check icmp: 127.0.0.1 (and ::1) answer echo requests"
	atf_set require.user root
	atf_set timeout 60
}
icmp_body()
{
	require_daemon
	hosts="127.0.0.1"
	have_ipv6_loopback && hosts="127.0.0.1, ::1"
	hce_conf "table <t> { $hosts }
relay r {
	listen on 127.0.0.1 port $(freeport)
	forward to <t> port 1 check icmp
}"
	start_hce
	wait_log 10 "check icmp" || {
		grep -q "no raw ICMP socket" relayd.log &&
		    atf_skip "raw sockets are refused here: $(grep 'no raw' relayd.log)"
		atf_fail "no icmp check in the log"
	}
	expect_check 127.0.0.1 icmp "icmp ok" up
	case $hosts in
	*::1*)	expect_check ::1 icmp "icmp ok" up ;;
	esac
}
icmp_cleanup()
{
	stop_all
}

atf_test_case script cleanup
script_head()
{
	atf_set descr "check script: exit >0 up, 0 down, a hanging script killed at the timeout"
	atf_set require.user root
	atf_set timeout 60
}
script_body()
{
	require_daemon
	# the scripts run as the unprivileged user: a directory it can read
	sdir=$(mktemp -d /tmp/relayd-hce.XXXXXX)
	echo "$sdir" >sdir
	chmod 777 "$sdir"
	printf '#!/bin/sh\necho "$1" >%s/arg\nid -un >>%s/arg\nexit 1\n' \
	    "$sdir" "$sdir" >"$sdir/up.sh"
	printf '#!/bin/sh\nexit 0\n' >"$sdir/down.sh"
	printf '#!/bin/sh\necho $$ >%s/hang.pid\nexec sleep 100\n' "$sdir" \
	    >"$sdir/hang.sh"
	chmod 755 "$sdir"/*.sh
	hce_conf "log host checks
table <t> { 127.0.0.1 }
relay r {
	listen on 127.0.0.1 port $(freeport)
	forward to <t> port 1 check script \"$sdir/up.sh\"
	forward to <t> port 2 check script \"$sdir/down.sh\"
	forward to <t> port 3 timeout 300 check script \"$sdir/hang.sh\"
}"
	start_hce
	expect_check 127.0.0.1 script "script ok" up
	expect_check 127.0.0.1 script "script failed" down
	expect_check 127.0.0.1 script "script failed" unknown
	atf_check -o match:"check script $sdir/hang.sh, host 127.0.0.1: timeout after 300ms, killed" cat relayd.log
	atf_check -o inline:"127.0.0.1\n_relayd\n" cat "$sdir/arg"
	pid=$(cat "$sdir/hang.pid")
	wait_for 5 sh -c "! kill -0 $pid" || atf_fail "the hanging script lives on"
}
script_cleanup()
{
	stop_all
	[ -f sdir ] && rm -rf "$(cat sdir)"
	return 0
}

atf_test_case retry cleanup
retry_head()
{
	atf_set descr "host retry 2: down after three failures in a row, up after one success"
	atf_set require.user root
	atf_set timeout 60
}
retry_body()
{
	require_daemon
	p=$(freeport)
	ident 127.0.0.1 "$p" A
	hce_conf "log host checks
table <t> { 127.0.0.1 retry 2 }
relay r {
	listen on 127.0.0.1 port $(freeport)
	forward to <t> port $p check tcp
}"
	start_hce
	expect_check 127.0.0.1 tcp "tcp connect ok" up
	kill "$(cat ident-A.pid)"
	expect_check 127.0.0.1 tcp "tcp connect failed" down
	atf_check -o inline:"2\n" sh -c "grep -c 'tcp connect failed), state up -> up' relayd.log"
	atf_check -o inline:"1\n" sh -c "grep -c 'tcp connect failed), state up -> down' relayd.log"
	ident 127.0.0.1 "$p" A
	wait_log 10 "tcp connect ok), state down -> up" || atf_fail "not up again"
}
retry_cleanup()
{
	stop_all
}

# Two backends, A on 127.0.0.1 and B on 127.0.0.2, same port.
two_hosts()
{
	p=$(freeport)
	lport=$(freeport)
	ident 127.0.0.1 "$p" A
	ident 127.0.0.2 "$p" B
}

# names SESSIONS: what that many sessions through the relay answered
names()
{
	_i=0
	while [ $_i -lt "$1" ]; do
		through "$lport"
		_i=$((_i + 1))
	done | sort -u | tr '\n' ' '
}

# expect_names SESSIONS WANT
expect_names()
{
	_got=$(names "$1")
	[ "$_got" = "$2" ] || atf_fail "sessions went to '$_got', not '$2'"
}

atf_test_case follow_state cleanup
follow_state_head()
{
	atf_set descr "a backend that goes down is avoided by new sessions within an interval, and used again when it returns"
	atf_set require.user root
	atf_set timeout 60
}
follow_state_body()
{
	require_daemon
	two_hosts
	hce_conf "table <t> { 127.0.0.1, 127.0.0.2 }
relay r {
	listen on 127.0.0.1 port $lport
	forward to <t> port $p mode roundrobin check tcp
}"
	start_hce
	expect_check 127.0.0.1 tcp "tcp connect ok" up
	expect_check 127.0.0.2 tcp "tcp connect ok" up
	expect_names 4 "A B "
	kill "$(cat ident-B.pid)"
	# one interval, and the check's timeout
	expect_check 127.0.0.2 tcp "tcp connect failed" down 2
	expect_names 6 "A "
	ident 127.0.0.2 "$p" B
	wait_log 3 "host 127.0.0.2, check tcp ([0-9]*ms,tcp connect ok), state down -> up" ||
	    atf_fail "B not up again"
	expect_names 4 "A B "
}
follow_state_cleanup()
{
	stop_all
}

atf_test_case backup cleanup
backup_head()
{
	atf_set descr "the backup table takes over when the main table has no host up, and hands back"
	atf_set require.user root
	atf_set timeout 60
}
backup_body()
{
	require_daemon
	two_hosts
	kill "$(cat ident-B.pid)"
	hce_conf "table <main> { 127.0.0.2 }
table <spare> { 127.0.0.1 }
relay r {
	listen on 127.0.0.1 port $lport
	forward to <main> port $p check tcp
	forward to <spare> port $p check tcp
}"
	start_hce
	expect_check 127.0.0.1 tcp "tcp connect ok" up
	expect_check 127.0.0.2 tcp "tcp connect failed" down
	expect_names 3 "A "
	ident 127.0.0.2 "$p" B
	wait_log 3 "host 127.0.0.2, check tcp ([0-9]*ms,tcp connect ok), state down -> up" ||
	    atf_fail "main not up"
	expect_names 3 "B "
}
backup_cleanup()
{
	stop_all
}

atf_test_case no_host_up cleanup
no_host_up_head()
{
	atf_set descr "no host up: the session is refused with a reason in the log"
	atf_set require.user root
	atf_set timeout 60
}
no_host_up_body()
{
	require_daemon
	lport=$(freeport)
	hce_conf "table <t> { 127.0.0.1 }
relay r {
	listen on 127.0.0.1 port $lport
	forward to <t> port $(freeport) check tcp
}"
	start_hce
	expect_check 127.0.0.1 tcp "tcp connect failed" down
	atf_check -o empty "$RTOOL" get "$lport"
	wait_log 5 "^relay r, session 1 .*no host up" || atf_fail "no reason logged"
}
no_host_up_cleanup()
{
	stop_all
}

atf_test_case relayctl_view cleanup
relayctl_view_head()
{
	atf_set descr "relayctl show hosts, show summary and status show host and table state"
	atf_set require.user root
	atf_set timeout 60
}
relayctl_view_body()
{
	require_daemon
	two_hosts
	kill "$(cat ident-B.pid)"
	hce_conf "table <t> { 127.0.0.1, 127.0.0.2 retry 1 }
table <dead> { 127.0.0.2 }
relay r {
	listen on 127.0.0.1 port $lport
	forward to <t> port $p check tcp
	forward to <dead> port $p check tcp
}"
	start_hce
	expect_check 127.0.0.2 tcp "tcp connect failed" down
	expect_check 127.0.0.1 tcp "tcp connect ok" up
	"$RELAYCTL" -s relayd.sock show hosts >hosts
	atf_check -o match:"^1 +	table   	t:$p +	 +	active \(1 hosts\)" cat hosts
	atf_check -o match:"^1 +	host    	127.0.0.1 +	100.00%	up" cat hosts
	# retry 1: one failure leaves it unknown
	atf_check -o match:"^2 +	host    	127.0.0.2 +	 +	unknown" cat hosts
	atf_check -o match:"^2 +	table   	dead:$p +	 +	empty" cat hosts
	atf_check -o match:"	total: [0-9]+/[0-9]+ checks, error: tcp connect failed" cat hosts
	atf_check -o match:"total: [1-9][0-9]*/[1-9][0-9]* checks\$" cat hosts
	atf_check -o match:"host    	127.0.0.2 +	0.00%  	down" "$RELAYCTL" -s relayd.sock show summary
	atf_check -o match:"table t:$p: active, hosts 1/2 up, check tcp" "$RELAYCTL" -s relayd.sock status
}
relayctl_view_cleanup()
{
	stop_all
}

atf_test_case enable_disable cleanup
enable_disable_head()
{
	atf_set descr "relayctl host and table enable/disable steer sessions; unknown names fail"
	atf_set require.user root
	atf_set timeout 60
}
enable_disable_body()
{
	require_daemon
	two_hosts
	hce_conf "table <t> { 127.0.0.1, 127.0.0.2 }
table <spare> { 127.0.0.1 }
relay r {
	listen on 127.0.0.1 port $lport
	forward to <t> port $p check tcp
	forward to <spare> port $p check tcp
}"
	start_hce
	expect_check 127.0.0.2 tcp "tcp connect ok" up
	wait_for 5 sh -c "\"$RELAYCTL\" -s relayd.sock show hosts | grep -q 'active (2 hosts)'" ||
	    atf_fail "t not active with 2 hosts"
	"$RELAYCTL" -s relayd.sock monitor >monitor.out 2>&1 &
	echo $! >monitor.pid

	atf_check -o inline:"command succeeded\n" "$RELAYCTL" -s relayd.sock host disable 2
	atf_check -o match:"^2 +	host    	127.0.0.2 +	 +	disabled" "$RELAYCTL" -s relayd.sock show hosts
	expect_names 4 "A "
	atf_check -o inline:"command succeeded\n" "$RELAYCTL" -s relayd.sock host enable 127.0.0.2
	wait_for 5 sh -c "\"$RELAYCTL\" -s relayd.sock show hosts | grep -q 'active (2 hosts)'" ||
	    atf_fail "127.0.0.2 not back"
	expect_names 4 "A B "

	atf_check -o inline:"command succeeded\n" "$RELAYCTL" -s relayd.sock table disable t
	atf_check -o match:"table   	t:$p +	 +	disabled" "$RELAYCTL" -s relayd.sock show summary
	# the backup table serves (only A is in it)
	expect_names 4 "A "
	atf_check -o inline:"command succeeded\n" "$RELAYCTL" -s relayd.sock table enable "t:$p"
	wait_for 5 sh -c "\"$RELAYCTL\" -s relayd.sock show hosts | grep -q 'active (2 hosts)'" ||
	    atf_fail "t not back"

	atf_check -s exit:1 -o inline:"command failed\n" "$RELAYCTL" -s relayd.sock host disable nosuchhost
	atf_check -s exit:1 -o inline:"command failed\n" "$RELAYCTL" -s relayd.sock table enable 99

	wait_for 5 grep -q "name: 127.0.0.2" monitor.out || atf_fail "monitor saw nothing"
	atf_check -o match:"^ctl_host_disable: imsg type" cat monitor.out
	atf_check -o match:"^ctl_table_disable: imsg type" cat monitor.out
	atf_check -o match:"^host_status: imsg type" cat monitor.out
	atf_check -o match:"state: up" cat monitor.out
}
enable_disable_cleanup()
{
	stop_all
}

atf_test_case poll cleanup
poll_head()
{
	atf_set descr "relayctl poll runs a round at once"
	atf_set require.user root
	atf_set timeout 60
}
poll_body()
{
	require_daemon
	p=$(freeport)
	ident 127.0.0.1 "$p" A
	cat >relayd.conf <<CONF
interval 60
prefork 1
socket "$PWD/relayd.sock"
log host checks
table <t> { 127.0.0.1 }
relay r {
	listen on 127.0.0.1 port $(freeport)
	forward to <t> port $p check tcp
}
CONF
	start_hce
	expect_check 127.0.0.1 tcp "tcp connect ok" up
	atf_check -o inline:"1\n" sh -c "grep -c 'check tcp' relayd.log"
	atf_check -o inline:"command succeeded\n" "$RELAYCTL" -s relayd.sock poll
	wait_for 5 sh -c "test \$(grep -c 'check tcp' relayd.log) -eq 2" ||
	    atf_fail "poll did not check"
}
poll_cleanup()
{
	stop_all
}

atf_test_case parent_disabled cleanup
parent_disabled_head()
{
	atf_set descr "a host with parent follows that host unchecked; a table defined disabled is not checked"
	atf_set require.user root
	atf_set timeout 60
}
parent_disabled_body()
{
	require_daemon
	p=$(freeport)
	ident 127.0.0.1 "$p" A
	hce_conf "table <t> { 127.0.0.1, 127.0.0.2 parent 1 }
table <off> disable { 127.0.0.3 }
relay r {
	listen on 127.0.0.1 port $(freeport)
	forward to <t> port $p check tcp
	forward to <off> port $p check tcp
}"
	start_hce
	expect_check 127.0.0.1 tcp "tcp connect ok" up
	# nothing listens on 127.0.0.2: it is up because its parent is
	expect_check 127.0.0.2 tcp "tcp connect ok" up
	atf_check -o match:"table   	off:$p +	 +	disabled" "$RELAYCTL" -s relayd.sock show summary
	atf_check -s exit:1 grep -q "host 127.0.0.3" relayd.log
	atf_check -o match:"^2 +	host    	127.0.0.2 parent 1 +	100.00%	up" "$RELAYCTL" -s relayd.sock show hosts
}
parent_disabled_cleanup()
{
	stop_all
}

# relayd in namespace $N without CAP_NET_RAW, as root in a container
# that drops it.
start_relayd_no_net_raw()
{
	: >relayd.log
	# relayd.pid is relayd's: ip netns exec and setpriv exec it
	sh -c 'echo $$ >relayd.pid; exec "$@"' sh \
	    ip netns exec "$N" setpriv --bounding-set=-net_raw -- \
	    "$RELAYD" -dv -f relayd.conf 2>>relayd.log &
	PREFORK=1 wait_started
}

atf_test_case icmp_no_net_raw cleanup
icmp_no_net_raw_head()
{
	atf_set descr "check icmp without CAP_NET_RAW: on ping sockets where net.ipv4.ping_group_range allows them, else hosts unknown and a warning"
	atf_set require.user root
	atf_set timeout 60
}
icmp_no_net_raw_body()
{
	require_daemon
	command -v ip >/dev/null || atf_skip "no ip (make deps installs iproute2)"
	command -v setpriv >/dev/null || atf_skip "no setpriv"
	N=hcepng$$
	ip netns add "$N" || atf_skip "cannot make network namespaces here"
	echo "$N" >ns.list
	ip -n "$N" link set lo up
	# 10.77.0.2: an address of a link where nobody answers
	ip -n "$N" link add v0 type veth peer name v1 || atf_fail "no veth"
	ip -n "$N" addr add 10.77.0.1/24 dev v0
	ip -n "$N" link set v0 up
	ip -n "$N" link set v1 up
	hosts="127.0.0.1, 10.77.0.2"
	ip netns exec "$N" sh -c "grep -q '^0*1 ' /proc/net/if_inet6" &&
	    hosts="$hosts, ::1"
	hce_conf "table <t> { $hosts }
relay r {
	listen on 127.0.0.1 port $(freeport)
	forward to <t> port 1 check icmp
}"
	# a new namespace allows no group a ping socket
	atf_check -o inline:"1\t0\n" ip netns exec "$N" \
	    cat /proc/sys/net/ipv4/ping_group_range
	start_relayd_no_net_raw
	wait_log 10 "check icmp: no raw ICMP socket (Operation not permitted) and no ping socket: icmp hosts stay unknown" ||
	    atf_fail "no warning"
	atf_check -s exit:1 -x "grep -q '^host 127.0.0.1, check icmp' relayd.log"
	stop_all

	# as Docker and systemd set it: every group
	ip netns exec "$N" sysctl -qw net.ipv4.ping_group_range="0 2147483647"
	start_relayd_no_net_raw
	expect_check 127.0.0.1 icmp "icmp ok" up
	expect_check 10.77.0.2 icmp "icmp read timeout" down
	case $hosts in
	*::1*)	expect_check ::1 icmp "icmp ok" up ;;
	esac
	atf_check -s exit:1 -x "grep -q 'no raw ICMP' relayd.log"
}
icmp_no_net_raw_cleanup()
{
	cleanup_ns
}

atf_init_test_cases()
{
	atf_add_test_case parent_disabled
	atf_add_test_case tcp
	atf_add_test_case http
	atf_add_test_case http2
	atf_add_test_case digest
	atf_add_test_case send_expect
	atf_add_test_case tls
	atf_add_test_case https_sni
	atf_add_test_case icmp
	atf_add_test_case icmp_no_net_raw
	atf_add_test_case script
	atf_add_test_case retry
	atf_add_test_case follow_state
	atf_add_test_case backup
	atf_add_test_case no_host_up
	atf_add_test_case relayctl_view
	atf_add_test_case enable_disable
	atf_add_test_case poll
}
