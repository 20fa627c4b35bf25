#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# nettune bench-run --compare on this machine's kernel: the agent and the
# iperf3 client in one network namespace, the iperf3 server in another,
# a veth pair between them, so every sysctl the profiles touch is the
# client namespace's own (net.ipv4.tcp_rmem and tcp_wmem are per namespace)
# and the host's stay as they are:
#  - a harmful candidate (tcp_rmem and tcp_wmem of "4096 4096 4096") against
#    the namespace as it is, iperf3 -R so that the client namespace receives
#    (a veth's RTT is so short that a 4 KB send buffer costs nothing, while
#    a 4 KB receive window cuts the rate some twentyfold; measured here, the
#    send side alone came out faster): reported worse with p < 0.05, its
#    95% interval of the ratio below 0.98, so --require-no-loss fails
#    (exit 12, shown worse); the table, --json, --report and an SVG chart
#    that parses and shows both arms' rounds;
#  - the same gate on 3 + 3 rounds is refused before any round (they cannot
#    reach 95% confidence: the gate could never be shown), exit 2;
#  - an A/A run (the same profile as candidate and baseline) does not pass
#    --require-gain 20% (exit 10 or 11, saying which), and its interval holds
#    1.0 unless it is one of the 5% that miss. The tiny buffers on both
#    arms: a window-limited rate varies less than a free one;
#  - SIGTERM in a candidate round: rolled back, 143; SIGKILL: the agent's
#    confirm window puts it back;
#  - after each, the namespace's and the host's values byte-identical.
# Everything started is stopped on every exit (traps).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
jqe() { jq -e "$@" >/dev/null; }
live_require ip jq curl iperf3 python3
live_pair nt-cmp ntcmp
ip -n "$ns" addr add 10.215.0.1/30 dev ntcmpa
ip -n "$peer" addr add 10.215.0.2/30 dev ntcmpb
keys=(net/ipv4/tcp_rmem net/ipv4/tcp_wmem net/core/rmem_max net/core/wmem_max net/core/netdev_max_backlog)
# The values of the client namespace and of the host, one "where key value" a line.
values() {
	for k in "${keys[@]}"; do printf 'host %s %s\n' "$k" "$(cat /proc/sys/$k)"; done
	for k in "${keys[@]}"; do printf '%s %s %s\n' "$ns" "$k" "$(ip netns exec "$ns" cat /proc/sys/$k 2>/dev/null)"; done
}
values > "$work/values0"
start_agent
[ -n "$url" ] || { bad "agent did not start: $(cat "$work/err")"; exit 1; }
live_iperf3_server 10.215.0.2
ina() { ip netns exec "$ns" "$@"; }
nt() { ina "$NT_BIN" "$@"; }

cat > "$work/harm.json" <<'JSON'
{"name": "tiny-buffers", "sysctl": {"net.ipv4.tcp_rmem": "4096 4096 4096", "net.ipv4.tcp_wmem": "4096 4096 4096"}}
JSON
iperf=(iperf3 -c 10.215.0.2 -t 1 -R -J)

# 1. The harmful candidate: worse, p < 0.05, --require-no-loss fails.
start=$(date +%s)
nt bench-run --agent "$url" --compare 5 --profile "$work/harm.json" --require-no-loss \
	--plot "$work/r1.svg" --report "$work/r1.json" --json -- "${iperf[@]}" > "$work/r1.stdout" 2> "$work/r1.err"
rc=$?
echo "harmful candidate: exit $rc in $(($(date +%s) - start)) s"
sed -n '/^bench-run --compare/,$p' "$work/r1.err"
check "harmful: exit 12, --require-no-loss failed ($rc): $(tail -3 "$work/r1.err")" [ $rc = 12 ]
# 10 rounds in 5 blocks of one of each arm, blocks mirrored in pairs (AB BA
# or BA AB) as the printed seed says.
check "harmful: 10 rounds in ABBA blocks ($(jq -c '[.rounds[].arm[0:1]] | join("")' "$work/r1.json"), seed $(jq .design.seed "$work/r1.json"))" jqe '
	[.rounds[] | .arm] as $a | ($a | length == 10)
	and ([range(0; 10; 2) | $a[.] != $a[. + 1]] | all)
	and ([range(0; 8; 4) | $a[.] == $a[. + 3]] | all)
	and ([.rounds[].block] == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5])' "$work/r1.json"
check "harmful: every round has a figure from iperf3" jqe '[.rounds[].value | numbers] | length == 10' "$work/r1.json"
check "harmful: read by the iperf3 reader, in bits/s" [ "$(jq -r '.metric.reader + " " + .metric.unit' "$work/r1.json")" = "iperf3 bits/s" ]
check "harmful: verdict worse" [ "$(jq -r .verdict "$work/r1.json")" = worse ]
p=$(jq .test.p_value "$work/r1.json")
check "harmful: p < 0.05 ($p)" jqe '.test.p_value < 0.05' "$work/r1.json"
check "harmful: ratio < 1 ($(jq .ratio "$work/r1.json"))" jqe '.ratio < 1 and .gain < 0' "$work/r1.json"
check "harmful: the median of each arm is the median of its rounds" jqe '
	def med: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	([.rounds[] | select(.arm == "baseline") | .value] | med) == .arms.baseline.median and
	([.rounds[] | select(.arm == "candidate") | .value] | med) == .arms.candidate.median' "$work/r1.json"
check "harmful: each candidate round applied and reverted at once" jqe '
	[.rounds[] | select(.arm == "candidate") | .transaction.status == "pending_confirm" and .rollback.status == "reverted"
	 and .rollback.id == .transaction.id] | length == 5 and all' "$work/r1.json"
check "harmful: baseline rounds apply nothing" jqe '[.rounds[] | select(.arm == "baseline") | .transaction] | all(. == null)' "$work/r1.json"
check "harmful: per-round counters (NET_RX softirqs > 0 in every round)" \
	jqe '[.rounds[].counters.net_rx_softirqs] | length == 10 and all(. > 0)' "$work/r1.json"
check "harmful: per-round CPU cost (busy CPU-seconds > 0 in every round)" \
	jqe '[.rounds[].counters.cpu_busy_s] | length == 10 and all(type == "number" and . > 0)' "$work/r1.json"
check "harmful: the cost of each arm with its ratio ($(jq -c .cost.cpu_busy_s "$work/r1.json"))" \
	jqe '.cost.cpu_busy_s | .baseline_rounds == 5 and .candidate_rounds == 5 and .baseline_median > 0 and
	     .candidate_median > 0 and (.ratio | type == "number")' "$work/r1.json"
check "harmful: the figure per CPU-second, a rate's" jqe '.cost.figure_per_cpu_second.baseline_median > 0' "$work/r1.json"
check "harmful: the table shows the cost" grep -q '^CPU busy a round (host-wide): baseline median' "$work/r1.err"
# By class: the rounds' CPU on the CPUs that served NIC interrupts (eth0's
# here: the veths have none) has a cost row when every arm has such rounds;
# no --near, so no application class.
check "harmful: a cost row per class where each arm burned CPU in it ($(jq -c '.cost | keys' "$work/r1.json"))" jqe '
	([.rounds[] | select(.block != null and (.counters.cpu_busy_nic_irq_s // 0) > 0) | .arm] | unique | length) as $arms |
	(if $arms == 2 then .cost.cpu_busy_nic_irq_s.baseline_median > 0 else .cost.cpu_busy_nic_irq_s == null end) and
	.cost.cpu_busy_app_s == null and ([.rounds[].counters.cpu_busy_app_s] | all(. == null))' "$work/r1.json"
# Several figures a round: iperf3's CPU in every round, beside the primary.
check "harmful: iperf3's CPU figures in every round" \
	jqe '[.rounds[].metrics | .cpu_host_percent, .cpu_remote_percent | numbers] | length == 20' "$work/r1.json"
check "harmful: each figure compared, the primary first and alone gated ($(jq -c '[.metrics[] | .name + ":" + .verdict]' "$work/r1.json"))" jqe '
	.metrics[0] | .name == "throughput" and .primary and .gated and .verdict == "worse" and .p_value < 0.05' "$work/r1.json"
check "harmful: the other figures compared, none gated" jqe '
	[.metrics[1:][] | select(.gated | not) | .name] as $n | ($n | index("cpu_host_percent")) != null
	and ([.metrics[1:][] | .better] | all(. == "lower"))
	and ([.metrics[] | select(.baseline_rounds == 5 and .candidate_rounds == 5)] | length) == (.metrics | length)' "$work/r1.json"
check "harmful: the table shows them, not gated" grep -q "^the other figures of COMMAND's output, not gated (--require-gain and --require-no-loss judge throughput alone)" "$work/r1.err"
check "harmful: retransmits compared when iperf3 gave them" jqe '
	([.rounds[].metrics.retransmits | numbers] | length) as $r | $r == 0 or ([.metrics[].name] | index("retransmits")) != null' "$work/r1.json"
check "harmful: --json on stdout is the report" cmp -s <(jq -S . "$work/r1.stdout") <(jq -S . "$work/r1.json")
check "harmful: the table says which gate failed" grep -q -- '--require-no-loss 2%: FAILED' "$work/r1.err"
check "harmful: the effect's 95% interval lies below 0.98 ($(jq -c '.effect | [.ratio_lo, .ratio, .ratio_hi, .confidence]' "$work/r1.json"))" \
	jqe '.effect.bounded and .effect.confidence >= 0.95 and .effect.ratio_hi < 0.98 and .effect.ratio_lo <= .effect.ratio and .effect.ratio <= .effect.ratio_hi' "$work/r1.json"
check "harmful: the table shows the interval" grep -q '^effect: candidate/baseline .* CI \[' "$work/r1.err"
check "harmful: gates in the report" jqe '.gates.exit_status == 12 and .gates.loss_margin == 0.02 and .gates.rounds_needed == null' "$work/r1.json"
check "harmful: host restored" jqe '.host_restored == true' "$work/r1.json"
values > "$work/values1"
check "values byte-identical after the harmful run" cmp -s "$work/values1" "$work/values0"
python3 - "$work/r1.svg" > "$work/svg.out" 2>&1 <<'PY'
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
arms = root.findall("s:g[@class='arm']", ns)
assert len(arms) == 2, len(arms)
for g in arms:
    dots = g.findall("s:circle[@class='round']", ns)
    assert len(dots) == 5, (g.get("data-name"), len(dots))
    assert g.find("s:line[@class='median']", ns) is not None
texts = " ".join("".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text"))
assert "bit/s" in texts, texts
assert "baseline" in texts and "candidate" in texts, texts
print("svg ok:", [g.get("data-name") for g in arms])
PY
check "the SVG parses and shows both arms, 5 rounds each, medians, the unit: $(cat "$work/svg.out")" grep -q '^svg ok' "$work/svg.out"

# 2. A/A: the same profile on both arms does not pass --require-gain 20%.
nt bench-run --agent "$url" --compare 5 --profile "$work/harm.json" --baseline "$work/harm.json" \
	--require-gain 20% --report "$work/r2.json" -- "${iperf[@]}" > /dev/null 2> "$work/r2.err"
rc=$?
sed -n '/^candidate\/baseline/,$p' "$work/r2.err"
check "A/A: exit 10 or 11 ($rc): $(tail -2 "$work/r2.err")" [ $rc = 10 -o $rc = 11 ]
# 10 says the interval lies below 20% (FAILED), 11 that it reaches it (NOT SHOWN).
[ $rc = 10 ] && said='FAILED' || said='NOT SHOWN'
check "A/A: the table says the gate's outcome as its exit does ($said)" grep -q -- "--require-gain 20%: $said" "$work/r2.err"
check "A/A: both arms applied the profile and reverted it" jqe '
	[.rounds[] | .transaction.status == "pending_confirm" and .rollback.status == "reverted"] | length == 10 and all' "$work/r2.json"
check "A/A: the gain's interval does not clear 20% ($(jq -c '[.effect.gain_lo, .effect.gain_hi]' "$work/r2.json"))" jqe '.effect.gain_lo <= 0.2' "$work/r2.json"
if jqe '.effect.ratio_lo <= 1 and 1 <= .effect.ratio_hi' "$work/r2.json"; then
	echo "note: A/A interval holds 1.0: $(jq -c '[.effect.ratio_lo, .effect.ratio_hi]' "$work/r2.json")"
else
	echo "note: A/A interval misses 1.0 (expected in 5% of runs): $(jq -c '[.effect.ratio_lo, .effect.ratio_hi]' "$work/r2.json")"
fi

# 2b. A gate on rounds that cannot reach its confidence is refused before
# any round runs (the gate of 3 + 3 rounds could pass a 94% loss).
n2=$(ina curl -s "$url/v1/transactions?limit=1" | jq .total)
nt bench-run --agent "$url" --compare 3 --profile "$work/harm.json" --require-no-loss -- "${iperf[@]}" \
	> /dev/null 2> "$work/r2b.err"
rc=$?
check "3 + 3 rounds with a gate: usage (2, $rc): $(cat "$work/r2b.err")" [ $rc = 2 ]
check "3 + 3: says why and what would do" grep -q '3 + 3 rounds cannot reach 95% confidence.*--compare 4 or more' "$work/r2b.err"
check "3 + 3: no transaction was made" [ "$(ina curl -s "$url/v1/transactions?limit=1" | jq .total)" = "$n2" ]
values > "$work/values2"
check "values byte-identical after the A/A run" cmp -s "$work/values2" "$work/values0"

# 3. SIGTERM in a candidate round: put back, 143.
cmd3="grep -q '^4096.4096.4096' /proc/sys/net/ipv4/tcp_wmem && { touch '$work/cand3'; sleep 30; }; exec ${iperf[*]}"
ip netns exec "$ns" "$NT_BIN" bench-run --agent "$url" --compare 3 --profile "$work/harm.json" --report "$work/r3.json" -- \
	sh -c "$cmd3" > /dev/null 2> "$work/r3.err" &
bp=$!
for _ in $(seq 100); do [ -e "$work/cand3" ] && break; sleep 0.1; done
check "SIGTERM: a candidate round is running" [ -e "$work/cand3" ]
check "SIGTERM: tuned during it" [ "$(ina cat /proc/sys/net/ipv4/tcp_wmem | tr -s ' \t' ' ')" = "4096 4096 4096" ]
kill -TERM $bp
wait $bp
rc=$?
check "SIGTERM: exit 143 ($rc)" [ $rc = 143 ]
check "SIGTERM: the report says so, the round reverted" jqe '.interrupted_by == "Terminated" and .host_restored == true
	and (.rounds | last | .arm == "candidate" and .rollback.status == "reverted")' "$work/r3.json"
values > "$work/values3"
check "values byte-identical after SIGTERM" cmp -s "$work/values3" "$work/values0"

# 4. SIGKILL in a candidate round: the confirm window puts it back.
rm -f "$work/cand3"
ip netns exec "$ns" "$NT_BIN" bench-run --agent "$url" --compare 3 --confirm-timeout 2 --profile "$work/harm.json" -- \
	sh -c "$cmd3" > /dev/null 2> "$work/r4.err" &
bp=$!
for _ in $(seq 100); do [ -e "$work/cand3" ] && break; sleep 0.1; done
check "SIGKILL: a candidate round is running" [ -e "$work/cand3" ]
kill -KILL $bp
wait $bp 2>/dev/null
for _ in $(seq 60); do values | cmp -s - "$work/values0" && break; sleep 0.1; done
values > "$work/values4"
check "values byte-identical after SIGKILL and the confirm window" cmp -s "$work/values4" "$work/values0"
last=$(ina curl -s "$url/v1/transactions?limit=1" | jq -r '.transactions[0].status')
check "SIGKILL: the agent reverted ($last)" [ "$last" = reverted ]

# 5. Bad usage: nothing applied.
n=$(ina curl -s "$url/v1/transactions?limit=1" | jq .total)
# One transaction a candidate round, none a round of the host as it is:
# 5 (run 1) + 10 (A/A) + 1 (SIGTERM in round 2) + 1 (SIGKILL in round 2).
check "one transaction per applied round: 17 ($n)" [ "${n:-0}" = 17 ]
nt bench-run --agent "$url" --compare 3 --profile "$work/harm.json" --require-gain lots -- true 2> "$work/r5.err"
rc=$?
check "--require-gain lots: usage (2, $rc): $(cat "$work/r5.err")" [ $rc = 2 ]
nt bench-run --agent "$url" --compare 3 --profile "$work/harm.json" --metric-regex '[0-9]+' --higher-is-better -- true 2> "$work/r5.err"
rc=$?
check "--metric-regex without a group: usage (2, $rc): $(cat "$work/r5.err")" [ $rc = 2 ]
nt bench-run --agent "$url" --profile "$work/harm.json" --require-no-loss -- true 2> "$work/r5.err"
rc=$?
check "--require-no-loss without --compare: usage (2, $rc): $(cat "$work/r5.err")" [ $rc = 2 ]
check "nothing applied by them" [ "$(ina curl -s "$url/v1/transactions?limit=1" | jq .total)" = "$n" ]

live_finish
