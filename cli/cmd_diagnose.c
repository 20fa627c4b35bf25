/* SPDX-License-Identifier: Apache-2.0 */
/* nettune diagnose: what is misplaced, with the fragment that fixes it.
 *
 * With an agent named (--agent URL, or NETTUNE_AGENT) it asks that agent
 * (GET /v1/diagnostics), so that `diagnose --fix-profile | nettune plan -`
 * plans the fixes of the host the plan goes to, judged as the agent judges
 * them (RX drops over its recent window, drift, the last delivery check).
 * Otherwise it reads the host itself: --root DIR, else this machine. Both
 * --root and --agent is refused: they name two hosts. */
#include "cli/cli.h"
#include "cli/client.h"
#include "cli/cmd_agent.h"
#include "cli/exit.h"
#include "diagnose/diagnose.h"
#include "host/dropwin.h"
#include "host/napi.h"
#include "host/topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_json(json_t *doc)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (s) {
		puts(s);
		free(s);
	}
}

/* The agent named by --agent or NETTUNE_AGENT, or NULL. */
static const char *named_agent(const cli_opts *o)
{
	const char *env = getenv("NETTUNE_AGENT");
	if (o->agent)
		return o->agent;
	return env && *env ? env : NULL;
}

/* S for a shell command line: as it is when it holds only characters no
 * shell treats specially, else in single quotes. */
static void put_word(FILE *f, const char *s)
{
	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "@%+=:,./_-") == strlen(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	fputc('\'', f);
}

/* Whether a ring-below-max finding of DOC was judged on drops since boot
 * (no recent window in its evidence) and found some. */
static bool drops_since_boot(const json_t *doc)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(doc, "findings"), i, f) {
		const json_t *ev = json_object_get(f, "evidence");
		if (!strcmp(json_string_value(json_object_get(f, "id")) ?: "", "ring-below-max") &&
		    !json_object_get(ev, "recent") && json_integer_value(json_object_get(ev, "rx_drops_total")) > 0)
			return true;
	}
	return false;
}

/* The findings for people: each with the profile fragment that fixes it,
 * and the command that plans them all, with the options this one was
 * given (the same host, the same RTT). Read here (LOCAL), drops are
 * counted since boot, which stay after a raised ring stopped them: the
 * agent judges them over its recent window, and the reader is told so. */
static void print_findings(const cli_opts *o, const json_t *doc, bool local)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(doc, "findings"), i, f) {
		printf("%-7s %-22s %-10s %s\n", json_string_value(json_object_get(f, "severity")),
		       json_string_value(json_object_get(f, "id")), json_string_value(json_object_get(f, "subject")),
		       json_string_value(json_object_get(f, "message")));
		/* The profile fragment that fixes it, as a profile takes it. */
		json_t *fix = json_object_get(f, "fix");
		char *fs = json_is_object(fix) && json_object_size(fix) ? json_dumps(fix, JSON_COMPACT) : NULL;
		if (fs)
			printf("        fix: %s\n", fs);
		free(fs);
	}
	if (json_array_size(json_object_get(doc, "findings")) == 0) {
		printf("no findings\n");
		return;
	}
	if (local && drops_since_boot(doc))
		printf("\nring-below-max: drops counted since boot, read here; the agent judges them over its last "
		       "%d to %d minutes, or since the ring last changed (nettune diagnose --agent URL)\n",
		       (int)(NT_DROPWIN_DEFAULT_MS / 60000), (int)(2 * NT_DROPWIN_DEFAULT_MS / 60000));
	printf("\nall the fixes as one profile: nettune diagnose");
	if (o->root) {
		printf(" --root ");
		put_word(stdout, o->root);
	}
	if (o->agent) {
		printf(" --agent ");
		put_word(stdout, o->agent);
	}
	if (o->rtt_ms)
		printf(" --rtt-ms %ld", o->rtt_ms);
	printf(" --fix-profile | nettune plan");
	if (o->agent) {
		printf(" --agent ");
		put_word(stdout, o->agent);
	}
	printf(" -\n");
}

static int diagnose_agent(const cli_opts *o)
{
	char path[64] = "/v1/diagnostics";
	nt_cli_reply r = { 0 };
	bool render;
	if (o->rtt_ms)
		snprintf(path, sizeof(path), "/v1/diagnostics?rtt_ms=%ld", o->rtt_ms);
	/* --json: the agent's body as it came. --fix-profile: a profile made
	 * of its findings' fixes, the interface names as the agent sent them.
	 * Text: its strings escaped for the terminal. */
	cli_opts q = *o;
	q.json = o->json && !o->fix_profile;
	int code = o->fix_profile || q.json ?
			   nt_cli_exchange_raw(&q, "GET", path, NULL, "diagnosing", "diagnostics", &r, &render) :
			   nt_cli_exchange_as(&q, "GET", path, NULL, "diagnosing", "diagnostics", &r, &render);
	if (code == NT_EXIT_OK && render) {
		if (o->fix_profile) {
			json_t *p = nt_diagnose_fix_profile(r.doc, "diagnose-fixes");
			if (p)
				print_json(p);
			else
				code = NT_EXIT_ERROR;
			json_decref(p);
		} else {
			print_findings(o, r.doc, false);
		}
	}
	nt_cli_reply_free(&r);
	return code;
}

int nt_cmd_diagnose(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	nt_topology *t;
	if (nargs) {
		fprintf(stderr, "nettune: diagnose takes no arguments, not '%s'\n", args[0]);
		return NT_EXIT_USAGE;
	}
	if (o->root && o->agent) {
		fprintf(stderr, "nettune: diagnose takes --root DIR (read that tree here) or --agent URL (ask that "
				"agent), not both\n");
		return NT_EXIT_USAGE;
	}
	/* An explicit --root reads the tree, whatever NETTUNE_AGENT says. */
	if (!o->root && named_agent(o))
		return diagnose_agent(o);
	if (nt_cli_read_host(o, &t) < 0)
		return NT_EXIT_ERROR;
	nt_diag_options dopt = { .rtt_ms = o->rtt_ms ? o->rtt_ms : 10 };
	nt_host_napi napi;
	if (nt_host_napi_read(t, NULL, 0, &napi) == 0)
		dopt.napi = &napi;
	json_t *doc = nt_diagnose(t, &dopt);
	nt_host_napi_free(&napi);
	nt_topology_free(t);
	if (!doc) {
		fprintf(stderr, "nettune: out of memory\n");
		return NT_EXIT_ERROR;
	}
	if (o->fix_profile) {
		json_t *p = nt_diagnose_fix_profile(doc, "diagnose-fixes");
		if (p)
			print_json(p);
		json_decref(p);
	} else if (o->json) {
		print_json(doc);
	} else {
		print_findings(o, doc, true);
	}
	json_decref(doc);
	return NT_EXIT_OK;
}
