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
 * ca: keeps the private keys away from the processes that parse network
 * input.  It receives the relays now; key operations arrive with TLS.
 */

#include <sys/types.h>
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "relayd.h"

static void	 ca_init(struct privsep *, struct privsep_proc *, void *);
static int	 ca_dispatch_parent(int, struct privsep_proc *,
		    struct imsg *);
static int	 ca_dispatch_relay(int, struct privsep_proc *,
		    struct imsg *);

static struct relayd	*env;

static struct privsep_proc procs[] = {
	{ "parent",	PROC_PARENT,	ca_dispatch_parent,	NULL, NULL },
	{ "relay",	PROC_RELAY,	ca_dispatch_relay,	NULL, NULL }
};

void
ca(struct privsep *ps, struct privsep_proc *p)
{
	env = ps->ps_env;
	proc_run(ps, p, procs, nitems(procs), ca_init, NULL);
}

static void
ca_init(struct privsep *ps, struct privsep_proc *p, void *arg)
{
	(void)ps;
	(void)p;
	(void)arg;
	if (compat_sandbox("ca") == -1)
		fatal("%s: sandbox", __func__);
}

static int
ca_dispatch_parent(int fd, struct privsep_proc *p, struct imsg *imsg)
{
	(void)fd;
	(void)p;
	switch (imsg->hdr.type) {
	case IMSG_CTL_START:
		break;
	default:
		return (config_dispatch(env, imsg));
	}
	return (0);
}

static int
ca_dispatch_relay(int fd, struct privsep_proc *p, struct imsg *imsg)
{
	(void)fd;
	(void)p;
	(void)imsg;
	return (-1);
}
