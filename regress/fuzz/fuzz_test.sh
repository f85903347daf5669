#! /usr/bin/env atf-sh
# The fuzz targets build and run: the parser's over the compatibility
# corpus, the imsg framing's from nothing, the control socket's from one
# request of each kind, the HTTP parser's from a few messages, the PROXY header parser's
# from a few headers, the DNS parser's from a few messages, the
# ClientHello reader's from a few hellos, the HTTP/2 backends' from a
# few answers, briefly,
# so make fuzz keeps working.  The long runs are make fuzz's.

. "$(atf_get_srcdir)/../lib.sh"

atf_test_case smoke
smoke_head()
{
	atf_set descr "the parse, imsg, control, http, pp, dns, agentx, h2, h2b, hello and h2check fuzz targets build with clang and ASan and run clean"
	atf_set timeout 300
}
smoke_body()
{
	command -v clang >/dev/null 2>&1 || atf_skip "no clang (make fuzz installs it)"
	ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a \
	    >/dev/null 2>&1 ||
	    atf_skip "no libFuzzer runtime (make fuzz installs libclang-rt-14-dev)"
	_dir=$(atf_get_srcdir)
	make -s -C "$TOP" usr.sbin/relayd/parse.c >/dev/null ||
	    atf_fail "no parse.c"
	# both cores, here, without optimization or debugging information:
	# the targets' objects were most of the test's time (33 s at make
	# fuzz's -g -O1, 10 s so)
	mkdir b
	make -s -j"$(getconf _NPROCESSORS_ONLN)" -C b -f "$_dir/Makefile" \
	    FUZZDIR="$_dir" TOP="$TOP" \
	    CFLAGS="-O0 -fno-omit-frame-pointer -fsanitize=address,undefined" \
	    build >build.log 2>&1 ||
	    atf_fail "the targets do not build: $(tail -5 build.log)"
	mkdir work
	# by time: a mutated macro bomb of the corpus takes seconds a run,
	# and 3,000 runs took 10 to 35 s
	ASAN_OPTIONS=detect_leaks=1 atf_check -o ignore -e match:"Done [0-9]+ runs" \
	    b/parse_fuzz -max_total_time=8 -close_fd_mask=3 -timeout=10 \
	    -dict=b/parse.dict work "$TOP/regress/parse/corpus"
	mkdir imsg
	ASAN_OPTIONS=detect_leaks=1 atf_check -o ignore -e match:"Done [0-9]+ runs" \
	    b/imsg_fuzz -runs=20000 -close_fd_mask=3 -timeout=10 imsg
	mkdir control
	ASAN_OPTIONS=detect_leaks=1 atf_check -o ignore -e match:"Done [0-9]+ runs" \
	    b/control_fuzz -runs=20000 -close_fd_mask=3 -timeout=10 \
	    control b/control-seeds "$_dir/control-regress"
	mkdir http
	ASAN_OPTIONS=detect_leaks=1 atf_check -o ignore -e match:"Done [0-9]+ runs" \
	    b/http_fuzz -runs=50000 -close_fd_mask=3 -timeout=10 \
	    http "$_dir/http-seeds"
	mkdir pp
	ASAN_OPTIONS=detect_leaks=1 atf_check -o ignore -e match:"Done [0-9]+ runs" \
	    b/pp_fuzz -runs=50000 -close_fd_mask=3 -timeout=10 \
	    pp "$_dir/pp-seeds"
	mkdir dns
	ASAN_OPTIONS=detect_leaks=1 atf_check -o ignore -e match:"Done [0-9]+ runs" \
	    b/dns_fuzz -runs=30000 -close_fd_mask=3 -timeout=10 \
	    dns "$_dir/dns-seeds"
	mkdir agentx
	ASAN_OPTIONS=detect_leaks=1 atf_check -o ignore -e match:"Done [0-9]+ runs" \
	    b/agentx_fuzz -runs=20000 -close_fd_mask=3 -timeout=10 \
	    agentx "$_dir/agentx-seeds"
	mkdir h2
	ASAN_OPTIONS=detect_leaks=1 atf_check -o ignore -e match:"Done [0-9]+ runs" \
	    b/h2_fuzz -runs=10000 -close_fd_mask=3 -timeout=10 \
	    h2 "$_dir/h2-seeds"
	mkdir h2b
	ASAN_OPTIONS=detect_leaks=1 atf_check -o ignore -e match:"Done [0-9]+ runs" \
	    b/h2b_fuzz -runs=3000 -close_fd_mask=3 -timeout=10 \
	    h2b "$_dir/h2b-seeds"
	mkdir hello
	ASAN_OPTIONS=detect_leaks=1 atf_check -o ignore -e match:"Done [0-9]+ runs" \
	    b/hello_fuzz -runs=50000 -close_fd_mask=3 -timeout=10 \
	    hello "$_dir/hello-seeds"
	mkdir h2check
	ASAN_OPTIONS=detect_leaks=1 atf_check -o ignore -e match:"Done [0-9]+ runs" \
	    b/h2check_fuzz -runs=50000 -close_fd_mask=3 -timeout=10 \
	    h2check "$_dir/h2check-seeds"
}

atf_init_test_cases()
{
	atf_add_test_case smoke
}
