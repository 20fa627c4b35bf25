/* SPDX-License-Identifier: Apache-2.0 */
#include "host/interrupts.h"
#include "kernel/ctx.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Parse "CPU0 CPU1 CPU3" into column CPU numbers. */
static int parse_header(const char *line, size_t len, int **cpus_out, int *n_out)
{
	int cap = 64, n = 0;
	int *cpus = malloc(sizeof(int) * (size_t)cap);
	const char *p = line, *end = line + len;

	if (!cpus)
		return -ENOMEM;
	while (p < end) {
		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p >= end)
			break;
		if (end - p < 4 || strncmp(p, "CPU", 3) != 0 || !isdigit((unsigned char)p[3])) {
			free(cpus);
			return NT_EPARSE;
		}
		p += 3;
		long v = 0;
		while (p < end && isdigit((unsigned char)*p)) {
			v = v * 10 + (*p - '0');
			if (v > 1 << 20) {
				free(cpus);
				return NT_EPARSE;
			}
			p++;
		}
		if (n == cap) {
			cap *= 2;
			int *nc = realloc(cpus, sizeof(int) * (size_t)cap);
			if (!nc) {
				free(cpus);
				return -ENOMEM;
			}
			cpus = nc;
		}
		cpus[n++] = (int)v;
	}
	if (n == 0) {
		free(cpus);
		return NT_EPARSE;
	}
	*cpus_out = cpus;
	*n_out = n;
	return 0;
}

static void copy_token(char *dst, size_t size, const char *s, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(dst, s, len);
	dst[len] = '\0';
}

/* The hardware IRQ column: "5-edge", "524288-edge", "27", or the ARM-style
 * "Level"/"Edge" word that follows the number. */
static bool looks_like_hwirq(const char *s, size_t len)
{
	if (len == 0)
		return false;
	if ((len == 5 && strncmp(s, "Level", 5) == 0) || (len == 4 && strncmp(s, "Edge", 4) == 0))
		return true;
	if (!isdigit((unsigned char)s[0]))
		return false;
	size_t i = 0;
	while (i < len && isxdigit((unsigned char)s[i]))
		i++;
	return i == len || s[i] == '-';
}

/* ZERO_RUN columns of zeros as the kernel prints them (" %10u" each). */
#define ZERO_RUN 16
#define ZERO_COL "          0"
#define ZERO_COL4 ZERO_COL ZERO_COL ZERO_COL ZERO_COL
static const char zero_run[] = ZERO_COL4 ZERO_COL4 ZERO_COL4 ZERO_COL4;
_Static_assert(sizeof(zero_run) == ZERO_RUN * 11 + 1, "sixteen 11-byte columns");

/* The line LINE, ending at EOL ('\n' or the NUL). */
static int parse_line(const char *line, const char *eol, int ncols, nt_irq_line *out)
{
	/* "       0" as a word in memory order. */
	static const union {
		char c[8];
		uint64_t w;
	} zt = { { ' ', ' ', ' ', ' ', ' ', ' ', ' ', '0' } };
	const uint64_t zero_tail = zt.w;
	const char *p = line;
	char *end;

	while (p < eol && isspace((unsigned char)*p))
		p++;
	if (!isdigit((unsigned char)*p))
		return NT_EPARSE;
	errno = 0;
	long irq = strtol(p, &end, 10);
	if (errno || end == p || *end != ':' || irq < 0 || irq > INT32_MAX)
		return NT_EPARSE;
	p = end + 1;
	out->irq = (int)irq;
	out->chip[0] = out->hwirq[0] = out->name[0] = '\0';
	uint64_t total = 0;
	/* The hot loop of a read on a big host (thousands of lines times
	 * hundreds of columns): plain digit accumulation, not strtoull. */
	for (int i = 0; i < ncols; i++) {
		/* A run of such zeros (a NIC queue's IRQ is served by one CPU
		 * of hundreds) compared a block of columns at a time: one
		 * vectorised memcmp in place of sixteen column checks. */
		if (ncols - i >= ZERO_RUN && eol - p > (ptrdiff_t)sizeof(zero_run) - 1 &&
		    memcmp(p, zero_run, sizeof(zero_run) - 1) == 0 &&
		    (unsigned)(p[sizeof(zero_run) - 1] - '0') >= 10) {
			memset(out->counts + i, 0, sizeof(uint64_t) * ZERO_RUN);
			p += sizeof(zero_run) - 1;
			i += ZERO_RUN - 1;
			continue;
		}
		/* Most columns of a big host are an IRQ's zero on a CPU that
		 * never served it: the separator and a 10-wide "0", eleven bytes
		 * checked as two words (bytes 0-7 spaces, 3-10 seven spaces and
		 * the '0'), and a twelfth that is no digit. */
		if (eol - p >= 12) {
			uint64_t a, b;
			memcpy(&a, p, sizeof(a));
			memcpy(&b, p + 3, sizeof(b));
			if (a == 0x2020202020202020ULL && b == zero_tail && (unsigned)(p[11] - '0') >= 10) {
				out->counts[i] = 0;
				p += 11;
				continue;
			}
		}
		/* Counts are right-aligned in 10-wide columns, so a line is mostly
		 * spaces: skip them eight at a time while a whole word of them
		 * lies before the end of the line. */
		while (eol - p >= 8) {
			uint64_t w;
			memcpy(&w, p, sizeof(w));
			w ^= 0x2020202020202020ULL;
			if (w) {
				/* Little-endian: the lowest non-zero byte is the
				 * first that is not a space. */
				if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
					p += __builtin_ctzll(w) / 8;
				break;
			}
			p += 8;
		}
		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= eol || *p < '0' || *p > '9')
			return NT_EPARSE;
		/* The line ends in '\n' or NUL, neither a digit: no bound check. */
		uint64_t v = 0;
		const char *start = p;
		while ((unsigned)(*p - '0') < 10) {
			v = v * 10 + (uint64_t)(*p++ - '0');
			if (p - start > 20)
				return NT_EPARSE;
		}
		out->counts[i] = v;
		total += v;
	}
	out->total = total;
	out->ncols = ncols;
	/* chip, then hwirq tokens, then the rest is the action name(s). */
	const char *tok[3];
	size_t toklen[3];
	int ntok = 0;
	const char *q = p;
	while (ntok < 3) {
		while (q < eol && isspace((unsigned char)*q))
			q++;
		if (q >= eol)
			break;
		tok[ntok] = q;
		while (q < eol && !isspace((unsigned char)*q))
			q++;
		toklen[ntok] = (size_t)(q - tok[ntok]);
		ntok++;
	}
	if (ntok == 0)
		return 0; /* an IRQ with no chip name at all */
	copy_token(out->chip, sizeof(out->chip), tok[0], toklen[0]);
	const char *rest = ntok > 1 ? tok[1] : eol;
	if (ntok > 1 && looks_like_hwirq(tok[1], toklen[1])) {
		size_t hl = toklen[1];
		rest = tok[1] + toklen[1];
		if (ntok > 2 && ((toklen[2] == 5 && strncmp(tok[2], "Level", 5) == 0) ||
				 (toklen[2] == 4 && strncmp(tok[2], "Edge", 4) == 0))) {
			hl = (size_t)(tok[2] + toklen[2] - tok[1]);
			rest = tok[2] + toklen[2];
		}
		copy_token(out->hwirq, sizeof(out->hwirq), tok[1], hl);
	}
	while (rest < eol && isspace((unsigned char)*rest))
		rest++;
	const char *rend = eol;
	while (rend > rest && isspace((unsigned char)rend[-1]))
		rend--;
	copy_token(out->name, sizeof(out->name), rest, (size_t)(rend - rest));
	return 0;
}

int nt_interrupts_parse_line(const char *line, int ncols, nt_irq_line *out)
{
	return parse_line(line, strchrnul(line, '\n'), ncols, out);
}

void nt_interrupts_free(nt_interrupts *in)
{
	if (!in)
		return;
	free(in->counts);
	free(in->lines);
	free(in->cpus);
	memset(in, 0, sizeof(*in));
}

/* Room for NEED lines (and their counts) in OUT. Lines point into the one
 * block of counts, so they are pointed again when it moves. */
static int reserve_lines(nt_interrupts *out, size_t need)
{
	if (need <= out->cap)
		return 0;
	size_t cap = out->cap ? out->cap : 64;
	while (cap < need)
		cap *= 2;
	nt_irq_line *nl = realloc(out->lines, sizeof(*nl) * cap);
	if (!nl)
		return -ENOMEM;
	out->lines = nl;
	uint64_t *nc = realloc(out->counts, sizeof(uint64_t) * cap * (size_t)out->ncols);
	if (!nc)
		return -ENOMEM;
	out->counts = nc;
	out->cap = cap;
	for (int i = 0; i < out->nlines; i++)
		out->lines[i].counts = out->counts + (size_t)i * (size_t)out->ncols;
	return 0;
}

int nt_interrupts_reserve(nt_interrupts *out, size_t lines)
{
	return reserve_lines(out, lines);
}

int nt_interrupts_begin(const char *header, nt_interrupts *out)
{
	memset(out, 0, sizeof(*out));
	out->lineno = 1;
	return parse_header(header, strcspn(header, "\n"), &out->cpus, &out->ncols);
}

int nt_interrupts_more(const char *text, nt_interrupts *out)
{
	const char *p = text;
	int r;

	/* One allocation for the lines and one for every count, grown by
	 * doubling when full (a reader that knows the count reserves it
	 * first): a 256-CPU host has hundreds of thousands of numbers, and a
	 * block per line made the read spend its time in malloc. */
	while (*p) {
		const char *s = p, *e = strchrnul(p, '\n');
		p = *e ? e + 1 : e;
		out->lineno++;
		while (s < e && isspace((unsigned char)*s))
			s++;
		if (s >= e || !isdigit((unsigned char)*s))
			continue; /* arch row (NMI, LOC, ERR, ...) or blank */
		if ((size_t)out->nlines >= out->cap && (r = reserve_lines(out, (size_t)out->nlines + 1)) < 0)
			return r;
		nt_irq_line *L = &out->lines[out->nlines];
		L->counts = out->counts + (size_t)out->nlines * (size_t)out->ncols;
		if (parse_line(s, e, out->ncols, L) < 0) {
			out->bad_lines++;
			if (!out->first_bad_line)
				out->first_bad_line = out->lineno;
			continue; /* the slot is reused by the next line */
		}
		out->nlines++;
	}
	return 0;
}

int nt_interrupts_parse(const char *text, nt_interrupts *out)
{
	int r = nt_interrupts_begin(text, out);
	if (r < 0)
		return r;
	const char *nl = strchr(text, '\n');
	r = nt_interrupts_more(nl ? nl + 1 : "", out);
	if (r < 0)
		nt_interrupts_free(out);
	return r;
}

int nt_softirqs_parse(const char *text, int **cpus_out, uint64_t **rx_out, uint64_t **tx_out,
		      int *ncols_out)
{
	const char *p = text;
	int *cpus = NULL, ncols = 0, r;
	uint64_t *rx = NULL, *tx = NULL;

	size_t hl = strcspn(p, "\n");
	r = parse_header(p, hl, &cpus, &ncols);
	if (r < 0)
		return r;
	rx = calloc((size_t)ncols, sizeof(uint64_t));
	tx = calloc((size_t)ncols, sizeof(uint64_t));
	if (!rx || !tx) {
		r = -ENOMEM;
		goto fail;
	}
	bool got_rx = false, got_tx = false;
	p += hl;
	while (*p) {
		if (*p == '\n')
			p++;
		size_t ll = strcspn(p, "\n");
		const char *s = p, *e = p + ll;
		p = e;
		while (s < e && isspace((unsigned char)*s))
			s++;
		uint64_t *dst = NULL;
		if (e - s > 7 && strncmp(s, "NET_RX:", 7) == 0) {
			dst = rx;
			got_rx = true;
		} else if (e - s > 7 && strncmp(s, "NET_TX:", 7) == 0) {
			dst = tx;
			got_tx = true;
		} else {
			continue;
		}
		s += 7;
		for (int i = 0; i < ncols; i++) {
			char *end;
			while (s < e && isspace((unsigned char)*s))
				s++;
			if (s >= e) {
				r = NT_EPARSE;
				goto fail;
			}
			dst[i] = strtoull(s, &end, 10);
			if (end == s) {
				r = NT_EPARSE;
				goto fail;
			}
			s = end;
		}
	}
	if (!got_rx || !got_tx) {
		r = NT_EPARSE;
		goto fail;
	}
	*cpus_out = cpus;
	*rx_out = rx;
	*tx_out = tx;
	*ncols_out = ncols;
	return 0;
fail:
	free(cpus);
	free(rx);
	free(tx);
	return r;
}

const nt_irq_line *nt_interrupts_line(const nt_interrupts *in, int irq)
{
	int lo = 0, hi = in->nlines - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (in->lines[mid].irq == irq)
			return &in->lines[mid];
		if (in->lines[mid].irq < irq)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	for (int i = 0; i < in->nlines; i++) /* not sorted after all */
		if (in->lines[i].irq == irq)
			return &in->lines[i];
	return NULL;
}

int nt_interrupts_column(const int *cpus, int n, int cpu)
{
	for (int i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return i;
	return -1;
}

int nt_interrupts_read_fd(int fd, size_t block, int hint, nt_interrupts *in)
{
	size_t cap = block < 2 ? 2 : block, len = 0;
	bool begun = false;
	char *buf = NULL;
	int r = 0;

	memset(in, 0, sizeof(*in));
	if (!(buf = malloc(cap)))
		return -ENOMEM;
	for (;;) {
		if (len + 1 >= cap) {
			/* A line longer than the buffer (thousands of CPUs). */
			char *nb = cap < (size_t)1 << 28 ? realloc(buf, cap * 2) : NULL;
			if (!nb) {
				r = -ENOMEM;
				goto out;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto out;
		}
		len += (size_t)n;
		buf[len] = '\0';
		/* Whole lines go to the parser; the rest waits for the next
		 * block. At the end, everything goes. */
		char *last = n == 0 ? buf + len : memrchr(buf, '\n', len);
		if (!last)
			continue;
		char *rest = last < buf + len ? last + 1 : last;
		char keep = *rest;
		*rest = '\0';
		char *from = buf;
		if (!begun) {
			if ((r = nt_interrupts_begin(buf, in)) < 0)
				goto out;
			begun = true;
			/* A little over the last count: an IRQ or two more does
			 * not double megabytes. */
			if (hint > 0 && (r = nt_interrupts_reserve(in, (size_t)hint + hint / 16 + 8)) < 0)
				goto out;
			char *nl = strchr(buf, '\n');
			from = nl ? nl + 1 : rest;
		}
		if ((r = nt_interrupts_more(from, in)) < 0)
			goto out;
		*rest = keep;
		len -= (size_t)(rest - buf);
		memmove(buf, rest, len);
		if (n == 0)
			break;
	}
	if (!begun)
		r = NT_EPARSE; /* empty */
out:
	if (r < 0)
		nt_interrupts_free(in);
	free(buf);
	return r;
}
