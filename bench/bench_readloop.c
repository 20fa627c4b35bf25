/* SPDX-License-Identifier: Apache-2.0 */
/* Benchmark reference: the least any tool must do to report where a host's
 * IRQs are placed and how often each CPU serves them, a bare loop that
 * reads, for every IRQ under ROOT/proc/irq, its smp_affinity_list and
 * effective_affinity_list, and reads ROOT/proc/interrupts once. Nothing is
 * parsed, nothing is written out: this is the floor of a host read on this
 * machine, not a rival of the agent's report (which also reads the NICs,
 * their rings and counters, parses every value and writes the document).
 *
 *   bench_readloop ROOT [ROUNDS]
 *
 * Three passes, each timed over ROUNDS (default 11), medians printed as one
 * JSON object:
 *   "held_ms"  the files opened once beforehand and read with pread each
 *              round, as a warm agent holds them: 2 calls a round per IRQ,
 *              plus /proc/interrupts opened, read and closed;
 *   "open_ms"  each file opened, read and closed every round, as a process
 *              that reads the host once (the CLI) must.
 *   "parallel_ms" the held pass split among as many threads as the machine
 *              has CPUs (at most 8), the files in contiguous parts, while
 *              the first thread also reads /proc/interrupts, as the agent
 *              splits its own read.
 * "interrupts_ms" is the read of /proc/interrupts alone (the held pass's
 * share), "files" the number of affinity files found, "interrupts_bytes"
 * the size of /proc/interrupts. bench/run.py prints them beside the agent's
 * own figures, so the ratio says what the agent adds to the floor. */
#include "bench/bench_util.h"

#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
	char path[PATH_MAX];
	int fd;
} file_t;

static char buf[1 << 16];

/* Reads all of the open FD from offset 0; the bytes read or -errno. */
static long pread_all(int fd)
{
	long total = 0;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), total);
		if (n < 0)
			return -errno;
		if (n == 0)
			return total;
		total += n;
	}
}

static long read_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	long total = 0;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0) {
			total = n < 0 ? -errno : total;
			break;
		}
		total += n;
	}
	close(fd);
	return total;
}

typedef struct {
	const file_t *v;
	size_t from, to;
	const char *interrupts; /* read too when not NULL */
	long r;
} part_t;

static void *read_part(void *arg)
{
	part_t *p = arg;
	p->r = 0;
	for (size_t i = p->from; i < p->to && p->r >= 0; i++)
		p->r = pread_all(p->v[i].fd);
	if (p->r >= 0 && p->interrupts)
		p->r = read_path(p->interrupts);
	return NULL;
}

/* The held pass in NT threads; ms or -1 when a read failed. */
static double parallel_pass(const file_t *v, size_t n, const char *interrupts, int nt)
{
	pthread_t tid[8];
	part_t parts[8];
	bool started[8] = { false };
	double t0 = now_ms();
	for (int k = 0; k < nt; k++) {
		parts[k] = (part_t){ v, n * (size_t)k / (size_t)nt, n * (size_t)(k + 1) / (size_t)nt,
				     k == 0 ? interrupts : NULL, 0 };
		if (k > 0)
			started[k] = pthread_create(&tid[k], NULL, read_part, &parts[k]) == 0;
	}
	read_part(&parts[0]);
	bool ok = parts[0].r >= 0;
	for (int k = 1; k < nt; k++) {
		if (started[k])
			pthread_join(tid[k], NULL);
		else
			read_part(&parts[k]);
		ok = ok && parts[k].r >= 0;
	}
	return ok ? now_ms() - t0 : -1;
}

static int cmp_irq(const void *a, const void *b)
{
	return atoi(*(char *const *)a) - atoi(*(char *const *)b);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: bench_readloop ROOT [ROUNDS]\n");
		return 2;
	}
	int rounds = argc > 2 ? atoi(argv[2]) : 11;
	if (rounds < 1) {
		fprintf(stderr, "bench_readloop: ROUNDS must be at least 1\n");
		return 2;
	}
	/* "/" as ROOT is the kernel itself: paths then start at /proc. */
	const char *prefix = strcmp(argv[1], "/") == 0 ? "" : argv[1];
	char dir[PATH_MAX], interrupts[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/proc/irq", prefix);
	snprintf(interrupts, sizeof(interrupts), "%s/proc/interrupts", prefix);

	file_t *v = NULL;
	char **names = NULL;
	double *held = NULL, *opened = NULL, *intr = NULL, *par = NULL;
	size_t n = 0, nn = 0, cap = 0;
	int rc = 1;
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "bench_readloop: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (nn == cap) {
			cap = cap ? cap * 2 : 1024;
			char **p = realloc(names, cap * sizeof(*names));
			if (!p)
				goto out;
			names = p;
		}
		if (!(names[nn] = strdup(de->d_name)))
			goto out;
		nn++;
	}
	qsort(names, nn, sizeof(*names), cmp_irq);
	if (!(v = calloc(2 * nn + 1, sizeof(*v))))
		goto out;
	static const char *const parts[] = { "smp_affinity_list", "effective_affinity_list" };
	for (size_t i = 0; i < nn; i++) {
		for (int k = 0; k < 2; k++) {
			file_t *f = &v[n];
			snprintf(f->path, sizeof(f->path), "%s/%s/%s", dir, names[i], parts[k]);
			/* IRQs without an action (or an effective file) have none. */
			if ((f->fd = open(f->path, O_RDONLY | O_CLOEXEC)) >= 0)
				n++;
		}
	}
	if (!n) {
		fprintf(stderr, "bench_readloop: no affinity files under %s\n", dir);
		goto out;
	}
	held = calloc((size_t)rounds, sizeof(double));
	opened = calloc((size_t)rounds, sizeof(double));
	intr = calloc((size_t)rounds, sizeof(double));
	par = calloc((size_t)rounds, sizeof(double));
	if (!held || !opened || !intr || !par)
		goto out;
	long ibytes = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int nthreads = ncpu < 1 ? 1 : ncpu > 8 ? 8 : (int)ncpu;
	for (int r = 0; r < rounds; r++) {
		double t0 = now_ms();
		for (size_t i = 0; i < n; i++) {
			long b = pread_all(v[i].fd);
			if (b < 0) {
				fprintf(stderr, "bench_readloop: %s: %s\n", v[i].path, strerror((int)-b));
				goto out;
			}
		}
		double t1 = now_ms();
		if ((ibytes = read_path(interrupts)) < 0) {
			fprintf(stderr, "bench_readloop: %s: %s\n", interrupts, strerror((int)-ibytes));
			goto out;
		}
		held[r] = now_ms() - t0;
		intr[r] = now_ms() - t1;

		t0 = now_ms();
		for (size_t i = 0; i < n; i++) {
			long b = read_path(v[i].path);
			if (b < 0) {
				fprintf(stderr, "bench_readloop: %s: %s\n", v[i].path, strerror((int)-b));
				goto out;
			}
		}
		if (read_path(interrupts) < 0)
			goto out;
		opened[r] = now_ms() - t0;

		if ((par[r] = parallel_pass(v, n, interrupts, nthreads)) < 0) {
			fprintf(stderr, "bench_readloop: a parallel read failed\n");
			goto out;
		}
	}
	printf("{\"irqs\": %zu, \"files\": %zu, \"interrupts_bytes\": %ld, \"rounds\": %d, "
	       "\"held_ms\": %.3f, \"open_ms\": %.3f, \"interrupts_ms\": %.3f, "
	       "\"threads\": %d, \"parallel_ms\": %.3f}\n",
	       nn, n, ibytes, rounds, median(held, rounds), median(opened, rounds),
	       median(intr, rounds), nthreads, median(par, rounds));
	rc = 0;
out:
	closedir(d);
	for (size_t i = 0; i < n; i++)
		close(v[i].fd);
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	free(v);
	free(held);
	free(opened);
	free(intr);
	free(par);
	return rc;
}
