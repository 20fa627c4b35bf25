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
/* The adaptive-coalescing (DIM) profiles: each a nest holding
 * NT_DIM_PARAMS_NUM_PROFILES nests of type PROFILE_IRQ_MODERATION, one per
 * level DIM moves between, each with USEC, PKTS and COMPS (u32 on the
 * wire, u16 in struct dim_cq_moder, include/linux/dim.h) where the driver
 * supports that field (dim_irq_moder.coal_flags). Commit f750dfe825b9
 * ("ethtool: provide customized dim profile management"), merged into
 * net-next in June 2024 with the rest of what Linux 6.11 released: 6.11.
 * A driver that did not call net_dim_init_irq_moder() (virtio_net does)
 * reports neither, and a SET with one is refused ("cannot modify an
 * unsupported parameter", ETHTOOL_COALESCE_RX_PROFILE not in its
 * supported parameters). */
#define NT_ETHTOOL_A_COALESCE_RX_PROFILE 29 /* nest, 6.11 */
#define NT_ETHTOOL_A_COALESCE_TX_PROFILE 30 /* nest, 6.11 */
#define NT_ETHTOOL_A_PROFILE_IRQ_MODERATION 1 /* nest, one per level */
#define NT_ETHTOOL_A_IRQ_MODERATION_USEC 1 /* u32 */
#define NT_ETHTOOL_A_IRQ_MODERATION_PKTS 2 /* u32 */
#define NT_ETHTOOL_A_IRQ_MODERATION_COMPS 3 /* u32 */
/* include/linux/dim.h: the levels of a profile. A SET with more is
 * refused (-E2BIG), one with fewer changes only the first levels. */
#define NT_DIM_PARAMS_NUM_PROFILES 5

/* ---- RSS_GET, RSS_SET, RSS_CREATE_ACT, RSS_DELETE_ACT (kernel/rss_nl.c) ----
 * Debian 12's header has none of the RSS messages. The message numbers
 * are the places of the commands in the kernel's enums (7.3's
 * include/uapi/linux/ethtool_netlink_generated.h): requests first, then
 * what the kernel sends. RSS_GET (6.2, commit 7112a04664bf) reads one
 * context; as a dump (6.12: "ethtool: rss: support dumping RSS contexts",
 * net-next in August 2024, after 6.11's merge window; v6.10's rss.c has
 * no START_CONTEXT, v6.12's has) it lists every context of every device,
 * or of one when the request's header names it (ethnl_rss_dump_start).
 * RSS_SET, RSS_CREATE_ACT with a context id the caller chooses (or none:
 * the lowest free), RSS_DELETE_ACT and the three notifications came with
 * Linux 6.17 (net-next, June-July 2025). */
#define NT_ETHTOOL_MSG_RSS_GET 38
#define NT_ETHTOOL_MSG_RSS_SET 48
#define NT_ETHTOOL_MSG_RSS_CREATE_ACT 49
#define NT_ETHTOOL_MSG_RSS_DELETE_ACT 50
#define NT_ETHTOOL_MSG_RSS_GET_REPLY 38
#define NT_ETHTOOL_MSG_RSS_NTF 50
#define NT_ETHTOOL_MSG_RSS_CREATE_ACT_REPLY 51
#define NT_ETHTOOL_MSG_RSS_CREATE_NTF 52
#define NT_ETHTOOL_MSG_RSS_DELETE_NTF 53
#define NT_ETHTOOL_A_RSS_HEADER 1 /* nest */
#define NT_ETHTOOL_A_RSS_CONTEXT 2 /* u32; absent in a reply for context 0 */
#define NT_ETHTOOL_A_RSS_HFUNC 3 /* u32 */
#define NT_ETHTOOL_A_RSS_INDIR 4 /* binary: u32 per entry */
#define NT_ETHTOOL_A_RSS_HKEY 5 /* binary */
#define NT_ETHTOOL_A_RSS_INPUT_XFRM 6 /* u32, 6.8; left out of a reply while 0 */
#define NT_ETHTOOL_A_RSS_START_CONTEXT 7 /* u32, dump only, 6.12 */

_Static_assert(NT_ETHTOOL_A_RINGS_RX_BUF_LEN == ETHTOOL_A_RINGS_RX_BUF_LEN, "rx-buf-len");
_Static_assert(NT_ETHTOOL_A_RINGS_TCP_DATA_SPLIT == ETHTOOL_A_RINGS_TCP_DATA_SPLIT, "tcp-data-split");
_Static_assert(NT_ETHTOOL_A_RINGS_CQE_SIZE == ETHTOOL_A_RINGS_CQE_SIZE, "cqe-size");
_Static_assert(NT_ETHTOOL_A_RINGS_TX_PUSH == ETHTOOL_A_RINGS_TX_PUSH, "tx-push");
_Static_assert(NT_ETHTOOL_TCP_DATA_SPLIT_ENABLED == ETHTOOL_TCP_DATA_SPLIT_ENABLED, "tcp-data-split values");
_Static_assert(NT_ETHTOOL_A_COALESCE_USE_CQE_MODE_TX == ETHTOOL_A_COALESCE_USE_CQE_MODE_TX, "cqe-mode-tx");
_Static_assert(NT_ETHTOOL_A_COALESCE_USE_CQE_MODE_RX == ETHTOOL_A_COALESCE_USE_CQE_MODE_RX, "cqe-mode-rx");

#endif
