# Sourced by benchmarks that start a daemon of their own
# (reloadbench.sh, fwdtlsbench.sh; dnsbench.sh for tree_ticks).

# A new work directory in $work; when the script exits, the daemon
# ($rpid) and the processes in $pids are killed and $work goes.
bench_work()
{
	work=$(mktemp -d)
	pids="" rpid=""
	trap bench_cleanup EXIT
	trap 'exit 1' INT TERM
}

bench_cleanup()
{
	for _p in $rpid $pids; do kill "$_p" 2>/dev/null; done
	rm -rf "$work"
}

# tree_ticks PID: the CPU clock ticks (user and system) of PID and of its
# children so far; 0 for a process that is gone.
tree_ticks()
{
	_t=0
	for _q in $1 $(pgrep -P "$1"); do
		_v=$(awk '{ print $14 + $15 }' "/proc/$_q/stat" 2>/dev/null)
		_t=$((_t + ${_v:-0}))
	done
	echo "$_t"
}
