/*
 * fmt_colossalai.c - hpcaitech/ColossalAI example trainers (examples/language/llama2
 * benchmark.py, 2023), printed through ColossalAI's rich logger:
 *
 *   [08/30/23 07:07:34] INFO     colossalai - colossalai - INFO:
 *                                /workspace/.../examples/language/llama2/benchmark.py:218 main
 *                       INFO     colossalai - colossalai - INFO: Step time: 22.885
 *   Step:  20%|██        | 1/5 [00:22<01:31, 22.90s/it]
 *
 * The rich handler wraps a record over several lines (time and level, the file, then the
 * message); the cleaner removes the date and the padded level, this format the
 * "colossalai - colossalai - INFO: " before the message. Each "Step time: S" (seconds, rank 0)
 * is the next step: rows are numbered 1, 2, ... in the order of these lines (the tqdm bar
 * "Step: n/N" shows the same count after each of them). A row's time is that of its record's
 * first line; a record glued to a bar redraw (no newline between them) has none.
 */
#include <math.h>
#include <string.h>

#include "ingest/format.h"
#include "ingest/pyrepr.h"

typedef struct colossal_state {
    int64_t steps;      /* "Step time" lines read */
    double record_time; /* the time of the record being read (its first line), NaN */
} colossal_state;

/* The message after "colossalai - colossalai - LEVEL: ", or an empty span. */
static mfu__span message(mfu__span s)
{
    if (!mfu__span_starts(s, "colossalai - "))
        return (mfu__span){s.p, 0};
    long colon = mfu__span_find(s, ": ");
    if (colon < 0)
        return mfu__span_from(s, s.n); /* the record's first line, the message comes later */
    return mfu__span_trim(mfu__span_from(s, (size_t)colon + 2));
}

static int colossal_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    if (!mfu__span_starts(s, "colossalai - "))
        return MFU__DETECT_NONE;
    return mfu__span_starts(message(s), "Step time: ") ? MFU__DETECT_STEP : MFU__DETECT_HINT;
}

static mfu_status colossal_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    colossal_state *st = state;
    mfu__span s = {ln->text, ln->len};
    if (!mfu__span_starts(s, "colossalai - ")) {
        if (mfu__span_find(s, "colossalai - ") > 0)
            st->record_time = NAN; /* a record glued to a bar: its time is not read */
        return MFU_OK;
    }
    if (!isnan(ln->prefix_time_s))
        st->record_time = ln->prefix_time_s;
    mfu__span msg = message(s);
    if (!mfu__span_starts(msg, "Step time: ")) {
        mfu__used(c);
        return MFU_OK;
    }
    mfu__num n;
    if (!mfu__num_parse(mfu__span_from(msg, MFU__LIT_LEN("Step time: ")), &n) ||
        n.kind != MFU__NUM_FINITE || n.value <= 0) {
        mfu__skip(c, "ColossalAI 'Step time:' without a number of seconds");
        return MFU_OK;
    }
    mfu_step r;
    mfu_step_init(&r);
    r.step = ++st->steps;
    r.time_s = st->record_time;
    r.step_time_s = n.unit == MFU__UNIT_SECONDS ? n.value : n.printed;
    mfu__convention(c, "ColossalAI example: 'Step time' in seconds on rank 0; rows numbered in "
                       "the order of those lines");
    return mfu__emit(c, &r);
}

static mfu_status colossal_init(void *state, const mfu_ingest_opts *opts, mfu_error *err)
{
    (void)opts;
    (void)err;
    ((colossal_state *)state)->record_time = NAN;
    return MFU_OK;
}

const mfu__format mfu__fmt_colossalai = {
    .name = "colossalai",
    .init = colossal_init,
    .summary = "ColossalAI example trainers: rich-logged 'Step time: S' records",
    .detect = colossal_detect,
    .state_size = sizeof(colossal_state),
    .line = colossal_line,
};
