/*
 * fmt_nanotron.c - huggingface/nanotron's per-iteration log line, after its logging prefix
 * "01/17/2024 13:47:27 [INFO|DP=0|PP=0|TP=0|host]: " (removed by the cleaner):
 *
 *   iteration: 991 / 1000 | consumed_tokens: 634K | elapsed_time_per_iteration_ms: 45 |
 *   tokens_per_sec: 14.2K | tokens_per_sec_per_gpu: 1.78K | global_batch_size: 20 |
 *   lm_loss: 10.6 | lr: 1e-05 | model_tflops_per_gpu: 0.00869 | hardware_tflops_per_gpu:
 *   0.00869 | grad_norm: 0.515 | cuda_memory_allocated: 75.2M | cuda_max_memory_reserved: 547M
 *
 * Numbers are in nanotron's human format: 3 significant digits and K / M / G / T for powers of
 * 1000 (memory in bytes so too). Kept: the iteration, its time (ms), tokens/s of the job
 * (tokens_per_sec; the per-GPU figure when the global one is absent), global batch size
 * (samples), lm_loss, lr, model TFLOP/s per GPU (hardware_tflops_per_gpu counts recomputation
 * and is not the model figure), grad_norm, cuda_max_memory_reserved. The ratio of the two
 * tokens/s figures is the world size when it is within 1% of a whole number.
 */
#include <math.h>
#include <string.h>

#include "ingest/format.h"
#include "ingest/pyrepr.h"

static bool is_step(mfu__span s)
{
    return mfu__span_starts(s, "iteration: ") &&
           (mfu__span_find(s, "| elapsed_time_per_iteration_ms: ") > 0 ||
            mfu__span_find(s, "| tokens_per_sec: ") > 0);
}

static int nanotron_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    return is_step(s) ? MFU__DETECT_STEP : MFU__DETECT_NONE;
}

/* A human-format number: "45", "11.5K", "1.78K", "85.8G", "547M". */
static bool human(mfu__span v, double *out)
{
    v = mfu__span_trim(v);
    int p10 = 0;
    if (v.n > 1) {
        switch (v.p[v.n - 1]) {
        case 'K': p10 = 3; break;
        case 'M': p10 = 6; break;
        case 'G': p10 = 9; break;
        case 'T': p10 = 12; break;
        default: break;
        }
    }
    if (p10)
        v.n--;
    mfu__num n;
    if (!mfu__num_parse_shift(v, p10, &n) || n.unit != MFU__UNIT_NONE)
        return false;
    *out = n.value;
    return n.kind == MFU__NUM_FINITE || n.kind == MFU__NUM_NAN || n.kind == MFU__NUM_INF;
}

static mfu_status nanotron_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    (void)state;
    mfu__span s = {ln->text, ln->len};
    if (!is_step(s))
        return MFU_OK;
    mfu_step r;
    mfu_step_init(&r);
    bool have_step = false;
    double tps = NAN, tps_gpu = NAN;
    mfu__span rest = s, piece, k, v;
    while (mfu__split_next(&rest, " | ", &piece)) {
        if (!mfu__kv(piece, ": ", &k, &v))
            continue;
        double x;
        if (mfu__span_eq(k, "iteration")) {
            long slash = mfu__span_find(v, " / ");
            mfu__span it = slash > 0 ? (mfu__span){v.p, (size_t)slash} : v;
            have_step = mfu__int_parse(it, &r.step) && r.step >= 0;
            continue;
        }
        if (!human(v, &x))
            continue;
        if (mfu__span_eq(k, "elapsed_time_per_iteration_ms"))
            r.step_time_s = mfu__scale10(x, -3);
        else if (mfu__span_eq(k, "tokens_per_sec"))
            tps = x;
        else if (mfu__span_eq(k, "tokens_per_sec_per_gpu"))
            tps_gpu = x;
        else if (mfu__span_eq(k, "global_batch_size"))
            r.samples = x;
        else if (mfu__span_eq(k, "lm_loss")) {
            mfu__num n = {x, x, MFU__UNIT_NONE, isfinite(x) ? MFU__NUM_FINITE : MFU__NUM_NAN};
            mfu__set_loss(&r, &n);
        } else if (mfu__span_eq(k, "lr"))
            r.lr = x;
        else if (mfu__span_eq(k, "model_tflops_per_gpu")) {
            r.flops_per_s = mfu__scale10(x, 12);
            r.flops_per_s_scope = MFU_SCOPE_DEVICE;
        } else if (mfu__span_eq(k, "grad_norm"))
            r.grad_norm = x;
        else if (mfu__span_eq(k, "cuda_max_memory_reserved"))
            r.memory_bytes = x;
    }
    if (!have_step) {
        mfu__skip(c, "nanotron 'iteration: N / M' line without a readable iteration");
        return MFU_OK;
    }
    if (!isnan(tps)) {
        r.tokens_per_s = tps;
        r.tokens_per_s_scope = MFU_SCOPE_GLOBAL;
    } else if (!isnan(tps_gpu)) {
        r.tokens_per_s = tps_gpu;
        r.tokens_per_s_scope = MFU_SCOPE_DEVICE;
    }
    mfu_run_meta *m = mfu__meta(c);
    if (tps > 0 && tps_gpu > 0 && m->world_size == 0) {
        double ratio = tps / tps_gpu, w = floor(ratio + 0.5);
        if (w >= 1 && fabs(ratio - w) <= 0.01 * w)
            m->world_size = (int64_t)w;
    }
    mfu__convention(c, "nanotron: tokens_per_sec global, model_tflops_per_gpu per GPU; figures "
                       "rounded to 3 significant digits");
    return mfu__emit(c, &r);
}

const mfu__format mfu__fmt_nanotron = {
    .name = "nanotron",
    .summary = "nanotron 'iteration: N / M | ... | tokens_per_sec: .. | model_tflops_per_gpu: ..'",
    .detect = nanotron_detect,
    .line = nanotron_line,
};
