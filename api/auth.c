/* SPDX-License-Identifier: Apache-2.0 */
/* Bearer tokens: the token file and constant-time checks (see api/auth.h). */
#include "api/auth.h"
#include "kernel/ctx.h"
#include "kernel/regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define HASH_LEN 32 /* SHA-256 */
/* More tokens than any fleet needs; bounds the constant-time loop. */
#define NT_TOKENS_MAX 1024

typedef struct nt_token {
	char name[NT_TOKEN_NAME_MAX + 1];
	nt_scope scope;
	unsigned char hash[HASH_LEN];
} nt_token;

struct nt_auth {
	nt_token *tokens;
	int n;
};

bool nt_auth_name_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > NT_TOKEN_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '.' || c == '_' || c == '-' || c == '@';
		if (!ok)
			return false;
	}
	return true;
}

static bool secret_valid(const char *s, size_t n)
{
	if (n < NT_TOKEN_SECRET_MIN || n > NT_TOKEN_SECRET_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

static int sha256(const char *s, size_t n, unsigned char out[HASH_LEN])
{
	int r = gnutls_hash_fast(GNUTLS_DIG_SHA256, s, n, out);
	return r < 0 ? -EIO : 0;
}

/* Equal in time independent of where A and B differ. */
static bool ct_equal(const unsigned char *a, const unsigned char *b, size_t n)
{
	volatile unsigned char d = 0;
	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

void nt_auth_free(nt_auth *a)
{
	if (!a)
		return;
	if (a->tokens) /* NULL when the file held no token */
		explicit_bzero(a->tokens, (size_t)a->n * sizeof(*a->tokens));
	free(a->tokens);
	free(a);
}

int nt_auth_count(const nt_auth *a)
{
	return a ? a->n : 0;
}

/* Parse one non-comment line (modified in place) into T. Returns 0 or
 * NT_EINVALID with the reason in WHY. */
static int parse_line(char *line, nt_token *t, char *why, size_t whysize)
{
	char *save = NULL;
	char *name = strtok_r(line, " \t", &save);
	char *scope = name ? strtok_r(NULL, " \t", &save) : NULL;
	char *secret = scope ? strtok_r(NULL, " \t", &save) : NULL;
	char *extra = secret ? strtok_r(NULL, " \t", &save) : NULL;

	if (!secret || extra) {
		snprintf(why, whysize, "wants three fields: NAME SCOPE SECRET");
		return NT_EINVALID;
	}
	if (!nt_auth_name_valid(name)) {
		snprintf(why, whysize, "the name must be 1 to %d of [A-Za-z0-9._@-]",
			 NT_TOKEN_NAME_MAX);
		return NT_EINVALID;
	}
	if (strcmp(scope, "read") == 0) {
		t->scope = NT_SCOPE_READ;
	} else if (strcmp(scope, "apply") == 0) {
		t->scope = NT_SCOPE_APPLY;
	} else {
		snprintf(why, whysize, "token '%s': the scope must be 'read' or 'apply'", name);
		return NT_EINVALID;
	}
	size_t sl = strlen(secret);
	if (!secret_valid(secret, sl)) {
		snprintf(why, whysize,
			 "token '%s': the secret must be %d to %d printable bytes without spaces",
			 name, NT_TOKEN_SECRET_MIN, NT_TOKEN_SECRET_MAX);
		return NT_EINVALID;
	}
	snprintf(t->name, sizeof(t->name), "%s", name);
	if (sha256(secret, sl, t->hash) < 0) {
		snprintf(why, whysize, "cannot hash the secret of '%s'", name);
		return -EIO;
	}
	return 0;
}

int nt_auth_load(const char *path, nt_auth **out, char *err, size_t errsize)
{
	FILE *f = NULL;
	int fd = -1, r;
	struct stat st;

	*out = NULL;
	/* A FIFO in place of the file is refused, not waited on (start-up
	 * would hang, deaf to SIGTERM). A symlink is followed: secrets are
	 * often mounted through one. */
	char opened[PATH_MAX + 128];
	fd = nt_regfile_open(path, &st, opened, sizeof(opened));
	if (fd < 0) {
		snprintf(err, errsize, "token file %s", opened);
		return fd;
	}
	/* Checked on the open descriptor, so the file read is the file checked. */
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		r = -EPERM;
		snprintf(err, errsize,
			 "token file %s has mode %04o: it must not be accessible by group or "
			 "others (chmod 600 %s)",
			 path, (unsigned)(st.st_mode & 07777), path);
		goto fail;
	}
	/* A file someone else owns is one someone else can rewrite (or chmod
	 * back to readable): refused like a readable one. */
	if (st.st_uid != geteuid()) {
		r = -EPERM;
		snprintf(err, errsize,
			 "token file %s is owned by uid %u, not by the agent's user (uid %u): "
			 "chown %u %s",
			 path, (unsigned)st.st_uid, (unsigned)geteuid(), (unsigned)geteuid(), path);
		goto fail;
	}
	f = fdopen(fd, "r");
	if (!f) {
		r = -errno;
		snprintf(err, errsize, "token file %s: %s", path, strerror(errno));
		goto fail;
	}
	fd = -1;
	r = nt_auth_read(f, path, out, err, errsize);
fail:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	return r;
}

int nt_auth_read(FILE *f, const char *path, nt_auth **out, char *err, size_t errsize)
{
	nt_auth *a = NULL;
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, r;

	*out = NULL;
	a = calloc(1, sizeof(*a));
	if (!a) {
		r = -ENOMEM;
		snprintf(err, errsize, "out of memory");
		goto fail;
	}
	ssize_t len;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		/* A NUL would end the line early, silently: a secret cut, or a
		 * scope dropped. */
		if (memchr(line, '\0', (size_t)len)) {
			explicit_bzero(line, cap);
			r = NT_EINVALID;
			snprintf(err, errsize, "token file %s line %d: holds a NUL byte", path, lineno);
			goto fail;
		}
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		if (a->n == NT_TOKENS_MAX) {
			r = NT_EINVALID;
			snprintf(err, errsize, "token file %s: more than %d tokens", path,
				 NT_TOKENS_MAX);
			goto fail;
		}
		nt_token *nt = realloc(a->tokens, (size_t)(a->n + 1) * sizeof(*nt));
		if (!nt) {
			r = -ENOMEM;
			snprintf(err, errsize, "out of memory");
			goto fail;
		}
		a->tokens = nt;
		nt_token *t = &a->tokens[a->n];
		memset(t, 0, sizeof(*t));
		char why[256];
		r = parse_line(p, t, why, sizeof(why));
		/* The line held a secret: it does not stay in memory. */
		explicit_bzero(line, cap);
		if (r < 0) {
			snprintf(err, errsize, "token file %s line %d: %s", path, lineno, why);
			goto fail;
		}
		for (int i = 0; i < a->n; i++) {
			if (strcmp(a->tokens[i].name, t->name) == 0) {
				r = NT_EINVALID;
				snprintf(err, errsize, "token file %s line %d: token name '%s' is used twice",
					 path, lineno, t->name);
				goto fail;
			}
			if (ct_equal(a->tokens[i].hash, t->hash, HASH_LEN)) {
				r = NT_EINVALID;
				snprintf(err, errsize,
					 "token file %s line %d: token '%s' has the same secret as '%s'",
					 path, lineno, t->name, a->tokens[i].name);
				goto fail;
			}
		}
		a->n++;
	}
	if (ferror(f)) {
		r = -EIO;
		snprintf(err, errsize, "token file %s: read error", path);
		goto fail;
	}
	if (a->n == 0) {
		r = NT_EINVALID;
		snprintf(err, errsize, "token file %s holds no token", path);
		goto fail;
	}
	if (line)
		explicit_bzero(line, cap);
	free(line);
	*out = a;
	return 0;

fail:
	if (line)
		explicit_bzero(line, cap);
	free(line);
	nt_auth_free(a);
	return r;
}

int nt_auth_bearer(const nt_auth *a, const char *header, const char **name, nt_scope *scope)
{
	unsigned char h[HASH_LEN];
	int found = -1;

	*name = NULL;
	*scope = NT_SCOPE_NONE;
	if (!a || !header)
		return -EACCES;
	while (*header == ' ' || *header == '\t')
		header++;
	/* RFC 7235: the scheme name is case-insensitive. */
	if (strncasecmp(header, "Bearer", 6) != 0 || (header[6] != ' ' && header[6] != '\t'))
		return -EACCES;
	const char *s = header + 7;
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (!secret_valid(s, n) || sha256(s, n, h) < 0)
		return -EACCES;
	/* Every token is compared, whichever matches. */
	for (int i = 0; i < a->n; i++) {
		bool eq = ct_equal(a->tokens[i].hash, h, HASH_LEN);
		found = eq ? i : found;
	}
	explicit_bzero(h, sizeof(h));
	if (found < 0)
		return -EACCES;
	*name = a->tokens[found].name;
	*scope = a->tokens[found].scope;
	return 0;
}
