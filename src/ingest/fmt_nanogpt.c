/*
 * fmt_nanogpt.c - karpathy/nanoGPT train.py (log-formats.md §4).
 *
 *   iter 2920: loss 3.9883, time 1099.34ms, mfu 15.34%
 * loss: last micro-batch loss x grad-accum steps; time: wall time of the whole iteration on
 * rank 0 (ms); mfu: EMA (0.9/0.1) of the per-GPU MFU against a hard-coded A100 bf16 peak of
 * 312 TFLOP/s whatever the GPU, -100.00% for the first iterations (running_mfu starts at -1).
 * Before 2023-02 the ", mfu" part did not exist.
 *
 * Side lines: "tokens per iteration will be: 491,520" (global tokens per iteration) and the
 * eval line "step 3000: train loss 4.0390, val loss 4.0427" (recognised, not a step).
 */
#include <math.h>
#include <string.h>

#include "ingest/format.h"

/* "iter N: " at the start; returns the offset after ": " and the number. */
static size_t iter_head(mfu__span s, int64_t *iter)
{
    if (!mfu__span_starts(s, "iter "))
        return 0;
    mfu__span r = {s.p + 5, s.n - 5};
    long colon = mfu__span_find(r, ": ");
    int64_t v;
    if (colon <= 0 || !mfu__int_parse((mfu__span){r.p, (size_t)colon}, &v))
        return 0;
    if (iter)
        *iter = v;
    return 5 + (size_t)colon + 2;
}

static int nanogpt_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    size_t off = iter_head(s, NULL);
    if (off) {
        mfu__span r = {s.p + off, s.n - off};
        if (mfu__span_starts(r, "loss ") && mfu__span_find(r, ", time ") > 0 &&
            mfu__span_find(r, "ms") > 0)
            return MFU__DETECT_STEP;
    }
    if (mfu__span_starts(s, "tokens per iteration will be:"))
        return MFU__DETECT_HINT;
    if (mfu__span_starts(s, "step ") && mfu__span_find(s, ": train loss ") > 0 &&
        mfu__span_find(s, ", val loss ") > 0)
        return MFU__DETECT_HINT;
    return MFU__DETECT_NONE;
}

static mfu_status nanogpt_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    (void)state;
    mfu__span s = {ln->text, ln->len};
    mfu_run_meta *m = mfu__meta(c);
    if (mfu__span_starts(s, "tokens per iteration will be:")) {
        double v = mfu__num_value((mfu__span){s.p + 29, s.n - 29});
        if (!isnan(v) && v > 0)
            m->tokens_per_step = v;
        mfu__used(c);
        return MFU_OK;
    }
    int64_t iter;
    size_t off = iter_head(s, &iter);
    if (!off) {
        if (nanogpt_detect(ln) == MFU__DETECT_HINT) {
            mfu__used(c); /* eval line */
        } else if (mfu__span_starts(s, "iter ") && mfu__span_find(s, ": loss ") > 0) {
            /* an iter line whose number does not read (past int64): said, not ignored */
            mfu__skip(c, "nanoGPT iter line whose iteration number does not fit 64 bits");
        }
        return MFU_OK;
    }
    mfu_step st;
    mfu_step_init(&st);
    st.step = iter;
    mfu__span rest = {s.p + off, s.n - off}, piece, key, val;
    bool time_unread = false; /* "time" was printed but is no number (1e309ms) */
    while (mfu__split_next(&rest, ", ", &piece)) {
        if (!mfu__kv(piece, " ", &key, &val))
            continue;
        mfu__num n;
        if (!mfu__num_parse(val, &n)) {
            time_unread |= mfu__span_eq(key, "time");
            continue;
        }
        if (mfu__span_eq(key, "loss")) {
            st.loss = n.value;
            if (n.kind == MFU__NUM_NAN || n.kind == MFU__NUM_INF) {
                st.loss = NAN;
                st.flags |= MFU_STEP_LOSS_NAN;
            }
        } else if (mfu__span_eq(key, "time") && n.unit == MFU__UNIT_SECONDS) {
            st.step_time_s = n.value;
        } else if (mfu__span_eq(key, "mfu") && n.unit == MFU__UNIT_FRACTION) {
            st.mfu = n.value; /* a negative value is the "not yet" sentinel: mfu__emit */
            st.mfu_scope = MFU_SCOPE_DEVICE;
            if (isnan(m->reported_peak_flops_per_s)) {
                m->reported_peak_flops_per_s = 312e12;
                mfu__strlcpy(m->convention,
                             "nanoGPT: mfu = EMA(0.9) of per-GPU (6N + 12*L*H*Q*T) FLOP/token "
                             "x tokens / dt / 312 TFLOP/s (A100 bf16, whatever the GPU)",
                             sizeof m->convention);
            }
        }
    }
    if (isnan(st.step_time_s)) {
        if (time_unread)
            mfu__skip(c, "nanoGPT iter line whose time is not a number that fits a double");
        else
            mfu__skip(c, "nanoGPT iter line without 'time N.NNms'");
        return MFU_OK;
    }
    return mfu__emit(c, &st);
}

const mfu__format mfu__fmt_nanogpt = {
    .name = "nanogpt",
    .summary = "nanoGPT 'iter N: loss X, time Yms, mfu Z%' lines (mfu vs A100 312 TFLOP/s)",
    .detect = nanogpt_detect,
    .line = nanogpt_line,
};
