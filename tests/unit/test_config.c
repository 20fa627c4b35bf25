/* SPDX-License-Identifier: Apache-2.0 */
/* The configuration file parser (cli/config.c) and the option table it
 * shares with the command line (cli/options.c). */
#include "cli/cli.h"
#include "cli/config.h"
#include "harness.h"

#include <errno.h>

static int parse(const char *text, cli_opts *o, char *err, size_t errsize)
{
	static char buf[8192];
	snprintf(buf, sizeof(buf), "%s", text);
	memset(o, 0, sizeof(*o));
	err[0] = '\0';
	return nt_conf_parse(buf, "t.conf", o, err, errsize);
}

int main(void)
{
	cli_opts o;
	char err[512];

	/* Every key, comments, blank lines, quotes, spaces around '='. */
	CHECK_INT(parse("# comment\n\n  listen = 0.0.0.0:9000\nmax_body=4096\r\n"
			"tokens = \"/etc/nettune/my tokens\"\nlog_format = json\n"
			"state_dir = /var/lib/x#y\nprofiles_dir = /etc/nettune/profiles\n"
			"client_timeout = 5\nmax_connections = 8\nrtt_ms = 20\nroot = /\n"
			"tls_cert = c.pem\ntls_key = k.pem\ntls_client_ca = ca.pem\n",
			&o, err, sizeof(err)),
		  0);
	CHECK_STR(o.listen, "0.0.0.0:9000");
	CHECK_INT(o.max_body, 4096);
	CHECK_STR(o.tokens, "/etc/nettune/my tokens");
	CHECK_INT(o.log_format, 1);
	CHECK_STR(o.state_dir, "/var/lib/x#y");
	CHECK_STR(o.profiles_dir, "/etc/nettune/profiles");
	CHECK_INT(o.client_timeout, 5);
	CHECK_INT(o.max_connections, 8);
	CHECK_INT(o.rtt_ms, 20);
	CHECK_STR(o.tls_client_ca, "ca.pem");

	/* Every serve option marked for the file is a key, with '_' for '-':
	 * the file can never lag behind the flags. */
	for (const nt_cli_option *opt = nt_cli_options; opt->name; opt++) {
		char key[64];
		nt_cli_option_key(opt, key, sizeof(key));
		CHECK_MSG((nt_cli_option_find_key(key) == opt) == !!(opt->flags & NT_OPT_CONF),
			  "key %s", key);
		CHECK(strchr(key, '-') == NULL);
	}
	/* Options of other commands, and --config itself, are not keys. */
	CHECK(nt_cli_option_find_key("agent") == NULL);
	CHECK(nt_cli_option_find_key("config") == NULL);
	CHECK(nt_cli_option_find_key("max-body") == NULL);

	/* Errors name the file, the line and what was wrong. */
	CHECK_INT(parse("listen = :1\n\nbogus = 1\n", &o, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "t.conf:3: unknown key 'bogus'");
	CHECK_INT(parse("max_body = 10\n", &o, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "t.conf:1: max_body wants bytes from 1024 to 67108864, not '10'");
	CHECK_INT(parse("client_timeout = 5s\n", &o, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "t.conf:1: client_timeout wants seconds from 1 to 3600, not '5s'");
	/* A refused value is quoted cut, with its length, never whole. */
	{
		char line[6000];
		int n = snprintf(line, sizeof(line), "rtt_ms = ");
		memset(line + n, '7', 5000);
		snprintf(line + n + 5000, sizeof(line) - (size_t)n - 5000, "\n");
		CHECK_INT(parse(line, &o, err, sizeof(err)), -EINVAL);
		CHECK_MSG(strlen(err) < 200 && strstr(err, "7777... (5000 bytes)'"), "%s", err);
		n = snprintf(line, sizeof(line), "log_format = ");
		memset(line + n, 'j', 5000);
		snprintf(line + n + 5000, sizeof(line) - (size_t)n - 5000, "\n");
		CHECK_INT(parse(line, &o, err, sizeof(err)), -EINVAL);
		CHECK_MSG(strlen(err) < 200 && strstr(err, "jjjj... (5000 bytes)'"), "%s", err);
	}
	CHECK_INT(parse("log_format = xml\n", &o, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "t.conf:1: log_format wants 'text' or 'json', not 'xml'");
	CHECK_INT(parse("listen\n", &o, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "t.conf:1: expected 'key = value', not 'listen'");
	CHECK_INT(parse("tokens =\n", &o, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "t.conf:1: tokens wants a file, not an empty value");
	CHECK_INT(parse("tokens = \"/x\n", &o, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "t.conf:1: tokens: unbalanced quote") == err);
	CHECK_INT(parse("listen = :1\n# x\nlisten = :2\n", &o, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "t.conf:3: listen is already set on line 1");
	CHECK_INT(parse("max-body = 4096\n", &o, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "t.conf:1: unknown key 'max-body'");

	/* The command line wins over the file, option by option. */
	cli_opts cmdline, file;
	memset(&cmdline, 0, sizeof(cmdline));
	CHECK_INT(nt_cli_option_set(nt_cli_option_find("max-body"), "2048", &cmdline, err,
				    sizeof(err)),
		  0);
	CHECK_INT(nt_cli_option_set(nt_cli_option_find("log-format"), "text", &cmdline, err,
				    sizeof(err)),
		  0);
	CHECK_INT(parse("max_body = 8192\nlog_format = json\nlisten = :7\n", &file, err, sizeof(err)),
		  0);
	nt_cli_options_merge(&cmdline, &file);
	CHECK_INT(cmdline.max_body, 2048);
	CHECK_INT(cmdline.log_format, 0); /* given as text on the command line */
	CHECK_STR(cmdline.listen, ":7");

	/* nt_conf_load: a missing file names itself. */
	char *text = NULL;
	memset(&o, 0, sizeof(o));
	CHECK_INT(nt_conf_load("/nonexistent/nettune.conf", &o, &text, err, sizeof(err)), -ENOENT);
	CHECK_STR(err, "/nonexistent/nettune.conf: No such file or directory");
	CHECK(text == NULL);
	TEST_MAIN_END();
}
