/* SPDX-License-Identifier: Apache-2.0 */
/* The project's error convention: 0 or a negative errno, and domain errors
 * in their own range below the errno values (as Knot's KNOT_E*), with one
 * strerror for both. Every layer returns these, so they live in base/. */
#ifndef NT_ERRORS_H
#define NT_ERRORS_H

/* Domain errors, in their own range below -errno values. */
enum {
	NT_EPARSE = -1000, /* a kernel file or input did not have the expected form */
	NT_ENOTFOUND = -1001, /* a named object (NIC, IRQ, profile) does not exist */
	NT_EINVALID = -1002, /* a request failed validation */
	NT_ECONFLICT = -1003, /* another transaction holds or changed the target */
	NT_ESTORE = -1004, /* the SQLite store could not record */
	NT_EFILETYPE = -1005, /* a kernel file is a symlink, FIFO, device or directory */
	NT_EOUTSIDE = -1006, /* a path under a fixture root leads outside it */
	NT_ETAKEN = -1007, /* the target holds a value another program put there */
};

const char *nt_strerror(int err);

#endif
