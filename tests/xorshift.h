/*
 * xorshift.h - the tests' pseudo-random numbers (xorshift64): a fixed
 * sequence from a fixed seed, so that a failure can be reproduced.
 */
#ifndef PERFHUB_TESTS_XORSHIFT_H
#define PERFHUB_TESTS_XORSHIFT_H

#include <stdint.h>

/* the next number of the sequence kept in *state (not 0) */
static inline uint64_t xorshift64(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

#endif
