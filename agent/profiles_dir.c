/* Profiles as files: DIR/NAME.json becomes stored profile NAME, so that
 * configuration management can hand the agent its profiles by writing
 * files (/etc/nettune/profiles). Each file is validated against this host
 * like a PUT /v1/profiles/NAME; an invalid one is reported and skipped and
 * the stored profile of that name, if any, stays as it was. */
#include "agent/agent.h"
#include "engine/profile.h"

#include <dirent.h>
#include <errno.h>
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

/* Load one file as profile NAME; on failure *ERRORS is the [{path,message}]
 * list to report. Returns 0 or -errno/NT_* code. */
static int load_one(nt_agent *a, const char *file, const char *name, bool *created,
		    json_t **errors)
{
	json_error_t jerr;
	nt_txn_outcome out;
	char where[512];
	int r;

	*errors = NULL;
	if (!nt_profile_name_valid(name)) {
		snprintf(where, sizeof(where),
			 "'%s' is not a valid profile name ([A-Za-z0-9._-], 1 to 64 characters "
			 "before .json)", name);
		*errors = one_error("$", where);
		return NT_EINVALID;
	}
	json_t *doc = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		snprintf(where, sizeof(where), "not valid JSON: line %d, column %d: %s", jerr.line,
			 jerr.column, jerr.text);
		*errors = one_error("$", where);
		return NT_EINVALID;
	}
	if (!json_is_object(doc)) {
		json_decref(doc);
		*errors = one_error("$", "a profile is a JSON object");
		return NT_EINVALID;
	}
	/* The name is the file's, as it is the path's for a PUT: a "name"
	 * member must agree with it, and is filled in when missing. */
	json_t *bn = json_object_get(doc, "name");
	if (bn && (!json_is_string(bn) || strcmp(json_string_value(bn), name) != 0)) {
		json_decref(doc);
		snprintf(where, sizeof(where), "does not match the file's name ('%s')", name);
		*errors = one_error("$.name", where);
		return NT_EINVALID;
	}
	if (!bn)
		json_object_set_new(doc, "name", json_string(name));
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

int nt_agent_load_profiles(nt_agent *a, const char *dir, json_t *from_files, json_t **report)
{
	DIR *d = NULL;
	char **names = NULL;
	size_t n = 0, cap = 0;
	json_t *loaded = json_array(), *invalid = json_array(), *removed = json_array();
	json_t *now = json_object();
	int r = 0;

	*report = NULL;
	if (!loaded || !invalid || !removed || !now) {
		r = -ENOMEM;
		goto out;
	}
	d = opendir(dir);
	if (!d) {
		r = -errno;
		goto out;
	}
	/* In name order, so reports (and which of two files a problem is
	 * reported for first) do not depend on the directory's order. */
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		/* NAME.json only: editors' and dpkg's leftovers
		 * (x.json~, x.json.dpkg-old) and hidden files are not profiles. */
		if (de->d_name[0] == '.' || len <= 5 || strcmp(de->d_name + len - 5, ".json"))
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **bigger = realloc(names, ncap * sizeof(*names));
			if (!bigger) {
				r = -ENOMEM;
				goto out;
			}
			names = bigger;
			cap = ncap;
		}
		if (!(names[n] = strdup(de->d_name))) {
			r = -ENOMEM;
			goto out;
		}
		n++;
	}
	qsort(names, n, sizeof(*names), cmp_names);

	for (size_t i = 0; i < n; i++) {
		char file[PATH_MAX], name[NAME_MAX + 1];
		struct stat st;
		bool created = false;
		json_t *errors = NULL;

		snprintf(file, sizeof(file), "%s/%s", dir, names[i]);
		snprintf(name, sizeof(name), "%.*s", (int)(strlen(names[i]) - 5), names[i]);
		if (stat(file, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
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
	if (d)
		closedir(d);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	json_decref(loaded);
	json_decref(invalid);
	json_decref(removed);
	json_decref(now);
	return r;
}
