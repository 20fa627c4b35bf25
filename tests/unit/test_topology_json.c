/* SPDX-License-Identifier: Apache-2.0 */
/* The host model's documents written as text (host/topology_json.c) are
 * byte for byte what jansson prints for the documents nt_topology_to_json,
 * nt_nic_to_json and nt_irqs_to_json build, with the API's flags: on every
 * fixture, on the synthetic big host when NT_BIGHOST names one, and on a
 * host whose strings need escaping or are not UTF-8 at all. */
#include "host/jsonw.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "harness.h"

#include <dirent.h>
#include <sys/stat.h>

static char *reference(json_t *doc)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(doc);
	if (!s)
		return NULL;
	size_t n = strlen(s);
	char *r = realloc(s, n + 2);
	if (!r) {
		free(s);
		return NULL;
	}
	r[n] = '\n';
	r[n + 1] = '\0';
	return r;
}

static json_t *nics_doc(const nt_topology *t)
{
	json_t *a = json_array();
	for (int i = 0; i < t->nnics; i++)
		json_array_append_new(a, nt_nic_to_json(t, &t->nics[i]));
	return json_pack("{s:o}", "nics", a);
}

/* Where two texts first differ, for the failure message. */
static size_t first_diff(const char *a, const char *b)
{
	size_t i = 0;
	while (a[i] && a[i] == b[i])
		i++;
	return i;
}

static void compare(const char *what, char *fast, char *ref)
{
	CHECK_MSG(fast && ref, "%s: a document could not be written", what);
	if (fast && ref) {
		size_t d = first_diff(fast, ref);
		CHECK_MSG(strcmp(fast, ref) == 0, "%s: differs at byte %zu: ...%.60s... vs ...%.60s...", what,
			  d, fast + (d > 20 ? d - 20 : 0), ref + (d > 20 ? d - 20 : 0));
	}
	free(fast);
	free(ref);
}

static void compare_all(const char *what, const nt_topology *t)
{
	char name[PATH_MAX + 32];
	snprintf(name, sizeof(name), "%s topology", what);
	compare(name, nt_topology_to_text(t, NULL), reference(nt_topology_to_json(t)));
	snprintf(name, sizeof(name), "%s nics", what);
	compare(name, nt_nics_to_text(t, NULL), reference(nics_doc(t)));
	snprintf(name, sizeof(name), "%s irqs", what);
	compare(name, nt_irqs_to_text(t, NULL), reference(nt_irqs_to_json(t)));
}

static int check_root(const char *root)
{
	nt_ctx ctx;
	nt_topology *t = NULL;
	if (nt_ctx_init(&ctx, root) < 0 || nt_topology_read(&ctx, &t) < 0)
		return -1;
	compare_all(root, t);
	nt_topology_free(t);
	return 0;
}

static void check_fixtures(void)
{
	DIR *d = opendir(NT_FIXTURES);
	struct dirent *de;
	int n = 0;
	CHECK(d != NULL);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char root[PATH_MAX], sys[PATH_MAX + 8];
		struct stat st;
		snprintf(root, sizeof(root), "%s/%s", NT_FIXTURES, de->d_name);
		snprintf(sys, sizeof(sys), "%s/proc", root);
		if (de->d_name[0] == '.' || stat(sys, &st) < 0)
			continue;
		CHECK_MSG(check_root(root) == 0, "%s could not be read", root);
		n++;
	}
	closedir(d);
	CHECK_MSG(n >= 5, "only %d fixtures found", n);
}

/* Strings jansson escapes, multi-byte UTF-8, strings it refuses (the
 * member or the whole packed object goes), and reporters' members of
 * every type, sorted in among the reader's. */
static void check_hostile(void)
{
	nt_ctx ctx;
	nt_topology *t = NULL;
	CHECK_INT(nt_ctx_init(&ctx, NT_FIXTURES "/epyc7713-2node-bond"), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (!t)
		return;
	CHECK(t->nirqs > 3 && t->nnics > 2 && t->nbonds > 0);
	snprintf(t->irqs[0].name, sizeof(t->irqs[0].name), "q\"uo\\te\x01\x1f\t\n\r\b\f/\x7f");
	snprintf(t->irqs[1].name, sizeof(t->irqs[1].name), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	snprintf(t->irqs[2].name, sizeof(t->irqs[2].name), "bad \xff utf-8");
	snprintf(t->irqs[3].chip, sizeof(t->irqs[3].chip), "overlong \xc0\xaf");
	snprintf(t->nics[0].driver, sizeof(t->nics[0].driver), "surrogate \xed\xa0\x80");
	snprintf(t->sysctls[0].value, sizeof(t->sysctls[0].value), "\xfe");
	compare_all("hostile strings", t);

	json_t *rep = json_pack("{s:{s:i, s:f, s:b, s:n, s:[i, s, {}], s:{}}, s:s, s:i}", "coalesce",
				"rx_usecs", 8, "ratio", 0.25, "adaptive", 1, "none", "list", 3, "x\"y", "empty",
				"aaa_first", "z", "mtu", 1);
	json_decref(t->nics[1].reported);
	t->nics[1].reported = rep; /* "mtu" is the reader's: not replaced */
	compare_all("reported members", t);

	snprintf(t->bonds[0].xmit_hash_policy, sizeof(t->bonds[0].xmit_hash_policy), "\x80");
	snprintf(t->hostname, sizeof(t->hostname), "host\xc3");
	compare_all("refused packs", t);
	nt_topology_free(t);
}

static void check_writer(void)
{
	nt_jw w;
	nt_jw_init(&w);
	nt_jw_obj(&w);
	nt_jw_key(&w, "a");
	nt_jw_arr(&w);
	nt_jw_arr_end(&w);
	nt_jw_key(&w, "b");
	nt_jw_obj(&w);
	nt_jw_obj_end(&w);
	nt_jw_key(&w, "c");
	nt_jw_int(&w, -9223372036854775807LL - 1);
	nt_jw_obj_end(&w);
	char *s = nt_jw_finish(&w, false, NULL);
	CHECK_STR(s, "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": -9223372036854775808\n}");
	free(s);
	/* An unclosed container is an error, not a document. */
	nt_jw_init(&w);
	nt_jw_arr(&w);
	CHECK(nt_jw_finish(&w, false, NULL) == NULL);
	CHECK(nt_jw_utf8("plain ascii"));
	CHECK(!nt_jw_utf8("\xf4\x90\x80\x80")); /* above U+10FFFF */
	CHECK(!nt_jw_utf8("\xe2\x82")); /* cut short */
}

/* Every ASCII byte at every place of strings around the writer's
 * eight-byte steps, and containers nested deep, each against jansson. */
static void check_writer_escapes(void)
{
	int bad = 0;
	for (int c = 1; c < 128 && bad < 5; c++)
		for (int len = 1; len <= 19 && bad < 5; len++)
			for (int at = 0; at < len && bad < 5; at++) {
				char str[32];
				memset(str, 'a', (size_t)len);
				str[len] = '\0';
				str[at] = (char)c;
				nt_jw w;
				nt_jw_init(&w);
				nt_jw_arr(&w);
				nt_jw_str(&w, str);
				nt_jw_arr_end(&w);
				char *fast = nt_jw_finish(&w, false, NULL);
				json_t *a = json_pack("[s]", str);
				char *ref = json_dumps(a, JSON_INDENT(2));
				if (!fast || !ref || strcmp(fast, ref) != 0) {
					CHECK_MSG(0, "byte 0x%02x at %d of %d: %s, want %s", c, at, len,
						  fast ? fast : "(null)", ref ? ref : "(null)");
					bad++;
				}
				free(fast);
				free(ref);
				json_decref(a);
			}
	nt_jw w;
	nt_jw_init(&w);
	json_t *root = json_object(), *cur = root;
	nt_jw_obj(&w);
	for (int d = 0; d < 20; d++) {
		json_t *next = json_object();
		json_object_set_new(cur, "k", next);
		json_object_set_new(cur, "v", json_integer(d));
		nt_jw_key(&w, "k");
		nt_jw_obj(&w);
		cur = next;
	}
	json_object_set_new(cur, "end", json_true());
	nt_jw_key(&w, "end");
	nt_jw_bool(&w, true);
	for (int d = 19; d >= 0; d--) {
		nt_jw_obj_end(&w);
		nt_jw_key(&w, "v");
		nt_jw_int(&w, d);
	}
	nt_jw_obj_end(&w);
	char *fast = nt_jw_finish(&w, false, NULL);
	char *ref = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
	CHECK(fast && ref && strcmp(fast, ref) == 0);
	free(fast);
	free(ref);
	json_decref(root);
}

int main(void)
{
	check_writer();
	check_writer_escapes();
	check_fixtures();
	check_hostile();
	const char *big = getenv("NT_BIGHOST");
	if (big && *big)
		CHECK_MSG(check_root(big) == 0, "%s could not be read", big);
	TEST_MAIN_END();
}
