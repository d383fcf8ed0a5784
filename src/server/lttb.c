/*
 * lttb.c - largest-triangle-three-buckets downsampling (S. Steinarsson, "Downsampling Time
 * Series for Visual Representation", MSc thesis, University of Iceland, 2013), written from the
 * description of the algorithm.
 *
 * The first and last points are kept. The points between are cut into m - 2 buckets of equal
 * width; from each bucket the point is kept that forms the largest triangle with the point kept
 * from the previous bucket and the mean of the next bucket. A lone peak or dip is far from
 * that line, so it is kept: the shape of a long run survives at 2000 points. One pass, O(n).
 */
#include <math.h>

#include "server/internal.h"

/* Mean x and y of the finite points in [s, e); false when there is none. */
static bool bucket_mean(const double *y, size_t s, size_t e, double *mx, double *my)
{
    double sx = 0, sy = 0;
    size_t c = 0;
    for (size_t j = s; j < e; j++) {
        if (!isfinite(y[j]))
            continue;
        sx += (double)j;
        sy += y[j];
        c++;
    }
    if (c == 0)
        return false;
    *mx = sx / (double)c;
    *my = sy / (double)c;
    return true;
}

size_t mfu__lttb(const double *y, size_t n, size_t m, size_t *out)
{
    if (n == 0 || m == 0)
        return 0;
    if (m >= n) {
        for (size_t i = 0; i < n; i++)
            out[i] = i;
        return n;
    }
    if (m < 3) {
        out[0] = 0;
        if (m == 2) {
            out[1] = n - 1;
            return 2;
        }
        return 1;
    }
    /* m <= n - 1, so every > 1 and no bucket is empty. */
    const double every = (double)(n - 2) / (double)(m - 2);
    size_t k = 0, a = 0;
    out[k++] = 0;
    for (size_t i = 0; i < m - 2; i++) {
        size_t s = (size_t)floor((double)i * every) + 1;
        size_t e = (size_t)floor((double)(i + 1) * every) + 1;
        if (e > n - 1)
            e = n - 1;
        if (s >= e)
            s = e - 1;
        size_t ns = e;
        size_t ne = (size_t)floor((double)(i + 2) * every) + 1;
        if (ne > n)
            ne = n;
        if (ne <= ns)
            ne = ns + 1;

        double ax = (double)a, ay = y[a], mx = 0, my = NAN;
        if (!bucket_mean(y, ns, ne, &mx, &my)) {
            mx = (double)ns;
            my = NAN;
        }
        if (!isfinite(ay))
            ay = my;
        if (!isfinite(my))
            my = ay;
        size_t best = s;
        bool found = false;
        double best_area = -1;
        for (size_t j = s; j < e; j++) {
            if (!isfinite(y[j]))
                continue;
            double area;
            if (isfinite(ay))
                area = fabs((ax - mx) * (y[j] - ay) - (ax - (double)j) * (my - ay));
            else
                area = 0; /* nothing to compare with: the first finite point */
            if (!found || area > best_area) {
                best_area = area;
                best = j;
                found = true;
            }
        }
        out[k++] = best;
        a = best;
    }
    out[k++] = n - 1;
    return k;
}
