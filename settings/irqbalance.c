/* SPDX-License-Identifier: Apache-2.0 */
/* irqbalance as two kinds of setting, so that keeping it off tuned IRQs is
 * journalled and rolled back like any other change:
 *
 *   irqbalance_ban      target "irqbalance", value: the banned IRQs,
 *                       ascending and space-separated, runs as ranges
 *                       ("60-68 80-84", "" for none; nt_irqlist_format).
 *                       Plans compose it: the current list plus the
 *                       profile's IRQs, since the daemon's command replaces
 *                       the whole list and other IRQs may be banned already.
 *   irqbalance_service  target "irqbalance", value "stopped", or
 *                       "running <how to start it>" where the rest is
 *                       "systemd" or the daemon's command line; only the
 *                       first word is compared.
 *
 * Both need the live host: a fixture tree has no daemon to talk to
 * (kernel/irqbalance_client.h says which). */
#include "host/hostcache.h"
#include "kernel/irqbalance_client.h"
#include "settings/section.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- IRQ lists ---- */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int nt_irqlist_format(int *irqs, int n, char *out, size_t size)
{
	size_t len = 0;
	if (size == 0)
		return -E2BIG;
	out[0] = '\0';
	if (n > 0) /* irqs may be NULL when there are none */
		qsort(irqs, (size_t)n, sizeof(int), cmp_int);
	for (int i = 0; i < n;) {
		int j = i;
		while (j + 1 < n && (irqs[j + 1] == irqs[j] || irqs[j + 1] == irqs[j] + 1))
			j++;
		int w = irqs[j] == irqs[i] ?
			snprintf(out + len, size - len, "%s%d", len ? " " : "", irqs[i]) :
			snprintf(out + len, size - len, "%s%d-%d", len ? " " : "", irqs[i], irqs[j]);
		if (w < 0 || (size_t)w >= size - len)
			return -E2BIG;
		len += (size_t)w;
		i = j + 1;
	}
	return 0;
}

int nt_irqlist_parse(const char *list, int **irqs, int *n)
{
	int *v = NULL, cap = 0, k = 0;
	const char *p = list;
	int r = 0;

	*irqs = NULL;
	*n = 0;
	while (*p) {
		char *end;
		if (*p == ' ') {
			p++;
			continue;
		}
		if (*p < '0' || *p > '9') {
			r = NT_EINVALID;
			goto out;
		}
		long lo = strtol(p, &end, 10), hi = lo;
		if (*end == '-') {
			const char *q = end + 1;
			if (*q < '0' || *q > '9') {
				r = NT_EINVALID;
				goto out;
			}
			hi = strtol(q, &end, 10);
		}
		/* IRQ numbers stop well below this; a bound keeps a bad range
		 * from allocating the world. */
		if (hi < lo || hi > 1000000 || (*end && *end != ' ')) {
			r = NT_EINVALID;
			goto out;
		}
		for (long x = lo; x <= hi; x++) {
			if (k == cap) {
				cap = cap ? cap * 2 : 64;
				int *nv = realloc(v, sizeof(int) * (size_t)cap);
				if (!nv) {
					r = -ENOMEM;
					goto out;
				}
				v = nv;
			}
			v[k++] = (int)x;
		}
		p = end;
	}
	*irqs = v;
	*n = k;
	v = NULL;
out:
	free(v);
	return r;
}

/* The same list written the canonical way. */
static int irqlist_canon(const char *in, char *out, size_t size)
{
	int *v = NULL, n = 0;
	int r = nt_irqlist_parse(in, &v, &n);
	if (r == 0)
		r = nt_irqlist_format(v, n, out, size);
	free(v);
	return r;
}

/* The daemon on a host where it can be controlled (ERR says why not):
 * P->pid is 0 when none runs. Returns 0 or -errno. */
static int find_daemon(const nt_ctx *ctx, nt_irqbalance_proc *p, char *err, size_t errsize)
{
	int r = nt_irqbalance_controllable(ctx, err, errsize);
	return r < 0 ? r : nt_irqbalance_find(ctx, p);
}

static int text_format(const nt_value *v, char *out, size_t size)
{
	int n = snprintf(out, size, "%s", v->text);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

/* ---- irqbalance_ban: the list, canonical in memory ---- */

static int ban_parse(const char *text, nt_value *out)
{
	memset(out, 0, sizeof(*out));
	return text && irqlist_canon(text, out->text, sizeof(out->text)) == 0 ? 0 : NT_EPARSE;
}

static bool ban_equal(const nt_value *a, const nt_value *b)
{
	return strcmp(a->text, b->text) == 0;
}

static int ban_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	nt_irqbalance_proc p;
	char reply[65536];
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = find_daemon(ctx, &p, NULL, 0)) < 0)
		return r;
	if (!p.pid)
		return 0; /* no daemon: nothing is banned and nothing needs to be */
	if ((r = nt_irqbalance_command(&p, "setup", reply, sizeof(reply))) < 0)
		return r;
	/* The reply is no longer needed once parsed: parse into its tail. */
	_Static_assert(sizeof(reply) >= 32768, "room for the parsed list");
	char *list = reply + sizeof(reply) / 2;
	if ((r = nt_irqbalance_parse_banned(reply, list, sizeof(reply) / 2)) < 0)
		return r;
	return irqlist_canon(list, out->text, sizeof(out->text));
}

/* The ban list to write: what is banned already plus what the profile
 * places, so a ban someone else made survives the transaction. */
static int ban_compose(const nt_value *before, const nt_value *wanted, nt_value *out)
{
	int *a = NULL, *b = NULL, na = 0, nb = 0, r;
	memset(out, 0, sizeof(*out));
	if ((r = nt_irqlist_parse(before->text, &a, &na)) < 0 ||
	    (r = nt_irqlist_parse(wanted->text, &b, &nb)) < 0)
		goto out;
	int *all = realloc(a, sizeof(int) * (size_t)(na + nb + 1));
	if (!all) {
		r = -ENOMEM;
		goto out;
	}
	a = all;
	if (nb)
		memcpy(a + na, b, sizeof(int) * (size_t)nb);
	r = nt_irqlist_format(a, na + nb, out->text, sizeof(out->text));
out:
	free(a);
	free(b);
	return r;
}

static int ban_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		     const nt_value *v, char *why, size_t whysize)
{
	if (strcmp(target, "irqbalance") != 0) {
		snprintf(why, whysize, "target must be \"irqbalance\"");
		return NT_EINVALID;
	}
	return nt_irqbalance_controllable(ctx, why, whysize) < 0 ? NT_EINVALID : 0;
}

static int ban_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target,
		     const nt_value *value, char *err, size_t errsize)
{
	nt_irqbalance_proc p;
	char cmd[16384];
	nt_value got;
	int *v = NULL, n = 0, r;
	size_t len;

	if ((r = find_daemon(ctx, &p, err, errsize)) < 0)
		goto out;
	if ((r = nt_irqlist_parse(value->text, &v, &n)) < 0) {
		snprintf(err, errsize, "'%s' is not an IRQ list", value->text);
		goto out;
	}
	if (!p.pid) {
		if (n == 0)
			goto out;
		snprintf(err, errsize, "irqbalance is not running");
		r = -ESRCH;
		goto out;
	}
	/* The command replaces the whole list, so VALUE is always complete;
	 * the daemon takes single numbers only, so ranges are spelled out. */
	len = (size_t)snprintf(cmd, sizeof(cmd), "settings ban irqs%s", n ? "" : " NONE");
	for (int i = 0; i < n; i++) {
		int w = snprintf(cmd + len, sizeof(cmd) - len, " %d", v[i]);
		if (w < 0 || (size_t)w >= sizeof(cmd) - len) {
			r = -E2BIG;
			goto out;
		}
		len += (size_t)w;
	}
	if ((r = nt_irqbalance_command(&p, cmd, NULL, 0)) < 0) {
		snprintf(err, errsize, "irqbalance socket: %s", strerror(-r));
		goto out;
	}
	r = 0;
	/* The daemon handles the command in its main loop; wait (at most 1 s)
	 * until it shows, so the read-back that verifies this step sees it. */
	for (int i = 0; i < 100; i++) {
		if (ban_read(ctx, eh, target, &got) == 0 && ban_equal(&got, value))
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
out:
	free(v);
	return r;
}

const nt_setting_kind nt_setting_irqbalance_ban = {
	.name = "irqbalance_ban",
	/* One irqbalance serves the whole machine's IRQs, whatever namespace
	 * asks. */
	.scope = NT_SCOPE_MACHINE,
	.scope_why = "irqbalance is one daemon for the whole machine, and its ban list covers every IRQ",
	.parse = ban_parse,
	.format = text_format,
	.equal = ban_equal,
	.read = ban_read,
	.check = ban_check,
	.apply = ban_apply,
	.compose = ban_compose,
	/* Told before any affinity changes. */
	.order = 0,
	/* irqbalance's ban list lives in irqbalance and tells no one. */
	.events = 0,
};

/* ---- irqbalance_service: "stopped" or "running HOW" ---- */

static int svc_parse(const char *text, nt_value *out)
{
	memset(out, 0, sizeof(*out));
	if (!text || strlen(text) >= sizeof(out->text) ||
	    (strcmp(text, "stopped") != 0 && strncmp(text, "running ", 8) != 0))
		return NT_EPARSE;
	snprintf(out->text, sizeof(out->text), "%s", text);
	return 0;
}

/* Only the first word is compared: how it was started is for restarting. */
static bool svc_equal(const nt_value *a, const nt_value *b)
{
	size_t la = strcspn(a->text, " "), lb = strcspn(b->text, " ");
	return la == lb && strncmp(a->text, b->text, la) == 0;
}

static int svc_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	nt_irqbalance_proc p;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = find_daemon(ctx, &p, NULL, 0)) < 0)
		return r;
	if (!p.pid) {
		snprintf(out->text, sizeof(out->text), "stopped");
		return 0;
	}
	r = snprintf(out->text, sizeof(out->text), "running %s", p.systemd ? "systemd" : p.cmdline);
	/* A command line cut short could not start the daemon again. */
	return r < 0 || (size_t)r >= sizeof(out->text) ? -E2BIG : 0;
}

static int svc_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		     const nt_value *v, char *why, size_t whysize)
{
	return nt_irqbalance_controllable(ctx, why, whysize) < 0 ? NT_EINVALID : 0;
}

static int svc_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target,
		     const nt_value *v, char *err, size_t errsize)
{
	nt_irqbalance_proc p;
	int r;

	if ((r = find_daemon(ctx, &p, err, errsize)) < 0)
		return r;
	if (strcmp(v->text, "stopped") == 0)
		return nt_irqbalance_stop(&p, err, errsize);
	if (p.pid)
		return 0; /* already running */
	if ((r = nt_irqbalance_start(v->text + 8, err, errsize)) < 0)
		return r;
	/* The daemon is exec'd by a grandchild: wait until it shows, so the
	 * read-back that verifies this step finds it (at most 2 s). */
	for (int i = 0; i < 200; i++) {
		if (nt_irqbalance_find(ctx, &p) == 0 && p.pid) {
			/* The agent's reads see it now, socket file or not. */
			nt_irqbalance_memo_found(nt_host_cache_irqbalance(ctx->host_cache), p.pid);
			return 0;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	snprintf(err, errsize, "irqbalance did not come up after being started");
	return -ETIMEDOUT;
}

const nt_setting_kind nt_setting_irqbalance_service = {
	.name = "irqbalance_service",
	/* The host's systemd unit: stopping it stops balancing for every
	 * namespace. */
	.scope = NT_SCOPE_MACHINE,
	.scope_why = "irqbalance.service is the machine's, not the namespace's",
	.parse = svc_parse,
	.format = text_format,
	.equal = svc_equal,
	.read = svc_read,
	.check = svc_check,
	.apply = svc_apply,
	.order = 0,
	/* A service starting or stopping sends no kernel event. */
	.events = 0,
};

/* ---- "irqbalance": "ban" | "stop" | "require-absent" | "ignore" ---- */

static const char *const modes[] = { "ban", "stop", "require-absent", "ignore", NULL };

/* Whether PROFILE asks to set any IRQ's affinity. */
static bool sets_affinity(const json_t *profile)
{
	return json_array_size(json_object_get(profile, "irq_affinity")) > 0 ||
	       json_object_get(profile, "other_irqs") != NULL;
}

static void validate_irqbalance(nt_section_check *c, const json_t *value)
{
	const char *mode = json_string_value(value);
	bool known = false;
	for (int i = 0; modes[i] && !known; i++)
		known = strcmp(modes[i], mode) == 0;
	if (!known) {
		nt_sc_error(c, "$.irqbalance",
			    "unknown irqbalance handling '%s' (known: ban, stop, require-absent, ignore)",
			    mode);
		return;
	}
	/* The operator asked for a host where nothing rewrites affinity. */
	if (strcmp(mode, "require-absent") == 0 && c->t && c->t->irqbalance.running &&
	    sets_affinity(c->profile))
		nt_sc_error(c, "$.irqbalance",
			    "irqbalance (pid %d) is running and this profile sets IRQ affinity; "
			    "stop it, or use \"ban\" or \"stop\"", c->t->irqbalance.pid);
}

/* irqbalance rewrites affinity every few seconds
 * (docs/field-reports.md#irqbalance-rewrites): keep it off the IRQs this plan
 * places, stop it, or say that it will undo them. This runs after the IRQ
 * sections (pass 1) and its step is ordered first, so that the daemon is
 * told before any affinity changes. */
static int desire_irqbalance(nt_section_plan *p, const json_t *value)
{
	const char *mode = json_string_value(value);
	const nt_topology *t = p->t;
	int nirq = 0, r = 0;
	int *irqs = NULL;
	nt_value v;

	for (int i = 0; i < p->n; i++)
		nirq += p->v[i].kind == &nt_setting_irq_affinity;
	if (nirq == 0 || !t->irqbalance.running)
		return 0;
	if (!mode || strcmp(mode, "ignore") == 0) {
		nt_desire_warn(p, "irqbalance (pid %d) is running and will rewrite the IRQ affinity this "
			       "profile sets within seconds; set \"irqbalance\" to \"ban\" or \"stop\"%s",
			       t->irqbalance.pid, mode ? "" : " (or \"ignore\" to accept it)");
		return 0;
	}
	if (strcmp(mode, "ban") != 0 && strcmp(mode, "stop") != 0)
		return 0; /* require-absent: validation refused it already */
	if (nt_irqbalance_controllable(&t->ctx, NULL, 0) < 0) {
		nt_desire_warn(p, "irqbalance \"%s\" left out: irqbalance is controlled only on the live "
			       "host (--root /), not in a fixture tree", mode);
		return 0;
	}
	memset(&v, 0, sizeof(v));
	if (strcmp(mode, "stop") == 0) {
		snprintf(v.text, sizeof(v.text), "stopped");
		return nt_desire_put(p, &nt_setting_irqbalance_service, "irqbalance", "", &v, "$.irqbalance");
	}
	irqs = malloc(sizeof(int) * (size_t)nirq);
	if (!irqs)
		return -ENOMEM;
	int k = 0;
	for (int i = 0; i < p->n; i++)
		if (p->v[i].kind == &nt_setting_irq_affinity)
			irqs[k++] = atoi(p->v[i].target);
	if (nt_irqlist_format(irqs, k, v.text, sizeof(v.text)) < 0)
		nt_desire_warn(p, "irqbalance \"ban\": %d IRQs do not fit one ban list; left out (use \"stop\")", k);
	else
		r = nt_desire_put(p, &nt_setting_irqbalance_ban, "irqbalance", "", &v, "$.irqbalance");
	free(irqs);
	return r;
}

static const nt_profile_section section_irqbalance = {
	.key = "irqbalance",
	.type = JSON_STRING,
	.validate = validate_irqbalance,
	.desire = desire_irqbalance,
	.pass = 1,
	/* Without the member, a running daemon is still worth a warning. */
	.always = true,
};

const nt_setting_module nt_module_irqbalance = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_irqbalance_ban, &nt_setting_irqbalance_service,
						    NULL },
	.sections = (const nt_profile_section *const[]){ &section_irqbalance, NULL },
};
