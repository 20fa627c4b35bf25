/* SPDX-License-Identifier: Apache-2.0 */
/* Plan ids and lean replies over HTTP, against a real agent on a copy of
 * the x460 fixture: POST /v1/plan keeps the plan under an id, and
 * POST /v1/transactions {"plan_id"} applies exactly its steps, once; a
 * target moved since the plan makes it 409 with nothing applied (or, with
 * "replan": true, a fresh plan applied); an id used, expired, unknown or
 * of another shape, or given with a profile, is refused with its reason
 * and nothing applied. ?steps=failed|none and Prefer: return=minimal
 * leave the steps out of the answer and keep their counts. */
#include "harness.h"
#include "integration/nt_agent.h"
#include "integration/test_txn_util.h"
#include "tree_files.h"
#include "base/cpuset.h"

#define X460 NT_FIXTURES "/x460-4node-8nic"

/* A copy of the x460 fixture in DIR (its root DIR/root, a snapshot in
 * DIR/snap) and an agent on it with EXTRA options. Returns 0, or -1 with
 * the failure counted. */
static int start_on_copy(nt_agent *a, char *dir, size_t dsize, char *root, size_t rsize,
			 const char *const *extra)
{
	if (tu_copy(X460, dir, dsize, root, rsize) < 0) {
		CHECK_MSG(0, "cannot copy %s", X460);
		return -1;
	}
	tu_sh("cp -a '%s' '%s/snap'", root, dir);
	if (nt_agent_start(a, root, NULL, extra) < 0) {
		CHECK_MSG(0, "agent did not start");
		return -1;
	}
	return 0;
}

/* Transactions in the agent's history. */
static long long history_total(nt_agent *a)
{
	long st = 0;
	json_t *doc = NULL;
	tu_http("GET", nt_url(a, "/v1/transactions"), NULL, NULL, &st, &doc);
	CHECK_INT(st, 200);
	long long n = json_integer_value(json_object_get(doc, "total"));
	json_decref(doc);
	return n;
}

/* Whether the tree under DIR/root is still byte for byte DIR/snap. */
static bool unchanged(const char *dir)
{
	return tu_sh("diff -r --no-dereference '%s/snap' '%s/root' >&2", dir, dir) == 0;
}

static json_t *plan(nt_agent *a, char *id, size_t size)
{
	json_t *doc = tu_post(a, "/v1/plan", X460_FIX, 200);
	const char *pid = tu_str(doc, "id");
	CHECK_MSG(pid && strlen(pid) == 34 && !strncmp(pid, "p-", 2), "plan id '%s'", pid ? pid : "(none)");
	CHECK_MSG(tu_str(doc, "expires") != NULL, "the plan has no expiry");
	snprintf(id, size, "%s", pid ? pid : "");
	return doc;
}

static json_t *apply_id(nt_agent *a, const char *path, const char *id, const char *extra, long want)
{
	char body[256];
	snprintf(body, sizeof(body), "{\"plan_id\":\"%s\"%s}", id, extra ? extra : "");
	return tu_post(a, path, body, want);
}

/* A problem's type ends in TYPE and its detail holds WORDS. */
static void check_problem(json_t *doc, const char *type, const char *words)
{
	const char *t = tu_str(doc, "type"), *d = tu_str(doc, "detail");
	CHECK_MSG(t && strlen(t) >= strlen(type) && !strcmp(t + strlen(t) - strlen(type), type),
		  "problem type '%s', wanted ...%s", t ? t : "", type);
	CHECK_MSG(d && strstr(d, words), "detail '%s' does not say '%s'", d ? d : "", words);
}

static size_t pref_header(char *p, size_t sz, size_t n, void *ud)
{
	size_t len = sz * n;
	if (len > 19 && !strncasecmp(p, "Preference-Applied:", 19))
		sscanf(p + 19, " %255[^\r\n]", (char *)ud);
	return len;
}

/* POST with a Prefer header; the Preference-Applied header into APPLIED. */
static json_t *post_prefer(const char *url, const char *body, const char *prefer, long *status,
			   char *applied, size_t size)
{
	char hdr[256];
	snprintf(hdr, sizeof(hdr), "Prefer: %s", prefer);
	CURL *c = curl_easy_init();
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	h = curl_slist_append(h, hdr);
	nt_http_result r = { 0 };
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, nt_http_body_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
	applied[0] = '\0';
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, pref_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, applied);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	*status = 0;
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	json_t *doc = r.body ? json_loads(r.body, 0, NULL) : NULL;
	free(r.body);
	return doc;
}

static void test_plan_ids(void)
{
	char dir[PATH_MAX], root[PATH_MAX], id[64], id2[64], rel[128], buf[256], url[128];
	nt_agent a;
	long st;
	if (start_on_copy(&a, dir, sizeof(dir), root, sizeof(root), NULL) < 0)
		return;

	/* Bad input first: each refused with its reason, nothing applied. */
	static const struct {
		const char *body, *type, *words;
		long status;
	} bad[] = {
		{ "{\"plan_id\":\"p-00000000000000000000000000000000\",\"profile\":{\"name\":\"x\"}}",
		  "invalid-request", "not both", 422 },
		{ "{\"plan_id\":\"p-00000000000000000000000000000000\",\"profile_name\":\"x\"}",
		  "invalid-request", "not both", 422 },
		{ "{\"plan_id\":7}", "invalid-request", "not a plan id", 422 },
		/* A transaction's id, a profile's name, an uppercase id: other shapes. */
		{ "{\"plan_id\":\"7\"}", "invalid-request", "not a plan id", 422 },
		{ "{\"plan_id\":\"x460-fix\"}", "invalid-request", "not a plan id", 422 },
		{ "{\"plan_id\":\"p-0000000000000000000000000000000G\"}", "invalid-request", "not a plan id", 422 },
		{ "{\"profile\":" X460_FIX ",\"replan\":true}", "invalid-request", "only with", 422 },
		{ "{\"plan_id\":\"p-00000000000000000000000000000000\"}", "plan-not-found", "no plan", 404 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *doc = tu_post(&a, "/v1/transactions", bad[i].body, bad[i].status);
		if (bad[i].status == 422) {
			/* The reason is in the errors, at the field's path. */
			check_problem(doc, bad[i].type, "not valid");
			char *e = json_dumps(json_object_get(doc, "errors"), JSON_COMPACT);
			CHECK_MSG(e && strstr(e, bad[i].words) && (strstr(e, "plan_id") || strstr(e, "replan")),
				  "errors %s do not say '%s' of a field", e ? e : "(none)", bad[i].words);
			free(e);
		} else {
			check_problem(doc, bad[i].type, bad[i].words);
		}
		json_decref(doc);
	}
	json_decref(tu_post(&a, "/v1/transactions?steps=some", "{\"profile\":" X460_FIX "}", 400));
	CHECK_INT(history_total(&a), 0);
	CHECK_MSG(unchanged(dir), "a refused request changed the tree");

	/* Plan, then apply by id, lean: the plan's steps, nothing else. */
	json_t *p = plan(&a, id, sizeof(id));
	size_t nplanned = json_array_size(json_object_get(p, "steps"));
	CHECK_INT(nplanned, 8);
	CHECK_MSG(unchanged(dir), "planning changed the tree");
	json_t *t = apply_id(&a, "/v1/transactions?steps=failed", id, NULL, 201);
	CHECK_STR(tu_str(t, "status"), "applied");
	CHECK_INT(json_array_size(json_object_get(t, "steps")), 0);
	CHECK_INT(json_integer_value(json_object_get(t, "nsteps")), 8);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(json_object_get(t, "step_counts"), "applied"),
						     "irq_affinity")), 8);
	json_int_t t1 = json_integer_value(json_object_get(t, "id"));
	json_decref(t);
	size_t k;
	json_t *s;
	json_array_foreach(json_object_get(p, "steps"), k, s) {
		snprintf(rel, sizeof(rel), "proc/irq/%s/smp_affinity_list", tu_str(s, "target"));
		CHECK_STR(tu_read(root, rel, buf, sizeof(buf)), tu_str(s, "after"));
	}
	/* The whole transaction has every step, as planned. */
	snprintf(url, sizeof(url), "/v1/transactions/%lld", (long long)t1);
	tu_http("GET", nt_url(&a, url), NULL, NULL, &st, &t);
	CHECK_INT(json_array_size(json_object_get(t, "steps")), nplanned);
	json_array_foreach(json_object_get(t, "steps"), k, s) {
		json_t *ps = json_array_get(json_object_get(p, "steps"), k);
		CHECK_STR(tu_str(s, "target"), tu_str(ps, "target"));
		CHECK_STR(tu_str(s, "before"), tu_str(ps, "before"));
	}
	json_decref(t);
	json_decref(p);

	/* Used once: again is 410, naming the transaction, nothing applied. */
	json_t *doc = apply_id(&a, "/v1/transactions", id, NULL, 410);
	check_problem(doc, "plan-used", "applied at");
	snprintf(buf, sizeof(buf), "transaction %lld", (long long)t1);
	CHECK_MSG(strstr(tu_str(doc, "detail") ? tu_str(doc, "detail") : "", buf), "detail does not name %s", buf);
	json_decref(doc);
	CHECK_INT(history_total(&a), 1);

	/* Rolled back, leanly by Prefer: the counts, no steps. */
	char applied[256];
	snprintf(url, sizeof(url), "/v1/transactions/%lld/rollback", (long long)t1);
	t = post_prefer(nt_url(&a, url), "{}", "respond-async, return=minimal", &st, applied, sizeof(applied));
	CHECK_INT(st, 201);
	CHECK_STR(applied, "return=minimal");
	CHECK_STR(tu_str(t, "status"), "applied");
	CHECK_INT(json_array_size(json_object_get(t, "steps")), 0);
	CHECK_INT(json_integer_value(json_object_get(t, "nsteps")), 8);
	json_decref(t);
	CHECK_MSG(unchanged(dir), "the rollback did not put the tree back");

	/* A target moved since the plan: 409 naming it, nothing applied. */
	p = plan(&a, id2, sizeof(id2));
	json_decref(p);
	snprintf(rel, sizeof(rel), "proc/irq/%d/smp_affinity_list", x460_irqs[3]);
	tu_sh("cp -a '%s/%s' '%s/moved.orig'", root, rel, dir);
	tree_write(root, rel, "17\n");
	tu_sh("cp -a '%s/%s' '%s/snap/%s'", root, rel, dir, rel);
	doc = apply_id(&a, "/v1/transactions", id2, NULL, 409);
	check_problem(doc, "plan-moved", "nothing was applied");
	json_t *m = json_array_get(json_object_get(doc, "moved"), 0);
	CHECK_INT(json_array_size(json_object_get(doc, "moved")), 1);
	CHECK_INT(json_integer_value(json_object_get(doc, "moved_total")), 1);
	CHECK_INT(atoi(tu_str(m, "target") ? tu_str(m, "target") : "0"), x460_irqs[3]);
	CHECK_STR(tu_str(m, "now"), "17");
	CHECK_MSG(tu_str(m, "planned") && strcmp(tu_str(m, "planned"), "17"), "planned '%s'", tu_str(m, "planned"));
	json_decref(doc);
	CHECK_MSG(unchanged(dir), "a plan whose target moved changed the tree");
	CHECK_INT(history_total(&a), 2);
	/* ... and that id is used up too. */
	doc = apply_id(&a, "/v1/transactions", id2, NULL, 410);
	check_problem(doc, "plan-used", "nothing was applied");
	json_decref(doc);

	/* "replan": true applies a fresh plan instead, and says so. IRQ
	 * x460_irqs[3] already reads its planned CPU: 7 steps. */
	p = plan(&a, id2, sizeof(id2));
	CHECK_INT(json_array_size(json_object_get(p, "steps")), 7);
	json_decref(p);
	snprintf(rel, sizeof(rel), "proc/irq/%d/smp_affinity_list", x460_irqs[4]);
	tree_write(root, rel, "18\n");
	t = apply_id(&a, "/v1/transactions?steps=none", id2, ",\"replan\":true", 201);
	CHECK_STR(tu_str(t, "status"), "applied");
	CHECK_INT(json_integer_value(json_object_get(t, "nsteps")), 7);
	CHECK_INT(json_array_size(json_object_get(t, "steps")), 0);
	snprintf(buf, sizeof(buf), "proc/irq/%d/smp_affinity_list", x460_irqs[4]);
	CHECK_MSG(strcmp(tu_read(root, buf, applied, sizeof(applied)), "18"), "IRQ %d still reads 18",
		  x460_irqs[4]);
	char *w = json_dumps(json_object_get(t, "warnings"), JSON_COMPACT);
	CHECK_MSG(w && strstr(w, "planned again"), "warnings %s", w ? w : "");
	free(w);
	json_decref(t);

	/* The default answer is as it was: every step, no counts. */
	t = tu_post(&a, "/v1/transactions", "{\"profile\":" X460_FIX "}", 201);
	CHECK(json_is_array(json_object_get(t, "steps")));
	CHECK(json_object_get(t, "step_counts") == NULL && json_object_get(t, "nsteps") == NULL);
	json_decref(t);
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

/* The facts a plan rested on (issue 43, item 3): a CPU the plan places an
 * IRQ on taken offline after the plan (its sysfs online file and the
 * online list, as the kernel changes both), then an apply by id: 409
 * plan-moved naming the online CPUs, nothing applied, though every target
 * still reads its before-value. A NIC's queue gone likewise. A plan made
 * on the host as it is applies. */
static void test_facts_changed(void)
{
	char dir[PATH_MAX], root[PATH_MAX], id[64], rel[128], buf[256];
	nt_agent a;
	if (start_on_copy(&a, dir, sizeof(dir), root, sizeof(root), NULL) < 0)
		return;
	long long before = history_total(&a);

	json_t *p = plan(&a, id, sizeof(id));
	/* The first CPU the first step places its IRQ on. */
	nt_cpuset after, online;
	CHECK_INT(nt_cpulist_parse(tu_str(json_array_get(json_object_get(p, "steps"), 0), "after"), &after), 0);
	int cpu = nt_cpuset_next(&after, 0);
	json_decref(p);
	CHECK_MSG(cpu > 0, "the first step places its IRQ on no CPU but 0");
	CHECK_INT(nt_cpulist_parse(tu_read(root, "sys/devices/system/cpu/online", buf, sizeof(buf)), &online), 0);
	char was[256];
	snprintf(was, sizeof(was), "%s", buf);
	nt_cpuset_clear(&online, cpu);
	CHECK(nt_cpulist_format(&online, buf, sizeof(buf)) > 0);
	snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/online", cpu);
	tu_put(root, rel, "0");
	tu_put(root, "sys/devices/system/cpu/online", buf);
	tu_sh("rm -rf '%1$s/snap' && cp -a '%1$s/root' '%1$s/snap'", dir);

	json_t *doc = apply_id(&a, "/v1/transactions", id, NULL, 409);
	check_problem(doc, "plan-moved", "nothing was applied");
	char say[512];
	snprintf(say, sizeof(say), "the online CPUs were %s and are %s", was, buf);
	check_problem(doc, "plan-moved", say);
	json_t *c = json_array_get(json_object_get(doc, "changed"), 0);
	CHECK_INT(json_integer_value(json_object_get(doc, "changed_total")), 1);
	CHECK_STR(tu_str(c, "fact"), "cpus_online");
	CHECK_STR(tu_str(c, "planned"), was);
	CHECK_STR(tu_str(c, "now"), buf);
	CHECK(json_object_get(doc, "moved") == NULL);
	json_decref(doc);
	CHECK_MSG(unchanged(dir), "a plan whose CPU went offline changed the tree");
	CHECK_INT(history_total(&a), before);

	/* Planned on the host as it is now: applies. */
	json_decref(plan(&a, id, sizeof(id)));
	json_t *t = apply_id(&a, "/v1/transactions", id, NULL, 201);
	CHECK_STR(tu_str(t, "status"), "applied");
	json_int_t t1 = json_integer_value(json_object_get(t, "id"));
	json_decref(t);
	char url[96];
	snprintf(url, sizeof(url), "/v1/transactions/%lld/rollback", (long long)t1);
	json_decref(tu_post(&a, url, "{}", 201));
	CHECK_MSG(unchanged(dir), "the rollback did not put the tree back");

	/* eth0 loses its TX queue after the plan: 409 naming it. */
	json_decref(plan(&a, id, sizeof(id)));
	CHECK_INT(tu_sh("test -d '%s/sys/class/net/eth0/queues/tx-0' && mv '%s/sys/class/net/eth0/queues/tx-0' "
			"'%s/tx-0.gone'", root, root, dir), 0);
	tu_sh("rm -rf '%1$s/snap' && cp -a '%1$s/root' '%1$s/snap'", dir);
	doc = apply_id(&a, "/v1/transactions", id, NULL, 409);
	check_problem(doc, "plan-moved", "eth0 had");
	c = json_array_get(json_object_get(doc, "changed"), 0);
	CHECK_STR(tu_str(c, "fact"), "tx_queues");
	CHECK_STR(tu_str(c, "interface"), "eth0");
	json_decref(doc);
	CHECK_MSG(unchanged(dir), "a plan whose NIC lost a queue changed the tree");
	CHECK_INT(history_total(&a), before + 2);
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

/* --plan-ttl: a plan past it is 410 with the reason, nothing applied. */
static void test_expired(void)
{
	char dir[PATH_MAX], root[PATH_MAX], id[64];
	const char *ttl[] = { "--plan-ttl", "1", NULL };
	nt_agent a;
	if (start_on_copy(&a, dir, sizeof(dir), root, sizeof(root), ttl) < 0)
		return;
	json_decref(plan(&a, id, sizeof(id)));
	struct timespec ts = { 1, 300 * 1000000L };
	nanosleep(&ts, NULL);
	json_t *doc = apply_id(&a, "/v1/transactions", id, NULL, 410);
	check_problem(doc, "plan-expired", "expired at");
	json_decref(doc);
	CHECK_INT(history_total(&a), 0);
	CHECK_MSG(unchanged(dir), "an expired plan changed the tree");
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

int main(void)
{
	if (access(X460, F_OK) != 0)
		SKIP("fixture x460-4node-8nic is missing");
	if (access(NT_BIN, X_OK) != 0)
		SKIP("%s is not built", NT_BIN);
	test_plan_ids();
	test_facts_changed();
	test_expired();
	TEST_MAIN_END();
}
