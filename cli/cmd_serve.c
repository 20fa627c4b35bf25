/* nettune serve: the options made into the server's configuration, the
 * log sink, signal handling, and the order things start and stop in. */
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

int nt_cmd_serve(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	nt_server_config cfg;
	struct nt_server *srv = NULL;
	char err[512] = "";

	memset(&cfg, 0, sizeof(cfg));
	if (split_listen(o->listen ? o->listen : "127.0.0.1:8470", &cfg) < 0) {
		fprintf(stderr, "nettune: --listen wants ADDR:PORT (e.g. 127.0.0.1:8470), not '%s'\n", o->listen);
		return 2;
	}
	snprintf(cfg.root, sizeof(cfg.root), "%s", o->root ? o->root : "/");
	snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s", o->state_dir ? o->state_dir : "/var/lib/nettune");
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
	static bool log_json;
	log_json = o->log_json;
	cfg.log = log_event;
	cfg.log_ud = &log_json;

	/* SIGTERM and SIGINT are blocked before the server's threads exist, so
	 * every thread inherits the mask and only sigwait below takes them: a
	 * signal handled by a worker thread would leave pause() in the main
	 * thread waiting forever. */
	sigset_t stop_set;
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGTERM);
	sigaddset(&stop_set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop_set, NULL);
	signal(SIGPIPE, SIG_IGN);

	int r = nt_server_start(&cfg, &srv, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "nettune: cannot start: %s\n", err[0] ? err : nt_strerror(r));
		return 1;
	}
	bool v6 = strchr(cfg.listen_addr, ':') != NULL;
	printf("listening on %s://%s%s%s:%d\n", cfg.tls_cert[0] ? "https" : "http", v6 ? "[" : "",
	       cfg.listen_addr, v6 ? "]" : "", nt_server_port(srv));
	fflush(stdout);
	int sig = 0;
	while (sigwait(&stop_set, &sig) != 0)
		;
	nt_server_stop(srv);
	return 0;
}
