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

#define X(j) (xs ? (double)xs[j] : (double)(j))

/* Mean x and y of the points in [s, e) that are numbers; false when there is none. Branch-free
 * (the compiler keeps the loop tight): v == v is false for NaN only, and the derived columns
 * hold no infinities. */
static bool bucket_mean(const double *y, const size_t *xs, size_t s, size_t e, double *mx,
                        double *my)
{
    double sx = 0, sy = 0, c = 0;
    for (size_t j = s; j < e; j++) {
        double v = y[j];
        double m = v == v ? 1.0 : 0.0;
        sx += m * X(j);
        sy += v == v ? v : 0.0;
        c += m;
    }
    if (c == 0)
        return false;
    *mx = sx / c;
    *my = sy / c;
    return true;
}

size_t mfu__lttb(const double *y, size_t n, size_t m, size_t *out)
{
    return mfu__lttb_xy(y, NULL, n, m, out);
}

size_t mfu__lttb_xy(const double *y, const size_t *xs, size_t n, size_t m, size_t *out)
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

        double ax = X(a), ay = y[a], mx = 0, my = NAN;
        if (!bucket_mean(y, xs, ns, ne, &mx, &my)) {
            mx = X(ns);
            my = NAN;
        }
        if (!isfinite(ay))
            ay = my;
        if (!isfinite(my))
            my = ay;
        /* Twice the triangle's area, |(ax - mx)(y - ay) - (ax - x)(my - ay)|, is |p y + q x + r|
         * with p, q, r fixed for the bucket. A NaN point gives a NaN area, which never wins;
         * when every point is NaN the bucket keeps its first. Without an anchor value (the run
         * starts with NaN and so does the next bucket) the first number wins. */
        size_t best = s;
        double best_area = -1;
        if (isfinite(ay)) {
            double p = ax - mx, q = my - ay, r = -p * ay - ax * q;
            for (size_t j = s; j < e; j++) {
                double area = fabs(p * y[j] + q * X(j) + r);
                if (area > best_area) {
                    best_area = area;
                    best = j;
                }
            }
        } else {
            for (size_t j = s; j < e; j++)
                if (y[j] == y[j]) {
                    best = j;
                    break;
                }
        }
        out[k++] = best;
        a = best;
    }
    out[k++] = n - 1;
    return k;
}

/* ---- min/max preselection --------------------------------------------------------------- */

void mfu__blocks_update(const double *col, size_t n, size_t b0, unsigned char *lo,
                        unsigned char *hi)
{
    size_t nb = (n + MFU__BLOCK - 1) / MFU__BLOCK;
    for (size_t b = b0; b < nb; b++) {
        size_t s = b * MFU__BLOCK, e = s + MFU__BLOCK < n ? s + MFU__BLOCK : n;
        size_t imin = s, imax = s;
        bool any = false;
        for (size_t j = s; col && j < e; j++) {
            double v = col[j];
            if (v != v)
                continue;
            if (!any) {
                imin = imax = j;
                any = true;
            } else if (v < col[imin]) {
                imin = j;
            } else if (v > col[imax]) {
                imax = j;
            }
        }
        lo[b] = (unsigned char)(imin - s);
        hi[b] = (unsigned char)(imax - s);
    }
}

/* Append row j to out unless it is not after the last one (the range's first and last rows are
 * always candidates; a block extreme may be one of them). */
static size_t push(size_t *out, size_t k, size_t j)
{
    if (k == 0 || j > out[k - 1])
        out[k++] = j;
    return k;
}

size_t mfu__minmax_candidates(const unsigned char *lo, const unsigned char *hi, size_t from,
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
        k = push(out, k, x < y ? x : y);
        k = push(out, k, x < y ? y : x);
    }
    for (size_t j = b1 * MFU__BLOCK; j < to; j++)
        k = push(out, k, j);
    return push(out, k, to - 1);
}
