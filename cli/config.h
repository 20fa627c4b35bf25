/* SPDX-License-Identifier: Apache-2.0 */
/* The configuration file of `nettune serve` (see cli/config.c for its
 * format): one key per option of nt_cli_options marked NT_OPT_CONF. */
#ifndef NT_CLI_CONFIG_H
#define NT_CLI_CONFIG_H

#include "cli/cli.h"

#define NT_CONF_DEFAULT "/etc/nettune/nettune.conf"

/* Parse TEXT (modified in place: the values set in O point into it, so it
 * must outlive O) read from FILE (for messages). Returns 0, or -EINVAL with
 * "FILE:LINE: reason" in ERR; O may then hold some of the file's values. */
int nt_conf_parse(char *text, const char *file, cli_opts *o, char *err, size_t errsize);

/* Read PATH and parse it into O. On success *TEXT is the buffer O's values
 * point into (the caller frees it after O). Returns 0 or -errno with
 * "PATH: reason" or "PATH:LINE: reason" in ERR. */
int nt_conf_load(const char *path, cli_opts *o, char **text, char *err, size_t errsize);

#endif
