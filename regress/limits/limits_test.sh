#! /usr/bin/env atf-sh
# Limits per client source (max-src-conn, max-src-conn-rate, overload):
# in nftables, in a network namespace of the test's own with its
# loopback (sources 127.0.0.2 and up, fd63:: addresses), and in the relay
# processes of a relayd without CAP_NET_ADMIN, on 127.0.0.0/8 here.
# Clients are regress/tools/limtool.py, the backend rtool's echo server.

. "$(atf_get_srcdir)/../lib.sh"

LIMTOOL=$TOP/regress/tools/limtool.py

# A namespace with its loopback up and the test's IPv6 sources; $NS.
setup_lim_ns()
{
	require_netns
	NS=rdlim$$
	ip netns add "$NS" || atf_fail "netns"
	echo "$NS" >>ns.list
	ip -n "$NS" link set lo up
	for _a in fd63::1 fd63::a fd63::b fd63:0:0:1::a; do
		ip -n "$NS" addr add "$_a/128" dev lo nodad ||
		    atf_fail "address $_a"
	done
}

# In the namespace, or here without one (ip netns exec execs: a
# program started so in the background has its pid in $!).
in_ns()
{
	if [ -n "${NS:-}" ]; then
		ip netns exec "$NS" "$@"
	else
		"$@"
	fi
}
nsx()
{
	[ -n "${NS:-}" ] && echo "ip netns exec $NS"
}

# An echo backend on 127.0.0.1 ($bport), a relay r on $lport with the
# limits in $1, on 127.0.0.1 and, with $2, ::1 too.
lim_start()
{
	rm -f echo.port
	# shellcheck disable=SC2046
	$(nsx) "$RTOOL" echo "$PWD/echo.port" 120 >echo.out 2>&1 &
	echo $! >echo.pid
	wait_for 10 test -s echo.port || atf_fail "the backend did not start"
	bport=$(cat echo.port)
	lport=$(freeport)
	{
		conf_head | sed "s/^prefork 1\$/prefork ${PREFORK:-1}/"
		cat <<CONF
relay r {
	listen on 127.0.0.1 port $lport
	${2:+listen on fd63::1 port $lport}
	forward to 127.0.0.1 port $bport
	$1
}
CONF
	} >relayd.conf
	lim_run
}

# lim_run: relayd on relayd.conf, in $NS if set, without CAP_NET_ADMIN
# if $CAPDROP is
lim_run()
{
	: >relayd.log
	if [ -n "${CAPDROP:-}" ]; then
		# root without CAP_NET_ADMIN: nftables is out of reach
		capsh --drop=cap_net_admin -- -c 'exec "$0" "$@"' \
		    "$RELAYD" -dv -f relayd.conf 2>>relayd.log &
	else
		# shellcheck disable=SC2046
		$(nsx) "$RELAYD" -dv -f relayd.conf 2>>relayd.log &
	fi
	echo $! >relayd.pid
	RELAYS=${RELAYS:-1} wait_started
}

# Everything the test started, in its namespace too, and the namespace.
lim_cleanup()
{
	stop_all
	if [ -f ns.list ]; then
		while read -r _ns; do
			ip netns pids "$_ns" 2>/dev/null | xargs -r kill -9
		done <ns.list
	fi
	cleanup_ns
}

lim()
{
	in_ns python3 "$LIMTOOL" "$@"
}

# lim_is WANT ARGS: lim's answer must be WANT
lim_is()
{
	_want=$1
	shift
	_got=$(lim "$@")
	[ "$_got" = "$_want" ] || atf_fail "limtool $*: \"$_got\", not \"$_want\""
}

# lim in the background, its pid in NAME.pid, its output in NAME.out
lim_bg()
{
	_name=$1
	shift
	# shellcheck disable=SC2046
	$(nsx) python3 "$LIMTOOL" "$@" >"$_name.out" &
	echo $! >"$_name.pid"
}

# The relay's rules in the kernel
# status_has RE: relayctl status says it, within 10 s (the parent reads
# the kernel's counts each second)
status_has()
{
	wait_for 10 sh -c "'$RELAYCTL' -s '$PWD/relayd.sock' status |
	    grep -q '$1'" || atf_fail "status: $(relayctl status)"
}

# lim_gone: relayd stops, and its nftables table goes with it
lim_gone()
{
	stop_all
	in_ns nft list table inet relayd_limit >/dev/null 2>&1 &&
	    atf_fail "the table stayed after relayd"
	return 0
}

lim_chain()
{
	in_ns nft list chain inet relayd_limit in 2>/dev/null
}

atf_test_case kernel_conn cleanup
kernel_conn_head()
{
	atf_set "descr" "max-src-conn in nftables: a source over it is refused, ten others are served, and the table goes with relayd"
	atf_set "require.user" "root"
}
kernel_conn_body()
{
	setup_lim_ns
	PREFORK=1 lim_start "max-src-conn 3"
	lim_chain | grep -q "ct count over 3" ||
	    atf_fail "no rule: $(lim_chain)"
	lim_bg hold hold 127.0.0.1 "$lport" 127.0.0.2 5 10
	wait_for 10 grep -q "^ok" hold.out || atf_fail "the client hangs"
	atf_check -o inline:"ok 3 refused 2\n" head -1 hold.out
	# as pf does: the SYN is dropped, not answered with a reset
	lim_is "dropped" probe 127.0.0.1 "$lport" 127.0.0.2
	# ten others, while the first holds its three
	_srcs=""
	for _i in 10 11 12 13 14 15 16 17 18 19; do
		_srcs="$_srcs 127.0.0.$_i"
	done
	# shellcheck disable=SC2086
	lim good 127.0.0.1 "$lport" 3 $_srcs >good.out
	cat good.out >&2
	atf_check -o match:"^ok 30 refused 0 " cat good.out
	# the kernel refused them (the probe too: 3)
	in_ns nft list counters table inet relayd_limit | grep -A1 "_conn" |
	    grep -q "packets [1-9]" || atf_fail "no refusal counted"
	# relayctl status and the metrics have the kernel's count
	status_has 'refused: 3 over max-src-conn, 0 over max-src-conn-rate, 0 in'
	lim_gone
}
kernel_conn_cleanup()
{
	lim_cleanup
}

atf_test_case kernel_rate cleanup
kernel_rate_head()
{
	atf_set "descr" "max-src-conn-rate and overload in nftables: a source over the rate is refused, goes into the table until it expires; another is served"
	atf_set "require.user" "root"
}
kernel_rate_body()
{
	setup_lim_ns
	# A refused connection costs limtool its 0.5 s: the checks made
	# while 127.0.0.2 is in <bad> take about 1.5 s of its 6.
	PREFORK=1 lim_start "max-src-conn-rate 5/10
	overload <bad> expire 6"
	lim_is "ok 5 refused 1" burst 127.0.0.1 "$lport" 127.0.0.2 6
	in_ns nft list set inet relayd_limit "$(in_ns nft list sets \
	    table inet relayd_limit | sed -n 's/.*set \(ovl_[^ ]*_4\) .*/\1/p')" |
	    grep -q "127.0.0.2" || atf_fail "127.0.0.2 is not in <bad>"
	lim_is "ok 5 refused 0" burst 127.0.0.1 "$lport" 127.0.0.3 5
	# <bad> refuses it while it is there (its counter, not the rate's),
	# then it is a source again
	lim_is "ok 0 refused 1" burst 127.0.0.1 "$lport" 127.0.0.2 1
	in_ns nft list counters table inet relayd_limit |
	    grep -A1 "counter c_.*_ovl " | grep -q "packets [1-9]" ||
	    atf_fail "the overload table's counter is 0"
	wait_for 15 sh -c "ip netns exec $NS python3 '$LIMTOOL' burst \
	    127.0.0.1 $lport 127.0.0.2 1 | grep -q 'ok 1'" ||
	    atf_fail "127.0.0.2 is still refused after its 6 s"
}
kernel_rate_cleanup()
{
	lim_cleanup
}

atf_test_case kernel_prefork cleanup
kernel_prefork_head()
{
	atf_set "descr" "max-src-conn holds across three relay processes"
	atf_set "require.user" "root"
}
kernel_prefork_body()
{
	setup_lim_ns
	PREFORK=3 lim_start "max-src-conn 4"
	lim_bg hold hold 127.0.0.1 "$lport" 127.0.0.2 8 10
	wait_for 10 grep -q "^ok" hold.out || atf_fail "the client hangs"
	atf_check -o inline:"ok 4 refused 4\n" head -1 hold.out
}
kernel_prefork_cleanup()
{
	lim_cleanup
}

atf_test_case kernel_ipv6_prefix cleanup
kernel_ipv6_prefix_head()
{
	atf_set "descr" "IPv6 sources count by their /64: two addresses of one share a limit, another /64 has its own"
	atf_set "require.user" "root"
}
kernel_ipv6_prefix_body()
{
	setup_lim_ns
	PREFORK=1 lim_start "max-src-conn 2" v6
	lim_bg a hold fd63::1 "$lport" fd63::a 1 10
	wait_for 10 grep -q "^ok" a.out || atf_fail "the client hangs"
	atf_check -o inline:"ok 1 refused 0\n" head -1 a.out
	lim_bg b hold fd63::1 "$lport" fd63::b 2 10
	wait_for 10 grep -q "^ok" b.out || atf_fail "the client hangs"
	atf_check -o inline:"ok 1 refused 1\n" head -1 b.out
	lim_is "ok 2 refused 0" burst fd63::1 "$lport" fd63:0:0:1::a 2
}
kernel_ipv6_prefix_cleanup()
{
	lim_cleanup
}

atf_test_case kernel_flush cleanup
kernel_flush_head()
{
	atf_set "descr" "overload ... flush: the sessions of a source the kernel put in the table end"
	atf_set "require.user" "root"
}
kernel_flush_body()
{
	setup_lim_ns
	PREFORK=1 lim_start "max-src-conn 3
	overload <bad> flush"
	lim_bg hold hold 127.0.0.1 "$lport" 127.0.0.2 3 20
	lim_bg other hold 127.0.0.1 "$lport" 127.0.0.3 2 20
	wait_for 10 grep -q "^ok 3" hold.out || atf_fail "not held"
	wait_for 10 grep -q "^ok 2" other.out || atf_fail "not held"
	# a fourth: over max-src-conn, into <bad>, and its three end
	lim_is "ok 0 refused 1" burst 127.0.0.1 "$lport" 127.0.0.2 1
	wait_for 10 grep -q "^closed 3" hold.out ||
	    atf_fail "the sessions of 127.0.0.2 were not flushed"
	atf_check -o match:"overload flush" cat relayd.log
	grep -q "^closed" other.out && atf_fail "127.0.0.3 was flushed too"
	# relayctl shows it, and takes it out
	atf_check -o match:"^<bad>	127.0.0.2/32	expires in [0-9]+s	nftables$" \
	    "$RELAYCTL" -s "$PWD/relayd.sock" show overload
	atf_check -o ignore "$RELAYCTL" -s "$PWD/relayd.sock" overload delete \
	    "<bad>" 127.0.0.2
	atf_check -o empty "$RELAYCTL" -s "$PWD/relayd.sock" show overload
	lim_is "ok 1 refused 0" burst 127.0.0.1 "$lport" 127.0.0.2 1
}
kernel_flush_cleanup()
{
	lim_cleanup
}

atf_test_case kernel_reload cleanup
kernel_reload_head()
{
	atf_set "descr" "a reload keeps the overload table and takes the new limits"
	atf_set "require.user" "root"
}
kernel_reload_body()
{
	setup_lim_ns
	PREFORK=1 lim_start "max-src-conn-rate 2/60
	overload <bad> expire 60"
	lim_is "ok 2 refused 1" burst 127.0.0.1 "$lport" 127.0.0.2 3
	sed -i 's|max-src-conn-rate 2/60|max-src-conn-rate 3/60|' relayd.conf
	in_ns "$RELAYCTL" -s "$PWD/relayd.sock" reload >/dev/null ||
	    atf_fail "no reload"
	lim_chain | grep -q "limit rate over 3/minute" ||
	    atf_fail "the new rate is not there: $(lim_chain)"
	# still in <bad>: refused
	lim_is "ok 0 refused 1" burst 127.0.0.1 "$lport" 127.0.0.2 1
	lim_is "ok 3 refused 1" burst 127.0.0.1 "$lport" 127.0.0.3 4
	# two reloads during a flood of 127.0.0.9: relayd goes on, the
	# limits hold, another source is served
	lim_bg flood flood 127.0.0.1 "$lport" 127.0.0.9 2000
	for _i in 1 2; do
		in_ns "$RELAYCTL" -s "$PWD/relayd.sock" reload >/dev/null ||
		    atf_fail "no reload during the flood"
	done
	wait_for 60 grep -q "^ok" flood.out || atf_fail "the flood hangs"
	atf_check -o match:"^ok 3 refused 1997" cat flood.out
	lim_is "ok 3 refused 0" burst 127.0.0.1 "$lport" 127.0.0.4 3
	kill -0 "$(cat relayd.pid)" || atf_fail "relayd died"
}
kernel_reload_cleanup()
{
	lim_cleanup
}

atf_test_case process_limits cleanup
process_limits_head()
{
	atf_set "descr" "without CAP_NET_ADMIN the relay process counts: a warning, max-src-conn, the rate, overload and flush"
	atf_set "require.user" "root"
}
process_limits_body()
{
	require_daemon
	command -v capsh >/dev/null ||
	    atf_skip "no capsh (make deps installs libcap2-bin)"
	NS=
	CAPDROP=1 PREFORK=1 lim_start "max-src-conn 3
	overload <bad> flush expire 60"
	atf_check -o match:"relay r: its limits per source are counted by each of its 1 relay processes apart" \
	    cat relayd.log
	lim_bg hold hold 127.0.0.1 "$lport" 127.0.0.2 4 20
	lim_bg other hold 127.0.0.1 "$lport" 127.0.0.3 3 20
	wait_for 10 grep -q "^ok" hold.out || atf_fail "the client hangs"
	wait_for 10 grep -q "^ok" other.out || atf_fail "the client hangs"
	atf_check -o inline:"ok 3 refused 1\n" head -1 hold.out
	atf_check -o inline:"ok 3 refused 0\n" head -1 other.out
	# the fourth went over max-src-conn: <bad> took it, flushed its three
	wait_for 10 grep -q "^closed 3" hold.out ||
	    atf_fail "the sessions of 127.0.0.2 were not flushed"
	lim_is "ok 0 refused 1" burst 127.0.0.1 "$lport" 127.0.0.2 1
	grep -q "^closed" other.out && atf_fail "127.0.0.3 was flushed too"
	atf_check -o match:"^<bad>	127.0.0.2/32	expires in [0-9]+s	relay process [0-9]+$" \
	    "$RELAYCTL" -s "$PWD/relayd.sock" show overload
	atf_check -o ignore "$RELAYCTL" -s "$PWD/relayd.sock" overload flush bad
	atf_check -o empty "$RELAYCTL" -s "$PWD/relayd.sock" show overload
	lim_is "ok 1 refused 0" burst 127.0.0.1 "$lport" 127.0.0.2 1
	atf_check -o match:"127.0.0.2 refused" cat relayd.log
	wait_for 10 sh -c "'$RELAYCTL' -s '$PWD/relayd.sock' status |
	    grep -q 'refused: 1 over max-src-conn, 0 over max-src-conn-rate, 1 in'" ||
	    atf_fail "status: $(relayctl status)"
	nft list table inet relayd_limit >/dev/null 2>&1 &&
	    atf_fail "a table without CAP_NET_ADMIN"
	stop_all
	# the rate, apart (max-src-conn would race the closes of a burst)
	CAPDROP=1 PREFORK=1 lim_start "max-src-conn-rate 3/60"
	lim_is "ok 3 refused 2" burst 127.0.0.1 "$lport" 127.0.0.4 5
	lim_is "ok 3 refused 0" burst 127.0.0.1 "$lport" 127.0.0.5 3
}
process_limits_cleanup()
{
	stop_all
}

# codes SRC N: the status codes of N requests from SRC, a connection each
codes()
{
	_i=0
	while [ $_i -lt "$2" ]; do
		curl -s -o /dev/null -w "%{http_code}\n" --interface "$1" \
		    "http://127.0.0.1:$lport/bytes/10"
		_i=$((_i + 1))
	done
}

atf_test_case http_request_rate cleanup
http_request_rate_head()
{
	atf_set "descr" "max-src-request-rate: over it a request gets 429 with Retry-After and the connection stays; a source meets one of three relay processes, so its count holds across them"
	atf_set "require.user" "root"
}
http_request_rate_body()
{
	require_daemon
	command -v curl >/dev/null || atf_skip "no curl (make deps installs it)"
	start_httpd
	lport=$(freeport)
	{
		conf_head | sed "s/^prefork 1\$/prefork 3/"
		cat <<CONF
http protocol p {
	return error
}
relay r {
	listen on 127.0.0.1 port $lport
	protocol p
	forward to 127.0.0.1 port $bport
	max-src-request-rate 5/60
}
CONF
	} >relayd.conf
	PREFORK=3 start_relayd
	# twelve connections of one source: five answers, seven 429s
	codes 127.0.0.2 12 >codes.out
	atf_check -o inline:"5\n" grep -c "^200$" codes.out
	atf_check -o inline:"7\n" grep -c "^429$" codes.out
	# another source has its own five, on one connection; the
	# 429s that follow keep it, and say when to come back; after a
	# 429 the connection is read again a second later
	_urls=""
	for _i in 1 2 3 4 5 6 7; do
		_urls="$_urls -o /dev/null http://127.0.0.1:$lport/bytes/10"
	done
	# shellcheck disable=SC2086
	curl -s -D heads.out --interface 127.0.0.3 \
	    -w "%{http_code} %{num_connects} %{time_total}\n" $_urls >keep.out
	atf_check -o inline:"5\n" grep -c "^200 " keep.out
	atf_check -o inline:"2\n" grep -c "^429 0 " keep.out
	_m=$(held429 keep.out) || atf_fail "$_m"
	atf_check -o match:"^Retry-After: [0-9]+" tr -d "\r" <heads.out
	atf_check -o match:"over max-src-request-rate" cat relayd.log
	wait_for 10 sh -c "'$RELAYCTL' -s '$PWD/relayd.sock' status |
	    grep -q 'refused:.* 9 over max-src-request-rate'" ||
	    atf_fail "status: $(relayctl status)"
	# a reload keeps the group and the counts: still over
	relayctl reload >/dev/null || atf_fail "no reload"
	codes 127.0.0.2 3 >again.out
	atf_check -o inline:"3\n" grep -c "^429$" again.out
	atf_check -s exit:1 -o ignore grep "counts the requests of its clients apart" relayd.log
}
http_request_rate_cleanup()
{
	stop_all
}

# dns_lim_start: a DNS server, and a dns relay of three processes in
# front of it with max-src-request-rate 5/60 (in $NS, if set)
dns_lim_start()
{
	rm -f dns.port
	# shellcheck disable=SC2046
	$(nsx) python3 "$TOP/regress/tools/dnstool.py" server "$PWD/dns.port" \
	    one 127.0.0.1 120 >dns.out 2>&1 &
	echo $! >dns.pid
	wait_for 10 test -s dns.port || atf_fail "the DNS server did not start"
	lport=$(freeport)
	{
		conf_head | sed "s/^prefork 1\$/prefork 3/"
		cat <<CONF
dns protocol d
relay r {
	listen on 127.0.0.1 port $lport
	protocol d
	forward to 127.0.0.1 port $(cat dns.port)
	max-src-request-rate 5/60
}
CONF
	} >relayd.conf
	PREFORK=3 lim_run
}

atf_test_case dns_query_rate cleanup
dns_query_rate_head()
{
	atf_set "descr" "max-src-request-rate on a dns relay, in nftables: a source's queries over it are dropped before a relay process reads them, and counted; another source is answered"
	atf_set "require.user" "root"
}
dns_query_rate_body()
{
	setup_lim_ns
	dns_lim_start
	lim_chain | grep -q "udp dport $lport .*limit rate over 5/minute" ||
	    atf_fail "no rule: $(lim_chain)"
	lim_is "answered 5 dropped 5" dns 127.0.0.1 "$lport" 127.0.0.2 10
	lim_is "answered 5 dropped 0" dns 127.0.0.1 "$lport" 127.0.0.3 5
	# the kernel dropped them: its counter, and no relay process saw them
	in_ns nft list counters table inet relayd_limit |
	    grep -A1 "counter c_.*_req " | grep -q "packets 5 " ||
	    atf_fail "counters: $(in_ns nft list counters table inet relayd_limit)"
	grep -q "over max-src-request-rate" relayd.log &&
	    atf_fail "a relay process counted them too"
	status_has 'refused:.* 5 over max-src-request-rate'
	lim_gone
}
dns_query_rate_cleanup()
{
	lim_cleanup
}

atf_test_case dns_query_rate_process cleanup
dns_query_rate_process_head()
{
	atf_set "descr" "max-src-request-rate on a dns relay without CAP_NET_ADMIN: the relay processes drop and count a source's queries over it, across three of them; another source is answered"
	atf_set "require.user" "root"
}
dns_query_rate_process_body()
{
	require_daemon
	command -v capsh >/dev/null ||
	    atf_skip "no capsh (make deps installs libcap2-bin)"
	NS=
	CAPDROP=1 dns_lim_start
	lim_is "answered 5 dropped 5" dns 127.0.0.1 "$lport" 127.0.0.2 10
	lim_is "answered 5 dropped 0" dns 127.0.0.1 "$lport" 127.0.0.3 5
	atf_check -o match:"127.0.0.2 over max-src-request-rate, 1 queries dropped" \
	    cat relayd.log
	status_has 'refused:.* 5 over max-src-request-rate'
	nft list table inet relayd_limit >/dev/null 2>&1 &&
	    atf_fail "a table without CAP_NET_ADMIN"
	return 0
}
dns_query_rate_process_cleanup()
{
	stop_all
}

atf_init_test_cases()
{
	atf_add_test_case kernel_conn
	atf_add_test_case kernel_rate
	atf_add_test_case kernel_prefork
	atf_add_test_case kernel_ipv6_prefix
	atf_add_test_case kernel_flush
	atf_add_test_case kernel_reload
	atf_add_test_case process_limits
	atf_add_test_case http_request_rate
	atf_add_test_case dns_query_rate
	atf_add_test_case dns_query_rate_process
}
