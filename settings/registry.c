/* SPDX-License-Identifier: Apache-2.0 */
/* The modules of settings/: a new kind of setting is one new file in this
 * folder and one line in NT_SETTING_MODULES below. */
#include "settings/setting.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* One line per file of settings/, in the order profiles' sections are
 * checked and planned (the plan is then ordered by each kind's order). */
#define NT_SETTING_MODULES(X) \
	X(mtu)                \
	X(irq_affinity)       \
	X(irqbalance)         \
	X(features)           \
	X(rings)              \
	X(ring_params)        \
	X(channels)           \
	X(coalesce)           \
	X(coalesce_profile)   \
	X(pause)              \
	X(bond)               \
	X(sysctl)             \
	X(rps)                \
	X(rfs)                \
	X(xps)                \
	X(rss)                \
	X(rss_xfrm)           \
	X(txqueuelen)         \
	X(qdisc)              \
	X(flows)              \
	X(napi_device)        \
	X(napi)               \
	X(napi_thread)

#define DECLARE(m) extern const nt_setting_module nt_module_##m;
NT_SETTING_MODULES(DECLARE)
#define ENTRY(m) &nt_module_##m,
const nt_setting_module *const nt_setting_modules[] = { NT_SETTING_MODULES(ENTRY) NULL };

/* Every module's per-NIC report, as the host model's one reporter. */
static int report_modules(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *out)
{
	int r = 0;
	for (int m = 0; nt_setting_modules[m]; m++) {
		int e = nt_setting_modules[m]->report_nic ? nt_setting_modules[m]->report_nic(ctx, eh, nic, out) : 0;
		if (e < 0 && r == 0)
			r = e;
	}
	return r;
}

const nt_nic_report_fn nt_nic_reporters[] = { report_modules, NULL };

int nt_setting_report_detail(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *out)
{
	int r = 0;
	for (int m = 0; nt_setting_modules[m]; m++) {
		nt_setting_report_fn fn = nt_setting_modules[m]->report_nic_detail;
		int e = fn ? fn(ctx, eh, nic, out) : 0;
		if (e < 0 && r == 0)
			r = e;
	}
	return r;
}

int nt_setting_report_detail_of(const char *kind, const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *out)
{
	for (int m = 0; kind && nt_setting_modules[m]; m++)
		for (int i = 0; nt_setting_modules[m]->kinds && nt_setting_modules[m]->kinds[i]; i++)
			if (strcmp(nt_setting_modules[m]->kinds[i]->name, kind) == 0)
				return nt_setting_modules[m]->report_nic_detail ?
					       nt_setting_modules[m]->report_nic_detail(ctx, eh, nic, out) :
					       -ENOENT;
	return -ENOENT;
}

const nt_setting_kind *nt_setting_find(const char *name)
{
	for (int m = 0; name && nt_setting_modules[m]; m++)
		for (int i = 0; nt_setting_modules[m]->kinds && nt_setting_modules[m]->kinds[i]; i++)
			if (strcmp(nt_setting_modules[m]->kinds[i]->name, name) == 0)
				return nt_setting_modules[m]->kinds[i];
	return NULL;
}

bool nt_setting_changed_by_event(const char *name, nt_event_kind ev)
{
	const nt_setting_kind *k = nt_setting_find(name);
	return k && (k->events & NT_SETTING_EVENT(ev));
}

nt_reach nt_setting_scope(const nt_setting_kind *k, const char *target, const char **why)
{
	const char *w = NULL;
	nt_reach s = NT_SCOPE_UNDECLARED;
	if (k && k->target_scope)
		s = k->target_scope(target ? target : "", &w);
	else if (k) {
		s = k->scope;
		w = k->scope_why;
	}
	if (s == NT_SCOPE_UNDECLARED) {
		s = NT_SCOPE_MACHINE;
		w = "its kind does not declare that it stays inside a network namespace";
	}
	if (why)
		*why = w ? w : s == NT_SCOPE_MACHINE ? "it is one for the whole machine" :
			   "it belongs to this network namespace";
	return s;
}

const char *nt_reach_name(nt_reach s)
{
	return s == NT_SCOPE_NETNS ? "netns" : "machine";
}

const nt_profile_section *nt_section_find(const char *key)
{
	for (int m = 0; key && nt_setting_modules[m]; m++) {
		const nt_profile_section *const *s = nt_setting_modules[m]->sections;
		for (int i = 0; s && s[i]; i++)
			if (strcmp(s[i]->key, key) == 0)
				return s[i];
	}
	return NULL;
}

bool nt_setting_equal(const nt_setting_kind *k, const nt_value *a, const nt_value *b)
{
	if (!a || !b)
		return a == b;
	return k->equal(a, b);
}

int nt_setting_apply_read(const nt_ctx *ctx, nt_ethtool *eh, const nt_setting_kind *k,
			  const char *target, const nt_value *want, nt_value *got, int *read_err,
			  char *err, size_t errsize)
{
	memset(got, 0, sizeof(*got));
	*read_err = -EIO;
	if (k->apply_read)
		return k->apply_read(ctx, eh, target, want, got, read_err, err, errsize);
	int r = k->apply(ctx, eh, target, want, err, errsize);
	if (r == 0)
		*read_err = k->read(ctx, eh, target, got);
	return r;
}

const char *nt_value_str(const nt_setting_kind *k, const nt_value *v, char *buf, size_t size)
{
	if (!k || k->format(v, buf, size) < 0)
		snprintf(buf, size, "?");
	return buf;
}
