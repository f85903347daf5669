#!/bin/sh
# make run: a demo backend on 127.0.0.1:8081 and relayd in the foreground
# on etc/relayd.conf, relaying 127.0.0.1:8080 and 8082 to it.

cd "$(dirname "$0")/.." || exit 1
top=$(pwd)

if [ "$(id -u)" -ne 0 ]; then
	echo "make run: relayd needs root (it drops privileges itself)" >&2
	exit 1
fi
sh etc/mkuser.sh || exit 1
make --no-print-directory regress/tools/rtool >/dev/null || exit 1

regress/tools/rtool http 8081 &
backend=$!
trap 'kill $backend 2>/dev/null' EXIT INT TERM

cat <<TXT
relayd relays 127.0.0.1:8080 to a demo backend on 127.0.0.1:8081, and
127.0.0.1:8082 to it through an http protocol with filter rules.
In another terminal, try:

    curl http://127.0.0.1:8080/
    curl -i http://127.0.0.1:8082/
    curl -i http://127.0.0.1:8082/private/x
    $top/usr.sbin/relayctl/relayctl status
    $top/usr.sbin/relayctl/relayctl show sessions

Stop with ^C.
TXT
"$top/usr.sbin/relayd/relayd" -n -f etc/relayd.conf || exit 1
"$top/usr.sbin/relayd/relayd" -d -f etc/relayd.conf
