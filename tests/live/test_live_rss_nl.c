/* SPDX-License-Identifier: Apache-2.0 */
/* An RSS table as long as ethtool netlink can carry reaches this
 * machine's kernel (kernel/rss_nl.c, RSS_SET, 6.17): the request is 64
 * KiB, twice the send buffer libnl gives a socket, and the kernel refused
 * it unread (EMSGSIZE) before rss_act sized the buffer. Sent to "lo",
 * which has no RSS, so the kernel answers EOPNOTSUPP (EPERM without
 * root) and nothing changes; well under a second. Skipped on a kernel
 * without RSS_SET. */
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
	nt_rss_nl_caps(&ctx, "lo", &caps);
	if (!caps.set)
		SKIP("this kernel has no ethtool RSS_SET (6.17)");
	int r = nt_rss_nl_context_write(&ctx, "lo", 1, tab, 2048, err, sizeof(err));
	CHECK(r == -EOPNOTSUPP || r == -EPERM);
	printf("2048 entries: %d (%s)\n", r, err);
	r = nt_rss_nl_context_write(&ctx, "lo", 1, tab, 16382, err, sizeof(err));
	CHECK(r == -EOPNOTSUPP || r == -EPERM);
	printf("16382 entries: %d (%s)\n", r, err);
	TEST_MAIN_END();
}
