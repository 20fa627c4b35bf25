/* SPDX-License-Identifier: Apache-2.0 */
/* Setting values as text in tests: what a test writes and compares is the
 * journal's and the API's form, parsed and formatted by the kind. */
#ifndef NT_TEST_SETTING_UTIL_H
#define NT_TEST_SETTING_UTIL_H

#include "settings/setting.h"

#include <stdio.h>
#include <string.h>

/* V as its kind writes it; four rotating buffers, so a few may be used in
 * one expression. */
static inline const char *nt_t_str(const nt_setting_kind *k, const nt_value *v)
{
	static char bufs[4][NT_VALUE_MAX];
	static int next;
	char *b = bufs[next++ % 4];
	return nt_value_str(k, v, b, NT_VALUE_MAX);
}

/* TEXT parsed by K; a value that does not parse is all zero. */
static inline nt_value nt_t_val(const nt_setting_kind *k, const char *text)
{
	nt_value v;
	if (k->parse(text, &v) < 0)
		memset(&v, 0, sizeof(v));
	return v;
}

/* Whether A and B (text) mean the same to K; false when one does not parse. */
static inline bool nt_t_equal(const nt_setting_kind *k, const char *a, const char *b)
{
	nt_value x, y;
	if (k->parse(a, &x) < 0 || k->parse(b, &y) < 0)
		return false;
	return nt_setting_equal(k, &x, &y);
}

#endif
