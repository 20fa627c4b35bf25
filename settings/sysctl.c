/* SPDX-License-Identifier: Apache-2.0 */
/* Network sysctls: target = key ("net.ipv4.tcp_rmem"), value = the string
 * to write. Only allowlisted keys are turned into a path (dots become
 * slashes under /proc/sys), so a profile can never reach an arbitrary file.
 *
 * Profile section:
 *   "sysctl": {"net.ipv4.tcp_rmem": "4096 87380 16777216"}
 * TCP buffers smaller than the path's bandwidth-delay product cap a single
 * flow's throughput (docs/field-reports.md#tcp-buffers-bdp). */
#include "kernel/kernel.h"
#include "settings/section.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>

/* Each key's scope, as kernel 6.18 shows it in a child namespace (and
 * net/core/sysctl_net_core.c, net/ipv4/sysctl_net_ipv4.c register it):
 * NS, every namespace has its own copy; HOST, the initial namespace's
 * value is the whole machine's, and a child namespace either lacks the
 * file (net_core_table, ipv4_table: budgets, busy polling, the RFS
 * socket table, the memory limits of every socket) or shows it read-only
 * (rmem_max and its kin, which the kernel reads for every namespace). */
#define NS NT_SCOPE_NETNS
#define HOST NT_SCOPE_MACHINE
#define B(k, s) { k, NT_SYSCTL_INT, 0, 1, s }
#define POS(k, s) { k, NT_SYSCTL_INT, 1, 2147483647L, s }
#define NONNEG(k, s) { k, NT_SYSCTL_INT, 0, 2147483647L, s }

const nt_sysctl_key nt_sysctl_allowlist[] = {
	POS("net.core.rmem_max", HOST),
	POS("net.core.wmem_max", HOST),
	POS("net.core.rmem_default", HOST),
	POS("net.core.wmem_default", HOST),
	POS("net.core.netdev_max_backlog", HOST),
	POS("net.core.netdev_budget", HOST),
	POS("net.core.netdev_budget_usecs", HOST),
	/* Per namespace since Linux 6.9; before, the initial namespace's
	 * only, and a child's plan then finds no file and says so. */
	POS("net.core.optmem_max", NS),
	POS("net.core.somaxconn", NS),
	{ "net.core.default_qdisc", NT_SYSCTL_WORD, 0, 0, HOST },
	/* 0 turns busy polling off, the kernel's default. */
	NONNEG("net.core.busy_poll", HOST),
	NONNEG("net.core.busy_read", HOST),
	NONNEG("net.core.rps_sock_flow_entries", HOST),
	/* Per namespace since Linux 4.15. */
	{ "net.ipv4.tcp_rmem", NT_SYSCTL_TRIPLE, 0, 0, NS },
	{ "net.ipv4.tcp_wmem", NT_SYSCTL_TRIPLE, 0, 0, NS },
	/* Pages for all TCP (UDP) sockets of the machine together. */
	{ "net.ipv4.tcp_mem", NT_SYSCTL_TRIPLE, 0, 0, HOST },
	{ "net.ipv4.udp_mem", NT_SYSCTL_TRIPLE, 0, 0, HOST },
	B("net.ipv4.tcp_window_scaling", NS),
	B("net.ipv4.tcp_timestamps", NS),
	B("net.ipv4.tcp_sack", NS),
	{ "net.ipv4.tcp_congestion_control", NT_SYSCTL_WORD, 0, 0, NS },
	/* 0 off, 1 after an ICMP black hole is detected, 2 always. */
	{ "net.ipv4.tcp_mtu_probing", NT_SYSCTL_INT, 0, 2, NS },
	B("net.ipv4.tcp_no_metrics_save", NS),
	B("net.ipv4.tcp_moderate_rcvbuf", NS),
	/* Ignored since Linux 4.14, and kept in the initial namespace only. */
	B("net.ipv4.tcp_low_latency", HOST),
	/* 0 off, 1 global, 2 loopback only (the kernel's default). */
	{ "net.ipv4.tcp_tw_reuse", NT_SYSCTL_INT, 0, 2, NS },
	POS("net.ipv4.tcp_max_syn_backlog", NS),
	{ "net.ipv4.ip_local_port_range", NT_SYSCTL_PORTS, 0, 0, NS },
	POS("net.ipv4.tcp_fin_timeout", NS),
	B("net.ipv4.tcp_slow_start_after_idle", NS),
	POS("net.ipv4.tcp_notsent_lowat", NS),
	{ NULL, 0, 0, 0, 0 },
};

#undef NS
#undef HOST

const nt_sysctl_key *nt_sysctl_allowed(const char *key)
{
	for (int i = 0; key && nt_sysctl_allowlist[i].key; i++)
		if (strcmp(nt_sysctl_allowlist[i].key, key) == 0)
			return &nt_sysctl_allowlist[i];
	return NULL;
}

/* Split VALUE into at most MAX integers. Returns the count or -1 when a
 * token is not a plain decimal integer. */
static int ints(const char *value, long long *out, int max)
{
	int n = 0;
	const char *p = value;
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		if (n == max)
			return -1;
		const char *start = p;
		if (*p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p))
			p++;
		if (*p && !isspace((unsigned char)*p))
			return -1;
		errno = 0;
		out[n++] = strtoll(start, NULL, 10);
		if (errno)
			return -1;
	}
	return n;
}

int nt_sysctl_check_shape(const char *key, const char *value, char *why, size_t whysize)
{
	const nt_sysctl_key *k = nt_sysctl_allowed(key);
	long long v[4];
	int n;

	if (!k) {
		snprintf(why, whysize, "'%s' is not in the allowlist of sysctls nettune may change",
			 key);
		return NT_EINVALID;
	}
	switch (k->shape) {
	case NT_SYSCTL_INT:
		n = ints(value, v, 1);
		if (n != 1 || v[0] < k->min || v[0] > k->max) {
			snprintf(why, whysize, "%s takes one integer from %ld to %ld, not '%s'", key,
				 k->min, k->max, value);
			return NT_EINVALID;
		}
		return 0;
	case NT_SYSCTL_TRIPLE:
		n = ints(value, v, 3);
		if (n != 3 || v[0] <= 0 || v[1] < v[0] || v[2] < v[1]) {
			snprintf(why, whysize,
				 "%s takes three ascending positive integers (min default max), "
				 "not '%s'", key, value);
			return NT_EINVALID;
		}
		return 0;
	case NT_SYSCTL_PORTS:
		n = ints(value, v, 2);
		if (n != 2 || v[0] < 1 || v[1] > 65535 || v[1] < v[0]) {
			snprintf(why, whysize, "%s takes two ascending ports from 1 to 65535, not '%s'",
				 key, value);
			return NT_EINVALID;
		}
		return 0;
	case NT_SYSCTL_WORD: {
		size_t len = strlen(value);
		bool ok = len > 0 && len < 64;
		for (size_t i = 0; ok && i < len; i++)
			ok = isalnum((unsigned char)value[i]) || value[i] == '_' || value[i] == '-';
		if (!ok) {
			snprintf(why, whysize, "%s takes one word, not '%s'", key, value);
			return NT_EINVALID;
		}
		return 0;
	}
	}
	return NT_EINVALID;
}

int nt_sysctl_normalize(const char *key, const char *value, char *out, size_t size)
{
	const nt_sysctl_key *k = nt_sysctl_allowed(key);
	long long v[4];
	size_t len = 0;

	if (!k)
		return NT_EINVALID;
	if (k->shape == NT_SYSCTL_WORD) {
		int n = snprintf(out, size, "%s", value);
		return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
	}
	int n = ints(value, v, 4);
	if (n < 1)
		return NT_EINVALID;
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		int m = snprintf(out + len, size - len, "%s%lld", i ? " " : "", v[i]);
		if (m < 0 || (size_t)m >= size - len)
			return -ENOSPC;
		len += (size_t)m;
	}
	return 0;
}

/* "/proc/sys/net/ipv4/tcp_rmem" for an allowlisted key, else NT_EINVALID. */
static int key_rel(const char *key, char *buf, size_t size)
{
	if (!nt_sysctl_allowed(key))
		return NT_EINVALID;
	int n = snprintf(buf, size, "/proc/sys/%s", key);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	for (char *p = buf + strlen("/proc/sys/"); *p; p++)
		if (*p == '.')
			*p = '/';
	return 0;
}

/* The value is the text as written or as the kernel shows it (tabs kept,
 * so a restored file reads as it did). */
static int sysctl_parse(const char *text, nt_value *out)
{
	memset(out, 0, sizeof(*out));
	if (!text || strlen(text) >= sizeof(out->text))
		return NT_EPARSE;
	snprintf(out->text, sizeof(out->text), "%s", text);
	return 0;
}

static int sysctl_format(const nt_value *v, char *out, size_t size)
{
	int n = snprintf(out, size, "%s", v->text);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

static int sysctl_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	char rel[128];
	int r = key_rel(target, rel, sizeof(rel));
	if (r < 0)
		return r;
	memset(out, 0, sizeof(*out));
	r = nt_read_str(ctx, out->text, sizeof(out->text), "%s", rel);
	return r < 0 ? r : 0;
}

/* VALUE with runs of whitespace as one space and the ends trimmed. */
static void squeeze(const char *in, char *out, size_t size)
{
	size_t n = 0;
	bool space = false;
	for (; *in && n + 2 < size; in++) {
		if (isspace((unsigned char)*in)) {
			space = n > 0;
			continue;
		}
		if (space)
			out[n++] = ' ';
		space = false;
		out[n++] = *in;
	}
	out[n] = '\0';
}

/* The kernel prints tabs between the numbers of tcp_rmem where a profile
 * writes spaces: values compare whitespace-insensitively. */
static bool sysctl_equal(const nt_value *a, const nt_value *b)
{
	char x[NT_VALUE_MAX], y[NT_VALUE_MAX];
	squeeze(a->text, x, sizeof(x));
	squeeze(b->text, y, sizeof(y));
	return strcmp(x, y) == 0;
}

/* Whether WORD is one of the space-separated words of LIST. */
static bool word_in(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || isspace((unsigned char)p[-1])) && (!p[n] || isspace((unsigned char)p[n])))
			return true;
	return false;
}

/* Whether this process runs in a network namespace other than the
 * initial one, as the agent learnt at its start (kernel/kernel.h,
 * nt_kernel_netns_other). A fixture root: as its tree says. */
static bool child_netns(const nt_ctx *ctx)
{
	return ctx->netns_other;
}

/* The kernel takes a default congestion control it has registered (or,
 * in the initial namespace, one whose module it can load), and in a child
 * namespace only one of tcp_allowed_congestion_control: anything else is
 * refused at the write, half-way through a transaction. Checked here so
 * the plan says so instead. */
static int check_congestion(const nt_ctx *ctx, const nt_topology *t, const char *target, const char *name,
			    char *why, size_t whysize)
{
	char avail[256], allowed[256];
	bool have_avail = nt_read_str(ctx, avail, sizeof(avail), "/proc/sys/net/ipv4/tcp_available_congestion_control") >= 0;
	bool have_allowed = nt_read_str(ctx, allowed, sizeof(allowed), "/proc/sys/net/ipv4/tcp_allowed_congestion_control") >= 0;
	if (!have_avail)
		return 0; /* nothing to judge by */
	if (child_netns(ctx)) {
		if (have_allowed && !word_in(allowed, name)) {
			snprintf(why, whysize, "%s: '%s' is not in net.ipv4.tcp_allowed_congestion_control (%s), "
				 "and a network namespace other than the initial one takes only those", target, name,
				 allowed);
			return NT_EINVALID;
		}
		if (!word_in(avail, name)) {
			snprintf(why, whysize, "%s: '%s' is not loaded (net.ipv4.tcp_available_congestion_control: "
				 "%s), and a network namespace other than the initial one cannot load it", target,
				 name, avail);
			return NT_EINVALID;
		}
		return 0;
	}
	if (word_in(avail, name))
		return 0;
	/* Not registered: the kernel loads tcp_NAME when the module is there. */
	static const char *const ext[] = { "ko", "ko.xz", "ko.zst", "ko.gz", NULL };
	for (int i = 0; t && t->kernel[0] && ext[i]; i++)
		if (nt_exists(ctx, "/lib/modules/%s/kernel/net/ipv4/tcp_%s.%s", t->kernel, name, ext[i]))
			return 0;
	snprintf(why, whysize, "%s: '%s' is not an available congestion control "
		 "(net.ipv4.tcp_available_congestion_control: %s) and no module tcp_%s is installed for "
		 "kernel %s", target, name, avail, name, t && t->kernel[0] ? t->kernel : "(unknown)");
	return NT_EINVALID;
}

static int sysctl_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
			const nt_value *v, char *why, size_t whysize)
{
	int r = nt_sysctl_check_shape(target, v->text, why, whysize);
	if (r < 0)
		return r;
	char rel[128], abs[PATH_MAX];
	struct stat st;
	if ((r = key_rel(target, rel, sizeof(rel))) < 0 || !nt_exists(ctx, "%s", rel)) {
		snprintf(why, whysize, "%s does not exist on this host%s", target,
			 child_netns(ctx) ? " (not in this network namespace: some sysctls exist only in the "
					    "initial one)" : "");
		return NT_EINVALID;
	}
	/* A child network namespace shows some host-wide sysctls read-only
	 * (net.core.rmem_max is 0444 there): the write would be refused even
	 * to root, since /proc/sys judges by the mode alone. */
	if (nt_path(ctx, abs, sizeof(abs), "%s", rel) == 0 && stat(abs, &st) == 0 && !(st.st_mode & 0222)) {
		snprintf(why, whysize, "%s is read-only here (mode %04o%s)", target, (unsigned)(st.st_mode & 07777),
			 child_netns(ctx) ? ": in a network namespace other than the initial one the kernel "
					    "keeps it host-wide" : "");
		return NT_EINVALID;
	}
	if (!strcmp(target, "net.ipv4.tcp_congestion_control"))
		return check_congestion(ctx, t, target, v->text, why, whysize);
	return 0;
}

static int sysctl_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target,
			const nt_value *v, char *err, size_t errsize)
{
	char rel[128];
	int r = key_rel(target, rel, sizeof(rel));
	if (r == 0)
		r = nt_kernel_write_attr(ctx, v->text, "%s", rel);
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "%s: %s", target, nt_strerror(r));
	return r;
}

/* Each key's scope is the allowlist's; an unknown key is none of ours
 * and taken as machine-wide, as undeclared scopes are. */
static nt_reach sysctl_scope(const char *target, const char **why)
{
	const nt_sysctl_key *k = nt_sysctl_allowed(target);
	if (!k)
		return NT_SCOPE_UNDECLARED;
	*why = k->scope == NT_SCOPE_NETNS ? "each network namespace has its own copy of this sysctl" :
		"the kernel keeps this sysctl once for the whole machine (in the initial network namespace)";
	return k->scope;
}

const nt_setting_kind nt_setting_sysctl = {
	.name = "sysctl",
	.target_scope = sysctl_scope,
	.parse = sysctl_parse,
	.format = sysctl_format,
	.equal = sysctl_equal,
	.read = sysctl_read,
	.check = sysctl_check,
	.apply = sysctl_apply,
	.order = 50,
	/* The kernel sends no event for a sysctl write. */
	.events = 0,
};

/* ---- "sysctl": {"key": "value"} ---- */

static void validate_sysctl(nt_section_check *c, const json_t *obj)
{
	const char *key;
	json_t *val;
	char path[NT_JSONPATH_MAX], why[256];

	json_object_foreach((json_t *)obj, key, val) {
		snprintf(path, sizeof(path), "$.sysctl['%s']", key);
		if (json_is_integer(val)) {
			/* The usual slip: "net.core.rmem_max": 16777216. */
			nt_sc_error(c, path, "the value must be a string: quote it, \"%lld\"",
				    (long long)json_integer_value(val));
			continue;
		}
		if (!json_is_string(val)) {
			nt_sc_error(c, path, "the value must be a string");
			continue;
		}
		if (nt_sysctl_check_shape(key, json_string_value(val), why, sizeof(why)) < 0)
			nt_sc_error(c, path, "%s", why);
	}
}

static int desire_sysctl(nt_section_plan *p, const json_t *obj)
{
	const char *key;
	json_t *val;
	char path[NT_JSONPATH_MAX];
	json_object_foreach((json_t *)obj, key, val) {
		nt_value v;
		char norm[NT_VALUE_MAX];
		/* Written as the kernel would show it back ("00016" as "16",
		 * a trailing newline or tabs as single spaces), so the value
		 * written is the value the next plan compares with. */
		if (nt_sysctl_normalize(key, json_string_value(val), norm, sizeof(norm)) < 0 ||
		    sysctl_parse(norm, &v) < 0)
			continue;
		snprintf(path, sizeof(path), "$.sysctl['%s']", key);
		int r = nt_desire_put(p, &nt_setting_sysctl, key, "", &v, path);
		if (r < 0)
			return r;
	}
	return 0;
}

static const nt_profile_section section_sysctl = {
	.key = "sysctl",
	.type = JSON_OBJECT,
	.validate = validate_sysctl,
	.desire = desire_sysctl,
};

const nt_setting_module nt_module_sysctl = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_sysctl, NULL },
	.sections = (const nt_profile_section *const[]){ &section_sysctl, NULL },
};
