/* SPDX-License-Identifier: Apache-2.0 */
/* HTTPS and client certificates: certificates are made here with openssl
 * (a CA, a server certificate for 127.0.0.1, a client certificate the CA
 * signed and a self-signed "rogue" one). The agent serves HTTPS; a client
 * certificate from the CA authenticates with scope apply and its subject is
 * what the transaction records; the rogue one and no credentials get 401;
 * tokens still work over TLS. */
#include "cli/probe.h"
#include "harness.h"
#include "integration/nt_agent_ext.h"

#include <stdarg.h>

#define SRC NT_FIXTURES "/vm-virtio-2cpu"

static char dir[PATH_MAX];

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int r = system(cmd);
	if (r != 0)
		fprintf(stderr, "command failed (%d): %s\n", r, cmd);
	return r;
}

static int make_certs(void)
{
	const char *ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
	if (sh("cd '%s' && printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' > srv.ext"
	       " && printf 'extendedKeyUsage=clientAuth\\n' > cli.ext", dir))
		return -1;
	if (sh("cd '%s' && openssl req -x509 %s -keyout ca.key -out ca.pem -days 2"
	       " -subj '/CN=nettune test CA' 2>/dev/null", dir, ec))
		return -1;
	if (sh("cd '%s' && openssl req %s -keyout srv.key -out srv.csr -subj '/CN=127.0.0.1' 2>/dev/null"
	       " && openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial"
	       " -out srv.pem -days 2 -extfile srv.ext 2>/dev/null", dir, ec))
		return -1;
	if (sh("cd '%s' && openssl req %s -keyout cli.key -out cli.csr"
	       " -subj '/O=fleet/CN=controller-1' 2>/dev/null"
	       " && openssl x509 -req -in cli.csr -CA ca.pem -CAkey ca.key -CAcreateserial"
	       " -out cli.pem -days 2 -extfile cli.ext 2>/dev/null", dir, ec))
		return -1;
	if (sh("cd '%s' && openssl req -x509 %s -keyout rogue.key -out rogue.pem -days 2"
	       " -subj '/O=fleet/CN=controller-1' 2>/dev/null", dir, ec))
		return -1;
	return sh("chmod 600 '%s'/*.key", dir);
}

int main(void)
{
	char p[8][PATH_MAX + 32];
	const char *names[] = { "ca.pem", "srv.pem", "srv.key", "cli.pem", "cli.key", "rogue.pem",
				"rogue.key", "tokens" };
	nt_agent a;

	if (system("openssl version >/dev/null 2>&1") != 0)
		SKIP("openssl is not installed (Debian package openssl) to make test certificates");
	if (!curl_version_info(CURLVERSION_NOW)->ssl_version)
		SKIP("this libcurl has no TLS");
	snprintf(dir, sizeof(dir), "/tmp/nt-tls-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	for (int i = 0; i < 8; i++)
		snprintf(p[i], sizeof(p[i]), "%s/%s", dir, names[i]);
	if (make_certs() < 0) {
		CHECK_MSG(0, "cannot make certificates");
		TEST_MAIN_END();
	}
	const char *ca = p[0], *srv = p[1], *srvkey = p[2], *cli = p[3], *clikey = p[4];
	const char *rogue = p[5], *roguekey = p[6], *tokens = p[7];
	CHECK(nt_write_file(tokens, "reader read tls-reader-secret-0123456789\n", 0600) == 0);

	/* Half a TLS configuration is refused. */
	char err[2048];
	const char *half[] = { "--root", SRC, "--tls-cert", srv, NULL };
	int rc = nt_serve_expect_exit(half, 10, err, sizeof(err));
	CHECK_MSG(rc > 0 && strstr(err, "--tls-key"), "cert without key: %d %s", rc, err);
	const char *ca_only[] = { "--root", SRC, "--tls-client-ca", ca, NULL };
	rc = nt_serve_expect_exit(ca_only, 10, err, sizeof(err));
	CHECK_MSG(rc > 0 && strstr(err, "need TLS"), "client CA without TLS: %d %s", rc, err);
	const char *notpem[] = { "--root", SRC, "--tls-cert", tokens, "--tls-key", srvkey, NULL };
	rc = nt_serve_expect_exit(notpem, 10, err, sizeof(err));
	CHECK_MSG(rc > 0 && strstr(err, "not a PEM"), "not PEM: %d %s", rc, err);

	const char *extra[] = { "--tls-cert", srv, "--tls-key", srvkey, "--tls-client-ca", ca,
				"--tokens", tokens, NULL };
	nt_agent_opts ao = { .extra = extra };
	if (nt_agent_start_ext(&a, SRC, &ao) < 0) {
		CHECK_MSG(0, "agent did not start with TLS");
		TEST_MAIN_END();
	}
	CHECK_MSG(strncmp(a.base, "https://", 8) == 0, "base %s", a.base);

	nt_ext_result x;
	nt_req_opts anon = { .cacert = ca, .timeout_s = 10 };
	nt_http_ext("GET", nt_url(&a, "/v1/health"), NULL, 0, &anon, &x);
	CHECK_MSG(x.r.status == 200, "https health: %ld (%s)", x.r.status,
		  curl_easy_strerror(x.curl_code));
	nt_ext_result_free(&x);

	/* The server certificate is what was configured: a client that does not
	 * trust the CA refuses it. */
	nt_req_opts untrusted = { .cacert = rogue, .timeout_s = 10 };
	nt_http_ext("GET", nt_url(&a, "/v1/health"), NULL, 0, &untrusted, &x);
	CHECK_MSG(x.r.status == 0, "untrusted server cert accepted: %ld", x.r.status);
	nt_ext_result_free(&x);

	/* Plain HTTP to the HTTPS port gets no HTTP answer. */
	char plain[128];
	snprintf(plain, sizeof(plain), "http://127.0.0.1:%d/v1/health", a.port);
	nt_req_opts quick = { .timeout_s = 5 };
	nt_http_ext("GET", plain, NULL, 0, &quick, &x);
	CHECK_MSG(x.r.status != 200, "plain HTTP answered %ld", x.r.status);
	nt_ext_result_free(&x);

	/* The serve watchdog's probe (cli/probe.c, GnuTLS, no certificate
	 * of its own) gets its 200 from /v1/health over TLS; plain, it gets
	 * no HTTP answer. */
	CHECK_INT(nt_probe_get("127.0.0.1", a.port, true, "/v1/health", 5000), 200);
	CHECK(nt_probe_get("127.0.0.1", a.port, false, "/v1/health", 5000) != 200);

	/* No credentials: 401. */
	nt_http_ext("GET", nt_url(&a, "/v1/nics"), NULL, 0, &anon, &x);
	CHECK_MSG(nt_is_problem(&x.r, 401), "no credentials: %ld", x.r.status);
	nt_ext_result_free(&x);

	/* A certificate from the CA: in, with scope apply. */
	nt_req_opts good = { .cacert = ca, .cert = cli, .key = clikey, .timeout_s = 10 };
	nt_http_ext("GET", nt_url(&a, "/v1/nics"), NULL, 0, &good, &x);
	CHECK_MSG(x.r.status == 200, "client cert: %ld (%s)", x.r.status,
		  curl_easy_strerror(x.curl_code));
	nt_ext_result_free(&x);
	const char *body = "{\"profile\":{\"name\":\"t\",\"sysctl\":{}}}";
	nt_http_ext("POST", nt_url(&a, "/v1/transactions"), body, strlen(body), &good, &x);
	const char *id = json_string_value(json_object_get(x.r.json, "identity"));
	CHECK_MSG(x.r.status == 201, "apply with client cert: %ld %s", x.r.status,
		  x.r.body ? x.r.body : "");
	CHECK_MSG(id && strstr(id, "CN=controller-1") && strstr(id, "O=fleet"), "identity '%s'",
		  id ? id : "(null)");
	nt_ext_result_free(&x);

	/* A self-signed certificate with the same subject: refused. */
	nt_req_opts bad = { .cacert = ca, .cert = rogue, .key = roguekey, .timeout_s = 10 };
	nt_http_ext("GET", nt_url(&a, "/v1/nics"), NULL, 0, &bad, &x);
	CHECK_MSG(x.r.status != 200, "rogue cert answered %ld", x.r.status);
	CHECK_MSG(x.r.status == 0 || nt_is_problem(&x.r, 401), "rogue cert: %ld", x.r.status);
	nt_ext_result_free(&x);

	/* Tokens work over TLS, with their own scope. */
	nt_req_opts tok = { .cacert = ca, .bearer = "tls-reader-secret-0123456789", .timeout_s = 10 };
	nt_http_ext("GET", nt_url(&a, "/v1/nics"), NULL, 0, &tok, &x);
	CHECK_INT(x.r.status, 200);
	nt_ext_result_free(&x);
	nt_http_ext("POST", nt_url(&a, "/v1/transactions"), body, strlen(body), &tok, &x);
	CHECK_INT(x.r.status, 403);
	nt_ext_result_free(&x);

	nt_agent_stop(&a);
	sh("rm -rf '%s'", dir);
	TEST_MAIN_END();
}
