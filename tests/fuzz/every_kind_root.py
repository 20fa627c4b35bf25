#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Make a fixture root whose NICs have every kind of ethtool setting, for
fuzz_profile and fuzz_desired: a copy of the EPYC fixture (rings, channels,
flows and RSS on enos0..enos3, a bond over them) with interrupt coalescing
(CQE mode and DIM profiles too), hds-thresh, offload features and flow control (pause) added to each NIC's
ethtool/IFACE.json as the unit tests give them (test_coalesce, test_features,
test_pause), so that profile validation gets past every section instead of
stopping at "has no ... settings" (the x460 root's NICs have rings only).

Usage: every_kind_root.py FIXTURES DEST (DEST is replaced)."""
import json
import os
import shutil
import sys

# With the kernel's default EQE DIM profiles (lib/dim/net_dim.c), usec and
# pkts per level as virtio_net keeps them (test_coalesce_profile).
COALESCE = {"rx_usecs": 8, "tx_usecs": 8, "rx_frames": 0, "tx_frames": 0,
            "adaptive_rx": 1, "adaptive_tx": 0, "cqe_mode_rx": 0, "cqe_mode_tx": 0,
            "rx_profile": [{"usec": u, "pkts": 256} for u in (1, 8, 64, 128, 256)],
            "tx_profile": [{"usec": u, "pkts": 128} for u in (1, 8, 32, 64, 128)]}
# The ring parameters only ethtool netlink reaches, as 7.3's netdevsim
# reports them (the generator's ports have split and push modes already).
RING_PARAMS = {"hds_thresh": 0, "hds_thresh_max": 1024}
FEATURES = {"tx-scatter-gather": {"on": True, "fixed": False},
            "tx-tcp-segmentation": {"on": True, "needs": ["tx-scatter-gather"]},
            "rx-gro": True, "rx-lro": {"on": False, "fixed": True},
            "tx-generic-segmentation": {"on": True},
            "tx-udp-segmentation": {"on": False, "needs": ["tx-gso-robust"]}}
PAUSE = {"autoneg": False, "rx": True, "tx": True}


def main():
    fixtures, dest = sys.argv[1], sys.argv[2]
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(os.path.join(fixtures, "epyc7713-2node-bond"), dest, symlinks=True)
    eth = os.path.join(dest, "ethtool")
    kinds = set()
    for name in sorted(os.listdir(eth)):
        path = os.path.join(eth, name)
        with open(path) as f:
            doc = json.load(f)
        doc.setdefault("coalesce", COALESCE)
        doc.setdefault("features", FEATURES)
        doc.setdefault("pause", PAUSE)
        for k, v in RING_PARAMS.items():
            doc.get("rings", {}).setdefault(k, v)
        kinds |= set(doc)
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
    want = {"rings", "channels", "flows", "rss", "coalesce", "features", "pause"}
    if not want <= kinds:
        sys.exit("every_kind_root: missing %s" % sorted(want - kinds))


if __name__ == "__main__":
    main()
