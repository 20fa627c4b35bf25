/* SPDX-License-Identifier: Apache-2.0 */
#include "api/jsonpath.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define NT_JP_DEPTH 32
#define NT_JP_KEY 64

struct frame {
	bool object;
	bool expect_key; /* object: the next string is a key */
	bool has_key;
	size_t index; /* array: the element being read */
	char key[NT_JP_KEY + 1];
};

static bool plain_key(const char *k)
{
	if (!*k)
		return false;
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
		      (*k >= '0' && *k <= '9') || *k == '_'))
			return false;
	return true;
}

/* Append to BUF (of SIZE, holding *LEN) what fits. */
static void add(char *buf, size_t size, size_t *len, const char *s)
{
	size_t n = strlen(s);
	if (*len + 1 >= size)
		return;
	if (n > size - 1 - *len)
		n = size - 1 - *len;
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = '\0';
}

size_t nt_json_path_at(const char *text, size_t len, size_t offset, char *buf, size_t size)
{
	struct frame st[NT_JP_DEPTH];
	int depth = 0, overflow = 0; /* frames past NT_JP_DEPTH, not kept */
	bool in_str = false, esc = false, str_is_key = false;
	size_t klen = 0, out = 0;

	if (!size)
		return 0;
	buf[0] = '\0';
	if (offset > len)
		offset = len;
	for (size_t i = 0; i < offset; i++) {
		char ch = text[i];
		struct frame *top = depth > 0 && !overflow ? &st[depth - 1] : NULL;
		if (in_str) {
			if (esc) {
				esc = false;
			} else if (ch == '\\') {
				esc = true;
			} else if (ch == '"') {
				in_str = false;
				if (str_is_key && top) {
					top->key[klen] = '\0';
					top->has_key = true;
					top->expect_key = false;
				}
				continue;
			}
			if (str_is_key && top && klen < NT_JP_KEY)
				top->key[klen++] = ch;
			continue;
		}
		switch (ch) {
		case '"':
			in_str = true;
			str_is_key = top && top->object && top->expect_key;
			klen = 0;
			break;
		case '{':
		case '[':
			if (overflow || depth == NT_JP_DEPTH) {
				overflow++;
				break;
			}
			memset(&st[depth], 0, sizeof(st[depth]));
			st[depth].object = ch == '{';
			st[depth].expect_key = ch == '{';
			depth++;
			break;
		case '}':
		case ']':
			if (overflow)
				overflow--;
			else if (depth > 0)
				depth--;
			break;
		case ',':
			if (top && top->object) {
				top->expect_key = true;
				top->has_key = false;
			} else if (top) {
				top->index++;
			}
			break;
		default:
			break;
		}
	}

	add(buf, size, &out, "$");
	for (int d = 0; d < depth; d++) {
		char part[NT_JP_KEY + 8];
		const struct frame *f = &st[d];
		if (f->object && !f->has_key)
			break;
		if (f->object && plain_key(f->key))
			snprintf(part, sizeof(part), ".%s", f->key);
		else if (f->object)
			snprintf(part, sizeof(part), "['%s']", f->key);
		else
			snprintf(part, sizeof(part), "[%zu]", f->index);
		add(buf, size, &out, part);
	}
	if (overflow)
		add(buf, size, &out, "...");
	return out;
}
