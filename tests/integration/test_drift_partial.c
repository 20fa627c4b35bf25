/* SPDX-License-Identifier: Apache-2.0 */
/* One target that cannot be repaired does not take the rest of the desired
 * state with it. On a copy of the virtio VM's fixture the desired profile
 * sets rmem_max and wmem_max; rmem_max is made immutable (chattr +i: the
 * test runs as root, for whom a mode of 0444 changes nothing, while an
 * immutable file refuses root's write and the rename over it with EPERM,
 * as a kernel file the kernel refuses would). Then:
 *   - wmem_max is repaired and held (changed again behind the agent's
 *     back, repaired again), never declared contested, and never blamed
 *     for rmem_max's failure;
 *   - rmem_max ends "contested" with its own error (the kernel's
 *     "Operation not permitted"), not another target's step, and is left. */
#include "harness.h"
#include "integration/nt_agent.h"
#include "integration/test_txn_util.h"

#define VM NT_FIXTURES "/vm-virtio-2cpu"
#define RMEM "proc/sys/net/core/rmem_max"
#define WMEM "proc/sys/net/core/wmem_max"
#define PROFILE                                                                             \
	"{\"name\":\"two\",\"sysctl\":{\"net.core.rmem_max\":\"16777216\","                 \
	"\"net.core.wmem_max\":\"8388608\"}}"

static const char *file(const char *root, const char *rel)
{
	static char buf[256];
	return tu_read(root, rel, buf, sizeof(buf));
}

/* The drift target sysctl TGT of GET /v1/drift (new reference), or NULL. */
static json_t *target(nt_agent *a, const char *tgt)
{
	long st = 0;
	json_t *doc = NULL, *t, *found = NULL;
	size_t i;
	nt_http("GET", nt_url(a, "/v1/drift"), NULL, &st, &doc, NULL, 0);
	json_array_foreach(json_object_get(doc, "targets"), i, t) {
		if (!strcmp(tu_str(t, "kind"), "sysctl") && !strcmp(tu_str(t, "target"), tgt))
			found = json_incref(t);
	}
	json_decref(doc);
	return found;
}

static json_t *wait_state(nt_agent *a, const char *tgt, const char *state, int ms)
{
	for (int waited = 0; waited <= ms; waited += 100) {
		json_t *t = target(a, tgt);
		if (t && !strcmp(tu_str(t, "state"), state))
			return t;
		json_decref(t);
		nt_agent_sleep_ms(100);
	}
	return NULL;
}

int main(void)
{
	char dir[PATH_MAX], root[PATH_MAX], state[PATH_MAX + 8];
	nt_agent a;
	long st = 0;

	if (tu_copy(VM, dir, sizeof(dir), root, sizeof(root)) < 0)
		SKIP("cannot copy %s", VM);
	snprintf(state, sizeof(state), "%s/state", dir);
	tu_put(root, RMEM, "1234");
	tu_put(root, WMEM, "4321");
	if (tu_sh("chattr +i '%s/%s' 2>/dev/null", root, RMEM) != 0) {
		tu_sh("rm -rf '%s'", dir);
		SKIP("chattr +i does not work here (needs root and a file system with the "
		     "immutable flag)");
	}
	const char *repair[] = { "--drift-policy", "repair", "--drift-interval", "1", NULL };
	if (nt_agent_start(&a, root, state, repair) < 0) {
		CHECK_MSG(0, "agent did not start");
		goto out;
	}
	nt_http("PUT", nt_url(&a, "/v1/desired"), PROFILE, &st, NULL, NULL, 0);
	CHECK_INT(st, 200);

	/* The writable one is repaired although the other one fails. */
	CHECK_MSG(tu_wait_file(root, WMEM, "8388608", 8000), "wmem_max not repaired: %s",
		  file(root, WMEM));
	json_t *t = wait_state(&a, "net.core.rmem_max", "contested", 15000);
	CHECK_MSG(t, "rmem_max (immutable) never contested");
	const char *why = t ? tu_str(t, "culprit") : "(none)";
	CHECK_MSG(strstr(why, "the repair itself fails") && strstr(why, "not permitted") &&
			  !strstr(why, "wmem_max"),
		  "rmem_max culprit: %s", why);
	json_decref(t);
	CHECK_STR(file(root, RMEM), "1234");

	/* And held: changed again, repaired again (its second repair: the
	 * failed transactions rmem_max rolled back were not counted as its
	 * attempts, or it would be contested by now). */
	tu_put(root, WMEM, "4321");
	CHECK_MSG(tu_wait_file(root, WMEM, "8388608", 8000), "wmem_max not held");
	t = target(&a, "net.core.wmem_max");
	CHECK_MSG(!t || strcmp(tu_str(t, "state"), "contested") != 0,
		  "wmem_max declared contested: %s", t ? tu_str(t, "culprit") : "");
	json_decref(t);
	nt_http("DELETE", nt_url(&a, "/v1/desired"), NULL, &st, NULL, NULL, 0);
	CHECK_INT(st, 204);
	nt_agent_stop(&a);
out:
	tu_sh("chattr -i '%s/%s' 2>/dev/null", root, RMEM);
	tu_sh("rm -rf '%s'", dir);
	TEST_MAIN_END();
}
