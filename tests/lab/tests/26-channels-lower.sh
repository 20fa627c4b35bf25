#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Fewer channels under a table and a rule set by an earlier profile, on a
# netdevsim port of 16 queues (tests/lab/netdevsim-rxnfc*.patch: RSS and
# flow rules), judged by ethtool(8):
#  - profile A sends the port's flows to queues 8-15 (a user-set table) and
#    tcp4 port 5002 to queue 12;
#  - profile B, over it, asks for 8 channels, a table over queues 0-7 and the
#    rule on queue 4. The kernel refuses fewer channels than a user-set table
#    or a rule names (ethtool_check_max_channel; "too low for existing
#    indirection table"), so B's plan sets the table and the rule first and
#    the channels last: applied, `ethtool -l` shows 8, `ethtool -x` queues
#    0-7, `ethtool -u` queue 4;
#  - B rolled back: the channels grow back first, then A's table and rule:
#    16, queues 8-15, queue 12; A rolled back (forced: B changed its
#    targets since): the table the port had, no rule.
. /lab/lib.bash

[ -e /sys/bus/netdevsim/new_device ] || modprobe netdevsim || skip "netdevsim module cannot be loaded"
echo "78 1 16" > /sys/bus/netdevsim/new_device || skip "cannot create netdevsim device 78"
for _ in $(seq 50); do
    port=$(ls /sys/bus/netdevsim/devices/netdevsim78/net/ 2>/dev/null | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { bad "netdevsim78 made no port"; finish "channels lowered"; }
cleanup() {
    nt_stop
    echo 78 > /sys/bus/netdevsim/del_device 2>/dev/null || true
}
trap cleanup EXIT
ethtool -x "$port" >/dev/null 2>&1 || skip "this netdevsim has no RSS table"
ethtool -u "$port" >/dev/null 2>&1 || skip "this netdevsim has no flow rule table"

chan() { ethtool -l "$port" 2>/dev/null | awk '/^Current hardware settings/{c=1} c && $1=="Combined:" {print $2; exit}'; }
# The queues the table names, ascending, once each.
queues() { ethtool -x "$port" | awk '/^ *[0-9]+:/ {for (i = 2; i <= NF; i++) print $i}' | sort -nu | tr '\n' ' ' | sed 's/ $//'; }
rule_queue() { ethtool -u "$port" | sed -n '/^Filter: 0$/,/^$/p' | sed -n 's/.*Action: Direct to queue \([0-9]*\).*/\1/p'; }
state() { echo "$(chan) | $(queues) | $(rule_queue)"; }

expect_eq "$port channels at creation" "$(chan)" 16
table0=$(ethtool -x "$port")
nt_start || exit 1

a=$(jq -nc --arg p "$port" '{name: "lab-chan-a", rss: [{interface: $p, queues: "8-15"}],
    flows: [{interface: $p, flow_type: "tcp4", dst_port: 5002, queue: 12}]}')
b=$(jq -nc --arg p "$port" '{name: "lab-chan-b", channels: [{interface: $p, combined: 8}],
    rss: [{interface: $p, equal: 8}],
    flows: [{interface: $p, flow_type: "tcp4", dst_port: 5002, queue: 4, replace: true}]}')

api POST /v1/transactions "{\"profile\": $a}"
expect_eq "A: apply HTTP status" "$API_CODE" 201
expect_eq "A: status" "$(jq -r .status <<< "$API_BODY")" applied
ida=$(jq -r .id <<< "$API_BODY")
expect_eq "A: ethtool -l | -x | -u" "$(state)" "16 | 8 9 10 11 12 13 14 15 | 12"

api POST /v1/transactions "{\"profile\": $b}"
expect_eq "B: apply HTTP status" "$API_CODE" 201
expect_eq "B: status" "$(jq -r .status <<< "$API_BODY")" applied
jq -c '.steps[] | [.kind, .target, .result, .error]' <<< "$API_BODY"
idb=$(jq -r .id <<< "$API_BODY")
expect_eq "B: step order" "$(jq -c '[.steps[] | select(.kind == "rss" or .kind == "flow" or .kind == "channels") | .kind]' <<< "$API_BODY")" \
    '["rss","flow","channels"]'
expect_eq "B: ethtool -l | -x | -u" "$(state)" "8 | 0 1 2 3 4 5 6 7 | 4"

api POST "/v1/transactions/$idb/rollback" '{}'
expect_eq "B rollback HTTP status" "$API_CODE" 201
expect_eq "B rollback status" "$(jq -r .status <<< "$API_BODY")" applied
expect_eq "after B's rollback: ethtool -l | -x | -u" "$(state)" "16 | 8 9 10 11 12 13 14 15 | 12"

# B and its rollback changed A's targets since: forced.
api POST "/v1/transactions/$ida/rollback" '{"force": true}'
expect_eq "A rollback status" "$(jq -r .status <<< "$API_BODY")" applied
expect_eq "after A's rollback: ethtool -x" "$(ethtool -x "$port")" "$table0"
expect_eq "after A's rollback: the rule" "$(rule_queue)" ""
finish "16 -> 8 channels under a user-set table and a rule on $(uname -r)"
