/* SPDX-License-Identifier: Apache-2.0 */
/* kernel/nlmsg.c's request/ACK exchange (nt_nl_request) against a scripted
 * peer: a second netlink socket of NETLINK_USERSOCK in this process plays
 * the kernel (the libnl socket's peer port is set to it), reads the
 * request and answers with the datagrams a test gives, in a thread. No
 * kernel family is asked anything. Covered: a dump that ends well, a dump
 * whose NLMSG_DONE says it failed part way (with and without the kernel's
 * text), and a request refused with an NLMSG_ERROR. */
#include "kernel/nlmsg.h"
#include "harness.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#define DATA_TYPE 0x30 /* a reply of the peer's "family" */

typedef struct peer {
	int fd;
	/* What to answer: N_DATA data messages, then END: 'D' an NLMSG_DONE
	 * carrying CODE (with TEXT as NLMSGERR_ATTR_MSG when not NULL), 'E' an
	 * NLMSG_ERROR carrying CODE. */
	int n_data;
	char end;
	int code;
	const char *text;
	int got_request;
} peer;

static size_t put_hdr(unsigned char *b, size_t at, uint16_t type, uint16_t flags, const struct nlmsghdr *req,
		      uint32_t len)
{
	struct nlmsghdr h = { .nlmsg_len = len, .nlmsg_type = type, .nlmsg_flags = flags,
			      .nlmsg_seq = req->nlmsg_seq, .nlmsg_pid = req->nlmsg_pid };
	memcpy(b + at, &h, sizeof(h));
	return at + NLMSG_ALIGN(len);
}

static void *peer_main(void *arg)
{
	peer *p = arg;
	unsigned char req[4096], out[4096];
	struct sockaddr_nl from;
	socklen_t fl = sizeof(from);
	ssize_t n = recvfrom(p->fd, req, sizeof(req), 0, (struct sockaddr *)&from, &fl);
	if (n < (ssize_t)NLMSG_HDRLEN)
		return NULL;
	p->got_request = 1;
	struct nlmsghdr rq;
	memcpy(&rq, req, sizeof(rq));
	rq.nlmsg_pid = from.nl_pid;
	size_t at = 0;
	for (int i = 0; i < p->n_data; i++) {
		uint32_t v = (uint32_t)i;
		memcpy(out + at + NLMSG_HDRLEN, &v, 4);
		at = put_hdr(out, at, DATA_TYPE, NLM_F_MULTI, &rq, NLMSG_LENGTH(4));
	}
	/* The data go as one datagram, the end as another, as the kernel
	 * sends a dump's last part. */
	if (at)
		sendto(p->fd, out, at, 0, (struct sockaddr *)&from, sizeof(from));
	at = 0;
	if (p->end == 'D') {
		uint32_t len = NLMSG_LENGTH(sizeof(int));
		uint16_t flags = NLM_F_MULTI;
		memcpy(out + NLMSG_HDRLEN, &p->code, sizeof(int));
		if (p->text) {
			size_t tl = strlen(p->text) + 1;
			struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + tl), .nla_type = NLMSGERR_ATTR_MSG };
			len = NLMSG_ALIGN(len);
			memcpy(out + len, &a, sizeof(a));
			memcpy(out + len + NLA_HDRLEN, p->text, tl);
			len += NLA_ALIGN(a.nla_len);
			flags |= NLM_F_ACK_TLVS;
		}
		at = put_hdr(out, 0, NLMSG_DONE, flags, &rq, len);
	} else {
		struct nlmsgerr e = { .error = p->code, .msg = rq };
		memcpy(out + NLMSG_HDRLEN, &e, sizeof(e));
		at = put_hdr(out, 0, NLMSG_ERROR, NLM_F_CAPPED, &rq, NLMSG_LENGTH(sizeof(e)));
	}
	sendto(p->fd, out, at, 0, (struct sockaddr *)&from, sizeof(from));
	return NULL;
}

static int count_reply(struct nl_msg *msg, void *arg)
{
	(void)msg;
	(*(int *)arg)++;
	return 0;
}

/* One request of FLAGS on a fresh socket to a peer answering as P says.
 * Returns nt_nl_request's result; *REPLIES the data messages it passed
 * on, ERR the text. */
static int exchange(peer *p, uint16_t flags, int *replies, char *err, size_t errsize)
{
	struct nl_sock *sk = NULL;
	struct sockaddr_nl me = { .nl_family = AF_NETLINK };
	socklen_t ml = sizeof(me);
	pthread_t th;
	int r = -EIO;
	*replies = 0;
	p->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_USERSOCK);
	if (p->fd < 0 || bind(p->fd, (struct sockaddr *)&me, sizeof(me)) < 0 ||
	    getsockname(p->fd, (struct sockaddr *)&me, &ml) < 0) {
		if (p->fd >= 0)
			close(p->fd);
		SKIP("no NETLINK_USERSOCK socket here: %s", strerror(errno));
	}
	CHECK_INT(nt_nl_open(NETLINK_USERSOCK, &sk), 0);
	if (!sk) {
		close(p->fd);
		return r;
	}
	nl_socket_set_peer_port(sk, me.nl_pid);
	/* A peer that fails to answer fails the test rather than hang it. */
	struct timeval tv = { .tv_sec = 5 };
	setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(p->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	struct nl_msg *msg = nlmsg_alloc_simple(DATA_TYPE, flags);
	if (msg && pthread_create(&th, NULL, peer_main, p) == 0) {
		r = nt_nl_request(sk, msg, count_reply, replies, err, errsize);
		pthread_join(th, NULL);
	}
	nlmsg_free(msg);
	nl_socket_free(sk);
	close(p->fd);
	return r;
}

int main(void)
{
	char err[128];
	int n;

	/* A dump that ends well: its messages, then NLMSG_DONE with 0. */
	peer ok = { .n_data = 3, .end = 'D', .code = 0 };
	CHECK_INT(exchange(&ok, NLM_F_DUMP, &n, err, sizeof(err)), 0);
	CHECK(ok.got_request && n == 3 && err[0] == '\0');

	/* A dump the kernel could not finish (a driver's get_rxfh failing
	 * for the device RSS_GET lists, say): NLMSG_DONE carries the errno
	 * (netlink_dump_done). The messages before it are a part, not the
	 * list: the request fails with that errno. */
	peer cut = { .n_data = 2, .end = 'D', .code = -ENODEV };
	CHECK_INT(exchange(&cut, NLM_F_DUMP, &n, err, sizeof(err)), -ENODEV);
	CHECK_INT(n, 2);

	/* The same with the kernel's text after the code. */
	peer cut_text = { .n_data = 1, .end = 'D', .code = -EBUSY, .text = "device is resetting" };
	CHECK_INT(exchange(&cut_text, NLM_F_DUMP, &n, err, sizeof(err)), -EBUSY);
	CHECK_STR(err, "device is resetting");

	/* A request refused: NLMSG_ERROR with its errno. */
	peer refused = { .n_data = 0, .end = 'E', .code = -EPERM };
	CHECK_INT(exchange(&refused, 0, &n, err, sizeof(err)), -EPERM);
	CHECK_INT(n, 0);

	/* An ACK after a reply: 0. */
	peer acked = { .n_data = 1, .end = 'E', .code = 0 };
	CHECK_INT(exchange(&acked, 0, &n, err, sizeof(err)), 0);
	CHECK_INT(n, 1);
	TEST_MAIN_END();
}
