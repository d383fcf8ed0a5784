/*
 * fmt_nemo.c - NVIDIA NeMo, three layouts (log-formats.md §3).
 *
 * (a) NeMo 2.0 ProgressPrinter (nemo.lightning), every log_interval:
 *       Training epoch 0, iteration 120/149 | lr: 3e-05 | consumed_samples: 121 |
 *       global_batch_size: 1 | global_step: 120 | reduced_train_loss: 1.233 |
 *       train_step_timing in s: 0.03146 | val_loss: 4.106
 *     Floats print with 4 significant digits. Optional TFLOPS_per_GPU (analytic model FLOPs /
 *     step time / GPUs) and tokens_per_sec_per_gpu.
 * (b) NeMo 1.x / MegatronProgressBar tqdm bar, one redraw per step (the reader splits \r):
 *       Epoch 0:   1%|  | 795/77225 [9:07:58<878:01:48, 41.36s/it, loss=3.1, v_num=,
 *       reduced_train_loss=3.090, global_step=794.0, consumed_samples=1.63e+6]
 *     Step time: "train_step_timing in s=" when printed, else tqdm's smoothed rate (s/it, or
 *     1 / it/s). A bar needs one NeMo key (reduced_train_loss, global_step or
 *     train_step_timing in s) to be this format's: plain Lightning bars are not.
 * (c) NeMo AutoModel (2025+):
 *       step 9 | epoch 0 | loss 0.6974 | grad_norm 1.5436 | lr 1.00e-05 | mem 24.90 GiB |
 *       tps 11278.56(1409.82/gpu) | num_label_tokens 21541
 *     tps is global, the bracket per GPU (their ratio is the world size); num_label_tokens is
 *     the step's label tokens (global); mem in GiB.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "ingest/format.h"

static bool is_printer(mfu__span s)
{
    return mfu__span_starts(s, "Training epoch ") && mfu__span_find(s, ", iteration ") > 0 &&
           mfu__span_find(s, " | ") > 0;
}

/* "Epoch N:" then a tqdm bar with a rate and a [...] holding k=v pairs. */
static bool is_bar(mfu__span s, bool *nemo_keys)
{
    if (!mfu__span_starts(s, "Epoch "))
        return false;
    size_t i = 6;
    while (i < s.n && isdigit((unsigned char)s.p[i]))
        i++;
    if (i == 6 || i >= s.n || s.p[i] != ':')
        return false;
    if (mfu__span_find(s, "it/s") < 0 && mfu__span_find(s, "s/it") < 0)
        return false;
    long open = mfu__span_find(s, "[");
    if (open < 0 || mfu__span_find((mfu__span){s.p + open, s.n - (size_t)open}, "=") < 0)
        return false;
    if (nemo_keys)
        *nemo_keys = mfu__span_find(s, "reduced_train_loss=") > 0 ||
                     mfu__span_find(s, "global_step=") > 0 ||
                     mfu__span_find(s, "train_step_timing in s=") > 0;
    return true;
}

static bool is_automodel(mfu__span s)
{
    return mfu__span_starts(s, "step ") && mfu__span_find(s, " | tps ") > 0;
}

static int nemo_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    bool nemo_keys = false;
    if (is_printer(s) || is_automodel(s))
        return MFU__DETECT_STEP;
    if (is_bar(s, &nemo_keys))
        return nemo_keys ? MFU__DETECT_STEP : MFU__DETECT_NONE;
    return MFU__DETECT_NONE;
}

static void set_loss(mfu_step *st, const mfu__num *n)
{
    st->loss = n->value;
    if (n->kind == MFU__NUM_NAN || n->kind == MFU__NUM_INF) {
        st->loss = NAN;
        st->flags |= MFU_STEP_LOSS_NAN;
    }
}

/* A metric shared by (a) and (b). Returns true when key was known. */
static bool common_key(mfu_step *st, mfu__span key, const mfu__num *n, double *gstep,
                       double *loss_fallback)
{
    if (mfu__span_eq(key, "reduced_train_loss")) {
        set_loss(st, n);
    } else if (mfu__span_eq(key, "loss") || mfu__span_eq(key, "train_loss")) {
        *loss_fallback = n->value;
    } else if (mfu__span_eq(key, "lr")) {
        st->lr = n->value;
    } else if (mfu__span_eq(key, "global_batch_size")) {
        st->samples = n->value;
    } else if (mfu__span_eq(key, "global_step")) {
        *gstep = n->value;
    } else if (mfu__span_eq(key, "train_step_timing in s")) {
        st->step_time_s = n->value;
    } else if (mfu__span_eq(key, "TFLOPS_per_GPU")) {
        st->flops_per_s = mfu__scale10(n->value, 12);
        st->flops_per_s_scope = MFU_SCOPE_DEVICE;
    } else if (mfu__span_eq(key, "tokens_per_sec_per_gpu")) {
        st->tokens_per_s = n->value;
        st->tokens_per_s_scope = MFU_SCOPE_DEVICE;
    } else if (mfu__span_eq(key, "grad_norm")) {
        st->grad_norm = n->value;
    } else {
        return false;
    }
    return true;
}

static mfu_status printer_line(mfu__ictx *c, mfu__span s)
{
    mfu_step st;
    mfu_step_init(&st);
    mfu__span rest = s, piece, key, val;
    mfu__split_next(&rest, " | ", &piece); /* "Training epoch E, iteration I/N" */
    long it = mfu__span_find(piece, ", iteration ");
    int64_t iter = -1;
    if (it > 0) {
        mfu__span r = {piece.p + it + 12, piece.n - (size_t)it - 12};
        long slash = mfu__span_find(r, "/");
        if (slash > 0)
            mfu__int_parse((mfu__span){r.p, (size_t)slash}, &iter);
    }
    double gstep = NAN, loss2 = NAN;
    while (mfu__split_next(&rest, " | ", &piece)) {
        mfu__num n;
        if (mfu__kv(piece, ": ", &key, &val) && mfu__num_parse(val, &n))
            common_key(&st, key, &n, &gstep, &loss2);
    }
    if (isnan(st.loss) && !(st.flags & MFU_STEP_LOSS_NAN))
        st.loss = loss2;
    if (!isnan(gstep))
        st.step = (int64_t)gstep;
    else if (iter >= 0)
        st.step = iter;
    else {
        mfu__skip(c, "NeMo 'Training epoch E, iteration I/N' line without a readable iteration");
        return MFU_OK;
    }
    return mfu__emit(c, &st);
}

static mfu_status bar_line(mfu__ictx *c, mfu__span s)
{
    mfu_step st;
    mfu_step_init(&st);
    /* "| 795/77225 [" : the bar's counter */
    long open = mfu__span_find(s, " [");
    long close = -1;
    for (long i = (long)s.n - 1; i > open; i--)
        if (s.p[i] == ']') {
            close = i;
            break;
        }
    if (open < 0 || close < 0) {
        mfu__skip(c, "NeMo tqdm bar without its '[elapsed<remaining, rate, k=v ...]' part");
        return MFU_OK;
    }
    int64_t count = -1;
    {
        long b = open - 1;
        while (b >= 0 && s.p[b] != ' ' && s.p[b] != '|')
            b--;
        mfu__span cnt = {s.p + b + 1, (size_t)(open - b - 1)};
        long slash = mfu__span_find(cnt, "/");
        if (slash > 0)
            mfu__int_parse((mfu__span){cnt.p, (size_t)slash}, &count);
    }
    mfu__span inside = {s.p + open + 2, (size_t)(close - open - 2)}, piece, key, val;
    double gstep = NAN, loss2 = NAN, rate_s = NAN;
    while (mfu__split_next(&inside, ", ", &piece)) {
        piece = mfu__span_trim(piece);
        mfu__num n;
        if (mfu__kv(piece, "=", &key, &val)) {
            if (mfu__num_parse(val, &n))
                common_key(&st, key, &n, &gstep, &loss2);
            continue;
        }
        /* the rate: "41.36s/it" or "1.72it/s" */
        long k = mfu__span_find(piece, "s/it");
        if (k > 0 && (size_t)k + 4 == piece.n) {
            rate_s = mfu__num_value((mfu__span){piece.p, (size_t)k});
            continue;
        }
        k = mfu__span_find(piece, "it/s");
        if (k > 0 && (size_t)k + 4 == piece.n) {
            double r = mfu__num_value((mfu__span){piece.p, (size_t)k});
            if (r > 0)
                rate_s = 1.0 / r;
        }
    }
    if (isnan(st.loss) && !(st.flags & MFU_STEP_LOSS_NAN))
        st.loss = loss2;
    if (isnan(st.step_time_s))
        st.step_time_s = rate_s;
    if (!isnan(gstep))
        st.step = (int64_t)gstep;
    else if (count >= 0)
        st.step = count;
    else {
        mfu__skip(c, "NeMo tqdm bar without 'N/M' or global_step=");
        return MFU_OK;
    }
    return mfu__emit(c, &st);
}

static mfu_status automodel_line(mfu__ictx *c, mfu__span s)
{
    mfu_step st;
    mfu_step_init(&st);
    bool have_step = false;
    mfu__span rest = s, piece, key, val;
    while (mfu__split_next(&rest, " | ", &piece)) {
        if (!mfu__kv(piece, " ", &key, &val))
            continue;
        mfu__num n;
        const char *p = val.p, *end = val.p + val.n;
        if (!mfu__num_scan(&p, end, &n))
            continue;
        if (mfu__span_eq(key, "step") && n.kind == MFU__NUM_FINITE) {
            st.step = mfu__int64_sat(n.value);
            have_step = true;
        } else if (mfu__span_eq(key, "loss")) {
            set_loss(&st, &n);
        } else if (mfu__span_eq(key, "grad_norm")) {
            st.grad_norm = n.value;
        } else if (mfu__span_eq(key, "lr")) {
            st.lr = n.value;
        } else if (mfu__span_eq(key, "mem") && n.unit == MFU__UNIT_BYTES) {
            st.memory_bytes = n.value;
        } else if (mfu__span_eq(key, "tps")) {
            st.tokens_per_s = n.value;
            st.tokens_per_s_scope = MFU_SCOPE_GLOBAL;
            /* "(1409.82/gpu)": the ratio gives the number of GPUs */
            mfu__num per;
            if (p < end && *p == '(') {
                p++;
                if (mfu__num_scan(&p, end, &per) && per.kind == MFU__NUM_FINITE && per.value > 0) {
                    double ratio = n.value / per.value;
                    double r = floor(ratio + 0.5);
                    mfu_run_meta *m = mfu__meta(c);
                    if (r >= 1 && fabs(ratio - r) < 0.01 && m->world_size == 0)
                        m->world_size = (int64_t)r;
                }
            }
        } else if (mfu__span_eq(key, "num_label_tokens")) {
            st.tokens = n.value;
        }
    }
    if (!have_step) {
        mfu__skip(c, "NeMo AutoModel line without 'step N'");
        return MFU_OK;
    }
    return mfu__emit(c, &st);
}

static mfu_status nemo_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    (void)state;
    mfu__span s = {ln->text, ln->len};
    bool nemo_keys = false;
    if (is_printer(s))
        return printer_line(c, s);
    if (is_automodel(s))
        return automodel_line(c, s);
    if (is_bar(s, &nemo_keys) && nemo_keys)
        return bar_line(c, s);
    return MFU_OK;
}

const mfu__format mfu__fmt_nemo = {
    .name = "nemo",
    .summary = "NeMo 2.0 'Training epoch E, iteration I/N | k: v', NeMo 1.x tqdm, AutoModel lines",
    .detect = nemo_detect,
    .line = nemo_line,
};
