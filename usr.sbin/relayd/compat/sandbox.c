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
 * The sandbox of a child, installed at the end of its init function,
 * once every file it needs is open: a seccomp-bpf allow-list on Linux,
 * pledge(2) on OpenBSD, nothing elsewhere.  A system call outside the
 * list kills the process, and the parent goes down with "lost child",
 * as on OpenBSD when a pledge is violated.
 */

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/ioctl.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat.h"

#if defined(__linux__) && defined(HAVE_SECCOMP)

#include <sys/syscall.h>

#include <seccomp.h>

#define SB_RELAY	0x01
#define SB_CA		0x02
#define SB_PFE		0x04
#define SB_HCE		0x08
#define SB_ALL		(SB_RELAY | SB_CA | SB_PFE | SB_HCE)

/* What each process may do; socket(2) and ioctl(2) are narrowed below. */
static const struct {
	int	 nr;
	int	 who;
} allowed[] = {
	/* events, imsg, logging */
	{ SCMP_SYS(read),		SB_ALL },
	{ SCMP_SYS(readv),		SB_ALL },
	{ SCMP_SYS(write),		SB_ALL },
	{ SCMP_SYS(writev),		SB_ALL },
	{ SCMP_SYS(close),		SB_ALL },
	{ SCMP_SYS(lseek),		SB_ALL },
	{ SCMP_SYS(fstat),		SB_ALL },
	{ SCMP_SYS(newfstatat),		SB_ALL },
	{ SCMP_SYS(fcntl),		SB_ALL },
	{ SCMP_SYS(recvmsg),		SB_ALL },
	{ SCMP_SYS(sendmsg),		SB_ALL },
	{ SCMP_SYS(recvfrom),		SB_ALL },
	{ SCMP_SYS(sendto),		SB_ALL },
	{ SCMP_SYS(epoll_wait),		SB_ALL },
	{ SCMP_SYS(epoll_pwait),	SB_ALL },
	{ SCMP_SYS(epoll_ctl),		SB_ALL },
	{ SCMP_SYS(poll),		SB_ALL },
	{ SCMP_SYS(ppoll),		SB_ALL },
	{ SCMP_SYS(getsockopt),		SB_ALL },
	/* time, memory, signals, exit */
	{ SCMP_SYS(clock_gettime),	SB_ALL },
	{ SCMP_SYS(gettimeofday),	SB_ALL },
	{ SCMP_SYS(nanosleep),		SB_ALL },
	{ SCMP_SYS(clock_nanosleep),	SB_ALL },
	{ SCMP_SYS(brk),		SB_ALL },
	{ SCMP_SYS(mmap),		SB_ALL },
	{ SCMP_SYS(munmap),		SB_ALL },
	{ SCMP_SYS(mremap),		SB_ALL },
	{ SCMP_SYS(madvise),		SB_ALL },
	{ SCMP_SYS(mprotect),		SB_ALL },
	{ SCMP_SYS(futex),		SB_ALL },
	{ SCMP_SYS(getrandom),		SB_ALL },
	{ SCMP_SYS(getpid),		SB_ALL },
	{ SCMP_SYS(gettid),		SB_ALL },
	{ SCMP_SYS(getppid),		SB_ALL },
	{ SCMP_SYS(getrlimit),		SB_ALL },
	{ SCMP_SYS(prlimit64),		SB_ALL },
	{ SCMP_SYS(rt_sigreturn),	SB_ALL },
	{ SCMP_SYS(rt_sigprocmask),	SB_ALL },
	{ SCMP_SYS(rt_sigaction),	SB_ALL },
	{ SCMP_SYS(restart_syscall),	SB_ALL },
	{ SCMP_SYS(exit),		SB_ALL },
	{ SCMP_SYS(exit_group),		SB_ALL },
	/* network: sessions, checks, the control socket */
	{ SCMP_SYS(accept4),		SB_RELAY | SB_PFE },
	{ SCMP_SYS(setsockopt),		SB_RELAY | SB_HCE },
	{ SCMP_SYS(getsockname),	SB_RELAY | SB_HCE | SB_PFE },
	{ SCMP_SYS(getpeername),	SB_RELAY | SB_HCE | SB_PFE },
	{ SCMP_SYS(shutdown),		SB_RELAY | SB_HCE | SB_PFE },
	{ SCMP_SYS(connect),		SB_RELAY | SB_HCE },
	{ SCMP_SYS(bind),		SB_RELAY },
	/* dns relays: datagrams in batches */
	{ SCMP_SYS(recvmmsg),		SB_RELAY },
	{ SCMP_SYS(sendmmsg),		SB_RELAY },
	/* the splice engine */
	{ SCMP_SYS(splice),		SB_RELAY },
	{ SCMP_SYS(pipe2),		SB_RELAY },
};

/* SCMP_A0() and friends leave datum_b out, which clang warns about. */
static struct scmp_arg_cmp
arg_cmp(unsigned int arg, enum scmp_compare op, scmp_datum_t value)
{
	struct scmp_arg_cmp	 c;

	memset(&c, 0, sizeof(c));
	c.arg = arg;
	c.op = op;
	c.datum_a = value;
	return (c);
}

static int
sandbox_who(const char *name)
{
	if (strcmp(name, "relay") == 0)
		return (SB_RELAY);
	if (strcmp(name, "ca") == 0)
		return (SB_CA);
	if (strcmp(name, "pfe") == 0)
		return (SB_PFE);
	if (strcmp(name, "hce") == 0)
		return (SB_HCE);
	return (0);
}

#ifdef RELAYD_SANDBOX_TEST
static void
sandbox_probe(const char *name)
{
	char	 buf[160], u[64];
	int	 fd, n;

	if ((fd = socket(AF_UNIX, SOCK_DGRAM, 0)) == -1)
		(void)strlcpy(u, strerror(errno), sizeof(u));
	else {
		(void)strlcpy(u, "allowed", sizeof(u));
		close(fd);
	}
	/* -1: an allowed connect fails on the descriptor, EBADF */
	n = snprintf(buf, sizeof(buf), "sandbox probe %s: unix socket: %s, "
	    "connect: %s\n", name, u,
	    connect(-1, NULL, 0) == -1 ? strerror(errno) : "?");
	if (n > 0 && (size_t)n < sizeof(buf))
		(void)write(STDERR_FILENO, buf, n);
}
#endif

int
compat_sandbox(const char *name)
{
	scmp_filter_ctx	 ctx;
	unsigned int	 i;
	int		 who, ret = -1;
#ifdef RELAYD_SANDBOX_TEST
	const char	*t;
#endif

	if ((who = sandbox_who(name)) == 0) {
		errno = EINVAL;
		return (-1);
	}
#ifdef RELAYD_SANDBOX_TEST
	/* test builds only: "none" runs without the filter, for valgrind */
	t = getenv("RELAYD_SANDBOX_TEST");
	if (t != NULL && strcmp(t, "none") == 0)
		return (0);
#endif
	if ((ctx = seccomp_init(SCMP_ACT_KILL_PROCESS)) == NULL) {
		errno = ENOMEM;
		return (-1);
	}
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if ((allowed[i].who & who) &&
		    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i].nr, 0) < 0)
			goto done;

	/*
	 * Files: the chroot is empty, so an open can only fail; libraries
	 * that look for a file (time zone, certificates) are told so.
	 */
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOENT), SCMP_SYS(open),
	    0) < 0 || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOENT),
	    SCMP_SYS(openat), 0) < 0)
		goto done;
	/* ioctl: the size of what waits in a socket, nothing else */
	if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
	    arg_cmp(1, SCMP_CMP_EQ, FIONREAD)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOTTY), SCMP_SYS(ioctl), 1,
	    arg_cmp(1, SCMP_CMP_NE, FIONREAD)) < 0)
		goto done;
	/*
	 * socket(2): AF_INET and AF_INET6 for the relays' backends and
	 * hce's checks, nothing else; no unix socket (not even an abstract
	 * one, which a chroot does not hide): syslog is the socket opened
	 * before chroot, or one the parent passes.  A call that is not
	 * allowed fails rather than kills.
	 */
	if ((who & (SB_RELAY | SB_HCE)) &&
	    (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
	    arg_cmp(0, SCMP_CMP_EQ, AF_INET)) < 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
	    arg_cmp(0, SCMP_CMP_EQ, AF_INET6)) < 0))
		goto done;
	if ((who & (SB_RELAY | SB_HCE)) == 0 &&
	    (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket),
	    0) < 0 || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES),
	    SCMP_SYS(connect), 0) < 0))
		goto done;
	if ((who & (SB_RELAY | SB_HCE)) && seccomp_rule_add(ctx,
	    SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1,
	    arg_cmp(0, SCMP_CMP_EQ, AF_UNIX)) < 0)
		goto done;

	if (seccomp_load(ctx) < 0)
		goto done;
#ifdef RELAYD_SANDBOX_TEST
	/* test builds only: a forbidden call, to see the process die */
	if (t != NULL && strcmp(t, name) == 0)
		(void)syscall(SYS_execve, "/bin/true", NULL, NULL);
	/* or what a unix socket and a connect get, said on stderr */
	if (t != NULL && strcmp(t, "probe") == 0)
		sandbox_probe(name);
#endif
	ret = 0;
 done:
	seccomp_release(ctx);
	if (ret == -1)
		errno = EPERM;
	return (ret);
}

#elif defined(__OpenBSD__)

int
compat_sandbox(const char *name)
{
	const char	*promises;

	if (strcmp(name, "ca") == 0)
		promises = "stdio recvfd";
	else if (strcmp(name, "relay") == 0)
		promises = "stdio recvfd inet unix dns";
	else if (strcmp(name, "hce") == 0)
		promises = "stdio recvfd inet dns";
	else
		promises = "stdio recvfd unix";
	return (pledge(promises, NULL));
}

#else

/* FreeBSD: Capsicum cannot connect to new backends; chroot is all. */
int
compat_sandbox(const char *name)
{
	(void)name;
	return (0);
}

#endif
