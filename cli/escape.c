/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/escape.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at S (at most LEFT bytes), with
 * its code point in *CP; 0 when the bytes there are not one (overlong
 * forms, surrogates and values past U+10FFFF included). */
static size_t utf8_seq(const unsigned char *s, size_t left, uint32_t *cp)
{
	size_t n;
	uint32_t c, min;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, c = s[0] & 0x1f, min = 0x80;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, c = s[0] & 0x0f, min = 0x800;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, c = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (n > left)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

static bool bad_cp(uint32_t c)
{
	return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) ||
	       (c >= 0x2066 && c <= 0x2069);
}

/* Walks S, writing the escaped form into DST when it is not NULL; returns
 * the escaped length, and sets *CHANGED when anything was rewritten. */
static size_t escape_into(char *dst, const char *s, size_t len, bool *changed)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, out = 0;
	char tmp[8];
	while (i < len) {
		uint32_t c;
		size_t n = utf8_seq(p + i, len - i, &c);
		const char *w = NULL;
		size_t wn;
		if (n == 0) {
			snprintf(tmp, sizeof(tmp), "\\x%02x", p[i]);
			w = tmp, wn = 4, n = 1;
		} else if (c == '\t') {
			/* Kernel values separate fields with tabs (tcp_rmem reads
			 * "4096\t131072\t6291456"): a space shows them as an
			 * operator writes them, and moves no cursor. */
			w = " ", wn = 1;
		} else if (bad_cp(c)) {
			if (c < 0x80)
				snprintf(tmp, sizeof(tmp), "\\x%02x", (unsigned)c), wn = 4;
			else
				snprintf(tmp, sizeof(tmp), "\\u%04x", (unsigned)c), wn = 6;
			w = tmp;
		} else {
			w = s + i, wn = n;
		}
		if (w != s + i)
			*changed = true;
		if (dst)
			memcpy(dst + out, w, wn);
		out += wn;
		i += n;
	}
	return out;
}

bool nt_out_needs_escape(const char *s, size_t len)
{
	bool changed = false;
	escape_into(NULL, s, len, &changed);
	return changed;
}

char *nt_out_escape(const char *s, size_t len)
{
	bool changed = false;
	size_t n = escape_into(NULL, s, len, &changed);
	char *d = malloc(n + 1);
	if (!d)
		return NULL;
	escape_into(d, s, len, &changed);
	d[n] = '\0';
	return d;
}

char *nt_out_clip(char *dst, size_t size, const char *s, size_t max)
{
	size_t len = s ? strlen(s) : 0;
	if (!size)
		return dst;
	char *e = nt_out_escape(s ? s : "", len > max ? max : len);
	if (!e) {
		snprintf(dst, size, "(out of memory)");
		return dst;
	}
	if (len > max)
		snprintf(dst, size, "%s... (%zu bytes)", e, len);
	else
		snprintf(dst, size, "%s", e);
	free(e);
	return dst;
}

int nt_out_escape_doc(json_t *v)
{
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t len = json_string_length(v);
		if (!nt_out_needs_escape(s, len))
			return 0;
		char *e = nt_out_escape(s, len);
		int rc = e && json_string_set(v, e) == 0 ? 0 : -ENOMEM;
		free(e);
		return rc;
	}
	if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
			if (nt_out_escape_doc(x) < 0)
				return -ENOMEM;
		return 0;
	}
	if (!json_is_object(v))
		return 0;
	const char *key;
	json_t *x;
	void *tmp;
	json_object_foreach_safe(v, tmp, key, x) {
		if (nt_out_escape_doc(x) < 0)
			return -ENOMEM;
		if (!nt_out_needs_escape(key, strlen(key)))
			continue;
		/* A key with controls: moved under its escaped name (which
		 * could only clash with another key the agent sent escaped
		 * already; the later one wins, as for duplicate keys). */
		char *e = nt_out_escape(key, strlen(key)), *old = strdup(key);
		int rc = e && old && json_object_set(v, e, x) == 0 ? 0 : -ENOMEM;
		if (rc == 0)
			json_object_del(v, old);
		free(e);
		free(old);
		if (rc < 0)
			return rc;
	}
	return 0;
}
