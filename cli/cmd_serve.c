/* nettune serve: the options made into the agent's and the server's
 * configuration, the log sink, signal handling, and the order things start
 * and stop in. */
#include "agent/agent.h"
#include "api/server.h"
#include "cli/cli.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int split_listen(const char *listen, nt_server_config *cfg)
{
	/* "ADDR:PORT", "[v6]:PORT" or ":PORT". */
	const char *colon = strrchr(listen, ':');
	long port;
	if (!colon || nt_cli_parse_long(colon + 1, 0, 65535, &port) < 0)
		return -EINVAL;
	const char *a = listen;
	size_t al = (size_t)(colon - listen);
	if (al >= 2 && a[0] == '[' && a[al - 1] == ']') {
		a++;
		al -= 2;
	}
	if (al == 0) {
		a = "127.0.0.1";
		al = strlen(a);
	}
	if (al >= sizeof(cfg->listen_addr))
		return -EINVAL;
	memcpy(cfg->listen_addr, a, al);
	cfg->listen_addr[al] = '\0';
	cfg->port = (int)port;
	return 0;
}

/* The serve log sink: one line per event on stderr, each written with one
 * stdio call so lines from concurrent requests never interleave. JSON: the
 * event with a "ts" added. Text: "TS EVENT key=value ...", strings quoted
 * when they hold spaces or quotes. */
static void log_event(void *ud, const json_t *ev)
{
	bool as_json = *(const bool *)ud;
	struct timespec ts;
	struct tm tm;
	char when[40];
	char *line = NULL;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(when, sizeof(when), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
	if (as_json) {
		json_t *copy = json_copy((json_t *)ev);
		if (!copy)
			return;
		json_object_set_new(copy, "ts", json_string(when));
		line = json_dumps(copy, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(9));
		json_decref(copy);
		if (line)
			fprintf(stderr, "%s\n", line);
		free(line);
		return;
	}
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);
	if (!f)
		return;
	fprintf(f, "%s %s", when, json_string_value(json_object_get(ev, "event")));
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)ev, key, val) {
		if (!strcmp(key, "event"))
			continue;
		if (json_is_string(val)) {
			const char *v = json_string_value(val);
			bool quote = !*v || strpbrk(v, " \"\\=\t\n") != NULL;
			for (const char *p = v; !quote && *p; p++)
				quote = (unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f;
			if (quote) {
				char *enc = json_dumps(val, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
				fprintf(f, " %s=%s", key, enc ? enc : "\"?\"");
				free(enc);
			} else {
				fprintf(f, " %s=%s", key, v);
			}
		} else if (json_is_real(val)) {
			fprintf(f, " %s=%.3f", key, json_real_value(val));
		} else {
			char *enc = json_dumps(val, JSON_ENCODE_ANY | JSON_COMPACT);
			fprintf(f, " %s=%s", key, enc ? enc : "?");
			free(enc);
		}
	}
	if (fclose(f) == 0 && line)
		fprintf(stderr, "%s\n", line);
	free(line);
}

static int copy_path(char *dst, size_t size, const char *src, const char *opt)
{
	if (!src)
		return 0;
	if (snprintf(dst, size, "%s", src) >= (int)size) {
		fprintf(stderr, "nettune: %s: path too long\n", opt);
		return -1;
	}
	return 0;
}

/* A database that cannot be opened does not stop the agent (reads and
 * plans still work), so it is said once at start, through the log, where
 * an operator looks when applies answer 503. */
static void report_store(nt_agent *agent, nt_log_fn log, void *log_ud)
{
	const char *why = nt_agent_store_error(agent);
	if (!why)
		return;
	json_t *ev = json_pack("{s:s, s:s, s:s, s:s}", "event", "store_unavailable", "state_dir",
			       nt_agent_cfg(agent)->state_dir, "error", why, "effect",
			       "transactions are refused until the database can be opened");
	if (ev)
		log(log_ud, ev);
	json_decref(ev);
}

int nt_cmd_serve(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	nt_server_config cfg;
	nt_agent_config acfg;
	struct nt_server *srv = NULL;
	nt_agent *agent = NULL;
	char err[512] = "";
	int r;

	memset(&cfg, 0, sizeof(cfg));
	memset(&acfg, 0, sizeof(acfg));
	if (split_listen(o->listen ? o->listen : "127.0.0.1:8470", &cfg) < 0) {
		fprintf(stderr, "nettune: --listen wants ADDR:PORT (e.g. 127.0.0.1:8470), not '%s'\n", o->listen);
		return 2;
	}
	snprintf(acfg.root, sizeof(acfg.root), "%s", o->root ? o->root : "/");
	snprintf(acfg.state_dir, sizeof(acfg.state_dir), "%s", o->state_dir ? o->state_dir : "/var/lib/nettune");
	cfg.rtt_ms = o->rtt_ms ? o->rtt_ms : 10;
	if (copy_path(cfg.tokens_path, sizeof(cfg.tokens_path), o->tokens, "--tokens") < 0 ||
	    copy_path(cfg.tls_cert, sizeof(cfg.tls_cert), o->tls_cert, "--tls-cert") < 0 ||
	    copy_path(cfg.tls_key, sizeof(cfg.tls_key), o->tls_key, "--tls-key") < 0 ||
	    copy_path(cfg.tls_client_ca, sizeof(cfg.tls_client_ca), o->tls_client_ca,
		      "--tls-client-ca") < 0)
		return 2;
	cfg.max_body = (size_t)o->max_body;
	cfg.client_timeout_s = (unsigned)o->client_timeout;
	cfg.max_connections = (unsigned)o->max_connections;
	acfg.drift.policy = o->drift_policy ? (nt_drift_policy)nt_drift_policy_parse(o->drift_policy)
					    : NT_DRIFT_REPAIR;
	acfg.drift.interval_ms = (int)(o->drift_interval ? o->drift_interval : 30) * 1000;
	static bool log_json;
	log_json = o->log_json;
	acfg.log = log_event;
	acfg.log_ud = &log_json;

	/* SIGTERM and SIGINT are blocked before any thread exists (the
	 * engine's confirmation timer, the server's workers), so every thread
	 * inherits the mask and only sigwait below takes them: a signal
	 * handled by another thread would leave the main thread waiting
	 * forever. */
	sigset_t stop_set;
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGTERM);
	sigaddset(&stop_set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop_set, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* The server's configuration first: one that will be refused (an
	 * open API off loopback, a bad token file) is refused before the
	 * agent opens the database or crash recovery touches the host. The
	 * agent is open, recovered, before the server listens, so no request
	 * ever sees a half-made transaction. */
	if ((r = nt_server_new(&cfg, &srv, err, sizeof(err))) < 0 ||
	    (r = nt_agent_open(&acfg, &agent, err, sizeof(err))) < 0)
		goto fail;
	report_store(agent, acfg.log, acfg.log_ud);
	if ((r = nt_server_start(srv, agent, err, sizeof(err))) < 0)
		goto fail;
	bool v6 = strchr(cfg.listen_addr, ':') != NULL;
	printf("listening on %s://%s%s%s:%d\n", cfg.tls_cert[0] ? "https" : "http", v6 ? "[" : "",
	       cfg.listen_addr, v6 ? "]" : "", nt_server_port(srv));
	fflush(stdout);
	int sig = 0;
	while (sigwait(&stop_set, &sig) != 0)
		;
	/* The server borrows the agent: it stops (its requests finish) first. */
	nt_server_stop(srv);
	nt_agent_close(agent);
	return 0;
fail:
	fprintf(stderr, "nettune: cannot start: %s\n", err[0] ? err : nt_strerror(r));
	nt_server_stop(srv);
	nt_agent_close(agent);
	return 1;
}
