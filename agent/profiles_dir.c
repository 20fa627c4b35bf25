/* SPDX-License-Identifier: Apache-2.0 */
/* Profiles as files: DIR/NAME.json becomes stored profile NAME, so that
 * configuration management can hand the agent its profiles by writing
 * files (/etc/nettune/profiles). Each file is validated against this host
 * like a PUT /v1/profiles/NAME; an invalid one is reported and skipped and
 * the stored profile of that name, if any, stays as it was. */
#include "agent/agent.h"
#include "engine/profile.h"
#include "host/topology.h"
#include "kernel/regfile.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static json_t *one_error(const char *path, const char *msg)
{
	return json_pack("[{s:s,s:s}]", "path", path, "message", msg);
}

int nt_profile_file_read(const char *file, const char *name, json_t **doc, json_t **errors)
{
	json_error_t jerr;
	char where[PATH_MAX + 128];

	*doc = NULL;
	*errors = NULL;
	if (!nt_profile_name_valid(name)) {
		snprintf(where, sizeof(where),
			 "'%s' is not a valid profile name ([A-Za-z0-9._-], 1 to 64 characters "
			 "before .json, not . or ..)", name);
		*errors = one_error("$", where);
		return NT_EINVALID;
	}
	/* Never blocks on a FIFO, never reads more than the limit
	 * (kernel/regfile.h). */
	char *text = NULL;
	size_t len = 0;
	int r = nt_regfile_read(file, NT_AGENT_FILE_MAX, &text, &len, where, sizeof(where));
	if (r < 0) {
		*errors = one_error("$", where);
		return NT_EINVALID;
	}
	json_t *d = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (!d) {
		snprintf(where, sizeof(where), "not valid JSON: line %d, column %d: %s", jerr.line,
			 jerr.column, jerr.text);
		*errors = one_error("$", where);
		return NT_EINVALID;
	}
	if (!json_is_object(d)) {
		json_decref(d);
		*errors = one_error("$", "a profile is a JSON object");
		return NT_EINVALID;
	}
	/* The name is the file's, as it is the path's for a PUT: a "name"
	 * member must agree with it, and is filled in when missing. */
	json_t *bn = json_object_get(d, "name");
	if (bn && (!json_is_string(bn) || strcmp(json_string_value(bn), name) != 0)) {
		json_decref(d);
		snprintf(where, sizeof(where), "does not match the file's name ('%s')", name);
		*errors = one_error("$.name", where);
		return NT_EINVALID;
	}
	if (!bn)
		json_object_set_new(d, "name", json_string(name));
	*doc = d;
	return 0;
}

/* Load one file as profile NAME; on failure *ERRORS is the [{path,message}]
 * list to report. Returns 0 or -errno/NT_* code. */
static int load_one(nt_agent *a, const char *file, const char *name, bool *created,
		    json_t **errors)
{
	nt_txn_outcome out;
	json_t *doc;
	int r;

	if ((r = nt_profile_file_read(file, name, &doc, errors)) < 0)
		return r;
	memset(&out, 0, sizeof(out));
	r = nt_txn_profile_put(nt_agent_engine(a), name, doc, created, &out);
	json_decref(doc);
	if (r < 0) {
		if (out.errors && json_array_size(out.errors)) {
			*errors = json_incref(out.errors);
		} else {
			*errors = one_error("$", out.message[0] ? out.message : nt_strerror(r));
		}
	}
	nt_txn_outcome_free(&out);
	return r;
}

/* The NAME.json entries of DIR, sorted, into *NAMES (*N of them; the
 * caller frees each and the array), so reports (and which of two files a
 * problem is reported for first) do not depend on the directory's order.
 * Editors' and dpkg's leftovers (x.json~, x.json.dpkg-old) and hidden
 * files are not profiles. Returns 0 or -errno. */
static int list_profile_files(const char *dir, char ***names, size_t *n)
{
	size_t cap = 0;
	int r = 0;
	DIR *d = opendir(dir);

	*names = NULL;
	*n = 0;
	if (!d)
		return -errno;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len <= 5 || strcmp(de->d_name + len - 5, ".json"))
			continue;
		if (*n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **bigger = realloc(*names, ncap * sizeof(**names));
			if (!bigger) {
				r = -ENOMEM;
				break;
			}
			*names = bigger;
			cap = ncap;
		}
		if (!((*names)[*n] = strdup(de->d_name))) {
			r = -ENOMEM;
			break;
		}
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(*names, *n, sizeof(**names), cmp_names);
	return r;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* FILE (DIR/ENTRY) and the profile name it stands for. An entry that is
 * not a regular file is not skipped here: reading it says why it cannot be
 * a profile (nt_profile_file_read), so the operator is told. */
static void entry_paths(const char *dir, const char *entry, char *file, size_t fsize, char *name,
			size_t nsize)
{
	snprintf(file, fsize, "%s/%s", dir, entry);
	snprintf(name, nsize, "%.*s", (int)(strlen(entry) - 5), entry);
}

int nt_profiles_dir_check(const nt_ctx *ctx, const char *dir, json_t **report)
{
	char **names = NULL;
	size_t n = 0;
	nt_topology *t = NULL;
	json_t *ok = json_array(), *invalid = json_array();
	int r;

	*report = NULL;
	if (!ok || !invalid) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = list_profile_files(dir, &names, &n)) < 0)
		goto out;
	if ((r = nt_topology_read(ctx, &t)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		char file[PATH_MAX], name[NAME_MAX + 1];
		json_t *doc = NULL, *errors = NULL;
		entry_paths(dir, names[i], file, sizeof(file), name, sizeof(name));
		if (nt_profile_file_read(file, name, &doc, &errors) == 0) {
			errors = json_array();
			if (nt_profile_validate(t, doc, errors) == 0) {
				json_decref(errors);
				errors = NULL;
			}
		}
		json_decref(doc);
		if (errors)
			json_array_append_new(invalid, json_pack("{s:s,s:o}", "file", file, "errors", errors));
		else
			json_array_append_new(ok, json_pack("{s:s,s:s}", "name", name, "file", file));
	}
	*report = json_pack("{s:s,s:O,s:O}", "dir", dir, "valid", ok, "invalid", invalid);
	if (!*report)
		r = -ENOMEM;
out:
	nt_topology_free(t);
	free_names(names, n);
	json_decref(ok);
	json_decref(invalid);
	return r;
}

int nt_agent_load_profiles(nt_agent *a, const char *dir, json_t *from_files, json_t **report)
{
	char **names = NULL;
	size_t n = 0;
	json_t *loaded = json_array(), *invalid = json_array(), *removed = json_array();
	json_t *now = json_object();
	int r = 0;

	*report = NULL;
	if (!loaded || !invalid || !removed || !now) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = list_profile_files(dir, &names, &n)) < 0)
		goto out;

	bool (*stop)(void) = nt_agent_cfg(a)->stop_requested;
	for (size_t i = 0; i < n; i++) {
		char file[PATH_MAX], name[NAME_MAX + 1];
		bool created = false;
		json_t *errors = NULL;

		/* Before the removals below: a cut load must not take the
		 * files it did not reach for deleted ones. */
		if (stop && stop()) {
			r = -ECANCELED;
			goto out;
		}

		entry_paths(dir, names[i], file, sizeof(file), name, sizeof(name));
		if (load_one(a, file, name, &created, &errors) < 0) {
			json_array_append_new(invalid,
					      json_pack("{s:s,s:o}", "file", file, "errors",
							errors ? errors : json_array()));
			/* The stored profile of that name stays, and still
			 * counts as coming from a file. */
			if (json_object_get(from_files, name))
				json_object_set_new(now, name, json_true());
			continue;
		}
		json_array_append_new(loaded, json_pack("{s:s,s:s,s:b}", "name", name, "file", file,
							"created", created));
		json_object_set_new(now, name, json_true());
	}

	/* A profile loaded from a file that is gone now is deleted: the file
	 * was its source. Profiles stored through the API are not touched. */
	const char *key;
	json_t *v;
	json_object_foreach(from_files, key, v) {
		if (json_object_get(now, key))
			continue;
		if (nt_txn_profile_delete(nt_agent_engine(a), key) == 0)
			json_array_append_new(removed, json_string(key));
	}
	json_object_clear(from_files);
	json_object_update(from_files, now);
	*report = json_pack("{s:s,s:O,s:O,s:O}", "dir", dir, "loaded", loaded, "invalid", invalid,
			    "removed", removed);
	if (!*report)
		r = -ENOMEM;
out:
	free_names(names, n);
	json_decref(loaded);
	json_decref(invalid);
	json_decref(removed);
	json_decref(now);
	return r;
}
