#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Flow rules on the guest's real kernel, through the ethtool ioctl dispatcher,
# on a netdevsim port with the lab's rule table (tests/lab/netdevsim-rxnfc.patch):
#  - ethtool -U / -u work on the port (a rule inserted by hand, RX_CLS_LOC_ANY);
#  - the recipe's flows (one rule per iperf3 port 5002-5005, dealt to queues
#    0-3) planned and applied: ntuple turned on first, ethtool -u shows the
#    rules at locations 0-3 beside the hand-made one;
#  - planned again: no step;
#  - rolled back: ethtool -u as it was before, the hand-made rule included,
#    and ntuple off again;
#  - held as the desired state: a rule deleted by hand with ethtool -U is
#    inserted again by the watcher (the kernel sends no event for rules: the
#    periodic check, every second here, finds it);
#  - a location of ours taken by another rule (ethtool -U ... loc 2) while
#    another rule is deleted: the deleted one is repaired, the taken one is
#    left as it is, reported contested ("taken", the culprit naming the
#    rule found there, a drift finding), and the desired state is not
#    "invalid"; deleted, the location is filled again.
# netdevsim has no IRQs, so "cpu" destinations are proven on fixture hosts
# (tests/unit/test_flows.c), not here.
. /lab/lib.bash

[ -e /sys/bus/netdevsim/new_device ] || modprobe netdevsim || skip "netdevsim module cannot be loaded"
echo "70 1 4" > /sys/bus/netdevsim/new_device || skip "cannot create netdevsim device 70"
for _ in $(seq 50); do
    port=$(ls /sys/bus/netdevsim/devices/netdevsim70/net/ 2>/dev/null | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { bad "netdevsim70 made no port"; finish "flows"; }
STATE=$(mktemp -d /tmp/nt-flows.XXXXXX)
cleanup() {
    nt_stop
    echo "70" > /sys/bus/netdevsim/del_device 2>/dev/null || true
}
trap cleanup EXIT
agent() { nt_agent "$STATE" "$@"; }
ntuple() { ethtool -k "$port" | awk '$1 == "ntuple-filters:" {print $2}'; }

# The device: ethtool's own commands on it. A rule by hand needs ntuple on.
expect_eq "ntuple at start" "$(ntuple)" off
ethtool -u "$port" | grep -q "4 RX rings available" && ok "ethtool -u: 4 RX rings" || bad "ethtool -u: $(ethtool -u "$port" 2>&1)"
# ethtool(8)'s exit code after a refused insert is not to be relied on (it
# falls back to the old N-tuple interface): the table is what counts.
echo "with ntuple off: $(ethtool -U "$port" flow-type udp4 dst-port 53 action 1 2>&1)"
ethtool -u "$port" | grep -q "Total 0 rules" && ok "insert refused while ntuple is off" ||
    bad "a rule inserted with ntuple off: $(ethtool -u "$port")"
ethtool -K "$port" ntuple on
hand=$(ethtool -U "$port" flow-type udp4 dst-port 53 action 1 2>&1) || bad "ethtool -U by hand: $hand"
echo "by hand: $hand"
echo "queue 9 of 4: $(ethtool -U "$port" flow-type tcp4 dst-port 1 action 9 2>&1)"
ethtool -K "$port" ntuple off
before=$(ethtool -u "$port")
echo "$before" | grep -q "Total 1 rules" && ok "one rule by hand" || bad "ethtool -u before: $before"

agent || finish "agent did not start"
profile=$(jq -nc --arg p "$port" '{name: "lab-flows",
    flows: [{interface: $p, flow_type: "tcp4", dst_ports: "5002-5005", queues: "0-3"}]}')
api POST /v1/plan "$profile"
expect_eq "plan HTTP status" "$API_CODE" 200
echo "$API_BODY" | jq -c '.steps[] | [.kind, .target, .before, .after]'
expect_eq "flow steps" "$(jq '[.steps[] | select(.kind == "flow")] | length' <<< "$API_BODY")" 4
expect_eq "ntuple step" "$(jq -r '.steps[] | select(.kind == "feature") | "\(.target) \(.after)"' <<< "$API_BODY")" "$port/rx-ntuple-filter on"

api POST /v1/transactions "{\"profile\": $profile}"
expect_eq "apply HTTP status" "$API_CODE" 201
[ "$API_CODE" = 201 ] || echo "$API_BODY" | head -c 2000
expect_eq "apply status" "$(jq -r .status <<< "$API_BODY")" applied
id=$(jq -r .id <<< "$API_BODY")
after=$(ethtool -u "$port")
echo "$after"
echo "$after" | grep -q "Total 5 rules" && ok "5 rules after the apply" || bad "ethtool -u after the apply: $after"
for n in 0 1 2 3; do
    sed -n "/^Filter: $n\$/,/^\$/p" <<< "$after" | grep -q "Dest port: $((5002 + n))" &&
        sed -n "/^Filter: $n\$/,/^\$/p" <<< "$after" | grep -q "Action: Direct to queue $n" &&
        ok "location $n: dst-port $((5002 + n)) to queue $n" || bad "location $n: $(sed -n "/^Filter: $n\$/,/^\$/p" <<< "$after")"
done
expect_eq "ntuple after the apply" "$(ntuple)" on
api GET "/v1/nics/$port"
expect_eq "rules in GET /v1/nics" "$(jq '.flows.rules | length' <<< "$API_BODY")" 5
expect_eq "rule at location 0" "$(jq -r '.flows.rules[0].rule' <<< "$API_BODY")" "tcp4 dst-port 5002 queue 0"
expect_eq "rules nettune made" "$(jq -c '[.flows.rules[] | select(.by_nettune != null) | .location]' <<< "$API_BODY")" "[0,1,2,3]"
expect_eq "the hand-made rule" "$(jq -c '[.flows.rules[] | select(.by_nettune == null) | .location]' <<< "$API_BODY")" "[63]"
expect_eq "ntuple in GET /v1/nics" "$(jq -cS '.flows.ntuple' <<< "$API_BODY")" '{"changeable":true,"on":true}'

api POST /v1/plan "$profile"
expect_eq "re-plan steps" "$(jq '.steps | length' <<< "$API_BODY")" 0

api POST "/v1/transactions/$id/rollback" '{}'
expect_eq "rollback HTTP status" "$API_CODE" 201
expect_eq "rollback status" "$(jq -r .status <<< "$API_BODY")" applied
expect_eq "ethtool -u after the rollback" "$(ethtool -u "$port")" "$before"
expect_eq "ntuple after the rollback" "$(ntuple)" off

# The desired state: a rule deleted by hand comes back.
agent --drift-policy repair --drift-interval 1 || finish "agent did not start again"
api PUT /v1/desired "$profile"
expect_eq "PUT /v1/desired" "$API_CODE" 200
has_rule() { ethtool -u "$port" | grep -q "^Filter: $1\$"; }
for _ in $(seq 100); do has_rule 3 && break; sleep 0.1; done
has_rule 3 && ok "desired rules applied" || bad "desired rules: $(ethtool -u "$port")"
sleep 1.5
ethtool -U "$port" delete 1 || bad "ethtool -U delete 1"
has_rule 1 && bad "rule 1 still there after the delete"
for _ in $(seq 100); do has_rule 1 && break; sleep 0.1; done
if has_rule 1; then
    ok "rule 1 repaired"
    sed -n '/^Filter: 1$/,/^$/p' <<< "$(ethtool -u "$port")" | grep -q "Dest port: 5003" &&
        ok "repaired rule matches dst-port 5003" || bad "repaired rule: $(ethtool -u "$port")"
else
    bad "rule 1 not repaired in 10 s"
    api GET /v1/drift; echo "$API_BODY" | jq -c . | head -c 2000
fi

# Location 2 taken by someone else's rule (the lab's table replaces a rule
# inserted at a used location, as mlx5 does: no moment it is empty), then
# location 3 deleted.
rule_of() { sed -n "/^Filter: $1\$/,/^\$/p" <<< "$(ethtool -u "$port")"; }
ethtool -U "$port" flow-type udp4 dst-port 9 action 2 loc 2 >/dev/null &&
    ethtool -U "$port" delete 3 || bad "ethtool -U: the foreign rule at loc 2, delete 3"
for _ in $(seq 100); do has_rule 3 && break; sleep 0.1; done
has_rule 3 && ok "rule 3 repaired beside the taken location" || bad "rule 3 not repaired: $(ethtool -u "$port")"
drift=""
for _ in $(seq 50); do
    api GET /v1/drift
    drift=$API_BODY
    [ "$(jq -r --arg t "$port/loc-2" '.targets[] | select(.target == $t) | .state' <<< "$drift")" = contested ] && break
    sleep 0.1
done
expect_eq "drift status with a location taken" "$(jq -r .status <<< "$drift")" drifted
expect_eq "taken location" "$(jq -c --arg t "$port/loc-2" '.targets[] | select(.target == $t) | [.state, .taken, .current]' <<< "$drift")" \
    '["contested",true,"udp4 dst-port 9 queue 2"]'
jq -r --arg t "$port/loc-2" '.targets[] | select(.target == $t) | .culprit' <<< "$drift" |
    grep -q "another program put 'udp4 dst-port 9 queue 2' at flow $port/loc-2" &&
    ok "culprit names the rule found there" || bad "culprit: $(jq -c .targets <<< "$drift")"
rule_of 2 | grep -q "Dest port: 9" && ok "the taken location is not overwritten" || bad "location 2: $(rule_of 2)"
api GET /v1/diagnostics
jq -r '.findings[] | select(.id == "drift") | .message' <<< "$API_BODY" |
    grep -q "flow $port/loc-2 holds another program's value" && ok "drift finding names it" ||
    bad "drift findings: $(jq -c '[.findings[] | select(.id == "drift")]' <<< "$API_BODY")"
# Deleted by its owner: ours again.
ethtool -U "$port" delete 2 || bad "ethtool -U delete 2"
for _ in $(seq 100); do rule_of 2 | grep -q "Dest port: 5004" && break; sleep 0.1; done
rule_of 2 | grep -q "Dest port: 5004" && ok "location 2 filled again once free" || bad "location 2 after the delete: $(rule_of 2)"
nt_stop
finish "flow rules applied, re-planned empty, rolled back to ethtool -u as it was, repaired when deleted by hand, a taken location contested and not overwritten"
