/* SPDX-License-Identifier: Apache-2.0 */
/* The figure a benchmark printed, read from its standard output (nettune
 * bench-run --compare): iperf3's --json, netperf's classic table or its
 * key=value (-k) and CSV (-o) outputs, a dotted path into any JSON
 * document, or the first match of a regular expression. Pure functions of
 * the text: nothing is read or kept. */
#ifndef NT_CLI_METRIC_H
#define NT_CLI_METRIC_H

#include <stddef.h>

enum nt_metric_source {
	NT_METRIC_AUTO, /* iperf3's JSON if the output is JSON, else netperf's */
	NT_METRIC_IPERF3,
	NT_METRIC_NETPERF,
	NT_METRIC_JSON, /* ARG: a path such as end.streams[0].sender.bytes */
	NT_METRIC_REGEX, /* ARG: a POSIX ERE with one group */
};

typedef struct nt_metric {
	double value;
	char unit[32]; /* "bits/s", "transactions/s", "" when not known */
	char source[16]; /* which reader took it: "iperf3", "netperf", "json", "regex" */
} nt_metric;

/* The figure in TEXT (LEN bytes, not necessarily NUL-terminated) by
 * SOURCE (ARG as above, borrowed). Returns 0 with *OUT filled, -ENOENT
 * when the text holds no such figure, -EINVAL for a bad ARG (a path or
 * expression that cannot be used), with why in ERR. */
int nt_metric_read(enum nt_metric_source source, const char *arg, const char *text, size_t len, nt_metric *out,
		   char *err, size_t errsize);

/* The parts, for their tests. TEXT is NUL-terminated. */
int nt_metric_iperf3(const char *text, nt_metric *out, char *err, size_t errsize);
int nt_metric_netperf(const char *text, nt_metric *out, char *err, size_t errsize);
int nt_metric_json_path(const char *text, const char *path, nt_metric *out, char *err, size_t errsize);
int nt_metric_regex(const char *text, const char *re, nt_metric *out, char *err, size_t errsize);

#endif
