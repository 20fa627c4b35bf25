/* SPDX-License-Identifier: Apache-2.0 */
/* The NAPI findings through GET /v1/diagnostics on a copy of the EPYC
 * tree, whose NIC documents carry the netdev family's answers
 * (kernel/fixture_napi.c): enos1 runs threaded NAPI with its 16 threads
 * on every CPU (napi-thread-unpinned); here enos3's first four NAPIs are
 * given defer-hard-irqs 10 without a gro-flush-timeout
 * (napi-defer-without-timeout) and enos0's first an irq-suspend-timeout
 * alone (irq-suspend-without-defer); enos2 keeps Eric Dumazet's pair (no
 * finding). The fix profile's irq_affinity and napi[] parts, applied
 * through the agent, put each IRQ on its NIC's node and each thread on its
 * IRQ's CPU ("irq" follows the placement of the same profile): no thread
 * finding is left, and the thread's Cpus_allowed_list is its IRQ's
 * smp_affinity_list; the rollback gives the thread every CPU again and the
 * finding is back. A taskset behind the agent's back after the fix makes
 * the delivery check judge that thread elsewhere, and the diagnostics
 * say napi-thread-elsewhere. The steering findings and the delivery check
 * (GET /v1/verify) map queues to IRQs through the family there and say
 * so. The copy also busy-polls host-wide (net.core.busy_poll 50):
 * busy-poll-global, whose fragment (named in its message, not a fix) goes
 * in the same transaction and
 * comes back with the rollback. */
#include "diagnose/diagnose.h"
#include "harness.h"
#include "integration/nt_agent.h"
#include "integration/test_txn_util.h"
#include "test_json.h"
#include "tree_files.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPYC NT_FIXTURES "/epyc7713-2node-bond"

/* Set MEMBER of the first N NAPIs of IFACE's document in ROOT to V. */
static void set_napis(const char *root, const char *iface, int n, const char *member, json_int_t v)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/ethtool/%s.json", root, iface);
	json_t *doc = json_load_file(path, 0, NULL);
	json_t *napis = json_object_get(json_object_get(doc, "netdev"), "napis");
	CHECK(json_array_size(napis) >= (size_t)n);
	for (int i = 0; i < n; i++)
		json_object_set_new(json_array_get(napis, (size_t)i), member, json_integer(v));
	CHECK_INT(json_dump_file(doc, path, JSON_INDENT(1)), 0);
	json_decref(doc);
}

static size_t napis_of(const json_t *f)
{
	return json_array_size(json_object_get(json_object_get(f, "evidence"), "napis"));
}

/* "Cpus_allowed_list" of ROOT/proc/PID/status, into BUF. */
static void allowed(const char *root, int pid, char *buf, size_t size)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "proc/%d/status", pid);
	char *s = tree_read(root, rel);
	const char *p = s ? strstr(s, "Cpus_allowed_list:") : NULL;
	buf[0] = 0;
	if (p)
		sscanf(p + strlen("Cpus_allowed_list:"), " %63s", buf);
	free(s);
}

/* POST /v1/plan PROFILE: the number of napi_thread_cpus steps, each
 * checked to pin rx-N's thread to WANT (a cpulist), or, with WANT NULL,
 * to what the plan places IRQ of rx-N on (irq_affinity step of IRQ
 * 121 + N: enos1's queue IRQs in the fixture); *WARNED whether a warning
 * says the threads follow the IRQs. */
static int plan_threads(nt_agent *a, const char *profile, const char *want, bool *warned)
{
	long st = 0;
	json_t *doc = NULL, *s;
	size_t i;
	int n = 0;
	char irq_after[16][64];
	memset(irq_after, 0, sizeof(irq_after));
	CHECK_INT(nt_http("POST", nt_url(a, "/v1/plan"), profile, &st, &doc, NULL, 0), 0);
	CHECK_MSG(st == 200, "plan %s: %ld", profile, st);
	json_array_foreach(json_object_get(doc, "steps"), i, s) {
		const char *kind = json_string_value(json_object_get(s, "kind")) ?: "";
		int irq = atoi(json_string_value(json_object_get(s, "target")) ?: "0");
		if (!strcmp(kind, "irq_affinity") && irq >= 121 && irq < 121 + 16)
			snprintf(irq_after[irq - 121], sizeof(irq_after[0]), "%s",
				 json_string_value(json_object_get(s, "after")) ?: "");
	}
	json_array_foreach(json_object_get(doc, "steps"), i, s) {
		if (strcmp(json_string_value(json_object_get(s, "kind")) ?: "", "napi_thread_cpus"))
			continue;
		const char *target = json_string_value(json_object_get(s, "target")) ?: "";
		const char *after = json_string_value(json_object_get(s, "after")) ?: "";
		int q = -1;
		CHECK_MSG(sscanf(target, "enos1/rx-%d", &q) == 1 && q >= 0 && q < 16, "thread step %s", target);
		if (q >= 0 && q < 16)
			CHECK_MSG(!strcmp(after, want ? want : irq_after[q]), "%s to %s, its IRQ to %s", target, after,
				  want ? want : irq_after[q]);
		n++;
	}
	*warned = false;
	json_array_foreach(json_object_get(doc, "warnings"), i, s) {
		const char *w = json_is_string(s) ? json_string_value(s)
						  : json_string_value(json_object_get(s, "message"));
		*warned |= w && strstr(w, "enos1: threaded NAPI is on: its 16 NAPI threads placed with their IRQs");
	}
	json_decref(doc);
	return n;
}

int main(void)
{
	char root[] = "/tmp/nt-diagnapi-XXXXXX", cmd[PATH_MAX + 128], cpus[64], irqcpus[64];
	nt_agent a;
	if (access(EPYC, F_OK) != 0)
		SKIP("fixture %s is not present", EPYC);
	CHECK(mkdtemp(root) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/. %s/", EPYC, root);
	CHECK_INT(system(cmd), 0);
	set_napis(root, "enos3", 4, "defer-hard-irqs", 10);
	set_napis(root, "enos0", 1, "irq-suspend-timeout", 1000000);
	tree_write(root, "proc/sys/net/core/busy_poll", "50\n");
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start on %s", root);
		goto out;
	}

	json_t *doc = tu_get(&a, "/v1/diagnostics");
	const json_t *f = doc ? finding(doc, "napi-thread-unpinned", "enos1") : NULL;
	CHECK_MSG(f && napis_of(f) == 16, "enos1: napi-thread-unpinned with its 16 threads");
	const char *m = f ? json_string_value(json_object_get(f, "message")) : NULL;
	CHECK_MSG(m && strstr(m, "NAPI 8209 (rx-0, thread pid 3100) on CPUs 0-127, its IRQ 121 on 48 (effective)"),
		  "message: %s", m ? m : "?");
	json_t *fix = f ? json_object_get(f, "fix") : NULL;
	char *ft = json_dumps(fix, JSON_COMPACT);
	CHECK_MSG(ft && !strcmp(ft, "{\"napi\":[{\"interface\":\"enos1\",\"queues\":\"0-15\",\"thread_cpus\":\"irq\"}]}"),
		  "fix: %s", ft ? ft : "?");
	free(ft);
	CHECK(!finding(doc, "napi-thread-unpinned", "enos0") && !finding(doc, "napi-thread-apart", "enos1"));
	f = doc ? finding(doc, "napi-defer-without-timeout", "enos3") : NULL;
	CHECK_MSG(f && napis_of(f) == 4, "enos3: napi-defer-without-timeout for its 4 NAPIs");
	CHECK(!finding(doc, "napi-defer-without-timeout", "enos2"));
	f = doc ? finding(doc, "irq-suspend-without-defer", "enos0") : NULL;
	CHECK_MSG(f && napis_of(f) == 1, "enos0: irq-suspend-without-defer for one NAPI");
	/* Steering findings that name queue IRQs say where the map came
	 * from: the family, for the mlx5 ports. */
	size_t i, with_source = 0;
	json_t *e;
	json_array_foreach(json_object_get(doc, "findings"), i, e) {
		const char *src = json_string_value(json_object_get(json_object_get(e, "evidence"), "irq_source"));
		if (!src)
			continue;
		with_source++;
		CHECK_MSG(!strcmp(src, "netlink"), "%s %s: irq_source %s",
			  json_string_value(json_object_get(e, "id")), json_string_value(json_object_get(e, "subject")), src);
	}
	CHECK_MSG(with_source > 0, "no steering finding says its irq_source");
	f = doc ? finding(doc, "busy-poll-global", "sysctl") : NULL;
	CHECK_MSG(f && !strcmp(json_string_value(json_object_get(f, "severity")) ?: "", "info") &&
			  !strcmp(json_string_value(json_object_get(json_object_get(json_object_get(f, "evidence"), "values"),
								    "net.core.busy_poll")) ?: "", "50") &&
			  json_is_null(json_object_get(f, "fix")),
		  "busy-poll-global with busy_poll 50 and no fix");

	/* A profile that places enos1's IRQs places its threaded NAPI's
	 * threads with them, unless napi[] chooses otherwise (issue 39). */
	bool warned = false;
	CHECK_INT(plan_threads(&a, "{\"name\":\"t\",\"irq_affinity\":[{\"interface\":\"enos1\",\"policy\":\"local\"}]}", NULL,
			       &warned), 16);
	CHECK_MSG(warned, "no warning that enos1's threads follow its IRQs");
	CHECK_INT(plan_threads(&a, "{\"name\":\"t\",\"irq_affinity\":[{\"interface\":\"enos1\",\"policy\":\"local\"}],"
				   "\"napi\":[{\"interface\":\"enos1\",\"threaded\":true}]}", NULL, &warned), 16);
	CHECK(!warned);
	CHECK_INT(plan_threads(&a, "{\"name\":\"t\",\"irq_affinity\":[{\"interface\":\"enos1\",\"policy\":\"local\"}],"
				   "\"napi\":[{\"interface\":\"enos1\",\"threaded\":true,\"thread_cpus\":\"0-3\"}]}",
			       "0-3", &warned), 16);
	CHECK_INT(plan_threads(&a, "{\"name\":\"t\",\"irq_affinity\":[{\"interface\":\"enos1\",\"policy\":\"local\"}],"
				   "\"napi\":[{\"interface\":\"enos1\",\"threaded\":false}]}", NULL, &warned), 0);
	/* enos0's NAPI is not threaded: its IRQs alone. */
	CHECK_INT(plan_threads(&a, "{\"name\":\"t\",\"irq_affinity\":[{\"interface\":\"enos0\",\"policy\":\"local\"}]}", NULL,
			       &warned), 0);

	/* The fix profile's placement and pinning, applied together, with
	 * the fragment busy-poll-global names (it has no fix: the fix
	 * profile leaves busy polling alone). */
	json_t *all = doc ? nt_diagnose_fix_profile(doc, "fixes") : NULL;
	CHECK(all && !json_object_get(json_object_get(all, "sysctl"), "net.core.busy_poll"));
	json_t *p = json_pack("{s:{s:s, s:O, s:O, s:{s:s}}}", "profile", "name", "napi-fix", "irq_affinity",
			      json_object_get(all, "irq_affinity"), "napi", json_object_get(all, "napi"), "sysctl",
			      "net.core.busy_poll", "0");
	CHECK(p != NULL);
	json_decref(all);
	json_decref(doc);
	char *body = p ? json_dumps(p, JSON_COMPACT) : NULL;
	json_decref(p);
	long st = 0;
	json_t *txn = NULL;
	CHECK_INT(nt_http("POST", nt_url(&a, "/v1/transactions"), body, &st, &txn, NULL, 0), 0);
	free(body);
	CHECK_MSG(st == 201 && !strcmp(json_string_value(json_object_get(txn, "status")) ?: "", "applied"),
		  "apply: %ld %s", st, json_string_value(json_object_get(txn, "status")) ?: "?");
	json_int_t id = json_integer_value(json_object_get(txn, "id"));
	json_decref(txn);
	allowed(root, 3100, cpus, sizeof(cpus));
	char *aff = tree_read(root, "proc/irq/121/smp_affinity_list");
	snprintf(irqcpus, sizeof(irqcpus), "%s", aff ? aff : "?");
	irqcpus[strcspn(irqcpus, "\n")] = 0;
	free(aff);
	CHECK_MSG(!strcmp(cpus, irqcpus) && strcmp(cpus, "48"), "thread 3100 on %s, its IRQ on %s (was 48)", cpus,
		  irqcpus);
	doc = tu_get(&a, "/v1/diagnostics");
	CHECK_MSG(doc && !finding(doc, "napi-thread-unpinned", "enos1") && !finding(doc, "napi-thread-apart", "enos1"),
		  "a thread finding for enos1 after the fix");
	CHECK_MSG(doc && !finding(doc, "busy-poll-global", "sysctl"), "busy-poll-global after the fix");
	char *bp = tree_read(root, "proc/sys/net/core/busy_poll");
	CHECK_MSG(bp && atoi(bp) == 0, "busy_poll %s after the fix", bp ? bp : "?");
	free(bp);
	json_decref(doc);

	/* An application near enos1 keeps off its pinned NAPI threads' CPUs
	 * as off its IRQs' (placement/app.h): thread 3100's CPU is among
	 * napi_cpus and not among app_cpus. */
	doc = tu_get(&a, "/v1/nics/enos1/placement");
	nt_cpuset napi_set, app_set;
	int thread_cpu = atoi(cpus);
	CHECK_MSG(doc && nt_cpulist_parse(json_string_value(json_object_get(doc, "napi_cpus")) ?: "x", &napi_set) == 0 &&
			  nt_cpulist_parse(json_string_value(json_object_get(doc, "app_cpus")) ?: "x", &app_set) == 0,
		  "placement: napi_cpus %s, app_cpus %s",
		  doc ? json_string_value(json_object_get(doc, "napi_cpus")) ?: "null" : "-",
		  doc ? json_string_value(json_object_get(doc, "app_cpus")) ?: "null" : "-");
	if (doc) {
		CHECK_MSG(nt_cpuset_isset(&napi_set, thread_cpu), "thread 3100's CPU %d not in napi_cpus", thread_cpu);
		CHECK_MSG(!nt_cpuset_intersects(&napi_set, &app_set) && !nt_cpuset_empty(&app_set),
			  "app_cpus %s and napi_cpus %s", json_string_value(json_object_get(doc, "app_cpus")),
			  json_string_value(json_object_get(doc, "napi_cpus")));
	}
	json_decref(doc);

	/* A taskset behind the agent's back: rx-0's thread allowed on every
	 * CPU again. The delivery check judges it elsewhere (outside
	 * "allowed"), and the diagnostics say so with the napi[] entry that
	 * pins it again. */
	char st_text[256];
	snprintf(st_text, sizeof(st_text), "Name:\tnapi/enos1-8209\nState:\tS (sleeping)\nTgid:\t3100\nPid:\t3100\n"
		 "PPid:\t2\nCpus_allowed:\tffffffff,ffffffff,ffffffff,ffffffff\nCpus_allowed_list:\t0-127\n");
	tree_write(root, "proc/3100/status", st_text);

	/* The delivery check maps each IRQ to its queue through the family. */
	doc = tu_get(&a, "/v1/verify?window_ms=100");
	int netlink_queues = 0;
	json_array_foreach(json_object_get(doc, "irqs"), i, e) {
		if (strcmp(json_string_value(json_object_get(e, "nic")) ?: "", "enos1"))
			continue;
		CHECK_STR(json_string_value(json_object_get(e, "queue_source")), "netlink");
		netlink_queues += json_is_integer(json_object_get(e, "queue"));
	}
	CHECK_INT(netlink_queues, 16);
	const json_t *th = NULL;
	json_array_foreach(json_object_get(doc, "threads"), i, e)
		if (!strcmp(json_string_value(json_object_get(e, "target")) ?: "", "enos1/rx-0"))
			th = e;
	CHECK_MSG(th && !strcmp(json_string_value(json_object_get(th, "verdict")) ?: "", "elsewhere") &&
			  !strcmp(json_string_value(json_object_get(th, "outside")) ?: "", "allowed"),
		  "enos1/rx-0's thread elsewhere, outside allowed");
	json_decref(doc);
	doc = tu_get(&a, "/v1/diagnostics");
	int moved = 0;
	json_array_foreach(json_object_get(doc, "findings"), i, e) {
		if (strcmp(json_string_value(json_object_get(e, "id")) ?: "", "napi-thread-elsewhere"))
			continue;
		moved++;
		const json_t *ev = json_object_get(e, "evidence");
		char *fx = json_dumps(json_object_get(e, "fix"), JSON_COMPACT), want[160];
		snprintf(want, sizeof(want), "{\"napi\":[{\"interface\":\"enos1\",\"queues\":\"0\",\"thread_cpus\":\"%s\"}]}",
			 irqcpus);
		CHECK_MSG(!strcmp(json_string_value(json_object_get(e, "subject")) ?: "", "enos1") &&
				  json_integer_value(json_object_get(ev, "pid")) == 3100 &&
				  json_integer_value(json_object_get(ev, "napi_id")) == 8209 &&
				  !strcmp(json_string_value(json_object_get(ev, "placed")) ?: "", irqcpus) &&
				  !strcmp(json_string_value(json_object_get(ev, "allowed")) ?: "", "0-127") && fx &&
				  !strcmp(fx, want),
			  "napi-thread-elsewhere: %s, fix %s", json_string_value(json_object_get(e, "message")) ?: "?",
			  fx ? fx : "?");
		free(fx);
	}
	CHECK_INT(moved, 1);
	json_decref(doc);

	char url[64];
	snprintf(url, sizeof(url), "/v1/transactions/%lld/rollback", (long long)id);
	txn = NULL;
	CHECK_INT(nt_http("POST", nt_url(&a, url), "{}", &st, &txn, NULL, 0), 0);
	CHECK_MSG(st == 201, "rollback: %ld", st);
	json_decref(txn);
	allowed(root, 3100, cpus, sizeof(cpus));
	CHECK_STR(cpus, "0-127");
	doc = tu_get(&a, "/v1/diagnostics");
	CHECK(doc && finding(doc, "napi-thread-unpinned", "enos1"));
	CHECK(doc && finding(doc, "busy-poll-global", "sysctl"));
	json_decref(doc);
	CHECK_INT(nt_agent_stop(&a), 0);
out:
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	system(cmd);
	TEST_MAIN_END();
}
