/* Ring and channel sizes of a NIC.
 *
 * On the live host (ctx->live) these go through the kernel: ethtool netlink
 * (ETHTOOL_MSG_RINGS_GET/SET, CHANNELS_GET/SET over generic netlink) with the
 * SIOCETHTOOL ioctl as the fallback when the family is missing. In a fixture
 * root they are read from and written to ROOT/ethtool/IFACE.json, e.g.
 *   {"rings":{"rx":1024,"tx":1024,"rx_max":8192,"tx_max":8192},
 *    "channels":{"combined":16,"combined_max":63}}
 * A missing file or key means "not supported" (-EOPNOTSUPP). */
#ifndef NT_ETHTOOL_H
#define NT_ETHTOOL_H

#include "kernel/ctx.h"

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

/* Return 0, -EOPNOTSUPP (driver or fixture has none), -ENODEV, or -errno.
 * ERR, when not NULL, receives the kernel's extended error text if any. */
int nt_ethtool_get_rings(const nt_ctx *ctx, const char *ifname, nt_rings *out);
int nt_ethtool_get_channels(const nt_ctx *ctx, const char *ifname, nt_channels *out);

/* Set rx/tx ring sizes (the _max fields of WANT are ignored). A value of 0
 * leaves that ring unchanged. Errors are the kernel's: -EINVAL above the
 * maximum, -ENOMEM when the driver cannot allocate, -EOPNOTSUPP, -EBUSY. */
int nt_ethtool_set_rings(const nt_ctx *ctx, const char *ifname, const nt_rings *want,
			 char *err, size_t errsize);
/* Set rx and tx exactly, 0 included (netdevsim's fresh rings are 0, and a
 * rollback must be able to restore them). */
int nt_ethtool_set_rings_exact(const nt_ctx *ctx, const char *ifname, const nt_rings *want,
			       char *err, size_t errsize);
/* Set rx, tx, other and combined exactly, 0 included. */
int nt_ethtool_set_channels_exact(const nt_ctx *ctx, const char *ifname, const nt_channels *want,
				  char *err, size_t errsize);
/* Set channel counts; 0 leaves a count unchanged. */
int nt_ethtool_set_channels(const nt_ctx *ctx, const char *ifname, const nt_channels *want,
			    char *err, size_t errsize);

/* The live calls above try ethtool netlink and fall back to the ioctl when
 * the kernel has no "ethtool" generic netlink family. These variants pin one
 * interface so tests can check both against the same NIC; in a fixture root
 * the backend is ignored. NT_ETHTOOL_NETLINK gives -EPROTONOSUPPORT when the
 * family is missing. */
typedef enum {
	NT_ETHTOOL_AUTO = 0,
	NT_ETHTOOL_NETLINK,
	NT_ETHTOOL_IOCTL,
} nt_ethtool_backend;

int nt_ethtool_get_rings_via(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
			     nt_rings *out);
int nt_ethtool_get_channels_via(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
				nt_channels *out);
int nt_ethtool_set_rings_via(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
			     const nt_rings *want, char *err, size_t errsize);
int nt_ethtool_set_channels_via(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
				const nt_channels *want, char *err, size_t errsize);

#endif
