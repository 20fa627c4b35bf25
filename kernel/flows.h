/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's flow rules (ntuple filters, `ethtool -u` / `ethtool -U`): the
 * rule table, and inserting and deleting one rule at a location.
 *
 * On the live host through the SIOCETHTOOL ioctl (ETHTOOL_GRXRINGS,
 * ETHTOOL_GRXCLSRLCNT, ETHTOOL_GRXCLSRLALL, ETHTOOL_GRXCLSRULE,
 * ETHTOOL_SRXCLSRLINS, ETHTOOL_SRXCLSRLDEL: ethtool netlink has no flow
 * rule messages in 6.1); on a fixture root kernel/fixture.c plays the
 * driver with the "flows" object of ROOT/ethtool/IFACE.json:
 *   "flows": {"size": 64, "rings": 8,
 *             "rules": [{"location": 0, "rule": "tcp4 dst-port 5002 queue 1"}]}
 * ("rings" defaults to the "channels" object's rx + combined counts).
 *
 * A rule as text (the journal's and the API's value), fields in this order:
 *   FLOW [src-ip A[/M]] [dst-ip A[/M]] [src-port P[/M]] [dst-port P[/M]] [context C] ACTION
 * FLOW is tcp4, udp4, tcp6 or udp6; ACTION is "queue N" or "drop".
 * "context C" (C from 1) sends the flows to RSS context C (kernel/rss.h),
 * which spreads them over its table's queues; "queue N" is then an offset
 * added to the queue the table picks (FLOW_RSS in the flow type,
 * ethtool_rxnfc.rss_context, ring_cookie the offset: ethtool -U ...
 * context C [action N]); a rule with a context cannot drop. A mask
 * has the kernel's sense, as in struct ethtool_rx_flow_spec's m_u: set bits
 * are compared (a netmask, "10.0.0.0/255.255.255.0" or "/24"; a port mask
 * "/0xfff0"); no mask compares the whole field. ethtool(8)'s "m" masks
 * are the other way round (set bits ignored). "none" is an empty location. */
#ifndef NT_FLOWS_H
#define NT_FLOWS_H

#include "kernel/ctx.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ethtool_rx_flow_spec;

/* Longest rule as text (two IPv6 addresses with masks fit). */
#define NT_FLOW_TEXT_MAX 256

typedef enum {
	NT_FLOW_NONE = 0, /* no rule at the location */
	NT_FLOW_TCP4,
	NT_FLOW_UDP4,
	NT_FLOW_TCP6,
	NT_FLOW_UDP6,
	/* A rule of another flow type, or with match fields nettune does not
	 * model (VLAN, MAC, TOS, user-def): reported, never written. */
	NT_FLOW_OTHER,
} nt_flow_type;

/* Which match fields a rule has. */
enum {
	NT_FLOW_SRC_IP = 1u << 0,
	NT_FLOW_DST_IP = 1u << 1,
	NT_FLOW_SRC_PORT = 1u << 2,
	NT_FLOW_DST_PORT = 1u << 3,
};

typedef struct nt_flow_rule {
	uint32_t location;
	nt_flow_type type;
	uint32_t kernel_flow_type; /* for NT_FLOW_OTHER: the kernel's flow_type */
	unsigned fields; /* NT_FLOW_* bits */
	/* Addresses in network order: 4 bytes used for IPv4, 16 for IPv6. */
	uint8_t src_ip[16], src_ip_mask[16], dst_ip[16], dst_ip_mask[16];
	uint16_t src_port, src_port_mask, dst_port, dst_port_mask; /* host order */
	bool drop;
	uint32_t queue; /* with CONTEXT: the offset inside the context */
	uint32_t context; /* the RSS context the flows go to, 0 none */
} nt_flow_rule;

typedef struct nt_flow_table {
	uint32_t size; /* locations in the table */
	uint32_t rings; /* RX rings a rule can steer to (ETHTOOL_GRXRINGS) */
	/* The driver picks a location itself for RX_CLS_LOC_ANY. */
	bool loc_special;
	int n;
	nt_flow_rule *rules; /* N rules by ascending location, malloc'd */
} nt_flow_table;

/* ---- pure ---- */

/* TEXT as a rule (LOCATION 0). Returns 0 or NT_EPARSE with what is wrong
 * in WHY (may be NULL). "none" parses as NT_FLOW_NONE. */
int nt_flow_rule_parse(const char *text, nt_flow_rule *out, char *why, size_t whysize);
/* R as text in the canonical form above ("none" for NT_FLOW_NONE; NT_FLOW_OTHER
 * as "other flow-type N ACTION"). Returns 0 or -ENOSPC. */
int nt_flow_rule_format(const nt_flow_rule *r, char *out, size_t size);
/* Same match and action (the location is not compared). */
bool nt_flow_rule_equal(const nt_flow_rule *a, const nt_flow_rule *b);
/* The kernel's flow_type name ("tcp4") of T, NULL for NONE and OTHER. */
const char *nt_flow_type_name(nt_flow_type t);

/* R as the kernel's struct, and back. ENCODE: -EINVAL for NONE or
 * OTHER; R's context goes in ethtool_rxnfc.rss_context, not the spec (the
 * caller sets it), the spec's flow type carrying FLOW_RSS. DECODE: a type
 * or field nettune does not model gives NT_FLOW_OTHER (with its flow_type
 * and action), never an error; RSS_CONTEXT is what GRXCLSRULE returned in
 * ethtool_rxnfc.rss_context, read when the spec has FLOW_RSS. */
int nt_flow_spec_encode(const nt_flow_rule *r, struct ethtool_rx_flow_spec *fs);
void nt_flow_spec_decode(const struct ethtool_rx_flow_spec *fs, uint32_t rss_context, nt_flow_rule *out);

/* ---- the NIC ---- */

/* IFNAME's table and rules. Returns 0; -EOPNOTSUPP when the driver has no
 * rule table (no get_rxnfc, or GRXCLSRLCNT refused; a fixture without
 * "flows"); or -errno. Free OUT with nt_flow_table_free either way. */
int nt_flows_read(const nt_ctx *ctx, const char *ifname, nt_flow_table *out);
void nt_flow_table_free(nt_flow_table *t);
/* The rule at LOC: OUT->type NT_FLOW_NONE when the location is empty.
 * Returns 0, -EOPNOTSUPP, or -errno (-EINVAL: LOC beyond the table). */
int nt_flows_get(const nt_ctx *ctx, const char *ifname, uint32_t loc, nt_flow_rule *out);
/* Insert R at R->location (a rule there is replaced, as mlx5 and ixgbe
 * do). Returns 0 or the driver's -errno (-EINVAL: a queue beyond its
 * rings or a bad location; -ENOSPC: the table is full), with a sentence
 * in ERR. */
int nt_flows_insert(const nt_ctx *ctx, const char *ifname, const nt_flow_rule *r, char *err,
		    size_t errsize);
/* Delete the rule at LOC. Returns 0, -ENOENT when there is none, or
 * -errno. */
int nt_flows_delete(const nt_ctx *ctx, const char *ifname, uint32_t loc);

#endif
