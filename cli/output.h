/* SPDX-License-Identifier: Apache-2.0 */
/* What the CLI prints for people: colour when writing to a terminal,
 * tables whose columns line up, RFC 9457 problem documents as the lines
 * that say what was wrong, durations and times. Every command that prints
 * for people uses these, so they all look alike and all honour NO_COLOR.
 *
 * Colour is decided once per stream: on only when the stream is a
 * terminal, NO_COLOR is unset or empty (https://no-color.org) and TERM is
 * not "dumb". Output to a pipe or file never holds an escape code. */
#ifndef NT_CLI_OUTPUT_H
#define NT_CLI_OUTPUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* SGR parameters, for nt_out_paint and nt_table_sgr. */
#define NT_SGR_BOLD "1"
#define NT_SGR_DIM "2"
#define NT_SGR_RED "31"
#define NT_SGR_GREEN "32"
#define NT_SGR_YELLOW "33"
#define NT_SGR_CYAN "36"
#define NT_SGR_BOLD_RED "1;31"

typedef struct nt_out {
	FILE *f;
	bool color;
} nt_out;

/* Whether F should get colour (see above). */
bool nt_out_want_color(FILE *f);
/* O writes to F, with colour when nt_out_want_color(F). */
void nt_out_init(nt_out *o, FILE *f);

void nt_out_printf(nt_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* FMT in colour SGR (NULL: plain) when O has colour. */
void nt_out_paint(nt_out *o, const char *sgr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The colour of a transaction status or step result word: green for what
 * took effect, yellow for what waits or was put back on purpose, red for
 * failures; NULL for none. */
const char *nt_out_status_sgr(const char *word);

/* S with every run of whitespace (the tabs of tcp_rmem) made one space,
 * into DST. Returns DST. */
char *nt_out_oneline(char *dst, size_t size, const char *s);
/* MS as "850 ms", "2.4 s", "3 min 5 s". Returns DST. */
char *nt_out_duration(char *dst, size_t size, long long ms);
/* An API time ("2026-11-30T16:52:00.615Z") as "2026-11-30 16:52:00 UTC"
 * without the fraction; anything else as given. Returns DST. */
char *nt_out_time(char *dst, size_t size, const char *iso);
/* An API time as milliseconds since the epoch, or -1 when it is not one. */
long long nt_out_parse_time_ms(const char *iso);

/* A table for people: columns as wide as their widest cell (counting
 * characters, not UTF-8 bytes), two spaces apart, the last column not
 * padded. Cells are copied. A cell may have its own colour, which never
 * counts towards the width. */
typedef struct nt_table nt_table;

/* NCOLS columns with HEADERS (NCOLS strings, printed dim and upper-case
 * as given) or NULL for no header row. NULL when out of memory. */
nt_table *nt_table_new(int ncols, const char *const *headers);
/* A row of NCOLS cells (NULL cells print as ""). Returns 0 or -ENOMEM. */
int nt_table_add(nt_table *t, const char *const *cells);
/* Colour cell COL of the last row added with SGR (copied by pointer: a
 * string literal, such as NT_SGR_RED or nt_out_status_sgr's answer). */
void nt_table_sgr(nt_table *t, int col, const char *sgr);
size_t nt_table_rows(const nt_table *t);
/* Print with INDENT spaces before every line. */
void nt_table_print(const nt_table *t, nt_out *o, int indent);
void nt_table_free(nt_table *t);

/* An agent's error answer for people, on O (stderr): "nettune: " and what
 * went wrong, one line per error of a refused profile
 * ("  $.rings[0].rx: rx 99999 is above enos0's maximum 8192"), and what to
 * do about a conflict or a missing token. PROBLEM is the parsed problem
 * document (NULL when the body was not JSON: BODY is shown instead, up to
 * its first line); HTTP_STATUS the answer's status. */
void nt_out_problem(nt_out *o, long http_status, const json_t *problem, const char *body);



/* A wait shown on a terminal: "LABEL… 3 s" on stderr, rewritten in place
 * each second from the second second on, and wiped at the end. Nothing at
 * all when stderr is not a terminal, so logs and pipes stay clean; it
 * uses only carriage returns and spaces, no escape codes. */
typedef struct nt_progress {
	bool on;
	long long start_ms, last_s;
	size_t shown; /* characters on the line now */
	char label[128];
} nt_progress;

void nt_progress_begin(nt_progress *p, const char *label);
/* Call as often as convenient; it redraws at most once a second. */
void nt_progress_tick(nt_progress *p);
void nt_progress_end(nt_progress *p);

#endif
