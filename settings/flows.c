/* SPDX-License-Identifier: Apache-2.0 */
/* Flow rules (ntuple filters): target = "IFACE/loc-N", a location of the
 * NIC's rule table; value = the rule there as text (kernel/flows.h:
 * "tcp4 dst-port 5002 queue 1", "none" for an empty location).
 *
 * Profile section:
 *   "flows": [{"interface": "eth100", "flow_type": "tcp4",
 *              "dst_ports": "5002-5005", "cpus": "1-4"}]
 * sends each port to the RX queue whose IRQ this profile places on the
 * CPU dealt to it; with "context": C (and optionally "queue": an offset
 * added to the queue C's table picks, 0 by default) to RSS context C,
 * which spreads the flows over its table's queues (settings/rss.c makes
 * the context; a rule into one is ordered after it, by kind order), as ESnet's 100G recipe does by hand with `ethtool -U`
 * (docs/field-reports.md#irq-cpus-apart-from-app): each stream on its own
 * queue, its interrupts on its own core, the application on others.
 *
 * Ownership: the profile's rules take locations 0, 1, ... of the table in
 * order (or from an entry's "location"), so a plan made again names the
 * same targets. A step's before-value is what the location held: "none"
 * for a rule nettune inserts, so rollback deletes exactly it. A location
 * holding a rule nettune did not ask for is refused (the plan names it),
 * never overwritten, unless the entry says "replace": true; then that rule
 * is the step's before-value and rollback puts it back. Rules at other
 * locations are never touched.
 *
 * The desired state holding the rules: a location found empty is filled
 * again (the rule was deleted); one holding any other rule (another
 * program's, or ours changed in place, which the table cannot tell
 * apart) is NT_ETAKEN, so the drift watcher reports it contested and
 * never writes over it (docs/transactions.md#desired-state-and-drift).
 *
 * A rule needs the NIC's "ntuple" feature on; when it is off and the
 * "feature" kind is registered, the section desires
 * "IFACE/rx-ntuple-filter" "on"
 * as a step of the same plan (ordered before the rules). */
#include "host/napi.h"
#include "host/queues.h"
#include "kernel/features.h"
#include "kernel/flows.h"
#include "kernel/queues.h"
#include "kernel/rss.h"
#include "settings/section.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A desired value's text may end in this word: the location may hold a
 * rule nettune did not make, and the step replaces it. Not part of the
 * rule (equal ignores it; a read never has it). */
#define REPLACE " replace"
/* A desired value the plan cannot make (a "cpu" no queue's IRQ is placed
 * on) is carried to CHECK, which refuses it with this text after '!' at
 * the profile's JSON path: a section's DESIRE has no error list. */
#define REFUSAL '!'

/* ---- target and value ---- */

static int flow_target(const char *target, char *ifname, uint32_t *loc)
{
	const char *slash = target ? strrchr(target, '/') : NULL;
	char *end;
	if (!slash || (size_t)(slash - target) >= IF_NAMESIZE || strncmp(slash + 1, "loc-", 4) != 0)
		return NT_EINVALID;
	memcpy(ifname, target, (size_t)(slash - target));
	ifname[slash - target] = '\0';
	const char *num = slash + 5;
	errno = 0;
	unsigned long n = strtoul(num, &end, 10);
	if (*num < '0' || *num > '9' || *end || errno || n > UINT32_MAX || !nt_ifname_valid(ifname))
		return NT_EINVALID;
	*loc = (uint32_t)n;
	return 0;
}

/* TEXT without its REPLACE word: the rule, and whether it was there. */
static int value_rule(const char *text, nt_flow_rule *r, bool *replace, char *why, size_t whysize)
{
	char buf[NT_VALUE_MAX];
	size_t n = text ? strlen(text) : 0, k = strlen(REPLACE);
	*replace = n > k && strcmp(text + n - k, REPLACE) == 0;
	snprintf(buf, sizeof(buf), "%.*s", (int)(*replace ? n - k : n), text ? text : "");
	return nt_flow_rule_parse(buf, r, why, whysize);
}

static int flow_parse(const char *text, nt_value *out)
{
	nt_flow_rule r;
	bool replace;
	memset(out, 0, sizeof(*out));
	if (value_rule(text, &r, &replace, NULL, 0) < 0 || r.type == NT_FLOW_OTHER)
		return NT_EPARSE;
	size_t n = strlen(out->text);
	if (nt_flow_rule_format(&r, out->text, sizeof(out->text)) < 0 ||
	    (replace && (n = strlen(out->text)) + strlen(REPLACE) >= sizeof(out->text)))
		return NT_EPARSE;
	if (replace)
		strcat(out->text, REPLACE);
	return 0;
}

static int flow_format(const nt_value *v, char *out, size_t size)
{
	int n = snprintf(out, size, "%s", v->text);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

static bool flow_equal(const nt_value *a, const nt_value *b)
{
	nt_flow_rule x, y;
	bool rx, ry;
	if (value_rule(a->text, &x, &rx, NULL, 0) < 0 || value_rule(b->text, &y, &ry, NULL, 0) < 0)
		return strcmp(a->text, b->text) == 0;
	return nt_flow_rule_equal(&x, &y);
}

static int flow_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	char ifname[IF_NAMESIZE];
	uint32_t loc;
	nt_flow_rule r;
	(void)eh;
	memset(out, 0, sizeof(*out));
	if (flow_target(target, ifname, &loc) < 0)
		return NT_EINVALID;
	int e = nt_flows_get(ctx, ifname, loc, &r);
	if (e < 0)
		return e;
	return nt_flow_rule_format(&r, out->text, sizeof(out->text));
}

static int flow_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		      const nt_value *v, char *why, size_t whysize)
{
	char ifname[IF_NAMESIZE], have[NT_FLOW_TEXT_MAX];
	uint32_t loc;
	nt_flow_rule want, cur;
	nt_flow_table tab;
	bool replace;
	int r;
	(void)eh;
	(void)t;

	if (v->text[0] == REFUSAL) {
		snprintf(why, whysize, "%s", v->text + 1);
		return NT_EINVALID;
	}
	if (flow_target(target, ifname, &loc) < 0) {
		snprintf(why, whysize, "'%s' is not a flow rule location (IFACE/loc-N)", target);
		return NT_EINVALID;
	}
	if (value_rule(v->text, &want, &replace, why, whysize) < 0)
		return NT_EINVALID;
	if ((r = nt_flows_read(ctx, ifname, &tab)) < 0) {
		if (r == -EOPNOTSUPP)
			snprintf(why, whysize, "%s has no flow rule table (its driver answers no ETHTOOL_GRXCLSRLCNT)",
				 ifname);
		else
			snprintf(why, whysize, "%s: flow rules cannot be read: %s", ifname, nt_strerror(r));
		return NT_EINVALID;
	}
	r = NT_EINVALID;
	memset(&cur, 0, sizeof(cur));
	for (int i = 0; i < tab.n; i++)
		if (tab.rules[i].location == loc)
			cur = tab.rules[i];
	if (loc >= tab.size) {
		snprintf(why, whysize, "location %u is beyond %s's rule table of %u", loc, ifname, tab.size);
	} else if (want.type != NT_FLOW_NONE && !want.drop && want.queue >= tab.rings) {
		snprintf(why, whysize, "queue %u is beyond %s's %u RX queues", want.queue, ifname, tab.rings);
	} else if (cur.type != NT_FLOW_NONE && want.type != NT_FLOW_NONE && !nt_flow_rule_equal(&cur, &want) &&
		   !replace) {
		nt_flow_rule_format(&cur, have, sizeof(have));
		snprintf(why, whysize,
			 "location %u of %s holds a rule nettune was not asked for ('%s'); not overwritten: "
			 "give \"replace\": true to replace it (rollback puts it back) or another \"location\"",
			 loc, ifname, have);
		/* Taken, not malformed: the desired state reports it contested
		 * and holds its other targets (engine/plan.h). */
		r = NT_ETAKEN;
	} else if (cur.type == NT_FLOW_OTHER && replace) {
		nt_flow_rule_format(&cur, have, sizeof(have));
		snprintf(why, whysize,
			 "location %u of %s holds a rule nettune cannot restore ('%s': fields it does not model); "
			 "not replaced",
			 loc, ifname, have);
	} else {
		r = 0;
	}
	nt_flow_table_free(&tab);
	return r;
}

static int flow_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		      size_t errsize)
{
	char ifname[IF_NAMESIZE], kerr[200] = "";
	uint32_t loc;
	nt_flow_rule want;
	bool replace;
	int r;
	(void)eh;
	if (flow_target(target, ifname, &loc) < 0 || value_rule(v->text, &want, &replace, kerr, sizeof(kerr)) < 0 ||
	    want.type == NT_FLOW_OTHER) {
		r = NT_EINVALID;
	} else if (want.type == NT_FLOW_NONE) {
		r = nt_flows_delete(ctx, ifname, loc);
		/* Already empty is what was asked for. */
		if (r == -ENOENT)
			r = 0;
	} else {
		want.location = loc;
		r = nt_flows_insert(ctx, ifname, &want, kerr, sizeof(kerr));
	}
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "%s flow rule: %s%s%s", target, nt_strerror(r), kerr[0] ? ": " : "", kerr);
	return r;
}

static const nt_setting_kind nt_setting_flow = {
	.name = "flow",
	/* A NIC's flow rules, over the ethtool ioctl on a socket of this
	 * namespace: only its own NICs. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the NIC is a link of this namespace",
	.parse = flow_parse,
	.format = flow_format,
	.equal = flow_equal,
	.read = flow_read,
	.check = flow_check,
	.apply = flow_apply,
	/* After IRQ affinity (a rule's "cpu" follows it) and RSS, which
	 * a rule overrides for the flows it matches. */
	.order = 14,
	/* Before a channels step that lowers the NIC's RX queues, which
	 * the kernel refuses while a rule sends flows to one it takes away
	 * (settings/channels.c). */
	.names_queues = true,
	/* The kernel sends no notification for a rule inserted or deleted
	 * by another program: the periodic check finds it. */
	.events = 0,
};

/* ---- "flows": [...] ---- */

static const char *const flow_names[] = { "tcp4", "udp4", "tcp6", "udp6", NULL };

/* A list "5002-5005" or "1,3-4" of numbers up to MAX, in order; N of
 * them into OUT (at most CAP). Returns the count or NT_EPARSE. */
static int num_list(const char *s, long max, long *out, int cap)
{
	int n = 0;
	const char *p = s;
	if (!s || !*s)
		return NT_EPARSE;
	while (*p) {
		char *end;
		if (*p < '0' || *p > '9')
			return NT_EPARSE;
		long a = strtol(p, &end, 10), b = a;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				return NT_EPARSE;
			b = strtol(p, &end, 10);
		}
		if (a > b || b > max)
			return NT_EPARSE;
		for (long x = a; x <= b; x++) {
			if (n >= cap)
				return NT_EPARSE;
			out[n++] = x;
		}
		if (*end == ',')
			end++;
		else if (*end)
			return NT_EPARSE;
		p = end;
	}
	return n;
}

/* Most rules one entry expands to. */
#define MAX_ENTRY_RULES 1024

/* The ports an entry matches: one "dst_port", a "dst_ports" range, or
 * none (-1 in PORTS[0], count 1). Returns the count or NT_EPARSE. */
static int entry_ports(const json_t *e, long *ports, int cap)
{
	json_t *one = json_object_get(e, "dst_port");
	const char *many = json_string_value(json_object_get(e, "dst_ports"));
	if (many)
		return num_list(many, 65535, ports, cap);
	ports[0] = one ? (long)json_integer_value(one) : -1;
	return 1;
}

/* The destinations dealt to the ports: "queue", "queues", "cpu", "cpus"
 * (numbers), or "action": "drop" (one entry, -1). *CPUS: they are CPUs. */
static int entry_dests(const json_t *e, long *out, int cap, bool *cpus)
{
	const char *list;
	*cpus = json_object_get(e, "cpu") || json_object_get(e, "cpus");
	if ((list = json_string_value(json_object_get(e, "queues"))) ||
	    (list = json_string_value(json_object_get(e, "cpus"))))
		return num_list(list, 65535, out, cap);
	json_t *one = json_object_get(e, "queue");
	if (!one)
		one = json_object_get(e, "cpu");
	out[0] = one ? (long)json_integer_value(one) : -1;
	return 1;
}

/* The rule text for the entry's match with "drop" as action, to check the
 * match fields with the value parser. */
static int entry_match_text(const json_t *e, long port, char *out, size_t size)
{
	const char *ft = json_string_value(json_object_get(e, "flow_type"));
	const char *sip = json_string_value(json_object_get(e, "src_ip"));
	const char *dip = json_string_value(json_object_get(e, "dst_ip"));
	json_t *sport = json_object_get(e, "src_port");
	int n = snprintf(out, size, "%s", ft ? ft : "");
	if (sip)
		n += snprintf(out + n, size - (size_t)n, " src-ip %s", sip);
	if (dip && n >= 0 && (size_t)n < size)
		n += snprintf(out + n, size - (size_t)n, " dst-ip %s", dip);
	if (sport && n >= 0 && (size_t)n < size)
		n += snprintf(out + n, size - (size_t)n, " src-port %lld", (long long)json_integer_value(sport));
	if (port >= 0 && n >= 0 && (size_t)n < size)
		n += snprintf(out + n, size - (size_t)n, " dst-port %ld", port);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

static int count_fields(const json_t *e, const char *const *names)
{
	int n = 0;
	for (int i = 0; names[i]; i++)
		n += json_object_get(e, names[i]) != NULL;
	return n;
}

static bool nic_named(const nt_topology *t, const char *pattern)
{
	return t && !nt_iface_is_glob(pattern) && nt_topology_nic(t, pattern);
}

/* A rule of entry E sends flows of IFACE to RSS context ID: it must be
 * there, or made by an entry of this profile's "rss". */
static void validate_context(nt_section_check *c, const json_t *e, const char *base, const char *iface, uint32_t id)
{
	char path[NT_JSONPATH_MAX];
	size_t i;
	json_t *x;
	nt_rss r;
	(void)e;
	json_array_foreach(json_object_get(c->profile, "rss"), i, x)
		if (json_integer_value(json_object_get(x, "context")) == (json_int_t)id &&
		    !strcmp(json_string_value(json_object_get(x, "interface")) ?: "", iface))
			return;
	snprintf(path, sizeof(path), "%s.context", base);
	int e2 = nt_rss_context_read(&c->t->ctx, iface, id, &r);
	nt_rss_free(&r);
	if (e2 == -EOPNOTSUPP)
		nt_sc_error(c, path, "%s: %s", iface, nt_rss_contexts_unsupported);
	else if (e2 == -ENOENT)
		nt_sc_error(c, path, "%s has no RSS context %u, and this profile's \"rss\" makes none (add {\"interface\": "
				     "\"%s\", \"context\": %u, \"queues\": ...})",
			    iface, id, iface, id);
	else if (e2 < 0)
		nt_sc_error(c, path, "%s: RSS context %u cannot be read: %s", iface, id, nt_strerror(e2));
}

static void validate_flows(nt_section_check *c, const json_t *arr)
{
	static const char *const known[] = { "interface", "flow_type", "src_ip", "dst_ip", "src_port", "dst_port",
					     "dst_ports", "queue", "queues", "cpu", "cpus", "action", "location",
					     "replace", "context", NULL };
	static const char *const dests[] = { "queue", "queues", "cpu", "cpus", "action", NULL };
	size_t i;
	json_t *e;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX], text[NT_VALUE_MAX], why[200];
	long ports[MAX_ENTRY_RULES], dest[MAX_ENTRY_RULES];
	/* Rules each named NIC gets, against its table's size. */
	json_t *per_nic = json_object();

	json_array_foreach(arr, i, e) {
		if (!nt_sc_entry(c, "flows", i, e, base, sizeof(base)))
			continue;
		nt_sc_unknown_fields(c, e, base, known);
		const char *iface = nt_sc_str(c, e, base, "interface", true);
		const char *ft = nt_sc_str(c, e, base, "flow_type", true);
		nt_sc_str(c, e, base, "src_ip", false);
		nt_sc_str(c, e, base, "dst_ip", false);
		nt_sc_str(c, e, base, "dst_ports", false);
		nt_sc_str(c, e, base, "queues", false);
		nt_sc_str(c, e, base, "cpus", false);
		bool ok = true;
		if (ft) {
			int k = 0;
			while (flow_names[k] && strcmp(flow_names[k], ft))
				k++;
			if (!flow_names[k]) {
				snprintf(path, sizeof(path), "%s.flow_type", base);
				nt_sc_error(c, path, "unknown flow_type '%s' (known: tcp4, udp4, tcp6, udp6)", ft);
				ok = false;
			}
		}
		static const char *const pnames[] = { "src_port", "dst_port", "queue", "cpu", "location", NULL };
		for (int k = 0; pnames[k]; k++) {
			json_t *x = json_object_get(e, pnames[k]);
			long max = k < 2 ? 65535 : k == 3 ? NT_MAX_CPUS - 1 : 65535;
			if (x && (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > max)) {
				snprintf(path, sizeof(path), "%s.%s", base, pnames[k]);
				nt_sc_error(c, path, "'%s' must be an integer from 0 to %ld", pnames[k], max);
				ok = false;
			}
		}
		json_t *act = json_object_get(e, "action"), *rep = json_object_get(e, "replace");
		if (act && (!json_is_string(act) || strcmp(json_string_value(act), "drop"))) {
			snprintf(path, sizeof(path), "%s.action", base);
			nt_sc_error(c, path, "'action' can only be \"drop\"; steer to a queue with 'queue' or 'cpu'");
			ok = false;
		}
		if (rep && !json_is_boolean(rep)) {
			snprintf(path, sizeof(path), "%s.replace", base);
			nt_sc_error(c, path, "'replace' must be true or false");
		}
		json_t *cx = json_object_get(e, "context");
		if (cx && (!json_is_integer(cx) || json_integer_value(cx) < 1 || json_integer_value(cx) > 65535)) {
			snprintf(path, sizeof(path), "%s.context", base);
			nt_sc_error(c, path, "'context' is an RSS context id from 1 to 65535");
			ok = false;
		} else if (cx && count_fields(e, dests) != (json_object_get(e, "queue") ? 1 : 0)) {
			nt_sc_error(c, base, "with 'context' give at most 'queue' (an offset into the context's queues), "
					     "not 'queues', 'cpu', 'cpus' or 'action'");
			ok = false;
		} else if (!cx && count_fields(e, dests) != 1) {
			nt_sc_error(c, base, "give exactly one of 'queue', 'queues', 'cpu', 'cpus' and 'action'");
			ok = false;
		}
		if (json_object_get(e, "dst_port") && json_object_get(e, "dst_ports")) {
			nt_sc_error(c, base, "give 'dst_port' or 'dst_ports', not both");
			ok = false;
		}
		int np = entry_ports(e, ports, MAX_ENTRY_RULES);
		if (np < 0) {
			snprintf(path, sizeof(path), "%s.dst_ports", base);
			nt_sc_error(c, path, "'dst_ports' must be ascending ports or ranges of 0-65535 (\"5002-5005\"), "
					     "at most %d",
				    MAX_ENTRY_RULES);
			ok = false;
		}
		bool cpus;
		int nd = entry_dests(e, dest, MAX_ENTRY_RULES, &cpus);
		if (nd < 0) {
			snprintf(path, sizeof(path), "%s.%s", base, json_object_get(e, "cpus") ? "cpus" : "queues");
			nt_sc_error(c, path, "not a list of numbers (\"1-4\"), at most %d", MAX_ENTRY_RULES);
			ok = false;
		}
		if (!ok || !ft)
			continue;
		/* The addresses, through the value's own parser. */
		static const char *const ips[] = { "src_ip", "dst_ip", NULL };
		for (int k = 0; ips[k]; k++) {
			const char *ip = json_string_value(json_object_get(e, ips[k]));
			nt_flow_rule fr;
			snprintf(text, sizeof(text), "%s %s %s drop", ft, k ? "dst-ip" : "src-ip", ip ? ip : "");
			if (ip && nt_flow_rule_parse(text, &fr, why, sizeof(why)) < 0) {
				snprintf(path, sizeof(path), "%s.%s", base, ips[k]);
				nt_sc_error(c, path, "%s", why);
				ok = false;
			}
		}
		if (!ok)
			continue;
		if (!iface || !nt_iface_pattern_valid(iface))
			continue;
		snprintf(path, sizeof(path), "%s.interface", base);
		if (!nt_sc_iface(c, iface, path, false) || !nic_named(c->t, iface))
			continue;
		/* A NIC named outright: its table, its queues, its room. */
		nt_flow_table tab;
		int r = nt_flows_read(&c->t->ctx, iface, &tab);
		if (r == -EOPNOTSUPP) {
			nt_sc_error(c, path, "%s has no flow rule table: its driver answers no ETHTOOL_GRXCLSRLCNT "
					     "(no ntuple filters)",
				    iface);
			continue;
		}
		if (r < 0) {
			nt_sc_error(c, path, "%s: flow rules cannot be read: %s", iface, nt_strerror(r));
			continue;
		}
		if (cx)
			validate_context(c, e, base, iface, (uint32_t)json_integer_value(cx));
		for (int k = 0; !cpus && k < nd; k++) {
			if (dest[k] >= 0 && (uint32_t)dest[k] >= tab.rings) {
				snprintf(path, sizeof(path), "%s.%s", base, json_object_get(e, "queue") ? "queue" : "queues");
				nt_sc_error(c, path, "queue %ld is beyond %s's %u RX queues", dest[k], iface, tab.rings);
				break;
			}
		}
		json_int_t have = json_integer_value(json_object_get(per_nic, iface)) + np;
		json_t *loc = json_object_get(e, "location");
		if (loc)
			have = json_integer_value(loc) + np;
		json_object_set_new(per_nic, iface, json_integer(have));
		if ((uint32_t)have > tab.size)
			nt_sc_error(c, base, "%s's rules would take %lld locations; its rule table holds %u", iface,
				    (long long)have, tab.size);
		nt_flow_table_free(&tab);
	}
	json_decref(per_nic);
}

/* The RX queue of NIC whose IRQ P places on CPU alone, or -1. */
static int queue_on_cpu(nt_section_plan *p, const nt_nic *nic, int cpu)
{
	int nrx = 0, ntx = 0;
	char target[16];
	if (nt_queues_count(&p->t->ctx, nic->name, &nrx, &ntx) < 0)
		return -1;
	for (int q = 0; q < nrx; q++) {
		int idx = nt_plan_queue_irq(p->reads, p->t, nic, q, false);
		if (idx < 0)
			continue;
		snprintf(target, sizeof(target), "%d", p->t->irqs[idx].irq);
		const nt_desired *d = nt_desire_get(p, &nt_setting_irq_affinity, target);
		if (d && nt_cpuset_count(&d->value.cpus) == 1 && nt_cpuset_isset(&d->value.cpus, cpu))
			return q;
	}
	return -1;
}

/* "IFACE/rx-ntuple-filter" (ethtool's ntuple) "on" when the feature kind is
 * there and the NIC has it off. */
static int desire_ntuple(nt_section_plan *p, const nt_nic *nic, const char *path)
{
	const nt_setting_kind *fk = nt_setting_find("feature");
	char target[NT_TARGET_MAX];
	nt_value cur, on;
	if (!fk)
		return 0;
	snprintf(target, sizeof(target), "%s/rx-ntuple-filter", nic->name);
	if (fk->parse("on", &on) < 0 || fk->read(&p->t->ctx, NULL, target, &cur) < 0 || fk->equal(&cur, &on))
		return 0;
	nt_desire_warn(p, "%s: ntuple is off; the plan turns it on for its flow rules", nic->name);
	return nt_desire_put(p, fk, target, nic->name, &on, path);
}

/* The plan names the rules of each NIC in NICS (name -> anything) that
 * the profile does not ask for: they are left as they are. */
static void warn_foreign(nt_section_plan *p, const json_t *nics)
{
	const char *name;
	json_t *x;
	char target[NT_TARGET_MAX], text[NT_FLOW_TEXT_MAX], list[512];
	json_object_foreach((json_t *)nics, name, x) {
		nt_flow_table tab;
		int n = 0;
		size_t at = 0;
		list[0] = '\0';
		if (nt_flows_read(&p->t->ctx, name, &tab) < 0)
			continue;
		for (int i = 0; i < tab.n; i++) {
			snprintf(target, sizeof(target), "%s/loc-%u", name, tab.rules[i].location);
			if (nt_desire_get(p, &nt_setting_flow, target))
				continue;
			nt_flow_rule_format(&tab.rules[i], text, sizeof(text));
			int w = snprintf(list + at, sizeof(list) - at, "%s%u '%s'", n ? ", " : "", tab.rules[i].location,
					 text);
			if (w > 0 && (size_t)w < sizeof(list) - at)
				at += (size_t)w;
			n++;
		}
		if (n)
			nt_desire_warn(p, "%s: %d flow rule%s this profile does not ask for, left as they are (location %s)",
				       name, n, n == 1 ? "" : "s", list);
		nt_flow_table_free(&tab);
	}
}

static int desire_flows(nt_section_plan *p, const json_t *arr)
{
	size_t i;
	json_t *e;
	char path[NT_JSONPATH_MAX], target[NT_TARGET_MAX], text[NT_VALUE_MAX];
	long ports[MAX_ENTRY_RULES], dest[MAX_ENTRY_RULES];
	/* The next free location of each NIC the profile sets rules on. */
	json_t *next = json_object();
	int r = next ? 0 : -ENOMEM;

	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		bool replace = json_is_true(json_object_get(e, "replace")), cpus;
		int np = entry_ports(e, ports, MAX_ENTRY_RULES), nd = entry_dests(e, dest, MAX_ENTRY_RULES, &cpus);
		json_int_t context = json_integer_value(json_object_get(e, "context"));
		if (context && !json_object_get(e, "queue"))
			dest[0] = 0; /* the context's first queue, no offset */
		snprintf(path, sizeof(path), "$.flows[%zu]", i);
		for (int k = 0; r == 0 && k < p->t->nnics && np > 0 && nd > 0; k++) {
			const nt_nic *nic = &p->t->nics[k];
			nt_flow_table tab;
			if (!nt_iface_match(pattern, nic->name) || nic->is_bond)
				continue;
			if (nt_flows_read(&p->t->ctx, nic->name, &tab) < 0) {
				/* A glob's NIC without a table; a named one was refused. */
				nt_desire_warn(p, "%s: no flow rule table; left out", nic->name);
				continue;
			}
			nt_flow_table_free(&tab);
			json_t *loc = json_object_get(e, "location");
			json_int_t at = loc ? json_integer_value(loc) : json_integer_value(json_object_get(next, nic->name));
			if ((r = desire_ntuple(p, nic, path)) < 0)
				break;
			/* The RX queues a channels step of this profile leaves, -1
			 * for none. */
			int rx_left = nt_channels_rx_planned(p, nic->name, NULL);
			for (int n = 0; n < np && r == 0; n++) {
				long d = dest[n % nd];
				nt_value v;
				memset(&v, 0, sizeof(v));
				snprintf(target, sizeof(target), "%s/loc-%lld", nic->name, (long long)at + n);
				if (entry_match_text(e, ports[n], text, sizeof(text)) < 0) {
					r = -ENOSPC;
					break;
				}
				int q = (int)d;
				if (cpus && (q = queue_on_cpu(p, nic, (int)d)) < 0) {
					snprintf(v.text, sizeof(v.text),
						 "%c%s: no RX queue's IRQ is placed on CPU %ld alone by this profile's "
						 "irq_affinity, so 'cpu' %ld names no queue",
						 REFUSAL, nic->name, d, d);
				} else if (d >= 0 && rx_left >= 0 && q >= rx_left) {
					/* The check measures the queue against those there
					 * now; the channels step, after the rule, would be
					 * refused with it in place. */
					snprintf(v.text, sizeof(v.text),
						 "%c%s: the rule sends flows to RX queue %d, and this profile's channels "
						 "step leaves %d RX queues (0-%d)",
						 REFUSAL, nic->name, q, rx_left, rx_left - 1);
				} else {
					char rule[NT_VALUE_MAX * 2];
					if (d < 0)
						snprintf(rule, sizeof(rule), "%s drop%s", text, replace ? REPLACE : "");
					else if (context)
						snprintf(rule, sizeof(rule), "%s context %lld queue %d%s", text, (long long)context,
							 q, replace ? REPLACE : "");
					else
						snprintf(rule, sizeof(rule), "%s queue %d%s", text, q, replace ? REPLACE : "");
					if (flow_parse(rule, &v) < 0)
						snprintf(v.text, sizeof(v.text), "%c'%.200s' is not a flow rule", REFUSAL, rule);
				}
				r = nt_desire_put(p, &nt_setting_flow, target, nic->name, &v, path);
			}
			json_object_set_new(next, nic->name, json_integer(at + np));
		}
	}
	if (r == 0)
		warn_foreign(p, next);
	json_decref(next);
	return r;
}

static const nt_profile_section section_flows = {
	.key = "flows",
	.type = JSON_ARRAY,
	.validate = validate_flows,
	.desire = desire_flows,
	/* After irq_affinity's placement (pass 0), which "cpu" follows. */
	.pass = 1,
};

/* ---- the per-NIC view ---- */

json_t *nt_nic_flows_json(const nt_topology *t, const nt_nic *n)
{
	nt_flow_table tab;
	nt_host_napi napi;
	int napi_read = 0; /* 0 not yet, 1 read, -1 failed */
	char text[NT_FLOW_TEXT_MAX], cpus[64];
	if (nt_flows_read(&t->ctx, n->name, &tab) < 0)
		return json_null();
	json_t *rules = json_array();
	json_t *o = json_pack("{s:I, s:I, s:b, s:o}", "size", (json_int_t)tab.size, "rx_queues",
			      (json_int_t)tab.rings, "driver_picks_location", tab.loc_special, "rules", rules);
	/* Whether rules apply at all: the ntuple feature, and whether the
	 * driver lets it change (null when the features cannot be read). */
	nt_features *fs = malloc(sizeof(*fs));
	json_t *nt = json_null();
	if (o && fs && nt_features_get(NULL, &t->ctx, n->name, fs) == 0)
		for (int i = 0; i < fs->n; i++)
			if (!strcmp(fs->f[i].name, "rx-ntuple-filter")) {
				json_decref(nt);
				nt = json_pack("{s:b, s:b}", "on", fs->f[i].active, "changeable", !fs->f[i].fixed);
			}
	free(fs);
	if (o)
		json_object_set_new(o, "ntuple", nt ? nt : json_null());
	for (int i = 0; o && i < tab.n; i++) {
		const nt_flow_rule *fr = &tab.rules[i];
		nt_flow_rule_format(fr, text, sizeof(text));
		const char *ft = nt_flow_type_name(fr->type);
		json_t *x = json_pack("{s:I, s:s, s:s}", "location", (json_int_t)fr->location, "flow_type",
				      ft ? ft : "other", "rule", text);
		if (!x)
			break;
		if (fr->drop) {
			json_object_set_new(x, "action", json_string("drop"));
		} else if (fr->context) {
			/* Spread by the context's table: no one queue, no one IRQ. */
			json_object_set_new(x, "context", json_integer(fr->context));
			json_object_set_new(x, "queue_offset", json_integer(fr->queue));
		} else {
			json_object_set_new(x, "queue", json_integer(fr->queue));
			/* The IRQ that serves the queue now and the CPU it runs on:
			 * the family's map where it answers (one read, at the first
			 * rule with a queue), else the IRQ names. */
			if (!napi_read)
				napi_read = nt_host_napi_read(t, n, NT_NAPI_NO_TASKS, &napi) == 0 ? 1 : -1;
			int idx = nt_host_napi_queue_irq(napi_read > 0 ? &napi : NULL, t, n, (int)fr->queue, false, NULL);
			if (idx >= 0) {
				const nt_irq *irq = &t->irqs[idx];
				json_object_set_new(x, "irq", json_integer(irq->irq));
				const nt_cpuset *s = irq->has_effective ? &irq->effective : &irq->affinity;
				if (nt_cpulist_format(s, cpus, sizeof(cpus)) >= 0)
					json_object_set_new(x, "irq_cpus", json_string(cpus));
			}
		}
		json_array_append_new(rules, x);
	}
	if (napi_read)
		nt_host_napi_free(&napi);
	nt_flow_table_free(&tab);
	return o;
}

const nt_setting_module nt_module_flows = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_flow, NULL },
	.sections = (const nt_profile_section *const[]){ &section_flows, NULL },
};
