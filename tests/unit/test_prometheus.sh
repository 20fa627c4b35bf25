#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The shipped Prometheus alerting rules and Grafana dashboard
# (deploy/prometheus, deploy/grafana): the rules pass `promtool check rules`
# and their tests (tests/prometheus/nettune.rules.test.yml: each alert fires
# on its series and keeps silent on the look-alikes); the dashboard has the
# fields Grafana needs, each panel's query parses (as a recording rule), and
# every metric the rules and queries name is one the agent exports. Each
# check is shown to fail on a planted fault.
set -u
cd "${NT_SRC:?NT_SRC: the source tree}" || exit 1
for t in promtool python3; do
	command -v $t >/dev/null || { echo "SKIP: $t is not installed (promtool: Debian package prometheus)"; exit 77; }
done
fail=0
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
promtool check rules deploy/prometheus/nettune.rules.yml || { echo "FAIL: promtool check rules"; fail=1; }
(cd tests/prometheus && promtool test rules nettune.rules.test.yml) || { echo "FAIL: promtool test rules"; fail=1; }
python3 tests/prometheus/check_dashboard.py . "$w/dash.rules.yml" || { echo "FAIL: the dashboard (above)"; fail=1; }
promtool check rules "$w/dash.rules.yml" || { echo "FAIL: a dashboard query does not parse"; fail=1; }

# The checks can fail: a query that does not parse, a metric the agent does
# not export, a rule whose test no longer holds.
mkdir -p "$w/src/api" "$w/src/deploy/grafana" "$w/src/deploy/prometheus"
cp api/metrics.c "$w/src/api/"
cp deploy/prometheus/nettune.rules.yml "$w/src/deploy/prometheus/"
python3 - deploy/grafana/nettune-dashboard.json "$w/src/deploy/grafana/nettune-dashboard.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["panels"][1]["targets"][0]["expr"] = "sum by (cpu) (rate(nettune_irq_interrupts_total[5m])"
d["panels"][2]["targets"][0]["expr"] = "nettune_nic_interrupts_moved"
json.dump(d, open(sys.argv[2], "w"))
PY
python3 tests/prometheus/check_dashboard.py "$w/src" "$w/bad.rules.yml" > "$w/bad.out"
grep -q "nettune_nic_interrupts_moved is not a metric the agent exports" "$w/bad.out" ||
	{ echo "FAIL: an unknown metric was not caught:"; cat "$w/bad.out"; fail=1; }
promtool check rules "$w/bad.rules.yml" > "$w/bad.promtool" 2>&1 &&
	{ echo "FAIL: promtool passed a query that does not parse"; fail=1; }
sed 's/> 300/> 3000/' deploy/prometheus/nettune.rules.yml > "$w/src/deploy/prometheus/nettune.rules.yml"
mkdir -p "$w/src/tests/prometheus"
cp tests/prometheus/nettune.rules.test.yml "$w/src/tests/prometheus/"
(cd "$w/src/tests/prometheus" && promtool test rules nettune.rules.test.yml) > "$w/bad.test" 2>&1 &&
	{ echo "FAIL: the rule tests passed a stuck-transaction rule that waits 50 minutes"; fail=1; }
[ $fail -eq 0 ] && echo "rules, their tests and the dashboard checked; each check fails on its planted fault"
exit $fail
