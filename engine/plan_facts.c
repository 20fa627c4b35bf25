/* SPDX-License-Identifier: Apache-2.0 */
#include "engine/plan_facts.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/queues.h"

/* IFNAME's MSI IRQs as an IRQ list ("177-184"), or -errno (-ENOENT for a
 * device without them: a virtual link, a legacy INTx one). */
static int msi_irqs(const nt_ctx *ctx, const char *ifname, char *out, size_t size)
{
	int fd = nt_open_dir(ctx, "/sys/class/net/%s/device/msi_irqs", ifname);
	if (fd < 0)
		return fd;
	close(fd);
	char path[PATH_MAX];
	int r = nt_path(ctx, path, sizeof(path), "/sys/class/net/%s/device/msi_irqs", ifname);
	if (r < 0)
		return r;
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	int *irqs = NULL, n = 0, cap = 0;
	struct dirent *de;
	r = 0;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (n == cap) {
			int *g = realloc(irqs, (size_t)(cap = cap ? cap * 2 : 64) * sizeof(*irqs));
			if (!g) {
				r = -ENOMEM;
				break;
			}
			irqs = g;
		}
		irqs[n++] = atoi(de->d_name);
	}
	closedir(d);
	if (r == 0)
		r = nt_irqlist_format(irqs, n, out, size);
	free(irqs);
	return r;
}

/* One interface's facts, or json null when it is not there. */
static json_t *iface_facts(const nt_ctx *ctx, const char *ifname)
{
	long ifindex;
	int nrx, ntx;
	char irqs[2048];
	int r = nt_read_long(ctx, &ifindex, "/sys/class/net/%s/ifindex", ifname);
	if (r == -ENOENT || (r < 0 && !nt_exists(ctx, "/sys/class/net/%s", ifname)))
		return json_null();
	json_t *o = json_object();
	if (!o)
		return NULL;
	if (r == 0)
		json_object_set_new(o, "ifindex", json_integer(ifindex));
	if (nt_queues_count(ctx, ifname, &nrx, &ntx) == 0) {
		json_object_set_new(o, "rx_queues", json_integer(nrx));
		json_object_set_new(o, "tx_queues", json_integer(ntx));
	}
	if (msi_irqs(ctx, ifname, irqs, sizeof(irqs)) == 0)
		json_object_set_new(o, "irqs", json_string(irqs));
	return o;
}

json_t *nt_plan_facts(const nt_ctx *ctx, const nt_plan *plan)
{
	char buf[4096];
	json_t *facts = json_object(), *ifaces = json_object();
	if (!facts || !ifaces)
		goto fail;
	if (nt_read_str(ctx, buf, sizeof(buf), "/sys/devices/system/cpu/online") >= 0) {
		nt_cpuset s;
		/* As a cpulist in canonical form, so that "0-3" read once and
		 * "0,1,2,3" another time (a tree written by hand) compare equal. */
		if (nt_cpulist_parse(buf, &s) == 0 && nt_cpulist_format(&s, buf, sizeof(buf)) >= 0)
			json_object_set_new(facts, "cpus_online", json_string(buf));
	}
	for (int i = 0; i < plan->nsteps; i++) {
		const char *name = plan->steps[i].interface;
		if (!name[0] || json_object_get(ifaces, name) || !nt_ifname_valid(name))
			continue;
		json_t *f = iface_facts(ctx, name);
		if (!f || json_object_set_new(ifaces, name, f) < 0)
			goto fail;
	}
	if (json_object_set_new(facts, "interfaces", ifaces) < 0) {
		ifaces = NULL;
		goto fail;
	}
	return facts;
fail:
	json_decref(ifaces);
	json_decref(facts);
	return NULL;
}

/* A fact as text: a string as is, an integer in decimal. */
static const char *fact_str(const json_t *v, char *buf, size_t size)
{
	if (json_is_string(v))
		return json_string_value(v);
	snprintf(buf, size, "%lld", (long long)json_integer_value(v));
	return buf;
}

static int add(json_t *out, const char *fact, const char *iface, const char *planned, const char *now)
{
	json_t *o = json_pack("{s:s, s:s, s:s?}", "fact", fact, "planned", planned, "now", now);
	if (!o)
		return -ENOMEM;
	if (!now)
		json_object_set_new(o, "now", json_null());
	if (iface)
		json_object_set_new(o, "interface", json_string(iface));
	return json_array_append_new(out, o) == 0 ? 0 : -ENOMEM;
}

/* The sentence for one difference D. */
static void say_one(const json_t *d, char *say, size_t size)
{
	const char *fact = json_string_value(json_object_get(d, "fact"));
	const char *iface = json_string_value(json_object_get(d, "interface"));
	const char *planned = json_string_value(json_object_get(d, "planned"));
	const char *now = json_string_value(json_object_get(d, "now"));
	if (!strcmp(fact, "cpus_online"))
		snprintf(say, size, "the online CPUs were %s and are %s", planned, now);
	else if (!strcmp(fact, "present"))
		snprintf(say, size, "%s is gone", iface);
	else if (!strcmp(fact, "ifindex"))
		snprintf(say, size, "%s was made again (ifindex %s, now %s)", iface, planned, now);
	else if (!strcmp(fact, "rx_queues") || !strcmp(fact, "tx_queues"))
		snprintf(say, size, "%s had %s %s queues and has %s", iface, planned,
			 fact[0] == 'r' ? "RX" : "TX", now);
	else
		snprintf(say, size, "%s's IRQs were %s and are %s", iface, planned, now[0] ? now : "none");
}

json_t *nt_plan_facts_diff(const json_t *planned, const json_t *now, char *say, size_t saysize)
{
	static const char *const fields[] = { "ifindex", "rx_queues", "tx_queues", "irqs", NULL };
	char a[64], b[64];
	json_t *out = json_array();
	const char *name;
	json_t *p;
	if (!out)
		return NULL;
	if (say && saysize)
		say[0] = '\0';
	const json_t *pc = json_object_get(planned, "cpus_online"), *nc = json_object_get(now, "cpus_online");
	if (json_is_string(pc) && json_is_string(nc) && !json_equal((json_t *)pc, (json_t *)nc) &&
	    add(out, "cpus_online", NULL, json_string_value(pc), json_string_value(nc)) < 0)
		goto fail;
	json_object_foreach((json_t *)json_object_get(planned, "interfaces"), name, p) {
		const json_t *n = json_object_get(json_object_get(now, "interfaces"), name);
		if (json_is_null(p))
			continue; /* absent then too: its steps' targets say the rest */
		if (!n || json_is_null(n)) {
			if (add(out, "present", name, "yes", NULL) < 0)
				goto fail;
			continue;
		}
		for (int i = 0; fields[i]; i++) {
			const json_t *pv = json_object_get(p, fields[i]), *nv = json_object_get(n, fields[i]);
			if (!pv || json_equal((json_t *)pv, (json_t *)nv))
				continue;
			/* A fact read then and unreadable now is a change: the
			 * queues or IRQs went away with the device. */
			if (add(out, fields[i], name, fact_str(pv, a, sizeof(a)),
				nv ? fact_str(nv, b, sizeof(b)) : "") < 0)
				goto fail;
		}
	}
	if (say && saysize && json_array_size(out))
		say_one(json_array_get(out, 0), say, saysize);
	return out;
fail:
	json_decref(out);
	return NULL;
}
