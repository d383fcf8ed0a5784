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

/* The candidates of level 0 as the server gathered them before the pyramid (the reference the
 * pyramid's level 0 is checked against): [from, to)'s first and last row, every row of the
 * partial blocks at both ends, the extremes of each whole block, ascending without repeats. */
static size_t ref_push(size_t *out, size_t k, size_t j)
{
    if (k == 0 || j > out[k - 1])
        out[k++] = j;
    return k;
}

static size_t ref_minmax_candidates(const unsigned char *lo, const unsigned char *hi, size_t from,
                                    size_t to, size_t *out)
{
    if (to <= from)
        return 0;
    size_t k = 0;
    out[k++] = from; /* LTTB keeps the first and last point: they must be the range's */
    size_t b0 = (from + MFU__BLOCK - 1) / MFU__BLOCK, b1 = to / MFU__BLOCK; /* whole blocks */
    if (b0 >= b1) { /* no whole block: every row */
        for (size_t j = from + 1; j < to; j++)
            out[k++] = j;
        return k;
    }
    for (size_t j = from + 1; j < b0 * MFU__BLOCK; j++)
        out[k++] = j;
    for (size_t b = b0; b < b1; b++) {
        size_t s = b * MFU__BLOCK, x = s + lo[b], y = s + hi[b];
        k = ref_push(out, k, x < y ? x : y);
        k = ref_push(out, k, x < y ? y : x);
    }
    for (size_t j = b1 * MFU__BLOCK; j < to; j++)
        k = ref_push(out, k, j);
    return ref_push(out, k, to - 1);
}

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

/* Block extremes against a brute-force scan, NaN blocks included, and updates from a block. */
static void blocks(void **state)
{
    (void)state;
    size_t n = 64 * 20 + 17; /* a partial last block */
    double *y = malloc(n * sizeof *y);
    unsigned char lo[21], hi[21];
    assert_non_null(y);
    for (size_t i = 0; i < n; i++)
        y[i] = uniform();
    for (size_t i = 64 * 3; i < 64 * 4; i++)
        y[i] = NAN; /* block 3: no number */
    y[64 * 5 + 7] = NAN;
    mfu__blocks_update(y, n, 0, lo, hi);
    for (size_t b = 0; b < 21; b++) {
        size_t s0 = b * 64, e = s0 + 64 < n ? s0 + 64 : n, imin = s0, imax = s0;
        bool any = false;
        for (size_t j = s0; j < e; j++) {
            if (isnan(y[j]))
                continue;
            if (!any || y[j] < y[imin])
                imin = j;
            if (!any || y[j] > y[imax])
                imax = j;
            any = true;
        }
        assert_int_equal(lo[b], imin - s0);
        assert_int_equal(hi[b], imax - s0);
    }
    assert_int_equal(lo[3], 0); /* a block of NaN points at its first row */
    y[64 * 19 + 3] = 100;       /* a new peak: update from block 19 on */
    mfu__blocks_update(y, n, 19, lo, hi);
    assert_int_equal(hi[19], 3);
    free(y);
}

static void candidates(void **state)
{
    (void)state;
    unsigned char lo[10], hi[10];
    for (int b = 0; b < 10; b++) {
        lo[b] = (unsigned char)(60 - b);
        hi[b] = (unsigned char)b; /* block 0: min at 60, max at 0 */
    }
    lo[4] = hi[4] = 9; /* a constant block gives one candidate */
    size_t out[64 * 4 + 32];
    /* rows 10..600: 54 partial rows, blocks 1..8 whole, 600 - 576 = 24 tail rows */
    size_t k = ref_minmax_candidates(lo, hi, 10, 600, out);
    assert_int_equal(k, 54 + 7 * 2 + 1 + 24);
    assert_int_equal(out[0], 10);
    assert_int_equal(out[53], 63);
    assert_int_equal(out[54], 64 + 1);  /* block 1: max at offset 1 ... */
    assert_int_equal(out[55], 64 + 59); /* ... then min at 59, in row order */
    for (size_t i = 1; i < k; i++)
        assert_true(out[i] > out[i - 1]);
    assert_int_equal(out[k - 1], 599);
    k = ref_minmax_candidates(lo, hi, 70, 100, out); /* inside one block: every row */
    assert_int_equal(k, 30);
    assert_int_equal(ref_minmax_candidates(lo, hi, 5, 5, out), 0);
    /* whole blocks at both ends: the range's first and last rows are still candidates */
    k = ref_minmax_candidates(lo, hi, 0, 640, out);
    assert_int_equal(out[0], 0); /* also block 0's max: not repeated */
    assert_int_equal(out[1], 60);
    assert_int_equal(out[k - 1], 639);
    assert_int_equal(k,
                     1 + 1 + 8 * 2 + 1 + 1); /* 0 and 60 (block 0); blocks 1-9, block 4 once; 639 */
    for (size_t i = 1; i < k; i++)
        assert_true(out[i] > out[i - 1]);
}

/* Preselected LTTB over a million points keeps the spike and the dip, like plain LTTB. */
static void preselected_keeps_peaks(void **state)
{
    (void)state;
    size_t n = 1000000, m = 1000, nb = (n + 63) / 64;
    double *y = malloc(n * sizeof *y), *g = malloc(n * sizeof *g);
    unsigned char *lo = malloc(nb), *hi = malloc(nb);
    size_t *cand = malloc((2 * n / 64 + 130) * sizeof *cand), *out = malloc(m * sizeof *out);
    assert_true(y && g && lo && hi && cand && out);
    for (size_t i = 0; i < n; i++)
        y[i] = 10 + uniform();
    y[424242] = 50;
    y[99] = -30;
    mfu__blocks_update(y, n, 0, lo, hi);
    size_t from = 13, to = n - 5;
    size_t k = ref_minmax_candidates(lo, hi, from, to, cand);
    assert_true(k <= 2 * (to - from) / 64 + 130);
    for (size_t i = 0; i < k; i++)
        g[i] = y[cand[i]];
    size_t got = mfu__lttb_xy(g, cand, k, m, out);
    assert_int_equal(got, m);
    bool spike = false, dip = false;
    for (size_t i = 0; i < got; i++) {
        size_t row = cand[out[i]];
        spike = spike || row == 424242;
        dip = dip || row == 99;
        if (i)
            assert_true(cand[out[i]] > cand[out[i - 1]]);
    }
    assert_true(spike && dip);
    assert_int_equal(cand[out[0]], from);
    assert_int_equal(cand[out[got - 1]], to - 1);
    free(y);
    free(g);
    free(lo);
    free(hi);
    free(cand);
    free(out);
}

/* ---- the min/max pyramid ---- */

/* The first row of [s, e) holding the smallest (hi: largest) number, s when none does. */
static size_t brute_extreme(const double *y, size_t s, size_t e, bool hi)
{
    size_t best = s;
    bool any = false;
    for (size_t j = s; j < e; j++) {
        if (y[j] != y[j])
            continue;
        if (!any || (hi ? y[j] > y[best] : y[j] < y[best])) {
            best = j;
            any = true;
        }
    }
    return best;
}

static size_t brute_push(size_t *out, size_t k, size_t j)
{
    if (k == 0 || j > out[k - 1])
        out[k++] = j;
    return k;
}

/* The candidates of [from, to) at level by their definition: from left to right, the largest
 * aligned block of level <= level that starts at the row and fits, its two extremes found by
 * scanning its rows; a single row where no block fits. */
static size_t brute_candidates(const double *y, int level, size_t from, size_t to, size_t *out)
{
    size_t k = 0;
    out[k++] = from;
    for (size_t p = from; p < to;) {
        size_t len = 1;
        for (int l = level; l >= 0; l--) {
            size_t b = mfu__mm_block_rows(l);
            if (p % b == 0 && p + b <= to) {
                len = b;
                break;
            }
        }
        if (len == 1) {
            k = brute_push(out, k, p);
        } else {
            size_t x = brute_extreme(y, p, p + len, false), z = brute_extreme(y, p, p + len, true);
            k = brute_push(out, k, x < z ? x : z);
            k = brute_push(out, k, x < z ? z : x);
        }
        p += len;
    }
    return brute_push(out, k, to - 1);
}

static size_t below(size_t n)
{
    return (size_t)(uniform() * (double)n) % n;
}

/* A seeded random series with ties (values on a grid of 8), NaN rows and a stretch of NaN
 * longer than a level-1 block, grown in random pieces (rows before each piece's start may
 * change too, as a follower's last rows do): the pyramid gives, for random ranges at every
 * level, the candidates the definition gives, and with mfu__mm_candidates_v the column's
 * numbers of those rows. */
static void pyramid_vs_brute_force(void **state)
{
    (void)state;
    size_t n = 300000;
    double *y = malloc(n * sizeof *y);
    size_t cap = mfu__mm_cap(0, n);
    size_t *a = malloc(cap * sizeof *a), *b = malloc(cap * sizeof *b);
    double *v = malloc(cap * sizeof *v);
    assert_true(y && a && b && v);
    for (size_t i = 0; i < n; i++)
        y[i] = uniform() < 0.05 ? NAN : floor(uniform() * 8);
    for (size_t i = 70000; i < 71500; i++)
        y[i] = NAN;
    mfu__mm p;
    memset(&p, 0, sizeof p);
    size_t have = 0;
    while (have < n) {
        size_t next = have + 1 + below(40000);
        if (next > n)
            next = n;
        size_t from = have > 10 ? have - below(10) : 0; /* the last rows changed */
        for (size_t i = from; i < have; i++)
            y[i] = floor(uniform() * 8);
        assert_true(mfu__mm_update(&p, y, next, from));
        have = next;
        for (int t = 0; t < 20; t++) {
            int level = (int)below(MFU__MM_LEVELS + 1);
            size_t lo = below(have), hi = lo + 1 + below(have - lo);
            size_t ka = mfu__mm_candidates(&p, level, lo, hi, a);
            size_t kb = brute_candidates(y, level, lo, hi, b);
            assert_true(ka <= mfu__mm_cap(level, hi - lo));
            assert_int_equal(ka, kb);
            assert_memory_equal(a, b, ka * sizeof *a);
            /* with their numbers: the same rows, each with the column's number (the blocks'
             * numbers kept beside their rows are those of the rows changed last) */
            assert_int_equal(mfu__mm_candidates_v(&p, level, lo, hi, y, b, v), ka);
            assert_memory_equal(a, b, ka * sizeof *a);
            for (size_t i = 0; i < ka; i++)
                if (!(v[i] == y[a[i]] || (isnan(v[i]) && isnan(y[a[i]]))))
                    fail_msg("candidate %zu (row %zu): %g, the row holds %g", i, a[i], v[i],
                             y[a[i]]);
        }
    }
    /* every level over the whole series, and the level-0 candidates of before */
    unsigned char *lo0 = malloc((n + 63) / 64), *hi0 = malloc((n + 63) / 64);
    assert_true(lo0 && hi0);
    mfu__blocks_update(y, n, 0, lo0, hi0);
    for (int level = 0; level <= MFU__MM_LEVELS; level++) {
        size_t ka = mfu__mm_candidates(&p, level, 3, n - 2, a);
        size_t kb = brute_candidates(y, level, 3, n - 2, b);
        assert_int_equal(ka, kb);
        assert_memory_equal(a, b, ka * sizeof *a);
        if (level == 0) {
            kb = ref_minmax_candidates(lo0, hi0, 3, n - 2, b);
            assert_int_equal(ka, kb);
            assert_memory_equal(a, b, ka * sizeof *a);
        }
    }
    /* an absent column: every block's first row */
    mfu__mm q;
    memset(&q, 0, sizeof q);
    assert_true(mfu__mm_update(&q, NULL, 5000, 0));
    size_t k = mfu__mm_candidates(&q, 2, 0, 5000, a);
    assert_int_equal(mfu__mm_candidates_v(&q, 2, 0, 5000, NULL, b, v), k);
    for (size_t i = 0; i < k; i++)
        assert_true(isnan(v[i]));
    assert_int_equal(a[0], 0);
    assert_int_equal(a[1], 1024); /* block 0 of level 2 (1024 rows) gives row 0 once */
    assert_int_equal(a[k - 1], 4999);
    mfu__mm_free(&q);
    mfu__mm_free(&p);
    free(lo0);
    free(hi0);
    free(y);
    free(v);
    free(a);
    free(b);
}

/* The level: the highest whose blocks fit MFU__PRESELECT_BLOCKS times in a bucket. */
static void pyramid_level(void **state)
{
    (void)state;
    assert_int_equal(mfu__mm_level(10000, 2000), -1);
    assert_int_equal(mfu__mm_level(2000 * 256, 2000), 0);
    assert_int_equal(mfu__mm_level(2000 * 256 - 1, 2000), -1);
    assert_int_equal(mfu__mm_level(2000 * 1024, 2000), 1);
    assert_int_equal(mfu__mm_level(2000 * 1024 - 1, 2000), 0);
    for (size_t total = 1000; total < 100000000; total = total * 3 + 7) {
        int l = mfu__mm_level(total, 2000);
        if (l < 0)
            continue;
        size_t bucket = total / 2000;
        assert_true(bucket >= MFU__PRESELECT_BLOCKS * mfu__mm_block_rows(l));
        if (l < MFU__MM_LEVELS)
            assert_true(bucket < MFU__PRESELECT_BLOCKS * mfu__mm_block_rows(l + 1));
    }
    /* 10 million rows at 2000 points: a few tens of thousands of candidates, not 312,500 */
    assert_true(mfu__mm_cap(mfu__mm_level(10000000, 2000), 10000000) < 40000);
}

/* LTTB over the pyramid's candidates of a million points keeps the spike and the dip. */
static void pyramid_keeps_peaks(void **state)
{
    (void)state;
    size_t n = 1000000, m = 200;
    double *y = malloc(n * sizeof *y), *g = NULL;
    size_t *out = malloc(m * sizeof *out);
    assert_true(y && out);
    for (size_t i = 0; i < n; i++)
        y[i] = 10 + uniform();
    y[424242] = 50;
    y[99] = -30;
    mfu__mm p;
    memset(&p, 0, sizeof p);
    assert_true(mfu__mm_update(&p, y, n, 0));
    int level = mfu__mm_level(n, m);
    assert_true(level >= 2);
    size_t *cand = malloc(mfu__mm_cap(level, n) * sizeof *cand);
    assert_true(cand);
    size_t k = mfu__mm_candidates(&p, level, 0, n, cand);
    assert_true(k < 2 * n / mfu__mm_block_rows(level) + 200);
    g = malloc(k * sizeof *g);
    assert_true(g);
    for (size_t i = 0; i < k; i++)
        g[i] = y[cand[i]];
    size_t got = mfu__lttb_xy(g, cand, k, m, out);
    assert_int_equal(got, m);
    bool spike = false, dip = false;
    for (size_t i = 0; i < got; i++) {
        spike = spike || cand[out[i]] == 424242;
        dip = dip || cand[out[i]] == 99;
    }
    assert_true(spike && dip);
    mfu__mm_free(&p);
    free(y);
    free(g);
    free(cand);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shape_of_the_output),
        cmocka_unit_test(peaks_and_dips_survive),
        cmocka_unit_test(gaps),
        cmocka_unit_test(agrees_with_the_reference),
        cmocka_unit_test(blocks),
        cmocka_unit_test(candidates),
        cmocka_unit_test(preselected_keeps_peaks),
        cmocka_unit_test(pyramid_vs_brute_force),
        cmocka_unit_test(pyramid_level),
        cmocka_unit_test(pyramid_keeps_peaks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
