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
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <arpa/inet.h>

#include <ctype.h>
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "relayd.h"
#include "parser.h"

__dead void	 usage(void);
static int	 show_summary_msg(struct imsg *, int);
static int	 show_session_msg(struct imsg *);
static void	 overload_request(struct parse_result *);
static int	 show_overload_msg(struct imsg *);
static int	 show_status_msg(struct imsg *);
static void	 status_table(struct table *, int, int, int);
static void	 status_proc(struct ctl_procinfo *);
static void	 status_procs_end(void);
static int	 show_metrics_msg(struct imsg *);
static int	 show_command_output(struct imsg *);
static int	 monitor(struct imsg *);
static void	 print_stats(struct relay_stats *);
static void	*msg_data(struct imsg *, size_t, const char *);
static const char *rdr_status(struct rdr *);
static void	 print_rdr_stats(struct rdr *);
static const char *
		 print_hostport(struct sockaddr_storage *, char *, size_t);

struct imsgname {
	int		 type;
	const char	*name;
};

static const struct imsgname imsgs[] = {
	{ IMSG_HOST_STATUS,		"host_status" },
	{ IMSG_CTL_RDR_DISABLE,		"ctl_rdr_disable" },
	{ IMSG_CTL_RDR_ENABLE,		"ctl_rdr_enable" },
	{ IMSG_CTL_TABLE_ENABLE,	"ctl_table_enable" },
	{ IMSG_CTL_TABLE_DISABLE,	"ctl_table_disable" },
	{ IMSG_CTL_HOST_ENABLE,		"ctl_host_enable" },
	{ IMSG_CTL_HOST_DISABLE,	"ctl_host_disable" },
	{ 0,				NULL }
};

/* seconds without a word from relayd */
#define RELAYCTL_TIMEOUT	60

static struct imsgbuf	*ibuf;
static int		 error;

__dead void
usage(void)
{
	extern char	*__progname;

	fprintf(stderr, "usage: %s [-s socket] [-t seconds] command "
	    "[argument ...]\n", __progname);
	exit(1);
}

/* The control socket, connected; a monitor waits for the daemon. */
static int
ctl_connect(const char *sockname, int monitor_wait)
{
	struct sockaddr_un	 sun;
	int			 ctl_sock;

	if ((ctl_sock = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		err(1, "socket");
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlcpy(sun.sun_path, sockname, sizeof(sun.sun_path)) >=
	    sizeof(sun.sun_path))
		errx(1, "socket `%s' too long", sockname);
	for (;;) {
		if (connect(ctl_sock, (struct sockaddr *)&sun,
		    sizeof(sun)) == 0)
			break;
		/* a monitor waits for the daemon to come (back) */
		if (monitor_wait &&
		    (errno == ENOENT || errno == ECONNREFUSED)) {
			sleep(1);
			continue;
		}
		err(1, "connect: %s (is relayd running?)", sockname);
	}
	return (ctl_sock);
}

/* The request of the command line: 1 when no answer is awaited. */
static int
ctl_request(struct parse_result *res)
{
	char	 path[PATH_MAX];
	int	 v = 0;

	switch (res->action) {
	case NONE:
		usage();
		/* NOTREACHED */
	case SHOW_SUM:
	case SHOW_HOSTS:
	case SHOW_RDRS:
	case SHOW_RELAYS:
	case SHOW_ROUTERS:
		imsg_compose(ibuf, IMSG_CTL_SHOW_SUM, 0, 0, -1, NULL, 0);
		printf("%-4s\t%-8s\t%-24s\t%-7s\tStatus\n",
		    "Id", "Type", "Name", "Avlblty");
		break;
	case SHOW_SESSIONS:
		imsg_compose(ibuf, IMSG_CTL_SESSION, 0, 0, -1, NULL, 0);
		break;
	case STATUS:
	case SHOW_METRICS:
		imsg_compose(ibuf, IMSG_CTL_STATUS, 0, 0, -1, NULL, 0);
		break;
	case RDR_ENABLE:
		imsg_compose(ibuf, IMSG_CTL_RDR_ENABLE, 0, 0, -1,
		    &res->id, sizeof(res->id));
		break;
	case RDR_DISABLE:
		imsg_compose(ibuf, IMSG_CTL_RDR_DISABLE, 0, 0, -1,
		    &res->id, sizeof(res->id));
		break;
	case TABLE_ENABLE:
		imsg_compose(ibuf, IMSG_CTL_TABLE_ENABLE, 0, 0, -1,
		    &res->id, sizeof(res->id));
		break;
	case TABLE_DISABLE:
		imsg_compose(ibuf, IMSG_CTL_TABLE_DISABLE, 0, 0, -1,
		    &res->id, sizeof(res->id));
		break;
	case HOST_ENABLE:
		imsg_compose(ibuf, IMSG_CTL_HOST_ENABLE, 0, 0, -1,
		    &res->id, sizeof(res->id));
		break;
	case HOST_DISABLE:
		imsg_compose(ibuf, IMSG_CTL_HOST_DISABLE, 0, 0, -1,
		    &res->id, sizeof(res->id));
		break;
	case SHUTDOWN:
		imsg_compose(ibuf, IMSG_CTL_SHUTDOWN, 0, 0, -1, NULL, 0);
		break;
	case POLL:
		imsg_compose(ibuf, IMSG_CTL_POLL, 0, 0, -1, NULL, 0);
		break;
	case LOAD:
		/* the daemon does not share our working directory */
		if (realpath(res->path, path) == NULL)
			err(1, "%s", res->path);
		imsg_compose(ibuf, IMSG_CTL_RELOAD, 0, 0, -1, path,
		    strlen(path));
		break;
	case RELOAD:
		imsg_compose(ibuf, IMSG_CTL_RELOAD, 0, 0, -1, NULL, 0);
		break;
	case MONITOR:
		imsg_compose(ibuf, IMSG_CTL_NOTIFY, 0, 0, -1, NULL, 0);
		break;
	case LOG_VERBOSE:
		v = 2;
		/* FALLTHROUGH */
	case LOG_BRIEF:
		imsg_compose(ibuf, IMSG_CTL_VERBOSE, 0, 0, -1, &v, sizeof(v));
		break;
	case SHOW_OVERLOAD:
	case OVERLOAD_DELETE:
	case OVERLOAD_FLUSH:
		overload_request(res);
		break;
	}
	return (0);
}

/* relayctl show overload, overload delete and overload flush */
static void
overload_request(struct parse_result *res)
{
	struct ctl_overload	 co;

	if (res->action == SHOW_OVERLOAD) {
		imsg_compose(ibuf, IMSG_CTL_OVERLOAD, 0, 0, -1, NULL, 0);
		return;
	}
	memset(&co, 0, sizeof(co));
	(void)strlcpy(co.table, res->id.name, sizeof(co.table));
	if (res->action == OVERLOAD_DELETE) {
		if (inet_pton(AF_INET, res->path, co.addr) == 1)
			co.af = AF_INET;
		else if (inet_pton(AF_INET6, res->path, co.addr) == 1)
			co.af = AF_INET6;
		else
			errx(1, "not an address: %s", res->path);
	}
	imsg_compose(ibuf, IMSG_CTL_OVERLOAD_DEL, 0, 0, -1, &co, sizeof(co));
}

/* One source of an overload table; 1 at the end. */
static int
show_overload_msg(struct imsg *imsg)
{
	struct ctl_overload	*co;
	char			 a[INET6_ADDRSTRLEN];

	switch (imsg->hdr.type) {
	case IMSG_CTL_OVERLOAD:
		if (IMSG_DATA_SIZE(imsg) != sizeof(*co))
			errx(1, "bad overload message");
		co = imsg->data;
		co->table[sizeof(co->table) - 1] = '\0';
		if (inet_ntop(co->af, co->addr, a, sizeof(a)) == NULL)
			(void)strlcpy(a, "?", sizeof(a));
		printf("<%s>\t%s/%u\texpires in %us\t%s", co->table, a,
		    co->prefix, co->expires, co->pid == 0 ? "nftables" :
		    "relay process ");
		if (co->pid != 0)
			printf("%ld", (long)co->pid);
		printf("\n");
		return (0);
	case IMSG_CTL_END:
		return (1);
	default:
		errx(1, "wrong message in overload: %u", imsg->hdr.type);
	}
}

/* One message of the answer: 1 when it was the last. */
static int
ctl_answer(struct parse_result *res, struct imsg *imsg)
{
	/* the restricted socket's answer to what it does not take */
	if (imsg->hdr.type == IMSG_CTL_DENIED) {
		fprintf(stderr, "not permitted on this socket\n");
		error = 1;
		return (1);
	}
	switch (res->action) {
	case SHOW_SUM:
	case SHOW_HOSTS:
	case SHOW_RDRS:
	case SHOW_RELAYS:
	case SHOW_ROUTERS:
		return (show_summary_msg(imsg, res->action));
	case SHOW_SESSIONS:
		return (show_session_msg(imsg));
	case STATUS:
		return (show_status_msg(imsg));
	case SHOW_METRICS:
		return (show_metrics_msg(imsg));
	case SHOW_OVERLOAD:
		return (show_overload_msg(imsg));
	case OVERLOAD_DELETE:
	case OVERLOAD_FLUSH:
	case RDR_DISABLE:
	case RDR_ENABLE:
	case TABLE_DISABLE:
	case TABLE_ENABLE:
	case HOST_DISABLE:
	case HOST_ENABLE:
	case POLL:
	case SHUTDOWN:
		return (show_command_output(imsg));
	case RELOAD:
	case LOAD:
		/* silent on success, as OpenBSD's relayctl */
		if (imsg->hdr.type == IMSG_CTL_FAIL) {
			printf("reload failed: the configuration was "
			    "rejected, see the log\n");
			error = 1;
		} else if (imsg->hdr.type == IMSG_CTL_RELOAD_BUSY) {
			printf("reload already in progress\n");
			error = 2;
		}
		return (1);
	case LOG_VERBOSE:
	case LOG_BRIEF:
		/* OpenBSD's words, once relayd has taken it */
		if (imsg->hdr.type != IMSG_CTL_OK)
			errx(1, "wrong answer to log: %u", imsg->hdr.type);
		printf("logging request sent.\n");
		return (1);
	case NONE:
		break;
	case MONITOR:
		return (monitor(imsg));
	}
	return (0);
}

int
main(int argc, char *argv[])
{
	struct parse_result	*res = NULL;
	struct imsg		 imsg;
	const char		*sockname = RELAYD_SOCKET, *errstr;
	struct pollfd		 pfd;
	ssize_t			 n;
	int			 ctl_sock, done = 0, ch;
	int			 timeout = RELAYCTL_TIMEOUT;

	while ((ch = getopt(argc, argv, "s:t:")) != -1) {
		switch (ch) {
		case 's':
			sockname = optarg;
			break;
		case 't':
			timeout = strtonum(optarg, 0, INT_MAX / 1000, &errstr);
			if (errstr != NULL)
				errx(1, "timeout %s: %s", optarg, errstr);
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;

	if ((res = parse(argc, argv)) == NULL)
		exit(1);

	signal(SIGPIPE, SIG_IGN);

	ctl_sock = ctl_connect(sockname, res->action == MONITOR);

	if ((ibuf = malloc(sizeof(struct imsgbuf))) == NULL)
		err(1, NULL);
	imsg_init(ibuf, ctl_sock);
	done = ctl_request(res);

	if (imsg_flush(ibuf) == -1)
		err(1, "write error");

	/* a daemon that stopped answering must not hold a script */
	pfd.fd = ctl_sock;
	pfd.events = POLLIN;
	if (res->action == MONITOR)
		timeout = 0;
	while (!done) {
		if ((n = poll(&pfd, 1, timeout > 0 ? timeout * 1000 : -1)) ==
		    -1 && errno != EINTR)
			err(1, "poll");
		if (n == 0)
			errx(1, "no answer from relayd in %d s", timeout);
		if (n == -1)
			continue;
		if ((n = imsg_read(ibuf)) == -1 && errno != EAGAIN)
			err(1, "read error");
		if (n == 0)
			errx(1, "pipe closed");

		while (!done) {
			if ((n = imsg_get(ibuf, &imsg)) == -1)
				errx(1, "bad message from relayd");
			if (n == 0)
				break;
			done = ctl_answer(res, &imsg);
			imsg_free(&imsg);
		}
	}
	close(ctl_sock);
	free(ibuf);

	return (error == 2 ? 2 : error ? 1 : 0);
}

static int
monitor(struct imsg *imsg)
{
	const struct imsgname	*imn;
	struct ctl_hoststatus	*hs;
	struct ctl_id		*cid;
	time_t			 now;
	int			 done = 0;

	for (imn = imsgs; imn->name != NULL; imn++)
		if (imn->type == (int)imsg->hdr.type)
			break;
	if (imn->name == NULL) {
		printf("unknown imsg type %u\n", imsg->hdr.type);
		return (1);
	}
	printf("%s: imsg type %u len %u peerid %u pid %u\n", imn->name,
	    imsg->hdr.type, imsg->hdr.len, imsg->hdr.peerid, imsg->hdr.pid);
	now = time(NULL);
	printf("\ttimestamp: %lld, %s", (long long)now, ctime(&now));
	switch (imsg->hdr.type) {
	case IMSG_HOST_STATUS:
		if (IMSG_DATA_SIZE(imsg) != sizeof(struct ctl_hoststatus))
			errx(1, "bad host status message");
		hs = imsg->data;
		printf("\tid: %u\n\tstate: %s\n", hs->id,
		    host_status(hs->up));
		break;
	default:
		if (IMSG_DATA_SIZE(imsg) != sizeof(struct ctl_id))
			errx(1, "bad monitor message");
		cid = imsg->data;
		cid->name[sizeof(cid->name) - 1] = '\0';
		printf("\tid: %u\n\tname: %s\n", cid->id, cid->name);
		break;
	}
	fflush(stdout);
	return (done);
}


static void
print_bytes(const char *indent, struct relay_stats *crs)
{
	unsigned long long	in, out;

	in = crs->bytes[RELAY_DIR_REQUEST][RELAY_BYTES_SPLICED] +
	    crs->bytes[RELAY_DIR_REQUEST][RELAY_BYTES_COPIED];
	out = crs->bytes[RELAY_DIR_RESPONSE][RELAY_BYTES_SPLICED] +
	    crs->bytes[RELAY_DIR_RESPONSE][RELAY_BYTES_COPIED];
	printf("%sbytes: in %llu (spliced %llu, copied %llu), "
	    "out %llu (spliced %llu, copied %llu)\n", indent, in,
	    (unsigned long long)
	    crs->bytes[RELAY_DIR_REQUEST][RELAY_BYTES_SPLICED],
	    (unsigned long long)
	    crs->bytes[RELAY_DIR_REQUEST][RELAY_BYTES_COPIED], out,
	    (unsigned long long)
	    crs->bytes[RELAY_DIR_RESPONSE][RELAY_BYTES_SPLICED],
	    (unsigned long long)
	    crs->bytes[RELAY_DIR_RESPONSE][RELAY_BYTES_COPIED]);
}

static void
print_stats(struct relay_stats *crs)
{
	char	 indent[16];

	if (crs->sessions == 0)
		return;
	(void)snprintf(indent, sizeof(indent), "\t%8s\t", "");
	printf("%stotal: %llu sessions\n", indent,
	    (unsigned long long)crs->sessions);
	printf("%slast: %llu/%llus %llu/h %llu/d sessions\n", indent,
	    (unsigned long long)crs->last, (unsigned long long)crs->interval,
	    (unsigned long long)crs->last_hour,
	    (unsigned long long)crs->last_day);
	printf("%saverage: %llu/%llus %llu/h %llu/d sessions\n", indent,
	    (unsigned long long)crs->avg, (unsigned long long)crs->interval,
	    (unsigned long long)crs->avg_hour,
	    (unsigned long long)crs->avg_day);
	printf("%sactive: %llu sessions\n", indent,
	    (unsigned long long)crs->active);
	if (crs->requests > 0)
		printf("%stotal: %llu requests\n", indent,
		    (unsigned long long)crs->requests);
	print_bytes(indent, crs);
}

/* A redirection's state, as OpenBSD's relayctl says it. */
static const char *
rdr_status(struct rdr *rdr)
{
	if (rdr->conf.flags & F_DISABLE)
		return ("disabled");
	switch (rdr->state) {
	case RDR_ACTIVE:
		return ("active");
	case RDR_BACKUP:
		return ("active (using backup table)");
	default:
		return ("down");
	}
}

/* The kernel's counters of a redirection (nftables and conntrack). */
static void
print_rdr_stats(struct rdr *rdr)
{
	struct ctl_rdrstats	*st = &rdr->stats;
	struct rdr_rate		*r = &rdr->rate;

	if (st->sessions == 0)
		return;
	printf("\t%8s\ttotal: %llu sessions\n", "",
	    (unsigned long long)st->sessions);
	printf("\t%8s\tlast: %llu/%ds %llu/h %llu/d sessions\n", "",
	    (unsigned long long)r->last, RELAY_STATINTERVAL,
	    (unsigned long long)r->last_hour,
	    (unsigned long long)r->last_day);
	printf("\t%8s\taverage: %llu/%ds %llu/h %llu/d sessions\n", "",
	    (unsigned long long)r->avg, RELAY_STATINTERVAL,
	    (unsigned long long)r->avg_hour,
	    (unsigned long long)r->avg_day);
	printf("\t%8s\tactive: %llu states\n", "",
	    (unsigned long long)st->states);
	printf("\t%8s\tpackets: %llu, bytes: %llu\n", "",
	    (unsigned long long)st->packets, (unsigned long long)st->bytes);
}

/* show routers: a router, and its routes */
static void
summary_router(struct imsg *imsg, int type)
{
	struct router	*rt;
	char		 name[RELAYD_HOSTNAME_MAX + 32];
	int		 i;

	rt = msg_data(imsg, sizeof(*rt), "router");
	rt->conf.name[sizeof(rt->conf.name) - 1] = '\0';
	rt->conf.label[sizeof(rt->conf.label) - 1] = '\0';
	printf("%-4u\t%-8s\t%-24s\t%-7s\t%s\n",
	    rt->conf.id, "router", rt->conf.name, "",
	    (rt->conf.flags & F_DISABLE) ? "disabled" : "active");
	if (type != SHOW_ROUTERS)
		return;
	printf("\t%8s\trtable: %d\n", "", rt->conf.rtable);
	if (rt->conf.label[0] != '\0')
		printf("\t%8s\trtlabel: %s\n", "", rt->conf.label);
	for (i = 0; i < rt->conf.nroutes && i < ROUTER_MAXROUTES;
	    i++)
		printf("\t%8s\troute: %s/%d\n", "",
		    print_host(&rt->conf.routes[i], name,
		    sizeof(name)), rt->conf.prefixlen[i]);
}

/* show hosts: a host, and its checks */
static void
summary_host(struct imsg *imsg, int type)
{
	struct host	*host;
	char		 name[RELAYD_HOSTNAME_MAX + 32];

	if (IMSG_DATA_SIZE(imsg) != sizeof(*host))
		errx(1, "bad host message");
	host = imsg->data;
	host->conf.name[sizeof(host->conf.name) - 1] = '\0';
	if (host->conf.parentid)
		(void)snprintf(name, sizeof(name), "%s parent %u",
		    host->conf.name, host->conf.parentid);
	else
		(void)strlcpy(name, host->conf.name, sizeof(name));
	printf("%-4u\t%-8s\t%-24s\t%-7s\t%s\n",
	    host->conf.id, "host", name,
	    print_availability(host->check_cnt, host->up_cnt),
	    (host->flags & F_DISABLE) ? "disabled" :
	    host_status(host->up));
	if (type == SHOW_HOSTS && host->check_cnt) {
		printf("\t%8s\ttotal: %lu/%lu checks", "",
		    host->up_cnt, host->check_cnt);
		if (host->retry_cnt)
			printf(", %d retries", host->retry_cnt);
		if (host->he && host->up == HOST_DOWN)
			printf(", error: %s", host_error(host->he));
		printf("\n");
	}
}

static int
show_summary_msg(struct imsg *imsg, int type)
{
	struct rdr		*rdr;
	struct relay		*rlay;
	struct relay_stats	 crs;
	struct table		*tb;
	char			 name[RELAYD_HOSTNAME_MAX + 32];

	switch (imsg->hdr.type) {
	case IMSG_CTL_RDR:
		if (type == SHOW_HOSTS || type == SHOW_RELAYS ||
		    type == SHOW_ROUTERS)
			break;
		rdr = msg_data(imsg, sizeof(*rdr), "redirect");
		rdr->conf.name[sizeof(rdr->conf.name) - 1] = '\0';
		printf("%-4u\t%-8s\t%-24s\t%-7s\t%s\n",
		    rdr->conf.id, "redirect", rdr->conf.name, "",
		    rdr_status(rdr));
		if (type == SHOW_RDRS)
			print_rdr_stats(rdr);
		break;
	case IMSG_CTL_ROUTER:
		if (type == SHOW_HOSTS || type == SHOW_RELAYS ||
		    type == SHOW_RDRS)
			break;
		summary_router(imsg, type);
		break;
	case IMSG_CTL_RELAY:
		if (type == SHOW_HOSTS || type == SHOW_RDRS ||
		    type == SHOW_ROUTERS)
			break;
		if (IMSG_DATA_SIZE(imsg) != sizeof(*rlay))
			errx(1, "bad relay message");
		rlay = imsg->data;
		rlay->rl_conf.name[sizeof(rlay->rl_conf.name) - 1] = '\0';
		printf("%-4u\t%-8s\t%-24s\t%-7s\t%s\n",
		    rlay->rl_conf.id, "relay", rlay->rl_conf.name, "",
		    (rlay->rl_conf.flags & F_DISABLE) ? "disabled" : "active");
		if (type == SHOW_RELAYS) {
			relay_stats_sum(rlay, &crs);
			print_stats(&crs);
		}
		break;
	case IMSG_CTL_TABLE:
		if (type == SHOW_RELAYS || type == SHOW_RDRS ||
		    type == SHOW_ROUTERS)
			break;
		if (IMSG_DATA_SIZE(imsg) != sizeof(*tb))
			errx(1, "bad table message");
		tb = imsg->data;
		tb->conf.name[sizeof(tb->conf.name) - 1] = '\0';
		if (tb->conf.flags & F_DISABLE)
			(void)strlcpy(name, "disabled", sizeof(name));
		else if (tb->conf.check == CHECK_NOCHECK)
			(void)strlcpy(name, "active (no check)", sizeof(name));
		else if (tb->up == 0)
			(void)strlcpy(name, "empty", sizeof(name));
		else
			(void)snprintf(name, sizeof(name), "active (%d hosts)",
			    tb->up);
		printf("%-4u\t%-8s\t%-24s\t%-7s\t%s\n",
		    tb->conf.id, "table", tb->conf.name, "", name);
		break;
	case IMSG_CTL_HOST:
		if (type == SHOW_RELAYS || type == SHOW_RDRS ||
		    type == SHOW_ROUTERS)
			break;
		summary_host(imsg, type);
		break;
	case IMSG_CTL_END:
		return (1);
	default:
		errx(1, "wrong message in summary: %u", imsg->hdr.type);
	}
	return (0);
}


/* ADDRESS:PORT as OpenBSD's relayctl shows it; a unix socket's path alone. */
static const char *
print_hostport(struct sockaddr_storage *ss, char *buf, size_t len)
{
	char	 host[120];

	if (print_host(ss, host, sizeof(host)) == NULL)
		(void)strlcpy(host, "<unknown>", sizeof(host));
	if (ss->ss_family == AF_UNIX)
		(void)strlcpy(buf, host, len);
	else
		(void)snprintf(buf, len, "%s:%d", host, ss_port(ss));
	return (buf);
}
static int
show_session_msg(struct imsg *imsg)
{
	struct ctl_session	*cs;
	char			 a[128], b[128];
	char			 age[32], idle[32], *p;
	struct relay_stats	 crs;

	switch (imsg->hdr.type) {
	case IMSG_CTL_SESSION:
		if (IMSG_DATA_SIZE(imsg) != sizeof(*cs))
			errx(1, "bad session message");
		cs = imsg->data;
		cs->cs_relay[sizeof(cs->cs_relay) - 1] = '\0';
		printf("session %u:%u %s -> %s\t%s\n",
		    cs->cs_instance, cs->cs_id,
		    print_hostport(&cs->cs_src, a, sizeof(a)),
		    print_hostport(&cs->cs_dst, b, sizeof(b)),
		    cs->cs_running ? "RUNNING" : "DONE");
		printf("\tage %s, idle %s, relay %u, pid %u\n",
		    print_time(&cs->cs_now, &cs->cs_start, age, sizeof(age)),
		    print_time(&cs->cs_now, &cs->cs_last, idle, sizeof(idle)),
		    cs->cs_relayid, (unsigned int)cs->cs_pid);
		cs->cs_request[sizeof(cs->cs_request) - 1] = '\0';
		/* a client wrote it: nothing for the terminal to act on */
		for (p = cs->cs_request; *p != '\0'; p++)
			if (!isprint((unsigned char)*p))
				*p = '?';
		if (cs->cs_request[0] != '\0')
			printf("\trequest %s\n", cs->cs_request);
		/* our extension: an HTTP/2 client's streams */
		if (cs->cs_h2)
			printf("\thttp2 streams %u open, %u requests, %u "
			    "backend connection%s\n", cs->cs_streams,
			    cs->cs_requests, cs->cs_links,
			    cs->cs_links == 1 ? "" : "s");
		/* our extension: which sides speak TLS */
		if (cs->cs_tls != 0)
			printf("\ttls%s%s\n", cs->cs_tls & 1 ? " client" : "",
			    cs->cs_tls & 2 ? " backend" : "");
		memset(&crs, 0, sizeof(crs));
		memcpy(crs.bytes, cs->cs_bytes, sizeof(crs.bytes));
		print_bytes("\t", &crs);
		break;
	case IMSG_CTL_END:
		return (1);
	default:
		errx(1, "wrong message in session: %u", imsg->hdr.type);
	}
	return (0);
}

/* relayctl status: one screen for the daemon, an extension. */
/* status: the daemon's line, and the first of its processes */
static void
status_info(struct imsg *imsg)
{
	struct ctl_status	 st;
	long long		 up;

	if (IMSG_DATA_SIZE(imsg) != sizeof(st))
		errx(1, "bad status message");
	memcpy(&st, imsg->data, sizeof(st));
	st.version[sizeof(st.version) - 1] = '\0';
	st.engine[sizeof(st.engine) - 1] = '\0';
	up = st.now - st.started;
	if (up < 0)
		up = 0;
	printf("relayd %s, pid %d, up %lldd %02lld:%02lld:%02lld\n",
	    st.version, (int)st.parent_pid, up / 86400,
	    up / 3600 % 24, up / 60 % 60, up % 60);
	printf("splice engine: %s\n", st.engine);
	printf("relays: %u, tables: %u, hosts: %u\n", st.nrelays,
	    st.ntables, st.nhosts);
	if (st.keyops > 0)
		printf("ca key operations: %llu, %llu failed, %llu us "
		    "on average\n", (unsigned long long)st.keyops,
		    (unsigned long long)st.keyops_failed,
		    (unsigned long long)(st.keyops_us / st.keyops));
	printf("processes:");
}

/* status: a relay's lines */
static void
status_relay(struct imsg *imsg)
{
	struct relay		*rlay;
	struct relay_stats	 crs;

	if (IMSG_DATA_SIZE(imsg) != sizeof(*rlay))
		errx(1, "bad relay message");
	rlay = imsg->data;
	rlay->rl_conf.name[sizeof(rlay->rl_conf.name) - 1] = '\0';
	relay_stats_sum(rlay, &crs);
	printf("relay %s: %s, sessions: %llu active, %llu total\n",
	    rlay->rl_conf.name,
	    (rlay->rl_conf.flags & F_DISABLE) ? "disabled" : "active",
	    (unsigned long long)crs.active,
	    (unsigned long long)crs.sessions);
	print_bytes("\t", &crs);
	if (crs.deferred > 0)
		printf("\taccept deferred: %llu times, out of "
		    "descriptors\n", (unsigned long long)crs.deferred);
	if (crs.dropped > 0)
		printf("\tdatagrams dropped: %llu\n",
		    (unsigned long long)crs.dropped);
	if (crs.lim_refused[RELAY_LIM_CONN] > 0 ||
	    crs.lim_refused[RELAY_LIM_RATE] > 0 ||
	    crs.lim_refused[RELAY_LIM_OVERLOAD] > 0 ||
	    crs.lim_refused[RELAY_LIM_REQUEST] > 0)
		printf("\trefused: %llu over max-src-conn, %llu over "
		    "max-src-conn-rate, %llu in overload tables, %llu over "
		    "max-src-request-rate\n",
		    (unsigned long long)crs.lim_refused[RELAY_LIM_CONN],
		    (unsigned long long)crs.lim_refused[RELAY_LIM_RATE],
		    (unsigned long long)crs.lim_refused[RELAY_LIM_OVERLOAD],
		    (unsigned long long)crs.lim_refused[RELAY_LIM_REQUEST]);
}

/* status: the processes on one line, then those that do not answer */
static enum privsep_procid	 status_lastproc = PROC_MAX;
static char			 status_silent[512];

static void
status_proc(struct ctl_procinfo *pi)
{
	char	 buf[64];

	pi->pi_title[sizeof(pi->pi_title) - 1] = '\0';
	if (pi->pi_id != status_lastproc)
		printf("%s %s", status_lastproc == PROC_MAX ? "" : ",",
		    pi->pi_title);
	printf(" %d", (int)pi->pi_pid);
	status_lastproc = pi->pi_id;
	if (!pi->pi_silent)
		return;
	(void)snprintf(buf, sizeof(buf), "%s%s %u (pid %d)",
	    status_silent[0] != '\0' ? ", " : "", pi->pi_title,
	    pi->pi_instance, (int)pi->pi_pid);
	(void)strlcat(status_silent, buf, sizeof(status_silent));
}

static void
status_procs_end(void)
{
	if (status_lastproc == PROC_MAX)
		return;
	printf("\n");
	status_lastproc = PROC_MAX;
	if (status_silent[0] != '\0')
		printf("not answering: %s (every demote group demoted)\n",
		    status_silent);
	status_silent[0] = '\0';
}

/*
 * A table's line in relayctl status.  Nothing checks the hosts of a
 * table without a check: relayd uses all that are enabled, so they are
 * counted as usable, not as up (which would read as an outage).
 */
static void
status_table(struct table *tb, int nup, int nusable, int nhosts)
{
	const char	*state;

	state = (tb->conf.flags & F_DISABLE) ? "disabled" : "active";
	if (tb->conf.check == CHECK_NOCHECK) {
		printf("\ttable %s: %s, hosts %d/%d usable (no check)\n",
		    tb->conf.name, state, nusable, nhosts);
		return;
	}
	printf("\ttable %s: %s, hosts %d/%d up, check %s%s\n",
	    tb->conf.name, state, nup, nhosts, table_check(tb->conf.check),
	    (tb->conf.flags & F_TLS) ? " use tls" : "");
}

static int
show_status_msg(struct imsg *imsg)
{
	struct ctl_procinfo		*pi;
	struct ctl_demote		*cd;
	struct ctl_announce		*ca;
	char				 addr[NI_MAXHOST];
	struct rdr			*rdr;
	struct router			*rt;
	struct table			*tb;
	struct host			*h;
	static int			 nhosts, nup, nusable;
	static struct table		 lasttb;
	static int			 havetb;

	if (havetb && imsg->hdr.type != IMSG_CTL_HOST) {
		status_table(&lasttb, nup, nusable, nhosts);
		havetb = 0;
	}

	switch (imsg->hdr.type) {
	case IMSG_CTL_STATUS_INFO:
		status_info(imsg);
		break;
	case IMSG_CTL_PROC:
		status_proc(msg_data(imsg, sizeof(*pi), "process"));
		break;
	case IMSG_CTL_DEMOTE:
		cd = msg_data(imsg, sizeof(*cd), "demote");
		cd->group[sizeof(cd->group) - 1] = '\0';
		status_procs_end();
		printf("demote group %s: %d%s\n", cd->group, cd->count,
		    cd->count > 0 ? " (demoted)" : "");
		break;
	case IMSG_CTL_ANNOUNCE:
		ca = msg_data(imsg, sizeof(*ca), "announce");
		status_procs_end();
		if ((ca->ss.ss_family != AF_INET &&
		    ca->ss.ss_family != AF_INET6) ||
		    print_host(&ca->ss, addr, sizeof(addr)) == NULL)
			break;
		printf("address %s: %s\n", addr,
		    ca->up ? "announced" : "withdrawn");
		break;
	case IMSG_CTL_RELAY:
		status_procs_end();
		status_relay(imsg);
		break;
	case IMSG_CTL_RDR:
		rdr = msg_data(imsg, sizeof(*rdr), "redirect");
		status_procs_end();
		rdr->conf.name[sizeof(rdr->conf.name) - 1] = '\0';
		printf("redirect %s: %s, states: %llu, sessions: %llu "
		    "total\n", rdr->conf.name, rdr_status(rdr),
		    (unsigned long long)rdr->stats.states,
		    (unsigned long long)rdr->stats.sessions);
		break;
	case IMSG_CTL_ROUTER:
		rt = msg_data(imsg, sizeof(*rt), "router");
		status_procs_end();
		rt->conf.name[sizeof(rt->conf.name) - 1] = '\0';
		printf("router %s: %d routes, %u gateways\n", rt->conf.name,
		    rt->conf.nroutes, rt->ks.nhosts);
		break;
	case IMSG_CTL_TABLE:
		if (IMSG_DATA_SIZE(imsg) != sizeof(*tb))
			errx(1, "bad table message");
		tb = imsg->data;
		tb->conf.name[sizeof(tb->conf.name) - 1] = '\0';
		lasttb = *tb;
		havetb = 1;
		nhosts = nup = nusable = 0;
		break;
	case IMSG_CTL_HOST:
		if (IMSG_DATA_SIZE(imsg) != sizeof(*h))
			errx(1, "bad host message");
		h = imsg->data;
		nhosts++;
		nup += h->up == HOST_UP;
		nusable += (h->flags & F_DISABLE) == 0;
		break;
	case IMSG_CTL_END:
		status_procs_end();
		return (1);
	default:
		errx(1, "wrong message in status: %u", imsg->hdr.type);
	}
	return (0);
}

/* The data of a message that must be size bytes, or exit. */
static void *
msg_data(struct imsg *imsg, size_t size, const char *what)
{
	if (IMSG_DATA_SIZE(imsg) != size)
		errx(1, "bad %s message", what);
	return (imsg->data);
}

/* relayctl show metrics (an extension): metrics.c writes the text. */
static int
show_metrics_msg(struct imsg *imsg)
{
	static struct metrics	*m;
	struct relay		*rlay;
	struct rdr		*rdr;
	struct router		*rt;
	struct table		*tb;
	struct host		*h;
	int			 r = 0;

	if (m == NULL && (m = metrics_new()) == NULL)
		err(1, NULL);
	switch (imsg->hdr.type) {
	case IMSG_CTL_STATUS_INFO:
		metrics_status(m, msg_data(imsg, sizeof(struct ctl_status),
		    "status"));
		break;
	case IMSG_CTL_PROC:
		break;
	case IMSG_CTL_RELAY:
		rlay = msg_data(imsg, sizeof(*rlay), "relay");
		rlay->rl_conf.name[sizeof(rlay->rl_conf.name) - 1] = '\0';
		r = metrics_relay(m, rlay);
		break;
	case IMSG_CTL_RDR:
		rdr = msg_data(imsg, sizeof(*rdr), "redirect");
		rdr->conf.name[sizeof(rdr->conf.name) - 1] = '\0';
		r = metrics_rdr(m, rdr);
		break;
	case IMSG_CTL_ROUTER:
		rt = msg_data(imsg, sizeof(*rt), "router");
		rt->conf.name[sizeof(rt->conf.name) - 1] = '\0';
		r = metrics_router(m, rt);
		break;
	case IMSG_CTL_DEMOTE:
		r = metrics_demote(m, msg_data(imsg,
		    sizeof(struct ctl_demote), "demote"));
		break;
	case IMSG_CTL_ANNOUNCE:
		r = metrics_announce(m, msg_data(imsg,
		    sizeof(struct ctl_announce), "announce"));
		break;
	case IMSG_CTL_TABLE:
		tb = msg_data(imsg, sizeof(*tb), "table");
		tb->conf.name[sizeof(tb->conf.name) - 1] = '\0';
		r = metrics_table(m, tb);
		break;
	case IMSG_CTL_HOST:
		h = msg_data(imsg, sizeof(*h), "host");
		h->conf.name[sizeof(h->conf.name) - 1] = '\0';
		r = metrics_host(m, h);
		break;
	case IMSG_CTL_END:
		metrics_print(m, stdout);
		metrics_free(m);
		m = NULL;
		return (1);
	default:
		errx(1, "wrong message in metrics: %u", imsg->hdr.type);
	}
	if (r == -1)
		err(1, NULL);
	return (0);
}

static int
show_command_output(struct imsg *imsg)
{
	switch (imsg->hdr.type) {
	case IMSG_CTL_OK:
		printf("command succeeded\n");
		break;
	case IMSG_CTL_FAIL:
		printf("command failed\n");
		error++;
		break;
	default:
		errx(1, "wrong message in command output: %u",
		    imsg->hdr.type);
	}
	return (1);
}
