/*
 * test_analysis_shifts.c - the level-shift search of segment.c ranks each signal once, splits
 * the order at every cut (O(m) per interval) and sums twice the ranks in integers; it must find
 * exactly the cuts of the straightforward form held here (ref_level_shifts: every interval
 * sorted again with mfu__ranks, the statistics in doubles as segment.c's file comment defines
 * them, every median recomputed at every merge). Seeded random series with shifts, stretches,
 * ties (values rounded to a few digits, as logs print them), spikes and two signals; and
 * mfu__order_doubles against an insertion sort.
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

/* ---- the straightforward form (the oracle) ----------------------------------------------- */

#define REF_MAX_SEGMENTS 256

typedef struct ref_ctx {
    const double *sig[2];
    int nsig;
    size_t minseg;
    double alpha, vif[2];
    double *r;
    size_t *cuts;
    size_t ncuts;
    bool oom;
} ref_ctx;

static double ref_kuiper_logp(double x)
{
    if (!(x > 0.5))
        return 0;
    if (x > 6)
        return log(2 * (4 * x * x - 1)) - 2 * x * x;
    double p = 0;
    for (int j = 1; j <= 100; j++) {
        double jj = (double)j * (double)j;
        double t = 2 * (4 * jj * x * x - 1) * exp(-2 * jj * x * x);
        p += t;
        if (t < 1e-17 * p)
            break;
    }
    return p >= 1 ? 0 : log(p);
}

/* The epidemic test: the range of the rank CUSUM bridge against Kuiper's distribution; the cut
 * is the best single split before the later extreme. */
static double ref_epidemic_logp(const double *r, size_t m, size_t minseg, double infl, size_t *cut)
{
    if (m < 3 * minseg || !(infl > 0))
        return 0;
    double mean = (double)(m + 1) / 2.0, S = 0;
    double smax = -INFINITY, smin = INFINITY;
    size_t kmax = 0, kmin = 0;
    for (size_t k = 1; k < m; k++) {
        S += r[k - 1] - mean;
        if (k < minseg || m - k < minseg)
            continue;
        if (S > smax) {
            smax = S;
            kmax = k;
        }
        if (S < smin) {
            smin = S;
            kmin = k;
        }
    }
    if (!(smax > smin) || (kmax > kmin ? kmax - kmin : kmin - kmax) < minseg)
        return 0;
    double scale = (double)m * sqrt((double)(m + 1) / 12.0 * infl);
    double lp = ref_kuiper_logp((smax - smin) / scale);
    size_t kb = kmax > kmin ? kmax : kmin, best_k = 0;
    double sub = 0, best = -1;
    for (size_t i = 0; i < kb; i++)
        sub += r[i];
    sub /= (double)kb;
    S = 0;
    for (size_t k = 1; k < kb; k++) {
        S += r[k - 1] - sub;
        if (k < minseg || kb - k < minseg)
            continue;
        double z = fabs(S) / sqrt((double)k * (double)(kb - k));
        if (z > best) {
            best = z;
            best_k = k;
        }
    }
    *cut = best_k ? best_k : (kmax < kmin ? kmax : kmin);
    return lp;
}

static bool ref_best_split(ref_ctx *c, int s, size_t lo, size_t hi, size_t *pos, double *logp)
{
    size_t m = hi - lo;
    double ties;
    if (!mfu__ranks(c->sig[s] + lo, m, c->r, &ties)) {
        c->oom = true;
        return false;
    }
    double mm = (double)m, tiefac = 1 - ties / (mm * mm * mm - mm);
    if (!(tiefac > 1e-12))
        return false;
    double mean = (double)(m + 1) / 2.0, U = 0, best = -1;
    size_t bk = 0;
    for (size_t k = 1; k < m; k++) {
        U += c->r[k - 1] - mean;
        if (k < c->minseg || m - k < c->minseg)
            continue;
        double var = (double)k * (double)(m - k) * (double)(m + 1) / 12.0 * tiefac * c->vif[s];
        double z = fabs(U) / sqrt(var);
        if (z > best) {
            best = z;
            bk = k;
        }
    }
    if (best < 0)
        return false;
    double nsplit = (double)(m - 2 * c->minseg + 1), tail = erfc(best / sqrt(2.0));
    *logp =
        log(nsplit) + (tail > 0 ? log(tail) : -best * best / 2 - log(best * 1.2533141373155003));
    *pos = lo + bk;
    size_t kcut = 0;
    double lr = ref_epidemic_logp(c->r, m, c->minseg, tiefac * c->vif[s], &kcut);
    if (lr < *logp) {
        *logp = lr;
        *pos = lo + kcut;
    }
    return true;
}

static void ref_binseg(ref_ctx *c, size_t lo, size_t hi)
{
    if (c->oom || hi - lo < 2 * c->minseg || c->ncuts >= REF_MAX_SEGMENTS)
        return;
    size_t pos = 0;
    double lp = 0;
    bool found = false;
    for (int s = 0; s < c->nsig; s++) {
        size_t p;
        double l;
        if (ref_best_split(c, s, lo, hi, &p, &l) && l < log(c->alpha) && (!found || l < lp)) {
            found = true;
            pos = p;
            lp = l;
        }
    }
    if (!found)
        return;
    c->cuts[c->ncuts++] = pos;
    ref_binseg(c, lo, pos);
    ref_binseg(c, pos, hi);
}

static double ref_piece_median(const double *x, const size_t *cuts, size_t ncuts, size_t m,
                               size_t q, double *tmp)
{
    size_t a = q == 0 ? 0 : cuts[q - 1], b = q < ncuts ? cuts[q] : m;
    return mfu__median_copy(x + a, b - a, tmp);
}

/* Level shifts as mfu__level_shifts defines them, the straightforward way. */
static size_t ref_level_shifts(const double *const *sig, int nsig, size_t m,
                               const mfu__shift_params *p, size_t *cuts)
{
    ref_ctx c = {.nsig = nsig, .minseg = p->min_segment_steps, .alpha = p->alpha, .cuts = cuts};
    for (int s = 0; s < nsig; s++) {
        c.sig[s] = sig[s];
        c.vif[s] = p->vif[s];
    }
    c.r = malloc((m ? m : 1) * sizeof *c.r);
    double *tmp = malloc((m ? m : 1) * sizeof *tmp);
    assert_non_null(c.r);
    assert_non_null(tmp);
    ref_binseg(&c, 0, m);
    assert_false(c.oom);
    size_t ncuts = c.ncuts;
    for (size_t i = 1; i < ncuts; i++)
        for (size_t j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
            size_t t = cuts[j];
            cuts[j] = cuts[j - 1];
            cuts[j - 1] = t;
        }
    double thr = log(1 + p->min_level_shift);
    while (ncuts > 0) {
        double bestd = INFINITY;
        size_t bi = 0;
        for (size_t q = 0; q < ncuts; q++) {
            double d = 0;
            for (int s = 0; s < nsig; s++) {
                double ds = fabs(ref_piece_median(sig[s], cuts, ncuts, m, q + 1, tmp) -
                                 ref_piece_median(sig[s], cuts, ncuts, m, q, tmp));
                if (ds > d)
                    d = ds;
            }
            if (d < bestd) {
                bestd = d;
                bi = q;
            }
        }
        if (bestd >= thr)
            break;
        memmove(cuts + bi, cuts + bi + 1, (ncuts - bi - 1) * sizeof *cuts);
        ncuts--;
    }
    free(c.r);
    free(tmp);
    return ncuts;
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
    size_t nr = ref_level_shifts(sig, nsig, m, &p, ref);
    size_t nf = mfu__level_shifts(sig, nsig, m, &p, fast);
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

/* bench/report_scale.sh's pathological log in small: two levels 12 % apart alternating every
 * 200 steps, values rounded to 4 digits (many ties), so the search cuts stretch by stretch off
 * one end up to the 256-cut cap, ranking the long rest by counting and keeping its counts. */
static void alternating_levels_agree(void **state)
{
    (void)state;
    enum { M = 80000 };
    double *x = malloc(M * sizeof *x);
    assert_non_null(x);
    rng = 9;
    for (size_t i = 0; i < M; i++) {
        double v = log((i / 200) % 2 ? 1.12 : 1.0) + 0.02 * gauss();
        x[i] = round(v * 1e4) / 1e4;
    }
    const double *sig[1] = {x};
    mfu__shift_params p = {
        .min_segment_steps = 10, .alpha = 1e-4, .min_level_shift = 0.02, .vif = {1.1, 1}};
    size_t ref[257], fast[257];
    size_t nr = ref_level_shifts(sig, 1, M, &p, ref);
    size_t nf = mfu__level_shifts(sig, 1, M, &p, fast);
    assert_true(nr > 200); /* most of the 256 cuts survive the pruning */
    assert_int_equal(nf, nr);
    for (size_t q = 0; q < nr; q++)
        assert_int_equal(fast[q], ref[q]);
    free(x);
}

static void order_is_a_stable_sort(void **state)
{
    (void)state;
    enum { N = 2000 };
    static double v[N];
    static uint32_t ord[N], ref[N];
    static uint64_t work[3 * N]; /* 5 N uint32, 8-byte aligned */
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
    assert_true(mfu__order_doubles(v, N, ord, (uint32_t *)work));
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
    assert_true(mfu__order_doubles(v, 0, ord, (uint32_t *)work));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fast_search_finds_the_reference_cuts),
        cmocka_unit_test(many_levels_agree),
        cmocka_unit_test(alternating_levels_agree),
        cmocka_unit_test(order_is_a_stable_sort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
