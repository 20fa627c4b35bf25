# SPDX-License-Identifier: Apache-2.0
# The judge of the live per-queue counter tests (test_live_qstats.sh,
# test_bench_run.sh, test_live_verify.sh), never nettune's code (genl.py):
# qstats-get dumped with scope queue, every queue of every device of the
# caller's namespace: [{"ifindex", "type", "id", "c": {"rx_packets": N,
# ...}}], or {"error": errno}. Counter names from
# include/uapi/linux/netdev.h.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import genl

QSTATS_GET, A_SCOPE, SCOPE_QUEUE = 12, 4, 1
NAMES = ["rx-packets", "rx-bytes", "tx-packets", "tx-bytes", "rx-alloc-fail", "rx-hw-drops",
    "rx-hw-drop-overruns", "rx-csum-complete", "rx-csum-unnecessary", "rx-csum-none", "rx-csum-bad",
    "rx-hw-gro-packets", "rx-hw-gro-bytes", "rx-hw-gro-wire-packets", "rx-hw-gro-wire-bytes",
    "rx-hw-drop-ratelimits", "tx-hw-drops", "tx-hw-drop-errors", "tx-csum-none", "tx-needs-csum",
    "tx-hw-gso-packets", "tx-hw-gso-bytes", "tx-hw-gso-wire-packets", "tx-hw-gso-wire-bytes",
    "tx-hw-drop-ratelimits", "tx-stop", "tx-wake"]


def queues(g):
    fam = g.family("netdev")
    return [{"ifindex": a[1], "type": "rx" if a[2] == 0 else "tx", "id": a[3],
             "c": {NAMES[k - 8].replace("-", "_"): v for k, v in a.items() if 8 <= k <= 34}}
            for a in g.dump(fam, QSTATS_GET, genl.u32(A_SCOPE, SCOPE_QUEUE)) if 3 in a]


genl.main(queues)
