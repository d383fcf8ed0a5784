/*
 * breakdown.c - a rank's GPU timeline -> the disjoint parts of any window of it.
 *
 * Every activity gives two points (its start +1, its end -1 on its class's counter); sorted by
 * time, consecutive points bound elementary intervals in which the set of running classes is
 * constant. Each interval goes to exactly one part by priority (matmul > attention > other >
 * exposed communication > memcpy > idle), and is marked overlapped as well when communication
 * runs under compute; neighbours with the same part and mark are merged. The segments tile
 * [first start, last end], so the parts of a window (a step's span, the whole profiled window)
 * sum to it in integer nanoseconds; they become seconds only at the end. O(n log n) for the
 * timeline, O(log n + segments) per window.
 */
#include <stdlib.h>
#include <string.h>

#include "trace/internal.h"

static int pt_cmp(const void *a, const void *b)
{
    const mfu__sweep_pt *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

static int part_of(const long *cnt, bool *overlapped)
{
    int p;
    if (cnt[MFU_TRACE_CLASS_MATMUL] > 0)
        p = MFU_TRACE_MATMUL;
    else if (cnt[MFU_TRACE_CLASS_ATTENTION] > 0)
        p = MFU_TRACE_ATTENTION;
    else if (cnt[MFU_TRACE_CLASS_OTHER] > 0)
        p = MFU_TRACE_OTHER;
    else if (cnt[MFU_TRACE_CLASS_COMMUNICATION] > 0)
        p = MFU_TRACE_COMM_EXPOSED;
    else if (cnt[MFU_TRACE_CLASS_MEMCPY] > 0)
        p = MFU_TRACE_MEMCPY;
    else
        p = MFU_TRACE_IDLE;
    *overlapped = p <= MFU_TRACE_OTHER && cnt[MFU_TRACE_CLASS_COMMUNICATION] > 0;
    return p;
}

size_t mfu__trace_timeline(const mfu__tspan *s, size_t n, mfu__sweep_pt *pt, mfu__seg *seg)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        pt[2 * i] = (mfu__sweep_pt){s[i].start_ns, s[i].cls, +1};
        pt[2 * i + 1] = (mfu__sweep_pt){s[i].end_ns, s[i].cls, -1};
    }
    qsort(pt, 2 * n, sizeof *pt, pt_cmp);
    long cnt[MFU_TRACE_CLASS_COUNT_] = {0};
    size_t k = 0;
    int64_t prev = pt[0].t;
    for (size_t i = 0; i < 2 * n;) {
        int64_t t = pt[i].t;
        if (t > prev) {
            bool ov;
            int p = part_of(cnt, &ov);
            if (k > 0 && seg[k - 1].part == p && seg[k - 1].overlapped == ov &&
                seg[k - 1].t1 == prev)
                seg[k - 1].t1 = t;
            else
                seg[k++] = (mfu__seg){prev, t, (uint8_t)p, ov};
        }
        for (; i < 2 * n && pt[i].t == t; i++)
            cnt[pt[i].cls] += pt[i].delta;
        prev = t;
    }
    return k;
}

void mfu__trace_window(const mfu__seg *g, size_t n, int64_t lo, int64_t hi,
                       mfu_trace_breakdown *out)
{
    memset(out, 0, sizeof *out);
    if (hi <= lo)
        return;
    int64_t part[MFU_TRACE_PARTS_] = {0}, overlapped = 0;
    /* the first segment ending after lo */
    size_t a = 0, b = n;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (g[mid].t1 <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    int64_t covered = 0;
    for (size_t i = a; i < n && g[i].t0 < hi; i++) {
        int64_t t0 = g[i].t0 > lo ? g[i].t0 : lo, t1 = g[i].t1 < hi ? g[i].t1 : hi;
        if (t1 <= t0)
            continue;
        part[g[i].part] += t1 - t0;
        if (g[i].overlapped)
            overlapped += t1 - t0;
        covered += t1 - t0;
    }
    part[MFU_TRACE_IDLE] += (hi - lo) - covered; /* a window past the timeline's ends */
    out->span_s = (double)(hi - lo) * 1e-9;
    for (int p = 0; p < MFU_TRACE_PARTS_; p++)
        out->part_s[p] = (double)part[p] * 1e-9;
    out->compute_s =
        (double)(part[MFU_TRACE_MATMUL] + part[MFU_TRACE_ATTENTION] + part[MFU_TRACE_OTHER]) * 1e-9;
    out->communication_overlapped_s = (double)overlapped * 1e-9;
}

void mfu__trace_add(mfu_trace_breakdown *a, const mfu_trace_breakdown *b)
{
    a->span_s += b->span_s;
    for (int p = 0; p < MFU_TRACE_PARTS_; p++)
        a->part_s[p] += b->part_s[p];
    a->compute_s += b->compute_s;
    a->communication_overlapped_s += b->communication_overlapped_s;
}
