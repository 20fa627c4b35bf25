/* SPDX-License-Identifier: Apache-2.0 */
/* bench-run from the command line against a fixture agent: per-queue
 * counters in its report and --compare (a round where one queue took the
 * packets says so), and bench-run in a network namespace of its own
 * (machine-wide kinds refused or warned of, a stopped transaction's later
 * steps "not run"). The rest of the CLI is test_cli.c's. */
#include "harness.h"
#include "integration/nt_agent.h"
/* The transaction tests' helpers (fixture copies); this test uses a few. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "integration/test_txn_util.h"
#pragma GCC diagnostic pop
#include "integration/cli_util.h"

/* Occurrences of NEEDLE in HAY. */
static int count_of(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay ? strstr(hay, needle) : NULL; p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* bench-run's per-queue counters (issue 41): COMMAND plays a round's
 * traffic by adding to enos0's RX queue counters in the fixture's qstats
 * (1,176,000 packets on queue 3, 1,500 on each other queue: 98% on one);
 * enos2 and enos3 keep no qstats (the member removed: what a kernel before
 * 6.9 or a driver without them answers). The report has each queue's
 * delta, the skew line, and the two NICs without counters said once under
 * one reason; bond0 and lo, without a device, are not looked at. A round
 * spread evenly says nothing of a queue. --compare has the line per round
 * and the missing NICs once. */
static void test_bench_queues(const char *dir, const char *root, const char *prof, const char *rep)
{
	nt_agent a;
	char bump[PATH_MAX], base[128];
	snprintf(bump, sizeof(bump), "%s/bump.py", dir);
	static const char py[] =
		"import json, os, sys\n"
		"p = sys.argv[1] + '/ethtool/enos0.json'\n"
		"d = json.load(open(p))\n"
		"for q in d['netdev']['qstats']:\n"
		"    if q['queue-type'] == 'rx':\n"
		"        n = 1176000 if q['queue-id'] == 3 and sys.argv[2] == 'skew' else 1500\n"
		"        q['rx-packets'] += n; q['rx-bytes'] += n * 1500\n"
		"json.dump(d, open(p + '.tmp', 'w')); os.rename(p + '.tmp', p)\n"
		"print('v=1')\n";
	write_file(bump, py);
	tu_script(root, dir, "for n in enos2 enos3; do python3 -c 'import json, sys\n"
			     "p = sys.argv[1]; d = json.load(open(p)); del d[\"netdev\"][\"qstats\"]; "
			     "json.dump(d, open(p, \"w\"))' $R/ethtool/$n.json; done");
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	snprintf(base, sizeof(base), "%s", nt_url(&a, ""));
	run c = CLI("bench-run", "--agent", base, "--root", root, "--profile", prof, "--report", rep, "--", "python3",
		    bump, root, "skew");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.err, "enos0: RX queue 3 took 98% of 1.2M packets");
	CHECK_HAS(c.err, "enos0            rx      3        1176000       1764000000");
	CHECK_HAS(c.err, "per-queue counters: none for enos2, enos3: no per-queue statistics: a kernel before 6.9 "
			 "(qstats-get), or the driver (mlx5_core) keeps none");
	CHECK_INT(count_of(c.err, "per-queue counters: none"), 1);
	CHECK_HASNT(c.err, "TX queue");
	run_free(&c);
	json_t *r = json_load_file(rep, 0, NULL);
	json_t *cq = json_object_get(json_object_get(r, "counters"), "queues");
	json_t *e0 = NULL, *row;
	size_t i;
	json_array_foreach(cq, i, row) {
		const char *nic = json_string_value(json_object_get(row, "nic"));
		CHECK_MSG(nic && strcmp(nic, "bond0") && strcmp(nic, "lo"), "%s looked at", nic ? nic : "?");
		if (nic && !strcmp(nic, "enos0"))
			e0 = row;
	}
	CHECK_INT(json_array_size(cq), 4);
	CHECK_STR(json_string_value(json_object_get(e0, "source")), "netlink");
	CHECK_INT(json_integer_value(json_object_get(e0, "rx_packets")), 1176000 + 15 * 1500);
	CHECK_INT(json_integer_value(json_object_get(e0, "tx_packets")), 0);
	CHECK_INT(json_array_size(json_object_get(e0, "rx")), 16);
	json_t *q3 = json_array_get(json_object_get(e0, "rx"), 3);
	CHECK_INT(json_integer_value(json_object_get(q3, "queue")), 3);
	CHECK_INT(json_integer_value(json_object_get(q3, "packets")), 1176000);
	CHECK_INT(json_integer_value(json_object_get(q3, "bytes")), 1176000LL * 1500);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(e0, "rx_top"), "queue")), 3);
	CHECK(json_is_null(json_object_get(e0, "tx_top")));
	CHECK_STR(json_string_value(json_array_get(json_object_get(json_object_get(r, "counters"), "queue_skew"), 0)),
		  "enos0: RX queue 3 took 98% of 1.2M packets");
	json_t *miss = json_object_get(json_object_get(r, "counters"), "queue_stats_missing");
	CHECK_INT(json_array_size(miss), 1);
	CHECK_INT(json_array_size(json_object_get(json_array_get(miss, 0), "nics")), 2);

	/* Bound near enos0 to CPU 0 (--cpus-list: a CPU this machine has):
	 * CPU 0 is the application class of the round's CPU time; unbound
	 * (above) there is none. */
	CHECK(json_object_get(json_object_get(json_object_get(json_object_get(r ? r : json_null(), "counters"),
									"cpu_time"), "classes"), "app") == NULL);
	json_decref(r);
	c = CLI("bench-run", "--agent", base, "--root", root, "--profile", prof, "--report", rep, "--near", "enos0",
		"--cpus-list", "0", "--", "python3", bump, root, "even");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.err, "on the 1 application CPUs (--near) that served none 0.00 s");
	run_free(&c);
	json_t *rn = json_load_file(rep, 0, NULL);
	json_t *app = json_object_get(
		json_object_get(json_object_get(json_object_get(rn, "counters"), "cpu_time"), "classes"), "app");
	CHECK_INT(json_array_size(json_object_get(app, "list")), 1);
	CHECK_INT(json_integer_value(json_array_get(json_object_get(app, "list"), 0)), 0);
	CHECK_INT(json_array_size(json_object_get(app, "with_nic_irq")), 0);
	json_decref(rn);

	/* Spread evenly: each queue's delta, no skew line. */
	c = CLI("bench-run", "--agent", base, "--root", root, "--profile", prof, "--report", rep, "--", "python3",
		bump, root, "even");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.err, "enos0            rx      3           1500          2250000");
	CHECK_HASNT(c.err, "took");
	run_free(&c);

	/* --compare: the line under its round, the NICs without once. */
	c = CLI("bench-run", "--compare", "2", "--agent", base, "--root", root, "--profile", prof, "--report", rep,
		"--metric-regex", "v=([0-9]+)", "--higher-is-better", "--", "python3", bump, root, "skew");
	CHECK_HAS(c.err, "round 1: enos0: RX queue 3 took 98% of 1.2M packets");
	CHECK_HAS(c.err, "round 4: enos0: RX queue 3 took 98% of 1.2M packets");
	CHECK_INT(count_of(c.err, "per-queue counters: none for enos2, enos3"), 1);
	run_free(&c);
	r = json_load_file(rep, 0, NULL);
	json_t *r1 = json_array_get(json_object_get(r, "rounds"), 0);
	CHECK_STR(json_string_value(json_array_get(json_object_get(json_object_get(r1, "counters"), "queue_skew"), 0)),
		  "enos0: RX queue 3 took 98% of 1.2M packets");
	CHECK_INT(json_array_size(json_object_get(json_object_get(r1, "counters"), "queues")), 4);
	CHECK_INT(json_array_size(json_object_get(r, "queue_stats_missing")), 1);
	json_decref(r);
	nt_agent_stop(&a);
}

/* bench-run on a fixture: in a network namespace of its own (the tree's
 * proc/self/ns/net and proc/1/ns/net are two files) the agent refuses a
 * profile with IRQ affinity (422, naming the JSON path), and with
 * --allow-machine-wide plans it, and bench-run warns of the steps whose
 * kinds declare they reach the whole machine (irq_affinity), not of rings,
 * which are the namespace's NIC's; a transaction that stops at its first
 * step reports the steps after it as "not run". */
static void test_bench(const char *dir, const char *root)
{
	nt_agent a;
	char prof[PATH_MAX], irqprof[PATH_MAX], rep[PATH_MAX], base[128];
	snprintf(prof, sizeof(prof), "%s/rings.json", dir);
	snprintf(irqprof, sizeof(irqprof), "%s/irqs.json", dir);
	snprintf(rep, sizeof(rep), "%s/report.json", dir);
	write_file(prof, "{\"name\":\"r\",\"rings\":[{\"interface\":\"enos0\",\"rx\":2048},"
			 "{\"interface\":\"enos1\",\"rx\":2048}]}");
	write_file(irqprof, "{\"name\":\"i\",\"irq_affinity\":[{\"interface\":\"enos0\",\"cpus\":\"1-4\"}],"
			    "\"rings\":[{\"interface\":\"enos0\",\"rx\":2048}]}");
	tu_script(root, dir, "mkdir -p $R/proc/self/ns $R/proc/1/ns && echo self > $R/proc/self/ns/net "
			     "&& echo init > $R/proc/1/ns/net");
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	snprintf(base, sizeof(base), "%s", nt_url(&a, ""));
	run c = CLI("bench-run", "--agent", base, "--root", root, "--profile", prof, "--report", rep, "--", "true");
	CHECK_INT(c.code, 0);
	CHECK_HASNT(c.err, "whole machine");
	run_free(&c);
	c = CLI("bench-run", "--agent", base, "--root", root, "--profile", irqprof, "--report", rep, "--", "true");
	CHECK_INT(c.code, 125);
	CHECK_HAS(c.err, "$.irq_affinity[0]");
	CHECK_HAS(c.err, "allow_machine_wide");
	run_free(&c);
	nt_agent_stop(&a);

	static const char *const allow[] = { "--allow-machine-wide", NULL };
	if (nt_agent_start(&a, root, NULL, allow) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	snprintf(base, sizeof(base), "%s", nt_url(&a, ""));
	c = CLI("bench-run", "--agent", base, "--root", root, "--profile", irqprof, "--report", rep, "--", "true");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.err, "warning: running in a network namespace of its own, but irq_affinity change the whole machine");
	CHECK_HASNT(c.err, "rings change");
	run_free(&c);
	json_t *r = json_load_file(rep, 0, NULL);
	CHECK_HAS(json_string_value(json_array_get(json_object_get(r, "warnings"), 0)), "irq_affinity change the whole machine");
	json_decref(r);
	nt_agent_stop(&a);

	/* One inode, the initial namespace: no warning. */
	tu_script(root, dir, "ln -f $R/proc/1/ns/net $R/proc/self/ns/net");
	setenv("NETTUNE_TEST_FAULT", "fail:0", 1);
	int st = nt_agent_start(&a, root, NULL, NULL);
	unsetenv("NETTUNE_TEST_FAULT");
	if (st < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	snprintf(base, sizeof(base), "%s", nt_url(&a, ""));
	c = CLI("bench-run", "--agent", base, "--root", root, "--profile", prof, "--report", rep, "--", "true");
	CHECK_INT(c.code, 125);
	CHECK_HASNT(c.err, "network namespace");
	CHECK_HAS(c.err, "ended rolled_back");
	CHECK_HAS(c.err, "1 step(s) not run");
	run_free(&c);
	r = json_load_file(rep, 0, NULL);
	json_t *steps = json_object_get(json_object_get(r, "transaction"), "steps");
	CHECK_STR(json_string_value(json_object_get(json_array_get(steps, 0), "result")), "failed");
	CHECK_STR(json_string_value(json_object_get(json_array_get(steps, 1), "result")), "not run");
	json_decref(r);
	nt_agent_stop(&a);
	test_bench_queues(dir, root, prof, rep);
}

int main(void)
{
	char dir[PATH_MAX], root[PATH_MAX];
	if (access(EPYC, F_OK) != 0)
		SKIP("fixture %s is not present", EPYC);
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) == 0) {
		test_bench(dir, root);
		tu_sh("rm -rf '%s'", dir);
	} else {
		CHECK_MSG(0, "cannot copy %s", EPYC);
	}
	TEST_MAIN_END();
}
