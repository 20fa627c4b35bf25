/* SPDX-License-Identifier: Apache-2.0 */
/* The fault matrix of an 8-step transaction (the x460 IRQ fix), with the
 * agent's test-only fault points (NETTUNE_TEST_FAULT, engine/txn_run.c): a write
 * failing at every step position; a kill -9 before each step's write, after
 * it (not yet verified) and after the step is done (its outcome is recorded
 * only with the whole stage's, so the journal still says pending); a kill
 * inside the rollback of a failed step at every position; a kill inside
 * crash recovery at every position; and an undo that fails after changing
 * its target, whose step must say what the target reads after it. Each run
 * must end with the host byte-identical to before (every file of /proc on
 * the copy) and the transaction settled (rolled_back or recovered, never
 * left applying). */
#include "harness.h"
#include "integration/nt_agent_ext.h"
#include "integration/test_txn_util.h"

#define X460 NT_FIXTURES "/x460-4node-8nic"
#define NSTEPS 8

static char dir[PATH_MAX], root[PATH_MAX], state[PATH_MAX + 8], snap[PATH_MAX + 8];
static int runs, bad_host, bad_status;

/* Start the agent with FAULTS (NULL: none) in its environment. */
static int start(nt_agent *a, const char *faults)
{
	if (faults)
		setenv("NETTUNE_TEST_FAULT", faults, 1);
	int r = nt_agent_start(a, root, state, NULL);
	unsetenv("NETTUNE_TEST_FAULT");
	return r;
}

/* The agent killed itself at a fault point: reap it. Returns whether it
 * did die (within 10 s). */
static bool reap(nt_agent *a)
{
	for (int i = 0; i < 1000; i++) {
		int st;
		if (waitpid(a->pid, &st, WNOHANG) == a->pid) {
			a->pid = 0;
			return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
		}
		nt_agent_sleep_ms(10);
	}
	kill(a->pid, SIGKILL);
	waitpid(a->pid, NULL, 0);
	a->pid = 0;
	return false;
}

static const char *last_status(nt_agent *a, char *buf, size_t size)
{
	long st = 0;
	json_t *list = NULL;
	tu_http("GET", nt_url(a, "/v1/transactions?limit=1"), NULL, NULL, &st, &list);
	snprintf(buf, size, "%s",
		 tu_str(json_array_get(json_object_get(list, "transactions"), 0), "status"));
	json_decref(list);
	return buf;
}

/* After a run: the host as before, and the transaction settled as WANT. */
static void settle_and_check(const char *what, const char *want)
{
	nt_agent a;
	char buf[64];
	runs++;
	if (start(&a, NULL) < 0) {
		CHECK_MSG(0, "%s: agent did not restart", what);
		return;
	}
	const char *got = last_status(&a, buf, sizeof(buf));
	if (strcmp(got, want) != 0) {
		bad_status++;
		CHECK_MSG(0, "%s: the transaction is %s, wanted %s", what, got, want);
	}
	nt_agent_stop(&a);
	if (tu_sh("diff -r -x '*.nt-new' '%s' '%s/proc' >&2", snap, root) != 0) {
		bad_host++;
		CHECK_MSG(0, "%s: the host is not as it was", what);
		tu_sh("rm -rf '%1$s/proc' && cp -a '%2$s' '%1$s/proc'", root, snap);
	}
	tu_sh("rm -rf '%s'", state);
}

static void apply(nt_agent *a, long *status, json_t **doc)
{
	char body[1024];
	snprintf(body, sizeof(body), "{\"profile\":%s}", X460_FIX);
	tu_http("POST", nt_url(a, "/v1/transactions"), body, NULL, status, doc);
}

/* The write of step N fails: rolled back at once, nothing left. */
static void fail_at(int n)
{
	nt_agent a;
	char what[64], faults[64];
	snprintf(what, sizeof(what), "fail:%d", n);
	snprintf(faults, sizeof(faults), "fail:%d", n);
	if (start(&a, faults) < 0) {
		CHECK_MSG(0, "%s: agent did not start", what);
		return;
	}
	long st = 0;
	json_t *doc = NULL;
	apply(&a, &st, &doc);
	CHECK_INT(st, 201);
	CHECK_STR(tu_str(doc, "status"), "rolled_back");
	CHECK_INT(json_integer_value(json_object_get(doc, "failed_step")), n);
	json_decref(doc);
	nt_agent_stop(&a);
	settle_and_check(what, "rolled_back");
}

/* Step 1 fails and the undo of step 0 fails too, after it already changed
 * the target: IRQ 177's smp_affinity_list is written back to "0-15", then
 * the derived effective_affinity_list cannot be (a directory now stands in
 * its place, put there between the two steps). The step must report the
 * value read after that failed undo ("0-15"), not the one read before it
 * ("1", step 0's). */
static void undo_fails_after_changing(void)
{
	nt_agent a;
	char buf[64], eff[PATH_MAX + 64];
	setenv("NETTUNE_TEST_STEP_DELAY_MS", "700", 1);
	int r = start(&a, "fail:1");
	unsetenv("NETTUNE_TEST_STEP_DELAY_MS");
	if (r < 0) {
		CHECK_MSG(0, "undo: agent did not start");
		return;
	}
	char body[1024];
	snprintf(body, sizeof(body), "{\"profile\":%s}", X460_FIX);
	tu_async ap;
	tu_async_start(&ap, nt_url(&a, "/v1/transactions"), body);
	/* Step 0 is written 0.7 s in, step 1 fails 0.7 s after that. */
	bool seen = false;
	for (int i = 0; i < 1000 && !seen; i++) {
		seen = strcmp(tu_read(root, "proc/irq/177/smp_affinity_list", buf, sizeof(buf)),
			      "1") == 0;
		if (!seen)
			nt_agent_sleep_ms(5);
	}
	CHECK_MSG(seen, "step 0 was not applied");
	snprintf(eff, sizeof(eff), "%s/proc/irq/177/effective_affinity_list", root);
	tu_sh("rm -f '%1$s' && mkdir '%1$s'", eff);
	tu_async_join(&ap);
	CHECK_INT(ap.status, 201);
	CHECK_STR(tu_str(ap.json, "status"), "rollback_failed");
	json_t *s0 = json_array_get(json_object_get(ap.json, "steps"), 0);
	CHECK_STR(tu_str(s0, "result"), "rollback_failed");
	const char *err = tu_str(s0, "error");
	CHECK_MSG(strstr(err, "irq_affinity 177 is '0-15', wanted '0-15'") != NULL, "%s", err);
	CHECK_MSG(strstr(err, "is '1'") == NULL, "the value before the undo: %s", err);
	CHECK_STR(tu_read(root, "proc/irq/177/smp_affinity_list", buf, sizeof(buf)), "0-15");
	json_decref(ap.json);
	nt_agent_stop(&a);
	tu_sh("rmdir '%s'; rm -rf '%s' '%s/proc' && cp -a '%s' '%s/proc'", eff, state, root, snap,
	      root);
}

/* FAULTS kill the agent during the apply (or its rollback); the next start
 * recovers. */
static void kill_run(const char *faults)
{
	nt_agent a;
	if (start(&a, faults) < 0) {
		CHECK_MSG(0, "%s: agent did not start", faults);
		return;
	}
	long st = 0;
	json_t *doc = NULL;
	apply(&a, &st, &doc);
	json_decref(doc);
	CHECK_MSG(reap(&a), "%s: the agent did not die at the fault point", faults);
	nt_agent_stop(&a);
	settle_and_check(faults, "recovered");
}

/* All 8 steps applied, killed before the stage is recorded; then a kill
 * inside recovery at undo position N; the start after that finishes it. */
static void kill_in_recovery(int n)
{
	nt_agent a;
	char faults[64];
	snprintf(faults, sizeof(faults), "kill-in-undo:%d", n);
	if (start(&a, "kill-after-step:7") < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	long st = 0;
	json_t *doc = NULL;
	apply(&a, &st, &doc);
	json_decref(doc);
	CHECK_MSG(reap(&a), "kill-after-step:7: the agent did not die");
	/* Recovery runs before the agent listens: it dies at start. */
	setenv("NETTUNE_TEST_FAULT", faults, 1);
	char err[2048];
	const char *args[] = { "--listen", "127.0.0.1:0", "--root", root, "--state-dir", state, NULL };
	int rc = nt_serve_expect_exit(args, 20, err, sizeof(err));
	unsetenv("NETTUNE_TEST_FAULT");
	CHECK_MSG(rc == 128, "%s in recovery: serve ended with %d", faults, rc);
	char what[96];
	snprintf(what, sizeof(what), "%s during recovery", faults);
	settle_and_check(what, "recovered");
}

int main(void)
{
	char faults[96];
	if (access(X460, F_OK) != 0)
		SKIP("fixture x460-4node-8nic is missing");
	/* 94 agent starts, each behind a proxy of its own in contract mode:
	 * minutes spent on replies test_txn already puts through it. What
	 * this test checks is the host and the journal. */
	if (nt_via_prism())
		SKIP("the fault matrix checks the host and the journal, not the contract");
	if (tu_copy(X460, dir, sizeof(dir), root, sizeof(root)) < 0)
		SKIP("cannot copy the fixture");
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(snap, sizeof(snap), "%s/snap", dir);
	tu_sh("cp -a '%s/proc' '%s'", root, snap);
	curl_global_init(CURL_GLOBAL_DEFAULT);

	for (int n = 0; n < NSTEPS; n++)
		fail_at(n);
	static const char *const kills[] = { "kill-before-apply", "kill-after-apply",
					     "kill-after-step" };
	for (int k = 0; k < 3; k++)
		for (int n = 0; n < NSTEPS; n++) {
			snprintf(faults, sizeof(faults), "%s:%d", kills[k], n);
			kill_run(faults);
		}
	/* Step 7 fails; the rollback is killed while undoing step N. */
	for (int n = 0; n < NSTEPS - 1; n++) {
		snprintf(faults, sizeof(faults), "fail:%d,kill-in-undo:%d", NSTEPS - 1, n);
		kill_run(faults);
	}
	for (int n = 0; n < NSTEPS; n++)
		kill_in_recovery(n);
	undo_fails_after_changing();

	printf("fault matrix: %d runs, %d left the host changed, %d left the transaction "
	       "unsettled\n", runs, bad_host, bad_status);
	curl_global_cleanup();
	tu_sh("rm -rf '%s'", dir);
	(void)tu_read;
	TEST_MAIN_END();
}
