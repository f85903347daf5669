#!/usr/bin/env python3
#
# A misbehaving HTTP/2 client for the tests of a relay's limits: TLS with
# ALPN h2 to 127.0.0.1:PORT, frames written by hand.
#
#   h2tool.py rapid PORT N         N streams, each opened and reset at once
#   h2tool.py continuation PORT N  a HEADERS frame, then N CONTINUATION
#                                  frames, none ending the header block
#   h2tool.py ping PORT N          N PING frames
#   h2tool.py settings PORT N      N empty SETTINGS frames
#   h2tool.py window PORT N        a stream window of 1 byte: N streams
#                                  for 1 MiB each, then one for 100 KB
#                                  whose window is opened; prints
#                                  "headers H open-ended E": the streams
#                                  that got HEADERS, and 1 when the
#                                  open one was answered whole
#   h2tool.py bomb PORT N          an entry of 4 KB in the dynamic table,
#                                  then N streams whose header blocks of
#                                  1000 bytes refer to it 1000 times
#                                  each (4 MB a stream once decoded)
#   h2tool.py get PORT N           N GET requests, one after the other,
#                                  each answered before the next
#   h2tool.py getping PORT N       the same, with a PING after each
#                                  answer (a gRPC client's bandwidth
#                                  probes); prints "answered N" and
#                                  "goaway CODE" or "no goaway"
#   h2tool.py late PORT N          N streams for a slow answer, 20 at a
#                                  time, each reset after 0.4 s; then
#                                  one more: prints "goaway CODE" or
#                                  "no goaway", and "answered 1" when
#                                  that one was answered
#   h2tool.py target PORT 0        ACL with :scheme "hhost" and :path
#                                  ":/index.htm" (libnghttp2 checks the
#                                  path of http and https only); prints
#                                  "ended" or "reset" for the stream
#   h2tool.py ctl PORT 0           GET /ctl/a<VT>b, then GET /headers with
#                                  "x-a: a<SOH>b": control characters
#                                  no HTTP/1.1 backend should get; prints
#                                  "ended" or "reset" for each stream
#   h2tool.py busy PORT S          GET /unlisten/S (httpd.py stops taking
#                                  connections, answers after S s), then
#                                  once its head came, GET /bytes/10;
#                                  prints "ended" and the streams in the
#                                  order they ended (1 the first, 3 the
#                                  second)
#
# Then it reads until the relay closes (at most 10 s) and prints one line:
# "goaway CODE" for the GOAWAY it got (the last), or "no goaway", then
# "closed" or "open", and the number of streams that got HEADERS.

import socket
import ssl
import struct
import sys
import time

DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, \
    CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1


def frame(ftype, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + \
        struct.pack(">BBI", ftype, flags, stream) + payload


def hpack_int(value, prefix):
    limit = (1 << prefix) - 1
    if value < limit:
        return bytes([value])
    out = bytearray([limit])
    value -= limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def hpack_str(s):
    return hpack_int(len(s), 7) + s


def hpack(fields):
    # literal fields without indexing, new names, no Huffman
    out = bytearray()
    for name, value in fields:
        out += b"\x00" + hpack_str(name) + hpack_str(value)
    return bytes(out)


def request(port, path=b"/bytes/10"):
    return hpack([(b":method", b"GET"), (b":scheme", b"https"),
                  (b":authority", b"127.0.0.1:%d" % port),
                  (b":path", path)])


def connect(port):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["h2"])
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    s = ctx.wrap_socket(raw)
    if s.selected_alpn_protocol() != "h2":
        print("no h2")
        sys.exit(1)
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(SETTINGS, 0, 0))
    return s


class Reader:
    def __init__(self, s):
        self.s = s
        self.buf = b""
        self.goaway = None
        self.closed = False
        self.headers = set()

    def frames(self, deadline):
        while time.time() < deadline and not self.closed:
            while len(self.buf) >= 9:
                n = struct.unpack(">I", b"\0" + self.buf[:3])[0]
                if len(self.buf) < 9 + n:
                    break
                ftype, flags, stream = struct.unpack(">BBI", self.buf[3:9])
                payload = self.buf[9:9 + n]
                self.buf = self.buf[9 + n:]
                stream &= 0x7fffffff
                if ftype == GOAWAY:
                    self.goaway = struct.unpack(">I", payload[4:8])[0]
                if ftype == HEADERS:
                    self.headers.add(stream)
                if ftype == SETTINGS and not flags & ACK:
                    send(self.s, frame(SETTINGS, ACK, 0))
                yield ftype, flags, stream
            try:
                self.s.settimeout(max(0.01, deadline - time.time()))
                data = self.s.recv(65536)
            except socket.timeout:
                continue
            except (ConnectionError, ssl.SSLError, OSError):
                self.closed = True
                return
            if not data:
                self.closed = True
                return
            self.buf += data


def send(s, data):
    try:
        s.sendall(data)
        return True
    except (ConnectionError, ssl.SSLError, OSError):
        return False


def main():
    mode, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    s = connect(port)
    r = Reader(s)
    batch = bytearray()
    if mode == "rapid":
        for i in range(n):
            sid = 1 + 2 * i
            batch += frame(HEADERS, END_STREAM | END_HEADERS, sid,
                           request(port))
            batch += frame(RST_STREAM, 0, sid, struct.pack(">I", 8))
            if len(batch) > 16384:
                if not send(s, batch):
                    break
                batch = bytearray()
    elif mode == "continuation":
        batch += frame(HEADERS, END_STREAM, 1, request(port))
        for i in range(n):
            batch += frame(CONTINUATION, 0, 1,
                           hpack([(b"x-a", b"%d" % i)]))
    elif mode == "window":
        # SETTINGS_INITIAL_WINDOW_SIZE 1; the connection's window wide
        send(s, frame(SETTINGS, 0, 0, struct.pack(">HI", 4, 1)) +
             frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 1 << 30)))
        for i in range(n):
            send(s, frame(HEADERS, END_STREAM | END_HEADERS, 1 + 2 * i,
                          request(port, b"/bytes/1048576")))
        last = 1 + 2 * n
        send(s, frame(HEADERS, END_STREAM | END_HEADERS, last,
                      request(port, b"/bytes/100000")) +
             frame(WINDOW_UPDATE, 0, last, struct.pack(">I", 1 << 20)))
        ended = 0
        for ftype, flags, stream in r.frames(time.time() + 10):
            if stream == last and flags & END_STREAM and \
                    ftype in (HEADERS, DATA):
                ended = 1
            if ended and len(r.headers) == n + 1:
                break
        print("headers %d open-ended %d" % (len(r.headers), ended))
        return
    elif mode == "bomb":
        big = request(port) + b"\x40" + hpack_str(b"x-b") + \
            hpack_str(b"a" * 4000)
        batch += frame(HEADERS, END_STREAM | END_HEADERS, 1, big)
        for i in range(1, n + 1):
            # dynamic index 62: the entry above, 1000 times
            block = request(port) + b"\xbe" * 1000
            batch += frame(HEADERS, END_STREAM | END_HEADERS, 1 + 2 * i,
                           block)
    elif mode == "ping":
        for i in range(n):
            batch += frame(PING, 0, 0, struct.pack(">Q", i))
    elif mode == "settings":
        for i in range(n):
            batch += frame(SETTINGS, 0, 0)
    elif mode in ("get", "getping"):
        for i in range(n):
            sid = 1 + 2 * i
            send(s, frame(HEADERS, END_STREAM | END_HEADERS, sid,
                          request(port)))
            for ftype, flags, stream in r.frames(time.time() + 10):
                if stream == sid and flags & END_STREAM:
                    break
            if mode == "getping":
                send(s, frame(PING, 0, 0, struct.pack(">Q", i)))
        try:
            s.close()
        except OSError:
            pass
        if mode == "get":
            print("answered %d" % len(r.headers))
        else:
            print("answered %d %s" % (len(r.headers),
                  "goaway %d" % r.goaway if r.goaway is not None else
                  "no goaway"))
        return
    elif mode == "late":
        # streams given up unanswered after 0.4 s, 20 at a time (gRPC
        # calls cancelled at their deadline; relayd counts those younger
        # than 0.2 s), then one more that waits
        sid = 1
        for start in range(0, n, 20):
            ids = []
            for i in range(start, min(n, start + 20)):
                send(s, frame(HEADERS, END_STREAM | END_HEADERS, sid,
                              request(port, b"/delay/2")))
                ids.append(sid)
                sid += 2
            for _ in r.frames(time.time() + 0.4):
                pass
            send(s, b"".join(frame(RST_STREAM, 0, i, struct.pack(">I", 8))
                             for i in ids))
        send(s, frame(HEADERS, END_STREAM | END_HEADERS, sid,
                      request(port, b"/bytes/10")))
        answered = 0
        for ftype, flags, stream in r.frames(time.time() + 10):
            if stream == sid and flags & END_STREAM:
                answered = 1
                break
        print("%s answered %d" % (
            "goaway %d" % r.goaway if r.goaway is not None else "no goaway",
            answered))
        return
    elif mode == "target":
        send(s, frame(HEADERS, END_STREAM | END_HEADERS, 1, hpack([
            (b":method", b"ACL"), (b":scheme", b"hhost"),
            (b":authority", b"example.com"), (b":path", b":/index.htm")])))
        how = "nothing"
        for ftype, flags, stream in r.frames(time.time() + 10):
            if stream == 1 and ftype == RST_STREAM:
                how = "reset"
                break
            if stream == 1 and flags & END_STREAM and \
                    ftype in (HEADERS, DATA):
                how = "ended"
                break
        print(how)
        return
    elif mode == "ctl":
        base = [(b":method", b"GET"), (b":scheme", b"https"),
                (b":authority", b"127.0.0.1:%d" % port)]
        send(s, frame(HEADERS, END_STREAM | END_HEADERS, 1, hpack(
            base + [(b":path", b"/ctl/a\x0bb")])))
        send(s, frame(HEADERS, END_STREAM | END_HEADERS, 3, hpack(
            base + [(b":path", b"/headers"), (b"x-a", b"a\x01b")])))
        how = {}
        for ftype, flags, stream in r.frames(time.time() + 10):
            if stream in (1, 3) and ftype == RST_STREAM:
                how[stream] = "reset"
            elif stream in (1, 3) and flags & END_STREAM and \
                    ftype in (HEADERS, DATA):
                how[stream] = "ended"
            if len(how) == 2:
                break
        print(how.get(1, "nothing"), how.get(3, "nothing"))
        return
    elif mode == "busy":
        send(s, frame(HEADERS, END_STREAM | END_HEADERS, 1,
                      request(port, b"/unlisten/%d" % n)))
        ended = []
        second = False
        for ftype, flags, stream in r.frames(time.time() + 10 + n):
            if stream == 1 and ftype == HEADERS and not second:
                send(s, frame(HEADERS, END_STREAM | END_HEADERS, 3,
                              request(port)))
                second = True
            if stream in (1, 3) and (ftype == RST_STREAM or (
                    ftype in (HEADERS, DATA) and flags & END_STREAM)):
                ended.append(str(stream))
                if len(ended) == 2:
                    break
        print("ended " + " ".join(ended))
        return
    send(s, batch)
    for _ in r.frames(time.time() + 10):
        pass
    print("%s %s headers %d" % (
        "goaway %d" % r.goaway if r.goaway is not None else "no goaway",
        "closed" if r.closed else "open", len(r.headers)))


if __name__ == "__main__":
    main()
