#! /usr/bin/env atf-sh
# Unix-domain sockets, ours: relays listening on and forwarding to socket
# paths, tables of paths with check tcp, the listener's owner, group and
# mode, and the socket files' lifetime.  The peers are rtool with
# RTOOL_UNIX, socat and pptool.py.

. "$(atf_get_srcdir)/../lib.sh"

PREFORK=1

require_unix()
{
	require_daemon
	command -v socat >/dev/null || atf_skip "no socat (make deps installs it)"
}

# unix_conf RELAY LINES...: one relay process, the lines in relay "u"
unix_conf()
{
	{
		echo "prefork 1"
		echo "socket \"$PWD/relayd.sock\""
		echo "log connection"
		echo "relay u {"
		for _l in "$@"; do
			printf '\t%s\n' "$_l"
		done
		echo "}"
	} >relayd.conf
}

# The byte line of relay u's session that moved $1 bytes each way.
want_bytes()
{
	wait_for 10 grep -q "^relay u, session [0-9]*, bytes in $1 (spliced $1, copied 0), out $1 (spliced $1, copied 0)\$" relayd.log ||
	    atf_fail "no session moved $1 bytes each way through the splice engine"
}

atf_test_case unix_both_sides cleanup
unix_both_sides_head()
{
	atf_set descr "listen on and forward to unix sockets: 1 GiB each way arrives intact, spliced"
	atf_set require.user root
	atf_set timeout 120
}
unix_both_sides_body()
{
	require_unix
	RTOOL_UNIX=$PWD/back.sock start_backend echo echo >/dev/null
	unix_conf "listen on \"$PWD/relay.sock\"" \
	    "forward to \"$PWD/back.sock\""
	start_relayd
	atf_check -o match:"^ok 1 streams 1073741824 bytes" \
	    env RTOOL_UNIX="$PWD/relay.sock" "$RTOOL" client 0 1 1073741824 100
	want_bytes 1073741824
	wait_log 10 "^relay u, session [0-9]* (.*), 0, unix: -> $PWD/back\.sock:0, done\$" ||
	    atf_fail "no end line from unix: to the backend's path"
}
unix_both_sides_cleanup()
{
	stop_all
}

atf_test_case unix_tcp_mixed cleanup
unix_tcp_mixed_head()
{
	atf_set descr "TCP to a unix backend and a unix listener to a TCP backend: 64 MiB each way intact, spliced"
	atf_set require.user root
	atf_set timeout 60
}
unix_tcp_mixed_body()
{
	require_unix
	RTOOL_UNIX=$PWD/back.sock start_backend echo echo >/dev/null
	lport=$(freeport)
	unix_conf "listen on 127.0.0.1 port $lport" \
	    "forward to \"$PWD/back.sock\""
	start_relayd
	atf_check -o match:"^ok 1 streams 67108864 bytes" \
	    "$RTOOL" client "$lport" 1 67108864 60
	want_bytes 67108864
	stop_all
	rm -f relayd.log
	bport=$(start_backend echo2 echo)
	unix_conf "listen on \"$PWD/relay.sock\"" \
	    "forward to 127.0.0.1 port $bport"
	start_relayd
	atf_check -o match:"^ok 1 streams 67108864 bytes" \
	    env RTOOL_UNIX="$PWD/relay.sock" "$RTOOL" client 0 1 67108864 60
	want_bytes 67108864
}
unix_tcp_mixed_cleanup()
{
	stop_all
}

atf_test_case unix_table_check cleanup
unix_table_check_head()
{
	atf_set descr "a table of socket paths with check tcp: a missing socket is down, sessions go to the one up, a new socket comes up"
	atf_set require.user root
	atf_set timeout 60
}
unix_table_check_body()
{
	require_unix
	RTOOL_UNIX=$PWD/a.sock "$RTOOL" ident 0 0 A 60 >a.out 2>&1 &
	echo $! >a.pid
	lport=$(freeport)
	cat >relayd.conf <<CONF
prefork 1
interval 1
socket "$PWD/relayd.sock"
log connection
table <apps> { "$PWD/a.sock" "$PWD/b.sock" }
relay u {
	listen on 127.0.0.1 port $lport
	forward to <apps> check tcp
}
CONF
	wait_for 10 test -S a.sock || atf_fail "backend a did not start"
	start_relayd
	wait_log 10 "^host $PWD/b\.sock, check tcp .*, state unknown -> down" ||
	    atf_fail "b.sock is not down"
	wait_log 10 "^host $PWD/a\.sock, check tcp .*, state unknown -> up" ||
	    atf_fail "a.sock is not up"
	for i in 1 2 3; do
		atf_check -o inline:"A\n" "$RTOOL" get "$lport"
	done
	RTOOL_UNIX=$PWD/b.sock "$RTOOL" ident 0 0 B 60 >b.out 2>&1 &
	echo $! >b.pid
	wait_log 10 "^host $PWD/b\.sock, check tcp .*, state down -> up" ||
	    atf_fail "b.sock did not come up"
	for i in 1 2 3 4; do
		"$RTOOL" get "$lport"
	done | sort | uniq -c | awk '{print $2, $1}' >got
	atf_check -o inline:"A 2\nB 2\n" cat got
}
unix_table_check_cleanup()
{
	stop_all
}

atf_test_case unix_listener_file cleanup
unix_listener_file_head()
{
	atf_set descr "a unix listener's owner, group and mode; a stale socket file replaced, a busy one or a plain file refused; the file goes at reload and stop"
	atf_set require.user root
	atf_set timeout 60
}
unix_listener_file_body()
{
	require_unix
	bport=$(start_backend echo echo)
	# a stale socket: nobody listens on it
	python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$PWD/relay.sock"
	test -S relay.sock || atf_fail "no stale socket"
	unix_conf "listen on \"$PWD/relay.sock\" owner nobody group 65534 mode 0640" \
	    "forward to 127.0.0.1 port $bport"
	start_relayd
	atf_check -o inline:"nobody 65534 640 socket\n" \
	    stat -c "%U %g %a %F" relay.sock
	atf_check -o inline:"hi\n" sh -c "echo hi | socat - UNIX-CONNECT:$PWD/relay.sock"
	# relayctl shows a unix session's ends without ports
	(sleep 5 | socat - UNIX-CONNECT:"$PWD/relay.sock" >/dev/null 2>&1 &)
	wait_for 5 sh -c "'$RELAYCTL' -s relayd.sock show sessions | grep -q RUNNING" ||
	    atf_fail "no running session"
	atf_check -o match:"^session [0-9]+:[0-9]+ unix: -> 127\.0\.0\.1:$bport	RUNNING\$" \
	    "$RELAYCTL" -s relayd.sock show sessions
	# a second daemon finds it busy
	sed "s|relayd.sock\"|relayd2.sock\"|" relayd.conf >relayd2.conf
	atf_check -s exit:1 -e match:"cannot listen on $PWD/relay\.sock: Address already in use" \
	    "$RELAYD" -d -f relayd2.conf
	# the mode changes with a reload
	sed -i "s/mode 0640/mode 0660/" relayd.conf
	atf_check -o ignore "$RELAYCTL" -s relayd.sock reload
	atf_check -o inline:"660\n" stat -c "%a" relay.sock
	# a reload without the listener removes its file
	unix_conf "listen on 127.0.0.1 port $(freeport)" \
	    "forward to 127.0.0.1 port $bport"
	atf_check -o ignore "$RELAYCTL" -s relayd.sock reload
	wait_for 10 test ! -e relay.sock || atf_fail "relay.sock stays after the reload"
	unix_conf "listen on \"$PWD/relay.sock\"" \
	    "forward to 127.0.0.1 port $bport"
	atf_check -o ignore "$RELAYCTL" -s relayd.sock reload
	wait_for 10 test -S relay.sock || atf_fail "no relay.sock after the reload"
	atf_check -o inline:"666\n" stat -c "%a" relay.sock
	stop_all
	test ! -e relay.sock || atf_fail "relay.sock stays after the stop"
	# a plain file is not replaced
	echo data >relay.sock
	atf_check -s exit:1 -e match:"cannot listen on $PWD/relay\.sock: not a socket" \
	    "$RELAYD" -d -f relayd.conf
	atf_check -o inline:"data\n" cat relay.sock
}
unix_listener_file_cleanup()
{
	stop_all
}

atf_test_case unix_proxy_protocol cleanup
unix_proxy_protocol_head()
{
	atf_set descr "a unix-socket client behind proxy-protocol v1 and v2: UNKNOWN and UNSPEC, as the protocol says; a unix listener with proxy-protocol reads its peers' headers"
	atf_set require.user root
	atf_set timeout 60
}
unix_proxy_protocol_body()
{
	require_unix
	python3 "$TOP/regress/tools/pptool.py" server "$PWD/pp.port" 60 >pp.out 2>&1 &
	echo $! >pp.pid
	wait_for 10 test -s pp.port || atf_fail "no header backend"
	bport=$(cat pp.port)
	cat >relayd.conf <<CONF
prefork 1
socket "$PWD/relayd.sock"
log connection
relay one {
	listen on "$PWD/one.sock"
	forward to 127.0.0.1 port $bport proxy-protocol v1
}
relay two {
	listen on "$PWD/two.sock"
	forward to 127.0.0.1 port $bport proxy-protocol v2
}
relay lb {
	listen on "$PWD/lb.sock" proxy-protocol
	forward to 127.0.0.1 port $bport proxy-protocol v2
}
CONF
	RELAYS=3 start_relayd
	for n in one two; do
		atf_check -o inline:"hi\n" sh -c "echo hi | socat - UNIX-CONNECT:$PWD/$n.sock"
	done
	# a balancer on the same host, through the socket: its header counts
	atf_check -o inline:"hello\n" python3 "$TOP/regress/tools/pptool.py" \
	    client "$PWD/lb.sock" 0 v1:192.0.2.9:1111:198.51.100.1:80
	wait_for 10 sh -c "test \$(wc -l <pp.port.headers) -ge 3" ||
	    atf_fail "the backend saw no headers"
	atf_check -o inline:"v1 UNKNOWN\nv2 TCP4 192.0.2.9 198.51.100.1 1111 80\nv2 UNSPEC\n" \
	    sh -c "sort pp.port.headers"
}
unix_proxy_protocol_cleanup()
{
	stop_all
}

atf_init_test_cases()
{
	atf_add_test_case unix_both_sides
	atf_add_test_case unix_tcp_mixed
	atf_add_test_case unix_table_check
	atf_add_test_case unix_listener_file
	atf_add_test_case unix_proxy_protocol
}
