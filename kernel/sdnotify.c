/* SPDX-License-Identifier: Apache-2.0 */
#include "kernel/sdnotify.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int nt_sd_notify_addr(const char *value, struct sockaddr_un *addr, socklen_t *len)
{
	size_t n = strlen(value);

	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	if (value[0] == '@') {
		/* Abstract: the name is the bytes after a leading NUL, and its
		 * length is the address length (no terminating NUL). */
		if (n < 2)
			return -EINVAL;
		if (n > sizeof(addr->sun_path))
			return -ENAMETOOLONG;
		memcpy(addr->sun_path + 1, value + 1, n - 1);
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
		return 0;
	}
	if (value[0] != '/')
		return -EINVAL;
	if (n >= sizeof(addr->sun_path))
		return -ENAMETOOLONG;
	memcpy(addr->sun_path, value, n);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	return 0;
}

int nt_sd_notify(const char *state)
{
	struct sockaddr_un addr;
	socklen_t len;
	const char *value = getenv("NOTIFY_SOCKET");
	int r;

	if (!value || !*value)
		return 0;
	if ((r = nt_sd_notify_addr(value, &addr, &len)) < 0)
		return r;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Never wait on the service manager: a full socket loses one
	 * status line, a blocked agent would miss its own watchdog. */
	ssize_t sent = sendto(fd, state, strlen(state), MSG_NOSIGNAL | MSG_DONTWAIT,
			      (struct sockaddr *)&addr, len);
	r = sent < 0 ? -errno : 1;
	close(fd);
	return r;
}

/* A whole decimal number, nothing before or after (strtoull alone takes
 * spaces, signs and trailing text). */
static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

int nt_sd_watchdog_parse(const char *usec_value, const char *pid_value, pid_t self,
			 uint64_t *usec)
{
	uint64_t u, pid;

	if (!usec_value)
		return 0;
	/* 0 and UINT64_MAX (infinity) are not a period. */
	if (parse_u64(usec_value, &u) < 0 || u == 0 || u == UINT64_MAX)
		return -EINVAL;
	if (pid_value) {
		if (parse_u64(pid_value, &pid) < 0 || pid == 0 || pid > INT32_MAX)
			return -EINVAL;
		/* Inherited by a child: the pings are not expected from it. */
		if ((pid_t)pid != self)
			return 0;
	}
	*usec = u;
	return 1;
}

int nt_sd_watchdog_enabled(uint64_t *usec)
{
	return nt_sd_watchdog_parse(getenv("WATCHDOG_USEC"), getenv("WATCHDOG_PID"), getpid(), usec);
}
