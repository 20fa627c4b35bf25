/* SPDX-License-Identifier: Apache-2.0 */
/* Private to host/: what the files of the host read share. Nothing
 * outside host/ includes this; the host model's interface is
 * host/topology.h.
 *
 *   host/topology.c          the read's entry: the static part read and
 *                            copied, the dynamic part in two halves,
 *                            problems in the order of one read
 *   host/topology_machine.c  CPUs, NUMA nodes, memory, sysctls, irqbalance
 *   host/topology_irq.c      the IRQ half: /proc/interrupts, the IRQs'
 *                            files, the threads reading them
 *   host/topology_nic.c      the NIC half: NICs, links, bonds, which NIC
 *                            owns each IRQ, the NIC reporters
 *   host/topology_lookup.c   finding NICs, IRQs, bonds, nodes and cores
 *   host/topology_jansson.c  the JSON documents built with jansson
 *   host/topology_json.c     the same documents written as text */
#ifndef NT_HOST_TOPOLOGY_INT_H
#define NT_HOST_TOPOLOGY_INT_H

#include "host/topology.h"
#include "kernel/irqbalance_client.h"

#include <pthread.h>
#include <stdbool.h>

/* nt_topology_problem with a path made by printf from FMT. */
void nt_tp_problemf(nt_topology *t, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Append BASE's static problems [FROM, FROM+N) to T's: each is listed
 * where the single read of the past listed it. */
void nt_tp_add_static_problems(nt_topology *t, const nt_topology *base, int from, int n);

/* topology_machine.c. The static part: CPUs (with cores and packages),
 * then the nodes (which need the CPUs); each 0 or -ENOMEM, what could not
 * be read listed in problems. */
int nt_tp_read_cpus(nt_topology *t);
int nt_tp_read_nodes(nt_topology *t);
/* The dynamic part: memory per node, the sysctls (0 or -ENOMEM), and
 * irqbalance (MEMO: the last search, NULL to search now). */
void nt_tp_read_meminfo(nt_topology *t);
int nt_tp_read_sysctls(nt_topology *t);
void nt_tp_read_irqbalance(nt_topology *t, nt_irqbalance_memo *memo);

/* topology_nic.c. The NICs and what only hotplug changes about them
 * (0 or -ENOMEM); what changes while the agent runs, BASE being the
 * static part T was copied from and EH the read's ethtool handle (NULL
 * when it could not be opened); which NIC owns each of T's IRQs (run by
 * the IRQ half once the IRQs exist). */
int nt_tp_read_nics_static(nt_topology *t);
int nt_tp_read_nics_dynamic(nt_topology *t, const nt_topology *base, nt_ethtool *eh);
void nt_tp_read_irq_owners(nt_topology *t);

/* topology_irq.c. */
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
} nt_tp_irq_half;

/* The IRQ half's own thread (or the reading thread itself, when none
 * could be made), started with H's t and files set and its mu and cv
 * initialised. */
void *nt_tp_irq_half_main(void *arg);
/* Once the NICs are read: help with the parts left, wait for the IRQ
 * half's end (THREAD joined when THREADED), and report what it met.
 * Returns 0 or -ENOMEM. */
int nt_tp_finish_irq_half(nt_topology *t, nt_tp_irq_half *h, pthread_t thread, bool threaded);

#endif
