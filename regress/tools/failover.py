#!/usr/bin/env python3
# failover.py probe ADDR PORT OUT SECONDS [MS]: every 100 ms (or MS), a
#   connection to ADDR:PORT that must answer within 300 ms; each try is
#   a line of OUT: "MONOTONIC ok WHO" (the first line of the answer) or
#   "MONOTONIC fail".
# failover.py outage OUT SINCE [UNTIL]: the longest time without an
#   answer after SINCE (a CLOCK_MONOTONIC time), and before UNTIL, in
#   milliseconds, from the last answer before the first failure to the
#   first answer after the last one; and
#   "lost N" the failed tries.  Exits 1 when no answer came after them.
import socket
import sys
import time


def probe(addr, port, out, secs, every=0.1):
    end = time.monotonic() + secs
    with open(out, "a", buffering=1) as f:
        while time.monotonic() < end:
            t = time.monotonic()
            who = None
            try:
                s = socket.create_connection((addr, port), timeout=0.3)
                s.settimeout(0.3)
                s.sendall(b"hello\n")
                who = s.recv(64).decode(errors="replace").split("\n")[0]
                s.close()
            except OSError:
                pass
            f.write("%.3f %s\n" % (t, ("ok " + who) if who else "fail"))
            left = every - (time.monotonic() - t)
            if left > 0:
                time.sleep(left)


def outage(out, since, until=float("inf")):
    tries = []
    for line in open(out):
        p = line.split()
        if since <= float(p[0]) < until:
            tries.append((float(p[0]), p[1] == "ok"))
    lost = sum(1 for t in tries if not t[1])
    worst = 0.0
    last_ok = None
    down_since = None
    for t, ok in tries:
        if ok:
            if down_since is not None:
                worst = max(worst, t - (last_ok if last_ok else down_since))
                down_since = None
            last_ok = t
        elif down_since is None:
            down_since = t
    print("outage %d ms lost %d" % (worst * 1000, lost))
    return 1 if down_since is not None else 0


if sys.argv[1] == "probe":
    probe(sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5]),
          int(sys.argv[6]) / 1000 if len(sys.argv) > 6 else 0.1)
else:
    sys.exit(outage(sys.argv[2], float(sys.argv[3]),
                    float(sys.argv[4]) if len(sys.argv) > 4
                    else float("inf")))
