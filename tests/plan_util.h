/* SPDX-License-Identifier: Apache-2.0 */
/* A plan of a profile written as JSON text, for tests of a kind's section:
 * what the planner makes of it on host T (errors, when any, in *ERRORS,
 * which the caller frees). */
#ifndef NT_TEST_PLAN_UTIL_H
#define NT_TEST_PLAN_UTIL_H

#include "engine/plan.h"
#include "harness.h"

#include <jansson.h>

static inline int nt_t_plan(const nt_ctx *ctx, const nt_topology *t, const char *text, nt_plan *plan,
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
