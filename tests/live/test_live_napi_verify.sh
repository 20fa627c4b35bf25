#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The delivery check of NAPI threads on this machine's kernel (issue 39):
# two network namespaces of the test's own joined by a veth pair of 4
# queues a side with GRO on (na0 in the agent's, nb0 in the other), and
# iperf3 from nb0 (TSO off) to na0's address, so na0's NAPI threads do the
# receive work; no packet goes anywhere else, the host's links are not touched.
# Judged independently of nettune by /proc/PID/schedstat, stat and status.
#  1. A transaction turns threaded NAPI on for na0 and pins every thread
#     to the last CPU with "confirm": "on-delivery": the check sees the
#     threads that ran there (run time grown, last CPU the planned one),
#     confirms it, and each step's observed text says so.
#  2. GET /v1/verify during the traffic: the same threads, delivered; the
#     busiest thread's run time as /proc's schedstat shows it.
#  3. That thread moved to CPU 0 with taskset: GET /v1/verify says
#     elsewhere (allowed no longer the placement) while the others stay
#     as they were, and GET /v1/diagnostics has its napi-thread-elsewhere;
#     the rollback ends threaded NAPI.
# What it adds over the unit test test_delivery_threads: the kernel's own
# run time and last CPU of real NAPI threads under traffic.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
jqe() { jq -e "$@" >/dev/null 2>&1; }
live_require ip jq curl ethtool iperf3 taskset
[ "$(nproc)" -ge 2 ] || skip "one CPU: no placement to be off"

live_netns nt-napivfy
nsb=$ns-b
live_cleanup_more() {
	[ -n "${srv:-}" ] && kill "$srv" 2>/dev/null
	[ -n "${cli:-}" ] && kill "$cli" 2>/dev/null
	ip netns del "$nsb" 2>/dev/null
}
ip netns add "$nsb" || { bad "second namespace"; exit 1; }
ip -n "$nsb" link set lo up
in_ns() { ip netns exec "$ns" "$@"; }
ip -n "$ns" link add na0 numtxqueues 4 numrxqueues 4 type veth peer name nb0 numtxqueues 4 numrxqueues 4 ||
	{ bad "veth with 4 queues"; exit 1; }
ip -n "$ns" link set nb0 netns "$nsb" || { bad "nb0 into $nsb"; exit 1; }
ip -n "$ns" addr add 10.231.0.1/30 dev na0
ip -n "$nsb" addr add 10.231.0.2/30 dev nb0
ip -n "$ns" link set na0 up
ip -n "$nsb" link set nb0 up
# veth hands a packet to the receiver's NAPI only when GRO could merge it
# (veth_skb_is_eligible_for_gro): not for TSO segments of a sender with TSO
# on, which go through the backlog instead and leave the NAPI threads idle.
in_ns ethtool -K na0 gro on >/dev/null && ip netns exec "$nsb" ethtool -K nb0 gro on tso off >/dev/null ||
	{ bad "GRO on, TSO off"; exit 1; }
[ -e "/sys/class/net/lo/threaded" ] || skip "no /sys/class/net/IF/threaded (Linux before 5.12)"
last=$(( $(nproc) - 1 ))

# The threads napi/na0-*: "pid run_ns last_cpu cpus" lines, by pid.
threads() {
	local f pid
	grep -l '^napi/na0-' /proc/[0-9]*/comm 2>/dev/null | while read -r f; do
		pid=${f#/proc/}; pid=${pid%/comm}
		echo "$pid $(cut -d' ' -f1 "/proc/$pid/schedstat" 2>/dev/null) \
$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f37) \
$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)"
	done | sort -n
}

start_agent
[ -n "$url" ] && ok || { bad "agent did not start: $(cat "$work/err")"; exit 1; }
# Started directly (not through in_ns, a function): $! is iperf3 itself,
# which the kill below and the cleanup end; one client, then it exits.
ip netns exec "$ns" iperf3 -s -1 -B 10.231.0.1 -p 5231 > "$work/srv" 2>&1 &
srv=$!
sleep 0.5
ip netns exec "$nsb" iperf3 -c 10.231.0.1 -p 5231 -t 8 -P 4 > "$work/cli" 2>&1 &
cli=$!
sleep 0.5

# ---- 1. placed and confirmed on delivery ----
post /v1/transactions '{"profile":{"name":"napi-verify","napi":[{"interface":"na0","threaded":true,"thread_cpus":"'$last'"}]},
	"confirm_timeout_s": 20, "confirm": "on-delivery", "verify_window_ms": 1000}'
echo "$body" > "$work/t"
id=$(jq -r '.id // empty' "$work/t")
check "applied and confirmed on delivery ($(jq -c '[.status, .delivery.verdict, .delivery.delivered, .delivery.elsewhere, .delivery.not_observed, .error]' "$work/t"))" \
	"$(jq -r '[.status, .delivery.verdict, .delivery.confirmed] | map(tostring) | join(" ")' "$work/t")" "applied delivered true"
threads > "$work/p1"
echo "threads after the apply (pid run_ns last_cpu cpus): $(tr '\n' ';' < "$work/p1")"
check "four threads, each on CPU $last" "$(awk -v c="$last" '$4 == c' "$work/p1" | wc -l)" 4
jqe --argjson c "$last" '[.delivery.threads[] | select(.verdict == "delivered" and .last_cpu == $c and .run_ns > 0)] | length >= 1' "$work/t" &&
	ok || bad "no thread delivered on CPU $last: $(jq -c '.delivery.threads' "$work/t")"
jqe '[.delivery.threads[] | select(.verdict == "elsewhere")] | length == 0' "$work/t" && ok ||
	bad "a thread elsewhere: $(jq -c '.delivery.threads' "$work/t")"
check "the check's pids are /proc's threads" \
	"$(jq -r '[.delivery.threads[].pid] | sort | map(tostring) | join(" ")' "$work/t")" "$(awk '{print $1}' "$work/p1" | tr '\n' ' ' | sed 's/ $//')"
jqe '[.steps[] | select(.kind == "napi_thread_cpus") | .observed | test("; delivered: thread [0-9]+ ran [0-9.]+ ms, last on CPU '"$last"'$")] | any' "$work/t" &&
	ok || bad "no step observed delivered: $(jq -c '[.steps[] | select(.kind == "napi_thread_cpus") | .observed]' "$work/t")"

# ---- 2. GET /v1/verify during the traffic ----
nscurl "$url/v1/verify?window_ms=1500" > "$work/v2"
echo "verify: $(jq -c '[.threads[] | [.target, .pid, .run_ns, .last_cpu, .verdict]]' "$work/v2")"
echo "NET_RX in the window per CPU: $(jq -c '[.cpus[] | [.cpu, .net_rx]]' "$work/v2")"
check "every placed thread listed" "$(jq '.threads | length' "$work/v2")" 4
jqe '.thread_verdicts.delivered >= 1 and .thread_verdicts.elsewhere == 0' "$work/v2" && ok ||
	bad "thread verdicts: $(jq -c .thread_verdicts "$work/v2")"
busy=$(jq -r '[.threads[] | select(.verdict == "delivered")] | max_by(.run_ns) | .pid' "$work/v2")
check "the busiest thread is placed by transaction $id" \
	"$(jq -r --argjson p "$busy" '.threads[] | select(.pid == $p) | .placed_by' "$work/v2")" "transaction $id"

# ---- 3. moved behind the agent's back ----
taskset -pc 0 "$busy" >/dev/null || bad "taskset -pc 0 $busy"
nscurl "$url/v1/verify?window_ms=1000" > "$work/v3"
echo "after taskset: $(jq -c --argjson p "$busy" '.threads[] | select(.pid == $p)' "$work/v3")"
check "thread $busy moved: elsewhere, outside allowed" \
	"$(jq -r --argjson p "$busy" '.threads[] | select(.pid == $p) | "\(.verdict) \(.outside) \(.allowed)"' "$work/v3")" \
	"elsewhere allowed 0"
check "the others not elsewhere" "$(jq --argjson p "$busy" '[.threads[] | select(.pid != $p and .verdict == "elsewhere")] | length' "$work/v3")" 0
# GET /v1/diagnostics says it: napi-thread-elsewhere, its fix pinning the
# thread's queue to its placement again.
nscurl "$url/v1/diagnostics" > "$work/d3"
check "napi-thread-elsewhere for thread $busy, its fix its placement" \
	"$(jq --argjson p "$busy" '[.findings[] | select(.id == "napi-thread-elsewhere" and .subject == "na0" and .evidence.pid == $p and .fix.napi[0].thread_cpus == .evidence.placed and .fix.napi[0].queues == (.evidence.queue | tostring))] | length' "$work/d3")" 1
wait "$cli" 2>/dev/null; cli=""
jqe '.end.sum_received.bytes > 0' "$work/cli" 2>/dev/null || grep -q receiver "$work/cli" && ok || bad "iperf3: $(tail -3 "$work/cli")"

post "/v1/transactions/$id/rollback" '{}'
check "rollback" "$code/$(jq -r .status <<<"$body")" "201/applied"
check "threaded off again" "$(in_ns cat /sys/class/net/na0/threaded)" 0
# The server ends here: the EXIT trap waits for every child before it
# would stop it.
kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null; srv=""
live_finish
