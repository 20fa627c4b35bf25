#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GET /v1/verify and `nettune verify` against a real agent on a copy of the
# virtio VM fixture, whose /proc/interrupts and /proc/net/softnet_stat the
# test rewrites while the window is open: eth0's IRQs placed on CPU 1 by a
# transaction, interrupts on CPU 1 are `delivered` (placed_by that
# transaction), on CPU 0 `elsewhere` (CPU and count, outside the
# placement), none `not observed`; RPS on CPU 1 with wake-ups on CPU 0 is
# `elsewhere`; a window out of range is a 422 with its JSON path; the agent
# answers other requests while a check waits; the CLI's exit status.
set -u
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
for t in curl jq awk; do
	command -v $t >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done

work=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

root=$work/root
cp -a "$NT_FIXTURES/vm-virtio-2cpu" "$root"
"$NT_BIN" serve --listen 127.0.0.1:0 --root "$root" --state-dir "$work/state" \
	> "$work/out" 2> "$work/err" &
pid=$!
for _ in $(seq 150); do grep -q listening "$work/out" && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$work/out")
[ -n "$url" ] || { echo "FAIL: agent did not start"; cat "$work/err"; exit 1; }

# add IRQ CPU N: N more interrupts of IRQ on CPU (column CPU+2 of its line).
add() {
	awk -v irq="$1:" -v col=$(($2 + 2)) -v n="$3" '
		$1 == irq { $col = $col + n } { print }' "$root/proc/interrupts" > "$work/int.new"
	mv "$work/int.new" "$root/proc/interrupts"
}
# rps CPU N: N more RPS wake-ups on CPU (field 10 of its softnet row).
rps() {
	local row=$(($1 + 1)) old
	old=$(awk -v row=$row 'NR == row { print $10 }' "$root/proc/net/softnet_stat")
	awk -v row=$row -v v="$(printf '%08x' $((0x$old + $2)))" '
		NR == row { $10 = v } { print }' "$root/proc/net/softnet_stat" > "$work/sn.new"
	mv "$work/sn.new" "$root/proc/net/softnet_stat"
}
# during MS ACTION...: GET /v1/verify?window_ms=MS into $work/v, running
# ACTION once the first sample is taken: 40% into the window, which leaves
# a loaded machine (the CI runs tests side by side) time for both samples.
during() {
	local ms=$1; shift
	curl -s -o "$work/v" -w '%{http_code}' "$url/v1/verify?window_ms=$ms" > "$work/code" &
	local c=$!
	sleep "$(awk -v ms="$ms" 'BEGIN { print ms * 0.4 / 1000 }')"
	"$@"
	wait $c
}
jqe() { jq -e "$@" > /dev/null; }
verdict() { jq -r --argjson i "$1" '.irqs[] | select(.irq == $i) | .verdict' "$work/v"; }

# Place eth0's IRQs (37-39) and its RPS on CPU 1.
curl -s -o "$work/txn" -X POST -H 'Content-Type: application/json' \
	-d '{"profile": {"name": "verify-test", "irq_affinity": [{"interface": "eth0", "cpus": "1"}], "rps": [{"interface": "eth0", "cpus": "1"}]}}' \
	"$url/v1/transactions"
txn=$(jq -r .id "$work/txn")
check "transaction applied ($(jq -r .status "$work/txn"))" [ "$(jq -r .status "$work/txn")" = applied ]
check "IRQ 38 on CPU 1" [ "$(cat "$root/proc/irq/38/smp_affinity_list")" = 1 ]

# Nothing fired: not observed, never a pass.
during 600 true
check "200" [ "$(cat "$work/code")" = 200 ]
check "IRQ 38 not observed" [ "$(verdict 38)" = "not observed" ]
check "no IRQ delivered" [ "$(jq .verdicts.delivered "$work/v")" = 0 ]
check "RPS not observed" [ "$(jq -r .rps.verdict "$work/v")" = "not observed" ]
check "window about 600 ms" jqe '.window_ms >= 590 and .window_ms < 1500' "$work/v"

# On CPU 1 only: delivered where the transaction placed it.
during 1200 eval 'add 38 1 25; add 39 1 4; rps 1 6'
check "IRQ 38 delivered ($(verdict 38))" [ "$(verdict 38)" = delivered ]
check "IRQ 38 counted 25 on CPU 1" jqe '.irqs[] | select(.irq == 38) | .counts["1"] == 25 and .total == 25' "$work/v"
check "IRQ 38 placed 1 by transaction $txn" jqe --arg by "transaction $txn" \
	'.irqs[] | select(.irq == 38) | .placed == "1" and .placed_by == $by' "$work/v"
check "IRQ 39 delivered" [ "$(verdict 39)" = delivered ]
check "IRQ 37 not observed" [ "$(verdict 37)" = "not observed" ]
check "verdict counts 2/0/1" jqe '.verdicts == {"delivered": 2, "elsewhere": 0, "not_observed": 1}' "$work/v"
check "RPS delivered, 6 wake-ups on rps_cpus 1" jqe \
	'.rps.verdict == "delivered" and .rps.received_rps == 6 and .rps.cpus == "1" and .rps.queues[0].nic == "eth0"' "$work/v"
check "CPU 1 served 29 NIC interrupts" jqe '.cpus[] | select(.cpu == 1) | .nic_interrupts == 29' "$work/v"

# On CPU 0, outside the placement (as when someone moved it behind the
# agent's back): elsewhere, with the CPU and the count.
during 1200 eval 'add 38 0 7; add 38 1 2; rps 0 3'
check "IRQ 38 elsewhere ($(verdict 38))" [ "$(verdict 38)" = elsewhere ]
check "7 on CPU 0 outside the placement" jqe \
	'.irqs[] | select(.irq == 38) | .elsewhere == [{"cpu": 0, "count": 7, "outside": "placement"}]' "$work/v"
check "eth0 7 elsewhere of 9" jqe '.nics[] | select(.nic == "eth0") | .elsewhere == 7 and .interrupts == 9' "$work/v"
check "RPS elsewhere on CPU 0" jqe '.rps.verdict == "elsewhere" and .rps.elsewhere == [{"cpu": 0, "count": 3}]' "$work/v"

# The last check is a finding and a metric until the next one.
curl -s -o "$work/d" "$url/v1/diagnostics"
check "finding irq-delivered-elsewhere for IRQ 38" jqe \
	'[.findings[] | select(.id == "irq-delivered-elsewhere")] | length == 1 and .[0].subject == "eth0" and .[0].evidence.irq == 38 and .[0].evidence.elsewhere[0].cpu == 0 and .[0].severity == "warning"' "$work/d"
curl -s -o "$work/m" "$url/metrics"
check "metric: eth0 7 elsewhere" grep -qx 'nettune_nic_interrupts_elsewhere{nic="eth0"} 7' "$work/m"
check "metric: check timestamp" awk '$1 == "nettune_delivery_check_timestamp_seconds" && $2 > 1e9 { f = 1 } END { exit !f }' "$work/m"
if command -v promtool > /dev/null; then
	check "promtool accepts the metrics" sh -c "promtool check metrics < '$work/m' > /dev/null 2>&1"
fi

during 600 eval 'add 38 1 3'
curl -s -o "$work/d" "$url/v1/diagnostics"
check "a clean check clears the finding" jqe '[.findings[] | select(.id == "irq-delivered-elsewhere")] | length == 0' "$work/d"
check "and the metric" sh -c "curl -s '$url/metrics' | grep -qx 'nettune_nic_interrupts_elsewhere{nic=\"eth0\"} 0'"

# The CLI: its table and exit status 1 for elsewhere, 0 otherwise.
"$NT_BIN" verify --agent "$url" --window 1200ms > "$work/cli" 2>&1 &
c=$!
sleep 0.5; add 38 0 5
wait $c; rc=$?
check "verify exits 1 on elsewhere (got $rc)" [ $rc = 1 ]
check "CLI row for IRQ 38" grep -Eq '^ +38 +eth0 +0 +1 +1 +elsewhere +0:5 +0:5' "$work/cli"
"$NT_BIN" verify --agent "$url" --window 200ms > "$work/cli" 2>&1
rc=$?
check "verify exits 0 when nothing fired (got $rc)" [ $rc = 0 ]
check "CLI says not observed is inconclusive" grep -q 'shows nothing either way' "$work/cli"
"$NT_BIN" verify --agent "$url" --window 99ms > /dev/null 2>&1
check "verify --window 99ms is a usage error" [ $? = 2 ]

# A transaction that asks for the check: verify_window_ms records each IRQ
# step's verdict in its observed and a summary; "confirm": "on-delivery"
# confirms it once what fired was delivered where planned, and leaves it
# to be reverted at the deadline otherwise (elsewhere, or nothing fired).
apply_checked() { # apply_checked CPUS TIMEOUT_S ACTION...: the answer into $work/t
	local cpus=$1 to=$2; shift 2
	curl -s -o "$work/t" -X POST -H 'Content-Type: application/json' \
		-d '{"profile": {"name": "verify-txn", "irq_affinity": [{"interface": "eth0", "cpus": "'"$cpus"'"}]},
		     "confirm_timeout_s": '"$to"', "confirm": "on-delivery", "verify_window_ms": 1200}' \
		"$url/v1/transactions" &
	local c=$!
	# The check starts once the apply is done: wait for the write, then
	# give the record and the first sample their moment.
	for _ in $(seq 300); do
		[ "$(cat "$root/proc/irq/38/smp_affinity_list")" = "$cpus" ] && break
		sleep 0.01
	done
	sleep 0.4
	"$@"
	wait $c
}
apply_checked 0 20 add 38 0 12
check "on-delivery: confirmed, applied ($(jq -c '[.status, .delivery]' "$work/t"))" jqe \
	'.status == "applied" and .delivery.verdict == "delivered" and .delivery.confirmed == true and .delivery.confirm == "on-delivery"' "$work/t"
check "on-delivery: IRQ 38 step observed delivered 0:12" jqe \
	'.steps[] | select(.target == "38") | .observed | endswith("delivered 0:12")' "$work/t"
tid=$(jq -r .id "$work/t")
curl -s -o "$work/g" "$url/v1/transactions/$tid"
check "the check is in the record" jqe '.delivery.verdict == "delivered" and .delivery.window_ms == 1200' "$work/g"

apply_checked 1 2 add 38 0 4
check "on-delivery, elsewhere: still pending ($(jq -c '[.status, .delivery.verdict]' "$work/t"))" jqe \
	'.status == "pending_confirm" and .delivery.verdict == "elsewhere" and .delivery.confirmed == false' "$work/t"
check "elsewhere: IRQ 38 with CPU 0" jqe '.delivery.irqs_elsewhere[0].irq == 38 and .delivery.irqs_elsewhere[0].elsewhere[0].cpu == 0' "$work/t"
check "elsewhere: step observed names the placement" jqe \
	'.steps[] | select(.target == "38") | .observed | endswith("elsewhere 0:4 (placed 1)")' "$work/t"
tid=$(jq -r .id "$work/t")
for _ in $(seq 40); do
	[ "$(curl -s "$url/v1/transactions/$tid" | jq -r .status)" = reverted ] && break
	sleep 0.1
done
check "elsewhere: reverted at the deadline" [ "$(curl -s "$url/v1/transactions/$tid" | jq -r .status)" = reverted ]
check "elsewhere: IRQ 38 back on CPU 0" [ "$(cat "$root/proc/irq/38/smp_affinity_list")" = 0 ]

apply_checked 1 2 true
check "on-delivery, quiet: not observed, not confirmed" jqe \
	'.status == "pending_confirm" and .delivery.verdict == "not observed" and .delivery.confirmed == false' "$work/t"
tid=$(jq -r .id "$work/t")
for _ in $(seq 40); do
	[ "$(curl -s "$url/v1/transactions/$tid" | jq -r .status)" = reverted ] && break
	sleep 0.1
done
check "quiet: reverted at the deadline" [ "$(curl -s "$url/v1/transactions/$tid" | jq -r .status)" = reverted ]
# Quiet at first, then firing: a second window sees it and confirms.
apply_checked 1 6 eval 'sleep 1.6; add 38 1 6'
check "on-delivery looks again while nothing fired ($(jq -c '.delivery | [.checks, .verdict, .confirmed]' "$work/t"))" jqe \
	'.status == "applied" and .delivery.checks == 2 and .delivery.verdict == "delivered" and .delivery.confirmed == true' "$work/t"

# A silent IRQ's queue (qstats-get, issue 41): the fixture's eth0 given
# the netdev family's answers, as virtio_net on 6.9+ gives them (RX queue
# 0 on IRQ 38's NAPI, TX queue 0 on IRQ 39's, each queue's counters).
# No packet moved: not observed, traffic "none"; packets on RX queue 0 and
# no interrupt: still not observed, with the packets and traffic
# "without-interrupt"; with interrupts delivered as before; the config
# IRQ 37 serves no queue (null).
mkdir -p "$root/ethtool"
cat > "$root/ethtool/eth0.json" <<'EOF2'
{"netdev": {"queues": [{"id": 0, "type": "rx", "napi-id": 8193}, {"id": 0, "type": "tx", "napi-id": 8194}],
 "napis": [{"id": 8193, "irq": 38}, {"id": 8194, "irq": 39}],
 "qstats": [{"queue-type": "rx", "queue-id": 0, "rx-packets": 1000, "rx-bytes": 1500000},
            {"queue-type": "tx", "queue-id": 0, "tx-packets": 500, "tx-bytes": 40000}]}}
EOF2
# qbump N: N more packets on eth0's RX queue 0.
qbump() {
	jq --argjson n "$1" '.netdev.qstats[0]["rx-packets"] += $n' "$root/ethtool/eth0.json" > "$work/e.new" &&
		mv "$work/e.new" "$root/ethtool/eth0.json"
}
field() { jq -c --argjson i "$1" ".irqs[] | select(.irq == \$i) | [.verdict, .queue_packets, .traffic]" "$work/v"; }
during 600 true
check "no traffic: IRQ 38 not observed, 0 packets, none ($(field 38))" [ "$(field 38)" = '["not observed",0,"none"]' ]
check "no traffic: IRQ 39 the same ($(field 39))" [ "$(field 39)" = '["not observed",0,"none"]' ]
check "IRQ 37 serves no queue ($(field 37))" [ "$(field 37)" = '["not observed",null,null]' ]
during 1200 qbump 4000
check "packets, no interrupt: IRQ 38 ($(field 38))" [ "$(field 38)" = '["not observed",4000,"without-interrupt"]' ]
check "the verdicts unchanged: 3 not observed" jqe '.verdicts == {"delivered": 0, "elsewhere": 0, "not_observed": 3}' "$work/v"
during 1200 eval 'qbump 300; add 38 1 5'
check "packets and interrupts: delivered ($(field 38))" [ "$(field 38)" = '["delivered",300,null]' ]
"$NT_BIN" verify --agent "$url" --window 1200ms > "$work/cli" 2>&1 &
c=$!
sleep 0.5; qbump 250
wait $c
check "CLI: IRQ 38's packets without an interrupt" \
	grep -q '^IRQ 38 (eth0 queue 0): 250 packets on its queues and not one interrupt: polled without it' "$work/cli"
check "CLI: the silent IRQ without traffic counted (39; 37 serves no queue)" grep -q '^no traffic: 1 silent IRQ whose queues counted no packet' "$work/cli"
apply_checked 0 2 qbump 700
check "on-delivery, polled: step observed says so ($(jq -c '[.steps[] | select(.target == "38") | .observed]' "$work/t"))" jqe \
	'.delivery.verdict == "not observed" and (.steps[] | select(.target == "38") | .observed | endswith("not observed (700 packets without an interrupt)"))' "$work/t"
check "on-delivery, quiet IRQ 39: no traffic" jqe \
	'.steps[] | select(.target == "39") | .observed | endswith("not observed (no traffic)")' "$work/t"
tid=$(jq -r .id "$work/t")
for _ in $(seq 40); do
	[ "$(curl -s "$url/v1/transactions/$tid" | jq -r .status)" = reverted ] && break
	sleep 0.1
done

for body in '"verify_window_ms": 50' '"confirm": "on-delivery"' '"confirm": "yes", "confirm_timeout_s": 9' \
	'"confirm": "on-delivery", "confirm_timeout_s": 1, "verify_window_ms": 1000'; do
	code=$(curl -s -o "$work/p" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		-d '{"profile": {"name": "x"}, '"$body"'}' "$url/v1/transactions")
	check "refused: $body ($code)" [ "$code" = 422 ]
done

# Bad windows: 422 with the path, nothing waits.
for w in 99 60001 abc; do
	code=$(curl -s -o "$work/p" -w '%{http_code}' "$url/v1/verify?window_ms=$w")
	check "window_ms=$w 422 ($code)" [ "$code" = 422 ]
	check "window_ms=$w path" jqe '.errors[0].path == "$.window_ms"' "$work/p"
done

# A check waiting its window holds no worker: health answers meanwhile.
curl -s -o /dev/null "$url/v1/verify?window_ms=3000" &
c=$!
sleep 0.2
t0=$(date +%s%N)
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/v1/health")
t1=$(date +%s%N)
check "health 200 during a check ($code)" [ "$code" = 200 ]
check "health within 1 s during a check ($(( (t1 - t0) / 1000000 )) ms)" [ $(( (t1 - t0) / 1000000 )) -lt 1000 ]
wait $c

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
