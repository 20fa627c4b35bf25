/* SPDX-License-Identifier: Apache-2.0 */
/* kernel/regfile.c: operator-named files are read only when regular, never
 * block on a FIFO, and are refused past their limit (exactly MAX bytes is
 * read; MAX + 1 is -EFBIG), each refusal naming the file. */
#include "kernel/ctx.h"
#include "kernel/regfile.h"
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void write_n(const char *path, size_t n)
{
	FILE *f = fopen(path, "w");
	for (size_t i = 0; f && i < n; i++)
		fputc('x', f);
	if (f)
		fclose(f);
}

int main(void)
{
	char dir[] = "/tmp/nt-regfile-XXXXXX", p[PATH_MAX], why[PATH_MAX + 128], *buf = NULL;
	size_t len = 0;
	if (!mkdtemp(dir))
		SKIP("mkdtemp");

	/* A FIFO without a writer: refused at once, not waited on. */
	snprintf(p, sizeof(p), "%s/fifo", dir);
	CHECK_INT(mkfifo(p, 0600), 0);
	time_t t0 = time(NULL);
	CHECK_INT(nt_regfile_read(p, 100, &buf, &len, why, sizeof(why)), NT_EFILETYPE);
	CHECK(time(NULL) - t0 < 2);
	CHECK(strstr(why, p) && strstr(why, "is a FIFO, not a regular file"));
	CHECK(buf == NULL);

	/* The null device reads as an empty file (`--config /dev/null`);
	 * another character device is refused. */
	CHECK_INT(nt_regfile_read("/dev/null", 100, &buf, &len, why, sizeof(why)), 0);
	CHECK(buf && len == 0 && buf[0] == '\0');
	free(buf);
	buf = NULL;
	CHECK_INT(nt_regfile_read("/dev/zero", 100, &buf, &len, why, sizeof(why)), NT_EFILETYPE);
	CHECK(strstr(why, "/dev/zero") && strstr(why, "not a regular file"));

	/* A directory, a dangling symlink, a missing file. */
	CHECK_INT(nt_regfile_read(dir, 100, &buf, &len, why, sizeof(why)), NT_EFILETYPE);
	CHECK(strstr(why, "is a directory"));
	snprintf(p, sizeof(p), "%s/dangling", dir);
	CHECK_INT(symlink("/nonexistent/nt-regfile", p), 0);
	CHECK_INT(nt_regfile_read(p, 100, &buf, &len, why, sizeof(why)), -ENOENT);
	CHECK(strstr(why, "dangling"));
	snprintf(p, sizeof(p), "%s/missing", dir);
	CHECK_INT(nt_regfile_read(p, 100, &buf, &len, why, sizeof(why)), -ENOENT);
	CHECK(strstr(why, "No such file"));

	/* The limit: MAX bytes read whole and NUL-terminated, MAX + 1 refused;
	 * an empty file reads as "". */
	snprintf(p, sizeof(p), "%s/max", dir);
	write_n(p, 5000);
	CHECK_INT(nt_regfile_read(p, 5000, &buf, &len, why, sizeof(why)), 0);
	CHECK_INT(len, 5000);
	CHECK(buf && buf[4999] == 'x' && buf[5000] == '\0');
	free(buf);
	CHECK_INT(nt_regfile_read(p, 4999, &buf, &len, why, sizeof(why)), -EFBIG);
	CHECK(strstr(why, p) && strstr(why, "larger than 4999 bytes"));
	CHECK(buf == NULL);
	write_n(p, 0);
	CHECK_INT(nt_regfile_read(p, 10, &buf, &len, why, sizeof(why)), 0);
	CHECK(buf && len == 0 && buf[0] == '\0');
	free(buf);

	/* A symlink to a regular file is followed. */
	char link[PATH_MAX + 8];
	snprintf(link, sizeof(link), "%s/link", dir);
	write_n(p, 3);
	CHECK_INT(symlink(p, link), 0);
	CHECK_INT(nt_regfile_read(link, 10, &buf, &len, why, sizeof(why)), 0);
	CHECK_INT(len, 3);
	free(buf);

	/* nt_regfile_open gives the descriptor and the stat. */
	struct stat st;
	int fd = nt_regfile_open(p, &st, why, sizeof(why));
	CHECK(fd >= 0 && st.st_size == 3);
	if (fd >= 0)
		close(fd);

	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	TEST_MAIN_END();
}
