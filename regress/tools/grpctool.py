#!/usr/bin/python3
# grpctool.py: a gRPC server and clients for the tests of HTTP/2
# backends, with Debian's python3-grpcio and no generated code: the
# messages are raw bytes.
#
# grpctool.py server PORTFILE [SECONDS]
#   a cleartext (prior knowledge) server on 127.0.0.1, its port in
#   PORTFILE, for SECONDS at most.  Service t.T:
#     Unary      the message back, reversed; trailing metadata "x-t: 1"
#     Echo       the message back (make bench's calls)
#     Fail       status NOT_FOUND, message "no such thing"
#     Server     N (decimal) messages of 100 bytes, "0000..." numbered
#     Client     the count and the size of the messages it got
#     Bidi       every message back as it comes
#     Slow       answers "late" after N s (the message, default 10); a
#                call that ends before prints "cancelled" on stdout
#     Who        this server's name (argument 3, default "a")
#   With GRPC_PORT, on that port; with GRPC_AGE=MS, every connection gets
#   GOAWAY after MS ms (its calls may go on for 30 s).
# grpctool.py silent PORTFILE [SECONDS]
#   an HTTP/2 server (cleartext, frames by hand) that answers no
#   request: it prints "headers ID" for each stream begun and "rst ID
#   CODE" for each reset it gets
# grpctool.py check ADDR PORT CA [NAME]
#   the four kinds of calls through a TLS relay, and a status in the
#   trailers; "ok" and exit 0, else what went wrong and exit 1
# grpctool.py bidi ADDR PORT CA N      N messages each way on one stream
#                                      (GRPC_PACE=S: S s before each)
# grpctool.py upload ADDR PORT CA MIB  a streamed upload of MIB MiB
# grpctool.py cancel ADDR PORT CA      a Slow call cancelled after 0.5 s
# grpctool.py deadline ADDR PORT CA    a Slow call with a 1 s deadline
# grpctool.py slow ADDR PORT CA [S]    a Slow call of S s: "OK", or its status
# grpctool.py lost ADDR PORT CA PID    a Slow call; the backend PID is
#                                      killed: UNAVAILABLE; a backend again
#                                      on its port: unary calls on the same
#                                      connection go on
# grpctool.py who ADDR PORT CA N       N Who calls: the servers' names
# grpctool.py unary ADDR PORT CA N     N unary calls: "ok N" or the error

import os
import signal
import subprocess
import sys
import threading
import time
from concurrent import futures

import grpc

SVC = "t.T"


def server(portfile, seconds, name):
    def unary(req, ctx):
        ctx.set_trailing_metadata((("x-t", "1"),))
        return req[::-1]

    def fail(req, ctx):
        ctx.abort(grpc.StatusCode.NOT_FOUND, "no such thing")

    def server_stream(req, ctx):
        for i in range(int(req)):
            yield b"%04d" % i + b"x" * 96

    def client_stream(it, ctx):
        n = size = 0
        for m in it:
            n += 1
            size += len(m)
        return b"%d %d" % (n, size)

    def bidi(it, ctx):
        for m in it:
            yield m

    def slow(req, ctx):
        for _ in range(int(req or b"10") * 20):
            if not ctx.is_active():
                print("cancelled", flush=True)
                return b""
            time.sleep(0.05)
        return b"late"

    def who(req, ctx):
        return name.encode()

    h = grpc.method_handlers_generic_handler(SVC, {
        "Unary": grpc.unary_unary_rpc_method_handler(unary),
        "Echo": grpc.unary_unary_rpc_method_handler(lambda r, c: r),
        "Fail": grpc.unary_unary_rpc_method_handler(fail),
        "Server": grpc.unary_stream_rpc_method_handler(server_stream),
        "Client": grpc.stream_unary_rpc_method_handler(client_stream),
        "Bidi": grpc.stream_stream_rpc_method_handler(bidi),
        "Slow": grpc.unary_unary_rpc_method_handler(slow),
        "Who": grpc.unary_unary_rpc_method_handler(who),
    })
    opts = [("grpc.max_receive_message_length", 8 << 20)]
    if os.environ.get("GRPC_AGE"):
        opts += [("grpc.max_connection_age_ms", int(os.environ["GRPC_AGE"])),
                 ("grpc.max_connection_age_grace_ms", 30000)]
    s = grpc.server(futures.ThreadPoolExecutor(max_workers=64),
                    options=opts)
    s.add_generic_rpc_handlers((h,))
    port = s.add_insecure_port("127.0.0.1:%s" %
                               os.environ.get("GRPC_PORT", "0"))
    s.start()
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % port)
    os.rename(portfile + ".tmp", portfile)
    s.wait_for_termination(timeout=seconds)


def silent(portfile, seconds):
    import socket
    import struct
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(8)
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % ls.getsockname()[1])
    os.rename(portfile + ".tmp", portfile)
    ls.settimeout(seconds)

    def serve(c):
        buf = b""
        c.sendall(b"\0\0\0\4\0\0\0\0\0")      # SETTINGS
        while True:
            d = c.recv(65536)
            if not d:
                return
            buf += d
            if buf.startswith(b"PRI * HTTP/2.0"):
                buf = buf[24:]
            while len(buf) >= 9:
                n = struct.unpack(">I", b"\0" + buf[:3])[0]
                if len(buf) < 9 + n:
                    break
                t, fl = buf[3], buf[4]
                sid = struct.unpack(">I", buf[5:9])[0] & 0x7fffffff
                pl = buf[9:9 + n]
                buf = buf[9 + n:]
                if t == 4 and not fl & 1:
                    c.sendall(b"\0\0\0\4\1\0\0\0\0")  # its ACK
                elif t == 1:
                    print("headers %d" % sid, flush=True)
                elif t == 3:
                    print("rst %d %d" % (sid, struct.unpack(">I", pl)[0]),
                          flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            c, _ = ls.accept()
        except socket.timeout:
            break
        threading.Thread(target=serve, args=(c,), daemon=True).start()


def channel(addr, port, ca):
    with open(ca, "rb") as f:
        creds = grpc.ssl_channel_credentials(root_certificates=f.read())
    return grpc.secure_channel("%s:%s" % (addr, port), creds, options=[
        ("grpc.ssl_target_name_override", addr),
        ("grpc.max_receive_message_length", 8 << 20)])


def method(ch, kind, name):
    f = getattr(ch, kind)
    return f("/%s/%s" % (SVC, name))


def check(ch):
    uu = method(ch, "unary_unary", "Unary")
    resp, call = uu.with_call(b"hello", timeout=10)
    if resp != b"olleh":
        return "unary: %r" % resp
    if ("x-t", "1") not in call.trailing_metadata():
        return "unary trailers: %r" % (call.trailing_metadata(),)
    try:
        method(ch, "unary_unary", "Fail")(b"", timeout=10)
        return "fail: no error"
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.NOT_FOUND or \
                e.details() != "no such thing":
            return "fail: %s %r" % (e.code(), e.details())
    got = list(method(ch, "unary_stream", "Server")(b"50", timeout=10))
    if len(got) != 50 or got[49][:4] != b"0049":
        return "server stream: %d messages" % len(got)
    resp = method(ch, "stream_unary", "Client")(
        iter([b"y" * 1000] * 20), timeout=10)
    if resp != b"20 20000":
        return "client stream: %r" % resp
    n = bidi(ch, 10)
    if n is not None:
        return n
    return None


def bidi(ch, n):
    """n messages each way on one stream, each answered before the next"""
    cond = threading.Condition()
    state = {"sent": 0, "got": 0}
    pace = float(os.environ.get("GRPC_PACE", "0"))

    def gen():
        for i in range(n):
            with cond:
                while state["got"] < i:
                    if not cond.wait(10):
                        return
                state["sent"] += 1
            if pace > 0:
                time.sleep(pace)
            yield b"m%06d" % i + b"z" * (i % 500)
    call = method(ch, "stream_stream", "Bidi")(gen(), timeout=60)
    for i, m in enumerate(call):
        if m != b"m%06d" % i + b"z" * (i % 500):
            return "bidi: message %d is %r" % (i, m[:20])
        with cond:
            state["got"] += 1
            cond.notify_all()
    if state["got"] != n:
        return "bidi: %d of %d" % (state["got"], n)
    return None


def main():
    cmd = sys.argv[1]
    if cmd == "silent":
        silent(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3
               else 120)
        return 0
    if cmd == "server":
        server(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3
               else 120, sys.argv[4] if len(sys.argv) > 4 else "a")
        return 0
    ch = channel(sys.argv[2], sys.argv[3], sys.argv[4])
    arg = sys.argv[5] if len(sys.argv) > 5 else None
    err = None
    if cmd == "check":
        err = check(ch)
    elif cmd == "bidi":
        err = bidi(ch, int(arg))
    elif cmd == "upload":
        chunk = b"u" * (1 << 20)
        resp = method(ch, "stream_unary", "Client")(
            iter([chunk] * int(arg)), timeout=120)
        if resp != b"%d %d" % (int(arg), int(arg) << 20):
            err = "upload: %r" % resp
    elif cmd == "cancel":
        fut = method(ch, "unary_unary", "Slow").future(b"", timeout=30)
        time.sleep(0.5)
        fut.cancel()
        if not fut.cancelled():
            err = "cancel: not cancelled"
    elif cmd == "deadline":
        t = time.monotonic()
        try:
            method(ch, "unary_unary", "Slow")(b"", timeout=1)
            err = "deadline: answered"
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                err = "deadline: %s" % e.code()
        if time.monotonic() - t > 5:
            err = "deadline: %.1f s" % (time.monotonic() - t)
    elif cmd == "slow":
        try:
            method(ch, "unary_unary", "Slow")((arg or "10").encode(),
                                              timeout=30)
            print("OK")
        except grpc.RpcError as e:
            print(e.code().name, e.details())
        return 0
    elif cmd == "lost":
        uu = method(ch, "unary_unary", "Unary")
        uu(b"x", timeout=10)
        fut = method(ch, "unary_unary", "Slow").future(b"20", timeout=30)
        time.sleep(0.5)
        os.kill(int(arg), signal.SIGKILL)
        try:
            fut.result()
            err = "lost: answered"
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.UNAVAILABLE:
                err = "lost: %s %s" % (e.code().name, e.details())
        if err is None:
            env = dict(os.environ, GRPC_PORT=os.environ["BACKEND_PORT"])
            p = subprocess.Popen([sys.executable, sys.argv[0], "server",
                                  "again.port", "60", "b"], env=env,
                                 stdin=subprocess.DEVNULL,
                                 stdout=open("again.out", "w"),
                                 stderr=subprocess.STDOUT)
            with open("again.pid", "w") as f:
                f.write("%d\n" % p.pid)
            for _ in range(100):
                if os.path.exists("again.port"):
                    break
                time.sleep(0.1)
            for i in range(5):
                try:
                    uu(b"%d" % i, timeout=10)
                except grpc.RpcError as e:
                    err = "lost, again %d: %s %s" % (i, e.code().name,
                                                     e.details())
                    break
    elif cmd == "who":
        for _ in range(int(arg)):
            print(method(ch, "unary_unary", "Who")(b"", timeout=10).decode())
        return 0
    elif cmd == "unary":
        uu = method(ch, "unary_unary", "Unary")
        for i in range(int(arg)):
            try:
                uu(b"%d" % i, timeout=10)
            except grpc.RpcError as e:
                err = "unary %d: %s %s" % (i, e.code().name, e.details())
                break
    if err is not None:
        print(err)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
