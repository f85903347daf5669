#! /usr/bin/env atf-sh
# The PROXY protocol through the real daemon: headers relayd writes to a
# backend (forward ... proxy-protocol v1|v2, as OpenBSD's), and headers
# it reads from a trusted balancer (listen on ... proxy-protocol from,
# ours).  The peers are regress/tools/pptool.py, on 127.0.0.1 and ::1.

. "$(atf_get_srcdir)/../lib.sh"

PPTOOL=$TOP/regress/tools/pptool.py
PREFORK=1

require_pp()
{
	require_daemon
	for _c in python3 socat; do
		command -v $_c >/dev/null ||
		    atf_skip "no $_c (make deps installs it)"
	done
}

# The header backend: its port in $bport, what it saw in pp.port.headers.
start_ppserver()
{
	rm -f pp.port
	python3 "$PPTOOL" server "$PWD/pp.port" 120 >pp.out 2>&1 &
	echo $! >pp.pid
	wait_for 10 test -s pp.port || atf_fail "the header backend did not start"
	bport=$(cat pp.port)
}

# The header lines the backend saw, waited for: want_headers COUNT
want_headers()
{
	wait_for 10 sh -c "test \$(wc -l <pp.port.headers) -ge $1" ||
	    atf_fail "the backend saw fewer than $1 headers"
}

# relayd.conf: one relay process, the control socket here, logging, and
# $1, the rest
write_conf()
{
	printf 'prefork 1\nsocket "%s/relayd.sock"\nlog connection\n%s\n' \
	    "$PWD" "$1" >relayd.conf
}

# ppclient ADDRESS PORT HEADER [DATA]: what comes back, in client.out
ppclient()
{
	python3 "$PPTOOL" client "$@" >client.out 2>&1
}

atf_test_case pp_send_v1_v2 cleanup
pp_send_v1_v2_head()
{
	atf_set descr "forward ... proxy-protocol v1 and v2: the backend reads the client's and the relay's addresses first, IPv4 and IPv6"
	atf_set require.user root
	atf_set timeout 60
}
pp_send_v1_v2_body()
{
	require_pp
	start_ppserver
	l1=$(freeport)
	l2=$(freeport)
	write_conf "relay one {
	listen on 127.0.0.1 port $l1
	listen on ::1 port $l1
	forward to 127.0.0.1 port $bport proxy-protocol v1
}
relay two {
	listen on 127.0.0.1 port $l2
	listen on ::1 port $l2
	forward to 127.0.0.1 port $bport proxy-protocol v2
}"
	RELAYS=4 start_relayd
	for a in 127.0.0.1 ::1; do
		for p in $l1 $l2; do
			ppclient $a $p none
			atf_check -o inline:"hello\n" cat client.out
		done
	done
	want_headers 4
	atf_check -o match:"^v1 TCP4 127\.0\.0\.1 127\.0\.0\.1 [0-9]+ $l1\$" \
	    -o match:"^v2 TCP4 127\.0\.0\.1 127\.0\.0\.1 [0-9]+ $l2\$" \
	    -o match:"^v1 TCP6 ::1 ::1 [0-9]+ $l1\$" \
	    -o match:"^v2 TCP6 ::1 ::1 [0-9]+ $l2\$" \
	    -o not-match:"^bad" cat pp.port.headers
	# the header is none of the client's bytes
	wait_for 10 sh -c "test \$(grep -c 'session [0-9]*, bytes in 6 (spliced 6, copied 0), out 6 ' relayd.log) -eq 4" ||
	    atf_fail "the byte counts are not the client's 6 bytes each way"
}
pp_send_v1_v2_cleanup()
{
	stop_all
}

atf_test_case pp_receive cleanup
pp_receive_head()
{
	atf_set descr "listen on ... proxy-protocol from: v1 and v2 headers from a trusted peer give the real client to logs and to the backend's header"
	atf_set require.user root
	atf_set timeout 60
}
pp_receive_body()
{
	require_pp
	start_ppserver
	lport=$(freeport)
	write_conf "relay lb {
	listen on 127.0.0.1 port $lport proxy-protocol from { 10.1.0.0/16,
	    127.0.0.1 }
	listen on ::1 port $lport proxy-protocol from ::1
	forward to 127.0.0.1 port $bport proxy-protocol v2
}"
	RELAYS=2 start_relayd
	ppclient 127.0.0.1 "$lport" v1:192.0.2.7:4242:198.51.100.1:443
	atf_check -o inline:"hello\n" cat client.out
	ppclient 127.0.0.1 "$lport" "v2:[2001:db8::7]:4243:[2001:db8::1]:8443"
	atf_check -o inline:"hello\n" cat client.out
	ppclient ::1 "$lport" v2:192.0.2.8:4244:198.51.100.1:443
	atf_check -o inline:"hello\n" cat client.out
	# UNKNOWN and LOCAL: the connection's own addresses
	ppclient 127.0.0.1 "$lport" v1unknown
	atf_check -o inline:"hello\n" cat client.out
	ppclient 127.0.0.1 "$lport" v2local
	atf_check -o inline:"hello\n" cat client.out
	want_headers 5
	atf_check -o match:"^v2 TCP4 192\.0\.2\.7 198\.51\.100\.1 4242 443\$" \
	    -o match:"^v2 TCP6 2001:db8::7 2001:db8::1 4243 8443\$" \
	    -o match:"^v2 TCP4 192\.0\.2\.8 198\.51\.100\.1 4244 443\$" \
	    -o match:"^v2 TCP4 127\.0\.0\.1 127\.0\.0\.1 [0-9]+ $lport\$" \
	    -o not-match:"^bad" cat pp.port.headers
	test "$(grep -c "^v2 TCP4 127\.0\.0\.1 127\.0\.0\.1 " pp.port.headers)" -eq 2 ||
	    atf_fail "UNKNOWN and LOCAL did not keep the connection's addresses"
	# OpenBSD's end line, with the client the balancer named
	wait_log 10 "^relay lb, session [0-9]* (.*), 0, 192\.0\.2\.7 -> 127\.0\.0\.1:$bport, done\$" ||
	    atf_fail "no end line naming 192.0.2.7"
	wait_log 10 "^relay lb, session [0-9]* (.*), 0, 2001:db8::7 -> 127\.0\.0\.1:$bport, done\$" ||
	    atf_fail "no end line naming 2001:db8::7"
}
pp_receive_cleanup()
{
	stop_all
}

atf_test_case pp_untrusted cleanup
pp_untrusted_head()
{
	atf_set descr "a PROXY header from a peer not in the list is the client's data, not a new address"
	atf_set require.user root
	atf_set timeout 60
}
pp_untrusted_body()
{
	require_pp
	start_ppserver
	lport=$(freeport)
	write_conf "relay lb {
	listen on 127.0.0.1 port $lport proxy-protocol from 10.1.0.0/16
	forward to 127.0.0.1 port $bport proxy-protocol v1
}"
	start_relayd
	ppclient 127.0.0.1 "$lport" v1:192.0.2.7:4242:198.51.100.1:443
	printf 'PROXY TCP4 192.0.2.7 198.51.100.1 4242 443\r\nhello\n' >want
	atf_check -o file:want cat client.out
	want_headers 1
	atf_check -o match:"^v1 TCP4 127\.0\.0\.1 127\.0\.0\.1 [0-9]+ $lport\$" \
	    cat pp.port.headers
}
pp_untrusted_cleanup()
{
	stop_all
}

atf_test_case pp_bad_headers cleanup
pp_bad_headers_head()
{
	atf_set descr "a trusted peer without a valid header, cut short or too slow is closed with a reason; the relay goes on"
	atf_set require.user root
	atf_set timeout 60
}
pp_bad_headers_body()
{
	require_pp
	bport=$(start_backend echo echo)
	lport=$(freeport)
	write_conf "relay lb {
	listen on 127.0.0.1 port $lport proxy-protocol from 127.0.0.1
	forward to 127.0.0.1 port $bport
	session timeout 1
}"
	start_relayd
	for h in 'raw:GET / HTTP/1.0\r\n\r\n' 'raw:PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n' \
	    'raw:PROXY TCP4 1.2.3.999 5.6.7.8 1 2\r\n' \
	    'raw:PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n' \
	    'raw:PROXY TCP6 1.2.3.4 5.6.7.8 1 2\r\n' \
	    "raw:PROXY TCP4 $(printf '%0120d' 0)"; do
		ppclient 127.0.0.1 "$lport" "$h" ""
		atf_check -o empty cat client.out
	done
	test "$(grep -c 'PROXY header invalid$' relayd.log)" -eq 6 ||
	    atf_fail "not six sessions closed as PROXY header invalid"
	# cut short: the peer half-closes in the middle of the line
	ppclient 127.0.0.1 "$lport" "raw:PROXY TCP4 1.2.3.4" ""
	wait_log 10 "PROXY header incomplete\$" || atf_fail "no incomplete header"
	# too slow: nothing within the session timeout
	timeout 10 sh -c "sleep 3 | socat - TCP:127.0.0.1:$lport" >/dev/null
	wait_log 10 "PROXY header timeout\$" || atf_fail "no header timeout"
	# the relay still serves
	ppclient 127.0.0.1 "$lport" v1:192.0.2.7:4242:198.51.100.1:443
	atf_check -o inline:"hello\n" cat client.out
	wait_log 10 "192\.0\.2\.7 -> 127\.0\.0\.1:$bport, done\$" ||
	    atf_fail "no session from 192.0.2.7"
}
pp_bad_headers_cleanup()
{
	stop_all
}

atf_test_case pp_http_remote_addr cleanup
pp_http_remote_addr_head()
{
	atf_set descr "an http relay behind a balancer: \$REMOTE_ADDR and filter rules see the client the header names"
	atf_set require.user root
	atf_set timeout 60
}
pp_http_remote_addr_body()
{
	require_pp
	start_httpd
	lport=$(freeport)
	write_conf "http protocol p {
	match request header set \"X-Client\" value \"\$REMOTE_ADDR:\$REMOTE_PORT\"
	block request from 192.0.2.66
}
relay lb {
	listen on 127.0.0.1 port $lport proxy-protocol from 127.0.0.1
	protocol p
	forward to 127.0.0.1 port $bport
}"
	start_relayd
	ppclient 127.0.0.1 "$lport" v1:192.0.2.7:4242:198.51.100.1:80 \
	    'GET /headers HTTP/1.0\r\nHost: x\r\n\r\n'
	atf_check -o match:"X-Client: 192\.0\.2\.7:4242" cat client.out
	ppclient 127.0.0.1 "$lport" v1:192.0.2.66:4242:198.51.100.1:80 \
	    'GET /headers HTTP/1.0\r\nHost: x\r\n\r\n'
	atf_check -o not-match:"X-Client" cat client.out
	wait_log 10 "192\.0\.2\.66 -> .*, Forbidden" ||
	    atf_fail "the block rule did not see 192.0.2.66"
}
pp_http_remote_addr_cleanup()
{
	stop_all
}

atf_init_test_cases()
{
	atf_add_test_case pp_send_v1_v2
	atf_add_test_case pp_receive
	atf_add_test_case pp_untrusted
	atf_add_test_case pp_bad_headers
	atf_add_test_case pp_http_remote_addr
}
