/* SPDX-License-Identifier: Apache-2.0 */
/* Reading the host model. See topology.h for the cost model: one read of
 * /proc/interrupts, one pass over /proc/irq, one pass over /sys/class/net.
 *
 * This file is the read's entry: the static part read and copied, the
 * dynamic part read in two halves side by side (the IRQ half in
 * topology_irq.c, the NIC half in topology_nic.c, the host-wide parts in
 * topology_machine.c) and their problems put in the order of one read in
 * turn. The files share host/topology_int.h. */
#include "host/topology.h"
#include "host/topology_int.h"
#include "kernel/ethtool.h"
#include "kernel/kernel.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nt_topology_problem(nt_topology *t, const char *path, int err)
{
	json_t *p = json_pack("{s:s, s:s}", "path", path, "error", nt_strerror(err));
	if (p)
		json_array_append_new(t->problems, p);
}

void nt_tp_problemf(nt_topology *t, int err, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	nt_topology_problem(t, path, err);
}

/* Append BASE's static problems [FROM, FROM+N) to T's: each is listed
 * where the single read of the past listed it. */
void nt_tp_add_static_problems(nt_topology *t, const nt_topology *base, int from, int n)
{
	for (int i = from; i < from + n; i++)
		json_array_append_new(t->problems, json_deep_copy(json_array_get(base->problems, (size_t)i)));
}

/* ------------------------------------------------------------------ entry */

int nt_topology_read_static(const nt_ctx *ctx, nt_topology **out)
{
	nt_topology *t = calloc(1, sizeof(*t));
	int r;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->ctx = *ctx;
	t->ctx.host_cache = NULL;
	t->problems = json_array();
	if (!t->problems) {
		r = -ENOMEM;
		goto fail;
	}
	if ((r = nt_tp_read_cpus(t)) < 0)
		goto fail;
	if ((r = nt_tp_read_nodes(t)) < 0)
		goto fail;
	t->nproblems_cpus = (int)json_array_size(t->problems);
	if ((r = nt_tp_read_nics_static(t)) < 0)
		goto fail;
	*out = t;
	return 0;
fail:
	nt_topology_free(t);
	return r;
}

static int *copy_ints(const int *a, int n)
{
	if (!a || n <= 0)
		return NULL;
	int *c = malloc(sizeof(int) * (size_t)n);
	if (c)
		memcpy(c, a, sizeof(int) * (size_t)n);
	return c;
}

/* A new topology holding BASE's static part, ready for the dynamic one. */
static int copy_static(const nt_topology *base, nt_topology **out)
{
	nt_topology *t = calloc(1, sizeof(*t));
	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->ctx = base->ctx;
	t->ncpus_possible = base->ncpus_possible;
	t->cpus_online = base->cpus_online;
	t->cpus_present = base->cpus_present;
	t->nodes_from_proc = base->nodes_from_proc;
	t->nproblems_cpus = base->nproblems_cpus;
	t->problems = json_array();
	if (t->problems)
		nt_tp_add_static_problems(t, base, 0, base->nproblems_cpus);
	t->cpu_node = copy_ints(base->cpu_node, base->ncpus_possible);
	t->cpu_core = copy_ints(base->cpu_core, base->ncpus_possible);
	t->cpu_package = copy_ints(base->cpu_package, base->ncpus_possible);
	if (!t->problems || (base->ncpus_possible > 0 && (!t->cpu_node || !t->cpu_core || !t->cpu_package)))
		goto nomem;
	if (base->nnodes) {
		if (!(t->nodes = calloc((size_t)base->nnodes, sizeof(nt_numa_node))))
			goto nomem;
		for (int i = 0; i < base->nnodes; i++) {
			t->nodes[i] = base->nodes[i];
			t->nodes[i].distances = copy_ints(base->nodes[i].distances, base->nodes[i].ndist);
			if (base->nodes[i].ndist > 0 && !t->nodes[i].distances) {
				t->nodes[i].ndist = 0;
				t->nnodes = i + 1;
				goto nomem;
			}
		}
		t->nnodes = base->nnodes;
	}
	if (base->nnics) {
		if (!(t->nics = malloc(sizeof(nt_nic) * (size_t)base->nnics)))
			goto nomem;
		memcpy(t->nics, base->nics, sizeof(nt_nic) * (size_t)base->nnics);
		for (int i = 0; i < base->nnics; i++) {
			t->nics[i].irqs = NULL;
			t->nics[i].nirqs = 0;
			t->nics[i].reported = NULL;
		}
		t->nnics = base->nnics;
	}
	*out = t;
	return 0;
nomem:
	nt_topology_free(t);
	return -ENOMEM;
}

/* Move the N problems from index FROM to the end: what was read beside
 * the parse is listed after what came of the parse, as if read in turn. */
static int problems_to_end(nt_topology *t, size_t from, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		json_t *p = json_incref(json_array_get(t->problems, from));
		if (!p || json_array_remove(t->problems, from) < 0 || json_array_append_new(t->problems, p) < 0)
			return -ENOMEM;
	}
	return 0;
}

int nt_topology_read_dynamic(const nt_topology *base, nt_irq_files *files, nt_topology **out)
{
	nt_topology *t = NULL;
	nt_ethtool *eh = NULL;
	nt_tp_irq_half ih = { .files = files };
	pthread_t irq_thread;
	bool threaded;
	int r;

	*out = NULL;
	if ((r = copy_static(base, &t)) < 0)
		return r;
	/* The NIC half asks each fixture NIC's document half a dozen
	 * questions: parsed once for the read (nothing on a live root). */
	nt_kernel_read_begin(&t->ctx);
	const nt_ctx *ctx = &t->ctx;
	nt_read_str(ctx, t->hostname, sizeof(t->hostname), "/proc/sys/kernel/hostname");
	nt_read_str(ctx, t->kernel, sizeof(t->kernel), "/proc/sys/kernel/osrelease");
	nt_kernel_netns(ctx, t->netns, sizeof(t->netns)); /* "" on a fixture root */
	nt_tp_read_meminfo(t);
	ih.t = t;
	pthread_mutex_init(&ih.mu, NULL);
	pthread_cond_init(&ih.cv, NULL);
	threaded = pthread_create(&irq_thread, NULL, nt_tp_irq_half_main, &ih) == 0;
	if (!threaded)
		nt_tp_irq_half_main(&ih);

	size_t nic_from = json_array_size(t->problems);
	/* One ethtool socket for every NIC's questions, not one per NIC and kind. */
	r = nt_ethtool_open(ctx, &eh);
	if (r < 0)
		nt_topology_problem(t, "ethtool", r);
	nt_tp_add_static_problems(t, base, base->nproblems_cpus, base->nproblems_enum);
	r = nt_tp_read_nics_dynamic(t, base, eh);
	if (r == 0)
		r = nt_topology_report(t, eh, nt_nic_reporters);
	nt_ethtool_close(eh);
	eh = NULL;
	size_t nic_problems = json_array_size(t->problems) - nic_from;

	/* What the IRQ half met is listed before what the NICs did, as if
	 * read in turn. */
	int ir = nt_tp_finish_irq_half(t, &ih, irq_thread, threaded);
	nt_kernel_read_end(&t->ctx);
	if (r == 0)
		r = ir;
	if (r < 0)
		goto fail;
	if ((r = problems_to_end(t, nic_from, nic_problems)) < 0)
		goto fail;
	if ((r = nt_tp_read_sysctls(t)) < 0)
		goto fail;
	nt_tp_read_irqbalance(t, files ? files->irqbalance : NULL);
	*out = t;
	return 0;
fail:
	nt_topology_free(t);
	return r;
}

void nt_topology_free(nt_topology *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nnodes; i++)
		free(t->nodes[i].distances);
	free(t->nodes);
	free(t->cpu_node);
	free(t->cpu_core);
	free(t->cpu_package);
	for (int i = 0; i < t->nnics; i++) {
		free(t->nics[i].irqs);
		json_decref(t->nics[i].reported);
	}
	free(t->nics);
	free(t->irq_counts);
	free(t->irqs);
	free(t->irq_cpu_columns);
	for (int i = 0; i < t->nbonds; i++)
		free(t->bonds[i].slaves);
	free(t->bonds);
	free(t->sysctls);
	json_decref(t->problems);
	free(t);
}
