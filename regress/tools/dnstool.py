#!/usr/bin/env python3
#
# A small DNS server and client for the DNS relay tests, on raw sockets
# (no DNS library), so that the server can also send what a relay must
# drop.
#
#   dnstool.py server PORTFILE NAME [ADDRESS [SECONDS [PORT]]]
#	answers on UDP and TCP on one port (written to PORTFILE), for a
#	while (120 s by default).  Every UDP query's ID and name go to
#	PORTFILE.ids, one line each, and the port it came from to
#	PORTFILE.sports.  Names:
#	  *.test	A 192.0.2.1, AAAA 2001:db8::1, TXT "NAME"
#	  big.test	TXT of about 3 KiB (fits EDNS0 4096)
#	  tc.test	over UDP an empty answer with TC set, over TCP
#			TXT "tcp NAME"
#	  slow.test	no answer
#	  delay.test	A 192.0.2.1, a second late
#	  spoof.test	first what a relay must drop (another ID, the
#			right ID from another port and from 127.0.0.2,
#			an answer to another question), 50 ms later
#			A 192.0.2.1, and then once more A 6.6.6.6
#	  *.case.test	the answer's question in lower case: another
#			question for a relay that compares it byte for
#			byte (a client's 0x20 check)
#   dnstool.py forger PORTFILE FORGERIES [SECONDS]
#	a DNS server that answers probe*.test (A 192.0.2.1) and learns the
#	source ports those queries came from, answers churn*.test without
#	learning; it never answers other
#	names, and on the first such query sends FORGERIES forged answers
#	to it (A 6.6.6.6, its question byte for byte, random IDs) from its
#	own address and port to the ports it learned, round robin, then
#	writes "forged N to P ports" to PORTFILE.forged.
#   dnstool.py client ADDRESS PORT COUNT [WINDOW [IDFILE [NAME]]]
#	COUNT A queries for qN.test (or NAME), WINDOW (64) in flight,
#	each under a random ID (written to IDFILE with the name, unless
#	it is "-"); prints "answered N mismatched M lost L".

import os
import random
import select
import socket
import struct
import sys
import threading
import time


def qname(msg):
    """The first question's name (lower case), type, and its end."""
    off = 12
    labels = []
    while True:
        n = msg[off]
        if n == 0:
            off += 1
            break
        labels.append(msg[off + 1:off + 1 + n].decode("ascii", "replace"))
        off += 1 + n
    qtype = struct.unpack("!H", msg[off:off + 2])[0]
    return ".".join(labels).lower(), qtype, off + 4


def rr(rtype, rdata):
    # the name is a pointer to the question's
    return struct.pack("!HHHIH", 0xc00c, rtype, 1, 60, len(rdata)) + rdata


def txt(s):
    out = b""
    b = s.encode()
    while b:
        out += bytes([min(len(b), 255)]) + b[:255]
        b = b[255:]
    return out


def answer(query, name, tcp, rid=None, records=None, tc=False, qd=None):
    qid = struct.unpack("!H", query[:2])[0] if rid is None else rid
    q, qtype, end = qname(query)
    question = query[12:end] if qd is None else qd
    flags = 0x8180 | (0x0200 if tc else 0)
    if records is None:
        records = []
        if q == "big.test":
            records = [rr(16, txt("x" * 200)) for _ in range(15)]
        elif q == "tc.test":
            records = [rr(16, txt("tcp " + name))] if tcp else []
            tc = not tcp
            flags = 0x8180 | (0x0200 if tc else 0)
        elif qtype == 1:
            records = [rr(1, socket.inet_aton("192.0.2.1"))]
        elif qtype == 28:
            records = [rr(28, socket.inet_pton(socket.AF_INET6,
                                               "2001:db8::1"))]
        elif qtype == 16:
            records = [rr(16, txt(name))]
    return struct.pack("!HHHHHH", qid, flags, 1, len(records), 0, 0) + \
        question + b"".join(records)


def server(portfile, name, addr="127.0.0.1", seconds=120, want=0):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    for _ in range(50):
        u = socket.socket(fam, socket.SOCK_DGRAM)
        u.bind((addr, want))
        port = u.getsockname()[1]
        t = socket.socket(fam, socket.SOCK_STREAM)
        t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            t.bind((addr, port))
            break
        except OSError:
            u.close()
            t.close()
    t.listen(64)
    other = socket.socket(fam, socket.SOCK_DGRAM)
    other.bind((addr, 0))
    elsewhere = None
    if fam == socket.AF_INET:
        elsewhere = socket.socket(fam, socket.SOCK_DGRAM)
        elsewhere.bind(("127.0.0.2", 0))
    ids = open(portfile + ".ids", "a", buffering=1)
    sports = open(portfile + ".sports", "a", buffering=1)

    def tcp_conn(c):
        c.settimeout(10)
        try:
            while True:
                hdr = c.recv(2)
                if len(hdr) < 2:
                    break
                n = struct.unpack("!H", hdr)[0]
                q = b""
                while len(q) < n:
                    d = c.recv(n - len(q))
                    if not d:
                        return
                    q += d
                a = answer(q, name, True)
                c.sendall(struct.pack("!H", len(a)) + a)
        except OSError:
            pass
        finally:
            c.close()

    def tcp_loop():
        while True:
            c, _ = t.accept()
            threading.Thread(target=tcp_conn, args=(c,), daemon=True).start()

    threading.Thread(target=tcp_loop, daemon=True).start()
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.rename(tmp, portfile)
    end = time.time() + seconds
    while time.time() < end:
        r, _, _ = select.select([u], [], [], 0.5)
        if not r:
            continue
        q, peer = u.recvfrom(65536)
        if len(q) < 12:
            continue
        try:
            qn, qtype, _ = qname(q)
        except (IndexError, struct.error):
            continue
        qid = struct.unpack("!H", q[:2])[0]
        ids.write("%d %s\n" % (qid, qn))
        sports.write("%d\n" % peer[1])
        if qn == "slow.test":
            continue
        if qn == "delay.test":
            threading.Timer(1.0, u.sendto,
                            (answer(q, name, False), peer)).start()
            continue
        if qn == "spoof.test":
            bad = [rr(1, socket.inet_aton("6.6.6.6"))]
            u.sendto(answer(q, name, False, rid=(qid + 1) & 0xffff,
                            records=bad), peer)
            other.sendto(answer(q, name, False, records=bad), peer)
            if elsewhere is not None:
                elsewhere.sendto(answer(q, name, False, records=bad), peer)
            evil = b"\x04evil\x04test\x00\x00\x01\x00\x01"
            u.sendto(answer(q, name, False, records=bad, qd=evil), peer)
            time.sleep(0.05)
            u.sendto(answer(q, name, False), peer)
            u.sendto(answer(q, name, False, records=bad), peer)
            continue
        if qn.endswith(".case.test"):
            lower = q[12:qname(q)[2]].lower()
            u.sendto(answer(q, name, False, qd=lower), peer)
            continue
        u.sendto(answer(q, name, False), peer)


def forger(portfile, count, seconds=120):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 0))
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % u.getsockname()[1])
    os.rename(tmp, portfile)
    ports = []
    end = time.time() + seconds
    while time.time() < end:
        r, _, _ = select.select([u], [], [], 0.5)
        if not r:
            continue
        q, peer = u.recvfrom(65536)
        try:
            qn, _, _ = qname(q)
        except (IndexError, struct.error):
            continue
        if qn.startswith("probe"):
            if peer[1] not in ports:
                ports.append(peer[1])
            u.sendto(answer(q, "probe", False), peer)
            continue
        if qn.startswith("churn"):
            u.sendto(answer(q, "churn", False), peer)
            continue
        bad = [rr(1, socket.inet_aton("6.6.6.6"))]
        forged = [answer(q, "x", False, rid=i, records=bad)
                  for i in range(65536)]
        ids = random.sample(range(65536), 65536)
        for n in range(count):
            try:
                u.sendto(forged[ids[n % 65536]],
                         ("127.0.0.1", ports[n % len(ports)]))
            except OSError:
                pass
        with open(portfile + ".forged", "w") as f:
            f.write("forged %d to %d ports\n" % (count, len(ports)))
        return


def query(qid, name, qtype=1):
    q = b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + \
        b"\x00"
    return struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + q + \
        struct.pack("!HH", qtype, 1)


def client(addr, port, count, window=64, idfile="-", fixed=None):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    s.connect((addr, port))
    log = open(idfile, "w") if idfile != "-" else None
    pending = {}
    sent = answered = mismatched = lost = 0
    ids = random.sample(range(65536), 65536)
    last = time.time()
    while answered + mismatched + lost < count:
        while sent < count and len(pending) < window:
            qid = ids[sent % 65536]
            name = fixed or "q%d.test" % sent
            pending[qid] = (name, time.time())
            if log:
                log.write("%d %s\n" % (qid, name))
            s.send(query(qid, name))
            sent += 1
            if sent % 128 == 0:
                # a pace the relay's socket buffer takes
                time.sleep(0.002)
        r, _, _ = select.select([s], [], [], 0.5)
        if r:
            a = s.recv(65536)
            qid = struct.unpack("!H", a[:2])[0]
            if qid in pending and qname(a)[0] == pending[qid][0]:
                del pending[qid]
                answered += 1
            else:
                mismatched += 1
            last = time.time()
        elif time.time() - last > 3:
            lost += len(pending)
            pending.clear()
    print("answered %d mismatched %d lost %d" % (answered, mismatched, lost))


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server(sys.argv[2], sys.argv[3],
               sys.argv[4] if len(sys.argv) > 4 else "127.0.0.1",
               int(sys.argv[5]) if len(sys.argv) > 5 else 120,
               int(sys.argv[6]) if len(sys.argv) > 6 else 0)
    elif sys.argv[1] == "forger":
        forger(sys.argv[2], int(sys.argv[3]),
               int(sys.argv[4]) if len(sys.argv) > 4 else 120)
    elif sys.argv[1] == "client":
        client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
               int(sys.argv[5]) if len(sys.argv) > 5 else 64,
               sys.argv[6] if len(sys.argv) > 6 else "-",
               sys.argv[7] if len(sys.argv) > 7 else None)
