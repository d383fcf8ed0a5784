/*
 * fmt_maxtext.c - Google MaxText training logs (log-formats.md §10): one line per step from
 * MetricLogger._log_training_metrics (earlier MaxText/train.py), parts joined with ", ",
 * usually behind an absl prefix "I0811 21:54:55.531340  514 metric_logger.py:226] " (removed
 * by the cleaner):
 *
 *   completed step: 9, seconds: 5.667, TFLOP/s/device: 134.924, Tokens/s/device: 8672.758,
 *   total_weights: 196608, loss: 10.374[, lm_loss: .., perplexity: .., moe_lb_loss: ..]
 *   completed step: 15107, seconds: 2.167, TFLOP/s: 36.722, loss: 2.191          (2023 layout)
 *
 *   seconds          wall time of the step
 *   TFLOP/s/device   analytic model TFLOPs per device per step / seconds (per device); the
 *                    2023 "TFLOP/s" is the same per-device figure (maintainer in MaxText
 *                    issue #8)
 *   Tokens/s/device  per_device_batch x max_target_length / seconds (padding included)
 *   total_weights    non-padding target tokens of the global batch: kept as the row's tokens
 *   loss             loss (lm_loss when "loss" is absent)
 * A "[Rampup Batch Size Phase] " prefix (batch ramp-up) is read through; "completed profiler
 * activation/deactivation step: N" lines are recognised, not rows.
 *
 * Header: "Config param per_device_batch_size: 24.0" / "max_target_length" / "model_name" /
 * "gradient_accumulation_steps" / "dtype", "Num_devices: 4, shape (...)", "number parameters:
 * 15.933 billion"; the maxtest tool's "Unified tuning params for model are: {...}" dict gives
 * per_device_batch_size and max_target_length too.
 */
#include <math.h>
#include <string.h>

#include "ingest/format.h"
#include "ingest/pyrepr.h"

/* The step text without the ramp-up prefix. */
static mfu__span body(mfu__span s)
{
    if (mfu__span_starts(s, "[Rampup Batch Size Phase]"))
        s = mfu__span_trim(mfu__span_from(s, MFU__LIT_LEN("[Rampup Batch Size Phase]")));
    return s;
}

static bool step_line(mfu__span s)
{
    s = body(s);
    return mfu__span_starts(s, "completed step: ") && mfu__span_find(s, ", seconds: ") > 0;
}

static int maxtext_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    if (step_line(s))
        return MFU__DETECT_STEP;
    if (mfu__span_starts(s, "Config param ") || mfu__span_starts(s, "Num_devices: ") ||
        mfu__span_starts(s, "number parameters: ") || mfu__span_starts(s, "completed profiler ") ||
        mfu__span_starts(s, "Unified tuning params for model are: "))
        return MFU__DETECT_HINT;
    return MFU__DETECT_NONE;
}

static mfu_status maxtext_step(mfu__ictx *c, mfu__span text)
{
    mfu_step s;
    mfu_step_init(&s);
    mfu__span rest = body(text), piece, key, val;
    bool have_step = false, have_loss = false;
    double lm_loss = NAN;
    bool lm_bad = false;
    while (mfu__split_next(&rest, ", ", &piece)) {
        if (!mfu__kv(piece, ": ", &key, &val))
            continue;
        if (mfu__span_eq(key, "completed step")) {
            have_step = mfu__int_parse(val, &s.step);
            continue;
        }
        mfu__num n;
        if (!mfu__num_parse(val, &n))
            continue;
        double v = n.value;
        bool bad = n.kind == MFU__NUM_NAN || n.kind == MFU__NUM_INF;
        if (mfu__span_eq(key, "seconds")) {
            s.step_time_s = v;
        } else if (mfu__span_eq(key, "TFLOP/s/device") || mfu__span_eq(key, "TFLOP/s")) {
            s.flops_per_s = v * 1e12;
            s.flops_per_s_scope = MFU_SCOPE_DEVICE;
        } else if (mfu__span_eq(key, "Tokens/s/device")) {
            s.tokens_per_s = v;
            s.tokens_per_s_scope = MFU_SCOPE_DEVICE;
        } else if (mfu__span_eq(key, "total_weights")) {
            s.tokens = v;
        } else if (mfu__span_eq(key, "loss")) {
            have_loss = true;
            s.loss = bad ? NAN : v;
            if (bad)
                s.flags |= MFU_STEP_LOSS_NAN;
        } else if (mfu__span_eq(key, "lm_loss")) {
            lm_loss = bad ? NAN : v;
            lm_bad = bad;
        }
    }
    if (!have_step) {
        mfu__skip(c, "MaxText line without 'completed step: N'");
        return MFU_OK;
    }
    if (!have_loss) {
        s.loss = lm_loss;
        if (lm_bad)
            s.flags |= MFU_STEP_LOSS_NAN;
    }
    mfu_run_meta *m = mfu__meta(c);
    if (!m->convention[0])
        mfu__strlcpy(m->convention,
                     "MaxText: TFLOP/s/device = analytic model TFLOPs per device / step s; "
                     "Tokens/s/device counts padding; tokens = total_weights",
                     sizeof m->convention);
    return mfu__emit(c, &s);
}

static void set_dtype(mfu_run_meta *m, mfu__span v)
{
    const char *d = mfu__span_eq(v, "bfloat16")  ? "bf16"
                    : mfu__span_eq(v, "float16") ? "fp16"
                    : mfu__span_eq(v, "float32") ? "fp32"
                                                 : NULL;
    if (d)
        mfu__strlcpy(m->dtype, d, sizeof m->dtype);
    else if (v.n)
        mfu__span_copy(v, m->dtype, sizeof m->dtype);
}

/* One configuration key (from "Config param k: v" or the tuning dict, whose strings are
 * quoted). */
static void config_key(mfu_run_meta *m, mfu__span k, mfu__span v)
{
    v = mfu__span_trim(v);
    if (v.n >= 2 && (v.p[0] == '\'' || v.p[0] == '"') && v.p[v.n - 1] == v.p[0])
        v = (mfu__span){v.p + 1, v.n - 2};
    int64_t x;
    bool isint = mfu__int_parse(v, &x) && x > 0;
    if (mfu__span_eq(k, "per_device_batch_size") && isint)
        m->micro_batch = x; /* "24.0" is an integer; fractional batches are not kept */
    else if (mfu__span_eq(k, "max_target_length") && isint)
        m->seq_len = x;
    else if (mfu__span_eq(k, "gradient_accumulation_steps") && isint)
        m->grad_accum = x;
    else if (mfu__span_eq(k, "model_name") && v.n)
        mfu__span_copy(v, m->model, sizeof m->model);
    else if (mfu__span_eq(k, "dtype"))
        set_dtype(m, v);
}

static mfu_status maxtext_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    (void)state;
    mfu__span s = {ln->text, ln->len};
    mfu_run_meta *m = mfu__meta(c);
    mfu__span k, v;
    if (step_line(s))
        return maxtext_step(c, s);
    if (mfu__span_starts(s, "Config param ")) {
        if (mfu__kv(mfu__span_from(s, MFU__LIT_LEN("Config param ")), ": ", &k, &v) ||
            mfu__kv(mfu__span_from(s, MFU__LIT_LEN("Config param ")), ":", &k, &v))
            config_key(m, k, v);
        mfu__used(c);
    } else if (mfu__span_starts(s, "Num_devices: ")) {
        mfu__span r = mfu__span_from(s, MFU__LIT_LEN("Num_devices: "));
        long comma = mfu__span_find(r, ",");
        int64_t x;
        if (comma > 0 && mfu__int_parse((mfu__span){r.p, (size_t)comma}, &x) && x > 0)
            m->world_size = x;
        mfu__used(c);
    } else if (mfu__span_starts(s, "number parameters: ")) {
        mfu__span r = mfu__span_from(s, MFU__LIT_LEN("number parameters: "));
        long b = mfu__span_find(r, " billion");
        double x = b > 0 ? mfu__num_value((mfu__span){r.p, (size_t)b}) : NAN;
        if (x > 0)
            m->model_params = x * 1e9;
        mfu__used(c);
    } else if (mfu__span_starts(s, "completed profiler ")) {
        mfu__used(c);
    } else if (mfu__span_starts(s, "Unified tuning params for model are: ")) {
        mfu__span body_, key, val;
        if (mfu__pydict_open(
                mfu__span_from(s, MFU__LIT_LEN("Unified tuning params for model are: ")), &body_))
            while (mfu__pydict_next(&body_, &key, &val))
                config_key(m, key, val);
        mfu__used(c);
    }
    return MFU_OK;
}

const mfu__format mfu__fmt_maxtext = {
    .name = "maxtext",
    .summary = "MaxText 'completed step: N, seconds: S, TFLOP/s/device: X, ...' lines",
    .detect = maxtext_detect,
    .line = maxtext_line,
};
