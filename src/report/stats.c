/*
 * stats.c - robust summaries of a per-step series: median, mean, p10 and p90 over the steps
 * kept. Percentiles interpolate linearly between order statistics (Hyndman & Fan type 7, what
 * numpy.percentile does by default): p = x[(n-1) q] with linear interpolation.
 */
#include <math.h>
#include <stdlib.h>

#include "report/internal.h"
#include "util/util.h"

/* The type-7 quantile q of v[0..n), for v partitioned so that its order statistics at
 * positions [lo, hi) lie in v[lo..hi) (every value before lo <= each of them <= every value
 * from hi on), and both order statistics q needs among them. */
static double part_quantile(double *v, size_t n, double q, size_t lo, size_t hi)
{
    double pos = q * (double)(n - 1);
    size_t j = (size_t)pos;
    if (j >= n)
        j = n - 1;
    double a = mfu__select_kth(v + lo, hi - lo, j - lo);
    double f = pos - (double)j;
    if (j + 1 >= n || f == 0)
        return a;
    /* the next order statistic: the least value after position j (within [j+1, hi) when
     * that is not empty, every value from hi on being no smaller) */
    size_t end = j + 1 < hi ? hi : n;
    double b = v[j + 1];
    for (size_t i = j + 2; i < end; i++)
        if (v[i] < b)
            b = v[i];
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
    /* The median's selection leaves scratch partitioned about its lower order statistic
     * (mid): p10 lies in [0, mid], p90 in [mid, k), so each selects within its part. The
     * values are those of a selection over the whole (order statistics are values). */
    s.median = mfu__quantile_inplace(scratch, k, 0.5);
    size_t mid = (size_t)(0.5 * (double)(k - 1));
    s.p10 = part_quantile(scratch, k, 0.1, 0, mid + 1);
    s.p90 = part_quantile(scratch, k, 0.9, mid, k);
    return s;
}
