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
 * What the fuzz targets of a relay process's sessions share (h2_fuzz.c,
 * h2b_fuzz.c): a relay process's state from a configuration, socket
 * pairs, and whether a session is still there.  Included after relay.c.
 */

#include <stdio.h>
#include <syslog.h>

/*
 * The relay process's state for the configuration text conf, as relay()
 * and relay_launch() set it up: its first relay.
 */
static struct relay *
fz_relay_load(const char *conf, size_t len)
{
	struct privsep		*ps;
	struct relayd		*cf;
	struct relay		*rlay;
	struct relay_table	*rlt;
	struct host		*h;
	char			 path[] = "/tmp/relay_fuzz.XXXXXX";
	int			 fd, n;

	event_init();
	log_init(1, LOG_DAEMON);
	log_setverbose(0);
	if ((cf = calloc(1, sizeof(*cf))) == NULL ||
	    (ps = calloc(1, sizeof(*ps))) == NULL || config_init(cf) == -1)
		abort();
	cf->sc_ps = ps;
	ps->ps_env = cf;
	if ((fd = mkstemp(path)) == -1 || write(fd, conf, len) != (ssize_t)len)
		abort();
	close(fd);
	parse_noresolve = 1;
	if (parse_config(path, cf) == -1)
		abort();
	unlink(path);
	env = cf;
	rps = ps;
	cf->sc_conf.opts = 0;		/* no session end lines */
	if ((rlay = TAILQ_FIRST(cf->sc_relays)) == NULL)
		abort();
	/* the tables' hosts, as relay_launch() lists them */
	TAILQ_FOREACH(rlt, &rlay->rl_tables, rlt_entry) {
		n = 0;
		TAILQ_FOREACH(h, &rlt->rlt_table->hosts, entry)
			n++;
		if ((rlt->rlt_host = calloc(n + 1,
		    sizeof(*rlt->rlt_host))) == NULL)
			abort();
		TAILQ_FOREACH(h, &rlt->rlt_table->hosts, entry)
			rlt->rlt_host[rlt->rlt_nhosts++] = h;
	}
	return (rlay);
}

/* A fresh socket pair; both ends non-blocking. */
static void
fz_pair(int *mine, int *peer)
{
	int	 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		abort();
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(sv[1], F_SETFL, O_NONBLOCK) == -1)
		abort();
	*mine = sv[0];
	*peer = sv[1];
}

/* The session is still there and not ending. */
static int
fz_alive(struct rsession *con)
{
	struct rsession	*c;

	TAILQ_FOREACH(c, &relay_sessions, se_entry)
		if (c == con)
			return (con->se_endmsg == NULL);
	return (0);
}
