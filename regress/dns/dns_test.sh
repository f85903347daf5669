#! /usr/bin/env atf-sh
# DNS relays (dns protocol): queries through the real daemon to a real
# DNS server (regress/tools/dnstool.py) with dig and dnstool's client:
# answers, IDs, spoofed answers, balancing, checks, timeouts, reloads
# and bad input.

. "$(atf_get_srcdir)/../lib.sh"

DNSTOOL=$TOP/regress/tools/dnstool.py
# one relay process unless a test says otherwise
PREFORK=1

require_dig()
{
	command -v dig >/dev/null 2>&1 ||
	    atf_skip "no dig (make deps installs bind9-dnsutils)"
}

# start_dns NAME [ADDRESS [PORT]]: a DNS server answering TXT "NAME", its
# port in NAME.port and on stdout, the IDs it saw in NAME.port.ids, the
# source ports of the queries in NAME.port.sports
start_dns()
{
	rm -f "$1.port" "$1.port.ids" "$1.port.sports"
	python3 "$DNSTOOL" server "$PWD/$1.port" "$1" "${2:-127.0.0.1}" 200 \
	    "${3:-0}" >"$1.out" 2>&1 &
	echo $! >"$1.pid"
	wait_for 10 test -s "$1.port" || atf_fail "DNS server $1 did not start"
	cat "$1.port"
}

# dns_conf "HOSTS" [EXTRA RELAY LINES] [EXTRA GLOBAL LINES]: a dns relay
# on $lport (chosen unless set) to the table <dns> of HOSTS, port $port
dns_conf()
{
	lport=${lport:-$(freeport)}
	cat >relayd.conf <<CONF
prefork $PREFORK
interval ${INTERVAL:-10}
socket "$PWD/relayd.sock"
log connection
$3
table <dns> { $1 }
dns protocol dnsp
relay dns {
	listen on 127.0.0.1 port $lport
	protocol dnsp
	forward to <dns> port $port ${MODE:-} ${CHECK:-}
	$2
}
CONF
}

# two_dns: servers one (127.0.0.1) and two (127.0.0.3) on one port, and
# a relay to both
two_dns()
{
	port=$(start_dns one)
	start_dns two 127.0.0.3 "$port" >/dev/null
	dns_conf "127.0.0.1, 127.0.0.3"
}

# q NAME [TYPE [DIG OPTIONS]]: dig through the relay, short answers
q()
{
	dig @127.0.0.1 -p "$lport" +time=3 +tries=1 +short "$@"
}

atf_test_case answers cleanup
answers_head()
{
	atf_set descr "A, AAAA and TXT answers come through a dns relay over IPv4 and IPv6; the backend sees IDs of ours, each query is a session with OpenBSD's end line"
	atf_set timeout 60
}
answers_body()
{
	require_daemon
	require_dig
	port=$(start_dns one)
	lport=$(freeport)
	PREFORK=2
	dns_conf "127.0.0.1" "listen on ::1 port $lport"
	RELAYS=2 start_relayd
	atf_check -o inline:"192.0.2.1\n" dig @127.0.0.1 -p "$lport" +time=3 +tries=1 +short a.test A
	atf_check -o inline:"2001:db8::1\n" dig @127.0.0.1 -p "$lport" +time=3 +tries=1 +short a.test AAAA
	atf_check -o inline:"\"one\"\n" dig @127.0.0.1 -p "$lport" +time=3 +tries=1 +short a.test TXT
	atf_check -o inline:"\"one\"\n" dig @::1 -p "$lport" +time=3 \
	    +tries=1 +short b.test TXT
	# the ID the client used is not the one the backend saw
	dig @127.0.0.1 -p "$lport" +time=3 +tries=1 c.test >dig.out ||
	    atf_fail "no answer"
	cid=$(sed -n 's/.*status: NOERROR, id: \([0-9]*\).*/\1/p' dig.out)
	[ -n "$cid" ] || atf_fail "dig printed no ID: $(cat dig.out)"
	bid=$(awk '$2 == "c.test" { print $1 }' one.port.ids)
	[ -n "$bid" ] || atf_fail "the backend saw no c.test"
	[ "$cid" != "$bid" ] || atf_fail "the backend saw the client's ID $cid"
	wait_log 5 "^relay dns, session [0-9]*, bytes in [0-9]* (spliced 0, copied [0-9]*), out [0-9]* (spliced 0, copied [0-9]*)$" ||
	    atf_fail "no byte line: $(cat relayd.log)"
	atf_check -o match:"^relay dns, session [0-9]* \([0-9]* active\), 0, 127\.0\.0\.1 -> 127\.0\.0\.1:$port, session closed$" \
	    grep "^relay dns, session [0-9]* (" relayd.log
	atf_check -o match:"^relay dns1:$lport, session [0-9]* \([0-9]* active\), 0, ::1 -> 127\.0\.0\.1:$port, session closed$" \
	    grep "^relay dns1:$lport, session" relayd.log
	wait_for 5 sh -c "'$RELAYCTL' -s '$PWD/relayd.sock' show summary | grep -q 'relay.*dns'" ||
	    atf_fail "relayctl does not show the relay"
}
answers_cleanup()
{
	stop_all
}

atf_test_case large_and_tcp cleanup
large_and_tcp_head()
{
	atf_set descr "a 3 KiB answer comes over UDP with EDNS0 4096; a truncated answer sends dig to TCP, which the relay relays to the backend's TCP"
	atf_set timeout 60
}
large_and_tcp_body()
{
	require_daemon
	require_dig
	port=$(start_dns one)
	dns_conf "127.0.0.1"
	start_relayd
	dig @127.0.0.1 -p "$lport" +time=3 +tries=1 +bufsize=4096 big.test \
	    TXT >big.out || atf_fail "no answer"
	atf_check -o match:"ANSWER: 15," cat big.out
	atf_check -s exit:1 grep -q "flags:.* tc" big.out
	atf_check -o match:"MSG SIZE  rcvd: 3[0-9][0-9][0-9]$" cat big.out
	# TC over UDP; dig asks again over TCP, through the relay
	atf_check -o inline:"\"tcp one\"\n" dig @127.0.0.1 -p "$lport" +time=3 +tries=1 +short tc.test TXT
	wait_log 5 "^relay dns, session [0-9]* ([0-9]* active), 0, 127\.0\.0\.1 -> 127\.0\.0\.1:$port, done$" ||
	    atf_fail "no TCP session: $(cat relayd.log)"
}
large_and_tcp_cleanup()
{
	stop_all
}

atf_test_case ids cleanup
ids_head()
{
	atf_set descr "10,000 queries: all answered to the right client ID, the IDs the backend sees never repeat and are not the client's"
	atf_set timeout 120
}
ids_body()
{
	require_daemon
	port=$(start_dns one)
	dns_conf "127.0.0.1"
	sed -i "s/^log connection$//" relayd.conf
	start_relayd
	atf_check -o inline:"answered 10000 mismatched 0 lost 0\n" \
	    python3 "$DNSTOOL" client 127.0.0.1 "$lport" 10000 64 \
	    "$PWD/client.ids"
	wait_for 5 sh -c "[ \$(wc -l <one.port.ids) -ge 10000 ]" ||
	    atf_fail "the backend saw $(wc -l <one.port.ids) queries"
	atf_check -o inline:"10000\n" sh -c "cut -d' ' -f1 one.port.ids | sort -u | wc -l"
	# the same name, the same ID: chance makes a few at most (1/32768)
	sort -k2 one.port.ids >b.sorted
	sort -k2 client.ids >c.sorted
	same=$(join -1 2 -2 2 b.sorted c.sorted | awk '$2 == $3' | wc -l)
	[ "$(join -1 2 -2 2 b.sorted c.sorted | wc -l)" -eq 10000 ] ||
	    atf_fail "names differ between client and backend"
	[ "$same" -le 5 ] || atf_fail "$same queries kept the client's ID"
}
ids_cleanup()
{
	stop_all
}

atf_test_case spoofed cleanup
spoofed_head()
{
	atf_set descr "answers with another ID, from another port or host, or to another question never reach the client; what arrives is counted"
	atf_set timeout 60
}
spoofed_body()
{
	require_daemon
	require_dig
	port=$(start_dns one)
	dns_conf "127.0.0.1"
	start_relayd
	for i in 1 2 3; do
		atf_check -o inline:"192.0.2.1\n" dig @127.0.0.1 -p "$lport" +time=3 +tries=1 +short spoof.test A
	done
	# the wrong ID, the other question and the late second answer
	# reached the relay and were dropped; the other ports' the kernel
	# dropped
	wait_for 5 sh -c "'$RELAYCTL' -s '$PWD/relayd.sock' status | grep -q 'datagrams dropped: 9$'" ||
	    atf_fail "not 9 drops counted: $(relayctl status)"
	atf_check -o match:"datagrams dropped, the last" cat relayd.log
	atf_check -s exit:1 grep -q "6\.6\.6\.6" relayd.log
}
spoofed_cleanup()
{
	stop_all
}

# forged_run FORGERIES STALE: the forger learns the ports of eight
# queries, STALE runs, then 64 queries are in flight while the forger
# sends FORGERIES answers with random IDs to those ports: none may
# reach a client
forged_run()
{
	require_daemon
	rm -f forger.port
	python3 "$DNSTOOL" forger "$PWD/forger.port" "$1" 100 >forger.out 2>&1 &
	echo $! >forger.pid
	wait_for 10 test -s forger.port || atf_fail "no forger"
	port=$(cat forger.port)
	dns_conf "127.0.0.1" "session timeout 30"
	start_relayd
	# the ports leak: eight queries answered, their source ports seen
	atf_check -o match:"^answered 8 mismatched 0 lost 0" \
	    python3 "$DNSTOOL" client 127.0.0.1 "$lport" 8 1 - probe.test
	$2
	python3 "$DNSTOOL" client 127.0.0.1 "$lport" 64 64 - victim.test \
	    >victims.out 2>&1 &
	echo $! >victims.pid
	wait_for 90 test -s forger.port.forged || atf_fail "the forger did not finish"
	cat forger.port.forged >&2
	wait_for 20 test -s victims.out || atf_fail "the client did not finish"
	atf_check -o match:"^answered 0 mismatched 0 lost 64" cat victims.out
	atf_check -s exit:1 grep -q "6\.6\.6\.6" relayd.log
}

# 1024 queries: the pool's generation that the probes left by is over
churn()
{
	atf_check -o match:"^answered 1024 mismatched 0 lost 0" \
	    python3 "$DNSTOOL" client 127.0.0.1 "$lport" 1024 64 - churn.test
}

atf_test_case forged_answers cleanup
forged_answers_head()
{
	atf_set descr "200,000 forged answers with random IDs, from the backend's address and port to the source ports earlier queries came from, reach no client once 1024 queries have gone by: the pool of ports those left by is closed"
	atf_set timeout 120
}
forged_answers_body()
{
	forged_run 200000 churn
	# the sessions that ended with an answer: the probes' and churn's
	atf_check -o inline:"1032\n" grep -c "session closed" relayd.log
}
forged_answers_cleanup()
{
	stop_all
}

# two seconds: the generation the probes left by is a second at most
# (what is tested is the time, so this waits for it)
idle()
{
	sleep 2
}

atf_test_case forged_answers_later cleanup
forged_answers_later_head()
{
	atf_set descr "100,000 forged answers to the ports of queries two seconds old, with no query between, reach no client: a pool of ports lasts a second"
	atf_set timeout 120
}
forged_answers_later_body()
{
	forged_run 100000 idle
	atf_check -o inline:"8\n" grep -c "session closed" relayd.log
}
forged_answers_later_cleanup()
{
	stop_all
}

atf_test_case pool_ports cleanup
pool_ports_head()
{
	atf_set descr "queries to a backend leave by a pool of up to 16 ports, not one and not one per query, and 1024 queries later by other ports"
	atf_set timeout 60
}
pool_ports_body()
{
	require_daemon
	port=$(start_dns one)
	dns_conf "127.0.0.1"
	start_relayd
	atf_check -o inline:"answered 3000 mismatched 0 lost 0\n" \
	    python3 "$DNSTOOL" client 127.0.0.1 "$lport" 3000 64
	wait_for 5 sh -c "[ \$(wc -l <one.port.sports) -ge 3000 ]" ||
	    atf_fail "the backend saw $(wc -l <one.port.sports) queries"
	head -n 500 one.port.sports | sort -u >first
	tail -n 500 one.port.sports | sort -u >last
	# a generation has 16 ports; a second, if one ended by time, 16 more
	n=$(wc -l <first)
	[ "$n" -ge 4 ] && [ "$n" -le 32 ] ||
	    atf_fail "the first 500 queries left by $n ports"
	# the kernel may give a port again, rarely
	same=$(comm -12 first last | wc -l)
	[ "$same" -le 2 ] ||
	    atf_fail "$same ports of the first 500 queries are the last 500's"
}
pool_ports_cleanup()
{
	stop_all
}

atf_test_case question_case cleanup
question_case_head()
{
	atf_set descr "an answer whose question differs from the query's only in letter case is another question: dropped, so a client's 0x20 check holds"
	atf_set timeout 30
}
question_case_body()
{
	require_daemon
	port=$(start_dns one)
	dns_conf "127.0.0.1" "session timeout 5"
	start_relayd
	atf_check -o match:"^answered 1 " \
	    python3 "$DNSTOOL" client 127.0.0.1 "$lport" 1 1 - lower.case.test
	atf_check -o match:"^answered 0 mismatched 0 lost 1" \
	    python3 "$DNSTOOL" client 127.0.0.1 "$lport" 1 1 - MiXeD.case.test
	wait_log 10 "datagrams dropped, the last an answer to another question" ||
	    atf_fail "no drop logged"
}
question_case_cleanup()
{
	stop_all
}

atf_test_case roundrobin cleanup
roundrobin_head()
{
	atf_set descr "mode roundrobin spreads queries over two backends in turn"
	atf_set timeout 60
}
roundrobin_body()
{
	require_daemon
	require_dig
	MODE="mode roundrobin" two_dns
	start_relayd
	for i in 1 2 3 4 5 6 7 8 9 10; do q "r$i.test" TXT; done >answers
	atf_check -o inline:"5\n" grep -c '"one"' answers
	atf_check -o inline:"5\n" grep -c '"two"' answers
}
roundrobin_cleanup()
{
	stop_all
}

atf_test_case backend_down cleanup
backend_down_head()
{
	atf_set descr "a backend killed: check tcp marks it down and queries go to the other one"
	atf_set timeout 60
}
backend_down_body()
{
	require_daemon
	require_dig
	INTERVAL=1 MODE="mode roundrobin" CHECK="check tcp" two_dns
	start_relayd
	wait_for 10 sh -c "[ \$(grep -c 'state unknown -> up' relayd.log) -ge 2 ]" ||
	    atf_fail "the hosts did not come up"
	kill "$(cat two.pid)"
	wait_log 10 "host 127.0.0.3, check tcp.*state up -> down" ||
	    atf_fail "the host did not go down: $(cat relayd.log)"
	for i in 1 2 3 4 5 6; do q "d$i.test" TXT; done >answers
	atf_check -o inline:"6\n" grep -c '"one"' answers
}
backend_down_cleanup()
{
	stop_all
}

atf_test_case timeout cleanup
timeout_head()
{
	atf_set descr "a query without an answer ends with the relay's session timeout (udp timeout) and is shown by show sessions until then"
	atf_set timeout 60
}
timeout_body()
{
	require_daemon
	require_dig
	port=$(start_dns one)
	dns_conf "127.0.0.1" "session timeout 3"
	start_relayd
	q slow.test A +time=6 >/dev/null &
	wait_for 5 grep -q slow.test one.port.ids || atf_fail "no query"
	atf_check -o match:"127\.0\.0\.1:[0-9]+ -> 127\.0\.0\.1:$port" \
	    "$RELAYCTL" -s "$PWD/relayd.sock" show sessions
	start=$(date +%s)
	wait_log 10 "^relay dns, session [0-9]* (1 active), 0, 127\.0\.0\.1 -> 127\.0\.0\.1:$port, udp timeout$" ||
	    atf_fail "no udp timeout: $(cat relayd.log)"
	took=$(($(date +%s) - start))
	[ "$took" -le 5 ] || atf_fail "the timeout took ${took}s"
	wait_for 5 sh -c "! '$RELAYCTL' -s '$PWD/relayd.sock' show sessions | grep -q ' -> '" ||
	    atf_fail "the session is still shown"
}
timeout_cleanup()
{
	stop_all
}

atf_test_case timeout_clock_step_back cleanup
timeout_clock_step_back_head()
{
	atf_set descr "a step back of the wall clock does not keep a query without an answer past the session timeout"
	atf_set timeout 60
}
timeout_clock_step_back_body()
{
	require_daemon
	require_dig
	port=$(start_dns one)
	dns_conf "127.0.0.1" "session timeout 3"
	# an hour back, 2 s after each process started: after the query
	# below was sent, before its deadline
	start_relayd_clockstep -1h 2
	q slow.test A +time=8 >/dev/null &
	wait_for 5 grep -q slow.test one.port.ids || atf_fail "no query"
	start=$(date +%s)
	wait_log 10 "^relay dns, session [0-9]* (1 active), 0, 127\.0\.0\.1 -> 127\.0\.0\.1:$port, udp timeout$" ||
	    atf_fail "no udp timeout: $(cat relayd.log)"
	took=$(($(date +%s) - start))
	[ "$took" -le 5 ] || atf_fail "the timeout took ${took}s"
}
timeout_clock_step_back_cleanup()
{
	stop_all
}

atf_test_case reload_in_flight cleanup
reload_in_flight_head()
{
	atf_set descr "queries under way when relayd reloads get their answers; the relay answers afterwards"
	atf_set timeout 60
}
reload_in_flight_body()
{
	require_daemon
	require_dig
	port=$(start_dns one)
	dns_conf "127.0.0.1"
	start_relayd
	q delay.test A +time=6 >delay.out &
	echo $! >dig.pid
	wait_for 5 grep -q delay.test one.port.ids || atf_fail "no query"
	atf_check -o ignore "$RELAYCTL" -s "$PWD/relayd.sock" reload
	wait_log 10 "reloading configuration" ||
	    atf_fail "no reload: $(cat relayd.log)"
	wait "$(cat dig.pid)"
	rm -f dig.pid
	atf_check -o inline:"192.0.2.1\n" cat delay.out
	atf_check -o inline:"192.0.2.1\n" dig @127.0.0.1 -p "$lport" +time=3 +tries=1 +short after.test A
}
reload_in_flight_cleanup()
{
	stop_all
}

atf_test_case bad_input cleanup
bad_input_head()
{
	atf_set descr "short and malformed datagrams, answers sent as queries and a flood of queries without answers: no crash, pending queries capped, one log line a second at most"
	atf_set timeout 120
}
bad_input_body()
{
	require_daemon
	require_dig
	port=$(start_dns one)
	dns_conf "127.0.0.1"
	sed -i "s/^log connection$//" relayd.conf
	start_relayd
	python3 - "$lport" <<'PY'
import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
to = ("127.0.0.1", int(sys.argv[1]))
bad = [b"", b"\x01", b"\x12\x34\x01\x00\x00", b"\x00" * 11,
       b"\x12\x34\x81\x80" + b"\x00" * 8,                  # an answer
       b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x3f",  # cut
       b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" + b"\x80abc"]
for i in range(2000):
    s.sendto(bad[i % len(bad)], to)
    s.sendto(os.urandom(i % 64), to)
PY
	atf_check -o inline:"192.0.2.1\n" dig @127.0.0.1 -p "$lport" +time=3 +tries=1 +short after.test A
	kill -0 "$(cat relayd.pid)" || atf_fail "relayd died"
	lines=$(grep -c "datagrams dropped" relayd.log)
	[ "$lines" -ge 1 ] && [ "$lines" -le 5 ] ||
	    atf_fail "$lines drop lines in the log"
	# more queries than may wait: the oldest end early
	python3 "$DNSTOOL" client 127.0.0.1 "$lport" 17000 17000 - slow.test \
	    >flood.out
	wait_log 10 "16384 queries waiting for answers, the oldest ended early" ||
	    atf_fail "no cap: $(tail -5 relayd.log)"
	n=$("$RELAYCTL" -s "$PWD/relayd.sock" show sessions | grep -c ' -> ')
	[ "$n" -le 16384 ] || atf_fail "$n sessions pending"
	atf_check -o inline:"192.0.2.1\n" dig @127.0.0.1 -p "$lport" +time=3 +tries=1 +short after2.test A
	kill -0 "$(cat relayd.pid)" || atf_fail "relayd died"
}
bad_input_cleanup()
{
	stop_all
}

atf_test_case af_mapping cleanup
af_mapping_head()
{
	atf_set descr "forward to <table> ... inet: a dns relay sends the queries for an IPv6 host to the IPv4 address of its last four bytes"
	atf_set timeout 60
}
af_mapping_body()
{
	require_daemon
	require_dig
	port=$(start_dns one)
	# ::7f00:1 is no address of this host; mapped, it is 127.0.0.1
	CHECK=inet dns_conf "::7f00:1"
	start_relayd
	q a.test TXT >answer
	atf_check -o inline:"\"one\"\n" cat answer
	wait_log 5 "^relay dns, session [0-9]* (" || atf_fail "no end line"
	atf_check -o match:"^relay dns, session [0-9]* \([0-9]* active\), 0, 127\.0\.0\.1 -> 127\.0\.0\.1:$port, session closed$" \
	    grep "^relay dns, session [0-9]* (" relayd.log
}
af_mapping_cleanup()
{
	stop_all
}

atf_test_case listen_both_families cleanup
listen_both_families_head()
{
	atf_set descr "a dns relay on 0.0.0.0 and on :: on one port starts, and answers over both"
	atf_set timeout 60
}
listen_both_families_body()
{
	require_daemon
	require_dig
	have_ipv6_loopback || atf_skip "no ::1 on this host"
	port=$(start_dns one)
	lport=$(freeport)
	cat >relayd.conf <<CONF
prefork 1
socket "$PWD/relayd.sock"
table <dns> { 127.0.0.1 }
dns protocol dnsp
relay dns {
	listen on 0.0.0.0 port $lport
	listen on :: port $lport
	protocol dnsp
	forward to <dns> port $port
}
CONF
	RELAYS=2 start_relayd
	q a.test TXT >answer4
	atf_check -o inline:"\"one\"\n" cat answer4
	dig @::1 -p "$lport" +time=3 +tries=1 +short b.test TXT >answer6
	atf_check -o inline:"\"one\"\n" cat answer6
}
listen_both_families_cleanup()
{
	stop_all
}

atf_init_test_cases()
{
	atf_add_test_case answers
	atf_add_test_case large_and_tcp
	atf_add_test_case ids
	atf_add_test_case spoofed
	atf_add_test_case forged_answers
	atf_add_test_case forged_answers_later
	atf_add_test_case pool_ports
	atf_add_test_case question_case
	atf_add_test_case roundrobin
	atf_add_test_case backend_down
	atf_add_test_case timeout
	atf_add_test_case timeout_clock_step_back
	atf_add_test_case reload_in_flight
	atf_add_test_case bad_input
	atf_add_test_case af_mapping
	atf_add_test_case listen_both_families
}
