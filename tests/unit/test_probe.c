/* SPDX-License-Identifier: Apache-2.0 */
/* The watchdog probe's status-line parser (cli/probe.c), and the probe
 * against a port where nothing listens. */
#include "cli/probe.h"
#include "kernel/ctx.h"
#include "harness.h"

#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#define S(text) text, sizeof(text) - 1

int main(void)
{
	CHECK_INT(nt_probe_parse_status(S("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")), 200);
	CHECK_INT(nt_probe_parse_status(S("HTTP/1.0 503 Service Unavailable\r\n")), 503);
	CHECK_INT(nt_probe_parse_status(S("HTTP/1.1 204\r\n")), 204);
	CHECK_INT(nt_probe_parse_status(S("HTTP/1.1 200")), 200);
	CHECK_INT(nt_probe_parse_status(S("HTTP/1.1 2000 OK\r\n")), NT_EPARSE);
	CHECK_INT(nt_probe_parse_status(S("HTTP/1.1 20 OK\r\n")), NT_EPARSE);
	CHECK_INT(nt_probe_parse_status(S("HTTP/1.1 099 OK\r\n")), NT_EPARSE);
	CHECK_INT(nt_probe_parse_status(S("HTTP/2 200 OK\r\n")), NT_EPARSE);
	CHECK_INT(nt_probe_parse_status(S("HTTP/1.1  200 OK\r\n")), NT_EPARSE);
	CHECK_INT(nt_probe_parse_status(S("SSH-2.0-OpenSSH\r\n")), NT_EPARSE);
	CHECK_INT(nt_probe_parse_status(S("")), NT_EPARSE);
	/* Only LEN bytes count: a status line cut short is not one. */
	CHECK_INT(nt_probe_parse_status("HTTP/1.1 200 OK", 10), NT_EPARSE);

	CHECK_INT(nt_probe_get("localhost", 80, false, "/v1/health", 100), -EINVAL);
	/* A port bound but not listening: refused at once, not a hang. */
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0) {
		CHECK_INT(nt_probe_get("127.0.0.1", ntohs(a.sin_port), false, "/v1/health", 1000),
			  -ECONNREFUSED);
		CHECK_INT(nt_probe_get("127.0.0.1", ntohs(a.sin_port), true, "/v1/health", 1000),
			  -ECONNREFUSED);
	} else {
		CHECK(!"bound a loopback port");
	}
	if (fd >= 0)
		close(fd);
	TEST_MAIN_END();
}
