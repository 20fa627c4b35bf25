/* The agent's HTTP server on libmicrohttpd: listening, request bodies, the
 * router over the areas' route tables, and turning nt_response into HTTP.
 *
 * Every request is treated as hostile input: the path is split and
 * percent-decoded here (not by MHD) so that an encoded '/' inside a segment
 * stays inside that segment and is refused by the route's own validation,
 * never turned into extra path components. */
#include "api/server.h"
#include "api/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>

/* Largest request body accepted; profiles and plans are far smaller. */
#define NT_BODY_MAX (1024 * 1024)
/* A chunked body that keeps coming after the limit is discarded so the
 * client still gets its 413, but not forever: past this the connection is
 * dropped. */
#define NT_BODY_DISCARD_MAX (8 * 1024 * 1024)
#define NT_MAX_SEGMENTS 16
#define NT_THREADS 4
#define NT_CONN_LIMIT 64
/* Past this many open connections responses carry "Connection: close".
 * Idle keep-alive connections hold their slot until the 30 s timeout, so a
 * burst of clients beyond the limit would otherwise wait in the listen
 * backlog for that long. */
#define NT_KEEPALIVE_MAX (NT_CONN_LIMIT * 3 / 4)

/* The areas served, in start-up order: the read area first because the
 * transaction area may rely on nothing but the context, never the reverse. */
static const nt_area *const areas[] = { &nt_area_read, &nt_area_place, &nt_area_txn };
#define NAREAS ((int)(sizeof(areas) / sizeof(areas[0])))

struct nt_server {
	nt_server_config cfg;
	nt_ctx ctx;
	struct MHD_Daemon *daemon;
	int port;
	void *state[NAREAS];
	bool inited[NAREAS];
	int nconn; /* open connections (atomic: updated by every worker thread) */
};

/* Per-request state, created from the raw request target before MHD parses
 * it and freed when MHD reports the request completed. */
struct nt_conn {
	char *uri; /* request target exactly as sent, query included */
	char *path; /* uri up to '?' */
	char *segs[NT_MAX_SEGMENTS]; /* decoded path segments */
	int nsegs; /* -1: the path can match no route */
	int nalloc; /* entries of segs to free */
	const nt_route *route;
	bool started; /* first handler call (headers parsed) done */
	bool done; /* a response is queued */
	bool overflow; /* body exceeded NT_BODY_MAX */
	char *body;
	size_t len, cap, seen;
	char client[INET6_ADDRSTRLEN];
	char allow[64]; /* Allow header of a 405 */
	nt_request req;
};

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

const nt_ctx *nt_server_ctx(const struct nt_server *s)
{
	return &s->ctx;
}

const nt_server_config *nt_server_cfg(const struct nt_server *s)
{
	return &s->cfg;
}

/* ---- paths ---- */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decode [S, S+LEN) into a new string. NUL bytes (%00) and broken
 * escapes are refused: a decoded segment is later used as a C string. */
static int pct_decode(const char *s, size_t len, char **out)
{
	char *d = malloc(len + 1);
	size_t j = 0;
	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '%') {
			d[j++] = s[i];
			continue;
		}
		if (i + 2 >= len) {
			free(d);
			return NT_EINVALID;
		}
		int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
			free(d);
			return NT_EINVALID;
		}
		d[j++] = (char)(hi * 16 + lo);
		i += 2;
	}
	d[j] = '\0';
	*out = d;
	return 0;
}

/* Split the raw path into decoded segments. A path with more segments than
 * any route has is left with nsegs = -1 (no route will match). */
static int split_path(struct nt_conn *c)
{
	const char *p = c->path;
	if (*p != '/') {
		c->nsegs = -1; /* "*" or an absolute-form target: no route */
		return 0;
	}
	c->nsegs = 0;
	while (*p == '/') {
		p++;
		const char *end = strchrnul(p, '/');
		if (c->nsegs == NT_MAX_SEGMENTS) {
			c->nsegs = -1;
			return 0;
		}
		int r = pct_decode(p, (size_t)(end - p), &c->segs[c->nsegs]);
		if (r < 0)
			return r;
		c->nsegs++;
		c->nalloc = c->nsegs;
		p = end;
	}
	return 0;
}

/* Whether PATTERN ("/v1/nics/{name}") matches the decoded segments; a
 * "{param}" matches exactly one non-empty segment. */
static bool match_route(const struct nt_conn *c, const char *pattern, const char **params,
			int *nparams)
{
	const char *p = pattern;
	int i = 0, np = 0;

	if (c->nsegs < 0 || *p != '/')
		return false;
	while (*p == '/') {
		p++;
		const char *end = strchrnul(p, '/');
		size_t len = (size_t)(end - p);
		if (i >= c->nsegs)
			return false;
		if (len >= 2 && p[0] == '{' && p[len - 1] == '}') {
			if (!c->segs[i][0] || np >= 4)
				return false;
			if (params)
				params[np] = c->segs[i];
			np++;
		} else if (strlen(c->segs[i]) != len || memcmp(c->segs[i], p, len) != 0) {
			return false;
		}
		i++;
		p = end;
	}
	if (i != c->nsegs)
		return false;
	if (nparams)
		*nparams = np;
	return true;
}

static bool method_is(const char *m, const char *want)
{
	return strcmp(m, want) == 0;
}

/* Find the route for METHOD on the request's path. HEAD is served by the
 * GET route (MHD drops the body). Returns the route, or NULL with ALLOW
 * filled when the path exists under other methods. */
static const nt_route *find_route(struct nt_conn *c, const char *method, char *allow,
				  size_t allowsize)
{
	const char *m = method_is(method, "HEAD") ? "GET" : method;
	allow[0] = '\0';
	for (int a = 0; a < NAREAS; a++) {
		for (const nt_route *r = areas[a]->routes; r && r->method; r++) {
			if (!match_route(c, r->pattern, NULL, NULL))
				continue;
			if (strcmp(r->method, m) == 0) {
				match_route(c, r->pattern, c->req.params, &c->req.nparams);
				return r;
			}
			if (!strstr(allow, r->method)) {
				size_t l = strlen(allow);
				snprintf(allow + l, allowsize - l, "%s%s", l ? ", " : "", r->method);
				if (strcmp(r->method, "GET") == 0 && !strstr(allow, "HEAD")) {
					l = strlen(allow);
					snprintf(allow + l, allowsize - l, ", HEAD");
				}
			}
		}
	}
	return NULL;
}

/* ---- responses ---- */

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
	char *body = NULL;
	size_t len = 0;
	const char *ctype = r->content_type;
	enum MHD_Result ret = MHD_NO;
	bool want_json;

	if (r->status < 100 || r->status > 599)
		nt_problem(r, 500, "internal", "Internal error",
			   "a route produced no valid status");
	if (r->status >= 400 && r->json)
		add_instance(r, c->path);
	want_json = !r->text && r->json;

	if (r->text) {
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
	if (body) {
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
	if (r->status == 405 && c->allow[0])
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, c->allow);
	if (c->req.server &&
	    __atomic_load_n(&c->req.server->nconn, __ATOMIC_RELAXED) > NT_KEEPALIVE_MAX)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	/* State of the host changes under the agent; nothing is cacheable. */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(mc, (unsigned int)r->status, resp);
	MHD_destroy_response(resp);
	c->done = true;
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

/* ---- query checks ---- */

struct query_check {
	const nt_route *route;
	char bad[128]; /* first offending parameter */
	bool duplicate;
	const char *seen[8];
	int nseen;
};

static enum MHD_Result query_check_cb(void *cls, enum MHD_ValueKind kind, const char *key,
				      const char *value)
{
	struct query_check *q = cls;
	bool allowed = false;

	if (!key)
		return MHD_YES;
	for (const char *const *a = q->route->query; a && *a; a++)
		if (strcmp(*a, key) == 0)
			allowed = true;
	if (!allowed) {
		snprintf(q->bad, sizeof(q->bad), "%s", key);
		return MHD_NO;
	}
	/* A repeated parameter is ambiguous (which one wins?): refused. */
	for (int i = 0; i < q->nseen; i++) {
		if (strcmp(q->seen[i], key) == 0) {
			snprintf(q->bad, sizeof(q->bad), "%s", key);
			q->duplicate = true;
			return MHD_NO;
		}
	}
	if (q->nseen < (int)(sizeof(q->seen) / sizeof(q->seen[0])))
		q->seen[q->nseen++] = key;
	return MHD_YES;
}

/* ---- the request handler ---- */

static bool is_json_type(const char *ct)
{
	if (!ct)
		return false;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	static const char want[] = "application/json";
	if (strncasecmp(ct, want, sizeof(want) - 1) != 0)
		return false;
	ct += sizeof(want) - 1;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	return *ct == '\0' || *ct == ';';
}

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
	free(c);
}

/* MHD hands the raw request target here before it unescapes it; the object
 * returned becomes the request's *con_cls. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *mc)
{
	return conn_new(uri);
}

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	struct nt_server *s = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		__atomic_add_fetch(&s->nconn, 1, __ATOMIC_RELAXED);
	else if (code == MHD_CONNECTION_NOTIFY_CLOSED)
		__atomic_sub_fetch(&s->nconn, 1, __ATOMIC_RELAXED);
}

static void on_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	conn_free(*con_cls);
	*con_cls = NULL;
}

/* First call, headers parsed: route and check everything that does not need
 * the body, answering early so an unwanted body is never read. */
static enum MHD_Result begin(struct nt_server *s, struct nt_conn *c, struct MHD_Connection *mc,
			     const char *method)
{
	int r = split_path(c);
	if (r == -ENOMEM)
		return MHD_NO;
	if (r < 0)
		return send_problem(mc, c, 400, "bad-request", "Bad request",
				    "the path has an invalid percent-encoding");

	const char *cl = MHD_lookup_connection_value(mc, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *te = MHD_lookup_connection_value(mc, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_TRANSFER_ENCODING);
	unsigned long long clen = 0;
	if (cl) {
		char *end;
		errno = 0;
		clen = strtoull(cl, &end, 10);
		if (errno || end == cl)
			clen = ULLONG_MAX;
	}
	/* Before routing: an oversized body is refused wherever it is sent,
	 * and answering now means it is never read. */
	if (clen > NT_BODY_MAX)
		return send_problem(mc, c, 413, "payload-too-large", "Payload too large",
				    "request bodies are limited to %d bytes", NT_BODY_MAX);
	c->route = find_route(c, method, c->allow, sizeof(c->allow));
	if (!c->route) {
		if (c->allow[0])
			return send_problem(mc, c, 405, "method-not-allowed",
					    "Method not allowed", "%s is not allowed here; allowed: %s",
					    method, c->allow);
		return send_problem(mc, c, 404, "not-found", "Not found",
				    "no such resource");
	}

	struct query_check q = { .route = c->route };
	MHD_get_connection_values(mc, MHD_GET_ARGUMENT_KIND, query_check_cb, &q);
	if (q.bad[0])
		return send_problem(mc, c, 400, "bad-request", "Bad request",
				    q.duplicate ? "query parameter '%s' is given more than once" :
						  "unknown query parameter '%s'",
				    q.bad);

	bool has_body = clen > 0 || te != NULL;
	if (has_body && (method_is(method, "POST") || method_is(method, "PUT") ||
			 method_is(method, "PATCH"))) {
		const char *ct = MHD_lookup_connection_value(mc, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_TYPE);
		if (!is_json_type(ct))
			return send_problem(mc, c, 415, "unsupported-media-type",
					    "Unsupported media type",
					    "request bodies must be application/json");
	}

	c->req.method = c->route->method;
	c->req.path = c->path;
	c->req.conn = mc;
	c->req.client = c->client;
	c->req.identity = "";
	c->req.server = s;
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci && ci->client_addr) {
		const struct sockaddr *sa = ci->client_addr;
		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, c->client,
				  sizeof(c->client));
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr,
				  c->client, sizeof(c->client));
	}
	return MHD_YES;
}

static int append_body(struct nt_conn *c, const char *data, size_t n)
{
	c->seen += n;
	if (c->overflow || c->len + n > NT_BODY_MAX) {
		c->overflow = true;
		return c->seen > NT_BODY_DISCARD_MAX ? -EFBIG : 0;
	}
	if (c->len + n + 1 > c->cap) {
		size_t cap = c->cap ? c->cap : 4096;
		while (cap < c->len + n + 1)
			cap *= 2;
		char *nb = realloc(c->body, cap);
		if (!nb)
			return -ENOMEM;
		c->body = nb;
		c->cap = cap;
	}
	memcpy(c->body + c->len, data, n);
	c->len += n;
	c->body[c->len] = '\0';
	return 0;
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
		return begin(s, c, mc, method);
	}
	if (c->done) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (*upload_size) {
		if (append_body(c, upload, *upload_size) < 0)
			return MHD_NO;
		*upload_size = 0;
		return MHD_YES;
	}
	if (c->overflow)
		return send_problem(mc, c, 413, "payload-too-large", "Payload too large",
				    "request bodies are limited to %d bytes", NT_BODY_MAX);

	c->req.body = c->len ? c->body : NULL;
	c->req.body_len = c->len;

	nt_response resp = { 0 };
	int r = c->route->fn(&c->req, &resp);
	if (r < 0 && (resp.status < 400 || (!resp.json && !resp.text)))
		nt_problem(&resp, 500, "internal", "Internal error",
			   "%s", nt_strerror(r));
	if (resp.status == 0)
		resp.status = (resp.json || resp.text) ? 200 : 204;
	return send_response(mc, c, &resp);
}

/* ---- start and stop ---- */

static int mkdir_p(const char *dir, mode_t mode)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	struct stat st;
	if (stat(buf, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
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

int nt_server_start(const nt_server_config *cfg, struct nt_server **out, char *err,
		    size_t errsize)
{
	struct nt_server *s = NULL;
	struct sockaddr_storage ss;
	char host[64];
	unsigned int flags;
	int r;

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

	r = nt_ctx_init(&s->ctx, cfg->root);
	if (r < 0) {
		snprintf(err, errsize, "host root %s: %s", cfg->root, nt_strerror(r));
		goto fail;
	}
	/* An empty state dir means the caller keeps no state (read-only tests);
	 * the transaction area refuses to start if it needs one. */
	if (cfg->state_dir[0]) {
		r = mkdir_p(cfg->state_dir, 0700);
		if (r < 0) {
			snprintf(err, errsize, "state directory %s: %s", cfg->state_dir,
				 nt_strerror(r));
			goto fail;
		}
	}

	memset(&ss, 0, sizeof(ss));
	snprintf(host, sizeof(host), "%s", cfg->listen_addr[0] ? cfg->listen_addr : "127.0.0.1");
	size_t hl = strlen(host);
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	flags = MHD_USE_INTERNAL_POLLING_THREAD;
	flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL :
									  MHD_USE_POLL;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)cfg->port);
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)cfg->port);
		flags |= MHD_USE_IPv6;
	} else {
		snprintf(err, errsize, "listen address '%s' is not an IPv4 or IPv6 literal",
			 cfg->listen_addr);
		r = -EINVAL;
		goto fail;
	}

	for (int i = 0; i < NAREAS; i++) {
		if (areas[i]->init) {
			char aerr[256] = "";
			r = areas[i]->init(s, &s->state[i], aerr, sizeof(aerr));
			if (r < 0) {
				snprintf(err, errsize, "%s: %s", areas[i]->name,
					 aerr[0] ? aerr : nt_strerror(r));
				goto fail;
			}
		}
		s->inited[i] = true;
	}

	errno = 0;
	s->daemon = MHD_start_daemon(
		flags, (uint16_t)cfg->port, NULL, NULL, on_request, s,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)NT_THREADS,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)NT_CONN_LIMIT,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
		MHD_OPTION_URI_LOG_CALLBACK, on_uri, (void *)s,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, (void *)s,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, (void *)s,
		MHD_OPTION_END);
	if (!s->daemon) {
		int e = errno ? errno : EADDRNOTAVAIL;
		snprintf(err, errsize, "cannot listen on %s port %d: %s", host, cfg->port,
			 strerror(e));
		r = -e;
		goto fail;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->daemon,
							      MHD_DAEMON_INFO_BIND_PORT);
	s->port = di ? di->port : cfg->port;
	*out = s;
	return 0;

fail:
	areas_fini(s);
	free(s);
	return r;
}

void nt_server_stop(struct nt_server *s)
{
	if (!s)
		return;
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	areas_fini(s);
	free(s);
}
