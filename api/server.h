/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's HTTP server (libmicrohttpd). It serves an agent (see
 * agent/agent.h) it borrows: the server owns the listening socket, its
 * worker threads, the security material and per-area state; the engine,
 * the store and the log sink are the agent's.
 *
 *   nt_server_new      check the configuration, read tokens and TLS files
 *                      (nothing listens yet, nothing of the host is touched)
 *   nt_server_start    take the agent, set up the areas and listen
 *   nt_server_stop     stop listening and free; the agent stays open */
#ifndef NT_API_SERVER_H
#define NT_API_SERVER_H

#include "agent/agent.h"
#include "kernel/ctx.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct nt_server_config {
	char listen_addr[64]; /* "127.0.0.1" */
	int port; /* 8470; 0 picks a free port (tests) */
	int rtt_ms; /* for diagnostics */

	/* Who may call (see api/auth.h). Files are read once at start. With
	 * neither tokens nor a client CA the API is open, which is allowed
	 * only on a loopback listen address. */
	char tokens_path[PATH_MAX]; /* "" no tokens */
	char tls_cert[PATH_MAX]; /* PEM; with tls_key turns on HTTPS */
	char tls_key[PATH_MAX];
	char tls_client_ca[PATH_MAX]; /* PEM; client certificates signed by it are accepted */

	/* Limits; 0 takes the default. */
	size_t max_body; /* request body bytes (1 MiB) */
	unsigned client_timeout_s; /* idle or slow connection closed after (30 s) */
	/* Open connections at once (64); a quarter of them only for
	 * connections whose request head arrived (api/server_limits.c). */
	unsigned max_connections;
	unsigned max_per_client; /* ... from one client address (half of max_connections) */

	/* GET /metrics serves each queue's counters (qstats-get): a series
	 * per queue and counter, off by default (api/metrics.c). */
	bool metrics_queues;
} nt_server_config;

/* The access log goes to the agent's log sink, one event per request:
 * {"event":"access","method","path","status","duration_ms","identity",
 * "client"}. */

#define NT_DEFAULT_MAX_BODY ((size_t)1024 * 1024)
#define NT_DEFAULT_CLIENT_TIMEOUT_S 30u
#define NT_DEFAULT_MAX_CONNECTIONS 64u
/* The whole request head (request line and headers) must arrive within
 * this long of the connection opening or the previous answer, however
 * slowly it trickles (the client timeout alone restarts with every byte).
 * Never longer than the client timeout. */
#define NT_HEADER_DEADLINE_S 10u
/* Request bodies are refused before parsing when JSON nests deeper than
 * this, or holds more values (keys count as values). */
#define NT_JSON_MAX_DEPTH 32
#define NT_JSON_MAX_VALUES 100000L

struct nt_server;

/* A server for CFG (copied), not yet listening: the listen address, the
 * listen policy (no open API off loopback), the token file and TLS
 * material are checked and read here, so that a configuration that will be
 * refused is refused before the agent touches the host. Returns 0 or
 * -errno with a sentence for the operator in ERR; *OUT is the caller's
 * (nt_server_stop). */
int nt_server_new(const nt_server_config *cfg, struct nt_server **out, char *err,
		  size_t errsize);
/* Serve AGENT (borrowed until nt_server_stop) in background threads: the
 * areas' state is set up and the socket bound. Returns 0 or -errno with a
 * sentence in ERR; on failure S can be stopped (freed) as usual. */
int nt_server_start(struct nt_server *s, nt_agent *agent, char *err, size_t errsize);
/* Read the token file again (SIGHUP), so tokens can be rotated without a
 * restart; connections stay open and requests in flight finish with the
 * table they were checked against. The new file is checked as at start;
 * when it is refused the tokens in use stay. Returns the number of tokens
 * now in use, 0 when the server has no token file, or -errno / NT_EINVALID
 * with a sentence in ERR. Any thread. */
int nt_server_reload_tokens(struct nt_server *s, char *err, size_t errsize);
/* The port actually bound (useful with port 0). */
int nt_server_port(const struct nt_server *s);
nt_agent *nt_server_agent(const struct nt_server *s);
/* The agent's host context (shorthand for routes). */
const nt_ctx *nt_server_ctx(const struct nt_server *s);
const nt_server_config *nt_server_cfg(const struct nt_server *s);
/* Stop listening (waits for requests in progress) and free S. NULL is
 * allowed. */
void nt_server_stop(struct nt_server *s);
/* Whether the listen address ADDR (an IP literal, brackets allowed) is a
 * loopback address. */
bool nt_addr_is_loopback(const char *addr);

#endif
