# Sourced by the benchmarks that read a daemon's CPU (reloadbench.sh,
# fwdtlsbench.sh, dnsbench.sh).

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
