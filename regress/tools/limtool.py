#!/usr/bin/env python3
# limtool: clients of the limits per source tests, each from a source
# address of its own, through a relay to an echo server.
#
#   limtool.py hold ADDR PORT SRC N SECONDS
#       open N connections from SRC one after the other, each proven by
#       a byte echoed back; print "ok K refused R"; keep the good ones
#       open SECONDS (or until they are closed: "closed C" then), then
#       close them
#   limtool.py burst ADDR PORT SRC N
#       N connections from SRC one after the other, each proven by a
#       byte echoed back and closed; print "ok K refused R"
#   limtool.py flood ADDR PORT SRC N
#       N connections from SRC, 200 at a time, each given 0.5 s to be
#       made; print "ok K refused R" (ok: made)
#   limtool.py probe ADDR PORT SRC
#       one connection from SRC: print "made", "reset" or "dropped"
#       (nothing within CONNECT_WAIT)
#   limtool.py good ADDR PORT N SRC...
#       from each SRC, N connections one after the other; print
#       "ok K refused R p99ms P" over all of them (LIMTOOL_SPREAD=S: the
#       N rounds spread over S seconds, for httpgood and dnsgood too)
#   limtool.py httpgood ADDR PORT N SRC...
#       from each SRC, N HTTP/1.1 GETs of /10, a connection each; print
#       "ok K refused R p99ms P" (ok: a 200, refused: anything else)
#   limtool.py dns ADDR PORT SRC N
#       N DNS queries over UDP from SRC, one after the other, each
#       given 0.5 s for its answer; print "answered A dropped D"
#   limtool.py dnsgood ADDR PORT N SRC...
#       from each SRC, N DNS queries, a socket each; print
#       "ok K refused R p99ms P" (refused: no answer within 0.5 s)
#
# A refused connection is one that is not made within CONNECT_WAIT (the
# kernel drops its SYN, as pf does), or is reset or closed before its
# byte comes back (a relay process resets it right after accept).  On
# the loopback a connection is made in microseconds, and the SYN that
# was dropped is sent again after a second: 0.5 s tells them apart.
# Every mode ends within its time.

import os
import random
import select
import socket
import struct
import sys
import time


CONNECT_WAIT = 0.5


def connect(addr, port, src, timeout=5.0):
    """A proven connection, or None when it was refused."""
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(CONNECT_WAIT)
    try:
        s.bind((src, 0))
        s.connect((addr, port))
        s.settimeout(timeout)
        s.sendall(b"x")
        if s.recv(1) != b"x":
            s.close()
            return None
    except OSError:
        s.close()
        return None
    return s


def hold(addr, port, src, n, secs):
    held = []
    refused = 0
    for _ in range(n):
        s = connect(addr, port, src)
        if s is None:
            refused += 1
        else:
            held.append(s)
    print("ok %d refused %d" % (len(held), refused), flush=True)
    end = time.monotonic() + secs
    closed = 0
    alive = list(held)
    while alive and time.monotonic() < end:
        for s in list(alive):
            s.settimeout(0.05)
            try:
                b = s.recv(1)
                if b == b"":
                    closed += 1
                    alive.remove(s)
            except socket.timeout:
                pass
            except OSError:
                closed += 1
                alive.remove(s)
        if closed == len(held):
            break
    if closed:
        print("closed %d" % closed, flush=True)
    for s in held:
        s.close()


def burst(addr, port, src, n):
    ok = refused = 0
    for _ in range(n):
        s = connect(addr, port, src)
        if s is None:
            refused += 1
        else:
            ok += 1
            s.close()
    print("ok %d refused %d" % (ok, refused))


def flood(addr, port, src, n):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    ok = 0
    for start in range(0, n, 200):
        socks = []
        for _ in range(start, min(n, start + 200)):
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.setblocking(False)
            s.bind((src, 0))
            s.connect_ex((addr, port))
            socks.append(s)
        end = time.monotonic() + CONNECT_WAIT
        pending = list(socks)
        while pending and time.monotonic() < end:
            _, w, _ = select.select([], pending, [],
                                    max(0, end - time.monotonic()))
            for s in w:
                pending.remove(s)
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                    ok += 1
        for s in socks:
            s.close()
    print("ok %d refused %d" % (ok, n - ok))


def probe(addr, port, src):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(CONNECT_WAIT)
    s.bind((src, 0))
    try:
        s.connect((addr, port))
        print("made")
    except socket.timeout:
        print("dropped")
    except OSError:
        print("reset")
    s.close()


def tcp_once(addr, port, src):
    """1 for a connection from src proven by its echoed byte, else 0."""
    s = connect(addr, port, src)
    if s is None:
        return 0
    s.close()
    return 1


def good(once, addr, port, n, srcs):
    """n tries of once() from each source: ok, refused and their p99.
    With LIMTOOL_SPREAD=SECONDS in the environment, the n rounds (one
    try from each source) start evenly over that time."""
    spread = float(os.environ.get("LIMTOOL_SPREAD", "0"))
    ok = 0
    times = []
    start = time.monotonic()
    for r in range(n):
        if spread > 0:
            wait = start + spread * r / n - time.monotonic()
            if wait > 0:
                time.sleep(wait)
        for src in srcs:
            t0 = time.monotonic()
            ok += once(addr, port, src)
            times.append(time.monotonic() - t0)
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1000
    print("ok %d refused %d p99ms %.2f" % (ok, len(times) - ok, p99))


def http_get(addr, port, src):
    """1 for a 200 to GET /10 from src, else 0."""
    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
    s.settimeout(5.0)
    try:
        s.bind((src, 0))
        s.connect((addr, port))
        s.sendall(b"GET /10 HTTP/1.1\r\nHost: bench\r\n"
                  b"Connection: close\r\n\r\n")
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except OSError:
        return 0
    finally:
        s.close()
    return 1 if data.startswith(b"HTTP/1.1 200") else 0


def dns_ask(s, addr, port, i):
    """1 when query i sent on s is answered within s's timeout, else 0."""
    qid = random.randrange(65536)
    name = b"".join(bytes([len(p)]) + p
                    for p in (b"q%d" % i, b"test")) + b"\0"
    s.sendto(struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + name +
             struct.pack(">HH", 1, 1), (addr, port))
    try:
        while True:
            b = s.recv(4096)
            if len(b) >= 2 and struct.unpack(">H", b[:2])[0] == qid:
                return 1
    except socket.timeout:
        return 0


def dns_socket(addr, src):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((src, 0))
    s.settimeout(0.5)
    return s


def dns(addr, port, src, n):
    s = dns_socket(addr, src)
    answered = sum(dns_ask(s, addr, port, i) for i in range(n))
    print("answered %d dropped %d" % (answered, n - answered))


def dns_once(addr, port, src):
    """1 for a query from src answered, on a socket of its own."""
    s = dns_socket(addr, src)
    try:
        return dns_ask(s, addr, port, 0)
    finally:
        s.close()


def main():
    a = sys.argv[1:]
    if len(a) == 6 and a[0] == "hold":
        hold(a[1], int(a[2]), a[3], int(a[4]), float(a[5]))
    elif len(a) == 5 and a[0] == "burst":
        burst(a[1], int(a[2]), a[3], int(a[4]))
    elif len(a) == 4 and a[0] == "probe":
        probe(a[1], int(a[2]), a[3])
    elif len(a) == 5 and a[0] == "flood":
        flood(a[1], int(a[2]), a[3], int(a[4]))
    elif len(a) == 5 and a[0] == "dns":
        dns(a[1], int(a[2]), a[3], int(a[4]))
    elif len(a) >= 5 and a[0] == "dnsgood":
        good(dns_once, a[1], int(a[2]), int(a[3]), a[4:])
    elif len(a) >= 5 and a[0] == "httpgood":
        good(http_get, a[1], int(a[2]), int(a[3]), a[4:])
    elif len(a) >= 5 and a[0] == "good":
        good(tcp_once, a[1], int(a[2]), int(a[3]), a[4:])
    else:
        sys.exit("usage: see the top of limtool.py")


if __name__ == "__main__":
    main()
