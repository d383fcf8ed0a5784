/*
 * test_run_load.c - mfu__run_load (run/step.h): rows given as whole columns make the run that
 * mfu_run_append of each row makes, field for field and bit for bit (every kind: doubles with
 * NaN payloads and -0, scopes, flags, ranks, recompute and dtype codes out of range), columns
 * made at the first row that fills them, onto runs that already hold rows; and rows that are
 * not a stored run's as they are (a step number that does not rise, a value the append refuses
 * or changes, no room) are refused whole, the run unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run/step.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The member sizes and offsets of mfu_step in member order (MFU__MEMBER_*). */
#define MEMBER_AT(kind, name, NAME, arg, map, since, unit, what, help)                             \
    MFU__STEP_IF_MEMBER_##kind(MEMBER_AT_1(name))
#define MEMBER_AT_1(name) {offsetof(mfu_step, name), sizeof(((mfu_step *)0)->name)},
static const struct {
    size_t off, size;
} members[] = {MFU_STEP_FIELDS(MEMBER_AT)};

/* A double as the test rows hold it: absent (two NaN payloads), -0, or a number; in column c
 * only from row `from` on (rows before absent), so that a column is first made part-way. */
static double value(size_t i, size_t from)
{
    if (i < from)
        return NAN;
    uint64_t r = next() % 16;
    if (r < 3)
        return NAN;
    if (r == 3) {
        uint64_t bits = 0x7ff80000deadbeefull; /* a NaN with a payload: kept as given */
        double v;
        memcpy(&v, &bits, sizeof v);
        return v;
    }
    if (r == 4)
        return -0.0;
    return (double)(next() % 100000) / 8.0;
}

/* Row i of a test run whose columns start at the rows in from[] (of 7 groups), step number
 * step; a non-negative value everywhere so that every row enters a run unchanged. */
static mfu_step row_of(size_t i, int64_t step, const size_t *from)
{
    mfu_step s;
    mfu_step_init(&s);
    s.step = step;
    for (int c = 0; c < MFU_COL_COUNT_; c++)
        *mfu__step_field(&s, (mfu_column)c) = value(i, from[c % 7]);
    if (!isnan(s.step_time_s))
        s.step_time_s = fmod(fabs(s.step_time_s), 100.0);
    if (i >= from[1]) {
        s.tokens_per_s_scope = (mfu_scope)(next() % 3);
        s.mfu_scope = (mfu_scope)(next() % 3);
        s.flags = (uint32_t)(next() % 8 == 0 ? MFU_STEP_SKIPPED | MFU_STEP_LOSS_NAN : 0);
    }
    if (i >= from[2]) {
        s.rank = (int32_t)(next() % 5) - 1;
        s.recompute = (int32_t)(next() % 4) - 1;
        s.dtype = next() % 5 == 0 ? 200 : (int32_t)(next() % 4) - 1; /* 200: kept as -1 */
    }
    return s;
}

/* rows[0..n) as columns: every member its own packed array (or, where every row holds the
 * same value and `constant`, the one value with stride 0), into buf. */
static void as_cols(const mfu_step *rows, size_t n, bool constant, unsigned char *buf,
                    mfu__run_cols *cols)
{
    size_t k = 0;
    for (size_t m = 0; m < MFU__MEMBERS_; m++) {
        size_t off = members[m].off, sz = members[m].size;
        bool same = constant;
        for (size_t i = 1; i < n && same; i++)
            same = memcmp((const char *)&rows[i] + off, (const char *)&rows[0] + off, sz) == 0;
        k += 1; /* every array at an odd address: the load reads any alignment */
        cols->at[m] = buf + k;
        cols->stride[m] = same ? 0 : sz;
        for (size_t i = 0; i < (same ? 1 : n); i++, k += sz)
            memcpy(buf + k, (const char *)&rows[i] + off, sz);
    }
}

/* The same rows, bit for bit (NaN payloads too), the same columns made, the same counters. */
static void assert_same_run(const mfu_run *a, const mfu_run *b)
{
    assert_int_equal(mfu_run_count(a), mfu_run_count(b));
    for (int c = 0; c < MFU_COL_COUNT_; c++)
        assert_int_equal(mfu_run_column(a, (mfu_column)c) == NULL,
                         mfu_run_column(b, (mfu_column)c) == NULL);
    for (size_t i = 0; i < mfu_run_count(a); i++) {
        mfu_step x, y;
        assert_true(mfu_run_get(a, i, &x) && mfu_run_get(b, i, &y));
        if (!mfu__step_equal(&x, &y))
            fail_msg("row %zu differs", i);
        for (size_t m = 0; m < MFU__MEMBERS_; m++) /* the bits too (NaN payloads, -0) */
            if (memcmp((const char *)&x + members[m].off, (const char *)&y + members[m].off,
                       members[m].size) != 0)
                fail_msg("row %zu member %zu differs", i, m);
    }
    mfu_run_counts ca = mfu_run_get_counts(a), cb = mfu_run_get_counts(b);
    assert_memory_equal(&ca, &cb, sizeof ca);
}

static unsigned char *buf_for(size_t n)
{
    unsigned char *buf = malloc(MFU__MEMBERS_ * (n + 1) * 16 + 64);
    assert_non_null(buf);
    return buf;
}

/* Runs of random columns loaded whole, onto an empty run and onto one that holds rows (with a
 * merged repeat), at various sizes: each the run the appends make. */
static void load_equals_appends(void **state)
{
    (void)state;
    const size_t sizes[] = {1, 2, 255, 256, 257, 5000, 40000};
    for (int round = 0; round < 28; round++) {
        size_t n = sizes[round % 7];
        size_t from[7];
        for (int k = 0; k < 7; k++)
            from[k] = k == 0 ? 0 : (size_t)(next() % (n + n / 2 + 1)); /* some never fill */
        size_t before = round % 2 ? 100 : 0;
        mfu_run *slow = mfu_run_new(), *fast = mfu_run_new();
        assert_true(slow && fast);
        size_t none[7] = {SIZE_MAX, SIZE_MAX, 0, SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX};
        for (size_t i = 0; i < before; i++) { /* rows before: only tokens and ranks */
            mfu_step s = row_of(i, (int64_t)i + 1, none);
            s.tokens = 100;
            if (i == 50) { /* another rank's copy of step 50: merges into row 49 */
                s.step = 50;
                s.rank = 3;
            }
            assert_int_equal(mfu_run_append(slow, &s, NULL, NULL), MFU_OK);
            assert_int_equal(mfu_run_append(fast, &s, NULL, NULL), MFU_OK);
        }
        mfu_step *rows = malloc(n * sizeof *rows);
        assert_non_null(rows);
        for (size_t i = 0; i < n; i++) /* numbers that rise by 1 to 3 */
            rows[i] = row_of(i, i ? rows[i - 1].step + 1 + (int64_t)(next() % 3) : 1000, from);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(mfu_run_append(slow, &rows[i], NULL, NULL), MFU_OK);
        unsigned char *buf = buf_for(n);
        mfu__run_cols cols;
        as_cols(rows, n, round % 4 < 2, buf, &cols);
        bool taken = false;
        assert_int_equal(mfu__run_load(fast, &cols, n, &taken, NULL), MFU_OK);
        assert_true(taken);
        assert_same_run(slow, fast);
        /* and the run goes on growing as before */
        mfu_step more = row_of(n, rows[n - 1].step + 1, from);
        assert_int_equal(mfu_run_append(slow, &more, NULL, NULL), MFU_OK);
        assert_int_equal(mfu_run_append(fast, &more, NULL, NULL), MFU_OK);
        assert_same_run(slow, fast);
        free(buf);
        free(rows);
        mfu_run_free(slow);
        mfu_run_free(fast);
    }
}

/* Rows that are not a stored run's as it kept them: refused whole (taken false), the run as it
 * was; appended one by one they would merge, be refused or change. */
static void load_refuses(void **state)
{
    (void)state;
    const size_t n = 300;
    size_t from[7] = {0, 0, 0, 0, 0, 0, 0};
    mfu_step *rows = malloc(n * sizeof *rows);
    unsigned char *buf = buf_for(n);
    assert_non_null(rows);
    for (int k = 0; k < 11; k++) {
        mfu_run *run = mfu_run_new(), *ref = mfu_run_new();
        assert_true(run && ref);
        for (size_t i = 0; i < 10; i++) {
            mfu_step s = row_of(i, (int64_t)i + 1, from);
            assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
            assert_int_equal(mfu_run_append(ref, &s, NULL, NULL), MFU_OK);
        }
        for (size_t i = 0; i < n; i++) {
            rows[i] = row_of(i, 100 + (int64_t)i, from);
        }
        mfu_step *r = &rows[n / 2];
        switch (k) {
        case 0: r->step = r[-1].step; break;         /* a repeat: it would merge */
        case 1: r->step = r[-1].step - 1; break;     /* goes back: a restart */
        case 2: rows[0].step = 10; break;            /* not above the run's last row */
        case 3: r->lr = INFINITY; break;             /* made absent by an append */
        case 4: r->loss = -INFINITY; break;          /* absent, and loss_nan set */
        case 5: r->tokens = -1; break;               /* a negative count: refused */
        case 6: r->step_time_s = 8 * 86400.0; break; /* over 7 days: refused */
        case 7: r->step_time_s = INFINITY; break;    /* refused */
        case 8: r->step = (int64_t)2e18; break;      /* beyond 10^18 */
        case 9: assert_int_equal(mfu_run_set_max_steps(run, 10 + n - 1, NULL), MFU_OK); break;
        case 10: rows[0].step = -1; break; /* on an empty run */
        }
        mfu__run_cols cols;
        as_cols(rows, n, true, buf, &cols);
        bool taken = true;
        if (k == 10) {
            mfu_run_free(run);
            mfu_run_free(ref);
            run = mfu_run_new();
            ref = mfu_run_new();
        }
        assert_int_equal(mfu__run_load(run, &cols, n, &taken, NULL), MFU_OK);
        assert_false(taken);
        assert_same_run(ref, run);
        mfu_run_free(run);
        mfu_run_free(ref);
    }
    /* NULL arguments */
    mfu__run_cols cols;
    memset(&cols, 0, sizeof cols);
    bool taken = true;
    assert_int_equal(mfu__run_load(NULL, &cols, 1, &taken, NULL), MFU_E_INVALID);
    assert_false(taken);
    free(buf);
    free(rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(load_equals_appends),
        cmocka_unit_test(load_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
