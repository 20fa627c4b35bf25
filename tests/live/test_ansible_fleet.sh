#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Ansible collection (ansible_collections/nettune/agent) driving a fleet of
# three agents, each in its own network namespace serving a different host
# tree (copies of the x460, Ceph and EPYC fixtures), reached by
# ansible-playbook from a controller namespace over veth pairs:
#  - facts: each agent's own host (its NICs, findings, root);
#  - check mode with --diff: changed and each step's before/after, nothing
#    touched (trees byte-identical, the fixture's ethtool/*.json by value; no
#    transaction recorded);
#  - apply, then the same again: changed=false everywhere (idempotent);
#  - an invalid profile: the task fails with the agent's 422 and the JSON
#    path of the bad value, nothing applied; a wrong token: 401;
#  - state=absent rolls back (and again: changed=false), trees byte-identical;
#  - playbooks/rollout.yml in canary batches [1, 2] with a confirm window and
#    a post-check (findings that must be gone and a command): the host whose
#    post-check fails (the EPYC, its bond still hashing layer2+3) is never
#    confirmed and the role's rescue reverts it at once (tree byte-identical again),
#    the other two stay tuned and confirmed; with the EPYC host as the canary
#    the rollout stops after it and the other two are never touched.
# Namespaces, veths and agents are removed on every exit.
set -u
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "needs root (ip netns add)"
for t in ip jq curl python3 ansible-playbook sha256sum; do
	command -v $t >/dev/null || skip "$t is not installed (ansible-playbook: Debian package ansible-core)"
done
[ -n "${NT_BIN:-}" ] && [ -x "$NT_BIN" ] || skip "NT_BIN is not set to the nettune binary"
src=${NT_SRC:?NT_SRC is the source tree}
fixtures=${NT_FIXTURES:?}
result="python3 $src/tests/ansible/result.py"

work=$(mktemp -d)
ctl=ntac-$$
hosts=(x460 ceph epyc)
declare -A tree=([x460]=x460-4node-8nic [ceph]=ceph-2node-ib [epyc]=epyc7713-2node-bond)
declare -A nicre=([x460]='^eth[0-7]$' [ceph]='^eno1$' [epyc]='^enos[0-3]$')
declare -A ns addr pid url
agent_pids=()
cleanup() {
	for p in "${agent_pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${agent_pids[@]}"; do wait "$p" 2>/dev/null; done
	for h in "${hosts[@]}"; do [ -n "${ns[$h]:-}" ] && ip netns del "${ns[$h]}" 2>/dev/null; done
	ip netns del "$ctl" 2>/dev/null
	if [ -n "${NT_KEEP:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

secret=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
ip netns add "$ctl" || skip "cannot create a network namespace"
ip -n "$ctl" link set lo up
i=0
for h in "${hosts[@]}"; do
	i=$((i + 1))
	ns[$h]=nta$i-$$
	addr[$h]=10.213.$i.2
	ip netns add "${ns[$h]}" || { bad "netns ${ns[$h]}"; exit 1; }
	ip -n "${ns[$h]}" link set lo up
	ip -n "$ctl" link add ntc$i type veth peer name up0 netns "${ns[$h]}" || { bad "veth for $h"; exit 1; }
	ip -n "$ctl" addr add 10.213.$i.1/30 dev ntc$i
	ip -n "$ctl" link set ntc$i up
	ip -n "${ns[$h]}" addr add "${addr[$h]}/30" dev up0
	ip -n "${ns[$h]}" link set up0 up
	cp -a "$fixtures/${tree[$h]}" "$work/root-$h"
	# A non-loopback address needs tokens: one for the controller, mode 600.
	(umask 077; printf 'controller apply %s\n' "$secret" > "$work/tokens-$h")
	ip netns exec "${ns[$h]}" "$NT_BIN" serve --listen "${addr[$h]}:8470" --root "$work/root-$h" \
		--state-dir "$work/state-$h" --tokens "$work/tokens-$h" > "$work/agent-$h.out" 2> "$work/agent-$h.err" &
	agent_pids+=($!)
	url[$h]="http://${addr[$h]}:8470"
done
for h in "${hosts[@]}"; do
	for _ in $(seq 100); do grep -q listening "$work/agent-$h.out" && break; sleep 0.1; done
	grep -q listening "$work/agent-$h.out" || { bad "agent $h did not start: $(cat "$work/agent-$h.err")"; exit 1; }
done
# The controller reaches the agents; the addresses exist only in the namespaces.
for h in "${hosts[@]}"; do
	check "$h reachable from the controller" ip netns exec "$ctl" curl -sf -o /dev/null "${url[$h]}/v1/health"
done
check "no 10.213. address in the host's own namespace" bash -c "! ip -o addr | grep -q ' 10\.213\.'"

{
	echo "[nettune]"
	for h in "${hosts[@]}"; do
		echo "$h nettune_url=${url[$h]} nettune_test_nic='${nicre[$h]}' nettune_test_root=root-$h"
	done
	echo "[nettune:vars]"
	echo "ansible_connection=local"
	echo "ansible_python_interpreter=/usr/bin/python3"
} > "$work/inventory"
mkdir -p "$work/home" "$work/tmp"
# play [ENV=VAL...] -- ARGS: ansible-playbook in the controller namespace, its
# json report in $work/out.json, its exit code in $prc.
play() {
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	rm -f "$work/out.json"
	ip netns exec "$ctl" env HOME="$work/home" ANSIBLE_LOCAL_TEMP="$work/tmp" ANSIBLE_COLLECTIONS_PATH="$src" \
		ANSIBLE_CALLBACK_PLUGINS="$src/tests/ansible/callback_plugins" ANSIBLE_CALLBACKS_ENABLED=nt_json \
		NT_ANSIBLE_JSON="$work/out.json" ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 "${envs[@]}" \
		ansible-playbook -i "$work/inventory" "$@" > "$work/play.out" 2>&1
	prc=$?
	[ -s "$work/out.json" ] || { echo "ansible-playbook reported nothing:"; tail -5 "$work/play.out"; }
}
r() { $result "$work/out.json" task "$@"; }
recap() { $result "$work/out.json" stats "$@"; }
# Every file of a host tree byte for byte, except ROOT/ethtool/IFACE.json: the
# fixture backend stands in for the NIC's ring registers there and rewrites the
# whole JSON document, so those are compared by value.
snap() {
	(cd "$work/root-$1" && find . -type f ! -path './ethtool/*' -print0 | sort -z | xargs -0 sha256sum
	 for f in ethtool/*.json; do [ -e "$f" ] && echo "$f $(jq -cS . "$f")"; done)
}
ntxn() { ip netns exec "$ctl" curl -s -H "Authorization: Bearer $secret" "${url[$1]}/v1/transactions?limit=1" | jq .total; }
for h in "${hosts[@]}"; do snap $h > "$work/snap0-$h"; done

profile='{"name":"fleet-buffers","rings":[{"interface":"e*","rx":"max"}],
 "sysctl":{"net.core.rmem_max":"268435456","net.core.wmem_max":"268435456",
 "net.ipv4.tcp_rmem":"4096 131072 268435456","net.ipv4.tcp_wmem":"4096 65536 268435456"}}'
echo "{\"nettune_test_profile\": $profile}" > "$work/vars.json"

# Check mode with --diff: the plan, nothing touched.
play NETTUNE_TOKEN="$secret" -- "$src/tests/ansible/apply.yml" -e @"$work/vars.json" --check --diff
check "check mode ran: $(tail -3 "$work/play.out")" [ "$prc" = 0 ]
for h in "${hosts[@]}"; do
	check "$h facts asserted" [ "$(r 'The facts are the agent'"'"'s host' $h "r.get('failed', False)")" = false ]
	check "$h check mode changed" [ "$(r Apply $h "r['changed']")" = true ]
	check "$h check mode: no transaction" [ "$(r Apply $h "r['transaction']")" = null ]
	check "$h diff shows rmem_max before and after" \
		[ "$(r Apply $h "'sysctl net.core.rmem_max = 212992' in r['diff']['before'] and 'sysctl net.core.rmem_max = 268435456' in r['diff']['after']")" = true ]
	snap $h > "$work/snap-check-$h"
	check "$h tree untouched by check mode" cmp -s "$work/snap-check-$h" "$work/snap0-$h"
	check "$h no transaction recorded by check mode" [ "$(ntxn $h)" = 0 ]
done
check "the ring step of eno1 in ceph's diff" [ "$(r Apply ceph "'rings eno1 = rx=256,tx=256' in r['diff']['before']")" = true ]

# Apply, then again: the second run changes nothing.
play NETTUNE_TOKEN="$secret" -- "$src/tests/ansible/apply.yml" -e @"$work/vars.json"
check "apply ran: $(tail -3 "$work/play.out")" [ "$prc" = 0 ]
declare -A txn
for h in "${hosts[@]}"; do
	check "$h applied" [ "$(r Apply $h "r['status']")" = '"applied"' ]
	txn[$h]=$(r Apply $h "r['transaction_id']")
	check "$h rmem_max written" [ "$(cat "$work/root-$h/proc/sys/net/core/rmem_max")" = 268435456 ]
done
play NETTUNE_TOKEN="$secret" -- "$src/tests/ansible/apply.yml" -e @"$work/vars.json"
check "second apply ran" [ "$prc" = 0 ]
for h in "${hosts[@]}"; do
	check "$h second run changed=false" [ "$(r Apply $h "r['changed']")" = false ]
	check "$h second run: recap changed=0" [ "$(recap $h changed)" = 0 ]
	check "$h second run: no new transaction" [ "$(ntxn $h)" = 1 ]
done

# An invalid profile: the agent's 422 with the JSON path, nothing applied.
echo '{"nettune_test_profile": {"name":"bad","rings":[{"interface":"e*","rx":-3}]}}' > "$work/bad.json"
play NETTUNE_TOKEN="$secret" -- "$src/tests/ansible/apply.yml" -e @"$work/bad.json"
check "invalid profile fails the play" [ "$prc" = 2 ]
for h in "${hosts[@]}"; do
	msg=$(r Apply $h "r.get('msg', '')")
	check "$h 422 message names \$.rings[0].rx: $msg" grep -q 'HTTP 422: Invalid profile: .*\$\.rings\[0\]\.rx: rx -3' <<<"$msg"
	check "$h problem document returned" [ "$(r Apply $h "r['problem']['errors'][0]['path']")" = '"$.rings[0].rx"' ]
	check "$h nothing applied by the invalid profile" [ "$(ntxn $h)" = 1 ]
done
# A wrong token: 401, said so.
play NETTUNE_TOKEN=not-the-right-token-at-all -- "$src/tests/ansible/apply.yml" -e @"$work/vars.json"
check "wrong token fails" [ "$prc" = 2 ]
check "wrong token: 401 in the message" grep -q 'HTTP 401' <<<"$(r Facts x460 "r.get('msg', '')")"

# Roll back (state=absent), then again: nothing more to do.
txnjson=$(jq -n --argjson a "${txn[x460]}" --argjson b "${txn[ceph]}" --argjson c "${txn[epyc]}" \
	'{nettune_test_txn: {x460: $a, ceph: $b, epyc: $c}}')
echo "$txnjson" > "$work/txn.json"
play NETTUNE_TOKEN="$secret" -- "$src/tests/ansible/rollback.yml" -e @"$work/txn.json"
check "rollback ran: $(tail -3 "$work/play.out")" [ "$prc" = 0 ]
for h in "${hosts[@]}"; do
	check "$h rolled back" [ "$(r 'Roll back' $h "[r['changed'], r['status']]")" = '[true, "applied"]' ]
	snap $h > "$work/snap-rb-$h"
	check "$h tree byte-identical after the rollback" cmp -s "$work/snap-rb-$h" "$work/snap0-$h"
done
play NETTUNE_TOKEN="$secret" -- "$src/tests/ansible/rollback.yml" -e @"$work/txn.json"
for h in "${hosts[@]}"; do
	check "$h second rollback changed=false" [ "$(r 'Roll back' $h "r['changed']")" = false ]
done

# The canary rollout: batches [1, 2]; the EPYC host's post-check fails.
jq -n --argjson p "$profile" --arg tok "$secret" '{
	nettune_rollout_profile: $p, nettune_token: $tok, nettune_rollout_serial: [1, 2],
	nettune_rollout_confirm_timeout: 20,
	nettune_rollout_absent_findings: ["tcp-buffers-small", "ring-below-max", "bond-hash-layer2"],
	nettune_rollout_postcheck_command: ["sh", "-c", "curl -sf -o /dev/null \"$NETTUNE_URL/v1/health\""]}' \
	> "$work/rollout.json"
for h in "${hosts[@]}"; do snap $h > "$work/snap1-$h"; done
start=$(date +%s)
play -- "$src/ansible_collections/nettune/agent/playbooks/rollout.yml" -e @"$work/rollout.json"
check "rollout reports the failed host (exit 2, got $prc)" [ "$prc" = 2 ]
check "batches: x460 the canary alone, then ceph and epyc" \
	[ "$($result "$work/out.json" batches | tr '\n' ' ')" = "x460 ceph,epyc " ]
for h in x460 ceph; do
	check "$h confirmed" [ "$(r 'Confirm the transaction' $h "r['status']")" = '"applied"' ]
	check "$h recap failures=0" [ "$(recap $h failures)" = 0 ]
done
check "epyc failed" [ "$(recap epyc failures)" = 1 ]
msg=$(r 'Fail the host' epyc "r.get('msg', '')")
check "epyc's failure says which finding remains: $msg" grep -q 'still found after the change: bond-hash-layer2' <<<"$msg"
etx=$(r 'Apply the profile with a confirm window' epyc "r['transaction_id']")
check "epyc's failure says it was reverted: $msg" grep -q "transaction $etx was reverted (reverted)" <<<"$msg"
st() { ip netns exec "$ctl" curl -s -H "Authorization: Bearer $secret" "${url[$1]}/v1/transactions/$2" | jq -r .status; }
# The rescue reverts at once (it used to stay tuned for its 20 s window).
check "epyc reverted by the rescue, right after the play ($(($(date +%s) - start)) s)" [ "$(st epyc "$etx")" = reverted ]
snap epyc > "$work/snap-rev-epyc"
check "epyc tree byte-identical after the revert" cmp -s "$work/snap-rev-epyc" "$work/snap1-epyc"
for h in x460 ceph; do
	tx=$(r 'Apply the profile with a confirm window' $h "r['transaction_id']")
	check "$h still applied after epyc's window" [ "$(st $h "$tx")" = applied ]
	check "$h still tuned" [ "$(cat "$work/root-$h/proc/sys/net/core/rmem_max")" = 268435456 ]
done

# A failing canary stops the rollout: with the EPYC host first, its batch of
# one fails and the other two are never touched.
{ echo "[nettune]"; grep '^epyc ' "$work/inventory"; grep -E '^(x460|ceph) ' "$work/inventory"
  sed -n '/^\[nettune:vars\]/,$p' "$work/inventory"; } > "$work/inventory-epyc-first"
n_x460=$(ntxn x460); n_ceph=$(ntxn ceph)
ip netns exec "$ctl" env HOME="$work/home" ANSIBLE_LOCAL_TEMP="$work/tmp" ANSIBLE_COLLECTIONS_PATH="$src" \
	ANSIBLE_CALLBACK_PLUGINS="$src/tests/ansible/callback_plugins" ANSIBLE_CALLBACKS_ENABLED=nt_json \
	NT_ANSIBLE_JSON="$work/out.json" ANSIBLE_NOCOLOR=1 \
	ansible-playbook -i "$work/inventory-epyc-first" "$src/ansible_collections/nettune/agent/playbooks/rollout.yml" \
	-e @"$work/rollout.json" > "$work/play.out" 2>&1
prc=$?
check "failing canary: the play fails ($prc)" [ "$prc" = 2 ]
check "failing canary: only epyc was run" [ "$($result "$work/out.json" batches | tr '\n' ' ')" = "epyc " ]
check "failing canary: x460 untouched" [ "$(ntxn x460)" = "$n_x460" ]
check "failing canary: ceph untouched" [ "$(ntxn ceph)" = "$n_ceph" ]

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
