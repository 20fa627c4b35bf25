/* SPDX-License-Identifier: Apache-2.0 */
/* Profile validation (every error kind with its JSON path), CPU dealing,
 * the "local" policy's start offsets and sysctl shapes, on a host model
 * built by hand: 4 nodes of 16 CPUs like the x460
 * (docs/field-reports.md#host-x460), CPU 62 offline. */
#include "harness.h"
#include "test_json.h"
#include "engine/profile.h"
#include "base/suggest.h"
#include "settings/setting.h"
#include "setting_util.h"
#include "placement/irq.h"

#include <errno.h>

static nt_numa_node nodes[4];
static nt_irq irqs[12];
static nt_nic nics[7];
static nt_bond bonds[1];
static int eth0_irqs[] = { 0 }, eth1_irqs[] = { 1 }, eth2_irqs[] = { 5, 2, 4, 3 };
static int eth3_irqs[] = { 6 }, eth4_irqs[] = { 7, 8 }, enos0_irqs[] = { 9, 10 };

static void host(nt_topology *t)
{
	memset(t, 0, sizeof(*t));
	for (int c = 0; c < 64; c++) {
		nt_cpuset_set(&t->cpus_present, c);
		if (c != 62)
			nt_cpuset_set(&t->cpus_online, c);
	}
	t->ncpus_possible = 64;
	for (int n = 0; n < 4; n++) {
		nodes[n].id = n;
		nt_cpuset_zero(&nodes[n].cpus);
		for (int c = n * 16; c < n * 16 + 16; c++)
			if (c != 62)
				nt_cpuset_set(&nodes[n].cpus, c);
	}
	t->nodes = nodes;
	t->nnodes = 4;
	for (int i = 0; i < 12; i++) {
		memset(&irqs[i], 0, sizeof(irqs[i]));
		irqs[i].irq = 100 + i * 8;
	}
	irqs[11].managed = true;
	memset(nics, 0, sizeof(nics));
	const char *names[] = { "eth0", "eth1", "eth2", "eth3", "eth4", "enos0", "lo" };
	int node[] = { 0, 0, 1, -1, 0, 2, -1 };
	int *ir[] = { eth0_irqs, eth1_irqs, eth2_irqs, eth3_irqs, eth4_irqs, enos0_irqs, NULL };
	int nir[] = { 1, 1, 4, 1, 2, 2, 0 };
	for (int i = 0; i < 7; i++) {
		snprintf(nics[i].name, sizeof(nics[i].name), "%s", names[i]);
		nics[i].numa_node = node[i];
		nics[i].irqs = ir[i];
		nics[i].nirqs = nir[i];
	}
	nics[5].has_rings = true;
	nics[5].rings = (nt_rings){ .rx = 1024, .tx = 512, .rx_max = 8192, .tx_max = 4096 };
	nics[6].is_virtual = true;
	t->nics = nics;
	t->nnics = 7;
	memset(bonds, 0, sizeof(bonds));
	snprintf(bonds[0].name, sizeof(bonds[0].name), "bond0");
	t->bonds = bonds;
	t->nbonds = 1;
	t->irqs = irqs;
	t->nirqs = 12;
}

/* Validate TEXT; the errors array (caller decrefs). */
static json_t *errors_of(const nt_topology *t, const char *text)
{
	json_error_t je;
	json_t *p = json_loads(text, 0, &je);
	CHECK_MSG(p != NULL, "test profile does not parse: %s", je.text);
	json_t *errors = json_array();
	int r = nt_profile_validate(t, p, errors);
	CHECK_INT(r, json_array_size(errors) ? NT_EINVALID : 0);
	json_decref(p);
	return errors;
}

/* Validating TEXT gives an error at PATH whose message contains WORDS. */
#define EXPECT_ERROR(t, text, path, words) do { \
	json_t *_e = errors_of(t, text); \
	CHECK_MSG(has_error(_e, path, words), "no error at %s containing '%s' in %s", path, words, \
		  json_dumps(_e, JSON_COMPACT)); \
	json_decref(_e); } while (0)

static void test_validation(const nt_topology *t)
{
	json_t *e = errors_of(t, "{\"name\":\"ok-1.2_x\",\"description\":\"fine\","
			      "\"irq_affinity\":[{\"interface\":\"eth*\",\"policy\":\"local\","
			      "\"exclude_cpus\":\"0\"},{\"interface\":\"eth2\",\"cpus\":\"16-19\"}],"
			      "\"rings\":[{\"interface\":\"enos0\",\"rx\":4096,\"tx\":\"max\"}],"
			      "\"bonds\":[{\"interface\":\"bond0\",\"xmit_hash_policy\":\"layer3+4\"}],"
			      "\"sysctl\":{\"net.ipv4.tcp_rmem\":\"4096 87380 16777216\","
			      "\"net.ipv4.ip_local_port_range\":\"12000 65535\"}}");
	CHECK_MSG(json_array_size(e) == 0, "valid profile refused: %s", json_dumps(e, 0));
	json_decref(e);

	EXPECT_ERROR(t, "[1]", "$", "JSON object");
	EXPECT_ERROR(t, "{}", "$.name", "required");
	EXPECT_ERROR(t, "{\"name\":\"a b\"}", "$.name", "not a valid name");
	EXPECT_ERROR(t, "{\"name\":7}", "$.name", "must be a string");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"colour\":1}", "$.colour", "unknown field 'colour'");
	/* A typo is answered with the field it stands for; a word far from
	 * every field is not. */
	EXPECT_ERROR(t, "{\"name\":\"x\",\"irq_afinity\":[]}", "$.irq_afinity",
		     "unknown field 'irq_afinity' (did you mean 'irq_affinity'?)");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"sycstl\":{}}", "$.sycstl", "(did you mean 'sysctl'?)");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"irq_affinity\":[{\"intreface\":\"eth0\",\"cpus\":\"1\"}]}",
		     "$.irq_affinity[0].intreface", "unknown field 'intreface' (did you mean 'interface'?)");
	e = errors_of(t, "{\"name\":\"x\",\"colour\":1}");
	char *dump = json_dumps(e, JSON_COMPACT);
	CHECK_MSG(dump && !strstr(dump, "did you mean"), "a suggestion for 'colour': %s", dump ? dump : "(null)");
	free(dump);
	json_decref(e);
	EXPECT_ERROR(t, "{\"name\":\"x\",\"rings\":{}}", "$.rings", "must be an array");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"sysctl\":[]}", "$.sysctl", "must be an object");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth0\",\"cpus\":\"1\","
		     "\"speed\":1}]}", "$.irq_affinity[0].speed", "unknown field");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth9\",\"cpus\":\"1\"}]}",
		     "$.irq_affinity[0].interface", "no such interface");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"wl*\",\"cpus\":\"1\"}]}",
		     "$.irq_affinity[0].interface", "no interface matches");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth0\",\"cpus\":\"1\","
		     "\"policy\":\"local\"}]}", "$.irq_affinity[0]", "exactly one");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth0\"}]}",
		     "$.irq_affinity[0]", "exactly one");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth0\",\"cpus\":\"60-70\"}]}",
		     "$.irq_affinity[0].cpus", "CPU 64-70 do not exist");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth0\",\"cpus\":\"60-70\"}]}",
		     "$.irq_affinity[0].cpus", "CPU 62 is offline");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth0\",\"cpus\":\"3-1\"}]}",
		     "$.irq_affinity[0].cpus", "not a cpulist");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth0\",\"cpus\":5}]}",
		     "$.irq_affinity[0].cpus", "must be a string");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth0\",\"policy\":\"far\"}]}",
		     "$.irq_affinity[0].policy", "unknown policy");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth0\",\"policy\":\"local\","
		     "\"exclude_cpus\":\"x\"}]}", "$.irq_affinity[0].exclude_cpus", "not a cpulist");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"rings\":[{\"interface\":\"enos0\",\"rx\":9000}]}",
		     "$.rings[0].rx", "above enos0's maximum 8192");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"rings\":[{\"interface\":\"enos0\",\"tx\":4097}]}",
		     "$.rings[0].tx", "above enos0's maximum 4096");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"rings\":[{\"interface\":\"enos0\",\"rx\":\"big\"}]}",
		     "$.rings[0].rx", "integer or \"max\"");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"rings\":[{\"interface\":\"enos0\",\"rx\":0}]}",
		     "$.rings[0].rx", "not a positive ring size");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"rings\":[{\"interface\":\"enos0\"}]}", "$.rings[0]",
		     "give 'rx', 'tx' or a ring parameter");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"rings\":[{\"interface\":\"eth0\",\"rx\":64}]}",
		     "$.rings[0].interface", "no ring settings");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"bonds\":[{\"interface\":\"bond0\","
		     "\"xmit_hash_policy\":\"layer5\"}]}", "$.bonds[0].xmit_hash_policy",
		     "unknown xmit_hash_policy");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"bonds\":[{\"interface\":\"bond7\","
		     "\"xmit_hash_policy\":\"layer2\"}]}", "$.bonds[0].interface", "no such bond");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"bonds\":[{\"interface\":\"bond0\"}]}",
		     "$.bonds[0].xmit_hash_policy", "required");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"sysctl\":{\"kernel.panic\":\"1\"}}",
		     "$.sysctl['kernel.panic']", "allowlist");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"sysctl\":{\"net.ipv4.tcp_rmem\":\"3 2 1\"}}",
		     "$.sysctl['net.ipv4.tcp_rmem']", "three ascending");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"sysctl\":{\"net.core.rmem_max\":16777216}}",
		     "$.sysctl['net.core.rmem_max']", "must be a string");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"sysctl\":{\"../../etc/passwd\":\"1\"}}",
		     "$.sysctl['../../etc/passwd']", "allowlist");
	EXPECT_ERROR(t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"../x\",\"cpus\":\"1\"}]}",
		     "$.irq_affinity[0].interface", "not an interface name");

	/* All problems are reported at once. */
	e = errors_of(t, "{\"name\":\"x\",\"bogus\":1,\"rings\":[{\"interface\":\"enos0\",\"rx\":9000}],"
		      "\"sysctl\":{\"kernel.panic\":\"1\"}}");
	CHECK_INT(json_array_size(e), 3);
	json_decref(e);
}

static void test_shapes(void)
{
	char why[256];
	struct { const char *key, *value; int ok; } cases[] = {
		{ "net.ipv4.tcp_rmem", "4096 87380 16777216", 1 },
		{ "net.ipv4.tcp_rmem", "4096\t87380\t16777216", 1 },
		{ "net.ipv4.tcp_rmem", "4096 87380", 0 },
		{ "net.ipv4.tcp_rmem", "0 1 2", 0 },
		{ "net.ipv4.tcp_rmem", "4096 87380 16777216 1", 0 },
		{ "net.ipv4.tcp_mem", "8388608 12582912 16777216", 1 },
		{ "net.ipv4.udp_mem", "3 2 1", 0 },
		{ "net.ipv4.ip_local_port_range", "12000 65535", 1 },
		{ "net.ipv4.ip_local_port_range", "0 65535", 0 },
		{ "net.ipv4.ip_local_port_range", "1024 70000", 0 },
		{ "net.ipv4.ip_local_port_range", "3000 2000", 0 },
		{ "net.ipv4.tcp_window_scaling", "1", 1 },
		{ "net.ipv4.tcp_window_scaling", "2", 0 },
		{ "net.ipv4.tcp_sack", "yes", 0 },
		{ "net.core.rmem_max", "16777216", 1 },
		{ "net.core.rmem_max", "0", 0 },
		{ "net.core.rmem_max", "-5", 0 },
		{ "net.core.rmem_max", "12abc", 0 },
		{ "net.core.busy_poll", "0", 1 },
		{ "net.ipv4.tcp_mtu_probing", "2", 1 },
		{ "net.ipv4.tcp_mtu_probing", "3", 0 },
		{ "net.ipv4.tcp_congestion_control", "bbr", 1 },
		{ "net.ipv4.tcp_congestion_control", "bbr; rm", 0 },
		{ "net.core.default_qdisc", "fq", 1 },
		{ "net.ipv4.conf.all.rp_filter", "0", 0 },
		{ "net.ipv4.tcp_notsent_lowat", "16384", 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = nt_sysctl_check_shape(cases[i].key, cases[i].value, why, sizeof(why));
		CHECK_MSG((r == 0) == cases[i].ok, "%s = '%s': got %d (%s)", cases[i].key,
			  cases[i].value, r, why);
	}
	CHECK(nt_t_equal(&nt_setting_sysctl, "4096\t87380\t16777216\n", "4096 87380  16777216"));
	CHECK(!nt_t_equal(&nt_setting_sysctl, "4096 87380 16777216", "4096 87380 1677721"));
	CHECK(nt_t_equal(&nt_setting_irq_affinity, "0-3", "0,1,2,3"));
	CHECK(!nt_t_equal(&nt_setting_irq_affinity, "0-3", "0-4"));
	CHECK(nt_t_equal(&nt_setting_bond, "layer2+3 2", "layer2+3"));
	CHECK(!nt_t_equal(&nt_setting_bond, "layer2+3 2", "layer3+4"));
	CHECK(nt_t_equal(&nt_setting_rings, "rx=4096,tx=1024", "rx=4096,tx=1024"));
	CHECK(!nt_t_equal(&nt_setting_rings, "rx=4096,tx=1024", "rx=1024,tx=1024"));
	CHECK(nt_setting_find("sysctl") == &nt_setting_sysctl);
	CHECK(nt_setting_find("nope") == NULL);
	CHECK(nt_bond_policy_known("vlan+srcmac"));
	CHECK(!nt_bond_policy_known("layer4"));
}

static void test_deal(void)
{
	nt_cpuset s;
	int out[8];
	nt_cpulist_parse("0-3,8", &s);
	/* set_irq_affinity_cpulist.sh: "0-3,8" dealt round-robin, one CPU each. */
	CHECK_INT(nt_deal_cpus(&s, 0, 7, out), 0);
	int want[] = { 0, 1, 2, 3, 8, 0, 1 };
	for (int i = 0; i < 7; i++)
		CHECK_INT(out[i], want[i]);
	CHECK_INT(nt_deal_cpus(&s, 3, 3, out), 0);
	CHECK_INT(out[0], 3);
	CHECK_INT(out[1], 8);
	CHECK_INT(out[2], 0);
	nt_cpuset_zero(&s);
	CHECK_INT(nt_deal_cpus(&s, 0, 1, out), -ENOENT);
}

/* The desired values of TEXT as "target=after" joined by spaces. */
static void desired_of(const nt_topology *t, const char *text, char *buf, size_t size,
		       json_t **warnings)
{
	json_t *p = json_loads(text, 0, NULL);
	nt_desired *d = NULL;
	int n = 0;
	*warnings = json_array();
	buf[0] = '\0';
	CHECK_INT(nt_profile_desired(t, p, &d, &n, *warnings), 0);
	for (int i = 0; i < n; i++) {
		size_t len = strlen(buf);
		snprintf(buf + len, size - len, "%s%s=%s", i ? " " : "", d[i].target, nt_t_str(d[i].kind, &d[i].value));
	}
	free(d);
	json_decref(p);
}

static void test_desired(const nt_topology *t)
{
	char buf[1024];
	json_t *w;

	/* cpus: dealt in IRQ order (eth2's IRQs listed 140,116,132,124). */
	desired_of(t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth2\",\"cpus\":\"4-5\"}]}",
		   buf, sizeof(buf), &w);
	CHECK_STR(buf, "116=4 124=5 132=4 140=5");
	json_decref(w);

	/* local, CPU 0 excluded (docs/field-reports.md#cpu0-kept-free): eth0
	 * and eth1 share node 0 and start on different CPUs; eth4 continues
	 * after them; eth2 on node 1; eth3's locality is unknown: left out
	 * with a warning. */
	desired_of(t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth*\",\"policy\":\"local\","
		   "\"exclude_cpus\":\"0\"}]}", buf, sizeof(buf), &w);
	CHECK_STR(buf, "100=1 108=2 116=16 124=17 132=18 140=19 156=3 164=4");
	CHECK(warned(w, "eth3: NUMA locality unknown"));
	json_decref(w);

	/* Two CPUs left for three NICs of node 0: the third cannot have a first
	 * CPU of its own, and says so. */
	desired_of(t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth[014]\","
		   "\"policy\":\"local\",\"exclude_cpus\":\"0-13\"}]}", buf, sizeof(buf), &w);
	CHECK_STR(buf, "100=14 108=15 156=14 164=15");
	CHECK(warned(w, "eth4: more NICs than CPUs"));
	json_decref(w);

	/* A later entry for the same IRQ replaces the earlier one; managed
	 * IRQs are left alone. */
	irqs[9].managed = true;
	desired_of(t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth0\",\"cpus\":\"5\"},"
		   "{\"interface\":\"eth0\",\"cpus\":\"6\"},{\"interface\":\"enos0\",\"cpus\":\"33\"}]}",
		   buf, sizeof(buf), &w);
	CHECK_STR(buf, "100=6 180=33");
	CHECK(warned(w, "enos0: 1 kernel-managed IRQ"));
	irqs[9].managed = false;
	json_decref(w);

	/* rings: "max" and a missing size keep both in the value. */
	desired_of(t, "{\"name\":\"x\",\"rings\":[{\"interface\":\"enos0\",\"rx\":\"max\"}],"
		   "\"bonds\":[{\"interface\":\"bond*\",\"xmit_hash_policy\":\"layer3+4\"}],"
		   "\"sysctl\":{\"net.core.rmem_max\":\"16777216\"}}", buf, sizeof(buf), &w);
	CHECK_STR(buf, "enos0=rx=8192,tx=512 bond0=layer3+4 net.core.rmem_max=16777216");
	json_decref(w);
}

/* The edit distance behind "did you mean": swaps count once, and the
 * limit cuts the work short. */
static void test_suggest(void)
{
	CHECK_INT(nt_edit_distance("irq_afinity", "irq_affinity", 2), 1);
	CHECK_INT(nt_edit_distance("sycstl", "sysctl", 2), 1);
	CHECK_INT(nt_edit_distance("rnigs", "rings", 2), 1);
	CHECK_INT(nt_edit_distance("abc", "abc", 2), 0);
	CHECK_INT(nt_edit_distance("", "ab", 2), 2);
	CHECK_INT(nt_edit_distance("colour", "rings", 2), 3);
	static const char *const words[] = { "rings", "channels", "rss" };
	CHECK_STR(nt_suggest("ring", words, 3), "rings");
	CHECK(nt_suggest("rings", words, 3) == NULL);
	/* Two edits in a word of three are not a typo. */
	CHECK(nt_suggest("xps", words, 3) == NULL);
}

int main(void)
{
	nt_topology t;
	host(&t);
	test_suggest();
	CHECK(nt_profile_name_valid("x460-4node_fix.v2"));
	CHECK(!nt_profile_name_valid(""));
	CHECK(!nt_profile_name_valid("a/b"));
	/* Path segments clients normalise away; other names of dots are not. */
	CHECK(!nt_profile_name_valid("."));
	CHECK(!nt_profile_name_valid(".."));
	CHECK(nt_profile_name_valid("..."));
	CHECK(nt_profile_name_valid(".x"));
	CHECK(!nt_profile_name_valid("x12345678901234567890123456789012345678901234567890123456789012345"));
	test_validation(&t);
	test_shapes();
	test_deal();
	test_desired(&t);
	TEST_MAIN_END();
}
