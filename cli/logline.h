/* SPDX-License-Identifier: Apache-2.0 */
/* The serve log's lines, formatted without stdio: the agent writes one per
 * transaction step, a thousand in an apply, and a chain of fprintf calls per
 * field cost more than the rest of the line. Pure: the text is built in a
 * buffer the caller writes with one call.
 *
 * Text: "TS EVENT key=value ...", every key of the event but "event" in its
 * order; a string as it is, or JSON-quoted (ASCII) when it is empty or holds
 * a space, quote, backslash, '=', a control or non-ASCII byte; a real as
 * %.3f; anything else as compact JSON. JSON: the event compact, ASCII, reals
 * with 9 digits, with "ts" added last. */
#ifndef NT_CLI_LOGLINE_H
#define NT_CLI_LOGLINE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct nt_linebuf {
	char *p;
	size_t len, cap;
	bool heap; /* p was allocated here (else the caller's storage) */
	bool failed; /* out of memory: the line is incomplete */
} nt_linebuf;

/* Start B on the caller's STORAGE of SIZE bytes; it grows on the heap when
 * a line needs more. nt_linebuf_free gives that back. */
void nt_linebuf_init(nt_linebuf *b, char *storage, size_t size);
void nt_linebuf_free(nt_linebuf *b);
void nt_linebuf_add(nt_linebuf *b, const char *s, size_t n);


/* Append EV's line (no newline) stamped WHEN to B. Returns 0, or -ENOMEM
 * (B->failed) when the line could not be built whole. */
int nt_log_format(nt_linebuf *b, const json_t *ev, const char *when, bool as_json);

#endif
