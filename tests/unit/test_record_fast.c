/*
 * test_record_fast.c - the monitor's record fast path against the general code it stands in
 * for (issue 11): the row written from the step in hand (mfu__jsonl_row) against the canonical
 * writer of the same run (mfu_run_write_jsonl_rows) on varied steps; the row the append gives
 * back (mfu__run_append_row) against mfu_run_get, with the runs equal to mfu_run_append's, and
 * the plain-plausible shortcut against mfu__step_plausible; the printer's one-product path and
 * its integers against the %.15g .. %.17g + strtod loop; a monitor's file, with merges and
 * refused steps, against the canonical writer row by row; mfu_monitor_step_call against
 * mfu_monitor_step.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ingest/canonical.h"
#include "ingest/fast.h"
#include "mfu/mfu.h"
#include "run/step.h"

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}

static unsigned below(rng *r, unsigned n)
{
    return (unsigned)(next(r) % n);
}

static double unit(rng *r)
{
    return (double)(next(r) >> 11) / 9007199254740992.0;
}

/* A double of one of the shapes logs carry. */
static double value(rng *r)
{
    switch (below(r, 9)) {
    case 0: return (double)below(r, 1000000);
    case 1: return (double)(float)(unit(r) * 12.0);
    case 2: return unit(r) * pow(10.0, (double)below(r, 40) - 20.0);
    case 3: return (double)below(r, 100000) / 1000.0;
    case 4: return ldexp(1.0, (int)below(r, 80) - 40);
    case 5: return nextafter(pow(10.0, (double)below(r, 30) - 15.0), 0);
    case 6: return (double)(1000000000000000ull + next(r) % 9000000000000000ull);
    case 7: return -0.0;
    default: return 0.25 + (double)below(r, 7) * 1e-3;
    }
}

/* A step with any field present or absent, scopes, codes in and out of range, flag bits. */
static void random_step(rng *r, mfu_step *t, int64_t step)
{
    mfu_step_init(t);
    t->step = step;
#define RAND_DOUBLE(name)                                                                          \
    if (below(r, 2))                                                                               \
        t->name = value(r);
#define RAND_1(kind, name) MFU__STEP_IF_DOUBLE_##kind(RAND_DOUBLE(name))
#define RAND(kind, name, NAME, arg, map, since, unit, what, help) RAND_1(kind, name)
    MFU_STEP_FIELDS(RAND)
    t->tokens_per_s_scope = (mfu_scope)below(r, 4); /* 3: no name: written as "unknown" */
    t->flops_per_s_scope = (mfu_scope)below(r, 3);
    t->mfu_scope = (mfu_scope)below(r, 3);
    t->samples_per_s_scope = (mfu_scope)below(r, 3);
    t->flags = (uint32_t)below(r, 16);
    t->rank = below(r, 3) ? (int32_t)below(r, 8) : -1;
    t->recompute = below(r, 3) ? -1 : (int32_t)below(r, 4) * (below(r, 8) ? 1 : 100);
    t->dtype = below(r, 3) ? -1 : (int32_t)below(r, 12) * (below(r, 8) ? 1 : 50);
    if (below(r, 4) == 0)
        t->loss = NAN;
    if (below(r, 8) == 0)
        t->tokens = -NAN; /* a NaN of the other sign: the run keeps no column of it */
}

/* The canonical writer's text of row i of run (without its per-rank observations: the runs
 * here have none in the rows compared). */
static size_t generic_row(const mfu_run *run, size_t i, char *out, size_t cap)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(mfu_run_write_jsonl_rows(run, i, false, f, NULL), MFU_OK);
    long n = ftell(f);
    assert_true(n > 0 && (size_t)n < cap);
    rewind(f);
    assert_int_equal(fread(out, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return (size_t)n;
}

static void row_matches_canonical_writer(void **state)
{
    (void)state;
    rng r = {12345};
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    static char want[4096], got[MFU__JSONL_ROW_MAX + 64];
    int64_t step = 0;
    for (int i = 0; i < 4000; i++) {
        mfu_step t, row;
        random_step(&r, &t, step += 1 + below(&r, 3));
        if (i % 500 == 0) { /* every field present, at its longest */
#define ALL_DOUBLE(name) t.name = -1.2345678901234567e-300;
#define ALL_1(kind, name) MFU__STEP_IF_DOUBLE_##kind(ALL_DOUBLE(name))
#define ALL(kind, name, NAME, arg, map, since, unit, what, help) ALL_1(kind, name)
            MFU_STEP_FIELDS(ALL)
            t.tokens = t.step_time_s = 1.0000000000000002;
            t.tokens_per_s_scope = t.flops_per_s_scope = t.mfu_scope = t.samples_per_s_scope =
                MFU_SCOPE_DEVICE;
            t.flags = 0xffffffffu;
            t.rank = INT32_MAX;
            t.recompute = MFU_RECOMPUTE_SELECTIVE;
            t.dtype = 0;
        }
        size_t at = 0;
        bool merged = false;
        mfu_status st = mfu__run_append_row(run, &t, &row, &at, &merged, NULL);
        if (st != MFU_OK)
            continue; /* a negative count: refused, as the generic append refuses it */
        assert_false(merged);
        size_t n = mfu__jsonl_row(got, &row);
        assert_true(n <= MFU__JSONL_ROW_MAX);
        size_t m = generic_row(run, at, want, sizeof want);
        if (n != m || memcmp(got, want, n) != 0)
            fail_msg("row %zu:\nfast    %.*s\ngeneric %.*s", at, (int)n, got, (int)m, want);
    }
    assert_true(mfu_run_count(run) > 1000);
    mfu_run_free(run);
}

/* Two steps equal member by member (NaN equals NaN of the same bits: mfu_run_get's NAN). */
static bool same_step(const mfu_step *a, const mfu_step *b)
{
    if (!mfu__step_equal(a, b))
        return false;
#define SAME_BITS(name)                                                                            \
    if (memcmp(&a->name, &b->name, sizeof a->name) != 0)                                           \
        return false;
#define SAME_1(kind, name) MFU__STEP_IF_DOUBLE_##kind(SAME_BITS(name))
#define SAME(kind, name, NAME, arg, map, since, unit, what, help) SAME_1(kind, name)
    MFU_STEP_FIELDS(SAME)
    return true;
}

static void append_row_is_run_get(void **state)
{
    (void)state;
    rng r = {777};
    mfu_run *fast = mfu_run_new(), *ref = mfu_run_new();
    assert_non_null(fast);
    assert_non_null(ref);
    int64_t step = 0;
    long merges = 0, refused = 0;
    for (int i = 0; i < 20000; i++) {
        mfu_step t, row, got, checked;
        unsigned k = below(&r, 20);
        int64_t s = k == 0 && step > 0   ? step - (int64_t)below(&r, 3) /* a repeat */
                    : k == 1 && step > 8 ? step - 5                     /* goes back */
                                         : ++step;
        random_step(&r, &t, s);
        if (k == 2)
            t.loss = INFINITY; /* dropped, flagged: the full check */
        if (k == 3)
            t.tokens_per_s = -INFINITY;
        if (k == 4)
            t.step_time_s = MFU__RUN_MAX_STEP_TIME_S * (below(&r, 2) ? 2 : 1);
        if (k == 5)
            t.step = below(&r, 2) ? -1 : MFU__RUN_MAX_STEP_NUMBER + below(&r, 2);
        size_t at = 0;
        bool merged = false, merged_ref = false;
        mfu_status st = mfu__run_append_row(fast, &t, &row, &at, &merged, NULL);
        mfu_status sr = mfu_run_append(ref, &t, &merged_ref, NULL);
        assert_int_equal(st, sr);
        /* the full check's verdict is the append's */
        assert_int_equal(mfu__step_plausible(&t, &checked, NULL),
                         st == MFU_OK || st == MFU_E_NOMEM ? MFU_OK : st);
        if (st != MFU_OK) {
            refused++;
            continue;
        }
        assert_int_equal(merged, merged_ref);
        merges += merged;
        assert_true(mfu_run_get(fast, at, &got));
        if (!same_step(&row, &got))
            fail_msg("record %d: the row given back is not the run's row %zu", i, at);
        if (!merged)
            assert_int_equal(at, mfu_run_count(fast) - 1);
        else
            assert_true(mfu_run_steps(fast)[at] == t.step);
    }
    assert_true(merges > 500 && refused > 500);
    /* the same runs */
    assert_int_equal(mfu_run_count(fast), mfu_run_count(ref));
    for (size_t i = 0; i < mfu_run_count(ref); i++) {
        mfu_step a, b;
        mfu_run_get(fast, i, &a);
        mfu_run_get(ref, i, &b);
        assert_true(same_step(&a, &b));
    }
    mfu_run_counts ca = mfu_run_get_counts(fast), cb = mfu_run_get_counts(ref);
    assert_int_equal(ca.merged, cb.merged);
    assert_int_equal(ca.rank_obs, cb.rank_obs);
    mfu_step t;
    mfu_step_init(&t);
    bool merged;
    size_t at;
    assert_int_equal(mfu__run_append_row(fast, &t, NULL, &at, &merged, NULL), MFU_E_INVALID);
    mfu_run_free(fast);
    mfu_run_free(ref);
}

static void shortest_ref(char *buf, size_t n, double v)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static void check_shortest(double v)
{
    char got[40], want[40];
    size_t n = mfu__fmt_shortest(got, v);
    if (n == 0)
        return; /* declined: the snprintf loop writes it */
    shortest_ref(want, sizeof want, v);
    if (strcmp(got, want) != 0 || n != strlen(want))
        fail_msg("%a: fast '%s', snprintf '%s'", v, got, want);
}

/* The one-product path's cases: powers of two (half the gap below them), their neighbours,
 * integers (below and above 10^15), step times and losses as a loop records them, float32
 * values (exact ties at 17 digits), decimals of every length; and the integer printer. */
static void printer_matches_snprintf(void **state)
{
    (void)state;
    for (int e = -330; e <= 330; e++) {
        double p = ldexp(1.0, e);
        check_shortest(p);
        check_shortest(nextafter(p, 0));
        check_shortest(nextafter(p, INFINITY));
        check_shortest(3 * p);
    }
    rng r = {99};
    for (int i = 0; i < 300000; i++) {
        check_shortest((double)(next(&r) % 1000000000000000ull));
        check_shortest((double)(next(&r) % 100000000000000000ull));
        check_shortest(0.25 + (double)(i % 7) * 1e-3);
        check_shortest(2.0 + 1.0 / (1.0 + (double)i * 1e-3));
        check_shortest((double)(float)(unit(&r) * 12.0));
        check_shortest(value(&r));
        char text[48];
        unsigned digits = 1 + below(&r, 17);
        uint64_t m = next(&r) % 100000000000000000ull;
        for (unsigned d = digits; d < 17; d++)
            m /= 10;
        snprintf(text, sizeof text, "%llue%d", (unsigned long long)m, (int)below(&r, 80) - 40);
        check_shortest(strtod(text, NULL));
    }
    /* the common shapes must take a fast path (a broken one that declines all would pass the
     * comparisons above) */
    char b[40];
    assert_int_equal(mfu__fmt_shortest(b, 524288.0), 6);
    assert_string_equal(b, "524288");
    assert_true(mfu__fmt_shortest(b, 0.251) > 0);
    assert_string_equal(b, "0.251");
    assert_true(mfu__fmt_shortest(b, 2.0 + 1.0 / 1.001) > 0);
    assert_true(mfu__fmt_shortest(b, 0.25) > 0);
    assert_string_equal(b, "0.25");
    static const uint64_t ints[] = {0,
                                    1,
                                    9,
                                    10,
                                    99999999,
                                    100000000,
                                    123456789012345678ull,
                                    999999999999999999ull,
                                    1000000000000000000ull,
                                    UINT64_MAX};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        char want[32];
        snprintf(want, sizeof want, "%llu", (unsigned long long)ints[i]);
        assert_int_equal(mfu__fmt_u64(b, ints[i]), strlen(want));
        assert_string_equal(b, want);
    }
    for (int i = 0; i < 100000; i++) {
        uint64_t v = next(&r) >> below(&r, 64);
        char want[32];
        snprintf(want, sizeof want, "%llu", (unsigned long long)v);
        assert_int_equal(mfu__fmt_u64(b, v), strlen(want));
        assert_string_equal(b, want);
    }
}

static void tmp_path(char *path)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    remove(path); /* the monitor creates it (and writes its header) */
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    char *p = malloc((size_t)len + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return p;
}

/* A monitor's file against what the canonical writer gave, row by row, at each record (a
 * merged row is not written again); figures of mfu_monitor_step_call equal to
 * mfu_monitor_step's. */
static void monitor_file_is_canonical(void **state)
{
    (void)state;
    char path[] = "/tmp/mfu-test-record-XXXXXX", path2[] = "/tmp/mfu-test-record-XXXXXX";
    tmp_path(path);
    tmp_path(path2);
    mfu_monitor_config c;
    memset(&c, 0, sizeof c);
    c.model = "llama3-8b";
    c.seq = 8192;
    c.device = "h100-sxm";
    c.devices = 8;
    c.jsonl_path = path;
    mfu_monitor *m = NULL, *m2 = NULL;
    assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
    c.jsonl_path = path2;
    assert_int_equal(mfu_monitor_new(&c, &m2, NULL), MFU_OK);
    FILE *ref = tmpfile();
    assert_non_null(ref);
    assert_int_equal(mfu_run_write_jsonl_rows(mfu_monitor_run(m), 0, true, ref, NULL), MFU_OK);
    rng r = {2024};
    int64_t step = 0;
    mfu_monitor_call call;
    memset(&call, 0, sizeof call);
    call.monitor = m2;
    for (int i = 0; i < 5000; i++) {
        mfu_step t;
        unsigned k = below(&r, 10);
        random_step(&r, &t, k == 0 && step > 0 ? step - (int64_t)below(&r, 2) : ++step);
        t.tokens = 1 + fabs(value(&r));
        t.step_time_s = fmod(fabs(value(&r)), 1000.0) + 1e-3;
        if (k == 1)
            t.tokens_per_s = -1; /* refused */
        size_t before = mfu_run_count(mfu_monitor_run(m));
        mfu_monitor_sample a, b;
        mfu_error e1, e2;
        mfu_status sa = mfu_monitor_step(m, &t, &a, &e1);
        call.step = t;
        mfu_status sb = mfu_monitor_step_call(&call);
        b = call.sample;
        e2 = call.error;
        assert_int_equal(sa, sb);
        if (sa != MFU_OK) {
            assert_string_equal(e1.message, e2.message);
            continue;
        }
        assert_memory_equal(&a, &b, sizeof a);
        size_t after = mfu_run_count(mfu_monitor_run(m));
        if (after > before)
            assert_int_equal(
                mfu_run_write_jsonl_rows(mfu_monitor_run(m), after - 1, false, ref, NULL), MFU_OK);
        if (i % 1000 == 0)
            assert_int_equal(mfu_monitor_flush(m, NULL), MFU_OK);
    }
    mfu_monitor_free(m);
    mfu_monitor_free(m2);
    size_t n, n2;
    char *got = slurp(path, &n), *got2 = slurp(path2, &n2);
    long rn = ftell(ref);
    assert_true(rn > 0);
    char *want = malloc((size_t)rn);
    assert_non_null(want);
    rewind(ref);
    assert_int_equal(fread(want, 1, (size_t)rn, ref), (size_t)rn);
    fclose(ref);
    assert_int_equal(n, (size_t)rn);
    assert_memory_equal(got, want, n);
    assert_int_equal(n2, n);
    assert_memory_equal(got2, want, n);
    free(got);
    free(got2);
    free(want);
    remove(path);
    remove(path2);
    /* no call, no monitor */
    assert_int_equal(mfu_monitor_step_call(NULL), MFU_E_INVALID);
    memset(&call, 0, sizeof call);
    assert_int_equal(mfu_monitor_step_call(&call), MFU_E_INVALID);
    assert_int_equal(call.error.code, MFU_E_INVALID);
    assert_int_equal(mfu_struct_size("mfu_monitor_call"), sizeof(mfu_monitor_call));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(row_matches_canonical_writer),
        cmocka_unit_test(append_row_is_run_get),
        cmocka_unit_test(printer_matches_snprintf),
        cmocka_unit_test(monitor_file_is_canonical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
