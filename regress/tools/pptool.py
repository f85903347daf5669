#!/usr/bin/env python3
#
# The PROXY protocol peers of the tests, on loopback only.
#
#   pptool.py server PORTFILE [SECONDS [ADDRESS]]
#	A backend that wants a PROXY header (v1 or v2) first on every
#	connection: it appends what the header said to PORTFILE.headers,
#	one line each ("v1 TCP4 SRC DST SPORT DPORT", "v2 TCP6 ...",
#	"v1 UNKNOWN", "v2 LOCAL", "bad ..."), then echoes the rest of the
#	stream to its end.  A connection without a valid header is closed.
#   pptool.py client ADDRESS PORT HEADER [DATA]
#	Connect (to the unix socket ADDRESS if it is a path), send HEADER (v1:SRC:SPORT:DST:DPORT, v2:..., the same with
#	IPv6 addresses in brackets, "v1unknown", "v2local", "none" or
#	"raw:TEXT"), then DATA (default "hello\n"), half-close and print
#	what comes back.  In TEXT and DATA, the four characters \r\n are
#	a CRLF.
#
# Every mode ends by itself (servers after SECONDS, default 60).

import ipaddress
import os
import socket
import struct
import sys
import threading

SIG = b"\r\n\r\n\x00\r\nQUIT\n"


def read_exact(s, n):
    buf = b""
    while len(buf) < n:
        b = s.recv(n - len(buf))
        if not b:
            raise EOFError("short header")
        buf += b
    return buf


def read_header(s):
    first = read_exact(s, 1)
    if first == b"P":
        line = first
        while not line.endswith(b"\r\n"):
            if len(line) > 107:
                raise ValueError("v1 line too long")
            line += read_exact(s, 1)
        f = line[:-2].decode().split(" ")
        if f[0] != "PROXY":
            raise ValueError("not PROXY")
        if f[1] == "UNKNOWN":
            return "v1 UNKNOWN"
        if len(f) != 6 or f[1] not in ("TCP4", "TCP6"):
            raise ValueError("bad v1 line %r" % line)
        return "v1 " + " ".join(f[1:])
    hdr = first + read_exact(s, 15)
    if hdr[:12] != SIG or hdr[12] >> 4 != 2:
        raise ValueError("bad v2 signature")
    length = struct.unpack("!H", hdr[14:16])[0]
    body = read_exact(s, length)
    if hdr[12] & 0xF == 0:
        return "v2 LOCAL"
    fam = hdr[13]
    if fam == 0x11:
        src, dst = body[0:4], body[4:8]
        sp, dp = struct.unpack("!HH", body[8:12])
        return "v2 TCP4 %s %s %d %d" % (socket.inet_ntop(socket.AF_INET, src),
                                       socket.inet_ntop(socket.AF_INET, dst),
                                       sp, dp)
    if fam == 0x21:
        src, dst = body[0:16], body[16:32]
        sp, dp = struct.unpack("!HH", body[32:36])
        return "v2 TCP6 %s %s %d %d" % (socket.inet_ntop(socket.AF_INET6,
                                                         src),
                                       socket.inet_ntop(socket.AF_INET6,
                                                        dst), sp, dp)
    return "v2 UNSPEC"


def serve_conn(c, out, lock):
    try:
        try:
            what = read_header(c)
        except (ValueError, EOFError, UnicodeDecodeError) as e:
            what = "bad " + str(e)
        with lock:
            with open(out, "a") as f:
                f.write(what + "\n")
        if what.startswith("bad"):
            return
        while True:
            b = c.recv(65536)
            if not b:
                break
            c.sendall(b)
        c.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    finally:
        c.close()


def server(portfile, secs, addr):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, 0))
    s.listen(64)
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % s.getsockname()[1])
    os.rename(tmp, portfile)
    lock = threading.Lock()
    threading.Timer(secs, lambda: os._exit(0)).start()
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve_conn,
                         args=(c, portfile + ".headers", lock),
                         daemon=True).start()


def split_hostport(spec):
    # [v6]:port or v4:port
    if spec.startswith("["):
        host, rest = spec[1:].split("]", 1)
        return host, int(rest[1:].split(":", 1)[0]), rest[1:]
    host, rest = spec.split(":", 1)
    return host, int(rest.split(":", 1)[0]), rest


def make_header(spec):
    if spec == "none":
        return b""
    if spec == "v1unknown":
        return b"PROXY UNKNOWN\r\n"
    if spec == "v2local":
        return SIG + bytes([0x20, 0x00, 0, 0])
    if spec.startswith("raw:"):
        return spec[4:].encode().replace(b"\\r\\n", b"\r\n")
    ver, rest = spec.split(":", 1)
    src, sport, rest = split_hostport(rest)
    rest = rest.split(":", 1)[1]
    dst, dport, _ = split_hostport(rest)
    v6 = ipaddress.ip_address(src).version == 6
    if ver == "v1":
        return ("PROXY %s %s %s %d %d\r\n" % ("TCP6" if v6 else "TCP4",
                                             src, dst, sport,
                                             dport)).encode()
    fam = socket.AF_INET6 if v6 else socket.AF_INET
    body = (socket.inet_pton(fam, src) + socket.inet_pton(fam, dst) +
            struct.pack("!HH", sport, dport))
    return SIG + bytes([0x21, 0x21 if v6 else 0x11]) + \
        struct.pack("!H", len(body)) + body


def client(addr, port, spec, data):
    if addr.startswith("/"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(addr)
    else:
        s = socket.create_connection((addr, port), timeout=10)
    try:
        s.sendall(make_header(spec) +
                  data.encode().replace(b"\\r\\n", b"\r\n"))
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass            # the relay may close before it read everything
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except OSError:
        pass
    sys.stdout.write(out.decode(errors="replace"))


def main():
    a = sys.argv[1:]
    if len(a) >= 2 and a[0] == "server":
        server(a[1], int(a[2]) if len(a) > 2 else 60,
               a[3] if len(a) > 3 else "127.0.0.1")
    elif len(a) >= 4 and a[0] == "client":
        client(a[1], int(a[2]), a[3], a[4] if len(a) > 4 else "hello\n")
    else:
        sys.stderr.write("usage: see the comment at the top\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
