/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the block-wise /proc/interrupts reader of the host
 * read (nt_interrupts_read_fd, host/topology_irq.c's), against the parse
 * of the whole text. The first byte picks the block size (1 to 256 bytes,
 * so that lines, the header and the counts are cut at every place, and a
 * line longer than the block grows the buffer) and a line-count hint; the
 * rest is the file, read from a memfd. Both readers must agree: the same
 * result, and on success the same CPUs, lines, names, counts and bad
 * lines. */
#include "base/errors.h"
#include "host/interrupts.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void same(const nt_interrupts *a, const nt_interrupts *b)
{
	if (a->ncols != b->ncols || a->nlines != b->nlines || a->bad_lines != b->bad_lines ||
	    a->first_bad_line != b->first_bad_line)
		abort();
	if (a->ncols && memcmp(a->cpus, b->cpus, sizeof(int) * (size_t)a->ncols) != 0)
		abort();
	for (int i = 0; i < a->nlines; i++) {
		const nt_irq_line *x = &a->lines[i], *y = &b->lines[i];
		if (x->irq != y->irq || x->ncols != y->ncols || x->total != y->total ||
		    strcmp(x->name, y->name) || strcmp(x->chip, y->chip) || strcmp(x->hwirq, y->hwirq))
			abort();
		if (x->ncols && memcmp(x->counts, y->counts, sizeof(x->counts[0]) * (size_t)x->ncols) != 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	nt_interrupts whole, blocks;

	if (size < 1)
		return 0;
	/* The kernel's file holds no NUL; the text parser would stop at one. */
	if (memchr(data + 1, '\0', size - 1))
		return 0;
	if (fd < 0 && (fd = memfd_create("interrupts", 0)) < 0)
		abort();
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data + 1, size - 1, 0) != (ssize_t)(size - 1) ||
	    lseek(fd, 0, SEEK_SET) != 0)
		abort();
	size_t block = 1 + (data[0] & 0x7f) * 2;
	int hint = data[0] & 0x80 ? 3 : 0;

	char *text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	int rw = nt_interrupts_parse(text, &whole);
	int rb = nt_interrupts_read_fd(fd, block, hint, &blocks);
	/* An empty file: the whole-text parse finds no header, the reader
	 * nothing at all; both refuse it. */
	if ((rw < 0) != (rb < 0))
		abort();
	if (rw == 0 && rb == 0)
		same(&whole, &blocks);
	if (rw == 0)
		nt_interrupts_free(&whole);
	if (rb == 0)
		nt_interrupts_free(&blocks);
	free(text);
	return 0;
}
