#!/usr/bin/env python3
# streams.py FIRST N ADDR PORT STOP SECONDS: N TCP streams to ADDR:PORT,
#   the i-th from address FIRST + i (so that a hash of the source spreads
#   them), each first reading its server's greeting line; then every
#   100 ms each sends a numbered line and must read it back within 3 s,
#   until the file STOP exists (SECONDS at most), writing the number of
#   rounds done to STOP.round.  Prints "connected N" once all are up, then at the end "streams N ok K broken B" and one
#   line a stream: its greeting, lines echoed, and what broke it.
import ipaddress
import os
import socket
import sys
import time


def main():
    first = ipaddress.ip_address(sys.argv[1])
    n = int(sys.argv[2])
    addr, port = sys.argv[3], int(sys.argv[4])
    stop, secs = sys.argv[5], float(sys.argv[6])
    streams = []
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(3)
        s.bind((str(first + i), 0))
        s.connect((addr, port))
        f = s.makefile("rb")
        hello = f.readline().decode().strip()
        streams.append({"s": s, "f": f, "hello": hello, "lines": 0,
                        "broken": None})
    print("connected %d" % n, flush=True)
    end = time.monotonic() + secs
    k = 0
    while time.monotonic() < end and not os.path.exists(stop):
        t = time.monotonic()
        for st in streams:
            if st["broken"]:
                continue
            line = b"line %d\n" % k
            try:
                st["s"].sendall(line)
                got = st["f"].readline()
                if got != line:
                    st["broken"] = "got %r" % got
                else:
                    st["lines"] += 1
            except OSError as e:
                st["broken"] = str(e) or type(e).__name__
        k += 1
        with open(stop + ".round.tmp", "w") as r:
            r.write("%d\n" % k)
        os.rename(stop + ".round.tmp", stop + ".round")
        left = 0.1 - (time.monotonic() - t)
        if left > 0:
            time.sleep(left)
    ok = sum(1 for st in streams if not st["broken"])
    print("streams %d ok %d broken %d" % (n, ok, n - ok))
    for st in streams:
        print("%s %d %s" % (st["hello"], st["lines"], st["broken"] or "ok"))


main()
