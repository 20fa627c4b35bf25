/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/probe.h"
#include "kernel/ctx.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int nt_probe_parse_status(const char *buf, size_t len)
{
	/* "HTTP/1.x NNN" and then a space or the end of the line. */
	if (len < 12 || memcmp(buf, "HTTP/1.", 7) != 0 || buf[7] < '0' || buf[7] > '9' ||
	    buf[8] != ' ')
		return NT_EPARSE;
	int code = 0;
	for (int i = 9; i < 12; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return NT_EPARSE;
		code = code * 10 + (buf[i] - '0');
	}
	if (code < 100 || (len > 12 && buf[12] != ' ' && buf[12] != '\r' && buf[12] != '\n'))
		return NT_EPARSE;
	return code;
}

/* A connected stream socket to HOST:PORT, the connect bounded by
 * TIMEOUT_MS and later reads and writes by the same (SO_RCVTIMEO). */
static int connect_to(const char *host, int port, int timeout_ms)
{
	struct sockaddr_storage ss;
	socklen_t len;
	memset(&ss, 0, sizeof(ss));
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		len = sizeof(*in4);
	} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		len = sizeof(*in6);
	} else {
		return -EINVAL;
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	int r = 0;
	if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
		if (errno != EINPROGRESS) {
			r = -errno;
			goto fail;
		}
		struct pollfd p = { fd, POLLOUT, 0 };
		int n = poll(&p, 1, timeout_ms);
		if (n <= 0) {
			r = n == 0 ? -ETIMEDOUT : -errno;
			goto fail;
		}
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
		if (soerr) {
			r = -soerr;
			goto fail;
		}
	}
	/* Blocking from here, each read and write bounded. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
fail:
	close(fd);
	return r;
}

/* The request on a plain socket; the answer read until the server closes
 * (Connection: close) or BUF is full: the status line is at its start. */
static int exchange_plain(int fd, const char *req, char *buf, size_t size, size_t *got)
{
	size_t n = strlen(req), off = 0;
	while (off < n) {
		ssize_t w = send(fd, req + off, n - off, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		off += (size_t)w;
	}
	*got = 0;
	while (*got < size) {
		ssize_t rd = recv(fd, buf + *got, size - *got, 0);
		if (rd < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		if (rd == 0)
			break;
		*got += (size_t)rd;
	}
	return 0;
}

static int exchange_tls(int fd, const char *req, int timeout_ms, char *buf, size_t size,
			size_t *got)
{
	gnutls_certificate_credentials_t cred = NULL;
	gnutls_session_t s = NULL;
	int r = -EPROTO, g;

	if (gnutls_certificate_allocate_credentials(&cred) < 0 ||
	    gnutls_init(&s, GNUTLS_CLIENT) < 0 || gnutls_set_default_priority(s) < 0 ||
	    gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred) < 0)
		goto out;
	gnutls_transport_set_int(s, fd);
	gnutls_handshake_set_timeout(s, (unsigned)timeout_ms);
	do
		g = gnutls_handshake(s);
	while (g < 0 && !gnutls_error_is_fatal(g) && g != GNUTLS_E_AGAIN);
	if (g < 0)
		goto out;
	size_t n = strlen(req), off = 0;
	while (off < n) {
		ssize_t w = gnutls_record_send(s, req + off, n - off);
		if (w == GNUTLS_E_INTERRUPTED)
			continue;
		if (w < 0)
			goto out;
		off += (size_t)w;
	}
	*got = 0;
	while (*got < size) {
		ssize_t rd = gnutls_record_recv(s, buf + *got, size - *got);
		if (rd == GNUTLS_E_INTERRUPTED)
			continue;
		/* A close without close_notify still ends a complete answer. */
		if (rd == 0 || rd == GNUTLS_E_PREMATURE_TERMINATION)
			break;
		if (rd < 0) {
			r = rd == GNUTLS_E_AGAIN ? -ETIMEDOUT : -EPROTO;
			goto out;
		}
		*got += (size_t)rd;
	}
	gnutls_bye(s, GNUTLS_SHUT_WR);
	r = 0;
out:
	if (s)
		gnutls_deinit(s);
	if (cred)
		gnutls_certificate_free_credentials(cred);
	return r;
}

int nt_probe_get(const char *host, int port, bool tls, const char *path, int timeout_ms)
{
	char req[512], buf[4096];
	size_t got = 0;
	bool v6 = strchr(host, ':') != NULL;

	int n = snprintf(req, sizeof(req),
			 "GET %s HTTP/1.1\r\nHost: %s%s%s:%d\r\nAccept: application/json\r\n"
			 "Connection: close\r\n\r\n",
			 path, v6 ? "[" : "", host, v6 ? "]" : "", port);
	if (n < 0 || (size_t)n >= sizeof(req))
		return -ENAMETOOLONG;
	int fd = connect_to(host, port, timeout_ms);
	if (fd < 0)
		return fd;
	int r = tls ? exchange_tls(fd, req, timeout_ms, buf, sizeof(buf), &got) :
		      exchange_plain(fd, req, buf, sizeof(buf), &got);
	close(fd);
	return r < 0 ? r : nt_probe_parse_status(buf, got);
}
