/* SPDX-License-Identifier: Apache-2.0 */
#include "base/errors.h"

#include <string.h>

const char *nt_strerror(int err)
{
	switch (err) {
	case 0: return "success";
	case NT_EPARSE: return "unexpected format";
	case NT_ENOTFOUND: return "not found";
	case NT_EINVALID: return "invalid request";
	case NT_ECONFLICT: return "conflict";
	case NT_ESTORE: return "store error";
	case NT_EFILETYPE: return "not a regular file (a symlink, FIFO, device or directory)";
	case NT_EOUTSIDE: return "resolves outside the host root";
	case NT_ETAKEN: return "held by another program";
	default: break;
	}
	if (err < 0 && err > -4096)
		return strerror(-err);
	return "unknown error";
}
