#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The profile section napi[] on this machine's kernel (issue 39), in a
# network namespace of its own holding a veth pair of 4 RX and 4 TX queues
# a side with GRO on (one NAPI an RX queue); the host's links are never
# touched and no packet is sent. Judges independent of nettune: sysfs,
# /proc/PID/status (Cpus_allowed_list) and /proc/PID/comm, and a python
# dump of the netdev family (a raw generic-netlink socket) for the
# per-NAPI values.
#  1. threaded off: a profile turns it on, pins every NAPI thread to the
#     last CPU and sets defer_hard_irqs, gro_flush_timeout_ns and
#     irq_suspend_timeout_ns per NAPI (napi-set, 6.13): all as planned;
#     the rollback turns threaded off (the threads go: no error), and
#     leaves every per-NAPI value and the device-wide sysfs files as they
#     were.
#  2. threaded on, one thread moved to CPU 0 behind nettune's back: a
#     profile pins every thread to the last CPU; the rollback gives each
#     thread exactly the CPUs it had.
#  3. 422s with a JSON path, nothing applied: a CPU that does not exist,
#     thread_cpus with threaded off, defer_hard_irqs above 2^31-1, threaded
#     on a veth without NAPI (GRO off), thread_cpus "irq" on veth (no IRQ).
set -u
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
skip() { echo "SKIP: $*"; exit 77; }
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
[ "$(id -u)" -eq 0 ] || skip "needs root for network namespaces"
for t in ip jq curl python3 ethtool; do command -v $t >/dev/null || skip "$t is not installed"; done
[ -n "${NT_BIN:-}" ] && [ -x "$NT_BIN" ] || skip "NT_BIN is not set to the nettune binary"

ns=nt-napiset-$$
work=$(mktemp -d)
agent=""
cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null
	wait 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

ip netns add "$ns" || skip "cannot create a network namespace"
in_ns() { ip netns exec "$ns" "$@"; }
ip -n "$ns" link add na0 numtxqueues 4 numrxqueues 4 type veth peer name nb0 numtxqueues 4 numrxqueues 4 ||
	{ bad "veth with 4 queues"; exit 1; }
# nc0/nd0: GRO off, no XDP: veth has no NAPI then.
ip -n "$ns" link add nc0 type veth peer name nd0 || { bad "veth without NAPI"; exit 1; }
for l in lo na0 nb0 nc0 nd0; do ip -n "$ns" link set "$l" up; done
in_ns ethtool -K na0 gro on >/dev/null && in_ns ethtool -K nb0 gro on >/dev/null || { bad "GRO on"; exit 1; }
in_ns ethtool -K nc0 gro off >/dev/null 2>&1
[ -e "/sys/class/net/lo/threaded" ] || skip "no /sys/class/net/IF/threaded (Linux before 5.12)"
ifindex=$(in_ns cat /sys/class/net/na0/ifindex)
last=$(( $(nproc) - 1 ))

# The family's NAPIs of na0 (napi_family.py): [{id, pid, defer, gro, suspend}] sorted by
# id, or {"error": errno}.
family() { in_ns python3 "$(dirname "${BASH_SOURCE[0]}")/napi_family.py" "$ifindex"; }
allowed() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null; }
# The threads napi/na0-* as /proc shows them: "pid id cpus" lines.
threads() {
	for d in /proc/[0-9]*; do
		c=$(cat "$d/comm" 2>/dev/null) || continue
		case "$c" in napi/na0-*) echo "${d#/proc/} ${c#napi/na0-} $(allowed "${d#/proc/}")";; esac
	done | sort -n
}
sysfs() { in_ns sh -c 'cd /sys/class/net/na0 && echo "$(cat threaded) $(cat napi_defer_hard_irqs) $(cat gro_flush_timeout)"'; }

family > "$work/f0" || { bad "the family dump failed"; exit 1; }
jq -e 'type == "object"' "$work/f0" >/dev/null && skip "the netdev family does not answer here (errno $(jq .error "$work/f0"))"
[ "$(jq '.[0].defer' "$work/f0")" != null ] || skip "napi-get has no defer-hard-irqs: a kernel before 6.13 (no napi-set)"
[ "$(jq 'length' "$work/f0")" -eq 4 ] && ok || bad "GRO on gives na0 4 NAPIs: $(cat "$work/f0")"

: > "$work/out"
ip netns exec "$ns" "$NT_BIN" serve --listen 127.0.0.1:0 --root / --state-dir "$work/state" > "$work/out" 2>>"$work/err" &
agent=$!
for _ in $(seq 100); do grep -q listening "$work/out" && break; sleep 0.05; done
url=$(sed -n 's/^listening on //p' "$work/out")
[ -n "$url" ] && ok || { bad "agent did not start: $(cat "$work/err")"; exit 1; }
# post PATH BODY: the answer in $body, the status in $code.
post() {
	local out
	out=$(in_ns curl -s -w '\n%{http_code}' -H 'Content-Type: application/json' -d "$2" "$url$1")
	code=${out##*$'\n'}; body=${out%$'\n'*}
}
ntxn() { in_ns curl -s "$url/v1/transactions" | jq 'if type == "array" then length else (.transactions | length) end'; }

# ---- 1. threaded off -> on, pinned, per-NAPI values; rollback ----
sys0=$(sysfs)
check "threaded off at the start" "${sys0%% *}" "0"
check "no threads at the start" "$(threads | wc -l)" "0"
profile='{"profile":{"name":"napi","napi":[{"interface":"na0","threaded":true,"thread_cpus":"'$last'","defer_hard_irqs":3,"gro_flush_timeout_ns":50000,"irq_suspend_timeout_ns":1000000}]}}'
post /v1/plan "$profile"
check "plan" "$code" 200
check "plan steps" "$(jq -c '[.steps[].kind] | group_by(.) | map([.[0], length])' <<<"$body")" \
	'[["napi",12],["napi_device",1],["napi_thread_cpus",4]]'
check "thread before-values" "$(jq -c '[.steps[] | select(.kind == "napi_thread_cpus") | .before] | unique' <<<"$body")" '["none"]'
post /v1/transactions "$profile"
check "apply" "$code/$(jq -r .status <<<"$body")" "201/applied"
id=$(jq .id <<<"$body")
family > "$work/f1"
check "sysfs threaded on" "$(in_ns cat /sys/class/net/na0/threaded)" "1"
check "per-NAPI values (family)" "$(jq -c '[.[] | [.defer, .gro, .suspend]] | unique' "$work/f1")" '[[3,50000,1000000]]'
check "device-wide sysfs untouched by napi-set" "$(sysfs | cut -d' ' -f2-)" "$(cut -d' ' -f2- <<<"$sys0")"
threads > "$work/t1"
check "a thread a NAPI" "$(wc -l < "$work/t1")" "4"
check "thread ids are the NAPIs'" "$(awk '{print $2}' "$work/t1" | sort -n | tr '\n' ' ')" "$(jq -r '[.[].id] | sort | map(tostring) | join(" ")' "$work/f1") "
check "family pids are the threads'" "$(jq -r '[.[].pid] | sort | map(tostring) | join(" ")' "$work/f1")" \
	"$(awk '{print $1}' "$work/t1" | sort -n | tr '\n' ' ' | sed 's/ $//')"
check "threads pinned to CPU $last" "$(awk '{print $3}' "$work/t1" | sort -u | tr -d '\n')" "$last"
echo "applied: $(jq -c '[.[] | {id, pid, defer, gro, suspend}]' "$work/f1")"
echo "threads: $(tr '\n' ';' < "$work/t1")"
post "/v1/transactions/$id/rollback" '{}'
check "rollback" "$code/$(jq -r .status <<<"$body")" "201/applied"
check "rollback steps" "$(jq -c '[.steps[].result] | unique' <<<"$body")" '["applied"]'
for _ in $(seq 50); do [ -z "$(threads)" ] && break; sleep 0.1; done
check "threads gone after the rollback" "$(threads | wc -l)" "0"
check "sysfs as it was" "$(sysfs)" "$sys0"
family > "$work/f2"
check "per-NAPI values as they were" "$(jq -c '[.[] | [.id, .defer, .gro, .suspend]]' "$work/f2")" \
	"$(jq -c '[.[] | [.id, .defer, .gro, .suspend]]' "$work/f0")"

# ---- 2. threaded on, one thread moved; pinned; rollback exact ----
in_ns sh -c 'echo 1 > /sys/class/net/na0/threaded' || bad "threaded on by hand"
first=$(threads | head -1 | awk '{print $1}')
python3 -c "import os,sys; os.sched_setaffinity(int(sys.argv[1]), {0})" "$first" || bad "moving thread $first"
threads > "$work/t3"
echo "before: $(tr '\n' ';' < "$work/t3")"
p2='{"profile":{"name":"pin","napi":[{"interface":"na0","thread_cpus":"'$last'"}]}}'
post /v1/transactions "$p2"
check "pin apply" "$code/$(jq -r .status <<<"$body")" "201/applied"
id=$(jq .id <<<"$body")
check "pin before-values" "$(jq -c '[.steps[].before] | sort' <<<"$body")" \
	"$(awk '{print $3}' "$work/t3" | jq -Rsc 'split("\n") | map(select(. != "")) | sort')"
check "every thread on CPU $last" "$(threads | awk '{print $3}' | sort -u | tr -d '\n')" "$last"
post "/v1/transactions/$id/rollback" '{}'
check "pin rollback" "$code/$(jq -r .status <<<"$body")" "201/applied"
threads > "$work/t4"
check "threads and CPUs exactly as they were" "$(cat "$work/t4")" "$(cat "$work/t3")"
check "threaded still on" "$(in_ns cat /sys/class/net/na0/threaded)" "1"
in_ns sh -c 'echo 0 > /sys/class/net/na0/threaded'

# ---- 3. refusals: 422 with a path, nothing applied ----
n0=$(ntxn)
refuse() { # NAME PROFILE-NAPI-ARRAY PATH WORDS
	post /v1/plan '{"profile":{"name":"bad","napi":'"$2"'}}'
	check "$1: status" "$code" 422
	jq -e --arg p "$3" --arg w "$4" '.errors | any(.path == $p and (.message | contains($w)))' <<<"$body" >/dev/null &&
		ok || bad "$1: no error at $3 saying '$4': $body"
	post /v1/transactions '{"profile":{"name":"bad","napi":'"$2"'}}'
	check "$1: apply refused" "$code" 422
}
refuse "CPU that does not exist" '[{"interface":"na0","threaded":true,"thread_cpus":"4095"}]' '$.napi[0].thread_cpus' "4095"
refuse "thread_cpus with threaded off" '[{"interface":"na0","thread_cpus":"0"}]' '$.napi[0].thread_cpus' "needs threaded NAPI"
refuse "thread_cpus with threaded false" '[{"interface":"na0","threaded":false,"thread_cpus":"0"}]' '$.napi[0].thread_cpus' "turns it off"
refuse "defer_hard_irqs above 2^31-1" '[{"interface":"na0","defer_hard_irqs":2147483648}]' '$.napi[0].defer_hard_irqs' "2147483647"
refuse "negative timeout" '[{"interface":"na0","gro_flush_timeout_ns":-1}]' '$.napi[0].gro_flush_timeout_ns' "from 0"
refuse "threaded on a device without NAPI" '[{"interface":"nc0","threaded":true}]' '$.napi[0].interface' "no NAPI instance"
refuse "thread_cpus irq without an IRQ" '[{"interface":"na0","threaded":true,"thread_cpus":"irq"}]' '$.napi[0].thread_cpus' "no IRQ"
check "no transaction made by the refusals" "$(ntxn)" "$n0"
check "sysfs untouched by the refusals" "$(sysfs)" "$sys0"
check "no threads after the refusals" "$(threads | wc -l)" "0"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
