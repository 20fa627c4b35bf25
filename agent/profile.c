#include "agent/profile.h"

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

static void validate_irq(vstate *v, const json_t *arr)
{
	static const char *const known[] = { "interface", "cpus", "policy", "exclude_cpus", NULL };
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
			nt_profile_error(v->errors, path, "unknown policy '%s' (known: local)", policy);
		}
		if (excl) {
			snprintf(path, sizeof(path), "%s.exclude_cpus", base);
			check_cpulist(v, excl, path, false);
		}
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
		if (check_iface(v, iface, path, false) > 0 && v->t) {
			/* A name must have rings; a glob may also match NICs
			 * without (lo, bridges), which the plan leaves out. */
			int with = 0;
			for (int k = 0; k < v->t->nnics; k++)
				if (fnmatch(iface, v->t->nics[k].name, 0) == 0 && v->t->nics[k].has_rings)
					with++;
			if (with == 0)
				nt_profile_error(v->errors, path, "'%s' has no ring settings", iface);
		}
		check_ring_value(v, e, base, "rx", iface);
		check_ring_value(v, e, base, "tx", iface);
	}
}

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
		unknown_fields(v, e, base, known);
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

int nt_profile_validate(const nt_topology *t, const json_t *profile, json_t *errors)
{
	static const char *const known[] = { "name", "description", "irq_affinity", "rings",
					     "bonds", "sysctl", NULL };
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
	if ((x = json_object_get(profile, "rings"))) {
		if (json_is_array(x))
			validate_rings(&v, x);
		else
			nt_profile_error(errors, "$.rings", "must be an array");
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

/* NICs spread over the same set of CPUs share a group: its count of IRQs
 * dealt so far, and the CPUs already used as some NIC's first CPU. */
typedef struct policy_group {
	nt_cpuset cpus;
	int dealt;
	nt_cpuset firsts;
} policy_group;

struct nt_policy_state {
	policy_group *groups;
	int ngroups;
};

static policy_group *group_for(nt_policy_state *st, const nt_cpuset *cpus)
{
	for (int i = 0; i < st->ngroups; i++)
		if (nt_cpuset_equal(&st->groups[i].cpus, cpus))
			return &st->groups[i];
	policy_group *g = realloc(st->groups, sizeof(*g) * (size_t)(st->ngroups + 1));
	if (!g)
		return NULL;
	st->groups = g;
	g = &st->groups[st->ngroups++];
	memset(g, 0, sizeof(*g));
	g->cpus = *cpus;
	return g;
}

/* "local": the CPUs of the NIC's own node (seed 000: each NIC's IRQ on its
 * node), minus EXCLUDE. NICs on one node continue the round-robin where the
 * previous one stopped, and never start on a CPU another NIC starts on:
 * seed 000 saw a multi-CPU mask handled by its first CPU, so two NICs with
 * one first CPU would share a CPU. */
static int policy_local(const nt_topology *t, const nt_nic *nic, const nt_cpuset *exclude,
			int nirqs, int *out, nt_policy_state *st, json_t *warnings)
{
	nt_cpuset cand;
	const nt_numa_node *node = nic->numa_node >= 0 ? node_by_id(t, nic->numa_node) : NULL;
	char msg[256];

	if (node) {
		cand = node->cpus;
	} else if (nic->has_local_cpus) {
		nt_cpuset_and(&cand, &nic->local_cpus, &t->cpus_online);
	} else {
		snprintf(msg, sizeof(msg),
			 "%s: NUMA locality unknown (numa_node -1, no local_cpus); left out", nic->name);
		json_array_append_new(warnings, json_string(msg));
		return -ENOENT;
	}
	if (exclude)
		nt_cpuset_andnot(&cand, &cand, exclude);
	int m = nt_cpuset_count(&cand);
	if (m == 0) {
		snprintf(msg, sizeof(msg), "%s: no CPU left on its node after exclude_cpus; left out",
			 nic->name);
		json_array_append_new(warnings, json_string(msg));
		return -ENOENT;
	}
	policy_group *g = group_for(st, &cand);
	if (!g)
		return -ENOMEM;
	int start = g->dealt % m;
	int tries = 0;
	int first;
	nt_deal_cpus(&cand, start, 1, &first);
	while (nt_cpuset_isset(&g->firsts, first) && tries < m) {
		start = (start + 1) % m;
		nt_deal_cpus(&cand, start, 1, &first);
		tries++;
	}
	if (tries == m) {
		snprintf(msg, sizeof(msg),
			 "%s: more NICs than CPUs on its node; it shares a first CPU with another NIC",
			 nic->name);
		json_array_append_new(warnings, json_string(msg));
	}
	int r = nt_deal_cpus(&cand, start, nirqs, out);
	if (r < 0)
		return r;
	nt_cpuset_set(&g->firsts, first);
	g->dealt = start + nirqs;
	return 0;
}

static const struct {
	const char *name;
	nt_irq_policy_fn fn;
} policies[] = {
	{ "local", policy_local },
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

static int desired_irq(const nt_topology *t, const json_t *arr, dlist *d, nt_policy_state *st,
		       json_t *warnings)
{
	size_t i;
	json_t *e;
	char path[NT_JSONPATH_MAX], msg[256], target[32], list[32];
	int r = 0;
	int *idx = NULL, *cpus = NULL;
	nt_cpuset firsts;

	nt_cpuset_zero(&firsts);
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		const char *cpulist = json_string_value(json_object_get(e, "cpus"));
		const char *policy = json_string_value(json_object_get(e, "policy"));
		const char *excl = json_string_value(json_object_get(e, "exclude_cpus"));
		nt_cpuset exclude, set;

		nt_cpuset_zero(&exclude);
		if (excl)
			nt_cpulist_parse(excl, &exclude);
		snprintf(path, sizeof(path), "$.irq_affinity[%zu]", i);
		for (int k = 0; k < t->nnics; k++) {
			const nt_nic *nic = &t->nics[k];
			if (fnmatch(pattern, nic->name, 0) != 0)
				continue;
			int n = 0;
			free(idx);
			free(cpus);
			idx = malloc(sizeof(int) * (size_t)(nic->nirqs + 1));
			cpus = malloc(sizeof(int) * (size_t)(nic->nirqs + 1));
			if (!idx || !cpus) {
				r = -ENOMEM;
				goto out;
			}
			for (int q = 0; q < nic->nirqs; q++) {
				const nt_irq *irq = &t->irqs[nic->irqs[q]];
				/* The kernel refuses to move managed IRQs; planning them
				 * would make every plan show steps that cannot happen. */
				if (irq->managed)
					continue;
				idx[n++] = nic->irqs[q];
			}
			if (n < nic->nirqs) {
				snprintf(msg, sizeof(msg), "%s: %d kernel-managed IRQ(s) left as they are",
					 nic->name, nic->nirqs - n);
				json_array_append_new(warnings, json_string(msg));
			}
			if (n == 0) {
				if (!is_glob(pattern) || nic->nirqs > 0) {
					snprintf(msg, sizeof(msg), "%s: no movable IRQs", nic->name);
					json_array_append_new(warnings, json_string(msg));
				}
				continue;
			}
			qsort_r(idx, (size_t)n, sizeof(int), cmp_irq_idx, (void *)t);
			if (cpulist) {
				nt_cpulist_parse(cpulist, &set);
				nt_cpuset_andnot(&set, &set, &exclude);
				r = nt_deal_cpus(&set, 0, n, cpus);
				if (r < 0) {
					snprintf(msg, sizeof(msg), "%s: no CPU left after exclude_cpus",
						 nic->name);
					json_array_append_new(warnings, json_string(msg));
					r = 0;
					continue;
				}
			} else {
				r = nt_irq_policy_find(policy)(t, nic, &exclude, n, cpus, st, warnings);
				if (r == -ENOENT) {
					r = 0;
					continue;
				}
				if (r < 0)
					goto out;
			}
			if (nt_cpuset_isset(&firsts, cpus[0])) {
				snprintf(msg, sizeof(msg),
					 "%s: its first IRQ shares CPU %d with another NIC's first IRQ",
					 nic->name, cpus[0]);
				json_array_append_new(warnings, json_string(msg));
			}
			nt_cpuset_set(&firsts, cpus[0]);
			for (int q = 0; q < n; q++) {
				snprintf(target, sizeof(target), "%d", t->irqs[idx[q]].irq);
				snprintf(list, sizeof(list), "%d", cpus[q]);
				if ((r = dput(d, &nt_setting_irq_affinity, target, nic->name, list, path)) < 0)
					goto out;
			}
		}
	}
out:
	free(idx);
	free(cpus);
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

int nt_profile_desired(const nt_topology *t, const json_t *profile, nt_desired **out, int *n,
		       json_t *warnings)
{
	dlist d = { 0 };
	nt_policy_state st = { 0 };
	json_t *x;
	int r = 0;

	*out = NULL;
	*n = 0;
	if ((x = json_object_get(profile, "irq_affinity")) &&
	    (r = desired_irq(t, x, &d, &st, warnings)) < 0)
		goto out;
	if ((x = json_object_get(profile, "rings")) && (r = desired_rings(t, x, &d, warnings)) < 0)
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
	free(st.groups);
	return r;
}
