/* SPDX-License-Identifier: Apache-2.0 */
/* Room for one more entry in a growing array: the one idiom behind the
 * readers' lists (queues, NAPIs, counters, placed IRQs), written once. */
#ifndef NT_BASE_GROW_H
#define NT_BASE_GROW_H

#include <errno.h>
#include <stdlib.h>

/* Room for entry N of SIZE bytes in *V (*CAP allocated): doubles *CAP
 * (FIRST when none yet) when full. 0 or -ENOMEM, *V unchanged then. */
static inline int nt_grow(void **v, size_t n, size_t *cap, size_t size, size_t first)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : first;
	void *g = realloc(*v, c * size);
	if (!g)
		return -ENOMEM;
	*v = g;
	*cap = c;
	return 0;
}

#endif
