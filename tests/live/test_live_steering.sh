#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Packet steering on this machine's kernel, in two network namespaces of
# its own joined by a veth pair of 4 RX and 4 TX queues a side (the host's
# links are never touched):
#  - an agent serving the receiving namespace's view (`ip netns exec NS
#    nettune serve --root /`, as test_live_desired.sh runs one) plans and
#    applies rps_cpus, rps_flow_cnt, xps_cpus and xps_rxqs on its end, the
#    kernel's files read back as asked, and the rollback leaves every
#    queue file byte for byte as it was;
#  - with RPS on CPU 1 and iperf3 sending from CPU 0, the receive work
#    moves: /proc/net/softnet_stat's processed and received-by-RPS
#    counters and NET_RX softirqs rise on CPU 1 (printed below);
#  - held as the desired state (persist, drift repair), an rps_cpus write
#    behind the agent's back is repaired at the periodic check.
# The agent, iperf3 and both namespaces are stopped and removed at the end.
set -u
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root for network namespaces"
for t in ip jq curl iperf3 taskset; do command -v $t >/dev/null || skip "$t is not installed"; done
[ -n "${NT_BIN:-}" ] && [ -x "$NT_BIN" ] || skip "NT_BIN is not set to the nettune binary"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs for RPS to move work"
iso=$(cat /sys/devices/system/cpu/isolated 2>/dev/null)
[ -z "$iso" ] || skip "CPUs $iso are isolated: the kernel would keep them out of rps_cpus"

snd=nt-stx-$$
rcv=nt-srx-$$
work=$(mktemp -d)
agent=""; server=""
cleanup() {
	[ -n "$server" ] && kill "$server" 2>/dev/null
	[ -n "$agent" ] && kill "$agent" 2>/dev/null
	wait 2>/dev/null
	ip netns del "$snd" 2>/dev/null
	ip netns del "$rcv" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

ip netns add "$snd" || skip "cannot create a network namespace"
ip netns add "$rcv" || skip "cannot create a network namespace"
ip -n "$snd" link add st0 numtxqueues 4 numrxqueues 4 type veth peer name sr0 netns "$rcv" \
	numtxqueues 4 numrxqueues 4 || { bad "veth with 4 queues"; exit 1; }
ip -n "$snd" addr add 10.215.0.1/30 dev st0
ip -n "$rcv" addr add 10.215.0.2/30 dev sr0
for ns in "$snd" "$rcv"; do ip -n "$ns" link set lo up; done
ip -n "$snd" link set st0 up
ip -n "$rcv" link set sr0 up

rx() { ip netns exec "$rcv" "$@"; }
# every steering file of sr0, "NAME VALUE" a line
snapshot() {
	rx sh -c 'cd /sys/class/net/sr0/queues && for f in rx-*/rps_cpus rx-*/rps_flow_cnt tx-*/xps_cpus tx-*/xps_rxqs; do printf "%s %s\n" "$f" "$(cat $f)"; done'
}
qfile() { rx cat "/sys/class/net/sr0/queues/$1"; }

start_agent() {
	: > "$work/out"
	# ip execs the command: $! is the agent itself, so the kill reaches it.
	ip netns exec "$rcv" "$NT_BIN" serve --listen 127.0.0.1:0 --root / --state-dir "$work/state" "$@" > "$work/out" 2>>"$work/err" &
	agent=$!
	url=""
	for _ in $(seq 100); do grep -q listening "$work/out" && break; sleep 0.05; done
	url=$(sed -n 's/^listening on //p' "$work/out")
}
stop_agent() { kill "$agent" 2>/dev/null; wait "$agent" 2>/dev/null; agent=""; }
nscurl() { rx curl -s "$@"; }
wait_for() {
	local s=$1; shift
	for _ in $(seq $((s * 10))); do "$@" && return 0; sleep 0.1; done
	return 1
}

snapshot > "$work/before"
start_agent --drift-policy repair --drift-interval 1
[ -n "$url" ] && ok || { bad "agent did not start: $(cat "$work/err")"; exit 1; }

# The per-queue report.
nic=$(nscurl "$url/v1/nics/sr0")
[ "$(jq '.queues.rx | length' <<<"$nic")" = 4 ] && [ "$(jq '.queues.tx | length' <<<"$nic")" = 4 ] && ok ||
	bad "GET /v1/nics/sr0 queues: $(jq -c .queues <<<"$nic")"

profile='{"name":"steer","rps":[{"interface":"sr0","cpus":"1","flow_cnt":256}],
 "xps":[{"interface":"sr0","cpus":"0","queues":"0-1"},{"interface":"sr0","policy":"rxqs","queues":"2-3"}]}'
plan=$(nscurl -H 'Content-Type: application/json' -d "{\"profile\":$profile}" "$url/v1/plan")
nsteps=$(jq '.steps | length' <<<"$plan")
[ "$nsteps" = 12 ] && ok || bad "plan has $nsteps steps, wanted 12: $plan"
# Bad input: 422 with a JSON path, nothing applied.
out=$(nscurl -w '\n%{http_code}' -H 'Content-Type: application/json' \
	-d '{"profile":{"name":"bad","rps":[{"interface":"sr0","cpus":"1","queues":"0-7"}]}}' "$url/v1/transactions")
code=${out##*$'\n'}; body=${out%$'\n'*}
[ "$code" = 422 ] && jq -e '[.errors[].path] | index("$.rps[0].queues")' <<<"$body" >/dev/null && ok ||
	bad "queue beyond the NIC's: $code $body"
snapshot | cmp -s - "$work/before" && ok || bad "the refused profile changed a queue file"

out=$(nscurl -w '\n%{http_code}' -H 'Content-Type: application/json' \
	-d "{\"persist\":true,\"profile\":$profile}" "$url/v1/transactions")
code=${out##*$'\n'}; body=${out%$'\n'*}
[ "$code" = 201 ] && [ "$(jq -r .status <<<"$body")" = applied ] && ok || bad "apply: $code $body"
id=$(jq -r .id <<<"$body")
[ "$(qfile rx-0/rps_cpus)" = 2 ] || [ "$(qfile rx-0/rps_cpus | sed 's/^0*//')" = 2 ] && ok ||
	bad "rx-0/rps_cpus reads $(qfile rx-0/rps_cpus)"
[ "$(qfile rx-3/rps_flow_cnt)" = 256 ] && ok || bad "rx-3/rps_flow_cnt reads $(qfile rx-3/rps_flow_cnt)"
[ "$(qfile tx-1/xps_cpus | sed 's/^0*//')" = 1 ] && ok || bad "tx-1/xps_cpus reads $(qfile tx-1/xps_cpus)"
[ "$(qfile tx-2/xps_rxqs)" = 4 ] && ok || bad "tx-2/xps_rxqs reads $(qfile tx-2/xps_rxqs)"
nic=$(nscurl "$url/v1/nics/sr0")
[ "$(jq -r '.queues.rx[2].rps_cpus' <<<"$nic")" = 1 ] && [ "$(jq -r '.queues.tx[3].xps_rxqs' <<<"$nic")" = 3 ] && ok ||
	bad "report after apply: $(jq -c .queues <<<"$nic")"

# Receive work under RPS: the sender on CPU 0, sr0's queues steered to CPU 1.
# softnet_stat: a line per online CPU, hex columns; 1 processed, 10 received_rps.
softnet() {
	local f
	read -r -a f < <(sed -n "$(($1 + 1))p" /proc/net/softnet_stat)
	echo $((16#${f[0]})) $((16#${f[9]}))
}
netrx() { awk -v c="$1" '$1 == "NET_RX:" { print $(c + 2) }' /proc/softirqs; }
ip netns exec "$rcv" iperf3 -s -1 -B 10.215.0.2 > "$work/iperf-server" 2>&1 &
server=$!
sleep 0.5
read -r p1a r1a < <(softnet 1); n1a=$(netrx 1)
read -r p0a r0a < <(softnet 0)
ip netns exec "$snd" taskset -c 0 iperf3 -c 10.215.0.2 -t 2 -J > "$work/iperf.json" 2>"$work/iperf.err" ||
	bad "iperf3: $(cat "$work/iperf.err")"
read -r p1b r1b < <(softnet 1); n1b=$(netrx 1)
read -r p0b r0b < <(softnet 0)
wait "$server" 2>/dev/null; server=""
gbps=$(jq -r '.end.sum_received.bits_per_second / 1e9 | . * 100 | floor / 100' "$work/iperf.json" 2>/dev/null)
echo "iperf3 over the veth: ${gbps:-?} Gbit/s; RPS on CPU 1, sender on CPU 0"
echo "softnet_stat CPU 1: processed +$((p1b - p1a)), received_rps +$((r1b - r1a)); NET_RX softirqs +$((n1b - n1a))"
echo "softnet_stat CPU 0: processed +$((p0b - p0a)), received_rps +$((r0b - r0a))"
[ $((r1b - r1a)) -gt 100 ] && ok || bad "received_rps on CPU 1 rose by $((r1b - r1a))"
[ $((p1b - p1a)) -gt 1000 ] && ok || bad "CPU 1 processed $((p1b - p1a)) packets"
[ $((n1b - n1a)) -gt 100 ] && ok || bad "NET_RX on CPU 1 rose by $((n1b - n1a))"

# Held: a write behind the agent's back is repaired at the periodic check.
rx sh -c 'echo 0 > /sys/class/net/sr0/queues/rx-1/rps_cpus'
repaired() { [ "$(qfile rx-1/rps_cpus | sed 's/^0*//')" = 2 ]; }
wait_for 5 repaired && ok || bad "rx-1/rps_cpus not repaired: $(qfile rx-1/rps_cpus) $(nscurl "$url/v1/drift")"
newest() { nscurl "$url/v1/transactions?limit=1" | jq -r ".transactions[0].$1"; }
sleep 0.3
[ "$(newest reason)" = drift ] && ok || bad "repair reason $(newest reason)"

# Rollback of the first transaction (the desired state dropped first, so
# the watcher does not put it back): every file as it was, byte for byte.
nscurl -X DELETE "$url/v1/desired" >/dev/null
out=$(nscurl -w "\n%{http_code}" -H "Content-Type: application/json" -d "{\"force\":true}" "$url/v1/transactions/$id/rollback")
code=${out##*$'\n'}; body=${out%$'\n'*}
[ "${code#2}" != "$code" ] && ok || bad "rollback: $code $body"
snapshot > "$work/after"
cmp -s "$work/before" "$work/after" && ok || { bad "queue files differ after the rollback"; diff "$work/before" "$work/after"; }
stop_agent

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
