/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel backends against this machine's kernel, checked with the
 * tools an operator would use (ethtool, ip):
 *  - eth0's rings and channels, read over netlink and over the ioctl, equal
 *    what `ethtool -g/-l eth0` prints; no-op sets succeed without touching
 *    the NIC; an above-maximum set is refused with the kernel's reason and
 *    changes nothing.
 *  - the RSS context requests (kernel/rss_nl.h) through a handle answer as
 *    they do with a handle of their own, from the commands the handle's
 *    open read, and leave nothing open.
 *  - in a private network namespace (a forked child after
 *    unshare(CLONE_NEWNET)): veth, bridge and lo from nt_link_dump() equal
 *    `ip -j -d -s link`; veth channel counts are really changed and read
 *    back with `ethtool -l`, through both backends. */
#include "kernel/ethtool.h"
#include "kernel/link.h"
#include "kernel/rss_nl.h"
#include "harness.h"
#include "live/live_tool.h"
#include "live/live_fds.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* Parse the two sections of `ethtool -g` / `ethtool -l` output: KEYS[i]
 * ("RX", "Combined") under "Pre-set maximums:" go to MAX[i], under
 * "Current hardware settings:" to CUR[i]; "n/a" is 0. Returns how many
 * values were found. */
static int parse_ethtool(const char *text, const char *const *keys, int nkeys, uint32_t *max,
			 uint32_t *cur)
{
	uint32_t *dst = NULL;
	int found = 0;
	char line[256];

	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = '\0';
		p = e ? e + 1 : p + n;
		if (strncmp(line, "Pre-set maximums:", 17) == 0) {
			dst = max;
			continue;
		}
		if (strncmp(line, "Current hardware settings:", 26) == 0) {
			dst = cur;
			continue;
		}
		if (!dst)
			continue;
		for (int i = 0; i < nkeys; i++) {
			size_t kl = strlen(keys[i]);
			if (strncmp(line, keys[i], kl) || line[kl] != ':')
				continue;
			const char *v = line + kl + 1;
			while (isspace((unsigned char)*v))
				v++;
			dst[i] = strcmp(v, "n/a") == 0 ? 0 : (uint32_t)strtoul(v, NULL, 10);
			found++;
		}
	}
	return found;
}

static const char *const ring_keys[] = { "RX", "TX" };
static const char *const chan_keys[] = { "RX", "TX", "Other", "Combined" };

static int tool_rings(const char *ifname, nt_rings *r)
{
	char cmd[128];
	uint32_t max[2] = { 0 }, cur[2] = { 0 };
	snprintf(cmd, sizeof(cmd), "ethtool -g %s 2>/dev/null", ifname);
	char *out = run(cmd);
	if (!out)
		return -1;
	int n = parse_ethtool(out, ring_keys, 2, max, cur);
	free(out);
	*r = (nt_rings){ .rx = cur[0], .tx = cur[1], .rx_max = max[0], .tx_max = max[1] };
	return n == 4 ? 0 : -1;
}

static int tool_channels(const char *ifname, nt_channels *c)
{
	char cmd[128];
	uint32_t max[4] = { 0 }, cur[4] = { 0 };
	snprintf(cmd, sizeof(cmd), "ethtool -l %s 2>/dev/null", ifname);
	char *out = run(cmd);
	if (!out)
		return -1;
	int n = parse_ethtool(out, chan_keys, 4, max, cur);
	free(out);
	*c = (nt_channels){ .rx = cur[0], .tx = cur[1], .other = cur[2], .combined = cur[3],
			    .rx_max = max[0], .tx_max = max[1], .other_max = max[2],
			    .combined_max = max[3] };
	return n == 8 ? 0 : -1;
}

#define CHECK_RINGS(a, b) do { CHECK_INT((a).rx, (b).rx); CHECK_INT((a).tx, (b).tx); \
	CHECK_INT((a).rx_max, (b).rx_max); CHECK_INT((a).tx_max, (b).tx_max); } while (0)
#define CHECK_CHANNELS(a, b) do { CHECK_INT((a).rx, (b).rx); CHECK_INT((a).tx, (b).tx); \
	CHECK_INT((a).other, (b).other); CHECK_INT((a).combined, (b).combined); \
	CHECK_INT((a).rx_max, (b).rx_max); CHECK_INT((a).tx_max, (b).tx_max); \
	CHECK_INT((a).other_max, (b).other_max); \
	CHECK_INT((a).combined_max, (b).combined_max); } while (0)

static const nt_ethtool_backend backends[] = { NT_ETHTOOL_AUTO, NT_ETHTOOL_NETLINK,
					       NT_ETHTOOL_IOCTL };
static const char *const backend_names[] = { "auto", "netlink", "ioctl" };

static void host_eth0(const nt_ctx *ctx, bool have_nl)
{
	nt_rings tr, r, before;
	nt_channels tc, c;
	char err[256];

	CHECK_INT(tool_rings("eth0", &tr), 0);
	CHECK_INT(tool_channels("eth0", &tc), 0);
	for (int b = 0; b < 3; b++) {
		if (backends[b] == NT_ETHTOOL_NETLINK && !have_nl)
			continue;
		printf("eth0 via %s\n", backend_names[b]);
		CHECK_INT(nt_ethtool_get_rings_via(ctx, backends[b], "eth0", &r), 0);
		CHECK_RINGS(r, tr);
		CHECK_INT(nt_ethtool_get_channels_via(ctx, backends[b], "eth0", &c), 0);
		CHECK_CHANNELS(c, tc);

		/* The same values again: nothing differs, so nothing is sent. */
		CHECK_INT(nt_ethtool_set_rings_via(ctx, backends[b], "eth0", &r, err, sizeof(err)),
			  0);
		CHECK_INT(nt_ethtool_set_channels_via(ctx, backends[b], "eth0", &c, err,
						      sizeof(err)), 0);
		/* 0 means unchanged */
		nt_rings zero = { 0 };
		CHECK_INT(nt_ethtool_set_rings_via(ctx, backends[b], "eth0", &zero, err,
						   sizeof(err)), 0);

		/* Above the maximum: the kernel refuses before the driver sees it. */
		before = r;
		nt_rings big = { .rx = r.rx_max + 1 };
		int rc = nt_ethtool_set_rings_via(ctx, backends[b], "eth0", &big, err, sizeof(err));
		CHECK_INT(rc, -EINVAL);
		if (backends[b] != NT_ETHTOOL_IOCTL && have_nl) {
			printf("  kernel said: \"%s\"\n", err);
			CHECK_MSG(err[0] != '\0', "no extended ack text");
			CHECK(strstr(err, "exceeds maximum") != NULL);
		}
		CHECK_INT(nt_ethtool_get_rings_via(ctx, backends[b], "eth0", &r), 0);
		CHECK_RINGS(r, before);
		nt_channels cbig = { .combined = c.combined_max + 1 };
		rc = nt_ethtool_set_channels_via(ctx, backends[b], "eth0", &cbig, err, sizeof(err));
		CHECK_INT(rc, -EINVAL);
		if (backends[b] != NT_ETHTOOL_IOCTL && have_nl)
			CHECK(strstr(err, "channel count exceeds maximum") != NULL);
	}
	/* Still what the tool saw at the start. */
	CHECK_INT(tool_rings("eth0", &r), 0);
	CHECK_RINGS(r, tr);
	CHECK_INT(tool_channels("eth0", &c), 0);
	CHECK_CHANNELS(c, tc);

	/* A device that does not exist. */
	for (int b = 0; b < 3; b++) {
		if (backends[b] == NT_ETHTOOL_NETLINK && !have_nl)
			continue;
		CHECK_INT(nt_ethtool_get_rings_via(ctx, backends[b], "ntnope0", &r), -ENODEV);
	}
}

/* Which RSS context requests the kernel has, and eth0's context list,
 * through a handle of each backend: what a call with no handle (one of its
 * own, one lookup) says, and nothing left open. The netlink handle's
 * commands are the ones its open read: RSS_SET and RSS_CREATE_ACT come
 * with the same family (6.17). */
static void rss_nl_handle(const nt_ctx *ctx, bool have_nl)
{
	nt_rss_nl own, via;
	uint32_t ids[16], ids0[16];
	int n = 0, n0 = 0;

	nt_rss_nl_caps(NULL, ctx, "eth0", &own);
	int r0 = nt_rss_nl_context_ids(NULL, ctx, "eth0", ids0, 16, &n0);
	printf("RSS over netlink: list %d, create %d, set %d; eth0's context ids: %d (%d)\n", own.list,
	       own.create, own.set, r0, n0);
	CHECK(have_nl || (!own.list && !own.create && !own.set));
	CHECK_INT(own.create, own.set);
	for (int b = 0; b < 3; b++) {
		nt_ethtool *eh = NULL;
		if (backends[b] == NT_ETHTOOL_NETLINK && !have_nl)
			continue;
		CHECK_INT(nt_ethtool_open_via(ctx, backends[b], &eh), 0);
		int fds = open_fds();
		nt_rss_nl_caps(eh, ctx, "eth0", &via);
		CHECK_MSG(via.list == own.list && via.create == own.create && via.set == own.set,
			  "%s: caps %d%d%d", backend_names[b], via.list, via.create, via.set);
		CHECK_INT(nt_rss_nl_context_ids(eh, ctx, "eth0", ids, 16, &n), r0);
		CHECK_INT(n, n0);
		CHECK(memcmp(ids, ids0, (size_t)n * sizeof(*ids)) == 0);
		CHECK_INT(nt_rss_nl_context_ids(eh, ctx, "ntnope0", ids, 16, &n), own.list ? -ENODEV : -EOPNOTSUPP);
		CHECK_INT(open_fds(), fds);
		nt_ethtool_close(eh);
	}
}

static json_t *ip_link_json(void)
{
	char *out = run("ip -j -d -s link show");
	json_t *j = out ? json_loads(out, 0, NULL) : NULL;
	free(out);
	return j;
}

static const nt_link_info *find_link(const nt_link_info *l, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(l[i].name, name) == 0)
			return &l[i];
	return NULL;
}

static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* Loopback traffic so the counters compared below are not all zero. */
static int send_lo_packets(int count)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	for (int i = 0; i < count; i++)
		if (sendto(fd, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)) < 0)
			break;
	close(fd);
	return 0;
}

static void netns_links(void)
{
	nt_ctx root_ctx;
	nt_link_info *links = NULL;
	int n = 0;

	CHECK_INT(sh("ip link set lo up && "
		     "ip link add ntva type veth peer name ntvb && "
		     "ip link set ntva mtu 9000 && "
		     "ip link add ntbr type bridge && "
		     "ip link set ntvb master ntbr && "
		     "ip link set ntbr up && ip link set ntvb up"), 0);
	CHECK_INT(send_lo_packets(5), 0);
	CHECK_INT(nt_ctx_init(&root_ctx, "/"), 0);

	CHECK_INT(nt_link_dump(&root_ctx, &links, &n), 0);
	json_t *ipj = ip_link_json();
	CHECK(json_is_array(ipj));
	CHECK_INT(n, json_array_size(ipj));
	size_t i;
	json_t *e;
	json_array_foreach(ipj, i, e) {
		const char *name = json_string_value(json_object_get(e, "ifname"));
		const nt_link_info *l = name ? find_link(links, n, name) : NULL;
		CHECK_MSG(l != NULL, "link %s missing from nt_link_dump", name ? name : "?");
		if (!l)
			continue;
		CHECK_INT(l->ifindex, json_integer_value(json_object_get(e, "ifindex")));
		CHECK_INT(l->mtu, json_integer_value(json_object_get(e, "mtu")));
		char op[32];
		snprintf(op, sizeof(op), "%s",
			 json_string_value(json_object_get(e, "operstate")) ?: "");
		lower(op);
		CHECK_STR(l->operstate, op);
		const char *master = json_string_value(json_object_get(e, "master"));
		CHECK_STR(l->master, master ? master : "");
		const char *kind = json_string_value(
			json_object_get(json_object_get(e, "linkinfo"), "info_kind"));
		CHECK_STR(l->kind, kind ? kind : "");
	}
	/* Values we set up, independently of ip's view. */
	const nt_link_info *va = find_link(links, n, "ntva"), *vb = find_link(links, n, "ntvb");
	const nt_link_info *lo = find_link(links, n, "lo");
	CHECK(va && vb && lo);
	if (va && vb && lo) {
		CHECK_INT(va->mtu, 9000);
		CHECK_STR(va->kind, "veth");
		CHECK_STR(va->operstate, "down");
		CHECK_STR(vb->master, "ntbr");
		CHECK_STR(lo->kind, "");
		CHECK_STR(lo->operstate, "unknown");
		/* lo is quiet apart from our datagrams, so its counters are stable
		 * between the two reads. */
		CHECK(lo->rx_packets >= 5);
		json_array_foreach(ipj, i, e) {
			if (strcmp(json_string_value(json_object_get(e, "ifname")) ?: "", "lo"))
				continue;
			json_t *st = json_object_get(e, "stats64");
			json_t *rx = json_object_get(st, "rx"), *tx = json_object_get(st, "tx");
			CHECK_INT(lo->rx_packets, json_integer_value(json_object_get(rx, "packets")));
			CHECK_INT(lo->rx_bytes, json_integer_value(json_object_get(rx, "bytes")));
			CHECK_INT(lo->tx_packets, json_integer_value(json_object_get(tx, "packets")));
			CHECK_INT(lo->rx_dropped, json_integer_value(json_object_get(rx, "dropped")));
			CHECK_INT(lo->rx_errors, json_integer_value(json_object_get(rx, "errors")));
		}
	}
	json_decref(ipj);
	free(links);
}

/* veth implements channels (rx/tx up to its queue count): a real SET that
 * changes only a throw-away device. */
static void netns_veth_channels(const nt_ctx *ctx, bool have_nl)
{
	nt_channels c, tc;
	nt_rings r;
	char err[256];

	CHECK_INT(nt_ethtool_get_channels(ctx, "ntva", &c), 0);
	CHECK_INT(tool_channels("ntva", &tc), 0);
	CHECK_CHANNELS(c, tc);
	/* veth has no ring parameters */
	CHECK_INT(nt_ethtool_get_rings(ctx, "ntva", &r), -EOPNOTSUPP);
	CHECK_INT(nt_ethtool_get_rings_via(ctx, NT_ETHTOOL_IOCTL, "ntva", &r), -EOPNOTSUPP);
	if (c.rx_max < 2) {
		printf("note: veth has %u rx queues at most (one CPU?); no real SET tested\n",
		       c.rx_max);
		return;
	}
	for (int b = 0; b < 3; b++) {
		if (backends[b] == NT_ETHTOOL_NETLINK && !have_nl)
			continue;
		printf("veth channels via %s\n", backend_names[b]);
		uint32_t target = c.rx == c.rx_max ? 1 : c.rx_max;
		nt_channels want = { .rx = target };
		CHECK_INT(nt_ethtool_set_channels_via(ctx, backends[b], "ntva", &want, err,
						      sizeof(err)), 0);
		CHECK_INT(tool_channels("ntva", &tc), 0);
		CHECK_INT(tc.rx, target);
		CHECK_INT(tc.tx, c.tx); /* untouched */
		CHECK_INT(nt_ethtool_get_channels_via(ctx, backends[b], "ntva", &c), 0);
		CHECK_INT(c.rx, target);

		want = (nt_channels){ .tx = c.tx_max + 1 };
		CHECK_INT(nt_ethtool_set_channels_via(ctx, backends[b], "ntva", &want, err,
						      sizeof(err)), -EINVAL);
		if (backends[b] != NT_ETHTOOL_IOCTL && have_nl)
			CHECK(strstr(err, "exceeds maximum") != NULL);
		CHECK_INT(tool_channels("ntva", &tc), 0);
		CHECK_CHANNELS(tc, c);
	}
}

int main(void)
{
	nt_ctx ctx;
	nt_rings r;

	if (geteuid() != 0)
		SKIP("needs root (ethtool SET, network namespaces)");
	if (access("/sys/class/net/eth0", F_OK) != 0)
		SKIP("this machine has no eth0");
	if (sh("command -v ethtool >/dev/null && command -v ip >/dev/null") != 0)
		SKIP("the ethtool and ip tools are needed to check the results");
	CHECK_INT(nt_ctx_init(&ctx, "/"), 0);
	CHECK(ctx.live);

	int fam = nt_ethtool_get_rings_via(&ctx, NT_ETHTOOL_NETLINK, "eth0", &r);
	bool have_nl = fam != -EPROTONOSUPPORT;
	printf("ethtool netlink family: %s\n", have_nl ? "present" : "missing (ioctl only)");

	host_eth0(&ctx, have_nl);
	rss_nl_handle(&ctx, have_nl);

	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (unshare(CLONE_NEWNET) < 0) {
			printf("note: unshare(CLONE_NEWNET): %s; namespace part not run\n",
			       strerror(errno));
			exit(77);
		}
		/* Count the child's checks on their own; the parent reports its own. */
		nt_t_passed = nt_t_failed = 0;
		netns_links();
		netns_veth_channels(&ctx, have_nl);
		printf("netns child: %d passed, %d failed\n", nt_t_passed, nt_t_failed);
		fflush(stdout);
		_exit(nt_t_failed ? 1 : 0);
	}
	CHECK(pid > 0);
	int st = 0;
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		; /* said why above; the host part stands on its own */
	else
		CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "netns child failed");
	TEST_MAIN_END();
}
