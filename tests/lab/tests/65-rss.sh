#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# RSS on the guest's real kernel, on the virtio-net NIC qemu gives RSS
# (mq=on,rss=on, 4 queue pairs; tests/lab/run.sh NETTUNE_LAB_RSS):
#  - rss equal 2 and hash fields (tcp4 "sd", udp4 "sdfn") in one transaction,
#    checked with `ethtool -x` and `ethtool -n IF rx-flow-hash`; planned
#    again: no step; rolled back: the table and fields as they were;
#  - the node-1 virtio NIC, which has no RSS (table size 0): refused at
#    validation (422 with the JSON paths), nothing sent to it (Debian 12's
#    virtio_net would wedge);
#  - a desired state holding IRQ affinity (local) and XPS (irq) on the RSS
#    NIC, then `ethtool -L IF combined 2` behind the agent's back (the driver
#    rewrites IRQ affinity and XPS itself): the watcher repairs both from the
#    ethtool notification (check interval 600 s, so only the event acts).
. /lab/lib.bash

MAC_RSS=52:54:00:02:01:20
[ "${NT_LAB_RSS:-0}" = 1 ] || skip "no RSS NIC in this lab run: ${NT_LAB_RSS_WHY:-unknown}"
IF=$(nic_by_mac "$MAC_RSS") || { bad "no NIC $MAC_RSS"; finish "rss"; }
N1=$(nic_by_mac "$MAC_N1") || { bad "no NIC $MAC_N1"; finish "rss"; }
N1_CPUS=$(cat /sys/devices/system/node/node1/cpulist)
ip link set "$IF" up
ip link set "$N1" up

# The table as ethtool -x prints it, entries space-separated.
indir() { ethtool -x "$1" | awk '/RSS hash key/{exit} /^ *[0-9]+:/{for (i = 2; i <= NF; i++) printf "%s ", $i}'; }
# The hashed fields of flow type $2 as ethtool -n prints them, ';'-joined.
fields() { ethtool -n "$1" rx-flow-hash "$2" 2>/dev/null | tail -n +2 | grep -v '^$' | tr '\n' ';'; }
queues_in() { tr ' ' '\n' <<< "$1" | grep -v '^$' | sort -un | tr '\n' ' '; }

orig=$(indir "$IF")
orig_tcp4=$(fields "$IF" tcp4) orig_udp4=$(fields "$IF" udp4)
echo "$IF: $(wc -w <<< "$orig") entries over queues $(queues_in "$orig"); tcp4 '$orig_tcp4', udp4 '$orig_udp4'"
[ -n "$orig" ] || { bad "$IF: ethtool -x shows no table"; finish "rss"; }

STATE=$(mktemp -d /tmp/nt-rss.XXXXXX)
trap nt_stop_at_exit EXIT
nt_agent "$STATE" --drift-policy repair --drift-interval 600 || finish "agent did not start"

# --- equal 2 and hash fields, applied, re-planned, rolled back
profile=$(jq -nc --arg i "$IF" '{name: "lab-rss", rss: [{interface: $i, equal: 2,
    hash_fields: {tcp4: "sd", udp4: "sdfn"}}]}')
api POST /v1/transactions "{\"profile\": $profile}"
expect_eq "apply rss: HTTP" "$API_CODE" 201
expect_eq "apply rss: status" "$(jq -r .status <<< "$API_BODY")" applied
id=$(jq -r .id <<< "$API_BODY")
jq -c '.steps[] | {target, before, after}' <<< "$API_BODY"
now=$(indir "$IF")
expect_eq "$IF: queues in the table after equal 2" "$(queues_in "$now")" "0 1 "
expect_eq "$IF: table size kept" "$(wc -w <<< "$now")" "$(wc -w <<< "$orig")"
expect_eq "$IF: tcp4 hashed on" "$(fields "$IF" tcp4)" "IP SA;IP DA;"
case $(fields "$IF" udp4) in *"L4 bytes 2 & 3"*) ok "$IF: udp4 hashes the ports" ;; *) bad "$IF: udp4 is '$(fields "$IF" udp4)'" ;; esac
api POST /v1/plan "$profile"
expect_eq "re-plan: steps" "$(jq '.steps | length' <<< "$API_BODY")" 0
api POST "/v1/transactions/$id/rollback" '{}'
expect_eq "rollback: status" "$(jq -r .status <<< "$API_BODY")" applied
expect_eq "$IF: the table after the rollback" "$(indir "$IF")" "$orig"
expect_eq "$IF: tcp4 after the rollback" "$(fields "$IF" tcp4)" "$orig_tcp4"
expect_eq "$IF: udp4 after the rollback" "$(fields "$IF" udp4)" "$orig_udp4"

# --- a virtio NIC without rss=on: 422, nothing sent
api GET '/v1/transactions?limit=50'
ntx=$(jq '.transactions | length' <<< "$API_BODY")
bad_profile=$(jq -nc --arg i "$N1" '{name: "lab-no-rss", rss: [{interface: $i, equal: 1},
    {interface: $i, hash_fields: {tcp4: "sdfn"}}]}')
api POST /v1/transactions "{\"profile\": $bad_profile}"
expect_eq "rss on $N1 (no RSS): HTTP" "$API_CODE" 422
echo "$API_BODY" | jq -c '.errors'
expect_eq "error at \$.rss[0].equal" "$(jq '[.errors[] | select(.path == "$.rss[0].equal")] | length' <<< "$API_BODY")" 1
expect_eq "error at \$.rss[1].hash_fields.tcp4" \
    "$(jq '[.errors[] | select(.path == "$.rss[1].hash_fields.tcp4")] | length' <<< "$API_BODY")" 1
api GET '/v1/transactions?limit=50'
expect_eq "no transaction for the refused profile" "$(jq '.transactions | length' <<< "$API_BODY")" "$ntx"
expect_eq "$N1 still carries its link" "$(cat "/sys/class/net/$N1/operstate")" up

# --- ethtool -L behind the agent's back, with IRQ affinity and XPS held
# Every TX queue's XPS is its IRQ's CPUs, and those are on node 1.
held() {
    api GET "/v1/nics/$IF"
    [ "$API_CODE" = 200 ] || return 1
    [ "$(jq '[.queues.tx[] | select(.xps_cpus != .irq_cpus or .xps_cpus == "")] | length' <<< "$API_BODY")" = 0 ] || return 1
    local c
    for c in $(jq -r '.queues.tx[].irq_cpus, .queues.rx[].irq_cpus' <<< "$API_BODY"); do
        cpulist_within "$c" "$N1_CPUS" || return 1
    done
}
desired=$(jq -nc --arg i "$IF" '{name: "lab-steer", irq_affinity: [{interface: $i, policy: "local"}],
    xps: [{interface: $i, policy: "irq"}]}')
api PUT /v1/desired "$desired"
expect_eq "PUT /v1/desired" "$API_CODE" 200
wait_for 30 held && ok "$IF: IRQs on node 1 ($N1_CPUS), XPS on their CPUs" || bad "$IF: desired state not in place"
api GET "/v1/transactions?limit=1"
last=$(jq -r '.transactions[0].id' <<< "$API_BODY")
ethtool -L "$IF" combined 2 || bad "ethtool -L $IF combined 2 failed"
echo "after ethtool -L: $(for q in /sys/class/net/$IF/queues/tx-*; do printf '%s xps %s; ' "${q##*/}" "$(cat "$q/xps_cpus")"; done)"
repaired() { api GET "/v1/transactions?limit=1"; [ "$(jq -r '.transactions[0].id' <<< "$API_BODY")" != "$last" ] && held; }
if wait_for 30 repaired; then
    ok "$IF: IRQ affinity and XPS repaired after ethtool -L"
    expect_eq "TX queues after ethtool -L" "$(jq '.queues.tx | length' <<< "$API_BODY")" 2
else
    bad "$IF: not repaired after ethtool -L: $(jq -c '.queues' <<< "$API_BODY")"
fi
api GET "/v1/transactions?limit=1"
echo "newest transaction: $(jq -c '.transactions[0] | {id, status, reason, client}' <<< "$API_BODY")"
expect_eq "the repair's reason" "$(jq -r '.transactions[0].reason' <<< "$API_BODY")" drift
api DELETE /v1/desired
ethtool -L "$IF" combined 4 || true
finish "rss equal 2 + hash fields applied and rolled back on $IF; RSS on a NIC without it refused; XPS/IRQs repaired after ethtool -L"
