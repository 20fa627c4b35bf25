/* SPDX-License-Identifier: Apache-2.0 */
/* The running agent settles a record it could not write, as soon as the
 * store accepts writes again, without a restart:
 *   - a full disk (a 2 MB tmpfs as the state directory, filled while a
 *     transaction runs): the outcome cannot be recorded, the host is put
 *     back, health says "degraded" with the transaction in "unsettled" while
 *     the row still says "applying"; once the space is freed the row becomes
 *     "rolled_back" within seconds, its error naming the full disk (not
 *     SQLite's "cannot rollback - no transaction is active"), and health is
 *     "ok" again;
 *   - crash recovery blocked by a locked database (another connection holds
 *     BEGIN EXCLUSIVE past the agent's 5 s busy timeout while it starts after
 *     a kill): the host is restored, health is "degraded", and once the lock
 *     goes the row becomes "recovered".
 * Needs root (mount). */
#include "harness.h"
#include "integration/nt_agent_ext.h"
#include "integration/test_txn_util.h"

#include <sqlite3.h>
#include <stdatomic.h>

#define VM NT_FIXTURES "/vm-virtio-2cpu"
#define PROFILE                                                                      \
	"{\"name\":\"s\",\"sysctl\":{\"net.core.rmem_max\":\"5242880\","               \
	"\"net.core.wmem_max\":\"5242880\"}}"

static json_t *get(nt_agent *a, const char *path, long *st)
{
	json_t *doc = NULL;
	tu_http("GET", nt_url_direct(a, path), NULL, NULL, st, &doc);
	return doc;
}

/* Wait up to MS for transaction 1's status to be WANT; its document. */
static json_t *wait_txn(nt_agent *a, const char *want, int ms)
{
	json_t *doc = NULL;
	for (int waited = 0; waited <= ms; waited += 100) {
		long st = 0;
		json_decref(doc);
		doc = get(a, "/v1/transactions/1", &st);
		if (st == 200 && !strcmp(tu_str(doc, "status"), want))
			return doc;
		nt_agent_sleep_ms(100);
	}
	return doc;
}

/* Health is degraded naming transaction 1 as unsettled. */
static void check_degraded(nt_agent *a, const char *what, const char *reason)
{
	long st = 0;
	json_t *h = get(a, "/v1/health", &st);
	CHECK_MSG(st == 200 && !strcmp(tu_str(h, "status"), "degraded"),
		  "%s: health %ld %s", what, st, tu_str(h, "status"));
	json_t *u = json_array_get(json_object_get(h, "unsettled"), 0);
	CHECK_MSG(u && json_integer_value(json_object_get(u, "transaction")) == 1,
		  "%s: transaction 1 not listed as unsettled", what);
	CHECK_MSG(u && strstr(tu_str(u, "store_error"), reason), "%s: store_error '%s'", what,
		  u ? tu_str(u, "store_error") : "");
	json_decref(h);
}

static void check_ok(nt_agent *a, const char *what)
{
	long st = 0;
	json_t *h = get(a, "/v1/health", &st);
	CHECK_MSG(st == 200 && !strcmp(tu_str(h, "status"), "ok") &&
			  !json_object_get(h, "unsettled"),
		  "%s: health %ld %s after settling", what, st, tu_str(h, "status"));
	json_decref(h);
}

static void full_disk(void)
{
	char dir[PATH_MAX], root[PATH_MAX], mnt[PATH_MAX + 8], snap[PATH_MAX + 8], body[512];
	nt_agent a;
	if (tu_copy(VM, dir, sizeof(dir), root, sizeof(root)) < 0) {
		CHECK_MSG(0, "cannot copy the fixture");
		return;
	}
	snprintf(mnt, sizeof(mnt), "%s/state", dir);
	snprintf(snap, sizeof(snap), "%s/snap", dir);
	tu_sh("cp -a '%s/proc' '%s'", root, snap);
	if (tu_sh("mkdir -p '%1$s' && mount -t tmpfs -o size=2m tmpfs '%1$s'", mnt) != 0) {
		CHECK_MSG(0, "cannot mount a tmpfs");
		tu_sh("rm -rf '%s'", dir);
		return;
	}
	setenv("NETTUNE_TEST_STEP_DELAY_MS", "700", 1);
	int started = nt_agent_start(&a, root, mnt, NULL);
	unsetenv("NETTUNE_TEST_STEP_DELAY_MS");
	if (started < 0) {
		CHECK_MSG(0, "agent did not start");
		goto out;
	}
	snprintf(body, sizeof(body), "{\"profile\":%s}", PROFILE);
	tu_async ap;
	tu_async_start(&ap, nt_url_direct(&a, "/v1/transactions"), body);
	nt_agent_sleep_ms(1000); /* the first step is applied */
	tu_sh("dd if=/dev/zero of='%s/fill' bs=64k >/dev/null 2>&1; sync", mnt);
	tu_async_join(&ap);
	CHECK_INT(ap.status, 201);
	CHECK_MSG(strstr(tu_str(ap.json, "error"), "could not record") != NULL, "error %s",
		  tu_str(ap.json, "error"));
	json_decref(ap.json);
	CHECK_MSG(tu_sh("diff -r '%s' '%s/proc' >&2", snap, root) == 0, "the host was not restored");

	long st = 0;
	json_t *doc = get(&a, "/v1/transactions/1", &st);
	CHECK_MSG(st == 200 && !strcmp(tu_str(doc, "status"), "applying"),
		  "disk full: the row reads %ld %s", st, tu_str(doc, "status"));
	json_decref(doc);
	check_degraded(&a, "disk full", "full");

	/* Room again: settled by the running agent. */
	tu_sh("rm -f '%s/fill'", mnt);
	doc = wait_txn(&a, "rolled_back", 6000);
	const char *now = tu_str(doc, "status"), *err = tu_str(doc, "error");
	CHECK_MSG(!strcmp(now, "rolled_back"), "disk full: still %s after the space came back", now);
	CHECK_MSG(strstr(err, "full") && !strstr(err, "cannot rollback"), "disk full: error %s", err);
	/* The steps' outcomes are recorded with it: the first was applied and
	 * put back. */
	CHECK_STR(tu_str(json_array_get(json_object_get(doc, "steps"), 0), "result"), "rolled_back");
	json_decref(doc);
	check_ok(&a, "disk full");
	nt_agent_stop(&a);
out:
	tu_sh("umount '%s'; rm -rf '%s'", mnt, dir);
}

/* A lock held by another connection until RELEASE is set. */
struct locker {
	pthread_t th;
	char db[PATH_MAX + 32];
	int rc;
	atomic_bool held, release;
};

static void *locker_main(void *arg)
{
	struct locker *l = arg;
	sqlite3 *h = NULL;
	l->rc = sqlite3_open(l->db, &h);
	if (l->rc == SQLITE_OK) {
		sqlite3_busy_timeout(h, 5000);
		l->rc = sqlite3_exec(h, "BEGIN EXCLUSIVE", NULL, NULL, NULL);
	}
	atomic_store(&l->held, true);
	while (!atomic_load(&l->release))
		nt_agent_sleep_ms(20);
	sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(h);
	return NULL;
}

static void locked_recovery(void)
{
	char dir[PATH_MAX], root[PATH_MAX], state[PATH_MAX + 8], snap[PATH_MAX + 8], body[512];
	nt_agent a;
	if (tu_copy(VM, dir, sizeof(dir), root, sizeof(root)) < 0) {
		CHECK_MSG(0, "cannot copy the fixture");
		return;
	}
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(snap, sizeof(snap), "%s/snap", dir);
	tu_sh("cp -a '%s/proc' '%s' && mkdir -p '%s'", root, snap, state);
	setenv("NETTUNE_TEST_FAULT", "kill-after-step:1", 1);
	int started = nt_agent_start(&a, root, state, NULL);
	unsetenv("NETTUNE_TEST_FAULT");
	if (started < 0) {
		CHECK_MSG(0, "agent did not start");
		goto out;
	}
	long st = 0;
	json_t *doc = NULL;
	snprintf(body, sizeof(body), "{\"profile\":%s}", PROFILE);
	tu_http("POST", nt_url_direct(&a, "/v1/transactions"), body, NULL, &st, &doc);
	json_decref(doc);
	for (int i = 0; i < 1000 && waitpid(a.pid, NULL, WNOHANG) != a.pid; i++)
		nt_agent_sleep_ms(10);
	a.pid = 0;
	nt_agent_stop(&a);

	struct locker lk = { 0 };
	snprintf(lk.db, sizeof(lk.db), "%s/nettune.db", state);
	pthread_create(&lk.th, NULL, locker_main, &lk);
	while (!atomic_load(&lk.held))
		nt_agent_sleep_ms(5);
	CHECK_INT(lk.rc, SQLITE_OK);
	started = nt_agent_start(&a, root, state, NULL);
	if (started < 0) {
		CHECK_MSG(0, "the agent did not start on a locked store");
		atomic_store(&lk.release, true);
		pthread_join(lk.th, NULL);
		goto out;
	}
	CHECK_MSG(tu_sh("diff -r '%s' '%s/proc' >&2", snap, root) == 0,
		  "recovery did not put the host back");
	doc = get(&a, "/v1/transactions/1", &st);
	CHECK_MSG(st == 200 && strcmp(tu_str(doc, "status"), "recovered") != 0,
		  "locked: recorded already (%s): the lock did not block it", tu_str(doc, "status"));
	json_decref(doc);
	check_degraded(&a, "locked recovery", "locked");
	atomic_store(&lk.release, true);
	pthread_join(lk.th, NULL);
	doc = wait_txn(&a, "recovered", 6000);
	CHECK_MSG(!strcmp(tu_str(doc, "status"), "recovered"),
		  "locked: still %s after the lock went", tu_str(doc, "status"));
	CHECK_MSG(strstr(tu_str(doc, "error"), "locked") &&
			  !strstr(tu_str(doc, "error"), "cannot rollback"),
		  "locked: error %s", tu_str(doc, "error"));
	json_decref(doc);
	check_ok(&a, "locked recovery");
	nt_agent_stop(&a);
out:
	tu_sh("rm -rf '%s'", dir);
}

int main(void)
{
	if (access(VM, F_OK) != 0)
		SKIP("fixture vm-virtio-2cpu is missing");
	if (geteuid() != 0)
		SKIP("needs root to mount a small tmpfs");
	if (nt_via_prism())
		SKIP("checks the journal and the host, not the contract");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	full_disk();
	locked_recovery();
	curl_global_cleanup();
	TEST_MAIN_END();
}
