# SPDX-License-Identifier: Apache-2.0
# The judge of the live per-queue counter tests (test_live_qstats.sh,
# test_bench_run.sh), never nettune's code: qstats-get dumped with scope
# queue over a raw generic-netlink socket, every queue of every device of
# the caller's namespace, attributes by number as the kernel sends them:
# [{"ifindex", "type", "id", "c": {"rx_packets": N, ...}}], or
# {"error": errno}. Counter names from include/uapi/linux/netdev.h.
import json, socket, struct, sys
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
for t, p in msgs():
    if t == 2:
        print(json.dumps({"error": -struct.unpack_from("=i", p)[0]})); sys.exit(0)
    fam = attrs(p[4:])[1]; break
NAMES = ["rx-packets", "rx-bytes", "tx-packets", "tx-bytes", "rx-alloc-fail", "rx-hw-drops",
    "rx-hw-drop-overruns", "rx-csum-complete", "rx-csum-unnecessary", "rx-csum-none", "rx-csum-bad",
    "rx-hw-gro-packets", "rx-hw-gro-bytes", "rx-hw-gro-wire-packets", "rx-hw-gro-wire-bytes",
    "rx-hw-drop-ratelimits", "tx-hw-drops", "tx-hw-drop-errors", "tx-csum-none", "tx-needs-csum",
    "tx-hw-gso-packets", "tx-hw-gso-bytes", "tx-hw-gso-wire-packets", "tx-hw-gso-wire-bytes",
    "tx-hw-drop-ratelimits", "tx-stop", "tx-wake"]
# scope (4) = queue (1)
req(fam, 0x300, 2, 12, struct.pack("=HHI", 8, 4, 1))
out = []
for t, p in msgs():
    if t == 3:
        e = struct.unpack_from("=i", p)[0] if len(p) >= 4 else 0
        if e < 0:
            print(json.dumps({"error": -e})); sys.exit(0)
        break
    if t == 2:
        e = struct.unpack_from("=i", p)[0]
        if e: print(json.dumps({"error": -e})); sys.exit(0)
        continue
    a = attrs(p[4:])
    if 3 not in a: continue
    out.append({"ifindex": a[1], "type": "rx" if a[2] == 0 else "tx", "id": a[3],
                "c": {NAMES[k - 8].replace("-", "_"): v for k, v in a.items() if 8 <= k <= 34}})
print(json.dumps(out))
