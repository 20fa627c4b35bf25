/* SPDX-License-Identifier: Apache-2.0 */
/* Running the tools an operator would use (ethtool, ip) from live tests,
 * to check the agent against them rather than against itself. */
#ifndef NT_TEST_LIVE_TOOL_H
#define NT_TEST_LIVE_TOOL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Run a shell command, return its stdout (malloc'd) or NULL when it failed. */
static inline char *run(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	if (!p || !buf) {
		if (p)
			pclose(p);
		free(buf);
		return NULL;
	}
	for (;;) {
		if (len + 1024 > cap) {
			cap *= 2;
			char *nb = realloc(buf, cap);
			if (!nb)
				break;
			buf = nb;
		}
		size_t n = fread(buf + len, 1, cap - len - 1, p);
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	if (pclose(p) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Run a shell command; its exit status, -1 when it did not exit. */
static inline int sh(const char *cmd)
{
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#endif
