/*
 * test_analysis_series_cols.c - a series stores only the columns some row has a value in (the
 * others share one column of NaNs): every column still reads as it was appended, across the
 * reallocations of a growing series, for a column whose first value comes late, for a NaN of
 * another bit pattern (kept bit for bit), and the analysis reads them; and the analysis of
 * columns read in place (the report's) is the analysis of the series.
 */
#if defined(__linux__)
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "analysis/analysis.h"
#include "analysis/internal.h"
#include "analysis/json.h"
#include "util/util.h"

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

/* A series of job rows: flops = model FLOPs per token, devices and peak (MFU). */
static mfu_series *series_of(bool flops)
{
    mfu_series *s = mfu_series_new();
    assert_non_null(s);
    for (size_t i = 0; i < N; i++) {
        mfu_series_row r;
        row_of(i, &r);
        if (flops) {
            r.model_flops_per_token = 6e9;
            r.devices = 8;
            r.peak_flops_per_s = 989e12;
            r.dtype = i < N / 2 ? "bf16" : "fp8"; /* a config change half-way */
        }
        assert_int_equal(mfu_series_append(s, &r, NULL), MFU_OK);
    }
    return s;
}

/* The rows of job series s as columns read in place (the report's form). */
static void cols_of(const mfu_series *s, mfu__analysis_cols *in)
{
    memset(in, 0, sizeof *in);
    in->n = s->n;
    in->step = s->step;
    for (int c = 0; c < MFU_SC_COUNT_; c++)
        in->col[c] = s->present[c] ? s->col[c] : NULL;
    in->flags = s->flags;
    in->dtype = s->dtype;
    in->recompute = s->recompute;
    in->nlabels = s->nlabels;
    memcpy(in->labels, s->labels, sizeof in->labels);
}

/* Two series of the same rows (flops as series_of): *a1 the analysis of the first, *in the
 * second's columns for mfu__analyze_cols. */
static void analysed_pair(bool flops, const mfu_analysis_options *o, mfu_series **s1,
                          mfu_series **s2, mfu_analysis **a1, mfu__analysis_cols *in)
{
    *s1 = series_of(flops);
    *s2 = series_of(flops);
    *a1 = NULL;
    assert_int_equal(mfu_analyze(*s1, o, a1, NULL), MFU_OK);
    cols_of(*s2, in);
}

static void assert_same_analysis(const mfu_analysis *a1, const mfu_analysis *a2)
{
    json_t *t1 = mfu__analysis_json(a1), *t2 = mfu__analysis_json(a2);
    char *j1 = json_dumps(t1, JSON_SORT_KEYS), *j2 = json_dumps(t2, JSON_SORT_KEYS);
    json_decref(t1);
    json_decref(t2);
    assert_non_null(j1);
    assert_string_equal(j1, j2);
    free(j1);
    free(j2);
    size_t n = mfu_analysis_steps(a1);
    assert_int_equal(n, mfu_analysis_steps(a2));
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
}

/* The report's form (mfu__analyze_cols: the columns read where they are, derived columns that
 * equal an input or a hint being that column) gives the analysis mfu_analyze gives, with and
 * without FLOPs, and still after mfu__analysis_own when the columns are gone. */
static void columns_in_place_analyse_alike(void **state)
{
    (void)state;
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    for (int flops = 0; flops < 2; flops++) {
        mfu_series *s1, *s2;
        mfu_analysis *a1, *a2 = NULL;
        mfu__analysis_cols in;
        analysed_pair(flops, &o, &s1, &s2, &a1, &in);
        /* a hint equal to the derived FLOP/s per device but in one row, and one that is not
         * a column the analysis has */
        const double *mfs = mfu_analysis_derived(a1, MFU_D_MODEL_FLOPS_PER_S_PER_DEVICE);
        double *hint = malloc(N * sizeof *hint), *off = malloc(N * sizeof *off);
        assert_non_null(hint);
        assert_non_null(off);
        memcpy(hint, mfs, N * sizeof *hint);
        memcpy(off, mfs, N * sizeof *off);
        off[N - 7] = 1.5;
        in.hint[MFU_D_MODEL_FLOPS_PER_S_PER_DEVICE] = hint;
        in.hint[MFU_D_HARDWARE_FLOPS_PER_S_PER_DEVICE] = off;
        double *cnan = malloc(N * sizeof *cnan); /* the caller's NaN column (the report's) */
        assert_non_null(cnan);
        for (size_t i = 0; i < N; i++)
            cnan[i] = NAN;
        in.nan = cnan;
        assert_int_equal(mfu__analyze_cols(&in, NULL, &o, &a2, NULL), MFU_OK);
        assert_same_analysis(a1, a2);
        /* what equals an input is that input: no copy */
        const double *st = mfu_analysis_input(a2, MFU_SC_STEP_TIME_S);
        assert_ptr_equal(st, s2->col[MFU_SC_STEP_TIME_S]);
        assert_ptr_equal(mfu_analysis_derived(a2, MFU_D_STEP_TIME_S), st);
        assert_ptr_equal(mfu_analysis_derived(a2, MFU_D_MODEL_FLOPS_PER_S_PER_DEVICE), hint);
        assert_ptr_not_equal(mfu_analysis_derived(a2, MFU_D_HARDWARE_FLOPS_PER_S_PER_DEVICE), off);
        const double *nan = mfu_analysis_input(a2, MFU_SC_CLOCK_MHZ);
        assert_ptr_equal(nan, cnan); /* an absent input is the caller's NaN column */
        assert_true(flops == (mfu_analysis_derived(a2, MFU_D_MFU) != nan));
        if (flops) {
            assert_true(mfu_analysis_derived(a2, MFU_D_MFU)[100] > 0);
            assert_true(mfu_analysis_segment_count(a2) >= 2); /* the dtype change */
        }
        /* own: the analysis outlives the columns it read */
        assert_true(mfu__analysis_own(a2));
        assert_ptr_not_equal(mfu_analysis_input(a2, MFU_SC_STEP_TIME_S), st);
        assert_ptr_equal(mfu_analysis_derived(a2, MFU_D_STEP_TIME_S),
                         mfu_analysis_input(a2, MFU_SC_STEP_TIME_S));
        assert_ptr_not_equal(mfu_analysis_input(a2, MFU_SC_CLOCK_MHZ), cnan);
        mfu_series_free(s2);
        memset(cnan, 0, N * sizeof *cnan); /* a stale read would see zeros, not NaN */
        free(cnan);
        memset(hint, 0, N * sizeof *hint);
        free(hint);
        free(off);
        assert_same_analysis(a1, a2);
        mfu_analysis_free(a1);
        mfu_analysis_free(a2);
        mfu_series_free(s1);
    }
}

#if defined(__linux__)
/* No pass of the analysis reads the caller's NaN column past its first row (its pages would
 * count as resident: the report's is mapped, docs/internals/analysis.md "Memory"): given one
 * whose pages after the first cannot be read, the analysis of columns read in place finishes
 * (a read would be a SIGSEGV) and equals the analysis of the series. */
static void absent_columns_unread(void **state)
{
    (void)state;
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    size_t page = (size_t)sysconf(_SC_PAGESIZE),
           bytes = (N * sizeof(double) + page - 1) / page * page;
    for (int flops = 0; flops < 2; flops++) {
        mfu_series *s1, *s2;
        mfu_analysis *a1, *a2 = NULL;
        mfu__analysis_cols in;
        analysed_pair(flops, &o, &s1, &s2, &a1, &in);
        double *cnan =
            mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(cnan != MAP_FAILED);
        for (size_t i = 0; i < N; i++)
            cnan[i] = NAN;
        assert_int_equal(mprotect((char *)cnan + page, bytes - page, PROT_NONE), 0);
        in.nan = cnan;
        assert_int_equal(mfu__analyze_cols(&in, NULL, &o, &a2, NULL), MFU_OK);
        assert_ptr_equal(mfu_analysis_input(a2, MFU_SC_CLOCK_MHZ), cnan);
        assert_int_equal(mfu_analysis_segment_count(a2), mfu_analysis_segment_count(a1));
        assert_int_equal(mfu_analysis_finding_count(a2), mfu_analysis_finding_count(a1));
        for (size_t q = 0; q < mfu_analysis_segment_count(a1); q++) {
            const mfu_segment *g1 = mfu_analysis_segment(a1, q), *g2 = mfu_analysis_segment(a2, q);
            assert_int_equal(g1->first, g2->first);
            assert_int_equal(g1->last, g2->last);
            assert_memory_equal(&g1->level.tokens_per_s, &g2->level.tokens_per_s,
                                sizeof g1->level.tokens_per_s);
            assert_memory_equal(&g1->level.mfu, &g2->level.mfu, sizeof g1->level.mfu);
        }
        for (size_t i = 0; i < N; i++)
            assert_int_equal(mfu_analysis_row_state(a1, i), mfu_analysis_row_state(a2, i));
        const double *t1 = mfu_analysis_derived(a1, MFU_D_TOKENS_PER_S);
        const double *t2 = mfu_analysis_derived(a2, MFU_D_TOKENS_PER_S);
        assert_memory_equal(t1, t2, N * sizeof *t1);
        mfu_analysis_free(a2);
        munmap(cnan, bytes);
        mfu_analysis_free(a1);
        mfu_series_free(s1);
        mfu_series_free(s2);
    }
}
#endif

/* keep_work: the passes' scratch outlives them for the caller (the report's summaries), one
 * block of at least 2 n doubles, taken once; without it, none is kept. The analysis is the
 * same either way. */
static void work_kept_for_the_caller(void **state)
{
    (void)state;
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    mfu_series *s = series_of(0);
    mfu_analysis *a1 = NULL, *a2 = NULL;
    mfu__analysis_cols in;
    cols_of(s, &in);
    assert_int_equal(mfu__analyze_cols(&in, NULL, &o, &a1, NULL), MFU_OK);
    size_t room = 1;
    assert_null(mfu__analysis_take_work(a1, &room));
    assert_int_equal(room, 0);
    cols_of(s, &in);
    in.keep_work = true;
    assert_int_equal(mfu__analyze_cols(&in, NULL, &o, &a2, NULL), MFU_OK);
    double *w = mfu__analysis_take_work(a2, &room);
    assert_non_null(w);
    assert_true(room >= 2 * (size_t)N);
    for (size_t i = 0; i < room; i++) /* all of it writable (the sanitizer build checks) */
        w[i] = (double)i;
    free(w);
    assert_null(mfu__analysis_take_work(a2, &room));
    assert_int_equal(room, 0);
    assert_null(mfu__analysis_take_work(NULL, &room));
    assert_same_analysis(a1, a2);
    mfu_analysis_free(a1);
    mfu_analysis_free(a2);
    mfu_series_free(s);
}

/* The step time term t is not stored while every usable row has a positive tokens/s (it is
 * k / tokens/s, computed again where read), and stored from the first usable row without one:
 * either way the levels' total time is the sum of each steady row's t, to the bit (k / tokens/s
 * in rows that print it, the step time in rows that do not). */
static void step_time_term(void **state)
{
    (void)state;
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    for (int tps_from = 0; tps_from < 3; tps_from++) {
        size_t cut = tps_from == 0 ? N : tps_from == 1 ? 3000 : 0; /* rows below cut print it */
        mfu_series *s = mfu_series_new();
        assert_non_null(s);
        for (size_t i = 0; i < N; i++) {
            mfu_series_row r;
            mfu_series_row_init(&r);
            r.step = (int64_t)i + 1;
            r.tokens = 4096;
            r.step_time_s = 1.0 + 0.01 * (double)(i % 7);
            if (i < cut)
                r.tokens_per_s = 4096 / (r.step_time_s * (1 + 1e-3 * (double)(i % 5)));
            assert_int_equal(mfu_series_append(s, &r, NULL), MFU_OK);
        }
        mfu_analysis *a = NULL;
        assert_int_equal(mfu_analyze(s, &o, &a, NULL), MFU_OK);
        assert_true(cut == N ? a->t == NULL : a->t != NULL);
        double want = 0;
        size_t m = 0;
        for (size_t i = 0; i < N; i++)
            if (mfu_analysis_is_steady(a, i)) {
                double t =
                    i < cut ? 4096 / s->col[MFU_SC_TOKENS_PER_S][i] : s->col[MFU_SC_STEP_TIME_S][i];
                want += t;
                m++;
                assert_memory_equal(&(double){mfu__t(a, i)}, &t, sizeof t);
            }
        assert_true(m > N / 2);
        const mfu_level *lv = mfu_analysis_steady(a);
        assert_memory_equal(&lv->total_time_s, &want, sizeof want);
        mfu_analysis_free(a);
        mfu_series_free(s);
    }
}

/* Buffers given to mfu__analyze_cols are freed on every path (the sanitizer build checks it),
 * and its errors are those of mfu_analyze. */
static void given_buffers_and_errors(void **state)
{
    (void)state;
    mfu_analysis *a = NULL;
    mfu_error e;
    mfu__analysis_cols in;
    memset(&in, 0, sizeof in);
    in.give[in.ngive++] = malloc(16);
    assert_int_equal(mfu__analyze_cols(&in, NULL, NULL, NULL, &e), MFU_E_INVALID);
    assert_int_equal(in.ngive, 0);
    in.give[in.ngive++] = malloc(16);
    int64_t step = 1;
    in.step = &step;
    assert_int_equal(mfu__analyze_cols(&in, NULL, NULL, &a, &e), MFU_E_EMPTY);
    assert_null(a);
    assert_int_equal(in.ngive, 0);
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    o.confidence = 2;
    in.n = 1;
    in.give[in.ngive++] = malloc(16);
    assert_int_equal(mfu__analyze_cols(&in, NULL, &o, &a, &e), MFU_E_INVALID);
    assert_null(a);
    /* more given than give[] holds: refused, the ones it holds freed (the sanitizer build
     * checks that none leaks) */
    for (size_t i = 0; i < MFU__ARRAY_LEN(in.give); i++)
        in.give[i] = malloc(8);
    in.ngive = MFU__ARRAY_LEN(in.give) + 1;
    assert_int_equal(mfu__analyze_cols(&in, NULL, NULL, &a, &e), MFU_E_INVALID);
    assert_int_equal(in.ngive, 0);
    assert_null(a);
    /* one row without a throughput: analysed, nothing usable; a NULL given entry skipped */
    double t = 1.5;
    in.col[MFU_SC_STEP_TIME_S] = &t;
    double *given = malloc(sizeof *given);
    assert_non_null(given);
    *given = NAN;
    in.col[MFU_SC_LOSS] = given;
    in.give[in.ngive++] = NULL;
    in.give[in.ngive++] = given;
    assert_int_equal(mfu__analyze_cols(&in, NULL, NULL, &a, &e), MFU_OK);
    assert_int_equal(mfu_analysis_row_state(a, 0), MFU_ROW_UNUSABLE);
    assert_ptr_equal(mfu_analysis_input(a, MFU_SC_LOSS), given);
    mfu_analysis_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(columns_read_as_appended),
        cmocka_unit_test(columns_in_place_analyse_alike),
#if defined(__linux__)
        cmocka_unit_test(absent_columns_unread),
#endif
        cmocka_unit_test(given_buffers_and_errors),
        cmocka_unit_test(work_kept_for_the_caller),
        cmocka_unit_test(step_time_term),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
