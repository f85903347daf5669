# Sourced by the benchmarks that make network namespaces of their own
# (shortconn.sh, rdrbench.sh): ME names the script in messages; the
# caller sets C, R, S and work, and adds to pids what it starts.  Its
# processes, namespaces and work directory go when it exits.

pids=""
cleanup()
{
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	for n in $C $R $S; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail()
{
	echo "$ME: $*" >&2
	exit 1
}

# readiness: $1 namespace, $2 address:port listening, 10 s at most
listening()
{
	i=0
	until ip netns exec "$1" ss -ltnH "src $2" | grep -q .; do
		i=$((i + 1))
		[ $i -gt 100 ] && return 1
		sleep 0.1
	done
}
