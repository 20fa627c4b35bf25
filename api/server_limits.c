/* What a client may cost the server: open connections, body bytes, the
 * body's type and how much work its JSON is to parse. Every limit is
 * checked as early as the request allows, so that what is refused is
 * never read or parsed. */
#include "api/server_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A chunked body that keeps coming after the limit is discarded so the
 * client still gets its 413, but not forever: past the limit plus this the
 * connection is dropped. */
#define NT_BODY_DISCARD_SLACK (8 * 1024 * 1024)
/* MHD worker threads (fewer when the connection cap is lower). */
#define NT_THREADS 4

void nt_srv_limits_init(struct nt_server *s)
{
	const nt_server_config *cfg = &s->cfg;
	s->max_body = cfg->max_body ? cfg->max_body : NT_DEFAULT_MAX_BODY;
	s->max_conn = cfg->max_connections ? cfg->max_connections : NT_DEFAULT_MAX_CONNECTIONS;
	s->keepalive_max = s->max_conn * 3 / 4;
	s->timeout_s = cfg->client_timeout_s ? cfg->client_timeout_s : NT_DEFAULT_CLIENT_TIMEOUT_S;
	/* MHD splits the connection cap among its worker threads. */
	s->threads = s->max_conn < NT_THREADS ? s->max_conn : NT_THREADS;
}

void nt_srv_on_connection(void *cls, struct MHD_Connection *mc, void **socket_ctx,
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
bool nt_srv_should_close(struct nt_server *s)
{
	return __atomic_load_n(&s->nconn, __ATOMIC_RELAXED) > (int)s->keepalive_max;
}

unsigned long long nt_srv_declared_length(struct MHD_Connection *mc, bool *has_body)
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

struct framing {
	int ncl; /* Content-Length headers */
	bool cl_differ; /* ... with different values */
	const char *first_cl;
	int nte; /* Transfer-Encoding headers */
};

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key,
				     const char *value)
{
	struct framing *f = cls;
	if (!key)
		return MHD_YES;
	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
		if (f->ncl++ == 0)
			f->first_cl = value ? value : "";
		else if (strcmp(f->first_cl, value ? value : "") != 0)
			f->cl_differ = true;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
		f->nte++;
	}
	return MHD_YES;
}

int nt_srv_check_framing(struct MHD_Connection *mc, char *why, size_t whysize)
{
	struct framing f = { 0 };
	MHD_get_connection_values(mc, MHD_HEADER_KIND, count_framing, &f);
	/* Two lengths that disagree are how request smuggling starts: a proxy
	 * in front may have used the other one. (RFC 9112 6.3: unrecoverable.) */
	if (f.cl_differ) {
		snprintf(why, whysize, "the request has Content-Length headers that disagree");
		return -EBADMSG;
	}
	if (f.ncl && f.nte) {
		snprintf(why, whysize, "the request has both Content-Length and Transfer-Encoding");
		return -EBADMSG;
	}
	if (f.nte) {
		const char *te = MHD_lookup_connection_value(mc, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_TRANSFER_ENCODING);
		if (f.nte > 1 || !te || strcasecmp(te, "chunked") != 0) {
			snprintf(why, whysize,
				 "Transfer-Encoding '%.64s' is not supported (only 'chunked')",
				 f.nte > 1 ? "(given more than once)" : te ? te : "");
			return -ENOSYS;
		}
	}
	return 0;
}

bool nt_srv_is_json_type(const char *ct)
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

int nt_srv_append_body(struct nt_conn *c, size_t max, const char *data, size_t n)
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
int nt_srv_json_prescan(const char *p, size_t n, int max_depth, long max_values, char *why,
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
