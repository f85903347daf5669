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

/*
 * Interface groups, which OpenBSD's relayd.conf may name where an
 * address goes: "listen on egress port 80" is the first address of an
 * interface in the group egress.  Linux has no groups; egress, the one
 * a configuration names, is made here as OpenBSD makes it: of the
 * interfaces that hold a default route, IPv4 or IPv6.  Any other name
 * is no group (elsewhere, every name).
 */

#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include "compat.h"

#ifdef __linux__
#define RTF_UP_		0x0001
#define RTF_REJECT_	0x0200

/*
 * Does ifname hold a default route in file, /proc/net/route (IPv4: the
 * interface first, destination and mask 0) or /proc/net/ipv6_route (the
 * interface last, destination ::/0)?  A reject route (::/0 on lo) is
 * none.
 */
static int
default_route_if(const char *file, int v6, const char *ifname)
{
	FILE		*f;
	char		 line[512], dev[64], dst[64], mask[64];
	unsigned int	 flags, plen;
	int		 found = 0;

	if ((f = fopen(file, "re")) == NULL)
		return (0);
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		if (v6) {
			if (sscanf(line, "%63s %x %*s %*s %*s %*s %*s %*s "
			    "%x %63s", dst, &plen, &flags, dev) != 4)
				continue;
			found = plen == 0 &&
			    strspn(dst, "0") == strlen(dst);
		} else {
			if (sscanf(line, "%63s %63s %*s %x %*s %*s %*s %63s",
			    dev, dst, &flags, mask) != 4)
				continue;
			found = strcmp(dst, "00000000") == 0 &&
			    strcmp(mask, "00000000") == 0;
		}
		found = found && (flags & RTF_UP_) &&
		    !(flags & RTF_REJECT_) && strcmp(dev, ifname) == 0;
	}
	fclose(f);
	return (found);
}
#endif

int
compat_if_in_group(const char *ifname, const char *group)
{
#ifdef __linux__
	if (strcmp(group, "egress") != 0)
		return (0);
	return (default_route_if("/proc/net/route", 0, ifname) ||
	    default_route_if("/proc/net/ipv6_route", 1, ifname));
#else
	(void)ifname;
	(void)group;
	return (0);
#endif
}
