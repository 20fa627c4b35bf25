/* SPDX-License-Identifier: Apache-2.0 */
/* The pure parts of holding a desired state: the kernel event parser
 * (rtnetlink link messages and ethtool netlink notifications, built here
 * byte by byte as the kernel sends them, truncated ones included), the
 * events each kind of setting declares, and the drift findings added to a
 * diagnosis. */
#include "harness.h"
#include "diagnose/diagnose.h"
#include "kernel/events.h"
#include "kernel/ethtool_nlattrs.h"
#include "settings/setting.h"

#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

static nt_event got[8];
static int ngot;

static void on_ev(void *ud, const nt_event *ev)
{
	if (ngot < 8)
		got[ngot++] = *ev;
}

/* Append an attribute (TYPE, DATA of LEN) at *P, aligned. */
static void put_attr(char **p, unsigned short type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)*p;
	a->nla_type = type;
	a->nla_len = (unsigned short)(NLA_HDRLEN + len);
	memcpy(*p + NLA_HDRLEN, data, len);
	*p += NLA_ALIGN(a->nla_len);
}

static size_t link_msg(char *buf, unsigned short type, int ifindex, unsigned flags, const char *name)
{
	memset(buf, 0, 256);
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct ifinfomsg *ifi = NLMSG_DATA(h);
	ifi->ifi_index = ifindex;
	ifi->ifi_flags = flags;
	char *p = (char *)ifi + NLMSG_ALIGN(sizeof(*ifi));
	put_attr(&p, IFLA_IFNAME, name, strlen(name) + 1);
	h->nlmsg_type = type;
	h->nlmsg_len = (unsigned)(p - buf);
	return NLMSG_ALIGN(h->nlmsg_len);
}

static size_t ethtool_msg(char *buf, int family, int cmd, const char *name, int ifindex)
{
	memset(buf, 0, 256);
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct genlmsghdr *g = NLMSG_DATA(h);
	g->cmd = (unsigned char)cmd;
	char *p = (char *)g + GENL_HDRLEN;
	struct nlattr *nest = (struct nlattr *)p;
	nest->nla_type = NLA_F_NESTED | 1; /* ETHTOOL_A_*_HEADER */
	char *q = p + NLA_HDRLEN;
	uint32_t idx = (uint32_t)ifindex;
	put_attr(&q, ETHTOOL_A_HEADER_DEV_INDEX, &idx, 4);
	put_attr(&q, ETHTOOL_A_HEADER_DEV_NAME, name, strlen(name) + 1);
	nest->nla_len = (unsigned short)(q - p);
	h->nlmsg_type = (unsigned short)family;
	h->nlmsg_len = (unsigned)(q - buf);
	return NLMSG_ALIGN(h->nlmsg_len);
}

static void test_events(void)
{
	char buf[1024];
	size_t n = link_msg(buf, RTM_NEWLINK, 7, IFF_UP, "eth3");
	n += link_msg(buf + n, RTM_DELLINK, 9, 0, "veth1");
	ngot = 0;
	CHECK_INT(nt_events_parse(buf, n, NETLINK_ROUTE, 0, on_ev, NULL), 2);
	CHECK_INT(ngot, 2);
	CHECK_INT(got[0].kind, NT_EVENT_LINK);
	CHECK_STR(got[0].ifname, "eth3");
	CHECK_INT(got[0].ifindex, 7);
	CHECK_STR(got[0].what, "new");
	CHECK(got[0].flags & IFF_UP);
	CHECK_STR(got[1].what, "del");
	CHECK_STR(got[1].ifname, "veth1");

	/* Other rtnetlink messages (addresses) are not link events. */
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	h->nlmsg_type = RTM_NEWADDR;
	ngot = 0;
	CHECK_INT(nt_events_parse(buf, NLMSG_ALIGN(h->nlmsg_len), NETLINK_ROUTE, 0, on_ev, NULL), 0);

	/* Truncated: a link message too short for its ifinfomsg. */
	n = link_msg(buf, RTM_NEWLINK, 7, 0, "eth3");
	h->nlmsg_len = NLMSG_LENGTH(4);
	CHECK_INT(nt_events_parse(buf, NLMSG_ALIGN(h->nlmsg_len), NETLINK_ROUTE, 0, on_ev, NULL),
		  NT_EPARSE);

	/* ethtool: the family id must match; the header names the device. */
	n = ethtool_msg(buf, 27, ETHTOOL_MSG_RINGS_NTF, "sim0", 4);
	n += ethtool_msg(buf + n, 27, ETHTOOL_MSG_COALESCE_NTF, "enp1s0f0np0", 12);
	ngot = 0;
	CHECK_INT(nt_events_parse(buf, n, NETLINK_GENERIC, 27, on_ev, NULL), 2);
	CHECK_INT(got[0].kind, NT_EVENT_ETHTOOL);
	CHECK_STR(got[0].what, "rings");
	CHECK_STR(got[0].ifname, "sim0");
	CHECK_INT(got[0].ifindex, 4);
	CHECK_STR(got[1].what, "coalesce");
	CHECK_STR(got[1].ifname, "enp1s0f0np0");
	ngot = 0;
	CHECK_INT(nt_events_parse(buf, n, NETLINK_GENERIC, 28, on_ev, NULL), 0);
	n = ethtool_msg(buf, 27, 200, "x", 1);
	ngot = 0;
	CHECK_INT(nt_events_parse(buf, n, NETLINK_GENERIC, 27, on_ev, NULL), 1);
	CHECK_STR(got[0].what, "ethtool-cmd-200");
	/* A header attribute longer than the message is not read. */
	n = ethtool_msg(buf, 27, ETHTOOL_MSG_RINGS_NTF, "sim0", 4);
	struct nlattr *nest = (struct nlattr *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);
	nest->nla_len = 900;
	ngot = 0;
	CHECK_INT(nt_events_parse(buf, n, NETLINK_GENERIC, 27, on_ev, NULL), 1);
	CHECK_STR(got[0].ifname, "");
	/* A buffer ending inside a header is no message at all. */
	CHECK_INT(nt_events_parse(buf, 8, NETLINK_GENERIC, 27, on_ev, NULL), 0);
}

/* The events each kind declares (nt_setting_kind.events), as the kernel
 * sends them. Every registered kind is here, so a new kind must say what
 * tells of its changes before this test passes. */
static const struct {
	const char *kind;
	unsigned events;
} kind_events[] = {
	{ "irq_affinity", 0 }, /* a write to smp_affinity: no event */
	{ "irqbalance_ban", 0 },
	{ "irqbalance_service", 0 },
	{ "rings", NT_SETTING_EVENT(NT_EVENT_ETHTOOL) },
	/* The same RINGS_SET, so the same ETHTOOL_MSG_RINGS_NTF. */
	{ "ring_params", NT_SETTING_EVENT(NT_EVENT_ETHTOOL) },
	{ "channels", NT_SETTING_EVENT(NT_EVENT_ETHTOOL) },
	{ "coalesce", NT_SETTING_EVENT(NT_EVENT_ETHTOOL) },
	/* COALESCE_NTF carries the DIM profiles too. */
	{ "coalesce_rx_profile", NT_SETTING_EVENT(NT_EVENT_ETHTOOL) },
	{ "coalesce_tx_profile", NT_SETTING_EVENT(NT_EVENT_ETHTOOL) },
	{ "bond", NT_SETTING_EVENT(NT_EVENT_LINK) }, /* NETDEV_CHANGEINFODATA */
	{ "sysctl", 0 }, /* no event for sysctls */
	/* No event for a queue's files, but a channels change rebuilds them. */
	{ "rps_cpus", NT_SETTING_EVENT(NT_EVENT_ETHTOOL) },
	{ "rps_flow_cnt", NT_SETTING_EVENT(NT_EVENT_ETHTOOL) },
	{ "xps_cpus", NT_SETTING_EVENT(NT_EVENT_ETHTOOL) },
	{ "xps_rxqs", NT_SETTING_EVENT(NT_EVENT_ETHTOOL) },
	{ "feature", NT_SETTING_EVENT(NT_EVENT_ETHTOOL) }, /* FEATURES_NTF */
	{ "pause", NT_SETTING_EVENT(NT_EVENT_ETHTOOL) }, /* PAUSE_NTF */
	{ "mtu", NT_SETTING_EVENT(NT_EVENT_LINK) }, /* RTM_NEWLINK */
	{ "txqueuelen", NT_SETTING_EVENT(NT_EVENT_LINK) },
	{ "qdisc", 0 }, /* RTM_NEWQDISC, which the watcher does not hear */
	/* ETHTOOL_MSG_RSS_NTF on newer kernels; a channels change resets it. */
	{ "rss", NT_SETTING_EVENT(NT_EVENT_ETHTOOL) },
	/* The same RSS_NTF (6.17) for an input transformation set. */
	{ "rss_xfrm", NT_SETTING_EVENT(NT_EVENT_ETHTOOL) },
	/* No event for a flow rule inserted or deleted: the periodic check. */
	{ "flow", 0 },
	/* No notification for the NAPI sysfs files, napi-set or a thread's
	 * affinity: the periodic check. */
	{ "napi_device", 0 },
	{ "napi", 0 },
	{ "napi_thread_cpus", 0 },
};
#define NKIND_EVENTS ((int)(sizeof(kind_events) / sizeof(kind_events[0])))

static void test_kind_events(void)
{
	int nkinds = 0;
	for (int m = 0; nt_setting_modules[m]; m++) {
		for (int i = 0; nt_setting_modules[m]->kinds && nt_setting_modules[m]->kinds[i]; i++) {
			const nt_setting_kind *k = nt_setting_modules[m]->kinds[i];
			int e = 0;
			while (e < NKIND_EVENTS && strcmp(kind_events[e].kind, k->name))
				e++;
			nkinds++;
			CHECK_MSG(e < NKIND_EVENTS, "kind %s: its events are not in this test", k->name);
			if (e == NKIND_EVENTS)
				continue;
			CHECK_MSG(k->events == kind_events[e].events, "kind %s declares events %#x, not %#x",
				  k->name, k->events, kind_events[e].events);
			/* The registry answers by name what the kind declares. */
			CHECK(nt_setting_changed_by_event(k->name, NT_EVENT_ETHTOOL) ==
			      !!(kind_events[e].events & NT_SETTING_EVENT(NT_EVENT_ETHTOOL)));
			CHECK(nt_setting_changed_by_event(k->name, NT_EVENT_LINK) ==
			      !!(kind_events[e].events & NT_SETTING_EVENT(NT_EVENT_LINK)));
		}
	}
	CHECK_INT(nkinds, NKIND_EVENTS);
	CHECK(!nt_setting_changed_by_event("no-such-kind", NT_EVENT_ETHTOOL));
	CHECK(!nt_setting_changed_by_event(NULL, NT_EVENT_LINK));

	/* The notification the kernel sends for each ethtool group nettune
	 * sets names, as the event parser reads it, a kind that declares
	 * ethtool notifications: the drift watcher's culprit for that kind
	 * rests on them. */
	static const struct {
		int cmd;
		const char *kind;
	} ntf[] = {
		{ ETHTOOL_MSG_RINGS_NTF, "rings" },
		{ ETHTOOL_MSG_CHANNELS_NTF, "channels" },
		{ ETHTOOL_MSG_COALESCE_NTF, "coalesce" },
		/* 6.17: a table, hash or input transformation set. */
		{ NT_ETHTOOL_MSG_RSS_NTF, "rss" },
	};
	for (size_t i = 0; i < sizeof(ntf) / sizeof(ntf[0]); i++) {
		char buf[256];
		size_t n = ethtool_msg(buf, 27, ntf[i].cmd, "sim0", 4);
		ngot = 0;
		CHECK_INT(nt_events_parse(buf, n, NETLINK_GENERIC, 27, on_ev, NULL), 1);
		CHECK_INT(got[0].kind, NT_EVENT_ETHTOOL);
		CHECK_STR(got[0].what, ntf[i].kind);
		CHECK_MSG(nt_setting_changed_by_event(got[0].what, NT_EVENT_ETHTOOL),
			  "kind %s does not declare the ethtool notification %s", ntf[i].kind,
			  got[0].what);
	}
}

static json_t *diagnosis(void)
{
	return json_pack("{s:i, s:[{s:s,s:s,s:s,s:s,s:{},s:n}, {s:s,s:s,s:s,s:s,s:{},s:n}],"
			 " s:{s:i,s:i,s:i}}",
			 "rtt_ms", 10, "findings", "id", "irq-remote-node", "severity", "warning",
			 "subject", "eth0", "message", "m", "evidence", "fix", "id",
			 "irq-info-missing", "severity", "info", "subject", "host", "message", "m",
			 "evidence", "fix", "summary", "error", 0, "warning", 1, "info", 1);
}

static void test_findings(void)
{
	json_t *drift = json_pack(
		"{s:s, s:s, s:[], s:["
		"{s:s,s:s,s:s,s:s,s:s,s:s}, {s:s,s:s,s:s,s:s,s:s,s:{s:i}}, {s:s,s:s,s:s,s:s,s:s}]}",
		"policy", "repair", "status", "drifted", "errors", "targets", "kind", "sysctl",
		"target", "net.core.rmem_max", "desired", "16777216", "current", "1234", "state",
		"contested", "culprit", "another program writes net.core.rmem_max", "kind", "rings",
		"target", "eth0", "desired", "rx=4096,tx=4096", "current", "rx=256,tx=256", "state",
		"overridden", "changed_by", "txn", 12, "kind", "sysctl", "target",
		"net.core.wmem_max", "desired", "1", "current", "2", "state", "drifted");
	json_t *d = diagnosis();
	CHECK_INT(nt_diagnose_add_drift(d, drift), 0);
	json_t *f = json_object_get(d, "findings");
	/* Contested: a warning, after the existing warning, before the infos;
	 * overridden: info; drifted under repair: none (it is being repaired). */
	CHECK_INT(json_array_size(f), 4);
	CHECK_STR(json_string_value(json_object_get(json_array_get(f, 1), "id")), "drift");
	CHECK_STR(json_string_value(json_object_get(json_array_get(f, 1), "severity")), "warning");
	CHECK_STR(json_string_value(json_object_get(json_array_get(f, 1), "subject")),
		  "net.core.rmem_max");
	CHECK(strstr(json_string_value(json_object_get(json_array_get(f, 1), "message")),
		     "another program") != NULL);
	CHECK_STR(json_string_value(json_object_get(json_array_get(f, 3), "subject")), "eth0");
	CHECK(strstr(json_string_value(json_object_get(json_array_get(f, 3), "message")),
		     "transaction 12") != NULL);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(d, "summary"), "warning")), 2);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(d, "summary"), "info")), 2);
	json_decref(d);

	/* Under report, a drifted target stays: a warning. An invalid desired
	 * state is one finding about the host with the reasons. */
	json_object_set_new(drift, "policy", json_string("report"));
	json_object_set_new(drift, "status", json_string("invalid"));
	json_array_append_new(json_object_get(drift, "errors"),
			      json_pack("{s:s,s:s}", "path", "$.irq_affinity[0].interface",
					"message", "no interface eth0"));
	d = diagnosis();
	CHECK_INT(nt_diagnose_add_drift(d, drift), 0);
	f = json_object_get(d, "findings");
	CHECK_INT(json_array_size(f), 6);
	int hosts = 0;
	size_t i;
	json_t *x;
	json_array_foreach(f, i, x) {
		if (!strcmp(json_string_value(json_object_get(x, "id")), "drift") &&
		    !strcmp(json_string_value(json_object_get(x, "subject")), "host")) {
			hosts++;
			CHECK_INT(json_array_size(json_object_get(json_object_get(x, "evidence"),
								  "errors")), 1);
		}
	}
	CHECK_INT(hosts, 1);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(d, "summary"), "warning")), 4);
	json_decref(d);
	json_decref(drift);
}

int main(void)
{
	test_events();
	test_kind_events();
	test_findings();
	TEST_MAIN_END();
}
