/* SPDX-License-Identifier: Apache-2.0 */
/* Per-queue counters of the `netdev` family (qstats-get, scope queue):
 * the dump parser fed crafted datagrams (counters as 4- and 8-byte uints,
 * a counter newer than our table, a device-scope message without a queue
 * id, a truncated attribute, an old kernel's failing DONE), the fixture's
 * emulated answers (counters, none, no member, a bad entry), and the
 * per-NIC report on the EPYC fixture: each queue's "stats" beside its
 * NAPI, and nothing of it in the whole-host read. */
#include "host/qstats.h"
#include "host/queues.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "kernel/netdev.h"
#include "harness.h"
#include "nl_dgram.h"
#include "tree_files.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#define FAM 0x22

/* Counter attribute of the spec's NAME. */
static uint16_t counter(const char *name)
{
	for (int i = 0; i < NT_NETDEV_QSTATS_N; i++)
		if (!strcmp(nt_netdev_qstat_names[i], name))
			return (uint16_t)(NT_NETDEV_A_QSTATS_FIRST + i);
	return 0;
}

static void test_names(void)
{
	/* The numbers of include/uapi/linux/netdev.h: the first and the last
	 * counter, and two between. */
	CHECK_INT(counter("rx-packets"), 8);
	CHECK_INT(counter("tx-bytes"), 11);
	CHECK_INT(counter("rx-hw-gro-packets"), 19);
	CHECK_INT(counter("tx-stop"), 33);
	CHECK_INT(counter("tx-wake"), 34);
	CHECK_INT(NT_NETDEV_QSTATS_N, 27);
}

static void test_parse(void)
{
	dgram d = { .len = 0 };
	nt_netdev nd;
	memset(&nd, 0, sizeof(nd));

	/* virtio_net's RX queue 0 as 6.18 answers it: ifindex, type, id, two
	 * counters; a byte count past 32 bits comes as 8 bytes. */
	msg_begin(&d, FAM, NT_NETDEV_CMD_QSTATS_GET);
	u32a(&d, NT_NETDEV_A_QSTATS_IFINDEX, 4);
	u32a(&d, NT_NETDEV_A_QSTATS_QUEUE_TYPE, NT_NETDEV_QUEUE_RX);
	u32a(&d, NT_NETDEV_A_QSTATS_QUEUE_ID, 0);
	u32a(&d, counter("rx-packets"), 81104);
	u64a(&d, counter("rx-bytes"), 6002809049ull);
	msg_end(&d);
	/* Its TX queue 0 with stop/wake, and a counter newer than our table. */
	msg_begin(&d, FAM, NT_NETDEV_CMD_QSTATS_GET);
	u32a(&d, NT_NETDEV_A_QSTATS_IFINDEX, 4);
	u32a(&d, NT_NETDEV_A_QSTATS_QUEUE_TYPE, NT_NETDEV_QUEUE_TX);
	u32a(&d, NT_NETDEV_A_QSTATS_QUEUE_ID, 0);
	u32a(&d, counter("tx-packets"), 56782);
	u32a(&d, counter("tx-stop"), 2);
	u32a(&d, counter("tx-wake"), 2);
	u32a(&d, NT_NETDEV_A_QSTATS_LAST + 1, 99);
	msg_end(&d);
	/* A device-scope answer: no queue id, not a queue's. */
	msg_begin(&d, FAM, NT_NETDEV_CMD_QSTATS_GET);
	u32a(&d, NT_NETDEV_A_QSTATS_IFINDEX, 4);
	u32a(&d, counter("rx-packets"), 1);
	msg_end(&d);
	CHECK_INT(nt_netdev_parse_dump(&nd, FAM, d.b, d.len), 0);
	CHECK_INT(nd.nqstats, 2);
	CHECK_INT(nd.skipped, 1);
	if (nd.nqstats == 2) {
		const nt_nd_qstats *rx = &nd.qstats[0], *tx = &nd.qstats[1];
		CHECK_INT(rx->ifindex, 4);
		CHECK_INT(rx->type, NT_NETDEV_QUEUE_RX);
		CHECK_INT(rx->present, 3u);
		CHECK_INT(rx->v[0], 81104);
		CHECK(rx->v[1] == 6002809049ull);
		CHECK_INT(tx->type, NT_NETDEV_QUEUE_TX);
		CHECK_INT(tx->v[counter("tx-packets") - NT_NETDEV_A_QSTATS_FIRST], 56782);
		CHECK_INT(tx->present, (1u << 2) | (1u << 25) | (1u << 26));
	}

	/* The next datagram: one queue with an attribute cut short (dropped,
	 * the read goes on), then DONE. */
	d.len = 0;
	msg_begin(&d, FAM, NT_NETDEV_CMD_QSTATS_GET);
	u32a(&d, NT_NETDEV_A_QSTATS_IFINDEX, 4);
	u32a(&d, NT_NETDEV_A_QSTATS_QUEUE_TYPE, NT_NETDEV_QUEUE_RX);
	u32a(&d, NT_NETDEV_A_QSTATS_QUEUE_ID, 1);
	{
		struct nlattr a = { .nla_len = 40, .nla_type = 8 };
		memcpy(d.b + d.len, &a, sizeof(a));
		d.len += NLA_HDRLEN;
	}
	msg_end(&d);
	done(&d, 0);
	CHECK_INT(nt_netdev_parse_dump(&nd, FAM, d.b, d.len), 1);
	CHECK_INT(nd.nqstats, 2);
	CHECK_INT(nd.skipped, 2);
	nt_netdev_free(&nd);

	/* Linux 6.8: the family has no such command, said in the DONE. */
	d.len = 0;
	done(&d, -EOPNOTSUPP);
	CHECK_INT(nt_netdev_parse_dump(&nd, FAM, d.b, d.len), -EOPNOTSUPP);
	nt_netdev_free(&nd);
}

static void test_fixture(void)
{
	char root[] = "/tmp/nt-qstats-XXXXXX", cmd[128];
	nt_ctx ctx;
	nt_netdev nd;
	if (!mkdtemp(root))
		return;
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/ethtool", root);
	CHECK_INT(system(cmd), 0);
	tree_write(root, "ethtool/eth0.json",
		   "{\"netdev\": {\"qstats\": [{\"queue-type\": \"rx\", \"queue-id\": 1, \"rx-packets\": 5,"
		   " \"rx-hw-drops\": 2}, {\"queue-type\": \"tx\", \"queue-id\": 0, \"tx-wake\": 7}]}}");
	tree_write(root, "ethtool/veth0.json", "{\"netdev\": {\"queues\": [], \"qstats\": []}}");
	tree_write(root, "ethtool/old0.json", "{\"netdev\": {\"queues\": []}}");
	tree_write(root, "ethtool/bad0.json", "{\"netdev\": {\"qstats\": [{\"queue-type\": \"rx\", \"queue-id\": 0,"
					       " \"rx-packets\": -1}]}}");
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	memset(&nd, 0, sizeof(nd));
	CHECK_INT(nt_netdev_qstats_read(&ctx, "eth0", 3, &nd), 0);
	CHECK_INT(nd.nqstats, 2);
	if (nd.nqstats == 2) {
		CHECK_INT(nd.qstats[0].id, 1);
		CHECK_INT(nd.qstats[0].ifindex, 3);
		CHECK_INT(nd.qstats[0].v[counter("rx-hw-drops") - NT_NETDEV_A_QSTATS_FIRST], 2);
		CHECK_INT(nd.qstats[1].present, 1u << 26);
	}
	nt_netdev_free(&nd);
	CHECK_INT(nt_netdev_qstats_read(&ctx, "veth0", 4, &nd), 0);
	CHECK_INT(nd.nqstats, 0);
	nt_netdev_free(&nd);
	CHECK_INT(nt_netdev_qstats_read(&ctx, "old0", 5, &nd), -EOPNOTSUPP);
	nt_netdev_free(&nd);
	CHECK_INT(nt_netdev_qstats_read(&ctx, "bad0", 6, &nd), NT_EPARSE);
	nt_netdev_free(&nd);
	CHECK_INT(nt_netdev_qstats_read(&ctx, "none0", 7, &nd), -EOPNOTSUPP);
	nt_netdev_free(&nd);
	/* Every NIC at once (GET /metrics): each document's counters with
	 * its own ifindex; a NIC without counters, or a document that fails,
	 * adds nothing and stops nothing. */
	const char *names[] = { "eth0", "veth0", "old0", "bad0", "none0", "eth0" };
	int ifx[] = { 3, 4, 5, 6, 7, 9 };
	CHECK_INT(nt_netdev_qstats_read_all(&ctx, names, ifx, 6, &nd), 0);
	CHECK_INT(nd.nqstats, 4);
	if (nd.nqstats == 4)
		CHECK(nd.qstats[0].ifindex == 3 && nd.qstats[1].ifindex == 3 && nd.qstats[2].ifindex == 9 &&
		      nd.qstats[3].ifindex == 9);
	nt_netdev_free(&nd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK_INT(system(cmd), 0);
}

/* The per-NIC report on the EPYC fixture: enos0's queue 3 took most of
 * the traffic; x460's tg3 ports are on a kernel without qstats-get. */
static void test_report(void)
{
	nt_ctx ctx;
	nt_topology *t = NULL;
	nt_nic_queues q;
	char path[256];
	snprintf(path, sizeof(path), "%s/epyc7713-2node-bond", NT_FIXTURES);
	CHECK_INT(nt_ctx_init(&ctx, path), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	const nt_nic *n = t ? nt_topology_nic(t, "enos0") : NULL;
	CHECK(n != NULL);
	if (n) {
		json_t *doc = json_object();
		/* The whole-host read says nothing of them. */
		json_t *topo = nt_topology_to_json(t);
		char *text = json_dumps(topo, JSON_COMPACT);
		CHECK_MSG(text && !strstr(text, "queue_stats") && !strstr(text, "rx_alloc_fail"), "topology has qstats");
		free(text);
		json_decref(topo);
		CHECK_INT(nt_nic_queues_read(t, n, &q), 0);
		CHECK_INT(nt_nic_qstats_report(t, n, &q, doc), 0);
		CHECK_STR(json_string_value(json_object_get(doc, "queue_stats_source")), "netlink");
		CHECK(json_is_null(json_object_get(doc, "queue_stats_reason")));
		json_t *qs = nt_nic_queues_json(t, &q);
		json_t *rx3 = json_object_get(json_array_get(json_object_get(qs, "rx"), 3), "stats");
		json_t *tx3 = json_object_get(json_array_get(json_object_get(qs, "tx"), 3), "stats");
		CHECK_INT(json_integer_value(json_object_get(rx3, "rx_packets")), 9000003);
		CHECK_INT(json_integer_value(json_object_get(rx3, "rx_alloc_fail")), 3);
		CHECK(json_integer_value(json_object_get(rx3, "rx_bytes")) == 13320004440ll);
		CHECK(!json_object_get(rx3, "rx_hw_drops")); /* mlx5's answer has none */
		CHECK_INT(json_integer_value(json_object_get(tx3, "tx_stop")), 12);
		CHECK_INT(json_integer_value(json_object_get(tx3, "tx_wake")), 12);
		CHECK_INT(json_object_size(json_object_get(json_array_get(json_object_get(qs, "rx"), 0), "stats")), 7);
		json_decref(qs);
		nt_nic_queues_free(&q);
		json_decref(doc);
	}
	nt_topology_free(t);
	t = NULL;
	snprintf(path, sizeof(path), "%s/x460-4node-8nic", NT_FIXTURES);
	CHECK_INT(nt_ctx_init(&ctx, path), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	n = t ? nt_topology_nic(t, "eth0") : NULL;
	CHECK(n != NULL);
	if (n) {
		json_t *doc = json_object();
		CHECK_INT(nt_nic_queues_read(t, n, &q), 0);
		CHECK_INT(nt_nic_qstats_report(t, n, &q, doc), 0);
		CHECK(json_is_null(json_object_get(doc, "queue_stats_source")));
		CHECK(strstr(json_string_value(json_object_get(doc, "queue_stats_reason")) ?: "", "before 6.9") != NULL);
		json_t *qs = nt_nic_queues_json(t, &q);
		CHECK(json_is_null(json_object_get(json_array_get(json_object_get(qs, "rx"), 0), "stats")));
		json_decref(qs);
		nt_nic_queues_free(&q);
		/* Without the queues (they could not be listed): the reason
		 * alone. */
		CHECK_INT(nt_nic_qstats_report(t, n, NULL, doc), 0);
		CHECK(json_is_string(json_object_get(doc, "queue_stats_reason")));
		json_decref(doc);
	}
	nt_topology_free(t);
}

int main(void)
{
	test_names();
	test_parse();
	test_fixture();
	test_report();
	TEST_MAIN_END();
}
