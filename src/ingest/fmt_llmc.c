/*
 * fmt_llmc.c - karpathy/llm.c train_gpt2.cu / train_gpt2.c (log-formats.md §5).
 *
 * Current layout (since 2024-06):
 *   step    1/32000 | loss 11.133732 (+nanz)| norm 52.9732 (+nanz)| lr 8.57e-07 | 3056.36 ms |
 *   42.6% bf16 MFU | 343080 tok/s
 * Older layouts of the same printf: "step N/M: train loss X (acc A) (T ms, K tok/s)",
 * "... train loss X norm G (T ms, K tok/s)", "... lr L ..." and "X% A100 fp16 MFU". The
 * reader therefore looks for each figure by its label instead of by position:
 *   "loss X", "norm X", "lr X", "X ms", "X% ... MFU", "X tok/s".
 * Step time: CUDA events around the step. MFU: per GPU, (6N + 6*L*C*T) FLOP/token against the
 * bf16 peak llm.c looks up by device name; -100.0% when the GPU is unknown (sentinel).
 * tok/s: global (all processes), bias-corrected EMA (0.95).
 *
 * Side lines: "batch_size B=16 * seq_len T=1024 * num_processes=8 and total_batch_size=1048576"
 * (micro batch, seq len, world size, tokens per step), "=> setting grad_accum_steps=8",
 * "num_parameters: 1557686400 => bytes: ...", "val loss X", "total average iteration time".
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "ingest/format.h"

/* "step N/M" then " |" or ":" */
static bool step_head(mfu__span s, int64_t *step, size_t *off)
{
    if (!mfu__span_starts(s, "step"))
        return false;
    size_t i = 4;
    if (i >= s.n || s.p[i] != ' ')
        return false;
    while (i < s.n && s.p[i] == ' ')
        i++;
    size_t a = i;
    while (i < s.n && isdigit((unsigned char)s.p[i]))
        i++;
    if (i == a || i >= s.n || s.p[i] != '/')
        return false;
    int64_t v;
    if (!mfu__int_parse((mfu__span){s.p + a, i - a}, &v))
        return false;
    i++;
    size_t b = i;
    while (i < s.n && isdigit((unsigned char)s.p[i]))
        i++;
    if (i == b)
        return false;
    if (step)
        *step = v;
    if (off)
        *off = i;
    return true;
}

static int llmc_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    if (step_head(s, NULL, NULL) && mfu__span_find(s, " ms") > 0 && mfu__span_find(s, " tok/s") > 0)
        return MFU__DETECT_STEP;
    if (mfu__span_starts(s, "batch_size B=") ||
        mfu__span_starts(s, "=> setting grad_accum_steps=") ||
        mfu__span_starts(s, "num_parameters: ") ||
        mfu__span_starts(s, "total average iteration time:"))
        return MFU__DETECT_HINT;
    return MFU__DETECT_NONE;
}

/* The number right after label (e.g. "loss "), NaN when absent. *kind gets its kind. */
static double after_label(mfu__span s, const char *label, mfu__numkind *kind)
{
    long at = mfu__span_find(s, label);
    if (at < 0)
        return NAN;
    const char *p = s.p + at + strlen(label), *end = s.p + s.n;
    mfu__num n;
    if (!mfu__num_scan(&p, end, &n))
        return NAN;
    if (kind)
        *kind = n.kind;
    return n.value;
}

/* The number that ends right before position pos (skipping blanks), times 10^shift (exact in
 * decimal); NaN when none. */
static double before(mfu__span s, size_t pos, int shift)
{
    size_t e = pos;
    while (e > 0 && s.p[e - 1] == ' ')
        e--;
    size_t b = e;
    while (b > 0 && (isdigit((unsigned char)s.p[b - 1]) || s.p[b - 1] == '.' || s.p[b - 1] == '-' ||
                     s.p[b - 1] == '+' || s.p[b - 1] == 'e'))
        b--;
    mfu__num n;
    if (b == e || !mfu__num_parse_shift((mfu__span){s.p + b, e - b}, shift, &n) ||
        n.kind != MFU__NUM_FINITE)
        return NAN;
    return n.value;
}

static double before_label(mfu__span s, const char *label, int shift)
{
    long at = mfu__span_find(s, label);
    return at < 0 ? NAN : before(s, (size_t)at, shift);
}

/* "key=value" integer after key in s. */
static bool int_after(mfu__span s, const char *key, int64_t *out)
{
    long at = mfu__span_find(s, key);
    if (at < 0)
        return false;
    const char *p = s.p + at + strlen(key), *end = s.p + s.n;
    mfu__num n;
    if (!mfu__num_scan(&p, end, &n) || n.kind != MFU__NUM_FINITE || n.value <= 0)
        return false;
    *out = mfu__int64_sat(n.value);
    return true;
}

static mfu_status header_line(mfu__ictx *c, mfu__span s)
{
    mfu_run_meta *m = mfu__meta(c);
    if (mfu__span_starts(s, "batch_size B=")) {
        int64_t v;
        if (int_after(s, "B=", &v))
            m->micro_batch = v;
        if (int_after(s, "T=", &v))
            m->seq_len = v;
        if (int_after(s, "num_processes=", &v))
            m->world_size = v;
        if (int_after(s, "total_batch_size=", &v))
            m->tokens_per_step = (double)v;
    } else if (mfu__span_starts(s, "=> setting grad_accum_steps=")) {
        int64_t v;
        if (int_after(s, "grad_accum_steps=", &v))
            m->grad_accum = v;
    } else if (mfu__span_starts(s, "num_parameters: ")) {
        double v = after_label(s, "num_parameters: ", NULL);
        if (!isnan(v) && v > 0)
            m->model_params = v;
    }
    mfu__used(c);
    return MFU_OK;
}

static mfu_status llmc_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    (void)state;
    mfu__span s = {ln->text, ln->len};
    int64_t step;
    size_t off;
    if (!step_head(s, &step, &off)) {
        if (llmc_detect(ln) == MFU__DETECT_HINT)
            return header_line(c, s);
        if (mfu__span_starts(s, "val loss "))
            mfu__used(c);
        return MFU_OK;
    }
    mfu__span r = {s.p + off, s.n - off};
    mfu_step st;
    mfu_step_init(&st);
    st.step = step;
    mfu__numkind lk = MFU__NUM_FINITE;
    st.loss = after_label(r, "loss ", &lk);
    if (lk == MFU__NUM_NAN || lk == MFU__NUM_INF) {
        st.loss = NAN;
        st.flags |= MFU_STEP_LOSS_NAN;
    }
    st.grad_norm = after_label(r, "norm ", NULL);
    st.lr = after_label(r, "lr ", NULL);
    st.step_time_s = before_label(r, " ms", -3);
    long mfu_at = mfu__span_find(r, " MFU");
    if (mfu_at > 0) {
        mfu__span head = {r.p, (size_t)mfu_at};
        long pct = -1;
        for (long i = (long)head.n - 1; i >= 0; i--)
            if (head.p[i] == '%') {
                pct = i;
                break;
            }
        if (pct > 0) {
            st.mfu = before(r, (size_t)pct, -2);
            st.mfu_scope = MFU_SCOPE_DEVICE;
        }
    }
    st.tokens_per_s = before_label(r, " tok/s", 0);
    if (!isnan(st.tokens_per_s))
        st.tokens_per_s_scope = MFU_SCOPE_GLOBAL;
    if (isnan(st.step_time_s)) {
        mfu__skip(c, "llm.c step line without 'N.NN ms'");
        return MFU_OK;
    }
    mfu_run_meta *m = mfu__meta(c);
    if (m->convention[0] == '\0')
        mfu__strlcpy(m->convention,
                     "llm.c: MFU per GPU, (6N + 6*L*C*T) FLOP/token, bf16 peak by device name "
                     "(-100% = unknown); tok/s global EMA",
                     sizeof m->convention);
    return mfu__emit(c, &st);
}

const mfu__format mfu__fmt_llmc = {
    .name = "llmc",
    .summary = "llm.c 'step N/M | loss X | norm G | lr L | T ms | M% bf16 MFU | K tok/s' lines",
    .detect = llmc_detect,
    .line = llmc_line,
};
