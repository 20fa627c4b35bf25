/* SPDX-License-Identifier: Apache-2.0 */
/* One read of a fixture root answers from one state (kernel/fixture_memo.c):
 * between nt_kernel_read_begin and _end each NIC's ethtool document is
 * parsed once, so a change on disk in between is not seen; after _end, and
 * in the next host read, it is. Writes never answer from the memo. */
#include "host/topology.h"
#include "kernel/ethtool.h"
#include "kernel/kernel.h"
#include "harness.h"
#include "tree_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void doc(const char *root, int rx, int combined)
{
	char text[512];
	snprintf(text, sizeof(text),
		 "{\"rings\": {\"rx\": %d, \"tx\": 512, \"rx_max\": 8192, \"tx_max\": 4096},\n"
		 " \"channels\": {\"combined\": %d, \"combined_max\": 63},\n"
		 " \"link\": {\"min_mtu\": 68, \"max_mtu\": 9216},\n"
		 " \"rss\": {\"indir\": [0, 1, 0, 1], \"key\": \"00:11\", \"hfunc\": \"toeplitz\"}}\n",
		 rx, combined);
	tree_write(root, "ethtool/eth9.json", text);
}

/* Within one read: the first parse answers every question; a document
 * changed on disk is seen only once the read has ended. */
static void memo_holds_for_one_read(const char *root)
{
	nt_ctx ctx;
	nt_rings rings;
	nt_channels ch;
	char err[256];

	doc(root, 1024, 16);
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_kernel_read_begin(&ctx), 0);
	CHECK(ctx.fx_memo != NULL);
	CHECK_INT(nt_ethtool_get_rings(&ctx, "eth9", &rings), 0);
	CHECK_INT(rings.rx, 1024);
	doc(root, 2048, 8);
	/* Same read: the state it began with, for every group. */
	CHECK_INT(nt_ethtool_get_rings(&ctx, "eth9", &rings), 0);
	CHECK_INT(rings.rx, 1024);
	CHECK_INT(nt_ethtool_get_channels(&ctx, "eth9", &ch), 0);
	CHECK_INT(ch.combined, 16);
	/* A NIC without a document is remembered as one too. */
	CHECK_INT(nt_ethtool_get_rings(&ctx, "eth7", &rings), -EOPNOTSUPP);
	CHECK_INT(nt_ethtool_get_rings(&ctx, "eth7", &rings), -EOPNOTSUPP);
	nt_kernel_read_end(&ctx);
	CHECK(ctx.fx_memo == NULL);
	/* The next question reads the file as it is now. */
	CHECK_INT(nt_ethtool_get_rings(&ctx, "eth9", &rings), 0);
	CHECK_INT(rings.rx, 2048);
	CHECK_INT(nt_ethtool_get_channels(&ctx, "eth9", &ch), 0);
	CHECK_INT(ch.combined, 8);

	/* A write parses the document afresh, not the memo's copy: the value
	 * on disk (4096) is what it changes from, and a refused write names
	 * the file's maximum. */
	doc(root, 4096, 8);
	nt_rings want = { .tx = 256 };
	CHECK_INT(nt_ethtool_set_rings(&ctx, "eth9", &want, err, sizeof(err)), 0);
	CHECK_INT(nt_ethtool_get_rings(&ctx, "eth9", &rings), 0);
	CHECK_INT(rings.rx, 4096);
	CHECK_INT(rings.tx, 256);

	/* begin twice keeps the one memo; end twice is harmless. */
	CHECK_INT(nt_kernel_read_begin(&ctx), 0);
	struct nt_fx_memo *m = ctx.fx_memo;
	CHECK_INT(nt_kernel_read_begin(&ctx), 0);
	CHECK(ctx.fx_memo == m);
	nt_kernel_read_end(&ctx);
	nt_kernel_read_end(&ctx);
	CHECK(ctx.fx_memo == NULL);
}

/* A live root never has a memo. */
static void live_has_none(void)
{
	nt_ctx ctx;
	CHECK_INT(nt_ctx_init(&ctx, "/"), 0);
	CHECK_INT(nt_kernel_read_begin(&ctx), 0);
	CHECK(ctx.fx_memo == NULL);
	nt_kernel_read_end(&ctx);
}

/* Two host reads of a real fixture: a ring changed between them is seen
 * by the second, the topology it returns carries no memo, and every NIC's
 * rings, channels and link range read the same with and without it. */
static void host_reads_see_changes(const char *root)
{
	char cmd[PATH_MAX * 2 + 64];
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	nt_ctx ctx;
	nt_topology *t1 = NULL, *t2 = NULL;
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t1), 0);
	if (!t1)
		return;
	CHECK(t1->ctx.fx_memo == NULL);
	const nt_nic *n = nt_topology_nic(t1, "enos0");
	CHECK(n && n->has_rings);
	if (!n || !n->has_rings)
		goto out;
	uint32_t rx = n->rings.rx;

	/* Each NIC as one question at a time would see it. */
	for (int i = 0; i < t1->nnics; i++) {
		nt_rings r;
		nt_channels c;
		const nt_nic *x = &t1->nics[i];
		int rr = nt_ethtool_get_rings(&ctx, x->name, &r);
		CHECK_MSG((rr == 0) == x->has_rings, "%s: rings %d", x->name, rr);
		if (rr == 0 && x->has_rings)
			CHECK_MSG(!memcmp(&r, &x->rings, sizeof(r)), "%s: rings differ", x->name);
		int cr = nt_ethtool_get_channels(&ctx, x->name, &c);
		CHECK_MSG((cr == 0) == x->has_channels, "%s: channels %d", x->name, cr);
	}

	nt_rings want = { .rx = rx == 512 ? 1024 : 512 };
	char err[256];
	CHECK_INT(nt_ethtool_set_rings(&ctx, "enos0", &want, err, sizeof(err)), 0);
	CHECK_INT(nt_topology_read(&ctx, &t2), 0);
	const nt_nic *n2 = t2 ? nt_topology_nic(t2, "enos0") : NULL;
	CHECK(n2 && n2->rings.rx == want.rx);
	CHECK(!t2 || t2->ctx.fx_memo == NULL);
out:
	nt_topology_free(t1);
	nt_topology_free(t2);
}

int main(void)
{
	char root[] = "/tmp/nt-fxmemo-XXXXXX", host[] = "/tmp/nt-fxmemo-host-XXXXXX";
	char dir[PATH_MAX], cmd[PATH_MAX + 16];

	if (!mkdtemp(root) || !mkdtemp(host)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/ethtool", root);
	mkdir(dir, 0755);
	memo_holds_for_one_read(root);
	live_has_none();
	host_reads_see_changes(host);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK_INT(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", host);
	CHECK_INT(system(cmd), 0);
	TEST_MAIN_END();
}
