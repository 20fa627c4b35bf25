/* The kernel as a fixture root plays it: private to kernel/.
 *
 * A fixture root is a captured host, and nothing reacts to writes into it.
 * What the kernel would do in reply (refuse a ring size above its maximum)
 * is imitated here, so the code above kernel/ runs the same on both. The
 * live side is in kernel/ethtool.c, which calls these only on a fixture
 * root. */
#ifndef NT_FIXTURE_H
#define NT_FIXTURE_H

#include "kernel/ctx.h"
#include "kernel/ethtool.h"

/* Group G of IFNAME from ROOT/ethtool/IFACE.json (see kernel/ethtool.h).
 * Returns 0, -EOPNOTSUPP without the file or section, NT_EPARSE. */
int nt_fixture_ethtool_get(const nt_ctx *ctx, const nt_ethtool_group *g, const char *ifname,
			   nt_ethtool_values *out);
/* Write the fields of SEND->present, given CUR as read by the above. A value
 * above its max field, or a field the section lacks (the driver does not
 * support it), is refused with -EINVAL and the kernel's text in ERR, and
 * the file is left as it was; otherwise it is replaced in one rename. */
int nt_fixture_ethtool_set(const nt_ctx *ctx, const nt_ethtool_group *g, const char *ifname,
			   const nt_ethtool_values *cur, const nt_ethtool_values *send, char *err,
			   size_t errsize);

#endif
