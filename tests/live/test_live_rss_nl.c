/* SPDX-License-Identifier: Apache-2.0 */
/* An RSS table as long as ethtool netlink can carry reaches this
 * machine's kernel (kernel/rss_nl.c, RSS_SET, 6.17): the request is 64
 * KiB, twice the send buffer libnl gives a socket, and the kernel refused
 * it unread (EMSGSIZE) before rss_act sized the buffer. Sent to "lo",
 * which has no RSS, so the kernel answers EOPNOTSUPP (EPERM without
 * root) and nothing changes; well under a second. The same through one
 * ethtool handle (kernel/rss_nl.h), whose socket then serves the next
 * request as before. Skipped on a kernel without RSS_SET. */
#include "harness.h"
#include "kernel/ctx.h"
#include "kernel/rss_nl.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>

int main(void)
{
	static uint32_t tab[16382];
	char err[256];
	nt_ctx ctx;
	nt_rss_nl caps;
	CHECK_INT(nt_ctx_init(&ctx, "/"), 0);
	nt_rss_nl_caps(NULL, &ctx, "lo", &caps);
	if (!caps.set)
		SKIP("this kernel has no ethtool RSS_SET (6.17)");
	int r = nt_rss_nl_context_write(NULL, &ctx, "lo", 1, tab, 2048, err, sizeof(err));
	CHECK(r == -EOPNOTSUPP || r == -EPERM);
	printf("2048 entries: %d (%s)\n", r, err);
	r = nt_rss_nl_context_write(NULL, &ctx, "lo", 1, tab, 16382, err, sizeof(err));
	CHECK(r == -EOPNOTSUPP || r == -EPERM);
	printf("16382 entries: %d (%s)\n", r, err);
	/* The same through one handle, as a transaction stage sends them: its
	 * socket's send buffer raised for the long one, the next request on
	 * it answered as on a socket of its own. */
	nt_ethtool *eh = NULL;
	CHECK_INT(nt_ethtool_open(&ctx, &eh), 0);
	r = nt_rss_nl_context_write(eh, &ctx, "lo", 1, tab, 16382, err, sizeof(err));
	CHECK(r == -EOPNOTSUPP || r == -EPERM);
	r = nt_rss_nl_context_write(eh, &ctx, "lo", 1, tab, 128, err, sizeof(err));
	CHECK(r == -EOPNOTSUPP || r == -EPERM);
	uint32_t ids[4];
	int n0 = 0, n = 0;
	CHECK_INT(nt_rss_nl_context_ids(eh, &ctx, "lo", ids, 4, &n), nt_rss_nl_context_ids(NULL, &ctx, "lo", ids, 4, &n0));
	CHECK_INT(n, n0);
	nt_ethtool_close(eh);
	TEST_MAIN_END();
}
