/* Reading the host model. See topology.h for the cost model: one read of
 * /proc/interrupts, one pass over /proc/irq, one pass over /sys/class/net. */
#include "host/topology.h"
#include "kernel/heldfiles.h"
#include "kernel/ethtool.h"
#include "kernel/kernel.h"
#include "host/interrupts.h"
#include "host/hostcache.h"
#include "kernel/irqbalance_client.h"
#include "kernel/link.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
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

void nt_topology_problem(nt_topology *t, const char *path, int err)
{
	json_t *p = json_pack("{s:s, s:s}", "path", path, "error", nt_strerror(err));
	if (p)
		json_array_append_new(t->problems, p);
}

static void problemf(nt_topology *t, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void problemf(nt_topology *t, int err, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	nt_topology_problem(t, path, err);
}

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

static int read_cpus(nt_topology *t)
{
	nt_cpuset possible;
	int r;

	r = read_cpulist_file(&t->ctx, &t->cpus_online, "/sys/devices/system/cpu/online");
	if (r < 0)
		r = cpus_from_sysfs_dirs(t);
	if (r < 0) {
		problemf(t, r, "/sys/devices/system/cpu/online");
		r = cpus_from_proc_stat(t);
		if (r < 0) {
			problemf(t, r, "/proc/stat");
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

static int read_nodes(nt_topology *t)
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
			problemf(t, r, "/sys/devices/system/node/node%d/cpulist", id);
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
static void read_meminfo(nt_topology *t)
{
	if (t->nodes_from_proc && t->nnodes == 1) {
		read_proc_meminfo(t, &t->nodes[0]);
		return;
	}
	for (int i = 0; i < t->nnodes; i++)
		read_node_meminfo(t, &t->nodes[i]);
}

/* ------------------------------------------------------------------- IRQs */

static int cmp_irq(const void *a, const void *b)
{
	const nt_irq *x = a, *y = b;
	return (x->irq > y->irq) - (x->irq < y->irq);
}

/* "N/" + NAME into REL without snprintf (called thousands of times). */
static void irq_rel(char *rel, size_t size, int irq, const char *name)
{
	char digits[16];
	int nd = 0;
	unsigned v = (unsigned)irq;
	do {
		digits[nd++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && nd < (int)sizeof(digits));
	size_t k = 0;
	while (nd > 0 && k + 1 < size)
		rel[k++] = digits[--nd];
	if (k + 1 < size)
		rel[k++] = '/';
	size_t nl = strlen(name);
	if (k + nl >= size)
		nl = size - 1 - k;
	memcpy(rel + k, name, nl);
	rel[k + nl] = '\0';
}

/* Where an IRQ's files are read from: a directory opened for this read
 * (nt_dir_open; -1 when it could not be: then each file is reported
 * missing), or a set of files held open between reads, whose pass this
 * read has. */
typedef struct {
	int dirfd;
	nt_held_files *held; /* NULL: read beneath dirfd */
} irq_source;

/* Files of an IRQ directory, by slot in a held set. */
enum { SLOT_AFFINITY_LIST, SLOT_AFFINITY, SLOT_EFFECTIVE_LIST, SLOT_EFFECTIVE, SLOT_DEBUG };

static int irq_read(nt_topology *t, const irq_source *src, int irq, int slot, const char *rel, char *buf,
		    size_t size)
{
	if (src->held)
		return nt_held_read(src->held, irq, slot, rel, buf, size);
	if (src->dirfd < 0)
		return -ENOENT;
	return nt_read_at(&t->ctx, src->dirfd, rel, buf, size);
}

/* IRQ's CPU set beneath SRC into *SET: the cpulist file LIST (in key
 * SLOT), else the mask file MASK (SLOT + 1). Returns 0 or the list's
 * -errno. */
static int read_irq_set(nt_topology *t, const irq_source *src, int irq, const char *list, const char *mask,
			int slot, nt_cpuset *set)
{
	char buf[4096], rel[64];

	irq_rel(rel, sizeof(rel), irq, list);
	int r = irq_read(t, src, irq, slot, rel, buf, sizeof(buf));
	if (r >= 0)
		return nt_cpulist_parse(buf, set);
	irq_rel(rel, sizeof(rel), irq, mask);
	if (irq_read(t, src, irq, slot + 1, rel, buf, sizeof(buf)) >= 0)
		return nt_cpumask_parse(buf, set);
	return r;
}

/* IRQ's affinity, effective affinity and (from debugfs) whether the
 * kernel manages it. Touches only IRQ: several threads read IRQs at once.
 * Returns 0 or the -errno of its affinity, for the caller to report. */
static int read_irq_affinity(nt_topology *t, nt_irq *irq, const irq_source *src, const irq_source *dbg)
{
	char rel[64];
	int err = read_irq_set(t, src, irq->irq, "smp_affinity_list", "smp_affinity", SLOT_AFFINITY_LIST,
			       &irq->affinity);
	int r;
	irq->has_affinity = err >= 0;
	irq->has_effective = read_irq_set(t, src, irq->irq, "effective_affinity_list", "effective_affinity",
					  SLOT_EFFECTIVE_LIST, &irq->effective) >= 0;

	irq->node = -1;

	/* Kernel-managed IRQs (multi-queue block devices, some NIC queues)
	 * refuse affinity writes with EIO. Only debugfs says so in advance. */
	if (dbg->held || dbg->dirfd >= 0) {
		char buf[8192];
		irq_rel(rel, sizeof(rel), irq->irq, "");
		rel[strlen(rel) - 1] = '\0'; /* "N", not "N/" */
		r = irq_read(t, dbg, irq->irq, SLOT_DEBUG, rel, buf, sizeof(buf));
		if (r >= 0) {
			irq->managed_known = true;
			irq->managed = strstr(buf, "AFFINITY_MANAGED") != NULL;
		} else if (r == -EFBIG) {
			char *all = NULL;
			if (nt_read_all(&t->ctx, &all, "/sys/kernel/debug/irq/irqs/%d", irq->irq) >= 0) {
				irq->managed_known = true;
				irq->managed = strstr(all, "AFFINITY_MANAGED") != NULL;
				free(all);
			}
		}
	}
	return err < 0 ? err : 0;
}

/* SRC for directory PATH: HELD's pass when it can be had, else the
 * directory opened for this read. */
static void source_begin(const nt_ctx *ctx, irq_source *src, nt_held_files *held, const char *path)
{
	src->held = NULL;
	src->dirfd = held ? nt_held_begin(held) : -EBUSY;
	if (src->dirfd >= 0) {
		src->held = held;
		return;
	}
	if (src->dirfd == -EBUSY)
		src->dirfd = nt_dir_open(ctx, "%s", path);
}

/* PARTIAL: the pass read only some of the files, and closes none of
 * the others (see nt_held_end_partial). */
static void source_end(irq_source *src, bool partial)
{
	if (src->held && partial)
		nt_held_end_partial(src->held);
	else if (src->held)
		nt_held_end(src->held);
	else if (src->dirfd >= 0)
		close(src->dirfd);
	src->dirfd = -1;
	src->held = NULL;
}

int nt_irq_files_read(const nt_ctx *ctx, nt_irq_files *files, const int *irqs, int n, const char *name,
		      char *bufs, size_t size, int *res)
{
	char rel[64];
	int slot;

	if (!strcmp(name, "smp_affinity_list"))
		slot = SLOT_AFFINITY_LIST;
	else if (!strcmp(name, "effective_affinity_list"))
		slot = SLOT_EFFECTIVE_LIST;
	else
		return -EINVAL;
	if (size == 0)
		return -EINVAL;
	for (int p = 0; p < NT_IRQ_PARTS; p++) {
		irq_source src = { .dirfd = -1 };
		bool begun = false;
		for (int i = 0; i < n; i++) {
			char *buf = bufs + (size_t)i * size;
			if (irqs[i] < 0 || (unsigned)irqs[i] % NT_IRQ_PARTS != (unsigned)p)
				continue;
			if (!begun) {
				source_begin(ctx, &src, files ? files->proc[p] : NULL, "/proc/irq");
				begun = true;
			}
			irq_rel(rel, sizeof(rel), irqs[i], name);
			buf[0] = '\0';
			if (src.held)
				res[i] = nt_held_read(src.held, irqs[i], slot, rel, buf, size);
			else
				res[i] = src.dirfd >= 0 ? nt_read_at(ctx, src.dirfd, rel, buf, size) : src.dirfd;
		}
		if (begun)
			source_end(&src, true);
	}
	for (int i = 0; i < n; i++)
		if (irqs[i] < 0)
			res[i] = -EINVAL;
	return 0;
}

int nt_irq_files_write(const nt_ctx *ctx, nt_irq_files *files, int irq, const char *cpulist, char *buf,
		       size_t size, int *read_r, char *err, size_t errsize)
{
	nt_held_files *held = files && irq >= 0 ? files->proc[(unsigned)irq % NT_IRQ_PARTS] : NULL;
	return nt_kernel_irq_set_affinity_held(ctx, held, SLOT_AFFINITY_LIST, irq, cpulist, buf, size, read_r,
					       err, errsize);
}

/* The IRQ half of a host read, run beside the NIC half (which needs
 * nothing from it): /proc/interrupts parsed, the IRQs made from its lines,
 * then each IRQ's files read. On a big host that is megabytes of text and
 * thousands of small reads, mostly the kernel's time. The files are read in
 * NT_IRQ_PARTS parts by IRQ number (each part with its own held set, an
 * IRQ always in the same part), and each part by whichever thread is free
 * to take it (next_part): the parsing thread as soon as the IRQs exist,
 * helpers it starts when the host has the IRQs and the CPUs for more, and
 * the thread that reads the NICs once it is done with them. So the CPUs
 * stay busy while the NICs are read, instead of the IRQ files waiting for
 * the last NIC. */
typedef struct {
	nt_topology *t; /* the IRQ half writes only its IRQ members */
	nt_irq_files *files; /* NULL: nothing held */
	int parse_r; /* parse_interrupts_file's result */
	int bad_lines, first_bad_line;
	int r; /* 0, or -ENOMEM making the IRQs */
	int *errs; /* per IRQ: its affinity's -errno, reported after */
	int next_part; /* the next part to take (atomic) */
	/* Set once the IRQs exist (or will not): parts may be taken. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool ready;
	pthread_t helpers[NT_IRQ_PARTS];
	int nhelpers;
} irq_half;

/* Take parts until none is left, reading every IRQ of each. */
static void *take_parts(void *arg)
{
	irq_half *h = arg;
	nt_topology *t = h->t;
	int p;

	while ((p = __atomic_fetch_add(&h->next_part, 1, __ATOMIC_RELAXED)) < NT_IRQ_PARTS) {
		irq_source src, dbg;
		source_begin(&t->ctx, &dbg, h->files ? h->files->debug[p] : NULL,
			     "/sys/kernel/debug/irq/irqs");
		source_begin(&t->ctx, &src, h->files ? h->files->proc[p] : NULL, "/proc/irq");
		for (int i = 0; i < t->nirqs; i++) {
			nt_irq *q = &t->irqs[i];
			if ((int)((unsigned)q->irq % NT_IRQ_PARTS) == p)
				h->errs[i] = read_irq_affinity(t, q, &src, &dbg);
		}
		source_end(&src, false);
		source_end(&dbg, false);
	}
	return NULL;
}

/* How many threads read the IRQ files: one per 256 IRQs, no more than
 * the parts or the CPUs that can run them. */
static int irq_threads(int nirqs)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = nirqs / 256;
	if (n > NT_IRQ_PARTS)
		n = NT_IRQ_PARTS;
	if (cpus > 0 && n > cpus)
		n = (int)cpus;
	return n < 1 ? 1 : n;
}

/* /proc/interrupts, a block at a time: on a 256-CPU host it is megabytes,
 * and one buffer of its whole size (grown by doubling) cost more in page
 * faults and copies than the parse. Returns 0, a -errno of the read, or
 * the parser's error. */
static int parse_interrupts_file(nt_topology *t, nt_interrupts *in)
{
	size_t cap = 256 * 1024, len = 0;
	bool begun = false;
	char *buf = NULL;
	int r = 0;

	memset(in, 0, sizeof(*in));
	int fd = nt_open_read(&t->ctx, "/proc/interrupts");
	if (fd < 0)
		return fd;
	if (!(buf = malloc(cap))) {
		r = -ENOMEM;
		goto out;
	}
	for (;;) {
		if (len + 1 >= cap) {
			/* A line longer than the buffer (thousands of CPUs). */
			char *nb = cap < (size_t)1 << 28 ? realloc(buf, cap * 2) : NULL;
			if (!nb) {
				r = -ENOMEM;
				goto out;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto out;
		}
		len += (size_t)n;
		buf[len] = '\0';
		/* Whole lines go to the parser; the rest waits for the next
		 * block. At the end, everything goes. */
		char *last = n == 0 ? buf + len : memrchr(buf, '\n', len);
		if (!last)
			continue;
		char *rest = last < buf + len ? last + 1 : last;
		char keep = *rest;
		*rest = '\0';
		char *from = buf;
		if (!begun) {
			if ((r = nt_interrupts_begin(buf, in)) < 0)
				goto out;
			begun = true;
			char *nl = strchr(buf, '\n');
			from = nl ? nl + 1 : rest;
		}
		if ((r = nt_interrupts_more(from, in)) < 0)
			goto out;
		*rest = keep;
		len -= (size_t)(rest - buf);
		memmove(buf, rest, len);
		if (n == 0)
			break;
	}
	if (!begun)
		r = NT_EPARSE; /* empty */
out:
	if (r < 0)
		nt_interrupts_free(in);
	free(buf);
	close(fd);
	return r;
}

/* T's IRQs made from the parsed lines IN (consumed), in IRQ order.
 * Touches only T's IRQ members. 0 or -ENOMEM. */
static int make_irqs(nt_topology *t, nt_interrupts *in)
{
	t->have_irq_info = true;
	t->irq_cpu_columns = in->cpus;
	t->ncolumns = in->ncols;
	in->cpus = NULL;
	/* The IRQs' counts stay in the parser's one block. */
	t->irq_counts = in->counts;
	in->counts = NULL;
	t->irqs = calloc((size_t)(in->nlines ? in->nlines : 1), sizeof(nt_irq));
	if (!t->irqs) {
		nt_interrupts_free(in);
		return -ENOMEM;
	}
	for (int i = 0; i < in->nlines; i++) {
		nt_irq_line *L = &in->lines[i];
		nt_irq *q = &t->irqs[t->nirqs++];
		q->irq = L->irq;
		memcpy(q->name, L->name, sizeof(q->name));
		memcpy(q->chip, L->chip, sizeof(q->chip));
		memcpy(q->hwirq, L->hwirq, sizeof(q->hwirq));
		q->counts = L->counts;
		q->ncounts = L->ncols;
		q->total = L->total; /* summed by the parser, in the same pass */
		q->nic = -1;
		q->queue = -1;
	}
	nt_interrupts_free(in);
	/* The kernel lists IRQs in ascending order already; sorting big
	 * structs that are in order would only move memory. */
	bool sorted = true;
	for (int i = 1; i < t->nirqs && sorted; i++)
		sorted = t->irqs[i - 1].irq < t->irqs[i].irq;
	if (!sorted)
		qsort(t->irqs, (size_t)t->nirqs, sizeof(nt_irq), cmp_irq);
	return 0;
}

static void read_irq_owners(nt_topology *t);

/* The IRQ half's own thread (or the reading thread itself, when none
 * could be made): parse, make the IRQs, say they are ready, then take
 * parts with the helpers. */
static void *irq_half_main(void *arg)
{
	irq_half *h = arg;
	nt_topology *t = h->t;
	nt_interrupts in;

	h->parse_r = parse_interrupts_file(t, &in);
	if (h->parse_r >= 0) {
		h->bad_lines = in.bad_lines;
		h->first_bad_line = in.first_bad_line;
		h->r = make_irqs(t, &in);
		if (h->r == 0 && !(h->errs = calloc((size_t)(t->nirqs ? t->nirqs : 1), sizeof(int))))
			h->r = -ENOMEM;
	}
	bool go = h->parse_r >= 0 && h->r == 0;
	/* Which NIC owns each IRQ needs only the IRQs and the static part:
	 * found here, off the NIC reader's path. It writes the NICs' IRQ
	 * members only, which the NIC half never touches. */
	if (go)
		read_irq_owners(t);
	pthread_mutex_lock(&h->mu);
	h->ready = true;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	if (!go) {
		/* No parts to read: none will be taken. */
		__atomic_store_n(&h->next_part, NT_IRQ_PARTS, __ATOMIC_RELAXED);
		return NULL;
	}
	/* This thread and the NIC reader are two; more only where the host
	 * has the IRQs and CPUs for them. A helper that cannot be made
	 * leaves its parts to the others. */
	for (int k = 2, n = irq_threads(t->nirqs); k < n; k++)
		if (pthread_create(&h->helpers[h->nhelpers], NULL, take_parts, h) == 0)
			h->nhelpers++;
	take_parts(h);
	for (int k = 0; k < h->nhelpers; k++)
		pthread_join(h->helpers[k], NULL);
	return NULL;
}

/* Once the NICs are read: help with the parts left, wait for the IRQ
 * half's end, and report what it met. Returns 0 or -ENOMEM. */
static int finish_irq_half(nt_topology *t, irq_half *h, pthread_t thread, bool threaded)
{
	pthread_mutex_lock(&h->mu);
	while (!h->ready)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
	take_parts(h);
	if (threaded)
		pthread_join(thread, NULL);
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);

	int r = 0;
	if (h->parse_r < 0) {
		problemf(t, h->parse_r, "/proc/interrupts");
		t->have_irq_info = false;
		r = h->parse_r == -ENOMEM ? h->parse_r : 0;
	} else {
		if (h->bad_lines)
			problemf(t, NT_EPARSE, "/proc/interrupts: %d unparsable line(s), first at line %d",
				 h->bad_lines, h->first_bad_line);
		r = h->r;
		for (int i = 0; r == 0 && i < t->nirqs; i++)
			if (h->errs[i] < 0)
				problemf(t, h->errs[i], "/proc/irq/%d/smp_affinity_list", t->irqs[i].irq);
	}
	free(h->errs);
	h->errs = NULL;
	return r;
}

/* ------------------------------------------------------------------- NICs */

static bool is_pci_address(const char *s)
{
	/* DDDD:BB:DD.F, where the domain may be longer (VMD: 10000:). */
	unsigned dom, bus, dev, fn;
	char tail;
	if (sscanf(s, "%x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn, &tail) != 4)
		return false;
	const char *c = strchr(s, ':');
	return c && c - s >= 4;
}

static const char *basename_of(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Find the PCI function a net device hangs under: the device link may
 * point at it directly, or at a virtio/auxiliary device whose ancestor it
 * is (this project's own VM: eth0 -> virtio2 -> 0000:00:03.0). */
static void find_pci_function(nt_nic *n)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s", n->device_path);
	while (strlen(path) > strlen("/sys/devices")) {
		if (is_pci_address(basename_of(path))) {
			snprintf(n->pci_address, sizeof(n->pci_address), "%s", basename_of(path));
			snprintf(n->device_path, sizeof(n->device_path), "%s", path);
			return;
		}
		char *slash = strrchr(path, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
}

static int node_of_set(const nt_topology *t, const nt_cpuset *set)
{
	int node = -2;
	for (int c = nt_cpuset_next(set, 0); c >= 0; c = nt_cpuset_next(set, c + 1)) {
		int cn = nt_topology_cpu_node(t, c);
		if (cn < 0)
			return -1;
		if (node == -2)
			node = cn;
		else if (node != cn)
			return -1;
	}
	return node < 0 ? -1 : node;
}

static void read_nic_locality(nt_topology *t, nt_nic *n)
{
	char buf[8192];
	long v;

	n->numa_node = -1;
	n->numa_node_source = NT_SRC_UNKNOWN;
	if (!n->device_path[0])
		return;
	if (nt_read_str(&t->ctx, buf, sizeof(buf), "%s/local_cpulist", n->device_path) >= 0 &&
	    nt_cpulist_parse(buf, &n->local_cpus) == 0)
		n->has_local_cpus = true;
	else if (nt_read_str(&t->ctx, buf, sizeof(buf), "%s/local_cpus", n->device_path) >= 0 &&
		 nt_cpumask_parse(buf, &n->local_cpus) == 0)
		n->has_local_cpus = true;
	if (nt_read_long(&t->ctx, &v, "%s/numa_node", n->device_path) == 0 && v >= 0 &&
	    nt_topology_node(t, (int)v)) {
		n->numa_node = (int)v;
		n->numa_node_source = NT_SRC_SYSFS;
		return;
	}
	/* numa_node is -1 on many real machines (BIOS without _PXM); the
	 * local CPU list still tells when all of it lies on one node, which is
	 * how hwloc places devices. A list spanning nodes tells nothing. */
	if (n->has_local_cpus) {
		nt_cpuset online;
		nt_cpuset_and(&online, &n->local_cpus, &t->cpus_online);
		int node = nt_cpuset_empty(&online) ? -1 : node_of_set(t, &online);
		if (node >= 0) {
			n->numa_node = node;
			n->numa_node_source = NT_SRC_LOCAL_CPULIST;
		}
	}
}

/* DFD is /sys/class/net/NAME opened (nt_dir_open), -1 when it could not be. */
static void read_nic_sysfs_link(nt_topology *t, nt_nic *n, int dfd)
{
	char buf[256];
	long v;
	const nt_ctx *ctx = &t->ctx;

	if (dfd < 0)
		return;
	if (nt_read_long_at(ctx, dfd, "ifindex", &v) == 0)
		n->ifindex = (int)v;
	if (nt_read_long_at(ctx, dfd, "mtu", &v) == 0)
		n->mtu = (int)v;
	if (nt_read_at(ctx, dfd, "operstate", buf, sizeof(buf)) >= 0)
		snprintf(n->operstate, sizeof(n->operstate), "%s", buf);
	if (nt_readlink(ctx, buf, sizeof(buf), "/sys/class/net/%s/master", n->name) >= 0)
		snprintf(n->master, sizeof(n->master), "%s", basename_of(buf));

	static const struct {
		const char *file;
		size_t off;
	} stats[] = {
		{ "statistics/rx_packets", offsetof(nt_nic, rx_packets) },
		{ "statistics/tx_packets", offsetof(nt_nic, tx_packets) },
		{ "statistics/rx_bytes", offsetof(nt_nic, rx_bytes) },
		{ "statistics/tx_bytes", offsetof(nt_nic, tx_bytes) },
		{ "statistics/rx_dropped", offsetof(nt_nic, rx_dropped) },
		{ "statistics/rx_missed_errors", offsetof(nt_nic, rx_missed) },
		{ "statistics/rx_fifo_errors", offsetof(nt_nic, rx_fifo_errors) },
		{ "statistics/rx_errors", offsetof(nt_nic, rx_errors) },
	};
	for (size_t i = 0; i < sizeof(stats) / sizeof(stats[0]); i++) {
		if (nt_read_at(ctx, dfd, stats[i].file, buf, sizeof(buf)) < 0)
			continue;
		*(uint64_t *)((char *)n + stats[i].off) = strtoull(buf, NULL, 10);
		n->has_stats = true;
	}
}

static void apply_link_info(nt_nic *n, const nt_link_info *l)
{
	n->ifindex = l->ifindex;
	n->mtu = l->mtu;
	snprintf(n->operstate, sizeof(n->operstate), "%s", l->operstate);
	snprintf(n->master, sizeof(n->master), "%s", l->master);
	n->rx_packets = l->rx_packets;
	n->tx_packets = l->tx_packets;
	n->rx_bytes = l->rx_bytes;
	n->tx_bytes = l->tx_bytes;
	n->rx_dropped = l->rx_dropped;
	n->rx_missed = l->rx_missed;
	n->rx_fifo_errors = l->rx_fifo_errors;
	n->rx_errors = l->rx_errors;
	n->has_stats = true;
}

static int add_nic_irq(nt_topology *t, int nic_index, nt_irq *q)
{
	nt_nic *n = &t->nics[nic_index];
	if (q->nic >= 0)
		return 0;
	/* Room doubles at each power of two (a NIC has up to hundreds). */
	if ((n->nirqs & (n->nirqs - 1)) == 0) {
		int *ni = realloc(n->irqs, sizeof(int) * (size_t)(n->nirqs ? 2 * n->nirqs : 1));
		if (!ni)
			return -ENOMEM;
		n->irqs = ni;
	}
	n->irqs[n->nirqs++] = (int)(q - t->irqs);
	q->nic = nic_index;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Queue number from names such as "mlx5_comp3@pci:...", "eth0-TxRx-3",
 * "virtio2-input.0": the last number before any "@". */
static int queue_of(const char *name)
{
	static const char *const tags[] = { "comp", "TxRx", "txrx", "rx", "tx", "input", "output", "-q", "fp-", NULL };
	char buf[NT_NAME_MAX];
	size_t nl = strnlen(name, sizeof(buf) - 1);
	memcpy(buf, name, nl);
	buf[nl] = '\0';
	char *at = strchr(buf, '@');
	if (at)
		*at = '\0';
	bool tagged = false;
	for (int i = 0; tags[i]; i++)
		if (strstr(buf, tags[i]))
			tagged = true;
	if (!tagged)
		return -1;
	size_t e = strlen(buf);
	while (e > 0 && !isdigit((unsigned char)buf[e - 1]))
		e--;
	if (e == 0)
		return -1;
	size_t s = e;
	while (s > 0 && isdigit((unsigned char)buf[s - 1]))
		s--;
	return atoi(buf + s);
}

/* Driver conventions for naming NIC interrupts in /proc/interrupts. */
static bool irq_name_matches_nic(const nt_irq *q, const nt_nic *n)
{
	const char *name = q->name;
	size_t nl = strlen(n->name);
	if (!*name)
		return false;
	if (strcmp(name, n->name) == 0) /* tg3: "eth0" */
		return true;
	if (strncmp(name, n->name, nl) == 0 && name[nl] == '-') /* "eth0-TxRx-0", "eth0-rx-1" */
		return true;
	/* i40e/ice: "i40e-eth0-TxRx-0" */
	const char *dash = strchr(name, '-');
	if (dash && strncmp(dash + 1, n->name, nl) == 0 && dash[1 + nl] == '-')
		return true;
	if (n->pci_address[0]) {
		/* mlx4/mlx5: "mlx5_comp0@pci:0000:81:00.0"; ahci-style brackets. */
		const char *pa = strstr(name, n->pci_address);
		if (pa && pa > name && (pa[-1] == ':' || pa[-1] == '@' || pa[-1] == '['))
			return true;
	}
	return false;
}

/* The IRQs sysfs lists for IDX's PCI function: its MSI/MSI-X vectors, or
 * its legacy INTx when it lists none. */
static void read_nic_pci_irqs(nt_topology *t, int idx)
{
	nt_nic *n = &t->nics[idx];
	char path[PATH_MAX];

	if (nt_path(&t->ctx, path, sizeof(path), "%s/msi_irqs", n->device_path) == 0) {
		DIR *d = opendir(path);
		if (d) {
			struct dirent *de;
			while ((de = readdir(d))) {
				if (!isdigit((unsigned char)de->d_name[0]))
					continue;
				nt_irq *q = nt_topology_irq(t, atoi(de->d_name));
				if (q)
					add_nic_irq(t, idx, q);
			}
			closedir(d);
		}
	}
	long legacy;
	if (n->nirqs == 0 && nt_read_long(&t->ctx, &legacy, "%s/irq", n->device_path) == 0 && legacy > 0) {
		nt_irq *q = nt_topology_irq(t, (int)legacy);
		if (q && q->name[0])
			add_nic_irq(t, idx, q);
	}
}

/* IDX's IRQs found by name in /proc/interrupts among those no NIC owns
 * yet: what sysfs does not list (and fixtures built from /proc alone). */
static void read_nic_named_irqs(nt_topology *t, int idx)
{
	nt_nic *n = &t->nics[idx];
	for (int i = 0; i < t->nirqs; i++) {
		nt_irq *q = &t->irqs[i];
		if (q->nic < 0 && irq_name_matches_nic(q, n))
			add_nic_irq(t, idx, q);
	}
}

/* Which NIC owns each IRQ. What sysfs lists for a PCI function is
 * authoritative and taken first, for every NIC, before any name is
 * matched: a name can look like another NIC's, and once the listed IRQs
 * are owned, the names are matched against the few IRQs left rather than
 * against every IRQ once per NIC (thousands times sixteen on a big host).
 * Then names, PCI NICs before virtual ones. */
static void read_irq_owners(nt_topology *t)
{
	for (int i = 0; i < t->nnics; i++)
		if (t->nics[i].pci_address[0])
			read_nic_pci_irqs(t, i);
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < t->nnics; i++)
			if ((pass == 0) == (t->nics[i].pci_address[0] != '\0'))
				read_nic_named_irqs(t, i);
	for (int i = 0; i < t->nnics; i++) {
		nt_nic *n = &t->nics[i];
		if (n->nirqs > 1)
			qsort(n->irqs, (size_t)n->nirqs, sizeof(int), cmp_int);
		for (int k = 0; k < n->nirqs; k++) {
			nt_irq *q = &t->irqs[n->irqs[k]];
			q->queue = queue_of(q->name);
		}
	}
}

static void read_bond(nt_topology *t, const nt_nic *n)
{
	char buf[4096];
	nt_bond *nb = realloc(t->bonds, sizeof(nt_bond) * (size_t)(t->nbonds + 1));
	if (!nb)
		return;
	t->bonds = nb;
	nt_bond *b = &t->bonds[t->nbonds++];
	memset(b, 0, sizeof(*b));
	snprintf(b->name, sizeof(b->name), "%s", n->name);
	b->mode_num = -1;
	b->miimon = -1;
	/* sysfs prints "802.3ad 4" and "layer2+3 2": a name and a number. */
	int r = nt_read_str(&t->ctx, buf, sizeof(buf), "/sys/class/net/%s/bonding/mode", n->name);
	if (r >= 0)
		sscanf(buf, "%31s %d", b->mode, &b->mode_num);
	else
		problemf(t, r, "/sys/class/net/%s/bonding/mode", n->name);
	if (nt_read_str(&t->ctx, buf, sizeof(buf), "/sys/class/net/%s/bonding/xmit_hash_policy", n->name) >= 0)
		sscanf(buf, "%15s", b->xmit_hash_policy);
	long v;
	if (nt_read_long(&t->ctx, &v, "/sys/class/net/%s/bonding/miimon", n->name) == 0)
		b->miimon = v;
	if (nt_read_str(&t->ctx, buf, sizeof(buf), "/sys/class/net/%s/bonding/slaves", n->name) >= 0) {
		char *save = NULL;
		for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
			char(*ns)[IF_NAMESIZE] = realloc(b->slaves, sizeof(*ns) * (size_t)(b->nslaves + 1));
			if (!ns)
				break;
			b->slaves = ns;
			snprintf(b->slaves[b->nslaves++], IF_NAMESIZE, "%s", tok);
		}
	}
}

static int cmp_nic(const void *a, const void *b)
{
	return strcmp(((const nt_nic *)a)->name, ((const nt_nic *)b)->name);
}

/* The NICs and what only hotplug changes about them: their names, device,
 * PCI function, driver, locality and whether they are bonds. */
static int read_nics_static(nt_topology *t)
{
	char path[PATH_MAX], buf[PATH_MAX];
	int cap = 0;
	DIR *d;
	struct dirent *de;

	if (nt_path(&t->ctx, path, sizeof(path), "/sys/class/net") < 0 || !(d = opendir(path))) {
		problemf(t, -ENOENT, "/sys/class/net");
		t->nproblems_enum = 1;
		return 0;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !nt_ifname_valid(de->d_name))
			continue;
		/* bonding_masters is a file beside the links. */
		if (strcmp(de->d_name, "bonding_masters") == 0)
			continue;
		if (t->nnics == cap) {
			cap = cap ? cap * 2 : 16;
			nt_nic *nn = realloc(t->nics, sizeof(nt_nic) * (size_t)cap);
			if (!nn) {
				closedir(d);
				return -ENOMEM;
			}
			t->nics = nn;
		}
		nt_nic *n = &t->nics[t->nnics];
		memset(n, 0, sizeof(*n));
		snprintf(n->name, sizeof(n->name), "%s", de->d_name);
		/* A NIC that vanishes while being read is dropped, not fatal. */
		int r = nt_resolve(&t->ctx, buf, sizeof(buf), "/sys/class/net/%s", n->name);
		if (r < 0) {
			problemf(t, r, "/sys/class/net/%s", n->name);
			continue;
		}
		if (!nt_exists(&t->ctx, "%s/", buf))
			continue; /* a plain file, not a link to a device */
		n->is_virtual = strncmp(buf, "/sys/devices/virtual/", 21) == 0;
		t->nnics++;
	}
	closedir(d);
	/* The static part is kept for the agent's life: no room to spare (a
	 * NIC is about 5 KB, and the doubling above leaves up to half empty). */
	if (t->nnics > 0 && t->nnics < cap) {
		nt_nic *nn = realloc(t->nics, sizeof(nt_nic) * (size_t)t->nnics);
		if (nn)
			t->nics = nn;
	}
	t->nproblems_enum = (int)json_array_size(t->problems) - t->nproblems_cpus;
	if (t->nnics > 1)
		qsort(t->nics, (size_t)t->nnics, sizeof(nt_nic), cmp_nic);

	for (int i = 0; i < t->nnics; i++) {
		nt_nic *n = &t->nics[i];
		long v;
		n->numa_node = -1;
		/* A link deleted and made again under the same name (a bond
		 * replaced by a bridge) gets a new ifindex: the cache compares. */
		if (nt_read_long(&t->ctx, &v, "/sys/class/net/%s/ifindex", n->name) == 0)
			n->static_ifindex = (int)v;
		n->is_bond = nt_exists(&t->ctx, "/sys/class/net/%s/bonding", n->name);
		if (!n->is_virtual) {
			int r = nt_resolve(&t->ctx, n->device_path, sizeof(n->device_path),
					   "/sys/class/net/%s/device", n->name);
			if (r < 0) {
				n->device_path[0] = '\0';
				if (r != -ENOENT) {
					problemf(t, r, "/sys/class/net/%s/device", n->name);
					n->static_problem = true;
				}
			}
			if (nt_readlink(&t->ctx, buf, sizeof(buf), "/sys/class/net/%s/device/driver", n->name) >= 0)
				snprintf(n->driver, sizeof(n->driver), "%s", basename_of(buf));
			if (n->device_path[0])
				find_pci_function(n);
			read_nic_locality(t, n);
		} else if (nt_readlink(&t->ctx, buf, sizeof(buf), "/sys/class/net/%s/device/driver", n->name) >= 0) {
			snprintf(n->driver, sizeof(n->driver), "%s", basename_of(buf));
		}
		if (!n->driver[0] && n->is_bond)
			snprintf(n->driver, sizeof(n->driver), "bonding");
	}
	return 0;
}

/* What changes while the agent runs: link state, counters, rings,
 * channels, bond settings, and which IRQs each NIC owns. EH is the read's
 * ethtool handle, NULL when it could not be opened. */
/* Append BASE's static problems [FROM, FROM+N) to T's: each is listed
 * where the single read of the past listed it. */
static void add_static_problems(nt_topology *t, const nt_topology *base, int from, int n)
{
	for (int i = from; i < from + n; i++)
		json_array_append_new(t->problems, json_deep_copy(json_array_get(base->problems, (size_t)i)));
}

static int read_nics_dynamic(nt_topology *t, const nt_topology *base, nt_ethtool *eh)
{
	int next_static = base->nproblems_cpus + base->nproblems_enum;

	char buf[PATH_MAX];
	nt_link_info *links = NULL;
	int nlinks = 0;

	/* Without rtnetlink (a fixture root) each link is read from sysfs. */
	int lr = nt_link_dump(&t->ctx, &links, &nlinks);
	if (lr < 0) {
		if (lr != -EOPNOTSUPP)
			problemf(t, -EIO, "rtnetlink link dump");
		links = NULL;
		nlinks = 0;
	}

	for (int i = 0; i < t->nnics; i++) {
		nt_nic *n = &t->nics[i];
		long v;
		if (n->static_problem)
			add_static_problems(t, base, next_static++, 1);
		n->speed_mbps = -1;
		bool from_link = false;
		for (int k = 0; k < nlinks; k++) {
			if (strcmp(links[k].name, n->name) == 0) {
				apply_link_info(n, &links[k]);
				from_link = true;
				break;
			}
		}
		int dfd = nt_dir_open(&t->ctx, "/sys/class/net/%s", n->name);
		if (!from_link)
			read_nic_sysfs_link(t, n, dfd);
		if (dfd >= 0 && nt_read_at(&t->ctx, dfd, "address", buf, sizeof(buf)) >= 0)
			snprintf(n->mac, sizeof(n->mac), "%s", buf);
		/* speed reads EINVAL on a link that is down: unknown, not an error. */
		if (dfd >= 0 && nt_read_long_at(&t->ctx, dfd, "speed", &v) == 0 && v > 0)
			n->speed_mbps = v;
		if (dfd >= 0)
			close(dfd);
		if (eh && strcmp(n->name, "lo") != 0 && !n->is_bond) {
			if (nt_ethtool_read_rings(eh, &t->ctx, n->name, &n->rings) == 0)
				n->has_rings = true;
			if (nt_ethtool_read_channels(eh, &t->ctx, n->name, &n->channels) == 0)
				n->has_channels = true;
		}
		if (n->is_bond)
			read_bond(t, n);
	}
	free(links);
	return 0;
}

/* ---------------------------------------------------------- NIC reports */

int nt_topology_report(nt_topology *t, nt_ethtool *eh, const nt_nic_report_fn *reporters)
{
	for (int i = 0; i < t->nnics; i++) {
		nt_nic *n = &t->nics[i];
		if (!n->reported && !(n->reported = json_object()))
			return -ENOMEM;
		for (int k = 0; reporters[k]; k++) {
			int r = reporters[k](&t->ctx, eh, n, n->reported);
			if (r == -ENOMEM)
				return r;
			if (r < 0)
				problemf(t, r, "/sys/class/net/%s (NIC report %d)", n->name, k);
		}
	}
	return 0;
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

static int read_sysctls(nt_topology *t)
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

static void read_irqbalance(nt_topology *t, nt_irqbalance_memo *memo)
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
	if ((r = read_cpus(t)) < 0)
		goto fail;
	if ((r = read_nodes(t)) < 0)
		goto fail;
	t->nproblems_cpus = (int)json_array_size(t->problems);
	if ((r = read_nics_static(t)) < 0)
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
		add_static_problems(t, base, 0, base->nproblems_cpus);
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
	irq_half ih = { .files = files };
	pthread_t irq_thread;
	bool threaded;
	int r;

	*out = NULL;
	if ((r = copy_static(base, &t)) < 0)
		return r;
	const nt_ctx *ctx = &t->ctx;
	nt_read_str(ctx, t->hostname, sizeof(t->hostname), "/proc/sys/kernel/hostname");
	nt_read_str(ctx, t->kernel, sizeof(t->kernel), "/proc/sys/kernel/osrelease");
	nt_kernel_netns(ctx, t->netns, sizeof(t->netns)); /* "" on a fixture root */
	read_meminfo(t);
	ih.t = t;
	pthread_mutex_init(&ih.mu, NULL);
	pthread_cond_init(&ih.cv, NULL);
	threaded = pthread_create(&irq_thread, NULL, irq_half_main, &ih) == 0;
	if (!threaded)
		irq_half_main(&ih);

	size_t nic_from = json_array_size(t->problems);
	/* One ethtool socket for every NIC's questions, not one per NIC and kind. */
	r = nt_ethtool_open(ctx, &eh);
	if (r < 0)
		nt_topology_problem(t, "ethtool", r);
	add_static_problems(t, base, base->nproblems_cpus, base->nproblems_enum);
	r = read_nics_dynamic(t, base, eh);
	if (r == 0)
		r = nt_topology_report(t, eh, nt_nic_reporters);
	nt_ethtool_close(eh);
	eh = NULL;
	size_t nic_problems = json_array_size(t->problems) - nic_from;

	/* What the IRQ half met is listed before what the NICs did, as if
	 * read in turn. */
	int ir = finish_irq_half(t, &ih, irq_thread, threaded);
	if (r == 0)
		r = ir;
	if (r < 0)
		goto fail;
	if ((r = problems_to_end(t, nic_from, nic_problems)) < 0)
		goto fail;
	if ((r = read_sysctls(t)) < 0)
		goto fail;
	read_irqbalance(t, files ? files->irqbalance : NULL);
	*out = t;
	return 0;
fail:
	nt_topology_free(t);
	return r;
}

int nt_topology_read(const nt_ctx *ctx, nt_topology **out)
{
	nt_topology *base = NULL;
	int r;

	*out = NULL;
	if (ctx->host_cache)
		return nt_host_cache_read(ctx->host_cache, out);
	if ((r = nt_topology_read_static(ctx, &base)) < 0)
		return r;
	r = nt_topology_read_dynamic(base, NULL, out);
	nt_topology_free(base);
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

/* ---------------------------------------------------------------- lookups */

nt_nic *nt_topology_nic(const nt_topology *t, const char *name)
{
	int i = nt_topology_nic_index(t, name);
	return i >= 0 ? &t->nics[i] : NULL;
}

int nt_topology_nic_index(const nt_topology *t, const char *name)
{
	for (int i = 0; i < t->nnics; i++)
		if (strcmp(t->nics[i].name, name) == 0)
			return i;
	return -1;
}

nt_irq *nt_topology_irq(const nt_topology *t, int irq)
{
	int lo = 0, hi = t->nirqs - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (t->irqs[mid].irq == irq)
			return &t->irqs[mid];
		if (t->irqs[mid].irq < irq)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

nt_bond *nt_topology_bond(const nt_topology *t, const char *name)
{
	for (int i = 0; i < t->nbonds; i++)
		if (strcmp(t->bonds[i].name, name) == 0)
			return &t->bonds[i];
	return NULL;
}

const nt_numa_node *nt_topology_node(const nt_topology *t, int id)
{
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].id == id)
			return &t->nodes[i];
	return NULL;
}

int nt_topology_cpu_node(const nt_topology *t, int cpu)
{
	if (cpu < 0 || cpu >= t->ncpus_possible)
		return -1;
	return t->cpu_node[cpu];
}

bool nt_topology_node_set(const nt_topology *t, const nt_cpuset *set, nt_cpuset *nodes)
{
	bool unknown = false;
	nt_cpuset_zero(nodes);
	for (int c = nt_cpuset_next(set, 0); c >= 0; c = nt_cpuset_next(set, c + 1)) {
		int n = nt_topology_cpu_node(t, c);
		if (n < 0)
			unknown = true;
		else
			nt_cpuset_set(nodes, n);
	}
	return unknown;
}

json_t *nt_topology_nodes_of(const nt_topology *t, const nt_cpuset *set)
{
	json_t *a = json_array();
	nt_cpuset seen;
	bool unknown = nt_topology_node_set(t, set, &seen);
	for (int n = nt_cpuset_next(&seen, 0); n >= 0; n = nt_cpuset_next(&seen, n + 1))
		json_array_append_new(a, json_integer(n));
	if (unknown)
		json_array_append_new(a, json_integer(-1));
	return a;
}

bool nt_topology_set_on_node(const nt_topology *t, const nt_cpuset *set, int node)
{
	if (nt_cpuset_empty(set))
		return false;
	for (int c = nt_cpuset_next(set, 0); c >= 0; c = nt_cpuset_next(set, c + 1))
		if (nt_topology_cpu_node(t, c) != node)
			return false;
	return true;
}

/* ------------------------------------------------------------------- JSON */

json_t *nt_cpuset_json(const nt_cpuset *s)
{
	char buf[16384];
	if (nt_cpulist_format(s, buf, sizeof(buf)) < 0)
		return json_null();
	return json_string(buf);
}

static const char *source_name(nt_node_source s)
{
	switch (s) {
	case NT_SRC_SYSFS: return "sysfs";
	case NT_SRC_LOCAL_CPULIST: return "local_cpulist";
	default: return "unknown";
	}
}

json_t *nt_irq_to_json(const nt_topology *t, const nt_irq *q, bool with_counts)
{
	json_t *o = json_object();
	json_object_set_new(o, "irq", json_integer(q->irq));
	json_object_set_new(o, "name", json_string(q->name));
	json_object_set_new(o, "chip", json_string(q->chip));
	json_object_set_new(o, "affinity", q->has_affinity ? nt_cpuset_json(&q->affinity) : json_null());
	json_object_set_new(o, "effective_affinity",
			    q->has_effective ? nt_cpuset_json(&q->effective) : json_null());
	json_object_set_new(o, "nodes", q->has_affinity ? nt_topology_nodes_of(t, &q->affinity) : json_array());
	const nt_nic *owner = q->nic >= 0 ? &t->nics[q->nic] : NULL;
	if (owner && owner->numa_node >= 0 && q->has_affinity)
		json_object_set_new(o, "local", json_boolean(nt_topology_set_on_node(t, &q->affinity, owner->numa_node)));
	else
		json_object_set_new(o, "local", json_null());
	json_object_set_new(o, "owner", owner ? json_string(owner->name) : json_null());
	json_object_set_new(o, "queue", q->queue >= 0 ? json_integer(q->queue) : json_null());
	json_object_set_new(o, "managed", q->managed_known ? json_boolean(q->managed) : json_null());
	json_object_set_new(o, "total", json_integer((json_int_t)q->total));
	if (with_counts) {
		json_t *pc = json_object();
		for (int i = 0; i < q->ncounts && i < t->ncolumns; i++) {
			if (!q->counts[i])
				continue;
			char k[16];
			snprintf(k, sizeof(k), "%d", t->irq_cpu_columns[i]);
			json_object_set_new(pc, k, json_integer((json_int_t)q->counts[i]));
		}
		json_object_set_new(o, "per_cpu", pc);
	}
	return o;
}

static json_t *u64(uint64_t v)
{
	return json_integer((json_int_t)v);
}

json_t *nt_nic_to_json(const nt_topology *t, const nt_nic *n)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(n->name));
	json_object_set_new(o, "ifindex", json_integer(n->ifindex));
	json_object_set_new(o, "driver", n->driver[0] ? json_string(n->driver) : json_null());
	json_object_set_new(o, "pci_address", n->pci_address[0] ? json_string(n->pci_address) : json_null());
	json_object_set_new(o, "mac", n->mac[0] ? json_string(n->mac) : json_null());
	json_object_set_new(o, "numa_node", json_integer(n->numa_node));
	json_object_set_new(o, "numa_node_source", json_string(source_name(n->numa_node_source)));
	json_object_set_new(o, "local_cpus", n->has_local_cpus ? nt_cpuset_json(&n->local_cpus) : json_null());
	json_object_set_new(o, "speed_mbps", n->speed_mbps > 0 ? json_integer(n->speed_mbps) : json_null());
	json_object_set_new(o, "mtu", json_integer(n->mtu));
	json_object_set_new(o, "operstate", json_string(n->operstate[0] ? n->operstate : "unknown"));
	json_object_set_new(o, "virtual", json_boolean(n->is_virtual));
	json_object_set_new(o, "bond", json_boolean(n->is_bond));
	json_object_set_new(o, "master", n->master[0] ? json_string(n->master) : json_null());
	if (n->has_rings)
		json_object_set_new(o, "rings", json_pack("{s:I, s:I, s:I, s:I}", "rx", (json_int_t)n->rings.rx,
							   "tx", (json_int_t)n->rings.tx, "rx_max",
							   (json_int_t)n->rings.rx_max, "tx_max",
							   (json_int_t)n->rings.tx_max));
	else
		json_object_set_new(o, "rings", json_null());
	if (n->has_channels) {
		const nt_channels *c = &n->channels;
		json_object_set_new(o, "channels",
				    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "rx", (json_int_t)c->rx,
					      "tx", (json_int_t)c->tx, "other", (json_int_t)c->other, "combined",
					      (json_int_t)c->combined, "rx_max", (json_int_t)c->rx_max, "tx_max",
					      (json_int_t)c->tx_max, "other_max", (json_int_t)c->other_max,
					      "combined_max", (json_int_t)c->combined_max));
	} else {
		json_object_set_new(o, "channels", json_null());
	}
	if (n->has_stats)
		json_object_set_new(o, "stats",
				    json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "rx_packets",
					      u64(n->rx_packets), "tx_packets", u64(n->tx_packets), "rx_bytes",
					      u64(n->rx_bytes), "tx_bytes", u64(n->tx_bytes), "rx_dropped",
					      u64(n->rx_dropped), "rx_missed", u64(n->rx_missed), "rx_fifo_errors",
					      u64(n->rx_fifo_errors), "rx_errors", u64(n->rx_errors)));
	else
		json_object_set_new(o, "stats", json_null());
	json_t *irqs = json_array();
	for (int i = 0; i < n->nirqs; i++)
		json_array_append_new(irqs, nt_irq_to_json(t, &t->irqs[n->irqs[i]], false));
	json_object_set_new(o, "irqs", irqs);
	/* Copies: a caller may edit the document, never the topology. */
	const char *key;
	json_t *v;
	json_object_foreach(n->reported, key, v)
		if (!json_object_get(o, key))
			json_object_set_new(o, key, json_deep_copy(v));
	return o;
}

json_t *nt_irqs_to_json(const nt_topology *t)
{
	json_t *a = json_array();
	for (int i = 0; i < t->nirqs; i++)
		json_array_append_new(a, nt_irq_to_json(t, &t->irqs[i], true));
	json_t *cols = json_array();
	for (int i = 0; i < t->ncolumns; i++)
		json_array_append_new(cols, json_integer(t->irq_cpu_columns[i]));
	return json_pack("{s:o, s:o, s:b}", "irqs", a, "cpu_columns", cols, "available", t->have_irq_info);
}

bool nt_node_next_core(const nt_topology *t, const nt_numa_node *n, nt_cpuset *seen, int *from,
		       nt_cpuset *core)
{
	for (int c = nt_cpuset_next(&n->cpus, *from); c >= 0; c = nt_cpuset_next(&n->cpus, c + 1)) {
		if (nt_cpuset_isset(seen, c) || !nt_cpuset_isset(&t->cpus_online, c))
			continue;
		nt_cpuset_zero(core);
		nt_cpuset_set(core, c);
		nt_cpuset_set(seen, c);
		bool known = t->cpu_core && c < t->ncpus_possible && t->cpu_core[c] >= 0;
		for (int d = nt_cpuset_next(&n->cpus, c + 1); d >= 0 && known;
		     d = nt_cpuset_next(&n->cpus, d + 1)) {
			if (d < t->ncpus_possible && !nt_cpuset_isset(seen, d) &&
			    nt_cpuset_isset(&t->cpus_online, d) && t->cpu_core[d] == t->cpu_core[c] &&
			    t->cpu_package[d] == t->cpu_package[c]) {
				nt_cpuset_set(core, d);
				nt_cpuset_set(seen, d);
			}
		}
		*from = c + 1;
		return true;
	}
	return false;
}

static json_t *node_cores_json(const nt_topology *t, const nt_numa_node *n)
{
	json_t *a = json_array();
	nt_cpuset seen, core;
	int from = 0;
	if (!a)
		return NULL;
	nt_cpuset_zero(&seen);
	while (nt_node_next_core(t, n, &seen, &from, &core))
		json_array_append_new(a, nt_cpuset_json(&core));
	return a;
}

static json_t *bond_to_json(const nt_bond *b)
{
	json_t *slaves = json_array();
	for (int i = 0; i < b->nslaves; i++)
		json_array_append_new(slaves, json_string(b->slaves[i]));
	return json_pack("{s:s, s:o, s:o, s:o, s:o}", "name", b->name, "mode",
			 b->mode[0] ? json_string(b->mode) : json_null(), "xmit_hash_policy",
			 b->xmit_hash_policy[0] ? json_string(b->xmit_hash_policy) : json_null(), "miimon",
			 b->miimon >= 0 ? json_integer(b->miimon) : json_null(), "slaves", slaves);
}

json_t *nt_topology_to_json(const nt_topology *t)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "host",
			    json_pack("{s:s, s:s, s:s, s:b, s:o}", "hostname", t->hostname, "kernel", t->kernel,
				      "root", t->ctx.root[0] ? t->ctx.root : "/", "live", t->ctx.live, "netns",
				      t->netns[0] ? json_string(t->netns) : json_null()));
	json_object_set_new(doc, "cpus",
			    json_pack("{s:i, s:o, s:o, s:i}", "possible", t->ncpus_possible, "online",
				      nt_cpuset_json(&t->cpus_online), "present", nt_cpuset_json(&t->cpus_present),
				      "online_count", nt_cpuset_count(&t->cpus_online)));
	json_t *nodes = json_array();
	for (int i = 0; i < t->nnodes; i++) {
		const nt_numa_node *n = &t->nodes[i];
		json_t *dist = json_array();
		for (int k = 0; k < n->ndist; k++)
			json_array_append_new(dist, json_integer(n->distances[k]));
		json_array_append_new(nodes, json_pack("{s:i, s:o, s:i, s:o, s:o, s:I, s:I, s:b}", "id", n->id, "cpus",
						       nt_cpuset_json(&n->cpus), "cpu_count",
						       nt_cpuset_count(&n->cpus), "cores", node_cores_json(t, n),
						       "distances", dist,
						       "memory_total_kb", (json_int_t)n->mem_total_kb,
						       "memory_free_kb", (json_int_t)n->mem_free_kb, "has_memory",
						       n->has_memory));
	}
	json_object_set_new(doc, "numa_nodes", nodes);
	json_t *nics = json_array();
	for (int i = 0; i < t->nnics; i++)
		json_array_append_new(nics, nt_nic_to_json(t, &t->nics[i]));
	json_object_set_new(doc, "nics", nics);
	json_t *bonds = json_array();
	for (int i = 0; i < t->nbonds; i++)
		json_array_append_new(bonds, bond_to_json(&t->bonds[i]));
	json_object_set_new(doc, "bonds", bonds);
	json_t *sys = json_object();
	for (int i = 0; i < t->nsysctls; i++)
		json_object_set_new(sys, t->sysctls[i].key,
				    t->sysctls[i].present ? json_string(t->sysctls[i].value) : json_null());
	json_object_set_new(doc, "sysctl", sys);
	json_object_set_new(doc, "irqbalance",
			    json_pack("{s:b, s:o, s:o}", "running", t->irqbalance.running, "pid",
				      t->irqbalance.running ? json_integer(t->irqbalance.pid) : json_null(),
				      "socket",
				      t->irqbalance.socket_path[0] ? json_string(t->irqbalance.socket_path)
								   : json_null()));
	json_object_set_new(doc, "irq_info_available", json_boolean(t->have_irq_info));
	json_object_set_new(doc, "problems", json_deep_copy(t->problems));
	return doc;
}
