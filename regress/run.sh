#!/bin/sh
# Run the kyua suite from regress/, show what failed, and end with the
# line CI reads: "N passed, N failed, N skipped".

cd "$(dirname "$0")" || exit 1

# The end-to-end tests run the real daemon: it needs its user.
if [ "$(id -u)" -eq 0 ]; then
	sh ../etc/mkuser.sh || exit 1
fi

results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
kyua --logfile="$results/kyua.log" test --results-file="$results/db" \
    >"$results/out" 2>&1
rc=$?
cat "$results/out"
# what failed, with its output, for CI's log: all but the execution context
kyua report --results-file="$results/db" --verbose \
    --results-filter=broken,failed 2>/dev/null |
    awk '/^===> / { show = ($0 != "===> Execution context") } show'

passed=$(grep -c -- '->  passed' "$results/out")
failed=$(grep -c -- '->  failed\|->  broken' "$results/out")
skipped=$(grep -c -- '->  skipped' "$results/out")
echo "$passed passed, $failed failed, $skipped skipped"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
