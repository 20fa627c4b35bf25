/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the HTTP server: the server and per-request state shared by its
 * files, one per concern. Routes never include this; their interface is
 * api/http.h.
 *
 *   api/server.c         MHD lifecycle, the request pipeline, responses
 *   api/server_route.c   path splitting and decoding, route matching,
 *                        query parameter checks
 *   api/server_tls.c     TLS material, client certificate verification
 *   api/server_auth.c    who is calling and what they may do (with the
 *                        token file of api/auth.c), the listen policy
 *   api/server_limits.c  connections, body size and type, JSON pre-scan */
#ifndef NT_API_SERVER_INT_H
#define NT_API_SERVER_INT_H

#include "api/auth.h"

#include <pthread.h>
#include "api/http.h"
#include "api/server.h"

#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <time.h>

#define NT_MAX_SEGMENTS 16
#define NT_MAX_AREAS 8

struct nt_server {
	nt_server_config cfg;
	nt_agent *agent; /* borrowed, from nt_server_start to nt_server_stop */
	struct MHD_Daemon *daemon;
	struct sockaddr_storage addr; /* the listen address, port included */
	char host[64]; /* its text, brackets removed */
	bool ipv6;
	int port;
	void *state[NT_MAX_AREAS]; /* per area, see nt_area_state */
	bool inited[NT_MAX_AREAS];

	/* Limits (api/server_limits.c), defaults applied. */
	size_t max_body;
	unsigned max_conn, keepalive_max, timeout_s, threads, max_per_client, head_deadline_s;
	int nconn; /* open connections (atomic: updated by every worker thread) */
	/* Open connections and when their request head is due (under
	 * conn_lock); the reaper thread shuts down those past it. */
	pthread_mutex_t conn_lock;
	pthread_cond_t reaper_cond;
	pthread_t reaper;
	bool reaper_running, reaper_stop;
	struct nt_sock *socks;
	unsigned long reaped; /* connections cut at the deadline */
	/* Slots a connection without a whole request head yet cannot hold
	 * (api/server_limits.c, "the reserve"), those connections now, and how
	 * many were cut to keep the reserve free. */
	unsigned reserve, nfresh;
	unsigned long evicted;
	/* Free memory goes back to the kernel once the agent is idle (see
	 * nt_srv_trim_later): due, and not before trim_after. Under conn_lock. */
	bool trim_due;
	struct timespec trim_after;

	/* Security (api/server_auth.c, api/server_tls.c). */
	/* NULL: no tokens. Replaced by nt_server_reload_tokens under
	 * auth_lock (written there, read by every worker that checks a token);
	 * never goes from NULL to a table or back. */
	nt_auth *auth;
	pthread_rwlock_t auth_lock;
	bool auth_lock_init;
	bool tls, client_certs;
	char *tls_cert, *tls_key, *tls_ca; /* PEM text, kept while the daemon runs */

	/* Suspended requests waiting for their delay (api/server_defer.c). */
	pthread_t defer_thread;
	pthread_mutex_t defer_lock;
	pthread_cond_t defer_cond;
	struct nt_deferred *deferred; /* under defer_lock */
	int ndeferred;
	bool defer_running, defer_stop;
	/* Long requests running on threads of their own (nt_srv_run_long),
	 * under defer_lock; defer_cond is signalled when one ends. */
	int nlong;
};

/* A query with more parameters than this is refused with 400 before MHD
 * stores them (each costs a record in the connection's small memory pool;
 * thousands exhaust it and leave the request unanswered). No route takes
 * more than a handful. */
#define NT_MAX_QUERY_PARAMS 64

/* A request target longer than this gets 414, header fields larger than
 * this in all 431, both as problem documents from the request handler.
 * MHD answers a request head that does not fit the connection's memory
 * pool (NT_MHD_MEMORY_LIMIT, which also holds the response's headers)
 * itself, with its HTML page: the pool is sized well above the two so
 * that only heads of about that size get MHD's answer. The price: MHD
 * touches most of the pool of a connection kept alive (measured with 60
 * of them: 6 MB at 128 KiB, 3 MB at the former 64 KiB), given back when
 * the connection closes. */
#define NT_MAX_TARGET (8 * 1024)
#define NT_MAX_HEADER_BYTES (32 * 1024)
#define NT_MHD_MEMORY_LIMIT (128 * 1024)

/* At most this many requests wait suspended at once; more get 503. */
#define NT_MAX_DEFERRED 32
/* At most this many long requests run at once; more get 503. Transactions
 * exclude each other in the engine, so more than a few at a time only
 * collect 409s. */
#define NT_MAX_LONG 16

/* Per-request state, created from the raw request target before MHD parses
 * it and freed when MHD reports the request completed. */
struct nt_conn {
	char *uri; /* request target exactly as sent, query included */
	const char *raw_uri; /* where MHD's request line had the target (on_uri), only compared */
	char *path; /* uri up to '?' */
	int nquery; /* query parameters in uri, counted up to NT_MAX_QUERY_PARAMS + 1 */
	char *segs[NT_MAX_SEGMENTS]; /* decoded path segments */
	int nsegs; /* -1: the path can match no route */
	int nalloc; /* entries of segs to free */
	const nt_route *route;
	bool started; /* first handler call (headers parsed) done */
	bool done; /* a response is queued */
	bool overflow; /* body exceeded the server's max_body */
	char *body;
	size_t len, cap, seen;
	char client[INET6_ADDRSTRLEN];
	char allow[64]; /* Allow header of a 405 */
	struct timespec t0; /* request line received */
	const char *method; /* as counted and logged: "GET", ... or "other" */
	int status; /* of the queued response, 0 none */
	bool www_auth; /* a 401: add WWW-Authenticate */
	bool excess; /* over its address's share: Retry-After, Connection: close */
	nt_scope scope;
	char identity[512]; /* token name or certificate subject */
	nt_request req;
	/* A route that asked for a delay: its continuation and state. */
	nt_route_fn then;
	void *defer_state;
	void (*defer_free)(void *state);
	/* A long route run on its own thread: its answer, kept until the
	 * resumed connection sends it (long_done). */
	bool long_done;
	int long_rc;
	nt_response long_resp;
};

/* ---- routing (api/server_route.c) ---- */

/* Split c->path into decoded segments. Returns 0 (nsegs -1 when no route
 * can match), NT_EINVALID for a broken percent-encoding, or -ENOMEM. */
int nt_srv_split_path(struct nt_conn *c);
/* The route of AREAS (N of them) for METHOD on the request's path, with
 * c->req.params filled; HEAD is served by the GET route. NULL when none,
 * with ALLOW listing the methods the path has, if any. */
const nt_route *nt_srv_find_route(const nt_area *const *areas, int n, struct nt_conn *c,
				  const char *method, char *allow, size_t allowsize);
/* Check the query against the route's allowed parameters. Returns 0, or
 * NT_EINVALID with the offending name in BAD and *WHY telling whether it
 * was unknown, repeated or held a NUL byte (a %00) in its name or value. */
enum nt_query_fault { NT_QUERY_UNKNOWN, NT_QUERY_REPEATED, NT_QUERY_NUL };
int nt_srv_check_query(struct MHD_Connection *mc, const nt_route *route, char *bad,
		       size_t badsize, enum nt_query_fault *why);
/* The check of one argument, for nt_srv_check_query and its fuzz target:
 * Q starts with ROUTE, BAD and BADSIZE set and the rest zero, and is passed
 * every argument in turn (KEY and VALUE must stay valid while Q is used).
 * Returns 0, or NT_EINVALID with BAD and WHY set as above. */
struct nt_query_check {
	const nt_route *route;
	char *bad; /* first offending parameter */
	size_t badsize;
	enum nt_query_fault why;
	const char *seen[8];
	int nseen;
};
int nt_srv_query_arg(struct nt_query_check *q, const char *key, size_t key_size, const char *value,
		     size_t value_size);
/* Parameters in the query of the request target URI ('&'-separated
 * pieces, empty ones too: MHD stores those as well), counting no further
 * than LIMIT + 1. */
int nt_srv_count_query(const char *uri, int limit);

/* ---- deadlines of the server's timer threads (api/server_defer.c) ---- */

/* *DUE = now + MS on CLOCK_MONOTONIC, the clock the threads wait on. */
void nt_srv_due_in_ms(struct timespec *due, unsigned ms);
/* Whether A is earlier than B. */
bool nt_srv_ts_before(const struct timespec *a, const struct timespec *b);

/* ---- delayed requests (api/server_defer.c) ---- */

/* Start and stop the timer thread. Stop resumes every waiting connection
 * (MHD must not be stopped with one suspended). Init returns 0 or -errno. */
int nt_srv_defer_init(struct nt_server *s);
void nt_srv_defer_stop(struct nt_server *s);
void nt_srv_defer_fini(struct nt_server *s);
/* Suspend MC for MS milliseconds; MHD calls the request handler again
 * afterwards. Returns 0, -EBUSY when NT_MAX_DEFERRED wait already, or
 * -ENOMEM. */
int nt_srv_defer(struct nt_server *s, struct MHD_Connection *mc, unsigned ms);
/* Run route FN for C on a thread of its own with MC suspended; the thread
 * stores the answer in C (long_done, long_rc, long_resp) and resumes MC.
 * Returns 0, -EBUSY when NT_MAX_LONG run already or the server stops, or
 * -errno (MC is then not suspended). nt_srv_defer_stop waits for them. */
int nt_srv_run_long(struct nt_server *s, struct nt_conn *c, struct MHD_Connection *mc,
		    nt_route_fn fn);
/* Free what an answer not sent holds. */
void nt_srv_response_free(nt_response *r);

/* ---- TLS (api/server_tls.c) ---- */

/* Check the TLS options of s->cfg and read the PEM files they name into
 * s->tls_cert, tls_key, tls_ca; sets s->tls and s->client_certs. Returns 0
 * or -errno with a sentence in ERR. */
int nt_srv_tls_load(struct nt_server *s, char *err, size_t errsize);
/* Forget the PEM text (the key's bytes are wiped). */
void nt_srv_tls_free(struct nt_server *s);
/* The subject DN of the client's certificate when it verifies against the
 * configured CA. Returns 1 with the DN in DN, 0 when the client sent no
 * certificate, or -EACCES with the reason in WHY. */
int nt_srv_client_cert(struct MHD_Connection *mc, char *dn, size_t dnsize, char *why,
		       size_t whysize);

/* ---- authentication and authorization (api/server_auth.c) ---- */

/* Tokens, TLS material and the listen policy for listening on s->host.
 * Returns 0 or -errno with a sentence for the operator in ERR. */
int nt_srv_security_init(struct nt_server *s, char *err, size_t errsize);
void nt_srv_security_fini(struct nt_server *s);
/* Whether the server asks callers who they are at all. */
bool nt_srv_auth_required(const struct nt_server *s);
/* Establish who is calling (c->identity, c->scope). Returns 0, or -EACCES
 * with the reason for a 401 in WHY. */
int nt_srv_authenticate(struct nt_server *s, struct nt_conn *c, struct MHD_Connection *mc,
			char *why, size_t whysize);
/* Whether the caller's scope allows c->route. Returns 0 or -EPERM. */
int nt_srv_authorize(const struct nt_server *s, const struct nt_conn *c);

/* ---- limits (api/server_limits.c) ---- */

/* The answer to a connection over its address's share. */
#define NT_PROBLEM_BASE "https://nettune.dev/problems/"
#define NT_EXCESS_TYPE "too-many-connections"
#define NT_EXCESS_TITLE "Too many connections"
#define NT_EXCESS_DETAIL "too many connections are open from this address; try again shortly"
#define NT_EXCESS_RETRY_AFTER "1"

/* Apply the defaults of nt_server_config to s->max_body, max_conn, ... */
void nt_srv_limits_init(struct nt_server *s);
/* Start and stop the thread that shuts down connections whose request head
 * did not arrive by its deadline. Returns 0 or -errno. */
int nt_srv_reaper_start(struct nt_server *s);
void nt_srv_reaper_stop(struct nt_server *s);
/* The request head of MC arrived (it is being served: no deadline), or its
 * answer went out (the next head is due within the deadline). Arrived
 * says whether MC is over its address's share (--max-per-client): to be
 * answered NT_EXCESS_* (503, Retry-After) and closed, or already answered
 * that way when it opened (the handler then just closes it). */
enum nt_share { NT_SHARE_OK, NT_SHARE_EXCESS, NT_SHARE_ANSWERED };
enum nt_share nt_srv_head_arrived(struct nt_server *s, struct MHD_Connection *mc);
void nt_srv_request_done(struct nt_server *s, struct MHD_Connection *mc);
/* A big body was just freed: give free memory back to the kernel when no
 * request has been served for a moment (the reaper thread does it). */
void nt_srv_trim_later(struct nt_server *s);
/* MHD_OPTION_NOTIFY_CONNECTION: counts and tracks open connections. */
void nt_srv_on_connection(void *cls, struct MHD_Connection *mc, void **socket_ctx,
			  enum MHD_ConnectionNotificationCode code);
/* Whether a response should close its connection to free a slot. */
bool nt_srv_should_close(struct nt_server *s);
/* The body length the request declares (Content-Length; ULLONG_MAX when
 * unparsable), and in *HAS_BODY whether it has one at all (chunked ones
 * declare none). */
unsigned long long nt_srv_declared_length(struct MHD_Connection *mc, bool *has_body);
/* How the body is framed, checked before anything else: Content-Length
 * headers that disagree or sit beside a Transfer-Encoding give -EBADMSG
 * (400), a Transfer-Encoding other than one "chunked" -ENOSYS (501); the
 * reason in WHY. Returns 0 when the framing is one MHD reads as sent. */
int nt_srv_check_framing(struct MHD_Connection *mc, char *why, size_t whysize);
/* Whether a Content-Type header value is application/json. */
bool nt_srv_is_json_type(const char *ct);
/* Add N bytes of body. Past max_body the rest is counted and dropped
 * (c->overflow); returns -EFBIG when the client keeps sending long after,
 * -ENOMEM, or 0. */
int nt_srv_append_body(struct nt_conn *c, size_t max, const char *data, size_t n);
/* Refuse JSON that would cost the parser much before it is parsed.
 * Returns 0 or NT_EINVALID with the reason in WHY. */
int nt_srv_json_prescan(const char *p, size_t n, int max_depth, long max_values, char *why,
			size_t whysize);

#endif
