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
	atf_check -s exit:1 -e match:"^usage: relayctl \[-s socket\] \[-t seconds\] command" \
	    "$RELAYCTL" -x
	atf_check -s exit:1 -e match:"^relayctl: timeout x: invalid\$" \
	    "$RELAYCTL" -t x status
}

atf_test_case no_answer cleanup
no_answer_head()
{
	atf_set descr "a relayd that stopped answering does not hold relayctl: -t seconds, 60 unless told; monitor waits"
	atf_set require.user root
	atf_set timeout 60
}
no_answer_body()
{
	require_daemon
	cat >relayd.conf <<CONF
prefork 1
socket "$PWD/relayd.sock"
relay r {
	listen on 127.0.0.1 port $(freeport)
	forward to 127.0.0.1 port 9
}
CONF
	PREFORK=1 start_relayd
	# pfe holds the control sockets: stopped, the kernel still takes
	# the connection, and nobody answers it
	pfe=$(pgrep -P "$(cat relayd.pid)" -f "relayd: pfe")
	[ -n "$pfe" ] || atf_fail "no pfe"
	echo "$pfe" >pfe.stopped
	kill -STOP "$pfe"
	t0=$(date +%s)
	atf_check -s exit:1 -o ignore \
	    -e inline:"relayctl: no answer from relayd in 2 s\n" \
	    "$RELAYCTL" -s relayd.sock -t 2 show summary
	atf_check -s exit:1 -e match:"no answer from relayd in 1 s" \
	    "$RELAYCTL" -s relayd.sock -t 1 reload
	t=$(($(date +%s) - t0))
	[ "$t" -le 6 ] || atf_fail "relayctl took ${t} s"
	# a monitor has nothing to say until something happens
	"$RELAYCTL" -s relayd.sock -t 1 monitor >monitor.out 2>&1 &
	mon=$!
	echo "$mon" >monitor.pid
	sleep 2
	kill -0 "$mon" || atf_fail "monitor gave up: $(cat monitor.out)"
	kill -CONT "$pfe"
	rm pfe.stopped
	atf_check -o match:"relay[[:space:]]+r[[:space:]]+active" \
	    "$RELAYCTL" -s relayd.sock -t 2 show summary
}
no_answer_cleanup()
{
	[ -f pfe.stopped ] && kill -CONT "$(cat pfe.stopped)"
	stop_all
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
	    -o match:"table webhosts:9: active, hosts 2/2 usable \(no check\)" \
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

atf_test_case client_not_reading cleanup
client_not_reading_head()
{
	atf_set descr "a control client that sends 42,000 requests and reads no answer is closed past the cap, logged; pfe does not grow; relayctl still answers"
	atf_set require.user root
	atf_set timeout 60
}
# pfe's resident memory, KiB
pfe_rss()
{
	for _c in $(pgrep -P "$(cat relayd.pid)"); do
		case $(tr '\0' '\n' <"/proc/$_c/cmdline" | head -1) in
		"relayd: pfe"*)
			rss_kib "$_c" ;;
		esac
	done
}
client_not_reading_body()
{
	setup_daemon
	before=$(pfe_rss)
	[ -n "$before" ] || atf_fail "no pfe"
	atf_check -o inline:"closed\n" \
	    "$TOP/regress/tools/ctlflood" relayd.sock -pipeline 42000
	# a request's answers are several messages, and what the socket took
	# is not counted: at least a cap waits when it closes (1024 messages
	# or 256 KiB)
	wait_log 10 "control: client of uid 0 does not read its answers ([0-9]* waiting, [0-9]* bytes), connection closed" ||
	    atf_fail "no log line"
	n=$(sed -n 's/.*does not read its answers (\([0-9]*\) waiting.*/\1/p' relayd.log)
	b=$(sed -n 's/.*does not read its answers ([0-9]* waiting, \([0-9]*\) bytes.*/\1/p' relayd.log)
	[ "$n" -ge 1024 ] || [ "$b" -ge 262144 ] ||
	    atf_fail "closed with $n answers, $b bytes waiting, under the caps"
	after=$(pfe_rss)
	echo "pfe: $before KiB before, $after KiB after" >&2
	[ "$after" -lt $((before + 16384)) ] ||
	    atf_fail "pfe grew from $before to $after KiB"
	atf_check -o inline:"1\n" grep -c "does not read its answers" relayd.log
	# one request at a time, each answer read: as many as one likes
	for i in $(seq 1 50); do
		"$RELAYCTL" -s relayd.sock show summary >/dev/null ||
		    atf_fail "relayctl failed at $i"
	done
	atf_check -o match:"www" "$RELAYCTL" -s relayd.sock show relays
}
client_not_reading_cleanup()
{
	stop_all
}

# relayd.conf with a control socket and a restricted one in a directory
# of its own ($rdir, removed at the cleanup): prefork $1, hosts $2.
restricted_conf()
{
	require_daemon
	command -v setpriv >/dev/null || atf_skip "no setpriv"
	rdir=$(mktemp -d /tmp/relayd-rsock.XXXXXX)
	echo "$rdir" >rdir
	chmod 755 "$rdir"
	port=$(freeport)
	cat >relayd.conf <<CONF
prefork $1
socket "$PWD/relayd.sock"
socket "$rdir/r.sock" restricted
table <webhosts> { $2 }
relay www {
	listen on 127.0.0.1 port $port
	forward to <webhosts> port 9
}
CONF
}

# Start ctlflood -clients on socket $1 ($2 clients, $3 requests each) as
# user $4 (or root), holding its clients open until hold_end; its line
# in flood.out.
hold_clients()
{
	rm -f hold
	mkfifo hold
	: >flood.out
	# shellcheck disable=SC2086
	$4 "$TOP/regress/tools/ctlflood" "$1" -clients "$2" "$3" <hold \
	    >flood.out 2>flood.err &
	echo $! >flood.pid
	exec 7>hold
	wait_for 30 test -s flood.out || atf_fail "ctlflood said nothing"
}
pfe_below()
{
	[ "$(pfe_rss)" -lt "$1" ]
}
hold_end()
{
	exec 7>&-
	wait_for 10 sh -c "! kill -0 $(cat flood.pid) 2>/dev/null" ||
	    atf_fail "ctlflood did not end"
}

atf_test_case control_clients_bounded cleanup
control_clients_bounded_head()
{
	atf_set descr "600 control clients that ask and do not read: 128 served, the rest refused and logged, pfe bounded and back near its base after they go; the restricted socket takes 16 of one user and cannot fill the control socket"
	atf_set require.user root
	atf_set timeout 120
}
control_clients_bounded_body()
{
	restricted_conf 2 "127.0.0.1, 127.0.0.2"
	PREFORK=2 start_relayd
	base=$(pfe_rss)
	[ -n "$base" ] || atf_fail "no pfe"
	# 20 status requests each, unread: some 6 MB of answers a client
	hold_clients relayd.sock 600 20
	atf_check -o inline:"open 128 closed 472\n" cat flood.out
	held=$(pfe_rss)
	echo "pfe: $base KiB, $held KiB with 128 clients holding" >&2
	[ "$held" -lt $((base + 98304)) ] ||
	    atf_fail "pfe grew from $base to $held KiB"
	wait_log 10 "control: connection of uid 0 refused: 128 clients already" ||
	    atf_fail "the refusal was not logged"
	# the restricted socket's clients have a count of their own
	atf_check -o match:"^relayd " setpriv --reuid=65534 --regid=65534 \
	    --clear-groups "$RELAYCTL" -s "$rdir/r.sock" status
	hold_end
	wait_for 10 pfe_below $((base + 8192)) ||
	    atf_fail "pfe kept $(pfe_rss) KiB after the clients left (base $base)"
	echo "pfe: $(pfe_rss) KiB after they left" >&2

	# one user on the restricted socket: 16 at once
	hold_clients "$rdir/r.sock" 40 1 \
	    "setpriv --reuid=65534 --regid=65534 --clear-groups"
	atf_check -o inline:"open 16 closed 24\n" cat flood.out
	wait_log 10 "control: connection of uid 65534 refused: 16 of its clients on the restricted socket already" ||
	    atf_fail "the refusal was not logged"
	# root on the control socket is not held up by them
	atf_check -o match:"www" "$RELAYCTL" -s relayd.sock show relays
	hold_end
}
control_clients_bounded_cleanup()
{
	[ -f flood.pid ] && kill "$(cat flood.pid)" 2>/dev/null
	stop_all
	[ -f rdir ] && rm -rf "$(cat rdir)"
	return 0
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

atf_test_case show_metrics cleanup
show_metrics_head()
{
	atf_set descr "show metrics: counters that match show relays and the log's byte lines to the byte, hosts and tables, after known traffic"
	atf_set require.user root
	atf_set timeout 60
}
show_metrics_body()
{
	require_daemon
	bport=$(start_backend echo echo)
	port=$(freeport)
	cat >relayd.conf <<CONF
prefork 2
interval 1
socket "$PWD/relayd.sock"
log connection
table <echo> { 127.0.0.1 }
table <none> { 127.0.0.2 }
relay echo {
	listen on 127.0.0.1 port $port
	forward to <echo> port $bport check tcp
}
relay down {
	listen on 127.0.0.1 port $(freeport)
	forward to <none> port 9 check tcp
}
CONF
	PREFORK=2 start_relayd
	wait_log 10 "host 127.0.0.1, check tcp.*state unknown -> up" ||
	    atf_fail "the backend is not up"
	for n in 1 1000 70000; do
		head -c "$n" /dev/zero >data
		socat -t 5 - "TCP:127.0.0.1:$port" <data >back ||
		    atf_fail "no relaying"
		[ "$(wc -c <back)" -eq "$n" ] || atf_fail "$(wc -c <back) of $n bytes back"
	done
	wait_for 10 sh -c "[ \$(grep -c '^relay echo, session [0-9]*, bytes ' relayd.log) -ge 3 ]" ||
	    atf_fail "no byte lines: $(cat relayd.log)"
	in=$(sed -n 's/^relay echo, session [0-9]*, bytes in \([0-9]*\) .*/\1/p' relayd.log | awk '{ s += $1 } END { print s }')
	out=$(sed -n 's/^relay echo, session [0-9]*, bytes in .*, out \([0-9]*\) .*/\1/p' relayd.log | awk '{ s += $1 } END { print s }')
	[ "$in" -eq 71001 ] && [ "$out" -eq 71001 ] ||
	    atf_fail "the log says in $in, out $out"
	# the statistics reach pfe every second
	wait_for 5 sh -c "'$RELAYCTL' -s '$PWD/relayd.sock' show metrics | grep -q '^relayd_relay_sessions_total{relay=\"echo\"} 3\$'" ||
	    atf_fail "not 3 sessions: $("$RELAYCTL" -s relayd.sock show metrics)"
	"$RELAYCTL" -s relayd.sock show metrics >metrics
	for d in in out; do
		n=$(awk -v d="$d" -F'[{}]' '$1 == "relayd_relay_bytes_total" &&
		    $2 ~ /relay="echo"/ && $2 ~ "direction=\"" d "\"" {
			split($3, v, " "); s += v[1] } END { print s }' metrics)
		[ "$n" -eq 71001 ] || atf_fail "metrics: $d $n bytes"
	done
	atf_check -o match:"total: 3 sessions" \
	    -o match:"bytes: in 71001 \(spliced [0-9]+, copied [0-9]+\), out 71001 " \
	    "$RELAYCTL" -s relayd.sock show relays
	atf_check -o match:'^relayd_relay_session_ends_total\{relay="echo",end="ok"\} 3$' \
	    -o match:'^relayd_relay_sessions_active\{relay="echo"\} 0$' \
	    -o match:'^relayd_relay_connect_failures_total\{relay="echo"\} 0$' \
	    -o match:'^relayd_host_up\{table="echo:[0-9]+",host="127\.0\.0\.1"\} 1$' \
	    -o match:'^relayd_table_hosts_up\{table="echo:[0-9]+"\} 1$' \
	    -o match:'^relayd_host_up\{table="none:9",host="127\.0\.0\.2"\} 0$' \
	    -o match:'^relayd_build_info\{version="[0-9.]+",splice_engine="pipe"\} 1$' \
	    -o match:'^# EOF$' cat metrics
	atf_check -o match:'^relayd_config_generation 1$' \
	    -o match:'^relayd_reloads_total 0$' \
	    -o match:'^relayd_host_check_duration_seconds\{table="echo:[0-9]+",host="127\.0\.0\.1"\} 0\.[0-9]{6}$' \
	    cat metrics
	atf_check "$RELAYCTL" -s relayd.sock reload
	wait_for 10 sh -c "'$RELAYCTL' -s '$PWD/relayd.sock' show metrics | grep -q '^relayd_reloads_total 1\$'" ||
	    atf_fail "the reload is not counted"
	# every sample has its family's TYPE and HELP before it (a
	# summary's _sum and _count, the summary's)
	atf_check -o inline:"" awk '/^# TYPE / { t[$3] = $4 } /^# HELP / { h[$3] = 1 }
	    /^[a-z]/ { n = $1; sub(/[{ ].*/, "", n); b = n
		if (sub(/_(sum|count)$/, "", b) && t[b] == "summary") n = b
		if (!(n in t) || !(n in h)) print "no TYPE or HELP: " n }' metrics
}
show_metrics_cleanup()
{
	stop_all
}

atf_test_case show_metrics_promtool cleanup
show_metrics_promtool_head()
{
	atf_set descr "show metrics passes promtool check metrics"
	atf_set require.user root
	atf_set timeout 30
}
show_metrics_promtool_body()
{
	_promtool=$(command -v promtool || echo "$TOP/regress/tools/bin/promtool")
	[ -x "$_promtool" ] ||
	    atf_skip "no promtool (make test-tools takes it out of Debian's prometheus package)"
	setup_daemon
	"$RELAYCTL" -s relayd.sock show metrics >metrics ||
	    atf_fail "show metrics failed"
	atf_check -o empty -e empty "$_promtool" check metrics <metrics
}
show_metrics_promtool_cleanup()
{
	stop_all
}

atf_test_case metrics_listener cleanup
metrics_listener_head()
{
	atf_set descr "metrics listen on: GET /metrics answers what show metrics prints, anything else 404 or 405; 4 scrapes at once at most; scrapes while 1 GiB is relayed do not stall it"
	atf_set require.user root
	atf_set timeout 120
}
metrics_listener_body()
{
	require_daemon
	command -v curl >/dev/null 2>&1 || atf_skip "no curl (make deps installs it)"
	bport=$(start_backend echo echo)
	port=$(freeport)
	mport=$(freeport)
	cat >relayd.conf <<CONF
prefork 2
socket "$PWD/relayd.sock"
metrics listen on 127.0.0.1 port $mport
table <echo> { 127.0.0.1 }
relay echo {
	listen on 127.0.0.1 port $port
	forward to <echo> port $bport
}
CONF
	PREFORK=2 start_relayd
	atf_check -o match:"^metrics listen on 127\.0\.0\.1 port $mport\$" \
	    -e ignore "$RELAYD" -nv -f relayd.conf
	curl -s -D head -o body "http://127.0.0.1:$mport/metrics" ||
	    atf_fail "no answer"
	atf_check -o match:"^HTTP/1.1 200 OK" \
	    -o match:"^Content-Type: text/plain; version=0.0.4" cat head
	# the same series as relayctl show metrics (the values move)
	"$RELAYCTL" -s relayd.sock show metrics | sed 's/ [0-9]*$//' >ctl.series
	sed 's/ [0-9]*$//' body >http.series
	atf_check -o empty diff ctl.series http.series
	atf_check -o match:"^404\$" curl -s -o /dev/null -w "%{http_code}\n" \
	    "http://127.0.0.1:$mport/"
	atf_check -o match:"^405\$" curl -s -o /dev/null -w "%{http_code}\n" \
	    -X POST "http://127.0.0.1:$mport/metrics"
	# four idle connections: a fifth is closed at once, and after their
	# timeout (5 s) scrapes work again
	"$RTOOL" hold "$mport" 4 7 >hold.out 2>&1 &
	echo $! >hold.pid
	sleep 1
	atf_check -s not-exit:0 -o ignore -e ignore curl -s -m 3 \
	    "http://127.0.0.1:$mport/metrics"
	wait_log 5 "metrics: 4 scrapes at once already" ||
	    atf_fail "no log of the refusal"
	wait_for 10 curl -s -f -o /dev/null "http://127.0.0.1:$mport/metrics" ||
	    atf_fail "the listener does not recover"
	# relaying goes on while scrapes come
	"$RTOOL" client "$port" 2 536870912 60 >client.out 2>&1 &
	cpid=$!
	n=0
	while kill -0 "$cpid" 2>/dev/null && [ "$n" -lt 200 ]; do
		curl -s -f -o /dev/null "http://127.0.0.1:$mport/metrics" ||
		    atf_fail "a scrape failed under load"
		n=$((n + 1))
	done
	wait "$cpid" || atf_fail "relaying under scrapes: $(cat client.out)"
	atf_check -o match:"^ok 2 streams 1073741824 bytes" cat client.out
}
metrics_listener_cleanup()
{
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

atf_test_case restricted_socket cleanup
restricted_socket_head()
{
	atf_set descr "socket restricted: any user may show, status, show metrics, show sessions, show overload and monitor on it, and change nothing (overload delete and flush included); the control socket still refuses them"
	atf_set require.user root
	atf_set timeout 60
}
restricted_socket_body()
{
	restricted_conf 1 "127.0.0.1"
	atf_check -e ignore -o match:"^socket \"$rdir/r.sock\" restricted$" \
	    "$RELAYD" -nv -f relayd.conf
	PREFORK=1 start_relayd
	atf_check -o inline:"srw-rw-rw-\n" stat -c %A "$rdir/r.sock"
	as_nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
	atf_check -o match:"^relayd " $as_nobody "$RELAYCTL" -s "$rdir/r.sock" \
	    status
	atf_check -o match:"relay[[:space:]]+www[[:space:]]+active" $as_nobody "$RELAYCTL" \
	    -s "$rdir/r.sock" show relays
	atf_check -o match:"^relayd_relay_sessions_total\{relay=\"www\"\} 0$" \
	    $as_nobody "$RELAYCTL" -s "$rdir/r.sock" show metrics
	atf_check -o ignore $as_nobody "$RELAYCTL" -s "$rdir/r.sock" \
	    show sessions
	atf_check -o empty $as_nobody "$RELAYCTL" -s "$rdir/r.sock" \
	    show overload
	# what would change anything fails, says why, and nothing changes
	for verb in "table disable webhosts" "table enable webhosts" \
	    "host disable 127.0.0.1" "host enable 127.0.0.1" \
	    "redirect disable 1" "poll" "stop" "reload" \
	    "load $PWD/relayd.conf" "log verbose" "log brief" \
	    "overload flush bad" "overload delete bad 127.0.0.2"; do
		# shellcheck disable=SC2086
		atf_check -s exit:1 -e inline:"not permitted on this socket\n" \
		    $as_nobody "$RELAYCTL" -s "$rdir/r.sock" $verb
	done
	# twice more: still one line a minute for each kind of request
	for i in 1 2; do
		atf_check -s exit:1 -e ignore $as_nobody "$RELAYCTL" \
		    -s "$rdir/r.sock" table disable webhosts
	done
	for t in ctl_table_disable ctl_table_enable ctl_host_disable \
	    ctl_host_enable ctl_rdr_disable ctl_poll ctl_shutdown \
	    ctl_reload ctl_verbose; do
		wait_log 10 "control: $t from uid 65534 refused on the restricted socket" ||
		    atf_fail "the refusal of $t was not logged"
	done
	[ "$(grep -c 'control: ctl_table_disable from uid 65534 refused' \
	    relayd.log)" -eq 1 ] || atf_fail "more than a line a minute"
	[ "$(grep -c 'control: ctl_reload from uid 65534 refused' \
	    relayd.log)" -eq 1 ] || atf_fail "reload and load: one kind"
	# on the control socket, log waits for relayd's answer
	atf_check -o inline:"logging request sent.\n" "$RELAYCTL" \
	    -s relayd.sock log brief
	atf_check -o match:"table[[:space:]]+webhosts:9[[:space:]]+active" \
	    "$RELAYCTL" -s relayd.sock show summary
	kill -0 "$(cat relayd.pid)" || atf_fail "relayd stopped"
	# the control socket is not anyone's
	atf_check -s not-exit:0 -o ignore -e ignore $as_nobody "$RELAYCTL" \
	    -s "$PWD/relayd.sock" status
	# both go at the end
	kill "$(cat relayd.pid)"
	wait_for 10 sh -c "! kill -0 $(cat relayd.pid)" || atf_fail "no stop"
	atf_check test ! -e "$rdir/r.sock"
}
restricted_socket_cleanup()
{
	stop_all
	[ -f rdir ] && rm -rf "$(cat rdir)"
	return 0
}

atf_init_test_cases()
{
	atf_add_test_case restricted_socket
	atf_add_test_case not_running
	atf_add_test_case parser_errors
	atf_add_test_case no_answer
	atf_add_test_case show_summary
	atf_add_test_case show_hosts_and_relays
	atf_add_test_case status
	atf_add_test_case log_verbose_brief
	atf_add_test_case monitor
	atf_add_test_case monitor_not_reading
	atf_add_test_case client_not_reading
	atf_add_test_case control_clients_bounded
	atf_add_test_case show_metrics
	atf_add_test_case show_metrics_promtool
	atf_add_test_case metrics_listener
	atf_add_test_case socket_mode
	atf_add_test_case malformed_requests
}
