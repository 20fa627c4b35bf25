/* SPDX-License-Identifier: Apache-2.0 */
/* `nettune nics IF` as text: the NIC document GET /v1/nics/{name} answers
 * (built by cli/cmd_host.c from the host read), a section per part: the
 * link, each queue's IRQ, steering and NAPI, the per-queue counters, RSS
 * and its contexts, features and flow control, the parameters only
 * ethtool netlink reaches, the flow rules. Prints, never reads. */
#include "cli/nic_view.h"
#include "base/errors.h"
#include "cli/escape.h"
#include "cli/output.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str_or_dash(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	static char num[32];
	if (json_is_integer(v)) {
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
		return num;
	}
	const char *s = json_string_value(v);
	return s ? (s[0] ? s : "(none)") : "-";
}

/* The flow rule table: one line a rule, with the IRQ serving its queue. */
static void flow_rows(const json_t *flows)
{
	size_t i;
	json_t *r;
	if (!json_is_object(flows))
		return;
	json_t *nt = json_object_get(flows, "ntuple");
	printf("\nFlow rules: %lld of %lld locations used, ntuple %s%s\n",
	       (long long)json_array_size(json_object_get(flows, "rules")),
	       (long long)json_integer_value(json_object_get(flows, "size")),
	       !json_is_object(nt) ? "unknown" : json_is_true(json_object_get(nt, "on")) ? "on" : "off",
	       json_is_object(nt) && !json_is_true(json_object_get(nt, "changeable")) ? " (fixed)" : "");
	json_array_foreach(json_object_get(flows, "rules"), i, r) {
		json_t *irq = json_object_get(r, "irq");
		printf("  loc %-4lld %s", (long long)json_integer_value(json_object_get(r, "location")),
		       json_string_value(json_object_get(r, "rule")));
		if (json_is_integer(irq))
			printf("  (IRQ %lld on CPU %s)", (long long)json_integer_value(irq),
			       str_or_dash(r, "irq_cpus"));
		printf("\n");
	}
}

/* The RSS contexts (the "contexts" member of the view's "rss"): one line
 * a context, its queues, its table and the rules sending flows to it. */
static void context_rows(const json_t *cx)
{
	size_t i;
	json_t *c;
	if (!json_is_object(cx))
		return;
	json_t *sup = json_object_get(cx, "supported");
	if (json_is_false(sup)) {
		printf("RSS contexts: not supported: %s\n", str_or_dash(cx, "reason"));
		return;
	}
	if (!json_is_true(sup)) {
		printf("RSS contexts: unknown (the driver answered neither way)\n");
		return;
	}
	printf("RSS contexts: %zu found (%s)\n", json_array_size(json_object_get(cx, "list")),
	       str_or_dash(cx, "listed_from"));
	json_array_foreach(json_object_get(cx, "list"), i, c) {
		char *q = json_dumps(json_object_get(c, "queues"), JSON_COMPACT);
		char *r = json_dumps(json_object_get(c, "rules"), JSON_COMPACT);
		printf("  context %-4lld queues %s, table \"%s\", hfunc %lld, rules at locations %s, input_xfrm %s\n",
		       (long long)json_integer_value(json_object_get(c, "id")), q ? q : "?", str_or_dash(c, "table"),
		       (long long)json_integer_value(json_object_get(c, "hfunc")), r ? r : "?",
		       str_or_dash(c, "input_xfrm"));
		free(q);
		free(r);
	}
}

/* The NAPI entry of NAPIS (the view's "napi" array) with id ID, or NULL. */
static const json_t *napi_entry(const json_t *napis, const json_t *id)
{
	size_t i;
	json_t *e;
	if (!json_is_integer(id))
		return NULL;
	json_array_foreach(napis, i, e)
		if (json_integer_value(json_object_get(e, "id")) == json_integer_value(id))
			return e;
	return NULL;
}

/* One table of queues (DIR "rx" or "tx"): each queue's IRQ, its CPUs and
 * the one serving it, the two members A and B under their titles, and the
 * queue's NAPI with the CPUs its thread may run on (NAPIS: the view's
 * "napi" array). */
static void queue_rows(const json_t *rows, const json_t *napis, const char *dir, const char *atitle,
		       const char *a, const char *btitle, const char *b)
{
	size_t i;
	json_t *e;
	char updir[4] = { (char)(dir[0] - 32), (char)(dir[1] - 32), 0 };
	printf("\n%-6s %6s %-14s %-10s %-14s %-10s %-8s %s\n", updir, "IRQ", "IRQ CPUS", "SERVED BY", atitle, btitle,
	       "NAPI", "THREAD CPUS");
	json_array_foreach(rows, i, e) {
		char irq[16], cpus[64], eff[64], av[64], bv[64], napi[16];
		const json_t *ne = napi_entry(napis, json_object_get(e, "napi_id"));
		snprintf(irq, sizeof(irq), "%s", str_or_dash(e, "irq"));
		snprintf(cpus, sizeof(cpus), "%s", str_or_dash(e, "irq_cpus"));
		snprintf(eff, sizeof(eff), "%s", str_or_dash(e, "effective_cpus"));
		snprintf(av, sizeof(av), "%s", str_or_dash(e, a));
		snprintf(bv, sizeof(bv), "%s", str_or_dash(e, b));
		snprintf(napi, sizeof(napi), "%s", str_or_dash(e, "napi_id"));
		/* No thread: the NAPI runs in softirq, on the CPU of its IRQ. */
		const char *tc = !ne ? "-" : json_is_string(json_object_get(ne, "thread_cpus")) ?
			str_or_dash(ne, "thread_cpus") : json_is_false(json_object_get(ne, "threaded")) ?
			"(softirq)" : "-";
		printf("%s-%-3zu %6s %-14s %-10s %-14s %-10s %-8s %s\n", dir, i, irq, cpus, eff, av, bv, napi, tc);
	}
}

/* The NAPI lines: the device's values, where the queue->IRQ map came
 * from, and each NAPI with its thread. */
static void napi_rows(const json_t *doc)
{
	const json_t *napis = json_object_get(doc, "napi");
	const char *src = json_string_value(json_object_get(doc, "irq_source"));
	size_t i;
	json_t *e;
	if (!src)
		return;
	json_t *th = json_object_get(doc, "threaded");
	printf("\nNAPI: threaded %s, napi_defer_hard_irqs %s, ", json_is_boolean(th) ? (json_is_true(th) ? "on" : "off") : "-",
	       str_or_dash(doc, "napi_defer_hard_irqs"));
	printf("gro_flush_timeout %s ns; queue IRQs from %s\n", str_or_dash(doc, "gro_flush_timeout_ns"),
	       !strcmp(src, "netlink") ? "the kernel (netdev netlink)" : "IRQ names");
	if (!json_array_size(napis))
		return;
	printf("%-8s %6s %-8s %-8s %-14s %-8s %-6s %-12s %s\n", "NAPI", "IRQ", "THREADED", "PID", "THREAD CPUS", "LAST CPU",
	       "DEFER", "GRO FLUSH NS", "IRQ SUSPEND NS");
	json_array_foreach(napis, i, e) {
		char id[16], irq[16], pid[16], cpus[64], last[16], defer[16], gro[24];
		json_t *t = json_object_get(e, "threaded");
		snprintf(id, sizeof(id), "%s", str_or_dash(e, "id"));
		snprintf(irq, sizeof(irq), "%s", str_or_dash(e, "irq"));
		snprintf(pid, sizeof(pid), "%s", str_or_dash(e, "pid"));
		snprintf(cpus, sizeof(cpus), "%s", str_or_dash(e, "thread_cpus"));
		snprintf(last, sizeof(last), "%s", str_or_dash(e, "last_cpu"));
		snprintf(defer, sizeof(defer), "%s", str_or_dash(e, "defer_hard_irqs"));
		snprintf(gro, sizeof(gro), "%s", str_or_dash(e, "gro_flush_timeout_ns"));
		printf("%-8s %6s %-8s %-8s %-14s %-8s %-6s %-12s %s\n", id, irq,
		       json_is_boolean(t) ? (json_is_true(t) ? "yes" : "no") : "-", pid, cpus, last, defer, gro,
		       str_or_dash(e, "irq_suspend_timeout_ns"));
	}
}

/* The per-queue counters (host/qstats.h): a row a queue with its packets
 * and bytes, the other counters the driver keeps after them; or why there
 * are none. */
static void qstats_rows(const json_t *doc, const json_t *qs)
{
	const char *why = json_string_value(json_object_get(doc, "queue_stats_reason"));
	if (!json_object_get(doc, "queue_stats_source"))
		return; /* not read */
	if (why) {
		printf("\nqueue statistics: not supported: %s\n", why);
		return;
	}
	printf("\nqueue statistics (netdev netlink):\n%-7s %14s %18s  %s\n", "QUEUE", "PACKETS", "BYTES", "OTHER");
	for (int d = 0; d < 2; d++) {
		const char *dir = d ? "tx" : "rx";
		size_t i;
		json_t *e;
		json_array_foreach(json_object_get(qs, dir), i, e) {
			json_t *st = json_object_get(e, "stats"), *v;
			char pk[24], by[24], key[16], other[512];
			const char *name;
			size_t len = 0;
			snprintf(key, sizeof(key), "%s_packets", dir);
			snprintf(pk, sizeof(pk), "%s", str_or_dash(st, key));
			snprintf(key, sizeof(key), "%s_bytes", dir);
			snprintf(by, sizeof(by), "%s", str_or_dash(st, key));
			other[0] = '\0';
			json_object_foreach(json_is_object(st) ? (json_t *)st : NULL, name, v) {
				if (!strcmp(name + 3, "packets") || !strcmp(name + 3, "bytes"))
					continue;
				int w = snprintf(other + len, sizeof(other) - len, "%s%s %lld", len ? ", " : "", name,
						 (long long)json_integer_value(v));
				if (w < 0 || (size_t)w >= sizeof(other) - len)
					break;
				len += (size_t)w;
			}
			printf("%s-%-4zu %14s %18s  %s\n", dir, i, pk, by, other[0] ? other : "-");
		}
	}
}

/* "features: rx-gro on, ... (N fixed)" for those the driver can change,
 * and the flow control line. */
static void feature_lines(const json_t *features, const json_t *pause)
{
	const char *name;
	json_t *f;
	int fixed = 0, shown = 0;
	if (json_is_object(features)) {
		printf("\nfeatures:");
		json_object_foreach((json_t *)features, name, f) {
			if (json_is_true(json_object_get(f, "fixed"))) {
				fixed++;
				continue;
			}
			json_t *w = json_object_get(f, "wanted");
			printf("%s %s %s%s", shown++ ? "," : "", name, json_is_true(json_object_get(f, "on")) ? "on" : "off",
			       w ? (json_is_true(w) ? " (wanted on)" : " (wanted off)") : "");
		}
		printf("%s(%d fixed)\n", shown ? " " : " ", fixed);
	}
	if (json_is_object(pause))
		printf("pause: autoneg %s, rx %s, tx %s\n", json_is_true(json_object_get(pause, "autoneg")) ? "on" : "off",
		       json_is_true(json_object_get(pause, "rx")) ? "on" : "off",
		       json_is_true(json_object_get(pause, "tx")) ? "on" : "off");
}

/* The parameters only ethtool netlink reaches (settings/ring_params.c,
 * coalesce.c): one line a field, its value and maximum, or why it is not
 * supported. TITLE heads the block; nothing when OBJ is not an object. */
/* A DIM profile's levels, "1/256 8/256 64/256 128/256 256/256 (usec/pkts)":
 * the fields the driver reports, in the kernel's order. */
static void profile_levels(const char *name, const json_t *levels)
{
	static const char *const keys[] = { "usec", "pkts", "comps" };
	const json_t *first = json_array_get(levels, 0);
	size_t i;
	const json_t *lv;
	printf("  %-20s", name);
	json_array_foreach((json_t *)levels, i, lv) {
		const char *sep = " ";
		for (int k = 0; k < 3; k++)
			if (json_object_get(lv, keys[k])) {
				printf("%s%lld", sep, (long long)json_integer_value(json_object_get(lv, keys[k])));
				sep = "/";
			}
	}
	const char *sep = " (";
	for (int k = 0; k < 3; k++)
		if (json_object_get(first, keys[k])) {
			printf("%s%s", sep, keys[k]);
			sep = "/";
		}
	printf("%s", first && json_object_size(first) ? ")" : "");
}

static void netlink_param_rows(const char *title, const json_t *obj)
{
	const char *name;
	json_t *f;
	if (!json_is_object(obj))
		return;
	printf("\n%s (ethtool netlink):\n", title);
	json_object_foreach((json_t *)obj, name, f) {
		json_t *v = json_object_get(f, "value"), *max = json_object_get(f, "max");
		if (!json_is_true(json_object_get(f, "supported"))) {
			printf("  %-20s not supported: %s\n", name, str_or_dash(f, "reason"));
			continue;
		}
		if (json_is_boolean(v))
			printf("  %-20s %s", name, json_is_true(v) ? "on" : "off");
		else if (json_is_array(v))
			profile_levels(name, v);
		else
			printf("  %-20s %s", name, str_or_dash(f, "value"));
		if (json_is_integer(max))
			printf(" (max %lld)", (long long)json_integer_value(max));
		printf("\n");
	}
}

/* "link: mtu 9000 (68..9216), txqueuelen 1000, qdisc mq fq (mq fq)" from
 * what settings/mtu.c and qdisc.c report, the parts that are there. */
static void link_line(const json_t *doc)
{
	json_t *min = json_object_get(doc, "mtu_min"), *max = json_object_get(doc, "mtu_max");
	json_t *qlen = json_object_get(doc, "txqueuelen");
	const char *qd = json_string_value(json_object_get(doc, "qdisc"));
	const char *kinds = json_string_value(json_object_get(doc, "qdisc_kinds"));
	printf("link: mtu %lld", (long long)json_integer_value(json_object_get(doc, "mtu")));
	if (json_is_integer(min) && json_is_integer(max))
		printf(" (%lld..%lld)", (long long)json_integer_value(min), (long long)json_integer_value(max));
	if (json_is_integer(qlen))
		printf(", txqueuelen %lld", (long long)json_integer_value(qlen));
	if (qd)
		printf(", qdisc %s%s%s%s", qd, kinds && strcmp(kinds, qd) ? " (" : "",
		       kinds && strcmp(kinds, qd) ? kinds : "", kinds && strcmp(kinds, qd) ? ")" : "");
	printf("\n");
}

void nt_cli_nic_view(const nt_nic *n, const json_t *doc, const json_t *qs, int r)
{
	printf("%s: driver %s, node %lld, local cpus %s\n", n->name, n->driver[0] ? n->driver : "-",
	       (long long)n->numa_node, str_or_dash(doc, "local_cpus"));
	link_line(doc);
	if (r < 0)
		printf("queues cannot be read: %s\n", nt_strerror(r));
	queue_rows(json_object_get(qs, "rx"), json_object_get(doc, "napi"), "rx", "RPS CPUS", "rps_cpus", "RFS FLOWS",
		   "rps_flow_cnt");
	queue_rows(json_object_get(qs, "tx"), json_object_get(doc, "napi"), "tx", "XPS CPUS", "xps_cpus", "XPS RXQS",
		   "xps_rxqs");
	napi_rows(doc);
	qstats_rows(doc, qs);
	json_t *rss = json_object_get(doc, "rss");
	if (json_is_object(rss)) {
		char *w = json_dumps(json_object_get(rss, "weights"), JSON_COMPACT);
		char *h = json_dumps(json_object_get(rss, "hash_fields"), JSON_COMPACT);
		printf("\nRSS: indirection table of %lld, weights per RX queue %s, key %lld bytes, hash "
		       "fields %s, input_xfrm %s\n",
		       (long long)json_integer_value(json_object_get(rss, "indir_size")), w ? w : "?",
		       (long long)json_integer_value(json_object_get(rss, "key_size")), h ? h : "?",
		       str_or_dash(rss, "input_xfrm"));
		free(w);
		free(h);
		context_rows(json_object_get(rss, "contexts"));
	}
	feature_lines(json_object_get(doc, "features"), json_object_get(doc, "pause"));
	netlink_param_rows("ring parameters", json_object_get(doc, "ring_params"));
	netlink_param_rows("coalescing parameters", json_object_get(doc, "coalesce_params"));
	flow_rows(json_object_get(doc, "flows"));
}
