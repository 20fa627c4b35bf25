/* The commands that talk to a running agent: plan, apply, confirm,
 * rollback, show and history. Each checks its arguments and sends one
 * request through cli/client.c, so every change goes through the agent's
 * journal and none is made from here. */
#include "cli/cli.h"
#include "cli/client.h"

#include <stdio.h>
#include <string.h>

static const char *agent_url(const cli_opts *o)
{
	return o->agent ? o->agent : NT_CLI_DEFAULT_AGENT;
}

int nt_cmd_profile(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	if (nargs != 1) {
		fprintf(stderr, "nettune: %s wants one PROFILE.json\n", cmd);
		return 2;
	}
	if (!strcmp(cmd, "plan"))
		return nt_cli_plan(agent_url(o), args[0]);
	return nt_cli_apply(agent_url(o), args[0], o->confirm_timeout, o->persist);
}

int nt_cmd_txn_id(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	if (nargs != 1) {
		fprintf(stderr, "nettune: %s wants one transaction ID\n", cmd);
		return 2;
	}
	if (!strcmp(cmd, "confirm"))
		return nt_cli_confirm(agent_url(o), args[0]);
	if (!strcmp(cmd, "rollback"))
		return nt_cli_rollback(agent_url(o), args[0], o->force);
	return nt_cli_show(agent_url(o), args[0]);
}

int nt_cmd_history(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	return nt_cli_history(agent_url(o), o->status, o->limit);
}

int nt_cmd_desired(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	const char *sub = nargs > 0 ? args[0] : "show";
	if (!strcmp(sub, "show") && nargs <= 1)
		return nt_cli_desired_show(agent_url(o));
	if (!strcmp(sub, "set") && nargs == 2)
		return nt_cli_desired_set(agent_url(o), args[1]);
	if (!strcmp(sub, "clear") && nargs == 1)
		return nt_cli_desired_clear(agent_url(o));
	fprintf(stderr, "nettune: desired wants 'show', 'set PROFILE.json' or 'clear'\n");
	return 2;
}

int nt_cmd_drift(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	if (nargs != 0) {
		fprintf(stderr, "nettune: drift takes no arguments\n");
		return 2;
	}
	return nt_cli_drift(agent_url(o));
}
