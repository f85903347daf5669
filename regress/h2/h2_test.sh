#! /usr/bin/env atf-sh
# HTTP/2 clients of a TLS relay ("http http2") through the real daemon:
# curl --http2 and nghttp as clients, regress/tools/h2tool.py for the
# ones that misbehave, httpd.py as the HTTP/1.1 backend.

. "$(atf_get_srcdir)/../lib.sh"

H2TOOL=$TOP/regress/tools/h2tool.py

require_h2()
{
	require_daemon
	for _c in curl nghttp h2load openssl python3; do
		command -v $_c >/dev/null ||
		    atf_skip "no $_c (make deps installs it)"
	done
	curl -V | grep -q HTTP2 || atf_skip "curl without HTTP/2"
}

# h2_start "PROTOCOL LINES" [RELAY LINES]: certificates, httpd.py, and
# relayd with an http protocol that has "http http2" and a TLS listener
# on $lport to the backend on $bport.
h2_start()
{
	require_h2
	mkca
	mkcert 127.0.0.1 ec IP:127.0.0.1
	start_httpd
	tls_conf http "http http2
	$1" "$2"
	PREFORK=1 start_relayd
	url=https://127.0.0.1:$lport
}

# curl over h2: "VERSION CODE SIZE" of the answer, its body to $1.out
h2get()
{
	_o=$1
	shift
	timeout 60 curl -sk --http2 -o "$_o.out" \
	    -w '%{http_version} %{http_code} %{size_download}\n' "$@"
}

# h2is WANT NAME CURL-ARGS: h2get's line must match the pattern WANT
h2is()
{
	_want=$1
	shift
	_got=$(h2get "$@")
	echo "$_got" | grep -Eq "^$_want\$" ||
	    atf_fail "$*: \"$_got\", not \"$_want\""
}

end_lines()
{
	grep "relay r, session [0-9]* (" relayd.log
}

atf_test_case h2_alpn cleanup
h2_alpn_head()
{
	atf_set "descr" "h2 is offered by ALPN with http2; HTTP/1.1 clients and relays without it are as before"
	atf_set "require.user" "root"
}
h2_alpn_body()
{
	h2_start
	h2is "2 200 10" a "$url/bytes/10"
	h2is "1.1 200 10" b --http1.1 "$url/bytes/10"
	# no ALPN at all: HTTP/1.1
	printf 'GET /bytes/10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' |
	    timeout 10 openssl s_client -quiet -connect "127.0.0.1:$lport" \
	    2>/dev/null >noalpn.out
	atf_check -o match:"^HTTP/1.1 200" head -1 noalpn.out
	# the h2 session's end line is OpenBSD's, with its request
	wait_log 10 "done, GET$" || atf_fail "no end line"
	end_lines >end.out
	atf_check -o match:"127.0.0.1 -> 127.0.0.1:$bport, done, GET$" cat end.out

	# the same relay without http2 answers h2 clients with HTTP/1.1
	stop_all
	sed -i 's/http http2/http no http2/' relayd.conf
	start_httpd
	sed -i "s/forward to 127.0.0.1 port [0-9]*/forward to 127.0.0.1 port $bport/" relayd.conf
	PREFORK=1 start_relayd
	h2is "1.1 200 10" c "$url/bytes/10"
}
h2_alpn_cleanup()
{
	stop_all
}

atf_test_case h2_bodies cleanup
h2_bodies_head()
{
	atf_set "descr" "GET and POST with bodies of 0, 1 KiB, 1 MiB and 100 MiB over h2, hashes compared; chunked answers keep their trailers"
	atf_set "require.user" "root"
	atf_set "timeout" "240"
}
h2_bodies_body()
{
	h2_start
	for n in 0 1024 1048576 104857600; do
		h2is "2 200 $n" get "$url/bytes/$n"
		[ "$(sha256sum <get.out | cut -d' ' -f1)" = "$(pattern_sha $n)" ] ||
		    atf_fail "GET of $n bytes: wrong bytes"
		head -c "$n" /dev/urandom >body
		want="$n $(sha256sum <body | cut -d' ' -f1)"
		h2is "2 200.*" post --data-binary @body \
		    "$url/post"
		[ "$(cat post.out)" = "$want" ] ||
		    atf_fail "POST of $n bytes: backend saw $(cat post.out)"
	done
	# a body of no announced length goes to the backend in chunks
	head -c 300000 /dev/urandom >body
	want="300000 $(sha256sum <body | cut -d' ' -f1)"
	h2is "2 200.*" chunked -T - "$url/put" <body
	[ "$(cat chunked.out)" = "$want" ] || atf_fail "PUT without length"
	# a chunked answer: all of it, and its trailer as HTTP/2 trailers
	timeout 30 nghttp -v "$url/chunked/5000" >nghttp.out 2>&1 ||
	    atf_fail "nghttp failed"
	atf_check -o ignore grep -a "recv (stream_id=[0-9]*) x-trailer: done" nghttp.out
	h2is "2 200 5000" chk "$url/chunked/5000"
	[ "$(sha256sum <chk.out | cut -d' ' -f1)" = "$(pattern_sha 5000)" ] ||
	    atf_fail "chunked answer: wrong bytes"
	# HEAD: the head GET would give, no body
	h2is "2 200 0" head -I "$url/bytes/77"
}
h2_bodies_cleanup()
{
	stop_all
}

atf_test_case h2_parallel cleanup
h2_parallel_head()
{
	atf_set "descr" "100 streams at once on one connection, every one answered, one session; the same with 6 connections and 16 pipelined on each"
	atf_set "require.user" "root"
}
h2_parallel_body()
{
	h2_start
	timeout 60 nghttp -n -s -m 100 "$url/bytes/1024" >nghttp.out 2>&1 ||
	    atf_fail "nghttp failed: $(tail -3 nghttp.out)"
	[ "$(grep -c ' 200 .*/bytes/1024$' nghttp.out)" -eq 100 ] ||
	    atf_fail "not 100 answers of 200: $(tail -3 nghttp.out)"
	wait_log 10 "done, GET" || atf_fail "no end line"
	[ "$(end_lines | wc -l)" -eq 1 ] || atf_fail "not one session"
	[ "$(end_lines | grep -o ' GET' | wc -l)" -eq 100 ] ||
	    atf_fail "not 100 requests in the end line"
	[ "$(grep -c "GET /bytes/1024" back.port.requests)" -eq 100 ] ||
	    atf_fail "the backend did not see 100 requests"

	# 6 connections, 16 requests pipelined on each: the same answers
	stop_all
	sed -i 's/http http2$/http http2 connections 6\n\thttp http2 pipeline 16/' \
	    relayd.conf
	start_httpd
	sed -i "s/forward to 127.0.0.1 port [0-9]*/forward to 127.0.0.1 port $bport/" relayd.conf
	PREFORK=1 start_relayd
	timeout 60 nghttp -n -s -m 100 "$url/bytes/1024" >one.out 2>&1 ||
	    atf_fail "nghttp failed: $(tail -3 one.out)"
	[ "$(grep -c ' 200 .*/bytes/1024$' one.out)" -eq 100 ] ||
	    atf_fail "not 100 answers of 200 pipelined"
}
h2_parallel_cleanup()
{
	stop_all
}

atf_test_case h2_rules cleanup
h2_rules_head()
{
	atf_set "descr" "a rule blocks one stream (403, or a reset without return error) and block log logs it; the others on the connection go on"
	atf_set "require.user" "root"
}
h2_rules_body()
{
	h2_start 'return error
	block log request path "/blocked*"
	match request header set "X-Via" value "relayd"'
	timeout 30 nghttp -n -s "$url/bytes/10" "$url/blocked/1" \
	    "$url/bytes/20" >nghttp.out 2>&1
	atf_check -o match:" 200 .*/bytes/10$" cat nghttp.out
	atf_check -o match:" 403 .*/blocked/1$" cat nghttp.out
	atf_check -o match:" 200 .*/bytes/20$" cat nghttp.out
	# the rules changed what the backend got, as on HTTP/1.1
	h2is "2 200.*" hdr "$url/headers"
	atf_check -o match:"^X-Via: relayd" cat hdr.out
	atf_check -o match:"^host: 127.0.0.1:$lport" cat hdr.out
	# a Host that names another than :authority (RFC 9113 8.3.1)
	timeout 30 nghttp -H "host: other.example" "$url/bytes/10" \
	    >host.out 2>&1
	atf_check -o match:"malformed host" cat host.out
	# a :path that is no path (RFC 9113 8.3.1; libnghttp2 checks it for
	# http and https only) reaches no backend: it would go as an
	# absolute form naming another host than Host
	atf_check -o inline:"ended\n" timeout 30 python3 "$H2TOOL" target \
	    "$lport" 0
	wait_log 10 "stream 1: malformed (400 Bad Request)" ||
	    atf_fail "no line for the stream with no path"
	atf_check -s exit:1 grep "index.htm" back.port.requests
	# control characters reach no backend (RFC 9113 8.2.1, RFC 9110
	# 5.5): the HTTP/1.1 request would carry them
	atf_check -o match:"^(ended|reset) (ended|reset)$" timeout 30 \
	    python3 "$H2TOOL" ctl "$lport" 0
	atf_check -s exit:1 grep -a "/ctl/\|$(printf 'a\001b')" \
	    back.port.requests
	# the refusal on a line of its own; the end line is OpenBSD's
	wait_log 10 "relay r, session [0-9]*, stream [0-9]*: Forbidden (403 Forbidden)$" ||
	    atf_fail "no line for the refused stream"
	# block log: the decision on a stream, a line of its own too
	wait_log 10 "relay r, session [0-9]*, block request from 127.0.0.1, rule 1: GET /blocked/1$" ||
	    atf_fail "no line for the stream block log decided"
	wait_log 10 "(1 active), 0, 127.0.0.1 -> 127.0.0.1:$bport, done, GET GET GET$" ||
	    atf_fail "the end line is not OpenBSD's"
	atf_check -s exit:1 grep "GET /blocked" back.port.requests

	# without return error the stream is reset, the session goes on
	stop_all
	sed -i '/return error/d' relayd.conf
	start_httpd
	sed -i "s/forward to 127.0.0.1 port [0-9]*/forward to 127.0.0.1 port $bport/" relayd.conf
	PREFORK=1 start_relayd
	timeout 30 nghttp -n -s "$url/blocked/2" "$url/bytes/30" >reset.out 2>&1
	atf_check -o match:" 200 .*/bytes/30$" cat reset.out
	atf_check -s exit:1 grep "/blocked/2$" reset.out
}
h2_rules_cleanup()
{
	stop_all
}

atf_test_case h2_forward_to cleanup
h2_forward_to_head()
{
	atf_set "descr" "per-stream forward to: the streams of one connection reach the backends their rules chose"
	atf_set "require.user" "root"
}
h2_forward_to_body()
{
	require_h2
	mkca
	mkcert 127.0.0.1 ec IP:127.0.0.1
	start_httpd
	p1=$bport
	mv back.pid back1.pid
	mkdir b2
	(cd b2 && start_httpd && mv back.pid ../back2.pid && echo "$bport" >port)
	p2=$(cat b2/port)
	lport=$(freeport)
	conf_head >relayd.conf
	cat >>relayd.conf <<CONF
table <one> { 127.0.0.1 }
table <two> { 127.0.0.1 }
http protocol p {
	http http2
	match request path "/two/*" forward to <two>
}
relay r {
	listen on 127.0.0.1 port $lport tls
	protocol p
	forward to <one> port $p1 check tcp
	forward to <two> port $p2 check tcp
}
CONF
	PREFORK=1 start_relayd
	wait_for 10 sh -c "\"$RELAYCTL\" -s '$PWD/relayd.sock' show hosts |
	    grep -c 'up' | grep -qx 2" || atf_fail "the hosts did not come up"
	url=https://127.0.0.1:$lport
	timeout 30 nghttp -n -s "$url/bytes/10" "$url/two/x" "$url/bytes/20" \
	    >nghttp.out 2>&1
	[ "$(grep -c ' 200 ' nghttp.out)" -eq 2 ] &&
	    grep -q ' 404 .*/two/x$' nghttp.out ||
	    atf_fail "not the answers expected: $(tail -4 nghttp.out)" \
		"$(tail -6 relayd.log)"
	atf_check -o match:"GET /bytes/10" cat back.port.requests
	atf_check -o match:"GET /bytes/20" cat back.port.requests
	atf_check -s exit:1 grep "/two/" back.port.requests
	atf_check -o match:"GET /two/x" cat b2/back.port.requests
}
h2_forward_to_cleanup()
{
	stop_all
}

atf_test_case h2_backend_dies cleanup
h2_backend_dies_head()
{
	atf_set "descr" "a backend that dies mid-body: that stream ends in error, the connection and the next request go on"
	atf_set "require.user" "root"
}
h2_backend_dies_body()
{
	# one backend connection: the requests are pipelined on it
	h2_start "http http2 connections 1
	http http2 pipeline 16"
	# Content-Length 2000000, half of it, then the backend closes
	timeout 30 nghttp -s "$url/short/2000000" "$url/bytes/10" \
	    >nghttp.out 2>&1
	atf_check -o match:" 200 .*/bytes/10$" cat nghttp.out
	atf_check -s exit:1 grep " 200 .*/short/2000000$" nghttp.out
	# the next stream on the same connection, after the backend died
	timeout 30 nghttp -s "$url/short/100000" "$url/bytes/30" \
	    "$url/bytes/40" >again.out 2>&1
	atf_check -o match:" 200 .*/bytes/40$" cat again.out
	# an answer with "Connection: close": what was pipelined behind it
	# goes again on a new connection, every stream is answered (the
	# backend answers once the two are behind it: a busy machine may
	# bring the client's streams to the relay after the answer)
	timeout 30 nghttp -n -s "$url/closing/2" "$url/bytes/50" \
	    "$url/bytes/60" >closing.out 2>&1
	[ "$(grep -c ' 200 ' closing.out)" -eq 3 ] ||
	    atf_fail "not 3 answers after a close: $(cat closing.out)"
	[ "$(grep -c 'GET /bytes/60 ' back.port.requests)" -eq 2 ] ||
	    atf_fail "/bytes/60 was not sent again: $(cat back.port.requests)"
	kill -0 "$(cat relayd.pid)" || atf_fail "relayd died"
}
h2_backend_dies_cleanup()
{
	stop_all
}

atf_test_case h2_backend_unreachable cleanup
h2_backend_unreachable_head()
{
	atf_set "descr" "a backend that refuses the connect: every stream gets its 500 page, the session its end line"
	atf_set "require.user" "root"
}
h2_backend_unreachable_body()
{
	require_h2
	mkca
	mkcert 127.0.0.1 ec IP:127.0.0.1
	# nothing listens on the backend's port: the connect is refused,
	# OpenBSD's 500 "socket error" page (as for HTTP/1.1)
	bport=$(freeport)
	tls_conf http "http http2
	return error"
	PREFORK=1 start_relayd
	url=https://127.0.0.1:$lport
	timeout 30 nghttp -s "$url/a" "$url/b" >refused.out 2>&1
	[ "$(grep -c ' 500 .*/[ab]$' refused.out)" -eq 2 ] ||
	    atf_fail "not two 500: $(cat refused.out)"
	wait_log 10 "relay r, session [0-9]* (.*127.0.0.1:$bport"
	kill -0 "$(cat relayd.pid)" || atf_fail "relayd died"
}
h2_backend_unreachable_cleanup()
{
	stop_all
}

atf_test_case h2_request_rate cleanup
h2_request_rate_head()
{
	atf_set "descr" "max-src-request-rate counts HTTP/2 streams: over it a stream gets 429 with retry-after, the connection stays and is read again when the source may ask again"
	atf_set "require.user" "root"
}
h2_request_rate_body()
{
	h2_start "" "max-src-request-rate 3/60"
	# three answers of 1 MiB each beside two 429s, 64 KiB windows: the
	# 429s do not hold the connection (the answers would wait a second
	# for the client's WINDOW_UPDATE frames)
	_t0=$(date +%s%N)
	timeout 30 nghttp -nv "$url/bytes/1048576" "$url/bytes/1048575" \
	    "$url/bytes/1048574" "$url/bytes/4" "$url/bytes/5" >rate.out 2>&1
	_ms=$((($(date +%s%N) - _t0) / 1000000))
	atf_check -o inline:"3\n" grep -c ":status: 200" rate.out
	atf_check -o inline:"2\n" grep -c ":status: 429" rate.out
	[ "$_ms" -lt 800 ] || atf_fail "the answers took $_ms ms"
	atf_check -o match:"retry-after: [0-9]+" cat rate.out
	# one connection: no GOAWAY before the client's own
	grep -q "recv GOAWAY" rate.out && atf_fail "the connection ended"
	# another source, one request after another on one connection:
	# after its first 429 the connection is read a second later
	timeout 30 curl -sk --http2 --interface 127.0.0.3 \
	    -w "%{http_code} %{num_connects} %{time_total}\n" \
	    -o /dev/null "$url/bytes/1" -o /dev/null "$url/bytes/2" \
	    -o /dev/null "$url/bytes/3" -o /dev/null "$url/bytes/4" \
	    -o /dev/null "$url/bytes/5" >held.out
	atf_check -o inline:"3\n" grep -c "^200 " held.out
	_m=$(held429 held.out) || atf_fail "$_m"
	kill -0 "$(cat relayd.pid)" || atf_fail "relayd died"
}
h2_request_rate_cleanup()
{
	stop_all
}

atf_test_case h2_reload cleanup
h2_reload_head()
{
	atf_set "descr" "a reload during streams: they finish, whole"
	atf_set "require.user" "root"
}
h2_reload_body()
{
	h2_start
	# 3 MiB at 64 KiB every 50 ms: 2.4 s
	timeout 60 curl -sk --http2 -o slow.out "$url/slow/3145728" &
	echo $! >curl.pid
	wait_for 10 grep -q "GET /slow" back.port.requests ||
	    atf_fail "the download did not start"
	atf_check -o ignore "$RELAYCTL" -s "$PWD/relayd.sock" reload
	wait_log 10 "configuration reloaded\|reload" ||
	    atf_fail "no reload"
	wait "$(cat curl.pid)" || atf_fail "the download failed"
	rm -f curl.pid
	[ "$(sha256sum <slow.out | cut -d' ' -f1)" = "$(pattern_sha 3145728)" ] ||
	    atf_fail "the download is not whole"
	h2is "2 200 10" after "$url/bytes/10"
}
h2_reload_cleanup()
{
	stop_all
}

atf_test_case h2_limits cleanup
h2_limits_head()
{
	atf_set "descr" "http2 streams, headerlen and header timeout hold for h2 streams; a second header list over headerlen ends the connection"
	atf_set "require.user" "root"
}
h2_limits_body()
{
	h2_start 'http http2 streams 5
	http headerlen 1024
	http header timeout 1
	return error'
	timeout 30 nghttp -v "$url/bytes/10" >settings.out 2>&1
	atf_check -o match:"SETTINGS_MAX_CONCURRENT_STREAMS\(0x03\):5" \
	    grep -a -A3 "recv SETTINGS" settings.out
	# a client that keeps to 5 at once: 20 requests all answered
	timeout 30 h2load -n 20 -c 1 -m 5 "$url/bytes/100" >m5.out 2>&1
	atf_check -o match:"status codes: 20 2xx" cat m5.out
	# a header list over headerlen: 413
	big=$(head -c 1500 /dev/zero | tr '\0' a)
	h2is "2 413.*" big -H "X-Big: $big" \
	    "$url/bytes/10"
	# a second one on the same connection ends it (an HPACK bomb would
	# send them without end); when both came in one read, the first's
	# 413 is not sent either
	timeout 30 curl -sk --http2 -o /dev/null -w '%{http_code} ' \
	    -H "X-Big: $big" "$url/bytes/10" "$url/bytes/10" >twice.out
	atf_check -o match:"^(413|000) 000 " cat twice.out
	wait_log 10 "http2 header lists too large" || atf_fail "not logged"
	# a body that stops coming: 408 after the header timeout
	(sleep 6) | timeout 30 curl -sk --http2 -T - -o slow.out \
	    -w '%{http_code} %{time_starttransfer}\n' "$url/put" >slow.res
	atf_check -o match:"^408 [0-4][.]" cat slow.res
	atf_check -o match:"request timeout" cat slow.out
	# one that keeps coming, a byte each 0.4 s for 3.2 s: each moves
	# the timeout on, and the request is answered
	(for i in 1 2 3 4 5 6 7 8; do printf x; sleep 0.4; done) |
	    timeout 30 curl -sk --http2 -T - -o trickle.out \
	    -w '%{http_code}\n' "$url/put" >trickle.res
	atf_check -o inline:"200\n" cat trickle.res
}
h2_limits_cleanup()
{
	stop_all
}

atf_test_case h2_hpack_bomb cleanup
h2_hpack_bomb_head()
{
	atf_set "descr" "header blocks that inflate far past headerlen (an HPACK bomb) end the connection at once (GOAWAY ENHANCE_YOUR_CALM) while another client is served"
	atf_set "require.user" "root"
}
h2_hpack_bomb_body()
{
	h2_start
	# 2000 streams of 4 MB each once decoded, behind 2 MB on the wire
	python3 "$H2TOOL" bomb "$lport" 2000 >bomb.out &
	echo $! >bomb.pid
	# a bystander on the same relay process is answered meanwhile
	atf_check -o inline:"200\n" timeout 10 curl -sk --http2 --max-time 5 \
	    -o /dev/null -w '%{http_code}\n' "$url/bytes/10"
	wait "$(cat bomb.pid)"
	rm -f bomb.pid
	atf_check -o match:"^goaway 11 closed" cat bomb.out
	wait_log 10 "http2 header list too large" || atf_fail "not logged"
}
h2_hpack_bomb_cleanup()
{
	[ -f bomb.pid ] && kill "$(cat bomb.pid)" 2>/dev/null
	stop_all
}

atf_test_case h2_memory_back cleanup
h2_memory_back_head()
{
	atf_set "descr" "after 200 HTTP/2 clients of 100 streams each have gone, the relay process gives most of what they took back to the system"
	atf_set "require.user" "root"
	atf_set "timeout" "180"
}
# the relay process of this relayd (prefork 1)
relay_pid()
{
	pgrep -P "$(cat relayd.pid)" -f "relayd: relay"
}
# its resident memory, and the most it had, KiB
relay_rss()
{
	rss_kib "$(relay_pid)"
}
relay_hwm()
{
	awk '/^VmHWM:/ { print $2 }' "/proc/$(relay_pid)/status"
}
relay_rss_below()
{
	[ "$(relay_rss)" -lt "$1" ]
}
h2_memory_back_body()
{
	# a pool of 6 a client (not one a stream): 1,200 backend
	# connections to the test's backend, not 20,000
	h2_start 'http http2 connections 6
	http http2 pipeline 16'
	h2is "2 200 10" first "$url/bytes/10"
	base=$(relay_rss)
	timeout 120 h2load -c 200 -m 100 -n 20000 "$url/bytes/1000" \
	    >load.out 2>&1
	atf_check -o match:"status codes: 20000 2xx" cat load.out
	peak=$(relay_hwm)
	echo "relay process: $base KiB before, peak $peak KiB" >&2
	[ "$peak" -gt $((base + 16384)) ] ||
	    atf_skip "the load took only $((peak - base)) KiB: nothing to give back"
	# within the next seconds' statistics, down by half of the growth
	# at least (the allocator kept all of it: 32 of 32 MB)
	wait_for 10 relay_rss_below $((base + (peak - base) / 2)) ||
	    atf_fail "the relay process kept $(relay_rss) KiB (base $base, peak $peak)"
	echo "relay process: $(relay_rss) KiB after" >&2
	h2is "2 200 10" after "$url/bytes/10"
}
h2_memory_back_cleanup()
{
	stop_all
}

atf_test_case h2_fd_limit cleanup
h2_fd_limit_head()
{
	atf_set "descr" "at the open-files limit, HTTP/2 streams that wait for backend connections do not make the relay process spin: connects wait a second for a descriptor, and are served once there is one"
	atf_set "require.user" "root"
	atf_set "timeout" "120"
}
# CPU ticks (user and system) of process $1
cpu_ticks()
{
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}
# the open files of process $1 are $2 or more
fds_at()
{
	_n=$(find "/proc/$1/fd" -mindepth 1 | wc -l)
	echo "$_n open files" >&2
	[ "$_n" -ge "$2" ]
}
h2_fd_limit_body()
{
	# relayd under a limit of 48 open files
	printf '#!/bin/sh\nulimit -n 48 && exec "%s" "$@"\n' "$RELAYD" \
	    >limited.sh
	chmod +x limited.sh
	RELAYD=$PWD/limited.sh h2_start 'http http2 connections 100'
	rp=$(relay_pid)
	[ -n "$rp" ] || atf_fail "no relay process"
	atf_check -o match:"^Max open files +48 +48 " \
	    grep "^Max open files" "/proc/$rp/limits"
	# 60 streams that each hold a backend connection for 4 s
	timeout 60 h2load -c 1 -m 60 -n 60 "$url/pause/4" >load.out 2>&1 &
	echo $! >load.pid
	wait_for 10 fds_at "$rp" 44 ||
	    atf_fail "the limit was not reached: $(fds_at "$rp" 0)"
	t0=$(cpu_ticks "$rp")
	sleep 2
	t1=$(cpu_ticks "$rp")
	hz=$(getconf CLK_TCK)
	echo "relay process at the limit: $((t1 - t0)) ticks of $((2 * hz))" >&2
	# a loop on EMFILE took all of a core
	[ $((t1 - t0)) -lt $((hz / 2)) ] ||
	    atf_fail "the relay process used $((t1 - t0)) of $((2 * hz)) ticks at the limit"
	wait_log 1 "out of file descriptors" || atf_fail "not logged"
	wait "$(cat load.pid)"
	rm -f load.pid
	# every stream was answered once descriptors came free
	atf_check -o match:"status codes: 60 2xx" cat load.out
}
h2_fd_limit_cleanup()
{
	[ -f load.pid ] && kill "$(cat load.pid)" 2>/dev/null
	stop_all
}

atf_test_case h2_abuse cleanup
h2_abuse_head()
{
	atf_set "descr" "rapid reset, CONTINUATION, PING and SETTINGS floods are cut off (GOAWAY ENHANCE_YOUR_CALM), logged once; fair clients are not, a PING after every answer or streams given up late neither"
	atf_set "require.user" "root"
}
h2_abuse_body()
{
	h2_start
	atf_check -o inline:"goaway 11 closed headers 0\n" \
	    python3 "$H2TOOL" rapid "$lport" 2000
	atf_check -o match:"^goaway 11 closed" \
	    python3 "$H2TOOL" continuation "$lport" 100
	atf_check -o match:"^goaway 11 closed" python3 "$H2TOOL" ping "$lport" 3000
	atf_check -o match:"^goaway 11 closed" \
	    python3 "$H2TOOL" settings "$lport" 3000
	# fair use: resets below the bound, many requests one by one
	atf_check -o match:"^no goaway open" python3 "$H2TOOL" rapid "$lport" 50
	atf_check -o inline:"answered 300\n" python3 "$H2TOOL" get "$lport" 300
	# streams given up after 0.4 s, as calls at their deadline are, are
	# no rapid reset
	atf_check -o inline:"no goaway answered 1\n" \
	    python3 "$H2TOOL" late "$lport" 160
	# a PING after every answer, more than the bucket holds
	atf_check -o inline:"answered 800 no goaway\n" \
	    python3 "$H2TOOL" getping "$lport" 800
	wait_log 10 "control frame flood.*" || atf_fail "no end line"
	[ "$(grep -c "http2 rapid reset" relayd.log)" -eq 1 ] ||
	    atf_fail "rapid reset not logged once"
	[ "$(grep -c "http2 CONTINUATION flood" relayd.log)" -eq 1 ] ||
	    atf_fail "CONTINUATION flood not logged once"
	[ "$(grep -c "http2 control frame flood" relayd.log)" -eq 2 ] ||
	    atf_fail "control frame floods not logged once each"
	kill -0 "$(cat relayd.pid)" || atf_fail "relayd died"
	h2is "2 200 10" after "$url/bytes/10"
}
h2_abuse_cleanup()
{
	stop_all
}

atf_test_case h2_window_closed cleanup
h2_window_closed_head()
{
	atf_set "descr" "a client whose window never opens is ended by the session timeout, as a slow reader"
	atf_set "require.user" "root"
}
h2_window_closed_body()
{
	h2_start "" "session timeout 2"
	start=$(date +%s)
	# a stream window of 0, never opened
	timeout 20 nghttp -w 0 "$url/bytes/1048576" >/dev/null 2>&1
	wait_log 10 "buffer event timeout" ||
	    atf_fail "the session did not time out"
	[ $(($(date +%s) - start)) -lt 10 ] || atf_fail "it took too long"
}
h2_window_closed_cleanup()
{
	stop_all
}

atf_test_case h2_show_sessions cleanup
h2_show_sessions_head()
{
	atf_set "descr" "relayctl show sessions shows an h2 session's streams and its last request"
	atf_set "require.user" "root"
}
h2_show_sessions_body()
{
	h2_start
	timeout 60 nghttp -s "$url/slow/3145728" "$url/bytes/5" >nghttp.out 2>&1 &
	echo $! >nghttp.pid
	wait_for 10 grep -q "GET /slow" back.port.requests ||
	    atf_fail "the download did not start"
	relayctl show sessions >sessions.out
	# the second has its own backend connection: it may be through
	atf_check -o match:"http2 streams [12] open, 2 requests, 2 backend connections" \
	    cat sessions.out
	atf_check -o match:"request GET /bytes/5 HTTP/2" cat sessions.out
	wait "$(cat nghttp.pid)" || atf_fail "nghttp failed"
	rm -f nghttp.pid
}
h2_show_sessions_cleanup()
{
	stop_all
}

atf_test_case h2_pool cleanup
h2_pool_head()
{
	atf_set "descr" "a pool of backend connections per client: no request waits behind a slow answer, at most http2 connections, idle ones reused, a failed connect fails its streams only"
	atf_set "require.user" "root"
}
h2_pool_body()
{
	h2_start "http http2 connections 3
	return error"
	# a small answer is not held behind a slow one (1.6 s)
	timeout 30 nghttp -n -s "$url/slow/2097152" "$url/bytes/10" \
	    >hol.out 2>&1 || atf_fail "nghttp failed: $(tail -3 hol.out)"
	_slow=$(grep -n "/slow/2097152$" hol.out | cut -d: -f1)
	_small=$(grep -n "/bytes/10$" hol.out | cut -d: -f1)
	[ -n "$_slow" ] && [ -n "$_small" ] && [ "$_small" -lt "$_slow" ] ||
	    atf_fail "/bytes/10 waited for /slow: $(tail -2 hol.out)"
	atf_check -o inline:"2\n" sh -c "wc -l <back.port.conns"

	# 100 streams at once: 3 backend connections, every one answered
	: >back.port.conns
	timeout 60 h2load -n 100 -c 1 -m 100 "$url/bytes/1024" >par.out 2>&1
	atf_check -o match:"100 succeeded" cat par.out
	atf_check -o inline:"3\n" sh -c "wc -l <back.port.conns"

	# one request after the other: one connection, kept alive
	: >back.port.conns
	timeout 60 h2load -n 20 -c 1 -m 1 "$url/bytes/1024" >seq.out 2>&1
	atf_check -o match:"20 succeeded" cat seq.out
	atf_check -o inline:"1\n" sh -c "wc -l <back.port.conns"
	wait_for 10 grep -Eq "done,( GET){20}$" relayd.log ||
	    atf_fail "no end line of 20 requests"
	# the pool's connections are no sessions: one end line, its bytes
	end_lines | tail -1 >end.out
	atf_check -o match:"127.0.0.1 -> 127.0.0.1:$bport, done" cat end.out

	# a connect that fails while another connection of the table is
	# busy: the request waiting for it fails at once
	timeout 30 python3 "$H2TOOL" busy "$lport" 2 >busy.out 2>&1
	atf_check -o inline:"ended 3 1\n" cat busy.out
	wait_log 10 "stream 3: socket error (500 " ||
	    atf_fail "no line for the stream that failed"

	# no backend: the streams fail (500 socket error), the client
	# connection and relayd stay
	kill "$(cat back.pid)"
	wait_for 10 sh -c "! kill -0 $(cat back.pid) 2>/dev/null"
	timeout 30 nghttp -n -s "$url/bytes/1" "$url/bytes/2" >down.out 2>&1
	[ "$(grep -Ec ' 50[024] ' down.out)" -eq 2 ] ||
	    atf_fail "not 2 errors without a backend: $(tail -2 down.out)" \
		"$(tail -5 relayd.log)"
	kill -0 "$(cat relayd.pid)" || atf_fail "relayd died"
}
h2_pool_cleanup()
{
	stop_all
}

atf_test_case h2_stream_window cleanup
h2_stream_window_head()
{
	atf_set "descr" "flow control is per stream: 50 streams whose window is closed hold their own backend connections only; a stream with an open window on the same connection is answered whole, and the relay process holds at most 64 KiB for each stream"
	atf_set "require.user" "root"
	atf_set "timeout" "60"
}
h2_stream_window_body()
{
	h2_start
	base=$(relay_rss)
	atf_check -o inline:"headers 51 open-ended 1\n" \
	    timeout 30 python3 "$H2TOOL" window "$lport" 50
	peak=$(relay_hwm)
	echo "relay process: $base KiB, peak $peak KiB" >&2
	# 50 x 64 KiB held, and the buffers on the way
	[ "$peak" -lt $((base + 32768)) ] ||
	    atf_fail "the relay process grew from $base to $peak KiB"
	h2is "2 200 10" after "$url/bytes/10"
}
h2_stream_window_cleanup()
{
	stop_all
}

atf_test_case h2_slow_answers cleanup
h2_slow_answers_head()
{
	atf_set "descr" "100 streams on one connection to an answer that takes 1 s are all answered in about 1 s: by default no request waits behind another's answer"
	atf_set "require.user" "root"
	atf_set "timeout" "120"
}
h2_slow_answers_body()
{
	h2_start
	: >back.port.conns
	timeout 60 h2load -c 1 -m 100 -n 100 "$url/delay/1" >slow.out 2>&1
	atf_check -o match:"status codes: 100 2xx" cat slow.out
	# finished in S.SSs: 1 s and the connects, not 100 / 6 / 16 s
	_s=$(sed -n 's/^finished in \([0-9.]*\)s,.*/\1/p' slow.out)
	echo "100 streams to a 1 s answer: $_s s" >&2
	python3 -c "import sys; sys.exit(float('$_s') >= 3)" ||
	    atf_fail "100 answers of 1 s took $_s s"
	atf_check -o inline:"100\n" sh -c "wc -l <back.port.conns"
}
h2_slow_answers_cleanup()
{
	stop_all
}

atf_test_case h2_h2spec cleanup
h2_h2spec_head()
{
	atf_set "descr" "h2spec's generic, HTTP/2 and HPACK cases all pass"
	atf_set "require.user" "root"
}
h2_h2spec_body()
{
	_h2spec=$(command -v h2spec || echo "$HOME/go/bin/h2spec")
	[ -x "$_h2spec" ] || atf_skip "no h2spec (make test-tools installs it with Go's module proxy)"
	h2_start
	timeout 120 "$_h2spec" -t -k -h 127.0.0.1 -p "$lport" -o 3 \
	    >h2spec.out 2>&1
	atf_check -o match:"tests, ([0-9]+) passed, 0 skipped, 0 failed" \
	    tail -1 h2spec.out
	kill -0 "$(cat relayd.pid)" || atf_fail "relayd died"
}
h2_h2spec_cleanup()
{
	stop_all
}

atf_init_test_cases()
{
	atf_add_test_case h2_alpn
	atf_add_test_case h2_bodies
	atf_add_test_case h2_parallel
	atf_add_test_case h2_rules
	atf_add_test_case h2_forward_to
	atf_add_test_case h2_backend_dies
	atf_add_test_case h2_backend_unreachable
	atf_add_test_case h2_request_rate
	atf_add_test_case h2_reload
	atf_add_test_case h2_limits
	atf_add_test_case h2_abuse
	atf_add_test_case h2_hpack_bomb
	atf_add_test_case h2_memory_back
	atf_add_test_case h2_fd_limit
	atf_add_test_case h2_slow_answers
	atf_add_test_case h2_stream_window
	atf_add_test_case h2_window_closed
	atf_add_test_case h2_show_sessions
	atf_add_test_case h2_pool
	atf_add_test_case h2_h2spec
}
