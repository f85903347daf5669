#! /usr/bin/env atf-sh
# relayctl against the real daemon: parser, output layouts, the socket.

. "$(atf_get_srcdir)/../lib.sh"

setup_daemon()
{
	require_daemon
	port=$(freeport)
	cat >relayd.conf <<CONF
prefork 2
socket "$PWD/relayd.sock"
table <webhosts> { 127.0.0.1, 127.0.0.2 }
relay www {
	listen on 127.0.0.1 port $port
	forward to <webhosts> port 9
}
CONF
	PREFORK=2 start_relayd
}

atf_test_case not_running
not_running_head()
{
	atf_set descr "relayctl without a daemon says so and exits 1"
	atf_set timeout 10
}
not_running_body()
{
	atf_check -s exit:1 -e match:"connect: $PWD/none.sock.*is relayd running" \
	    "$RELAYCTL" -s "$PWD/none.sock" show summary
}

atf_test_case parser_errors
parser_errors_head()
{
	atf_set descr "unknown, ambiguous and missing arguments"
	atf_set timeout 10
}
parser_errors_body()
{
	atf_check -s exit:1 -e match:"^unknown argument: frobnicate" \
	    -e match:"^valid commands/args:" -e match:"^  show\$" \
	    "$RELAYCTL" frobnicate
	atf_check -s exit:1 -e match:"^ambiguous argument: s\$" "$RELAYCTL" s
	atf_check -s exit:1 -e match:"^missing argument:" "$RELAYCTL" host disable
	atf_check -s exit:1 -e match:"^superfluous argument: extra" \
	    "$RELAYCTL" reload extra
	atf_check -s exit:1 -e match:"^usage: relayctl \[-s socket\] command" \
	    "$RELAYCTL" -x
}

atf_test_case show_summary cleanup
show_summary_head()
{
	atf_set descr "show summary in OpenBSD's layout, and by unique prefixes"
	atf_set require.user root
	atf_set timeout 30
}
show_summary_body()
{
	setup_daemon
	printf 'Id  \tType    \tName                    \tAvlblty\tStatus\n' >expout
	printf '1   \trelay   \twww                     \t       \tactive\n' >>expout
	printf '1   \ttable   \twebhosts:9              \t       \tactive (no check)\n' >>expout
	printf '1   \thost    \t127.0.0.1               \t       \tunknown\n' >>expout
	printf '2   \thost    \t127.0.0.2               \t       \tunknown\n' >>expout
	atf_check -o file:expout "$RELAYCTL" -s relayd.sock show summary
	atf_check -o file:expout "$RELAYCTL" -s relayd.sock sh su
	atf_check -o file:expout "$RELAYCTL" -s relayd.sock show
}
show_summary_cleanup()
{
	stop_all
}

atf_test_case show_hosts_and_relays cleanup
show_hosts_and_relays_head()
{
	atf_set descr "show hosts lists tables and hosts, show relays only relays"
	atf_set require.user root
	atf_set timeout 30
}
show_hosts_and_relays_body()
{
	setup_daemon
	atf_check -o match:"table" -o match:"host" -o not-match:"relay" \
	    "$RELAYCTL" -s relayd.sock show hosts
	atf_check -o match:"relay" -o not-match:"table" -o not-match:"host" \
	    "$RELAYCTL" -s relayd.sock show relays
	atf_check -o inline:"Id  \tType    \tName                    \tAvlblty\tStatus\n" \
	    "$RELAYCTL" -s relayd.sock show redirects
}
show_hosts_and_relays_cleanup()
{
	stop_all
}

atf_test_case status cleanup
status_head()
{
	atf_set descr "status shows version, pid, engine, processes and relays"
	atf_set require.user root
	atf_set timeout 30
}
status_body()
{
	setup_daemon
	pid=$(cat relayd.pid)
	atf_check -o match:"^relayd [0-9.]+, pid $pid, up 0d 00:00:" \
	    -o match:"^splice engine: pipe\$" \
	    -o match:"^relays: 1, tables: 1, hosts: 2\$" \
	    -o match:"^processes: parent $pid, pfe [0-9]+, hce [0-9]+, relay [0-9]+ [0-9]+, ca [0-9]+ [0-9]+\$" \
	    -o match:"^relay www: active, sessions: 0 active, 0 total\$" \
	    -o match:"table webhosts:9: active, hosts 0/2 up \(no check\)" \
	    "$RELAYCTL" -s relayd.sock status
}
status_cleanup()
{
	stop_all
}

atf_test_case log_verbose_brief cleanup
log_verbose_brief_head()
{
	atf_set descr "log verbose and log brief are sent and taken"
	atf_set require.user root
	atf_set timeout 30
}
log_verbose_brief_body()
{
	setup_daemon
	atf_check -o inline:"logging request sent.\n" \
	    "$RELAYCTL" -s relayd.sock log brief
	atf_check -o inline:"logging request sent.\n" \
	    "$RELAYCTL" -s relayd.sock log verbose
}
log_verbose_brief_cleanup()
{
	stop_all
}

atf_test_case monitor cleanup
monitor_head()
{
	atf_set descr "monitor stays connected until killed, and ends with the daemon"
	atf_set require.user root
	atf_set timeout 30
}
monitor_body()
{
	setup_daemon
	"$RELAYCTL" -s relayd.sock monitor >monitor.out 2>&1 &
	mpid=$!
	echo "$mpid" >monitor.pid
	# the monitor is a connection like any other: the daemon still answers
	atf_check -o match:"www" "$RELAYCTL" -s relayd.sock show relays
	atf_check kill -0 "$mpid"
	kill -TERM "$(cat relayd.pid)"
	wait "$(cat relayd.pid)"
	rm -f relayd.pid
	wait "$mpid"
	atf_check_equal 1 $?
	rm -f monitor.pid
	atf_check -o match:"pipe closed" cat monitor.out
}
monitor_cleanup()
{
	stop_all
}

atf_test_case monitor_not_reading cleanup
monitor_not_reading_head()
{
	atf_set descr "a monitor that never reads is dropped past the cap; one that reads is not"
	atf_set require.user root
	atf_set timeout 60
}
monitor_not_reading_body()
{
	setup_daemon
	# 3000 pairs: 6000 events, past what a socket holds and the cap
	atf_check -o match:"^closed [0-9]+\$" \
	    "$TOP/regress/tools/ctlflood" relayd.sock 127.0.0.1 3000
	wait_log 10 "control: monitor of uid 0 does not read (1024 events waiting), connection closed" ||
	    atf_fail "no log line"
	# a monitor that reads keeps up with the same flood
	"$RELAYCTL" -s relayd.sock monitor >monitor.out 2>&1 &
	echo $! >monitor.pid
	atf_check -o match:"^closed [0-9]+\$" \
	    "$TOP/regress/tools/ctlflood" relayd.sock 127.0.0.1 3000
	atf_check kill -0 "$(cat monitor.pid)"
	atf_check -o inline:"2\n" grep -c "does not read" relayd.log
	# the daemon still answers, and pfe did not grow without bound
	atf_check -o match:"www" "$RELAYCTL" -s relayd.sock show relays
}
monitor_not_reading_cleanup()
{
	[ -f monitor.pid ] && kill "$(cat monitor.pid)" 2>/dev/null
	stop_all
}

atf_test_case socket_mode cleanup
socket_mode_head()
{
	atf_set descr "the control socket is 0660 root and refuses other users"
	atf_set require.user root
	atf_set timeout 30
}
socket_mode_body()
{
	setup_daemon
	atf_check -o inline:"660 root\n" stat -c '%a %U' relayd.sock
	chmod 755 .
	atf_check -s exit:1 -e match:"Permission denied" \
	    setpriv --reuid=nobody --regid=nogroup --clear-groups \
	    "$RELAYCTL" -s "$PWD/relayd.sock" show summary
}
socket_mode_cleanup()
{
	stop_all
}

atf_test_case malformed_requests cleanup
malformed_requests_head()
{
	atf_set descr "bad frames on the control socket: peer dropped with a log line"
	atf_set require.user root
	atf_set timeout 60
}
malformed_requests_body()
{
	setup_daemon
	# short, oversized, unknown type, internal type, bad flags, bad size
	for frame in "14 8" "14 20000" "9999 16" "5 16" "14 16 128" "4 16"; do
		# shellcheck disable=SC2086
		atf_check -o inline:"closed\n" "$RTOOL" ctlsend relayd.sock $frame
	done
	atf_check -o match:"control: malformed message from uid 0, connection closed" \
	    cat relayd.log
	atf_check -o match:"control: invalid request from uid 0, connection closed" \
	    cat relayd.log
	# nothing crashed: every process is still there and answers
	atf_check -o inline:"6\n" -x "pgrep -P $(cat relayd.pid) | wc -l"
	atf_check -o match:"www" "$RELAYCTL" -s relayd.sock show relays
}
malformed_requests_cleanup()
{
	stop_all
}

atf_init_test_cases()
{
	atf_add_test_case not_running
	atf_add_test_case parser_errors
	atf_add_test_case show_summary
	atf_add_test_case show_hosts_and_relays
	atf_add_test_case status
	atf_add_test_case log_verbose_brief
	atf_add_test_case monitor
	atf_add_test_case monitor_not_reading
	atf_add_test_case socket_mode
	atf_add_test_case malformed_requests
}
