/* SPDX-License-Identifier: Apache-2.0 */
/* The profiles the package ships (profiles/, installed in
 * /usr/share/nettune/profiles): each one is planned (POST /v1/plan) on
 * every fixture host it is meant for and must be valid there with a step
 * of each kind it sets; each cites field-report sections that exist; and
 * no file in profiles/ is left without a row here. */
#include "harness.h"
#include "integration/nt_agent.h"
#include "tree_files.h"

#include <dirent.h>

#define PROFILES NT_FIXTURES "/../../profiles"
#define DOCS NT_FIXTURES "/../../docs"

static const struct shipped {
	const char *name;
	const char *hosts[4]; /* fixture folders it targets */
} shipped[] = {
	{ "throughput", { "x460-4node-8nic", "ceph-2node-ib", "epyc7713-2node-bond", NULL } },
	{ "latency", { "x460-4node-8nic", "ceph-2node-ib", "epyc7713-2node-bond", NULL } },
	{ "esnet-100g", { "epyc7713-2node-bond", "ceph-2node-ib", NULL } },
	{ "epyc-fix", { "epyc7713-2node-bond", NULL } },
	{ "100g-streams", { "epyc7713-2node-bond", NULL } },
	{ "100g-host", { "epyc7713-2node-bond", NULL } },
};
#define NSHIPPED (sizeof(shipped) / sizeof(shipped[0]))

/* The plan's steps include one of KIND. */
static bool has_kind(json_t *plan, const char *kind)
{
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(plan, "steps"), i, s)
		if (!strcmp(json_string_value(json_object_get(s, "kind")) ?: "", kind))
			return true;
	return false;
}

/* Every "#anchor" of the description is a section of the field reports,
 * and there is at least one. */
static void check_cites(const char *name, const char *desc, const char *reports)
{
	int n = 0;
	for (const char *p = strchr(desc, '#'); p; p = strchr(p + 1, '#')) {
		char anchor[64], head[80];
		size_t k = strspn(p + 1, "abcdefghijklmnopqrstuvwxyz0123456789-");
		snprintf(anchor, sizeof(anchor), "%.*s", (int)k, p + 1);
		snprintf(head, sizeof(head), "\n## %s\n", anchor);
		CHECK_MSG(k > 0 && strstr(reports, head), "%s cites #%s, which docs/field-reports.md lacks", name,
			  anchor);
		n++;
	}
	CHECK_MSG(n > 0, "%s cites no field report", name);
}

static void plan_on(const char *host, const char *reports)
{
	char root[PATH_MAX];
	nt_agent a;
	snprintf(root, sizeof(root), "%s/%s", NT_FIXTURES, host);
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent on %s did not start", host);
		return;
	}
	for (size_t i = 0; i < NSHIPPED; i++) {
		bool targets = false;
		for (int h = 0; shipped[i].hosts[h]; h++)
			targets |= !strcmp(shipped[i].hosts[h], host);
		if (!targets)
			continue;
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s.json", shipped[i].name);
		char *text = tree_read(PROFILES, path);
		json_t *prof = text ? json_loads(text, JSON_REJECT_DUPLICATES, NULL) : NULL;
		CHECK_MSG(prof, "%s does not parse", path);
		if (!prof) {
			free(text);
			continue;
		}
		CHECK_STR(json_string_value(json_object_get(prof, "name")), shipped[i].name);
		check_cites(shipped[i].name, json_string_value(json_object_get(prof, "description")) ?: "", reports);
		long st = 0;
		json_t *plan = NULL;
		nt_http("POST", nt_url(&a, "/v1/plan"), text, &st, &plan, NULL, 0);
		CHECK_MSG(st == 200, "%s on %s: %ld %s", shipped[i].name, host, st,
			  plan ? json_dumps(json_object_get(plan, "errors"), 0) : "");
		CHECK_MSG(json_array_size(json_object_get(plan, "steps")) > 0, "%s on %s plans nothing",
			  shipped[i].name, host);
		static const char *const sections[][2] = {
			{ "irq_affinity", "irq_affinity" }, { "sysctl", "sysctl" }, { "rings", "rings" }, { "bonds", "bond" },
			{ "flows", "flow" }, { "qdisc", "qdisc" }, { "txqueuelen", "txqueuelen" }, { "xps", "xps_cpus" }
		};
		for (size_t k = 0; k < sizeof(sections) / sizeof(sections[0]); k++)
			if (json_object_get(prof, sections[k][0]))
				CHECK_MSG(has_kind(plan, sections[k][1]), "%s on %s: no %s step", shipped[i].name, host,
					  sections[k][1]);
		/* Whatever a profile reserves for the application is named. */
		if (strstr(text, "reserve_app_cpus"))
			CHECK_MSG(json_object_size(json_object_get(plan, "reserved")) > 0, "%s on %s reserves nothing",
				  shipped[i].name, host);
		json_decref(plan);
		json_decref(prof);
		free(text);
	}
	nt_agent_stop(&a);
}

/* What the whole-host profile changes on the EPYC copy ROOT: each port's
 * ethtool document (rings, RSS, qdisc) and queue length, an IRQ's
 * affinity, an XPS mask, a TCP sysctl. */
static json_t *snapshot(const char *root)
{
	static const char *const files[] = { "sys/class/net/enos0/tx_queue_len", "sys/class/net/enos3/tx_queue_len",
					      "proc/irq/101/smp_affinity_list", "sys/class/net/enos2/queues/tx-3/xps_cpus",
					      "proc/sys/net/ipv4/tcp_rmem", "proc/sys/net/core/wmem_max" };
	json_t *snap = json_object();
	/* The documents as text: a rollback writes back the file that was
	 * there, not only a document equal to it (issue 43, item 22: it
	 * came back indented, with "wanted" and "configured" added). */
	for (int p = 0; p < 4; p++) {
		char rel[32];
		snprintf(rel, sizeof(rel), "ethtool/enos%d.json", p);
		char *t = tree_read(root, rel);
		json_object_set_new(snap, rel, t ? json_string(t) : json_null());
		free(t);
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *t = tree_read(root, files[i]);
		json_object_set_new(snap, files[i], t ? json_string(t) : json_null());
		free(t);
	}
	return snap;
}

static void round_trip(const char *name, const char *host)
{
	char root[] = "/tmp/nt-shipped-XXXXXX", cmd[PATH_MAX + 64], path[PATH_MAX];
	nt_agent a = { 0 };
	json_t *before = NULL, *doc = NULL, *prof = NULL;
	char *body = NULL;
	long st = 0;
	snprintf(path, sizeof(path), "%s.json", name);
	char *text = tree_read(PROFILES, path);
	if (!mkdtemp(root) || !text) {
		CHECK_MSG(0, "no %s or no temporary directory", path);
		goto out;
	}
	snprintf(cmd, sizeof(cmd), "cp -a %s/%s/. %s/", NT_FIXTURES, host, root);
	CHECK_INT(system(cmd), 0);
	before = snapshot(root);
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent on a copy of %s did not start", host);
		goto out;
	}
	prof = json_pack("{s:o}", "profile", json_loads(text, 0, NULL));
	body = json_dumps(prof, JSON_COMPACT);
	nt_http("POST", nt_url(&a, "/v1/transactions?steps=failed"), body, &st, &doc, NULL, 0);
	CHECK_MSG(st == 201 || st == 200, "%s applied on %s: %ld", name, host, st);
	CHECK_STR(json_string_value(json_object_get(doc, "status")), "applied");
	int64_t id = json_integer_value(json_object_get(doc, "id"));
	json_decref(doc);
	json_t *now = snapshot(root);
	CHECK_MSG(!json_equal(now, before), "%s changed nothing on %s", name, host);
	json_decref(now);
	nt_http("POST", nt_url(&a, "/v1/plan"), text, &st, &doc, NULL, 0);
	CHECK_MSG(st == 200 && json_array_size(json_object_get(doc, "steps")) == 0,
		  "%s planned again on %s after its apply: %ld, %zu steps", name, host, st,
		  json_array_size(json_object_get(doc, "steps")));
	json_decref(doc);
	snprintf(path, sizeof(path), "/v1/transactions/%lld/rollback?steps=failed", (long long)id);
	nt_http("POST", nt_url(&a, path), "{}", &st, &doc, NULL, 0);
	CHECK_STR(json_string_value(json_object_get(doc, "status")), "applied");
	json_decref(doc);
	now = snapshot(root);
	CHECK_MSG(json_equal(now, before), "%s rolled back on %s: the files are not as they were", name, host);
	json_decref(now);
out:
	nt_agent_stop(&a);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (root[0] && strncmp(root, "/tmp/nt-shipped-", 16) == 0)
		system(cmd);
	json_decref(before);
	json_decref(prof);
	free(body);
	free(text);
}

int main(void)
{
	char *reports = tree_read(DOCS, "field-reports.md");
	DIR *d = opendir(PROFILES);
	if (!reports || !d)
		SKIP("no %s or %s/field-reports.md", PROFILES, DOCS);
	struct dirent *e;
	int files = 0;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
			continue;
		bool known = false;
		for (size_t i = 0; i < NSHIPPED; i++)
			known |= strlen(shipped[i].name) == len - 5 && !strncmp(shipped[i].name, e->d_name, len - 5);
		CHECK_MSG(known, "profiles/%s has no row in test_shipped_profiles.c", e->d_name);
		files++;
	}
	closedir(d);
	CHECK_INT(files, NSHIPPED);
	static const char *const hosts[] = { "x460-4node-8nic", "ceph-2node-ib", "epyc7713-2node-bond" };
	for (size_t h = 0; h < 3; h++)
		plan_on(hosts[h], reports);
	round_trip("100g-host", "epyc7713-2node-bond");
	free(reports);
	TEST_MAIN_END();
}
