/* SPDX-License-Identifier: Apache-2.0 */
/* The delivery check of NAPI threads (host/delivery_threads.c, issue 39):
 *   - the parsers: /proc/PID/schedstat's run time, /proc/PID/stat's utime
 *     and stime behind a command name with spaces and ')';
 *   - the verdicts from hand-made samples: ran inside the placement
 *     (delivered), last ran outside it or allowed elsewhere (elsewhere),
 *     did not run, no thread, a thread that ended (not observed);
 *   - on a copy of the EPYC tree (kernel/fixture_napi.c): enos1/rx-0's
 *     thread found through the NAPI read (pid 3100, NAPI 8209, IRQ 121),
 *     its run time from stat where the captured thread has no schedstat,
 *     from schedstat for a thread the fixture starts, and the check's
 *     document with the thread beside its IRQ's counts. */
#include "host/delivery.h"
#include "host/napi.h"
#include "kernel/ctx.h"
#include "kernel/netdev.h"
#include "kernel/task.h"
#include "harness.h"
#include "tree_files.h"

#include <stdlib.h>
#include <string.h>

static void parsers(void)
{
	uint64_t v;
	/* Fields 14 and 15 are 7 and 5 ticks; the name holds ") " */
	const char *stat = "4242 (napi/a) b-1) S 2 0 0 0 -1 2129984 0 0 0 0 7 5 0 0 20 0 1 0 388 0 0 "
			   "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 5 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
	CHECK_INT(nt_task_parse_cpu_ticks(stat, &v), 0);
	CHECK_INT(v, 12);
	CHECK_INT(nt_task_parse_cpu_ticks("1 (x) S 2 0 0", &v), NT_EPARSE);
	CHECK_INT(nt_task_parse_cpu_ticks("1 (x) S 2 0 0 0 -1 0 0 0 0 0 -7 5", &v), NT_EPARSE);
	CHECK_INT(nt_task_parse_schedstat("123456789 5000 42\n", &v), 0);
	CHECK_INT(v, 123456789);
	CHECK_INT(nt_task_parse_schedstat("18446744073709551615 0 0", &v), 0);
	CHECK(v == UINT64_MAX);
	CHECK_INT(nt_task_parse_schedstat("x 1 2", &v), NT_EPARSE);
	CHECK_INT(nt_task_parse_schedstat("", &v), NT_EPARSE);
	CHECK_INT(nt_task_parse_schedstat("12a 0 0", &v), NT_EPARSE);
	int cpu;
	CHECK_INT(nt_task_parse_last_cpu(stat, &cpu), 0);
	CHECK_INT(cpu, 5);
}

/* A thread placed on CPU 1 that ran RUN ns and last on LAST, allowed on ALLOWED. */
static nt_delivery_thread thread(uint64_t run, int last, const char *allowed)
{
	nt_delivery_thread th;
	memset(&th, 0, sizeof(th));
	snprintf(th.target, sizeof(th.target), "eth0/rx-0");
	nt_cpulist_parse("1", &th.cpus);
	th.pid = 77;
	th.has_a = th.has_b = true;
	th.a = (nt_task){ .pid = 77, .last_cpu = 1, .has_run = true, .run_ns = 1000, .run_source = "schedstat" };
	th.b = (nt_task){ .pid = 77, .last_cpu = last, .has_run = true, .run_ns = 1000 + run,
			  .run_source = "schedstat" };
	th.a.has_allowed = th.b.has_allowed = true;
	nt_cpulist_parse("1", &th.a.allowed);
	nt_cpulist_parse(allowed, &th.b.allowed);
	return th;
}

static void judge(void)
{
	const char *outside, *why;
	nt_delivery_thread th = thread(5000, 1, "1");
	CHECK_INT(nt_delivery_thread_judge(&th, &outside, &why), NT_DELIVERED);
	CHECK(!outside && !why);
	th = thread(5000, 0, "1");
	CHECK_INT(nt_delivery_thread_judge(&th, &outside, &why), NT_DELIVERED_ELSEWHERE);
	CHECK_STR(outside, "placement");
	/* Moved behind the agent's back: elsewhere even before it runs. */
	th = thread(0, 1, "0-1");
	CHECK_INT(nt_delivery_thread_judge(&th, &outside, &why), NT_DELIVERED_ELSEWHERE);
	CHECK_STR(outside, "allowed");
	th = thread(0, 1, "1");
	CHECK_INT(nt_delivery_thread_judge(&th, &outside, &why), NT_NOT_OBSERVED);
	CHECK_STR(why, "it did not run in the window");
	th = thread(5000, 1, "1");
	th.has_b = false;
	CHECK_INT(nt_delivery_thread_judge(&th, &outside, &why), NT_NOT_OBSERVED);
	CHECK(why && strstr(why, "ended"));
	th.pid = 0;
	CHECK_INT(nt_delivery_thread_judge(&th, &outside, &why), NT_NOT_OBSERVED);
	CHECK(why && strstr(why, "no thread"));
	th = thread(5000, 1, "1");
	th.b.has_run = false;
	CHECK_INT(nt_delivery_thread_judge(&th, &outside, &why), NT_NOT_OBSERVED);
}

static const json_t *thread_of(const json_t *doc, const char *target)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(doc, "threads"), i, e)
		if (!strcmp(json_string_value(json_object_get(e, "target")), target))
			return e;
	return NULL;
}

static long long num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_integer(v) ? (long long)json_integer_value(v) : -999;
}

static const char *word(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "(null)";
}

/* /proc/interrupts with IRQ 121 (enos1's rx-0, allowed on CPU 48) at
 * COUNT on CPU 48. */
static void interrupts(const char *root, unsigned count)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "           CPU0       CPU48\n"
		 " 121:          0 %10u  IR-PCI-MSIX-0000:01:00.1 526337-edge      mlx5_comp0@pci:0000:01:00.1\n"
		 "NMI:          0          0   Non-maskable interrupts\n", count);
	tree_write(root, "proc/interrupts", text);
}

/* Thread 3100's stat with UTIME ticks and last CPU LAST. */
#define STAT0 "3100 (napi/enos1-8209) S 2 0 0 0 -1 2129984 0 0 0 0 %d 0 0 0 20 0 1 0 1200 0 0 0 0 " \
	      "0 0 0 0 0 0 0 0 0 0 0 17 %d 0 0 0 0 0 0 0 0 0 0 0 0 0\n"

static void fixture(void)
{
	char root[64], cmd[256];
	nt_ctx ctx;
	nt_topology *t = NULL;
	nt_host_napi h;
	nt_delivery_sample a, b;

	snprintf(root, sizeof(root), "/tmp/nt-delthr-XXXXXX");
	CHECK(mkdtemp(root) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	/* Thread 3100 (enos1 rx-0) pinned to CPU 48, where its IRQ is, and
	 * last on it. */
	nt_cpuset placed;
	nt_cpulist_parse("48", &placed);
	CHECK_INT(nt_task_set_allowed(&ctx, 3100, &placed), 0);
	nt_cpuset nine;
	nt_cpulist_parse("9", &nine);
	CHECK_INT(nt_task_set_allowed(&ctx, 3101, &nine), 0);
	char stat[512];
	snprintf(stat, sizeof(stat), STAT0, 10, 48);
	tree_write(root, "proc/3100/stat", stat);
	interrupts(root, 100);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (!t)
		goto out;
	CHECK_INT(nt_host_napi_read(t, NULL, 0, &h), 0);

	nt_delivery_thread th[2];
	memset(th, 0, sizeof(th));
	snprintf(th[0].target, sizeof(th[0].target), "enos1/rx-0");
	th[0].cpus = placed;
	snprintf(th[0].by, sizeof(th[0].by), "transaction 4");
	snprintf(th[1].target, sizeof(th[1].target), "enos1/rx-1");
	th[1].cpus = nine;
	nt_delivery_threads_resolve(t, &h, th, 2);
	CHECK_INT(th[0].pid, 3100);
	CHECK_INT(th[0].napi_id, 8209);
	CHECK_INT(th[0].irq, 121);
	CHECK_INT(th[1].pid, 3101);
	nt_delivery_threads_sample(&ctx, th, 2, false);
	CHECK(th[0].has_a && th[0].a.has_run);
	CHECK_STR(th[0].a.run_source, "stat");
	CHECK_INT(nt_delivery_sample_read(&ctx, &a), 0);
	/* In the window: rx-0's thread ran 3 ticks more, last on CPU 48, and
	 * its IRQ fired 40 times on CPU 48; rx-1's did not run. */
	snprintf(stat, sizeof(stat), STAT0, 13, 48);
	tree_write(root, "proc/3100/stat", stat);
	interrupts(root, 140);
	CHECK_INT(nt_delivery_sample_read(&ctx, &b), 0);
	nt_delivery_threads_sample(&ctx, th, 2, true);
	nt_delivery_in in = { .t0 = t, .a = &a, .b = &b, .napi = &h, .threads = th, .nthreads = 2 };
	json_t *d = nt_delivery_compute(&in);
	const json_t *e0 = thread_of(d, "enos1/rx-0"), *e1 = thread_of(d, "enos1/rx-1");
	CHECK(e0 && e1);
	CHECK_STR(word(e0, "verdict"), "delivered");
	CHECK_INT(num(e0, "pid"), 3100);
	CHECK_INT(num(e0, "napi_id"), 8209);
	CHECK_INT(num(e0, "last_cpu"), 48);
	CHECK_STR(word(e0, "placed"), "48");
	CHECK_STR(word(e0, "placed_by"), "transaction 4");
	CHECK_STR(word(e0, "run_source"), "stat");
	CHECK(num(e0, "run_ns") > 0);
	CHECK_INT(num(e0, "irq"), 121);
	CHECK_STR(word(e0, "irq_verdict"), "delivered");
	CHECK_INT(num(json_object_get(e0, "irq_counts"), "48"), 40);
	CHECK_STR(word(e1, "verdict"), "not observed");
	CHECK_STR(word(e1, "why"), "it did not run in the window");
	CHECK_INT(num(json_object_get(d, "thread_verdicts"), "delivered"), 1);
	CHECK_INT(num(json_object_get(d, "thread_verdicts"), "not_observed"), 1);
	json_decref(d);

	/* The thread ran on CPU 0 (moved and back, between the samples of
	 * its allowed CPUs): elsewhere. */
	snprintf(stat, sizeof(stat), STAT0, 16, 0);
	tree_write(root, "proc/3100/stat", stat);
	th[0].a = th[0].b;
	nt_delivery_threads_sample(&ctx, th, 1, true);
	d = nt_delivery_compute(&in);
	CHECK_STR(word(thread_of(d, "enos1/rx-0"), "verdict"), "elsewhere");
	CHECK_STR(word(thread_of(d, "enos1/rx-0"), "outside"), "placement");
	json_decref(d);
	nt_delivery_sample_free(&a);
	nt_delivery_sample_free(&b);
	nt_host_napi_free(&h);

	/* A thread the fixture starts keeps schedstat: threaded toggled on
	 * enos1, the new thread of rx-0 is read from it. */
	CHECK_INT(nt_netdev_dev_write(&ctx, "enos1", "threaded", 0), 0);
	CHECK_INT(nt_netdev_dev_write(&ctx, "enos1", "threaded", 1), 0);
	CHECK_INT(nt_host_napi_read(t, NULL, 0, &h), 0);
	nt_delivery_threads_resolve(t, &h, th, 1);
	CHECK(th[0].pid > 0 && th[0].pid != 3100);
	nt_delivery_threads_sample(&ctx, th, 1, false);
	snprintf(cmd, sizeof(cmd), "proc/%d/schedstat", th[0].pid);
	tree_write(root, cmd, "2500000 10 4\n");
	nt_delivery_threads_sample(&ctx, th, 1, true);
	CHECK_STR(th[0].b.run_source, "schedstat");
	CHECK_INT(th[0].b.run_ns - th[0].a.run_ns, 2500000);
	nt_host_napi_free(&h);
out:
	nt_topology_free(t);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK_INT(system(cmd), 0);
}

int main(void)
{
	parsers();
	judge();
	fixture();
	TEST_MAIN_END();
}
