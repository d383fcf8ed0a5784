/*
 * stats.c - the order statistics every module takes its medians and quantiles from, so that a
 * median is one number wherever it is shown (the report's summaries, the analysis's levels,
 * the server's summaries and /metrics all call these).
 *
 * Quantiles are Hyndman & Fan type 7 (what numpy.percentile does by default): the value at
 * position q (n - 1) of the sorted values, interpolated linearly. They are found by selection,
 * not by sorting: the lower order statistic, then the smallest value above it.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "util/util.h"

double mfu__quantile_inplace(double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    if (!(q > 0))
        q = 0;
    if (q > 1)
        q = 1;
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo >= n)
        lo = n - 1;
    double a = mfu__select_kth(v, n, lo);
    double f = pos - (double)lo;
    if (lo + 1 >= n || f == 0)
        return a;
    double b = v[lo + 1];
    for (size_t i = lo + 2; i < n; i++)
        if (v[i] < b)
            b = v[i];
    return a + f * (b - a);
}

double mfu__median_inplace(double *v, size_t n)
{
    return mfu__quantile_inplace(v, n, 0.5);
}

double mfu__median_finite(const double *x, size_t n, double *scratch)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]))
            scratch[k++] = x[i];
    return mfu__median_inplace(scratch, k);
}

double mfu__robust_noise(const double *v, size_t n, double *tmp)
{
    if (n < 3)
        return 0;
    for (size_t i = 0; i + 1 < n; i++)
        tmp[i] = v[i + 1] - v[i];
    double med = mfu__median_inplace(tmp, n - 1);
    for (size_t i = 0; i + 1 < n; i++)
        tmp[i] = fabs(v[i + 1] - v[i] - med);
    return 1.4826 * mfu__median_inplace(tmp, n - 1) / sqrt(2.0);
}
