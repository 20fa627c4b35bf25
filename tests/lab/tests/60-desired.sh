#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The desired state on the guest's real kernel, with a check interval so long
# (600 s) that only kernel events can make the agent look in time:
#  - `ethtool -G` on a netdevsim port behind the agent's back: the ethtool
#    netlink notification makes it repair within seconds (reason drift), and
#    the notification is reported;
#  - the node-1 virtio NIC's driver unbound and bound again (its IRQs are made
#    anew with the default affinity): the link messages make it re-place them
#    on node 1 within seconds (reason link-up);
#  - a "reboot" (values reset, a fresh agent on the same state directory)
#    re-applies at start (reason boot);
#  - a program that keeps moving one of the NIC's IRQs away (as an unbanned
#    irqbalance does) ends `contested` after a few repairs, not in a loop.
# Every repair is a journalled transaction, checked with ethtool and /proc.
. /lab/lib.bash

[ -e /sys/bus/netdevsim/new_device ] || modprobe netdevsim || skip "netdevsim module cannot be loaded"
echo "60 1 2" > /sys/bus/netdevsim/new_device || skip "cannot create netdevsim device 60"
for _ in $(seq 50); do
    port=$(ls /sys/bus/netdevsim/devices/netdevsim60/net/ 2>/dev/null | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { bad "netdevsim60 made no port"; finish "desired"; }
ethtool -G "$port" rx 512 tx 512 || { bad "ethtool -G $port failed"; finish "desired"; }
N1=$(nic_by_mac "$MAC_N1") || { bad "no NIC $MAC_N1"; finish "desired"; }
N1_PCI=$(pci_of "$N1")
N1_CPUS=$(cat /sys/devices/system/node/node1/cpulist)
ALL_CPUS=$(cat /sys/devices/system/cpu/online)
ip link set "$N1" up
echo "netdevsim port $port, node-1 NIC $N1 ($N1_PCI, node 1 CPUs $N1_CPUS)"

STATE=$(mktemp -d /tmp/nt-desired.XXXXXX)
FIGHTER=
cleanup() {
    [ -n "$FIGHTER" ] && kill "$FIGHTER" 2>/dev/null
    nt_stop
    echo "60" > /sys/bus/netdevsim/del_device 2>/dev/null || true
}
trap cleanup EXIT
# agent EXTRA...: the agent on the live guest, state kept in $STATE across starts.
agent() { nt_agent "$STATE" "$@"; }
ring_ok() { [ "$(ring_cur "$port" RX)" = 2048 ]; }
n1_irqs() { pci_irqs "$(pci_of "$(nic_by_mac "$MAC_N1")")"; }
irqs_local() {
    local irq
    for irq in $(n1_irqs); do cpulist_within "$(irq_aff "$irq")" "$N1_CPUS" || return 1; done
    [ -n "$(n1_irqs)" ]
}
newest() { api GET "/v1/transactions?limit=1"; jq -r ".transactions[0].$1" <<< "$API_BODY"; }

agent --drift-policy repair --drift-interval 600 || finish "agent did not start"
profile=$(jq -nc --arg p "$port" --arg n "$N1" '{name: "lab-hold",
    rings: [{interface: $p, rx: 2048}], irq_affinity: [{interface: $n, policy: "local"}]}')
api PUT /v1/desired "$profile"
expect_eq "PUT /v1/desired" "$API_CODE" 200
wait_for 10 ring_ok && ok "desired rings applied" || bad "rings $(ring_cur "$port" RX), want 2048"
wait_for 10 irqs_local && ok "desired IRQ placement applied" || bad "IRQs not on node 1"
api GET /v1/drift
expect_eq "kernel events" "$(jq -r .events <<< "$API_BODY")" "link messages and ethtool notifications"

# ethtool -G behind the agent's back: repaired by the notification.
sleep 2
ethtool -G "$port" rx 256
wait_for 10 ring_ok && ok "rings repaired after ethtool -G" || bad "rings still $(ring_cur "$port" RX)"
sleep 0.5
expect_eq "repair reason" "$(newest reason)" drift
expect_eq "repair status" "$(newest status)" applied
api GET /v1/drift
expect_eq "last ethtool notification" "$(jq -r '.last_ethtool_event | "\(.what) \(.interface)"' <<< "$API_BODY")" "rings $port"

# The virtio driver unbound and bound again: IRQs made anew, re-placed.
before_irqs=$(n1_irqs | tr '\n' ' ')
echo "$N1_PCI" > /sys/bus/pci/drivers/virtio-pci/unbind || bad "unbind $N1_PCI"
sleep 1
echo "$N1_PCI" > /sys/bus/pci/drivers/virtio-pci/bind || bad "bind $N1_PCI"
echo "IRQs before $before_irqs, after $(n1_irqs | tr '\n' ' '); affinity right after the bind: $(for i in $(n1_irqs); do printf '%s=%s ' "$i" "$(irq_aff "$i")"; done)"
wait_for 15 irqs_local && ok "IRQs re-placed on node 1 after the rebind" ||
    bad "IRQs after rebind: $(for i in $(n1_irqs); do printf '%s=%s ' "$i" "$(irq_aff "$i")"; done)"
sleep 0.5
expect_eq "rebind repair reason" "$(newest reason)" link-up
expect_eq "rebind repair status" "$(newest status)" applied

# A "reboot": values reset, a fresh agent on the same state.
nt_stop
ethtool -G "$port" rx 512
for irq in $(n1_irqs); do echo "$ALL_CPUS" > "/proc/irq/$irq/smp_affinity_list"; done
agent --drift-policy repair --drift-interval 600 || finish "agent did not start again"
wait_for 10 ring_ok && ok "rings re-applied at start" || bad "rings $(ring_cur "$port" RX) after restart"
wait_for 10 irqs_local && ok "IRQs re-placed at start" || bad "IRQs not on node 1 after restart"
sleep 0.5
expect_eq "start reason" "$(newest reason)" boot

# Something keeps moving one IRQ off node 1 (what an unbanned irqbalance
# does): contested after a few repairs, then left alone.
agent --drift-policy repair --drift-interval 1 || finish "agent did not start a third time"
victim=$(n1_irqs | head -n 1)
api GET "/v1/transactions?limit=1"; before_total=$(jq .total <<< "$API_BODY")
( while :; do echo 0 > "/proc/irq/$victim/smp_affinity_list" 2>/dev/null; sleep 0.3; done ) &
FIGHTER=$!
contested() {
    api GET /v1/drift
    [ "$(jq -r --arg t "$victim" '.targets[] | select(.kind == "irq_affinity" and .target == $t) | .state' <<< "$API_BODY")" = contested ]
}
wait_for 20 contested && ok "IRQ $victim contested" || bad "IRQ $victim never contested: $API_BODY"
echo "culprit: $(jq -r --arg t "$victim" '.targets[] | select(.target == $t) | .culprit' <<< "$API_BODY")"
jq -e --arg t "$victim" '.targets[] | select(.target == $t) | .culprit | test("irqbalance|smp_affinity")' <<< "$API_BODY" >/dev/null &&
    ok "a culprit is named" || bad "no culprit"
api GET "/v1/transactions?limit=1"; t1=$(jq .total <<< "$API_BODY")
sleep 4
api GET "/v1/transactions?limit=1"; t2=$(jq .total <<< "$API_BODY")
expect_eq "no repairs once contested" "$t2" "$t1"
[ $((t1 - before_total)) -le 4 ] && ok "$((t1 - before_total)) repairs before contested" || bad "$((t1 - before_total)) repairs"
api GET /v1/diagnostics
jq -e --arg t "$victim" '.findings[] | select(.id == "drift" and .subject == $t)' <<< "$API_BODY" >/dev/null &&
    ok "drift finding in diagnostics" || bad "no drift finding"
kill "$FIGHTER"; FIGHTER=
nt_stop
finish "rings and IRQs held by events (ethtool -G, driver rebind), re-applied at start, contested when fought"
