#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# nettune tune against a real agent on a copy of the virtio VM fixture, with
# a deterministic stand-in for the benchmark: fig.sh prints "figure: N", N
# the third field of the root's net.ipv4.tcp_rmem / 1000 with a wobble of
# up to 10% from a round counter, so the figure follows the profile applied:
#  - baseline 4096 65536 65536 (about 65); candidates larger (262144:
#    helpful), smaller still (16384: harmful), the baseline's buffers and
#    somaxconn (neutral), and a copy of the helpful one under another name;
#    the copy is merged (said), the harmful one dropped in the race, the
#    neutral one not shown better, the helpful one the winner at its Holm
#    level (three comparisons: 98.33%, 97.5%, 95%), exit 0; every raw
#    figure, the seed, the profiles and each decision with its reason in the
#    report; the chart has each arm and the candidates' intervals; the
#    fixture's /proc/sys byte-identical afterwards; the same --seed gives
#    the same order;
#  - only the neutral candidate: exit 13, the baseline kept, said;
#  - --keep: the winner applied as the desired state (GET /v1/desired);
#  - refused candidates (an unknown field, a sysctl off the allowlist, a
#    space's path the agent refuses): exit 4 naming each candidate and the
#    JSON path, nothing applied; a bad space: exit 2 naming its JSON path;
#  - a candidate planning no change (the host's values): merged into the
#    baseline, said; a budget too small for the rounds: exit 2 after the
#    baseline's timing round, no candidate applied;
#  - SIGTERM in a round, a failed round, and the agent killed (-9) in a
#    candidate round: the host is as it was (the last once the round's
#    confirm window closes on the agent started again);
#  - --json: the report on stdout, parsed (the race's and a refusal's);
#    refused with stdout closed;
#  - a space one factor at a time (fig2.sh grows with two buffers): the
#    best levels combined, raced as its own step, become the winner.
set -u
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
jqe() { jq -e "$@" >/dev/null; }
for t in curl jq python3; do
	command -v $t >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done
[ -n "${NT_BIN:-}" ] && [ -x "$NT_BIN" ] || { echo "SKIP: NT_BIN is not set"; exit 77; }

work=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
root=$work/root
cp -a "$NT_FIXTURES/vm-virtio-2cpu" "$root"
cp -a "$root/proc/sys" "$work/sys0"
start_agent() {
	: > "$work/out"
	"$NT_BIN" serve --listen "127.0.0.1:${1:-0}" --root "$root" --state-dir "$work/state" \
		> "$work/out" 2> "$work/err" &
	pid=$!
	for _ in $(seq 150); do grep -q listening "$work/out" && break; sleep 0.1; done
	url=$(sed -n 's/^listening on //p' "$work/out")
	[ -n "$url" ] || { echo "FAIL: agent did not start"; cat "$work/err"; exit 1; }
}
start_agent
port=${url##*:}
same_sys() { diff -r "$work/sys0" "$root/proc/sys" > "$work/sysdiff" 2>&1; }
txns() { curl -s "$url/v1/transactions?limit=500" | jq '.transactions | length'; }

cat > "$work/fig.sh" <<'SH'
#!/usr/bin/env bash
root=$1 counter=$2
n=$(( $(cat "$counter" 2>/dev/null || echo 0) + 1 )); echo $n > "$counter"
read -r _ _ max < "$root/proc/sys/net/ipv4/tcp_rmem"
[ -n "${FAIL_BELOW:-}" ] && [ "$max" -lt "$FAIL_BELOW" ] && exit 3
[ -n "${SLEEP:-}" ] && sleep "$SLEEP"
echo "figure: $(( max * (1000 + (n * 7919) % 97) / 1000000 ))"
SH
chmod +x "$work/fig.sh"
fig=("$work/fig.sh" "$root" "$work/counter")
metric=(--metric-regex 'figure: ([0-9.]+)' --higher-is-better)
p() { echo "{\"name\": \"$2\", \"sysctl\": {$3}}" > "$work/$1.json"; }
p base base '"net.ipv4.tcp_rmem": "4096 65536 65536"'
p big big '"net.ipv4.tcp_rmem": "4096 131072 262144"'
p big2 big-again '"net.ipv4.tcp_rmem": "4096 131072 262144"'
p small small '"net.ipv4.tcp_rmem": "4096 16384 16384"'
p neutral neutral '"net.ipv4.tcp_rmem": "4096 65536 65536", "net.core.somaxconn": "8192"'
cd "$work"

# 1. The race.
"$NT_BIN" tune --agent "$url" --baseline base.json --budget 2m --max-rounds 8 --seed 11 "${metric[@]}" \
	--report r1.json --plot r1.svg --json big.json small.json neutral.json big2.json -- "${fig[@]}" 2> r1.err > r1.stdout
rc=$?
check "race: exit 0, a winner ($rc): $(tail -3 r1.err)" [ $rc = 0 ]
check "race: the winner is candidate 1" jqe '.winner == 1 and .exit_status == 0' r1.json
check "race: the copy merged into candidate 1, said" jqe '.candidates[3] | .merged_into == 1 and .decision == "merged"' r1.json
check "race: merge said" grep -q 'candidate 4 (big2.json): merged: it plans the same changes as candidate 1 (big.json)' r1.err
check "race: the harmful one dropped in the race, before the end" \
	jqe '.candidates[1] | .decision == "dropped" and .dropped_after_round < 20 and .rounds < 8' r1.json
check "race: the drop said, against the best so far, with its interval" \
	grep -q 'candidate 2 (small.json): dropped: shown worse than the best so far, candidate 1 (big.json): .* CI \[' r1.err
check "race: the neutral one not shown better" jqe '.candidates[2] | (.decision == "not shown better" or (.decision == "dropped" and .final == "not shown better"))' r1.json
check "race: the helpful one raced to --max-rounds, its interval above 1" \
	jqe '.candidates[0] | .rounds == 8 and .holm.ratio_lo > 1 and .holm.outcome == "shown better"' r1.json
check "race: Holm levels 1 - 0.05/(4 - step) for 3 comparisons ($(jq -c '[.holm[] | [.step, .level]]' r1.json))" \
	jqe '.holm_levels.comparisons == 3 and ([.holm[] | ((.level - (1 - 0.05 / (4 - .step))) | fabs) < 1e-12] | all)
	     and ([.holm[].step] | sort == [1, 2, 3])' r1.json
check "race: each comparison's level said" grep -q 'Holm step 1 of 3 at 98.33%' r1.err
check "race: every round's figure in the report, as fig.sh printed it" \
	jqe '[.rounds[] | .value | numbers] | length == (.|length) and length >= 20' r1.json
check "race: baseline rounds near 65, the winner's near 262" \
	jqe '([.rounds[] | select(.arm == "baseline") | .value] | all(. >= 65 and . <= 72)) and
	     ([.rounds[] | select(.candidate == 1) | .value] | all(. >= 262 and . <= 288))' r1.json
check "race: the seed and the candidates' profiles" \
	jqe '.seed == "11" and .candidates[0].profile.sysctl["net.ipv4.tcp_rmem"] == "4096 131072 262144" and .candidates[0].file == "big.json"' r1.json
check "race: every decision has a reason" jqe '(.decisions | length >= 4) and ([.decisions[] | .reason | length > 10] | all)' r1.json
check "race: each applied round reverted in place" \
	jqe '[.rounds[] | .rollback.status == "reverted"] | all' r1.json
check "race: host restored" jqe '.host_restored == true and .interrupted_by == null' r1.json
check "race: the fixture's /proc/sys as it was: $(head -3 sysdiff 2>/dev/null)" same_sys
python3 - r1.svg "$(jq '[.holm[] | select(.ratio_lo != null)] | length' r1.json)" > svg.out 2>&1 <<'PY'
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
arms = root.findall("s:g[@class='arm']", ns)
assert len(arms) == 4, len(arms)  # the baseline and three candidates (the copy merged)
assert arms[0].get("data-name").startswith("baseline"), arms[0].get("data-name")
assert arms[0].find("s:g[@class='interval']", ns) is None
# An interval for each candidate whose comparison has one (bounded), the winner's among them.
assert arms[1].find("s:g[@class='interval']", ns) is not None
assert len(root.findall(".//s:g[@class='interval']", ns)) == int(sys.argv[2]), sys.argv[2]
assert int(arms[1].get("data-rounds")) == len(arms[1].findall("s:circle[@class='round']", ns)) == 8
print("svg ok")
PY
check "race: the chart: four arms, the candidates' intervals: $(cat svg.out)" grep -q '^svg ok' svg.out

check "race: --json on stdout is the report" cmp -s <(jq -S . r1.stdout) <(jq -S . r1.json)
python3 - r1.stdout > json.out 2>&1 <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))  # one document, nothing else on stdout
assert doc["winner"] == 1 and doc["seed"] == "11" and doc["exit_status"] == 0, doc["winner"]
assert 0 < doc["budget_used_s"] <= doc["budget_s"] == 120, doc["budget_used_s"]
assert len(doc["rounds"]) >= 20 and all(isinstance(r["value"], (int, float)) for r in doc["rounds"])
raced = [c for c in doc["candidates"] if "holm" in c]
assert len(raced) == 3, len(raced)
for c in raced:
    h = c["holm"]
    assert {"ratio", "ratio_lo", "ratio_hi", "p_value", "level", "step", "outcome"} <= h.keys(), h
    assert c["reason"] and c["decision"], c
dropped = [c for c in doc["candidates"] if c["decision"] == "dropped"]
assert dropped and all("shown worse" in d["reason"] or "dropped in the race" in d["reason"] for d in dropped), dropped
print("json ok")
PY
check "race: --json parses: winner, seed, budget used, each candidate's ratio/CI/p/level, the dropped and why: $(cat json.out)" grep -q '^json ok' json.out

check "race: each candidate judged against the baseline's rounds of its own sweeps" \
	jqe '.candidates[1].baseline_rounds_compared == .candidates[1].rounds and .candidates[0].baseline_rounds_compared == 8' r1.json

# The same seed repeats the order.
rm -f counter
"$NT_BIN" tune --agent "$url" --baseline base.json --budget 2m --max-rounds 8 --seed 11 "${metric[@]}" \
	--report r1b.json big.json small.json neutral.json big2.json -- "${fig[@]}" 2> r1b.err
check "--seed 11 again: the same rounds in the same order" \
	[ "$(jq -c '[.rounds[].arm]' r1.json)" = "$(jq -c '[.rounds[].arm]' r1b.json)" ]

# 2. Nothing better: exit 13, the baseline kept. Seeded: the stand-in's wobble
# follows a round counter, so an order drawn anew made the neutral candidate
# "shown worse" now and then (one run of five here).
"$NT_BIN" tune --agent "$url" --baseline base.json --max-rounds 6 --seed 7 "${metric[@]}" --report r2.json \
	neutral.json -- "${fig[@]}" 2> r2.err
rc=$?
check "neutral only: exit 13 ($rc): $(tail -2 r2.err)" [ $rc = 13 ]
check "neutral only: said" grep -q 'no candidate was shown better than the baseline (base.json): the baseline is kept' r2.err
check "neutral only: one comparison at 95%" jqe '.winner == null and .holm[0].level == 0.95 and .holm[0].outcome == "not shown better"' r2.json
check "neutral only: /proc/sys as it was" same_sys

# 2b. The other figures of COMMAND's output (issue 42): a neper-speaking
# stand-in whose p99 latency falls as the buffer grows (1000/max ms) and
# whose CPU time does not move. Each candidate's figures against the
# baseline's rounds of its sweeps, in the report and under the table.
cat > "$work/fig-neper.sh" <<'SH'
#!/usr/bin/env bash
root=$1
read -r _ _ max < "$root/proc/sys/net/ipv4/tcp_rmem"
echo "throughput=$(( max / 1000 ))"
echo "throughput_units=Mbit/s"
echo "num_transactions=1000"
echo "latency_p99=$(python3 -c "print(1.0 / $max)")"
echo "utime_start=1.0"
echo "utime_end=1.5"
echo "stime_start=0.0"
echo "stime_end=0.25"
# Its -A FILE: one flow, two intervals, each at max bytes/s.
{ echo "tid,flow_id,time,bytes_read,bytes_read/s,utime,stime,maxrss,minflt,majflt,nvcsw,nivcsw"
  for t in 1 2 3; do echo "0,0,$t.000000000,$(( t * max )),0,0,0,0,0,0,0,0"; done; } > "$SAMPLES"
SH
chmod +x "$work/fig-neper.sh"
SAMPLES=$work/samples.csv "$NT_BIN" tune --agent "$url" --baseline base.json --max-rounds 5 --seed 3 --metric neper \
	--neper-samples "$work/samples.csv" --report r2b.json big.json -- "$work/fig-neper.sh" "$root" 2> r2b.err
rc=$?
check "neper: exit 0, a winner ($rc): $(tail -2 r2b.err)" [ $rc = 0 ]
check "neper: the candidate's figures, the primary first ($(jq -c '[.candidates[0].metrics[].name]' r2b.json))" \
	jqe '.candidates[0].metrics | .[0].primary == true and .[0].name == "throughput" and
	     (map(.name) | index("latency_p99")) != null and (map(.name) | index("cpu_s")) != null' r2b.json
check "neper: p99 latency lower with the larger buffer, a quarter of the baseline's" \
	jqe '.candidates[0].metrics[] | select(.name == "latency_p99") |
	     .better == "lower" and .verdict == "better" and (.ratio - 0.25 | fabs) < 1e-9 and
	     .baseline_rounds == .candidate_rounds and .candidate_rounds == 5' r2b.json
check "neper: CPU time unchanged" \
	jqe '.candidates[0].metrics[] | select(.name == "cpu_s") | .ratio == 1 and .verdict == "no significant difference"' r2b.json
check "neper: the samples file's intervals, higher is better, 4x the baseline's in bits/s" \
	jqe '.candidates[0].metrics[] | select(.name == "interval_rate_min") |
	     .better == "higher" and .unit == "bits/s" and .verdict == "better" and (.ratio - 4 | fabs) < 1e-9 and
	     .baseline_median == 65536 * 8' r2b.json
check "neper: the table names them under the candidate" \
	grep -A3 "^the other figures of COMMAND's output, each candidate against the baseline's rounds" r2b.err
check "neper: a latency_p99 row with its verdict" grep -Eq '^latency_p99 +lower +5\+5 .* better$' r2b.err
check "neper: /proc/sys as it was" same_sys
# A samples file no round wrote: said each round, the figures left out, the
# run goes on.
touch -d '2020-01-01' "$work/stale.csv"
SAMPLES=/dev/null "$NT_BIN" tune --agent "$url" --baseline base.json --max-rounds 4 --seed 3 --metric neper \
	--neper-samples "$work/stale.csv" --report r2c.json big.json -- "$work/fig-neper.sh" "$root" 2> r2c.err
check "neper: a stale samples file said, not read ($?)" \
	grep -q "round 1: COMMAND wrote no $work/stale.csv (neper's -A $work/stale.csv): its interval figures are left out" r2c.err
check "neper: no interval figure from it" jqe '[.candidates[0].metrics[].name | select(startswith("interval_"))] | length == 0' r2c.json
"$NT_BIN" bench-run --agent "$url" --profile big.json --neper-samples x.csv -- true 2> r2d.err
check "neper: --neper-samples without --compare refused ($?)" grep -qF -- '--neper-samples and --also-* are for --compare ROUNDS' r2d.err

# 2c. Figures of any output (--also-json, --also-regex): a JSON-speaking
# stand-in whose "lat" falls as the buffer grows; the same figure read by a
# regular expression and said lower-is-better turns "better" into "worse":
# the direction is the one given.
cat > "$work/fig-json.sh" <<'SH'
#!/usr/bin/env bash
read -r _ _ max < "$1/proc/sys/net/ipv4/tcp_rmem"
echo "{\"figure\": $(( max / 1000 )), \"lat\": {\"p99\": $(( 100000000 / max ))}, \"loss\": 0.5}"
SH
chmod +x "$work/fig-json.sh"
"$NT_BIN" tune --agent "$url" --baseline base.json --max-rounds 4 --seed 3 --metric-json figure --higher-is-better \
	--also-json lower:lat.p99 --also-regex 'lower:fig:"figure": ([0-9]+)' --also-json higher:nothing.here \
	--report r2e.json big.json -- "$work/fig-json.sh" "$root" 2> r2e.err
rc=$?
check "also: exit 0 ($rc): $(tail -2 r2e.err)" [ $rc = 0 ]
check "also: lat.p99 lower and better, a quarter ($(jq -c '.candidates[0].metrics[1:]' r2e.json))" \
	jqe '.candidates[0].metrics[] | select(.name == "lat.p99") | .better == "lower" and .verdict == "better" and (.ratio - 0.25 | fabs) < 0.01' r2e.json
check "also: the figure again, said lower-is-better: worse" \
	jqe '.candidates[0].metrics[] | select(.name == "fig") | .better == "lower" and .verdict == "worse"' r2e.json
check "also: a path no round printed is not shown" \
	jqe '[.candidates[0].metrics[] | select(.name == "nothing.here")] | length == 0' r2e.json
check "also: each round's metrics hold them" jqe '[.rounds[].metrics | has("lat.p99") and has("fig")] | all' r2e.json
also_bad() {
	"$NT_BIN" tune --agent "$url" --max-rounds 4 --metric-json figure --higher-is-better "$@" big.json -- true 2> rb.err
	local rc=$?
	[ $rc = 2 ] || { echo "exit $rc: $(cat rb.err)"; return 1; }
}
check "also: no direction refused" also_bad --also-json up:lat.p99
grep -q "does not start with its better direction, higher: (a rate) or lower: (a time, a loss)" rb.err || bad "also: no direction said: $(cat rb.err)"
check "also: a regex without a name refused" also_bad --also-regex 'lower:p99=([0-9]+)'
grep -q "wants DIRECTION:NAME:RE" rb.err || bad "also: no name said: $(cat rb.err)"
check "also: a bad expression refused" also_bad --also-regex 'lower:x:(['
check "also: a name given twice refused" also_bad --also-json lower:a --also-json higher:a
grep -q "two figures named 'a'" rb.err || bad "also: the name twice said: $(cat rb.err)"
check "also: nine times refused" also_bad $(for i in 1 2 3 4 5 6 7 8 9; do echo --also-json lower:p$i; done)
grep -q -- "--also-json is given at most 8 times" rb.err || bad "also: nine said: $(cat rb.err)"

# 3. Refused before anything is applied, each named with its JSON path.
before=$(txns)
echo '{"name": "typo", "ringz": []}' > typo.json
p off off '"net.ipv4.tcp_bogus": "1"'
"$NT_BIN" tune --agent "$url" "${metric[@]}" --json big.json typo.json off.json -- "${fig[@]}" 2> r3.err > r3.stdout
rc=$?
check "refused: exit 4 ($rc)" [ $rc = 4 ]
check "refused: --json names each refused candidate, no winner, no round" jqe '
	.exit_status == 4 and .winner == null and (.rounds | length == 0) and .budget_used_s == null
	and ([.candidates[] | select(.refused) | .id] == [2, 3])' r3.stdout
check "refused: the unknown field named" grep -q "candidate 2 (typo.json) was refused: .*\$.ringz: unknown field 'ringz'" r3.err
check "refused: the sysctl named" grep -q "candidate 3 (off.json) was refused: .*\$.sysctl\['net.ipv4.tcp_bogus'\]" r3.err
check "refused: nothing applied" [ "$(txns)" = "$before" ]
cat > space-bad.json <<'JSON'
{"base": {"name": "s"}, "parameters": [{"path": "sysctl.net.ipv4.tcp_rmem", "values": ["4096 65536 262144"]},
 {"path": "sysctl.net.ipv4.tcp_bogus", "values": ["1"]}]}
JSON
"$NT_BIN" tune --agent "$url" --space space-bad.json "${metric[@]}" -- "${fig[@]}" 2> r3b.err
rc=$?
check "space refused: exit 4 ($rc)" [ $rc = 4 ]
check "space refused: the candidate by its values and the path" \
	grep -q "candidate 1 (sysctl.net.ipv4.tcp_rmem=4096 65536 262144, sysctl.net.ipv4.tcp_bogus=1) was refused: .*\$.sysctl\['net.ipv4.tcp_bogus'\]" r3b.err
echo '{"parameters": [{"path": "rings[0].rx", "values": [1024]}]}' > space-path.json
"$NT_BIN" tune --agent "$url" --space space-path.json "${metric[@]}" -- "${fig[@]}" 2> r3c.err
rc=$?
check "bad space: exit 2 ($rc)" [ $rc = 2 ]
check "bad space: its JSON path named" grep -q 'space-path.json: \$.parameters\[0\].path: .*no .rings.' r3c.err
check "refused: nothing applied by any" [ "$(txns)" = "$before" ]

# 4. A space: each candidate from the base, the host's own value merged.
cat > space.json <<'JSON'
{"base": {"name": "s"}, "parameters": [{"path": "sysctl.net.ipv4.tcp_rmem",
 "values": ["4096 131072 33554432", "4096 131072 262144", "4096 16384 16384"]}]}
JSON
"$NT_BIN" tune --agent "$url" --space space.json --max-rounds 5 "${metric[@]}" --report r4.json -- "${fig[@]}" 2> r4.err
rc=$?
check "space: 3 candidates, factorial, said" grep -q 'space.json: 3 candidates (factorial)' r4.err
check "space: the host's own value merged into the baseline" \
	grep -q 'candidate 1 (sysctl.net.ipv4.tcp_rmem=4096 131072 33554432): merged: it plans the same changes as the baseline (no change to this host)' r4.err
check "space: two comparisons" jqe '.holm_levels.comparisons == 2 and (.candidates[1].assignment["sysctl.net.ipv4.tcp_rmem"] == "4096 131072 262144")' r4.json
check "space: the smaller buffers are not the winner ($rc)" jqe '.winner != 3' r4.json
check "space: /proc/sys as it was" same_sys

# 4b. One factor at a time, then the best levels combined: fig2.sh's figure
# grows with both buffers, so each factor's best level helps and the two
# together help more; the combination is raced against the winner and the
# baseline in a step of its own and becomes the winner.
cat > fig2.sh <<'SH'
#!/usr/bin/env bash
root=$1 counter=$2
n=$(( $(cat "$counter" 2>/dev/null || echo 0) + 1 )); echo $n > "$counter"
read -r _ _ r < "$root/proc/sys/net/ipv4/tcp_rmem"
read -r _ _ w < "$root/proc/sys/net/ipv4/tcp_wmem"
echo "figure: $(( (r + w) * (1000 + (n * 7919) % 97) / 1000000 ))"
SH
chmod +x fig2.sh
b2='"net.ipv4.tcp_rmem": "4096 65536 65536", "net.ipv4.tcp_wmem": "4096 16384 65536"'
echo "{\"name\": \"base2\", \"sysctl\": {$b2}}" > base2.json
cat > space2.json <<JSON
{"base": {"name": "s2", "sysctl": {$b2}}, "max_candidates": 5, "parameters": [
 {"path": "sysctl.net.ipv4.tcp_rmem", "values": ["4096 131072 262144", "4096 131072 524288", "4096 16384 16384"]},
 {"path": "sysctl.net.ipv4.tcp_wmem", "values": ["4096 16384 262144", "4096 16384 16384"]}]}
JSON
t0=$(date +%s%N)
"$NT_BIN" tune --agent "$url" --space space2.json --baseline base2.json --max-rounds 6 --seed 5 "${metric[@]}" \
	--report r4b.json -- ./fig2.sh "$root" "$work/counter2" 2> r4b.err
rc=$?
echo "one factor at a time, then combined: exit $rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
check "combined: 5 candidates one factor at a time, exit 0 ($rc): $(tail -3 r4b.err)" \
	bash -c '[ "$0" = 0 ] && grep -q "space2.json: 5 candidates (one-factor-at-a-time)" r4b.err' $rc
check "combined: said, with each factor's best level" grep -q \
	'best levels combined: candidate 6 (sysctl.net.ipv4.tcp_rmem=4096 131072 524288, sysctl.net.ipv4.tcp_wmem=4096 16384 262144), raced against the winner candidate 2' r4b.err
check "combined: raced in a step of its own, 6 rounds of each of the three arms" jqe '
	([.rounds[] | select(.step == "combined") | .candidate] | group_by(.) | map(length)) == [6, 6, 6]' r4b.json
check "combined: shown better than the baseline and the race's winner, now the winner ($(jq -c '.combined | [.against_baseline.ratio, .against_winner.ratio]' r4b.json))" jqe '
	.combined.outcome == "winner" and .combined.winner_before == 2 and .winner == 6
	and .combined.against_baseline.outcome == "shown better" and .combined.against_winner.outcome == "shown better"
	and .candidates[5].combined and .candidates[5].decision == "winner"
	and .candidates[1].decision == "shown better, not the best"' r4b.json
check "combined: /proc/sys as it was" same_sys

# 5. A budget too small for the rounds: refused after the baseline's round.
before=$(txns)
SLEEP=0.4 "$NT_BIN" tune --agent "$url" --budget 3s "${metric[@]}" --report r5.json big.json small.json -- "${fig[@]}" 2> r5.err
rc=$?
check "small budget: exit 2 ($rc): $(tail -1 r5.err)" [ $rc = 2 ]
check "small budget: said with the rounds needed" grep -q -- '--budget 3 s is too small: a round took .* and 5 rounds of each of the 3 arms' r5.err
check "small budget: no candidate applied" [ "$(txns)" = "$before" ]
check "small budget: one round, the baseline's" jqe '[.rounds[].arm] == ["baseline"]' r5.json

# 6. SIGTERM in a candidate round: put back, 143, a report.
SLEEP=0.3 "$NT_BIN" tune --agent "$url" --baseline base.json --max-rounds 8 "${metric[@]}" --report r6.json \
	big.json small.json -- "${fig[@]}" 2> r6.err &
tp=$!
for _ in $(seq 100); do grep -q 'round 4,' r6.err 2>/dev/null && break; sleep 0.1; done
sleep 0.1
kill -TERM $tp
wait $tp
rc=$?
check "SIGTERM: exit 143 ($rc): $(tail -2 r6.err)" [ $rc = 143 ]
check "SIGTERM: the report says so" jqe '.interrupted_by == "Terminated" and .host_restored == true and .stopped_by == "signal"' r6.json
check "SIGTERM: /proc/sys as it was" same_sys

# 7. A failed round: the search stops, the host is as it was.
FAIL_BELOW=20000 "$NT_BIN" tune --agent "$url" --max-rounds 6 "${metric[@]}" --report r7.json big.json small.json \
	-- "${fig[@]}" 2> r7.err
rc=$?
check "failed round: exit 125 ($rc)" [ $rc = 125 ]
check "failed round: said" grep -q 'COMMAND exited with 3; the search stops' r7.err
check "failed round: the report says why it stopped" jqe '.stopped_by == "a failed round" and .host_restored == true' r7.json
check "failed round: /proc/sys as it was" same_sys

# 8. --keep: the winner becomes the desired state.
"$NT_BIN" tune --agent "$url" --baseline base.json --max-rounds 5 --keep "${metric[@]}" --report r8.json \
	big.json small.json -- "${fig[@]}" 2> r8.err
rc=$?
check "--keep: exit 0 ($rc): $(tail -2 r8.err)" [ $rc = 0 ]
check "--keep: applied" jqe '.keep.status == "applied" and .keep.candidate == 1' r8.json
check "--keep: the desired state is the winner" [ "$(curl -s "$url/v1/desired" | jq -r '.profile.name')" = big ]
check "--keep: the host has its value" grep -q '262144' "$root/proc/sys/net/ipv4/tcp_rmem"
curl -s -X DELETE "$url/v1/desired" > /dev/null
"$NT_BIN" rollback --agent "$url" "$(jq .keep.transaction r8.json)" > /dev/null 2>&1
check "--keep: rolled back by hand: /proc/sys as it was" same_sys

# 9. The agent killed in a candidate round: the CLI fails (125); the round's
# confirm window (4 s here) puts the host back once the agent runs again.
SLEEP=1 "$NT_BIN" tune --agent "$url" --max-rounds 6 --confirm-timeout 4 "${metric[@]}" --report r9.json \
	big.json small.json -- "${fig[@]}" 2> r9.err &
tp=$!
for _ in $(seq 200); do grep -q 'round [2-9], .*candidate' r9.err 2>/dev/null && break; sleep 0.05; done
sleep 0.3
check "dead agent: a candidate applied when the agent died" bash -c '! diff -rq "$0" "$1" > /dev/null' "$work/sys0" "$root/proc/sys"
kill -9 "$pid"; wait "$pid" 2>/dev/null; pid=
wait $tp
rc=$?
check "dead agent: exit 125 ($rc): $(tail -2 r9.err)" [ $rc = 125 ]
check "dead agent: the report says the host is not known to be restored" jqe '.host_restored == false' r9.json
start_agent "$port"
for _ in $(seq 100); do same_sys && break; sleep 0.1; done
check "dead agent: restarted, /proc/sys as it was once the window closed: $(head -3 sysdiff 2>/dev/null)" same_sys

# 10. Usage.
"$NT_BIN" tune --agent "$url" "${metric[@]}" big.json 2> r10.err
check "no COMMAND: exit 2" [ $? = 2 ]
"$NT_BIN" tune --agent "$url" "${metric[@]}" big.json --budget 1m -- true 2> r10.err
check "an option after a candidate: exit 2" [ $? = 2 ]
check "an option after a candidate: said" grep -q 'options go before the candidates' r10.err
"$NT_BIN" tune --agent "$url" --max-rounds 4 "${metric[@]}" big.json small.json neutral.json -- true 2> r10.err
check "--max-rounds below what Holm needs: exit 2" [ $? = 2 ]
check "--max-rounds: said" grep -q -- '--max-rounds 4 cannot show anything: the first of 3 comparisons is judged at 98.33%' r10.err
"$NT_BIN" tune --agent "$url" --space space.json "${metric[@]}" big.json -- true 2> r10.err
check "--space with a candidate file: exit 2" [ $? = 2 ]
check "--space with a candidate file: said" grep -q -- '--space takes no CANDIDATE.json' r10.err
"$NT_BIN" help tune > r10.out
check "help tune lists its options" grep -q -- '--space.*--budget.*--keep.*--max-rounds' r10.out
"$NT_BIN" tune --agent "$url" --json "${metric[@]}" big.json -- true 2> r10.err >&-
check "--json with stdout closed: exit 2" [ $? = 2 ]
check "--json with stdout closed: said" grep -q -- '--json writes the result to standard output, which is closed' r10.err
"$NT_BIN" --help | grep -q '^  tune --space SPACE.json'
check "--help shows tune" [ $? = 0 ]

comp() { bash -c "source '$NT_SRC/deploy/nettune.bash-completion'; COMP_WORDS=($1); COMP_CWORD=$2; _nettune; echo \"\${COMPREPLY[*]}\""; }
check "completion offers tune" grep -qw tune <<<"$(comp "'$NT_BIN' ''" 1)"
check "completion offers tune --budget" [ "$(comp "'$NT_BIN' tune --bud" 2)" = --budget ]
check "completion offers candidate files" [ "$(comp "'$NT_BIN' tune --keep bi" 3)" = "big.json big2.json" ]
check "completion offers no candidate after --" [ -z "$(comp "'$NT_BIN' tune big.json -- bi" 4)" ]

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
