/* SPDX-License-Identifier: Apache-2.0 */
/* A small streaming JSON writer into one growing buffer, printing exactly
 * what jansson's json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS) prints
 * for the same document (the API's and the CLI's format), so a big
 * document (the host model of a 256-CPU host) is written without building
 * hundreds of thousands of small jansson objects first.
 *
 * The caller writes object members in sorted key order (strcmp), as
 * JSON_SORT_KEYS would. Strings that are not valid UTF-8 are ones jansson
 * refuses to hold (json_string returns NULL and the member is dropped):
 * nt_jw_utf8 says so beforehand. Out of memory is sticky: every call
 * after it does nothing and nt_jw_finish returns NULL. */
#ifndef NT_JSONW_H
#define NT_JSONW_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define NT_JW_MAX_DEPTH 32

typedef struct nt_jw {
	char *buf;
	size_t len, cap;
	int depth;
	bool has_items[NT_JW_MAX_DEPTH]; /* per open container: a member was written */
	bool after_key; /* the next value completes a member */
	bool oom;
} nt_jw;

void nt_jw_init(nt_jw *w);
/* The text, NUL-terminated and malloc'd (the caller frees it), with a
 * newline appended when NEWLINE; NULL when out of memory. *LEN gets its
 * length when LEN is not NULL. The writer is empty afterwards. */
char *nt_jw_finish(nt_jw *w, bool newline, size_t *len);
void nt_jw_free(nt_jw *w);

void nt_jw_obj(nt_jw *w); /* { */
void nt_jw_obj_end(nt_jw *w); /* } */
void nt_jw_arr(nt_jw *w); /* [ */
void nt_jw_arr_end(nt_jw *w); /* ] */
void nt_jw_key(nt_jw *w, const char *key); /* a member's key; its value follows */
void nt_jw_str(nt_jw *w, const char *s); /* S must be valid UTF-8 */
void nt_jw_int(nt_jw *w, long long v);
void nt_jw_bool(nt_jw *w, bool v);
void nt_jw_null(nt_jw *w);
/* Any jansson value, as json_dumps prints it (keys sorted). */
void nt_jw_json(nt_jw *w, const json_t *v);

/* Whether jansson would accept S as a string (valid UTF-8, no NUL). */
bool nt_jw_utf8(const char *s);

#endif
