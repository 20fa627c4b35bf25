/* SPDX-License-Identifier: Apache-2.0 */
/* The watchdog's probe of the agent's own API: one GET over a socket of
 * its own, plain or TLS (GnuTLS, already the server's), with no HTTP
 * client library, so a service with WatchdogSec= does not map libcurl
 * and its TLS stack for a status line. */
#ifndef NT_CLI_PROBE_H
#define NT_CLI_PROBE_H

#include <stdbool.h>
#include <stddef.h>

/* Pure: the status code of the HTTP/1.x status line at the start of BUF
 * (LEN bytes, "HTTP/1.1 200 OK\r\n..."). The code (100..999), or
 * NT_EPARSE when BUF does not start with one. */
int nt_probe_parse_status(const char *buf, size_t len);

/* GET PATH from HOST (a numeric IPv4 or IPv6 address) port PORT,
 * through TLS when TLS is set (the certificate is not checked: the agent
 * asks itself at its own address), each step within TIMEOUT_MS. Returns
 * the HTTP status; -errno (-ETIMEDOUT, -ECONNREFUSED, ...), -EPROTO for a
 * TLS failure, NT_EPARSE for an answer that is not HTTP. */
int nt_probe_get(const char *host, int port, bool tls, const char *path, int timeout_ms);

#endif
