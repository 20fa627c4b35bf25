#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Ansible collection (ansible_collections/nettune/agent) on its own:
#  - ansible-lint (production profile) passes, ansible-galaxy builds the
#    collection, and ansible-doc reads every module's documentation;
#  - the agent role, writing only its files into a scratch directory: check
#    mode reports changes and writes nothing; a real run writes the
#    configuration, the tokens file (mode 600) and the profiles; a second
#    run changes nothing; a profile no longer listed is removed; a token
#    with a short secret is refused before anything is written;
#  - the monitoring role: the rules and dashboard the package ships, carried
#    as files by the built collection and installed byte for byte, promtool
#    validating the rules first (a refusing validator leaves the file);
#  - what the role wrote works with the agent: `nettune serve --tokens` takes
#    the tokens file and a token from it authenticates, and the profile
#    file plans on a fixture host; so does nettune_profile's example with
#    RSS contexts (two applications, each its node's queues);
#  - the plan's warnings are the task's warnings, and fail_on_warnings fails
#    the task before anything is applied;
#  - over HTTPS the modules verify the agent's certificate by default (an
#    unknown CA fails the task, a CA file that is not there is named as
#    such), and with the CA and a client certificate read and plan; over
#    HTTP a ca_path is not used (one that is not there fails nothing).
# What this does not prove: the apt and systemd tasks (the nettune Debian
# package is not in this repository's CI), and the configuration keys' names,
# which the agent's configuration-file reader defines.
set -u
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
skip() { echo "SKIP: $*"; exit 77; }
for t in ansible-playbook ansible-doc ansible-galaxy ansible-lint jq curl python3 openssl; do
	command -v $t >/dev/null || skip "$t is not installed (Debian packages ansible-core, ansible-lint)"
done
[ "$(id -u)" -eq 0 ] || skip "the role writes root-owned files: needs root"
src=${NT_SRC:?}
work=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/home" "$work/tmp"
export HOME="$work/home" ANSIBLE_LOCAL_TEMP="$work/tmp" ANSIBLE_COLLECTIONS_PATH="$src" ANSIBLE_NOCOLOR=1
export ANSIBLE_CALLBACK_PLUGINS="$src/tests/ansible/callback_plugins" ANSIBLE_CALLBACKS_ENABLED=nt_json
export NT_ANSIBLE_JSON="$work/out.json" ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_INVENTORY_UNPARSED_WARNING=0
result="python3 $src/tests/ansible/result.py"

# Lint and documentation.
(cd "$src/ansible_collections/nettune/agent" && ansible-lint --nocolor --offline > "$work/lint" 2>&1)
check "ansible-lint: $(tail -20 "$work/lint")" grep -q 'Passed with production profile: 0 failure(s), 0 warning(s)' "$work/lint"
ansible-galaxy collection build "$src/ansible_collections/nettune/agent" --output-path "$work/dist" > "$work/build.out" 2>&1
check "ansible-galaxy builds the collection: $(tail -3 "$work/build.out")" [ -e "$work/dist/nettune-agent-0.1.0.tar.gz" ]
for m in nettune_facts nettune_profile nettune_desired; do
	check "ansible-doc $m" bash -c "ansible-doc nettune.agent.$m 2>&1 | grep -q 'OPTIONS'"
done

secret=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
jq -n --arg d "$work/etc" --arg s "$secret" '{nt_dir: $d,
	nt_tokens: [{name: "fleet", scope: "apply", secret: $s}, {name: "grafana", scope: "read", secret: ($s + "r")}],
	nt_profiles: {"fleet-buffers": {name: "fleet-buffers", sysctl: {"net.core.rmem_max": "268435456"}},
	              "old": {name: "old", sysctl: {"net.core.somaxconn": "8192"}}}}' > "$work/vars.json"
role() { ansible-playbook -i localhost, "$src/tests/ansible/role.yml" "$@" > "$work/play.out" 2>&1; }

role -e @"$work/vars.json" --check
check "check mode ran: $(tail -5 "$work/play.out")" [ $? = 0 ]
check "check mode reports changes" [ "$($result "$work/out.json" stats localhost changed)" -gt 0 ]
check "check mode wrote nothing" [ ! -e "$work/etc" ]

role -e @"$work/vars.json"
check "role ran: $(tail -5 "$work/play.out")" [ $? = 0 ]
check "tokens file mode 600" [ "$(stat -c %a "$work/etc/tokens")" = 600 ]
check "tokens file lines" [ "$(grep -v '^#' "$work/etc/tokens")" = "fleet apply $secret
grafana read ${secret}r" ]
check "configuration names the tokens file" grep -qx "tokens = $work/etc/tokens" "$work/etc/nettune.conf"
check "configuration has the listen address" grep -qx "listen = 127.0.0.1:0" "$work/etc/nettune.conf"
check "profile written as JSON" [ "$(jq -c . "$work/etc/profiles/fleet-buffers.json")" = '{"name":"fleet-buffers","sysctl":{"net.core.rmem_max":"268435456"}}' ]
check "secrets not in the play's output" bash -c "! grep -q '$secret' '$work/play.out'"

role -e @"$work/vars.json"
check "second run changed=0" [ "$($result "$work/out.json" stats localhost changed)" = 0 ]

# A profile dropped from the list is removed (nettune_profiles_exclusive).
jq 'del(.nt_profiles.old)' "$work/vars.json" > "$work/vars2.json"
role -e @"$work/vars2.json"
check "dropped profile removed" [ ! -e "$work/etc/profiles/old.json" ]
check "kept profile still there" [ -e "$work/etc/profiles/fleet-buffers.json" ]

# A short secret is refused before anything is written.
jq --arg d "$work/etc2" '.nt_dir = $d | .nt_tokens[0].secret = "short"' "$work/vars.json" > "$work/vars3.json"
role -e @"$work/vars3.json"
check "short secret refused" [ $? = 2 ]
check "short secret: message names the token" grep -q 'nettune_tokens\[0\] wants' "$work/play.out"
check "short secret: nothing written" [ ! -e "$work/etc2" ]

# The monitoring role: the package's rules and dashboard, byte for byte, in
# the built collection as files (the tree links them) and where the role puts
# them; promtool validates the rules first (a broken promtool refuses them).
for f in prometheus/nettune.rules.yml grafana/nettune-dashboard.json; do
	b=$(basename "$f")
	tar -xzf "$work/dist/nettune-agent-0.1.0.tar.gz" -C "$work" "roles/monitoring/files/$b" 2>/dev/null
	check "the built collection carries $b as a file, as deploy/$f" \
		bash -c "[ -f '$work/roles/monitoring/files/$b' ] && [ ! -L '$work/roles/monitoring/files/$b' ] && cmp -s '$work/roles/monitoring/files/$b' '$src/deploy/$f'"
done
mon() { ansible-playbook -i localhost, "$src/tests/ansible/monitoring.yml" -e nt_dir="$work/mon" "$@" > "$work/play.out" 2>&1; }
if command -v promtool >/dev/null; then
	mon -e nt_promtool=promtool --check
	check "monitoring check mode ran: $(tail -5 "$work/play.out")" [ $? = 0 ]
	check "monitoring check mode wrote nothing" [ ! -e "$work/mon" ]
	mon -e nt_promtool=promtool
	check "monitoring role ran: $(tail -5 "$work/play.out")" [ $? = 0 ]
	check "rules installed as shipped" cmp -s "$work/mon/rules.d/nettune.rules.yml" "$src/deploy/prometheus/nettune.rules.yml"
	check "dashboard installed as shipped" cmp -s "$work/mon/dashboards/nettune-dashboard.json" "$src/deploy/grafana/nettune-dashboard.json"
	mon -e nt_promtool=promtool
	check "monitoring second run changed=0" [ "$($result "$work/out.json" stats localhost changed)" = 0 ]
	# A validator that refuses: the rules file is not replaced.
	printf '#!/bin/sh\necho "rules refused" >&2; exit 1\n' > "$work/false-promtool"; chmod +x "$work/false-promtool"
	echo "# changed" >> "$work/mon/rules.d/nettune.rules.yml"
	cp "$work/mon/rules.d/nettune.rules.yml" "$work/rules.before"
	mon -e nt_promtool="$work/false-promtool"
	check "refused rules fail the task" [ $? = 2 ]
	check "refused rules leave the file as it was" cmp -s "$work/mon/rules.d/nettune.rules.yml" "$work/rules.before"
else
	bad "promtool is not installed (Debian package prometheus)"
fi

# What the role wrote works with the agent: its configuration file (every key
# one the agent knows), the tokens file it names and the profiles directory;
# the command line moves the root, state and port to the test's own.
cp -a "$NT_FIXTURES/epyc7713-2node-bond" "$work/root"
"$NT_BIN" serve --config "$work/etc/nettune.conf" --listen 127.0.0.1:0 --root "$work/root" \
	--state-dir "$work/state" > "$work/agent.out" 2> "$work/agent.err" &
pid=$!
for _ in $(seq 100); do grep -q listening "$work/agent.out" && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$work/agent.out")
check "agent starts with the role's tokens file: $(cat "$work/agent.err")" [ -n "$url" ]
code=$(curl -s -o "$work/plan" -w '%{http_code}' -H "Authorization: Bearer $secret" \
	-H 'Content-Type: application/json' --data-binary @"$work/etc/profiles/fleet-buffers.json" "$url/v1/plan")
check "the role's token and profile plan on the agent ($code)" [ "$code" = 200 ]
check "the plan has the profile's step" [ "$(jq -r '.steps[0].target' "$work/plan")" = net.core.rmem_max ]
# The nettune_profile example with RSS contexts (its EXAMPLES, as ansible-doc
# shows them) plans on the EPYC host: context 1 on node 0's queues, context 2
# and the NIC's own table on node 1's.
python3 - "$src/ansible_collections/nettune/agent/plugins/modules/nettune_profile.py" > "$work/two-apps.json" <<'EOF'
import ast, json, sys, yaml
tree = ast.parse(open(sys.argv[1]).read())
ex = next(n.value.value for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "EXAMPLES")
for task in yaml.safe_load(ex):
    p = (task.get("nettune.agent.nettune_profile") or {}).get("profile")
    if isinstance(p, dict) and p.get("name") == "two-apps":
        print(json.dumps(p))
EOF
code=$(curl -s -o "$work/plan2" -w '%{http_code}' -H "Authorization: Bearer $secret" \
	-H 'Content-Type: application/json' --data-binary @"$work/two-apps.json" "$url/v1/plan")
check "the nettune_profile example with RSS contexts plans ($code: $(head -c 300 "$work/plan2"))" [ "$code" = 200 ]
check "its contexts: node 0's queues, node 1's" [ "$(jq -c '[.steps[] | select(.kind == "rss") | [.target, .after]] | sort' "$work/plan2")" = \
	'[["enos2/context-1","0-7*32"],["enos2/context-2","8-15*32"],["enos2/indir","8-15*32"]]' ]
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer wrong-token-wrong-token" "$url/v1/topology")
check "a token not in the file is refused ($code)" [ "$code" = 401 ]

# A rerun inside a confirm window finds the waiting transaction of the same
# profile, so that the rollout can still confirm it.
NETTUNE_TOKEN="$secret" ansible-playbook -i localhost, "$src/tests/ansible/pending.yml" -e nt_url="$url" \
	-e '{"nt_profile": {"name": "win", "sysctl": {"net.core.wmem_max": "268435456"}}}' > "$work/play.out" 2>&1
check "rerun play ran: $(tail -5 "$work/play.out")" [ $? = 0 ]
first=$($result "$work/out.json" task Apply localhost "[r['changed'], r['status'], r['transaction_id']]")
again=$($result "$work/out.json" task 'Apply again' localhost "[r['changed'], r['status'], r['transaction_id']]")
check "first apply waits for confirmation: $first" grep -q '^\[true, "pending_confirm", [0-9]*\]$' <<<"$first"
check "the rerun returns the same waiting transaction: $again" [ "$again" = "${first/true/false}" ]
check "confirmed" [ "$($result "$work/out.json" task Confirm localhost "r['status']")" = '"applied"' ]
check "after the confirmation: nothing to do, no transaction" [ "$($result "$work/out.json" task \
	'Apply after the confirmation' localhost "[r['changed'], r['transaction_id']]")" = '[false, null]' ]

# The plan's warnings reach the task (they were only in warnings_agent), and
# fail_on_warnings fails it with nothing applied.
NETTUNE_TOKEN="$secret" ansible-playbook -i localhost, "$src/tests/ansible/warnings.yml" -e nt_url="$url" \
	-e '{"nt_profile": {"name": "rings", "rings": [{"interface": "enos0", "rx": 4096}]}}' > "$work/play.out" 2>&1
check "warnings play ran: $(tail -5 "$work/play.out")" [ $? = 0 ]
w=$($result "$work/out.json" task 'Plan with warnings' localhost "r.get('warnings', [])")
check "the plan's warning is the task's: $w" grep -q 'nettune plan: enos0: changing rings or channels may reset the NIC' <<<"$w"
check "the warning is shown in the play's output" grep -q '\[WARNING\]: nettune plan: enos0: changing rings' "$work/play.out"
st=$(jq -r '[.results[] | select(.task == "Refuse a plan with warnings")][-1].status' "$work/out.json")
check "fail_on_warnings fails the task: $st" [ "$st" = failed ]
r=$($result "$work/out.json" task 'Refuse a plan with warnings' localhost "[r.get('transaction_id'), r.get('msg')]")
check "fail_on_warnings: nothing applied, the warnings in the message: $r" grep -q '^\[null, "the plan has 1 warning(s) and fail_on_warnings is set; nothing was applied: enos0: changing rings' <<<"$r"
check "still to do after the refusal" [ "$($result "$work/out.json" task 'Plan again' localhost "r['changed']")" = true ]

# ca_path is for https:// agents: a CA file that is not there does not fail
# a task against this plain-HTTP agent.
NETTUNE_TOKEN="$secret" ansible-playbook -i localhost, "$src/tests/ansible/ca_path.yml" -e nt_url="$url" > "$work/play.out" 2>&1
check "ca_path with an http:// agent is not used: $(tail -5 "$work/play.out")" [ $? = 0 ]
check "... and the facts came" [ "$($result "$work/out.json" task 'Facts over HTTP with a CA file that is not there' localhost \
	"len(r['ansible_facts']['nettune_topology']['nics']) > 0")" = true ]

# Over HTTPS: the agent's certificate is verified by default; a client
# certificate signed by the agent's client CA authenticates.
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=
mkdir "$work/certs"
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
(cd "$work/certs" &&
	printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > srv.ext &&
	printf 'extendedKeyUsage=clientAuth\n' > cli.ext &&
	openssl req -x509 $ec -keyout ca.key -out ca.pem -days 2 -subj '/CN=nettune test CA' &&
	openssl req $ec -keyout srv.key -out srv.csr -subj '/CN=127.0.0.1' &&
	openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile srv.ext &&
	openssl req $ec -keyout cli.key -out cli.csr -subj '/O=fleet/CN=controller-1' &&
	openssl x509 -req -in cli.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cli.pem -days 2 -extfile cli.ext
) > "$work/openssl.out" 2>&1 || { bad "openssl: $(tail -3 "$work/openssl.out")"; }
"$NT_BIN" serve --listen 127.0.0.1:0 --root "$work/root" --state-dir "$work/state2" \
	--tls-cert "$work/certs/srv.pem" --tls-key "$work/certs/srv.key" --tls-client-ca "$work/certs/ca.pem" \
	> "$work/agent2.out" 2> "$work/agent2.err" &
pid=$!
for _ in $(seq 100); do grep -q listening "$work/agent2.out" && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$work/agent2.out")
check "HTTPS agent starts: $(cat "$work/agent2.err")" [ -n "$url" ]
ansible-playbook -i localhost, "$src/tests/ansible/tls.yml" -e nt_url="$url" -e nt_certs="$work/certs" > "$work/play.out" 2>&1
check "TLS play ran: $(tail -5 "$work/play.out")" [ $? = 0 ]
msg=$($result "$work/out.json" task 'Facts without the CA' localhost "r.get('msg', '')")
check "an unknown CA fails the task: $msg" grep -qi 'certificate verify failed' <<<"$msg"
msg=$($result "$work/out.json" task 'Facts with a CA file that is not there' localhost "r.get('msg', '')")
check "a CA file that is not there is named as such: $msg" grep -q 'ca_path /nonexistent/fleet-ca.pem: no such file' <<<"$msg"
msg=$($result "$work/out.json" task 'Facts with the CA, without a client certificate' localhost "r.get('msg', '')")
check "no client certificate: 401: $msg" grep -q 'HTTP 401' <<<"$msg"
check "the CA and a client certificate: facts" [ "$($result "$work/out.json" task 'Facts with the CA and a client certificate' localhost \
	"len(r['ansible_facts']['nettune_topology']['nics']) > 0")" = true ]
check "the client certificate may plan" [ "$($result "$work/out.json" task 'Plan with the client certificate' localhost \
	"[r['changed'], r['steps'][0]['target']]")" = '[true, "net.core.rmem_max"]' ]

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
