#!/usr/bin/env python3
# notifyrecv.py SOCKET OUT PORT [SECONDS]: a service manager's end of the
# readiness protocol.  Binds the unix datagram socket SOCKET, writes each
# message it gets to OUT as one line, its "KEY=value" lines joined by
# " | "; on a message with READY=1 it connects to 127.0.0.1:PORT at once
# and adds " connect=ok" or " connect=failed" to that line.
import os
import socket
import sys
import time

path, out, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
secs = float(sys.argv[4]) if len(sys.argv) > 4 else 60
try:
    os.unlink(path)
except FileNotFoundError:
    pass
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o777)
end = time.monotonic() + secs
with open(out, "a", buffering=1) as f:
    while time.monotonic() < end:
        s.settimeout(max(0.1, end - time.monotonic()))
        try:
            msg = s.recv(4096).decode()
        except socket.timeout:
            break
        line = " | ".join(msg.split("\n"))
        if "READY=1" in msg.split("\n"):
            c = socket.socket()
            c.settimeout(2)
            try:
                c.connect(("127.0.0.1", port))
                line += " connect=ok"
            except OSError:
                line += " connect=failed"
            c.close()
        f.write(line + "\n")
