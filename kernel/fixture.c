/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel on a fixture root: see kernel/fixture.h. */
#include "kernel/fixture.h"
#include "kernel/fixture_int.h"
#include "kernel/features.h"
#include "kernel/flows.h"
/* Pure cpulist and mask spellings; no reading, so no arrow up to the host
 * model. */
#include "base/cpuset.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

void nt_fx_set_err(char *err, size_t errsize, const char *text)
{
	if (err && errsize)
		snprintf(err, errsize, "%s", text);
}

/* ---- ethtool: ROOT/ethtool/IFACE.json ---- */

int nt_fx_parse(const nt_ctx *ctx, const char *ifname, json_t **rootp)
{
	char *buf = NULL;
	int r = nt_read_all(ctx, &buf, "/ethtool/%s.json", ifname);

	*rootp = NULL;
	if (r < 0)
		/* No file is how a fixture says the driver has no ethtool ops. */
		return r == -ENOENT ? -EOPNOTSUPP : r;
	json_t *root = json_loads(buf, 0, NULL);
	free(buf);
	if (!json_is_object(root)) {
		json_decref(root);
		return NT_EPARSE;
	}
	*rootp = root;
	return 0;
}

/* SECTION of ROOT (a reference the caller now holds) into *SECP. */
static int fx_section(json_t *root, int r, const char *section, json_t **rootp, json_t **secp)
{
	json_t *sec = r == 0 ? json_object_get(root, section) : NULL;

	if (r == 0 && !sec)
		r = -EOPNOTSUPP;
	else if (r == 0 && !json_is_object(sec))
		r = NT_EPARSE;
	if (r < 0) {
		json_decref(root);
		return r;
	}
	*rootp = root;
	*secp = sec;
	return 0;
}

int nt_fx_load(const nt_ctx *ctx, const char *section, const char *ifname, json_t **rootp, json_t **secp)
{
	json_t *root;
	int r = nt_fx_memo_doc(ctx, ifname, &root);
	return fx_section(root, r, section, rootp, secp);
}

int nt_fx_load_edit(const nt_ctx *ctx, const char *section, const char *ifname, json_t **rootp,
		    json_t **secp)
{
	json_t *root;
	int r = nt_fx_parse(ctx, ifname, &root);
	return fx_section(root, r, section, rootp, secp);
}

/* The object of SEC that holds field I of G: SEC itself, or for a group
 * in a nest (a DIM profile) entry i / (nfields / nentries) of SEC's array
 * NEST_KEY ({"rx_profile": [{"usec": 8, "pkts": 256}, ...]}); NULL when
 * the fixture has no such entry, which reads as "not reported", as the
 * kernel leaves out a profile the driver does not have. */
static json_t *field_parent(const nt_ethtool_group *g, json_t *sec, int i)
{
	if (!g->nest)
		return sec;
	json_t *e = json_array_get(json_object_get(sec, g->nest_key), (size_t)(i / (g->nfields / g->nentries)));
	return json_is_object(e) ? e : NULL;
}

/* A count is a non-negative integer; a u8 field may also be written as
 * true/false, the way a person writing a fixture spells a boolean. */
static int json_field(json_t *v, const nt_ethtool_field *f, uint32_t *out)
{
	if (f->width == NT_ETHTOOL_U8 && json_is_boolean(v)) {
		*out = json_is_true(v) ? 1 : 0;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > (f->width == NT_ETHTOOL_U8 ? 255 : (json_int_t)UINT32_MAX))
		return NT_EPARSE;
	*out = (uint32_t)json_integer_value(v);
	return 0;
}

int nt_fixture_ethtool_get(const nt_ctx *ctx, const nt_ethtool_group *g, const char *ifname,
			   nt_ethtool_values *out)
{
	json_t *root = NULL, *sec = NULL;
	int r = nt_fx_load(ctx, g->section, ifname, &root, &sec);

	memset(out, 0, sizeof(*out));
	if (r < 0)
		return r;
	for (int i = 0; i < g->nfields; i++) {
		json_t *v = json_object_get(field_parent(g, sec, i), g->fields[i].name);
		if (!v)
			continue; /* not reported, as the kernel leaves out what is n/a */
		r = json_field(v, &g->fields[i], &out->v[i]);
		if (r < 0)
			goto out;
		out->present |= 1u << i;
	}
	r = 0;
out:
	json_decref(root);
	return r;
}

bool nt_fixture_link_limits(const nt_ctx *ctx, const char *ifname, uint32_t *min_mtu, uint32_t *max_mtu)
{
	json_t *root = NULL, *link = NULL;
	long type;
	*min_mtu = 68;
	*max_mtu = 65535;
	/* Loopback (ARPHRD_LOOPBACK): the kernel's loopback_setup leaves both
	 * at 0, which dev_validate_mtu reads as no limit: "minmtu 0 maxmtu 0". */
	if (nt_read_long(ctx, &type, "/sys/class/net/%s/type", ifname) == 0 && type == 772) {
		*min_mtu = 0;
		*max_mtu = 0;
	}
	if (nt_fx_load(ctx, "link", ifname, &root, &link) < 0)
		return false;
	json_t *lo = json_object_get(link, "min_mtu"), *hi = json_object_get(link, "max_mtu");
	if (json_is_integer(lo) && json_integer_value(lo) >= 0 && json_integer_value(lo) <= UINT32_MAX)
		*min_mtu = (uint32_t)json_integer_value(lo);
	if (json_is_integer(hi) && json_integer_value(hi) >= 0 && json_integer_value(hi) <= UINT32_MAX)
		*max_mtu = (uint32_t)json_integer_value(hi);
	json_decref(root);
	return true;
}

/* Replace the file in one step so a reader (or a crash) never sees half a
 * document: write a temporary file in the same directory, then rename. */
int nt_fx_write_atomic(const nt_ctx *ctx, const char *ifname, const char *text)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	size_t len = strlen(text), done = 0;
	int fd = -1, r;

	r = nt_path(ctx, path, sizeof(path), "/ethtool/%s.json", ifname);
	if (r == 0)
		r = nt_path(ctx, tmp, sizeof(tmp), "/ethtool/.%s.json.XXXXXX", ifname);
	if (r < 0)
		return r;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto fail;
		}
		done += (size_t)n;
	}
	if (fchmod(fd, 0644) < 0 || fsync(fd) < 0) {
		r = -errno;
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		r = -errno;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		r = -errno;
		goto fail;
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return r;
}

int nt_fixture_clean_temps(const nt_ctx *ctx)
{
	char dir[PATH_MAX];
	int r = nt_path(ctx, dir, sizeof(dir), "/ethtool"), removed = 0;
	if (r < 0)
		return r;
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	struct dirent *de;
	while ((de = readdir(d))) {
		/* write_atomic's names: ".IFACE.json.XXXXXX" (mkstemp's six). */
		const char *n = de->d_name;
		size_t len = strlen(n);
		struct stat st;
		if (n[0] != '.' || len < 1 + 1 + 12 || strncmp(n + len - 12, ".json.", 6) != 0)
			continue;
		if (fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    unlinkat(dirfd(d), n, 0) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

/* Refuse what the kernel refuses, before touching the file: a refused
 * request leaves the fixture exactly as it was, as the kernel leaves the NIC. */
static int ethtool_check(const nt_ethtool_group *g, const nt_ethtool_values *cur,
			 const nt_ethtool_values *send, char *err, size_t errsize)
{
	for (int i = 0; i < g->nfields; i++) {
		const nt_ethtool_field *f = &g->fields[i];
		if (!(send->present & (1u << i)))
			continue;
		int m = f->max ? nt_ethtool_field_index(g, f->max) : -1;
		/* An absent maximum is 0 (n/a), so any count is above it, as
		 * rings_fill_reply leaves out a ring whose maximum is 0. */
		if (m >= 0 && send->v[i] > cur->v[m]) {
			nt_fx_set_err(err, errsize, g->above_max ? g->above_max : "value exceeds maximum");
			return -EINVAL;
		}
		/* ethnl_set_coalesce's refusal of a parameter the driver lacks. */
		if (!(cur->present & (1u << i))) {
			nt_fx_set_err(err, errsize, "cannot modify an unsupported parameter");
			return -EINVAL;
		}
	}
	return 0;
}

/* The layout ROOT/ethtool/IFNAME.json is written in, as jansson flags, and
 * whether it ends with a newline: a write keeps it, so that a rollback that
 * restores every value restores the file byte for byte (the fixture
 * generator writes one line with ", " and ": ", as Python's json.dumps and
 * jansson's default do; a test may write one compact, or indented). A file
 * that cannot be read gets the generator's layout. */
static size_t fx_layout(const nt_ctx *ctx, const char *ifname, bool *final_nl)
{
	char *text = NULL;
	size_t flags = 0;

	*final_nl = true;
	if (nt_read_all(ctx, &text, "/ethtool/%s.json", ifname) < 0 || !text[0]) {
		free(text);
		return 0;
	}
	size_t len = strlen(text);
	*final_nl = text[len - 1] == '\n';
	const char *nl = memchr(text, '\n', len);
	if (nl && nl != text + len - 1) {
		flags = JSON_INDENT(2);
	} else {
		/* The separator after the first key: ":" alone is
		 * JSON_COMPACT. */
		const char *colon = strstr(text, "\":");
		if (colon && colon[2] != ' ')
			flags = JSON_COMPACT;
	}
	free(text);
	return flags;
}

/* ROOT/ethtool/IFNAME.json replaced by ROOT, as the kernel changes a
 * device's settings all at once, in the layout the file had. */
int nt_fx_save(const nt_ctx *ctx, const char *ifname, json_t *root)
{
	bool final_nl;
	char *text = json_dumps(root, fx_layout(ctx, ifname, &final_nl)), *nl;
	int r;

	if (!text)
		return -ENOMEM;
	size_t n = strlen(text);
	if (!(nl = realloc(text, n + 2))) {
		free(text);
		return -ENOMEM;
	}
	text = nl;
	memcpy(text + n, final_nl ? "\n" : "", final_nl ? 2 : 1);
	r = nt_fx_write_atomic(ctx, ifname, text);
	free(text);
	return r;
}

int nt_fixture_ethtool_set(const nt_ctx *ctx, const nt_ethtool_group *g, const char *ifname,
			   const nt_ethtool_values *cur, const nt_ethtool_values *send, char *err,
			   size_t errsize)
{
	json_t *root = NULL, *sec = NULL;
	int r = ethtool_check(g, cur, send, err, errsize);

	if (r < 0)
		return r;
	r = nt_fx_load_edit(ctx, g->section, ifname, &root, &sec);
	if (r < 0)
		return r;
	/* ethnl_set_channels and ethtool_set_channels: not fewer RX queues
	 * than the RSS tables and flow rules name. */
	if (strcmp(g->section, "channels") == 0) {
		uint32_t rx = 0;
		for (int k = 0; k < 2; k++) {
			int i = nt_ethtool_field_index(g, k ? "combined" : "rx");
			if (i >= 0)
				rx += send->present & (1u << i) ? send->v[i] : cur->v[i];
		}
		if ((r = nt_fx_channels_fit(root, rx, err, errsize)) < 0)
			goto out;
	}
	for (int i = 0; i < g->nfields; i++) {
		const nt_ethtool_field *f = &g->fields[i];
		if (!(send->present & (1u << i)))
			continue;
		/* Keep the spelling the fixture uses for a boolean. */
		json_t *parent = field_parent(g, sec, i);
		json_t *old = json_object_get(parent, f->name);
		json_t *v = json_is_boolean(old) ? json_boolean(send->v[i] != 0)
						 : json_integer(send->v[i]);
		if (!parent) /* not reported: ethtool_check refused it already */
			json_decref(v);
		if (!parent || json_object_set_new(parent, f->name, v) < 0) {
			r = -ENOMEM;
			goto out;
		}
	}
	r = nt_fx_save(ctx, ifname, root);
out:
	json_decref(root);
	return r;
}

/* ---- attribute files ---- */

/* A page is the most any sysfs or procfs attribute takes in one write. */
#define ATTR_MAX 4096

int nt_fixture_write_attr(const nt_ctx *ctx, const char *value, const char *rel)
{
	char buf[ATTR_MAX + 2];
	int n = snprintf(buf, sizeof(buf), "%s\n", value);

	if (n < 0 || (size_t)n >= sizeof(buf))
		return -E2BIG;
	return nt_write_str(ctx, buf, "%s", rel);
}

static int write_attrf(const nt_ctx *ctx, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int write_attrf(const nt_ctx *ctx, const char *value, const char *fmt, ...)
{
	char rel[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(rel))
		return -ENAMETOOLONG;
	return nt_fixture_write_attr(ctx, value, rel);
}

/* ---- RPS ---- */

int nt_fixture_rps_housekeeping(const nt_ctx *ctx, nt_cpuset *set)
{
	char buf[4096];
	nt_cpuset isolated;
	if (nt_cpuset_empty(set))
		return 0;
	if (nt_read_str(ctx, buf, sizeof(buf), "/sys/devices/system/cpu/isolated") < 0 ||
	    nt_cpulist_parse(buf, &isolated) < 0)
		return 0; /* no isolated CPUs: every CPU does housekeeping */
	nt_cpuset_andnot(set, set, &isolated);
	return nt_cpuset_empty(set) ? -EINVAL : 0;
}

/* ---- IRQ affinity ---- */

/* One of an IRQ's files, opened by NAME in its directory DFD for reading
 * and writing: a regular file (not a symlink, FIFO or directory), with its
 * stat in ST. Returns the descriptor or -errno / NT_EFILETYPE. */
static int irq_file_open(int dfd, const char *name, struct stat *st)
{
	int fd = openat(dfd, name, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ELOOP || errno == ENXIO ? NT_EFILETYPE : -errno;
	int r = fstat(fd, st) < 0 ? -errno : S_ISREG(st->st_mode) ? 0 : NT_EFILETYPE;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* Make file NAME of directory DFD (open on FD, stat ST) hold TEXT, as an
 * attribute changes in the kernel: an agent killed at any moment leaves
 * the old value or the new one, never an empty or torn file.
 * - A value at least as long as the file (a mask always is) is written
 *   over it with one pwrite: a write of a few bytes into one page is done
 *   whole or not at all, even by SIGKILL, and it sets the new length with
 *   the bytes.
 * - A shorter one is written the same way padded with newlines to the
 *   file's length, then the file is cut to the value: a kill in between
 *   leaves the new value and blank lines, which reads as the new value
 *   (reads drop trailing whitespace, as kernel files end in a newline).
 *   The file stays the same file, so a reader holding it open (the
 *   agent's held IRQ files) keeps reading it, as on procfs.
 * - A file longer than a page: the value goes to NAME.nt-new, renamed
 *   over NAME (a kill before the rename can leave NAME.nt-new behind,
 *   which the next write reuses).
 * Returns 0 when FD still names the file (written in place), 1 when it
 * was replaced, or -errno. */
static int irq_file_put(int dfd, const char *name, int fd, const struct stat *st, const char *text)
{
	char tmp[64], padded[ATTR_MAX];
	size_t len = strlen(text), done = 0;
	int tfd, r = 0;

	if ((off_t)len >= st->st_size || st->st_size <= (off_t)sizeof(padded)) {
		size_t wlen = len;
		ssize_t n;
		if ((off_t)len < st->st_size) {
			wlen = (size_t)st->st_size;
			memcpy(padded, text, len);
			memset(padded + len, '\n', wlen - len);
			text = padded;
		}
		do {
			n = pwrite(fd, text, wlen, 0);
		} while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
		if ((size_t)n != wlen)
			return -EIO;
		return wlen > len && ftruncate(fd, (off_t)len) < 0 ? -errno : 0;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.nt-new", name) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	tfd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK,
		     st->st_mode & 07777);
	if (tfd < 0)
		return errno == ELOOP || errno == ENXIO ? NT_EFILETYPE : -errno;
	struct stat tst;
	if (fstat(tfd, &tst) < 0 || !S_ISREG(tst.st_mode)) {
		close(tfd);
		return NT_EFILETYPE; /* not ours to remove */
	}
	while (done < len && r == 0) {
		ssize_t n = write(tfd, text + done, len - done);
		if (n < 0 && errno != EINTR)
			r = -errno;
		else if (n == 0)
			r = -EIO;
		else if (n > 0)
			done += (size_t)n;
	}
	/* The mode asked for at creation may have been cut by the umask. */
	if (r == 0 && (tst.st_mode & 07777) != (st->st_mode & 07777) &&
	    fchmod(tfd, st->st_mode & 07777) < 0)
		r = -errno;
	if (close(tfd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(dfd, tmp, 0);
	return r < 0 ? r : 1;
}

/* Bits of a mask file as it is now: 4 per hex digit, commas aside. The
 * fixture's masks are as wide as the captured machine's. */
static int mask_width(int fd)
{
	char buf[ATTR_MAX];
	int bits = 0;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return -errno;
	for (ssize_t i = 0; i < n; i++)
		if (isxdigit((unsigned char)buf[i]))
			bits += 4;
	return bits;
}

/* File NAME of the IRQ directory DFD, if the fixture has it, holds SET:
 * as a cpulist, or (MASK) as a hex mask as wide as the file's. */
static int irq_mirror(int dfd, const char *name, const nt_cpuset *set, bool mask)
{
	char buf[ATTR_MAX];
	struct stat st;
	int r, bits = 0;
	int fd = irq_file_open(dfd, name, &st);

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	if (mask && (bits = mask_width(fd)) <= 0) {
		/* An empty mask file: no width to keep, left as the fixture has it. */
		r = bits;
		goto out;
	}
	r = mask ? nt_cpumask_format(set, bits, buf, sizeof(buf) - 1)
		 : nt_cpulist_format(set, buf, sizeof(buf) - 1);
	if (r < 0)
		goto out;
	strcat(buf, "\n");
	r = irq_file_put(dfd, name, fd, &st, buf);
	if (r > 0)
		r = 0;
out:
	close(fd);
	return r;
}

/* The IRQ's directory is opened (and checked to lie under the root) once,
 * and its files are opened by name in it: a step costs a few calls per
 * file, not a path walk and a check each. smp_affinity_list goes first:
 * an agent killed after it and before the rest leaves a target that no
 * longer reads as its before-value, which recovery puts back whole. */
int nt_fixture_irq_set_affinity(const nt_ctx *ctx, int irq, const char *cpulist, char *rbuf, size_t rsize,
				int *read_r)
{
	char buf[ATTR_MAX];
	struct stat st;
	nt_cpuset set, first;
	int dfd, fd, r;

	if (nt_cpulist_parse(cpulist, &set) < 0 || nt_cpuset_empty(&set))
		return NT_EINVALID;
	r = snprintf(buf, sizeof(buf), "%s\n", cpulist);
	if (r < 0 || (size_t)r >= sizeof(buf))
		return -E2BIG;
	if ((dfd = nt_open_dir(ctx, "/proc/irq/%d", irq)) < 0)
		return dfd;
	if ((fd = irq_file_open(dfd, "smp_affinity_list", &st)) < 0) {
		r = fd;
		goto out;
	}
	r = irq_file_put(dfd, "smp_affinity_list", fd, &st, buf);
	/* Read back as on the kernel, through the descriptor written; a file
	 * replaced (longer than a page) is opened again. */
	if (r > 0 && rbuf) {
		close(fd);
		fd = irq_file_open(dfd, "smp_affinity_list", &st);
		*read_r = fd < 0 ? fd : nt_pread_value(fd, rbuf, rsize);
	} else if (r == 0 && rbuf) {
		*read_r = nt_pread_value(fd, rbuf, rsize);
	}
	if (fd >= 0)
		close(fd);
	if (r < 0)
		goto out;
	nt_cpuset_zero(&first);
	nt_cpuset_set(&first, nt_cpuset_next(&set, 0));
	if ((r = irq_mirror(dfd, "smp_affinity", &set, true)) < 0 ||
	    (r = irq_mirror(dfd, "effective_affinity_list", &first, false)) < 0 ||
	    (r = irq_mirror(dfd, "effective_affinity", &first, true)) < 0)
		goto out;
	r = 0;
out:
	close(dfd);
	return r;
}

/* ---- bonding options ---- */

/* The bonding driver shows an enumerated option as "name number"; the
 * numbers are the kernel's (BOND_MODE_*, BOND_XMIT_POLICY_* in
 * include/uapi/linux/if_bonding.h, AD_LACP_* ). */
static const struct {
	const char *option;
	const char *const names[8]; /* by number, NULL-terminated */
} bond_enums[] = {
	{ "mode", { "balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad",
		    "balance-tlb", "balance-alb", NULL } },
	{ "xmit_hash_policy", { "layer2", "layer3+4", "layer2+3", "encap2+3", "encap3+4",
				"vlan+srcmac", NULL } },
	{ "lacp_rate", { "slow", "fast", NULL } },
};

int nt_fixture_bond_set(const nt_ctx *ctx, const char *bond, const char *option,
			const char *value)
{
	char shown[64];

	for (size_t i = 0; i < sizeof(bond_enums) / sizeof(bond_enums[0]); i++) {
		if (strcmp(bond_enums[i].option, option) != 0)
			continue;
		/* The driver takes the name or the number. */
		for (int k = 0; bond_enums[i].names[k]; k++) {
			char num[12];
			snprintf(num, sizeof(num), "%d", k);
			if (strcmp(value, bond_enums[i].names[k]) && strcmp(value, num))
				continue;
			snprintf(shown, sizeof(shown), "%s %d", bond_enums[i].names[k], k);
			return write_attrf(ctx, shown, "/sys/class/net/%s/bonding/%s", bond, option);
		}
		return -EINVAL;
	}
	return write_attrf(ctx, value, "/sys/class/net/%s/bonding/%s", bond, option);
}
