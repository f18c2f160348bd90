#ifndef MP_TEST_RUNNER_H
#define MP_TEST_RUNNER_H

#include <check.h>

/* The number of elements of array a (a loop test's end). */
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The main() of every Check program, unit and integration alike: runs every case of s (in
 * Check's default fork mode), prints Check's summary line ("N%: Checks: N, Failures: F,
 * Errors: E", which dev/test adds up) and frees the runner and s. Returns the program's exit
 * status: EXIT_SUCCESS when no case failed or erred.
 */
int run_suite(Suite *s);

/*
 * A suite named name holding one test case named tcase (timeout seconds; 0: Check's
 * default), into which *t is set for the caller to add the tests.
 */
Suite *suite_one(const char *name, const char *tcase, int timeout, TCase **t);

#endif
