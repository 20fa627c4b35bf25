#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench-run puts its transaction back without ever confirming it, also
# when the agent is busy: against a scripted agent (bench_agent.py) whose
# rollback answers 409 "another transaction in flight" a number of times
# before it reverts:
#  - busy 3 times: asked again, reverted in place, exit COMMAND's 0;
#  - --compare 2, busy twice per rollback: every candidate round reverted;
#  - busy for good: given up after its retries, exit 125, host_restored
#    false, left to the confirm window; never a POST .../confirm (which
#    would take the window away).
set -u
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
skip() { echo "SKIP: $*"; exit 77; }
for t in jq python3; do command -v $t >/dev/null || skip "$t is not installed"; done
[ -n "${NT_BIN:-}" ] && [ -x "$NT_BIN" ] || skip "NT_BIN is not set to the nettune binary"
work=$(mktemp -d)
agent=
cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start BUSY: a scripted agent whose rollbacks are refused BUSY times each.
start() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	rm -f "$work/port" "$work/log"
	python3 "$(dirname "$0")/bench_agent.py" "$1" "$work/log" "$work/port" &
	agent=$!
	for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
	url=http://127.0.0.1:$(cat "$work/port")
}
echo '{"name": "p", "sysctl": {"net.core.rmem_max": "999999"}}' > "$work/p.json"
count() { grep -c "$1" "$work/log"; }

start 3
"$NT_BIN" bench-run --agent "$url" --profile "$work/p.json" --report "$work/r1.json" -- true 2> "$work/r1.err"
rc=$?
check "busy 3 times: exit 0 ($rc): $(tail -3 "$work/r1.err")" [ $rc = 0 ]
check "busy 3 times: reverted in place" [ "$(jq -r '.rollback.status + " " + (.host_restored | tostring)' "$work/r1.json")" = "reverted true" ]
check "busy 3 times: 4 rollback requests ($(count 'rollback$'))" [ "$(count 'rollback$')" = 4 ]
check "busy 3 times: never confirmed" [ "$(count '/confirm$')" = 0 ]

start 2
"$NT_BIN" bench-run --agent "$url" --compare 2 --profile "$work/p.json" --report "$work/r2.json" -- \
	echo '{"end": {"sum_received": {"bits_per_second": 1e9}}}' > /dev/null 2> "$work/r2.err"
rc=$?
check "--compare, busy twice a rollback: exit 0 ($rc): $(tail -3 "$work/r2.err")" [ $rc = 0 ]
check "--compare: both candidate rounds reverted" \
	[ "$(jq -c '[.rounds[] | select(.arm == "candidate") | .rollback.status]' "$work/r2.json")" = '["reverted","reverted"]' ]
check "--compare: 6 rollback requests ($(count 'rollback$'))" [ "$(count 'rollback$')" = 6 ]
check "--compare: never confirmed" [ "$(count '/confirm$')" = 0 ]

start 1000
t0=$(date +%s)
"$NT_BIN" bench-run --agent "$url" --profile "$work/p.json" --report "$work/r3.json" -- true 2> "$work/r3.err"
rc=$?
check "busy for good: exit 125 ($rc)" [ $rc = 125 ]
check "busy for good: gave up within 30 s ($(($(date +%s) - t0)) s)" [ $(($(date +%s) - t0)) -lt 30 ]
check "busy for good: host_restored false" [ "$(jq .host_restored "$work/r3.json")" = false ]
check "busy for good: says the confirm window reverts it: $(cat "$work/r3.err" | head -3)" grep -q 'confirm window' "$work/r3.err"
check "busy for good: asked more than once ($(count 'rollback$'))" [ "$(count 'rollback$')" -gt 1 ]
check "busy for good: never confirmed" [ "$(count '/confirm$')" = 0 ]

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
