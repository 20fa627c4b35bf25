#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Per-queue counters (the netdev family's qstats-get, scope queue) in the
# per-NIC report on this machine's kernel, judged by a dump of our own
# (python, a raw generic-netlink socket), never by nettune's code:
#  - two network namespaces of this test's own joined by a veth pair of 4
#    RX and 4 TX queues a side, iperf3 (or plain TCP through python when
#    iperf3 is missing) between the two ends and nowhere else; the report of
#    each end says what the family says of it: per-queue counters that rose
#    on a queue the judge saw carry the traffic, or, for a driver that keeps
#    none (veth on 6.18), no stats and the reason "keeps no per-queue
#    statistics";
#  - read only, the host's own NICs: for each one the family answers for
#    (virtio_net on 6.18), the agent's counters of every queue lie between
#    two dumps of the judge taken before and after it (counters only rise),
#    and every counter the judge names is in the report and no other. Not
#    one packet is sent on them;
#  - `nettune nics IF` prints the statistics table or the reason;
#  - GET /v1/topology carries no counters.
# The agents and the namespaces are removed at the end.
set -u
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
skip() { echo "SKIP: $*"; exit 77; }
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }
[ "$(id -u)" -eq 0 ] || skip "needs root for network namespaces"
for t in ip jq curl python3; do command -v $t >/dev/null || skip "$t is not installed"; done
[ -n "${NT_BIN:-}" ] && [ -x "$NT_BIN" ] || skip "NT_BIN is not set to the nettune binary"

na=nt-qsa-$$
nb=nt-qsb-$$
work=$(mktemp -d)
agents=""
cleanup() {
	for p in $agents; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	ip netns del "$na" 2>/dev/null
	ip netns del "$nb" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# The judge (qstats_judge.py): qstats-get dumped by a raw socket of its own.
judge=$(cd "$(dirname "$0")" && pwd)/qstats_judge.py

# An agent in namespace NS (empty: this one), its URL in $url.
start_agent() {
	local ns=$1 tag=$2; shift 2
	: > "$work/out.$tag"
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$NT_BIN" serve --listen 127.0.0.1:0 --root / --state-dir "$work/state.$tag" \
			> "$work/out.$tag" 2>>"$work/err.$tag" &
	else
		"$NT_BIN" serve --listen 127.0.0.1:0 --root / --state-dir "$work/state.$tag" "$@" \
			> "$work/out.$tag" 2>>"$work/err.$tag" &
	fi
	agents="$agents $!"
	url=""
	for _ in $(seq 100); do grep -q listening "$work/out.$tag" && break; sleep 0.05; done
	url=$(sed -n 's/^listening on //p' "$work/out.$tag")
	[ -n "$url" ] && ok || { bad "agent ($tag) did not start: $(cat "$work/err.$tag")"; exit 1; }
}

python3 "$judge" > "$work/host0" || { bad "the judge's dump failed"; exit 1; }
if jq -e 'type == "object" and has("error")' "$work/host0" >/dev/null; then
	skip "the kernel does not answer qstats-get (errno $(jq .error "$work/host0"): before Linux 6.9)"
fi

# ---- veth between two namespaces of our own, with traffic ----
ip netns add "$na" && ip netns add "$nb" || skip "cannot create network namespaces"
ip -n "$na" link add qa0 numtxqueues 4 numrxqueues 4 type veth peer name qb0 numtxqueues 4 numrxqueues 4 \
	netns "$nb" || { bad "veth with 4 queues"; exit 1; }
for ns in "$na" "$nb"; do ip -n "$ns" link set lo up; done
ip -n "$na" addr add 192.0.2.1/30 dev qa0 && ip -n "$nb" addr add 192.0.2.2/30 dev qb0 || bad "addresses"
ip -n "$na" link set qa0 up && ip -n "$nb" link set qb0 up || bad "links up"
# GRO on gives veth its NAPIs (and a driver that keeps qstats its rings).
ip netns exec "$na" ethtool -K qa0 gro on >/dev/null 2>&1
ip netns exec "$nb" ethtool -K qb0 gro on >/dev/null 2>&1
ifa=$(ip netns exec "$na" cat /sys/class/net/qa0/ifindex)
ifb=$(ip netns exec "$nb" cat /sys/class/net/qb0/ifindex)

ip netns exec "$nb" python3 "$judge" > "$work/b0"
ip netns exec "$na" python3 "$judge" > "$work/a0"
# 192.0.2.0/30 (TEST-NET-1) exists only inside these two namespaces.
if command -v iperf3 >/dev/null; then
	ip netns exec "$nb" iperf3 -s -1 -B 192.0.2.2 -p 5299 > "$work/iperf-s" 2>&1 &
	srv=$!
	for _ in $(seq 50); do ip netns exec "$nb" ss -ltn 2>/dev/null | grep -q ':5299 ' && break; sleep 0.05; done
	ip netns exec "$na" iperf3 -c 192.0.2.2 -p 5299 -t 1 -P 4 > "$work/iperf-c" 2>&1 && ok ||
		bad "iperf3 between the namespaces: $(tail -3 "$work/iperf-c")"
	wait "$srv" 2>/dev/null
	echo "traffic: $(grep -E 'SUM.*receiver|receiver' "$work/iperf-c" | tail -1)"
else
	ip netns exec "$nb" python3 -c 'import socket
s = socket.socket(); s.bind(("192.0.2.2", 5299)); s.listen(1); c, _ = s.accept()
n = 0
while True:
    b = c.recv(65536)
    if not b: break
    n += len(b)
print(n)' > "$work/tcp-s" &
	srv=$!
	sleep 0.3
	ip netns exec "$na" python3 -c 'import socket
s = socket.create_connection(("192.0.2.2", 5299)); b = b"x" * 65536
for _ in range(2000): s.sendall(b)
s.close()' && ok || bad "TCP between the namespaces"
	wait "$srv"
	echo "traffic: $(cat "$work/tcp-s") bytes by TCP"
fi
ip netns exec "$nb" python3 "$judge" > "$work/b1"
ip netns exec "$na" python3 "$judge" > "$work/a1"

start_agent "$nb" b
urlb=$url
start_agent "$na" a
urla=$url
ip netns exec "$nb" curl -sf "$urlb/v1/nics/qb0" > "$work/rb" || bad "GET /v1/nics/qb0"
ip netns exec "$na" curl -sf "$urla/v1/nics/qa0" > "$work/ra" || bad "GET /v1/nics/qa0"
ip netns exec "$nb" python3 "$judge" > "$work/b2"
ip netns exec "$na" python3 "$judge" > "$work/a2"

# One end: REPORT against the judge's dumps BEFORE and AFTER the GET (for
# IFINDEX) and BASE, the dump before the traffic.
judge_nic() {
	local side=$1 report=$2 before=$3 after=$4 base=$5 ifindex=$6 traffic=${7:-yes}
	local n; n=$(jq "[.[] | select(.ifindex == $ifindex)] | length" "$after")
	if [ "$n" -eq 0 ]; then
		# The driver keeps none: say so, show none.
		check "$side: queue_stats_source" "$(jq -r .queue_stats_source "$report")" "null"
		jq -r .queue_stats_reason "$report" | grep -q "keeps no" && ok ||
			bad "$side: reason $(jq .queue_stats_reason "$report")"
		check "$side: no queue has stats" "$(jq '[.queues.rx[], .queues.tx[] | select(.stats != null)] | length' "$report")" 0
		echo "$side ($(jq -r .driver "$report")): no per-queue counters: $(jq -r .queue_stats_reason "$report")"
		return
	fi
	check "$side: queue_stats_source" "$(jq -r .queue_stats_source "$report")" "netlink"
	# Each counter of each queue: before <= report <= after, the same names.
	jq -n --slurpfile r "$report" --slurpfile b "$before" --slurpfile a "$after" --argjson i "$ifindex" '
		[ $a[0][] | select(.ifindex == $i) | . as $q
		  | ($b[0][] | select(.ifindex == $i and .type == $q.type and .id == $q.id) | .c) as $lo
		  | ($r[0].queues[$q.type][$q.id].stats // {}) as $got
		  | select(($got | keys) != ($q.c | keys)
			   or any($q.c | keys[]; ($got[.] // -1) < $lo[.] or $got[.] > $q.c[.]))
		  | "\($q.type)-\($q.id): report \($got) outside \($lo) .. \($q.c)" ]' > "$work/diff.$side"
	check "$side: counters between the judge's dumps" "$(jq length "$work/diff.$side")" 0
	[ "$(jq length "$work/diff.$side")" -eq 0 ] || jq -r '.[]' "$work/diff.$side" | head -5
	[ "$traffic" = yes ] || return 0
	# The queue that carried the traffic: the one whose packets rose most.
	local best
	best=$(jq -n --slurpfile b "$base" --slurpfile a "$before" --argjson i "$ifindex" '
		[ $a[0][] | select(.ifindex == $i) | . as $q
		  | (($b[0][] | select(.ifindex == $i and .type == $q.type and .id == $q.id) | .c) // {}) as $z
		  | {q: "\($q.type)-\($q.id)", d: ((($q.c.rx_packets // $q.c.tx_packets // 0))
			- (($z.rx_packets // $z.tx_packets // 0)))} ] | max_by(.d)')
	[ "$(jq .d <<<"$best")" -gt 0 ] && ok || bad "$side: no queue's packets rose with the traffic: $best"
	echo "$side: $(jq -r .q <<<"$best") carried the traffic (+$(jq .d <<<"$best") packets)"
}
judge_nic qb0 "$work/rb" "$work/b1" "$work/b2" "$work/b0" "$ifb"
judge_nic qa0 "$work/ra" "$work/a1" "$work/a2" "$work/a0" "$ifa"

ip netns exec "$nb" "$NT_BIN" nics qb0 > "$work/cli" 2>&1 || bad "nettune nics qb0: $(cat "$work/cli")"
grep -q "^queue statistics" "$work/cli" && ok || bad "nettune nics qb0 says nothing of queue statistics"
ip netns exec "$nb" curl -sf "$urlb/v1/topology" > "$work/topo" || bad "GET /v1/topology"
grep -q -e queue_stats -e rx_alloc_fail -e tx_wake "$work/topo" && bad "the topology carries per-queue counters" || ok

# ---- the host's own NICs, read only ----
start_agent "" host --metrics-queues
python3 "$judge" > "$work/h1"
seen=0
for ifindex in $(jq -r '[.[].ifindex] | unique | .[]' "$work/h1"); do
	dev=$(basename "$(dirname "$(grep -lx "$ifindex" /sys/class/net/*/ifindex | head -1)")")
	[ -n "$dev" ] || continue
	curl -sf "$url/v1/nics/$dev" > "$work/h.$dev" || { bad "GET /v1/nics/$dev"; continue; }
	python3 "$judge" > "$work/h2"
	judge_nic "host $dev" "$work/h.$dev" "$work/h1" "$work/h2" "$work/h1" "$ifindex" no
	n=$(jq "[.queues.rx[], .queues.tx[] | select(.stats != null)] | length" "$work/h.$dev")
	[ "$n" -gt 0 ] && ok || bad "host $dev: no queue with stats although the kernel answers for it"
	echo "host $dev ($(jq -r .driver "$work/h.$dev")): $n queues with counters, e.g. rx-0 $(jq -c '.queues.rx[0].stats' "$work/h.$dev")"
	"$NT_BIN" nics "$dev" > "$work/hcli" 2>&1
	grep -Eq "^rx-0 +[0-9]+ +[0-9]+" "$work/hcli" && ok || bad "nettune nics $dev lacks rx-0's counters"
	# GET /metrics with --metrics-queues: each queue's packets between
	# two dumps of the judge, one series a queue the judge lists.
	python3 "$judge" > "$work/m0"
	curl -sf "$url/metrics" > "$work/metrics" || bad "GET /metrics"
	python3 "$judge" > "$work/m1"
	for t in rx tx; do
		for q in $(jq -r --argjson i "$ifindex" --arg t "$t" '.[] | select(.ifindex == $i and .type == $t) | .id' "$work/m1"); do
			lo=$(jq --argjson i "$ifindex" --arg t "$t" --argjson q "$q" '.[] | select(.ifindex == $i and .type == $t and .id == $q) | .c[$t + "_packets"]' "$work/m0")
			hi=$(jq --argjson i "$ifindex" --arg t "$t" --argjson q "$q" '.[] | select(.ifindex == $i and .type == $t and .id == $q) | .c[$t + "_packets"]' "$work/m1")
			got=$(awk -v k="nettune_queue_${t}_packets_total{nic=\"$dev\",queue=\"$q\"}" 'index($0, k " ") == 1 { print $NF }' "$work/metrics")
			[ -n "$got" ] && [ "$got" -ge "$lo" ] && [ "$got" -le "$hi" ] && ok ||
				bad "host $dev: metric ${t}-$q packets '$got' outside $lo .. $hi"
		done
	done
	if command -v promtool >/dev/null; then
		promtool check metrics < "$work/metrics" > "$work/lint" 2>&1 && ok || bad "promtool: $(cat "$work/lint")"
	fi
	seen=$((seen + 1))
	python3 "$judge" > "$work/h1"
done
echo "host NICs with per-queue counters: $seen"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
