/* SPDX-License-Identifier: Apache-2.0 */
/* A link's transmit queue length: target = interface, value = packets
 * ("10000").
 *
 * Profile section:
 *   "txqueuelen": [{"interface": "enos*", "txqueuelen": 10000}]
 * The queue length is the default limit of the qdiscs the kernel attaches
 * (pfifo_fast's, a default mq's children's), which is why the qdisc kind
 * comes after this one. Through kernel/rtlink.h (the MTU's neighbour). */
#include "settings/link_kind.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int txq_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	return nt_lk_read(ctx, target, NT_LK_TXQLEN, out);
}

static int txq_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		     const nt_value *v, char *why, size_t whysize)
{
	nt_link_params p;
	int r = nt_rtlink_get(ctx, target, &p);
	if (r < 0) {
		snprintf(why, whysize, "%s: txqueuelen cannot be read: %s", target, nt_strerror(r));
		return NT_EINVALID;
	}
	return 0;
}

static int txq_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		     size_t errsize)
{
	return nt_lk_apply(ctx, target, NT_LK_TXQLEN, v, err, errsize);
}

static const nt_setting_kind nt_setting_txqueuelen = {
	.name = "txqueuelen",
	/* Over rtnetlink on a socket of this namespace: its own links only. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the link is this namespace's",
	.parse = nt_lk_parse,
	.format = nt_lk_format,
	.equal = nt_lk_equal,
	.read = txq_read,
	.check = txq_check,
	.apply = txq_apply,
	.order = 56,
	/* A queue length change is announced with RTM_NEWLINK. */
	.events = NT_SETTING_EVENT(NT_EVENT_LINK),
};

/* ---- "txqueuelen": [...] ---- */

static void validate_txq(nt_section_check *c, const json_t *arr)
{
	/* The kernel keeps the length in an unsigned int; above 2^31 it is
	 * no longer a queue anyone means. */
	nt_lk_validate(c, arr, "txqueuelen", "txqueuelen", 0, 2147483647L, NULL);
}

static int desire_txq(nt_section_plan *p, const json_t *arr)
{
	size_t i;
	json_t *e;
	char path[NT_JSONPATH_MAX];
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		nt_value v;
		memset(&v, 0, sizeof(v));
		nt_value_field_set(&v, 0, (uint32_t)json_integer_value(json_object_get(e, "txqueuelen")));
		snprintf(path, sizeof(path), "$.txqueuelen[%zu].txqueuelen", i);
		for (int k = 0; k < p->t->nnics; k++) {
			if (!nt_iface_match(pattern, p->t->nics[k].name))
				continue;
			int r = nt_desire_put(p, &nt_setting_txqueuelen, p->t->nics[k].name, p->t->nics[k].name, &v,
					      path);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static const nt_profile_section section_txq = {
	.key = "txqueuelen",
	.type = JSON_ARRAY,
	.validate = validate_txq,
	.desire = desire_txq,
};

/* The queue length is reported with the root qdisc (settings/qdisc.c),
 * from the same read of the link. */
const nt_setting_module nt_module_txqueuelen = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_txqueuelen, NULL },
	.sections = (const nt_profile_section *const[]){ &section_txq, NULL },
};
