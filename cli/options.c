/* SPDX-License-Identifier: Apache-2.0 */
/* The one table of nettune's options. getopt's long options are built from
 * it, and so are the keys of the configuration file (cli/config.c): every
 * option marked NT_OPT_CONF is a key, spelled with '_' for '-', parsed and
 * range-checked by the same code whether it came from the command line or
 * from a file. A new `serve` option is a new row here and nothing else. */
#include "cli/cli.h"
#include "cli/escape.h"
#include "base/cpuset.h" /* NT_MAX_CPUS */

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const log_formats[] = { "text", "json", NULL };
static const char *const output_formats[] = { "text", "json", NULL };
/* The first is the default: holding the desired state means repairing it. */
/* bench-run --compare: which reader takes COMMAND's figure (cli/metric.h). */
static const char *const metric_readers[] = { "auto", "iperf3", "netperf", "neper", NULL };
static const char *const drift_policies[] = { "repair", "report", NULL };

#define F(field) offsetof(cli_opts, field)

const nt_cli_option nt_cli_options[] = {
	{ "root", NT_OPT_STR, F(root), 0, 0, "a directory", NULL, NT_OPT_CONF },
	{ "json", NT_OPT_FLAG, F(json), 0, 0, NULL, NULL, 0 },
	{ "listen", NT_OPT_STR, F(listen), 0, 0, "ADDR:PORT", NULL, NT_OPT_CONF },
	{ "state-dir", NT_OPT_STR, F(state_dir), 0, 0, "a directory", NULL, NT_OPT_CONF },
	{ "rtt-ms", NT_OPT_LONG, F(rtt_ms), 1, 10000, "a number of milliseconds", NULL,
	  NT_OPT_CONF },
	{ "agent", NT_OPT_STR, F(agent), 0, 0, "a URL", NULL, 0 },
	{ "confirm-timeout", NT_OPT_LONG, F(confirm_timeout), 1, 86400, "seconds", NULL, 0 },
	{ "force", NT_OPT_FLAG, F(force), 0, 0, NULL, NULL, 0 },
	{ "status", NT_OPT_STR, F(status), 0, 0, "a status", NULL, 0 },
	{ "limit", NT_OPT_LONG, F(limit), 1, 500, "a number", NULL, 0 },
	{ "since", NT_OPT_STR, F(since), 0, 0, "a time", NULL, 0 },
	{ "output", NT_OPT_ENUM, F(output), 0, 0, NULL, output_formats, 0 },
	{ "help", NT_OPT_HELP, 0, 0, 0, NULL, NULL, 0 },
	{ "interval-ms", NT_OPT_LONG, F(interval_ms), 10, 60000, "milliseconds", NULL, 0 },
	{ "near", NT_OPT_STR, F(near), 0, 0, "an interface", NULL, 0 },
	{ "cpus", NT_OPT_LONG, F(cpus), 1, NT_MAX_CPUS, "a number of CPUs", NULL, 0 },
	{ "cpus-list", NT_OPT_STR, F(cpus_list), 0, 0, "a CPU list", NULL, 0 },
	{ "fix-profile", NT_OPT_FLAG, F(fix_profile), 0, 0, NULL, NULL, 0 },
	{ "profile", NT_OPT_STR, F(profile), 0, 0, "a file", NULL, 0 },
	{ "report", NT_OPT_STR, F(report), 0, 0, "a file", NULL, 0 },
	{ "config", NT_OPT_STR, F(config), 0, 0, "a file", NULL, 0 },
	{ "check-config", NT_OPT_FLAG, F(check_config), 0, 0, NULL, NULL, 0 },
	{ "tokens", NT_OPT_STR, F(tokens), 0, 0, "a file", NULL, NT_OPT_CONF },
	{ "tls-cert", NT_OPT_STR, F(tls_cert), 0, 0, "a PEM file", NULL, NT_OPT_CONF },
	{ "tls-key", NT_OPT_STR, F(tls_key), 0, 0, "a PEM file", NULL, NT_OPT_CONF },
	{ "tls-client-ca", NT_OPT_STR, F(tls_client_ca), 0, 0, "a PEM file", NULL, NT_OPT_CONF },
	{ "max-body", NT_OPT_LONG, F(max_body), 1024, 64L * 1024 * 1024, "bytes", NULL,
	  NT_OPT_CONF },
	{ "client-timeout", NT_OPT_LONG, F(client_timeout), 1, 3600, "seconds", NULL,
	  NT_OPT_CONF },
	{ "max-connections", NT_OPT_LONG, F(max_connections), 1, 65536, "a number", NULL,
	  NT_OPT_CONF },
	{ "max-per-client", NT_OPT_LONG, F(max_per_client), 1, 65536, "a number", NULL,
	  NT_OPT_CONF },
	{ "log-format", NT_OPT_ENUM, F(log_format), 0, 0, NULL, log_formats, NT_OPT_CONF },
	{ "profiles-dir", NT_OPT_STR, F(profiles_dir), 0, 0, "a directory", NULL, NT_OPT_CONF },
	{ "desired-file", NT_OPT_STR, F(desired_file), 0, 0, "a file", NULL, NT_OPT_CONF },
	{ "drift-policy", NT_OPT_ENUM, F(drift_policy), 0, 0, NULL, drift_policies, NT_OPT_CONF },
	{ "drift-interval", NT_OPT_LONG, F(drift_interval), 1, 86400, "seconds", NULL, NT_OPT_CONF },
	{ "held-files", NT_OPT_LONG, F(held_files), 0, 1L << 20, "a number of files", NULL,
	  NT_OPT_CONF },
	{ "history-keep", NT_OPT_LONG, F(history_keep), 0, 1L << 30, "a number of transactions",
	  NULL, NT_OPT_CONF },
	{ "persist", NT_OPT_FLAG, F(persist), 0, 0, NULL, NULL, 0 },
	{ "nic", NT_OPT_STR, F(nic), 0, 0, "an interface", NULL, 0 },
	{ "name", NT_OPT_STR, F(name), 0, 0, "a profile name", NULL, 0 },
	{ "plan-ttl", NT_OPT_LONG, F(plan_ttl), 1, 86400, "seconds", NULL, NT_OPT_CONF },
	{ "allow-machine-wide", NT_OPT_FLAG, F(allow_machine_wide), 0, 0, NULL, NULL, NT_OPT_CONF },
	{ "metrics-queues", NT_OPT_FLAG, F(metrics_queues), 0, 0, NULL, NULL, NT_OPT_CONF },
	{ "plan", NT_OPT_STR, F(plan_id), 0, 0, "a plan id", NULL, 0 },
	{ "verbose", NT_OPT_FLAG, F(verbose), 0, 0, NULL, NULL, 0 },
	{ "compare", NT_OPT_LONG, F(compare), 2, 1000, "a number of rounds per arm", NULL, 0 },
	{ "baseline", NT_OPT_STR, F(baseline), 0, 0, "a file", NULL, 0 },
	{ "metric", NT_OPT_ENUM, F(metric), 0, 0, NULL, metric_readers, 0 },
	{ "metric-json", NT_OPT_STR, F(metric_json), 0, 0, "a JSON path", NULL, 0 },
	{ "neper-samples", NT_OPT_STR, F(neper_samples), 0, 0, "a file", NULL, 0 },
	{ "also-json", NT_OPT_LIST, F(also_json), 0, 0, "higher|lower:PATH (repeatable)", NULL, 0 },
	{ "also-regex", NT_OPT_LIST, F(also_regex), 0, 0, "higher|lower:NAME:RE (repeatable)", NULL, 0 },
	{ "metric-regex", NT_OPT_STR, F(metric_regex), 0, 0, "a regular expression", NULL, 0 },
	{ "higher-is-better", NT_OPT_FLAG, F(higher_is_better), 0, 0, NULL, NULL, 0 },
	{ "lower-is-better", NT_OPT_FLAG, F(lower_is_better), 0, 0, NULL, NULL, 0 },
	{ "require-gain", NT_OPT_STR, F(require_gain), 0, 0, "a percentage", NULL, 0 },
	{ "require-no-loss", NT_OPT_FLAG, F(require_no_loss), 0, 0, NULL, NULL, 0 },
	{ "loss-margin", NT_OPT_STR, F(loss_margin), 0, 0, "a percentage", NULL, 0 },
	{ "confidence", NT_OPT_STR, F(confidence), 0, 0, "a level such as 0.95 or 95%", NULL, 0 },
	{ "plot", NT_OPT_STR, F(plot), 0, 0, "a file", NULL, 0 },
	{ "seed", NT_OPT_STR, F(seed), 0, 0, "a number from 0 to 2^64-1", NULL, 0 },
	{ "space", NT_OPT_STR, F(space), 0, 0, "a file", NULL, 0 },
	{ "budget", NT_OPT_STR, F(budget), 0, 0, "a duration such as 20m, 90s or 1h30m", NULL, 0 },
	{ "keep", NT_OPT_FLAG, F(keep), 0, 0, NULL, NULL, 0 },
	{ "max-rounds", NT_OPT_LONG, F(max_rounds), 2, 1000, "a number of rounds per arm", NULL, 0 },
	{ "warmup", NT_OPT_FLAG, F(warmup), 0, 0, NULL, NULL, 0 },
	{ "paired", NT_OPT_FLAG, F(paired), 0, 0, NULL, NULL, 0 },
	{ "window", NT_OPT_STR, F(window), 0, 0, "a duration", NULL, 0 },
	{ NULL, 0, 0, 0, 0, NULL, NULL, 0 },
};

const nt_cli_option *nt_cli_option_find(const char *name)
{
	for (const nt_cli_option *opt = nt_cli_options; opt->name; opt++)
		if (!strcmp(opt->name, name))
			return opt;
	return NULL;
}

const nt_cli_option *nt_cli_option_find_key(const char *key)
{
	char name[64];
	size_t i;
	for (i = 0; key[i] && i + 1 < sizeof(name); i++) {
		/* Keys are written with '_': a '-' in a key is not the same
		 * spelling, so it is not accepted either. */
		if (key[i] == '-')
			return NULL;
		name[i] = key[i] == '_' ? '-' : key[i];
	}
	if (key[i])
		return NULL;
	name[i] = '\0';
	const nt_cli_option *opt = nt_cli_option_find(name);
	return opt && (opt->flags & NT_OPT_CONF) ? opt : NULL;
}

void nt_cli_option_key(const nt_cli_option *opt, char *buf, size_t size)
{
	snprintf(buf, size, "%s", opt->name);
	for (char *p = buf; *p; p++)
		if (*p == '-')
			*p = '_';
}

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1", NULL };
	static const char *const no[] = { "no", "false", "off", "0", NULL };
	for (int i = 0; yes[i]; i++)
		if (!strcmp(s, yes[i]))
			return *out = true, 0;
	for (int i = 0; no[i]; i++)
		if (!strcmp(s, no[i]))
			return *out = false, 0;
	return -EINVAL;
}

int nt_cli_option_set(const nt_cli_option *opt, const char *val, cli_opts *o, char *err,
		      size_t errsize)
{
	char *field = (char *)o + opt->off;
	char shown[512]; /* the value as an error quotes it (nt_out_clip) */
	long v;

	switch (opt->kind) {
	case NT_OPT_STR:
		if (!val || !*val) {
			snprintf(err, errsize, "wants %s, not an empty value", opt->what);
			return -EINVAL;
		}
		*(const char **)field = val;
		break;
	case NT_OPT_LONG:
		if (!val || nt_cli_parse_long(val, opt->lo, opt->hi, &v) < 0) {
			snprintf(err, errsize, "wants %s from %ld to %ld, not '%s'",
				 opt->what, opt->lo, opt->hi, nt_out_clip(shown, sizeof(shown), val, NT_OUT_CLIP_DEFAULT));
			return -EINVAL;
		}
		*(long *)field = v;
		break;
	case NT_OPT_FLAG: {
		bool b = true;
		if (val && parse_bool(val, &b) < 0) {
			snprintf(err, errsize, "wants yes or no, not '%s'",
				 nt_out_clip(shown, sizeof(shown), val, NT_OUT_CLIP_DEFAULT));
			return -EINVAL;
		}
		*(bool *)field = b;
		break;
	}
	case NT_OPT_ENUM:
		for (int i = 0; val && opt->choices[i]; i++) {
			if (!strcmp(val, opt->choices[i])) {
				*(int *)field = i;
				goto set;
			}
		}
		{
			size_t n = (size_t)snprintf(err, errsize, "wants");
			for (int i = 0; opt->choices[i] && n < errsize; i++)
				n += (size_t)snprintf(err + n, errsize - n, "%s '%s'",
						      i == 0 ? "" : opt->choices[i + 1] ? "," : " or",
						      opt->choices[i]);
			if (n < errsize)
				snprintf(err + n, errsize - n, ", not '%s'",
					 nt_out_clip(shown, sizeof(shown), val, NT_OUT_CLIP_DEFAULT));
		}
		return -EINVAL;
	case NT_OPT_LIST: {
		nt_cli_list *l = (nt_cli_list *)field;
		if (!val || !*val) {
			snprintf(err, errsize, "wants %s, not an empty value", opt->what);
			return -EINVAL;
		}
		if (l->n >= NT_CLI_LIST_MAX) {
			snprintf(err, errsize, "is given at most %d times", NT_CLI_LIST_MAX);
			return -EINVAL;
		}
		l->v[l->n++] = val;
		break;
	}
	case NT_OPT_HELP:
		return -EINVAL;
	}
set:
	o->set[opt - nt_cli_options] = true;
	return 0;
}

size_t nt_cli_option_size(const nt_cli_option *opt)
{
	switch (opt->kind) {
	case NT_OPT_STR: return sizeof(const char *);
	case NT_OPT_LONG: return sizeof(long);
	case NT_OPT_FLAG: return sizeof(bool);
	case NT_OPT_ENUM: return sizeof(int);
	case NT_OPT_LIST: return sizeof(nt_cli_list);
	case NT_OPT_HELP: break;
	}
	return 0;
}

void nt_cli_options_merge(cli_opts *dst, const cli_opts *src)
{
	for (const nt_cli_option *opt = nt_cli_options; opt->name; opt++) {
		size_t i = (size_t)(opt - nt_cli_options);
		if (dst->set[i] || !src->set[i])
			continue;
		memcpy((char *)dst + opt->off, (const char *)src + opt->off, nt_cli_option_size(opt));
		dst->set[i] = true;
	}
}
