/*
 * test_report_explain.c - the report's analysis (src/report/explain.c) and its HTML page
 * (src/report/html.c) on runs built here with a known truth:
 *   - a per-step sequence-length change reaches the analysis as a FLOPs-per-token change: one
 *     config boundary at the exact step, the workload term equal to the model module's ratio
 *     of FLOPs per token, the utilization term to the MFU change put in;
 *   - per-step devices, dtype, recomputation and useful tokens set capacity, hardware FLOPs
 *     and padding; per-rank observations make a straggler finding;
 *   - a printed MFU on a sparse peak becomes a reported_mismatch finding;
 *   - invariants and added findings through the report; errors without an analysis;
 *   - the page: self-contained, escaped, deterministic, with every section.
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

#define PEAK 989.5e12 /* h100-sxm bf16 dense, mfu's table */
#define DEV 8.0
#define TOKENS 1048576.0

static double model_flops(const char *name, int64_t seq, mfu_recompute rec, bool hardware)
{
    mfu_arch a;
    assert_int_equal(mfu_preset_find(name, &a, NULL), MFU_OK);
    mfu_workload wl;
    memset(&wl, 0, sizeof wl);
    wl.seq = seq;
    wl.recompute = rec;
    mfu_flops_options o;
    memset(&o, 0, sizeof o);
    mfu_flops f;
    assert_int_equal(mfu_flops_compute(&a, &wl, &o, &f, NULL), MFU_OK);
    return hardware ? f.hardware_flops : f.model_flops;
}

static mfu_report_input input(void)
{
    mfu_report_input in;
    memset(&in, 0, sizeof in);
    in.has_arch = true;
    assert_int_equal(mfu_preset_find("gpt2", &in.arch, NULL), MFU_OK);
    in.device = "h100-sxm";
    return in;
}

/* A deterministic ±1 % wiggle (no randomness needed for these checks). */
static double wiggle(size_t i)
{
    return 1 + 0.01 * sin(0.7 * (double)i) * cos(0.31 * (double)i);
}

static mfu_run *new_run(void)
{
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    mfu_run_meta *m = mfu_run_meta_mut(run);
    snprintf(m->format, sizeof m->format, "jsonl");
    m->world_size = (int64_t)DEV;
    m->seq_len = 4096;
    return run;
}

static void append(mfu_run *run, mfu_step *s)
{
    assert_int_equal(mfu_run_append(run, s, NULL, NULL), MFU_OK);
}

static mfu_report *compute(const mfu_run *run, const mfu_report_input *in)
{
    mfu_report *r = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status st = mfu_report_compute(run, in, &r, &e);
    if (st != MFU_OK)
        fail_msg("mfu_report_compute: %s", e.message);
    return r;
}

static const mfu_finding *find_kind(const mfu_analysis *a, const char *kind)
{
    for (size_t i = 0; i < mfu_analysis_finding_count(a); i++)
        if (strcmp(mfu_analysis_finding(a, i)->kind, kind) == 0)
            return mfu_analysis_finding(a, i);
    return NULL;
}

static double evidence(const mfu_finding *f, const char *name)
{
    for (size_t i = 0; i < f->nevidence; i++)
        if (strcmp(f->evidence[i].name, name) == 0)
            return f->evidence[i].value;
    return NAN;
}

/* Sequence 4096 -> 1024 at step 201 (batch x 4), MFU 0.45 -> 0.414. */
static void seq_change(void **state)
{
    (void)state;
    double f4 = model_flops("gpt2", 4096, MFU_RECOMPUTE_NONE, false);
    double f1 = model_flops("gpt2", 1024, MFU_RECOMPUTE_NONE, false);
    mfu_run *run = new_run();
    for (size_t i = 0; i < 400; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i + 1;
        bool second = i >= 200;
        s.seq_len = second ? 1024 : 4096;
        s.samples = TOKENS / s.seq_len;
        s.tokens = TOKENS;
        double mfu = second ? 0.414 : 0.45;
        s.step_time_s = TOKENS * (second ? f1 : f4) / (mfu * DEV * PEAK) * wiggle(i);
        s.loss = 3;
        append(run, &s);
    }
    mfu_report_input in = input();
    mfu_report *r = compute(run, &in);
    const mfu_analysis *a = mfu_report_analysis(r);
    assert_non_null(a);
    assert_string_equal(mfu_report_analysis_unit(r), "tokens");
    assert_int_equal(mfu_analysis_segment_count(a), 2);
    assert_int_equal(mfu_analysis_segment(a, 1)->start_step, 201);
    assert_int_equal(mfu_analysis_segment(a, 1)->cause, MFU_CAUSE_CONFIG);
    const mfu_decomposition *d = mfu_analysis_boundary(a, 0);
    assert_true(fabs(d->term[MFU_TERM_FLOPS_PER_TOKEN].pct - (f4 / f1 - 1)) < 1e-9);
    assert_true(fabs(d->term[MFU_TERM_MFU].pct - (0.414 / 0.45 - 1)) < 0.005);
    assert_true(fabs(d->term[MFU_TERM_CAPACITY].pct) < 1e-12);
    assert_true(d->term[MFU_TERM_TOKENS_PER_S].pct > 0);
    assert_non_null(strstr(d->config_change, "4096"));
    const mfu_finding *f = find_kind(a, "throughput_up_mfu_down");
    assert_non_null(f);
    /* the report's own per-step MFU uses each step's FLOPs per token */
    const double *m = mfu_report_column(r, MFU_RS_MFU);
    assert_true(fabs(m[10] * wiggle(10) - 0.45) < 1e-9);
    assert_true(fabs(m[300] * wiggle(300) - 0.414) < 1e-9);
    /* invariants through the report */
    mfu_invariant_result res;
    assert_int_equal(mfu_report_expect(r, "flops_per_token=const", &res, NULL), MFU_OK);
    assert_false(res.passed);
    assert_int_equal(mfu_report_expect(r, "mfu>=0.40", &res, NULL), MFU_OK);
    assert_true(res.passed);
    mfu_error e;
    assert_int_equal(mfu_report_expect(r, "mfu>>1", &res, &e), MFU_E_PARSE);
    assert_int_equal(mfu_analysis_invariant_count(a), 2);
    mfu_report_free(r);
    mfu_run_free(run);
}

/* Devices 8 -> 16, full recomputation on then off, padding: the terms and findings. */
static void devices_recompute_padding(void **state)
{
    (void)state;
    double f = model_flops("gpt2", 4096, MFU_RECOMPUTE_NONE, false);
    double h = model_flops("gpt2", 4096, MFU_RECOMPUTE_FULL, true);
    assert_true(h > f);
    mfu_run *run = new_run();
    for (size_t i = 0; i < 600; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i + 1;
        s.tokens = TOKENS;
        s.useful_tokens = 0.75 * TOKENS;
        bool big = i >= 200, full = i < 400;
        s.devices = big ? 16 : 8;
        s.recompute = full ? MFU_RECOMPUTE_FULL : MFU_RECOMPUTE_NONE;
        /* HFU 0.5 throughout: the time follows from the FLOPs executed per counted token */
        s.step_time_s = TOKENS * (full ? h : f) / (0.5 * s.devices * PEAK) * wiggle(i);
        append(run, &s);
    }
    mfu_report_input in = input();
    mfu_report *r = compute(run, &in);
    const mfu_analysis *a = mfu_report_analysis(r);
    assert_int_equal(mfu_analysis_segment_count(a), 3);
    const mfu_decomposition *d = mfu_analysis_boundary(a, 0);
    assert_true(fabs(d->term[MFU_TERM_CAPACITY].pct - 1.0) < 1e-9);
    assert_true(fabs(d->term[MFU_TERM_MFU].pct) < 0.005);
    d = mfu_analysis_boundary(a, 1);
    assert_int_equal(mfu_analysis_segment(a, 2)->start_step, 401);
    assert_true(fabs(d->term[MFU_TERM_MFU].pct - (h / f - 1)) < 0.005); /* HFU fixed: MFU up */
    const mfu_finding *rc = find_kind(a, "recompute");
    assert_non_null(rc);
    assert_true(fabs(evidence(rc, "recompute_overhead") - (h / f - 1)) < 1e-6);
    const mfu_finding *pd = find_kind(a, "padding");
    assert_non_null(pd);
    assert_true(fabs(evidence(pd, "padding_share") - 0.25) < 1e-9);
    /* the report's MFU counts useful tokens only */
    const double *m = mfu_report_column(r, MFU_RS_MFU);
    assert_true(fabs(m[500] * wiggle(500) - 0.5 * 0.75) < 1e-9);
    mfu_report_free(r);
    mfu_run_free(run);
}

/* Precision bf16 -> fp8 at step 201: the step's dtype sets its peak, a capacity change. */
static void dtype_change(void **state)
{
    (void)state;
    const mfu_device_info *dev = NULL;
    assert_int_equal(mfu_device_find("h100-sxm", &dev, NULL), MFU_OK);
    double p16 = 0, p8 = 0;
    assert_int_equal(mfu_device_peak_flops_per_s(dev, MFU_DTYPE_BF16, false, &p16, NULL), MFU_OK);
    assert_int_equal(mfu_device_peak_flops_per_s(dev, MFU_DTYPE_FP8, false, &p8, NULL), MFU_OK);
    double f = model_flops("gpt2", 4096, MFU_RECOMPUTE_NONE, false);
    mfu_run *run = new_run();
    for (size_t i = 0; i < 400; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i + 1;
        s.tokens = TOKENS;
        bool fp8 = i >= 200;
        s.dtype = fp8 ? MFU_DTYPE_FP8 : MFU_DTYPE_BF16;
        /* MFU 0.45 on bf16, 0.30 on the fp8 peak */
        s.step_time_s = TOKENS * f / ((fp8 ? 0.30 * p8 : 0.45 * p16) * DEV) * wiggle(i);
        append(run, &s);
    }
    mfu_report_input in = input();
    mfu_report *r = compute(run, &in);
    const mfu_analysis *a = mfu_report_analysis(r);
    assert_int_equal(mfu_analysis_segment_count(a), 2);
    assert_int_equal(mfu_analysis_segment(a, 1)->start_step, 201);
    assert_string_equal(mfu_analysis_segment(a, 1)->level.dtype, "fp8");
    const mfu_decomposition *d = mfu_analysis_boundary(a, 0);
    assert_true(fabs(d->term[MFU_TERM_CAPACITY].pct - (p8 / p16 - 1)) < 1e-9);
    assert_true(fabs(d->term[MFU_TERM_MFU].pct - (0.30 / 0.45 - 1)) < 0.005);
    assert_true(fabs(mfu_report_column(r, MFU_RS_MFU)[300] * wiggle(300) - 0.30) < 1e-9);
    mfu_report_free(r);
    mfu_run_free(run);
}

/* Eight ranks print every step; rank 5 is 10 % slower. */
static void straggler_from_rank_observations(void **state)
{
    (void)state;
    mfu_run *run = new_run();
    for (size_t i = 0; i < 100; i++)
        for (int32_t k = 0; k < 8; k++) {
            mfu_step s;
            mfu_step_init(&s);
            s.step = (int64_t)i + 1;
            s.rank = k;
            s.tokens = TOKENS;
            s.step_time_s = 0.3 * wiggle(i) * (k == 5 ? 1.10 : 1.0) *
                            (1 + 0.002 * (double)((k * 7 + (int)i) % 5));
            append(run, &s);
        }
    assert_int_equal(mfu_run_count(run), 100);
    mfu_report_input in = input();
    mfu_report *r = compute(run, &in);
    const mfu_finding *f = find_kind(mfu_report_analysis(r), "straggler");
    assert_non_null(f);
    assert_true(evidence(f, "rank") == 5);
    assert_true(fabs(evidence(f, "slowdown") - 0.10) < 0.01);
    mfu_report_free(r);
    mfu_run_free(run);
}

/* A torchtitan-like run printing MFU on the 2:4 sparse peak: a reported_mismatch finding. */
static void mismatch_finding(void **state)
{
    (void)state;
    double f = model_flops("gpt2", 4096, MFU_RECOMPUTE_NONE, false);
    mfu_run *run = new_run();
    for (size_t i = 0; i < 40; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i + 1;
        s.tokens = TOKENS;
        s.step_time_s = TOKENS * f / (0.4 * DEV * PEAK) * wiggle(i);
        s.mfu = 0.2 / wiggle(i);
        s.mfu_scope = MFU_SCOPE_DEVICE;
        append(run, &s);
    }
    mfu_report_input in = input();
    mfu_report *r = compute(run, &in);
    const mfu_finding *m = find_kind(mfu_report_analysis(r), "reported_mismatch");
    assert_non_null(m);
    assert_int_equal(m->severity, MFU_SEV_WARNING);
    assert_true(fabs(evidence(m, "ratio") - 0.5) < 0.01);
    assert_non_null(strstr(m->next_step, "dense peak"));
    /* no micro-batch anywhere: no roofline finding */
    assert_null(find_kind(mfu_report_analysis(r), "roofline"));
    /* findings made elsewhere join them */
    mfu_finding x;
    memset(&x, 0, sizeof x);
    snprintf(x.kind, sizeof x.kind, "external_check");
    snprintf(x.summary, sizeof x.summary, "a ceiling");
    snprintf(x.next_step, sizeof x.next_step, "raise the intensity");
    size_t before = mfu_analysis_finding_count(mfu_report_analysis(r));
    assert_int_equal(mfu_report_add_finding(r, &x, NULL), MFU_OK);
    assert_int_equal(mfu_analysis_finding_count(mfu_report_analysis(r)), before + 1);
    mfu_report_free(r);

    /* the roofline finding: with a micro-batch (the caller's or the log's) */
    mfu_error e;
    in.micro_batch = 2;
    r = compute(run, &in);
    const mfu_finding *rl = find_kind(mfu_report_analysis(r), "roofline");
    assert_non_null(rl);
    assert_true(evidence(rl, "micro_batch") == 2);
    assert_true(evidence(rl, "seq_tokens") == 4096);
    assert_true(evidence(rl, "ceiling_fraction") > 0.5 &&
                evidence(rl, "ceiling_fraction") < 1 + 1e-9);
    mfu_report_free(r);
    mfu_run_meta_mut(run)->micro_batch = 2;
    in.micro_batch = 0;
    r = compute(run, &in);
    assert_non_null(find_kind(mfu_report_analysis(r), "roofline"));
    mfu_report_free(r);
    mfu_run_meta_mut(run)->micro_batch = 0;
    in.micro_batch = -1;
    mfu_report *none = NULL;
    assert_int_equal(mfu_report_compute(run, &in, &none, &e), MFU_E_INVALID);
    assert_string_equal(e.field, "--micro-batch");
    in.micro_batch = 0;

    /* without an analysis */
    in.no_analysis = true;
    r = compute(run, &in);
    assert_null(mfu_report_analysis(r));
    assert_null(mfu_report_analysis_unit(r));
    assert_int_equal(mfu_report_expect(r, "mfu>=0.1", NULL, &e), MFU_E_MISSING);
    assert_int_equal(mfu_report_add_finding(r, &x, &e), MFU_E_MISSING);
    assert_int_equal(mfu_report_expect(NULL, "mfu>=0.1", NULL, &e), MFU_E_INVALID);
    mfu_report_free(r);
    /* bad analysis options are the caller's error */
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    o.size_threshold = 2;
    in.no_analysis = false;
    in.analysis = &o;
    r = NULL;
    assert_int_equal(mfu_report_compute(run, &in, &r, &e), MFU_E_INVALID);
    assert_null(r);
    assert_string_equal(e.field, "size_threshold");
    mfu_run_free(run);
}

/* No device count but per-device tokens/s: the analysis is per device, MFU unchanged. No
 * tokens at all: steps/s and no MFU. */
static void units(void **state)
{
    (void)state;
    mfu_run *run = mfu_run_new();
    mfu_run *steps_only = mfu_run_new();
    for (size_t i = 0; i < 30; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i + 1;
        s.tokens_per_s = 5000 * wiggle(i);
        s.tokens_per_s_scope = MFU_SCOPE_DEVICE;
        append(run, &s);
        mfu_step t;
        mfu_step_init(&t);
        t.step = (int64_t)i + 1;
        t.step_time_s = 2 * wiggle(i);
        append(steps_only, &t);
    }
    mfu_report_input in = input();
    in.workload.seq = 4096;
    mfu_report *r = compute(run, &in);
    assert_string_equal(mfu_report_analysis_unit(r), "tokens per device");
    const mfu_level *l = mfu_analysis_steady(mfu_report_analysis(r));
    double f = model_flops("gpt2", 4096, MFU_RECOMPUTE_NONE, false);
    assert_true(fabs(l->mfu.value / (l->tokens_per_s.value * f / PEAK) - 1) < 1e-12);
    mfu_report_free(r);
    r = compute(steps_only, &in);
    assert_string_equal(mfu_report_analysis_unit(r), "steps");
    l = mfu_analysis_steady(mfu_report_analysis(r));
    assert_true(isnan(l->mfu.value));
    assert_true(fabs(l->tokens_per_s.value - 0.5) < 0.01);
    mfu_report_free(r);
    mfu_run_free(run);
    mfu_run_free(steps_only);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void html_page(void **state)
{
    (void)state;
    double f4 = model_flops("gpt2", 4096, MFU_RECOMPUTE_NONE, false);
    mfu_run *run = new_run();
    for (size_t i = 0; i < 300; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i + 1;
        s.tokens = TOKENS;
        s.devices = i < 150 ? 8 : 16;
        s.step_time_s = TOKENS * f4 / (0.45 * s.devices * PEAK) * wiggle(i) + (i % 50 == 7);
        s.loss = 3 - 0.001 * (double)i;
        s.mfu = 0.2;
        s.mfu_scope = MFU_SCOPE_DEVICE;
        append(run, &s);
    }
    mfu_report_input in = input();
    mfu_report *r = compute(run, &in);
    assert_int_equal(mfu_report_expect(r, "mfu>=0.9", NULL, NULL), MFU_OK);
    mfu_report_html_run hr = {r, "<script>alert('x')</script>&run.log", "detail \"quoted\"\x01",
                              NULL};
    char *page = NULL;
    assert_int_equal(mfu_report_html(&hr, 1, "t<i>tle", &page, NULL), MFU_OK);
    assert_non_null(page);
    assert_int_equal(strncmp(page, "<!DOCTYPE html>", 15), 0);
    assert_null(strstr(page, "<script"));
    /* the only URL is the SVG namespace */
    assert_int_equal(count(page, "http://"), count(page, "xmlns=\"http://www.w3.org/2000/svg\""));
    assert_int_equal(count(page, "https://"), 0);
    assert_int_equal(count(page, "src="), 0);
    assert_non_null(strstr(page, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;run.log"));
    assert_non_null(strstr(page, "detail &quot;quoted&quot;?"));
    assert_non_null(strstr(page, "<title>t&lt;i&gt;tle</title>"));
    /* MFU, tokens/s and loss charts, a waterfall, a histogram */
    assert_int_equal(count(page, "<svg xmlns=\"http://www.w3.org/2000/svg\""), 5);
    assert_true(count(page, "class=\"mfu-boundary\"") >= 3); /* one per chart */
    assert_non_null(strstr(page, "What changed at each boundary"));
    assert_non_null(strstr(page, "Findings ("));
    assert_non_null(strstr(page, "stall"));
    assert_non_null(strstr(page, "Reported vs recomputed"));
    assert_non_null(strstr(page, "violated"));
    assert_non_null(strstr(page, "capacity (devices × peak)"));
    /* deterministic */
    char *again = NULL;
    assert_int_equal(mfu_report_html(&hr, 1, "t<i>tle", &again, NULL), MFU_OK);
    assert_string_equal(page, again);
    free(again);
    free(page);
    /* errors */
    mfu_error e;
    assert_int_equal(mfu_report_html(&hr, 0, NULL, &page, &e), MFU_E_INVALID);
    assert_null(page);
    assert_int_equal(mfu_report_html(&hr, 1, NULL, NULL, &e), MFU_E_INVALID);
    mfu_report_html_run none = {NULL, "x", NULL, NULL};
    assert_int_equal(mfu_report_html(&none, 1, NULL, &page, &e), MFU_E_INVALID);
    mfu_report_free(r);
    /* a report without an analysis or a model still makes a page */
    in.has_arch = false;
    in.no_analysis = true;
    r = compute(run, &in);
    hr.report = r;
    assert_int_equal(mfu_report_html(&hr, 1, NULL, &page, NULL), MFU_OK);
    /* the log prints its MFU: without a model that is the MFU shown, and said to be the log's */
    assert_true(mfu_report_get_context(r)->mfu_from_log);
    assert_null(strstr(page, "No MFU"));
    assert_non_null(strstr(page, "<title>mfu report</title>"));
    free(page);
    mfu_report_free(r);
    /* a log without any FLOPs figure and no model: no MFU, and the page says why */
    mfu_run *plain = new_run();
    for (size_t i = 0; i < 30; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i + 1;
        s.tokens = TOKENS;
        s.step_time_s = 1 + 0.01 * (double)(i % 3);
        append(plain, &s);
    }
    r = compute(plain, &in);
    hr.report = r;
    assert_int_equal(mfu_report_html(&hr, 1, NULL, &page, NULL), MFU_OK);
    assert_non_null(strstr(page, "No MFU"));
    free(page);
    mfu_report_free(r);
    mfu_run_free(plain);
    mfu_run_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seq_change),       cmocka_unit_test(devices_recompute_padding),
        cmocka_unit_test(dtype_change),     cmocka_unit_test(straggler_from_rank_observations),
        cmocka_unit_test(mismatch_finding), cmocka_unit_test(units),
        cmocka_unit_test(html_page),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
