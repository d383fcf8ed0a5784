/*
 * test_analysis_shifts.c - the level-shift search of segment.c ranks each signal once and splits
 * the order at every cut (O(m) per interval); it must find exactly the cuts of the
 * straightforward form that sorts every interval again and recomputes every median at every
 * merge (reference = true). Seeded random series with shifts, stretches, ties (values rounded
 * to a few digits, as logs print them), spikes and two signals; and mfu__order_doubles against
 * an insertion sort.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"

static uint64_t rng;

static double uni(void)
{
    rng = rng * 6364136223846793005u + 1442695040888963407u;
    return (double)(rng >> 11) * 0x1.0p-53;
}

static double gauss(void)
{
    double u = uni(), v = uni();
    return sqrt(-2 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

/* A series of m values: levels that change at random places (some return: stretches), AR(1)
 * noise, a few spikes, rounded to `digits` decimals when digits > 0 (ties). */
static void series(double *x, size_t m, int nshift, double noise, int digits)
{
    double level = 0, e = 0, scale = pow(10, digits);
    size_t next = nshift ? (size_t)(uni() * (double)m) : m;
    for (size_t i = 0; i < m; i++) {
        if (i == next) {
            level += (uni() - 0.5) * 0.4;
            next = i + 10 + (size_t)(uni() * (double)m / (nshift + 1));
        }
        e = 0.3 * e + noise * gauss();
        double v = level + e + (uni() < 0.01 ? -1.0 : 0);
        x[i] = digits > 0 ? round(v * scale) / scale : v;
    }
}

static void search_agrees(uint64_t seed, size_t m, int nsig, int nshift, int digits, size_t minseg,
                          size_t *nfound)
{
    rng = seed;
    double *x[2] = {malloc(m * sizeof(double)), malloc(m * sizeof(double))};
    assert_non_null(x[0]);
    assert_non_null(x[1]);
    series(x[0], m, nshift, 0.02, digits);
    series(x[1], m, nshift / 2, 0.01, digits > 0 ? digits : 2);
    const double *sig[2] = {x[0], x[1]};
    mfu__shift_params p = {
        .min_segment_steps = minseg, .alpha = 1e-4, .min_level_shift = 0.02, .vif = {1 + uni(), 1}};
    size_t ref[257], fast[257];
    size_t nr = mfu__level_shifts(sig, nsig, m, &p, ref, true);
    size_t nf = mfu__level_shifts(sig, nsig, m, &p, fast, false);
    assert_int_not_equal(nr, SIZE_MAX);
    assert_int_equal(nf, nr);
    for (size_t q = 0; q < nr; q++) {
        assert_int_equal(fast[q], ref[q]);
        if (q > 0)
            assert_true(ref[q] > ref[q - 1]);
    }
    *nfound += nr;
    free(x[0]);
    free(x[1]);
}

static void fast_search_finds_the_reference_cuts(void **state)
{
    (void)state;
    size_t found = 0;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        size_t m = 50 + (size_t)(seed * 7919 % 3000);
        search_agrees(seed, m, 1, (int)(seed % 12), (int)(seed % 4), 10, &found);
        search_agrees(seed + 1000, m, 2, (int)(seed % 7), (int)(seed % 3) + 1, 5 + seed % 20,
                      &found);
    }
    /* the series have shifts: the comparison covered many cuts, not only empty searches */
    assert_true(found > 200);
}

static void many_levels_agree(void **state)
{
    (void)state;
    size_t found = 0;
    /* a long series with many levels: deep recursion, the 256-cut cap and the pruning */
    search_agrees(77, 40000, 1, 300, 3, 10, &found);
    search_agrees(78, 20000, 2, 150, 0, 10, &found);
    assert_true(found > 100);
}

static void order_is_a_stable_sort(void **state)
{
    (void)state;
    enum { N = 2000 };
    static double v[N];
    static uint32_t ord[N], ref[N];
    rng = 5;
    for (size_t i = 0; i < N; i++) {
        double u = uni();
        v[i] = u < 0.05 ? 0.0 : u < 0.1 ? -0.0 : round(gauss() * 50) / 7;
        if (i % 500 == 1)
            v[i] = INFINITY;
        if (i % 500 == 2)
            v[i] = -INFINITY;
        if (i % 333 == 3)
            v[i] = -1e-310; /* subnormal */
    }
    assert_true(mfu__order_doubles(v, N, ord));
    /* insertion sort of the indices by value, stable */
    for (uint32_t i = 0; i < N; i++) {
        uint32_t j = i;
        while (j > 0 && v[ref[j - 1]] > v[i]) {
            ref[j] = ref[j - 1];
            j--;
        }
        ref[j] = i;
    }
    for (size_t i = 0; i < N; i++) {
        /* the same values in the same order; equal values in index order, except that −0
         * sorts before +0 (they compare equal) */
        assert_true(v[ord[i]] == v[ref[i]]);
        if (i > 0 && v[ord[i]] == v[ord[i - 1]] && signbit(v[ord[i]]) == signbit(v[ord[i - 1]]))
            assert_true(ord[i] > ord[i - 1]);
    }
    assert_true(mfu__order_doubles(v, 0, ord));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fast_search_finds_the_reference_cuts),
        cmocka_unit_test(many_levels_agree),
        cmocka_unit_test(order_is_a_stable_sort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
