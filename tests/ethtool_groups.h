/* SPDX-License-Identifier: Apache-2.0 */
/* Settings groups as a caller outside kernel/ defines them (the kinds' own
 * tables are private to settings/), for the tests of kernel/ethtool.h's
 * reader and writer and its fuzz target:
 *  - interrupt coalescing, the six parameters nettune's coalesce kind
 *    uses, under the kernel's own attribute names (read and written on
 *    fixtures, this machine's NIC and the lab's netdevsim);
 *  - the ring parameters only ethtool netlink reaches, a read-only maximum
 *    among them (nt_test_ring_params);
 *  - a nested group: COALESCE_GET's RX_PROFILE, five DIM levels of usec,
 *    pkts and comps (nt_test_rx_profile). */
#ifndef NT_TEST_ETHTOOL_GROUPS_H
#define NT_TEST_ETHTOOL_GROUPS_H

#include "kernel/ethtool.h"
#include "kernel/ethtool_nlattrs.h"

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <stddef.h>

#define NT_TEST_COAL(n, A, io, w) \
	{ #n, ETHTOOL_A_COALESCE_##A, w, offsetof(struct ethtool_coalesce, io), false, NULL }
__attribute__((unused)) static const nt_ethtool_field coalesce_fields[] = {
	NT_TEST_COAL(rx_usecs, RX_USECS, rx_coalesce_usecs, NT_ETHTOOL_U32),
	NT_TEST_COAL(tx_usecs, TX_USECS, tx_coalesce_usecs, NT_ETHTOOL_U32),
	NT_TEST_COAL(rx_max_frames, RX_MAX_FRAMES, rx_max_coalesced_frames, NT_ETHTOOL_U32),
	NT_TEST_COAL(tx_max_frames, TX_MAX_FRAMES, tx_max_coalesced_frames, NT_ETHTOOL_U32),
	NT_TEST_COAL(use_adaptive_rx, USE_ADAPTIVE_RX, use_adaptive_rx_coalesce, NT_ETHTOOL_U8),
	NT_TEST_COAL(use_adaptive_tx, USE_ADAPTIVE_TX, use_adaptive_tx_coalesce, NT_ETHTOOL_U8),
};
enum { RX_USECS, TX_USECS, RX_FRAMES, TX_FRAMES, ADAPT_RX, ADAPT_TX, NCOAL };
__attribute__((unused)) static const nt_ethtool_group coalesce = {
	.section = "coalesce",
	.get_cmd = ETHTOOL_MSG_COALESCE_GET,
	.set_cmd = ETHTOOL_MSG_COALESCE_SET,
	.header_attr = ETHTOOL_A_COALESCE_HEADER,
	.ioc_get = ETHTOOL_GCOALESCE,
	.ioc_set = ETHTOOL_SCOALESCE,
	.ioc_size = sizeof(struct ethtool_coalesce),
	.fields = coalesce_fields,
	.nfields = NCOAL,
};

#define NT_TEST_RF(n, A, w, ro, max) { n, A, NT_ETHTOOL_##w, NT_ETHTOOL_NO_IOCTL, ro, max }
__attribute__((unused)) static const nt_ethtool_field nt_test_ring_fields[] = {
	NT_TEST_RF("tcp_data_split", NT_ETHTOOL_A_RINGS_TCP_DATA_SPLIT, U8, false, NULL),
	NT_TEST_RF("hds_thresh", NT_ETHTOOL_A_RINGS_HDS_THRESH, U32, false, "hds_thresh_max"),
	NT_TEST_RF("rx_buf_len", NT_ETHTOOL_A_RINGS_RX_BUF_LEN, U32, false, NULL),
	NT_TEST_RF("tx_push", NT_ETHTOOL_A_RINGS_TX_PUSH, U8, false, NULL),
	NT_TEST_RF("rx_push", NT_ETHTOOL_A_RINGS_RX_PUSH, U8, false, NULL),
	NT_TEST_RF("hds_thresh_max", NT_ETHTOOL_A_RINGS_HDS_THRESH_MAX, U32, true, NULL),
};
__attribute__((unused)) static const nt_ethtool_group nt_test_ring_params = {
	.section = "rings",
	.get_cmd = ETHTOOL_MSG_RINGS_GET,
	.set_cmd = ETHTOOL_MSG_RINGS_SET,
	.header_attr = ETHTOOL_A_RINGS_HEADER,
	.ioc_get = ETHTOOL_GRINGPARAM,
	.ioc_set = ETHTOOL_SRINGPARAM,
	.ioc_size = sizeof(struct ethtool_ringparam),
	.fields = nt_test_ring_fields,
	.nfields = 6,
};

#define NT_TEST_LEAF(n, A) { n, NT_ETHTOOL_A_IRQ_MODERATION_##A, NT_ETHTOOL_U32, NT_ETHTOOL_NO_IOCTL, false, NULL }
#define NT_TEST_LEVEL NT_TEST_LEAF("usec", USEC), NT_TEST_LEAF("pkts", PKTS), NT_TEST_LEAF("comps", COMPS)
__attribute__((unused)) static const nt_ethtool_field nt_test_profile_leaves[15] = {
	NT_TEST_LEVEL, NT_TEST_LEVEL, NT_TEST_LEVEL, NT_TEST_LEVEL, NT_TEST_LEVEL
};
__attribute__((unused)) static const nt_ethtool_group nt_test_rx_profile = {
	.section = "coalesce",
	.get_cmd = ETHTOOL_MSG_COALESCE_GET,
	.set_cmd = ETHTOOL_MSG_COALESCE_SET,
	.header_attr = ETHTOOL_A_COALESCE_HEADER,
	.ioc_get = ETHTOOL_GCOALESCE,
	.ioc_set = ETHTOOL_SCOALESCE,
	.ioc_size = sizeof(struct ethtool_coalesce),
	.fields = nt_test_profile_leaves,
	.nfields = 15,
	.nest = NT_ETHTOOL_A_COALESCE_RX_PROFILE,
	.entry_attr = NT_ETHTOOL_A_PROFILE_IRQ_MODERATION,
	.nentries = 5,
	.nest_key = "rx_profile",
};

#endif
