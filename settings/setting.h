/* Kinds of setting a transaction can change, behind one small set of
 * operations (read, validate, apply; verification is read back and
 * compare), one file per kind in settings/ and one table entry in
 * settings/registry.c, the way iproute2 keeps each link type behind a
 * struct link_util.
 *
 * Targets and values are strings ("177" / "4-7", "enos0" / "rx=4096,tx=1024",
 * "bond0" / "layer3+4", "net.ipv4.tcp_rmem" / "4096 87380 16777216") so the
 * journal stores every kind the same way and can restore any of them after
 * a crash without knowing more than the kind's name. */
#ifndef NT_SETTING_H
#define NT_SETTING_H

#include "kernel/ctx.h"
#include "host/topology.h"

#include <stdbool.h>
#include <stddef.h>

#define NT_VALUE_MAX 256

typedef struct nt_setting_kind {
	const char *name; /* "irq_affinity", "rings", "bond", "sysctl" */
	/* Current value of TARGET into VALUE. Returns 0 or -errno. */
	int (*read)(const nt_ctx *ctx, const char *target, char *value, size_t size);
	/* Whether VALUE can be applied to TARGET on this host. Returns 0, or
	 * NT_EINVALID with a reason in WHY. T may be NULL (journal replay). */
	int (*validate)(const nt_ctx *ctx, const nt_topology *t, const char *target,
			const char *value, char *why, size_t whysize);
	/* Write VALUE. Returns 0 or the kernel's -errno, with any extended
	 * error text in ERR. */
	int (*apply)(const nt_ctx *ctx, const char *target, const char *value, char *err,
		     size_t errsize);
	/* What the target shows after an apply beyond its value, for the
	 * record (an IRQ's effective CPUs, which change only when it next
	 * fires); NULL for kinds with nothing more. Returns 0 or -errno. */
	int (*observe)(const nt_ctx *ctx, const char *target, char *out, size_t size);
	/* Whether two values mean the same; NULL means byte equality. */
	bool (*equal)(const char *a, const char *b);
	/* An apply error that means "this target cannot be changed, and that is
	 * not a failure" (EIO on a kernel-managed IRQ); 0 for none. */
	int skip_errno;
	const char *skip_reason;
	/* For kinds whose value is a whole list that others share (the
	 * irqbalance ban list): the value to write, made at plan time from
	 * the current value BEFORE and what the profile WANTS added to it.
	 * Returns 0 or -errno (-E2BIG when it does not fit). NULL: the
	 * profile's value is written as it is. */
	int (*compose)(const char *before, const char *wanted, char *out, size_t size);
} nt_setting_kind;

/* The kind called NAME, or NULL. */
const nt_setting_kind *nt_setting_find(const char *name);
/* The NULL-terminated table of all kinds. */
extern const nt_setting_kind *const nt_setting_kinds[];

extern const nt_setting_kind nt_setting_irq_affinity;
extern const nt_setting_kind nt_setting_rings;
extern const nt_setting_kind nt_setting_channels;
/* "rx=N,tx=N,other=N,combined=N" for C. Returns 0 or -ENOSPC. */
int nt_channels_format(const nt_channels *c, char *value, size_t size);
extern const nt_setting_kind nt_setting_bond;
extern const nt_setting_kind nt_setting_sysctl;
/* settings/irqbalance.c: the daemon's ban list and whether it runs. */
extern const nt_setting_kind nt_setting_irqbalance_ban;
extern const nt_setting_kind nt_setting_irqbalance_service;

/* IRQ lists as the irqbalance_ban kind writes them: ascending, ranges for
 * runs, space-separated ("60-68 80-84", "" for none), so a host's worth of
 * queue vectors fits one value. FORMAT sorts and de-duplicates IRQS in
 * place. Returns 0 or -E2BIG / NT_EINVALID. PARSE gives a malloc'd array
 * (caller frees; NULL when empty). */
int nt_irqlist_format(int *irqs, int n, char *out, size_t size);
int nt_irqlist_parse(const char *list, int **irqs, int *n);

bool nt_setting_equal(const nt_setting_kind *k, const char *a, const char *b);

/* Read TARGET back and compare with WANT. Returns 0 when equal, NT_ECONFLICT
 * when it reads differently (GOT holds what it reads), or the read error. */
int nt_setting_verify(const nt_ctx *ctx, const nt_setting_kind *k, const char *target,
		      const char *want, char *got, size_t gotsize);

/* Write VALUE to a kernel file under the root. In a fixture tree a newline
 * is added, as the kernel shows one when the file is read, so a restored
 * fixture file is byte-for-byte what it was. Returns 0 or -errno. */
int nt_setting_write(const nt_ctx *ctx, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Whether the bonding driver knows xmit_hash_policy NAME. */
bool nt_bond_policy_known(const char *name);

/* Sysctl keys nettune may change, and the shape of their values. */
typedef enum {
	NT_SYSCTL_INT, /* one integer in [min, max] */
	NT_SYSCTL_TRIPLE, /* three ascending positive integers */
	NT_SYSCTL_PORTS, /* two ascending integers in 1..65535 */
	NT_SYSCTL_WORD, /* one token of [A-Za-z0-9_-] */
} nt_sysctl_shape;

typedef struct nt_sysctl_key {
	const char *key;
	nt_sysctl_shape shape;
	long min, max; /* for NT_SYSCTL_INT */
} nt_sysctl_key;

/* The allowlist entry for KEY, or NULL when KEY may not be changed. */
const nt_sysctl_key *nt_sysctl_allowed(const char *key);
/* NULL-terminated (key == NULL) allowlist. */
extern const nt_sysctl_key nt_sysctl_allowlist[];
/* Check VALUE against KEY's shape. Returns 0 or NT_EINVALID with WHY. */
int nt_sysctl_check_shape(const char *key, const char *value, char *why, size_t whysize);

#endif
