#! /usr/bin/env atf-sh
# The daemon as a whole: processes, privileges, signals, reload.

. "$(atf_get_srcdir)/../lib.sh"

write_conf()
{
	_port=$(freeport)
	cat >relayd.conf <<CONF
prefork 3
socket "$PWD/relayd.sock"
log connection
table <back> { 127.0.0.1 }
relay test {
	listen on 127.0.0.1 port $_port
	forward to <back> port ${1:-9}
}
CONF
	echo "$_port" >relay.port
}

# The daemon $1 exits 1 after losing a child (pid $3) to signal $2.
expect_lost_child()
{
	wait "$1"
	_rc=$?
	rm -f relayd.pid
	atf_check_equal 1 "$_rc"
	atf_check -o match:"lost child: pid ${3:-[0-9]+} terminated; signal $2" cat relayd.log
	atf_check -o match:"parent terminating" cat relayd.log
}

atf_test_case process_tree cleanup
process_tree_head()
{
	atf_set descr "pfe, hce, 3 relay and 3 ca processes run as _relayd with their titles"
	atf_set require.user root
	atf_set timeout 30
}
process_tree_body()
{
	require_daemon
	write_conf
	start_relayd
	children "$(cat relayd.pid)" >tree
	atf_check -o inline:"1\n" -x "grep -c ' _relayd relayd: pfe\$' tree"
	atf_check -o inline:"1\n" -x "grep -c ' _relayd relayd: hce\$' tree"
	atf_check -o inline:"3\n" -x "grep -c ' _relayd relayd: relay\$' tree"
	atf_check -o inline:"3\n" -x "grep -c ' _relayd relayd: ca\$' tree"
	atf_check -o inline:"8\n" -x "wc -l <tree | tr -d ' '"
}
process_tree_cleanup()
{
	stop_all
}

atf_test_case children_chrooted cleanup
children_chrooted_head()
{
	atf_set descr "every child is chrooted, has no privileges and cannot regain them"
	atf_set require.user root
	atf_set timeout 30
}
children_chrooted_body()
{
	require_daemon
	write_conf
	start_relayd
	home=$(getent passwd _relayd | cut -d: -f6)
	uid=$(id -u _relayd)
	for c in $(pgrep -P "$(cat relayd.pid)"); do
		atf_check -o inline:"$(readlink -f "$home")\n" readlink "/proc/$c/root"
		atf_check -o match:"^Uid:[[:space:]]+$uid[[:space:]]+$uid[[:space:]]+$uid[[:space:]]+$uid\$" \
		    grep '^Uid:' "/proc/$c/status"
		atf_check -o match:"^NoNewPrivs:[[:space:]]+1\$" \
		    grep '^NoNewPrivs:' "/proc/$c/status"
		atf_check -o match:"^Groups:[[:space:]]+$(id -g _relayd)[[:space:]]*\$" \
		    grep '^Groups:' "/proc/$c/status"
	done
}
children_chrooted_cleanup()
{
	stop_all
}

atf_test_case no_handle_outside_chroot cleanup
no_handle_outside_chroot_head()
{
	atf_set descr "no child holds a descriptor to anything outside its chroot"
	atf_set require.user root
	atf_set timeout 30
}
no_handle_outside_chroot_body()
{
	require_daemon
	write_conf
	start_relayd
	home=$(readlink -f "$(getent passwd _relayd | cut -d: -f6)")
	n=0
	for c in $(pgrep -P "$(cat relayd.pid)"); do
		for f in /proc/"$c"/fd/*; do
			t=$(readlink "$f") || continue
			n=$((n + 1))
			case $t in
			socket:*|pipe:*|anon_inode:*|/dev/null)
				continue ;;
			"$home"|"$home"/*)
				# inside: ".." stops at the child's root
				continue ;;
			/*)
				# relayd -d: stdio goes where the test sent it
				case ${f##*/} in
				0|1|2) [ -d "$f" ] || continue ;;
				esac
				atf_fail "child $c ($(tr '\0' ' ' </proc/$c/cmdline)) holds fd ${f##*/} -> $t"
				;;
			*)
				atf_fail "child $c ($(tr '\0' ' ' </proc/$c/cmdline)) holds fd ${f##*/} -> $t"
				;;
			esac
		done
	done
	[ "$n" -gt 0 ] || atf_fail "no descriptors seen"
}
no_handle_outside_chroot_cleanup()
{
	stop_all
}

atf_test_case launcher_fds_closed cleanup
launcher_fds_closed_head()
{
	atf_set descr "descriptors the launcher left open reach neither the parent nor a child"
	atf_set require.user root
	atf_set timeout 30
}
launcher_fds_closed_body()
{
	require_daemon
	write_conf
	echo secret >secret
	# as "exec 8</etc/shadow" in the shell that starts relayd would
	"$RELAYD" -dv -f relayd.conf 8<secret 9<secret 2>relayd.log &
	echo $! >relayd.pid
	wait_started
	for p in "$(cat relayd.pid)" $(pgrep -P "$(cat relayd.pid)"); do
		for f in /proc/"$p"/fd/*; do
			case $(readlink "$f") in
			"$PWD/secret")
				atf_fail "process $p holds fd ${f##*/} of the launcher" ;;
			esac
		done
	done
}
launcher_fds_closed_cleanup()
{
	stop_all
}

atf_test_case children_sandboxed cleanup
children_sandboxed_head()
{
	atf_set descr "every child runs under its seccomp filter"
	atf_set require.user root
	atf_set timeout 30
}
children_sandboxed_body()
{
	require_daemon
	[ "$(uname -s)" = Linux ] || atf_skip "seccomp is Linux's"
	write_conf
	# the test build's way out of the filter is not the daemon's
	RELAYD_SANDBOX_TEST=none
	export RELAYD_SANDBOX_TEST
	start_relayd
	n=0
	for c in $(pgrep -P "$(cat relayd.pid)"); do
		atf_check -o match:"^Seccomp:[[:space:]]+2\$" grep '^Seccomp:' "/proc/$c/status"
		n=$((n + 1))
	done
	atf_check_equal 8 "$n"
	# the parent is not sandboxed: it reloads, opens files, runs scripts
	atf_check -o match:"^Seccomp:[[:space:]]+0\$" grep '^Seccomp:' "/proc/$(cat relayd.pid)/status"
	# and what the children do still works under the filters
	bport=$(start_backend back echo)
	sed -i "s/port 9\$/port $bport/" relayd.conf
	atf_check "$RELAYCTL" -s relayd.sock reload
	atf_check -o ignore -e ignore "$RTOOL" client "$(cat relay.port)" 4 100000 20
	atf_check -o match:"^relayd " "$RELAYCTL" -s relayd.sock status
	atf_check -s exit:1 -x "grep -q 'lost child' relayd.log"
}
children_sandboxed_cleanup()
{
	stop_all
}

# The test build of relayd, with triggers in its sandbox: in $sbtest.
require_sbtest()
{
	require_daemon
	[ "$(uname -s)" = Linux ] || atf_skip "seccomp is Linux's"
	sbtest=$TOP/regress/daemon/relayd-sbtest
	[ -x "$sbtest" ] || atf_fail "relayd-sbtest is not built"
}

atf_test_case sandbox_violation_lost_child cleanup
sandbox_violation_lost_child_head()
{
	atf_set descr "a child that makes a forbidden system call dies, and the daemon with it: lost child; the test build runs without filters when told"
	atf_set require.user root
	atf_set timeout 60
}
sandbox_violation_lost_child_body()
{
	require_sbtest
	for proc in relay ca pfe hce; do
		write_conf
		rm -f relayd.log
		RELAYD_SANDBOX_TEST=$proc "$sbtest" -dv -f relayd.conf 2>relayd.log &
		pid=$!
		echo "$pid" >relayd.pid
		# SIGSYS: the filter killed it
		expect_lost_child "$pid" 31
	done
	# "none": the test build runs without the filters (for valgrind)
	write_conf
	: >relayd.log
	RELAYD_SANDBOX_TEST=none "$sbtest" -dv -f relayd.conf 2>>relayd.log &
	echo $! >relayd.pid
	wait_started
	n=0
	for c in $(pgrep -P "$(cat relayd.pid)"); do
		atf_check -o match:"^Seccomp:[[:space:]]+0\$" \
		    grep '^Seccomp:' "/proc/$c/status"
		n=$((n + 1))
	done
	atf_check_equal 8 "$n"
}
sandbox_violation_lost_child_cleanup()
{
	stop_all
}

atf_test_case sandbox_no_unix_socket cleanup
sandbox_no_unix_socket_head()
{
	atf_set descr "no child may open a unix socket (an abstract one would reach past the chroot); pfe and ca may not connect"
	atf_set require.user root
	atf_set timeout 60
}
sandbox_no_unix_socket_body()
{
	require_sbtest
	write_conf
	: >relayd.log
	# the test build says, once its filter is on, what the calls get
	RELAYD_SANDBOX_TEST=probe "$sbtest" -dv -f relayd.conf 2>>relayd.log &
	echo $! >relayd.pid
	wait_started
	for proc in relay hce pfe ca; do
		wait_log 10 "sandbox probe $proc:" ||
		    atf_fail "no probe from $proc"
		atf_check -o match:"unix socket: Permission denied" \
		    grep "sandbox probe $proc:" relayd.log
	done
	for proc in relay hce; do
		atf_check -o match:"connect: Bad file descriptor" \
		    grep "sandbox probe $proc:" relayd.log
	done
	for proc in pfe ca; do
		atf_check -o match:"connect: Permission denied" \
		    grep "sandbox probe $proc:" relayd.log
	done
	kill -0 "$(cat relayd.pid)" || atf_fail "relayd died"
}
sandbox_no_unix_socket_cleanup()
{
	stop_all
}

atf_test_case sigterm_clean cleanup
sigterm_clean_head()
{
	atf_set descr "SIGTERM: every child exits, socket removed, exit 0"
	atf_set require.user root
	atf_set timeout 30
}
sigterm_clean_body()
{
	require_daemon
	write_conf
	start_relayd
	pid=$(cat relayd.pid)
	kids=$(pgrep -P "$pid")
	kill -TERM "$pid"
	wait "$pid"
	atf_check_equal 0 $?
	rm -f relayd.pid
	atf_check -o match:"parent terminating, pid $pid" cat relayd.log
	atf_check -s exit:1 grep -q "lost child" relayd.log
	atf_check -s exit:1 test -e relayd.sock
	for k in $kids; do
		atf_check -s exit:1 -e ignore kill -0 "$k"
	done
}
sigterm_clean_cleanup()
{
	stop_all
}

atf_test_case lost_child cleanup
lost_child_head()
{
	atf_set descr "a child killed takes the daemon down with lost child"
	atf_set require.user root
	atf_set timeout 30
}
lost_child_body()
{
	require_daemon
	write_conf
	start_relayd
	pid=$(cat relayd.pid)
	victim=$(pgrep -P "$pid" | head -1)
	kill -KILL "$victim"
	expect_lost_child "$pid" 9 "$victim"
	atf_check -s exit:1 pgrep -P "$pid"
}
lost_child_cleanup()
{
	stop_all
}

atf_test_case second_instance_refused cleanup
second_instance_refused_head()
{
	atf_set descr "a second relayd on the same socket refuses to start"
	atf_set require.user root
	atf_set timeout 30
}
second_instance_refused_body()
{
	require_daemon
	write_conf
	start_relayd
	atf_check -s exit:1 -e match:"is in use: is relayd already running" \
	    "$RELAYD" -d -f relayd.conf
	atf_check -o match:"relay" "$RELAYCTL" -s relayd.sock show summary
}
second_instance_refused_cleanup()
{
	stop_all
}

atf_test_case busy_port_refused cleanup
busy_port_refused_head()
{
	atf_set descr "a second relayd on an address in use fails with Address already in use"
	atf_set require.user root
	atf_set timeout 30
}
busy_port_refused_body()
{
	require_daemon
	write_conf
	start_relayd
	sed "s|$PWD/relayd.sock|$PWD/other.sock|" relayd.conf >other.conf
	atf_check -s exit:1 -e match:"cannot listen on 127.0.0.1 port $(cat relay.port): Address already in use" \
	    "$RELAYD" -d -f other.conf
	atf_check -s exit:1 test -e other.sock
	atf_check -o inline:"1\n" -x "ss -Hltn 'sport = :$(cat relay.port)' | wc -l | tr -d ' '"
}
busy_port_refused_cleanup()
{
	stop_all
}

atf_test_case reload_keeps_listener cleanup
reload_keeps_listener_head()
{
	atf_set descr "reloads take the listener over: one socket, the same one"
	atf_set require.user root
	atf_set timeout 60
}
reload_keeps_listener_body()
{
	require_daemon
	port=$(start_backend back echo)
	write_conf "$port"
	start_relayd
	inode=$(ss -Hltne "sport = :$(cat relay.port)" | sed -n 's/.*ino:\([0-9]*\).*/\1/p')
	[ -n "$inode" ] || atf_fail "no listener"
	for i in 1 2 3 4 5; do
		# relayctl reload returns once the reload is done
		atf_check "$RELAYCTL" -s relayd.sock reload
		atf_check -o inline:"1\n" -x "ss -Hltn 'sport = :$(cat relay.port)' | wc -l | tr -d ' '"
	done
	atf_check -o inline:"$inode\n" -x "ss -Hltne 'sport = :$(cat relay.port)' | sed -n 's/.*ino:\([0-9]*\).*/\1/p'"
	atf_check -o ignore -e ignore "$RTOOL" client "$(cat relay.port)" 4 65536 20
}
reload_keeps_listener_cleanup()
{
	stop_all
}

atf_test_case sighup_reload cleanup
sighup_reload_head()
{
	atf_set descr "SIGHUP reloads: a new relay appears, the old one goes"
	atf_set require.user root
	atf_set timeout 30
}
sighup_reload_body()
{
	require_daemon
	write_conf
	start_relayd
	atf_check -o match:"relay[[:space:]]+test[[:space:]]" "$RELAYCTL" -s relayd.sock show relays
	sed -i 's/relay test/relay fresh/' relayd.conf
	kill -HUP "$(cat relayd.pid)"
	wait_log 10 "reload requested with SIGHUP" || atf_fail "no reload"
	wait_for 10 sh -c "$RELAYCTL -s $PWD/relayd.sock show relays | grep -q fresh" ||
	    atf_fail "the new relay did not appear"
	atf_check -s exit:1 -x "$RELAYCTL -s $PWD/relayd.sock show relays | grep -q ' test '"
	# every relay process runs the new relay
	wait_for 10 sh -c "test \$(grep -c 'relay_launch: running relay fresh' relayd.log) -eq 3" ||
	    atf_fail "not three relay processes running the new relay"
}
sighup_reload_cleanup()
{
	stop_all
}

atf_test_case broken_reload_rejected cleanup
broken_reload_rejected_head()
{
	atf_set descr "a reload of a broken file is rejected whole, the running config stays"
	atf_set require.user root
	atf_set timeout 30
}
broken_reload_rejected_body()
{
	require_daemon
	write_conf
	start_relayd
	cp relayd.conf good.conf
	printf 'relay broken {\n\tlisten on 127.0.0.1 port 1\n}\n' >>relayd.conf
	kill -HUP "$(cat relayd.pid)"
	wait_log 10 "rejected, the running configuration stays" ||
	    atf_fail "no rejection logged"
	atf_check -o match:"relayd.conf:11: relay broken has no target, rdr, or table" cat relayd.log
	atf_check -o match:"relay[[:space:]]+test[[:space:]]+active" "$RELAYCTL" -s relayd.sock show relays
	atf_check -s exit:1 -x "grep -q 'relay_launch: running relay broken' relayd.log"
	# the same file through relayctl load: the command says it failed
	atf_check -s exit:1 -o match:"reload failed" "$RELAYCTL" -s relayd.sock load relayd.conf
	atf_check -o match:"relay[[:space:]]+test[[:space:]]+active" "$RELAYCTL" -s relayd.sock show relays
	# and a good one through relayctl reload
	cp good.conf relayd.conf
	sed -i 's/relay test/relay third/' relayd.conf
	atf_check "$RELAYCTL" -s relayd.sock reload
	atf_check -o match:"relay[[:space:]]+third[[:space:]]+active" "$RELAYCTL" -s relayd.sock show relays
}
broken_reload_rejected_cleanup()
{
	stop_all
}

atf_test_case reload_busy cleanup
reload_busy_head()
{
	atf_set descr "relayctl reload during another reload says so and exits 2"
	atf_set require.user root
	atf_set timeout 30
}
reload_busy_body()
{
	require_daemon
	write_conf
	start_relayd
	# a relay process that does not answer holds the first reload open
	relay=$(pgrep -P "$(cat relayd.pid)" -f 'relayd: relay' | head -1)
	kill -STOP "$relay"
	"$RELAYCTL" -s relayd.sock reload >first.out 2>&1 &
	echo $! >first.pid
	wait_log 10 "reloading configuration" || atf_fail "no first reload"
	atf_check -s exit:2 -o inline:"reload already in progress\n" \
	    "$RELAYCTL" -s relayd.sock reload
	atf_check -o match:"a reload is still in progress" cat relayd.log
	kill -CONT "$relay"
	wait "$(cat first.pid)"
	atf_check_equal 0 $?
	rm -f first.pid
	atf_check -s exit:0 -o empty cat first.out
	atf_check -o empty "$RELAYCTL" -s relayd.sock reload
}
reload_busy_cleanup()
{
	for p in $(pgrep -f 'relayd: relay'); do kill -CONT "$p"; done
	stop_all
}

atf_test_case large_tables cleanup
large_tables_head()
{
	atf_set descr "tables of 200 and 300 hosts start, reload and relay; a redirection or router beyond what the kernel is given is refused by -n and by reload, the daemon serving on"
	atf_set require.user root
	atf_set timeout 60
}
# A relay test whose table holds 127.0.0.1 and $1 - 1 hosts that refuse.
write_large_conf()
{
	{
		printf 'prefork 3\nsocket "%s/relayd.sock"\ninterval 1\n' "$PWD"
		printf 'table <back> {\n\t127.0.0.1\n'
		_i=1
		while [ "$_i" -lt "$1" ]; do
			printf '\t127.0.%d.%d\n' $((_i / 250 + 1)) $((_i % 250 + 1))
			_i=$((_i + 1))
		done
		printf '}\nrelay test {\n\tlisten on 127.0.0.1 port %s\n' "$2"
		printf '\tforward to <back> port %s mode roundrobin check tcp\n}\n' "$3"
	} >relayd.conf
}
large_tables_body()
{
	require_daemon
	bport=$(start_backend back echo)
	lport=$(freeport)
	write_large_conf 200 "$lport" "$bport"
	atf_check -e match:"configuration OK" "$RELAYD" -n -f relayd.conf
	start_relayd
	wait_log 10 "host 127.0.0.1, check tcp.*state unknown -> up" ||
	    atf_fail "the host that answers is not up"
	for i in 1 2 3 4 5; do
		atf_check -o ignore -e ignore "$RTOOL" client "$lport" 1 4096 10
	done
	write_large_conf 300 "$lport" "$bport"
	atf_check -e match:"configuration OK" "$RELAYD" -n -f relayd.conf
	atf_check "$RELAYCTL" -s relayd.sock reload
	wait_for 10 sh -c "test \$(grep -c 'adding 300 hosts from table back' relayd.log) -eq 3" ||
	    atf_fail "not three relay processes with 300 hosts"
	# the redirection's table gets one host more than the kernel map holds
	{
		printf 'table <many> {\n'
		i=0
		while [ "$i" -le 1024 ]; do
			printf '\t127.%d.%d.1\n' $((i / 250 + 2)) $((i % 250 + 1))
			i=$((i + 1))
		done
		printf '}\nredirect www {\n\tlisten on 127.0.0.1 port 1\n'
		printf '\tforward to <many> port 80 check tcp\n}\n'
	} >rdr.conf
	cat relayd.conf rdr.conf >bad.conf
	atf_check -s exit:1 -e match:"bad.conf:$(( $(wc -l <relayd.conf) + 1030 )): redirection www: table many has 1025 hosts \\(1024 at most\\)" \
	    "$RELAYD" -n -f bad.conf
	atf_check -s exit:1 -o match:"reload failed" "$RELAYCTL" -s relayd.sock load "$PWD/bad.conf"
	# a router's multipath route: 64 gateways at most
	{
		printf 'table <gw> {\n'
		i=0
		while [ "$i" -le 64 ]; do
			printf '\t127.1.0.%d\n' $((i + 1))
			i=$((i + 1))
		done
		printf '}\nrouter up {\n\troute 10.0.0.0/8\n'
		printf '\tforward to <gw> check icmp\n}\n'
	} >rt.conf
	atf_check -s exit:1 -e match:"rt.conf:[0-9]+: router up: table gw has 65 hosts \\(64 at most\\)" \
	    "$RELAYD" -n -f rt.conf
	for i in 1 2 3; do
		atf_check -o ignore -e ignore "$RTOOL" client "$lport" 1 4096 10
	done
	atf_check -s exit:1 -x "grep -q 'lost child\\|too many hosts' relayd.log"
}
large_tables_cleanup()
{
	stop_all
}

atf_test_case reload_keeps_counters cleanup
reload_keeps_counters_head()
{
	atf_set descr "counters count on across relayctl reload and SIGHUP (relayctl show metrics, status), reset only at start; the configuration generation tells reloads apart"
	atf_set require.user root
	atf_set timeout 60
}
# relayd_relay_sessions_total of relay test, as relayctl shows it
sessions_total()
{
	"$RELAYCTL" -s relayd.sock show metrics |
	    sed -n 's/^relayd_relay_sessions_total{relay="test"} //p'
}
reload_keeps_counters_body()
{
	require_daemon
	bport=$(start_backend back echo 80)
	write_conf "$bport"
	start_relayd
	lport=$(cat relay.port)
	for i in $(seq 1 10); do
		atf_check -o ignore -e ignore "$RTOOL" client "$lport" 1 1000 10
	done
	wait_for 10 sh -c "test \"\$($RELAYCTL -s $PWD/relayd.sock show metrics | sed -n 's/^relayd_relay_sessions_total{relay=\"test\"} //p')\" = 10" ||
	    atf_fail "10 sessions not counted: $(sessions_total)"
	gen0=$("$RELAYCTL" -s relayd.sock show metrics | sed -n 's/^relayd_config_generation //p')
	atf_check "$RELAYCTL" -s relayd.sock reload
	# at once and after the relays reported again: never below 10
	atf_check_equal 10 "$(sessions_total)"
	# the relays report every second: a report from each
	sleep 1.5
	atf_check_equal 10 "$(sessions_total)"
	for i in $(seq 1 5); do
		atf_check -o ignore -e ignore "$RTOOL" client "$lport" 1 1000 10
	done
	kill -HUP "$(cat relayd.pid)"
	wait_for 10 sh -c "test \$(grep -c 'relay_launch: running relay test' relayd.log) -eq 9" ||
	    atf_fail "no reload with SIGHUP"
	for i in $(seq 1 5); do
		atf_check -o ignore -e ignore "$RTOOL" client "$lport" 1 1000 10
	done
	wait_for 10 sh -c "test \"\$($RELAYCTL -s $PWD/relayd.sock show metrics | sed -n 's/^relayd_relay_sessions_total{relay=\"test\"} //p')\" = 20" ||
	    atf_fail "20 sessions not counted: $(sessions_total)"
	atf_check -o match:"relay test: active, sessions: 0 active, 20 total" \
	    -o match:"bytes: in 20000 .*, out 20000 " "$RELAYCTL" -s relayd.sock status
	gen1=$("$RELAYCTL" -s relayd.sock show metrics | sed -n 's/^relayd_config_generation //p')
	[ -n "$gen0" ] && [ "$gen1" -eq $((gen0 + 2)) ] ||
	    atf_fail "generation $gen0 -> $gen1 over two reloads"
}
reload_keeps_counters_cleanup()
{
	stop_all
}

atf_test_case reload_storm_counts cleanup
reload_storm_counts_head()
{
	atf_set descr "20 SIGHUPs and 5 relayctl reloads: every session is one client connection, one backend connection, one log line"
	atf_set require.user root
	atf_set timeout 90
}
reload_storm_counts_body()
{
	require_daemon
	bport=$(start_backend back echo 80)
	write_conf "$bport"
	start_relayd
	lport=$(cat relay.port)
	(
		for i in $(seq 1 20); do
			kill -HUP "$(cat relayd.pid)"
			sleep 0.05
		done
		for i in 1 2 3 4 5; do
			"$RELAYCTL" -s relayd.sock reload >/dev/null 2>&1 &
		done
		wait
		touch storm.done
	) &
	storm=$!
	made=0 ok=0
	while [ ! -e storm.done ] && [ "$made" -lt 2000 ]; do
		made=$((made + 1))
		"$RTOOL" client "$lport" 1 4096 10 >/dev/null 2>&1 && ok=$((ok + 1))
	done
	wait "$storm"
	# every session has ended and is logged before the counts are taken
	wait_for 10 sh -c "[ \$(grep -c 'relay test, session [0-9]* (' relayd.log) -ge $made ]" ||
	    atf_fail "$made connections made, $(grep -c 'relay test, session [0-9]* (' relayd.log) sessions logged"
	atf_check -o inline:"$made\n" -x "grep -c 'relay test, session [0-9]* (' relayd.log"
	atf_check -o inline:"$made\n" -x "wc -c <back.port.conns | tr -d ' '"
	# a client only fails when a reload ended its session (a reset may
	# also end one whose client already had all its bytes back)
	reset=$(grep -c 'relay test, session [0-9]* (.*, relay reset' relayd.log)
	[ "$((made - ok))" -le "$reset" ] ||
	    atf_fail "$((made - ok)) clients failed, $reset sessions reset"
	atf_check -s exit:1 -x "grep -q 'lost child' relayd.log"
}
reload_storm_counts_cleanup()
{
	stop_all
}

atf_test_case reload_keeps_streams cleanup
reload_keeps_streams_head()
{
	atf_set descr "50 streams survive 20 good reloads, changing their backend and table and removing their relay; new sessions use the new configuration"
	atf_set require.user root
	atf_set timeout 120
}
reload_keeps_streams_body()
{
	require_daemon
	bport=$(start_backend back echo 100)
	b2port=$(start_backend other echo 100)
	lport=$(freeport)
	l2port=$(freeport)
	conf()
	{
		cat >relayd.conf <<CONF
prefork 3
socket "$PWD/relayd.sock"
log connection
table <back> { ${3:-127.0.0.1} }
# without Nagle the streams' gaps are the relay's, not TCP's
protocol fast {
	tcp nodelay
}
relay ${1:-test} {
	listen on 127.0.0.1 port $lport
	protocol fast
	forward to <back> port ${2:-$bport}
}
relay spare {
	listen on 127.0.0.1 port $l2port
	forward to <back> port $b2port
}
CONF
	}
	conf
	RELAYS=2 start_relayd
	# 50 streams of 100 KB a second each, checked, that last until the
	# 20 reloads are done (40 s at most; they take 2 to 6 s, more on a
	# loaded machine: the first 10 took 21 s once in a fresh clone's
	# run), then send the rest unpaced (SIGUSR1)
	"$RTOOL" client "$lport" 50 4000000 90 100000 >streams.out 2>&1 &
	cpid=$!
	t0=$(date +%s)
	wait_for 10 sh -c "[ \$($RELAYCTL -s $PWD/relayd.sock show sessions | grep -c '^session') -ge 50 ]" ||
	    atf_fail "the streams did not start"
	took=""
	for i in $(seq 1 20); do
		case $i in
		5)	conf test "$b2port" ;;		# another backend port
		8)	conf test "$b2port" 127.0.0.2 ;; # another table
		10)	conf renamed "$b2port" ;;	# their relay removed
		*)	sed -i "s/^log connection.*/log connection # $i/" relayd.conf ;;
		esac
		# relayctl reload returns once the reload is done
		r0=$(date +%s.%N)
		atf_check "$RELAYCTL" -s relayd.sock reload
		took="$took $(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $r0 }")"
		[ "$i" -eq 5 ] &&
		    atf_check -o match:"^ok 1 streams 1000 bytes" "$RTOOL" client "$l2port" 1 1000 10
		# their relay is gone, relayctl still shows them
		if [ "$i" -eq 10 ]; then
			atf_check -o match:"^50\$" -x "$RELAYCTL -s relayd.sock show sessions | grep -c '^session'"
		fi
		sleep 0.1
	done
	echo "seconds each reload took:$took"
	kill -0 "$cpid" 2>/dev/null ||
	    atf_fail "the streams ended before the 20 reloads were done, after $(($(date +%s) - t0)) s (seconds each reload took:$took): $(cat streams.out)"
	kill -USR1 "$cpid"
	wait "$cpid"
	rc=$?
	cat streams.out
	atf_check_equal 0 "$rc"
	atf_check -o match:"^ok 50 streams 200000000 bytes" cat streams.out
	gap=$(sed -n 's/.*longest gap \([0-9]*\) ms/\1/p' streams.out)
	echo "longest wait for bytes: $gap ms"
	# new sessions went to the new backend of the relay (now "renamed")
	atf_check -o match:"^ok 1 streams 1000 bytes" "$RTOOL" client "$lport" 1 1000 10
	wait_log 10 "relay renamed, session [0-9]* (.*127.0.0.1:$b2port, done" ||
	    atf_fail "the new session did not use the new configuration"
	# the streams ended as sessions of relay test, every one done
	atf_check -o inline:"50\n" -x "grep -c '^relay test, session [0-9]* (.*127.0.0.1:$bport, done\$' relayd.log"
	atf_check -s exit:1 -x "grep -q 'relay reset' relayd.log"
	atf_check -s exit:1 -x "grep -q 'lost child' relayd.log"
}
reload_keeps_streams_cleanup()
{
	stop_all
}

atf_test_case reload_keeps_sessions cleanup
reload_keeps_sessions_head()
{
	atf_set descr "a reload refused for an error in the new file leaves the running sessions alone"
	atf_set require.user root
	atf_set timeout 40
}
reload_keeps_sessions_body()
{
	require_daemon
	bport=$(start_backend back echo 60)
	write_conf "$bport"
	start_relayd
	lport=$(cat relay.port)
	# one byte every 100 ms for 4 s: fails if the session ends early
	"$RTOOL" trickle "$lport" 4 >trickle.out 2>&1 &
	tpid=$!
	wait_for 10 sh -c "$RELAYCTL -s $PWD/relayd.sock show sessions | grep -q '^session [0-9]*:[0-9]'" ||
	    atf_fail "no session"
	cat >>relayd.conf <<CONF
protocol web {
	tcp backlog 1000
}
CONF
	kill -HUP "$(cat relayd.pid)"
	wait_log 10 "rejected, the running configuration stays" ||
	    atf_fail "no rejection logged"
	atf_check -o match:"relayd.conf:10: invalid backlog: 1000 \(0 to 512\)" cat relayd.log
	atf_check -o match:"^session [0-9]+:[0-9]+ " "$RELAYCTL" -s relayd.sock show sessions
	wait "$tpid" || atf_fail "the session did not survive the refused reload: $(cat trickle.out)"
	atf_check -s exit:1 -x "grep -q 'lost child' relayd.log"
}
reload_keeps_sessions_cleanup()
{
	stop_all
}

atf_test_case reload_frees_old_configurations cleanup
reload_frees_old_configurations_head()
{
	atf_set descr "a session older than many reloads keeps one configuration, not every one since: the relay process does not grow"
	atf_set require.user root
	atf_set timeout 90
}
reload_frees_old_configurations_body()
{
	require_daemon
	bport=$(start_backend back echo 80)
	lport=$(freeport)
	l2port=$(freeport)
	# a table of 1000 hosts: half a megabyte a configuration in a relay
	{
		cat <<CONF
prefork 1
socket "$PWD/relayd.sock"
table <back> { 127.0.0.1 }
CONF
		printf 'table <big> {'
		for i in $(seq 1 1000); do
			printf ' 127.0.%d.%d' $((i / 250 + 1)) $((i % 250 + 1))
		done
		echo ' }'
		cat <<CONF
relay test {
	listen on 127.0.0.1 port $lport
	forward to <back> port $bport
}
relay spare {
	listen on 127.0.0.1 port $l2port
	forward to <big> port $bport
}
CONF
	} >relayd.conf
	RELAYS=2 PREFORK=1 start_relayd
	# one session, begun before the first reload, outlives them all
	"$RTOOL" trickle "$lport" 70 >trickle.out 2>&1 &
	echo $! >trickle.pid
	wait_for 10 sh -c "$RELAYCTL -s $PWD/relayd.sock show sessions | grep -q '^session [0-9]*:[0-9]'" ||
	    atf_fail "no session"
	relay=$(pgrep -P "$(cat relayd.pid)" -f "relayd: relay")
	atf_check_equal 1 "$(echo "$relay" | wc -w)"
	# the first reload retains the session's configuration
	atf_check "$RELAYCTL" -s relayd.sock reload
	before=$(rss_kib "$relay")
	for i in $(seq 1 60); do
		atf_check "$RELAYCTL" -s relayd.sock reload
	done
	after=$(rss_kib "$relay")
	echo "relay: $before KiB after one reload, $after KiB after 61" >&2
	# kept, the 60 would be 30 MiB more
	[ "$after" -lt $((before + 8192)) ] ||
	    atf_fail "the relay grew from $before to $after KiB in 60 reloads"
	atf_check -o match:"^session [0-9]+:[0-9]+ " "$RELAYCTL" -s relayd.sock show sessions
	# its end frees its configuration; the relay goes on
	kill "$(cat trickle.pid)"
	wait_for 10 sh -c "! $RELAYCTL -s $PWD/relayd.sock show sessions | grep -q '^session'" ||
	    atf_fail "the session did not end"
	atf_check -o match:"^ok 1 streams 1000 bytes" "$RTOOL" client "$lport" 1 1000 10
	atf_check -s exit:1 -x "grep -q 'lost child' relayd.log"
}
reload_frees_old_configurations_cleanup()
{
	stop_all
}

atf_test_case reload_ignores_prefork_socket cleanup
reload_ignores_prefork_socket_head()
{
	atf_set descr "prefork and socket changes on reload are reported as ignored"
	atf_set require.user root
	atf_set timeout 30
}
reload_ignores_prefork_socket_body()
{
	require_daemon
	write_conf
	start_relayd
	sed -i -e 's/^prefork 3/prefork 2/' \
	    -e "s|^socket .*|socket \"$PWD/other.sock\"|" \
	    -e 's/relay test/relay renamed/' relayd.conf
	atf_check "$RELAYCTL" -s relayd.sock reload
	wait_log 10 "prefork change ignored" || atf_fail "prefork change not reported"
	atf_check -o match:"socket change ignored" cat relayd.log
	# the old socket still answers, the new one does not exist
	atf_check -o match:"relay[[:space:]]+renamed[[:space:]]+active" "$RELAYCTL" -s relayd.sock show relays
	atf_check -s exit:1 test -e other.sock
	# still three relay processes
	wait_for 10 sh -c "test \$(grep -c 'relay_launch: running relay renamed' relayd.log) -eq 3" ||
	    atf_fail "not three relay processes after the reload"
}
reload_ignores_prefork_socket_cleanup()
{
	stop_all
}

atf_test_case relayctl_stop cleanup
relayctl_stop_head()
{
	atf_set descr "relayctl stop shuts the daemon down cleanly"
	atf_set require.user root
	atf_set timeout 30
}
relayctl_stop_body()
{
	require_daemon
	write_conf
	start_relayd
	pid=$(cat relayd.pid)
	atf_check -o inline:"command succeeded\n" "$RELAYCTL" -s relayd.sock stop
	wait "$pid"
	atf_check_equal 0 $?
	rm -f relayd.pid
	atf_check -s exit:1 test -e relayd.sock
}
relayctl_stop_cleanup()
{
	stop_all
}

atf_test_case service_installed cleanup
service_installed_head()
{
	atf_set descr "make install installs the systemd unit with its paths; it verifies; relayctl status exits 0 only for a running daemon"
	atf_set require.user root
	atf_set timeout 120
}
service_installed_body()
{
	require_daemon
	command -v systemd-analyze >/dev/null ||
	    atf_skip "no systemd-analyze: the unit cannot be verified here"
	atf_check -o ignore -e ignore make -C "$TOP" install PREFIX="$PWD/pfx"
	unit=$PWD/pfx/lib/systemd/system/relayd.service
	atf_check test -f "$unit"
	atf_check -o match:"^ExecStart=$PWD/pfx/sbin/relayd -f /etc/relayd.conf\$" \
	    -o match:"^ExecReload=$PWD/pfx/sbin/relayctl reload\$" cat "$unit"
	atf_check -o ignore -e ignore systemd-analyze verify --man=no "$unit"
	# hardened: systemd's own measure of its exposure, 10 the worst
	systemd-analyze security --offline=yes "$unit" >security 2>&1
	level=$(sed -n 's/.*Overall exposure level for relayd.service: \([0-9.]*\).*/\1/p' security)
	[ -n "$level" ] || { cat security >&2; atf_fail "no exposure level"; }
	awk -v l="$level" 'BEGIN { exit !(l <= 3.5) }' ||
	    atf_fail "exposure level $level, above 3.5"
	atf_check -o match:"^Type=notify$" -o match:"^WatchdogSec=30s$" \
	    cat "$unit"
	# the unit and the rc.d scripts rely on relayctl status
	write_conf
	atf_check -s not-exit:0 -o ignore -e ignore "$RELAYCTL" -s relayd.sock status
	start_relayd
	atf_check -o match:"^relayd " "$RELAYCTL" -s relayd.sock status
}
service_installed_cleanup()
{
	stop_all
}

# notify.out has $1 READY=1 lines
notified()
{
	[ "$(grep -c READY=1 notify.out)" -ge "$1" ]
}

atf_test_case service_notify cleanup
service_notify_head()
{
	atf_set descr "under a service manager (NOTIFY_SOCKET): no fork, READY=1 once the listener accepts, RELOADING=1 then READY=1 around reloads (a refused one too), STOPPING=1 at the end"
	atf_set require.user root
	atf_set timeout 60
}
service_notify_body()
{
	require_daemon
	write_conf
	python3 "$TOP/regress/tools/notifyrecv.py" "$PWD/notify.sock" \
	    notify.out "$(cat relay.port)" 50 &
	echo $! >notify.pid
	wait_for 10 test -S notify.sock || atf_fail "no notify socket"
	# as systemd starts it: no -d, the log goes to syslog
	NOTIFY_SOCKET=$PWD/notify.sock "$RELAYD" -f relayd.conf \
	    >relayd.out 2>&1 &
	echo $! >relayd.pid
	wait_for 10 grep -q "READY=1" notify.out || {
		cat relayd.out >&2; atf_fail "no READY=1"; }
	atf_check -o match:"^READY=1 \| STATUS=1 relays, 0 redirections, 0 routers; relayctl status for sessions connect=ok$" \
	    sed -n 1p notify.out
	# no fork: the process the manager started is the daemon
	kill -0 "$(cat relayd.pid)" || atf_fail "relayd forked away"
	kill -HUP "$(cat relayd.pid)"
	wait_for 10 notified 2 || atf_fail "no READY=1 after SIGHUP"
	atf_check -o match:"^RELOADING=1 \| MONOTONIC_USEC=[0-9]+ \| STATUS=reloading$" \
	    sed -n 2p notify.out
	atf_check -o match:"^READY=1 \| STATUS=1 relays" sed -n 3p notify.out
	echo "relay {" >bad.conf
	atf_check -s exit:1 -o ignore "$RELAYCTL" -s "$PWD/relayd.sock" \
	    load "$PWD/bad.conf"
	wait_for 10 notified 3 ||
	    atf_fail "no READY=1 after a refused reload"
	atf_check -o match:"^RELOADING=1" sed -n 4p notify.out
	atf_check -o match:"^READY=1 \| STATUS=reload refused; running: 1 relays" \
	    sed -n 5p notify.out
	kill -TERM "$(cat relayd.pid)"
	wait "$(cat relayd.pid)"
	rm -f relayd.pid
	wait_for 10 grep -q "STOPPING=1" notify.out || atf_fail "no STOPPING=1"
	atf_check -o match:"^STOPPING=1 \| STATUS=stopping$" sed -n 6p notify.out
}
service_notify_cleanup()
{
	stop_all
}

atf_test_case service_notify_bad_config cleanup
service_notify_bad_config_head()
{
	atf_set descr "under a service manager, a configuration that does not load sends no READY=1"
	atf_set require.user root
	atf_set timeout 30
}
service_notify_bad_config_body()
{
	require_daemon
	python3 "$TOP/regress/tools/notifyrecv.py" "$PWD/notify.sock" \
	    notify.out 9 2 &
	echo $! >notify.pid
	wait_for 10 test -S notify.sock || atf_fail "no notify socket"
	printf 'socket "%s/relayd.sock"\nrelay r {\n' "$PWD" >relayd.conf
	NOTIFY_SOCKET=$PWD/notify.sock atf_check -s exit:1 -o ignore \
	    -e ignore "$RELAYD" -f relayd.conf
	# the receiver gives up after 2 s: what it got by then is all
	wait "$(cat notify.pid)"
	rm -f notify.pid
	atf_check -o empty cat notify.out
}
service_notify_bad_config_cleanup()
{
	stop_all
}

# A mount namespace whose /dev is its own, for a syslog daemon of the
# test's at /dev/log: its pid in ns.pid.
start_log_ns()
{
	if ! command -v unshare >/dev/null || ! command -v nsenter >/dev/null
	then
		atf_skip "no unshare(1) and nsenter(1)"
	fi
	unshare -m true 2>/dev/null || atf_skip "no mount namespaces here"
	mkdir hostdev
	# shellcheck disable=SC2016
	unshare -m --propagation private sh -c '
		mount --bind /dev "$1" && mount -t tmpfs -o mode=755 tmpfs /dev &&
		for d in null zero random urandom; do
			touch "/dev/$d" && mount --bind "$1/$d" "/dev/$d" || exit 1
		done
		touch ns.ready
		exec sleep 120' sh "$PWD/hostdev" &
	echo $! >ns.pid
	wait_for 10 test -f ns.ready || atf_fail "no mount namespace"
}

# The namespace, an echo backend on $bport and a port for the relay.
log_ns_backend()
{
	require_daemon
	start_log_ns
	bport=$(start_backend back echo 60)
	lport=$(freeport)
}

# A syslog daemon, as far as relayd sees: the lines of /dev/log to $1,
# a datagram socket or with $2 "stream" a stream one.  One that stops
# first goes with its socket, as a restart would.
start_syslog()
{
	if [ -f syslog.pid ]; then
		kill "$(cat syslog.pid)"
		wait "$(cat syslog.pid)"
		nsenter -t "$(cat ns.pid)" -m rm /dev/log
	fi
	nsenter -t "$(cat ns.pid)" -m python3 "$TOP/regress/tools/syslogrecv.py" \
	    /dev/log "$PWD/$1" "${2:-dgram}" 60 &
	echo $! >syslog.pid
	wait_for 10 nsenter -t "$(cat ns.pid)" -m test -S /dev/log ||
	    atf_fail "no /dev/log"
}

# relayd in the namespace as systemd starts it: no -d, the log goes to
# syslog; READY=1 once it runs.
start_relayd_syslog()
{
	python3 "$TOP/regress/tools/notifyrecv.py" "$PWD/notify.sock" \
	    notify.out "$lport" 60 &
	echo $! >notify.pid
	wait_for 10 test -S notify.sock || atf_fail "no notify socket"
	NOTIFY_SOCKET=$PWD/notify.sock nsenter -t "$(cat ns.pid)" -m \
	    "$RELAYD" -f "$PWD/relayd.conf" >relayd.out 2>&1 &
	echo $! >relayd.pid
	wait_for 10 grep -q READY=1 notify.out || {
		cat relayd.out >&2; atf_fail "no READY=1"; }
}

atf_test_case syslog_restart cleanup
syslog_restart_head()
{
	atf_set descr "the chrooted processes' lines reach a syslog daemon that restarted, or that was not there at start"
	atf_set require.user root
	atf_set timeout 90
}
syslog_restart_body()
{
	log_ns_backend
	cat >relayd.conf <<CONF
prefork 1
interval 1
log state changes
log connection
socket "$PWD/relayd.sock"
table <back> { 127.0.0.1 }
relay test {
	listen on 127.0.0.1 port $lport
	forward to <back> port $bport check tcp
}
CONF
	start_syslog log1
	start_relayd_syslog
	wait_for 10 grep -q "state unknown -> up" log1 ||
	    atf_fail "no host check line from hce"
	atf_check -o ignore "$RTOOL" client "$lport" 1 1000
	# (session 1 is the readiness probe's)
	wait_for 10 grep -q "relay test, session 2, bytes in 1000" log1 ||
	    atf_fail "no session line from the relay process"
	atf_check -o match:"relayd\[[0-9]+\]: startup" cat log1
	atf_check -o match:"^<30>[A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} relayd\[[0-9]+\]: relay test, session 2 \(1 active\), 0, 127.0.0.1 -> 127.0.0.1:$bport, done$" \
	    cat log1

	# the daemon restarts: a new socket at /dev/log
	start_syslog log2
	atf_check -o ignore "$RTOOL" client "$lport" 1 1000
	wait_for 10 grep -q "relay test, session 3, bytes in 1000" log2 ||
	    atf_fail "the relay process's line was lost"
	kill "$(cat back.pid)"
	wait_for 10 grep -q "state up -> down" log2 ||
	    atf_fail "hce's line was lost"

	# no daemon for a while: lines then are lost, later ones are not
	kill "$(cat syslog.pid)"
	wait "$(cat syslog.pid)"
	rm syslog.pid
	nsenter -t "$(cat ns.pid)" -m rm /dev/log
	_old=$bport
	bport=$(start_backend back echo 60)
	sed -i "s/port $_old check/port $bport check/" relayd.conf
	# a session refused now ("no host up"): its line has nowhere to go
	"$RTOOL" client "$lport" 1 1000 >/dev/null 2>&1
	start_syslog log3
	atf_check -o ignore "$RELAYCTL" -s "$PWD/relayd.sock" reload
	wait_for 10 grep -q "state unknown -> up" log3 ||
	    atf_fail "hce's line was lost after syslog came back"
	# a child told there is no syslog asks again a second later
	wait_for 10 sh -c "\"$RTOOL\" client $lport 1 1000 >/dev/null &&
	    grep -q 'relay test, session [0-9]*, bytes in 1000' log3" ||
	    atf_fail "the relay process's line was lost after syslog came back"
	# what was lost is counted
	atf_check -o match:"relayd\[[0-9]+\]: syslog: dropped [1-9][0-9]* messages?: no syslog daemon took them$" \
	    cat log3
	# every process still runs
	kill -0 "$(cat relayd.pid)" || atf_fail "relayd died"
	atf_check -o match:"relay[[:space:]]+test[[:space:]]+active" "$RELAYCTL" -s "$PWD/relayd.sock" show relays
}
syslog_restart_cleanup()
{
	stop_all
}

atf_test_case syslog_stream cleanup
syslog_stream_head()
{
	atf_set descr "a syslog daemon on a stream socket gets the lines, NUL-ended, before and after it restarts"
	atf_set require.user root
	atf_set timeout 60
}
syslog_stream_body()
{
	require_daemon
	start_log_ns
	bport=$(start_backend back echo 60)
	write_conf "$bport"
	lport=$(cat relay.port)
	start_syslog log1 stream
	start_relayd_syslog
	atf_check -o ignore "$RTOOL" client "$lport" 1 1000
	wait_for 10 grep -q "relay test, session [0-9]*, bytes in 1000" log1 ||
	    atf_fail "no session line from a relay process"
	atf_check -o match:"^<30>[A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} relayd\\[[0-9]+\\]: startup$" \
	    cat log1
	start_syslog log2 stream
	# three relay processes: each finds its socket gone
	for n in 1 2 3 4 5 6; do
		atf_check -o ignore "$RTOOL" client "$lport" 1 1000
		wait_for 10 sh -c "[ \$(grep -c 'bytes in 1000' log2) -eq $n ]" ||
		    atf_fail "a session's line was lost"
	done
}
syslog_stream_cleanup()
{
	stop_all
}

# A syslog daemon that stopped reading (rsyslog behind a full disk, a
# stopped process): the sessions go on, the lines it had no room for
# are counted and said when it reads again.  $1: dgram or stream.
syslog_stalled_check()
{
	log_ns_backend
	cat >relayd.conf <<CONF
prefork 1
log connection
socket "$PWD/relayd.sock"
table <back> { 127.0.0.1 }
protocol many {
	tcp backlog 128
}
relay test {
	listen on 127.0.0.1 port $lport
	protocol many
	forward to <back> port $bport
}
CONF
	start_syslog log1 "$1"
	start_relayd_syslog
	atf_check -o ignore "$RTOOL" client "$lport" 1 1000
	wait_for 10 grep -q "relay test, session 2, bytes in 1000" log1 ||
	    atf_fail "no session line from the relay process"
	kill -STOP "$(cat syslog.pid)"
	# 400 sessions, 800 lines: more than any socket buffer holds
	_t0=$(date +%s)
	for n in 1 2 3 4 5 6 7 8; do
		atf_check -o ignore "$RTOOL" client "$lport" 50 1000 10
	done
	_t=$(($(date +%s) - _t0))
	[ "$_t" -le 20 ] || atf_fail "400 sessions took ${_t} s"
	kill -CONT "$(cat syslog.pid)"
	atf_check -o ignore "$RTOOL" client "$lport" 1 1000
	wait_for 10 grep -q "relay test, session 403, bytes in 1000" log1 ||
	    atf_fail "no line for the session after syslog read again"
	atf_check -o match:"relayd\[[0-9]+\]: syslog: dropped [0-9]+ messages?: the syslog daemon had no room" \
	    cat log1
	# every line whole; each of the 806 session lines there or counted
	atf_check -s exit:1 grep -Ev \
	    '^<[0-9]+>[A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} relayd\[[0-9]+\]: ' log1
	_got=$(grep -c "relay test, session [0-9]*[ ,]" log1)
	_lost=$(sed -n 's/.*syslog: dropped \([0-9]*\) message.*/\1/p' log1 |
	    awk '{ n += $1 } END { print n }')
	atf_check_equal 806 $((_got + _lost))
	kill -0 "$(cat relayd.pid)" || atf_fail "relayd died"
}

atf_test_case syslog_stalled cleanup
syslog_stalled_head()
{
	atf_set descr "a syslog daemon that does not read stalls no session; what it had no room for is counted"
	atf_set require.user root
	atf_set timeout 90
}
syslog_stalled_body()
{
	syslog_stalled_check dgram
}
syslog_stalled_cleanup()
{
	kill -CONT "$(cat syslog.pid 2>/dev/null)" 2>/dev/null
	stop_all
}

atf_test_case syslog_stalled_stream cleanup
syslog_stalled_stream_head()
{
	atf_set descr "a syslog daemon on a stream socket that does not read stalls no session"
	atf_set require.user root
	atf_set timeout 90
}
syslog_stalled_stream_body()
{
	syslog_stalled_check stream
}
syslog_stalled_stream_cleanup()
{
	kill -CONT "$(cat syslog.pid 2>/dev/null)" 2>/dev/null
	stop_all
}

atf_init_test_cases()
{
	atf_add_test_case process_tree
	atf_add_test_case children_chrooted
	atf_add_test_case no_handle_outside_chroot
	atf_add_test_case launcher_fds_closed
	atf_add_test_case children_sandboxed
	atf_add_test_case sandbox_violation_lost_child
	atf_add_test_case sandbox_no_unix_socket
	atf_add_test_case sigterm_clean
	atf_add_test_case lost_child
	atf_add_test_case second_instance_refused
	atf_add_test_case busy_port_refused
	atf_add_test_case reload_keeps_listener
	atf_add_test_case sighup_reload
	atf_add_test_case broken_reload_rejected
	atf_add_test_case reload_busy
	atf_add_test_case large_tables
	atf_add_test_case reload_keeps_counters
	atf_add_test_case reload_storm_counts
	atf_add_test_case reload_keeps_streams
	atf_add_test_case reload_keeps_sessions
	atf_add_test_case reload_frees_old_configurations
	atf_add_test_case reload_ignores_prefork_socket
	atf_add_test_case relayctl_stop
	atf_add_test_case service_installed
	atf_add_test_case service_notify
	atf_add_test_case service_notify_bad_config
	atf_add_test_case syslog_restart
	atf_add_test_case syslog_stream
	atf_add_test_case syslog_stalled
	atf_add_test_case syslog_stalled_stream
}
