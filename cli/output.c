/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/output.h"
#include "cli/escape.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

bool nt_out_want_color(FILE *f)
{
	const char *nc = getenv("NO_COLOR");
	const char *term = getenv("TERM");
	if (nc && *nc)
		return false;
	if (term && !strcmp(term, "dumb"))
		return false;
	return isatty(fileno(f)) == 1;
}

void nt_out_init(nt_out *o, FILE *f)
{
	o->f = f;
	o->color = nt_out_want_color(f);
}

void nt_out_printf(nt_out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(o->f, fmt, ap);
	va_end(ap);
}

void nt_out_paint(nt_out *o, const char *sgr, const char *fmt, ...)
{
	va_list ap;
	bool on = o->color && sgr && *sgr;
	if (on)
		fprintf(o->f, "\033[%sm", sgr);
	va_start(ap, fmt);
	vfprintf(o->f, fmt, ap);
	va_end(ap);
	if (on)
		fputs("\033[0m", o->f);
}

const char *nt_out_status_sgr(const char *w)
{
	if (!w)
		return NULL;
	if (!strcmp(w, "applied"))
		return NT_SGR_GREEN;
	if (!strcmp(w, "failed") || !strcmp(w, "rolled_back") || !strcmp(w, "rollback_failed"))
		return !strcmp(w, "rolled_back") ? NT_SGR_RED : NT_SGR_BOLD_RED;
	if (!strcmp(w, "pending_confirm") || !strcmp(w, "applying") || !strcmp(w, "rolling_back") ||
	    !strcmp(w, "pending") || !strcmp(w, "reverted") || !strcmp(w, "recovered") ||
	    !strcmp(w, "restored") || !strcmp(w, "not_applied") || !strncmp(w, "skipped", 7))
		return NT_SGR_YELLOW;
	return NULL;
}

char *nt_out_oneline(char *dst, size_t size, const char *s)
{
	size_t n = 0;
	bool space = false;
	if (!size)
		return dst;
	for (; s && *s && n + 1 < size; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
			space = n > 0;
			continue;
		}
		if (space && n + 2 < size)
			dst[n++] = ' ';
		space = false;
		dst[n++] = *s;
	}
	dst[n] = '\0';
	return dst;
}

char *nt_out_duration(char *dst, size_t size, long long ms)
{
	if (ms < 0)
		snprintf(dst, size, "?");
	else if (ms < 1000)
		snprintf(dst, size, "%lld ms", ms);
	else if (ms < 60000)
		snprintf(dst, size, "%.1f s", ms / 1000.0);
	else
		snprintf(dst, size, "%lld min %lld s", ms / 60000, ms % 60000 / 1000);
	return dst;
}

long long nt_out_parse_time_ms(const char *iso)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	if (!iso)
		return -1;
	const char *p = strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return -1;
	long long ms = 0;
	if (*p == '.') {
		int digits = 0;
		for (p++; *p >= '0' && *p <= '9'; p++, digits++)
			if (digits < 3)
				ms = ms * 10 + (*p - '0');
		for (; digits < 3; digits++)
			ms *= 10;
	}
	if (*p != 'Z' || p[1])
		return -1;
	return (long long)timegm(&tm) * 1000 + ms;
}

char *nt_out_time(char *dst, size_t size, const char *iso)
{
	if (!iso) {
		snprintf(dst, size, "-");
		return dst;
	}
	if (nt_out_parse_time_ms(iso) < 0 || strlen(iso) < 19) {
		snprintf(dst, size, "%s", iso);
		return dst;
	}
	snprintf(dst, size, "%.10s %.8s UTC", iso, iso + 11);
	return dst;
}

/* ---- tables ---- */

struct nt_table {
	int ncols;
	bool header;
	size_t nrows, cap;
	char **cells; /* nrows * ncols, row 0 the header when there is one */
	const char **sgr; /* the same shape */
};

nt_table *nt_table_new(int ncols, const char *const *headers)
{
	nt_table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->ncols = ncols;
	if (headers) {
		if (nt_table_add(t, headers) < 0) {
			nt_table_free(t);
			return NULL;
		}
		for (int c = 0; c < ncols; c++)
			t->sgr[c] = NT_SGR_DIM;
		t->header = true;
	}
	return t;
}

int nt_table_add(nt_table *t, const char *const *cells)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		char **nc = realloc(t->cells, cap * (size_t)t->ncols * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		t->cells = nc;
		const char **ns = realloc(t->sgr, cap * (size_t)t->ncols * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		t->sgr = ns;
		t->cap = cap;
	}
	size_t base = t->nrows * (size_t)t->ncols;
	for (int c = 0; c < t->ncols; c++) {
		t->cells[base + c] = strdup(cells[c] ? cells[c] : "");
		t->sgr[base + c] = NULL;
		if (!t->cells[base + c]) {
			while (c-- > 0)
				free(t->cells[base + c]);
			return -ENOMEM;
		}
	}
	t->nrows++;
	return 0;
}

void nt_table_sgr(nt_table *t, int col, const char *sgr)
{
	if (t->nrows && col >= 0 && col < t->ncols)
		t->sgr[(t->nrows - 1) * (size_t)t->ncols + col] = sgr;
}

size_t nt_table_rows(const nt_table *t)
{
	return t->nrows - (t->header ? 1 : 0);
}

/* Characters, not bytes: a UTF-8 continuation byte adds nothing ("→"). */
static size_t width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

void nt_table_print(const nt_table *t, nt_out *o, int indent)
{
	size_t *w = calloc((size_t)t->ncols, sizeof(*w));
	if (!w)
		return;
	for (size_t r = 0; r < t->nrows; r++)
		for (int c = 0; c < t->ncols; c++) {
			size_t cw = width(t->cells[r * (size_t)t->ncols + c]);
			if (cw > w[c])
				w[c] = cw;
		}
	/* The last column that is non-empty anywhere ends each line, so no
	 * line ends in padding. */
	int last = t->ncols - 1;
	while (last > 0 && w[last] == 0)
		last--;
	for (size_t r = 0; r < t->nrows; r++) {
		fprintf(o->f, "%*s", indent, "");
		int end = last;
		while (end > 0 && !*t->cells[r * (size_t)t->ncols + end])
			end--;
		for (int c = 0; c <= end; c++) {
			const char *s = t->cells[r * (size_t)t->ncols + c];
			nt_out_paint(o, t->sgr[r * (size_t)t->ncols + c], "%s", s);
			if (c < end)
				fprintf(o->f, "%*s", (int)(w[c] - width(s) + 2), "");
		}
		fputc('\n', o->f);
	}
	free(w);
}

void nt_table_free(nt_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->sgr);
	free(t);
}

/* ---- problem documents ---- */

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The API's words in an agent's message made the command line's, into
 * BUF: what to send becomes what to type. Returns BUF. */
static const char *cli_words(char *buf, size_t size, const char *msg)
{
	static const char *const words[][2] = {
		{ "give {\"force\":true} to roll back anyway", "use --force to roll back anyway" },
		{ "PUT /v1/desired, or apply with \"persist\": true",
		  "nettune desired set PROFILE.json, or nettune apply --persist" },
		{ "plan again, or give \"replan\": true", "plan again (nettune plan, then nettune apply --plan ID)" },
	};
	snprintf(buf, size, "%s", msg);
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		char *at = strstr(buf, words[i][0]);
		if (!at)
			continue;
		char rest[1024];
		snprintf(rest, sizeof(rest), "%s", at + strlen(words[i][0]));
		snprintf(at, size - (size_t)(at - buf), "%s%s", words[i][1], rest);
	}
	return buf;
}

void nt_out_problem(nt_out *o, long status, const json_t *p, const char *body)
{
	const char *detail = jstr(p, "detail"), *title = jstr(p, "title");
	json_t *errors = json_object_get(p, "errors");
	char line[512];

	nt_out_paint(o, NT_SGR_BOLD, "nettune: ");
	if (!p) {
		size_t n = body ? strcspn(body, "\n") : 0;
		nt_out_paint(o, NT_SGR_RED, "the agent answered HTTP %ld", status);
		char *safe = n ? nt_out_escape(body, n > 300 ? 300 : n) : NULL;
		if (safe)
			fprintf(o->f, ": %s", safe);
		free(safe);
		fputc('\n', o->f);
		return;
	}
	if (status == 422) {
		nt_out_paint(o, NT_SGR_RED, "profile refused:");
		if (json_array_size(errors) == 0)
			fprintf(o->f, " %s", detail ? detail : title ? title : "invalid");
		fputc('\n', o->f);
		size_t i;
		json_t *e;
		json_array_foreach(errors, i, e) {
			const char *path = jstr(e, "path"), *msg = jstr(e, "message");
			fprintf(o->f, "  ");
			nt_out_paint(o, NT_SGR_CYAN, "%s", path ? path : "$");
			fprintf(o->f, ": %s\n", nt_out_oneline(line, sizeof(line), msg ? msg : "invalid"));
		}
		fprintf(o->f, "nothing was applied\n");
		return;
	}
	const char *what = status == 409   ? "conflict"
			   : status == 401 ? "not allowed"
			   : status == 403 ? "not allowed"
			   : status == 404 ? "not found"
					   : NULL;
	if (what) {
		nt_out_paint(o, NT_SGR_RED, "%s:", what);
	} else {
		/* The agent's title ("Plan used") in the lower case of the
		 * others ("conflict:", "not found:"). */
		char low[128];
		snprintf(low, sizeof(low), "%s", title ? title : "error");
		if (low[0] >= 'A' && low[0] <= 'Z' && !(low[1] >= 'A' && low[1] <= 'Z'))
			low[0] = (char)(low[0] - 'A' + 'a');
		nt_out_paint(o, NT_SGR_RED, "%s (HTTP %ld):", low, status);
	}
	char said[1024];
	fprintf(o->f, " %s\n", cli_words(said, sizeof(said), detail ? detail : title ? title : ""));
	json_t *in_flight = json_object_get(p, "in_flight"), *later = json_object_get(p, "later");
	json_t *detail_in = json_object_get(p, "in_flight_detail");
	if (json_is_integer(in_flight))
		fprintf(o->f, "  transaction %lld is in flight: see nettune show %lld\n",
			(long long)json_integer_value(in_flight), (long long)json_integer_value(in_flight));
	else if (json_is_object(detail_in)) {
		/* Not recorded yet: say what it is and who started it when. */
		const char *op = json_string_value(json_object_get(detail_in, "operation"));
		const char *prof = json_string_value(json_object_get(detail_in, "profile"));
		const char *since = json_string_value(json_object_get(detail_in, "since"));
		const char *who = json_string_value(json_object_get(detail_in, "identity"));
		if (!who)
			who = json_string_value(json_object_get(detail_in, "client"));
		fprintf(o->f, "  being prepared: %s%s%s%s%s%s%s\n", op ? op : "a transaction",
			prof ? " of profile " : "", prof ? prof : "", since ? " since " : "",
			since ? since : "", who ? " by " : "", who ? who : "");
	}
	/* A plan id that no longer stands (409 plan-moved): each fact of the
	 * host that changed under it, each target that moved. */
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(p, "changed"), i, c) {
		const char *fact = jstr(c, "fact"), *iface = jstr(c, "interface");
		const char *planned = jstr(c, "planned"), *now = jstr(c, "now");
		char *safe = nt_out_escape(iface ? iface : "", iface ? strlen(iface) : 0);
		if (fact && !strcmp(fact, "present"))
			fprintf(o->f, "  %s: gone since the plan\n", safe ? safe : "?");
		else
			fprintf(o->f, "  %s%s%s: %s when planned, %s now\n", safe && safe[0] ? safe : "",
				safe && safe[0] ? " " : "",
				fact && !strcmp(fact, "cpus_online") ? "online CPUs" : fact ? fact : "?",
				planned ? planned : "?", now && now[0] ? now : "none");
		free(safe);
	}
	json_array_foreach(json_object_get(p, "moved"), i, c) {
		const char *kind = jstr(c, "kind"), *target = jstr(c, "target");
		const char *planned = jstr(c, "planned"), *now = jstr(c, "now");
		char *safe = nt_out_escape(target ? target : "", target ? strlen(target) : 0);
		fprintf(o->f, "  %s %s: '%s' when planned, %s%s%s now\n", kind ? kind : "?", safe ? safe : "?",
			planned ? planned : "?", now ? "'" : "", now ? now : "unreadable", now ? "'" : "");
		free(safe);
	}
	/* A transaction rolled back already: the detail said so, and no advice
	 * applies (--force changes nothing). */
	if (json_is_integer(later) && !json_is_integer(json_object_get(p, "rolled_back_by")))
		fprintf(o->f, "  transaction %lld changed the same targets since: roll it back first, or use --force\n",
			(long long)json_integer_value(later));
	if (status == 401)
		fprintf(o->f, "  the agent wants a token: set NETTUNE_TOKEN\n");
	else if (status == 403)
		fprintf(o->f, "  this needs a token of scope apply in NETTUNE_TOKEN\n");
}

/* ---- progress ---- */

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void nt_progress_begin(nt_progress *p, const char *label)
{
	memset(p, 0, sizeof(*p));
	p->on = isatty(STDERR_FILENO) == 1;
	p->start_ms = now_ms();
	snprintf(p->label, sizeof(p->label), "%s", label);
}

void nt_progress_tick(nt_progress *p)
{
	if (!p->on)
		return;
	long long s = (now_ms() - p->start_ms) / 1000;
	if (s < 1 || s == p->last_s)
		return;
	p->last_s = s;
	int n = fprintf(stderr, "\r%s… %lld s", p->label, s);
	if (n > 0 && (size_t)n > p->shown)
		p->shown = (size_t)n;
	fflush(stderr);
}

void nt_progress_end(nt_progress *p)
{
	if (!p->on || !p->shown)
		return;
	fprintf(stderr, "\r%*s\r", (int)p->shown, "");
	fflush(stderr);
	p->shown = 0;
}
