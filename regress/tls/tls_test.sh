#! /usr/bin/env atf-sh
# TLS relays through the real daemon: certificates made here with
# openssl, clients curl and openssl s_client, backends httpd.py and
# openssl s_server.  The private keys are in ca only.

. "$(atf_get_srcdir)/../lib.sh"

MEMSEARCH=$TOP/regress/tools/memsearch.py

require_tls()
{
	require_daemon
	for _c in curl openssl python3 socat; do
		command -v $_c >/dev/null ||
		    atf_skip "no $_c (make deps installs it)"
	done
}

# A relay with a plain listener on $lport that forwards with TLS to the
# backend on $bport, whose certificate ca.crt must have signed.
tls_forward_conf()
{
	lport=$(freeport)
	cat >relayd.conf <<CONF
prefork 1
socket "$PWD/relayd.sock"
log connection
protocol p {
	tls ca file "$PWD/ca.crt"
}
relay r {
	listen on 127.0.0.1 port $lport
	protocol p
	forward with tls to 127.0.0.1 port $bport
}
CONF
}

# One relay with a TLS listener for 127.0.0.1 (a KEYTYPE key) to the
# HTTP backend, started: tls_relay KEYTYPE PROTOTYPE "PROTOCOL LINES"
# [RELAY LINES].
tls_relay()
{
	require_tls
	mkca
	mkcert 127.0.0.1 "$1" IP:127.0.0.1
	start_httpd
	tls_conf "$2" "$3" "$4"
	PREFORK=1 start_relayd
}

# The pids of relayd's children whose title begins with $1.
children_titled()
{
	for _c in $(pgrep -P "$(cat relayd.pid)"); do
		case $(tr '\0' '\n' <"/proc/$_c/cmdline" | head -1) in
		"relayd: $1"*)	echo "$_c" ;;
		esac
	done
}

# The session end line that ended with $1 (a pattern), waited for.
end_line()
{
	wait_log 10 "^relay r, session [0-9]* (.*$1" ||
	    atf_fail "no session end line with: $1"
}

# A GET of 10 bytes through the relay succeeds: get10 [CURL OPTIONS] URL
get10()
{
	atf_check -o inline:"200 10\n" curl -s --cacert ca.crt \
	    -w '%{http_code} %{size_download}\n' -o /dev/null "$@"
}

# openssl s_server on 127.0.0.1:$bport as a TLS backend with the
# certificate back.test and $@ besides; answers a GET with a page
s_server_back()
{
	openssl s_server -accept "127.0.0.1:$bport" -cert ssl/back.test.crt \
	    -key ssl/private/back.test.key "$@" -www -quiet >sserver.out 2>&1 &
	echo $! >sserver.pid
	wait_for 10 socat -u /dev/null "TCP:127.0.0.1:$bport" ||
	    atf_fail "s_server did not start"
}

# What openssl s_client says of the relay (subject, version, cipher,
# signature) in sc.out; $@ more s_client options.
s_client()
{
	echo | timeout 10 openssl s_client -connect "127.0.0.1:$lport" \
	    -CAfile ca.crt "$@" >sc.out 2>&1
}

atf_test_case tls_versions_keys cleanup
tls_versions_keys_head()
{
	atf_set descr "TLS 1.2 and 1.3 with an RSA and an EC key (ECDSA, RSA-PSS, PKCS#1, RSA key exchange), keys in ca"
	atf_set require.user root
	atf_set timeout 60
}
tls_versions_keys_body()
{
	require_tls
	mkca
	mkcert 127.0.0.1 rsa IP:127.0.0.1
	mkcert ec.test ec DNS:ec.test
	start_httpd
	tls_conf http ""
	rport=$lport
	PREFORK=1 start_relayd
	u=https://127.0.0.1:$rport
	for v in 1.2 1.3; do
		atf_check -o inline:"200 1000\n" curl -s --cacert ca.crt \
		    --tlsv$v --tls-max $v -w '%{http_code} %{size_download}\n' \
		    -o /dev/null "$u/bytes/1000"
	done
	# TLS 1.2 with RSA key exchange: the premaster is decrypted in ca
	lport=$rport
	s_client -tls1_2 -cipher AES128-SHA
	atf_check -o match:"Cipher is AES128-SHA" -o match:"Verify return code: 0" \
	    cat sc.out
	# PKCS#1 signatures (TLS 1.2 ECDHE-RSA) and PSS (TLS 1.3)
	s_client -tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256 \
	    -sigalgs RSA+SHA256
	atf_check -o match:"Peer signature type: RSA\$" cat sc.out
	s_client -tls1_3
	atf_check -o match:"Peer signature type: RSA-PSS" cat sc.out
	stop_all
	tls_conf tcp "tls keypair ec.test"
	PREFORK=1 start_relayd
	for v in tls1_2 tls1_3; do
		s_client -$v
		atf_check -o match:"subject=CN = ec.test" \
		    -o match:"Peer signature type: ECDSA" \
		    -o match:"Verify return code: 0" cat sc.out
	done
	atf_check -o match:"tls session [0-9]+ established" cat relayd.log
}
tls_versions_keys_cleanup()
{
	stop_all
}

atf_test_case tls_sni cleanup
tls_sni_head()
{
	atf_set descr "two tls keypairs: SNI chooses the certificate, the first one without SNI"
	atf_set require.user root
	atf_set timeout 30
}
tls_sni_body()
{
	require_tls
	mkca
	mkcert one.test rsa DNS:one.test
	mkcert two.test ec DNS:two.test
	start_httpd
	tls_conf http "tls { keypair one.test, keypair two.test }"
	PREFORK=1 start_relayd
	for n in one two; do
		get10 --resolve "$n.test:$lport:127.0.0.1" \
		    "https://$n.test:$lport/bytes/10"
	done
	s_client -noservername
	atf_check -o match:"subject=CN = one.test" cat sc.out
}
tls_sni_cleanup()
{
	stop_all
}

atf_test_case tls_client_ca cleanup
tls_client_ca_head()
{
	atf_set descr "tls client ca: a client with a certificate of the CA passes, one without ends in a handshake error"
	atf_set require.user root
	atf_set timeout 30
}
tls_client_ca_body()
{
	require_tls
	mkca
	mkcert 127.0.0.1 rsa IP:127.0.0.1
	mkcert client rsa DNS:client
	start_httpd
	tls_conf http "tls client ca \"$PWD/ca.crt\""
	PREFORK=1 start_relayd
	u=https://127.0.0.1:$lport/bytes/10
	get10 --cert ssl/client.crt --key ssl/private/client.key "$u"
	atf_check -s not-exit:0 -o ignore curl -s --cacert ca.crt \
	    -o /dev/null "$u"
	end_line "TLS handshake error: "
	# a certificate of another CA fails the same way
	mv ca.crt ca.good
	mkca
	mkcert other rsa DNS:other
	atf_check -s not-exit:0 -o ignore curl -s -k \
	    --cert ssl/other.crt --key ssl/private/other.key -o /dev/null "$u"
	atf_check -o match:"2" -x "grep -c 'TLS handshake error' relayd.log"
}
tls_client_ca_cleanup()
{
	stop_all
}

atf_test_case tls_ca_files_empty cleanup
tls_ca_files_empty_head()
{
	atf_set descr "a tls client ca, crl or tls ca file that holds nothing of the kind is refused by relayd -n and by relayctl load, and the running daemon serves on"
	atf_set require.user root
	atf_set timeout 60
}
tls_ca_files_empty_body()
{
	require_tls
	mkca
	mkcert 127.0.0.1 rsa IP:127.0.0.1
	start_httpd
	tls_conf http "tls client ca \"$PWD/ca.crt\""
	PREFORK=1 start_relayd
	echo "no certificate here" >empty.pem
	cp relayd.conf good.conf
	why="cannot load certificates for relay r:$lport: $PWD/[a-z.]*"
	what="(CA certificate|certificate revocation list)"
	for opt in "tls client ca \"$PWD/empty.pem\"" \
	    "tls client ca \"$PWD/ca.crt\" crl \"$PWD/ca.crt\"" \
	    "tls ca file \"$PWD/empty.pem\""; do
		sed "s|tls client ca \"$PWD/ca.crt\"|$opt|" good.conf >bad.conf
		grep -q "tls ca file" bad.conf &&
		    sed -i "s|forward to|forward with tls to|" bad.conf
		atf_check -s exit:1 -e match:"bad.conf:[0-9]*: $why: no $what" \
		    "$RELAYD" -n -f bad.conf
		atf_check -s exit:1 -o ignore -e ignore \
		    "$RELAYCTL" -s relayd.sock load "$PWD/bad.conf"
		atf_check -o match:"running configuration stays" cat relayd.log
		atf_check -s not-exit:0 -o ignore curl -s --cacert ca.crt \
		    -o /dev/null "https://127.0.0.1:$lport/bytes/10"
		running "$(cat relayd.pid)" || atf_fail "relayd died: $opt"
	done
	atf_check -s exit:0 -o match:"relay[[:space:]]+r[[:space:]]" \
	    "$RELAYCTL" -s relayd.sock show relays
}
tls_ca_files_empty_cleanup()
{
	stop_all
}

atf_test_case tls_forward_with_tls cleanup
tls_forward_with_tls_head()
{
	atf_set descr "forward with tls to openssl s_server: verified with tls ca file, refused with another CA"
	atf_set require.user root
	atf_set timeout 60
}
tls_forward_with_tls_body()
{
	require_tls
	mkca
	mkcert back.test ec DNS:back.test
	bport=$(freeport)
	s_server_back
	tls_forward_conf
	PREFORK=1 start_relayd
	atf_check -o match:"^HTTP/1.0 200 ok" -x \
	    "printf 'GET / HTTP/1.0\r\n\r\n' | timeout 10 socat -t 5 - TCP:127.0.0.1:$lport"
	atf_check -o match:"tls session [0-9]+ connected" cat relayd.log
	end_line done
	# relayd -d shows the relay's flags as OpenBSD names them
	atf_check -o match:"^	flags: used, relay flags: tls client\$" \
	    cat relayd.log
	# the backend's certificate is not of the CA given: no session
	stop_all
	s_server_back
	mv ca.crt ca.good
	mkca
	PREFORK=1 start_relayd
	atf_check -o empty -x \
	    "printf 'GET / HTTP/1.0\r\n\r\n' | timeout 10 socat -t 5 - TCP:127.0.0.1:$lport"
	end_line "TLS handshake error: certificate verification failed"
}
tls_forward_with_tls_cleanup()
{
	stop_all
}

atf_test_case tls_backend_close_notify_held cleanup
tls_backend_close_notify_held_head()
{
	atf_set descr "forward with tls: a backend's session tickets, answer and close_notify in one segment, its TCP connection held open, end the session at once"
	atf_set require.user root
	atf_set timeout 60
}
tls_backend_close_notify_held_body()
{
	require_tls
	mkca
	mkcert back.test ec DNS:back.test
	# TLS through memory buffers: the TLS 1.3 session tickets, the
	# answer and the close_notify go out in one send(2), the connection
	# stays for 30 s
	cat >back.py <<'PY'
import socket, ssl, sys, time
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain("ssl/back.test.crt", "ssl/private/back.test.key")
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(1)
with open("back.port.tmp", "w") as f:
    f.write("%d\n" % ls.getsockname()[1])
import os
os.rename("back.port.tmp", "back.port")
c, _ = ls.accept()
c.settimeout(10)
inb, outb = ssl.MemoryBIO(), ssl.MemoryBIO()
o = ctx.wrap_bio(inb, outb, server_side=True)
def step(f, send):
    while True:
        try:
            return f()
        except ssl.SSLWantReadError:
            if send and outb.pending:
                c.sendall(outb.read())
            d = c.recv(65536)
            if not d:
                sys.exit(1)
            inb.write(d)
step(o.do_handshake, True)
req = b""
while b"\r\n\r\n" not in req:
    req += step(lambda: o.read(65536), False)
o.write(b"HTTP/1.0 200 OK\r\n\r\nhello\n")
try:
    o.unwrap()
except ssl.SSLWantReadError:
    pass
c.sendall(outb.read())
time.sleep(30)
PY
	python3 back.py >back.out 2>&1 &
	echo $! >back.pid
	wait_for 10 test -s back.port || atf_fail "the backend did not start"
	bport=$(cat back.port)
	tls_forward_conf
	PREFORK=1 start_relayd
	# the backend's end reaches the client long before its TCP close
	atf_check -o inline:"HTTP/1.0 200 OK\r\n\r\nhello\n" -x \
	    "printf 'GET / HTTP/1.0\r\n\r\n' | timeout 15 socat -t 15 - TCP:127.0.0.1:$lport"
	end_line done
}
tls_backend_close_notify_held_cleanup()
{
	stop_all
}

atf_test_case tls_held_after_pause cleanup
tls_held_after_pause_head()
{
	atf_set descr "what libtls holds of a record when reading pauses is read when reading goes on, though the socket has nothing more"
	atf_set require.user root
	atf_set timeout 60
}
tls_held_after_pause_body()
{
	tls_relay ec http ""
	# 390 pipelined requests in one record of 16384 bytes, more than the
	# relay's first read takes: libtls keeps the rest of the record.
	# Reading pauses at 100 requests waiting for answers; when it goes
	# on, the socket has nothing, and the rest must be read all the same
	python3 - "$lport" <<'PY' >answer || atf_fail "the client failed"
import socket, ssl, sys
ctx = ssl.create_default_context(cafile="ca.crt")
s = ctx.wrap_socket(socket.create_connection(("127.0.0.1",
    int(sys.argv[1])), 10), server_hostname="127.0.0.1")
# requests filling one record of 16384 bytes exactly
reqs = []
left = 16384
while left > 0:
    r = b"GET /bytes/10?%06d HTTP/1.1\r\nHost: a\r\n\r\n" % len(reqs)
    if left - len(r) < len(r):
        r = r.replace(b"?", b"?" + b"x" * (left - len(r)), 1)
    reqs.append(r)
    left -= len(r)
data = b"".join(reqs)
assert len(data) == 16384
s.sendall(data)
got = b""
while got.count(b"HTTP/1.1 200 ") < len(reqs):
    try:
        data = s.recv(65536)
    except (ssl.SSLError, socket.timeout):
        break
    if not data:
        break
    got += data
n = got.count(b"HTTP/1.1 200 ")
sys.stdout.write("all\n" if n == len(reqs) else "%d of %d\n" % (n, len(reqs)))
PY
	atf_check -o inline:"all\n" cat answer
}
tls_held_after_pause_cleanup()
{
	stop_all
}

atf_test_case tls_request_behind_finished cleanup
tls_request_behind_finished_head()
{
	atf_set descr "a request in the segment of the client's TLS 1.3 Finished is read when the handshake is through, though the socket has nothing more"
	atf_set require.user root
	atf_set timeout 60
}
tls_request_behind_finished_body()
{
	tls_relay ec http ""
	python3 - "$lport" <<'PY' >answer || atf_fail "the client failed"
import socket, ssl, sys
ctx = ssl.create_default_context(cafile="ca.crt")
ctx.minimum_version = ssl.TLSVersion.TLSv1_3
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 10)
inb, outb = ssl.MemoryBIO(), ssl.MemoryBIO()
o = ctx.wrap_bio(inb, outb, server_hostname="127.0.0.1")
def more():
    d = c.recv(65536)
    if d:
        inb.write(d)
    else:
        inb.write_eof()
while True:
    try:
        o.do_handshake()
        break
    except ssl.SSLWantReadError:
        c.sendall(outb.read())
        more()
# the Finished and the request go out in one send(2)
o.write(b"GET /bytes/10 HTTP/1.0\r\nHost: a\r\n\r\n")
c.sendall(outb.read())
got = b""
try:
    while True:
        try:
            d = o.read(65536)
        except ssl.SSLWantReadError:
            more()
            continue
        if not d:
            break
        got += d
except (ssl.SSLError, socket.timeout) as e:
    sys.stdout.write("%r after %d bytes\n" % (e, len(got)))
    sys.exit(0)
head, _, body = got.partition(b"\r\n\r\n")
sys.stdout.write("%s, %d bytes\n" % (head.split(b"\r\n")[0].decode(),
    len(body)))
PY
	atf_check -o inline:"HTTP/1.0 200 OK, 10 bytes\n" cat answer
}
tls_request_behind_finished_cleanup()
{
	stop_all
}

atf_test_case tls_https_256m cleanup
tls_https_256m_head()
{
	atf_set descr "https through an http protocol: keep-alive, 256 MiB each way with checksums, plaintext bytes counted"
	atf_set require.user root
	atf_set timeout 180
}
tls_https_256m_body()
{
	tls_relay ec http ""
	u=https://127.0.0.1:$lport
	n=268435456
	# two requests on one connection, the first one 256 MiB
	atf_check curl -s --cacert ca.crt -o got "$u/bytes/$n" -o got10 \
	    "$u/bytes/10"
	atf_check -o inline:"$(pattern_sha $n)  got\n" sha256sum got
	atf_check -o inline:"10\n" -x "wc -c <got10"
	end_line "done, GET GET"
	head -c $n /dev/urandom >body
	sum=$(sha256sum body | cut -c1-64)
	atf_check -o inline:"$n $sum\n" curl -s --cacert ca.crt \
	    -T body -H 'Expect:' "$u/echo"
	end_line "done, PUT"
	# plaintext bytes: the bodies and the heads; nothing spliced
	atf_check -o match:"^relay r, session [0-9]+, bytes in [0-9]{2,3} \(spliced 0, copied [0-9]+\), out 2684[0-9]{5} \(spliced 0, copied 2684[0-9]{5}\)\$" \
	    cat relayd.log
	atf_check -o match:"^relay r, session [0-9]+, bytes in 2684[0-9]{5} \(spliced 0, copied 2684[0-9]{5}\), out [0-9]{2,3} \(spliced 0, copied [0-9]+\)\$" \
	    cat relayd.log
	rm -f body got
}
tls_https_256m_cleanup()
{
	stop_all
}

atf_test_case tls_handshake_timeout cleanup
tls_handshake_timeout_head()
{
	atf_set descr "a client that stops in the handshake ends with TLS handshake timeout after the session timeout"
	atf_set require.user root
	atf_set timeout 30
}
tls_handshake_timeout_body()
{
	tls_relay rsa tcp "" "session timeout 2"
	# the first 5 bytes of a ClientHello, then nothing
	(printf '\026\003\001\002\000'; sleep 8) | timeout 10 socat - \
	    "TCP:127.0.0.1:$lport" >/dev/null &
	echo $! >client.pid
	end_line "TLS handshake timeout"
	atf_check -o match:"^relay r, session [0-9]+ \(1 active\), 0, 127\.0\.0\.1 -> :0, TLS handshake timeout\$" \
	    cat relayd.log
}
tls_handshake_timeout_cleanup()
{
	stop_all
}

atf_test_case tls_garbage cleanup
tls_garbage_head()
{
	atf_set descr "garbage instead of a ClientHello: a handshake error, and the relay keeps serving"
	atf_set require.user root
	atf_set timeout 30
}
tls_garbage_body()
{
	tls_relay rsa http ""
	for i in 1 2 3; do
		printf 'GET / HTTP/1.0\r\n\r\n' | timeout 10 socat -t 5 - \
		    "TCP:127.0.0.1:$lport" >/dev/null
		head -c 3000 /dev/urandom | timeout 10 socat -t 5 - \
		    "TCP:127.0.0.1:$lport" >/dev/null
	done
	atf_check -o match:"^6\$" -x "grep -c 'TLS handshake error: ' relayd.log"
	get10 "https://127.0.0.1:$lport/bytes/10"
	kill -0 "$(cat relayd.pid)" || atf_fail "relayd died"
}
tls_garbage_cleanup()
{
	stop_all
}

atf_test_case tls_keys_in_ca_only cleanup
tls_keys_in_ca_only_head()
{
	atf_set descr "after 100 handshakes no relay process's memory holds the private key, ca does, and the 100 signatures are counted, with RELAYD_KEYOPS_TEST set; a handshake works with the key file gone"
	atf_set require.user root
	atf_set timeout 120
}
tls_keys_in_ca_only_body()
{
	require_tls
	mkca
	mkcert 127.0.0.1 rsa IP:127.0.0.1
	mkcert ec.test ec DNS:ec.test
	start_httpd
	lport=$(freeport)
	eport=$(freeport)
	cat >relayd.conf <<CONF
prefork 2
socket "$PWD/relayd.sock"
tls directory "$PWD/ssl"
protocol ecp {
	tls keypair ec.test
}
relay rsa {
	listen on 127.0.0.1 port $lport tls
	forward to 127.0.0.1 port $bport
}
relay ec {
	listen on 127.0.0.1 port $eport tls
	protocol ecp
	forward to 127.0.0.1 port $bport
}
CONF
	# what makes the test build's relay sign itself (make bench's
	# relayd-tls-*-local) does nothing to relayd
	RELAYD_KEYOPS_TEST=$PWD/ssl/private/ec.test.key
	export RELAYD_KEYOPS_TEST
	RELAYS=2 PREFORK=2 start_relayd
	i=0
	while [ $i -lt 50 ]; do
		curl -s -k -o /dev/null "https://127.0.0.1:$lport/bytes/10" &&
		curl -s -k -o /dev/null "https://127.0.0.1:$eport/bytes/10" ||
		    atf_fail "handshake $i failed"
		i=$((i + 1))
	done
	# each handshake signed once in ca: counted, timed, none failed
	wait_for 10 sh -c "'$RELAYCTL' -s '$PWD/relayd.sock' show metrics | awk '/^relayd_ca_key_operation_duration_seconds_count / { n = \$2 } END { exit !(n >= 100) }'" ||
	    atf_fail "key operations: $("$RELAYCTL" -s relayd.sock show metrics | grep ca_key)"
	"$RELAYCTL" -s relayd.sock show metrics >metrics
	atf_check -o match:"^relayd_ca_key_operation_failures_total 0$" cat metrics
	atf_check -o match:"^relayd_ca_key_operation_duration_seconds_sum [0-9]+\.[0-9]{6}$" cat metrics
	atf_check -o match:"^ca key operations: [0-9]+, 0 failed, [0-9]+ us on average$" \
	    "$RELAYCTL" -s relayd.sock status
	relays=$(children_titled relay)
	cas=$(children_titled ca)
	[ -n "$relays" ] && [ -n "$cas" ] || atf_fail "no relay or ca process"
	for k in 127.0.0.1 ec.test; do
		# shellcheck disable=SC2086
		atf_check -s exit:1 python3 "$MEMSEARCH" \
		    "ssl/private/$k.key" $relays
		# the search does find the key where it is
		# shellcheck disable=SC2086
		atf_check -o match:"found number" python3 "$MEMSEARCH" \
		    "ssl/private/$k.key" $cas
	done
	rm ssl/private/127.0.0.1.key ssl/private/ec.test.key
	get10 "https://127.0.0.1:$lport/bytes/10"
}
tls_keys_in_ca_only_cleanup()
{
	stop_all
}

atf_test_case tls_inspection cleanup
tls_inspection_head()
{
	atf_set descr "TLS inspection: the client gets the backend's certificate re-issued by the inspection CA, whose key stays in ca"
	atf_set require.user root
	atf_set timeout 60
}
tls_inspection_body()
{
	require_tls
	mkca
	mkcert back.test ec "IP:127.0.0.1,DNS:back.test"
	mkcert 127.0.0.1 rsa IP:127.0.0.1
	mv ca.crt backca.crt
	# the inspection CA, its key with a password
	openssl req -x509 -newkey rsa:2048 -keyout ica.key -passout pass:s3cret \
	    -out ica.crt -days 2 -subj "/CN=inspection CA" 2>/dev/null ||
	    atf_fail "no inspection CA"
	openssl pkey -in ica.key -passin pass:s3cret -out ica-clear.key ||
	    atf_fail "no clear key"
	bport=$(freeport)
	s_server_back
	lport=$(freeport)
	hport=$(freeport)
	cat >relayd.conf <<CONF
prefork 1
socket "$PWD/relayd.sock"
log connection
tls directory "$PWD/ssl"
protocol p {
	tls ca file "$PWD/backca.crt"
	tls ca cert "$PWD/ica.crt"
	tls ca key "$PWD/ica.key" password "s3cret"
}
http protocol h {
	tls ca file "$PWD/backca.crt"
	tls ca cert "$PWD/ica.crt"
	tls ca key "$PWD/ica.key" password "s3cret"
	match request header log "User-Agent"
}
relay r {
	listen on 127.0.0.1 port $lport tls
	protocol p
	forward with tls to 127.0.0.1 port $bport
}
relay h {
	listen on 127.0.0.1 port $hport tls
	protocol h
	forward with tls to 127.0.0.1 port $bport
}
CONF
	RELAYS=2 PREFORK=1 start_relayd
	# an http protocol reads the inspected requests
	atf_check -o match:"^<HTML>" curl -s --cacert ica.crt \
	    "https://127.0.0.1:$hport/"
	wait_log 10 "^relay h, session .*User-Agent: curl.*GET" ||
	    atf_fail "no end line of the http relay with its request"
	# curl checks the name (the SAN came along) and the new issuer
	atf_check -o match:"^<HTML>" curl -s --cacert ica.crt \
	    "https://127.0.0.1:$lport/"
	end_line done
	s_client -CAfile ica.crt
	atf_check -o match:"subject=CN = back.test" \
	    -o match:"issuer=CN = inspection CA" \
	    -o match:"Verify return code: 0" cat sc.out
	relays=$(pgrep -P "$(cat relayd.pid)" -f "relayd: relay")
	cas=$(pgrep -P "$(cat relayd.pid)" -f "relayd: ca")
	[ -n "$relays" ] && [ -n "$cas" ] || atf_fail "no relay or ca process"
	# shellcheck disable=SC2086
	atf_check -s exit:1 python3 "$MEMSEARCH" ica-clear.key $relays
	# shellcheck disable=SC2086
	atf_check -o match:"found number" python3 "$MEMSEARCH" ica-clear.key $cas
}
tls_inspection_cleanup()
{
	stop_all
}

# An inspection CA with an EC key (ica.crt, ica.key with the password
# s3cret; its signatures differ every time) and relayd.conf with relay r
# on a new $lport inspecting what goes to 127.0.0.1:$bport; $1: another
# line for the protocol
inspect_conf()
{
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
	    -keyout ica.key -passout pass:s3cret -out ica.crt -days 2 \
	    -subj "/CN=inspection CA" 2>/dev/null ||
	    atf_fail "no inspection CA"
	lport=$(freeport)
	{
		conf_head
		cat <<CONF
protocol p {
	${1:-}
	tls ca cert "$PWD/ica.crt"
	tls ca key "$PWD/ica.key" password "s3cret"
}
relay r {
	listen on 127.0.0.1 port $lport tls
	protocol p
	forward with tls to 127.0.0.1 port $bport
}
CONF
	} >relayd.conf
}

atf_test_case tls_inspection_sni cleanup
tls_inspection_sni_head()
{
	atf_set descr "TLS inspection asks the backend for the server name the client asks for (SNI): a backend with a certificate per name gives the client's, re-issued"
	atf_set require.user root
	atf_set timeout 60
}
tls_inspection_sni_body()
{
	require_tls
	mkca
	mkcert back.test ec "DNS:back.test"
	mkcert other.test rsa "DNS:other.test"
	mkcert 127.0.0.1 ec IP:127.0.0.1
	# the backend's certificate for other.test goes to a client that
	# asks for it; a client asking for another name gets an alert
	bport=$(freeport)
	s_server_back -servername other.test -cert2 ssl/other.test.crt \
	    -key2 ssl/private/other.test.key -servername_fatal
	inspect_conf "tls ca file \"$PWD/ca.crt\""
	PREFORK=1 start_relayd
	s_client -CAfile ica.crt -servername other.test
	atf_check -o match:"subject=CN = other.test" \
	    -o match:"issuer=CN = inspection CA" \
	    -o match:"Verify return code: 0" cat sc.out
	s_client -CAfile ica.crt -noservername
	atf_check -o match:"subject=CN = back.test" \
	    -o match:"issuer=CN = inspection CA" cat sc.out
	# curl checks the name it asked for against the re-issued SAN
	atf_check -o match:"^<HTML>" curl -s --cacert ica.crt \
	    --resolve "other.test:$lport:127.0.0.1" \
	    "https://other.test:$lport/"
	# the name goes as the client wrote it: this backend refuses it
	s_client -CAfile ica.crt -servername wrong.test
	end_line "TLS handshake error"
	atf_check -s exit:1 grep -q "subject=" sc.out
	# a TLS 1.2 hello for other.test cut in two records, sent in two
	# writes 300 ms apart: the answer's certificate (in the clear in
	# TLS 1.2) is the one for other.test
	cat >hello.py <<'PY'
import socket, subprocess, sys, time
ls = socket.create_server(("127.0.0.1", 0))
p = subprocess.Popen(["openssl", "s_client", "-tls1_2", "-servername",
    "other.test", "-connect", "127.0.0.1:%d" % ls.getsockname()[1]],
    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL)
c, _ = ls.accept()
hello = b""
while len(hello) < 5 or len(hello) < 5 + int.from_bytes(hello[3:5], "big"):
	hello += c.recv(4096)
c.close()
p.kill()
body = hello[5:]
h = len(body) // 2
rec = lambda b: bytes([22, 3, 1]) + len(b).to_bytes(2, "big") + b
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(rec(body[:h])[:20])
time.sleep(0.3)
s.sendall(rec(body[:h])[20:] + rec(body[h:]))
s.settimeout(5)
got = b""
while b"other.test" not in got:
	d = s.recv(65536)
	if not d:
		break
	got += d
print("other.test" if b"other.test" in got else
    "back.test" if b"back.test" in got else "nothing")
PY
	atf_check -o inline:"other.test\n" python3 hello.py "$lport"
	# a client that leaves before its hello
	atf_check -o ignore "$RTOOL" probe "$lport"
	wait_log 10 "^relay r, session [0-9]* (.*), 0, 127.0.0.1 -> :0, done" ||
	    atf_fail "no end line for a client gone before its hello"
}
tls_inspection_sni_cleanup()
{
	stop_all
}

atf_test_case tls_inspection_kept cleanup
tls_inspection_kept_head()
{
	atf_set descr "TLS inspection keeps the re-issued certificate of a backend for its next sessions; a renewed one is re-issued; more sites than are kept all work"
	atf_set require.user root
	atf_set timeout 120
}
tls_inspection_kept_body()
{
	require_tls
	mkca
	mkcert 127.0.0.1 ec IP:127.0.0.1
	# a backend with a certificate for each of s1.test to s40.test
	i=1
	while [ $i -le 40 ]; do
		mkcert "s$i.test" ec "DNS:s$i.test"
		i=$((i + 1))
	done
	cat >sites.py <<'PY'
import socket, ssl, sys, threading
ctxs = {}
for i in range(1, 41):
	c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
	n = "s%d.test" % i
	c.load_cert_chain("ssl/%s.crt" % n, "ssl/private/%s.key" % n)
	ctxs[n] = c
def sni(sock, name, c):
	if name in ctxs:
		sock.context = ctxs[name]
ctxs["s1.test"].sni_callback = sni
ls = socket.create_server(("127.0.0.1", int(sys.argv[1])))
def serve(c):
	try:
		t = ctxs["s1.test"].wrap_socket(c, server_side=True)
		t.recv(4096)
		t.sendall(b"HTTP/1.0 200 OK\r\n\r\nhello\n")
		t.close()
	except (OSError, ssl.SSLError):
		c.close()
while True:
	c, _ = ls.accept()
	threading.Thread(target=serve, args=(c,)).start()
PY
	bport=$(freeport)
	python3 sites.py "$bport" 2>sites.err &
	echo $! >sites.pid
	wait_for 10 "$RTOOL" probe "$bport" || atf_fail "the backend did not start"
	inspect_conf
	PREFORK=1 start_relayd
	# an EC CA signs differently every time: the same certificate twice
	# is one kept
	s_client -CAfile ica.crt -servername s1.test
	atf_check -o match:"subject=CN = s1.test" cat sc.out
	fp1=$(openssl x509 -in sc.out -noout -fingerprint -sha256)
	s_client -CAfile ica.crt -servername s1.test
	fp2=$(openssl x509 -in sc.out -noout -fingerprint -sha256)
	[ -n "$fp1" ] && [ "$fp1" = "$fp2" ] ||
	    atf_fail "s1.test re-issued again: $fp1, then $fp2"
	# every site, more than are kept, then the first again: each its own
	i=1
	while [ $i -le 40 ]; do
		s_client -CAfile ica.crt -servername "s$i.test"
		grep -q "subject=CN = s$i.test" sc.out &&
		    grep -q "Verify return code: 0" sc.out ||
		    atf_fail "s$i.test: $(grep -m1 'subject=\|error' sc.out)"
		i=$((i + 1))
	done
	s_client -CAfile ica.crt -servername s1.test
	atf_check -o match:"subject=CN = s1.test" \
	    -o match:"Verify return code: 0" cat sc.out
	# a renewed backend certificate is re-issued
	kill "$(cat sites.pid)"
	wait_for 10 sh -c "! kill -0 $(cat sites.pid) 2>/dev/null" ||
	    atf_fail "the backend did not stop"
	cp ssl/s1.test.crt s1.old
	mkcert s1.test ec "DNS:s1.test"
	python3 sites.py "$bport" 2>sites.err &
	echo $! >sites.pid
	wait_for 10 "$RTOOL" probe "$bport" || atf_fail "the backend did not start again"
	s_client -CAfile ica.crt -servername s1.test
	fp3=$(openssl x509 -in sc.out -noout -fingerprint -sha256)
	old=$(openssl x509 -in s1.old -noout -serial)
	new=$(openssl x509 -in sc.out -noout -serial)
	[ "$new" != "$old" ] && [ "$fp3" != "$fp2" ] ||
	    atf_fail "the renewed certificate was not re-issued ($old, $new)"
	atf_check -o match:"^hello" curl -s --cacert ica.crt \
	    --resolve "s1.test:$lport:127.0.0.1" "https://s1.test:$lport/"
}
tls_inspection_kept_cleanup()
{
	stop_all
}

atf_test_case tls_session_tickets cleanup
tls_session_tickets_head()
{
	atf_set descr "session tickets: TLS 1.3 and 1.2 sessions resume on any relay process; without them nothing resumes"
	atf_set require.user root
	atf_set timeout 60
}
# s_client_sess VERSION OPTIONS: one connection that reads an answer (a
# TLS 1.3 ticket comes after the handshake), its session in sess.pem
s_client_sess()
{
	printf 'GET /bytes/1 HTTP/1.0\r\n\r\n' | timeout 10 openssl s_client \
	    -connect "127.0.0.1:$lport" -CAfile ca.crt "$1" -ign_eof "$2" \
	    sess.pem >sc.out 2>&1
}
tls_session_tickets_body()
{
	require_tls
	mkca
	mkcert 127.0.0.1 ec IP:127.0.0.1
	start_httpd
	tls_conf tcp "tls session tickets"
	sed -i 's/^prefork 1$/prefork 2/' relayd.conf
	PREFORK=2 start_relayd
	for v in -tls1_3 -tls1_2; do
		rm -f sess.pem
		s_client_sess $v -sess_out
		atf_check -o match:"^New, TLSv1" -o match:"^HTTP/1.0 200 OK" \
		    cat sc.out
		atf_check test -s sess.pem
		# two relay processes: the accepts spread over both, and
		# the parent's ticket key is the same in each
		for i in 1 2 3 4 5 6; do
			s_client_sess $v -sess_in
			atf_check -o match:"^Reused, TLSv1" \
			    -o match:"^HTTP/1.0 200 OK" cat sc.out
		done
	done
	stop_all

	tls_conf tcp ""
	PREFORK=1 start_relayd
	s_client -tls1_2 -reconnect
	atf_check -o match:"^New, TLSv1.2" -o not-match:"^Reused" cat sc.out
}
tls_session_tickets_cleanup()
{
	stop_all
}

atf_test_case tls_tickets_survive_reload cleanup
tls_tickets_survive_reload_head()
{
	atf_set descr "session tickets issued before relayctl reload and SIGHUP resume after them, TLS 1.3 and 1.2, on any relay process"
	atf_set require.user root
	atf_set timeout 60
}
# The sessions of before the reloads resume, three times each.
resume_before_reload()
{
	for v in 3 2; do
		for i in 1 2 3; do
			cp sess1$v.pem sess.pem
			s_client_sess -tls1_$v -sess_in
			atf_check -o match:"^Reused, TLSv1" \
			    -o match:"^HTTP/1.0 200 OK" cat sc.out
		done
	done
}
tls_tickets_survive_reload_body()
{
	require_tls
	mkca
	mkcert 127.0.0.1 ec IP:127.0.0.1
	start_httpd
	tls_conf tcp "tls session tickets"
	sed -i 's/^prefork 1$/prefork 2/' relayd.conf
	PREFORK=2 start_relayd
	for v in 3 2; do
		s_client_sess -tls1_$v -sess_out
		atf_check -o match:"^New, TLSv1" cat sc.out
		mv sess.pem sess1$v.pem
	done
	atf_check "$RELAYCTL" -s relayd.sock reload
	resume_before_reload
	kill -HUP "$(cat relayd.pid)"
	wait_for 10 sh -c "test \$(grep -c 'relay_launch: running relay r' relayd.log) -eq 6" ||
	    atf_fail "no reload with SIGHUP"
	resume_before_reload
}
tls_tickets_survive_reload_cleanup()
{
	stop_all
}

atf_test_case tls_ocsp_staple cleanup
tls_ocsp_staple_head()
{
	atf_set descr "an OCSP response beside the certificate (NAME.ocsp) is stapled; none without it"
	atf_set require.user root
	atf_set timeout 30
}
tls_ocsp_staple_body()
{
	require_tls
	mkca
	mkcert 127.0.0.1 ec IP:127.0.0.1
	touch index.txt
	openssl ocsp -issuer ca.crt -cert ssl/127.0.0.1.crt -no_nonce \
	    -reqout req.der >/dev/null 2>&1 || atf_fail "no OCSP request"
	openssl ocsp -index index.txt -rsigner ca.crt -rkey ca.key -CA ca.crt \
	    -reqin req.der -respout ssl/127.0.0.1.ocsp -ndays 1 >/dev/null 2>&1 ||
	    atf_fail "no OCSP response"
	start_httpd
	tls_conf tcp ""
	PREFORK=1 start_relayd
	s_client -status
	atf_check -o match:"OCSP Response Status: successful" cat sc.out
	stop_all
	rm ssl/127.0.0.1.ocsp
	start_httpd
	PREFORK=1 start_relayd
	s_client -status
	atf_check -o match:"OCSP response: no response sent" cat sc.out
}
tls_ocsp_staple_cleanup()
{
	stop_all
}

atf_test_case tls_client_crl cleanup
tls_client_crl_head()
{
	atf_set descr "tls client ca ... crl: a revoked client certificate ends in a handshake error, another of the CA passes"
	atf_set require.user root
	atf_set timeout 30
}
tls_client_crl_body()
{
	require_tls
	mkca
	mkcert 127.0.0.1 rsa IP:127.0.0.1
	mkcert good ec DNS:good
	mkcert bad ec DNS:bad
	touch index.txt
	echo 01 >crlnumber
	printf '[ca]\ndefault_ca = t\n[t]\ndatabase = index.txt\ncrlnumber = crlnumber\ndefault_md = sha256\ndefault_crl_days = 2\n' >ca.cnf
	openssl ca -config ca.cnf -keyfile ca.key -cert ca.crt \
	    -revoke ssl/bad.crt >/dev/null 2>&1 || atf_fail "no revocation"
	openssl ca -config ca.cnf -keyfile ca.key -cert ca.crt -gencrl \
	    -out crl.pem >/dev/null 2>&1 || atf_fail "no CRL"
	start_httpd
	tls_conf http "tls client ca \"$PWD/ca.crt\" crl \"$PWD/crl.pem\""
	PREFORK=1 start_relayd
	u=https://127.0.0.1:$lport/bytes/10
	get10 --cert ssl/good.crt --key ssl/private/good.key "$u"
	atf_check -s not-exit:0 -o ignore curl -s --cacert ca.crt \
	    --cert ssl/bad.crt --key ssl/private/bad.key -o /dev/null "$u"
	end_line "TLS handshake error: "
}
tls_client_crl_cleanup()
{
	stop_all
}

atf_test_case tls_show_sessions cleanup
tls_show_sessions_head()
{
	atf_set descr "relayctl show sessions marks a TLS session"
	atf_set require.user root
	atf_set timeout 30
}
tls_show_sessions_body()
{
	tls_relay rsa http ""
	curl -s --cacert ca.crt -o /dev/null \
	    "https://127.0.0.1:$lport/slow/2000000" &
	echo $! >client.pid
	wait_for 10 sh -c "$RELAYCTL -s $PWD/relayd.sock show sessions | grep -q 'tls client'" ||
	    atf_fail "no TLS session shown: $(relayctl show sessions)"
}
tls_show_sessions_cleanup()
{
	stop_all
}

atf_test_case tls_missing_files
tls_missing_files_head()
{
	atf_set descr "a missing or unusable certificate or key is a configuration error with file:line and the path"
}
tls_missing_files_body()
{
	[ -x "$RELAYD" ] || atf_fail "relayd is not built"
	mkdir -p ssl/private
	cat >relayd.conf <<CONF
tls directory "$PWD/ssl"
relay r {
	listen on 127.0.0.1 port 4443 tls
	forward to 127.0.0.1 port 80
}
CONF
	atf_check -s exit:1 -e match:"relayd.conf:5: cannot load certificates for relay r:4443: $PWD/ssl/127.0.0.1.crt: No such file or directory" \
	    "$RELAYD" -n -f relayd.conf
	printf 'x\n' >ssl/127.0.0.1.crt
	printf 'x\n' >ssl/private/127.0.0.1.key
	atf_check -s exit:1 -e match:"no certificate with a public key" \
	    "$RELAYD" -n -f relayd.conf
	# a key type ca has no way to sign with
	openssl req -x509 -newkey ed25519 -nodes -days 2 -subj /CN=e \
	    -keyout ssl/private/127.0.0.1.key -out ssl/127.0.0.1.crt \
	    2>/dev/null || atf_fail "no Ed25519 certificate"
	atf_check -s exit:1 -e match:"relayd.conf:5: cannot load certificates for relay r:4443: $PWD/ssl/127.0.0.1.crt: the certificate's key is ED25519: relayd signs with RSA and EC keys only" \
	    "$RELAYD" -n -f relayd.conf
}

atf_test_case tls_proxy_protocol cleanup
tls_proxy_protocol_head()
{
	atf_set descr "listen on ... tls proxy-protocol from: the PROXY header before the ClientHello, its client in \$REMOTE_ADDR"
	atf_set require.user root
	atf_set timeout 30
}
tls_proxy_protocol_body()
{
	require_tls
	mkca
	mkcert 127.0.0.1 ec IP:127.0.0.1
	start_httpd
	tls_conf http 'match request header set "X-Client" value "$REMOTE_ADDR"'
	sed -i "s/port $lport tls/port $lport tls proxy-protocol from 127.0.0.1/" \
	    relayd.conf
	PREFORK=1 start_relayd
	atf_check -o match:"X-Client: 127\.0\.0\.1" curl -s --cacert ca.crt \
	    --haproxy-protocol "https://127.0.0.1:$lport/headers"
	# without the header the ClientHello is not one
	atf_check -s not-exit:0 -o empty curl -s --cacert ca.crt \
	    "https://127.0.0.1:$lport/headers"
	end_line "PROXY header invalid"
}
tls_proxy_protocol_cleanup()
{
	stop_all
}

atf_test_case tls_late_ca_answer cleanup
tls_late_ca_answer_head()
{
	atf_set descr "a ca answer that comes after its key operation gave up is dropped: the relay goes on serving TLS"
	atf_set require.user root
	atf_set timeout 60
}
tls_late_ca_answer_body()
{
	tls_relay rsa http ""
	get10 "https://127.0.0.1:$lport/bytes/10"
	ca=$(children_titled ca)
	[ -n "$ca" ] || atf_fail "no ca process"
	# the handshake's key operation waits for ca in vain, and fails
	kill -STOP "$ca"
	curl -s --cacert ca.crt -o /dev/null \
	    "https://127.0.0.1:$lport/bytes/10" &&
	    atf_fail "a handshake succeeded without ca"
	# its answer comes now, with no further traffic to swallow it
	kill -CONT "$ca"
	if ! wait_log 10 "late answer from ca dropped"; then
		cat relayd.log >&2
		atf_fail "the late answer was not dropped"
	fi
	kill -0 "$(cat relayd.pid)" || atf_fail "relayd died"
	get10 "https://127.0.0.1:$lport/bytes/10"
	atf_check -s exit:1 grep "lost child" relayd.log
}
tls_late_ca_answer_cleanup()
{
	# a ca left stopped would not hear the end
	pkill -CONT -P "$(cat relayd.pid 2>/dev/null)" 2>/dev/null
	stop_all
}

atf_test_case tls_end_without_close_notify cleanup
tls_end_without_close_notify_head()
{
	atf_set descr "a client that ends without close_notify half-closes as at an end of file: the answer still comes, the session ends done"
	atf_set require.user root
	atf_set timeout 60
}
tls_end_without_close_notify_body()
{
	tls_relay rsa http ""
	# the request, then the end of the TCP stream without close_notify;
	# the answer still comes.  Ten times: the request and the end may
	# come with the handshake's last read, or after it.
	python3 - "$lport" <<'PY' >answer || atf_fail "the client failed"
import os, socket, ssl, sys
ctx = ssl.create_default_context(cafile="ca.crt")
for i in range(10):
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1",
        int(sys.argv[1])), 10), server_hostname="127.0.0.1")
    s.sendall(b"GET /bytes/10 HTTP/1.1\r\nHost: a\r\n\r\n")
    socket.socket(fileno=os.dup(s.fileno())).shutdown(socket.SHUT_WR)
    got = b""
    while True:
        try:
            data = s.recv(4096)
        except ssl.SSLError:
            break
        if not data:
            break
        got += data
    s.close()
    sys.stdout.write(got.split(b"\r\n")[0].decode() + "\n")
PY
	printf 'HTTP/1.1 200 OK\n%.0s' 1 2 3 4 5 6 7 8 9 10 >want
	atf_check -o file:want cat answer
	wait_for 10 sh -c "[ \$(grep -c 'done, GET\$' relayd.log) -eq 10 ]" ||
	    atf_fail "not ten sessions that ended done with their request"
}
tls_end_without_close_notify_cleanup()
{
	stop_all
}

atf_test_case tls_no_session_tickets cleanup
tls_no_session_tickets_head()
{
	atf_set descr "TLS 1.3 sends no session tickets (as LibreSSL's libtls): a client that never reads cannot turn its close into a reset"
	atf_set require.user root
	atf_set timeout 60
}
tls_no_session_tickets_body()
{
	tls_relay rsa tcp ""
	# s_client reads on to the end, and says what tickets came
	printf 'GET /bytes/1 HTTP/1.0\r\n\r\n' | timeout 10 openssl s_client \
	    -connect "127.0.0.1:$lport" -CAfile ca.crt -tls1_3 -ign_eof \
	    >sc.out 2>&1
	atf_check -o match:"^HTTP/1.0 200 OK" -o match:"Verify return code: 0" \
	    cat sc.out
	atf_check -s exit:1 grep "New Session Ticket" sc.out
}
tls_no_session_tickets_cleanup()
{
	stop_all
}

atf_test_case tls_idle_body_to_eof cleanup
tls_idle_body_to_eof_head()
{
	atf_set descr "https: session timeout while an HTTP/1.0 answer runs to the backend's close ends the session at the timeout, as OpenBSD's"
	atf_set require.user root
	atf_set timeout 30
}
tls_idle_body_to_eof_body()
{
	tls_relay ec http "" "session timeout 2"
	start=$(date +%s)
	printf 'GET /pause/4 HTTP/1.0\r\n\r\n' | timeout 15 openssl s_client \
	    -quiet -ign_eof -connect "127.0.0.1:$lport" -CAfile ca.crt \
	    >answer 2>sc.err
	took=$(($(date +%s) - start))
	atf_check -o match:"^HTTP/1.0 200 OK" -o match:"hello" cat answer
	[ "$took" -lt 4 ] || atf_fail "the session lasted $took s, beyond its 2 s timeout"
	# TLS is never spliced: the timeout is the buffer event's
	end_line "buffer event timeout, GET"
	wait_for 10 test -s back.port.requests.pause ||
	    atf_fail "the backend did not finish"
	atf_check -o match:"^write failed: (Broken pipe|Connection reset by peer)" \
	    cat back.port.requests.pause
}
tls_idle_body_to_eof_cleanup()
{
	stop_all
}

atf_test_case tls_probe_no_backend cleanup
tls_probe_no_backend_head()
{
	atf_set descr "a TLS client whose connection ends with its handshake (a probe, openssl s_time) gets no backend connection; one that sends a request after it still does"
	atf_set require.user root
	atf_set timeout 60
}
tls_probe_no_backend_body()
{
	tls_relay ec tcp ""
	# the client's Finished and its FIN in one segment (TCP_CORK), so
	# that relayd finds the end with the handshake's last record
	python3 - "$lport" <<'PY' || atf_fail "the probe failed"
import socket, ssl, sys
ctx = ssl.create_default_context(cafile="ca.crt")
ctx.minimum_version = ssl.TLSVersion.TLSv1_3
s = ctx.wrap_socket(socket.create_connection(("127.0.0.1",
    int(sys.argv[1])), 10), server_hostname="127.0.0.1",
    do_handshake_on_connect=False)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
s.do_handshake()
s.shutdown(socket.SHUT_WR)	# the socket's: no close_notify
s.close()
PY
	end_line "127.0.0.1 -> :0, done\$"
	# the backend never heard of it
	atf_check -o inline:"0\n" sh -c "wc -l <back.port.requests 2>/dev/null || echo 0"
	get10 "https://127.0.0.1:$lport/bytes/10"
	wait_log 10 "127.0.0.1 -> 127.0.0.1:$bport, done" ||
	    atf_fail "no backend for a request: $(cat relayd.log)"
}
tls_probe_no_backend_cleanup()
{
	stop_all
}

atf_test_case tls_ca_stall_plain_sessions cleanup
tls_ca_stall_plain_sessions_head()
{
	atf_set descr "a ca that stops does not stall the relay process: a plain stream keeps flowing while TLS handshakes wait for ca, and fail at its deadline"
	atf_set require.user root
	atf_set timeout 60
}
tls_ca_stall_plain_sessions_body()
{
	require_tls
	mkca
	mkcert 127.0.0.1 rsa IP:127.0.0.1
	start_httpd
	eport=$(start_backend echo echo)
	tls_conf http "" ""
	tport=$(freeport)
	# the plain relay shares the TLS relay's one relay process
	cat >>relayd.conf <<CONF
relay t {
	listen on 127.0.0.1 port $tport
	forward to 127.0.0.1 port $eport
}
CONF
	RELAYS=2 PREFORK=1 start_relayd
	get10 "https://127.0.0.1:$lport/bytes/10"
	ca=$(children_titled ca)
	[ -n "$ca" ] || atf_fail "no ca process"
	# 1,000 bytes at 250 a second: 4 s of echoed bytes, the longest
	# wait for the next ones measured
	"$RTOOL" client "$tport" 1 1000 20 250 >paced.out 2>&1 &
	echo $! >paced.pid
	kill -STOP "$ca"
	# three handshakes, one after the other, each waits for ca in vain
	for _i in 1 2 3; do
		curl -s --cacert ca.crt -o /dev/null \
		    "https://127.0.0.1:$lport/bytes/10" &&
		    atf_fail "a handshake succeeded without ca"
	done
	kill -CONT "$ca"
	wait "$(cat paced.pid)" || { cat paced.out >&2; atf_fail "the plain stream failed"; }
	rm -f paced.pid
	cat paced.out
	gap=$(sed -n 's/.*longest gap \([0-9]*\) ms.*/\1/p' paced.out)
	[ -n "$gap" ] || atf_fail "no gap measured"
	# 4 ms between bytes; a relay process blocked on ca waits 1 s a
	# handshake (TLS_PRIV_TIMEOUT)
	[ "$gap" -lt 300 ] ||
	    atf_fail "the plain stream stood still $gap ms while ca was stopped"
	[ "$(grep -c "no answer from ca in 1000 ms" relayd.log)" -eq 3 ] ||
	    atf_fail "not three key operations gave up"
	end_line "TLS handshake error"
	get10 "https://127.0.0.1:$lport/bytes/10"
	atf_check -s exit:1 grep "lost child" relayd.log
}
tls_ca_stall_plain_sessions_cleanup()
{
	pkill -CONT -P "$(cat relayd.pid 2>/dev/null)" 2>/dev/null
	stop_all
}

atf_test_case tls_ca_burst_answers cleanup
tls_ca_burst_answers_head()
{
	atf_set descr "a burst of handshakes that keeps ca signing (RSA 4096) for seconds: every one is served, and no process stops answering the parent (ca's long batches let its heartbeat through; the relay processes never wait for ca themselves)"
	atf_set require.user root
	atf_set timeout 120
}
tls_ca_burst_answers_body()
{
	require_tls
	command -v h2load >/dev/null ||
	    atf_skip "no h2load (make deps installs nghttp2-client)"
	mkca
	mkcert 127.0.0.1 rsa4096 IP:127.0.0.1
	start_httpd
	tls_conf http "tcp { backlog 512 }" ""
	# two relay processes, each with its ca process
	sed -i 's/^prefork 1$/prefork 2/' relayd.conf
	PREFORK=2 start_relayd
	get10 "https://127.0.0.1:$lport/bytes/10"
	# 500 handshakes at once: 3.4 ms of signing each here, 0.85 s for
	# each ca process
	for _i in 1 2 3; do
		timeout 60 h2load -c 500 -n 500 --h1 \
		    "https://127.0.0.1:$lport/bytes/10" >h2load.out 2>&1 ||
		    { cat h2load.out; atf_fail "h2load did not end"; }
		grep "^requests:" h2load.out
		grep -q "500 succeeded, 0 failed" h2load.out ||
		    atf_fail "not every handshake of the burst was served"
	done
	atf_check -s exit:1 grep "does not answer" relayd.log
	get10 "https://127.0.0.1:$lport/bytes/10"
	atf_check -s exit:1 grep "lost child" relayd.log
}
tls_ca_burst_answers_cleanup()
{
	stop_all
}

# The key operations ca has answered, from the metrics.
keyops_done()
{
	"$RELAYCTL" -s relayd.sock show metrics | awk '
	    /^relayd_ca_key_operation_duration_seconds_count / { n = $2 }
	    END { print n + 0 }'
}

# At least $1 sessions have ended in error, says the metrics: the
# relay process's report of them came, and its key operations with it.
errors_reported()
{
	"$RELAYCTL" -s relayd.sock show metrics | awk -v want="$1" '
	    /^relayd_relay_session_ends_total\{.*end="error"\} / { n = $2 }
	    END { exit !(n >= want) }'
}

atf_test_case tls_queued_client_left cleanup
tls_queued_client_left_head()
{
	atf_set descr "handshakes that wait their turn behind a full queue of handshakes paused for ca, whose clients left meanwhile, end without ca signing for them"
	atf_set require.user root
	atf_set timeout 120
}
tls_queued_client_left_body()
{
	require_tls
	mkca
	mkcert 127.0.0.1 rsa4096 IP:127.0.0.1
	start_httpd
	tls_conf http "tcp { backlog 512 }" ""
	PREFORK=1 start_relayd
	get10 "https://127.0.0.1:$lport/bytes/10"
	# 300 clients send a ClientHello each, all at once, and close:
	# 64 handshakes pause for ca (3.4 ms of signing each here), the
	# rest wait, and their clients are gone when their turn comes
	python3 - "$lport" <<'PY' || atf_fail "the clients failed"
import socket, ssl, sys
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
i, o = ssl.MemoryBIO(), ssl.MemoryBIO()
t = ctx.wrap_bio(i, o)
try:
    t.do_handshake()
except ssl.SSLWantReadError:
    pass
hello = o.read()
socks = [socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    for _ in range(300)]
for s in socks:
    s.sendall(hello)
for s in socks:
    s.close()
PY
	wait_for 60 errors_reported 300 ||
	    atf_fail "not every handshake ended: $(grep -c 'TLS handshake' relayd.log)"
	grep -o "TLS handshake error: [a-z ]*" relayd.log | sort | uniq -c
	# one for the first client, one for each of the 64 paused, and
	# some let in as they ended before their clients' ends were read
	ops=$(keyops_done)
	echo "key operations: $ops"
	[ "$ops" -lt 150 ] ||
	    atf_fail "ca signed $ops times for 301 clients, 300 of which had left"
	atf_check -o match:"TLS handshake error: the peer left while it waited" \
	    cat relayd.log
	get10 "https://127.0.0.1:$lport/bytes/10"
	atf_check -s exit:1 grep "does not answer" relayd.log
}
tls_queued_client_left_cleanup()
{
	stop_all
}

# The serial of the certificate the relay shows now.
served_serial()
{
	s_client
	openssl x509 -noout -serial <sc.out
}

atf_test_case tls_certificate_renewed cleanup
tls_certificate_renewed_head()
{
	atf_set descr "a renewed certificate is served after a reload; a key that is not the certificate's, or has a password, is refused with the file"
	atf_set require.user root
	atf_set timeout 60
}
tls_certificate_renewed_body()
{
	tls_relay ec http ""
	get10 "https://127.0.0.1:$lport/bytes/10"
	first=$(served_serial)
	# renewed with a new key, of another type
	mkcert 127.0.0.1 rsa IP:127.0.0.1
	renewed=$(openssl x509 -noout -serial -in ssl/127.0.0.1.crt)
	[ "$first" != "$renewed" ] || atf_fail "the same serial twice"
	atf_check "$RELAYCTL" -s relayd.sock reload
	atf_check_equal "$renewed" "$(served_serial)"
	get10 "https://127.0.0.1:$lport/bytes/10"

	# renewed again, but the old key left in place: refused, by
	# relayd -n and by a reload, which leaves the relay as it was
	cp ssl/private/127.0.0.1.key rsa.key
	mkcert 127.0.0.1 rsa IP:127.0.0.1
	cp rsa.key ssl/private/127.0.0.1.key
	atf_check -s exit:1 -e match:"^relayd.conf:[0-9]+: cannot load certificates for relay r:$lport: $PWD/ssl/private/127.0.0.1.key: not the key of the certificate $PWD/ssl/127.0.0.1.crt$" \
	    "$RELAYD" -n -f relayd.conf
	atf_check -s exit:1 -o match:"reload failed" "$RELAYCTL" -s relayd.sock reload
	atf_check -o match:"not the key of the certificate" cat relayd.log
	atf_check_equal "$renewed" "$(served_serial)"
	get10 "https://127.0.0.1:$lport/bytes/10"

	# a key with a password: relayd has none to give
	mkcert 127.0.0.1 ec IP:127.0.0.1
	openssl pkey -in ssl/private/127.0.0.1.key -aes256 -passout pass:x \
	    -out enc.key || atf_fail "no encrypted key"
	cp enc.key ssl/private/127.0.0.1.key
	atf_check -s exit:1 -e match:"$PWD/ssl/private/127.0.0.1.key: no private key, or one with a password$" \
	    "$RELAYD" -n -f relayd.conf </dev/null
	atf_check -s exit:1 -o match:"reload failed" "$RELAYCTL" -s relayd.sock reload
	atf_check_equal "$renewed" "$(served_serial)"
}
tls_certificate_renewed_cleanup()
{
	stop_all
}

# ssl/127.0.0.1.crt signed again, for $2 days, by a CA whose clock says
# $1 (libfaketime's FAKETIME: "@2020-01-01 00:00:00", "+30d").
sign_at()
{
	faketime_lib
	# shellcheck disable=SC2154	# _ft: set by faketime_lib, in lib.sh
	LD_PRELOAD=$_ft FAKETIME=$1 openssl x509 -req -in 127.0.0.1.csr \
	    -CA ca.crt -CAkey ca.key -CAcreateserial -days "$2" \
	    -extfile 127.0.0.1.ext -out ssl/127.0.0.1.crt 2>/dev/null ||
	    atf_fail "no certificate signed at $1"
}

atf_test_case tls_certificate_expiry cleanup
tls_certificate_expiry_head()
{
	atf_set descr "a certificate's expiry in the metrics, per TLS relay; an expired one, or one not valid yet, is said at load"
	atf_set require.user root
	atf_set timeout 60
}
tls_certificate_expiry_body()
{
	require_tls
	mkca
	mkcert 127.0.0.1 ec IP:127.0.0.1
	start_httpd
	tls_conf http ""
	cat >>relayd.conf <<CONF
relay plain {
	listen on 127.0.0.1 port $(freeport)
	forward to 127.0.0.1 port $bport
}
CONF
	PREFORK=1 RELAYS=2 start_relayd
	end=$(date -u -d "$(openssl x509 -noout -enddate -in ssl/127.0.0.1.crt |
	    cut -d= -f2)" +%s)
	atf_check -o save:metrics "$RELAYCTL" -s relayd.sock show metrics
	atf_check -o inline:"relayd_relay_certificate_expiry_timestamp_seconds{relay=\"r\"} $end\n" \
	    grep '^relayd_relay_certificate_expiry_timestamp_seconds' metrics
	atf_check -s exit:1 -x "grep -q 'expired on\|not valid before' relayd.log"

	# renewed, by an automation whose clock was years behind: expired
	sign_at "@2020-01-01 00:00:00" 2
	atf_check -o ignore -e match:"^relay r: the certificate $PWD/ssl/127.0.0.1.crt expired on 2020-01-03 00:00:[0-9]{2} UTC$" \
	    "$RELAYD" -n -f relayd.conf
	atf_check "$RELAYCTL" -s relayd.sock reload
	atf_check -o match:"relay r: the certificate .* expired on 2020-01-03" cat relayd.log
	atf_check -o match:"^relayd_relay_certificate_expiry_timestamp_seconds\{relay=\"r\"\} 157800960[0-9]$" \
	    "$RELAYCTL" -s relayd.sock show metrics

	# and one whose clock was ahead: not valid yet
	sign_at "+30d" 60
	atf_check -o ignore -e match:"^relay r: the certificate $PWD/ssl/127.0.0.1.crt is not valid before [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC$" \
	    "$RELAYD" -n -f relayd.conf
}
tls_certificate_expiry_cleanup()
{
	stop_all
}

atf_test_case tls_idle_memory cleanup
tls_idle_memory_head()
{
	atf_set descr "an idle TLS session that moved bytes gives its TLS buffers back: a relay process holds less than 32 KiB for each"
	atf_set require.user root
	atf_set timeout 120
}
# Clients that open $1 TLS sessions through the relay on $lport, move
# 32 KiB each way on each (checked), write "held" to held.out and keep
# them idle until held.stop appears.
hold_tls_sessions()
{
	python3 - "$1" "$lport" "$PWD/ca.crt" >held.out 2>&1 <<'PY' &
import os, socket, ssl, sys, time
n, port, ca = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ctx = ssl.create_default_context(cafile=ca)
msg = os.urandom(32768)
held = []
for i in range(n):
    t = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port),
        timeout=10), server_hostname="127.0.0.1")
    t.sendall(msg)
    got = b""
    while len(got) < len(msg):
        d = t.recv(65536)
        if not d:
            sys.exit("session %d: closed after %d bytes" % (i, len(got)))
        got += d
    if got != msg:
        sys.exit("session %d: the bytes came back changed" % i)
    held.append(t)
print("held", len(held), flush=True)
for i in range(1000):
    if os.path.exists("held.stop"):
        break
    time.sleep(0.1)
PY
	echo $! >held.pid
}
tls_idle_memory_body()
{
	require_tls
	mkca
	mkcert 127.0.0.1 ec IP:127.0.0.1
	bport=$(start_backend echo echo 110)
	tls_conf tcp "tls keypair 127.0.0.1"
	PREFORK=1 start_relayd
	relay=$(children_titled relay)
	n=400
	before=$(rss_kib "$relay")
	hold_tls_sessions $n
	wait_for 60 grep -q "^held" held.out ||
	    atf_fail "sessions not held: $(cat held.out)"
	after=$(rss_kib "$relay")
	per=$(( (after - before) / n ))
	echo "relay process: $before KiB, $after KiB with $n idle TLS" \
	    "sessions: $per KiB each"
	[ "$per" -lt 32 ] ||
	    atf_fail "an idle TLS session holds $per KiB of the relay process"
	touch held.stop
	wait "$(cat held.pid)" || atf_fail "the client failed: $(cat held.out)"
	wait_log 10 "^relay r, session [0-9]* (.*, done$" ||
	    atf_fail "no session end line"
}
tls_idle_memory_cleanup()
{
	touch held.stop
	stop_all
}

atf_test_case tls_forward_ca_bundle cleanup
tls_forward_ca_bundle_head()
{
	atf_set descr "forward with tls and a tls ca file of many CAs (the system's bundle): a chain through an intermediate verifies; another CA's, an expired and a client-only certificate are refused with libtls's reasons"
	atf_set require.user root
	atf_set timeout 90
}
# A certificate back.test for the backend signed by $1 (name of .crt and
# .key) with $2 as its extensions, in ssl/; $3 a libfaketime offset
# for its start (or none).
back_cert()
{
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout ssl/private/back.test.key -out back.csr \
	    -subj /CN=back.test 2>/dev/null || atf_fail "no key"
	printf '%s\n' "$2" >back.ext
	env ${3:+LD_PRELOAD=$_ft FAKETIME=$3} openssl x509 -req \
	    -in back.csr -CA "$1.crt" -CAkey "$1.key" -CAcreateserial \
	    -days 2 -extfile back.ext -out ssl/back.test.crt 2>/dev/null ||
	    atf_fail "no certificate signed by $1"
}
# Session $1 through the relay to a backend with chain $2 (a file of
# certificates it sends besides its own, or none); its end line must
# end with $3.
bundle_session()
{
	if [ -f sserver.pid ]; then
		kill "$(cat sserver.pid)" 2>/dev/null
		wait "$(cat sserver.pid)" 2>/dev/null
	fi
	# shellcheck disable=SC2086
	s_server_back ${2:+-cert_chain "$2"}
	printf 'GET / HTTP/1.0\r\n\r\n' |
	    timeout 10 socat -t 5 - "TCP:127.0.0.1:$lport" >got.out
	wait_log 10 "^relay r, session $1 (.*$3\$" ||
	    atf_fail "session $1 did not end with: $3: $(grep "session $1 (" relayd.log)"
}
tls_forward_ca_bundle_body()
{
	require_tls
	faketime_lib
	mkca
	# an intermediate of the test CA signs the backend's certificate
	openssl req -new -newkey rsa:2048 -nodes -keyout ica.key -out ica.csr \
	    -subj "/CN=relayd test intermediate" 2>/dev/null &&
	    printf 'basicConstraints=critical,CA:true\nkeyUsage=keyCertSign\n' \
	    >ica.ext && openssl x509 -req -in ica.csr -CA ca.crt \
	    -CAkey ca.key -CAcreateserial -days 2 -extfile ica.ext \
	    -out ica.crt 2>/dev/null || atf_fail "no intermediate"
	# another CA, in no bundle
	openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key \
	    -out other.crt -days 2 -subj "/CN=another CA" 2>/dev/null ||
	    atf_fail "no other CA"
	# the test CA among the system's (when it has them)
	bundle=/etc/ssl/certs/ca-certificates.crt
	[ -f $bundle ] || bundle=/dev/null
	cat $bundle ca.crt >bundle.pem
	echo "CAs in the bundle: $(grep -c 'BEGIN CERT' bundle.pem)"
	bport=$(freeport)
	tls_forward_conf
	sed -i "s|$PWD/ca.crt|$PWD/bundle.pem|" relayd.conf
	san="subjectAltName=DNS:back.test"
	back_cert ica "$san"
	PREFORK=1 start_relayd
	bundle_session 1 ica.crt done
	atf_check -o match:"^HTTP/1.0 200 ok" cat got.out
	# without the intermediate the chain leads nowhere
	why="certificate verification failed"
	bundle_session 2 "" "$why: unable to get local issuer certificate"
	atf_check -o empty cat got.out
	back_cert other "$san"
	bundle_session 3 "" "$why: unable to get local issuer certificate"
	back_cert ica "$san" -10d
	bundle_session 4 ica.crt "$why: certificate has expired"
	back_cert ica "$san
extendedKeyUsage=clientAuth"
	bundle_session 5 ica.crt "$why: unsuitable certificate purpose"
	atf_check -o empty cat got.out
	# and it serves again
	back_cert ica "$san"
	bundle_session 6 ica.crt done
	atf_check -o match:"^HTTP/1.0 200 ok" cat got.out
}
tls_forward_ca_bundle_cleanup()
{
	stop_all
}

atf_test_case tls_chain cleanup
tls_chain_head()
{
	atf_set descr "a keypair whose file holds the chain (a fullchain.pem): the intermediate is served, the expiry is the certificate's own; a chain in the wrong order is refused"
	atf_set require.user root
	atf_set timeout 60
}
tls_chain_body()
{
	require_tls
	mkca
	# the root (ca.crt, all the client trusts), an intermediate valid
	# for 30 days, and the relay's certificate, for 2, signed by it
	openssl req -new -newkey rsa:2048 -nodes -keyout int.key -out int.csr \
	    -subj "/CN=relayd test intermediate" 2>/dev/null &&
	    printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n' \
	    >int.ext &&
	    openssl x509 -req -in int.csr -CA ca.crt -CAkey ca.key \
	    -CAcreateserial -days 30 -extfile int.ext -out int.crt 2>/dev/null ||
	    atf_fail "no intermediate"
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout ssl/private/127.0.0.1.key -out leaf.csr -subj /CN=127.0.0.1 \
	    2>/dev/null && printf 'subjectAltName=IP:127.0.0.1\n' >leaf.ext &&
	    openssl x509 -req -in leaf.csr -CA int.crt -CAkey int.key \
	    -CAcreateserial -days 2 -extfile leaf.ext -out leaf.crt 2>/dev/null ||
	    atf_fail "no certificate"
	cat leaf.crt int.crt >ssl/127.0.0.1.crt
	start_httpd
	tls_conf http ""
	PREFORK=1 start_relayd
	get10 "https://127.0.0.1:$lport/bytes/10"
	s_client
	atf_check -o match:"^ *1 s:CN = relayd test intermediate" \
	    -o match:"Verify return code: 0" cat sc.out
	end=$(date -u -d "$(openssl x509 -noout -enddate -in leaf.crt |
	    cut -d= -f2)" +%s)
	atf_check -o match:"^relayd_relay_certificate_expiry_timestamp_seconds\{relay=\"r\"\} $end\$" \
	    "$RELAYCTL" -s relayd.sock show metrics
	# the intermediate first: its key is not the relay's
	cat int.crt leaf.crt >ssl/127.0.0.1.crt
	atf_check -s exit:1 -e match:"not the key of the certificate $PWD/ssl/127.0.0.1.crt" \
	    "$RELAYD" -n -f relayd.conf
}
tls_chain_cleanup()
{
	stop_all
}

atf_init_test_cases()
{
	atf_add_test_case tls_versions_keys
	atf_add_test_case tls_sni
	atf_add_test_case tls_client_ca
	atf_add_test_case tls_forward_with_tls
	atf_add_test_case tls_backend_close_notify_held
	atf_add_test_case tls_held_after_pause
	atf_add_test_case tls_request_behind_finished
	atf_add_test_case tls_https_256m
	atf_add_test_case tls_handshake_timeout
	atf_add_test_case tls_garbage
	atf_add_test_case tls_keys_in_ca_only
	atf_add_test_case tls_late_ca_answer
	atf_add_test_case tls_end_without_close_notify
	atf_add_test_case tls_no_session_tickets
	atf_add_test_case tls_inspection
	atf_add_test_case tls_inspection_sni
	atf_add_test_case tls_inspection_kept
	atf_add_test_case tls_session_tickets
	atf_add_test_case tls_tickets_survive_reload
	atf_add_test_case tls_ocsp_staple
	atf_add_test_case tls_client_crl
	atf_add_test_case tls_show_sessions
	atf_add_test_case tls_missing_files
	atf_add_test_case tls_certificate_renewed
	atf_add_test_case tls_certificate_expiry
	atf_add_test_case tls_chain
	atf_add_test_case tls_idle_memory
	atf_add_test_case tls_forward_ca_bundle
	atf_add_test_case tls_ca_files_empty
	atf_add_test_case tls_proxy_protocol
	atf_add_test_case tls_idle_body_to_eof
	atf_add_test_case tls_ca_stall_plain_sessions
	atf_add_test_case tls_ca_burst_answers
	atf_add_test_case tls_queued_client_left
	atf_add_test_case tls_probe_no_backend
}
