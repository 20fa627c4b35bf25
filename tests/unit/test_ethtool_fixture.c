/* SPDX-License-Identifier: Apache-2.0 */
/* Rings and channels in a fixture root: ROOT/ethtool/IFACE.json is read,
 * written atomically, and refused requests leave it byte for byte as it was. */
#include "kernel/ethtool.h"
#include "kernel/kernel.h"
#include "harness.h"
#include "tree_files.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64]; /* mkdtemp name: short, so paths below always fit */

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

static int count_entries(const char *rel)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	DIR *d = opendir(path);
	int n = 0;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

int main(void)
{
	nt_ctx ctx;
	nt_rings rings;
	nt_channels ch;
	char err[256];
	char *before, *after;

	snprintf(root, sizeof(root), "/tmp/nt-ethtool-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/ethtool", root);
	mkdir(dir, 0755);
	tree_write(root, "ethtool/eth9.json",
		   "{\"driver\": \"mlx5_core\",\n"
		   " \"rings\": {\"rx\": 1024, \"tx\": 512, \"rx_max\": 8192, \"tx_max\": 4096},\n"
		   " \"channels\": {\"combined\": 16, \"combined_max\": 63, \"other\": 1,"
		   " \"other_max\": 1}}\n");
	tree_write(root, "ethtool/eth8.json", "{\"rings\": {\"rx\": 256, \"rx_max\": 256}}\n");

	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK(!ctx.live);

	/* get */
	CHECK_INT(nt_ethtool_get_rings(&ctx, "eth9", &rings), 0);
	CHECK_INT(rings.rx, 1024);
	CHECK_INT(rings.tx, 512);
	CHECK_INT(rings.rx_max, 8192);
	CHECK_INT(rings.tx_max, 4096);
	CHECK_INT(nt_ethtool_get_channels(&ctx, "eth9", &ch), 0);
	CHECK_INT(ch.combined, 16);
	CHECK_INT(ch.combined_max, 63);
	CHECK_INT(ch.other, 1);
	CHECK_INT(ch.rx, 0);
	CHECK_INT(ch.rx_max, 0);

	/* set rx only (tx 0 = unchanged); other keys of the file survive */
	nt_rings want = { .rx = 4096 };
	CHECK_INT(nt_ethtool_set_rings(&ctx, "eth9", &want, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK_INT(nt_ethtool_get_rings(&ctx, "eth9", &rings), 0);
	CHECK_INT(rings.rx, 4096);
	CHECK_INT(rings.tx, 512);
	CHECK_INT(rings.rx_max, 8192);
	after = tree_read(root, "ethtool/eth9.json");
	json_t *doc = after ? json_loads(after, 0, NULL) : NULL;
	CHECK(doc != NULL);
	CHECK_STR(json_string_value(json_object_get(doc, "driver")), "mlx5_core");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(doc, "channels"),
						     "combined_max")), 63);
	json_decref(doc);
	free(after);
	/* the temporary file was renamed away, not left behind */
	CHECK_INT(count_entries("ethtool"), 2);

	/* set to the max exactly is allowed; both rings at once */
	want = (nt_rings){ .rx = 8192, .tx = 4096 };
	CHECK_INT(nt_ethtool_set_rings(&ctx, "eth9", &want, err, sizeof(err)), 0);
	CHECK_INT(nt_ethtool_get_rings(&ctx, "eth9", &rings), 0);
	CHECK_INT(rings.rx, 8192);
	CHECK_INT(rings.tx, 4096);

	/* a no-op set leaves the file untouched (same inode: no rewrite) */
	struct stat st1, st2;
	char p9[PATH_MAX];
	snprintf(p9, sizeof(p9), "%s/ethtool/eth9.json", root);
	CHECK_INT(stat(p9, &st1), 0);
	CHECK_INT(nt_ethtool_set_rings(&ctx, "eth9", &want, err, sizeof(err)), 0);
	CHECK_INT(stat(p9, &st2), 0);
	CHECK_INT(st1.st_ino, st2.st_ino);

	/* above max: -EINVAL, kernel-like text, file unchanged */
	before = tree_read(root, "ethtool/eth9.json");
	want = (nt_rings){ .rx = 8193 };
	CHECK_INT(nt_ethtool_set_rings(&ctx, "eth9", &want, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "exceeds maximum") != NULL);
	/* one valid, one invalid: nothing is written */
	want = (nt_rings){ .rx = 2048, .tx = 5000 };
	CHECK_INT(nt_ethtool_set_rings(&ctx, "eth9", &want, err, sizeof(err)), -EINVAL);
	after = tree_read(root, "ethtool/eth9.json");
	CHECK(before && after && strcmp(before, after) == 0);
	free(before);
	free(after);

	/* channels */
	nt_channels cw = { .combined = 8 };
	CHECK_INT(nt_ethtool_set_channels(&ctx, "eth9", &cw, err, sizeof(err)), 0);
	CHECK_INT(nt_ethtool_get_channels(&ctx, "eth9", &ch), 0);
	CHECK_INT(ch.combined, 8);
	CHECK_INT(ch.other, 1);
	before = tree_read(root, "ethtool/eth9.json");
	cw = (nt_channels){ .combined = 64 };
	CHECK_INT(nt_ethtool_set_channels(&ctx, "eth9", &cw, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "channel count exceeds maximum") != NULL);
	/* rx has max 0 (n/a): any rx count is above it */
	cw = (nt_channels){ .rx = 1 };
	CHECK_INT(nt_ethtool_set_channels(&ctx, "eth9", &cw, err, sizeof(err)), -EINVAL);
	after = tree_read(root, "ethtool/eth9.json");
	CHECK(before && after && strcmp(before, after) == 0);
	free(before);
	free(after);

	/* a file without "channels": not supported */
	CHECK_INT(nt_ethtool_get_rings(&ctx, "eth8", &rings), 0);
	CHECK_INT(rings.rx, 256);
	CHECK_INT(rings.tx, 0);
	CHECK_INT(nt_ethtool_get_channels(&ctx, "eth8", &ch), -EOPNOTSUPP);
	cw = (nt_channels){ .combined = 2 };
	CHECK_INT(nt_ethtool_set_channels(&ctx, "eth8", &cw, err, sizeof(err)), -EOPNOTSUPP);

	/* missing file: not supported */
	CHECK_INT(nt_ethtool_get_rings(&ctx, "eth7", &rings), -EOPNOTSUPP);
	CHECK_INT(nt_ethtool_get_channels(&ctx, "eth7", &ch), -EOPNOTSUPP);
	want = (nt_rings){ .rx = 512 };
	CHECK_INT(nt_ethtool_set_rings(&ctx, "eth7", &want, err, sizeof(err)), -EOPNOTSUPP);

	/* a name that would escape the directory, and other bad names */
	CHECK_INT(nt_ethtool_get_rings(&ctx, "../x", &rings), -EINVAL);
	CHECK_INT(nt_ethtool_set_rings(&ctx, "../x", &want, err, sizeof(err)), -EINVAL);
	CHECK_INT(nt_ethtool_get_channels(&ctx, "", &ch), -EINVAL);
	CHECK_INT(nt_ethtool_get_rings(&ctx, "a-name-far-too-long", &rings), -EINVAL);

	/* malformed documents are parse errors, not crashes */
	tree_write(root, "ethtool/eth6.json", "{\"rings\": {\"rx\": -5}}");
	CHECK_INT(nt_ethtool_get_rings(&ctx, "eth6", &rings), NT_EPARSE);
	tree_write(root, "ethtool/eth5.json", "[1, 2");
	CHECK_INT(nt_ethtool_get_rings(&ctx, "eth5", &rings), NT_EPARSE);
	tree_write(root, "ethtool/eth4.json", "{\"rings\": 7}");
	CHECK_INT(nt_ethtool_get_rings(&ctx, "eth4", &rings), NT_EPARSE);

	/* A kill between mkstemp and rename leaves .IFACE.json.XXXXXX: the
	 * start removes those, and nothing else. */
	tree_write(root, "ethtool/.eth9.json.Ab3xYz", "{\"rings\"");
	tree_write(root, "ethtool/.eth8.json.Q1w2E3", "");
	tree_write(root, "ethtool/.eth9.json.short", "keep");
	tree_write(root, "ethtool/.notes", "keep");
	snprintf(dir, sizeof(dir), "%s/ethtool/.dir.json.ABCDEF", root);
	mkdir(dir, 0755);
	CHECK_INT(nt_kernel_tidy(&ctx), 2);
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/ethtool/.eth9.json.Ab3xYz", root);
	CHECK(access(p, F_OK) != 0);
	snprintf(p, sizeof(p), "%s/ethtool/.eth8.json.Q1w2E3", root);
	CHECK(access(p, F_OK) != 0);
	snprintf(p, sizeof(p), "%s/ethtool/.eth9.json.short", root);
	CHECK(access(p, F_OK) == 0);
	snprintf(p, sizeof(p), "%s/ethtool/.notes", root);
	CHECK(access(p, F_OK) == 0);
	CHECK(access(dir, F_OK) == 0);
	snprintf(p, sizeof(p), "%s/ethtool/eth9.json", root);
	CHECK(access(p, F_OK) == 0);
	CHECK_INT(nt_kernel_tidy(&ctx), 0);

	nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	TEST_MAIN_END();
}
