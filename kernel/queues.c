/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's queues in sysfs: see kernel/queues.h. */
#include "kernel/queues.h"
#include "kernel/fixture.h"
#include "kernel/kernel.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "rx-12" -> 12 for PREFIX "rx-"; -1 for anything else. */
static long queue_number(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	char *end;
	if (strncmp(name, prefix, n) != 0 || name[n] < '0' || name[n] > '9')
		return -1;
	long v = strtol(name + n, &end, 10);
	return *end || v < 0 || v >= NT_QUEUES_MAX ? -1 : v;
}

/* Q is "rx-N" or "tx-N", FILE a plain name: nothing else reaches a path. */
static bool names_valid(const char *ifname, const char *q, const char *file)
{
	return nt_ifname_valid(ifname) && (queue_number(q, "rx-") >= 0 || queue_number(q, "tx-") >= 0) &&
	       file && file[0] && !strchr(file, '/') && file[0] != '.';
}

int nt_queues_count(const nt_ctx *ctx, const char *ifname, int *nrx, int *ntx)
{
	char path[PATH_MAX];
	struct dirent *de;
	*nrx = *ntx = 0;
	if (!nt_ifname_valid(ifname))
		return NT_EINVALID;
	int r = nt_path(ctx, path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	if (r < 0)
		return r;
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		long n = queue_number(de->d_name, "rx-");
		if (n >= 0 && n + 1 > *nrx)
			*nrx = (int)n + 1;
		n = queue_number(de->d_name, "tx-");
		if (n >= 0 && n + 1 > *ntx)
			*ntx = (int)n + 1;
	}
	closedir(d);
	return 0;
}

/* The width of a bitmap as the kernel printed TEXT: 32 bits a group
 * after the first, 4 a digit in the first ("00ff,00000000" is 48). */
static int mask_bits(const char *text)
{
	size_t first = strcspn(text, ",\n");
	int groups = 0;
	for (const char *p = text; *p; p++)
		groups += *p == ',';
	return groups * 32 + (int)first * 4;
}

int nt_queue_read_mask(const nt_ctx *ctx, const char *ifname, const char *q, const char *file,
		       nt_cpuset *out, int *nbits)
{
	char buf[NT_MAX_CPUS / 4 + NT_MAX_CPUS / 32 + 8];
	nt_cpuset_zero(out);
	if (!names_valid(ifname, q, file))
		return NT_EINVALID;
	int r = nt_read_str(ctx, buf, sizeof(buf), "/sys/class/net/%s/queues/%s/%s", ifname, q, file);
	if (r < 0)
		return r;
	if (nbits)
		*nbits = mask_bits(buf);
	r = nt_cpumask_parse(buf, out);
	return r < 0 ? r : 0;
}

int nt_queue_read_long(const nt_ctx *ctx, const char *ifname, const char *q, const char *file, long *out)
{
	*out = 0;
	if (!names_valid(ifname, q, file))
		return NT_EINVALID;
	return nt_read_long(ctx, out, "/sys/class/net/%s/queues/%s/%s", ifname, q, file);
}

static void say(char *err, size_t errsize, const char *ifname, const char *q, const char *file, int r)
{
	if (err && errsize)
		snprintf(err, errsize, "%s/%s %s: %s", ifname, q, file, nt_strerror(r));
}

int nt_queue_write_mask(const nt_ctx *ctx, const char *ifname, const char *q, const char *file,
			const nt_cpuset *set, nt_cpuset *back, int *read_r, char *err, size_t errsize)
{
	char text[NT_MAX_CPUS / 4 + NT_MAX_CPUS / 32 + 8];
	nt_cpuset cur, put = *set;
	int nbits = 0;

	*read_r = -EIO;
	nt_cpuset_zero(back);
	/* The width the kernel prints (nr_cpu_ids, or the RX queues for
	 * xps_rxqs): the restored file is then what it was, byte for byte. */
	int r = nt_queue_read_mask(ctx, ifname, q, file, &cur, &nbits);
	if (r == 0 && nt_cpuset_last(set) >= nbits)
		r = -EINVAL;
	if (r == 0 && !ctx->live && strcmp(file, "rps_cpus") == 0)
		r = nt_fixture_rps_housekeeping(ctx, &put);
	if (r == 0 && nt_cpumask_format(&put, nbits, text, sizeof(text)) < 0)
		r = -ENOSPC;
	if (r == 0)
		r = nt_kernel_write_attr(ctx, text, "/sys/class/net/%s/queues/%s/%s", ifname, q, file);
	if (r < 0) {
		say(err, errsize, ifname, q, file, r);
		return r;
	}
	*read_r = nt_queue_read_mask(ctx, ifname, q, file, back, NULL);
	return 0;
}

int nt_queue_write_long(const nt_ctx *ctx, const char *ifname, const char *q, const char *file, long v,
			long *back, int *read_r, char *err, size_t errsize)
{
	char text[32];
	*read_r = -EIO;
	*back = 0;
	int r = names_valid(ifname, q, file) && v >= 0 ? 0 : NT_EINVALID;
	long put = v;
	/* The kernel keeps a table of a power of two entries and shows its
	 * size (net/core/net-sysfs.c, store_rps_dev_flow_table_cnt). */
	if (!ctx->live && strcmp(file, "rps_flow_cnt") == 0 && put > 0)
		for (put = 1; put < v; put <<= 1)
			;
	snprintf(text, sizeof(text), "%ld", put);
	if (r == 0)
		r = nt_kernel_write_attr(ctx, text, "/sys/class/net/%s/queues/%s/%s", ifname, q, file);
	if (r < 0) {
		say(err, errsize, ifname, q, file, r);
		return r;
	}
	*read_r = nt_queue_read_long(ctx, ifname, q, file, back);
	return 0;
}
