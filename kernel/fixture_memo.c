/* SPDX-License-Identifier: Apache-2.0 */
/* One read of a fixture root answering from one state: each NIC's ethtool
 * document parsed once for the whole read instead of once per question.
 *
 * A host read asks every NIC half a dozen questions (channels, rings,
 * coalescing, RSS, features, the link's MTU range and root qdisc). The live
 * kernel answers each from the device's state; the tree answers each from
 * ROOT/ethtool/IF.json, and parsing that document (an RSS table of
 * hundreds of entries) once per question made the tree's emulation, not
 * the agent, most of a host read's cost. Within one read nothing writes, so
 * the first parse stands for the rest; the memo ends with the read, so a
 * document changed between two reads (a test, the agent's own write) is
 * read afresh by the next one. Where the context carries documents kept
 * between reads (kernel/fixture_docs.c), the memo's first answer comes
 * from there, and only a changed file is parsed again. Writes never go through the memo. Only
 * the read's NIC half asks the kernel about NICs (the IRQ half reads IRQ
 * files and /proc/interrupts), so the memo has one thread and no lock. */
#include "kernel/kernel.h"
#include "kernel/fixture_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <net/if.h>

struct nt_fx_memo {
	int n, cap;
	struct fx_doc {
		char ifname[IF_NAMESIZE];
		json_t *root; /* NULL with err */
		int err;
	} *docs;
};

int nt_fx_memo_new(struct nt_fx_memo **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void nt_fx_memo_free(struct nt_fx_memo *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->n; i++)
		json_decref(m->docs[i].root);
	free(m->docs);
	free(m);
}

/* IFNAME's entry, added with its document parsed when missing. NULL when
 * memory ran out. */
static struct fx_doc *memo_entry(const nt_ctx *ctx, struct nt_fx_memo *m, const char *ifname)
{
	for (int i = 0; i < m->n; i++)
		if (strcmp(m->docs[i].ifname, ifname) == 0)
			return &m->docs[i];
	if (m->n == m->cap) {
		int cap = m->cap ? m->cap * 2 : 16;
		struct fx_doc *d = realloc(m->docs, sizeof(*d) * (size_t)cap);
		if (!d)
			return NULL;
		m->docs = d;
		m->cap = cap;
	}
	struct fx_doc *d = &m->docs[m->n++];
	memset(d, 0, sizeof(*d));
	strcpy(d->ifname, ifname);
	d->err = ctx->fx_docs ? nt_fx_docs_get(ctx, ctx->fx_docs, ifname, &d->root) :
				nt_fx_parse(ctx, ifname, &d->root);
	return d;
}

int nt_fx_memo_doc(const nt_ctx *ctx, const char *ifname, json_t **rootp)
{
	struct nt_fx_memo *m = ctx->fx_memo;

	*rootp = NULL;
	if (!m || strlen(ifname) >= IF_NAMESIZE)
		return nt_fx_parse(ctx, ifname, rootp);
	struct fx_doc *d = memo_entry(ctx, m, ifname);
	if (!d)
		return nt_fx_parse(ctx, ifname, rootp); /* not remembered: still right */
	*rootp = json_incref(d->root);
	return d->err;
}
