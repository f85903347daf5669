#!/usr/bin/env python3
# syslogrecv.py SOCKET OUT [dgram|stream [SECONDS]]: a syslog daemon's
# end of /dev/log.  Binds the unix socket SOCKET (a datagram one, or a
# stream one whose messages end with a NUL, as syslog(3) sends them
# there) and writes each message it gets to OUT as one line, for
# SECONDS (60) at most.
import os
import selectors
import socket
import sys
import time

path, out = sys.argv[1], sys.argv[2]
kind = sys.argv[3] if len(sys.argv) > 3 else "dgram"
secs = float(sys.argv[4]) if len(sys.argv) > 4 else 60
try:
    os.unlink(path)
except FileNotFoundError:
    pass
s = socket.socket(socket.AF_UNIX,
                  socket.SOCK_STREAM if kind == "stream" else socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o666)
if kind == "stream":
    s.listen(16)
sel = selectors.DefaultSelector()
sel.register(s, selectors.EVENT_READ)
pending = {}
end = time.monotonic() + secs
with open(out, "a", buffering=1) as f:
    while time.monotonic() < end:
        for key, _ in sel.select(max(0.1, end - time.monotonic())):
            c = key.fileobj
            if kind == "dgram":
                f.write(c.recv(65536).decode(errors="replace") + "\n")
            elif c is s:
                conn, _ = s.accept()
                pending[conn] = b""
                sel.register(conn, selectors.EVENT_READ)
            else:
                data = c.recv(65536)
                if not data:
                    sel.unregister(c)
                    c.close()
                    del pending[c]
                    continue
                buf = pending[c] + data
                *msgs, pending[c] = buf.split(b"\0")
                for m in msgs:
                    f.write(m.decode(errors="replace") + "\n")
