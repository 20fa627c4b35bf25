#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The desired state holding napi[] on this machine's kernel (issue 39,
# "held"), in a network namespace of its own holding a veth pair of 4 RX
# and 4 TX queues a side with GRO on (one NAPI an RX queue); the host's
# links are never touched and no packet is sent. The agent runs with
# --drift-policy repair --drift-interval 1. Judged independently of
# nettune: /proc/PID/comm and Cpus_allowed_list, and the netdev family
# through a raw generic-netlink socket (napi_family.py).
#  1. PUT /v1/desired with napi[] (threaded on, every thread on the last
#     CPU, defer-hard-irqs 3, gro-flush-timeout 50000 a NAPI): applied by
#     the watcher.
#  2. A thread moved with taskset: pinned again within the interval, the
#     same pid; the repair (reason drift) records before "0" and which
#     thread of which NAPI it pinned.
#  3. threaded off and on three times (new threads, new pids each time, on
#     every CPU): each time pinned again, never "contested" (a re-created
#     thread is not a fight).
#  4. GRO off and on (veth's NAPIs made anew, their per-NAPI values the
#     device's again): the values and the threads held again.
# What each part adds over test_live_napi_set (apply/rollback) and the
# unit test test_napi_hold (the same on a fixture): that the kernel's own
# re-creations are seen and repaired by a running agent.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
live_require ip jq curl ethtool python3 taskset
[ "$(nproc)" -ge 2 ] || skip "one CPU: a thread on every CPU is pinned already"

live_netns nt-napiheld
in_ns() { ip netns exec "$ns" "$@"; }
ip -n "$ns" link add na0 numtxqueues 4 numrxqueues 4 type veth peer name nb0 numtxqueues 4 numrxqueues 4 ||
	{ bad "veth with 4 queues"; exit 1; }
ip -n "$ns" link set na0 up
ip -n "$ns" link set nb0 up
in_ns ethtool -K na0 gro on >/dev/null && in_ns ethtool -K nb0 gro on >/dev/null || { bad "GRO on"; exit 1; }
[ -e "/sys/class/net/lo/threaded" ] || skip "no /sys/class/net/IF/threaded (Linux before 5.12)"
ifindex=$(in_ns cat /sys/class/net/na0/ifindex)
last=$(( $(nproc) - 1 ))
family() { in_ns python3 "$(dirname "${BASH_SOURCE[0]}")/napi_family.py" "$ifindex"; }
family > "$work/f0" || { bad "the family dump failed"; exit 1; }
jq -e 'type == "object"' "$work/f0" >/dev/null && skip "the netdev family does not answer here (errno $(jq .error "$work/f0"))"
[ "$(jq '.[0].defer' "$work/f0")" != null ] || skip "napi-get has no defer-hard-irqs: a kernel before 6.13 (no napi-set)"

# The threads napi/na0-* as /proc shows them: "id pid cpus" lines by NAPI
# id (one grep for the names: a loop of cat over /proc takes seconds).
threads() {
	local f pid
	grep -H '^napi/na0-' /proc/[0-9]*/comm 2>/dev/null | while IFS=: read -r f name; do
		pid=${f#/proc/}; pid=${pid%/comm}
		echo "${name#napi/na0-} $pid $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)"
	done | sort -n
}
# Every one of na0's 4 threads on the last CPU.
all_pinned() { [ "$(threads | awk -v c="$last" '$3 == c' | wc -l)" -eq 4 ]; }
values_held() { [ "$(family | jq -c '[.[] | [.defer, .gro]] | unique')" = '[[3,50000]]' ]; }
newest() { nscurl "$url/v1/transactions?limit=1" | jq -r ".transactions[0].$1"; }
# The newest transaction's step of napi_thread_cpus na0/rx-Q as "before after observed".
repair_step() {
	local id
	id=$(newest id)
	nscurl "$url/v1/transactions/$id" |
		jq -r --arg t "na0/rx-$1" '.steps[] | select(.kind == "napi_thread_cpus" and .target == $t) | "\(.before) \(.after) \(.observed)"'
}
not_contested() { [ "$(nscurl "$url/v1/drift" | jq '[.targets[] | select(.state == "contested")] | length')" = 0 ]; }

start_agent --drift-policy repair --drift-interval 1
[ -n "$url" ] && ok || { bad "agent did not start: $(cat "$work/err")"; exit 1; }

# ---- 1. the desired state, applied by the watcher ----
out=$(nscurl -X PUT -w '\n%{http_code}' -H 'Content-Type: application/json' \
	-d '{"profile":{"name":"held","napi":[{"interface":"na0","threaded":true,"thread_cpus":"'$last'","defer_hard_irqs":3,"gro_flush_timeout_ns":50000}]}}' \
	"$url/v1/desired")
check "PUT /v1/desired" "${out##*$'\n'}" 200
wait_for 5 all_pinned && ok || bad "desired state not applied: $(threads | tr '\n' ';')"
wait_for 3 values_held && ok || bad "per-NAPI values not applied: $(family)"
threads > "$work/t1"
echo "held: $(tr '\n' ';' < "$work/t1")"

# ---- 2. taskset behind the agent's back ----
read -r id0 pid0 _ < "$work/t1"
q0=$(( $(awk '{print $1}' "$work/t1" | grep -n "^$id0\$" | cut -d: -f1) - 1 ))
taskset -pc 0 "$pid0" >/dev/null || bad "taskset -pc 0 $pid0"
check "moved by taskset" "$(threads | awk -v p="$pid0" '$2 == p {print $3}')" 0
t0=$(date +%s%N)
wait_for 4 all_pinned && ok || bad "moved thread not repaired: $(threads | tr '\n' ';')"
echo "taskset repaired in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
check "the same thread, pinned again" "$(threads | awk -v p="$pid0" '$2 == p {print $3}')" "$last"
sleep 0.3
check "repair reason" "$(newest reason)" drift
check "repair step of na0/rx-$q0 (before, after, the thread it pinned)" "$(repair_step "$q0")" \
	"0 $last thread $pid0 of NAPI $id0"

# ---- 3. threaded off and on, three times: new threads pinned again ----
prev="$work/t1"
for round in 1 2 3; do
	in_ns sh -c 'echo 0 > /sys/class/net/na0/threaded; echo 1 > /sys/class/net/na0/threaded' ||
		bad "round $round: toggling threaded"
	wait_for 4 sh -c '[ "$(grep -l "^napi/na0-" /proc/[0-9]*/comm 2>/dev/null | wc -l)" -eq 4 ]'
	wait_for 4 all_pinned && ok || bad "round $round: new threads not pinned: $(threads | tr '\n' ';')"
	threads > "$work/r$round"
	check "round $round: every thread new (no pid kept)" \
		"$(comm -12 <(awk '{print $2}' "$prev" | sort) <(awk '{print $2}' "$work/r$round" | sort) | wc -l)" 0
	not_contested && ok || bad "round $round: contested: $(nscurl "$url/v1/drift" | jq -c .targets)"
	prev="$work/r$round"
done
echo "after three toggles: $(tr '\n' ';' < "$prev")"
check "threaded on" "$(in_ns cat /sys/class/net/na0/threaded)" 1

# ---- 4. GRO off and on: NAPIs made anew, values and threads held ----
in_ns ethtool -K na0 gro off >/dev/null && in_ns ethtool -K na0 gro on >/dev/null || bad "GRO off/on"
family > "$work/f4"
echo "right after GRO off/on: $(jq -c '[.[] | [.id, .defer, .gro]]' "$work/f4")"
wait_for 5 values_held && ok || bad "per-NAPI values not held after GRO off/on: $(family)"
wait_for 4 all_pinned && ok || bad "threads not pinned after GRO off/on: $(threads | tr '\n' ';')"
not_contested && ok || bad "contested after GRO off/on: $(nscurl "$url/v1/drift" | jq -c .targets)"

# ---- the record: repairs as for every kind ----
wait_for 3 sh -c '[ "$(ip netns exec '"$ns"' curl -s '"$url"'/v1/drift | jq -r .status)" = in_sync ]' && ok ||
	bad "drift status: $(nscurl "$url/v1/drift" | jq -c '{status, message, targets}')"
reasons=$(nscurl "$url/v1/transactions?limit=50" | jq -c '[.transactions[] | select(.status == "applied") | .reason] | unique')
echo "repair transactions' reasons: $reasons"
jq -e 'all(. == "drift" or . == "link-up" or . == "boot")' <<<"$reasons" >/dev/null && ok || bad "reasons: $reasons"
n=$(nscurl "$url/v1/transactions?limit=50" | jq '.total')
[ "$n" -ge 6 ] && ok || bad "$n repair transactions (desired, taskset, 3 toggles, GRO)"
check "last_repair_txn is the newest" "$(nscurl "$url/v1/drift" | jq .last_repair_txn)" "$(newest id)"

nscurl -X DELETE "$url/v1/desired" >/dev/null
stop_agent
in_ns sh -c 'echo 0 > /sys/class/net/na0/threaded'
live_finish
