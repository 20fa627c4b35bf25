/* SPDX-License-Identifier: Apache-2.0 */
/* A transaction engine of a test's own: a temporary copy of a fixture
 * tree, a store in a temporary state folder, the engine started on both.
 * For the tests that apply a profile and then hold it (the desired state),
 * which each set this up alike. */
#ifndef NT_TEST_ENGINE_UTIL_H
#define NT_TEST_ENGINE_UTIL_H

#include "engine/txn.h"
#include "kernel/ctx.h"
#include "store/store.h"
#include "harness.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	char root[64], state[64];
	nt_ctx ctx;
	nt_store *store;
	nt_txn_engine *e;
} nt_t_engine;

/* Copy NT_FIXTURES/FIXTURE to /tmp/nt-NAME-XXXXXX and start an engine on
 * it; false (a failed check said why) when any part is missing. */
static inline bool nt_t_engine_open(nt_t_engine *h, const char *fixture, const char *name)
{
	char cmd[512], db[128], err[256];
	memset(h, 0, sizeof(*h));
	snprintf(h->root, sizeof(h->root), "/tmp/nt-%s-XXXXXX", name);
	snprintf(h->state, sizeof(h->state), "/tmp/nt-%s-state-XXXXXX", name);
	if (!mkdtemp(h->root) || !mkdtemp(h->state)) {
		CHECK_MSG(false, "mkdtemp for %s", name);
		return false;
	}
	snprintf(cmd, sizeof(cmd), "cp -a %s/%s/. %s/", NT_FIXTURES, fixture, h->root);
	CHECK_INT(system(cmd), 0);
	snprintf(db, sizeof(db), "%s/nettune.db", h->state);
	CHECK_INT(nt_ctx_init(&h->ctx, h->root), 0);
	CHECK_INT(nt_store_open(db, &h->store, err, sizeof(err)), 0);
	CHECK_INT(h->store ? nt_txn_engine_new(&h->ctx, h->store, NULL, &h->e) : -1, 0);
	CHECK_INT(h->e ? nt_txn_engine_start(h->e) : -1, 0);
	return h->e != NULL;
}

/* Stop the engine, close the store, delete both folders. */
static inline void nt_t_engine_close(nt_t_engine *h)
{
	char cmd[300];
	nt_txn_engine_close(h->e);
	nt_store_close(h->store);
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", h->root, h->state);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s and %s\n", h->root, h->state);
}

#endif
