/*
 * rng.h: the one seeded generator of a training run (xoshiro256**, seeded
 * through splitmix64).  Its whole state is four words, saved in the model
 * file as optim.rng (i64 [4]), so a resumed run draws the same numbers as
 * one that never stopped.
 */
#ifndef ATTN_RNG_H
#define ATTN_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* Uniform in [0, 1), 53 bits. */
double rng_uniform(struct rng *r);
/* Uniform integer in [0, n), n > 0, without modulo bias. */
uint64_t rng_below(struct rng *r, uint64_t n);
/* Standard normal (Box-Muller; two uniforms per call, no cached spare). */
double rng_normal(struct rng *r);

#endif
