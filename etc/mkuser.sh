#!/bin/sh
# Create the unprivileged user of relayd and its empty chroot directory,
# when they are missing.  Used by 'make install' and by the tests.

user=${RELAYD_USER:-_relayd}
home=${RELAYD_CHROOT:-/var/empty}

if [ ! -d "$home" ]; then
	mkdir -p "$home" || exit 1
	chmod 755 "$home"
fi
if ! id "$user" >/dev/null 2>&1; then
	case "$(uname -s)" in
	Linux)
		useradd -r -d "$home" -s /usr/sbin/nologin \
		    -c "relayd unprivileged user" "$user" || exit 1 ;;
	FreeBSD)
		pw useradd "$user" -d "$home" -s /usr/sbin/nologin \
		    -c "relayd unprivileged user" || exit 1 ;;
	*)
		echo "create the user $user with home $home" >&2
		exit 1 ;;
	esac
fi
exit 0
