/* SPDX-License-Identifier: Apache-2.0 */
/* The link findings, from what settings/mtu.c and qdisc.c report per NIC:
 *   bond-mtu-mismatch    slaves of a bond whose MTU is not the bond's;
 *   txqueuelen-small     a 10G+ link at the default queue length of 1000;
 *   qdisc-default-stale  a NIC still on pfifo_fast (or noqueue) while
 *                        net.core.default_qdisc names another: the default
 *                        applies only to qdiscs attached after it was set. */
#include "diagnose/diagnose_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The default queue length of an Ethernet device (ether_setup). */
#define TXQLEN_DEFAULT 1000
/* What the fix asks for: 10 ms of full-size frames at 10 Gbit/s is ~8000
 * packets; the 100G guides give 10000. */
#define TXQLEN_FAST 10000

/* A slave whose MTU differs from its bond's drops or fragments what the
 * bond accepts; the bonding driver sets its slaves only when the bond's
 * MTU changes, so a slave changed later stays different. */
static int check_bond_mtu(diag *d)
{
	const nt_topology *t = d->t;
	for (int i = 0; i < t->nbonds; i++) {
		const nt_bond *b = &t->bonds[i];
		const nt_nic *bn = diag_nic(t, b->name);
		if (!bn || bn->mtu <= 0)
			continue;
		json_t *slaves = json_object(), *fix = json_array();
		if (!slaves || !fix) {
			json_decref(slaves);
			json_decref(fix);
			return -ENOMEM;
		}
		for (int s = 0; s < b->nslaves; s++) {
			const nt_nic *sn = diag_nic(t, b->slaves[s]);
			if (!sn || sn->mtu <= 0 || sn->mtu == bn->mtu)
				continue;
			json_object_set_new(slaves, sn->name, json_integer(sn->mtu));
			json_array_append_new(fix, json_pack("{s:s, s:i}", "interface", sn->name, "mtu", bn->mtu));
		}
		if (json_object_size(slaves) == 0) {
			json_decref(slaves);
			json_decref(fix);
			continue;
		}
		size_t n = json_object_size(slaves);
		json_t *ev = json_pack("{s:i, s:o}", "bond_mtu", bn->mtu, "slaves", slaves);
		int err = diag_add_finding(d, "bond-mtu-mismatch", SEV_WARNING, b->name, ev,
					   json_pack("{s:o}", "mtu", fix),
					   "%zu slave%s of %s %s an MTU other than the bond's %d: frames the bond "
					   "takes are dropped or fragmented on %s.",
					   n, n == 1 ? "" : "s", b->name, n == 1 ? "has" : "have", bn->mtu,
					   n == 1 ? "it" : "them");
		if (err)
			return err;
	}
	return 0;
}

/* The reported integer KEY of N, or -1. */
static long reported_int(const nt_nic *n, const char *key)
{
	json_t *v = json_object_get(n->reported, key);
	return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

/* A burst from many flows overflows a 1000-packet queue at 10 Gbit/s in
 * ~1.2 ms of full-size frames, and the packets dropped there are counted
 * nowhere but the qdisc's statistics. */
static int check_txqueuelen(diag *d)
{
	const nt_topology *t = d->t;
	for (int i = 0; i < t->nnics; i++) {
		const nt_nic *n = &t->nics[i];
		long q = reported_int(n, "txqueuelen");
		if (!diag_nic_is_physical(n) || n->speed_mbps < 10000 || q != TXQLEN_DEFAULT)
			continue;
		json_t *ev = json_pack("{s:i, s:I}", "txqueuelen", (int)q, "speed_mbps", (json_int_t)n->speed_mbps);
		json_t *fix = json_pack("{s:[{s:s, s:i}]}", "txqueuelen", "interface", n->name, "txqueuelen",
					TXQLEN_FAST);
		int err = diag_add_finding(d, "txqueuelen-small", SEV_INFO, n->name, ev, fix,
					   "%s runs at %ld Mbit/s with the default transmit queue of %d packets, "
					   "about %.1f ms of full-size frames.",
					   n->name, n->speed_mbps, TXQLEN_DEFAULT,
					   TXQLEN_DEFAULT * 1514.0 * 8 / ((double)n->speed_mbps * 1000));
		if (err)
			return err;
	}
	return 0;
}

/* net.core.default_qdisc is used when the kernel attaches a root (or an
 * mq's children) to a device coming up; a NIC up before it was set keeps
 * pfifo_fast until its root is replaced. */
static int check_qdisc_default(diag *d)
{
	const nt_topology *t = d->t;
	const char *dq = diag_sysctl(t, "net.core.default_qdisc");
	if (!dq || (strcmp(dq, "fq") != 0 && strcmp(dq, "fq_codel") != 0))
		return 0;
	for (int i = 0; i < t->nnics; i++) {
		const nt_nic *n = &t->nics[i];
		const char *kinds = json_string_value(json_object_get(n->reported, "qdisc_kinds"));
		if (!diag_nic_is_physical(n) || !kinds)
			continue;
		bool mq = strncmp(kinds, "mq ", 3) == 0;
		const char *leaf = mq ? kinds + 3 : kinds;
		if (strcmp(leaf, "pfifo_fast") != 0 && strcmp(leaf, "noqueue") != 0)
			continue;
		json_t *entry = mq ? json_pack("{s:s, s:s, s:s}", "interface", n->name, "qdisc", "mq", "child", dq)
				   : json_pack("{s:s, s:s}", "interface", n->name, "qdisc", dq);
		json_t *ev = json_pack("{s:s, s:s}", "qdisc", kinds, "default_qdisc", dq);
		int err = diag_add_finding(d, "qdisc-default-stale", SEV_WARNING, n->name, ev,
					   json_pack("{s:[o]}", "qdisc", entry),
					   "%s still queues on %s although net.core.default_qdisc is %s: the default "
					   "applies only to qdiscs attached after it was set.",
					   n->name, leaf, dq);
		if (err)
			return err;
	}
	return 0;
}

int diag_check_link(diag *d)
{
	int r = check_bond_mtu(d);
	if (r == 0)
		r = check_txqueuelen(d);
	if (r == 0)
		r = check_qdisc_default(d);
	return r;
}
