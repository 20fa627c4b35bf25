#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Live: rates sampled while traffic flows over loopback show non-zero
# NET_RX counts; `nettune run --near` binds a command where placement says.
set -u
fail=0; pass=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl is not installed"; exit 77; }
[ -r /proc/softirqs ] || { echo "SKIP: no /proc/softirqs"; exit 77; }

state=$(mktemp -d); out=$(mktemp)
trap 'kill $agent 2>/dev/null; wait 2>/dev/null; rm -rf "$state" "$out"' EXIT
"$NT_BIN" serve --listen 127.0.0.1:0 --root / --state-dir "$state" > "$out" &
agent=$!
for _ in $(seq 50); do grep -q listening "$out" && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$out")
[ -n "$url" ] || { echo "FAIL: agent did not start"; exit 1; }

# Traffic over loopback while the agent samples (bounded: 300 requests).
( for _ in $(seq 300); do curl -s "$url/v1/health" >/dev/null; done ) &
load=$!
rates=$(curl -s "$url/v1/irqs/rates?interval_ms=1500")
wait $load
rx=$(jq '[.cpus[].net_rx_per_second // 0] | add' <<<"$rates")
[ "$(jq -n "$rx > 0")" = true ] && ok || bad "NET_RX per second is $rx under loopback traffic"
ncpu=$(jq '.cpus | length' <<<"$rates")
[ "$ncpu" -eq "$(nproc --all 2>/dev/null || nproc)" ] && ok || bad "rates list $ncpu CPUs"
[ "$(jq '.nodes | length' <<<"$rates")" -ge 1 ] && ok || bad "no node totals"
# The CLI prints the same table from its own two samples.
"$NT_BIN" rates --interval-ms 200 | grep -q "NET_RX/s" && ok || bad "nettune rates has no table"

# run --near: the command sees the CPUs and memory node placement names.
nic=$(jq -r '[.nics[] | select(.virtual == false and .numa_node >= 0)][0].name // empty' < <("$NT_BIN" topology --json))
if [ -z "$nic" ]; then
	echo "note: no physical NIC with a known node here; run --near not checked"
else
	want_cpus=$("$NT_BIN" placement "$nic" --json | jq -r .app_cpus)
	want_node=$("$NT_BIN" placement "$nic" --json | jq -r .node)
	status=$("$NT_BIN" run --near "$nic" -- cat /proc/self/status)
	got_cpus=$(awk '/^Cpus_allowed_list/ {print $2}' <<<"$status")
	got_mems=$(awk '/^Mems_allowed_list/ {print $2}' <<<"$status")
	[ "$got_cpus" = "$want_cpus" ] && ok || bad "run --near $nic: Cpus_allowed_list $got_cpus, placement says $want_cpus"
	# Mems_allowed_list is the cpuset's; the bind policy shows in numa_maps.
	[ -n "$got_mems" ] && ok || bad "no Mems_allowed_list"
	pol=$("$NT_BIN" run --near "$nic" -- sh -c 'grep -m1 -o "bind:[0-9,-]*" /proc/$$/numa_maps' 2>/dev/null)
	if [ -r /proc/self/numa_maps ]; then
		[ "$pol" = "bind:$want_node" ] && ok || bad "memory policy '$pol', expected bind:$want_node"
	fi
	"$NT_BIN" run --near "$nic" --cpus 1 -- true && ok || bad "run --cpus 1 failed"
	"$NT_BIN" run --near no-such-nic -- true 2>/dev/null && bad "run near a missing NIC succeeded" || ok
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
