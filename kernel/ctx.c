/* SPDX-License-Identifier: Apache-2.0 */
#include "kernel/ctx.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

int nt_ctx_init(nt_ctx *ctx, const char *root)
{
	char real[PATH_MAX];

	memset(ctx, 0, sizeof(*ctx));
	if (!root || !*root)
		root = "/";
	if (!realpath(root, real))
		return -errno;
	struct stat st;
	if (stat(real, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (strcmp(real, "/") == 0) {
		ctx->root[0] = '\0';
		ctx->live = true;
	} else {
		if (strlen(real) >= sizeof(ctx->root))
			return -ENAMETOOLONG;
		strcpy(ctx->root, real);
		ctx->live = false;
	}
	return 0;
}

static int vpath(const nt_ctx *ctx, char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t rl = strlen(ctx->root);
	if (rl >= size)
		return -ENAMETOOLONG;
	memcpy(buf, ctx->root, rl);
	int n = vsnprintf(buf + rl, size - rl, fmt, ap);
	if (n < 0 || (size_t)n >= size - rl)
		return -ENAMETOOLONG;
	return 0;
}

/* Whether the file open on FD lies under the root. Only fixture roots can
 * be escaped: a symlink planted in the tree (a directory on the way, since
 * the last component is never followed) could otherwise lead a read or a
 * write anywhere on the machine. The kernel's own name of the open file is
 * the one that counts, not the path that led to it. */
static int fd_under_root(const nt_ctx *ctx, int fd)
{
	char link[64], real[PATH_MAX];
	size_t rl = strlen(ctx->root);

	if (!rl)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, real, sizeof(real) - 1);
	if (n < 0)
		return -errno;
	real[n] = '\0';
	if (strncmp(real, ctx->root, rl) != 0 || (real[rl] != '/' && real[rl] != '\0'))
		return NT_EOUTSIDE;
	return 0;
}

/* The checks every opener makes of what it opened: of file type TYPE
 * (S_IFREG, S_IFDIR; 0: not checked) and, unless the open itself kept it
 * there (CHECKED), under the root. Returns FD, or closes it and returns
 * -errno / NT_EFILETYPE / NT_EOUTSIDE. */
static int vet_fd(const nt_ctx *ctx, int fd, mode_t type, bool checked)
{
	struct stat st;
	int r = 0;
	if (type && fstat(fd, &st) < 0)
		r = -errno;
	else if (type && (st.st_mode & S_IFMT) != type)
		r = NT_EFILETYPE;
	if (r == 0 && !checked)
		r = fd_under_root(ctx, fd);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* Whether PATH (the root and a relative part) has a ".." component. */
static bool has_dotdot(const char *path)
{
	for (const char *p = path; (p = strstr(p, "/..")); p += 3)
		if (p[3] == '/' || p[3] == '\0')
			return true;
	return false;
}

/* On a fixture root, open PATH refusing every symlink on the way: a path
 * without symlinks or "..", under a root that has none (nt_ctx_init
 * canonicalises it), names a file under the root, with no readlink of the
 * open file to check it. Returns the descriptor or -errno; -ELOOP (a
 * symlink on the way: sysfs trees have them), -ENOSYS or -EPERM (no
 * openat2 here) tell the caller to open it the general way. A bind mount
 * inside the tree would pass here; making one takes root, unlike planting
 * a symlink. */
static int open_no_symlinks(const char *path, int flags)
{
	struct open_how how = { .flags = (uint64_t)flags, .resolve = RESOLVE_NO_SYMLINKS };
	if (has_dotdot(path))
		return -ELOOP;
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

/* Open a kernel file (or its fixture stand-in) as the root says it is: the
 * last component is never a symlink, the open never blocks (a FIFO planted
 * as a target would hang a read or a write forever; with O_NONBLOCK its
 * open returns at once and it is refused below), and only regular files are
 * used (every /proc and /sys attribute is one). Returns the descriptor or
 * -errno / NT_EFILETYPE / NT_EOUTSIDE. */
static int open_kernel_file(const nt_ctx *ctx, const char *path, int flags)
{
	int oflags = flags | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK;
	int fd = -ELOOP;
	if (ctx->root[0])
		fd = open_no_symlinks(path, oflags);
	bool checked = fd >= 0;
	if (fd == -ELOOP || fd == -ENOSYS || fd == -EPERM) {
		fd = open(path, oflags);
		if (fd < 0)
			fd = -errno;
	}
	if (fd < 0) {
		/* O_NOFOLLOW on a symlink; ENXIO is a FIFO without a reader
		 * opened for writing. */
		return fd == -ELOOP || fd == -ENXIO ? NT_EFILETYPE : fd;
	}
	/* O_NONBLOCK stays on: it means nothing to a regular file, and
	 * procfs and sysfs attribute handlers never look at it, so taking it
	 * off would cost two calls a file for nothing. */
	return vet_fd(ctx, fd, S_IFREG, checked);
}

/* Open directory PATH (already under the root) for *at() calls. FOLLOW:
 * whether its last component may be a symlink (sysfs class links); without
 * it the directory is opened O_PATH, for writes by name beneath it. Either
 * way the directory must lie under the root, checked once here. */
static int dir_open(const nt_ctx *ctx, const char *path, bool follow)
{
	int flags = follow ? O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY :
			     O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	int fd = !follow && ctx->root[0] ? open_no_symlinks(path, flags) : -ELOOP;
	bool checked = fd >= 0;
	if (fd == -ELOOP || fd == -ENOSYS || fd == -EPERM) {
		fd = open(path, flags);
		if (fd < 0)
			fd = -errno;
	}
	if (fd < 0)
		return fd == -ENOTDIR ? NT_EFILETYPE : fd;
	/* O_PATH with O_NOFOLLOW would give a symlink itself: only a
	 * directory will do (O_DIRECTORY says so when following). */
	return vet_fd(ctx, fd, follow ? 0 : S_IFDIR, checked);
}

static int vdir_open(const nt_ctx *ctx, bool follow, const char *fmt, va_list ap)
{
	char path[PATH_MAX];
	int r = vpath(ctx, path, sizeof(path), fmt, ap);
	return r < 0 ? r : dir_open(ctx, path, follow);
}

int nt_open_dir(const nt_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vdir_open(ctx, false, fmt, ap);
	va_end(ap);
	return r;
}

int nt_path(const nt_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vpath(ctx, buf, size, fmt, ap);
	va_end(ap);
	return r;
}

/* The whole of a small file from FD into BUF, trailing newline and spaces
 * removed. AT0: read from offset 0 with pread, whatever the file position
 * (a descriptor kept open and read again: procfs and sysfs make the value
 * anew at offset 0). */
static int read_fd_value(int fd, char *buf, size_t size, bool at0)
{
	size_t len = 0;
	for (;;) {
		if (len + 1 >= size) {
			/* Full: is there more? */
			char c;
			ssize_t m = at0 ? pread(fd, &c, 1, (off_t)len) : read(fd, &c, 1);
			if (m > 0)
				return -EFBIG;
			if (m < 0 && errno == EINTR)
				continue;
			break;
		}
		ssize_t n = at0 ? pread(fd, buf + len, size - 1 - len, (off_t)len) :
				  read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		/* sysfs and procfs attributes hand over their whole value in
		 * one read, and a short read of a regular file is its end:
		 * skip the read() that would only return 0. */
		if (len + 1 < size)
			break;
	}
	buf[len] = '\0';
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	return (int)len;
}

int nt_pread_value(int fd, char *buf, size_t size)
{
	if (size == 0)
		return -EINVAL;
	int r = read_fd_value(fd, buf, size, true);
	if (r < 0)
		buf[0] = '\0';
	return r;
}

static int vread_str(const nt_ctx *ctx, char *buf, size_t size, const char *fmt, va_list ap)
{
	char path[PATH_MAX];
	int r = vpath(ctx, path, sizeof(path), fmt, ap);
	if (r < 0)
		return r;
	if (size == 0)
		return -EINVAL;
	int fd = open_kernel_file(ctx, path, O_RDONLY);
	if (fd < 0) {
		buf[0] = '\0';
		return fd;
	}
	r = read_fd_value(fd, buf, size, false);
	close(fd);
	if (r < 0)
		buf[0] = '\0';
	return r;
}

int nt_read_str(const nt_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vread_str(ctx, buf, size, fmt, ap);
	va_end(ap);
	return r;
}

int nt_read_all(const nt_ctx *ctx, char **out, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	char *buf = NULL;
	size_t cap = 0, len = 0;
	int r, fd;

	*out = NULL;
	va_start(ap, fmt);
	r = vpath(ctx, path, sizeof(path), fmt, ap);
	va_end(ap);
	if (r < 0)
		return r;
	fd = open_kernel_file(ctx, path, O_RDONLY);
	if (fd < 0)
		return fd;
	/* /proc files report size 0, so grow as we go. */
	cap = 64 * 1024;
	buf = malloc(cap);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	for (;;) {
		if (len + 1 >= cap) {
			if (cap >= (size_t)INT_MAX / 2) {
				r = -EFBIG;
				goto out;
			}
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				r = -ENOMEM;
				goto out;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*out = buf;
	buf = NULL;
	r = (int)len;
out:
	free(buf);
	close(fd);
	return r;
}

static int parse_long(const char *buf, long *out);

int nt_open_read(const nt_ctx *ctx, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int r = vpath(ctx, path, sizeof(path), fmt, ap);
	va_end(ap);
	if (r < 0)
		return r;
	return open_kernel_file(ctx, path, O_RDONLY);
}

int nt_read_long(const nt_ctx *ctx, long *out, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	va_start(ap, fmt);
	int r = vread_str(ctx, buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (r < 0)
		return r;
	return parse_long(buf, out);
}

static int parse_long(const char *buf, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(buf, &end, 0);
	if (errno || end == buf)
		return NT_EPARSE;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return NT_EPARSE;
	*out = v;
	return 0;
}

/* Write all of VALUE to FD. Returns 0 or -errno. */
static int write_all(int fd, const char *value)
{
	size_t len = strlen(value), done = 0;
	while (done < len) {
		ssize_t n = write(fd, value + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

/* A fixture file is replaced in one step (NAME.nt-new beside it, then
 * rename), so an agent killed in the middle of a write leaves the old value
 * or the new one, never an empty file, as a kernel attribute would. FD is
 * the checked target; the new file goes next to the name the kernel gives
 * it, not next to the path that led there. A kill before the rename can
 * leave NAME.nt-new behind (the only litter possible); the next write of
 * NAME reuses it. */
static int write_fixture(int fd, const char *value)
{
	char link[64], real[PATH_MAX], tmp[PATH_MAX];
	struct stat st, tst;
	int tfd = -1, r;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, real, sizeof(real) - 1);
	if (n < 0)
		return -errno;
	real[n] = '\0';
	if (fstat(fd, &st) < 0)
		return -errno;
	if (snprintf(tmp, sizeof(tmp), "%s.nt-new", real) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	tfd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK,
		   st.st_mode & 07777);
	if (tfd < 0)
		return errno == ELOOP || errno == ENXIO ? NT_EFILETYPE : -errno;
	if (fstat(tfd, &tst) < 0 || !S_ISREG(tst.st_mode)) {
		close(tfd);
		return NT_EFILETYPE; /* not ours to remove */
	}
	if ((r = write_all(tfd, value)) < 0)
		goto fail;
	if (fchmod(tfd, st.st_mode & 07777) < 0) {
		r = -errno;
		goto fail;
	}
	if (close(tfd) < 0) {
		tfd = -1;
		r = -errno;
		goto fail;
	}
	tfd = -1;
	if (rename(tmp, real) < 0) {
		r = -errno;
		goto fail;
	}
	return 0;
fail:
	if (tfd >= 0)
		close(tfd);
	unlink(tmp);
	return r;
}

/* Write VALUE to PATH (under the root already); with BUF, read the file
 * back into it as well (see nt_write_read_str). */
static int write_path(const nt_ctx *ctx, const char *path, const char *value, char *buf, size_t size,
		      int *read_r)
{
	int r;
	/* Never O_TRUNC: on a fixture the target is replaced whole
	 * (write_fixture), and kernel attribute files ignore it. */
	int fd = open_kernel_file(ctx, path, buf && ctx->live ? O_RDWR : O_WRONLY);
	if (fd < 0)
		return fd;
	if (!ctx->live) {
		r = write_fixture(fd, value);
		close(fd);
		/* The file was replaced: FD reads the old one. */
		if (r == 0 && buf) {
			int rfd = open_kernel_file(ctx, path, O_RDONLY);
			*read_r = rfd < 0 ? rfd : read_fd_value(rfd, buf, size, true);
			if (rfd >= 0)
				close(rfd);
		}
		return r;
	}
	/* One write() is one value to a kernel attribute: a short write is
	 * an error, never continued (the rest would be a second value). */
	size_t len = strlen(value);
	ssize_t n;
	do {
		n = write(fd, value, len);
	} while (n < 0 && errno == EINTR);
	r = 0;
	if (n < 0)
		r = -errno;
	else if ((size_t)n != len)
		r = -EIO;
	/* A read at offset 0 makes the value anew (as held files rely on). */
	if (r == 0 && buf)
		*read_r = read_fd_value(fd, buf, size, true);
	/* sysfs/procfs report some errors only at close. */
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

int nt_write_str(const nt_ctx *ctx, const char *value, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int r = vpath(ctx, path, sizeof(path), fmt, ap);
	va_end(ap);
	if (r < 0)
		return r;
	return write_path(ctx, path, value, NULL, 0, NULL);
}

int nt_write_read_str(const nt_ctx *ctx, const char *value, char *buf, size_t size, int *read_r,
		      const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	if (size == 0 || !read_r)
		return -EINVAL;
	buf[0] = '\0';
	*read_r = -EIO;
	va_start(ap, fmt);
	int r = vpath(ctx, path, sizeof(path), fmt, ap);
	va_end(ap);
	if (r < 0)
		return r;
	r = write_path(ctx, path, value, buf, size, read_r);
	if (*read_r < 0)
		buf[0] = '\0';
	return r;
}

int nt_readlink(const nt_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int r = vpath(ctx, path, sizeof(path), fmt, ap);
	va_end(ap);
	if (r < 0)
		return r;
	ssize_t n = readlink(path, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

int nt_resolve(const nt_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
{
	char path[PATH_MAX], real[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int r = vpath(ctx, path, sizeof(path), fmt, ap);
	va_end(ap);
	if (r < 0)
		return r;
	/* realpath() fails with ELOOP on loops (the kernel bounds the walk). */
	if (!realpath(path, real))
		return -errno;
	size_t rl = strlen(ctx->root);
	if (rl && (strncmp(real, ctx->root, rl) != 0 || (real[rl] != '/' && real[rl] != '\0')))
		return -EXDEV; /* a link that leaves the fixture tree */
	const char *rel = real + rl;
	if (!*rel)
		rel = "/";
	if (strlen(rel) >= size)
		return -ENAMETOOLONG;
	strcpy(buf, rel);
	return (int)strlen(rel);
}

bool nt_exists(const nt_ctx *ctx, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int r = vpath(ctx, path, sizeof(path), fmt, ap);
	va_end(ap);
	if (r < 0)
		return false;
	return access(path, F_OK) == 0;
}

int nt_dir_open(const nt_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* The directory itself is checked once; what is opened beneath it
	 * stays beneath it (nt_read_at). */
	int r = vdir_open(ctx, true, fmt, ap);
	va_end(ap);
	return r;
}

/* REL must stay below the directory: relative, and no ".." component. */
static bool rel_name_ok(const char *rel)
{
	if (!*rel || *rel == '/')
		return false;
	for (const char *p = rel; *p;) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 0 || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p == '/')
			p++;
	}
	return true;
}

/* Open REL beneath DIRFD for reading with the same rules as
 * open_kernel_file. openat2's RESOLVE_BENEATH lets the kernel refuse any
 * way out of the directory (a "..", an absolute symlink, a symlink leading
 * up), so the /proc/self/fd check a full path needs is done once per
 * directory instead of once per file. Kernels before 5.6 take the slow
 * path. */
static int open_at(const nt_ctx *ctx, int dirfd, const char *rel, int access)
{
	int flags = access | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK;
	int fd;
	bool checked = false;

	if (!rel_name_ok(rel))
		return -EINVAL;
#ifdef SYS_openat2
	struct open_how how = { .flags = (uint64_t)flags,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS };
	fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
	if (fd >= 0)
		checked = true;
	else if (errno == EXDEV)
		return NT_EOUTSIDE;
	else if (errno != ENOSYS)
		return errno == ELOOP || errno == ENXIO ? NT_EFILETYPE : -errno;
	else
#endif
		fd = openat(dirfd, rel, flags);
	if (fd < 0)
		return errno == ELOOP || errno == ENXIO ? NT_EFILETYPE : -errno;
	return vet_fd(ctx, fd, S_IFREG, checked);
}

int nt_open_at(const nt_ctx *ctx, int dirfd, const char *rel)
{
	return open_at(ctx, dirfd, rel, O_RDONLY);
}

int nt_open_rw_at(const nt_ctx *ctx, int dirfd, const char *rel)
{
	return open_at(ctx, dirfd, rel, O_RDWR);
}

int nt_read_at(const nt_ctx *ctx, int dirfd, const char *rel, char *buf, size_t size)
{
	if (size == 0)
		return -EINVAL;
	buf[0] = '\0';
	int fd = nt_open_at(ctx, dirfd, rel);
	if (fd < 0)
		return fd;
	int r = read_fd_value(fd, buf, size, false);
	close(fd);
	if (r < 0)
		buf[0] = '\0';
	return r;
}

int nt_read_long_at(const nt_ctx *ctx, int dirfd, const char *rel, long *out)
{
	char buf[64];
	int r = nt_read_at(ctx, dirfd, rel, buf, sizeof(buf));
	if (r < 0)
		return r;
	return parse_long(buf, out);
}

bool nt_ifname_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (n == 0 || n > 15)
		return false;
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		/* The kernel (dev_valid_name) refuses only '/', ':' and
		 * whitespace; bytes from 0x7f up are names it allows (a bidi
		 * override, any UTF-8), so they are kept and shown escaped.
		 * Control bytes stay refused here: no path or log line needs
		 * them. */
		if (c <= 0x20 || c == '/' || c == ':')
			return false;
	}
	return true;
}
