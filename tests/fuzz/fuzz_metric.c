/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the figure bench-run --compare reads from a
 * benchmark's output (cli/metric.c): iperf3's JSON, netperf's classic
 * table, -k, -o and -O outputs, a JSON path, a regular expression. The
 * first byte picks the reader; for a JSON path the path runs to the first
 * newline, for a regular expression the second byte picks one of a few
 * (a user's expression is the user's: its cost is not the reader's). A
 * figure read must be a finite number with its unit and reader named; so
 * must every other figure (nt_metric_others_read), 0 or more, its name
 * and unit NUL-terminated. neper's key=value lines too. */
#include "cli/metric.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const regexes[] = {
	"([0-9.]+) Gbits/sec",
	"THROUGHPUT=([^ ]*)",
	"^ *([-+0-9.eE]+)",
	"rate[:=] *([^ ,]+)",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], path[256] = "";
	const char *arg = NULL;
	nt_metric m;

	if (size < 1)
		return 0;
	enum nt_metric_source src = (enum nt_metric_source)(data[0] % 6);
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	if (src == NT_METRIC_JSON) {
		const char *nl = memchr(text, '\n', len);
		size_t pl = nl ? (size_t)(nl - text) : len;
		if (pl >= sizeof(path))
			return 0;
		memcpy(path, text, pl);
		path[pl] = '\0';
		arg = path;
		text += nl ? pl + 1 : pl;
		len -= nl ? pl + 1 : pl;
	} else if (src == NT_METRIC_REGEX) {
		if (len < 1)
			return 0;
		arg = regexes[(unsigned char)text[0] % (sizeof(regexes) / sizeof(regexes[0]))];
		text++;
		len--;
	}
	err[0] = '\0';
	int r = nt_metric_read(src, arg, text, len, &m, err, sizeof(err));
	if (r == 0) {
		if (!isfinite(m.value))
			abort(); /* an infinite or NaN figure taken as a result */
		if (!memchr(m.unit, '\0', sizeof(m.unit)) || !m.source[0])
			abort();
	} else if (r == -ENOENT || r == -EINVAL) {
		if (!err[0])
			abort(); /* no figure, and no word why */
	} else {
		abort();
	}
	nt_metric_others o;
	nt_metric_others_read(src, text, len, &o);
	if (o.n > NT_METRIC_MAX_OTHERS)
		abort();
	for (size_t i = 0; i < o.n; i++)
		if (!(o.m[i].value >= 0) || !isfinite(o.m[i].value) || !memchr(o.m[i].name, '\0', sizeof(o.m[i].name)) ||
		    !o.m[i].name[0] || !memchr(o.m[i].unit, '\0', sizeof(o.m[i].unit)))
			abort();
	return 0;
}
