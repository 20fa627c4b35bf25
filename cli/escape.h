/* SPDX-License-Identifier: Apache-2.0 */
/* What the CLI shows of an agent's strings: text only. An agent's answer
 * (or whoever sits between it and the CLI on plain HTTP) could otherwise
 * put terminal controls in a profile name, an error or a NIC name: an OSC
 * that retitles the window, a clear screen, cursor moves that overwrite a
 * "rollback_failed" line, an 8-bit CSI, or a bidi override that shows a
 * line reversed. Every string of a reply is passed through
 * nt_out_escape_doc before a renderer (cli/txn_view.c, cli/output.c,
 * cli/cmd_txn.c) sees it; --json output stays byte for byte. */
#ifndef NT_CLI_ESCAPE_H
#define NT_CLI_ESCAPE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Whether the LEN bytes at S hold anything nt_out_escape rewrites. */
bool nt_out_needs_escape(const char *s, size_t len);

/* The LEN bytes at S with a tab shown as a space (kernel values such as
 * tcp_rmem separate their fields with tabs), every other C0 control
 * (newline included: an agent's string is one line of a table or a
 * message, never layout) and DEL written "\x1b", every C1 control (U+0080-U+009F) and bidi
 * embedding, override or isolate (U+202A-U+202E, U+2066-U+2069) written
 * "\u202e", and every byte that is not part of valid UTF-8 written
 * "\xff". Anything else is copied, so ordinary text prints as it came.
 * Returns a new NUL-terminated string the caller frees, or NULL when out
 * of memory. Pure. */
char *nt_out_escape(const char *s, size_t len);

/* S as an error message quotes a value someone gave: escaped as above
 * and, past MAX bytes, cut to its first MAX with "... (N bytes)" after
 * (a 5,000-character value is not echoed whole). Into DST; returns DST. */
#define NT_OUT_CLIP_DEFAULT 64
char *nt_out_clip(char *dst, size_t size, const char *s, size_t max);

/* Every string in DOC, object keys included, replaced by its
 * nt_out_escape form, in place. Returns 0 or -ENOMEM. */
int nt_out_escape_doc(json_t *doc);

#endif
