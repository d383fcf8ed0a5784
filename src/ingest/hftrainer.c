/*
 * hftrainer.c - Hugging Face Trainer console output, shared by "hf" and "axolotl"
 * (log-formats.md §7 and §13).
 *
 * Lines read:
 *   - the log dict that ProgressCallback prints with tqdm.write(str(logs)) at every logging
 *     step: {'loss': 3.1898, 'grad_norm': 5.31, 'learning_rate': 2e-05, 'epoch': 0.02}
 *     Values are bare numbers, or quoted strings in newer versions ({'loss': '3.41', ...}).
 *     Loss is the mean over the logging interval; learning_rate the current one.
 *     Axolotl adds 'memory/max_active (GiB)', 'memory/max_allocated (GiB)',
 *     'memory/device_reserved (GiB)', 'tokens/train_per_sec_per_gpu' (per GPU, '0' = not
 *     measured), 'ppl', 'tokens/trainable', 'tokens/total' (the last three are not kept).
 *   - eval dicts ({'eval_loss': ...}): read, no row.
 *   - the run summary dict {'train_runtime': 116.19, 'train_samples_per_second': 6.885,
 *     'train_steps_per_second': 1.721, 'train_tokens_per_second': ..., 'train_loss': 2.82,
 *     'epoch': 0.15}: train_samples_per_second is global (max_steps x total batch / runtime),
 *     train_tokens_per_second counts this process's tokens (per device); and the block of
 *     trainer.log_metrics ("***** train metrics *****", then "  key = value" lines, runtime as
 *     H:MM:SS.cc and total_flos as "<FLOPs >> 30>GF", per transformers'
 *     trainer_pt_utils.metrics_format); TrainOutput(global_step=N, ...) gives the last step.
 *   - tqdm bars of the training loop: " 10%|█    | 20/200 [00:11<01:44,  1.72it/s]".
 *   - the banner: "Instantaneous batch size per device = 8", "Total train batch size (w.
 *     parallel, distributed & accumulation) = 32", "Gradient Accumulation steps = 4", "Total
 *     optimization steps = 375"; PEFT's "trainable params: X || all params: Y || ...".
 *
 *   - step dicts that also carry the run's clock (Unsloth Studio, 2026): 'train_runtime'
 *     (seconds since the start) and 'num_input_tokens_seen' (tokens so far, all processes)
 *     next to 'loss'; 'train_tokens_per_second' there is their ratio, a mean since the start,
 *     and is not kept. Such a dict is a step, not the summary (which has train_loss, no loss).
 *     Between two rows numbered the same way, the growth of the two gives the step time (when
 *     no bar gave one) and the tokens per step.
 *   - keys of custom callbacks and trainers built on the Trainer ('train_step_time',
 *     'step_time_ms', 'tokens_per_second', 'step_tokens_per_second', 'tflops', 'mfu',
 *     'peak_memory_gb', ...): read by what their names and units say, as the generic reader
 *     reads keys (ingest/kvline.h); a step time there wins over the bar's smoothed s/it.
 *   - Axolotl's memory keys in both spellings: 'memory/max_active (GiB)' and, since late
 *     2025, 'memory/max_mem_active(gib)', '.../device_mem_reserved(gib)'.
 *
 * Rows. The log dict carries no step number. A row takes the position of the training bar read
 * since the previous dict (ProgressCallback advances the bar before the dict is written; tqdm
 * may show a position up to its redraw interval old) and the bar's smoothed s/it as step time;
 * without such a bar it takes the next number after the previous row (the record's ordinal).
 * The summary becomes one more row at the end of the input, numbered TrainOutput's global_step
 * or the last bar position, or, when rows are ordinals, merged into the last row (it fills
 * what that row lacks): step time 1/train_steps_per_second, samples/s, tokens/s, FLOP/s =
 * total_flos / train_runtime (global; total_flos is summed over processes), and, on a row of
 * its own, loss = train_loss. These are run averages.
 */
#include <math.h>
#include <string.h>

#include "ingest/hftrainer.h"
#include "ingest/kvline.h"
#include "ingest/pyrepr.h"

/* What one dict held. Doubles NaN when absent. */
typedef struct dict_vals {
    bool any_step_key; /* loss, learning_rate or grad_norm */
    bool has_loss, has_lr, has_gn, has_epoch, has_runtime, has_eval, has_axolotl;
    double loss;
    bool loss_nonfinite;
    double lr, grad_norm;
    double runtime_s, samples_per_s, steps_per_s, tokens_per_s, total_flos, train_loss;
    double tok_gpu; /* Axolotl tokens/train_per_sec_per_gpu (0 -> absent) */
    double mem_reserved, mem_alloc, mem_active;
    double tokens_seen; /* num_input_tokens_seen */
    /* keys of a custom callback or trainer ('train_step_time', 'tokens_per_second', ...), read
     * by their names as the generic reader reads them (kvline.c); NaN when absent */
    double x_step_s, x_tps, x_flops, x_mfu, x_mem;
    mfu_scope x_tps_scope, x_flops_scope;
} dict_vals;

static void vals_init(dict_vals *v)
{
    memset(v, 0, sizeof *v);
    v->loss = v->lr = v->grad_norm = NAN;
    v->runtime_s = v->samples_per_s = v->steps_per_s = v->tokens_per_s = NAN;
    v->total_flos = v->train_loss = v->tok_gpu = NAN;
    v->mem_reserved = v->mem_alloc = v->mem_active = NAN;
    v->tokens_seen = NAN;
    v->x_step_s = v->x_tps = v->x_flops = v->x_mfu = v->x_mem = NAN;
}

/* A key the reader does not know, by what its name and unit say (ingest/kvline.h): a step
 * time, tokens/s, FLOP/s, MFU or memory of a custom callback. */
static void custom_key(dict_vals *v, mfu__span k, mfu__span val)
{
    mfu__kvpair p;
    mfu__kvmeaning m;
    if (!mfu__kv_item(k, val, &p) || !mfu__kv_meaning(&p, &m) || !isfinite(m.value))
        return;
    switch (m.role) {
    case MFU__KR_STEP_TIME: v->x_step_s = m.value; break;
    case MFU__KR_RATE_IT: v->x_step_s = m.value > 0 ? 1.0 / m.value : NAN; break;
    case MFU__KR_TOKENS_PER_S:
        v->x_tps = m.value;
        v->x_tps_scope = m.scope;
        break;
    case MFU__KR_FLOPS_PER_S:
        v->x_flops = m.value;
        v->x_flops_scope = m.scope;
        break;
    case MFU__KR_MFU: v->x_mfu = m.value; break;
    case MFU__KR_MEMORY: v->x_mem = m.value; break;
    default: break;
    }
}

/* A number (finite, nan or inf) in val; *x gets its value. */
static bool num_of(mfu__span val, double *x, mfu__numkind *kind)
{
    mfu__num n;
    if (!mfu__num_parse(val, &n) || n.kind == MFU__NUM_NA)
        return false;
    *x = n.value;
    if (kind)
        *kind = n.kind;
    return true;
}

/* "0:01:23.76", "1 day, 2:03:04.50" (datetime.timedelta) or a plain number of seconds. */
static double runtime_seconds(mfu__span v)
{
    v = mfu__span_trim(v);
    double plain = mfu__num_value(v);
    if (!isnan(plain))
        return plain;
    double days = 0;
    long d = mfu__span_find(v, " day");
    if (d > 0) {
        int64_t dd;
        long comma = mfu__span_find(v, ", ");
        if (!mfu__int_parse((mfu__span){v.p, (size_t)d}, &dd) || comma < d)
            return NAN;
        days = (double)dd;
        v = mfu__span_trim(mfu__span_from(v, (size_t)comma + 2));
    }
    mfu__span part[3];
    mfu__span rest = v;
    for (int i = 0; i < 3; i++)
        if (!mfu__split_next(&rest, ":", &part[i]))
            return NAN;
    if (rest.n)
        return NAN;
    int64_t h, m;
    double s = mfu__num_value(part[2]);
    if (!mfu__int_parse(part[0], &h) || !mfu__int_parse(part[1], &m) || isnan(s))
        return NAN;
    return days * 86400.0 + (double)h * 3600.0 + (double)m * 60.0 + s;
}

/* total_flos as printed: a number, or "<n>GF" (FLOPs >> 30, metrics_format). */
static double flos_value(mfu__span v)
{
    v = mfu__span_trim(v);
    if (v.n > 2 && memcmp(v.p + v.n - 2, "GF", 2) == 0) {
        double g = mfu__num_value((mfu__span){v.p, v.n - 2});
        return isnan(g) ? NAN : g * 1073741824.0;
    }
    return mfu__num_value(v);
}

/* One summary key (dict or metrics block) into v; false when the key is not a summary key. */
static bool summary_key(dict_vals *v, mfu__span k, mfu__span val)
{
    if (mfu__span_eq(k, "train_runtime"))
        v->runtime_s = runtime_seconds(val);
    else if (mfu__span_eq(k, "train_samples_per_second"))
        v->samples_per_s = mfu__num_value(val);
    else if (mfu__span_eq(k, "train_steps_per_second"))
        v->steps_per_s = mfu__num_value(val);
    else if (mfu__span_eq(k, "train_tokens_per_second"))
        v->tokens_per_s = mfu__num_value(val);
    else if (mfu__span_eq(k, "total_flos"))
        v->total_flos = flos_value(val);
    else if (mfu__span_eq(k, "train_loss"))
        v->train_loss = mfu__num_value(val);
    else
        return false;
    return true;
}

static void read_item(dict_vals *v, mfu__span k, mfu__span val)
{
    double x;
    mfu__numkind kind;
    if (mfu__span_eq(k, "loss")) {
        v->has_loss = v->any_step_key = true;
        if (num_of(val, &x, &kind)) {
            v->loss_nonfinite = kind != MFU__NUM_FINITE;
            v->loss = v->loss_nonfinite ? NAN : x;
        }
    } else if (mfu__span_eq(k, "learning_rate")) {
        v->has_lr = v->any_step_key = true;
        v->lr = mfu__num_value(val);
    } else if (mfu__span_eq(k, "grad_norm")) {
        v->has_gn = v->any_step_key = true;
        if (num_of(val, &x, NULL))
            v->grad_norm = x; /* inf is what an overflowing step printed */
    } else if (mfu__span_eq(k, "epoch")) {
        v->has_epoch = true;
    } else if (mfu__span_eq(k, "num_input_tokens_seen")) {
        v->tokens_seen = mfu__num_value(val);
    } else if (summary_key(v, k, val)) {
        if (mfu__span_eq(k, "train_runtime"))
            v->has_runtime = true;
    } else if (mfu__span_starts(k, "eval_")) {
        v->has_eval = true;
    } else if (mfu__span_starts(k, "memory/") || mfu__span_starts(k, "tokens/") ||
               mfu__span_eq(k, "ppl")) {
        v->has_axolotl = true;
        double gib = mfu__num_value(val) * 1073741824.0;
        bool mem = mfu__span_starts(k, "memory/") &&
                   (mfu__span_find(k, "(GiB)") > 0 || mfu__span_find(k, "(gib)") > 0);
        if (mem && mfu__span_find(k, "reserved") > 0)
            v->mem_reserved = gib;
        else if (mem && mfu__span_find(k, "allocated") > 0)
            v->mem_alloc = gib;
        else if (mem && mfu__span_find(k, "active") > 0)
            v->mem_active = gib;
        else if (mfu__span_eq(k, "tokens/train_per_sec_per_gpu")) {
            x = mfu__num_value(val);
            v->tok_gpu = x > 0 ? x : NAN; /* 0: not measured in this window */
        }
    } else {
        custom_key(v, k, val);
    }
}

/* Read the dict at s; false when s is not a dict repr. */
static bool read_dict(mfu__span s, dict_vals *v)
{
    mfu__span body, k, val;
    vals_init(v);
    if (!mfu__pydict_open(s, &body))
        return false;
    int items = 0;
    while (mfu__pydict_next(&body, &k, &val)) {
        read_item(v, k, val);
        items++;
    }
    return items > 0;
}

static double memory_of(const dict_vals *v)
{
    return !isnan(v->mem_reserved) ? v->mem_reserved
           : !isnan(v->mem_alloc)  ? v->mem_alloc
           : !isnan(v->mem_active) ? v->mem_active
                                   : v->x_mem;
}

/* The dict of a line, also after a tqdm bar on the same line. */
static bool line_dict(mfu__span s, dict_vals *v, mfu__tqdm *bar, bool *with_bar)
{
    *with_bar = false;
    if (mfu__pydict_like(s))
        return read_dict(s, v);
    if (mfu__tqdm_parse(s, bar) && mfu__pydict_like(bar->rest)) {
        *with_bar = true;
        return read_dict(bar->rest, v);
    }
    return false;
}

/* Banner and summary side lines (scored HINT by both flavours). */
static const char *const side_marks[] = {
    "***** Running training *****",
    "Instantaneous batch size per device = ",
    "Total train batch size (w. parallel, distributed & accumulation) = ",
    "Gradient Accumulation steps = ",
    "Total optimization steps = ",
    "Number of trainable parameters = ",
    "***** train metrics *****",
    "TrainOutput(global_step=",
};

static bool peft_line(mfu__span s)
{
    return mfu__span_starts(s, "trainable params: ") && mfu__span_find(s, " || all params: ") > 0;
}

int mfu__hft_detect(const mfu__line *ln, bool axolotl)
{
    mfu__span s = {ln->text, ln->len};
    dict_vals v;
    mfu__tqdm bar;
    bool with_bar;
    /* str(dict) quotes keys with ' (JSON lines, with ", are the generic jsonl reader's) */
    mfu__span d = s;
    if (!mfu__span_starts(d, "{'") && mfu__tqdm_parse(s, &bar))
        d = bar.rest;
    if (mfu__span_starts(d, "{'") && line_dict(s, &v, &bar, &with_bar)) {
        if (v.has_axolotl) /* Axolotl's keys: its format wins, plain HF only hints */
            return axolotl ? MFU__DETECT_STEP : MFU__DETECT_HINT;
        if (axolotl)
            return MFU__DETECT_NONE;
        if (v.has_runtime || (v.has_loss && (v.has_lr || v.has_epoch || v.has_gn)))
            return MFU__DETECT_STEP;
        return v.has_eval || v.any_step_key ? MFU__DETECT_HINT : MFU__DETECT_NONE;
    }
    if (axolotl && mfu__span_find((mfu__span){ln->raw, ln->raw_len}, "[axolotl.") >= 0)
        return MFU__DETECT_HINT;
    for (size_t i = 0; i < MFU__ARRAY_LEN(side_marks); i++)
        if (mfu__span_find(s, side_marks[i]) >= 0)
            return MFU__DETECT_HINT;
    return peft_line(s) ? MFU__DETECT_HINT : MFU__DETECT_NONE;
}

/* ---- reading ---------------------------------------------------------------------------- */

static bool train_bar(const mfu__hft *st, int64_t total)
{
    if (st->total_steps > 0)
        return total == st->total_steps;
    if (st->train_total > 0)
        return total == st->train_total;
    return true;
}

static void note_bar(mfu__hft *st, const mfu__tqdm *bar)
{
    if (!train_bar(st, bar->total))
        return;
    st->bar_fresh = true;
    st->bar_n = bar->n;
    st->bar_total = bar->total;
    st->bar_s_per_it = bar->s_per_it;
    if (bar->n > st->bar_max_n)
        st->bar_max_n = bar->n;
}

static void set_convention(mfu__hft *st, mfu__ictx *c)
{
    mfu_run_meta *m = mfu__meta(c);
    if (m->convention[0])
        return;
    mfu__strlcpy(m->convention,
                 st->axolotl ? "Axolotl (HF Trainer): tokens/train_per_sec_per_gpu per GPU over "
                               "the log window; summary as HF Trainer"
                             : "HF Trainer: step time = tqdm smoothed s/it; summary samples/s "
                               "global, tokens/s per device, total_flos = 6 N tokens",
                 sizeof m->convention);
}

/* Merge v's summary figures into the pending summary (starting one when none is pending);
 * overwrite replaces figures already there, else only absent ones are filled (the metrics
 * block repeats the dict's figures, rounded). */
static void summary_take(mfu__hft *st, const dict_vals *v, bool overwrite)
{
    mfu__hft_summary *u = &st->sum;
    const double *src[] = {&v->runtime_s,    &v->samples_per_s, &v->steps_per_s,
                           &v->tokens_per_s, &v->total_flos,    &v->train_loss};
    double *dst[] = {&u->runtime_s,    &u->samples_per_s, &u->steps_per_s,
                     &u->tokens_per_s, &u->total_flos,    &u->loss};
    if (!u->pending) {
        u->runtime_s = u->samples_per_s = u->steps_per_s = u->tokens_per_s = NAN;
        u->total_flos = u->loss = u->memory_bytes = NAN;
    }
    for (size_t i = 0; i < MFU__ARRAY_LEN(src); i++)
        if (!isnan(*src[i]) && (overwrite || isnan(*dst[i])))
            *dst[i] = *src[i];
    if (isnan(u->tokens_per_s))
        u->tokens_per_s = v->tok_gpu;
    double mem = memory_of(v);
    if (!isnan(mem) && (overwrite || isnan(u->memory_bytes)))
        u->memory_bytes = mem;
    u->pending = u->seen = true;
}

static mfu_status summary_emit(mfu__hft *st, mfu__ictx *c)
{
    mfu__hft_summary *u = &st->sum;
    if (!u->pending)
        return MFU_OK;
    u->pending = false;
    int64_t step;
    if (st->last_step > 0 && !st->numbered_by_bar) {
        step = st->last_step; /* rows are ordinals: complete the last one */
    } else {
        step = st->final_step > st->bar_max_n ? st->final_step : st->bar_max_n;
        if (step < st->last_step)
            step = st->last_step;
        if (step <= 0)
            step = st->total_steps > 0 ? st->total_steps : 1;
    }
    mfu_step s;
    mfu_step_init(&s);
    s.step = step;
    if (u->steps_per_s > 0)
        s.step_time_s = 1.0 / u->steps_per_s;
    if (!isnan(u->samples_per_s)) {
        s.samples_per_s = u->samples_per_s;
        s.samples_per_s_scope = MFU_SCOPE_GLOBAL;
    }
    if (!isnan(u->tokens_per_s)) {
        s.tokens_per_s = u->tokens_per_s;
        s.tokens_per_s_scope = MFU_SCOPE_DEVICE;
    }
    if (u->total_flos > 0 && u->runtime_s > 0) {
        s.flops_per_s = u->total_flos / u->runtime_s;
        s.flops_per_s_scope = MFU_SCOPE_GLOBAL;
    }
    if (step > st->last_step)
        s.loss = u->loss; /* a row of its own; a logged row keeps its own loss (or NaN) */
    s.memory_bytes = u->memory_bytes;
    set_convention(st, c);
    mfu_status rc = mfu__emit(c, &s);
    if (rc == MFU_OK && step > st->last_step)
        st->last_step = step;
    return rc;
}

static mfu_status step_dict(mfu__hft *st, mfu__ictx *c, const dict_vals *v)
{
    mfu_status rc = summary_emit(st, c); /* a new training run after a finished one */
    if (rc != MFU_OK)
        return rc;
    mfu_step s;
    mfu_step_init(&s);
    if (st->bar_fresh && st->bar_n > st->last_step) {
        s.step = st->bar_n;
        s.step_time_s = st->bar_s_per_it;
        st->numbered_by_bar = true;
        st->train_total = st->bar_total;
    } else {
        s.step = st->last_step + 1;
    }
    s.loss = v->loss;
    if (v->loss_nonfinite)
        s.flags |= MFU_STEP_LOSS_NAN;
    s.lr = v->lr;
    s.grad_norm = v->grad_norm;
    s.memory_bytes = memory_of(v);
    if (!isnan(v->tok_gpu)) {
        s.tokens_per_s = v->tok_gpu;
        s.tokens_per_s_scope = MFU_SCOPE_DEVICE;
    } else if (!isnan(v->x_tps)) {
        s.tokens_per_s = v->x_tps;
        s.tokens_per_s_scope = v->x_tps_scope;
    }
    if (!isnan(v->x_step_s))
        s.step_time_s = v->x_step_s; /* the trainer's own step time before the bar's smoothing */
    if (!isnan(v->x_flops)) {
        s.flops_per_s = v->x_flops;
        s.flops_per_s_scope = v->x_flops_scope;
    }
    if (!isnan(v->x_mfu)) {
        s.mfu = v->x_mfu;
        s.mfu_scope = MFU_SCOPE_DEVICE;
    }
    /* the run's clock in a step dict (train_runtime, num_input_tokens_seen): growth since the
     * previous row numbered the same way. num_input_tokens_seen alone (the Trainer's
     * include_num_input_tokens_seen, without Unsloth's clock) gives the tokens per step too. */
    bool by_bar = st->numbered_by_bar && s.step == st->bar_n && st->bar_fresh;
    if (isfinite(v->runtime_s) || isfinite(v->tokens_seen)) {
        double ds = (double)(s.step - st->clock_step);
        if (st->clock_prev && st->clock_prev_bar == by_bar && ds > 0) {
            if (isnan(s.step_time_s) && isfinite(v->runtime_s) &&
                v->runtime_s >= st->clock_runtime_s)
                s.step_time_s = (v->runtime_s - st->clock_runtime_s) / ds;
            if (isfinite(v->tokens_seen) && isfinite(st->clock_tokens) &&
                v->tokens_seen >= st->clock_tokens)
                s.tokens = (v->tokens_seen - st->clock_tokens) / ds;
        }
        st->clock_prev = true;
        st->clock_prev_bar = by_bar;
        st->clock_step = s.step;
        st->clock_runtime_s = v->runtime_s;
        st->clock_tokens = v->tokens_seen;
    }
    set_convention(st, c);
    rc = mfu__emit(c, &s);
    if (rc == MFU_OK)
        st->last_step = s.step;
    return rc;
}

static mfu_status dict_line(mfu__hft *st, mfu__ictx *c, const dict_vals *v)
{
    mfu_status rc = MFU_OK;
    if (v->has_runtime && !v->has_loss) { /* a step dict with the clock has a 'loss' */
        summary_take(st, v, true);
        st->bar_fresh = false;
        mfu__used(c);
    } else if (v->has_eval) {
        mfu__used(c); /* evaluation does not advance the training bar: it stays fresh */
    } else if (v->any_step_key) {
        rc = step_dict(st, c, v);
        st->bar_fresh = false;
    }
    return rc;
}

/* "label = N" anywhere in s: the integer after it. */
static bool banner_int(mfu__span s, const char *label, int64_t *out)
{
    long at = mfu__span_find(s, label);
    if (at < 0)
        return false;
    size_t k = (size_t)at + strlen(label);
    return mfu__int_parse((mfu__span){s.p + k, s.n - k}, out);
}

static bool banner_line(mfu__hft *st, mfu__ictx *c, mfu__span s)
{
    mfu_run_meta *m = mfu__meta(c);
    int64_t x;
    if (banner_int(s, "Instantaneous batch size per device = ", &x))
        m->micro_batch = x;
    else if (banner_int(s,
                        "Total train batch size (w. parallel, distributed & accumulation) = ", &x))
        m->global_batch = x;
    else if (banner_int(s, "Gradient Accumulation steps = ", &x))
        m->grad_accum = x;
    else if (banner_int(s, "Total optimization steps = ", &x))
        st->total_steps = x;
    else if (mfu__span_find(s, "***** Running training *****") >= 0 ||
             mfu__span_find(s, "Number of trainable parameters = ") >= 0)
        ; /* recognised; trainable (not total) parameters are not the model size */
    else if (peft_line(s)) {
        long at = mfu__span_find(s, " || all params: ");
        mfu__span r = mfu__span_from(s, (size_t)at + MFU__LIT_LEN(" || all params: "));
        long bar = mfu__span_find(r, " ||");
        if (bar > 0)
            r.n = (size_t)bar;
        if (mfu__int_parse(r, &x) && x > 0)
            m->model_params = (double)x;
    } else
        return false;
    mfu__used(c);
    return true;
}

/* TrainOutput(global_step=200, training_loss=2.81, metrics={...}) */
static void train_output(mfu__hft *st, mfu__ictx *c, mfu__span s)
{
    long at = mfu__span_find(s, "TrainOutput(global_step=");
    mfu__span r = mfu__span_from(s, (size_t)at + MFU__LIT_LEN("TrainOutput(global_step="));
    long comma = mfu__span_find(r, ",");
    int64_t g;
    if (comma > 0 && mfu__int_parse((mfu__span){r.p, (size_t)comma}, &g) && g > 0)
        st->final_step = g;
    long md = mfu__span_find(r, "metrics={");
    if (md >= 0 && !st->sum.seen) {
        mfu__span d = mfu__span_from(r, (size_t)md + MFU__LIT_LEN("metrics="));
        if (d.n && d.p[d.n - 1] == ')')
            d.n--;
        dict_vals v;
        if (read_dict(d, &v) && v.has_runtime)
            summary_take(st, &v, false);
    }
    mfu__used(c);
}

mfu_status mfu__hft_line(mfu__hft *st, mfu__ictx *c, const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    if (st->block) {
        mfu__span k, v;
        if (mfu__kv(s, " = ", &k, &v) && k.n && mfu__span_find(k, " ") < 0) {
            dict_vals dv;
            vals_init(&dv);
            if (st->block == 1 && summary_key(&dv, k, v))
                summary_take(st, &dv, false);
            mfu__used(c);
            return MFU_OK;
        }
        st->block = 0;
    }
    dict_vals v;
    mfu__tqdm bar;
    bool with_bar;
    if (line_dict(s, &v, &bar, &with_bar)) {
        if (with_bar)
            note_bar(st, &bar);
        return dict_line(st, c, &v);
    }
    if (mfu__tqdm_parse(s, &bar)) {
        note_bar(st, &bar); /* a plain bar: remembered, not counted as used */
        return MFU_OK;
    }
    if (mfu__span_find(s, "***** train metrics *****") >= 0) {
        st->block = 1;
        vals_init(&v);
        summary_take(st, &v, false); /* the block is a summary even without a dict before it */
        mfu__used(c);
        return MFU_OK;
    }
    if (mfu__span_find(s, " metrics *****") >= 0 && mfu__span_find(s, "***** ") >= 0) {
        st->block = 2; /* eval / predict metrics */
        mfu__used(c);
        return MFU_OK;
    }
    if (mfu__span_find(s, "TrainOutput(global_step=") >= 0) {
        train_output(st, c, s);
        return MFU_OK;
    }
    banner_line(st, c, s);
    return MFU_OK;
}

mfu_status mfu__hft_finish(mfu__hft *st, mfu__ictx *c)
{
    return summary_emit(st, c);
}
