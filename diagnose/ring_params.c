/* SPDX-License-Identifier: Apache-2.0 */
/* Findings on the ring parameters only ethtool netlink reaches
 * (settings/ring_params.c), read as GET /v1/nics/{name} shows them:
 *   rx-buf-len-below-mtu  a jumbo link (MTU above 1500) whose driver
 *                         reports RX buffers smaller than a frame of that
 *                         MTU: each such frame spans several buffers of
 *                         the ring;
 *   hds-off               header/data split reported off on NICs whose
 *                         driver reports it: informational only, since
 *                         only the applications that receive with zero
 *                         copy (TCP zero-copy receive, devmem TCP,
 *                         io_uring zero-copy RX) need it, and nothing here
 *                         can tell whether this host runs them.
 * Physical NICs only (a veth or a bridge reports no rings), one RINGS_GET
 * each through one ethtool handle; a NIC whose driver reports neither
 * field gets neither finding, never a guess. */
#include "diagnose/diagnose_int.h"
#include "settings/setting.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* What a frame of MTU bytes of payload takes in an RX buffer: the
 * Ethernet header (14), one VLAN tag (4) and the FCS (4), as drivers size
 * their buffers for the MTU. */
#define FRAME_OVERHEAD 22

/* NICs named in a message, at most; the evidence lists every one. */
#define NAMED_MAX 4

/* Field NAME of a NIC's "ring_params" report when the driver reports it
 * ({"supported": true, "value": V}), else NULL. */
static const json_t *reported(const json_t *rp, const char *name)
{
	const json_t *f = json_object_get(rp, name);
	return json_is_true(json_object_get(f, "supported")) ? json_object_get(f, "value") : NULL;
}

static int check_buf_len(diag *d, const nt_nic *nic, const json_t *rp)
{
	const json_t *v = reported(rp, "rx_buf_len");
	json_int_t len = json_is_integer(v) ? json_integer_value(v) : 0;
	long frame = (long)nic->mtu + FRAME_OVERHEAD;
	/* 0: the driver reports the field without a size of its own. */
	if (nic->mtu <= 1500 || len <= 0 || len >= frame)
		return 0;
	long want = 2048;
	while (want < frame)
		want *= 2;
	long spans = (frame + (long)len - 1) / (long)len;
	json_t *ev = json_pack("{s:i, s:I, s:i, s:i}", "mtu", nic->mtu, "rx_buf_len", len, "frame_bytes", (int)frame,
			       "buffers_per_frame", (int)spans);
	json_t *fix = json_pack("{s:[{s:s, s:I}]}", "rings", "interface", nic->name, "rx_buf_len", (json_int_t)want);
	return diag_add_finding(d, "rx-buf-len-below-mtu", SEV_WARNING, nic->name, ev, fix,
				"%s: its RX buffers are %lld bytes (rx-buf-len) and its MTU is %d, so a frame of "
				"the full MTU (%ld bytes with header, VLAN tag and FCS) spans %ld buffers of the ring: "
				"the ring holds that many times fewer such frames, and the driver chains buffers for "
				"each one (XDP programs that do not take fragments cannot be attached). Fix: "
				"rx_buf_len %ld, the smallest power of two that holds the frame; a driver that has no "
				"such size refuses it at apply (the transaction then rolls back), and a smaller MTU "
				"is the other way.",
				nic->name, (long long)len, nic->mtu, frame, spans, want);
}

static int add_hds_off(diag *d, json_t *list, char *names, size_t n)
{
	if (n == 0) {
		json_decref(list);
		return 0;
	}
	return diag_add_finding(d, "hds-off", SEV_INFO, "host", json_pack("{s:o}", "interfaces", list), NULL,
				"%zu NIC%s report%s header/data split off (tcp-data-split): %s. TCP zero-copy "
				"receive, devmem TCP and io_uring zero-copy RX need it on; other traffic does not. "
				"Informational: nothing on the host says whether those applications run here. Where "
				"they do, the profile fragment is {\"rings\": [{\"interface\": \"%s\", "
				"\"tcp_data_split\": \"on\"}]} (the driver may also need hds_thresh, or its "
				"channels or MTU changed, to accept it).",
				n, n == 1 ? "" : "s", n == 1 ? "s" : "", names,
				json_string_value(json_object_get(json_array_get(list, 0), "interface")));
}

int diag_check_ring_params(diag *d)
{
	const nt_topology *t = d->t;
	json_t *hds = json_array();
	char names[256] = "";
	size_t nhds = 0, len = 0;
	int err = hds ? 0 : -ENOMEM;

	for (int i = 0; !err && i < t->nnics; i++) {
		const nt_nic *nic = &t->nics[i];
		json_t *doc = NULL;
		if (!diag_nic_is_physical(nic))
			continue;
		if (!(doc = json_object()))
			err = -ENOMEM;
		else if (nt_setting_report_detail_of("ring_params", d->ctx, d->eh, nic, doc) == -ENOMEM)
			err = -ENOMEM;
		const json_t *rp = json_object_get(doc, "ring_params");
		if (!err && json_is_object(rp))
			err = check_buf_len(d, nic, rp);
		const json_t *split = json_is_object(rp) ? reported(rp, "tcp_data_split") : NULL;
		if (!err && json_is_string(split) && !strcmp(json_string_value(split), "off")) {
			const json_t *th = reported(rp, "hds_thresh");
			if (json_array_append_new(hds, json_pack("{s:s, s:s, s:O}", "interface", nic->name,
								 "tcp_data_split", "off", "hds_thresh",
								 th ? (json_t *)th : json_null())) < 0)
				err = -ENOMEM;
			else if (nhds++ < NAMED_MAX && len < sizeof(names))
				len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", nhds > 1 ? ", " : "",
							nic->name);
		}
		json_decref(doc);
	}
	if (err) {
		json_decref(hds);
		return err;
	}
	if (nhds > NAMED_MAX && len < sizeof(names))
		snprintf(names + len, sizeof(names) - len, " and %zu more", nhds - NAMED_MAX);
	return add_hds_off(d, hds, names, nhds);
}
