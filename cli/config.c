/* SPDX-License-Identifier: Apache-2.0 */
/* The configuration file of `nettune serve` (/etc/nettune/nettune.conf):
 *
 *   # a comment (a whole line)
 *   listen = 127.0.0.1:8470
 *   max_body = 1048576
 *   tokens = "/etc/nettune/tokens"
 *
 * Keys are the options of nt_cli_options marked NT_OPT_CONF, with '_' for
 * '-', and values go through the same nt_cli_option_set as the command
 * line's, so the file and the flags can never accept different things. A
 * '#' only starts a comment at the start of a line: a value (a path) may
 * hold one. Double quotes around a value are taken off. */
#include "cli/config.h"
#include "kernel/regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	char *e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

int nt_conf_parse(char *text, const char *file, cli_opts *o, char *err, size_t errsize)
{
	int first_line[NT_CLI_NOPTS] = { 0 };
	char why[256];
	int lineno = 0;
	char *next = text;

	while (next) {
		char *line = next;
		char *nl = strchr(line, '\n');
		next = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		lineno++;
		line = trim(line);
		if (!*line || *line == '#')
			continue;
		char *eq = strchr(line, '=');
		if (!eq) {
			snprintf(err, errsize, "%s:%d: expected 'key = value', not '%.80s'", file, lineno,
				 line);
			return -EINVAL;
		}
		*eq = '\0';
		char *key = trim(line);
		char *val = trim(eq + 1);
		size_t vl = strlen(val);
		if (vl >= 2 && val[0] == '"' && val[vl - 1] == '"') {
			val[vl - 1] = '\0';
			val++;
		} else if (vl && (val[0] == '"' || val[vl - 1] == '"')) {
			snprintf(err, errsize, "%s:%d: %s: unbalanced quote in '%.80s'", file, lineno, key,
				 val);
			return -EINVAL;
		}
		const nt_cli_option *opt = nt_cli_option_find_key(key);
		if (!opt) {
			snprintf(err, errsize, "%s:%d: unknown key '%.64s'", file, lineno, key);
			return -EINVAL;
		}
		size_t i = (size_t)(opt - nt_cli_options);
		if (first_line[i]) {
			snprintf(err, errsize, "%s:%d: %s is already set on line %d", file, lineno, key,
				 first_line[i]);
			return -EINVAL;
		}
		first_line[i] = lineno;
		/* A flag in the file always has a value (yes/no). */
		if (nt_cli_option_set(opt, val, o, why, sizeof(why)) < 0) {
			snprintf(err, errsize, "%s:%d: %s %s", file, lineno, key, why);
			return -EINVAL;
		}
	}
	return 0;
}

int nt_conf_load(const char *path, cli_opts *o, char **text, char *err, size_t errsize)
{
	char *buf = NULL;
	size_t len = 0;
	int r;

	*text = NULL;
	/* A configuration file is a page or two; a huge one is a mistake
	 * (the wrong path), not something to read into memory. A FIFO is
	 * refused, not waited on: start-up would hang (kernel/regfile.h). */
	r = nt_regfile_read(path, 1024 * 1024, &buf, &len, err, errsize);
	if (r < 0)
		return r;
	if (memchr(buf, '\0', len)) {
		r = -EINVAL;
		snprintf(err, errsize, "%s: holds a NUL byte, not a text file", path);
		goto out;
	}
	r = nt_conf_parse(buf, path, o, err, errsize);
	if (r == 0) {
		*text = buf;
		buf = NULL;
	}
out:
	free(buf);
	return r;
}
