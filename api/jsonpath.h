/* SPDX-License-Identifier: Apache-2.0 */
/* Where in a JSON text a byte offset lies, as a JSON path ("$.rings[0].rx",
 * "$.sysctl['net.core.rmem_max']"), so that an error a parser reports by
 * position (a duplicate key) can name the value the way validation errors
 * do. Pure: no allocation, any bytes accepted. */
#ifndef NT_API_JSONPATH_H
#define NT_API_JSONPATH_H

#include <stddef.h>

/* The path of the innermost value being read at OFFSET of TEXT (LEN bytes;
 * OFFSET past LEN means the end). Inside an object after a key, the path
 * names that key. Keys are written as they appear between the quotes
 * (escapes as sent), cut at 64 bytes; nesting past 32 levels is shown as
 * "...". Writes at most SIZE bytes into BUF, always NUL-terminated.
 * Returns the length written. */
size_t nt_json_path_at(const char *text, size_t len, size_t offset, char *buf, size_t size);

#endif
