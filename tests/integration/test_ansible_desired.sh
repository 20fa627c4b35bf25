#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# nettune_desired and the desired-state fact of nettune_facts against an
# agent on a copy of the EPYC fixture: set (check mode first: nothing sent),
# set again (changed=false), query, the fact, clear, clear again
# (changed=false); set with wait: the drift check in sync and the fixture's
# sysctl the profile's; an agent with --drift-policy report makes a set with
# wait fail at once saying it only reports drift. An agent that does not serve /v1/desired (its API contract
# has no such path) makes the module fail with a message saying so; that is
# checked, and the rest is reported skipped, never passed.
set -u
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
skip() { echo "SKIP: $*"; exit 77; }
for t in ansible-playbook jq curl python3; do
	command -v $t >/dev/null || skip "$t is not installed (Debian package ansible-core)"
done
src=${NT_SRC:?}
work=$(mktemp -d)
pid= pid2=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	[ -n "$pid2" ] && kill "$pid2" 2>/dev/null && wait "$pid2" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/home" "$work/tmp"
export HOME="$work/home" ANSIBLE_LOCAL_TEMP="$work/tmp" ANSIBLE_COLLECTIONS_PATH="$src" ANSIBLE_NOCOLOR=1
export ANSIBLE_CALLBACK_PLUGINS="$src/tests/ansible/callback_plugins" ANSIBLE_CALLBACKS_ENABLED=nt_json
export NT_ANSIBLE_JSON="$work/out.json"
result="python3 $src/tests/ansible/result.py"
r() { $result "$work/out.json" task "$@"; }

cp -a "$NT_FIXTURES/epyc7713-2node-bond" "$work/root"
"$NT_BIN" serve --listen 127.0.0.1:0 --root "$work/root" --state-dir "$work/state" > "$work/agent.out" 2> "$work/agent.err" &
pid=$!
for _ in $(seq 100); do grep -q listening "$work/agent.out" && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$work/agent.out")
[ -n "$url" ] || { echo "FAIL: the agent did not start: $(cat "$work/agent.err")"; exit 1; }
printf '[nettune]\nagent1 nettune_url=%s ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n' "$url" > "$work/inventory"
echo '{"nettune_test_profile": {"name": "fleet-buffers", "sysctl": {"net.core.rmem_max": "268435456"}}}' > "$work/vars.json"
play() { ansible-playbook -i "$work/inventory" "$src/tests/ansible/desired.yml" -e @"$work/vars.json" "$@" > "$work/play.out" 2>&1; }

if ! curl -s "$url/v1/openapi.yaml" | grep -q '^  /v1/desired:'; then
	play
	msg=$(r Set agent1 "r.get('msg', '')")
	check "the module says the agent lacks /v1/desired: $msg" grep -q 'does not serve /v1/desired' <<<"$msg"
	[ "$fail" = 0 ] || exit 1
	skip "this agent does not serve /v1/desired yet (not in its openapi.yaml); the desired-state module is unproven against it"
fi

play --check
check "check mode ran: $(tail -5 "$work/play.out")" [ $? = 0 ]
check "check mode: set would change" [ "$(r Set agent1 "r['changed']")" = true ]
code=$(curl -s -o "$work/d" -w '%{http_code}' "$url/v1/desired")
check "check mode: nothing set ($code $(cat "$work/d"))" bash -c "[ $code = 404 ] || [ $code = 204 ] || jq -e '.profile == null and .profile_name == null' '$work/d' >/dev/null"

play -e nettune_test_wait=10
check "run: $(tail -5 "$work/play.out")" [ $? = 0 ]
check "set changed" [ "$(r Set agent1 "r['changed']")" = true ]
check "set with wait: the drift check in sync" [ "$(r Set agent1 "r['drift']['status']")" = '"in_sync"' ]
check "set with wait: the fixture has the profile's value" [ "$(cat "$work/root/proc/sys/net/core/rmem_max")" = 268435456 ]
check "set again changed=false" [ "$(r 'Set again' agent1 "r['changed']")" = false ]
check "query shows the profile" [ "$(r Query agent1 "r['desired']['profile']['name']")" = '"fleet-buffers"' ]
check "the fact shows the profile" [ "$(r Facts agent1 "r['ansible_facts']['nettune_desired']['profile']['name']")" = '"fleet-buffers"' ]
check "clear changed" [ "$(r Clear agent1 "r['changed']")" = true ]
check "clear again changed=false" [ "$(r 'Clear again' agent1 "r['changed']")" = false ]

# An agent that only reports drift: a set with wait fails at once, saying so.
cp -a "$NT_FIXTURES/epyc7713-2node-bond" "$work/root2"
"$NT_BIN" serve --listen 127.0.0.1:0 --root "$work/root2" --state-dir "$work/state2" --drift-policy report \
	> "$work/agent2.out" 2> "$work/agent2.err" &
pid2=$!
for _ in $(seq 100); do grep -q listening "$work/agent2.out" && break; sleep 0.1; done
url2=$(sed -n 's/^listening on //p' "$work/agent2.out")
printf '[nettune]\nagent2 nettune_url=%s ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n' "$url2" > "$work/inventory2"
ansible-playbook -i "$work/inventory2" "$src/tests/ansible/desired.yml" -e @"$work/vars.json" -e nettune_test_wait=20 > "$work/play.out" 2>&1
check "report policy: set with wait fails" [ $? = 2 ]
msg=$(r Set agent2 "r.get('msg', '')")
check "report policy: said, with the target: $msg" grep -q 'only reports drift (--drift-policy report), so it does not apply the desired state: status drifted, .*sysctl net.core.rmem_max (drifted: desired 268435456, now 212992)' <<<"$msg"
check "report policy: the fixture untouched" [ "$(cat "$work/root2/proc/sys/net/core/rmem_max")" = 212992 ]

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
