/* SPDX-License-Identifier: Apache-2.0 */
/* The agent object: everything `nettune serve` runs on, owned in one place
 * and handed out to the parts that need it (the HTTP server and its route
 * areas, the drift watcher).
 *
 * It owns the host context (nt_ctx), the one SQLite handle on the state
 * database (nt_store), the transaction engine that journals into it, the
 * drift watcher that holds the desired state through that engine
 * (agent/drift.h), the log sink, and the request counters GET /metrics
 * reports. Nothing else
 * opens the database: readers (history, metrics) and the engine share the
 * handle, which serialises calls itself (store/store.h).
 *
 * Lifetime: nt_agent_open, then hand it to nt_server_start (api/server.h);
 * at exit nt_server_stop first, then nt_agent_close. Every accessor may be
 * called from any thread while the agent is open. */
#ifndef NT_AGENT_AGENT_H
#define NT_AGENT_AGENT_H

#include "agent/drift.h"
#include "engine/txn.h" /* nt_txn_engine, nt_log_fn */
#include "host/topology.h"
#include "kernel/ctx.h"
#include "store/store.h"

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct nt_agent_config {
	char root[PATH_MAX]; /* host root, "/" live */
	/* The SQLite database lives here (made 0700 when missing). "" keeps
	 * no state: the engine then plans but refuses to apply. */
	char state_dir[PATH_MAX];
	/* Structured events (see nt_txn_engine_set_log, and the access log of
	 * api/server.h), or NULL. Must be thread-safe. */
	nt_log_fn log;
	void *log_ud;
	/* The drift watcher (agent/drift.h): policy, check interval, ...
	 * Zero fields take its defaults. It runs only with a database. */
	nt_drift_config drift;
	/* Kernel files (IRQ affinities) kept open between reads of the host,
	 * at most (kernel/heldfiles.h); 0 keeps none. */
	int held_files;
	/* Transactions kept in the history, the newest; 0 keeps all
	 * (nt_txn_engine_set_history). */
	long history_keep;
	/* Polled between the files of nt_agent_load_profiles: true (a stop
	 * is waiting) ends the load early, so a stop never waits for a
	 * directory of thousands of files. NULL: never. */
	bool (*stop_requested)(void);
	/* Seconds a plan is kept for an apply by its id
	 * (nt_txn_engine_set_plan_ttl); 0: the default, 600. */
	int plan_ttl_s;
	/* Plans may change kinds of machine-wide scope (IRQ affinity,
	 * irqbalance, the host-wide sysctls) although the agent runs in a
	 * network namespace other than the initial one, where they would
	 * change every namespace (settings/setting.h, nt_reach). False: they
	 * are refused there. No effect in the initial namespace. */
	bool allow_machine_wide;
} nt_agent_config;

/* The default of held_files: two thirds for /proc/irq, one for debugfs's
 * irq/irqs (host/hostcache.c), so every file of a host of up to 2730
 * IRQs. */
#define NT_AGENT_HELD_FILES 8192

typedef struct nt_agent nt_agent;

/* Open the agent for CFG (copied): the host root, the state directory, the
 * database, the engine; then crash recovery (the host is put back where a
 * crash left it half-changed) and the engine's confirmation timer. A
 * database that cannot be opened does not fail the open: the agent serves
 * reads and refuses applies, and nt_agent_store_error says why, for the
 * caller to report. Returns 0 or -errno with a sentence for the operator in
 * ERR; *OUT is the caller's (nt_agent_close). */
int nt_agent_open(const nt_agent_config *cfg, nt_agent **out, char *err, size_t errsize);
/* Stop the agent's threads and free it. Whatever borrowed from it (the
 * HTTP server) must be stopped first. NULL is allowed. */
void nt_agent_close(nt_agent *a);

const nt_ctx *nt_agent_ctx(const nt_agent *a);
const nt_agent_config *nt_agent_cfg(const nt_agent *a);
/* The transaction engine; never NULL while the agent is open. */
nt_txn_engine *nt_agent_engine(nt_agent *a);
/* The database, or NULL when it could not be opened. */
nt_store *nt_agent_store(nt_agent *a);
/* Why there is no database ("no state directory configured", SQLite's
 * message), or NULL when there is one. */
/* What the agent says wherever it reports an unusable database (the start-up
 * log, GET /v1/health): recovery could not run. */
#define NT_AGENT_NO_RECOVERY_WARNING                                                          \
	"crash recovery did not run: a transaction interrupted before this start may still "  \
	"be half-applied on the host, recorded only in the unreadable journal"
const char *nt_agent_store_error(const nt_agent *a);

/* The drift watcher, or NULL when there is no database (nothing to hold). */
nt_drift *nt_agent_drift(nt_agent *a);

/* RX drops over a recent window (host/dropwin.h), which every
 * diagnostics request updates; never NULL while the agent is open. */
struct nt_dropwin *nt_agent_drops(nt_agent *a);

/* Kernel files the host model holds open now (held_files above). */
int nt_agent_held_files(nt_agent *a);

/* Send EV (borrowed) to the log sink; nothing when there is none. */
void nt_agent_log(nt_agent *a, const json_t *ev);
/* Whether there is a sink (to skip building events nobody reads). */
bool nt_agent_log_enabled(const nt_agent *a);

/* The largest desired-state or profile file read (bytes): the limit HTTP
 * bodies have by default (NT_DEFAULT_MAX_BODY, --max-body), so a file
 * holds no more than a PUT could. A larger file is refused, naming it and
 * the limit, and nothing of it is used. */
#define NT_AGENT_FILE_MAX ((size_t)1024 * 1024)
/* Load every DIR/NAME.json as stored profile NAME, each validated against
 * this host as a PUT /v1/profiles/NAME is (agent/profiles_dir.c). A file
 * that is not valid is skipped and the stored profile of its name stays;
 * so is an entry that is not a regular file (a FIFO, a directory, a
 * dangling symlink) or is larger than NT_AGENT_FILE_MAX, each reported in
 * "invalid" naming why.
 * FROM_FILES (a JSON object the caller keeps from one call to the next,
 * empty at first) holds the names that came from files: a name in it whose
 * file is gone is deleted from the store; profiles stored through the API
 * are never touched. *REPORT (the caller's) is
 *   {"dir", "loaded": [{"name","file","created"}],
 *    "invalid": [{"file", "errors": [{"path","message"}]}], "removed": [names]}.
 * Returns 0, or -errno when DIR cannot be read (nothing changed), or
 * -ECANCELED when stop_requested ended it (the files read so far are
 * stored; nothing is removed). */
int nt_agent_load_profiles(nt_agent *a, const char *dir, json_t *from_files, json_t **report);

/* The desired state kept as FILE (agent/desired_file.c): its profile
 * becomes the desired state when it differs from the one held, validated
 * like PUT /v1/desired. *REPORT (the caller's) is {"file", "result":
 * "set"|"unchanged"|"missing"|"invalid"|"error", "errors"?: [{path,
 * message}]}. Returns 0, or -errno when the engine failed. */
int nt_agent_load_desired(nt_agent *a, const char *file, json_t **report);
/* The file's bytes TEXT (LEN of them, not NUL-terminated) as a profile:
 * JSON with no duplicate key, an object. Returns 0 with *PROFILE (the
 * caller's), or NT_EINVALID with the reason in MSG and *PROFILE NULL.
 * Nothing is validated against a host. */
int nt_desired_file_read(const char *text, size_t len, json_t **profile, char *msg, size_t msgsize);

/* Read FILE as the profile called NAME: a JSON object whose "name", if
 * any, is NAME (filled in when missing). Nothing is validated against a
 * host. Returns 0 with *DOC (the caller's), or NT_EINVALID with *ERRORS
 * ([{path,message}], the caller's). */
int nt_profile_file_read(const char *file, const char *name, json_t **doc, json_t **errors);
/* Check every DIR/NAME.json against host CTX as nt_agent_load_profiles
 * would, storing nothing (`nettune serve --check-config`). *REPORT is
 * {"dir", "valid": [{"name","file"}], "invalid": [{"file","errors"}]}.
 * Returns 0 or -errno. */
int nt_profiles_dir_check(const nt_ctx *ctx, const char *dir, json_t **report);

/* What the profile in effect says about placing an application near NIC
 * of host T (agent/placement_hint.c): *RESERVED (interface -> cpulist,
 * the caller's; NULL when no profile is in effect), the union of the
 * exclude_cpus of its irq_affinity entries naming NIC into EXCLUDE, and
 * where they come from ("the desired state", "transaction 3") into SOURCE.
 * NIC may be NULL (the diagnostics want only the reservations): EXCLUDE
 * is then left empty. Returns 0 or -ENOMEM. */
int nt_agent_placement_hint(nt_agent *a, const nt_topology *t, const nt_nic *nic, json_t **reserved,
			    nt_cpuset *exclude, char *source, size_t ssize);
/* The profile in effect (agent/placement_hint.c): the desired state's
 * profile when one is set, else that of the newest transaction that took
 * effect, into *PROFILE (a new reference, the caller's; NULL when none),
 * and where it comes from ("the desired state", "transaction 3") into
 * SOURCE. For the diagnostics, which read from it what the host asked for
 * (dim-profile-default: latency). Returns 0. */
int nt_agent_profile_in_effect(nt_agent *a, json_t **profile, char *source, size_t ssize);

/* Where the agent placed host T's NIC IRQs (agent/verify.c), for the
 * delivery check (host/delivery.h): for each, the CPUs the newest
 * transaction that changed its affinity set, while that transaction's
 * changes stand (nt_txn_status_holds_changes), and "transaction N". *OUT
 * (malloc'd, the caller's; NULL when *N is 0). Without a store nothing is
 * placed. Returns 0 or -ENOMEM. */
struct nt_delivery_placed;
int nt_agent_placed_irqs(nt_agent *a, const nt_topology *t, struct nt_delivery_placed **out, int *n);
/* The same for NAPI threads (kind napi_thread_cpus): for each RX queue
 * of H's NICs (host/napi.h, the NAPIs of T read at the window's start)
 * whose thread's CPUs a standing transaction set, the target, the CPUs
 * and "transaction N", resolved to the thread serving the queue now
 * (nt_delivery_threads_resolve). *OUT as above. Returns 0 or -ENOMEM. */
struct nt_delivery_thread;
struct nt_host_napi;
int nt_agent_placed_threads(nt_agent *a, const nt_topology *t, const struct nt_host_napi *h,
			    struct nt_delivery_thread **out, int *n);

/* The delivery check a transaction asked for (agent/verify.c): over
 * windows of WINDOW_MS after transaction ID applied, where its applied
 * irq_affinity steps' IRQs delivered their interrupts, each step's verdict
 * appended to its observed text and the summary recorded as the
 * transaction's "delivery". ON_DELIVERY (a transaction waiting for
 * confirmation): check again while no placed IRQ fired, the deadline is
 * more than a window away and the checks took less than a minute; confirm it once every placed IRQ that fired was
 * delivered where planned, leave it to be reverted at its deadline when
 * one was not. NAPI threads the transaction placed (napi_thread_cpus)
 * count alike: where each ran in the window (host/delivery.h). Blocks for the windows: run it on a thread that may wait.
 * *DOC gets the transaction document after it (the caller's). Returns 0,
 * -ENOENT, NT_ESTORE or -ENOMEM. */
int nt_agent_txn_verify(nt_agent *a, int64_t id, int window_ms, bool on_delivery, json_t **doc);

/* The last delivery check (host/delivery.h's document) the agent made,
 * from GET /v1/verify or a transaction's check: NOTE keeps a copy with
 * "at_ms" (ms since the epoch) added; LAST hands a new copy, NULL when
 * none was made yet. Thread-safe. */
void nt_agent_note_delivery(nt_agent *a, const json_t *check, int64_t at_ms);
json_t *nt_agent_last_delivery(nt_agent *a);

/* HTTP requests answered, by method and status code (100..599), for
 * nettune_http_requests_total. Methods outside a fixed list count as
 * "other", so a client cannot create series at will. */
/* The name METHOD is counted under: "GET", ... or "other" (static storage). */
const char *nt_agent_http_method(const char *method);
void nt_agent_count_http(nt_agent *a, const char *method, int status);
/* Call FN for every (method, status) pair counted so far, with the count. */
void nt_agent_http_counts(nt_agent *a,
			  void (*fn)(void *ud, const char *method, int status, uint64_t n),
			  void *ud);

#endif
