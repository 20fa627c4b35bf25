/* SPDX-License-Identifier: Apache-2.0 */
/* nettune tune's search space (cli/tune.h): a base profile, parameters
 * (a field path and its values) and their expansion into candidates,
 * documented in docs/tune.md. */
#include "cli/tune.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One step of a path: an object's key or an array's index. */
typedef struct step {
	char key[256];
	long index; /* -1: a key */
} step;

#define MAX_STEPS 16

/* PATH into STEPS. Returns the number of steps or -EINVAL. */
static int parse_path(const char *path, step *steps, char *err, size_t errsize)
{
	int n = 0;
	const char *p = path;
	bool sysctl = false;

	if (!*p) {
		snprintf(err, errsize, "an empty path");
		return -EINVAL;
	}
	while (*p) {
		if (n == MAX_STEPS) {
			snprintf(err, errsize, "'%s' has more than %d steps", path, MAX_STEPS);
			return -EINVAL;
		}
		step *s = &steps[n];
		s->index = -1;
		if (sysctl && *p != '[') {
			/* sysctl names are dotted: the rest is one key. */
			snprintf(s->key, sizeof(s->key), "%s", p);
			n++;
			break;
		}
		if (*p == '[' && (p[1] == '"' || p[1] == '\'')) {
			/* ["KEY"] or ['KEY'], the agent's own spelling of a sysctl's path. */
			const char *end = strchr(p + 2, p[1]);
			if (!end || end[1] != ']' || end == p + 2 || (size_t)(end - p - 2) >= sizeof(s->key)) {
				snprintf(err, errsize, "'%s': a quoted key is [\"KEY\"] or ['KEY']", path);
				return -EINVAL;
			}
			memcpy(s->key, p + 2, (size_t)(end - p - 2));
			s->key[end - p - 2] = '\0';
			p = end + 2;
		} else if (*p == '[') {
			char *end;
			errno = 0;
			long i = strtol(p + 1, &end, 10);
			if (!isdigit((unsigned char)p[1]) || *end != ']' || errno || i > 100000) {
				snprintf(err, errsize, "'%s': an array element is [N], N from 0", path);
				return -EINVAL;
			}
			s->index = i;
			p = end + 1;
		} else {
			size_t k = 0;
			while (p[k] && (isalnum((unsigned char)p[k]) || p[k] == '_' || p[k] == '-'))
				k++;
			if (!k || k >= sizeof(s->key)) {
				snprintf(err, errsize, "'%s': a key of letters, digits, '_' and '-' was expected at '%s'",
					 path, p);
				return -EINVAL;
			}
			memcpy(s->key, p, k);
			s->key[k] = '\0';
			p += k;
			if (n == 0 && !strcmp(s->key, "sysctl"))
				sysctl = true;
		}
		n++;
		if (*p == '.') {
			p++;
			if (!*p) {
				snprintf(err, errsize, "'%s' ends with '.'", path);
				return -EINVAL;
			}
		} else if (*p && *p != '[') {
			snprintf(err, errsize, "'%s': '.' or '[' was expected at '%s'", path, p);
			return -EINVAL;
		}
	}
	if (steps[0].index >= 0) {
		snprintf(err, errsize, "'%s': a profile is an object, its path starts with a section's name", path);
		return -EINVAL;
	}
	if (sysctl && n == 1) {
		snprintf(err, errsize, "'%s': sysctl.NAME names one sysctl", path);
		return -EINVAL;
	}
	return n;
}

int nt_tune_set_path(json_t *profile, const char *path, json_t *value, char *err, size_t errsize)
{
	step steps[MAX_STEPS];
	int n = parse_path(path, steps, err, errsize);
	if (n < 0)
		return n;
	json_t *at = profile;
	for (int i = 0; i < n; i++) {
		bool last = i == n - 1;
		if (steps[i].index < 0) {
			if (!json_is_object(at)) {
				snprintf(err, errsize, "'%s': '%s' is not an object's key here", path, steps[i].key);
				return -EINVAL;
			}
			if (last)
				return json_object_set(at, steps[i].key, value) < 0 ? -ENOMEM : 0;
			json_t *next = json_object_get(at, steps[i].key);
			if (!next) {
				/* The next step says what to make: an object; an
				 * array element must exist already (which one of a
				 * NIC list would it be?). */
				if (steps[i + 1].index >= 0) {
					snprintf(err, errsize, "'%s': the base has no '%s' to take element [%ld] of", path,
						 steps[i].key, steps[i + 1].index);
					return -ENOENT;
				}
				next = json_object();
				if (!next || json_object_set_new(at, steps[i].key, next) < 0)
					return -ENOMEM;
			}
			at = next;
		} else {
			if (!json_is_array(at)) {
				snprintf(err, errsize, "'%s': [%ld] of something that is not an array", path, steps[i].index);
				return -EINVAL;
			}
			if ((size_t)steps[i].index >= json_array_size(at)) {
				snprintf(err, errsize, "'%s': the base's array has %zu element%s, no [%ld]", path,
					 json_array_size(at), json_array_size(at) == 1 ? "" : "s", steps[i].index);
				return -ENOENT;
			}
			if (last)
				return json_array_set(at, (size_t)steps[i].index, value) < 0 ? -ENOMEM : 0;
			at = json_array_get(at, (size_t)steps[i].index);
		}
	}
	return -EINVAL;
}

/* A value for a label: strings as they are, the rest as compact JSON. */
static void value_text(const json_t *v, char *buf, size_t size)
{
	if (json_is_string(v)) {
		snprintf(buf, size, "%s", json_string_value(v));
		return;
	}
	char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	snprintf(buf, size, "%s", t ? t : "?");
	free(t);
}

/* The candidate of BASE with the parameters' values CHOICE[i] (-1: the
 * parameter not set), number NUMBER, appended to OUT. */
static int add_candidate(const json_t *base, const json_t *params, const long *choice, size_t np, size_t number,
			 json_t *out, char *err, size_t errsize)
{
	json_t *profile = json_deep_copy(base), *assign = json_object();
	char label[2048] = "";
	size_t ll = 0;
	int rc = -ENOMEM;
	if (!profile || !assign)
		goto fail;
	const char *bname = json_string_value(json_object_get(base, "name"));
	char name[80];
	snprintf(name, sizeof(name), "%.50s-%zu", bname && *bname ? bname : "tune", number);
	if (json_object_set_new(profile, "name", json_string(name)) < 0)
		goto fail;
	for (size_t i = 0; i < np; i++) {
		if (choice[i] < 0)
			continue;
		const json_t *p = json_array_get(params, i);
		const char *path = json_string_value(json_object_get(p, "path"));
		json_t *v = json_array_get(json_object_get(p, "values"), (size_t)choice[i]);
		char e[512];
		if ((rc = nt_tune_set_path(profile, path, v, e, sizeof(e))) < 0) {
			snprintf(err, errsize, "$.parameters[%zu].path: %s", i, e);
			rc = rc == -ENOMEM ? rc : -EINVAL;
			goto fail;
		}
		json_object_set(assign, path, v);
		char vt[256];
		value_text(v, vt, sizeof(vt));
		int w = snprintf(label + ll, sizeof(label) - ll, "%s%s=%s", ll ? ", " : "", path, vt);
		if (w > 0)
			ll = ll + (size_t)w < sizeof(label) ? ll + (size_t)w : sizeof(label) - 1;
	}
	json_t *c = json_pack("{s:s,s:o,s:o}", "label", label, "assignment", assign, "profile", profile);
	if (!c || json_array_append_new(out, c) < 0)
		return -ENOMEM;
	return 0;
fail:
	json_decref(profile);
	json_decref(assign);
	return rc;
}

int nt_tune_expand(const json_t *space, json_t **out, const char **mode, char *err, size_t errsize)
{
	const json_t *base, *params, *cap_j;
	size_t np, cap = NT_TUNE_DEFAULT_CAP;
	long *choice = NULL;
	int rc = -EINVAL;
	const char *key;
	json_t *x;

	*out = NULL;
	*mode = NULL;
	if (!json_is_object(space)) {
		snprintf(err, errsize, "$: a space is a JSON object {\"base\": PROFILE, \"parameters\": [...]}");
		return -EINVAL;
	}
	json_object_foreach((json_t *)space, key, x) {
		if (strcmp(key, "base") && strcmp(key, "parameters") && strcmp(key, "max_candidates") &&
		    strcmp(key, "description")) {
			snprintf(err, errsize, "$.%s: unknown field (a space has base, parameters, max_candidates, "
					       "description)", key);
			return -EINVAL;
		}
	}
	base = json_object_get(space, "base");
	if (base && !json_is_object(base)) {
		snprintf(err, errsize, "$.base: a profile (a JSON object)");
		return -EINVAL;
	}
	json_t *empty = base ? NULL : json_object();
	if (!base)
		base = empty;
	if ((cap_j = json_object_get(space, "max_candidates"))) {
		if (!json_is_integer(cap_j) || json_integer_value(cap_j) < 1 ||
		    json_integer_value(cap_j) > NT_TUNE_MAX_CANDIDATES) {
			snprintf(err, errsize, "$.max_candidates: a whole number from 1 to %d", NT_TUNE_MAX_CANDIDATES);
			goto out;
		}
		cap = (size_t)json_integer_value(cap_j);
	}
	params = json_object_get(space, "parameters");
	if (!json_is_array(params) || !(np = json_array_size(params))) {
		snprintf(err, errsize, "$.parameters: a list of at least one {\"path\": ..., \"values\": [...]}");
		goto out;
	}
	for (size_t i = 0; i < np; i++) {
		const json_t *p = json_array_get(params, i), *vals = json_object_get(p, "values");
		const char *path = json_string_value(json_object_get(p, "path"));
		step steps[MAX_STEPS];
		char e[512];
		if (!json_is_object(p) || json_object_size(p) != 2 || !path || !vals) {
			snprintf(err, errsize, "$.parameters[%zu]: an object of exactly \"path\" (a string) and \"values\"",
				 i);
			goto out;
		}
		if (parse_path(path, steps, e, sizeof(e)) < 0) {
			snprintf(err, errsize, "$.parameters[%zu].path: %s", i, e);
			goto out;
		}
		if (!json_is_array(vals) || !json_array_size(vals)) {
			snprintf(err, errsize, "$.parameters[%zu].values: a list of at least one value", i);
			goto out;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(path, json_string_value(json_object_get(json_array_get(params, j), "path")))) {
				snprintf(err, errsize, "$.parameters[%zu].path: '%s' is $.parameters[%zu]'s too", i, path, j);
				goto out;
			}
		for (size_t j = 0; j < json_array_size(vals); j++)
			for (size_t k = 0; k < j; k++)
				if (json_equal(json_array_get(vals, j), json_array_get(vals, k))) {
					snprintf(err, errsize, "$.parameters[%zu].values[%zu]: the same as values[%zu]", i, j,
						 k);
					goto out;
				}
	}
	/* Every combination when they fit the cap, else one factor at a time. */
	size_t total = 1, ofat = 0;
	for (size_t i = 0; i < np; i++) {
		size_t nv = json_array_size(json_object_get(json_array_get(params, i), "values"));
		ofat += nv;
		total = total > cap ? total : total * nv;
	}
	if (!(*out = json_array()) || !(choice = calloc(np, sizeof(*choice)))) {
		rc = -ENOMEM;
		goto out;
	}
	if (total <= cap) {
		*mode = "factorial";
		for (size_t number = 1;; number++) {
			if ((rc = add_candidate(base, params, choice, np, number, *out, err, errsize)) < 0)
				goto out;
			/* The next combination, the last parameter fastest. */
			size_t i = np;
			while (i > 0) {
				i--;
				size_t nv = json_array_size(json_object_get(json_array_get(params, i), "values"));
				if ((size_t)++choice[i] < nv)
					break;
				choice[i] = 0;
				if (i == 0)
					goto done;
			}
		}
	}
	if (ofat > cap) {
		snprintf(err, errsize, "$.parameters: %zu combinations and %zu candidates one factor at a time, more than "
				       "the cap of %zu ($.max_candidates, at most %d)", total, ofat, cap,
			 NT_TUNE_MAX_CANDIDATES);
		rc = -E2BIG;
		goto out;
	}
	*mode = "one-factor-at-a-time";
	size_t number = 1;
	for (size_t i = 0; i < np; i++) {
		for (size_t k = 0; k < np; k++)
			choice[k] = -1;
		size_t nv = json_array_size(json_object_get(json_array_get(params, i), "values"));
		for (size_t v = 0; v < nv; v++) {
			choice[i] = (long)v;
			if ((rc = add_candidate(base, params, choice, np, number++, *out, err, errsize)) < 0)
				goto out;
		}
	}
done:
	rc = 0;
out:
	if (rc < 0) {
		json_decref(*out);
		*out = NULL;
		*mode = NULL;
	}
	free(choice);
	json_decref(empty);
	return rc;
}

void nt_tune_same(json_t *const *docs, size_t n, size_t *same)
{
	for (size_t i = 0; i < n; i++) {
		same[i] = i;
		for (size_t j = 0; j < i; j++)
			if (same[j] == j && json_equal(docs[i], docs[j])) {
				same[i] = j;
				break;
			}
	}
}

json_t *nt_tune_plan_key(const json_t *steps)
{
	json_t *key = json_array(), *s;
	size_t i;
	json_array_foreach(steps, i, s)
		json_array_append_new(key, json_pack("[O,O,O]", json_object_get(s, "kind") ?: json_null(),
						     json_object_get(s, "target") ?: json_null(),
						     json_object_get(s, "after") ?: json_null()));
	return key;
}

int nt_tune_combine(const json_t *space, size_t n, const bool *won, const double *ratio, bool lower, json_t **out,
		    char *err, size_t errsize)
{
	const json_t *params = json_object_get(space, "parameters"), *base = json_object_get(space, "base");
	size_t np = json_array_size(params), ofat = 0, chosen = 0;
	long *choice = calloc(np ? np : 1, sizeof(*choice));
	double *best = calloc(np ? np : 1, sizeof(*best));
	json_t *empty = base ? NULL : json_object(), *list = NULL;
	int rc = -ENOMEM;

	*out = NULL;
	if (!choice || !best || (!base && !empty))
		goto out;
	for (size_t i = 0; i < np; i++) {
		choice[i] = -1;
		ofat += json_array_size(json_object_get(json_array_get(params, i), "values"));
	}
	if (!np || ofat != n) {
		snprintf(err, errsize, "the space expands to %zu candidates one factor at a time, not %zu", ofat, n);
		rc = -EINVAL;
		goto out;
	}
	/* Candidate k is parameter i's value v, in the expansion's order. */
	for (size_t i = 0, k = 0; i < np; i++) {
		size_t nv = json_array_size(json_object_get(json_array_get(params, i), "values"));
		for (size_t v = 0; v < nv; v++, k++) {
			if (!won[k] || !isfinite(ratio[k]))
				continue;
			if (choice[i] < 0 || (lower ? ratio[k] < best[i] : ratio[k] > best[i])) {
				chosen += choice[i] < 0;
				choice[i] = (long)v;
				best[i] = ratio[k];
			}
		}
	}
	rc = 0;
	if (chosen < 2)
		goto out;
	if (!(list = json_array())) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = add_candidate(base ? base : empty, params, choice, np, n + 1, list, err, errsize)) < 0)
		goto out;
	*out = json_incref(json_array_get(list, 0));
out:
	json_decref(list);
	json_decref(empty);
	free(choice);
	free(best);
	return rc;
}
