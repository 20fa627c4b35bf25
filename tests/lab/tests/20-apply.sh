#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Apply a profile through the agent's transaction API on the live guest kernel
# and roll it back: netdevsim rings, a virtio RX ring, a bond's
# xmit_hash_policy, `local` IRQ affinity on the node-1 NIC and TCP sysctls.
# Every value is checked with the kernel's own tools (ethtool, sysfs, /proc)
# after the apply and again after the rollback, against a snapshot taken first.
. /lab/lib.bash

# netdevsim: device 1 with 2 ports and 4 queues (rings max 4096, start at 0).
[ -e /sys/bus/netdevsim/new_device ] || modprobe netdevsim || skip "netdevsim module cannot be loaded"
[ -e /sys/bus/netdevsim/devices/netdevsim1 ] || echo "1 2 4" > /sys/bus/netdevsim/new_device ||
    { echo "cannot create netdevsim ports"; exit 1; }
for _ in $(seq 1 50); do
    mapfile -t ports < <(ls /sys/bus/netdevsim/devices/netdevsim1/net 2>/dev/null | sort)
    [ ${#ports[@]} -ge 2 ] && break
    sleep 0.1
done
[ ${#ports[@]} -ge 2 ] || { echo "netdevsim ports did not appear"; exit 1; }
P1=${ports[0]} P2=${ports[1]}
# netdevsim's rings start at 0, which no real NIC reports; start from a size
# a driver would have, so the rollback restores a real value.
for p in "$P1" "$P2"; do ethtool -G "$p" rx 256 tx 256 || { echo "ethtool -G $p failed"; exit 1; }; done
echo "netdevsim ports: $P1 $P2 (rings max $(ring_max "$P1" RX)/$(ring_max "$P1" TX))"

# bonding with max_bonds=0, or it makes bond0 itself and `ip link add` fails.
modprobe bonding max_bonds=0 || { echo "modprobe bonding failed"; exit 1; }
ip link add bond0 type bond mode balance-xor xmit_hash_policy layer2 || { echo "cannot create bond0"; exit 1; }
for p in "$P1" "$P2"; do
    ip link set "$p" down
    ip link set "$p" master bond0 || { echo "cannot enslave $p"; exit 1; }
done
ip link set bond0 up

N1=$(nic_by_mac "$MAC_N1") || { echo "no NIC $MAC_N1"; exit 1; }
N3=$(nic_by_mac "$MAC_N3") || { echo "no NIC $MAC_N3"; exit 1; }
N1_PCI=$(pci_of "$N1")
N1_CPUS=$(cat /sys/devices/system/node/node1/cpulist)
ip link set "$N1" up; ip link set "$N3" up

# nettune's model of what was just built: the bond and the netdevsim ports.
"$NT_BIN" topology --json > /tmp/topo20.json || { echo "nettune topology --json failed"; exit 1; }
expect_eq "topology bond0" \
    "$(jq -c '.bonds[] | select(.name == "bond0") | {mode, xmit_hash_policy, slaves: (.slaves | sort)}' /tmp/topo20.json)" \
    "$(jq -nc --arg a "$P1" --arg b "$P2" '{mode: "balance-xor", xmit_hash_policy: "layer2", slaves: ([$a, $b] | sort)}')"
expect_eq "topology $P1 rings" \
    "$(jq -c --arg n "$P1" '.nics[] | select(.name == $n) | .rings | {rx, rx_max, tx, tx_max}' /tmp/topo20.json)" \
    "{\"rx\":$(ring_cur "$P1" RX),\"rx_max\":$(ring_max "$P1" RX),\"tx\":$(ring_cur "$P1" TX),\"tx_max\":$(ring_max "$P1" TX)}"

# Target values, each different from what the guest has now.
want_rmem="8192 262144 16777216"
[ "$(sysctl_get net.ipv4.tcp_rmem)" = "$want_rmem" ] && want_rmem="4096 131072 8388608"
want_rmax=16777216
[ "$(sysctl_get net.core.rmem_max)" = "$want_rmax" ] && want_rmax=8388608

# The snapshot: every value the profile may touch, as the kernel reports it.
declare -A before=()
snapshot() {   # snapshot ARRAY-NAME
    local -n s=$1
    local p irq
    for p in "$P1" "$P2"; do s["ring.$p.rx"]=$(ring_cur "$p" RX); s["ring.$p.tx"]=$(ring_cur "$p" TX); done
    s["ring.$N3.rx"]=$(ring_cur "$N3" RX); s["ring.$N3.tx"]=$(ring_cur "$N3" TX)
    s["bond0.xmit_hash_policy"]=$(cat /sys/class/net/bond0/bonding/xmit_hash_policy)
    s["bond0.slaves"]=$(cat /sys/class/net/bond0/bonding/slaves)
    for irq in $(pci_irqs "$N1_PCI"); do s["irq.$irq"]=$(irq_aff "$irq"); done
    s["sysctl.tcp_rmem"]=$(sysctl_get net.ipv4.tcp_rmem)
    s["sysctl.rmem_max"]=$(sysctl_get net.core.rmem_max)
}
snapshot before
for k in $(printf '%s\n' "${!before[@]}" | sort); do echo "before: $k = ${before[$k]}"; done

nt_start || exit 1

profile=$(jq -nc --arg p1 "$P1" --arg p2 "$P2" --arg n1 "$N1" --arg n3 "$N3" \
    --arg rmem "$want_rmem" --arg rmax "$want_rmax" '{profile: {
        name: "lab-apply", description: "VM lab: every kind of setting on a real kernel",
        irq_affinity: [{interface: $n1, policy: "local"}],
        rings: [{interface: $p1, rx: 2048, tx: 1024}, {interface: $p2, rx: 2048, tx: 1024},
                {interface: $n3, rx: 512}],
        bonds: [{interface: "bond0", xmit_hash_policy: "layer3+4"}],
        sysctl: {"net.ipv4.tcp_rmem": $rmem, "net.core.rmem_max": $rmax}}}')
api POST /v1/transactions "$profile"
echo "apply: HTTP $API_CODE"
echo "$API_BODY" | jq -c '{id, status, error, steps: [.steps[]? | {kind, target, before, after, result}]}' 2>/dev/null ||
    echo "$API_BODY"
expect_eq "apply HTTP status" "$API_CODE" 201
id=$(jq -r '.id // empty' <<< "$API_BODY" 2>/dev/null)
expect_eq "transaction status" "$(jq -r .status <<< "$API_BODY" 2>/dev/null)" applied
[ -n "$id" ] || { bad "no transaction id"; finish "apply failed"; }

# Verify with the kernel's own tools.
for p in "$P1" "$P2"; do
    expect_eq "$p RX ring (ethtool -g)" "$(ring_cur "$p" RX)" 2048
    expect_eq "$p TX ring (ethtool -g)" "$(ring_cur "$p" TX)" 1024
done
expect_eq "$N3 RX ring (ethtool -g)" "$(ring_cur "$N3" RX)" 512
expect_eq "$N3 TX ring untouched" "$(ring_cur "$N3" TX)" "${before[ring.$N3.tx]}"
expect_eq "bond0 xmit_hash_policy (sysfs)" "$(cat /sys/class/net/bond0/bonding/xmit_hash_policy)" "layer3+4 1"
expect_eq "bond0 slaves kept" "$(cat /sys/class/net/bond0/bonding/slaves)" "${before[bond0.slaves]}"
expect_eq "net.ipv4.tcp_rmem" "$(sysctl_get net.ipv4.tcp_rmem)" "$want_rmem"
expect_eq "net.core.rmem_max" "$(sysctl_get net.core.rmem_max)" "$want_rmax"
# `local` on the node-1 NIC: its queue IRQs each on one CPU of node 1. Which
# IRQs are the queues comes from /proc/interrupts names, not from nettune.
moved=0
for irq in $(pci_irqs "$N1_PCI"); do
    name=$(awk -v i="$irq:" '$1 == i {print $NF}' /proc/interrupts)
    aff=$(irq_aff "$irq")
    case $name in
        *-input.*|*-output.*)
            if cpulist_within "$aff" "$N1_CPUS" && [ "$(cpulist_expand "$aff" | wc -l)" = 1 ]; then
                ok "irq $irq ($name) on one CPU of node 1: $aff"; moved=$((moved + 1))
            else
                bad "irq $irq ($name) affinity $aff, want one CPU of $N1_CPUS"
            fi ;;
        *) echo "irq $irq ($name) affinity $aff" ;;
    esac
done
[ $moved -ge 2 ] || bad "expected the input and output IRQs of $N1 moved, got $moved"
# Every step the agent says it applied reads back as its "after" value.
while IFS=$'\t' read -r kind target after; do
    case $kind in
        irq_affinity) expect_eq "step irq_affinity $target read back" "$(irq_aff "$target")" "$after" ;;
    esac
done < <(jq -r '.steps[]? | select(.result == "applied") | [.kind, .target, .after] | @tsv' <<< "$API_BODY")

# Applying the same profile again would change nothing: the plan is empty
# once the live values read back as the profile asks (e.g. tcp_rmem, which
# the kernel prints with tabs).
api POST /v1/plan "$(jq -c .profile <<< "$profile")"
expect_eq "plan HTTP status" "$API_CODE" 200
expect_eq "plan of the applied profile (steps left)" \
    "$(jq -c '[.steps[]? | "\(.kind) \(.target): \(.before) -> \(.after)"]' <<< "$API_BODY" 2>/dev/null)" "[]"

# Roll back, as a new transaction, and check every value is as before.
api POST "/v1/transactions/$id/rollback" '{}'
echo "rollback: HTTP $API_CODE"
echo "$API_BODY" | jq -c '{id, status, rollback_of, error}' 2>/dev/null || echo "$API_BODY"
expect_eq "rollback HTTP status" "$API_CODE" 201
expect_eq "rollback transaction status" "$(jq -r .status <<< "$API_BODY" 2>/dev/null)" applied
expect_eq "rollback_of" "$(jq -r .rollback_of <<< "$API_BODY" 2>/dev/null)" "$id"
declare -A after_rb=()
snapshot after_rb
for k in $(printf '%s\n' "${!before[@]}" | sort); do
    expect_eq "after rollback: $k" "${after_rb[$k]}" "${before[$k]}"
done

api GET "/v1/transactions/$id"
expect_eq "GET /v1/transactions/$id" "$API_CODE" 200

finish "profile applied, verified with ethtool/sysfs/proc, rolled back to the snapshot"
