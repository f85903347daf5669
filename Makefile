# relayd, portable: GNU make, no autoconf.
#
#   make            build usr.sbin/relayd/relayd and usr.sbin/relayctl/relayctl
#   make test       install what is missing, build, run the kyua suite
#   make run        build and run the sample configuration in the foreground
#   make install    binaries, man pages, example config, the _relayd user
#   make deps       install the packages the build and tests need
#   make lint       man pages and shell scripts
#   make bench      benchmarks (regress/perf)
#   make fuzz       fuzz targets (libFuzzer)
#   make deb        the Debian package, in the tree's parent directory

PREFIX ?=	/usr/local
SBINDIR ?=	$(PREFIX)/sbin
SYSTEMDDIR ?=	$(PREFIX)/lib/systemd/system
RCDIR ?=	$(PREFIX)/etc/rc.d
MANDIR ?=	$(PREFIX)/share/man
EXAMPLEDIR ?=	$(PREFIX)/share/examples/relayd
DESTDIR ?=
RELAYD_USER ?=	_relayd
RELAYD_CHROOT ?= /var/empty

CC ?=		cc
CFLAGS ?=	-O2 -g
# our builds and CI stop at a warning; a distribution's (WERROR=) does not
WERROR ?=	-Werror
WARNINGS =	-Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes \
		-Wshadow -Wpointer-arith -Wcast-qual -Wsign-compare $(WERROR)
CPPFLAGS +=	-I$(RD) -DRELAYD_USER=\"$(RELAYD_USER)\"

UNAME_S :=	$(shell uname -s)

ifeq ($(UNAME_S),Linux)
SERVICE =	etc/systemd/relayd.service
SERVICEDIR =	$(SYSTEMDDIR)
SERVICENAME =	relayd.service
SERVICEMODE =	444
YACC ?=		byacc
PKGS =		libbsd-overlay libevent libtls libssl libcrypto libseccomp \
		libnftables libmnl libnghttp2
CPPFLAGS +=	-D_GNU_SOURCE -DHAVE_SECCOMP \
		$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS +=	$(shell pkg-config --libs $(PKGS) 2>/dev/null || \
		    echo -lbsd -levent -ltls -lssl -lcrypto -lseccomp \
		    -lnftables -lmnl -lnghttp2)
# redirections on nftables, routers on rtnetlink
KERNEL_SRCS =	$(RD)/kernel_nft.c $(RD)/kernel_rtnl.c
# splice(2) through a pipe; no SO_SPLICE
SPLICE_NATIVE =	$(RD)/splice_pipe.c
SPLICE_NONE =	-DSPLICE_NONE_SO
# Count the installed ones: dpkg-query says nothing on stdout of a
# package it has never heard of.
DEPS_CHECK =	dpkg-query -W -f='$${Status}\n' $(DEBIAN_PKGS) 2>/dev/null | \
		    grep -c '^install ok installed' | \
		    grep -qx $(words $(DEBIAN_PKGS))
DEPS_INSTALL =	apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		    apt-get install -y -qq --no-install-recommends $(DEBIAN_PKGS)
endif
ifeq ($(UNAME_S),FreeBSD)
# FreeBSD: libevent and libretls from packages; SO_SPLICE since 14.2.
SERVICE =	etc/rc.d/relayd.freebsd
SERVICEDIR =	$(RCDIR)
SERVICENAME =	relayd
SERVICEMODE =	555
YACC ?=		yacc
CPPFLAGS +=	-I/usr/local/include
LDFLAGS +=	-L/usr/local/lib
LDLIBS +=	-levent -ltls -lssl -lcrypto -lnghttp2 -lutil
DEPS_CHECK =	pkg info -e libevent libretls libnghttp2 kyua mandoc
DEPS_INSTALL =	pkg install -y libevent libretls libnghttp2 kyua mandoc
KERNEL_SRCS =	$(RD)/kernel_none.c
# SO_SPLICE since 14.2; before it, no kernel engine
ifneq ($(shell grep -s -c SO_SPLICE /usr/include/sys/socket.h),0)
SPLICE_NATIVE =	$(RD)/splice_so.c
SPLICE_NONE =	-DSPLICE_NONE_PIPE
else
SPLICE_NATIVE =
SPLICE_NONE =	-DSPLICE_NONE_PIPE -DSPLICE_NONE_SO
endif
endif
ifeq ($(UNAME_S),OpenBSD)
# OpenBSD: everything is in base but kyua, libevent 2 and libnghttp2.
SERVICE =	etc/rc.d/relayd.openbsd
SERVICEDIR =	/etc/rc.d
SERVICENAME =	relayd
SERVICEMODE =	555
YACC ?=		yacc
CPPFLAGS +=	-I/usr/local/include
LDFLAGS +=	-L/usr/local/lib
LDLIBS +=	-levent -ltls -lssl -lcrypto -lnghttp2 -lutil
DEPS_CHECK =	true
DEPS_INSTALL =	true
KERNEL_SRCS =	$(RD)/kernel_none.c
SPLICE_NATIVE =	$(RD)/splice_so.c
SPLICE_NONE =	-DSPLICE_NONE_PIPE
endif

# make fuzz: clang with the libFuzzer and sanitizer runtimes
FUZZ_PKGS =	clang libclang-rt-14-dev
ifeq ($(UNAME_S),Linux)
DEPS_CHECK_FUZZ = dpkg-query -W -f='$${Status}\n' $(FUZZ_PKGS) 2>/dev/null | \
		    grep -c '^install ok installed' | grep -qx $(words $(FUZZ_PKGS))
DEPS_INSTALL_FUZZ = apt-get install -y -qq --no-install-recommends $(FUZZ_PKGS)
else
DEPS_CHECK_FUZZ = true
DEPS_INSTALL_FUZZ = true
endif

DEBIAN_PKGS =	pkg-config libevent-dev libtls-dev libssl-dev byacc kyua \
		libnftables-dev libmnl-dev \
		atf-sh libatf-dev libbsd-dev libseccomp-dev mandoc openssl \
		socat iproute2 nftables curl python3 haproxy bind9-dnsutils \
		snmpd snmp debhelper keepalived conntrackd conntrack bird2 \
		libnghttp2-dev nghttp2-client nghttp2-server python3-grpcio \
		libfaketime libcap2-bin $(FUZZ_PKGS)

RD =		usr.sbin/relayd
RC =		usr.sbin/relayctl

COMPAT_SRCS =	$(RD)/compat/imsg.c $(RD)/compat/getdtablecount.c \
		$(RD)/compat/privdrop.c $(RD)/compat/sandbox.c \
		$(RD)/compat/tcpstate.c $(RD)/compat/transparent.c \
		$(RD)/compat/sockopt.c $(RD)/compat/tlsticket.c \
		$(RD)/compat/tlsjob.c $(RD)/compat/siphash.c $(RD)/compat/sdnotify.c \
		$(RD)/compat/ifgroup.c $(RD)/compat/memtrim.c
SPLICE_SRCS =	$(RD)/splice.c $(RD)/splice_copy.c $(SPLICE_NATIVE) \
		$(RD)/splice_none.c
LIB_SRCS =	$(RD)/proc.c $(RD)/config.c $(RD)/control.c $(RD)/log.c \
		$(RD)/parse.c $(RD)/pfe.c $(RD)/hce.c $(RD)/relay.c \
		$(RD)/parent_relay.c $(RD)/relay_dns.c $(RD)/relay_http.c $(RD)/relay_http_rules.c \
		$(RD)/relay_h2.c \
		$(RD)/relay_h2b.c \
		$(RD)/relay_h1b.c \
		$(RD)/proxy_protocol.c $(RD)/patterns.c $(RD)/metrics.c \
		$(RD)/ca.c $(RD)/relay_tls.c $(RD)/relay_stats.c $(RD)/relay_limit.c $(RD)/maglev.c $(RD)/http_msg.c $(RD)/tls_load.c $(RD)/tls_hello.c $(RD)/tls_keyops.c $(RD)/util.c $(RD)/printconf.c $(RD)/check_tcp.c $(RD)/check_h2.c \
		$(RD)/check_icmp.c \
		$(RD)/check_script.c $(RD)/kernel.c $(KERNEL_SRCS) $(RD)/agentx.c \
		$(RD)/demote.c $(RD)/announce.c \
		$(SPLICE_SRCS) $(COMPAT_SRCS)
RELAYD_SRCS =	$(RD)/relayd.c
RELAYCTL_SRCS =	$(RC)/relayctl.c $(RC)/parser.c

LIB_OBJS =	$(LIB_SRCS:.c=.o)
LIB =		$(RD)/librelayd.a
RELAYD =	$(RD)/relayd
RELAYCTL =	$(RC)/relayctl
HDRS =		$(RD)/relayd.h $(RD)/relay.h $(RD)/relay_h2.h $(RD)/http.h \
		$(RD)/splice.h $(RD)/compat/imsg.h \
		$(RD)/compat/compat.h $(RC)/parser.h

REGRESS_PROGS =	regress/imsg/imsg_test regress/parse/parse_test regress/http/http_test \
		regress/splice/splice_test regress/tools/rtool \
		regress/tools/ctlflood \
		regress/perf/relaybench regress/perf/barerelay regress/perf/baretls \
		regress/perf/dnsecho regress/perf/maglevbench \
		regress/daemon/relayd-sbtest

ALL_CFLAGS =	$(CFLAGS) $(WARNINGS)

.PHONY: all deps test test-tools check run install lint lint-so-splice \
	bench deb \
	bench-deps bench-hce bench-syscalls bench-instructions bench-reload \
	bench-forward-tls fuzz \
	clean h2spec-deps ghz-deps go-deps

all: $(RELAYD) $(RELAYCTL)

$(RD)/parse.c: $(RD)/parse.y
	$(YACC) -o $@ $<

# The generated parser is not held to every warning.
$(RD)/parse.o: $(RD)/parse.c $(HDRS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Wno-unused-but-set-variable \
	    -Wno-sign-compare -Wno-unused-parameter -c -o $@ $<

# The kernel engines this system lacks
$(RD)/splice_none.o: $(RD)/splice_none.c $(HDRS)
	$(CC) $(CPPFLAGS) $(SPLICE_NONE) $(ALL_CFLAGS) -c -o $@ $<

# The one file with OpenSSL's deprecated key-method API (RSA_METHOD,
# EC_KEY_METHOD): built for the 1.1.1 API, -Werror as everywhere.
$(RD)/tls_keyops.o: $(RD)/tls_keyops.c $(HDRS)
	$(CC) $(CPPFLAGS) -DOPENSSL_API_COMPAT=10101 $(ALL_CFLAGS) -c -o $@ $<

%.o: %.c $(HDRS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $(LIB_OBJS)

$(RELAYD): $(RELAYD_SRCS:.c=.o) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(RELAYD_SRCS:.c=.o) $(LIB) $(LDLIBS)

$(RELAYCTL): $(RELAYCTL_SRCS:.c=.o) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(RELAYCTL_SRCS:.c=.o) $(LIB) $(LDLIBS)

# Unit tests (ATF-C)
regress/%_test: regress/%_test.c $(LIB) $(HDRS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) \
	    $(LDLIBS) -latf-c

# relayd with a test trigger in its sandbox (RELAYD_SANDBOX_TEST=PROC makes
# that child run a forbidden system call) and, for make bench, its relay
# signing with a key of its own (RELAYD_KEYOPS_TEST=FILE); never installed.
regress/daemon/sandbox_test.o: $(RD)/compat/sandbox.c $(HDRS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -DRELAYD_SANDBOX_TEST -c -o $@ \
	    $(RD)/compat/sandbox.c

regress/daemon/keyops_test.o: $(RD)/tls_keyops.c $(HDRS)
	$(CC) $(CPPFLAGS) -DOPENSSL_API_COMPAT=10101 $(ALL_CFLAGS) \
	    -DRELAYD_KEYOPS_TEST -c -o $@ $(RD)/tls_keyops.c

SBTEST_OBJS =	regress/daemon/sandbox_test.o regress/daemon/keyops_test.o

regress/daemon/relayd-sbtest: $(SBTEST_OBJS) $(RELAYD_SRCS:.c=.o) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(RELAYD_SRCS:.c=.o) $(SBTEST_OBJS) $(LIB) \
	    $(LDLIBS)

regress/tools/rtool: regress/tools/rtool.c
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

regress/tools/ctlflood: regress/tools/ctlflood.c $(LIB) $(HDRS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)

regress/perf/relaybench: regress/perf/relaybench.c
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

regress/perf/dnsecho: regress/perf/dnsecho.c
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $<

regress/perf/maglevbench: regress/perf/maglevbench.c $(LIB) $(HDRS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)

regress/perf/barerelay: regress/perf/barerelay.c $(LIB) $(HDRS)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)

regress/perf/baretls: regress/perf/baretls.c
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LDFLAGS) -lssl -lcrypto

# The Debian package (debian/), with the build dependencies it needs
DEB_PKGS =	debhelper dpkg-dev
deb:
	@dpkg-query -W -f='$${Status}\n' $(DEB_PKGS) 2>/dev/null | \
	    grep -c '^install ok installed' | grep -qx $(words $(DEB_PKGS)) || \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq --no-install-recommends $(DEB_PKGS); }
	$(MAKE) deps
	dpkg-buildpackage -us -uc -b -jauto

deps:
	@if $(DEPS_CHECK); then :; else \
		echo "installing: $(DEBIAN_PKGS)"; $(DEPS_INSTALL); fi

# A fresh machine has none of the packages: install them first, then
# build in a new make so that pkg-config is asked again, on every core.
test: deps test-tools
	@$(MAKE) --no-print-directory -j$$(getconf _NPROCESSORS_ONLN) \
	    all $(REGRESS_PROGS) lint-so-splice
	@sh regress/run.sh

# What three test cases need beyond Debian's installed packages: h2spec
# (HTTP/2's conformance cases, from Go's module proxy) and promtool (the
# metrics' checker, taken out of Debian's prometheus package into
# regress/tools/bin: installing the package would start its server).
# One that cannot be had leaves its test case skipped, with the reason.
test-tools:
	@if [ "$(UNAME_S)" = Linux ]; then \
		command -v h2spec >/dev/null || [ -x "$$HOME/go/bin/h2spec" ] || \
		    $(MAKE) --no-print-directory h2spec-deps || \
		    echo "make test-tools: no h2spec, regress/h2 skips it"; \
		command -v promtool >/dev/null || \
		    [ -x regress/tools/bin/promtool ] || \
		    sh regress/tools/getpromtool.sh regress/tools/bin || \
		    echo "make test-tools: no promtool, its case skips"; \
	fi

check: all $(REGRESS_PROGS) lint-so-splice
	@sh regress/run.sh

run: deps
	@$(MAKE) --no-print-directory all
	@sh etc/run-demo.sh

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man5 \
	    $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(EXAMPLEDIR)
	install -m 555 $(RELAYD) $(RELAYCTL) $(DESTDIR)$(SBINDIR)
	install -m 444 man/relayd.conf.5 $(DESTDIR)$(MANDIR)/man5
	install -m 444 man/relayd.8 man/relayctl.8 $(DESTDIR)$(MANDIR)/man8
	install -m 444 etc/relayd.conf etc/transparent.nft \
	    etc/examples/grpc.conf $(DESTDIR)$(EXAMPLEDIR)
	@# the service file, with the paths of this installation
	install -d $(DESTDIR)$(SERVICEDIR)
	sed -e 's|/usr/local/sbin|$(SBINDIR)|g' $(SERVICE) \
	    >$(DESTDIR)$(SERVICEDIR)/$(SERVICENAME)
	chmod $(SERVICEMODE) $(DESTDIR)$(SERVICEDIR)/$(SERVICENAME)
	@if [ -z "$(DESTDIR)" ]; then \
		RELAYD_USER=$(RELAYD_USER) RELAYD_CHROOT=$(RELAYD_CHROOT) \
		    sh etc/mkuser.sh; \
	fi

lint: lint-so-splice
	mandoc -Tlint -Wwarning man/*.[58]
	@if command -v shellcheck >/dev/null; then \
		shellcheck -s sh etc/*.sh regress/*.sh; fi

# splice_so.c only runs on the BSDs: compile it here against a stand-in
# for their <sys/socket.h> so that it cannot rot.
lint-so-splice:
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -fsyntax-only \
	    -include regress/splice/bsd_splice.h $(RD)/splice_so.c

# HAProxy, nginx and gnuplot are installed when missing, as make test
# installs what it needs.
bench: bench-deps all regress/perf/relaybench regress/perf/barerelay \
		regress/perf/baretls regress/perf/dnsecho regress/perf/maglevbench \
		regress/daemon/relayd-sbtest
	@$(MAKE) --no-print-directory -C regress/perf $@

bench-deps: deps
	@$(MAKE) --no-print-directory -C regress/perf $@
	@command -v ghz >/dev/null || [ -x "$$HOME/go/bin/ghz" ] || \
	    $(MAKE) --no-print-directory ghz-deps || \
	    echo "make bench-deps: no ghz, the gRPC row uses h2load"
	@$(MAKE) -s --no-print-directory $(GRPCECHO) || \
	    echo "make bench-deps: no Go gRPC server, the gRPC rows use the Python one"

# ghz, gRPC's load generator, for make bench's gRPC calls (h2load with a
# gRPC body without it): from Go's module proxy to ~/go/bin, as h2spec.
ghz-deps: go-deps
	go install github.com/bojand/ghz/cmd/ghz@latest

# make bench's gRPC server, with grpc-go: the modules its go.sum names,
# from Go's module proxy
GRPCECHO =	regress/perf/grpcecho/grpcecho
$(GRPCECHO): regress/perf/grpcecho/main.go regress/perf/grpcecho/go.mod \
		regress/perf/grpcecho/go.sum
	@$(MAKE) --no-print-directory go-deps
	cd regress/perf/grpcecho && go build -o grpcecho .

go-deps:
	@command -v go >/dev/null || { apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends golang ca-certificates; }

# h2spec, HTTP/2's conformance cases, which regress/h2 runs when it is
# there: Go's toolchain from Debian's golang package, h2spec from Go's
# module proxy (to ~/go/bin).  Not part of make deps: it is the one
# thing not from Debian.
h2spec-deps: go-deps
	go install github.com/summerwind/h2spec/cmd/h2spec@latest

bench-hce: all regress/tools/rtool
	@sh regress/perf/hcebench.sh

bench-syscalls: bench-deps all regress/perf/relaybench
	@sh regress/perf/syscalls.sh

# User-space instructions per TLS handshake (valgrind), relayd beside
# HAProxy, nginx and baretls; relayd as its test build, which can run
# without its seccomp filters.
bench-instructions: bench-deps all regress/perf/relaybench \
		regress/perf/baretls regress/daemon/relayd-sbtest
	@sh regress/perf/instructions.sh $(SECS)

bench-reload: bench-deps all regress/perf/relaybench
	@sh regress/perf/reloadbench.sh

bench-forward-tls: bench-deps all
	@sh regress/perf/fwdtlsbench.sh

fuzz: $(RD)/parse.c
	@$(DEPS_CHECK_FUZZ) || $(DEPS_INSTALL_FUZZ)
	@$(MAKE) --no-print-directory -C regress/fuzz \
	    SRCS="$(LIB_SRCS:$(RD)/%=%)" SPLICE_NONE="$(SPLICE_NONE)"

clean:
	rm -f $(LIB_OBJS) $(RELAYD_SRCS:.c=.o) $(RELAYCTL_SRCS:.c=.o) \
	    $(LIB) $(RELAYD) $(RELAYCTL) $(RD)/parse.c $(REGRESS_PROGS) \
	    $(SBTEST_OBJS) $(GRPCECHO)
