/* SPDX-License-Identifier: Apache-2.0 */
/* A settings group defined by its caller, read and written through the
 * fixture backend: what settings/coalesce.c will do with interrupt
 * coalescing. Also: a handle on a fixture root opens nothing, tables that
 * would index out of bounds are refused, and a caller's copy of the rings
 * table reads what nt_ethtool_get_rings reads. */
#include "kernel/ethtool.h"
#include "harness.h"
#include "tree_files.h"
#include "ethtool_groups.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A caller's own rings table, fields in another order than the library's. */
static const nt_ethtool_field my_ring_fields[] = {
	{ "tx_max", ETHTOOL_A_RINGS_TX_MAX, NT_ETHTOOL_U32,
	  offsetof(struct ethtool_ringparam, tx_max_pending), true, NULL },
	{ "tx", ETHTOOL_A_RINGS_TX, NT_ETHTOOL_U32, offsetof(struct ethtool_ringparam, tx_pending),
	  false, "tx_max" },
	{ "rx", ETHTOOL_A_RINGS_RX, NT_ETHTOOL_U32, offsetof(struct ethtool_ringparam, rx_pending),
	  false, "rx_max" },
	{ "rx_max", ETHTOOL_A_RINGS_RX_MAX, NT_ETHTOOL_U32,
	  offsetof(struct ethtool_ringparam, rx_max_pending), true, NULL },
};
static const nt_ethtool_group my_rings = {
	.section = "rings",
	.get_cmd = ETHTOOL_MSG_RINGS_GET,
	.set_cmd = ETHTOOL_MSG_RINGS_SET,
	.header_attr = ETHTOOL_A_RINGS_HEADER,
	.ioc_get = ETHTOOL_GRINGPARAM,
	.ioc_set = ETHTOOL_SRINGPARAM,
	.ioc_size = sizeof(struct ethtool_ringparam),
	.fields = my_ring_fields,
	.nfields = 4,
};

static char root[64];

static ino_t inode_of(const char *rel)
{
	char path[PATH_MAX];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return stat(path, &st) == 0 ? st.st_ino : 0;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

static void coalesce_on_fixture(const nt_ctx *ctx)
{
	nt_ethtool *h = NULL;
	nt_ethtool_values v, want;
	char err[256];

	int fds = open_fds();
	CHECK_INT(nt_ethtool_open(ctx, &h), 0);
	CHECK(h != NULL);
	/* A fixture root opens nothing: the fixture plays the kernel. */
	CHECK_INT(open_fds(), fds);
	CHECK_INT(nt_ethtool_backend_of(h), NT_ETHTOOL_AUTO);

	CHECK_INT(nt_ethtool_get_group(h, ctx, &coalesce, "eth9", &v), 0);
	CHECK_INT(v.present, (1u << RX_USECS) | (1u << TX_USECS) | (1u << RX_FRAMES) |
				     (1u << ADAPT_RX));
	CHECK_INT(v.v[RX_USECS], 50);
	CHECK_INT(v.v[TX_USECS], 25);
	CHECK_INT(v.v[RX_FRAMES], 64);
	CHECK_INT(v.v[TX_FRAMES], 0);
	CHECK_INT(v.v[ADAPT_RX], 1); /* true */
	CHECK_INT(v.v[ADAPT_TX], 0);

	/* Two fields at once through the same handle; the others are kept. */
	want = (nt_ethtool_values){ .present = (1u << RX_USECS) | (1u << ADAPT_RX) };
	want.v[RX_USECS] = 8;
	want.v[ADAPT_RX] = 0;
	CHECK_INT(nt_ethtool_set_group(h, ctx, &coalesce, "eth9", &want, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK_INT(nt_ethtool_get_group(h, ctx, &coalesce, "eth9", &v), 0);
	CHECK_INT(v.v[RX_USECS], 8);
	CHECK_INT(v.v[ADAPT_RX], 0);
	CHECK_INT(v.v[TX_USECS], 25);
	char *text = tree_read(root, "ethtool/eth9.json");
	json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
	json_t *sec = json_object_get(doc, "coalesce");
	/* The fixture's spelling of a boolean stays a boolean. */
	CHECK(json_is_false(json_object_get(sec, "use_adaptive_rx")));
	CHECK_INT(json_integer_value(json_object_get(sec, "rx_usecs")), 8);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(doc, "rings"), "rx")), 1024);
	json_decref(doc);
	free(text);

	/* A parameter the driver lacks: the kernel's refusal, file untouched. */
	char *before = tree_read(root, "ethtool/eth9.json");
	want = (nt_ethtool_values){ .present = 1u << TX_FRAMES };
	want.v[TX_FRAMES] = 16;
	CHECK_INT(nt_ethtool_set_group(h, ctx, &coalesce, "eth9", &want, err, sizeof(err)),
		  -EINVAL);
	CHECK_STR(err, "cannot modify an unsupported parameter");
	/* ...also with a supported one beside it: nothing is written. */
	want.present |= 1u << TX_USECS;
	want.v[TX_USECS] = 99;
	CHECK_INT(nt_ethtool_set_group(h, ctx, &coalesce, "eth9", &want, err, sizeof(err)),
		  -EINVAL);
	char *after = tree_read(root, "ethtool/eth9.json");
	CHECK(before && after && strcmp(before, after) == 0);
	free(before);
	free(after);

	/* Asking an unsupported parameter for 0 is already true: nothing sent,
	 * the file is not even rewritten. */
	ino_t ino = inode_of("ethtool/eth9.json");
	want = (nt_ethtool_values){ .present = (1u << TX_FRAMES) | (1u << RX_USECS) };
	want.v[RX_USECS] = 8;
	CHECK_INT(nt_ethtool_set_group(h, ctx, &coalesce, "eth9", &want, err, sizeof(err)), 0);
	CHECK_INT(inode_of("ethtool/eth9.json"), ino);

	/* A u8 field cannot carry more than 8 bits. */
	want = (nt_ethtool_values){ .present = 1u << ADAPT_RX, .v = { [ADAPT_RX] = 256 } };
	CHECK_INT(nt_ethtool_set_group(h, ctx, &coalesce, "eth9", &want, err, sizeof(err)),
		  -EINVAL);
	/* Bits beyond the table. */
	want = (nt_ethtool_values){ .present = 1u << 6 };
	CHECK_INT(nt_ethtool_set_group(h, ctx, &coalesce, "eth9", &want, err, sizeof(err)),
		  -EINVAL);

	/* No section: not supported; no file: not supported. */
	CHECK_INT(nt_ethtool_get_group(h, ctx, &coalesce, "eth8", &v), -EOPNOTSUPP);
	CHECK_INT(v.present, 0);
	CHECK_INT(nt_ethtool_get_group(h, ctx, &coalesce, "eth7", &v), -EOPNOTSUPP);
	/* A value of the wrong type. */
	tree_write(root, "ethtool/eth6.json", "{\"coalesce\": {\"rx_usecs\": \"fast\"}}");
	CHECK_INT(nt_ethtool_get_group(h, ctx, &coalesce, "eth6", &v), NT_EPARSE);
	tree_write(root, "ethtool/eth6.json", "{\"coalesce\": {\"use_adaptive_rx\": 300}}");
	CHECK_INT(nt_ethtool_get_group(h, ctx, &coalesce, "eth6", &v), NT_EPARSE);
	/* Bad names never become paths. */
	CHECK_INT(nt_ethtool_get_group(h, ctx, &coalesce, "../eth9", &v), -EINVAL);
	CHECK_INT(nt_ethtool_set_group(h, ctx, &coalesce, "", &want, err, sizeof(err)), -EINVAL);
	nt_ethtool_close(h);
	CHECK_INT(open_fds(), fds);

	/* Without a handle, one is made for the call. */
	CHECK_INT(nt_ethtool_get_group(NULL, ctx, &coalesce, "eth9", &v), 0);
	CHECK_INT(v.v[RX_USECS], 8);
	want = (nt_ethtool_values){ .present = 1u << RX_USECS, .v = { [RX_USECS] = 50 } };
	CHECK_INT(nt_ethtool_set_group(NULL, ctx, &coalesce, "eth9", &want, err, sizeof(err)), 0);
	CHECK_INT(nt_ethtool_get_group(NULL, ctx, &coalesce, "eth9", &v), 0);
	CHECK_INT(v.v[RX_USECS], 50);
	CHECK_INT(open_fds(), fds);
}

static void caller_rings(const nt_ctx *ctx)
{
	nt_ethtool_values v, want;
	nt_rings r;
	char err[256];

	CHECK_INT(nt_ethtool_get_group(NULL, ctx, &my_rings, "eth9", &v), 0);
	CHECK_INT(nt_ethtool_get_rings(ctx, "eth9", &r), 0);
	CHECK_INT(v.present, 0xf);
	CHECK_INT(v.v[nt_ethtool_field_index(&my_rings, "rx")], r.rx);
	CHECK_INT(v.v[nt_ethtool_field_index(&my_rings, "tx")], r.tx);
	CHECK_INT(v.v[nt_ethtool_field_index(&my_rings, "rx_max")], r.rx_max);
	CHECK_INT(v.v[nt_ethtool_field_index(&my_rings, "tx_max")], r.tx_max);
	CHECK_INT(nt_ethtool_field_index(&my_rings, "nope"), -1);

	/* Above the maximum named by the field: the kernel's text, here generic. */
	int tx = nt_ethtool_field_index(&my_rings, "tx");
	want = (nt_ethtool_values){ .present = 1u << tx };
	want.v[tx] = r.tx_max + 1;
	CHECK_INT(nt_ethtool_set_group(NULL, ctx, &my_rings, "eth9", &want, err, sizeof(err)),
		  -EINVAL);
	CHECK(strstr(err, "exceeds maximum") != NULL);
	want.v[tx] = r.tx_max;
	CHECK_INT(nt_ethtool_set_group(NULL, ctx, &my_rings, "eth9", &want, err, sizeof(err)), 0);
	CHECK_INT(nt_ethtool_get_rings(ctx, "eth9", &r), 0);
	CHECK_INT(r.tx, want.v[tx]);

	/* A maximum is read-only. */
	int rxm = nt_ethtool_field_index(&my_rings, "rx_max");
	want = (nt_ethtool_values){ .present = 1u << rxm };
	want.v[rxm] = 1;
	CHECK_INT(nt_ethtool_set_group(NULL, ctx, &my_rings, "eth9", &want, err, sizeof(err)),
		  -EINVAL);
	CHECK(strstr(err, "read-only") != NULL);
	want = (nt_ethtool_values){ .present = 1u << 2, .v = { [2] = 1 } };
	CHECK_INT(nt_ethtool_set_group(NULL, ctx, &nt_ethtool_rings_group, "eth9", &want, err,
				       sizeof(err)), -EINVAL);
}

static void bad_tables(const nt_ctx *ctx)
{
	nt_ethtool_values v;
	nt_ethtool_field f[NT_ETHTOOL_MAX_FIELDS + 1];
	nt_ethtool_group g = coalesce;

	for (int i = 0; i < NT_ETHTOOL_MAX_FIELDS + 1; i++)
		f[i] = coalesce_fields[0];
	g.fields = f;
	g.nfields = NT_ETHTOOL_MAX_FIELDS + 1; /* more than `present` has bits */
	CHECK_INT(nt_ethtool_get_group(NULL, ctx, &g, "eth9", &v), -EINVAL);
	g.nfields = 1;
	f[0].ioc_off = sizeof(struct ethtool_coalesce); /* past the ioctl struct */
	CHECK_INT(nt_ethtool_get_group(NULL, ctx, &g, "eth9", &v), -EINVAL);
	f[0].ioc_off = NT_ETHTOOL_NO_IOCTL; /* netlink only: fine */
	CHECK_INT(nt_ethtool_get_group(NULL, ctx, &g, "eth9", &v), 0);
	f[0].max = "nope"; /* a maximum that is not a field */
	CHECK_INT(nt_ethtool_get_group(NULL, ctx, &g, "eth9", &v), -EINVAL);
	f[0] = coalesce_fields[0];
	g.ioc_size = 100000;
	CHECK_INT(nt_ethtool_get_group(NULL, ctx, &g, "eth9", &v), -EINVAL);
	g = coalesce;
	g.section = NULL;
	CHECK_INT(nt_ethtool_get_group(NULL, ctx, &g, "eth9", &v), -EINVAL);
	CHECK_INT(nt_ethtool_get_group(NULL, ctx, NULL, "eth9", &v), -EINVAL);
}

int main(void)
{
	nt_ctx ctx;

	snprintf(root, sizeof(root), "/tmp/nt-group-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/ethtool", root);
	mkdir(dir, 0755);
	tree_write(root, "ethtool/eth9.json",
		   "{\"rings\": {\"rx\": 1024, \"tx\": 512, \"rx_max\": 8192, \"tx_max\": 4096},\n"
		   " \"coalesce\": {\"rx_usecs\": 50, \"tx_usecs\": 25, \"rx_max_frames\": 64,"
		   " \"use_adaptive_rx\": true}}\n");
	tree_write(root, "ethtool/eth8.json", "{\"rings\": {\"rx\": 256, \"rx_max\": 256}}\n");
	CHECK_INT(nt_ctx_init(&ctx, root), 0);

	coalesce_on_fixture(&ctx);
	caller_rings(&ctx);
	bad_tables(&ctx);

	nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	TEST_MAIN_END();
}
