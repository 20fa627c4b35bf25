/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP layer's internal interface: a request as routes see it, the
 * response they build, and the route table. Route handlers live in
 * api/routes_*.c, one file per area (read, profiles/transactions, ...),
 * each exporting a NULL-terminated table that api/server.c registers. */
#ifndef NT_API_HTTP_H
#define NT_API_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nt_server;

typedef struct nt_request {
	const char *method; /* "GET", "POST", ... */
	const char *path; /* "/v1/nics/eth0" (no query string) */
	const char *params[4]; /* path parameters captured by "{...}" segments */
	int nparams;
	void *conn; /* struct MHD_Connection *, for query args and headers */
	const char *body; /* request body, NUL-terminated, NULL when empty */
	size_t body_len;
	const char *client; /* client address as text */
	const char *identity; /* authenticated identity, "" when none */
	struct nt_server *server;
	void *defer_state; /* in a continuation (nt_response.then): the route's state */
} nt_request;

typedef struct nt_response {
	int status;
	json_t *json; /* body (owned; freed by the server) */
	const char *content_type; /* default application/json */
	char *text; /* a non-JSON body (malloc'd, owned) instead of json */
	/* Instead of either: a body the route shares rather than owns (a
	 * snapshot's document, the same bytes for every request that read
	 * it), SHARED_LEN bytes kept alive until the server calls
	 * RELEASE(RELEASE_CLS), once the body is sent or dropped. */
	const char *shared;
	size_t shared_len;
	void (*release)(void *cls);
	void *release_cls;
	char location[256]; /* Location header when non-empty */
	/* A route that must wait (a measurement over an interval) sets
	 * defer_ms, then and defer_state instead of a body: the server
	 * suspends the request without holding a worker thread and calls
	 * THEN after defer_ms with req->defer_state set, which answers.
	 * The server owns DEFER_STATE from then on and frees it with
	 * DEFER_FREE after THEN or when the request ends without it. */
	unsigned defer_ms;
	int (*then)(const struct nt_request *req, struct nt_response *resp);
	void *defer_state;
	void (*defer_free)(void *state);
	/* Content-Security-Policy of a page (static string), NULL for none; with
	 * it the server also sends X-Content-Type-Options: nosniff. */
	const char *security_policy;
	/* Preference-Applied header (RFC 7240), a static string, or NULL. */
	const char *preference_applied;
} nt_response;

typedef int (*nt_route_fn)(const nt_request *req, nt_response *resp);

typedef struct nt_route {
	const char *method;
	const char *pattern; /* "/v1/nics/{name}" */
	nt_route_fn fn;
	const char *const *query; /* NULL-terminated allowed query parameters, NULL for none */
	/* NT_ROUTE_LONG: FN may take seconds (a transaction: a driver resets
	 * for a ring change; the journal waits for a locked database). It
	 * runs on a thread of its own while the connection is suspended, so
	 * the worker thread goes on serving its other connections. */
	unsigned flags;
} nt_route;
#define NT_ROUTE_LONG 1u
/* NT_ROUTE_READ: a POST that changes nothing (a plan), so a token of
 * scope read may call it, as it may every GET. */
#define NT_ROUTE_READ 2u

/* Drop whatever body RESP holds (json, text, or a shared body, released). */
void nt_response_drop_body(nt_response *resp);

/* Fill RESP with an RFC 9457 problem document. TYPE is a short slug
 * ("not-found", "bad-request", ...) made into "https://nettune.dev/problems/SLUG".
 * Sets content_type to application/problem+json; the server adds "instance"
 * (the request path). Returns 0 (-ENOMEM when out of memory), so a route can
 * end with `return nt_problem(...)`. A route that returns -errno without
 * having set a problem is answered with a 500 problem. */
int nt_problem(nt_response *resp, int status, const char *type, const char *title,
	       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* A JSON string of S, which may hold client bytes: invalid UTF-8 is made
 * ASCII-safe ('?') instead of failing. New reference; NULL when out of memory. */
json_t *nt_json_string_safe(const char *s);

/* Query parameter of the request, NULL when absent, "" when given without a
 * value ("?x"). */
const char *nt_query(const nt_request *req, const char *name);
/* Integer query parameter NAME in [LO, HI]; DEF when absent. Returns 0,
 * or NT_EINVALID when present but not a plain decimal in range. */
int nt_query_int(const nt_request *req, const char *name, int lo, int hi, int def, int *out);
/* The same for the value S as MHD hands it over (NULL: absent, DEF). */
int nt_query_parse_int(const char *s, int lo, int hi, int def, int *out);
/* Read the host for one request (one nt_topology_read). On failure RESP
 * holds a 500 problem and *T stays NULL; returns 0 or -errno. */
struct nt_topology;
int nt_route_read_host(const nt_request *req, nt_response *resp, struct nt_topology **t);
/* Request header, or NULL. */
const char *nt_header(const nt_request *req, const char *name);

/* An area of the API: its routes and, optionally, state of its own created
 * at server start (a cache, a rate limiter). What the whole agent shares
 * (the host context, the transaction engine, the store, the log sink and
 * request counters) is the agent's, not an area's: a route reaches it with
 * nt_server_agent(req->server) (api/server.h, agent/agent.h).
 * api/server.c lists the areas it serves in one table; a route reaches its
 * area's state with nt_area_state(req->server, &nt_area_x). */
typedef struct nt_area {
	const char *name;
	/* Called once at start, before listening, with the agent already
	 * open. Returns 0 or -errno; ERR gets a message for the operator
	 * (start-up is refused). May be NULL. */
	int (*init)(struct nt_server *s, void **state, char *err, size_t errsize);
	void (*fini)(void *state);
	const nt_route *routes; /* terminated by an entry with method NULL */
} nt_area;

void *nt_area_state(struct nt_server *s, const nt_area *area);

/* The areas (defined in api/routes_*.c). */
extern const nt_area nt_area_read; /* health, topology, nics, irqs, diagnostics */
extern const nt_area nt_area_txn; /* profiles, plan, transactions */
extern const nt_area nt_area_desired; /* desired state, drift (api/routes_desired.c) */
extern const nt_area nt_area_place; /* placement, live IRQ rates */
extern const nt_area nt_area_verify; /* the delivery check (api/routes_verify.c) */
extern const nt_area nt_area_doc; /* GET /v1/openapi.yaml (api/routes_doc.c) */
extern const nt_area nt_area_metrics; /* GET /metrics (api/metrics.c) */
extern const nt_area nt_area_ui; /* GET /ui/: the web view (api/routes_ui.c) */

#endif
