/* SPDX-License-Identifier: Apache-2.0 */
/* The delivery check: did the kernel deliver each NIC interrupt, and each
 * other interrupt the agent placed (other_irqs), where its affinity (and the
 * agent's placement) says? Two samples of /proc/interrupts, /proc/softirqs
 * and /proc/net/softnet_stat a window apart, and per such IRQ the
 * interrupts each CPU served in between, judged
 * against the CPUs it was allowed and placed on: `delivered`, `elsewhere`
 * (with the CPUs and counts) or `not observed` (it did not fire: nothing
 * was shown either way). The same for RPS: packets steered to CPUs outside
 * every queue's rps_cpus.
 *
 * An affinity write that succeeds proves nothing about delivery: the
 * effective affinity moves when the IRQ next fires, some interrupt
 * controllers and drivers ignore the mask, and another tool may move it
 * back (docs/field-reports.md). Only the counts show where interrupts went.
 *
 * nt_delivery_sample_read and nt_delivery_rps_queues do the I/O; the
 * rest is pure. */
#ifndef NT_HOST_DELIVERY_H
#define NT_HOST_DELIVERY_H

#include "host/rates.h"
#include "host/topology.h"
#include "kernel/task.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct nt_host_napi;
struct nt_nd_qstats;

/* The window a check may ask for: long enough for a quiet NIC to fire,
 * short enough that a caller's timeout outlasts it (a request waits the
 * window suspended, holding no thread). */
#define NT_DELIVERY_WINDOW_MIN_MS 100
#define NT_DELIVERY_WINDOW_MAX_MS 60000
#define NT_DELIVERY_WINDOW_DEFAULT_MS 2000

/* One row of /proc/net/softnet_stat: a CPU's receive counters. */
typedef struct nt_softnet_row {
	int cpu;
	uint64_t processed; /* packets taken from its backlog or NAPI */
	uint64_t dropped; /* backlog full (netdev_max_backlog) */
	uint64_t time_squeeze; /* budget ran out with work left */
	uint64_t received_rps; /* RPS wake-ups from other CPUs */
} nt_softnet_row;

typedef struct nt_softnet {
	nt_softnet_row *rows; /* malloc'd, n entries */
	int n;
	bool cpu_column; /* each row named its CPU (13 columns or more) */
} nt_softnet;

/* Parse /proc/net/softnet_stat (net/core/net-procfs.c softnet_seq_show):
 * one line per online CPU, hexadecimal 32-bit fields by position:
 * processed, dropped, time_squeeze, six zeros (the former fastroute and
 * cpu_collision), received_rps, flow_limit_count; since 5.10 (6.1 is such
 * a kernel) the backlog length and the CPU's number as the 12th and 13th;
 * later kernels add the two backlog queue lengths after it (15 fields).
 * Older kernels print no CPU: the Nth row is the Nth online CPU, taken
 * from ONLINE (NONLINE entries, e.g. the CPU columns of /proc/interrupts),
 * or the row index when ONLINE is NULL or too short. A line of fewer than
 * 10 fields is garbage and refuses the whole text. Returns 0, NT_EPARSE or
 * -ENOMEM; free OUT with nt_softnet_free in every case. */
int nt_softnet_parse(const char *text, const int *online, int nonline, nt_softnet *out);
void nt_softnet_free(nt_softnet *s);

/* The change of a softnet counter: the kernel prints the low 32 bits, so
 * a wrap between two samples is a difference modulo 2^32. */
static inline uint64_t nt_softnet_delta(uint64_t a, uint64_t b)
{
	return (uint32_t)((uint32_t)b - (uint32_t)a);
}

/* One sample of the three files, and of the queues' counters. */
typedef struct nt_delivery_sample {
	nt_irq_sample irq; /* /proc/interrupts and /proc/softirqs */
	nt_softnet softnet; /* n 0 when unreadable */
	/* qstats-get's counters of each queue of the NICs with IRQs
	 * (nt_delivery_sample_qstats; kernel/netdev.h), NQSTATS entries, NULL
	 * when not read or none kept. */
	struct nt_nd_qstats *qstats;
	size_t nqstats;
} nt_delivery_sample;

/* Read the three files under CTX. Only /proc/interrupts is required.
 * Returns 0 or -errno / NT_EPARSE; free S in every case. */
int nt_delivery_sample_read(const nt_ctx *ctx, nt_delivery_sample *s);
void nt_delivery_sample_free(nt_delivery_sample *s);

/* Add to S the per-queue counters (qstats-get, Linux 6.9+) of each NIC of
 * T with IRQs: one dump a NIC (a fixture root: its document), read right
 * after the sample's files. A NIC whose kernel or driver keeps none adds
 * nothing. Returns 0 or -ENOMEM. */
int nt_delivery_sample_qstats(const nt_topology *t, nt_delivery_sample *s);

/* Where the agent put an IRQ: the CPUs and who put it there ("transaction
 * 12"). */
typedef struct nt_delivery_placed {
	int irq;
	nt_cpuset cpus;
	char by[48];
} nt_delivery_placed;

/* An RX queue with RPS on (rps_cpus not empty). */
typedef struct nt_delivery_rxq {
	int nic; /* index into the topology's nics */
	int queue;
	nt_cpuset rps_cpus;
} nt_delivery_rxq;

/* T's RX queues with RPS on, of the NICs with IRQs (RPS on a veth or a
 * bond steers packets the check ties to no interrupt). Reads each such
 * NIC's queue files (host/queues.h); a file that cannot be read leaves
 * its queue out. *OUT is malloc'd (the caller's, NULL when *N is 0).
 * Returns 0 or -ENOMEM. */
int nt_delivery_rps_queues(const nt_topology *t, nt_delivery_rxq **out, int *n);

/* A NAPI thread the agent placed (kind napi_thread_cpus), keyed as the
 * step is by the queue it serves, and what the window saw of the thread
 * serving that queue: its run time and last CPU at the window's start
 * (A) and end (B). The thread is found at the start; one that ends in
 * the window (threaded toggled, a link reset) is not the one judged. */
typedef struct nt_delivery_thread {
	char target[64]; /* "IF/rx-N" */
	nt_cpuset cpus; /* the placement */
	char by[48]; /* "transaction 12" */
	/* Filled by nt_delivery_threads_resolve from the window's start: */
	int nic; /* index into t0's nics, -1 when no such NIC */
	int queue;
	long long napi_id; /* -1 unknown */
	int irq; /* the NAPI's IRQ, -1 none */
	int pid; /* the NAPI's thread, 0 none */
	/* By nt_delivery_threads_sample (kernel/task.h): */
	bool has_a, has_b;
	nt_task a, b;
} nt_delivery_thread;

/* Find each of TH's threads in H (the NAPIs of T's NICs, read at the
 * window's start): its NIC, NAPI, IRQ and pid. Pure. */
void nt_delivery_threads_resolve(const nt_topology *t, const struct nt_host_napi *h, nt_delivery_thread *th,
				 int n);
/* Read each thread's run time, last CPU and allowed CPUs (/proc/PID/stat,
 * schedstat, status under CTX's root) into its A, or B when END. A
 * thread gone leaves has_a/has_b false. */
void nt_delivery_threads_sample(const nt_ctx *ctx, nt_delivery_thread *th, int n, bool end);

typedef struct nt_delivery_in {
	const nt_topology *t0; /* the host at the window's start: owners, affinities */
	const nt_topology *t1; /* at its end, or NULL: an affinity that changed
				* in between allows either */
	const nt_delivery_sample *a, *b; /* the window's two samples */
	const nt_delivery_placed *placed; /* NPLACED entries, any order */
	int nplaced;
	const nt_delivery_rxq *rxq; /* NRXQ entries */
	int nrxq;
	/* The NAPIs of t0's NICs (host/napi.h), or NULL: an IRQ's "queue" is
	 * then the number in its name; where this holds the netdev family's
	 * map of its NIC, the queue whose NAPI that IRQ serves. */
	const struct nt_host_napi *napi;
	const nt_delivery_thread *threads; /* NTHREADS NAPI threads placed, sampled */
	int nthreads;
} nt_delivery_in;

/* The verdicts, in the order of their names. */
typedef enum { NT_DELIVERED, NT_DELIVERED_ELSEWHERE, NT_NOT_OBSERVED } nt_delivery_verdict;
const char *nt_delivery_verdict_name(nt_delivery_verdict v); /* "delivered", "elsewhere", "not observed" */

/* Where a placed NAPI thread ran in the window, judged as an IRQ is
 * (pure): it ran (its run time grew) and last ran on a CPU of its
 * placement: delivered; its allowed CPUs at the end are not its
 * placement, or it last ran outside it: elsewhere, with *OUTSIDE
 * "allowed" or "placement"; it did not run, had no thread or its thread
 * ended in the window: not observed, with *WHY saying which (else NULL).
 * OUTSIDE and WHY may be NULL. */
nt_delivery_verdict nt_delivery_thread_judge(const nt_delivery_thread *th, const char **outside, const char **why);
/* TH's entry of the check's "threads" (see nt_delivery_compute), with
 * IRQS (the check's "irqs", may be NULL) giving its IRQ's verdict and
 * counts; *V its verdict. New reference, NULL when out of memory. */
json_t *nt_delivery_thread_json(const nt_topology *t0, const nt_delivery_thread *th, const json_t *irqs,
				nt_delivery_verdict *v);

/* The check's document:
 *   {"window_ms", "verdicts": {"delivered": n, "elsewhere": n, "not_observed": n},
 *    "irqs": [{"irq", "name", "nic" (null for an IRQ of no NIC), "queue",
 *              "queue_source" ("netlink": the netdev family's queue->NAPI->IRQ
 *              map; "irq-names": the number in the IRQ's name; null for an
 *              IRQ of no NIC), "affinity", "affinity_end"?,
 *              "effective", "placed", "placed_by", "counts": {CPU: n}, "total",
 *              "verdict", "elsewhere": [{"cpu", "count", "outside"}],
 *              "queue_packets", "traffic"}],
 *    "nics": [{"nic", "interrupts", "elsewhere", "irqs_elsewhere"}],
 *    "rps": {"verdict", "cpus", "received_rps", "elsewhere": [{"cpu", "count"}],
 *            "queues": [{"nic", "queue", "rps_cpus", "verdict"}]} or null when no
 *            queue has RPS on,
 *    "cpus": [{"cpu", "node", "nic_interrupts", "net_rx", "processed",
 *              "dropped", "time_squeeze", "received_rps"}],
 *    "threads": [{"target", "nic", "queue", "napi_id", "pid", "irq",
 *                 "irq_verdict", "irq_counts", "placed", "placed_by",
 *                 "allowed", "run_ns", "run_source", "last_cpu_start",
 *                 "last_cpu", "verdict", "outside", "why"}] for each of
 *              IN->threads (empty without), "thread_verdicts": {"delivered",
 *              "elsewhere", "not_observed"}}
 * for every IRQ a NIC owns in IN->t0, and every other IRQ of IN->placed,
 * that both samples show. An interrupt
 * of a placed IRQ is elsewhere when its CPU is outside the placement
 * ("outside": "placement"): what was planned is what counts, whatever the
 * affinity reads now. One of an IRQ not placed is elsewhere when its CPU
 * is outside the affinity at both ends of the window ("affinity"). A CPU
 * column missing from a sample and counters that went down count 0.
 * "queue_packets" is what the queues this IRQ serves (the same map as
 * "queue", RX and TX) counted over the window (rx-packets, tx-packets),
 * from both samples' qstats; null where the kernel or driver keeps none.
 * "traffic" tells a silent IRQ's two cases apart, and says nothing of the
 * others (null): "none" when its queues counted no packet (there was
 * nothing to deliver), "without-interrupt" when they carried packets and
 * the IRQ fired on no CPU (busy polling, interrupts deferred by
 * napi_defer_hard_irqs or suspended, TX completions reaped without their
 * interrupt); the verdict stays "not observed": no delivery was seen,
 * whichever it was.
 * Returns a new object, NULL when out of memory. */
json_t *nt_delivery_compute(const nt_delivery_in *in);

#endif
