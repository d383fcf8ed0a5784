/*
 * test_analysis_compare.c - windows compared by their medians and order-statistic intervals: a
 * difference smaller than the noise has no known size; a real 3 % shift with enough steps has a
 * certain direction; intervals cover the truth, measured over noise levels, correlations and
 * window sizes (the table in docs/internals/analysis.md); results are deterministic; two runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mfu/analysis.h"
#include "synth.h"

/* One steady run of n steps at mfu_a, switching to mfu_b at row at (at >= n: never). */
static mfu_analysis *run_rho(uint64_t seed, size_t n, size_t at, double mfu_a, double mfu_b,
                             double sd, double rho, double devices, int resamples)
{
    double *mult = malloc(n * sizeof *mult);
    syn_noise nz = {sd, rho, 0, 1, 1, NULL, 0};
    syn_multipliers(seed, n, &nz, mult);
    syn_phase ph[2] = {syn_default_phase(0, mfu_a), syn_default_phase(at, mfu_b)};
    ph[0].devices = ph[1].devices = devices;
    ph[0].step_time_s = syn_step_time_for(&ph[0], mfu_a);
    ph[1].step_time_s = syn_step_time_for(&ph[1], mfu_b);
    mfu_series *s = syn_series(n, 1, ph, at < n ? 2 : 1, mult, NULL);
    free(mult);
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    o.intervals = resamples > 0;
    o.detect_warmup = false;
    mfu_analysis *a = NULL;
    assert_int_equal(mfu_analyze(s, &o, &a, NULL), MFU_OK);
    mfu_series_free(s);
    return a;
}

static mfu_analysis *run(uint64_t seed, size_t n, size_t at, double mfu_a, double mfu_b, double sd,
                         double devices, int resamples)
{
    return run_rho(seed, n, at, mfu_a, mfu_b, sd, 0.3, devices, resamples);
}

static mfu_window win(int64_t a, int64_t b)
{
    mfu_window w = {a, b};
    return w;
}

/* Two 20-step windows of the same level with 3 % noise: the MFU difference is noise, and the
 * interval is too wide to know its size (half-width > 1 point). Intervals are of the windows'
 * medians (order statistics widened for the AR(1) correlation). */
static void noise_difference_size_unknown(void **state)
{
    (void)state;
    int certain = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        mfu_analysis *a = run(seed, 200, 1000, 0.40, 0.40, 0.03, 64, 500);
        mfu_decomposition d;
        assert_int_equal(mfu_compare(a, win(21, 40), a, win(141, 160), NULL, &d, NULL), MFU_OK);
        const mfu_term_change *m = &d.term[MFU_TERM_MFU];
        assert_false(m->size_known);
        assert_true((m->hi_pct - m->lo_pct) / 2 > 0.01);
        assert_true(m->lo_pct <= m->pct && m->pct <= m->hi_pct);
        certain += m->direction_certain;
        if (!d.term[MFU_TERM_TOKENS_PER_S].direction_certain)
            assert_non_null(strstr(d.sentence, "(within noise)"));
        mfu_analysis_free(a);
    }
    /* A 95 % interval calls a direction on pure noise in about 5 % of seeds. */
    print_message("direction called on noise in %d of 40 seeds\n", certain);
    assert_true(certain <= 6);
}

/* A real 3 % MFU shift, 300 steps on each side, 2 % noise: direction certain, size known,
 * estimate within 1 point. */
static void real_shift_direction_certain(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        mfu_analysis *a = run(seed, 600, 300, 0.40, 0.40 * 0.97, 0.02, 64, 500);
        mfu_decomposition d;
        assert_int_equal(mfu_compare(a, win(1, 300), a, win(301, 600), NULL, &d, NULL), MFU_OK);
        const mfu_term_change *m = &d.term[MFU_TERM_MFU];
        assert_true(m->direction_certain);
        assert_true(m->size_known);
        assert_true(m->hi_pct < 0);
        assert_true(fabs(m->pct - (-0.03)) < 0.01);
        assert_true(d.term[MFU_TERM_TOKENS_PER_S].direction_certain);
        /* Constant terms: exactly zero, interval [0, 0], size known, no direction. */
        const mfu_term_change *c = &d.term[MFU_TERM_CAPACITY];
        assert_true(c->pct == 0 && c->lo_pct == 0 && c->hi_pct == 0);
        assert_true(c->size_known && !c->direction_certain);
        mfu_analysis_free(a);
    }
}

/* Coverage: over 60 seeds the 95 % interval of a zero difference holds 0 in most of them,
 * and the 95 % interval of one window's MFU holds the true 0.40 in most of them. */
static void intervals_cover_truth(void **state)
{
    (void)state;
    int diff_hits = 0, level_hits = 0;
    for (uint64_t seed = 100; seed < 160; seed++) {
        mfu_analysis *a = run(seed, 400, 1000, 0.40, 0.40, 0.02, 64, 400);
        mfu_decomposition d;
        assert_int_equal(mfu_compare(a, win(1, 200), a, win(201, 400), NULL, &d, NULL), MFU_OK);
        diff_hits += d.term[MFU_TERM_MFU].lo_pct <= 0 && 0 <= d.term[MFU_TERM_MFU].hi_pct;
        mfu_level l;
        assert_int_equal(mfu_analysis_window_level(a, win(1, 200), NULL, &l, NULL), MFU_OK);
        /* The level is a median: the median of exp(noise) is 1, so the noiseless 0.40. */
        double truth = 0.40;
        level_hits += l.mfu.lo <= truth && truth <= l.mfu.hi;
        assert_true(l.vif >= 1 && l.vif <= 10);
        mfu_analysis_free(a);
    }
    print_message("coverage: difference %d/60, level %d/60\n", diff_hits, level_hits);
    assert_true(diff_hits >= 51);
    assert_true(level_hits >= 51);
}

/* The table of docs/internals/analysis.md: 200 seeds of 3 % lognormal noise with AR(1) ρ, two
 * windows of w steps at the same level. "false": the MFU term's direction called certain on a
 * zero difference; "coverage": one window's 95 % MFU interval holds the true level. Bounds:
 * at most 10 % false calls and at least 88 % coverage where the noise is at most moderately
 * correlated (ρ <= 0.3) and the windows have 50 steps or more. */
static void intervals_table(void **state)
{
    (void)state;
    const double rhos[] = {0, 0.3, 0.7};
    const size_t ws[] = {20, 50, 200, 400};
    print_message("| w | ρ = 0: false / coverage | ρ = 0.3 | ρ = 0.7 |\n");
    for (size_t wi = 0; wi < 4; wi++) {
        char line[256];
        int k = snprintf(line, sizeof line, "| %zu |", ws[wi]);
        for (size_t ri = 0; ri < 3; ri++) {
            int falses = 0, covered = 0;
            size_t w = ws[wi];
            for (uint64_t seed = 1; seed <= 200; seed++) {
                mfu_analysis *a = run_rho(1000 * (ri + 1) + seed, 2 * w, 2 * w + 1, 0.40, 0.40,
                                          0.03, rhos[ri], 64, 1);
                mfu_decomposition d;
                assert_int_equal(mfu_compare(a, win(1, (int64_t)w), a,
                                             win((int64_t)w + 1, 2 * (int64_t)w), NULL, &d, NULL),
                                 MFU_OK);
                falses += d.term[MFU_TERM_MFU].direction_certain;
                covered += d.from.mfu.lo <= 0.40 && 0.40 <= d.from.mfu.hi;
                mfu_analysis_free(a);
            }
            k += snprintf(line + k, sizeof line - (size_t)k, " %.1f %% / %.1f %% |", falses / 2.0,
                          covered / 2.0);
            if (ws[wi] >= 50 && rhos[ri] <= 0.3) {
                assert_true(falses <= 20);
                assert_true(covered >= 176);
            }
        }
        print_message("%s\n", line);
    }
}

static void deterministic_and_two_runs(void **state)
{
    (void)state;
    mfu_analysis *a = run(5, 400, 1000, 0.40, 0.40, 0.02, 64, 300);
    mfu_analysis *b = run(6, 400, 1000, 0.42, 0.42, 0.02, 128, 300);
    mfu_decomposition d1, d2, d3;
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    o.intervals = true;
    mfu_window all = {INT64_MIN, INT64_MAX};
    assert_int_equal(mfu_compare(a, all, b, all, &o, &d1, NULL), MFU_OK);
    assert_int_equal(mfu_compare(a, all, b, all, &o, &d2, NULL), MFU_OK);
    for (int t = 0; t < MFU_TERM_COUNT_; t++) {
        assert_true(d1.term[t].pct == d2.term[t].pct);
        assert_true(d1.term[t].lo_pct == d2.term[t].lo_pct);
        assert_true(d1.term[t].hi_pct == d2.term[t].hi_pct);
    }
    assert_true(d1.to.mfu.lo == d2.to.mfu.lo);
    assert_string_equal(d1.sentence, d2.sentence);
    /* a narrower confidence: the same point estimate, a narrower interval */
    o.confidence = 0.8;
    assert_int_equal(mfu_compare(a, all, b, all, &o, &d3, NULL), MFU_OK);
    assert_true(d3.term[MFU_TERM_MFU].pct == d1.term[MFU_TERM_MFU].pct);
    assert_true(d3.term[MFU_TERM_MFU].lo_pct > d1.term[MFU_TERM_MFU].lo_pct);
    assert_true(d3.term[MFU_TERM_MFU].hi_pct < d1.term[MFU_TERM_MFU].hi_pct);
    o.confidence = 0.95;
    /* Run B: twice the devices at MFU 0.42 → capacity +100 %, utilization +5 %. */
    assert_true(fabs(d1.term[MFU_TERM_CAPACITY].pct - 1.0) < 1e-9);
    assert_true(fabs(d1.term[MFU_TERM_MFU].pct - 0.05) < 0.01);
    assert_true(fabs(d1.term[MFU_TERM_TOKENS_PER_S].pct - 1.10) < 0.02);
    assert_non_null(strstr(d1.sentence, "capacity +100 % (devices 64 \xe2\x86\x92 128)"));

    /* Without intervals: point estimates, no verdicts. */
    o.intervals = false;
    assert_int_equal(mfu_compare(a, all, b, all, &o, &d3, NULL), MFU_OK);
    assert_true(isnan(d3.term[MFU_TERM_MFU].lo_pct));
    assert_false(d3.term[MFU_TERM_MFU].direction_certain || d3.term[MFU_TERM_MFU].size_known);
    assert_true(d3.term[MFU_TERM_MFU].pct == d1.term[MFU_TERM_MFU].pct);

    /* Empty windows are errors that say which window. */
    mfu_error err = {0};
    d3.mfu_points = 123;
    assert_int_equal(mfu_compare(a, win(5000, 6000), b, all, NULL, &d3, &err), MFU_E_EMPTY);
    assert_non_null(strstr(err.message, "first window"));
    assert_true(d3.mfu_points == 123); /* untouched */
    assert_int_equal(mfu_compare(a, all, b, win(-5, 0), NULL, &d3, &err), MFU_E_EMPTY);
    assert_non_null(strstr(err.message, "second window"));
    o.confidence = 2;
    assert_int_equal(mfu_compare(a, all, b, all, &o, &d3, &err), MFU_E_INVALID);
    mfu_level l;
    assert_int_equal(mfu_analysis_window_level(a, win(5000, 6000), NULL, &l, &err), MFU_E_EMPTY);
    mfu_analysis_free(a);
    mfu_analysis_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(noise_difference_size_unknown),
        cmocka_unit_test(real_shift_direction_certain),
        cmocka_unit_test(intervals_cover_truth),
        cmocka_unit_test(intervals_table),
        cmocka_unit_test(deterministic_and_two_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
