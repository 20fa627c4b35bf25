#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A ring size the driver refuses at apply time: virtio-net accepts only powers
# of two and answers 300 with ENOMEM, although 300 is within the maximum (so
# validation lets it through). Together with IRQ and sysctl changes, the
# transaction must end rolled_back with the kernel's error and leave every
# value exactly as it was.
. /lab/lib.bash

N1=$(nic_by_mac "$MAC_N1") || { echo "no NIC $MAC_N1"; exit 1; }
N1_PCI=$(pci_of "$N1")
ip link set "$N1" up

# The lab fact first: the driver refuses 300 by itself.
err=$(ethtool -G "$N1" rx 300 2>&1); rc=$?
if [ $rc != 0 ]; then ok "ethtool -G rx 300 refused: $err"; else bad "ethtool -G $N1 rx 300 was accepted"; fi
[ $rc = 0 ] && ethtool -G "$N1" rx 1024

# Put the NIC's IRQs back on all CPUs (their boot state) so the `local`
# policy has real work to do before the ring step fails, and the rollback has
# applied steps to undo.
for irq in $(pci_irqs "$N1_PCI"); do echo 0-7 > "/proc/irq/$irq/smp_affinity_list"; done

want_rmax=12582912
[ "$(sysctl_get net.core.rmem_max)" = "$want_rmax" ] && want_rmax=6291456
declare -A before=()
before[rx]=$(ring_cur "$N1" RX); before[tx]=$(ring_cur "$N1" TX)
before[rmem_max]=$(sysctl_get net.core.rmem_max)
before[wmem_max]=$(sysctl_get net.core.wmem_max)
for irq in $(pci_irqs "$N1_PCI"); do before[irq.$irq]=$(irq_aff "$irq"); done

nt_start || exit 1
api POST /v1/transactions "$(jq -nc --arg n "$N1" --arg r "$want_rmax" '{profile: {name: "lab-ring-reject",
    irq_affinity: [{interface: $n, policy: "local"}],
    rings: [{interface: $n, rx: 300}],
    sysctl: {"net.core.rmem_max": $r, "net.core.wmem_max": $r}}}')"
echo "apply: HTTP $API_CODE"
jq -c '{id, status, error, failed_step, steps: [.steps[]? | {kind, target, before, after, result, error}]}' \
    <<< "$API_BODY" 2>/dev/null || echo "$API_BODY"
expect_eq "apply HTTP status" "$API_CODE" 201
expect_eq "transaction status" "$(jq -r .status <<< "$API_BODY" 2>/dev/null)" rolled_back
error=$(jq -r '.error // ""' <<< "$API_BODY" 2>/dev/null)
if [[ ${error,,} == *"cannot allocate memory"* || $error == *ENOMEM* ]]; then
    ok "the kernel's error is carried: $error"
else
    bad "transaction error does not carry the driver's ENOMEM: '$error'"
fi
fk=$(jq -r '.failed_step as $f | .steps[]? | select(.index == $f) | .kind' <<< "$API_BODY" 2>/dev/null)
case $fk in *ring*) ok "failed step is the ring step ($fk)" ;; *) bad "failed step kind '$fk', want the ring step" ;; esac

nrb=$(jq '[.steps[]? | select(.result == "rolled_back")] | length' <<< "$API_BODY" 2>/dev/null)
if [ "${nrb:-0}" -gt 0 ]; then ok "$nrb applied step(s) were rolled back"
else bad "no step was applied and rolled back; the undo path was not exercised"; fi

expect_eq "$N1 RX ring" "$(ring_cur "$N1" RX)" "${before[rx]}"
expect_eq "$N1 TX ring" "$(ring_cur "$N1" TX)" "${before[tx]}"
expect_eq "net.core.rmem_max restored" "$(sysctl_get net.core.rmem_max)" "${before[rmem_max]}"
expect_eq "net.core.wmem_max restored" "$(sysctl_get net.core.wmem_max)" "${before[wmem_max]}"
for irq in $(pci_irqs "$N1_PCI"); do
    expect_eq "irq $irq affinity restored" "$(irq_aff "$irq")" "${before[irq.$irq]}"
done
finish "a ring the driver refuses rolls the whole transaction back"
