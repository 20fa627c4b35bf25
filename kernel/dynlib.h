/* SPDX-License-Identifier: Apache-2.0 */
/* Optional libraries opened when first needed (dlopen), not linked.
 *
 * Why: the agent must not map an HTTP client stack (libcurl: OpenSSL,
 * Kerberos, LDAP, SSH, ...) or systemd's bus library (libgcrypt, lz4,
 * zstd, xz, ...) it never calls. Both cost megabytes of RSS and start-up
 * time in every `nettune serve`, `nettune topology` and `nettune --help`,
 * yet only the CLI's agent commands and a stop/start of irqbalance.service
 * use them. The same pattern systemd uses for its optional libraries: the
 * headers still give the types and prototypes (callers declare their
 * pointers with typeof of the real functions, so the compiler checks each
 * call), and the library is opened once, by the first caller, under
 * pthread_once. It is never closed: the pointers stay valid for the life of
 * the process. */
#ifndef NT_DYNLIB_H
#define NT_DYNLIB_H

#include <stddef.h>

typedef struct nt_dynsym {
	const char *name; /* the symbol */
	void **slot; /* where its address goes (a function pointer's storage) */
} nt_dynsym;

/* One entry of an nt_dynsym table: the symbol FN into the pointer PTR,
 * which must be declared typeof(FN) *. The unevaluated assignment inside
 * sizeof makes the compiler check that (a pointer of another type is a
 * warning, an error with NETTUNE_WERROR). */
#define NT_DYNSYM(fn, ptr) { #fn, (void **)&(ptr) + 0 * sizeof((ptr) = (fn)) }

/* Open SONAME and resolve the N symbols of SYMS into their slots. Returns
 * 0; -ENOENT when the library cannot be opened (ERR: "HINT" when given,
 * else dlerror's text); -ELIBBAD when a symbol is missing (ERR names it).
 * On failure every slot is NULL and nothing stays open. Not thread-safe
 * by itself: callers run it under pthread_once. */
int nt_dynlib_open(const char *soname, const nt_dynsym *syms, size_t n, const char *hint,
		   char *err, size_t errsize);

#endif
