/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/logline.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nt_linebuf_init(nt_linebuf *b, char *storage, size_t size)
{
	memset(b, 0, sizeof(*b));
	b->p = storage;
	b->cap = size;
}

void nt_linebuf_free(nt_linebuf *b)
{
	if (b->heap)
		free(b->p);
	memset(b, 0, sizeof(*b));
}

static bool grow(nt_linebuf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	char *p = b->heap ? realloc(b->p, cap) : malloc(cap);
	if (!p) {
		b->failed = true;
		return false;
	}
	if (!b->heap && b->len)
		memcpy(p, b->p, b->len);
	b->p = p;
	b->cap = cap;
	b->heap = true;
	return true;
}

void nt_linebuf_add(nt_linebuf *b, const char *s, size_t n)
{
	/* One byte more than the text, so the caller may end it with '\0'
	 * or '\n' without growing. */
	if (b->failed || (b->len + n + 1 > b->cap && !grow(b, b->len + n + 1)))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void add_str(nt_linebuf *b, const char *s)
{
	nt_linebuf_add(b, s, strlen(s));
}

static int dump_cb(const char *buf, size_t size, void *data)
{
	nt_linebuf *b = data;
	nt_linebuf_add(b, buf, size);
	return b->failed ? -1 : 0;
}

/* Append V as JSON dumped with FLAGS; FALLBACK instead when it cannot be
 * dumped (what json_dumps returning NULL printed before). */
static void add_json(nt_linebuf *b, const json_t *v, size_t flags, const char *fallback)
{
	size_t mark = b->len;
	if (json_dump_callback(v, dump_cb, b, flags) < 0 && !b->failed) {
		b->len = mark;
		add_str(b, fallback);
	}
}

static void add_int(nt_linebuf *b, json_int_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	/* Unsigned, so that the most negative value has a magnitude too. */
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	nt_linebuf_add(b, p, (size_t)(buf + sizeof(buf) - p));
}

static bool needs_quotes(const char *v)
{
	if (!*v)
		return true;
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == '"' || *p == '\\' || *p == '=')
			return true;
	return false;
}

static void add_value(nt_linebuf *b, const json_t *val)
{
	/* %.3f of the largest double: 309 digits, a sign, a point and 3. */
	char num[320];
	switch (json_typeof(val)) {
	case JSON_STRING: {
		const char *v = json_string_value(val);
		if (needs_quotes(v))
			add_json(b, val, JSON_ENCODE_ANY | JSON_ENSURE_ASCII, "\"?\"");
		else
			add_str(b, v);
		break;
	}
	case JSON_INTEGER:
		add_int(b, json_integer_value(val));
		break;
	case JSON_REAL:
		snprintf(num, sizeof(num), "%.3f", json_real_value(val));
		add_str(b, num);
		break;
	case JSON_TRUE:
		add_str(b, "true");
		break;
	case JSON_FALSE:
		add_str(b, "false");
		break;
	case JSON_NULL:
		add_str(b, "null");
		break;
	default:
		add_json(b, val, JSON_ENCODE_ANY | JSON_COMPACT, "?");
		break;
	}
}

static int format_json(nt_linebuf *b, const json_t *ev, const char *when)
{
	const size_t flags = JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(9);
	size_t mark = b->len;

	if (!json_is_object(ev) || json_object_get(ev, "ts")) {
		/* Not the shape of an event: as it was always done, on a copy. */
		json_t *copy = json_copy((json_t *)ev);
		if (!copy)
			return -ENOMEM;
		json_object_set_new(copy, "ts", json_string(when));
		int r = json_dump_callback(copy, dump_cb, b, flags);
		json_decref(copy);
		return r < 0 ? -ENOMEM : 0;
	}
	/* "ts" goes last, where adding it to a copy of the object puts it. */
	if (json_dump_callback(ev, dump_cb, b, flags) < 0 || b->failed || b->len - mark < 2)
		return -ENOMEM;
	b->len--; /* the closing brace */
	if (json_object_size(ev))
		add_str(b, ",");
	add_str(b, "\"ts\":\"");
	add_str(b, when);
	add_str(b, "\"}");
	return b->failed ? -ENOMEM : 0;
}

int nt_log_format(nt_linebuf *b, const json_t *ev, const char *when, bool as_json)
{
	if (as_json)
		return format_json(b, ev, when);
	const char *event = json_string_value(json_object_get(ev, "event"));
	const char *key;
	json_t *val;

	add_str(b, when);
	add_str(b, " ");
	add_str(b, event ? event : "(null)");
	json_object_foreach((json_t *)ev, key, val) {
		if (!strcmp(key, "event"))
			continue;
		add_str(b, " ");
		add_str(b, key);
		add_str(b, "=");
		add_value(b, val);
	}
	return b->failed ? -ENOMEM : 0;
}
