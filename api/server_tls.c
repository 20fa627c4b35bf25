/* SPDX-License-Identifier: Apache-2.0 */
/* TLS for the HTTP server: the certificate, key and client CA read from
 * PEM files once at start (libmicrohttpd takes PEM text, and does the TLS
 * itself on the same GnuTLS), and the check of a client certificate
 * against that CA. */
#include "api/server_int.h"
#include "kernel/regfile.h"

#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* TLS material read from files is limited to this (a certificate chain
 * is a few KiB). */
#define NT_PEM_MAX (1024 * 1024)

/* Read a PEM file whole, NUL-terminated (MHD takes PEM as a C string);
 * a FIFO or a directory is refused, not waited on (kernel/regfile.h). */
static int read_pem(const char *path, char **out, char *err, size_t errsize)
{
	size_t len = 0;
	int r = nt_regfile_read(path, NT_PEM_MAX, out, &len, err, errsize);
	if (r < 0)
		return r;
	if (!strstr(*out, "-----BEGIN ")) {
		explicit_bzero(*out, len);
		free(*out);
		*out = NULL;
		snprintf(err, errsize, "%s is not a PEM file", path);
		return -EINVAL;
	}
	return 0;
}

int nt_srv_tls_load(struct nt_server *s, char *err, size_t errsize)
{
	const nt_server_config *cfg = &s->cfg;
	int r;

	if (!!cfg->tls_cert[0] != !!cfg->tls_key[0]) {
		snprintf(err, errsize, "TLS wants both a certificate and a key (--tls-cert and "
				       "--tls-key)");
		return -EINVAL;
	}
	if (cfg->tls_client_ca[0] && !cfg->tls_cert[0]) {
		snprintf(err, errsize, "client certificates (--tls-client-ca) need TLS "
				       "(--tls-cert and --tls-key)");
		return -EINVAL;
	}
	if (cfg->tls_cert[0]) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			snprintf(err, errsize, "this libmicrohttpd was built without TLS support");
			return -ENOTSUP;
		}
		if ((r = read_pem(cfg->tls_cert, &s->tls_cert, err, errsize)) < 0 ||
		    (r = read_pem(cfg->tls_key, &s->tls_key, err, errsize)) < 0)
			return r;
		s->tls = true;
	}
	if (cfg->tls_client_ca[0]) {
		if ((r = read_pem(cfg->tls_client_ca, &s->tls_ca, err, errsize)) < 0)
			return r;
		s->client_certs = true;
	}
	return 0;
}

void nt_srv_tls_free(struct nt_server *s)
{
	if (s->tls_key) {
		explicit_bzero(s->tls_key, strlen(s->tls_key));
		free(s->tls_key);
	}
	free(s->tls_cert);
	free(s->tls_ca);
	s->tls_key = s->tls_cert = s->tls_ca = NULL;
}

int nt_srv_client_cert(struct MHD_Connection *mc, char *dn, size_t dnsize, char *why,
		       size_t whysize)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_session_t sess = ci ? (gnutls_session_t)ci->tls_session : NULL;
	unsigned int status = 0, ncerts = 0;
	gnutls_x509_crt_t crt = NULL;
	gnutls_datum_t d = { NULL, 0 };
	int r = -EACCES;

	if (!sess)
		return 0;
	const gnutls_datum_t *certs = gnutls_certificate_get_peers(sess, &ncerts);
	if (!certs || ncerts == 0)
		return 0;
	/* Checked against the CA given to MHD as its trust list: signature,
	 * validity dates, key usage. The host name is not checked: a client
	 * certificate names a client, not a server. */
	if (gnutls_certificate_verify_peers2(sess, &status) < 0 || status != 0) {
		gnutls_datum_t out = { NULL, 0 };
		if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &out,
								 0) == 0) {
			snprintf(why, whysize, "%s", (const char *)out.data);
			gnutls_free(out.data);
		} else {
			snprintf(why, whysize, "it does not verify");
		}
		return -EACCES;
	}
	if (gnutls_x509_crt_init(&crt) < 0)
		goto out;
	if (gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) < 0 ||
	    gnutls_x509_crt_get_dn3(crt, &d, 0) < 0) {
		snprintf(why, whysize, "its subject cannot be read");
		goto out;
	}
	snprintf(dn, dnsize, "%.*s", (int)d.size, (const char *)d.data);
	r = 1;
out:
	gnutls_free(d.data);
	if (crt)
		gnutls_x509_crt_deinit(crt);
	return r;
}
