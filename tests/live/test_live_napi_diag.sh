#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The NAPI diagnostics on this machine's kernel (issue 39), in a network
# namespace of its own holding a veth pair of 4 RX and 4 TX queues a side
# with GRO on and threaded NAPI on for na0 (a napi/na0-ID thread a NAPI,
# which the kernel leaves on every CPU); the host's links are never
# touched and no packet is sent. Judged by /proc/PID/status
# (Cpus_allowed_list) and /proc/PID/comm, independently of nettune:
#  - GET /v1/diagnostics has napi-thread-unpinned for na0, naming each
#    thread by the pid /proc shows for napi/na0-ID, and nothing for nb0
#    (NAPIs, no threads);
#  - `nettune diagnose --agent URL --fix-profile` prints napi[] entries;
#    that part of it is planned and applied through the agent (the rest of
#    a fix profile, a TCP sysctl and the like, is not this test's): each
#    thread then allowed on exactly the CPU the fix names (veth has no IRQ
#    and no node: one online CPU a queue, in queue order);
#  - the finding is gone; the rollback gives every thread the CPUs it had
#    and the finding is back.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
live_require ip jq curl ethtool
[ "$(nproc)" -ge 2 ] || skip "one CPU: a thread on every CPU is pinned already"

live_netns nt-napidiag
in_ns() { ip netns exec "$ns" "$@"; }
ip -n "$ns" link add na0 numtxqueues 4 numrxqueues 4 type veth peer name nb0 numtxqueues 4 numrxqueues 4 ||
	{ bad "veth with 4 queues"; exit 1; }
ip -n "$ns" link set na0 up
ip -n "$ns" link set nb0 up
in_ns ethtool -K na0 gro on >/dev/null && in_ns ethtool -K nb0 gro on >/dev/null || { bad "GRO on"; exit 1; }
[ -e "/sys/class/net/lo/threaded" ] || skip "no /sys/class/net/IF/threaded (Linux before 5.12)"
in_ns sh -c 'echo 1 > /sys/class/net/na0/threaded' || { bad "threaded on"; exit 1; }

allowed() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null; }
# The threads napi/na0-* as /proc shows them: "id pid cpus" lines by NAPI id.
threads() {
	for d in /proc/[0-9]*; do
		c=$(cat "$d/comm" 2>/dev/null) || continue
		case "$c" in napi/na0-*) echo "${c#napi/na0-} ${d#/proc/} $(allowed "${d#/proc/}")";; esac
	done | sort -n
}
wait_for 5 sh -c '[ "$(for d in /proc/[0-9]*; do cat $d/comm 2>/dev/null; done | grep -c "^napi/na0-")" -eq 4 ]' ||
	{ bad "threaded on gives na0 4 NAPI threads"; exit 1; }
threads > "$work/t0"
online=$(cat /sys/devices/system/node/online 2>/dev/null)
echo "threads: $(tr '\n' ';' < "$work/t0")"

start_agent
[ -n "$url" ] && ok || { bad "agent did not start: $(cat "$work/err")"; exit 1; }
diag() { nscurl "$url/v1/diagnostics"; }
finding() { jq -c --arg s "$2" '[.findings[] | select(.id == "'"$1"'" and .subject == $s)]'; }

# ---- the finding, named by the threads /proc shows ----
diag > "$work/d0"
f=$(finding napi-thread-unpinned na0 < "$work/d0")
check "napi-thread-unpinned for na0" "$(jq length <<<"$f")" 1
check "its threads are na0's (pid by NAPI id)" \
	"$(jq -r '.[0].evidence.napis | sort_by(.napi_id) | map("\(.napi_id) \(.pid)") | .[]' <<<"$f" | tr '\n' ';')" \
	"$(awk '{print $1, $2}' "$work/t0" | tr '\n' ';')"
check "with the CPUs /proc gives them" \
	"$(jq -r '.[0].evidence.napis | sort_by(.napi_id) | map(.thread_cpus) | .[]' <<<"$f" | tr '\n' ';')" \
	"$(awk '{print $3}' "$work/t0" | tr '\n' ';')"
first=$(head -1 "$work/t0")
jq -r '.[0].message' <<<"$f" | grep -q "NAPI ${first%% *} (rx-0, thread pid $(awk '{print $2}' <<<"$first")) on CPUs" &&
	ok || bad "the message names NAPI, queue, pid and CPUs: $(jq -r '.[0].message' <<<"$f")"
check "no thread finding for nb0 (not threaded)" "$(finding napi-thread-unpinned nb0 < "$work/d0" | jq length)" 0

# ---- the fix profile, through the CLI and the agent ----
in_ns "$NT_BIN" diagnose --agent "$url" --fix-profile > "$work/fix" 2>>"$work/err" || bad "diagnose --fix-profile"
fix=$(jq -c '{name: "napi-fix", napi: [.napi[] | select(.interface == "na0")]}' "$work/fix")
check "fix pins each queue's thread to one CPU" "$(jq -c '[.napi[] | [.queues, .thread_cpus]]' <<<"$fix")" \
	'[["0,2","0"],["1,3","1"]]'
post /v1/plan "{\"profile\":$fix}"
check "plan" "$code" 200
check "plan steps" "$(jq -c '[.steps[] | [.kind, .target, .after]] | sort_by(.[1])' <<<"$body")" \
	'[["napi_thread_cpus","na0/rx-0","0"],["napi_thread_cpus","na0/rx-1","1"],["napi_thread_cpus","na0/rx-2","0"],["napi_thread_cpus","na0/rx-3","1"]]'
post /v1/transactions "{\"profile\":$fix}"
check "apply" "$code/$(jq -r .status <<<"$body")" "201/applied"
id=$(jq .id <<<"$body")
threads > "$work/t1"
check "threads pinned by queue order (0,1,0,1)" "$(awk '{print $3}' "$work/t1" | tr '\n' ',')" "0,1,0,1,"
check "the same threads" "$(awk '{print $2}' "$work/t1" | tr '\n' ' ')" "$(awk '{print $2}' "$work/t0" | tr '\n' ' ')"
check "finding gone" "$(diag | finding napi-thread-unpinned na0 | jq length)" 0

post "/v1/transactions/$id/rollback" '{}'
check "rollback" "$code/$(jq -r .status <<<"$body")" "201/applied"
threads > "$work/t2"
check "threads and CPUs as they were" "$(cat "$work/t2")" "$(cat "$work/t0")"
check "finding back" "$(diag | finding napi-thread-unpinned na0 | jq length)" 1
echo "node(s) online: ${online:-?}; fix: $fix"
live_finish
