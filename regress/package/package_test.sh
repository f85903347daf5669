#! /usr/bin/env atf-sh
# The Debian package: built from a copy of the tree, installed on this
# machine, run, and purged without a trace.

. "$(atf_get_srcdir)/../lib.sh"

atf_test_case deb_install_purge cleanup
deb_install_purge_head()
{
	atf_set descr "the .deb builds, installs, accepts its own /etc/relayd.conf, runs from /usr/sbin, and apt-get purge leaves none of its files"
	atf_set require.user root
	atf_set timeout 600
}
deb_install_purge_body()
{
	require_daemon
	command -v dpkg-buildpackage >/dev/null ||
	    atf_skip "no dpkg-buildpackage (make deb installs it)"
	dpkg -s debhelper >/dev/null 2>&1 ||
	    atf_skip "no debhelper (make deb installs it)"
	if dpkg -s relayd >/dev/null 2>&1; then
		atf_skip "a relayd package is installed here: not touched"
	fi
	mkdir src
	(cd "$TOP" && tar --exclude=./.git --exclude=./debian/relayd \
	    --exclude=./debian/.debhelper -cf - .) | (cd src && tar xf -) ||
	    atf_fail "no copy of the tree"
	(cd src && dpkg-buildpackage -us -uc -b -jauto) >build.log 2>&1 || {
		tail -30 build.log >&2
		atf_fail "dpkg-buildpackage failed"
	}
	deb=$(ls relayd_*.deb)
	[ -n "$deb" ] || atf_fail "no .deb"
	if command -v lintian >/dev/null; then
		atf_check -o save:lintian.out -e ignore \
		    lintian --fail-on error,warning \
		    relayd_*.changes
	fi
	echo "$deb" >installed
	atf_check -o ignore -e ignore env DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y "./$deb"
	dpkg -L relayd >files
	atf_check -o match:"^/usr/sbin/relayd$" -o match:"^/usr/sbin/relayctl$" \
	    -o match:"^/lib/systemd/system/relayd.service$" \
	    -o match:"^/usr/share/man/man5/relayd.conf.5.gz$" \
	    -o match:"^/etc/relayd.conf$" cat files
	atf_check -o match:"^Type=notify$" \
	    -o match:"^ExecStart=/usr/sbin/relayd -f /etc/relayd.conf$" \
	    cat /lib/systemd/system/relayd.service
	atf_check -e inline:"configuration OK\n" /usr/sbin/relayd -n \
	    -f /etc/relayd.conf
	id _relayd >/dev/null || atf_fail "no _relayd user"
	# the installed daemon, on a configuration of the test's own
	port=$(freeport)
	cat >relayd.conf <<CONF
prefork 1
socket "$PWD/relayd.sock"
relay r {
	listen on 127.0.0.1 port $port
	forward to 127.0.0.1 port 9
}
CONF
	/usr/sbin/relayd -dv -f relayd.conf 2>relayd.log &
	echo $! >relayd.pid
	PREFORK=1 wait_started
	atf_check -o match:"^relayd " /usr/sbin/relayctl -s "$PWD/relayd.sock" \
	    status
	kill "$(cat relayd.pid)"
	wait "$(cat relayd.pid)"
	rm -f relayd.pid
	atf_check -o ignore -e ignore env DEBIAN_FRONTEND=noninteractive \
	    apt-get purge -y relayd
	rm -f installed
	# every file it had is gone, its directories too if they were its own
	while read -r f; do
		# a link that is a directory is the system's (/lib on merged /usr)
		if [ -f "$f" ] || { [ -L "$f" ] && [ ! -d "$f" ]; }; then
			echo "$f"
		fi
	done <files >left
	[ -d /var/lib/relayd ] && echo /var/lib/relayd >>left
	[ -d /usr/share/doc/relayd ] && echo /usr/share/doc/relayd >>left
	atf_check -o empty cat left
}
deb_install_purge_cleanup()
{
	stop_all
	# a failure half way: the package goes all the same
	if [ -f installed ]; then
		DEBIAN_FRONTEND=noninteractive apt-get purge -y relayd \
		    >/dev/null 2>&1
	fi
	return 0
}

atf_init_test_cases()
{
	atf_add_test_case deb_install_purge
}
