/*
 * stats.c - robust summaries of a per-step series: median, mean, p10 and p90 over the steps
 * kept. Percentiles interpolate linearly between order statistics (Hyndman & Fan type 7, what
 * numpy.percentile does by default): p = x[(n-1) q] with linear interpolation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
#include "util/util.h"

/* The type-7 quantile q of v[0..n) after the median's selection: v[0..mid) <= med = the
 * order statistic at mid <= v[mid + 1..n) (v[mid] itself is not read: a selection in the
 * lower part may move it, so each quantile selects within one part only). */
static double part_quantile(double *v, size_t n, size_t mid, double med, double q)
{
    double pos = q * (double)(n - 1);
    size_t j = (size_t)pos;
    if (j >= n)
        j = n - 1;
    double a, f = pos - (double)j;
    size_t end; /* the next order statistic: the least value of v[j + 1..end) (and med) */
    bool with_med = false;
    if (j < mid) {
        a = mfu__select_kth(v, mid, j);
        end = mid;
        with_med = true;
    } else if (j == mid) {
        a = med;
        end = n;
    } else {
        a = mfu__select_kth(v + mid + 1, n - mid - 1, j - mid - 1);
        end = n;
    }
    if (j + 1 >= n || f == 0)
        return a;
    double b = with_med ? med : v[j + 1];
    for (size_t i = j + 1; i < end; i++)
        if (v[i] < b)
            b = v[i];
    return a + f * (b - a);
}

/* The q-quantile of k values that all are x (their bits): what mfu__quantile_inplace and
 * part_quantile give them, to the bit (x + f (x - x) where they interpolate: -0 becomes +0). */
static double const_quantile(double x, size_t k, double q)
{
    double pos = q * (double)(k - 1);
    size_t j = (size_t)pos;
    if (j >= k)
        j = k - 1;
    double f = pos - (double)j;
    return j + 1 >= k || f == 0 ? x : x + f * (x - x);
}

/* The summary of k values that are all x0 and add up to sum (none when k is 0). */
static mfu_report_stat one_value(double x0, size_t k, double sum)
{
    mfu_report_stat s = {0, NAN, NAN, NAN, NAN};
    if (k) {
        s.n = k;
        s.mean = sum / (double)k;
        s.median = const_quantile(x0, k, 0.5);
        s.p10 = const_quantile(x0, k, 0.1);
        s.p90 = const_quantile(x0, k, 0.9);
    }
    return s;
}

mfu_report_stat mfu__stat_one(double x0, const uint8_t *keep, size_t n)
{
    size_t k = 0;
    double sum = 0;
    for (size_t i = 0; isfinite(x0) && i < n; i++) /* the sum mfu__stat adds, row by row */
        if (!keep || keep[i]) {
            sum += x0;
            k++;
        }
    return one_value(x0, k, sum);
}

mfu_report_stat mfu__stat(const double *x, const uint8_t *keep, size_t n, double *scratch)
{
    mfu_report_stat s = {0, NAN, NAN, NAN, NAN};
    size_t k = 0;
    double sum = 0, x0 = 0;
    /* one value in every kept row (tokens per step): no copy and no selection */
    bool one = true;
    for (size_t i = 0; i < n && one; i++) {
        if ((keep && !keep[i]) || !isfinite(x[i]))
            continue;
        if (k == 0)
            x0 = x[i];
        else if (memcmp(&x[i], &x0, sizeof x0) != 0)
            one = false;
        sum += x[i];
        k++;
    }
    if (one)
        return one_value(x0, k, sum);
    k = 0;
    sum = 0;
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
    /* The median's selection leaves scratch partitioned about its lower order statistic at
     * mid: p10 and p90 select within the part below or above it (the same values as a
     * selection over the whole: order statistics are values). */
    s.median = mfu__quantile_inplace(scratch, k, 0.5);
    size_t mid = (size_t)(0.5 * (double)(k - 1));
    double med = scratch[mid];
    s.p10 = part_quantile(scratch, k, mid, med, 0.1);
    s.p90 = part_quantile(scratch, k, mid, med, 0.9);
    return s;
}
