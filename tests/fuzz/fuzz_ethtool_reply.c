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

#include <linux/ethtool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RF(n, A, w, ro, max) { n, A, NT_ETHTOOL_##w, NT_ETHTOOL_NO_IOCTL, ro, max }
static const nt_ethtool_field fields[] = {
	RF("tcp_data_split", NT_ETHTOOL_A_RINGS_TCP_DATA_SPLIT, U8, false, NULL),
	RF("hds_thresh", NT_ETHTOOL_A_RINGS_HDS_THRESH, U32, false, "hds_thresh_max"),
	RF("tx_push", NT_ETHTOOL_A_RINGS_TX_PUSH, U8, false, NULL),
	RF("hds_thresh_max", NT_ETHTOOL_A_RINGS_HDS_THRESH_MAX, U32, true, NULL),
};
static const nt_ethtool_group params = {
	.section = "rings",
	.get_cmd = ETHTOOL_MSG_RINGS_GET,
	.set_cmd = ETHTOOL_MSG_RINGS_SET,
	.header_attr = ETHTOOL_A_RINGS_HEADER,
	.ioc_get = ETHTOOL_GRINGPARAM,
	.ioc_set = ETHTOOL_SRINGPARAM,
	.ioc_size = sizeof(struct ethtool_ringparam),
	.fields = fields,
	.nfields = 4,
};

#define LEAF(n, A) { n, NT_ETHTOOL_A_IRQ_MODERATION_##A, NT_ETHTOOL_U32, NT_ETHTOOL_NO_IOCTL, false, NULL }
#define LEVEL LEAF("usec", USEC), LEAF("pkts", PKTS), LEAF("comps", COMPS)
static const nt_ethtool_field leaves[15] = { LEVEL, LEVEL, LEVEL, LEVEL, LEVEL };
static const nt_ethtool_group profile = {
	.section = "coalesce",
	.get_cmd = ETHTOOL_MSG_COALESCE_GET,
	.set_cmd = ETHTOOL_MSG_COALESCE_SET,
	.header_attr = ETHTOOL_A_COALESCE_HEADER,
	.ioc_get = ETHTOOL_GCOALESCE,
	.ioc_set = ETHTOOL_SCOALESCE,
	.ioc_size = sizeof(struct ethtool_coalesce),
	.fields = leaves,
	.nfields = 15,
	.nest = NT_ETHTOOL_A_COALESCE_RX_PROFILE,
	.entry_attr = NT_ETHTOOL_A_PROFILE_IRQ_MODERATION,
	.nentries = 5,
	.nest_key = "rx_profile",
};

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
	check(&params, buf, size);
	check(&nt_ethtool_rings_group, buf, size);
	check(&profile, buf, size);
	free(buf);
	return 0;
}
