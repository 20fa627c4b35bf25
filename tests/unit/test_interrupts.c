/* SPDX-License-Identifier: Apache-2.0 */
/* /proc/interrupts and /proc/softirqs parsing. */
#include "kernel/ctx.h"
#include "host/interrupts.h"
#include "harness.h"

#include <stdlib.h>
#include <unistd.h>

static const char sample[] =
	"           CPU0       CPU1       CPU3       \n"
	"  0:         44          0          0   IO-APIC   2-edge      timer\n"
	" 28:          0          7          1   PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n"
	"177:    1000000         12          0  PCI-MSI-0000:01:00.0 524288-edge      eth0\n"
	" 98:          1          2          3  IR-PCI-MSIX-0000:81:00.0    5-edge      mlx5_comp3@pci:0000:81:00.0\n"
	" 45:          0          0          0  GICv3  27 Level     arch_timer\n"
	" 46:          5          0          0  IO-APIC  16-fasteoi   ehci_hcd:usb1, uhci_hcd:usb2\n"
	" 47:          0          0          0  PCI-MSI 1234-edge\n"
	" 99:  garbage\n"
	"NMI:          0          0          0   Non-maskable interrupts\n"
	"LOC:       8639       9273       1000   Local timer interrupts\n"
	"ERR:          0\n";

/* Whole lines fed in runs of K lines give what one parse of the text gives. */
static void check_in_pieces(const char *text, int k)
{
	nt_interrupts whole, parts;
	CHECK_INT(nt_interrupts_parse(text, &whole), 0);
	CHECK_INT(nt_interrupts_begin(text, &parts), 0);
	const char *p = strchr(text, '\n') + 1;
	while (*p) {
		const char *e = p;
		for (int i = 0; i < k && *e; i++) {
			const char *nl = strchr(e, '\n');
			e = nl ? nl + 1 : e + strlen(e);
		}
		char *run = strndup(p, (size_t)(e - p));
		CHECK_INT(nt_interrupts_more(run, &parts), 0);
		free(run);
		p = e;
	}
	CHECK_INT(parts.nlines, whole.nlines);
	CHECK_INT(parts.bad_lines, whole.bad_lines);
	CHECK_INT(parts.first_bad_line, whole.first_bad_line);
	for (int i = 0; i < whole.nlines && i < parts.nlines; i++) {
		CHECK_INT(parts.lines[i].irq, whole.lines[i].irq);
		CHECK_STR(parts.lines[i].name, whole.lines[i].name);
		CHECK(memcmp(parts.lines[i].counts, whole.lines[i].counts, sizeof(uint64_t) * (size_t)whole.ncols) == 0);
	}
	nt_interrupts_free(&whole);
	nt_interrupts_free(&parts);
}

/* The host read's block reader (nt_interrupts_read_fd) with blocks of
 * BLOCK bytes gives what one parse of the text gives: lines cut anywhere,
 * a header longer than the block, a last line without its newline. */
static void check_read_fd(const char *text, size_t block)
{
	nt_interrupts whole, read;
	char path[] = "/tmp/nt-interrupts-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	unlink(path);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECK_INT(nt_interrupts_parse(text, &whole), 0);
	CHECK_INT(nt_interrupts_read_fd(fd, block, block & 1 ? 5 : 0, &read), 0);
	close(fd);
	CHECK_INT(read.ncols, whole.ncols);
	CHECK_INT(read.nlines, whole.nlines);
	CHECK_INT(read.bad_lines, whole.bad_lines);
	CHECK_INT(read.first_bad_line, whole.first_bad_line);
	for (int i = 0; i < whole.nlines && i < read.nlines; i++) {
		CHECK_INT(read.lines[i].irq, whole.lines[i].irq);
		CHECK_STR(read.lines[i].name, whole.lines[i].name);
		CHECK_INT(read.lines[i].total, whole.lines[i].total);
	}
	nt_interrupts_free(&whole);
	nt_interrupts_free(&read);
}

/* Zero columns as the kernel prints them (a separator and a 10-wide
 * field) are taken eleven bytes at a time; every other spelling of a
 * count, and a zero that is the start of a longer number, goes the long
 * way. Each line's counts must be what printf put there. */
static void zero_columns(void)
{
	static const char *const lines[] = {
		/* kernel format: zeros, a big count, zeros, then the chip */
		"  7:          0          0    1234567          0          0   IR-PCI-MSI 1-edge a\n",
		/* a zero column then the chip directly after one space */
		"  8:          0          0          0          0          0 X 1-edge b\n",
		/* narrower fields (an old kernel, a hand-made tree) */
		"  9: 0 0 5 0 0 IO-APIC 9-fasteoi c\n",
		/* tabs, and wide counts that fill their field */
		" 10:\t0\t1\t0\t9999999999 0 PCI-MSI 2-edge d\n",
		/* a zero field followed by a digit: "01" is one number, 1 */
		" 11:          01          0          0          0          0 Y 1-edge e\n",
		/* counts past 32 bits */
		" 12:          0 4294967296          0          0 18446744073 Z 3-edge f\n",
	};
	static const uint64_t want[][5] = {
		{ 0, 0, 1234567, 0, 0 }, { 0, 0, 0, 0, 0 }, { 0, 0, 5, 0, 0 },
		{ 0, 1, 0, 9999999999ULL, 0 }, { 1, 0, 0, 0, 0 }, { 0, 4294967296ULL, 0, 0, 18446744073ULL },
	};
	static const char *const names[] = { "a", "b", "c", "d", "e", "f" };
	for (size_t k = 0; k < sizeof(lines) / sizeof(lines[0]); k++) {
		uint64_t counts[5] = { 9, 9, 9, 9, 9 }, total = 0;
		nt_irq_line L = { .counts = counts };
		CHECK_INT(nt_interrupts_parse_line(lines[k], 5, &L), 0);
		for (int i = 0; i < 5; i++) {
			CHECK_MSG(counts[i] == want[k][i], "line %zu column %d: %llu, expected %llu", k, i,
				  (unsigned long long)counts[i], (unsigned long long)want[k][i]);
			total += want[k][i];
		}
		CHECK_INT(L.total, total);
		CHECK_STR(L.name, names[k]);
	}
	/* A line cut inside its zero columns is an error, not a read past it. */
	uint64_t c[5];
	nt_irq_line L = { .counts = c };
	CHECK_INT(nt_interrupts_parse_line("  7:          0          0\n", 5, &L), NT_EPARSE);
}

int main(void)
{
	nt_interrupts in;
	CHECK_INT(nt_interrupts_parse(sample, &in), 0);
	CHECK_INT(in.ncols, 3);
	CHECK_INT(in.cpus[2], 3); /* CPU2 offline: no column */
	CHECK_INT(in.nlines, 7);
	CHECK_INT(in.bad_lines, 1);
	CHECK_INT(in.first_bad_line, 9);
	if (in.nlines == 7) {
		CHECK_INT(in.lines[0].irq, 0);
		CHECK_STR(in.lines[0].name, "timer");
		CHECK_STR(in.lines[0].chip, "IO-APIC");
		CHECK_STR(in.lines[0].hwirq, "2-edge");
		CHECK_INT(in.lines[1].counts[1], 7);
		CHECK_INT(in.lines[1].total, 8); /* 0 + 7 + 1 */
		CHECK_STR(in.lines[1].name, "virtio2-input.0");
		CHECK_STR(in.lines[1].chip, "PCI-MSIX-0000:00:03.0");
		CHECK_INT(in.lines[2].irq, 177);
		CHECK_INT(in.lines[2].counts[0], 1000000);
		CHECK_STR(in.lines[2].name, "eth0");
		CHECK_STR(in.lines[3].name, "mlx5_comp3@pci:0000:81:00.0");
		CHECK_STR(in.lines[4].name, "arch_timer");
		CHECK_STR(in.lines[4].hwirq, "27 Level");
		CHECK_STR(in.lines[5].name, "ehci_hcd:usb1, uhci_hcd:usb2");
		CHECK_STR(in.lines[6].name, "");
		CHECK_STR(in.lines[6].hwirq, "1234-edge");
	}
	nt_interrupts_free(&in);

	/* No header: an error, not a crash. */
	CHECK_INT(nt_interrupts_parse("", &in), NT_EPARSE);
	CHECK_INT(nt_interrupts_parse("  0: 1 2 x\n", &in), NT_EPARSE);
	/* Truncated file: the last partial line is dropped. */
	CHECK_INT(nt_interrupts_parse("  CPU0 CPU1\n 1: 5 6 IO-APIC 1-edge i8042\n 2: 7", &in), 0);
	CHECK_INT(in.nlines, 1);
	CHECK_INT(in.bad_lines, 1);
	nt_interrupts_free(&in);

	static const char soft[] =
		"                    CPU0       CPU1\n"
		"          HI:          1          0\n"
		"      NET_TX:         10         20\n"
		"      NET_RX:        300        400\n";
	int *cpus, n;
	uint64_t *rx, *tx;
	CHECK_INT(nt_softirqs_parse(soft, &cpus, &rx, &tx, &n), 0);
	CHECK_INT(n, 2);
	CHECK_INT(rx[1], 400);
	CHECK_INT(tx[0], 10);
	free(cpus);
	free(rx);
	free(tx);
	CHECK_INT(nt_softirqs_parse("CPU0\n HI: 1\n", &cpus, &rx, &tx, &n), NT_EPARSE);
	/* In pieces: one line at a time, a few, all at once; and enough
	 * lines that the counts block moves while growing. */
	for (int k = 1; k <= 12; k += 3)
		check_in_pieces(sample, k);
	for (size_t b = 2; b < 40; b++)
		check_read_fd(sample, b);
	check_read_fd("           CPU0       CPU1\n  0:         15          0   IO-APIC   2-edge      timer", 4);
	char *big = malloc(200 * 80 + sizeof(sample));
	if (big) {
		size_t len = (size_t)sprintf(big, "%s", "  CPU0 CPU1 CPU3\n");
		for (int i = 0; i < 200; i++)
			len += (size_t)sprintf(big + len, "%4d: %10d %10d %10d  PCI-MSI %d-edge q%d\n", i, i, 2 * i, 3 * i, i, i);
		check_in_pieces(big, 7);
		check_in_pieces(big, 1);
		for (size_t b = 2; b < 80; b += 7)
			check_read_fd(big, b);
		free(big);
	}
	zero_columns();
	TEST_MAIN_END();
}
