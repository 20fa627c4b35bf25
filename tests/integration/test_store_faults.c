/* SPDX-License-Identifier: Apache-2.0 */
/* The state database failing under a transaction, for real: made
 * read-only (chattr +i on nettune.db and its WAL: every write fails with an
 * I/O error, reads still work) or locked by another process (a sqlite3
 * connection of this test holding BEGIN EXCLUSIVE for longer than the
 * agent's 5 s busy timeout, then letting go), at each stage of a 2-step
 * transaction: before it is recorded; after its journal, before the first
 * write; between the steps; after the last step, before the outcome is
 * recorded; during its rollback; while it is confirmed; and during crash
 * recovery at the next start. The agent's test-only pause points
 * (NETTUNE_TEST_FAULT, engine/txn.c) hold it at a stage while the fault is
 * put in place. While a confirmation waits for the lock, another apply is
 * answered 409 at once, naming it. Every case must end with the host byte-identical to before
 * (every change put back: no reply claims "applied" over an outcome the
 * store did not keep), the reply saying what happened, and the next start
 * without the fault settling the record. Needs root (chattr). */
#include "harness.h"
#include "integration/nt_agent_ext.h"
#include "integration/test_txn_util.h"

#include <sqlite3.h>
#include <stdatomic.h>

#define VM NT_FIXTURES "/vm-virtio-2cpu"
#define PROFILE                                                                      \
	"{\"name\":\"s\",\"sysctl\":{\"net.core.rmem_max\":\"5242880\","               \
	"\"net.core.wmem_max\":\"5242880\"}}"
#define STEP_MS "700"

static char dir[PATH_MAX], root[PATH_MAX], state[PATH_MAX + 8], snap[PATH_MAX + 8];
static char db[PATH_MAX + 32];

enum fault { RO, LOCK };
static const char *const fault_name[] = { "read-only", "locked" };

/* A lock held by another connection for HOLD_MS. */
struct locker {
	pthread_t th;
	int rc; /* of BEGIN EXCLUSIVE */
	bool started;
	atomic_bool held; /* BEGIN EXCLUSIVE has returned */
};

static void *locker_main(void *arg)
{
	struct locker *l = arg;
	sqlite3 *h = NULL;
	if (sqlite3_open(db, &h) != SQLITE_OK) {
		l->rc = -1;
		sqlite3_close(h);
		atomic_store(&l->held, true);
		return NULL;
	}
	sqlite3_busy_timeout(h, 5000);
	l->rc = sqlite3_exec(h, "BEGIN EXCLUSIVE", NULL, NULL, NULL);
	atomic_store(&l->held, true);
	/* Past the agent's busy timeout, so the write waiting for it fails;
	 * the writes after it find the database free again. */
	nt_agent_sleep_ms(6500);
	sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(h);
	return NULL;
}

static struct locker lk;

static void fault_on(enum fault f)
{
	if (f == RO) {
		/* Not the -shm file: it is mapped, and an immutable mapping
		 * faults (SIGBUS) instead of failing a write. */
		CHECK_INT(tu_sh("chattr +i '%1$s' '%1$s-wal'", db), 0);
	} else {
		memset(&lk, 0, sizeof(lk));
		pthread_create(&lk.th, NULL, locker_main, &lk);
		lk.started = true;
		/* Waiting for the lock itself, not a time: a loaded machine may
		 * take longer to start the thread. */
		while (!atomic_load(&lk.held))
			nt_agent_sleep_ms(5);
	}
}

static void fault_off(enum fault f)
{
	if (f == RO) {
		tu_sh("chattr -i '%1$s' '%1$s-wal' 2>/dev/null", db);
	} else if (lk.started) {
		pthread_join(lk.th, NULL);
		lk.started = false;
		CHECK_INT(lk.rc, SQLITE_OK);
	}
}

static int start(nt_agent *a, const char *faults)
{
	setenv("NETTUNE_TEST_STEP_DELAY_MS", STEP_MS, 1);
	if (faults)
		setenv("NETTUNE_TEST_FAULT", faults, 1);
	int r = nt_agent_start(a, root, state, NULL);
	unsetenv("NETTUNE_TEST_FAULT");
	unsetenv("NETTUNE_TEST_STEP_DELAY_MS");
	return r;
}

static json_t *txn1(nt_agent *a)
{
	long st = 0;
	json_t *doc = NULL;
	tu_http("GET", nt_url_direct(a, "/v1/transactions/1"), NULL, NULL, &st, &doc);
	if (st != 200) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

/* Transaction 1's status as the database holds it, read by a connection
 * of this test ("" when there is none): not through the agent, whose
 * worker may be the one busy applying. */
static void db_status(char *buf, size_t size)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	buf[0] = '\0';
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(h, "SELECT status FROM transactions WHERE id = 1", -1, &st,
			       NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		snprintf(buf, size, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(h);
}

/* Wait (up to 10 s) until transaction 1 is recorded with STATUS, or (FILE
 * given) the host's FILE reads VALUE. */
static bool wait_value(const char *status, const char *file, const char *value)
{
	char buf[64];
	for (int i = 0; i < 1000; i++) {
		if (file)
			tu_read(root, file, buf, sizeof(buf));
		else
			db_status(buf, sizeof(buf));
		if (strcmp(buf, file ? value : status) == 0)
			return true;
		nt_agent_sleep_ms(10);
	}
	return false;
}

/* The same, FILE reading the profile's value. */
static bool wait_for(const char *status, const char *file)
{
	return wait_value(status, file, "5242880");
}

/* The next start, without the fault, settles transaction 1 (if any) as
 * one of WANT ("a|b"), and the host is as before. */
static void settle(const char *what, const char *want)
{
	nt_agent a;
	if (start(&a, NULL) < 0) {
		CHECK_MSG(0, "%s: the agent did not start again", what);
		return;
	}
	json_t *d = txn1(&a);
	if (!want) {
		CHECK_MSG(d == NULL, "%s: a transaction was recorded", what);
	} else {
		const char *st = d ? tu_str(d, "status") : "(none)";
		char pat[64];
		snprintf(pat, sizeof(pat), "|%s|", st);
		char wants[96];
		snprintf(wants, sizeof(wants), "|%s|", want);
		CHECK_MSG(strstr(wants, pat) != NULL, "%s: settled as %s, wanted %s", what, st, want);
	}
	json_decref(d);
	nt_agent_stop(&a);
	CHECK_MSG(tu_sh("diff -r '%s' '%s/proc' >&2", snap, root) == 0,
		  "%s: the host is not as it was", what);
	tu_sh("rm -rf '%1$s' && mkdir -p '%1$s' && rm -rf '%2$s/proc' && cp -a '%3$s' '%2$s/proc'",
	      state, root, snap);
}

/* The reply to an apply the store failed under: not a success, and it
 * says the store is why. */
static void check_reply(const char *what, long st, json_t *doc)
{
	const char *status = tu_str(doc, "status");
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	CHECK_MSG(st == 201 && (strcmp(status, "rolled_back") == 0 ||
				strcmp(status, "rollback_failed") == 0),
		  "%s: %ld %s", what, st, text ? text : "");
	CHECK_MSG(text && strstr(text, "record"), "%s: the reply does not say: %s", what,
		  text ? text : "");
	free(text);
}

static void apply(nt_agent *a, long *st, json_t **doc, const char *extra)
{
	char body[512];
	snprintf(body, sizeof(body), "{\"profile\":" PROFILE "%s}", extra ? extra : "");
	tu_http("POST", nt_url_direct(a, "/v1/transactions"), body, NULL, st, doc);
}

/* Stages of the apply itself: the fault is put in place when STAGE is
 * reached (the agent paused there by FAULTS), the apply's reply checked. */
enum stage { BEFORE_CREATE, AFTER_JOURNAL, BETWEEN_STEPS, BEFORE_STATUS, IN_ROLLBACK };
static const char *const stage_name[] = { "before the record", "after the journal",
					  "between the steps", "before the outcome",
					  "during the rollback" };

struct bg_apply {
	pthread_t th;
	nt_agent *a;
	long st;
	json_t *doc;
};

static void *bg_main(void *arg)
{
	struct bg_apply *b = arg;
	apply(b->a, &b->st, &b->doc, NULL);
	return NULL;
}

static void apply_stage(enum fault f, enum stage s)
{
	char what[128];
	snprintf(what, sizeof(what), "%s %s", fault_name[f], stage_name[s]);
	nt_agent a;
	const char *faults = s == BEFORE_STATUS ? "pause-before-status:0" :
			     s == IN_ROLLBACK	    ? "fail:1,pause-in-undo:0" :
						      NULL;
	if (start(&a, faults) < 0) {
		CHECK_MSG(0, "%s: agent did not start", what);
		return;
	}
	if (s == BEFORE_CREATE) {
		fault_on(f);
		long st = 0;
		json_t *doc = NULL;
		apply(&a, &st, &doc, NULL);
		CHECK_MSG(st == 503, "%s: %ld", what, st);
		CHECK_MSG(strstr(tu_str(doc, "detail"), "nothing was applied") != NULL, "%s: %s",
			  what, tu_str(doc, "detail"));
		json_decref(doc);
		fault_off(f);
		nt_agent_stop(&a);
		settle(what, NULL);
		return;
	}
	struct bg_apply b = { .a = &a };
	pthread_create(&b.th, NULL, bg_main, &b);
	bool reached = s == AFTER_JOURNAL ? wait_for("applying", NULL) :
		       s == BETWEEN_STEPS ? wait_for(NULL, "proc/sys/net/core/rmem_max") :
		       s == BEFORE_STATUS ? wait_for(NULL, "proc/sys/net/core/wmem_max") :
					    wait_for("rolling_back", NULL);
	CHECK_MSG(reached, "%s: the stage was not reached", what);
	fault_on(f);
	pthread_join(b.th, NULL);
	fault_off(f);
	check_reply(what, b.st, b.doc);
	json_decref(b.doc);
	nt_agent_stop(&a);
	settle(what, "rolled_back|recovered");
}

/* A transaction waiting for confirmation; the confirmation cannot be
 * recorded (503, it stays pending); the agent reverts it at its deadline,
 * and the next start settles the record as reverted. */
static void confirm_stage(enum fault f)
{
	char what[128];
	snprintf(what, sizeof(what), "%s during confirm", fault_name[f]);
	nt_agent a;
	if (start(&a, NULL) < 0) {
		CHECK_MSG(0, "%s: agent did not start", what);
		return;
	}
	long st = 0;
	json_t *doc = NULL;
	apply(&a, &st, &doc, ",\"confirm_timeout_s\":3");
	CHECK_STR(tu_str(doc, "status"), "pending_confirm");
	json_decref(doc);
	doc = NULL;
	fault_on(f);
	tu_async c;
	tu_async_start(&c, nt_url_direct(&a, "/v1/transactions/1/confirm"), "{}");
	if (f == LOCK) {
		/* While the confirmation waits for the lock, another caller is
		 * told at once that a confirmation holds the engine, rather
		 * than waiting with it. */
		const char *op = "";
		for (int i = 0; i < 400 && strcmp(op, "confirm") != 0; i++) {
			json_decref(doc);
			doc = NULL;
			apply(&a, &st, &doc, NULL);
			op = tu_str(json_object_get(doc, "in_flight_detail"), "operation");
			if (strcmp(op, "confirm") != 0)
				nt_agent_sleep_ms(10);
		}
		CHECK_MSG(st == 409 && !strcmp(op, "confirm"),
			  "%s: an apply meanwhile answered %ld, in_flight_detail.operation %s", what, st, op);
		CHECK_MSG(c.status == 0, "%s: the confirmation answered before the apply could "
			  "see it holding the engine", what);
		json_decref(doc);
		doc = NULL;
	}
	tu_async_join(&c);
	CHECK_MSG(c.status == 503, "%s: confirm answered %ld", what, c.status);
	json_decref(c.json);
	fault_off(f);
	/* Past the deadline the agent puts it back; waited for, not slept
	 * through, as load can stretch the deadline's timer. */
	char now[64], was[64];
	tu_read(snap, "sys/net/core/rmem_max", was, sizeof(was));
	CHECK_MSG(wait_value(NULL, "proc/sys/net/core/rmem_max", was),
		  "%s: rmem_max not put back after the deadline (%s, want %s)", what,
		  tu_read(root, "proc/sys/net/core/rmem_max", now, sizeof(now)), was);
	nt_agent_stop(&a);
	settle(what, "reverted");
}

/* Killed after both steps were recorded; the store fails while the next
 * start recovers: the host is put back all the same, and the start after
 * that settles the record. */
static void recovery_stage(enum fault f)
{
	char what[128];
	snprintf(what, sizeof(what), "%s during recovery", fault_name[f]);
	nt_agent a;
	if (start(&a, "kill-after-step:1") < 0) {
		CHECK_MSG(0, "%s: agent did not start", what);
		return;
	}
	long st = 0;
	json_t *doc = NULL;
	apply(&a, &st, &doc, NULL);
	json_decref(doc);
	for (int i = 0; i < 1000 && waitpid(a.pid, NULL, WNOHANG) != a.pid; i++)
		nt_agent_sleep_ms(10);
	a.pid = 0;
	nt_agent_stop(&a);
	fault_on(f);
	if (start(&a, NULL) < 0) {
		CHECK_MSG(0, "%s: the agent did not start on a failing store", what);
	} else {
		CHECK_MSG(tu_sh("diff -r '%s' '%s/proc' >&2", snap, root) == 0,
			  "%s: recovery did not put the host back", what);
		nt_agent_stop(&a);
	}
	fault_off(f);
	settle(what, "recovered");
}

int main(void)
{
	if (access(VM, F_OK) != 0)
		SKIP("fixture vm-virtio-2cpu is missing");
	if (geteuid() != 0)
		SKIP("chattr +i needs root");
	if (nt_via_prism())
		SKIP("checks the host and the journal, not the contract");
	if (tu_copy(VM, dir, sizeof(dir), root, sizeof(root)) < 0)
		SKIP("cannot copy the fixture");
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(snap, sizeof(snap), "%s/snap", dir);
	snprintf(db, sizeof(db), "%s/nettune.db", state);
	tu_sh("cp -a '%s/proc' '%s' && mkdir -p '%s'", root, snap, state);
	/* chattr needs a file system that keeps the flag (tmpfs may not). */
	if (tu_sh("touch '%1$s/probe' && chattr +i '%1$s/probe' 2>/dev/null && "
		  "chattr -i '%1$s/probe' && rm -f '%1$s/probe'", state) != 0) {
		tu_sh("rm -rf '%s'", dir);
		SKIP("chattr +i does not work under %s", dir);
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	for (int f = RO; f <= LOCK; f++) {
		for (int s = BEFORE_CREATE; s <= IN_ROLLBACK; s++)
			apply_stage((enum fault)f, (enum stage)s);
		confirm_stage((enum fault)f);
		recovery_stage((enum fault)f);
	}
	curl_global_cleanup();
	tu_sh("chattr -R -i '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
	TEST_MAIN_END();
}
