/* SPDX-License-Identifier: Apache-2.0 */
/* Settings groups defined by the caller, against this machine's kernel, the
 * way settings/coalesce.c will use them:
 *  - eth0: a test-local copy of the rings and channels tables reads what
 *    nt_ethtool_get_rings/channels read, over netlink and the ioctl, many
 *    calls on one handle holding one socket.
 *  - eth0: a test-local interrupt coalescing table reads what `ethtool -c`
 *    prints; over netlink a parameter `ethtool -c` shows as n/a is absent,
 *    via the ioctl every field is present. Setting a parameter the driver
 *    lacks is refused by the kernel (netlink: EINVAL with its reason; ioctl:
 *    EOPNOTSUPP) and changes nothing; asking for current values sends nothing.
 *  - a veth in a private network namespace: no coalescing (EOPNOTSUPP), and
 *    a channel count really changed through the caller's table.
 *    (NT_LIVE_NO_NETNS=1 leaves this part out.)
 *  - NT_NSIM_IFACE (the VM lab sets it to a netdevsim port, which supports
 *    every coalescing parameter): coalescing really changed and read back
 *    with `ethtool -c`, through both interfaces, then restored. */
#include "kernel/ethtool.h"
#include "harness.h"
#include "ethtool_groups.h"
#include "live/live_tool.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>


/* Copies of the library's tables, as a caller would write them. */
#define RF(n, A, io, ro, max) { #n, ETHTOOL_A_RINGS_##A, NT_ETHTOOL_U32, \
	offsetof(struct ethtool_ringparam, io), ro, max }
static const nt_ethtool_field ring_fields[] = {
	RF(rx, RX, rx_pending, false, "rx_max"), RF(tx, TX, tx_pending, false, "tx_max"),
	RF(rx_max, RX_MAX, rx_max_pending, true, NULL),
	RF(tx_max, TX_MAX, tx_max_pending, true, NULL),
};
static const nt_ethtool_group rings = {
	.section = "rings",
	.get_cmd = ETHTOOL_MSG_RINGS_GET,
	.set_cmd = ETHTOOL_MSG_RINGS_SET,
	.header_attr = ETHTOOL_A_RINGS_HEADER,
	.ioc_get = ETHTOOL_GRINGPARAM,
	.ioc_set = ETHTOOL_SRINGPARAM,
	.ioc_size = sizeof(struct ethtool_ringparam),
	.fields = ring_fields,
	.nfields = 4,
};
#define CF(n, A, io, ro) { #n, ETHTOOL_A_CHANNELS_##A, NT_ETHTOOL_U32, \
	offsetof(struct ethtool_channels, io), ro, NULL }
static const nt_ethtool_field channel_fields[] = {
	CF(rx, RX_COUNT, rx_count, false), CF(tx, TX_COUNT, tx_count, false),
	CF(other, OTHER_COUNT, other_count, false), CF(combined, COMBINED_COUNT, combined_count, false),
	CF(rx_max, RX_MAX, max_rx, true), CF(tx_max, TX_MAX, max_tx, true),
	CF(other_max, OTHER_MAX, max_other, true), CF(combined_max, COMBINED_MAX, max_combined, true),
};
static const nt_ethtool_group channels = {
	.section = "channels",
	.get_cmd = ETHTOOL_MSG_CHANNELS_GET,
	.set_cmd = ETHTOOL_MSG_CHANNELS_SET,
	.header_attr = ETHTOOL_A_CHANNELS_HEADER,
	.ioc_get = ETHTOOL_GCHANNELS,
	.ioc_set = ETHTOOL_SCHANNELS,
	.ioc_size = sizeof(struct ethtool_channels),
	.fields = channel_fields,
	.nfields = 8,
};

static const nt_ethtool_backend backends[] = { NT_ETHTOOL_NETLINK, NT_ETHTOOL_IOCTL };
static const char *const backend_names[] = { "netlink", "ioctl" };

/* `ethtool -c IFNAME` as values and whether each is shown (not n/a). */
static int tool_coalesce(const char *ifname, uint32_t *val, bool *known)
{
	static const char *const keys[] = { "rx-usecs", "tx-usecs", "rx-frames", "tx-frames" };
	char cmd[128], line[256];
	int found = 0;

	snprintf(cmd, sizeof(cmd), "ethtool -c %s 2>/dev/null", ifname);
	char *out = run(cmd);
	if (!out)
		return -1;
	memset(known, 0, sizeof(bool) * NCOAL);
	memset(val, 0, sizeof(uint32_t) * NCOAL);
	for (const char *p = out; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), p);
		p = e ? e + 1 : p + n;
		for (int i = 0; i < 4; i++) {
			size_t kl = strlen(keys[i]);
			if (strncmp(line, keys[i], kl) || line[kl] != ':')
				continue;
			const char *v = line + kl + 1;
			while (isspace((unsigned char)*v))
				v++;
			known[i] = strcmp(v, "n/a") != 0;
			val[i] = known[i] ? (uint32_t)strtoul(v, NULL, 10) : 0;
			found++;
		}
		char rx[8], tx[8];
		if (sscanf(line, "Adaptive RX: %7s TX: %7s", rx, tx) == 2) {
			known[ADAPT_RX] = strcmp(rx, "n/a") != 0;
			known[ADAPT_TX] = strcmp(tx, "n/a") != 0;
			val[ADAPT_RX] = strcmp(rx, "on") == 0;
			val[ADAPT_TX] = strcmp(tx, "on") == 0;
			found += 2;
		}
	}
	free(out);
	return found == NCOAL ? 0 : -1;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Caller tables read what the library's wrappers read, on one handle. */
static void eth0_rings_channels(const nt_ctx *ctx, int first)
{
	for (int b = first; b < 2; b++) {
		nt_ethtool *h = NULL;
		nt_ethtool_values v;
		nt_rings r;
		nt_channels c;

		printf("eth0 rings/channels via %s\n", backend_names[b]);
		int fds = open_fds();
		CHECK_INT(nt_ethtool_open_via(ctx, backends[b], &h), 0);
		if (!h)
			continue;
		CHECK_INT(nt_ethtool_backend_of(h), backends[b]);
		CHECK_INT(open_fds(), fds + 1); /* one socket for everything below */
		CHECK_INT(nt_ethtool_get_rings_via(ctx, backends[b], "eth0", &r), 0);
		for (int round = 0; round < 3; round++) {
			CHECK_INT(nt_ethtool_get_group(h, ctx, &rings, "eth0", &v), 0);
			CHECK_INT(v.v[0], r.rx);
			CHECK_INT(v.v[1], r.tx);
			CHECK_INT(v.v[2], r.rx_max);
			CHECK_INT(v.v[3], r.tx_max);
		}
		CHECK_INT(nt_ethtool_get_channels_via(ctx, backends[b], "eth0", &c), 0);
		CHECK_INT(nt_ethtool_get_group(h, ctx, &channels, "eth0", &v), 0);
		CHECK_INT(v.v[3], c.combined);
		CHECK_INT(v.v[7], c.combined_max);
		CHECK_INT(v.v[0], c.rx);
		CHECK_INT(v.v[4], c.rx_max);
		/* The wrappers on the same handle. */
		nt_rings r2;
		CHECK_INT(nt_ethtool_read_rings(h, ctx, "eth0", &r2), 0);
		CHECK_INT(r2.rx, r.rx);
		/* Current values: nothing differs, nothing is sent. */
		nt_ethtool_values same = { .present = 0x3, .v = { r.rx, r.tx } };
		char err[256];
		CHECK_INT(nt_ethtool_set_group(h, ctx, &rings, "eth0", &same, err, sizeof(err)), 0);
		CHECK_INT(open_fds(), fds + 1);
		nt_ethtool_close(h);
		CHECK_INT(open_fds(), fds);
	}
}

static void eth0_coalesce(const nt_ctx *ctx, int first)
{
	uint32_t tv[NCOAL];
	bool known[NCOAL];
	char err[256];

	if (tool_coalesce("eth0", tv, known) < 0) {
		printf("note: eth0 has no coalescing (ethtool -c fails); only the refusal tested\n");
		nt_ethtool_values v;
		CHECK_INT(nt_ethtool_get_group(NULL, ctx, &coalesce, "eth0", &v), -EOPNOTSUPP);
		return;
	}
	for (int b = first; b < 2; b++) {
		nt_ethtool *h = NULL;
		nt_ethtool_values v, before;

		printf("eth0 coalesce via %s\n", backend_names[b]);
		CHECK_INT(nt_ethtool_open_via(ctx, backends[b], &h), 0);
		if (!h)
			continue;
		CHECK_INT(nt_ethtool_get_group(h, ctx, &coalesce, "eth0", &v), 0);
		before = v;
		for (int i = 0; i < NCOAL; i++) {
			bool present = v.present & (1u << i);
			printf("  %s: %s%u\n", coalesce_fields[i].name, present ? "" : "(absent) ",
			       v.v[i]);
			if (backends[b] == NT_ETHTOOL_NETLINK)
				CHECK_MSG(present == known[i], "%s present=%d, ethtool shows %s",
					  coalesce_fields[i].name, present, known[i] ? "a value" : "n/a");
			else
				CHECK(present); /* the ioctl has no n/a */
			if (known[i])
				CHECK_INT(v.v[i], tv[i]);
		}
		/* Asking for what is there already sends nothing. */
		nt_ethtool_values same = v;
		CHECK_INT(nt_ethtool_set_group(h, ctx, &coalesce, "eth0", &same, err, sizeof(err)), 0);
		/* A parameter the driver does not support, turned on: refused by
		 * the kernel before the driver sees it. */
		int lacking = -1;
		for (int i = 0; i < NCOAL && lacking < 0; i++)
			if (!known[i])
				lacking = i;
		if (lacking >= 0) {
			nt_ethtool_values want = { .present = 1u << lacking };
			want.v[lacking] = 1;
			int rc = nt_ethtool_set_group(h, ctx, &coalesce, "eth0", &want, err, sizeof(err));
			printf("  set %s=1: %d \"%s\"\n", coalesce_fields[lacking].name, rc, err);
			if (backends[b] == NT_ETHTOOL_NETLINK) {
				CHECK_INT(rc, -EINVAL);
				CHECK(strstr(err, "unsupported") != NULL);
			} else {
				CHECK(rc == -EOPNOTSUPP || rc == -EINVAL);
			}
			CHECK_INT(nt_ethtool_get_group(h, ctx, &coalesce, "eth0", &v), 0);
			CHECK(memcmp(v.v, before.v, sizeof(v.v)) == 0);
		}
		nt_ethtool_close(h);
	}
	uint32_t after[NCOAL];
	CHECK_INT(tool_coalesce("eth0", after, known), 0);
	CHECK(memcmp(after, tv, sizeof(tv)) == 0);
}

/* In a private namespace: a veth has no coalescing, and channels change. */
static void netns_veth(const nt_ctx *ctx, int first)
{
	nt_ethtool_values v;
	char err[256];

	CHECK_INT(sh("ip link add ntga type veth peer name ntgb"), 0);
	CHECK_INT(nt_ethtool_get_group(NULL, ctx, &coalesce, "ntga", &v), -EOPNOTSUPP);
	CHECK_INT(nt_ethtool_get_group(NULL, ctx, &channels, "ntga", &v), 0);
	uint32_t rx_max = v.v[4];
	if (rx_max < 2) {
		printf("note: veth has %u rx queues at most; no real SET tested\n", rx_max);
		return;
	}
	for (int b = first; b < 2; b++) {
		nt_ethtool *h = NULL;
		CHECK_INT(nt_ethtool_open_via(ctx, backends[b], &h), 0);
		if (!h)
			continue;
		CHECK_INT(nt_ethtool_get_group(h, ctx, &coalesce, "ntga", &v), -EOPNOTSUPP);
		CHECK_INT(nt_ethtool_get_group(h, ctx, &channels, "ntga", &v), 0);
		uint32_t target = v.v[0] == rx_max ? 1 : rx_max;
		nt_ethtool_values want = { .present = 1u << 0, .v = { target } };
		CHECK_INT(nt_ethtool_set_group(h, ctx, &channels, "ntga", &want, err, sizeof(err)), 0);
		char *out = run("ethtool -l ntga | awk '/^Current/{c=1} c && /^RX:/{print $2}'");
		CHECK_INT(out ? atoi(out) : -1, target);
		free(out);
		CHECK_INT(nt_ethtool_get_group(h, ctx, &channels, "ntga", &v), 0);
		CHECK_INT(v.v[0], target);
		printf("veth rx channels set to %u via %s\n", target, backend_names[b]);
		nt_ethtool_close(h);
	}
}

/* netdevsim supports every coalescing parameter: real changes. */
static void nsim_coalesce(const nt_ctx *ctx, const char *ifname, int first)
{
	uint32_t tv[NCOAL];
	bool known[NCOAL];
	nt_ethtool_values orig, v;
	char err[256];

	CHECK_INT(nt_ethtool_get_group(NULL, ctx, &coalesce, ifname, &orig), 0);
	CHECK_INT(orig.present, (1u << NCOAL) - 1);
	for (int b = first; b < 2; b++) {
		nt_ethtool *h = NULL;
		printf("%s coalesce via %s\n", ifname, backend_names[b]);
		CHECK_INT(nt_ethtool_open_via(ctx, backends[b], &h), 0);
		if (!h)
			continue;
		uint32_t base = 10 + 10 * (uint32_t)b;
		nt_ethtool_values want = { .present = (1u << RX_USECS) | (1u << TX_FRAMES) |
						      (1u << ADAPT_RX) };
		want.v[RX_USECS] = base;
		want.v[TX_FRAMES] = base + 1;
		want.v[ADAPT_RX] = 1;
		CHECK_INT(nt_ethtool_set_group(h, ctx, &coalesce, ifname, &want, err, sizeof(err)),
			  0);
		CHECK_STR(err, "");
		CHECK_INT(tool_coalesce(ifname, tv, known), 0);
		CHECK_INT(tv[RX_USECS], base);
		CHECK_INT(tv[TX_FRAMES], base + 1);
		CHECK_INT(tv[ADAPT_RX], 1);
		CHECK_INT(tv[TX_USECS], orig.v[TX_USECS]); /* not named: untouched */
		CHECK_INT(nt_ethtool_get_group(h, ctx, &coalesce, ifname, &v), 0);
		CHECK_INT(v.v[RX_USECS], base);
		CHECK_INT(v.v[ADAPT_RX], 1);
		/* Back as it was, every settable field named. */
		CHECK_INT(nt_ethtool_set_group(h, ctx, &coalesce, ifname, &orig, err, sizeof(err)), 0);
		CHECK_INT(nt_ethtool_get_group(h, ctx, &coalesce, ifname, &v), 0);
		CHECK(memcmp(v.v, orig.v, sizeof(v.v)) == 0);
		nt_ethtool_close(h);
	}
}

int main(void)
{
	nt_ctx ctx;
	nt_ethtool *h = NULL;

	if (geteuid() != 0)
		SKIP("needs root (ethtool SET, network namespaces)");
	if (access("/sys/class/net/eth0", F_OK) != 0)
		SKIP("this machine has no eth0");
	if (sh("command -v ethtool >/dev/null && command -v ip >/dev/null") != 0)
		SKIP("the ethtool and ip tools are needed to check the results");
	CHECK_INT(nt_ctx_init(&ctx, "/"), 0);

	int r = nt_ethtool_open_via(&ctx, NT_ETHTOOL_NETLINK, &h);
	nt_ethtool_close(h);
	bool have_nl = r != -EPROTONOSUPPORT;
	printf("ethtool netlink family: %s\n", have_nl ? "present" : "missing (ioctl only)");
	/* backends[] starts with netlink; without it only the ioctl runs. */
	int first = have_nl ? 0 : 1;

	eth0_rings_channels(&ctx, first);
	eth0_coalesce(&ctx, first);

	const char *nsim = getenv("NT_NSIM_IFACE");
	if (nsim && *nsim)
		nsim_coalesce(&ctx, nsim, first);
	else
		printf("note: NT_NSIM_IFACE unset (the VM lab sets it); no real coalescing SET\n");

	/* The VM lab's /bin/sh is busybox, whose own `ip` cannot make a veth;
	 * the namespace part has run on the build host. */
	if (getenv("NT_LIVE_NO_NETNS")) {
		printf("note: NT_LIVE_NO_NETNS set; namespace part not run\n");
		TEST_MAIN_END();
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (unshare(CLONE_NEWNET) < 0) {
			printf("note: unshare(CLONE_NEWNET): %s; namespace part not run\n",
			       strerror(errno));
			exit(77);
		}
		nt_t_passed = nt_t_failed = 0;
		netns_veth(&ctx, first);
		printf("netns child: %d passed, %d failed\n", nt_t_passed, nt_t_failed);
		fflush(stdout);
		_exit(nt_t_failed ? 1 : 0);
	}
	CHECK(pid > 0);
	int st = 0;
	CHECK(waitpid(pid, &st, 0) == pid);
	if (!(WIFEXITED(st) && WEXITSTATUS(st) == 77))
		CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "netns child failed");
	TEST_MAIN_END();
}
