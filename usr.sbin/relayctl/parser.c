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
 * relayctl's command line: a table of tokens, each keyword matched by
 * any unique prefix of it.
 */

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/queue.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relayd.h"
#include "parser.h"

enum token_type {
	NOTOKEN,
	ENDTOKEN,
	KEYWORD,
	HOSTID,
	TABLEID,
	RDRID,
	PATH,
	OVLTABLE,
	ADDRESS
};

struct token {
	enum token_type		 type;
	const char		*keyword;
	int			 value;
	const struct token	*next;
};

static const struct token t_main[];
static const struct token t_show[];
static const struct token t_rdr[];
static const struct token t_table[];
static const struct token t_host[];
static const struct token t_rdr_id[];
static const struct token t_table_id[];
static const struct token t_host_id[];
static const struct token t_log[];
static const struct token t_load[];
static const struct token t_overload[];
static const struct token t_ovl_table[];
static const struct token t_ovl_tableaddr[];
static const struct token t_ovl_addr[];

static const struct token t_main[] = {
	{KEYWORD,	"monitor",	MONITOR,	NULL},
	{KEYWORD,	"show",		SHOW_SUM,	t_show},
	{KEYWORD,	"status",	STATUS,		NULL},
	{KEYWORD,	"load",		LOAD,		t_load},
	{KEYWORD,	"poll",		POLL,		NULL},
	{KEYWORD,	"reload",	RELOAD,		NULL},
	{KEYWORD,	"stop",		SHUTDOWN,	NULL},
	{KEYWORD,	"redirect",	NONE,		t_rdr},
	{KEYWORD,	"table",	NONE,		t_table},
	{KEYWORD,	"host",		NONE,		t_host},
	{KEYWORD,	"log",		NONE,		t_log},
	{KEYWORD,	"overload",	NONE,		t_overload},
	{ENDTOKEN,	"",		NONE,		NULL}
};

static const struct token t_show[] = {
	{NOTOKEN,	"",		NONE,		NULL},
	{KEYWORD,	"summary",	SHOW_SUM,	NULL},
	{KEYWORD,	"hosts",	SHOW_HOSTS,	NULL},
	{KEYWORD,	"redirects",	SHOW_RDRS,	NULL},
	{KEYWORD,	"relays",	SHOW_RELAYS,	NULL},
	{KEYWORD,	"routers",	SHOW_ROUTERS,	NULL},
	{KEYWORD,	"sessions",	SHOW_SESSIONS,	NULL},
	{KEYWORD,	"metrics",	SHOW_METRICS,	NULL},
	{KEYWORD,	"overload",	SHOW_OVERLOAD,	NULL},
	{ENDTOKEN,	"",		NONE,		NULL}
};

static const struct token t_rdr[] = {
	{KEYWORD,	"disable",	RDR_DISABLE,	t_rdr_id},
	{KEYWORD,	"enable",	RDR_ENABLE,	t_rdr_id},
	{ENDTOKEN,	"",		NONE,		NULL}
};

static const struct token t_table[] = {
	{KEYWORD,	"disable",	TABLE_DISABLE,	t_table_id},
	{KEYWORD,	"enable",	TABLE_ENABLE,	t_table_id},
	{ENDTOKEN,	"",		NONE,		NULL}
};

static const struct token t_host[] = {
	{KEYWORD,	"disable",	HOST_DISABLE,	t_host_id},
	{KEYWORD,	"enable",	HOST_ENABLE,	t_host_id},
	{ENDTOKEN,	"",		NONE,		NULL}
};

static const struct token t_rdr_id[] = {
	{RDRID,		"",		NONE,		NULL},
	{ENDTOKEN,	"",		NONE,		NULL}
};

static const struct token t_table_id[] = {
	{TABLEID,	"",		NONE,		NULL},
	{ENDTOKEN,	"",		NONE,		NULL}
};

static const struct token t_host_id[] = {
	{HOSTID,	"",		NONE,		NULL},
	{ENDTOKEN,	"",		NONE,		NULL}
};

static const struct token t_log[] = {
	{KEYWORD,	"verbose",	LOG_VERBOSE,	NULL},
	{KEYWORD,	"brief",	LOG_BRIEF,	NULL},
	{ENDTOKEN,	"",		NONE,		NULL}
};

static const struct token t_load[] = {
	{PATH,		"",		NONE,		NULL},
	{ENDTOKEN,	"",		NONE,		NULL}
};

static const struct token t_overload[] = {
	{KEYWORD,	"delete",	OVERLOAD_DELETE, t_ovl_tableaddr},
	{KEYWORD,	"flush",	OVERLOAD_FLUSH,	t_ovl_table},
	{ENDTOKEN,	"",		NONE,		NULL}
};

static const struct token t_ovl_table[] = {
	{OVLTABLE,	"",		NONE,		NULL},
	{ENDTOKEN,	"",		NONE,		NULL}
};

static const struct token t_ovl_tableaddr[] = {
	{OVLTABLE,	"",		NONE,		t_ovl_addr},
	{ENDTOKEN,	"",		NONE,		NULL}
};

static const struct token t_ovl_addr[] = {
	{ADDRESS,	"",		NONE,		NULL},
	{ENDTOKEN,	"",		NONE,		NULL}
};

static const struct token *match_token(const char *, const struct token *,
			    struct parse_result *);
static void		 show_valid_args(const struct token *);

struct parse_result *
parse(int argc, char *argv[])
{
	static struct parse_result	 res;
	const struct token		*table = t_main;
	const struct token		*match;

	memset(&res, 0, sizeof(res));

	while (argc >= 0) {
		if ((match = match_token(argv[0], table, &res)) == NULL) {
			fprintf(stderr, "valid commands/args:\n");
			show_valid_args(table);
			return (NULL);
		}

		argc--;
		argv++;

		if (match->type == NOTOKEN || match->next == NULL)
			break;

		table = match->next;
	}

	if (argc > 0) {
		fprintf(stderr, "superfluous argument: %s\n", argv[0]);
		return (NULL);
	}

	return (&res);
}

/* Take a name, or a number as an id. */
static int
parse_id(const char *word, struct parse_result *res)
{
	const char	*errstr;

	if (strlcpy(res->id.name, word, sizeof(res->id.name)) >=
	    sizeof(res->id.name)) {
		fprintf(stderr, "name too long: %s\n", word);
		return (-1);
	}
	res->id.id = strtonum(word, 0, UINT_MAX, &errstr);
	if (errstr != NULL)
		res->id.id = EMPTY_ID;
	return (0);
}

/* An overload table's name, as relayd.conf writes it or bare. */
static int
parse_table(const char *word, struct parse_result *res)
{
	size_t	 len = strlen(word);

	if (len >= 2 && word[0] == '<' && word[len - 1] == '>') {
		word++;
		len -= 2;
	}
	if (len == 0 || len >= sizeof(res->id.name)) {
		fprintf(stderr, "bad table name: %s\n", word);
		return (-1);
	}
	memcpy(res->id.name, word, len);
	res->id.name[len] = '\0';
	return (0);
}

static const struct token *
match_token(const char *word, const struct token *table,
    struct parse_result *res)
{
	unsigned int		 i, match = 0;
	const struct token	*t = NULL;

	for (i = 0; table[i].type != ENDTOKEN; i++) {
		switch (table[i].type) {
		case NOTOKEN:
			if (word == NULL || strlen(word) == 0) {
				match++;
				t = &table[i];
			}
			break;
		case KEYWORD:
			if (word == NULL)
				break;
			if (strcmp(word, table[i].keyword) == 0) {
				/* an exact match beats any prefix */
				match = 1;
				t = &table[i];
				res->action = t->value;
				goto done;
			}
			if (strncmp(word, table[i].keyword,
			    strlen(word)) == 0) {
				match++;
				t = &table[i];
				if (t->value)
					res->action = t->value;
			}
			break;
		case HOSTID:
		case TABLEID:
		case RDRID:
			if (word == NULL)
				break;
			if (parse_id(word, res) == -1)
				return (NULL);
			match++;
			t = &table[i];
			break;
		case PATH:
		case ADDRESS:
			if (!match && word != NULL && strlen(word) > 0) {
				if ((res->path = strdup(word)) == NULL)
					return (NULL);
				match++;
				t = &table[i];
			}
			break;
		case OVLTABLE:
			if (word == NULL || parse_table(word, res) == -1)
				break;
			match++;
			t = &table[i];
			break;
		case ENDTOKEN:
			break;
		}
	}
 done:
	if (match != 1) {
		if (word == NULL)
			fprintf(stderr, "missing argument:\n");
		else if (match > 1)
			fprintf(stderr, "ambiguous argument: %s\n", word);
		else if (match < 1)
			fprintf(stderr, "unknown argument: %s\n", word);
		return (NULL);
	}

	return (t);
}

static void
show_valid_args(const struct token *table)
{
	int	 i;

	for (i = 0; table[i].type != ENDTOKEN; i++) {
		switch (table[i].type) {
		case NOTOKEN:
			fprintf(stderr, "  <cr>\n");
			break;
		case KEYWORD:
			fprintf(stderr, "  %s\n", table[i].keyword);
			break;
		case RDRID:
			fprintf(stderr, "  <redirectid>\n");
			break;
		case TABLEID:
			fprintf(stderr, "  <tableid>\n");
			break;
		case HOSTID:
			fprintf(stderr, "  <hostid>\n");
			break;
		case PATH:
			fprintf(stderr, "  <path>\n");
			break;
		case OVLTABLE:
			fprintf(stderr, "  <table>\n");
			break;
		case ADDRESS:
			fprintf(stderr, "  <address>\n");
			break;
		case ENDTOKEN:
			break;
		}
	}
}
