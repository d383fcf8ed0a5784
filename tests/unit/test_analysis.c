/*
 * test_analysis.c - the analysis core (src/analysis): the series, derived MFU/HFU, warm-up,
 * segments at configuration changes and level shifts, the decomposition and its sentence,
 * the JSON document, and bad input. Every series is synthetic with known truth (synth.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/json.h"
#include "mfu/analysis.h"
#include "synth.h"

static const double WARMUP3[] = {5, 2, 1.2};

static mfu_analysis *analyse(const mfu_series *s, const mfu_analysis_options *o)
{
    mfu_analysis *a = NULL;
    mfu_error err = {0};
    mfu_status st = mfu_analyze(s, o, &a, &err);
    if (st != MFU_OK)
        fail_msg("mfu_analyze: %s", err.message);
    return a;
}

/* ---- the series ----------------------------------------------------------------------------- */

static void series_round_trip_and_limits(void **state)
{
    (void)state;
    mfu_series_row r;
    mfu_series_row_init(&r);
    assert_true(isnan(r.step_time_s) && isnan(r.loss) && isnan(r.optimizer_s));
    assert_int_equal(r.rank, -1);
    mfu_series *s = mfu_series_new();
    assert_non_null(s);
    r.step = 7;
    r.step_time_s = 1.5;
    r.tokens = 1000;
    r.dtype = "bf16";
    r.recompute = "full";
    r.flags = MFU_STEP_LOSS_NAN;
    assert_int_equal(mfu_series_append(s, &r, NULL), MFU_OK);
    mfu_series_row g;
    assert_true(mfu_series_get(s, 0, &g));
    assert_int_equal(g.step, 7);
    assert_true(g.step_time_s == 1.5 && g.tokens == 1000);
    assert_string_equal(g.dtype, "bf16");
    assert_string_equal(g.recompute, "full");
    assert_int_equal(g.flags, MFU_STEP_LOSS_NAN);
    assert_false(mfu_series_get(s, 1, &g));
    assert_true(mfu_series_column(s, MFU_SC_STEP_TIME_S)[0] == 1.5);
    assert_null(mfu_series_column(s, MFU_SC_COUNT_));

    /* A label too long fails and leaves the series unchanged. */
    mfu_error err = {0};
    r.dtype = "a-dtype-label-that-is-far-too-long-for-the-table";
    assert_int_equal(mfu_series_append(s, &r, &err), MFU_E_LIMIT);
    assert_string_equal(err.field, "dtype");
    assert_int_equal(mfu_series_count(s), 1);

    /* The 65th distinct label fails; so does a row past the row limit. */
    char lab[16];
    size_t added = 0;
    mfu_status st = MFU_OK;
    for (int i = 0; i < 80 && st == MFU_OK; i++) {
        snprintf(lab, sizeof lab, "l%d", i);
        r.dtype = lab;
        r.recompute = NULL;
        st = mfu_series_append(s, &r, &err);
        added += st == MFU_OK;
    }
    assert_int_equal(st, MFU_E_LIMIT);
    assert_int_equal(added, MFU_SERIES_MAX_LABELS - 2); /* bf16 and full were there */
    assert_int_equal(mfu_series_set_max_rows(s, 2, &err), MFU_E_INVALID); /* below rows held */
    assert_int_equal(mfu_series_set_max_rows(s, mfu_series_count(s), &err), MFU_OK);
    r.dtype = "bf16";
    assert_int_equal(mfu_series_append(s, &r, &err), MFU_E_LIMIT);
    assert_int_equal(mfu_series_append(NULL, &r, &err), MFU_E_INVALID);
    assert_int_equal(mfu_series_count(NULL), 0);
    mfu_series_free(s);
    mfu_series_free(NULL);
}

/* ---- derived figures ------------------------------------------------------------------------ */

static void derived_mfu_hfu_exact(void **state)
{
    (void)state;
    mfu_series *s = mfu_series_new();
    mfu_series_row r;
    /* Row 0: tokens + step time; row 1: padding and recompute; row 2: tokens/s only;
     * row 3: timestamps only (step time from Δtime/Δstep); row 4: step time <= 0. */
    for (int i = 0; i < 5; i++) {
        mfu_series_row_init(&r);
        r.step = i < 3 ? i : 2 + 2 * (i - 2); /* 0 1 2 4 6 */
        r.model_flops_per_token = 1e10;
        r.devices = 8;
        r.peak_flops_per_s = 1e15;
        switch (i) {
        case 0:
            r.tokens = 1e6;
            r.step_time_s = 4.0;
            break;
        case 1:
            r.tokens = 1e6;
            r.useful_tokens = 8e5;
            r.hardware_flops_per_token = 1.25e10;
            r.step_time_s = 4.0;
            break;
        case 2:
            r.tokens_per_s = 3e5;
            r.time_s = 100;
            break;
        case 3:
            r.tokens = 1e6;
            r.time_s = 108; /* two steps after step 2: 4 s each */
            break;
        default:
            r.tokens = 1e6;
            r.step_time_s = -1;
            break;
        }
        assert_int_equal(mfu_series_append(s, &r, NULL), MFU_OK);
    }
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    o.detect_warmup = false;
    mfu_analysis *a = analyse(s, &o);
    const double *mfu = mfu_analysis_derived(a, MFU_D_MFU);
    const double *hfu = mfu_analysis_derived(a, MFU_D_HFU);
    const double *st = mfu_analysis_derived(a, MFU_D_STEP_TIME_S);
    const double *mf = mfu_analysis_derived(a, MFU_D_MODEL_FLOPS_PER_S_PER_DEVICE);
    const double *hf = mfu_analysis_derived(a, MFU_D_HARDWARE_FLOPS_PER_S_PER_DEVICE);
    /* 1e6 tokens × 1e10 / 4 s / (8 × 1e15) = 0.3125 */
    assert_true(fabs(mfu[0] - 0.3125) < 1e-12 && fabs(hfu[0] - 0.3125) < 1e-12);
    assert_true(fabs(mf[0] - 1e6 * 1e10 / 4 / 8) < 1);
    /* useful 0.8: MFU 0.25; hardware counts every token at 1.25e10: 0.390625 */
    assert_true(fabs(mfu[1] - 0.25) < 1e-12);
    assert_true(fabs(hfu[1] - 0.390625) < 1e-12);
    assert_true(fabs(hf[1] - 1e6 * 1.25e10 / 4 / 8) < 1);
    /* tokens/s only: 3e5 × 1e10 / 8e15 */
    assert_true(fabs(mfu[2] - 0.375) < 1e-12);
    assert_true(isnan(st[2]));
    assert_true(fabs(st[3] - 4.0) < 1e-12 && fabs(mfu[3] - 0.3125) < 1e-12);
    /* A non-positive step time is not usable: no MFU, and an impossible-value finding. */
    assert_true(isnan(mfu[4]));
    assert_false(mfu_analysis_is_steady(a, 4));
    int k = syn_find(a, "impossible_value");
    assert_true(k >= 0);
    assert_true(syn_evidence(mfu_analysis_finding(a, (size_t)k), "nonpositive_step_time_steps") ==
                1);
    assert_int_equal(mfu_analysis_finding(a, (size_t)k)->first_step, 6);
    mfu_analysis_free(a);
    mfu_series_free(s);
}

/* ---- warm-up -------------------------------------------------------------------------------- */

static void warmup_detected_and_excluded(void **state)
{
    (void)state;
    size_t n = 400;
    double mult[400];
    syn_noise nz = {0.02, 0.3, 0, 1, 1, WARMUP3, 3};
    syn_phase ph = syn_default_phase(0, 0.40);
    for (uint64_t seed = 1; seed <= 20; seed++) {
        syn_multipliers(seed, n, &nz, mult);
        mfu_series *s = syn_series(n, 1, &ph, 1, mult, NULL);
        mfu_analysis_options o;
        mfu_analysis_options_init(&o);
        o.intervals = false;
        mfu_analysis *a = analyse(s, &o);
        const mfu_warmup *w = mfu_analysis_warmup(a);
        assert_int_equal(w->steps, 3);
        assert_int_equal(w->first_step, 1);
        assert_int_equal(w->last_step, 3);
        /* mean of 5, 2, 1.2 = 2.73: slowdown about 1.73 */
        assert_true(fabs(w->slowdown - 1.733) < 0.1);
        assert_false(mfu_analysis_is_steady(a, 2));
        assert_true(mfu_analysis_is_steady(a, 3));
        /* The steady MFU is the level without the warm-up: 0.40 within noise. */
        double with = mfu_analysis_steady(a)->mfu.value;
        double with_total = mfu_analysis_steady(a)->total_mfu;
        assert_true(fabs(with - 0.40) < 0.004);
        assert_int_equal(mfu_analysis_segment_count(a), 1);
        assert_int_equal(mfu_analysis_segment(a, 0)->start_step, 4);
        mfu_analysis_free(a);

        /* Switched off: everything counts; the total drops (the warm-up adds 4 + 1 + 0.2 step
         * times to ~400: 1.3 % of the time), the median of the steps hardly moves (3 of 400) */
        o.detect_warmup = false;
        a = analyse(s, &o);
        assert_int_equal(mfu_analysis_warmup(a)->steps, 0);
        assert_true(mfu_analysis_steady(a)->total_mfu < with_total * (1 - 0.01));
        assert_true(fabs(mfu_analysis_steady(a)->mfu.value / with - 1) < 0.005);
        mfu_analysis_free(a);
        mfu_series_free(s);
    }
    /* No warm-up in the data: none found. */
    syn_noise clean = {0.02, 0.3, 0, 1, 1, NULL, 0};
    for (uint64_t seed = 1; seed <= 20; seed++) {
        syn_multipliers(seed, n, &clean, mult);
        mfu_series *s = syn_series(n, 1, &ph, 1, mult, NULL);
        mfu_analysis_options o;
        mfu_analysis_options_init(&o);
        o.intervals = false;
        mfu_analysis *a = analyse(s, &o);
        assert_int_equal(mfu_analysis_warmup(a)->steps, 0);
        mfu_analysis_free(a);
        mfu_series_free(s);
    }
}

/* ---- sequence length 4096 → 1024 ------------------------------------------------------------ */

/* MFU 0.45 → 0.414 (−8 %) while FLOPs per token fall 1.36× (36 % easier): tokens/s rises by
 * 1.36 × 0.92 − 1 = +25.1 %. */
static mfu_series *seq_drop_series(uint64_t seed, size_t n, size_t at)
{
    double *mult = malloc(n * sizeof *mult);
    syn_noise nz = {0.02, 0.3, 0.005, 1.2, 2.0, WARMUP3, 3};
    syn_multipliers(seed, n, &nz, mult);
    syn_phase ph[2] = {syn_default_phase(0, 0.45), syn_default_phase(at, 0.414)};
    ph[1].fpt = 1e10 / 1.36;
    ph[1].seq_len = 1024;
    ph[1].step_time_s = syn_step_time_for(&ph[1], 0.414);
    mfu_series *s = syn_series(n, 1, ph, 2, mult, NULL);
    free(mult);
    return s;
}

static void seq_len_drop(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        mfu_series *s = seq_drop_series(seed, 1000, 500);
        mfu_analysis_options o;
        mfu_analysis_options_init(&o);
        o.intervals = true;
        mfu_analysis *a = analyse(s, &o);
        assert_int_equal(mfu_analysis_segment_count(a), 2);
        const mfu_segment *g = mfu_analysis_segment(a, 1);
        assert_int_equal(g->start_step, 501); /* the config change, exactly */
        assert_int_equal(g->cause, MFU_CAUSE_CONFIG);
        assert_true(g->level.seq_len == 1024);
        const mfu_decomposition *d = mfu_analysis_boundary(a, 0);
        assert_non_null(d);
        const mfu_term_change *T = d->term;
        assert_true(fabs(T[MFU_TERM_TOKENS_PER_S].pct - (1.36 * 0.92 - 1)) < 0.01);
        assert_true(fabs(T[MFU_TERM_MFU].pct - (-0.08)) < 0.01);
        assert_true(fabs(T[MFU_TERM_FLOPS_PER_TOKEN].pct - 0.36) < 1e-9);
        assert_true(fabs(T[MFU_TERM_CAPACITY].pct) < 1e-12);
        assert_true(fabs(T[MFU_TERM_PADDING].pct) < 1e-12);
        /* The terms add up exactly in log space, and shares to 1. */
        double sum = T[MFU_TERM_MFU].dln + T[MFU_TERM_CAPACITY].dln +
                     T[MFU_TERM_FLOPS_PER_TOKEN].dln + T[MFU_TERM_PADDING].dln;
        assert_true(fabs(sum - T[MFU_TERM_TOKENS_PER_S].dln) < 1e-12);
        assert_true(fabs(T[MFU_TERM_MFU].share + T[MFU_TERM_FLOPS_PER_TOKEN].share - 1) < 1e-9);
        /* Verdicts: both moves are certain and their size known. */
        assert_true(T[MFU_TERM_TOKENS_PER_S].direction_certain);
        assert_true(T[MFU_TERM_MFU].direction_certain && T[MFU_TERM_MFU].size_known);
        assert_true(T[MFU_TERM_MFU].lo_pct < T[MFU_TERM_MFU].pct &&
                    T[MFU_TERM_MFU].pct < T[MFU_TERM_MFU].hi_pct);
        /* Both detected: tokens/s up while MFU down, explained by the workload. */
        int k = syn_find(a, "throughput_up_mfu_down");
        assert_true(k >= 0);
        const mfu_finding *f = mfu_analysis_finding(a, (size_t)k);
        assert_true(fabs(syn_evidence(f, "flops_per_token_pct") - 0.36) < 1e-9);
        assert_int_equal(f->last_step, 501);
        char head[64];
        snprintf(head, sizeof head, "tokens/s +%.0f %%: ", 100 * T[MFU_TERM_TOKENS_PER_S].pct);
        assert_true(strncmp(d->sentence, head, strlen(head)) == 0);
        assert_non_null(
            strstr(d->sentence, "workload 36 % easier (sequence 4096 \xe2\x86\x92 1024)"));
        assert_non_null(strstr(d->sentence, "utilization \xe2\x88\x92"
                                            "8 %"));
        assert_int_equal(mfu_analysis_finding_count(a), 1);
        mfu_analysis_free(a);
        mfu_series_free(s);
    }
}

/* ---- level shift without a configuration change ---------------------------------------------- */

static void level_shift_boundary(void **state)
{
    (void)state;
    size_t n = 1200, at = 600;
    double mult[1200];
    syn_noise nz = {0.02, 0.3, 0.005, 1.2, 2.0, WARMUP3, 3};
    for (uint64_t seed = 1; seed <= 10; seed++) {
        syn_multipliers(seed, n, &nz, mult);
        syn_phase ph[2] = {syn_default_phase(0, 0.45), syn_default_phase(at, 0.40)};
        mfu_series *s = syn_series(n, 1, ph, 2, mult, NULL);
        mfu_analysis_options o;
        mfu_analysis_options_init(&o);
        o.intervals = true;
        mfu_analysis *a = analyse(s, &o);
        assert_int_equal(mfu_analysis_segment_count(a), 2);
        const mfu_segment *g = mfu_analysis_segment(a, 1);
        assert_int_equal(g->cause, MFU_CAUSE_LEVEL);
        assert_true(llabs(g->start_step - (int64_t)(at + 1)) <= 3);
        const mfu_decomposition *d = mfu_analysis_boundary(a, 0);
        assert_true(fabs(d->term[MFU_TERM_MFU].pct - (0.40 / 0.45 - 1)) < 0.01);
        assert_true(fabs(d->term[MFU_TERM_MFU].dln - d->term[MFU_TERM_TOKENS_PER_S].dln) < 1e-12);
        /* Both fell: no throughput-versus-MFU finding. */
        assert_int_equal(syn_find(a, "throughput_up_mfu_down"), -1);
        assert_int_equal(syn_find(a, "throughput_down_mfu_up"), -1);
        mfu_analysis_free(a);
        mfu_series_free(s);
    }
}

/* The same shift with 40 rows before it that have no step time (unusable: the search indexes
 * the usable rows, and maps its cut back past the gap) and padding that never moves: the
 * boundary is at the shift's step, not 40 steps off. */
static void level_shift_after_gaps(void **state)
{
    (void)state;
    size_t n = 1200, at = 600;
    double mult[1200];
    syn_noise nz = {0.02, 0.3, 0.005, 1.2, 2.0, WARMUP3, 3};
    for (uint64_t seed = 1; seed <= 5; seed++) {
        syn_multipliers(seed, n, &nz, mult);
        for (size_t i = 300; i < 340; i++)
            mult[i] = NAN;
        syn_phase ph[2] = {syn_default_phase(0, 0.45), syn_default_phase(at, 0.40)};
        mfu_series *s = syn_series(n, 1, ph, 2, mult, NULL);
        mfu_analysis *a = analyse(s, NULL);
        assert_int_equal(mfu_analysis_segment_count(a), 2);
        const mfu_segment *g = mfu_analysis_segment(a, 1);
        assert_int_equal(g->cause, MFU_CAUSE_LEVEL);
        if (llabs(g->start_step - (int64_t)(at + 1)) > 3)
            fail_msg("seed %llu: the boundary at step %lld, the shift at %zu",
                     (unsigned long long)seed, (long long)g->start_step, at + 1);
        mfu_analysis_free(a);
        mfu_series_free(s);
    }
}

/* ---- devices 64 → 128 ---------------------------------------------------------------------- */

static void device_count_change(void **state)
{
    (void)state;
    size_t n = 800;
    double mult[800];
    syn_noise nz = {0.02, 0.3, 0.005, 1.2, 2.0, WARMUP3, 3};
    syn_multipliers(3, n, &nz, mult);
    syn_phase ph[2] = {syn_default_phase(0, 0.45), syn_default_phase(400, 0.42)};
    ph[1].devices = 128;
    ph[1].step_time_s = syn_step_time_for(&ph[1], 0.42);
    mfu_series *s = syn_series(n, 1, ph, 2, mult, NULL);
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    o.intervals = true;
    mfu_analysis *a = analyse(s, &o);
    assert_int_equal(mfu_analysis_segment_count(a), 2);
    assert_int_equal(mfu_analysis_segment(a, 1)->start_step, 401);
    const mfu_decomposition *d = mfu_analysis_boundary(a, 0);
    assert_true(fabs(d->term[MFU_TERM_CAPACITY].pct - 1.0) < 1e-9);
    assert_true(fabs(d->term[MFU_TERM_MFU].pct - (0.42 / 0.45 - 1)) < 0.01);
    assert_true(fabs(d->term[MFU_TERM_TOKENS_PER_S].pct - (2 * 0.42 / 0.45 - 1)) < 0.01);
    assert_true(fabs(d->term[MFU_TERM_FLOPS_PER_TOKEN].pct) < 1e-12);
    assert_non_null(strstr(d->sentence, "capacity +100 % (devices 64 \xe2\x86\x92 128)"));
    assert_non_null(strstr(d->config_change, "devices 64 \xe2\x86\x92 128"));
    int k = syn_find(a, "throughput_up_mfu_down");
    assert_true(k >= 0);
    assert_true(fabs(syn_evidence(mfu_analysis_finding(a, (size_t)k), "capacity_pct") - 1.0) <
                1e-9);
    mfu_analysis_free(a);
    mfu_series_free(s);
}

/* ---- sentence ------------------------------------------------------------------------------- */

static void sentence_words(void **state)
{
    (void)state;
    mfu_decomposition d;
    memset(&d, 0, sizeof d);
    for (int t = 0; t < MFU_TERM_COUNT_; t++)
        d.term[t].lo_pct = d.term[t].hi_pct = NAN;
    d.from.seq_len = d.to.seq_len = NAN;
    d.from.global_batch = d.to.global_batch = NAN;
    d.from.devices = d.to.devices = d.from.peak_flops_per_s = d.to.peak_flops_per_s = NAN;
    d.from.model_flops_per_token = 1e10;
    d.to.model_flops_per_token = 1.36e10;
    d.term[MFU_TERM_FLOPS_PER_TOKEN].dln = -log(1.36);
    d.term[MFU_TERM_FLOPS_PER_TOKEN].pct = expm1(-log(1.36));
    d.term[MFU_TERM_MFU].dln = log(1.003);
    d.term[MFU_TERM_MFU].pct = 0.003;
    d.term[MFU_TERM_TOKENS_PER_S].dln = -log(1.36) + log(1.003);
    d.term[MFU_TERM_TOKENS_PER_S].pct = expm1(d.term[MFU_TERM_TOKENS_PER_S].dln);
    char buf[MFU_SENTENCE_MAX];
    assert_true(mfu_decomposition_sentence(&d, buf, sizeof buf));
    /* harder by 36 %, the 0.3 % utilization change left out, FLOPs named without seq/batch */
    assert_string_equal(buf, "tokens/s \xe2\x88\x92"
                             "26 %: workload 36 % harder ("
                             "FLOPs/token 10 \xe2\x86\x92 13.6 GFLOP)");
    /* Uncertain direction says so; a tiny buffer truncates and says so. */
    d.term[MFU_TERM_TOKENS_PER_S].lo_pct = -0.4;
    d.term[MFU_TERM_TOKENS_PER_S].hi_pct = 0.1;
    assert_true(mfu_decomposition_sentence(&d, buf, sizeof buf));
    assert_non_null(strstr(buf, "(within noise)"));
    char small[12];
    assert_false(mfu_decomposition_sentence(&d, small, sizeof small));
    assert_true(strlen(small) < sizeof small);
    /* Without FLOPs per token the split is unknown. */
    d.term[MFU_TERM_MFU].dln = NAN;
    assert_true(mfu_decomposition_sentence(&d, buf, sizeof buf));
    assert_non_null(strstr(buf, "split unknown"));
}

/* ---- JSON ----------------------------------------------------------------------------------- */

static void json_keys_and_determinism(void **state)
{
    (void)state;
    mfu_series *s = seq_drop_series(9, 600, 300);
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    o.intervals = true;
    mfu_analysis *a = analyse(s, &o), *b = analyse(s, &o);
    assert_int_equal(mfu_analysis_expect(a, "mfu>=0.3", NULL, NULL), MFU_OK);
    assert_int_equal(mfu_analysis_expect(b, "mfu>=0.3", NULL, NULL), MFU_OK);
    json_t *ja = mfu__analysis_json(a), *jb = mfu__analysis_json(b);
    assert_non_null(ja);
    char *da = json_dumps(ja, JSON_COMPACT), *db = json_dumps(jb, JSON_COMPACT);
    assert_string_equal(da, db); /* same series, same options: the same bytes */
    free(db);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(ja, "warmup"), "steps")),
                     3);
    json_t *segs = json_object_get(ja, "segments");
    assert_int_equal(json_array_size(segs), 2);
    json_t *s1 = json_array_get(segs, 1);
    assert_int_equal(json_integer_value(json_object_get(s1, "start_step")), 301);
    assert_string_equal(json_string_value(json_object_get(s1, "cause")), "config");
    json_t *mfu = json_object_get(json_object_get(s1, "levels"), "mfu");
    assert_true(json_real_value(json_object_get(mfu, "lo")) <
                json_real_value(json_object_get(mfu, "hi")));
    json_t *dec = json_array_get(json_object_get(ja, "decomposition"), 0);
    json_t *terms = json_object_get(dec, "terms");
    /* A boundary's levels are its segments' levels, intervals included. */
    json_t *to_mfu = json_object_get(json_object_get(dec, "to"), "mfu");
    assert_true(json_real_value(json_object_get(to_mfu, "lo")) ==
                json_real_value(json_object_get(mfu, "lo")));
    assert_int_equal(json_integer_value(json_object_get(dec, "at_step")), 301);
    const char *names[] = {"tokens_per_second", "mfu", "capacity", "flops_per_token", "padding"};
    for (int t = 0; t < 5; t++) {
        json_t *x = json_object_get(terms, names[t]);
        assert_non_null(x);
        assert_non_null(json_object_get(x, "pct"));
        assert_non_null(json_object_get(x, "share"));
        assert_true(json_is_boolean(json_object_get(x, "direction_certain")));
    }
    assert_true(
        fabs(json_real_value(json_object_get(json_object_get(terms, "flops_per_token"), "pct")) -
             0.36) < 1e-9);
    json_t *f0 = json_array_get(json_object_get(ja, "findings"), 0);
    assert_string_equal(json_string_value(json_object_get(f0, "kind")), "throughput_up_mfu_down");
    assert_string_equal(json_string_value(json_object_get(f0, "severity")), "warning");
    assert_int_equal(json_array_size(json_object_get(f0, "steps")), 2);
    assert_true(json_is_object(json_object_get(f0, "evidence")));
    assert_true(json_string_length(json_object_get(f0, "next_step")) > 20);
    json_t *inv = json_array_get(json_object_get(ja, "invariants"), 0);
    assert_true(json_is_true(json_object_get(inv, "passed")));

    /* Without intervals: the same medians, no interval. */
    o.intervals = false;
    mfu_analysis *c = analyse(s, &o);
    const mfu_level *la = &mfu_analysis_segment(a, 0)->level,
                    *lc = &mfu_analysis_segment(c, 0)->level;
    assert_true(la->mfu.value == lc->mfu.value);
    assert_true(isnan(lc->mfu.lo) && isfinite(la->mfu.lo));
    free(da);
    json_decref(ja);
    json_decref(jb);
    mfu_analysis_free(a);
    mfu_analysis_free(b);
    mfu_analysis_free(c);
    mfu_series_free(s);
}

/* ---- per-rank rows -------------------------------------------------------------------------- */

static void per_rank_rows_collapse(void **state)
{
    (void)state;
    mfu_series *s = mfu_series_new();
    /* 4 ranks log 30 steps, rank-major order; the job's step time is the slowest rank's. */
    for (int rank = 3; rank >= 0; rank--)
        for (int step = 1; step <= 30; step++) {
            mfu_series_row r;
            mfu_series_row_init(&r);
            r.step = step;
            r.rank = rank;
            r.tokens = 1000;
            r.step_time_s = 1.0 + 0.01 * rank + 0.001 * step;
            assert_int_equal(mfu_series_append(s, &r, NULL), MFU_OK);
        }
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    o.intervals = false;
    mfu_analysis *a = analyse(s, &o);
    assert_int_equal(mfu_analysis_steps(a), 30);
    const int64_t *steps = mfu_analysis_step_numbers(a);
    const double *st = mfu_analysis_derived(a, MFU_D_STEP_TIME_S);
    for (int i = 0; i < 30; i++) {
        assert_int_equal(steps[i], i + 1);
        assert_true(fabs(st[i] - (1.03 + 0.001 * (i + 1))) < 1e-12);
    }
    /* No FLOPs per token: tokens/s is known, MFU is not. */
    assert_true(isnan(mfu_analysis_steady(a)->mfu.value));
    assert_true(mfu_analysis_steady(a)->tokens_per_s.value > 900);
    mfu_analysis_free(a);
    mfu_series_free(s);
}

/* ---- bad input ------------------------------------------------------------------------------ */

static void bad_input_never_crashes(void **state)
{
    (void)state;
    mfu_error err = {0};
    mfu_analysis *a = NULL;
    mfu_series *s = mfu_series_new();
    assert_int_equal(mfu_analyze(s, NULL, &a, &err), MFU_E_EMPTY);
    assert_null(a);
    assert_int_equal(mfu_analyze(NULL, NULL, &a, &err), MFU_E_INVALID);
    /* Options out of range name the option. */
    mfu_series_row r;
    mfu_series_row_init(&r);
    r.step = 1;
    assert_int_equal(mfu_series_append(s, &r, NULL), MFU_OK);
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    o.confidence = 1.5;
    assert_int_equal(mfu_analyze(s, &o, &a, &err), MFU_E_INVALID);
    assert_string_equal(err.field, "confidence");
    mfu_analysis_options_init(&o);
    o.min_segment_steps = 1;
    assert_int_equal(mfu_analyze(s, &o, &a, &err), MFU_E_INVALID);
    assert_string_equal(err.field, "min_segment_steps");

    /* Rows of garbage: all NaN, infinities, zeros, negatives, huge values. */
    const double vals[] = {NAN, INFINITY, -INFINITY, 0, -1, 1e308, 1e-308, 3};
    for (int i = 0; i < 400; i++) {
        mfu_series_row_init(&r);
        r.step = i % 7 == 0 ? i - 3 : i; /* steps that go back */
        r.step_time_s = vals[i % 8];
        r.tokens = vals[(i / 8) % 8];
        r.tokens_per_s = vals[(i / 3) % 8];
        r.useful_tokens = vals[(i / 5) % 8];
        r.model_flops_per_token = vals[(i / 2) % 8];
        r.hardware_flops_per_token = vals[(i / 11) % 8];
        r.devices = vals[(i / 13) % 8];
        r.peak_flops_per_s = vals[(i / 17) % 8];
        r.clock_mhz = vals[(i / 19) % 8];
        r.loss = vals[(i / 23) % 8];
        r.time_s = vals[(i / 29) % 8];
        r.rank = i % 3 == 0 ? (int32_t)(i % 5) : -1;
        r.comm_s = vals[i % 8];
        assert_int_equal(mfu_series_append(s, &r, NULL), MFU_OK);
    }
    mfu_analysis_options_init(&o);
    o.intervals = true;
    assert_int_equal(mfu_analyze(s, &o, &a, &err), MFU_OK);
    assert_true(syn_find(a, "impossible_value") >= 0);
    json_t *j = mfu__analysis_json(a);
    assert_non_null(j);
    char *dump = json_dumps(j, JSON_COMPACT);
    assert_non_null(dump);
    free(dump);
    json_decref(j);
    mfu_analysis_free(a);
    mfu_series_free(s);

    /* A single usable row: one segment, no intervals, no crash. */
    s = mfu_series_new();
    mfu_series_row_init(&r);
    r.step = 1;
    r.tokens = 10;
    r.step_time_s = 1;
    mfu_series_append(s, &r, NULL);
    assert_int_equal(mfu_analyze(s, NULL, &a, &err), MFU_OK);
    assert_int_equal(mfu_analysis_segment_count(a), 1);
    assert_true(isnan(mfu_analysis_segment(a, 0)->level.tokens_per_s.lo));
    mfu_analysis_free(a);
    mfu_series_free(s);
    mfu_analysis_free(NULL);
    assert_null(mfu_analysis_segment(NULL, 0));
    assert_null(mfu_analysis_boundary(NULL, 0));
}

/* A long series: the bootstrap grid (rows > 262144) and the block floor keep it bounded. */
static void long_series(void **state)
{
    (void)state;
    size_t n = 300000;
    double *mult = malloc(n * sizeof *mult);
    syn_noise nz = {0.02, 0.3, 0.005, 1.2, 2.0, WARMUP3, 3};
    syn_multipliers(5, n, &nz, mult);
    syn_phase ph = syn_default_phase(0, 0.40);
    mfu_series *s = syn_series(n, 1, &ph, 1, mult, NULL);
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    o.intervals = true;
    mfu_analysis *a = analyse(s, &o);
    const mfu_level *l = mfu_analysis_steady(a);
    assert_int_equal(l->steps, n - 3);
    assert_true(l->vif >= 1);
    assert_true(l->mfu.lo < l->mfu.value && l->mfu.value < l->mfu.hi);
    assert_true(l->mfu.hi - l->mfu.lo < 0.002);
    assert_int_equal(mfu_analysis_segment_count(a), 1);
    mfu_analysis_free(a);
    mfu_series_free(s);
    free(mult);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(series_round_trip_and_limits), cmocka_unit_test(derived_mfu_hfu_exact),
        cmocka_unit_test(warmup_detected_and_excluded), cmocka_unit_test(seq_len_drop),
        cmocka_unit_test(level_shift_boundary),         cmocka_unit_test(level_shift_after_gaps),
        cmocka_unit_test(device_count_change),          cmocka_unit_test(sentence_words),
        cmocka_unit_test(json_keys_and_determinism),    cmocka_unit_test(per_rank_rows_collapse),
        cmocka_unit_test(bad_input_never_crashes),      cmocka_unit_test(long_series),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
