/* SPDX-License-Identifier: Apache-2.0 */
/* profiles: the profiles the agent stores (GET/PUT/DELETE /v1/profiles)
 * and those the package ships (nt_cli_shipped_dir), which plan, apply and
 * try --name NAME fall back to when the agent stores no NAME. A stored
 * profile wins over a shipped one of the same name, so a site can adapt a
 * shipped recipe under its name. */
#include "cli/cli.h"
#include "cli/client.h"
#include "cli/exit.h"
#include "cli/output.h"
#include "engine/profile.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether this process's program is the nettune of the build tree it was
 * built in, whose shipped profiles are the source tree's (a build that is
 * run from the tree has installed nothing). */
static bool run_from_build_tree(void)
{
#if defined(NT_BUILD_DIR) && defined(NT_TREE_PROFILES_DIR)
	char exe[PATH_MAX], dir[PATH_MAX];
	if (!realpath("/proc/self/exe", exe) || !realpath(NT_BUILD_DIR, dir))
		return false;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return !strcmp(exe, dir);
#else
	return false;
#endif
}

const char *nt_cli_shipped_dir(void)
{
	const char *env = getenv("NETTUNE_SHIPPED_PROFILES");
	if (env && *env)
		return env;
#ifdef NT_TREE_PROFILES_DIR
	if (run_from_build_tree())
		return NT_TREE_PROFILES_DIR;
#endif
	return NT_SHIPPED_PROFILES_DIR;
}

static bool name_ok(const char *name)
{
	if (nt_profile_name_valid(name))
		return true;
	fprintf(stderr, "nettune: '%s' is not a profile name (letters, digits, '.', '_', '-'; 1 to 64)\n", name);
	return false;
}

/* The shipped NAME.json's path into BUF; whether it is there. */
static bool shipped_path(const char *name, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s.json", nt_cli_shipped_dir(), name);
	FILE *f = fopen(buf, "r");
	if (f)
		fclose(f);
	return f != NULL;
}

/* Whether the agent stores NAME: 1 yes, 0 no (404), or the exit code of
 * another answer, which is said. */
static int agent_has(const cli_opts *o, const char *name)
{
	nt_cli_reply r = { 0 };
	char path[128];
	bool render;
	snprintf(path, sizeof(path), "/v1/profiles/%s", name);
	/* A 404 is an answer here, not an error to show. */
	int rc = nt_cli_request(nt_cli_agent_url(o), "GET", path, NULL, NULL, &r);
	long status = r.status;
	nt_cli_reply_free(&r);
	if (rc == 0 && (status == 200 || status == 404))
		return status == 200;
	cli_opts quiet = *o;
	quiet.json = false;
	int code = nt_cli_exchange(&quiet, "GET", path, NULL, NULL, &r, &render);
	nt_cli_reply_free(&r);
	return code == NT_EXIT_OK ? NT_EXIT_ERROR : code;
}

int nt_cli_named_profile(const cli_opts *o, const char *name, json_t **profile, const char **stored)
{
	char file[4200];
	*profile = NULL;
	*stored = NULL;
	if (!name_ok(name))
		return NT_EXIT_USAGE;
	int has = agent_has(o, name);
	if (has == 1) {
		*stored = name;
		return 0;
	}
	if (has != 0)
		return has;
	if (!shipped_path(name, file, sizeof(file))) {
		fprintf(stderr, "nettune: no profile '%s': the agent stores none of that name and %s has no %s.json "
				"(nettune profiles lists both)\n", name, nt_cli_shipped_dir(), name);
		return NT_EXIT_ERROR;
	}
	if (!(*profile = nt_cli_load_profile(file)))
		return NT_EXIT_USAGE;
	fprintf(stderr, "nettune: profile '%s' is the shipped %s (the agent stores none of that name)\n", name,
		file);
	return 0;
}

/* The shipped profiles the agent does not store under the same name, as
 * rows NAME, DESCRIPTION; STORED is GET /v1/profiles's list. */
static void list_shipped(nt_out *out, const json_t *stored)
{
	const char *dir = nt_cli_shipped_dir();
	DIR *d = opendir(dir);
	if (!d) {
		nt_out_printf(out, "\nno shipped profiles: %s: %s (NETTUNE_SHIPPED_PROFILES names another "
				   "folder)\n", dir, strerror(errno));
		return;
	}
	static const char *const head[] = { "name", "description" };
	nt_table *t = nt_table_new(2, head);
	struct dirent *e;
	char names[64][72];
	int n = 0;
	while ((e = readdir(d)) && n < 64) {
		size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".json") || len - 5 >= sizeof(names[0]))
			continue;
		snprintf(names[n], sizeof(names[n]), "%.*s", (int)(len - 5), e->d_name);
		n++;
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), (int (*)(const void *, const void *))strcmp);
	for (int i = 0; t && i < n; i++) {
		size_t k;
		json_t *p;
		bool shadowed = false;
		json_array_foreach(stored, k, p)
			shadowed |= !strcmp(json_string_value(json_object_get(p, "name")) ?: "", names[i]);
		if (shadowed)
			continue;
		char file[4200];
		snprintf(file, sizeof(file), "%s/%s.json", dir, names[i]);
		json_t *doc = json_load_file(file, 0, NULL);
		const char *desc = json_string_value(json_object_get(doc, "description"));
		/* Its summary, up to the first colon (profiles show NAME has all). */
		char summary[128];
		snprintf(summary, sizeof(summary), "%.*s", desc ? (int)strcspn(desc, ":") : 0, desc ? desc : "");
		const char *cells[] = { names[i], summary };
		nt_table_add(t, cells);
		json_decref(doc);
	}
	if (t && nt_table_rows(t)) {
		nt_out_printf(out, "\nshipped in %s (plan, apply or try --name NAME):\n", dir);
		nt_table_print(t, out, 2);
	} else if (t) {
		nt_out_printf(out, "\nshipped in %s: %s\n", dir,
			      n ? "every one also stored in the agent under its name" : "none");
	}
	nt_table_free(t);
}

static int profiles_list(const cli_opts *o)
{
	nt_cli_reply r = { 0 };
	bool render;
	char when[64];
	nt_out out;
	nt_out_init(&out, stdout);
	int code = nt_cli_exchange(o, "GET", "/v1/profiles", NULL, NULL, &r, &render);
	if (render) {
		const json_t *list = json_object_get(r.doc, "profiles");
		if (json_array_size(list) == 0) {
			nt_out_printf(&out, "the agent stores no profiles\n");
		} else {
			static const char *const head[] = { "name", "description", "updated" };
			nt_table *t = nt_table_new(3, head);
			size_t i;
			json_t *p;
			json_array_foreach(list, i, p) {
				const char *desc = json_string_value(json_object_get(p, "description"));
				const char *cells[] = { json_string_value(json_object_get(p, "name")), desc ? desc : "",
							nt_out_time(when, sizeof(when),
								    json_string_value(json_object_get(p, "updated"))) };
				if (t)
					nt_table_add(t, cells);
			}
			nt_out_printf(&out, "stored in the agent:\n");
			if (t)
				nt_table_print(t, &out, 2);
			nt_table_free(t);
		}
		list_shipped(&out, list);
	}
	nt_cli_reply_free(&r);
	return code;
}

static void print_doc(const json_t *doc)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (s)
		puts(s);
	free(s);
}

static int profiles_show(const cli_opts *o, const char *name)
{
	json_t *shipped;
	const char *stored;
	if (o->json && name_ok(name)) {
		/* The agent's answer as it is, 404 included, for scripts. */
		nt_cli_reply r = { 0 };
		bool render;
		char path[128];
		snprintf(path, sizeof(path), "/v1/profiles/%s", name);
		int code = nt_cli_exchange(o, "GET", path, NULL, NULL, &r, &render);
		nt_cli_reply_free(&r);
		return code;
	}
	int code = nt_cli_named_profile(o, name, &shipped, &stored);
	if (code)
		return code;
	if (shipped) {
		print_doc(shipped);
		json_decref(shipped);
		return NT_EXIT_OK;
	}
	nt_cli_reply r = { 0 };
	bool render;
	char path[128];
	snprintf(path, sizeof(path), "/v1/profiles/%s", name);
	code = nt_cli_exchange(o, "GET", path, NULL, NULL, &r, &render);
	if (render)
		print_doc(r.doc);
	nt_cli_reply_free(&r);
	return code;
}

static int profiles_put(const cli_opts *o, const char *name, const char *file)
{
	if (!name_ok(name))
		return NT_EXIT_USAGE;
	json_t *p = nt_cli_load_profile(file);
	if (!p)
		return NT_EXIT_USAGE;
	char *text = json_dumps(p, JSON_COMPACT);
	json_decref(p);
	if (!text) {
		fprintf(stderr, "nettune: out of memory\n");
		return NT_EXIT_ERROR;
	}
	nt_cli_reply r = { 0 };
	bool render;
	char path[128];
	snprintf(path, sizeof(path), "/v1/profiles/%s", name);
	int code = nt_cli_exchange(o, "PUT", path, text, "storing", &r, &render);
	free(text);
	if (render)
		printf("profile %s %s; plan or apply it with --name %s\n", name,
		       r.status == 201 ? "stored" : "replaced", name);
	nt_cli_reply_free(&r);
	return code;
}

static int profiles_delete(const cli_opts *o, const char *name)
{
	if (!name_ok(name))
		return NT_EXIT_USAGE;
	nt_cli_reply r = { 0 };
	bool render;
	char path[128];
	snprintf(path, sizeof(path), "/v1/profiles/%s", name);
	int code = nt_cli_exchange(o, "DELETE", path, NULL, NULL, &r, &render);
	if (code == NT_EXIT_OK && !o->json)
		printf("profile %s deleted (transactions that used it keep their copy)\n", name);
	nt_cli_reply_free(&r);
	return code;
}

int nt_cmd_profiles(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	const char *sub = nargs > 0 ? args[0] : "list";
	if (!strcmp(sub, "list") && nargs <= 1)
		return profiles_list(o);
	if (!strcmp(sub, "show") && nargs == 2)
		return profiles_show(o, args[1]);
	if (!strcmp(sub, "put") && nargs == 3)
		return profiles_put(o, args[1], args[2]);
	if (!strcmp(sub, "delete") && nargs == 2)
		return profiles_delete(o, args[1]);
	fprintf(stderr, "nettune: profiles wants 'list', 'show NAME', 'put NAME PROFILE.json' or 'delete NAME'\n");
	return NT_EXIT_USAGE;
}
