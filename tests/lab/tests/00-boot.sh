#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Fact check of the lab itself: the guest has what the other tests rely on.
# 4 NUMA nodes, the three virtio NICs by MAC, the virtio-blk disk, netdevsim.
set -u
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }
check "4 NUMA nodes online" '[ "$(cat /sys/devices/system/node/online)" = 0-3 ]'
for mac in 52:54:00:00:00:10 52:54:00:00:01:11 52:54:00:00:03:12; do
    check "NIC $mac present" 'grep -qx "$mac" /sys/class/net/*/address'
done
check "virtio-blk vda present" '[ -e /sys/block/vda ]'
check "netdevsim bus present" '[ -e /sys/bus/netdevsim/new_device ]'
check "nettune runs" '"$NT_BIN" --help >/dev/null 2>&1 || "$NT_BIN" help >/dev/null 2>&1'
[ $fail = 0 ] && echo "boot facts hold" || { echo "boot facts do not hold"; exit 1; }
