/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the configuration file of `nettune serve`
 * (cli/config.c), whose values go through the command line's option
 * readers (cli/options.c). What it accepts must be what the option table
 * allows: only configuration keys set, numbers within their bounds, enums
 * one of their words, strings inside the text; what it refuses names the
 * file and line. */
#include "cli/cli.h"
#include "cli/config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	cli_opts o, merged;

	/* nt_conf_load refuses a NUL byte; the parser sees text. */
	if (memchr(data, '\0', size))
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&o, 0, sizeof(o));
	err[0] = '\0';
	int r = nt_conf_parse(text, "fuzz.conf", &o, err, sizeof(err));
	if (r != 0 && r != -EINVAL)
		abort();
	if (r < 0 && strncmp(err, "fuzz.conf:", 10) != 0)
		abort();
	for (const nt_cli_option *opt = nt_cli_options; opt->name; opt++) {
		size_t i = (size_t)(opt - nt_cli_options);
		if (!o.set[i])
			continue;
		if (!(opt->flags & NT_OPT_CONF))
			abort(); /* set from the file, but not a key of it */
		const char *field = (const char *)&o + opt->off;
		switch (opt->kind) {
		case NT_OPT_LONG: {
			long v;
			memcpy(&v, field, sizeof(v));
			if (v < opt->lo || v > opt->hi)
				abort();
			break;
		}
		case NT_OPT_ENUM: {
			int v, n = 0;
			memcpy(&v, field, sizeof(v));
			while (opt->choices[n])
				n++;
			if (v < 0 || v >= n)
				abort();
			break;
		}
		case NT_OPT_STR: {
			const char *s;
			memcpy(&s, field, sizeof(s));
			if (s && (s < text || s > text + size))
				abort(); /* a value that does not point into the text */
			break;
		}
		default:
			break;
		}
	}
	if (r == 0) {
		memset(&merged, 0, sizeof(merged));
		nt_cli_options_merge(&merged, &o);
		if (memcmp(merged.set, o.set, sizeof(o.set)) != 0)
			abort();
	}
	free(text);
	return 0;
}
