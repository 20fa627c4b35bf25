/* SPDX-License-Identifier: Apache-2.0 */
/* Findings on a host model: what the authors of the field reports in
 * docs/field-reports.md dug out by hand (IRQs off the NIC's node, IRQs of several NICs on one CPU, irqbalance undoing manual
 * affinity, small rings with drops, layer2 bond hashing, small TCP buffers),
 * each with the facts it rests on and the profile fragment that fixes it.
 * This file collects the findings and builds the document; the checks are
 * in one file per family of finding (see diagnose/diagnose_int.h).
 *
 * Everything here reads only the nt_topology it is given, and the NAPI read
 * beside it (nt_diag_options.napi): no file, no kernel call, so hand-built
 * models in a unit test are a complete host. The
 * output is deterministic (sorted by severity, then subject in natural order,
 * then id) so two reads of the same host give byte-identical documents. */
#include "diagnose/diagnose_int.h"
#include "host/napi.h"
#include "kernel/ethtool.h"
#include "kernel/kernel.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const diag_sev_names[] = { "error", "warning", "info" };

#define DIAG_DEFAULT_RTT_MS 10

/* ---- collecting findings ---- */

/* See diagnose/diagnose_int.h. */
int diag_add_finding(diag *d, const char *id, int sev, const char *subject, json_t *evidence,
	json_t *fix, const char *fmt, ...)
{
	int err = -ENOMEM;
	char *message = NULL;
	json_t *f = NULL;
	va_list ap;

	va_start(ap, fmt);
	int w = vasprintf(&message, fmt, ap);
	va_end(ap);
	if (w < 0) {
		message = NULL;
		goto out;
	}
	if (!evidence)
		goto out;
	if (d->n == d->cap) {
		int cap = d->cap ? d->cap * 2 : 16;
		diag_item *items = realloc(d->items, (size_t)cap * sizeof(*items));
		if (!items)
			goto out;
		d->items = items;
		d->cap = cap;
	}
	/* json_pack steals "o" references even when it fails. */
	f = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o}", "id", id, "severity", diag_sev_names[sev],
		"subject", subject, "message", message, "evidence", evidence, "fix",
		fix ? fix : json_null());
	evidence = NULL;
	fix = NULL;
	if (!f)
		goto out;
	d->items[d->n] = (diag_item){
		.finding = f,
		.sev = sev,
		.seq = d->n,
		.subject = json_string_value(json_object_get(f, "subject")),
		.id = json_string_value(json_object_get(f, "id")),
	};
	d->n++;
	err = 0;
out:
	json_decref(evidence);
	json_decref(fix);
	free(message);
	return err;
}

/* See diagnose/diagnose_int.h. */
int diag_queue_irq(const diag *d, const nt_nic *nic, int queue, bool tx, const char **source)
{
	return nt_host_napi_queue_irq(d->napi, d->t, nic, queue, tx, source);
}

/* Natural order, so "eth2" sorts before "eth10" and "irq 185" before
 * "irq 1000": runs of digits compare by value. */
static int natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			while (*a == '0' && a[1] >= '0' && a[1] <= '9')
				a++;
			while (*b == '0' && b[1] >= '0' && b[1] <= '9')
				b++;
			size_t la = strspn(a, "0123456789"), lb = strspn(b, "0123456789");
			if (la != lb)
				return la < lb ? -1 : 1;
			int c = strncmp(a, b, la);
			if (c)
				return c;
			a += la;
			b += lb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

static int item_cmp(const void *pa, const void *pb)
{
	const diag_item *a = pa, *b = pb;
	if (a->sev != b->sev)
		return a->sev < b->sev ? -1 : 1;
	int c = natural_cmp(a->subject, b->subject);
	if (c)
		return c;
	c = strcmp(a->id, b->id);
	if (c)
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

json_t *nt_diagnose(const nt_topology *t, const nt_diag_options *opt)
{
	diag d = { .t = t, .rtt_ms = DIAG_DEFAULT_RTT_MS, .profile_source = "the profile in effect" };
	json_t *out = NULL, *findings = NULL;
	int counts[3] = { 0, 0, 0 };

	if (opt && opt->rtt_ms > 0)
		d.rtt_ms = opt->rtt_ms;
	if (opt) {
		d.recent_drops = opt->recent_drops;
		d.napi = opt->napi;
		d.profile = opt->profile;
		if (opt->profile_source)
			d.profile_source = opt->profile_source;
	}

	nt_ctx ctx = t->ctx;
	nt_kernel_read_begin(&ctx); /* -ENOMEM: each read parses, as without */
	d.ctx = &ctx;
	if (nt_ethtool_open(d.ctx, &d.eh) < 0)
		d.eh = NULL;

	if (diag_check_irq_info(&d) || diag_check_irq_remote_node(&d) || diag_check_irq_shared_first_cpu(&d) ||
		diag_check_irqbalance(&d) || diag_check_rings(&d) || diag_check_ring_params(&d) || diag_check_dim_profile(&d) || diag_check_bonds(&d) || diag_check_features(&d) || diag_check_link(&d) ||
		diag_check_tcp_buffers(&d) || diag_check_busy_poll(&d) || diag_check_locality(&d) ||
		diag_check_steering(&d, opt ? opt->reserved : NULL) ||
		diag_check_flows(&d, opt ? opt->reserved : NULL) || diag_check_napi(&d))
		goto out;

	if (d.n)
		qsort(d.items, (size_t)d.n, sizeof(*d.items), item_cmp);
	findings = json_array();
	if (!findings)
		goto out;
	for (int i = 0; i < d.n; i++) {
		counts[d.items[i].sev]++;
		if (json_array_append(findings, d.items[i].finding) < 0)
			goto out;
	}
	out = json_pack("{s:i, s:O, s:{s:i, s:i, s:i}}", "rtt_ms", d.rtt_ms, "findings", findings,
		"summary", "error", counts[SEV_ERROR], "warning", counts[SEV_WARNING], "info",
		counts[SEV_INFO]);
out:
	nt_ethtool_close(d.eh);
	nt_kernel_read_end(&ctx);
	json_decref(findings);
	for (int i = 0; i < d.n; i++)
		json_decref(d.items[i].finding);
	free(d.items);
	return out;
}
