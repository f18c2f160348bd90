#ifndef MP_TEST_RUNNER_H
#define MP_TEST_RUNNER_H

#include <check.h>

/*
 * The main() of every Check program, unit and integration alike: runs every case of s (in
 * Check's default fork mode), prints Check's summary line ("N%: Checks: N, Failures: F,
 * Errors: E", which dev/test adds up) and frees the runner and s. Returns the program's exit
 * status: EXIT_SUCCESS when no case failed or erred.
 */
int run_suite(Suite *s);

#endif
