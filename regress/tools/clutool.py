#!/usr/bin/env python3
# clutool.py: clients and servers for the cluster tests and bench.
#
# clutool.py backend ADDR PORT NAME
#   a server: to each connection, "NAME\n", then every line back
# clutool.py who ADDR PORT SRCBASE NSRC
#   one connection from each of NSRC sources (SRCBASE, SRCBASE+1, ...):
#   a line "SOURCE NAME" each, NAME "-" where none answered
# clutool.py flows ADDR PORT N SRCBASE NSRC READY GO
#   N connections held open, from the NSRC sources in turn; when all
#   have answered, READY gets "NAME COUNT" lines; once the file GO
#   exists, each connection sends a line and must have it back within
#   2 s (all at once): a line "NAME kept K cut C" per name, then
#   "total kept K cut C"
import ipaddress
import os
import selectors
import socket
import sys
import threading
import time


def serve(conn, name):
    try:
        conn.sendall(name + b"\n")
        while True:
            b = conn.recv(4096)
            if not b:
                break
            conn.sendall(b)
    except OSError:
        pass
    conn.close()


def backend(addr, port, name):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(1024)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c, name.encode()),
                         daemon=True).start()


def connect(addr, port, src, timeout=2.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((src, 0))
    s.connect((addr, port))
    f = b""
    while not f.endswith(b"\n"):
        b = s.recv(256)
        if not b:
            raise OSError("closed")
        f += b
    return s, f.decode().strip()


def sources(base, n):
    b = ipaddress.ip_address(base)
    return [str(b + i) for i in range(n)]


def who(addr, port, base, n):
    for src in sources(base, n):
        try:
            s, name = connect(addr, port, src)
            s.close()
        except OSError:
            name = "-"
        print(src, name, flush=True)


def flows(addr, port, n, base, nsrc, ready, go):
    srcs = sources(base, nsrc)
    held = []
    for i in range(n):
        try:
            held.append(connect(addr, port, srcs[i % nsrc]))
        except OSError:
            pass
    count = {}
    for _, name in held:
        count[name] = count.get(name, 0) + 1
    with open(ready + ".tmp", "w") as f:
        for name in sorted(count):
            f.write("%s %d\n" % (name, count[name]))
    os.rename(ready + ".tmp", ready)
    while not os.path.exists(go):
        time.sleep(0.01)
    # every flow at once: a hung node costs the deadline once, not per flow
    got = {}
    for s, name in held:
        try:
            s.setblocking(False)
            s.sendall(b"ping\n")
            got[s] = b""
        except OSError:
            pass
    sel = selectors.DefaultSelector()
    for s in got:
        sel.register(s, selectors.EVENT_READ)
    end = time.monotonic() + 2.0
    while sel.get_map() and time.monotonic() < end:
        for key, _ in sel.select(max(0.0, end - time.monotonic())):
            s = key.fileobj
            try:
                b = s.recv(16)
            except OSError:
                b = b""
            if b:
                got[s] += b
            if not b or len(got[s]) >= 5:
                sel.unregister(s)
    kept = {}
    cut = {}
    for s, name in held:
        d = kept if got.get(s) == b"ping\n" else cut
        d[name] = d.get(name, 0) + 1
        s.close()
    for name in sorted(count):
        print("%s kept %d cut %d" % (name, kept.get(name, 0),
              cut.get(name, 0)))
    print("total kept %d cut %d" % (sum(kept.values()), sum(cut.values())))


cmd = sys.argv[1]
if cmd == "backend":
    backend(sys.argv[2], int(sys.argv[3]), sys.argv[4])
elif cmd == "who":
    who(sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
elif cmd == "flows":
    flows(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5],
          int(sys.argv[6]), sys.argv[7], sys.argv[8])
else:
    sys.exit("clutool.py: unknown command %s" % cmd)
