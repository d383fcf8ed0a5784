/*
 * fmt_modded_nanogpt.c - KellerJordan/modded-nanogpt speedrun logs and their derivatives
 * (openai/parameter-golf).
 *
 *   step:125/1385 train_time:14167ms step_avg:123.19ms
 *   step:200/20000 train_loss:2.8041 train_time:8677ms step_avg:43.38ms
 *   step:125/1385 val_loss:4.3930 train_time:14290ms step_avg:124.26ms
 * train_time is the cumulative training time in ms (validation excluded; the timer restarts
 * after the warm-up steps of some records, so it can go down once), step_avg = train_time /
 * (timed steps - 1), a running mean, "nan" at first. Each row's step time is the growth of
 * train_time since the previous training line divided by the steps between them (the log
 * interval); after a restart of the timer it is the train_time printed (the time since the
 * restart). The first training line is measured from the step-0 validation line
 * (train_time:0ms). step_avg is not kept (a mean since the start). Validation lines and
 * "warmup_step:N/M" lines are recognised, not steps.
 *
 * Header lines (parameter-golf): "train_batch_tokens:524288 train_seq_len:1024 ..." give the
 * tokens per step and the sequence length, "world_size:8 grad_accum_steps:1" the world size
 * and accumulation, "model_params:17059912" the parameter count.
 */
#include <math.h>
#include <string.h>

#include "ingest/format.h"
#include "ingest/pyrepr.h"

typedef struct modded_state {
    bool have_prev; /* a previous training line (or the step-0 validation line) */
    int64_t prev_step;
    double prev_ms; /* its train_time, ms */
} modded_state;

/* "step:N/M " at the start: the offset after it, and N. */
static size_t step_head(mfu__span s, int64_t *step)
{
    if (!mfu__span_starts(s, "step:"))
        return 0;
    mfu__span r = mfu__span_from(s, 5);
    long slash = mfu__span_find(r, "/");
    long sp = mfu__span_find(r, " ");
    int64_t v;
    if (slash <= 0 || sp < slash || !mfu__int_parse((mfu__span){r.p, (size_t)slash}, &v))
        return 0;
    if (step)
        *step = v;
    return 5 + (size_t)sp + 1;
}

static int modded_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    size_t off = step_head(s, NULL);
    if (off) {
        mfu__span r = mfu__span_from(s, off);
        if (mfu__span_find(r, "train_time:") >= 0 && mfu__span_find(r, "step_avg:") > 0)
            return MFU__DETECT_STEP;
    }
    if (mfu__span_starts(s, "warmup_step:") || mfu__span_starts(s, "train_batch_tokens:") ||
        mfu__span_starts(s, "model_params:"))
        return MFU__DETECT_HINT;
    return MFU__DETECT_NONE;
}

/* "key:value" tokens of a header line into the metadata. */
static void header(mfu__ictx *c, mfu__span s)
{
    mfu_run_meta *m = mfu__meta(c);
    mfu__span rest = s, piece, k, v;
    while (mfu__split_next(&rest, " ", &piece)) {
        int64_t x;
        if (!mfu__kv(piece, ":", &k, &v) || !mfu__int_parse(v, &x) || x <= 0)
            continue;
        if (mfu__span_eq(k, "train_batch_tokens"))
            m->tokens_per_step = (double)x;
        else if (mfu__span_eq(k, "train_seq_len"))
            m->seq_len = x;
        else if (mfu__span_eq(k, "world_size"))
            m->world_size = x;
        else if (mfu__span_eq(k, "grad_accum_steps"))
            m->grad_accum = x;
        else if (mfu__span_eq(k, "model_params"))
            m->model_params = (double)x;
    }
}

static mfu_status modded_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    modded_state *st = state;
    mfu__span s = {ln->text, ln->len};
    int64_t step;
    size_t off = step_head(s, &step);
    if (!off) {
        if (mfu__span_starts(s, "train_batch_tokens:") || mfu__span_starts(s, "world_size:") ||
            mfu__span_starts(s, "model_params:")) {
            header(c, s);
            mfu__used(c);
        } else if (mfu__span_starts(s, "warmup_step:")) {
            mfu__used(c);
        }
        return MFU_OK;
    }
    mfu_step r;
    mfu_step_init(&r);
    r.step = step;
    double ms = NAN;
    bool val = false;
    mfu__span rest = mfu__span_from(s, off), piece, k, v;
    while (mfu__split_next(&rest, " ", &piece)) {
        if (!mfu__kv(piece, ":", &k, &v))
            continue;
        mfu__num n;
        if (mfu__span_eq(k, "train_time")) {
            if (mfu__num_parse(v, &n) && n.kind == MFU__NUM_FINITE && n.unit == MFU__UNIT_SECONDS)
                ms = n.printed; /* as printed, in ms */
        } else if (mfu__span_eq(k, "train_loss") && mfu__num_parse(v, &n)) {
            mfu__set_loss(&r, &n);
        } else if (mfu__span_eq(k, "val_loss")) {
            val = true;
        }
    }
    if (isnan(ms)) {
        mfu__skip(c, "modded-nanogpt 'step:N/M' line without 'train_time:Tms'");
        return MFU_OK;
    }
    if (val) { /* a validation line: the base of the first training line at step 0 */
        if (!st->have_prev && step == 0) {
            st->have_prev = true;
            st->prev_step = 0;
            st->prev_ms = ms;
        }
        mfu__used(c);
        return MFU_OK;
    }
    if (st->have_prev && step > st->prev_step) {
        double dms = ms >= st->prev_ms ? ms - st->prev_ms : ms; /* down: the timer restarted */
        r.step_time_s = mfu__scale10(dms / (double)(step - st->prev_step), -3);
    }
    st->have_prev = true;
    st->prev_step = step;
    st->prev_ms = ms;
    mfu__convention(c, "modded-nanogpt: step time = growth of train_time per step (validation "
                       "excluded); step_avg (a running mean) not kept");
    return mfu__emit(c, &r);
}

const mfu__format mfu__fmt_modded_nanogpt = {
    .name = "modded_nanogpt",
    .summary = "modded-nanogpt 'step:N/M [train_loss:X] train_time:Tms step_avg:Ams' lines",
    .detect = modded_detect,
    .state_size = sizeof(modded_state),
    .line = modded_line,
};
