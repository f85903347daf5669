#!/bin/sh
# What health checks cost: 1,024 hosts (32 tables of 32 addresses in
# 127.1.0.0/16) checked over tcp every second against one listener, and
# the CPU time of relayd's hce process over SECONDS (default 30), as a
# share of one core.  make bench-hce; run as root.

cd "$(dirname "$0")" || exit 1
TOP=$(cd ../.. && pwd)
RELAYD=$TOP/usr.sbin/relayd/relayd
RTOOL=$TOP/regress/tools/rtool
SECONDS_RUN=${SECONDS_RUN:-30}

[ "$(id -u)" -eq 0 ] || { echo "hcebench: run as root" >&2; exit 1; }
[ -x "$RELAYD" ] && [ -x "$RTOOL" ] || { echo "hcebench: build first (make check)" >&2; exit 1; }
sh "$TOP/etc/mkuser.sh" || exit 1

work=$(mktemp -d)
pids=""
cleanup()
{
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

port=$("$RTOOL" freeport)
"$RTOOL" ident 0.0.0.0 "$port" up $((SECONDS_RUN + 30)) >/dev/null 2>&1 &
pids="$pids $!"

{
	echo "interval 1"
	echo "prefork 1"
	echo "socket \"$work/relayd.sock\""
	t=0
	while [ $t -lt 32 ]; do
		printf 'table <t%d> {' $t
		h=1
		while [ $h -le 32 ]; do
			printf ' 127.1.%d.%d' $t $h
			h=$((h + 1))
		done
		echo ' }'
		t=$((t + 1))
	done
	echo "relay r {"
	echo "	listen on 127.0.0.1 port $("$RTOOL" freeport)"
	t=0
	while [ $t -lt 32 ]; do
		echo "	forward to <t$t> port $port check tcp"
		t=$((t + 1))
	done
	echo "}"
} >"$work/relayd.conf"

"$RELAYD" -d -f "$work/relayd.conf" 2>"$work/relayd.log" &
pids="$pids $!"
parent=$!
i=0
until grep -q '^host ' "$work/relayd.log" 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 100 ] && { cat "$work/relayd.log" >&2; exit 1; }
	sleep 0.1
done
hce=""
for c in $(pgrep -P "$parent"); do
	case "$(tr '\0' ' ' <"/proc/$c/cmdline")" in
	*hce*)	hce=$c ;;
	esac
done
[ -n "$hce" ] || { echo "hcebench: no hce process" >&2; exit 1; }

# let the first rounds settle, then measure
sleep 3
t0=$(awk '{ print $14 + $15 }' "/proc/$hce/stat")
sleep "$SECONDS_RUN"
t1=$(awk '{ print $14 + $15 }' "/proc/$hce/stat")
up=$(grep -c 'state unknown -> up' "$work/relayd.log")
awk -v t=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" -v s="$SECONDS_RUN" \
    -v up="$up" 'BEGIN {
	printf "hce: 1024 hosts, check tcp every 1 s, %d up; %.2f CPU s in %d s = %.1f%% of one core\n",
	    up, t / hz, s, 100 * t / hz / s }'
