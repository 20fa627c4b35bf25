/* SPDX-License-Identifier: Apache-2.0 */
/* Plans of a profile given as JSON text, for the tests of the kinds. */
#ifndef NT_TEST_PLAN_UTIL_H
#define NT_TEST_PLAN_UTIL_H

#include "engine/plan.h"
#include "harness.h"

#include <jansson.h>

/* Build the plan of profile TEXT on T (without an ethtool handle). *ERRORS
 * gets a new array (the caller's) with what nt_plan_build found. Returns
 * what nt_plan_build returns. */
static inline int plan_of(const nt_ctx *ctx, const nt_topology *t, const char *text, nt_plan *plan,
			  json_t **errors)
{
	json_t *p = json_loads(text, 0, NULL);
	CHECK_MSG(p != NULL, "%s", text);
	*errors = json_array();
	int r = nt_plan_build(ctx, NULL, t, p, plan, *errors);
	json_decref(p);
	return r;
}

#endif
