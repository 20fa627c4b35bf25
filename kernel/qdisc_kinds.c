/* SPDX-License-Identifier: Apache-2.0 */
#include "kernel/qdisc_kinds.h"
#include "kernel/dynlib.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* gzip from libz.so.1, opened the first time /proc/config.gz is read
 * (kernel/dynlib.h says why it is not linked). */
static struct {
	typeof(gzdopen) *dopen;
	typeof(gzread) *read;
	typeof(gzclose) *close;
} z_fn;
static int z_rc;
static pthread_once_t z_once = PTHREAD_ONCE_INIT;

static void z_load(void)
{
	const nt_dynsym syms[] = {
		NT_DYNSYM(gzdopen, z_fn.dopen),
		NT_DYNSYM(gzread, z_fn.read),
		NT_DYNSYM(gzclose, z_fn.close),
	};
	char err[128];
	z_rc = nt_dynlib_open("libz.so.1", syms, sizeof(syms) / sizeof(syms[0]), NULL, err, sizeof(err));
}

/* The gzip file REL under the root, inflated, into *OUT (malloc'd,
 * NUL-terminated). Returns the length or -errno. */
static int read_gz(const nt_ctx *ctx, const char *rel, char **out)
{
	*out = NULL;
	pthread_once(&z_once, z_load);
	if (z_rc < 0)
		return z_rc;
	int fd = nt_open_read(ctx, "%s", rel);
	if (fd < 0)
		return fd;
	gzFile g = z_fn.dopen(fd, "rb");
	if (!g) {
		close(fd);
		return -ENOMEM;
	}
	size_t len = 0, cap = 0;
	char *buf = NULL;
	int r = 0;
	for (;;) {
		/* A kernel's configuration is some 200 KB: 4 MB is no config. */
		if (len + 65536 + 1 > cap) {
			char *g2 = cap >= (4u << 20) ? NULL : realloc(buf, cap = cap ? cap * 2 : 262144);
			if (!g2) {
				r = cap >= (4u << 20) ? -EFBIG : -ENOMEM;
				break;
			}
			buf = g2;
		}
		int n = z_fn.read(g, buf + len, 65536);
		if (n < 0) {
			r = -EIO;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	z_fn.close(g); /* closes FD too */
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[len] = '\0';
	*out = buf;
	return (int)len;
}

/* SYM's value in the configuration text CFG: 'y', 'm', or 0 (not set, or
 * not there). */
static char config_value(const char *cfg, const char *sym)
{
	size_t n = strlen(sym);
	for (const char *p = cfg; (p = strstr(p, sym)); p += n) {
		if ((p != cfg && p[-1] != '\n') || p[n] != '=')
			continue;
		return p[n + 1] == 'y' || p[n + 1] == 'm' ? p[n + 1] : 0;
	}
	return 0;
}

/* Whether the module list LIST (modules.dep or modules.builtin) names
 * MOD ("sch_fq"): a path ending /MOD.ko, compressed or not. */
static bool lists_module(const char *list, const char *mod)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "/%s.ko", mod);
	return strstr(list, pat) != NULL;
}

int nt_qdisc_kind_available(const nt_ctx *ctx, const char *kind, char *how, size_t howsize)
{
	char rel[96], sym[64], mod[48], path[160];
	char *cfg = NULL, *dep = NULL, *builtin = NULL;
	int r = -ENOENT;

	how[0] = '\0';
	/* sch_generic.c and sch_mq.c are net/sched/Makefile's obj-y: in every
	 * kernel, with no configuration symbol of their own, no module and no
	 * line in modules.builtin, so no file below could tell. */
	if (!strcmp(kind, "pfifo_fast") || !strcmp(kind, "noqueue") || !strcmp(kind, "noop") || !strcmp(kind, "mq")) {
		snprintf(how, howsize, "%s is part of every kernel", kind);
		return 1;
	}
	if (!*kind || strlen(kind) > 24)
		return -ENOENT;
	for (const char *k = kind; *k; k++)
		if (!isalnum((unsigned char)*k) && *k != '_')
			return -ENOENT;
	snprintf(mod, sizeof(mod), "sch_%s", kind);
	if (nt_exists(ctx, "/sys/module/%s", mod)) {
		snprintf(how, howsize, "%s is loaded (/sys/module/%s)", mod, mod);
		return 1;
	}
	int n = snprintf(sym, sizeof(sym), "CONFIG_NET_SCH_");
	for (const char *k = kind; *k && n < (int)sizeof(sym) - 1; k++)
		sym[n++] = (char)toupper((unsigned char)*k);
	sym[n] = '\0';
	if (nt_read_str(ctx, rel, sizeof(rel), "/proc/sys/kernel/osrelease") < 0 || !rel[0] || strchr(rel, '/'))
		rel[0] = '\0';

	const char *from = NULL;
	if (rel[0] && nt_read_all(ctx, &cfg, "/boot/config-%s", rel) >= 0) {
		snprintf(path, sizeof(path), "/boot/config-%s", rel);
		from = path;
	} else if (read_gz(ctx, "/proc/config.gz", &cfg) >= 0) {
		from = "/proc/config.gz";
	}
	/* modules.dep is a megabyte on a distribution kernel: read only when
	 * the configuration does not answer alone. */
	bool have_dep = false;
	if (from) {
		char v = config_value(cfg, sym);
		if (v == 'm')
			have_dep = rel[0] && nt_read_all(ctx, &dep, "/lib/modules/%s/modules.dep", rel) >= 0;
		if (v == 'y') {
			snprintf(how, howsize, "%s=y in %s", sym, from);
			r = 1;
		} else if (v == 'm' && config_value(cfg, "CONFIG_MODULES") != 'y') {
			snprintf(how, howsize, "%s=m in %s, and the kernel takes no modules", sym, from);
			r = 0;
		} else if (v == 'm' && have_dep && !lists_module(dep, mod)) {
			snprintf(how, howsize, "%s=m in %s, and /lib/modules/%s has no %s", sym, from, rel, mod);
			r = 0;
		} else if (v == 'm') {
			snprintf(how, howsize, "%s=m in %s", sym, from);
			r = 1;
		} else {
			snprintf(how, howsize, "%s is not set in %s", sym, from);
			r = 0;
		}
		goto out;
	}
	have_dep = rel[0] && nt_read_all(ctx, &dep, "/lib/modules/%s/modules.dep", rel) >= 0;
	bool have_builtin = rel[0] && nt_read_all(ctx, &builtin, "/lib/modules/%s/modules.builtin", rel) >= 0;
	if ((have_builtin && lists_module(builtin, mod)) || (have_dep && lists_module(dep, mod))) {
		snprintf(how, howsize, "/lib/modules/%s lists %s", rel, mod);
		r = 1;
	} else if (have_builtin && have_dep) {
		snprintf(how, howsize, "/lib/modules/%s lists no %s, built in or as a module", rel, mod);
		r = 0;
	}
out:
	free(cfg);
	free(dep);
	free(builtin);
	return r;
}
