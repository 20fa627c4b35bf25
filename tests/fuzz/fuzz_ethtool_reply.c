/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: an ethtool netlink GET reply (kernel/ethtool.h's
 * nt_ethtool_parse_reply) read through the ring sizes' table, a table of
 * the netlink-only ring attributes (u8 and u32 fields, read-only maxima)
 * and a nested one (a DIM profile: COALESCE_GET's RX_PROFILE nest of five
 * levels, each a nest of usec, pkts, comps).
 * Whatever comes: the parser returns 0, NT_EPARSE or a negative errno, and
 * keeps no field on an error, none beyond its table, and a u8 field within
 * a byte. The same bytes as an RSS_GET dump datagram (kernel/rss_nl.h's
 * nt_rss_nl_parse, family 0x17 as in the unit test, and the family the
 * first message names): 0, 1, a negative errno or NT_EPARSE, never more
 * entries than messages, every table a whole number of entries. */
#include "kernel/ethtool.h"
#include "kernel/ethtool_nlattrs.h"
#include "kernel/rss_nl.h"
#include "tests/ethtool_groups.h"

#include <linux/ethtool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check(const nt_ethtool_group *g, const unsigned char *buf, size_t n)
{
	nt_ethtool_values v;
	int r = nt_ethtool_parse_reply(g, buf, n, &v);
	if (r > 0 || (r < 0 && v.present) || (v.present >> g->nfields))
		abort();
	for (int i = 0; i < g->nfields; i++)
		if ((v.present & (1u << i)) && g->fields[i].width == NT_ETHTOOL_U8 && v.v[i] > 255)
			abort();
}

static void check_rss(const unsigned char *buf, size_t n, int family)
{
	nt_rss_nl_list l = { 0 };
	int r = nt_rss_nl_parse(&l, family, buf, n);
	/* Each entry is a message of at least a header. */
	if (r > 1 || l.n > n / 20 + 1 || (l.n && !l.e))
		abort();
	for (size_t i = 0; i < l.n; i++)
		if (l.e[i].indir_size > n / 4 || l.e[i].input_xfrm < -1 || l.e[i].input_xfrm > UINT32_MAX)
			abort();
	nt_rss_nl_list_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A private copy, so reads past the datagram are caught. */
	unsigned char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	check(&nt_test_ring_params, buf, size);
	check(&nt_ethtool_rings_group, buf, size);
	check(&nt_test_rx_profile, buf, size);
	check_rss(buf, size, 0x17);
	if (size >= 6)
		check_rss(buf, size, buf[4] | buf[5] << 8);
	free(buf);
	return 0;
}
