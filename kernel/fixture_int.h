/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the fixture kernel: what the files of kernel/fixture*.c share,
 * one file per kind of state a fixture root emulates (fixture.c: the
 * ethtool documents, attribute files, IRQ affinity, bonding options;
 * fixture_features.c, fixture_rss.c, fixture_flows.c, fixture_qdisc.c).
 * Private to them; callers use kernel/fixture.h. */
#ifndef NT_FIXTURE_INT_H
#define NT_FIXTURE_INT_H

#include "kernel/ctx.h"

#include <jansson.h>
#include <stddef.h>

/* TEXT into ERR (when given), as the kernel's extended error would be. */
void nt_fx_set_err(char *err, size_t errsize, const char *text);
/* ROOT/ethtool/IFNAME.json parsed into *ROOTP (the caller's reference).
 * Returns 0, -EOPNOTSUPP without the file, NT_EPARSE when it is not an
 * object, or -errno. */
int nt_fx_parse(const nt_ctx *ctx, const char *ifname, json_t **rootp);
/* The read's memo behind nt_ctx.fx_memo, for nt_kernel_read_begin and
 * _end: new allocates an empty one (0 or -ENOMEM); free drops its
 * documents (NULL is fine). */
struct nt_fx_memo;
int nt_fx_memo_new(struct nt_fx_memo **out);
void nt_fx_memo_free(struct nt_fx_memo *m);
/* The same, answered from the read's memo when CTX carries one
 * (kernel/fixture_memo.c, nt_kernel_read_begin): the document parsed once
 * for the whole read. The reference is shared: read it, never change it. */
int nt_fx_memo_doc(const nt_ctx *ctx, const char *ifname, json_t **rootp);
/* The same from the documents kept between reads (kernel/fixture_docs.c):
 * the kept one while the file reads as it did, else the file parsed (and
 * kept when it has settled). The reference is shared, as above. */
int nt_fx_docs_get(const nt_ctx *ctx, struct nt_fx_docs *d, const char *ifname, json_t **rootp);
/* ROOT/ethtool/IFNAME.json into *ROOTP (the caller's reference) and its
 * object SECTION into *SECP (borrowed), for reading: from the read's memo
 * when there is one. Returns 0, -EOPNOTSUPP when the file or the section
 * is missing, NT_EPARSE when either is not an object, or -errno. */
int nt_fx_load(const nt_ctx *ctx, const char *section, const char *ifname, json_t **rootp, json_t **secp);
/* The same for a write: always parsed afresh, the caller's to change. */
int nt_fx_load_edit(const nt_ctx *ctx, const char *section, const char *ifname, json_t **rootp,
		    json_t **secp);
/* Whether IFNAME's document ROOT may go to RX (rx + combined) channels,
 * as ethtool_check_max_channel decides for ETHTOOL_SCHANNELS and
 * CHANNELS_SET: not while a user-set RSS table, an RSS context or a flow
 * rule names RX queue RX or above (fixture_rss.c). Returns 0, or -EINVAL
 * with the kernel's text in ERR. */
int nt_fx_channels_fit(json_t *root, uint32_t rx, char *err, size_t errsize);
/* ROOT/ethtool/IFNAME.json replaced by ROOT at once. Returns 0 or -errno. */
int nt_fx_save(const nt_ctx *ctx, const char *ifname, json_t *root);
/* ROOT/ethtool/IFNAME.json replaced by TEXT in one rename. */
int nt_fx_write_atomic(const nt_ctx *ctx, const char *ifname, const char *text);

#endif
