/*
 * fmt_llama2c.c - karpathy/llama2.c train.py, and trainers derived from it.
 *
 *   490 | loss 5.7543 | lr 4.900000e-05 | 8060.78ms | mfu 0.21%
 * printed every log_interval: the iteration, the last micro-batch's loss x gradient
 * accumulation steps, the learning rate, the wall time of the whole iteration in ms on rank 0,
 * and the MFU as nanoGPT computes it (an EMA of the per-GPU estimate against an A100's bf16
 * 312 TFLOP/s whatever the GPU; -100.00% for the first iterations). Derived trainers drop the
 * "| mfu" piece (nwyin/modded-llama2). The eval line "step N: train loss X, val loss Y" is
 * nanoGPT's; it is recognised here (a hint), not a step.
 */
#include <math.h>
#include <string.h>

#include "ingest/format.h"
#include "ingest/pyrepr.h"

/* "N | loss " at the start: the offset of "loss" and N. */
static size_t head(mfu__span s, int64_t *iter)
{
    size_t i = 0;
    while (i < s.n && i < 16 && s.p[i] >= '0' && s.p[i] <= '9')
        i++;
    if (i == 0 || !mfu__span_starts(mfu__span_from(s, i), " | loss "))
        return 0;
    if (iter && !mfu__int_parse((mfu__span){s.p, i}, iter))
        return 0;
    return i + 3;
}

static bool eval_line(mfu__span s)
{
    return mfu__span_starts(s, "step ") && mfu__span_find(s, ": train loss ") > 0 &&
           mfu__span_find(s, ", val loss ") > 0;
}

static int llama2c_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    size_t off = head(s, NULL);
    if (off) {
        mfu__span r = mfu__span_from(s, off);
        if (mfu__span_find(r, " | lr ") > 0 && mfu__span_find(r, "ms") > 0)
            return MFU__DETECT_STEP;
    }
    return eval_line(s) || mfu__span_starts(s, "Created a PretokDataset with rng seed ")
               ? MFU__DETECT_HINT
               : MFU__DETECT_NONE;
}

static mfu_status llama2c_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    (void)state;
    mfu__span s = {ln->text, ln->len};
    int64_t iter;
    size_t off = head(s, &iter);
    if (!off) {
        if (llama2c_detect(ln) == MFU__DETECT_HINT)
            mfu__used(c);
        return MFU_OK;
    }
    mfu_step st;
    mfu_step_init(&st);
    st.step = iter;
    mfu__span rest = mfu__span_from(s, off), piece, key, val;
    while (mfu__split_next(&rest, " | ", &piece)) {
        piece = mfu__span_trim(piece);
        mfu__num n;
        if (!mfu__kv(piece, " ", &key, &val)) { /* the time piece has no key: "8060.78ms" */
            if (mfu__num_parse(piece, &n) && n.unit == MFU__UNIT_SECONDS)
                st.step_time_s = n.value;
            continue;
        }
        if (!mfu__num_parse(val, &n))
            continue;
        if (mfu__span_eq(key, "loss")) {
            mfu__set_loss(&st, &n);
        } else if (mfu__span_eq(key, "lr")) {
            st.lr = n.value;
        } else if (mfu__span_eq(key, "mfu") && n.unit == MFU__UNIT_FRACTION) {
            st.mfu = n.value; /* negative: the "not yet" sentinel, see mfu__emit */
            st.mfu_scope = MFU_SCOPE_DEVICE;
            mfu_run_meta *m = mfu__meta(c);
            if (isnan(m->reported_peak_flops_per_s)) {
                m->reported_peak_flops_per_s = 312e12;
                mfu__strlcpy(m->convention,
                             "llama2.c: mfu = EMA(0.9) of per-GPU estimate_mfu vs 312 TFLOP/s "
                             "(A100 bf16, whatever the GPU), as nanoGPT",
                             sizeof m->convention);
            }
        }
    }
    if (isnan(st.step_time_s)) {
        mfu__skip(c, "llama2.c 'N | loss ...' line without its 'T.TTms' piece");
        return MFU_OK;
    }
    return mfu__emit(c, &st);
}

const mfu__format mfu__fmt_llama2c = {
    .name = "llama2c",
    .summary = "llama2.c train.py 'N | loss X | lr L | Tms | mfu M%' lines (mfu vs A100 312)",
    .detect = llama2c_detect,
    .line = llama2c_line,
};
