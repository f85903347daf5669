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

# The namespaces C, R and S, joined by two veth pairs:
#   client 10.$1.1.2 --- 10.$1.1.1 relay 10.$1.2.1 --- 10.$1.2.2 server
# with the client's and the server's default routes through the relay.
ns_triangle()
{
	for n in $C $R $S; do
		ip netns add $n || fail "netns $n"
		ip -n $n link set lo up
	done
	ip link add c$id type veth peer name r$id || fail "veth"
	ip link add s$id type veth peer name q$id || fail "veth"
	ip link set c$id netns $C
	ip link set r$id netns $R
	ip link set s$id netns $S
	ip link set q$id netns $R
	ip -n $C addr add 10.$1.1.2/24 dev c$id
	ip -n $R addr add 10.$1.1.1/24 dev r$id
	ip -n $R addr add 10.$1.2.1/24 dev q$id
	ip -n $S addr add 10.$1.2.2/24 dev s$id
	ip -n $C link set c$id up
	ip -n $R link set r$id up
	ip -n $R link set q$id up
	ip -n $S link set s$id up
	ip -n $C route add default via 10.$1.1.1
	ip -n $S route add default via 10.$1.2.1
}
