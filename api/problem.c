/* SPDX-License-Identifier: Apache-2.0 */
/* RFC 9457 problem documents and the small request accessors routes use. */
#include "api/http.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A JSON string from text that may carry client bytes (a NIC name, a query
 * value): jansson refuses invalid UTF-8, so such text is made ASCII-safe
 * rather than dropped, and the operator still sees what was asked. */
json_t *nt_json_string_safe(const char *s)
{
	json_t *j = json_string(s);
	if (j)
		return j;
	char *copy = strdup(s);
	if (!copy)
		return NULL;
	for (char *p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	j = json_string(copy);
	free(copy);
	return j;
}

void nt_response_drop_body(nt_response *resp)
{
	json_decref(resp->json);
	resp->json = NULL;
	free(resp->text);
	resp->text = NULL;
	if (resp->shared && resp->release)
		resp->release(resp->release_cls);
	resp->shared = NULL;
	resp->shared_len = 0;
	resp->release = NULL;
	resp->release_cls = NULL;
}

int nt_problem(nt_response *resp, int status, const char *type, const char *title,
	       const char *fmt, ...)
{
	char detail[1024];
	char uri[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	snprintf(uri, sizeof(uri), "https://nettune.dev/problems/%s", type);

	nt_response_drop_body(resp);
	resp->status = status;
	resp->content_type = "application/problem+json";
	resp->json = json_object();
	if (!resp->json)
		return -ENOMEM;
	json_object_set_new(resp->json, "type", nt_json_string_safe(uri));
	json_object_set_new(resp->json, "title", nt_json_string_safe(title));
	json_object_set_new(resp->json, "status", json_integer(status));
	json_object_set_new(resp->json, "detail", nt_json_string_safe(detail));
	return 0;
}

struct query_find {
	const char *name;
	const char *value;
	bool found;
};

static enum MHD_Result query_find_cb(void *cls, enum MHD_ValueKind kind, const char *key,
				     const char *value)
{
	struct query_find *q = cls;
	if (key && strcmp(key, q->name) == 0) {
		q->found = true;
		/* "?x" without "=" has no value; routes see "" and reject it as
		 * they would any other unparsable value. */
		q->value = value ? value : "";
		return MHD_NO;
	}
	return MHD_YES;
}

const char *nt_query(const nt_request *req, const char *name)
{
	if (!req->conn)
		return NULL;
	struct query_find q = { .name = name };
	MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, query_find_cb, &q);
	return q.found ? q.value : NULL;
}

const char *nt_header(const nt_request *req, const char *name)
{
	if (!req->conn)
		return NULL;
	return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}
