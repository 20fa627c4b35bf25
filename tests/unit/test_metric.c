/* SPDX-License-Identifier: Apache-2.0 */
/* cli/metric.c: the figure of each benchmark output bench-run --compare
 * reads. The outputs are iperf3's and netperf's formats cut down to the
 * parts that matter (and some that must not be taken instead). */
#include "cli/metric.h"
#include "harness.h"

#include <errno.h>
#include <math.h>

static char err[512];

#define NEAR(a, b) CHECK_MSG(fabs((a) - (double)(b)) <= 1e-9 * fabs((double)(b)), "%s = %.12g, expected %.12g", #a, (double)(a), (double)(b))

static int rd(enum nt_metric_source s, const char *arg, const char *text, nt_metric *m)
{
	err[0] = '\0';
	return nt_metric_read(s, arg, text, strlen(text), m, err, sizeof(err));
}

static const char iperf_tcp[] =
	"{\"start\": {\"test_start\": {\"protocol\": \"TCP\", \"duration\": 1}},\n"
	" \"intervals\": [{\"sum\": {\"bits_per_second\": 1.5e9}}, {\"sum\": {\"bits_per_second\": 2.5e9}}],\n"
	" \"end\": {\"sum_sent\": {\"bytes\": 400000000, \"bits_per_second\": 3.2e9},\n"
	"         \"sum_received\": {\"bytes\": 399000000, \"bits_per_second\": 3.19e9},\n"
	"         \"streams\": [{\"sender\": {\"bytes\": 123}}]}}\n";
static const char iperf_udp[] =
	"{\"start\": {\"test_start\": {\"protocol\": \"UDP\"}},\n"
	" \"end\": {\"sum\": {\"bits_per_second\": 1048576.5, \"lost_percent\": 0.1},\n"
	"         \"sum_received\": {\"bits_per_second\": 99}}}";
static const char iperf_error[] = "{\"start\": {}, \"intervals\": [], \"end\": {},"
				  " \"error\": \"unable to connect to server: Connection refused\"}";

static void test_iperf3(void)
{
	nt_metric m;
	CHECK_INT(rd(NT_METRIC_IPERF3, NULL, iperf_tcp, &m), 0);
	NEAR(m.value, 3.19e9); /* the receiver's, not the sender's 3.2e9 */
	CHECK_STR(m.unit, "bits/s");
	CHECK_STR(m.source, "iperf3");
	CHECK_INT(rd(NT_METRIC_AUTO, NULL, iperf_tcp, &m), 0);
	NEAR(m.value, 3.19e9);
	CHECK_INT(rd(NT_METRIC_IPERF3, NULL, iperf_udp, &m), 0);
	NEAR(m.value, 1048576.5); /* UDP: end.sum */
	CHECK_INT(rd(NT_METRIC_IPERF3, NULL, iperf_error, &m), -ENOENT);
	CHECK_MSG(strstr(err, "Connection refused") != NULL, "%s", err);
	CHECK_INT(rd(NT_METRIC_IPERF3, NULL, "Connecting to host 10.0.0.1, port 5201\n", &m), -ENOENT);
	CHECK_INT(rd(NT_METRIC_IPERF3, NULL, "", &m), -ENOENT);
}

static const char netperf_stream[] =
	"MIGRATED TCP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 10.0.0.2 () port 0 AF_INET\n"
	"Recv   Send    Send                          \n"
	"Socket Socket  Message  Elapsed              \n"
	"Size   Size    Size     Time     Throughput  \n"
	"bytes  bytes   bytes    secs.    10^6bits/sec  \n"
	"\n"
	" 87380  16384  16384    10.00    9414.27   \n";
static const char netperf_stream_k[] =
	"MIGRATED TCP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 10.0.0.2 () port 0 AF_INET\n"
	"Recv   Send    Send                          \n"
	"Socket Socket  Message  Elapsed              \n"
	"Size   Size    Size     Time     Throughput  \n"
	"bytes  bytes   bytes    secs.    10^3bits/sec  \n"
	"\n"
	"131072  16384  16384    1.00     250.5   \n";
static const char netperf_rr[] =
	"MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 10.0.0.2 () port 0 AF_INET : first burst 0\n"
	"Local /Remote\n"
	"Socket Size   Request  Resp.   Elapsed  Trans.\n"
	"Send   Recv   Size     Size    Time     Rate         \n"
	"bytes  Bytes  bytes    bytes   secs.    per sec   \n"
	"\n"
	"16384  131072 1        1       10.00    31250.60   \n"
	"16384  131072\n";
static const char netperf_keyval[] = "MIGRATED TCP STREAM TEST from 0.0.0.0 () port 0 AF_INET to 10.0.0.2 () port 0 AF_INET\n"
				     "THROUGHPUT_UNITS=10^6bits/s\n"
				     "THROUGHPUT=941.25\n"
				     "ELAPSED_TIME=10.00\n";
static const char netperf_csv[] = "MIGRATED TCP STREAM TEST from 0.0.0.0 () port 0 AF_INET to 10.0.0.2 () port 0 AF_INET\n"
				  "Elapsed Time (sec),Throughput,Throughput Units\n"
				  "10.00,1234.5,10^9bits/s\n";
static const char netperf_cols[] = "MIGRATED TCP STREAM TEST from 0.0.0.0 () port 0 AF_INET to 10.0.0.2 () port 0 AF_INET\n"
				   "Throughput Throughput  \n"
				   "           Units       \n"
				   "                       \n"
				   "9411.33    10^6bits/s  \n";

static void test_netperf(void)
{
	nt_metric m;
	/* Each output, read by the netperf reader and by the automatic one. */
	static const struct {
		const char *text;
		double value;
		const char *unit;
	} cases[] = {
		{ netperf_stream, 9414.27e6, "bits/s" }, { netperf_stream_k, 250.5e3, "bits/s" },
		{ netperf_rr, 31250.60, "transactions/s" }, { netperf_keyval, 941.25e6, "bits/s" },
		{ netperf_csv, 1234.5e9, "bits/s" }, { netperf_cols, 9411.33e6, "bits/s" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int k = 0; k < 2; k++) {
			CHECK_INT(rd(k ? NT_METRIC_AUTO : NT_METRIC_NETPERF, NULL, cases[i].text, &m), 0);
			NEAR(m.value, cases[i].value);
			CHECK_STR(m.unit, cases[i].unit);
			CHECK_STR(m.source, "netperf");
		}
	}
	CHECK_INT(rd(NT_METRIC_NETPERF, NULL, "establish control: are you sure there is a netserver listening?\n", &m),
		  -ENOENT);
	CHECK(err[0] != '\0');
	CHECK_INT(rd(NT_METRIC_AUTO, NULL, "hello\n", &m), -ENOENT);
	CHECK_MSG(strstr(err, "--metric-json") != NULL, "%s", err);

	/* A rate past the largest double once in bits/s is no figure
	 * (fuzz_metric found 1.5e308 in 10^3bits/s read as inf), in each of
	 * netperf's outputs; just below it is one. */
	static const char *const huge[] = {
		"THROUGHPUT_UNITS=10^3bits/s\nTHROUGHPUT=1.5e308\n",
		"Elapsed Time (sec),Throughput,Throughput Units\n10.00,1.5e308,10^3bits/s\n",
		"Size   Size    Size     Time     Throughput  \n"
		"bytes  bytes   bytes    secs.    10^9bits/sec  \n\n"
		" 87380  16384  16384    10.00    1e300   \n",
		"Throughput Throughput  \n           Units       \n\n1e305    10^6bits/s  \n",
	};
	for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		m.value = 0;
		CHECK_INT(rd(NT_METRIC_NETPERF, NULL, huge[i], &m), -ENOENT);
		CHECK_MSG(strstr(err, "out of range") != NULL, "%zu: %s", i, err);
		CHECK(isfinite(m.value));
	}
	CHECK_INT(rd(NT_METRIC_NETPERF, NULL, "THROUGHPUT_UNITS=10^3bits/s\nTHROUGHPUT=1.5e305\n", &m), 0);
	NEAR(m.value, 1.5e308);
	CHECK(isfinite(m.value));
}

static void test_json_path(void)
{
	nt_metric m;
	CHECK_INT(rd(NT_METRIC_JSON, "end.sum_sent.bits_per_second", iperf_tcp, &m), 0);
	NEAR(m.value, 3.2e9);
	CHECK_STR(m.source, "json");
	CHECK_INT(rd(NT_METRIC_JSON, ".end.sum_sent.bytes", iperf_tcp, &m), 0);
	NEAR(m.value, 400000000);
	CHECK_INT(rd(NT_METRIC_JSON, "intervals[1].sum.bits_per_second", iperf_tcp, &m), 0);
	NEAR(m.value, 2.5e9);
	CHECK_INT(rd(NT_METRIC_JSON, "intervals.0.sum.bits_per_second", iperf_tcp, &m), 0);
	NEAR(m.value, 1.5e9);
	CHECK_INT(rd(NT_METRIC_JSON, "intervals[-1].sum.bits_per_second", iperf_tcp, &m), 0);
	NEAR(m.value, 2.5e9);
	CHECK_INT(rd(NT_METRIC_JSON, "end.streams[0].sender.bytes", iperf_tcp, &m), 0);
	NEAR(m.value, 123);
	CHECK_INT(rd(NT_METRIC_JSON, "[1]", "[10, 20.5]", &m), 0);
	NEAR(m.value, 20.5);
	CHECK_INT(rd(NT_METRIC_JSON, "end.nothing", iperf_tcp, &m), -ENOENT);
	CHECK_MSG(strstr(err, "absent") != NULL, "%s", err);
	CHECK_INT(rd(NT_METRIC_JSON, "start.test_start.protocol", iperf_tcp, &m), -ENOENT);
	CHECK_MSG(strstr(err, "not a number") != NULL, "%s", err);
	CHECK_INT(rd(NT_METRIC_JSON, "intervals[5].sum", iperf_tcp, &m), -ENOENT);
	CHECK_INT(rd(NT_METRIC_JSON, "intervals[x]", iperf_tcp, &m), -EINVAL);
	CHECK_INT(rd(NT_METRIC_JSON, "a..b", "{\"a\": {\"b\": 1}}", &m), -EINVAL);
	CHECK_INT(rd(NT_METRIC_JSON, "", iperf_tcp, &m), -EINVAL);
	CHECK_INT(rd(NT_METRIC_JSON, "a", "not json", &m), -ENOENT);
}

static void test_regex(void)
{
	nt_metric m;
	const char out[] = "run 1\nlatency p99: 12.5 us\nlatency p99: 99 us\nrate=3.5e6 ops/s\n";
	CHECK_INT(rd(NT_METRIC_REGEX, "p99: ([0-9.]+) us", out, &m), 0);
	NEAR(m.value, 12.5); /* the first match */
	CHECK_STR(m.source, "regex");
	CHECK_INT(rd(NT_METRIC_REGEX, "rate=([^ ]+)", out, &m), 0);
	NEAR(m.value, 3.5e6);
	CHECK_INT(rd(NT_METRIC_REGEX, "nothing ([0-9]+)", out, &m), -ENOENT);
	CHECK_INT(rd(NT_METRIC_REGEX, "run ([a-z]+)", "run abc\n", &m), -ENOENT);
	CHECK_MSG(strstr(err, "not a number") != NULL, "%s", err);
	CHECK_INT(rd(NT_METRIC_REGEX, "p99: [0-9.]+", out, &m), -EINVAL); /* no group */
	CHECK_INT(rd(NT_METRIC_REGEX, "(a)(b)", out, &m), -EINVAL); /* two groups */
	CHECK_INT(rd(NT_METRIC_REGEX, "(", out, &m), -EINVAL);
}

/* A number of more than 63 characters is a number in every reader (a copy
 * into a 64-byte buffer made the regex's "not a number" and cut netperf's
 * -k value short: 0.000...0001 read as 0). */
static void test_long_numbers(void)
{
	nt_metric m;
	char num[200], text[600];
	snprintf(num, sizeof(num), "0.%0*d125", 90, 0); /* 1.25e-91, 94 characters */
	snprintf(text, sizeof(text), "latency %s us\n", num);
	CHECK_INT(rd(NT_METRIC_REGEX, "latency ([0-9.]+) us", text, &m), 0);
	NEAR(m.value / 1.25e-91, 1);
	snprintf(text, sizeof(text), "THROUGHPUT_UNITS=10^6bits/s\nTHROUGHPUT=%s\n", num);
	CHECK_INT(rd(NT_METRIC_NETPERF, NULL, text, &m), 0);
	NEAR(m.value / 1.25e-85, 1);
	snprintf(text, sizeof(text), "Throughput,Throughput Units\n%s,10^6bits/s\n", num);
	CHECK_INT(rd(NT_METRIC_NETPERF, NULL, text, &m), 0);
	NEAR(m.value / 1.25e-85, 1);
	snprintf(text, sizeof(text), "Recv Send Send Elapsed Throughput\nbytes bytes bytes secs. 10^6bits/sec\n\n"
				     "131072 16384 16384 1.00 %s\n", num);
	CHECK_INT(rd(NT_METRIC_NETPERF, NULL, text, &m), 0);
	NEAR(m.value / 1.25e-85, 1);
	/* And what follows a number still makes it none. */
	snprintf(text, sizeof(text), "latency %sx us\n", num);
	CHECK_INT(rd(NT_METRIC_REGEX, "latency ([0-9.x]+) us", text, &m), -ENOENT);
	CHECK_MSG(strstr(err, "not a number") != NULL && strstr(err, "...") != NULL, "%s", err);
}

/* iperf3 3.12's --json over loopback (the end object as it printed it,
 * intervals and streams left out): the TCP run's retransmits and CPU, the
 * UDP run's loss and jitter. */
static const char iperf_tcp_real[] =
	"{\"start\": {\"version\": \"iperf 3.12\", \"test_start\": {\"protocol\": \"TCP\", \"num_streams\": 1,"
	" \"duration\": 1, \"reverse\": 0}},\n \"intervals\": [],\n"
	" \"end\": {\"streams\": [],\n"
	"  \"sum_sent\": {\"start\": 0, \"end\": 1.000123, \"seconds\": 1.000123, \"bytes\": 3272867840,"
	" \"bits_per_second\": 26179722614.11846, \"retransmits\": 10, \"sender\": true},\n"
	"  \"sum_received\": {\"start\": 0, \"end\": 1.00073, \"seconds\": 1.00073, \"bytes\": 3272867840,"
	" \"bits_per_second\": 26163843114.5264, \"sender\": true},\n"
	"  \"cpu_utilization_percent\": {\"host_total\": 97.48182617031475, \"host_user\": 0, \"host_system\":"
	" 97.48182617031475, \"remote_total\": 45.43562307454791, \"remote_user\": 1.1918192455775183,"
	" \"remote_system\": 44.24370390281582},\n"
	"  \"sender_tcp_congestion\": \"bbr\", \"receiver_tcp_congestion\": \"bbr\"}}\n";
static const char iperf_udp_real[] =
	"{\"start\": {\"test_start\": {\"protocol\": \"UDP\", \"duration\": 1}}, \"intervals\": [],\n"
	" \"end\": {\"sum\": {\"start\": 0, \"end\": 1.000165, \"seconds\": 1.000165, \"bytes\": 1277952,"
	" \"bits_per_second\": 10222798.176145907, \"jitter_ms\": 0.00667483377467247, \"lost_packets\": 0,"
	" \"packets\": 39, \"lost_percent\": 0, \"sender\": true},"
	" \"cpu_utilization_percent\": {\"host_total\": 2.7395826480140193, \"remote_total\": 0.14677402099828332}}}\n";

/* The other figure NAME of O, or NAN. */
static double other(const nt_metric_others *o, const char *name, const char **unit)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->m[i].name, name)) {
			CHECK_MSG(o->m[i].lower_is_better, "%s is lower-is-better", name);
			if (unit)
				*unit = o->m[i].unit;
			return o->m[i].value;
		}
	return NAN;
}

static void others(enum nt_metric_source s, const char *text, nt_metric_others *o)
{
	nt_metric_others_read(s, text, strlen(text), o);
}

static void test_iperf3_others(void)
{
	nt_metric_others o;
	const char *unit = NULL;
	nt_metric m;
	CHECK_INT(rd(NT_METRIC_AUTO, NULL, iperf_tcp_real, &m), 0);
	NEAR(m.value, 26163843114.5264); /* the primary: end.sum_received */
	others(NT_METRIC_AUTO, iperf_tcp_real, &o);
	CHECK_INT((int)o.n, 3);
	NEAR(other(&o, "retransmits", &unit), 10);
	CHECK_STR(unit, "");
	NEAR(other(&o, "cpu_host_percent", &unit), 97.48182617031475);
	CHECK_STR(unit, "%");
	NEAR(other(&o, "cpu_remote_percent", NULL), 45.43562307454791);
	others(NT_METRIC_IPERF3, iperf_udp_real, &o);
	CHECK_INT((int)o.n, 4);
	NEAR(other(&o, "lost_percent", NULL), 0);
	NEAR(other(&o, "jitter_ms", &unit), 0.00667483377467247);
	CHECK_STR(unit, "ms");
	CHECK(isnan(other(&o, "retransmits", NULL)));
	/* The hand-made sample has no CPU and no retransmits: none. */
	others(NT_METRIC_IPERF3, iperf_tcp, &o);
	CHECK_INT((int)o.n, 0);
	others(NT_METRIC_IPERF3, "not json", &o);
	CHECK_INT((int)o.n, 0);
	/* A negative count is no figure. */
	others(NT_METRIC_IPERF3, "{\"end\": {\"sum_sent\": {\"retransmits\": -3}}}", &o);
	CHECK_INT((int)o.n, 0);
	/* A JSON path or a regular expression names one figure only. */
	others(NT_METRIC_JSON, iperf_tcp_real, &o);
	CHECK_INT((int)o.n, 0);
	others(NT_METRIC_REGEX, iperf_tcp_real, &o);
	CHECK_INT((int)o.n, 0);
}

/* netperf -j omni with an output selection, as its author showed it on
 * netperf-talk (2010-09-14, "Additional histogram statistics"): -o's CSV,
 * and the same selection as -k's keys; CPU -1 where netperf measured none. */
static const char netperf_rr_csv[] =
	"OMNI TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to localhost (127.0.0.1) port 0 AF_INET\n"
	"Elapsed Time (sec),Throughput,Throughput Units,Round Trip Latency usec/tran,Minimum Latency "
	"Microseconds,Maximum Latency Microseconds,50th Percentile Latency Microseconds,90th Percentile Latency "
	"Microseconds,99th Percentile Latency Microseconds,Mean Latency Microseconds,Stddev Latency Microseconds\n"
	"1.00,27404.75,Trans/s,36.490,26,110,33,40,41,35.00,3.68\n";
static const char netperf_rr_k[] =
	"OMNI TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to localhost (127.0.0.1) port 0 AF_INET\n"
	"ELAPSED_TIME=1.00\nTHROUGHPUT=27404.75\nTHROUGHPUT_UNITS=Trans/s\nRT_LATENCY=36.490\nMIN_LATENCY=26\n"
	"MAX_LATENCY=110\nP50_LATENCY=33\nP90_LATENCY=40\nP99_LATENCY=41\nMEAN_LATENCY=35.00\n"
	"STDDEV_LATENCY=3.68\nLOCAL_CPU_UTIL=-1.00\nREMOTE_CPU_UTIL=12.5\n";

static void test_netperf_others(void)
{
	nt_metric_others o;
	nt_metric m;
	const char *unit = NULL;
	for (int k = 0; k < 2; k++) {
		const char *text = k ? netperf_rr_k : netperf_rr_csv;
		CHECK_INT(rd(NT_METRIC_AUTO, NULL, text, &m), 0);
		NEAR(m.value, 27404.75);
		CHECK_STR(m.unit, "Trans/s");
		others(k ? NT_METRIC_NETPERF : NT_METRIC_AUTO, text, &o);
		CHECK_INT((int)o.n, k ? 8 : 7);
		NEAR(other(&o, "p50_latency", &unit), 33);
		CHECK_STR(unit, "us");
		NEAR(other(&o, "p90_latency", NULL), 40);
		NEAR(other(&o, "p99_latency", NULL), 41);
		NEAR(other(&o, "mean_latency", NULL), 35);
		NEAR(other(&o, "min_latency", NULL), 26);
		NEAR(other(&o, "max_latency", NULL), 110);
		CHECK(isnan(other(&o, "local_cpu_util", NULL))); /* -1: not measured */
		NEAR(other(&o, "rt_latency", NULL), 36.49);
		if (k)
			NEAR(other(&o, "remote_cpu_util", &unit), 12.5);
	}
	/* The classic table has none. */
	others(NT_METRIC_NETPERF, netperf_stream, &o);
	CHECK_INT((int)o.n, 0);
	others(NT_METRIC_NETPERF, "P99_LATENCY=abc\nMEAN_LATENCY=\n", &o);
	CHECK_INT((int)o.n, 0);
}

/* neper's tcp_rr (its README's output with the latency lines its
 * histo.c prints for --percentiles=50,99; the options first, decoys among
 * them) and tcp_stream with throughput_units. */
static const char neper_rr[] =
	"percentiles=50,99\nnum_flows=1\ntest_length=10\nlocal_throughput=0\nremote_throughput=0\n"
	"invalid_secret_count=0\ntime_start=1306173.666348235\nutime_start=0.062141\nutime_end=0.348902\n"
	"stime_start=0.003883\nstime_end=5.798208\nmaxrss_start=7896\nmaxrss_end=7896\nnum_transactions=329605\n"
	"latency_min=0.000015000\nlatency_max=0.012611000\nlatency_mean=0.000029000\n"
	"latency_stddev=0.000086000\nlatency_p50=0.000026000\nlatency_p99=0.000068000\nstart_index=0\n"
	"end_index=9\nnum_samples=10\nthroughput=33009.84\ncorrelation_coefficient=1.00\n"
	"time_end=1306183.666374314\n";
static const char neper_stream[] = "num_flows=1\ntest_length=10\nutime_start=0.1\nutime_end=0.2\n"
				   "stime_start=0\nstime_end=4.5\nnum_transactions=812345\n"
				   "throughput_Mbps=9412.50\ncorrelation_coefficient=0.99\nthroughput=9.41\n"
				   "throughput_units=Gbit/s\n";

static void test_neper(void)
{
	nt_metric m;
	nt_metric_others o;
	const char *unit = NULL;
	CHECK(nt_metric_is_neper(neper_rr));
	CHECK(!nt_metric_is_neper(netperf_rr_k));
	CHECK_INT(rd(NT_METRIC_AUTO, NULL, neper_rr, &m), 0);
	NEAR(m.value, 33009.84);
	CHECK_STR(m.unit, "transactions/s");
	CHECK_STR(m.source, "neper");
	others(NT_METRIC_AUTO, neper_rr, &o);
	CHECK_INT((int)o.n, 7);
	NEAR(other(&o, "latency_p50", &unit), 0.000026);
	CHECK_STR(unit, "s");
	NEAR(other(&o, "latency_p99", NULL), 0.000068);
	NEAR(other(&o, "latency_mean", NULL), 0.000029);
	NEAR(other(&o, "cpu_s", NULL), (0.348902 - 0.062141) + (5.798208 - 0.003883));
	CHECK_INT(rd(NT_METRIC_NEPER, NULL, neper_stream, &m), 0);
	NEAR(m.value, 9.41e9); /* throughput in throughput_units, before throughput_Mbps */
	CHECK_STR(m.unit, "bits/s");
	CHECK_INT(rd(NT_METRIC_NEPER, NULL, "num_transactions=1\nthroughput=5\nthroughput_units=MiB/s\n", &m), 0);
	NEAR(m.value, 5 * 8 * 1048576.0);
	CHECK_INT(rd(NT_METRIC_NEPER, NULL, "throughput_Mbps=940.5\n", &m), 0);
	NEAR(m.value, 940.5e6);
	CHECK_INT(rd(NT_METRIC_NEPER, NULL, "throughput=5\nthroughput_units=furlongs\n", &m), -ENOENT);
	CHECK_MSG(strstr(err, "furlongs") != NULL, "%s", err);
	CHECK_INT(rd(NT_METRIC_NEPER, NULL, "num_transactions=0\n", &m), -ENOENT);
	CHECK_INT(rd(NT_METRIC_NEPER, NULL, "throughput=1e308\nthroughput_units=GiB/s\n", &m), -ENOENT);
	/* A key neper never prints is not shown: only plain names. */
	others(NT_METRIC_NEPER, "latency_\x1b[31m=1\nlatency_p99.9=0.5\nlatency_=3\n", &o);
	CHECK_INT((int)o.n, 1);
	NEAR(other(&o, "latency_p99.9", NULL), 0.5);
}

/* The figure NAME of O whatever its direction, or NAN. */
static double fig(const nt_metric_others *o, const char *name, const char **unit)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->m[i].name, name)) {
			if (unit)
				*unit = o->m[i].unit;
			return o->m[i].value;
		}
	return NAN;
}

/* neper's samples file (-A FILE): two stream flows, each a running total
 * of bytes; flow 1 has a fifth row flow 0 lacks (that interval is left
 * out), and a line cut short and one not of numbers are skipped. The
 * intervals' sums: 200 + 100, 300 + 100, 400 + 200 bytes/s, in bits/s
 * 2400, 3200, 4800: p10 by linear interpolation 2400 + 0.2 * 800. An RR
 * file: its rates 2000 and 1000 transactions/s, its worst p99 the second
 * row's (the first row's latencies count: they are an interval's). */
static void test_neper_samples(void)
{
	static const char hdr[] = "tid,flow_id,time,bytes_read,bytes_read/s,utime,stime,maxrss,minflt,majflt,"
				  "nvcsw,nivcsw\n";
	char text[2048];
	snprintf(text, sizeof(text),
		 "%s0,0,10.000000000,100,0.00,0.1,0.1,1,1,0,1,1\n"
		 "1,1,10.100000000,50,0.00,0.1,0.1,1,1,0,1,1\n"
		 "0,0,11.000000000,300,0.00,0.1,0.1,1,1,0,1,1\n"
		 "1,1,11.100000000,150,0.00,0.1,0.1,1,1,0,1,1\n"
		 "0,0,12.000000000,600,0.00,0.1,0.1,1,1,0,1,1\n"
		 "1,1,12.100000000,250,0.00,0.1,0.1,1,1,0,1,1\n"
		 "0,0,13.000000000,1000,0.00,0.1,0.1,1,1,0,1,1\n"
		 "1,1,13.100000000,450,0.00,0.1,0.1,1,1,0,1,1\n"
		 "0,0,13.5\n"
		 "x,y,z,1,2,3,4,5,6,7,8,9\n"
		 "1,1,14.100000000,1450,0.00,0.1,0.1,1,1,0,1,1\n",
		 hdr);
	nt_metric_others o = { .n = 0 };
	const char *unit = NULL;
	CHECK_INT(nt_metric_neper_samples(text, &o, err, sizeof(err)), 0);
	CHECK_INT((int)o.n, 3);
	NEAR(fig(&o, "interval_rate_p10", &unit), 2560);
	CHECK_STR(unit, "bits/s");
	NEAR(fig(&o, "interval_rate_p50", NULL), 3200);
	NEAR(fig(&o, "interval_rate_min", NULL), 2400);
	CHECK(!o.m[0].lower_is_better);

	static const char rr[] =
		"tid,flow_id,time,transactions,transactions/s,utime,stime,maxrss,minflt,majflt,nvcsw,nivcsw,"
		"latency_min,latency_mean,latency_max,latency_stddev,latency_p50,latency_p99\n"
		"0,0,1.0,1000,0,0,0,0,0,0,0,0,0.0001,0.0005,0.01,0.001,0.0004,0.001\n"
		"0,0,2.0,3000,0,0,0,0,0,0,0,0,0.0001,0.0005,0.01,0.001,0.0004,0.004\n"
		"0,0,3.0,4000,0,0,0,0,0,0,0,0,0.0001,0.0005,0.01,0.001,0.0004,0.002\n";
	o.n = 0;
	CHECK_INT(nt_metric_neper_samples(rr, &o, err, sizeof(err)), 0);
	NEAR(fig(&o, "interval_rate_min", &unit), 1000);
	CHECK_STR(unit, "transactions/s");
	NEAR(fig(&o, "interval_rate_p10", NULL), 1100);
	NEAR(fig(&o, "interval_latency_p99_max", &unit), 0.004);
	CHECK_STR(unit, "s");
	NEAR(fig(&o, "interval_latency_p50_max", NULL), 0.0004);
	for (size_t i = 0; i < o.n; i++)
		CHECK_MSG(o.m[i].lower_is_better == !strncmp(o.m[i].name, "interval_latency", 16), "%s", o.m[i].name);

	/* Not neper's file; one row a flow (no interval). */
	o.n = 0;
	CHECK_INT(nt_metric_neper_samples("time,bytes\n1,2\n", &o, err, sizeof(err)), -EINVAL);
	CHECK_MSG(strstr(err, "not neper's samples file") != NULL, "%s", err);
	snprintf(text, sizeof(text), "%s0,0,1.0,5,0,0,0,0,0,0,0,0\n", hdr);
	CHECK_INT(nt_metric_neper_samples(text, &o, err, sizeof(err)), -ENOENT);
	CHECK_MSG(strstr(err, "no interval") != NULL, "%s", err);
	CHECK_INT((int)o.n, 0);
}

int main(void)
{
	test_iperf3();
	test_netperf();
	test_json_path();
	test_regex();
	test_long_numbers();
	test_iperf3_others();
	test_netperf_others();
	test_neper();
	test_neper_samples();
	TEST_MAIN_END();
}
