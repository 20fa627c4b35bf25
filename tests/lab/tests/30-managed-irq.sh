#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The virtio-blk disk's request IRQs are kernel-managed: nobody can move them.
# Check the lab fact itself (a write fails with EIO, and with EPERM from 6.12
# on), that nettune lists those
# IRQs (topology/`GET /v1/irqs`) without claiming they are movable, and that a
# `local` IRQ profile on a NIC still applies next to them.
. /lab/lib.bash

[ -e /sys/block/vda ] || { echo "no virtio-blk disk vda in the guest"; exit 1; }
blk_pci=$(basename "$(readlink -f /sys/block/vda/device/..)")
virtio=$(basename "$(readlink -f /sys/block/vda/device)")
echo "vda: $virtio at $blk_pci"
# The request vectors by name (virtioN-req.Q), from the kernel.
req_irqs=$(awk -v v="$virtio-req." 'index($NF, v) == 1 {sub(":", "", $1); print $1}' /proc/interrupts | sort -n)
[ -n "$req_irqs" ] || { echo "no $virtio-req.* IRQs in /proc/interrupts"; exit 1; }
expect_eq "req IRQs (4 queues)" "$(echo "$req_irqs" | wc -l)" 4

# The lab fact: writing their affinity fails and changes nothing: EIO up to
# 6.11, EPERM from 6.12 (the kernel's check moved before the write).
kmaj=$(uname -r | cut -d. -f1) kmin=$(uname -r | cut -d. -f2)
if [ "$kmaj" -gt 6 ] || { [ "$kmaj" = 6 ] && [ "$kmin" -ge 12 ]; }; then
    want_err="Operation not permitted" want_name=EPERM
else
    want_err="Input/output error" want_name=EIO
fi
for irq in $req_irqs; do
    old=$(irq_aff "$irq")
    err=$( { echo 0 > "/proc/irq/$irq/smp_affinity_list"; } 2>&1 )
    rc=$?
    if [ $rc != 0 ] && [[ $err == *"$want_err"* ]]; then
        ok "irq $irq: write refused with $want_name ($(uname -r))"
    else
        bad "irq $irq: write rc=$rc '$err' (want $want_name on $(uname -r))"
    fi
    expect_eq "irq $irq affinity unchanged" "$(irq_aff "$irq")" "$old"
    # Where the kernel says so (debugfs, mounted by /init): the managed flag.
    f=/sys/kernel/debug/irq/irqs/$irq
    [ -r "$f" ] && echo "debugfs irq $irq: $(grep -o 'IRQD_AFFINITY_MANAGED' "$f" || echo 'no IRQD_AFFINITY_MANAGED')"
done

# nettune's view: every req IRQ is listed; if it states `managed`, true.
"$NT_BIN" irqs --json > /tmp/irqs.json 2>/tmp/irqs.err || { cat /tmp/irqs.err; bad "nettune irqs failed"; }
nt_start || exit 1
api GET /v1/irqs
expect_eq "GET /v1/irqs" "$API_CODE" 200
for irq in $req_irqs; do
    for src in cli api; do
        if [ $src = cli ]; then doc=$(cat /tmp/irqs.json); else doc=$API_BODY; fi
        e=$(jq -r --argjson i "$irq" '.irqs[] | select(.irq == $i) | "\(.name) \(.managed)"' <<< "$doc" 2>/dev/null)
        if [ -z "$e" ]; then bad "$src: irq $irq missing"; continue; fi
        expect_eq "$src: irq $irq name" "${e% *}" \
            "$(awk -v i="$irq:" '$1 == i {print $NF}' /proc/interrupts)"
        m=${e##* }
        case $m in
            true) ok "$src: irq $irq managed=true" ;;
            null) echo "note: $src: irq $irq managed is null (not determined)" ;;
            *) bad "$src: irq $irq managed=$m, but the kernel refuses to move it" ;;
        esac
    done
done

# A NIC profile with `local` still applies while the disk's IRQs stay put.
N3=$(nic_by_mac "$MAC_N3") || { echo "no NIC $MAC_N3"; exit 1; }
N3_PCI=$(pci_of "$N3")
N3_CPUS=$(cat /sys/devices/system/node/node3/cpulist)
declare -A before=()
for irq in $(pci_irqs "$N3_PCI") $req_irqs; do before[$irq]=$(irq_aff "$irq"); done
api POST /v1/transactions "$(jq -nc --arg n "$N3" '{profile: {name: "lab-managed",
    irq_affinity: [{interface: $n, policy: "local"}]}}')"
echo "apply: HTTP $API_CODE $(jq -c '{id, status, error, warnings}' <<< "$API_BODY" 2>/dev/null)"
expect_eq "apply HTTP status" "$API_CODE" 201
expect_eq "transaction status" "$(jq -r .status <<< "$API_BODY" 2>/dev/null)" applied
id=$(jq -r '.id // empty' <<< "$API_BODY" 2>/dev/null)
for irq in $(pci_irqs "$N3_PCI"); do
    name=$(awk -v i="$irq:" '$1 == i {print $NF}' /proc/interrupts)
    case $name in *-input.*|*-output.*)
        aff=$(irq_aff "$irq")
        if cpulist_within "$aff" "$N3_CPUS"; then ok "irq $irq ($name) now $aff, on node 3"
        else bad "irq $irq ($name) affinity $aff, not within node 3 ($N3_CPUS)"; fi ;;
    esac
done
for irq in $req_irqs; do expect_eq "disk irq $irq untouched" "$(irq_aff "$irq")" "${before[$irq]}"; done
if [ -n "$id" ]; then
    api POST "/v1/transactions/$id/rollback" '{}'
    expect_eq "rollback HTTP status" "$API_CODE" 201
    for irq in $(pci_irqs "$N3_PCI"); do
        expect_eq "irq $irq restored" "$(irq_aff "$irq")" "${before[$irq]}"
    done
fi
finish "managed disk IRQs refuse moves ($want_name), are listed, and a NIC profile applies beside them"
