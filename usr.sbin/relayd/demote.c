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
 * carp's demotion on Linux, in the parent: OpenBSD's relayd adds to the
 * demote counter of a carp interface group when a table with "demote
 * GROUP" goes down.  Here each group's count goes to a file of its own,
 * DIR/GROUP, that keepalived tracks (track_file): 0 when the node should
 * hold the shared address, more when it should give it up.  Written
 * whole (a temporary file renamed over it), so keepalived never reads
 * half of it.
 *
 *	start		1 for every group, until pfe has seen every table
 *			checked once (OpenBSD demotes at start too)
 *	running		what pfe counts: the group's demoting tables down
 *	clean stop	one more than the last count: the standby takes
 *			over when relayd is stopped on purpose
 *
 *	a relay process	one more for every group while a relay process
 *	  hangs		does not answer (demote_stalled())
 *
 * A crash of the parent leaves the last count; keepalived's own checks
 * must cover that.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relayd.h"

struct demote {
	TAILQ_ENTRY(demote)	 d_entry;
	struct ctl_demote	 d;
};
static TAILQ_HEAD(, demote)	 demotes = TAILQ_HEAD_INITIALIZER(demotes);
static int			 demote_extra;	/* a relay process hangs */

static int	 demote_write(struct relayd *, const char *, int);

/* A group's entry, made the first time. */
static struct demote *
demote_find(const char *group)
{
	struct demote	*d;

	TAILQ_FOREACH(d, &demotes, d_entry)
		if (strcmp(d->d.group, group) == 0)
			return (d);
	if ((d = calloc(1, sizeof(*d))) == NULL)
		fatal("%s", __func__);
	(void)strlcpy(d->d.group, group, sizeof(d->d.group));
	TAILQ_INSERT_TAIL(&demotes, d, d_entry);
	return (d);
}

/* At the start: the directory, and every group of env demoted. */
void
demote_init(struct relayd *env)
{
	struct table	*tb;
	struct demote	*d;
	char		 path[PATH_MAX], *p;

	TAILQ_FOREACH(tb, env->sc_tables, entry)
		if (tb->conf.flags & F_DEMOTE)
			break;
	if (tb == NULL)
		return;
	/* the directory and its parents, root's */
	(void)strlcpy(path, env->sc_conf.demote_dir, sizeof(path));
	for (p = path + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(path, 0755) == -1 && errno != EEXIST)
			log_warn("demote directory %s", path);
		*p = '/';
	}
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		log_warn("demote directory %s", path);
	TAILQ_FOREACH(tb, env->sc_tables, entry) {
		if ((tb->conf.flags & F_DEMOTE) == 0)
			continue;
		d = demote_find(tb->conf.demote_group);
		if (d->d.count == 0) {
			d->d.count = 1;
			(void)demote_write(env, d->d.group, d->d.count +
			    demote_extra);
		}
	}
}

/* pfe's count of a group. */
void
demote_set(struct relayd *env, struct ctl_demote *cd)
{
	struct demote	*d;

	cd->group[sizeof(cd->group) - 1] = '\0';
	if (demote_group_valid(cd->group) == -1 || cd->count < 0) {
		log_warnx("%s: invalid demote group from pfe", __func__);
		return;
	}
	d = demote_find(cd->group);
	if (d->d.count == cd->count)
		return;
	if ((d->d.count + demote_extra == 0) !=
	    (cd->count + demote_extra == 0))
		log_info("demote group %s: %s (%d)", cd->group,
		    cd->count ? "demoted" : "no longer demoted", cd->count);
	d->d.count = cd->count;
	(void)demote_write(env, d->d.group, d->d.count + demote_extra);
}

/* A relay process hangs (on), or they all answer again: every group. */
void
demote_stalled(struct relayd *env, int on)
{
	struct demote	*d;

	if (demote_extra == !!on)
		return;
	demote_extra = !!on;
	TAILQ_FOREACH(d, &demotes, d_entry)
		(void)demote_write(env, d->d.group, d->d.count + demote_extra);
}

/* A clean stop: every group one more, the standby takes over. */
void
demote_shutdown(struct relayd *env)
{
	struct demote	*d;

	TAILQ_FOREACH(d, &demotes, d_entry)
		(void)demote_write(env, d->d.group, d->d.count +
		    demote_extra + 1);
}

static int
demote_write(struct relayd *env, const char *group, int count)
{
	char	 path[PATH_MAX], tmp[PATH_MAX];
	int	 fd, len, ret = 0;

	if (snprintf(path, sizeof(path), "%s/%s", env->sc_conf.demote_dir,
	    group) >= (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", env->sc_conf.demote_dir,
	    group) >= (int)sizeof(tmp)) {
		log_warnx("demote group %s: path too long", group);
		return (-1);
	}
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0644)) == -1) {
		log_warn("demote group %s: %s", group, tmp);
		return (-1);
	}
	len = dprintf(fd, "%d\n", count);
	if (len <= 0 || close(fd) == -1 || rename(tmp, path) == -1) {
		log_warn("demote group %s: %s", group, path);
		(void)unlink(tmp);
		ret = -1;
	}
	log_debug("demote group %s: %d", group, count);
	return (ret);
}
