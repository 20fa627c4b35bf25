/* SPDX-License-Identifier: Apache-2.0 */
/* The desired state as a file (/etc/nettune/desired.json): configuration
 * management holds a host's tuning by writing one file. At start and on
 * reload the file's profile becomes the desired state when it differs from
 * the one held, validated against this host like PUT /v1/desired; an
 * invalid file is reported and the desired state stays as it was. A
 * missing file changes nothing (removing the file is not a request to stop
 * holding: DELETE /v1/desired is). */
#include "agent/agent.h"
#include "engine/txn.h"
#include "kernel/regfile.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *one_error(const char *path, const char *msg)
{
	return json_pack("[{s:s,s:s}]", "path", path, "message", msg);
}

int nt_desired_file_read(const char *text, size_t len, json_t **profile, char *msg, size_t msgsize)
{
	json_error_t jerr;

	*profile = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!*profile) {
		snprintf(msg, msgsize, "not valid JSON: line %d, column %d: %s", jerr.line, jerr.column,
			 jerr.text);
		return NT_EINVALID;
	}
	if (!json_is_object(*profile)) {
		json_decref(*profile);
		*profile = NULL;
		snprintf(msg, msgsize, "a profile is a JSON object");
		return NT_EINVALID;
	}
	return 0;
}

int nt_agent_load_desired(nt_agent *a, const char *file, json_t **report)
{
	nt_txn_engine *e = nt_agent_engine(a);
	json_t *profile = NULL, *held = NULL, *errors = NULL;
	nt_txn_outcome out = { 0 };
	const char *result;
	char msg[PATH_MAX + 128], *text = NULL;
	size_t len = 0;
	int r = 0;

	*report = NULL;
	/* Opened without blocking and only when regular (a FIFO here would
	 * hang start-up or a reload for good), and at most NT_AGENT_FILE_MAX
	 * bytes (kernel/regfile.h). */
	r = nt_regfile_read(file, NT_AGENT_FILE_MAX, &text, &len, msg, sizeof(msg));
	if (r == -ENOENT) {
		r = 0;
		result = "missing";
		goto done;
	}
	if (r < 0) {
		r = 0;
		errors = one_error("$", msg);
		result = "invalid";
		goto done;
	}
	if (nt_desired_file_read(text, len, &profile, msg, sizeof(msg)) < 0) {
		errors = one_error("$", msg);
		result = "invalid";
		goto done;
	}
	/* The same profile held already: nothing to record again. */
	if (nt_txn_desired_get(e, &held) == 0 && json_equal(json_object_get(held, "profile"), profile)) {
		result = "unchanged";
		goto done;
	}
	char client[300];
	snprintf(client, sizeof(client), "file:%s", file);
	nt_txn_request req = { .profile = profile, .client = client, .identity = "desired-file" };
	r = nt_txn_desired_set(e, &req, &out);
	if (r == NT_EINVALID) {
		errors = out.errors ? json_incref(out.errors) : one_error("$", out.message);
		result = "invalid";
		r = 0;
		goto done;
	}
	if (r < 0) {
		snprintf(msg, sizeof(msg), "%s", out.message[0] ? out.message : nt_strerror(r));
		errors = one_error("$", msg);
		result = "error";
		goto done;
	}
	nt_drift *d = nt_agent_drift(a);
	if (d)
		nt_drift_desired_changed(d);
	result = "set";
done:
	*report = json_pack("{s:s,s:s}", "file", file, "result", result);
	if (*report && errors)
		json_object_set(*report, "errors", errors);
	json_decref(errors);
	free(text);
	json_decref(profile);
	json_decref(held);
	nt_txn_outcome_free(&out);
	return r;
}
