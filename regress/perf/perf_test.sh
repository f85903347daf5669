#! /usr/bin/env atf-sh
# The benchmark's load tool at tiny sizes, so that it cannot rot; the
# benchmark itself is 'make bench', never part of the tests.

RB="$(atf_get_srcdir)/relaybench"
BARE="$(atf_get_srcdir)/barerelay"
BARETLS="$(atf_get_srcdir)/baretls"

start()
{
	"$RB" "$1" "$PWD/$1.port" 60 >/dev/null 2>&1 &
	echo $! >"$1.pid"
	i=0
	while [ ! -s "$1.port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	cat "$1.port"
}

atf_test_case modes cleanup
modes_head()
{
	atf_set descr "every mode of relaybench runs and reports, direct on loopback"
	atf_set timeout 60
}
modes_body()
{
	sink=$(start sink)
	echo=$(start echo)
	atf_check "$RB" probe "$sink"
	atf_check -o match:"^[0-9]+\.[0-9]+\$" "$RB" tput "$sink" 1 1048576
	atf_check -o match:"^[0-9]+\.[0-9]+\$" "$RB" tput "$sink" 4 262144
	atf_check -o match:"^[0-9]+ [0-9]+\$" "$RB" rtt "$echo" 100
	atf_check -o match:"^[1-9][0-9]* 0\$" "$RB" conn "$echo" 1 2
	atf_check -o inline:"ready\n" -s signal:14 "$RB" idle "$echo" 10 1
}
modes_cleanup()
{
	for p in sink.pid echo.pid; do
		[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	return 0
}

atf_test_case bare cleanup
bare_head()
{
	atf_set descr "the bare reference relay moves bytes with each engine"
	atf_set timeout 60
}
bare_body()
{
	sink=$(start sink)
	echo=$(start echo)
	lt=$((20000 + $$ % 10000))
	for engine in copy pipe; do
		"$BARE" $engine $lt "$sink" $((lt + 1)) "$echo" 2>bare.err &
		echo $! >bare.pid
		i=0
		until "$RB" probe $lt 2>/dev/null; do
			i=$((i + 1))
			[ $i -gt 50 ] && atf_fail "barerelay $engine: $(cat bare.err)"
			sleep 0.1
		done
		atf_check -o match:"^[0-9]+\.[0-9]+\$" "$RB" tput $lt 4 1048576
		atf_check -o match:"^[0-9]+ [0-9]+\$" "$RB" rtt $((lt + 1)) 100
		kill "$(cat bare.pid)"
		wait "$(cat bare.pid)" 2>/dev/null
		rm bare.pid
	done
}
bare_cleanup()
{
	for p in sink.pid echo.pid bare.pid; do
		[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	return 0
}

atf_test_case baretls cleanup
baretls_head()
{
	atf_set descr "the bare TLS server shakes hands in each mode, with each kind of key"
	atf_set timeout 60
}
baretls_body()
{
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout ec.key -out ec.crt -days 1 -subj /CN=127.0.0.1 2>/dev/null ||
	    atf_fail "no EC key"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout rsa.key \
	    -out rsa.crt -days 1 -subj /CN=127.0.0.1 2>/dev/null ||
	    atf_fail "no RSA key"
	lt=$((20000 + $$ % 10000))
	for k in ec:ECDSA rsa:RSA-PSS; do
		for mode in key local ca; do
			"$BARETLS" $mode ${k%:*}.crt ${k%:*}.key $lt 2>bare.err &
			echo $! >bare.pid
			i=0
			until "$RB" probe $lt 2>/dev/null; do
				i=$((i + 1))
				[ $i -gt 50 ] &&
				    atf_fail "baretls $mode ${k%:*}: $(cat bare.err)"
				sleep 0.1
			done
			# ca: the key is in the child, which signs
			if [ $mode = ca ]; then
				atf_check -o match:"^[0-9]+\$" \
				    pgrep -P "$(cat bare.pid)"
			fi
			for v in 1_2 1_3; do
				atf_check -o match:"Peer signature type: ${k#*:}" \
				    -o match:"Verify return code: 18" \
				    -e ignore -x "echo | openssl s_client \
				    -connect 127.0.0.1:$lt -tls$v"
			done
			kill "$(cat bare.pid)"
			wait "$(cat bare.pid)" 2>/dev/null
			rm bare.pid
		done
	done
}
baretls_cleanup()
{
	[ -f bare.pid ] && kill "$(cat bare.pid)" 2>/dev/null
	return 0
}

atf_init_test_cases()
{
	atf_add_test_case modes
	atf_add_test_case bare
	atf_add_test_case baretls
}
