/*
 * ref_megatron.h - the reference reading of a Megatron-LM line's pieces, for the sameness tests
 * of the fast Megatron path (test_ingest_fast.c, test_ingest_fast2.c): the generic helpers of
 * text.c (mfu__split_next, mfu__kv, mfu__num_parse_shift), piece by piece, as fmt_megatron.c
 * read lines before its fast path. Included by one test program each (static functions).
 */
#ifndef MFU_TEST_REF_MEGATRON_H
#define MFU_TEST_REF_MEGATRON_H

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "ingest/format.h"

/* Read the '|'-separated pieces in rest (the line after its iteration head) into *s, which the
 * caller initialised (mfu_step_init) and may have given a step number. Returns false when the
 * line has no step time (then it is not a step and *s is partly filled). */
static bool ref_megatron_pieces(mfu__span rest, mfu_step *s)
{
    mfu__span piece, key, val;
    double lm_loss = NAN, other_loss = NAN, seqlen = NAN;
    bool loss_nan = false, skipped = false, nan_iters = false;
    while (mfu__split_next(&rest, "|", &piece)) {
        if (!mfu__kv(piece, ": ", &key, &val))
            continue;
        bool is_ms = mfu__span_eq(key, "elapsed time per iteration (ms)");
        bool is_tflops =
            mfu__span_eq(key, "throughput per GPU (TFLOP/s/GPU)") || mfu__span_eq(key, "TFLOPs");
        mfu__num n;
        if (!mfu__num_parse_shift(val, is_ms ? -3 : is_tflops ? 12 : 0, &n))
            continue;
        double v = n.value;
        if (is_ms)
            s->step_time_s = v;
        else if (is_tflops) {
            s->flops_per_s = v;
            s->flops_per_s_scope = MFU_SCOPE_DEVICE;
        } else if (mfu__span_eq(key, "tokens per gpu per second (tgs)")) {
            s->tokens_per_s = v;
            s->tokens_per_s_scope = MFU_SCOPE_DEVICE;
        } else if (mfu__span_eq(key, "samples per second")) {
            s->samples_per_s = v;
            s->samples_per_s_scope = MFU_SCOPE_GLOBAL;
        } else if (mfu__span_eq(key, "actual seqlen"))
            seqlen = v;
        else if (mfu__span_eq(key, "learning rate"))
            s->lr = v;
        else if (mfu__span_eq(key, "global batch size"))
            s->samples = v;
        else if (mfu__span_eq(key, "grad norm"))
            s->grad_norm = v;
        else if (mfu__span_eq(key, "number of skipped iterations"))
            skipped = v >= 1;
        else if (mfu__span_eq(key, "number of nan iterations"))
            nan_iters = v >= 1;
        else if (mfu__span_eq(key, "lm loss")) {
            lm_loss = v;
            loss_nan = n.kind == MFU__NUM_NAN || n.kind == MFU__NUM_INF;
        } else if (key.n >= 5 && memcmp(key.p + key.n - 5, " loss", 5) == 0 && isnan(other_loss)) {
            other_loss = v;
        }
    }
    if (isnan(s->step_time_s))
        return false;
    s->loss = !isnan(lm_loss) || loss_nan ? lm_loss : other_loss;
    if (loss_nan) {
        s->loss = NAN;
        s->flags |= MFU_STEP_LOSS_NAN;
    }
    if (skipped)
        s->flags |= MFU_STEP_SKIPPED;
    if (nan_iters)
        s->flags |= MFU_STEP_LOSS_NAN;
    if (!isnan(seqlen) && !isnan(s->samples))
        s->tokens = s->samples * seqlen;
    if (isinf(s->step_time_s))
        return false; /* mfu_run_append refuses an infinite step time (plausible.c) */
    if (isinf(s->loss))
        s->flags |= MFU_STEP_LOSS_NAN;
    double *d[] = {&s->step_time_s, &s->tokens,       &s->samples,     &s->loss,         &s->lr,
                   &s->grad_norm,   &s->tokens_per_s, &s->flops_per_s, &s->samples_per_s};
    for (size_t i = 0; i < MFU__ARRAY_LEN(d); i++)
        if (isinf(*d[i]))
            *d[i] = NAN;
    return true;
}

#endif
