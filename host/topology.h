/* SPDX-License-Identifier: Apache-2.0 */
/* The host model: what nettune knows about a host after one read.
 *
 * nt_topology_read() reads /proc/interrupts once, every IRQ's affinity once,
 * and each NIC's sysfs directory once, so its cost grows with the host, not
 * with the number of questions asked of it. Everything a reader could not
 * read goes into `problems` and the read carries on. */
#ifndef NT_TOPOLOGY_H
#define NT_TOPOLOGY_H

#include "base/cpuset.h"
#include "kernel/ctx.h"
#include "kernel/ethtool.h"

struct nt_held_files;

/* What the agent's reads of the host keep between reads: the IRQ files of
 * /proc/irq and debugfs's irq/irqs, held open (kernel/heldfiles.h), in
 * NT_IRQ_PARTS parts by IRQ number (IRQ % NT_IRQ_PARTS): a read takes the
 * parts in as many threads as the host has CPUs for, each part with its
 * own set. Any set may be NULL. */
#define NT_IRQ_PARTS 4
typedef struct nt_irq_files {
	struct nt_held_files *proc[NT_IRQ_PARTS], *debug[NT_IRQ_PARTS];
	/* The last search for irqbalance among every process
	 * (nt_irqbalance_find_memo); NULL: searched at each read. */
	struct nt_irqbalance_memo *irqbalance;
	/* How many IRQ lines the last read of /proc/interrupts had: the next
	 * reserves room for their counts at once (read and written with
	 * relaxed atomics; only a hint). */
	int interrupts_lines;
} nt_irq_files;

#include <jansson.h>
#include <net/if.h>

#define NT_NAME_MAX 128

typedef struct nt_numa_node {
	int id;
	nt_cpuset cpus; /* online CPUs of the node */
	int *distances; /* indexed like topology->nodes[] order; ndist entries */
	int ndist;
	uint64_t mem_total_kb, mem_free_kb;
	bool has_memory;
} nt_numa_node;

typedef struct nt_irq {
	int irq;
	char name[NT_NAME_MAX]; /* the action(s), e.g. "mlx5_comp3@pci:0000:81:00.0" */
	char chip[64]; /* e.g. "PCI-MSIX-0000:00:03.0" */
	char hwirq[32]; /* e.g. "2-edge" */
	nt_cpuset affinity;
	nt_cpuset effective;
	bool has_affinity, has_effective;
	bool managed; /* kernel-managed: affinity writes fail with EIO */
	bool managed_known; /* false when debugfs did not tell (managed is then false) */
	int node; /* /proc/irq/N/node, -1 when unknown */
	uint64_t *counts; /* per CPU column of /proc/interrupts, ncounts entries (in topology->irq_counts) */
	int ncounts;
	uint64_t total;
	int nic; /* index into topology->nics, -1 when no NIC owns it */
	int queue; /* queue number parsed from the name, -1 when none */
} nt_irq;

typedef enum { NT_SRC_UNKNOWN = 0, NT_SRC_SYSFS, NT_SRC_LOCAL_CPULIST } nt_node_source;

typedef struct nt_nic {
	char name[IF_NAMESIZE];
	int ifindex;
	char driver[64];
	char pci_address[32]; /* "" when not on PCI */
	char device_path[PATH_MAX]; /* canonical device dir relative to root, "" if virtual */
	char mac[24];
	int numa_node;
	nt_node_source numa_node_source;
	nt_cpuset local_cpus;
	bool has_local_cpus;
	long speed_mbps; /* -1 unknown */
	int mtu;
	char operstate[16];
	bool is_virtual;
	bool is_bond;
	char master[IF_NAMESIZE]; /* "" when none */
	char lower[IF_NAMESIZE]; /* a VLAN's (macvlan's) one lower link, from lower_*; "" otherwise */
	bool has_rings;
	nt_rings rings;
	bool has_channels;
	nt_channels channels;
	bool has_stats;
	uint64_t rx_packets, tx_packets, rx_bytes, tx_bytes;
	uint64_t rx_dropped, rx_missed, rx_fifo_errors, rx_errors;
	bool static_problem; /* its device could not be resolved (a problem of the static part) */
	int static_ifindex; /* ifindex when the static part was read (0 unknown) */
	int *irqs; /* indexes into topology->irqs */
	int nirqs;
	/* Members the NIC reporters added (see nt_nic_reporters), merged into
	 * nt_nic_to_json; owned by the topology, NULL when none ran. */
	json_t *reported;
} nt_nic;

typedef struct nt_bond {
	char name[IF_NAMESIZE];
	char mode[32]; /* "balance-rr", "802.3ad", ... */
	int mode_num;
	char xmit_hash_policy[16]; /* "layer2", "layer2+3", ... */
	long miimon;
	char (*slaves)[IF_NAMESIZE];
	int nslaves;
} nt_bond;

typedef struct nt_sysctl_value {
	const char *key; /* static string from the known-key table */
	char value[256];
	bool present;
} nt_sysctl_value;

typedef struct nt_topology {
	nt_ctx ctx; /* copy of the context it was read with */
	char hostname[256];
	char kernel[128];
	char netns[64]; /* "net:[4026531840]" for the live host, "" otherwise */
	int ncpus_possible; /* bits in the kernel's masks */
	nt_cpuset cpus_online;
	nt_cpuset cpus_present;
	nt_numa_node *nodes;
	int nnodes;
	int *cpu_node; /* node id per CPU (ncpus_possible entries), -1 unknown */
	int *cpu_core; /* core id per CPU, for hyper-thread siblings; -1 unknown */
	int *cpu_package;
	bool nodes_from_proc; /* no NUMA in sysfs: one node 0, memory from /proc/meminfo */
	/* Where the static part's problems go among the others, so a read
	 * through the cache lists them in the order of a whole read: the
	 * first nproblems_cpus (CPUs, nodes) first, the next nproblems_enum
	 * (listing /sys/class/net) after the IRQs, then one per NIC whose
	 * static_problem is set, with that NIC. */
	int nproblems_cpus, nproblems_enum;
	nt_nic *nics;
	int nnics;
	nt_irq *irqs; /* ascending by irq number */
	int nirqs;
	int *irq_cpu_columns; /* CPU number of each /proc/interrupts column */
	uint64_t *irq_counts; /* every IRQ's counts in one block */
	int ncolumns;
	bool have_irq_info; /* false when /proc/interrupts is absent */
	nt_bond *bonds;
	int nbonds;
	nt_sysctl_value *sysctls;
	int nsysctls;
	struct {
		bool running;
		int pid;
		char socket_path[PATH_MAX]; /* "" when not found */
	} irqbalance;
	json_t *problems; /* array of {"path","error"}: what could not be read */
} nt_topology;

/* A setting kind reports per-NIC state in the host model without touching
 * this reader: it adds members to OUT (an object, e.g. "coalesce": {...},
 * or null when the NIC has none) for NIC, asking the kernel through EH, the
 * read's ethtool handle (NULL when the read could not open one; then a
 * call with NULL opens its own). Returns 0, or -errno for a failure the
 * read lists in problems; members added before it are kept. Reporters run
 * while /proc/interrupts is still being read: the NIC's IRQs are not
 * known to them. */
typedef int (*nt_nic_report_fn)(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic,
				json_t *out);
/* The reporters nt_topology_read runs, NULL-terminated; defined beside the
 * table of setting kinds (settings/registry.c). */
extern const nt_nic_report_fn nt_nic_reporters[];

/* Run REPORTERS (NULL-terminated) for every NIC of T, adding to each NIC's
 * `reported` object. nt_topology_read does this with nt_nic_reporters;
 * tests call it with tables of their own. Returns 0 or -ENOMEM; a
 * reporter's failure is recorded in problems. */
int nt_topology_report(nt_topology *t, nt_ethtool *eh, const nt_nic_report_fn *reporters);

/* Read the host under CTX. On success *OUT is owned by the caller (free with
 * nt_topology_free). Returns 0 or -errno for failures that leave nothing to
 * report (out of memory); unreadable parts are listed in problems. Defined
 * in host/hostcache.c, beside the cache it reads through when CTX carries
 * one (see nt_topology_read_static below). */
int nt_topology_read(const nt_ctx *ctx, nt_topology **out);
void nt_topology_free(nt_topology *t);

/* The read in two parts. The static part (CPUs, cores, NUMA nodes and
 * distances, the NICs with their device, PCI function, driver, locality
 * and whether they are bonds) changes only on hotplug; the dynamic part
 * (hostname, node memory, /proc/interrupts, IRQ affinities, links,
 * counters, rings, channels, bonds' settings, IRQ ownership, NIC reports,
 * sysctls, irqbalance) is read each time. nt_topology_read is the two in a
 * row, or, when CTX carries a host model cache (host/hostcache.h), the
 * cache's static part and a fresh dynamic one.
 *
 * nt_topology_read_static fills only the static part (its problems are
 * the static part's). nt_topology_read_dynamic makes a new topology from
 * a copy of BASE's static part and reads the rest; BASE is not changed.
 * FILES, when not NULL, holds the IRQ files open between reads; an IRQ's
 * files are read through the set of its part unless another read has it
 * at the moment. */
int nt_topology_read_static(const nt_ctx *ctx, nt_topology **out);
int nt_topology_read_dynamic(const nt_topology *base, nt_irq_files *files, nt_topology **out);

/* Read file NAME of /proc/irq/IRQS[i]/ for each of N IRQs, as nt_read_str
 * reads a file: NAME is one a host read keeps in FILES, "smp_affinity_list"
 * or "effective_affinity_list". Through FILES' held sets, a pass per part
 * and one pread a file held; with FILES NULL, or a part another read has
 * now, beneath /proc/irq opened once for the part. A value goes to
 * BUFS + i * SIZE and its length or -errno to RES[i] (-EINVAL for an IRQ
 * below 0). For a stage of a transaction that reads the same file of many
 * IRQs. Returns 0, or -EINVAL for another NAME. */
int nt_irq_files_read(const nt_ctx *ctx, nt_irq_files *files, const int *irqs, int n, const char *name,
		      char *bufs, size_t size, int *res);

/* Set IRQ's affinity to CPULIST and read smp_affinity_list back into BUF
 * through the descriptor FILES holds for the IRQ's reads
 * (nt_kernel_irq_set_affinity_held): on the live host a write and its
 * check cost one write and one pread. FILES may be NULL. */
int nt_irq_files_write(const nt_ctx *ctx, nt_irq_files *files, int irq, const char *cpulist, char *buf,
		       size_t size, int *read_r, char *err, size_t errsize);

/* Find things by name or number; NULL / -1 when absent. */
nt_nic *nt_topology_nic(const nt_topology *t, const char *name);
int nt_topology_nic_index(const nt_topology *t, const char *name);
nt_irq *nt_topology_irq(const nt_topology *t, int irq);
nt_bond *nt_topology_bond(const nt_topology *t, const char *name);
const nt_numa_node *nt_topology_node(const nt_topology *t, int id);
int nt_topology_cpu_node(const nt_topology *t, int cpu);

/* The nodes CPUs of SET belong to, into *NODES (a set of node ids);
 * returns whether some CPU's node is unknown. */
bool nt_topology_node_set(const nt_topology *t, const nt_cpuset *set, nt_cpuset *nodes);
/* Nodes that CPUs of SET belong to, as a JSON array of ints (-1 last when
 * some CPU's node is unknown). */
json_t *nt_topology_nodes_of(const nt_topology *t, const nt_cpuset *set);
/* Whether every CPU of SET is on NODE. */
bool nt_topology_set_on_node(const nt_topology *t, const nt_cpuset *set, int node);

/* JSON documents served by the API and printed by the CLI. New references.
 * A NIC's document carries the members its reporters added, after its own;
 * a reporter cannot replace one of the reader's members. */
json_t *nt_topology_to_json(const nt_topology *t);
json_t *nt_nic_to_json(const nt_topology *t, const nt_nic *n);
json_t *nt_irq_to_json(const nt_topology *t, const nt_irq *irq, bool with_counts);
json_t *nt_irqs_to_json(const nt_topology *t);

/* The same documents as text, exactly as json_dumps(doc, JSON_INDENT(2) |
 * JSON_SORT_KEYS) prints them (the API's and the CLI's format) followed by
 * a newline, written without building the jansson documents
 * (host/topology_json.c): nt_topology_to_json, {"nics": [nt_nic_to_json
 * ...]} and nt_irqs_to_json. malloc'd; NULL when out of memory; *LEN (when
 * not NULL) gets the length. */
char *nt_topology_to_text(const nt_topology *t, size_t *len);
char *nt_nics_to_text(const nt_topology *t, size_t *len);
char *nt_irqs_to_text(const nt_topology *t, size_t *len);

/* Record a problem (PATH could not be read: ERR). */
void nt_topology_problem(nt_topology *t, const char *path, int err);

/* The physical cores of node N one after the other, each as the set of its
 * online threads (hyper-thread siblings share a package and core id), in
 * the order of each core's first CPU, so a reader can draw siblings
 * together; a CPU whose core id could not be read is a core of its own.
 * Start with SEEN empty and *FROM 0; each call fills CORE and returns true,
 * false after the last. */
bool nt_node_next_core(const nt_topology *t, const nt_numa_node *n, nt_cpuset *seen, int *from,
		       nt_cpuset *core);

/* cpulist as a JSON string (helper for every serializer). */
json_t *nt_cpuset_json(const nt_cpuset *s);

#endif
