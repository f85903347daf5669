/*
 * Copyright (c) 2026 The relayd-portable authors
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

#include <sys/types.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#endif

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat.h"

/* Forbid the process to regain privileges through exec. */
int
compat_nonewprivs(void)
{
#if defined(__linux__) && defined(PR_SET_NO_NEW_PRIVS)
	return (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
#else
	return (0);
#endif
}

/*
 * May this process change the kernel's packet filter and routes?  On
 * Linux it needs CAP_NET_ADMIN, which a container may not give root;
 * on the BSDs root may.
 */
int
compat_net_admin(void)
{
#ifdef __linux__
	struct __user_cap_header_struct	 hdr;
	struct __user_cap_data_struct	 data[_LINUX_CAPABILITY_U32S_3];

	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &hdr, data) == -1)
		return (1);		/* the kernel will say */
	return ((data[CAP_TO_INDEX(CAP_NET_ADMIN)].effective &
	    CAP_TO_MASK(CAP_NET_ADMIN)) != 0);
#else
	return (geteuid() == 0);
#endif
}

/*
 * The children are the same program started again: find it by the path
 * it was started with, made absolute.
 */
int
compat_getexecpath(const char *argv0, char *path, size_t len)
{
	char	 buf[PATH_MAX];

	if (strchr(argv0, '/') == NULL) {
		errno = ENOENT;
		return (-1);
	}
	if (realpath(argv0, buf) == NULL)
		return (-1);
	if (strlen(buf) >= len) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	memcpy(path, buf, strlen(buf) + 1);
	return (0);
}
