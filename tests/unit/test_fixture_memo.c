/* SPDX-License-Identifier: Apache-2.0 */
/* One read of a fixture root answers from one state (kernel/fixture_memo.c):
 * between nt_kernel_read_begin and _end each NIC's ethtool document is
 * parsed once, so a change on disk in between is not seen; after _end, and
 * in the next host read, it is. Writes never answer from the memo. With
 * documents kept between reads (kernel/fixture_docs.c) an unchanged file
 * is not parsed again, and every kind of change is still seen. */
#include "host/hostcache.h"
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
#include <unistd.h>

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

/* One host read's question about eth9's rings, as the host read asks it:
 * between begin and end. */
static int read_rings(nt_ctx *ctx, nt_rings *rings)
{
	CHECK_INT(nt_kernel_read_begin(ctx), 0);
	int r = nt_ethtool_get_rings(ctx, "eth9", rings);
	nt_kernel_read_end(ctx);
	return r;
}

/* The documents kept between reads: an unchanged file is not parsed
 * again, and a change of size, a rename over the file (the agent's own
 * writes) and a removal are each seen by the next read. */
static void docs_kept_between_reads(const char *root)
{
	nt_ctx ctx;
	nt_fx_docs *d = NULL;
	nt_rings rings;
	char path[PATH_MAX], tmp[PATH_MAX], err[256];

	doc(root, 1024, 16);
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	/* Settled at once: what is kept is decided by the file alone. */
	CHECK_INT(nt_fx_docs_new(0, &d), 0);
	if (!d)
		return;
	ctx.fx_docs = d;
	CHECK_INT(read_rings(&ctx, &rings), 0);
	CHECK_INT(rings.rx, 1024);
	CHECK_INT((long)nt_fx_docs_parses(d), 1);
	CHECK_INT(read_rings(&ctx, &rings), 0);
	CHECK_INT(rings.rx, 1024);
	CHECK_INT((long)nt_fx_docs_parses(d), 1);

	/* Rewritten in place with another size. */
	doc(root, 65536, 16);
	CHECK_INT(read_rings(&ctx, &rings), 0);
	CHECK_INT(rings.rx, 65536);
	CHECK_INT((long)nt_fx_docs_parses(d), 2);

	/* Replaced by a rename with the same size: a new inode. */
	snprintf(path, sizeof(path), "%s/ethtool/eth9.json", root);
	snprintf(tmp, sizeof(tmp), "%s/ethtool/eth9.json.new", root);
	doc(root, 32768, 16);
	CHECK_INT(rename(path, tmp), 0);
	doc(root, 65536, 16);
	CHECK_INT(rename(tmp, path), 0);
	CHECK_INT(read_rings(&ctx, &rings), 0);
	CHECK_INT(rings.rx, 32768);

	/* The agent's own write, and the read after it. */
	nt_rings want = { .tx = 128 };
	CHECK_INT(nt_ethtool_set_rings(&ctx, "eth9", &want, err, sizeof(err)), 0);
	CHECK_INT(read_rings(&ctx, &rings), 0);
	CHECK_INT(rings.rx, 32768);
	CHECK_INT(rings.tx, 128);

	/* Gone: the NIC has no ethtool ops, whatever was kept. */
	CHECK_INT(unlink(path), 0);
	CHECK_INT(read_rings(&ctx, &rings), -EOPNOTSUPP);
	/* And a document that is not an object is refused, not kept. */
	tree_write(root, "ethtool/eth9.json", "[1, 2]\n");
	CHECK_INT(read_rings(&ctx, &rings), NT_EPARSE);
	doc(root, 1024, 16);
	CHECK_INT(read_rings(&ctx, &rings), 0);
	CHECK_INT(rings.rx, 1024);
	nt_fx_docs_free(d);
}

/* With the settling time the agent uses, a file changed a moment ago is
 * parsed at every read: a rewrite in place of the same size, within one
 * tick of the file system's clock, is seen all the same. */
static void docs_fresh_files_not_kept(const char *root)
{
	nt_ctx ctx;
	nt_fx_docs *d = NULL;
	nt_rings rings;

	doc(root, 1024, 16);
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_fx_docs_new(NT_FX_DOCS_SETTLE_MS, &d), 0);
	if (!d)
		return;
	ctx.fx_docs = d;
	for (int i = 0; i < 20; i++) {
		int rx = i % 2 ? 2048 : 4096; /* the same size each time */
		doc(root, rx, 16);
		CHECK_INT(read_rings(&ctx, &rings), 0);
		CHECK_MSG(rings.rx == (uint32_t)rx, "round %d: rx %u, want %d", i, rings.rx, rx);
	}
	CHECK_INT((long)nt_fx_docs_parses(d), 20);
	/* Unchanged since, but still too fresh to be kept. */
	CHECK_INT(read_rings(&ctx, &rings), 0);
	CHECK_INT((long)nt_fx_docs_parses(d), 21);
	nt_fx_docs_free(d);
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
	/* Through the agent's host cache, which keeps the documents. */
	nt_host_cache *cache = NULL;
	CHECK_INT(nt_host_cache_new(&ctx, &cache), 0);
	ctx.host_cache = cache;
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
	nt_host_cache_free(cache);
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
	docs_kept_between_reads(root);
	docs_fresh_files_not_kept(root);
	live_has_none();
	host_reads_see_changes(host);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK_INT(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", host);
	CHECK_INT(system(cmd), 0);
	TEST_MAIN_END();
}
