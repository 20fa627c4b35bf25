#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Live: the delivery check on this machine's kernel, with interrupts that
# local work raises: not one packet leaves the machine. The source is a
# device IRQ that fires under work on this machine alone and takes an
# affinity write: the hardware random number generator's (reads of
# /dev/hwrng) or the disk's (O_DIRECT reads and writes of a scratch file).
# A transaction places it with other_irqs and "confirm": "on-delivery",
# and the kernel's delivery confirms it; the IRQ moved behind the agent's
# back during a window is `elsewhere` and a finding; the NIC's IRQs that
# do not fire are `not observed`; a kernel-managed IRQ is skipped, not a
# failure. The rollback puts every IRQ's affinity back byte for byte, and
# so does the exit trap whatever happened.
set -u
fail=0; pass=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
jqe() { jq -e "$@" > /dev/null; }
for t in jq curl dd timeout; do
	command -v $t > /dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to move IRQs"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "SKIP: one CPU: nowhere else to deliver"; exit 77; }

state=$(mktemp -d); out=$(mktemp)
agent=; load=
declare -A saved=()
for d in /proc/irq/[0-9]*; do
	[ -r "$d/smp_affinity_list" ] && saved[${d##*/}]=$(cat "$d/smp_affinity_list" 2>/dev/null)
done
restore() {
	[ -n "$load" ] && kill "$load" 2>/dev/null
	[ -n "$agent" ] && kill "$agent" 2>/dev/null
	wait 2>/dev/null
	for q in "${!saved[@]}"; do
		[ "$(cat "/proc/irq/$q/smp_affinity_list" 2>/dev/null)" = "${saved[$q]}" ] ||
			echo "${saved[$q]}" > "/proc/irq/$q/smp_affinity_list" 2>/dev/null
	done
	rm -rf "$state" "$out"
}
trap restore EXIT

# The local work of each kind, for S seconds.
work_hwrng() { timeout "$1" dd if=/dev/hwrng of=/dev/null bs=64 status=none 2>/dev/null; }
work_disk() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt "$end" ]; do
		dd if=/dev/zero of="$state/scratch" bs=4096 count=32 oflag=direct,dsync status=none 2>/dev/null || return 1
		dd if="$state/scratch" of=/dev/null bs=4096 iflag=direct status=none 2>/dev/null || return 1
	done
}
# Counts per IRQ number, summed over the CPUs.
irq_totals() { awk 'NR > 1 && $1 ~ /^[0-9]+:$/ { s = 0; for (i = 2; i <= ncpu + 1; i++) s += $i; print $1 + 0, s }' ncpu="$(head -1 /proc/interrupts | wc -w)" /proc/interrupts; }
# The IRQ that WORK raises: the one whose count grew most over 1.5 s of
# it, at least 20 and five times what it grew by itself over 1.5 s idle.
irq_of_work() {
	local idle busy
	idle=$(irq_totals); sleep 1.5; idle=$(join <(sort <<<"$idle") <(irq_totals | sort) | awk '{ print $1, $3 - $2 }')
	busy=$(irq_totals); "$1" 1.5; busy=$(join <(sort <<<"$busy") <(irq_totals | sort) | awk '{ print $1, $3 - $2 }')
	join <(sort <<<"$busy") <(sort <<<"$idle") | awk '$2 >= 20 && $2 >= 5 * $3 { print $2, $1 }' | sort -rn | awk 'NR == 1 { print $2 }'
}

src=; work=
for w in work_hwrng work_disk; do
	[ $w = work_hwrng ] && ! [ -r /dev/hwrng ] && continue
	q=$(irq_of_work $w)
	[ -n "$q" ] || { echo "note: $w raised no IRQ of its own"; continue; }
	# Writing its own affinity back tells whether it can be moved.
	if ! echo "${saved[$q]}" > "/proc/irq/$q/smp_affinity_list" 2>/dev/null; then
		echo "note: $w raises IRQ $q, which the kernel manages (its affinity is refused)"; continue
	fi
	src=$q; work=$w; break
done
[ -n "$src" ] || { echo "SKIP: no local work raises an IRQ whose affinity can be moved here"; exit 77; }
echo "note: IRQ $src ($(awk -v q="$src:" '$1 == q { print $NF }' /proc/interrupts)) fires under $work"

"$NT_BIN" serve --listen 127.0.0.1:0 --root / --state-dir "$state" > "$out" 2> "$state/err" &
agent=$!
for _ in $(seq 50); do grep -q listening "$out" && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$out")
[ -n "$url" ] || { echo "FAIL: agent did not start"; cat "$state/err"; exit 1; }

background() { "$work" "$1" & load=$!; }
stop_load() { [ -n "$load" ] && { kill "$load" 2>/dev/null; wait "$load" 2>/dev/null; }; load=; }

# 1. The plain check, nothing placed: NIC IRQs only, so the source (no
# NIC's) is not judged; a NIC IRQ that did not fire is `not observed`.
background 3
judge=$(dirname "$0")/qstats_judge.py
command -v python3 > /dev/null && python3 "$judge" > "$state/q0" 2>/dev/null
curl -s -o "$state/v1" "$url/v1/verify?window_ms=1500"
command -v python3 > /dev/null && python3 "$judge" > "$state/q1" 2>/dev/null
stop_load
check "the check answered ($(head -c 200 "$state/v1"))" jqe '.verdicts and (.irqs | type == "array")' "$state/v1"
check "IRQ $src, of no NIC and never placed, is not judged" jqe --argjson i "$src" '[.irqs[] | select(.irq == $i)] | length == 0' "$state/v1"
quiet=$(jq -r '[.irqs[] | select(.nic != null and .total == 0)][0].irq // empty' "$state/v1")
if [ -n "$quiet" ]; then
	check "NIC IRQ $quiet did not fire: not observed" jqe --argjson i "$quiet" '.irqs[] | select(.irq == $i) | .verdict == "not observed"' "$state/v1"
else
	echo "note: every NIC IRQ fired; no quiet one to show 'not observed'"
fi
check "softnet read: processed per CPU" jqe '[.cpus[].processed | numbers] | length >= 2' "$state/v1"
# Each NIC IRQ's queue packets (qstats-get, issue 41) where the kernel
# answers for its NIC (eth0, virtio_net, read only): a count no larger than
# what the judge saw its queue number carry (RX and TX) over the check, and
# a silent IRQ said to have had no traffic or traffic without it, as the
# count says; the verdict words unchanged.
if [ -s "$state/q1" ] && jqe 'type == "array"' "$state/q1"; then
	for ifindex in $(jq -r '[.[].ifindex] | unique | .[]' "$state/q1"); do
		dev=$(basename "$(dirname "$(grep -lx "$ifindex" /sys/class/net/*/ifindex | head -1)")")
		for irq in $(jq -r --arg d "$dev" '.irqs[] | select(.nic == $d and .queue != null) | .irq' "$state/v1"); do
			e=$(jq -c --argjson i "$irq" '.irqs[] | select(.irq == $i) | {queue, verdict, queue_packets, traffic}' "$state/v1")
			most=$(jq -n --slurpfile a "$state/q0" --slurpfile b "$state/q1" --argjson i "$ifindex" --argjson q "$(jq .queue <<<"$e")" '
				[ $b[0][] | select(.ifindex == $i and .id == $q) | . as $x
				  | ($a[0][] | select(.ifindex == $i and .type == $x.type and .id == $q) | .c) as $lo
				  | ($x.c[$x.type + "_packets"] // 0) - ($lo[$x.type + "_packets"] // 0) ] | add // 0')
			check "$dev IRQ $irq: queue packets within the judge's 0..$most ($e)" \
				jqe --argjson m "$most" '.queue_packets | type == "number" and . >= 0 and . <= $m' <<<"$e"
			check "$dev IRQ $irq: traffic as its verdict and packets say ($e)" jqe '
				if .verdict == "not observed" then .traffic == (if .queue_packets == 0 then "none" else "without-interrupt" end)
				else .traffic == null end' <<<"$e"
		done
	done
fi

# 2. Every IRQ of no NIC (other_irqs; no irq_affinity section: every IRQ)
# on the CPU that did not serve the source, with the work running for as
# long as the agent may look; the kernel's delivery confirms it.
from=$(cat "/proc/irq/$src/effective_affinity_list" 2>/dev/null | cut -d, -f1 | cut -d- -f1)
[ -n "$from" ] || from=0
to=$(awk -v f="$from" 'BEGIN { print (f == 0) ? 1 : 0 }')
background 25
code=$(curl -s -o "$state/t" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-d '{"profile": {"name": "live-verify", "other_irqs": {"cpus": "'"$to"'"}},
	     "confirm_timeout_s": 20, "confirm": "on-delivery", "verify_window_ms": 1500}' "$url/v1/transactions")
stop_load
id=$(jq -r '.id // empty' "$state/t")
check "placed on CPU $to and confirmed on delivery ($code $(jq -c '[.status, .delivery.verdict, .delivery.delivered, .delivery.elsewhere, .delivery.checks, .error]' "$state/t"))" \
	jqe '.status == "applied" and .delivery.verdict == "delivered" and .delivery.confirmed == true' "$state/t"
echo "note: the window opened after $(jq .delivery.settle_ms "$state/t") ms waiting for the kernel to move the IRQs ($(jq .delivery.moves_pending "$state/t") still pending: IRQs that did not fire)"
check "IRQ $src step observed delivered on $to ($(jq -c --arg t "$src" '.steps[] | select(.target == $t) | [.result, .observed]' "$state/t"))" \
	jqe --arg t "$src" --arg c "$to" '.steps[] | select(.target == $t) | .observed | test("delivered " + $c + ":[0-9]+$")' "$state/t"
check "every step applied, or skipped as not movable ($(jq -c '[.steps[] | select(.result != "applied") | [.target, .result, .error]]' "$state/t"))" \
	jqe '[.steps[] | select(.result != "applied" and (.result | test("not movable") | not))] | length == 0' "$state/t"
skipped=$(jq -r '[.steps[] | select(.result | test("not movable")) | .target] | join(" ")' "$state/t")
[ -n "$skipped" ] && echo "note: kernel-managed, left as they are: IRQ $skipped"

# 3. Behind the agent's back, during the window: the source moved to CPU
# $from. The work makes it fire throughout, so the window shows it.
echo "$to" > "/proc/irq/$src/smp_affinity_list"
background 5
curl -s -o "$state/v3" "$url/v1/verify?window_ms=3000" &
c=$!
sleep 0.8
echo "$from" > "/proc/irq/$src/smp_affinity_list"
wait $c
stop_load
check "moved behind the agent's back: elsewhere ($(jq -c --argjson i "$src" '.irqs[] | select(.irq == $i) | [.nic, .placed, .affinity, .affinity_end, .counts, .verdict]' "$state/v3"))" \
	jqe --argjson i "$src" --argjson f "$from" '.irqs[] | select(.irq == $i) | .verdict == "elsewhere" and .nic == null and .placed == "'"$to"'" and any(.elsewhere[]; .cpu == $f and .outside == "placement")' "$state/v3"
check "the finding says so" sh -c "curl -s '$url/v1/diagnostics' | jq -e '[.findings[] | select(.id == \"irq-delivered-elsewhere\" and .evidence.irq == $src)] | length == 1' > /dev/null"

# 4. Put back where the transaction left it, then rolled back: every IRQ
# reads as it did before the test.
echo "$to" > "/proc/irq/$src/smp_affinity_list"
if [ -n "$id" ]; then
	rb=$(curl -s -o "$state/rb" -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d '{}' "$url/v1/transactions/$id/rollback")
	check "rollback of transaction $id ($rb $(jq -c '[.status, .error]' "$state/rb"))" jqe '.status == "applied"' "$state/rb"
	moved=
	for q in "${!saved[@]}"; do
		now=$(cat "/proc/irq/$q/smp_affinity_list" 2>/dev/null) || continue
		[ "$now" = "${saved[$q]}" ] || moved+=" $q:${saved[$q]}->$now"
	done
	check "every IRQ's affinity as before the test${moved:+ (not:$moved)}" test -z "$moved"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
