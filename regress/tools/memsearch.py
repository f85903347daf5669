#!/usr/bin/env python3
# memsearch.py KEYFILE PID...: does any process's memory hold the private
# key of KEYFILE (PEM)?  Prints "PID found WHAT" for each hit, and exits 0
# when something was found, 1 when nothing was.  Needs root.  Looks for
# the PEM text and for the private number (RSA d, EC scalar) in both
# byte orders, as libcrypto keeps it in little-endian words.
import re
import subprocess
import sys


def secrets(keyfile):
    pem = open(keyfile).read()
    body = "".join(l for l in pem.splitlines() if not l.startswith("-----"))
    out = subprocess.run(["openssl", "pkey", "-in", keyfile, "-noout",
                          "-text"], capture_output=True, text=True,
                         check=True).stdout
    m = re.search(r"(privateExponent|priv):\s*\n((?:\s+[0-9a-f:]+\n)+)",
                  out)
    num = bytes.fromhex(re.sub(r"[\s:]", "", m.group(2)))
    num = num.lstrip(b"\0")
    win = num[:32]
    return [("pem", body[:48].encode()),
            ("number", win), ("number-le", num[::-1][:32])]


def search(pid, needles):
    found = []
    with open("/proc/%d/maps" % pid) as maps, \
            open("/proc/%d/mem" % pid, "rb", 0) as mem:
        for line in maps:
            f = line.split()
            if "r" not in f[1]:
                continue
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except (OSError, ValueError, OverflowError):
                continue
            for name, n in needles:
                if n in data and name not in found:
                    found.append(name)
    return found


needles = secrets(sys.argv[1])
hit = False
for p in sys.argv[2:]:
    for what in search(int(p), needles):
        print(p, "found", what)
        hit = True
sys.exit(0 if hit else 1)
