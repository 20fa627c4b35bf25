/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's ethtool settings: ring sizes, channel counts, and any other group
 * of settings the kernel's ethtool interface GETs and SETs as one message
 * (coalescing, pause, ...), described by a table.
 *
 * On the live host these go through the kernel: ethtool netlink (one
 * generic netlink socket, ETHTOOL_MSG_*_GET/SET) with the SIOCETHTOOL ioctl
 * as the fallback when the kernel has no "ethtool" family. On a fixture root
 * kernel/fixture.c plays the kernel with ROOT/ethtool/IFACE.json, e.g.
 *   {"rings":{"rx":1024,"tx":1024,"rx_max":8192,"tx_max":8192},
 *    "channels":{"combined":16,"combined_max":63}}
 * A missing file or section means "not supported" (-EOPNOTSUPP). */
#ifndef NT_ETHTOOL_H
#define NT_ETHTOOL_H

#include "kernel/ctx.h"
#include "kernel/ethtool_group.h"

#include <stddef.h>
#include <stdint.h>

/* Ring sizes as `ethtool -g` shows them; a maximum of 0 means the driver
 * has no such ring (n/a). */
typedef struct nt_rings {
	uint32_t rx, tx, rx_max, tx_max;
} nt_rings;

/* Channel (queue) counts as `ethtool -l` shows them; 0 maxima are n/a. */
typedef struct nt_channels {
	uint32_t rx, tx, other, combined;
	uint32_t rx_max, tx_max, other_max, combined_max;
} nt_channels;

/* ---- the handle: one per read (or per transaction step) ---- */

/* Which kernel interface a live handle uses. AUTO tries ethtool netlink and
 * falls back to the ioctl when the kernel has no "ethtool" family; NETLINK
 * then fails with -EPROTONOSUPPORT instead. Tests pin one to check both
 * against the same NIC. On a fixture root the choice is ignored. */
typedef enum {
	NT_ETHTOOL_AUTO = 0,
	NT_ETHTOOL_NETLINK,
	NT_ETHTOOL_IOCTL,
} nt_ethtool_backend;

typedef struct nt_ethtool nt_ethtool;

/* Open a handle for CTX: on the live host one generic netlink socket with
 * the "ethtool" family resolved once (or one ioctl socket when the family is
 * missing); on a fixture root nothing is opened. *OUT is the caller's, freed
 * with nt_ethtool_close. A handle is used by one thread at a time, and every
 * call that takes it must pass the CTX it was opened for. Returns 0 or
 * -errno (-EPROTONOSUPPORT: NT_ETHTOOL_NETLINK without the family). */
int nt_ethtool_open(const nt_ctx *ctx, nt_ethtool **out);
int nt_ethtool_open_via(const nt_ctx *ctx, nt_ethtool_backend be, nt_ethtool **out);
/* Close H (NULL is fine). */
void nt_ethtool_close(nt_ethtool *h);
/* The interface H talks through (NT_ETHTOOL_NETLINK or NT_ETHTOOL_IOCTL on
 * the live host, NT_ETHTOOL_AUTO on a fixture root). */
nt_ethtool_backend nt_ethtool_backend_of(const nt_ethtool *h);

/* One SIOCETHTOOL request: DATA (a struct starting with its ETHTOOL_*
 * command) for IFNAME through FD, an AF_INET datagram socket. For the
 * requests ethtool netlink lacks (flow rules). Returns 0 or -errno. */
int nt_ethtool_ioctl(int fd, const char *ifname, void *data);

/* ---- settings groups ---- */

/* The tables of fields (nt_ethtool_group and its values) are in
 * kernel/ethtool_group.h. */

/* Read group G of IFNAME. A field is present when the driver reports it:
 * over netlink when the kernel puts its attribute in the reply (it leaves
 * out what the driver does not support: a ring without a maximum, an
 * unsupported coalescing parameter that is 0); via the ioctl, every field
 * the struct carries; on a fixture root, every key of the section.
 * H may be NULL: a handle is opened for this call alone.
 * Returns 0, -EOPNOTSUPP (the driver or fixture has no such group),
 * -ENODEV, -EINVAL (bad name or table), NT_EPARSE (fixture), or -errno. */
int nt_ethtool_get_group(nt_ethtool *h, const nt_ctx *ctx, const nt_ethtool_group *g,
			 const char *ifname, nt_ethtool_values *out);

/* Set the fields of WANT->present. The group is read first and only the
 * fields that differ are sent, so a request that is already true sends
 * nothing (drivers such as virtio_net and mlx5 reset queues on every SET).
 * Nothing is clamped: a value the driver refuses comes back as the
 * kernel's -errno (-EINVAL above a maximum or for an unsupported parameter,
 * -EOPNOTSUPP, -EBUSY, -ENOMEM) with its extack text in ERR ("" when none).
 * A read-only field in WANT->present is refused with -EINVAL. H may be NULL.
 * Returns 0 or -errno. */
int nt_ethtool_set_group(nt_ethtool *h, const nt_ctx *ctx, const nt_ethtool_group *g,
			 const char *ifname, const nt_ethtool_values *want, char *err,
			 size_t errsize);

/* One GET reply of G as the kernel sends it: BUF holds LEN bytes
 * received from the socket, whose first netlink message is the reply (its
 * attributes fill OUT as nt_ethtool_get_group says; the header and
 * attributes G does not name are skipped) or an NLMSG_ERROR. Pure, so the
 * unit test feeds it replies built by hand. Returns 0, the kernel's
 * -errno (-EIO for an ACK without a reply), NT_EPARSE (truncated message
 * or attribute, a value shorter than its width), or -EINVAL (bad table). */
int nt_ethtool_parse_reply(const nt_ethtool_group *g, const void *buf, size_t len, nt_ethtool_values *out);

/* Whether a kernel of RELEASE ("6.1.0-27-amd64", /proc/sys/kernel/osrelease)
 * is older than SINCE ("6.14"), a field's first release. False when either
 * is NULL or does not start with MAJOR.MINOR: nothing is claimed then. */
bool nt_ethtool_release_lacks(const char *release, const char *since);
/* Why field F is not in a reply, as a clause: "needs Linux 6.14 or later
 * (this kernel is 6.1.0-27-amd64)" when RELEASE is older than SINCE, the
 * field's first release (NULL: as old as ethtool netlink); "only ethtool
 * netlink carries it, and this kernel has none" when the handle talks
 * through the ioctl (NETLINK false) and the ioctl struct has no such
 * field; else "the driver does not report it". */
void nt_ethtool_absent_why(const nt_ethtool_field *f, const char *since, const char *release, bool netlink,
			   char *out, size_t size);

/* The two groups nettune models as structs. */
extern const nt_ethtool_group nt_ethtool_rings_group;
extern const nt_ethtool_group nt_ethtool_channels_group;

/* ---- rings and channels as structs: thin wrappers of the above ---- */

/* Return 0, -EOPNOTSUPP (driver or fixture has none), -ENODEV, or -errno.
 * Fields the driver does not report read as 0. H may be NULL. */
int nt_ethtool_read_rings(nt_ethtool *h, const nt_ctx *ctx, const char *ifname, nt_rings *out);
int nt_ethtool_read_channels(nt_ethtool *h, const nt_ctx *ctx, const char *ifname,
			     nt_channels *out);
/* Set rx/tx (and other/combined); the _max fields of WANT are ignored. With
 * EXACT every count is set to its value, 0 included (netdevsim's fresh
 * rings are 0, and a rollback must restore them); without it a 0 leaves
 * that count unchanged. Errors as nt_ethtool_set_group. H may be NULL. */
int nt_ethtool_write_rings(nt_ethtool *h, const nt_ctx *ctx, const char *ifname,
			   const nt_rings *want, bool exact, char *err, size_t errsize);
int nt_ethtool_write_channels(nt_ethtool *h, const nt_ctx *ctx, const char *ifname,
			      const nt_channels *want, bool exact, char *err, size_t errsize);

/* The same with a handle for the call alone. ERR, when not NULL, receives
 * the kernel's extended error text if any. */
int nt_ethtool_get_rings(const nt_ctx *ctx, const char *ifname, nt_rings *out);
int nt_ethtool_get_channels(const nt_ctx *ctx, const char *ifname, nt_channels *out);
int nt_ethtool_set_rings(const nt_ctx *ctx, const char *ifname, const nt_rings *want,
			 char *err, size_t errsize);
int nt_ethtool_set_rings_exact(const nt_ctx *ctx, const char *ifname, const nt_rings *want,
			       char *err, size_t errsize);
int nt_ethtool_set_channels(const nt_ctx *ctx, const char *ifname, const nt_channels *want,
			    char *err, size_t errsize);
int nt_ethtool_set_channels_exact(const nt_ctx *ctx, const char *ifname, const nt_channels *want,
				  char *err, size_t errsize);

/* The same through a pinned interface (see nt_ethtool_backend). */
int nt_ethtool_get_rings_via(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
			     nt_rings *out);
int nt_ethtool_get_channels_via(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
				nt_channels *out);
int nt_ethtool_set_rings_via(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
			     const nt_rings *want, char *err, size_t errsize);
int nt_ethtool_set_channels_via(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
				const nt_channels *want, char *err, size_t errsize);

#endif
