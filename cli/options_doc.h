/* SPDX-License-Identifier: Apache-2.0 */
/* What each configuration key means, for people: the text of
 * nettune.conf(5) and of the serve options in nettune(8), which
 * deploy/mangen.c makes from the option table (cli/options.c) at build time.
 * The table says the key, its kind and its range; this file says what it
 * does and its default. Kept apart from the table so that a new option is
 * still one row there; a key without a line here is a build-time error of
 * mangen, so the page cannot leave one out. */
#ifndef NT_CLI_OPTIONS_DOC_H
#define NT_CLI_OPTIONS_DOC_H

typedef struct nt_cli_option_doc {
	const char *name;  /* the option, as in nt_cli_options[] ("max-body") */
	const char *dflt;  /* the default as a person reads it, or NULL for none */
	const char *text;  /* what it does: plain text, sentences */
} nt_cli_option_doc;

/* Ended by a row with a NULL name. */
extern const nt_cli_option_doc nt_cli_option_docs[];
/* The line for option NAME, or NULL. */
const nt_cli_option_doc *nt_cli_option_doc_find(const char *name);

#endif
