#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Adaptive-coalescing (DIM) profiles (issue 41) on a netdevsim port, read
# back by a judge that is not nettune's code: lab_ethnl_judge coal-get (a
# raw COALESCE_GET of its own; Debian 12's ethtool 6.1 prints no profile).
#  - 6.11+ with the lab's netdevsim keeping profiles (7.x): the report
#    (GET /v1/nics/IF's coalesce_params.rx_profile) says what the judge
#    reads; a transaction sets rx_profile (usec of every level), the judge
#    reads it back; a profile of 4 levels is refused (422 at
#    $.coalesce[0].rx_profile), nothing applied; the rollback gives the
#    judge's reading back byte for byte; held by the desired state, a
#    profile changed by hand is put back within seconds by the
#    notification (the agent's periodic check is 600 s away).
#  - older (6.1): rx_profile "not supported" naming Linux 6.11, and the same
#    profile refused at plan time with it.
. /lab/lib.bash

[ -e /sys/bus/netdevsim/new_device ] || modprobe netdevsim || skip "netdevsim module cannot be loaded"
echo "90 1 1" > /sys/bus/netdevsim/new_device || skip "cannot create netdevsim device 90"
for _ in $(seq 50); do
    port=$(ls /sys/bus/netdevsim/devices/netdevsim90/net/ 2>/dev/null | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { bad "netdevsim90 made no port"; finish "DIM profiles"; }
cleanup() { nt_stop; echo 90 > /sys/bus/netdevsim/del_device 2>/dev/null || true; }

nt_start || exit 1
trap cleanup EXIT
api GET "/v1/nics/$port"
expect_eq "GET /v1/nics/$port" "$API_CODE" 200
rx=$(jq -c .coalesce_params.rx_profile <<< "$API_BODY")
echo "report ($(uname -r)): rx_profile $rx"
# The profile entry for $port, levels as JSON.
coal() { jq -nc --arg n "$port" --argjson l "$1" '{profile: {name: "lab-dim", coalesce: [{interface: $n, rx_profile: $l}]}}'; }
# The report's levels in the judge's words: "usec,pkts[,comps]" per level.
as_judge() { jq -r '[.value[] | [.usec, .pkts, .comps] | map(select(. != null) | tostring) | join(",")] | join(" ")' <<< "$1"; }

if [ "$(jq .supported <<< "$rx")" = true ]; then
    judge=$(command -v lab_ethnl_judge) || skip "lab_ethnl_judge is not in the initramfs"
    read_rx() { "$judge" coal-get "$port" | sed -n 's/^rx_profile=//p'; }
    before=$(read_rx)
    [ -n "$before" ] || { bad "the judge reads no rx_profile where nettune reports one"; finish "DIM profiles"; }
    expect_eq "rx_profile as the kernel reads it" "$(as_judge "$rx")" "$before"

    # Every level's usec 3, 6, 9, 12, 15: unlike any default table.
    api POST /v1/transactions "$(coal '[{"usec":3},{"usec":6},{"usec":9},{"usec":12},{"usec":15}]')"
    expect_eq "rx_profile: HTTP status" "$API_CODE" 201
    expect_eq "rx_profile: status" "$(jq -r .status <<< "$API_BODY")" applied
    echo "steps: $(jq -c '[.steps[] | {kind, before, after, result}]' <<< "$API_BODY")"
    id=$(jq -r .id <<< "$API_BODY")
    now=$(read_rx)
    expect_eq "kernel: the levels' usec" "$(tr ' ' '\n' <<< "$now" | cut -d, -f1 | tr '\n' ' ')" "3 6 9 12 15 "
    expect_eq "kernel: the rest of each level untouched" "$(tr ' ' '\n' <<< "$now" | cut -d, -f2- | tr '\n' ' ')" \
        "$(tr ' ' '\n' <<< "$before" | cut -d, -f2- | tr '\n' ' ')"

    api POST /v1/plan "$(coal '[{"usec":1},{"usec":2},{"usec":3},{"usec":4}]')"
    expect_eq "4 levels: HTTP status" "$API_CODE" 422
    jq -e '.errors[] | select(.path == "$.coalesce[0].rx_profile") | select(.message | contains("5 levels"))' \
        <<< "$API_BODY" >/dev/null && ok "refused at \$.coalesce[0].rx_profile (5 levels)" ||
        bad "422 without the reason: $(jq -c .errors <<< "$API_BODY")"
    expect_eq "nothing applied by the refused plan" "$(read_rx)" "$now"

    api POST "/v1/transactions/$id/rollback" '{}'
    expect_eq "rollback: status" "$(jq -r .status <<< "$API_BODY")" applied
    expect_eq "kernel's reading after the rollback (byte for byte)" "$(read_rx)" "$before"

    # Held: the same levels as the desired state of an agent that checks
    # only every 600 s; a table changed by hand (the judge's COALESCE_SET)
    # is put back within seconds, through the COALESCE_NTF it causes.
    hstate=$(mktemp -d /tmp/nt-dimhold.XXXXXX)
    nt_agent "$hstate" --drift-policy repair --drift-interval 600 || finish "the holding agent did not start"
    usecs() { read_rx | tr ' ' '\n' | cut -d, -f1 | tr '\n' ' '; }
    held() { [ "$(usecs)" = "3 6 9 12 15 " ]; }
    api PUT /v1/desired "$(coal '[{"usec":3},{"usec":6},{"usec":9},{"usec":12},{"usec":15}]' | jq -c .profile)"
    expect_eq "PUT /v1/desired: HTTP status" "$API_CODE" 200
    wait_for 10 held && ok "desired rx_profile applied" || bad "rx_profile usec $(usecs)"
    sleep 2
    "$judge" coal-set "$port" rx-profile "2,32 16,64 32,128 64,256 128,256" || bad "the judge's change by hand"
    wait_for 10 held && ok "rx_profile put back after a change by hand" || bad "rx_profile still usec $(usecs)"
    sleep 0.5
    api GET "/v1/transactions?limit=1"
    expect_eq "repair reason" "$(jq -r '.transactions[0].reason' <<< "$API_BODY")" drift
    api GET /v1/drift
    expect_eq "the notification that made it look" \
        "$(jq -r '.last_ethtool_event | "\(.what) \(.interface)"' <<< "$API_BODY")" "coalesce $port"
    api DELETE /v1/desired
elif jq -e '.reason | test("needs Linux 6.11 or later \\(this kernel is ")' <<< "$rx" >/dev/null; then
    ok "rx_profile: $(jq -r .reason <<< "$rx")"
    api POST /v1/plan "$(coal '[{"usec":3},{"usec":6},{"usec":9},{"usec":12},{"usec":15}]')"
    expect_eq "the same profile: HTTP status" "$API_CODE" 422
    jq -e '.errors[] | select(.path == "$.coalesce[0].rx_profile") | select(.message | contains("needs Linux 6.11"))' \
        <<< "$API_BODY" >/dev/null && ok "refused at \$.coalesce[0].rx_profile naming Linux 6.11" ||
        bad "422 without the release: $(jq -c .errors <<< "$API_BODY")"
    echo "errors: $(jq -c '[.errors[] | .path + ": " + .message]' <<< "$API_BODY")"
else
    skip "netdevsim on $(uname -r) keeps no DIM profile ($(jq -r .reason <<< "$rx"))"
fi
finish "DIM profiles on $(uname -r)"
