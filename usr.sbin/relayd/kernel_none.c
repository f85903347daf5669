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
 * Redirections and routers where relayd has no back end for them (pf and
 * the routing socket are not done yet): the parser refuses them, so
 * nothing here is ever asked to act.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include "relayd.h"

int
kernel_available(void)
{
	return (0);
}

int
kernel_rdr_setup(struct rdrlist *rdrs, struct rdrlist *old)
{
	(void)rdrs;
	(void)old;
	return (0);
}

int
kernel_rdr_rules(struct rdr *rdr, struct sockaddr_storage *hosts,
    unsigned int n, int forget)
{
	(void)rdr;
	(void)hosts;
	(void)n;
	(void)forget;
	return (-1);
}

int
kernel_rdr_stats(struct rdr *rdr, struct ctl_rdrstats *st)
{
	(void)rdr;
	(void)st;
	return (-1);
}

void
kernel_rdr_cleanup(void)
{
}

int
kernel_route_set(struct router *rt, int i, struct sockaddr_storage *gw,
    unsigned int n, int prio)
{
	(void)rt;
	(void)i;
	(void)gw;
	(void)n;
	(void)prio;
	return (-1);
}

void
kernel_route_stale(void)
{
}

int
kernel_limits_setup(struct relaylist *relays)
{
	(void)relays;
	return (-1);
}

void
kernel_limits_cleanup(void)
{
}

int
kernel_limits_refused(const char *relay, uint64_t *refused)
{
	(void)relay;
	(void)refused;
	return (-1);
}

int
kernel_limits_overloaded(const char *table, uint32_t expire, int f,
    uint8_t **addrs, uint32_t **exp)
{
	(void)table;
	(void)expire;
	(void)f;
	*addrs = NULL;
	if (exp != NULL)
		*exp = NULL;
	return (-1);
}

int
kernel_limits_unload(const char *table, uint32_t expire, int f,
    const uint8_t *addr)
{
	(void)table;
	(void)expire;
	(void)f;
	(void)addr;
	return (-1);
}

int
kernel_announce(struct sockaddr_storage *ss, int on, int table)
{
	(void)ss;
	(void)table;
	return (on ? -1 : 0);	/* the parser refuses announce */
}

void
kernel_announce_cleanup(void)
{
}
