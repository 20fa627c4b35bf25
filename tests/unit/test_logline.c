/* SPDX-License-Identifier: Apache-2.0 */
/* The serve log's line formatter (cli/logline.c) against the formatter it
 * replaced, kept here as the reference (stdio: open_memstream, one fprintf
 * per field): the same text and JSON lines, byte for byte, for events of
 * every value type, strings that must be quoted and must not, a line longer
 * than the caller's buffer, an event without a name, an empty one and one
 * that already has a "ts"; and the same timestamps. */
#include "harness.h"
#include "cli/logline.h"
#include "store/store.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *reference(const json_t *ev, const char *when, bool as_json)
{
	char *line = NULL;
	if (as_json) {
		json_t *copy = json_copy((json_t *)ev);
		if (!copy)
			return NULL;
		json_object_set_new(copy, "ts", json_string(when));
		line = json_dumps(copy, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(9));
		json_decref(copy);
		return line;
	}
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);
	if (!f)
		return NULL;
	fprintf(f, "%s %s", when, json_string_value(json_object_get(ev, "event")));
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)ev, key, val) {
		if (!strcmp(key, "event"))
			continue;
		if (json_is_string(val)) {
			const char *v = json_string_value(val);
			bool quote = !*v || strpbrk(v, " \"\\=\t\n") != NULL;
			for (const char *p = v; !quote && *p; p++)
				quote = (unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f;
			if (quote) {
				char *enc = json_dumps(val, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
				fprintf(f, " %s=%s", key, enc ? enc : "\"?\"");
				free(enc);
			} else {
				fprintf(f, " %s=%s", key, v);
			}
		} else if (json_is_real(val)) {
			fprintf(f, " %s=%.3f", key, json_real_value(val));
		} else {
			char *enc = json_dumps(val, JSON_ENCODE_ANY | JSON_COMPACT);
			fprintf(f, " %s=%s", key, enc ? enc : "?");
			free(enc);
		}
	}
	if (fclose(f) != 0) {
		free(line);
		return NULL;
	}
	return line;
}

static void same(const json_t *ev, const char *what)
{
	const char *when = "2026-11-30T01:02:03.456Z";
	for (int j = 0; j < 2; j++) {
		char storage[64];
		nt_linebuf b;
		char *want = reference(ev, when, j);
		nt_linebuf_init(&b, storage, sizeof(storage));
		CHECK_INT(nt_log_format(&b, ev, when, j), 0);
		nt_linebuf_add(&b, "", 1);
		CHECK_MSG(want && !b.failed && !strcmp(b.p, want), "%s (%s):\n got  %s\n want %s",
			  what, j ? "json" : "text", b.failed ? "(failed)" : b.p, want ? want : "(null)");
		nt_linebuf_free(&b);
		free(want);
	}
}

int main(void)
{
	json_t *ev;

	/* A step as the engine logs it, and an access line. */
	ev = json_pack("{s:s,s:I,s:i,s:s,s:s,s:s,s:s,s:s,s:s}", "event", "txn_step", "txn",
		       (json_int_t)42, "index", 17, "kind", "irq_affinity", "target", "177", "before",
		       "0-255", "after", "4-7", "result", "applied", "interface", "enp65s0f0");
	same(ev, "txn_step");
	json_decref(ev);
	ev = json_pack("{s:s,s:s,s:s,s:i,s:f,s:s,s:s}", "event", "access", "method", "POST", "path",
		       "/v1/transactions/12/rollback", "status", 201, "ms", 61.23456, "client",
		       "127.0.0.1", "identity", "fleet");
	same(ev, "access");
	json_decref(ev);

	/* Every value type, and the integers at the ends of their range. */
	ev = json_pack("{s:s,s:I,s:I,s:I,s:i,s:f,s:f,s:b,s:b,s:n,s:{s:s,s:[i,s]},s:[]}", "event",
		       "types", "big", (json_int_t)INT64_MAX, "small", (json_int_t)INT64_MIN, "zero",
		       (json_int_t)0, "neg", -5, "real", -0.0005, "huge", 1e300, "t", 1, "f", 0, "nul",
		       "obj", "a b", "c\"d", "arr", 1, "x=y", "empty");
	same(ev, "types");
	json_decref(ev);
	ev = json_pack("{s:s,s:f,s:f}", "event", "reals", "lowest", -1.7976931348623157e308, "tiny",
		       4.9e-324);
	same(ev, "extreme reals");
	json_decref(ev);

	/* Strings: plain ones as they are, the rest JSON-quoted. */
	static const char *const strs[] = {
		"plain", "", "two words", "say \"hi\"", "back\\slash", "k=v", "tab\there",
		"line\nbreak", "bell\a", "\x1f", "caf\xc3\xa9", "del\x7f", "-_./:,;+*%@#!?()[]{}<>|~^$&'`",
	};
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		ev = json_pack("{s:s,s:s,s:s}", "event", "str", "v", strs[i], "after", "x");
		same(ev, strs[i]);
		json_decref(ev);
	}

	/* Longer than the caller's buffer (64 bytes here): grown on the heap. */
	char *big = malloc(5001);
	if (big) {
		for (int i = 0; i < 5000; i++)
			big[i] = (char)('a' + i % 26);
		big[5000] = '\0';
		ev = json_pack("{s:s,s:s,s:s}", "event", "long", "error", big, "quoted", big + 10);
		json_object_set_new(ev, "spaced", json_string("with space and then some more text"));
		same(ev, "long line");
		json_decref(ev);
		free(big);
	}

	/* No name; empty; already holding a "ts" (JSON: replaced in place). */
	ev = json_pack("{s:i}", "n", 1);
	same(ev, "no event name");
	json_decref(ev);
	ev = json_object();
	same(ev, "empty event");
	json_decref(ev);
	ev = json_pack("{s:s,s:s,s:i}", "event", "odd", "ts", "earlier", "n", 2);
	same(ev, "event with ts");
	json_decref(ev);

	/* The lines' timestamps (nt_store_rfc3339 of the time in ms): as
	 * snprintf of gmtime would print them. */
	static const struct timespec tss[] = {
		{ 0, 0 },		   { 1764464523, 456000000 }, { 1767225599, 999999999 },
		{ 951782400, 1000000 },	   { 4102444800, 5000000 },
	};
	for (size_t i = 0; i < sizeof(tss) / sizeof(tss[0]); i++) {
		char got[32], want[40];
		struct tm tm;
		gmtime_r(&tss[i].tv_sec, &tm);
		snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, tss[i].tv_nsec / 1000000);
		nt_store_rfc3339((int64_t)tss[i].tv_sec * 1000 + tss[i].tv_nsec / 1000000, got, sizeof(got));
		CHECK_STR(got, want);
	}
	TEST_MAIN_END();
}
