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
 * control_seeds DIR: one file per request relayctl sends, as it frames
 * them, for control_fuzz to start from.
 */

#include <sys/types.h>
#include <sys/stat.h>

#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "relayd.h"

static void
seed(const char *dir, const char *name, uint32_t type, const void *data,
    size_t len)
{
	struct imsg_hdr	 hdr;
	char		 path[PATH_MAX];
	FILE		*f;

	memset(&hdr, 0, sizeof(hdr));
	hdr.type = type;
	hdr.len = IMSG_HEADER_SIZE + len;
	hdr.pid = 1;
	(void)snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL)
		err(1, "%s", path);
	if (fwrite(&hdr, sizeof(hdr), 1, f) != 1 ||
	    (len > 0 && fwrite(data, len, 1, f) != 1) || fclose(f) != 0)
		err(1, "%s", path);
}

int
main(int argc, char *argv[])
{
	struct ctl_id	 id;
	int		 v = 2;

	if (argc != 2)
		errx(1, "usage: control_seeds dir");
	if (mkdir(argv[1], 0755) == -1 && errno != EEXIST)
		err(1, "%s", argv[1]);
	seed(argv[1], "summary", IMSG_CTL_SHOW_SUM, NULL, 0);
	seed(argv[1], "status", IMSG_CTL_STATUS, NULL, 0);
	seed(argv[1], "sessions", IMSG_CTL_SESSION, NULL, 0);
	seed(argv[1], "reload", IMSG_CTL_RELOAD, "/etc/relayd.conf", 16);
	seed(argv[1], "stop", IMSG_CTL_SHUTDOWN, NULL, 0);
	seed(argv[1], "monitor", IMSG_CTL_NOTIFY, NULL, 0);
	seed(argv[1], "verbose", IMSG_CTL_VERBOSE, &v, sizeof(v));
	seed(argv[1], "poll", IMSG_CTL_POLL, NULL, 0);
	memset(&id, 0, sizeof(id));
	id.id = 1;
	seed(argv[1], "host_disable", IMSG_CTL_HOST_DISABLE, &id, sizeof(id));
	seed(argv[1], "host_enable", IMSG_CTL_HOST_ENABLE, &id, sizeof(id));
	id.id = EMPTY_ID;
	(void)strlcpy(id.name, "web", sizeof(id.name));
	seed(argv[1], "table_disable", IMSG_CTL_TABLE_DISABLE, &id,
	    sizeof(id));
	seed(argv[1], "table_enable", IMSG_CTL_TABLE_ENABLE, &id, sizeof(id));
	seed(argv[1], "rdr_disable", IMSG_CTL_RDR_DISABLE, &id, sizeof(id));
	seed(argv[1], "rdr_enable", IMSG_CTL_RDR_ENABLE, &id, sizeof(id));
	return (0);
}
