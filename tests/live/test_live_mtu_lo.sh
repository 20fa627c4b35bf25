#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# lo's MTU on the running kernel (issue 43, item 2), in a fresh network
# namespace of its own, whose lo nobody else uses: the kernel reports
# "minmtu 0 maxmtu 0" for loopback, which means no limit, so an agent in
# the namespace
#  - plans {"interface": "lo", "mtu": 1500} (it refused it as outside
#    "0..0" before), and a "*" glob with lo in it;
#  - applies it: lo reads 1500 in the namespace;
#  - rolls it back: lo reads 65536 again (the kernel's own, which a
#    profile could not ask for: above Ethernet's 65535);
#  - and health stays "ok".
# The host's own lo is compared before and after to show it was not touched.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
live_require ip jq curl

lo_mtu() { ip netns exec "$ns" cat /sys/class/net/lo/mtu; }

host_lo=$(cat /sys/class/net/lo/mtu)
live_netns nt-mtulo
range=$(ip -n "$ns" -d link show lo | grep -o 'minmtu [0-9]* maxmtu [0-9]*')
echo "lo in $ns: mtu $(lo_mtu), $range"
[ "$(lo_mtu)" = 65536 ] || { echo "SKIP: lo of a fresh namespace is not 65536 here"; exit 77; }

# Machine-wide kinds are not asked for, so the namespace's agent needs no
# allow_machine_wide.
start_agent
[ -n "$url" ] && ok || { bad "agent in $ns did not start: $(cat "$work/err")"; exit 1; }

post /v1/plan '{"profile":{"name":"lo","mtu":[{"interface":"lo","mtu":1500}]}}'
echo "plan lo 1500: $code $(jq -c '[.steps[]? | "\(.target) \(.before) -> \(.after)"], .errors' <<<"$body")"
[ "$code" = 200 ] && ok || bad "lo 1500 not planned: $code $body"
jq -e '.steps | length == 1 and .[0].target == "lo" and .[0].before == "65536" and .[0].after == "1500"' <<<"$body" >/dev/null &&
	ok || bad "the plan is not lo 65536 -> 1500: $body"

# A glob: lo is the namespace's only link, planned like a named one.
post /v1/plan '{"profile":{"name":"all","mtu":[{"interface":"*","mtu":1500}]}}'
[ "$code" = 200 ] && jq -e '.steps | length == 1 and .[0].target == "lo"' <<<"$body" >/dev/null &&
	ok || bad "the * glob was not planned on lo: $code $body"

post /v1/transactions '{"profile":{"name":"lo","mtu":[{"interface":"lo","mtu":1500}]}}'
echo "apply: $code $(jq -c '{status, id}' <<<"$body")"
[ "$code" = 201 ] && [ "$(jq -r .status <<<"$body")" = applied ] && ok || bad "apply: $code $body"
id=$(jq -r .id <<<"$body")
[ "$(lo_mtu)" = 1500 ] && ok || bad "lo reads $(lo_mtu) after the apply, wanted 1500"
[ "$(cat /sys/class/net/lo/mtu)" = "$host_lo" ] && ok || bad "the host's lo changed: $(cat /sys/class/net/lo/mtu)"

post "/v1/transactions/$id/rollback" '{}'
echo "rollback: $code $(jq -c '{status, steps: [.steps[]? | "\(.target) \(.before) -> \(.after) \(.result)"]}' <<<"$body")"
[ "$code" = 201 ] && [ "$(jq -r .status <<<"$body")" = applied ] && ok || bad "rollback: $code $body"
[ "$(lo_mtu)" = 65536 ] && ok || bad "lo reads $(lo_mtu) after the rollback, wanted 65536"
health=$(nscurl "$url/v1/health")
jq -e '.status == "ok" and (has("rollback_failed") | not)' <<<"$health" >/dev/null && ok || bad "health: $health"
[ "$(cat /sys/class/net/lo/mtu)" = "$host_lo" ] && ok || bad "the host's lo changed: $(cat /sys/class/net/lo/mtu)"

live_finish
