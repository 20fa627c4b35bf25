/* SPDX-License-Identifier: Apache-2.0 */
/* Planning a profile given as text, for the tests of the kinds of setting. */
#ifndef NT_TEST_PLAN_UTIL_H
#define NT_TEST_PLAN_UTIL_H

#include "engine/plan.h"

#include <errno.h>
#include <jansson.h>

/* Plan the profile TEXT on T (through CTX) into PLAN; *ERRORS is a new
 * array of the plan's errors (the caller's). Returns what nt_plan_build
 * returns, or -EINVAL when TEXT is not JSON. */
static inline int nt_t_plan(const nt_ctx *ctx, const nt_topology *t, const char *text, nt_plan *plan,
			    json_t **errors)
{
	json_t *p = json_loads(text, 0, NULL);
	*errors = json_array();
	int r = p ? nt_plan_build(ctx, NULL, t, p, plan, *errors) : -EINVAL;
	json_decref(p);
	return r;
}

#endif
