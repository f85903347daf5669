#!/bin/sh
# User-space instructions per TLS handshake, counted by valgrind's
# callgrind: relayd (its relay and ca processes apart), HAProxy, nginx and
# baretls (the key in the process, or in a child that signs), one worker
# each, under openssl s_time on 127.0.0.1.
#
#   instructions.sh [SECONDS]     (10 by default)
#   environment: KEYS="ec rsa" (ec by default), LOADS="new r13 r12",
#   ONLY="relayd haproxy nginx bare-ca bare-key bare-local" (all but
#   bare-local by default)
#
# new: s_time -new -tls1_3 (a full handshake); r13 and r12: -reuse
# -tls1_3 or -tls1_2 -www /1 (a resumed session and a 1-byte answer from
# the backend); baretls makes new handshakes only.  Each contender runs
# twice under each load, 2 + 1 and 2 + 1 + SECONDS seconds of s_time;
# the difference of the counts over the difference of the handshakes is
# the count per handshake.  Unlike CPU time on a shared machine, relayd's
# and nginx's counts repeat to within a percent (HAProxy's move by up to
# a tenth, with the rate of handshakes): they say how much code each
# proxy runs, not what the kernel, the scheduler and the caches cost it.
# relayd runs as the test build relayd-sbtest with
# RELAYD_SANDBOX_TEST=none: valgrind knows no seccomp.

cd "$(dirname "$0")" || exit 1
PERF=$(pwd)
TOP=$(cd ../.. && pwd)
RB=$PERF/relaybench
BARETLS=$PERF/baretls
RELAYD=$TOP/regress/daemon/relayd-sbtest
# shellcheck source=regress/perf/proxyconf.sh
. "$PERF/proxyconf.sh"
WORKERS=1
secs=${1:-10}
KEYS=${KEYS:-ec}
ONLY=${ONLY:-relayd haproxy nginx bare-ca bare-key}

[ "$(id -u)" -eq 0 ] || { echo "instructions: run as root" >&2; exit 1; }
command -v valgrind >/dev/null ||
    { echo "instructions: no valgrind (make bench-deps)" >&2; exit 1; }
sh "$TOP/etc/mkuser.sh" || exit 1
# relayd's children write their counts inside their chroot
chroot=$(getent passwd _relayd | cut -d: -f6)

work=$(mktemp -d)
# the first directory of $chroot$work not there yet goes at the end
made=$chroot$work
while [ ! -d "$(dirname "$made")" ]; do
	made=$(dirname "$made")
done
pids=""
cleanup()
{
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$work" "$made"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

"$RB" http "$work/http.port" 3600 & pids="$pids $!"
while [ ! -s "$work/http.port" ]; do
	sleep 0.1
done
HTTPB=$(cat "$work/http.port")
LS=$((20000 + $$ % 10000))
tls_keys || { echo "instructions: no keys" >&2; exit 1; }

# start WHO KEY OUT: WHO under callgrind, its counts in the directory OUT
start()
{
	mkdir -p "$3" "$chroot$3"
	chmod 1777 "$3" "$chroot$3"
	vg="valgrind -q --tool=callgrind --callgrind-out-file=$3/cg.%p"
	case $1 in
	relayd)
		tls_relayd_conf "$2"
		RELAYD_SANDBOX_TEST=none $vg --trace-children=yes "$RELAYD" \
		    -d -f "$work/relayd.conf" 2>"$work/proxy.log" & ;;
	haproxy)
		tls_haproxy_conf "$2"
		$vg haproxy -db -f "$work/haproxy.cfg" 2>"$work/proxy.log" & ;;
	nginx)
		tls_nginx_conf "$2"
		$vg nginx -e "$work/nginx.err" -c "$work/nginx.conf" \
		    -g 'daemon off; master_process off;' 2>"$work/proxy.log" & ;;
	bare-*)
		$vg "$BARETLS" "${1#bare-}" "$work/ssl/bench-$2.crt" \
		    "$work/ssl/private/bench-$2.key" $LS 2>"$work/proxy.log" & ;;
	esac
	ppid=$!
	i=0
	until "$RB" probe $LS 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 300 ] || ! kill -0 $ppid 2>/dev/null; then
			echo "instructions: $1 did not start" >&2
			cat "$work/proxy.log" >&2
			exit 1
		fi
		sleep 0.1
	done
}

# alive PID: running, not a zombie
alive()
{
	case $(ps -o stat= -p "$1" 2>/dev/null) in
	''|Z*)	return 1 ;;
	esac
	return 0
}

# stop WHO: the proxy leaves and callgrind writes its counts
stop()
{
	# SIGTERM: each of them leaves at once, not waiting for clients
	kill $ppid
	i=0
	while alive $ppid; do
		i=$((i + 1))
		if [ $i -gt 300 ]; then
			kill -KILL $ppid
			echo "instructions: $1 did not stop" >&2
			exit 1
		fi
		sleep 0.1
	done
	wait $ppid 2>/dev/null
	while "$RB" probe $LS 2>/dev/null; do
		sleep 0.1
	done
	# relayd's children may write theirs after the parent has gone
	i=0
	while pgrep -f "valgrind.*$work" >/dev/null && [ $i -lt 100 ]; do
		i=$((i + 1))
		sleep 0.1
	done
}

# counts WHO DIR: "ROLE OBJECT IR" for each process's each object file,
# ROLE relay or ca for relayd's, parent or child for baretls's, else all
counts()
{
	for f in "$2"/cg.* "$chroot$2"/cg.*; do
		[ -f "$f" ] || continue
		case $1 in
		relayd)	role=$(sed -n 's/^cmd:.* -P \([a-z]*\).*/\1/p' "$f")
			role=${role:-parent} ;;
		bare-*)	role=child
			[ "$f" = "$2/cg.$(cat "$2.pid")" ] && role=parent ;;
		*)	role=all ;;
		esac
		callgrind_annotate --threshold=100 --auto=no "$f" 2>/dev/null |
		    awk -v role="$role" '
		$2 ~ /^\(/ && $1 ~ /^[0-9,]+$/ && $0 !~ /PROGRAM TOTALS/ {
			n = $1; gsub(",", "", n)
			o = "?"
			if (match($0, /\[[^]]*\][ \t]*$/)) {
				o = substr($0, RSTART + 1, RLENGTH - 2)
				sub(/.*\//, "", o)
				sub(/\.so.*/, "", o)
				sub(/-[0-9.]*$/, "", o)
			}
			ir[o] += n
		}
		END { for (o in ir) print role, o, ir[o] }'
	done
}

# A load and its s_time arguments
loads=${LOADS:-new r13 r12}
stime_args()
{
	case $1 in
	new)	echo "-new -tls1_3" ;;
	r13)	echo "-reuse -tls1_3 -www /1" ;;
	r12)	echo "-reuse -tls1_2 -www /1" ;;
	esac
}

# run WHO KEY LOAD DIR SECS: WHO under callgrind, warmed up by 2 seconds
# of LOAD (its first handshakes pay for lazy set-ups), then SECS more of
# it; its counts to DIR.counts, its handshakes to DIR.n.  Two runs that
# differ only in SECS differ only in handshakes: as many starts, stops
# and s_time clients (whose first connection is a full handshake, even
# with -reuse).  A run in which s_time fails is no measurement (the
# proxy's counts hold a part of a handshake that s_time does not count):
# it is made again, three times at most.
run()
{
	try=1
	while :; do
		start "$1" "$2" "$4"
		echo $ppid >"$4.pid"
		if handshakes "$3" 2 >"$4.n" &&
		    handshakes "$3" "$5" >>"$4.n"; then
			break
		fi
		stop "$1"
		rm -f "$4"/cg.* "$chroot$4"/cg.*
		if [ $try -ge 3 ]; then
			echo "instructions: $1: s_time failed $try times" >&2
			exit 1
		fi
		try=$((try + 1))
		echo "instructions: $1: run again" >&2
	done
	stop "$1"
	counts "$1" "$4" >"$4.counts"
	# every process that takes part in a handshake wrote its counts
	case $1 in
	relayd)	want="relay ca" ;;
	bare-ca) want="parent child" ;;
	*)	want="" ;;
	esac
	for r in $want; do
		grep -q "^$r " "$4.counts" || {
			echo "instructions: no counts of $1's $r" >&2
			exit 1
		}
	done
}

# handshakes LOAD SECS: s_time's handshakes; 1, with what s_time and the
# proxy said, if s_time stopped at a connection that failed (it then
# gives no count).
handshakes()
{
	# shellcheck disable=SC2046
	openssl s_time -connect "127.0.0.1:$LS" $(stime_args "$1") \
	    -time "$2" >"$work/stime.out" 2>&1
	awk '/connections in .* real/ { n = $1 } END { exit !(n > 0) }' \
	    "$work/stime.out" || {
		echo "instructions: s_time $1 for $2 s failed:" >&2
		tail -n 5 "$work/stime.out" "$work/proxy.log" >&2
		return 1
	}
	awk '/connections in .* real/ { n = $1 } END { print n }' \
	    "$work/stime.out"
}

# One line per contender, load and key: the thousands of instructions
# per handshake in all, the split by process, and by object file
: >"$work/rows"
for k in $KEYS; do
	for who in $ONLY; do
		case $who in
		relayd|haproxy|nginx|bare-ca|bare-key|bare-local) ;;
		*)	echo "instructions: no contender $who" >&2; exit 1 ;;
		esac
		case $who in
		haproxy|nginx)
			command -v "$who" >/dev/null || {
				echo "  $who: not installed, skipped" >&2
				continue
			} ;;
		esac
		for l in $loads; do
			case $who/$l in
			bare-*/r1?) continue ;;
			esac
			d=$work/$who-$k-$l
			run "$who" "$k" "$l" "$d.w" 1
			run "$who" "$k" "$l" "$d" $((secs + 1))
			# the handshakes of the second run less the first's
			n=$(($(paste -sd+ "$d.n") - ($(paste -sd+ "$d.w.n"))))
			# the shorter run's counts, subtracted
			{ sed 's/^/i /' "$d.w.counts"; sed 's/^/r /' "$d.counts"; } |
			    awk -v n="${n:-0}" -v who="$who" -v k="$k" -v l="$l" '
			$1 == "i" { idle[$2 " " $3] += $4; seen[$2 " " $3] = 1 }
			$1 == "r" { ir[$2 " " $3] += $4; seen[$2 " " $3] = 1 }
			END {
				if (n == 0) {
					printf "%s %s %s 0\n", who, k, l
					exit
				}
				for (x in seen) {
					split(x, p, " ")
					v = (ir[x] - idle[x]) / n
					role[p[1]] += v
					obj[p[2]] += v
					all += v
				}
				printf "%s %s %s %d %.1f", who, k, l, n, all / 1000
				# processes and objects of 500 or more, largest first
				if (("relay" in role) || ("parent" in role))
					while (biggest(role) >= 500) {
						printf " %s=%.1f", m, mv / 1000
						delete role[m]
					}
				while (biggest(obj) >= 500) {
					printf " :%s=%.1f", m, mv / 1000
					delete obj[m]
				}
				printf "\n"
			}
			function biggest(a,   x) {
				m = ""; mv = 0
				for (x in a)
					if (m == "" || a[x] > mv) {
						m = x; mv = a[x]
					}
				return (m == "" ? 0 : mv)
			}' >>"$work/rows"
			echo "  $who $k $l done" >&2
		done
	done
done

# The table: per key and load, each contender's thousands of
# instructions per handshake, its processes, its biggest object files
echo "TLS: user-space instructions per handshake, thousands (valgrind's callgrind, openssl s_time for $secs s each)"
for k in $KEYS; do
	for l in $loads; do
		echo "$k, $(stime_args "$l"):"
		awk -v k="$k" -v l="$l" '
		$2 == k && $3 == l {
			if ($4 == 0) {
				printf "  %-9s no handshakes\n", $1
				next
			}
			procs = ""; objs = ""
			for (i = 6; i <= NF; i++) {
				if (substr($i, 1, 1) == ":")
					objs = objs " " substr($i, 2)
				else if ($i !~ /^all=/)
					procs = procs " " $i
			}
			printf "  %-9s %8.1f  (%d handshakes)%s\n", $1, $5, $4,
			    procs
			printf "  %9s by object:%s\n", "", objs
		}' "$work/rows"
	done
done
