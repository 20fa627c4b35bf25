/* SPDX-License-Identifier: Apache-2.0 */
/* busy-poll-global: net.core.busy_poll or net.core.busy_read above 0, which
 * turns busy polling on for every application of the host rather than for
 * the sockets or epoll contexts that asked for it. Informational: whether
 * every application here wants to spin is not something the host shows
 * (the shipped latency profile sets both on purpose), so this says what the
 * kernel does with them and where the per-application switch is, and
 * names the fragment that turns them off in its message rather than as a
 * fix (which --fix-profile and the web view's "Fix all" would apply, undoing
 * a profile that chose them). The
 * messages quote Documentation/networking/napi.rst ("Busy polling",
 * "epoll-based busy polling") and Documentation/admin-guide/sysctl/net.rst. */
#include "diagnose/diagnose_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A sysctl's value as a non-negative integer, or -1 when absent or not
 * one (a value the kernel would not print is no evidence). */
static long long sysctl_ll(const nt_topology *t, const char *key, const char **text)
{
	const char *v = diag_sysctl(t, key);
	char *end;
	*text = v;
	if (!v)
		return -1;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < 0)
		return -1;
	return n;
}

#define POLL_RULE                                                                                              \
	"napi.rst: busy_poll \"is a system-wide setting and will cause all epoll-based applications to busy "  \
	"poll when they call epoll_wait. This may not be desirable as many applications may not have the need " \
	"to busy poll\" (poll and select spin on it too). "

#define READ_RULE                                                                                              \
	"net.rst: busy_read \"sets the default value of the SO_BUSY_POLL socket option\" of every socket, so "  \
	"each blocking read spins up to that long before it sleeps; per socket \"is the preferred method of "   \
	"enabling\". "

#define ALTERNATIVE                                                                                            \
	"Per application instead: SO_BUSY_POLL (with SO_PREFER_BUSY_POLL and SO_BUSY_POLL_BUDGET) on the "      \
	"sockets that want it, or the EPIOCSPARAMS ioctl on an epoll context (busy_poll_usecs, "               \
	"prefer_busy_poll; Linux 6.9+). Informational: nettune cannot tell whether every application here "    \
	"wants to spin (the latency profile sets both on purpose), so the finding has no fix and "             \
	"--fix-profile leaves them alone; where none needs it, "

int diag_check_busy_poll(diag *d)
{
	const char *tpoll = NULL, *tread = NULL;
	long long poll = sysctl_ll(d->t, "net.core.busy_poll", &tpoll);
	long long rd = sysctl_ll(d->t, "net.core.busy_read", &tread);
	if (poll <= 0 && rd <= 0)
		return 0;

	json_t *values = json_object(), *set = json_array(), *sysctl = json_object();
	int err = -ENOMEM;
	if (!values || !set || !sysctl)
		goto out;
	if ((tpoll && json_object_set_new(values, "net.core.busy_poll", json_string(tpoll)) < 0) ||
	    (tread && json_object_set_new(values, "net.core.busy_read", json_string(tread)) < 0))
		goto out;
	if (poll > 0 && (json_array_append_new(set, json_string("net.core.busy_poll")) < 0 ||
			 json_object_set_new(sysctl, "net.core.busy_poll", json_string("0")) < 0))
		goto out;
	if (rd > 0 && (json_array_append_new(set, json_string("net.core.busy_read")) < 0 ||
		       json_object_set_new(sysctl, "net.core.busy_read", json_string("0")) < 0))
		goto out;

	char what[160];
	if (poll > 0 && rd > 0)
		snprintf(what, sizeof(what), "net.core.busy_poll is %lld us and net.core.busy_read %lld us", poll, rd);
	else if (poll > 0)
		snprintf(what, sizeof(what), "net.core.busy_poll is %lld us", poll);
	else
		snprintf(what, sizeof(what), "net.core.busy_read is %lld us", rd);
	json_t *ev = json_pack("{s:O, s:O}", "values", values, "set", set);
	json_t *fragment = json_pack("{s:O}", "sysctl", sysctl);
	char *frag = fragment ? json_dumps(fragment, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(fragment);
	err = frag ? diag_add_finding(d, "busy-poll-global", SEV_INFO, "sysctl", ev, NULL,
				      "%s host-wide: busy polling is on for every application, not only those that "
				      "ask for it. %s%s" ALTERNATIVE "the profile fragment %s sets them back to 0, the "
				      "kernel's default.",
				      what, poll > 0 ? POLL_RULE : "", rd > 0 ? READ_RULE : "", frag) :
		     -ENOMEM;
	if (!frag)
		json_decref(ev);
	free(frag);
out:
	json_decref(values);
	json_decref(set);
	json_decref(sysctl);
	return err;
}
