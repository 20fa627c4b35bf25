/* SPDX-License-Identifier: Apache-2.0 */
/* Values from requests are held to what the kernel itself writes back:
 * strict cpulists in profiles, and sysctl values normalised before they
 * are written (so the next plan compares what was written). */
#include "harness.h"
#include "base/cpuset.h"
#include "settings/setting.h"

static const char *norm(const char *key, const char *v)
{
	static char out[256];
	if (nt_sysctl_normalize(key, v, out, sizeof(out)) < 0)
		return "(refused)";
	return out;
}

int main(void)
{
	CHECK(nt_cpulist_strict(""));
	CHECK(nt_cpulist_strict("0"));
	CHECK(nt_cpulist_strict("0-7,16,20-23"));
	CHECK(nt_cpulist_strict("10-255"));
	CHECK(!nt_cpulist_strict(" 0-3"));
	CHECK(!nt_cpulist_strict("0-3 "));
	CHECK(!nt_cpulist_strict("0-3\n"));
	CHECK(!nt_cpulist_strict("00-3"));
	CHECK(!nt_cpulist_strict("0-03"));
	CHECK(!nt_cpulist_strict("0, 1"));
	CHECK(!nt_cpulist_strict("0,,1"));
	CHECK(!nt_cpulist_strict("0-"));
	CHECK(!nt_cpulist_strict("-1"));
	CHECK(!nt_cpulist_strict("1-2-3"));
	CHECK(!nt_cpulist_strict(","));
	CHECK(!nt_cpulist_strict(NULL));

	CHECK_STR(norm("net.core.rmem_max", "16777216\n"), "16777216");
	CHECK_STR(norm("net.core.rmem_max", " 0016777216"), "16777216");
	CHECK_STR(norm("net.ipv4.tcp_rmem", "4096\t87380  16777216\n"), "4096 87380 16777216");
	CHECK_STR(norm("net.ipv4.ip_local_port_range", "1024\t65000"), "1024 65000");
	CHECK_STR(norm("net.core.default_qdisc", "fq"), "fq");
	CHECK_STR(norm("net.bogus", "1"), "(refused)");
	/* Shape checks still refuse what normalising would hide. */
	char why[256];
	CHECK(nt_sysctl_check_shape("net.core.default_qdisc", "fq\n", why, sizeof(why)) < 0);
	CHECK(nt_sysctl_check_shape("net.core.default_qdisc", " fq", why, sizeof(why)) < 0);
	TEST_MAIN_END();
}
