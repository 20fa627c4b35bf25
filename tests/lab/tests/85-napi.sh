#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The NAPI report (GET /v1/nics/IF) on a real virtio NIC, on both lab kernels:
#  - 7.x: the netdev family links each RX queue to its NAPI (ids from 8193);
#    7.x's virtio_net never tells the kernel its NAPIs' IRQs, so the queue IRQs
#    still come from their names (irq_source irq-names) while the NAPI ids
#    come from the family; with threaded on, each NAPI's thread is its pid
#    there;
#  - 6.1: no netdev family: no NAPI ids, irq_source irq-names, and the threads
#    found by their names napi/IF-ID.
# On both: threaded on (sysfs, 5.12+) starts threads that the report names
# with the CPUs /proc says they may run on; threaded off and they are gone
# from the report: 7.x ends them, 6.1 keeps them parked (asleep, polling
# nothing), and the report does not show a parked thread as a NAPI's.
. /lab/lib.bash

N1=$(nic_by_mac "$MAC_N1") || { echo "no NIC $MAC_N1"; exit 1; }
ip link set "$N1" up
[ -e "/sys/class/net/$N1/threaded" ] || skip "no /sys/class/net/$N1/threaded on $(uname -r)"
kmaj=$(uname -r | cut -d. -f1)
echo 0 > "/sys/class/net/$N1/threaded"

nt_start || exit 1
api GET "/v1/nics/$N1"
expect_eq "GET /v1/nics/$N1" "$API_CODE" 200
echo "report: $(jq -c '{irq_source, threaded, napi_defer_hard_irqs, gro_flush_timeout_ns, napi,
    rx: [.queues.rx[] | {queue, irq, napi_id}]}' <<< "$API_BODY")"
expect_eq "irq_source (virtio_net gives no NAPI IRQ)" "$(jq -r .irq_source <<< "$API_BODY")" irq-names
expect_eq "device threaded off" "$(jq -r .threaded <<< "$API_BODY")" false
expect_eq "napi_defer_hard_irqs as sysfs" "$(jq -r .napi_defer_hard_irqs <<< "$API_BODY")" \
    "$(cat "/sys/class/net/$N1/napi_defer_hard_irqs")"
expect_eq "gro_flush_timeout_ns as sysfs" "$(jq -r .gro_flush_timeout_ns <<< "$API_BODY")" \
    "$(cat "/sys/class/net/$N1/gro_flush_timeout")"
nrx=$(ls -d "/sys/class/net/$N1/queues/rx-"* | wc -l)
expect_eq "RX queues reported" "$(jq '.queues.rx | length' <<< "$API_BODY")" "$nrx"
if [ "$kmaj" -ge 7 ]; then
    jq -e '[.queues.rx[].napi_id] | all(type == "number" and . > 8192)' <<< "$API_BODY" >/dev/null &&
        ok "every RX queue has its NAPI id from the netdev family" ||
        bad "RX queues without NAPI ids on $(uname -r): $(jq -c '[.queues.rx[].napi_id]' <<< "$API_BODY")"
    jq -e '. as $d | [.queues.rx[].napi_id] | all(. as $i | $d.napi | any(.id == $i))' <<< "$API_BODY" >/dev/null &&
        ok "each RX queue's NAPI is in the napi list" || bad "a queue's NAPI missing from napi: $(jq -c .napi <<< "$API_BODY")"
    jq -e '[.napi[] | select(.pid != null)] | length == 0' <<< "$API_BODY" >/dev/null &&
        ok "no NAPI thread while threaded is off" || bad "threads reported while off: $(jq -c .napi <<< "$API_BODY")"
else
    jq -e '[.queues.rx[].napi_id] | all(. == null)' <<< "$API_BODY" >/dev/null &&
        ok "no NAPI ids without the netdev family ($(uname -r))" ||
        bad "NAPI ids on $(uname -r): $(jq -c '[.queues.rx[].napi_id]' <<< "$API_BODY")"
    expect_eq "no NAPI listed while threaded is off" "$(jq '.napi | length' <<< "$API_BODY")" 0
fi

# Threaded on: the kernel starts napi/IF-ID threads.
echo 1 > "/sys/class/net/$N1/threaded"
# One grep over /proc, not a cat a process: under TCG a loop of forks
# takes seconds a round.
threads() { grep -l "^napi/$N1-" /proc/[0-9]*/comm 2>/dev/null | sed 's,^/proc/,,; s,/comm$,,' | sort -n; }
has_threads() { [ -n "$(threads)" ]; }
no_threads() { [ -z "$(threads)" ]; }
wait_for 5 has_threads || true
pids=$(threads)
[ -n "$pids" ] && ok "threaded on: threads $(echo $pids)" || bad "threaded on, but no napi/$N1-* thread"
api GET "/v1/nics/$N1"
expect_eq "device threaded on" "$(jq -r .threaded <<< "$API_BODY")" true
for pid in $pids; do
    e=$(jq -c --argjson p "$pid" '.napi[] | select(.pid == $p)' <<< "$API_BODY")
    if [ -z "$e" ]; then
        # 7.x also starts threads for TX NAPIs (id 0 in their names), which
        # the family does not list.
        [[ $(cat "/proc/$pid/comm") == "napi/$N1-0" ]] && { echo "note: $pid is a TX NAPI's thread (napi/$N1-0)"; continue; }
        bad "thread $pid ($(cat "/proc/$pid/comm")) not in the report: $(jq -c .napi <<< "$API_BODY")"
        continue
    fi
    expect_eq "thread $pid: its CPUs as /proc says" "$(jq -r .thread_cpus <<< "$e")" \
        "$(awk '/^Cpus_allowed_list:/ {print $2}' "/proc/$pid/status")"
    expect_eq "thread $pid: NAPI id as its name says" "napi/$N1-$(jq -r .id <<< "$e")" "$(cat "/proc/$pid/comm")"
    jq -e '.last_cpu | type == "number"' <<< "$e" >/dev/null && ok "thread $pid: last CPU $(jq .last_cpu <<< "$e")" ||
        bad "thread $pid: no last CPU: $e"
done

echo 0 > "/sys/class/net/$N1/threaded"
if wait_for 5 no_threads; then
    ok "threaded off: the threads are gone"
else
    # 6.1 keeps each NAPI's thread when threaded is turned off: it sleeps
    # in napi_threaded_poll and polls nothing (later kernels stop it).
    echo "note: $(uname -r) keeps the threads after threaded off: $(threads | tr '\n' ' ')"
    [ "$kmaj" -lt 7 ] && ok "threads parked on $(uname -r)" || bad "threaded off on $(uname -r), threads left: $(threads)"
fi
api GET "/v1/nics/$N1"
expect_eq "device threaded off again" "$(jq -r .threaded <<< "$API_BODY")" false
jq -e '[.napi[] | select(.pid != null)] | length == 0' <<< "$API_BODY" >/dev/null &&
    ok "threaded off: no thread in the report" || bad "threads still reported: $(jq -c .napi <<< "$API_BODY")"
nt_stop
finish "NAPI report on $(uname -r): ids $([ "$kmaj" -ge 7 ] && echo 'from the netdev family' || echo 'absent'), threads named with their CPUs"
