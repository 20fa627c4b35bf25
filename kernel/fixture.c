/* The kernel on a fixture root: see kernel/fixture.h. */
#include "kernel/fixture.h"

#include <errno.h>
#include <fcntl.h>
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

static int ethtool_load(const nt_ctx *ctx, const nt_ethtool_group *g, const char *ifname,
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
	json_t *sec = json_object_get(root, g->section);
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
	int r = ethtool_load(ctx, g, ifname, &root, &sec);

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

int nt_fixture_ethtool_set(const nt_ctx *ctx, const nt_ethtool_group *g, const char *ifname,
			   const nt_ethtool_values *cur, const nt_ethtool_values *send, char *err,
			   size_t errsize)
{
	json_t *root = NULL, *sec = NULL;
	char *text = NULL;
	int r = ethtool_check(g, cur, send, err, errsize);

	if (r < 0)
		return r;
	r = ethtool_load(ctx, g, ifname, &root, &sec);
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
	text = json_dumps(root, JSON_INDENT(2));
	if (!text) {
		r = -ENOMEM;
		goto out;
	}
	size_t n = strlen(text);
	char *nl = realloc(text, n + 2);
	if (!nl) {
		r = -ENOMEM;
		goto out;
	}
	text = nl;
	memcpy(text + n, "\n", 2);
	r = write_atomic(ctx, ifname, text);
out:
	free(text);
	json_decref(root);
	return r;
}

