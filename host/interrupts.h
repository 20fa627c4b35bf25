/* SPDX-License-Identifier: Apache-2.0 */
/* Pure parsers for /proc/interrupts and /proc/softirqs text.
 *
 * The kernel prints (kernel/irq/proc.c show_interrupts):
 *            CPU0       CPU1       CPU3
 *   28:          0          7   PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0
 * one count column per *online* CPU (offline CPUs have no column, so the
 * header names them), then the chip name, the hardware IRQ with its flow
 * type, and the action names joined by ", ". Arch rows (NMI, LOC, ...) have
 * a non-numeric label and are skipped. */
#ifndef NT_INTERRUPTS_H
#define NT_INTERRUPTS_H

#include <stddef.h>
#include <stdint.h>

typedef struct nt_irq_line {
	int irq;
	uint64_t *counts; /* ncols entries, inside nt_interrupts.counts */
	int ncols;
	uint64_t total; /* sum of counts */
	char chip[64];
	char hwirq[32];
	char name[128];
} nt_irq_line;

typedef struct nt_interrupts {
	int *cpus; /* CPU number of each column */
	int ncols;
	nt_irq_line *lines;
	int nlines;
	uint64_t *counts; /* every line's counts, line after line (one block) */
	size_t cap; /* lines (and counts) allocated */
	int lineno; /* lines seen so far, the header included */
	int bad_lines; /* numbered lines that could not be parsed */
	int first_bad_line; /* 1-based line number of the first, 0 if none */
} nt_interrupts;

/* Parse the whole text. Garbage lines are counted in bad_lines and skipped.
 * Returns 0, NT_EPARSE when there is no CPU header, -ENOMEM. */
int nt_interrupts_parse(const char *text, nt_interrupts *out);
void nt_interrupts_free(nt_interrupts *in);

/* The same parse in pieces, for a file read a block at a time (a 256-CPU
 * host's /proc/interrupts is megabytes): nt_interrupts_begin takes the
 * header (the text up to its newline), then nt_interrupts_more each run of
 * whole lines after it, in order (the last may lack its newline). Results
 * are those of nt_interrupts_parse on the whole text. Each returns 0,
 * NT_EPARSE (begin: no CPU header) or -ENOMEM; free OUT with
 * nt_interrupts_free in every case after begin. */
int nt_interrupts_begin(const char *header, nt_interrupts *out);
int nt_interrupts_more(const char *text, nt_interrupts *out);
/* Room for LINES lines at once, after begin: a reader that knows about
 * how many to expect (the last read's count) saves the copies of growing
 * megabytes of counts by doubling. Returns 0 or -ENOMEM. */
int nt_interrupts_reserve(nt_interrupts *out, size_t lines);
/* The block reader the host read uses: FD (not closed) read BLOCK bytes
 * at a time at first (NT_INTERRUPTS_BLOCK; on a 256-CPU host the file is
 * megabytes, and one buffer of its whole size, grown by doubling, cost
 * more in page faults and copies than the parse), whole lines handed to
 * begin and more, the buffer doubled for a line longer than it (thousands
 * of CPUs). HINT (the last read's line count, 0 if none) reserves room a
 * little over it. Results are nt_interrupts_parse's on the whole text.
 * Returns 0, a -errno of the read, NT_EPARSE (empty, or no CPU header) or
 * -ENOMEM; OUT needs no free after a failure. */
#define NT_INTERRUPTS_BLOCK ((size_t)256 * 1024)
int nt_interrupts_read_fd(int fd, size_t block, int hint, nt_interrupts *out);

/* Parse one numbered line given the column count. Returns 0, NT_EPARSE for
 * an arch row or garbage. LINE->counts must hold NCOLS entries. */
int nt_interrupts_parse_line(const char *line, int ncols, nt_irq_line *out);

/* IN's line for IRQ, or NULL. Lines are in kernel order (ascending IRQ
 * number): a binary search, then a scan should they not be. */
const nt_irq_line *nt_interrupts_line(const nt_interrupts *in, int irq);
/* The index of CPU among the N column CPU numbers CPUS, or -1. */
int nt_interrupts_column(const int *cpus, int n, int cpu);

/* /proc/softirqs: the NET_RX and NET_TX rows per column. *RX and *TX are
 * malloc'd arrays of *NCOLS entries; CPUS gets the column CPU numbers
 * (malloc'd). Returns 0 or NT_EPARSE / -ENOMEM. */
int nt_softirqs_parse(const char *text, int **cpus, uint64_t **rx, uint64_t **tx, int *ncols);

#endif
