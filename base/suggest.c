/* SPDX-License-Identifier: Apache-2.0 */
#include "base/suggest.h"

#include <string.h>

#define MAXLEN 64

int nt_edit_distance(const char *a, const char *b, int limit)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > MAXLEN || lb > MAXLEN)
		return limit + 1;
	if ((int)(la > lb ? la - lb : lb - la) > limit)
		return limit + 1;
	/* Three rows of the dynamic programme: the one before the last is
	 * what a swap of two neighbours reads. */
	int rows[3][MAXLEN + 1];
	int *pp = rows[0], *p = rows[1], *c = rows[2];
	for (size_t j = 0; j <= lb; j++)
		p[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		c[0] = (int)i;
		int best = c[0];
		for (size_t j = 1; j <= lb; j++) {
			int cost = a[i - 1] != b[j - 1];
			int v = p[j - 1] + cost;
			if (p[j] + 1 < v)
				v = p[j] + 1;
			if (c[j - 1] + 1 < v)
				v = c[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && pp[j - 2] + 1 < v)
				v = pp[j - 2] + 1;
			c[j] = v;
			if (v < best)
				best = v;
		}
		if (best > limit)
			return limit + 1;
		int *t = pp;
		pp = p;
		p = c;
		c = t;
	}
	return p[lb] > limit ? limit + 1 : p[lb];
}

const char *nt_suggest(const char *word, const char *const *words, size_t n)
{
	const char *best = NULL;
	int bestd = 3;
	size_t len = strlen(word);
	for (size_t i = 0; i < n; i++) {
		int d = nt_edit_distance(word, words[i], 2);
		if (d == 0)
			return NULL;
		if (d < bestd && (size_t)d * 2 < len) {
			best = words[i];
			bestd = d;
		}
	}
	return best;
}
