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
 * LitGPT (Fabric) console lines, pretrain/finetune scripts:
 *   Epoch 34 | iter 3050700 step 610140 | loss train: 2.846, val: 2.861 | iter time: 112.20
 *   ms (step) remaining time: 0:01:54                                           (2024+)
 *   iter 77 step 39: loss 10.8259, iter time: 214.40ms (optimizer.step)        (lit-gpt, 2023)
 *   [rank: 0] iter 34 step 35: iter time: 3372.20ms (optimizer.step)    (2023, no loss printed)
 * The row is the step count S printed, with the training (micro-batch) loss. "iter time" is the
 * time of one micro-iteration; "(step)" / "(optimizer.step)" marks the iteration that stepped
 * the optimizer, after which S counts the new step. When every iteration of a step is printed
 * (consecutive iteration numbers since the previous marked line), the step's time is the sum
 * of their iter times, on the marked line's row; otherwise (a log interval above 1) no step
 * time is kept.
 *
 * TQDM progress bar of the Trainer (TQDMProgressBar), one redraw per logical line:
 *   Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.047, v_num=193315]
 * A row per batch count: the step is the count plus the totals of the earlier epochs' bars;
 * its time is tqdm's smoothed rate (s/it, or 1 / it/s) as shown; loss from the postfix
 * (loss, train_loss, train_loss_step, loss/loss), lr from lr. Lightning redraws at a count
 * before its metrics are updated, so a count's last redraw wins: the row waits until the count
 * changes. A bar with NeMo's keys is NeMo's (fmt_nemo.c); validation and sanity-check bars
 * are not read.
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
    /* LitGPT: the iterations since the last optimizer step */
    int64_t last_iter; /* -1 before the first line */
    bool group_ok;     /* the group started right after a marked line */
    double group_s;    /* sum of its iter times, seconds */
    /* TQDM bar */
    int64_t bar_epoch;  /* -1 before the first bar */
    int64_t bar_offset; /* totals of the earlier epochs */
    int64_t bar_total;
    bool pending; /* a row waiting for its count's last redraw */
    mfu_step row;
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

/* lit-gpt 2023: "iter N step S: " at the start; the offset after it, N and S. */
static size_t litgpt_old(mfu__span s, int64_t *iter, int64_t *step)
{
    if (!mfu__span_starts(s, "iter "))
        return 0;
    mfu__span r = mfu__span_from(s, 5);
    long sp = mfu__span_find(r, " step ");
    long colon = mfu__span_find(r, ": ");
    int64_t a, b;
    if (sp <= 0 || colon < sp || !mfu__int_parse((mfu__span){r.p, (size_t)sp}, &a))
        return 0;
    mfu__span st = {r.p + sp + 6, (size_t)colon - (size_t)sp - 6};
    if (!mfu__int_parse(st, &b) || mfu__span_find(r, "iter time: ") < 0)
        return 0;
    if (iter) {
        *iter = a;
        *step = b;
    }
    return 5 + (size_t)colon + 2;
}

/* "Epoch N: " then a tqdm bar; NeMo's bars (their keys) and others' are not Lightning's. */
static bool trainer_bar(mfu__span s, mfu__tqdm *bar, int64_t *epoch)
{
    if (!mfu__span_starts(s, "Epoch "))
        return false;
    size_t i = 6;
    while (i < s.n && s.p[i] >= '0' && s.p[i] <= '9')
        i++;
    if (i == 6 || i >= s.n || s.p[i] != ':')
        return false;
    if (mfu__span_find(s, "reduced_train_loss=") > 0 || mfu__span_find(s, "global_step=") > 0 ||
        mfu__span_find(s, "train_step_timing in s=") > 0)
        return false;
    if (!mfu__tqdm_parse(s, bar))
        return false;
    if (epoch && !mfu__int_parse((mfu__span){s.p + 6, i - 6}, epoch))
        return false;
    return true;
}

static int lightning_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    mfu__tqdm bar;
    if (litgpt_line(s) || csv_header(s) || litgpt_old(s, NULL, NULL))
        return MFU__DETECT_STEP;
    if (trainer_bar(s, &bar, NULL))
        return bar.n > 0 && !isnan(bar.s_per_it) ? MFU__DETECT_STEP : MFU__DETECT_HINT;
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

/* The iteration's time ("iter time: 112.20 ms", "214.40ms") and whether it stepped the
 * optimizer; add it to the step being timed. Returns the step's time when this iteration
 * completes a step whose iterations were all printed, else NaN. */
static double litgpt_time(lightning_state *st, mfu__span s, int64_t iter)
{
    long at = mfu__span_find(s, "iter time: ");
    double t = NAN;
    bool marked = mfu__span_find(s, "(step)") > 0 || mfu__span_find(s, "(optimizer.step)") > 0;
    if (at >= 0) {
        mfu__span v = mfu__span_from(s, (size_t)at + MFU__LIT_LEN("iter time: "));
        const char *p = v.p;
        mfu__num n;
        if (mfu__num_scan(&p, v.p + v.n, &n) && n.kind == MFU__NUM_FINITE &&
            n.unit == MFU__UNIT_SECONDS)
            t = n.value;
    }
    if (st->last_iter >= 0 && iter != st->last_iter + 1)
        st->group_ok = false; /* an iteration not printed: the sum would be short */
    st->last_iter = iter;
    st->group_s += isnan(t) ? 0 : t;
    if (isnan(t))
        st->group_ok = false;
    double step_s = NAN;
    if (marked) {
        if (st->group_ok)
            step_s = st->group_s;
        st->group_ok = true; /* the next step starts now */
        st->group_s = 0;
    }
    return step_s;
}

static void litgpt_convention(mfu__ictx *c)
{
    mfu__convention(c, "LitGPT: row = optimizer step count with the micro-batch loss; step time "
                       "= sum of its iterations' times when all are printed");
}

/* iter 77 step 39: loss 10.8259, iter time: 214.40ms (optimizer.step) */
static mfu_status litgpt_2023(lightning_state *st, mfu__ictx *c, mfu__span s)
{
    mfu_step r;
    mfu_step_init(&r);
    int64_t iter;
    size_t off = litgpt_old(s, &iter, &r.step);
    mfu__span rest = mfu__span_from(s, off), piece, k, v;
    while (mfu__split_next(&rest, ", ", &piece)) {
        mfu__num n;
        if (mfu__kv(piece, " ", &k, &v) && mfu__span_eq(k, "loss") && mfu__num_parse(v, &n))
            mfu__set_loss(&r, &n);
    }
    r.step_time_s = litgpt_time(st, s, iter);
    litgpt_convention(c);
    return mfu__emit(c, &r);
}

static mfu_status litgpt(lightning_state *lst, mfu__ictx *c, mfu__span s)
{
    mfu_step r;
    mfu_step_init(&r);
    long it = mfu__span_find(s, " | iter ");
    mfu__span rest = mfu__span_from(s, (size_t)it + MFU__LIT_LEN(" | iter "));
    long sp = mfu__span_find(rest, " step ");
    long bar = mfu__span_find(rest, " | ");
    int64_t iter;
    if (sp < 0 || bar < sp || !mfu__int_parse((mfu__span){rest.p, (size_t)sp}, &iter)) {
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
    if (mfu__num_parse(l, &n))
        mfu__set_loss(&r, &n);
    r.step_time_s = litgpt_time(lst, s, iter);
    litgpt_convention(c);
    return mfu__emit(c, &r);
}

/* A TQDM bar redraw: update the pending row of its count, or emit it and start the next. */
static mfu_status bar_line(lightning_state *st, mfu__ictx *c, const mfu__tqdm *bar, int64_t epoch,
                           mfu__span s)
{
    if (st->bar_epoch >= 0 && epoch != st->bar_epoch)
        st->bar_offset += epoch > st->bar_epoch ? st->bar_total : 0;
    st->bar_epoch = epoch;
    st->bar_total = bar->total;
    mfu__used(c);
    if (bar->n <= 0)
        return MFU_OK; /* the bar's first draw, no batch done */
    int64_t step = st->bar_offset + bar->n;
    mfu_status rc = MFU_OK;
    if (st->pending && st->row.step != step) {
        st->pending = false;
        rc = mfu__emit(c, &st->row);
    }
    if (!st->pending) {
        mfu_step_init(&st->row);
        st->row.step = step;
        st->pending = true;
    }
    mfu_step *r = &st->row;
    if (!isnan(bar->s_per_it))
        r->step_time_s = bar->s_per_it;
    /* the postfix: "k=v" pairs after the rate inside the brackets */
    long open = mfu__span_find(s, " [");
    mfu__span in = open >= 0 ? mfu__span_from(s, (size_t)open + 2) : (mfu__span){s.p, 0};
    long close = mfu__span_find(in, "]");
    if (close >= 0)
        in.n = (size_t)close;
    mfu__span piece, k, v;
    while (mfu__split_next(&in, ", ", &piece)) {
        mfu__num n;
        if (!mfu__kv(piece, "=", &k, &v) || !mfu__num_parse(v, &n))
            continue;
        k = mfu__span_trim(k);
        if (mfu__span_eq(k, "loss") || mfu__span_eq(k, "train_loss") ||
            mfu__span_eq(k, "train_loss_step") || mfu__span_eq(k, "loss/loss"))
            mfu__set_loss(r, &n);
        else if (mfu__span_eq(k, "lr"))
            r->lr = n.value;
    }
    mfu__convention(c, "Lightning TQDM bar: step time = tqdm's smoothed s/it as shown; step = "
                       "batch count plus the earlier epochs' totals");
    return rc;
}

static mfu_status lightning_init(void *state, const mfu_ingest_opts *opts, mfu_error *err)
{
    (void)opts;
    (void)err;
    lightning_state *st = state;
    st->last_iter = -1;
    st->bar_epoch = -1;
    return MFU_OK;
}

static mfu_status lightning_finish(void *state, mfu__ictx *c)
{
    lightning_state *st = state;
    if (!st->pending)
        return MFU_OK;
    st->pending = false;
    return mfu__emit(c, &st->row);
}

static mfu_status lightning_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    lightning_state *st = state;
    mfu__span s = {ln->text, ln->len};
    mfu__tqdm bar;
    int64_t epoch;
    if (litgpt_line(s))
        return litgpt(st, c, s);
    if (litgpt_old(s, NULL, NULL))
        return litgpt_2023(st, c, s);
    if (trainer_bar(s, &bar, &epoch))
        return bar_line(st, c, &bar, epoch, s);
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
    .summary = "Lightning metrics.csv (ThroughputMonitor), TQDM bars 'Epoch N: ..', LitGPT lines",
    .detect = lightning_detect,
    .state_size = sizeof(lightning_state),
    .init = lightning_init,
    .line = lightning_line,
    .finish = lightning_finish,
};
