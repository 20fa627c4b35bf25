/* SPDX-License-Identifier: Apache-2.0 */
#include "host/rates.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int nt_rates_sample(const nt_ctx *ctx, nt_irq_sample *s)
{
	char *text = NULL;
	int r;

	memset(s, 0, sizeof(*s));
	r = nt_read_all(ctx, &text, "/proc/interrupts");
	if (r < 0)
		return r;
	s->t_ms = mono_ms();
	r = nt_interrupts_parse(text, &s->ints);
	free(text);
	if (r < 0)
		return r;
	text = NULL;
	/* softirqs are extra evidence; their absence is not an error. */
	if (nt_read_all(ctx, &text, "/proc/softirqs") >= 0) {
		if (nt_softirqs_parse(text, &s->soft_cpus, &s->net_rx, &s->net_tx, &s->nsoft) < 0)
			s->nsoft = 0;
		free(text);
	}
	return 0;
}

void nt_rates_sample_free(nt_irq_sample *s)
{
	nt_interrupts_free(&s->ints);
	free(s->soft_cpus);
	free(s->net_rx);
	free(s->net_tx);
	memset(s, 0, sizeof(*s));
}

/* A counter that went backwards (CPU hot-unplug folds counts) counts 0. */
static uint64_t delta(uint64_t a, uint64_t b)
{
	return b >= a ? b - a : 0;
}

json_t *nt_rates_compute(const nt_topology *t, const nt_irq_sample *a, const nt_irq_sample *b)
{
	double secs = (b->t_ms - a->t_ms) / 1000.0;
	int ncpu = b->ints.ncols;
	double *cpu_irq = NULL, *node_irq = NULL;
	json_t *out = NULL, *irqs = NULL, *cpus = NULL, *nodes = NULL, *off = NULL;
	int maxnode = -1;

	if (secs <= 0)
		secs = 1e-3;
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].id > maxnode)
			maxnode = t->nodes[i].id;
	cpu_irq = calloc((size_t)(ncpu ? ncpu : 1), sizeof(double));
	node_irq = calloc((size_t)(maxnode + 2), sizeof(double));
	irqs = json_array();
	cpus = json_array();
	nodes = json_array();
	off = json_array();
	if (!cpu_irq || !node_irq || !irqs || !cpus || !nodes || !off)
		goto fail;

	for (int i = 0; i < b->ints.nlines; i++) {
		const nt_irq_line *lb = &b->ints.lines[i];
		const nt_irq_line *la = nt_interrupts_line(&a->ints, lb->irq);
		if (!la)
			continue;
		const nt_irq *q = nt_topology_irq(t, lb->irq);
		const nt_nic *owner = q && q->nic >= 0 ? &t->nics[q->nic] : NULL;
		json_t *per_cpu = json_object();
		double total = 0, off_node = 0;
		for (int c = 0; c < ncpu; c++) {
			int cpu = b->ints.cpus[c];
			int ca = nt_interrupts_column(a->ints.cpus, a->ints.ncols, cpu);
			if (ca < 0)
				continue;
			uint64_t d = delta(la->counts[ca], lb->counts[c]);
			if (!d)
				continue;
			double rate = (double)d / secs;
			char k[16];
			snprintf(k, sizeof(k), "%d", cpu);
			json_object_set_new(per_cpu, k, json_real(rate));
			total += rate;
			cpu_irq[c] += rate;
			int node = nt_topology_cpu_node(t, cpu);
			node_irq[node >= 0 ? node : maxnode + 1] += rate;
			if (owner && owner->numa_node >= 0 && node != owner->numa_node) {
				off_node += rate;
				json_array_append_new(off, json_pack("{s:i, s:s, s:s, s:i, s:i, s:i, s:f}", "irq", lb->irq,
								     "name", lb->name, "nic", owner->name, "nic_node",
								     owner->numa_node, "cpu", cpu, "cpu_node", node,
								     "per_second", rate));
			}
		}
		json_array_append_new(irqs, json_pack("{s:i, s:s, s:o, s:o, s:f, s:f}", "irq", lb->irq, "name", lb->name,
						      "owner", owner ? json_string(owner->name) : json_null(),
						      "per_cpu", per_cpu, "per_second", total,
						      "off_node_per_second", off_node));
	}
	for (int c = 0; c < ncpu; c++) {
		int cpu = b->ints.cpus[c];
		json_t *o = json_pack("{s:i, s:i, s:f}", "cpu", cpu, "node", nt_topology_cpu_node(t, cpu), "irq_per_second",
				      cpu_irq[c]);
		int sa = a->nsoft ? nt_interrupts_column(a->soft_cpus, a->nsoft, cpu) : -1;
		int sb = b->nsoft ? nt_interrupts_column(b->soft_cpus, b->nsoft, cpu) : -1;
		if (sa >= 0 && sb >= 0) {
			json_object_set_new(o, "net_rx_per_second",
					    json_real((double)delta(a->net_rx[sa], b->net_rx[sb]) / secs));
			json_object_set_new(o, "net_tx_per_second",
					    json_real((double)delta(a->net_tx[sa], b->net_tx[sb]) / secs));
		} else {
			json_object_set_new(o, "net_rx_per_second", json_null());
			json_object_set_new(o, "net_tx_per_second", json_null());
		}
		json_array_append_new(cpus, o);
	}
	for (int i = 0; i < t->nnodes; i++)
		json_array_append_new(nodes, json_pack("{s:i, s:f}", "node", t->nodes[i].id, "irq_per_second",
						       node_irq[t->nodes[i].id]));
	out = json_pack("{s:f, s:o, s:o, s:o, s:o}", "interval_ms", b->t_ms - a->t_ms, "irqs", irqs, "cpus", cpus,
			"nodes", nodes, "off_node", off);
	irqs = cpus = nodes = off = NULL;
fail:
	json_decref(irqs);
	json_decref(cpus);
	json_decref(nodes);
	json_decref(off);
	free(cpu_irq);
	free(node_irq);
	return out;
}
