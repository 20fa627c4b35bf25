/* SPDX-License-Identifier: Apache-2.0 */
/* The figures a benchmark printed, read from its standard output (nettune
 * bench-run --compare, tune): the primary figure, the one the gates and
 * the race judge, from iperf3's --json, netperf's classic table or its
 * key=value (-k) and CSV (-o) outputs, neper's key=value lines, a dotted
 * path into any JSON document, or the first match of a regular
 * expression; and beside it the other figures the same output holds, each
 * with the direction that is better (nt_metric_others_read,
 * cli/metric_others.c): iperf3's retransmits and CPU, netperf's latency
 * percentiles and CPU, neper's latencies and CPU time. Pure functions of
 * the text: nothing is read or kept. */
#ifndef NT_CLI_METRIC_H
#define NT_CLI_METRIC_H

#include <stdbool.h>
#include <stddef.h>

enum nt_metric_source {
	NT_METRIC_AUTO, /* iperf3's JSON if the output is JSON, else netperf's */
	NT_METRIC_IPERF3,
	NT_METRIC_NETPERF,
	NT_METRIC_JSON, /* ARG: a path such as end.streams[0].sender.bytes */
	NT_METRIC_REGEX, /* ARG: a POSIX ERE with one group */
	NT_METRIC_NEPER, /* neper's key=value lines (throughput=, throughput_units=) */
};

typedef struct nt_metric {
	double value;
	char unit[32]; /* "bits/s", "transactions/s", "" when not known */
	char source[16]; /* which reader took it: "iperf3", "netperf", "neper", "json", "regex" */
} nt_metric;

/* The other figures of one output, beside the primary. */
#define NT_METRIC_MAX_OTHERS 16
typedef struct nt_metric_other {
	char name[40]; /* the tool's own word: "retransmits", "p99_latency", "latency_p99" */
	double value; /* finite, 0 or more */
	char unit[16]; /* "%", "us", "s", "" for a count */
	bool lower_is_better;
} nt_metric_other;

typedef struct nt_metric_others {
	nt_metric_other m[NT_METRIC_MAX_OTHERS];
	size_t n;
} nt_metric_others;

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
int nt_metric_neper(const char *text, nt_metric *out, char *err, size_t errsize);

/* Whether TEXT looks like neper's output: a "throughput=" line and a
 * "num_transactions=" line (netperf's -k keys are upper case). */
bool nt_metric_is_neper(const char *text);

/* The other figures in TEXT (LEN bytes) for SOURCE into *OUT (emptied
 * first): for iperf3's JSON "retransmits" (TCP, end.sum_sent),
 * "cpu_host_percent" and "cpu_remote_percent" (end.cpu_utilization_percent
 * host_total, remote_total), for UDP "lost_percent" and "jitter_ms"
 * (end.sum); for netperf's -k keys or -o columns "mean_latency",
 * "p50_latency", "p90_latency", "p99_latency", "min_latency",
 * "max_latency" (microseconds), "local_cpu_util" and "remote_cpu_util"
 * (%, absent when netperf measured none: it prints -1); for neper every
 * latency_* key (seconds) and "cpu_s" (its user and system time,
 * utime_end - utime_start + stime_end - stime_start). Every one is lower
 * is better; a value that is not a finite number of 0 or more is left
 * out. A JSON path or a regular expression has none. Never fails: what
 * is not there is not in *OUT. */
void nt_metric_others_read(enum nt_metric_source source, const char *text, size_t len, nt_metric_others *out);

/* Its parts, for their tests: TEXT NUL-terminated, *OUT added to. */
void nt_metric_others_iperf3(const char *text, nt_metric_others *out);
void nt_metric_others_netperf(const char *text, nt_metric_others *out);
void nt_metric_others_neper(const char *text, nt_metric_others *out);

/* The figures of neper's samples file TEXT (its -A FILE: a row per flow
 * per interval; cli/metric_neper_samples.c), added to *OUT: the run's
 * rate in each interval summed over the flows (each flow's count between
 * two of its rows over their time apart; only intervals every flow
 * counted), as "interval_rate_p10", "interval_rate_p50" and
 * "interval_rate_min" (bits/s for a stream test, transactions/s for an RR
 * one; higher is better), and for each latency_pN column the worst
 * interval's, "interval_latency_pN_max" (s; lower is better). Returns 0,
 * -EINVAL when TEXT is not such a file, -ENOENT when it holds no interval
 * (ERR says which), -ENOMEM. */
int nt_metric_neper_samples(const char *text, nt_metric_others *out, char *err, size_t errsize);

/* The helpers the readers share (cli/metric.c). The value of KEY= at the
 * start of a line of TEXT, NULL when absent: where it starts and, in *LEN,
 * its length to the end of its line (trailing blanks dropped). */
const char *nt_metric_keyval(const char *text, const char *key, size_t *len);
/* Whether S[0..N) is one finite number and nothing else, into *D. */
bool nt_metric_number_in(const char *s, size_t n, double *d);

#endif
