/* SPDX-License-Identifier: Apache-2.0 */
/* Talking to a running irqbalance, which keeps rewriting IRQ affinity, so
 * manual affinity fails unless it is stopped or told to leave those IRQs
 * alone (docs/field-reports.md#irqbalance-rewrites).
 *
 * irqbalance (>= 1.2) listens on a unix stream socket: the file
 * /run/irqbalance/irqbalance<PID>.sock when /run/irqbalance exists (systemd's
 * RuntimeDirectory), otherwise an abstract socket whose name is all zero
 * bytes. Each connection carries one command with SCM_CREDENTIALS of a
 * root sender:
 *   "setup"                    -> "SLEEP n IRQ i LOAD l DIFF d CLASS c ... BANNED mask"
 *   "settings ban irqs 1 2 3"  -> replaces the whole list of banned IRQs
 *   "settings ban irqs NONE"   -> clears it
 * Banned IRQs keep whatever affinity they are given. */
#ifndef NT_IRQBALANCE_H
#define NT_IRQBALANCE_H

#include "kernel/ctx.h"

#include <pthread.h>
#include <stddef.h>

typedef struct nt_irqbalance_proc {
	int pid; /* 0 when not running */
	char socket_path[PATH_MAX]; /* "" for the abstract socket */
	char cmdline[1024]; /* argv joined with spaces, to start it again */
	bool systemd; /* the host runs systemd (unit irqbalance.service) */
} nt_irqbalance_proc;

/* Whether irqbalance can be controlled under CTX: only on the live host.
 * A fixture root may show a daemon in its captured /proc (and
 * nt_irqbalance_find reports it), but there is no socket to talk to nor a
 * process to stop. Returns 0, or -EOPNOTSUPP with the reason in ERR (which
 * may be NULL). */
int nt_irqbalance_controllable(const nt_ctx *ctx, char *err, size_t errsize);

/* Find the running daemon on the live host: by its socket file, else
 * among every process. Returns 0 (P->pid is 0 when none runs) or -errno. */
int nt_irqbalance_find(const nt_ctx *ctx, nt_irqbalance_proc *p);

/* What the last search among every process found, for a caller that
 * searches on every read of the host (the agent). That search reads the
 * name of every process: on a big host thousands of them (its kernel
 * threads alone are several per CPU), more calls than the rest of a read,
 * and in the case nettune is for (irqbalance stopped) it finds nothing
 * every time. */
typedef struct nt_irqbalance_memo {
	pthread_mutex_t mu;
	int max_age_ms; /* how long a search that found none stands */
	bool scanned;
	int64_t scanned_ms; /* CLOCK_MONOTONIC */
	int pid; /* the daemon last found (by search or socket), 0 for none */
} nt_irqbalance_memo;

/* max_age_ms as nt_irqbalance_memo_init sets it. */
#define NT_IRQBALANCE_SCAN_MS 5000

void nt_irqbalance_memo_init(nt_irqbalance_memo *m);
void nt_irqbalance_memo_destroy(nt_irqbalance_memo *m);
/* The daemon is known to run as PID (the agent just started it): the
 * search that found none no longer stands. M may be NULL. */
void nt_irqbalance_memo_found(nt_irqbalance_memo *m, int pid);

/* nt_irqbalance_find, searching among every process no more than once per
 * M->max_age_ms while none is found (M keeps the last search): a daemon
 * with its socket file (every irqbalance under systemd) is found at once
 * as before; one found is checked again by its PID at each call (searched
 * for again when gone); one without its socket file (no /run/irqbalance:
 * an abstract socket) started since the last search is found within
 * M->max_age_ms. M NULL: nt_irqbalance_find. */
int nt_irqbalance_find_memo(const nt_ctx *ctx, nt_irqbalance_memo *m, nt_irqbalance_proc *p);

/* Send CMD and read the reply (if any) into REPLY. Returns the reply
 * length or -errno (-ECONNREFUSED, -ENOENT when no daemon listens). */
int nt_irqbalance_command(const nt_irqbalance_proc *p, const char *cmd, char *reply, size_t size);

/* Parse the IRQ numbers out of a "setup" reply, ascending, into a
 * space-separated list ("" for none). Pure. Returns 0 or NT_EPARSE. */
int nt_irqbalance_parse_banned(const char *setup_reply, char *list, size_t size);

/* Stop the daemon. On a systemd host: StopUnit irqbalance.service over
 * D-Bus (sd-bus), so systemd knows it is stopped; elsewhere SIGTERM and
 * up to 5 s for it to exit. ERR gets systemd's error text. The caller
 * keeps P (cmdline) to start it again. Returns 0 or -errno. */
int nt_irqbalance_stop(const nt_irqbalance_proc *p, char *err, size_t errsize);
/* Start it again: StartUnit on a systemd host (CMDLINE "systemd"),
 * otherwise from the recorded command line (detached, in its own session,
 * stdio on /dev/null). Returns 0 or -errno. */
int nt_irqbalance_start(const char *cmdline, char *err, size_t errsize);

#endif
