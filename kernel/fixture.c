/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel on a fixture root: see kernel/fixture.h. */
#include "kernel/fixture.h"
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

static void set_err(char *err, size_t errsize, const char *text)
{
	if (err && errsize)
		snprintf(err, errsize, "%s", text);
}

/* ---- ethtool: ROOT/ethtool/IFACE.json ---- */

static int ethtool_load(const nt_ctx *ctx, const char *section, const char *ifname,
			json_t **rootp, json_t **secp)
{
	char *buf = NULL;
	json_t *root = NULL;
	int r = nt_read_all(ctx, &buf, "/ethtool/%s.json", ifname);

	if (r < 0) {
		/* No file is how a fixture says the driver has no ethtool ops. */
		r = r == -ENOENT ? -EOPNOTSUPP : r;
		goto out;
	}
	root = json_loads(buf, 0, NULL);
	if (!json_is_object(root)) {
		r = NT_EPARSE;
		goto out;
	}
	json_t *sec = json_object_get(root, section);
	if (!sec) {
		r = -EOPNOTSUPP;
		goto out;
	}
	if (!json_is_object(sec)) {
		r = NT_EPARSE;
		goto out;
	}
	*rootp = root;
	*secp = sec;
	root = NULL;
	r = 0;
out:
	json_decref(root);
	free(buf);
	return r;
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
	int r = ethtool_load(ctx, g->section, ifname, &root, &sec);

	memset(out, 0, sizeof(*out));
	if (r < 0)
		return r;
	for (int i = 0; i < g->nfields; i++) {
		json_t *v = json_object_get(sec, g->fields[i].name);
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
	char *buf = NULL;
	*min_mtu = 68;
	*max_mtu = 65535;
	if (nt_read_all(ctx, &buf, "/ethtool/%s.json", ifname) < 0)
		return false;
	json_t *root = json_loads(buf, 0, NULL);
	json_t *link = json_object_get(root, "link");
	bool found = json_is_object(link);
	json_t *lo = json_object_get(link, "min_mtu"), *hi = json_object_get(link, "max_mtu");
	if (json_is_integer(lo) && json_integer_value(lo) >= 0 && json_integer_value(lo) <= UINT32_MAX)
		*min_mtu = (uint32_t)json_integer_value(lo);
	if (json_is_integer(hi) && json_integer_value(hi) >= 0 && json_integer_value(hi) <= UINT32_MAX)
		*max_mtu = (uint32_t)json_integer_value(hi);
	json_decref(root);
	free(buf);
	return found;
}

/* Replace the file in one step so a reader (or a crash) never sees half a
 * document: write a temporary file in the same directory, then rename. */
static int write_atomic(const nt_ctx *ctx, const char *ifname, const char *text)
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
			set_err(err, errsize, g->above_max ? g->above_max : "value exceeds maximum");
			return -EINVAL;
		}
		/* ethnl_set_coalesce's refusal of a parameter the driver lacks. */
		if (!(cur->present & (1u << i))) {
			set_err(err, errsize, "cannot modify an unsupported parameter");
			return -EINVAL;
		}
	}
	return 0;
}

/* ROOT/ethtool/IFNAME.json replaced by ROOT, as the kernel changes a
 * device's settings all at once. */
static int save_doc(const nt_ctx *ctx, const char *ifname, json_t *root)
{
	char *text = json_dumps(root, JSON_INDENT(2)), *nl;
	int r;

	if (!text)
		return -ENOMEM;
	size_t n = strlen(text);
	if (!(nl = realloc(text, n + 2))) {
		free(text);
		return -ENOMEM;
	}
	text = nl;
	memcpy(text + n, "\n", 2);
	r = write_atomic(ctx, ifname, text);
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
	r = ethtool_load(ctx, g->section, ifname, &root, &sec);
	if (r < 0)
		return r;
	for (int i = 0; i < g->nfields; i++) {
		const nt_ethtool_field *f = &g->fields[i];
		if (!(send->present & (1u << i)))
			continue;
		/* Keep the spelling the fixture uses for a boolean. */
		json_t *old = json_object_get(sec, f->name);
		json_t *v = json_is_boolean(old) ? json_boolean(send->v[i] != 0)
						 : json_integer(send->v[i]);
		if (json_object_set_new(sec, f->name, v) < 0) {
			r = -ENOMEM;
			goto out;
		}
	}
	r = save_doc(ctx, ifname, root);
out:
	json_decref(root);
	return r;
}

/* ---- features: the "features" object of ROOT/ethtool/IFACE.json ---- */

/* One feature's entry: {"on": B, "fixed": B, "wanted": B, "needs": [...]},
 * or a bare boolean for a changeable feature that is as wanted. */
static int feature_entry(json_t *e, nt_feature *f)
{
	if (json_is_boolean(e)) {
		f->active = f->wanted = json_is_true(e);
		return 0;
	}
	json_t *on = json_object_get(e, "on"), *fixed = json_object_get(e, "fixed"),
	       *wanted = json_object_get(e, "wanted");
	if (!json_is_object(e) || !json_is_boolean(on) || (fixed && !json_is_boolean(fixed)) ||
	    (wanted && !json_is_boolean(wanted)))
		return NT_EPARSE;
	f->active = json_is_true(on);
	f->wanted = wanted ? json_is_true(wanted) : f->active;
	f->fixed = json_is_true(fixed);
	return 0;
}

int nt_fixture_features_get(const nt_ctx *ctx, const char *ifname, nt_features *out)
{
	json_t *root = NULL, *sec = NULL, *e;
	const char *name;
	int r = ethtool_load(ctx, "features", ifname, &root, &sec);

	memset(out, 0, sizeof(*out));
	if (r < 0)
		return r;
	json_object_foreach(sec, name, e) {
		if (out->n >= NT_FEATURES_MAX) {
			r = NT_EPARSE;
			goto out;
		}
		nt_feature *f = &out->f[out->n];
		if (strlen(name) >= sizeof(f->name) || feature_entry(e, f) < 0) {
			r = NT_EPARSE;
			goto out;
		}
		memcpy(f->name, name, strlen(name) + 1);
		out->n++;
	}
out:
	json_decref(root);
	return r;
}

/* ---- RSS: the "rss" object of ROOT/ethtool/IFACE.json ---- */

static int rss_load(const nt_ctx *ctx, const char *ifname, json_t **rootp, json_t **rssp)
{
	int r = ethtool_load(ctx, "rss", ifname, rootp, rssp);
	json_t *indir = r == 0 ? json_object_get(*rssp, "indir") : NULL;
	if (r == 0 && indir && !json_is_array(indir)) {
		json_decref(*rootp);
		return NT_EPARSE;
	}
	return r;
}

static uint32_t rss_rx_rings(json_t *root, json_t *rss)
{
	json_t *x = json_object_get(rss, "rx_rings"), *ch = json_object_get(root, "channels");
	if (json_is_integer(x))
		return (uint32_t)json_integer_value(x);
	return (uint32_t)(json_integer_value(json_object_get(ch, "combined")) +
			  json_integer_value(json_object_get(ch, "rx")));
}

int nt_fixture_rss_get(const nt_ctx *ctx, const char *ifname, nt_rss *out)
{
	json_t *root = NULL, *rss = NULL;
	int r = rss_load(ctx, ifname, &root, &rss);
	memset(out, 0, sizeof(*out));
	if (r < 0)
		return r;
	json_t *indir = json_object_get(rss, "indir");
	out->indir_size = (uint32_t)json_array_size(indir);
	out->key_size = (uint32_t)json_integer_value(json_object_get(rss, "key_size"));
	out->hfunc = (uint8_t)json_integer_value(json_object_get(rss, "hfunc"));
	out->rx_rings = rss_rx_rings(root, rss);
	out->indir = calloc(out->indir_size + 1, sizeof(uint32_t));
	if (!out->indir) {
		r = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < out->indir_size; i++)
		out->indir[i] = (uint32_t)json_integer_value(json_array_get(indir, i));
	for (int f = 0; f < NT_RSS_FLOWS; f++) {
		const char *t = json_string_value(json_object_get(json_object_get(rss, "hash_fields"),
								  nt_rss_flow_names[f]));
		uint64_t bits;
		if (t && nt_rss_fields_parse(t, &bits) == 0)
			nt_rss_fields_format(bits, out->fields[f], sizeof(out->fields[f]));
	}
	r = 0;
out:
	json_decref(root);
	return r;
}

/* Whether every feature E "needs" is on in SEC. */
static bool needs_met(json_t *sec, json_t *e)
{
	json_t *needs = json_is_object(e) ? json_object_get(e, "needs") : NULL, *n;
	size_t i;
	json_array_foreach(needs, i, n) {
		json_t *dep = json_object_get(sec, json_string_value(n));
		if (!dep || !(json_is_boolean(dep) ? json_is_true(dep) : json_is_true(json_object_get(dep, "on"))))
			return false;
	}
	return true;
}

/* Entry E of a changeable feature now shows ON, its wanted state kept. */
static int feature_show(json_t *sec, const char *name, json_t *e, bool on)
{
	if (json_is_boolean(e)) {
		json_t *o = json_pack("{s:b,s:b}", "on", on, "wanted", json_is_true(e));
		return o && json_object_set_new(sec, name, o) == 0 ? 0 : -ENOMEM;
	}
	/* "wanted" defaults to "on": spell it out before "on" moves. */
	if (!json_object_get(e, "wanted") &&
	    json_object_set_new(e, "wanted", json_boolean(json_is_true(json_object_get(e, "on")))) < 0)
		return -ENOMEM;
	return json_object_set_new(e, "on", json_boolean(on)) == 0 ? 0 : -ENOMEM;
}

int nt_fixture_features_set(const nt_ctx *ctx, const char *ifname, const char *name, bool on, char *err,
			    size_t errsize)
{
	json_t *root = NULL, *sec = NULL, *e;
	const char *key;
	nt_feature f = { 0 };
	int r = ethtool_load(ctx, "features", ifname, &root, &sec);

	if (r < 0)
		return r;
	e = json_object_get(sec, name);
	if (!e) {
		set_err(err, errsize, "unrecognized bit name");
		r = -EINVAL;
		goto out;
	}
	if ((r = feature_entry(e, &f)) < 0)
		goto out;
	/* The kernel keeps a fixed feature as it is, and says nothing. */
	if (f.fixed) {
		r = 0;
		goto out;
	}
	if (json_is_boolean(e)) {
		e = json_pack("{s:b,s:b}", "on", on, "wanted", on);
		if (!e || json_object_set_new(sec, name, e) < 0) {
			r = -ENOMEM;
			goto out;
		}
	} else if (json_object_set_new(e, "wanted", json_boolean(on)) < 0) {
		r = -ENOMEM;
		goto out;
	}
	/* netdev_fix_features: a changeable feature is active when wanted and
	 * what it needs is active; a change may ripple, so go round until
	 * nothing moves (at most once per feature). */
	for (size_t pass = 0, moved = 1; moved && pass <= json_object_size(sec); pass++) {
		moved = 0;
		json_object_foreach(sec, key, e) {
			nt_feature g = { 0 };
			if ((r = feature_entry(e, &g)) < 0)
				goto out;
			bool now = g.wanted && needs_met(sec, e);
			if (g.fixed || now == g.active)
				continue;
			if ((r = feature_show(sec, key, json_object_get(sec, key), now)) < 0)
				goto out;
			moved = 1;
		}
	}
	r = save_doc(ctx, ifname, root);
out:
	json_decref(root);
	return r;
}

int nt_fixture_rss_set_indir(const nt_ctx *ctx, const char *ifname, const uint32_t *indir, uint32_t n,
			     char *err, size_t errsize)
{
	json_t *root = NULL, *rss = NULL, *arr = NULL;
	int r = rss_load(ctx, ifname, &root, &rss);
	if (r < 0)
		return r;
	uint32_t rings = rss_rx_rings(root, rss);
	r = -EINVAL;
	/* ethtool_set_rxfh: a table of the device's size, each entry below
	 * the RX ring count (ethtool_copy_validate_indir). */
	if (n != json_array_size(json_object_get(rss, "indir"))) {
		set_err(err, errsize, "indirection table size does not match the device's");
		goto out;
	}
	if (!(arr = json_array())) {
		r = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (rings && indir[i] >= rings) {
			set_err(err, errsize, "indirection table entry is beyond the RX rings");
			goto out;
		}
		if (json_array_append_new(arr, json_integer(indir[i])) < 0) {
			r = -ENOMEM;
			goto out;
		}
	}
	r = json_object_set(rss, "indir", arr) < 0 ||
		    json_object_set_new(rss, "configured", json_boolean(!nt_rss_indir_is_default(indir, n, rings))) < 0
		    ? -ENOMEM
		    : save_doc(ctx, ifname, root);
out:
	json_decref(arr);
	json_decref(root);
	return r;
}

int nt_fixture_rss_set_fields(const nt_ctx *ctx, const char *ifname, int flow, uint64_t data, char *err,
			      size_t errsize)
{
	json_t *root = NULL, *rss = NULL;
	char text[16];
	int r = rss_load(ctx, ifname, &root, &rss);
	if (r < 0)
		return r;
	json_t *hf = json_object_get(rss, "hash_fields");
	const char *cur = json_string_value(json_object_get(hf, nt_rss_flow_names[flow]));
	/* A flow type the NIC reports no fields for it does not hash (a
	 * virtio NIC without RSS answers ETHTOOL_GRXFH with none). */
	if (!cur || !cur[0] || data == 0) {
		set_err(err, errsize, "the device does not hash this flow type");
		r = -EINVAL;
		goto out;
	}
	nt_rss_fields_format(data, text, sizeof(text));
	r = json_object_set_new(hf, nt_rss_flow_names[flow], json_string(text)) < 0 ? -ENOMEM
										      : save_doc(ctx, ifname, root);
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

/* ---- flow rules: the "flows" object of ROOT/ethtool/IFACE.json ---- */

/* The whole document and its "flows" object (borrowed from *ROOTP). */
static int flows_load(const nt_ctx *ctx, const char *ifname, json_t **rootp, json_t **flowsp)
{
	char *buf = NULL;
	int r = nt_read_all(ctx, &buf, "/ethtool/%s.json", ifname);
	if (r < 0)
		return r == -ENOENT ? -EOPNOTSUPP : r;
	json_t *root = json_loads(buf, 0, NULL);
	free(buf);
	json_t *flows = json_object_get(root, "flows");
	r = !json_is_object(root) ? NT_EPARSE : !flows ? -EOPNOTSUPP : 0;
	if (r == 0 && (!json_is_object(flows) || !json_is_integer(json_object_get(flows, "size")) ||
		       (json_object_get(flows, "rules") && !json_is_array(json_object_get(flows, "rules")))))
		r = NT_EPARSE;
	if (r < 0) {
		json_decref(root);
		return r;
	}
	*rootp = root;
	*flowsp = flows;
	return 0;
}

/* The RX rings a rule may steer to: "rings", else what the channels
 * object says the NIC has now (rx + combined), as GRXRINGS follows it. */
static uint32_t flows_rings(json_t *root, json_t *flows)
{
	json_t *x = json_object_get(flows, "rings"), *ch = json_object_get(root, "channels");
	if (json_is_integer(x))
		return (uint32_t)json_integer_value(x);
	return (uint32_t)(json_integer_value(json_object_get(ch, "rx")) +
			  json_integer_value(json_object_get(ch, "combined")));
}

int nt_fixture_flows_read(const nt_ctx *ctx, const char *ifname, nt_flow_table *out)
{
	json_t *root = NULL, *flows = NULL, *e;
	size_t i;
	memset(out, 0, sizeof(*out));
	int r = flows_load(ctx, ifname, &root, &flows);
	if (r < 0)
		return r;
	json_t *rules = json_object_get(flows, "rules");
	out->size = (uint32_t)json_integer_value(json_object_get(flows, "size"));
	out->rings = flows_rings(root, flows);
	out->loc_special = true;
	out->rules = calloc(json_array_size(rules) + 1, sizeof(*out->rules));
	if (!out->rules) {
		r = -ENOMEM;
		goto out;
	}
	json_array_foreach(rules, i, e) {
		json_t *loc = json_object_get(e, "location");
		nt_flow_rule *fr = &out->rules[out->n];
		if (!json_is_integer(loc) || json_integer_value(loc) < 0 ||
		    nt_flow_rule_parse(json_string_value(json_object_get(e, "rule")), fr, NULL, 0) < 0 ||
		    fr->type == NT_FLOW_NONE) {
			r = NT_EPARSE;
			goto out;
		}
		fr->location = (uint32_t)json_integer_value(loc);
		out->n++;
	}
out:
	json_decref(root);
	if (r < 0)
		nt_flow_table_free(out);
	return r;
}

static int flows_store(const nt_ctx *ctx, const char *ifname, json_t *root)
{
	char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (!text)
		return -ENOMEM;
	int r = write_atomic(ctx, ifname, text);
	free(text);
	return r;
}

/* The index in RULES of the rule at LOC, or -1. */
static int flows_find(json_t *rules, uint32_t loc)
{
	size_t i;
	json_t *e;
	json_array_foreach(rules, i, e)
		if (json_integer_value(json_object_get(e, "location")) == (json_int_t)loc)
			return (int)i;
	return -1;
}

int nt_fixture_flows_insert(const nt_ctx *ctx, const char *ifname, const nt_flow_rule *fr, char *err,
			    size_t errsize)
{
	json_t *root = NULL, *flows = NULL;
	char text[NT_FLOW_TEXT_MAX], msg[160];
	int r = flows_load(ctx, ifname, &root, &flows);
	if (r < 0)
		return r;
	json_t *rules = json_object_get(flows, "rules");
	if (!rules) {
		rules = json_array();
		json_object_set_new(flows, "rules", rules);
	}
	uint32_t size = (uint32_t)json_integer_value(json_object_get(flows, "size"));
	uint32_t rings = flows_rings(root, flows);
	int at = flows_find(rules, fr->location);
	r = -EINVAL;
	if (fr->location >= size) {
		snprintf(msg, sizeof(msg), "location %u is beyond the table of %u", fr->location, size);
		goto refuse;
	}
	if (!fr->drop && fr->queue >= rings) {
		snprintf(msg, sizeof(msg), "queue %u is beyond the %u RX rings", fr->queue, rings);
		goto refuse;
	}
	r = -ENOSPC;
	if (at < 0 && json_array_size(rules) >= size) {
		snprintf(msg, sizeof(msg), "the rule table is full");
		goto refuse;
	}
	if ((r = nt_flow_rule_format(fr, text, sizeof(text))) < 0)
		goto out;
	json_t *e = json_pack("{s:I,s:s}", "location", (json_int_t)fr->location, "rule", text);
	r = !e ? -ENOMEM : at >= 0 ? json_array_set_new(rules, (size_t)at, e) : json_array_append_new(rules, e);
	r = r < 0 ? -ENOMEM : flows_store(ctx, ifname, root);
	goto out;
refuse:
	set_err(err, errsize, msg);
out:
	json_decref(root);
	return r;
}

int nt_fixture_flows_delete(const nt_ctx *ctx, const char *ifname, uint32_t loc)
{
	json_t *root = NULL, *flows = NULL;
	int r = flows_load(ctx, ifname, &root, &flows);
	if (r < 0)
		return r;
	json_t *rules = json_object_get(flows, "rules");
	int at = flows_find(rules, loc);
	r = at < 0 ? -ENOENT : json_array_remove(rules, (size_t)at) < 0 ? -ENOMEM : flows_store(ctx, ifname, root);
	json_decref(root);
	return r;
}

/* ---- the root qdisc: the "qdisc" object of ROOT/ethtool/IFACE.json ---- */

/* The kinds a stock kernel has modules for, that a create may name;
 * anything else is refused as the kernel refuses a kind it cannot load. */
static bool qdisc_kind_known(const char *kind)
{
	static const char *const kinds[] = { "pfifo_fast", "fq", "fq_codel", "mq", "htb", "noqueue", "pfifo",
					     "bfifo", "sfq", "tbf", "prio", "netem", "cake", "multiq", NULL };
	for (int i = 0; kinds[i]; i++)
		if (strcmp(kind, kinds[i]) == 0)
			return true;
	return false;
}

/* net.core.default_qdisc of the fixture, pfifo_fast (the kernel's own
 * default) when it does not say. */
static void default_qdisc(const nt_ctx *ctx, char *buf, size_t size)
{
	if (nt_read_str(ctx, buf, size, "/proc/sys/net/core/default_qdisc") < 0 || !buf[0] ||
	    !qdisc_kind_known(buf))
		snprintf(buf, size, "pfifo_fast");
}

/* Whether IFNAME is a virtual device with IFF_NO_QUEUE: bond, veth, vlan,
 * bridge, dummy, macvlan and lo set it; only a device of a bus has a
 * "device" link; of the virtual ones tun/tap (tun_flags in sysfs) and ifb
 * (its name, sysfs shows nothing of its own) keep a queue. */
static bool no_queue(const nt_ctx *ctx, const char *ifname)
{
	return !nt_exists(ctx, "/sys/class/net/%s/device", ifname) &&
	       !nt_exists(ctx, "/sys/class/net/%s/tun_flags", ifname) && strncmp(ifname, "ifb", 3) != 0;
}

/* What attach_default_qdiscs gives a device brought up: noqueue for one
 * of IFF_NO_QUEUE, mq of the default for a multi-queue one, the default
 * itself for one queue. */
static void qdisc_kernel_default(const nt_ctx *ctx, const char *ifname, uint32_t ntx, nt_qdisc *out)
{
	char dflt[16];
	memset(out, 0, sizeof(*out));
	out->dflt = true;
	default_qdisc(ctx, dflt, sizeof(dflt));
	if (no_queue(ctx, ifname)) {
		snprintf(out->kind, sizeof(out->kind), "noqueue");
	} else if (ntx > 1) {
		snprintf(out->kind, sizeof(out->kind), "mq");
		snprintf(out->child, sizeof(out->child), "%s", dflt);
		out->child_dflt = true;
	} else {
		snprintf(out->kind, sizeof(out->kind), "%s", dflt);
	}
}

static int qdisc_u32(json_t *sec, const char *name, bool *has, uint32_t *v)
{
	json_t *x = json_object_get(sec, name);
	if (!x)
		return 0;
	if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > (json_int_t)UINT32_MAX)
		return NT_EPARSE;
	*has = true;
	*v = (uint32_t)json_integer_value(x);
	return 0;
}

static int qdisc_word(json_t *sec, const char *name, char *buf, size_t size, bool required)
{
	json_t *x = json_object_get(sec, name);
	if (!x)
		return required ? NT_EPARSE : 0;
	if (!json_is_string(x) || !json_string_value(x)[0] || strlen(json_string_value(x)) >= size)
		return NT_EPARSE;
	snprintf(buf, size, "%s", json_string_value(x));
	return 0;
}

int nt_fixture_qdisc_get(const nt_ctx *ctx, const char *ifname, uint32_t ntx, nt_qdisc *out)
{
	json_t *root = NULL, *sec = NULL;
	char *buf = NULL;
	/* Every read of the host asks each NIC: a file that never names a
	 * qdisc (most, with an RSS table of hundreds of entries) is not
	 * parsed to find that out. */
	int r = nt_read_all(ctx, &buf, "/ethtool/%s.json", ifname);
	bool named = r >= 0 && strstr(buf, "\"qdisc\"");
	free(buf);
	if (r < 0 && r != -ENOENT)
		return r;
	r = named ? ethtool_load(ctx, "qdisc", ifname, &root, &sec) : -EOPNOTSUPP;

	if (r == -EOPNOTSUPP) {
		qdisc_kernel_default(ctx, ifname, ntx, out);
		return 0;
	}
	memset(out, 0, sizeof(*out));
	if (r < 0)
		return r;
	json_t *cd = json_object_get(sec, "children_default");
	if ((r = qdisc_word(sec, "kind", out->kind, sizeof(out->kind), true)) < 0 ||
	    (r = qdisc_word(sec, "children", out->child, sizeof(out->child), false)) < 0 ||
	    (r = qdisc_u32(sec, "limit", &out->fq.has_limit, &out->fq.limit)) < 0 ||
	    (r = qdisc_u32(sec, "flow_limit", &out->fq.has_flow_limit, &out->fq.flow_limit)) < 0 ||
	    (r = qdisc_u32(sec, "maxrate", &out->fq.has_maxrate, &out->fq.maxrate)) < 0)
		goto out;
	if (cd && !json_is_boolean(cd)) {
		r = NT_EPARSE;
		goto out;
	}
	out->child_dflt = out->child[0] && json_is_true(cd);
	/* As the live reader: parameters at fq's defaults are not named. */
	if (out->fq.has_limit && out->fq.limit == NT_FQ_DEFAULT_LIMIT)
		out->fq.has_limit = false;
	if (out->fq.has_flow_limit && out->fq.flow_limit == NT_FQ_DEFAULT_FLOW_LIMIT)
		out->fq.has_flow_limit = false;
	if (out->fq.has_maxrate && out->fq.maxrate == NT_FQ_UNLIMITED)
		out->fq.has_maxrate = false;
	if (out->child_dflt)
		memset(&out->fq, 0, sizeof(out->fq));
out:
	json_decref(root);
	return r;
}

/* ROOT/ethtool/IFACE.json as an object, an empty one when there is no
 * file (a NIC without ethtool ops still has a qdisc). */
static int doc_load_or_new(const nt_ctx *ctx, const char *ifname, json_t **rootp)
{
	char *buf = NULL;
	int r = nt_read_all(ctx, &buf, "/ethtool/%s.json", ifname);
	if (r == -ENOENT) {
		*rootp = json_object();
		return *rootp ? 0 : -ENOMEM;
	}
	if (r < 0)
		return r;
	*rootp = json_loads(buf, 0, NULL);
	free(buf);
	if (!json_is_object(*rootp)) {
		json_decref(*rootp);
		*rootp = NULL;
		return NT_EPARSE;
	}
	return 0;
}

/* Save ROOT, or remove the file when nothing is left in it: no file is how
 * a fixture says the driver has no ethtool ops, which a qdisc written and
 * put back must not change. */
static int doc_save_or_remove(const nt_ctx *ctx, const char *ifname, json_t *root)
{
	char path[PATH_MAX];
	if (json_object_size(root) > 0) {
		int r = nt_path(ctx, path, sizeof(path), "/ethtool");
		if (r < 0)
			return r;
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -errno;
		return save_doc(ctx, ifname, root);
	}
	int r = nt_path(ctx, path, sizeof(path), "/ethtool/%s.json", ifname);
	if (r == 0 && unlink(path) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

static int qdisc_put_fq(json_t *sec, const nt_fq_params *fq)
{
	if ((fq->has_limit && json_object_set_new(sec, "limit", json_integer(fq->limit)) < 0) ||
	    (fq->has_flow_limit && json_object_set_new(sec, "flow_limit", json_integer(fq->flow_limit)) < 0) ||
	    (fq->has_maxrate && json_object_set_new(sec, "maxrate", json_integer(fq->maxrate)) < 0))
		return -ENOMEM;
	return 0;
}

/* The kernel's checks of a create (net/sched/sch_api.c qdisc_create,
 * sch_mq.c mq_init), with its words. */
static int qdisc_refused(uint32_t ntx, const nt_qdisc *q, char *err, size_t errsize)
{
	bool mq_child = strcmp(q->kind, "mq") == 0 && q->child[0] && !q->child_dflt;
	if (!qdisc_kind_known(q->kind) || (mq_child && !qdisc_kind_known(q->child))) {
		set_err(err, errsize, "Specified qdisc kind is unknown");
		return -ENOENT;
	}
	if (strcmp(q->kind, "mq") == 0 && ntx < 2)
		return -EOPNOTSUPP; /* mq_init says nothing */
	if (mq_child && strcmp(q->child, "mq") == 0)
		return -EOPNOTSUPP; /* mq only at the root */
	return 0;
}

int nt_fixture_qdisc_set(const nt_ctx *ctx, const char *ifname, uint32_t ntx, const nt_qdisc *q, char *err,
			 size_t errsize)
{
	json_t *root = NULL, *sec = NULL;
	char dflt[16];
	int r = q->dflt ? 0 : qdisc_refused(ntx, q, err, errsize);

	if (r < 0 || (r = doc_load_or_new(ctx, ifname, &root)) < 0)
		return r;
	/* Deleting the root gives the kernel's default back: no object. */
	json_object_del(root, "qdisc");
	if (!q->dflt) {
		bool mq = strcmp(q->kind, "mq") == 0;
		bool child = mq && q->child[0] && !q->child_dflt;
		default_qdisc(ctx, dflt, sizeof(dflt));
		if (!(sec = json_object()) || json_object_set_new(root, "qdisc", sec) < 0 ||
		    json_object_set_new(sec, "kind", json_string(q->kind)) < 0) {
			r = -ENOMEM;
			goto out;
		}
		/* mq_init gives every queue a default child (handle 0), which
		 * a create of children then replaces. */
		if (mq && (json_object_set_new(sec, "children", json_string(child ? q->child : dflt)) < 0 ||
			   json_object_set_new(sec, "children_default", json_boolean(!child)) < 0)) {
			r = -ENOMEM;
			goto out;
		}
		if (strcmp(child ? q->child : q->kind, "fq") == 0 && (r = qdisc_put_fq(sec, &q->fq)) < 0)
			goto out;
	}
	r = doc_save_or_remove(ctx, ifname, root);
out:
	json_decref(root);
	return r;
}
