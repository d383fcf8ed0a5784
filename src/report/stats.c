/*
 * stats.c - robust summaries of a per-step series: median, mean, p10 and p90 over the steps
 * kept. Percentiles interpolate linearly between order statistics (Hyndman & Fan type 7, what
 * numpy.percentile does by default): p = x[(n-1) q] with linear interpolation.
 */
#include <math.h>
#include <stdlib.h>

#include "report/internal.h"

/* q-quantile of v[0..n-1], n > 0, the value the sorted array would give (type 7), by
 * selection: the lower order statistic, then the smallest above it. v is reordered. Three
 * selections cost a few passes where a sort cost n log n comparisons through a callback (40 %
 * of `mfu report` on a 400k-step log). */
static double quantile(double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    double a = mfu__select_kth(v, n, lo);
    if (lo + 1 >= n)
        return a;
    double b = v[lo + 1];
    for (size_t i = lo + 2; i < n; i++)
        if (v[i] < b)
            b = v[i];
    double f = pos - (double)lo;
    return a + f * (b - a);
}

mfu_report_stat mfu__stat(const double *x, const bool *keep, size_t n, double *scratch)
{
    mfu_report_stat s = {0, NAN, NAN, NAN, NAN};
    size_t k = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if ((keep && !keep[i]) || !isfinite(x[i]))
            continue;
        scratch[k++] = x[i];
        sum += x[i];
    }
    if (k == 0)
        return s;
    s.n = k;
    s.mean = sum / (double)k;
    s.median = quantile(scratch, k, 0.5);
    s.p10 = quantile(scratch, k, 0.1);
    s.p90 = quantile(scratch, k, 0.9);
    return s;
}

double mfu__median(const double *x, size_t n, double *scratch)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]))
            scratch[k++] = x[i];
    return k ? quantile(scratch, k, 0.5) : NAN; /* mfu__stat's median, without the rest */
}
