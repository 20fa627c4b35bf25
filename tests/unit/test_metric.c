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

int main(void)
{
	test_iperf3();
	test_netperf();
	test_json_path();
	test_regex();
	test_long_numbers();
	TEST_MAIN_END();
}
