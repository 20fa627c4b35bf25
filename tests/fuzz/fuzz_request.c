/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the request path as the server takes it apart: the
 * request target split into percent-decoded segments, then matched against
 * every route of every area (path parameters, HEAD served by GET, the Allow
 * list of a 405). The first byte picks the method. */
#include "api/server_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* As api/server.c serves them. */
static const nt_area *const areas[] = { &nt_area_read, &nt_area_place, &nt_area_txn,
					&nt_area_desired, &nt_area_metrics, &nt_area_doc,
					&nt_area_ui };
static const char *const methods[] = { "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "BREW" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nt_conn *c;
	char allow[64];

	if (size < 1)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return 0;
	c->path = malloc(size);
	if (!c->path) {
		free(c);
		return 0;
	}
	memcpy(c->path, data + 1, size - 1);
	c->path[size - 1] = '\0';
	if (nt_srv_split_path(c) == 0) {
		const char *m = methods[data[0] % (sizeof(methods) / sizeof(methods[0]))];
		const nt_route *r = nt_srv_find_route(areas, (int)(sizeof(areas) / sizeof(areas[0])),
						      c, m, allow, sizeof(allow));
		if (r && (c->req.nparams < 0 || c->req.nparams > 4))
			abort();
		for (int i = 0; r && i < c->req.nparams; i++)
			if (!c->req.params[i] || !c->req.params[i][0])
				abort(); /* a parameter matches one non-empty segment */
	}
	for (int i = 0; i < c->nalloc; i++)
		free(c->segs[i]);
	free(c->path);
	free(c);
	return 0;
}
