/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: a fixture root's NIC document, ROOT/ethtool/eth0.json
 * (kernel/fixture*.c), through every reader of the fixture's kernel (rings
 * and channels, features, RSS, flow rules, qdisc, the netdev family's
 * queues, NAPIs and per-queue counters) and, where a reader took it, one
 * write each (a feature, a ring size), as a transaction would. The
 * document is the input; nothing it says may crash a reader, and an answer
 * is 0 or an error code, never anything else. The root is a temporary
 * folder made once. */
#include "base/errors.h"
#include "kernel/ctx.h"
#include "kernel/ethtool.h"
#include "kernel/features.h"
#include "kernel/fixture.h"
#include "kernel/flows.h"
#include "kernel/netdev.h"
#include "kernel/rss.h"
#include "kernel/rtlink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[PATH_MAX];
static nt_ctx ctx;

/* 0 or a negative code: a reader answers nothing else. */
static void answer(int r)
{
	if (r > 0)
		abort();
}

static int setup(void)
{
	char path[PATH_MAX + 32];
	snprintf(root, sizeof(root), "%s/nt-fuzz-fixture-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		return -1;
	snprintf(path, sizeof(path), "%s/ethtool", root);
	if (mkdir(path, 0755) < 0)
		return -1;
	return nt_ctx_init(&ctx, root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	char path[PATH_MAX + 32], err[256];

	if (!ready)
		ready = setup() == 0 ? 1 : -1;
	if (ready < 0)
		abort();
	snprintf(path, sizeof(path), "%s/ethtool/eth0.json", root);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	close(fd);

	nt_ethtool_values v;
	const nt_ethtool_group *groups[] = { &nt_ethtool_rings_group, &nt_ethtool_channels_group };
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		int r = nt_fixture_ethtool_get(&ctx, groups[g], "eth0", &v);
		answer(r);
		if (r == 0 && v.present) {
			/* Write back the first field present, one more: what a
			 * transaction's step does (refused or taken). */
			nt_ethtool_values send = v;
			for (int i = 0; i < groups[g]->nfields; i++)
				if (v.present & (1u << i)) {
					send.present = 1u << i;
					send.v[i] = v.v[i] + 1;
					break;
				}
			answer(nt_fixture_ethtool_set(&ctx, groups[g], "eth0", &v, &send, err, sizeof(err)));
		}
	}
	nt_features fs;
	int r = nt_fixture_features_get(&ctx, "eth0", &fs);
	answer(r);
	if (r == 0 && fs.n > 0) {
		answer(nt_fixture_features_set(&ctx, "eth0", fs.f[0].name, !fs.f[0].active, err, sizeof(err)));
		answer(nt_fixture_features_set(&ctx, "eth0", fs.f[0].name, fs.f[0].active, err, sizeof(err)));
	}
	nt_rss rss;
	memset(&rss, 0, sizeof(rss));
	answer(nt_fixture_rss_get(&ctx, "eth0", &rss));
	nt_rss_free(&rss);
	nt_flow_table ft;
	memset(&ft, 0, sizeof(ft));
	if (nt_fixture_flows_read(&ctx, "eth0", &ft) == 0)
		nt_flow_table_free(&ft);
	nt_qdisc q;
	memset(&q, 0, sizeof(q));
	answer(nt_fixture_qdisc_get(&ctx, "eth0", 4, &q));
	nt_netdev nd;
	memset(&nd, 0, sizeof(nd));
	answer(nt_fixture_netdev_get(&ctx, "eth0", 2, &nd));
	nt_netdev_free(&nd);
	memset(&nd, 0, sizeof(nd));
	answer(nt_fixture_qstats_get(&ctx, "eth0", 2, &nd));
	nt_netdev_free(&nd);
	return 0;
}
