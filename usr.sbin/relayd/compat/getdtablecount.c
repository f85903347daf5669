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
#include <sys/resource.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "compat.h"

#ifndef __OpenBSD__

#ifdef __linux__
/*
 * /proc is not there inside the chroot: open the descriptor directory
 * before chroot and re-read it through that handle.
 */
static int	 fddir = -1;

void
getdtablecount_init(void)
{
	if (fddir == -1)
		fddir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY |
		    O_CLOEXEC);
}

static int
getdtablecount_proc(void)
{
	DIR		*dir;
	struct dirent	*de;
	int		 fd, n = 0;

	if (fddir == -1 || (fd = dup(fddir)) == -1)
		return (-1);
	if ((dir = fdopendir(fd)) == NULL) {
		close(fd);
		return (-1);
	}
	rewinddir(dir);
	while ((de = readdir(dir)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(dir);
	/* the duplicate used for reading does not count */
	return (n - 1);
}
#else
void
getdtablecount_init(void)
{
}

static int
getdtablecount_proc(void)
{
	return (-1);
}
#endif

int
getdtablecount(void)
{
	struct rlimit	 rl;
	rlim_t		 i, max;
	int		 n;

	if ((n = getdtablecount_proc()) != -1)
		return (n);
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur > INT_MAX)
		max = 1024;
	else
		max = rl.rlim_cur;
	for (i = 0, n = 0; i < max; i++)
		if (fcntl((int)i, F_GETFD) != -1)
			n++;
	return (n);
}
#else
void
getdtablecount_init(void)
{
}
#endif /* !__OpenBSD__ */
