#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Offload features on this machine's kernel, in a network namespace of its
# own over a veth pair, through the agent's HTTP API, checked with ethtool:
#  - GRO, TSO and GSO toggled by a profile, then rolled back to exactly what
#    `ethtool -k` showed before (every line);
#  - scatter-gather off, a change that takes TSO and GSO with it (the
#    kernel holds them off, wanted on): the step records them, and the
#    rollback gives every one back;
#  - a fixed feature (rx-lro, rx-gro-hw on veth) refused at the plan, 422
#    at the profile's path, with the list of those that can change;
#  - GET /v1/nics/IF shows the features (on, fixed) and pause (veth has none);
#  - the desired state repairs a feature changed behind the agent's back by
#    the kernel's ethtool notification, with a check interval of 600 s.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
live_require ip jq curl ethtool

k() { ip netns exec "$ns" ethtool -k va; }
# feat NAME: "on" or "off" as ethtool -k shows the kernel's feature NAME of
# va (ethtool prints a few under names of its own).
feat() {
	local n=$1
	case $n in
	rx-gro) n=generic-receive-offload ;;
	tx-generic-segmentation) n=generic-segmentation-offload ;;
	rx-lro) n=large-receive-offload ;;
	esac
	k | sed -n "s/^[[:space:]]*$n: \(on\|off\).*/\1/p"
}
flip() { [ "$1" = on ] && echo false || echo true; }

live_netns nt-feat
ip -n "$ns" link add va type veth peer name vb || { echo "SKIP: no veth"; exit 77; }
ip -n "$ns" link set va up
ip -n "$ns" link set vb up
start_agent
[ -n "$url" ] && ok || { bad "agent did not start: $(cat "$work/out" "$work/err")"; exit 1; }

# 1. GRO, TSO, GSO each the other way, then back.
before=$(k)
gro=$(feat rx-gro); tso=$(feat tx-tcp-segmentation); gso=$(feat tx-generic-segmentation)
[ -n "$gro" ] && [ -n "$tso" ] && [ -n "$gso" ] && ok || bad "ethtool -k va lacks rx-gro/tx-tcp-segmentation/tx-generic-segmentation: $before"
post /v1/transactions '{"profile":{"name":"offloads","features":[{"interface":"va","features":{"gro":'$(flip "$gro")',"tx-tcp-segmentation":'$(flip "$tso")',"tx-generic-segmentation":'$(flip "$gso")'}}]}}'
[ "$code" = 201 ] && [ "$(jq -r .status <<<"$body")" = applied ] && ok || bad "apply: $code $body"
id=$(jq -r .id <<<"$body")
[ "$(jq '[.steps[] | select(.kind == "feature")] | length' <<<"$body")" = 3 ] && ok || bad "3 feature steps: $body"
[ "$(feat rx-gro)" != "$gro" ] && ok || bad "rx-gro still $gro"
[ "$(feat tx-tcp-segmentation)" != "$tso" ] && ok || bad "tx-tcp-segmentation still $tso"
[ "$(feat tx-generic-segmentation)" != "$gso" ] && ok || bad "tx-generic-segmentation still $gso"
post /v1/transactions/$id/rollback '{}'
[ "$code" = 201 ] && [ "$(jq -r .status <<<"$body")" = applied ] && ok || bad "rollback: $code $body"
[ "$(k)" = "$before" ] && ok || bad "ethtool -k after the rollback differs: $(diff <(echo "$before") <(k))"

# 2. Scatter-gather off takes TSO and GSO with it.
if [ "$(feat tx-scatter-gather)" = on ] && [ "$(feat tx-tcp-segmentation)" = on ]; then
	post /v1/transactions '{"profile":{"name":"nosg","features":[{"interface":"va","features":{"sg":false}}]}}'
	[ "$code" = 201 ] && [ "$(jq -r .status <<<"$body")" = applied ] && ok || bad "sg off: $code $body"
	id=$(jq -r .id <<<"$body")
	[ "$(feat tx-scatter-gather)" = off ] && ok || bad "tx-scatter-gather not off"
	[ "$(feat tx-tcp-segmentation)" = off ] && ok || bad "TSO did not follow scatter-gather: $(k)"
	k | grep -q 'tx-tcp-segmentation: off \[requested on\]' && ok || bad "TSO's wanted state changed: $(k)"
	obs=$(jq -r '.steps[] | select(.target == "va/tx-scatter-gather") | .observed' <<<"$body")
	grep -q 'tx-tcp-segmentation off (wanted on)' <<<"$obs" && grep -q 'tx-generic-segmentation off (wanted on)' <<<"$obs" &&
		ok || bad "the step does not record what moved: $obs"
	echo "observed: $obs"
	post /v1/transactions/$id/rollback '{}'
	[ "$code" = 201 ] && [ "$(jq -r .status <<<"$body")" = applied ] && ok || bad "rollback sg: $code $body"
	[ "$(k)" = "$before" ] && ok || bad "ethtool -k after the sg rollback differs: $(diff <(echo "$before") <(k))"
else
	bad "veth here has no scatter-gather and TSO on to start from: $(k)"
fi

# 3. A fixed feature: 422 at its path, listing what can change.
fixed=$(k | sed -n 's/^[[:space:]]*\(large-receive-offload\|rx-gro-hw\): \(on\|off\) \[fixed\]/\1 \2/p' | sed 's/^large-receive-offload/rx-lro/' | head -1)
if [ -n "$fixed" ]; then
	name=${fixed% *}; state=${fixed#* }
	post /v1/plan '{"name":"fixed","features":[{"interface":"va","features":{"'$name'":'$(flip "$state")'}}]}'
	[ "$code" = 422 ] && ok || bad "fixed $name: $code $body"
	jq -e --arg p "\$.features[0].features['$name']" '.errors[] | select(.path == $p and (.message | test("fixed .*it can change: .*rx-gro")))' <<<"$body" >/dev/null &&
		ok || bad "no error at \$.features[0].features['$name']: $body"
	[ "$(k)" = "$before" ] && ok || bad "a refused plan changed something"
else
	bad "no fixed rx-lro or rx-gro-hw on veth here: $(k)"
fi

# 4. The NIC's document.
nic=$(nscurl "$url/v1/nics/va")
[ "$(jq -r '.features["rx-gro"].on' <<<"$nic")" = "$([ "$gro" = on ] && echo true || echo false)" ] && ok || bad "features in /v1/nics/va: $(jq -c .features <<<"$nic")"
[ -n "$fixed" ] && [ "$(jq -r --arg n "${fixed% *}" '.features[$n].fixed' <<<"$nic")" = true ] && ok || bad "fixed not reported"
jq -e 'has("pause") and .pause == null' <<<"$nic" >/dev/null && ok || bad "pause of veth: $(jq -c .pause <<<"$nic")"
[ "$(nscurl "$url/v1/topology" | jq '[.nics[] | select(has("features"))] | length')" = 0 ] && ok || bad "features in /v1/topology"

# 5. Held by the desired state: repaired by the ethtool notification.
stop_agent
start_agent --drift-policy repair --drift-interval 600
[ -n "$url" ] && ok || bad "agent did not restart"
post /v1/transactions '{"persist":true,"profile":{"name":"held","features":[{"interface":"va","features":{"gro":'$(flip "$gro")'}}]}}'
[ "$code" = 201 ] && ok || bad "held apply: $code $body"
want=$(feat rx-gro)
sleep 1
ip netns exec "$ns" ethtool -K va gro "$gro"
is_want() { [ "$(feat rx-gro)" = "$want" ]; }
t0=$(date +%s%N)
wait_for 5 is_want && ok || bad "rx-gro changed behind the agent was not repaired: $(feat rx-gro)"
echo "repaired $(( ($(date +%s%N) - t0) / 1000000 )) ms after ethtool -K"
reason=$(nscurl "$url/v1/transactions?limit=1" | jq -r '.transactions[0].reason')
echo "repair reason: $reason"
[ "$reason" != null ] && [ "$reason" != "" ] && ok || bad "no repair transaction"
stop_agent

live_finish
