/* SPDX-License-Identifier: Apache-2.0 */
/* The delivery check's pure half: /proc/net/softnet_stat in the layouts of
 * old kernels, 5.10 to 6.1 and later ones; verdicts per IRQ and for RPS
 * from two hand-made samples against the virtio VM fixture's host. */
#include "diagnose/diagnose.h"
#include "host/delivery.h"
#include "host/napi.h"
#include "kernel/ctx.h"
#include "kernel/netdev.h"
#include "harness.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

/* 6.1 (13 fields: ..., backlog length, CPU) with CPU 1 offline: the CPU
 * column names the CPUs, whatever ONLINE says. */
static const char sn_61[] =
	"0000002a 00000001 00000002 00000000 00000000 00000000 00000000 00000000 00000000 00000003 00000000 00000000 00000000\n"
	"ffffffff 00000000 00000005 00000000 00000000 00000000 00000000 00000000 00000000 00000010 00000000 00000000 00000002\n";
/* 6.18 (15 fields: two queue lengths after the CPU). */
static const char sn_618[] =
	"00000015 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
	"000023c4 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 0000000b 00000000 00000000 00000001 00000007 00000000\n";
/* 4.19 (11 fields, no CPU): rows are the online CPUs in order. */
static const char sn_419[] =
	"00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000004 00000000\n"
	"00000002 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000006 00000000\n";

static void softnet(void)
{
	nt_softnet s;
	int online[] = { 0, 3 };

	CHECK_INT(nt_softnet_parse(sn_61, online, 2, &s), 0);
	CHECK_INT(s.n, 2);
	CHECK(s.cpu_column);
	CHECK_INT(s.rows[0].cpu, 0);
	CHECK_INT(s.rows[0].processed, 0x2a);
	CHECK_INT(s.rows[0].dropped, 1);
	CHECK_INT(s.rows[0].time_squeeze, 2);
	CHECK_INT(s.rows[0].received_rps, 3);
	CHECK_INT(s.rows[1].cpu, 2);
	CHECK_INT(s.rows[1].processed, 0xffffffffu);
	CHECK_INT(s.rows[1].received_rps, 16);
	nt_softnet_free(&s);

	CHECK_INT(nt_softnet_parse(sn_618, NULL, 0, &s), 0);
	CHECK_INT(s.n, 2);
	CHECK_INT(s.rows[1].cpu, 1);
	CHECK_INT(s.rows[1].processed, 0x23c4);
	CHECK_INT(s.rows[1].received_rps, 11);
	nt_softnet_free(&s);

	/* No CPU column: the second row is the second online CPU, 3, not 1. */
	CHECK_INT(nt_softnet_parse(sn_419, online, 2, &s), 0);
	CHECK(!s.cpu_column);
	CHECK_INT(s.rows[0].cpu, 0);
	CHECK_INT(s.rows[1].cpu, 3);
	CHECK_INT(s.rows[1].received_rps, 6);
	nt_softnet_free(&s);
	CHECK_INT(nt_softnet_parse(sn_419, NULL, 0, &s), 0);
	CHECK_INT(s.rows[1].cpu, 1);
	nt_softnet_free(&s);

	/* Garbage: too few fields, a non-hex field, a CPU beyond any host. */
	CHECK_INT(nt_softnet_parse("00000001 00000002 00000003\n", NULL, 0, &s), NT_EPARSE);
	nt_softnet_free(&s);
	CHECK_INT(nt_softnet_parse("0000000g 0 0 0 0 0 0 0 0 0 0\n", NULL, 0, &s), NT_EPARSE);
	nt_softnet_free(&s);
	CHECK_INT(nt_softnet_parse("0 0 0 0 0 0 0 0 0 0 0 0 ffffff\n", NULL, 0, &s), NT_EPARSE);
	nt_softnet_free(&s);
	/* The last CPU a set holds, and the first it does not (fuzz_softnet
	 * found 4096 taken: a CPU past every nt_cpuset). */
	CHECK_INT(nt_softnet_parse("0 0 0 0 0 0 0 0 0 0 0 0 fff\n", NULL, 0, &s), 0);
	CHECK_INT(s.n, 1);
	CHECK_INT(s.rows[0].cpu, NT_MAX_CPUS - 1);
	nt_softnet_free(&s);
	CHECK_INT(nt_softnet_parse("0 0 0 0 0 0 0 0 0 0 0 0 1000\n", NULL, 0, &s), NT_EPARSE);
	nt_softnet_free(&s);
	CHECK_INT(nt_softnet_parse("0 0 0 0 0 0 0 0 0 0 0 0 00001000 0 0\n", NULL, 0, &s), NT_EPARSE);
	nt_softnet_free(&s);
	/* No CPU column: an online CPU from /proc/interrupts' columns past
	 * NT_MAX_CPUS is refused the same way. */
	int far[] = { 0, NT_MAX_CPUS };
	CHECK_INT(nt_softnet_parse(sn_419, far, 2, &s), NT_EPARSE);
	nt_softnet_free(&s);
	CHECK_INT(nt_softnet_parse("", NULL, 0, &s), 0);
	CHECK_INT(s.n, 0);
	nt_softnet_free(&s);

	/* 32-bit counters: a wrap is a small step, not a huge one. */
	CHECK_INT(nt_softnet_delta(0xfffffff0u, 0x10u), 0x20);
	CHECK_INT(nt_softnet_delta(5, 9), 4);
}

/* A sample of /proc/interrupts with IRQ 38 (eth0's input.0) and 39
 * (output.0) at these counts, CPU0 then CPU1, and softnet's received_rps. */
static void sample(nt_delivery_sample *s, double t_ms, unsigned c38_0, unsigned c38_1, unsigned c39_0,
		   unsigned c39_1, unsigned rps0, unsigned rps1)
{
	char text[1024], sn[512];
	memset(s, 0, sizeof(*s));
	snprintf(text, sizeof(text),
		 "           CPU0       CPU1\n"
		 " 37:          0          0 PCI-MSIX-0000:00:03.0   0-edge      virtio2-config\n"
		 " 38: %10u %10u PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n"
		 " 39: %10u %10u PCI-MSIX-0000:00:03.0   2-edge      virtio2-output.0\n"
		 " 41:        100        100 PCI-MSIX-0000:00:04.0   1-edge      virtio3-rx\n",
		 c38_0, c38_1, c39_0, c39_1);
	CHECK_INT(nt_interrupts_parse(text, &s->irq.ints), 0);
	s->irq.t_ms = t_ms;
	snprintf(sn, sizeof(sn),
		 "00000010 0 0 0 0 0 0 0 0 %08x 0 0 00000000\n"
		 "00000020 0 0 0 0 0 0 0 0 %08x 0 0 00000001\n",
		 rps0, rps1);
	CHECK_INT(nt_softnet_parse(sn, NULL, 0, &s->softnet), 0);
}

static json_t *irq_of(json_t *doc, int irq)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(doc, "irqs"), i, e)
		if (json_integer_value(json_object_get(e, "irq")) == irq)
			return e;
	return NULL;
}

static const char *verdict(json_t *doc, int irq)
{
	return json_string_value(json_object_get(irq_of(doc, irq), "verdict"));
}

static void verdicts(void)
{
	nt_ctx ctx;
	nt_topology *t = NULL, *t1 = NULL;
	nt_delivery_sample a, b;

	CHECK_INT(nt_ctx_init(&ctx, NT_FIXTURES "/vm-virtio-2cpu"), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	CHECK_INT(nt_topology_read(&ctx, &t1), 0);
	if (!t || !t1)
		return;
	nt_irq *q38 = (nt_irq *)nt_topology_irq(t, 38), *q38e = (nt_irq *)nt_topology_irq(t1, 38);
	CHECK(q38 && q38->nic >= 0);
	if (!q38 || !q38e)
		return;

	/* IRQ 38 may run on CPU 1 only: 40 interrupts there is delivered;
	 * IRQ 39 (0-1) does not fire: not observed, never a pass. */
	nt_cpuset_zero(&q38->affinity);
	nt_cpuset_set(&q38->affinity, 1);
	q38e->affinity = q38->affinity;
	sample(&a, 1000, 5, 100, 7, 7, 0, 0);
	sample(&b, 3000, 5, 140, 7, 7, 0, 0);
	nt_delivery_in in = { .t0 = t, .t1 = t1, .a = &a, .b = &b };
	json_t *d = nt_delivery_compute(&in);
	CHECK(d != NULL);
	CHECK_STR(verdict(d, 38), "delivered");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(irq_of(d, 38), "counts"), "1")), 40);
	CHECK_INT(json_integer_value(json_object_get(irq_of(d, 38), "total")), 40);
	CHECK_STR(verdict(d, 39), "not observed");
	CHECK(irq_of(d, 41) == NULL); /* no NIC owns it */
	CHECK_INT(json_integer_value(json_object_get(json_object_get(d, "verdicts"), "delivered")), 1);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(d, "verdicts"), "not_observed")), 2);
	CHECK(json_real_value(json_object_get(d, "window_ms")) == 2000.0);
	CHECK(json_is_null(json_object_get(d, "rps")));
	json_decref(d);
	nt_delivery_sample_free(&b);

	/* 3 interrupts on CPU 0, outside the affinity: elsewhere, with the
	 * CPU and the count; the NIC's sum says so too. */
	sample(&b, 3000, 8, 140, 7, 7, 0, 0);
	d = nt_delivery_compute(&in);
	CHECK_STR(verdict(d, 38), "elsewhere");
	json_t *e0 = json_array_get(json_object_get(irq_of(d, 38), "elsewhere"), 0);
	CHECK_INT(json_integer_value(json_object_get(e0, "cpu")), 0);
	CHECK_INT(json_integer_value(json_object_get(e0, "count")), 3);
	CHECK_STR(json_string_value(json_object_get(e0, "outside")), "affinity");
	json_t *n0 = json_array_get(json_object_get(d, "nics"), 0);
	CHECK_STR(json_string_value(json_object_get(n0, "nic")), "eth0");
	CHECK_INT(json_integer_value(json_object_get(n0, "elsewhere")), 3);
	CHECK_INT(json_integer_value(json_object_get(n0, "interrupts")), 43);
	json_t *c0 = json_array_get(json_object_get(d, "cpus"), 0);
	CHECK_INT(json_integer_value(json_object_get(c0, "nic_interrupts")), 3);
	json_decref(d);

	/* The affinity moved to CPU 0 during the window: either end allows
	 * CPU 0, and the end's affinity is shown. */
	nt_cpuset_zero(&q38e->affinity);
	nt_cpuset_set(&q38e->affinity, 0);
	d = nt_delivery_compute(&in);
	CHECK_STR(verdict(d, 38), "delivered");
	CHECK_STR(json_string_value(json_object_get(irq_of(d, 38), "affinity_end")), "0");
	json_decref(d);

	/* But a placement on CPU 1 is what counts: the move behind the
	 * agent's back is elsewhere, said against the placement. */
	nt_delivery_placed pl = { .irq = 38 };
	nt_cpuset_set(&pl.cpus, 1);
	snprintf(pl.by, sizeof(pl.by), "transaction 7");
	in.placed = &pl;
	in.nplaced = 1;
	d = nt_delivery_compute(&in);
	CHECK_STR(verdict(d, 38), "elsewhere");
	CHECK_STR(json_string_value(json_object_get(irq_of(d, 38), "placed")), "1");
	CHECK_STR(json_string_value(json_object_get(irq_of(d, 38), "placed_by")), "transaction 7");
	e0 = json_array_get(json_object_get(irq_of(d, 38), "elsewhere"), 0);
	CHECK_STR(json_string_value(json_object_get(e0, "outside")), "placement");
	json_decref(d);
	nt_delivery_sample_free(&b);

	/* IRQ 41 belongs to no NIC (virtio3-rx of a vsock device): left out
	 * until the agent placed it (other_irqs), then judged like a NIC's,
	 * with a null NIC, in no NIC's sums and no CPU's NIC interrupts.
	 * Its 100 + 100 of sample A become 100 + 130: placed on CPU 1,
	 * delivered; placed on CPU 0, elsewhere. */
	{
		nt_delivery_sample b41;
		memset(&b41, 0, sizeof(b41));
		CHECK_INT(nt_interrupts_parse("           CPU0       CPU1\n"
					      " 38:          5        140 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n"
					      " 39:          7          7 PCI-MSIX-0000:00:03.0   2-edge      virtio2-output.0\n"
					      " 41:        100        130 PCI-MSIX-0000:00:04.0   1-edge      virtio3-rx\n",
					      &b41.irq.ints),
			  0);
		b41.irq.t_ms = 3000;
		nt_delivery_placed two[2] = { pl, { .irq = 41 } };
		nt_cpuset_set(&two[1].cpus, 1);
		snprintf(two[1].by, sizeof(two[1].by), "transaction 8");
		nt_delivery_in in41 = { .t0 = t, .t1 = t1, .a = &a, .b = &b41, .placed = two, .nplaced = 2 };
		d = nt_delivery_compute(&in41);
		CHECK_STR(verdict(d, 41), "delivered");
		CHECK(json_is_null(json_object_get(irq_of(d, 41), "nic")));
		CHECK_STR(json_string_value(json_object_get(irq_of(d, 41), "name")), "virtio3-rx");
		CHECK_INT(json_integer_value(json_object_get(irq_of(d, 41), "total")), 30);
		CHECK_INT(json_array_size(json_object_get(d, "nics")), 1);
		json_t *c1 = json_array_get(json_object_get(d, "cpus"), 1);
		CHECK_INT(json_integer_value(json_object_get(c1, "nic_interrupts")), 40); /* IRQ 38's only */
		json_decref(d);
		nt_cpuset_zero(&two[1].cpus);
		nt_cpuset_set(&two[1].cpus, 0);
		d = nt_delivery_compute(&in41);
		CHECK_STR(verdict(d, 41), "elsewhere");
		e0 = json_array_get(json_object_get(irq_of(d, 41), "elsewhere"), 0);
		CHECK_INT(json_integer_value(json_object_get(e0, "cpu")), 1);
		CHECK_INT(json_integer_value(json_object_get(e0, "count")), 30);
		CHECK_STR(json_string_value(json_object_get(e0, "outside")), "placement");
		json_decref(d);
		nt_delivery_sample_free(&b41);
	}

	/* A counter that went down (hot-unplug folds counts) counts 0. */
	sample(&b, 3000, 1, 90, 7, 7, 0, 0);
	d = nt_delivery_compute(&in);
	CHECK_STR(verdict(d, 38), "not observed");
	json_decref(d);
	nt_delivery_sample_free(&b);

	/* RPS on eth0 rx-0 to CPU 1: wake-ups on CPU 1 are delivered, on
	 * CPU 0 elsewhere, none at all not observed. */
	nt_delivery_rxq rq = { .nic = q38->nic, .queue = 0 };
	nt_cpuset_set(&rq.rps_cpus, 1);
	in.rxq = &rq;
	in.nrxq = 1;
	sample(&b, 3000, 5, 100, 7, 7, 0, 9);
	d = nt_delivery_compute(&in);
	json_t *rps = json_object_get(d, "rps");
	CHECK_STR(json_string_value(json_object_get(rps, "verdict")), "delivered");
	CHECK_INT(json_integer_value(json_object_get(rps, "received_rps")), 9);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(rps, "queues"), 0), "verdict")),
		  "delivered");
	json_decref(d);
	nt_delivery_sample_free(&b);
	sample(&b, 3000, 5, 100, 7, 7, 4, 9);
	d = nt_delivery_compute(&in);
	rps = json_object_get(d, "rps");
	CHECK_STR(json_string_value(json_object_get(rps, "verdict")), "elsewhere");
	e0 = json_array_get(json_object_get(rps, "elsewhere"), 0);
	CHECK_INT(json_integer_value(json_object_get(e0, "cpu")), 0);
	CHECK_INT(json_integer_value(json_object_get(e0, "count")), 4);
	json_decref(d);
	nt_delivery_sample_free(&b);
	sample(&b, 3000, 5, 100, 7, 7, 0, 0);
	d = nt_delivery_compute(&in);
	CHECK_STR(json_string_value(json_object_get(json_object_get(d, "rps"), "verdict")), "not observed");
	json_decref(d);
	nt_delivery_sample_free(&b);

	nt_delivery_sample_free(&a);
	nt_topology_free(t);
	nt_topology_free(t1);
}

/* The I/O half on the fixture: its three files are read. */
static void read_fixture(void)
{
	nt_ctx ctx;
	nt_delivery_sample s;
	CHECK_INT(nt_ctx_init(&ctx, NT_FIXTURES "/vm-virtio-2cpu"), 0);
	CHECK_INT(nt_delivery_sample_read(&ctx, &s), 0);
	CHECK_INT(s.irq.ints.ncols, 2);
	CHECK(s.irq.nsoft == 2);
	CHECK_INT(s.softnet.n, 2);
	CHECK_INT(s.softnet.rows[1].processed, 0x347);
	nt_delivery_sample_free(&s);
	/* A root without /proc/interrupts: an error, not an empty check. */
	char dir[] = "/tmp/nt-delivery-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT(nt_ctx_init(&ctx, dir), 0);
	CHECK_INT(nt_delivery_sample_read(&ctx, &s), -ENOENT);
	nt_delivery_sample_free(&s);
	rmdir(dir);
}

/* The last check as findings: one per IRQ elsewhere, counted as a
 * warning, none for delivered or not observed ones. */
static void findings(void)
{
	json_t *diag = json_pack("{s:[{s:s, s:s}], s:{s:i, s:i, s:i}}", "findings", "id", "x", "severity", "error",
				 "summary", "error", 1, "warning", 0, "info", 0);
	json_t *check = json_loads("{\"window_ms\": 2000.0, \"at_ms\": 1000000, \"irqs\": ["
				   "{\"irq\": 38, \"nic\": \"eth0\", \"verdict\": \"elsewhere\", \"placed\": \"1\","
				   " \"affinity\": \"1\", \"total\": 9, \"counts\": {\"0\": 7, \"1\": 2},"
				   " \"elsewhere\": [{\"cpu\": 0, \"count\": 7, \"outside\": \"placement\"}],"
				   " \"queue_packets\": 900},"
				   "{\"irq\": 34, \"nic\": null, \"name\": \"virtio4-input\", \"verdict\": \"elsewhere\","
				   " \"placed\": \"1\", \"affinity\": \"0\", \"total\": 5, \"counts\": {\"0\": 5},"
				   " \"elsewhere\": [{\"cpu\": 0, \"count\": 5, \"outside\": \"placement\"}]},"
				   "{\"irq\": 39, \"nic\": \"eth0\", \"verdict\": \"delivered\"},"
				   "{\"irq\": 37, \"nic\": \"eth0\", \"verdict\": \"not observed\"}]}",
				   0, NULL);
	CHECK(diag && check);
	CHECK_INT(nt_diagnose_add_delivery(diag, check, 31000000), 0);
	json_t *f = json_object_get(diag, "findings");
	CHECK_INT(json_array_size(f), 3);
	/* An IRQ of no NIC that the agent placed is named by its own name. */
	json_t *o = json_array_get(f, 2);
	CHECK_STR(json_string_value(json_object_get(o, "subject")), "virtio4-input");
	CHECK(strstr(json_string_value(json_object_get(o, "message")), "IRQ 34 (virtio4-input) is placed on CPU(s) 1") != NULL);
	json_t *e = json_array_get(f, 1); /* after the error */
	CHECK_STR(json_string_value(json_object_get(e, "id")), "irq-delivered-elsewhere");
	CHECK_STR(json_string_value(json_object_get(e, "subject")), "eth0");
	CHECK(strstr(json_string_value(json_object_get(e, "message")), "7 of its 9 interrupts") != NULL);
	CHECK(strstr(json_string_value(json_object_get(e, "message")), "30000s ago") != NULL);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(e, "evidence"), "queue_packets")), 900);
	CHECK(json_is_null(json_object_get(json_object_get(o, "evidence"), "queue_packets")));
	CHECK(json_is_null(json_object_get(e, "fix")));
	CHECK_INT(json_integer_value(json_object_get(json_object_get(diag, "summary"), "warning")), 2);
	json_decref(diag);
	json_decref(check);
}

/* A NAPI thread the check found elsewhere: napi-thread-elsewhere, one a
 * thread, after the IRQs' findings of its severity. Moved (allowed CPUs no
 * longer its placement): its napi[] entry pins it again; ran outside a
 * placement its affinity still reads: no fix. Delivered and not observed
 * threads: none. */
static void thread_findings(void)
{
	json_t *diag = json_pack("{s:[], s:{s:i, s:i, s:i}}", "findings", "summary", "error", 0, "warning", 0, "info", 0);
	json_t *check = json_loads(
		"{\"window_ms\": 2000.0, \"at_ms\": 1000000, \"irqs\": [], \"threads\": ["
		"{\"target\": \"enos1/rx-0\", \"nic\": \"enos1\", \"queue\": 0, \"napi_id\": 8209, \"pid\": 3100,"
		" \"irq\": 121, \"irq_verdict\": \"delivered\", \"placed\": \"48\", \"placed_by\": \"transaction 1\","
		" \"allowed\": \"0-127\", \"run_ns\": null, \"run_source\": null, \"last_cpu_start\": 48,"
		" \"last_cpu\": 48, \"verdict\": \"elsewhere\", \"outside\": \"allowed\", \"why\": null},"
		"{\"target\": \"enos1/rx-1\", \"nic\": \"enos1\", \"queue\": 1, \"napi_id\": 8210, \"pid\": 3101,"
		" \"irq\": 122, \"placed\": \"49\", \"placed_by\": \"transaction 1\", \"allowed\": \"49\","
		" \"run_ns\": 12300000, \"run_source\": \"schedstat\", \"last_cpu_start\": 49, \"last_cpu\": 5,"
		" \"verdict\": \"elsewhere\", \"outside\": \"placement\", \"why\": null},"
		"{\"target\": \"enos1/rx-2\", \"nic\": \"enos1\", \"queue\": 2, \"pid\": 3102, \"placed\": \"50\","
		" \"verdict\": \"delivered\"},"
		"{\"target\": \"enos1/rx-3\", \"nic\": \"enos1\", \"queue\": 3, \"pid\": null, \"placed\": \"51\","
		" \"verdict\": \"not observed\", \"why\": \"no thread: threaded NAPI is off\"}]}",
		0, NULL);
	CHECK(diag && check);
	CHECK_INT(nt_diagnose_add_delivery(diag, check, 31000000), 0);
	json_t *fs = json_object_get(diag, "findings");
	CHECK_INT(json_array_size(fs), 2);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(diag, "summary"), "warning")), 2);
	json_t *moved = NULL, *ran = NULL, *f;
	size_t i;
	json_array_foreach(fs, i, f) {
		CHECK_STR(json_string_value(json_object_get(f, "id")), "napi-thread-elsewhere");
		CHECK_STR(json_string_value(json_object_get(f, "subject")), "enos1");
		CHECK_STR(json_string_value(json_object_get(f, "severity")), "warning");
		json_int_t q = json_integer_value(json_object_get(json_object_get(f, "evidence"), "queue"));
		if (q == 0)
			moved = f;
		else if (q == 1)
			ran = f;
	}
	CHECK(moved && ran);
	if (moved) {
		const json_t *ev = json_object_get(moved, "evidence");
		CHECK_INT(json_integer_value(json_object_get(ev, "napi_id")), 8209);
		CHECK_INT(json_integer_value(json_object_get(ev, "pid")), 3100);
		CHECK_STR(json_string_value(json_object_get(ev, "placed")), "48");
		CHECK_STR(json_string_value(json_object_get(ev, "allowed")), "0-127");
		CHECK_STR(json_string_value(json_object_get(ev, "outside")), "allowed");
		CHECK_INT(json_integer_value(json_object_get(ev, "at_ms")), 1000000);
		const char *m = json_string_value(json_object_get(moved, "message"));
		CHECK_MSG(m && strstr(m, "NAPI thread pid 3100 of enos1/rx-0 (NAPI 8209) is placed on CPU(s) 48, but in the "
					 "delivery check of 2000 ms 30000s ago it was allowed on CPU(s) 0-127, last on CPU 48") &&
				  strstr(m, "taskset") && strstr(m, "/proc/3100/cpuset"),
			  "message: %s", m ? m : "?");
		char *fix = json_dumps(json_object_get(moved, "fix"), JSON_COMPACT);
		CHECK_MSG(fix && !strcmp(fix, "{\"napi\":[{\"interface\":\"enos1\",\"queues\":\"0\",\"thread_cpus\":\"48\"}]}"),
			  "fix: %s", fix ? fix : "?");
		free(fix);
	}
	if (ran) {
		const char *m = json_string_value(json_object_get(ran, "message"));
		CHECK_MSG(m && strstr(m, "NAPI thread pid 3101 of enos1/rx-1 (NAPI 8210) is placed on CPU(s) 49 and its "
					 "affinity reads so") && strstr(m, "ran 12.3 ms, last on CPU 5, outside it"),
			  "message: %s", m ? m : "?");
		CHECK(json_is_null(json_object_get(ran, "fix")));
		CHECK_INT(json_integer_value(json_object_get(json_object_get(ran, "evidence"), "last_cpu")), 5);
	}
	/* Both in the fix profile: only the moved thread's entry. */
	json_t *p = nt_diagnose_fix_profile(diag, "fixes");
	CHECK(p && json_array_size(json_object_get(p, "napi")) == 1);
	json_decref(p);
	json_decref(diag);
	json_decref(check);
}

/* An IRQ's queue: the netdev family's map where the NAPI read holds it
 * (here it says IRQ 38 serves RX queue 3, whatever its name says), the
 * number in the name otherwise; "queue_source" says which. */
static void queue_source(void)
{
	nt_ctx ctx;
	nt_topology *t = NULL;
	nt_delivery_sample a, b;

	CHECK_INT(nt_ctx_init(&ctx, NT_FIXTURES "/vm-virtio-2cpu"), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	const nt_nic *eth0 = t ? nt_topology_nic(t, "eth0") : NULL;
	CHECK(eth0 != NULL);
	if (!eth0) {
		nt_topology_free(t);
		return;
	}
	nt_host_napi h;
	memset(&h, 0, sizeof(h));
	h.nnics = t->nnics;
	h.nics = calloc((size_t)t->nnics, sizeof(*h.nics));
	nt_napi_nic *c = &h.nics[eth0 - t->nics];
	c->read = true;
	c->netlink_map = true;
	h.nd.queues = calloc(1, sizeof(*h.nd.queues));
	h.nd.queues[0] = (nt_nd_queue){ .ifindex = (uint32_t)eth0->ifindex, .id = 3, .type = NT_NETDEV_QUEUE_RX,
					.napi_id = 8196 };
	h.nd.nqueues = h.nd.qcap = 1;
	h.nd.napis = calloc(1, sizeof(*h.nd.napis));
	h.nd.napis[0] = (nt_nd_napi){ .ifindex = (uint32_t)eth0->ifindex, .id = 8196, .irq = 38, .pid = -1,
				      .defer_hard_irqs = -1, .gro_flush_timeout = -1, .irq_suspend_timeout = -1,
				      .threaded = 0 };
	h.nd.nnapis = h.nd.ncap = 1;

	sample(&a, 1000, 5, 100, 7, 7, 0, 0);
	sample(&b, 3000, 5, 140, 7, 7, 0, 0);
	nt_delivery_in in = { .t0 = t, .a = &a, .b = &b, .napi = &h };
	json_t *d = nt_delivery_compute(&in);
	CHECK_INT(json_integer_value(json_object_get(irq_of(d, 38), "queue")), 3);
	CHECK_STR(json_string_value(json_object_get(irq_of(d, 38), "queue_source")), "netlink");
	/* The family names no queue for IRQ 39: none, not the name's 0. */
	CHECK(json_is_null(json_object_get(irq_of(d, 39), "queue")));
	json_decref(d);
	in.napi = NULL;
	d = nt_delivery_compute(&in);
	CHECK_INT(json_integer_value(json_object_get(irq_of(d, 38), "queue")), 0);
	CHECK_STR(json_string_value(json_object_get(irq_of(d, 38), "queue_source")), "irq-names");
	json_decref(d);
	nt_delivery_sample_free(&a);
	nt_delivery_sample_free(&b);
	nt_host_napi_free(&h);
	nt_topology_free(t);
}

/* A qstats entry of IFINDEX: TYPE queue ID with its packets counter
 * (rx-packets or tx-packets) at PKTS. */
static nt_nd_qstats qs(int ifindex, uint32_t type, uint32_t id, uint64_t pkts)
{
	nt_nd_qstats q;
	memset(&q, 0, sizeof(q));
	q.ifindex = (uint32_t)ifindex;
	q.type = type;
	q.id = id;
	int bit = type == NT_NETDEV_QUEUE_TX ? 2 : 0;
	q.present = 1u << bit | 1u << (bit + 1);
	q.v[bit] = pkts;
	q.v[bit + 1] = pkts * 1500;
	return q;
}

/* A queue's packets beside a silent IRQ (qstats-get): eth0's RX queue 0
 * (IRQ 38, input.0) carried 4,000 packets while IRQ 38 fired nowhere:
 * not observed, traffic "without-interrupt"; its TX queue 0 (IRQ 39,
 * output.0) none: "none"; the config IRQ 37 serves no queue: null. With
 * interrupts the verdict is delivered and "traffic" says nothing. Without
 * qstats, or a queue only in one sample, null. A counter that went down
 * counts from zero. The family's map, where it says IRQ 38 serves RX
 * queue 3, takes queue 3's packets instead. */
static void queue_packets(void)
{
	nt_ctx ctx;
	nt_topology *t = NULL;
	nt_delivery_sample a, b;

	CHECK_INT(nt_ctx_init(&ctx, NT_FIXTURES "/vm-virtio-2cpu"), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	const nt_nic *eth0 = t ? nt_topology_nic(t, "eth0") : NULL;
	CHECK(eth0 != NULL);
	if (!eth0) {
		nt_topology_free(t);
		return;
	}
	int ix = eth0->ifindex;
	sample(&a, 1000, 5, 100, 7, 7, 0, 0);
	sample(&b, 3000, 5, 100, 7, 7, 0, 0);
	a.qstats = calloc(3, sizeof(*a.qstats));
	b.qstats = calloc(3, sizeof(*b.qstats));
	a.qstats[0] = qs(ix, NT_NETDEV_QUEUE_RX, 0, 100);
	a.qstats[1] = qs(ix, NT_NETDEV_QUEUE_TX, 0, 50);
	a.qstats[2] = qs(ix, NT_NETDEV_QUEUE_RX, 3, 9000);
	a.nqstats = 3;
	b.qstats[0] = qs(ix, NT_NETDEV_QUEUE_RX, 0, 4100);
	b.qstats[1] = qs(ix, NT_NETDEV_QUEUE_TX, 0, 50);
	b.qstats[2] = qs(ix, NT_NETDEV_QUEUE_RX, 3, 20);
	b.nqstats = 3;
	nt_delivery_in in = { .t0 = t, .a = &a, .b = &b };
	json_t *d = nt_delivery_compute(&in);
	CHECK_STR(verdict(d, 38), "not observed");
	CHECK_INT(json_integer_value(json_object_get(irq_of(d, 38), "queue_packets")), 4000);
	CHECK_STR(json_string_value(json_object_get(irq_of(d, 38), "traffic")), "without-interrupt");
	CHECK_STR(verdict(d, 39), "not observed");
	CHECK_INT(json_integer_value(json_object_get(irq_of(d, 39), "queue_packets")), 0);
	CHECK(json_is_integer(json_object_get(irq_of(d, 39), "queue_packets")));
	CHECK_STR(json_string_value(json_object_get(irq_of(d, 39), "traffic")), "none");
	CHECK(json_is_null(json_object_get(irq_of(d, 37), "queue_packets")));
	CHECK(json_is_null(json_object_get(irq_of(d, 37), "traffic")));
	CHECK_INT(json_integer_value(json_object_get(json_object_get(d, "verdicts"), "not_observed")), 3);
	json_decref(d);

	/* IRQ 38 fired: delivered, its packets kept, nothing to tell apart. */
	nt_delivery_sample_free(&b);
	sample(&b, 3000, 5, 140, 7, 7, 0, 0);
	b.qstats = calloc(1, sizeof(*b.qstats));
	b.qstats[0] = qs(ix, NT_NETDEV_QUEUE_RX, 0, 4100);
	b.nqstats = 1;
	d = nt_delivery_compute(&in);
	CHECK_STR(verdict(d, 38), "delivered");
	CHECK_INT(json_integer_value(json_object_get(irq_of(d, 38), "queue_packets")), 4000);
	CHECK(json_is_null(json_object_get(irq_of(d, 38), "traffic")));
	/* TX queue 0 only in the first sample: unknown, not 0. */
	CHECK(json_is_null(json_object_get(irq_of(d, 39), "queue_packets")));
	CHECK(json_is_null(json_object_get(irq_of(d, 39), "traffic")));
	json_decref(d);

	/* The family's map: IRQ 38 serves RX queue 3, whose counter went
	 * down (re-created): 20 from zero. */
	nt_host_napi h;
	memset(&h, 0, sizeof(h));
	h.nnics = t->nnics;
	h.nics = calloc((size_t)t->nnics, sizeof(*h.nics));
	h.nics[eth0 - t->nics].read = true;
	h.nics[eth0 - t->nics].netlink_map = true;
	h.nd.queues = calloc(1, sizeof(*h.nd.queues));
	h.nd.queues[0] = (nt_nd_queue){ .ifindex = (uint32_t)ix, .id = 3, .type = NT_NETDEV_QUEUE_RX, .napi_id = 8196 };
	h.nd.nqueues = h.nd.qcap = 1;
	h.nd.napis = calloc(1, sizeof(*h.nd.napis));
	h.nd.napis[0] = (nt_nd_napi){ .ifindex = (uint32_t)ix, .id = 8196, .irq = 38, .pid = -1, .defer_hard_irqs = -1,
				      .gro_flush_timeout = -1, .irq_suspend_timeout = -1, .threaded = 0 };
	h.nd.nnapis = h.nd.ncap = 1;
	nt_delivery_sample_free(&b);
	sample(&b, 3000, 5, 100, 7, 7, 0, 0);
	b.qstats = calloc(2, sizeof(*b.qstats));
	b.qstats[0] = qs(ix, NT_NETDEV_QUEUE_RX, 0, 4100);
	b.qstats[1] = qs(ix, NT_NETDEV_QUEUE_RX, 3, 20);
	b.nqstats = 2;
	in.napi = &h;
	d = nt_delivery_compute(&in);
	CHECK_INT(json_integer_value(json_object_get(irq_of(d, 38), "queue_packets")), 20);
	CHECK_STR(json_string_value(json_object_get(irq_of(d, 38), "traffic")), "without-interrupt");
	json_decref(d);

	/* No qstats in either sample: null, as on a kernel before 6.9. */
	nt_delivery_sample_free(&a);
	nt_delivery_sample_free(&b);
	sample(&a, 1000, 5, 100, 7, 7, 0, 0);
	sample(&b, 3000, 5, 100, 7, 7, 0, 0);
	in.napi = NULL;
	d = nt_delivery_compute(&in);
	CHECK(json_is_null(json_object_get(irq_of(d, 38), "queue_packets")));
	CHECK(json_is_null(json_object_get(irq_of(d, 38), "traffic")));
	CHECK_STR(verdict(d, 38), "not observed");
	json_decref(d);
	nt_delivery_sample_free(&a);
	nt_delivery_sample_free(&b);
	nt_host_napi_free(&h);
	nt_topology_free(t);
}

int main(void)
{
	queue_packets();
	findings();
	thread_findings();
	queue_source();
	softnet();
	verdicts();
	read_fixture();
	TEST_MAIN_END();
}
