/*
 * run_suite.h: the main of every Check test binary:
 *
 *	int main(void) { return run_suite(suite()); }
 */
#ifndef ATTN_RUN_SUITE_H
#define ATTN_RUN_SUITE_H

#include <check.h>

/* Runs every test of s in Check's usual mode (CK_NORMAL output); frees
 * the runner, and with it s; EXIT_SUCCESS when none failed, else
 * EXIT_FAILURE. */
int run_suite(Suite *s);

#endif
