/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's device-wide NAPI files: target = "IF/FILE", FILE one of
 * "threaded" (5.12), "napi_defer_hard_irqs" and "gro_flush_timeout"
 * (5.8) under /sys/class/net/IF, value = the number the file holds
 * ("1"; "20000" ns).
 *
 * "threaded" turns threaded NAPI on or off for every NAPI of the device:
 * on, the kernel starts a thread napi/IF-ID for each (and reads 2 on
 * kernels after 6.18 when they busy-poll, a value written back as it
 * was). The other two are the fallback of the profile's per-NAPI values (settings/napi.c) on
 * kernels without napi-set (before 6.13); a write to either overwrites the
 * value of every NAPI of the device, which is why the profile uses them
 * only there. Written through kernel/netdev.h, which on a fixture root
 * also does what the kernel does (threads started and stopped). The
 * profile section is settings/napi.c's. */
#include "settings/napi_kind.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const files[] = { "threaded", "napi_defer_hard_irqs", "gro_flush_timeout", NULL };

/* TARGET split into IFNAME and FILE (one of FILES). */
static int dev_target(const char *target, char *ifname, const char **file)
{
	const char *slash = target ? strchr(target, '/') : NULL;
	if (!slash || (size_t)(slash - target) >= IF_NAMESIZE)
		return NT_EINVALID;
	memcpy(ifname, target, (size_t)(slash - target));
	ifname[slash - target] = '\0';
	for (int i = 0; files[i]; i++)
		if (!strcmp(slash + 1, files[i])) {
			*file = files[i];
			return nt_ifname_valid(ifname) ? 0 : NT_EINVALID;
		}
	return NT_EINVALID;
}

static int dev_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	char ifname[IF_NAMESIZE], text[32];
	const char *file;
	int r = dev_target(target, ifname, &file);
	memset(out, 0, sizeof(*out));
	if (r < 0)
		return r;
	r = nt_read_str(ctx, text, sizeof(text), "/sys/class/net/%s/%s", ifname, file);
	if (r < 0)
		return r;
	return nt_nk_parse_u64(text, out);
}

static int dev_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		     const nt_value *v, char *why, size_t whysize)
{
	char ifname[IF_NAMESIZE];
	const char *file;
	if (dev_target(target, ifname, &file) < 0) {
		snprintf(why, whysize, "'%s' is not IFACE/threaded, IFACE/napi_defer_hard_irqs or "
				       "IFACE/gro_flush_timeout", target);
		return NT_EINVALID;
	}
	if (!nt_exists(ctx, "/sys/class/net/%s/%s", ifname, file)) {
		snprintf(why, whysize, "%s has no /sys/class/net/%s/%s (Linux %s or later)", ifname, ifname, file,
			 strcmp(file, "threaded") ? "5.8" : "5.12");
		return NT_EINVALID;
	}
	if (!strcmp(file, "napi_defer_hard_irqs") && nt_nk_u64(v) > INT32_MAX) {
		snprintf(why, whysize, "%s: napi_defer_hard_irqs %llu is above %d", ifname,
			 (unsigned long long)nt_nk_u64(v), INT32_MAX);
		return NT_EINVALID;
	}
	return 0;
}

static int dev_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		     size_t errsize)
{
	char ifname[IF_NAMESIZE];
	const char *file;
	nt_value cur;
	int r = dev_target(target, ifname, &file);
	/* Read, compare, write only what differs: a write of "threaded"
	 * stops and starts every NAPI of the device even when it stays. */
	if (r == 0 && dev_read(ctx, eh, target, &cur) == 0 && nt_nk_equal_u64(&cur, v))
		return 0;
	if (r == 0)
		r = nt_netdev_dev_write(ctx, ifname, file, nt_nk_u64(v));
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "%s %s %llu: %s%s", ifname, file, (unsigned long long)nt_nk_u64(v),
			 nt_strerror(r),
			 r == -EOPNOTSUPP && !strcmp(file, "threaded") ? " (the device has no NAPI instance)" : "");
	return r;
}

const nt_setting_kind nt_setting_napi_device = {
	.name = "napi_device",
	/* A file of a link under this namespace's /sys/class/net. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the link is this namespace's",
	.parse = nt_nk_parse_u64,
	.format = nt_nk_format_u64,
	.equal = nt_nk_equal_u64,
	.read = dev_read,
	.check = dev_check,
	.apply = dev_apply,
	/* After channels (8) and rings (30), which may make a driver's
	 * NAPIs anew; before the per-NAPI values (settings/napi.c, 38) and
	 * the threads' CPUs (napi_thread.c, 39), which need the threads
	 * "threaded" starts; a rollback then stops the threads last. */
	.order = 37,
	/* No notification for a write to these files. */
	.events = 0,
};

/* The profile section "napi" is settings/napi.c's. */
const nt_setting_module nt_module_napi_device = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_napi_device, NULL },
};
