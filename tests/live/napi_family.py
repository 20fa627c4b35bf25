#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The netdev family's NAPIs of one device, for the live tests' judges
# (independent of nettune): a raw generic-netlink socket, napi-get dump.
# Usage: napi_family.py IFINDEX. Prints [{id, pid, defer, gro, suspend,
# threaded}] (null where the kernel sends none)
# sorted by id, or {"error": errno} when the family does not answer.
import json, socket, struct, sys
IFINDEX = int(sys.argv[1])
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
def req(typ, flags, seq, cmd, attrs=b""):
    body = struct.pack("BBH", cmd, 1, 0) + attrs
    s.send(struct.pack("=IHHII", 16 + len(body), typ, 1 | flags, seq, 0) + body)
def attrs(b):
    out, off = {}, 0
    while off + 4 <= len(b):
        l, t = struct.unpack_from("=HH", b, off)
        if l < 4: break
        v = b[off + 4:off + l]
        n = {2: "=H", 4: "=I", 8: "=Q"}.get(len(v))
        out[t & 0x3fff] = struct.unpack(n, v)[0] if n else v
        off += (l + 3) & ~3
    return out
def msgs():
    while True:
        b = s.recv(65536)
        off = 0
        while off + 16 <= len(b):
            l, t = struct.unpack_from("=IH", b, off)
            yield t, b[off + 16:off + l]
            off += (l + 3) & ~3
name = b"netdev\0"
req(16, 0, 1, 3, struct.pack("=HH", 4 + len(name), 2) + name + b"\0")
fam = None
for t, p in msgs():
    if t == 2:
        print(json.dumps({"error": -struct.unpack_from("=i", p)[0]})); sys.exit(0)
    fam = attrs(p[4:])[1]; break
out = []
req(fam, 0x300, 2, 11)
for t, p in msgs():
    if t == 3: break
    if t == 2:
        print(json.dumps({"error": -struct.unpack_from("=i", p)[0]})); sys.exit(0)
    a = attrs(p[4:])
    if a.get(1) == IFINDEX:
        out.append({"id": a[2], "pid": a.get(4), "defer": a.get(5), "gro": a.get(6), "suspend": a.get(7),
                    "threaded": a.get(8)})
print(json.dumps(sorted(out, key=lambda x: x["id"])))
