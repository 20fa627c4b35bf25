/* SPDX-License-Identifier: Apache-2.0 */
/* Findings: what is misplaced on a host, each with a stable id, a severity,
 * the evidence, and where possible the profile fragment that fixes it. */
#ifndef NT_DIAGNOSE_H
#define NT_DIAGNOSE_H

#include "host/topology.h"

struct nt_host_napi;

typedef struct nt_diag_options {
	int rtt_ms; /* RTT for the bandwidth-delay product of tcp-buffers-small; default 10 */
	/* RX drops over a recent window (host/dropwin.h): NIC -> {"drops",
	 * "over_ms", "since": "window"|"ring-change"}, or NULL. ring-below-max
	 * judges a NIC in it by those drops (none: no finding, so it clears
	 * once a raised ring stops the drops), a NIC not in it by its
	 * counters since boot, and says which. */
	const json_t *recent_drops;
	/* Interface -> cpulist of CPUs kept for applications (a plan's
	 * "reserved"), for rps-reserved-cpus; NULL: none known. Borrowed. */
	const json_t *reserved;
	/* The NAPIs of the host's NICs (host/napi.h, nt_host_napi_read), or
	 * NULL: then no NAPI finding, and the steering findings map queues to
	 * IRQs by the IRQs' names. Where it holds the family's map of a NIC,
	 * that map is used and the evidence says "irq_source": "netlink".
	 * Borrowed. */
	const struct nt_host_napi *napi;
	/* The profile in effect: the desired state's profile, else the last
	 * applied transaction's (agent/agent.h, nt_agent_profile_in_effect),
	 * and where it came from ("the desired state", "transaction 7"), or
	 * NULL: dim-profile-default reads from it whether the host asked for
	 * latency. Borrowed. */
	const json_t *profile;
	const char *profile_source;
} nt_diag_options;

/* Returns a new {"findings":[...], "rtt_ms":N, ...} object, never NULL on
 * success; NULL only when out of memory. Reads T, and for the steering
 * findings the queue files of T's physical NICs (host/queues.h) through
 * T's context; the NAPI findings read only OPT->napi. */
json_t *nt_diagnose(const nt_topology *t, const nt_diag_options *opt);

/* Add to DIAGNOSIS (nt_diagnose's document) a "drift" finding for each
 * target of DRIFT (the drift watcher's report, agent/drift.h) that is
 * contested (severity warning), drifted under policy "report" (warning:
 * nothing will repair it) or overridden (info), and one for a
 * desired state that no longer validates (warning). Pure. Returns 0 or
 * -ENOMEM. */
int nt_diagnose_add_drift(json_t *diagnosis, const json_t *drift);

/* Add to DIAGNOSIS an "irq-delivered-elsewhere" finding (warning) for each
 * IRQ that CHECK, the agent's last delivery check (host/delivery.h's
 * document with "at_ms"), found delivered outside its placement or
 * affinity, with the CPUs and counts as evidence, and a
 * "napi-thread-elsewhere" finding (warning) for each NAPI thread it found
 * elsewhere (its "threads"), with the thread's entry as evidence and, when
 * its allowed CPUs were no longer its placement, the napi[] entry that
 * pins it again as fix. NOW_MS says how long ago. Pure. Returns 0 or
 * -ENOMEM. */
int nt_diagnose_add_delivery(json_t *diagnosis, const json_t *check, int64_t now_ms);

/* One profile made of every finding's fix, ready for plan/apply:
 * irq_affinity, rings, coalesce and bonds entries concatenated (one per interface,
 * first finding wins), napi entries concatenated (one per interface and
 * queue list: they pin different queues' threads), rss entries (one per
 * interface and context: a NIC's own table and each of its contexts' are
 * entries of their own), sysctl and irqbalance
 * merged. NAME names it.
 * Returns a new profile (with no entries when nothing is fixable), or NULL
 * when out of memory. Pure. */
json_t *nt_diagnose_fix_profile(const json_t *diagnosis, const char *name);

#endif
