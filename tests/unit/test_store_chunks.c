/*
 * test_store_chunks.c - the rows of a run kept again as compressed column chunks (schema
 * version 4, src/store/chunks.c): a run read through its chunks is the run read through its
 * rows, bit for bit, after a put, appends that complete a chunk part-way, appends whose rows
 * merge on the way back, a rewrite from the middle, a damaged chunk, in a store of version 3
 * that has no chunks; and a deleted run takes its chunks with it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "run/step.h"
#include "store/internal.h"
#include "store_test.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double odd_double(void)
{
    static const double odd[] = {-0.0, INFINITY, 1e-310, 1.7976931348623157e308, 0.1 + 0.2};
    uint64_t r = next() % 16;
    if (r < 4)
        return NAN;
    if (r < 6)
        return odd[next() % 5];
    return (double)(next() % 100000) / 7.0;
}

/* Row i of the test run: steady columns, a few with odd values, per-rank copies (every 50th
 * row repeats the step of the row before on another rank: it merges on the way back when
 * appended as steps, and stays when put as a run). */
static mfu_step row_of(size_t i)
{
    mfu_step s;
    mfu_step_init(&s);
    s.step = (int64_t)(i + 1);
    s.rank = 0;
    s.step_time_s = 1.5 + (double)(i % 13) * 0.01;
    s.tokens = 262144;
    s.loss = 2 + 1 / (1 + (double)i);
    s.lr = odd_double();
    s.grad_norm = odd_double();
    s.tokens_per_s = i % 3 ? odd_double() : NAN;
    s.tokens_per_s_scope = i % 3 ? MFU_SCOPE_GLOBAL : MFU_SCOPE_UNKNOWN;
    s.recompute = (int32_t)(next() % 3) - 1;
    s.flags = i % 97 == 0 ? MFU_STEP_SKIPPED : 0;
    return s;
}

static void sql_exec(const char *db, const char *sql)
{
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg ? msg : "?");
    sqlite3_close(h);
}

static void assert_same_run(const mfu_run *a, const mfu_run *b)
{
    assert_int_equal(mfu_run_count(a), mfu_run_count(b));
    for (size_t i = 0; i < mfu_run_count(a); i++) {
        mfu_step x, y;
        assert_true(mfu_run_get(a, i, &x) && mfu_run_get(b, i, &y));
        if (!mfu__step_equal(&x, &y))
            fail_msg("row %zu differs", i);
    }
    assert_int_equal(mfu_run_rank_obs_count(a), mfu_run_rank_obs_count(b));
    for (size_t i = 0; i < mfu_run_rank_obs_count(a); i++) {
        mfu_rank_obs x, y;
        assert_true(mfu_run_rank_obs_get(a, i, &x) && mfu_run_rank_obs_get(b, i, &y));
        if (!mfu__rank_obs_equal(&x, &y))
            fail_msg("observation %zu differs", i);
    }
    for (int c = 0; c < MFU_COL_COUNT_; c++) /* the same columns made */
        assert_int_equal(mfu_run_column(a, (mfu_column)c) == NULL,
                         mfu_run_column(b, (mfu_column)c) == NULL);
    assert_memory_equal(mfu_run_meta_get(a), mfu_run_meta_get(b), sizeof(mfu_run_meta));
}

/* The run called name read through its chunks, and read again with its chunks gone: both the
 * same; returns the first (the chunks are deleted afterwards). */
static mfu_run *read_both_ways(mfu_store **s, const char *db, const char *name)
{
    mfu_run *fast = get_run(*s, name);
    mfu_store_close(*s);
    sql_exec(db, "DELETE FROM step_chunks");
    *s = open_store(db, 0);
    mfu_run *slow = get_run(*s, name);
    assert_same_run(fast, slow);
    mfu_run_free(slow);
    return fast;
}

static void chunks_read_as_rows(void **state)
{
    (void)state;
    char db[64];
    temp_store_path(db, sizeof db);
    const size_t C = MFU__CHUNK_ROWS, n = 3 * C + 123;
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    for (size_t i = 0; i < n; i++) {
        mfu_step s = row_of(i);
        if (i % 50 == 49) { /* another rank's line of the step before: merges in the run */
            s.step = (int64_t)i;
            s.rank = 1;
        }
        assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    }
    mfu_store *s = open_store(db, MFU_STORE_CREATE);
    int64_t id = 0;
    assert_int_equal(mfu_store_put_run(s, "r", run, &id, NULL), MFU_OK);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM step_chunks"),
                     (int64_t)(mfu_run_count(run) / C));
    mfu_run *back = read_both_ways(&s, db, "r");
    assert_same_run(run, back); /* and both are the run that was put */
    mfu_run_free(back);

    /* appended steps, 1000 at a time: each chunk is made by the append that completes it, from
     * the stored rows before it and the new ones; repeated steps merge on the way back */
    mfu_store_close(s);
    remove_store_files(db);
    s = open_store(db, MFU_STORE_CREATE);
    mfu_run_meta meta;
    memset(&meta, 0, sizeof meta);
    meta.model_params = meta.tokens_per_step = meta.reported_peak_flops_per_s = NAN;
    assert_int_equal(mfu_store_create_run(s, "a", &meta, &id, NULL), MFU_OK);
    mfu_step *steps = malloc(1000 * sizeof *steps);
    assert_non_null(steps);
    size_t total = 0;
    while (total < 2 * C + 500) {
        for (size_t j = 0; j < 1000; j++) {
            steps[j] = row_of(total + j);
            if ((total + j) % 50 == 49) {
                steps[j].step = (int64_t)(total + j);
                steps[j].rank = 1;
            }
        }
        assert_int_equal(mfu_store_append_steps(s, id, steps, 1000, NULL), MFU_OK);
        total += 1000;
    }
    assert_int_equal(sql_int(db, "SELECT count(*) FROM step_chunks"), (int64_t)(total / C));
    mfu_run *fast = get_run(s, "a");
    assert_true(mfu_run_count(fast) < total); /* the repeats merged */
    mfu_run_free(fast);
    fast = read_both_ways(&s, db, "a");
    mfu_run_free(fast);

    /* the run put again shorter, from the middle of a chunk: the chunks past it go */
    mfu_run *shorter = mfu_run_new();
    for (size_t i = 0; i < C + 10; i++) {
        mfu_step r = row_of(i);
        assert_int_equal(mfu_run_append(shorter, &r, NULL, NULL), MFU_OK);
    }
    assert_int_equal(mfu_store_put_run(s, "r", run, NULL, NULL), MFU_OK);
    assert_int_equal(mfu_store_put_run(s, "r", shorter, NULL, NULL), MFU_OK);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM step_chunks WHERE run_id = (SELECT id "
                                 "FROM runs WHERE name = 'r')"),
                     1);
    back = get_run(s, "r");
    assert_same_run(shorter, back);
    mfu_run_free(back);

    /* a damaged chunk: read from the rows instead */
    assert_int_equal(mfu_store_put_run(s, "r", run, NULL, NULL), MFU_OK);
    mfu_store_close(s);
    sql_exec(db, "UPDATE step_chunks SET data = x'28b52ffd00' WHERE chunk = 1");
    s = open_store(db, 0);
    back = get_run(s, "r");
    assert_same_run(run, back);
    mfu_run_free(back);

    /* a version-3 store (no chunks table) opens, migrates to 4 and reads its rows */
    mfu_store_close(s);
    sql_exec(db, "DROP TABLE step_chunks; ALTER TABLE steps DROP COLUMN energy_j;"
                 "ALTER TABLE steps DROP COLUMN tensor_active;"
                 "DELETE FROM mfu_schema WHERE version > 3; PRAGMA user_version=3;");
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_store_open(db, MFU_STORE_READONLY, &s, &e), MFU_E_UNSUPPORTED);
    s = open_store(db, 0);
    assert_int_equal(sql_int(db, "PRAGMA user_version"), 4);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM step_chunks"), 0);
    back = get_run(s, "r");
    assert_same_run(run, back);
    mfu_run_free(back);

    /* deleting a run deletes its chunks (ON DELETE CASCADE) */
    assert_int_equal(mfu_store_find_run(s, "r", &id, NULL), MFU_OK);
    assert_int_equal(mfu_store_put_run(s, "r", run, NULL, NULL), MFU_OK);
    assert_true(sql_int(db, "SELECT count(*) FROM step_chunks") > 0);
    assert_int_equal(mfu_store_delete_run(s, id, NULL), MFU_OK);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM step_chunks"), 0);

    free(steps);
    mfu_run_free(shorter);
    mfu_run_free(run);
    mfu_store_close(s);
    remove_store_files(db);
}

/* Row i of a run with every kind of field: each double of its own in its own stretch of rows
 * (some start in a later chunk, some stop after the first), scopes, flags, ranks, recompute
 * and dtype codes (200: kept as unknown), NaN.
 */
static mfu_step every_kind(size_t i)
{
    const size_t C = MFU__CHUNK_ROWS;
    mfu_step s;
    mfu_step_init(&s);
    s.step = (int64_t)(2 * i + 1);
    for (int c = 0; c < MFU_COL_COUNT_; c++) {
        size_t from = (size_t)c * C / 7, to = c % 3 == 0 ? from + C : SIZE_MAX;
        if (i >= from && i < to && next() % 8)
            *mfu__step_field(&s, (mfu_column)c) = (double)(next() % 1000) / 16.0;
    }
    s.tokens_per_s_scope = i % 5 ? MFU_SCOPE_DEVICE : MFU_SCOPE_UNKNOWN;
    s.flops_per_s_scope = i > C ? MFU_SCOPE_GLOBAL : MFU_SCOPE_UNKNOWN;
    s.samples_per_s_scope = i % 3 == 1 ? MFU_SCOPE_GLOBAL : MFU_SCOPE_DEVICE;
    s.flags = i % 7 == 0 ? MFU_STEP_SKIPPED : i % 11 == 0 ? MFU_STEP_TOKENS_DERIVED : 0;
    s.rank = i < C / 2 ? -1 : (int32_t)(i % 4);
    s.recompute = i > 2 * C ? (int32_t)(i % 3) : -1;
    s.dtype = i % 13 == 0 ? 200 : (int32_t)(i % 4) - 1;
    return s;
}

/* A stored run of every field kind read back through its chunks (columns loaded whole) is the
 * run that was put and the run its rows give one by one; so is one whose first chunk holds a
 * repeat that merges on the way back (that chunk is read row by row, the ones after it whole,
 * their rows and per-rank observations one row down). */
static void chunks_every_kind(void **state)
{
    (void)state;
    char db[64];
    temp_store_path(db, sizeof db);
    const size_t C = MFU__CHUNK_ROWS, n = 4 * C + 77;
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    for (size_t i = 0; i < n; i++) {
        mfu_step s = every_kind(i);
        assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
        if (i % 500 == 3) { /* another rank's copy: merges, its figures kept aside */
            s.rank = s.rank >= 0 ? s.rank + 1 : 9;
            s.step_time_s = 2.5;
            s.lr = 1e-4;
            assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
        }
    }
    assert_true(mfu_run_rank_obs_count(run) > 10);
    assert_true(mfu_run_get_counts(run).merged > 10);
    mfu_store *s = open_store(db, MFU_STORE_CREATE);
    int64_t id = 0;
    assert_int_equal(mfu_store_put_run(s, "k", run, &id, NULL), MFU_OK);
    mfu_run *back = get_run(s, "k");
    /* what was put, but for the merge counter: the stored rows are rows, no appends merged */
    assert_int_equal(mfu_run_get_counts(back).merged, 0);
    assert_same_run(run, back);
    mfu_run_free(back);
    mfu_store_close(s);

    /* the first chunk with a repeat: row 9 (step 19) gets row 8's number (17) in the rows and in
     * the chunk; on the way back it merges into row 8 */
    mfu_step *rows = malloc(C * sizeof *rows);
    assert_non_null(rows);
    for (size_t i = 0; i < C; i++)
        assert_true(mfu_run_get(run, i, &rows[i]));
    rows[9].step = rows[8].step;
    void *blob = NULL;
    size_t len = 0;
    assert_int_equal(mfu__chunk_encode(rows, C, &blob, &len, NULL), MFU_OK);
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(
        sqlite3_prepare_v2(h, "UPDATE step_chunks SET data=? WHERE chunk=0", -1, &st, NULL),
        SQLITE_OK);
    sqlite3_bind_blob(st, 1, blob, (int)len, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(h);
    free(blob);
    sql_exec(db, "UPDATE steps SET step = 17 WHERE row_no = 9");
    s = open_store(db, 0);
    back = read_both_ways(&s, db, "k");
    assert_int_equal(mfu_run_count(back), mfu_run_count(run) - 1);
    assert_int_equal(mfu_run_get_counts(back).merged, 1);
    mfu_rank_obs o, p;
    size_t last = mfu_run_rank_obs_count(run) - 1;
    assert_true(mfu_run_rank_obs_get(run, last, &o) && mfu_run_rank_obs_get(back, last, &p));
    assert_true(o.row > 3 * C);
    assert_int_equal(p.row, o.row - 1); /* a row of a chunk read whole, one row down */
    assert_int_equal(p.step, o.step);
    mfu_run_free(back);

    free(rows);
    mfu_run_free(run);
    mfu_store_close(s);
    remove_store_files(db);
}

/* The blob format: a chunk decodes to the rows it was made of, as stored (NaN one NaN), and
 * nothing else decodes. */
static void blob_round_trip(void **state)
{
    (void)state;
    size_t n = 300;
    mfu_step *rows = malloc(n * sizeof *rows), *back = malloc(n * sizeof *back);
    assert_true(rows && back);
    for (size_t i = 0; i < n; i++)
        rows[i] = row_of(i);
    void *blob = NULL;
    size_t len = 0;
    assert_int_equal(mfu__chunk_encode(rows, n, &blob, &len, NULL), MFU_OK);
    assert_true(mfu__chunk_decode(blob, len, n, back));
    for (size_t i = 0; i < n; i++)
        assert_true(mfu__step_equal(&rows[i], &back[i]));
    assert_false(mfu__chunk_decode(blob, len, n - 1, back)); /* another row count */
    assert_false(mfu__chunk_decode(blob, len - 1, n, back)); /* cut */
    /* a blob of another field layout (written before a step field was added): no chunk */
    unsigned long long raw_n = ZSTD_getFrameContentSize(blob, len);
    assert_true(raw_n > 12 && raw_n < (1ull << 30));
    unsigned char *raw = malloc((size_t)raw_n);
    assert_non_null(raw);
    assert_int_equal(ZSTD_decompress(raw, (size_t)raw_n, blob, len), (size_t)raw_n);
    raw[8] ^= 8; /* the layout word: another member byte count */
    size_t bound = ZSTD_compressBound((size_t)raw_n);
    void *other = malloc(bound);
    assert_non_null(other);
    size_t olen = ZSTD_compress(other, bound, raw, (size_t)raw_n, 1);
    assert_false(ZSTD_isError(olen));
    assert_false(mfu__chunk_decode(other, olen, n, back));
    raw[8] ^= 8; /* and the same bytes with the layout put back decode */
    olen = ZSTD_compress(other, bound, raw, (size_t)raw_n, 1);
    assert_true(mfu__chunk_decode(other, olen, n, back));
    free(other);
    free(raw);
    free(blob);
    free(rows);
    free(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(blob_round_trip),
        cmocka_unit_test(chunks_read_as_rows),
        cmocka_unit_test(chunks_every_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
