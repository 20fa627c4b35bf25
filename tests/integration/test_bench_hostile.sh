#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench-run against COMMANDs that misbehave (issue 42's hostile rounds),
# with a scripted agent (bench_agent.py) so that only bench-run is judged:
#  - a background process holding COMMAND's output ends with the round
#    (its process group), and one that left the group with setsid is
#    let go after the grace, said; neither holds the run;
#  - SIGTERM that COMMAND ignores: SIGKILL after the stated grace, the host
#    put back, exit 143;
#  - a round the agent reverted before COMMAND ended is void, said, and the
#    comparison stops (125);
#  - a negative figure fails the round; figures of 1e308 keep the report's
#    arms and the chart finite; a NUL byte before the figure and output past
#    16 MiB are said, not silent;
#  - --json with standard output closed, and a --metric-regex without a
#    direction: refused before any round (2).
set -u
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
jqe() { jq -e "$@" >/dev/null; }
skip() { echo "SKIP: $*"; exit 77; }
for t in jq python3 setsid; do command -v $t >/dev/null || skip "$t is not installed"; done
[ -n "${NT_BIN:-}" ] && [ -x "$NT_BIN" ] || skip "NT_BIN is not set to the nettune binary"
work=$(mktemp -d)
# The holders are sleeps of durations no other process has, so the test
# finds them (and the cleanup ends them) and nothing else.
tag=$$
agent=
cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	pkill -f "sleep 300[12]\\.$tag" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
start() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	rm -f "$work/port" "$work/log"
	python3 "$(dirname "$0")/bench_agent.py" 0 "$work/log" "$work/port" "$@" &
	agent=$!
	for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
	url=http://127.0.0.1:$(cat "$work/port")
}
count() { grep -c "$1" "$work/log"; }
echo '{"name": "p", "sysctl": {"net.core.rmem_max": "999999"}}' > "$work/p.json"
fig='{"end": {"sum_received": {"bits_per_second": 1e9}}}'
# HOLDER N: a process that notes it started, then sleeps with our output.
holder() { printf "touch '%s/held%s'; exec sleep 300%s.%s" "$work" "$1" "$1" "$tag"; }

start
# 1. A background process in COMMAND's group holding its output.
t0=$(date +%s)
"$NT_BIN" bench-run --agent "$url" --compare 2 --profile "$work/p.json" --report "$work/r1.json" -- \
	sh -c "echo '$fig'; ( $(holder 1) ) & sleep 0.5; exit 0" > /dev/null 2> "$work/r1.err"
rc=$?
el=$(($(date +%s) - t0))
check "group holder: exit 0 ($rc): $(tail -2 "$work/r1.err")" [ $rc = 0 ]
check "group holder: not held (${el} s)" [ $el -lt 20 ]
check "group holder: 4 rounds with figures" jqe '[.rounds[].value | numbers] | length == 4' "$work/r1.json"
sleep 0.5
check "group holder: it ran" [ -e "$work/held1" ]
check "group holder: ended with its round" [ -z "$(pgrep -f "sleep 3001\\.$tag")" ]

# 2. One that left the group (setsid): let go after the grace, said.
t0=$(date +%s)
"$NT_BIN" bench-run --agent "$url" --compare 2 --profile "$work/p.json" --report "$work/r2.json" -- \
	sh -c "echo '$fig'; setsid sh -c '$(holder 2)' & sleep 0.5; exit 0" > /dev/null 2> "$work/r2.err"
rc=$?
el=$(($(date +%s) - t0))
check "setsid holder: exit 0 ($rc): $(tail -2 "$work/r2.err")" [ $rc = 0 ]
check "setsid holder: each round let go after the grace, not held (${el} s)" [ $el -lt 40 ]
check "setsid holder: said" grep -q 'still held its standard output 2 s after it exited' "$work/r2.err"
check "setsid holder: the figures read" jqe '[.rounds[].value | numbers] | length == 4' "$work/r2.json"
check "setsid holder: it ran" [ -e "$work/held2" ]
pkill -f "sleep 3002\\.$tag"

# 3. SIGTERM that COMMAND ignores: SIGKILL after 5 s, host put back, 143.
: > "$work/log"
"$NT_BIN" bench-run --agent "$url" --profile "$work/p.json" --report "$work/r3.json" -- \
	sh -c "trap '' TERM; touch '$work/started3'; sleep 60" 2> "$work/r3.err" &
bp=$!
for _ in $(seq 100); do [ -e "$work/started3" ] && break; sleep 0.1; done
t0=$(date +%s)
kill -TERM $bp
wait $bp
rc=$?
el=$(($(date +%s) - t0))
check "ignored SIGTERM: exit 143 ($rc): $(tail -3 "$work/r3.err")" [ $rc = 143 ]
check "ignored SIGTERM: ended within the grace and a little (${el} s)" [ $el -ge 4 -a $el -lt 15 ]
check "ignored SIGTERM: said" grep -q 'did not end within 5 s of Terminated: killed' "$work/r3.err"
check "ignored SIGTERM: rolled back" [ "$(count 'rollback$')" = 1 ]
check "ignored SIGTERM: report says so" jqe '.interrupted_by == "Terminated" and .host_restored == true' "$work/r3.json"

# 4. The agent reverted a candidate round before COMMAND ended: void.
start window-closed
# --seed 7: the first block runs the baseline, then the candidate (round 2).
"$NT_BIN" bench-run --agent "$url" --compare 2 --seed 7 --profile "$work/p.json" --report "$work/r4.json" -- \
	echo "$fig" > /dev/null 2> "$work/r4.err"
rc=$?
check "reverted round: exit 125 ($rc): $(tail -2 "$work/r4.err")" [ $rc = 125 ]
check "reverted round: void, said" grep -q 'round 2 is void: the agent reverted the candidate before COMMAND ended' "$work/r4.err"
check "reverted round: void in the report, no figure, no verdict" \
	jqe '(.rounds[1] | .void == true and .value == null and .reverted_by_agent == true) and (.verdict == null)
	     and (.rounds | length == 2)' "$work/r4.json"
start

# 5. A negative figure fails the round.
"$NT_BIN" bench-run --agent "$url" --compare 2 --profile "$work/p.json" --report "$work/r5.json" -- \
	echo '{"end": {"sum_received": {"bits_per_second": -5e9}}}' > /dev/null 2> "$work/r5.err"
rc=$?
check "negative figure: exit 125 ($rc): $(tail -2 "$work/r5.err")" [ $rc = 125 ]
check "negative figure: said" grep -q 'the figure read is -5e+09 bits/s, which no benchmark measures' "$work/r5.err"
check "negative figure: host put back" jqe '.host_restored == true' "$work/r5.json"

# 6. Figures of 1e308 beside 1: the arms and the chart stay finite.
cat > "$work/alt.sh" <<SH
n=\$(cat "$work/n" 2>/dev/null || echo 0); echo \$((n + 1)) > "$work/n"
case \$((n % 4)) in 0) echo 'v 1e308';; 1) echo 'v 1';; 2) echo 'v 2';; 3) echo 'v 1.7e308';; esac
SH
# --seed 7 orders the rounds A B B A A B B A: the baseline gets the 1e308s.
"$NT_BIN" bench-run --agent "$url" --compare 4 --seed 7 --profile "$work/p.json" --metric-regex 'v ([0-9.e+]+)' \
	--higher-is-better --report "$work/r6.json" --plot "$work/r6.svg" -- sh "$work/alt.sh" > /dev/null 2> "$work/r6.err"
rc=$?
check "1e308: exit 0 ($rc): $(tail -2 "$work/r6.err")" [ $rc = 0 ]
check "1e308: the arms in the report, finite" jqe '.arms.baseline.median >= 1e308 and .arms.candidate.median <= 2
	and (.arms.baseline.iqr | type == "number")' "$work/r6.json"
check "1e308: the chart has no NaN or infinity" bash -c "! grep -qiE 'nan|inf' '$work/r6.svg'"

# 7. A NUL byte before the figure; output past 16 MiB.
"$NT_BIN" bench-run --agent "$url" --compare 2 --profile "$work/p.json" --metric-regex 'v ([0-9]+)' --higher-is-better \
	--report "$work/r7.json" -- sh -c "printf 'x\\000y\\000v 42\\n'" > /dev/null 2> "$work/r7.err"
rc=$?
check "NUL: exit 0 ($rc): $(tail -2 "$work/r7.err")" [ $rc = 0 ]
check "NUL: the figure after it read" jqe '[.rounds[].value] == [42, 42, 42, 42]' "$work/r7.json"
check "NUL: said" grep -q "COMMAND's output holds 2 NUL bytes (the first at byte 1), read as spaces" "$work/r7.err"
"$NT_BIN" bench-run --agent "$url" --compare 2 --profile "$work/p.json" --metric-regex 'v ([0-9]+)' --higher-is-better \
	-- sh -c "head -c 17000000 /dev/zero | tr '\\000' x; echo; echo 'v 3'" > /dev/null 2> "$work/r8.err"
rc=$?
check "17 MB: exit 125, the figure past 16 MiB not read ($rc)" [ $rc = 125 ]
check "17 MB: said: $(grep -m1 dropped "$work/r8.err")" grep -q 'COMMAND printed 17000005 bytes; the first 16 MiB were read, the last 222789 bytes dropped' "$work/r8.err"

# 8. Refused before any round.
: > "$work/log"
"$NT_BIN" bench-run --agent "$url" --compare 2 --profile "$work/p.json" --json -- echo "$fig" >&- 2> "$work/r9.err"
rc=$?
check "--json, stdout closed: exit 2 ($rc): $(cat "$work/r9.err")" [ $rc = 2 ]
check "--json, stdout closed: said" grep -q 'standard output, which is closed' "$work/r9.err"
"$NT_BIN" bench-run --agent "$url" --compare 2 --profile "$work/p.json" --metric-regex 'v ([0-9]+)' -- echo "v 1" \
	> /dev/null 2> "$work/r10.err"
rc=$?
check "--metric-regex without a direction: exit 2 ($rc): $(cat "$work/r10.err")" [ $rc = 2 ]
check "--metric-regex without a direction: says which to add" grep -q -- '--higher-is-better (a rate) or --lower-is-better' "$work/r10.err"
check "nothing asked of the agent by them" [ ! -s "$work/log" ]

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
