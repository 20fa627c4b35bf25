/* SPDX-License-Identifier: Apache-2.0 */
#include "host/cpustat.h"
#include "base/cpuset.h"
#include "base/errors.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The fields of a cpuN row after the name, in the kernel's order. */
#define FIELDS 8

static int parse_row(const char *s, const char *e, nt_cpu_time *t)
{
	uint64_t v[FIELDS] = { 0 };
	int got = 0;
	char *end;

	if (!isdigit((unsigned char)*s))
		return NT_EPARSE;
	errno = 0;
	long cpu = strtol(s, &end, 10);
	if (errno || end > e || cpu < 0 || cpu >= NT_MAX_CPUS || (end < e && !isspace((unsigned char)*end)))
		return NT_EPARSE;
	s = end;
	while (s < e) {
		while (s < e && isspace((unsigned char)*s))
			s++;
		if (s >= e)
			break;
		if (!isdigit((unsigned char)*s))
			return NT_EPARSE;
		errno = 0;
		unsigned long long x = strtoull(s, &end, 10);
		if (errno || end > e)
			return NT_EPARSE;
		/* guest and guest_nice (and whatever a later kernel adds)
		 * are read past, not kept. */
		if (got < FIELDS)
			v[got] = x;
		got++;
		s = end;
	}
	if (got < 4)
		return NT_EPARSE;
	*t = (nt_cpu_time){ .cpu = (int)cpu, .user = v[0], .nice = v[1], .system = v[2], .idle = v[3],
			    .iowait = v[4], .irq = v[5], .softirq = v[6], .steal = v[7] };
	return 0;
}

int nt_cpustat_parse(const char *text, nt_cpu_time **out, int *n)
{
	nt_cpu_time *rows = NULL;
	int count = 0, cap = 0, r = NT_EPARSE;
	nt_cpuset seen;

	*out = NULL;
	*n = 0;
	nt_cpuset_zero(&seen);
	for (const char *p = text; p && *p;) {
		const char *e = strchr(p, '\n');
		if (!e)
			e = p + strlen(p);
		/* "cpuN": the "cpu" row of all CPUs has a space there. */
		if (e - p > 3 && !strncmp(p, "cpu", 3) && isdigit((unsigned char)p[3])) {
			nt_cpu_time t;
			if ((r = parse_row(p + 3, e, &t)) < 0)
				goto fail;
			if (nt_cpuset_isset(&seen, t.cpu)) {
				r = NT_EPARSE;
				goto fail;
			}
			nt_cpuset_set(&seen, t.cpu);
			if (count == cap) {
				int nc = cap ? cap * 2 : 16;
				nt_cpu_time *nr = realloc(rows, (size_t)nc * sizeof(*rows));
				if (!nr) {
					r = -ENOMEM;
					goto fail;
				}
				rows = nr;
				cap = nc;
			}
			rows[count++] = t;
		}
		p = *e ? e + 1 : e;
	}
	if (count == 0) {
		r = NT_EPARSE;
		goto fail;
	}
	*out = rows;
	*n = count;
	return 0;
fail:
	free(rows);
	return r;
}
