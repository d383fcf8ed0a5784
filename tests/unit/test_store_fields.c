/*
 * test_store_fields.c - what schema version 3 of the run store added: the per-step
 * configuration and telemetry of mfu_step (seq_len .. optimizer_s, recompute, dtype) and the
 * run's per-rank observations. Each is stored and read back bit for bit; a version-2 store made
 * here with raw SQL is migrated in place; a grown log ingested again keeps its observations
 * those of a fresh read (no duplicates, none past the rows).
 *
 * Every test works in its own mkdtemp directory, removed at the end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "mfu/mfu.h"
#include "run/step.h"
#include "store/internal.h"
#include "util/util.h"
#include "store_test.h"

/* ---- helpers ---------------------------------------------------------------------------- */

typedef struct fx {
    char dir[256];
    char db[320];
    char log[320];
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    snprintf(f->dir, sizeof f->dir, "%s/mfu-store-fields-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->db, sizeof f->db, "%s/runs.db", f->dir);
    snprintf(f->log, sizeof f->log, "%s/train.jsonl", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    DIR *d = opendir(f->dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char p[600];
            snprintf(p, sizeof p, "%s/%s", f->dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(f->dir);
    free(f);
    return 0;
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

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

/* Every field of two steps, compared here (not with the library's own mfu__step_equal, so
 * that a field it forgot still fails): doubles bit for bit, NaN equal to NaN. */
static void assert_step_same(const mfu_step *x, const mfu_step *y, size_t row)
{
    const struct {
        const char *name;
        size_t off;
    } d[] = {
#define D(f) {#f, offsetof(mfu_step, f)}
        D(time_s),      D(step_time_s),   D(tokens),        D(samples),        D(loss),
        D(lr),          D(grad_norm),     D(memory_bytes),  D(tokens_per_s),   D(flops_per_s),
        D(mfu),         D(samples_per_s), D(seq_len),       D(devices),        D(useful_tokens),
        D(clock_mhz),   D(power_w),       D(power_limit_w), D(data_loading_s), D(comm_s),
        D(optimizer_s),
#undef D
    };
    for (size_t k = 0; k < MFU__ARRAY_LEN(d); k++) {
        double a, b;
        memcpy(&a, (const char *)x + d[k].off, sizeof a);
        memcpy(&b, (const char *)y + d[k].off, sizeof b);
        if (!same_bits(a, b))
            fail_msg("row %zu: %s %.17g (sign %d) != %.17g (sign %d)", row, d[k].name, a,
                     signbit(a) != 0, b, signbit(b) != 0);
    }
    if (x->step != y->step || x->rank != y->rank || x->flags != y->flags ||
        x->recompute != y->recompute || x->dtype != y->dtype ||
        x->tokens_per_s_scope != y->tokens_per_s_scope ||
        x->flops_per_s_scope != y->flops_per_s_scope || x->mfu_scope != y->mfu_scope ||
        x->samples_per_s_scope != y->samples_per_s_scope)
        fail_msg("row %zu: step %lld/%lld rank %d/%d flags %u/%u recompute %d/%d dtype %d/%d "
                 "or a scope differs",
                 row, (long long)x->step, (long long)y->step, x->rank, y->rank, x->flags, y->flags,
                 x->recompute, y->recompute, x->dtype, y->dtype);
}

static void assert_obs_same(const mfu_rank_obs *a, const mfu_rank_obs *b, size_t k)
{
    if (a->row != b->row || a->step != b->step || a->rank != b->rank ||
        !same_bits(a->step_time_s, b->step_time_s) || !same_bits(a->tokens_per_s, b->tokens_per_s))
        fail_msg("observation %zu: row %zu/%zu step %lld/%lld rank %d/%d time %.17g/%.17g "
                 "tps %.17g/%.17g",
                 k, a->row, b->row, (long long)a->step, (long long)b->step, a->rank, b->rank,
                 a->step_time_s, b->step_time_s, a->tokens_per_s, b->tokens_per_s);
}

/* Rows and observations of a and b are the same, in order. */
static void assert_runs_same(const mfu_run *a, const mfu_run *b)
{
    assert_int_equal(mfu_run_count(a), mfu_run_count(b));
    for (size_t i = 0; i < mfu_run_count(a); i++) {
        mfu_step x, y;
        assert_true(mfu_run_get(a, i, &x));
        assert_true(mfu_run_get(b, i, &y));
        assert_step_same(&x, &y, i);
    }
    assert_int_equal(mfu_run_rank_obs_count(a), mfu_run_rank_obs_count(b));
    for (size_t k = 0; k < mfu_run_rank_obs_count(a); k++) {
        mfu_rank_obs p, q;
        assert_true(mfu_run_rank_obs_get(a, k, &p));
        assert_true(mfu_run_rank_obs_get(b, k, &q));
        assert_obs_same(&p, &q, k);
    }
}

/* ---- every field, stored and read back --------------------------------------------------- */

/* n rows; each new field is set on some rows (odd values: -0.0, subnormal, 2^53 + 1, ...) and
 * absent on the others; power_limit_w only on rows >= n/2 (its column is made late). Per-rank
 * observations of rows in an order that is not the rows' (a lagging rank). */
static mfu_run *fields_run(size_t n)
{
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    mfu_error e;
    memset(&e, 0, sizeof e);
    const double odd[] = {-0.0, 4.9e-324, 9007199254740993.0, 0.1 + 0.2, DBL_MAX, 1e-300, 1980.0};
    const size_t no = MFU__ARRAY_LEN(odd);
    for (size_t i = 0; i < n; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = (int64_t)i + 1;
        s.rank = (int32_t)(i % 3) - 1;
        s.step_time_s = 1.0 + (double)i / 1024.0;
        s.tokens = 1048576;
        s.seq_len = i % 2 ? 4096 : NAN;
        s.devices = i % 3 ? NAN : odd[i % no];
        s.useful_tokens = i % 4 == 1 ? 0.7 * 1048576 : NAN;
        s.clock_mhz = i % 5 ? odd[(i + 1) % no] : NAN;
        s.power_w = i % 2 ? NAN : 650.0 + (double)i / 3.0;
        s.power_limit_w = i >= n / 2 ? odd[(i + 2) % no] : NAN;
        s.data_loading_s = i % 7 ? 0.1 * (double)(i % 5) : NAN; /* 0.0 on some rows */
        s.comm_s = i % 6 == 5 ? -0.0 : (i % 2 ? 0.25 : NAN);
        s.optimizer_s = i % 3 == 2 ? odd[(i + 3) % no] : NAN;
        s.recompute = i % 4 == 3 ? -1 : (int32_t)(i % 3);
        s.dtype = i % 5 == 4 ? -1 : (int32_t)(i % 7);
        bool merged = true;
        assert_int_equal(mfu_run_append(run, &s, &merged, &e), MFU_OK);
        assert_false(merged);
    }
    /* observations: first one of a far later row (rank 4 of the row n - 5), then for row i,
     * ranks 1..3 in lag order (row i of rank 3 after row i+2 of rank 1); some with an absent
     * step time or tokens/s, one with -0.0 */
    mfu_rank_obs far = {n - 5, 0, 4, 2.0, 1e5};
    assert_int_equal(mfu_run_rank_obs_append(run, &far, &e), MFU_OK);
    for (size_t t = 0; t < n + 3; t++)
        for (int32_t r = 1; r <= 3; r++) {
            if (t < (size_t)r || t - (size_t)r >= n)
                continue;
            size_t row = t - (size_t)r;
            mfu_rank_obs o = {row, 0, r, 1.0 + 0.01 * r + (double)row / 1024.0,
                              row % 4 == 0 ? NAN : 2.5e5 / (double)r};
            if (row % 9 == 4)
                o.step_time_s = NAN;
            if (row == 7 && r == 2)
                o.tokens_per_s = -0.0;
            assert_int_equal(mfu_run_rank_obs_append(run, &o, &e), MFU_OK);
        }
    snprintf(mfu_run_meta_mut(run)->format, sizeof mfu_run_meta_mut(run)->format, "mfu");
    return run;
}

/* After every commit (a second connection's view): the stored observations are a prefix of the
 * run's numbering, and each names a row the run holds. */
static void check_obs_prefix(void *ctx, size_t done, size_t total)
{
    (void)total;
    const char *db = ctx;
    assert_int_equal(sql_int(db, "SELECT coalesce(max(seq) + 1, 0) - count(*) FROM rank_obs"), 0);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM rank_obs o JOIN runs r ON r.id = o.run_id "
                                 "WHERE o.row_no >= r.nrows"),
                     0);
    int64_t nobs = sql_int(db, "SELECT count(*) FROM rank_obs");
    /* the far observation (row 45) holds the others back until rows 42..48 are in */
    if (done <= 42)
        assert_int_equal(nobs, 0);
    else
        assert_true(nobs > 0);
}

static void fields_round_trip(void **state)
{
    fx *f = *state;
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_store_set_batch_rows(s, 7, &e), MFU_OK); /* observations cross batches */
    mfu_run *run = fields_run(50);
    assert_int_equal(mfu_run_rank_obs_count(run), 151);
    mfu_store_set_progress(s, check_obs_prefix, f->db);
    int64_t id = 0;
    assert_int_equal(mfu_store_put_run(s, "fields", run, &id, &e), MFU_OK);
    mfu_run *back = get_run(s, "fields");
    assert_runs_same(run, back);
    /* what SQL sees: absent is NULL, -0.0 a real with its sign, codes -1 for unknown */
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM steps WHERE power_w IS NULL"), 25);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM steps WHERE power_limit_w IS NULL"), 25);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM steps WHERE recompute = -1"), 12);
    /* comm_s is -0.0 on 8 rows, 0.25 on 17: every one a real (no integer 0) */
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM steps WHERE typeof(comm_s) = 'real'"),
                     25);
    mfu_step r5;
    assert_true(mfu_run_get(back, 5, &r5));
    assert_true(r5.comm_s == 0.0 && signbit(r5.comm_s));
    mfu_store_set_progress(s, NULL, NULL);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM rank_obs"), 151);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM rank_obs WHERE row_no >= 50"), 0);
    assert_int_equal(
        sql_int(f->db, "SELECT count(*) FROM rank_obs o JOIN steps s ON s.run_id = o.run_id AND "
                       "s.row_no = o.row_no WHERE s.step = o.step"),
        151);
    mfu_run_free(back);

    /* a column no row filled comes back as no column (NULL), one filled late as a column */
    mfu_run *sparse = mfu_run_new();
    assert_non_null(sparse);
    for (int i = 0; i < 4; i++) {
        mfu_step st;
        mfu_step_init(&st);
        st.step = i + 1;
        st.step_time_s = 1.0;
        st.clock_mhz = i == 3 ? 1410.0 : NAN;
        assert_int_equal(mfu_run_append(sparse, &st, NULL, &e), MFU_OK);
    }
    assert_int_equal(mfu_store_put_run(s, "sparse", sparse, NULL, &e), MFU_OK);
    back = get_run(s, "sparse");
    assert_runs_same(sparse, back);
    assert_null(mfu_run_column(back, MFU_COL_POWER_W));
    const double *clk = mfu_run_column(back, MFU_COL_CLOCK_MHZ);
    assert_non_null(clk);
    assert_true(isnan(clk[0]) && clk[3] == 1410.0);
    assert_int_equal(mfu_run_rank_obs_count(back), 0);
    mfu_run_free(back);

    /* putting a run without observations over one with them leaves none */
    assert_int_equal(mfu_store_put_run(s, "fields", sparse, NULL, &e), MFU_OK);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM rank_obs"), 0);
    mfu_run_free(sparse);

    /* rows appended as an array keep the new fields too */
    int64_t aid = 0;
    assert_int_equal(mfu_store_create_run(s, "appended", NULL, &aid, &e), MFU_OK);
    mfu_step rows[50];
    for (size_t i = 0; i < 50; i++)
        assert_true(mfu_run_get(run, i, &rows[i]));
    assert_int_equal(mfu_store_append_steps(s, aid, rows, 20, &e), MFU_OK);
    assert_int_equal(mfu_store_append_steps(s, aid, rows + 20, 30, &e), MFU_OK);
    back = get_run(s, "appended");
    assert_int_equal(mfu_run_count(back), 50);
    for (size_t i = 0; i < 50; i++) {
        mfu_step y;
        assert_true(mfu_run_get(back, i, &y));
        assert_step_same(&rows[i], &y, i);
    }
    mfu_run_free(back);
    mfu_run_free(run);
    mfu_store_close(s);
}

/* The store's step equality (resume and unchanged detection) sees every new field. */
static void step_equality_covers_new_fields(void **state)
{
    (void)state;
    mfu_step a;
    mfu_step_init(&a);
    a.step = 3;
    double *fields[] = {&a.seq_len,        &a.devices, &a.useful_tokens,
                        &a.clock_mhz,      &a.power_w, &a.power_limit_w,
                        &a.data_loading_s, &a.comm_s,  &a.optimizer_s};
    for (size_t k = 0; k < MFU__ARRAY_LEN(fields); k++) {
        mfu_step b = a;
        assert_true(mfu__step_equal(&a, &b));
        double *fb = (double *)((char *)&b + ((char *)fields[k] - (char *)&a));
        *fb = 1.0; /* absent -> present */
        assert_false(mfu__step_equal(&a, &b));
        *fields[k] = 0.0;
        *fb = -0.0; /* the sign of zero counts */
        assert_false(mfu__step_equal(&a, &b));
        *fb = 0.0;
        assert_true(mfu__step_equal(&a, &b));
    }
    mfu_step b = a;
    b.recompute = 2;
    assert_false(mfu__step_equal(&a, &b));
    b = a;
    b.dtype = 0;
    assert_false(mfu__step_equal(&a, &b));
    mfu_rank_obs p = {4, 5, 1, 1.5, NAN}, q = p;
    assert_true(mfu__rank_obs_equal(&p, &q));
    q.tokens_per_s = 3;
    assert_false(mfu__rank_obs_equal(&p, &q));
    q = p;
    q.row = 5;
    assert_false(mfu__rank_obs_equal(&p, &q));
}

/* ---- a version-2 store ------------------------------------------------------------------- */

/* The tables of schema version 2 as mfu wrote them (migrations 1 and 2 of store.c, frozen
 * here), an API run "old" with one row, and a run "logged" with a source record. */
static const char v2_store_sql[] =
    "PRAGMA application_id=1835431216;"
    "CREATE TABLE mfu_schema(version INTEGER PRIMARY KEY, applied_s INTEGER NOT NULL);"
    "CREATE TABLE runs(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE,"
    " created_s INTEGER NOT NULL, updated_s INTEGER NOT NULL, format TEXT NOT NULL DEFAULT '',"
    " meta_json TEXT NOT NULL DEFAULT '{}', nrows INTEGER NOT NULL DEFAULT 0, first_step INTEGER,"
    " last_step INTEGER, complete INTEGER NOT NULL DEFAULT 1, gen INTEGER NOT NULL DEFAULT 0,"
    " src_path TEXT NOT NULL DEFAULT '', src_dev INTEGER NOT NULL DEFAULT 0,"
    " src_inode INTEGER NOT NULL DEFAULT 0, src_mtime_ns INTEGER NOT NULL DEFAULT 0,"
    " src_head_bytes INTEGER NOT NULL DEFAULT 0, src_head_hash INTEGER NOT NULL DEFAULT 0,"
    " src_tail_hash INTEGER NOT NULL DEFAULT 0, src_bytes INTEGER NOT NULL DEFAULT 0,"
    " src_lines INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE steps(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " row_no INTEGER NOT NULL, step INTEGER NOT NULL, rank INTEGER NOT NULL,"
    " flags INTEGER NOT NULL, time_s, step_time_s, tokens, samples, loss, lr, grad_norm,"
    " memory_bytes, tokens_per_s, tokens_per_s_scope INTEGER NOT NULL, flops_per_s,"
    " flops_per_s_scope INTEGER NOT NULL, mfu, mfu_scope INTEGER NOT NULL, samples_per_s,"
    " samples_per_s_scope INTEGER NOT NULL, PRIMARY KEY(run_id, row_no)) WITHOUT ROWID;"
    "CREATE TABLE tags(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY(run_id, key)) WITHOUT ROWID;"
    "CREATE TABLE findings(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL, kind TEXT NOT NULL, severity TEXT NOT NULL,"
    " first_step INTEGER NOT NULL, last_step INTEGER NOT NULL, evidence_json TEXT NOT NULL,"
    " next_step TEXT NOT NULL, PRIMARY KEY(run_id, seq)) WITHOUT ROWID;"
    "ALTER TABLE runs ADD COLUMN context_json TEXT NOT NULL DEFAULT '';"
    "INSERT INTO mfu_schema VALUES(1, 1700000000), (2, 1700000001);"
    "PRAGMA user_version=2;"
    "INSERT INTO runs(id, name, created_s, updated_s, format, meta_json, nrows, first_step,"
    " last_step, context_json) VALUES(1, 'old', 1700000000, 1700000000, 'megatron',"
    " '{\"format\":\"megatron\",\"seq_len\":4096}', 1, 10, 10, '[\"--model\",\"gpt2\"]');"
    "INSERT INTO steps VALUES(1, 0, 10, 3, 1, 1725381519.5, 14.25, 4194304, 1024, -0.0, 1e-4,"
    " 1.5, NULL, 3e5, 1, 7.5e14, 1, 0.42, 1, NULL, 0);"
    "INSERT INTO tags VALUES(1, 'arm', 'baseline');"
    "INSERT INTO runs(id, name, created_s, updated_s, src_path, src_mtime_ns, src_bytes)"
    " VALUES(2, 'logged', 1700000000, 1700000000, '/var/log/train.log', 1725381519000000000,"
    " 4096);";

static void v2_store_migrates(void **state)
{
    fx *f = *state;
    sql_exec(f->db, v2_store_sql);
    assert_int_equal(sql_int(f->db, "PRAGMA user_version"), 2);

    /* read-only: refused with the fix, and the file is left at version 2 */
    mfu_store *s = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_store_open(f->db, MFU_STORE_READONLY, &s, &e), MFU_E_UNSUPPORTED);
    assert_null(s);
    assert_non_null(strstr(e.message, "schema version 2"));
    assert_non_null(strstr(e.message, "open it once for writing"));
    assert_int_equal(sql_int(f->db, "SELECT max(version) FROM mfu_schema"), 2);

    /* opened for writing: migrated in place to 3, then 4 */
    s = open_store(f->db, 0);
    assert_int_equal(MFU_STORE_SCHEMA_VERSION, 4);
    assert_int_equal(sql_int(f->db, "SELECT max(version) FROM mfu_schema"), 4);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM mfu_schema"), 4);
    assert_int_equal(sql_int(f->db, "PRAGMA user_version"), 4);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM rank_obs"), 0);
    /* the old row: every old field as it was, every new field absent */
    mfu_run *run = get_run(s, "old");
    assert_int_equal(mfu_run_count(run), 1);
    mfu_step r;
    assert_true(mfu_run_get(run, 0, &r));
    mfu_step want;
    mfu_step_init(&want);
    want.step = 10;
    want.rank = 3;
    want.flags = MFU_STEP_SKIPPED;
    want.time_s = 1725381519.5;
    want.step_time_s = 14.25;
    want.tokens = 4194304;
    want.samples = 1024;
    want.loss = -0.0;
    want.lr = 1e-4;
    want.grad_norm = 1.5;
    want.tokens_per_s = 3e5;
    want.tokens_per_s_scope = MFU_SCOPE_DEVICE;
    want.flops_per_s = 7.5e14;
    want.flops_per_s_scope = MFU_SCOPE_DEVICE;
    want.mfu = 0.42;
    want.mfu_scope = MFU_SCOPE_DEVICE;
    assert_step_same(&want, &r, 0);
    assert_int_equal(r.recompute, -1);
    assert_int_equal(r.dtype, -1);
    assert_true(isnan(r.power_w) && isnan(r.seq_len) && isnan(r.optimizer_s));
    assert_null(mfu_run_column(run, MFU_COL_CLOCK_MHZ));
    assert_int_equal(mfu_run_rank_obs_count(run), 0);
    assert_int_equal(mfu_run_meta_get(run)->seq_len, 4096);
    mfu_run_free(run);
    int64_t id = 0;
    assert_int_equal(mfu_store_find_run(s, "old", &id, &e), MFU_OK);
    char *ctx = NULL, tag[16];
    assert_int_equal(mfu_store_get_context(s, id, &ctx, &e), MFU_OK);
    assert_string_equal(ctx, "[\"--model\",\"gpt2\"]");
    free(ctx);
    assert_int_equal(mfu_store_get_tag(s, id, "arm", tag, sizeof tag, &e), MFU_OK);
    assert_string_equal(tag, "baseline");
    /* a run read from a file forgets its mtime (its next ingest reads the file again); a run
     * without a source keeps its record */
    mfu_store_source src;
    assert_int_equal(mfu_store_find_run(s, "logged", &id, &e), MFU_OK);
    assert_int_equal(mfu_store_get_source(s, id, &src, &e), MFU_OK);
    assert_int_equal(src.mtime_ns, -1);
    assert_int_equal(src.bytes, 4096);
    assert_int_equal(sql_int(f->db, "SELECT src_mtime_ns FROM runs WHERE name = 'old'"), 0);

    /* the migrated store takes the new fields */
    mfu_run *full = fields_run(10);
    assert_int_equal(mfu_store_put_run(s, "old", full, NULL, &e), MFU_OK);
    run = get_run(s, "old");
    assert_runs_same(full, run);
    mfu_run_free(run);
    mfu_run_free(full);
    mfu_store_close(s);

    /* and reads back read-only now; opening it again migrates nothing */
    s = open_store(f->db, MFU_STORE_READONLY);
    mfu_store_close(s);
    s = open_store(f->db, 0);
    mfu_store_close(s);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM mfu_schema"), MFU_STORE_SCHEMA_VERSION);
}

/* ---- ingesting a grown log again --------------------------------------------------------- */

/* The first nlines lines (0 = all) of a canonical JSON-lines log of steps 1..total: a header,
 * then at each time t rank 0's line of step t followed by ranks 1..3's lines of steps t-1..t-3
 * (a lagging rank's copy of a step merges into that step's row and becomes a per-rank
 * observation of it; rank 3 is the slowest). Written whole each time, so that a longer nlines
 * is the shorter file grown. */
static void write_ranked_log(const char *path, int total, int nlines)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    int line = 1;
    fputs("{\"mfu_run\":1,\"format\":\"torchtitan\",\"seq_len\":4096,\"world_size\":4}\n", fp);
    for (int t = 1; t <= total + 3; t++) {
        if (t <= total && (nlines == 0 || line++ < nlines))
            fprintf(fp,
                    "{\"step\":%d,\"rank\":0,\"step_time_s\":%.6f,\"tokens\":16384,"
                    "\"power_w\":%.1f,\"clock_mhz\":1980,\"data_loading_s\":0.05}\n",
                    t, 1.0 + t / 4096.0, 600.0 + t % 7);
        for (int r = 1; r <= 3; r++) {
            int k = t - r;
            if (k >= 1 && k <= total && (nlines == 0 || line++ < nlines))
                fprintf(fp,
                        "{\"step\":%d,\"rank\":%d,\"step_time_s\":%.6f,\"tokens_per_s\":%.1f}\n", k,
                        r, 1.0 + 0.02 * r + k / 4096.0, 16384.0 / (1.0 + 0.02 * r));
        }
    }
    assert_int_equal(fclose(fp), 0);
}

static mfu_store_ingest_result ingest(mfu_store *s, const char *path)
{
    mfu_store_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.run_name = "train";
    mfu_store_ingest_result r;
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (mfu_store_ingest_path(s, path, &o, &r, &e) != MFU_OK)
        fail_msg("ingest %s: %s", path, e.message);
    return r;
}

/* The stored run is the fresh read of the log, observations included, and the observation
 * table has no duplicate and none past the run's rows. */
static void assert_stored_is_fresh(mfu_store *s, const char *db, const char *log)
{
    mfu_run *fresh = parse(log);
    mfu_run *back = get_run(s, "train");
    assert_runs_same(fresh, back);
    int64_t nobs = (int64_t)mfu_run_rank_obs_count(fresh);
    assert_true(nobs > 0);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM rank_obs"), nobs);
    assert_int_equal(sql_int(db, "SELECT count(DISTINCT row_no || '/' || rank) FROM rank_obs"),
                     nobs);
    assert_int_equal(sql_int(db, "SELECT max(seq) + 1 FROM rank_obs"), nobs);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM rank_obs o JOIN runs r ON r.id = o.run_id "
                                 "WHERE o.row_no >= r.nrows OR o.row_no < 0"),
                     0);
    mfu_run_free(fresh);
    mfu_run_free(back);
}

static void reingest_keeps_observations(void **state)
{
    fx *f = *state;
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_store_set_batch_rows(s, 16, &e), MFU_OK);
    /* cut after rank 0's step 121 and rank 1's step 120 (1 + 1 + 2 + 3 + 4 x 117 + 2 = 477
     * lines): 121 rows; rows 1..117 have all three observations, 118 two, 119 and 120 one */
    write_ranked_log(f->log, 200, 477);
    mfu_store_ingest_result r = ingest(s, f->log);
    assert_int_equal(r.action, MFU_STORE_CREATED);
    assert_int_equal(r.rows, 121);
    assert_stored_is_fresh(s, f->db, f->log);
    mfu_run *first = get_run(s, "train");
    assert_int_equal(mfu_run_rank_obs_count(first), 3 * 117 + 2 + 1 + 1);
    mfu_run_free(first);

    /* grown to 200 steps: resumed (only the overlap rewritten), observations of the rows
     * before the old end that arrived later are in, none twice */
    write_ranked_log(f->log, 200, 0);
    r = ingest(s, f->log);
    assert_int_equal(r.action, MFU_STORE_RESUMED);
    assert_int_equal(r.rows, 200);
    assert_int_equal(r.rows_written, 200 - (121 - MFU_STORE_RESUME_OVERLAP));
    assert_stored_is_fresh(s, f->db, f->log);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM rank_obs"), 3 * 200);

    /* unchanged: nothing written, still consistent */
    r = ingest(s, f->log);
    assert_int_equal(r.action, MFU_STORE_UNCHANGED);
    assert_stored_is_fresh(s, f->db, f->log);

    /* a stored observation before the resume point lost: the resume turns into a restart */
    sql_exec(f->db, "DELETE FROM rank_obs WHERE seq = 10");
    FILE *fp = fopen(f->log, "a");
    assert_non_null(fp);
    fputs("{\"step\":201,\"rank\":0,\"step_time_s\":1.05,\"tokens\":16384}\n", fp);
    assert_int_equal(fclose(fp), 0);
    r = ingest(s, f->log);
    assert_int_equal(r.action, MFU_STORE_RESTARTED);
    assert_non_null(strstr(r.reason, "per-rank observations"));
    assert_stored_is_fresh(s, f->db, f->log);

    /* truncated to 80 steps: restarted, no observation left past row 80 */
    write_ranked_log(f->log, 80, 0);
    r = ingest(s, f->log);
    assert_int_equal(r.action, MFU_STORE_RESTARTED);
    assert_stored_is_fresh(s, f->db, f->log);
    assert_int_equal(sql_int(f->db, "SELECT max(row_no) FROM rank_obs"), 79);
    mfu_store_close(s);
}

/* A run of a version-2 store that came from a log: its next ingest reads the file again and
 * stores the fields and observations the old rows lack. */
static void migrated_run_is_refreshed(void **state)
{
    fx *f = *state;
    write_ranked_log(f->log, 100, 0);
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_store_ingest_result r = ingest(s, f->log);
    assert_int_equal(r.action, MFU_STORE_CREATED);
    mfu_store_close(s);
    /* make it what version 2 would have stored: no new columns, no observations */
    sql_exec(f->db,
             "DROP TABLE step_chunks;"
             "ALTER TABLE steps DROP COLUMN energy_j;"
             "ALTER TABLE steps DROP COLUMN tensor_active;"
             "DROP TABLE rank_obs;"
             "ALTER TABLE steps DROP COLUMN seq_len; ALTER TABLE steps DROP COLUMN devices;"
             "ALTER TABLE steps DROP COLUMN useful_tokens;"
             "ALTER TABLE steps DROP COLUMN clock_mhz; ALTER TABLE steps DROP COLUMN power_w;"
             "ALTER TABLE steps DROP COLUMN power_limit_w;"
             "ALTER TABLE steps DROP COLUMN data_loading_s;"
             "ALTER TABLE steps DROP COLUMN comm_s; ALTER TABLE steps DROP COLUMN optimizer_s;"
             "ALTER TABLE steps DROP COLUMN recompute; ALTER TABLE steps DROP COLUMN dtype;"
             "DELETE FROM mfu_schema WHERE version > 2; PRAGMA user_version=2;");
    s = open_store(f->db, 0);
    mfu_run *old = get_run(s, "train");
    assert_null(mfu_run_column(old, MFU_COL_POWER_W));
    assert_int_equal(mfu_run_rank_obs_count(old), 0);
    mfu_run_free(old);
    r = ingest(s, f->log);
    assert_int_equal(r.action, MFU_STORE_RESTARTED);
    assert_stored_is_fresh(s, f->db, f->log);
    mfu_run *now = get_run(s, "train");
    assert_non_null(mfu_run_column(now, MFU_COL_POWER_W));
    mfu_run_free(now);
    assert_int_equal(ingest(s, f->log).action, MFU_STORE_UNCHANGED);
    mfu_store_close(s);
}

/* Rows that merge on the way back (appended as an array: two ranks of one step) take stored
 * observations with them to the row they merged into; observations of rows the store does
 * not hold are left out. */
static void observations_follow_merged_rows(void **state)
{
    fx *f = *state;
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_error e;
    memset(&e, 0, sizeof e);
    int64_t id = 0;
    assert_int_equal(mfu_store_create_run(s, "posted", NULL, &id, &e), MFU_OK);
    mfu_step rows[3];
    for (int i = 0; i < 3; i++) {
        mfu_step_init(&rows[i]);
        rows[i].step_time_s = 1.0 + i;
    }
    rows[0].step = 1, rows[0].rank = 0;
    rows[1].step = 1, rows[1].rank = 1; /* merges into row 0 when read */
    rows[2].step = 2, rows[2].rank = 0;
    assert_int_equal(mfu_store_append_steps(s, id, rows, 3, &e), MFU_OK);
    char sql[256];
    snprintf(sql, sizeof sql,
             "INSERT INTO rank_obs VALUES(%lld, 0, 2, 2, 5, 3.5, NULL),"
             "(%lld, 1, 1, 1, 6, 2.5, NULL), (%lld, 2, 9, 9, 7, 1.0, NULL),"
             "(%lld, 3, 0, 1, -4, 1.0, NULL)",
             (long long)id, (long long)id, (long long)id, (long long)id);
    sql_exec(f->db, sql);
    mfu_run *run = get_run(s, "posted");
    assert_int_equal(mfu_run_count(run), 2);
    /* the merge itself keeps rank 1's figures (run.h), then the stored ones in order */
    assert_int_equal(mfu_run_rank_obs_count(run), 3);
    mfu_rank_obs o;
    assert_true(mfu_run_rank_obs_get(run, 0, &o));
    assert_int_equal(o.rank, 1);
    assert_int_equal(o.row, 0);
    assert_true(mfu_run_rank_obs_get(run, 1, &o)); /* stored row 2 is run row 1 */
    assert_int_equal(o.row, 1);
    assert_int_equal(o.step, 2);
    assert_int_equal(o.rank, 5);
    assert_true(o.step_time_s == 3.5 && isnan(o.tokens_per_s));
    assert_true(mfu_run_rank_obs_get(run, 2, &o)); /* stored row 1 merged into run row 0 */
    assert_int_equal(o.row, 0);
    assert_int_equal(o.step, 1);
    assert_int_equal(o.rank, 6);
    mfu_run_free(run);
    mfu_store_close(s);
}

/* ---- the findings of a stored run ------------------------------------------------------- */

/* A canonical JSON-lines log of 300 steps on 8 devices (gpt2, 4096 tokens per sequence) with
 * what each finding of the analysis needs per step: ranks 1..7 print every step after rank 0
 * (rank 3 12 % slower: a straggler), data loading 10 % of the step, 30 % padding, recompute
 * full, and steps 100..159 at 1400 of 1980 MHz with the power at its 700 W limit (a power
 * cap). Step times carry a deterministic +-2 % noise. */
static void write_findings_log(const char *path)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("{\"mfu_run\":1,\"seq_len\":4096,\"world_size\":8,\"global_batch\":256}\n", fp);
    uint64_t x = 12345;
    for (int k = 1; k <= 300; k++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        double noise = 1.0 + 0.04 * ((double)(x >> 11) / 9007199254740992.0 - 0.5);
        bool capped = k >= 100 && k < 160;
        double st = 1.5 * noise * (capped ? 1980.0 / 1400.0 : 1.0);
        fprintf(fp,
                "{\"step\":%d,\"rank\":0,\"step_time_s\":%.9g,\"tokens\":1048576,"
                "\"useful_tokens\":734003.2,\"seq_len\":4096,\"devices\":8,\"clock_mhz\":%d,"
                "\"power_w\":%d,\"power_limit_w\":700,\"data_loading_s\":%.9g,"
                "\"recompute\":\"full\",\"dtype\":\"bf16\"}\n",
                k, st, capped ? 1400 : 1980, capped ? 700 : 610, 0.1 * st);
        for (int r = 1; r < 8; r++)
            fprintf(fp, "{\"step\":%d,\"rank\":%d,\"step_time_s\":%.9g}\n", k, r,
                    st * (r == 3 ? 1.12 : 1.0 + 0.001 * r));
    }
    assert_int_equal(fclose(fp), 0);
}

/* mfu_report_compute of run as `mfu report LOG --model gpt2 --device h100-sxm` makes it. */
static mfu_report *report_of(const mfu_run *run)
{
    mfu_report_input in;
    memset(&in, 0, sizeof in);
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_preset_find("gpt2", &in.arch, &e), MFU_OK);
    in.has_arch = true;
    in.device = "h100-sxm";
    mfu_report *rep = NULL;
    if (mfu_report_compute(run, &in, &rep, &e) != MFU_OK)
        fail_msg("report: %s", e.message);
    assert_non_null(mfu_report_analysis(rep));
    return rep;
}

static bool has_kind(const mfu_analysis *a, const char *kind)
{
    for (size_t i = 0; i < mfu_analysis_finding_count(a); i++)
        if (strcmp(mfu_analysis_finding(a, i)->kind, kind) == 0)
            return true;
    return false;
}

/* The report of the run read back from the store finds what the report of the log finds,
 * figure for figure: the straggler (per-rank observations), data loading (timers), padding
 * (useful tokens), the power cap (clock, power, limit) and recompute (the step's code). */
static void stored_run_keeps_its_findings(void **state)
{
    fx *f = *state;
    write_findings_log(f->log);
    mfu_run *fresh = parse(f->log);
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_store_ingest_result r = ingest(s, f->log);
    assert_int_equal(r.rows, 300);
    mfu_run *back = get_run(s, "train");
    mfu_store_close(s);
    assert_runs_same(fresh, back);
    assert_int_equal(mfu_run_rank_obs_count(back), 7 * 300);

    mfu_report *ra = report_of(fresh), *rb = report_of(back);
    const mfu_analysis *a = mfu_report_analysis(ra), *b = mfu_report_analysis(rb);
    const char *kinds[] = {"straggler", "data_loading", "padding", "power_cap", "recompute"};
    for (size_t k = 0; k < MFU__ARRAY_LEN(kinds); k++) {
        if (!has_kind(a, kinds[k]))
            fail_msg("the log's report has no %s finding (the test log is wrong)", kinds[k]);
        if (!has_kind(b, kinds[k]))
            fail_msg("the stored run's report lost the %s finding", kinds[k]);
    }
    assert_int_equal(mfu_analysis_finding_count(a), mfu_analysis_finding_count(b));
    for (size_t i = 0; i < mfu_analysis_finding_count(a); i++) {
        const mfu_finding *x = mfu_analysis_finding(a, i), *y = mfu_analysis_finding(b, i);
        assert_string_equal(x->kind, y->kind);
        assert_int_equal(x->severity, y->severity);
        assert_int_equal(x->first_step, y->first_step);
        assert_int_equal(x->last_step, y->last_step);
        assert_int_equal(x->nevidence, y->nevidence);
        for (size_t k = 0; k < x->nevidence; k++) {
            assert_string_equal(x->evidence[k].name, y->evidence[k].name);
            if (!same_bits(x->evidence[k].value, y->evidence[k].value))
                fail_msg("%s: %s %.17g != %.17g", x->kind, x->evidence[k].name,
                         x->evidence[k].value, y->evidence[k].value);
        }
        assert_string_equal(x->summary, y->summary);
    }
    mfu_report_free(ra);
    mfu_report_free(rb);
    mfu_run_free(fresh);
    mfu_run_free(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(fields_round_trip, setup, teardown),
        cmocka_unit_test(step_equality_covers_new_fields),
        cmocka_unit_test_setup_teardown(v2_store_migrates, setup, teardown),
        cmocka_unit_test_setup_teardown(reingest_keeps_observations, setup, teardown),
        cmocka_unit_test_setup_teardown(migrated_run_is_refreshed, setup, teardown),
        cmocka_unit_test_setup_teardown(observations_follow_merged_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(stored_run_keeps_its_findings, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
