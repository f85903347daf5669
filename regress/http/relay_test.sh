#! /usr/bin/env atf-sh
# HTTP relays through the real daemon: curl or raw bytes on one side, the
# small backend regress/tools/httpd.py on the other.

. "$(atf_get_srcdir)/../lib.sh"


require_http()
{
	require_daemon
	command -v curl >/dev/null || atf_skip "no curl (make deps installs it)"
	command -v python3 >/dev/null ||
	    atf_skip "no python3 (make deps installs it)"
	command -v socat >/dev/null || atf_skip "no socat (make deps installs it)"
}

# http_conf [PROTOCOL LINES] [RELAY LINES] [FORWARD OPTIONS]: an http
# relay on $lport to the backend, one relay process, every session
# logged; checks every $HTTP_INTERVAL seconds (10).
http_conf()
{
	lport=$(freeport)
	cat >relayd.conf <<CONF
prefork 1
interval ${HTTP_INTERVAL:-10}
socket "$PWD/relayd.sock"
log connection
table <back> { 127.0.0.1 }
http protocol web {
	$1
}
relay www {
	listen on 127.0.0.1 port $lport
	protocol web
	forward to <back> port $bport $3
	$2
}
CONF
}

start_http()
{
	start_httpd
	http_conf "$@"
	PREFORK=1 start_relayd
	url=http://127.0.0.1:$lport
}

# Raw bytes (printf format) to the relay; what came back in "answer".
raw()
{
	# shellcheck disable=SC2059
	printf "$1" | timeout 10 socat -t 5 - "TCP:127.0.0.1:$lport" >answer
}

# The end line of the session that ended with $1 (a pattern), waited for.
end_line()
{
	wait_log 10 "^relay www, session [0-9]* (.*$1" ||
	    atf_fail "no session end line with: $1"
}

atf_test_case http_get_keepalive cleanup
http_get_keepalive_head()
{
	atf_set descr "GETs on one connection; the end line is OpenBSD's with each method, the bytes on their own line"
	atf_set require.user root
	atf_set timeout 30
}
http_get_keepalive_body()
{
	require_http
	start_http
	atf_check -o inline:"200 10000000\n200 10\n200 0\n" curl -s \
	    -w '%{http_code} %{size_download}\n' \
	    -o /dev/null "$url/bytes/10000000" -o /dev/null "$url/bytes/10" \
	    -o /dev/null "$url/bytes/0"
	end_line done
	atf_check -o match:"^relay www, session [0-9]+ \(1 active\), 0, 127\.0\.0\.1 -> 127\.0\.0\.1:$bport, done, GET GET GET\$" \
	    cat relayd.log
	# the big body went through the splice engine
	atf_check -o match:"^relay www, session [0-9]+, bytes in [0-9]+ \(spliced 0, copied [0-9]+\), out [0-9]+ \(spliced [1-9][0-9]*, copied [0-9]+\)\$" \
	    cat relayd.log
	atf_check -o inline:"3\n" -x "grep -c '^GET /bytes/' back.port.requests"
}
http_get_keepalive_cleanup()
{
	stop_all
}

atf_test_case http_show_sessions cleanup
http_show_sessions_head()
{
	atf_set descr "relayctl show sessions shows the request in progress, show relays counts requests"
	atf_set require.user root
	atf_set timeout 30
}
http_show_sessions_body()
{
	require_http
	start_http
	curl -s -o /dev/null "$url/bytes/5" "$url/slow/3000000" &
	echo $! >curl.pid
	wait_for 10 sh -c "$RELAYCTL -s $PWD/relayd.sock show sessions | grep -q '^	request GET /slow/3000000 HTTP/1.1\$'" ||
	    atf_fail "show sessions does not show the request: $($RELAYCTL -s "$PWD/relayd.sock" show sessions)"
	wait "$(cat curl.pid)"
	rm -f curl.pid
	wait_for 10 sh -c "$RELAYCTL -s $PWD/relayd.sock show relays | grep -q 'total: 2 requests'" ||
	    atf_fail "show relays does not count 2 requests: $($RELAYCTL -s "$PWD/relayd.sock" show relays)"
}
http_show_sessions_cleanup()
{
	stop_all
}

atf_test_case http_head_no_body cleanup
http_head_no_body_head()
{
	atf_set descr "HEAD, 204 and 304 answers have no body, and the connection goes on"
	atf_set require.user root
	atf_set timeout 30
}
http_head_no_body_body()
{
	require_http
	start_http
	atf_check -o inline:"200 0\n204 0\n304 0\n200 7\n" curl -s \
	    -w '%{http_code} %{size_download}\n' \
	    -I "$url/bytes/50" -o /dev/null --next -s \
	    -w '%{http_code} %{size_download}\n' -o /dev/null \
	    "$url/status/204" -o /dev/null "$url/status/304" \
	    -o /dev/null "$url/bytes/7"
	end_line done
	atf_check -o match:", done, HEAD GET GET GET\$" cat relayd.log
}
http_head_no_body_cleanup()
{
	stop_all
}

atf_test_case http_post_1g_spliced cleanup
http_post_1g_spliced_head()
{
	atf_set descr "a 1 GiB request body with Content-Length arrives intact, spliced with max"
	atf_set require.user root
	atf_set timeout 120
}
http_post_1g_spliced_body()
{
	require_http
	start_http
	head -c 1073741824 /dev/urandom >body
	sum=$(sha256sum body | cut -c1-64)
	atf_check -o inline:"1073741824 $sum\n" curl -s -T body \
	    -H 'Expect:' "$url/echo"
	end_line done
	# at most what came with the head, a read or two, was copied
	atf_check -o match:"^relay www, session [0-9]+, bytes in 10737[0-9]{5} \(spliced 107[0-9]{7}, copied [0-9]{1,6}\)" \
	    cat relayd.log
	rm -f body
}
http_post_1g_spliced_cleanup()
{
	stop_all
}

atf_test_case http_chunked cleanup
http_chunked_head()
{
	atf_set descr "chunked uploads and downloads, with extensions and trailers, arrive intact"
	atf_set require.user root
	atf_set timeout 60
}
http_chunked_body()
{
	require_http
	start_http
	head -c 5000000 /dev/urandom >body
	sum=$(sha256sum body | cut -c1-64)
	# from a pipe curl sends chunks
	atf_check -o inline:"5000000 $sum\n" -x \
	    "cat body | curl -s -T - -H 'Expect:' $url/echo"
	atf_check -o inline:"$(pattern_sha 3000000)\n" -x \
	    "curl -s --raw $url/chunked/3000000 | python3 -c '
import hashlib, sys
data = sys.stdin.buffer.read(); body = b\"\"
while True:
    size, data = data.split(b\"\\r\\n\", 1)
    n = int(size.split(b\";\")[0], 16)
    if n == 0:
        assert data == b\"X-Trailer: done\\r\\n\\r\\n\", data
        break
    body += data[:n]; assert data[n:n + 2] == b\"\\r\\n\"; data = data[n + 2:]
print(hashlib.sha256(body).hexdigest())'"
	end_line "done, GET"
}
http_chunked_cleanup()
{
	stop_all
}

atf_test_case http_keepalive_1000 cleanup
http_keepalive_1000_head()
{
	atf_set descr "1,000 requests on one keep-alive connection, every answer whole"
	atf_set require.user root
	atf_set timeout 60
}
http_keepalive_1000_body()
{
	require_http
	start_http
	i=0
	while [ $i -lt 1000 ]; do
		printf 'url = "%s/bytes/1024"\noutput = "/dev/null"\n' "$url"
		i=$((i + 1))
	done >curl.conf
	atf_check -o inline:"1000\n" -x \
	    "curl -s -K curl.conf -w '%{http_code} %{size_download} %{num_connects}\n' | grep -c '^200 1024 [01]\$'"
	atf_check -o inline:"1\n" -x \
	    "curl -s -K curl.conf -w '%{num_connects}\n' | grep -c '^1\$'"
	atf_check -o inline:"2000\n" -x "grep -c '^GET /bytes/1024 ' back.port.requests"
	end_line "done, GET GET"
}
http_keepalive_1000_cleanup()
{
	stop_all
}

atf_test_case http_pipelined cleanup
http_pipelined_head()
{
	atf_set descr "pipelined requests are answered in order"
	atf_set require.user root
	atf_set timeout 30
}
http_pipelined_body()
{
	require_http
	start_http
	raw 'GET /bytes/3 HTTP/1.1\r\nHost: a\r\n\r\nHEAD /bytes/9 HTTP/1.1\r\nHost: a\r\n\r\nGET /status/204 HTTP/1.1\r\nHost: a\r\n\r\nGET /bytes/5 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'
	# bodies have no line ends: look for the status lines anywhere
	atf_check -o inline:"200 OK\n200 OK\n204 Status\n200 OK\n" -x \
	    "grep -ao 'HTTP/1.1 [0-9]* [A-Za-z]*' answer | cut -d' ' -f2-"
	atf_check -o inline:"Content-Length: 3\nContent-Length: 9\nContent-Length: 5\n" -x \
	    "grep -a '^Content-Length' answer | tr -d '\r'"
	end_line "done, GET HEAD GET GET\$"
}
http_pipelined_cleanup()
{
	stop_all
}

atf_test_case http_websocket cleanup
http_websocket_head()
{
	atf_set descr "with http websockets an upgraded connection echoes both ways; without, 403 Websocket Forbidden"
	atf_set require.user root
	atf_set timeout 30
}
http_websocket_body()
{
	require_http
	start_http "return error
	http websockets"
	(printf 'GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'
	    sleep 0.5; printf 'frame-one'; sleep 0.2; printf 'frame-two') |
	    timeout 10 socat -t 2 - "TCP:127.0.0.1:$lport" >answer
	atf_check -o match:"^HTTP/1.1 101 Switching Protocols" cat answer
	atf_check -o match:"frame-oneframe-two\$" cat answer
	atf_check -s exit:1 -o ignore grep -i "^Connection: close" answer
	end_line "done, GET\$"

	# off by default
	stop_all
	start_http "return error"
	raw 'GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'
	atf_check -o match:"^HTTP/1.0 403 Forbidden" cat answer
	atf_check -o match:"Websocket Forbidden" cat answer
	end_line "Websocket Forbidden (403 Forbidden)\$"
	atf_check -s exit:1 -o ignore grep /ws back.port.requests
}
http_websocket_cleanup()
{
	stop_all
}

atf_test_case http_connect_stream cleanup
http_connect_stream_head()
{
	atf_set descr "CONNECT turns the session into a stream, as OpenBSD's relayd does"
	atf_set require.user root
	atf_set timeout 30
}
http_connect_stream_body()
{
	require_http
	start_http
	(printf 'CONNECT example:443 HTTP/1.1\r\nHost: example:443\r\n\r\n'
	    sleep 0.5; printf 'tunnelled bytes') |
	    timeout 10 socat -t 2 - "TCP:127.0.0.1:$lport" >answer
	atf_check -o match:"^HTTP/1.1 200 Connection established" cat answer
	atf_check -o match:"tunnelled bytes\$" cat answer
	end_line "done, CONNECT\$"
}
http_connect_stream_cleanup()
{
	stop_all
}

atf_test_case http_close_delimited cleanup
http_close_delimited_head()
{
	atf_set descr "a response without a length ends with the connection, and relayd adds Connection: close"
	atf_set require.user root
	atf_set timeout 30
}
http_close_delimited_body()
{
	require_http
	start_http
	atf_check -o inline:"$(pattern_sha 2000000)\n" -x \
	    "curl -s -D head $url/close/2000000 | sha256sum | cut -c1-64"
	atf_check -o match:"^Connection: close" -x "tr -d '\r' <head"
	end_line "done, GET\$"
}
http_close_delimited_cleanup()
{
	stop_all
}

atf_test_case http_expect_continue cleanup
http_expect_continue_head()
{
	atf_set descr "Expect: 100-continue: the backend's 100 reaches the client, then the body goes"
	atf_set require.user root
	atf_set timeout 30
}
http_expect_continue_body()
{
	require_http
	start_http
	head -c 3000000 /dev/urandom >body
	sum=$(sha256sum body | cut -c1-64)
	atf_check -o inline:"3000000 $sum\n" -e match:"< HTTP/1.1 100 Continue" \
	    curl -s -v -T body -H 'Expect: 100-continue' "$url/echo"
	end_line "done, PUT\$"
}
http_expect_continue_cleanup()
{
	stop_all
}

atf_test_case http_no_splice cleanup
http_no_splice_head()
{
	atf_set descr "with tcp no splice the same bodies pass through userland, counted as copied"
	atf_set require.user root
	atf_set timeout 60
}
http_no_splice_body()
{
	require_http
	start_http "tcp no splice"
	head -c 50000000 /dev/urandom >body
	sum=$(sha256sum body | cut -c1-64)
	atf_check -o inline:"50000000 $sum\n" curl -s -T body -H 'Expect:' \
	    "$url/echo"
	atf_check -o inline:"$(pattern_sha 30000000)\n" -x \
	    "curl -s $url/bytes/30000000 | sha256sum | cut -c1-64"
	end_line "done, PUT\$"
	wait_for 5 grep -q "session [0-9]*, bytes in 500" relayd.log
	atf_check -o match:"bytes in 500[0-9]{5} \(spliced 0, copied 500[0-9]{5}\)" \
	    cat relayd.log
}
http_no_splice_cleanup()
{
	stop_all
}

atf_test_case http_slow_client cleanup
http_slow_client_head()
{
	atf_set descr "a client that reads slowly gets every byte: back-pressure, nothing lost"
	atf_set require.user root
	atf_set timeout 60
}
http_slow_client_body()
{
	require_http
	start_http
	atf_check -o inline:"$(pattern_sha 20000000)\n" -x \
	    "curl -s --limit-rate 10M $url/bytes/20000000 | sha256sum | cut -c1-64"
	atf_check -o inline:"$(pattern_sha 3000000)\n" -x \
	    "curl -s --limit-rate 2M $url/chunked/3000000 | sha256sum | cut -c1-64"
	end_line "done, GET\$"
}
http_slow_client_cleanup()
{
	stop_all
}

atf_test_case http_backend_reset cleanup
http_backend_reset_head()
{
	atf_set descr "a backend that resets ends the session with an error; the relay serves the next one"
	atf_set require.user root
	atf_set timeout 30
}
http_backend_reset_body()
{
	require_http
	start_http
	atf_check -s exit:52 curl -s "$url/reset"
	end_line "GET\$"
	atf_check -o inline:"200 10\n" curl -s -o /dev/null \
	    -w '%{http_code} %{size_download}\n' "$url/bytes/10"
}
http_backend_reset_cleanup()
{
	stop_all
}

atf_test_case http_error_page cleanup
http_error_page_head()
{
	atf_set descr "return error answers with OpenBSD's page and style; without it the connection just closes"
	atf_set require.user root
	atf_set timeout 30
}
http_error_page_body()
{
	require_http
	start_http 'return error style "body { color: teal; }"'
	raw 'GET / HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n'
	atf_check -o match:"^HTTP/1.0 400 Bad Request" cat answer
	atf_check -o match:"^Server: OpenBSD relayd" cat answer
	atf_check -o match:"^Connection: close" cat answer
	atf_check -o match:"body \{ color: teal; \}" cat answer
	atf_check -o match:"<div id='m'>malformed</div>" cat answer
	atf_check -o match:"OpenBSD relayd at 127.0.0.1 port $lport" cat answer
	len=$(sed -n 's/^Content-Length: \([0-9]*\).*/\1/p' answer)
	atf_check_equal "$len" "$(sed '1,/^\r$/d' answer | wc -c)"
	end_line "malformed (400 Bad Request)\$"

	stop_all
	start_http
	raw 'GET / HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n'
	atf_check -s exit:1 test -s answer
	end_line ", malformed\$"
}
http_error_page_cleanup()
{
	stop_all
}

# refused REQUEST CODE LOGTEXT: a request relayd must refuse, with the
# status the client gets and the reason logged; nothing reaches the
# backend but what comes before it.
refused()
{
	raw "$1"
	atf_check -o match:"^HTTP/1.0 $2 " cat answer
	end_line "$3 ($2 "
	atf_check -s exit:1 -o ignore grep -a SMUGGLED back.port.requests
}

# bad_response KIND: the backend answers malformed, the client gets 502.
bad_response()
{
	atf_check -o match:"^502\$" curl -s -o /dev/null -w '%{http_code}\n' \
	    "$url/bad/$1"
}

atf_test_case http_smuggling_cl_te cleanup
http_smuggling_cl_te_head()
{
	atf_set descr "Content-Length with Transfer-Encoding is refused with 400, both ways"
	atf_set require.user root
	atf_set timeout 30
}
http_smuggling_cl_te_body()
{
	require_http
	start_http "return error"
	refused 'POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 38\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /SMUGGLED HTTP/1.1\r\nHost: a\r\n\r\n' \
	    400 "both Transfer-Encoding and Content-Length"
	bad_response cl-te
}
http_smuggling_cl_te_cleanup()
{
	stop_all
}

atf_test_case http_smuggling_two_lengths cleanup
http_smuggling_two_lengths_head()
{
	atf_set descr "two different Content-Length values are refused with 400 (502 from a backend)"
	atf_set require.user root
	atf_set timeout 30
}
http_smuggling_two_lengths_body()
{
	require_http
	start_http "return error"
	refused 'POST /echo HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 37\r\n\r\nGET /SMUGGLED HTTP/1.1\r\nHost: a\r\n\r\n' \
	    400 "conflicting Content-Length"
	bad_response two-cl
}
http_smuggling_two_lengths_cleanup()
{
	stop_all
}

atf_test_case http_smuggling_bad_length cleanup
http_smuggling_bad_length_head()
{
	atf_set descr "a negative or non-numeric Content-Length is refused with 500, as OpenBSD does"
	atf_set require.user root
	atf_set timeout 30
}
http_smuggling_bad_length_body()
{
	require_http
	start_http "return error"
	refused 'POST /echo HTTP/1.1\r\nContent-Length: -5\r\n\r\nhello' \
	    500 "invalid"
	refused 'POST /echo HTTP/1.1\r\nContent-Length: 1e3\r\n\r\nhello' \
	    500 "invalid"
	refused 'POST /echo HTTP/1.1\r\nContent-Length: +5\r\n\r\nhello' \
	    500 "invalid"
	bad_response neg-cl
}
http_smuggling_bad_length_cleanup()
{
	stop_all
}

atf_test_case http_openbsd_connect_order cleanup
http_openbsd_connect_order_head()
{
	atf_set descr "as OpenBSD, the backend is connected once a request head is through and the body is parsed meanwhile: an invalid second chunk size, a chunk whose data never comes and a GET with a body end sessions that name their backend"
	atf_set require.user root
	atf_set timeout 60
}
http_openbsd_connect_order_body()
{
	require_http
	start_http "return error" "session timeout 2"
	# a second chunk size that is not one: 400, the backend was asked
	: >back.port.conns
	raw 'POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n'
	atf_check -o match:"^HTTP/1.0 400 " cat answer
	end_line "127.0.0.1 -> 127.0.0.1:$bport, invalid chunk size (400 "
	wait_for 10 test -s back.port.conns || atf_fail "the backend saw no connection"
	# a chunk whose data never comes: the session times out, with its
	# backend
	python3 - "$lport" <<'PY' || atf_fail "the client failed"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 10)
s.settimeout(10)
s.sendall(b"POST /echo HTTP/1.1\r\nHost: a\r\n"
          b"Transfer-Encoding: chunked\r\n\r\n10\r\nabc")
while s.recv(4096):
    pass
PY
	wait_log 10 "127.0.0.1 -> 127.0.0.1:$bport, .*timeout" ||
	    atf_fail "no timeout: $(grep "relay www, session" relayd.log | tail -2)"
	# a GET with a length and a body: its head goes to the backend, the
	# body is no request of its own, the session ends done
	python3 - "$lport" >answer <<'PY' || atf_fail "the client failed"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 10)
s.settimeout(10)
s.sendall(b"GET /bytes/3 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
          b"\r\nhello")
got = b""
while b"\r\n\r\n" not in got or len(got.split(b"\r\n\r\n", 1)[1]) < 3:
    data = s.recv(4096)
    if not data:
        break
    got += data
sys.stdout.write(got.decode("latin-1"))
PY
	atf_check -o match:"^HTTP/1.1 200 " cat answer
	end_line "127.0.0.1 -> 127.0.0.1:$bport, done, GET\$"
}
http_openbsd_connect_order_cleanup()
{
	stop_all
}

atf_test_case http_smuggling_chunk_size cleanup
http_smuggling_chunk_size_head()
{
	atf_set descr "invalid and overlong chunk-size lines are refused with 400 (502 from a backend)"
	atf_set require.user root
	atf_set timeout 30
}
http_smuggling_chunk_size_body()
{
	require_http
	start_http "return error"
	refused 'POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nGET /SMUGGLED HTTP/1.1\r\n\r\n' \
	    400 "invalid chunk size"
	refused "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;$(head -c 2000 /dev/zero | tr '\0' a)\r\nhello\r\n0\r\n\r\n" \
	    400 "invalid chunk size"
	refused 'POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\nhello\r\n0\r\n\r\n' \
	    400 "invalid chunk size"
	# the head went out: the client sees the answer end early
	atf_check -s not-exit:0 -o ignore curl -s "$url/bad/chunk-size"
	end_line "invalid chunk size (502 Bad Gateway), GET\$"
}
http_smuggling_chunk_size_cleanup()
{
	stop_all
}

atf_test_case http_smuggling_folding cleanup
http_smuggling_folding_head()
{
	atf_set descr "obsolete line folding is refused with 400 (502 from a backend)"
	atf_set require.user root
	atf_set timeout 30
}
http_smuggling_folding_body()
{
	require_http
	start_http "return error"
	refused 'GET / HTTP/1.1\r\nHost: a\r\nX-Folded: a\r\n b\r\n\r\n' \
	    400 "malformed"
	# an empty transfer coding, folded onto the next line
	refused 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n chunked\r\n\r\n' \
	    400 "invalid Transfer-Encoding"
	bad_response fold
}
http_smuggling_folding_cleanup()
{
	stop_all
}

atf_test_case http_smuggling_nul_cr cleanup
http_smuggling_nul_cr_head()
{
	atf_set descr "a NUL, a bare CR or another control character but HTAB in a head or chunk line is refused with 400 (502 from a backend)"
	atf_set require.user root
	atf_set timeout 30
}
http_smuggling_nul_cr_body()
{
	require_http
	start_http "return error"
	refused 'GET / HTTP/1.1\r\nX-A: a\0b\r\n\r\n' 400 "malformed"
	refused 'GET / HTTP/1.1\r\nX-A: a\rContent-Length: 5\r\n\r\n' 400 \
	    "malformed"
	bad_response nul
	bad_response bare-cr
	# the other control characters (RFC 9112 3.2, RFC 9110 5.5), which
	# a backend's parser could take for a space: a vertical tab in the
	# target, an escape, DEL in a field, one in a chunk extension
	refused 'GET /a\013SMUGGLED HTTP/1.1\r\nHost: a\r\n\r\n' 400 "malformed"
	refused 'GET /\033[2J HTTP/1.1\r\nHost: a\r\n\r\n' 400 "malformed"
	refused 'GET / HTTP/1.1\r\nHost: a\r\nX-A: SMUGGLED\177\r\n\r\n' 400 \
	    "malformed"
	raw 'POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;x=\001\r\nhello\r\n0\r\n\r\n'
	atf_check -s exit:1 -o ignore grep -a "^HTTP/1.1 200" answer
	bad_response ctl
	bad_response ctl-reason
	# a tab inside a value is a value's, and bytes above 127 pass
	atf_check -o match:'^X-A: a	b$' -x \
	    "curl -s -H \"\$(printf 'X-A: a\tb')\" '$url/headers' | tr -d '\\r'"
	atf_check -o inline:"404\n" curl -s -o /dev/null -w '%{http_code}\n' \
	    "$url/caf$(printf '\303\251')"
}
http_smuggling_nul_cr_cleanup()
{
	stop_all
}

atf_test_case http_headerlen cleanup
http_headerlen_head()
{
	atf_set descr "a head over http headerlen is refused with 413, a response head with 502"
	atf_set require.user root
	atf_set timeout 30
}
http_headerlen_body()
{
	require_http
	start_http "return error
	http headerlen 1000"
	refused "GET /$(head -c 1200 /dev/zero | tr '\0' a) HTTP/1.1\r\n\r\n" \
	    413 "request headers too large"
	refused "GET / HTTP/1.1\r\nX-A: $(head -c 600 /dev/zero | tr '\0' a)\r\nX-B: $(head -c 600 /dev/zero | tr '\0' a)\r\n\r\n" \
	    413 "request headers too large"
	# a line that never ends is refused too
	refused "GET / HTTP/1.1\r\nX-A: $(head -c 5000 /dev/zero | tr '\0' a)" \
	    413 "request headers too large"
	bad_response big-head
	atf_check -o match:"^502\$" curl -s -o /dev/null -w '%{http_code}\n' \
	    "$url/bad/204-body"
}
http_headerlen_cleanup()
{
	stop_all
}

atf_test_case http_truncated_response cleanup
http_truncated_response_head()
{
	atf_set descr "a response body shorter than its length, or cut mid-chunk, closes the client: curl sees the truncation, the end line is OpenBSD's"
	atf_set require.user root
	atf_set timeout 30
}
http_truncated_response_body()
{
	require_http
	start_http
	# 18: partial file
	atf_check -s exit:18 -o ignore curl -s "$url/short/100000"
	atf_check -s exit:18 -o ignore curl -s "$url/midchunk"
	for n in 1 2; do
		wait_log 10 "^relay www, session $n (" || atf_fail "no end line"
		atf_check -o match:"^relay www, session $n \\(.*, (last write \\(done\\)|done), GET\$" \
		    cat relayd.log
	done
	# what happened, on debug lines
	atf_check -o match:"session 1: last http content read\$" \
	    -o match:"session 2: last http chunk read \\(done\\)\$" cat relayd.log
}
http_truncated_response_cleanup()
{
	stop_all
}

atf_test_case http_garbage cleanup
http_garbage_head()
{
	atf_set descr "300 connections of random bytes behind HTTP-like starts: the relay process survives, answers, and keeps no descriptor"
	atf_set require.user root
	atf_set timeout 120
}
http_garbage_body()
{
	require_http
	start_http "return error
	http websockets"
	rpid=$(children "$(cat relayd.pid)" | awk '/relayd: relay/ { print $1 }')
	[ -n "$rpid" ] || atf_fail "no relay process"
	# sockets: the pipes the splice engine pools for reuse may stay
	base=$(ls -l "/proc/$rpid/fd" | grep -c socket)
	python3 - "$lport" <<'EOF2'
import random, socket, sys
random.seed(20261123)
port = int(sys.argv[1])
starts = [b"", b"GET / HTTP/1.1\r\n", b"GET /bytes/100 HTTP/1.1\r\n\r\n",
          b"POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
          b"POST /echo HTTP/1.1\r\nContent-Length: 10\r\n\r\n",
          b"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n"
          b"Connection: upgrade\r\n\r\n",
          b"GET /chunked/5000 HTTP/1.1\r\n\r\nGET /close/10 HTTP/1.0\r\n\r\n"]
pieces = [b"\r\n", b"\n", b"\r", b"\0", b":", b" ", b"0\r\n\r\n",
          b"Content-Length: 5\r\n", b"Transfer-Encoding: chunked\r\n",
          b"ffffffffffffffff\r\n", b"HTTP/1.1"]
for i in range(300):
    data = random.choice(starts)
    for _ in range(random.randint(0, 40)):
        if random.random() < 0.5:
            data += random.choice(pieces)
        else:
            data += bytes(random.getrandbits(8)
                          for _ in range(random.randint(1, 200)))
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(0.5)
    try:
        s.sendall(data)
        if random.random() < 0.5:
            s.shutdown(socket.SHUT_WR)
        while s.recv(65536):
            pass
    except OSError:
        pass
    s.close()
EOF2
	atf_check -o inline:"200 10\n" curl -s -o /dev/null \
	    -w '%{http_code} %{size_download}\n' "$url/bytes/10"
	kill -0 "$rpid" || atf_fail "the relay process is gone"
	wait_for 10 sh -c "[ \$(ls -l /proc/$rpid/fd | grep -c socket) -le $base ]" ||
	    atf_fail "relay process holds $(ls -l "/proc/$rpid/fd" | grep -c socket) sockets, $base before"
	atf_check -s exit:1 grep -q "lost child" relayd.log
}
http_garbage_cleanup()
{
	stop_all
}

# Filter rules.  /headers answers with the request head the backend got.

atf_test_case http_rule_headers cleanup
http_rule_headers_head()
{
	atf_set descr "header append, set and remove, with macros, on requests and responses"
	atf_set require.user root
	atf_set timeout 30
}
http_rule_headers_body()
{
	require_http
	start_http 'match request header append "X-Forwarded-For" value "$REMOTE_ADDR"
	match request header set "X-Port" value "port $REMOTE_PORT"
	match request header set "X-Set" value "$SERVER_NAME at $SERVER_ADDR:$SERVER_PORT for $HOST, $TIMEOUT s"
	match request header remove "X-Drop*"
	match response header set "X-Answer" value "from $REMOTE_ADDR"
	match response header remove "Content-Type"'
	curl -s -D head -H 'X-Set: old' -H 'X-Drop-Me: 1' -H 'X-Forwarded-For: 10.0.0.1' \
	    "$url/headers" | tr -d '\r' >body
	atf_check -o inline:"X-Forwarded-For: 10.0.0.1\nX-Forwarded-For: 127.0.0.1\n" \
	    grep "^X-Forwarded-For" body
	atf_check -o inline:"X-Set: OpenBSD relayd at 127.0.0.1:$lport for 127.0.0.1:$lport, 600 s\n" \
	    grep "^X-Set" body
	atf_check -s exit:1 grep -i "^X-Drop" body
	atf_check -o match:"^X-Port: port [1-9][0-9]*\$" cat body
	atf_check -o match:"^X-Answer: from 127.0.0.1" -x "tr -d '\r' <head"
	end_line "done, GET\$"
}
http_rule_headers_cleanup()
{
	stop_all
}

atf_test_case http_rule_block_pass cleanup
http_rule_block_pass_head()
{
	atf_set descr "the last matching pass or block decides, quick stops, from/to and method match; per request on one connection"
	atf_set require.user root
	atf_set timeout 30
}
http_rule_block_pass_body()
{
	require_http
	printf '/secret*\n# a comment\n\n/hidden\n' >blocked
	start_http "return error
	block request path \"/private/*\"
	pass request path \"/private/open\"
	block request quick method DELETE
	pass request method DELETE
	block request from 127.0.0.2
	block request to 127.0.0.0/8 path \"/to-me\"
	block request quick path file \"$PWD/blocked\""
	for p in bytes/1 private/x private/open to-me secret/a hidden; do
		curl -s -o /dev/null -w "$p %{http_code}\n" "$url/$p"
	done >codes
	atf_check -o inline:"bytes/1 200\nprivate/x 403\nprivate/open 404\nto-me 403\nsecret/a 403\nhidden 403\n" cat codes
	atf_check -o inline:"403\n" curl -s -o /dev/null -w '%{http_code}\n' \
	    -X DELETE "$url/bytes/1"
	# per request: the first passes, the second is refused
	atf_check -o inline:"200\n403\n" curl -s -w '%{http_code}\n' \
	    -o /dev/null "$url/bytes/1" -o /dev/null "$url/private/x"
	end_line "Forbidden (403 Forbidden), GET\$"
	atf_check -s exit:1 grep -a "private/x" back.port.requests
}
http_rule_block_pass_cleanup()
{
	stop_all
}

atf_test_case http_rule_path_query_cookie cleanup
http_rule_path_query_cookie_head()
{
	atf_set descr "path strip and set, query and cookie matches, cookie set"
	atf_set require.user root
	atf_set timeout 30
}
http_rule_path_query_cookie_body()
{
	require_http
	# the rules match the request as it came, then act in order
	start_http 'return error
	match request path strip 1
	match request path set "*/old" value "/headers"
	block request query "debug" value "1"
	block request cookie "session" value "bad*"
	match request cookie set "lang" value "en"'
	atf_check -o match:"^GET /headers\\?x=1 HTTP/1.1" -x \
	    "curl -s '$url/api/headers?x=1' | tr -d '\\r'"
	atf_check -o match:"^GET /headers HTTP/1.1" -x \
	    "curl -s '$url/x/old' | tr -d '\\r'"
	atf_check -o match:"^Cookie: lang=en;" -x \
	    "curl -s '$url/v/headers' | tr -d '\\r'"
	atf_check -o inline:"403\\n200\\n" curl -s -o /dev/null \
	    -w '%{http_code}\n' "$url/v/bytes/1?a=2&debug=1" -o /dev/null \
	    "$url/v/bytes/1?debug=2"
	atf_check -o inline:"403\\n" curl -s -o /dev/null -w '%{http_code}\n' \
	    -b 'theme=x; session=bad42' "$url/v/bytes/1"
	atf_check -o inline:"200\\n" curl -s -o /dev/null -w '%{http_code}\n' \
	    -b 'session=good' "$url/v/bytes/1"
}
http_rule_path_query_cookie_cleanup()
{
	stop_all
}

atf_test_case http_rule_tags_labels cleanup
http_rule_tags_labels_head()
{
	atf_set descr "tags last across requests of a connection and name the end line; labels show in the error page and the log"
	atf_set require.user root
	atf_set timeout 30
}
http_rule_tags_labels_body()
{
	require_http
	start_http 'return error
	match request path "/login" tag "seen"
	match request tagged "seen" header set "X-Seen" value "1"
	match request header "X-User" value "admin" tag "admin"
	block request tagged "admin" label "no admins here"
	match request header log "X-Seen" label "audit"'
	curl -s -o /dev/null "$url/login" -o body "$url/headers"
	atf_check -o match:"^X-Seen: 1" -x "tr -d '\r' <body"
	end_line "done, GET GET\$"
	atf_check -o match:"^relay www, session [0-9]+ \(1 active\), seen, " cat relayd.log
	curl -s -H 'X-User: admin' "$url/bytes/1" >page
	atf_check -o match:"<div id='l'>no admins here</div>" cat page
	end_line "Forbidden (403 Forbidden)\$"
	atf_check -o match:", admin, 127.0.0.1 -> .*Forbidden \(403 Forbidden\)\$" cat relayd.log
}
http_rule_tags_labels_cleanup()
{
	stop_all
}

atf_test_case http_rule_log cleanup
http_rule_log_head()
{
	atf_set descr "log options add [key: value] for requests and {key: value} for responses to the end line"
	atf_set require.user root
	atf_set timeout 30
}
http_rule_log_body()
{
	require_http
	start_http 'match request header log "X-Trace"
	match request query log "id"
	match response header log "Content-Length"'
	curl -s -o /dev/null -H 'X-Trace: abc' "$url/bytes/5?id=42" \
	    -o /dev/null "$url/bytes/7"
	# curl sends -H with both requests
	end_line "done, \[X-Trace: abc\] \[id: 42\] GET {Content-Length: 5}; \[X-Trace: abc\] GET {Content-Length: 7};\$"
}
http_rule_log_cleanup()
{
	stop_all
}

atf_test_case http_rule_log_decisions cleanup
http_rule_log_decisions_head()
{
	atf_set descr "pass log and block log (OpenBSD -current's) log each request or response their rule decides on a line of its own, without log connection; match log is refused"
	atf_set require.user root
	atf_set timeout 30
}
http_rule_log_decisions_body()
{
	require_http
	start_httpd
	http_conf 'return error
	pass log request quick path "/private/open"
	block log request path "/private/*"
	block request path "/quiet/*"
	match request header set "X-A" value "1"
	block log response header "Content-Length" value "7"'
	# the decision lines need no "log connection"
	sed -i '/^log connection$/d' relayd.conf
	atf_check -o match:"block log response header \"Content-Length\" value \"7\"	# rule 5" \
	    -e ignore "$RELAYD" -nv -f relayd.conf
	PREFORK=1 start_relayd
	url=http://127.0.0.1:$lport
	# two requests on one connection: a line each, one session
	atf_check -o inline:"404\n403\n" curl -s -o /dev/null \
	    -w '%{http_code}\n' "$url/private/open" -o /dev/null \
	    "$url/private/x?a=1"
	wait_log 10 ", block request from 127.0.0.1, rule 2: GET /private/x?a=1\$" ||
	    atf_fail "no block line"
	atf_check -o match:"^relay www, session ([0-9]+), pass request from 127.0.0.1, rule 1: GET /private/open\$" \
	    cat relayd.log
	atf_check -o inline:"2\n" -x "grep -E ', (pass|block) (request|response) ' relayd.log |
	    sed 's/^relay www, session \([0-9]*\),.*/\1/' | uniq -c | awk '{print \$1}'"
	# a rule without log, match rules and no rule at all log nothing
	atf_check -o inline:"403\n200\n" curl -s -o /dev/null \
	    -w '%{http_code}\n' "$url/quiet/x" -o /dev/null "$url/bytes/5"
	# a response, decided by its rule
	atf_check -o inline:"403\n" curl -s -o /dev/null -w '%{http_code}\n' \
	    "$url/bytes/7"
	wait_log 10 "^relay www, session [0-9]*, block response to 127.0.0.1, rule 5: 200 OK\$" ||
	    atf_fail "no response line"
	# what the client wrote is escaped: bytes above 127, the backslash
	raw 'GET /private/caf\303\251\\x HTTP/1.1\r\nHost: a\r\n\r\n'
	wait_log 10 "rule 2: GET /private/caf\\\\303\\\\251\\\\134x\$" ||
	    atf_fail "no escaped line"
	atf_check -s exit:1 grep -a "$(printf '\303')" relayd.log
	atf_check -s exit:1 grep -E "(rule [0-9]+: .*(quiet|bytes/5))|^relay www, session [0-9]+ \(" relayd.log
	atf_check -o inline:"4\n" -x "grep -cE ', (pass|block) (request|response) ' relayd.log"
	# match rules decide nothing: they cannot log a decision
	sed -i 's/match request header set/match log request header set/' \
	    relayd.conf
	atf_check -s exit:1 -e match:"relayd.conf:[0-9]+: match log: only pass and block rules log what they decide" \
	    "$RELAYD" -n -f relayd.conf
}
http_rule_log_decisions_cleanup()
{
	stop_all
}

atf_test_case http_rule_forward cleanup
http_rule_forward_head()
{
	atf_set descr "forward to sends matching requests to another table, per request on one connection, and the end line notes the move"
	atf_set require.user root
	atf_set timeout 30
}
http_rule_forward_body()
{
	require_http
	start_httpd
	rm -f api.port
	python3 "$HTTPD" "$PWD/api.port" 120 >api.out 2>&1 &
	echo $! >api.pid
	wait_for 10 test -s api.port || atf_fail "the second backend did not start"
	aport=$(cat api.port)
	lport=$(freeport)
	cat >relayd.conf <<CONF
prefork 1
socket "$PWD/relayd.sock"
log connection
table <back> { 127.0.0.1 }
table <api> { 127.0.0.1 }
http protocol web {
	match request path "/api/*" forward to <api>
}
relay www {
	listen on 127.0.0.1 port $lport
	protocol web
	forward to <back> port $bport
	forward to <api> port $aport
}
CONF
	PREFORK=1 start_relayd
	url=http://127.0.0.1:$lport
	# one client connection for the three
	# the second backend does not know /api/...: 404 is its answer
	atf_check -o inline:"200 1\n404 0\n200 0\n" curl -s \
	    -w '%{http_code} %{num_connects}\n' \
	    -o /dev/null "$url/bytes/3" -o /dev/null "$url/api/bytes/4" \
	    -o /dev/null "$url/bytes/5"
	atf_check -o inline:"GET /bytes/3 HTTP/1.1\nGET /bytes/5 HTTP/1.1\n" \
	    cat back.port.requests
	atf_check -o inline:"GET /api/bytes/4 HTTP/1.1\n" cat api.port.requests
	# each move is noted once the new backend is connected
	end_line "done, GET GET -> 127.0.0.1:$aport GET -> 127.0.0.1:$bport\$"
}
http_rule_forward_cleanup()
{
	stop_all
}

atf_test_case http_rule_hash cleanup
http_rule_hash_head()
{
	atf_set descr "hash feeds a header into mode hash: one user, one backend; the users spread over both"
	atf_set require.user root
	atf_set timeout 60
}
http_rule_hash_body()
{
	require_http
	start_httpd
	python3 "$HTTPD" "$PWD/two.port" 120 127.0.0.2 "$bport" >two.out 2>&1 &
	echo $! >two.pid
	wait_for 10 test -s two.port || atf_fail "the second backend did not start"
	lport=$(freeport)
	cat >relayd.conf <<CONF
prefork 1
socket "$PWD/relayd.sock"
log connection
table <pool> { 127.0.0.1, 127.0.0.2 }
http protocol web {
	match request header hash "X-User"
}
relay www {
	listen on 127.0.0.1 port $lport
	protocol web
	forward to <pool> port $bport mode hash
}
CONF
	PREFORK=1 start_relayd
	for u in $(seq 1 20); do
		for k in 1 2 3; do
			curl -s -o /dev/null -H "X-User: u$u" \
			    "http://127.0.0.1:$lport/bytes/1?u=$u&k=$k"
		done
	done
	for u in $(seq 1 20); do
		a=$(grep -c "?u=$u&" back.port.requests)
		b=$(grep -c "?u=$u&" two.port.requests)
		[ "$a" -eq 3 ] && [ "$b" -eq 0 ] && continue
		[ "$a" -eq 0 ] && [ "$b" -eq 3 ] && continue
		atf_fail "user u$u went to both backends ($a and $b)"
	done
	[ -s back.port.requests ] && [ -s two.port.requests ] ||
	    atf_fail "20 users all went to one backend"
}
http_rule_hash_cleanup()
{
	stop_all
}

atf_test_case http_rule_url cleanup
http_rule_url_head()
{
	atf_set descr "url matches host and parent domains with the path, its prefixes and the query, or their digest"
	atf_set require.user root
	atf_set timeout 30
}
http_rule_url_body()
{
	require_http
	sha=$(printf 'example.com/secret.html' | sha1sum | cut -c1-40)
	md5=$(printf 'www.example.org/a/b?x=1' | md5sum | cut -c1-32)
	start_http "return error
	block request url \"example.com/private/\"
	block request url \"example.com/1/2/3/4/\"
	block request url digest \"$sha\"
	block request url digest \"$md5\""
	for t in "www.example.com /private/x" "WWW.Example.COM:80 /private/" \
	    "example.com /1/2/3/4/private/" \
	    "example.com /privateer" "a.b.example.com /secret.html" \
	    "example.com /secret.htm" "www.example.org /a/b?x=1" \
	    "www.example.org /a/b?x=2"; do
		set -- $t
		curl -s -o /dev/null -w "$1$2 %{http_code}\n" -H "Host: $1" \
		    "$url$2"
	done >codes
	atf_check -o inline:"www.example.com/private/x 403
WWW.Example.COM:80/private/ 403
example.com/1/2/3/4/private/ 404
example.com/privateer 404
a.b.example.com/secret.html 403
example.com/secret.htm 404
www.example.org/a/b?x=1 403
www.example.org/a/b?x=2 404
" cat codes
}
http_rule_url_cleanup()
{
	stop_all
}

atf_test_case http_openbsd_reasons cleanup
http_openbsd_reasons_head()
{
	atf_set descr "faults of a request end with OpenBSD's reasons and status codes"
	atf_set require.user root
	atf_set timeout 60
}
http_openbsd_reasons_body()
{
	require_http
	start_http "return error"
	# a header name with a non-token character, a line without ":"
	refused 'GET / HTTP/1.1\r\nX A: 1\r\n\r\nGET /SMUGGLED HTTP/1.1\r\n\r\n' \
	    400 "malformed"
	atf_check -o match:"<div id='m'>malformed</div>" cat answer
	refused 'GET / HTTP/1.1\r\nX-A 1\r\n\r\nGET /SMUGGLED HTTP/1.1\r\n\r\n' \
	    400 "malformed"
	# a request line without a space
	refused 'GET\r\n\r\nGET /SMUGGLED HTTP/1.1\r\n\r\n' 400 "malformed"
	# a second Host
	refused 'GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n' 400 \
	    "malformed header"
	atf_check -o match:"<div id='m'>malformed header</div>" cat answer
	# lengths in strtonum(3)'s words, status 500
	refused 'POST /echo HTTP/1.1\r\nContent-Length: -5\r\n\r\nhello' \
	    500 "invalid"
	refused 'POST /echo HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\nhello' \
	    500 "too large"
	# a chunk-size line that does not end
	refused "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n$(head -c 1100 /dev/zero | tr '\0' 5)" \
	    400 "chunk size too long"
}
http_openbsd_reasons_cleanup()
{
	stop_all
}

atf_test_case http_host_checks cleanup
http_host_checks_head()
{
	atf_set descr "an absolute-form target whose host differs from Host is 400 malformed host; an empty Host for a url rule is 400"
	atf_set require.user root
	atf_set timeout 30
}
http_host_checks_body()
{
	require_http
	start_http 'return error
	match request url "nothing.example/" tag URL'
	refused 'GET http://a.example/SMUGGLED HTTP/1.1\r\nHost: b.example\r\n\r\n' \
	    400 "malformed host"
	# the same host, another case: it passes
	raw 'GET http://A.Example/x HTTP/1.1\r\nHost: a.example\r\nConnection: close\r\n\r\n'
	atf_check -o match:"^HTTP/1.1 404 Not Found" cat answer
	atf_check -o match:"^GET http://A.Example/x HTTP/1.1" cat back.port.requests
	# a Host without a name, where a url rule must look it up
	raw 'GET /SMUGGLED HTTP/1.1\r\nHost: \r\n\r\n'
	atf_check -o match:"^HTTP/1.0 400 Bad Request" cat answer
	end_line "Bad Request (400 Bad Request)"
	atf_check -s exit:1 -o ignore grep -a SMUGGLED back.port.requests
}
http_host_checks_cleanup()
{
	stop_all
}

atf_test_case http_absolute_without_host cleanup
http_absolute_without_host_head()
{
	atf_set descr "an absolute-form request without Host takes its host from the target, as OpenBSD's: rules and the backend see it; a Host that contradicts the target is still 400"
	atf_set require.user root
	atf_set timeout 30
}
http_absolute_without_host_body()
{
	require_http
	start_http 'return error
	match request header log "Host"
	block request header "Host" value "b.example"'
	raw 'GET http://a.example/64 HTTP/1.1\r\nConnection: close\r\n\r\n'
	atf_check -o match:"^HTTP/1.1 404 Not Found" cat answer
	end_line "done, \\[Host: a.example\\] GET"
	atf_check -o match:"^GET http://a.example/64 HTTP/1.1" cat back.port.requests
	# the rules see the target's host
	raw 'GET http://b.example/x HTTP/1.1\r\nConnection: close\r\n\r\n'
	atf_check -o match:"^HTTP/1.0 403 Forbidden" cat answer
	end_line "Forbidden"
	# with a port; and a Host that names another host
	raw 'GET http://a.example:8080/64 HTTP/1.1\r\nConnection: close\r\n\r\n'
	end_line "done, \\[Host: a.example:8080\\] GET"
	raw 'GET http://a.example/SMUGGLED HTTP/1.1\r\nHost: c.example\r\n\r\n'
	atf_check -o match:"^HTTP/1.0 400 Bad Request" cat answer
	end_line "malformed host"
	atf_check -s exit:1 -o ignore grep -a SMUGGLED back.port.requests
}
http_absolute_without_host_cleanup()
{
	stop_all
}

atf_test_case http_idle_body_to_eof cleanup
http_idle_body_to_eof_head()
{
	atf_set descr "session timeout while an HTTP/1.0 answer runs to the backend's close: a backend that pauses longer than the timeout has its session ended at the timeout (it then writes into a closed socket), as OpenBSD's"
	atf_set require.user root
	atf_set timeout 30
}
http_idle_body_to_eof_body()
{
	require_http
	start_httpd
	http_conf "" "session timeout 2"
	PREFORK=1 start_relayd
	start=$(date +%s)
	printf 'GET /pause/4 HTTP/1.0\r\n\r\n' |
	    timeout 15 socat -t 12 - "TCP:127.0.0.1:$lport" >answer
	took=$(($(date +%s) - start))
	atf_check -o match:"^HTTP/1.0 200 OK" -o match:"hello\$" cat answer
	[ "$took" -lt 4 ] || atf_fail "the session lasted $took s, beyond its 2 s timeout"
	end_line "splice timeout, GET"
	wait_for 10 test -s back.port.requests.pause ||
	    atf_fail "the backend did not finish"
	atf_check -o match:"^write failed: (Broken pipe|Connection reset by peer)" \
	    cat back.port.requests.pause
}
http_idle_body_to_eof_cleanup()
{
	stop_all
}

atf_test_case http_body_framing cleanup
http_body_framing_head()
{
	atf_set descr "GET with a Content-Length forwards no body and no length; POST with neither length nor chunks runs to the client's end, Connection: close added"
	atf_set require.user root
	atf_set timeout 30
}
http_body_framing_body()
{
	require_http
	start_http
	# what follows the head of a GET is the next request
	raw 'GET /headers HTTP/1.1\r\nHost: a\r\nContent-Length: 27\r\n\r\nGET /bytes/3 HTTP/1.1\r\n\r\n'
	atf_check -o match:"^GET /headers HTTP/1.1" -o match:"^GET /bytes/3 HTTP/1.1" \
	    cat back.port.requests
	atf_check -s exit:1 grep -a "^Content-Length: 27$(printf '\r')\$" answer
	atf_check -o match:"^HTTP/1.1 200 OK" cat answer
	# a POST body without length or chunks: to the end, and a close
	raw 'POST /upload HTTP/1.1\r\nHost: a\r\n\r\nhello world'
	atf_check -o match:"^11 $(printf 'hello world' | sha256sum | cut -d' ' -f1)\$" \
	    cat answer
}
http_body_framing_cleanup()
{
	stop_all
}

atf_test_case http_connect_error_pages cleanup
http_connect_error_pages_head()
{
	atf_set descr "return error answers no host up with 502 session failed, a refused connect with 500 socket error, one never accepted with 504 connect timeout"
	atf_set require.user root
	atf_set timeout 60
}
http_connect_error_pages_body()
{
	require_http
	# a table whose host is down: no backend to be had
	bport=$(freeport)
	HTTP_INTERVAL=1 http_conf "return error" "" "check tcp"
	PREFORK=1 start_relayd
	wait_log 10 "state unknown -> down" || atf_fail "the host is not down"
	raw 'GET / HTTP/1.1\r\nHost: a\r\n\r\n'
	atf_check -o match:"^HTTP/1.0 502 Bad Gateway" \
	    -o match:"<div id='m'>session failed</div>" cat answer
	end_line "session failed (502 Bad Gateway), GET\$"
	stop_all

	# nothing listens: the connect fails after it began
	http_conf "return error"
	PREFORK=1 start_relayd
	raw 'GET / HTTP/1.1\r\nHost: a\r\n\r\n'
	atf_check -o match:"^HTTP/1.0 500 Internal Server Error" cat answer
	end_line "socket error: Connection refused (500 Internal Server Error), GET\$"
	stop_all

	# a backend that never accepts
	start_stalled_backend
	http_conf "return error" "session timeout 2"
	PREFORK=1 start_relayd
	raw 'GET / HTTP/1.1\r\nHost: a\r\n\r\n'
	atf_check -o match:"^HTTP/1.0 504 Gateway Timeout" \
	    -o match:"<div id='m'>connect timeout</div>" cat answer
	end_line "connect timeout (504 Gateway Timeout), GET\$"
}
http_connect_error_pages_cleanup()
{
	stop_all
}

atf_test_case http_protodebug cleanup
http_protodebug_head()
{
	atf_set descr "relayd -d prints each protocol, its flags and rules at startup as OpenBSD's relay_protodebug()"
	atf_set require.user root
	atf_set timeout 30
}
http_protodebug_body()
{
	require_http
	start_http 'return error
	tcp { nodelay, no splice }
	match request header "X-A" value "b*" tag X
	block request quick path "/admin*" label "no admin"'
	atf_check -o match:"^protocol [0-9]+: name web\$" cat relayd.log
	atf_check -o match:"^	flags: used, return, relay flags: \$" cat relayd.log
	atf_check -o match:"^	tcp flags: nodelay, no splice\$" cat relayd.log
	atf_check -o match:"^	tls session tickets: disabled\$" cat relayd.log
	atf_check -o match:"^	type: http\$" cat relayd.log
	atf_check -o match:'^		match request header "X-A" value "b\*" tag "X" $' \
	    cat relayd.log
	atf_check -o match:'^		block request quick path "/admin\*" label "no admin" $' \
	    cat relayd.log
}
http_protodebug_cleanup()
{
	stop_all
}

atf_test_case http_parse_while_connecting cleanup
http_parse_while_connecting_head()
{
	atf_set descr "the relay parses what the client sent while it connects: a bad request after a good one ends the session at once, nothing forwarded"
	atf_set require.user root
	atf_set timeout 60
}
http_parse_while_connecting_body()
{
	require_http
	# a backend that never accepts: the connect stays under way
	start_stalled_backend
	http_conf "" "session timeout 30"
	PREFORK=1 start_relayd
	raw 'PUT /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloBAD LINE\r\n\r\n'
	end_line "malformed, PUT\$"
	stop_all

	# a backend that accepts at once sees nothing of it either
	start_http
	raw 'PUT /SMUGGLED HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloBAD LINE\r\n\r\n'
	end_line "malformed, PUT\$"
	atf_check -s exit:1 -o ignore grep -a SMUGGLED back.port.requests
}
http_parse_while_connecting_cleanup()
{
	stop_all
}

atf_test_case http_no_write_through cleanup
http_no_write_through_head()
{
	atf_set descr "what one read brings goes out only when all of it parsed: a bad chunk size later in the read drops the whole of it"
	atf_set require.user root
	atf_set timeout 30
}
http_no_write_through_body()
{
	require_http
	start_http
	# one request and its answer, then one write with a good request
	# and a bad one after it, on the same connection
	python3 - "$lport" <<'PY' || atf_fail "the client failed"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 10)
s.settimeout(10)
s.sendall(b"GET /bytes/1 HTTP/1.1\r\nHost: a\r\n\r\n")
got = b""
while not got.endswith(b"\r\n\r\n\x00"):
    got += s.recv(4096)
s.sendall(b"POST /SMUGGLED HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n"
          b"hello"
          b"POST /b HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
          b"\r\nzz\r\n")
while s.recv(4096):
    pass
PY
	end_line "invalid chunk size, GET POST POST\$"
	atf_check -s exit:1 -o ignore grep -a SMUGGLED back.port.requests
}
http_no_write_through_cleanup()
{
	stop_all
}

atf_test_case http_rule_semantics cleanup
http_rule_semantics_head()
{
	atf_set descr "filter rules log as OpenBSD's: url globs and digests, whole cookie fields, path with query, a removed field (removed)"
	atf_set require.user root
	atf_set timeout 30
}
http_rule_semantics_body()
{
	require_http
	sha=$(printf 'a.example/headers' | sha1sum | cut -c1-40)
	start_http "match request url log \"A.example/head*\"
	match request url log digest \"$sha\"
	match request cookie log \"SessID\" value \"ABC*\"
	match request path log \"/head*\"
	match request header remove \"X-Drop\"
	match request header log \"X-Drop\""
	atf_check -o save:body curl -s -H 'Host: a.example' \
	    -H 'Cookie: $Version=1; sessid="abcdef"; other=1' \
	    -H 'X-Drop: 1' "$url/headers?q=1"
	end_line "done, \[a.example/headers\] \[$sha\] \[Cookie: \$Version=1; sessid=\"abcdef\"; other=1\] \[/headers: q=1\] \[X-Drop: 1 (removed)\] GET;\$"
	# the field is gone from what the backend got
	atf_check -s exit:1 grep -i '^X-Drop' body
}
http_rule_semantics_cleanup()
{
	stop_all
}

atf_test_case http_rule_patterns cleanup
http_rule_patterns_head()
{
	atf_set descr "pattern, glob and glob ignorecase before keys and values of filter rules, as OpenBSD -current's"
	atf_set require.user root
	atf_set timeout 30
}
http_rule_patterns_body()
{
	require_http
	start_http 'return error
	match request path pattern "%.php$" tag PHP
	match request header log pattern "^X%-T" value glob ignorecase "ON"
	match request query log glob ignorecase "ID"
	match request cookie log pattern "^s%w+" value pattern "^%d+$"
	match request header log glob "x-lower"
	block request quick path pattern "^/admin"'
	atf_check -o ignore curl -s -H 'X-Test: on' -H 'Cookie: sid=12' \
	    -H 'X-Lower: 1' "$url/a.php?id=7"
	end_line "done, \[X-Test: on\] \[id: 7\] \[Cookie: sid=12\] \[X-Lower: 1\] GET;\$"
	atf_check -o match:"^relay www, session 1 \(1 active\), PHP, " \
	    cat relayd.log
	# a value that does not match: no log; a key that does not
	atf_check -o ignore curl -s -H 'X-Test: off' -H 'Cookie: sid=ab' \
	    "$url/b.txt"
	end_line "[0-9]*, 0, .*done, GET\$"
	atf_check -o match:"^403\$" curl -s -o /dev/null -w '%{http_code}\n' \
	    "$url/admin/x"
}
http_rule_patterns_cleanup()
{
	stop_all
}

atf_test_case http_connection_close cleanup
http_connection_close_head()
{
	atf_set descr "a request with Connection: close is the client's last, and an answer with it ends the client's connection (RFC 9112 9.6)"
	atf_set require.user root
	atf_set timeout 30
}
http_connection_close_body()
{
	require_http
	start_http
	raw 'GET /bytes/1 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET /SMUGGLED HTTP/1.1\r\nHost: a\r\n\r\n'
	atf_check -o inline:"1\n" sh -c "grep -ac '^HTTP/1.1 200' answer"
	end_line "done, GET\$"
	atf_check -s exit:1 -o ignore grep -a SMUGGLED back.port.requests
	# the backend keeps its connection: the relay ends the client's
	python3 - "$lport" <<'PY' || atf_fail "the connection stayed open"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 10)
s.settimeout(5)
s.sendall(b"GET /closing HTTP/1.1\r\nHost: a\r\n\r\n")
got = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    got += d
sys.exit(0 if got.endswith(b"bye\n") else 1)
PY
}
http_connection_close_cleanup()
{
	stop_all
}

atf_test_case http_last_answer_close_delimited cleanup
http_last_answer_close_delimited_head()
{
	atf_set descr "the answer to a client's last request, ended by the backend's close, ends the session although the client keeps its connection open"
	atf_set require.user root
	atf_set timeout 60
}
http_last_answer_close_delimited_body()
{
	require_http
	start_http
	# a first request, its answer read; then the last one (HTTP/1.0),
	# answered without a length: the client reads to the end and keeps
	# its socket open for 20 s, longer than the end line is waited for
	python3 - "$lport" >client.out 2>&1 <<'PY' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 10)
s.settimeout(10)
s.sendall(b"GET /bytes/5 HTTP/1.1\r\nHost: a\r\n\r\n")
got = b""
while b"\r\n\r\n" not in got or len(got.split(b"\r\n\r\n", 1)[1]) < 5:
    d = s.recv(4096)
    if not d:
        sys.exit("the first answer did not come")
    got += d
s.sendall(b"GET /close/10 HTTP/1.0\r\n\r\n")
got = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    got += d
print("answer", len(got.split(b"\r\n\r\n", 1)[1]), flush=True)
time.sleep(20)
s.close()
PY
	echo $! >client.pid
	wait_for 10 grep -q "^answer 10\$" client.out ||
	    atf_fail "the last answer did not come whole: $(cat client.out)"
	end_line "done, GET GET\$"
	atf_check -o inline:"" "$RELAYCTL" -s "$PWD/relayd.sock" show sessions
}
http_last_answer_close_delimited_cleanup()
{
	stop_all
}

atf_test_case http_head_deadline cleanup
http_head_deadline_head()
{
	atf_set descr "a request head sent a byte at a time ends at the protocol's header timeout (ours), with 408 under return error"
	atf_set require.user root
	atf_set timeout 60
}
http_head_deadline_body()
{
	require_http
	start_http 'return error
	http header timeout 2'
	# a byte every 0.3 s, for 15 s at the most
	python3 - "$lport" <<'PY' >answer || atf_fail "the head was not cut"
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 10)
s.settimeout(0.3)
start = time.time()
s.sendall(b"GET / HTTP/1.1\r\nX-Slow: ")
got = b""
while time.time() - start < 15:
    try:
        s.sendall(b"a")
        d = s.recv(4096)
        if not d:
            break
        got += d
    except socket.timeout:
        continue
    except OSError:
        break
sys.stdout.write(got.split(b"\r\n")[0].decode() + "\n")
sys.exit(0 if time.time() - start < 8 else 1)
PY
	atf_check -o inline:"HTTP/1.0 408 Request Timeout\n" cat answer
	end_line "request header timeout (408 Request Timeout)\$"
	# relayd -nv shows the option, and a bad value is refused
	atf_check -o match:"^	http header timeout 2\$" -e ignore \
	    "$RELAYD" -nv -f relayd.conf
}
http_head_deadline_cleanup()
{
	stop_all
}

atf_init_test_cases()
{
	atf_add_test_case http_rule_url
	atf_add_test_case http_rule_hash
	atf_add_test_case http_rule_forward
	atf_add_test_case http_rule_headers
	atf_add_test_case http_rule_block_pass
	atf_add_test_case http_rule_path_query_cookie
	atf_add_test_case http_rule_tags_labels
	atf_add_test_case http_rule_log
	atf_add_test_case http_rule_log_decisions
	atf_add_test_case http_garbage
	atf_add_test_case http_get_keepalive
	atf_add_test_case http_show_sessions
	atf_add_test_case http_head_no_body
	atf_add_test_case http_post_1g_spliced
	atf_add_test_case http_chunked
	atf_add_test_case http_keepalive_1000
	atf_add_test_case http_pipelined
	atf_add_test_case http_websocket
	atf_add_test_case http_connect_stream
	atf_add_test_case http_close_delimited
	atf_add_test_case http_expect_continue
	atf_add_test_case http_no_splice
	atf_add_test_case http_slow_client
	atf_add_test_case http_backend_reset
	atf_add_test_case http_error_page
	atf_add_test_case http_smuggling_cl_te
	atf_add_test_case http_smuggling_two_lengths
	atf_add_test_case http_smuggling_bad_length
	atf_add_test_case http_smuggling_chunk_size
	atf_add_test_case http_openbsd_connect_order
	atf_add_test_case http_smuggling_folding
	atf_add_test_case http_smuggling_nul_cr
	atf_add_test_case http_headerlen
	atf_add_test_case http_truncated_response
	atf_add_test_case http_openbsd_reasons
	atf_add_test_case http_host_checks
	atf_add_test_case http_absolute_without_host
	atf_add_test_case http_idle_body_to_eof
	atf_add_test_case http_body_framing
	atf_add_test_case http_connect_error_pages
	atf_add_test_case http_protodebug
	atf_add_test_case http_parse_while_connecting
	atf_add_test_case http_no_write_through
	atf_add_test_case http_rule_semantics
	atf_add_test_case http_rule_patterns
	atf_add_test_case http_connection_close
	atf_add_test_case http_last_answer_close_delimited
	atf_add_test_case http_head_deadline
}
