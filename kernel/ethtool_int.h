/* SPDX-License-Identifier: Apache-2.0 */
/* What kernel/ethtool.c lends the other ethtool speakers of kernel/
 * (kernel/features.c, kernel/rss_nl.c) that build their own messages over
 * a handle: private to kernel/. */
#ifndef NT_ETHTOOL_INT_H
#define NT_ETHTOOL_INT_H

#include "kernel/ethtool.h"

#include <stdbool.h>
#include <stdint.h>

struct nl_sock;

/* Whether H is a fixture root's handle (nothing open). */
bool nt_ethtool_is_fixture(const nt_ethtool *h);
/* H's generic netlink socket, and the ethtool family id in *FAMILY; NULL
 * when H talks through the ioctl or is a fixture's. The socket stays H's. */
struct nl_sock *nt_ethtool_genl(nt_ethtool *h, int *family);
/* The family's commands as H's open read them (its one GETFAMILY): bit C
 * of *OPS for command C, of *DUMPS for one that dumps; 0 when H is not a
 * netlink handle. */
void nt_ethtool_genl_ops(const nt_ethtool *h, uint64_t *ops, uint64_t *dumps);
/* A pointer H keeps for its life and free()s when closed: the feature
 * names, fetched once per handle rather than once per read. */
void **nt_ethtool_features_slot(nt_ethtool *h);

#endif
