/* SPDX-License-Identifier: Apache-2.0 */
/* The commands that talk to a running agent: plan, apply, try, confirm,
 * rollback, show, history (desired, drift and verify: cli/cmd_state.c). Each checks its arguments and sends one
 * request (history with --since may page) through cli/client.c, so every
 * change goes through the agent's journal and none is made from here.
 *
 * try applies with a confirm deadline and asks at the terminal.
 *
 * By default the answer is shown for people (cli/txn_view.c); with --json
 * (-o json) the agent's body is written to stdout byte for byte, whatever
 * its status, so scripts read exactly what the API documents. The exit
 * code (cli/exit.h) says what happened either way. */
#include "cli/cli.h"
#include "cli/client.h"
#include "cli/cmd_agent.h"
#include "cli/escape.h"
#include "cli/exit.h"
#include "cli/output.h"
#include "cli/txn_view.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *agent_url(const cli_opts *o)
{
	const char *env = getenv("NETTUNE_AGENT");
	if (o->agent)
		return o->agent;
	return env && *env ? env : NT_CLI_DEFAULT_AGENT;
}

static void unreachable(const char *agent, const char *why)
{
	nt_out e;
	nt_out_init(&e, stderr);
	nt_out_paint(&e, NT_SGR_BOLD, "nettune: ");
	nt_out_paint(&e, NT_SGR_RED, "cannot reach the agent at %s", agent);
	fprintf(stderr, ": %s\n", why);
	fprintf(stderr, "  start one with 'nettune serve' (or 'systemctl start nettune'),\n"
			"  or name another with --agent URL or NETTUNE_AGENT\n");
}

int nt_cli_exchange_raw(const cli_opts *o, const char *method, const char *path, const char *body,
			const char *waiting, const char *kind, nt_cli_reply *r, bool *render)
{
	const char *agent = agent_url(o);
	*render = false;
	int rc = nt_cli_request(agent, method, path, body, waiting, r);
	if (rc < 0) {
		if (rc == -ENOMEM) {
			fprintf(stderr, "nettune: out of memory\n");
			return NT_EXIT_ERROR;
		}
		if (rc == -ELIBACC || rc == -EINVAL || rc == -EFBIG) {
			fprintf(stderr, "nettune: %s\n", r->error);
			return NT_EXIT_ERROR;
		}
		unreachable(agent, r->error);
		return NT_EXIT_UNREACHABLE;
	}
	int code = nt_exit_for_http(r->status);
	if (o->json) {
		fwrite(r->body, 1, r->len, stdout);
		return code;
	}
	if (code != NT_EXIT_OK) {
		nt_out e;
		nt_out_init(&e, stderr);
		if (nt_out_escape_doc(r->doc) < 0) {
			fprintf(stderr, "nettune: out of memory\n");
			return NT_EXIT_ERROR;
		}
		nt_out_problem(&e, r->status, r->doc, r->body);
		return code;
	}
	if (r->status == 204)
		return NT_EXIT_OK; /* done, and nothing to show (a DELETE) */
	if (!json_is_object(r->doc)) {
		fprintf(stderr, "nettune: the agent at %s answered something that is not a JSON object\n", agent);
		return NT_EXIT_ERROR;
	}
	const char *bad = kind ? nt_view_malformed(r->doc, kind) : NULL;
	if (bad) {
		fprintf(stderr, "nettune: the agent at %s answered a malformed document (%s)\n", agent, bad);
		return NT_EXIT_ERROR;
	}
	*render = true;
	return NT_EXIT_OK;
}

/* nt_cli_exchange_raw, with the answer's strings made safe to print
 * (cli/escape.h) when it is to be shown for people. */
int nt_cli_exchange_as(const cli_opts *o, const char *method, const char *path, const char *body,
		       const char *waiting, const char *kind, nt_cli_reply *r, bool *render)
{
	int code = nt_cli_exchange_raw(o, method, path, body, waiting, kind, r, render);
	if (*render && nt_out_escape_doc(r->doc) < 0) {
		fprintf(stderr, "nettune: out of memory\n");
		*render = false;
		return NT_EXIT_ERROR;
	}
	return code;
}

/* The exit code of an answer that is a transaction (apply, confirm,
 * rollback): by how it ended. */
static int txn_code(int code, const nt_cli_reply *r)
{
	if (code != NT_EXIT_OK || !r->doc)
		return code;
	return nt_exit_for_txn_status(json_string_value(json_object_get(r->doc, "status")));
}

/* PATH "-" is stdin, so `nettune diagnose --fix-profile | nettune plan -`
 * works. */
static json_t *load_profile(const char *path)
{
	json_error_t err;
	bool in = !strcmp(path, "-");
	json_t *p = in ? json_loadf(stdin, JSON_REJECT_DUPLICATES, &err)
		       : json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	if (!p && err.line < 0 && !in) {
		/* jansson's "unable to open X: why" at line -1: the file could not
		 * be read at all, which is not a JSON error. */
		const char *why = strstr(err.text, ": ");
		fprintf(stderr, "nettune: cannot read %s: %s\n", path, why ? why + 2 : err.text);
	} else if (!p) {
		fprintf(stderr, "nettune: %s: line %d: %s\n", in ? "standard input" : path, err.line, err.text);
	}
	else if (!json_is_object(p)) {
		fprintf(stderr, "nettune: %s: a profile is a JSON object\n", path);
		json_decref(p);
		p = NULL;
	}
	return p;
}

/* GET /v1/nics, for a view of DOC: to colour IRQ CPUs off their NIC's node
 * on a terminal, and to name a bond's ports in DOC's grouped warnings
 * (cli/warn_group.h). NULL when neither needs it, or it cannot be read. */
static json_t *nics_for_view(const cli_opts *o, const nt_out *out, const json_t *doc)
{
	nt_cli_reply r;
	json_t *nics = NULL;
	bool group = !o->verbose && json_array_size(json_object_get(doc, "warnings")) >= 2;
	if (o->json || !(out->color || group))
		return NULL;
	if (nt_cli_request(agent_url(o), "GET", "/v1/nics", NULL, NULL, &r) == 0 && r.status == 200) {
		nics = r.doc;
		r.doc = NULL;
	}
	nt_cli_reply_free(&r);
	return nics;
}

/* The options that make "nettune confirm ID" reach the same agent. */
static void agent_hint(const cli_opts *o, char *buf, size_t size)
{
	const char *a = agent_url(o);
	if (strcmp(a, NT_CLI_DEFAULT_AGENT) && !(getenv("NETTUNE_AGENT") && !o->agent))
		snprintf(buf, size, " --agent %s", a);
	else
		buf[0] = '\0';
}

/* BODY (taken, may be NULL after a failed pack) as request text, or NULL
 * with the message said. The caller frees the text. */
char *nt_cli_body_text(json_t *body)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (!text)
		fprintf(stderr, "nettune: out of memory\n");
	return text;
}

const char *nt_cli_agent_url(const cli_opts *o)
{
	return agent_url(o);
}

int nt_cli_exchange(const cli_opts *o, const char *method, const char *path, const char *body,
		    const char *waiting, nt_cli_reply *r, bool *render)
{
	return nt_cli_exchange_as(o, method, path, body, waiting, NULL, r, render);
}

json_t *nt_cli_load_profile(const char *path)
{
	return load_profile(path);
}

/* The profile CMD names: PROFILE.json as its one argument, or --name NAME
 * (nt_cli_named_profile). Into *PROFILE (a document to send) or *NAME (a
 * profile the agent stores); returns 0 or the exit code, said. */
static int profile_arg(const char *cmd, const cli_opts *o, int nargs, char **args, json_t **profile,
		       const char **name)
{
	*profile = NULL;
	*name = NULL;
	if (o->name && nargs == 0)
		return nt_cli_named_profile(o, o->name, profile, name);
	if (nargs != 1 || o->name) {
		fprintf(stderr, "nettune: %s wants one PROFILE.json or --name NAME%s\n", cmd,
			!strcmp(cmd, "apply") ? ", or --plan ID (the id 'nettune plan' printed)" : "");
		return NT_EXIT_USAGE;
	}
	*profile = load_profile(args[0]);
	return *profile ? 0 : NT_EXIT_USAGE;
}

/* Where an apply or rollback is sent: for people, the lean answer (the
 * failed steps and the counts, all the view shows); with --json the whole
 * document, as the API gives it by default. */
static const char *txn_path(const cli_opts *o, const char *path, char *buf, size_t size)
{
	if (o->json)
		return path;
	snprintf(buf, size, "%s?steps=failed", path);
	return buf;
}

/* Keep a plan of PROFILE (taken) at the agent: its id into ID. Returns 0 or
 * the exit code, the reason said. */
static int plan_id_of(const cli_opts *o, json_t *profile, char *id, size_t size)
{
	nt_cli_reply r = { 0 };
	bool render;
	cli_opts quiet = *o;
	quiet.json = false;
	char *text = nt_cli_body_text(profile);
	if (!text)
		return NT_EXIT_ERROR;
	int code = nt_cli_exchange_as(&quiet, "POST", "/v1/plan", text, "planning", "plan", &r, &render);
	free(text);
	const char *pid = render ? json_string_value(json_object_get(r.doc, "id")) : NULL;
	if (render && !pid) {
		fprintf(stderr, "nettune: the agent's plan has no id (an agent older than this command?)\n");
		code = NT_EXIT_ERROR;
	}
	if (pid)
		snprintf(id, size, "%s", pid);
	nt_cli_reply_free(&r);
	return pid ? 0 : code;
}

int nt_cmd_profile(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	nt_cli_reply r = { 0 };
	bool render;
	char hint[1100], pbuf[64];
	int code;
	bool plan = !strcmp(cmd, "plan");
	json_t *p = NULL;

	const char *stored = NULL;
	if (!plan && o->plan_id) {
		if (nargs != 0 || o->name) {
			fprintf(stderr, "nettune: apply --plan ID takes no PROFILE.json or --name: the plan "
					"names its profile\n");
			return NT_EXIT_USAGE;
		}
	} else if ((code = profile_arg(cmd, o, nargs, args, &p, &stored))) {
		return code;
	}
	json_t *body = stored ? json_pack("{s:s}", "profile_name", stored) : p;
	if (!plan) {
		if (o->plan_id)
			body = json_pack("{s:s}", "plan_id", o->plan_id);
		else if (!stored)
			body = json_pack("{s:o}", "profile", p);
		if (body && o->confirm_timeout > 0)
			json_object_set_new(body, "confirm_timeout_s", json_integer(o->confirm_timeout));
		if (body && o->persist)
			json_object_set_new(body, "persist", json_true());
	}
	char *text = nt_cli_body_text(body);
	if (!text)
		return NT_EXIT_ERROR;
	nt_out out;
	nt_out_init(&out, stdout);
	if (plan) {
		code = nt_cli_exchange_as(o, "POST", "/v1/plan", text, "planning", "plan", &r, &render);
		if (render) {
			json_t *nics = nics_for_view(o, &out, r.doc);
			nt_view_plan(&out, r.doc, nics, o->verbose);
			json_decref(nics);
		}
	} else {
		code = txn_code(nt_cli_exchange_as(o, "POST", txn_path(o, "/v1/transactions", pbuf, sizeof(pbuf)), text,
					 "applying", "txn", &r, &render),
				&r);
		agent_hint(o, hint, sizeof(hint));
		if (render) {
			json_t *nics = nics_for_view(o, &out, r.doc);
			nt_view_outcome(&out, r.doc, hint, nics, o->verbose);
			json_decref(nics);
		}
	}
	free(text);
	nt_cli_reply_free(&r);
	return code;
}

static int fetch_txn(const cli_opts *o, long long id, json_t **doc);

/* After a rollback of ID: when ID is the transaction that set the desired
 * state, that state still holds (a rollback does not clear it), which the
 * person rolling back needs to hear. The rollback is a client's own
 * transaction, so the drift watcher reports each target it changed as
 * overridden and repairs none of them (docs/transactions.md, "Who wins"),
 * under either policy. */
static void desired_note(const cli_opts *o, long long id, const char *hint)
{
	nt_cli_reply r = { 0 };
	if (nt_cli_request(agent_url(o), "GET", "/v1/desired", NULL, NULL, &r) == 0 && r.status == 200 &&
	    json_integer_value(json_object_get(r.doc, "txn_id")) == id) {
		const char *name = json_string_value(json_object_get(r.doc, "profile_name"));
		if (!name)
			name = json_string_value(json_object_get(json_object_get(r.doc, "profile"), "name"));
		printf("note: transaction %lld made profile %s the desired state, which still holds:\n"
		       "  the targets this rollback changed are reported overridden ('nettune drift%s') and not\n"
		       "  repaired; 'nettune desired clear%s' stops holding it, 'nettune apply --persist' holds a\n"
		       "  profile again\n",
		       id, name ? name : "?", hint, hint);
	}
	nt_cli_reply_free(&r);
}

static int valid_id(const char *id)
{
	long v;
	return nt_cli_parse_long(id, 1, 999999999999L, &v) == 0;
}

int nt_cmd_txn_id(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	nt_cli_reply r = { 0 };
	char path[256], hint[1100];
	bool render;
	int code;

	if (nargs != 1) {
		fprintf(stderr, "nettune: %s wants one transaction ID\n", cmd);
		return NT_EXIT_USAGE;
	}
	if (!valid_id(args[0])) {
		fprintf(stderr, "nettune: '%s' is not a transaction id (a number, as history shows)\n", args[0]);
		return NT_EXIT_USAGE;
	}
	nt_out out;
	nt_out_init(&out, stdout);
	agent_hint(o, hint, sizeof(hint));
	if (!strcmp(cmd, "confirm")) {
		snprintf(path, sizeof(path), "/v1/transactions/%s/confirm", args[0]);
		code = txn_code(nt_cli_exchange_as(o, "POST", path, "{}", "confirming", "txn", &r, &render), &r);
		if (render)
			nt_view_outcome_later(&out, r.doc, hint);
	} else if (!strcmp(cmd, "rollback")) {
		snprintf(path, sizeof(path), "/v1/transactions/%s/rollback%s", args[0], o->json ? "" : "?steps=failed");
		code = txn_code(nt_cli_exchange_as(o, "POST", path, o->force ? "{\"force\":true}" : "{}", "rolling back", "txn", &r,
					 &render),
				&r);
		/* A transaction waiting for confirmation is reverted in place (200,
		 * the same id, "reverted"): what was asked, so exit 0. */
		bool in_place = r.status == 200 && r.doc &&
				json_integer_value(json_object_get(r.doc, "id")) == atoll(args[0]) &&
				!strcmp(json_string_value(json_object_get(r.doc, "status")) ?: "", "reverted");
		if (in_place)
			code = NT_EXIT_OK;
		if (render && in_place) {
			size_t i, put = 0;
			json_t *s;
			const char *k;
			/* The lean answer (?steps=failed) counts them in step_counts. */
			json_object_foreach(json_object_get(json_object_get(r.doc, "step_counts"), "reverted"), k, s)
				put += (size_t)json_integer_value(s);
			json_array_foreach(json_object_get(r.doc, "steps"), i, s)
				put += !strcmp(json_string_value(json_object_get(s, "result")) ?: "", "reverted");
			nt_out_printf(&out, "transaction %s: reverted before its confirm deadline, %zu step%s put back\n",
				      args[0], put, put == 1 ? "" : "s");
		} else if (render) {
			json_t *nics = nics_for_view(o, &out, r.doc);
			nt_view_outcome(&out, r.doc, hint, nics, o->verbose);
			json_decref(nics);
		}
		if (render && code == NT_EXIT_OK)
			desired_note(o, atoll(args[0]), hint);
	} else {
		snprintf(path, sizeof(path), "/v1/transactions/%s", args[0]);
		code = nt_cli_exchange_as(o, "GET", path, NULL, NULL, "txn", &r, &render);
		if (render) {
			json_t *nics = nics_for_view(o, &out, r.doc);
			nt_view_txn(&out, r.doc, nics, o->verbose);
			json_decref(nics);
		}
	}
	nt_cli_reply_free(&r);
	return code;
}

/* History since a time: the agent lists newest first, so pages are read
 * until a transaction older than SINCE_MS; LIMIT of the matching ones are
 * kept and all of them counted. Returns the exit code; *DOC a list in the
 * API's shape. */
static int history_since(const cli_opts *o, const char *status, long limit, long long since_ms, json_t **doc)
{
	enum { PAGE = 500 };
	json_t *keep = json_array();
	long long matched = 0;
	char path[256];
	bool render, older = false;
	int code = NT_EXIT_OK;
	cli_opts raw = *o;
	raw.json = false; /* pages are read here, not printed */

	*doc = NULL;
	for (long offset = 0; keep && !older; offset += PAGE) {
		nt_cli_reply r = { 0 };
		snprintf(path, sizeof(path), "/v1/transactions?limit=%d&offset=%ld%s%s", PAGE, offset,
			 status ? "&status=" : "", status ? status : "");
		code = nt_cli_exchange_raw(&raw, "GET", path, NULL, "reading history", "history", &r, &render);
		if (!render) {
			nt_cli_reply_free(&r);
			json_decref(keep);
			return code;
		}
		json_t *list = json_object_get(r.doc, "transactions");
		size_t i;
		json_t *x;
		json_array_foreach(list, i, x) {
			long long created = nt_out_parse_time_ms(json_string_value(json_object_get(x, "created")));
			if (created >= 0 && created < since_ms) {
				older = true;
				break;
			}
			if (matched++ < limit)
				json_array_append(keep, x);
		}
		if (json_array_size(list) < PAGE)
			older = true;
		nt_cli_reply_free(&r);
	}
	if (!keep)
		return NT_EXIT_ERROR;
	*doc = json_pack("{s:o,s:I,s:i,s:i}", "transactions", keep, "total", (json_int_t)matched, "limit",
			 (int)limit, "offset", 0);
	return *doc ? code : NT_EXIT_ERROR;
}

int nt_cmd_history(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	char path[256];
	long limit = o->limit > 0 ? o->limit : 20;
	nt_cli_reply r = { 0 };
	bool render;
	int code;

	if (nargs) {
		fprintf(stderr, "nettune: history takes no arguments (--status S, --limit N, --since WHEN)\n");
		return NT_EXIT_USAGE;
	}
	if (o->status)
		for (const char *p = o->status; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || *p == '_')) {
				fprintf(stderr, "nettune: --status wants a status such as applied or rolled_back\n");
				return NT_EXIT_USAGE;
			}
	nt_out out;
	nt_out_init(&out, stdout);
	if (o->since) {
		long long since_ms;
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		if (nt_cli_parse_since(o->since, (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000, &since_ms) < 0) {
			fprintf(stderr, "nettune: --since wants a time back from now (30m, 12h, 7d) or a UTC date "
					"and time (2026-11-30, 2026-11-30T16:00), not '%s'\n", o->since);
			return NT_EXIT_USAGE;
		}
		json_t *doc;
		code = history_since(o, o->status, limit, since_ms, &doc);
		if (doc && o->json) {
			/* Not a body the agent sent (it has no such filter): the same
			 * shape, holding only the transactions since then. */
			char *s = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
			if (s)
				printf("%s\n", s);
			free(s);
		} else if (doc && nt_out_escape_doc(doc) == 0) {
			nt_view_history(&out, json_object_get(doc, "transactions"),
					json_integer_value(json_object_get(doc, "total")));
		}
		json_decref(doc);
		return code;
	}
	snprintf(path, sizeof(path), "/v1/transactions?limit=%ld%s%s", limit, o->status ? "&status=" : "",
		 o->status ? o->status : "");
	code = nt_cli_exchange_as(o, "GET", path, NULL, NULL, "history", &r, &render);
	if (render)
		nt_view_history(&out, json_object_get(r.doc, "transactions"),
				json_integer_value(json_object_get(r.doc, "total")));
	nt_cli_reply_free(&r);
	return code;
}

/* GET the transaction ID into *DOC (caller decrefs). Returns 0 or the exit
 * code, its reason printed. */
static int fetch_txn(const cli_opts *o, long long id, json_t **doc)
{
	nt_cli_reply r = { 0 };
	char path[64];
	bool render;
	cli_opts quiet = *o;
	quiet.json = false;
	snprintf(path, sizeof(path), "/v1/transactions/%lld", id);
	int code = nt_cli_exchange_as(&quiet, "GET", path, NULL, NULL, "txn", &r, &render);
	*doc = render ? r.doc : NULL;
	r.doc = NULL;
	nt_cli_reply_free(&r);
	return render ? 0 : code;
}

/* Set by SIGINT while try counts down. A signal handler can only reach
 * static storage; nothing else uses it. */
static volatile sig_atomic_t try_interrupted;

static void on_sigint(int sig)
{
	try_interrupted = 1;
}

/* try: apply with a confirm deadline and ask the person at the terminal to
 * keep it, counting down on stderr, as `netplan try` does. If the change
 * cut them off (a NIC reset, a wrong affinity on the management NIC),
 * nobody presses ENTER and the agent puts everything back by itself at the
 * deadline; this command then waits for that and shows it. */
int nt_cmd_try(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	nt_cli_reply r = { 0 };
	bool render;
	char path[96], hint[1100];
	int code;

	if (!isatty(STDIN_FILENO) || !isatty(STDERR_FILENO) || o->json) {
		fprintf(stderr, "nettune: try asks at a terminal; without one, use "
				"apply --confirm-timeout S and confirm ID\n");
		return NT_EXIT_USAGE;
	}
	json_t *p;
	const char *stored;
	if ((code = profile_arg(cmd, o, nargs, args, &p, &stored)))
		return code;
	long timeout = o->confirm_timeout > 0 ? o->confirm_timeout : 120;
	/* Planned, then applied by the plan's id: the agent reads the host
	 * once, and what it applies is what it planned. */
	char pid[NT_CLI_PLAN_ID_MAX];
	json_t *pbody = stored ? json_pack("{s:s}", "profile_name", stored) : p;
	if ((code = plan_id_of(o, pbody, pid, sizeof(pid))) != 0)
		return code;
	json_t *body = json_pack("{s:s,s:i}", "plan_id", pid, "confirm_timeout_s", (int)timeout);
	char *text = nt_cli_body_text(body);
	if (!text)
		return NT_EXIT_ERROR;
	nt_out out;
	nt_out_init(&out, stdout);
	agent_hint(o, hint, sizeof(hint));
	code = txn_code(nt_cli_exchange_as(o, "POST", "/v1/transactions?steps=failed", text, "applying", "txn", &r, &render), &r);
	free(text);
	if (!render) {
		nt_cli_reply_free(&r);
		return code;
	}
	json_t *nics = nics_for_view(o, &out, r.doc);
	nt_view_outcome(&out, r.doc, hint, nics, o->verbose);
	json_decref(nics);
	const char *status = json_string_value(json_object_get(r.doc, "status"));
	long long id = json_integer_value(json_object_get(r.doc, "id"));
	long long deadline = json_integer_value(json_object_get(r.doc, "confirm_deadline_ms"));
	if (!status || strcmp(status, "pending_confirm")) {
		nt_cli_reply_free(&r);
		return code;
	}
	nt_cli_reply_free(&r);
	fflush(stdout);

	/* The countdown, by the agent's clock as far as the deadline goes:
	 * it sent the deadline in wall-clock ms. Ctrl-C ends it with a word on
	 * what happens next rather than silently: the agent still reverts at
	 * the deadline unless someone confirms. */
	bool confirmed = false;
	long last = -1;
	struct sigaction sa = { .sa_handler = on_sigint }, old_sa;
	sigemptyset(&sa.sa_mask);
	try_interrupted = 0;
	sigaction(SIGINT, &sa, &old_sa);
	for (;;) {
		if (try_interrupted)
			break;
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		long long left = deadline - ((long long)now.tv_sec * 1000 + now.tv_nsec / 1000000);
		if (left <= 0)
			break;
		if (left / 1000 != last) {
			last = (long)(left / 1000);
			fprintf(stderr, "\rkeep these changes? press ENTER to confirm; they revert in %3ld s ",
				last + 1);
			fflush(stderr);
		}
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		int n = poll(&pfd, 1, left < 250 ? (int)left : 250);
		if (n > 0) {
			char line[256];
			if (!fgets(line, sizeof(line), stdin))
				break; /* end of input: nobody will confirm */
			confirmed = true;
			break;
		}
	}
	sigaction(SIGINT, &old_sa, NULL);
	fputc('\n', stderr);
	if (try_interrupted) {
		char when[64];
		time_t sec = (time_t)(deadline / 1000);
		struct tm tm;
		gmtime_r(&sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
		fprintf(stderr, "nettune: interrupted, not confirmed: the agent puts transaction %lld back at %s\n"
				"  unless 'nettune confirm %lld%s' comes first\n", id, when, id, hint);
		return NT_EXIT_INTERRUPTED;
	}
	if (confirmed) {
		snprintf(path, sizeof(path), "/v1/transactions/%lld/confirm", id);
		code = txn_code(nt_cli_exchange_as(o, "POST", path, "{}", "confirming", "txn", &r, &render), &r);
		if (render)
			nt_view_outcome_later(&out, r.doc, hint);
		nt_cli_reply_free(&r);
		return code;
	}
	/* Not confirmed: the agent reverts at the deadline; wait for it (up to
	 * a minute, the revert itself takes as long as the apply did). */
	nt_progress prog;
	nt_progress_begin(&prog, "not confirmed: the agent is putting it back");
	json_t *doc = NULL;
	for (int i = 0; i < 240; i++) {
		json_decref(doc);
		code = fetch_txn(o, id, &doc);
		if (code)
			break;
		const char *st = json_string_value(json_object_get(doc, "status"));
		if (st && strcmp(st, "pending_confirm"))
			break;
		struct timespec ts = { 0, 250 * 1000000L };
		nanosleep(&ts, NULL);
		nt_progress_tick(&prog);
	}
	nt_progress_end(&prog);
	if (code) {
		json_decref(doc);
		return code;
	}
	nt_view_outcome_later(&out, doc, hint);
	const char *final = json_string_value(json_object_get(doc, "status"));
	code = nt_exit_for_txn_status(final);
	if (final && !strcmp(final, "pending_confirm")) {
		fprintf(stderr, "nettune: transaction %lld is still pending after its deadline\n", id);
		code = NT_EXIT_ERROR;
	}
	json_decref(doc);
	return code;
}

/* "set 2026-11-30 16:00 by fleet (10.0.0.1), from transaction 12". */
