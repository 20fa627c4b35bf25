/* SPDX-License-Identifier: Apache-2.0 */
/* Routing: the request path split and percent-decoded here (not by MHD),
 * so that an encoded '/' inside a segment stays inside that segment and is
 * refused by the route's own validation, never turned into extra path
 * components; then matched against the areas' route tables. */
#include "api/server_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decode [S, S+LEN) into a new string. NUL bytes (%00) and broken
 * escapes are refused: a decoded segment is later used as a C string. */
static int pct_decode(const char *s, size_t len, char **out)
{
	char *d = malloc(len + 1);
	size_t j = 0;
	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '%') {
			d[j++] = s[i];
			continue;
		}
		if (i + 2 >= len) {
			free(d);
			return NT_EINVALID;
		}
		int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
			free(d);
			return NT_EINVALID;
		}
		d[j++] = (char)(hi * 16 + lo);
		i += 2;
	}
	d[j] = '\0';
	*out = d;
	return 0;
}

/* A path with more segments than any route has is left with nsegs = -1
 * (no route will match). */
int nt_srv_split_path(struct nt_conn *c)
{
	const char *p = c->path;
	if (*p != '/') {
		c->nsegs = -1; /* "*" or an absolute-form target: no route */
		return 0;
	}
	c->nsegs = 0;
	while (*p == '/') {
		p++;
		const char *end = strchrnul(p, '/');
		if (c->nsegs == NT_MAX_SEGMENTS) {
			c->nsegs = -1;
			return 0;
		}
		int r = pct_decode(p, (size_t)(end - p), &c->segs[c->nsegs]);
		if (r < 0)
			return r;
		c->nsegs++;
		c->nalloc = c->nsegs;
		p = end;
	}
	return 0;
}

/* Whether PATTERN ("/v1/nics/{name}") matches the decoded segments; a
 * "{param}" matches exactly one non-empty segment. */
static bool match_route(const struct nt_conn *c, const char *pattern, const char **params,
			int *nparams)
{
	const char *p = pattern;
	int i = 0, np = 0;

	if (c->nsegs < 0 || *p != '/')
		return false;
	while (*p == '/') {
		p++;
		const char *end = strchrnul(p, '/');
		size_t len = (size_t)(end - p);
		if (i >= c->nsegs)
			return false;
		if (len >= 2 && p[0] == '{' && p[len - 1] == '}') {
			if (!c->segs[i][0] || np >= 4)
				return false;
			if (params)
				params[np] = c->segs[i];
			np++;
		} else if (strlen(c->segs[i]) != len || memcmp(c->segs[i], p, len) != 0) {
			return false;
		}
		i++;
		p = end;
	}
	if (i != c->nsegs)
		return false;
	if (nparams)
		*nparams = np;
	return true;
}

const nt_route *nt_srv_find_route(const nt_area *const *areas, int n, struct nt_conn *c,
				  const char *method, char *allow, size_t allowsize)
{
	const char *m = strcmp(method, "HEAD") == 0 ? "GET" : method;
	allow[0] = '\0';
	for (int a = 0; a < n; a++) {
		for (const nt_route *r = areas[a]->routes; r && r->method; r++) {
			if (!match_route(c, r->pattern, NULL, NULL))
				continue;
			if (strcmp(r->method, m) == 0) {
				match_route(c, r->pattern, c->req.params, &c->req.nparams);
				return r;
			}
			if (!strstr(allow, r->method)) {
				size_t l = strlen(allow);
				snprintf(allow + l, allowsize - l, "%s%s", l ? ", " : "", r->method);
				if (strcmp(r->method, "GET") == 0 && !strstr(allow, "HEAD")) {
					l = strlen(allow);
					snprintf(allow + l, allowsize - l, ", HEAD");
				}
			}
		}
	}
	return NULL;
}

/* One argument as MHD hands it to the _n iterator (KEY_SIZE and
 * VALUE_SIZE are the decoded lengths, so a %00 shows as a size larger than
 * the string). */
int nt_srv_query_arg(struct nt_query_check *q, const char *key, size_t key_size, const char *value,
		     size_t value_size)
{
	bool allowed = false;

	if (!key)
		return 0;
	/* A %00 decodes to a NUL that would end the value early
	 * (interval_ms=10%00 read as 10): refused, not cut. */
	if (strlen(key) != key_size || (value && strlen(value) != value_size)) {
		snprintf(q->bad, q->badsize, "%s", key);
		q->why = NT_QUERY_NUL;
		return NT_EINVALID;
	}
	for (const char *const *a = q->route->query; a && *a; a++)
		if (strcmp(*a, key) == 0)
			allowed = true;
	if (!allowed) {
		snprintf(q->bad, q->badsize, "%s", key);
		return NT_EINVALID;
	}
	/* A repeated parameter is ambiguous (which one wins?): refused. */
	for (int i = 0; i < q->nseen; i++) {
		if (strcmp(q->seen[i], key) == 0) {
			snprintf(q->bad, q->badsize, "%s", key);
			q->why = NT_QUERY_REPEATED;
			return NT_EINVALID;
		}
	}
	if (q->nseen < (int)(sizeof(q->seen) / sizeof(q->seen[0])))
		q->seen[q->nseen++] = key;
	return 0;
}

static enum MHD_Result query_check_cb(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
				      const char *value, size_t value_size)
{
	return nt_srv_query_arg(cls, key, key_size, value, value_size) < 0 ? MHD_NO : MHD_YES;
}

int nt_srv_check_query(struct MHD_Connection *mc, const nt_route *route, char *bad,
		       size_t badsize, enum nt_query_fault *why)
{
	struct nt_query_check q = { .route = route, .bad = bad, .badsize = badsize };
	bad[0] = '\0';
	MHD_get_connection_values_n(mc, MHD_GET_ARGUMENT_KIND, query_check_cb, &q);
	*why = q.why;
	return bad[0] ? NT_EINVALID : 0;
}
