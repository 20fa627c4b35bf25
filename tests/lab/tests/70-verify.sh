#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The delivery check on the guest's real kernel: the node-1 virtio NIC's IRQs
# placed on one CPU of node 1 by a transaction with "confirm": "on-delivery",
# traffic made from inside the guest to the user-mode network's gateway
# (10.0.2.2; each TCP connect's answer is a received packet): the kernel's
# delivery confirms it; the receive IRQ's affinity changed behind the agent's
# back during a window says `elsewhere`; the node-3 NIC, left quiet, says
# `not observed`. Affinities are put back at the end.
. /lab/lib.bash

N1=$(nic_by_mac "$MAC_N1") || { bad "no NIC $MAC_N1"; finish "verify"; }
N3=$(nic_by_mac "$MAC_N3") || { bad "no NIC $MAC_N3"; finish "verify"; }
N1_CPUS=$(cat /sys/devices/system/node/node1/cpulist)
PLACE=$(cpulist_expand "$N1_CPUS" | tail -n 1)
OTHER=$(cpulist_expand "$N1_CPUS" | head -n 1)
[ "$PLACE" != "$OTHER" ] || skip "node 1 has one CPU: nowhere else to move the IRQ"
ip link set "$N1" up
ip link set "$N3" down # quiet: no traffic at all, not even IPv6 router solicitations
ip addr flush dev "$N1"
ip addr add 10.0.2.15/24 dev "$N1" || { bad "cannot address $N1"; finish "verify"; }
N1_VIRTIO=$(basename "$(readlink -f "/sys/class/net/$N1/device")")
RX_IRQ=$(awk -v v="$N1_VIRTIO-input.0" '$NF == v {sub(":", "", $1); print $1}' /proc/interrupts)
[ -n "$RX_IRQ" ] || { bad "no $N1_VIRTIO-input.0 IRQ"; finish "verify"; }
declare -A saved=()
for q in $(pci_irqs "$(pci_of "$N1")"); do saved[$q]=$(irq_aff "$q"); done
LOAD=
restore() {
    [ -n "$LOAD" ] && kill "$LOAD" 2>/dev/null
    for q in "${!saved[@]}"; do echo "${saved[$q]}" > "/proc/irq/$q/smp_affinity_list" 2>/dev/null; done
    nt_stop
}
nt_start || finish "verify"
trap restore EXIT
# Start with the NIC's IRQs away from CPU PLACE: an earlier guest script
# (60-desired places this NIC's IRQs on node 1) may have left them there,
# and a transaction with nothing to move places nothing to check.
for q in "${!saved[@]}"; do echo "$OTHER" > "/proc/irq/$q/smp_affinity_list" 2>/dev/null; done
echo "$N1 ($N1_VIRTIO, receive IRQ $RX_IRQ) placed on CPU $PLACE of node 1 ($N1_CPUS); $N3 quiet"

# traffic S: TCP connects to the gateway for S seconds, in the background.
traffic() {
    ( end=$((SECONDS + $1)); while [ $SECONDS -lt $end ]; do
        timeout 0.5 bash -c 'exec 3<>/dev/tcp/10.0.2.2/80' 2>/dev/null; sleep 0.05
    done ) &
    LOAD=$!
}

traffic 25
api POST /v1/transactions '{"profile": {"name": "lab-verify", "irq_affinity": [{"interface": "'"$N1"'", "cpus": "'"$PLACE"'"}]},
    "confirm_timeout_s": 30, "confirm": "on-delivery", "verify_window_ms": 2000}'
echo "$API_BODY" > /tmp/verify-txn.json
expect_eq "apply answered" "$API_CODE" 201
expect_eq "confirmed on delivery" "$(jq -r '[.status, .delivery.verdict, .delivery.confirmed] | join(" ")' /tmp/verify-txn.json)" \
    "applied delivered true"
expect_eq "receive IRQ $RX_IRQ placed" "$(irq_aff "$RX_IRQ")" "$PLACE"
echo "delivery: $(jq -c .delivery /tmp/verify-txn.json)"
echo "step $RX_IRQ: $(jq -r --arg t "$RX_IRQ" '.steps[] | select(.target == $t) | .observed' /tmp/verify-txn.json)"

# Behind the agent's back, 1 s into a 4 s window: the receive IRQ to another
# CPU of node 1.
curl -s -o /tmp/verify-v.json "$NT_URL/v1/verify?window_ms=4000" &
c=$!
sleep 1
echo "$OTHER" > "/proc/irq/$RX_IRQ/smp_affinity_list"
wait $c
echo "check: $(jq -c --argjson i "$RX_IRQ" '.irqs[] | select(.irq == $i) | {placed, affinity, affinity_end, counts, verdict}' /tmp/verify-v.json)"
expect_eq "moved behind the agent's back" \
    "$(jq -r --argjson i "$RX_IRQ" '.irqs[] | select(.irq == $i) | .verdict' /tmp/verify-v.json)" elsewhere
expect_eq "elsewhere on CPU $OTHER, outside the placement" \
    "$(jq -r --argjson i "$RX_IRQ" --argjson o "$OTHER" '.irqs[] | select(.irq == $i) | [.elsewhere[] | select(.cpu == $o) | .outside] | first // "none"' /tmp/verify-v.json)" placement
expect_eq "quiet $N3: every IRQ not observed" \
    "$(jq -r --arg n "$N3" '[.irqs[] | select(.nic == $n) | .verdict] | unique | join(",")' /tmp/verify-v.json)" "not observed"
finish "delivery check: delivered, elsewhere, not observed"
