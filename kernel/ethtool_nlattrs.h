/* SPDX-License-Identifier: Apache-2.0 */
/* The ethtool netlink attributes of RINGS and COALESCE that Debian 12's
 * <linux/ethtool_netlink.h> (linux-libc-dev 6.1) lacks or has only in
 * part: the one place nettune spells them. The numbers are the kernel's
 * ABI (include/uapi/linux/ethtool_netlink_generated.h in newer kernels,
 * generated from Documentation/netlink/specs/ethtool.yaml) and never
 * change; they are under our own names so that a newer system header does
 * not clash. Each comment names the first kernel release that has the
 * attribute, from the merge of the patch that added it to net-next:
 * nettune names that release when the running kernel is older.
 *
 * The attributes the 6.1 header already has are checked against it below,
 * so a typo here cannot go unnoticed. */
#ifndef NT_ETHTOOL_NLATTRS_H
#define NT_ETHTOOL_NLATTRS_H

#include <linux/ethtool_netlink.h>

/* ---- RINGS_GET / RINGS_SET ---- */
#define NT_ETHTOOL_A_RINGS_RX_BUF_LEN 10 /* u32, 5.17 */
#define NT_ETHTOOL_A_RINGS_TCP_DATA_SPLIT 11 /* u8: 0 unknown, 1 disabled, 2 enabled; 5.18 */
#define NT_ETHTOOL_A_RINGS_CQE_SIZE 12 /* u32, 5.18 */
#define NT_ETHTOOL_A_RINGS_TX_PUSH 13 /* u8 bool, 5.19 */
#define NT_ETHTOOL_A_RINGS_RX_PUSH 14 /* u8 bool, 6.3 */
#define NT_ETHTOOL_A_RINGS_TX_PUSH_BUF_LEN 15 /* u32, 6.4 */
#define NT_ETHTOOL_A_RINGS_TX_PUSH_BUF_LEN_MAX 16 /* u32, read-only, 6.4 */
#define NT_ETHTOOL_A_RINGS_HDS_THRESH 17 /* u32, 6.14 */
#define NT_ETHTOOL_A_RINGS_HDS_THRESH_MAX 18 /* u32, read-only, 6.14 */

#define NT_ETHTOOL_TCP_DATA_SPLIT_UNKNOWN 0
#define NT_ETHTOOL_TCP_DATA_SPLIT_DISABLED 1
#define NT_ETHTOOL_TCP_DATA_SPLIT_ENABLED 2

/* ---- COALESCE_GET / COALESCE_SET ---- */
#define NT_ETHTOOL_A_COALESCE_USE_CQE_MODE_TX 24 /* u8 bool, 5.15 */
#define NT_ETHTOOL_A_COALESCE_USE_CQE_MODE_RX 25 /* u8 bool, 5.15 */
#define NT_ETHTOOL_A_COALESCE_TX_AGGR_MAX_BYTES 26 /* u32, 6.3 */
#define NT_ETHTOOL_A_COALESCE_TX_AGGR_MAX_FRAMES 27 /* u32, 6.3 */
#define NT_ETHTOOL_A_COALESCE_TX_AGGR_TIME_USECS 28 /* u32, 6.3 */
/* 29 RX_PROFILE and 30 TX_PROFILE (6.13) are nests of DIM profiles:
 * nettune neither reads nor sets them yet. */

_Static_assert(NT_ETHTOOL_A_RINGS_RX_BUF_LEN == ETHTOOL_A_RINGS_RX_BUF_LEN, "rx-buf-len");
_Static_assert(NT_ETHTOOL_A_RINGS_TCP_DATA_SPLIT == ETHTOOL_A_RINGS_TCP_DATA_SPLIT, "tcp-data-split");
_Static_assert(NT_ETHTOOL_A_RINGS_CQE_SIZE == ETHTOOL_A_RINGS_CQE_SIZE, "cqe-size");
_Static_assert(NT_ETHTOOL_A_RINGS_TX_PUSH == ETHTOOL_A_RINGS_TX_PUSH, "tx-push");
_Static_assert(NT_ETHTOOL_TCP_DATA_SPLIT_ENABLED == ETHTOOL_TCP_DATA_SPLIT_ENABLED, "tcp-data-split values");
_Static_assert(NT_ETHTOOL_A_COALESCE_USE_CQE_MODE_TX == ETHTOOL_A_COALESCE_USE_CQE_MODE_TX, "cqe-mode-tx");
_Static_assert(NT_ETHTOOL_A_COALESCE_USE_CQE_MODE_RX == ETHTOOL_A_COALESCE_USE_CQE_MODE_RX, "cqe-mode-rx");

#endif
