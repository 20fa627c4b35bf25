/* SPDX-License-Identifier: Apache-2.0 */
/* Who may call, at the HTTP server's edge. With a token file or a client
 * CA configured, every request but GET /v1/health, /v1/openapi.yaml and
 * the web view's static files under /ui/ (see path_is_open) must carry a
 * valid bearer token or a verified client certificate; 401 before anything
 * else is looked at, so an
 * unauthenticated client learns nothing, not even which paths exist. A
 * `read` token may use GET and HEAD; writes (plan, transactions, profiles)
 * need `apply` (403 otherwise). A client certificate counts as `apply`: it
 * is issued per controller by whoever runs the CA, which is a stronger
 * statement than a shared secret. Tokens themselves are api/auth.c's. */
#include "api/server_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

int nt_srv_security_init(struct nt_server *s, char *err, size_t errsize)
{
	const nt_server_config *cfg = &s->cfg;
	int r;

	if ((r = pthread_rwlock_init(&s->auth_lock, NULL)) != 0) {
		snprintf(err, errsize, "cannot make a lock: %s", strerror(r));
		return -r;
	}
	s->auth_lock_init = true;
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

int nt_server_reload_tokens(struct nt_server *s, char *err, size_t errsize)
{
	nt_auth *fresh = NULL, *old;
	int r;

	if (!s->cfg.tokens_path[0])
		return 0;
	/* The whole file is checked (mode, every line) before anything
	 * changes: a file caught half-written or made readable by others
	 * leaves the tokens in use as they are. */
	if ((r = nt_auth_load(s->cfg.tokens_path, &fresh, err, errsize)) < 0)
		return r;
	pthread_rwlock_wrlock(&s->auth_lock);
	old = s->auth;
	s->auth = fresh;
	pthread_rwlock_unlock(&s->auth_lock);
	nt_auth_free(old);
	return nt_auth_count(fresh);
}

void nt_srv_security_fini(struct nt_server *s)
{
	nt_auth_free(s->auth);
	s->auth = NULL;
	if (s->auth_lock_init)
		pthread_rwlock_destroy(&s->auth_lock);
	s->auth_lock_init = false;
	nt_srv_tls_free(s);
}

bool nt_srv_auth_required(const struct nt_server *s)
{
	return s->auth || s->client_certs;
}

/* Paths served without credentials: the liveness probe, the API's own
 * description and the web view's static files (/, /ui, /ui/, /ui/FILE), none of
 * which tells anything about the host; the page gets its data from the API
 * with the token its user enters. */
static bool path_is_open(const struct nt_conn *c)
{
	if (c->nsegs == 1 && c->segs[0][0] == '\0')
		return true; /* "/": it only redirects to /ui/ */
	if (c->nsegs >= 1 && c->nsegs <= 2 && strcmp(c->segs[0], "ui") == 0)
		return true;
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
	/* The name lives in the table: it is copied before the table can be
	 * replaced by a reload. */
	pthread_rwlock_rdlock(&s->auth_lock);
	int r = s->auth ? nt_auth_bearer(s->auth, h, &name, &scope) : -EACCES;
	if (r == 0) {
		snprintf(c->identity, sizeof(c->identity), "%s", name);
		c->scope = scope;
	}
	pthread_rwlock_unlock(&s->auth_lock);
	if (r < 0) {
		snprintf(why, whysize, "the bearer token is not valid");
		return -EACCES;
	}
	return 0;
}

int nt_srv_authenticate(struct nt_server *s, struct nt_conn *c, struct MHD_Connection *mc,
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

int nt_srv_authorize(const struct nt_server *s, const struct nt_conn *c)
{
	if (!nt_srv_auth_required(s) || path_is_open(c))
		return 0;
	nt_scope need = strcmp(c->route->method, "GET") == 0 || (c->route->flags & NT_ROUTE_READ) ? NT_SCOPE_READ
												   : NT_SCOPE_APPLY;
	return c->scope >= need ? 0 : -EPERM;
}
