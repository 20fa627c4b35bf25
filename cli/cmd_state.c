/* SPDX-License-Identifier: Apache-2.0 */
/* The commands that read what a running agent holds and sees: desired
 * (the desired state it holds), drift (what its watcher found) and verify
 * (where interrupts were delivered over a window). Through cli/client.c
 * and the helpers of cli/cmd_agent.h, as the transaction commands. */
#include "cli/cli.h"
#include "cli/client.h"
#include "cli/cmd_agent.h"
#include "cli/escape.h"
#include "cli/exit.h"
#include "cli/output.h"
#include "cli/txn_view.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void view_desired(nt_out *out, const json_t *d)
{
	char when[64];
	const char *name = json_string_value(json_object_get(d, "profile_name"));
	const json_t *profile = json_object_get(d, "profile");
	const char *pname = json_string_value(json_object_get(profile, "name"));
	const char *who = json_string_value(json_object_get(d, "identity"));
	const char *client = json_string_value(json_object_get(d, "client"));
	const char *source = json_string_value(json_object_get(d, "source"));
	json_int_t txn = json_integer_value(json_object_get(d, "txn_id"));

	nt_out_printf(out, "desired state: profile %s\n", name ? name : pname ? pname : "(unnamed)");
	nt_out_printf(out, "  set %s", nt_out_time(when, sizeof(when), json_string_value(json_object_get(d, "set"))));
	if (who && *who)
		nt_out_printf(out, " by %s", who);
	if (client && *client)
		nt_out_printf(out, " (%s)", client);
	if (source && !strcmp(source, "transaction") && txn)
		nt_out_printf(out, ", from transaction %lld", (long long)txn);
	nt_out_printf(out, "\n");
	const char *policy = json_string_value(json_object_get(d, "policy"));
	if (policy)
		nt_out_printf(out, "  policy: %s\n", !strcmp(policy, "repair") ? "repair drift as transactions"
										  : "report drift, change nothing");
	const json_t *hist = json_object_get(d, "history");
	if (json_array_size(hist) == 0)
		return;
	nt_out_printf(out, "history:\n");
	size_t i;
	json_t *h;
	json_array_foreach(hist, i, h) {
		const char *action = json_string_value(json_object_get(h, "action"));
		const char *hn = json_string_value(json_object_get(h, "profile_name"));
		const char *hid = json_string_value(json_object_get(h, "identity"));
		nt_out_printf(out, "  %s  %-7s %s%s%s\n",
			      nt_out_time(when, sizeof(when), json_string_value(json_object_get(h, "at"))),
			      action ? action : "?", hn ? hn : "", hid && *hid ? " by " : "", hid && *hid ? hid : "");
	}
}

int nt_cmd_desired(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	nt_cli_reply r = { 0 };
	bool render;
	int code;
	const char *sub = nargs > 0 ? args[0] : "show";
	nt_out out;

	nt_out_init(&out, stdout);
	if (!strcmp(sub, "show") && nargs <= 1) {
		code = nt_cli_exchange_as(o, "GET", "/v1/desired", NULL, NULL, "desired", &r, &render);
		if (render)
			view_desired(&out, r.doc);
	} else if (!strcmp(sub, "set") && nargs == 2) {
		json_t *p = nt_cli_load_profile(args[1]);
		if (!p)
			return NT_EXIT_USAGE;
		json_t *body = json_pack("{s:o}", "profile", p);
		char *text = nt_cli_body_text(body);
		if (!text)
			return NT_EXIT_ERROR;
		code = nt_cli_exchange_as(o, "PUT", "/v1/desired", text, "setting the desired state", "desired", &r, &render);
		free(text);
		if (render)
			view_desired(&out, r.doc);
	} else if (!strcmp(sub, "clear") && nargs == 1) {
		code = nt_cli_exchange_as(o, "DELETE", "/v1/desired", NULL, NULL, NULL, &r, &render);
		if (code == NT_EXIT_OK && !o->json)
			nt_out_printf(&out, "desired state cleared; the host was not changed\n");
	} else {
		fprintf(stderr, "nettune: desired wants 'show', 'set PROFILE.json' or 'clear'\n");
		return NT_EXIT_USAGE;
	}
	nt_cli_reply_free(&r);
	return code;
}

int nt_cmd_drift(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	nt_cli_reply r = { 0 };
	bool render;
	char when[64];

	if (nargs != 0) {
		fprintf(stderr, "nettune: drift takes no arguments\n");
		return NT_EXIT_USAGE;
	}
	int code = nt_cli_exchange_as(o, "GET", "/v1/drift", NULL, NULL, "drift", &r, &render);
	if (!render) {
		nt_cli_reply_free(&r);
		return code;
	}
	nt_out out;
	nt_out_init(&out, stdout);
	const json_t *d = r.doc;
	const char *status = json_string_value(json_object_get(d, "status"));
	const char *policy = json_string_value(json_object_get(d, "policy"));
	nt_out_printf(&out, "drift: ");
	nt_out_paint(&out, nt_out_status_sgr(status ? status : "?"), "%s", status ? status : "?");
	nt_out_printf(&out, " (policy %s, checked every %llds", policy ? policy : "?",
		      (long long)json_integer_value(json_object_get(d, "interval_s")));
	const char *last = json_string_value(json_object_get(d, "last_check"));
	if (last)
		nt_out_printf(&out, ", last %s", nt_out_time(when, sizeof(when), last));
	nt_out_printf(&out, ")\n");
	const char *msg = json_string_value(json_object_get(d, "message"));
	if (msg)
		nt_out_printf(&out, "  %s\n", msg);
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(d, "errors"), i, e)
		nt_out_printf(&out, "  %s: %s\n", json_string_value(json_object_get(e, "path")),
			      json_string_value(json_object_get(e, "message")));
	const json_t *targets = json_object_get(d, "targets");
	if (json_array_size(targets) > 0) {
		static const char *const head[] = { "kind", "target", "desired", "current", "state", "repairs" };
		nt_table *t = nt_table_new(6, head);
		json_array_foreach(targets, i, e) {
			char reps[16];
			snprintf(reps, sizeof(reps), "%lld", (long long)json_integer_value(json_object_get(e, "repairs_in_window")));
			const char *state = json_string_value(json_object_get(e, "state"));
			const char *cells[] = { json_string_value(json_object_get(e, "kind")),
						json_string_value(json_object_get(e, "target")),
						json_string_value(json_object_get(e, "desired")),
						json_string_value(json_object_get(e, "current")), state, reps };
			if (t && nt_table_add(t, cells) == 0)
				nt_table_sgr(t, 4, nt_out_status_sgr(state ? state : "?"));
		}
		if (t)
			nt_table_print(t, &out, 2);
		nt_table_free(t);
		json_array_foreach(targets, i, e) {
			const json_t *c = json_object_get(e, "culprit");
			const char *why = json_is_string(c) ? json_string_value(c)
				      : json_string_value(json_object_get(c, "reason"));
			if (why)
				nt_out_printf(&out, "  %s %s: %s\n", json_string_value(json_object_get(e, "kind")),
					      json_string_value(json_object_get(e, "target")), why);
		}
	}
	nt_cli_reply_free(&r);
	return code;
}

/* `nettune verify`: GET /v1/verify, one row per NIC IRQ, then one per
 * NAPI thread the agent placed. The exit status
 * says whether anything was delivered elsewhere, so a script can gate on
 * it; "not observed" is not a failure but neither a pass, and the text
 * says how many there were. */
static void verify_counts(char *buf, size_t size, const json_t *e, const char *member, const char *count)
{
	size_t i, len = 0;
	const char *k;
	json_t *v;
	buf[0] = 0;
	if (json_is_object(e)) {
		json_object_foreach((json_t *)e, k, v) {
			int n = snprintf(buf + len, size - len, "%s%s:%lld", len ? " " : "", k, (long long)json_integer_value(v));
			if (n < 0 || (size_t)n >= size - len)
				break;
			len += (size_t)n;
		}
		return;
	}
	json_array_foreach(e, i, v) {
		int n = snprintf(buf + len, size - len, "%s%lld:%lld", len ? " " : "",
				 (long long)json_integer_value(json_object_get(v, member)),
				 (long long)json_integer_value(json_object_get(v, count)));
		if (n < 0 || (size_t)n >= size - len)
			break;
		len += (size_t)n;
	}
}

static const char *verdict_sgr(const char *v)
{
	if (!v)
		return NULL;
	return !strcmp(v, "delivered") ? NT_SGR_GREEN : !strcmp(v, "elsewhere") ? NT_SGR_BOLD_RED : NT_SGR_YELLOW;
}

int nt_cmd_verify(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	nt_cli_reply r = { 0 };
	bool render;
	long ms = 2000;
	char path[64];

	if (nargs != 0) {
		fprintf(stderr, "nettune: verify takes no arguments\n");
		return NT_EXIT_USAGE;
	}
	if (o->window && nt_cli_parse_window_ms(o->window, 100, 60000, &ms) < 0) {
		fprintf(stderr, "nettune: --window wants a duration from 100ms to 60s (2s, 500ms, 1m), not '%s'\n",
			o->window);
		return NT_EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "/v1/verify?window_ms=%ld", ms);
	int code = nt_cli_exchange_as(o, "GET", path, NULL, "watching interrupts", NULL, &r, &render);
	const json_t *d = r.doc;
	const json_t *rps = json_object_get(d, "rps");
	const json_t *vs = json_object_get(d, "verdicts");
	const char *rps_verdict = json_string_value(json_object_get(rps, "verdict"));
	const json_t *tvs = json_object_get(d, "thread_verdicts");
	bool elsewhere = json_integer_value(json_object_get(vs, "elsewhere")) > 0 ||
			 json_integer_value(json_object_get(tvs, "elsewhere")) > 0 ||
			 (rps_verdict && !strcmp(rps_verdict, "elsewhere"));
	if (code == NT_EXIT_OK && json_is_object(d) && elsewhere)
		code = NT_EXIT_ERROR;
	if (!render) {
		nt_cli_reply_free(&r);
		return code;
	}
	nt_out out;
	nt_out_init(&out, stdout);
	nt_out_printf(&out, "delivery over %.0f ms: %lld delivered, %lld elsewhere, %lld not observed\n",
		      json_real_value(json_object_get(d, "window_ms")),
		      (long long)json_integer_value(json_object_get(vs, "delivered")),
		      (long long)json_integer_value(json_object_get(vs, "elsewhere")),
		      (long long)json_integer_value(json_object_get(vs, "not_observed")));
	static const char *const head[] = { "irq", "nic", "queue", "placed", "affinity", "verdict", "cpu:count",
					    "outside" };
	nt_table *t = nt_table_new(8, head);
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(d, "irqs"), i, e) {
		char irq[16], queue[16], counts[256], outside[256];
		const json_t *q = json_object_get(e, "queue");
		const char *placed = json_string_value(json_object_get(e, "placed"));
		const char *aff = json_string_value(json_object_get(e, "affinity"));
		const char *verdict = json_string_value(json_object_get(e, "verdict"));
		snprintf(irq, sizeof(irq), "%lld", (long long)json_integer_value(json_object_get(e, "irq")));
		snprintf(queue, sizeof(queue), json_is_integer(q) ? "%lld" : "-", (long long)json_integer_value(q));
		verify_counts(counts, sizeof(counts), json_object_get(e, "counts"), NULL, NULL);
		verify_counts(outside, sizeof(outside), json_object_get(e, "elsewhere"), "cpu", "count");
		/* An IRQ of no NIC (placed by other_irqs) by its own name. */
		const char *nic = json_string_value(json_object_get(e, "nic"));
		if (!nic)
			nic = json_string_value(json_object_get(e, "name"));
		const char *cells[] = { irq, nic ? nic : "-", queue, placed ? placed : "-",
					aff ? aff : "-", verdict, counts[0] ? counts : "-", outside[0] ? outside : "-" };
		if (t && nt_table_add(t, cells) == 0)
			nt_table_sgr(t, 5, verdict_sgr(verdict));
	}
	if (t && nt_table_rows(t))
		nt_table_print(t, &out, 2);
	nt_table_free(t);
	/* The NAPI threads the agent placed: where each ran in the window. */
	static const char *const thead[] = { "napi thread", "pid", "placed", "allowed", "ran ms", "last cpu",
					     "verdict", "why" };
	t = json_array_size(json_object_get(d, "threads")) ? nt_table_new(8, thead) : NULL;
	json_array_foreach(json_object_get(d, "threads"), i, e) {
		char pid[16], ran[32], cpu[16];
		const json_t *run = json_object_get(e, "run_ns"), *last = json_object_get(e, "last_cpu");
		const char *verdict = json_string_value(json_object_get(e, "verdict"));
		const char *allowed = json_string_value(json_object_get(e, "allowed"));
		const char *why = json_string_value(json_object_get(e, "why"));
		const char *outside = json_string_value(json_object_get(e, "outside"));
		snprintf(pid, sizeof(pid), "%lld", (long long)json_integer_value(json_object_get(e, "pid")));
		snprintf(ran, sizeof(ran), json_is_integer(run) ? "%.1f" : "-", (double)json_integer_value(run) / 1e6);
		snprintf(cpu, sizeof(cpu), json_is_integer(last) ? "%lld" : "-", (long long)json_integer_value(last));
		const char *cells[] = { json_string_value(json_object_get(e, "target")),
					json_is_integer(json_object_get(e, "pid")) ? pid : "-",
					json_string_value(json_object_get(e, "placed")), allowed ? allowed : "-", ran, cpu,
					verdict, why ? why : outside ? outside : "-" };
		if (t && nt_table_add(t, cells) == 0)
			nt_table_sgr(t, 6, verdict_sgr(verdict));
	}
	if (t && nt_table_rows(t))
		nt_table_print(t, &out, 2);
	nt_table_free(t);
	if (json_is_object(rps)) {
		char outside[256];
		const char *v = json_string_value(json_object_get(rps, "verdict"));
		verify_counts(outside, sizeof(outside), json_object_get(rps, "elsewhere"), "cpu", "count");
		nt_out_printf(&out, "RPS: ");
		nt_out_paint(&out, verdict_sgr(v), "%s", v ? v : "?");
		nt_out_printf(&out, " (%lld wake-ups; rps_cpus %s%s%s)\n",
			      (long long)json_integer_value(json_object_get(rps, "received_rps")),
			      json_string_value(json_object_get(rps, "cpus")), outside[0] ? "; outside: " : "", outside);
	}
	if (json_integer_value(json_object_get(vs, "not_observed")) > 0)
		nt_out_printf(&out, "not observed: the IRQ did not fire in the window, which shows nothing either way\n");
	/* What its queues' packets (qstats-get) say of a silent IRQ: no
	 * traffic, or traffic the kernel took without it. */
	int quiet = 0;
	json_array_foreach(json_object_get(d, "irqs"), i, e) {
		const char *traffic = json_string_value(json_object_get(e, "traffic"));
		if (traffic && !strcmp(traffic, "none"))
			quiet++;
		else if (traffic)
			nt_out_printf(&out, "IRQ %lld (%s queue %lld): %lld packets on its queues and not one interrupt: "
					    "polled without it (busy polling, deferred or suspended interrupts, "
					    "completions reaped without it)\n",
				      (long long)json_integer_value(json_object_get(e, "irq")),
				      json_string_value(json_object_get(e, "nic")) ?: "-",
				      (long long)json_integer_value(json_object_get(e, "queue")),
				      (long long)json_integer_value(json_object_get(e, "queue_packets")));
	}
	if (quiet)
		nt_out_printf(&out, "no traffic: %d silent IRQ%s whose queues counted no packet\n", quiet, quiet == 1 ? "" : "s");
	nt_cli_reply_free(&r);
	return code;
}
