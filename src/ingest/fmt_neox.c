/*
 * fmt_neox.c - EleutherAI GPT-NeoX training logs (log-formats.md §11): the line that
 * megatron/logging.py training_log prints with print_rank_0 every log_interval iterations:
 *
 *    samples/sec: 51.234 | iteration       10/     320 | elapsed time per iteration (ms):
 *    9876.5 | learning rate: 1.234E-04 | approx flops per GPU: 150.3TFLOPS | MFU: 40.12% |
 *    HFU: 52.30% | lm_loss: 7.123456E+00 | loss scale: 65536.0 | number of skipped
 *    iterations:   0 | number of nan iterations:   0 |
 *
 *   samples/sec        global (train_batch_size / iteration time)
 *   elapsed time ...   ms per iteration, averaged over the interval; the row is its last one
 *   approx flops ...   per GPU, human-readable unit (TFLOPS, PFLOPS, ...), counts activation
 *                      recompute
 *   MFU / HFU          printed since Dec 2024 when peak_theoretical_tflops is set: MFU is kept
 *                      as a per-device fraction; HFU (hardware FLOPs, with recompute) is not
 *   <loss key>         lm_loss first, else the first other "..._loss"/"... loss" key
 *   skipped / nan      per interval; > 0 flags the row
 *
 * The DeepSpeed engine lines interleaved in NeoX logs ("[Rank 0] step=...", timers) are hints
 * here as in "deepspeed" (which comes first in the registry and so takes a log made only of
 * them), so that a NeoX log with many engine lines stays NeoX's; they are not stored.
 * "validation results at iteration N | lm_loss value: ..." lines are recognised, not stored.
 *
 * Header: NeoXArgs.print() between "---- arguments ----" and "---- end of arguments ----"
 * ("  seq_length ........ 2048" with an optional "....updated"/"default" tail) gives
 * seq_length, train_batch_size, train_micro_batch_size_per_gpu, gradient_accumulation_steps,
 * precision and peak_theoretical_tflops (the MFU denominator, TFLOP/s per GPU);
 * "NeoXArgs.configure_distributed_args() using world size: N ..." the number of ranks.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "ingest/format.h"
#include "ingest/pyrepr.h"

typedef struct neox_state {
    bool in_args; /* inside the argument dump */
} neox_state;

static bool step_line(mfu__span s)
{
    return mfu__span_starts(s, "samples/sec:") && mfu__span_find(s, "| iteration ") > 0;
}

/* DeepSpeed engine lines as fmt_deepspeed.c recognises them (hint only). */
static bool engine_line(mfu__span s)
{
    if (!mfu__span_starts(s, "[Rank "))
        return false;
    long close = mfu__span_find(s, "] ");
    if (close < 0)
        return false;
    mfu__span r = mfu__span_from(s, (size_t)close + 2);
    if (mfu__span_starts(r, "step=") && mfu__span_find(r, ", skipped=") > 0)
        return true;
    if (mfu__span_starts(r, "rank=")) {
        long sp = mfu__span_find(r, " ");
        if (sp < 0)
            return false;
        r.p += sp + 1;
        r.n -= (size_t)sp + 1;
    }
    return mfu__span_starts(r, "time (ms) |");
}

static int neox_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    if (step_line(s))
        return MFU__DETECT_STEP;
    if (engine_line(s) || mfu__span_starts(s, "validation results at iteration ") ||
        mfu__span_starts(s, "NeoXArgs.") || mfu__span_find(s, "---- arguments ----") >= 0 ||
        mfu__span_find(s, "---- end of arguments ----") >= 0)
        return MFU__DETECT_HINT;
    return MFU__DETECT_NONE;
}

static bool loss_key(mfu__span k)
{
    return k.n >= 5 &&
           (memcmp(k.p + k.n - 5, "_loss", 5) == 0 || memcmp(k.p + k.n - 5, " loss", 5) == 0);
}

static mfu_status neox_step(mfu__ictx *c, mfu__span text)
{
    mfu_step s;
    mfu_step_init(&s);
    mfu__span rest = text, piece, key, val;
    bool have_iter = false, lm_seen = false, other_seen = false, lm_bad = false, other_bad = false;
    double lm = NAN, other = NAN;
    int64_t skipped = 0, nan_iters = 0;
    while (mfu__split_next(&rest, "|", &piece)) {
        piece = mfu__span_trim(piece);
        if (mfu__span_starts(piece, "iteration ")) {
            mfu__span r = mfu__span_from(piece, MFU__LIT_LEN("iteration "));
            long slash = mfu__span_find(r, "/");
            have_iter = slash > 0 && mfu__int_parse((mfu__span){r.p, (size_t)slash}, &s.step);
            continue;
        }
        if (!mfu__kv(piece, ": ", &key, &val))
            continue;
        mfu__num n;
        if (!mfu__num_parse(val, &n))
            continue;
        double v = n.value;
        if (mfu__span_eq(key, "samples/sec")) {
            s.samples_per_s = v;
            s.samples_per_s_scope = MFU_SCOPE_GLOBAL;
        } else if (mfu__span_eq(key, "elapsed time per iteration (ms)")) {
            s.step_time_s = v / 1000.0;
        } else if (mfu__span_eq(key, "learning rate")) {
            s.lr = v;
        } else if (mfu__span_eq(key, "approx flops per GPU")) {
            if (n.unit == MFU__UNIT_FLOPS_PER_S && n.kind == MFU__NUM_FINITE) {
                s.flops_per_s = v;
                s.flops_per_s_scope = MFU_SCOPE_DEVICE;
            }
        } else if (mfu__span_eq(key, "MFU")) {
            s.mfu = n.unit == MFU__UNIT_FRACTION ? v : v / 100.0;
            s.mfu_scope = MFU_SCOPE_DEVICE;
        } else if (mfu__span_eq(key, "number of skipped iterations")) {
            skipped = mfu__int64_sat(v);
        } else if (mfu__span_eq(key, "number of nan iterations")) {
            nan_iters = mfu__int64_sat(v);
        } else if (loss_key(key)) {
            bool bad = n.kind == MFU__NUM_NAN || n.kind == MFU__NUM_INF;
            if (mfu__span_eq(key, "lm_loss")) {
                lm_seen = true;
                lm = bad ? NAN : v;
                lm_bad = bad;
            } else if (!other_seen) {
                other_seen = true;
                other = bad ? NAN : v;
                other_bad = bad;
            }
        }
    }
    if (!have_iter) {
        mfu__skip(c, "GPT-NeoX line without '| iteration N/M |'");
        return MFU_OK;
    }
    s.loss = lm_seen ? lm : other;
    if (lm_seen ? lm_bad : other_bad)
        s.flags |= MFU_STEP_LOSS_NAN;
    if (skipped > 0)
        s.flags |= MFU_STEP_SKIPPED;
    if (nan_iters > 0)
        s.flags |= MFU_STEP_LOSS_NAN;
    mfu_run_meta *m = mfu__meta(c);
    if (!m->convention[0])
        mfu__strlcpy(m->convention,
                     "GPT-NeoX: approx flops per GPU counts activation recompute; samples/sec "
                     "global; MFU vs peak_theoretical_tflops",
                     sizeof m->convention);
    return mfu__emit(c, &s);
}

/* "  name ....... value[...updated]" inside the argument dump. */
static void arg_line(mfu_run_meta *m, mfu__span s)
{
    long dots = mfu__span_find(s, " ..");
    if (dots <= 0)
        return;
    mfu__span name = {s.p, (size_t)dots};
    size_t i = (size_t)dots + 1;
    while (i < s.n && (s.p[i] == '.' || s.p[i] == ' '))
        i++;
    mfu__span v = {s.p + i, s.n - i};
    long tail = mfu__span_find(v, "...");
    if (tail > 0)
        v.n = (size_t)tail;
    v = mfu__span_trim(v);
    int64_t x;
    bool isint = mfu__int_parse(v, &x) && x > 0;
    if (mfu__span_eq(name, "seq_length") && isint)
        m->seq_len = x;
    else if (mfu__span_eq(name, "train_batch_size") && isint)
        m->global_batch = x;
    else if (mfu__span_eq(name, "train_micro_batch_size_per_gpu") && isint)
        m->micro_batch = x;
    else if (mfu__span_eq(name, "gradient_accumulation_steps") && isint)
        m->grad_accum = x;
    else if (mfu__span_eq(name, "precision") && v.n && !mfu__span_eq(v, "None"))
        mfu__span_copy(mfu__span_eq(v, "bfloat16") ? mfu__span_of("bf16") : v, m->dtype,
                       sizeof m->dtype);
    else if (mfu__span_eq(name, "peak_theoretical_tflops")) {
        double t = mfu__num_value(v);
        if (t > 0)
            m->reported_peak_flops_per_s = t * 1e12;
    }
}

static mfu_status neox_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    neox_state *st = state;
    mfu__span s = {ln->text, ln->len};
    if (step_line(s)) {
        st->in_args = false;
        return neox_step(c, s);
    }
    if (mfu__span_find(s, "---- end of arguments ----") >= 0) {
        st->in_args = false;
        mfu__used(c);
        return MFU_OK;
    }
    if (mfu__span_find(s, "---- arguments ----") >= 0) {
        st->in_args = true;
        mfu__used(c);
        return MFU_OK;
    }
    if (st->in_args) {
        arg_line(mfu__meta(c), s);
        mfu__used(c);
        return MFU_OK;
    }
    static const char ws_lit[] = ".configure_distributed_args() using world size: ";
    long ws = mfu__span_find(s, ws_lit);
    if (ws >= 0) {
        mfu__span r = mfu__span_from(s, (size_t)ws + MFU__LIT_LEN(ws_lit));
        size_t k = 0;
        while (k < r.n && isdigit((unsigned char)r.p[k]))
            k++;
        int64_t x;
        if (mfu__int_parse((mfu__span){r.p, k}, &x) && x > 0)
            mfu__meta(c)->world_size = x;
        mfu__used(c);
        return MFU_OK;
    }
    if (engine_line(s) || mfu__span_starts(s, "validation results at iteration "))
        mfu__used(c);
    return MFU_OK;
}

const mfu__format mfu__fmt_neox = {
    .name = "neox",
    .summary = "GPT-NeoX 'samples/sec: X | iteration N/M | ...' training_log lines",
    .detect = neox_detect,
    .state_size = sizeof(neox_state),
    .line = neox_line,
};
