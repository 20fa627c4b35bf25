/* SPDX-License-Identifier: Apache-2.0 */
/* Counting this process's open descriptors: a live test's check that a
 * read or a handle leaves no socket behind. */
#ifndef NT_TEST_LIVE_FDS_H
#define NT_TEST_LIVE_FDS_H

#include <dirent.h>

/* The descriptors this process has open (the directory's own included,
 * the same in every count). */
static inline int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;
	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

#endif
