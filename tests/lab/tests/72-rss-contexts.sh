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
#  - context 3 asked for while 1 is free: through the ioctl (6.1) 422, the
#    kernel would give 1, and GET /v1/nics lists the ids the rules name;
#    with ethtool netlink's RSS commands (6.17+: 7.3), judged by the lab's
#    own netlink judge (lab_ethnl_judge, not nettune's code):
#    GET /v1/nics lists a context no rule names (made by the judge) with
#    "listed_from": "netlink"; context 3 is made as 3 (the judge's dump);
#    held as the desired state with a 600 s check interval, its table
#    changed by the judge (RSS_SET) is put back within seconds: only the
#    RSS_NTF notification can have woken the check (last_ethtool_event
#    names it); rolled back, the judge's dump is what it was;
#  - input_xfrm "sym-xor": on 6.1 refused (422: needs Linux 6.8, naming the
#    kernel), nothing applied; on 7.3 set on the NIC's table in the first
#    transaction (the judge reads input_xfrm=1, GET /v1/nics sym-xor),
#    rolled back to the judge's identical reading, and on context 3 as the
#    desired state makes it.
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
# A 600 s periodic check: only a notification acts in time once a desired
# state is held (the last part, on 7.3).
agent --drift-policy repair --drift-interval 600 || finish "agent did not start"

profile=$(jq -nc --arg p "$port" '{name: "lab-rss-contexts",
    rss: [{interface: $p, context: 1, queues: "2-3"}],
    flows: [{interface: $p, flow_type: "tcp4", dst_port: 5201, context: 1}]}')
# The lab's own netlink judge, and whether this kernel has ethtool
# netlink's RSS commands (6.17+): there the same transaction also gives the
# NIC's own table symmetric-xor.
J=$(command -v lab_ethnl_judge || true)
kv=$(uname -r | awk -F. '{print $1 * 1000 + $2}')
NL=0
[ "$kv" -ge 6017 ] && [ -n "$J" ] && NL=1
val() { sed -n "s/^$1=//p" <<< "$2"; }
[ "$NL" = 1 ] && profile=$(jq -c --arg p "$port" '.rss += [{interface: $p, input_xfrm: "sym-xor"}]' <<< "$profile")

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
[ "$NL" = 1 ] && before_get=$("$J" rss-get "$port")

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
if [ "$NL" = 1 ]; then
    expect_eq "GET /v1/nics input_xfrm" "$(jq -r .rss.input_xfrm <<< "$API_BODY")" sym-xor
    expect_eq "judge: the NIC's input_xfrm" "$(val input_xfrm "$("$J" rss-get "$port")")" 1
fi

api POST /v1/plan "$profile"
expect_eq "re-plan steps" "$(jq '.steps | length' <<< "$API_BODY")" 0

# Context 3 while context 1 is there: 2 is the lowest free id. Through the
# ioctl (no RSS_CREATE_ACT) refused; with it (6.17+) planned as 3.
ctx3=$(jq -nc --arg p "$port" '{name: "lab-ctx-3", rss: [{interface: $p, context: 3, equal: 2}]}')
api POST /v1/plan "$ctx3"
if [ "$NL" = 1 ]; then
    expect_eq "context 3 planned on $(uname -r) (RSS_CREATE_ACT)" "$API_CODE" 200
    expect_eq "context 3's step" "$(jq -c '[.steps[] | [.target, .before]]' <<< "$API_BODY")" "[[\"$port/context-3\",\"none\"]]"
else
    expect_eq "context 3 HTTP status" "$API_CODE" 422
    jq -r '.errors[0].message' <<< "$API_BODY" | grep -q "RSS context 3 would be made as 2" &&
        ok "context 3 refused on $(uname -r): the kernel would give 2" || bad "context 3: $API_BODY"
    api GET "/v1/nics/$port"
    jq -r '.rss.contexts.listed_from' <<< "$API_BODY" | grep -q "^the ids the NIC's flow rules name" &&
        ok "listed from the rules' ids (the ioctl lists none)" || bad "listed_from: $(jq -c .rss.contexts <<< "$API_BODY")"
fi
if [ "$kv" -lt 6008 ]; then
    # No input transformation before 6.8: refused, naming the release.
    xprof=$(jq -nc --arg p "$port" '{name: "lab-xfrm", rss: [{interface: $p, input_xfrm: "sym-xor"}]}')
    before_x=$(ethtool -x "$port")
    api POST /v1/transactions "{\"profile\": $xprof}"
    expect_eq "input_xfrm on $(uname -r)" "$API_CODE" 422
    expect_eq "the refusal" "$(jq -r '.errors[] | "\(.path): \(.message)"' <<< "$API_BODY" | cut -d';' -f1)" \
        "\$.rss[0].input_xfrm: $port: input_xfrm \"sym-xor\" needs Linux 6.8 or later (this kernel is $(uname -r)"
    expect_eq "ethtool -x after the refusal" "$(ethtool -x "$port")" "$before_x"
fi

api POST "/v1/transactions/$id/rollback" '{}'
expect_eq "rollback HTTP status" "$API_CODE" 201
expect_eq "rollback status" "$(jq -r .status <<< "$API_BODY")" applied
ethtool -x "$port" context 1 >/dev/null 2>&1 && bad "context 1 still there after the rollback" ||
    ok "context 1 gone after the rollback"
expect_eq "ethtool -u after the rollback" "$(ethtool -u "$port")" "$before_u"
[ "$NL" = 1 ] && expect_eq "judge: the NIC's RSS after the rollback (input_xfrm back)" "$("$J" rss-get "$port")" "$before_get"
if [ "$NL" = 1 ]; then
    dump() { "$J" rss-dump "$port" | sed 's/ indir=.*//' | tr '\n' ' '; }
    # A context no rule names, made behind nettune's back: listed.
    "$J" rss-create "$port" ctx 2 indir "1 2" >/dev/null || bad "judge: rss-create ctx 2"
    api GET "/v1/nics/$port"
    expect_eq "listed_from" "$(jq -r .rss.contexts.listed_from <<< "$API_BODY")" netlink
    expect_eq "contexts listed (no rule names 2)" "$(jq -c '[.rss.contexts.list[] | [.id, .queues, .rules]]' <<< "$API_BODY")" \
        '[[2,[1,2],[]]]'
    before_dump=$(dump)
    # Held, with the agent's 600 s periodic check.
    ctx3x=$(jq -c '.rss[0].input_xfrm = "sym-xor"' <<< "$ctx3")
    api PUT /v1/desired "$ctx3x"
    t_put=$(now_ms)
    expect_eq "PUT /v1/desired (context 3, symmetric-xor)" "$API_CODE" 200
    made() { [ "$("$J" rss-get "$port" 3 | sed -n 's/^indir=//p')" = "$(spread 128 2 0)" ]; }
    wait_for 10 made && ok "context 3 made as 3 while 1 is free" || bad "context 3: $("$J" rss-get "$port" 3)"
    expect_eq "judge: the contexts" "$(dump)" "context=0 context=2 context=3 "
    expect_eq "judge: context 3's input_xfrm" "$(val input_xfrm "$("$J" rss-get "$port" 3)")" 1
    # Past the second after its own apply in which the agent takes a
    # notification as its own.
    while [ $(( $(now_ms) - t_put )) -lt 1200 ]; do sleep 0.1; done
    t0=$(now_ms)
    "$J" rss-set "$port" 3 indir "3" || bad "judge: rss-set 3"
    wait_for 10 made && ok "context 3's table put back $(( $(now_ms) - t0 )) ms after the change (check interval 600 s)" ||
        bad "context 3 after the change by hand: $("$J" rss-get "$port" 3)"
    api GET /v1/drift
    expect_eq "the notification that woke the check" \
        "$(jq -r '.last_ethtool_event | "\(.what) \(.interface)"' <<< "$API_BODY")" "rss $port"
    api GET "/v1/transactions?limit=1"
    expect_eq "repair reason" "$(jq -r '.transactions[0].reason' <<< "$API_BODY")" drift
    # No longer held, then the agent's two transactions rolled back newest
    # first: the repair (the table back to the one set by hand), then the
    # one that made context 3 (forced: the first rollback changed its
    # target since), which deletes it.
    api DELETE /v1/desired
    api GET "/v1/transactions?limit=20"
    for t in $(jq -r '[.transactions[] | select(.reason == "drift" and .rollback_of == null) | .id] | sort | reverse | .[]' <<< "$API_BODY"); do
        api POST "/v1/transactions/$t/rollback" '{"force": true}'
        expect_eq "rollback of transaction $t" "$API_CODE $(jq -r .status <<< "$API_BODY")" "201 applied"
    done
    expect_eq "judge: the contexts after the rollbacks" "$(dump)" "$before_dump"
fi
nt_stop
finish "an RSS context and a rule into it applied (ethtool -x context 1, ethtool -u), re-planned empty, rolled back with both gone; context 3: $([ "$NL" = 1 ] && echo "made as 3 over netlink, listed with one no rule names, held through RSS_NTF, rolled back" || echo "refused, the ioctl would give 2")"
