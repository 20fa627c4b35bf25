/* SPDX-License-Identifier: Apache-2.0 */
/* The CLI's renderers (cli/output.c, cli/txn_view.c) and its pure parsers,
 * fed documents an agent could send, including ones a fixture agent
 * cannot easily be made to (a rollback that failed), and the exit code
 * each outcome gives. */
#include "harness.h"
#include "cli/cli.h"
#include "cli/client.h"
#include "cli/escape.h"
#include "cli/exit.h"
#include "cli/output.h"
#include "cli/txn_view.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* An nt_out writing to memory; COLOR forced. */
typedef struct mem {
	char *s;
	size_t n;
	nt_out o;
} mem;

static void mem_open(mem *m, bool color)
{
	m->s = NULL;
	m->n = 0;
	m->o.f = open_memstream(&m->s, &m->n);
	m->o.color = color;
}

static const char *mem_text(mem *m)
{
	fflush(m->o.f);
	return m->s ? m->s : "";
}

static void mem_close(mem *m)
{
	fclose(m->o.f);
	free(m->s);
}

#define CHECK_HAS(hay, needle) CHECK_MSG(strstr(hay, needle) != NULL, "no '%s' in:\n%s", needle, hay)
#define CHECK_HASNT(hay, needle) CHECK_MSG(strstr(hay, needle) == NULL, "'%s' in:\n%s", needle, hay)

static void test_table(void)
{
	mem m;
	mem_open(&m, false);
	static const char *const head[] = { "A", "B", "", "C" };
	nt_table *t = nt_table_new(4, head);
	nt_table_add(t, (const char *const[]){ "x", "longer", "→", "end" });
	nt_table_add(t, (const char *const[]){ "wider cell", "y", "→", "" });
	nt_table_sgr(t, 1, NT_SGR_RED);
	CHECK_INT(nt_table_rows(t), 2);
	nt_table_print(t, &m.o, 2);
	/* Columns line up by characters ("→" is three bytes, one column), no
	 * line ends in spaces, and without colour there is no escape. */
	CHECK_STR(mem_text(&m), "  A           B          C\n"
				"  x           longer  →  end\n"
				"  wider cell  y       →\n");
	mem_close(&m);

	mem_open(&m, true);
	nt_table_print(t, &m.o, 0);
	CHECK_HAS(mem_text(&m), "\033[31my\033[0m");
	CHECK_HAS(mem_text(&m), "\033[2mA\033[0m");
	/* Escapes do not count towards the width: "x" is still padded to the
	 * width of "wider cell". */
	CHECK_HAS(mem_text(&m), "x           longer");
	mem_close(&m);
	nt_table_free(t);
}

static void test_small_parsers(void)
{
	char b[128];
	CHECK_STR(nt_out_oneline(b, sizeof(b), "4096\t131072\t6291456"), "4096 131072 6291456");
	CHECK_STR(nt_out_oneline(b, sizeof(b), "  a \n b  "), "a b");
	CHECK_STR(nt_out_oneline(b, sizeof(b), NULL), "");
	CHECK_STR(nt_out_duration(b, sizeof(b), 850), "850 ms");
	CHECK_STR(nt_out_duration(b, sizeof(b), 2449), "2.4 s");
	CHECK_STR(nt_out_duration(b, sizeof(b), 185000), "3 min 5 s");
	CHECK_INT(nt_out_parse_time_ms("1970-01-01T00:00:01.5Z"), 1500);
	CHECK_INT(nt_out_parse_time_ms("2026-11-30T16:52:00.615Z"), 1796057520615LL);
	CHECK_INT(nt_out_parse_time_ms("2026-11-30T16:52:00Z"), 1796057520000LL);
	CHECK_INT(nt_out_parse_time_ms("2026-11-30T16:52:00+01:00"), -1);
	CHECK_INT(nt_out_parse_time_ms("yesterday"), -1);
	CHECK_STR(nt_out_time(b, sizeof(b), "2026-11-30T16:52:00.615Z"), "2026-11-30 16:52:00 UTC");
	CHECK_STR(nt_out_time(b, sizeof(b), NULL), "-");

	long long t, now = 1796057520000LL;
	CHECK(nt_cli_parse_since("30m", now, &t) == 0 && t == now - 1800000);
	CHECK(nt_cli_parse_since("2h", now, &t) == 0 && t == now - 7200000);
	CHECK(nt_cli_parse_since("7d", now, &t) == 0 && t == now - 7LL * 86400000);
	CHECK(nt_cli_parse_since("90s", now, &t) == 0 && t == now - 90000);
	CHECK(nt_cli_parse_since("1970-01-02", now, &t) == 0 && t == 86400000);
	CHECK(nt_cli_parse_since("1970-01-01T00:01", now, &t) == 0 && t == 60000);
	CHECK(nt_cli_parse_since("1970-01-01 00:00:05Z", now, &t) == 0 && t == 5000);
	CHECK(nt_cli_parse_since("5", now, &t) < 0);
	CHECK(nt_cli_parse_since("5w", now, &t) < 0);
	CHECK(nt_cli_parse_since("yesterday", now, &t) < 0);
	CHECK(nt_cli_parse_since("2026-11-30x", now, &t) < 0);
	CHECK(nt_cli_parse_since("-3h", now, &t) < 0);
}

static void test_exit_codes(void)
{
	CHECK_INT(nt_exit_for_http(200), NT_EXIT_OK);
	CHECK_INT(nt_exit_for_http(201), NT_EXIT_OK);
	CHECK_INT(nt_exit_for_http(422), NT_EXIT_REFUSED);
	CHECK_INT(nt_exit_for_http(409), NT_EXIT_CONFLICT);
	CHECK_INT(nt_exit_for_http(401), NT_EXIT_DENIED);
	CHECK_INT(nt_exit_for_http(403), NT_EXIT_DENIED);
	CHECK_INT(nt_exit_for_http(404), NT_EXIT_ERROR);
	CHECK_INT(nt_exit_for_http(500), NT_EXIT_ERROR);
	CHECK_INT(nt_exit_for_txn_status("applied"), NT_EXIT_OK);
	CHECK_INT(nt_exit_for_txn_status("pending_confirm"), NT_EXIT_OK);
	CHECK_INT(nt_exit_for_txn_status("rolled_back"), NT_EXIT_ROLLED_BACK);
	CHECK_INT(nt_exit_for_txn_status("rollback_failed"), NT_EXIT_ROLLBACK_FAILED);
	CHECK_INT(nt_exit_for_txn_status("reverted"), NT_EXIT_REVERTED);
	CHECK_INT(nt_exit_for_txn_status(NULL), NT_EXIT_ERROR);
	/* Every code is distinct and listed once. */
	int seen[256] = { 0 }, n = 0;
	for (const nt_exit_code *e = nt_exit_codes; e->meaning; e++, n++) {
		CHECK_MSG(e->code >= 0 && e->code < 256 && !seen[e->code], "code %d twice", e->code);
		if (e->code >= 0 && e->code < 256)
			seen[e->code] = 1;
	}
	CHECK_INT(n, 15);

	/* docs/cli.md's table says the same, word for word. */
	FILE *f = fopen(NT_FIXTURES "/../../docs/cli.md", "r");
	char *readme = NULL;
	size_t len = 0;
	if (f) {
		FILE *m = open_memstream(&readme, &len);
		char buf[4096];
		size_t k;
		while ((k = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, k, m);
		fclose(m);
		fclose(f);
	}
	CHECK_MSG(readme != NULL, "docs/cli.md not found");
	for (const nt_exit_code *e = nt_exit_codes; readme && e->meaning; e++) {
		char row[512];
		snprintf(row, sizeof(row), "\n| %d | %s |\n", e->code, e->meaning);
		CHECK_MSG(strstr(readme, row) != NULL, "docs/cli.md lacks the row%s", row);
	}
	free(readme);

	/* So does the man page, which deploy/mangen.c fills in from nt_exit_codes at build time. */
	f = fopen(NT_MANPAGE, "r");
	char *man = NULL;
	if (f) {
		FILE *m = open_memstream(&man, &len);
		char buf[4096];
		size_t k;
		while ((k = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, k, m);
		fclose(m);
		fclose(f);
	}
	CHECK_MSG(man != NULL, "%s not found (deploy/mangen.c makes it at build time)", NT_MANPAGE);
	for (const nt_exit_code *e = nt_exit_codes; man && e->meaning; e++) {
		char row[512];
		snprintf(row, sizeof(row), ".TP\n%d\n%s\n", e->code, e->meaning);
		CHECK_MSG(strstr(man, row) != NULL, "nettune(8) lacks%s", row);
	}
	free(man);
}

static void test_problem(void)
{
	mem m;
	json_t *p = json_loads("{\"type\":\"t\",\"title\":\"Invalid profile\",\"status\":422,"
			       "\"detail\":\"the profile is not valid for this host\",\"errors\":["
			       "{\"path\":\"$.rings[0].rx\",\"message\":\"rx 99999 is above enos0's maximum 8192\"},"
			       "{\"path\":\"$.name\",\"message\":\"'name' is required\"}]}",
			       0, NULL);
	mem_open(&m, false);
	nt_out_problem(&m.o, 422, p, NULL);
	CHECK_STR(mem_text(&m), "nettune: profile refused:\n"
				"  $.rings[0].rx: rx 99999 is above enos0's maximum 8192\n"
				"  $.name: 'name' is required\n"
				"nothing was applied\n");
	mem_close(&m);
	json_decref(p);

	p = json_loads("{\"type\":\"t\",\"title\":\"Conflict\",\"status\":409,"
		       "\"detail\":\"a later transaction changed the same targets\",\"later\":7}", 0, NULL);
	mem_open(&m, false);
	nt_out_problem(&m.o, 409, p, NULL);
	CHECK_HAS(mem_text(&m), "nettune: conflict: a later transaction changed the same targets\n");
	CHECK_HAS(mem_text(&m), "transaction 7 changed the same targets since: roll it back first, or use --force");
	mem_close(&m);
	json_decref(p);
	/* Other statuses: the agent's title, in lower case like the others. */
	p = json_loads("{\"type\":\"t\",\"title\":\"Plan used\",\"status\":410,"
		       "\"detail\":\"plan p-1 was applied already\"}", 0, NULL);
	mem_open(&m, false);
	nt_out_problem(&m.o, 410, p, NULL);
	CHECK_STR(mem_text(&m), "nettune: plan used (HTTP 410): plan p-1 was applied already\n");
	mem_close(&m);
	json_decref(p);
	/* Rolled back already: the one true line, no advice. */
	p = json_loads("{\"type\":\"t\",\"title\":\"Conflict\",\"status\":409,"
		       "\"detail\":\"transaction 6 is already rolled back, by transaction 7\",\"later\":7,"
		       "\"rolled_back_by\":7}", 0, NULL);
	mem_open(&m, false);
	nt_out_problem(&m.o, 409, p, NULL);
	CHECK_STR(mem_text(&m), "nettune: conflict: transaction 6 is already rolled back, by transaction 7\n");
	mem_close(&m);
	json_decref(p);

	/* Another apply still being planned: no id yet, the detail says what. */
	p = json_loads("{\"type\":\"t\",\"title\":\"Conflict\",\"status\":409,"
		       "\"detail\":\"another transaction is being prepared (apply of profile big)\","
		       "\"in_flight_detail\":{\"state\":\"preparing\",\"operation\":\"apply\","
		       "\"profile\":\"big\",\"since\":\"2026-11-30T23:23:07.345Z\","
		       "\"client\":\"10.0.0.9\"}}", 0, NULL);
	mem_open(&m, false);
	nt_out_problem(&m.o, 409, p, NULL);
	CHECK_HAS(mem_text(&m), "being prepared: apply of profile big since 2026-11-30T23:23:07.345Z by 10.0.0.9\n");
	mem_close(&m);
	json_decref(p);

	mem_open(&m, false);
	nt_out_problem(&m.o, 502, NULL, "Bad Gateway\n<html>");
	CHECK_STR(mem_text(&m), "nettune: the agent answered HTTP 502: Bad Gateway\n");
	mem_close(&m);

	p = json_loads("{\"type\":\"t\",\"title\":\"Forbidden\",\"status\":403,\"detail\":\"read scope\"}", 0, NULL);
	mem_open(&m, false);
	nt_out_problem(&m.o, 403, p, NULL);
	CHECK_HAS(mem_text(&m), "nettune: not allowed: read scope\n");
	CHECK_HAS(mem_text(&m), "scope apply");
	mem_close(&m);
	json_decref(p);
}

static void test_plan(void)
{
	mem m;
	json_t *plan = json_loads(
		"{\"profile\":{},\"warnings\":[\"irqbalance is running\"],\"reserved\":{\"eth0\":\"6-7\"},"
		"\"steps\":["
		"{\"kind\":\"irq_affinity\",\"interface\":\"eth0\",\"target\":\"177\",\"before\":\"0-15\",\"after\":\"1\"},"
		"{\"kind\":\"irq_affinity\",\"interface\":\"eth1\",\"target\":\"185\",\"before\":\"0-15\",\"after\":\"2\"},"
		"{\"kind\":\"rings\",\"interface\":\"eth0\",\"target\":\"eth0\",\"before\":\"rx=1\",\"after\":\"rx=2\"},"
		"{\"kind\":\"sysctl\",\"target\":\"net.ipv4.tcp_rmem\",\"before\":\"1\\t2\\t3\",\"after\":\"4 5 6\"}]}",
		0, NULL);
	mem_open(&m, false);
	nt_view_plan(&m.o, plan, NULL, false);
	const char *s = mem_text(&m);
	/* eth0's rings come right after eth0's IRQ, before eth1: grouped. */
	const char *r = strstr(s, "rings"), *e1 = strstr(s, "eth1");
	CHECK_MSG(r && e1 && r < e1, "grouped by interface:\n%s", s);
	CHECK_HAS(s, "irq 177");
	CHECK_HAS(s, "1 2 3");
	CHECK_HAS(s, "host");
	CHECK_HAS(s, "warning: irqbalance is running\n");
	CHECK_HAS(s, "reserved for the application: eth0 cpus 6-7\n");
	CHECK_HAS(s, "4 steps; nothing applied\n");
	mem_close(&m);

	/* On a colour terminal, IRQ CPUs off the NIC's local CPUs are red:
	 * eth0 is local to 0-7, so its "0-15" is, its "1" is not; eth1's
	 * locality is unknown, so nothing of it is red. */
	json_t *nics = json_loads("{\"nics\":[{\"name\":\"eth0\",\"local_cpus\":\"0-7\"},"
				  "{\"name\":\"eth1\",\"local_cpus\":null}]}", 0, NULL);
	mem_open(&m, true);
	nt_view_plan(&m.o, plan, nics, false);
	s = mem_text(&m);
	CHECK_HAS(s, "\033[31m0-15\033[0m");
	CHECK_HAS(s, "\033[32m1\033[0m");
	const char *eth1 = strstr(s, "eth1");
	CHECK_MSG(eth1 && !strstr(eth1, "\033[31m0-15"), "eth1's CPUs coloured without locality:\n%s", s);
	mem_close(&m);
	json_decref(nics);
	json_decref(plan);

	plan = json_loads("{\"profile\":{},\"steps\":[],\"warnings\":[]}", 0, NULL);
	mem_open(&m, false);
	nt_view_plan(&m.o, plan, NULL, false);
	CHECK_STR(mem_text(&m), "already tuned: nothing to do\n");
	mem_close(&m);
	json_decref(plan);
}

/* A rollback that failed: what could not be put back, each with what it
 * reads now; what was. */
/* The MTU warning in the CLI's words: --confirm-timeout, and no advice to
 * set a window when the transaction has one. */
static void test_mtu_warning(void)
{
	static const char w[] = "mtu: a new MTU can cut this host off when a peer or switch on the path does not "
				"take it; apply with confirm_timeout_s so that it rolls back unless confirmed";
	mem m;
	json_t *plan = json_pack("{s:[], s:[s]}", "steps", "warnings", w);
	mem_open(&m, false);
	nt_view_plan(&m.o, plan, NULL, false);
	CHECK_HAS(mem_text(&m), "does not take it; apply with --confirm-timeout S (or use try) so that it rolls back "
				"unless confirmed\n");
	CHECK_HASNT(mem_text(&m), "confirm_timeout_s");
	mem_close(&m);
	json_decref(plan);
	json_t *t = json_pack("{s:i, s:s, s:i, s:[], s:[s]}", "id", 3, "status", "pending_confirm", "confirm_timeout_s",
			      60, "steps", "warnings", w);
	mem_open(&m, false);
	nt_view_outcome(&m.o, t, "", NULL, false);
	CHECK_HAS(mem_text(&m), "warning: mtu: a new MTU can cut this host off when a peer or switch on the path does "
				"not take it\n");
	CHECK_HASNT(mem_text(&m), "apply with");
	CHECK_HASNT(mem_text(&m), "confirm_timeout_s");
	mem_close(&m);
	json_decref(t);
}

/* A reverted transaction (not confirmed in time, or rolled back early on
 * purpose) is no failure: its error member is said as the reason. */
static void test_reverted(void)
{
	mem m;
	json_t *t = json_pack("{s:i, s:s, s:s, s:[], s:[]}", "id", 4, "status", "reverted", "error",
			      "rolled back before its confirm deadline by ci; reverted", "steps", "warnings");
	mem_open(&m, false);
	nt_view_outcome(&m.o, t, "", NULL, false);
	CHECK_HAS(mem_text(&m), "  reason: rolled back before its confirm deadline by ci; reverted\n");
	CHECK_HASNT(mem_text(&m), "error");
	mem_close(&m);
	mem_open(&m, false);
	nt_view_txn(&m.o, t, NULL, false);
	CHECK_HAS(mem_text(&m), "  reason      rolled back before its confirm deadline by ci; reverted\n");
	CHECK_HASNT(mem_text(&m), "error");
	mem_close(&m);
	json_decref(t);
}

static void test_outcomes(void)
{
	mem m;
	json_t *t = json_loads(
		"{\"id\":12,\"status\":\"rollback_failed\",\"duration_ms\":2400,\"failed_step\":2,"
		"\"error\":\"step 2 failed\",\"warnings\":[],\"steps\":["
		"{\"index\":0,\"kind\":\"irq_affinity\",\"interface\":\"eth0\",\"target\":\"177\",\"before\":\"0-15\","
		"\"after\":\"1\",\"result\":\"rollback_failed\",\"error\":\"EIO; reads 1\"},"
		"{\"index\":1,\"kind\":\"rings\",\"interface\":\"eth0\",\"target\":\"eth0\",\"before\":\"rx=1\","
		"\"after\":\"rx=2\",\"result\":\"rolled_back\",\"error\":null},"
		"{\"index\":2,\"kind\":\"sysctl\",\"target\":\"net.core.rmem_max\",\"before\":\"1\","
		"\"after\":\"2\",\"result\":\"failed\",\"error\":\"Invalid argument\"}]}",
		0, NULL);
	mem_open(&m, false);
	nt_view_outcome(&m.o, t, "", NULL, false);
	const char *s = mem_text(&m);
	CHECK_HAS(s, "transaction 12: rollback_failed after 2.4 s\n");
	CHECK_HAS(s, "failed: step 2, sysctl net.core.rmem_max (1 → 2): Invalid argument\n");
	CHECK_HAS(s, "put back: 1 step (rings ×1)\n");
	CHECK_HAS(s, "NOT put back: 1 step");
	CHECK_HAS(s, "not put back: step 0, irq_affinity irq 177 (0-15 → 1): EIO; reads 1\n");
	CHECK_MSG(!strstr(s, "as it was before"), "%s", s);
	mem_close(&m);

	mem_open(&m, true);
	nt_view_outcome(&m.o, t, "", NULL, false);
	CHECK_HAS(mem_text(&m), "\033[1;31mrollback_failed\033[0m");
	mem_close(&m);

	/* The same document in full: header and every step with its result. */
	mem_open(&m, false);
	nt_view_txn(&m.o, t, NULL, false);
	s = mem_text(&m);
	CHECK_HAS(s, "transaction 12  rollback_failed\n");
	CHECK_HAS(s, "step 2 failed");
	CHECK_HAS(s, "EIO; reads 1");
	CHECK_HAS(s, "rolled_back");
	mem_close(&m);
	json_decref(t);

	t = json_loads("{\"id\":3,\"status\":\"applied\",\"duration_ms\":5,\"steps\":[],\"warnings\":[]}", 0, NULL);
	mem_open(&m, false);
	nt_view_outcome(&m.o, t, "", NULL, false);
	CHECK_STR(mem_text(&m), "transaction 3: applied, nothing to change: already tuned in 5 ms\n");
	mem_close(&m);
	json_decref(t);

	/* The plan's warnings come with the apply's answer, and not again
	 * with its confirmation or its revert. */
	t = json_loads("{\"id\":5,\"status\":\"applied\",\"duration_ms\":7,\"steps\":[],"
		       "\"warnings\":[\"eth0: CPU 9 is on node 1\"]}", 0, NULL);
	mem_open(&m, false);
	nt_view_outcome(&m.o, t, "", NULL, false);
	CHECK_HAS(mem_text(&m), "warning: eth0: CPU 9 is on node 1\n");
	mem_close(&m);
	mem_open(&m, false);
	nt_view_outcome_later(&m.o, t, "");
	CHECK_STR(mem_text(&m), "transaction 5: applied, nothing to change: already tuned in 7 ms\n");
	mem_close(&m);
	json_decref(t);

	/* A lean answer counts steps keyed by kind name; the summary still
	 * lists the kinds in plan order, as the full answer's steps do. */
	t = json_loads("{\"id\":4,\"status\":\"applied\",\"duration_ms\":5,\"steps\":[],\"warnings\":[],"
		       "\"nsteps\":76,\"step_counts\":{\"applied\":{\"bond\":1,\"irq_affinity\":67,"
		       "\"rings\":4,\"sysctl\":4,\"xps_cpus\":2,\"rps_cpus\":3}}}", 0, NULL);
	mem_open(&m, false);
	nt_view_outcome(&m.o, t, "", NULL, false);
	CHECK_HAS(mem_text(&m), "(irq_affinity ×67, rings ×4, rps_cpus ×3, xps_cpus ×2, bond ×1, sysctl ×4)");
	mem_close(&m);
	json_decref(t);
}

static void test_history(void)
{
	mem m;
	json_t *l = json_loads(
		"[{\"id\":2,\"status\":\"rolled_back\",\"created\":\"2026-11-30T16:52:00.615Z\",\"nsteps\":9,"
		"\"client\":\"10.0.0.5\",\"identity\":\"fleet\",\"profile_name\":\"epyc-fix\","
		"\"error\":\"step 8 (sysctl net.core.wmem_max): Is a directory\"},"
		"{\"id\":1,\"status\":\"applied\",\"created\":\"2026-11-30T16:50:00.000Z\",\"nsteps\":4,"
		"\"client\":\"127.0.0.1\",\"identity\":\"\",\"profile\":{\"name\":\"inline\"}}]",
		0, NULL);
	mem_open(&m, false);
	nt_view_history(&m.o, l, 5);
	const char *s = mem_text(&m);
	CHECK_HAS(s, "ID  CREATED");
	CHECK_HAS(s, "2   2026-11-30 16:52:00 UTC  rolled_back  9      fleet (10.0.0.5)  epyc-fix  step 8");
	CHECK_HAS(s, "1   2026-11-30 16:50:00 UTC  applied      4      127.0.0.1         inline\n");
	CHECK_HAS(s, "showing the newest 2 of 5");
	mem_close(&m);
	json_decref(l);
	/* The agent's own transactions say why they were made. */
	l = json_loads("[{\"id\":3,\"status\":\"applied\",\"created\":\"2026-11-30T16:53:00.000Z\",\"nsteps\":1,"
		       "\"client\":\"\",\"identity\":\"agent\",\"profile_name\":\"epyc-fix\",\"reason\":\"drift\"}]",
		       0, NULL);
	mem_open(&m, false);
	nt_view_history(&m.o, l, 1);
	CHECK_HAS(mem_text(&m), "epyc-fix  drift repair");
	mem_close(&m);
	json_decref(l);
}

static void check_esc(const char *in, size_t len, const char *want)
{
	char *e = nt_out_escape(in, len);
	CHECK_STR(e, want);
	CHECK_INT(nt_out_needs_escape(in, len), strcmp(in, want) != 0 || len != strlen(want));
	free(e);
}

static void test_escape(void)
{
	check_esc("enos0 4096 87380", 16, "enos0 4096 87380");
	check_esc("", 0, "");
	/* UTF-8 text stays: an arrow, an e acute, a CJK character, an emoji. */
	check_esc("→ é 中 \xf0\x9f\x98\x80", 15, "→ é 中 \xf0\x9f\x98\x80");
	/* C0 (newline too), DEL; a tab is shown as a space (tcp_rmem's
	 * fields), which nt_out_needs_escape still counts as a rewrite. */
	check_esc("\x1b]0;x\x07", 6, "\\x1b]0;x\\x07");
	check_esc("a\tb\nc\rd", 7, "a b\\x0ac\\x0dd");
	check_esc("4096\t131072\t6291456", 19, "4096 131072 6291456");
	check_esc("\x7f", 1, "\\x7f");
	/* C1 in UTF-8 (U+009B, the 8-bit CSI; U+0085), the first and last bidi
	 * overrides and isolates, and their neighbours untouched. */
	check_esc("\xc2\x9b" "2J\xc2\x85", 6, "\\u009b2J\\u0085");
	check_esc("\xc2\xa0", 2, "\xc2\xa0");
	check_esc("\xe2\x80\xaa\xe2\x80\xae\xe2\x81\xa6\xe2\x81\xa9", 12, "\\u202a\\u202e\\u2066\\u2069");
	check_esc("\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa", 12, "\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa");
	/* Bytes that are not UTF-8: a lone 8-bit CSI, a cut sequence, an
	 * overlong NUL, a surrogate. */
	check_esc("\x9b" "A", 2, "\\x9bA");
	check_esc("x\xe2\x80", 3, "x\\xe2\\x80");
	check_esc("\xc0\x80", 2, "\\xc0\\x80");
	check_esc("\xed\xa0\x80", 3, "\\xed\\xa0\\x80");
	/* A NUL inside the length. */
	check_esc("a\0b", 3, "a\\x00b");

	/* A value quoted in an error: cut past the limit, with its length. */
	char clip[512], big[5001];
	memset(big, '9', 5000);
	big[5000] = '\0';
	nt_out_clip(clip, sizeof(clip), big, NT_OUT_CLIP_DEFAULT);
	CHECK_INT(strlen(clip), 64 + strlen("... (5000 bytes)"));
	CHECK(strstr(clip, "9999... (5000 bytes)") != NULL);
	CHECK_STR(nt_out_clip(clip, sizeof(clip), "short\x1b", NT_OUT_CLIP_DEFAULT), "short\\x1b");
	CHECK_STR(nt_out_clip(clip, sizeof(clip), NULL, NT_OUT_CLIP_DEFAULT), "");

	/* A whole document: values, nested, and keys. */
	json_t *d = json_pack("{s:s,s:[s,i],s:{s:s}}", "a", "\x1b[2J", "b", "ok\xe2\x80\xae", 7, "c", "k\ey", "v\n");
	CHECK(d && nt_out_escape_doc(d) == 0);
	CHECK_STR(json_string_value(json_object_get(d, "a")), "\\x1b[2J");
	CHECK_STR(json_string_value(json_array_get(json_object_get(d, "b"), 0)), "ok\\u202e");
	CHECK_INT(json_integer_value(json_array_get(json_object_get(d, "b"), 1)), 7);
	CHECK_STR(json_string_value(json_object_get(json_object_get(d, "c"), "k\\x1by")), "v\\x0a");
	CHECK(json_object_get(json_object_get(d, "c"), "k\ey") == NULL);
	json_decref(d);
}

static void test_malformed(void)
{
	static const struct {
		const char *doc, *kind, *want; /* want NULL: well formed */
	} cases[] = {
		{ "{\"steps\":7}", "plan", "steps is not an array of objects" },
		{ "{\"warnings\":[]}", "plan", "steps is not an array of objects" },
		{ "{\"steps\":[],\"warnings\":[1]}", "plan", "warnings is not an array of strings" },
		{ "{\"steps\":[{}],\"warnings\":[\"w\"],\"reserved\":{}}", "plan", NULL },
		{ "{\"steps\":[{}],\"warnings\":[\"w\"],\"reserved\":{}}", "txn", "id is not an integer" },
		{ "{\"id\":1,\"status\":\"applied\",\"steps\":[7]}", "txn", "steps is not an array of objects" },
		{ "{\"id\":1,\"status\":\"applied\",\"steps\":[]}", "txn", NULL },
		{ "{\"transactions\":[{\"id\":1,\"status\":\"applied\",\"nsteps\":3}],\"total\":1}", "history", NULL },
		{ "{\"transactions\":[{\"id\":\"1\",\"status\":\"applied\"}]}", "history", "id is not an integer" },
		{ "{\"transactions\":{}}", "history", "transactions is not an array of objects" },
		{ "{\"status\":\"ok\",\"targets\":7}", "drift", "targets is not an array of objects" },
		{ "{\"history\":\"x\"}", "desired", "history is not an array of objects" },
		{ "[]", "plan", "the answer is not a JSON object" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *d = json_loads(cases[i].doc, 0, NULL);
		const char *got = nt_view_malformed(d, cases[i].kind);
		CHECK_MSG(d && (cases[i].want ? got && !strcmp(got, cases[i].want) : !got), "%s as %s: %s", cases[i].doc,
			  cases[i].kind, got ? got : "(well formed)");
		json_decref(d);
	}

	long v;
	CHECK(nt_cli_timeout_s(NULL, &v) == 0 && v == NT_CLI_DEFAULT_TIMEOUT_S);
	CHECK(nt_cli_timeout_s("", &v) == 0 && v == NT_CLI_DEFAULT_TIMEOUT_S);
	CHECK(nt_cli_timeout_s("5", &v) == 0 && v == 5);
	CHECK_INT(nt_cli_timeout_s("0", &v), -EINVAL);
	CHECK_INT(nt_cli_timeout_s("5s", &v), -EINVAL);
	CHECK_INT(nt_cli_timeout_s("86401", &v), -EINVAL);
}

int main(void)
{
	test_table();
	test_small_parsers();
	test_exit_codes();
	test_problem();
	test_plan();
	test_mtu_warning();
	test_reverted();
	test_outcomes();
	test_history();
	test_escape();
	test_malformed();
	TEST_MAIN_END();
}
