/*
 * stats.c - robust summaries of a per-step series: median, mean, p10 and p90 over the steps
 * kept. Percentiles interpolate linearly between order statistics (Hyndman & Fan type 7, what
 * numpy.percentile does by default): p = x[(n-1) q] with linear interpolation.
 */
#include <math.h>
#include <stdlib.h>

#include "report/internal.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* q-quantile of sorted v[0..n-1], n > 0. */
static double quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo + 1 >= n)
        return v[n - 1];
    double f = pos - (double)lo;
    return v[lo] + f * (v[lo + 1] - v[lo]);
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
    qsort(scratch, k, sizeof *scratch, cmp_double);
    s.n = k;
    s.mean = sum / (double)k;
    s.median = quantile(scratch, k, 0.5);
    s.p10 = quantile(scratch, k, 0.1);
    s.p90 = quantile(scratch, k, 0.9);
    return s;
}

double mfu__median(const double *x, size_t n, double *scratch)
{
    return mfu__stat(x, NULL, n, scratch).median;
}
