/* SPDX-License-Identifier: Apache-2.0 */
/* The CLI's pure parsers of option values (declared in cli/cli.h), apart
 * from main.c so unit tests can link them. */
#include "cli/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int nt_cli_parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

int nt_cli_parse_since(const char *s, long long now_ms, long long *out_ms)
{
	char *end;
	struct tm tm;
	const char *p;

	/* A duration back from now: 90s, 30m, 12h, 7d. */
	if (*s >= '0' && *s <= '9') {
		errno = 0;
		long long v = strtoll(s, &end, 10);
		long long unit = 0;
		if (!errno && end[0] && !end[1]) {
			switch (*end) {
			case 's': unit = 1000; break;
			case 'm': unit = 60 * 1000; break;
			case 'h': unit = 3600 * 1000; break;
			case 'd': unit = 86400 * 1000; break;
			}
		}
		if (unit && v <= 100LL * 365 * 86400) {
			*out_ms = now_ms - v * unit;
			return 0;
		}
	}
	/* A UTC date or time: 2026-11-30, 2026-11-30T16:00, 2026-11-30 16:00:05Z. */
	static const char *const fmts[] = { "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M",
					    "%Y-%m-%d %H:%M", "%Y-%m-%d" };
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		memset(&tm, 0, sizeof(tm));
		p = strptime(s, fmts[i], &tm);
		if (p && (!*p || (p[0] == 'Z' && !p[1]))) {
			*out_ms = (long long)timegm(&tm) * 1000;
			return 0;
		}
	}
	return -EINVAL;
}

int nt_cli_parse_window_ms(const char *s, long lo, long hi, long *out_ms)
{
	char *end;
	long long unit = 1000;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (!strcmp(end, "ms"))
		unit = 1;
	else if (!strcmp(end, "m"))
		unit = 60 * 1000;
	else if (*end && strcmp(end, "s"))
		return -EINVAL;
	if (v > hi || v * unit < lo || v * unit > hi)
		return -EINVAL;
	*out_ms = (long)(v * unit);
	return 0;
}
