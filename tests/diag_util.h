/* SPDX-License-Identifier: Apache-2.0 */
/* What the diagnostics tests (test_diagnose*.c) share: host models built
 * by hand (nodes, NICs, IRQs, bonds, sysctls) and reading the result
 * (findings by id and subject, their shape and citations). */
#ifndef NT_TEST_DIAG_UTIL_H
#define NT_TEST_DIAG_UTIL_H

#include "diagnose/diagnose.h"
#include "host/dropwin.h"
#include "harness.h"

/* ---- building a host model by hand ---- */

/* NODES: cpulist per node, node ids 0..nnodes-1; NCPUS possible CPUs. */
__attribute__((unused)) static nt_topology *topo_new(int ncpus, int nnodes, const char *const *nodes)
{
	nt_topology *t = calloc(1, sizeof(*t));
	t->ncpus_possible = ncpus;
	t->cpu_node = malloc(sizeof(int) * (size_t)ncpus);
	for (int c = 0; c < ncpus; c++)
		t->cpu_node[c] = -1;
	t->nodes = calloc((size_t)nnodes, sizeof(*t->nodes));
	t->nnodes = nnodes;
	for (int n = 0; n < nnodes; n++) {
		t->nodes[n].id = n;
		if (nt_cpulist_parse(nodes[n], &t->nodes[n].cpus) != 0)
			abort();
		for (int c = 0; c < ncpus; c++)
			if (nt_cpuset_isset(&t->nodes[n].cpus, c))
				t->cpu_node[c] = n;
		nt_cpuset_or(&t->cpus_online, &t->cpus_online, &t->nodes[n].cpus);
	}
	t->have_irq_info = true;
	return t;
}

__attribute__((unused)) static int add_nic(nt_topology *t, const char *name, int node, nt_node_source src, long speed)
{
	t->nics = realloc(t->nics, sizeof(*t->nics) * (size_t)(t->nnics + 1));
	nt_nic *n = &t->nics[t->nnics];
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->numa_node = node;
	n->numa_node_source = src;
	n->speed_mbps = speed;
	snprintf(n->operstate, sizeof(n->operstate), "up");
	snprintf(n->driver, sizeof(n->driver), "tg3");
	return t->nnics++;
}

/* An IRQ of NIC (index, or -1) with affinity cpulist AFF. */
__attribute__((unused)) static int add_irq(nt_topology *t, int nic, int irqnum, const char *aff)
{
	t->irqs = realloc(t->irqs, sizeof(*t->irqs) * (size_t)(t->nirqs + 1));
	nt_irq *q = &t->irqs[t->nirqs];
	memset(q, 0, sizeof(*q));
	q->irq = irqnum;
	q->nic = nic;
	q->node = -1;
	q->queue = -1;
	if (aff) {
		if (nt_cpulist_parse(aff, &q->affinity) != 0)
			abort();
		q->has_affinity = true;
	}
	if (nic >= 0) {
		nt_nic *n = &t->nics[nic];
		snprintf(q->name, sizeof(q->name), "%s", n->name);
		n->irqs = realloc(n->irqs, sizeof(int) * (size_t)(n->nirqs + 1));
		n->irqs[n->nirqs++] = t->nirqs;
	}
	return t->nirqs++;
}

__attribute__((unused)) static void add_bond(nt_topology *t, const char *name, const char *mode, int mode_num,
	const char *policy, int nslaves, const char *const *slaves)
{
	t->bonds = realloc(t->bonds, sizeof(*t->bonds) * (size_t)(t->nbonds + 1));
	nt_bond *b = &t->bonds[t->nbonds++];
	memset(b, 0, sizeof(*b));
	snprintf(b->name, sizeof(b->name), "%s", name);
	snprintf(b->mode, sizeof(b->mode), "%s", mode);
	b->mode_num = mode_num;
	snprintf(b->xmit_hash_policy, sizeof(b->xmit_hash_policy), "%s", policy);
	b->slaves = calloc((size_t)nslaves + 1, sizeof(*b->slaves));
	b->nslaves = nslaves;
	for (int i = 0; i < nslaves; i++)
		snprintf(b->slaves[i], sizeof(b->slaves[i]), "%s", slaves[i]);
}

__attribute__((unused)) static void set_sysctl(nt_topology *t, const char *key, const char *value)
{
	t->sysctls = realloc(t->sysctls, sizeof(*t->sysctls) * (size_t)(t->nsysctls + 1));
	nt_sysctl_value *s = &t->sysctls[t->nsysctls++];
	memset(s, 0, sizeof(*s));
	s->key = key;
	snprintf(s->value, sizeof(s->value), "%s", value);
	s->present = true;
}

__attribute__((unused)) static void topo_free(nt_topology *t)
{
	for (int i = 0; i < t->nnics; i++)
		free(t->nics[i].irqs);
	for (int i = 0; i < t->nbonds; i++)
		free(t->bonds[i].slaves);
	free(t->nics);
	free(t->irqs);
	free(t->bonds);
	free(t->sysctls);
	free(t->nodes);
	free(t->cpu_node);
	free(t);
}

/* ---- reading the result ---- */

__attribute__((unused)) static json_t *diagnose(const nt_topology *t, int rtt_ms)
{
	nt_diag_options o = { .rtt_ms = rtt_ms };
	json_t *r = nt_diagnose(t, rtt_ms ? &o : NULL);
	CHECK(r != NULL);
	CHECK(json_is_array(json_object_get(r, "findings")));
	return r;
}

__attribute__((unused)) static int count_id(const json_t *r, const char *id)
{
	int n = 0;
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(r, "findings"), i, f)
		if (strcmp(json_string_value(json_object_get(f, "id")), id) == 0)
			n++;
	return n;
}

__attribute__((unused)) static json_t *find(const json_t *r, const char *id, const char *subject)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(r, "findings"), i, f)
		if (strcmp(json_string_value(json_object_get(f, "id")), id) == 0 &&
			strcmp(json_string_value(json_object_get(f, "subject")), subject) == 0)
			return f;
	return NULL;
}

__attribute__((unused)) static const json_t *sget(const json_t *o, const char *path)
{
	/* "a.b.0.c": object keys and array indexes */
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	const json_t *cur = o;
	for (char *save, *tok = strtok_r(buf, ".", &save); tok && cur;
		tok = strtok_r(NULL, ".", &save)) {
		if (json_is_array(cur))
			cur = json_array_get(cur, (size_t)atoi(tok));
		else
			cur = json_object_get(cur, tok);
	}
	return cur;
}

#define J(o, path) ((const json_t *)sget((o), (path)))
#define JS(o, path) json_string_value(J(o, path))
#define JI(o, path) json_integer_value(J(o, path))

/* Every finding has the documented shape. */
__attribute__((unused)) static void check_shape(const json_t *r)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(r, "findings"), i, f) {
		const char *sev = JS(f, "severity");
		CHECK(json_is_string(json_object_get(f, "id")));
		CHECK(sev && (!strcmp(sev, "error") || !strcmp(sev, "warning") || !strcmp(sev, "info")));
		CHECK(json_is_string(json_object_get(f, "subject")));
		CHECK(json_is_string(json_object_get(f, "message")) && strlen(JS(f, "message")) > 10);
		/* Messages cite the repository's own pages, never documents
		 * outside it. */
		CHECK_MSG(!JS(f, "message") || !strstr(JS(f, "message"), "seed"),
			"message cites a seed: %s", JS(f, "message"));
		CHECK(json_is_object(json_object_get(f, "evidence")));
		json_t *fix = json_object_get(f, "fix");
		CHECK(fix && (json_is_null(fix) || json_is_object(fix)));
	}
}

/* F's message ends by citing ANCHOR of docs/field-reports.md. */
__attribute__((unused)) static void check_cites(const json_t *f, const char *anchor)
{
	char want[128];
	snprintf(want, sizeof(want), "see docs/field-reports.md#%s)", anchor);
	const char *m = f ? JS(f, "message") : NULL;
	CHECK_MSG(m && strstr(m, want), "message does not cite %s: %s", want, m ? m : "(none)");
}

__attribute__((unused)) static const char *const two_nodes[] = { "0-3", "4-7" };

#endif
