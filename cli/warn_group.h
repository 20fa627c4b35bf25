/* SPDX-License-Identifier: Apache-2.0 */
/* A plan's warnings, alike ones as one line. A profile over eight NICs
 * says "ethN: changing rings or channels may reset the NIC ..." eight
 * times and "ethN: rps_cpus leave out CPU C, ..." eight more, each line
 * the same but for its interface (or queue) and a number or CPU list; the
 * line a person must act on drowns among them.
 *
 * The rule (the web view's groupWarnings in ui/app.js is the same rule):
 *  - A warning's subject is what comes before its first ": " when that is
 *    one word (an interface, "flow_cnt") or an interface and a queue
 *    ("eth0 rx-3", "eth0/tx-3"); its text is the rest.
 *  - Numbers in the text (1, 1-17, 18-31,64-66, 101..116) are its values;
 *    a number inside a word (bond0, IPv4) is not one.
 *  - Warnings with a subject whose texts are equal once their values are
 *    taken out are one group, in the order of the group's first line.
 *    Warnings without a subject are grouped only with identical ones.
 *  - A group of one is its warning as it was. A larger one is
 *      SUBJECTS: TEXT
 *    where SUBJECTS is "every port of bond0 (enos0..enos3)" when they are
 *    exactly a bond's ports, else the subjects with runs of consecutive
 *    numbers joined ("eth0..eth7", "eth0 rx-0..rx-3", "eth0, eth2"); and
 *    each value the lines share is written once, each value that differs
 *    as "[a | b | c]", one per line in the order of SUBJECTS (at most 8;
 *    after that the first 4, "…" and how many there are). Identical
 *    warnings without a subject are one, followed by "(×N)".
 * Nothing is dropped for good: `--verbose`, --json and the page's "show
 * all" give every line as the agent sent it. */
#ifndef NT_CLI_WARN_GROUP_H
#define NT_CLI_WARN_GROUP_H

#include <jansson.h>

/* WARNINGS (an array of strings; other members are skipped) grouped as
 * above, as a new array of strings the caller owns; NICS (GET /v1/nics:
 * {"nics": [{"name", "master"}, ...]}, or NULL) names the bonds' ports.
 * NULL when out of memory. */
json_t *nt_warn_group(const json_t *warnings, const json_t *nics);

#endif
