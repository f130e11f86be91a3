/*
 * opt.h: the option arguments of the programs, parsed one way.  A bad one
 * is a usage error (exit 2) naming the option: "PROG: option --beam: '0'
 * is not a positive integer".  Integers are decimal digits, with a '-'
 * before them only where the range goes below 0; numbers are strtod's.
 */
#ifndef ATTN_OPT_H
#define ATTN_OPT_H

#include <stdint.h>

/* An integer from min to max. */
long long opt_int(const char *arg, const char *option, long long min,
		  long long max);
/* An integer from 1 to INT_MAX. */
int opt_positive(const char *arg, const char *option);
/* A finite number (strtod's syntax, the whole argument). */
double opt_number(const char *arg, const char *option);
/* A precision, as --matmul and --kv take: f32 0, half (its name: "bf16",
 * "f16") 1. */
int opt_half(const char *arg, const char *option, const char *half);
/* A byte count from 1 to 2^62, decimal digits with an optional suffix
 * k, M or G (times 2^10, 2^20, 2^30). */
uint64_t opt_bytes(const char *arg, const char *option);

#endif
