/* SPDX-License-Identifier: Apache-2.0 */
/* The NIC half of a host read: the NICs of /sys/class/net with their PCI
 * function, driver and locality (the static part); their links, counters,
 * rings, channels and bonds (the dynamic part); which NIC owns each IRQ and
 * its queue, found for the IRQ half; and the NIC reporters run. */
#include "host/topology.h"
#include "host/topology_int.h"
#include "host/jsonw.h"
#include "kernel/ethtool.h"
#include "kernel/link.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------- NICs */

static bool is_pci_address(const char *s)
{
	/* DDDD:BB:DD.F, where the domain may be longer (VMD: 10000:). */
	unsigned dom, bus, dev, fn;
	char tail;
	if (sscanf(s, "%x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn, &tail) != 4)
		return false;
	const char *c = strchr(s, ':');
	return c && c - s >= 4;
}

static const char *basename_of(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Find the PCI function a net device hangs under: the device link may
 * point at it directly, or at a virtio/auxiliary device whose ancestor it
 * is (this project's own VM: eth0 -> virtio2 -> 0000:00:03.0). */
static void find_pci_function(nt_nic *n)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s", n->device_path);
	while (strlen(path) > strlen("/sys/devices")) {
		if (is_pci_address(basename_of(path))) {
			snprintf(n->pci_address, sizeof(n->pci_address), "%s", basename_of(path));
			snprintf(n->device_path, sizeof(n->device_path), "%s", path);
			return;
		}
		char *slash = strrchr(path, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
}

static int node_of_set(const nt_topology *t, const nt_cpuset *set)
{
	int node = -2;
	for (int c = nt_cpuset_next(set, 0); c >= 0; c = nt_cpuset_next(set, c + 1)) {
		int cn = nt_topology_cpu_node(t, c);
		if (cn < 0)
			return -1;
		if (node == -2)
			node = cn;
		else if (node != cn)
			return -1;
	}
	return node < 0 ? -1 : node;
}

static void read_nic_locality(nt_topology *t, nt_nic *n)
{
	char buf[8192];
	long v;

	n->numa_node = -1;
	n->numa_node_source = NT_SRC_UNKNOWN;
	if (!n->device_path[0])
		return;
	if (nt_read_str(&t->ctx, buf, sizeof(buf), "%s/local_cpulist", n->device_path) >= 0 &&
	    nt_cpulist_parse(buf, &n->local_cpus) == 0)
		n->has_local_cpus = true;
	else if (nt_read_str(&t->ctx, buf, sizeof(buf), "%s/local_cpus", n->device_path) >= 0 &&
		 nt_cpumask_parse(buf, &n->local_cpus) == 0)
		n->has_local_cpus = true;
	if (nt_read_long(&t->ctx, &v, "%s/numa_node", n->device_path) == 0 && v >= 0 &&
	    nt_topology_node(t, (int)v)) {
		n->numa_node = (int)v;
		n->numa_node_source = NT_SRC_SYSFS;
		return;
	}
	/* numa_node is -1 on many real machines (BIOS without _PXM); the
	 * local CPU list still tells when all of it lies on one node, which is
	 * how hwloc places devices. A list spanning nodes tells nothing. */
	if (n->has_local_cpus) {
		nt_cpuset online;
		nt_cpuset_and(&online, &n->local_cpus, &t->cpus_online);
		int node = nt_cpuset_empty(&online) ? -1 : node_of_set(t, &online);
		if (node >= 0) {
			n->numa_node = node;
			n->numa_node_source = NT_SRC_LOCAL_CPULIST;
		}
	}
}

/* A VLAN (or macvlan) sits on one lower link, /sys/class/net/NAME/lower_LINK:
 * placement makes it stand for that link. A bridge has one per port and
 * stands for none of them. */
static void read_lower(nt_topology *t, nt_nic *n)
{
	char path[PATH_MAX];
	DIR *d;
	struct dirent *de;
	int found = 0;
	if (nt_path(&t->ctx, path, sizeof(path), "/sys/class/net/%s", n->name) < 0 || !(d = opendir(path)))
		return;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "lower_", 6) && de->d_name[6] && found++ == 0)
			snprintf(n->lower, sizeof(n->lower), "%s", de->d_name + 6);
	closedir(d);
	if (found != 1)
		n->lower[0] = '\0';
}

/* DFD is /sys/class/net/NAME opened (nt_dir_open), -1 when it could not be. */
static void read_nic_sysfs_link(nt_topology *t, nt_nic *n, int dfd)
{
	char buf[256];
	long v;
	const nt_ctx *ctx = &t->ctx;

	if (dfd < 0)
		return;
	if (nt_read_long_at(ctx, dfd, "ifindex", &v) == 0)
		n->ifindex = (int)v;
	if (nt_read_long_at(ctx, dfd, "mtu", &v) == 0)
		n->mtu = (int)v;
	if (nt_read_at(ctx, dfd, "operstate", buf, sizeof(buf)) >= 0)
		snprintf(n->operstate, sizeof(n->operstate), "%s", buf);
	if (nt_readlink(ctx, buf, sizeof(buf), "/sys/class/net/%s/master", n->name) >= 0)
		snprintf(n->master, sizeof(n->master), "%s", basename_of(buf));

	static const struct {
		const char *file;
		size_t off;
	} stats[] = {
		{ "statistics/rx_packets", offsetof(nt_nic, rx_packets) },
		{ "statistics/tx_packets", offsetof(nt_nic, tx_packets) },
		{ "statistics/rx_bytes", offsetof(nt_nic, rx_bytes) },
		{ "statistics/tx_bytes", offsetof(nt_nic, tx_bytes) },
		{ "statistics/rx_dropped", offsetof(nt_nic, rx_dropped) },
		{ "statistics/rx_missed_errors", offsetof(nt_nic, rx_missed) },
		{ "statistics/rx_fifo_errors", offsetof(nt_nic, rx_fifo_errors) },
		{ "statistics/rx_errors", offsetof(nt_nic, rx_errors) },
	};
	for (size_t i = 0; i < sizeof(stats) / sizeof(stats[0]); i++) {
		if (nt_read_at(ctx, dfd, stats[i].file, buf, sizeof(buf)) < 0)
			continue;
		*(uint64_t *)((char *)n + stats[i].off) = strtoull(buf, NULL, 10);
		n->has_stats = true;
	}
}

static void apply_link_info(nt_nic *n, const nt_link_info *l)
{
	n->ifindex = l->ifindex;
	n->mtu = l->mtu;
	snprintf(n->operstate, sizeof(n->operstate), "%s", l->operstate);
	snprintf(n->master, sizeof(n->master), "%s", l->master);
	n->rx_packets = l->rx_packets;
	n->tx_packets = l->tx_packets;
	n->rx_bytes = l->rx_bytes;
	n->tx_bytes = l->tx_bytes;
	n->rx_dropped = l->rx_dropped;
	n->rx_missed = l->rx_missed;
	n->rx_fifo_errors = l->rx_fifo_errors;
	n->rx_errors = l->rx_errors;
	n->has_stats = true;
}

static int add_nic_irq(nt_topology *t, int nic_index, nt_irq *q)
{
	nt_nic *n = &t->nics[nic_index];
	if (q->nic >= 0)
		return 0;
	/* Room doubles at each power of two (a NIC has up to hundreds). */
	if ((n->nirqs & (n->nirqs - 1)) == 0) {
		int *ni = realloc(n->irqs, sizeof(int) * (size_t)(n->nirqs ? 2 * n->nirqs : 1));
		if (!ni)
			return -ENOMEM;
		n->irqs = ni;
	}
	n->irqs[n->nirqs++] = (int)(q - t->irqs);
	q->nic = nic_index;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Queue number from names such as "mlx5_comp3@pci:...", "eth0-TxRx-3",
 * "virtio2-input.0": the last number before any "@", in a name that holds
 * one of the tags below. One pass over the name: each place is compared
 * with the tags only when its byte starts one (a host read asks this of
 * every NIC IRQ). */
static int queue_of(const char *name)
{
	static const char *const tags[] = { "comp", "TxRx", "txrx", "rx", "tx", "input", "output", "-q", "fp-", NULL };
	static const bool starts[256] = { ['c'] = true, ['T'] = true, ['t'] = true, ['r'] = true,
					  ['i'] = true, ['o'] = true, ['-'] = true, ['f'] = true };
	size_t nl = strnlen(name, NT_NAME_MAX - 1);
	const char *at = memchr(name, '@', nl);
	if (at)
		nl = (size_t)(at - name);
	bool tagged = false;
	for (size_t i = 0; i < nl && !tagged; i++) {
		if (!starts[(unsigned char)name[i]])
			continue;
		for (int k = 0; tags[k] && !tagged; k++) {
			size_t tl = strlen(tags[k]);
			tagged = tl <= nl - i && memcmp(name + i, tags[k], tl) == 0;
		}
	}
	if (!tagged)
		return -1;
	size_t e = nl;
	while (e > 0 && !isdigit((unsigned char)name[e - 1]))
		e--;
	if (e == 0)
		return -1;
	size_t st = e;
	int v = 0;
	while (st > 0 && isdigit((unsigned char)name[st - 1]))
		st--;
	for (size_t k = st; k < e; k++) {
		int d = name[k] - '0';
		if (v > (INT_MAX - d) / 10)
			return -1; /* past INT_MAX: no queue number */
		v = v * 10 + d;
	}
	return v;
}

/* Driver conventions for naming NIC interrupts in /proc/interrupts. */
static bool irq_name_matches_nic(const nt_irq *q, const nt_nic *n)
{
	const char *name = q->name;
	size_t nl = strlen(n->name);
	if (!*name)
		return false;
	if (strcmp(name, n->name) == 0) /* tg3: "eth0" */
		return true;
	if (strncmp(name, n->name, nl) == 0 && name[nl] == '-') /* "eth0-TxRx-0", "eth0-rx-1" */
		return true;
	/* i40e/ice: "i40e-eth0-TxRx-0" */
	const char *dash = strchr(name, '-');
	if (dash && strncmp(dash + 1, n->name, nl) == 0 && dash[1 + nl] == '-')
		return true;
	if (n->pci_address[0]) {
		/* mlx4/mlx5: "mlx5_comp0@pci:0000:81:00.0"; ahci-style brackets. */
		const char *pa = strstr(name, n->pci_address);
		if (pa && pa > name && (pa[-1] == ':' || pa[-1] == '@' || pa[-1] == '['))
			return true;
	}
	return false;
}

/* The IRQs sysfs lists for IDX's PCI function: its MSI/MSI-X vectors, or
 * its legacy INTx when it lists none. */
static void read_nic_pci_irqs(nt_topology *t, int idx)
{
	nt_nic *n = &t->nics[idx];
	char path[PATH_MAX];

	if (nt_path(&t->ctx, path, sizeof(path), "%s/msi_irqs", n->device_path) == 0) {
		DIR *d = opendir(path);
		if (d) {
			struct dirent *de;
			while ((de = readdir(d))) {
				if (!isdigit((unsigned char)de->d_name[0]))
					continue;
				nt_irq *q = nt_topology_irq(t, atoi(de->d_name));
				if (q)
					add_nic_irq(t, idx, q);
			}
			closedir(d);
		}
	}
	long legacy;
	if (n->nirqs == 0 && nt_read_long(&t->ctx, &legacy, "%s/irq", n->device_path) == 0 && legacy > 0) {
		nt_irq *q = nt_topology_irq(t, (int)legacy);
		if (q && q->name[0])
			add_nic_irq(t, idx, q);
	}
}

/* IDX's IRQs found by name in /proc/interrupts among those no NIC owns
 * yet: what sysfs does not list (and fixtures built from /proc alone). */
static void read_nic_named_irqs(nt_topology *t, int idx)
{
	nt_nic *n = &t->nics[idx];
	for (int i = 0; i < t->nirqs; i++) {
		nt_irq *q = &t->irqs[i];
		if (q->nic < 0 && irq_name_matches_nic(q, n))
			add_nic_irq(t, idx, q);
	}
}

/* Which NIC owns each IRQ. What sysfs lists for a PCI function is
 * authoritative and taken first, for every NIC, before any name is
 * matched: a name can look like another NIC's, and once the listed IRQs
 * are owned, the names are matched against the few IRQs left rather than
 * against every IRQ once per NIC (thousands times sixteen on a big host).
 * Then names, PCI NICs before virtual ones. */
void nt_tp_read_irq_owners(nt_topology *t)
{
	for (int i = 0; i < t->nnics; i++)
		if (t->nics[i].pci_address[0])
			read_nic_pci_irqs(t, i);
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < t->nnics; i++)
			if ((pass == 0) == (t->nics[i].pci_address[0] != '\0'))
				read_nic_named_irqs(t, i);
	for (int i = 0; i < t->nnics; i++) {
		nt_nic *n = &t->nics[i];
		if (n->nirqs > 1)
			qsort(n->irqs, (size_t)n->nirqs, sizeof(int), cmp_int);
		for (int k = 0; k < n->nirqs; k++) {
			nt_irq *q = &t->irqs[n->irqs[k]];
			q->queue = queue_of(q->name);
		}
	}
}

static void read_bond(nt_topology *t, const nt_nic *n)
{
	char buf[4096];
	nt_bond *nb = realloc(t->bonds, sizeof(nt_bond) * (size_t)(t->nbonds + 1));
	if (!nb)
		return;
	t->bonds = nb;
	nt_bond *b = &t->bonds[t->nbonds++];
	memset(b, 0, sizeof(*b));
	snprintf(b->name, sizeof(b->name), "%s", n->name);
	b->mode_num = -1;
	b->miimon = -1;
	/* sysfs prints "802.3ad 4" and "layer2+3 2": a name and a number. */
	int r = nt_read_str(&t->ctx, buf, sizeof(buf), "/sys/class/net/%s/bonding/mode", n->name);
	if (r >= 0)
		sscanf(buf, "%31s %d", b->mode, &b->mode_num);
	else
		nt_tp_problemf(t, r, "/sys/class/net/%s/bonding/mode", n->name);
	if (nt_read_str(&t->ctx, buf, sizeof(buf), "/sys/class/net/%s/bonding/xmit_hash_policy", n->name) >= 0)
		sscanf(buf, "%15s", b->xmit_hash_policy);
	long v;
	if (nt_read_long(&t->ctx, &v, "/sys/class/net/%s/bonding/miimon", n->name) == 0)
		b->miimon = v;
	if (nt_read_str(&t->ctx, buf, sizeof(buf), "/sys/class/net/%s/bonding/slaves", n->name) >= 0) {
		char *save = NULL;
		for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
			char(*ns)[IF_NAMESIZE] = realloc(b->slaves, sizeof(*ns) * (size_t)(b->nslaves + 1));
			if (!ns)
				break;
			b->slaves = ns;
			snprintf(b->slaves[b->nslaves++], IF_NAMESIZE, "%s", tok);
		}
	}
}

/* Lists a NIC whose name cannot be a JSON string in problems, its bytes
 * outside printable ASCII written \xNN. */
static void unusable_nic_name(nt_topology *t, const char *name)
{
	char esc[4 * 256 + 1], path[1100];
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)name; *p && n + 5 < sizeof(esc); p++)
		n += (size_t)(*p > 0x20 && *p < 0x7f && *p != '\\' ? snprintf(esc + n, sizeof(esc) - n, "%c", *p)
								    : snprintf(esc + n, sizeof(esc) - n, "\\x%02x", *p));
	esc[n] = '\0';
	snprintf(path, sizeof(path), "/sys/class/net/%s", esc);
	json_t *p = json_pack("{s:s, s:s}", "path", path, "error",
			      "an interface whose name is not UTF-8 text or holds a control byte: not reported");
	if (p)
		json_array_append_new(t->problems, p);
}

static int cmp_nic(const void *a, const void *b)
{
	return strcmp(((const nt_nic *)a)->name, ((const nt_nic *)b)->name);
}

/* The NICs and what only hotplug changes about them: their names, device,
 * PCI function, driver, locality and whether they are bonds. */
int nt_tp_read_nics_static(nt_topology *t)
{
	char path[PATH_MAX], buf[PATH_MAX];
	int cap = 0;
	DIR *d;
	struct dirent *de;

	if (nt_path(&t->ctx, path, sizeof(path), "/sys/class/net") < 0 || !(d = opendir(path))) {
		nt_tp_problemf(t, -ENOENT, "/sys/class/net");
		t->nproblems_enum = 1;
		return 0;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!nt_ifname_valid(de->d_name) || !nt_jw_utf8(de->d_name)) {
			/* A link the kernel named but no document can hold
			 * (not UTF-8, or a control byte the kernel allows):
			 * said, not dropped unsaid. */
			unusable_nic_name(t, de->d_name);
			continue;
		}
		/* bonding_masters is a file beside the links. */
		if (strcmp(de->d_name, "bonding_masters") == 0)
			continue;
		if (t->nnics == cap) {
			cap = cap ? cap * 2 : 16;
			nt_nic *nn = realloc(t->nics, sizeof(nt_nic) * (size_t)cap);
			if (!nn) {
				closedir(d);
				return -ENOMEM;
			}
			t->nics = nn;
		}
		nt_nic *n = &t->nics[t->nnics];
		memset(n, 0, sizeof(*n));
		snprintf(n->name, sizeof(n->name), "%s", de->d_name);
		/* A NIC that vanishes while being read is dropped, not fatal. */
		int r = nt_resolve(&t->ctx, buf, sizeof(buf), "/sys/class/net/%s", n->name);
		if (r < 0) {
			nt_tp_problemf(t, r, "/sys/class/net/%s", n->name);
			continue;
		}
		if (!nt_exists(&t->ctx, "%s/", buf))
			continue; /* a plain file, not a link to a device */
		n->is_virtual = strncmp(buf, "/sys/devices/virtual/", 21) == 0;
		t->nnics++;
	}
	closedir(d);
	/* The static part is kept for the agent's life: no room to spare (a
	 * NIC is about 5 KB, and the doubling above leaves up to half empty). */
	if (t->nnics > 0 && t->nnics < cap) {
		nt_nic *nn = realloc(t->nics, sizeof(nt_nic) * (size_t)t->nnics);
		if (nn)
			t->nics = nn;
	}
	t->nproblems_enum = (int)json_array_size(t->problems) - t->nproblems_cpus;
	if (t->nnics > 1)
		qsort(t->nics, (size_t)t->nnics, sizeof(nt_nic), cmp_nic);

	for (int i = 0; i < t->nnics; i++) {
		nt_nic *n = &t->nics[i];
		long v;
		n->numa_node = -1;
		/* A link deleted and made again under the same name (a bond
		 * replaced by a bridge) gets a new ifindex: the cache compares. */
		if (nt_read_long(&t->ctx, &v, "/sys/class/net/%s/ifindex", n->name) == 0)
			n->static_ifindex = (int)v;
		n->is_bond = nt_exists(&t->ctx, "/sys/class/net/%s/bonding", n->name);
		if (n->is_virtual && !n->is_bond)
			read_lower(t, n);
		if (!n->is_virtual) {
			int r = nt_resolve(&t->ctx, n->device_path, sizeof(n->device_path),
					   "/sys/class/net/%s/device", n->name);
			if (r < 0) {
				n->device_path[0] = '\0';
				if (r != -ENOENT) {
					nt_tp_problemf(t, r, "/sys/class/net/%s/device", n->name);
					n->static_problem = true;
				}
			}
			if (nt_readlink(&t->ctx, buf, sizeof(buf), "/sys/class/net/%s/device/driver", n->name) >= 0)
				snprintf(n->driver, sizeof(n->driver), "%s", basename_of(buf));
			if (n->device_path[0])
				find_pci_function(n);
			read_nic_locality(t, n);
		} else if (nt_readlink(&t->ctx, buf, sizeof(buf), "/sys/class/net/%s/device/driver", n->name) >= 0) {
			snprintf(n->driver, sizeof(n->driver), "%s", basename_of(buf));
		}
		if (!n->driver[0] && n->is_bond)
			snprintf(n->driver, sizeof(n->driver), "bonding");
	}
	return 0;
}

/* What changes while the agent runs: link state, counters, rings,
 * channels, bond settings, and which IRQs each NIC owns. EH is the read's
 * ethtool handle, NULL when it could not be opened. */
int nt_tp_read_nics_dynamic(nt_topology *t, const nt_topology *base, nt_ethtool *eh)
{
	int next_static = base->nproblems_cpus + base->nproblems_enum;

	char buf[PATH_MAX];
	nt_link_info *links = NULL;
	int nlinks = 0;

	/* Without rtnetlink (a fixture root) each link is read from sysfs. */
	int lr = nt_link_dump(&t->ctx, &links, &nlinks);
	if (lr < 0) {
		if (lr != -EOPNOTSUPP)
			nt_tp_problemf(t, -EIO, "rtnetlink link dump");
		links = NULL;
		nlinks = 0;
	}

	for (int i = 0; i < t->nnics; i++) {
		nt_nic *n = &t->nics[i];
		long v;
		if (n->static_problem)
			nt_tp_add_static_problems(t, base, next_static++, 1);
		n->speed_mbps = -1;
		bool from_link = false;
		for (int k = 0; k < nlinks; k++) {
			if (strcmp(links[k].name, n->name) == 0) {
				apply_link_info(n, &links[k]);
				from_link = true;
				break;
			}
		}
		int dfd = nt_dir_open(&t->ctx, "/sys/class/net/%s", n->name);
		if (!from_link)
			read_nic_sysfs_link(t, n, dfd);
		if (dfd >= 0 && nt_read_at(&t->ctx, dfd, "address", buf, sizeof(buf)) >= 0)
			snprintf(n->mac, sizeof(n->mac), "%s", buf);
		/* speed reads EINVAL on a link that is down: unknown, not an error. */
		if (dfd >= 0 && nt_read_long_at(&t->ctx, dfd, "speed", &v) == 0 && v > 0)
			n->speed_mbps = v;
		if (dfd >= 0)
			close(dfd);
		if (eh && strcmp(n->name, "lo") != 0 && !n->is_bond) {
			if (nt_ethtool_read_rings(eh, &t->ctx, n->name, &n->rings) == 0)
				n->has_rings = true;
			if (nt_ethtool_read_channels(eh, &t->ctx, n->name, &n->channels) == 0)
				n->has_channels = true;
		}
		if (n->is_bond)
			read_bond(t, n);
	}
	free(links);
	return 0;
}

/* ---------------------------------------------------------- NIC reports */

int nt_topology_report(nt_topology *t, nt_ethtool *eh, const nt_nic_report_fn *reporters)
{
	for (int i = 0; i < t->nnics; i++) {
		nt_nic *n = &t->nics[i];
		if (!n->reported && !(n->reported = json_object()))
			return -ENOMEM;
		for (int k = 0; reporters[k]; k++) {
			int r = reporters[k](&t->ctx, eh, n, n->reported);
			if (r == -ENOMEM)
				return r;
			if (r < 0)
				nt_tp_problemf(t, r, "/sys/class/net/%s (NIC report %d)", n->name, k);
		}
	}
	return 0;
}
