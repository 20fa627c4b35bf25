/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/warn_group.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values shown in a group's "[a | b]" before it says "…". */
#define SHOW_VALUES 8

/* One warning taken apart: SUBJECT (NULL: none), TMPL its text with each
 * value replaced by '\x01', VALS those values in order. */
typedef struct item {
	const char *orig;
	char *subject;
	char *tmpl;
	char **vals;
	size_t nvals;
	long group; /* the index of the group's first item */
} item;

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '@' || c == '-';
}

static bool is_word(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!word_char(s[i]))
			return false;
	return true;
}

/* "rx-3", "tx-12". */
static bool is_queue(const char *s, size_t n)
{
	if (n < 4 || (strncmp(s, "rx-", 3) && strncmp(s, "tx-", 3)))
		return false;
	for (size_t i = 3; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* The length of W's subject (before its first ": "), or 0 when it has none. */
static size_t subject_len(const char *w)
{
	const char *colon = strstr(w, ": ");
	if (!colon)
		return 0;
	size_t n = (size_t)(colon - w);
	if (is_word(w, n))
		return n;
	/* An interface and a queue: "eth0 rx-3", "eth0/tx-3". */
	for (size_t i = n; i-- > 0;)
		if (w[i] == ' ' || w[i] == '/')
			return is_word(w, i) && is_queue(w + i + 1, n - i - 1) ? n : 0;
	return 0;
}

static size_t digits(const char *s)
{
	size_t i = 0;
	while (isdigit((unsigned char)s[i]))
		i++;
	return i;
}

/* The length of the value at S (a digit not inside a word): a number, a
 * range (1-17, 101..116) or a list of them (18-31,64-66). */
static size_t value_len(const char *s)
{
	size_t i = digits(s);
	for (;;) {
		if (s[i] == '-' && isdigit((unsigned char)s[i + 1]))
			i += 1 + digits(s + i + 1);
		else if (s[i] == '.' && s[i + 1] == '.' && isdigit((unsigned char)s[i + 2]))
			i += 2 + digits(s + i + 2);
		if (s[i] == ',' && isdigit((unsigned char)s[i + 1]))
			i += 1 + digits(s + i + 1);
		else
			return i;
	}
}

static void item_free(item *it)
{
	free(it->subject);
	free(it->tmpl);
	for (size_t k = 0; k < it->nvals; k++)
		free(it->vals[k]);
	free(it->vals);
}

static int item_parse(item *it, const char *w)
{
	memset(it, 0, sizeof(*it));
	it->orig = w;
	size_t sn = subject_len(w);
	const char *text = w;
	if (sn) {
		if (!(it->subject = strndup(w, sn)))
			return -1;
		text = w + sn + 2;
	}
	size_t len = strlen(text);
	if (!(it->tmpl = malloc(len + 1)) || !(it->vals = calloc(len / 2 + 1, sizeof(*it->vals))))
		return -1;
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		bool starts = isdigit((unsigned char)text[i]) &&
			      (i == 0 || !(isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_' || text[i - 1] == '.'));
		if (!starts) {
			it->tmpl[o++] = text[i++];
			continue;
		}
		size_t n = value_len(text + i);
		if (!(it->vals[it->nvals] = strndup(text + i, n)))
			return -1;
		it->nvals++;
		it->tmpl[o++] = '\x01';
		i += n;
	}
	it->tmpl[o] = '\0';
	return 0;
}

/* The master of interface NAME in NICS, or NULL. */
static const char *master_of(const json_t *nics, const char *name)
{
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(nics, "nics"), i, n) {
		const char *nm = json_string_value(json_object_get(n, "name"));
		if (nm && !strcmp(nm, name))
			return json_string_value(json_object_get(n, "master"));
	}
	return NULL;
}

static size_t ports_of(const json_t *nics, const char *bond)
{
	size_t i, k = 0;
	json_t *n;
	json_array_foreach(json_object_get(nics, "nics"), i, n) {
		const char *m = json_string_value(json_object_get(n, "master"));
		k += m && !strcmp(m, bond);
	}
	return k;
}

/* S split into its part before a trailing number and that number; -1 when
 * it does not end in one. */
static long trailing_number(const char *s, size_t *prefix)
{
	size_t n = strlen(s), i = n;
	while (i > 0 && isdigit((unsigned char)s[i - 1]))
		i--;
	*prefix = i;
	if (i == n || n - i > 9)
		return -1;
	return atol(s + i);
}

/* NAMES (N, distinct) with runs of three or more consecutive numbers as
 * "eth0..eth7" ("eth0 rx-0..rx-3": the second written from its queue). */
static void compact(FILE *m, char **names, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t pi, pj;
		long a = trailing_number(names[i], &pi);
		size_t j = i + 1;
		while (a >= 0 && j < n) {
			long b = trailing_number(names[j], &pj);
			if (b != a + (long)(j - i) || pj != pi || strncmp(names[i], names[j], pi))
				break;
			j++;
		}
		if (i)
			fputs(", ", m);
		if (j - i >= 3) {
			const char *last = names[j - 1], *from = last;
			for (size_t k = 0; k < pi; k++)
				if (last[k] == ' ' || last[k] == '/')
					from = last + k + 1;
			fprintf(m, "%s..%s", names[i], from);
			i = j;
		} else {
			fputs(names[i++], m);
		}
	}
}

/* The subjects of the group of items MEMBERS (N of them). */
static void subjects(FILE *m, item **members, size_t n, const json_t *nics)
{
	char **names = calloc(n, sizeof(*names));
	size_t u = 0;
	if (!names)
		return;
	for (size_t i = 0; i < n; i++) {
		size_t k;
		for (k = 0; k < u && strcmp(names[k], members[i]->subject); k++)
			;
		if (k == u)
			names[u++] = members[i]->subject;
	}
	const char *bond = nics && u >= 2 ? master_of(nics, names[0]) : NULL;
	for (size_t k = 1; bond && k < u; k++) {
		const char *b = master_of(nics, names[k]);
		if (!b || strcmp(b, bond))
			bond = NULL;
	}
	if (bond && ports_of(nics, bond) == u) {
		fprintf(m, "every port of %s (", bond);
		compact(m, names, u);
		fputc(')', m);
	} else {
		compact(m, names, u);
	}
	/* A subject said twice: the values are one per line, not per name. */
	if (u < n)
		fprintf(m, " (%zu lines)", n);
	free(names);
}

/* Value K of the group: once when all lines have it, else each. */
static void value(FILE *m, item **members, size_t n, size_t k)
{
	size_t i;
	for (i = 1; i < n && !strcmp(members[i]->vals[k], members[0]->vals[k]); i++)
		;
	if (i == n) {
		fputs(members[0]->vals[k], m);
		return;
	}
	fputc('[', m);
	size_t show = n <= SHOW_VALUES ? n : SHOW_VALUES / 2;
	for (i = 0; i < show; i++)
		fprintf(m, "%s%s", i ? " | " : "", members[i]->vals[k]);
	if (show < n)
		fprintf(m, " | … %zu in all", n);
	fputc(']', m);
}

static char *group_line(item **members, size_t n, const json_t *nics)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	if (!members[0]->subject) {
		fprintf(m, "%s (×%zu)", members[0]->orig, n);
	} else {
		subjects(m, members, n, nics);
		fputs(": ", m);
		size_t k = 0;
		for (const char *t = members[0]->tmpl; *t; t++) {
			if (*t == '\x01')
				value(m, members, n, k++);
			else
				fputc(*t, m);
		}
	}
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static bool alike(const item *a, const item *b)
{
	if (!a->subject || !b->subject)
		return !a->subject && !b->subject && !strcmp(a->orig, b->orig);
	return !strcmp(a->tmpl, b->tmpl);
}

json_t *nt_warn_group(const json_t *warnings, const json_t *nics)
{
	size_t n = json_array_size(warnings), ni = 0;
	item *items = calloc(n ? n : 1, sizeof(*items));
	item **members = calloc(n ? n : 1, sizeof(*members));
	json_t *out = json_array();
	if (!items || !members || !out)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const char *w = json_string_value(json_array_get(warnings, i));
		if (!w)
			continue;
		if (item_parse(&items[ni], w) < 0) {
			ni++;
			goto fail;
		}
		items[ni].group = (long)ni;
		for (size_t j = 0; j < ni; j++)
			if (items[j].group == (long)j && alike(&items[j], &items[ni])) {
				items[ni].group = (long)j;
				break;
			}
		ni++;
	}
	for (size_t i = 0; i < ni; i++) {
		if (items[i].group != (long)i)
			continue;
		size_t k = 0;
		for (size_t j = i; j < ni; j++)
			if (items[j].group == (long)i)
				members[k++] = &items[j];
		json_t *line;
		if (k == 1) {
			line = json_string(items[i].orig);
		} else {
			char *s = group_line(members, k, nics);
			line = s ? json_string(s) : NULL;
			free(s);
		}
		if (!line || json_array_append_new(out, line) < 0)
			goto fail;
	}
	for (size_t i = 0; i < ni; i++)
		item_free(&items[i]);
	free(items);
	free(members);
	return out;
fail:
	for (size_t i = 0; items && i < ni; i++)
		item_free(&items[i]);
	free(items);
	free(members);
	json_decref(out);
	return NULL;
}
