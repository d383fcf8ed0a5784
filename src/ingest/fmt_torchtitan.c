/*
 * fmt_torchtitan.c - pytorch/torchtitan MetricsProcessor.log (log-formats.md §6).
 *
 *   step: 200  loss:  6.1384  grad_norm: 1.2  memory: 49.66GiB(52.28%)  tps: 5,856
 *   tflops: 339.16  mfu: 34.29%
 * (after the cleaner removed "[rank0]:", "[titan] <time> - root - INFO - " and the colours).
 * Pairs are "key:" followed by a value; values may be padded ("loss:  6.1384").
 *   tps     tokens/s per device (tokens on this rank / elapsed / non-data-parallel degree)
 *   tflops  per device, flops_per_token (6*N_non-emb + 12*L*H*Q*T) x tps / 1e12
 *   mfu     per device, % of the bf16 peak found by device name; N/A under FP8/MX
 *   memory  peak reserved GiB on this device (and % of its capacity)
 * History: 2024-03 "wps" (= tps), 2025-02 tflops, 2025-06 grad_norm. No step time is printed:
 * time_s comes from the logging prefix. "validate step: N ..." lines are recognised, not steps.
 * Every rank may print each step (LOG_RANK=0,1,...): the run merges repeats.
 */
#include <math.h>
#include <string.h>

#include "ingest/format.h"

static int torchtitan_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    if (mfu__span_starts(s, "step:") &&
        (mfu__span_find(s, "  tps: ") > 0 || mfu__span_find(s, "  wps: ") > 0) &&
        mfu__span_find(s, "  loss: ") > 0)
        return MFU__DETECT_STEP;
    if (mfu__span_starts(s, "validate step:"))
        return MFU__DETECT_HINT;
    return MFU__DETECT_NONE;
}

static mfu_status torchtitan_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    (void)state;
    mfu__span s = {ln->text, ln->len};
    if (mfu__span_starts(s, "validate step:")) {
        mfu__used(c);
        return MFU_OK;
    }
    if (torchtitan_detect(ln) != MFU__DETECT_STEP)
        return MFU_OK;
    mfu_step st;
    mfu_step_init(&st);
    bool have_step = false;
    /* walk "key: value" pairs: a key is a word ending in ':' */
    const char *p = s.p, *end = s.p + s.n;
    while (p < end) {
        while (p < end && *p == ' ')
            p++;
        const char *k = p;
        while (p < end && *p != ' ' && *p != ':')
            p++;
        if (p >= end || *p != ':') {
            while (p < end && *p != ' ')
                p++;
            continue;
        }
        mfu__span key = {k, (size_t)(p - k)};
        p++;
        mfu__num n;
        const char *vstart = p;
        if (!mfu__num_scan(&p, end, &n)) {
            p = vstart;
            continue;
        }
        while (p < end && *p != ' ') /* "(52.28%)" after the memory value */
            p++;
        if (mfu__span_eq(key, "step") && n.kind == MFU__NUM_FINITE) {
            st.step = mfu__int64_sat(n.value);
            have_step = true;
        } else if (mfu__span_eq(key, "loss")) {
            st.loss = n.value;
            if (n.kind == MFU__NUM_NAN || n.kind == MFU__NUM_INF) {
                st.loss = NAN;
                st.flags |= MFU_STEP_LOSS_NAN;
            }
        } else if (mfu__span_eq(key, "grad_norm")) {
            st.grad_norm = n.value;
        } else if (mfu__span_eq(key, "memory") && n.unit == MFU__UNIT_BYTES) {
            st.memory_bytes = n.value;
        } else if (mfu__span_eq(key, "tps") || mfu__span_eq(key, "wps")) {
            st.tokens_per_s = n.value;
            st.tokens_per_s_scope = MFU_SCOPE_DEVICE;
        } else if (mfu__span_eq(key, "tflops")) {
            st.flops_per_s = mfu__scale10(n.value, 12);
            st.flops_per_s_scope = MFU_SCOPE_DEVICE;
        } else if (mfu__span_eq(key, "mfu")) {
            st.mfu_scope = MFU_SCOPE_DEVICE;
            if (n.kind == MFU__NUM_FINITE && n.unit == MFU__UNIT_FRACTION)
                st.mfu = n.value;
            else
                st.flags |= MFU_STEP_MFU_SENTINEL; /* N/A under FP8 / MX */
        }
    }
    if (!have_step) {
        mfu__skip(c, "torchtitan line without an integer after 'step:'");
        return MFU_OK;
    }
    mfu_run_meta *m = mfu__meta(c);
    if (m->convention[0] == '\0')
        mfu__strlcpy(m->convention,
                     "torchtitan: tps per device; tflops = (6*N_non-emb + 12*L*H*Q*T) x tps; "
                     "mfu vs bf16 peak by device name",
                     sizeof m->convention);
    return mfu__emit(c, &st);
}

const mfu__format mfu__fmt_torchtitan = {
    .name = "torchtitan",
    .summary = "torchtitan 'step: N  loss: X  memory: ..GiB  tps: T  tflops: F  mfu: M%' lines",
    .detect = torchtitan_detect,
    .line = torchtitan_line,
};
