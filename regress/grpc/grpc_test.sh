#! /usr/bin/env atf-sh
# HTTP/2 backends ("http http2 backend") through the real daemon: gRPC
# clients and servers of python3-grpcio (regress/tools/grpctool.py),
# nghttpd as a plain HTTP/2 backend with curl, nghttp and h2load.

. "$(atf_get_srcdir)/../lib.sh"

GRPCTOOL=$TOP/regress/tools/grpctool.py
# grpcio is Debian's, for Debian's python3
GPY=/usr/bin/python3

require_grpc()
{
	require_daemon
	for _c in curl nghttp h2load nghttpd openssl ss; do
		command -v $_c >/dev/null ||
		    atf_skip "no $_c (make deps installs it)"
	done
	$GPY -c "import grpc" 2>/dev/null ||
	    atf_skip "no python3-grpcio (make deps installs it)"
}

# start_grpc NAME: a gRPC server, its port in NAME.port and $bport
start_grpc()
{
	rm -f "$1.port"
	$GPY "$GRPCTOOL" server "$PWD/$1.port" 120 "$1" >"$1.out" 2>&1 &
	echo $! >"$1.pid"
	wait_for 20 test -s "$1.port" || atf_fail "gRPC server $1 did not start"
	bport=$(cat "$1.port")
}

# grpc_conf "PROTOCOL LINES" "FORWARD LINES": a TLS relay for h2 clients
# on $lport whose backends speak h2
grpc_conf()
{
	mkca
	mkcert 127.0.0.1 ec IP:127.0.0.1
	lport=$(freeport)
	{
		conf_head
		cat <<CONF
http protocol p {
	http http2 backend
	$1
}
relay r {
	listen on 127.0.0.1 port $lport tls
	protocol p
	$2
}
CONF
	} >relayd.conf
}

# gtool CMD [ARGS]: grpctool.py's client CMD through the relay
gtool()
{
	_cmd=$1
	shift
	timeout 120 $GPY "$GRPCTOOL" "$_cmd" 127.0.0.1 "$lport" ca.crt "$@"
}

# gok CMD [ARGS]: gtool's CMD must print "ok"
gok()
{
	_got=$(gtool "$@" 2>&1)
	[ "$_got" = ok ] && return
	cat relayd.log >&2
	atf_fail "gtool $*: $(echo "$_got" | tail -3 | tr "\n" " ")"
}

# Is something listening on port $1?
listening()
{
	[ -n "$(ss -Htln "( sport = :$1 )")" ]
}

# The relay process's established connections to port $1
backend_conns()
{
	ss -Htn state established "( dport = :$1 )" | wc -l
}

# None of them
no_backend_conns()
{
	[ "$(backend_conns "$1")" -eq 0 ]
}

atf_test_case grpc_calls cleanup
grpc_calls_head()
{
	atf_set "descr" "the four kinds of gRPC calls, statuses and trailers, 1,000 messages each way on a stream and a 100 MiB upload pass intact; sessions share one backend connection"
	atf_set "require.user" "root"
}
grpc_calls_body()
{
	require_grpc
	start_grpc a
	grpc_conf "" "forward to 127.0.0.1 port $bport"
	PREFORK=1 start_relayd
	gok check
	gok bidi 1000
	gok upload 100
	# three clients at once: one backend connection for them all
	gtool unary 200 >u1.out &
	p1=$!
	gtool unary 200 >u2.out &
	p2=$!
	gtool unary 200 >u3.out
	wait "$p1" "$p2"
	atf_check -o inline:"ok\nok\nok\n" cat u1.out u2.out u3.out
	[ "$(backend_conns "$bport")" -eq 1 ] ||
	    atf_fail "$(backend_conns "$bport") backend connections, not 1"
	# the end line is OpenBSD's, the bytes on their own line
	wait_log 10 "bytes in 10[0-9]\{7\} " || atf_fail "no byte line"
	atf_check -o match:"relay r, session [0-9]+ \(1 active\), 0, 127.0.0.1 -> 127.0.0.1:$bport, done, POST$" \
	    grep "done, POST$" relayd.log
}
grpc_calls_cleanup()
{
	stop_all
}

atf_test_case grpc_backend_idle cleanup
grpc_backend_idle_head()
{
	atf_set "descr" "a backend connection with no streams goes after http2 backend idle seconds from its last stream, not its first"
	atf_set "require.user" "root"
}
grpc_backend_idle_body()
{
	require_grpc
	start_grpc a
	grpc_conf "http http2 backend idle 3" "forward to 127.0.0.1 port $bport"
	PREFORK=1 start_relayd
	gok unary 1
	[ "$(backend_conns "$bport")" -eq 1 ] ||
	    atf_fail "$(backend_conns "$bport") backend connections, not 1"
	# used again 1.5 s later, it is there 2 s after that: 3.5 s after
	# the first stream, within 3 s of the last
	sleep 1.5
	gok unary 1
	sleep 2
	[ "$(backend_conns "$bport")" -eq 1 ] ||
	    atf_fail "gone 3 s after its first stream, not its last"
	# and then it goes
	wait_for 5 no_backend_conns "$bport" ||
	    atf_fail "still there 3 s after its last stream"
}
grpc_backend_idle_cleanup()
{
	stop_all
}

atf_test_case grpc_ends cleanup
grpc_ends_head()
{
	atf_set "descr" "a call cancelled by its client and a backend lost mid-stream end on both sides; the client connection goes on"
	atf_set "require.user" "root"
}
grpc_ends_body()
{
	require_grpc
	start_grpc a
	grpc_conf "" "forward to 127.0.0.1 port $bport"
	PREFORK=1 start_relayd
	# a cancel reaches the backend
	gok cancel
	wait_for 5 grep -q cancelled a.out ||
	    atf_fail "the backend's call was not cancelled"
	# the backend killed mid-call: UNAVAILABLE, and once it is back the
	# same client connection goes on
	sessions=$(grep -c "done, POST" relayd.log)
	BACKEND_PORT=$bport gok lost "$(cat a.pid)"
	wait_log 10 "backend closed (502 Bad Gateway)" ||
	    atf_fail "no note of the lost backend"
	wait_for 10 test "$(grep -c 'done, POST' relayd.log)" -gt "$sessions" ||
	    atf_fail "no end line"
	atf_check -o inline:"$((sessions + 1))\n" grep -c "done, POST" relayd.log
}
atf_test_case grpc_deadline cleanup
grpc_deadline_head()
{
	atf_set "descr" "a client that keeps no deadline: relayd ends the call at its grpc-timeout with DEADLINE_EXCEEDED, and resets the backend's stream"
	atf_set "require.user" "root"
}
grpc_deadline_body()
{
	require_grpc
	# a backend that never answers, and keeps no deadline of its own
	rm -f silent.port
	$GPY "$GRPCTOOL" silent "$PWD/silent.port" 60 >silent.out 2>&1 &
	echo $! >silent.pid
	wait_for 10 test -s silent.port || atf_fail "no silent backend"
	grpc_conf "" "forward to 127.0.0.1 port $(cat silent.port)"
	PREFORK=1 start_relayd
	printf '\0\0\0\0\0' >empty.msg
	timeout 10 nghttp -v --no-verify-peer -d empty.msg \
	    -H 'content-type: application/grpc' -H 'te: trailers' \
	    -H 'grpc-timeout: 1S' "https://127.0.0.1:$lport/t.T/Slow" \
	    >deadline.out 2>&1
	atf_check -o match:"grpc-status: 4" cat deadline.out
	atf_check -o match:"grpc-message: deadline exceeded" cat deadline.out
	# CANCEL (8) for the backend's stream
	wait_for 5 grep -q "^rst 1 8$" silent.out ||
	    atf_fail "the backend's stream was not reset: $(cat silent.out)"
}
grpc_deadline_cleanup()
{
	stop_all
}

grpc_ends_cleanup()
{
	stop_all
}

atf_test_case grpc_goaway_reload cleanup
grpc_goaway_reload_head()
{
	atf_set "descr" "a backend's GOAWAY drains its connection while new calls go on another; a reload during calls ends none of them"
	atf_set "require.user" "root"
}
grpc_goaway_reload_body()
{
	require_grpc
	export GRPC_AGE=500
	start_grpc a
	unset GRPC_AGE
	grpc_conf "http http2 backend idle 30" \
	    "forward to 127.0.0.1 port $bport"
	PREFORK=1 start_relayd
	# a call of 2 s on a connection that gets GOAWAY after 0.5 s, and
	# calls after it: all answered
	gtool slow 2 >slow.out &
	spid=$!
	gok unary 5
	sleep 1
	gok unary 5
	wait "$spid"
	atf_check -o inline:"OK\n" cat slow.out

	# a reload while a paced stream and a slow call go on
	GRPC_PACE=0.01 gtool bidi 150 >bidi.out &
	bpid=$!
	gtool slow 1 >slow2.out &
	spid=$!
	sleep 0.5
	relayctl reload >/dev/null || atf_fail "no reload"
	gok check
	wait "$bpid" "$spid"
	atf_check -o inline:"ok\n" cat bidi.out
	atf_check -o inline:"OK\n" cat slow2.out
}
grpc_goaway_reload_cleanup()
{
	stop_all
}

atf_test_case h2_backend_nghttpd cleanup
h2_backend_nghttpd_head()
{
	atf_set "descr" "HTTP/2 and HTTP/1.1 clients to an nghttpd backend: curl, nghttp and h2load; the streams of many sessions on at most 'http2 backend connections' connections"
	atf_set "require.user" "root"
}
h2_backend_nghttpd_body()
{
	require_grpc
	mkdir -p docs
	head -c 1048576 /dev/urandom >docs/big
	echo small >docs/small
	bport=$(freeport)
	nghttpd --no-tls -d "$PWD/docs" "$bport" >nghttpd.out 2>&1 &
	echo $! >nghttpd.pid
	wait_for 10 listening "$bport" || atf_fail "nghttpd did not start"
	grpc_conf "http http2 backend connections 2" \
	    "forward to 127.0.0.1 port $bport"
	PREFORK=1 start_relayd
	url=https://127.0.0.1:$lport
	atf_check -o inline:"2 200 1048576\n" timeout 30 curl -sk --http2 \
	    -o big.out -w '%{http_version} %{http_code} %{size_download}\n' \
	    "$url/big"
	atf_check cmp big.out docs/big
	atf_check -o match:"^small$" timeout 30 nghttp --no-verify-peer \
	    "$url/small"
	atf_check -o match:"404" -o not-match:"small" timeout 30 curl -sk \
	    --http2 -w '%{http_code}\n' "$url/none"
	timeout 60 h2load -n 2000 -c 20 -m 10 "$url/small" >h2load.out 2>&1
	atf_check -o match:"2000 succeeded, 0 failed" cat h2load.out
	n=$(backend_conns "$bport")
	[ "$n" -ge 1 ] && [ "$n" -le 2 ] ||
	    atf_fail "$n backend connections, not 1 or 2"
	# HTTP/1.1 clients go on as streams too: a body both ways, three
	# requests on one connection, a chunked upload, h2load's
	atf_check -o inline:"1.1 200 1048576\n" timeout 30 curl -sk \
	    --http1.1 -o big1.out \
	    -w '%{http_version} %{http_code} %{size_download}\n' "$url/big"
	atf_check cmp big1.out docs/big
	atf_check -o inline:"200 200 404 " timeout 30 curl -sk --http1.1 \
	    -o /dev/null -o /dev/null -o /dev/null -w '%{http_code} ' \
	    "$url/small" "$url/small" "$url/none"
	atf_check -o inline:"200\n" timeout 30 curl -sk --http1.1 \
	    -H 'Transfer-Encoding: chunked' --data-binary @docs/big \
	    -o /dev/null -w '%{http_code}\n' "$url/small"
	timeout 60 h2load --h1 -n 1000 -c 10 -m 4 "$url/small" >h1load.out 2>&1
	atf_check -o match:"1000 succeeded, 0 failed" cat h1load.out
	wait_log 10 "done, GET GET GET$" ||
	    atf_fail "no end line with the three requests"
}
h2_backend_nghttpd_cleanup()
{
	[ -f nghttpd.pid ] && kill "$(cat nghttpd.pid)" 2>/dev/null
	stop_all
}

atf_test_case h1b_request_rate cleanup
h1b_request_rate_head()
{
	atf_set "descr" "max-src-request-rate for HTTP/1.1 clients of HTTP/2 backends: over it 429 with Retry-After, the connection stays and is read again when the source may ask again"
	atf_set "require.user" "root"
}
h1b_request_rate_body()
{
	require_grpc
	mkdir -p docs
	echo small >docs/small
	bport=$(freeport)
	nghttpd --no-tls -d "$PWD/docs" "$bport" >nghttpd.out 2>&1 &
	echo $! >nghttpd.pid
	wait_for 10 listening "$bport" || atf_fail "nghttpd did not start"
	grpc_conf "" "forward to 127.0.0.1 port $bport
	max-src-request-rate 2/60"
	PREFORK=1 start_relayd
	url=https://127.0.0.1:$lport/small
	timeout 30 curl -sk --http1.1 -D heads.out \
	    -w "%{http_code} %{num_connects} %{time_total}\n" \
	    -o /dev/null "$url" -o /dev/null "$url" -o /dev/null "$url" \
	    -o /dev/null "$url" >held.out
	atf_check -o inline:"2\n" grep -c "^200 " held.out
	atf_check -o inline:"2\n" grep -c "^429 0 " held.out
	atf_check -o match:"^[Rr]etry-[Aa]fter: [0-9]+" tr -d "\r" <heads.out
	_m=$(held429 held.out) || atf_fail "$_m"
}
h1b_request_rate_cleanup()
{
	[ -f nghttpd.pid ] && kill "$(cat nghttpd.pid)" 2>/dev/null
	stop_all
}

atf_test_case h2_backend_tls_rules cleanup
h2_backend_tls_rules_head()
{
	atf_set "descr" "forward with tls asks HTTP/2 backends for ALPN h2 (nghttpd over TLS), and a rule's forward to sends a request's stream to its own table"
	atf_set "require.user" "root"
}
h2_backend_tls_rules_body()
{
	require_grpc
	mkca
	mkcert 127.0.0.1 ec IP:127.0.0.1
	mkdir -p a b/two
	echo a >a/which
	echo b >b/two/which
	p1=$(freeport)
	p2=$(freeport)
	nghttpd -d "$PWD/a" "$p1" ssl/private/127.0.0.1.key \
	    ssl/127.0.0.1.crt >nghttpd1.out 2>&1 &
	echo $! >nghttpd1.pid
	nghttpd -d "$PWD/b" "$p2" ssl/private/127.0.0.1.key \
	    ssl/127.0.0.1.crt >nghttpd2.out 2>&1 &
	echo $! >nghttpd2.pid
	wait_for 10 listening "$p1" || atf_fail "nghttpd 1 did not start"
	wait_for 10 listening "$p2" || atf_fail "nghttpd 2 did not start"
	lport=$(freeport)
	{
		conf_head
		cat <<CONF
table <one> { 127.0.0.1 }
table <two> { 127.0.0.1 }
http protocol p {
	http http2 backend
	match request path "/two/*" forward to <two>
}
relay r {
	listen on 127.0.0.1 port $lport tls
	protocol p
	forward with tls to <one> port $p1
	forward with tls to <two> port $p2
}
CONF
	} >relayd.conf
	PREFORK=1 start_relayd
	url=https://127.0.0.1:$lport
	atf_check -o inline:"a\n" timeout 30 curl -sk --http2 "$url/which"
	atf_check -o inline:"b\n" timeout 30 curl -sk --http2 "$url/two/which"
	atf_check -o inline:"b\n" timeout 30 curl -sk --http1.1 \
	    "$url/two/which"
	atf_check -o inline:"a\n" timeout 30 curl -sk --http1.1 "$url/which"
}
h2_backend_tls_rules_cleanup()
{
	stop_all
}

atf_test_case grpc_example cleanup
grpc_example_head()
{
	atf_set "descr" "etc/examples/grpc.conf runs as it is with -D port, backend and keypair, its keypair in /etc/ssl; its check http2 finds the gRPC server up"
	atf_set "require.user" "root"
}
grpc_example_body()
{
	require_grpc
	"$RELAYCTL" -s /var/run/relayd.sock show summary >/dev/null 2>&1 &&
	    atf_skip "a relayd runs here (the example's control socket)"
	[ -e /var/run/relayd.sock ] || touch sock.ours
	start_grpc a
	mkca
	kp=relayd-regress-grpc-$$
	mkcert "$kp" ec IP:127.0.0.1
	echo "$kp" >keypair.name
	install -m 444 "ssl/$kp.crt" /etc/ssl/ &&
	    install -m 400 "ssl/private/$kp.key" /etc/ssl/private/ ||
	    atf_fail "cannot install the keypair"
	lport=$(freeport)
	: >relayd.log
	"$RELAYD" -dv -D port="$lport" -D backend="$bport" -D keypair="$kp" \
	    -f "$TOP/etc/examples/grpc.conf" 2>>relayd.log &
	echo $! >relayd.pid
	PREFORK=3 wait_started
	# its check: an HTTP/2 request that the gRPC server answers
	wait_log 10 "^host 127.0.0.1, check http2 code ([0-9]*ms,http code ok), state unknown -> up" ||
	    atf_fail "the gRPC server is not up"
	gok check
	wait_log 10 "done, POST POST" || atf_fail "no end line"
}
grpc_example_cleanup()
{
	stop_all
	if [ -f keypair.name ]; then
		rm -f "/etc/ssl/$(cat keypair.name).crt" \
		    "/etc/ssl/private/$(cat keypair.name).key"
	fi
	# the example's control socket, if this test made it
	[ -f sock.ours ] && rm -f /var/run/relayd.sock
	return 0
}

atf_init_test_cases()
{
	atf_add_test_case grpc_calls
	atf_add_test_case grpc_backend_idle
	atf_add_test_case grpc_ends
	atf_add_test_case grpc_deadline
	atf_add_test_case grpc_goaway_reload
	atf_add_test_case h2_backend_nghttpd
	atf_add_test_case h1b_request_rate
	atf_add_test_case h2_backend_tls_rules
	atf_add_test_case grpc_example
}
