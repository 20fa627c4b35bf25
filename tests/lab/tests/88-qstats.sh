#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Per-queue statistics (the netdev family's qstats-get, Linux 6.9+) of the
# guest's virtio NICs, as GET /v1/nics/IF and `nettune nics IF --json` show
# them, judged without nettune's netlink code: the guest has no tool that
# dumps qstats, and 7.x's virtio_net no longer lists per-queue packets in
# `ethtool -S`, so the judge is the device totals in
# /sys/class/net/IF/statistics read before and after nettune's reading (the
# queues' sum lies between them; on a one-queue NIC that is the queue's own
# count), and the driver's own per-queue tx{N}_kicks in `ethtool -S`.
#  - 7.x: the node-1 NIC (one queue pair, user-mode network): pings to the
#    gateway 10.0.2.2 (answered inside qemu) raise TX and RX of queue 0 by
#    at least the echoes sent and the replies received; the RSS NIC (4 queue
#    pairs, tap in qemu's throw-away network namespace, nothing answers):
#    XPS maps one CPU to its last TX queue only, a ping pinned to that CPU
#    (taskset) to 10.0.2.2 through a /32 route and a static neighbour on
#    that NIC raises that queue's TX by at least the echoes sent and every
#    other queue's by much less (IPv6 off on it, so nothing else is sent).
#    XPS, the route, the neighbour, the address and the link are put back.
#  - before 6.9 (the lab's 6.1): nettune says the counters are not available
#    (no queue_stats_source, a reason naming the kernel, no queue with stats), even after
#    traffic: nothing is guessed.
. /lab/lib.bash

KVER=$(uname -r)
kmaj=$(echo "$KVER" | cut -d. -f1)
kmin=$(echo "$KVER" | cut -d. -f2)
if [ "$kmaj" -gt 6 ] || { [ "$kmaj" -eq 6 ] && [ "$kmin" -ge 9 ]; }; then QSTATS=1; else QSTATS=0; fi
N1=$(nic_by_mac "$MAC_N1") || { bad "no NIC $MAC_N1"; finish "qstats"; }
RSS=
[ "${NT_LAB_RSS:-0}" = 1 ] && RSS=$(nic_by_mac 52:54:00:02:01:20)

ip link set "$N1" up
ip addr flush dev "$N1"
ip addr add 10.0.2.15/24 dev "$N1" || { bad "cannot address $N1"; finish "qstats"; }

# What to put back on the RSS NIC.
declare -A xps_saved=()
RSS_WAS_UP= RSS_V6=
restore() {
    nt_stop
    [ -n "$RSS" ] || return 0
    local f
    for f in "${!xps_saved[@]}"; do echo "${xps_saved[$f]}" > "$f" 2>/dev/null; done
    ip neigh del 10.0.2.2 dev "$RSS" 2>/dev/null
    ip route del 10.0.2.2/32 dev "$RSS" 2>/dev/null
    ip addr del 10.0.2.16/32 dev "$RSS" 2>/dev/null
    [ -n "$RSS_WAS_UP" ] || ip link set "$RSS" down
    [ -z "$RSS_V6" ] || echo "$RSS_V6" > "/proc/sys/net/ipv6/conf/$RSS/disable_ipv6"
}
nt_start || finish "qstats"
trap restore EXIT

# snap TAG IF: the sysfs totals, the report, the sysfs totals again, the
# driver's ethtool -S, into /tmp/qs-TAG.{s0,json,s1,e}.
sys_pk() { echo "$(cat "/sys/class/net/$1/statistics/rx_packets") $(cat "/sys/class/net/$1/statistics/tx_packets")"; }
snap() {
    sys_pk "$2" > "/tmp/qs-$1.s0"
    api GET "/v1/nics/$2"
    [ "$API_CODE" = 200 ] || bad "GET /v1/nics/$2: $API_CODE"
    echo "$API_BODY" > "/tmp/qs-$1.json"
    sys_pk "$2" > "/tmp/qs-$1.s1"
    ethtool -S "$2" > "/tmp/qs-$1.e" 2>&1
}
# qs TAG rx|tx Q: nettune's rx_packets/tx_packets of queue Q ("" none).
qs() { jq -r --arg d "$2" --argjson q "$3" '.queues[$d][] | select(.queue == $q) | .stats[$d + "_packets"] // empty' "/tmp/qs-$1.json"; }
# kicks TAG Q: the driver's own tx{Q}_kicks in ethtool -S (7.x's names;
# its ethtool -S no longer lists per-queue packets, qstats has them).
kicks() { awk -v k="tx${2}_kicks:" '$1 == k {print $2; exit}' "/tmp/qs-$1.e"; }
# judge TAG: the queues' sum between the device totals read before and
# after nettune's reading (on a one-queue NIC: the queue's own count).
judge() {
    local d sum i=0 a b
    for d in rx tx; do
        i=$((i + 1))
        # One jq a direction: each fork takes a while under TCG.
        sum=$(jq -r --arg d "$d" '[.queues[$d][].stats[$d + "_packets"]] |
            if all(. != null) then "\(add // 0) \(length)" else "missing" end' "/tmp/qs-$1.json")
        [ "$sum" != missing ] || { bad "$1: a $d queue without ${d}_packets"; continue; }
        a=$(cut -d' ' -f$i "/tmp/qs-$1.s0"); b=$(cut -d' ' -f$i "/tmp/qs-$1.s1")
        [ "$a" -le "${sum% *}" ] && [ "${sum% *}" -le "$b" ] &&
            ok "$1: ${sum#* } $d queue(s) sum ${sum% *} within sysfs ${d}_packets $a..$b" ||
            bad "$1: $d queues' sum ${sum% *} outside sysfs ${d}_packets $a..$b"
    done
}

if [ "$QSTATS" = 0 ]; then
    ping -I "$N1" -c 3 -i 0.1 -W 1 -w 3 -q 10.0.2.2 >/dev/null 2>&1
    for nic in $N1 $RSS; do
        snap "$nic" "$nic"
        echo "$nic: $(jq -c '{queue_stats_source, queue_stats_reason}' "/tmp/qs-$nic.json")"
        expect_eq "$nic: no per-queue counters on $KVER" "$(jq -r .queue_stats_source "/tmp/qs-$nic.json")" null
        # The kernel, not the driver: 6.1 has no netdev family at all
        # (6.3+); 6.3 to 6.8 have one that lists no qstats-get.
        jq -e '.queue_stats_reason | type == "string" and test("netdev netlink family \\(Linux 6\\.3\\+\\)|qstats-get needs Linux 6\\.9")' "/tmp/qs-$nic.json" >/dev/null &&
            ok "$nic: the reason names the kernel" || bad "$nic: reason $(jq .queue_stats_reason "/tmp/qs-$nic.json")"
        expect_eq "$nic: queues with stats" \
            "$(jq '[.queues.rx[], .queues.tx[] | select(.stats != null)] | length' "/tmp/qs-$nic.json")" 0
        "$NT_BIN" nics "$nic" --root / --json > "/tmp/qs-$nic.cli" 2>&1 || bad "nettune nics $nic --json failed"
        expect_eq "$nic: nettune nics --json: no counters, the same reason" \
            "$(jq -c '[.queue_stats_source, .queue_stats_reason, ([.queues.rx[], .queues.tx[] | select(.stats != null)] | length)]' "/tmp/qs-$nic.cli")" \
            "$(jq -c '[null, .queue_stats_reason, 0]' "/tmp/qs-$nic.json")"
    done
    finish "per-queue statistics on $KVER: not available, said so ($(jq -r .queue_stats_reason "/tmp/qs-$N1.json"))"
fi

# 7.x, the node-1 NIC: echoes out of TX queue 0, replies into RX queue 0.
snap n1a "$N1"
expect_eq "$N1: queue_stats_source" "$(jq -r .queue_stats_source "/tmp/qs-n1a.json")" netlink
judge n1a
out=$(ping -I "$N1" -c 20 -i 0.05 -W 1 -w 3 -q 10.0.2.2 2>&1)
sent=$(echo "$out" | awk '/packets transmitted/ {print $1}')
recv=$(echo "$out" | awk '/packets transmitted/ {print $4}')
echo "$N1: ping 10.0.2.2: ${sent:-?} sent, ${recv:-?} received"
[ "${recv:-0}" -ge 1 ] || bad "$N1: no reply from 10.0.2.2: $out"
snap n1b "$N1"
judge n1b
dtx=$(($(qs n1b tx 0) - $(qs n1a tx 0)))
drx=$(($(qs n1b rx 0) - $(qs n1a rx 0)))
echo "$N1: queue 0 rose by tx $dtx, rx $drx"
[ "$dtx" -ge "${sent:-1}" ] && ok "$N1: TX queue 0 rose by $dtx >= $sent sent" || bad "$N1: TX queue 0 rose by $dtx < $sent sent"
[ "$drx" -ge "${recv:-1}" ] && ok "$N1: RX queue 0 rose by $drx >= $recv received" || bad "$N1: RX queue 0 rose by $drx < $recv received"
"$NT_BIN" nics "$N1" --root / --json > /tmp/qs-n1.cli 2>&1 || bad "nettune nics $N1 --json failed"
expect_eq "nettune nics $N1 --json: queue_stats_source" "$(jq -r .queue_stats_source /tmp/qs-n1.cli)" netlink
c=$(jq -r '.queues.tx[] | select(.queue == 0) | .stats.tx_packets' /tmp/qs-n1.cli)
[ "$c" -ge "$(qs n1b tx 0)" ] && ok "nettune nics --json: TX queue 0 $c >= the API's earlier $(qs n1b tx 0)" ||
    bad "nettune nics --json: TX queue 0 $c < the API's earlier $(qs n1b tx 0)"

# 7.x, the RSS NIC: one TX queue chosen by XPS for a pinned sender.
if [ -z "$RSS" ]; then
    echo "note: no RSS NIC (${NT_LAB_RSS_WHY:-not given}): one TX queue of several not shown"
    finish "per-queue statistics on $KVER: $N1 queue 0 rose tx $dtx rx $drx"
fi
NTX=$(ls -d "/sys/class/net/$RSS/queues/tx-"* | wc -l)
[ "$NTX" -ge 2 ] || { bad "$RSS has $NTX TX queue(s)"; finish "qstats"; }
K=$((NTX - 1))
CPU=$(cpulist_expand "$(cat /sys/devices/system/cpu/online)" | tail -n 1)
ip link show "$RSS" | grep -q '[<,]UP[,>]' && RSS_WAS_UP=1
if [ -e "/proc/sys/net/ipv6/conf/$RSS/disable_ipv6" ]; then
    RSS_V6=$(cat "/proc/sys/net/ipv6/conf/$RSS/disable_ipv6")
    echo 1 > "/proc/sys/net/ipv6/conf/$RSS/disable_ipv6"
fi
for f in "/sys/class/net/$RSS/queues/tx-"*/xps_cpus; do
    xps_saved[$f]=$(cat "$f")
    echo 0 > "$f" || bad "cannot clear $f"
done
printf '%x\n' $((1 << CPU)) > "/sys/class/net/$RSS/queues/tx-$K/xps_cpus" || bad "cannot map CPU $CPU to tx-$K"
ip link set "$RSS" up
ip addr add 10.0.2.16/32 dev "$RSS"
ip route add 10.0.2.2/32 dev "$RSS" src 10.0.2.16 || bad "cannot route 10.0.2.2 through $RSS"
ip neigh replace 10.0.2.2 lladdr 52:55:0a:00:02:02 dev "$RSS" nud permanent || bad "no neighbour on $RSS"
echo "$RSS: $NTX TX queues, XPS: CPU $CPU -> tx-$K only"
snap ra "$RSS"
expect_eq "$RSS: queue_stats_source" "$(jq -r .queue_stats_source /tmp/qs-ra.json)" netlink
out=$(taskset -c "$CPU" ping -I "$RSS" -c 20 -i 0.05 -W 1 -w 2 -q 10.0.2.2 2>&1)
sent=$(echo "$out" | awk '/packets transmitted/ {print $1}')
echo "$RSS: ping 10.0.2.2 on CPU $CPU: ${sent:-?} sent (nothing answers on its tap)"
[ "${sent:-0}" -ge 1 ] || bad "$RSS: ping sent nothing: $out"
snap rb "$RSS"
judge rb
deltas= kd=
# Each queue's tx_packets, one jq a reading.
read -ra before <<< "$(jq -r '[.queues.tx | sort_by(.queue)[] | .stats.tx_packets] | join(" ")' /tmp/qs-ra.json)"
read -ra after <<< "$(jq -r '[.queues.tx | sort_by(.queue)[] | .stats.tx_packets] | join(" ")' /tmp/qs-rb.json)"
for q in $(seq 0 $((NTX - 1))); do
    d=$((${after[$q]:-0} - ${before[$q]:-0}))
    deltas+="tx-$q +$d "
    a=$(kicks ra "$q"); b=$(kicks rb "$q")
    [ -n "$a" ] && [ -n "$b" ] && kd+="$q:$((b - a)) "
    if [ "$q" = "$K" ]; then
        [ "$d" -ge "$sent" ] && ok "$RSS: TX queue $q rose by $d >= $sent sent" || bad "$RSS: TX queue $q rose by $d < $sent sent"
    else
        [ $((d * 10)) -le "$sent" ] && ok "$RSS: TX queue $q rose by $d (at most a tenth of $sent)" ||
            bad "$RSS: TX queue $q rose by $d, not much less than $sent"
    fi
done
echo "$RSS: $deltas; the driver's kicks (queue:rise) ${kd:-none in ethtool -S}"
if [ -n "$kd" ]; then
    # The driver's own per-queue counter agrees on the queue: the kicks
    # rose on tx-K and far less on every other.
    kk=$(echo "$kd" | tr ' ' '\n' | awk -F: -v k="$K" '$1 == k {print $2}')
    ko=$(echo "$kd" | tr ' ' '\n' | awk -F: -v k="$K" 'NF == 2 && $1 != k && $2 > m {m = $2} END {print m + 0}')
    [ "${kk:-0}" -ge 1 ] && [ $((ko * 10)) -le "$kk" ] && ok "ethtool -S: tx${K}_kicks rose by $kk, other queues' by at most $ko" ||
        bad "ethtool -S kicks do not single out tx-$K: $kd"
else
    echo "note: ethtool -S names no tx{N}_kicks on $KVER"
fi
"$NT_BIN" nics "$RSS" --root / --json > /tmp/qs-r.cli 2>&1 || bad "nettune nics $RSS --json failed"
c=$(jq -r --argjson k "$K" '.queues.tx[] | select(.queue == $k) | .stats.tx_packets' /tmp/qs-r.cli)
[ "$c" -ge "$(qs rb tx "$K")" ] && ok "nettune nics --json: TX queue $K $c >= the API's earlier $(qs rb tx "$K")" ||
    bad "nettune nics --json: TX queue $K $c < the API's earlier $(qs rb tx "$K")"
finish "per-queue statistics on $KVER: $N1 queue 0 +$dtx tx/+$drx rx for $recv replies; $RSS ${deltas% }"
