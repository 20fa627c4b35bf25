/* SPDX-License-Identifier: Apache-2.0 */
/* nettune bench-run: a benchmark run in one command, for CI jobs that tune
 * a host, measure, and must leave the host as they found it.
 *
 * The profile is applied through the agent as one transaction with a
 * confirm window (--confirm-timeout, default an hour) that is never
 * confirmed while COMMAND runs: if bench-run is killed outright (the CI
 * runner's SIGKILL), the agent reverts the host by itself when the window
 * closes, and COMMAND, which dies with bench-run (PR_SET_PDEATHSIG), is not
 * left running. When COMMAND ends, however it ends, the transaction is
 * rolled back while still waiting: the agent reverts it at once, so one
 * request stands between a clean host and a tuned one. SIGINT, SIGTERM and
 * SIGHUP are passed to COMMAND's process group and then the rollback runs
 * as usual.
 *
 * Counters are read from the agent (/v1/topology, /v1/nics, /v1/irqs, and
 * /v1/nics/{name} of each NIC with a device and the --near one, for the
 * per-queue counters of the netdev family's qstats-get) and /proc/softirqs
 * (through the --root prefix) right before COMMAND starts and right after
 * it ends; host/counters.c turns them into deltas. */
#include "cli/bench.h"
#include "cli/cli.h"
#include "cli/client.h"
#include "cli/escape.h"
#include "cli/exit.h"
#include "host/counters.h"
#include "host/interrupts.h"
#include "kernel/ctx.h"
#include "kernel/kernel.h"
#include "settings/setting.h"

#include "base/cpuset.h" /* NT_MAX_CPUS */
#include <errno.h>
#include <sched.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BENCH_FAILED NT_BENCH_FAILED
#define DEFAULT_CONFIRM_S NT_BENCH_DEFAULT_CONFIRM_S

/* Through the CLI's client (cli/bench.h). */
int nt_bench_call(const char *agent, const char *method, const char *path, const json_t *body, long *status,
		json_t **doc, char *err, size_t errsize)
{
	nt_cli_reply r;
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	*status = 0;
	*doc = NULL;
	if (body && !text) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	int rc = nt_cli_request(agent, method, path, text, NULL, &r);
	free(text);
	if (rc < 0) {
		if (rc == -ELIBACC || rc == -EINVAL || rc == -EFBIG)
			snprintf(err, errsize, "%s", r.error);
		else
			snprintf(err, errsize, "cannot reach the agent at %s: %s", agent, r.error);
		nt_cli_reply_free(&r);
		return -1;
	}
	*status = r.status;
	*doc = json_incref(r.doc);
	nt_cli_reply_free(&r);
	if (*status >= 200 && *status < 300)
		return 0;
	const char *title = json_string_value(json_object_get(*doc, "title"));
	const char *detail = json_string_value(json_object_get(*doc, "detail"));
	int n = snprintf(err, errsize, "HTTP %ld: %s%s%s", *status, title ? title : "error", detail ? ": " : "",
			 detail ? detail : "");
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(*doc, "errors"), i, e) {
		if (n < 0 || (size_t)n >= errsize)
			break;
		n += snprintf(err + n, errsize - (size_t)n, "; %s: %s",
			      json_string_value(json_object_get(e, "path")) ?: "?",
			      json_string_value(json_object_get(e, "message")) ?: "");
	}
	/* Shown on a terminal: the agent's words as text (cli/escape.h). */
	char *safe = nt_out_escape(err, strlen(err));
	if (safe)
		snprintf(err, errsize, "%s", safe);
	free(safe);
	return 0;
}

/* GET PATH from the agent into *DOC. Returns 0 or -1 with ERR set. */
static int get_doc(const char *agent, const char *path, json_t **doc, char *err, size_t errsize)
{
	long status;
	if (nt_bench_call(agent, "GET", path, NULL, &status, doc, err, errsize) < 0)
		return -1;
	if (status != 200 || !*doc) {
		if (status == 200)
			snprintf(err, errsize, "GET %s: the answer is not JSON", path);
		json_decref(*doc);
		*doc = NULL;
		return -1;
	}
	return 0;
}

/* Whether bench-run reads NIC's per-queue counters: a NIC with a device
 * of its own (virtual false), whose queues are the hardware's and whose
 * IRQs a profile places, and the --near interface, whatever it is. Not
 * every veth of a container host: each costs a request to the agent. */
static bool queues_looked_at(const json_t *nic, const char *near)
{
	const char *name = json_string_value(json_object_get(nic, "name"));
	return name && (json_is_false(json_object_get(nic, "virtual")) || (near && !strcmp(near, name)));
}

/* GET /v1/nics/{name} of each NIC bench-run looks at, into an array. A
 * NIC gone meanwhile (404) or a name the path cannot carry is left out;
 * any other failure fails the snapshot, as the other reads do. */
static json_t *nic_queue_docs(const char *agent, const json_t *nics, const char *near, char *err, size_t errsize)
{
	json_t *out = json_array(), *nic;
	size_t i;
	if (!out)
		return NULL;
	json_array_foreach(json_object_get(nics, "nics"), i, nic) {
		const char *name = json_string_value(json_object_get(nic, "name"));
		char path[128];
		long status;
		json_t *doc = NULL;
		if (!queues_looked_at(nic, near))
			continue;
		/* Interface names are short and the agent checks them; one
		 * with a character a path would have to escape is skipped. */
		if (strlen(name) > 32 || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
					      strlen(name))
			continue;
		snprintf(path, sizeof(path), "/v1/nics/%s", name);
		if (nt_bench_call(agent, "GET", path, NULL, &status, &doc, err, errsize) < 0) {
			json_decref(out);
			return NULL;
		}
		if (status == 200 && json_is_object(doc))
			json_array_append(out, doc);
		else if (status != 404) {
			if (status == 200)
				snprintf(err, errsize, "GET %s: the answer is not JSON", path);
			json_decref(doc);
			json_decref(out);
			return NULL;
		}
		json_decref(doc);
	}
	return out;
}

/* The CPUs this process may run on into APP (NT_MAX_CPUS entries): with
 * --near it was bound to the NIC's application CPUs (nt_cli_bind_near)
 * before the snapshot, and COMMAND inherits them. Returns how many. */
static int own_cpus(int *app)
{
	cpu_set_t *set = CPU_ALLOC(NT_MAX_CPUS);
	size_t sz = CPU_ALLOC_SIZE(NT_MAX_CPUS);
	int n = 0;
	if (set && sched_getaffinity(0, sz, set) == 0)
		for (int c = 0; c < NT_MAX_CPUS; c++)
			if (CPU_ISSET_S((size_t)c, sz, set))
				app[n++] = c;
	if (set)
		CPU_FREE(set);
	return n;
}

json_t *nt_bench_snapshot(const char *agent, const nt_ctx *ctx, const char *near, char *err, size_t errsize)
{
	json_t *topo = NULL, *nics = NULL, *irqs = NULL, *snap = NULL, *queues = NULL;
	char *text = NULL, *stat = NULL;
	int *cpus = NULL, ncols = 0, nct = 0, *app = NULL, napp = 0;
	uint64_t *rx = NULL, *tx = NULL;
	nt_cpu_time *ct = NULL;

	if (get_doc(agent, "/v1/topology", &topo, err, errsize) < 0 ||
	    get_doc(agent, "/v1/nics", &nics, err, errsize) < 0 ||
	    get_doc(agent, "/v1/irqs", &irqs, err, errsize) < 0 ||
	    !(queues = nic_queue_docs(agent, nics, near, err, errsize)))
		goto out;
	/* Without /proc/softirqs (a damaged tree) the NET_RX part stays empty
	 * rather than losing the rest of the report. */
	if (nt_read_all(ctx, &text, "/proc/softirqs") >= 0 && nt_softirqs_parse(text, &cpus, &rx, &tx, &ncols) < 0)
		ncols = 0;
	/* The same for the CPU time: without it the round's cost is null. */
	if (nt_read_all(ctx, &stat, "/proc/stat") >= 0 && nt_cpustat_parse(stat, &ct, &nct) < 0)
		nct = 0;
	/* The application's CPUs are known only when it was bound to them. */
	if (near && (app = calloc(NT_MAX_CPUS, sizeof(int))))
		napp = own_cpus(app);
	nt_counters_input in = { .topology = topo, .nics = nics, .irqs = irqs, .soft_cpus = cpus, .net_rx = rx,
				 .net_tx = tx, .nsoft = ncols, .cpu_time = ct, .ncpu_time = nct,
				 .hz = sysconf(_SC_CLK_TCK), .nic_queues = queues, .app_cpus = app, .napp = napp };
	snap = nt_counters_snapshot(&in);
	if (!snap)
		snprintf(err, errsize, "out of memory");
out:
	free(app);
	free(text);
	free(stat);
	free(ct);
	free(cpus);
	free(rx);
	free(tx);
	json_decref(topo);
	json_decref(nics);
	json_decref(irqs);
	json_decref(queues);
	return snap;
}

/* How many times a rollback answered 409 or 503 is asked again, 250 ms
 * apart: a transaction of another client or a drift repair is over in
 * far less. */
#define UNDO_ATTEMPTS 40

/* Put the host back: roll transaction ID back. While it still waits for
 * confirmation the agent reverts it in place at once (200, "reverted");
 * what cannot be reverted so is left to the confirm window. Fills REPORT's "rollback" and
 * "reverted_by_agent". Returns 0 when the host holds none of ID's changes
 * any more, -1 otherwise. */
int nt_bench_undo(const char *agent, long long id, json_t *report)
{
	char path[128], err[1024];
	long status;
	json_t *doc = NULL;
	int rc = -1;

	if (id == 0)
		return 0; /* nothing was changed */
	snprintf(path, sizeof(path), "/v1/transactions/%lld", id);
	if (get_doc(agent, path, &doc, err, sizeof(err)) < 0) {
		fprintf(stderr, "nettune: bench-run: cannot read transaction %lld: %s\n", id, err);
		return -1;
	}
	const char *st = json_string_value(json_object_get(doc, "status"));
	if (st && !strcmp(st, "reverted")) {
		/* The window closed while COMMAND ran. */
		fprintf(stderr, "nettune: bench-run: the agent reverted transaction %lld before COMMAND ended "
				"(the confirm timeout was shorter than the run)\n", id);
		json_object_set_new(report, "reverted_by_agent", json_true());
		rc = 0;
		goto out;
	}
	if (st && !strcmp(st, "pending_confirm")) {
		/* Reverted in place by the agent. A 409 while another
		 * transaction holds the agent (a repair, another client) passes:
		 * asked again for a while. bench-run never confirms its
		 * transaction, not even to roll it back as a new one: a confirmed
		 * transaction would lose the confirm window, the one thing that
		 * puts the host back if bench-run cannot. */
		for (int attempt = 0;; attempt++) {
			json_decref(doc);
			doc = NULL;
			snprintf(path, sizeof(path), "/v1/transactions/%lld/rollback", id);
			json_t *none = json_object();
			int rr = nt_bench_call(agent, "POST", path, none, &status, &doc, err, sizeof(err));
			json_decref(none);
			if (rr == 0 && status == 200 && json_integer_value(json_object_get(doc, "id")) == id) {
				const char *now = json_string_value(json_object_get(doc, "status")) ?: "";
				json_object_set_new(report, "rollback",
						    json_pack("{s:I,s:s,s:O}", "id", (json_int_t)id, "status", now, "error",
							      json_object_get(doc, "error") ?: json_null()));
				if (strcmp(now, "reverted")) {
					fprintf(stderr, "nettune: bench-run: reverting transaction %lld ended %s: %s\n", id,
						now, json_string_value(json_object_get(doc, "error")) ?: "");
					goto out;
				}
				rc = 0;
				goto out;
			}
			/* Reverted meanwhile (its window closed)? */
			json_decref(doc);
			doc = NULL;
			snprintf(path, sizeof(path), "/v1/transactions/%lld", id);
			char err2[256];
			if (get_doc(agent, path, &doc, err2, sizeof(err2)) == 0 &&
			    !strcmp(json_string_value(json_object_get(doc, "status")) ?: "", "reverted")) {
				json_object_set_new(report, "reverted_by_agent", json_true());
				rc = 0;
				goto out;
			}
			if (rr < 0 || (status != 409 && status != 503) || attempt >= UNDO_ATTEMPTS) {
				fprintf(stderr, "nettune: bench-run: cannot revert transaction %lld: %s; it is never "
						"confirmed, so the agent reverts it when its confirm window closes (%s)\n",
					id, err, json_string_value(json_object_get(doc, "confirm_deadline")) ?: "?");
				goto out;
			}
			struct timespec pause = { 0, 250 * 1000 * 1000 };
			nanosleep(&pause, NULL);
		}
	} else if (!st || strcmp(st, "applied")) {
		fprintf(stderr, "nettune: bench-run: transaction %lld is %s, not rolled back\n", id, st ? st : "?");
		goto out;
	}
	json_decref(doc);
	doc = NULL;
	snprintf(path, sizeof(path), "/v1/transactions/%lld/rollback", id);
	json_t *body = json_object();
	int cr = nt_bench_call(agent, "POST", path, body, &status, &doc, err, sizeof(err));
	json_decref(body);
	if (cr < 0 || (status != 200 && status != 201)) {
		fprintf(stderr, "nettune: bench-run: cannot roll back transaction %lld: %s\n", id, err);
		goto out;
	}
	json_object_set_new(report, "rollback",
			    json_pack("{s:O,s:O,s:O}", "id", json_object_get(doc, "id"), "status",
				      json_object_get(doc, "status"), "error", json_object_get(doc, "error") ?: json_null()));
	if (strcmp(json_string_value(json_object_get(doc, "status")) ?: "", "applied")) {
		fprintf(stderr, "nettune: bench-run: the rollback of transaction %lld ended %s: %s\n", id,
			json_string_value(json_object_get(doc, "status")),
			json_string_value(json_object_get(doc, "error")) ?: "");
		goto out;
	}
	rc = 0;
out:
	json_decref(doc);
	return rc;
}

static long long geti(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* A counter of a per-queue row for the table: "-" where the kernel
 * keeps no such counter. */
static void queue_cell(char *buf, size_t size, const json_t *v)
{
	if (json_is_integer(v))
		snprintf(buf, size, "%lld", (long long)json_integer_value(v));
	else
		snprintf(buf, size, "-");
}

void nt_bench_print_queues(const json_t *c, const char *round)
{
	size_t i, k;
	json_t *row, *q;
	bool head = false;
	/* The queues that moved: a queue that carried nothing is no news. */
	json_array_foreach(json_object_get(c, "queues"), i, row) {
		for (int d = 0; d < 2 && !round; d++) {
			const char *dir = d ? "tx" : "rx";
			json_array_foreach(json_object_get(row, dir), k, q) {
				if (!json_integer_value(json_object_get(q, "packets")) &&
				    !json_integer_value(json_object_get(q, "bytes")))
					continue;
				if (!head) {
					fprintf(stderr, "\n%-15s %3s %6s %14s %16s\n", "NIC", "dir", "queue", "packets",
						"bytes");
					head = true;
				}
				char p[32], b[32];
				queue_cell(p, sizeof(p), json_object_get(q, "packets"));
				queue_cell(b, sizeof(b), json_object_get(q, "bytes"));
				fprintf(stderr, "%-15s %3s %6lld %14s %16s\n", json_string_value(json_object_get(row, "nic")),
					dir, (long long)json_integer_value(json_object_get(q, "queue")), p, b);
			}
		}
	}
	json_array_foreach(json_object_get(c, "queue_skew"), i, q)
		fprintf(stderr, "%s%s%s\n", round ? round : i ? "" : "\n", round ? ": " : "", json_string_value(q));
	if (round)
		return;
	/* Said once per reason, never guessed at. */
	json_array_foreach(json_object_get(c, "queue_stats_missing"), i, row) {
		fprintf(stderr, "per-queue counters: none for ");
		json_array_foreach(json_object_get(row, "nics"), k, q)
			fprintf(stderr, "%s%s", k ? ", " : "", json_string_value(q));
		fprintf(stderr, ": %s\n", json_string_value(json_object_get(row, "reason")));
	}
}

/* The short table, on stderr: stdout belongs to COMMAND. */
static void print_table(const json_t *report_raw)
{
	/* The report file keeps the agent's strings; the terminal gets them
	 * escaped (cli/escape.h). */
	json_t *copy = json_deep_copy(report_raw);
	if (!copy || nt_out_escape_doc(copy) < 0) {
		json_decref(copy);
		return;
	}
	const json_t *report = copy;
	const json_t *c = json_object_get(report, "counters");
	const json_t *rb = json_object_get(report, "rollback");
	size_t i;
	json_t *row;
	fprintf(stderr, "\nbench-run: profile %s, transaction %lld, ", json_string_value(json_object_get(report, "profile")) ?: "-",
		geti(json_object_get(report, "transaction"), "id"));
	if (geti(json_object_get(report, "transaction"), "id") == 0)
		fprintf(stderr, "nothing to change");
	else if (json_is_object(rb)) {
		/* Reverted in place, the rollback is the transaction itself:
		 * its id and status again would say nothing new. */
		const char *st = json_string_value(json_object_get(rb, "status"));
		if (geti(rb, "id") != geti(json_object_get(report, "transaction"), "id"))
			fprintf(stderr, "rolled back by %lld (%s)", geti(rb, "id"), st ? st : "?");
		else if (st && strcmp(st, "reverted"))
			fprintf(stderr, "reverted at once, ended %s", st);
		else
			fprintf(stderr, "reverted at once");
	}
	else if (json_is_true(json_object_get(report, "reverted_by_agent")))
		fprintf(stderr, "reverted by the agent");
	else
		fprintf(stderr, "NOT rolled back");
	if (json_is_integer(json_object_get(report, "exit_status")))
		fprintf(stderr, "; COMMAND exit %lld after %.1f s\n", geti(report, "exit_status"),
			json_real_value(json_object_get(report, "duration_s")));
	else
		fprintf(stderr, "; COMMAND did not run\n");
	if (!c) {
		json_decref(copy);
		return;
	}
	fprintf(stderr, "\n%-15s %12s %12s %14s %14s %10s %10s %10s\n", "NIC", "rx_packets", "tx_packets", "rx_bytes",
		"tx_bytes", "rx_dropped", "rx_missed", "rx_errors");
	json_array_foreach(json_object_get(c, "nics"), i, row) {
		if (!geti(row, "rx_packets") && !geti(row, "tx_packets") && !geti(row, "rx_dropped"))
			continue;
		fprintf(stderr, "%-15s %12lld %12lld %14lld %14lld %10lld %10lld %10lld\n",
			json_string_value(json_object_get(row, "name")), geti(row, "rx_packets"), geti(row, "tx_packets"),
			geti(row, "rx_bytes"), geti(row, "tx_bytes"), geti(row, "rx_dropped"), geti(row, "rx_missed"),
			geti(row, "rx_errors"));
	}
	nt_bench_print_queues(c, NULL);
	const json_t *in = json_object_get(c, "interrupts");
	const json_t *sr = json_object_get(c, "softirq_net_rx"), *st = json_object_get(c, "softirq_net_tx");
	const json_t *ct = json_object_get(c, "cpu_time");
	fprintf(stderr, "\n%5s %5s %12s %12s %12s %12s %6s %6s\n", "CPU", "NODE", "IRQs", "NIC IRQs", "NET_RX", "NET_TX",
		"busy", "sirq");
	long long max_cpu = -1;
	const json_t *lists[] = { json_object_get(in, "cpus"), json_object_get(sr, "cpus"), json_object_get(st, "cpus"),
				  json_object_get(ct, "cpus") };
	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
		json_array_foreach(lists[l], i, row)
			if (geti(row, "cpu") > max_cpu)
				max_cpu = geti(row, "cpu");
	for (long long cpu = 0; cpu <= max_cpu; cpu++) {
		json_t *found[4] = { NULL };
		for (size_t l = 0; l < 4; l++)
			json_array_foreach(lists[l], i, row)
				if (geti(row, "cpu") == cpu)
					found[l] = row;
		json_t *ir = found[0], *sx = found[1], *tx = found[2], *cx = found[3];
		double busy = cx ? json_number_value(json_object_get(cx, "busy_share")) : 0;
		/* A CPU that did nothing worth a line: no interrupt, no
		 * softirq, under 1% busy. */
		if ((!ir || (!geti(ir, "all") && !geti(ir, "nic"))) && (!sx || !geti(sx, "count")) &&
		    (!tx || !geti(tx, "count")) && busy < 0.01)
			continue;
		json_t *node = ir ? json_object_get(ir, "node") : cx ? json_object_get(cx, "node") : NULL;
		char nb[16] = "-", bb[16] = "-", sb[16] = "-";
		if (json_is_integer(node))
			snprintf(nb, sizeof(nb), "%lld", (long long)json_integer_value(node));
		double all = cx ? json_number_value(json_object_get(cx, "busy_s")) + json_number_value(json_object_get(cx, "idle_s")) +
					  json_number_value(json_object_get(cx, "steal_s"))
				: 0;
		if (cx && all > 0) {
			snprintf(bb, sizeof(bb), "%.0f%%", 100 * busy);
			snprintf(sb, sizeof(sb), "%.0f%%",
				 100 * (json_number_value(json_object_get(cx, "softirq_s")) +
					json_number_value(json_object_get(cx, "irq_s"))) / all);
		}
		fprintf(stderr, "%5lld %5s %12lld %12lld %12lld %12lld %6s %6s\n", cpu, nb, ir ? geti(ir, "all") : 0,
			ir ? geti(ir, "nic") : 0, sx ? geti(sx, "count") : 0, tx ? geti(tx, "count") : 0, bb, sb);
	}
	json_array_foreach(json_object_get(in, "nodes"), i, row)
		fprintf(stderr, "%5s %5lld %12lld %12lld\n", "all", geti(row, "node"), geti(row, "all"), geti(row, "nic"));
	const json_t *tot = json_object_get(ct, "total");
	if (json_is_object(tot)) {
		const json_t *nic = json_object_get(json_object_get(ct, "classes"), "nic_irq");
		fprintf(stderr,
			"\nCPU time: %.2f s busy on %lld CPUs over %.1f s (user %.2f, system %.2f, irq %.2f, softirq %.2f); "
			"on the %lld CPUs that served NIC interrupts %.2f s\n",
			json_number_value(json_object_get(tot, "busy_s")), geti(tot, "cpus"),
			json_number_value(json_object_get(ct, "seconds")), json_number_value(json_object_get(tot, "user_s")),
			json_number_value(json_object_get(tot, "system_s")), json_number_value(json_object_get(tot, "irq_s")),
			json_number_value(json_object_get(tot, "softirq_s")), geti(nic, "cpus"),
			json_number_value(json_object_get(nic, "busy_s")));
		const json_t *app = json_object_get(json_object_get(ct, "classes"), "app");
		if (json_is_object(app)) {
			fprintf(stderr, "on the %lld application CPUs (--near) that served none %.2f s",
				geti(app, "cpus"), json_number_value(json_object_get(app, "busy_s")));
			size_t n = json_array_size(json_object_get(app, "with_nic_irq"));
			if (n)
				fprintf(stderr, "; %zu application CPU%s also served NIC interrupts (counted above)", n,
					n == 1 ? "" : "s");
			fprintf(stderr, "\n");
		}
	}
	json_t *share = json_object_get(in, "off_node_share");
	if (json_is_real(share))
		fprintf(stderr, "\nNIC interrupts served off their NIC's node: %lld of %lld (%.1f%%)\n",
			geti(in, "nic_off_node"), geti(in, "nic"), 100.0 * json_real_value(share));
	else
		fprintf(stderr, "\nNIC interrupts: %lld (no NIC with a known node interrupted)\n", geti(in, "nic"));
	json_decref(copy);
}

/* The kinds among STEPS whose targets reach the whole machine, by their
 * own declaration, into BUF ("irq_affinity, irqbalance_ban"), each once;
 * whether any. */
static bool machine_wide(const json_t *steps, char *buf, size_t size)
{
	const char *seen[32];
	int nseen = 0;
	size_t i, n = 0;
	json_t *s;
	buf[0] = '\0';
	json_array_foreach(steps, i, s) {
		const char *kind = json_string_value(json_object_get(s, "kind"));
		const char *target = json_string_value(json_object_get(s, "target"));
		if (!kind || nt_setting_scope(nt_setting_find(kind), target, NULL) != NT_SCOPE_MACHINE)
			continue;
		bool said = false;
		for (int j = 0; j < nseen && !said; j++)
			said = strcmp(seen[j], kind) == 0;
		if (said || nseen == (int)(sizeof(seen) / sizeof(seen[0])))
			continue;
		seen[nseen++] = kind;
		if (n < size)
			n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "", kind);
	}
	return nseen > 0;
}

/* A finished transaction's steps as the report keeps them: a step the
 * agent records "not_applied" (or, from an agent before it did, still
 * "pending") never ran (the transaction stopped before it), and says so.
 * Returns how many. */
static int mark_not_run(json_t *steps)
{
	size_t i;
	json_t *s;
	int n = 0;
	json_array_foreach(steps, i, s) {
		const char *res = json_string_value(json_object_get(s, "result")) ?: "";
		if (!strcmp(res, "pending") || !strcmp(res, "not_applied")) {
			json_object_set_new(s, "result", json_string("not run"));
			n++;
		}
	}
	return n;
}

int nt_bench_write_report(const json_t *report, const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	if (json_dump_file(report, tmp, JSON_INDENT(2) | JSON_SORT_KEYS) < 0 || rename(tmp, path) < 0) {
		fprintf(stderr, "nettune: bench-run: cannot write the report %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

void nt_bench_netns_warning(const nt_ctx *ctx, const json_t *steps, json_t *report)
{
	char wide[256];
	if (!nt_kernel_netns_other(ctx) || !machine_wide(steps, wide, sizeof(wide)))
		return;
	fprintf(stderr, "nettune: bench-run: warning: running in a network namespace of its own, but %s change "
			"the whole machine (every namespace), not only this one\n", wide);
	char w[256];
	snprintf(w, sizeof(w), "in a network namespace of its own: %s change the whole machine", wide);
	json_t *ws = json_object_get(report, "warnings");
	if (!json_is_array(ws)) {
		ws = json_array();
		json_object_set_new(report, "warnings", ws);
	}
	json_array_append_new(ws, json_string(w));
}

int nt_bench_apply(const char *agent, const json_t *profile, long ct, long long *id, json_t **txn)
{
	char err[2048];
	long status;
	json_t *doc = NULL;
	int rc = -1;

	*id = 0;
	if (txn)
		*txn = NULL;
	/* Planned, then applied by the plan's id: the agent reads the host
	 * once, and applies what it planned. */
	int cr = nt_bench_call(agent, "POST", "/v1/plan", profile, &status, &doc, err, sizeof(err));
	const char *plan_id = cr == 0 && status == 200 ? json_string_value(json_object_get(doc, "id")) : NULL;
	if (!plan_id) {
		fprintf(stderr, "nettune: bench-run: the profile could not be planned: %s\n",
			cr == 0 && status == 200 ? "the plan has no id (an older agent?)" : err);
		goto out;
	}
	json_t *req = json_pack("{s:s,s:i}", "plan_id", plan_id, "confirm_timeout_s", (int)ct);
	json_decref(doc);
	doc = NULL;
	cr = nt_bench_call(agent, "POST", "/v1/transactions", req, &status, &doc, err, sizeof(err));
	json_decref(req);
	if (cr < 0 || (status != 201 && status != 200)) {
		fprintf(stderr, "nettune: bench-run: the profile was not applied: %s\n", err);
		goto out;
	}
	long long tid = json_integer_value(json_object_get(doc, "id"));
	const char *st = json_string_value(json_object_get(doc, "status")) ?: "";
	json_t *t = json_pack("{s:I,s:s,s:i,s:O,s:o}", "id", (json_int_t)tid, "status", st, "confirm_timeout_s", (int)ct,
			      "confirm_deadline", json_object_get(doc, "confirm_deadline") ?: json_null(), "steps",
			      json_deep_copy(json_object_get(doc, "steps")) ?: json_array());
	int not_run = strcmp(st, "pending_confirm") && strcmp(st, "applied") ?
			      mark_not_run(json_object_get(t, "steps")) : 0;
	if (txn)
		*txn = t;
	else
		json_decref(t);
	if (!strcmp(st, "applied") && json_array_size(json_object_get(doc, "steps")) == 0) {
		/* The host already had every value: nothing to put back. */
		rc = 0;
	} else if (strcmp(st, "pending_confirm")) {
		fprintf(stderr, "nettune: bench-run: transaction %lld ended %s: %s\n", tid, st,
			json_string_value(json_object_get(doc, "error")) ?: "");
		if (not_run)
			fprintf(stderr, "  %d step(s) not run (the transaction stopped before them)\n", not_run);
		/* nothing of it stands */
	} else {
		*id = tid;
		rc = 0;
	}
out:
	json_decref(doc);
	return rc;
}

/* The report of a run whose apply failed says what is true, not null:
 * COMMAND never ran (exit_status null, command_ran false), and whether
 * the host is as before and by what: nothing was applied (the plan or the
 * apply was refused: no transaction), the transaction's own rollback put
 * it back (rolled_back, reverted, recovered), or it could not
 * (rollback_failed: host_restored false). TXN is the transaction as the
 * report holds it, or NULL. */
static void apply_failed_report(json_t *report, const json_t *txn)
{
	const char *st = json_string_value(json_object_get(txn, "status"));
	json_t *restored = json_null();
	char by[256] = "";
	if (!txn) {
		restored = json_true();
		snprintf(by, sizeof(by), "nothing was applied: the agent refused the profile or its plan");
	} else if (st && (!strcmp(st, "rolled_back") || !strcmp(st, "reverted") || !strcmp(st, "recovered"))) {
		restored = json_true();
		snprintf(by, sizeof(by), "the rollback of transaction %lld (%s: every step it had applied put back "
			 "and read back)", (long long)json_integer_value(json_object_get(txn, "id")), st);
	} else if (st && !strcmp(st, "rollback_failed")) {
		restored = json_false();
		snprintf(by, sizeof(by), "transaction %lld ended rollback_failed: some step could not be put back "
			 "(nettune show %lld says which)", (long long)json_integer_value(json_object_get(txn, "id")),
			 (long long)json_integer_value(json_object_get(txn, "id")));
	} else {
		snprintf(by, sizeof(by), "unknown: transaction %lld ended %s",
			 (long long)json_integer_value(json_object_get(txn, "id")), st ? st : "without a status");
	}
	json_object_set_new(report, "command_ran", json_false());
	json_object_set_new(report, "exit_status", json_null());
	json_object_set_new(report, "host_restored", restored);
	json_object_set_new(report, "host_restored_by", json_string(by));
	fprintf(stderr, "nettune: bench-run: COMMAND did not run; host restored: %s (%s)\n",
		json_is_true(restored) ? "yes" : json_is_false(restored) ? "no" : "unknown", by);
}

int nt_cmd_bench_run(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	const char *agent = o->agent ? o->agent : getenv("NETTUNE_AGENT") ? getenv("NETTUNE_AGENT") : NT_CLI_DEFAULT_AGENT;
	long ct = o->confirm_timeout > 0 ? o->confirm_timeout : DEFAULT_CONFIRM_S;
	json_t *profile = NULL, *report = NULL, *before = NULL, *after = NULL, *txn = NULL;
	char err[2048], where[1200] = "";
	long long id = 0;
	int exit_status = BENCH_FAILED;
	nt_ctx ctx;

	if (o->compare)
		return nt_bench_compare(o, nargs, args);
	if (o->baseline || o->metric || o->metric_json || o->metric_regex || o->higher_is_better || o->lower_is_better ||
	    o->require_gain || o->require_no_loss || o->loss_margin || o->confidence || o->plot || o->json || o->seed ||
	    o->warmup || o->paired || o->neper_samples || o->also_json.n || o->also_regex.n) {
		fprintf(stderr, "nettune: bench-run: --baseline, --metric*, --*-is-better, --require-*, --loss-margin, "
				"--confidence, --plot, --json, --seed, --warmup, --paired, --neper-samples and --also-* are "
				"for --compare ROUNDS\n");
		return NT_EXIT_USAGE;
	}
	if (!o->profile || nargs < 1) {
		fprintf(stderr, "nettune: bench-run wants --profile P.json [--near IFACE] [--cpus N] [--report FILE] "
				"-- COMMAND [ARGS...]\n");
		return BENCH_FAILED;
	}
	if (nt_ctx_init(&ctx, o->root ? o->root : "/") < 0) {
		fprintf(stderr, "nettune: bench-run: bad --root %s\n", o->root);
		return BENCH_FAILED;
	}
	json_error_t jerr;
	profile = json_load_file(o->profile, JSON_REJECT_DUPLICATES, &jerr);
	if (!profile) {
		fprintf(stderr, "nettune: bench-run: %s: line %d: %s\n", o->profile, jerr.line, jerr.text);
		return BENCH_FAILED;
	}
	/* Where COMMAND will run is checked before anything is applied. */
	if (o->near && nt_cli_bind_near(o, o->near, NULL, 0) != 0)
		goto out;
	report = json_pack("{s:O,s:O,s:s,s:[],s:n,s:n,s:b}", "profile",
			   json_object_get(profile, "name") ?: json_null(), "profile_document", profile, "agent", agent,
			   "command", "near", "rollback", "reverted_by_agent", 0);
	if (!report)
		goto out;
	for (int i = 0; i < nargs; i++)
		json_array_append_new(json_object_get(report, "command"), json_string(args[i]));

	/* From here a signal must not end bench-run before it has put the
	 * host back: it is noted (and passed on to COMMAND once it runs). */
	nt_bench_catch_signals();
	int ar = nt_bench_apply(agent, profile, ct, &id, &txn);
	if (txn) {
		json_object_set_new(report, "transaction", txn);
		nt_bench_netns_warning(&ctx, json_object_get(txn, "steps"), report);
	}
	if (ar < 0) {
		apply_failed_report(report, txn);
		goto out;
	}
	/* Placement again, now that the profile may have moved the NIC's IRQs. */
	if (o->near) {
		if (nt_cli_bind_near(o, o->near, where, sizeof(where)) != 0)
			goto undo;
		json_object_set_new(report, "near", json_pack("{s:s,s:s}", "interface", o->near, "placement", where));
		fprintf(stderr, "nettune: bench-run: COMMAND runs near %s (%s)\n", o->near, where);
	}
	if (!(before = nt_bench_snapshot(agent, &ctx, o->near, err, sizeof(err)))) {
		fprintf(stderr, "nettune: bench-run: cannot read the counters: %s\n", err);
		goto undo;
	}
	if (nt_bench_signal())
		goto undo;

	int sig = 0;
	double dur = 0;
	if (nt_bench_exec(args, NULL, NULL, &exit_status, &sig, &dur) < 0) {
		exit_status = BENCH_FAILED;
		goto undo;
	}
	json_object_set_new(report, "exit_status", json_integer(exit_status));
	json_object_set_new(report, "signal", sig ? json_string(strsignal(sig)) : json_null());
	json_object_set_new(report, "duration_s", json_real(dur));
	if ((after = nt_bench_snapshot(agent, &ctx, o->near, err, sizeof(err))))
		json_object_set_new(report, "counters", nt_counters_delta(before, after));
	else
		fprintf(stderr, "nettune: bench-run: cannot read the counters after COMMAND: %s\n", err);

undo:
	json_object_set_new(report, "interrupted_by", nt_bench_signal() ? json_string(strsignal(nt_bench_signal())) : json_null());
	if (nt_bench_undo(agent, id, report) < 0) {
		json_object_set_new(report, "host_restored", json_false());
		exit_status = BENCH_FAILED;
	} else {
		json_object_set_new(report, "host_restored", json_true());
	}
	json_object_set_new(report, "command_ran", json_boolean(json_object_get(report, "exit_status") != NULL));
	if (!json_object_get(report, "exit_status")) {
		/* COMMAND never ran. */
		json_object_set_new(report, "exit_status", json_null());
		exit_status = BENCH_FAILED;
	}
	/* Stopped by a signal: its status, as COMMAND's would be, unless the
	 * host could not be put back (125 says that first). */
	if (nt_bench_signal() && exit_status != BENCH_FAILED)
		exit_status = 128 + nt_bench_signal();
	print_table(report);
out:
	if (report && o->report && nt_bench_write_report(report, o->report) < 0 && exit_status == 0)
		exit_status = BENCH_FAILED;
	json_decref(before);
	json_decref(after);
	json_decref(report);
	json_decref(profile);
	return exit_status;
}
