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
 * The metrics text (an extension): the state relayctl status shows, in
 * the Prometheus text format (0.0.4, which promtool checks), each family
 * with its HELP and TYPE and all of its samples together.  relayctl
 * show metrics feeds it what pfe sends; pfe's metrics listener feeds it
 * its own state.  Both gather first and print at the end.
 */

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <netdb.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relayd.h"

struct metric_relay {
	char			 name[MAX_NAME_SIZE];
	struct relay_stats	 st;
	int64_t			 notafter;	/* 0: no certificate */
};

struct metric_table {
	char			 name[MAX_NAME_SIZE];
	int			 disabled;
	int			 nocheck;	/* its hosts count as up */
	int			 up;
};

struct metric_host {
	size_t			 table;		/* index in m_tables */
	char			 name[RELAYD_HOSTNAME_MAX];
	int			 up;
	unsigned long		 checks;
	unsigned long		 checks_up;
	uint64_t		 check_us;
};

struct metric_rdr {
	char			 name[MAX_NAME_SIZE];
	int			 state;		/* enum rdr_state */
	struct ctl_rdrstats	 st;
};

struct metric_router {
	char			 name[MAX_NAME_SIZE];
	unsigned int		 gateways;
};

struct metrics {
	struct ctl_status	 m_st;
	struct ctl_demote	*m_demotes;
	size_t			 m_ndemotes;
	struct ctl_announce	*m_announces;
	size_t			 m_nannounces;
	struct metric_rdr	*m_rdrs;
	struct metric_router	*m_routers;
	size_t			 m_nrdrs;
	size_t			 m_nrouters;
	struct metric_relay	*m_relays;
	struct metric_table	*m_tables;
	struct metric_host	*m_hosts;
	size_t			 m_nrelays;
	size_t			 m_ntables;
	size_t			 m_nhosts;
	int			 m_skip;	/* hosts of a table seen */
};

static int	 metric_grow(void *, size_t, size_t);
static void	 metric_label(FILE *, const char *, const char *);
static void	 metric_family(FILE *, const char *, const char *,
		    const char *);

/*
 * A family of metrics: its name, type and help, and how its values are
 * written, one line per object (a relay, a redirection, a table...):
 * each() walks the objects and writes their labels, value() the number
 * of one of them.
 */
struct metric_def {
	const char	*name;
	const char	*type;
	const char	*help;
	void		(*each)(struct metrics *, FILE *,
			    const struct metric_def *);
	uint64_t	(*value)(const void *);
};

static void	 metric_each_status(struct metrics *, FILE *,
		    const struct metric_def *);
static void	 metric_each_relay(struct metrics *, FILE *,
		    const struct metric_def *);
static void	 metric_each_rdr(struct metrics *, FILE *,
		    const struct metric_def *);
static void	 metric_each_router(struct metrics *, FILE *,
		    const struct metric_def *);
static void	 metric_each_announce(struct metrics *, FILE *,
		    const struct metric_def *);
static void	 metric_each_demote(struct metrics *, FILE *,
		    const struct metric_def *);
static void	 metric_each_table(struct metrics *, FILE *,
		    const struct metric_def *);
static void	 metric_each_host(struct metrics *, FILE *,
		    const struct metric_def *);
static void	 metric_build_info(struct metrics *, FILE *,
		    const struct metric_def *);
static void	 metric_keyop_summary(struct metrics *, FILE *,
		    const struct metric_def *);
static void	 metric_relay_ends(struct metrics *, FILE *,
		    const struct metric_def *);
static void	 metric_relay_refused(struct metrics *, FILE *,
		    const struct metric_def *);
static void	 metric_relay_expiry(struct metrics *, FILE *,
		    const struct metric_def *);
static void	 metric_relay_bytes(struct metrics *, FILE *,
		    const struct metric_def *);
static void	 metric_host_seconds(struct metrics *, FILE *,
		    const struct metric_def *);

/* The statistics of every relay process of a relay, summed. */
void
relay_stats_sum(struct relay *rlay, struct relay_stats *crs)
{
	struct relay_stats	*rs;
	unsigned int		 i;
	int			 d, k;

	memset(crs, 0, sizeof(*crs));
	crs->interval = RELAY_STATINTERVAL;
	/* what nftables refused: before any relay process saw it */
	for (d = 0; d < RELAY_LIM_MAX; d++)
		crs->lim_refused[d] = rlay->rl_limrefused[d];
	for (i = 0; i < PROC_MAX_INSTANCES; i++) {
		rs = &rlay->rl_stats[i];
		crs->cnt += rs->cnt;
		crs->last += rs->last;
		crs->avg += rs->avg;
		crs->last_hour += rs->last_hour;
		crs->avg_hour += rs->avg_hour;
		crs->last_day += rs->last_day;
		crs->avg_day += rs->avg_day;
		crs->active += rs->active;
		crs->sessions += rs->sessions;
		crs->requests += rs->requests;
		crs->deferred += rs->deferred;
		crs->dropped += rs->dropped;
		crs->cfailed += rs->cfailed;
		for (d = 0; d < RELAY_END_MAX; d++)
			crs->ends[d] += rs->ends[d];
		for (d = 0; d < RELAY_LIM_MAX; d++)
			crs->lim_refused[d] += rs->lim_refused[d];
		for (d = 0; d < 2; d++)
			for (k = 0; k < 2; k++)
				crs->bytes[d][k] += rs->bytes[d][k];
	}
}

struct metrics *
metrics_new(void)
{
	return (calloc(1, sizeof(struct metrics)));
}

void
metrics_free(struct metrics *m)
{
	if (m == NULL)
		return;
	free(m->m_relays);
	free(m->m_rdrs);
	free(m->m_routers);
	free(m->m_tables);
	free(m->m_demotes);
	free(m->m_announces);
	free(m->m_hosts);
	free(m);
}

/* One more element of size bytes, zeroed, at *(void **)pp + n. */
static int
metric_grow(void *pp, size_t n, size_t size)
{
	void	*p;

	if ((p = reallocarray(*(void **)pp, n + 1, size)) == NULL)
		return (-1);
	memset((char *)p + n * size, 0, size);
	*(void **)pp = p;
	return (0);
}

void
metrics_status(struct metrics *m, struct ctl_status *st)
{
	m->m_st = *st;
	m->m_st.version[sizeof(m->m_st.version) - 1] = '\0';
	m->m_st.engine[sizeof(m->m_st.engine) - 1] = '\0';
}

int
metrics_relay(struct metrics *m, struct relay *rlay)
{
	struct metric_relay	*mr;

	if (metric_grow(&m->m_relays, m->m_nrelays, sizeof(*mr)) == -1)
		return (-1);
	mr = &m->m_relays[m->m_nrelays++];
	(void)strlcpy(mr->name, rlay->rl_conf.name, sizeof(mr->name));
	relay_stats_sum(rlay, &mr->st);
	mr->notafter = rlay->rl_conf.tls_notafter;
	return (0);
}

int
metrics_rdr(struct metrics *m, struct rdr *rdr)
{
	struct metric_rdr	*mr;

	if (metric_grow(&m->m_rdrs, m->m_nrdrs, sizeof(*mr)) == -1)
		return (-1);
	mr = &m->m_rdrs[m->m_nrdrs++];
	(void)strlcpy(mr->name, rdr->conf.name, sizeof(mr->name));
	mr->state = (rdr->conf.flags & F_DISABLE) ? RDR_DOWN : rdr->state;
	mr->st = rdr->stats;
	return (0);
}

int
metrics_router(struct metrics *m, struct router *rt)
{
	struct metric_router	*mr;

	if (metric_grow(&m->m_routers, m->m_nrouters, sizeof(*mr)) == -1)
		return (-1);
	mr = &m->m_routers[m->m_nrouters++];
	(void)strlcpy(mr->name, rt->conf.name, sizeof(mr->name));
	mr->gateways = rt->ks.nhosts;
	return (0);
}

/* A demote group's count. */
int
metrics_demote(struct metrics *m, struct ctl_demote *cd)
{
	if (metric_grow(&m->m_demotes, m->m_ndemotes, sizeof(*cd)) == -1)
		return (-1);
	m->m_demotes[m->m_ndemotes] = *cd;
	m->m_demotes[m->m_ndemotes++].group[sizeof(cd->group) - 1] = '\0';
	return (0);
}

/* An address of announce, and whether it is announced. */
int
metrics_announce(struct metrics *m, struct ctl_announce *ca)
{
	if ((ca->ss.ss_family != AF_INET && ca->ss.ss_family != AF_INET6) ||
	    metric_grow(&m->m_announces, m->m_nannounces, sizeof(*ca)) == -1)
		return (-1);
	m->m_announces[m->m_nannounces++] = *ca;
	return (0);
}

/* A table used by several relays comes once; its hosts follow it. */
int
metrics_table(struct metrics *m, struct table *tb)
{
	struct metric_table	*mt;
	size_t			 i;

	m->m_skip = 0;
	for (i = 0; i < m->m_ntables; i++)
		if (strcmp(m->m_tables[i].name, tb->conf.name) == 0) {
			m->m_skip = 1;
			return (0);
		}
	if (metric_grow(&m->m_tables, m->m_ntables, sizeof(*mt)) == -1)
		return (-1);
	mt = &m->m_tables[m->m_ntables++];
	(void)strlcpy(mt->name, tb->conf.name, sizeof(mt->name));
	mt->disabled = (tb->conf.flags & F_DISABLE) != 0;
	mt->nocheck = tb->conf.check == CHECK_NOCHECK;
	return (0);
}

/* A host of the last table. */
int
metrics_host(struct metrics *m, struct host *h)
{
	struct metric_table	*mt;
	struct metric_host	*mh;

	if (m->m_skip || m->m_ntables == 0)
		return (0);
	mt = &m->m_tables[m->m_ntables - 1];
	if (metric_grow(&m->m_hosts, m->m_nhosts, sizeof(*mh)) == -1)
		return (-1);
	mh = &m->m_hosts[m->m_nhosts++];
	mh->table = m->m_ntables - 1;
	(void)strlcpy(mh->name, h->conf.name, sizeof(mh->name));
	mh->up = (h->up == HOST_UP || mt->nocheck) &&
	    (h->flags & F_DISABLE) == 0;
	mh->checks = h->check_cnt;
	mh->checks_up = h->up_cnt;
	mh->check_us = h->check_us;
	mt->up += mh->up;
	return (0);
}

/* a label value: backslash, double quote and newline escaped */
static void
metric_label(FILE *f, const char *name, const char *value)
{
	const char	*p;

	fprintf(f, "%s=\"", name);
	for (p = value; *p != '\0'; p++) {
		if (*p == '\\' || *p == '"')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void
metric_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The value of one object, for value(): a field of its statistics. */
#define METRIC_FIELD(_fn, _type, _expr)				\
static uint64_t							\
_fn(const void *arg)						\
{								\
	const _type	*o = arg;				\
								\
	return ((uint64_t)(_expr));				\
}

METRIC_FIELD(status_started, struct ctl_status, o->started)
METRIC_FIELD(status_generation, struct ctl_status, o->generation)
METRIC_FIELD(status_reloads, struct ctl_status,
    o->generation > 0 ? o->generation - 1 : 0)
METRIC_FIELD(status_keyops_failed, struct ctl_status, o->keyops_failed)
METRIC_FIELD(status_stalled, struct ctl_status, o->relays_stalled)
METRIC_FIELD(status_silent, struct ctl_status, o->procs_stalled)
METRIC_FIELD(relay_sessions, struct relay_stats, o->sessions)
METRIC_FIELD(relay_active, struct relay_stats, o->active)
METRIC_FIELD(relay_requests, struct relay_stats, o->requests)
METRIC_FIELD(relay_cfailed, struct relay_stats, o->cfailed)
METRIC_FIELD(relay_deferred, struct relay_stats, o->deferred)
METRIC_FIELD(relay_dropped, struct relay_stats, o->dropped)
METRIC_FIELD(rdr_up, struct metric_rdr, o->state != RDR_DOWN)
METRIC_FIELD(rdr_backup, struct metric_rdr, o->state == RDR_BACKUP)
METRIC_FIELD(rdr_sessions, struct metric_rdr, o->st.sessions)
METRIC_FIELD(rdr_packets, struct metric_rdr, o->st.packets)
METRIC_FIELD(rdr_bytes, struct metric_rdr, o->st.bytes)
METRIC_FIELD(rdr_states, struct metric_rdr, o->st.states)
METRIC_FIELD(router_gateways, struct metric_router, o->gateways)
METRIC_FIELD(demote_count, struct ctl_demote, o->count)
METRIC_FIELD(announced, struct ctl_announce, o->up)
METRIC_FIELD(table_up, struct metric_table, o->up)
METRIC_FIELD(table_enabled, struct metric_table, !o->disabled)
METRIC_FIELD(host_up, struct metric_host, o->up)
METRIC_FIELD(host_checks, struct metric_host, o->checks)
METRIC_FIELD(host_checks_up, struct metric_host, o->checks_up)

/* In the order they are written. */
static const struct metric_def metric_defs[] = {
	{ "relayd_build_info", "gauge",
	    "The version of relayd and the splice engine it uses.",
	    metric_build_info, NULL },
	{ "relayd_start_time_seconds", "gauge",
	    "When relayd started, in seconds since the epoch.",
	    metric_each_status, status_started },
	{ "relayd_config_generation", "gauge",
	    "The configuration running: 1 at the start, one more each "
	    "reload.", metric_each_status, status_generation },
	{ "relayd_reloads_total", "counter",
	    "Configurations loaded since the start.",
	    metric_each_status, status_reloads },
	{ "relayd_ca_key_operation_duration_seconds", "summary",
	    "Private-key operations the relay processes asked of the ca "
	    "processes, and their round trips.", metric_keyop_summary, NULL },
	{ "relayd_ca_key_operation_failures_total", "counter",
	    "Private-key operations that failed or got no answer in time.",
	    metric_each_status, status_keyops_failed },
	{ "relayd_relay_processes_stalled", "gauge",
	    "Relay processes that have not answered the parent for 0.6 s.",
	    metric_each_status, status_stalled },
	{ "relayd_processes_not_answering", "gauge",
	    "Child processes of any kind (relay, ca, hce, pfe) that have "
	    "not answered the parent for 0.6 s; while any does not, every "
	    "demote group is demoted and every address withdrawn.",
	    metric_each_status, status_silent },
	{ "relayd_relay_sessions_total", "counter",
	    "Sessions the relay accepted (dns relays: queries).",
	    metric_each_relay, relay_sessions },
	{ "relayd_relay_sessions_active", "gauge",
	    "Sessions of the relay under way.",
	    metric_each_relay, relay_active },
	{ "relayd_relay_requests_total", "counter",
	    "HTTP requests the relay read.",
	    metric_each_relay, relay_requests },
	{ "relayd_relay_connect_failures_total", "counter",
	    "Sessions that found no backend to connect to.",
	    metric_each_relay, relay_cfailed },
	{ "relayd_relay_accept_deferred_total", "counter",
	    "Times the relay stopped accepting for a second: no "
	    "descriptors.", metric_each_relay, relay_deferred },
	{ "relayd_relay_datagrams_dropped_total", "counter",
	    "Datagrams a dns relay dropped.",
	    metric_each_relay, relay_dropped },
	{ "relayd_relay_session_ends_total", "counter",
	    "Sessions that ended, by how: ok, error or timeout.",
	    metric_relay_ends, NULL },
	{ "relayd_relay_refused_total", "counter",
	    "Connections (requests: max-src-request-rate) refused by the "
	    "relay's limits per client source, by the limit.",
	    metric_relay_refused, NULL },
	{ "relayd_relay_bytes_total", "counter",
	    "Bytes relayed: in from clients, out from backends, spliced "
	    "by the kernel or copied by the relay.", metric_relay_bytes, NULL },
	{ "relayd_relay_certificate_expiry_timestamp_seconds", "gauge",
	    "When the first of the certificates of the relay's TLS "
	    "listener expires, in seconds since the epoch.",
	    metric_relay_expiry, NULL },
	{ "relayd_redirect_up", "gauge",
	    "1 for a redirection that redirects (a host of its table or "
	    "backup table is up), else 0.", metric_each_rdr, rdr_up },
	{ "relayd_redirect_backup", "gauge",
	    "1 for a redirection that uses its backup table.",
	    metric_each_rdr, rdr_backup },
	{ "relayd_redirect_sessions_total", "counter",
	    "Connections the redirection redirected.",
	    metric_each_rdr, rdr_sessions },
	{ "relayd_redirect_packets_total", "counter",
	    "Packets of redirected connections, both ways.",
	    metric_each_rdr, rdr_packets },
	{ "relayd_redirect_bytes_total", "counter",
	    "Bytes of redirected connections, both ways.",
	    metric_each_rdr, rdr_bytes },
	{ "relayd_redirect_states", "gauge",
	    "Connection tracking entries of the redirection.",
	    metric_each_rdr, rdr_states },
	{ "relayd_router_gateways_up", "gauge",
	    "Gateways of the router's routes (0: its routes are removed).",
	    metric_each_router, router_gateways },
	{ "relayd_demote_count", "gauge",
	    "The demotion of the carp group keepalived reads: its demoting "
	    "tables that are down, one more until the first checks.",
	    metric_each_demote, demote_count },
	{ "relayd_announced", "gauge",
	    "1 for an address of announce that is announced, 0 for one "
	    "that is withdrawn.", metric_each_announce, announced },
	{ "relayd_table_hosts_up", "gauge",
	    "Hosts of the table that are up.",
	    metric_each_table, table_up },
	{ "relayd_table_enabled", "gauge",
	    "1 for a table that is enabled, 0 for one that is disabled.",
	    metric_each_table, table_enabled },
	{ "relayd_host_up", "gauge",
	    "1 for a host that is up (or in a table without checks), 0 for "
	    "one that is down, unknown or disabled.",
	    metric_each_host, host_up },
	{ "relayd_host_checks_total", "counter",
	    "Checks of the host.", metric_each_host, host_checks },
	{ "relayd_host_checks_up_total", "counter",
	    "Checks of the host that found it up.",
	    metric_each_host, host_checks_up },
	{ "relayd_host_check_duration_seconds", "gauge",
	    "How long the host's last check took.", metric_host_seconds, NULL }
};

/* Every family, in the OpenMetrics text format. */
void
metrics_print(struct metrics *m, FILE *f)
{
	const struct metric_def	*md;
	size_t			 i;

	for (i = 0; i < nitems(metric_defs); i++) {
		md = &metric_defs[i];
		metric_family(f, md->name, md->type, md->help);
		md->each(m, f, md);
	}
	fprintf(f, "# EOF\n");
}

static void
metric_value(FILE *f, uint64_t v)
{
	fprintf(f, "} %llu\n", (unsigned long long)v);
}

static void
metric_seconds(FILE *f, uint64_t us)
{
	fprintf(f, "%llu.%06llu\n", (unsigned long long)(us / 1000000),
	    (unsigned long long)(us % 1000000));
}

static void
metric_each_status(struct metrics *m, FILE *f, const struct metric_def *md)
{
	fprintf(f, "%s %llu\n", md->name,
	    (unsigned long long)md->value(&m->m_st));
}

static void
metric_each_relay(struct metrics *m, FILE *f, const struct metric_def *md)
{
	size_t	 i;

	for (i = 0; i < m->m_nrelays; i++) {
		fprintf(f, "%s{", md->name);
		metric_label(f, "relay", m->m_relays[i].name);
		metric_value(f, md->value(&m->m_relays[i].st));
	}
}

/* Only the relays with a TLS listener have a certificate to expire. */
static void
metric_relay_expiry(struct metrics *m, FILE *f, const struct metric_def *md)
{
	size_t	 i;

	for (i = 0; i < m->m_nrelays; i++) {
		if (m->m_relays[i].notafter <= 0)
			continue;
		fprintf(f, "%s{", md->name);
		metric_label(f, "relay", m->m_relays[i].name);
		metric_value(f, (uint64_t)m->m_relays[i].notafter);
	}
}

static void
metric_each_rdr(struct metrics *m, FILE *f, const struct metric_def *md)
{
	size_t	 i;

	for (i = 0; i < m->m_nrdrs; i++) {
		fprintf(f, "%s{", md->name);
		metric_label(f, "redirect", m->m_rdrs[i].name);
		metric_value(f, md->value(&m->m_rdrs[i]));
	}
}

static void
metric_each_router(struct metrics *m, FILE *f, const struct metric_def *md)
{
	size_t	 i;

	for (i = 0; i < m->m_nrouters; i++) {
		fprintf(f, "%s{", md->name);
		metric_label(f, "router", m->m_routers[i].name);
		metric_value(f, md->value(&m->m_routers[i]));
	}
}

static void
metric_each_demote(struct metrics *m, FILE *f, const struct metric_def *md)
{
	size_t	 i;

	for (i = 0; i < m->m_ndemotes; i++) {
		fprintf(f, "%s{", md->name);
		metric_label(f, "group", m->m_demotes[i].group);
		metric_value(f, md->value(&m->m_demotes[i]));
	}
}

static void
metric_each_announce(struct metrics *m, FILE *f, const struct metric_def *md)
{
	char	 buf[NI_MAXHOST];
	size_t	 i;

	for (i = 0; i < m->m_nannounces; i++) {
		fprintf(f, "%s{", md->name);
		metric_label(f, "address", print_host(&m->m_announces[i].ss,
		    buf, sizeof(buf)));
		metric_value(f, md->value(&m->m_announces[i]));
	}
}

static void
metric_each_table(struct metrics *m, FILE *f, const struct metric_def *md)
{
	size_t	 i;

	for (i = 0; i < m->m_ntables; i++) {
		fprintf(f, "%s{", md->name);
		metric_label(f, "table", m->m_tables[i].name);
		metric_value(f, md->value(&m->m_tables[i]));
	}
}

static void
metric_host_labels(struct metrics *m, FILE *f, const char *name,
    struct metric_host *mh)
{
	fprintf(f, "%s{", name);
	metric_label(f, "table", m->m_tables[mh->table].name);
	fputc(',', f);
	metric_label(f, "host", mh->name);
}

static void
metric_each_host(struct metrics *m, FILE *f, const struct metric_def *md)
{
	size_t	 i;

	for (i = 0; i < m->m_nhosts; i++) {
		metric_host_labels(m, f, md->name, &m->m_hosts[i]);
		metric_value(f, md->value(&m->m_hosts[i]));
	}
}

static void
metric_host_seconds(struct metrics *m, FILE *f, const struct metric_def *md)
{
	size_t	 i;

	for (i = 0; i < m->m_nhosts; i++) {
		metric_host_labels(m, f, md->name, &m->m_hosts[i]);
		fputs("} ", f);
		metric_seconds(f, m->m_hosts[i].check_us);
	}
}

static void
metric_build_info(struct metrics *m, FILE *f, const struct metric_def *md)
{
	fprintf(f, "%s{", md->name);
	metric_label(f, "version", m->m_st.version);
	fputc(',', f);
	metric_label(f, "splice_engine", m->m_st.engine);
	fprintf(f, "} 1\n");
}

static void
metric_keyop_summary(struct metrics *m, FILE *f, const struct metric_def *md)
{
	fprintf(f, "%s_sum ", md->name);
	metric_seconds(f, m->m_st.keyops_us);
	fprintf(f, "%s_count %llu\n", md->name,
	    (unsigned long long)m->m_st.keyops);
}

static void
metric_relay_ends(struct metrics *m, FILE *f, const struct metric_def *md)
{
	static const char	*ends[RELAY_END_MAX] = {
		"ok", "error", "timeout"
	};
	size_t			 i;
	int			 k;

	for (i = 0; i < m->m_nrelays; i++)
		for (k = 0; k < RELAY_END_MAX; k++) {
			fprintf(f, "%s{", md->name);
			metric_label(f, "relay", m->m_relays[i].name);
			fputc(',', f);
			metric_label(f, "end", ends[k]);
			metric_value(f, m->m_relays[i].st.ends[k]);
		}
}

static void
metric_relay_refused(struct metrics *m, FILE *f, const struct metric_def *md)
{
	static const char	*why[RELAY_LIM_MAX] = {
		"max-src-conn", "max-src-conn-rate", "overload",
		"max-src-request-rate"
	};
	size_t			 i;
	int			 k;

	for (i = 0; i < m->m_nrelays; i++)
		for (k = 0; k < RELAY_LIM_MAX; k++) {
			fprintf(f, "%s{", md->name);
			metric_label(f, "relay", m->m_relays[i].name);
			fputc(',', f);
			metric_label(f, "limit", why[k]);
			metric_value(f, m->m_relays[i].st.lim_refused[k]);
		}
}

static void
metric_relay_bytes(struct metrics *m, FILE *f, const struct metric_def *md)
{
	static const char	*dirs[2] = { "in", "out" };
	static const char	*kinds[2] = { "spliced", "copied" };
	size_t			 i;
	int			 d, k;

	for (i = 0; i < m->m_nrelays; i++)
		for (d = 0; d < 2; d++)
			for (k = 0; k < 2; k++) {
				fprintf(f, "%s{", md->name);
				metric_label(f, "relay", m->m_relays[i].name);
				fputc(',', f);
				metric_label(f, "direction", dirs[d]);
				fputc(',', f);
				metric_label(f, "mode", kinds[k]);
				metric_value(f, m->m_relays[i].st.bytes[d][k]);
			}
}
