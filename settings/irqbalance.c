/* irqbalance as two kinds of setting, so that keeping it off tuned IRQs is
 * journalled and rolled back like any other change (issue 4):
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
 * Both need the live host: a fixture tree has no daemon to talk to. */
#include "kernel/irqbalance_client.h"
#include "settings/setting.h"

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

static int need_live(const nt_ctx *ctx, char *err, size_t errsize)
{
	return nt_irqbalance_controllable(ctx, err, errsize);
}

static int ban_read(const nt_ctx *ctx, const char *target, char *value, size_t size)
{
	nt_irqbalance_proc p;
	char reply[65536];
	int r;

	if ((r = need_live(ctx, NULL, 0)) < 0)
		return r;
	if ((r = nt_irqbalance_find(ctx, &p)) < 0)
		return r;
	if (!p.pid) {
		/* No daemon: nothing is banned and nothing needs to be. */
		value[0] = '\0';
		return 0;
	}
	if ((r = nt_irqbalance_command(&p, "setup", reply, sizeof(reply))) < 0)
		return r;
	/* The reply is no longer needed once parsed: parse into its tail. */
	_Static_assert(sizeof(reply) >= 32768, "room for the parsed list");
	char *list = reply + sizeof(reply) / 2;
	if ((r = nt_irqbalance_parse_banned(reply, list, sizeof(reply) / 2)) < 0)
		return r;
	return irqlist_canon(list, value, size);
}

static bool ban_equal(const char *a, const char *b)
{
	char x[NT_VALUE_MAX], y[NT_VALUE_MAX];
	if (irqlist_canon(a, x, sizeof(x)) < 0 || irqlist_canon(b, y, sizeof(y)) < 0)
		return strcmp(a, b) == 0;
	return strcmp(x, y) == 0;
}

/* The ban list to write: what is banned already plus what the profile
 * places, so a ban someone else made survives the transaction. */
static int ban_compose(const char *before, const char *wanted, char *out, size_t size)
{
	int *a = NULL, *b = NULL, na = 0, nb = 0, r;
	if ((r = nt_irqlist_parse(before, &a, &na)) < 0 || (r = nt_irqlist_parse(wanted, &b, &nb)) < 0)
		goto out;
	int *all = realloc(a, sizeof(int) * (size_t)(na + nb + 1));
	if (!all) {
		r = -ENOMEM;
		goto out;
	}
	a = all;
	if (nb)
		memcpy(a + na, b, sizeof(int) * (size_t)nb);
	r = nt_irqlist_format(a, na + nb, out, size);
out:
	free(a);
	free(b);
	return r;
}

static int ban_validate(const nt_ctx *ctx, const nt_topology *t, const char *target, const char *value,
			char *why, size_t whysize)
{
	if (strcmp(target, "irqbalance") != 0) {
		snprintf(why, whysize, "target must be \"irqbalance\"");
		return NT_EINVALID;
	}
	int *v = NULL, n = 0;
	int r = nt_irqlist_parse(value, &v, &n);
	free(v);
	if (r < 0) {
		snprintf(why, whysize, "a ban list is IRQ numbers and ranges separated by spaces");
		return NT_EINVALID;
	}
	return need_live(ctx, why, whysize) < 0 ? NT_EINVALID : 0;
}

static int ban_apply(const nt_ctx *ctx, const char *target, const char *value, char *err, size_t errsize)
{
	nt_irqbalance_proc p;
	char cmd[16384], got[NT_VALUE_MAX];
	int *v = NULL, n = 0, r;
	size_t len;

	if ((r = need_live(ctx, err, errsize)) < 0)
		goto out;
	if ((r = nt_irqlist_parse(value, &v, &n)) < 0) {
		snprintf(err, errsize, "'%s' is not an IRQ list", value);
		goto out;
	}
	if ((r = nt_irqbalance_find(ctx, &p)) < 0)
		goto out;
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
		if (ban_read(ctx, target, got, sizeof(got)) == 0 && ban_equal(got, value))
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
out:
	free(v);
	return r;
}

const nt_setting_kind nt_setting_irqbalance_ban = {
	.name = "irqbalance_ban",
	.read = ban_read,
	.validate = ban_validate,
	.apply = ban_apply,
	.equal = ban_equal,
	.compose = ban_compose,
};

static int svc_read(const nt_ctx *ctx, const char *target, char *value, size_t size)
{
	nt_irqbalance_proc p;
	int r;

	if ((r = need_live(ctx, NULL, 0)) < 0)
		return r;
	if ((r = nt_irqbalance_find(ctx, &p)) < 0)
		return r;
	if (!p.pid) {
		snprintf(value, size, "stopped");
		return 0;
	}
	r = snprintf(value, size, "running %s", p.systemd ? "systemd" : p.cmdline);
	/* A command line cut short could not start the daemon again. */
	return r < 0 || (size_t)r >= size ? -E2BIG : 0;
}

static bool svc_equal(const char *a, const char *b)
{
	size_t la = strcspn(a, " "), lb = strcspn(b, " ");
	return la == lb && strncmp(a, b, la) == 0;
}

static int svc_validate(const nt_ctx *ctx, const nt_topology *t, const char *target, const char *value,
			char *why, size_t whysize)
{
	if (strcmp(value, "stopped") != 0 && strncmp(value, "running ", 8) != 0) {
		snprintf(why, whysize, "irqbalance service state is \"stopped\" or \"running ...\"");
		return NT_EINVALID;
	}
	return need_live(ctx, why, whysize) < 0 ? NT_EINVALID : 0;
}

static int svc_apply(const nt_ctx *ctx, const char *target, const char *value, char *err, size_t errsize)
{
	nt_irqbalance_proc p;
	int r;

	if ((r = need_live(ctx, err, errsize)) < 0)
		return r;
	if ((r = nt_irqbalance_find(ctx, &p)) < 0)
		return r;
	if (strcmp(value, "stopped") == 0)
		return nt_irqbalance_stop(&p, err, errsize);
	if (p.pid)
		return 0; /* already running */
	if ((r = nt_irqbalance_start(value + 8, err, errsize)) < 0)
		return r;
	/* The daemon is exec'd by a grandchild: wait until it shows, so the
	 * read-back that verifies this step finds it (at most 2 s). */
	for (int i = 0; i < 200; i++) {
		if (nt_irqbalance_find(ctx, &p) == 0 && p.pid)
			return 0;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	snprintf(err, errsize, "irqbalance did not come up after being started");
	return -ETIMEDOUT;
}

const nt_setting_kind nt_setting_irqbalance_service = {
	.name = "irqbalance_service",
	.read = svc_read,
	.validate = svc_validate,
	.apply = svc_apply,
	.equal = svc_equal,
};
