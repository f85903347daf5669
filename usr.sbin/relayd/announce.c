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
 * "announce", in the parent: the addresses of relays and redirections
 * that can serve, for a BGP daemon to announce.  Each is a route in
 * the table of "announce table" (ANNOUNCE_TABLE), with protocol number
 * ANNOUNCE_PROTO, through a device only the parent holds open
 * (kernel_announce()).  BIRD's kernel protocol learns those routes and
 * its BGP protocol exports them; the router sends the address's flows
 * to every node that announces it.
 *
 *	pfe says up	the address's relays and redirections can all
 *			serve (a table up, every one checked once)
 *	pfe says down	one cannot, or the address left the configuration
 *	a process hangs	every address withdrawn until all answer again
 *	clean stop	every address withdrawn first
 *	crash, SIGKILL	the device goes with the parent's last descriptor,
 *			and the kernel removes its routes with it
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "relayd.h"

struct announce {
	TAILQ_ENTRY(announce)	 a_entry;
	struct sockaddr_storage	 a_ss;
	int			 a_up;		/* pfe's word */
	int			 a_installed;	/* the route is there */
};
static TAILQ_HEAD(, announce)	 announces =
    TAILQ_HEAD_INITIALIZER(announces);
static int			 announce_hung;	/* a process hangs */
static int			 announce_stopping;

static void	 announce_apply(struct relayd *, struct announce *);

static struct announce *
announce_find(struct sockaddr_storage *ss)
{
	struct announce	*a;

	TAILQ_FOREACH(a, &announces, a_entry)
		if (memcmp(&a->a_ss, ss, sizeof(*ss)) == 0)
			return (a);
	return (NULL);
}

void
announce_set(struct relayd *env, struct ctl_announce *ca)
{
	struct announce	*a;

	/* pfe zeroes all but the family and address: compared whole */
	if ((ca->ss.ss_family != AF_INET && ca->ss.ss_family != AF_INET6) ||
	    (ca->up != 0 && ca->up != 1)) {
		log_warnx("%s: invalid address from pfe", __func__);
		return;
	}
	if ((a = announce_find(&ca->ss)) == NULL) {
		if (!ca->up)
			return;
		if ((a = calloc(1, sizeof(*a))) == NULL)
			fatal("%s", __func__);
		a->a_ss = ca->ss;
		TAILQ_INSERT_TAIL(&announces, a, a_entry);
	}
	a->a_up = ca->up;
	announce_apply(env, a);
}

/* A process hangs (on), or all answer again: every address. */
void
announce_stalled(struct relayd *env, int on)
{
	struct announce	*a, *next;

	if (announce_hung == !!on)
		return;
	announce_hung = !!on;
	TAILQ_FOREACH_SAFE(a, &announces, a_entry, next)
		announce_apply(env, a);
}

/* A clean stop: every address withdrawn, then the device goes. */
void
announce_shutdown(struct relayd *env)
{
	struct announce	*a, *next;

	announce_stopping = 1;
	TAILQ_FOREACH_SAFE(a, &announces, a_entry, next)
		announce_apply(env, a);
	kernel_announce_cleanup();
}

/* The route where the address should be announced, none elsewhere. */
static void
announce_apply(struct relayd *env, struct announce *a)
{
	static int	 table;		/* the first configuration's */
	char		 buf[NI_MAXHOST];
	int		 want = a->a_up && !announce_hung &&
			    !announce_stopping;

	if (table == 0)
		table = env->sc_conf.announce_table != 0 ?
		    env->sc_conf.announce_table : ANNOUNCE_TABLE;
	if (want != a->a_installed) {
		if (kernel_announce(&a->a_ss, want, table) == 0) {
			a->a_installed = want;
			log_info("address %s %s", print_host(&a->a_ss, buf,
			    sizeof(buf)), want ? "announced" : "withdrawn");
		}
	}
	if (!a->a_up && !a->a_installed) {
		TAILQ_REMOVE(&announces, a, a_entry);
		free(a);
	}
}
