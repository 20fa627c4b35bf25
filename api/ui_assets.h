/* SPDX-License-Identifier: Apache-2.0 */
/* The web view's files, compiled into the agent by ui/embed.cmake and
 * served by api/routes_ui.c. */
#ifndef NT_API_UI_ASSETS_H
#define NT_API_UI_ASSETS_H

#include <stddef.h>

typedef struct nt_ui_asset {
	const char *name; /* "index.html": a file name under ui/, no directories */
	const unsigned char *data; /* the file's bytes, followed by a NUL */
	size_t len; /* without the NUL */
} nt_ui_asset;

/* Terminated by an entry with name NULL. */
extern const nt_ui_asset nt_ui_assets[];

#endif
