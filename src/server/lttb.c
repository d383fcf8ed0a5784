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
#include <stdlib.h>
#include <string.h>

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

/* ---- the min/max pyramid ---------------------------------------------------------------- */

size_t mfu__mm_block_rows(int level)
{
    size_t b = MFU__BLOCK;
    for (int k = 0; k < level; k++)
        b *= MFU__MM_FACTOR;
    return b;
}

void mfu__mm_free(mfu__mm *p)
{
    free(p->lo0);
    free(p->hi0);
    for (int k = 0; k < MFU__MM_LEVELS; k++) {
        free(p->lo[k]);
        free(p->hi[k]);
        free(p->vlo[k]);
        free(p->vhi[k]);
    }
    memset(p, 0, sizeof *p);
}

static bool mm_grow(void **a, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap && *a)
        return true;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*a, c * size);
    if (!q)
        return false;
    *a = q;
    *cap = c;
    return true;
}

/* Row of the smaller (hi: larger) number of rows a and b of col, a before b: a on ties and
 * when b holds NaN; b when a holds NaN. */
static uint32_t pick(const double *col, uint32_t a, uint32_t b, bool hi)
{
    double x = col[a], y = col[b];
    if (y != y)
        return a;
    if (x != x)
        return b;
    return (hi ? y > x : y < x) ? b : a;
}

bool mfu__mm_update(mfu__mm *p, const double *col, size_t n, size_t from)
{
    if (n > UINT32_MAX)
        return false;
    size_t nb0 = (n + MFU__BLOCK - 1) / MFU__BLOCK;
    size_t c0 = p->cap0, c1 = p->cap0;
    void *lo0 = p->lo0, *hi0 = p->hi0;
    bool ok = mm_grow(&lo0, &c0, nb0, 1);
    p->lo0 = lo0;
    ok = ok && mm_grow(&hi0, &c1, nb0, 1);
    p->hi0 = hi0;
    if (!ok)
        return false;
    p->cap0 = c0 < c1 ? c0 : c1;
    if (from > p->n)
        from = p->n; /* rows past what was covered are new too */
    if (n > 0)
        mfu__blocks_update(col, n, from / MFU__BLOCK, p->lo0, p->hi0);
    for (int k = 0; k < MFU__MM_LEVELS; k++) {
        size_t rows = mfu__mm_block_rows(k + 1);
        size_t nb = (n + rows - 1) / rows;
        size_t ca = p->cap[k], cb = p->cap[k];
        void *lo = p->lo[k], *hi = p->hi[k];
        ok = mm_grow(&lo, &ca, nb ? nb : 1, sizeof(uint32_t));
        p->lo[k] = lo;
        ok = ok && mm_grow(&hi, &cb, nb ? nb : 1, sizeof(uint32_t));
        p->hi[k] = hi;
        if (!ok)
            return false;
        size_t cc = p->cap[k], cd = p->cap[k];
        void *vlo = p->vlo[k], *vhi = p->vhi[k];
        ok = mm_grow(&vlo, &cc, nb ? nb : 1, sizeof(double));
        p->vlo[k] = vlo;
        ok = ok && mm_grow(&vhi, &cd, nb ? nb : 1, sizeof(double));
        p->vhi[k] = vhi;
        if (!ok)
            return false;
        ca = ca < cb ? ca : cb;
        cc = cc < cd ? cc : cd;
        p->cap[k] = ca < cc ? ca : cc;
        size_t child_rows = rows / MFU__MM_FACTOR;
        size_t nchild = (n + child_rows - 1) / child_rows;
        for (size_t b = from / rows; b < nb; b++) {
            size_t c = b * MFU__MM_FACTOR,
                   ce = c + MFU__MM_FACTOR < nchild ? c + MFU__MM_FACTOR : nchild;
            uint32_t lo_r = (uint32_t)(b * rows), hi_r = lo_r;
            for (; col && c < ce; c++) {
                uint32_t cl, ch;
                if (k == 0) {
                    cl = (uint32_t)(c * MFU__BLOCK + p->lo0[c]);
                    ch = (uint32_t)(c * MFU__BLOCK + p->hi0[c]);
                } else {
                    cl = p->lo[k - 1][c];
                    ch = p->hi[k - 1][c];
                }
                lo_r = pick(col, lo_r, cl, false);
                hi_r = pick(col, hi_r, ch, true);
            }
            p->lo[k][b] = lo_r;
            p->hi[k][b] = hi_r;
            p->vlo[k][b] = col ? col[lo_r] : NAN;
            p->vhi[k][b] = col ? col[hi_r] : NAN;
        }
    }
    p->n = n;
    return true;
}

int mfu__mm_level(size_t total, size_t m)
{
    if (m == 0 || total / m < MFU__PRESELECT_BLOCKS * (size_t)MFU__BLOCK)
        return -1;
    int k = 0;
    while (k < MFU__MM_LEVELS && total / m >= MFU__PRESELECT_BLOCKS * mfu__mm_block_rows(k + 1))
        k++;
    return k;
}

size_t mfu__mm_cap(int level, size_t total)
{
    return 2 * (total / mfu__mm_block_rows(level)) + 2 * MFU__BLOCK +
           4 * (size_t)MFU__MM_FACTOR * (size_t)(level + 1) + 4;
}

/* Where candidates go: rows into out and, when vals is not NULL, their numbers into vals (from
 * the pyramid's blocks of level 1 up, else from col; NaN where col is NULL). */
typedef struct {
    size_t *out;
    double *vals;
    const double *col;
} cand_out;

/* Append row j (number v) unless it is not after the last one (the range's first and last rows
 * are always candidates; a block extreme may be one of them). */
static size_t push_v(const cand_out *o, size_t k, size_t j, double v)
{
    if (k == 0 || j > o->out[k - 1]) {
        o->out[k] = j;
        if (o->vals)
            o->vals[k] = v;
        k++;
    }
    return k;
}

static double col_v(const cand_out *o, size_t j)
{
    return o->vals && o->col ? o->col[j] : NAN;
}

/* The candidates of rows [a, b) from blocks of level k at most (level -1: every row). */
static size_t cover(const mfu__mm *p, int k, size_t a, size_t b, const cand_out *o, size_t n)
{
    if (a >= b)
        return n;
    if (k < 0) {
        for (size_t j = a; j < b; j++)
            n = push_v(o, n, j, col_v(o, j));
        return n;
    }
    size_t rows = mfu__mm_block_rows(k);
    size_t a1 = (a + rows - 1) / rows, b1 = b / rows; /* whole blocks a1 .. b1-1 */
    if (a1 >= b1)
        return cover(p, k - 1, a, b, o, n);
    n = cover(p, k - 1, a, a1 * rows, o, n);
    if (k == 0) {
        for (size_t blk = a1; blk < b1; blk++) {
            size_t x = blk * MFU__BLOCK + p->lo0[blk], y = blk * MFU__BLOCK + p->hi0[blk];
            n = push_v(o, n, x < y ? x : y, col_v(o, x < y ? x : y));
            n = push_v(o, n, x < y ? y : x, col_v(o, x < y ? y : x));
        }
    } else { /* the numbers beside the rows: no load from the column, far apart in a long run */
        const uint32_t *lo = p->lo[k - 1], *hi = p->hi[k - 1];
        const double *vlo = p->vlo[k - 1], *vhi = p->vhi[k - 1];
        for (size_t blk = a1; blk < b1; blk++) {
            size_t x = lo[blk], y = hi[blk];
            n = push_v(o, n, x < y ? x : y, x < y ? vlo[blk] : vhi[blk]);
            n = push_v(o, n, x < y ? y : x, x < y ? vhi[blk] : vlo[blk]);
        }
    }
    return cover(p, k - 1, b1 * rows, b, o, n);
}

size_t mfu__mm_candidates_v(const mfu__mm *p, int level, size_t from, size_t to, const double *col,
                            size_t *out, double *vals)
{
    if (to <= from)
        return 0;
    if (level >= MFU__MM_LEVELS + 1)
        level = MFU__MM_LEVELS;
    cand_out o = {out, vals, col};
    size_t k = push_v(&o, 0, from, col_v(&o, from));
    k = cover(p, level, from, to, &o, k);
    return push_v(&o, k, to - 1, col_v(&o, to - 1));
}

size_t mfu__mm_candidates(const mfu__mm *p, int level, size_t from, size_t to, size_t *out)
{
    return mfu__mm_candidates_v(p, level, from, to, NULL, out, NULL);
}
