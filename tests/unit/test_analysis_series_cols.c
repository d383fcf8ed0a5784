/*
 * test_analysis_series_cols.c - a series stores only the columns some row has a value in (the
 * others share one column of NaNs): every column still reads as it was appended, across the
 * reallocations of a growing series, for a column whose first value comes late, for a NaN of
 * another bit pattern (kept bit for bit), and the analysis reads them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/internal.h"
#include "analysis/json.h"

#define N 5000

static void row_of(size_t i, mfu_series_row *r)
{
    mfu_series_row_init(r);
    r->step = (int64_t)i + 1;
    r->step_time_s = 1.0 + 0.01 * (double)(i % 7) + (i >= 3000 ? 0.3 : 0);
    r->tokens = 4096;
    if (i >= 1234) /* a column that starts late, after several reallocations */
        r->loss = 3.0 - 1e-4 * (double)i;
    if (i == 4321)
        r->power_w = -(double)NAN; /* a NaN with the sign bit: not the absent pattern */
}

static void columns_read_as_appended(void **state)
{
    (void)state;
    mfu_series *s = mfu_series_new();
    assert_non_null(s);
    for (size_t i = 0; i < N; i++) {
        mfu_series_row r;
        row_of(i, &r);
        assert_int_equal(mfu_series_append(s, &r, NULL), MFU_OK);
    }
    const double *loss = mfu_series_column(s, MFU_SC_LOSS);
    const double *pw = mfu_series_column(s, MFU_SC_POWER_W);
    const double *clk = mfu_series_column(s, MFU_SC_CLOCK_MHZ);
    const double *st = mfu_series_column(s, MFU_SC_STEP_TIME_S);
    assert_non_null(loss);
    assert_non_null(clk);
    for (size_t i = 0; i < N; i++) {
        mfu_series_row r, g;
        row_of(i, &r);
        assert_true(mfu_series_get(s, i, &g));
        assert_memory_equal(&g.loss, &r.loss, sizeof r.loss);
        assert_memory_equal(&g.power_w, &r.power_w, sizeof r.power_w);
        assert_memory_equal(&loss[i], &r.loss, sizeof r.loss);
        assert_memory_equal(&pw[i], &r.power_w, sizeof r.power_w);
        assert_true(isnan(clk[i]));
        assert_true(st[i] == r.step_time_s);
    }
    assert_true(signbit(pw[4321]) && isnan(pw[4321]));
    assert_false(signbit(pw[4320]));
    /* absent columns cost nothing: the clock and the devices share one column of NaNs */
    assert_ptr_equal(mfu_series_column(s, MFU_SC_CLOCK_MHZ), mfu_series_column(s, MFU_SC_DEVICES));
    assert_ptr_not_equal(loss, clk);

    /* the analysis reads the late column as appended and finds the step-time shift */
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    o.intervals = false;
    mfu_analysis *a = NULL;
    assert_int_equal(mfu_analyze(s, &o, &a, NULL), MFU_OK);
    size_t nseg = mfu_analysis_segment_count(a);
    assert_int_equal(nseg, 2);
    const double *in = mfu_analysis_input(a, MFU_SC_LOSS);
    assert_non_null(in);
    assert_true(isnan(in[0]) && in[2000] == loss[2000]);
    mfu_analysis_free(a);
    mfu_series_free(s);
}

/* A series of job rows: flops = model FLOPs per token, devices and peak (MFU); rank = a
 * per-rank row every 100 steps. */
static mfu_series *series_of(bool flops, bool rank, bool reserve)
{
    mfu_series *s = mfu_series_new();
    assert_non_null(s);
    if (reserve)
        assert_true(mfu__series_reserve(s, N + N / 100));
    for (size_t i = 0; i < N; i++) {
        mfu_series_row r;
        row_of(i, &r);
        if (flops) {
            r.model_flops_per_token = 6e9;
            r.devices = 8;
            r.peak_flops_per_s = 989e12;
        }
        assert_int_equal(mfu_series_append(s, &r, NULL), MFU_OK);
        if (rank && i % 100 == 0) {
            r.rank = 3;
            assert_int_equal(mfu_series_append(s, &r, NULL), MFU_OK);
        }
    }
    return s;
}

/* The report's form (mfu__analyze_take: the series's columns move into the analysis, an
 * exact reservation) gives the analysis mfu_analyze gives, with and without FLOPs and with
 * per-rank rows (then nothing moves); without FLOPs the FLOP columns share the NaN column. */
static void taken_columns_analyse_alike(void **state)
{
    (void)state;
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    for (int flops = 0; flops < 2; flops++)
        for (int rank = 0; rank < 2; rank++) {
            mfu_series *s1 = series_of(flops, rank, false), *s2 = series_of(flops, rank, true);
            mfu_analysis *a1 = NULL, *a2 = NULL;
            assert_int_equal(mfu_analyze(s1, &o, &a1, NULL), MFU_OK);
            assert_int_equal(mfu__analyze_take(s2, &o, &a2, NULL), MFU_OK);
            mfu_series_free(s2); /* the analysis owns what it took */
            json_t *t1 = mfu__analysis_json(a1), *t2 = mfu__analysis_json(a2);
            char *j1 = json_dumps(t1, JSON_SORT_KEYS), *j2 = json_dumps(t2, JSON_SORT_KEYS);
            json_decref(t1);
            json_decref(t2);
            assert_non_null(j1);
            assert_string_equal(j1, j2);
            free(j1);
            free(j2);
            size_t n = N;
            for (int c = 0; c < MFU_SC_COUNT_; c++) {
                const double *x = mfu_analysis_input(a1, (mfu_series_col)c);
                const double *y = mfu_analysis_input(a2, (mfu_series_col)c);
                assert_memory_equal(x, y, n * sizeof *x);
            }
            for (int c = 0; c < MFU_D_COUNT_; c++) {
                const double *x = mfu_analysis_derived(a1, (mfu_derived)c);
                const double *y = mfu_analysis_derived(a2, (mfu_derived)c);
                assert_memory_equal(x, y, n * sizeof *x);
            }
            for (size_t i = 0; i < n; i++)
                assert_int_equal(mfu_analysis_row_state(a1, i), mfu_analysis_row_state(a2, i));
            const double *nan = mfu_analysis_input(a2, MFU_SC_CLOCK_MHZ);
            assert_true(flops == (mfu_analysis_derived(a2, MFU_D_MFU) != nan));
            assert_true(flops == (mfu_analysis_derived(a2, MFU_D_CAPACITY_FLOPS_PER_S) != nan));
            if (flops)
                assert_true(mfu_analysis_derived(a2, MFU_D_MFU)[100] > 0);
            mfu_analysis_free(a1);
            mfu_analysis_free(a2);
            mfu_series_free(s1);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(columns_read_as_appended),
        cmocka_unit_test(taken_columns_analyse_alike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
