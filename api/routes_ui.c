/* SPDX-License-Identifier: Apache-2.0 */
/* The web view: `GET /ui/` serves the page and its script and style,
 * embedded at build time (ui/embed.cmake). They are static and say nothing
 * about the host, so they are served without credentials (api/server_auth.c);
 * the page reads the host through the API with the token the user enters. */
#include "api/http.h"
#include "api/ui_assets.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The page loads only its own files and talks only to this agent: no inline
 * script, no other origin, and no framing (a page that can apply profiles
 * must not be clickjacked). */
static const char ui_csp[] = "default-src 'none'; script-src 'self'; style-src 'self'; "
			     "connect-src 'self'; img-src 'self' data:; base-uri 'none'; "
			     "form-action 'none'; frame-ancestors 'none'";

static const char *content_type(const char *name)
{
	const char *dot = strrchr(name, '.');
	if (dot && strcmp(dot, ".html") == 0)
		return "text/html; charset=utf-8";
	if (dot && strcmp(dot, ".css") == 0)
		return "text/css; charset=utf-8";
	if (dot && strcmp(dot, ".js") == 0)
		return "text/javascript; charset=utf-8";
	return "application/octet-stream";
}

static int serve(nt_response *resp, const char *name)
{
	for (const nt_ui_asset *a = nt_ui_assets; a->name; a++) {
		if (strcmp(a->name, name) != 0)
			continue;
		/* The server frees text bodies, so the response gets a copy. */
		char *body = malloc(a->len + 1);
		if (!body)
			return -ENOMEM;
		memcpy(body, a->data, a->len + 1);
		resp->text = body;
		resp->content_type = content_type(a->name);
		resp->security_policy = ui_csp;
		resp->status = 200;
		return 0;
	}
	return nt_problem(resp, 404, "not-found", "Not found", "the web view has no file '%s'",
			  name);
}

static int get_ui_bare(const nt_request *req, nt_response *resp)
{
	/* The page's relative links need the trailing slash. */
	snprintf(resp->location, sizeof(resp->location), "/ui/");
	resp->status = 301;
	return 0;
}

static int get_ui_index(const nt_request *req, nt_response *resp)
{
	return serve(resp, "index.html");
}

static int get_ui_file(const nt_request *req, nt_response *resp)
{
	return serve(resp, req->params[0]);
}

static const nt_route ui_routes[] = {
	{ "GET", "/", get_ui_bare, NULL, 0 }, /* the agent's address in a browser */
	{ "GET", "/ui", get_ui_bare, NULL, 0 },
	{ "GET", "/ui/", get_ui_index, NULL, 0 },
	{ "GET", "/ui/{file}", get_ui_file, NULL, 0 },
	{ NULL, NULL, NULL, NULL, 0 },
};

const nt_area nt_area_ui = {
	.name = "ui",
	.routes = ui_routes,
};
