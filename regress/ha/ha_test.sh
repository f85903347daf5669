#! /usr/bin/env atf-sh
# High availability: relayd as one node of a pair, in network namespaces
# this test makes and deletes.

. "$(atf_get_srcdir)/../lib.sh"

# A namespace, its name in $N (and in ns.list for cleanup_ns), with a
# veth pair d0-d1 up and no address on it.
node_ns()
{
	N=ha$$
	ip netns add $N || atf_fail "netns"
	echo $N >>ns.list
	ip -n $N link set lo up
	ip -n $N link add d0 type veth peer name d1 || atf_fail "veth"
	ip -n $N link set d0 up
	ip -n $N link set d1 up
}

# What 10.79.0.100 (or $1) port 80 echoes of "hello", from the node
hello()
{
	case ${1:-10.79.0.100} in
	*:*)	_a="TCP6:[$1]:80" ;;
	*)	_a="TCP4:${1:-10.79.0.100}:80" ;;
	esac
	echo hello | ip netns exec $N timeout 5 socat -t 2 - "$_a" 2>/dev/null
}

atf_test_case standby_without_address cleanup
standby_without_address_head()
{
	atf_set descr "a standby starts, and reloads, with listeners on shared addresses it does not hold yet (no sysctl), says so once, and serves them when they come; a port taken is still refused"
	atf_set require.user root
	atf_set timeout 60
}
standby_without_address_body()
{
	require_netns
	node_ns
	atf_check -o inline:"0\n" ip netns exec $N \
	    sysctl -n net.ipv4.ip_nonlocal_bind
	ip netns exec $N "$RTOOL" echo "$PWD/echo.port" 60 >echo.out 2>&1 &
	echo $! >echo.pid
	wait_for 10 test -s echo.port || atf_fail "no backend"
	cat >relayd.conf <<CONF
prefork 1
socket "$PWD/relayd.sock"
relay www {
	listen on 10.79.0.100 port 80
	forward to 127.0.0.1 port $(cat echo.port)
}
relay www6 {
	listen on fd79::100 port 80
	forward to 127.0.0.1 port $(cat echo.port)
}
dns protocol d {
}
relay dns {
	listen on 10.79.0.100 port 53
	protocol d
	forward to 127.0.0.1 port 5353
}
CONF
	ip netns exec $N "$RELAYD" -dv -f relayd.conf 2>relayd.log &
	echo $! >relayd.pid
	RELAYS=3 PREFORK=1 wait_started
	atf_check -o inline:"3\n" -x \
	    "grep -c 'is not on this host yet: listening for it' relayd.log"
	atf_check -o match:"relay www: 10.79.0.100 is not on this host yet" \
	    -o match:"relay www6: fd79::100 is not on this host yet" cat relayd.log
	# the address comes (a failover): served at once
	ip -n $N addr add 10.79.0.100/24 dev d0
	ip -n $N addr add fd79::100/64 dev d0 nodad
	[ "$(hello 10.79.0.100)" = hello ] || atf_fail "10.79.0.100 not served"
	[ "$(hello fd79::100)" = hello ] || atf_fail "fd79::100 not served"
	# a reload that adds a listener on another shared address
	sed "s/^relay www {/relay www2 {\n\tlisten on 10.79.0.101 port 80\n\tforward to 127.0.0.1 port $(cat echo.port)\n}\nrelay www {/" \
	    relayd.conf >two.conf
	atf_check -o empty ip netns exec $N "$RELAYCTL" -s "$PWD/relayd.sock" \
	    load "$PWD/two.conf"
	wait_log 10 "relay www2: 10.79.0.101 is not on this host yet" ||
	    atf_fail "no word of 10.79.0.101"
	# what is wrong still is: a port taken
	sed "s/^relay www {/relay taken {\n\tlisten on 127.0.0.1 port $(cat echo.port)\n\tforward to 127.0.0.1 port 9\n}\nrelay www {/" \
	    relayd.conf >taken.conf
	atf_check -s exit:1 -o match:"reload failed" ip netns exec $N \
	    "$RELAYCTL" -s "$PWD/relayd.sock" load "$PWD/taken.conf"
	atf_check -o match:"relay taken: cannot listen on 127.0.0.1 port .*Address already in use" \
	    cat relayd.log
	[ "$(hello 10.79.0.100)" = hello ] || atf_fail "no longer served"
}
standby_without_address_cleanup()
{
	cleanup_ns
}

atf_test_case demote_count cleanup
demote_count_head()
{
	atf_set descr "demote GROUP on Linux: a file per group keepalived tracks, 1 from the start until every table is checked, then the group's tables that are down; status and metrics show it; a clean stop demotes"
	atf_set require.user root
	atf_set timeout 60
}
demote_count_body()
{
	require_daemon
	eport=$(start_backend echo echo)
	closed=$(freeport)
	# a check that takes 2.5 s: the first round is over only then
	start_stalled_backend
	cat >relayd.conf <<CONF
prefork 1
interval 4
socket "$PWD/relayd.sock"
demote directory "$PWD/demote"
table <up> { 127.0.0.1 }
table <down> { 127.0.0.1 }
table <slow> { 127.0.0.1 }
relay r1 {
	listen on 127.0.0.1 port $(freeport)
	forward to <up> port $eport check tcp demote grp1
}
relay r2 {
	listen on 127.0.0.1 port $(freeport)
	forward to <down> port $closed check tcp demote grp2
}
relay r3 {
	listen on 127.0.0.1 port $(freeport)
	forward to <slow> port $bport timeout 2500 check tcp
}
CONF
	atf_check -e inline:"configuration OK\n" "$RELAYD" -n -f relayd.conf
	RELAYS=3 PREFORK=1 start_relayd
	# until <slow> is checked, every group is demoted (grp2's table
	# is down besides, or soon)
	atf_check -o inline:"1\n" cat demote/grp1
	[ "$(cat demote/grp2)" -ge 1 ] || atf_fail "grp2 not demoted"
	wait_for 10 sh -c "[ \"\$(cat demote/grp1)\" = 0 ]" ||
	    atf_fail "grp1 still $(cat demote/grp1)"
	atf_check -o inline:"1\n" cat demote/grp2
	atf_check -o match:"^demote group grp1: 0$" \
	    -o match:"^demote group grp2: 1 \(demoted\)$" \
	    "$RELAYCTL" -s relayd.sock status
	atf_check -o match:"^relayd_demote_count\{group=\"grp2\"\} 1$" \
	    "$RELAYCTL" -s relayd.sock show metrics
	# the backend of grp2 comes: no longer demoted
	"$RTOOL" echo "$PWD/late.port" 60 >/dev/null 2>&1 &
	echo $! >late.pid
	wait_for 10 test -s late.port || atf_fail "no backend"
	sed "s/port $closed check/port $(cat late.port) check/" relayd.conf \
	    >late.conf
	atf_check -o empty "$RELAYCTL" -s relayd.sock load "$PWD/late.conf"
	wait_for 10 sh -c "[ \"\$(cat demote/grp2)\" = 0 ]" ||
	    atf_fail "grp2 still $(cat demote/grp2)"
	wait_log 10 "demote group grp2: no longer demoted" ||
	    atf_fail "not logged"
	# a table disabled is down
	atf_check -o ignore "$RELAYCTL" -s relayd.sock table disable up
	wait_for 10 sh -c "[ \"\$(cat demote/grp1)\" = 1 ]" ||
	    atf_fail "grp1 not demoted: $(cat demote/grp1)"
	atf_check -o ignore "$RELAYCTL" -s relayd.sock table enable up
	wait_for 10 sh -c "[ \"\$(cat demote/grp1)\" = 0 ]" ||
	    atf_fail "grp1 still $(cat demote/grp1)"
	# a clean stop gives the address up
	kill "$(cat relayd.pid)"
	wait "$(cat relayd.pid)"
	rm -f relayd.pid
	atf_check -o inline:"1\n" cat demote/grp1
	atf_check -o inline:"1\n" cat demote/grp2
	atf_check -o empty find demote -name ".*"
}
demote_count_cleanup()
{
	stop_all
}

atf_test_case relay_stalled cleanup
relay_stalled_head()
{
	atf_set descr "a relay process that stops answering (SIGSTOP) demotes every group within a few seconds, shows in status and metrics, starves the service manager's watchdog, and all comes back when it answers"
	atf_set require.user root
	atf_set timeout 60
}
relay_stalled_body()
{
	require_daemon
	eport=$(start_backend echo echo)
	lport=$(freeport)
	cat >relayd.conf <<CONF
prefork 1
interval 1
socket "$PWD/relayd.sock"
demote directory "$PWD/demote"
table <up> { 127.0.0.1 }
relay r1 {
	listen on 127.0.0.1 port $lport
	forward to <up> port $eport check tcp demote grp1
}
CONF
	python3 "$TOP/regress/tools/notifyrecv.py" "$PWD/notify.sock" \
	    notify.out "$lport" 50 &
	echo $! >notify.pid
	wait_for 10 test -S notify.sock || atf_fail "no notify socket"
	NOTIFY_SOCKET=$PWD/notify.sock WATCHDOG_USEC=10000000 \
	    "$RELAYD" -dv -f relayd.conf 2>relayd.log &
	echo $! >relayd.pid
	PREFORK=1 wait_started
	wait_for 10 sh -c "[ \"\$(cat demote/grp1)\" = 0 ]" ||
	    atf_fail "grp1: $(cat demote/grp1)"
	wait_for 10 sh -c "[ \$(grep -c WATCHDOG=1 notify.out) -ge 2 ]" ||
	    atf_fail "no watchdog: $(cat notify.out)"
	rp=$(pgrep -P "$(cat relayd.pid)" -f "relayd: relay")
	[ -n "$rp" ] || atf_fail "no relay process"
	kill -STOP "$rp"
	echo "$rp" >stopped
	wait_for 10 sh -c "[ \"\$(cat demote/grp1)\" = 1 ]" ||
	    atf_fail "grp1 not demoted: $(cat demote/grp1)"
	atf_check -o match:"relay process 0 \(pid $rp\) does not answer: demoting" \
	    cat relayd.log
	atf_check -o match:"^relay processes not answering: 1 " \
	    "$RELAYCTL" -s relayd.sock status
	atf_check -o match:"^relayd_relay_processes_stalled 1$" \
	    "$RELAYCTL" -s relayd.sock show metrics
	# no watchdog while it hangs
	n=$(grep -c WATCHDOG=1 notify.out)
	sleep 3
	[ "$(grep -c WATCHDOG=1 notify.out)" -eq "$n" ] ||
	    atf_fail "the watchdog was fed while a relay process hung"
	kill -CONT "$rp"
	rm -f stopped
	wait_for 10 sh -c "[ \"\$(cat demote/grp1)\" = 0 ]" ||
	    atf_fail "grp1 still demoted: $(cat demote/grp1)"
	wait_log 10 "relay process 0 (pid $rp) answers again" ||
	    atf_fail "not logged"
	wait_for 10 sh -c "[ \$(grep -c WATCHDOG=1 notify.out) -gt $n ]" ||
	    atf_fail "no watchdog after"
}
relay_stalled_cleanup()
{
	[ -f stopped ] && kill -CONT "$(cat stopped)" 2>/dev/null
	stop_all
}

atf_init_test_cases()
{
	atf_add_test_case relay_stalled
	atf_add_test_case demote_count
	atf_add_test_case standby_without_address
}
