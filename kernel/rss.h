/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's RSS state, read only: the indirection table (which RX queue
 * each hash bucket goes to), the hash function, the key's size, and the
 * header fields hashed per flow type. Through the SIOCETHTOOL ioctl
 * (ETHTOOL_GRSSH, ETHTOOL_GRXFH) on the live host, and the "rss" object of
 * ROOT/ethtool/IFACE.json on a fixture root:
 *   "rss": {"indir": [0, 1, 0, 1, ...], "key_size": 40, "hfunc": 1,
 *           "hash_fields": {"tcp4": "sdfn", "udp4": "sd"}}
 * Nothing here writes: setting RSS (rss[] of a profile) is not built yet. */
#ifndef NT_RSS_H
#define NT_RSS_H

#include "kernel/ctx.h"

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
} nt_rss;

/* The flow type names of nt_rss.fields, in order. */
extern const char *const nt_rss_flow_names[NT_RSS_FLOWS];

/* Read IFNAME's RSS state. Returns 0, -EOPNOTSUPP when the NIC has no RSS
 * (or a fixture no "rss" object), or -errno. Free OUT with nt_rss_free. */
int nt_rss_read(const nt_ctx *ctx, const char *ifname, nt_rss *out);
void nt_rss_free(nt_rss *r);

/* RXH_* bits as ethtool's letters ("sdfn"), and back. Pure. */
void nt_rss_fields_format(uint64_t data, char *out, size_t size);
int nt_rss_fields_parse(const char *text, uint64_t *out);

#endif
