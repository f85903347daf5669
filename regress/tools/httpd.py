#!/usr/bin/env python3
#
# A small HTTP/1.1 backend for the HTTP relay tests, on raw sockets so
# that it can also answer with the malformed messages a relay must
# refuse.  Usage: httpd.py PORTFILE [SECONDS [ADDRESS [PORT]]]
#
# Every request line it reads is appended to PORTFILE.requests, so a
# test sees what reached the backend, and a line for every connection
# it accepts to PORTFILE.conns.  Paths:
#
#	GET /bytes/N		N bytes of the pattern, Content-Length
#	GET /chunked/N		N bytes in chunks of up to 1000, with a
#				chunk extension and a trailer
#	GET /close/N		N bytes, no length: the close ends them
#	GET /short/N		Content-Length N, N/2 bytes, then a close
#	GET /midchunk		a chunk cut short by a close
#	GET /status/CODE	that status, no body
#	GET /headers		the request head as the body
#	GET /closing		"Connection: close", the connection kept
#	GET /closing/N		the same once N requests are pipelined
#				behind it (5 s at most)
#	GET /slow/N		N bytes, 64 KiB at a time, 50 ms apart
#	GET /unlisten/S		no more connections taken (the listening
#				socket closes), then "hello" after S
#				seconds
#	GET /delay/S		"hello" after S seconds, kept alive
#	GET /reset		a reset instead of an answer
#	GET /pause/S		"hello" without a length, S seconds of
#				silence, then 50 KB; how that went
#				("all written" or "write failed: ...") to
#				PORTFILE.requests.pause
#	GET /bad/KIND		a malformed response (see BAD below)
#	GET /ws			a websocket: 101, then an echo to the end
#	CONNECT ...		200, then an echo to the end
#	HEAD ...		the head GET would give
#	POST, PUT ...		reads the body (length or chunked, or to
#				the end with Connection: close; answers
#				"100 Continue" when asked) and answers
#				"LENGTH SHA256\n"

import hashlib
import os
import socket
import sys
import threading
import time

PATTERN = bytes(range(256)) * 256


def pattern(n):
    out = bytearray()
    while len(out) < n:
        out += PATTERN[:n - len(out)]
    return bytes(out)


BAD = {
    "cl-te": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
             b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "two-cl": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
              b"Content-Length: 6\r\n\r\nhello!",
    "neg-cl": b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\nhello",
    "fold": b"HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\n"
            b"Content-Length: 0\r\n\r\n",
    "nul": b"HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 0\r\n\r\n",
    "bare-cr": b"HTTP/1.1 200 OK\r\nX-A: a\rb\r\nContent-Length: 0\r\n\r\n",
    "ctl": b"HTTP/1.1 200 OK\r\nX-A: a\x0bb\r\nContent-Length: 0\r\n\r\n",
    "ctl-reason": b"HTTP/1.1 200 O\x1bK\r\nContent-Length: 0\r\n\r\n",
    "ctl-chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                 b"5;a=\x7f\r\nhello\r\n0\r\n\r\n",
    "204-body": b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello",
    "big-head": b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 20000 +
                b"\r\nContent-Length: 0\r\n\r\n",
    "chunk-size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                  b"zz\r\nhello\r\n0\r\n\r\n",
}


class Conn:
    def __init__(self, sock, log):
        self.sock = sock
        self.buf = b""
        self.log = log

    def fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError
        self.buf += data

    def line(self):
        while b"\n" not in self.buf:
            if len(self.buf) > 200000:
                raise EOFError
            self.fill()
        line, self.buf = self.buf.split(b"\n", 1)
        return line.rstrip(b"\r")

    def read(self, n):
        while len(self.buf) < n:
            self.fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def send(self, data):
        self.sock.sendall(data)


def body_of(c, headers):
    h = {k.lower(): v for k, v in headers}
    if h.get("expect", "").lower() == "100-continue":
        c.send(b"HTTP/1.1 100 Continue\r\n\r\n")
    digest = hashlib.sha256()
    total = 0
    if h.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size = int(c.line().split(b";")[0], 16)
            if size == 0:
                while c.line() != b"":
                    pass
                break
            while size > 0:
                part = c.read(min(size, 1 << 20))
                digest.update(part)
                total += len(part)
                size -= len(part)
            c.line()
    elif ("content-length" not in h and
          "close" in h.get("connection", "").lower()):
        # no length, and the client closes: the body runs to the end
        while True:
            if not c.buf:
                try:
                    c.fill()
                except EOFError:
                    break
            digest.update(c.buf)
            total += len(c.buf)
            c.buf = b""
    else:
        left = int(h.get("content-length", "0"))
        while left > 0:
            if not c.buf:
                c.fill()
            part = c.buf[:left]
            c.buf = c.buf[len(part):]
            digest.update(part)
            total += len(part)
            left -= len(part)
    return total, digest.hexdigest()


def echo(c):
    while True:
        data = c.sock.recv(65536)
        if not data:
            return
        c.send(data)


def answer(c, method, path, version, headers, raw):
    head_only = method == "HEAD"
    path = path.split("?")[0]
    parts = path.split("/")
    keep = "Connection: keep-alive\r\n" if version == "HTTP/1.0" else ""

    def respond(status, body, extra=""):
        head = ("%s %s\r\n%sContent-Length: %d\r\n%s\r\n" %
                (version if version == "HTTP/1.0" else "HTTP/1.1", status,
                 extra, len(body), keep)).encode()
        c.send(head if head_only else head + body)

    if method == "CONNECT":
        c.send(b"HTTP/1.1 200 Connection established\r\n\r\n")
        if c.buf:
            c.send(c.buf)
            c.buf = b""
        echo(c)
        return False
    if method in ("POST", "PUT", "PATCH"):
        n, digest = body_of(c, headers)
        respond("200 OK", ("%d %s\n" % (n, digest)).encode())
        return True
    if len(parts) > 2 and parts[1] == "bytes":
        respond("200 OK", pattern(int(parts[2])))
        return True
    if len(parts) > 2 and parts[1] == "unlisten":
        LISTENER[0].close()
        c.send(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")
        time.sleep(float(parts[2]))
        c.send(b"hello")
        return True
    if len(parts) > 2 and parts[1] == "slow":
        n = int(parts[2])
        c.send(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % n)
        data = pattern(n)
        for i in range(0, n, 65536):
            c.send(data[i:i + 65536])
            time.sleep(0.05)
        return True
    if len(parts) > 2 and parts[1] == "chunked":
        data = pattern(int(parts[2]))
        c.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        if head_only:
            return True
        for i in range(0, len(data), 1000):
            piece = data[i:i + 1000]
            c.send(b"%x;ext=1\r\n" % len(piece) + piece + b"\r\n")
        c.send(b"0\r\nX-Trailer: done\r\n\r\n")
        return True
    if len(parts) > 2 and parts[1] == "close":
        c.send(b"HTTP/1.1 200 OK\r\n\r\n")
        if not head_only:
            c.send(pattern(int(parts[2])))
        return False
    if len(parts) > 2 and parts[1] == "short":
        n = int(parts[2])
        c.send(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % n)
        c.send(pattern(n // 2))
        return False
    if path == "/midchunk":
        c.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"10\r\nhello")
        return False
    if len(parts) > 2 and parts[1] == "status":
        code = int(parts[2])
        c.send(b"HTTP/1.1 %d Status\r\n%s\r\n" % (code, keep.encode()))
        return True
    if path == "/headers":
        respond("200 OK", raw)
        return True
    if path == "/closing" or (len(parts) > 2 and parts[1] == "closing"):
        # says close, and keeps the connection all the same; /closing/N
        # first waits (5 s at most) for N requests pipelined behind it
        want = int(parts[2]) if len(parts) > 2 else 0
        c.sock.settimeout(5)
        try:
            while c.buf.count(b"\r\n\r\n") < want:
                c.fill()
        except socket.timeout:
            pass
        c.sock.settimeout(None)
        respond("200 OK", b"bye\n", "Connection: close\r\n")
        return True
    if len(parts) > 2 and parts[1] == "delay":
        time.sleep(float(parts[2]))
        respond("200 OK", b"hello\n")
        return True
    if len(parts) > 2 and parts[1] == "pause":
        c.send(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello")
        time.sleep(float(parts[2]))
        res = "all written"
        try:
            for i in range(50):
                c.send(b"x" * 1000)
                time.sleep(0.02)
        except OSError as e:
            res = "write failed: " + os.strerror(e.errno)
        with open(c.log + ".pause", "a") as f:
            f.write(res + "\n")
        return False
    if path == "/reset":
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                          b"\x01\x00\x00\x00\x00\x00\x00\x00")
        return False
    if len(parts) > 2 and parts[1] == "bad":
        c.send(BAD[parts[2]])
        return False
    if path == "/ws":
        c.send(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
               b"Connection: Upgrade\r\n\r\n")
        if c.buf:
            c.send(c.buf)
            c.buf = b""
        echo(c)
        return False
    respond("404 Not Found", b"not found\n")
    return True


def serve(sock, logpath):
    c = Conn(sock, logpath)
    try:
        while True:
            first = c.line()
            if first == b"":
                continue
            raw = first + b"\r\n"
            with open(logpath, "ab") as f:
                f.write(first + b"\n")
            method, path, version = first.decode("latin-1").split(" ")
            headers = []
            while True:
                line = c.line()
                raw += line + b"\r\n"
                if line == b"":
                    break
                k, v = line.decode("latin-1").split(":", 1)
                headers.append((k.strip(), v.strip()))
            h = {k.lower(): v.lower() for k, v in headers}
            if not answer(c, method, path, version, headers, raw):
                break
            if "close" in h.get("connection", "") or (
                    version == "HTTP/1.0" and
                    "keep-alive" not in h.get("connection", "")):
                break
    except (EOFError, ConnectionError, ValueError, OSError):
        pass
    finally:
        sock.close()


LISTENER = []


def main():
    portfile = sys.argv[1]
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 120
    addr = sys.argv[3] if len(sys.argv) > 3 else "127.0.0.1"
    port = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(128)
    LISTENER.append(ls)
    logpath = portfile + ".requests"
    open(logpath, "wb").close()
    connpath = portfile + ".conns"
    open(connpath, "wb").close()
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % ls.getsockname()[1])
    os.rename(tmp, portfile)
    ls.settimeout(1)
    end = time.time() + seconds
    while time.time() < end:
        try:
            s, peer = ls.accept()
        except socket.timeout:
            continue
        except OSError:
            # /unlisten closed it: the connections go on to the end
            time.sleep(0.5)
            continue
        with open(connpath, "a") as f:
            f.write("%d\n" % peer[1])
        try:
            s.settimeout(seconds)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            s.close()
            continue
        threading.Thread(target=serve, args=(s, logpath),
                         daemon=True).start()


if __name__ == "__main__":
    main()
