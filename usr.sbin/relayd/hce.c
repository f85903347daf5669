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
 * hce: the host check engine.  It receives the tables and their hosts;
 * the checks themselves arrive with the health check work.
 */

#include <sys/types.h>
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "relayd.h"

static void	 hce_init(struct privsep *, struct privsep_proc *, void *);
static int	 hce_dispatch_parent(int, struct privsep_proc *,
		    struct imsg *);
static int	 hce_dispatch_pfe(int, struct privsep_proc *, struct imsg *);

static struct relayd	*env;

static struct privsep_proc procs[] = {
	{ "parent",	PROC_PARENT,	hce_dispatch_parent,	NULL, NULL },
	{ "pfe",	PROC_PFE,	hce_dispatch_pfe,	NULL, NULL }
};

void
hce(struct privsep *ps, struct privsep_proc *p)
{
	env = ps->ps_env;
	proc_run(ps, p, procs, nitems(procs), hce_init, NULL);
}

static void
hce_init(struct privsep *ps, struct privsep_proc *p, void *arg)
{
	(void)ps;
	(void)p;
	(void)arg;
}

static int
hce_dispatch_parent(int fd, struct privsep_proc *p, struct imsg *imsg)
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
hce_dispatch_pfe(int fd, struct privsep_proc *p, struct imsg *imsg)
{
	(void)fd;
	(void)p;
	(void)imsg;
	return (-1);
}
