/* SPDX-License-Identifier: Apache-2.0 */
/* What a client may cost the server: open connections, body bytes, the
 * body's type and how much work its JSON is to parse. Every limit is
 * checked as early as the request allows, so that what is refused is
 * never read or parsed. */
#include "api/server_int.h"

#include <errno.h>
#include <malloc.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <netinet/in.h>

/* A chunked body that keeps coming after the limit is discarded so the
 * client still gets its 413, but not forever: past the limit plus this the
 * connection is dropped. */
#define NT_BODY_DISCARD_SLACK (8 * 1024 * 1024)
/* MHD worker threads (fewer when the connection cap is lower). */
#define NT_THREADS 8

/* One open connection, as the reaper sees it. */
struct nt_sock {
	struct nt_sock *next, *prev;
	int fd;
	bool serving; /* its request head arrived and it is being answered */
	/* Counted in s->nfresh: no request head has arrived on it yet, and it
	 * was not cut. */
	bool fresh;
	struct timespec born; /* CLOCK_MONOTONIC: when it opened */
	struct timespec due; /* CLOCK_MONOTONIC: the head must be in by then */
	/* Over its address's share (--max-per-client): answered 503 and
	 * closed, and not counted in that share. */
	bool excess;
	bool answered; /* ... and its 503 was written at once */
	struct sockaddr_storage addr; /* the client's, port ignored */
};

/* An excess connection is answered as soon as it opens (plain HTTP: the
 * 503 written straight to the socket, which MHD has not written to yet),
 * its sending side shut, and its request read for this long before it is
 * cut: a request sent at once is then read, not left unread at the close
 * (which would send the client a reset). Its slot is held that long at
 * most, and less when slots run short (cut_answered_locked). Under TLS
 * no bytes can be written around the session: the 503 is the handler's,
 * once the head is in, and a head not in within NT_EXCESS_HEAD_MS gets
 * none. */
#define NT_EXCESS_LINGER_MS 250
#define NT_EXCESS_HEAD_MS 1000

/* The 503 of an excess connection, written straight to FD: the same
 * problem document as the handler's (api/server.c), keys sorted. */
static void send_excess_raw(int fd)
{
	static const char body[] = "{\"detail\":\"" NT_EXCESS_DETAIL "\",\"status\":503,"
				   "\"title\":\"" NT_EXCESS_TITLE "\",\"type\":\"" NT_PROBLEM_BASE
				   NT_EXCESS_TYPE "\"}\n";
	char buf[1024];
	int n = snprintf(buf, sizeof(buf),
			 "HTTP/1.1 503 Service Unavailable\r\n"
			 "Content-Type: application/problem+json\r\n"
			 "Retry-After: " NT_EXCESS_RETRY_AFTER "\r\n"
			 "Cache-Control: no-store\r\n"
			 "Connection: close\r\n"
			 "Content-Length: %zu\r\n\r\n%s",
			 sizeof(body) - 1, body);
	if (n > 0 && (size_t)n < sizeof(buf))
		(void)!send(fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* A fresh connection younger than this is never cut for the reserve: a
 * client that sends its request at once has done so by then, even over a
 * slow link with a TLS handshake, and a burst of clients beyond the cap
 * waits in the listen backlog as before rather than cutting each other. */
#define NT_FRESH_GRACE_MS 1000

/* The reserve. Connections that have not sent a whole request head yet
 * ("fresh") may hold at most max_conn - reserve slots: when one more
 * opens, the oldest fresh one is cut. So whatever slow clients do, and
 * from however many addresses, slots stay free for a client that sends its
 * request at once (a controller with its token, a health probe): its
 * connection is accepted, its head completes within a round trip, and from
 * then on it is never cut for the reserve.
 *
 * Why this and not only a smaller per-address limit: a per-address limit
 * divides the cap by the number of addresses an attacker has, and a
 * slow-client attack from max_conn / limit addresses still takes every
 * slot (with the old default of half the cap, two addresses did: 0 of 5
 * authenticated probes served in 30 s). Why the oldest: a trickler has
 * been holding its slot the longest, while a legitimate client's fresh
 * connection is the newest and completes its head first. A connection
 * that has finished a request (a keep-alive one, idle between requests)
 * is not fresh and is never cut for the reserve: Connection: close past
 * three quarters of the cap (nt_srv_should_close) and the client timeout
 * govern those. */
static unsigned reserve_of(unsigned max_conn)
{
	if (max_conn < 2)
		return 0;
	unsigned r = max_conn / 4;
	return r ? r : 1;
}

/* Cut K (lock held): shut down, not closed, as the reaper does; MHD sees
 * the end of the stream and frees the slot. */
static void cut_locked(struct nt_server *s, struct nt_sock *k)
{
	shutdown(k->fd, SHUT_RDWR);
	k->fd = -1;
	if (k->fresh) {
		k->fresh = false;
		s->nfresh--;
	}
}

/* More fresh connections than the reserve allows (lock held): cut the
 * oldest, of those past NT_FRESH_GRACE_MS. The list is newest first, so
 * walk from its tail. Called when one opens and at every reaper tick. */
static void keep_reserve_locked(struct nt_server *s)
{
	if (!s->reserve || s->nfresh <= s->max_conn - s->reserve)
		return;
	struct timespec old;
	clock_gettime(CLOCK_MONOTONIC, &old);
	old.tv_sec -= NT_FRESH_GRACE_MS / 1000;
	old.tv_nsec -= (NT_FRESH_GRACE_MS % 1000) * 1000000L;
	if (old.tv_nsec < 0) {
		old.tv_sec--;
		old.tv_nsec += 1000000000L;
	}
	struct nt_sock *k = s->socks;
	while (k && k->next)
		k = k->next;
	for (; k && s->nfresh > s->max_conn - s->reserve; k = k->prev) {
		if (!nt_srv_ts_before(&k->born, &old))
			break; /* this one and every newer one are in their grace */
		if (k->fresh && !k->serving && k->fd >= 0) {
			cut_locked(s, k);
			s->evicted++;
		}
	}
}

/* Whether A and B are the same client address (the port aside). */
static bool same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
	return false;
}

/* Open connections from ADDR within its share (lock held). The excess
 * ones are not counted: they are on their way out, and counting them
 * would let an address that keeps opening connections lock itself out
 * even after its held ones close. */
static unsigned from_address_locked(const struct nt_server *s, const struct sockaddr_storage *addr)
{
	unsigned n = 0;
	for (const struct nt_sock *k = s->socks; k; k = k->next)
		n += !k->excess && same_address(&k->addr, addr);
	return n;
}

/* Slots running short (lock held): excess connections already answered
 * are cut now rather than at their linger's end, so that an address
 * opening connections as fast as it can does not keep others out. */
static void cut_answered_locked(struct nt_server *s)
{
	if (__atomic_load_n(&s->nconn, __ATOMIC_RELAXED) < (int)(s->max_conn - s->reserve))
		return;
	for (struct nt_sock *k = s->socks; k; k = k->next)
		if (k->answered && !k->serving && k->fd >= 0)
			cut_locked(s, k);
}

static void due_from_now(const struct nt_server *s, struct timespec *due)
{
	clock_gettime(CLOCK_MONOTONIC, due);
	due->tv_sec += s->head_deadline_s;
}

void nt_srv_limits_init(struct nt_server *s)
{
	const nt_server_config *cfg = &s->cfg;
	s->max_body = cfg->max_body ? cfg->max_body : NT_DEFAULT_MAX_BODY;
	s->max_conn = cfg->max_connections ? cfg->max_connections : NT_DEFAULT_MAX_CONNECTIONS;
	s->keepalive_max = s->max_conn * 3 / 4;
	s->timeout_s = cfg->client_timeout_s ? cfg->client_timeout_s : NT_DEFAULT_CLIENT_TIMEOUT_S;
	/* One address may not take every slot: whoever trickles requests
	 * from it leaves the other half to everyone else. Counted here, not
	 * by MHD (whose limit closes the socket with the request unread, a
	 * reset for the client): the excess is answered 503 and closed. */
	s->max_per_client = cfg->max_per_client ? cfg->max_per_client :
			    (s->max_conn > 1 ? s->max_conn / 2 : 1);
	s->reserve = reserve_of(s->max_conn);
	s->head_deadline_s = s->timeout_s < NT_HEADER_DEADLINE_S ? s->timeout_s :
								   NT_HEADER_DEADLINE_S;
	/* MHD splits the connection cap among its worker threads. */
	s->threads = s->max_conn < NT_THREADS ? s->max_conn : NT_THREADS;
}

void nt_srv_on_connection(void *cls, struct MHD_Connection *mc, void **socket_ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	struct nt_server *s = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		__atomic_add_fetch(&s->nconn, 1, __ATOMIC_RELAXED);
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct nt_sock *k = ci ? calloc(1, sizeof(*k)) : NULL;
		if (!k)
			return; /* untracked: only the client timeout applies */
		k->fd = ci->connect_fd;
		k->fresh = true;
		clock_gettime(CLOCK_MONOTONIC, &k->born);
		due_from_now(s, &k->due);
		const union MHD_ConnectionInfo *ai =
			MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		bool have_addr = ai && ai->client_addr;
		if (have_addr)
			memcpy(&k->addr, ai->client_addr,
			       ai->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
									sizeof(struct sockaddr_in));
		pthread_mutex_lock(&s->conn_lock);
		if (have_addr && from_address_locked(s, &k->addr) >= s->max_per_client) {
			k->excess = true;
			if (s->tls) {
				nt_srv_due_in_ms(&k->due, NT_EXCESS_HEAD_MS);
			} else {
				send_excess_raw(k->fd);
				shutdown(k->fd, SHUT_WR);
				k->answered = true;
				nt_srv_due_in_ms(&k->due, NT_EXCESS_LINGER_MS);
			}
		}
		cut_answered_locked(s);
		k->next = s->socks;
		if (s->socks)
			s->socks->prev = k;
		s->socks = k;
		s->nfresh++;
		keep_reserve_locked(s);
		pthread_mutex_unlock(&s->conn_lock);
		*socket_ctx = k;
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		__atomic_sub_fetch(&s->nconn, 1, __ATOMIC_RELAXED);
		struct nt_sock *k = *socket_ctx;
		if (!k)
			return;
		/* MHD closes the descriptor only after this: once unlinked
		 * here, the reaper never touches it again. */
		pthread_mutex_lock(&s->conn_lock);
		if (k->fresh)
			s->nfresh--;
		if (k->prev)
			k->prev->next = k->next;
		else
			s->socks = k->next;
		if (k->next)
			k->next->prev = k->prev;
		pthread_mutex_unlock(&s->conn_lock);
		free(k);
		*socket_ctx = NULL;
	}
}

static struct nt_sock *sock_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

enum nt_share nt_srv_head_arrived(struct nt_server *s, struct MHD_Connection *mc)
{
	struct nt_sock *k = sock_of(mc);
	if (!k)
		return NT_SHARE_OK;
	pthread_mutex_lock(&s->conn_lock);
	k->serving = true;
	if (k->fresh) {
		k->fresh = false;
		s->nfresh--;
	}
	enum nt_share r = k->answered ? NT_SHARE_ANSWERED : k->excess ? NT_SHARE_EXCESS : NT_SHARE_OK;
	pthread_mutex_unlock(&s->conn_lock);
	return r;
}

void nt_srv_request_done(struct nt_server *s, struct MHD_Connection *mc)
{
	struct nt_sock *k = sock_of(mc);
	if (!k)
		return;
	pthread_mutex_lock(&s->conn_lock);
	k->serving = false;
	due_from_now(s, &k->due);
	pthread_mutex_unlock(&s->conn_lock);
}

/* How long the agent must have been idle before free memory is given back:
 * long enough that a burst of big reads reuses the same memory instead of
 * faulting it in again for each one. */
#define NT_TRIM_IDLE_MS 200

void nt_srv_trim_later(struct nt_server *s)
{
	pthread_mutex_lock(&s->conn_lock);
	nt_srv_due_in_ms(&s->trim_after, NT_TRIM_IDLE_MS);
	s->trim_due = true;
	pthread_mutex_unlock(&s->conn_lock);
}

/* Every quarter second: connections whose request head is overdue are shut
 * down (not closed: the descriptor stays MHD's, which then sees the end of
 * the stream and frees the slot at once). The client timeout alone cannot
 * do this, since every byte, however late, restarts it. And once no
 * request is being served and the last big body is NT_TRIM_IDLE_MS old,
 * malloc's free memory goes back to the kernel: the agent returns to its
 * idle size within half a second of its last big answer, without paying
 * for that on every request. */
static void *reaper_main(void *arg)
{
	struct nt_server *s = arg;
	pthread_mutex_lock(&s->conn_lock);
	while (!s->reaper_stop) {
		struct timespec now, wake;
		bool serving = false;
		clock_gettime(CLOCK_MONOTONIC, &now);
		for (struct nt_sock *k = s->socks; k; k = k->next) {
			serving |= k->serving;
			if (k->serving || k->fd < 0)
				continue;
			if (!nt_srv_ts_before(&now, &k->due)) {
				cut_locked(s, k);
				s->reaped++;
			}
		}
		keep_reserve_locked(s);
		if (s->trim_due && !serving && !nt_srv_ts_before(&now, &s->trim_after)) {
			s->trim_due = false;
			pthread_mutex_unlock(&s->conn_lock);
			/* SQLite's cache first: a transaction's pages go back to
			 * malloc, then with the rest to the kernel. */
			if (s->agent && nt_agent_store(s->agent))
				nt_store_release_memory(nt_agent_store(s->agent));
			malloc_trim(0);
			pthread_mutex_lock(&s->conn_lock);
			continue;
		}
		nt_srv_due_in_ms(&wake, 250);
		pthread_cond_timedwait(&s->reaper_cond, &s->conn_lock, &wake);
	}
	pthread_mutex_unlock(&s->conn_lock);
	return NULL;
}

int nt_srv_reaper_start(struct nt_server *s)
{
	pthread_condattr_t ca;
	pthread_mutex_init(&s->conn_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->reaper_cond, &ca);
	pthread_condattr_destroy(&ca);
	int r = pthread_create(&s->reaper, NULL, reaper_main, s);
	if (r != 0) {
		pthread_cond_destroy(&s->reaper_cond);
		pthread_mutex_destroy(&s->conn_lock);
		return -r;
	}
	s->reaper_running = true;
	return 0;
}

void nt_srv_reaper_stop(struct nt_server *s)
{
	if (!s->reaper_running)
		return;
	pthread_mutex_lock(&s->conn_lock);
	s->reaper_stop = true;
	pthread_cond_signal(&s->reaper_cond);
	pthread_mutex_unlock(&s->conn_lock);
	pthread_join(s->reaper, NULL);
	s->reaper_running = false;
	pthread_cond_destroy(&s->reaper_cond);
	pthread_mutex_destroy(&s->conn_lock);
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
