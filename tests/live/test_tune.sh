#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# nettune tune on this machine's kernel, as test_bench_compare.sh measures:
# the agent and the iperf3 client in one network namespace, the iperf3
# server in another, a veth pair between them, iperf3 -R -t 1 so that the
# client namespace receives; every sysctl the profiles touch is that
# namespace's own (net.ipv4.tcp_rmem, net.core.somaxconn), the host's stay
# as they are. The baseline has small receive buffers (4096 32768 32768,
# about 5 Gbit/s here); three candidates:
#  - larger buffers (4096 131072 6291456, about 14 Gbit/s): helpful;
#  - smaller still (4096 4096 4096, about 0.3 Gbit/s): harmful;
#  - the baseline's buffers and net.core.somaxconn 8192: neutral.
# Holm over three comparisons needs 5 rounds an arm at 95%; with
# --max-rounds 6: the harmful one is dropped after the fourth sweep (its
# first chance: 4 + 4 rounds), the helpful one kept as the winner, the
# neutral one not shown better; the namespace's and the host's values
# byte-identical afterwards (no --keep). About 25 s.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
jqe() { jq -e "$@" >/dev/null; }
live_require ip jq iperf3
live_pair nt-tune nttune
ip -n "$ns" addr add 10.216.0.1/30 dev nttunea
ip -n "$peer" addr add 10.216.0.2/30 dev nttuneb
keys=(net/ipv4/tcp_rmem net/ipv4/tcp_wmem net/core/somaxconn net/core/rmem_max net/core/wmem_max)
values() {
	for k in "${keys[@]}"; do printf 'host %s %s\n' "$k" "$(cat /proc/sys/$k)"; done
	for k in "${keys[@]}"; do printf '%s %s %s\n' "$ns" "$k" "$(ip netns exec "$ns" cat /proc/sys/$k 2>/dev/null)"; done
}
values > "$work/values0"
start_agent
[ -n "$url" ] || { bad "agent did not start: $(cat "$work/err")"; exit 1; }
live_iperf3_server 10.216.0.2
cd "$work"
echo '{"name": "small-rcvbuf", "sysctl": {"net.ipv4.tcp_rmem": "4096 32768 32768"}}' > base.json
echo '{"name": "large-rcvbuf", "sysctl": {"net.ipv4.tcp_rmem": "4096 131072 6291456"}}' > helpful.json
echo '{"name": "tiny-rcvbuf", "sysctl": {"net.ipv4.tcp_rmem": "4096 4096 4096"}}' > harmful.json
echo '{"name": "somaxconn", "sysctl": {"net.ipv4.tcp_rmem": "4096 32768 32768", "net.core.somaxconn": "8192"}}' > neutral.json

start=$(date +%s)
ip netns exec "$ns" "$NT_BIN" tune --agent "$url" --baseline base.json --budget 100s --max-rounds 6 \
	--report r.json --plot r.svg helpful.json harmful.json neutral.json -- \
	iperf3 -c 10.216.0.2 -t 1 -R -J > r.stdout 2> r.err
rc=$?
echo "tune: exit $rc in $(($(date +%s) - start)) s"
sed -n '/^tune: /,$p' r.err
check "exit 0: a winner ($rc): $(tail -2 r.err)" [ $rc = 0 ]
check "the helpful candidate kept as the winner" jqe '.winner == 1 and .candidates[0].decision == "winner"' r.json
check "the winner shown better at its Holm level ($(jq -c '.candidates[0].holm | [.level, .ratio_lo, .ratio, .ratio_hi]' r.json))" \
	jqe '.candidates[0].holm | .outcome == "shown better" and .ratio_lo > 1 and .level >= 0.975' r.json
check "the harmful one dropped at its first chance, after round 16 ($(jq -c '.candidates[1] | [.decision, .dropped_after_round, .rounds]' r.json))" \
	jqe '.candidates[1] | .decision == "dropped" and .dropped_after_round == 16 and .rounds == 4' r.json
check "the harmful one's drop said" grep -q 'candidate 2 (harmful.json): dropped: shown worse than the best so far' r.err
check "the neutral one not shown better ($(jq -c '.candidates[2] | [.decision, .final, .holm.ratio_lo, .holm.ratio_hi]' r.json))" \
	jqe '.candidates[2] | .decision != "winner" and .holm.outcome != "shown better"' r.json
check "each comparison's Holm level in the output" grep -q 'Holm step 1 of 3 at 98.33%' r.err
check "every round read by iperf3's reader, in bits/s" \
	jqe '.metric.reader == "iperf3" and .metric.unit == "bits/s" and ([.rounds[].value | numbers] | length) == (.rounds | length)' r.json
check "every candidate round applied and reverted in place" \
	jqe '[.rounds[] | select(.candidate > 0) | .transaction.status == "pending_confirm" and .rollback.status == "reverted"] | all' r.json
check "host restored" jqe '.host_restored == true' r.json
check "the chart has the baseline and three candidates" [ "$(grep -c '<g class="arm"' r.svg)" = 4 ]
values > values1
check "every sysctl as it was, in the namespace and on the host: $(diff values0 values1 | tr '\n' ' ')" cmp -s values0 values1

live_finish
