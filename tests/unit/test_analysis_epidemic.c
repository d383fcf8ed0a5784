/*
 * test_analysis_epidemic.c - a short stretch in the middle of a run that runs slower and then
 * recovers (a throttled period) is a segment of its own, found to a few steps: the epidemic
 * (range of the rank CUSUM) test of segment.c. Before it, a stretch of 100 of 600 steps 29 %
 * slower under 2 % AR(0.3) noise was not significant as one split, and its steps were
 * reported as a stall "every 2 steps". Clean runs stay one segment (test_analysis_noalarm.c
 * covers 300 seeds; no_stretch_no_split 60 more of this generator).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>

#include "synth.h"

#define N 600

static mfu_analysis *analyse(mfu_series *s)
{
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    o.intervals = false;
    mfu_analysis *a = NULL;
    assert_int_equal(mfu_analyze(s, &o, &a, NULL), MFU_OK);
    return a;
}

/* Rows [from, from + len) run at factor x the step time (clock 1400 of 1980 MHz). */
static mfu_series *stretch(uint64_t seed, size_t from, size_t len, double x, bool clock)
{
    static const double warm[3] = {3.0, 1.8, 1.2};
    double mult[N];
    syn_noise nz = {0.02, 0.3, 0.0, 1, 1, warm, 3};
    syn_multipliers(seed, N, &nz, mult);
    syn_phase ph[3] = {syn_default_phase(0, 0.45), syn_default_phase(from, 0.45),
                       syn_default_phase(from + len, 0.45)};
    ph[1].step_time_s *= x;
    if (clock)
        for (int q = 0; q < 3; q++) {
            ph[q].clock_mhz = q == 1 && x > 1 ? 1400 : 1980;
            ph[q].power_w = 610;
            ph[q].power_limit_w = 700;
        }
    return syn_series(N, 1, ph, 3, mult, NULL);
}

/* How often a stretch is its own segment with both ends within tol steps, over 20 seeds. */
static int found_of(size_t from, size_t len, double x, bool clock, int64_t tol)
{
    int found = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        mfu_series *s = stretch(seed, from, len, x, clock);
        mfu_analysis *a = analyse(s);
        int64_t b1 = (int64_t)from + 1, b2 = b1 + (int64_t)len;
        bool ok = mfu_analysis_segment_count(a) == 3 &&
                  llabs(mfu_analysis_segment(a, 1)->start_step - b1) <= tol &&
                  llabs(mfu_analysis_segment(a, 2)->start_step - b2) <= tol;
        found += ok;
        if (ok) /* a stretch found as a level is not a stall */
            assert_int_equal(syn_find(a, "stall"), -1);
        if (clock) {
            assert_true(syn_find(a, "throttling") >= 0);
            if (ok) {
                const mfu_decomposition *d = mfu_analysis_boundary(a, 0);
                assert_true(fabs(d->term[MFU_TERM_MFU].pct - (1 / x - 1)) < 0.01);
            }
        }
        mfu_analysis_free(a);
        mfu_series_free(s);
    }
    print_message("stretch of %zu steps x%.3g from %zu: %d of 20 within %lld steps\n", len, x, from,
                  found, (long long)tol);
    return found;
}

static void throttled_stretches(void **state)
{
    (void)state;
    /* measured (these 20 seeds): 20, 19, 14 and 20 of 20; the ranks' power grows with the
     * stretch's length more than with its depth */
    assert_int_equal(found_of(300, 100, 1980.0 / 1400, true, 5), 20);
    assert_true(found_of(420, 150, 1.15, false, 10) >= 19);
    assert_true(found_of(150, 60, 1.25, false, 10) >= 14);
    assert_int_equal(found_of(200, 200, 1.10, false, 10), 20);
}

/* The same stretch sizes in noise only: one segment, no finding. */
static void no_stretch_no_split(void **state)
{
    (void)state;
    for (uint64_t seed = 100; seed < 160; seed++) {
        mfu_series *s = stretch(seed, 300, 100, 1.0, true);
        mfu_analysis *a = analyse(s);
        assert_int_equal(mfu_analysis_segment_count(a), 1);
        assert_int_equal(mfu_analysis_finding_count(a), 0);
        mfu_analysis_free(a);
        mfu_series_free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(throttled_stretches),
        cmocka_unit_test(no_stretch_no_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
