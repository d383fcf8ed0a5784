/*
 * trace_test.h - helpers shared by tests/unit/test_trace*.c (header-only).
 *
 *   n = trace_fixtures(paths, max);          // every bundled trace file, sorted
 *   data = trace_gunzip(path, &len);         // the decompressed JSON (free() it)
 *   trace_check(t, what);                    // the invariants every read trace holds
 *
 * Paths are under MFU_TEST_DATA/traces (tests/data/traces).
 */
#ifndef MFU_TRACE_TEST_H
#define MFU_TRACE_TEST_H

#define _DEFAULT_SOURCE /* DT_REG */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "mfu/trace.h"

#define TRACE_MAX_FIXTURES 64

static inline void trace_data_path(char *buf, size_t n, const char *rel)
{
    const char *dir = getenv("MFU_TEST_DATA");
    snprintf(buf, n, "%s/traces/%s", dir ? dir : "tests/data", rel);
}

static inline int trace_path_cmp(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* Every *.json.gz under traces/<folder>/ into paths[i] (1024 bytes each), sorted; the count. */
static inline size_t trace_fixtures(char (*paths)[1024], size_t max)
{
    char root[1024];
    trace_data_path(root, sizeof root, "");
    DIR *d = opendir(root);
    size_t n = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char sub[1400];
        if ((size_t)snprintf(sub, sizeof sub, "%s%s", root, e->d_name) >= sizeof sub)
            continue;
        DIR *s = opendir(sub);
        if (!s)
            continue;
        struct dirent *f;
        while ((f = readdir(s)) && n < max) {
            size_t len = strlen(f->d_name);
            if (len > 8 && strcmp(f->d_name + len - 8, ".json.gz") == 0 &&
                strlen(sub) + len + 2 <= 1024) {
                memcpy(paths[n], sub, strlen(sub));
                paths[n][strlen(sub)] = '/';
                memcpy(paths[n] + strlen(sub) + 1, f->d_name, len + 1);
                n++;
            }
        }
        closedir(s);
    }
    closedir(d);
    qsort(paths, n, 1024, trace_path_cmp);
    return n;
}

/* The whole decompressed file (NUL-terminated); NULL when it cannot be read. */
static inline char *trace_gunzip(const char *path, size_t *len)
{
    gzFile g = gzopen(path, "rb");
    if (!g)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap + 1);
    int k;
    while (buf && (k = gzread(g, buf + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)k;
        if (n == cap) {
            char *b = realloc(buf, 2 * cap + 1);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
    }
    gzclose(g);
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

/* 1 when the breakdown's parts sum to its span (relative 1e-9), compute is its three parts,
 * and nothing is negative or not finite. */
static inline int trace_breakdown_ok(const mfu_trace_breakdown *b)
{
    double sum = 0;
    for (int p = 0; p < MFU_TRACE_PARTS_; p++) {
        if (!isfinite(b->part_s[p]) || b->part_s[p] < 0)
            return 0;
        sum += b->part_s[p];
    }
    double c =
        b->part_s[MFU_TRACE_MATMUL] + b->part_s[MFU_TRACE_ATTENTION] + b->part_s[MFU_TRACE_OTHER];
    return isfinite(b->span_s) && b->span_s >= 0 && fabs(sum - b->span_s) <= 1e-9 * b->span_s &&
           fabs(c - b->compute_s) <= 1e-12 + 1e-9 * b->compute_s &&
           b->communication_overlapped_s >= 0 &&
           b->communication_overlapped_s <= b->compute_s * (1 + 1e-9) + 1e-12;
}

/* Fail the test (cmocka) unless t holds what every read trace holds. */
static inline void trace_check(const mfu_trace *t, const char *what)
{
    mfu_trace_counts c = mfu_trace_get_counts(t);
    if (c.attributed > c.activities || c.placed_by_time > c.attributed ||
        c.attributed + c.no_launch + c.outside != c.activities)
        fail_msg("%s: counts do not add up", what);
    if (mfu_trace_step_count(t) == 0)
        fail_msg("%s: no step", what);
    size_t acts = 0;
    double intervals = 0;
    for (size_t i = 0; i < mfu_trace_step_count(t); i++) {
        const mfu_trace_step *s = mfu_trace_step_at(t, i);
        acts += s->activities;
        intervals += s->interval_s;
        if (!(s->interval_s >= 0) || (s->activities > 0 && !(s->gpu_offset_s >= 0)))
            fail_msg("%s: step %lld: interval %g, offset %g", what, (long long)s->step,
                     s->interval_s, s->gpu_offset_s);
        if (!trace_breakdown_ok(&s->breakdown))
            fail_msg("%s: step %lld: parts do not sum to the span", what, (long long)s->step);
        if (s->step_time_s != s->breakdown.span_s || (s->activities == 0 && s->step_time_s != 0))
            fail_msg("%s: step %lld: step time is not the span", what, (long long)s->step);
        if (i > 0 && mfu_trace_step_at(t, i - 1)->step > s->step)
            fail_msg("%s: steps out of order", what);
    }
    if (acts != c.attributed)
        fail_msg("%s: steps hold %zu activities, %zu attributed", what, acts, c.attributed);
    mfu_trace_breakdown tot = mfu_trace_total(t);
    if (intervals > tot.span_s * (1 + 1e-9) + 1e-12)
        fail_msg("%s: the intervals (%g s) pass the window (%g s)", what, intervals, tot.span_s);
    if (!trace_breakdown_ok(&tot))
        fail_msg("%s: the totals' parts do not sum to the window", what);
    for (size_t i = 0; i < mfu_trace_kernel_count(t); i++) {
        const mfu_trace_kernel *k = mfu_trace_kernel_at(t, i);
        if (!k->name || k->count == 0 || !(k->time_s >= 0) ||
            (i > 0 && mfu_trace_kernel_at(t, i - 1)->time_s < k->time_s))
            fail_msg("%s: kernel %zu is wrong or out of order", what, i);
        if (!isnan(k->flops_per_s) && !(k->flops_per_s > 0 && isfinite(k->flops_per_s)))
            fail_msg("%s: kernel %zu: FLOP/s %g", what, i, k->flops_per_s);
    }
}

#endif
