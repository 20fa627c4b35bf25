/* SPDX-License-Identifier: Apache-2.0 */
/* A group of ethtool settings as a table: its fields (fixture key, netlink
 * attribute and width, offset in the ioctl struct) and a set of their
 * values. Both sides of a NIC's ethtool settings read these tables: the
 * live side in kernel/ethtool.c and the fixture side in kernel/fixture.c.
 * They are a header of their own so that each of those two includes what
 * it needs of the other and no more: kernel/ethtool.c calls the fixture
 * (kernel/fixture.h) on a fixture root, and the fixture needs only the
 * tables, not the handle and the backends of kernel/ethtool.h. */
#ifndef NT_ETHTOOL_GROUP_H
#define NT_ETHTOOL_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Fields per group: `present` below is a bitmask of them. */
#define NT_ETHTOOL_MAX_FIELDS 32
/* ioc_off of a field that the ioctl struct does not carry (a netlink-only
 * attribute): via the ioctl such a field is never present and cannot be set. */
#define NT_ETHTOOL_NO_IOCTL ((size_t)-1)

typedef enum {
	NT_ETHTOOL_U32 = 0, /* NLA_U32 */
	NT_ETHTOOL_U8, /* NLA_U8, also the kernel's booleans (1 = on) */
} nt_ethtool_width;

typedef struct nt_ethtool_field {
	const char *name; /* key in the fixture section: "rx", "rx_usecs" */
	uint16_t attr; /* ETHTOOL_A_* in the GET reply and the SET request */
	nt_ethtool_width width;
	/* Offset of the field's __u32 in the ioctl struct (every ioctl field
	 * is a __u32, booleans included), or NT_ETHTOOL_NO_IOCTL. */
	size_t ioc_off;
	/* Reported, never set (a maximum); a SET naming it is refused. */
	bool read_only;
	/* Name of the field that bounds this one ("rx_max" for "rx"), NULL when
	 * none: the fixture refuses a value above it as the kernel does. */
	const char *max;
} nt_ethtool_field;

/* One GET/SET pair of the ethtool interface. Tables are the caller's and
 * must outlive the calls; a new kind of setting defines its own. */
typedef struct nt_ethtool_group {
	const char *section; /* object in ROOT/ethtool/IFACE.json: "rings" */
	uint8_t get_cmd, set_cmd; /* ETHTOOL_MSG_*_GET / _SET */
	uint16_t header_attr; /* ETHTOOL_A_*_HEADER */
	uint32_t ioc_get, ioc_set; /* ETHTOOL_G* / ETHTOOL_S* */
	size_t ioc_size; /* sizeof(struct ethtool_*) of the ioctl */
	/* The kernel's extack text when a value is above its max field, for the
	 * fixture to give the same reason; NULL for a generic one. */
	const char *above_max;
	const nt_ethtool_field *fields; /* at most NT_ETHTOOL_MAX_FIELDS */
	int nfields;
	/* A group whose fields all sit in one top-level nest that holds an
	 * array of entries, each a nest of its own (a DIM profile:
	 * ETHTOOL_A_COALESCE_RX_PROFILE holding NET_DIM_PARAMS_NUM_PROFILES
	 * ETHTOOL_A_PROFILE_IRQ_MODERATION nests of usec, pkts and comps).
	 * NEST is that attribute (0: the fields are top-level attributes, as
	 * in every other group), ENTRY_ATTR the entries' type, NENTRIES how
	 * many there are; field i is in entry i / (nfields / nentries), its
	 * attr an attribute inside the entry and its name the key inside the
	 * entry's object of the fixture's array NEST_KEY. A SET sends every
	 * entry, those with nothing to change empty (the kernel updates the
	 * entries in the order they come and keeps what an entry leaves
	 * out). Such fields are netlink-only (NT_ETHTOOL_NO_IOCTL). */
	uint16_t nest, entry_attr;
	int nentries;
	const char *nest_key;
} nt_ethtool_group;

/* Values of a group's fields, by index into group->fields. */
typedef struct nt_ethtool_values {
	uint32_t v[NT_ETHTOOL_MAX_FIELDS];
	/* Bit i: field i is reported (GET) or to be set (SET). Absent fields
	 * read as 0. */
	uint32_t present;
} nt_ethtool_values;

/* The index of the field called NAME in G, or -1. */
static inline int nt_ethtool_field_index(const nt_ethtool_group *g, const char *name)
{
	for (int i = 0; name && i < g->nfields; i++)
		if (strcmp(g->fields[i].name, name) == 0)
			return i;
	return -1;
}

#endif
