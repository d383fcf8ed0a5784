/*
 * test_report.c - the report library (src/report): robust statistics, the warm-up rule, the
 * framework profiles (peaks and date rules), reports of synthetic runs built row by row, and
 * every disagreement cause. A synthetic run's printed figures are made with the model module
 * (mfu_flops_compute under the variant a framework would use: MHA instead of GQA, all experts,
 * a sparse peak ...), so each test checks that the report names the variant that made them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfu/mfu.h"
#include "report/internal.h"

#define NEAR(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol))
#define REL(a, b, tol) assert_true(fabs((double)(a) / (double)(b)-1) <= (tol))

/* 2024-09-03 and 2025-06-02 (UTC), before and after Megatron-LM's causal halving. */
#define T_2024 1725381519.0
#define T_2025 1748822400.0

/* ---- helpers -------------------------------------------------------------------------------- */

static mfu_arch preset(const char *name)
{
    mfu_arch a;
    assert_int_equal(mfu_preset_find(name, &a, NULL), MFU_OK);
    return a;
}

/* Training FLOPs per token of a under convention c / attention at seq (model, or hardware with
 * full recompute). */
static double flops(const mfu_arch *a, int64_t seq, mfu_convention c, mfu_attention att,
                    bool embeddings, mfu_recompute rc)
{
    mfu_workload wl;
    memset(&wl, 0, sizeof wl);
    wl.seq = seq;
    wl.recompute = rc;
    mfu_flops_options o;
    memset(&o, 0, sizeof o);
    o.convention = c;
    o.attention = att;
    o.count_embeddings = embeddings;
    mfu_flops f;
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (mfu_flops_compute(a, &wl, &o, &f, &e) != MFU_OK)
        fail_msg("flops: %s", e.message);
    return rc == MFU_RECOMPUTE_NONE ? f.model_flops : f.hardware_flops;
}

/* A run of n steps of a format: per-device tokens/s tpd (slightly varying), optional printed
 * FLOP/s per device (flops_per_token x tpd) and MFU (that / peak), timestamps from t0. */
typedef struct synth {
    const char *format;
    size_t n;
    double tpd;             /* tokens/s per device */
    double flops_per_token; /* 0: no FLOP/s printed */
    double peak;            /* 0: no MFU printed */
    double t0;              /* first timestamp, 0 none */
    double devices;         /* world size in the header, 0 none */
    double tokens;          /* tokens per step (global) with step time; 0: tps printed */
} synth;

static mfu_run *make(const synth *s)
{
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    mfu_run_meta *m = mfu_run_meta_mut(run);
    snprintf(m->format, sizeof m->format, "%s", s->format);
    if (s->devices > 0)
        m->world_size = (int64_t)s->devices;
    for (size_t i = 0; i < s->n; i++) {
        mfu_step st;
        mfu_step_init(&st);
        st.step = (int64_t)i + 1;
        double tpd = s->tpd * (1 + 0.001 * (double)(i % 3)); /* a little noise */
        if (s->t0 > 0)
            st.time_s = s->t0 + 10.0 * (double)i;
        if (s->tokens > 0) {
            st.tokens = s->tokens;
            st.step_time_s = s->tokens / (tpd * s->devices);
        } else {
            st.tokens_per_s = tpd;
            st.tokens_per_s_scope = MFU_SCOPE_DEVICE;
        }
        if (s->flops_per_token > 0) {
            st.flops_per_s = s->flops_per_token * tpd;
            st.flops_per_s_scope = MFU_SCOPE_DEVICE;
            if (s->peak > 0) {
                st.mfu = st.flops_per_s / s->peak;
                st.mfu_scope = MFU_SCOPE_DEVICE;
            }
        }
        assert_int_equal(mfu_run_append(run, &st, NULL, NULL), MFU_OK);
    }
    return run;
}

static mfu_report_input model_input(const char *name, int64_t seq, const char *device)
{
    mfu_report_input in;
    memset(&in, 0, sizeof in);
    in.has_arch = true;
    in.arch = preset(name);
    in.workload.seq = seq;
    in.device = device;
    return in;
}

static mfu_report *report(const mfu_run *run, const mfu_report_input *in)
{
    mfu_report *r = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (mfu_report_compute(run, in, &r, &e) != MFU_OK)
        fail_msg("report: %s", e.message);
    return r;
}

/* The first comparison of figure f (index skip: the skip-th one). */
static const mfu_report_comparison *cmp(const mfu_report *r, mfu_figure f, size_t skip)
{
    for (size_t i = 0; i < mfu_report_comparison_count(r); i++) {
        const mfu_report_comparison *x = mfu_report_comparison_at(r, i);
        if (x->figure == f && skip-- == 0)
            return x;
    }
    return NULL;
}

/* Build the run, report it and check that comparison (f, skip) disagrees with cause want. */
static void expect_cause(const synth *s, const mfu_report_input *in, mfu_figure f, size_t skip,
                         mfu_mismatch want)
{
    mfu_run *run = make(s);
    mfu_report *r = report(run, in);
    const mfu_report_comparison *x = cmp(r, f, skip);
    if (!x)
        fail_msg("no comparison %s #%zu", mfu_figure_name(f), skip);
    if (x->cause != want)
        fail_msg("%s: cause %s (%s), want %s; ratio %.4f", x->label, mfu_mismatch_name(x->cause),
                 x->explanation, mfu_mismatch_name(want), x->ratio);
    assert_false(x->agrees);
    assert_true(strlen(x->explanation) > 20);
    mfu_report_free(r);
    mfu_run_free(run);
}

/* ---- statistics and warm-up ----------------------------------------------------------------- */

static void stats_percentiles(void **state)
{
    (void)state;
    double x[12] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1, NAN, 100};
    uint8_t keep[12] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0};
    double scratch[12];
    mfu_report_stat s = mfu__stat(x, keep, 12, scratch);
    assert_int_equal(s.n, 10); /* NaN and the excluded 100 are left out */
    NEAR(s.median, 5.5, 1e-12);
    NEAR(s.mean, 5.5, 1e-12);
    NEAR(s.p10, 1.9, 1e-12); /* type 7: 1 + 0.9 x (2 - 1) */
    NEAR(s.p90, 9.1, 1e-12);
    s = mfu__stat(x, NULL, 0, scratch);
    assert_int_equal(s.n, 0);
    assert_true(isnan(s.median));
    double one = 3;
    s = mfu__stat(&one, NULL, 1, scratch);
    NEAR(s.p10, 3, 0);
    NEAR(s.p90, 3, 0);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Type-7 quantile of sorted v (the reference the selection must reproduce bit for bit). */
static double sorted_quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo + 1 >= n)
        return v[n - 1];
    if (pos == (double)lo) /* an order statistic itself (-0 stays -0) */
        return v[lo];
    return v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]);
}

/* mfu__stat selects its order statistics instead of sorting: on random series (with ties,
 * constant runs, sorted and reversed input, one value (its shortcut, -0 too), sizes 1 to 5000)
 * it gives what a sort gives, to the bit, and the mean of the sum in row order; of one value,
 * mfu__stat_one gives the same without reading the rows. */
static void stats_selection_equals_sort(void **state)
{
    (void)state;
    uint64_t r = 12345;
    double *x = malloc(5000 * sizeof *x), *sc = malloc(5000 * sizeof *sc),
           *ref = malloc(5000 * sizeof *ref);
    assert_true(x && sc && ref);
    for (int t = 0; t < 400; t++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t n = 1 + (size_t)((r >> 33) % (t < 200 ? 12 : 5000));
        int kind = t % 6;
        for (size_t i = 0; i < n; i++) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            double u = (double)(r >> 11) / 9007199254740992.0;
            x[i] = kind == 0   ? u
                   : kind == 1 ? floor(u * 4) /* many ties */
                   : kind == 2 ? (double)i    /* sorted */
                   : kind == 3 ? -(double)i   /* reversed */
                   : kind == 4 ? 7.25         /* constant */
                               : -0.0;        /* constant -0: interpolation gives +0 */
        }
        memcpy(ref, x, n * sizeof *x);
        qsort(ref, n, sizeof *ref, cmp_dbl);
        mfu_report_stat s = mfu__stat(x, NULL, n, sc);
        assert_int_equal(s.n, n);
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += x[i];
        double mean = sum / (double)n;
        assert_memory_equal(&s.mean, &mean, sizeof mean);
        double want[3] = {sorted_quantile(ref, n, 0.5), sorted_quantile(ref, n, 0.1),
                          sorted_quantile(ref, n, 0.9)};
        double got[3] = {s.median, s.p10, s.p90};
        for (int k = 0; k < 3; k++)
            if (memcmp(&want[k], &got[k], sizeof(double)) != 0)
                fail_msg("case %d (n %zu, kind %d) quantile %d: %.17g, sort gives %.17g", t, n,
                         kind, k, got[k], want[k]);
        if (kind >= 4) { /* a column of one value, not read (mfu__stat_one): the same bits,
                            with and without a keep mask */
            mfu_report_stat o = mfu__stat_one(x[0], NULL, n);
            assert_memory_equal(&o, &s, sizeof o);
            uint8_t *keep = malloc(n * sizeof *keep);
            assert_non_null(keep);
            for (size_t i = 0; i < n; i++)
                keep[i] = (i * 7 + (size_t)t) % 3 != 0;
            mfu_report_stat a = mfu__stat(x, keep, n, sc), b = mfu__stat_one(x[0], keep, n);
            assert_memory_equal(&a, &b, sizeof a);
            free(keep);
        }
    }
    mfu_report_stat none = mfu__stat_one(NAN, NULL, 10);
    assert_int_equal(none.n, 0);
    assert_true(isnan(none.mean) && isnan(none.median));
    free(x);
    free(sc);
    free(ref);
}

/* The TensorBoard record checksum: CRC-32C's catalogue check value (CRC-32/ISCSI), and the
 * empty input. */
static void export_crc32c(void **state)
{
    (void)state;
    assert_int_equal(mfu__crc32c("123456789", 9), 0xe3069283u);
    assert_int_equal(mfu__crc32c("", 0), 0);
}

/* ---- framework profiles --------------------------------------------------------------------- */

static double peak_of(const char *stack, const char *dev_id, mfu_dtype d, bool *fb)
{
    const mfu_device_info *dev = NULL;
    if (dev_id)
        assert_int_equal(mfu_device_find(dev_id, &dev, NULL), MFU_OK);
    char why[MFU_REPORT_TEXT_MAX];
    return mfu__stack_peak(mfu__stack_find(stack), dev, d, fb, why, sizeof why);
}

static void stack_peaks(void **state)
{
    (void)state;
    bool fb;
    /* torchtitan get_peak_flops (flops-and-peaks.md 3.2) */
    NEAR(peak_of("torchtitan", "h100-sxm", MFU_DTYPE_BF16, &fb), 989e12, 0);
    assert_false(fb);
    NEAR(peak_of("torchtitan", "b200", MFU_DTYPE_FP8, &fb), 2250e12, 0);  /* bf16 table only */
    NEAR(peak_of("torchtitan", "gh200", MFU_DTYPE_BF16, &fb), 989e12, 0); /* "H200" substring */
    NEAR(peak_of("torchtitan", "l40s", MFU_DTYPE_BF16, &fb), 312e12, 0);  /* "l40s" never hits */
    assert_true(fb);
    NEAR(peak_of("torchtitan", "rtx-4090", MFU_DTYPE_BF16, &fb), 312e12, 0);
    assert_true(fb);
    NEAR(peak_of("torchtitan", NULL, MFU_DTYPE_BF16, &fb), 0, 0);
    /* llm.c gpu_db (2.2): scaled H100 SXM, no Blackwell, no bf16 on V100 */
    NEAR(peak_of("llmc", "h100-sxm", MFU_DTYPE_BF16, &fb), 988.8e12, 1);
    NEAR(peak_of("llmc", "b200", MFU_DTYPE_BF16, &fb), 0, 0);
    assert_false(fb);
    NEAR(peak_of("llmc", "v100-sxm2", MFU_DTYPE_BF16, &fb), 0, 0);
    /* nanoGPT: 312e12 whatever the device, even none */
    NEAR(peak_of("nanogpt", NULL, MFU_DTYPE_BF16, &fb), 312e12, 0);
    NEAR(peak_of("nanogpt", "v100-sxm2", MFU_DTYPE_FP16, &fb), 312e12, 0);
    /* Composer: 1.979e15 / 2; H100 NVL has no key; fp8 column */
    NEAR(peak_of("composer", "h200-sxm", MFU_DTYPE_BF16, &fb), 989.5e12, 0);
    NEAR(peak_of("composer", "h100-sxm", MFU_DTYPE_FP8, &fb), 1979e12, 0);
    NEAR(peak_of("composer", "h100-nvl", MFU_DTYPE_BF16, &fb), 0, 0);
    /* Lightning's non-tensor-core GeForce rate */
    NEAR(peak_of("lightning", "rtx-4090", MFU_DTYPE_BF16, &fb), 82.6e12, 1);
    /* Megatron prints no MFU */
    NEAR(peak_of("megatron", "h100-sxm", MFU_DTYPE_BF16, &fb), 0, 0);
    assert_null(mfu__stack_find("jsonl"));
    assert_non_null(mfu__stack_find("TorchTitan")); /* case-insensitive */
    /* every profile is listed, those of formats not built yet too */
    size_t n = 0;
    bool neox = false;
    for (; mfu_report_stack_name(n); n++)
        neox = neox || strcmp(mfu_report_stack_name(n), "neox") == 0;
    assert_int_equal(n, 13);
    assert_true(neox);
    char list[200];
    assert_int_equal(mfu__stack_devices_with_peak(mfu__stack_find("torchtitan"), 2250e12, 0.01,
                                                  list, sizeof list),
                     2);
    assert_string_equal(list, "b200, b300");
}

static void stack_date_rules(void **state)
{
    (void)state;
    mfu_run *run = mfu_run_new();
    mfu_report_stack s;
    const mfu__stack *meg = mfu__stack_find("megatron");
    mfu__stack_resolve(meg, run, (int64_t)T_2024, &s);
    assert_int_equal(s.attention, MFU_ATTENTION_FULL);
    assert_non_null(strstr(s.rule, "2024-09-03"));
    assert_non_null(strstr(s.rule, "before 2025-03-06"));
    mfu__stack_resolve(meg, run, (int64_t)T_2025, &s);
    assert_int_equal(s.attention, MFU_ATTENTION_CAUSAL);
    assert_true(s.counts_padding);
    mfu__stack_resolve(meg, run, 1780000000, &s); /* 2026-05-28: real tokens of THD batches */
    assert_false(s.counts_padding);
    mfu__stack_resolve(meg, run, 0, &s);
    assert_int_equal(s.attention, MFU_ATTENTION_CAUSAL);
    assert_non_null(strstr(s.rule, "no date"));
    /* Megatron-DeepSpeed prints TFLOPs with recompute (Narayanan Eq. 3) */
    snprintf(mfu_run_meta_mut(run)->convention, MFU_META_STR, "Megatron-DeepSpeed: TFLOPs");
    mfu__stack_resolve(meg, run, 0, &s);
    assert_int_equal(s.convention, MFU_CONV_MEGATRON_2021);
    assert_true(s.counts_recompute);
    assert_string_equal(s.framework, "Megatron-DeepSpeed");
    /* MaxText without Tokens/s: the 2023 layout and formula */
    mfu__stack_resolve(mfu__stack_find("maxtext"), run, 0, &s);
    assert_int_equal(s.convention, MFU_CONV_MAXTEXT_2023);
    mfu__stack_resolve(mfu__stack_find("nemo"), run, 1700000000, &s);
    assert_int_equal(s.attention, MFU_ATTENTION_FULL);
    mfu_run_free(run);
}

/* ---- reports of synthetic runs -------------------------------------------------------------- */

/* No model and no device: throughput and the log's own figures, what the log implies, and the
 * missing pieces with their options. */
static void no_model(void **state)
{
    (void)state;
    synth s = {"torchtitan", 6, 10000, 31.3e9, 2250e12, 0, 0, 0};
    mfu_run *run = make(&s);
    mfu_report *r = report(run, NULL);
    const mfu_report_context *c = mfu_report_get_context(r);
    assert_false(c->has_model);
    assert_true(isnan(c->peak_flops_per_s));
    REL(c->implied_peak_flops_per_s, 2250e12, 1e-9);
    REL(c->implied_flops_per_token, 31.3e9, 1e-9);
    mfu_report_stat tpd = mfu_report_summary(r, MFU_RS_TOKENS_PER_S_PER_DEVICE);
    assert_int_equal(tpd.n, 6);
    REL(tpd.median, 10000 * 1.001, 1e-12);
    /* no model: the MFU is the log's own (its TFLOP/s over its peak), said to be so */
    assert_true(c->mfu_from_log);
    mfu_report_stat m = mfu_report_summary(r, MFU_RS_MFU);
    assert_int_equal(m.n, 6);
    REL(m.median, mfu_report_summary(r, MFU_RS_REPORTED_MFU).median, 1e-12);
    assert_int_equal(mfu_report_summary(r, MFU_RS_TOKENS_PER_S).n, 0); /* devices unknown */
    assert_int_equal(mfu_report_missing_count(r), 2);
    assert_string_equal(mfu_report_missing_at(r, 0)->what, "model");
    assert_non_null(strstr(mfu_report_missing_at(r, 0)->option, "--model"));
    assert_non_null(strstr(mfu_report_missing_at(r, 0)->needed_for, "mfu's own"));
    assert_string_equal(mfu_report_missing_at(r, 1)->what, "device");
    assert_non_null(strstr(mfu_report_missing_at(r, 1)->option, "--device"));
    assert_int_equal(mfu_report_comparison_count(r), 0);
    bool b200 = false;
    for (size_t i = 0; i < mfu_report_note_count(r); i++)
        b200 = b200 || strstr(mfu_report_note_at(r, i), "b200, b300") != NULL;
    assert_true(b200);
    mfu_report_free(r);
    mfu_run_free(run);
}

/* A torchtitan log whose figures are exactly torchtitan's: both comparisons agree, and the
 * report's own MFU is the exact convention on the dense peak. */
static void torchtitan_agrees(void **state)
{
    (void)state;
    mfu_arch a = preset("llama3-8b");
    double ft = flops(&a, 8192, MFU_CONV_TORCHTITAN, MFU_ATTENTION_DEFAULT, false, 0);
    double fe = flops(&a, 8192, MFU_CONV_EXACT, MFU_ATTENTION_DEFAULT, false, 0);
    synth s = {"torchtitan", 8, 5860, ft, 989e12, 0, 8, 0};
    mfu_run *run = make(&s);
    mfu_report_input in = model_input("llama3-8b", 8192, "h100-sxm");
    mfu_report *r = report(run, &in);
    const mfu_report_comparison *x = cmp(r, MFU_FIGURE_FLOPS_PER_S, 0);
    assert_non_null(x);
    assert_true(x->agrees);
    NEAR(x->ratio, 1, 1e-12);
    assert_int_equal(x->cause, MFU_MISMATCH_NONE);
    x = cmp(r, MFU_FIGURE_MFU, 0);
    assert_non_null(x);
    assert_true(x->agrees);
    NEAR(x->peak_flops_per_s, 989e12, 0);
    assert_null(cmp(r, MFU_FIGURE_MFU, 1)); /* 989 vs 989.5: within 1 %, no third row */
    mfu_report_stat m = mfu_report_summary(r, MFU_RS_MFU);
    REL(m.median, fe * 5860 * 1.001 / 989.5e12, 1e-12);
    mfu_report_stat g = mfu_report_summary(r, MFU_RS_TOKENS_PER_S);
    REL(g.median, 8 * 5860 * 1.001, 1e-12);
    const mfu_report_context *c = mfu_report_get_context(r);
    assert_int_equal(c->stack.convention, MFU_CONV_TORCHTITAN);
    assert_int_equal(c->stack.attention, MFU_ATTENTION_FULL);
    REL(c->stack_flops_per_token, ft, 1e-15);
    assert_int_equal(c->devices_source, MFU_SRC_LOG);
    assert_int_equal(mfu_report_missing_count(r), 0);
    mfu_report_free(r);
    mfu_run_free(run);
}

static void cause_peaks(void **state)
{
    (void)state;
    mfu_arch a = preset("llama3-8b");
    double ft = flops(&a, 8192, MFU_CONV_TORCHTITAN, MFU_ATTENTION_DEFAULT, false, 0);
    mfu_report_input in = model_input("llama3-8b", 8192, "h100-sxm");
    /* sparse: divided by 1979 TFLOP/s = 2 x 989.5 */
    synth s = {"torchtitan", 6, 5860, ft, 1979e12, 0, 0, 0};
    expect_cause(&s, &in, MFU_FIGURE_MFU, 0, MFU_MISMATCH_SPARSE_PEAK);
    /* half the dense peak */
    s.peak = 989.5e12 / 2;
    expect_cause(&s, &in, MFU_FIGURE_MFU, 0, MFU_MISMATCH_HALF_PEAK);
    /* torchtitan on an L40S: its A100 fallback; its own MFU agrees, the device's differs */
    in.device = "l40s";
    s.peak = 312e12;
    s.tpd = 2000;
    expect_cause(&s, &in, MFU_FIGURE_MFU, 1, MFU_MISMATCH_A100_FALLBACK);
    mfu_run *run = make(&s);
    mfu_report *r = report(run, &in);
    assert_true(cmp(r, MFU_FIGURE_MFU, 0)->agrees);
    NEAR(cmp(r, MFU_FIGURE_MFU, 1)->ratio, 366.5 / 312, 0.003);
    mfu_report_free(r);
    mfu_run_free(run);
    /* Lightning's table gives the RTX 4090 its non-tensor rate, 82.6 (tensor: 165.2) */
    mfu_report_input li = in;
    li.device = "rtx-4090";
    li.flops.convention = MFU_CONV_EXACT;
    double fl = flops(&a, 8192, MFU_CONV_EXACT, MFU_ATTENTION_FULL, false, 0);
    synth l = {"lightning", 6, 300, fl, 82.6e12, 0, 0, 0};
    expect_cause(&l, &li, MFU_FIGURE_MFU, 1, MFU_MISMATCH_STACK_PEAK);
}

/* nanoGPT divides by 312e12 on a V100; its EMA is replayed. */
static void cause_nanogpt_hardcoded(void **state)
{
    (void)state;
    mfu_arch a = preset("gpt2");
    double fn = flops(&a, 1024, MFU_CONV_NANOGPT, MFU_ATTENTION_DEFAULT, false, 0);
    synth s = {"nanogpt", 10, 56000, fn, 312e12, 0, 1, 61440};
    mfu_report_input in = model_input("gpt2", 1024, "v100-sxm2");
    in.dtype_given = true;
    in.dtype = MFU_DTYPE_FP16;
    expect_cause(&s, &in, MFU_FIGURE_MFU, 1, MFU_MISMATCH_A100_HARDCODED);
    mfu_run *run = make(&s);
    mfu_report *r = report(run, &in);
    const mfu_report_comparison *x = cmp(r, MFU_FIGURE_MFU, 0);
    assert_true(x->agrees); /* the EMA of a steady MFU is that MFU */
    NEAR(x->ratio, 1, 0.002);
    NEAR(cmp(r, MFU_FIGURE_MFU, 1)->ratio, 125.0 / 312, 0.002);
    /* the recomputed column is an EMA: step 2 = 0.9 x step 1 + 0.1 x its own value */
    const double *sm = mfu_report_column(r, MFU_RS_STACK_MFU);
    const double *tps = mfu_report_column(r, MFU_RS_TOKENS_PER_S);
    REL(sm[0], fn * tps[0] / 312e12, 1e-12);
    REL(sm[1], 0.9 * sm[0] + 0.1 * fn * tps[1] / 312e12, 1e-12);
    mfu_report_free(r);
    mfu_run_free(run);
}

/* Megatron-format TFLOP/s made by a formula that simplifies the architecture. */
static void cause_formulas(void **state)
{
    (void)state;
    /* 8192 tokens: at 4096 the causal halving and "MHA and a 4h MLP" change Llama 3 8B's
     * count by the same 6 %, and the report would name both */
    mfu_report_input in = model_input("llama3-8b", 8192, "h100-sxm");
    mfu_arch a = preset("llama3-8b");
    synth s = {"megatron", 6, 3000, 0, 0, T_2024, 0, 0};
    const mfu_convention M = MFU_CONV_MEGATRON_2025;
    const mfu_attention F = MFU_ATTENTION_FULL;

    mfu_arch b = a;
    b.kv_heads = b.heads;
    s.flops_per_token = flops(&b, 8192, M, F, false, 0);
    expect_cause(&s, &in, MFU_FIGURE_FLOPS_PER_S, 0, MFU_MISMATCH_NO_GQA);
    b = a;
    b.gated_mlp = MFU_FLAG_NO;
    s.flops_per_token = flops(&b, 8192, M, F, false, 0);
    expect_cause(&s, &in, MFU_FIGURE_FLOPS_PER_S, 0, MFU_MISMATCH_NO_SWIGLU);
    b.ffn = 4 * b.hidden;
    s.flops_per_token = flops(&b, 8192, M, F, false, 0);
    expect_cause(&s, &in, MFU_FIGURE_FLOPS_PER_S, 0, MFU_MISMATCH_MLP_4H);
    b.kv_heads = b.heads;
    s.flops_per_token = flops(&b, 8192, M, F, false, 0);
    expect_cause(&s, &in, MFU_FIGURE_FLOPS_PER_S, 0, MFU_MISMATCH_MHA_4H);
    /* the log's formula was causal (dated 2024: Megatron's was full then) */
    s.flops_per_token = flops(&a, 8192, M, MFU_ATTENTION_CAUSAL, false, 0);
    expect_cause(&s, &in, MFU_FIGURE_FLOPS_PER_S, 0, MFU_MISMATCH_CAUSAL_ATTENTION);
    /* dated 2025 (causal expected) but full */
    s.t0 = T_2025;
    s.flops_per_token = flops(&a, 8192, M, F, false, 0);
    expect_cause(&s, &in, MFU_FIGURE_FLOPS_PER_S, 0, MFU_MISMATCH_FULL_ATTENTION);
    /* recomputation counted */
    s.flops_per_token = flops(&a, 8192, M, MFU_ATTENTION_CAUSAL, false, MFU_RECOMPUTE_FULL);
    expect_cause(&s, &in, MFU_FIGURE_FLOPS_PER_S, 0, MFU_MISMATCH_RECOMPUTE);
    /* torchtitan before PR #280: embeddings inside N */
    synth t = {"torchtitan", 6, 3000, 0, 0, 0, 0, 0};
    t.flops_per_token = flops(&a, 8192, MFU_CONV_TORCHTITAN, MFU_ATTENTION_DEFAULT, true, 0);
    expect_cause(&t, &in, MFU_FIGURE_FLOPS_PER_S, 0, MFU_MISMATCH_EMBEDDINGS);
    /* nothing known explains a 1.37x */
    t.flops_per_token = 1.37 * flops(&a, 8192, MFU_CONV_TORCHTITAN, 0, false, 0);
    expect_cause(&t, &in, MFU_FIGURE_FLOPS_PER_S, 0, MFU_MISMATCH_UNEXPLAINED);
}

static void cause_moe(void **state)
{
    (void)state;
    mfu_report_input in = model_input("mixtral-8x7b", 2048, "h100-sxm");
    mfu_arch a = preset("mixtral-8x7b");
    synth s = {"megatron", 6, 3000, 0, 0, T_2024, 0, 0};
    mfu_arch b = a;
    b.experts_per_token = b.experts;
    s.flops_per_token = flops(&b, 2048, MFU_CONV_MEGATRON_2025, MFU_ATTENTION_FULL, false, 0);
    expect_cause(&s, &in, MFU_FIGURE_FLOPS_PER_S, 0, MFU_MISMATCH_ALL_EXPERTS);
    b = a;
    b.experts_per_token = 1;
    s.flops_per_token = flops(&b, 2048, MFU_CONV_MEGATRON_2025, MFU_ATTENTION_FULL, false, 0);
    expect_cause(&s, &in, MFU_FIGURE_FLOPS_PER_S, 0, MFU_MISMATCH_NO_MOE);
}

/* A generic log whose FLOP/s count padding tokens as real ones. */
static void cause_padding(void **state)
{
    (void)state;
    mfu_arch a = preset("llama3-8b");
    double fe = flops(&a, 4096, MFU_CONV_EXACT, MFU_ATTENTION_DEFAULT, false, 0);
    synth s = {"jsonl", 6, 3000, fe, 0, 0, 8, 8 * 4096.0 * 16};
    mfu_report_input in = model_input("llama3-8b", 4096, "h100-sxm");
    in.real_tokens_per_step = 0.75 * s.tokens;
    expect_cause(&s, &in, MFU_FIGURE_FLOPS_PER_S, 0, MFU_MISMATCH_PADDING);
    mfu_run *run = make(&s);
    mfu_report *r = report(run, &in);
    NEAR(mfu_report_get_context(r)->real_fraction, 0.75, 1e-12);
    /* MFU counts the real tokens, HFU every token that was computed */
    mfu_report_stat m = mfu_report_summary(r, MFU_RS_MFU);
    mfu_report_stat h = mfu_report_summary(r, MFU_RS_HFU);
    REL(m.median / h.median, 0.75, 1e-12);
    REL(m.median, 0.75 * fe * 3000 * 1.001 / 989.5e12, 1e-9);
    mfu_report_free(r);
    mfu_run_free(run);
}

/* Recomputation raises HFU, never MFU; an MFU above 100 % is excluded as impossible. */
static void hfu_and_impossible(void **state)
{
    (void)state;
    mfu_arch a = preset("llama3-8b");
    double fe = flops(&a, 4096, MFU_CONV_EXACT, 0, false, 0);
    double fh = flops(&a, 4096, MFU_CONV_EXACT, 0, false, MFU_RECOMPUTE_FULL);
    synth s = {"jsonl", 6, 4000, 0, 0, 0, 8, 8 * 4096.0 * 4};
    mfu_run *run = make(&s);
    mfu_step big;
    mfu_step_init(&big);
    big.step = 7;
    big.tokens = s.tokens;
    big.step_time_s = s.tokens / (8 * 4000.0) / 4.5; /* 4.5x faster: MFU above 100 % */
    assert_int_equal(mfu_run_append(run, &big, NULL, NULL), MFU_OK);
    mfu_report_input in = model_input("llama3-8b", 4096, "h100-sxm");
    in.workload.recompute = MFU_RECOMPUTE_FULL;
    mfu_report *r = report(run, &in);
    mfu_report_stat m = mfu_report_summary(r, MFU_RS_MFU);
    mfu_report_stat h = mfu_report_summary(r, MFU_RS_HFU);
    REL(h.median / m.median, fh / fe, 1e-12);
    assert_true(h.median > m.median);
    assert_int_equal(mfu_report_step_state_at(r, 6), MFU_STEP_IMPOSSIBLE);
    assert_int_equal(mfu_report_get_warmup(r)->impossible, 1);
    assert_int_equal(m.n, 6);
    mfu_report_free(r);
    mfu_run_free(run);
}

static void errors(void **state)
{
    (void)state;
    mfu_report *r = (mfu_report *)1;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_report_compute(NULL, NULL, &r, &e), MFU_E_INVALID);
    assert_null(r);
    assert_int_equal(mfu_report_compute(NULL, NULL, NULL, &e), MFU_E_INVALID);
    mfu_run *empty = mfu_run_new();
    assert_int_equal(mfu_report_compute(empty, NULL, &r, &e), MFU_E_EMPTY);
    assert_non_null(strstr(e.message, "--format"));
    mfu_run_free(empty);

    synth s = {"torchtitan", 4, 1000, 0, 0, 0, 0, 0};
    mfu_run *run = make(&s);
    mfu_report_input in;
    memset(&in, 0, sizeof in);
    in.device = "h999";
    assert_int_equal(mfu_report_compute(run, &in, &r, &e), MFU_E_UNKNOWN);
    assert_null(r);
    in.device = NULL;
    in.stack = "caffe";
    assert_int_equal(mfu_report_compute(run, &in, &r, &e), MFU_E_UNKNOWN);
    assert_non_null(strstr(e.message, "torchtitan"));
    in.stack = NULL;
    in.tolerance = 0.7;
    assert_int_equal(mfu_report_compute(run, &in, &r, &e), MFU_E_INVALID);
    assert_string_equal(e.field, "--tolerance");
    in.tolerance = 0;
    in.devices = -1;
    assert_int_equal(mfu_report_compute(run, &in, &r, &e), MFU_E_INVALID);
    in.devices = 0;
    in.device = "v100-sxm2"; /* no bf16 on a V100: an error when the dtype was given */
    in.dtype_given = true;
    in.dtype = MFU_DTYPE_BF16;
    assert_int_equal(mfu_report_compute(run, &in, &r, &e), MFU_E_UNSUPPORTED);
    in.dtype_given = false; /* ... and a note when it was only the default */
    assert_int_equal(mfu_report_compute(run, &in, &r, &e), MFU_OK);
    assert_true(isnan(mfu_report_get_context(r)->peak_flops_per_s));
    mfu_report_free(r);
    in.device = NULL;
    in.tokens_per_step = 1000;
    in.real_tokens_per_step = 2000;
    assert_int_equal(mfu_report_compute(run, &in, &r, &e), MFU_E_INVALID);
    assert_string_equal(e.field, "--real-tokens-per-step");
    /* a model the caller gave that cannot be counted is an error naming the flag */
    memset(&in, 0, sizeof in);
    in.has_arch = true;
    in.arch.layers = 2;
    in.workload.seq = 128;
    assert_int_equal(mfu_report_compute(run, &in, &r, &e), MFU_E_MISSING);
    mfu_run_free(run);
    mfu_report_free(NULL);
}

static void names(void **state)
{
    (void)state;
    assert_string_equal(mfu_mismatch_name(MFU_MISMATCH_SPARSE_PEAK), "sparse_peak");
    assert_string_equal(mfu_mismatch_name(MFU_MISMATCH_PADDING), "padding");
    assert_string_equal(mfu_mismatch_name(MFU_MISMATCH_COUNT_), "?");
    assert_string_equal(mfu_report_series_name(MFU_RS_MFU), "mfu");
    assert_string_equal(mfu_report_series_name(MFU_RS_REPORTED_MFU), "reported_mfu");
    assert_string_equal(mfu_report_series_name(MFU_RS_COUNT_), "?");
    assert_string_equal(mfu_figure_name(MFU_FIGURE_MFU), "mfu");
    assert_string_equal(mfu_report_step_state_name(MFU_STEP_WARMUP), "warmup");
    assert_string_equal(mfu_report_source_name(MFU_SRC_INPUT), "input");
    for (int i = 0; i < MFU_MISMATCH_COUNT_; i++)
        assert_string_not_equal(mfu_mismatch_name((mfu_mismatch)i), "?");
    for (int i = 0; i < MFU_RS_COUNT_; i++)
        assert_string_not_equal(mfu_report_series_name((mfu_report_series)i), "?");
    /* accessors accept NULL */
    assert_int_equal(mfu_report_step_count(NULL), 0);
    assert_null(mfu_report_column(NULL, MFU_RS_MFU));
    assert_true(isnan(mfu_report_summary(NULL, MFU_RS_MFU).median));
    assert_null(mfu_report_note_at(NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stats_percentiles),
        cmocka_unit_test(stats_selection_equals_sort),
        cmocka_unit_test(export_crc32c),
        cmocka_unit_test(stack_peaks),
        cmocka_unit_test(stack_date_rules),
        cmocka_unit_test(no_model),
        cmocka_unit_test(torchtitan_agrees),
        cmocka_unit_test(cause_peaks),
        cmocka_unit_test(cause_nanogpt_hardcoded),
        cmocka_unit_test(cause_formulas),
        cmocka_unit_test(cause_moe),
        cmocka_unit_test(cause_padding),
        cmocka_unit_test(hfu_and_impossible),
        cmocka_unit_test(errors),
        cmocka_unit_test(names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
