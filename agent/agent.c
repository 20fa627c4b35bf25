/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/agent.h"
#include "host/dropwin.h"
#include "host/hostcache.h"
#include "kernel/kernel.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Methods counted one by one in nettune_http_requests_total; the last
 * entry takes every other method. */
static const char *const methods[] = { "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH",
				       "OPTIONS", "other" };
#define NMETHODS ((int)(sizeof(methods) / sizeof(methods[0])))
#define NSTATUS 500 /* codes 100..599 */

struct nt_agent {
	nt_agent_config cfg;
	nt_ctx ctx; /* carries host_cache: every copy of it reads through the cache */
	/* The static part of the host model, shared by the routes, the engine
	 * and the drift watcher (host/hostcache.h); freed after all of them. */
	nt_host_cache *host_cache;
	nt_store *store; /* the one database handle; NULL when it could not be opened */
	char store_err[512];
	nt_txn_engine *engine; /* borrows store; closed before it */
	/* The agent's own thread, the drift watcher (agent/drift.c), is
	 * started at the end of nt_agent_open, after crash recovery, so it
	 * never sees a half-made transaction, and joined first in
	 * nt_agent_close, before the engine and store it uses go away. It
	 * changes the host only through the engine's slot (nt_txn_apply). */
	nt_drift *drift; /* borrows ctx, engine and store; NULL without a store */
	nt_dropwin *drops; /* RX drops over a recent window, for diagnostics */
	/* The last delivery check (GET /v1/verify or a transaction's), for
	 * diagnostics and metrics: a deep copy, under delivery_lock. */
	pthread_mutex_t delivery_lock;
	json_t *last_delivery;

	/* Answered requests (atomic: every HTTP worker adds to them). */
	uint64_t http_counts[NMETHODS][NSTATUS];

};

/* Make DIR and whatever of its parents is missing. */
static int mkdir_p(const char *dir, mode_t mode)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	/* Only what is missing is created: an existing ancestor is not even
	 * tried, so the agent's writes stay inside its state directory (as
	 * tests/live/test_no_stray_writes.sh checks). */
	struct stat st;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (stat(buf, &st) < 0 && mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (stat(buf, &st) < 0 && mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	if (stat(buf, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* Open the database in the state directory. Only a directory that cannot
 * be made is an error; a database that cannot be opened leaves the store
 * NULL with the reason in store_err (the agent still serves reads). */
static int open_store(nt_agent *a, char *err, size_t errsize)
{
	const char *dir = a->cfg.state_dir;
	char path[PATH_MAX];

	if (!dir[0]) {
		snprintf(a->store_err, sizeof(a->store_err), "no state directory configured");
		return 0;
	}
	int r = mkdir_p(dir, 0700);
	if (r < 0) {
		snprintf(err, errsize, "state directory %s: %s", dir, nt_strerror(r));
		return r;
	}
	if (snprintf(path, sizeof(path), "%s/nettune.db", dir) >= (int)sizeof(path)) {
		snprintf(a->store_err, sizeof(a->store_err), "state directory path too long");
		return 0;
	}
	if (nt_store_open(path, &a->store, a->store_err, sizeof(a->store_err)) < 0)
		a->store = NULL;
	return 0;
}

int nt_agent_open(const nt_agent_config *cfg, nt_agent **out, char *err, size_t errsize)
{
	nt_agent *a;
	int r;

	*out = NULL;
	if (errsize)
		err[0] = '\0';
	a = calloc(1, sizeof(*a));
	if (a)
		pthread_mutex_init(&a->delivery_lock, NULL);
	if (a && !(a->drops = nt_dropwin_new(NT_DROPWIN_DEFAULT_MS))) {
		free(a);
		a = NULL;
	}
	if (!a) {
		snprintf(err, errsize, "out of memory");
		return -ENOMEM;
	}
	a->cfg = *cfg;
	r = nt_ctx_init(&a->ctx, cfg->root[0] ? cfg->root : "/");
	if (r < 0) {
		snprintf(err, errsize, "host root %s: %s", cfg->root, nt_strerror(r));
		goto fail;
	}
	/* Learnt once: a process does not change namespace while it runs
	 * (setns is not called), and every copy of the context carries it
	 * to the plans and the host model. */
	a->ctx.netns_other = nt_kernel_netns_other(&a->ctx);
	a->ctx.machine_wide_allowed = cfg->allow_machine_wide;
	if ((r = nt_host_cache_new(&a->ctx, &a->host_cache)) < 0) {
		snprintf(err, errsize, "out of memory");
		goto fail;
	}
	a->ctx.host_cache = a->host_cache;
	if ((r = nt_host_cache_hold_files(a->host_cache, cfg->held_files)) < 0) {
		snprintf(err, errsize, "out of memory");
		goto fail;
	}
	/* Leftovers of a write a kill interrupted (a fixture root's temporary
	 * files) go before recovery reads the host. Failing to remove them
	 * costs only the files. */
	(void)nt_kernel_tidy(&a->ctx);
	if ((r = open_store(a, err, errsize)) < 0)
		goto fail;
	r = nt_txn_engine_new(&a->ctx, a->store, a->store_err, &a->engine);
	if (r < 0) {
		snprintf(err, errsize, "transaction engine: %s", nt_strerror(r));
		goto fail;
	}
	nt_txn_engine_set_log(a->engine, cfg->log, cfg->log_ud);
	nt_txn_engine_set_history(a->engine, cfg->history_keep);
	if (cfg->plan_ttl_s > 0)
		nt_txn_engine_set_plan_ttl(a->engine, cfg->plan_ttl_s);
	/* Crash recovery, then the confirmation timer. */
	r = nt_txn_engine_start(a->engine);
	if (r < 0) {
		snprintf(err, errsize, "transaction engine: %s", nt_strerror(r));
		goto fail;
	}
	if (a->store) {
		r = nt_drift_new(&a->ctx, a->engine, a->store, &cfg->drift, cfg->log, cfg->log_ud,
				 true, &a->drift);
		if (r < 0) {
			snprintf(err, errsize, "drift watcher: %s", nt_strerror(r));
			goto fail;
		}
	}
	*out = a;
	return 0;
fail:
	nt_agent_close(a);
	return r;
}

void nt_agent_close(nt_agent *a)
{
	if (!a)
		return;
	nt_drift_free(a->drift);
	nt_dropwin_free(a->drops);
	nt_txn_engine_close(a->engine);
	nt_store_close(a->store);
	nt_host_cache_free(a->host_cache);
	json_decref(a->last_delivery);
	pthread_mutex_destroy(&a->delivery_lock);
	free(a);
}

void nt_agent_note_delivery(nt_agent *a, const json_t *check, int64_t at_ms)
{
	json_t *copy = check ? json_deep_copy(check) : NULL;
	if (!copy)
		return; /* out of memory: the last check stays the one before */
	json_object_set_new(copy, "at_ms", json_integer((json_int_t)at_ms));
	pthread_mutex_lock(&a->delivery_lock);
	json_t *old = a->last_delivery;
	a->last_delivery = copy;
	pthread_mutex_unlock(&a->delivery_lock);
	json_decref(old);
}

json_t *nt_agent_last_delivery(nt_agent *a)
{
	pthread_mutex_lock(&a->delivery_lock);
	json_t *copy = a->last_delivery ? json_deep_copy(a->last_delivery) : NULL;
	pthread_mutex_unlock(&a->delivery_lock);
	return copy;
}

const nt_ctx *nt_agent_ctx(const nt_agent *a)
{
	return &a->ctx;
}

const nt_agent_config *nt_agent_cfg(const nt_agent *a)
{
	return &a->cfg;
}

nt_txn_engine *nt_agent_engine(nt_agent *a)
{
	return a->engine;
}

int nt_agent_held_files(nt_agent *a)
{
	return nt_host_cache_held(a->host_cache);
}

nt_drift *nt_agent_drift(nt_agent *a)
{
	return a->drift;
}

nt_dropwin *nt_agent_drops(nt_agent *a)
{
	return a->drops;
}

nt_store *nt_agent_store(nt_agent *a)
{
	return a->store;
}

const char *nt_agent_store_error(const nt_agent *a)
{
	return a->store ? NULL : a->store_err;
}

void nt_agent_log(nt_agent *a, const json_t *ev)
{
	if (ev && a->cfg.log)
		a->cfg.log(a->cfg.log_ud, ev);
}

bool nt_agent_log_enabled(const nt_agent *a)
{
	return a->cfg.log != NULL;
}

static int method_index(const char *m)
{
	for (int i = 0; m && i < NMETHODS - 1; i++)
		if (strcmp(methods[i], m) == 0)
			return i;
	return NMETHODS - 1;
}

const char *nt_agent_http_method(const char *method)
{
	return methods[method_index(method)];
}

void nt_agent_count_http(nt_agent *a, const char *method, int status)
{
	if (status < 100 || status >= 100 + NSTATUS)
		return;
	__atomic_add_fetch(&a->http_counts[method_index(method)][status - 100], 1,
			   __ATOMIC_RELAXED);
}

void nt_agent_http_counts(nt_agent *a,
			  void (*fn)(void *ud, const char *method, int status, uint64_t n),
			  void *ud)
{
	for (int m = 0; m < NMETHODS; m++) {
		for (int k = 0; k < NSTATUS; k++) {
			uint64_t n = __atomic_load_n(&a->http_counts[m][k], __ATOMIC_RELAXED);
			if (n)
				fn(ud, methods[m], k + 100, n);
		}
	}
}
