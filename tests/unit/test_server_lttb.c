/*
 * test_server_lttb.c - largest-triangle-three-buckets downsampling (src/server/lttb.c): the
 * shape of the output, peaks and dips that must survive, gaps (NaN), and agreement with a
 * plain transcription of the algorithm on random series.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server/internal.h"

static uint64_t rng = 88172645463325252ull;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static bool contains(const size_t *v, size_t n, size_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

static void shape_of_the_output(void **state)
{
    (void)state;
    double y[100];
    size_t out[100];
    for (int i = 0; i < 100; i++)
        y[i] = sin(i * 0.3);
    assert_int_equal(mfu__lttb(y, 100, 100, out), 100); /* m >= n: everything */
    for (size_t i = 0; i < 100; i++)
        assert_int_equal(out[i], i);
    assert_int_equal(mfu__lttb(y, 100, 2, out), 2);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 99);
    assert_int_equal(mfu__lttb(y, 100, 1, out), 1);
    assert_int_equal(mfu__lttb(y, 0, 10, out), 0);
    for (size_t m = 3; m < 100; m += 7) {
        size_t k = mfu__lttb(y, 100, m, out);
        assert_int_equal(k, m);
        assert_int_equal(out[0], 0);
        assert_int_equal(out[k - 1], 99);
        for (size_t i = 1; i < k; i++)
            assert_true(out[i] > out[i - 1]);
    }
}

/* One spike and one dip in a million noisy points survive downsampling to 500. */
static void peaks_and_dips_survive(void **state)
{
    (void)state;
    size_t n = 1000000, m = 500;
    double *y = malloc(n * sizeof *y);
    size_t *out = malloc(m * sizeof *out);
    assert_non_null(y);
    assert_non_null(out);
    for (size_t i = 0; i < n; i++)
        y[i] = 10 + uniform() - 0.5;
    y[313370] = 40;  /* a slow step */
    y[777777] = -20; /* a dip */
    y[5] = 25;       /* near the start */
    size_t k = mfu__lttb(y, n, m, out);
    assert_int_equal(k, m);
    assert_true(contains(out, k, 313370));
    assert_true(contains(out, k, 777777));
    assert_true(contains(out, k, 5));
    /* the kept points span the data: the largest kept value is the spike */
    double mx = -1e9, mn = 1e9;
    for (size_t i = 0; i < k; i++) {
        mx = fmax(mx, y[out[i]]);
        mn = fmin(mn, y[out[i]]);
    }
    assert_true(mx == 40 && mn == -20);
    free(y);
    free(out);
}

/* A gap stays a gap; NaN points are never chosen while a bucket has a finite one. */
static void gaps(void **state)
{
    (void)state;
    size_t n = 1000, m = 52; /* 50 buckets of 19.96 points */
    double y[1000];
    size_t out[52];
    for (size_t i = 0; i < n; i++)
        y[i] = (i >= 400 && i < 500) ? NAN : cos((double)i / 30);
    y[0] = NAN; /* even the first point */
    size_t k = mfu__lttb(y, n, m, out);
    assert_int_equal(k, m);
    size_t in_gap = 0;
    for (size_t i = 1; i + 1 < k; i++) {
        if (isnan(y[out[i]])) {
            in_gap++;
            assert_true(out[i] >= 400 && out[i] < 500);
        }
    }
    assert_true(in_gap >= 3); /* the buckets wholly inside the gap keep a NaN point */
    for (size_t i = 0; i < n; i++)
        y[i] = NAN;
    k = mfu__lttb(y, n, m, out); /* all NaN: still a valid ascending index list */
    assert_int_equal(k, m);
    for (size_t i = 1; i < k; i++)
        assert_true(out[i] > out[i - 1]);
}

/* The algorithm as written in the thesis (Steinarsson 2013, fig. 4.3), for finite data. */
static size_t reference(const double *y, size_t n, size_t m, size_t *out)
{
    double every = (double)(n - 2) / (double)(m - 2);
    size_t a = 0, k = 0;
    out[k++] = 0;
    for (size_t i = 0; i < m - 2; i++) {
        size_t avg_start = (size_t)floor((double)(i + 1) * every) + 1;
        size_t avg_end = (size_t)floor((double)(i + 2) * every) + 1;
        if (avg_end > n)
            avg_end = n;
        double ax = 0, ay = 0;
        for (size_t j = avg_start; j < avg_end; j++) {
            ax += (double)j;
            ay += y[j];
        }
        ax /= (double)(avg_end - avg_start);
        ay /= (double)(avg_end - avg_start);
        size_t from = (size_t)floor((double)i * every) + 1;
        size_t to = (size_t)floor((double)(i + 1) * every) + 1;
        double px = (double)a, py = y[a], best = -1;
        size_t pick = from;
        for (size_t j = from; j < to; j++) {
            double area = fabs((px - ax) * (y[j] - py) - (px - (double)j) * (ay - py)) * 0.5;
            if (area > best) {
                best = area;
                pick = j;
            }
        }
        out[k++] = pick;
        a = pick;
    }
    out[k++] = n - 1;
    return k;
}

static void agrees_with_the_reference(void **state)
{
    (void)state;
    size_t sizes[][2] = {{10, 3}, {11, 5}, {1000, 37}, {12345, 2000}, {99991, 1000}};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        size_t n = sizes[t][0], m = sizes[t][1];
        double *y = malloc(n * sizeof *y);
        size_t *a = malloc(m * sizeof *a), *b = malloc(m * sizeof *b);
        assert_non_null(y);
        assert_non_null(a);
        assert_non_null(b);
        for (size_t i = 0; i < n; i++)
            y[i] = uniform() * 100 + (i % 97 == 0 ? 300 : 0);
        size_t ka = mfu__lttb(y, n, m, a), kb = reference(y, n, m, b);
        assert_int_equal(ka, kb);
        assert_memory_equal(a, b, ka * sizeof *a);
        free(y);
        free(a);
        free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shape_of_the_output),
        cmocka_unit_test(peaks_and_dips_survive),
        cmocka_unit_test(gaps),
        cmocka_unit_test(agrees_with_the_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
