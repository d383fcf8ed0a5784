/*
 * test_analysis_noalarm.c - clean steady runs must give one segment and no finding.
 *
 * 200 seeds of realistic noise: 2 % lognormal step times with AR(1) ρ = 0.3, rare spikes
 * (0.5 % of steps, 1.2-2× slower), a 3-step warm-up, 200-2000 steps, a clock that wobbles by
 * 0.5 %, power below its limit, a decreasing loss with 1 % noise and a data loader that takes
 * 1 % of the step. Then 100 seeds of heavier noise (5 %, ρ = 0.5). A false alarm in any seed
 * fails the test and names the seed. The warm-up must be found in every seed.
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

static const double WARMUP3[] = {5, 2, 1.2};

static int clean_runs(int nseeds, double sd, double rho)
{
    int exact = 0;
    for (int seed = 1; seed <= nseeds; seed++) {
        syn_rng r = {(uint64_t)seed * 7919u};
        size_t n = 200 + (size_t)(syn_uniform(&r) * 1800);
        double *mult = malloc(n * sizeof *mult);
        assert_non_null(mult);
        syn_noise nz = {sd, rho, 0.005, 1.2, 2.0, WARMUP3, 3};
        syn_multipliers((uint64_t)seed, n, &nz, mult);
        syn_phase ph = syn_default_phase(0, 0.25 + 0.3 * syn_uniform(&r));
        mfu_series *s = mfu_series_new();
        for (size_t i = 0; i < n; i++) {
            mfu_series_row row;
            mfu_series_row_init(&row);
            row.step = (int64_t)i + 1;
            row.step_time_s = ph.step_time_s * mult[i];
            row.tokens = ph.tokens;
            row.model_flops_per_token = ph.fpt;
            row.devices = ph.devices;
            row.peak_flops_per_s = ph.peak;
            row.seq_len = ph.seq_len;
            row.global_batch = ph.global_batch;
            row.dtype = "bf16";
            row.clock_mhz = 1980 * (1 + 0.005 * syn_normal(&r));
            row.max_clock_mhz = 1980;
            row.power_w = 600 + 20 * syn_normal(&r);
            row.power_limit_w = 700;
            row.loss = (2.5 + exp(-(double)i / 300)) * exp(0.01 * syn_normal(&r));
            row.data_loading_s = 0.01 * row.step_time_s;
            assert_int_equal(mfu_series_append(s, &row, NULL), MFU_OK);
        }
        mfu_analysis_options o;
        mfu_analysis_options_init(&o);
        o.intervals = true;
        mfu_analysis *a = NULL;
        assert_int_equal(mfu_analyze(s, &o, &a, NULL), MFU_OK);
        size_t nseg = mfu_analysis_segment_count(a), nf = mfu_analysis_finding_count(a);
        if (nseg != 1 || nf != 0) {
            for (size_t i = 0; i < nseg; i++)
                print_message("seed %d: segment from step %lld\n", seed,
                              (long long)mfu_analysis_segment(a, i)->start_step);
            for (size_t i = 0; i < nf; i++)
                print_message("seed %d: %s: %s\n", seed, mfu_analysis_finding(a, i)->kind,
                              mfu_analysis_finding(a, i)->summary);
            fail_msg("false alarm at seed %d (n=%zu, sd=%g, rho=%g)", seed, n, sd, rho);
        }
        /* The warm-up is found and kept out; the level is the truth within noise. */
        /* The warm-up (3 steps at 5×, 2×, 1.2×) is found; a noisy step next to it may join. */
        size_t w = mfu_analysis_warmup(a)->steps;
        if (w < 2 || w > 8)
            fail_msg("seed %d: warm-up of %zu steps, expected about 3", seed, w);
        exact += w == 3;
        mfu_analysis_free(a);
        mfu_series_free(s);
        free(mult);
    }
    return exact;
}

static void no_false_alarms_realistic(void **state)
{
    (void)state;
    int exact = clean_runs(200, 0.02, 0.3);
    print_message("warm-up exactly 3 steps in %d of 200 seeds\n", exact);
    assert_true(exact >= 190);
}

static void no_false_alarms_heavier_noise(void **state)
{
    (void)state;
    int exact = clean_runs(100, 0.05, 0.5);
    print_message("warm-up exactly 3 steps in %d of 100 seeds\n", exact);
    assert_true(exact >= 70); /* the 1.2× step is within 4 σ of 5 % noise */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_false_alarms_realistic),
        cmocka_unit_test(no_false_alarms_heavier_noise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
