/* SPDX-License-Identifier: Apache-2.0 */
/* nettune serve: the options made into the agent's and the server's
 * configuration, the log sink, signal handling, and the order things start
 * and stop in. */
#include "agent/agent.h"
#include "api/server.h"
#include "cli/cli.h"
#include "cli/escape.h"
#include "cli/config.h"
#include "cli/logline.h"
#include "cli/probe.h"
#include "kernel/sdnotify.h"
#include "store/store.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Tell systemd (Type=notify) what the agent is doing; nothing when not run
 * by systemd. A lost status line is not worth failing for. */
static void notify(const char *state)
{
	(void)nt_sd_notify(state);
}

/* The log sink's settings. json changes on reload (SIGHUP) while workers
 * log, so it is read and written atomically. */
typedef struct serve_log {
	bool json;
	/* stderr is the journal (systemd sets JOURNAL_STREAM to its device
	 * and inode): each line starts with its syslog priority, "<4>",
	 * which journald takes off and records as the entry's PRIORITY. */
	bool journal;
} serve_log;

static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

static bool str_is(const json_t *ev, const char *key, const char *val)
{
	const char *v = json_string_value(json_object_get(ev, key));
	return v && !strcmp(v, val);
}

/* The syslog priority of an event: 3 (err) for what left the host or the
 * agent in a bad state, 4 (warning) for what failed and was put right or
 * refused, 6 (info) for the rest. */
static int event_priority(const json_t *ev)
{
	const char *event = json_string_value(json_object_get(ev, "event"));
	if (!event)
		return 6;
	if (json_object_get(ev, "store_error") || !strcmp(event, "store_unavailable") ||
	    !strcmp(event, "config_error") || !strcmp(event, "watchdog"))
		return 3;
	if (!strcmp(event, "txn"))
		return str_is(ev, "status", "rollback_failed") ? 3 :
		       str_is(ev, "status", "rolled_back") || str_is(ev, "status", "reverted") ||
				       str_is(ev, "status", "recovered") ?
							      4 :
							      6;
	if (!strcmp(event, "txn_step"))
		return str_is(ev, "result", "rollback_failed") ? 3 :
		       str_is(ev, "result", "failed")		 ? 4 :
									   6;
	if (!strcmp(event, "access"))
		return json_integer_value(json_object_get(ev, "status")) >= 500 ? 4 : 6;
	if (!strcmp(event, "desired_file"))
		return str_is(ev, "result", "invalid") || str_is(ev, "result", "error") ? 4 : 6;
	if (!strcmp(event, "profile_invalid") || !strcmp(event, "restart_needed") ||
	    !strcmp(event, "profiles_dir_unreadable") || !strcmp(event, "tokens_refused"))
		return 4;
	return 6;
}

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
 * stdio call so lines from concurrent requests never interleave; the line
 * is built in a buffer (cli/logline.c) since a transaction logs each of its
 * steps. JSON: the event with a "ts" added. Text: "TS EVENT key=value ...",
 * strings quoted when they hold spaces or quotes. */
static void log_event(void *ud, const json_t *ev)
{
	const serve_log *sl = ud;
	bool as_json = __atomic_load_n(&sl->json, __ATOMIC_RELAXED);
	char storage[1024], when[32];
	nt_linebuf b;

	nt_linebuf_init(&b, storage, sizeof(storage));
	if (sl->journal) {
		char prio[8];
		int n = snprintf(prio, sizeof(prio), "<%d>", event_priority(ev));
		nt_linebuf_add(&b, prio, (size_t)n);
	}
	nt_store_rfc3339(nt_store_now_ms(), when, sizeof(when));
	if (nt_log_format(&b, ev, when, as_json) == 0) {
		nt_linebuf_add(&b, "\n", 1);
		if (!b.failed)
			fwrite(b.p, 1, b.len, stderr);
	}
	nt_linebuf_free(&b);
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
	json_t *ev = json_pack("{s:s, s:s, s:s, s:s, s:s}", "event", "store_unavailable",
			       "state_dir", nt_agent_cfg(agent)->state_dir, "error", why, "effect",
			       "transactions are refused until the database can be opened; "
			       "GET /v1/health answers 503 (degraded)",
			       "warning", NT_AGENT_NO_RECOVERY_WARNING);
	if (ev)
		log(log_ud, ev);
	json_decref(ev);
}

/* Log a one-off event of the serve edge (configuration, profiles,
 * watchdog) through the sink: {"event": EVENT, KEY: VALUE, ...} from a
 * json_pack format. */
static void log_pack(nt_log_fn log, void *ud, json_t *ev)
{
	if (ev)
		log(ud, ev);
	json_decref(ev);
}

/* The options in effect: the command line's (CMDLINE), then the
 * configuration file's for what the command line left out. *TEXT holds the
 * file's values (the caller frees it after *EFF). Returns 0 or -1 with the
 * reason in ERR. */
static int effective_opts(const cli_opts *cmdline, cli_opts *eff, char **text, char *err,
			  size_t errsize)
{
	cli_opts file;
	const char *path = cmdline->config;
	struct stat st;

	*eff = *cmdline;
	*text = NULL;
	/* The default file is read when it exists; one named with --config
	 * must exist. */
	if (!path) {
		if (stat(NT_CONF_DEFAULT, &st) < 0)
			return 0;
		path = NT_CONF_DEFAULT;
	}
	memset(&file, 0, sizeof(file));
	if (nt_conf_load(path, &file, text, err, errsize) < 0)
		return -1;
	nt_cli_options_merge(eff, &file);
	eff->config = path;
	return 0;
}

/* Held files (kernel/heldfiles.h) are descriptors: the soft limit on open
 * files is raised to the hard one (the agent polls with epoll, never
 * select, so descriptors past 1024 are fine), and WANT is cut to what
 * leaves room for every connection and the rest (the database, sockets,
 * directories) beside it. */
static int fit_held_files(int want, unsigned max_connections)
{
	struct rlimit rl;
	if (want <= 0 || getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		struct rlimit up = { rl.rlim_max, rl.rlim_max };
		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl = up;
	}
	long room = rl.rlim_cur == RLIM_INFINITY ? 1L << 30 : (long)rl.rlim_cur;
	room -= (long)(max_connections ? max_connections : 64) + 256;
	return room <= 0 ? 0 : want < room ? want : (int)room;
}

/* Build the server's and the agent's configuration from O. Returns 0 or -1
 * with the reason in ERR. */
/* Whether option NAME was given (on the command line or in the file): for
 * options whose 0 is a value, not "unset". */
static bool given(const cli_opts *o, const char *name)
{
	const nt_cli_option *opt = nt_cli_option_find(name);
	return opt && o->set[opt - nt_cli_options];
}

static int make_config(const cli_opts *o, nt_server_config *cfg, nt_agent_config *acfg, char *err,
		       size_t errsize)
{
	memset(cfg, 0, sizeof(*cfg));
	memset(acfg, 0, sizeof(*acfg));
	if (split_listen(o->listen ? o->listen : "127.0.0.1:8470", cfg) < 0) {
		char shown[512];
		snprintf(err, errsize, "listen wants ADDR:PORT (e.g. 127.0.0.1:8470), not '%s'",
			 nt_out_clip(shown, sizeof(shown), o->listen, NT_OUT_CLIP_DEFAULT));
		return -1;
	}
	snprintf(acfg->root, sizeof(acfg->root), "%s", o->root ? o->root : "/");
	snprintf(acfg->state_dir, sizeof(acfg->state_dir), "%s",
		 o->state_dir ? o->state_dir : "/var/lib/nettune");
	cfg->rtt_ms = o->rtt_ms ? (int)o->rtt_ms : 10;
	if (copy_path(cfg->tokens_path, sizeof(cfg->tokens_path), o->tokens, "--tokens") < 0 ||
	    copy_path(cfg->tls_cert, sizeof(cfg->tls_cert), o->tls_cert, "--tls-cert") < 0 ||
	    copy_path(cfg->tls_key, sizeof(cfg->tls_key), o->tls_key, "--tls-key") < 0 ||
	    copy_path(cfg->tls_client_ca, sizeof(cfg->tls_client_ca), o->tls_client_ca,
		      "--tls-client-ca") < 0) {
		snprintf(err, errsize, "a path is too long");
		return -1;
	}
	cfg->max_body = (size_t)o->max_body;
	cfg->client_timeout_s = (unsigned)o->client_timeout;
	cfg->max_connections = (unsigned)o->max_connections;
	cfg->max_per_client = (unsigned)o->max_per_client;
	cfg->metrics_queues = o->metrics_queues;
	acfg->drift.policy = o->drift_policy == 1 ? NT_DRIFT_REPORT : NT_DRIFT_REPAIR;
	acfg->drift.interval_ms = (int)(o->drift_interval ? o->drift_interval : 30) * 1000;
	acfg->held_files = given(o, "held-files") ? (int)o->held_files : NT_AGENT_HELD_FILES;
	acfg->held_files = fit_held_files(acfg->held_files, cfg->max_connections);
	acfg->history_keep = given(o, "history-keep") ? o->history_keep : NT_CLI_HISTORY_KEEP;
	acfg->plan_ttl_s = given(o, "plan-ttl") ? (int)o->plan_ttl : 0;
	acfg->allow_machine_wide = o->allow_machine_wide;
	return 0;
}

/* The desired state as a file, when one is configured; what came of it is
 * logged (an invalid file with the JSON path of each problem). */
static void load_desired(nt_agent *agent, const char *file)
{
	json_t *report = NULL;
	if (!file)
		return;
	nt_agent_load_desired(agent, file, &report);
	if (report)
		json_object_set_new(report, "event", json_string("desired_file"));
	log_pack(nt_agent_cfg(agent)->log, nt_agent_cfg(agent)->log_ud, report);
}

/* Load the profiles directory, when there is one, and log what came of
 * it: one event per invalid file (its name and the JSON paths of what is
 * wrong) and one summary. */
static void load_profiles(nt_agent *agent, const char *dir, json_t *from_files)
{
	json_t *report = NULL;
	if (!dir)
		return;
	int r = nt_agent_load_profiles(agent, dir, from_files, &report);
	if (r == -ECANCELED) {
		log_pack(nt_agent_cfg(agent)->log, nt_agent_cfg(agent)->log_ud,
			 json_pack("{s:s,s:s,s:s}", "event", "profiles_load_stopped", "dir", dir, "effect",
				   "a stop came first; the files read so far are stored, none removed"));
		return;
	}
	if (r < 0) {
		log_pack(nt_agent_cfg(agent)->log, nt_agent_cfg(agent)->log_ud,
			 json_pack("{s:s,s:s,s:s}", "event", "profiles_dir_unreadable", "dir", dir,
				   "error", nt_strerror(r)));
		return;
	}
	size_t i;
	json_t *bad;
	json_array_foreach(json_object_get(report, "invalid"), i, bad) {
		json_t *ev = json_pack("{s:s,s:O,s:O}", "event", "profile_invalid", "file",
				       json_object_get(bad, "file"), "errors",
				       json_object_get(bad, "errors"));
		log_pack(nt_agent_cfg(agent)->log, nt_agent_cfg(agent)->log_ud, ev);
	}
	json_t *names = json_array();
	json_t *one;
	json_array_foreach(json_object_get(report, "loaded"), i, one)
		json_array_append(names, json_object_get(one, "name"));
	log_pack(nt_agent_cfg(agent)->log, nt_agent_cfg(agent)->log_ud,
		 json_pack("{s:s,s:s,s:o,s:I,s:O}", "event", "profiles_loaded", "dir", dir, "loaded",
			   names, "invalid", (json_int_t)json_array_size(json_object_get(report, "invalid")),
			   "removed", json_object_get(report, "removed")));
	json_decref(report);
}

/* Whether a SIGTERM or SIGINT waits (they are blocked; sigwait takes
 * them). Linux hands out the lowest-numbered pending signal first, so
 * behind a storm of SIGHUPs a stop would wait for every reload: it is
 * looked for before each reload and between its parts. */
static bool stop_pending(void)
{
	sigset_t p;
	return sigpending(&p) == 0 && (sigismember(&p, SIGTERM) == 1 || sigismember(&p, SIGINT) == 1);
}

/* SIGHUP (systemctl reload): read the configuration file, the token file
 * and the profiles directory again. What can change in a running agent
 * changes (the log format, the profiles directory, the tokens); what needs a new socket or new state (the listen address,
 * TLS files, the state directory) is named in a "restart_needed" warning
 * and left as it is. A file that no longer parses changes nothing. The
 * server is not touched, so no connection is dropped. */
static void reload(nt_agent *agent, struct nt_server *srv, const cli_opts *cmdline, cli_opts *cur,
		   char (*profiles_dir)[PATH_MAX], serve_log *sl, json_t *from_files)
{
	nt_log_fn log = nt_agent_cfg(agent)->log;
	void *ud = nt_agent_cfg(agent)->log_ud;
	cli_opts fresh;
	char *text = NULL;
	char err[512];

	notify("RELOADING=1");
	if (effective_opts(cmdline, &fresh, &text, err, sizeof(err)) < 0) {
		log_pack(log, ud, json_pack("{s:s,s:s,s:s}", "event", "config_error", "error", err,
					    "effect", "configuration unchanged; profiles re-read"));
	} else {
		json_t *restart = json_array();
		for (const nt_cli_option *opt = nt_cli_options; opt->name; opt++) {
			if (!(opt->flags & NT_OPT_CONF))
				continue;
			const char *pa = (const char *)cur + opt->off;
			const char *pb = (const char *)&fresh + opt->off;
			bool same;
			if (opt->kind == NT_OPT_STR) {
				const char *x = *(const char *const *)pa, *y = *(const char *const *)pb;
				same = (!x && !y) || (x && y && !strcmp(x, y));
			} else {
				same = !memcmp(pa, pb, nt_cli_option_size(opt));
			}
			if (same || !strcmp(opt->name, "log-format") ||
			    !strcmp(opt->name, "profiles-dir"))
				continue;
			char key[64];
			nt_cli_option_key(opt, key, sizeof(key));
			json_array_append_new(restart, json_string(key));
		}
		__atomic_store_n(&sl->json, fresh.log_format == 1, __ATOMIC_RELAXED);
		/* What needs a restart keeps its old value, so a later reload
		 * compares against what is really in effect. */
		cli_opts keep = *cur;
		*cur = fresh;
		for (const nt_cli_option *opt = nt_cli_options; opt->name; opt++) {
			if ((opt->flags & NT_OPT_CONF) && strcmp(opt->name, "log-format") &&
			    strcmp(opt->name, "profiles-dir"))
				memcpy((char *)cur + opt->off, (const char *)&keep + opt->off,
				       nt_cli_option_size(opt));
		}
		/* The kept strings point into the text read at start; the one
		 * string taken from the new text is copied, so the new text
		 * can go. */
		if (fresh.profiles_dir) {
			snprintf(*profiles_dir, sizeof(*profiles_dir), "%s", fresh.profiles_dir);
			cur->profiles_dir = *profiles_dir;
		}
		if (json_array_size(restart))
			log_pack(log, ud,
				 json_pack("{s:s,s:s,s:O}", "event", "restart_needed", "config",
					   fresh.config ? fresh.config : "", "keys", restart));
		json_decref(restart);
		log_pack(log, ud, json_pack("{s:s,s:s}", "event", "config_reloaded", "config",
					    fresh.config ? fresh.config : "(none)"));
	}
	free(text);
	if (stop_pending())
		return; /* the stop comes first; nothing half-changed is left */
	/* The token file is read again (rotated tokens), whatever the
	 * configuration file says; a refused one leaves the tokens in use. */
	int nt = nt_server_reload_tokens(srv, err, sizeof(err));
	if (nt < 0)
		log_pack(log, ud, json_pack("{s:s,s:s,s:s}", "event", "tokens_refused", "error", err,
					    "effect", "the tokens in use stay"));
	else if (nt > 0)
		log_pack(log, ud, json_pack("{s:s,s:i}", "event", "tokens_reloaded", "tokens", nt));
	if (stop_pending())
		return;
	load_profiles(agent, cur->profiles_dir, from_files);
	if (stop_pending())
		return;
	load_desired(agent, cur->desired_file);
	notify("READY=1");
}

/* The watchdog (WatchdogSec= in the unit): a thread that asks the agent's
 * own API for /v1/health every half period and tells systemd WATCHDOG=1
 * only when it answered 200, so a hung server (not just a live process) is
 * restarted. */
typedef struct watchdog {
	pthread_t thread;
	bool running;
	uint64_t period_us;
	char url[160];
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	nt_agent *agent;
	char host[64]; /* the numeric address the probe connects to */
	int port;
	bool tls;
} watchdog;

static bool health_ok(const watchdog *w)
{
	int timeout_ms = (int)(w->period_us / 2000);
	return nt_probe_get(w->host, w->port, w->tls, "/v1/health", timeout_ms ? timeout_ms : 1) == 200;
}

static void *watchdog_main(void *arg)
{
	watchdog *w = arg;
	bool was_ok = true;
	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		pthread_mutex_unlock(&w->lock);
		bool ok = health_ok(w);
		if (ok)
			notify("WATCHDOG=1");
		if (ok != was_ok) {
			log_pack(nt_agent_cfg(w->agent)->log, nt_agent_cfg(w->agent)->log_ud,
				 json_pack("{s:s,s:s,s:s}", "event", "watchdog", "url", w->url,
					   "state", ok ? "answering again" :
							 "no answer: systemd is not told the agent is alive"));
			was_ok = ok;
		}
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		uint64_t ns = (uint64_t)until.tv_nsec + (w->period_us / 2) * 1000;
		until.tv_sec += (time_t)(ns / 1000000000);
		until.tv_nsec = (long)(ns % 1000000000);
		pthread_mutex_lock(&w->lock);
		while (!w->stop &&
		       pthread_cond_timedwait(&w->cond, &w->lock, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static void watchdog_start(watchdog *w, nt_agent *agent, const nt_server_config *cfg, int port)
{
	uint64_t usec = 0;
	memset(w, 0, sizeof(*w));
	if (nt_sd_watchdog_enabled(&usec) <= 0)
		return;
	/* Any address is asked on loopback; a specific one on itself. */
	const char *host = cfg->listen_addr;
	if (!strcmp(host, "0.0.0.0"))
		host = "127.0.0.1";
	else if (!strcmp(host, "::"))
		host = "::1";
	bool v6 = strchr(host, ':') != NULL;
	snprintf(w->url, sizeof(w->url), "%s://%s%s%s:%d/v1/health",
		 cfg->tls_cert[0] ? "https" : "http", v6 ? "[" : "", host, v6 ? "]" : "", port);
	snprintf(w->host, sizeof(w->host), "%s", host);
	w->port = port;
	w->tls = cfg->tls_cert[0] != '\0';
	w->period_us = usec;
	w->agent = agent;
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	w->running = pthread_create(&w->thread, NULL, watchdog_main, w) == 0;
}

static void watchdog_stop(watchdog *w)
{
	if (!w->running)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
}

/* --check-config: what `serve` would refuse at start, and every profile
 * file that would be reported invalid, without opening the database,
 * listening or storing anything (for configuration management to run
 * before it installs a file). Returns the exit code. */
static int check_config(const cli_opts *eff, const nt_server_config *cfg,
			const nt_agent_config *acfg)
{
	struct nt_server *srv = NULL;
	json_t *report = NULL;
	char err[512] = "";
	nt_ctx ctx;
	int rc = 0, r;

	if ((r = nt_server_new(cfg, &srv, err, sizeof(err))) < 0) {
		fprintf(stderr, "nettune: %s\n", err[0] ? err : nt_strerror(r));
		rc = 1;
	}
	nt_server_stop(srv);
	size_t nvalid = 0;
	if (eff->profiles_dir) {
		if ((r = nt_ctx_init(&ctx, acfg->root)) < 0 ||
		    (r = nt_profiles_dir_check(&ctx, eff->profiles_dir, &report)) < 0) {
			fprintf(stderr, "nettune: profiles directory %s: %s\n", eff->profiles_dir,
				nt_strerror(r));
			return 1;
		}
		size_t i, j;
		json_t *bad, *e;
		json_array_foreach(json_object_get(report, "invalid"), i, bad) {
			json_array_foreach(json_object_get(bad, "errors"), j, e)
				fprintf(stderr, "nettune: %s: %s: %s\n",
					json_string_value(json_object_get(bad, "file")),
					json_string_value(json_object_get(e, "path")),
					json_string_value(json_object_get(e, "message")));
			rc = 1;
		}
		nvalid = json_array_size(json_object_get(report, "valid"));
		json_decref(report);
	}
	if (rc == 0)
		printf("configuration %s is valid; %zu profile file%s valid\n",
		       eff->config ? eff->config : "(none, defaults)", nvalid, nvalid == 1 ? "" : "s");
	return rc;
}

/* The agent's memory goes back to its idle size after a request, and a
 * burst of requests reuses the same memory. A read of a big host
 * allocates megabytes at once (the IRQ counts, the host model, the
 * document): mmap'd, each of those blocks would be faulted in page by
 * page and unmapped again on every read, which cost a quarter of a read
 * of a 256-CPU host; left on the heap, they are reused. malloc would also
 * give the top of a heap back at each free past its trim threshold, to
 * fault it in again on the next read: the threshold is raised, and the
 * server gives free memory back once it is idle (nt_srv_trim_later; the
 * drift watcher after each check). Fixed thresholds also stop glibc from
 * moving them as it sees large frees. One arena: malloc_trim gives back
 * the top of the main arena's heap only, and a pool whose workers mostly
 * wait on the kernel does not contend for it. */
static void memory_policy(void)
{
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	mallopt(M_ARENA_MAX, 1);
}

int nt_cmd_serve(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	nt_server_config cfg;
	nt_agent_config acfg;
	struct nt_server *srv = NULL;
	nt_agent *agent = NULL;
	cli_opts eff;
	char *conf_text = NULL;
	json_t *from_files = json_object();
	watchdog wd = { 0 };
	char err[512] = "";
	int r = 0, rc = 1;
	static serve_log sl;
	static char profiles_dir[PATH_MAX];

	memory_policy();
	sl.journal = stderr_is_journal();
	if (effective_opts(o, &eff, &conf_text, err, sizeof(err)) < 0 ||
	    make_config(&eff, &cfg, &acfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "%snettune: cannot start: %s\n", sl.journal ? "<3>" : "", err);
		notify("STATUS=configuration refused");
		free(conf_text);
		json_decref(from_files);
		return 2;
	}
	if (eff.check_config) {
		rc = check_config(&eff, &cfg, &acfg);
		free(conf_text);
		json_decref(from_files);
		return rc;
	}
	sl.json = eff.log_format == 1;
	acfg.stop_requested = stop_pending;
	acfg.log = log_event;
	acfg.log_ud = &sl;

	/* SIGTERM, SIGINT and SIGHUP are blocked before any thread exists (the
	 * engine's confirmation timer, the server's workers, the watchdog), so
	 * every thread inherits the mask and only sigwait below takes them: a
	 * signal handled by another thread would leave the main thread waiting
	 * forever. */
	sigset_t wait_set;
	sigemptyset(&wait_set);
	sigaddset(&wait_set, SIGTERM);
	sigaddset(&wait_set, SIGINT);
	sigaddset(&wait_set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &wait_set, NULL);
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
	/* Profiles from files are stored before the API answers, so a
	 * client never sees the set half-loaded. */
	load_profiles(agent, eff.profiles_dir, from_files);
	/* The desired state kept as a file, read after recovery and before
	 * READY, so the boot check sees it; reload() re-reads it. */
	load_desired(agent, eff.desired_file);
	if ((r = nt_server_start(srv, agent, err, sizeof(err))) < 0)
		goto fail;
	bool v6 = strchr(cfg.listen_addr, ':') != NULL;
	printf("listening on %s://%s%s%s:%d\n", cfg.tls_cert[0] ? "https" : "http", v6 ? "[" : "",
	       cfg.listen_addr, v6 ? "]" : "", nt_server_port(srv));
	printf("web view at %s://%s%s%s:%d/ui/\n", cfg.tls_cert[0] ? "https" : "http", v6 ? "[" : "",
	       cfg.listen_addr, v6 ? "]" : "", nt_server_port(srv));
	fflush(stdout);
	/* Recovery has run and the socket listens: systemd may start what
	 * waits for the agent. */
	notify("READY=1\nSTATUS=serving");
	watchdog_start(&wd, agent, &cfg, nt_server_port(srv));
	for (;;) {
		int sig = 0;
		if (sigwait(&wait_set, &sig) != 0)
			continue;
		if (sig != SIGHUP || stop_pending())
			break;
		reload(agent, srv, o, &eff, &profiles_dir, &sl, from_files);
	}
	notify("STOPPING=1");
	rc = 0;
	goto out;
fail:
	if (sl.journal)
		fputs("<3>", stderr);
	fprintf(stderr, "nettune: cannot start: %s\n", err[0] ? err : nt_strerror(r));
out:
	watchdog_stop(&wd);
	/* The server borrows the agent: it stops (its requests finish) first. */
	nt_server_stop(srv);
	nt_agent_close(agent);
	json_decref(from_files);
	/* conf_text backs eff's strings; freed last. */
	free(conf_text);
	return rc;
}
