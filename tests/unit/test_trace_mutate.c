/*
 * test_trace_mutate.c - every bundled profiler trace (tests/data/traces), decompressed and
 * mutated by a seeded generator (bytes flipped, the document cut, ranges deleted, doubled or
 * swapped in from another trace, JSON punctuation and hostile numbers inserted, numbers
 * replaced by huge, negative, NaN or 40-digit ones), then read. Whatever the bytes:
 *   - the reader returns MFU_OK or an error with a one-line message, *out NULL (never a crash:
 *     the sanitizer suite runs this program under ASan + UBSan);
 *   - a trace that reads holds the invariants of trace_check (every step's parts sum to its
 *     span, counts add up, kernels in order), and its JSON, rank checks, straggler, run and
 *     waterfall are computed without a non-finite figure;
 *   - the gzip'd original cut short is an error, not a crash.
 * The seed is fixed (MFU_MUTATE_SEED overrides it, MFU_MUTATE_ROUNDS the mutants of a trace
 * up to 512 KiB; larger ones get proportionally fewer, at least 4)
 * so a failure names the trace and the mutant; MFU_MUTATE_DUMP=FILE writes each mutant there
 * before it is read (the last one is the one that failed).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mfu/mfu.h"
#include "synth.h"
#include "trace/internal.h"
#include "trace_test.h"

typedef struct fixture {
    char path[1024];
    char *data; /* decompressed */
    size_t n;
} fixture;

static char paths[TRACE_MAX_FIXTURES][1024];
static fixture fx[TRACE_MAX_FIXTURES];
static size_t nfx;
static syn_rng rng;

static uint64_t rnd(void)
{
    return syn_next(&rng);
}
static size_t below(size_t n)
{
    return n ? (size_t)(rnd() % n) : 0;
}

static int load(void **state)
{
    (void)state;
    size_t n = trace_fixtures(paths, TRACE_MAX_FIXTURES);
    for (size_t i = 0; i < n; i++) {
        fixture *f = &fx[nfx];
        snprintf(f->path, sizeof f->path, "%s", paths[i]);
        f->data = trace_gunzip(paths[i], &f->n);
        if (f->data)
            nfx++;
    }
    return nfx >= 11 ? 0 : -1;
}

static int unload(void **state)
{
    (void)state;
    for (size_t i = 0; i < nfx; i++)
        free(fx[i].data);
    return 0;
}

/* ---- mutations ---------------------------------------------------------------------------- */

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static const char *const junk[] = {
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "\n",
    "NaN",
    "1e999",
    "-",
    "\"ts\": -5",
    "\"dur\": 1e300",
    "\"ProfilerStep#",
    "ProfilerStep#99",
    "99999999999999999999999999999999",
    "\"cat\": \"kernel\"",
    "\"correlation\": 0",
    ("{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1e15}"),
    "\xff\xfe",
    "\\u",
    "\"\\ud800\"",
    "true",
    "null",
    "0x1f",
};

static const char *const numbers[] = {
    "1e308",   "-1e308", "NaN",  "-Infinity",           "0",
    "-1",      "4e15",   "1e16", "9223372036854775807", "1234567890123456789012345678901234567890",
    "0.000001"};

/* One mutant of f (from other fixture g for swaps) into b. */
static int mutate(const fixture *f, const fixture *g, buf *b)
{
    b->n = 0;
    size_t n = f->n, at = below(n);
    int kind = (int)below(8);
    switch (kind) {
    case 0: /* flip bytes */
        put(b, f->data, n);
        for (int k = 0, m = 1 + (int)below(8); k < m; k++)
            b->p[below(n)] = (char)(rnd() & 0xff);
        break;
    case 1: /* cut the document */ put(b, f->data, at); break;
    case 2: { /* delete a range */
        size_t len = 1 + below(400);
        put(b, f->data, at);
        if (at + len < n)
            put(b, f->data + at + len, n - at - len);
        break;
    }
    case 3: { /* double a range */
        size_t len = 1 + below(4000);
        if (at + len > n)
            len = n - at;
        put(b, f->data, at + len);
        put(b, f->data + at, n - at);
        break;
    }
    case 4: { /* insert punctuation or a hostile token */
        const char *j = junk[below(MFU__ARRAY_LEN(junk))];
        put(b, f->data, at);
        put(b, j, strlen(j));
        put(b, f->data + at, n - at);
        break;
    }
    case 5: { /* replace numbers */
        put(b, f->data, n);
        for (int k = 0, m = 1 + (int)below(6); k < m; k++) {
            size_t p = below(b->n);
            while (p < b->n && !(b->p[p] >= '0' && b->p[p] <= '9'))
                p++;
            size_t e = p;
            while (e < b->n && ((b->p[e] >= '0' && b->p[e] <= '9') || b->p[e] == '.'))
                e++;
            if (p == b->n)
                break;
            const char *r = numbers[below(MFU__ARRAY_LEN(numbers))];
            buf c = {0};
            put(&c, b->p, p);
            put(&c, r, strlen(r));
            put(&c, b->p + e, b->n - e);
            free(b->p);
            *b = c;
        }
        break;
    }
    case 6: { /* swap in a range from another trace */
        size_t len = 1 + below(20000), from = below(g->n);
        if (from + len > g->n)
            len = g->n - from;
        put(b, f->data, at);
        put(b, g->data + from, len);
        put(b, f->data + at, n - at);
        break;
    }
    default: { /* a field's name changed: ts, dur, correlation, ph lost */
        static const char *const keys[] = {"\"ts\"", "\"dur\"", "\"correlation\"",
                                           "\"ph\"", "\"cat\"", "\"name\""};
        put(b, f->data, n);
        const char *k = keys[below(MFU__ARRAY_LEN(keys))];
        for (char *p = strstr(b->p + below(b->n / 2), k); p && !below(3); p = strstr(p + 1, k))
            p[1] = 'Q';
        break;
    }
    }
    return kind;
}

/* ---- checks ------------------------------------------------------------------------------- */

static void check_views(const mfu_trace *t, const char *what)
{
    trace_check(t, what);
    const mfu_trace *set[] = {t};
    mfu_trace_view v;
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (mfu_trace_view_make(set, 1, NULL, NULL, &v, &e) != MFU_OK)
        fail_msg("%s: view: %s", what, e.message);
    json_t *j = mfu__trace_json(&v, 5);
    if (!j)
        fail_msg("%s: no JSON", what);
    char *text = json_dumps(j, JSON_COMPACT);
    if (!text || strstr(text, "inf") == text)
        fail_msg("%s: JSON not written", what);
    free(text);
    json_decref(j);
    mfu_run *run = NULL;
    if (mfu_trace_to_run(set, 1, &run, &e) == MFU_OK) {
        for (size_t i = 0; i < mfu_run_count(run); i++) {
            mfu_step s;
            mfu_run_get(run, i, &s);
            if (!(s.step_time_s > 0) || !isfinite(s.step_time_s))
                fail_msg("%s: run row %zu has step time %g", what, i, s.step_time_s);
        }
    }
    mfu_run_free(run);
    size_t rs = 0;
    mfu_trace_breakdown tot = mfu_trace_set_total(set, 1, &rs);
    mfu_trace_waterfall w;
    if (tot.span_s > 0 && mfu_trace_waterfall_compute(&tot, rs, 0.3, &w, &e) == MFU_OK) {
        double lost = w.idle + w.communication + w.memcpy + w.non_matmul + w.matmul_below_peak;
        if (!isfinite(lost) || fabs(lost - 70) > 1e-6)
            fail_msg("%s: waterfall sums to %g", what, lost);
    }
}

static void test_mutants(void **state)
{
    (void)state;
    const char *s = getenv("MFU_MUTATE_SEED"), *r = getenv("MFU_MUTATE_ROUNDS");
    const char *dump = getenv("MFU_MUTATE_DUMP");
    rng.s = s ? strtoull(s, NULL, 10) : 14;
    long rounds = r ? strtol(r, NULL, 10) : 24;
    buf b = {0};
    size_t ok = 0, errors = 0;
    for (size_t i = 0; i < nfx; i++) {
        /* the same bytes read per trace, whatever its size: a 3.7 MB trace gets 4 mutants, a
         * small one all the rounds (each mutant is read whole, under ASan in the suite) */
        long mine = (long)((double)rounds * (512.0 * 1024) / (double)fx[i].n);
        mine = mine > rounds ? rounds : mine < 4 ? 4 : mine;
        for (long k = 0; k < mine; k++) {
            int kind = mutate(&fx[i], &fx[below(nfx)], &b);
            if (dump) {
                FILE *d = fopen(dump, "wb");
                if (d) {
                    fwrite(b.p, 1, b.n, d);
                    fclose(d);
                }
            }
            char what[1100];
            snprintf(what, sizeof what, "%.1000s mutant %ld (kind %d)", fx[i].path, k, kind);
            mfu_trace *t = (mfu_trace *)(uintptr_t)1;
            mfu_error e;
            memset(&e, 0, sizeof e);
            mfu_status st = mfu_trace_read_mem(b.p, b.n, "mutant", NULL, &t, &e);
            if (st == MFU_OK) {
                check_views(t, what);
                ok++;
            } else {
                if (t != NULL)
                    fail_msg("%s: failed (%s) but *out is set", what, e.message);
                if (!e.message[0] || strchr(e.message, '\n'))
                    fail_msg("%s: status %d without a one-line message", what, st);
                errors++;
            }
            mfu_trace_free(t);
        }
    }
    free(b.p);
    /* the generator makes both kinds */
    assert_true(ok > 0 && errors > 0);
}

static void test_cut_gzip(void **state)
{
    (void)state;
    for (size_t i = 0; i < nfx; i++) {
        FILE *f = fopen(fx[i].path, "rb");
        assert_non_null(f);
        static char gz[1 << 20];
        size_t n = fread(gz, 1, sizeof gz, f);
        fclose(f);
        for (int k = 0; k < 4; k++) {
            size_t cut = below(n);
            mfu_trace *t = NULL;
            mfu_error e;
            memset(&e, 0, sizeof e);
            mfu_status st = mfu_trace_read_mem(gz, cut, "cut", NULL, &t, &e);
            if (st == MFU_OK || t || !e.message[0])
                fail_msg("%s cut at %zu of %zu: status %d", fx[i].path, cut, n, st);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutants),
        cmocka_unit_test(test_cut_gzip),
    };
    return cmocka_run_group_tests(tests, load, unload);
}
