/* Channel (queue) counts: target = interface, value =
 * "rx=N,tx=N,other=N,combined=N" (all four always present in a stored value,
 * so a restore sets every count back). Through kernel/ethtool.h like rings.
 * Changing channels re-creates the NIC's queues and IRQ vectors: the plan
 * warns, and a NIC's ring and channel steps stand together. */
#include "kernel/ethtool.h"
#include "settings/setting.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int parse_channels(const char *v, nt_channels *c)
{
	char tail;
	memset(c, 0, sizeof(*c));
	if (!v || sscanf(v, "rx=%u,tx=%u,other=%u,combined=%u%c", &c->rx, &c->tx, &c->other, &c->combined,
			 &tail) != 4)
		return NT_EPARSE;
	return 0;
}

int nt_channels_format(const nt_channels *c, char *value, size_t size)
{
	int n = snprintf(value, size, "rx=%u,tx=%u,other=%u,combined=%u", c->rx, c->tx, c->other, c->combined);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

static int channels_read(const nt_ctx *ctx, const char *target, char *value, size_t size)
{
	nt_channels c;
	if (!nt_ifname_valid(target))
		return NT_EINVALID;
	int e = nt_ethtool_get_channels(ctx, target, &c);
	if (e < 0)
		return e;
	return nt_channels_format(&c, value, size);
}

static bool channels_equal(const char *a, const char *b)
{
	nt_channels x, y;
	if (parse_channels(a, &x) < 0 || parse_channels(b, &y) < 0)
		return strcmp(a, b) == 0;
	return x.rx == y.rx && x.tx == y.tx && x.other == y.other && x.combined == y.combined;
}

static int channels_validate(const nt_ctx *ctx, const nt_topology *t, const char *target, const char *value,
			     char *why, size_t whysize)
{
	nt_channels want, cur;
	int r;

	if (!nt_ifname_valid(target)) {
		snprintf(why, whysize, "'%s' is not an interface name", target);
		return NT_EINVALID;
	}
	if (parse_channels(value, &want) < 0) {
		snprintf(why, whysize, "'%s' is not rx=N,tx=N,other=N,combined=N", value);
		return NT_EINVALID;
	}
	if ((r = nt_ethtool_get_channels(ctx, target, &cur)) < 0) {
		snprintf(why, whysize, "%s: channel counts cannot be read: %s", target, nt_strerror(r));
		return NT_EINVALID;
	}
	static const struct {
		const char *name;
		size_t off, max_off;
	} f[] = {
		{ "rx", offsetof(nt_channels, rx), offsetof(nt_channels, rx_max) },
		{ "tx", offsetof(nt_channels, tx), offsetof(nt_channels, tx_max) },
		{ "other", offsetof(nt_channels, other), offsetof(nt_channels, other_max) },
		{ "combined", offsetof(nt_channels, combined), offsetof(nt_channels, combined_max) },
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		uint32_t w = *(const uint32_t *)((const char *)&want + f[i].off);
		uint32_t m = *(const uint32_t *)((const char *)&cur + f[i].max_off);
		if (w > m) {
			snprintf(why, whysize, "%s channels %u is above %s's maximum %u", f[i].name, w, target, m);
			return NT_EINVALID;
		}
	}
	/* A NIC with no queue at all carries no traffic: the kernel refuses. */
	if (want.combined + want.rx == 0 || want.combined + want.tx == 0) {
		snprintf(why, whysize, "%s would be left without RX or TX queues", target);
		return NT_EINVALID;
	}
	return 0;
}

static int channels_apply(const nt_ctx *ctx, const char *target, const char *value, char *err, size_t errsize)
{
	nt_channels want;
	char kerr[200] = "";
	int r;

	if (!nt_ifname_valid(target) || parse_channels(value, &want) < 0) {
		r = NT_EINVALID;
		goto out;
	}
	r = nt_ethtool_set_channels_exact(ctx, target, &want, kerr, sizeof(kerr));
out:
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "%s channels: %s%s%s", target, nt_strerror(r), kerr[0] ? ": " : "", kerr);
	return r;
}

const nt_setting_kind nt_setting_channels = {
	.name = "channels",
	.read = channels_read,
	.validate = channels_validate,
	.apply = channels_apply,
	.equal = channels_equal,
};
