/* SPDX-License-Identifier: Apache-2.0 */
/* The host-wide parts of the host model, neither IRQ nor NIC: the CPUs
 * with their cores and packages and the NUMA nodes with their distances
 * (the static part), and what the dynamic part reads of the whole host:
 * the nodes' memory, the sysctls reported and whether irqbalance runs. */
#include "host/topology.h"
#include "host/topology_int.h"
#include "kernel/irqbalance_client.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The TCP/socket buffer keys reported (and, by the profile allowlist,
 * tunable). The 100G report tuned the first group
 * (docs/field-reports.md#tcp-buffers-bdp). */
static const char *const sysctl_keys[] = {
	"net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem",
	"net.ipv4.tcp_mem",
	"net.ipv4.udp_mem",
	"net.core.rmem_max",
	"net.core.wmem_max",
	"net.core.rmem_default",
	"net.core.wmem_default",
	"net.core.optmem_max",
	"net.core.netdev_max_backlog",
	"net.core.netdev_budget",
	"net.core.netdev_budget_usecs",
	"net.core.somaxconn",
	"net.core.default_qdisc",
	"net.core.rps_sock_flow_entries",
	"net.core.busy_poll",
	"net.core.busy_read",
	"net.ipv4.tcp_window_scaling",
	"net.ipv4.tcp_timestamps",
	"net.ipv4.tcp_sack",
	"net.ipv4.tcp_congestion_control",
	"net.ipv4.tcp_mtu_probing",
	"net.ipv4.tcp_moderate_rcvbuf",
	"net.ipv4.tcp_no_metrics_save",
	"net.ipv4.tcp_slow_start_after_idle",
	"net.ipv4.tcp_tw_reuse",
	"net.ipv4.ip_local_port_range",
};

/* ------------------------------------------------------------------ CPUs */

static int read_cpulist_file(const nt_ctx *ctx, nt_cpuset *set, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int read_cpulist_file(const nt_ctx *ctx, nt_cpuset *set, const char *fmt, ...)
{
	char buf[8192], rel[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	int r = nt_read_str(ctx, buf, sizeof(buf), "%s", rel);
	if (r < 0)
		return r;
	return nt_cpulist_parse(buf, set);
}

/* Without /sys/devices/system/cpu (a minimal fixture), the CPUs are the
 * "cpuN" rows of /proc/stat. */
static int cpus_from_proc_stat(nt_topology *t)
{
	char *text = NULL;
	int r = nt_read_all(&t->ctx, &text, "/proc/stat");
	if (r < 0)
		return r;
	nt_cpuset_zero(&t->cpus_online);
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		int cpu;
		if (strncmp(line, "cpu", 3) == 0 && isdigit((unsigned char)line[3]) &&
		    sscanf(line + 3, "%d", &cpu) == 1)
			nt_cpuset_set(&t->cpus_online, cpu);
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	return nt_cpuset_empty(&t->cpus_online) ? NT_EPARSE : 0;
}

/* Enumerate N from the names "PREFIXN" in a directory under the root. */
static int ids_from_dir(const nt_ctx *ctx, const char *dir, const char *prefix, nt_cpuset *ids)
{
	char path[PATH_MAX];
	size_t pl = strlen(prefix);
	DIR *d;
	struct dirent *de;

	nt_cpuset_zero(ids);
	if (nt_path(ctx, path, sizeof(path), "%s", dir) < 0 || !(d = opendir(path)))
		return -ENOENT;
	while ((de = readdir(d))) {
		const char *p = de->d_name + pl;
		if (strncmp(de->d_name, prefix, pl) != 0 || !isdigit((unsigned char)*p))
			continue;
		char *end;
		long v = strtol(p, &end, 10);
		if (*end == '\0' && v >= 0 && v < NT_MAX_CPUS)
			nt_cpuset_set(ids, (int)v);
	}
	closedir(d);
	return nt_cpuset_empty(ids) ? -ENOENT : 0;
}

/* Older kernels and captured trees may lack cpu/online: the cpuN
 * directories, each with an "online" file except the boot CPU's. */
static int cpus_from_sysfs_dirs(nt_topology *t)
{
	nt_cpuset ids;
	int r = ids_from_dir(&t->ctx, "/sys/devices/system/cpu", "cpu", &ids);
	if (r < 0)
		return r;
	nt_cpuset_zero(&t->cpus_online);
	for (int c = nt_cpuset_next(&ids, 0); c >= 0; c = nt_cpuset_next(&ids, c + 1)) {
		long on;
		if (nt_read_long(&t->ctx, &on, "/sys/devices/system/cpu/cpu%d/online", c) == 0 && on == 0)
			continue;
		nt_cpuset_set(&t->cpus_online, c);
	}
	return 0;
}

int nt_tp_read_cpus(nt_topology *t)
{
	nt_cpuset possible;
	int r;

	r = read_cpulist_file(&t->ctx, &t->cpus_online, "/sys/devices/system/cpu/online");
	if (r < 0)
		r = cpus_from_sysfs_dirs(t);
	if (r < 0) {
		nt_tp_problemf(t, r, "/sys/devices/system/cpu/online");
		r = cpus_from_proc_stat(t);
		if (r < 0) {
			nt_tp_problemf(t, r, "/proc/stat");
			nt_cpuset_set(&t->cpus_online, 0);
		}
	}
	if (read_cpulist_file(&t->ctx, &possible, "/sys/devices/system/cpu/possible") < 0)
		possible = t->cpus_online;
	if (read_cpulist_file(&t->ctx, &t->cpus_present, "/sys/devices/system/cpu/present") < 0)
		t->cpus_present = possible;
	int last = nt_cpuset_last(&possible);
	int lo = nt_cpuset_last(&t->cpus_online);
	if (lo > last)
		last = lo;
	t->ncpus_possible = last + 1;
	t->cpu_node = malloc(sizeof(int) * (size_t)t->ncpus_possible);
	t->cpu_core = malloc(sizeof(int) * (size_t)t->ncpus_possible);
	t->cpu_package = malloc(sizeof(int) * (size_t)t->ncpus_possible);
	if (!t->cpu_node || !t->cpu_core || !t->cpu_package)
		return -ENOMEM;
	for (int c = 0; c < t->ncpus_possible; c++) {
		t->cpu_node[c] = -1;
		t->cpu_core[c] = -1;
		t->cpu_package[c] = -1;
	}
	/* Core and package ids tell hyper-thread siblings apart (placement
	 * uses siblings last). */
	int dfd = nt_dir_open(&t->ctx, "/sys/devices/system/cpu");
	for (int c = nt_cpuset_next(&t->cpus_online, 0); c >= 0 && dfd >= 0;
	     c = nt_cpuset_next(&t->cpus_online, c + 1)) {
		char rel[64];
		long v;
		snprintf(rel, sizeof(rel), "cpu%d/topology/core_id", c);
		if (nt_read_long_at(&t->ctx, dfd, rel, &v) == 0)
			t->cpu_core[c] = (int)v;
		snprintf(rel, sizeof(rel), "cpu%d/topology/physical_package_id", c);
		if (nt_read_long_at(&t->ctx, dfd, rel, &v) == 0)
			t->cpu_package[c] = (int)v;
	}
	if (dfd >= 0)
		close(dfd);
	return 0;
}

/* -------------------------------------------------------------- NUMA nodes */

static void read_node_meminfo(nt_topology *t, nt_numa_node *n)
{
	char *text = NULL;
	if (nt_read_all(&t->ctx, &text, "/sys/devices/system/node/node%d/meminfo", n->id) < 0)
		return;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		unsigned long long v;
		char *k;
		if ((k = strstr(line, "MemTotal:")) && sscanf(k + 9, "%llu", &v) == 1)
			n->mem_total_kb = v;
		else if ((k = strstr(line, "MemFree:")) && sscanf(k + 8, "%llu", &v) == 1)
			n->mem_free_kb = v;
		line = nl ? nl + 1 : NULL;
	}
	free(text);
}

static void read_proc_meminfo(nt_topology *t, nt_numa_node *n)
{
	char *text = NULL;
	if (nt_read_all(&t->ctx, &text, "/proc/meminfo") < 0)
		return;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		unsigned long long v;
		if (sscanf(line, "MemTotal: %llu", &v) == 1)
			n->mem_total_kb = v;
		else if (sscanf(line, "MemFree: %llu", &v) == 1)
			n->mem_free_kb = v;
		line = nl ? nl + 1 : NULL;
	}
	free(text);
}

int nt_tp_read_nodes(nt_topology *t)
{
	nt_cpuset ids, has_memory;
	char buf[8192];
	int r;

	r = read_cpulist_file(&t->ctx, &ids, "/sys/devices/system/node/online");
	if (r < 0)
		r = read_cpulist_file(&t->ctx, &ids, "/sys/devices/system/node/possible");
	if (r < 0)
		r = ids_from_dir(&t->ctx, "/sys/devices/system/node", "node", &ids);
	if (r < 0 || nt_cpuset_empty(&ids)) {
		/* No NUMA support compiled in, or a minimal tree: one node 0
		 * holding every CPU, as libnuma reports it. */
		t->nodes = calloc(1, sizeof(nt_numa_node));
		if (!t->nodes)
			return -ENOMEM;
		t->nnodes = 1;
		t->nodes[0].id = 0;
		t->nodes[0].cpus = t->cpus_online;
		t->nodes[0].has_memory = true;
		t->nodes[0].distances = malloc(sizeof(int));
		if (t->nodes[0].distances) {
			t->nodes[0].distances[0] = 10;
			t->nodes[0].ndist = 1;
		}
		t->nodes_from_proc = true;
		for (int c = 0; c < t->ncpus_possible; c++)
			if (nt_cpuset_isset(&t->cpus_online, c))
				t->cpu_node[c] = 0;
		return 0;
	}
	if (read_cpulist_file(&t->ctx, &has_memory, "/sys/devices/system/node/has_memory") < 0)
		has_memory = ids;
	int n = nt_cpuset_count(&ids);
	t->nodes = calloc((size_t)n, sizeof(nt_numa_node));
	if (!t->nodes)
		return -ENOMEM;
	for (int id = nt_cpuset_next(&ids, 0); id >= 0; id = nt_cpuset_next(&ids, id + 1)) {
		nt_numa_node *node = &t->nodes[t->nnodes++];
		node->id = id;
		node->has_memory = nt_cpuset_isset(&has_memory, id);
		r = read_cpulist_file(&t->ctx, &node->cpus, "/sys/devices/system/node/node%d/cpulist", id);
		if (r < 0 && nt_read_str(&t->ctx, buf, sizeof(buf), "/sys/devices/system/node/node%d/cpumap", id) >= 0)
			r = nt_cpumask_parse(buf, &node->cpus); /* kernels before 2.6.26 had only the mask */
		if (r < 0) {
			nt_tp_problemf(t, r, "/sys/devices/system/node/node%d/cpulist", id);
			nt_cpuset_zero(&node->cpus);
		}
		/* A node's list may name CPUs that are offline; placement only
		 * ever uses online ones. */
		nt_cpuset_and(&node->cpus, &node->cpus, &t->cpus_online);
		for (int c = nt_cpuset_next(&node->cpus, 0); c >= 0; c = nt_cpuset_next(&node->cpus, c + 1))
			if (c < t->ncpus_possible)
				t->cpu_node[c] = id;
		if (nt_read_str(&t->ctx, buf, sizeof(buf), "/sys/devices/system/node/node%d/distance", id) >= 0) {
			node->distances = calloc((size_t)n, sizeof(int));
			if (node->distances) {
				char *p = buf, *end;
				while (node->ndist < n) {
					long v = strtol(p, &end, 10);
					if (end == p)
						break;
					node->distances[node->ndist++] = (int)v;
					p = end;
				}
			}
		}
	}
	return 0;
}

/* Memory per node changes all the time; the nodes do not. */
void nt_tp_read_meminfo(nt_topology *t)
{
	if (t->nodes_from_proc && t->nnodes == 1) {
		read_proc_meminfo(t, &t->nodes[0]);
		return;
	}
	for (int i = 0; i < t->nnodes; i++)
		read_node_meminfo(t, &t->nodes[i]);
}

/* ---------------------------------------------------------------- sysctls */

static void normalize_space(char *s)
{
	char *w = s;
	bool space = false;
	for (char *r = s; *r; r++) {
		if (isspace((unsigned char)*r)) {
			space = w != s;
			continue;
		}
		if (space)
			*w++ = ' ';
		space = false;
		*w++ = *r;
	}
	*w = '\0';
}

int nt_tp_read_sysctls(nt_topology *t)
{
	size_t n = sizeof(sysctl_keys) / sizeof(sysctl_keys[0]);
	t->sysctls = calloc(n, sizeof(nt_sysctl_value));
	if (!t->sysctls)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char rel[256];
		nt_sysctl_value *v = &t->sysctls[t->nsysctls++];
		v->key = sysctl_keys[i];
		snprintf(rel, sizeof(rel), "/proc/sys/%s", v->key);
		for (char *p = rel + 10; *p; p++)
			if (*p == '.')
				*p = '/';
		if (nt_read_str(&t->ctx, v->value, sizeof(v->value), "%s", rel) >= 0) {
			normalize_space(v->value);
			v->present = true;
		}
	}
	return 0;
}

/* ------------------------------------------------------------- irqbalance */

void nt_tp_read_irqbalance(nt_topology *t, nt_irqbalance_memo *memo)
{
	nt_irqbalance_proc p;
	if (nt_irqbalance_find_memo(&t->ctx, memo, &p) < 0 || !p.pid)
		return;
	t->irqbalance.running = true;
	t->irqbalance.pid = p.pid;
	/* Reported relative to the root, as every other path. */
	size_t rl = strlen(t->ctx.root);
	snprintf(t->irqbalance.socket_path, sizeof(t->irqbalance.socket_path), "%s",
		 p.socket_path[0] ? p.socket_path + rl : "");
}
