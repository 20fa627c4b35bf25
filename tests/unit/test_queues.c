/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's queues on fixture trees: the queue count, each queue's IRQ, the
 * steering files read and written at the width the kernel prints them
 * (a restored file is byte for byte what it was), the kernel's replies
 * played on a fixture root (rps_cpus keeps the housekeeping CPUs only,
 * rps_flow_cnt rounds up to a power of two), and the JSON of one NIC. */
#include "host/napi.h"
#include "host/queues.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "kernel/queues.h"
#include "kernel/rss.h"
#include "harness.h"
#include "tree_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char root[64];

static void test_epyc(void)
{
	nt_ctx ctx;
	nt_topology *t = NULL;
	nt_nic_queues q;
	char list[64], err[256];
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (!t)
		return;
	/* The whole-host read knows nothing of queues (host/queues.h). */
	json_t *doc = nt_topology_to_json(t);
	char *text = json_dumps(doc, 0);
	CHECK_MSG(text && !strstr(text, "rps_cpus") && !strstr(text, "\"queues\""), "topology lists queues");
	free(text);
	json_decref(doc);

	const nt_nic *n = nt_topology_nic(t, "enos0");
	CHECK(n != NULL);
	if (!n)
		goto out;
	int nrx = 0, ntx = 0;
	CHECK_INT(nt_queues_count(&ctx, "enos0", &nrx, &ntx), 0);
	CHECK_MSG(nrx > 4 && nrx == ntx, "enos0: %d rx, %d tx", nrx, ntx);
	CHECK_INT(nt_queues_count(&ctx, "../x", &nrx, &ntx), NT_EINVALID);
	CHECK_INT(nt_queues_count(&ctx, "nosuch0", &nrx, &ntx), -ENOENT);
	CHECK_INT(nt_nic_queues_read(t, n, &q), 0);
	CHECK_INT(q.nrx, q.ntx);
	if (q.nrx > 2) {
		CHECK(q.rx[1].irq >= 0 && t->irqs[q.rx[1].irq].irq == 102);
		CHECK_INT(q.rx[1].rps_err, 0);
		CHECK(nt_cpuset_empty(&q.rx[1].rps_cpus));
		CHECK_INT(q.tx[1].rxqs_err, 0);
		json_t *j = nt_nic_queues_json(t, &q);
		json_t *rx1 = json_array_get(json_object_get(j, "rx"), 1);
		CHECK_INT(json_integer_value(json_object_get(rx1, "irq")), 102);
		CHECK_STR(json_string_value(json_object_get(rx1, "irq_cpus")), "3");
		CHECK_STR(json_string_value(json_object_get(rx1, "rps_cpus")), "");
		json_t *tx1 = json_array_get(json_object_get(j, "tx"), 1);
		CHECK_STR(json_string_value(json_object_get(tx1, "xps_rxqs")), "");
		json_decref(j);
	}
	nt_nic_queues_free(&q);

	/* Written at the file's width: 128 CPUs are four groups. */
	nt_cpuset want, back, got;
	int rr = 0, nbits = 0;
	const char *rel = "sys/class/net/enos0/queues/rx-1/rps_cpus";
	char *orig = tree_read(root, rel);
	nt_cpulist_parse("1-3,64", &want);
	CHECK_INT(nt_queue_write_mask(&ctx, "enos0", "rx-1", "rps_cpus", &want, &back, &rr, err, sizeof(err)), 0);
	CHECK_INT(rr, 0);
	CHECK(nt_cpuset_equal(&back, &want));
	char *now = tree_read(root, rel);
	CHECK_STR(now, "00000000,00000001,00000000,0000000e\n");
	free(now);
	CHECK_INT(nt_queue_read_mask(&ctx, "enos0", "rx-1", "rps_cpus", &got, &nbits), 0);
	CHECK_INT(nbits, 128);
	nt_cpuset_zero(&want);
	CHECK_INT(nt_queue_write_mask(&ctx, "enos0", "rx-1", "rps_cpus", &want, &back, &rr, err, sizeof(err)), 0);
	now = tree_read(root, rel);
	CHECK_MSG(orig && now && strcmp(orig, now) == 0, "rps_cpus put back reads '%s', was '%s'", now, orig);
	free(now);
	free(orig);

	/* A CPU beyond the kernel's mask, or a queue name that is not one. */
	nt_cpulist_parse("200", &want);
	CHECK_INT(nt_queue_write_mask(&ctx, "enos0", "rx-1", "rps_cpus", &want, &back, &rr, err, sizeof(err)),
		  -EINVAL);
	CHECK_MSG(strstr(err, "enos0/rx-1 rps_cpus") != NULL, "%s", err);
	CHECK_INT(nt_queue_write_mask(&ctx, "enos0", "rx-1/../..", "rps_cpus", &want, &back, &rr, err,
				      sizeof(err)),
		  NT_EINVALID);
	CHECK_INT(nt_queue_read_mask(&ctx, "enos0", "tx-1", "../../mtu", &got, NULL), NT_EINVALID);

	/* xps_rxqs is a bitmap of the RX queues, as wide as their number. */
	nt_cpulist_parse("1", &want);
	CHECK_INT(nt_queue_write_mask(&ctx, "enos0", "tx-1", "xps_rxqs", &want, &back, &rr, err, sizeof(err)), 0);
	CHECK(nt_cpuset_equal(&back, &want));

	/* The kernel ANDs rps_cpus with its housekeeping CPUs. */
	tree_write(root, "sys/devices/system/cpu/isolated", "2-3\n");
	nt_cpulist_parse("1-3", &want);
	CHECK_INT(nt_queue_write_mask(&ctx, "enos0", "rx-2", "rps_cpus", &want, &back, &rr, err, sizeof(err)), 0);
	nt_cpulist_format(&back, list, sizeof(list));
	CHECK_STR(list, "1");
	nt_cpulist_parse("2-3", &want);
	CHECK_INT(nt_queue_write_mask(&ctx, "enos0", "rx-2", "rps_cpus", &want, &back, &rr, err, sizeof(err)),
		  -EINVAL);

	long flows = 0;
	CHECK_INT(nt_queue_write_long(&ctx, "enos0", "rx-2", "rps_flow_cnt", 3000, &flows, &rr, err, sizeof(err)),
		  0);
	CHECK_INT(flows, 4096);
out:
	nt_topology_free(t);
}

/* RSS as the per-NIC view reports it, from the fixture's "rss" object;
 * the letters of the hash fields both ways. */
static void test_rss(void)
{
	nt_ctx ctx;
	nt_topology *t = NULL;
	char path[256];
	uint64_t bits;
	char text[16];
	CHECK_INT(nt_rss_fields_parse("sdfn", &bits), 0);
	nt_rss_fields_format(bits, text, sizeof(text));
	CHECK_STR(text, "sdfn");
	CHECK_INT(nt_rss_fields_parse("nfds", &bits), 0);
	nt_rss_fields_format(bits, text, sizeof(text));
	CHECK_STR(text, "sdfn");
	CHECK_INT(nt_rss_fields_parse("sx", &bits), NT_EPARSE);
	CHECK_INT(nt_rss_fields_parse("ss", &bits), NT_EPARSE);

	snprintf(path, sizeof(path), "%s/ethtool/enos0.json", root);
	json_t *doc = json_load_file(path, 0, NULL);
	CHECK(doc != NULL);
	json_object_set_new(doc, "rss", json_loads("{\"indir\":[0,1,2,0,1,2,0,1],\"key_size\":40,\"hfunc\":1,"
						  "\"hash_fields\":{\"tcp4\":\"sdfn\",\"udp4\":\"sd\"}}",
						  0, NULL));
	CHECK_INT(json_dump_file(doc, path, JSON_COMPACT), 0);
	json_decref(doc);
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	const nt_nic *n = t ? nt_topology_nic(t, "enos0") : NULL;
	json_t *j = n ? nt_nic_rss_json(t, n) : NULL;
	char *text2 = j ? json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	CHECK_STR(text2, "{\"contexts\":{\"reason\":\"its driver has no RSS contexts (ETHTOOL_GRSSH for a context "
			 "answers EOPNOTSUPP; drivers that have them take them through the ioctl on every kernel since "
			 "4.17)\",\"supported\":false},\"hash_fields\":{\"tcp4\":\"sdfn\",\"udp4\":\"sd\"},\"hfunc\":1,"
			 "\"indir_size\":8,\"input_xfrm\":\"none\",\"key_size\":40,\"weights\":[3,3,2]}");
	free(text2);
	json_decref(j);
	/* No ethtool file (a bond): no RSS to report. */
	n = t ? nt_topology_nic(t, "bond0") : NULL;
	j = n ? nt_nic_rss_json(t, n) : NULL;
	CHECK(json_is_null(j));
	json_decref(j);
	nt_topology_free(t);
}

/* A single-queue NIC whose one IRQ names no queue (tg3: "eth0"). */
static void test_x460(void)
{
	nt_ctx ctx;
	nt_topology *t = NULL;
	nt_nic_queues q;
	char path[128];
	snprintf(path, sizeof(path), "%s/x460-4node-8nic", NT_FIXTURES);
	CHECK_INT(nt_ctx_init(&ctx, path), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	const nt_nic *n = t ? nt_topology_nic(t, "eth2") : NULL;
	CHECK(n != NULL);
	if (n) {
		CHECK_INT(nt_nic_queues_read(t, n, &q), 0);
		CHECK_INT(q.nrx, 1);
		CHECK_INT(q.ntx, 1);
		CHECK(q.nrx == 1 && q.rx[0].irq >= 0 && q.rx[0].irq == n->irqs[0]);
		CHECK(q.ntx == 1 && q.tx[0].irq == q.rx[0].irq);
		nt_nic_queues_free(&q);
	}
	nt_topology_free(t);
}

/* Write TEXT to PATH: 0, or -1. */
static int put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	int r = fputs(text, f) < 0 ? -1 : 0;
	return fclose(f) == 0 ? r : -1;
}

/* NAPI on the EPYC tree, whose documents play the netdev family: each
 * queue's NAPI and, through it, its IRQ; enos1's threads from its /proc;
 * enos2's deferral; and x460's tg3 ports without the family (sysfs only,
 * the IRQ names). One NIC with its answers taken away falls back too. */
static void test_napi(void)
{
	nt_ctx ctx;
	nt_topology *t = NULL;
	nt_nic_queues q;
	char path[512];
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	const nt_nic *n = t ? nt_topology_nic(t, "enos1") : NULL;
	CHECK(n != NULL);
	if (n) {
		json_t *doc = json_object();
		CHECK_INT(nt_nic_queues_read(t, n, &q), 0);
		/* The IRQ names would give the same here; take them away from
		 * queue 3 to see the family's answer win. */
		q.rx[3].irq = -1;
		CHECK_INT(nt_nic_napi_report(t, n, &q, doc), 0);
		CHECK_STR(json_string_value(json_object_get(doc, "irq_source")), "netlink");
		CHECK_INT(q.rx[3].napi_id, 8212);
		CHECK_INT(q.tx[3].napi_id, 8212);
		CHECK(q.rx[3].irq >= 0 && t->irqs[q.rx[3].irq].irq == 124);
		CHECK(json_is_true(json_object_get(doc, "threaded")));
		json_t *napi = json_object_get(doc, "napi");
		CHECK_INT(json_array_size(napi), 16);
		json_t *e = json_array_get(napi, 1);
		CHECK_INT(json_integer_value(json_object_get(e, "id")), 8210);
		CHECK_INT(json_integer_value(json_object_get(e, "irq")), 122);
		CHECK_INT(json_integer_value(json_object_get(e, "pid")), 3101);
		CHECK_STR(json_string_value(json_object_get(e, "thread_cpus")), "0-127");
		CHECK_INT(json_integer_value(json_object_get(e, "last_cpu")), 5);
		CHECK(json_is_true(json_object_get(e, "threaded")));
		json_t *qs = nt_nic_queues_json(t, &q);
		CHECK_INT(json_integer_value(json_object_get(json_array_get(json_object_get(qs, "rx"), 3), "napi_id")),
			  8212);
		json_decref(qs);
		json_decref(doc);
		nt_nic_queues_free(&q);
	}
	n = t ? nt_topology_nic(t, "enos2") : NULL;
	if (n) {
		json_t *doc = json_object();
		CHECK_INT(nt_nic_napi_report(t, n, NULL, doc), 0);
		CHECK_INT(json_integer_value(json_object_get(doc, "napi_defer_hard_irqs")), 10);
		CHECK_INT(json_integer_value(json_object_get(doc, "gro_flush_timeout_ns")), 20000);
		json_t *e = json_array_get(json_object_get(doc, "napi"), 0);
		CHECK_INT(json_integer_value(json_object_get(e, "gro_flush_timeout_ns")), 20000);
		CHECK(json_is_false(json_object_get(e, "threaded")));
		CHECK(json_is_null(json_object_get(e, "pid")));
		json_decref(doc);
	}
	/* threaded turned off on a kernel that keeps the threads (6.1 does;
	 * the family before 6.17 has no per-NAPI "threaded" and still sends
	 * their pids): they are parked, not the NAPIs' workers, and not shown
	 * as such. */
	snprintf(path, sizeof(path), "python3 -c \"import json;p='%s/ethtool/enos1.json';d=json.load(open(p));"
		 "[a.pop('threaded',0) for a in d['netdev']['napis']];json.dump(d,open(p,'w'))\"", root);
	CHECK_INT(system(path), 0);
	snprintf(path, sizeof(path), "%s/sys/class/net/enos1/threaded", root);
	CHECK_INT(put(path, "0\n"), 0);
	n = t ? nt_topology_nic(t, "enos1") : NULL;
	if (n) {
		json_t *doc = json_object();
		CHECK_INT(nt_nic_napi_report(t, n, NULL, doc), 0);
		CHECK(json_is_false(json_object_get(doc, "threaded")));
		json_t *napi = json_object_get(doc, "napi");
		CHECK_INT(json_array_size(napi), 16);
		json_t *e = json_array_get(napi, 1);
		CHECK(json_is_false(json_object_get(e, "threaded")));
		CHECK(json_is_null(json_object_get(e, "pid")));
		CHECK(json_is_null(json_object_get(e, "thread_cpus")));
		CHECK(json_is_null(json_object_get(e, "last_cpu")));
		CHECK_INT(json_integer_value(json_object_get(e, "irq")), 122);
		json_decref(doc);
	}
	CHECK_INT(put(path, "1\n"), 0);
	/* enos1 on an older kernel: its document without the answers. The
	 * threads are still found by name, the IRQs from their names. */
	snprintf(path, sizeof(path), "python3 -c \"import json;p='%s/ethtool/enos1.json';d=json.load(open(p));"
		 "del d['netdev'];json.dump(d,open(p,'w'))\"", root);
	CHECK_INT(system(path), 0);
	n = t ? nt_topology_nic(t, "enos1") : NULL;
	if (n) {
		json_t *doc = json_object();
		CHECK_INT(nt_nic_queues_read(t, n, &q), 0);
		CHECK_INT(nt_nic_napi_report(t, n, &q, doc), 0);
		CHECK_STR(json_string_value(json_object_get(doc, "irq_source")), "irq-names");
		CHECK_INT(q.rx[3].napi_id, -1);
		CHECK(q.rx[3].irq >= 0 && t->irqs[q.rx[3].irq].irq == 124);
		json_t *napi = json_object_get(doc, "napi");
		CHECK_INT(json_array_size(napi), 16);
		json_t *e = json_array_get(napi, 1);
		CHECK_INT(json_integer_value(json_object_get(e, "id")), 8210);
		CHECK(json_is_null(json_object_get(e, "irq")));
		CHECK_INT(json_integer_value(json_object_get(e, "pid")), 3101);
		CHECK_STR(json_string_value(json_object_get(e, "thread_cpus")), "0-127");
		CHECK(json_is_null(json_object_get(e, "gro_flush_timeout_ns")));
		json_decref(doc);
		nt_nic_queues_free(&q);
	}
	/* ... and with threaded off there, the threads left are parked: no
	 * NAPI is shown working. */
	snprintf(path, sizeof(path), "%s/sys/class/net/enos1/threaded", root);
	CHECK_INT(put(path, "0\n"), 0);
	if (n) {
		json_t *doc = json_object();
		CHECK_INT(nt_nic_napi_report(t, n, NULL, doc), 0);
		CHECK(json_is_false(json_object_get(doc, "threaded")));
		CHECK_INT(json_array_size(json_object_get(doc, "napi")), 0);
		json_decref(doc);
	}
	nt_topology_free(t);
	t = NULL;
	snprintf(path, sizeof(path), "%s/x460-4node-8nic", NT_FIXTURES);
	CHECK_INT(nt_ctx_init(&ctx, path), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	n = t ? nt_topology_nic(t, "eth2") : NULL;
	if (n) {
		json_t *doc = json_object();
		CHECK_INT(nt_nic_queues_read(t, n, &q), 0);
		CHECK_INT(nt_nic_napi_report(t, n, &q, doc), 0);
		CHECK_STR(json_string_value(json_object_get(doc, "irq_source")), "irq-names");
		CHECK(json_is_false(json_object_get(doc, "threaded")));
		CHECK_INT(json_array_size(json_object_get(doc, "napi")), 0);
		CHECK(q.rx[0].irq == n->irqs[0]);
		json_decref(doc);
		nt_nic_queues_free(&q);
	}
	nt_topology_free(t);
}

int main(void)
{
	char cmd[256];
	snprintf(root, sizeof(root), "/tmp/nt-queues-XXXXXX");
	CHECK(mkdtemp(root) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	test_epyc();
	test_rss();
	test_x460();
	test_napi();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	system(cmd);
	TEST_MAIN_END();
}
