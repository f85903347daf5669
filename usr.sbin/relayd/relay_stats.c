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
 * What a relay process reports: the end line of each session (and the
 * texts it gathers on the way), its statistics to pfe every second,
 * with the bytes of the sessions still running, its sessions for
 * relayctl show sessions, and, after a peak of sessions, the memory
 * they took back to the system.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "relayd.h"
#include "relay.h"

static void	 relay_statistics(int, short, void *);
static void	 relay_memtrim(void);

#define RELAY_LOG_MAX		1024	/* texts of the end line */

static struct event	 relay_statev;

/* The relay process: statistics from now on. */
void
relay_stats_init(struct privsep *ps)
{
	struct timeval	 tv = { 1, 0 };

	evtimer_set(&relay_statev, relay_statistics, ps);
	evtimer_add(&relay_statev, &tv);
}

/*
 * Text for the end of the session's end line, as OpenBSD adds it (the
 * method of each request).  A long session keeps its first texts.
 */
void
relay_log(struct rsession *con, const char *text)
{
	size_t	 len = strlen(text);
	char	*p;

	if (con->se_loglen + len > RELAY_LOG_MAX)
		return;
	if ((p = realloc(con->se_log, con->se_loglen + len + 1)) == NULL)
		return;
	memcpy(p + con->se_loglen, text, len + 1);
	con->se_log = p;
	con->se_loglen += len;
}

/*
 * The session's backend connection is not its first (http keep-alive
 * and forward to): the end line notes the new backend, as OpenBSD's.
 */
void
relay_log_backend(struct rsession *con)
{
	char	 addr[INET6_ADDRSTRLEN];
	char	 log[INET6_ADDRSTRLEN + 16];

	if (con->se_nconnects <= 1 ||
	    print_host(&con->se_out.ss, addr, sizeof(addr)) == NULL)
		return;
	(void)snprintf(log, sizeof(log), " -> %s:%d", addr,
	    ss_port(&con->se_out.ss));
	relay_log(con, log);
}

/* A request began (http): counted, and shown by show sessions. */
void
relay_request(struct rsession *con, const char *line)
{
	relay_stats_mine(con->se_relay)->requests++;
	(void)strlcpy(con->se_request, line, sizeof(con->se_request));
}

/*
 * The session end line is OpenBSD's, byte for byte; the byte counts, our
 * extension, follow on a line of their own.  b: [direction][mover],
 * active: the sessions of the process.  The caller has checked that the
 * configuration logs it.
 */
void
relay_log_end(struct rsession *con, const char *msg, int err,
    uint64_t b[2][2], int active)
{
	struct relay	*rlay = con->se_relay;
	char		 ibuf[INET6_ADDRSTRLEN];
	char		 obuf[INET6_ADDRSTRLEN];
	int		 level;

	/* an address there is none of is empty, as OpenBSD prints it */
	if (print_host(&con->se_in.ss, ibuf, sizeof(ibuf)) == NULL)
		ibuf[0] = '\0';
	if (con->se_out.ss.ss_family == AF_UNSPEC ||
	    print_host(&con->se_out.ss, obuf, sizeof(obuf)) == NULL)
		obuf[0] = '\0';
	level = err ? LOG_WARNING : LOG_INFO;
	logit(level, "relay %s, session %u (%d active), %s, %s -> "
	    "%s:%d, %s%s%s", rlay->rl_conf.name, con->se_id,
	    active, con->se_tag[0] != '\0' ? con->se_tag : "0",
	    ibuf, obuf, ss_port(&con->se_out.ss), msg,
	    con->se_log != NULL ? "," : "",
	    con->se_log != NULL ? con->se_log : "");
	logit(level, "relay %s, session %u, bytes in %llu (spliced "
	    "%llu, copied %llu), out %llu (spliced %llu, copied %llu)",
	    rlay->rl_conf.name, con->se_id,
	    (unsigned long long)(b[0][0] + b[0][1]),
	    (unsigned long long)b[0][0], (unsigned long long)b[0][1],
	    (unsigned long long)(b[1][0] + b[1][1]),
	    (unsigned long long)b[1][0], (unsigned long long)b[1][1]);
}

/*
 * Every second: statistics of this process to pfe, with the bytes of
 * the sessions still running.  Every RELAY_STATINTERVAL the session
 * rates roll over as OpenBSD's do.
 */
static void
relay_statistics(int fd, short event, void *arg)
{
	struct privsep		*ps = arg;
	struct relayd		*env = ps->ps_env;
	struct relay		*rlay;
	struct relay_stats	 st, *cur;
	struct ctl_keyopstats	 ks;
	struct rsession		*con;
	struct timeval		 tv = { 1, 0 };
	uint64_t		 b[2][2];
	int			 dir, kind;

	(void)fd;
	(void)event;
	TAILQ_FOREACH(rlay, env->sc_relays, rl_entry) {
		cur = &rlay->rl_stats[ps->ps_instance];
		if (++cur->tick >= RELAY_STATINTERVAL) {
			cur->tick = 0;
			cur->cnt += cur->last;
			cur->avg = (cur->last + cur->avg) / 2;
			cur->last_hour += cur->last;
			cur->last_day += cur->last;
			cur->last = 0;
			if (++cur->interval % (3600 / RELAY_STATINTERVAL) ==
			    0) {
				cur->avg_hour = (cur->last_hour +
				    cur->avg_hour) / 2;
				cur->last_hour = 0;
			}
			if (cur->interval % (86400 / RELAY_STATINTERVAL) ==
			    0) {
				cur->avg_day = (cur->last_day +
				    cur->avg_day) / 2;
				cur->last_day = 0;
			}
		}
		st = *cur;
		st.id = rlay->rl_conf.id;
		st.proc = ps->ps_instance;
		TAILQ_FOREACH(con, &relay_sessions, se_entry) {
			/* a link's bytes are its session's */
			if (relay_counted(con->se_relay) != rlay ||
			    RELAY_LINK(con))
				continue;
			relay_session_bytes(con, b);
			for (dir = 0; dir < 2; dir++)
				for (kind = 0; kind < 2; kind++)
					st.bytes[dir][kind] += b[dir][kind];
		}
		proc_compose(ps, PROC_PFE, IMSG_STATISTICS, &st, sizeof(st));
	}
	/* the round trips to ca, once there were some */
	tls_keyops_stats(&ks);
	if (ks.ops > 0) {
		ks.proc = ps->ps_instance;
		proc_compose(ps, PROC_PFE, IMSG_KEYOP_STATS, &ks, sizeof(ks));
	}
	relay_memtrim();
	evtimer_add(&relay_statev, &tv);
}

/*
 * After a peak of sessions and links, what they took goes back to the
 * system once they are down to a quarter of it, and again at each
 * quarter of that down to none: the allocator keeps freed memory for
 * the next peak otherwise (180 MB after 1,000 HTTP/2 clients of 100
 * streams each had left), and the last quarter of a peak that drains
 * slowly holds its share.  The peak is counted as sessions start, for
 * a burst may come and go between two of these calls.
 */
static void
relay_memtrim(void)
{
	static unsigned int	 top;
	static int		 big;	/* since sessions were last none */
	unsigned int		 now, peak;

	if ((peak = relay_sessions_peak(&now)) > top)
		top = peak;
	if (top >= RELAY_TRIM_PEAK)
		big = 1;
	if (big && now <= top / 4 && now < top) {
		compat_memtrim();
		top = now;
		if (now == 0)
			big = 0;
	}
}

/* relayctl show sessions: this process's, to pfe. */
void
relay_sessions_send(struct privsep *ps, uint32_t peerid)
{
	struct rsession		*con, *link;
	struct ctl_session	 cs;

	TAILQ_FOREACH(con, &relay_sessions, se_entry) {
		if (RELAY_LINK(con))
			continue;
		memset(&cs, 0, sizeof(cs));
		cs.cs_id = con->se_id;
		cs.cs_relayid = con->se_relayid;
		(void)strlcpy(cs.cs_relay, con->se_relay->rl_conf.name,
		    sizeof(cs.cs_relay));
		cs.cs_src = con->se_in.ss;
		cs.cs_dst = con->se_out.ss;
		cs.cs_start = con->se_tv_start;
		cs.cs_last = con->se_tv_last;
		if (timercmp(splice_lastmove(&con->se_in.sp), &cs.cs_last, >))
			cs.cs_last = *splice_lastmove(&con->se_in.sp);
		if (timercmp(splice_lastmove(&con->se_out.sp), &cs.cs_last, >))
			cs.cs_last = *splice_lastmove(&con->se_out.sp);
		if (!timerisset(&cs.cs_last))
			cs.cs_last = cs.cs_start;
		getevtime(&cs.cs_now);
		cs.cs_pid = getpid();
		cs.cs_instance = ps->ps_instance;
		cs.cs_running = con->se_cstate == RELAY_CONN_CONNECTED;
		cs.cs_tls = (con->se_relay->rl_conf.flags & F_TLS ? 1 : 0) |
		    (con->se_relay->rl_conf.flags & F_TLSCLIENT ? 2 : 0);
		(void)strlcpy(cs.cs_request, con->se_request,
		    sizeof(cs.cs_request));
		if (con->se_ops->ro_show != NULL)
			con->se_ops->ro_show(con, &cs);
		TAILQ_FOREACH(link, &con->se_links, se_link)
			cs.cs_links++;
		relay_session_bytes(con, cs.cs_bytes);
		proc_compose_imsg(ps, PROC_PFE, -1, IMSG_CTL_SESSION, peerid,
		    -1, &cs, sizeof(cs));
	}
	proc_compose_imsg(ps, PROC_PFE, -1, IMSG_CTL_END, peerid, -1, NULL, 0);
}
