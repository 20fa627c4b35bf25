/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's HTTP server on libmicrohttpd: its lifecycle, the request
 * pipeline (route, authenticate, check limits, read the body, call the
 * route) and turning nt_response into HTTP. Every request is treated as
 * hostile input; the concerns on the way are in their own files (see
 * api/server_int.h). */
#include "api/server_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The areas served, in start-up order: the read area first because the
 * others may rely on nothing but the context, never the reverse. */
static const nt_area *const areas[] = { &nt_area_read, &nt_area_place, &nt_area_txn,
					&nt_area_desired, &nt_area_verify, &nt_area_metrics, &nt_area_doc,
					&nt_area_ui };
#define NAREAS ((int)(sizeof(areas) / sizeof(areas[0])))
_Static_assert(NAREAS <= NT_MAX_AREAS, "raise NT_MAX_AREAS");

void *nt_area_state(struct nt_server *s, const nt_area *area)
{
	for (int i = 0; s && i < NAREAS; i++)
		if (areas[i] == area)
			return s->state[i];
	return NULL;
}

int nt_server_port(const struct nt_server *s)
{
	return s->port;
}

nt_agent *nt_server_agent(const struct nt_server *s)
{
	return s->agent;
}

const nt_ctx *nt_server_ctx(const struct nt_server *s)
{
	return nt_agent_ctx(s->agent);
}

const nt_server_config *nt_server_cfg(const struct nt_server *s)
{
	return &s->cfg;
}

/* ---- per-request state ---- */

static struct nt_conn *conn_new(const char *uri)
{
	struct nt_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->uri = strdup(uri ? uri : "");
	c->path = strdup(uri ? uri : "");
	if (!c->uri || !c->path) {
		free(c->uri);
		free(c->path);
		free(c);
		return NULL;
	}
	char *q = strchr(c->path, '?');
	if (q)
		*q = '\0';
	clock_gettime(CLOCK_MONOTONIC, &c->t0);
	return c;
}

static void conn_free(struct nt_conn *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nalloc; i++)
		free(c->segs[i]);
	free(c->uri);
	free(c->path);
	free(c->body);
	if (c->defer_state && c->defer_free)
		c->defer_free(c->defer_state);
	if (c->long_done)
		nt_srv_response_free(&c->long_resp);
	free(c);
}

int nt_srv_count_query(const char *uri, int limit)
{
	const char *q = strchr(uri, '?');
	if (!q || !q[1])
		return 0;
	int n = 1;
	for (q++; *q && n <= limit; q++)
		if (*q == '&')
			n++;
	return n;
}

/* MHD hands the raw request target here before it unescapes it; the object
 * returned becomes the request's *con_cls. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *mc)
{
	struct nt_conn *c = conn_new(uri);
	if (!c)
		return NULL;
	c->raw_uri = uri;
	c->nquery = nt_srv_count_query(c->uri, NT_MAX_QUERY_PARAMS);
	if (c->nquery > NT_MAX_QUERY_PARAMS) {
		/* MHD calls this with the request line in its own (writable)
		 * read buffer, having already found the '?', and then parses
		 * the arguments from just after it into its per-connection
		 * pool, which thousands of them exhaust: the request is then
		 * never answered. Ending the query right after the '?' leaves
		 * it nothing to parse; begin() answers 400 from the count, and
		 * c->uri keeps the request as sent. */
		char *q = strchr(uri, '?');
		if (q)
			q[1] = '\0';
	}
	return c;
}

/* One access event per request that got as far as its headers: what was
 * asked, by whom, how it was answered (status 0: no answer, the connection
 * was dropped) and how long it took. Never a header value: those may hold
 * secrets. */
static void log_access(struct nt_server *s, struct nt_conn *c)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Whole microseconds, as milliseconds. */
	long long us = (long long)(t1.tv_sec - c->t0.tv_sec) * 1000000LL +
		       (t1.tv_nsec - c->t0.tv_nsec) / 1000;
	double ms = (double)us / 1000.0;
	json_t *ev = json_pack("{s:s, s:s, s:o, s:i, s:f, s:o, s:s}", "event", "access", "method",
			       c->method, "path", nt_json_string_safe(c->path), "status", c->status,
			       "duration_ms", ms, "identity", nt_json_string_safe(c->identity),
			       "client", c->client);
	nt_agent_log(s->agent, ev);
	json_decref(ev);
}

static void on_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct nt_server *s = cls;
	struct nt_conn *c = *con_cls;
	if (c && c->started && nt_agent_log_enabled(s->agent))
		log_access(s, c);
	nt_srv_request_done(s, mc);
	conn_free(c);
	*con_cls = NULL;
}

/* ---- responses ---- */

/* A body this big came from a read of a big host (the host model, its
 * IRQs, findings) or a big transaction: megabytes were allocated for it,
 * and malloc keeps free memory in its arenas until told. Once it is sent,
 * the reaper thread is asked to give memory back when the agent goes idle
 * (nt_srv_trim_later), which brings the agent back to its idle size; small
 * answers (health, a transaction) never ask. */
#define NT_TRIM_AFTER_BYTES (64 * 1024)

/* What MHD calls back once it is done with a body: the owned one freed,
 * or the shared one released; a big one asks for the trim. */
struct body_ref {
	struct nt_server *s; /* NULL: not big */
	char *owned;
	void (*release)(void *cls);
	void *release_cls;
};

static void body_done(void *cls)
{
	struct body_ref *b = cls;
	free(b->owned);
	if (b->release)
		b->release(b->release_cls);
	if (b->s)
		nt_srv_trim_later(b->s);
	free(b);
}

static void add_instance(nt_response *r, const char *path)
{
	if (!r->json || !json_is_object(r->json) || json_object_get(r->json, "instance"))
		return;
	json_t *j = nt_json_string_safe(path);
	if (j)
		json_object_set_new(r->json, "instance", j);
}

/* Queue R on the connection; R's body is consumed. */
static enum MHD_Result send_response(struct MHD_Connection *mc, struct nt_conn *c,
				     nt_response *r)
{
	struct nt_server *s = c->req.server;
	char *body = NULL;
	size_t len = 0;
	const char *ctype = r->content_type;
	enum MHD_Result ret = MHD_NO;
	bool want_json;

	if (r->status < 100 || r->status > 599)
		nt_problem(r, 500, "internal", "Internal error",
			   "a route produced no valid status");
	/* Problem documents name the request; a document of the route's own
	 * schema answered with an error status (a degraded health) does not. */
	if (r->status >= 400 && r->json && r->content_type &&
	    strcmp(r->content_type, "application/problem+json") == 0)
		add_instance(r, c->path);
	want_json = !r->text && !r->shared && r->json;
	/* A shared body and its release are this function's from here: the
	 * response's fields no longer name them. */
	void (*release)(void *) = r->release;
	void *release_cls = r->release_cls;
	const char *shared_body = r->shared;
	r->shared = NULL;
	r->release = NULL;

	if (shared_body) {
		free(r->text); /* a route sets one body; any other is dropped */
		r->text = NULL;
		len = r->shared_len;
		if (!ctype)
			ctype = "application/json";
	} else if (r->text) {
		body = r->text;
		r->text = NULL;
		len = strlen(body);
		if (!ctype)
			ctype = "text/plain; charset=utf-8";
	} else if (r->json) {
		/* The same flags as `nettune topology --json`, so the API and the
		 * CLI print the same document byte for byte. */
		body = json_dumps(r->json, JSON_INDENT(2) | JSON_SORT_KEYS);
		if (body) {
			len = strlen(body);
			char *nb = realloc(body, len + 2);
			if (nb) {
				body = nb;
				body[len++] = '\n';
				body[len] = '\0';
			}
		}
		if (!ctype)
			ctype = "application/json";
	}
	json_decref(r->json);
	r->json = NULL;

	struct MHD_Response *resp;
	/* A shared body, and an owned one big enough to ask for the trim, go
	 * to MHD with a body_ref: released or freed, and the trim asked for,
	 * once MHD is done with it. */
	bool big = len >= NT_TRIM_AFTER_BYTES;
	struct body_ref *ref = shared_body || (body && big) ? malloc(sizeof(*ref)) : NULL;
	if (ref) {
		*ref = (struct body_ref){ big ? s : NULL, body, release, release_cls };
		resp = MHD_create_response_from_buffer_with_free_callback_cls(
			len, shared_body ? (void *)shared_body : body, body_done, ref);
		if (!resp)
			body_done(ref);
	} else if (shared_body) {
		/* Out of memory: the connection is dropped. */
		if (release)
			release(release_cls);
		return MHD_NO;
	} else if (body) {
		resp = MHD_create_response_from_buffer_with_free_callback(len, body, free);
		if (!resp)
			free(body);
	} else if (want_json) {
		/* A body was meant but could not be encoded (out of memory). */
		static const char oom[] = "{\"type\":\"https://nettune.dev/problems/internal\","
					  "\"title\":\"Internal error\",\"status\":500,"
					  "\"detail\":\"response could not be encoded\"}\n";
		r->status = 500;
		ctype = "application/problem+json";
		resp = MHD_create_response_from_buffer(sizeof(oom) - 1, (void *)oom,
						       MHD_RESPMEM_PERSISTENT);
	} else {
		resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	}
	if (!resp)
		return MHD_NO;
	if (ctype)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (r->location[0])
		MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, r->location);
	if (r->preference_applied)
		MHD_add_response_header(resp, "Preference-Applied", r->preference_applied);
	if (r->security_policy) {
		MHD_add_response_header(resp, "Content-Security-Policy", r->security_policy);
		MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	}
	if (r->status == 405 && c->allow[0])
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, c->allow);
	if (r->status == 401 && c->www_auth)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"nettune\"");
	if (c->excess)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, NT_EXCESS_RETRY_AFTER);
	if (c->excess || (s && nt_srv_should_close(s)))
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	/* State of the host changes under the agent; nothing is cacheable. */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(mc, (unsigned int)r->status, resp);
	MHD_destroy_response(resp);
	c->done = true;
	c->status = r->status;
	if (s)
		nt_agent_count_http(s->agent, c->method, r->status);
	return ret;
}

static enum MHD_Result send_problem(struct MHD_Connection *mc, struct nt_conn *c, int status,
				    const char *type, const char *title, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static enum MHD_Result send_problem(struct MHD_Connection *mc, struct nt_conn *c, int status,
				    const char *type, const char *title, const char *fmt, ...)
{
	nt_response r = { 0 };
	char detail[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	nt_problem(&r, status, type, title, "%s", detail);
	return send_response(mc, c, &r);
}

/* ---- the request pipeline ---- */

static bool method_is(const char *m, const char *want)
{
	return strcmp(m, want) == 0;
}

struct header_count {
	const char *name;
	int n;
};

static enum MHD_Result header_count_cb(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct header_count *h = cls;
	h->n += key && !strcasecmp(key, h->name);
	return MHD_YES;
}

static enum MHD_Result header_bytes_cb(void *cls, enum MHD_ValueKind kind, const char *key,
				      const char *value)
{
	size_t *n = cls;
	*n += (key ? strlen(key) : 0) + (value ? strlen(value) : 0) + 4; /* ": ", CRLF */
	return MHD_YES;
}

/* The size of the request's header fields as sent (near enough: spaces
 * around values are not counted). */
static size_t header_bytes(struct MHD_Connection *mc)
{
	size_t n = 0;
	MHD_get_connection_values(mc, MHD_HEADER_KIND, header_bytes_cb, &n);
	return n;
}

/* How many times the request has header NAME. */
static int header_count(struct MHD_Connection *mc, const char *name)
{
	struct header_count h = { name, 0 };
	MHD_get_connection_values(mc, MHD_HEADER_KIND, header_count_cb, &h);
	return h.n;
}

/* First call, headers parsed: route and check everything that does not need
 * the body, answering early so an unwanted body is never read. */
static enum MHD_Result begin(struct nt_server *s, struct nt_conn *c, struct MHD_Connection *mc,
			     const char *method, const char *version)
{
	/* MHD cuts the method at a NUL byte ("GET\0" would be served as
	 * GET): the target must start right after the method and its one
	 * space. */
	if (c->raw_uri && c->raw_uri != method + strlen(method) + 1)
		return send_problem(mc, c, 400, "bad-request", "Bad request",
				    "the request line's method is malformed");
	if (c->nquery > NT_MAX_QUERY_PARAMS)
		return send_problem(mc, c, 400, "bad-request", "Bad request",
				    "the query has more than %d parameters; at most %d query "
				    "parameters are accepted",
				    NT_MAX_QUERY_PARAMS, NT_MAX_QUERY_PARAMS);
	/* The agent's own limits, far below MHD's memory limit, so that
	 * these are answered here as problem documents (a query of too many
	 * parameters has its own answer, above, however long). */
	if (strlen(c->uri) > NT_MAX_TARGET)
		return send_problem(mc, c, 414, "uri-too-long", "URI too long",
				    "the request target is longer than %d bytes", NT_MAX_TARGET);
	if (header_bytes(mc) > NT_MAX_HEADER_BYTES)
		return send_problem(mc, c, 431, "header-fields-too-large",
				    "Request header fields too large",
				    "the request's header fields are larger than %d bytes in all",
				    NT_MAX_HEADER_BYTES);
	/* RFC 9112 3.2: a request of HTTP/1.1 without Host is answered 400. */
	if (version && !strcmp(version, MHD_HTTP_VERSION_1_1) &&
	    !MHD_lookup_connection_value(mc, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST))
		return send_problem(mc, c, 400, "bad-request", "Bad request",
				    "an HTTP/1.1 request needs a Host header");
	int r = nt_srv_split_path(c);
	if (r == -ENOMEM)
		return MHD_NO;
	if (r < 0)
		return send_problem(mc, c, 400, "bad-request", "Bad request",
				    "the path has an invalid percent-encoding");

	char why[256] = "";
	r = nt_srv_check_framing(mc, why, sizeof(why));
	if (r == -ENOSYS)
		return send_problem(mc, c, 501, "not-implemented", "Not implemented", "%s", why);
	if (r < 0)
		return send_problem(mc, c, 400, "bad-request", "Bad request", "%s", why);

	if (nt_srv_authenticate(s, c, mc, why, sizeof(why)) < 0) {
		c->www_auth = true;
		return send_problem(mc, c, 401, "unauthorized", "Unauthorized", "%s", why);
	}

	bool has_body;
	unsigned long long clen = nt_srv_declared_length(mc, &has_body);
	/* Before routing: an oversized body is refused wherever it is sent,
	 * and answering now means it is never read. */
	if (clen > s->max_body)
		return send_problem(mc, c, 413, "payload-too-large", "Payload too large",
				    "request bodies are limited to %zu bytes", s->max_body);
	c->route = nt_srv_find_route(areas, NAREAS, c, method, c->allow, sizeof(c->allow));
	if (!c->route) {
		if (c->allow[0])
			return send_problem(mc, c, 405, "method-not-allowed",
					    "Method not allowed", "%s is not allowed here; allowed: %s",
					    method, c->allow);
		return send_problem(mc, c, 404, "not-found", "Not found",
				    "no such resource");
	}
	if (nt_srv_authorize(s, c) < 0)
		return send_problem(mc, c, 403, "forbidden", "Forbidden",
				    "%s %s needs a token with scope 'apply'; '%s' has 'read'",
				    method, c->path, c->identity);

	char bad[128];
	enum nt_query_fault qf;
	if (nt_srv_check_query(mc, c->route, bad, sizeof(bad), &qf) < 0)
		return send_problem(mc, c, 400, "bad-request", "Bad request",
				    qf == NT_QUERY_REPEATED ? "query parameter '%s' is given more than once" :
				    qf == NT_QUERY_NUL	    ? "query parameter '%s' holds a NUL byte (%%00)" :
							      "unknown query parameter '%s'",
				    bad);
	/* Which of two keys would count? Refused rather than one ignored. */
	if (header_count(mc, "Idempotency-Key") > 1)
		return send_problem(mc, c, 400, "bad-request", "Bad request",
				    "the Idempotency-Key header is given more than once");

	if (has_body && (method_is(method, "POST") || method_is(method, "PUT") ||
			 method_is(method, "PATCH"))) {
		const char *ct = MHD_lookup_connection_value(mc, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_TYPE);
		if (!nt_srv_is_json_type(ct))
			return send_problem(mc, c, 415, "unsupported-media-type",
					    "Unsupported media type",
					    "request bodies must be application/json");
	}

	c->req.method = c->route->method;
	c->req.path = c->path;
	c->req.conn = mc;
	c->req.client = c->client;
	c->req.identity = c->identity;
	c->req.server = s;
	return MHD_YES;
}

static void client_address(struct MHD_Connection *mc, char *buf, size_t size)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!ci || !ci->client_addr)
		return;
	const struct sockaddr *sa = ci->client_addr;
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, size);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, size);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *mc, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct nt_server *s = cls;
	struct nt_conn *c = *con_cls;

	if (!c) {
		/* Only when MHD did not call on_uri; fall back to its decoded url. */
		c = conn_new(url);
		if (!c)
			return MHD_NO;
		*con_cls = c;
	}
	if (!c->started) {
		c->started = true;
		c->req.server = s; /* before anything may answer early */
		c->method = nt_agent_http_method(method);
		/* Before anything may answer, so that every access is logged
		 * with its client. */
		client_address(mc, c->client, sizeof(c->client));
		enum nt_share share = nt_srv_head_arrived(s, mc);
		if (share == NT_SHARE_ANSWERED) {
			/* Its 503 went out when it opened; the request has
			 * been read, so closing now sends no reset. */
			c->status = 503;
			nt_agent_count_http(s->agent, c->method, 503);
			return MHD_NO;
		}
		if (share == NT_SHARE_EXCESS) {
			/* Before anything else: the connection is refused, not
			 * the request. */
			c->excess = true;
			return send_problem(mc, c, 503, NT_EXCESS_TYPE, NT_EXCESS_TITLE, "%s",
					    NT_EXCESS_DETAIL);
		}
		return begin(s, c, mc, method, version);
	}
	if (c->done) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (*upload_size) {
		if (nt_srv_append_body(c, s->max_body, upload, *upload_size) < 0)
			return MHD_NO;
		*upload_size = 0;
		return MHD_YES;
	}
	if (c->overflow)
		return send_problem(mc, c, 413, "payload-too-large", "Payload too large",
				    "request bodies are limited to %zu bytes", s->max_body);

	c->req.body = c->len ? c->body : NULL;
	c->req.body_len = c->len;
	if (c->len) {
		char why[128];
		if (nt_srv_json_prescan(c->body, c->len, NT_JSON_MAX_DEPTH, NT_JSON_MAX_VALUES, why,
					sizeof(why)) < 0)
			return send_problem(mc, c, 400, "bad-request", "Bad request",
					    "the JSON body is refused: %s", why);
	}

	nt_response resp = { 0 };
	int r;
	if (c->long_done) {
		/* Resumed by the long route's own thread, with its answer. */
		resp = c->long_resp;
		r = c->long_rc;
		c->long_done = false;
	} else if (c->then) {
		/* Resumed after the delay the route asked for. */
		nt_route_fn then = c->then;
		c->then = NULL;
		c->req.defer_state = c->defer_state;
		r = then(&c->req, &resp);
	} else if (c->route->flags & NT_ROUTE_LONG) {
		r = nt_srv_run_long(s, c, mc, c->route->fn);
		if (r == 0)
			return MHD_YES;
		if (r == -EBUSY)
			return send_problem(mc, c, 503, "busy", "Busy",
					    "too many transactions are in progress, or the agent is stopping; try again shortly");
		return send_problem(mc, c, 503, "busy", "Busy",
				    "no thread could be started for this transaction (%s); nothing was applied",
				    strerror(-r));
	} else {
		r = c->route->fn(&c->req, &resp);
	}
	if (r == 0 && resp.defer_ms && resp.then) {
		if (c->defer_state && c->defer_free)
			c->defer_free(c->defer_state);
		c->then = resp.then;
		c->defer_state = resp.defer_state;
		c->defer_free = resp.defer_free;
		r = nt_srv_defer(s, mc, resp.defer_ms);
		if (r == 0)
			return MHD_YES;
		c->then = NULL;
		return send_problem(mc, c, 503, "busy", "Busy",
				    "too many measurements are in progress; try again shortly");
	}
	if (r < 0 && (resp.status < 400 || (!resp.json && !resp.text && !resp.shared)))
		nt_problem(&resp, 500, "internal", "Internal error",
			   "%s", nt_strerror(r));
	if (resp.status == 0)
		resp.status = (resp.json || resp.text || resp.shared) ? 200 : 204;
	return send_response(mc, c, &resp);
}

/* ---- lifecycle ---- */

/* s->addr and s->host from the configured address and port. */
static int listen_address(struct nt_server *s, char *err, size_t errsize)
{
	const nt_server_config *cfg = &s->cfg;
	struct sockaddr_in *sin = (struct sockaddr_in *)&s->addr;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&s->addr;

	memset(&s->addr, 0, sizeof(s->addr));
	snprintf(s->host, sizeof(s->host), "%s",
		 cfg->listen_addr[0] ? cfg->listen_addr : "127.0.0.1");
	size_t hl = strlen(s->host);
	if (hl >= 2 && s->host[0] == '[' && s->host[hl - 1] == ']') {
		memmove(s->host, s->host + 1, hl - 2);
		s->host[hl - 2] = '\0';
	}
	if (inet_pton(AF_INET, s->host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)cfg->port);
	} else if (inet_pton(AF_INET6, s->host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)cfg->port);
		s->ipv6 = true;
	} else {
		snprintf(err, errsize, "listen address '%s' is not an IPv4 or IPv6 literal",
			 cfg->listen_addr);
		return -EINVAL;
	}
	return 0;
}

int nt_server_new(const nt_server_config *cfg, struct nt_server **out, char *err,
		  size_t errsize)
{
	struct nt_server *s;
	int r;

	*out = NULL;
	if (errsize)
		err[0] = '\0';
	if (cfg->port < 0 || cfg->port > 65535) {
		snprintf(err, errsize, "port %d is out of range", cfg->port);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errsize, "out of memory");
		return -ENOMEM;
	}
	s->cfg = *cfg;
	nt_srv_limits_init(s);
	if ((r = listen_address(s, err, errsize)) < 0 ||
	    (r = nt_srv_security_init(s, err, errsize)) < 0) {
		nt_server_stop(s);
		return r;
	}
	*out = s;
	return 0;
}

static void areas_fini(struct nt_server *s)
{
	for (int i = NAREAS - 1; i >= 0; i--) {
		if (s->inited[i] && areas[i]->fini)
			areas[i]->fini(s->state[i]);
		s->inited[i] = false;
		s->state[i] = NULL;
	}
}

static int areas_init(struct nt_server *s, char *err, size_t errsize)
{
	for (int i = 0; i < NAREAS; i++) {
		if (areas[i]->init) {
			char aerr[256] = "";
			int r = areas[i]->init(s, &s->state[i], aerr, sizeof(aerr));
			if (r < 0) {
				snprintf(err, errsize, "%s: %s", areas[i]->name,
					 aerr[0] ? aerr : nt_strerror(r));
				areas_fini(s);
				return r;
			}
		}
		s->inited[i] = true;
	}
	return 0;
}

int nt_server_start(struct nt_server *s, nt_agent *agent, char *err, size_t errsize)
{
	unsigned int flags;
	int r;

	if (errsize)
		err[0] = '\0';
	if (s->daemon || s->agent) {
		snprintf(err, errsize, "the server is already started");
		return -EALREADY;
	}
	s->agent = agent;
	if ((r = areas_init(s, err, errsize)) < 0)
		goto fail;

	if ((r = nt_srv_defer_init(s)) < 0 || (r = nt_srv_reaper_start(s)) < 0) {
		snprintf(err, errsize, "cannot start the server's threads: %s", strerror(-r));
		goto fail;
	}
	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_ALLOW_SUSPEND_RESUME;
	flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL :
									  MHD_USE_POLL;
	if (s->ipv6)
		flags |= MHD_USE_IPv6;
	if (s->tls)
		flags |= MHD_USE_TLS;

	struct MHD_OptionItem opts[16];
	int no = 0;
#define OPT(o, v, p) opts[no++] = (struct MHD_OptionItem){ (o), (intptr_t)(v), (p) }
	OPT(MHD_OPTION_SOCK_ADDR, 0, &s->addr);
	OPT(MHD_OPTION_THREAD_POOL_SIZE, s->threads, NULL);
	OPT(MHD_OPTION_CONNECTION_LIMIT, s->max_conn, NULL);
	OPT(MHD_OPTION_CONNECTION_TIMEOUT, s->timeout_s, NULL);
	OPT(MHD_OPTION_CONNECTION_MEMORY_LIMIT, NT_MHD_MEMORY_LIMIT, NULL);
	OPT(MHD_OPTION_URI_LOG_CALLBACK, on_uri, s);
	OPT(MHD_OPTION_NOTIFY_COMPLETED, on_completed, s);
	OPT(MHD_OPTION_NOTIFY_CONNECTION, nt_srv_on_connection, s);
	if (s->tls) {
		OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, s->tls_cert);
		OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, s->tls_key);
	}
	/* With a trust list MHD asks every client for a certificate; one
	 * that sends none can still use a token. */
	if (s->client_certs)
		OPT(MHD_OPTION_HTTPS_MEM_TRUST, 0, s->tls_ca);
	OPT(MHD_OPTION_END, 0, NULL);
#undef OPT

	errno = 0;
	s->daemon = MHD_start_daemon(flags, (uint16_t)s->cfg.port, NULL, NULL, on_request, s,
				     MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	if (!s->daemon) {
		int e = errno ? errno : EADDRNOTAVAIL;
		snprintf(err, errsize, "cannot listen on %s port %d: %s", s->host, s->cfg.port,
			 strerror(e));
		r = -e;
		goto fail;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->daemon,
							      MHD_DAEMON_INFO_BIND_PORT);
	s->port = di ? di->port : s->cfg.port;
	return 0;

fail:
	nt_srv_reaper_stop(s);
	nt_srv_defer_fini(s);
	areas_fini(s);
	s->agent = NULL;
	return r;
}

void nt_server_stop(struct nt_server *s)
{
	if (!s)
		return;
	/* Waiting requests are resumed (and answered) before MHD stops. */
	nt_srv_defer_stop(s);
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	nt_srv_reaper_stop(s);
	nt_srv_defer_fini(s);
	areas_fini(s);
	nt_srv_security_fini(s);
	free(s);
}
