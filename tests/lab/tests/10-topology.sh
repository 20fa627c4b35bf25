#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# nettune topology on the live guest: every virtio NIC on the NUMA node qemu
# placed it on (pcie.0: none; expander bridges: nodes 1 and 3), the four
# nodes with their CPUs, and the same placement as hwloc's lstopo finds.
. /lab/lib.bash

topo=/tmp/topology.json
"$NT_BIN" topology --json > "$topo" 2>/tmp/topology.err ||
    { cat /tmp/topology.err; echo "nettune topology --json failed"; exit 1; }
jq -e . "$topo" >/dev/null || { echo "nettune topology --json is not JSON"; exit 1; }

# jq costs ~0.4 s a run under TCG: read each part of the document once.
nodes=$(jq -r '"\(.numa_nodes | length)", (.numa_nodes[] | "\(.id)=\(.cpus)")' "$topo")
expect_eq "numa_nodes count" "$(head -n1 <<< "$nodes")" 4
for n in 0 1 2 3; do
    expect_eq "node $n cpus" "$(sed -n "s/^$n=//p" <<< "$nodes")" "$((2 * n))-$((2 * n + 1))"
    # The same fact from the kernel, so the expectation is not only ours.
    expect_eq "node $n cpulist in sysfs" "$(cat /sys/devices/system/node/node$n/cpulist)" "$((2 * n))-$((2 * n + 1))"
done

# hwloc: the NUMA nodes whose CPUs the object lstopo attaches a PCI device to
# covers, read from the XML (the nearest enclosing object with a nodeset).
lstopo-no-graphics --of xml > /tmp/lstopo.xml 2>/tmp/lstopo.err ||
    { cat /tmp/lstopo.err; bad "lstopo-no-graphics --of xml failed"; }
lstopo_nodeset() {   # lstopo_nodeset PCI-ADDRESS -> hex nodeset
    awk -v bus="$1" '
        /<object / {
            depth++; ns[depth] = ""
            if (match($0, / nodeset="[^"]*"/)) ns[depth] = substr($0, RSTART + 10, RLENGTH - 11)
            if (index($0, "pci_busid=\"" bus "\"")) {
                for (d = depth; d > 0; d--) if (ns[d] != "") { print ns[d]; exit }
            }
            if ($0 ~ /\/>[[:space:]]*$/) depth--
        }
        /<\/object>/ { depth-- }' /tmp/lstopo.xml
}
# A hex nodeset to nettune's convention: one node -> its id, all four -> -1
# (the device is not local to any one node).
nodeset_to_node() {
    local v=$(( $1 & 0xf )) n found=-2 count=0
    for n in 0 1 2 3; do
        if (( (v >> n) & 1 )); then found=$n; count=$((count + 1)); fi
    done
    if [ $count = 1 ]; then echo $found; elif [ $count = 4 ]; then echo -1; else echo "?$1"; fi
}
hwloc_calc_node() {   # via hwloc-calc as a second reading of hwloc
    local l
    l=$(hwloc-calc --input /tmp/lstopo.xml "pci=$1" --intersect NUMAnode 2>/dev/null) || { echo "error"; return; }
    case $l in 0,1,2,3) echo -1 ;; *) echo "$l" ;; esac
}

for mac in $MAC_N0 $MAC_N1 $MAC_N3; do
    want=${NODE_OF_MAC[$mac]}
    ifc=$(nic_by_mac "$mac") || { bad "no net device with MAC $mac"; continue; }
    pci=$(pci_of "$ifc")
    echo "-- $ifc ($mac) at $pci, qemu placed it on node $want"
    expect_eq "$ifc sysfs numa_node" "$(cat /sys/bus/pci/devices/$pci/numa_node)" "$want"
    nic=$(jq -r --arg n "$ifc" '.nics[] | select(.name == $n) |
        "mac=\(.mac)", "pci=\(.pci_address)", "node=\(.numa_node)", "source=\(.numa_node_source)",
        "local_cpus=\(.local_cpus)",
        "rings=\(.rings | if . == null then null else {rx, rx_max, tx, tx_max} end | tojson)",
        "irqs=\([.irqs[].irq] | sort | map(tostring) | join(" "))",
        (.irqs[] | "aff.\(.irq)=\(.affinity)")' "$topo")
    [ -n "$nic" ] || { bad "nettune topology has no NIC $ifc"; continue; }
    f() { sed -n "s/^$1=//p" <<< "$nic"; }
    expect_eq "$ifc mac" "$(f mac)" "$mac"
    expect_eq "$ifc pci_address" "$(f pci)" "$pci"
    expect_eq "$ifc numa_node (nettune)" "$(f node)" "$want"
    echo "   numa_node_source: $(f source)"
    expect_eq "$ifc local_cpus (nettune vs sysfs)" "$(f local_cpus)" \
        "$(cat /sys/bus/pci/devices/$pci/local_cpulist)"
    ns=$(lstopo_nodeset "$pci")
    if [ -z "$ns" ]; then
        bad "lstopo shows no PCI device $pci"
    else
        expect_eq "$ifc node per lstopo (nodeset $ns)" "$(nodeset_to_node "$ns")" "$want"
        expect_eq "$ifc node: nettune agrees with lstopo" "$(f node)" "$(nodeset_to_node "$ns")"
    fi
    expect_eq "$ifc node per hwloc-calc" "$(hwloc_calc_node "$pci")" "$want"
    # lstopo also names the OS device under the PCI function.
    grep -q "name=\"$ifc\"" /tmp/lstopo.xml && ok "lstopo names $ifc" || bad "lstopo does not name $ifc"

    # Rings: rx_queue_size=1024 on the qemu command line; TX is capped at 256 by qemu.
    expect_eq "$ifc rings" "$(f rings)" '{"rx":1024,"rx_max":1024,"tx":256,"tx_max":256}'
    expect_eq "$ifc rings agree with ethtool -g" \
        "$(jq -r '"\(.rx) \(.rx_max) \(.tx) \(.tx_max)"' <<< "$(f rings)")" \
        "$(ring_cur "$ifc" RX) $(ring_max "$ifc" RX) $(ring_cur "$ifc" TX) $(ring_max "$ifc" TX)"

    # IRQs: the MSI-X vectors of the PCI function (config, input.0, output.0).
    expect_eq "$ifc irqs (nettune vs msi_irqs)" "$(f irqs)" "$(pci_irqs "$pci" | paste -sd' ')"
    for irq in $(pci_irqs "$pci"); do
        expect_eq "$ifc irq $irq affinity" "$(f "aff.$irq")" "$(irq_aff "$irq")"
    done
done

finish "topology matches qemu's placement and lstopo"
