/* SPDX-License-Identifier: Apache-2.0 */
/* NIC reporters: how a setting kind shows per-NIC state in the host model
 * without touching the topology reader. On a tree whose ethtool files
 * carry nothing a module reports, the shipped reporters change nothing; a
 * test-local reporter reads a caller-defined ethtool group
 * through the read's handle, and its members appear in the NIC's document
 * after the reader's own, never replacing them. */
#include "host/topology.h"
#include "kernel/ethtool.h"
#include "harness.h"

#include <errno.h>
#include <ftw.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COAL(n, A, io, w) { #n, ETHTOOL_A_COALESCE_##A, w, offsetof(struct ethtool_coalesce, io), \
	false, NULL }
static const nt_ethtool_field coalesce_fields[] = {
	COAL(rx_usecs, RX_USECS, rx_coalesce_usecs, NT_ETHTOOL_U32),
	COAL(tx_usecs, TX_USECS, tx_coalesce_usecs, NT_ETHTOOL_U32),
	COAL(use_adaptive_rx, USE_ADAPTIVE_RX, use_adaptive_rx_coalesce, NT_ETHTOOL_U8),
};
static const nt_ethtool_group coalesce = {
	.section = "coalesce",
	.get_cmd = ETHTOOL_MSG_COALESCE_GET,
	.set_cmd = ETHTOOL_MSG_COALESCE_SET,
	.header_attr = ETHTOOL_A_COALESCE_HEADER,
	.ioc_get = ETHTOOL_GCOALESCE,
	.ioc_set = ETHTOOL_SCOALESCE,
	.ioc_size = sizeof(struct ethtool_coalesce),
	.fields = coalesce_fields,
	.nfields = 3,
};

static nt_ethtool *seen_eh;
static int calls;

/* What settings/coalesce.c's reporter would be. */
static int report_coalesce(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *out)
{
	nt_ethtool_values v;
	calls++;
	if (calls == 1)
		seen_eh = eh;
	CHECK(eh != NULL && eh == seen_eh); /* the read's one handle, every time */
	int r = nt_ethtool_get_group(eh, ctx, &coalesce, nic->name, &v);
	if (r == -EOPNOTSUPP)
		return json_object_set_new(out, "coalesce", json_null());
	if (r < 0)
		return r;
	json_t *o = json_object();
	for (int i = 0; i < coalesce.nfields; i++)
		if (v.present & (1u << i))
			json_object_set_new(o, coalesce_fields[i].name, json_integer(v.v[i]));
	return json_object_set_new(out, "coalesce", o);
}

/* A reporter may not replace what the reader reports. */
static int report_rings(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *out)
{
	return json_object_set_new(out, "rings", json_string("mine"));
}

static int report_fail(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *out)
{
	json_object_set_new(out, "partial", json_true());
	return strcmp(nic->name, "enos1") == 0 ? -EIO : 0;
}

static char root[64];

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

/* The registered reporters add their members to a NIC's document and
 * change nothing else: without them (as before the hook existed) each NIC's
 * document and the host's are what they were, less those members. On the
 * EPYC fixture they add the root qdisc (settings/qdisc.c's report). */
static void reporters_add_only_their_members(void)
{
	nt_ctx ctx;
	nt_topology *t = NULL;

	CHECK(nt_nic_reporters[0] != NULL);
	CHECK_INT(nt_ctx_init(&ctx, NT_FIXTURES "/epyc7713-2node-bond"), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (!t)
		return;
	CHECK(t->nnics > 0);
	json_t *with = nt_topology_to_json(t);
	json_t *added = json_array(); /* each NIC's reported members, in order */
	for (int i = 0; i < t->nnics; i++) {
		CHECK(json_is_object(t->nics[i].reported));
		json_t *rep = json_deep_copy(t->nics[i].reported);
		json_t *a = nt_nic_to_json(t, &t->nics[i]);
		json_decref(t->nics[i].reported);
		t->nics[i].reported = NULL;
		json_t *b = nt_nic_to_json(t, &t->nics[i]);
		const char *k;
		json_t *v;
		json_object_foreach(rep, k, v) {
			CHECK_MSG(json_object_get(b, k) == NULL, "%s: %s only from its reporter", t->nics[i].name, k);
			json_object_set(b, k, v);
		}
		CHECK_MSG(json_equal(a, b), "%s: the reporters added only their members", t->nics[i].name);
		json_array_append_new(added, rep);
		json_decref(a);
		json_decref(b);
	}
	json_t *without = nt_topology_to_json(t);
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(without, "nics"), i, n)
		if (i < json_array_size(added))
			json_object_update(n, json_array_get(added, i));
	CHECK(json_equal(with, without));
	json_decref(added);
	json_decref(with);
	json_decref(without);
	nt_topology_free(t);
}

static void local_reporters(void)
{
	char cmd[PATH_MAX], path[PATH_MAX];
	nt_ctx ctx;
	nt_topology *t = NULL;
	nt_ethtool *eh = NULL;

	/* A copy of the EPYC fixture whose enos0 reports coalescing. */
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/ethtool/enos0.json", root);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("{\"rings\": {\"rx\": 1024, \"rx_max\": 8192, \"tx\": 1024, \"tx_max\": 8192},\n"
	      " \"coalesce\": {\"rx_usecs\": 64, \"use_adaptive_rx\": true}}\n", f);
	fclose(f);

	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (!t)
		return;
	CHECK_INT(nt_ethtool_open(&ctx, &eh), 0);
	const nt_nic_report_fn table[] = { report_coalesce, report_rings, NULL };
	CHECK_INT(nt_topology_report(t, eh, table), 0);
	CHECK_INT(calls, t->nnics);

	json_t *doc = nt_nic_to_json(t, nt_topology_nic(t, "enos0"));
	json_t *c = json_object_get(doc, "coalesce");
	CHECK_INT(json_integer_value(json_object_get(c, "rx_usecs")), 64);
	CHECK_INT(json_integer_value(json_object_get(c, "use_adaptive_rx")), 1);
	CHECK(json_object_get(c, "tx_usecs") == NULL); /* not reported: absent */
	CHECK(json_is_object(json_object_get(doc, "rings"))); /* the reader's, kept */
	CHECK_INT(json_integer_value(json_object_get(json_object_get(doc, "rings"), "rx")), 1024);
	/* The document is a copy: editing it leaves the topology alone. */
	json_object_set_new(c, "rx_usecs", json_integer(1));
	json_decref(doc);
	doc = nt_nic_to_json(t, nt_topology_nic(t, "enos0"));
	CHECK_INT(json_integer_value(json_object_get(json_object_get(doc, "coalesce"), "rx_usecs")),
		  64);
	json_decref(doc);

	doc = nt_nic_to_json(t, nt_topology_nic(t, "enos1"));
	CHECK(json_is_null(json_object_get(doc, "coalesce")));
	json_decref(doc);

	/* The whole topology document carries them too. */
	json_t *all = nt_topology_to_json(t);
	json_t *nics = json_object_get(all, "nics");
	size_t i;
	json_t *n;
	int with_coalesce = 0;
	json_array_foreach(nics, i, n)
		if (json_object_get(n, "coalesce"))
			with_coalesce++;
	CHECK_INT(with_coalesce, t->nnics);
	json_decref(all);

	/* A failing reporter: listed in problems, its members kept, others go on. */
	size_t before = json_array_size(t->problems);
	const nt_nic_report_fn failing[] = { report_fail, NULL };
	CHECK_INT(nt_topology_report(t, eh, failing), 0);
	CHECK_INT(json_array_size(t->problems), before + 1);
	const char *p = json_string_value(
		json_object_get(json_array_get(t->problems, before), "path"));
	CHECK(p && strstr(p, "enos1") != NULL);
	CHECK(json_is_true(json_object_get(nt_topology_nic(t, "enos2")->reported, "partial")));
	nt_ethtool_close(eh);
	nt_topology_free(t);
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/nt-report-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	reporters_add_only_their_members();
	local_reporters();
	nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	TEST_MAIN_END();
}
