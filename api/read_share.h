/* SPDX-License-Identifier: Apache-2.0 */
/* One read of the host shared by the requests that arrive while it waits
 * to start (the read area's state, api/routes_read.c).
 *
 * On a big host a read costs milliseconds of small-file I/O (every IRQ's
 * affinity), so eight clients asking for /v1/topology at once would make
 * eight reads of the same host in the same moment and queue behind each
 * other on two cores. Instead, a request joins the read in progress only if
 * that read started after the request arrived; otherwise it waits for it to
 * end and joins (or starts) the next one. So every answer is as fresh as a
 * read of its own would have been — nothing older than the request is ever
 * served — while N concurrent requests cost about one read, not N. The
 * documents made of a snapshot (topology, NICs, IRQs as text) are also
 * rendered once per snapshot. A snapshot is freed by its last reader: idle,
 * nothing is kept. */
#ifndef NT_API_READ_SHARE_H
#define NT_API_READ_SHARE_H

#include "host/topology.h"
#include "kernel/ctx.h"

#include <stddef.h>

typedef struct nt_read_share nt_read_share;
typedef struct nt_snapshot nt_snapshot;

/* Documents a snapshot renders once for all its readers. */
typedef enum { NT_DOC_TOPOLOGY, NT_DOC_NICS, NT_DOC_IRQS, NT_DOC_COUNT } nt_snapshot_doc;

/* Reads of the host under CTX (borrowed: it must outlive the share). */
int nt_read_share_new(const nt_ctx *ctx, nt_read_share **out);
void nt_read_share_free(nt_read_share *s);

/* A snapshot read after this call began, shared with concurrent callers.
 * Returns 0 with *OUT (release with nt_snapshot_put), or the read's -errno. */
int nt_read_share_get(nt_read_share *s, nt_snapshot **out);
/* The host model of SNAP: read-only, valid until nt_snapshot_put. */
const nt_topology *nt_snapshot_topology(const nt_snapshot *snap);
/* Document DOC of SNAP, rendered on first use and then the same bytes for
 * every reader: valid until the caller's nt_snapshot_put (a reply hands
 * it to the server as its body, and puts the snapshot once it is sent),
 * its length in *LEN when LEN is not NULL; NULL when out of memory. */
const char *nt_snapshot_text(nt_snapshot *snap, nt_snapshot_doc doc, size_t *len);
void nt_snapshot_put(nt_snapshot *snap);

/* How many reads were made, and how many callers were served (for tests:
 * reads < served shows the sharing). */
void nt_read_share_stats(nt_read_share *s, unsigned long *reads, unsigned long *served);

#endif
