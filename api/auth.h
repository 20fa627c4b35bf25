/* SPDX-License-Identifier: Apache-2.0 */
/* Who may call the API: bearer tokens from a token file, and (with TLS)
 * client certificates.
 *
 * Token file (`nettune serve --tokens FILE`), one token a line:
 *
 *     # NAME   SCOPE  SECRET
 *     fleet    apply  3q8v0p...   (16 to 256 printable bytes, no spaces)
 *     grafana  read   Zk1m2n...
 *
 * NAME is [A-Za-z0-9._@-], 1 to 64 bytes, and is what transactions and logs
 * record; SCOPE is "read" (GET and HEAD) or "apply" (everything). Blank
 * lines and lines starting with '#' are ignored. The file must not be
 * accessible by group or others (chmod 600): a readable token file gives
 * away the keys, and a writable one lets anyone add their own.
 *
 * Only the SHA-256 of each secret is kept in memory; a presented secret is
 * hashed and compared against every token's hash in constant time, so the
 * time taken tells nothing about how much of a secret was right or which
 * token came closest. */
#ifndef NT_API_AUTH_H
#define NT_API_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum nt_scope {
	NT_SCOPE_NONE = 0,
	NT_SCOPE_READ = 1,
	NT_SCOPE_APPLY = 2, /* includes read */
} nt_scope;

#define NT_TOKEN_NAME_MAX 64
#define NT_TOKEN_SECRET_MIN 16
#define NT_TOKEN_SECRET_MAX 256

typedef struct nt_auth nt_auth;

/* Load the token file at PATH. Returns 0, or -errno / NT_EINVALID with a
 * sentence for the operator in ERR (never containing a secret). *OUT is
 * owned by the caller (nt_auth_free). A file with no token is an error:
 * the operator asked for authentication and would get none. */
int nt_auth_load(const char *path, nt_auth **out, char *err, size_t errsize);
/* The same from the open stream F (read to its end, not closed), PATH
 * naming it in messages; no check of the file's mode or owner. */
int nt_auth_read(FILE *f, const char *path, nt_auth **out, char *err, size_t errsize);
void nt_auth_free(nt_auth *a);
int nt_auth_count(const nt_auth *a);

/* Check an Authorization header value ("Bearer SECRET"). Returns 0 with the
 * token's name (valid as long as A) and scope, or -EACCES when the header is
 * missing, malformed or names no token. */
int nt_auth_bearer(const nt_auth *a, const char *header, const char **name, nt_scope *scope);

/* Whether S is a valid token name. */
bool nt_auth_name_valid(const char *s);

#endif
