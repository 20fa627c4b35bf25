#include "engine/profile.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool nt_profile_name_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (n == 0 || n > NT_PROFILE_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

void nt_profile_error(json_t *errors, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_array_append_new(errors, json_pack("{s:s,s:s}", "path", path, "message", msg));
}

/* ---- host lookups, kept local so the planner needs only the arrays ---- */

static bool is_glob(const char *p)
{
	return strpbrk(p, "*?[") != NULL;
}

static bool pattern_valid(const char *p)
{
	size_t n = strlen(p);
	return n > 0 && n <= 64 && !strchr(p, '/') && (is_glob(p) || nt_ifname_valid(p));
}

static const nt_numa_node *node_by_id(const nt_topology *t, int id)
{
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].id == id)
			return &t->nodes[i];
	return NULL;
}

static int count_nics(const nt_topology *t, const char *pattern)
{
	int n = 0;
	for (int i = 0; i < t->nnics; i++)
		if (fnmatch(pattern, t->nics[i].name, 0) == 0)
			n++;
	return n;
}

static int count_bonds(const nt_topology *t, const char *pattern)
{
	int n = 0;
	for (int i = 0; i < t->nbonds; i++)
		if (fnmatch(pattern, t->bonds[i].name, 0) == 0)
			n++;
	return n;
}

/* ---- validation ---- */

typedef struct vstate {
	const nt_topology *t;
	json_t *errors;
} vstate;

static void unknown_fields(vstate *v, const json_t *obj, const char *base, const char *const *known)
{
	const char *key;
	json_t *val;
	char path[NT_JSONPATH_MAX];
	json_object_foreach((json_t *)obj, key, val) {
		bool ok = false;
		for (int i = 0; known[i] && !ok; i++)
			ok = strcmp(known[i], key) == 0;
		if (!ok) {
			snprintf(path, sizeof(path), "%s.%s", base, key);
			nt_profile_error(v->errors, path, "unknown field '%s'", key);
		}
	}
}

/* The string at OBJ.FIELD; NULL (with an error when REQUIRED or mistyped). */
static const char *str_field(vstate *v, const json_t *obj, const char *base, const char *field,
			     bool required)
{
	char path[NT_JSONPATH_MAX];
	json_t *x = json_object_get(obj, field);
	snprintf(path, sizeof(path), "%s.%s", base, field);
	if (!x) {
		if (required)
			nt_profile_error(v->errors, path, "'%s' is required", field);
		return NULL;
	}
	if (!json_is_string(x)) {
		nt_profile_error(v->errors, path, "'%s' must be a string", field);
		return NULL;
	}
	return json_string_value(x);
}

/* An interface pattern that must match something. Returns the match count
 * (0 after an error). */
static int check_iface(vstate *v, const char *pattern, const char *path, bool bond)
{
	if (!pattern_valid(pattern)) {
		nt_profile_error(v->errors, path, "'%s' is not an interface name or glob", pattern);
		return 0;
	}
	if (!v->t)
		return 1;
	int n = bond ? count_bonds(v->t, pattern) : count_nics(v->t, pattern);
	if (n == 0)
		nt_profile_error(v->errors, path, is_glob(pattern) ? "no %s matches '%s'" :
				 "no such %s '%s'", bond ? "bond" : "interface", pattern);
	return n;
}

static void check_cpulist(vstate *v, const char *list, const char *path, bool must_exist)
{
	nt_cpuset s;
	int r = nt_cpulist_parse(list, &s);
	if (r < 0) {
		nt_profile_error(v->errors, path, "'%s' is not a cpulist%s", list,
				 r == -ERANGE ? " (CPU number too large)" : "");
		return;
	}
	if (!must_exist)
		return;
	if (nt_cpuset_empty(&s)) {
		nt_profile_error(v->errors, path, "the cpulist is empty");
		return;
	}
	if (!v->t)
		return;
	bool have_present = !nt_cpuset_empty(&v->t->cpus_present);
	nt_cpuset off, missing;
	char cl[256];
	nt_cpuset_andnot(&off, &s, &v->t->cpus_online);
	nt_cpuset_zero(&missing);
	if (have_present) {
		nt_cpuset_andnot(&missing, &off, &v->t->cpus_present);
		nt_cpuset_and(&off, &off, &v->t->cpus_present);
	} else {
		missing = off;
		nt_cpuset_zero(&off);
	}
	/* One message per kind of problem, naming the CPUs as a cpulist. */
	if (!nt_cpuset_empty(&missing) && nt_cpulist_format(&missing, cl, sizeof(cl)) >= 0)
		nt_profile_error(v->errors, path, "CPU %s do%s not exist", cl,
				 nt_cpuset_count(&missing) == 1 ? "es" : "");
	if (!nt_cpuset_empty(&off) && nt_cpulist_format(&off, cl, sizeof(cl)) >= 0)
		nt_profile_error(v->errors, path, "CPU %s %s offline", cl,
				 nt_cpuset_count(&off) == 1 ? "is" : "are");
}

/* The CPUs a NIC's IRQs may use by locality: its node's online CPUs, or its
 * device's local_cpus when the node is not known. False when neither is
 * known (numa_node -1, no local_cpulist): nettune does not guess. */
static bool nic_local_cpus(const nt_topology *t, const nt_nic *nic, nt_cpuset *out)
{
	const nt_numa_node *node = nic->numa_node >= 0 ? node_by_id(t, nic->numa_node) : NULL;
	if (node) {
		*out = node->cpus;
		return true;
	}
	if (nic->has_local_cpus) {
		nt_cpuset_and(out, &nic->local_cpus, &t->cpus_online);
		return true;
	}
	nt_cpuset_zero(out);
	return false;
}

/* reserve_app_cpus: a count, with a policy, that leaves every matching
 * NIC at least one CPU for its IRQs. */
static void check_reserve(vstate *v, const json_t *e, const char *base, const char *iface,
			  const char *excl)
{
	char path[NT_JSONPATH_MAX];
	json_t *x = json_object_get(e, "reserve_app_cpus");
	if (!x)
		return;
	snprintf(path, sizeof(path), "%s.reserve_app_cpus", base);
	if (!json_is_integer(x) || json_integer_value(x) < 0 ||
	    json_integer_value(x) > NT_MAX_CPUS) {
		nt_profile_error(v->errors, path, "'reserve_app_cpus' must be an integer from 0 to %d",
				 NT_MAX_CPUS);
		return;
	}
	if (json_object_get(e, "cpus")) {
		nt_profile_error(v->errors, path,
				 "'reserve_app_cpus' goes with a 'policy'; with 'cpus' the IRQ CPUs "
				 "are named, so leave the application's out of them");
		return;
	}
	int n = (int)json_integer_value(x);
	if (!v->t || !iface || !pattern_valid(iface) || n == 0)
		return;
	nt_cpuset exclude, cand;
	nt_cpuset_zero(&exclude);
	if (excl && nt_cpulist_parse(excl, &exclude) < 0)
		return;
	for (int k = 0; k < v->t->nnics; k++) {
		const nt_nic *nic = &v->t->nics[k];
		if (fnmatch(iface, nic->name, 0) != 0 || !nic_local_cpus(v->t, nic, &cand))
			continue;
		nt_cpuset_andnot(&cand, &cand, &exclude);
		int m = nt_cpuset_count(&cand);
		if (n >= m)
			nt_profile_error(v->errors, path,
					 "%s has %d usable CPU(s) on its node; reserving %d leaves none "
					 "for its IRQs", nic->name, m, n);
	}
}

static void validate_irq(vstate *v, const json_t *arr)
{
	static const char *const known[] = { "interface", "cpus", "policy", "exclude_cpus",
					     "reserve_app_cpus", NULL };
	size_t i;
	json_t *e;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];

	json_array_foreach(arr, i, e) {
		snprintf(base, sizeof(base), "$.irq_affinity[%zu]", i);
		if (!json_is_object(e)) {
			nt_profile_error(v->errors, base, "must be an object");
			continue;
		}
		unknown_fields(v, e, base, known);
		const char *iface = str_field(v, e, base, "interface", true);
		const char *cpus = str_field(v, e, base, "cpus", false);
		const char *policy = str_field(v, e, base, "policy", false);
		const char *excl = str_field(v, e, base, "exclude_cpus", false);
		if (iface) {
			snprintf(path, sizeof(path), "%s.interface", base);
			check_iface(v, iface, path, false);
		}
		bool has_cpus = json_object_get(e, "cpus") != NULL;
		bool has_policy = json_object_get(e, "policy") != NULL;
		if (has_cpus == has_policy)
			nt_profile_error(v->errors, base, "give exactly one of 'cpus' and 'policy'");
		if (cpus) {
			snprintf(path, sizeof(path), "%s.cpus", base);
			check_cpulist(v, cpus, path, true);
		}
		if (policy && !nt_irq_policy_find(policy)) {
			snprintf(path, sizeof(path), "%s.policy", base);
			nt_profile_error(v->errors, path, "unknown policy '%s' (known: local, local-node)",
					 policy);
		}
		if (excl) {
			snprintf(path, sizeof(path), "%s.exclude_cpus", base);
			check_cpulist(v, excl, path, false);
		}
		check_reserve(v, e, base, iface, excl);
	}
}

/* rx/tx: a positive integer or "max". */
static void check_ring_value(vstate *v, const json_t *e, const char *base, const char *field,
			     const char *pattern)
{
	char path[NT_JSONPATH_MAX];
	json_t *x = json_object_get(e, field);
	snprintf(path, sizeof(path), "%s.%s", base, field);
	if (!x)
		return;
	if (json_is_string(x)) {
		if (strcmp(json_string_value(x), "max") != 0)
			nt_profile_error(v->errors, path, "'%s' must be an integer or \"max\"", field);
		return;
	}
	if (!json_is_integer(x)) {
		nt_profile_error(v->errors, path, "'%s' must be an integer or \"max\"", field);
		return;
	}
	json_int_t n = json_integer_value(x);
	if (n <= 0 || n > UINT32_MAX) {
		nt_profile_error(v->errors, path, "%s %lld is not a positive ring size", field,
				 (long long)n);
		return;
	}
	if (!v->t || !pattern_valid(pattern))
		return;
	for (int k = 0; k < v->t->nnics; k++) {
		const nt_nic *nic = &v->t->nics[k];
		if (fnmatch(pattern, nic->name, 0) != 0 || !nic->has_rings)
			continue;
		uint32_t max = strcmp(field, "rx") == 0 ? nic->rings.rx_max : nic->rings.tx_max;
		if (n > max)
			nt_profile_error(v->errors, path, "%s %lld is above %s's maximum %u", field,
					 (long long)n, nic->name, max);
	}
}

/* An interface (or glob) for rings[] or channels[]: a name must have the
 * settings; a glob may also match NICs without (lo, bridges), which the
 * plan leaves out, but must match one that has them. */
static void check_ethtool_iface(vstate *v, const char *iface, const char *path, bool channels)
{
	if (check_iface(v, iface, path, false) <= 0 || !v->t)
		return;
	int with = 0;
	for (int k = 0; k < v->t->nnics; k++) {
		const nt_nic *n = &v->t->nics[k];
		if (fnmatch(iface, n->name, 0) == 0 && (channels ? n->has_channels : n->has_rings))
			with++;
	}
	if (with == 0)
		nt_profile_error(v->errors, path, "'%s' has no %s settings", iface, channels ? "channel" : "ring");
}

static void validate_rings(vstate *v, const json_t *arr)
{
	static const char *const known[] = { "interface", "rx", "tx", NULL };
	size_t i;
	json_t *e;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];

	json_array_foreach(arr, i, e) {
		snprintf(base, sizeof(base), "$.rings[%zu]", i);
		if (!json_is_object(e)) {
			nt_profile_error(v->errors, base, "must be an object");
			continue;
		}
		unknown_fields(v, e, base, known);
		const char *iface = str_field(v, e, base, "interface", true);
		if (!json_object_get(e, "rx") && !json_object_get(e, "tx"))
			nt_profile_error(v->errors, base, "give 'rx', 'tx' or both");
		if (!iface)
			continue;
		snprintf(path, sizeof(path), "%s.interface", base);
		check_ethtool_iface(v, iface, path, false);
		check_ring_value(v, e, base, "rx", iface);
		check_ring_value(v, e, base, "tx", iface);
	}
}

/* Bond options the kernel changes only on a bond that is down and has no
 * slaves: changing them would mean taking the bond apart, which a tuning
 * transaction does not do. */
static const char *const bond_down_only[] = { "mode", "fail_over_mac", "tlb_dynamic_lb", NULL };

static void validate_bonds(vstate *v, const json_t *arr)
{
	static const char *const known[] = { "interface", "xmit_hash_policy", NULL };
	size_t i;
	json_t *e;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];

	json_array_foreach(arr, i, e) {
		snprintf(base, sizeof(base), "$.bonds[%zu]", i);
		if (!json_is_object(e)) {
			nt_profile_error(v->errors, base, "must be an object");
			continue;
		}
		for (int k = 0; bond_down_only[k]; k++) {
			if (!json_object_get(e, bond_down_only[k]))
				continue;
			snprintf(path, sizeof(path), "%s.%s", base, bond_down_only[k]);
			nt_profile_error(v->errors, path,
					 "the kernel changes a bond's %s only while the bond is down and "
					 "has no slaves; nettune does not take bonds apart",
					 bond_down_only[k]);
		}
		json_t *rest = json_copy((json_t *)e);
		for (int k = 0; rest && bond_down_only[k]; k++)
			json_object_del(rest, bond_down_only[k]);
		unknown_fields(v, rest ? rest : e, base, known);
		json_decref(rest);
		const char *iface = str_field(v, e, base, "interface", true);
		const char *pol = str_field(v, e, base, "xmit_hash_policy", true);
		if (iface) {
			snprintf(path, sizeof(path), "%s.interface", base);
			check_iface(v, iface, path, true);
		}
		if (pol && !nt_bond_policy_known(pol)) {
			snprintf(path, sizeof(path), "%s.xmit_hash_policy", base);
			nt_profile_error(v->errors, path,
					 "unknown xmit_hash_policy '%s' (known: layer2, layer2+3, "
					 "layer3+4, encap2+3, encap3+4, vlan+srcmac)", pol);
		}
	}
}

/* channels[]: rx, tx, other, combined as a count >= 0 or "max". */
static void validate_channels(vstate *v, const json_t *arr)
{
	static const char *const known[] = { "interface", "rx", "tx", "other", "combined", NULL };
	size_t i;
	json_t *e;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];

	json_array_foreach(arr, i, e) {
		snprintf(base, sizeof(base), "$.channels[%zu]", i);
		if (!json_is_object(e)) {
			nt_profile_error(v->errors, base, "must be an object");
			continue;
		}
		unknown_fields(v, e, base, known);
		const char *iface = str_field(v, e, base, "interface", true);
		bool any = false;
		for (int k = 1; known[k]; k++) {
			json_t *x = json_object_get(e, known[k]);
			if (!x)
				continue;
			any = true;
			snprintf(path, sizeof(path), "%s.%s", base, known[k]);
			if (json_is_string(x) ? strcmp(json_string_value(x), "max") != 0
					      : !json_is_integer(x) || json_integer_value(x) < 0 ||
							json_integer_value(x) > 65535) {
				nt_profile_error(v->errors, path, "'%s' must be a count from 0 to 65535 or \"max\"",
						 known[k]);
				continue;
			}
			if (!json_is_integer(x) || !v->t || !iface || !pattern_valid(iface))
				continue;
			for (int n = 0; n < v->t->nnics; n++) {
				const nt_nic *nic = &v->t->nics[n];
				if (fnmatch(iface, nic->name, 0) != 0 || !nic->has_channels)
					continue;
				const nt_channels *c = &nic->channels;
				uint32_t max = k == 1 ? c->rx_max : k == 2 ? c->tx_max : k == 3 ? c->other_max : c->combined_max;
				if (json_integer_value(x) > max)
					nt_profile_error(v->errors, path, "%s %lld is above %s's maximum %u", known[k],
							 (long long)json_integer_value(x), nic->name, max);
			}
		}
		if (!any)
			nt_profile_error(v->errors, base, "give at least one of rx, tx, other, combined");
		if (!iface)
			continue;
		snprintf(path, sizeof(path), "%s.interface", base);
		check_ethtool_iface(v, iface, path, true);
	}
}

static void validate_sysctl(vstate *v, const json_t *obj)
{
	const char *key;
	json_t *val;
	char path[NT_JSONPATH_MAX], why[256];

	json_object_foreach((json_t *)obj, key, val) {
		snprintf(path, sizeof(path), "$.sysctl['%s']", key);
		if (!json_is_string(val)) {
			nt_profile_error(v->errors, path, "the value must be a string");
			continue;
		}
		if (nt_sysctl_check_shape(key, json_string_value(val), why, sizeof(why)) < 0)
			nt_profile_error(v->errors, path, "%s", why);
	}
}

static void validate_other(vstate *v, const json_t *obj)
{
	static const char *const known[] = { "cpus", NULL };
	unknown_fields(v, obj, "$.other_irqs", known);
	const char *cpus = str_field(v, obj, "$.other_irqs", "cpus", true);
	if (cpus)
		check_cpulist(v, cpus, "$.other_irqs.cpus", true);
}

/* Whether PROFILE asks to set any IRQ's affinity. */
static bool sets_affinity(const json_t *profile)
{
	return json_array_size(json_object_get(profile, "irq_affinity")) > 0 ||
	       json_object_get(profile, "other_irqs") != NULL;
}

static const char *const irqbalance_modes[] = { "ban", "stop", "require-absent", "ignore", NULL };

static void validate_irqbalance(vstate *v, const json_t *profile)
{
	const char *mode = str_field(v, profile, "$", "irqbalance", false);
	if (!mode)
		return;
	bool known = false;
	for (int i = 0; irqbalance_modes[i] && !known; i++)
		known = strcmp(irqbalance_modes[i], mode) == 0;
	if (!known) {
		nt_profile_error(v->errors, "$.irqbalance",
				 "unknown irqbalance handling '%s' (known: ban, stop, require-absent, "
				 "ignore)", mode);
		return;
	}
	/* The operator asked for a host where nothing rewrites affinity. */
	if (strcmp(mode, "require-absent") == 0 && v->t && v->t->irqbalance.running &&
	    sets_affinity(profile))
		nt_profile_error(v->errors, "$.irqbalance",
				 "irqbalance (pid %d) is running and this profile sets IRQ affinity; "
				 "stop it, or use \"ban\" or \"stop\"", v->t->irqbalance.pid);
}

int nt_profile_validate(const nt_topology *t, const json_t *profile, json_t *errors)
{
	static const char *const known[] = { "name", "description", "irq_affinity", "other_irqs",
					     "irqbalance", "rings", "channels", "bonds", "sysctl", NULL };
	vstate v = { .t = t, .errors = errors };
	size_t before = json_array_size(errors);
	json_t *x;

	if (!json_is_object(profile)) {
		nt_profile_error(errors, "$", "a profile must be a JSON object");
		return NT_EINVALID;
	}
	unknown_fields(&v, profile, "$", known);
	const char *name = str_field(&v, profile, "$", "name", true);
	if (name && !nt_profile_name_valid(name))
		nt_profile_error(errors, "$.name", "'%s' is not a valid name ([A-Za-z0-9._-], 1 to 64)",
				 name);
	str_field(&v, profile, "$", "description", false);

	if ((x = json_object_get(profile, "irq_affinity"))) {
		if (json_is_array(x))
			validate_irq(&v, x);
		else
			nt_profile_error(errors, "$.irq_affinity", "must be an array");
	}
	if ((x = json_object_get(profile, "other_irqs"))) {
		if (json_is_object(x))
			validate_other(&v, x);
		else
			nt_profile_error(errors, "$.other_irqs", "must be an object");
	}
	validate_irqbalance(&v, profile);
	if ((x = json_object_get(profile, "rings"))) {
		if (json_is_array(x))
			validate_rings(&v, x);
		else
			nt_profile_error(errors, "$.rings", "must be an array");
	}
	if ((x = json_object_get(profile, "channels"))) {
		if (json_is_array(x))
			validate_channels(&v, x);
		else
			nt_profile_error(errors, "$.channels", "must be an array");
	}
	if ((x = json_object_get(profile, "bonds"))) {
		if (json_is_array(x))
			validate_bonds(&v, x);
		else
			nt_profile_error(errors, "$.bonds", "must be an array");
	}
	if ((x = json_object_get(profile, "sysctl"))) {
		if (json_is_object(x))
			validate_sysctl(&v, x);
		else
			nt_profile_error(errors, "$.sysctl", "must be an object");
	}
	return json_array_size(errors) > before ? NT_EINVALID : 0;
}

/* ---- IRQ placement ---- */

int nt_deal_cpus(const nt_cpuset *set, int start, int n, int *out)
{
	int m = nt_cpuset_count(set);
	if (m == 0)
		return -ENOENT;
	int *cpus = malloc(sizeof(int) * (size_t)m);
	if (!cpus)
		return -ENOMEM;
	int k = 0;
	for (int c = nt_cpuset_next(set, 0); c >= 0; c = nt_cpuset_next(set, c + 1))
		cpus[k++] = c;
	for (int i = 0; i < n; i++)
		out[i] = cpus[((start % m) + i) % m];
	free(cpus);
	return 0;
}

/* Two CPUs are threads of one core when package and core id agree; a CPU
 * the topology could not place is a core of its own. */
static bool same_core(const nt_topology *t, int a, int b)
{
	if (a == b)
		return true;
	if (!t->cpu_core || !t->cpu_package || a >= t->ncpus_possible || b >= t->ncpus_possible)
		return false;
	if (t->cpu_core[a] < 0 || t->cpu_package[a] < 0)
		return false;
	return t->cpu_core[a] == t->cpu_core[b] && t->cpu_package[a] == t->cpu_package[b];
}

int nt_cpus_siblings_last(const nt_topology *t, const nt_cpuset *set, int *out)
{
	int n = 0, first = 0;
	/* Pass 1: the lowest CPU of each core; pass 2: the others. A core is
	 * at most a handful of threads and a node a few hundred CPUs, so the
	 * quadratic look-back stays small. */
	for (int c = nt_cpuset_next(set, 0); c >= 0; c = nt_cpuset_next(set, c + 1)) {
		bool seen = false;
		for (int i = 0; i < n && !seen; i++)
			seen = same_core(t, out[i], c);
		if (!seen)
			out[n++] = c;
	}
	first = n;
	for (int c = nt_cpuset_next(set, 0); c >= 0; c = nt_cpuset_next(set, c + 1)) {
		bool taken = false;
		for (int i = 0; i < first && !taken; i++)
			taken = out[i] == c;
		if (!taken)
			out[n++] = c;
	}
	return n;
}

int nt_reserve_app_cpus(const nt_topology *t, const int *order, int m, int n, nt_cpuset *reserved)
{
	nt_cpuset_zero(reserved);
	if (n <= 0)
		return 0;
	if (n >= m)
		return -ENOSPC;
	/* ORDER lists each core's first thread before any second one; walk the
	 * first threads from the highest and take each core whole, so the
	 * application's CPUs and the IRQs' CPUs share no core while N allows. */
	int got = 0;
	for (int i = m - 1; i >= 0 && got < n; i--) {
		bool first = true;
		for (int j = 0; j < i && first; j++)
			first = !same_core(t, order[j], order[i]);
		if (!first)
			continue;
		for (int j = m - 1; j >= 0 && got < n; j--) {
			if (same_core(t, order[j], order[i]) && !nt_cpuset_isset(reserved, order[j])) {
				nt_cpuset_set(reserved, order[j]);
				got++;
			}
		}
	}
	return 0;
}

/* NICs spread over the same CPUs share a group: its count of IRQs dealt so
 * far, and the CPUs already used as some NIC's first CPU. */
typedef struct policy_group {
	nt_cpuset cpus;
	int dealt;
	nt_cpuset firsts;
} policy_group;

struct nt_policy_state {
	policy_group *groups;
	int ngroups;
};

static policy_group *group_for(nt_policy_state *st, const int *cpus, int m)
{
	nt_cpuset set;
	nt_cpuset_zero(&set);
	for (int i = 0; i < m; i++)
		nt_cpuset_set(&set, cpus[i]);
	for (int i = 0; i < st->ngroups; i++)
		if (nt_cpuset_equal(&st->groups[i].cpus, &set))
			return &st->groups[i];
	policy_group *g = realloc(st->groups, sizeof(*g) * (size_t)(st->ngroups + 1));
	if (!g)
		return NULL;
	st->groups = g;
	g = &st->groups[st->ngroups++];
	memset(g, 0, sizeof(*g));
	g->cpus = set;
	return g;
}

/* "local": one CPU per IRQ from the NIC's own node (seed 000: each NIC's
 * IRQ on its node), siblings last. NICs on one node continue the
 * round-robin where the previous one stopped, and never start on a CPU
 * another NIC starts on: seed 000 saw a multi-CPU mask handled by its first
 * CPU, so two NICs with one first CPU would share a CPU. */
static int policy_local(const nt_nic *nic, const int *cpus, int m, int nirqs, nt_cpuset *out,
			nt_policy_state *st, json_t *warnings)
{
	char msg[256];
	policy_group *g = group_for(st, cpus, m);
	if (!g)
		return -ENOMEM;
	int start = g->dealt % m, tries = 0;
	while (nt_cpuset_isset(&g->firsts, cpus[start]) && tries < m) {
		start = (start + 1) % m;
		tries++;
	}
	if (tries == m) {
		snprintf(msg, sizeof(msg),
			 "%s: more NICs than CPUs on its node; it shares a first CPU with another NIC",
			 nic->name);
		json_array_append_new(warnings, json_string(msg));
	}
	for (int i = 0; i < nirqs; i++) {
		nt_cpuset_zero(&out[i]);
		nt_cpuset_set(&out[i], cpus[(start + i) % m]);
	}
	nt_cpuset_set(&g->firsts, cpus[start]);
	g->dealt = start + nirqs;
	return 0;
}

/* "local-node": every IRQ gets the whole usable node mask (seed 000's
 * f0-style masks), for operators who let the kernel pick inside it. */
static int policy_local_node(const nt_nic *nic, const int *cpus, int m, int nirqs,
			     nt_cpuset *out, nt_policy_state *st, json_t *warnings)
{
	(void)nic;
	(void)st;
	(void)warnings;
	for (int i = 0; i < nirqs; i++) {
		nt_cpuset_zero(&out[i]);
		for (int k = 0; k < m; k++)
			nt_cpuset_set(&out[i], cpus[k]);
	}
	return 0;
}

static const struct {
	const char *name;
	nt_irq_policy_fn fn;
} policies[] = {
	{ "local", policy_local },
	{ "local-node", policy_local_node },
	{ NULL, NULL },
};

nt_irq_policy_fn nt_irq_policy_find(const char *name)
{
	for (int i = 0; name && policies[i].name; i++)
		if (strcmp(policies[i].name, name) == 0)
			return policies[i].fn;
	return NULL;
}

/* ---- desired values ---- */

typedef struct dlist {
	nt_desired *v;
	int n, cap;
} dlist;

static int dput(dlist *d, const nt_setting_kind *k, const char *target, const char *iface,
		const char *after, const char *path)
{
	for (int i = 0; i < d->n; i++) {
		if (d->v[i].kind == k && strcmp(d->v[i].target, target) == 0) {
			snprintf(d->v[i].after, sizeof(d->v[i].after), "%s", after);
			snprintf(d->v[i].path, sizeof(d->v[i].path), "%s", path);
			snprintf(d->v[i].interface, sizeof(d->v[i].interface), "%s", iface ? iface : "");
			return 0;
		}
	}
	if (d->n == d->cap) {
		int cap = d->cap ? d->cap * 2 : 32;
		nt_desired *nv = realloc(d->v, sizeof(*nv) * (size_t)cap);
		if (!nv)
			return -ENOMEM;
		d->v = nv;
		d->cap = cap;
	}
	nt_desired *x = &d->v[d->n++];
	memset(x, 0, sizeof(*x));
	x->kind = k;
	snprintf(x->target, sizeof(x->target), "%s", target);
	snprintf(x->interface, sizeof(x->interface), "%s", iface ? iface : "");
	snprintf(x->after, sizeof(x->after), "%s", after);
	snprintf(x->path, sizeof(x->path), "%s", path);
	return 0;
}

static int cmp_irq_idx(const void *a, const void *b, void *arg)
{
	const nt_topology *t = arg;
	int x = t->irqs[*(const int *)a].irq, y = t->irqs[*(const int *)b].irq;
	return (x > y) - (x < y);
}

static void warn(json_t *warnings, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(json_t *warnings, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_array_append_new(warnings, json_string(msg));
}

/* What one plan's IRQ placement shares between entries. */
typedef struct irq_plan {
	const nt_topology *t;
	dlist *d;
	nt_policy_state st;
	bool *tuned; /* per NIC: named by an irq_affinity entry */
	int *first_cpu; /* per NIC: the first CPU of its first IRQ's mask, -1 */
	json_t *warnings, *reserved;
} irq_plan;

/* The usable CPUs of NIC for a policy, in placement order, into *ORDER
 * (malloc'd) and *M. Returns 0, -ENOENT when the NIC is left out (a warning
 * says why) or -ENOMEM. */
static int policy_cpus(irq_plan *p, const nt_nic *nic, const nt_cpuset *exclude, int reserve,
		       int **order, int *m)
{
	const nt_topology *t = p->t;
	nt_cpuset cand, reserved;
	char cl[256];

	*order = NULL;
	if (!nic_local_cpus(t, nic, &cand)) {
		warn(p->warnings, "%s: NUMA locality unknown (numa_node -1, no local_cpulist); left "
		     "out (name its 'cpus' to place it)", nic->name);
		return -ENOENT;
	}
	nt_cpuset_andnot(&cand, &cand, exclude);
	int n = nt_cpuset_count(&cand);
	if (n == 0) {
		warn(p->warnings, "%s: no CPU left on its node after exclude_cpus; left out", nic->name);
		return -ENOENT;
	}
	int *o = malloc(sizeof(int) * (size_t)n);
	if (!o)
		return -ENOMEM;
	n = nt_cpus_siblings_last(t, &cand, o);
	if (nt_reserve_app_cpus(t, o, n, reserve, &reserved) < 0) {
		warn(p->warnings, "%s: reserving %d CPU(s) leaves none of its %d for its IRQs; left out",
		     nic->name, reserve, n);
		free(o);
		return -ENOENT;
	}
	if (reserve > 0) {
		int k = 0;
		for (int i = 0; i < n; i++)
			if (!nt_cpuset_isset(&reserved, o[i]))
				o[k++] = o[i];
		n = k;
		if (p->reserved && nt_cpulist_format(&reserved, cl, sizeof(cl)) >= 0)
			json_object_set_new(p->reserved, nic->name, json_string(cl));
	}
	*order = o;
	*m = n;
	return 0;
}

/* The movable IRQs of NIC (indexes into t->irqs), ascending by number. */
static int movable_irqs(irq_plan *p, const nt_nic *nic, const char *pattern, int *idx)
{
	const nt_topology *t = p->t;
	int n = 0;
	for (int q = 0; q < nic->nirqs; q++) {
		/* The kernel refuses to move managed IRQs; planning them would make
		 * every plan show steps that cannot happen. */
		if (t->irqs[nic->irqs[q]].managed)
			continue;
		idx[n++] = nic->irqs[q];
	}
	if (n < nic->nirqs)
		warn(p->warnings, "%s: %d kernel-managed IRQ(s) left as they are", nic->name,
		     nic->nirqs - n);
	if (n == 0 && (!is_glob(pattern) || nic->nirqs > 0))
		warn(p->warnings, "%s: no movable IRQs", nic->name);
	qsort_r(idx, (size_t)n, sizeof(int), cmp_irq_idx, (void *)t);
	return n;
}

/* One irq_affinity entry applied to one NIC. */
static int place_nic(irq_plan *p, const json_t *e, const char *path, int k)
{
	const nt_topology *t = p->t;
	const nt_nic *nic = &t->nics[k];
	const char *pattern = json_string_value(json_object_get(e, "interface"));
	const char *cpulist = json_string_value(json_object_get(e, "cpus"));
	const char *policy = json_string_value(json_object_get(e, "policy"));
	const char *excl = json_string_value(json_object_get(e, "exclude_cpus"));
	int reserve = (int)json_integer_value(json_object_get(e, "reserve_app_cpus"));
	int *idx = malloc(sizeof(int) * (size_t)(nic->nirqs + 1));
	int *order = NULL, m = 0, r = 0;
	nt_cpuset *sets = calloc((size_t)nic->nirqs + 1, sizeof(nt_cpuset));
	nt_cpuset exclude, set;
	char target[32], list[NT_VALUE_MAX];

	p->tuned[k] = true;
	if (!idx || !sets) {
		r = -ENOMEM;
		goto out;
	}
	nt_cpuset_zero(&exclude);
	if (excl)
		nt_cpulist_parse(excl, &exclude);
	int n = movable_irqs(p, nic, pattern, idx);
	if (n == 0)
		goto out;
	if (cpulist) {
		/* Named CPUs need no locality: a NIC whose node is unknown is
		 * placed this way (seed 001's set_irq_affinity_cpulist.sh). */
		int *one = malloc(sizeof(int) * (size_t)n);
		if (!one) {
			r = -ENOMEM;
			goto out;
		}
		nt_cpulist_parse(cpulist, &set);
		nt_cpuset_andnot(&set, &set, &exclude);
		r = nt_deal_cpus(&set, 0, n, one);
		for (int q = 0; r == 0 && q < n; q++) {
			nt_cpuset_zero(&sets[q]);
			nt_cpuset_set(&sets[q], one[q]);
		}
		free(one);
		if (r == -ENOENT) {
			warn(p->warnings, "%s: no CPU left after exclude_cpus", nic->name);
			r = 0;
			goto out;
		}
	} else {
		r = policy_cpus(p, nic, &exclude, reserve, &order, &m);
		if (r == 0)
			r = nt_irq_policy_find(policy)(nic, order, m, n, sets, &p->st, p->warnings);
		if (r == -ENOENT) {
			r = 0;
			goto out;
		}
	}
	if (r < 0)
		goto out;
	/* Seed 000: the first CPU of a mask serves the interrupt, so two NICs
	 * whose first IRQs' masks start at one CPU share it. */
	int first = nt_cpuset_next(&sets[0], 0);
	for (int j = 0; j < t->nnics; j++) {
		if (j != k && p->first_cpu[j] == first) {
			nt_cpulist_format(&sets[0], list, sizeof(list));
			warn(p->warnings, "%s: its IRQ mask %s starts at CPU %d, as %s's does; the first "
			     "CPU of a mask serves the interrupt (seed 000), so both NICs would be "
			     "served by CPU %d", nic->name, list, first, t->nics[j].name, first);
			break;
		}
	}
	p->first_cpu[k] = first;
	for (int q = 0; q < n; q++) {
		snprintf(target, sizeof(target), "%d", t->irqs[idx[q]].irq);
		if ((r = nt_cpulist_format(&sets[q], list, sizeof(list))) < 0)
			goto out;
		if ((r = dput(p->d, &nt_setting_irq_affinity, target, nic->name, list, path)) < 0)
			goto out;
	}
	r = 0;
out:
	free(idx);
	free(sets);
	free(order);
	return r;
}

static int desired_irq(irq_plan *p, const json_t *arr)
{
	size_t i;
	json_t *e;
	char path[NT_JSONPATH_MAX];

	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		snprintf(path, sizeof(path), "$.irq_affinity[%zu]", i);
		for (int k = 0; k < p->t->nnics; k++) {
			if (fnmatch(pattern, p->t->nics[k].name, 0) != 0)
				continue;
			int r = place_nic(p, e, path, k);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* other_irqs: every IRQ of no tuned NIC to the housekeeping CPUs (seed
 * 002: "all other IRQs moved to the node used by the system"), as one
 * mask each. Managed IRQs and IRQs without an affinity file stay. */
static int desired_other(irq_plan *p, const json_t *obj)
{
	const nt_topology *t = p->t;
	nt_cpuset set;
	char list[NT_VALUE_MAX], target[32];
	int managed = 0, r;

	if (nt_cpulist_parse(json_string_value(json_object_get(obj, "cpus")), &set) < 0)
		return 0;
	if ((r = nt_cpulist_format(&set, list, sizeof(list))) < 0)
		return r;
	for (int i = 0; i < t->nirqs; i++) {
		const nt_irq *irq = &t->irqs[i];
		if (irq->nic >= 0 && p->tuned[irq->nic])
			continue;
		if (!irq->has_affinity)
			continue;
		if (irq->managed) {
			managed++;
			continue;
		}
		snprintf(target, sizeof(target), "%d", irq->irq);
		r = dput(p->d, &nt_setting_irq_affinity, target,
			 irq->nic >= 0 ? t->nics[irq->nic].name : "", list, "$.other_irqs.cpus");
		if (r < 0)
			return r;
	}
	if (managed)
		warn(p->warnings, "other_irqs: %d kernel-managed IRQ(s) left as they are", managed);
	return 0;
}

/* irqbalance rewrites affinity every few seconds (seed 000): keep it off
 * the IRQs this plan places, stop it, or say that it will undo them. Its
 * step goes first so that it is told before any affinity changes. */
static int desired_irqbalance(const nt_topology *t, const json_t *profile, dlist *d,
			      json_t *warnings)
{
	const char *mode = json_string_value(json_object_get(profile, "irqbalance"));
	int nirq = 0, r = 0;
	int *irqs = NULL;
	char list[NT_VALUE_MAX];
	nt_desired x;

	for (int i = 0; i < d->n; i++)
		if (d->v[i].kind == &nt_setting_irq_affinity)
			nirq++;
	if (nirq == 0 || !t->irqbalance.running)
		return 0;
	if (!mode || strcmp(mode, "ignore") == 0) {
		warn(warnings, "irqbalance (pid %d) is running and will rewrite the IRQ affinity this "
		     "profile sets within seconds; set \"irqbalance\" to \"ban\" or \"stop\"%s",
		     t->irqbalance.pid, mode ? "" : " (or \"ignore\" to accept it)");
		return 0;
	}
	if (strcmp(mode, "ban") != 0 && strcmp(mode, "stop") != 0)
		return 0; /* require-absent: validation refused it already */
	if (!t->ctx.live) {
		warn(warnings, "irqbalance \"%s\" left out: irqbalance is controlled only on the live "
		     "host (--root /), not in a fixture tree", mode);
		return 0;
	}
	memset(&x, 0, sizeof(x));
	snprintf(x.target, sizeof(x.target), "irqbalance");
	snprintf(x.path, sizeof(x.path), "$.irqbalance");
	if (strcmp(mode, "stop") == 0) {
		x.kind = &nt_setting_irqbalance_service;
		snprintf(x.after, sizeof(x.after), "stopped");
	} else {
		x.kind = &nt_setting_irqbalance_ban;
		irqs = malloc(sizeof(int) * (size_t)nirq);
		if (!irqs)
			return -ENOMEM;
		int k = 0;
		for (int i = 0; i < d->n; i++)
			if (d->v[i].kind == &nt_setting_irq_affinity)
				irqs[k++] = atoi(d->v[i].target);
		if ((r = nt_irqlist_format(irqs, k, list, sizeof(list))) < 0) {
			warn(warnings, "irqbalance \"ban\": %d IRQs do not fit one ban list; left out "
			     "(use \"stop\")", k);
			r = 0;
			goto out;
		}
		snprintf(x.after, sizeof(x.after), "%s", list);
	}
	/* Put it in front: dput appends, so append and rotate. */
	if ((r = dput(d, x.kind, x.target, "", x.after, x.path)) < 0)
		goto out;
	x = d->v[d->n - 1];
	memmove(&d->v[1], &d->v[0], sizeof(nt_desired) * (size_t)(d->n - 1));
	d->v[0] = x;
out:
	free(irqs);
	return r;
}

static uint32_t ring_value(const json_t *x, uint32_t cur, uint32_t max)
{
	if (!x)
		return cur;
	if (json_is_string(x))
		return max;
	return (uint32_t)json_integer_value(x);
}

static int desired_rings(const nt_topology *t, const json_t *arr, dlist *d, json_t *warnings)
{
	size_t i;
	json_t *e;
	char path[NT_JSONPATH_MAX], val[64], msg[256];
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		snprintf(path, sizeof(path), "$.rings[%zu]", i);
		for (int k = 0; k < t->nnics; k++) {
			const nt_nic *nic = &t->nics[k];
			if (fnmatch(pattern, nic->name, 0) != 0)
				continue;
			if (!nic->has_rings) {
				snprintf(msg, sizeof(msg), "%s: no ring settings; left out", nic->name);
				json_array_append_new(warnings, json_string(msg));
				continue;
			}
			uint32_t rx = ring_value(json_object_get(e, "rx"), nic->rings.rx,
						 nic->rings.rx_max);
			uint32_t tx = ring_value(json_object_get(e, "tx"), nic->rings.tx,
						 nic->rings.tx_max);
			snprintf(val, sizeof(val), "rx=%u,tx=%u", rx, tx);
			int r = dput(d, &nt_setting_rings, nic->name, nic->name, val, path);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static uint32_t channel_value(const json_t *x, uint32_t cur, uint32_t max)
{
	if (!x)
		return cur;
	if (json_is_string(x))
		return max;
	return (uint32_t)json_integer_value(x);
}

/* Channels right after the same NIC's rings: one NIC's queue changes are
 * made together (each may reset the NIC), and the plan warns once. */
static int desired_channels(const nt_topology *t, const json_t *arr, dlist *d, json_t *warnings)
{
	size_t i;
	json_t *e;
	char path[NT_JSONPATH_MAX], val[NT_VALUE_MAX], msg[256];
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		snprintf(path, sizeof(path), "$.channels[%zu]", i);
		for (int k = 0; k < t->nnics; k++) {
			const nt_nic *nic = &t->nics[k];
			if (fnmatch(pattern, nic->name, 0) != 0)
				continue;
			if (!nic->has_channels) {
				snprintf(msg, sizeof(msg), "%s: no channel settings; left out", nic->name);
				json_array_append_new(warnings, json_string(msg));
				continue;
			}
			const nt_channels *c = &nic->channels;
			nt_channels w = {
				.rx = channel_value(json_object_get(e, "rx"), c->rx, c->rx_max),
				.tx = channel_value(json_object_get(e, "tx"), c->tx, c->tx_max),
				.other = channel_value(json_object_get(e, "other"), c->other, c->other_max),
				.combined = channel_value(json_object_get(e, "combined"), c->combined, c->combined_max),
			};
			if (nt_channels_format(&w, val, sizeof(val)) < 0)
				return -ENOSPC;
			int r = dput(d, &nt_setting_channels, nic->name, nic->name, val, path);
			if (r < 0)
				return r;
			/* Move it behind the NIC's rings entry, if any. */
			int at = d->n - 1, rings = -1;
			for (int j = 0; j < d->n; j++)
				if (d->v[j].kind == &nt_setting_channels && strcmp(d->v[j].target, nic->name) == 0)
					at = j;
			for (int j = 0; j < d->n; j++)
				if (d->v[j].kind == &nt_setting_rings && strcmp(d->v[j].target, nic->name) == 0)
					rings = j;
			if (rings >= 0 && at != rings + 1) {
				nt_desired x = d->v[at];
				if (at > rings + 1) {
					memmove(&d->v[rings + 2], &d->v[rings + 1],
						sizeof(nt_desired) * (size_t)(at - rings - 1));
					d->v[rings + 1] = x;
				}
			}
		}
	}
	return 0;
}

static int desired_bonds(const nt_topology *t, const json_t *arr, dlist *d)
{
	size_t i;
	json_t *e;
	char path[NT_JSONPATH_MAX];
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		const char *pol = json_string_value(json_object_get(e, "xmit_hash_policy"));
		snprintf(path, sizeof(path), "$.bonds[%zu].xmit_hash_policy", i);
		for (int k = 0; k < t->nbonds; k++) {
			if (fnmatch(pattern, t->bonds[k].name, 0) != 0)
				continue;
			int r = dput(d, &nt_setting_bond, t->bonds[k].name, t->bonds[k].name, pol, path);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int desired_sysctl(const json_t *obj, dlist *d)
{
	const char *key;
	json_t *val;
	char path[NT_JSONPATH_MAX];
	json_object_foreach((json_t *)obj, key, val) {
		snprintf(path, sizeof(path), "$.sysctl['%s']", key);
		int r = dput(d, &nt_setting_sysctl, key, "", json_string_value(val), path);
		if (r < 0)
			return r;
	}
	return 0;
}

int nt_profile_desired_ex(const nt_topology *t, const json_t *profile, nt_desired **out, int *n,
			  json_t *warnings, json_t *reserved)
{
	dlist d = { 0 };
	irq_plan p = { .t = t, .d = &d, .warnings = warnings, .reserved = reserved };
	json_t *x;
	int r = 0;

	*out = NULL;
	*n = 0;
	p.tuned = calloc((size_t)t->nnics + 1, sizeof(bool));
	p.first_cpu = malloc(sizeof(int) * ((size_t)t->nnics + 1));
	if (!p.tuned || !p.first_cpu) {
		r = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < t->nnics; i++)
		p.first_cpu[i] = -1;
	if ((x = json_object_get(profile, "irq_affinity")) && (r = desired_irq(&p, x)) < 0)
		goto out;
	if ((x = json_object_get(profile, "other_irqs")) && (r = desired_other(&p, x)) < 0)
		goto out;
	if ((r = desired_irqbalance(t, profile, &d, warnings)) < 0)
		goto out;
	if ((x = json_object_get(profile, "rings")) && (r = desired_rings(t, x, &d, warnings)) < 0)
		goto out;
	if ((x = json_object_get(profile, "channels")) && (r = desired_channels(t, x, &d, warnings)) < 0)
		goto out;
	if ((x = json_object_get(profile, "bonds")) && (r = desired_bonds(t, x, &d)) < 0)
		goto out;
	if ((x = json_object_get(profile, "sysctl")) && (r = desired_sysctl(x, &d)) < 0)
		goto out;
	*out = d.v;
	*n = d.n;
	d.v = NULL;
out:
	free(d.v);
	free(p.st.groups);
	free(p.tuned);
	free(p.first_cpu);
	return r;
}

int nt_profile_desired(const nt_topology *t, const json_t *profile, nt_desired **out, int *n,
		       json_t *warnings)
{
	return nt_profile_desired_ex(t, profile, out, n, warnings, NULL);
}
