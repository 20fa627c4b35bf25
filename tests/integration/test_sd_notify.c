/* SPDX-License-Identifier: Apache-2.0 */
/* `nettune serve` under a service manager, played by this test: it binds
 * the notification socket systemd would ($NOTIFY_SOCKET, an abstract name
 * here) and checks the agent's datagrams: READY=1 once it listens,
 * WATCHDOG=1 pings while its API answers (WATCHDOG_USEC), STOPPING=1 on
 * SIGTERM. And what the agent maps: without a watchdog, neither libcurl
 * nor libsystemd (they are opened only when needed, kernel/dynlib.h). */
#include "harness.h"
#include "integration/nt_agent.h"

#include <poll.h>
#include <stddef.h>
#include <sys/un.h>

#define SRC NT_FIXTURES "/epyc7713-2node-bond"

/* Every datagram that arrives within MS milliseconds, appended to OUT as
 * lines separated by "|". */
static void collect(int fd, int ms, char *out, size_t size)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		long left = ms - ((now.tv_sec - start.tv_sec) * 1000 +
				  (now.tv_nsec - start.tv_nsec) / 1000000);
		if (left <= 0)
			break;
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		char buf[512];
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		size_t len = strlen(out);
		snprintf(out + len, size - len, "%s|", buf);
	}
}

static bool maps_contain(pid_t pid, const char *needle)
{
	char path[64], line[1024];
	bool found = false;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

int main(void)
{
	nt_agent a;
	struct sockaddr_un addr;
	char name[64];
	static char got[16384];

	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	snprintf(name, sizeof(name), "@nettune-test-notify-%d", (int)getpid());
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "%s", name + 1);
	socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name));
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, alen) < 0)
		SKIP("cannot bind an abstract AF_UNIX socket here: %s", strerror(errno));

	/* Without a watchdog: notifications, and no HTTP client or bus
	 * library mapped. */
	setenv("NOTIFY_SOCKET", name, 1);
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	if (nt_agent_start(&a, SRC, NULL, NULL) < 0) {
		CHECK(!"agent started");
		TEST_MAIN_END();
	}
	got[0] = '\0';
	collect(fd, 300, got, sizeof(got));
	CHECK_MSG(strstr(got, "READY=1\nSTATUS=serving|") != NULL, "got \"%s\"", got);
	CHECK_MSG(strstr(got, "WATCHDOG=1") == NULL, "got \"%s\"", got);
	long st = 0;
	CHECK_INT(nt_http("GET", nt_url(&a, "/v1/topology"), NULL, &st, NULL, NULL, 0), 0);
	CHECK_INT(st, 200);
	CHECK(maps_contain(a.pid, "libc.so")); /* the maps are readable at all */
	CHECK(!maps_contain(a.pid, "libcurl"));
	CHECK(!maps_contain(a.pid, "libsystemd"));
	CHECK(!maps_contain(a.pid, "libssl"));
	CHECK(!maps_contain(a.pid, "libcrypto"));
	nt_agent_stop(&a);
	got[0] = '\0';
	collect(fd, 100, got, sizeof(got));
	CHECK_MSG(strstr(got, "STOPPING=1|") != NULL, "got \"%s\"", got);

	/* With a watchdog of 400 ms the probe pings every 200 ms while the
	 * API answers /v1/health. */
	setenv("WATCHDOG_USEC", "400000", 1);
	if (nt_agent_start(&a, SRC, NULL, NULL) < 0) {
		CHECK(!"agent started with a watchdog");
		TEST_MAIN_END();
	}
	got[0] = '\0';
	collect(fd, 1500, got, sizeof(got));
	CHECK_MSG(strstr(got, "READY=1\nSTATUS=serving|") != NULL, "got \"%s\"", got);
	int pings = 0;
	for (const char *p = got; (p = strstr(p, "WATCHDOG=1|")); p++)
		pings++;
	CHECK_MSG(pings >= 3, "%d pings in 1.5 s: \"%s\"", pings, got);
	nt_agent_stop(&a);
	/* The agent has exited: what it sent since is all queued; drop it. */
	got[0] = '\0';
	collect(fd, 50, got, sizeof(got));

	/* A watchdog meant for another process (WATCHDOG_PID, inherited):
	 * no pings from this one. */
	setenv("WATCHDOG_PID", "1", 1);
	if (nt_agent_start(&a, SRC, NULL, NULL) < 0) {
		CHECK(!"agent started with another's watchdog");
		TEST_MAIN_END();
	}
	got[0] = '\0';
	collect(fd, 800, got, sizeof(got));
	CHECK_MSG(strstr(got, "READY=1") != NULL, "got \"%s\"", got);
	CHECK_MSG(strstr(got, "WATCHDOG=1") == NULL, "got \"%s\"", got);
	nt_agent_stop(&a);

	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	close(fd);
	TEST_MAIN_END();
}
