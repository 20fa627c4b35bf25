/* SPDX-License-Identifier: Apache-2.0 */
/* See kernel/nlparse.h. */
#include "kernel/nlparse.h"
#include "base/errors.h"

#include <string.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

int nt_nla_walk(const unsigned char *p, size_t len, nt_nla_fn fn, void *ud)
{
	size_t off = 0;
	while (len - off >= NLA_HDRLEN) {
		struct nlattr a;
		memcpy(&a, p + off, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > len - off)
			return -1;
		int r = fn(ud, a.nla_type & NLA_TYPE_MASK, p + off + NLA_HDRLEN, a.nla_len - NLA_HDRLEN);
		if (r < 0)
			return r;
		size_t step = NLA_ALIGN((size_t)a.nla_len);
		if (step > len - off)
			break; /* the last attribute's padding may be left out */
		off += step;
	}
	return 0;
}

/* The code an NLMSG_ERROR (or a DONE that carries one) of LEN bytes at P
 * holds: its -errno, 0 for an ACK, NT_EPARSE when too short for one. */
static int msg_error(const unsigned char *p, size_t len)
{
	int e;
	if (len < NLMSG_LENGTH(sizeof(int)))
		return NT_EPARSE;
	memcpy(&e, p + NLMSG_HDRLEN, sizeof(e));
	return e > 0 ? -e : e;
}

int nt_genl_walk(const void *buf, size_t len, int family, nt_genl_msg_fn fn, void *ud)
{
	const unsigned char *p = buf;
	size_t off = 0;
	while (len - off >= NLMSG_HDRLEN) {
		struct nlmsghdr h;
		memcpy(&h, p + off, sizeof(h));
		if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len - off)
			return NT_EPARSE;
		if (h.nlmsg_type == NLMSG_DONE) {
			/* A dump that failed part way says so in its DONE. */
			int e = h.nlmsg_len >= NLMSG_LENGTH(sizeof(int)) ? msg_error(p + off, h.nlmsg_len) : 0;
			return e < 0 ? e : 1;
		}
		if (h.nlmsg_type == NLMSG_ERROR) {
			int e = msg_error(p + off, h.nlmsg_len);
			if (e != 0)
				return e;
		} else if (family > 0 && h.nlmsg_type == (unsigned)family) {
			int r;
			if (h.nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN)) {
				r = fn(ud, -1, NULL, 0);
			} else {
				struct genlmsghdr g;
				memcpy(&g, p + off + NLMSG_HDRLEN, sizeof(g));
				size_t a = NLMSG_LENGTH(GENL_HDRLEN);
				r = fn(ud, g.cmd, p + off + a, h.nlmsg_len - a);
			}
			if (r != 0)
				return r;
		}
		size_t step = NLMSG_ALIGN((size_t)h.nlmsg_len);
		if (step > len - off)
			break;
		off += step;
	}
	return 0;
}
