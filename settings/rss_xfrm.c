/* SPDX-License-Identifier: Apache-2.0 */
/* The RSS input transformation: one kind, "rss_xfrm", the rss[] entries'
 * "input_xfrm" (settings/rss.c reads the section and calls the two
 * helpers at the end). Targets:
 *   "IFACE/input-xfrm"            the NIC's own table's;
 *   "IFACE/context-N/input-xfrm"  RSS context N's;
 * values "none", "sym-xor" (symmetric-xor: the source and destination
 * fields XORed before hashing, so both directions of a flow land on one
 * queue; Linux 6.8), "sym-or-xor" (6.15), or "0xNN" for bits nettune has
 * no word for (read back, put back by a rollback as they were).
 *
 * Read through the ioctl (struct ethtool_rxfh's input_xfrm, 6.8), set
 * through RSS_SET where the kernel has it (6.17) or ETHTOOL_SRSSH with
 * only input_xfrm changed (kernel/rss.h). A kernel older than the value
 * needs is refused at the profile (422 naming the field, the NIC and the
 * release), nothing applied: its ioctl has no such field (the byte is
 * reserved and must be 0), so nothing could be set or read back. Planned
 * after the tables and contexts (order 13: a context the same profile
 * makes exists by then) and before the flow rules. */
#include "settings/rss_xfrm.h"
#include "kernel/rss.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* TARGET as IFNAME and context *CID (0: the NIC's own table). */
static int split(const char *target, char *ifname, uint32_t *cid)
{
	const char *slash = target ? strchr(target, '/') : NULL;
	if (!slash || (size_t)(slash - target) >= IF_NAMESIZE)
		return NT_EINVALID;
	memcpy(ifname, target, (size_t)(slash - target));
	ifname[slash - target] = '\0';
	if (!nt_ifname_valid(ifname))
		return NT_EINVALID;
	*cid = 0;
	if (!strcmp(slash + 1, "input-xfrm"))
		return 0;
	const char *num = slash + 1;
	char *end;
	if (strncmp(num, "context-", 8) || num[8] < '1' || num[8] > '9')
		return NT_EINVALID;
	errno = 0;
	unsigned long id = strtoul(num + 8, &end, 10);
	if (errno || id > 65535 || strcmp(end, "/input-xfrm"))
		return NT_EINVALID;
	*cid = (uint32_t)id;
	return 0;
}

static int xfrm_parse(const char *text, nt_value *out)
{
	uint8_t x;
	memset(out, 0, sizeof(*out));
	if (nt_rss_xfrm_parse(text, &x) < 0)
		return NT_EPARSE;
	nt_rss_xfrm_format(x, out->text, sizeof(out->text));
	return 0;
}

static int xfrm_format(const nt_value *v, char *out, size_t size)
{
	int n = snprintf(out, size, "%s", v->text);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

static bool xfrm_equal(const nt_value *a, const nt_value *b)
{
	return strcmp(a->text, b->text) == 0;
}

/* A context that is not there reads "none": the value its rollback puts
 * back while the context lives, before the rss step's rollback deletes
 * it. */
static int xfrm_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	char ifname[IF_NAMESIZE];
	uint32_t cid;
	nt_rss r;
	(void)eh;
	memset(out, 0, sizeof(*out));
	int e = split(target, ifname, &cid);
	if (e < 0)
		return e;
	e = cid ? nt_rss_context_read(ctx, ifname, cid, &r) : nt_rss_read(ctx, ifname, &r);
	if (e == -ENOENT && cid) {
		nt_rss_xfrm_format(0, out->text, sizeof(out->text));
		return 0;
	}
	if (e < 0)
		return e;
	nt_rss_xfrm_format(r.input_xfrm, out->text, sizeof(out->text));
	nt_rss_free(&r);
	return 0;
}

static int xfrm_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		      const nt_value *v, char *why, size_t whysize)
{
	char ifname[IF_NAMESIZE], rel[64];
	uint32_t cid;
	uint8_t x;
	(void)eh;
	(void)t;
	if (split(target, ifname, &cid) < 0) {
		snprintf(why, whysize, "'%s' is not an input transformation target (IFACE/input-xfrm or "
				       "IFACE/context-N/input-xfrm)", target);
		return NT_EINVALID;
	}
	if (nt_rss_xfrm_parse(v->text, &x) < 0) {
		snprintf(why, whysize, "'%s' is not an input transformation", v->text);
		return NT_EINVALID;
	}
	if (nt_rss_kernel_lacks(ctx, nt_rss_xfrm_since(x), rel, sizeof(rel))) {
		snprintf(why, whysize, "%s: input_xfrm %s needs Linux %s or later (this kernel is %s)", ifname,
			 v->text, nt_rss_xfrm_since(x), rel);
		return NT_EINVALID;
	}
	return 0;
}

static int xfrm_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		      size_t errsize)
{
	char ifname[IF_NAMESIZE];
	uint32_t cid;
	uint8_t x;
	if (split(target, ifname, &cid) < 0 || nt_rss_xfrm_parse(v->text, &x) < 0) {
		snprintf(err, errsize, "'%s' = '%s' is not an input transformation", target, v->text);
		return NT_EINVALID;
	}
	return nt_rss_write_xfrm(eh, ctx, ifname, cid, x, err, errsize);
}

const nt_setting_kind nt_setting_rss_xfrm = {
	.name = "rss_xfrm",
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the NIC is a link of this namespace",
	.parse = xfrm_parse,
	.format = xfrm_format,
	.equal = xfrm_equal,
	.read = xfrm_read,
	.check = xfrm_check,
	.apply = xfrm_apply,
	/* After the tables and contexts (12: a context this profile makes is
	 * there), before the flow rules (14). */
	.order = 13,
	/* 6.17 notifies it (ETHTOOL_MSG_RSS_NTF); older kernels do not, and
	 * the periodic check finds a change. */
	.events = NT_SETTING_EVENT(NT_EVENT_ETHTOOL),
};

/* ---- the rss[] field ---- */

void nt_rss_xfrm_check_entry(nt_section_check *c, const json_t *e, const char *base)
{
	json_t *x = json_object_get(e, "input_xfrm");
	char path[NT_JSONPATH_MAX];
	uint8_t v;
	if (!x)
		return;
	snprintf(path, sizeof(path), "%s.input_xfrm", base);
	if (!json_is_string(x) || nt_rss_xfrm_parse(json_string_value(x), &v) < 0 ||
	    json_string_value(x)[0] == '0')
		nt_sc_error(c, path, "'input_xfrm' is \"none\", \"sym-xor\" or \"sym-or-xor\"");
}

void nt_rss_xfrm_check_nic(nt_section_check *c, const json_t *e, const char *base, const nt_nic *nic,
			   uint32_t indir_size)
{
	const char *text = json_string_value(json_object_get(e, "input_xfrm"));
	char path[NT_JSONPATH_MAX], rel[64];
	uint8_t v;
	if (!text || nt_rss_xfrm_parse(text, &v) < 0)
		return;
	snprintf(path, sizeof(path), "%s.input_xfrm", base);
	/* As for a table: a NIC without one is sent no SRSSH at all (Debian
	 * 12's virtio_net wedges on one; see settings/rss.c). */
	if (indir_size == 0)
		nt_sc_error(c, path, "%s has no RSS indirection table (size 0): nettune sends it no input_xfrm "
				     "(a virtio NIC needs rss=on)", nic->name);
	else if (nt_rss_kernel_lacks(&c->t->ctx, nt_rss_xfrm_since(v), rel, sizeof(rel)))
		nt_sc_error(c, path, "%s: input_xfrm \"%s\" needs Linux %s or later (this kernel is %s; its ioctl "
				     "and ethtool netlink carry no such field)",
			    nic->name, text, nt_rss_xfrm_since(v), rel);
}

int nt_rss_xfrm_desire(nt_section_plan *p, const json_t *e, size_t i, const nt_nic *nic)
{
	const char *text = json_string_value(json_object_get(e, "input_xfrm"));
	json_t *cx = json_object_get(e, "context");
	char path[NT_JSONPATH_MAX], target[NT_TARGET_MAX];
	nt_value v;
	if (!text)
		return 0;
	if (xfrm_parse(text, &v) < 0)
		return NT_EINVALID;
	if (cx)
		snprintf(target, sizeof(target), "%s/context-%lld/input-xfrm", nic->name,
			 (long long)json_integer_value(cx));
	else
		snprintf(target, sizeof(target), "%s/input-xfrm", nic->name);
	snprintf(path, sizeof(path), "$.rss[%zu].input_xfrm", i);
	return nt_desire_put(p, &nt_setting_rss_xfrm, target, nic->name, &v, path);
}

const nt_setting_module nt_module_rss_xfrm = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_rss_xfrm, NULL },
	/* Its field is read with the rest of an rss[] entry (settings/rss.c). */
	.sections = (const nt_profile_section *const[]){ NULL },
};
