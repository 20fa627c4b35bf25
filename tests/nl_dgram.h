/* SPDX-License-Identifier: Apache-2.0 */
/* A generic netlink datagram built by hand, as the kernel would send it,
 * for the tests of the pure parsers (kernel/netdev.c's dumps, kernel/
 * rss_nl.c's RSS replies): messages of a family with a command, u32 and
 * u64 attributes, one level of nest, NLMSG_DONE and NLMSG_ERROR. */
#ifndef NT_TEST_NL_DGRAM_H
#define NT_TEST_NL_DGRAM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

typedef struct {
	unsigned char b[8192];
	size_t len;
	size_t msg; /* offset of the open message */
	size_t nest; /* offset of the open nest */
} dgram;

__attribute__((unused)) static void msg_begin(dgram *d, uint16_t type, uint8_t cmd)
{
	struct nlmsghdr h = { .nlmsg_type = type, .nlmsg_flags = NLM_F_MULTI, .nlmsg_seq = 2 };
	struct genlmsghdr g = { .cmd = cmd, .version = 1 };
	d->msg = d->len;
	memcpy(d->b + d->len, &h, sizeof(h));
	memcpy(d->b + d->len + NLMSG_HDRLEN, &g, sizeof(g));
	d->len += NLMSG_LENGTH(GENL_HDRLEN);
}

__attribute__((unused)) static void attr(dgram *d, uint16_t type, const void *v, uint16_t n)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + n), .nla_type = type };
	memcpy(d->b + d->len, &a, sizeof(a));
	if (n)
		memcpy(d->b + d->len + NLA_HDRLEN, v, n);
	d->len += NLA_ALIGN(a.nla_len);
}

__attribute__((unused)) static void u32a(dgram *d, uint16_t type, uint32_t v)
{
	attr(d, type, &v, 4);
}

__attribute__((unused)) static void u64a(dgram *d, uint16_t type, uint64_t v)
{
	attr(d, type, &v, 8);
}

__attribute__((unused)) static void nest_begin(dgram *d)
{
	d->nest = d->len;
	d->len += NLA_HDRLEN;
}

__attribute__((unused)) static void nest_end(dgram *d, uint16_t type)
{
	struct nlattr a = { .nla_len = (uint16_t)(d->len - d->nest), .nla_type = (uint16_t)(type | NLA_F_NESTED) };
	memcpy(d->b + d->nest, &a, sizeof(a));
}

/* The open message's length, now that its attributes are in. */
__attribute__((unused)) static void msg_end(dgram *d)
{
	uint32_t len = (uint32_t)(d->len - d->msg);
	memcpy(d->b + d->msg, &len, 4);
}

/* NLMSG_DONE carrying ERR (0: the dump is complete). */
__attribute__((unused)) static void done(dgram *d, int err)
{
	struct nlmsghdr h = { .nlmsg_len = NLMSG_LENGTH(sizeof(int)), .nlmsg_type = NLMSG_DONE };
	memcpy(d->b + d->len, &h, sizeof(h));
	memcpy(d->b + d->len + NLMSG_HDRLEN, &err, sizeof(err));
	d->len += NLMSG_ALIGN(h.nlmsg_len);
}

/* NLMSG_ERROR with ERR (0: an ACK). */
__attribute__((unused)) static void error_msg(dgram *d, int err)
{
	struct nlmsgerr e = { .error = err };
	struct nlmsghdr h = { .nlmsg_len = NLMSG_LENGTH(sizeof(e)), .nlmsg_type = NLMSG_ERROR };
	memcpy(d->b + d->len, &h, sizeof(h));
	memcpy(d->b + d->len + NLMSG_HDRLEN, &e, sizeof(e));
	d->len += NLMSG_ALIGN(h.nlmsg_len);
}

#endif
