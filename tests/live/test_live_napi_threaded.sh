#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Threaded NAPI for one queue only (napi-set "threaded", 6.17; issue 39),
# on this machine's kernel in a network namespace of its own: a veth pair
# of 4 RX queues a side with GRO on (one NAPI an RX queue), no packet
# sent. A napi[] entry with "queues": "1", "threaded": true and
# "thread_cpus" the last CPU is planned as one per-NAPI step (not the
# device's sysfs file) and the thread's CPUs, applied: only the NAPI of RX
# queue 1 has a thread napi/na0-ID (the family's pid), on the last CPU, the
# device's sysfs "threaded" still reads 0; rolled back: no thread, and
# every NAPI's threaded mode and values read through the family as before.
# The judges are independent of nettune: /proc/PID/comm, sysfs and
# napi_family.py (a raw generic-netlink dump).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
live_require ip jq curl python3 ethtool
live_netns nt-napith
in_ns() { ip netns exec "$ns" "$@"; }
ip -n "$ns" link add na0 numtxqueues 4 numrxqueues 4 type veth peer name nb0 numtxqueues 4 numrxqueues 4 ||
	{ bad "veth with 4 queues"; exit 1; }
for l in na0 nb0; do ip -n "$ns" link set "$l" up; done
in_ns ethtool -K na0 gro on >/dev/null && in_ns ethtool -K nb0 gro on >/dev/null || { bad "GRO on"; exit 1; }
ifindex=$(in_ns cat /sys/class/net/na0/ifindex)
family() { in_ns python3 "$(dirname "${BASH_SOURCE[0]}")/napi_family.py" "$ifindex"; }
# The threads napi/na0-ID as /proc shows them: "pid id cpus" lines.
threads() {
	for d in /proc/[0-9]*; do
		c=$(cat "$d/comm" 2>/dev/null) || continue
		case "$c" in napi/na0-*) echo "${d#/proc/} ${c#napi/na0-} $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$d/status")";; esac
	done | sort -n
}
family > "$work/f0" || { bad "the family dump failed"; exit 1; }
jq -e 'type == "object"' "$work/f0" >/dev/null && skip "the netdev family does not answer here (errno $(jq .error "$work/f0"))"
[ "$(jq '.[0].threaded' "$work/f0")" != null ] || skip "napi-get has no threaded: a kernel before 6.17"
check "4 NAPIs, none threaded" "$(jq -c '[.[].threaded] | unique' "$work/f0")/$(jq length "$work/f0")" "[0]/4"
check "no threads at the start" "$(threads | wc -l)" "0"

last=$(( $(nproc) - 1 ))
start_agent
[ -n "$url" ] && ok || { bad "agent did not start: $(cat "$work/err")"; exit 1; }
profile='{"profile":{"name":"one","napi":[{"interface":"na0","queues":"1","threaded":true,"thread_cpus":"'$last'"}]}}'
post /v1/plan "$profile"
check "plan" "$code" 200
check "plan: one per-NAPI step, then the thread" "$(jq -c '[.steps[] | [.kind, .target, .before, .after]]' <<<"$body")" \
	'[["napi","na0/rx-1/threaded","0","1"],["napi_thread_cpus","na0/rx-1","none","'$last'"]]'
post /v1/transactions "$profile"
check "apply" "$code/$(jq -r .status <<<"$body")" "201/applied"
id=$(jq .id <<<"$body")
family > "$work/f1"
# veth adds its NAPIs in queue order and the kernel numbers them up.
napi1=$(jq '.[1].id' "$work/f0")
wait_for 5 test "$(threads | wc -l)" -eq 1
threads > "$work/t1"
check "one thread, NAPI $napi1's" "$(awk '{print $2}' "$work/t1" | tr -d '\n')" "$napi1"
check "the thread on CPU $last" "$(awk '{print $3}' "$work/t1" | tr -d '\n')" "$last"
check "its pid in napi-get" "$(jq -r --argjson n "$napi1" '.[] | select(.id == $n) | .pid' "$work/f1")" \
	"$(awk '{print $1}' "$work/t1" | tr -d '\n')"
check "threaded per NAPI" "$(jq -c '[.[].threaded]' "$work/f1")" "[0,1,0,0]"
check "the device's sysfs threaded untouched" "$(in_ns cat /sys/class/net/na0/threaded)" "0"
echo "applied: $(jq -c . "$work/f1"); threads: $(tr '\n' ';' < "$work/t1")"
post "/v1/transactions/$id/rollback" '{}'
check "rollback" "$code/$(jq -r .status <<<"$body")/$(jq -c '[.steps[].result] | unique' <<<"$body")" \
	'201/applied/["applied"]'
wait_for 5 test "$(threads | wc -l)" -eq 0
check "no thread after the rollback" "$(threads | wc -l)" "0"
family > "$work/f2"
check "every NAPI as it was" "$(jq -c '[.[] | [.id, .threaded, .pid, .defer, .gro, .suspend]]' "$work/f2")" \
	"$(jq -c '[.[] | [.id, .threaded, .pid, .defer, .gro, .suspend]]' "$work/f0")"
check "sysfs threaded as it was" "$(in_ns cat /sys/class/net/na0/threaded)" "0"
live_finish
