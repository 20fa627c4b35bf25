/* The agent's HTTP server (libmicrohttpd). */
#ifndef NT_API_SERVER_H
#define NT_API_SERVER_H

#include "kernel/ctx.h"
#include "engine/txn.h" /* nt_log_fn */
#include <stdbool.h>
#include <stddef.h>

typedef struct nt_server_config {
	char listen_addr[64]; /* "127.0.0.1" */
	int port; /* 8470; 0 picks a free port (tests) */
	char root[PATH_MAX]; /* host root, "/" live */
	char state_dir[PATH_MAX]; /* SQLite database and journal live here */
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
	unsigned max_connections; /* open connections at once (64) */

	/* Structured events (access log, transaction steps), or NULL. Access
	 * events are {"event":"access","method","path","status","duration_ms",
	 * "identity","client"}; see nt_txn_engine_set_log for the others. */
	nt_log_fn log;
	void *log_ud;
} nt_server_config;

#define NT_DEFAULT_MAX_BODY ((size_t)1024 * 1024)
#define NT_DEFAULT_CLIENT_TIMEOUT_S 30u
#define NT_DEFAULT_MAX_CONNECTIONS 64u
/* Request bodies are refused before parsing when JSON nests deeper than
 * this, or holds more values (keys count as values). */
#define NT_JSON_MAX_DEPTH 32
#define NT_JSON_MAX_VALUES 100000L

struct nt_server;

/* Start serving in background threads. Returns 0 or -errno; ERR receives a
 * message fit for an operator. */
int nt_server_start(const nt_server_config *cfg, struct nt_server **out, char *err, size_t errsize);
/* The port actually bound (useful with port 0). */
int nt_server_port(const struct nt_server *s);
const nt_ctx *nt_server_ctx(const struct nt_server *s);
const nt_server_config *nt_server_cfg(const struct nt_server *s);
void nt_server_stop(struct nt_server *s);
/* Whether the listen address ADDR (an IP literal, brackets allowed) is a
 * loopback address. */
bool nt_addr_is_loopback(const char *addr);

#endif
