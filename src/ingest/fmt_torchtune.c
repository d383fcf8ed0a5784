/*
 * fmt_torchtune.c - torchtune recipe logs (log-formats.md §14).
 *
 * StdoutLogger / DiskLogger (metric_logger.log_dict every log_every_n_steps):
 *   Step 1 | loss:2.085338592529297 lr:2e-05 tokens_per_second_per_gpu:57.828881833956174
 * "name:value " pairs (raw Python reprs, no blank after ':'):
 *   loss                         training loss
 *   lr                           learning rate
 *   tokens_per_second_per_gpu    tokens of the step / step time / devices: per device
 *   grad_norm                    when gradient clipping is on
 *   peak_memory_reserved / _alloc / _active   GiB (reserved kept first)
 * Early-2024 recipes printed gpu_resources:<bytes> instead of throughput (kept as memory).
 *
 * The tqdm bar of the recipes carries "{epoch}|{global_step}|Loss: {loss}" as description:
 *   1|5|Loss: 0.9739330410957336:  50%|█████     | 5/10 [00:10<00:10,  2.05s/it]
 * Each redraw is a row for that global step (repeats merge), with the loss and the bar's
 * smoothed s/it as step time (the bar advances once per optimizer step).
 *
 * Header: "Model is initialized with precision torch.bfloat16." -> dtype; the resolved config
 * dump ("Running <Recipe> with resolved config:" then YAML) gives batch_size (per device),
 * gradient_accumulation_steps and max_seq_len.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "ingest/format.h"
#include "ingest/pyrepr.h"

typedef struct torchtune_state {
    bool in_config; /* inside the resolved-config dump */
} torchtune_state;

/* "Step N | " at the start; *rest gets what follows. */
static bool step_head(mfu__span s, int64_t *step, mfu__span *rest)
{
    if (!mfu__span_starts(s, "Step "))
        return false;
    mfu__span r = mfu__span_from(s, MFU__LIT_LEN("Step "));
    long bar = mfu__span_find(r, " | ");
    int64_t n;
    if (bar <= 0 || !mfu__int_parse((mfu__span){r.p, (size_t)bar}, &n))
        return false;
    mfu__span after = mfu__span_from(r, (size_t)bar + MFU__LIT_LEN(" | "));
    /* the first token must be name:value */
    long colon = mfu__span_find(after, ":");
    long blank = mfu__span_find(after, " ");
    if (colon <= 0 || (blank >= 0 && blank < colon) || (size_t)colon + 1 >= after.n ||
        after.p[colon + 1] == ' ')
        return false;
    if (step)
        *step = n;
    if (rest)
        *rest = after;
    return true;
}

/* tqdm description "E|S|Loss: X" of a bar; *step and *loss (span) out. */
static bool tqdm_desc(mfu__span s, mfu__tqdm *bar, int64_t *step, mfu__span *loss)
{
    if (!mfu__tqdm_parse(s, bar))
        return false;
    mfu__span d = bar->desc, e, st;
    if (!mfu__split_next(&d, "|", &e) || !mfu__split_next(&d, "|", &st))
        return false;
    int64_t ep;
    if (!mfu__int_parse(e, &ep) || !mfu__int_parse(st, step) || !mfu__span_starts(d, "Loss: "))
        return false;
    *loss = mfu__span_from(d, MFU__LIT_LEN("Loss: "));
    return true;
}

static int torchtune_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len}, raw = {ln->raw, ln->raw_len}, loss;
    mfu__tqdm bar;
    int64_t step;
    if (step_head(s, NULL, NULL) || tqdm_desc(s, &bar, &step, &loss))
        return MFU__DETECT_STEP;
    if (mfu__span_find(raw, ":torchtune.") >= 0 || mfu__span_find(s, "with resolved config:") > 0)
        return MFU__DETECT_HINT;
    return MFU__DETECT_NONE;
}

static void set_convention(mfu__ictx *c)
{
    mfu_run_meta *m = mfu__meta(c);
    if (!m->convention[0])
        mfu__strlcpy(m->convention,
                     "torchtune: tokens_per_second_per_gpu = step tokens / step time / devices "
                     "(per device, per logged step)",
                     sizeof m->convention);
}

static mfu_status step_line(mfu__ictx *c, int64_t step, mfu__span rest)
{
    mfu_step s;
    mfu_step_init(&s);
    s.step = step;
    double mem_res = NAN, mem_alloc = NAN, mem_active = NAN, gpu_res = NAN;
    mfu__span tok, key, val;
    while (mfu__split_next(&rest, " ", &tok)) {
        if (!mfu__kv(tok, ":", &key, &val))
            continue;
        mfu__num n;
        if (!mfu__num_parse(val, &n) || n.kind == MFU__NUM_NA)
            continue;
        double v = n.value;
        bool bad = n.kind != MFU__NUM_FINITE;
        if (mfu__span_eq(key, "loss")) {
            s.loss = bad ? NAN : v;
            if (bad)
                s.flags |= MFU_STEP_LOSS_NAN;
        } else if (mfu__span_eq(key, "lr")) {
            s.lr = bad ? NAN : v;
        } else if (mfu__span_eq(key, "tokens_per_second_per_gpu") && !bad) {
            s.tokens_per_s = v;
            s.tokens_per_s_scope = MFU_SCOPE_DEVICE;
        } else if (mfu__span_eq(key, "grad_norm")) {
            s.grad_norm = v;
        } else if (mfu__span_eq(key, "peak_memory_reserved") && !bad) {
            mem_res = v * 1073741824.0;
        } else if (mfu__span_eq(key, "peak_memory_alloc") && !bad) {
            mem_alloc = v * 1073741824.0;
        } else if (mfu__span_eq(key, "peak_memory_active") && !bad) {
            mem_active = v * 1073741824.0;
        } else if (mfu__span_eq(key, "gpu_resources") && !bad) {
            gpu_res = v;
        }
    }
    s.memory_bytes = !isnan(mem_res)      ? mem_res
                     : !isnan(mem_alloc)  ? mem_alloc
                     : !isnan(mem_active) ? mem_active
                                          : gpu_res;
    set_convention(c);
    return mfu__emit(c, &s);
}

static mfu_status bar_line(mfu__ictx *c, const mfu__tqdm *bar, int64_t step, mfu__span loss)
{
    mfu_step s;
    mfu_step_init(&s);
    s.step = step;
    mfu__num n;
    if (mfu__num_parse(loss, &n) && n.kind != MFU__NUM_NA) {
        bool bad = n.kind != MFU__NUM_FINITE;
        s.loss = bad ? NAN : n.value;
        if (bad)
            s.flags |= MFU_STEP_LOSS_NAN;
    }
    s.step_time_s = bar->s_per_it;
    set_convention(c);
    return mfu__emit(c, &s);
}

static void config_line(mfu_run_meta *m, mfu__span s)
{
    mfu__span k, v;
    if (!mfu__kv(s, ": ", &k, &v))
        return;
    int64_t x;
    bool isint = mfu__int_parse(v, &x) && x > 0;
    if (mfu__span_eq(k, "batch_size") && isint)
        m->micro_batch = x;
    else if (mfu__span_eq(k, "gradient_accumulation_steps") && isint)
        m->grad_accum = x;
    else if (mfu__span_eq(k, "max_seq_len") && isint)
        m->seq_len = x;
    else if (mfu__span_eq(k, "dtype") && v.n)
        mfu__span_copy(v, m->dtype, sizeof m->dtype);
}

static mfu_status torchtune_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    torchtune_state *st = state;
    mfu__span s = {ln->text, ln->len}, rest, loss;
    mfu__tqdm bar;
    int64_t step;
    if (step_head(s, &step, &rest)) {
        st->in_config = false;
        return step_line(c, step, rest);
    }
    if (tqdm_desc(s, &bar, &step, &loss)) {
        st->in_config = false;
        return bar_line(c, &bar, step, loss);
    }
    mfu_run_meta *m = mfu__meta(c);
    static const char prec_lit[] = "Model is initialized with precision torch.";
    long prec = mfu__span_find(s, prec_lit);
    if (prec >= 0) {
        mfu__span d = mfu__span_from(s, (size_t)prec + MFU__LIT_LEN(prec_lit));
        if (d.n && d.p[d.n - 1] == '.')
            d.n--;
        mfu__span_copy(mfu__span_eq(d, "bfloat16")  ? mfu__span_of("bf16")
                       : mfu__span_eq(d, "float16") ? mfu__span_of("fp16")
                       : mfu__span_eq(d, "float32") ? mfu__span_of("fp32")
                                                    : d,
                       m->dtype, sizeof m->dtype);
        mfu__used(c);
        return MFU_OK;
    }
    if (mfu__span_find(s, "with resolved config:") > 0) {
        st->in_config = true;
        mfu__used(c);
        return MFU_OK;
    }
    mfu__span raw = {ln->raw, ln->raw_len};
    if (mfu__span_find(raw, ":torchtune.") >= 0) {
        st->in_config = false;
        mfu__used(c);
        return MFU_OK;
    }
    if (st->in_config) {
        config_line(m, s);
        mfu__used(c);
    }
    return MFU_OK;
}

const mfu__format mfu__fmt_torchtune = {
    .name = "torchtune",
    .summary = "torchtune 'Step N | loss:X lr:Y tokens_per_second_per_gpu:Z' lines, tqdm bar",
    .detect = torchtune_detect,
    .state_size = sizeof(torchtune_state),
    .line = torchtune_line,
};
