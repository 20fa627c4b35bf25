/* SPDX-License-Identifier: Apache-2.0 */
/* systemd's notification protocol without libsystemd: the $NOTIFY_SOCKET
 * address, the watchdog variables, and a real datagram to a socket this
 * test binds (a path and an abstract name). */
#include "kernel/sdnotify.h"
#include "harness.h"

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_addr(void)
{
	struct sockaddr_un a;
	socklen_t len = 0;

	CHECK_INT(nt_sd_notify_addr("/run/systemd/notify", &a, &len), 0);
	CHECK_STR(a.sun_path, "/run/systemd/notify");
	CHECK_INT(len, offsetof(struct sockaddr_un, sun_path) + strlen("/run/systemd/notify") + 1);

	CHECK_INT(nt_sd_notify_addr("@abc", &a, &len), 0);
	CHECK(a.sun_path[0] == '\0' && memcmp(a.sun_path + 1, "abc", 3) == 0);
	/* The length ends the abstract name: no NUL counted after it. */
	CHECK_INT(len, offsetof(struct sockaddr_un, sun_path) + 4);

	CHECK_INT(nt_sd_notify_addr("relative/sock", &a, &len), -EINVAL);
	CHECK_INT(nt_sd_notify_addr("", &a, &len), -EINVAL);
	CHECK_INT(nt_sd_notify_addr("@", &a, &len), -EINVAL);
	CHECK_INT(nt_sd_notify_addr("vsock:2:1234", &a, &len), -EINVAL);

	char longp[200];
	memset(longp, 'x', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	CHECK_INT(nt_sd_notify_addr(longp, &a, &len), -ENAMETOOLONG);
	longp[0] = '@';
	CHECK_INT(nt_sd_notify_addr(longp, &a, &len), -ENAMETOOLONG);
	/* The longest names that fit: 107 path bytes and a NUL; 108 abstract. */
	longp[0] = '/';
	longp[sizeof(a.sun_path) - 1] = '\0';
	CHECK_INT(nt_sd_notify_addr(longp, &a, &len), 0);
	memset(longp, 'x', sizeof(longp) - 1);
	longp[0] = '@';
	longp[sizeof(a.sun_path)] = '\0';
	CHECK_INT(nt_sd_notify_addr(longp, &a, &len), 0);
	CHECK_INT(len, sizeof(a));
}

static void test_watchdog(void)
{
	uint64_t usec = 7;

	CHECK_INT(nt_sd_watchdog_parse(NULL, NULL, 100, &usec), 0);
	CHECK_INT(usec, 7);
	CHECK_INT(nt_sd_watchdog_parse("30000000", NULL, 100, &usec), 1);
	CHECK_INT(usec, 30000000);
	usec = 7;
	CHECK_INT(nt_sd_watchdog_parse("30000000", "100", 100, &usec), 1);
	CHECK_INT(usec, 30000000);
	/* Meant for another process (inherited): not ours to ping. */
	usec = 7;
	CHECK_INT(nt_sd_watchdog_parse("30000000", "101", 100, &usec), 0);
	CHECK_INT(usec, 7);
	CHECK_INT(nt_sd_watchdog_parse("0", NULL, 100, &usec), -EINVAL);
	CHECK_INT(nt_sd_watchdog_parse("18446744073709551615", NULL, 100, &usec), -EINVAL);
	CHECK_INT(nt_sd_watchdog_parse("18446744073709551616", NULL, 100, &usec), -EINVAL);
	CHECK_INT(nt_sd_watchdog_parse("-5", NULL, 100, &usec), -EINVAL);
	CHECK_INT(nt_sd_watchdog_parse(" 5", NULL, 100, &usec), -EINVAL);
	CHECK_INT(nt_sd_watchdog_parse("5s", NULL, 100, &usec), -EINVAL);
	CHECK_INT(nt_sd_watchdog_parse("", NULL, 100, &usec), -EINVAL);
	CHECK_INT(nt_sd_watchdog_parse("5", "0", 100, &usec), -EINVAL);
	CHECK_INT(nt_sd_watchdog_parse("5", "x", 100, &usec), -EINVAL);
	CHECK_INT(nt_sd_watchdog_parse("5", "99999999999", 100, &usec), -EINVAL);

	/* The environment of this process. */
	char pid[32];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_USEC", "2000000", 1);
	setenv("WATCHDOG_PID", pid, 1);
	CHECK_INT(nt_sd_watchdog_enabled(&usec), 1);
	CHECK_INT(usec, 2000000);
	setenv("WATCHDOG_PID", "1", 1);
	CHECK_INT(getpid() == 1 ? 0 : nt_sd_watchdog_enabled(&usec), 0);
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	CHECK_INT(nt_sd_watchdog_enabled(&usec), 0);
}

/* Bind a datagram socket at NAME (a path, or "@name"), point
 * NOTIFY_SOCKET at it, notify, and check the datagram that arrives. */
static void notify_to(const char *name)
{
	struct sockaddr_un a;
	socklen_t len;
	char buf[256];

	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_INT(nt_sd_notify_addr(name, &a, &len), 0);
	int b = bind(fd, (struct sockaddr *)&a, len);
	CHECK_MSG(b == 0, "bind %s: %s", name, strerror(errno));
	if (b == 0) {
		setenv("NOTIFY_SOCKET", name, 1);
		CHECK_INT(nt_sd_notify("READY=1\nSTATUS=serving"), 1);
		CHECK_INT(nt_sd_notify("WATCHDOG=1"), 1);
		struct pollfd p = { fd, POLLIN, 0 };
		CHECK_INT(poll(&p, 1, 5000), 1);
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		CHECK_INT(n, strlen("READY=1\nSTATUS=serving"));
		buf[n > 0 ? n : 0] = '\0';
		CHECK_STR(buf, "READY=1\nSTATUS=serving");
		/* One datagram each: the second is its own message. */
		n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		buf[n > 0 ? n : 0] = '\0';
		CHECK_STR(buf, "WATCHDOG=1");
		unsetenv("NOTIFY_SOCKET");
	}
	close(fd);
}

static void test_send(void)
{
	char dir[] = "/tmp/nt-sdnotify-XXXXXX", path[128], abstract[64];

	unsetenv("NOTIFY_SOCKET");
	CHECK_INT(nt_sd_notify("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "not/absolute", 1);
	CHECK_INT(nt_sd_notify("READY=1"), -EINVAL);

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/notify", dir);
	notify_to(path);
	/* Nobody listening any more: an error, not a hang. */
	setenv("NOTIFY_SOCKET", path, 1);
	CHECK(nt_sd_notify("READY=1") < 0);
	unsetenv("NOTIFY_SOCKET");
	unlink(path);
	rmdir(dir);

	snprintf(abstract, sizeof(abstract), "@nettune-test-sdnotify-%d", (int)getpid());
	notify_to(abstract);
}

int main(void)
{
	test_addr();
	test_watchdog();
	test_send();
	TEST_MAIN_END();
}
