/* SPDX-License-Identifier: Apache-2.0 */
#include "host/jsonw.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void nt_jw_init(nt_jw *w)
{
	memset(w, 0, sizeof(*w));
}

void nt_jw_free(nt_jw *w)
{
	free(w->buf);
	nt_jw_init(w);
}

/* Out of line and cold, so that the small writers below, which test for
 * room at every byte they put, are inlined where they are called. */
__attribute__((noinline, cold)) static bool grow(nt_jw *w, size_t n)
{
	if (w->oom)
		return false;
	size_t cap = w->cap ? w->cap : 4096;
	while (w->len + n + 1 > cap)
		cap *= 2;
	char *nb = realloc(w->buf, cap);
	if (!nb) {
		w->oom = true;
		return false;
	}
	w->buf = nb;
	w->cap = cap;
	return true;
}

/* Room for N more bytes and a NUL: the test inlined at every write, the
 * growing (rare) out of line. */
static inline bool reserve(nt_jw *w, size_t n)
{
	if (__builtin_expect(!w->oom && w->len + n + 1 <= w->cap, 1))
		return true;
	return grow(w, n);
}

static inline void put(nt_jw *w, const char *s, size_t n)
{
	if (!reserve(w, n))
		return;
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static inline void putc_(nt_jw *w, char c)
{
	if (!reserve(w, 1))
		return;
	w->buf[w->len++] = c;
}

/* jansson's dump_indent with JSON_INDENT(2): a newline and two spaces per
 * level, the spaces put eight at a time (room for the last eight's
 * overshoot reserved too): a host read writes one per member. */
static inline void newline_indent(nt_jw *w, int depth)
{
	size_t n = 2 * (size_t)depth;
	if (!reserve(w, 1 + n + 8))
		return;
	char *o = w->buf + w->len;
	*o++ = '\n';
	for (size_t k = 0; k < n; k += 8)
		memcpy(o + k, "        ", 8);
	w->len += 1 + n;
}

/* Before a value: inside an array it is an element (separator and
 * indentation first); after a key, nothing. */
static inline void before_value(nt_jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth > 0) {
		if (w->has_items[w->depth - 1])
			putc_(w, ',');
		newline_indent(w, w->depth);
		w->has_items[w->depth - 1] = true;
	}
}

static void open_(nt_jw *w, char c)
{
	before_value(w);
	putc_(w, c);
	if (w->depth >= NT_JW_MAX_DEPTH) {
		w->oom = true; /* deeper than any document written here */
		return;
	}
	w->has_items[w->depth++] = false;
}

static void close_(nt_jw *w, char c)
{
	if (w->depth <= 0) {
		w->oom = true;
		return;
	}
	w->depth--;
	if (w->has_items[w->depth])
		newline_indent(w, w->depth);
	putc_(w, c);
}

void nt_jw_obj(nt_jw *w)
{
	open_(w, '{');
}

void nt_jw_obj_end(nt_jw *w)
{
	close_(w, '}');
}

void nt_jw_arr(nt_jw *w)
{
	open_(w, '[');
}

void nt_jw_arr_end(nt_jw *w)
{
	close_(w, ']');
}

/* Whether any of the eight bytes of X needs an escape: below 0x20, '"' or
 * '\\' (the classic has-less and has-zero word tests). */
static inline bool word_needs_escape(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
	uint64_t low = (x - ones * 0x20) & ~x, zq = (q - ones) & ~q, zb = (b - ones) & ~b;
	return ((low | zq | zb) & highs) != 0;
}

static void put_string(nt_jw *w, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	/* Room for the worst case at once (every byte a \u00XX), then
	 * written straight into the buffer: a host read writes tens of
	 * thousands of keys and names. */
	size_t n = strlen(s);
	if (!reserve(w, 6 * n + 2))
		return;
	char *o = w->buf + w->len;
	const char *p = s, *end = s + n;
	*o++ = '"';
	/* Eight bytes at a time while none needs an escape (keys and names
	 * rarely hold any), within the string's own bytes. */
	while (end - p >= 8) {
		uint64_t x;
		memcpy(&x, p, 8);
		if (word_needs_escape(x))
			break;
		memcpy(o, &x, 8);
		o += 8;
		p += 8;
	}
	for (; p < end; p++) {
		unsigned char c = (unsigned char)*p;
		if (c >= 0x20 && c != '"' && c != '\\') {
			*o++ = (char)c;
			continue;
		}
		*o++ = '\\';
		switch (c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '\b': *o++ = 'b'; break;
		case '\f': *o++ = 'f'; break;
		case '\n': *o++ = 'n'; break;
		case '\r': *o++ = 'r'; break;
		case '\t': *o++ = 't'; break;
		default:
			memcpy(o, "u00", 3);
			o[3] = hex[c >> 4];
			o[4] = hex[c & 15];
			o += 5;
		}
	}
	*o++ = '"';
	w->len = (size_t)(o - w->buf);
}

void nt_jw_key(nt_jw *w, const char *key)
{
	if (w->depth > 0) {
		if (w->has_items[w->depth - 1])
			putc_(w, ',');
		newline_indent(w, w->depth);
		w->has_items[w->depth - 1] = true;
	}
	put_string(w, key);
	put(w, ": ", 2);
	w->after_key = true;
}

void nt_jw_str(nt_jw *w, const char *s)
{
	before_value(w);
	put_string(w, s);
}

void nt_jw_int(nt_jw *w, long long v)
{
	char d[24];
	int n = 0;
	/* Digits by hand: the writer's hot path on a big host, no vfprintf. */
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	do {
		d[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		d[n++] = '-';
	before_value(w);
	if (!reserve(w, (size_t)n))
		return;
	while (n > 0)
		w->buf[w->len++] = d[--n];
}

void nt_jw_bool(nt_jw *w, bool v)
{
	before_value(w);
	if (v)
		put(w, "true", 4);
	else
		put(w, "false", 5);
}

void nt_jw_null(nt_jw *w)
{
	before_value(w);
	put(w, "null", 4);
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void nt_jw_json(nt_jw *w, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		size_t n = json_object_size(v), i = 0;
		const char **keys = n ? malloc(sizeof(*keys) * n) : NULL;
		const char *k;
		json_t *m;
		if (n && !keys) {
			w->oom = true;
			return;
		}
		json_object_foreach((json_t *)v, k, m)
			keys[i++] = k;
		if (n)
			qsort(keys, n, sizeof(*keys), cmp_key);
		nt_jw_obj(w);
		for (i = 0; i < n; i++) {
			nt_jw_key(w, keys[i]);
			nt_jw_json(w, json_object_get(v, keys[i]));
		}
		nt_jw_obj_end(w);
		free(keys);
		break;
	}
	case JSON_ARRAY:
		nt_jw_arr(w);
		for (size_t i = 0; i < json_array_size(v); i++)
			nt_jw_json(w, json_array_get(v, i));
		nt_jw_arr_end(w);
		break;
	case JSON_STRING:
		nt_jw_str(w, json_string_value(v));
		break;
	case JSON_INTEGER:
		nt_jw_int(w, (long long)json_integer_value(v));
		break;
	case JSON_TRUE:
		nt_jw_bool(w, true);
		break;
	case JSON_FALSE:
		nt_jw_bool(w, false);
		break;
	case JSON_REAL: {
		/* Rare (no member of the host model is one): jansson's own text. */
		char *s = json_dumps(v, JSON_ENCODE_ANY);
		before_value(w);
		if (!s) {
			w->oom = true;
			return;
		}
		put(w, s, strlen(s));
		free(s);
		break;
	}
	default:
		nt_jw_null(w);
		break;
	}
}

char *nt_jw_finish(nt_jw *w, bool newline, size_t *len)
{
	if (newline)
		putc_(w, '\n');
	if (!reserve(w, 0) || w->depth != 0) {
		nt_jw_free(w);
		return NULL;
	}
	w->buf[w->len] = '\0';
	char *out = w->buf;
	if (len)
		*len = w->len;
	nt_jw_init(w);
	return out;
}

bool nt_jw_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned c = *p;
		size_t n;
		uint32_t cp;
		if (c < 0x80) {
			p++;
			continue;
		} else if ((c & 0xE0) == 0xC0) {
			n = 2;
			cp = c & 0x1F;
		} else if ((c & 0xF0) == 0xE0) {
			n = 3;
			cp = c & 0x0F;
		} else if ((c & 0xF8) == 0xF0) {
			n = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		for (size_t i = 1; i < n; i++) {
			if ((p[i] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i] & 0x3F);
		}
		/* jansson's utf8_check_full: no overlong forms, no surrogates,
		 * nothing above U+10FFFF. */
		if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
		    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		p += n;
	}
	return true;
}
