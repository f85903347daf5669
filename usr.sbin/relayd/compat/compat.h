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

/* What the daemon needs that the platform may lack. */

#ifndef RELAYD_COMPAT_H
#define RELAYD_COMPAT_H

#include <sys/types.h>
#include <stdint.h>

#ifndef __dead
#define __dead		__attribute__((__noreturn__))
#endif
#ifndef nitems
#define nitems(_a)	(sizeof((_a)) / sizeof((_a)[0]))
#endif

/* tlsticket.c: session tickets and buffers of libtls on OpenSSL */
int	 compat_tlsticket_init(void);
int	 compat_tlsconf_init(void);
int	 compat_tlsbuf_init(void);

/* sdnotify.c: a service manager's readiness protocol (see there) */
int	 compat_sdnotify_init(void);
int	 compat_sdnotify_watchdog(void);
int	 compat_sdnotify(const char *, ...)
	    __attribute__((__format__ (printf, 1, 2)));

/* siphash.c: SipHash-2-4 (OpenBSD's libc has SipHash24(3)) */
int	 compat_siphash_init(void);
uint64_t compat_siphash(const uint8_t *, const void *, size_t, uint64_t);

/* tlsjob.c: a TLS handshake that pauses while ca works (see there) */
#define COMPAT_TLSJOB_DONE	0
#define COMPAT_TLSJOB_PAUSED	1
int	 compat_tlsjob_init(unsigned int);
int	 compat_tlsjob_run(void **, int (*)(void *), void *, int *);
int	 compat_tlsjob_current(void);
int	 compat_tlsjob_pause(void);

/*
 * The system's name in "needs pf(4), not available on ..." and what it
 * has of OpenBSD's packet filter: a NAT lookup (the original destination
 * of a redirected connection) is netfilter's SO_ORIGINAL_DST on Linux.
 */
#if defined(__linux__)
#define RELAYD_PLATFORM		"Linux"
#define RELAYD_HAVE_NATLOOK	1
#elif defined(__FreeBSD__)
#define RELAYD_PLATFORM		"FreeBSD"
#elif defined(__OpenBSD__)
#define RELAYD_PLATFORM		"this build"
#else
#define RELAYD_PLATFORM		"this system"
#endif

/* getdtablecount.c */
#ifndef __OpenBSD__
int	 getdtablecount(void);
#endif

/* tcpstate.c */
int	 compat_tcp_connected(int);

/* memtrim.c */
void	 compat_memtrim(void);

/* transparent.c */
struct sockaddr_storage;
int	 compat_transparent(int, int);
int	 compat_natlook(int, struct sockaddr_storage *);
int	 compat_natlook_available(void);
int	 compat_transparent_route(int);

/* sockopt.c */
int	 compat_minttl(int, int, int);
void	 compat_bind_noport(int);
int	 compat_freebind(int, int);
int	 compat_steer(int, unsigned int, int, int);

/* ifgroup.c */
int	 compat_if_in_group(const char *, const char *);

/* sandbox.c */
int	 compat_sandbox(const char *);

/* privdrop.c */
int	 compat_nonewprivs(void);
int	 compat_net_admin(void);
int	 compat_getexecpath(const char *, char *, size_t);

#endif /* RELAYD_COMPAT_H */
