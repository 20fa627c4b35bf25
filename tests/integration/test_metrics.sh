#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GET /metrics on a copy of the EPYC host fixture: Prometheus text format that
# `promtool check metrics` accepts (and the same promtool rejects a broken
# copy, so the check can fail), the content type Prometheus asks for, the
# fixture's own numbers (enos0 rx_dropped 48213, rx_missed 1911, a per-CPU IRQ
# count read straight from the fixture's /proc/interrupts), NIC IRQs only,
# and transactions by status / last apply time moving after an apply.
set -u
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
for t in curl jq promtool awk; do
	command -v $t >/dev/null || { echo "SKIP: $t is not installed (promtool: Debian package prometheus)"; exit 77; }
done

work=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

cp -a "$NT_FIXTURES/epyc7713-2node-bond" "$work/root"
"$NT_BIN" serve --listen 127.0.0.1:0 --root "$work/root" --state-dir "$work/state" \
	> "$work/out" 2> "$work/err" &
pid=$!
for _ in $(seq 150); do grep -q listening "$work/out" && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$work/out")
[ -n "$url" ] || { echo "FAIL: agent did not start"; cat "$work/err"; exit 1; }

curl -s -D "$work/headers" -o "$work/m1" "$url/metrics"
check "status 200" grep -q '^HTTP/1.1 200' "$work/headers"
check "content type text/plain; version=0.0.4" \
	grep -qi '^content-type: text/plain; version=0.0.4' "$work/headers"
if promtool check metrics < "$work/m1" > "$work/lint" 2>&1; then ok; else bad "promtool: $(cat "$work/lint")"; fi
# The checker can fail: a sample with no valid value is refused.
{ cat "$work/m1"; echo 'nettune_build_info{version="x"} not-a-number'; } > "$work/broken"
if promtool check metrics < "$work/broken" > /dev/null 2>&1; then bad "promtool accepted a broken exposition"; else ok; fi

sample() { # sample FILE 'name{labels}' -> value
	awk -v k="$2" 'index($0, k " ") == 1 { print $NF; exit }' "$1"
}
check "build_info" [ "$(sample "$work/m1" 'nettune_build_info{version="'"$("$NT_BIN" version | awk '{print $2}')"'"}')" = 1 ]
check "enos0 rx_dropped 48213" [ "$(sample "$work/m1" 'nettune_nic_rx_dropped_total{nic="enos0"}')" = 48213 ]
check "enos0 rx_missed 1911" [ "$(sample "$work/m1" 'nettune_nic_rx_missed_total{nic="enos0"}')" = 1911 ]
for f in nettune_build_info nettune_irq_interrupts_total nettune_nic_rx_dropped_total \
	nettune_nic_rx_missed_total nettune_transactions nettune_last_apply_timestamp_seconds \
	nettune_http_requests_total nettune_cpu_info nettune_nic_ring_rx nettune_nic_ring_rx_max \
	nettune_transaction_applying_seconds; do
	check "# TYPE $f" grep -q "^# TYPE $f " "$work/m1"
	check "# HELP $f" grep -q "^# HELP $f " "$work/m1"
done

# What the shipped alerting rules and dashboard read (deploy/prometheus,
# deploy/grafana): the RX ring against its maximum, each online CPU's node,
# no transaction applying.
check "enos0 ring 1024 of 8192" [ "$(sample "$work/m1" 'nettune_nic_ring_rx{nic="enos0"}') $(sample "$work/m1" 'nettune_nic_ring_rx_max{nic="enos0"}')" = "1024 8192" ]
check "one cpu_info a CPU: 128" [ "$(grep -c '^nettune_cpu_info{' "$work/m1")" = 128 ]
check "CPU 0 on node 0, CPU 127 on node 1" [ "$(sample "$work/m1" 'nettune_cpu_info{cpu="0",node="0"}') $(sample "$work/m1" 'nettune_cpu_info{cpu="127",node="1"}')" = "1 1" ]
check "nothing applying" [ "$(sample "$work/m1" 'nettune_transaction_applying_seconds')" = 0.000 ]

# Every IRQ sample is a NIC's, and its count is the fixture's.
nirq=$(grep -c '^nettune_irq_interrupts_total{' "$work/m1")
check "some NIC IRQ samples ($nirq)" [ "$nirq" -gt 0 ]
nics=$(grep -o '^nettune_irq_interrupts_total{[^}]*}' "$work/m1" | sed 's/.*nic="\([^"]*\)".*/\1/' | sort -u)
for n in $nics; do
	check "IRQ owner $n is a NIC" [ -e "$work/root/sys/class/net/$n" ]
done
# A non-NIC IRQ (the timer, IRQ 0 or whatever has no NIC name) never appears.
check "no timer IRQ" bash -c "! grep -q 'name=\"timer\"' '$work/m1'"
checked=0
while read -r line; do
	irq=$(sed 's/.*irq="\([0-9]*\)".*/\1/' <<<"$line")
	cpu=$(sed 's/.*cpu="\([0-9]*\)".*/\1/' <<<"$line")
	val=${line##* }
	want=$(awk -v irq="$irq:" -v cpu="CPU$cpu" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == cpu) col = i; next }
		$1 == irq { print $(col + 1); exit }' "$work/root/proc/interrupts")
	check "IRQ $irq CPU $cpu = $want (got $val)" [ "$val" = "$want" ]
	checked=$((checked + 1))
done < <(grep '^nettune_irq_interrupts_total{' "$work/m1" | awk 'NR % 7 == 1' | head -8)
check "compared IRQ samples ($checked)" [ "$checked" -gt 0 ]
check "no zero IRQ samples" bash -c "! grep -q '^nettune_irq_interrupts_total{.*} 0\$' '$work/m1'"

check "no transactions yet" [ "$(sample "$work/m1" 'nettune_transactions{status="applied"}')" = 0 ]
check "no apply yet" [ "$(sample "$work/m1" 'nettune_last_apply_timestamp_seconds')" = 0.000 ]

# One apply moves the transaction gauges and the last-apply time.
before=$(date +%s)
st=$(curl -s -o "$work/txn" -w '%{http_code}' -H 'Content-Type: application/json' \
	-d '{"profile":{"name":"m","sysctl":{"net.core.rmem_max":"33554432"}}}' "$url/v1/transactions")
check "apply 201 (got $st)" [ "$st" = 201 ]
curl -s -o "$work/m2" "$url/metrics"
if promtool check metrics < "$work/m2" > "$work/lint" 2>&1; then ok; else bad "promtool after apply: $(cat "$work/lint")"; fi
check "one applied" [ "$(sample "$work/m2" 'nettune_transactions{status="applied"}')" = 1 ]
last=$(sample "$work/m2" 'nettune_last_apply_timestamp_seconds')
check "last apply $last near now ($before)" awk -v l="$last" -v b="$before" 'BEGIN { exit !(l >= b - 1 && l <= b + 60) }'
check "http counter for the apply" [ "$(sample "$work/m2" 'nettune_http_requests_total{method="POST",code="201"}')" = 1 ]
check "http counter for /metrics" [ "$(sample "$work/m2" 'nettune_http_requests_total{method="GET",code="200"}')" -ge 1 ]

check "store up" [ "$(sample "$work/m2" 'nettune_store_up')" = 1 ]

# A database that cannot be opened: the store's gauge says 0 (an alert has
# a series to fire on) and the series it would feed are left out.
kill "$pid"; wait "$pid" 2>/dev/null; pid=
mkdir -p "$work/bad-state"
yes 'not a database' | head -c 65536 > "$work/bad-state/nettune.db"
"$NT_BIN" serve --listen 127.0.0.1:0 --root "$work/root" --state-dir "$work/bad-state" \
	> "$work/out2" 2> "$work/err2" &
pid=$!
for _ in $(seq 150); do grep -q listening "$work/out2" && break; sleep 0.1; done
url2=$(sed -n 's/^listening on //p' "$work/out2")
check "degraded agent started" [ -n "$url2" ]
curl -s -o "$work/m3" "$url2/metrics"
if promtool check metrics < "$work/m3" > "$work/lint" 2>&1; then ok; else bad "promtool, degraded: $(cat "$work/lint")"; fi
check "store down" [ "$(sample "$work/m3" 'nettune_store_up')" = 0 ]
check "# TYPE nettune_store_up" grep -q '^# TYPE nettune_store_up gauge' "$work/m3"
check "no transaction series when degraded" bash -c "! grep -q '^nettune_transactions{' '$work/m3'"
check "host series still served" grep -q '^nettune_nic_rx_dropped_total{' "$work/m3"

# Per-queue counters (issue 41): none by default (m1 above); with
# --metrics-queues each queue's counters the fixture's qstats-get gives
# (enos0..enos3: 16 RX and 16 TX queues each), the fixture's own numbers,
# only the counters it reports (no rx_hw_drops: no driver here keeps it),
# promtool clean. A NIC without qstats (enos2's member removed: a driver
# that keeps none) has no series.
check "no per-queue series by default" bash -c "! grep -q '^nettune_queue_' '$work/m1'"
kill "$pid"; wait "$pid" 2>/dev/null; pid=
python3 -c 'import json, sys
p = sys.argv[1]; d = json.load(open(p)); del d["netdev"]["qstats"]; json.dump(d, open(p, "w"))' "$work/root/ethtool/enos2.json"
"$NT_BIN" serve --listen 127.0.0.1:0 --root "$work/root" --state-dir "$work/state-q" --metrics-queues \
	> "$work/out3" 2> "$work/err3" &
pid=$!
for _ in $(seq 150); do grep -q listening "$work/out3" && break; sleep 0.1; done
url3=$(sed -n 's/^listening on //p' "$work/out3")
check "agent with --metrics-queues started" [ -n "$url3" ]
curl -s -o "$work/m4" "$url3/metrics"
if promtool check metrics < "$work/m4" > "$work/lint" 2>&1; then ok; else bad "promtool, per queue: $(cat "$work/lint")"; fi
check "enos0 RX queue 3: 9000003 packets" [ "$(sample "$work/m4" 'nettune_queue_rx_packets_total{nic="enos0",queue="3"}')" = 9000003 ]
check "enos0 RX queue 3: 13320004440 bytes" [ "$(sample "$work/m4" 'nettune_queue_rx_bytes_total{nic="enos0",queue="3"}')" = 13320004440 ]
check "enos0 TX queue 3: 4000003 packets, 12 stops" [ "$(sample "$work/m4" 'nettune_queue_tx_packets_total{nic="enos0",queue="3"}') $(sample "$work/m4" 'nettune_queue_tx_stop_total{nic="enos0",queue="3"}')" = "4000003 12" ]
check "# TYPE nettune_queue_rx_packets_total counter" grep -q '^# TYPE nettune_queue_rx_packets_total counter' "$work/m4"
check "16 RX queues of each of enos0, enos1, enos3: 48 samples" [ "$(grep -c '^nettune_queue_rx_packets_total{' "$work/m4")" = 48 ]
check "enos2 (no qstats): no series" bash -c "! grep -q '^nettune_queue_.*nic=\"enos2\"' '$work/m4'"
check "a counter no driver reports is absent" bash -c "! grep -q 'nettune_queue_rx_hw_drops_total' '$work/m4'"
check "one family header a counter" [ "$(grep -c '^# TYPE nettune_queue_rx_packets_total ' "$work/m4")" = 1 ]
printf 'metrics_queues = yes\n' > "$work/q.conf"
check "conf key metrics_queues = yes accepted" "$NT_BIN" serve --check-config --config "$work/q.conf" --root "$work/root"
printf 'metrics_queues = many\n' > "$work/q.conf"
check "conf key metrics_queues = many refused" bash -c "! '$NT_BIN' serve --check-config --config '$work/q.conf' --root '$work/root' 2>/dev/null"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
