/*
 * sameness.h - what the fast-path sameness tests share (test_ingest_fast.c,
 * test_ingest_fast2.c): a seeded generator, so a failure is reproducible, and bit-for-bit
 * comparison of doubles and steps. Included by one test program each (static functions).
 */
#ifndef MFU_TEST_SAMENESS_H
#define MFU_TEST_SAMENESS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "mfu/run.h"

/* xorshift64*: a seeded generator, so a failure is reproducible. */
typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

static int below(rng *r, int n)
{
    return (int)(next(r) % (uint64_t)n);
}

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Every field of two steps equal, doubles bit for bit (no memcmp: structs have padding). */
static bool same_step(const mfu_step *a, const mfu_step *b)
{
    return a->step == b->step && same_bits(a->time_s, b->time_s) &&
           same_bits(a->step_time_s, b->step_time_s) && same_bits(a->tokens, b->tokens) &&
           same_bits(a->samples, b->samples) && same_bits(a->loss, b->loss) &&
           same_bits(a->lr, b->lr) && same_bits(a->grad_norm, b->grad_norm) &&
           same_bits(a->memory_bytes, b->memory_bytes) &&
           same_bits(a->tokens_per_s, b->tokens_per_s) &&
           a->tokens_per_s_scope == b->tokens_per_s_scope &&
           same_bits(a->flops_per_s, b->flops_per_s) &&
           a->flops_per_s_scope == b->flops_per_s_scope && same_bits(a->mfu, b->mfu) &&
           a->mfu_scope == b->mfu_scope && same_bits(a->samples_per_s, b->samples_per_s) &&
           a->samples_per_s_scope == b->samples_per_s_scope && a->flags == b->flags &&
           a->rank == b->rank;
}

#endif
