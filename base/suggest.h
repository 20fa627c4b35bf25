/* SPDX-License-Identifier: Apache-2.0 */
/* "Did you mean": the known word a mistyped one most likely stands for. */
#ifndef NT_BASE_SUGGEST_H
#define NT_BASE_SUGGEST_H

#include <stddef.h>

/* The optimal string alignment distance between A and B (insertions,
 * deletions, substitutions and swaps of two neighbours, one each), or
 * more than LIMIT once it is known to be (both up to 64 bytes: longer
 * ones are LIMIT + 1). Pure. */
int nt_edit_distance(const char *a, const char *b, int limit);

/* Of the N words of WORDS, the one closest to WORD when it is close enough
 * to be a typo of it: at most 2 edits away, and fewer than half of WORD's
 * length. NULL when none is (or WORD is one of them). The first of equally
 * close ones wins. Borrowed from WORDS. Pure. */
const char *nt_suggest(const char *word, const char *const *words, size_t n);

#endif
