/* SPDX-License-Identifier: Apache-2.0 */
/* JSON lookups shared by the tests of profiles, plans and diagnostics. */
#ifndef NT_TEST_JSON_H
#define NT_TEST_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <string.h>

/* Whether ERRORS ([{path, message}]) has one at PATH whose message contains
 * WORDS. */
static inline bool has_error(const json_t *errors, const char *path, const char *words)
{
	size_t i;
	json_t *e;
	json_array_foreach((json_t *)errors, i, e) {
		const char *p = json_string_value(json_object_get(e, "path"));
		const char *m = json_string_value(json_object_get(e, "message"));
		if (p && m && strcmp(p, path) == 0 && strstr(m, words))
			return true;
	}
	return false;
}

/* Whether WARNINGS (an array of strings) has one containing WORDS. */
static inline bool warned(const json_t *warnings, const char *words)
{
	size_t i;
	json_t *e;
	json_array_foreach((json_t *)warnings, i, e) {
		const char *w = json_string_value(e);
		if (w && strstr(w, words))
			return true;
	}
	return false;
}

/* The finding ID about SUBJECT in the diagnosis R, or NULL. */
static inline json_t *nt_t_finding(const json_t *r, const char *id, const char *subject)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(r, "findings"), i, f) {
		const char *fi = json_string_value(json_object_get(f, "id"));
		const char *fs = json_string_value(json_object_get(f, "subject"));
		if (fi && fs && strcmp(fi, id) == 0 && strcmp(fs, subject) == 0)
			return f;
	}
	return NULL;
}

/* The step of STEPS (a plan's "steps") of KIND on TARGET, or NULL; *POS
 * (when given) its index. */
static inline const json_t *step_find(const json_t *steps, const char *kind, const char *target, int *pos)
{
	size_t i;
	json_t *s;
	json_array_foreach((json_t *)steps, i, s)
		if (strcmp(json_string_value(json_object_get(s, "kind")), kind) == 0 &&
		    strcmp(json_string_value(json_object_get(s, "target")), target) == 0) {
			if (pos)
				*pos = (int)i;
			return s;
		}
	return NULL;
}

/* The finding of DOC (a diagnosis) with ID about SUBJECT, or NULL. */
static inline const json_t *finding(const json_t *doc, const char *id, const char *subject)
{
	return nt_t_finding(doc, id, subject);
}
#endif
