#!/bin/sh
# getpromtool.sh DIR: promtool into DIR, out of Debian's prometheus
# package (downloaded, not installed: the package would start a server).
set -e
dir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get download prometheus >/dev/null 2>&1 || {
	apt-get update -qq && apt-get download prometheus >/dev/null 2>&1
}
dpkg-deb -x prometheus_*.deb x
cd - >/dev/null
mkdir -p "$dir"
cp "$work/x/usr/bin/promtool" "$dir/promtool"
"$dir/promtool" --version >/dev/null 2>&1
echo "make test-tools: promtool in $dir"
