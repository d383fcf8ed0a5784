/*
 * test_run_lazy.c - a run's columns are made at the first row that holds a value (run.c): a
 * column no row filled reads as NULL from mfu_run_column and as absent from mfu_run_get; a
 * column that starts late holds the absent value in every row before; growth, reservation,
 * the 2 MiB layout and merges all keep every row as it was appended; the member arrays
 * (mfu__run_member, what the figures read) hold the same rows.
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

#include "ingest_test.h"
#include "mfu/device.h"
#include "mfu/model.h"
#include "run/step.h"
#include "synth.h"
#include "util/pages.h"

/* The seeded generator of the analysis tests (synth.h). */
static syn_rng rng_state;
static uint64_t rnd(void)
{
    return syn_next(&rng_state);
}

/* The double fields of a step, in column order (as mfu_run_column numbers them): the c-th
 * double of the struct's field table (mfu_step_field_at), not run.c's own offsets. */
static double *field(mfu_step *s, int c)
{
    for (size_t i = 0, k = 0; i < mfu_step_field_count(); i++) {
        const mfu_step_field_info *f = mfu_step_field_at(i);
        if (f->kind == MFU_STEP_KIND_DOUBLE && (int)k++ == c)
            return (double *)(void *)((char *)s + f->offset);
    }
    fail_msg("no double column %d", c);
    return NULL;
}

static void assert_same_step(const mfu_step *x, const mfu_step *y, size_t row)
{
    if (x->step != y->step || x->flags != y->flags || x->rank != y->rank ||
        x->tokens_per_s_scope != y->tokens_per_s_scope ||
        x->flops_per_s_scope != y->flops_per_s_scope || x->mfu_scope != y->mfu_scope ||
        x->samples_per_s_scope != y->samples_per_s_scope || x->recompute != y->recompute ||
        x->dtype != y->dtype)
        fail_msg("row %zu: step/flags/rank/scope/code differ", row);
    mfu_step a = *x, b = *y;
    for (int c = 0; c < MFU_COL_COUNT_; c++)
        if (memcmp(field(&a, c), field(&b, c), sizeof(double)) != 0)
            fail_msg("row %zu column %d: %.17g vs %.17g", row, c, *field(&a, c), *field(&b, c));
}

/* Nothing appended to a field: no column, and every row reads it as absent. */
static void absent_columns_are_null(void **state)
{
    (void)state;
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    assert_null(mfu_run_column(run, MFU_COL_LOSS)); /* empty run */
    for (int64_t i = 1; i <= 1000; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = i;
        s.loss = 2.0 + 1.0 / (double)i;
        assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    }
    assert_non_null(mfu_run_column(run, MFU_COL_LOSS));
    for (int c = 0; c < MFU_COL_COUNT_; c++)
        if (c != MFU_COL_LOSS && mfu_run_column(run, (mfu_column)c))
            fail_msg("column %d has an array but no row printed it", c);
    mfu_step got = ingest_row(run, 999), init;
    mfu_step_init(&init);
    init.step = 1000;
    init.loss = 2.0 + 1.0 / 1000.0;
    assert_same_step(&got, &init, 999);
    mfu_run_free(run);
}

/* A column that starts at row k: NaN (or the absent code) in rows 0..k-1, the values after;
 * starts before and after the first growth, after a reservation and past the 2 MiB layout
 * (196608 rows of doubles), or in ordinary pages but the step numbers (plain:
 * mfu__run_plain_pages, the store's runs). */
static void late_columns(bool plain)
{
    const size_t n = 250000;
    const size_t start[] = {0, 1, 255, 256, 257, 5000, 196607, 196608, 249999};
    const int ns = (int)(sizeof start / sizeof start[0]);
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    if (plain)
        mfu__run_plain_pages(run);
    mfu_error e;
    for (size_t i = 0; i < n; i++) {
        if (i == 3000)
            assert_int_equal(mfu_run_reserve(run, 100000, &e), MFU_OK); /* too few: grows */
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i;
        for (int k = 0; k < ns; k++)
            if (i >= start[k])
                *field(&s, k * 2) = (double)i + 0.5 * k;
        if (i >= 700)
            s.rank = (int32_t)(i % 7);
        if (i >= 123456)
            s.flags = MFU_STEP_SKIPPED;
        if (i >= 40000) {
            s.recompute = MFU_RECOMPUTE_SELECTIVE;
            s.dtype = MFU_DTYPE_BF16;
            s.mfu_scope = MFU_SCOPE_DEVICE;
        }
        assert_int_equal(mfu_run_append(run, &s, NULL, &e), MFU_OK);
    }
    assert_int_equal(mfu_run_count(run), n);
    for (int k = 0; k < ns; k++) {
        const double *col = mfu_run_column(run, (mfu_column)(k * 2));
        assert_non_null(col);
        for (size_t i = 0; i < n; i++) {
            double want = i >= start[k] ? (double)i + 0.5 * k : NAN;
            if (memcmp(&col[i], &want, sizeof want) != 0)
                fail_msg("column %d (from row %zu) row %zu: %.17g, want %.17g", k * 2, start[k], i,
                         col[i], want);
        }
    }
    for (int c = 1; c < MFU_COL_COUNT_; c += 2)
        assert_null(mfu_run_column(run, (mfu_column)c));
    for (size_t i = 0; i < n; i += 997) {
        mfu_step got = ingest_row(run, i);
        assert_int_equal(got.rank, i >= 700 ? (int32_t)(i % 7) : -1);
        assert_int_equal(got.flags, i >= 123456 ? MFU_STEP_SKIPPED : 0);
        assert_int_equal(got.recompute, i >= 40000 ? MFU_RECOMPUTE_SELECTIVE : -1);
        assert_int_equal(got.dtype, i >= 40000 ? MFU_DTYPE_BF16 : -1);
        assert_int_equal(got.mfu_scope, i >= 40000 ? MFU_SCOPE_DEVICE : MFU_SCOPE_UNKNOWN);
        assert_int_equal(got.tokens_per_s_scope, MFU_SCOPE_UNKNOWN);
    }
    mfu_run_free(run);
}

static void late_columns_hold_absent_before(void **state)
{
    (void)state;
    late_columns(false);
    late_columns(true);
}

/* A long run's columns are reserved for its row limit at once from 8 MiB on (run.c grow_one,
 * util/pages.h): on Linux they do not move as the run grows past that reservation; a limit
 * raised past the reservation moves them once, rows intact; a taken column is a mapping of
 * its own. */
static void reserved_columns_hold_rows(void **state)
{
    (void)state;
    const size_t lim0 = 1100000, n = 1500000;
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    mfu_error e;
    assert_int_equal(mfu_run_set_max_steps(run, lim0, &e), MFU_OK);
    const double *at = NULL;
    for (size_t i = 0; i < n; i++) {
        if (i == lim0) {
            mfu_step s;
            mfu_step_init(&s);
            s.step = (int64_t)i;
            assert_int_equal(mfu_run_append(run, &s, NULL, &e), MFU_E_LIMIT);
            assert_int_equal(mfu_run_set_max_steps(run, n, &e), MFU_OK);
        }
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i * 3;
        s.loss = 1.0 / (double)(i + 1);
        if (i >= 1000)
            s.step_time_s = 0.5 + 1e-6 * (double)i; /* (a step time is at most 7 days) */
        assert_int_equal(mfu_run_append(run, &s, NULL, &e), MFU_OK);
        if (i == 600000) /* grown to 2^20 rows (8 MiB a column): reserved for the limit */
            at = mfu_run_column(run, MFU_COL_LOSS);
#if defined(__linux__)
        if (i == lim0 - 1) /* grown from 2^20 to the limit: the same block */
            assert_ptr_equal(mfu_run_column(run, MFU_COL_LOSS), at);
#endif
    }
    (void)at;
    assert_int_equal(mfu_run_count(run), n);
    const double *loss = mfu_run_column(run, MFU_COL_LOSS);
    const double *t = mfu_run_column(run, MFU_COL_STEP_TIME_S);
    const int64_t *steps = mfu_run_steps(run);
    for (size_t i = 0; i < n; i++) {
        double want_t = i >= 1000 ? 0.5 + 1e-6 * (double)i : NAN;
        if (steps[i] != (int64_t)i * 3 || loss[i] != 1.0 / (double)(i + 1) ||
            memcmp(&t[i], &want_t, sizeof want_t) != 0)
            fail_msg("row %zu: step %lld loss %.17g time %.17g", i, (long long)steps[i], loss[i],
                     t[i]);
    }
    size_t len = 0;
    double *taken = mfu__run_take_column(run, MFU_COL_LOSS, &len);
    assert_non_null(taken);
#if defined(__linux__)
    assert_true(len >= n * sizeof(double)); /* a mapping, not malloc's */
#endif
    assert_true(taken[n - 1] == 1.0 / (double)n);
    mfu__pages_free(taken, len);
    int64_t *st = mfu__run_take_steps(run, &len);
    assert_non_null(st);
    assert_int_equal(st[n - 1], (int64_t)(n - 1) * 3);
    mfu__pages_free(st, len);
    mfu_run_free(run);
}

#if defined(__linux__)
/* Resident memory of this process, bytes (VmRSS). */
static size_t rss_now(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    assert_non_null(f);
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %zu kB", &kb) == 1)
            break;
    fclose(f);
    return kb * 1024;
}
#endif

/* The run of constant_columns: tokens, lr and memory one value in every row unless vary (then
 * each row its own), grad_norm one value for 300000 rows and then not, loss varying, seq_len
 * from row 5. */
static mfu_run *constants_run(size_t n, bool vary)
{
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    for (size_t i = 0; i < n; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i + 1;
        double e = vary ? 1e-9 * (double)i : 0;
        s.tokens = 1048576 + (vary ? (double)i : 0);
        s.lr = 3e-4 * (1 + e);
        s.memory_bytes = 7.12e10 * (1 + e);
        s.grad_norm = i < 300000 ? 1.0 : 1.0 + 1e-6 * (double)(i % 1000);
        s.loss = 2.0 + 1e-7 * (double)i;
        if (i >= 5)
            s.seq_len = 8192;
        assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    }
    return run;
}

/* A column that holds one value from its first row is, once long, a mapping of that value
 * (run.c, mfu__const_map): every row reads back as appended, a value that differs later (here
 * at row 300000, after the mapping was made) is kept with the rows after it, a late column and
 * a varying one are ordinary; and (Linux) the three constant columns of 2M rows cost far less
 * than the 48 MB they hold when they vary. */
static void constant_columns(void **state)
{
    (void)state;
    const size_t n = 2000000;
#if defined(__linux__)
    size_t r0 = rss_now();
    mfu_run *v = constants_run(n, true);
    size_t varying = rss_now() - r0;
    mfu_run_free(v);
    r0 = rss_now();
#endif
    mfu_run *run = constants_run(n, false);
#if defined(__linux__)
    size_t constant = rss_now() - r0;
    if (!(constant + ((size_t)32 << 20) < varying))
        fail_msg("resident growth %zu MB with constant columns, %zu MB with varying ones",
                 constant >> 20, varying >> 20);
#endif
    const double *tok = mfu_run_column(run, MFU_COL_TOKENS), *lr = mfu_run_column(run, MFU_COL_LR);
    const double *mem = mfu_run_column(run, MFU_COL_MEMORY_BYTES);
    const double *gn = mfu_run_column(run, MFU_COL_GRAD_NORM),
                 *loss = mfu_run_column(run, MFU_COL_LOSS);
    const double *seq = mfu_run_column(run, MFU_COL_SEQ_LEN);
    for (size_t i = 0; i < n; i++) {
        double g = i < 300000 ? 1.0 : 1.0 + 1e-6 * (double)(i % 1000);
        if (tok[i] != 1048576 || lr[i] != 3e-4 || mem[i] != 7.12e10 || gn[i] != g ||
            loss[i] != 2.0 + 1e-7 * (double)i || (i >= 5 ? seq[i] != 8192 : !isnan(seq[i])))
            fail_msg("row %zu: tokens %.17g lr %.17g memory %.17g grad_norm %.17g (want %.17g)", i,
                     tok[i], lr[i], mem[i], gn[i], g);
    }
    mfu_step r;
    assert_true(mfu_run_get(run, n - 1, &r));
    assert_true(r.tokens == 1048576 && r.lr == 3e-4);
    /* a repeat merges into a constant column's row without writing it (the row has the value) */
    mfu_step s;
    mfu_step_init(&s);
    s.step = (int64_t)n;
    s.tokens = 5; /* the row has tokens: the first copy wins */
    bool merged = false;
    assert_int_equal(mfu_run_append(run, &s, &merged, NULL), MFU_OK);
    assert_true(merged);
    assert_true(mfu_run_column(run, MFU_COL_TOKENS)[n - 1] == 1048576);
    /* taken: a mapping of its own, freed by its length */
    size_t len = 0;
    double *t = mfu__run_take_column(run, MFU_COL_TOKENS, &len);
    assert_non_null(t);
#if defined(__linux__)
    assert_true(len >= n * sizeof(double));
#endif
    assert_true(t[n - 1] == 1048576 && t[0] == 1048576);
    mfu__pages_free(t, len);
    mfu_run_free(run);
}

/* Random steps with random fields present (most fields rare, a few common): every row reads
 * back as it was appended, whatever the order the columns were made in. */
/* Row i as the member arrays of run give it (mfu__run_member: the types run/step.h names;
 * NULL: the absent value in every row). */
static mfu_step from_members(const mfu_run *run, size_t i)
{
    mfu_step s;
    mfu_step_init(&s);
    int m = 0;
    for (size_t f = 0; f < mfu_step_field_count(); f++) {
        const mfu_step_field_info *fi = mfu_step_field_at(f);
        if (fi->kind == MFU_STEP_KIND_BIT || fi->kind == MFU_STEP_KIND_NANBIT)
            continue;
        const void *a = mfu__run_member(run, m++);
        char *at = (char *)&s + fi->offset;
        if (!a)
            continue;
        switch (fi->kind) {
        case MFU_STEP_KIND_STEP: memcpy(at, (const int64_t *)a + i, sizeof(int64_t)); break;
        case MFU_STEP_KIND_DOUBLE: memcpy(at, (const double *)a + i, sizeof(double)); break;
        case MFU_STEP_KIND_SCOPE: {
            mfu_scope v = (mfu_scope)((const uint8_t *)a)[i];
            memcpy(at, &v, sizeof v);
            break;
        }
        case MFU_STEP_KIND_FLAGS: memcpy(at, (const uint32_t *)a + i, sizeof(uint32_t)); break;
        case MFU_STEP_KIND_RANK: memcpy(at, (const int32_t *)a + i, sizeof(int32_t)); break;
        case MFU_STEP_KIND_CODE: {
            int32_t v = ((const int8_t *)a)[i];
            memcpy(at, &v, sizeof v);
            break;
        }
        default: fail_msg("field %s: kind %d", fi->name, (int)fi->kind);
        }
    }
    assert_int_equal(m, MFU__MEMBERS_);
    assert_null(mfu__run_member(run, MFU__MEMBERS_));
    assert_null(mfu__run_member(run, -1));
    return s;
}

static void random_rows_read_back(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        rng_state.s = seed * 0x9E3779B97F4A7C15ULL;
        size_t n = 1 + (size_t)(rnd() % 20000);
        mfu_step *want = malloc(n * sizeof *want);
        assert_non_null(want);
        unsigned rare[MFU_COL_COUNT_];
        for (int c = 0; c < MFU_COL_COUNT_; c++)
            rare[c] = (unsigned)(rnd() % 5 == 0 ? 1 : 1 + rnd() % 5000);
        mfu_run *run = mfu_run_new();
        assert_non_null(run);
        for (size_t i = 0; i < n; i++) {
            mfu_step s;
            mfu_step_init(&s);
            s.step = (int64_t)i * 2 + 1;
            for (int c = 0; c < MFU_COL_COUNT_; c++)
                if (rnd() % rare[c] == 0)
                    *field(&s, c) = (double)(rnd() % 100000) / 7.0;
            if (rnd() % 300 == 0)
                s.rank = (int32_t)(rnd() % 64);
            if (rnd() % 500 == 0)
                s.flags = MFU_STEP_LOSS_NAN;
            if (rnd() % 400 == 0)
                s.tokens_per_s_scope = MFU_SCOPE_GLOBAL;
            if (rnd() % 900 == 0)
                s.dtype = (int32_t)(rnd() % 4);
            want[i] = s;
            assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
        }
        assert_int_equal(mfu_run_count(run), n);
        for (size_t i = 0; i < n; i++) {
            mfu_step got = ingest_row(run, i);
            assert_same_step(&got, &want[i], i);
            /* the member arrays a pass over every row reads (the figures) hold the same */
            mfu_step mem = from_members(run, i);
            assert_same_step(&mem, &want[i], i);
        }
        mfu_run_free(run);
        free(want);
    }
}

/* A repeat of a step that brings a field no row had yet makes the column: that row gets the
 * value, every other row stays absent; a known rank arriving by a merge fills the row's rank. */
static void merge_makes_a_column(void **state)
{
    (void)state;
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    for (int64_t i = 1; i <= 600; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = i;
        s.step_time_s = 1.0;
        assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    }
    mfu_step rep;
    mfu_step_init(&rep);
    rep.step = 600;
    rep.clock_mhz = 1410;
    rep.rank = 3;
    rep.flags = MFU_STEP_SKIPPED;
    rep.step_time_s = 9.0; /* the row's own value wins */
    bool merged = false;
    assert_int_equal(mfu_run_append(run, &rep, &merged, NULL), MFU_OK);
    assert_true(merged);
    assert_int_equal(mfu_run_count(run), 600);
    const double *clock = mfu_run_column(run, MFU_COL_CLOCK_MHZ);
    assert_non_null(clock);
    for (size_t i = 0; i < 599; i++)
        assert_true(isnan(clock[i]));
    assert_near(clock[599], 1410, 0);
    mfu_step got = ingest_row(run, 599);
    assert_near(got.step_time_s, 1.0, 0);
    assert_int_equal(got.rank, 3);
    assert_int_equal(got.flags, MFU_STEP_SKIPPED);
    got = ingest_row(run, 598);
    assert_int_equal(got.rank, -1);
    assert_int_equal(got.flags, 0);
    /* the next row appends after the column was made by a merge */
    mfu_step next;
    mfu_step_init(&next);
    next.step = 601;
    assert_int_equal(mfu_run_append(run, &next, NULL, NULL), MFU_OK);
    assert_true(isnan(mfu_run_column(run, MFU_COL_CLOCK_MHZ)[600]));
    assert_int_equal(ingest_row(run, 600).rank, -1);
    mfu_run_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(absent_columns_are_null),
        cmocka_unit_test(late_columns_hold_absent_before),
        cmocka_unit_test(reserved_columns_hold_rows),
        cmocka_unit_test(constant_columns),
        cmocka_unit_test(random_rows_read_back),
        cmocka_unit_test(merge_makes_a_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
