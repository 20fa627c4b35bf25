/* The agent's HTTP server on libmicrohttpd: its lifecycle, the request
 * pipeline (route, authenticate, check limits, read the body, call the
 * route) and turning nt_response into HTTP. Every request is treated as
 * hostile input. The engine, the store, the log sink and the request
 * counters are the agent's (agent/agent.h), borrowed from nt_server_start
 * to nt_server_stop. */
#include "api/auth.h"
#include "api/http.h"
#include "api/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

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

	/* Limits (see "limits" below), defaults applied. */
	size_t max_body;
	unsigned max_conn, keepalive_max, timeout_s, threads;
	int nconn; /* open connections (atomic: updated by every worker thread) */

	/* Security (see "TLS" and "authentication" below). */
	nt_auth *auth; /* NULL: no tokens */
	bool tls, client_certs;
	char *tls_cert, *tls_key, *tls_ca; /* PEM text, kept while the daemon runs */
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
	bool overflow; /* body exceeded the server's max_body */
	char *body;
	size_t len, cap, seen;
	char client[INET6_ADDRSTRLEN];
	char allow[64]; /* Allow header of a 405 */
	struct timespec t0; /* request line received */
	const char *method; /* as counted and logged: "GET", ... or "other" */
	int status; /* of the queued response, 0 none */
	bool www_auth; /* a 401: add WWW-Authenticate */
	nt_scope scope;
	char identity[512]; /* token name or certificate subject */
	nt_request req;
};

/* ---- routing ----
 *
 * The request path split and percent-decoded here (not by MHD),
 * so that an encoded '/' inside a segment stays inside that segment and is
 * refused by the route's own validation, never turned into extra path
 * components; then matched against the areas' route tables. */

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

/* A path with more segments than any route has is left with nsegs = -1
 * (no route will match). */
static int nt_srv_split_path(struct nt_conn *c)
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

const nt_route *nt_srv_find_route(const nt_area *const *areas, int n, struct nt_conn *c,
				  const char *method, char *allow, size_t allowsize)
{
	const char *m = strcmp(method, "HEAD") == 0 ? "GET" : method;
	allow[0] = '\0';
	for (int a = 0; a < n; a++) {
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

struct query_check {
	const nt_route *route;
	char *bad; /* first offending parameter */
	size_t badsize;
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
		snprintf(q->bad, q->badsize, "%s", key);
		return MHD_NO;
	}
	/* A repeated parameter is ambiguous (which one wins?): refused. */
	for (int i = 0; i < q->nseen; i++) {
		if (strcmp(q->seen[i], key) == 0) {
			snprintf(q->bad, q->badsize, "%s", key);
			q->duplicate = true;
			return MHD_NO;
		}
	}
	if (q->nseen < (int)(sizeof(q->seen) / sizeof(q->seen[0])))
		q->seen[q->nseen++] = key;
	return MHD_YES;
}

static int nt_srv_check_query(struct MHD_Connection *mc, const nt_route *route, char *bad,
		       size_t badsize, bool *duplicate)
{
	struct query_check q = { .route = route, .bad = bad, .badsize = badsize };
	bad[0] = '\0';
	MHD_get_connection_values(mc, MHD_GET_ARGUMENT_KIND, query_check_cb, &q);
	*duplicate = q.duplicate;
	return bad[0] ? NT_EINVALID : 0;
}

/* ---- TLS ----
 *
 * TLS: the certificate, key and client CA read from
 * PEM files once at start (libmicrohttpd takes PEM text, and does the TLS
 * itself on the same GnuTLS), and the check of a client certificate
 * against that CA. */

/* TLS material read from files is limited to this (a certificate chain
 * is a few KiB). */
#define NT_PEM_MAX (1024 * 1024)

/* Read a PEM file whole, NUL-terminated (MHD takes PEM as a C string). */
static int read_pem(const char *path, char **out, char *err, size_t errsize)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	char *buf = NULL;
	size_t len = 0;
	int r;

	*out = NULL;
	if (fd < 0) {
		r = -errno;
		snprintf(err, errsize, "%s: %s", path, strerror(errno));
		return r;
	}
	buf = malloc(NT_PEM_MAX + 1);
	if (!buf) {
		r = -ENOMEM;
		snprintf(err, errsize, "out of memory");
		goto fail;
	}
	for (;;) {
		ssize_t n = read(fd, buf + len, NT_PEM_MAX - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			snprintf(err, errsize, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == NT_PEM_MAX) {
			r = -EFBIG;
			snprintf(err, errsize, "%s: larger than %d bytes", path, NT_PEM_MAX);
			goto fail;
		}
	}
	buf[len] = '\0';
	if (!strstr(buf, "-----BEGIN ")) {
		r = -EINVAL;
		snprintf(err, errsize, "%s is not a PEM file", path);
		goto fail;
	}
	close(fd);
	*out = buf;
	return 0;
fail:
	if (buf) {
		explicit_bzero(buf, len);
		free(buf);
	}
	close(fd);
	return r;
}

static int nt_srv_tls_load(struct nt_server *s, char *err, size_t errsize)
{
	const nt_server_config *cfg = &s->cfg;
	int r;

	if (!!cfg->tls_cert[0] != !!cfg->tls_key[0]) {
		snprintf(err, errsize, "TLS wants both a certificate and a key (--tls-cert and "
				       "--tls-key)");
		return -EINVAL;
	}
	if (cfg->tls_client_ca[0] && !cfg->tls_cert[0]) {
		snprintf(err, errsize, "client certificates (--tls-client-ca) need TLS "
				       "(--tls-cert and --tls-key)");
		return -EINVAL;
	}
	if (cfg->tls_cert[0]) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			snprintf(err, errsize, "this libmicrohttpd was built without TLS support");
			return -ENOTSUP;
		}
		if ((r = read_pem(cfg->tls_cert, &s->tls_cert, err, errsize)) < 0 ||
		    (r = read_pem(cfg->tls_key, &s->tls_key, err, errsize)) < 0)
			return r;
		s->tls = true;
	}
	if (cfg->tls_client_ca[0]) {
		if ((r = read_pem(cfg->tls_client_ca, &s->tls_ca, err, errsize)) < 0)
			return r;
		s->client_certs = true;
	}
	return 0;
}

static void nt_srv_tls_free(struct nt_server *s)
{
	if (s->tls_key) {
		explicit_bzero(s->tls_key, strlen(s->tls_key));
		free(s->tls_key);
	}
	free(s->tls_cert);
	free(s->tls_ca);
	s->tls_key = s->tls_cert = s->tls_ca = NULL;
}

static int nt_srv_client_cert(struct MHD_Connection *mc, char *dn, size_t dnsize, char *why,
		       size_t whysize)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_session_t sess = ci ? (gnutls_session_t)ci->tls_session : NULL;
	unsigned int status = 0, ncerts = 0;
	gnutls_x509_crt_t crt = NULL;
	gnutls_datum_t d = { NULL, 0 };
	int r = -EACCES;

	if (!sess)
		return 0;
	const gnutls_datum_t *certs = gnutls_certificate_get_peers(sess, &ncerts);
	if (!certs || ncerts == 0)
		return 0;
	/* Checked against the CA given to MHD as its trust list: signature,
	 * validity dates, key usage. The host name is not checked: a client
	 * certificate names a client, not a server. */
	if (gnutls_certificate_verify_peers2(sess, &status) < 0 || status != 0) {
		gnutls_datum_t out = { NULL, 0 };
		if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &out,
								 0) == 0) {
			snprintf(why, whysize, "%s", (const char *)out.data);
			gnutls_free(out.data);
		} else {
			snprintf(why, whysize, "it does not verify");
		}
		return -EACCES;
	}
	if (gnutls_x509_crt_init(&crt) < 0)
		goto out;
	if (gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) < 0 ||
	    gnutls_x509_crt_get_dn3(crt, &d, 0) < 0) {
		snprintf(why, whysize, "its subject cannot be read");
		goto out;
	}
	snprintf(dn, dnsize, "%.*s", (int)d.size, (const char *)d.data);
	r = 1;
out:
	gnutls_free(d.data);
	if (crt)
		gnutls_x509_crt_deinit(crt);
	return r;
}

/* ---- authentication and authorization ----
 *
 * Who may call, at the HTTP server's edge. With a token file or a client
 * CA configured, every request but GET /v1/health and /v1/openapi.yaml
 * (see path_is_open) must carry a valid bearer token or a verified client
 * certificate; 401 before anything else is looked at, so an
 * unauthenticated client learns nothing, not even which paths exist. A
 * `read` token may use GET and HEAD; writes (plan, transactions, profiles)
 * need `apply` (403 otherwise). A client certificate counts as `apply`: it
 * is issued per controller by whoever runs the CA, which is a stronger
 * statement than a shared secret. Tokens themselves are api/auth.c's. */

bool nt_addr_is_loopback(const char *addr)
{
	char host[64];
	struct in_addr a4;
	struct in6_addr a6;

	snprintf(host, sizeof(host), "%s", addr);
	size_t hl = strlen(host);
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1) {
		if (IN6_IS_ADDR_LOOPBACK(&a6))
			return true;
		if (IN6_IS_ADDR_V4MAPPED(&a6))
			return a6.s6_addr[12] == 127;
	}
	return false;
}

static int nt_srv_security_init(struct nt_server *s, char *err, size_t errsize)
{
	const nt_server_config *cfg = &s->cfg;
	int r;

	if (cfg->tokens_path[0]) {
		r = nt_auth_load(cfg->tokens_path, &s->auth, err, errsize);
		if (r < 0)
			return r;
	}
	if ((r = nt_srv_tls_load(s, err, errsize)) < 0)
		return r;
	/* Open on loopback is what a single host's operator expects; open on
	 * a network address would let anyone who can reach it retune the host.
	 * TLS alone is not enough: it says who the server is, not the client. */
	if (!s->auth && !s->client_certs && !nt_addr_is_loopback(s->host)) {
		snprintf(err, errsize,
			 "refusing to listen on %s without authentication: give --tokens FILE "
			 "(and better, --tls-cert/--tls-key), or listen on 127.0.0.1",
			 s->host);
		return -EPERM;
	}
	return 0;
}

static void nt_srv_security_fini(struct nt_server *s)
{
	nt_auth_free(s->auth);
	s->auth = NULL;
	nt_srv_tls_free(s);
}

static bool nt_srv_auth_required(const struct nt_server *s)
{
	return s->auth || s->client_certs;
}

/* Paths served without credentials: the liveness probe and the API's own
 * description, neither of which tells anything about the host. */
static bool path_is_open(const struct nt_conn *c)
{
	return c->nsegs == 2 && strcmp(c->segs[0], "v1") == 0 &&
	       (strcmp(c->segs[1], "health") == 0 || strcmp(c->segs[1], "openapi.yaml") == 0);
}

/* The credentials presented, if any: 0 (an identity, or none), or -EACCES
 * with the reason in WHY when they are wrong. */
static int identify(struct nt_server *s, struct nt_conn *c, struct MHD_Connection *mc,
		    char *why, size_t whysize)
{
	if (s->client_certs) {
		int r = nt_srv_client_cert(mc, c->identity, sizeof(c->identity), why, whysize);
		if (r < 0)
			return r;
		if (r > 0) {
			c->scope = NT_SCOPE_APPLY;
			return 0;
		}
	}
	const char *h = MHD_lookup_connection_value(mc, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION);
	if (!h)
		return 0;
	const char *name;
	nt_scope scope;
	if (!s->auth || nt_auth_bearer(s->auth, h, &name, &scope) < 0) {
		snprintf(why, whysize, "the bearer token is not valid");
		return -EACCES;
	}
	snprintf(c->identity, sizeof(c->identity), "%s", name);
	c->scope = scope;
	return 0;
}

static int nt_srv_authenticate(struct nt_server *s, struct nt_conn *c, struct MHD_Connection *mc,
			char *why, size_t whysize)
{
	if (!nt_srv_auth_required(s))
		return 0;
	int r = identify(s, c, mc, why, whysize);
	if (r == 0 && (c->identity[0] || path_is_open(c)))
		return 0;
	c->identity[0] = '\0';
	if (r == 0)
		snprintf(why, whysize, "%s",
			 s->auth ? "this agent wants an Authorization: Bearer token" :
				   "this agent wants a client certificate");
	return -EACCES;
}

static int nt_srv_authorize(const struct nt_server *s, const struct nt_conn *c)
{
	if (!nt_srv_auth_required(s) || path_is_open(c))
		return 0;
	nt_scope need = strcmp(c->route->method, "GET") == 0 ? NT_SCOPE_READ : NT_SCOPE_APPLY;
	return c->scope >= need ? 0 : -EPERM;
}

/* ---- limits ----
 *
 * What a client may cost the server: open connections, body bytes, the
 * body's type and how much work its JSON is to parse. Every limit is
 * checked as early as the request allows, so that what is refused is
 * never read or parsed. */

/* A chunked body that keeps coming after the limit is discarded so the
 * client still gets its 413, but not forever: past the limit plus this the
 * connection is dropped. */
#define NT_BODY_DISCARD_SLACK (8 * 1024 * 1024)
/* MHD worker threads (fewer when the connection cap is lower). */
#define NT_THREADS 4

static void nt_srv_limits_init(struct nt_server *s)
{
	const nt_server_config *cfg = &s->cfg;
	s->max_body = cfg->max_body ? cfg->max_body : NT_DEFAULT_MAX_BODY;
	s->max_conn = cfg->max_connections ? cfg->max_connections : NT_DEFAULT_MAX_CONNECTIONS;
	s->keepalive_max = s->max_conn * 3 / 4;
	s->timeout_s = cfg->client_timeout_s ? cfg->client_timeout_s : NT_DEFAULT_CLIENT_TIMEOUT_S;
	/* MHD splits the connection cap among its worker threads. */
	s->threads = s->max_conn < NT_THREADS ? s->max_conn : NT_THREADS;
}

static void nt_srv_on_connection(void *cls, struct MHD_Connection *mc, void **socket_ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	struct nt_server *s = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		__atomic_add_fetch(&s->nconn, 1, __ATOMIC_RELAXED);
	else if (code == MHD_CONNECTION_NOTIFY_CLOSED)
		__atomic_sub_fetch(&s->nconn, 1, __ATOMIC_RELAXED);
}

/* Past three quarters of the connection cap responses carry
 * "Connection: close": idle keep-alive connections hold their slot until
 * the client timeout, so a burst of clients beyond the cap would otherwise
 * wait in the listen backlog for that long. */
static bool nt_srv_should_close(struct nt_server *s)
{
	return __atomic_load_n(&s->nconn, __ATOMIC_RELAXED) > (int)s->keepalive_max;
}

static unsigned long long nt_srv_declared_length(struct MHD_Connection *mc, bool *has_body)
{
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
	*has_body = clen > 0 || te != NULL;
	return clen;
}

static bool nt_srv_is_json_type(const char *ct)
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

static int nt_srv_append_body(struct nt_conn *c, size_t max, const char *data, size_t n)
{
	c->seen += n;
	if (c->overflow || c->len + n > max) {
		c->overflow = true;
		return c->seen > max + NT_BODY_DISCARD_SLACK ? -EFBIG : 0;
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

/* Nesting deeper than MAX_DEPTH (jansson recurses per level) or more than
 * MAX_VALUES values (each an allocation) is refused. Strings, numbers,
 * literals and containers count one each, object keys included. Only
 * structure is looked at; whether the text is valid JSON is the parser's
 * business. */
static int nt_srv_json_prescan(const char *p, size_t n, int max_depth, long max_values, char *why,
			size_t whysize)
{
	int depth = 0;
	long values = 0;
	bool in_str = false, esc = false, in_scalar = false;

	for (size_t i = 0; i < n; i++) {
		char ch = p[i];
		if (in_str) {
			if (esc)
				esc = false;
			else if (ch == '\\')
				esc = true;
			else if (ch == '"')
				in_str = false;
			continue;
		}
		switch (ch) {
		case '"':
			in_str = true;
			in_scalar = false;
			values++;
			break;
		case '{':
		case '[':
			in_scalar = false;
			values++;
			if (++depth > max_depth) {
				snprintf(why, whysize, "it nests deeper than %d levels", max_depth);
				return NT_EINVALID;
			}
			break;
		case '}':
		case ']':
			in_scalar = false;
			if (depth > 0)
				depth--;
			break;
		case ',':
		case ':':
		case ' ':
		case '\t':
		case '\r':
		case '\n':
			in_scalar = false;
			break;
		default:
			if (!in_scalar)
				values++;
			in_scalar = true;
			break;
		}
		if (values > max_values) {
			snprintf(why, whysize, "it holds more than %ld values", max_values);
			return NT_EINVALID;
		}
	}
	return 0;
}

/* ---- the server ---- */

/* The areas served, in start-up order: the read area first because the
 * others may rely on nothing but the context, never the reverse. */
static const nt_area *const areas[] = { &nt_area_read, &nt_area_place, &nt_area_txn,
					&nt_area_metrics, &nt_area_doc };
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
	free(c);
}

/* MHD hands the raw request target here before it unescapes it; the object
 * returned becomes the request's *con_cls. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *mc)
{
	return conn_new(uri);
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
	conn_free(c);
	*con_cls = NULL;
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
	struct nt_server *s = c->req.server;
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
	if (r->status == 401 && c->www_auth)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"nettune\"");
	if (s && nt_srv_should_close(s))
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

/* First call, headers parsed: route and check everything that does not need
 * the body, answering early so an unwanted body is never read. */
static enum MHD_Result begin(struct nt_server *s, struct nt_conn *c, struct MHD_Connection *mc,
			     const char *method)
{
	int r = nt_srv_split_path(c);
	if (r == -ENOMEM)
		return MHD_NO;
	if (r < 0)
		return send_problem(mc, c, 400, "bad-request", "Bad request",
				    "the path has an invalid percent-encoding");

	char why[256] = "";
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
	bool duplicate;
	if (nt_srv_check_query(mc, c->route, bad, sizeof(bad), &duplicate) < 0)
		return send_problem(mc, c, 400, "bad-request", "Bad request",
				    duplicate ? "query parameter '%s' is given more than once" :
						"unknown query parameter '%s'",
				    bad);

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
		return begin(s, c, mc, method);
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
	int r = c->route->fn(&c->req, &resp);
	if (r < 0 && (resp.status < 400 || (!resp.json && !resp.text)))
		nt_problem(&resp, 500, "internal", "Internal error",
			   "%s", nt_strerror(r));
	if (resp.status == 0)
		resp.status = (resp.json || resp.text) ? 200 : 204;
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

	flags = MHD_USE_INTERNAL_POLLING_THREAD;
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
	OPT(MHD_OPTION_CONNECTION_MEMORY_LIMIT, 64 * 1024, NULL);
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
	areas_fini(s);
	s->agent = NULL;
	return r;
}

void nt_server_stop(struct nt_server *s)
{
	if (!s)
		return;
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	areas_fini(s);
	nt_srv_security_fini(s);
	free(s);
}
