#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The netdev family's NAPIs of one device, for the live tests' judges
# (independent of nettune; genl.py): napi-get dumped.
# Usage: napi_family.py IFINDEX. Prints [{id, pid, defer, gro, suspend,
# threaded}] (null where the kernel sends none) sorted by id;
# napi_family.py IFINDEX --queues prints {"queues": [{id, type, napi}],
# "napis": [{id, irq, pid, defer, gro}]} (queue-get and napi-get dumped);
# either {"error": errno} when the family does not answer.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import genl

IFINDEX = int(sys.argv[1])
QUEUE_GET, NAPI_GET = 10, 11


def napis(g):
    fam = g.family("netdev")
    if "--queues" in sys.argv[2:]:
        out = {"queues": [], "napis": []}
        for a in g.dump(fam, QUEUE_GET):
            if a.get(2) == IFINDEX:
                out["queues"].append({"id": a[1], "type": "rx" if a[3] == 0 else "tx", "napi": a.get(4)})
        for a in g.dump(fam, NAPI_GET):
            if a.get(1) == IFINDEX:
                out["napis"].append({"id": a[2], "irq": a.get(3), "pid": a.get(4), "defer": a.get(5),
                                     "gro": a.get(6)})
        return out
    out = [{"id": a[2], "pid": a.get(4), "defer": a.get(5), "gro": a.get(6), "suspend": a.get(7),
            "threaded": a.get(8)} for a in g.dump(fam, NAPI_GET) if a.get(1) == IFINDEX]
    return sorted(out, key=lambda x: x["id"])


genl.main(napis)
