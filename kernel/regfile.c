/* SPDX-License-Identifier: Apache-2.0 */
/* Operator-named files, opened without blocking and only when regular
 * (kernel/regfile.h). */
#include "kernel/regfile.h"
#include "kernel/ctx.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "a device";
	return "not a regular file";
}

/* WHY = PATH then FMT. */
__attribute__((format(printf, 4, 5))) static void say(char *why, size_t whysize,
						      const char *path, const char *fmt, ...)
{
	if (!why || !whysize)
		return;
	int n = snprintf(why, whysize, "%s", path);
	if (n >= 0 && (size_t)n < whysize) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why + n, whysize - (size_t)n, fmt, ap);
		va_end(ap);
	}
}

int nt_regfile_open(const char *path, struct stat *st, char *why, size_t whysize)
{
	struct stat own;
	if (!st)
		st = &own;
	/* O_NONBLOCK: opening a FIFO without a writer returns at once (and a
	 * read of it would not wait); it is refused below. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		int r = -errno;
		struct stat lst;
		if (r == -ENOENT && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
			say(why, whysize, path, " %s", "is a symlink to nothing (dangling)");
		else
			say(why, whysize, path, ": %s", strerror(-r));
		return r;
	}
	if (fstat(fd, st) < 0) {
		int r = -errno;
		say(why, whysize, path, ": %s", strerror(-r));
		close(fd);
		return r;
	}
	/* The null device (1:3) is the usual way to say "an empty file"
	 * (`--config /dev/null`: no configuration), and never blocks. */
	if (S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 && minor(st->st_rdev) == 3)
		return fd;
	if (!S_ISREG(st->st_mode)) {
		if (S_ISFIFO(st->st_mode) || S_ISDIR(st->st_mode) || S_ISSOCK(st->st_mode) ||
		    S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
			say(why, whysize, path, " is %s, not a regular file", kind_of(st->st_mode));
		else
			say(why, whysize, path, " is %s", kind_of(st->st_mode));
		close(fd);
		return NT_EFILETYPE;
	}
	return fd;
}

int nt_regfile_read(const char *path, size_t max, char **buf, size_t *len, char *why,
		    size_t whysize)
{
	struct stat st;
	char *b = NULL;
	size_t n = 0, cap;
	int r;

	*buf = NULL;
	*len = 0;
	int fd = nt_regfile_open(path, &st, why, whysize);
	if (fd < 0)
		return fd;
	/* st_size is a hint (the file may grow while read): the loop below
	 * still stops after MAX + 1 bytes. */
	if (st.st_size > 0 && (size_t)st.st_size > max)
		goto too_big;
	cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
	if (cap > max + 1)
		cap = max + 1;
	/* CAP bytes of data and the NUL. */
	if (!(b = malloc(cap + 1))) {
		r = -ENOMEM;
		say(why, whysize, path, ": %s", strerror(ENOMEM));
		goto fail;
	}
	for (;;) {
		if (n == cap) {
			size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			char *nb = realloc(b, ncap + 1);
			if (!nb) {
				r = -ENOMEM;
				say(why, whysize, path, ": %s", strerror(ENOMEM));
				goto fail;
			}
			b = nb;
			cap = ncap;
		}
		ssize_t got = read(fd, b + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = -errno;
			say(why, whysize, path, ": %s", strerror(-r));
			goto fail;
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > max)
			goto too_big;
	}
	close(fd);
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
too_big:
	say(why, whysize, path, " is larger than %zu bytes, the limit for this file", max);
	r = -EFBIG;
fail:
	/* Key files are read this way too: what was read does not stay in
	 * freed memory. */
	if (b)
		explicit_bzero(b, n);
	free(b);
	close(fd);
	return r;
}
