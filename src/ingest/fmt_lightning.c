/*
 * fmt_lightning.c - PyTorch Lightning / Fabric runs (log-formats.md §9): the CSVLogger's
 * metrics.csv with ThroughputMonitor columns, and LitGPT's console line.
 *
 * metrics.csv: a header row, then one row per logging call (cells of metrics not logged in
 * that call are empty; rows with the same step merge). ThroughputMonitor names are
 * "{stage}/..." (Trainer callback) or bare (Fabric's Throughput): only the train stage and
 * bare names are read, "validate/", "test/", "predict/" are not.
 *   step                               the row's step
 *   [train/]device/mfu                 fraction 0-1 vs the device's peak, per device
 *   [train/]device/flops_per_sec       FLOP/s (not TFLOP/s), per device; flops_per_sec global
 *                                      (used when the per-device column is absent)
 *   [train/]items_per_sec              items/s, global; device/items_per_sec per device (used
 *                                      when the global one is absent). Items are what the
 *                                      monitor's length_fn counts: tokens in LLM training.
 *   [train/]samples_per_sec            likewise, as samples/s
 *   train_loss, train/loss, loss, train_loss_step; lr-<Optimizer>, lr, learning_rate
 * Values are a rolling window (window_size updates); cells stay empty until it is full.
 * train/time (seconds since the start) is not a timestamp and is not kept.
 *
 * LitGPT (Fabric) console line, pretrain/finetune scripts:
 *   Epoch 34 | iter 3050700 step 610140 | loss train: 2.846, val: 2.861 | iter time: 112.20
 *   ms (step) remaining time: 0:01:54
 * The row is the optimizer step S with the training loss. "iter time" is the time of the last
 * micro-iteration (not of the step) and is not kept.
 *
 * Named limit: LIGHTNING_MAX_COLS columns of a header are read; later ones are ignored.
 */
#include <math.h>
#include <string.h>

#include "ingest/format.h"
#include "ingest/pyrepr.h"

#define LIGHTNING_MAX_COLS 512

enum col_role {
    COL_NONE = 0,
    COL_STEP,
    COL_LOSS,
    COL_LR,
    COL_MFU_D,
    COL_FLOPS_D,
    COL_FLOPS_G,
    COL_ITEMS_D,
    COL_ITEMS_G,
    COL_SAMPLES_D,
    COL_SAMPLES_G
};

typedef struct lightning_state {
    bool have_header;
    size_t ncols;
    unsigned char role[LIGHTNING_MAX_COLS];
} lightning_state;

static const struct {
    const char *suffix;
    enum col_role role;
} monitor_cols[] = {
    {"device/mfu", COL_MFU_D},          {"device/flops_per_sec", COL_FLOPS_D},
    {"flops_per_sec", COL_FLOPS_G},     {"device/items_per_sec", COL_ITEMS_D},
    {"items_per_sec", COL_ITEMS_G},     {"device/samples_per_sec", COL_SAMPLES_D},
    {"samples_per_sec", COL_SAMPLES_G},
};

static enum col_role role_of(mfu__span name)
{
    name = mfu__span_trim(name);
    if (name.n >= 2 && name.p[0] == '"' && name.p[name.n - 1] == '"')
        name = (mfu__span){name.p + 1, name.n - 2};
    if (mfu__span_eq(name, "step"))
        return COL_STEP;
    if (mfu__span_eq(name, "train_loss") || mfu__span_eq(name, "train/loss") ||
        mfu__span_eq(name, "loss") || mfu__span_eq(name, "train_loss_step"))
        return COL_LOSS;
    if (mfu__span_eq(name, "lr") || mfu__span_eq(name, "learning_rate") ||
        mfu__span_starts(name, "lr-"))
        return COL_LR;
    mfu__span bare = name;
    if (mfu__span_starts(bare, "train/"))
        bare = mfu__span_from(bare, MFU__LIT_LEN("train/"));
    for (size_t i = 0; i < MFU__ARRAY_LEN(monitor_cols); i++)
        if (mfu__span_eq(bare, monitor_cols[i].suffix))
            return monitor_cols[i].role;
    return COL_NONE;
}

/* A metrics.csv header: a "step" column and a ThroughputMonitor per-device column. */
static bool csv_header(mfu__span s)
{
    if (mfu__span_find(s, ",") < 0)
        return false;
    bool step = false, monitor = false;
    mfu__span rest = s, cell;
    while (mfu__split_next(&rest, ",", &cell)) {
        enum col_role r = role_of(cell);
        step = step || r == COL_STEP;
        monitor =
            monitor || r == COL_MFU_D || r == COL_FLOPS_D || r == COL_ITEMS_D || r == COL_SAMPLES_D;
    }
    return step && monitor;
}

static bool litgpt_line(mfu__span s)
{
    return mfu__span_starts(s, "Epoch ") && mfu__span_find(s, " | iter ") > 0 &&
           mfu__span_find(s, " | loss train: ") > 0;
}

static int lightning_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    if (litgpt_line(s) || csv_header(s))
        return MFU__DETECT_STEP;
    return MFU__DETECT_NONE;
}

static void read_header(lightning_state *st, mfu__span s)
{
    st->have_header = true;
    st->ncols = 0;
    mfu__span rest = s, cell;
    while (mfu__split_next(&rest, ",", &cell) && st->ncols < LIGHTNING_MAX_COLS)
        st->role[st->ncols++] = (unsigned char)role_of(cell);
}

/* Every cell a number or empty (a data row). */
static bool numeric_row(mfu__span s)
{
    if (mfu__span_find(s, ",") < 0)
        return false;
    mfu__span rest = s, cell;
    mfu__num n;
    while (mfu__split_next(&rest, ",", &cell)) {
        cell = mfu__span_trim(cell);
        if (cell.n && !mfu__num_parse(cell, &n))
            return false;
    }
    return true;
}

static void set_value(double *dst, mfu_scope *scope, double v, mfu_scope sc, bool prefer)
{
    if (isnan(v))
        return;
    if (isnan(*dst) || prefer) {
        *dst = v;
        *scope = sc;
    }
}

static mfu_status csv_row(lightning_state *st, mfu__ictx *c, mfu__span s)
{
    mfu_step r;
    mfu_step_init(&r);
    bool have_step = false, any = false;
    mfu__span rest = s, cell;
    for (size_t i = 0; mfu__split_next(&rest, ",", &cell); i++) {
        if (i >= st->ncols)
            break;
        mfu__num n;
        cell = mfu__span_trim(cell);
        if (st->role[i] == COL_NONE || cell.n == 0 || !mfu__num_parse(cell, &n))
            continue;
        double v = n.kind == MFU__NUM_FINITE ? n.value : NAN;
        switch ((enum col_role)st->role[i]) {
        case COL_STEP:
            if (!isnan(v) && v >= 0 && v == floor(v) && v < 9e15) {
                r.step = (int64_t)v;
                have_step = true;
            }
            continue;
        case COL_LOSS:
            if (isnan(r.loss) && !(r.flags & MFU_STEP_LOSS_NAN)) {
                r.loss = v;
                if (n.kind == MFU__NUM_NAN || n.kind == MFU__NUM_INF)
                    r.flags |= MFU_STEP_LOSS_NAN;
            }
            break;
        case COL_LR:
            if (isnan(r.lr))
                r.lr = v;
            break;
        case COL_MFU_D: set_value(&r.mfu, &r.mfu_scope, v, MFU_SCOPE_DEVICE, true); break;
        case COL_FLOPS_D:
            set_value(&r.flops_per_s, &r.flops_per_s_scope, v, MFU_SCOPE_DEVICE, true);
            break;
        case COL_FLOPS_G:
            set_value(&r.flops_per_s, &r.flops_per_s_scope, v, MFU_SCOPE_GLOBAL, false);
            break;
        case COL_ITEMS_G:
            set_value(&r.tokens_per_s, &r.tokens_per_s_scope, v, MFU_SCOPE_GLOBAL, true);
            break;
        case COL_ITEMS_D:
            set_value(&r.tokens_per_s, &r.tokens_per_s_scope, v, MFU_SCOPE_DEVICE, false);
            break;
        case COL_SAMPLES_G:
            set_value(&r.samples_per_s, &r.samples_per_s_scope, v, MFU_SCOPE_GLOBAL, true);
            break;
        case COL_SAMPLES_D:
            set_value(&r.samples_per_s, &r.samples_per_s_scope, v, MFU_SCOPE_DEVICE, false);
            break;
        case COL_NONE: break;
        }
        any = true;
    }
    if (!have_step) {
        mfu__skip(c, "metrics.csv row without a number in the 'step' column");
        return MFU_OK;
    }
    if (!any) {
        mfu__used(c); /* validation-only row: nothing of ours in it */
        return MFU_OK;
    }
    mfu_run_meta *m = mfu__meta(c);
    if (!m->convention[0])
        mfu__strlcpy(m->convention,
                     "Lightning ThroughputMonitor: rolling window; device/mfu vs available "
                     "flops of the device and dtype; items = tokens",
                     sizeof m->convention);
    return mfu__emit(c, &r);
}

static mfu_status litgpt(mfu__ictx *c, mfu__span s)
{
    mfu_step r;
    mfu_step_init(&r);
    long it = mfu__span_find(s, " | iter ");
    mfu__span rest = mfu__span_from(s, (size_t)it + MFU__LIT_LEN(" | iter "));
    long sp = mfu__span_find(rest, " step ");
    long bar = mfu__span_find(rest, " | ");
    if (sp < 0 || bar < sp) {
        mfu__skip(c, "LitGPT line without 'iter I step S |'");
        return MFU_OK;
    }
    mfu__span stp = {rest.p + sp + MFU__LIT_LEN(" step "),
                     (size_t)bar - (size_t)sp - MFU__LIT_LEN(" step ")};
    if (!mfu__int_parse(stp, &r.step)) {
        mfu__skip(c, "LitGPT line without an integer after 'step'");
        return MFU_OK;
    }
    long lt = mfu__span_find(s, " | loss train: ");
    mfu__span l = mfu__span_from(s, (size_t)lt + MFU__LIT_LEN(" | loss train: "));
    long end = mfu__span_find(l, ",");
    long end2 = mfu__span_find(l, " |");
    if (end < 0 || (end2 >= 0 && end2 < end))
        end = end2;
    if (end >= 0)
        l.n = (size_t)end;
    mfu__num n;
    if (mfu__num_parse(l, &n)) {
        bool bad = n.kind == MFU__NUM_NAN || n.kind == MFU__NUM_INF;
        r.loss = bad ? NAN : n.value;
        if (bad)
            r.flags |= MFU_STEP_LOSS_NAN;
    }
    mfu_run_meta *m = mfu__meta(c);
    if (!m->convention[0])
        mfu__strlcpy(m->convention,
                     "LitGPT: row = optimizer step with the training loss; its iter time is one "
                     "micro-iteration's and is not kept",
                     sizeof m->convention);
    return mfu__emit(c, &r);
}

static mfu_status lightning_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    lightning_state *st = state;
    mfu__span s = {ln->text, ln->len};
    if (litgpt_line(s))
        return litgpt(c, s);
    if (csv_header(s)) {
        read_header(st, s);
        mfu__used(c);
        return MFU_OK;
    }
    if (st->have_header && numeric_row(s))
        return csv_row(st, c, s);
    return MFU_OK;
}

const mfu__format mfu__fmt_lightning = {
    .name = "lightning",
    .summary = "Lightning CSVLogger metrics.csv (ThroughputMonitor columns), LitGPT console lines",
    .detect = lightning_detect,
    .state_size = sizeof(lightning_state),
    .line = lightning_line,
};
