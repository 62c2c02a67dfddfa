/* rng.h -- random numbers for the randomized unit tests: splitmix64 (tiny, full period, good
 * enough to drive a test), one state per test program.  A test sets rng_s from the seed it
 * prints, so that VMATCH_SEED=N replays its run. */
#ifndef VM_TEST_RNG_H
#define VM_TEST_RNG_H

#include <stdint.h>

static uint64_t rng_s;

/** The next 64 random bits. */
static inline uint64_t rnd64(void)
{
    uint64_t z = (rng_s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/** A number in [0, n), uniform enough. */
static inline uint32_t rnd(uint32_t n)
{
    return (uint32_t)(((rnd64() >> 32) * n) >> 32);
}

#endif
