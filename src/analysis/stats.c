/*
 * stats.c - the small statistics the analysis is built from: medians, robust spread, ranks,
 * autocorrelation. Only mfu__ranks allocates (scratch it frees).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "util/util.h"

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

void mfu__sort_doubles(double *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_double);
}

double mfu__median_copy(const double *v, size_t n, double *tmp)
{
    if (n == 0)
        return NAN;
    memcpy(tmp, v, n * sizeof *tmp);
    return mfu__median_inplace(tmp, n);
}

double mfu__quantile_sorted(const double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    if (q <= 0)
        return v[0];
    if (q >= 1)
        return v[n - 1];
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    double fr = pos - (double)i;
    if (i + 1 >= n)
        return v[n - 1];
    return v[i] + fr * (v[i + 1] - v[i]);
}

double mfu__robust_sd(const double *v, size_t n, double *tmp)
{
    if (n < 2)
        return 0;
    memcpy(tmp, v, n * sizeof *tmp);
    double med = mfu__median_inplace(tmp, n);
    for (size_t i = 0; i < n; i++)
        tmp[i] = fabs(v[i] - med);
    return 1.4826 * mfu__median_inplace(tmp, n);
}

/* qsort cannot carry a context in C11, so ranks sort (value, index) pairs. */
typedef struct vi {
    double v;
    size_t i;
} vi;

static int cmp_vi(const void *pa, const void *pb)
{
    const vi *a = pa, *b = pb;
    if (a->v != b->v)
        return (a->v > b->v) - (a->v < b->v);
    return (a->i > b->i) - (a->i < b->i);
}

bool mfu__ranks(const double *v, size_t n, double *r, double *ties)
{
    if (ties)
        *ties = 0;
    if (n == 0)
        return true;
    vi *p = malloc(n * sizeof *p);
    if (!p)
        return false;
    for (size_t i = 0; i < n; i++) {
        p[i].v = v[i];
        p[i].i = i;
    }
    qsort(p, n, sizeof *p, cmp_vi);
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && p[j].v == p[i].v)
            j++;
        double avg = 0.5 * ((double)(i + 1) + (double)j), t = (double)(j - i);
        if (ties)
            *ties += t * t * t - t;
        for (size_t q = i; q < j; q++)
            r[p[q].i] = avg;
        i = j;
    }
    free(p);
    return true;
}

double mfu__acf(const double *v, size_t n, size_t lag)
{
    if (n < 3 || lag >= n)
        return 0;
    double mean = 0;
    for (size_t i = 0; i < n; i++)
        mean += v[i];
    mean /= (double)n;
    double den = 0, num = 0;
    for (size_t i = 0; i < n; i++)
        den += (v[i] - mean) * (v[i] - mean);
    if (!(den > 0))
        return 0;
    for (size_t i = 0; i + lag < n; i++)
        num += (v[i] - mean) * (v[i + lag] - mean);
    return num / den;
}

/* The radix key of a double: its bits with the sign bit flipped for positives and every bit
 * flipped for negatives, so that unsigned order is numeric order (−0 sorts just before +0;
 * both compare equal, which is all the callers ask of ties). */
static uint64_t order_key(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return (b >> 63) ? ~b : b | ((uint64_t)1 << 63);
}

bool mfu__order_doubles(const double *v, size_t n, uint32_t *ord, uint32_t *work)
{
    if (n == 0)
        return true;
    if (n > UINT32_MAX)
        return false;
    enum { PASSES = 8, BUCKETS = 256 };
    uint64_t *key = (uint64_t *)(void *)work;
    uint32_t *tmp = work + 4 * n;
    size_t hist[PASSES][BUCKETS];
    memset(hist, 0, sizeof hist);
    uint64_t *k0 = key, *k1 = key + n;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = order_key(v[i]);
        k0[i] = k;
        ord[i] = (uint32_t)i;
        for (int p = 0; p < PASSES; p++)
            hist[p][(k >> (8 * p)) & 0xff]++;
    }
    /* LSD passes, each stable, so equal values keep their index order; a pass whose byte is
     * the same in every key moves nothing and is skipped. */
    uint32_t *o0 = ord, *o1 = tmp;
    for (int p = 0; p < PASSES; p++) {
        size_t *h = hist[p];
        if (h[(k0[0] >> (8 * p)) & 0xff] == n)
            continue;
        size_t sum = 0;
        for (int b = 0; b < BUCKETS; b++) {
            size_t c = h[b];
            h[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t d = h[(k0[i] >> (8 * p)) & 0xff]++;
            k1[d] = k0[i];
            o1[d] = o0[i];
        }
        uint64_t *kt = k0;
        k0 = k1;
        k1 = kt;
        uint32_t *ot = o0;
        o0 = o1;
        o1 = ot;
    }
    if (o0 != ord)
        memcpy(ord, o0, n * sizeof *ord);
    return true;
}
