/*
 * stats.c - robust summaries of a per-step series: median, mean, p10 and p90 over the steps
 * kept. Percentiles interpolate linearly between order statistics (Hyndman & Fan type 7, what
 * numpy.percentile does by default): p = x[(n-1) q] with linear interpolation.
 */
#include <math.h>
#include <stdlib.h>

#include "report/internal.h"
#include "util/util.h"

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
    s.median = mfu__quantile_inplace(scratch, k, 0.5);
    s.p10 = mfu__quantile_inplace(scratch, k, 0.1);
    s.p90 = mfu__quantile_inplace(scratch, k, 0.9);
    return s;
}
