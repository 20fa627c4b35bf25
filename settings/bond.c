/* Bond transmit hash policy: target = bond name, value = policy word.
 * sysfs shows "layer2+3 2" (name and number); the first word is the value.
 * Seed 003 moved bond0 from layer2+3 to layer3+4 this way. */
#include "settings/setting.h"
#include "kernel/kernel.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The policies the bonding driver knows, indexed by the number sysfs prints
 * after the name (BOND_XMIT_POLICY_* in include/uapi/linux/if_bonding.h). */
static const char *const policies[] = {
	"layer2", "layer3+4", "layer2+3", "encap2+3", "encap3+4", "vlan+srcmac", NULL,
};

static int policy_num(const char *p)
{
	for (int i = 0; policies[i]; i++)
		if (strcmp(policies[i], p) == 0)
			return i;
	return -1;
}

bool nt_bond_policy_known(const char *name)
{
	return name && policy_num(name) >= 0;
}

static bool known_policy(const char *p)
{
	return nt_bond_policy_known(p);
}

static void first_word(const char *in, char *out, size_t size)
{
	size_t n = strcspn(in, " \t\n");
	if (n >= size)
		n = size - 1;
	memcpy(out, in, n);
	out[n] = '\0';
}

static int bond_read(const nt_ctx *ctx, const char *target, char *value, size_t size)
{
	char buf[NT_VALUE_MAX];
	if (!nt_ifname_valid(target))
		return NT_EINVALID;
	int r = nt_read_str(ctx, buf, sizeof(buf), "/sys/class/net/%s/bonding/xmit_hash_policy",
			    target);
	if (r < 0)
		return r;
	first_word(buf, value, size);
	return 0;
}

static bool bond_equal(const char *a, const char *b)
{
	char x[64], y[64];
	first_word(a, x, sizeof(x));
	first_word(b, y, sizeof(y));
	return strcmp(x, y) == 0;
}

static int bond_validate(const nt_ctx *ctx, const nt_topology *t, const char *target,
			 const char *value, char *why, size_t whysize)
{
	if (!nt_ifname_valid(target) ||
	    !nt_exists(ctx, "/sys/class/net/%s/bonding/xmit_hash_policy", target)) {
		snprintf(why, whysize, "'%s' is not a bond", target);
		return NT_EINVALID;
	}
	if (!known_policy(value)) {
		snprintf(why, whysize,
			 "unknown xmit_hash_policy '%s' (known: layer2, layer2+3, layer3+4, "
			 "encap2+3, encap3+4, vlan+srcmac)", value);
		return NT_EINVALID;
	}
	return 0;
}

static int bond_apply(const nt_ctx *ctx, const char *target, const char *value, char *err,
		      size_t errsize)
{
	int r;
	if (!nt_ifname_valid(target) || !known_policy(value))
		r = NT_EINVALID;
	else
		r = nt_kernel_bond_set(ctx, target, "xmit_hash_policy", value);
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "%s xmit_hash_policy: %s", target, nt_strerror(r));
	return r;
}

const nt_setting_kind nt_setting_bond = {
	.name = "bond",
	.read = bond_read,
	.validate = bond_validate,
	.apply = bond_apply,
	.equal = bond_equal,
};
