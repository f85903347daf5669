#! /usr/bin/env atf-sh
# The compatibility corpus: every corpus/NAME.conf is run through
# relayd -nv; what it prints on stdout (the parsed configuration) must
# be corpus/NAME.out, what it prints on stderr corpus/NAME.err, and it
# exits 0 only when that ends with "configuration OK".

. "$(atf_get_srcdir)/../lib.sh"

corpus_run()
{
	_dir=$(atf_get_srcdir)/corpus
	_exit=1
	tail -n 1 "$_dir/$1.err" | grep -qx "configuration OK" && _exit=0
	# file names in the messages are relative to the corpus
	cd "$_dir" || atf_fail "no corpus"
	_out=/dev/null
	[ -f "$1.out" ] && _out=$1.out
	atf_check -s exit:$_exit -o file:"$_out" -e file:"$1.err" \
	    "$RELAYD" -nv -f "$1.conf"
}

atf_init_test_cases()
{
	for _f in "$(atf_get_srcdir)"/corpus/*.conf; do
		_n=$(basename "$_f" .conf)
		_c=$(echo "$_n" | tr -c 'a-zA-Z0-9_\n' '_')
		atf_test_case "$_c"
		eval "${_c}_head() { atf_set descr 'relayd -nv -f corpus/$_n.conf'; }"
		eval "${_c}_body() { corpus_run '$_n'; }"
		atf_add_test_case "$_c"
	done
}
