/* SPDX-License-Identifier: Apache-2.0 */
#include "base/cpuset.h"
#include "base/errors.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

void nt_cpuset_zero(nt_cpuset *s)
{
	memset(s, 0, sizeof(*s));
}

void nt_cpuset_set(nt_cpuset *s, int cpu)
{
	if (cpu >= 0 && cpu < NT_MAX_CPUS)
		s->w[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

void nt_cpuset_clear(nt_cpuset *s, int cpu)
{
	if (cpu >= 0 && cpu < NT_MAX_CPUS)
		s->w[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}

bool nt_cpuset_isset(const nt_cpuset *s, int cpu)
{
	if (cpu < 0 || cpu >= NT_MAX_CPUS)
		return false;
	return (s->w[cpu / 64] >> (cpu % 64)) & 1;
}

int nt_cpuset_count(const nt_cpuset *s)
{
	int n = 0;
	for (int i = 0; i < NT_CPUSET_WORDS; i++)
		n += __builtin_popcountll(s->w[i]);
	return n;
}

bool nt_cpuset_empty(const nt_cpuset *s)
{
	for (int i = 0; i < NT_CPUSET_WORDS; i++)
		if (s->w[i])
			return false;
	return true;
}

bool nt_cpuset_equal(const nt_cpuset *a, const nt_cpuset *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

bool nt_cpuset_subset(const nt_cpuset *sub, const nt_cpuset *super)
{
	for (int i = 0; i < NT_CPUSET_WORDS; i++)
		if (sub->w[i] & ~super->w[i])
			return false;
	return true;
}

bool nt_cpuset_intersects(const nt_cpuset *a, const nt_cpuset *b)
{
	for (int i = 0; i < NT_CPUSET_WORDS; i++)
		if (a->w[i] & b->w[i])
			return true;
	return false;
}

void nt_cpuset_and(nt_cpuset *dst, const nt_cpuset *a, const nt_cpuset *b)
{
	for (int i = 0; i < NT_CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] & b->w[i];
}

void nt_cpuset_or(nt_cpuset *dst, const nt_cpuset *a, const nt_cpuset *b)
{
	for (int i = 0; i < NT_CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] | b->w[i];
}

void nt_cpuset_andnot(nt_cpuset *dst, const nt_cpuset *a, const nt_cpuset *b)
{
	for (int i = 0; i < NT_CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] & ~b->w[i];
}

int nt_cpuset_next(const nt_cpuset *s, int from)
{
	if (from < 0)
		from = 0;
	if (from >= NT_MAX_CPUS)
		return -1;
	int i = from / 64;
	uint64_t w = s->w[i] & (~UINT64_C(0) << (from % 64));
	/* A set is NT_MAX_CPUS wide and mostly empty past the host's CPUs:
	 * the empty words skipped four at a time. */
	while (!w) {
		if (++i >= NT_CPUSET_WORDS)
			return -1;
		while (i + 4 <= NT_CPUSET_WORDS && !(s->w[i] | s->w[i + 1] | s->w[i + 2] | s->w[i + 3]))
			i += 4;
		if (i >= NT_CPUSET_WORDS)
			return -1;
		w = s->w[i];
	}
	return i * 64 + __builtin_ctzll(w);
}

int nt_cpuset_last(const nt_cpuset *s)
{
	int i = NT_CPUSET_WORDS;
	/* Mostly empty above the host's CPUs: four empty words at a time. */
	while (i >= 4 && !(s->w[i - 1] | s->w[i - 2] | s->w[i - 3] | s->w[i - 4]))
		i -= 4;
	while (--i >= 0)
		if (s->w[i])
			return i * 64 + 63 - __builtin_clzll(s->w[i]);
	return -1;
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	return p;
}

static int parse_cpu(const char **pp, int *out)
{
	const char *p = *pp;
	long v = 0;
	if (!isdigit((unsigned char)*p))
		return NT_EPARSE;
	while (isdigit((unsigned char)*p)) {
		v = v * 10 + (*p - '0');
		if (v >= NT_MAX_CPUS)
			return -ERANGE;
		p++;
	}
	*out = (int)v;
	*pp = p;
	return 0;
}

int nt_cpulist_parse(const char *s, nt_cpuset *out)
{
	nt_cpuset set;
	const char *p;
	int r;

	nt_cpuset_zero(&set);
	p = skip_space(s);
	if (!*p) {
		*out = set;
		return 0;
	}
	for (;;) {
		int a, b;
		p = skip_space(p);
		if ((r = parse_cpu(&p, &a)) < 0)
			return r;
		b = a;
		if (*p == '-') {
			p++;
			if ((r = parse_cpu(&p, &b)) < 0)
				return r;
			if (b < a)
				return NT_EPARSE;
		}
		for (int c = a; c <= b; c++)
			nt_cpuset_set(&set, c);
		p = skip_space(p);
		if (*p == '\0')
			break;
		if (*p != ',')
			return NT_EPARSE;
		p++;
	}
	*out = set;
	return 0;
}

bool nt_cpulist_strict(const char *s)
{
	const char *p = s;
	if (!p)
		return false;
	if (!*p)
		return true;
	for (;;) {
		for (int k = 0; k < 2; k++) {
			if (!isdigit((unsigned char)*p) || (p[0] == '0' && isdigit((unsigned char)p[1])))
				return false;
			while (isdigit((unsigned char)*p))
				p++;
			if (k == 1 || *p != '-')
				break;
			p++;
		}
		if (*p == '\0')
			return true;
		if (*p != ',')
			return false;
		p++;
	}
}

/* The decimal digits of V (0 <= V < 100000) into OUT; how many. */
static int put_uint(int v, char *out)
{
	char d[8];
	int n = 0, k = 0;
	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < (int)sizeof(d));
	while (n)
		out[k++] = d[--n];
	return k;
}

/* The first CPU at or after FROM whose bit is ~WANT-flipped set, among
 * words [FROM / 64, WORDS): with FLIP 0 the next CPU in the set, with FLIP
 * all ones the next CPU not in it. WORDS * 64 when there is none. */
static int next_bit(const nt_cpuset *s, int from, int words, uint64_t flip)
{
	for (int i = from / 64; i < words; i++) {
		uint64_t w = s->w[i] ^ flip;
		if (i == from / 64)
			w &= ~UINT64_C(0) << (from % 64);
		if (w)
			return i * 64 + __builtin_ctzll(w);
	}
	return words * 64;
}

int nt_cpulist_format(const nt_cpuset *s, char *buf, size_t size)
{
	size_t len = 0;
	/* Runs found a word at a time, and only up to the last word in use:
	 * a set is NT_MAX_CPUS wide and a host read formats thousands. */
	int words = (nt_cpuset_last(s) + 64) / 64;
	int c = next_bit(s, 0, words, 0);

	if (size == 0)
		return -ENOSPC;
	buf[0] = '\0';
	while (c < words * 64) {
		int e = next_bit(s, c, words, ~UINT64_C(0)) - 1;
		/* Digits by hand, not snprintf: every IRQ of a host read and
		 * of a transaction's record is a cpulist, and the format parse
		 * was most of the cost. Room checked first: ",NNNNN-NNNNN". */
		char piece[16];
		int n = 0;
		if (len)
			piece[n++] = ',';
		n += put_uint(c, piece + n);
		if (e != c) {
			piece[n++] = '-';
			n += put_uint(e, piece + n);
		}
		if ((size_t)n >= size - len) {
			buf[0] = '\0';
			return -ENOSPC;
		}
		memcpy(buf + len, piece, (size_t)n);
		len += (size_t)n;
		buf[len] = '\0';
		c = e + 1 < words * 64 ? next_bit(s, e + 1, words, 0) : words * 64;
	}
	return (int)len;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int nt_cpumask_parse(const char *s, nt_cpuset *out)
{
	nt_cpuset set;
	const char *start = skip_space(s), *end;
	int bit = 0;

	nt_cpuset_zero(&set);
	end = start + strlen(start);
	while (end > start && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\t'))
		end--;
	if (end == start)
		return NT_EPARSE;
	/* Walk groups from the right: each group is 32 bits, whatever its
	 * digit count, because the kernel's "%*pb" prints 32-bit chunks. */
	const char *gend = end;
	for (;;) {
		const char *gstart = gend;
		while (gstart > start && gstart[-1] != ',')
			gstart--;
		size_t glen = (size_t)(gend - gstart);
		if (glen == 0 || glen > 8)
			return NT_EPARSE;
		for (size_t i = 0; i < glen; i++) {
			int v = hexval((unsigned char)gend[-1 - (long)i]);
			if (v < 0)
				return NT_EPARSE;
			for (int k = 0; k < 4; k++) {
				if (v & (1 << k)) {
					int cpu = bit + (int)i * 4 + k;
					if (cpu >= NT_MAX_CPUS)
						return -ERANGE;
					nt_cpuset_set(&set, cpu);
				}
			}
		}
		bit += 32;
		if (gstart == start)
			break;
		gend = gstart - 1; /* skip the comma */
		if (gend == start)
			return NT_EPARSE; /* leading comma */
	}
	*out = set;
	return 0;
}

int nt_cpumask_format(const nt_cpuset *s, int nbits, char *buf, size_t size)
{
	int last = nt_cpuset_last(s);
	int groups;

	if (nbits <= 0)
		nbits = last + 1 > 0 ? last + 1 : 1;
	if (last >= nbits)
		nbits = last + 1;
	if (nbits > NT_MAX_CPUS)
		nbits = NT_MAX_CPUS;
	groups = (nbits + 31) / 32;
	size_t need = (size_t)groups * 9;
	if (size < need)
		return -ENOSPC;
	size_t len = 0;
	/* As lib/vsprintf.c bitmap_string(): the leading group is only as
	 * wide as its bits (56 CPUs: "000300,00000000"), the rest 8 digits. */
	int lead = nbits % 32 ? nbits % 32 : 32;
	/* Digit by digit, not snprintf: a mask of 256 CPUs is eight groups,
	 * and the tree's kernel writes one for each IRQ step (a thousand a
	 * transaction), where snprintf's format parse was most of the write. */
	static const char hex[] = "0123456789abcdef";
	for (int g = groups - 1; g >= 0; g--) {
		uint32_t v = (uint32_t)(s->w[g / 2] >> ((g % 2) * 32));
		int width = g == groups - 1 ? (lead + 3) / 4 : 8;
		for (int d = width - 1; d >= 0; d--)
			buf[len++] = hex[(v >> (4 * d)) & 0xf];
		if (g)
			buf[len++] = ',';
	}
	buf[len] = '\0';
	return (int)len;
}
