/* SPDX-License-Identifier: Apache-2.0 */
/* Typed query parameters. */
#include "api/http.h"
#include "kernel/ctx.h"

int nt_query_int(const nt_request *req, const char *name, int lo, int hi, int def, int *out)
{
	return nt_query_parse_int(nt_query(req, name), lo, hi, def, out);
}

int nt_query_parse_int(const char *s, int lo, int hi, int def, int *out)
{
	long v = 0;

	if (!s) {
		*out = def;
		return 0;
	}
	/* Strict decimal: no sign, no spaces, no trailing bytes. */
	if (!*s)
		return NT_EINVALID;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return NT_EINVALID;
		v = v * 10 + (*p - '0');
		if (v > hi)
			return NT_EINVALID;
	}
	if (v < lo)
		return NT_EINVALID;
	*out = (int)v;
	return 0;
}
