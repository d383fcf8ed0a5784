/*
 * test_figures.c - the figures of a step (src/figures): the precedence rule of tokens/s and
 * step time, per-step devices, dtype and padding, the log's own FLOPs per token and peak, the
 * context check (a hidden sequence-length change, a hidden batch change, a model that no
 * length explains), log mode, incremental columns equal to a build from scratch, and windows.
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

#include "figures/figures.h"
#include "util/pages.h"
#include "flops_test.h"

#define REL(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol)*fabs((double)(b)))

static mfu_report_input model_input(const char *preset, int64_t seq, const char *device)
{
    mfu_report_input in;
    memset(&in, 0, sizeof in);
    if (preset) {
        assert_int_equal(mfu_preset_find(preset, &in.arch, NULL), MFU_OK);
        in.has_arch = true;
        in.workload.seq = seq;
    }
    in.device = device;
    return in;
}

/* One row's figures under a fresh context of an empty run with meta m. */
static mfu__frow row_of(const mfu_step *s, const mfu_step *prev, const mfu_report_input *in,
                        int64_t world)
{
    mfu_run *run = mfu_run_new();
    mfu_run_meta_mut(run)->world_size = world;
    mfu_run_append(run, s, NULL, NULL);
    mfu__fctx f;
    assert_int_equal(mfu__fctx_init(&f, run, in, NULL), MFU_OK);
    mfu__frow r;
    mfu__figures_row(&f, s, prev, 0, &r);
    mfu__fctx_free(&f);
    mfu_run_free(run);
    return r;
}

/* The precedence rule of docs/internals/figures.md, rule by rule. */
static void precedence(void **state)
{
    (void)state;
    mfu_report_input none;
    memset(&none, 0, sizeof none);
    mfu_step s, p;
    mfu_step_init(&s);
    s.step = 10;
    s.tokens = 4096;
    s.step_time_s = 2;
    mfu__frow r = row_of(&s, NULL, &none, 8);
    assert_true(r.v[MFU__FC_TOKENS_PER_S] == 2048 && r.v[MFU__FC_STEP_TIME_S] == 2);
    assert_int_equal(r.tps_source, MFU__TPS_TOKENS_TIME);
    assert_true(r.v[MFU__FC_TOKENS_PER_S_PER_DEVICE] == 256);

    /* the log's own tokens/s disagrees: tokens / step time still wins, the printed one is kept */
    s.tokens_per_s = 2500;
    s.tokens_per_s_scope = MFU_SCOPE_GLOBAL;
    r = row_of(&s, NULL, &none, 8);
    assert_true(r.v[MFU__FC_TOKENS_PER_S] == 2048);
    assert_true(r.v[MFU__FC_REPORTED_TOKENS_PER_S] == 2500);

    /* no step time: the framework's tokens/s (per device x devices), step time from it */
    s.step_time_s = NAN;
    s.tokens_per_s = 300;
    s.tokens_per_s_scope = MFU_SCOPE_DEVICE;
    r = row_of(&s, NULL, &none, 8);
    assert_true(r.v[MFU__FC_TOKENS_PER_S] == 2400);
    assert_int_equal(r.tps_source, MFU__TPS_FRAMEWORK);
    REL(r.v[MFU__FC_STEP_TIME_S], 4096.0 / 2400, 1e-15);
    /* per device without a device count: per device only */
    r = row_of(&s, NULL, &none, 0);
    assert_true(isnan(r.v[MFU__FC_TOKENS_PER_S]) && r.v[MFU__FC_TOKENS_PER_S_PER_DEVICE] == 300);

    /* samples/s x sequence length */
    mfu_step_init(&s);
    s.step = 3;
    s.samples_per_s = 4;
    s.samples_per_s_scope = MFU_SCOPE_GLOBAL;
    s.seq_len = 1024;
    r = row_of(&s, NULL, &none, 2);
    assert_true(r.v[MFU__FC_TOKENS_PER_S] == 4096);
    assert_int_equal(r.tps_source, MFU__TPS_SAMPLES);

    /* time deltas: no step time, no rate: Δtime / Δstep from the previous row */
    mfu_step_init(&s);
    mfu_step_init(&p);
    p.step = 10;
    p.time_s = 1000;
    s.step = 14;
    s.time_s = 1010;
    s.tokens = 1000;
    r = row_of(&s, &p, &none, 1);
    assert_true(r.v[MFU__FC_STEP_TIME_S] == 2.5 && r.v[MFU__FC_TOKENS_PER_S] == 400);
    assert_int_equal(r.tps_source, MFU__TPS_TIME_DELTA);
    r = row_of(&s, NULL, &none, 1); /* no previous row: unknown */
    assert_true(isnan(r.v[MFU__FC_STEP_TIME_S]) && isnan(r.v[MFU__FC_TOKENS_PER_S]));

    /* the caller's tokens per step win over the step's own */
    mfu_report_input tok = none;
    tok.tokens_per_step = 8192;
    mfu_step_init(&s);
    s.step = 1;
    s.tokens = 1000;
    s.step_time_s = 1;
    r = row_of(&s, NULL, &tok, 1);
    assert_true(r.v[MFU__FC_TOKENS] == 8192 && r.v[MFU__FC_LOG_TOKENS] == 1000);
    assert_int_equal(r.tok_source, MFU__TOK_INPUT_TOKENS);
}

/* A step's own devices, dtype, sequence length and useful tokens win for that step. */
static void per_step_context(void **state)
{
    (void)state;
    mfu_report_input in = model_input("gpt2", 1024, "h100-sxm");
    mfu_step s;
    mfu_step_init(&s);
    s.step = 1;
    s.tokens = 1 << 20;
    s.step_time_s = 1;
    mfu__frow a = row_of(&s, NULL, &in, 8);
    const mfu_device_info *h100;
    assert_int_equal(mfu_device_find("h100-sxm", &h100, NULL), MFU_OK);
    double bf16, fp8;
    mfu_device_peak_flops_per_s(h100, MFU_DTYPE_BF16, false, &bf16, NULL);
    mfu_device_peak_flops_per_s(h100, MFU_DTYPE_FP8, false, &fp8, NULL);
    double f1024 = test_flops_per_token("gpt2", 1024, MFU_CONV_EXACT),
           f512 = test_flops_per_token("gpt2", 512, MFU_CONV_EXACT);
    REL(a.v[MFU__FC_MFU], f1024 * (double)(1 << 20) / 8 / bf16, 1e-12);
    s.devices = 16;
    s.dtype = MFU_DTYPE_FP8;
    s.seq_len = 512;
    s.useful_tokens = 0.75 * (double)(1 << 20);
    mfu__frow b = row_of(&s, NULL, &in, 8);
    assert_true(b.v[MFU__FC_DEVICES] == 16 && b.v[MFU__FC_PEAK] == fp8);
    assert_true(b.v[MFU__FC_SEQ] == 512 && b.v[MFU__FC_USEFUL] == 0.75);
    REL(b.v[MFU__FC_MFU], f512 * (double)(1 << 20) / 16 * 0.75 / fp8, 1e-12);
    REL(b.v[MFU__FC_HFU], f512 * (double)(1 << 20) / 16 / fp8, 1e-12);
}

/* A torchtitan log of n lines (every 10 steps): tps per device, tflops and mfu as torchtitan
 * prints them (its FLOPs per token, its 989 TFLOP/s), the sequence length from change_at on. */
static mfu_run *torchtitan(size_t n, size_t change_at, int64_t seq_a, int64_t seq_b, double tps_a,
                           double tps_b)
{
    mfu_run *run = mfu_run_new();
    snprintf(mfu_run_meta_mut(run)->format, sizeof mfu_run_meta_mut(run)->format, "torchtitan");
    double fa = test_flops_per_token("llama3-8b", seq_a, MFU_CONV_TORCHTITAN);
    double fb = test_flops_per_token("llama3-8b", seq_b, MFU_CONV_TORCHTITAN);
    for (size_t i = 0; i < n; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = 10 * (int64_t)(i + 1);
        bool b = i >= change_at;
        double tps = (b ? tps_b : tps_a) * (1 + 0.002 * (double)(i % 5));
        double tps_printed = round(tps);
        double f = b ? fb : fa;
        s.tokens_per_s = tps_printed;
        s.tokens_per_s_scope = MFU_SCOPE_DEVICE;
        s.flops_per_s = round(f * tps / 1e10) * 1e10; /* "tflops: 339.16" */
        s.flops_per_s_scope = MFU_SCOPE_DEVICE;
        s.mfu = round(f * tps / 989e12 * 1e4) / 1e4; /* "mfu: 34.29%" */
        s.mfu_scope = MFU_SCOPE_DEVICE;
        assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    }
    return run;
}

static void compute(const mfu_run *run, const mfu_report_input *in, mfu__fctx *f, mfu__fcols *c)
{
    memset(c, 0, sizeof *c);
    assert_int_equal(mfu__fctx_init(f, run, in, NULL), MFU_OK);
    assert_int_equal(mfu__figures_compute(f, c, run, NULL), MFU_OK);
}

/* The context check: with the pre-change context, the stretch after the hidden change takes
 * the sequence length the log implies; the stretch before holds. */
static void hidden_sequence_change(void **state)
{
    (void)state;
    mfu_run *run = torchtitan(200, 100, 8192, 2048, 5800, 6500);
    mfu_report_input in = model_input("llama3-8b", 8192, "h100-sxm");
    mfu__fctx f;
    mfu__fcols c;
    compute(run, &in, &f, &c);
    assert_int_equal(f.nruns, 2);
    assert_int_equal(f.runs[1].first, 100);
    assert_true(f.runs[0].holds && !f.runs[1].holds);
    assert_true(f.runs[1].seq == 2048);
    assert_false(f.runs[1].tracks); /* tokens/s are the framework's own */
    assert_true(c.v[MFU__FC_SEQ][99] == 8192 && c.v[MFU__FC_SEQ][100] == 2048);
    assert_true(c.flags[150] & MFU__FR_SEQ_INFERRED);
    /* mfu's own MFU after it: exact FLOPs per token at 2048 */
    double fe = test_flops_per_token("llama3-8b", 2048, MFU_CONV_EXACT);
    REL(c.v[MFU__FC_MODEL_FPT][150], fe, 1e-12);
    const int64_t *steps = mfu_run_steps(run);
    mfu__figures_explain(&f, steps, &c);
    bool named = false;
    for (size_t i = 0; i < f.nnotes; i++)
        named = named || (strstr(f.notes[i], "imply seq 2048") && strstr(f.notes[i], "1010"));
    assert_true(named);
    assert_int_equal(f.c.context_breaks, 1);
    mfu__fcols_free(&c);
    mfu__fctx_free(&f);

    /* without a model: log mode, the FLOPs per token of each stretch are the log's own */
    mfu_report_input none;
    memset(&none, 0, sizeof none);
    compute(run, &none, &f, &c);
    assert_true(f.log_mode && f.c.mfu_from_log);
    REL(c.v[MFU__FC_MODEL_FPT][10], test_flops_per_token("llama3-8b", 8192, MFU_CONV_TORCHTITAN),
        2e-3);
    REL(c.v[MFU__FC_MODEL_FPT][150], test_flops_per_token("llama3-8b", 2048, MFU_CONV_TORCHTITAN),
        2e-3);
    REL(c.v[MFU__FC_PEAK][150], 989e12, 2e-3);
    assert_true(c.v[MFU__FC_MFU][150] == c.v[MFU__FC_REPORTED_MFU][150]);
    mfu__fcols_free(&c);
    mfu__fctx_free(&f);
    mfu_run_free(run);
}

/* Megatron-style: the counted tokens are global batch (printed) x the context's sequence: a
 * hidden batch change (FLOPs per token unchanged) is a tokens change, not a new length. */
static void hidden_batch_change(void **state)
{
    (void)state;
    double f4 = test_flops_per_token("llama3-8b", 4096, MFU_CONV_MEGATRON_2025);
    mfu_run *run = mfu_run_new();
    mfu_run_meta *m = mfu_run_meta_mut(run);
    snprintf(m->format, sizeof m->format, "megatron");
    m->world_size = 64;
    for (int i = 0; i < 120; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = i + 1;
        double batch = i < 60 ? 512 : 1024; /* the true batch; the log prints 512 throughout */
        s.step_time_s = (i < 60 ? 10 : 19) * (1 + 0.001 * (i % 3));
        s.flops_per_s = f4 * batch * 4096 / s.step_time_s / 64;
        s.flops_per_s_scope = MFU_SCOPE_DEVICE;
        mfu_run_append(run, &s, NULL, NULL);
    }
    mfu_report_input in = model_input("llama3-8b", 4096, "h100-sxm");
    in.global_batch = 512;
    mfu__fctx f;
    mfu__fcols c;
    compute(run, &in, &f, &c);
    assert_int_equal(f.nruns, 2);
    assert_false(f.runs[1].holds);
    assert_true(isnan(f.runs[1].seq));
    REL(f.runs[1].tokens_scale, 2, 1e-3);
    REL(c.v[MFU__FC_TOKENS][100], 1024.0 * 4096, 1e-3);
    assert_true(c.v[MFU__FC_SEQ][100] == 4096);
    mfu__fcols_free(&c);
    mfu__fctx_free(&f);
    mfu_run_free(run);
}

/* Rows added one at a time (a live run) give the same columns as a build from scratch. */
static void incremental_equals_whole(void **state)
{
    (void)state;
    mfu_run *whole = torchtitan(160, 80, 8192, 2048, 5800, 6500);
    mfu_report_input in = model_input("llama3-8b", 8192, "h100-sxm");
    mfu__fctx fw, fi;
    mfu__fcols cw, ci;
    compute(whole, &in, &fw, &cw);
    mfu_run *live = mfu_run_new();
    snprintf(mfu_run_meta_mut(live)->format, 16, "torchtitan");
    memset(&ci, 0, sizeof ci);
    for (size_t i = 0; i < mfu_run_count(whole); i++) {
        mfu_step s;
        mfu_run_get(whole, i, &s);
        mfu_run_append(live, &s, NULL, NULL);
        if (i == 0) {
            assert_int_equal(mfu__fctx_init(&fi, live, &in, NULL), MFU_OK);
            assert_int_equal(mfu__figures_compute(&fi, &ci, live, NULL), MFU_OK);
        } else {
            size_t changed = 0;
            assert_int_equal(mfu__figures_update(&fi, &ci, live, i, &changed, NULL), MFU_OK);
            assert_true(changed <= i);
        }
    }
    assert_int_equal(ci.n, cw.n);
    for (int k = 0; k < MFU__FC_COUNT; k++)
        for (size_t i = 0; i < cw.n; i++) {
            double a = cw.v[k][i], b = ci.v[k][i];
            if (!(memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b))))
                fail_msg("column %d row %zu: whole %.17g, incremental %.17g", k, i, a, b);
        }
    mfu__fcols_free(&cw);
    mfu__fcols_free(&ci);
    mfu__fctx_free(&fw);
    mfu__fctx_free(&fi);
    mfu_run_free(whole);
    mfu_run_free(live);
}

/* Column k of c is stored exactly when a row has a value other than the NaN every row starts
 * with; an absent column reads as the shared NaN column. Returns how many are stored. */
static int check_present(const mfu__fcols *c)
{
    static const double absent = NAN;
    int stored = 0;
    for (int k = 0; k < MFU__FC_COUNT; k++) {
        bool any = false;
        for (size_t i = 0; i < c->n; i++)
            any = any || memcmp(&c->v[k][i], &absent, sizeof absent) != 0;
        if (c->present[k]) {
            stored++;
            assert_ptr_not_equal(c->v[k], c->nan);
        } else {
            assert_ptr_equal(c->v[k], c->nan);
        }
        if (any != c->present[k])
            fail_msg("column %d: stored %d, a value in some row %d", k, c->present[k], any);
        if (c->same[k]) { /* a shared column: an earlier one's rows, that one's own */
            int q = c->same[k] - 1;
            assert_true(q < k && c->present[k] && c->present[q] && !c->same[q]);
            assert_ptr_equal(c->v[k], c->v[q]);
        } else if (c->present[k]) {
            for (int q = 0; q < k; q++)
                assert_ptr_not_equal(c->v[k], c->v[q]);
        }
    }
    for (size_t i = 0; i < c->cap; i++)
        assert_true(isnan(c->nan[i]));
    return stored;
}

/* A log of `fields` kinds (3: step, step time, loss; 8: bench/gen_steps's; else torchtitan's
 * with a model), n rows; the 8-field log's tokens/s only from row late on when late > 0. */
static mfu_run *fields_log(int fields, size_t n, size_t late)
{
    mfu_run *run = mfu_run_new();
    for (size_t i = 0; i < n; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i + 1;
        s.step_time_s = 0.9 + 0.01 * (double)(i % 7);
        s.loss = 3.0 - 0.001 * (double)i;
        if (fields == 8) {
            s.tokens = 1048576;
            if (i >= late)
                s.tokens_per_s = s.tokens / s.step_time_s;
            s.memory_bytes = 7.1e10;
        }
        assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    }
    return run;
}

/* Only the figures a log has are stored (3, 8 and all fields); a figure that first appears
 * late in a live run is stored from then on, NaN before, as a build from scratch has it. */
static void present_columns(void **state)
{
    (void)state;
    mfu_report_input none;
    memset(&none, 0, sizeof none);
    mfu__fctx f;
    mfu__fcols c;
    int stored[3];
    mfu_run *logs[3] = {fields_log(3, 300, 0), fields_log(8, 300, 0),
                        torchtitan(300, 150, 8192, 2048, 5800, 6500)};
    mfu_report_input ins[3] = {none, none, model_input("llama3-8b", 8192, "h100-sxm")};
    for (int j = 0; j < 3; j++) {
        compute(logs[j], &ins[j], &f, &c);
        stored[j] = check_present(&c);
        assert_int_equal(c.cap, 300); /* a whole run: its rows exactly, no doubling's spare */
        mfu__fcols_free(&c);
        mfu__fctx_free(&f);
        mfu_run_free(logs[j]);
    }
    assert_true(stored[0] < stored[1] && stored[1] < stored[2]);
    assert_true(stored[1] <= MFU__FC_COUNT / 2);
    assert_false(c.nan || c.v[0]); /* freed and zeroed */

    /* tokens/s printed from row 100 on, rows appended one at a time */
    mfu_run *whole = fields_log(8, 200, 100);
    mfu__fcols cw;
    mfu__fctx fw;
    compute(whole, &none, &fw, &cw);
    assert_true(cw.present[MFU__FC_REPORTED_TOKENS_PER_S]);
    assert_true(isnan(cw.v[MFU__FC_REPORTED_TOKENS_PER_S][99]));
    mfu_run *live = mfu_run_new();
    memset(&c, 0, sizeof c);
    for (size_t i = 0; i < mfu_run_count(whole); i++) {
        mfu_step s;
        mfu_run_get(whole, i, &s);
        mfu_run_append(live, &s, NULL, NULL);
        size_t changed = 0;
        if (i == 0) {
            assert_int_equal(mfu__fctx_init(&f, live, &none, NULL), MFU_OK);
            assert_int_equal(mfu__figures_compute(&f, &c, live, NULL), MFU_OK);
        } else {
            assert_int_equal(mfu__figures_update(&f, &c, live, i, &changed, NULL), MFU_OK);
        }
        assert_true(c.present[MFU__FC_REPORTED_TOKENS_PER_S] == (i >= 100));
    }
    assert_int_equal(check_present(&c), check_present(&cw));
    for (int k = 0; k < MFU__FC_COUNT; k++)
        for (size_t i = 0; i < cw.n; i++)
            if (memcmp(&cw.v[k][i], &c.v[k][i], sizeof(double)) != 0)
                fail_msg("column %d row %zu: whole %.17g, incremental %.17g", k, i, cw.v[k][i],
                         c.v[k][i]);
    mfu__fcols_free(&c);
    mfu__fcols_free(&cw);
    mfu__fctx_free(&f);
    mfu__fctx_free(&fw);
    mfu_run_free(whole);
    mfu_run_free(live);
}

/* A run of n rows with every member the rule reads printed in some rows and absent in others
 * (seeded), the scopes, flags and codes varying too: every array of the run is made. */
static mfu_run *mixed_log(size_t n, uint64_t seed)
{
    mfu_run *run = mfu_run_new();
    snprintf(mfu_run_meta_mut(run)->format, sizeof mfu_run_meta_mut(run)->format, "megatron");
    mfu_run_meta_mut(run)->world_size = 16;
    mfu_run_meta_mut(run)->seq_len = 4096;
    uint64_t x = seed;
    for (size_t i = 0; i < n; i++) {
        double u[20];
        for (int j = 0; j < 20; j++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            u[j] = (double)(x >> 11) / 9007199254740992.0;
        }
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i + 1;
#define MAYBE(j, field, value)                                                                     \
    if (u[j] < 0.8)                                                                                \
    s.field = (value)
        MAYBE(0, time_s, 1.7e9 + 1.5 * (double)i + 0.1 * u[10]);
        MAYBE(1, step_time_s, 1.4 + 0.2 * u[11]);
        MAYBE(2, tokens, u[12] < 0.5 ? 262144 : 131072);
        MAYBE(3, samples, u[13] < 0.5 ? 64 : 32);
        MAYBE(4, loss, 3 - 1e-4 * (double)i);
        MAYBE(5, tokens_per_s, 180000 * (1 + 0.05 * u[14]));
        MAYBE(6, flops_per_s, 4e14 * (1 + 0.05 * u[15]));
        MAYBE(7, mfu, 0.4 + 0.01 * u[16]);
        MAYBE(8, samples_per_s, 40 + u[17]);
        MAYBE(9, seq_len, u[18] < 0.5 ? 4096 : 2048);
#undef MAYBE
        if (u[19] < 0.3)
            s.devices = u[10] < 0.5 ? 16 : 8;
        if (u[19] > 0.6)
            s.useful_tokens = 200000 + 1000 * u[11];
        s.tokens_per_s_scope = (mfu_scope)(x % 3);
        s.flops_per_s_scope = (mfu_scope)((x >> 8) % 3);
        s.samples_per_s_scope = (mfu_scope)((x >> 16) % 3);
        s.flags = (uint32_t)((x >> 24) & (MFU_STEP_SKIPPED | MFU_STEP_TOKENS_DERIVED));
        s.recompute = (int32_t)((x >> 32) % 4) - 1;
        s.dtype = (int32_t)((x >> 40) % 5) - 1;
        s.rank = (int32_t)((x >> 48) % 3) - 1;
        assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    }
    return run;
}

/* The column builder reads a run's rows from its columns, the members the rule reads, a block
 * of rows at a time: every row's figures are those of mfu__figures_row on the row mfu_run_get
 * reads and the one before it, bit for bit, across blocks, with every member printed in some
 * rows and absent in others. */
static void build_equals_rows(void **state)
{
    (void)state;
    mfu_report_input in = model_input("llama3-8b", 4096, "h100-sxm");
    for (uint64_t seed = 1; seed <= 4; seed++) {
        mfu_run *run = mixed_log(2500, seed);
        mfu__fctx f;
        mfu__fcols c;
        compute(run, &in, &f, &c);
        assert_int_equal(c.n, 2500);
        check_present(&c);
        mfu_step s, p;
        for (size_t i = 0; i < c.n; i++) {
            assert_true(mfu_run_get(run, i, &s));
            if (i)
                assert_true(mfu_run_get(run, i - 1, &p));
            mfu__frow r;
            mfu__figures_row(&f, &s, i ? &p : NULL, i, &r);
            for (int k = 0; k < MFU__FC_COUNT; k++) {
                if (k == MFU__FC_LOG_FPT || k == MFU__FC_LOG_PEAK || k == MFU__FC_LOG_MFU)
                    continue; /* the log's own figures: the builder's second pass */
                if (memcmp(&r.v[k], &c.v[k][i], sizeof(double)) != 0)
                    fail_msg("seed %d column %d row %zu: row %.17g, built %.17g", (int)seed, k, i,
                             r.v[k], c.v[k][i]);
            }
            assert_int_equal(r.recompute, c.recompute[i]);
            assert_int_equal(r.dtype, c.dtype[i]);
            assert_int_equal(r.tps_source, c.tps_source[i]);
            assert_int_equal(r.tok_source, c.tok_source[i]);
            assert_int_equal(r.flags,
                             c.flags[i] & (MFU__FR_SEQ_INFERRED | MFU__FR_TOKENS_INFERRED));
        }
        mfu__fcols_free(&c);
        mfu__fctx_free(&f);
        mfu_run_free(run);
    }
}

/* Columns equal row for row share one array (tokens/s and the derived tokens/s where the step
 * time is printed, MFU and HFU without recomputation); a row that makes them differ, late in
 * the first build or in a live run's update, gives the column rows of its own, and a write
 * to either leaves the other as it was. */
static void shared_columns(void **state)
{
    (void)state;
    mfu_report_input in = model_input("llama3-8b", 4096, "h100-sxm");
    /* the step time printed until row 2100 (the third block), then the framework's tokens/s */
    mfu_run *whole = mfu_run_new();
    mfu_run_meta_mut(whole)->world_size = 8;
    for (size_t i = 0; i < 3000; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i + 1;
        s.tokens = 262144;
        if (i < 2100)
            s.step_time_s = 1.5 + 0.001 * (double)(i % 11);
        s.tokens_per_s = 170000 + (double)(i % 13);
        s.tokens_per_s_scope = MFU_SCOPE_GLOBAL;
        s.loss = 2.5;
        assert_int_equal(mfu_run_append(whole, &s, NULL, NULL), MFU_OK);
    }
    mfu__fctx fw;
    mfu__fcols cw;
    compute(whole, &in, &fw, &cw);
    check_present(&cw);
    assert_int_equal(cw.same[MFU__FC_HFU], MFU__FC_MFU + 1);
    assert_ptr_equal(cw.v[MFU__FC_HFU], cw.v[MFU__FC_MFU]);
    assert_int_equal(cw.same[MFU__FC_HARDWARE_FPT], MFU__FC_MODEL_FPT + 1);
    /* the derived tokens/s shared the tokens/s for two blocks, then its own rows */
    assert_int_equal(cw.same[MFU__FC_DERIVED_TPS], 0);
    assert_true(cw.v[MFU__FC_DERIVED_TPS][2099] == cw.v[MFU__FC_TOKENS_PER_S][2099]);
    assert_true(isnan(cw.v[MFU__FC_DERIVED_TPS][2100]));
    assert_true(cw.v[MFU__FC_TOKENS_PER_S][2100] == 170000 + 2100 % 13);

    /* the same run appended a row at a time: the same figures, shared or not */
    mfu_run *live = mfu_run_new();
    mfu_run_meta_mut(live)->world_size = 8;
    mfu__fctx fi;
    mfu__fcols ci;
    memset(&ci, 0, sizeof ci);
    for (size_t i = 0; i < mfu_run_count(whole); i++) {
        mfu_step s;
        mfu_run_get(whole, i, &s);
        mfu_run_append(live, &s, NULL, NULL);
        if (i == 0) {
            assert_int_equal(mfu__fctx_init(&fi, live, &in, NULL), MFU_OK);
            assert_int_equal(mfu__figures_compute(&fi, &ci, live, NULL), MFU_OK);
            assert_int_equal(ci.same[MFU__FC_DERIVED_TPS], MFU__FC_TOKENS_PER_S + 1);
        } else {
            size_t changed = 0;
            assert_int_equal(mfu__figures_update(&fi, &ci, live, i, &changed, NULL), MFU_OK);
        }
        if (i == 2099)
            assert_int_equal(ci.same[MFU__FC_DERIVED_TPS], MFU__FC_TOKENS_PER_S + 1);
    }
    assert_int_equal(ci.same[MFU__FC_DERIVED_TPS], 0);
    check_present(&ci);
    for (int k = 0; k < MFU__FC_COUNT; k++)
        for (size_t i = 0; i < cw.n; i++)
            if (memcmp(&cw.v[k][i], &ci.v[k][i], sizeof(double)) != 0)
                fail_msg("column %d row %zu: whole %.17g, incremental %.17g", k, i, cw.v[k][i],
                         ci.v[k][i]);

    /* a write to the owner leaves the column that shared it as it was, and the other way */
    double mfu5 = cw.v[MFU__FC_MFU][5], hfu7 = cw.v[MFU__FC_HFU][7];
    assert_true(mfu__fcols_put(&cw, MFU__FC_MFU, 5, 0.25));
    assert_int_equal(cw.same[MFU__FC_HFU], 0);
    check_present(&cw);
    assert_true(cw.v[MFU__FC_MFU][5] == 0.25 && cw.v[MFU__FC_HFU][5] == mfu5);
    assert_true(cw.v[MFU__FC_HARDWARE_FPT] == cw.v[MFU__FC_MODEL_FPT]);
    assert_true(mfu__fcols_put(&cw, MFU__FC_HARDWARE_FPT, 7, 1.0));
    check_present(&cw);
    assert_true(cw.v[MFU__FC_HARDWARE_FPT][7] == 1.0 && cw.v[MFU__FC_MODEL_FPT][7] != 1.0);
    assert_true(cw.v[MFU__FC_HFU][7] == hfu7);
    /* writing the value a row holds changes nothing, shared or not */
    assert_int_equal(ci.same[MFU__FC_HFU], MFU__FC_MFU + 1);
    assert_true(mfu__fcols_put(&ci, MFU__FC_HFU, 3, ci.v[MFU__FC_MFU][3]));
    assert_int_equal(ci.same[MFU__FC_HFU], MFU__FC_MFU + 1);
    mfu__fcols_free(&cw);
    mfu__fcols_free(&ci);
    mfu__fctx_free(&fw);
    mfu__fctx_free(&fi);
    mfu_run_free(whole);
    mfu_run_free(live);
}

/* Every column of a and b the same, bit for bit, row for row. */
static void assert_same_cols(const mfu__fcols *a, const mfu__fcols *b, const char *what)
{
    assert_int_equal(a->n, b->n);
    for (int k = 0; k < MFU__FC_COUNT; k++)
        for (size_t i = 0; i < a->n; i++)
            if (memcmp(&a->v[k][i], &b->v[k][i], sizeof(double)) != 0)
                fail_msg("%s: column %d row %zu: %.17g vs %.17g", what, k, i, a->v[k][i],
                         b->v[k][i]);
    assert_memory_equal(a->flags, b->flags, a->n);
    assert_memory_equal(a->tps_source, b->tps_source, a->n);
}

/* A long column whose first block is one value (and the NaN column) is one block of it mapped
 * again and again (the threshold lowered here to map every column): the figures are those of
 * a build without mapping, bit for bit, where a later row differs (devices printed from row
 * 2500 on), in a live run whose growth copies the mapped columns, and after writes to a mapped
 * column and to one that shares it. */
static void mapped_constants(void **state)
{
    (void)state;
    size_t min0 = mfu__const_map_min;
    mfu_report_input in = model_input("llama3-8b", 4096, "h100-sxm");
    mfu_run *whole = mfu_run_new();
    mfu_run_meta_mut(whole)->world_size = 8;
    for (size_t i = 0; i < 3000; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i + 1;
        s.tokens = 262144;
        s.step_time_s = 1.5 + 0.001 * (double)(i % 11);
        if (i >= 2500)
            s.devices = 16;
        assert_int_equal(mfu_run_append(whole, &s, NULL, NULL), MFU_OK);
    }
    mfu_run *mixed = mixed_log(2500, 7);
    mfu_run *runs[2] = {whole, mixed};
    for (int j = 0; j < 2; j++) {
        mfu__fctx fa, fb;
        mfu__fcols ca, cb;
        mfu__const_map_min = SIZE_MAX;
        compute(runs[j], &in, &fa, &ca);
        mfu__const_map_min = 1;
        compute(runs[j], &in, &fb, &cb);
        for (int k = 0; k < MFU__FC_COUNT; k++)
            assert_int_equal(ca.mapped[k], 0);
        check_present(&cb);
        assert_same_cols(&ca, &cb, "mapped");
#if defined(__linux__)
        assert_true(cb.nan_mapped >= cb.cap * sizeof(double));
        if (j == 0) {
            assert_true(cb.mapped[MFU__FC_TOKENS] >= cb.cap * sizeof(double));
            assert_true(cb.mapped[MFU__FC_DEVICES] > 0); /* its rows from 2500 on copied */
            assert_true(cb.v[MFU__FC_DEVICES][2499] == 8 && cb.v[MFU__FC_DEVICES][2500] == 16);
            assert_int_equal(cb.mapped[MFU__FC_STEP_TIME_S], 0);
        }
#endif
        /* writes: to a mapped column, then to the one sharing a mapped column's rows */
        assert_true(mfu__fcols_put(&cb, MFU__FC_TOKENS, 3, 5.0));
        assert_true(mfu__fcols_put(&ca, MFU__FC_TOKENS, 3, 5.0));
        assert_true(mfu__fcols_put(&cb, MFU__FC_HARDWARE_FPT, 4, 6.0));
        assert_true(mfu__fcols_put(&ca, MFU__FC_HARDWARE_FPT, 4, 6.0));
        assert_true(mfu__fcols_put(&cb, MFU__FC_MODEL_FPT, 5, 7.0));
        assert_true(mfu__fcols_put(&ca, MFU__FC_MODEL_FPT, 5, 7.0));
        check_present(&cb);
        assert_same_cols(&ca, &cb, "mapped, written");
        assert_true(cb.v[MFU__FC_TOKENS][3] == 5.0 && cb.v[MFU__FC_TOKENS][2] != 5.0);
        mfu__fcols_free(&ca);
        mfu__fcols_free(&cb);
        mfu__fctx_free(&fa);
        mfu__fctx_free(&fb);
    }

    /* a live run: mapped at its first rows, copied where it grows; the whole run's figures */
    mfu__const_map_min = SIZE_MAX;
    mfu__fctx fw, fi;
    mfu__fcols cw, ci;
    compute(whole, &in, &fw, &cw);
    mfu__const_map_min = 1;
    mfu_run *live = mfu_run_new();
    mfu_run_meta_mut(live)->world_size = 8;
    memset(&ci, 0, sizeof ci);
    for (size_t i = 0; i < mfu_run_count(whole); i++) {
        mfu_step s;
        mfu_run_get(whole, i, &s);
        mfu_run_append(live, &s, NULL, NULL);
        size_t changed = 0;
        if (i == 0) {
            assert_int_equal(mfu__fctx_init(&fi, live, &in, NULL), MFU_OK);
            assert_int_equal(mfu__figures_compute(&fi, &ci, live, NULL), MFU_OK);
#if defined(__linux__)
            assert_true(ci.mapped[MFU__FC_TOKENS] > 0 && ci.nan_mapped > 0);
#endif
        } else {
            assert_int_equal(mfu__figures_update(&fi, &ci, live, i, &changed, NULL), MFU_OK);
        }
    }
    assert_int_equal(ci.mapped[MFU__FC_TOKENS], 0); /* grown: an allocated copy */
    check_present(&ci);
    assert_same_cols(&cw, &ci, "live");
    mfu__const_map_min = min0;
    mfu__fcols_free(&cw);
    mfu__fcols_free(&ci);
    mfu__fctx_free(&fw);
    mfu__fctx_free(&fi);
    mfu_run_free(whole);
    mfu_run_free(mixed);
    mfu_run_free(live);
}

/* A run of n steps, its printed step time, tokens/s and loss; from row `from` on the step time
 * is not printed (0: the figures' step time is then tokens / tokens/s, not the run's). */
static mfu_run *lending_run(size_t n, size_t from)
{
    mfu_run *run = mfu_run_new();
    for (size_t i = 0; i < n; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i + 1;
        s.tokens = 524288;
        s.step_time_s = i >= from ? 0 : 1.25 + 0.002 * (double)(i % 13);
        s.tokens_per_s = 524288 / (1.25 + 0.002 * (double)(i % 13)) * 1.01;
        s.loss = 3.0 - 1e-4 * (double)i;
        assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    }
    return run;
}

/* With lend, a column equal to one of the run's is the run's array (no copy), the figures are
 * those of a build without it bit for bit, a row that differs (the step time not printed from
 * row 1500 on) or a write gives the column rows of its own and leaves the run's rows alone,
 * and adopt takes the arrays from the run (which then reads absent there and refuses appends).
 * A mapped column is known constant until written (mfu__fcols_const). */
static void lent_columns(void **state)
{
    (void)state;
    mfu_report_input in;
    memset(&in, 0, sizeof in);
    size_t min0 = mfu__const_map_min;
    mfu__const_map_min = 1;
    for (int j = 0; j < 2; j++) {
        size_t from = j == 0 ? SIZE_MAX : 1500;
        mfu_run *a = lending_run(3000, from), *b = lending_run(3000, from);
        mfu__fctx fa, fb;
        mfu__fcols ca, cb;
        compute(a, &in, &fa, &ca);
        memset(&cb, 0, sizeof cb);
        cb.lend = true;
        assert_int_equal(mfu__fctx_init(&fb, b, &in, NULL), MFU_OK);
        assert_int_equal(mfu__figures_compute(&fb, &cb, b, NULL), MFU_OK);
        check_present(&cb);
        assert_same_cols(&ca, &cb, "lent");
        for (int k = 0; k < MFU__FC_COUNT; k++)
            assert_int_equal(ca.lent[k], 0);
        assert_int_equal(cb.lent[MFU__FC_LOSS], MFU_COL_LOSS + 1);
        assert_ptr_equal(cb.v[MFU__FC_LOSS], mfu_run_column(b, MFU_COL_LOSS));
        assert_int_equal(cb.lent[MFU__FC_REPORTED_TOKENS_PER_S], MFU_COL_TOKENS_PER_S + 1);
        if (j == 0) {
            assert_int_equal(cb.lent[MFU__FC_STEP_TIME_S], MFU_COL_STEP_TIME_S + 1);
        } else { /* lent for the first block, its own from the row that differs */
            assert_int_equal(cb.lent[MFU__FC_STEP_TIME_S], 0);
            assert_true(cb.v[MFU__FC_STEP_TIME_S] != mfu_run_column(b, MFU_COL_STEP_TIME_S));
            assert_true(mfu_run_column(b, MFU_COL_STEP_TIME_S)[1600] == 0);
        }
        /* a write copies the run's rows first */
        double loss9 = cb.v[MFU__FC_LOSS][9];
        assert_true(mfu__fcols_put(&cb, MFU__FC_REPORTED_TOKENS_PER_S, 2, 1.0));
        assert_true(mfu__fcols_put(&ca, MFU__FC_REPORTED_TOKENS_PER_S, 2, 1.0));
        assert_int_equal(cb.lent[MFU__FC_REPORTED_TOKENS_PER_S], 0);
        assert_true(mfu_run_column(b, MFU_COL_TOKENS_PER_S)[2] != 1.0);
        assert_same_cols(&ca, &cb, "lent, written");
        /* adopted: the run's arrays are the figures' */
        const double *loss = mfu_run_column(b, MFU_COL_LOSS);
        assert_true(mfu__fcols_adopt(&cb, b));
        for (int k = 0; k < MFU__FC_COUNT; k++)
            assert_int_equal(cb.lent[k], 0);
        assert_ptr_equal(cb.v[MFU__FC_LOSS], loss);
        assert_null(mfu_run_column(b, MFU_COL_LOSS));
        assert_true(cb.v[MFU__FC_LOSS][9] == loss9);
        mfu_step s;
        mfu_step_init(&s);
        s.step = 5000;
        assert_int_not_equal(mfu_run_append(b, &s, NULL, NULL), MFU_OK);
        assert_same_cols(&ca, &cb, "adopted");
        /* the tokens, one value in every row, are mapped, not the run's (mapped before lent:
         * the run's column goes with the run, readers take the value); the useful share is
         * mapped, known constant until a write */
        double x = 0;
#if defined(__linux__)
        assert_true(cb.mapped[MFU__FC_TOKENS] > 0);
        assert_true(mfu__fcols_const(&cb, MFU__FC_TOKENS, &x) && x == 524288);
        assert_non_null(mfu_run_column(b, MFU_COL_TOKENS)); /* still the run's, not taken */
        assert_ptr_not_equal(cb.v[MFU__FC_TOKENS], mfu_run_column(b, MFU_COL_TOKENS));
        assert_true(cb.mapped[MFU__FC_USEFUL] > 0);
        assert_true(mfu__fcols_const(&cb, MFU__FC_USEFUL, &x) && x == 1);
        assert_true(mfu__fcols_put(&cb, MFU__FC_USEFUL, 7, 0.5));
        assert_false(mfu__fcols_const(&cb, MFU__FC_USEFUL, &x));
#endif
        assert_false(mfu__fcols_const(&cb, MFU__FC_LOSS, &x));
        mfu__fcols_free(&ca);
        mfu__fcols_free(&cb);
        mfu__fctx_free(&fa);
        mfu__fctx_free(&fb);
        mfu_run_free(a);
        mfu_run_free(b);
    }
    mfu__const_map_min = min0;
}

/* A log that prints neither MFU nor FLOP/s (the builder's shortcut past the log's figures):
 * each row's flags say whether its FLOPs per token would be per the framework's own tokens/s
 * per device (printed in even rows) or per the job (no device count: rows from 200 on). */
static void log_flags_without_figures(void **state)
{
    (void)state;
    mfu_run *run = mfu_run_new();
    for (size_t i = 0; i < 300; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i + 1;
        s.tokens = 8192;
        s.step_time_s = 0.5 + 0.001 * (double)(i % 5);
        if (i % 2 == 0) {
            s.tokens_per_s = 2000;
            s.tokens_per_s_scope = MFU_SCOPE_DEVICE;
        }
        if (i < 200)
            s.devices = 8;
        assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    }
    mfu_report_input in;
    memset(&in, 0, sizeof in);
    mfu__fctx f;
    mfu__fcols c;
    compute(run, &in, &f, &c);
    assert_false(c.present[MFU__FC_LOG_FPT]);
    for (size_t i = 0; i < 300; i++) {
        uint8_t want = i % 2 == 0 ? MFU__FR_LOG_OWN_TPS : i >= 200 ? MFU__FR_LOG_PER_JOB : 0;
        uint8_t got =
            c.flags[i] & (MFU__FR_LOG_OWN_TPS | MFU__FR_LOG_PER_JOB | MFU__FR_LOG_NO_PEAK);
        if (got != want)
            fail_msg("row %zu: flags %u, want %u", i, got, want);
    }
    mfu__fcols_free(&c);
    mfu__fctx_free(&f);
    mfu_run_free(run);
}

/* A clean log (printed figures with rounding, 2 % noise) raises no stretch. */
static void clean_logs_hold(void **state)
{
    (void)state;
    mfu_report_input in = model_input("llama3-8b", 8192, "h100-sxm");
    for (unsigned seed = 1; seed <= 50; seed++) {
        mfu_run *run = mfu_run_new();
        snprintf(mfu_run_meta_mut(run)->format, 16, "torchtitan");
        double ft = test_flops_per_token("llama3-8b", 8192, MFU_CONV_TORCHTITAN);
        uint64_t x = seed * 2654435761u;
        for (int i = 0; i < 200; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            double u = (double)(x >> 11) / 9007199254740992.0;
            double tps = 5800 * (1 + 0.04 * (u - 0.5));
            mfu_step s;
            mfu_step_init(&s);
            s.step = 10 * (i + 1);
            s.tokens_per_s = round(tps);
            s.tokens_per_s_scope = MFU_SCOPE_DEVICE;
            s.flops_per_s = round(ft * tps / 1e10) * 1e10;
            s.flops_per_s_scope = MFU_SCOPE_DEVICE;
            s.mfu = round(ft * tps / 989e12 * 1e4) / 1e4;
            s.mfu_scope = MFU_SCOPE_DEVICE;
            mfu_run_append(run, &s, NULL, NULL);
        }
        mfu__fctx f;
        mfu__fcols c;
        compute(run, &in, &f, &c);
        if (f.nruns != 1)
            fail_msg("seed %u: %zu stretches in a clean log", seed, f.nruns);
        assert_true(f.runs[0].holds);
        mfu__fcols_free(&c);
        mfu__fctx_free(&f);
        mfu_run_free(run);
    }
}

/* Windows: the typical step (medians) and the total with the time stalls cost. */
static void windows(void **state)
{
    (void)state;
    mfu_run *run = mfu_run_new();
    mfu_run_meta_mut(run)->world_size = 1;
    for (int i = 0; i < 10; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = i + 1;
        s.tokens = 1000;
        s.step_time_s = i == 4 ? 11 : 1; /* one stall of 10 extra seconds */
        mfu_run_append(run, &s, NULL, NULL);
    }
    mfu_report_input none;
    memset(&none, 0, sizeof none);
    mfu__fctx f;
    mfu__fcols c;
    compute(run, &none, &f, &c);
    double scratch[10];
    mfu__fwindow w;
    mfu__figures_window(&c, 0, 9, scratch, &w);
    assert_int_equal(w.rows, 10);
    assert_true(w.median_tokens_per_s == 1000 && w.median_step_time_s == 1);
    REL(w.tokens_per_s, 10000.0 / 20, 1e-12);
    REL(w.stall_s, 10, 1e-12);
    assert_false(w.per_device);
    mfu__fcols_free(&c);
    mfu__fctx_free(&f);
    mfu_run_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(precedence),
        cmocka_unit_test(per_step_context),
        cmocka_unit_test(hidden_sequence_change),
        cmocka_unit_test(hidden_batch_change),
        cmocka_unit_test(incremental_equals_whole),
        cmocka_unit_test(present_columns),
        cmocka_unit_test(build_equals_rows),
        cmocka_unit_test(shared_columns),
        cmocka_unit_test(mapped_constants),
        cmocka_unit_test(lent_columns),
        cmocka_unit_test(log_flags_without_figures),
        cmocka_unit_test(clean_logs_hold),
        cmocka_unit_test(windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
