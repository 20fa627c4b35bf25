#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# RSS contexts with a flow rule into one, through nettune, on a netdevsim port
# of the lab's test device (tests/lab/netdevsim-rxnfc-7.patch: RSS, contexts
# through the 7.x core API, FLOW_RSS rules), judged by ethtool(8):
#  - one transaction makes context 1 on queues 2-3 and sends tcp4 port 5201
#    into it: `ethtool -x IF context 1` shows the table, `ethtool -u` the rule
#    with "RSS Context ID: 1"; GET /v1/nics/IF reports both;
#  - planned again: no step;
#  - rolled back: the rule gone first, then the context (7.x refuses to
#    delete a context a rule names): `ethtool -x IF context 1` refused,
#    `ethtool -u` as it was;
#  - context 3 asked for while 1 is free: 422, the kernel would give 1.
# Where the lab's netdevsim has no RSS (6.1 before netdevsim-rxnfc.patch
# gained it): the same profile refused (422 naming the context and the
# missing driver support), nothing applied.
. /lab/lib.bash

[ -e /sys/bus/netdevsim/new_device ] || modprobe netdevsim || skip "netdevsim module cannot be loaded"
echo "72 1 4" > /sys/bus/netdevsim/new_device || skip "cannot create netdevsim device 72"
for _ in $(seq 50); do
    port=$(ls /sys/bus/netdevsim/devices/netdevsim72/net/ 2>/dev/null | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { bad "netdevsim72 made no port"; finish "RSS contexts"; }
STATE=$(mktemp -d /tmp/nt-rssctx.XXXXXX)
cleanup() {
    nt_stop
    echo "72" > /sys/bus/netdevsim/del_device 2>/dev/null || true
}
trap cleanup EXIT
agent() { nt_agent "$STATE" "$@"; }
agent || finish "agent did not start"

profile=$(jq -nc --arg p "$port" '{name: "lab-rss-contexts",
    rss: [{interface: $p, context: 1, queues: "2-3"}],
    flows: [{interface: $p, flow_type: "tcp4", dst_port: 5201, context: 1}]}')

if ! ethtool -x "$port" >/dev/null 2>&1; then
    # No RSS in this netdevsim, so no contexts: refused, nothing done.
    before=$(ethtool -u "$port")
    api POST /v1/transactions "{\"profile\": $profile}"
    expect_eq "apply HTTP status without contexts" "$API_CODE" 422
    jq -r '.errors[] | "\(.path): \(.message)"' <<< "$API_BODY"
    jq -r '.errors[] | select(.path == "$.rss[0].context") | .message' <<< "$API_BODY" |
        grep -q "$port: its driver has no RSS contexts" && ok "the context refused, naming the driver" ||
        bad "no refusal at \$.rss[0].context: $API_BODY"
    expect_eq "ethtool -u after the refusal" "$(ethtool -u "$port")" "$before"
    api GET /v1/transactions
    expect_eq "transactions recorded" "$(jq '.transactions | length' <<< "$API_BODY")" 0
    finish "RSS contexts refused on $(uname -r), whose netdevsim has none; nothing applied"
fi

before_u=$(ethtool -u "$port")
table() { ethtool -x "$port" "$@" | awk '/^ *[0-9]+:/ {for (i = 2; i <= NF; i++) printf "%s ", $i}' | sed 's/ $//'; }
spread() { local i; for ((i = 0; i < $1; i++)); do printf '%s ' $(($3 + i % $2)); done | sed 's/ $//'; }
ethtool -x "$port" context 1 >/dev/null 2>&1 && bad "context 1 there before the test"

api POST /v1/plan "$profile"
expect_eq "plan HTTP status" "$API_CODE" 200
echo "$API_BODY" | jq -c '.steps[] | [.kind, .target, .before, .after]'
expect_eq "step order" "$(jq -c '[.steps[] | select(.kind == "rss" or .kind == "flow") | .target]' <<< "$API_BODY")" \
    "[\"$port/context-1\",\"$port/loc-0\"]"

api POST /v1/transactions "{\"profile\": $profile}"
expect_eq "apply HTTP status" "$API_CODE" 201
[ "$API_CODE" = 201 ] || echo "$API_BODY" | head -c 2000
expect_eq "apply status" "$(jq -r .status <<< "$API_BODY")" applied
id=$(jq -r .id <<< "$API_BODY")
expect_eq "ethtool -x context 1" "$(table context 1)" "$(spread 128 2 2)"
rule=$(ethtool -u "$port" | sed -n '/^Filter: 0$/,/^$/p')
echo "$rule"
grep -q "RSS Context ID: 1" <<< "$rule" && grep -q "Dest port: 5201" <<< "$rule" &&
    ok "ethtool -u: location 0 sends tcp/5201 to context 1" || bad "ethtool -u: $(ethtool -u "$port")"
api GET "/v1/nics/$port"
expect_eq "contexts in GET /v1/nics" "$(jq -c '[.rss.contexts.list[] | [.id, .queues, .rules]]' <<< "$API_BODY")" \
    '[[1,[2,3],[0]]]'
expect_eq "the rule in GET /v1/nics" "$(jq -r '.flows.rules[0].rule' <<< "$API_BODY")" \
    "tcp4 dst-port 5201 context 1 queue 0"

api POST /v1/plan "$profile"
expect_eq "re-plan steps" "$(jq '.steps | length' <<< "$API_BODY")" 0

# Context 3 while context 1 is there: 2 is the lowest free id.
bad_profile=$(jq -nc --arg p "$port" '{name: "lab-ctx-3", rss: [{interface: $p, context: 3, equal: 2}]}')
api POST /v1/plan "$bad_profile"
expect_eq "context 3 HTTP status" "$API_CODE" 422
jq -r '.errors[0].message' <<< "$API_BODY" | grep -q "RSS context 3 would be made as 2" &&
    ok "context 3 refused: the kernel would give 2" || bad "context 3: $API_BODY"

api POST "/v1/transactions/$id/rollback" '{}'
expect_eq "rollback HTTP status" "$API_CODE" 201
expect_eq "rollback status" "$(jq -r .status <<< "$API_BODY")" applied
ethtool -x "$port" context 1 >/dev/null 2>&1 && bad "context 1 still there after the rollback" ||
    ok "context 1 gone after the rollback"
expect_eq "ethtool -u after the rollback" "$(ethtool -u "$port")" "$before_u"
nt_stop
finish "an RSS context and a rule into it applied (ethtool -x context 1, ethtool -u), re-planned empty, a wrong id refused, rolled back with both gone"
