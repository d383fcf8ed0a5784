/*
 * ingest_test.h - helpers shared by the tests/unit/test_ingest*.c programs (header-only).
 *
 *   run = ingest_fixture("logs/megatron-lm/x.log", NULL, &stats);   // auto-detect
 *   run = ingest_text("iter 1: loss ...\n", "nanogpt", &stats);       // forced format
 * Both fail the test (cmocka) when ingest fails; ingest_expect_error() returns the status.
 * Paths are relative to MFU_TEST_DATA (tests/data).
 */
#ifndef MFU_INGEST_TEST_H
#define MFU_INGEST_TEST_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfu/ingest.h"
#include "mfu/run.h"

static inline void ingest_data_path(char *buf, size_t n, const char *rel)
{
    const char *dir = getenv("MFU_TEST_DATA");
    int w = snprintf(buf, n, "%s/%s", dir ? dir : "tests/data", rel);
    if (w < 0 || (size_t)w >= n)
        fail_msg("test data path too long: %s/%s", dir ? dir : "tests/data", rel);
}

static inline mfu_run *ingest_fixture(const char *rel, const char *format, mfu_ingest_stats *stats)
{
    char path[1024];
    ingest_data_path(path, sizeof path, rel);
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = format;
    mfu_run *run = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status st = mfu_ingest_path(path, &o, &run, stats, &e);
    if (st != MFU_OK)
        fail_msg("ingest %s: %s", path, e.message);
    return run;
}

static inline mfu_status ingest_buffer_opts(const void *data, size_t n, const mfu_ingest_opts *o,
                                            mfu_run **run, mfu_ingest_stats *stats, mfu_error *e)
{
    mfu_ingest *ing = NULL;
    *run = NULL;
    mfu_status st = mfu_ingest_new(o, &ing, e);
    if (st != MFU_OK)
        return st;
    st = mfu_ingest_feed_buffer(ing, data, n, "test", e);
    if (st == MFU_OK)
        st = mfu_ingest_finish(ing, run, e);
    if (stats)
        *stats = *mfu_ingest_get_stats(ing);
    mfu_ingest_free(ing);
    return st;
}

static inline mfu_run *ingest_text(const char *text, const char *format, mfu_ingest_stats *stats)
{
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = format;
    mfu_run *run = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status st = ingest_buffer_opts(text, strlen(text), &o, &run, stats, &e);
    if (st != MFU_OK)
        fail_msg("ingest text: %s", e.message);
    return run;
}

static inline mfu_status ingest_expect_error(const char *text, size_t n, const char *format,
                                             mfu_error *e)
{
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = format;
    mfu_run *run = NULL;
    memset(e, 0, sizeof *e);
    mfu_status st = ingest_buffer_opts(text, n, &o, &run, NULL, e);
    mfu_run_free(run);
    return st;
}

/* Ingest text with a format (NULL: detect) and --map entries; fails the test unless the status
 * is want. Returns the run (NULL on failure), *st and *e filled. */
static inline mfu_run *ingest_text_map(const char *text, const char *format, const char *const *map,
                                       size_t nmap, mfu_ingest_stats *st, mfu_status want,
                                       mfu_error *e)
{
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = format;
    o.map = map;
    o.nmap = nmap;
    mfu_run *run = NULL;
    memset(e, 0, sizeof *e);
    mfu_status rc = ingest_buffer_opts(text, strlen(text), &o, &run, st, e);
    if (rc != want)
        fail_msg("status %d, expected %d: %s", rc, want, e->message);
    return run;
}

/* A growable text for writing test logs: ingest_tput(&b, fmt, ...) appends; free(b.p). */
typedef struct ingest_tbuf {
    char *p;
    size_t n, cap;
} ingest_tbuf;

static inline void ingest_tput(ingest_tbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void ingest_tput(ingest_tbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[2048];
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof tmp)
        fail_msg("ingest_tput: a line of %d bytes", k);
    if (b->n + (size_t)k + 1 > b->cap) {
        b->cap = (b->n + (size_t)k + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            fail_msg("ingest_tput: out of memory");
    }
    memcpy(b->p + b->n, tmp, (size_t)k + 1);
    b->n += (size_t)k;
}

/* Row i of run (fails the test when out of range). */
static inline mfu_step ingest_row(const mfu_run *run, size_t i)
{
    mfu_step s;
    if (!mfu_run_get(run, i, &s))
        fail_msg("row %zu out of range (%zu rows)", i, mfu_run_count(run));
    return s;
}

/* Row i of double column c, read as mfu_run_column's contract says: a column without an array
 * (NULL) is NaN in every row. i must be below the run's count. */
static inline double run_cell(const mfu_run *run, mfu_column c, size_t i)
{
    const double *col = mfu_run_column(run, c);
    return col ? col[i] : NAN;
}

/* Append to buf (size n, NUL-terminated) the lines of an llm.c log (reference
 * log-formats.md section 5 layout): the header when from is 1, then steps from..to at 300 + s
 * ms. Returns strlen(buf). For the tests that follow a growing log. */
static inline size_t ingest_llmc_lines(char *buf, size_t n, int from, int to)
{
    size_t len = strlen(buf);
    if (from == 1 && len < n)
        len += (size_t)snprintf(buf + len, n - len,
                                "batch_size B=16 * seq_len T=1024 * num_processes=8 and "
                                "total_batch_size=131072\n");
    for (int s = from; s <= to && len < n; s++)
        len += (size_t)snprintf(buf + len, n - len,
                                "step %4d/100 | loss 3.%04d (+nanz)| norm 1.0000 (+nanz)| lr "
                                "6.00e-04 | %.2f ms | 40.0%% bf16 MFU | 100000 tok/s\n",
                                s, 5000 - s, 300.0 + s);
    if (len >= n)
        fail_msg("ingest_llmc_lines: %d..%d do not fit in %zu bytes", from, to, n);
    return len;
}

/* |a - b| <= tol * max(1, |b|) */
#define assert_near(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (tol) * (fabs(b_) > 1 ? fabs(b_) : 1)))                             \
            fail_msg("%s = %.12g, expected %.12g", #a, a_, b_);                                    \
    } while (0)

#endif
