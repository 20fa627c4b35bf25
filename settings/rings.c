/* Ring sizes: target = interface, value = "rx=N,tx=N" (both always present
 * in a stored value so a restore sets both). Through kernel/ethtool.h, which
 * talks to the kernel live and to ROOT/ethtool/IFACE.json in a fixture. */
#include "settings/setting.h"
#include "kernel/ethtool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_rings(const char *v, unsigned long *rx, unsigned long *tx)
{
	char tail;
	if (!v || sscanf(v, "rx=%lu,tx=%lu%c", rx, tx, &tail) != 2)
		return NT_EPARSE;
	return 0;
}

static int rings_read(const nt_ctx *ctx, const char *target, char *value, size_t size)
{
	nt_rings r;
	if (!nt_ifname_valid(target))
		return NT_EINVALID;
	int e = nt_ethtool_get_rings(ctx, target, &r);
	if (e < 0)
		return e;
	int n = snprintf(value, size, "rx=%u,tx=%u", r.rx, r.tx);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

static bool rings_equal(const char *a, const char *b)
{
	unsigned long ar, at, br, bt;
	if (parse_rings(a, &ar, &at) < 0 || parse_rings(b, &br, &bt) < 0)
		return strcmp(a, b) == 0;
	return ar == br && at == bt;
}

static int rings_validate(const nt_ctx *ctx, const nt_topology *t, const char *target,
			  const char *value, char *why, size_t whysize)
{
	unsigned long rx, tx;
	nt_rings cur;
	int r;

	if (!nt_ifname_valid(target)) {
		snprintf(why, whysize, "'%s' is not an interface name", target);
		return NT_EINVALID;
	}
	if (parse_rings(value, &rx, &tx) < 0 || rx == 0 || tx == 0) {
		snprintf(why, whysize, "'%s' is not rx=N,tx=N with positive sizes", value);
		return NT_EINVALID;
	}
	if ((r = nt_ethtool_get_rings(ctx, target, &cur)) < 0) {
		snprintf(why, whysize, "%s: ring sizes cannot be read: %s", target, nt_strerror(r));
		return NT_EINVALID;
	}
	if (rx > cur.rx_max) {
		snprintf(why, whysize, "rx %lu is above %s's maximum %u", rx, target, cur.rx_max);
		return NT_EINVALID;
	}
	if (tx > cur.tx_max) {
		snprintf(why, whysize, "tx %lu is above %s's maximum %u", tx, target, cur.tx_max);
		return NT_EINVALID;
	}
	return 0;
}

static int rings_apply(const nt_ctx *ctx, const char *target, const char *value, char *err,
		       size_t errsize)
{
	unsigned long rx, tx;
	nt_rings want = { 0 };
	char kerr[200] = "";
	int r;

	if (!nt_ifname_valid(target) || parse_rings(value, &rx, &tx) < 0) {
		r = NT_EINVALID;
		goto out;
	}
	want.rx = (uint32_t)rx;
	want.tx = (uint32_t)tx;
	r = nt_ethtool_set_rings_exact(ctx, target, &want, kerr, sizeof(kerr));
out:
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "%s rings: %s%s%s", target, nt_strerror(r),
			 kerr[0] ? ": " : "", kerr);
	return r;
}

const nt_setting_kind nt_setting_rings = {
	.name = "rings",
	.read = rings_read,
	.validate = rings_validate,
	.apply = rings_apply,
	.equal = rings_equal,
};
