/* irqbalance as two kinds of setting, so that keeping it off tuned IRQs is
 * journalled and rolled back like any other change (issue 4):
 *
 *   irqbalance_ban      target "irqbalance", value: the banned IRQs,
 *                       ascending and space-separated ("" for none).
 *   irqbalance_service  target "irqbalance", value "stopped", or
 *                       "running <how to start it>" where the rest is
 *                       "systemd" or the daemon's command line; only the
 *                       first word is compared.
 *
 * Both need the live host: a fixture tree has no daemon to talk to. */
#include "agent/irqbalance.h"
#include "agent/setting.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int need_live(const nt_ctx *ctx, char *err, size_t errsize)
{
	if (ctx->live)
		return 0;
	if (err)
		snprintf(err, errsize, "irqbalance is controlled only on the live host (--root /)");
	return -EOPNOTSUPP;
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
	return nt_irqbalance_parse_banned(reply, value, size);
}

static int ban_validate(const nt_ctx *ctx, const nt_topology *t, const char *target, const char *value,
			char *why, size_t whysize)
{
	if (strcmp(target, "irqbalance") != 0) {
		snprintf(why, whysize, "target must be \"irqbalance\"");
		return NT_EINVALID;
	}
	for (const char *p = value; *p; p++) {
		if (!(*p == ' ' || (*p >= '0' && *p <= '9'))) {
			snprintf(why, whysize, "a ban list is IRQ numbers separated by spaces");
			return NT_EINVALID;
		}
	}
	return need_live(ctx, why, whysize) < 0 ? NT_EINVALID : 0;
}

static int ban_apply(const nt_ctx *ctx, const char *target, const char *value, char *err, size_t errsize)
{
	nt_irqbalance_proc p;
	char cmd[8192];
	int r;

	if ((r = need_live(ctx, err, errsize)) < 0)
		return r;
	if ((r = nt_irqbalance_find(ctx, &p)) < 0)
		return r;
	if (!p.pid) {
		if (!*value)
			return 0;
		snprintf(err, errsize, "irqbalance is not running");
		return -ESRCH;
	}
	/* The command replaces the whole list, so VALUE is always complete. */
	int n = snprintf(cmd, sizeof(cmd), "settings ban irqs %s", *value ? value : "NONE");
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -E2BIG;
	r = nt_irqbalance_command(&p, cmd, NULL, 0);
	if (r < 0)
		snprintf(err, errsize, "irqbalance socket: %s", strerror(-r));
	return r < 0 ? r : 0;
}

const nt_setting_kind nt_setting_irqbalance_ban = {
	.name = "irqbalance_ban",
	.read = ban_read,
	.validate = ban_validate,
	.apply = ban_apply,
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
