/* SPDX-License-Identifier: Apache-2.0 */
/* A settings group as a caller outside kernel/ defines one: interrupt
 * coalescing, the six parameters nettune's coalesce kind uses, under the
 * kernel's own attribute names. The kernel/ethtool.h tests read and write
 * it on fixtures, this machine's NIC and the lab's netdevsim. */
#ifndef NT_TEST_ETHTOOL_GROUPS_H
#define NT_TEST_ETHTOOL_GROUPS_H

#include "kernel/ethtool.h"

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <stddef.h>

#define NT_TEST_COAL(n, A, io, w) \
	{ #n, ETHTOOL_A_COALESCE_##A, w, offsetof(struct ethtool_coalesce, io), false, NULL }
static const nt_ethtool_field coalesce_fields[] = {
	NT_TEST_COAL(rx_usecs, RX_USECS, rx_coalesce_usecs, NT_ETHTOOL_U32),
	NT_TEST_COAL(tx_usecs, TX_USECS, tx_coalesce_usecs, NT_ETHTOOL_U32),
	NT_TEST_COAL(rx_max_frames, RX_MAX_FRAMES, rx_max_coalesced_frames, NT_ETHTOOL_U32),
	NT_TEST_COAL(tx_max_frames, TX_MAX_FRAMES, tx_max_coalesced_frames, NT_ETHTOOL_U32),
	NT_TEST_COAL(use_adaptive_rx, USE_ADAPTIVE_RX, use_adaptive_rx_coalesce, NT_ETHTOOL_U8),
	NT_TEST_COAL(use_adaptive_tx, USE_ADAPTIVE_TX, use_adaptive_tx_coalesce, NT_ETHTOOL_U8),
};
enum { RX_USECS, TX_USECS, RX_FRAMES, TX_FRAMES, ADAPT_RX, ADAPT_TX, NCOAL };
static const nt_ethtool_group coalesce = {
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

#endif
