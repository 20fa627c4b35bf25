/* SPDX-License-Identifier: Apache-2.0 */
/* Walking netlink as it arrives, with no socket and no libnl: the pure
 * parsers of the generic netlink families nettune reads (kernel/netdev.c's
 * netdev family and controller, kernel/rss_nl.c's ethtool RSS replies)
 * share these two loops, so each checks lengths one way. Bytes are copied
 * out with memcpy: a datagram's attributes need not be aligned for the
 * host's loads. */
#ifndef NT_KERNEL_NLPARSE_H
#define NT_KERNEL_NLPARSE_H

#include <stddef.h>

/* One attribute: its type (flags masked off) and payload. 0 goes on, a
 * value below 0 stops the walk and is its result. */
typedef int (*nt_nla_fn)(void *ud, int type, const unsigned char *v, size_t n);

/* FN for each attribute of the LEN bytes at P (a message's or a nest's
 * payload). Returns 0, FN's first negative value, or -1 when an attribute
 * runs past the end (the last one's padding may be left out). */
int nt_nla_walk(const unsigned char *p, size_t len, nt_nla_fn fn, void *ud);

/* One message of FAMILY: its generic netlink command (-1 when the message
 * is too short to hold the generic header) and its attributes. 0 goes on;
 * any other value stops the walk and is its result. */
typedef int (*nt_genl_msg_fn)(void *ud, int cmd, const unsigned char *attrs, size_t alen);

/* FN for each message of FAMILY in the datagram BUF of LEN bytes; other
 * types are passed over, an NLMSG_ERROR that is an ACK too. Returns 0 at
 * the datagram's end (more may follow), 1 at NLMSG_DONE, the kernel's
 * -errno from an NLMSG_ERROR or from a DONE that says the dump failed part
 * way, NT_EPARSE for a message running past the datagram or an error too
 * short to hold its code, or FN's value. */
int nt_genl_walk(const void *buf, size_t len, int family, nt_genl_msg_fn fn, void *ud);

#endif
