#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The collection's playbook nettune.agent.canary_tune ("tune on a canary,
# roll the winner out to the group") against three agents, each on a copy of
# a fixture host: agent1 (EPYC, the canary), agent2 (the virtio VM, which has
# no net.ipv4.tcp_notsent_lowat) and agent3 (x460). The benchmark is a
# deterministic stand-in run on the canary: fig.sh prints the third field of
# the canary root's net.ipv4.tcp_rmem / 1000, so a candidate with a larger
# maximum wins, without noise (4 rounds an arm show one comparison at 95%,
# 5 two at Holm's 97.5%):
#  - a winner the VM refuses: the canary holds it (tune --keep), agent2's
#    agent refuses it (422, named) and the rollout stops there: agent3's
#    desired state and fixture untouched;
#  - a winner every host takes: the desired state of all three is the
#    winner's profile, as the report has it, each fixture's tcp_rmem is the
#    winner's, the loser (smaller buffers) is not rolled out anywhere;
#  - no winner (a space of a sysctl the figure does not follow): the play
#    fails saying no candidate was shown better and nothing is rolled out;
#    every host's desired state and fixture as before;
#  - tune failing otherwise (a candidate the agent refuses, exit 4): the play
#    fails with tune's reason, nothing rolled out;
#  - the playbook passes ansible-lint's production profile with the
#    collection (test_ansible_collection.sh lints it).
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
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/home" "$work/tmp"
export HOME="$work/home" ANSIBLE_LOCAL_TEMP="$work/tmp" ANSIBLE_REMOTE_TEMP="$work/tmp" ANSIBLE_COLLECTIONS_PATH="$src" ANSIBLE_NOCOLOR=1
export ANSIBLE_CALLBACK_PLUGINS="$src/tests/ansible/callback_plugins" ANSIBLE_CALLBACKS_ENABLED=nt_json
export NT_ANSIBLE_JSON="$work/out.json" ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_INVENTORY_UNPARSED_WARNING=0
result="python3 $src/tests/ansible/result.py"
r() { $result "$work/out.json" task "$@"; }

fixtures=(epyc7713-2node-bond vm-virtio-2cpu x460-4node-8nic)
: > "$work/inventory.in"
for i in 1 2 3; do
	cp -a "$NT_FIXTURES/${fixtures[i-1]}" "$work/root$i"
	"$NT_BIN" serve --listen 127.0.0.1:0 --root "$work/root$i" --state-dir "$work/state$i" \
		> "$work/agent$i.out" 2> "$work/agent$i.err" &
	pids+=($!)
done
for i in 1 2 3; do
	for _ in $(seq 100); do grep -q listening "$work/agent$i.out" && break; sleep 0.1; done
	url=$(sed -n 's/^listening on //p' "$work/agent$i.out")
	[ -n "$url" ] || { echo "FAIL: agent $i did not start: $(cat "$work/agent$i.err")"; exit 1; }
	eval "url$i=$url"
	echo "agent$i nettune_url=$url ansible_connection=local ansible_python_interpreter=/usr/bin/python3" >> "$work/inventory.in"
done
{ echo '[nettune]'; cat "$work/inventory.in"; } > "$work/inventory"
u() { local v="url$1"; echo "${!v}"; }
rmem() { tr -s ' \t' ' ' < "$work/root$1/proc/sys/net/ipv4/tcp_rmem"; }
desired() { curl -s "$(u "$1")/v1/desired"; }

cat > "$work/fig.sh" <<'SH'
#!/usr/bin/env bash
read -r _ _ max < "$1/proc/sys/net/ipv4/tcp_rmem"
echo "figure: $(( max / 1000 ))"
SH
chmod +x "$work/fig.sh"
# What every run shares: the stand-in on the canary's root, the CLI of this build.
jq -n --arg cli "$NT_BIN" --arg fig "$work/fig.sh" --arg root "$work/root1" '{
	nettune_tune_cli: $cli, nettune_tune_command: [$fig, $root],
	nettune_tune_metric: ["--metric-regex", "figure: ([0-9]+)", "--higher-is-better"],
	nettune_tune_budget: "2m", nettune_tune_seed: 7, nettune_tune_wait: 10}' > "$work/common.json"
play() { ansible-playbook -i "$work/inventory" nettune.agent.canary_tune -e @"$work/common.json" "$@" > "$work/play.out" 2>&1; }
# The hosts that ran task $1 (ok or failed), in order.
ran() { python3 -c 'import json,sys; print(" ".join(x["host"] for x in json.load(open(sys.argv[1]))["results"] if x["task"] == sys.argv[2] and x["status"] in ("ok", "failed")))' "$work/out.json" "$1"; }

# 1. A winner the VM does not have a sysctl of: the canary keeps it, agent2
# refuses it, the rollout stops before agent3.
jq -n '{nettune_tune_max_rounds: 4, nettune_tune_report_dest: "'"$work"'/r1.json", nettune_tune_candidates: [
	{name: "lowat", sysctl: {"net.ipv4.tcp_rmem": "4096 131072 8388608", "net.ipv4.tcp_notsent_lowat": "131072"}}]}' > "$work/v1.json"
start=$(date +%s.%N)
play -e @"$work/v1.json"
rc=$?
check "bad host: the play fails ($rc): $(tail -5 "$work/play.out")" [ $rc = 2 ]
check "bad host: the canary won with lowat" jq -e '.winner == 1 and .keep.status == "applied"' "$work/r1.json" >/dev/null
check "bad host: the canary holds it" [ "$(desired 1 | jq -r .profile.name)" = lowat ]
check "bad host: the canary's fixture has it" [ "$(rmem 1)" = "4096 131072 8388608" ]
msg=$(r 'Hold the host at the winner through its agent' agent2 "r.get('msg', '')")
check "bad host: agent2's refusal named: $msg" grep -q "HTTP 422: .*tcp_notsent_lowat'\]: net.ipv4.tcp_notsent_lowat does not exist on this host" <<<"$msg"
msg=$(r 'Stop the rollout' agent2 "r.get('msg', '')")
check "bad host: the rollout stop said: $msg" grep -q '^"agent2 did not take the winner (lowat, from the canary agent1): HTTP 422: .*; the rollout stops with this batch' <<<"$msg"
check "bad host: the rollout reached agent1 and agent2 only ($(ran 'Hold the host at the winner through its agent'))" \
	[ "$(ran 'Hold the host at the winner through its agent')" = "agent1 agent2" ]
check "bad host: agent2 holds nothing" [ "$(curl -s -o /dev/null -w '%{http_code}' "$(u 2)/v1/desired")" = 404 ]
check "bad host: agent3 holds nothing" [ "$(curl -s -o /dev/null -w '%{http_code}' "$(u 3)/v1/desired")" = 404 ]
check "bad host: agent3's fixture untouched" cmp -s "$work/root3/proc/sys/net/ipv4/tcp_rmem" "$NT_FIXTURES/x460-4node-8nic/proc/sys/net/ipv4/tcp_rmem"

# 2. A winner every host takes: larger buffers than the canary's, raced
# against smaller ones.
jq -n '{nettune_tune_max_rounds: 5, nettune_tune_report_dest: "'"$work"'/r2.json", nettune_tune_candidates: [
	{name: "smaller", sysctl: {"net.ipv4.tcp_rmem": "4096 65536 1048576"}},
	{name: "bigger", sysctl: {"net.ipv4.tcp_rmem": "4096 262144 16777216", "net.core.rmem_max": "16777216"}}]}' > "$work/v2.json"
play -e @"$work/v2.json"
rc=$?
check "winner: the play ran ($rc): $(tail -5 "$work/play.out")" [ $rc = 0 ]
check "winner: candidate 2 (bigger) won, the other not" \
	jq -e '.winner == 2 and .exit_status == 0 and .candidates[0].decision != "winner"' "$work/r2.json" >/dev/null
winner=$(jq -c '.candidates[1].profile' "$work/r2.json")
for i in 1 2 3; do
	check "winner: agent$i holds the report's winner ($(desired $i | jq -c .profile))" [ "$(desired $i | jq -c .profile)" = "$winner" ]
	check "winner: agent$i's tcp_rmem is the winner's ($(rmem $i))" [ "$(rmem $i)" = "4096 262144 16777216" ]
	check "winner: agent$i's rmem_max is the winner's" [ "$(cat "$work/root$i/proc/sys/net/core/rmem_max")" = 16777216 ]
done
check "winner: the canary already held it (tune --keep): unchanged there" \
	[ "$(r 'Hold the host at the winner through its agent' agent1 "r['changed']")" = false ]
check "winner: the others changed, each in sync" \
	[ "$(r 'Hold the host at the winner through its agent' agent3 "[r['changed'], r['drift']['status']]")" = '[true, "in_sync"]' ]
check "winner: in batches of one" [ "$(grep -c '^PLAY \[Roll the winner' "$work/play.out")" = 3 ]
check "winner: the canary's temporary directory removed" \
	[ "$(r 'Remove the directory on the canary' agent1 "r['changed']")" = true ]

# 3. No candidate shown better: nothing rolled out.
for i in 1 2 3; do desired $i > "$work/desired$i.before"; cp -a "$work/root$i/proc/sys" "$work/sys$i.before"; done
jq -n '{nettune_tune_max_rounds: 4, nettune_tune_report_dest: "'"$work"'/r3.json", nettune_tune_space: {base: {name: "conn"},
	parameters: [{path: "sysctl.net.core.somaxconn", values: ["8192"]}]}}' > "$work/v3.json"
play -e @"$work/v3.json"
rc=$?
check "no winner: the play fails ($rc)" [ $rc = 2 ]
msg=$(r 'Stop when no candidate was shown better' agent1 "r.get('msg', '')")
check "no winner: said: $msg" grep -q 'no candidate was shown better than the baseline (exit 13), so nothing is rolled out' <<<"$msg"
check "no winner: the candidate's decision in the message" grep -q 'Candidate 1 (conn-1): not shown better' <<<"$msg"
check "no winner: the report says so" jq -e '.winner == null and .exit_status == 13' "$work/r3.json" >/dev/null
check "no winner: no rollout task ran ($(ran 'Hold the host at the winner through its agent'))" \
	[ -z "$(ran 'Hold the host at the winner through its agent')" ]
for i in 1 2 3; do
	check "no winner: agent$i's desired state as before" cmp -s <(desired $i) "$work/desired$i.before"
	check "no winner: agent$i's fixture as before" diff -r "$work/sys$i.before" "$work/root$i/proc/sys"
done
# 4. Tune failing otherwise (a candidate the canary's agent refuses, exit 4):
# said with tune's reason, nothing rolled out.
jq -n '{nettune_tune_max_rounds: 4, nettune_tune_candidates: [{name: "typo", sysctl: {"net.ipv4.tcp_bogus": "1"}}]}' > "$work/v4.json"
play -e @"$work/v4.json"
rc=$?
check "refused: the play fails ($rc)" [ $rc = 2 ]
msg=$(r 'Stop when tune failed' agent1 "r.get('msg', '')")
check "refused: said with tune's reason: $msg" \
	grep -q "failed (exit 4: a profile was refused by the agent), so nothing is rolled out: .*candidate 1 ([^)]*candidate-1.json) was refused: .*tcp_bogus" <<<"$msg"
check "refused: no rollout task ran" [ -z "$(ran 'Hold the host at the winner through its agent')" ]
for i in 1 2 3; do
	check "refused: agent$i's desired state as before" cmp -s <(desired $i) "$work/desired$i.before"
done
end=$(date +%s.%N)
echo "four plays in $(python3 -c "print(round($end - $start, 1))") s"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
