/*
 * mr_test.h
 *	  A minimal test harness for the standalone unit tests of src/core.
 *	  Each test file defines main() calling MR_RUN(test_fn) for each test and
 *	  ends with MR_TEST_SUMMARY(), which prints "N passed, N failed" and
 *	  returns non-zero on any failure.
 */
#ifndef MR_TEST_H
#define MR_TEST_H

#include <stdio.h>
#include <string.h>

#include "mr_port.h"

static int	mr_test_passed = 0;
static int	mr_test_failed = 0;
static int	mr_test_current_failed = 0;

#define MR_CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			mr_test_current_failed = 1; \
		} \
	} while (0)

#define MR_CHECK_STR(a, b) \
	do { \
		const char *_a = (a), *_b = (b); \
		if (_a == NULL || _b == NULL || strcmp(_a, _b) != 0) { \
			fprintf(stderr, "%s:%d: expected \"%s\", got \"%s\"\n", __FILE__, __LINE__, \
					_b ? _b : "(null)", _a ? _a : "(null)"); \
			mr_test_current_failed = 1; \
		} \
	} while (0)

#define MR_CHECK_INT(a, b) \
	do { \
		long _a = (long) (a), _b = (long) (b); \
		if (_a != _b) { \
			fprintf(stderr, "%s:%d: %s: expected %ld, got %ld\n", __FILE__, __LINE__, #a, _b, _a); \
			mr_test_current_failed = 1; \
		} \
	} while (0)

#define MR_RUN(fn) \
	do { \
		mr_test_current_failed = 0; \
		fn(); \
		mr_standalone_free_all(); \
		if (mr_test_current_failed) { mr_test_failed++; fprintf(stderr, "FAIL %s\n", #fn); } \
		else mr_test_passed++; \
	} while (0)

#define MR_TEST_SUMMARY() \
	(printf("%s: %d passed, %d failed\n", __FILE__, mr_test_passed, mr_test_failed), \
	 mr_test_failed != 0)

#endif
