/* The agent's HTTP server (libmicrohttpd). */
#ifndef NT_API_SERVER_H
#define NT_API_SERVER_H

#include "agent/ctx.h"
#include <stdbool.h>

typedef struct nt_server_config {
	char listen_addr[64]; /* "127.0.0.1" */
	int port; /* 8470; 0 picks a free port (tests) */
	char root[PATH_MAX]; /* host root, "/" live */
	char state_dir[PATH_MAX]; /* SQLite database and journal live here */
	int rtt_ms; /* for diagnostics */
} nt_server_config;

struct nt_server;

/* Start serving in background threads. Returns 0 or -errno; ERR receives a
 * message fit for an operator. */
int nt_server_start(const nt_server_config *cfg, struct nt_server **out, char *err, size_t errsize);
/* The port actually bound (useful with port 0). */
int nt_server_port(const struct nt_server *s);
const nt_ctx *nt_server_ctx(const struct nt_server *s);
const nt_server_config *nt_server_cfg(const struct nt_server *s);
void nt_server_stop(struct nt_server *s);

#endif
