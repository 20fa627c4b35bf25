/* SPDX-License-Identifier: Apache-2.0 */
/* A minimal test harness: CHECK records a failure and carries on, so one
 * run shows every broken assertion; main returns non-zero when any failed.
 * Each test binary ends with one line "N passed, N failed". */
#ifndef NT_TEST_HARNESS_H
#define NT_TEST_HARNESS_H

#include <stdio.h>
#include <string.h>
#include <stdlib.h>

static int nt_t_passed, nt_t_failed;

#define CHECK(cond) do { \
	if (cond) { nt_t_passed++; } else { nt_t_failed++; \
		fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } \
} while (0)

#define CHECK_MSG(cond, ...) do { \
	if (cond) { nt_t_passed++; } else { nt_t_failed++; \
		fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } \
} while (0)

#define CHECK_INT(a, b) do { long long _a = (long long)(a), _b = (long long)(b); \
	CHECK_MSG(_a == _b, "%s = %lld, expected %lld", #a, _a, _b); } while (0)

#define CHECK_STR(a, b) do { const char *_a = (a), *_b = (b); \
	CHECK_MSG(_a && _b && strcmp(_a, _b) == 0, "%s = \"%s\", expected \"%s\"", #a, \
		_a ? _a : "(null)", _b ? _b : "(null)"); } while (0)

/* A test that cannot run here says why and fails the binary unless the
 * ctest SKIP_RETURN_CODE (77) is honoured, which reports it as skipped,
 * never as passed. */
#define SKIP(...) do { fprintf(stdout, "SKIP: "); fprintf(stdout, __VA_ARGS__); \
	fputc('\n', stdout); exit(77); } while (0)

#define TEST_MAIN_END() do { \
	printf("%d passed, %d failed\n", nt_t_passed, nt_t_failed); \
	return nt_t_failed ? 1 : 0; } while (0)

#endif
