/* SPDX-License-Identifier: Apache-2.0 */
/* A link's root qdisc: target = interface, value = the root in a compact
 * text form:
 *   "default"                    the kernel's own (none was set)
 *   "fq limit=N flow_limit=N maxrate=BITS"  each parameter only when it is
 *                                not fq's default; maxrate in bits/s
 *   "fq_codel"
 *   "mq"                         mq with the kernel's default children
 *   "mq fq maxrate=BITS ..."     mq with one fq child per transmit queue
 *   "mq fq_codel"
 *   "mq *"                       mq whose children differ
 *   "KIND"                       any other root (htb, pfifo_fast, ...)
 *
 * Profile section:
 *   "qdisc": [{"interface": "enos*", "qdisc": "fq", "maxrate": "23gbit",
 *              "flow_limit": 100}]
 * with "qdisc" one of "fq", "fq_codel", "mq" (optionally "child": "fq" or
 * "fq_codel", the fq parameters then for each child) or "default". fq
 * paces each flow to its maxrate and the rate a socket asks for
 * (SO_MAX_PACING_RATE, iperf3 --fq-rate). A root nettune cannot express
 * (htb with its classes, a netem, mq children that differ) is replaced only
 * with "replace": true: a rollback then restores its kind with that kind's
 * defaults, not its classes, filters or parameters (docs/profiles.md#qdisc).
 * Through kernel/rtlink.h, which a fixture root emulates. */
#include "kernel/qdisc_kinds.h"
#include "kernel/rtlink.h"
#include "settings/link_kind.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the text form ---- */

static bool word_ok(const char *w)
{
	if (!*w || strlen(w) >= sizeof(((nt_qdisc *)0)->kind))
		return false;
	for (; *w; w++)
		if (!isalnum((unsigned char)*w) && *w != '_' && *w != '-')
			return false;
	return true;
}

static int parse_param(const char *tok, nt_fq_params *fq)
{
	char name[16];
	unsigned long long v;
	char tail;
	if (sscanf(tok, "%15[a-z_]=%llu%c", name, &v, &tail) != 2)
		return NT_EPARSE;
	if (strcmp(name, "limit") == 0 && v <= UINT32_MAX && !fq->has_limit) {
		fq->has_limit = true;
		fq->limit = (uint32_t)v;
	} else if (strcmp(name, "flow_limit") == 0 && v <= UINT32_MAX && !fq->has_flow_limit) {
		fq->has_flow_limit = true;
		fq->flow_limit = (uint32_t)v;
	} else if (strcmp(name, "maxrate") == 0 && v % 8 == 0 && v / 8 < NT_FQ_UNLIMITED && !fq->has_maxrate) {
		fq->has_maxrate = true;
		fq->maxrate = (uint32_t)(v / 8);
	} else {
		return NT_EPARSE;
	}
	return 0;
}

/* TEXT as a root qdisc. Returns 0 or NT_EPARSE. */
static int text_to_qdisc(const char *text, nt_qdisc *q)
{
	char buf[NT_VALUE_MAX], *save = NULL;
	memset(q, 0, sizeof(*q));
	if (!text || strlen(text) >= sizeof(buf))
		return NT_EPARSE;
	snprintf(buf, sizeof(buf), "%s", text);
	char *tok = strtok_r(buf, " ", &save);
	if (!tok)
		return NT_EPARSE;
	if (strcmp(tok, "default") == 0) {
		q->dflt = true;
		return strtok_r(NULL, " ", &save) ? NT_EPARSE : 0;
	}
	if (!word_ok(tok))
		return NT_EPARSE;
	snprintf(q->kind, sizeof(q->kind), "%s", tok);
	const char *fq_owner = q->kind;
	tok = strtok_r(NULL, " ", &save);
	if (tok && strcmp(q->kind, "mq") == 0) {
		if (strcmp(tok, "*") != 0 && !word_ok(tok))
			return NT_EPARSE;
		snprintf(q->child, sizeof(q->child), "%s", tok);
		fq_owner = q->child;
		tok = strtok_r(NULL, " ", &save);
	}
	for (; tok; tok = strtok_r(NULL, " ", &save))
		if (strcmp(fq_owner, "fq") != 0 || parse_param(tok, &q->fq) < 0)
			return NT_EPARSE;
	return 0;
}

static int qdisc_to_text(const nt_qdisc *q, char *out, size_t size)
{
	int n;
	bool child = q->child[0] && !q->child_dflt;
	if (q->dflt)
		n = snprintf(out, size, "default");
	else
		n = snprintf(out, size, "%s%s%s", q->kind, child ? " " : "", child ? q->child : "");
	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	bool fq = !q->dflt && strcmp(child ? q->child : q->kind, "fq") == 0;
	size_t len = (size_t)n;
	if (fq && q->fq.has_limit)
		len += (size_t)snprintf(out + len, len < size ? size - len : 0, " limit=%u", q->fq.limit);
	if (fq && q->fq.has_flow_limit && len < size)
		len += (size_t)snprintf(out + len, size - len, " flow_limit=%u", q->fq.flow_limit);
	if (fq && q->fq.has_maxrate && len < size)
		len += (size_t)snprintf(out + len, size - len, " maxrate=%llu", (unsigned long long)q->fq.maxrate * 8);
	return len >= size ? -ENOSPC : 0;
}

static int qdisc_parse(const char *text, nt_value *out)
{
	nt_qdisc q;
	memset(out, 0, sizeof(*out));
	int r = text_to_qdisc(text, &q);
	if (r < 0)
		return r;
	/* Stored as it would be formatted, so that two spellings of one
	 * root compare equal as text. */
	return qdisc_to_text(&q, out->text, sizeof(out->text)) < 0 ? NT_EPARSE : 0;
}

static int qdisc_format(const nt_value *v, char *out, size_t size)
{
	int n = snprintf(out, size, "%s", v->text);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

static bool qdisc_equal(const nt_value *a, const nt_value *b)
{
	return strcmp(a->text, b->text) == 0;
}

/* Whether nettune can put Q back as it was: the kinds it knows, with the
 * parameters it reads. Anything else is someone's setup it would lose. */
static bool expressible(const nt_qdisc *q)
{
	static const char *const plain[] = { "fq", "fq_codel", "pfifo_fast", "noqueue", NULL };
	if (q->dflt)
		return true;
	if (strcmp(q->kind, "mq") == 0)
		return !q->child[0] || q->child_dflt || strcmp(q->child, "fq") == 0 ||
		       strcmp(q->child, "fq_codel") == 0;
	for (int i = 0; plain[i]; i++)
		if (strcmp(q->kind, plain[i]) == 0)
			return true;
	return false;
}

/* ---- the kind ---- */

static int qdisc_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	nt_qdisc q;
	memset(out, 0, sizeof(*out));
	int r = nt_qdisc_get(ctx, target, &q);
	if (r < 0)
		return r;
	return qdisc_to_text(&q, out->text, sizeof(out->text));
}

static int qdisc_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		       const nt_value *v, char *why, size_t whysize)
{
	nt_qdisc q, cur;
	nt_link_params p;
	int r;
	if (text_to_qdisc(v->text, &q) < 0) {
		snprintf(why, whysize, "'%s' is not a qdisc value", v->text);
		return NT_EINVALID;
	}
	if ((r = nt_qdisc_get(ctx, target, &cur)) < 0) {
		snprintf(why, whysize, "%s: the root qdisc cannot be read: %s", target, nt_strerror(r));
		return NT_EINVALID;
	}
	if (strcmp(q.kind, "mq") == 0 && nt_rtlink_get(ctx, target, &p) == 0 && p.num_tx_queues < 2) {
		snprintf(why, whysize, "%s has %u transmit queue%s: mq needs a multi-queue device", target,
			 p.num_tx_queues, p.num_tx_queues == 1 ? "" : "s");
		return NT_EINVALID;
	}
	return 0;
}

static int qdisc_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		       size_t errsize)
{
	nt_qdisc q;
	char kerr[200] = "";
	int r = text_to_qdisc(v->text, &q) < 0 ? NT_EINVALID : 0;
	/* Children that differed are not known one by one: mq is put back
	 * with the kernel's default children. */
	if (r == 0 && strcmp(q.child, "*") == 0)
		q.child[0] = '\0';
	if (r == 0)
		r = nt_qdisc_set(ctx, target, &q, kerr, sizeof(kerr));
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "%s root qdisc '%s': %s%s%s", target, v->text, nt_strerror(r),
			 kerr[0] ? ": " : "", kerr);
	return r;
}

static const nt_setting_kind nt_setting_qdisc = {
	.name = "qdisc",
	/* A link's root qdisc, over rtnetlink in this namespace. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the link is this namespace's",
	.parse = qdisc_parse,
	.format = qdisc_format,
	.equal = qdisc_equal,
	.read = qdisc_read,
	.check = qdisc_check,
	.apply = qdisc_apply,
	/* Last: a new root takes its default limits from the queue length
	 * and the MTU set before it. */
	.order = 60,
	/* Qdisc changes come as RTM_NEWQDISC, which the watcher does not
	 * subscribe to: a change shows at the next periodic check. */
	.events = 0,
};

/* ---- "qdisc": [...] ---- */

/* A rate as tc spells it: bits per second, plain or with a unit
 * ("23gbit", "500mbit", "100kbit", "8000bit"), or an integer. Returns bits
 * per second, or 0 when not a rate. */
static unsigned long long parse_rate(const json_t *x)
{
	if (json_is_integer(x))
		return json_integer_value(x) > 0 ? (unsigned long long)json_integer_value(x) : 0;
	if (!json_is_string(x))
		return 0;
	const char *s = json_string_value(x);
	char *end;
	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	static const struct {
		const char *unit;
		unsigned long long mul;
	} units[] = { { "bit", 1 }, { "kbit", 1000 }, { "mbit", 1000000 }, { "gbit", 1000000000ULL } };
	for (size_t i = 0; !errno && i < sizeof(units) / sizeof(units[0]); i++)
		if (strcasecmp(end, units[i].unit) == 0)
			return v <= UINT64_MAX / units[i].mul ? v * units[i].mul : 0;
	return 0;
}

/* The value an entry asks for; NT_EPARSE with WHY when it asks for none. */
static int entry_value(const json_t *e, nt_value *out, char *why, size_t whysize, const char **field)
{
	nt_qdisc q;
	memset(&q, 0, sizeof(q));
	const char *kind = json_string_value(json_object_get(e, "qdisc"));
	const char *child = json_string_value(json_object_get(e, "child"));
	*field = "qdisc";
	if (!kind || (strcmp(kind, "fq") != 0 && strcmp(kind, "fq_codel") != 0 && strcmp(kind, "mq") != 0 &&
		      strcmp(kind, "default") != 0)) {
		snprintf(why, whysize, "'qdisc' must be \"fq\", \"fq_codel\", \"mq\" or \"default\"");
		return NT_EPARSE;
	}
	q.dflt = strcmp(kind, "default") == 0;
	snprintf(q.kind, sizeof(q.kind), "%s", q.dflt ? "" : kind);
	if (json_object_get(e, "child")) {
		*field = "child";
		if (strcmp(kind, "mq") != 0 || !child || (strcmp(child, "fq") != 0 && strcmp(child, "fq_codel") != 0)) {
			snprintf(why, whysize, "'child' is \"fq\" or \"fq_codel\", for \"qdisc\": \"mq\" only");
			return NT_EPARSE;
		}
		snprintf(q.child, sizeof(q.child), "%s", child);
	}
	bool fq = strcmp(q.child[0] ? q.child : q.kind, "fq") == 0;
	const json_t *x;
	if ((x = json_object_get(e, "maxrate"))) {
		*field = "maxrate";
		unsigned long long bits = parse_rate(x);
		/* The kernel keeps fq's maxrate in bytes per second in 32 bits. */
		if (!fq || bits < 8 || bits / 8 >= NT_FQ_UNLIMITED) {
			snprintf(why, whysize, fq ? "'maxrate' is a rate from 8bit to 34gbit (\"23gbit\", or bits per second)"
						  : "'maxrate' is an fq parameter");
			return NT_EPARSE;
		}
		q.fq.has_maxrate = true;
		q.fq.maxrate = (uint32_t)(bits / 8);
	}
	static const char *const counts[] = { "flow_limit", "limit", NULL };
	for (int i = 0; counts[i]; i++) {
		if (!(x = json_object_get(e, counts[i])))
			continue;
		*field = counts[i];
		if (!fq || !json_is_integer(x) || json_integer_value(x) < 1 || json_integer_value(x) > UINT32_MAX) {
			snprintf(why, whysize, fq ? "'%s' is a positive number of packets" : "'%s' is an fq parameter",
				 counts[i]);
			return NT_EPARSE;
		}
		uint32_t n = (uint32_t)json_integer_value(x);
		/* fq's defaults are left out of the value, as a read leaves them. */
		if (i == 0 && n != NT_FQ_DEFAULT_FLOW_LIMIT) {
			q.fq.has_flow_limit = true;
			q.fq.flow_limit = n;
		} else if (i == 1 && n != NT_FQ_DEFAULT_LIMIT) {
			q.fq.has_limit = true;
			q.fq.limit = n;
		}
	}
	memset(out, 0, sizeof(*out));
	if (qdisc_to_text(&q, out->text, sizeof(out->text)) < 0) {
		snprintf(why, whysize, "the qdisc does not fit %d bytes", NT_VALUE_MAX);
		return NT_EPARSE;
	}
	return 0;
}

static void validate_qdisc(nt_section_check *c, const json_t *arr)
{
	static const char *const known[] = { "interface", "qdisc", "child", "maxrate", "flow_limit", "limit",
					     "replace", NULL };
	size_t i;
	json_t *e;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX], why[200];

	json_array_foreach(arr, i, e) {
		if (!nt_sc_entry(c, "qdisc", i, e, base, sizeof(base)))
			continue;
		nt_sc_unknown_fields(c, e, base, known);
		const char *iface = nt_sc_str(c, e, base, "interface", true);
		nt_value v;
		const char *field;
		bool ok = entry_value(e, &v, why, sizeof(why), &field) == 0;
		if (!ok) {
			snprintf(path, sizeof(path), "%s.%s", base, field);
			nt_sc_error(c, path, "%s", why);
		}
		/* A kind this kernel lacks is refused here, with what says so,
		 * not at the apply ("Specified qdisc kind is unknown"), as a
		 * sysctl key the kernel lacks is (kernel/qdisc_kinds.h: known
		 * read-only, never by loading a module). Nothing tells: left
		 * to the apply, whose failure rolls back. */
		for (int w = 0; ok && c->t && w < 2; w++) {
			const char *k = json_string_value(json_object_get(e, w ? "child" : "qdisc"));
			char how[200];
			if (!k || !strcmp(k, "default") || nt_qdisc_kind_available(&c->t->ctx, k, how, sizeof(how)) != 0)
				continue;
			snprintf(path, sizeof(path), "%s.%s", base, w ? "child" : "qdisc");
			nt_sc_error(c, path, "this kernel has no qdisc kind '%s' (%s): it would fail at the apply", k,
				    how);
		}
		json_t *rep = json_object_get(e, "replace");
		if (rep && !json_is_boolean(rep)) {
			snprintf(path, sizeof(path), "%s.replace", base);
			nt_sc_error(c, path, "'replace' must be true or false");
		}
		if (!iface)
			continue;
		snprintf(path, sizeof(path), "%s.interface", base);
		if (nt_sc_iface(c, iface, path, false) <= 0 || !c->t || !ok || json_is_true(rep))
			continue;
		/* Someone's own setup is never lost silently. */
		for (int k = 0; k < c->t->nnics; k++) {
			nt_qdisc cur;
			char text[NT_VALUE_MAX];
			const nt_nic *nic = &c->t->nics[k];
			if (!nt_iface_match(iface, nic->name) || nt_qdisc_get(&c->t->ctx, nic->name, &cur) < 0 ||
			    expressible(&cur))
				continue;
			if (qdisc_to_text(&cur, text, sizeof(text)) < 0)
				snprintf(text, sizeof(text), "%s", cur.kind);
			nt_sc_error(c, path,
				    "%s's root qdisc is '%s', which nettune cannot put back as it is (classes, filters "
				    "and parameters of its own); set \"replace\": true to replace it: a rollback then "
				    "restores a '%s' root with that kind's defaults",
				    nic->name, text, cur.kind);
		}
	}
}

static int desire_qdisc(nt_section_plan *p, const json_t *arr)
{
	size_t i;
	json_t *e;
	char path[NT_JSONPATH_MAX], why[200];
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		const char *field;
		nt_value v;
		if (entry_value(e, &v, why, sizeof(why), &field) < 0)
			continue;
		snprintf(path, sizeof(path), "$.qdisc[%zu]", i);
		for (int k = 0; k < p->t->nnics; k++) {
			const nt_nic *nic = &p->t->nics[k];
			if (!nt_iface_match(pattern, nic->name))
				continue;
			/* A glob leaves out loopback: it queues nothing, and a
			 * qdisc on it would only slow local traffic. */
			if (nt_iface_is_glob(pattern) && strcmp(nic->name, "lo") == 0)
				continue;
			int r = nt_desire_put(p, &nt_setting_qdisc, nic->name, nic->name, &v, path);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static const nt_profile_section section_qdisc = {
	.key = "qdisc",
	.type = JSON_ARRAY,
	.validate = validate_qdisc,
	.desire = desire_qdisc,
};

/* A link's own settings as the host model shows them, from one read of
 * the link and its qdiscs (kernel/rtlink.h), for the three link kinds at
 * once, on the host read's one rtnetlink socket (a socket each would be
 * three per NIC per read of the host): "mtu_min", "mtu_max" (the range the driver allows; "mtu" is the
 * host model's own) and "txqueuelen", where the range is known (not on a
 * fixture without it, so a captured host reads as it did); "qdisc", the
 * root in the text form above, and "qdisc_kinds", the kinds the kernel
 * shows, the root's and an mq's children's ("mq pfifo_fast"), which
 * "default" does not say (on a fixture root, the one kernel/fixture.h
 * emulates). */
static int report_link(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *out)
{
	nt_link_params p;
	nt_qdisc q;
	char text[NT_VALUE_MAX], kinds[40];
	int qres, r = nt_rtlink_report(ctx, nic->name, &p, &q, &qres);
	if (r < 0)
		return r == -ENODEV ? 0 : r;
	if (p.range_known) {
		json_object_set_new(out, "mtu_min", json_integer(p.min_mtu));
		json_object_set_new(out, "mtu_max", json_integer(p.max_mtu));
		json_object_set_new(out, "txqueuelen", json_integer(p.txqlen));
	}
	if (qres < 0)
		return qres == -EOPNOTSUPP || qres == -ENODEV ? 0 : qres;
	if ((r = qdisc_to_text(&q, text, sizeof(text))) < 0)
		return r;
	snprintf(kinds, sizeof(kinds), "%s%s%s", q.kind, q.child[0] ? " " : "", q.child);
	json_object_set_new(out, "qdisc", json_string(text));
	json_object_set_new(out, "qdisc_kinds", json_string(kinds));
	return 0;
}

const nt_setting_module nt_module_qdisc = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_qdisc, NULL },
	.sections = (const nt_profile_section *const[]){ &section_qdisc, NULL },
	.report_nic = report_link,
};
