/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: an ethtool netlink GET reply (kernel/ethtool.h's
 * nt_ethtool_parse_reply) read through the ring sizes' table, a table of
 * the netlink-only ring attributes (u8 and u32 fields, read-only maxima)
 * and a nested one (a DIM profile: COALESCE_GET's RX_PROFILE nest of five
 * levels, each a nest of usec, pkts, comps).
 * Whatever comes: the parser returns 0, NT_EPARSE or a negative errno, and
 * keeps no field on an error, none beyond its table, and a u8 field within
 * a byte. */
#include "kernel/ethtool.h"
#include "kernel/ethtool_nlattrs.h"
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
	free(buf);
	return 0;
}
