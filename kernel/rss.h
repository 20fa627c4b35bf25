/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's RSS state: the indirection table (which RX queue each hash
 * bucket goes to), the hash function, the key's size, the header fields
 * hashed per flow type, and the RX ring count the table may name. Through
 * the SIOCETHTOOL ioctl (ETHTOOL_GRSSH, ETHTOOL_GRXFH, ETHTOOL_GRXRINGS;
 * ETHTOOL_SRSSH and ETHTOOL_SRXFH to write) on the live host, and the
 * "rss" object of ROOT/ethtool/IFACE.json on a fixture root
 * (kernel/fixture.c, which a write rewrites):
 *   "rss": {"indir": [0, 1, 0, 1, ...], "key_size": 40, "hfunc": 1,
 *           "rx_rings": 4, "hash_fields": {"tcp4": "sdfn", "udp4": "sd"},
 *           "configured": false}
 * ("rx_rings" absent: the "channels" object's combined + rx; "configured"
 * is what a write leaves: true for a table set entry by entry, absent
 * (false) for one sent as default, as the kernel's IFF_RXFH_CONFIGURED). */
#ifndef NT_RSS_H
#define NT_RSS_H

#include "kernel/ctx.h"
#include "kernel/ethtool.h"

#include <stdbool.h>
#include <stdint.h>

#define NT_RSS_FLOWS 4 /* tcp4, udp4, tcp6, udp6 */

typedef struct nt_rss {
	uint32_t indir_size; /* 0: the NIC has no indirection table */
	uint32_t key_size;
	uint8_t hfunc; /* ETH_RSS_HASH_* bit, 0 unknown */
	uint32_t *indir; /* indir_size entries, malloc'd (nt_rss_free) */
	/* The fields hashed per flow type (ethtool's letters, "sdfn"); "" when
	 * the NIC does not say. */
	char fields[NT_RSS_FLOWS][16];
	/* RX rings the table may name (ETHTOOL_GRXRINGS); 0 unknown. */
	uint32_t rx_rings;
	/* The input transformation (RXH_XFRM_* bits: 1 symmetric-xor, 2
	 * symmetric-or-xor; 0 none), from the ioctl's struct ethtool_rxfh
	 * input_xfrm, which Linux 6.8 made of the first reserved byte: 0 on
	 * older kernels, which know none (nt_rss_xfrm_since). A fixture's
	 * "input_xfrm" member (of the "rss" object or a context). */
	uint8_t input_xfrm;
} nt_rss;

/* The input transformation's bits and words. */
#define NT_RSS_XFRM_SYM_XOR 0x1 /* RXH_XFRM_SYM_XOR, 6.8 */
#define NT_RSS_XFRM_SYM_OR_XOR 0x2 /* RXH_XFRM_SYM_OR_XOR, 6.15 */
#define NT_RSS_XFRM_NO_CHANGE 0xff /* RXH_XFRM_NO_CHANGE, 6.8 */
/* The first release that knows XFRM: "6.8" for symmetric-xor and none
 * (commit 13e59344fb9d, "net: ethtool: add support for symmetric-xor RSS
 * hash", net-next in December 2023; the ioctl's field and its NO_CHANGE
 * came in the same series), "6.15" for symmetric-or-xor (ecdff893384c,
 * "ethtool: Symmetric OR-XOR RSS hash", February 2025). */
const char *nt_rss_xfrm_since(uint8_t xfrm);
/* "none", "sym-xor", "sym-or-xor", or "0xNN" for bits nettune has no
 * word for; and back (0 or NT_EPARSE). Pure. */
void nt_rss_xfrm_format(uint8_t xfrm, char *out, size_t size);
int nt_rss_xfrm_parse(const char *text, uint8_t *out);
/* Whether the running kernel (CTX's /proc/sys/kernel/osrelease) is older
 * than SINCE; its release into RELEASE ("" when unreadable: then false). */
bool nt_rss_kernel_lacks(const nt_ctx *ctx, const char *since, char *release, size_t size);
/* Set context ID's input transformation (ID 0: the NIC's own table):
 * RSS_SET where the kernel has it (6.17), else ETHTOOL_SRSSH with only
 * input_xfrm changed (6.8). Which the kernel has, and RSS_SET, go through
 * EH as kernel/rss_nl.h says (NULL: a handle of the call's own). Returns 0
 * or the kernel's -errno with its text in ERR (-EOPNOTSUPP: the driver
 * has no such transformation). */
int nt_rss_write_xfrm(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint32_t id, uint8_t xfrm, char *err,
		      size_t errsize);

/* RSS contexts: further indirection tables beside the NIC's own (context
 * 0), which flow rules send their flows to (ethtool -X IF context new,
 * ethtool -U ... context N). Through the ioctl, as ethtool(8) does on
 * every kernel since 4.17: ETHTOOL_GRSSH with rxfh.rss_context reads one;
 * ETHTOOL_SRSSH with rss_context ETH_RXFH_CONTEXT_ALLOC creates one, the
 * id chosen by the kernel (6.11 and later: the lowest free id from 1, in
 * the core's xarray) or by the driver (before), and copied back into
 * rss_context; SRSSH with indir_size 0 and a context deletes it
 * (net/ethtool/ioctl.c, ethtool_set_rxfh: "reset the indir table to
 * default (master context) or delete the context (other RSS
 * contexts)"). The ioctl cannot list contexts: a reader learns ids from
 * the flow rules that name them (kernel/flows.h) or from what it made.
 * kernel/rss_nl.h lists them and makes one with a chosen id where ethtool
 * netlink can (6.12, 6.17); a context's write and delete below go through
 * it there (RSS_SET, RSS_DELETE_ACT).
 * On a fixture root the "contexts" array of the "rss" object plays them:
 *   "rss": {..., "contexts": [{"id": 1, "indir": [4, 5, 6, 7, ...]}],
 *           "max_contexts": 8, "alloc_id": 5}
 * ("contexts" absent: the driver has none, EOPNOTSUPP; "max_contexts",
 * the kernel's rxfh_max_num_contexts, counts context 0; "alloc_id", for
 * tests, makes the fixture allocate that id, as a driver that picks its
 * own would, instead of the lowest free one). */

/* Why a driver answers EOPNOTSUPP for a context, as a clause after
 * "IFACE: ". */
extern const char nt_rss_contexts_unsupported[];

/* Context ID's table (OUT->indir; indir_size, key_size, hfunc and
 * rx_rings as nt_rss_read gives them; no hash fields). Returns 0,
 * -ENOENT when there is no context ID, -EOPNOTSUPP when the driver has no
 * contexts, or -errno. Free OUT with nt_rss_free. */
int nt_rss_context_read(const nt_ctx *ctx, const char *ifname, uint32_t id, nt_rss *out);
/* Create a context with table INDIR (N entries, the NIC's size). *ID is
 * set to the id the kernel gave it. Returns 0 or -errno with ERR. */
int nt_rss_context_create(const nt_ctx *ctx, const char *ifname, const uint32_t *indir, uint32_t n, uint32_t *id,
			  char *err, size_t errsize);
/* Replace context ID's table: RSS_SET where the kernel has it (6.17),
 * which changes only what the request holds, else ETHTOOL_SRSSH. EH as for
 * nt_rss_write_xfrm. Returns 0 or -errno with ERR. */
int nt_rss_context_write(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint32_t id, const uint32_t *indir,
			 uint32_t n, char *err, size_t errsize);
/* Delete context ID: RSS_DELETE_ACT where the kernel has it (6.17), else
 * ETHTOOL_SRSSH; EH as for nt_rss_write_xfrm. Returns 0, -ENOENT when
 * there is none, or -errno with ERR (6.11 and later refuse, EBUSY, while a
 * flow rule names it). */
int nt_rss_context_delete(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint32_t id, char *err,
			  size_t errsize);

/* The flow type names of nt_rss.fields, in order. */
extern const char *const nt_rss_flow_names[NT_RSS_FLOWS];

/* Read IFNAME's RSS state. Returns 0, -EOPNOTSUPP when the NIC has no RSS
 * (or a fixture no "rss" object), or -errno. Free OUT with nt_rss_free. */
int nt_rss_read(const nt_ctx *ctx, const char *ifname, nt_rss *out);
void nt_rss_free(nt_rss *r);

/* Write IFNAME's indirection table: N entries, N being the size the NIC
 * reports (never 0: a NIC without a table is not sent a set, as Debian
 * 12's virtio_net does not check and wedges). Key and hash function are
 * left as they are. A table that is the kernel's default (entry i on
 * queue i mod the RX rings) is sent as "default" (ethtool -X IF default)
 * rather than entry by entry: a table set entry by entry marks the NIC's
 * RSS as configured, and the kernel then refuses fewer channels than the
 * table names ("requested channel counts are too low for existing
 * indirection table settings", seen in the lab after a rollback to the
 * driver's own table); sent as default it stays the driver's, and follows
 * a channel change. Returns 0 or the kernel's -errno (ERR says what). */
int nt_rss_write_indir(const nt_ctx *ctx, const char *ifname, const uint32_t *indir, uint32_t n, char *err,
		       size_t errsize);
/* Whether INDIR (N entries) is the kernel's default over RINGS RX rings
 * (entry i on queue i mod RINGS). Pure. */
bool nt_rss_indir_is_default(const uint32_t *indir, uint32_t n, uint32_t rings);
/* Hash the fields DATA (RXH_* bits) for flow type FLOW (an index into
 * nt_rss_flow_names). Returns 0 or the kernel's -errno. */
int nt_rss_write_fields(const nt_ctx *ctx, const char *ifname, int flow, uint64_t data, char *err,
			size_t errsize);
/* An indirection table as text, so that a value holds a whole table and
 * a rollback restores it exactly: segments separated by spaces, each a
 * list of queue numbers and ascending ranges, optionally repeated:
 * "0-3*32" is 0,1,2,3 thirty-two times (a round-robin table of 128 over
 * 4 queues, ethtool -X equal 4), "0*64 1*64" two blocks (ethtool -X
 * weight 1 1), "0-2*42 0,1" a round robin with a tail. FORMAT writes the
 * shortest repetition it finds at each place (repeats of up to 128
 * entries), so a table has one spelling. Pure. FORMAT returns 0 or
 * -E2BIG when the text does not fit SIZE; PARSE fills up to CAP entries
 * and returns 0 (*N entries) or NT_EPARSE (also beyond CAP). */
int nt_rss_indir_format(const uint32_t *indir, uint32_t n, char *out, size_t size);
int nt_rss_indir_parse(const char *text, uint32_t *indir, uint32_t cap, uint32_t *n);
/* A table of N entries from NW weights, as ethtool -X weight fills it:
 * queue q takes a block of about N * W[q] / sum (sum > 0, at most N). Pure. */
void nt_rss_indir_weights(const uint32_t *w, int nw, uint32_t *indir, uint32_t n);

/* The index of flow type NAME ("tcp4") in nt_rss_flow_names, or -1. */
int nt_rss_flow_index(const char *name);

/* RXH_* bits as ethtool's letters ("sdfn"), and back. Pure. */
void nt_rss_fields_format(uint64_t data, char *out, size_t size);
int nt_rss_fields_parse(const char *text, uint64_t *out);

#endif
