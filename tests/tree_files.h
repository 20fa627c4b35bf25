/* SPDX-License-Identifier: Apache-2.0 */
/* Small files in a test's own host tree (a temporary copy of a fixture):
 * write one, or read one back whole. */
#ifndef NT_TEST_TREE_FILES_H
#define NT_TEST_TREE_FILES_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* Write TEXT to ROOT/REL; a test that cannot even do that stops. */
static inline void tree_write(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

/* ROOT/REL's first 64 KiB, malloc'd and NUL-terminated; NULL when it
 * cannot be opened. */
static inline char *tree_read(const char *root, const char *rel)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = calloc(1, 65536);
	size_t n = buf ? fread(buf, 1, 65535, f) : 0;
	if (buf)
		buf[n] = '\0';
	fclose(f);
	return buf;
}

#endif
