#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A settings group its caller defines (kernel/ethtool.h), as the interrupt
# coalescing kind will: the live test test_live_ethtool_group (put in the
# initramfs through NT_LAB_BINS) reads and really changes coalescing on a
# netdevsim port, which supports every parameter, over ethtool netlink and
# over the ioctl, checks it with `ethtool -c` and restores it; on the virtio
# NIC eth0 it compares what is reported (n/a = absent) and sees a parameter
# the driver lacks refused by the kernel.
. /lab/lib.bash

bin=/usr/bin/test_live_ethtool_group
[ -x "$bin" ] || skip "$bin is not in the initramfs (NT_LAB_BINS)"
[ -e /sys/bus/netdevsim/new_device ] || modprobe netdevsim || skip "netdevsim module cannot be loaded"
echo "78 1 2" > /sys/bus/netdevsim/new_device || skip "cannot create netdevsim device 78"
for _ in $(seq 50); do
    port=$(ls /sys/bus/netdevsim/devices/netdevsim78/net/ 2>/dev/null | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { bad "netdevsim78 made no port"; finish "ethtool groups"; }
rx_usecs() { ethtool -c "$1" 2>/dev/null | awk '$1=="rx-usecs:"{print $2}'; }
before=$(rx_usecs "$port")
[ -n "$before" ] && ok "$port rx-usecs at creation: $before" || bad "ethtool -c $port shows no rx-usecs"

# The veth part needs iproute2's ip from /bin/sh, and the guest's sh is
# busybox (LAB.md): it ran on the build host already.
out=$(NT_NSIM_IFACE=$port NT_LIVE_NO_NETNS=1 "$bin" 2>&1); rc=$?
echo "$out" | sed 's/^/  | /'
expect_eq "test_live_ethtool_group exit status" "$rc" 0
grep -q "^$port coalesce via netlink" <<< "$out" && grep -q "^$port coalesce via ioctl" <<< "$out" &&
    ok "coalescing changed on $port through both interfaces" || bad "the netdevsim part did not run"
expect_eq "$port rx-usecs restored" "$(rx_usecs "$port")" "$before"
echo "78" > /sys/bus/netdevsim/del_device 2>/dev/null || true
finish "a caller-defined coalescing group read and set on netdevsim"
