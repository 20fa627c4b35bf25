/* SPDX-License-Identifier: Apache-2.0 */
/* The `netdev` family's parsers fed crafted netlink datagrams (the family
 * id reply, queue-get and napi-get dumps: several messages a datagram and
 * several datagrams a dump, unknown and truncated attributes, entries
 * without their identifying attributes, an old kernel's NLMSG_ERROR), the
 * fixture's emulated answers, the /proc task parsers and the NAPI thread
 * names. */
#include "kernel/ctx.h"
#include "kernel/netdev.h"
#include "kernel/task.h"
#include "harness.h"
#include "nl_dgram.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#define FAM 0x22

static void queue(dgram *d, uint32_t ifindex, uint32_t id, uint32_t type, int64_t napi)
{
	msg_begin(d, FAM, NT_NETDEV_CMD_QUEUE_GET);
	u32a(d, NT_NETDEV_A_QUEUE_ID, id);
	u32a(d, NT_NETDEV_A_QUEUE_TYPE, type);
	if (napi >= 0)
		u32a(d, NT_NETDEV_A_QUEUE_NAPI_ID, (uint32_t)napi);
	u32a(d, NT_NETDEV_A_QUEUE_IFINDEX, ifindex);
	msg_end(d);
}

static void test_family(void)
{
	dgram d = { .len = 0 };
	int id = -1;
	msg_begin(&d, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
	attr(&d, CTRL_ATTR_FAMILY_NAME, "netdev", 7);
	uint16_t fid = 0x1f;
	attr(&d, CTRL_ATTR_FAMILY_ID, &fid, 2);
	attr(&d, CTRL_ATTR_VERSION, "\1\0\0\0", 4);
	msg_end(&d);
	CHECK_INT(nt_netdev_parse_family(d.b, d.len, &id), 0);
	CHECK_INT(id, 0x1f);
	uint64_t ops = 1;
	CHECK_INT(nt_netdev_parse_family_ops(d.b, d.len, &id, &ops), 0);
	CHECK_MSG(ops == 0, "no CTRL_ATTR_OPS: ops %#llx", (unsigned long long)ops);

	/* With its operations (CTRL_ATTR_OPS: a nest of one nest each, the
	 * command in CTRL_ATTR_OP_ID): 6.8's list has queue-get (10) and
	 * napi-get (11), no qstats-get (12). */
	static const uint32_t cmds[] = { 1, 10, 11, 200 };
	d.len = 0;
	msg_begin(&d, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
	attr(&d, CTRL_ATTR_FAMILY_NAME, "netdev", 7);
	attr(&d, CTRL_ATTR_FAMILY_ID, &fid, 2);
	size_t outer = d.len;
	d.len += NLA_HDRLEN;
	for (uint16_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		size_t inner = d.len;
		d.len += NLA_HDRLEN;
		u32a(&d, CTRL_ATTR_OP_ID, cmds[i]);
		u32a(&d, CTRL_ATTR_OP_FLAGS, 0);
		struct nlattr in = { .nla_len = (uint16_t)(d.len - inner), .nla_type = (uint16_t)(i + 1) };
		memcpy(d.b + inner, &in, sizeof(in));
	}
	struct nlattr out = { .nla_len = (uint16_t)(d.len - outer), .nla_type = CTRL_ATTR_OPS };
	memcpy(d.b + outer, &out, sizeof(out));
	msg_end(&d);
	CHECK_INT(nt_netdev_parse_family_ops(d.b, d.len, &id, &ops), 0);
	CHECK_INT(id, 0x1f);
	/* A command past 63 has no bit and is left out. */
	CHECK_MSG(ops == ((1ull << 1) | (1ull << 10) | (1ull << 11)), "ops %#llx", (unsigned long long)ops);
	CHECK(!(ops & (1ull << NT_NETDEV_CMD_QSTATS_GET)));

	/* Linux before 6.3: no family of that name. */
	d.len = 0;
	error_msg(&d, -ENOENT);
	CHECK_INT(nt_netdev_parse_family(d.b, d.len, &id), -ENOENT);
	/* A reply without the id, and a header that claims more than came. */
	d.len = 0;
	msg_begin(&d, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
	attr(&d, CTRL_ATTR_FAMILY_NAME, "netdev", 7);
	msg_end(&d);
	CHECK_INT(nt_netdev_parse_family(d.b, d.len, &id), NT_EPARSE);
	CHECK_INT(nt_netdev_parse_family(d.b, d.len - 4, &id), NT_EPARSE);
	CHECK_INT(nt_netdev_parse_family(d.b, 3, &id), NT_EPARSE);
}

static void test_queues(void)
{
	nt_netdev nd = { 0 };
	dgram d = { .len = 0 };
	/* Two datagrams, several messages each, as a multi-part dump. */
	queue(&d, 7, 0, NT_NETDEV_QUEUE_RX, 8193);
	queue(&d, 7, 1, NT_NETDEV_QUEUE_RX, 8194);
	queue(&d, 7, 0, NT_NETDEV_QUEUE_TX, -1);
	CHECK_INT(nt_netdev_parse_dump(&nd, FAM, d.b, d.len), 0);
	d.len = 0;
	queue(&d, 9, 0, NT_NETDEV_QUEUE_TX, 8300);
	/* Unknown attributes (a newer kernel's xsk nest, a number far above
	 * the spec's) are passed over. */
	msg_begin(&d, FAM, NT_NETDEV_CMD_QUEUE_GET);
	u32a(&d, NT_NETDEV_A_QUEUE_ID, 1);
	attr(&d, 7 | NLA_F_NESTED, "", 0);
	u32a(&d, 900, 5);
	u32a(&d, NT_NETDEV_A_QUEUE_TYPE, NT_NETDEV_QUEUE_TX);
	u32a(&d, NT_NETDEV_A_QUEUE_IFINDEX, 9);
	u32a(&d, NT_NETDEV_A_QUEUE_NAPI_ID, 8301);
	msg_end(&d);
	/* Missing identifying attributes: no ifindex, no type; a type that
	 * is neither rx nor tx. */
	msg_begin(&d, FAM, NT_NETDEV_CMD_QUEUE_GET);
	u32a(&d, NT_NETDEV_A_QUEUE_ID, 2);
	u32a(&d, NT_NETDEV_A_QUEUE_TYPE, NT_NETDEV_QUEUE_RX);
	msg_end(&d);
	msg_begin(&d, FAM, NT_NETDEV_CMD_QUEUE_GET);
	u32a(&d, NT_NETDEV_A_QUEUE_ID, 2);
	u32a(&d, NT_NETDEV_A_QUEUE_IFINDEX, 9);
	msg_end(&d);
	queue(&d, 9, 3, 5, 1);
	/* An attribute whose length runs past its message. */
	msg_begin(&d, FAM, NT_NETDEV_CMD_QUEUE_GET);
	u32a(&d, NT_NETDEV_A_QUEUE_ID, 4);
	u32a(&d, NT_NETDEV_A_QUEUE_TYPE, NT_NETDEV_QUEUE_RX);
	u32a(&d, NT_NETDEV_A_QUEUE_IFINDEX, 9);
	{
		struct nlattr a = { .nla_len = 200, .nla_type = NT_NETDEV_A_QUEUE_NAPI_ID };
		memcpy(d.b + d.len, &a, sizeof(a));
		d.len += 8;
	}
	msg_end(&d);
	/* Another family's message in the stream (a notification). */
	msg_begin(&d, FAM + 1, NT_NETDEV_CMD_QUEUE_GET);
	u32a(&d, NT_NETDEV_A_QUEUE_ID, 9);
	msg_end(&d);
	done(&d, 0);
	CHECK_INT(nt_netdev_parse_dump(&nd, FAM, d.b, d.len), 1);
	CHECK_INT(nd.nqueues, 5);
	CHECK_INT(nd.skipped, 4);
	if (nd.nqueues == 5) {
		CHECK_INT(nd.queues[1].ifindex, 7);
		CHECK_INT(nd.queues[1].id, 1);
		CHECK_INT(nd.queues[1].napi_id, 8194);
		CHECK_INT(nd.queues[2].type, NT_NETDEV_QUEUE_TX);
		CHECK_INT(nd.queues[2].napi_id, -1);
		CHECK_INT(nd.queues[4].napi_id, 8301);
		CHECK_INT(nd.queues[4].ifindex, 9);
	}
	nt_netdev_free(&nd);

	/* A header that claims more bytes than the datagram holds. */
	d.len = 0;
	queue(&d, 7, 0, NT_NETDEV_QUEUE_RX, 1);
	CHECK_INT(nt_netdev_parse_dump(&nd, FAM, d.b, d.len - 8), NT_EPARSE);
	/* A message too short for its generic header is skipped. */
	d.len = 0;
	{
		struct nlmsghdr h = { .nlmsg_len = NLMSG_HDRLEN + 2, .nlmsg_type = FAM };
		memcpy(d.b, &h, sizeof(h));
		d.len = NLMSG_ALIGN(h.nlmsg_len);
	}
	CHECK_INT(nt_netdev_parse_dump(&nd, FAM, d.b, d.len), 0);
	CHECK_INT(nd.skipped, 1);
	nt_netdev_free(&nd);
}

static void test_napi(void)
{
	nt_netdev nd = { 0 };
	dgram d = { .len = 0 };
	/* 6.18: every attribute; the timeouts as 8-byte uints. */
	msg_begin(&d, FAM, NT_NETDEV_CMD_NAPI_GET);
	u32a(&d, NT_NETDEV_A_NAPI_ID, 8193);
	u32a(&d, NT_NETDEV_A_NAPI_IFINDEX, 7);
	u32a(&d, NT_NETDEV_A_NAPI_IRQ, 102);
	u32a(&d, NT_NETDEV_A_NAPI_PID, 4242);
	u32a(&d, NT_NETDEV_A_NAPI_DEFER_HARD_IRQS, 10);
	u64a(&d, NT_NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT, 20000);
	u64a(&d, NT_NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT, 20000000);
	u32a(&d, NT_NETDEV_A_NAPI_THREADED, 1);
	msg_end(&d);
	/* 6.8: id, ifindex, irq; no thread. */
	msg_begin(&d, FAM, NT_NETDEV_CMD_NAPI_GET);
	u32a(&d, NT_NETDEV_A_NAPI_ID, 8194);
	u32a(&d, NT_NETDEV_A_NAPI_IFINDEX, 7);
	u32a(&d, NT_NETDEV_A_NAPI_IRQ, 103);
	msg_end(&d);
	/* A value of a length no uint has is as if not sent. */
	msg_begin(&d, FAM, NT_NETDEV_CMD_NAPI_GET);
	u32a(&d, NT_NETDEV_A_NAPI_ID, 8195);
	u32a(&d, NT_NETDEV_A_NAPI_IFINDEX, 7);
	attr(&d, NT_NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT, "\1\2", 2);
	u32a(&d, NT_NETDEV_A_NAPI_THREADED, 0);
	msg_end(&d);
	/* Without its id: dropped. */
	msg_begin(&d, FAM, NT_NETDEV_CMD_NAPI_GET);
	u32a(&d, NT_NETDEV_A_NAPI_IFINDEX, 7);
	u32a(&d, NT_NETDEV_A_NAPI_IRQ, 104);
	msg_end(&d);
	done(&d, 0);
	CHECK_INT(nt_netdev_parse_dump(&nd, FAM, d.b, d.len), 1);
	CHECK_INT(nd.nnapis, 3);
	CHECK_INT(nd.skipped, 1);
	if (nd.nnapis == 3) {
		const nt_nd_napi *a = &nd.napis[0], *b = &nd.napis[1], *c = &nd.napis[2];
		CHECK_INT(a->irq, 102);
		CHECK_INT(a->pid, 4242);
		CHECK_INT(a->defer_hard_irqs, 10);
		CHECK_INT(a->gro_flush_timeout, 20000);
		CHECK_INT(a->irq_suspend_timeout, 20000000);
		CHECK_INT(a->threaded, 1);
		CHECK_INT(b->irq, 103);
		CHECK_INT(b->pid, -1);
		CHECK_INT(b->defer_hard_irqs, -1);
		CHECK_INT(b->gro_flush_timeout, -1);
		CHECK_INT(b->threaded, -1);
		CHECK_INT(c->gro_flush_timeout, -1);
		CHECK_INT(c->threaded, 0);
	}
	nt_netdev_free(&nd);

	/* Linux 6.3..6.7: the family without the command. */
	d.len = 0;
	error_msg(&d, -EOPNOTSUPP);
	CHECK_INT(nt_netdev_parse_dump(&nd, FAM, d.b, d.len), -EOPNOTSUPP);
	/* A dump that failed part way ends with the error in its DONE. */
	d.len = 0;
	done(&d, -EMSGSIZE);
	CHECK_INT(nt_netdev_parse_dump(&nd, FAM, d.b, d.len), -EMSGSIZE);
	/* An ACK (error 0) is no error, and an empty datagram asks for more. */
	d.len = 0;
	error_msg(&d, 0);
	CHECK_INT(nt_netdev_parse_dump(&nd, FAM, d.b, d.len), 0);
	CHECK_INT(nt_netdev_parse_dump(&nd, FAM, d.b, 0), 0);
	nt_netdev_free(&nd);
}

static void test_task(void)
{
	nt_cpuset s;
	char list[64];
	int cpu;
	long id;
	CHECK_INT(nt_task_parse_allowed("Name:\tnapi/veth0-8193\nCpus_allowed:\tf\nCpus_allowed_list:\t0-3,8\n"
					"Mems_allowed:\t1\n", &s), 0);
	nt_cpulist_format(&s, list, sizeof(list));
	CHECK_STR(list, "0-3,8");
	CHECK_INT(nt_task_parse_allowed("Name:\tx\n", &s), -ENOENT);
	CHECK_INT(nt_task_parse_allowed("Cpus_allowed_list:\tzz\n", &s), NT_EPARSE);
	/* A name with spaces and a ')' of its own; field 39 is 5. */
	const char *stat = "4242 (napi/a) b-1) S 2 0 0 0 -1 2129984 0 0 0 0 0 12 0 0 20 0 1 0 388 0 0 "
			   "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 5 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
	CHECK_INT(nt_task_parse_last_cpu(stat, &cpu), 0);
	CHECK_INT(cpu, 5);
	CHECK_INT(nt_task_parse_last_cpu("1 (x) S 2 0", &cpu), NT_EPARSE);
	CHECK_INT(nt_task_parse_last_cpu("no name", &cpu), NT_EPARSE);
	CHECK_INT(nt_task_napi_id("napi/veth0-8193", "veth0", &id), 0);
	CHECK_INT(id, 8193);
	CHECK_INT(nt_task_napi_id("napi/veth01-8193", "veth0", &id), -ENOENT);
	CHECK_INT(nt_task_napi_id("napi/veth0-", "veth0", &id), -ENOENT);
	CHECK_INT(nt_task_napi_id("kworker/0:1", "veth0", &id), -ENOENT);
	/* Cut at 15 bytes: still the NIC's, the id unknown. */
	CHECK_INT(nt_task_napi_id("napi/enp65s0f1-", "enp65s0f1", &id), 0);
	CHECK_INT(id, -1);
	CHECK_INT(nt_task_napi_id("napi/enp65s0f1-12", "enp65s0f1", &id), 0);
	CHECK_INT(id, 12);
	CHECK_INT(nt_task_napi_id("napi/eth0-12x", "eth0", &id), -ENOENT);
	CHECK_INT(nt_task_napi_id("napi/enp65s0f1n", "enp65s0f1np0", &id), 0);
	CHECK_INT(nt_task_napi_id("napi/enp65s0f1n", "enp65s0f1", &id), -ENOENT);
}

/* A fixture root of one NIC: its document plays the family's answers,
 * its /proc a NAPI thread by name. */
static void put(const char *root, const char *rel, const char *text)
{
	char path[512], cmd[600];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	if (system(cmd) != 0)
		return;
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_fixture(void)
{
	char root[] = "/tmp/nt-netdev-XXXXXX";
	nt_ctx ctx;
	nt_netdev nd;
	nt_napi_thread th[8];
	nt_task task;
	nt_nd_dev dev;
	if (!mkdtemp(root))
		return;
	put(root, "/ethtool/eth0.json",
	    "{\"netdev\": {\"queues\": [{\"id\": 0, \"type\": \"rx\", \"napi-id\": 8193},"
	    " {\"id\": 0, \"type\": \"tx\", \"napi-id\": 8193}, {\"id\": 1, \"type\": \"tx\"}],"
	    " \"napis\": [{\"id\": 8193, \"irq\": 45, \"pid\": 77, \"defer-hard-irqs\": 2,"
	    " \"gro-flush-timeout\": 20000, \"threaded\": \"enabled\"}]}}");
	put(root, "/ethtool/eth1.json", "{\"netdev\": {\"queues\": [{\"id\": 0, \"type\": \"up\"}]}}");
	put(root, "/ethtool/eth2.json", "{\"features\": {}}");
	put(root, "/sys/class/net/eth0/threaded", "1\n");
	put(root, "/sys/class/net/eth0/napi_defer_hard_irqs", "2\n");
	put(root, "/sys/class/net/eth0/gro_flush_timeout", "20000\n");
	put(root, "/proc/77/comm", "napi/eth0-8193\n");
	put(root, "/proc/77/status", "Name:\tnapi/eth0-8193\nCpus_allowed_list:\t0-1\n");
	{
		/* Fields 3..38 and then 39, the CPU, as 1. */
		char st[256] = "77 (napi/eth0-8193) S";
		for (int f = 4; f <= 38; f++)
			strcat(st, f == 38 ? " 17" : " 0");
		strcat(st, " 1 0 0\n");
		put(root, "/proc/77/stat", st);
	}
	put(root, "/proc/78/comm", "napi/eth1-9\n");
	put(root, "/proc/self", "");
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_netdev_read(&ctx, "eth0", 3, &nd), 0);
	CHECK_INT(nd.nqueues, 3);
	CHECK_INT(nd.nnapis, 1);
	if (nd.nqueues == 3 && nd.nnapis == 1) {
		CHECK_INT(nd.queues[1].ifindex, 3);
		CHECK_INT(nd.queues[1].type, NT_NETDEV_QUEUE_TX);
		CHECK_INT(nd.queues[2].napi_id, -1);
		CHECK_INT(nd.napis[0].irq, 45);
		CHECK_INT(nd.napis[0].irq_suspend_timeout, -1);
		CHECK_INT(nd.napis[0].threaded, 1);
	}
	nt_netdev_free(&nd);
	CHECK_INT(nt_netdev_read(&ctx, "eth1", 4, &nd), NT_EPARSE);
	nt_netdev_free(&nd);
	CHECK_INT(nt_netdev_read(&ctx, "eth2", 5, &nd), -EOPNOTSUPP);
	nt_netdev_free(&nd);
	CHECK_INT(nt_netdev_read(&ctx, "eth9", 6, &nd), -EOPNOTSUPP);
	nt_netdev_free(&nd);
	nt_netdev_dev_read(&ctx, "eth0", &dev);
	CHECK_INT(dev.threaded, 1);
	CHECK_INT(dev.defer_hard_irqs, 2);
	CHECK_INT(dev.gro_flush_timeout, 20000);
	nt_netdev_dev_read(&ctx, "eth2", &dev);
	CHECK_INT(dev.threaded, -1);
	CHECK_INT(dev.gro_flush_timeout, -1);
	CHECK_INT(nt_napi_threads_find(&ctx, "eth0", th, 8), 1);
	CHECK_INT(th[0].pid, 77);
	CHECK_INT(th[0].napi_id, 8193);
	CHECK_INT(nt_task_read(&ctx, 77, &task), 0);
	CHECK(task.has_allowed && nt_cpuset_count(&task.allowed) == 2);
	CHECK_INT(task.last_cpu, 1);
	CHECK_INT(nt_task_read(&ctx, 79, &task), -ENOENT);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK_INT(system(cmd), 0);
}

/* Which NAPI serves an RX queue: named by the queue, or (veth on 6.18,
 * which links none) the N-th by id when there are as many as RX queues. */
static void test_rx_napi(void)
{
	nt_nd_queue q[] = {
		{ .ifindex = 3, .id = 0, .type = NT_NETDEV_QUEUE_RX, .napi_id = 8194 },
		{ .ifindex = 3, .id = 1, .type = NT_NETDEV_QUEUE_RX, .napi_id = 8193 },
		{ .ifindex = 3, .id = 0, .type = NT_NETDEV_QUEUE_TX, .napi_id = 8193 },
		{ .ifindex = 5, .id = 0, .type = NT_NETDEV_QUEUE_RX, .napi_id = -1 },
		{ .ifindex = 5, .id = 1, .type = NT_NETDEV_QUEUE_RX, .napi_id = -1 },
		{ .ifindex = 6, .id = 0, .type = NT_NETDEV_QUEUE_RX, .napi_id = -1 },
		{ .ifindex = 6, .id = 1, .type = NT_NETDEV_QUEUE_RX, .napi_id = -1 },
	};
	nt_nd_napi n[] = {
		{ .ifindex = 3, .id = 8193 }, { .ifindex = 3, .id = 8194 },
		/* veth: listed newest first, as the kernel's list is */
		{ .ifindex = 5, .id = 364 }, { .ifindex = 5, .id = 363 },
		{ .ifindex = 6, .id = 400 },
	};
	nt_netdev nd = { .queues = q, .nqueues = 7, .napis = n, .nnapis = 5 };
	const nt_nd_napi *a = nt_netdev_rx_napi(&nd, 3, 0);
	CHECK(a && a->id == 8194);
	a = nt_netdev_rx_napi(&nd, 3, 1);
	CHECK(a && a->id == 8193);
	CHECK(nt_netdev_rx_napi(&nd, 3, 2) == NULL);
	a = nt_netdev_rx_napi(&nd, 5, 0);
	CHECK(a && a->id == 363);
	a = nt_netdev_rx_napi(&nd, 5, 1);
	CHECK(a && a->id == 364);
	CHECK(nt_netdev_rx_napi(&nd, 5, 2) == NULL);
	/* One NAPI for two queues: no guess. */
	CHECK(nt_netdev_rx_napi(&nd, 6, 0) == NULL);
	CHECK(nt_netdev_rx_napi(&nd, 9, 0) == NULL);
	CHECK_INT(nt_netdev_napi_count(&nd, 5), 2);
	CHECK_STR(nt_napi_attr_name(NT_NAPI_GRO_FLUSH_TIMEOUT), "gro-flush-timeout");
}

/* The fixture does what the kernel does on a write: napi-set, the
 * device's threaded (threads started and stopped), defer for every NAPI,
 * a thread's affinity. */
static void test_fixture_writes(void)
{
	char root[] = "/tmp/nt-netdev-w-XXXXXX", err[160];
	nt_ctx ctx;
	nt_netdev nd;
	nt_task task;
	nt_cpuset set;
	if (!mkdtemp(root))
		return;
	put(root, "/ethtool/eth0.json",
	    "{\"netdev\": {\"queues\": [{\"id\": 0, \"type\": \"rx\", \"napi-id\": 8193}],"
	    " \"napis\": [{\"id\": 8193, \"irq\": 45, \"defer-hard-irqs\": 0, \"gro-flush-timeout\": 0,"
	    " \"threaded\": \"disabled\"}, {\"id\": 8194, \"defer-hard-irqs\": 0}]}}");
	put(root, "/ethtool/eth1.json", "{\"netdev\": {\"queues\": [], \"napis\": []}}");
	put(root, "/sys/class/net/eth0/threaded", "0\n");
	put(root, "/sys/class/net/eth0/napi_defer_hard_irqs", "0\n");
	put(root, "/sys/class/net/eth1/threaded", "0\n");
	put(root, "/sys/devices/system/cpu/online", "0-3\n");
	put(root, "/proc/self", "");
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_netdev_napi_set(&ctx, "eth0", 8193, NT_NAPI_GRO_FLUSH_TIMEOUT, 20000, err, sizeof(err)), 0);
	CHECK_INT(nt_netdev_napi_set(&ctx, "eth0", 8193, NT_NAPI_IRQ_SUSPEND_TIMEOUT, 1, err, sizeof(err)),
		  -EOPNOTSUPP);
	CHECK(strstr(err, "irq-suspend-timeout") != NULL);
	CHECK_INT(nt_netdev_napi_set(&ctx, "eth0", 9, NT_NAPI_DEFER_HARD_IRQS, 1, err, sizeof(err)), -ENOENT);
	CHECK_INT(nt_netdev_napi_set(&ctx, "eth0", 8193, NT_NAPI_DEFER_HARD_IRQS, 1ull << 31, err, sizeof(err)),
		  -ERANGE);
	CHECK_INT(nt_netdev_dev_write(&ctx, "eth0", "threaded", 1), 0);
	CHECK_INT(nt_netdev_dev_write(&ctx, "eth1", "threaded", 1), -EOPNOTSUPP);
	CHECK_INT(nt_netdev_dev_write(&ctx, "eth0", "napi_defer_hard_irqs", 7), 0);
	CHECK_INT(nt_netdev_read(&ctx, "eth0", 3, &nd), 0);
	CHECK_INT(nd.nnapis, 2);
	int pid = nd.nnapis == 2 ? (int)nd.napis[0].pid : -1;
	if (nd.nnapis == 2) {
		CHECK_INT(nd.napis[0].gro_flush_timeout, 20000);
		CHECK_INT(nd.napis[0].defer_hard_irqs, 7);
		CHECK_INT(nd.napis[1].defer_hard_irqs, 7);
		CHECK_INT(nd.napis[0].threaded, 1);
		CHECK(pid > 0 && nd.napis[1].pid > 0 && nd.napis[1].pid != pid);
	}
	nt_netdev_free(&nd);
	CHECK_INT(nt_task_read(&ctx, pid, &task), 0);
	CHECK_INT(nt_cpuset_count(&task.allowed), 4);
	nt_cpuset_zero(&set);
	nt_cpuset_set(&set, 2);
	CHECK_INT(nt_task_set_allowed(&ctx, pid, &set), 0);
	CHECK_INT(nt_task_read(&ctx, pid, &task), 0);
	CHECK(nt_cpuset_equal(&task.allowed, &set));
	CHECK_INT(nt_task_set_allowed(&ctx, 4321, &set), -ESRCH);
	CHECK_INT(nt_netdev_dev_write(&ctx, "eth0", "threaded", 0), 0);
	CHECK_INT(nt_task_read(&ctx, pid, &task), -ENOENT);
	CHECK_INT(nt_netdev_read(&ctx, "eth0", 3, &nd), 0);
	CHECK(nd.nnapis == 2 && nd.napis[0].pid == -1 && nd.napis[0].threaded == 0);
	nt_netdev_free(&nd);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK_INT(system(cmd), 0);
}

int main(void)
{
	test_rx_napi();
	test_fixture_writes();
	test_family();
	test_queues();
	test_napi();
	test_task();
	test_fixture();
	TEST_MAIN_END();
}
