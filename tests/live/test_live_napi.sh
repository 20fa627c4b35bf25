#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# NAPI in the per-NIC report on this machine's kernel, in a network
# namespace of its own holding a veth pair of 4 RX and 4 TX queues a side
# with GRO on (veth then has one NAPI an RX queue); the host's links are
# never touched and no packet is sent:
#  - the agent (`ip netns exec NS nettune serve --root /`) reports na0's
#    NAPIs as the kernel's netdev family lists them, read here by a dump of
#    our own (python, a raw generic-netlink socket): the same NAPI ids, the
#    same queue -> NAPI map (veth on 6.18 links none), irq_source;
#  - the device-wide sysfs values (napi_defer_hard_irqs 2,
#    gro_flush_timeout 20000 written here) as sysfs reads them, and per
#    NAPI as the family gives them;
#  - `threaded` on creates napi/na0-ID threads: each NAPI's pid is a live
#    thread of that name, its thread_cpus the Cpus_allowed_list of
#    /proc/PID/status, its last_cpu field 39 of /proc/PID/stat;
#  - `threaded` off: the threads are gone, and from the report;
#  - `nettune nics na0` prints the NAPI table.
# The agent and the namespace are removed at the end.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
live_require ip jq curl python3 ethtool

live_netns nt-napi
in_ns() { ip netns exec "$ns" "$@"; }
ip -n "$ns" link add na0 numtxqueues 4 numrxqueues 4 type veth peer name nb0 numtxqueues 4 numrxqueues 4 ||
	{ bad "veth with 4 queues"; exit 1; }
ip -n "$ns" link set lo up
ip -n "$ns" link set na0 up
ip -n "$ns" link set nb0 up
in_ns ethtool -K na0 gro on >/dev/null && in_ns ethtool -K nb0 gro on >/dev/null || { bad "GRO on"; exit 1; }
[ -e "/sys/class/net/lo/threaded" ] || skip "no /sys/class/net/IF/threaded (Linux before 5.12)"
in_ns sh -c 'echo 2 > /sys/class/net/na0/napi_defer_hard_irqs; echo 20000 > /sys/class/net/na0/gro_flush_timeout' ||
	bad "sysfs NAPI values"
ifindex=$(in_ns cat /sys/class/net/na0/ifindex)

# The family's answers for na0, independently of nettune (napi_family.py
# --queues): {"queues": [{id, type, napi}], "napis": [{id, irq, pid, defer,
# gro}]}, or {"error": errno}.
family() { in_ns python3 "$(dirname "${BASH_SOURCE[0]}")/napi_family.py" "$ifindex" --queues; }

start_agent
[ -n "$url" ] && ok || { bad "agent did not start: $(cat "$work/err")"; exit 1; }
report() { in_ns curl -sf "$url/v1/nics/na0"; }

family > "$work/fam0" || { bad "the family dump failed"; exit 1; }
jq -e .error "$work/fam0" >/dev/null && skip "the netdev family does not answer here (errno $(jq .error "$work/fam0"))"
report > "$work/r0" || bad "GET /v1/nics/na0"
echo "family, threaded off: $(jq -c '{napis: [.napis[].id], queues: [.queues[] | [.type, .id, .napi]]}' "$work/fam0")"
check "napi ids" "$(jq -c '[.napi[].id]' "$work/r0")" "$(jq -c '[.napis[].id] | sort' "$work/fam0")"
[ "$(jq '.napis | length' "$work/fam0")" -ge 4 ] && ok || bad "GRO on gives veth a NAPI per RX queue: $(jq -c . "$work/fam0")"
for dir in rx tx; do
	check "$dir queue napi ids" "$(jq -c "[.queues.$dir[].napi_id]" "$work/r0")" \
		"$(jq -c "[.queues[] | select(.type == \"$dir\")] | sort_by(.id) | [.[].napi]" "$work/fam0")"
done
# The family names no queue's NAPI for veth: the IRQ names are the source.
want_src=$(jq -r 'if ([.queues[].napi | select(. != null)] | length) > 0 then "netlink" else "irq-names" end' "$work/fam0")
check "irq_source" "$(jq -r .irq_source "$work/r0")" "$want_src"
check "threaded (sysfs)" "$(jq -r .threaded "$work/r0")" "false"
check "napi_defer_hard_irqs" "$(jq -r .napi_defer_hard_irqs "$work/r0")" "$(in_ns cat /sys/class/net/na0/napi_defer_hard_irqs)"
check "gro_flush_timeout_ns" "$(jq -r .gro_flush_timeout_ns "$work/r0")" "$(in_ns cat /sys/class/net/na0/gro_flush_timeout)"
check "per-NAPI values" "$(jq -c '[.napi[] | [.defer_hard_irqs, .gro_flush_timeout_ns]] | unique' "$work/r0")" \
	"$(jq -c '[.napis[] | [.defer, .gro]] | unique' "$work/fam0")"
check "no threads yet" "$(jq -c '[.napi[] | select(.pid != null)] | length' "$work/r0")" "0"

in_ns sh -c 'echo 1 > /sys/class/net/na0/threaded' || bad "threaded on"
family > "$work/fam1"
report > "$work/r1" || bad "GET /v1/nics/na0 (threaded)"
check "threaded (sysfs) on" "$(jq -r .threaded "$work/r1")" "true"
n=$(jq '.napi | length' "$work/r1")
[ "$n" -ge 4 ] && ok || bad "$n NAPIs after threaded on"
for i in $(seq 0 $((n - 1))); do
	e=$(jq -c ".napi[$i]" "$work/r1")
	id=$(jq .id <<<"$e"); pid=$(jq .pid <<<"$e")
	check "NAPI $id pid (family)" "$pid" "$(jq ".napis[] | select(.id == $id) | .pid" "$work/fam1")"
	check "NAPI $id thread name" "$(cat "/proc/$pid/comm" 2>/dev/null)" "napi/na0-$id"
	check "NAPI $id threaded" "$(jq .threaded <<<"$e")" "true"
	check "NAPI $id thread_cpus" "$(jq -r .thread_cpus <<<"$e")" \
		"$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)"
	# Field 39 after the name in parentheses: the CPU it last ran on (an
	# idle thread's stays put; it may have run once meanwhile).
	last=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f37)
	got=$(jq .last_cpu <<<"$e")
	[ "$got" -ge 0 ] 2>/dev/null && [ "$got" -lt "$(nproc)" ] && ok || bad "NAPI $id last_cpu $got"
	echo "NAPI $id: pid $pid, thread_cpus $(jq -r .thread_cpus <<<"$e"), last_cpu $got (/proc now $last)"
done
pids=$(jq -r '[.napi[].pid] | join(" ")' "$work/r1")
in_ns "$NT_BIN" nics na0 > "$work/cli" 2>&1 || bad "nettune nics na0: $(cat "$work/cli")"
grep -q "^NAPI: threaded on, napi_defer_hard_irqs 2, gro_flush_timeout 20000 ns" "$work/cli" && ok ||
	bad "nettune nics na0 lacks the NAPI line: $(cat "$work/cli")"
grep -Eq "^$(jq '.napi[0].id' "$work/r1") +- +yes +$(jq '.napi[0].pid' "$work/r1") " "$work/cli" && ok ||
	bad "nettune nics na0 lacks NAPI $(jq '.napi[0].id' "$work/r1")'s row"

in_ns sh -c 'echo 0 > /sys/class/net/na0/threaded' || bad "threaded off"
for _ in $(seq 50); do
	left=0
	for p in $pids; do [ -e "/proc/$p" ] && left=1; done
	[ $left -eq 0 ] && break
	sleep 0.1
done
[ $left -eq 0 ] && ok || bad "NAPI threads still there after threaded off"
report > "$work/r2" || bad "GET /v1/nics/na0 (threaded off)"
check "threaded off" "$(jq -r .threaded "$work/r2")" "false"
check "threads gone from the report" "$(jq -c '[.napi[] | select(.pid != null or .thread_cpus != null)] | length' "$work/r2")" "0"
check "NAPIs stay" "$(jq -c '[.napi[].id]' "$work/r2")" "$(jq -c '[.napi[].id]' "$work/r0")"

live_finish
