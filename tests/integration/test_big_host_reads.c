/* SPDX-License-Identifier: Apache-2.0 */
/* The agent on the 256-CPU host tree (tests/fixtures/gen/mkhost.py big):
 * - it holds the IRQ files open between reads (nettune_held_files: both
 *   files of every IRQ), and an agent holding none (--held-files 0) serves
 *   the same NICs and IRQs;
 * - an affinity changed under both agents is seen by both on their next
 *   read, as is an IRQ's file replaced by a new one;
 * - readers at once get whole, identical documents (one shared read);
 * - after a burst of reads its memory goes back to near where it started
 *   once it is idle (the megabytes of a read are kept for the next one
 *   while requests come, and given back within half a second after).
 * Speed is the benchmark's business (bench/run.py), not this test's. */
#include "harness.h"
#include "integration/nt_agent.h"
#include "integration/test_txn_util.h"

#include <jansson.h>
#include <pthread.h>

static long rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static long held_files(nt_agent *a)
{
	nt_http_result res = { 0 };
	long n = -1;
	if (nt_http_do("GET", nt_url(a, "/metrics"), NULL, 0, NULL, &res) == 0 && res.status == 200 &&
	    res.body) {
		const char *p = strstr(res.body, "\nnettune_held_files ");
		if (p)
			n = atol(p + strlen("\nnettune_held_files "));
	}
	nt_http_result_free(&res);
	return n;
}

static json_t *get_nics(nt_agent *a)
{
	long st = 0;
	json_t *doc = NULL;
	CHECK_INT(nt_http("GET", nt_url(a, "/v1/topology"), NULL, &st, &doc, NULL, 0), 0);
	CHECK_INT(st, 200);
	json_t *nics = json_incref(json_object_get(doc, "nics"));
	json_decref(doc);
	return nics;
}

/* IRQ's affinity as agent A's topology reports it, or NULL (a static
 * buffer). */
static const char *affinity_of(nt_agent *a, int irq)
{
	static char out[256];
	json_t *nics = get_nics(a), *nic, *q;
	size_t i, k;
	out[0] = '\0';
	json_array_foreach(nics, i, nic) {
		json_array_foreach(json_object_get(nic, "irqs"), k, q) {
			const char *s = json_string_value(json_object_get(q, "affinity"));
			if (json_integer_value(json_object_get(q, "irq")) == irq && s)
				snprintf(out, sizeof(out), "%s", s);
		}
	}
	json_decref(nics);
	return out[0] ? out : NULL;
}

/* Readers at once: requests arriving together share one read and are
 * answered with that read's one document (api/read_share.c), sent to
 * each without a copy. Every body must arrive whole and the same. */
#define READERS 8
#define READS 4
typedef struct {
	nt_agent *a;
	char url[512]; /* nt_url's buffer is the agent's, one for every caller */
	pthread_t th;
	char *bodies[READS];
	size_t lens[READS];
	int bad;
} reader;

static void *reader_main(void *arg)
{
	reader *r = arg;
	for (int i = 0; i < READS; i++) {
		nt_http_result res = { 0 };
		if (nt_http_do("GET", r->url, NULL, 0, NULL, &res) != 0 ||
		    res.status != 200 || !res.json || !json_is_array(json_object_get(res.json, "nics")))
			r->bad++;
		r->bodies[i] = res.body;
		r->lens[i] = res.body_len;
		res.body = NULL;
		nt_http_result_free(&res);
	}
	return NULL;
}

static void check_shared_bodies(nt_agent *a)
{
	reader rs[READERS];
	memset(rs, 0, sizeof(rs));
	for (int k = 0; k < READERS; k++) {
		rs[k].a = a;
		snprintf(rs[k].url, sizeof(rs[k].url), "%s", nt_url(a, "/v1/topology"));
		if (pthread_create(&rs[k].th, NULL, reader_main, &rs[k]) != 0)
			rs[k].a = NULL;
	}
	int bad = 0, differ = 0, readers = 0;
	for (int k = 0; k < READERS; k++) {
		if (!rs[k].a)
			continue;
		pthread_join(rs[k].th, NULL);
		readers++;
		bad += rs[k].bad;
		for (int i = 0; i < READS; i++) {
			/* The tree does not change: every read gives the same bytes. */
			if (!rs[k].bodies[i] || rs[k].lens[i] != rs[0].lens[0] ||
			    memcmp(rs[k].bodies[i], rs[0].bodies[0], rs[k].lens[i]) != 0)
				differ++;
		}
	}
	for (int k = 0; k < READERS; k++)
		for (int i = 0; i < READS; i++)
			free(rs[k].bodies[i]);
	CHECK_INT(readers, READERS);
	CHECK_MSG(bad == 0, "%d of %d concurrent reads failed or were not the topology", bad,
		  READERS * READS);
	CHECK_MSG(differ == 0, "%d of %d concurrent reads differ from the first", differ, READERS * READS);
}

int main(void)
{
	char dir[] = "/tmp/nt-bigreads-XXXXXX", root[PATH_MAX + 8];
	nt_agent held, none;
	const char *no_held[] = { "--held-files", "0", NULL };

	if (!mkdtemp(dir))
		SKIP("no temporary directory");
	snprintf(root, sizeof(root), "%s/root", dir);
	if (tu_sh("python3 '%s/gen/mkhost.py' big '%s' >/dev/null", NT_FIXTURES, root) != 0) {
		CHECK_MSG(0, "mkhost.py big failed");
		tu_sh("rm -rf '%s'", dir);
		TEST_MAIN_END();
	}
	int nirq = tu_sh("test $(ls -d '%s'/proc/irq/[0-9]* | wc -l) -gt 1000", root) == 0;
	CHECK_MSG(nirq, "the big tree has over a thousand IRQ directories");
	if (nt_agent_start(&held, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		tu_sh("rm -rf '%s'", dir);
		TEST_MAIN_END();
	}
	if (nt_agent_start(&none, root, NULL, no_held) < 0) {
		CHECK_MSG(0, "agent --held-files 0 did not start");
		nt_agent_stop(&held);
		tu_sh("rm -rf '%s'", dir);
		TEST_MAIN_END();
	}

	long rss0 = rss_kb(held.pid);
	json_t *a = get_nics(&held), *b = get_nics(&none);
	CHECK_MSG(a && b && json_equal(a, b), "the two agents report different NICs or IRQs");
	json_decref(a);
	json_decref(b);
	/* Both files of every IRQ of the tree (affinity and effective). */
	long n = held_files(&held);
	CHECK_MSG(n > 2000, "nettune_held_files = %ld, expected both files of every IRQ", n);
	CHECK_INT(held_files(&none), 0);

	/* Changed in place, and replaced by a new file: both agents see it. */
	tu_sh("printf '7\\n' > '%s/proc/irq/1001/smp_affinity_list'", root);
	tu_sh("printf '9-10\\n' > '%s/proc/irq/1002/n' && mv '%s/proc/irq/1002/n' "
	      "'%s/proc/irq/1002/smp_affinity_list'", root, root, root);
	CHECK_STR(affinity_of(&held, 1001), "7");
	CHECK_STR(affinity_of(&none, 1001), "7");
	CHECK_STR(affinity_of(&held, 1002), "9-10");
	CHECK_STR(affinity_of(&none, 1002), "9-10");
	a = get_nics(&held);
	b = get_nics(&none);
	CHECK_MSG(a && b && json_equal(a, b), "after the changes the two agents differ");
	json_decref(a);
	json_decref(b);
	CHECK_INT(held_files(&held), n);
	check_shared_bodies(&held);

	/* A burst of reads, then idle: memory goes back. Sanitizer builds
	 * have allocators of their own, which malloc settings do not reach. */
	for (int i = 0; i < 15; i++)
		json_decref(get_nics(&held));
	long busy = rss_kb(held.pid), idle = busy;
	for (int i = 0; i < 30 && idle > rss0 + 4096; i++) {
		nt_agent_sleep_ms(100);
		idle = rss_kb(held.pid);
	}
	printf("agent RSS: %ld kB at start, %ld kB after the reads, %ld kB idle\n", rss0, busy, idle);
	if (getenv("ASAN_OPTIONS") || getenv("TSAN_OPTIONS"))
		printf("note: a sanitizer build: its allocator keeps memory, idle RSS not checked\n");
	else
		CHECK_MSG(idle > 0 && idle <= rss0 + 4096,
			  "idle RSS %ld kB is more than 4 MB above the %ld kB at start", idle, rss0);

	nt_agent_stop(&none);
	nt_agent_stop(&held);
	tu_sh("rm -rf '%s'", dir);
	TEST_MAIN_END();
}
