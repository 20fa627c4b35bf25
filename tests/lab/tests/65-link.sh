#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A link's MTU and root qdisc on the guest's real kernel (Debian's, which
# has sch_fq and fq_codel where the build machine's may not): each qdisc
# layout (fq with maxrate and flow_limit, fq_codel, mq with an fq child per
# TX queue on a 4-queue veth) applied, seen with `tc qdisc show`, and
# rolled back to exactly what was there (`tc -d qdisc show`, `ip -d link`
# byte for byte); an MTU given to a bond over two netdevsim ports reaches
# both slaves, and its rollback brings them back.
. /lab/lib.bash

command -v tc >/dev/null || skip "no tc in the initramfs"
modprobe veth 2>/dev/null
ip link add lq0 numtxqueues 4 numrxqueues 4 type veth peer name lq1 numtxqueues 4 numrxqueues 4 ||
    skip "cannot create a multi-queue veth pair"
ip link add ls0 numtxqueues 1 type veth peer name ls1 numtxqueues 1
for l in lq0 lq1 ls0 ls1; do ip link set "$l" up; done
bond=""
cleanup() {
    nt_stop
    [ -n "$bond" ] && ip link del "$bond" 2>/dev/null
    echo "65" > /sys/bus/netdevsim/del_device 2>/dev/null || true
    ip link del lq0 2>/dev/null; ip link del ls0 2>/dev/null
}
nt_start || exit 1
trap cleanup EXIT

snap() { ip -d link show "$1"; tc -d qdisc show dev "$1"; }
# layout NAME IF QDISC-ENTRY-JSON TC-PATTERN
layout() {
    local name=$1 dev=$2 entry=$3 pattern=$4 before after id want
    before=$(snap "$dev")
    api POST /v1/transactions "{\"profile\":{\"name\":\"$name\",\"qdisc\":[$entry]}}"
    echo "$name: HTTP $API_CODE $(jq -c '{status, error, steps: [.steps[]? | "\(.kind) \(.before) -> \(.after)"]}' <<< "$API_BODY" 2>/dev/null)"
    expect_eq "$name: status" "$(jq -r .status <<< "$API_BODY")" applied
    id=$(jq -r '.id // empty' <<< "$API_BODY")
    want=$(jq -r '.steps[]? | select(.kind == "qdisc") | .after' <<< "$API_BODY")
    tc qdisc show dev "$dev" | grep -Eq "$pattern" && ok "$name: tc shows /$pattern/" ||
        bad "$name: tc qdisc show dev $dev: $(tc qdisc show dev "$dev")"
    api GET "/v1/nics/$dev"
    expect_eq "$name: reported qdisc" "$(jq -r .qdisc <<< "$API_BODY")" "$want"
    api POST "/v1/transactions/$id/rollback" '{}'
    expect_eq "$name: rollback" "$(jq -r .status <<< "$API_BODY")" applied
    after=$(snap "$dev")
    [ "$before" = "$after" ] && ok "$name: restored byte for byte" ||
        bad "$name: not restored: $(diff <(echo "$before") <(echo "$after"))"
}

layout fq-maxrate ls0 '{"interface":"ls0","qdisc":"fq","maxrate":"23gbit","flow_limit":50}' \
    '^qdisc fq [0-9a-f]+: root .*flow_limit 50p .*maxrate 23Gbit'
layout fq_codel ls0 '{"interface":"ls0","qdisc":"fq_codel"}' '^qdisc fq_codel [0-9a-f]+: root'
layout mq-fq lq0 '{"interface":"lq0","qdisc":"mq","child":"fq","maxrate":"10gbit"}' \
    'qdisc fq [0-9a-f]+: parent [0-9a-f]+:4 .*maxrate 10Gbit'

# A bond's MTU reaches its slaves.
if [ -e /sys/bus/netdevsim/new_device ] || modprobe netdevsim; then
    echo "65 2 1" > /sys/bus/netdevsim/new_device
    ports=""
    for _ in $(seq 50); do
        ports=$(ls /sys/bus/netdevsim/devices/netdevsim65/net/ 2>/dev/null | sort | tr '\n' ' ')
        [ "$(wc -w <<< "$ports")" -ge 2 ] && break
        sleep 0.1
    done
    modprobe bonding max_bonds=0 2>/dev/null
    if ip link add lbond0 type bond mode balance-xor 2>/dev/null; then
        bond=lbond0
        for p in $ports; do ip link set "$p" down; ip link set "$p" master "$bond"; done
        ip link set "$bond" up
        api POST /v1/transactions '{"profile":{"name":"bond-mtu","mtu":[{"interface":"lbond0","mtu":4000}]}}'
        echo "bond-mtu: HTTP $API_CODE $(jq -c '{status, error, warnings, steps: [.steps[]? | "\(.kind) \(.target) \(.before) -> \(.after)"]}' <<< "$API_BODY" 2>/dev/null)"
        expect_eq "bond MTU status" "$(jq -r .status <<< "$API_BODY")" applied
        id=$(jq -r '.id // empty' <<< "$API_BODY")
        for p in $ports; do expect_eq "slave $p MTU" "$(cat /sys/class/net/$p/mtu)" 4000; done
        api POST "/v1/transactions/$id/rollback" '{}'
        expect_eq "bond MTU rollback" "$(jq -r .status <<< "$API_BODY")" applied
        for p in $ports; do expect_eq "slave $p MTU after rollback" "$(cat /sys/class/net/$p/mtu)" 1500; done
        # A slave named outright with another MTU is refused.
        p1=$(awk '{print $1}' <<< "$ports")
        api POST /v1/plan "{\"name\":\"slave\",\"mtu\":[{\"interface\":\"$p1\",\"mtu\":4000}]}"
        expect_eq "slave MTU refused" "$API_CODE" 422
    else
        echo "no bonding: the bond part is left out"
    fi
fi
finish "link: fq, fq_codel, mq fq layouts and a bond's MTU"
