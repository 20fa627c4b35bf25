#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The shipped Grafana dashboard and alerting rules against what the agent
exports. Grafana is not packaged by Debian, so no test starts one; instead:
the dashboard JSON has the fields Grafana's dashboard model requires of it and
its panels; every panel query, with the dashboard's variables given values, is
written into a rules file for `promtool check rules` to parse; and every
nettune_* metric named by a query or an alerting rule is one the agent exports
(the families of api/metrics.c). Usage: check_dashboard.py SRC OUT_RULES;
prints one line a problem and exits 1 when there is one."""
import json
import re
import sys

src, out = sys.argv[1], sys.argv[2]
problems = []


def need(cond, what):
    if not cond:
        problems.append(what)


with open(src + "/api/metrics.c") as f:
    families = set(re.findall(r'family\([^"]*"(nettune_\w+)"', f.read()))
need(len(families) >= 10, "api/metrics.c: only %d metric families found" % len(families))

with open(src + "/deploy/grafana/nettune-dashboard.json") as f:
    dash = json.load(f)
for k, t in (("uid", str), ("title", str), ("schemaVersion", int), ("panels", list), ("time", dict),
             ("templating", dict)):
    need(isinstance(dash.get(k), t), "dashboard: '%s' missing or not a %s" % (k, t.__name__))
variables = {v.get("name") for v in dash.get("templating", {}).get("list", [])}
need({"datasource", "instance"} <= variables, "dashboard: variables %s, want datasource and instance" % sorted(variables))
ids, exprs = set(), []
for p in dash.get("panels", []):
    where = "panel %r" % p.get("title")
    need(isinstance(p.get("id"), int) and p["id"] not in ids, where + ": id missing or repeated")
    ids.add(p.get("id"))
    need(p.get("type") in {"timeseries", "heatmap", "table", "stat", "bargauge", "gauge"}, where + ": type %r" % p.get("type"))
    g = p.get("gridPos", {})
    need(all(isinstance(g.get(k), int) for k in "xywh") and g.get("x", 0) + g.get("w", 0) <= 24,
         where + ": gridPos %r" % g)
    need(bool(p.get("description")), where + ": no description")
    refs = set()
    for t in p.get("targets", []):
        need(t.get("refId") and t["refId"] not in refs, where + ": refId missing or repeated")
        refs.add(t.get("refId"))
        need(isinstance(t.get("expr"), str) and t["expr"], where + ": a target without expr")
        exprs.append((where, t.get("expr", "")))
    need(refs, where + ": no targets")

# Each query as a recording rule, the variables given what Grafana would.
with open(out, "w") as f:
    f.write("groups:\n  - name: dashboard\n    rules:\n")
    for i, (where, e) in enumerate(exprs):
        e = e.replace("$instance", ".*").replace("$__rate_interval", "5m").replace("$__range", "1h")
        need("$" not in e, where + ": an unknown variable in %r" % e)
        f.write("      - record: dashboard:query_%d\n        expr: %s\n" % (i, json.dumps(e)))

with open(src + "/deploy/prometheus/nettune.rules.yml") as f:
    rules = f.read()
for where, text in [("rules", rules)] + exprs:
    for m in set(re.findall(r"\bnettune_\w+", text)):
        need(m in families, "%s: %s is not a metric the agent exports" % (where, m))

for p in problems:
    print(p)
print("%d panels, %d queries, %d metric families; %d problem(s)" % (len(dash.get("panels", [])), len(exprs),
                                                                   len(families), len(problems)))
sys.exit(1 if problems else 0)
