#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks with plain shell tools that every fixture under $NT_FIXTURES is a
# coherent host, so a reader test failing on a fixture points at the reader,
# not at the tree:
#   - every sys/class/net entry is a symlink resolving inside the fixture
#     (bonding_masters is a file; KNOWN_DANGLING lists captured dangling ones),
#   - each generated host's NICs have the device/numa_node and local_cpulist
#     of the field reports (docs/field-reports.md#host-x460,
#     docs/field-reports.md#host-ceph, docs/field-reports.md#host-epyc7713),
#   - every numbered /proc/interrupts line has proc/irq/N/smp_affinity_list,
#     whose first CPU is the effective one,
#   - /proc/interrupts has one count column per online CPU.
# Then it breaks a copy of the EPYC host in four ways and requires each check to
# notice, so the test can fail.
set -u
FIX=${NT_FIXTURES:-$(cd "$(dirname "$0")/../fixtures" && pwd)}
[ -d "$FIX" ] || { echo "SKIP: no fixtures folder at $FIX"; exit 77; }
for tool in readlink awk seq mktemp; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool missing"; exit 77; }
done

# Captured from real machines and dangling there too (see fixtures/README.md).
KNOWN_DANGLING=" hwloc-2pa-pcidomain32bits/sys/class/net/lo "

# fixture iface numa_node local_cpulist
NIC_FACTS="
x460-4node-8nic eth0 0 0-15
x460-4node-8nic eth1 0 0-15
x460-4node-8nic eth2 1 16-31
x460-4node-8nic eth3 1 16-31
x460-4node-8nic eth4 2 32-47
x460-4node-8nic eth5 2 32-47
x460-4node-8nic eth6 3 48-63
x460-4node-8nic eth7 3 48-63
epyc7713-2node-bond enos0 0 0-31,64-95
epyc7713-2node-bond enos1 0 0-31,64-95
epyc7713-2node-bond enos2 1 32-63,96-127
epyc7713-2node-bond enos3 1 32-63,96-127
ceph-2node-ib ib0 0 0-13,28-41
ceph-2node-ib eno1 1 14-27,42-55
"

expand() { # cpulist -> one CPU a line
	local part
	for part in ${1//,/ }; do
		if [[ $part == *-* ]]; then seq "${part%-*}" "${part#*-}"; else echo "$part"; fi
	done
}

ERRS=0
err() { echo "FAIL: $*"; ERRS=$((ERRS + 1)); }

# check_fixture DIR NAME: adds to ERRS.
check_fixture() {
	local dir=$1 name=$2 root e t real
	root=$(readlink -f "$dir")
	if [ -d "$dir/sys/class/net" ]; then
		for e in "$dir"/sys/class/net/*; do
			t=${e#"$dir"/}
			if [ "${e##*/}" = bonding_masters ]; then
				[ -f "$e" ] && [ ! -L "$e" ] || err "$name/$t: not a regular file"
				continue
			fi
			if [ ! -L "$e" ]; then err "$name/$t: not a symlink"; continue; fi
			case "$KNOWN_DANGLING" in *" $name/$t "*) continue ;; esac
			real=$(readlink -e "$e") || { err "$name/$t: dangles -> $(readlink "$e")"; continue; }
			case "$real/" in "$root"/*) ;; *) err "$name/$t: leaves the fixture ($real)" ;; esac
		done
	fi

	local fx ifc node cl got
	while read -r fx ifc node cl; do
		[ "$fx" = "$name" ] || continue
		got=$(cat "$dir/sys/class/net/$ifc/device/numa_node" 2>/dev/null) || got=missing
		[ "$got" = "$node" ] || err "$name: $ifc numa_node=$got, expected $node"
		got=$(cat "$dir/sys/class/net/$ifc/device/local_cpulist" 2>/dev/null) || got=missing
		[ "$got" = "$cl" ] || err "$name: $ifc local_cpulist=$got, expected $cl"
	done <<<"$NIC_FACTS"

	local intr=$dir/proc/interrupts
	[ -f "$intr" ] || return 0 # the hwloc captures hold no IRQ data
	local ncpu hdr irq list eff
	ncpu=$(expand "$(cat "$dir/sys/devices/system/cpu/online")" | wc -l)
	hdr=$(head -n1 "$intr" | awk '{print NF}')
	[ "$hdr" = "$ncpu" ] || err "$name: interrupts header has $hdr CPU columns, $ncpu CPUs online"
	# Numbered lines: exactly ncpu numbers after "N:", then the chip name.
	awk -v n="$ncpu" -v name="$name" 'NR > 1 && $1 ~ /^[0-9]+:$/ {
		for (i = 2; i <= n + 1; i++) if ($i !~ /^[0-9]+$/) { bad = 1; break }
		if (!bad && $(n + 2) ~ /^[0-9]+$/) bad = 1
		if (bad) { print "FAIL: " name ": interrupts line " $1 " lacks " n " count columns"; errs++ }
		bad = 0 }
		END { exit errs ? 1 : 0 }' "$intr" || ERRS=$((ERRS + 1))
	for irq in $(awk 'NR > 1 && $1 ~ /^[0-9]+:$/ { sub(":", "", $1); print $1 }' "$intr"); do
		if [ ! -f "$dir/proc/irq/$irq/smp_affinity_list" ]; then
			err "$name: IRQ $irq has no proc/irq/$irq/smp_affinity_list"
			continue
		fi
		[ -f "$dir/proc/irq/$irq/effective_affinity_list" ] || continue
		read -r list <"$dir/proc/irq/$irq/smp_affinity_list"
		read -r eff <"$dir/proc/irq/$irq/effective_affinity_list"
		case "$name" in x460-4node-8nic|ceph-2node-ib|epyc7713-2node-bond|big*)
			[ "$eff" = "${list%%[-,]*}" ] ||
				err "$name: IRQ $irq effective $eff is not the first CPU of $list" ;;
		esac
	done
	return 0
}

nfix=0
for d in "$FIX"/*/; do
	d=${d%/}
	[ -d "$d/sys" ] || continue
	nfix=$((nfix + 1))
	check_fixture "$d" "${d##*/}"
done
[ "$nfix" -ge 7 ] || err "expected at least 7 fixtures in $FIX, found $nfix"

# Host-specific facts the tests' assertions rely on.
s2=$FIX/ceph-2node-ib
for a in "$s2"/proc/irq/[0-9]*/smp_affinity; do
	[ "$(cat "$a")" = "000300,00000000" ] || err "ceph-2node-ib: ${a#"$FIX"/} = $(cat "$a")"
done
[ "$(cat "$FIX/epyc7713-2node-bond/sys/class/net/bond0/bonding/xmit_hash_policy")" = "layer2+3 2" ] ||
	err "epyc7713-2node-bond: bond0 xmit_hash_policy"
grep -qx irqbalance "$FIX"/x460-4node-8nic/proc/[0-9]*/comm || err "x460-4node-8nic: irqbalance not running"
! grep -qx irqbalance "$FIX"/epyc7713-2node-bond/proc/[0-9]*/comm || err "epyc7713-2node-bond: irqbalance running"

# The checks must be able to fail: break a copy of the EPYC host four ways, one at a time.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -a "$FIX/epyc7713-2node-bond" "$tmp/epyc7713-2node-bond"
b=$tmp/epyc7713-2node-bond
src=$FIX/epyc7713-2node-bond
for breakage in link numa irqdir columns; do
	case $breakage in
	link) rm "$b/sys/class/net/enos1" && echo x >"$b/sys/class/net/enos1" ;;
	numa) echo 1 >"$b/sys/devices/pci0000:01/0000:01:00.0/numa_node" ;;
	irqdir) rm -r "$b/proc/irq/105" ;;
	columns) sed -i '1s/ CPU127 *$//' "$b/proc/interrupts" ;;
	esac
	before=$ERRS
	check_fixture "$b" epyc7713-2node-bond >/dev/null
	if [ "$ERRS" -gt "$before" ]; then ERRS=$before; else
		echo "FAIL: self-test: breaking '$breakage' went unnoticed"; ERRS=$((before + 1)); fi
	# Undo this breakage so the next one is tested alone.
	case $breakage in
	link) rm "$b/sys/class/net/enos1" && cp -a "$src/sys/class/net/enos1" "$b/sys/class/net/" ;;
	numa) cp "$src/sys/devices/pci0000:01/0000:01:00.0/numa_node" "$b/sys/devices/pci0000:01/0000:01:00.0/" ;;
	irqdir) cp -a "$src/proc/irq/105" "$b/proc/irq/" ;;
	columns) cp "$src/proc/interrupts" "$b/proc/" ;;
	esac
done
# The restored copy must pass again, or the breakages were not alone.
before=$ERRS
check_fixture "$b" epyc7713-2node-bond
[ "$ERRS" -eq "$before" ] || err "self-test copy still broken after undo"

if [ "$ERRS" -ne 0 ]; then
	echo "$ERRS failure(s) over $nfix fixtures"
	exit 1
fi
echo "ok: $nfix fixtures sane, 4 breakages detected"
exit 0
