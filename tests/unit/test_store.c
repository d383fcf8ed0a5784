/*
 * test_store.c - the SQLite run store (mfu/store.h): open and schema, exact round trips,
 * appends, tags, findings, delete cascade, idempotent and resumed ingest, concurrent readers,
 * and a writer killed in the middle of an ingest.
 *
 * Every test works in its own mkdtemp directory, removed at the end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "mfu/mfu.h"
#include "run/step.h"
#include "store/internal.h"
#include "util/util.h"
#include "store_test.h"

/* ---- helpers ---------------------------------------------------------------------------- */

/* SQL that takes a version-4 store back to the tables of version 3 (what migration 4 added),
 * and a version-3 one back to version 2 (what migration 3 added). */
#define UNDO_V4                                                                                    \
    "DROP TABLE step_chunks;"                                                                      \
    "ALTER TABLE steps DROP COLUMN energy_j; ALTER TABLE steps DROP COLUMN tensor_active;"
#define UNDO_V3                                                                                    \
    "DROP TABLE rank_obs;"                                                                         \
    "ALTER TABLE steps DROP COLUMN seq_len; ALTER TABLE steps DROP COLUMN devices;"                \
    "ALTER TABLE steps DROP COLUMN useful_tokens; ALTER TABLE steps DROP COLUMN clock_mhz;"        \
    "ALTER TABLE steps DROP COLUMN power_w; ALTER TABLE steps DROP COLUMN power_limit_w;"          \
    "ALTER TABLE steps DROP COLUMN data_loading_s; ALTER TABLE steps DROP COLUMN comm_s;"          \
    "ALTER TABLE steps DROP COLUMN optimizer_s; ALTER TABLE steps DROP COLUMN recompute;"          \
    "ALTER TABLE steps DROP COLUMN dtype;"

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
    snprintf(f->dir, sizeof f->dir, "%s/mfu-store-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->db, sizeof f->db, "%s/runs.db", f->dir);
    snprintf(f->log, sizeof f->log, "%s/train.log", f->dir);
    *state = f;
    return 0;
}

static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
            rm_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static int teardown(void **state)
{
    fx *f = *state;
    rm_tree(f->dir);
    free(f);
    return 0;
}

/* One Megatron step line for iteration i (values vary with i). */
static int megatron_line(char *buf, size_t n, long i)
{
    return snprintf(buf, n,
                    " [2024-09-03 16:%02ld:%02ld] iteration %8ld/ 1000000 | consumed samples: "
                    "%12ld | elapsed time per iteration (ms): %.1f | throughput per GPU "
                    "(TFLOP/s/GPU): %.1f | learning rate: %.6E | global batch size:  1024 | lm "
                    "loss: %.6E | loss scale: 262144.0 | grad norm: %.3f | number of skipped "
                    "iterations:   0 | number of nan iterations:   0 |\n",
                    (i / 60) % 60, i % 60, i, i * 1024, 14000.0 + (double)(i % 97),
                    790.0 + (double)(i % 13), 1e-4 * (double)(i % 1000) / 1000.0,
                    10.0 / (1.0 + (double)i * 1e-3), 1.0 + (double)(i % 17) / 8.0);
}

/* Write (mode "w") or append ("a") iterations first..last to path. */
static void write_log(const char *path, const char *mode, long first, long last)
{
    FILE *fp = fopen(path, mode);
    assert_non_null(fp);
    if (first == 1)
        fputs("using world size: 16, data-parallel size: 16\n", fp);
    char line[512];
    for (long i = first; i <= last; i++) {
        megatron_line(line, sizeof line, i);
        fputs(line, fp);
    }
    assert_int_equal(fclose(fp), 0);
}

static void assert_runs_equal(const mfu_run *a, const mfu_run *b)
{
    assert_int_equal(mfu_run_count(a), mfu_run_count(b));
    for (size_t i = 0; i < mfu_run_count(a); i++) {
        mfu_step x, y;
        assert_true(mfu_run_get(a, i, &x));
        assert_true(mfu_run_get(b, i, &y));
        if (!mfu__step_equal(&x, &y))
            fail_msg("row %zu differs: step %lld/%lld loss %.17g/%.17g", i, (long long)x.step,
                     (long long)y.step, x.loss, y.loss);
    }
}

static void assert_integrity(const char *db)
{
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA foreign_key_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE); /* no orphan rows */
    sqlite3_finalize(st);
    sqlite3_close(h);
}

static mfu_store_ingest_result ingest(mfu_store *s, const char *path, const char *name)
{
    mfu_store_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.run_name = name;
    mfu_store_ingest_result r;
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (mfu_store_ingest_path(s, path, &o, &r, &e) != MFU_OK)
        fail_msg("ingest %s: %s", path, e.message);
    return r;
}

/* ---- open, schema ----------------------------------------------------------------------- */

static void open_create_reopen(void **state)
{
    fx *f = *state;
    mfu_store *s = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    /* absent file without CREATE: an error that says what to do */
    assert_int_equal(mfu_store_open(f->db, 0, &s, &e), MFU_E_IO);
    assert_null(s);
    assert_non_null(strstr(e.message, "no run store"));
    assert_non_null(strstr(e.message, "mfu ingest"));
    assert_int_equal(access(f->db, F_OK), -1); /* and nothing was created */

    s = open_store(f->db, MFU_STORE_CREATE);
    assert_string_equal(mfu_store_path(s), f->db);
    mfu_store_close(s);
    s = open_store(f->db, 0); /* again: no second migration */
    mfu_store_close(s);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM mfu_schema"), MFU_STORE_SCHEMA_VERSION);
    assert_int_equal(sql_int(f->db, "SELECT max(version) FROM mfu_schema"),
                     MFU_STORE_SCHEMA_VERSION);
    assert_int_equal(sql_int(f->db, "PRAGMA user_version"), MFU_STORE_SCHEMA_VERSION);
    assert_int_equal(sql_int(f->db, "PRAGMA application_id"), 0x6d667530);

    /* WAL mode is a property of the file */
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(f->db, &h), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    sqlite3_close(h);

    /* read-only handles read but refuse writes */
    s = open_store(f->db, MFU_STORE_READONLY);
    int64_t id = 0;
    assert_int_equal(mfu_store_create_run(s, "x", NULL, &id, &e), MFU_E_INVALID);
    assert_non_null(strstr(e.message, "read-only"));
    mfu_store_list *l = NULL;
    assert_int_equal(mfu_store_list_runs(s, &l, &e), MFU_OK);
    assert_int_equal(mfu_store_list_count(l), 0);
    mfu_store_list_free(l);
    mfu_store_close(s);

    /* bad arguments */
    assert_int_equal(mfu_store_open(f->db, MFU_STORE_CREATE | MFU_STORE_READONLY, &s, &e),
                     MFU_E_INVALID);
    assert_int_equal(mfu_store_open(f->db, 0x80, &s, &e), MFU_E_INVALID);
    assert_int_equal(mfu_store_open(NULL, 0, &s, &e), MFU_E_INVALID);
    mfu_store_close(NULL);
}

static void open_refuses_other_files(void **state)
{
    fx *f = *state;
    mfu_store *s = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    /* not SQLite at all */
    FILE *fp = fopen(f->db, "wb");
    assert_non_null(fp);
    for (int i = 0; i < 200; i++)
        fputs("this is not a database, just text in the way. ", fp);
    fclose(fp);
    assert_int_equal(mfu_store_open(f->db, MFU_STORE_CREATE, &s, &e), MFU_E_IO);
    assert_null(s);
    assert_non_null(strstr(e.message, "not an SQLite database"));
    assert_non_null(strstr(e.message, "--db"));
    unlink(f->db);

    /* someone else's SQLite database */
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(f->db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    assert_int_equal(mfu_store_open(f->db, MFU_STORE_CREATE, &s, &e), MFU_E_IO);
    assert_non_null(strstr(e.message, "not an mfu run store"));
    unlink(f->db);

    /* an empty SQLite file becomes a store */
    assert_int_equal(sqlite3_open(f->db, &h), SQLITE_OK);
    sqlite3_close(h);
    s = open_store(f->db, 0);
    mfu_store_close(s);

    /* a store from a newer mfu is refused, not damaged */
    assert_int_equal(sqlite3_open(f->db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "INSERT INTO mfu_schema VALUES(99, 0)", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    assert_int_equal(mfu_store_open(f->db, 0, &s, &e), MFU_E_UNSUPPORTED);
    assert_non_null(strstr(e.message, "newer"));
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM mfu_schema"),
                     MFU_STORE_SCHEMA_VERSION + 1);
}

static mfu_run *odd_run(size_t n);

/* A store whose pages were overwritten: errors that say "damaged", never a crash. */
static void damaged_store(void **state)
{
    fx *f = *state;
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_run *run = odd_run(3000);
    assert_int_equal(mfu_store_put_run(s, "r", run, NULL, &e), MFU_OK);
    mfu_run_free(run);
    mfu_store_close(s); /* checkpoints the WAL into the file */
    struct stat sb;
    assert_int_equal(stat(f->db, &sb), 0);
    assert_true(sb.st_size > 64 * 1024);
    FILE *fp = fopen(f->db, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 8192, SEEK_SET), 0); /* keep the header page */
    for (long i = 8192; i < sb.st_size - 4096; i++)
        fputc((int)((i * 131) & 0xff), fp);
    fclose(fp);
    s = NULL;
    mfu_status st = mfu_store_open(f->db, 0, &s, &e);
    if (st == MFU_OK) {
        int64_t id = 0;
        mfu_run *back = NULL;
        st = mfu_store_find_run(s, "r", &id, &e);
        if (st == MFU_OK)
            st = mfu_store_get_run(s, id, &back, &e);
        assert_null(back);
        mfu_store_close(s);
    }
    assert_int_equal(st, MFU_E_IO);
    assert_non_null(strstr(e.message, "damaged"));
    assert_non_null(strstr(e.message, "--db"));
}

/* ---- round trip ------------------------------------------------------------------------- */

/* A run that exercises every field: NaN, -0.0, infinities, extremes, a restart (repeated
 * step numbers), flags, scopes, ranks. */
static mfu_run *odd_run(size_t n)
{
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    mfu_error e;
    memset(&e, 0, sizeof e);
    const double odd[] = {-0.0,  INFINITY, -INFINITY,          DBL_MAX,   DBL_MIN, 4.9e-324,
                          1e300, -1e-300,  9007199254740993.0, 0.1 + 0.2, 1e18,    123456789.125};
    for (size_t i = 0; i < n; i++) {
        mfu_step s;
        mfu_step_init(&s);
        /* steps 10, 20, .. then a restart: back to 10, 20, .. when the first half is longer
         * than the dedup window (so the run repeats step numbers), else to 5, 15, .. (a number
         * still in the window would merge into its row) */
        int64_t half = (int64_t)(n / 2), k = (int64_t)i;
        s.step = k < half ? 10 * (k + 1) : 10 * (k - half) + (half > MFU_RUN_DEDUP_WINDOW ? 10 : 5);
        s.rank = (int32_t)(i % 5) - 1;
        s.flags = (uint32_t)(i % 16);
        s.time_s = 1.7e9 + (double)i * 0.25;
        if (i % 3)
            s.step_time_s = 0.5 + (double)i * 1e-7;
        double tok = odd[i % MFU__ARRAY_LEN(odd)]; /* a count: finite, not below 0 (-0 is not) */
        s.tokens = isfinite(tok) && !(tok < 0) ? tok : 1024;
        s.samples = i % 4 ? NAN : 1024;
        s.loss = i % 7 == 0 ? NAN : 10.0 / (double)(i + 1);
        s.lr = 3e-4 * (double)(i % 11);
        s.grad_norm = odd[(i + 3) % MFU__ARRAY_LEN(odd)];
        s.memory_bytes = 7.0e10 + (double)i;
        s.tokens_per_s = 1e6 + (double)i / 3.0;
        s.tokens_per_s_scope = (mfu_scope)(i % 3);
        s.flops_per_s = i % 2 ? NAN : 4.0e14;
        s.flops_per_s_scope = (mfu_scope)((i + 1) % 3);
        s.mfu = (double)(i % 100) / 100.0;
        s.mfu_scope = (mfu_scope)((i + 2) % 3);
        s.samples_per_s = i % 5 ? NAN : 12.5;
        s.samples_per_s_scope = MFU_SCOPE_GLOBAL;
        bool merged = true;
        assert_int_equal(mfu_run_append(run, &s, &merged, &e), MFU_OK);
        assert_false(merged);
    }
    mfu_run_meta *m = mfu_run_meta_mut(run);
    snprintf(m->format, sizeof m->format, "megatron");
    snprintf(m->model, sizeof m->model, "GPT-3 7B \"quoted\" \xc3\xa9");
    m->model_params = 6.4367e9;
    m->global_batch = 1024;
    m->micro_batch = 1;
    m->seq_len = 4096;
    m->world_size = 16;
    m->grad_accum = 64;
    snprintf(m->device, sizeof m->device, "NVIDIA H100 80GB HBM3");
    snprintf(m->dtype, sizeof m->dtype, "fp8");
    m->tokens_per_step = 1024.0 * 4096.0;
    snprintf(m->convention, sizeof m->convention, "per GPU, no recompute");
    m->reported_peak_flops_per_s = 989.4e12 / 3.0; /* not a short decimal */
    return run;
}

static void assert_meta_equal(const mfu_run_meta *a, const mfu_run_meta *b)
{
    assert_string_equal(a->format, b->format);
    assert_string_equal(a->model, b->model);
    assert_memory_equal(&a->model_params, &b->model_params, sizeof(double));
    assert_int_equal(a->global_batch, b->global_batch);
    assert_int_equal(a->micro_batch, b->micro_batch);
    assert_int_equal(a->seq_len, b->seq_len);
    assert_int_equal(a->world_size, b->world_size);
    assert_int_equal(a->grad_accum, b->grad_accum);
    assert_string_equal(a->device, b->device);
    assert_string_equal(a->dtype, b->dtype);
    assert_memory_equal(&a->tokens_per_step, &b->tokens_per_step, sizeof(double));
    assert_string_equal(a->convention, b->convention);
    assert_memory_equal(&a->reported_peak_flops_per_s, &b->reported_peak_flops_per_s,
                        sizeof(double));
}

static void round_trip_in(const char *path)
{
    mfu_store *s = open_store(path, MFU_STORE_CREATE);
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_store_set_batch_rows(s, 7, &e), MFU_OK); /* many transactions */
    mfu_run *run = odd_run(203);
    assert_int_equal(mfu_run_steps(run)[101], mfu_run_steps(run)[0]); /* repeated numbers */
    int64_t id = 0;
    assert_int_equal(mfu_store_put_run(s, "odd", run, &id, &e), MFU_OK);
    assert_true(id > 0);
    mfu_run *back = NULL;
    assert_int_equal(mfu_store_get_run(s, id, &back, &e), MFU_OK);
    assert_runs_equal(run, back);
    assert_meta_equal(mfu_run_meta_get(run), mfu_run_meta_get(back));
    /* -0.0 keeps its sign, NaN is NULL */
    mfu_step r0;
    assert_true(mfu_run_get(back, 0, &r0));
    assert_true(r0.tokens == 0.0 && signbit(r0.tokens));
    assert_true(isnan(r0.loss));
    mfu_run_free(back);

    /* an unknown metadata (all absent) round-trips too */
    mfu_run *plain = mfu_run_new();
    mfu_step st;
    mfu_step_init(&st);
    st.step = 5;
    assert_int_equal(mfu_run_append(plain, &st, NULL, &e), MFU_OK);
    assert_int_equal(mfu_store_put_run(s, "plain", plain, NULL, &e), MFU_OK);
    back = get_run(s, "plain");
    assert_runs_equal(plain, back);
    assert_meta_equal(mfu_run_meta_get(plain), mfu_run_meta_get(back));
    assert_true(isnan(mfu_run_meta_get(back)->model_params));
    mfu_run_free(back);

    /* putting again under the same name replaces the rows, keeps the id */
    int64_t id2 = 0;
    assert_int_equal(mfu_store_put_run(s, "odd", plain, &id2, &e), MFU_OK);
    assert_int_equal(id2, id);
    back = get_run(s, "odd");
    assert_runs_equal(plain, back);
    mfu_run_free(back);
    mfu_run_free(plain);
    mfu_run_free(run);

    /* no such run */
    assert_int_equal(mfu_store_get_run(s, 9999, &back, &e), MFU_E_INVALID);
    assert_null(back);
    assert_int_equal(mfu_store_find_run(s, "nope", &id, &e), MFU_E_UNKNOWN);
    assert_non_null(strstr(e.message, "mfu runs"));
    mfu_store_close(s);
}

static void round_trip_exact(void **state)
{
    fx *f = *state;
    round_trip_in(":memory:");
    round_trip_in(f->db);
    assert_integrity(f->db);
    /* the rows are stored once each, keyed by row number */
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM steps"), 2);
}

static void names_and_limits(void **state)
{
    fx *f = *state;
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_error e;
    memset(&e, 0, sizeof e);
    char longname[MFU_STORE_NAME_MAX + 1];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    const char *bad[] = {"", "-x", "a\nb", "tab\there", longname};
    for (size_t i = 0; i < MFU__ARRAY_LEN(bad); i++) {
        assert_int_equal(mfu_store_create_run(s, bad[i], NULL, NULL, &e), MFU_E_INVALID);
        assert_string_equal(e.field, "--run");
    }
    assert_int_equal(mfu_store_check_name("-x", &e), MFU_E_INVALID);
    assert_int_equal(mfu_store_check_name(NULL, &e), MFU_E_INVALID);
    assert_int_equal(mfu_store_check_name("gpt3 7b (fp8) \xc3\xa9", &e), MFU_OK);
    assert_int_equal(mfu_store_check_tag("cluster.zone:a-1_b", "any text, even = signs", &e),
                     MFU_OK);
    assert_int_equal(mfu_store_check_tag("k", NULL, &e), MFU_OK); /* NULL value: a removal */
    assert_int_equal(mfu_store_check_tag("k/v", "x", &e), MFU_E_INVALID);
    assert_string_equal(e.field, "--tag");
    assert_int_equal(mfu_store_check_tag(NULL, "x", &e), MFU_E_INVALID);
    longname[MFU_STORE_NAME_MAX - 1] = '\0'; /* the longest allowed */
    assert_int_equal(mfu_store_create_run(s, longname, NULL, NULL, &e), MFU_OK);
    assert_int_equal(mfu_store_create_run(s, longname, NULL, NULL, &e), MFU_E_INVALID);
    assert_non_null(strstr(e.message, "exists"));
    assert_int_equal(mfu_store_set_batch_rows(s, 0, &e), MFU_E_INVALID);
    assert_int_equal(mfu_store_set_batch_rows(s, MFU_STORE_MAX_BATCH_ROWS + 1, &e), MFU_E_INVALID);
    assert_int_equal(mfu_store_set_busy_timeout(s, -1, &e), MFU_E_INVALID);
    assert_int_equal(mfu_store_append_steps(s, 424242, NULL, 0, &e), MFU_E_INVALID);

    char name[MFU_STORE_NAME_MAX];
    mfu_store_default_name("logs/train.log.gz", name, sizeof name);
    assert_string_equal(name, "train");
    mfu_store_default_name("/a/b/run-7.jsonl.zst", name, sizeof name);
    assert_string_equal(name, "run-7");
    mfu_store_default_name("a.b.c", name, sizeof name);
    assert_string_equal(name, "a.b");
    mfu_store_default_name(".hidden", name, sizeof name);
    assert_string_equal(name, ".hidden");
    mfu_store_default_name("-x.log", name, sizeof name);
    assert_string_equal(name, "_x");
    mfu_store_default_name("dir/", name, sizeof name);
    assert_string_equal(name, "run");
    mfu_store_default_name("x\ty.log", name, sizeof name);
    assert_string_equal(name, "x_y");
    mfu_store_close(s);
}

/* ---- appends, listing, tags, findings, delete ------------------------------------------- */

static void append_and_list(void **state)
{
    fx *f = *state;
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_store_set_batch_rows(s, 4, &e), MFU_OK);
    mfu_run_meta meta;
    mfu_run *tmp = mfu_run_new();
    meta = *mfu_run_meta_get(tmp);
    mfu_run_free(tmp);
    snprintf(meta.format, sizeof meta.format, "live");
    int64_t id = 0;
    assert_int_equal(mfu_store_create_run(s, "live", &meta, &id, &e), MFU_OK);
    mfu_step steps[15];
    for (int i = 0; i < 15; i++) {
        mfu_step_init(&steps[i]);
        steps[i].step = 100 + 10 * i;
        steps[i].loss = 5.0 - 0.1 * i;
    }
    assert_int_equal(mfu_store_append_steps(s, id, steps, 10, &e), MFU_OK);
    assert_int_equal(mfu_store_append_steps(s, id, steps + 10, 5, &e), MFU_OK);
    assert_int_equal(mfu_store_append_steps(s, id, NULL, 0, &e), MFU_OK);
    mfu_run *back = NULL;
    assert_int_equal(mfu_store_get_run(s, id, &back, &e), MFU_OK);
    assert_int_equal(mfu_run_count(back), 15);
    for (size_t i = 0; i < 15; i++) {
        mfu_step r;
        assert_true(mfu_run_get(back, i, &r));
        assert_true(mfu__step_equal(&r, &steps[i]));
    }
    assert_string_equal(mfu_run_meta_get(back)->format, "live");
    mfu_run_free(back);

    mfu_run *other = odd_run(10);
    assert_int_equal(mfu_store_put_run(s, "alpha", other, NULL, &e), MFU_OK);
    mfu_run_free(other);
    mfu_store_list *l = NULL;
    assert_int_equal(mfu_store_list_runs(s, &l, &e), MFU_OK);
    assert_int_equal(mfu_store_list_count(l), 2);
    const mfu_store_run_info *a = mfu_store_list_at(l, 0), *b = mfu_store_list_at(l, 1);
    assert_string_equal(a->name, "alpha"); /* sorted by name */
    assert_string_equal(b->name, "live");
    assert_int_equal(b->steps, 15);
    assert_int_equal(b->first_step, 100);
    assert_int_equal(b->last_step, 240);
    assert_true(b->complete);
    assert_string_equal(b->format, "live");
    assert_string_equal(b->source, "");
    assert_int_equal(a->steps, 10);
    assert_int_equal(a->first_step, 10);
    assert_int_equal(a->last_step, 45); /* 10 rows: steps 10..50, then a restart 5..45 */
    assert_true(b->created_s > 1600000000);
    assert_null(mfu_store_list_at(l, 2));
    mfu_store_list_free(l);
    mfu_store_close(s);
}

static void tags(void **state)
{
    fx *f = *state;
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_error e;
    memset(&e, 0, sizeof e);
    int64_t id = 0, id2 = 0;
    assert_int_equal(mfu_store_create_run(s, "r", NULL, &id, &e), MFU_OK);
    assert_int_equal(mfu_store_create_run(s, "q", NULL, &id2, &e), MFU_OK);
    assert_int_equal(mfu_store_set_tag(s, id, "gpu", "h100", &e), MFU_OK);
    assert_int_equal(mfu_store_set_tag(s, id, "arm", "b", &e), MFU_OK);
    assert_int_equal(mfu_store_set_tag(s, id, "gpu", "H100 SXM", &e), MFU_OK); /* overwrite */
    assert_int_equal(mfu_store_set_tag(s, id, "empty", "", &e), MFU_OK);
    assert_int_equal(mfu_store_set_tag(s, id2, "gpu", "a100", &e), MFU_OK);
    char v[MFU_STORE_TAG_VALUE_MAX];
    assert_int_equal(mfu_store_get_tag(s, id, "gpu", v, sizeof v, &e), MFU_OK);
    assert_string_equal(v, "H100 SXM");
    assert_int_equal(mfu_store_get_tag(s, id2, "gpu", v, sizeof v, &e), MFU_OK);
    assert_string_equal(v, "a100");
    char small[4];
    assert_int_equal(mfu_store_get_tag(s, id, "gpu", small, sizeof small, &e), MFU_E_LIMIT);
    assert_string_equal(small, "H10");
    assert_int_equal(mfu_store_set_tag(s, id, "arm", NULL, &e), MFU_OK); /* remove */
    assert_int_equal(mfu_store_get_tag(s, id, "arm", v, sizeof v, &e), MFU_E_MISSING);
    assert_non_null(strstr(e.message, "--tag arm="));
    /* invalid keys and values; no run */
    assert_int_equal(mfu_store_set_tag(s, id, "a b", "x", &e), MFU_E_INVALID);
    assert_int_equal(mfu_store_set_tag(s, id, "", "x", &e), MFU_E_INVALID);
    assert_int_equal(mfu_store_set_tag(s, id, "k", "line\nbreak", &e), MFU_E_INVALID);
    char big[MFU_STORE_TAG_VALUE_MAX + 1];
    memset(big, 'v', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(mfu_store_set_tag(s, id, "k", big, &e), MFU_E_INVALID);
    big[MFU_STORE_TAG_VALUE_MAX - 1] = '\0'; /* the longest allowed */
    assert_int_equal(mfu_store_set_tag(s, id, "k", big, &e), MFU_OK);
    assert_int_equal(mfu_store_set_tag(s, 424242, "k", "v", &e), MFU_E_INVALID);

    mfu_store_list *l = NULL;
    assert_int_equal(mfu_store_list_runs(s, &l, &e), MFU_OK);
    const mfu_store_run_info *r = mfu_store_list_at(l, 1);
    assert_string_equal(r->name, "r");
    assert_int_equal(r->ntags, 3);
    assert_string_equal(r->tags[0].key, "empty");
    assert_string_equal(r->tags[0].value, "");
    assert_string_equal(r->tags[1].key, "gpu");
    assert_string_equal(r->tags[1].value, "H100 SXM");
    assert_string_equal(r->tags[2].key, "k");
    const mfu_store_run_info *q = mfu_store_list_at(l, 0);
    assert_int_equal(q->ntags, 1);
    assert_string_equal(q->tags[0].value, "a100");
    mfu_store_list_free(l);
    mfu_store_close(s);
}

/* The run context: a JSON array of strings, round trip, listing, replace, clear, limits, and a
 * version-1 store (no context column) migrated forward with its runs intact. */
static void context(void **state)
{
    fx *f = *state;
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_error e;
    memset(&e, 0, sizeof e);
    int64_t id = 0, id2 = 0;
    assert_int_equal(mfu_store_create_run(s, "a", NULL, &id, &e), MFU_OK);
    assert_int_equal(mfu_store_create_run(s, "b", NULL, &id2, &e), MFU_OK);
    char *c = (char *)"x";
    assert_int_equal(mfu_store_get_context(s, id, &c, &e), MFU_OK);
    assert_null(c); /* none yet */
    const char *ctx = "[\"--model\",\"llama3-8b\",\"--seq\",\"8192\",\"--device\",\"h100-sxm\"]";
    assert_int_equal(mfu_store_set_context(s, id, ctx, &e), MFU_OK);
    assert_int_equal(mfu_store_get_context(s, id, &c, &e), MFU_OK);
    assert_string_equal(c, ctx);
    free(c);
    /* replaced by a later one */
    const char *ctx2 = "[\"--model\",\"gpt2\",\"--device=v100-sxm2\"]";
    assert_int_equal(mfu_store_set_context(s, id, ctx2, &e), MFU_OK);
    assert_int_equal(mfu_store_get_context(s, id, &c, &e), MFU_OK);
    assert_string_equal(c, ctx2);
    free(c);
    /* the same context again writes nothing (updated_s stays); another one updates it */
    mfu_store_close(s);
    sqlite3 *h0 = NULL;
    assert_int_equal(sqlite3_open(f->db, &h0), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h0, "UPDATE runs SET updated_s=0", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h0);
    s = open_store(f->db, 0);
    assert_int_equal(mfu_store_set_context(s, id, ctx2, &e), MFU_OK);
    assert_int_equal(sql_int(f->db, "SELECT updated_s FROM runs WHERE name='a'"), 0);
    assert_int_equal(mfu_store_set_context(s, id, ctx, &e), MFU_OK);
    assert_true(sql_int(f->db, "SELECT updated_s FROM runs WHERE name='a'") > 0);
    assert_int_equal(mfu_store_set_context(s, id, ctx2, &e), MFU_OK);
    /* bad shapes are refused and leave it as it was */
    assert_int_equal(mfu_store_set_context(s, id, "{\"model\":1}", &e), MFU_E_PARSE);
    assert_non_null(strstr(e.message, "array of strings"));
    assert_int_equal(mfu_store_set_context(s, id, "[\"--seq\", 8192]", &e), MFU_E_PARSE);
    assert_int_equal(mfu_store_set_context(s, id, "[\"--seq\"", &e), MFU_E_PARSE);
    assert_int_equal(mfu_store_check_context("[]", &e), MFU_OK);
    size_t big = MFU_STORE_CONTEXT_MAX + 8;
    char *huge = malloc(big);
    assert_non_null(huge);
    memset(huge, 'x', big - 1);
    huge[0] = '[';
    huge[1] = '"';
    huge[big - 3] = '"';
    huge[big - 2] = ']';
    huge[big - 1] = '\0';
    assert_int_equal(mfu_store_set_context(s, id, huge, &e), MFU_E_LIMIT);
    free(huge);
    assert_int_equal(mfu_store_set_context(s, 424242, ctx, &e), MFU_E_INVALID);
    assert_int_equal(mfu_store_get_context(s, 424242, &c, &e), MFU_E_INVALID);
    assert_int_equal(mfu_store_get_context(s, id, &c, &e), MFU_OK);
    assert_string_equal(c, ctx2);
    free(c);

    mfu_store_list *l = NULL;
    assert_int_equal(mfu_store_list_runs(s, &l, &e), MFU_OK);
    assert_string_equal(mfu_store_list_at(l, 0)->context, ctx2);
    assert_string_equal(mfu_store_list_at(l, 1)->context, "");
    mfu_store_list_free(l);
    /* put_run keeps the context (it belongs to the run, not to one read of its log) */
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    assert_int_equal(mfu_store_put_run(s, "a", run, NULL, &e), MFU_OK);
    mfu_run_free(run);
    assert_int_equal(mfu_store_get_context(s, id, &c, &e), MFU_OK);
    assert_string_equal(c, ctx2);
    free(c);
    /* "" clears */
    assert_int_equal(mfu_store_set_context(s, id, "", &e), MFU_OK);
    assert_int_equal(mfu_store_get_context(s, id, &c, &e), MFU_OK);
    assert_null(c);
    mfu_store_close(s);

    /* a read-only handle cannot write it */
    s = open_store(f->db, MFU_STORE_READONLY);
    assert_int_equal(mfu_store_set_context(s, id, ctx, &e), MFU_E_INVALID);
    mfu_store_close(s);

    /* a version-1 store: the column is added when opened for writing; runs stay */
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(f->db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h,
                                  UNDO_V4 UNDO_V3 "ALTER TABLE runs DROP COLUMN context_json;"
                                                  "DELETE FROM mfu_schema WHERE version > 1;"
                                                  "PRAGMA user_version=1;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    assert_int_equal(mfu_store_open(f->db, MFU_STORE_READONLY, &s, &e), MFU_E_UNSUPPORTED);
    s = open_store(f->db, 0);
    assert_int_equal(sql_int(f->db, "SELECT max(version) FROM mfu_schema"),
                     MFU_STORE_SCHEMA_VERSION);
    assert_int_equal(mfu_store_find_run(s, "b", &id2, &e), MFU_OK);
    assert_int_equal(mfu_store_get_context(s, id2, &c, &e), MFU_OK);
    assert_null(c);
    assert_int_equal(mfu_store_set_context(s, id2, ctx, &e), MFU_OK);
    assert_int_equal(mfu_store_get_context(s, id2, &c, &e), MFU_OK);
    assert_string_equal(c, ctx);
    free(c);
    mfu_store_close(s);
}

static void findings(void **state)
{
    fx *f = *state;
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_error e;
    memset(&e, 0, sizeof e);
    int64_t id = 0;
    assert_int_equal(mfu_store_create_run(s, "r", NULL, &id, &e), MFU_OK);
    mfu_store_finding in[2] = {
        {"stall", "warning", 10, 20, "{\"gap_s\": 31.5}", "check the data loader"},
        {"throttle", "error", 30, 90, NULL, NULL},
    };
    assert_int_equal(mfu_store_replace_findings(s, id, in, 2, &e), MFU_OK);
    mfu_store_findings *out = NULL;
    assert_int_equal(mfu_store_get_findings(s, id, &out, &e), MFU_OK);
    assert_int_equal(mfu_store_findings_count(out), 2);
    const mfu_store_finding *a = mfu_store_findings_at(out, 0);
    assert_string_equal(a->kind, "stall");
    assert_string_equal(a->severity, "warning");
    assert_int_equal(a->first_step, 10);
    assert_int_equal(a->last_step, 20);
    assert_string_equal(a->evidence_json, "{\"gap_s\": 31.5}");
    assert_string_equal(a->next_step, "check the data loader");
    const mfu_store_finding *b = mfu_store_findings_at(out, 1);
    assert_string_equal(b->kind, "throttle");
    assert_string_equal(b->evidence_json, "{}");
    assert_string_equal(b->next_step, "");
    assert_null(mfu_store_findings_at(out, 2));
    mfu_store_findings_free(out);

    /* a bad one is refused and the stored ones stay */
    mfu_store_finding badjson = {"x", "info", 1, 1, "[1, 2]", NULL};
    assert_int_equal(mfu_store_replace_findings(s, id, &badjson, 1, &e), MFU_E_PARSE);
    mfu_store_finding nokind = {"", "info", 1, 1, NULL, NULL};
    assert_int_equal(mfu_store_replace_findings(s, id, &nokind, 1, &e), MFU_E_INVALID);
    assert_int_equal(mfu_store_replace_findings(s, 424242, in, 1, &e), MFU_E_INVALID);
    assert_int_equal(mfu_store_get_findings(s, id, &out, &e), MFU_OK);
    assert_int_equal(mfu_store_findings_count(out), 2);
    mfu_store_findings_free(out);
    /* replacing with nothing clears */
    assert_int_equal(mfu_store_replace_findings(s, id, NULL, 0, &e), MFU_OK);
    assert_int_equal(mfu_store_get_findings(s, id, &out, &e), MFU_OK);
    assert_int_equal(mfu_store_findings_count(out), 0);
    mfu_store_findings_free(out);
    mfu_store_close(s);
}

static void delete_cascades(void **state)
{
    fx *f = *state;
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_run *run = odd_run(50);
    int64_t a = 0, b = 0;
    assert_int_equal(mfu_store_put_run(s, "a", run, &a, &e), MFU_OK);
    assert_int_equal(mfu_store_put_run(s, "b", run, &b, &e), MFU_OK);
    mfu_store_finding fd = {"stall", "info", 1, 2, NULL, NULL};
    for (int i = 0; i < 2; i++) {
        int64_t id = i ? b : a;
        assert_int_equal(mfu_store_set_tag(s, id, "k", "v", &e), MFU_OK);
        assert_int_equal(mfu_store_replace_findings(s, id, &fd, 1, &e), MFU_OK);
    }
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM steps"), 100);
    assert_int_equal(mfu_store_delete_run(s, a, &e), MFU_OK);
    assert_int_equal(mfu_store_delete_run(s, a, &e), MFU_E_INVALID); /* gone */
    char sql[128];
    const char *tables[] = {"steps", "tags", "findings"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE run_id=%lld", tables[i],
                 (long long)a);
        assert_int_equal(sql_int(f->db, sql), 0);
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE run_id=%lld", tables[i],
                 (long long)b);
        assert_int_equal(sql_int(f->db, sql), i == 0 ? 50 : 1);
    }
    /* the other run is whole */
    mfu_run *back = get_run(s, "b");
    assert_runs_equal(run, back);
    mfu_run_free(back);
    /* a new run never reuses the deleted id */
    int64_t c = 0;
    assert_int_equal(mfu_store_create_run(s, "a", NULL, &c, &e), MFU_OK);
    assert_true(c > b);
    mfu_run_free(run);
    mfu_store_close(s);
    assert_integrity(f->db);
}

/* ---- ingest ----------------------------------------------------------------------------- */

static void ingest_idempotent(void **state)
{
    fx *f = *state;
    write_log(f->log, "w", 1, 500);
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_store_ingest_result r = ingest(s, f->log, NULL);
    assert_int_equal(r.action, MFU_STORE_CREATED);
    assert_string_equal(r.run_name, "train");
    assert_int_equal(r.rows, 500);
    assert_int_equal(r.rows_written, 500);
    assert_int_equal(r.lines, 501);
    struct stat sb;
    assert_int_equal(stat(f->log, &sb), 0);
    assert_int_equal(r.bytes, sb.st_size);
    assert_string_equal(r.stats.format, "megatron");

    r = ingest(s, f->log, NULL); /* again: nothing to do */
    assert_int_equal(r.action, MFU_STORE_UNCHANGED);
    assert_int_equal(r.rows, 500);
    assert_int_equal(r.rows_written, 0);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM steps"), 500);

    /* the stored run is exactly what a fresh parse gives */
    mfu_run *fresh = parse(f->log), *back = get_run(s, "train");
    assert_runs_equal(fresh, back);
    assert_meta_equal(mfu_run_meta_get(fresh), mfu_run_meta_get(back));
    mfu_run_free(back);

    /* touching the file (same bytes, new mtime) re-reads, writes only the overlap, and the
     * rows stay the same */
    struct timespec ts[2] = {{0, UTIME_NOW}, {sb.st_mtim.tv_sec + 10, 0}};
    assert_int_equal(utimensat(AT_FDCWD, f->log, ts, 0), 0);
    r = ingest(s, f->log, NULL);
    assert_int_equal(r.action, MFU_STORE_RESUMED);
    assert_int_equal(r.rows_written, MFU_STORE_RESUME_OVERLAP);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM steps"), 500);
    back = get_run(s, "train");
    assert_runs_equal(fresh, back);
    mfu_run_free(back);

    /* the source record */
    mfu_store_source src;
    mfu_error e;
    memset(&e, 0, sizeof e);
    int64_t id = 0;
    assert_int_equal(mfu_store_find_run(s, "train", &id, &e), MFU_OK);
    assert_int_equal(mfu_store_get_source(s, id, &src, &e), MFU_OK);
    assert_int_equal(src.bytes, sb.st_size);
    assert_int_equal(src.lines, 501);
    assert_int_equal(src.inode, (int64_t)sb.st_ino);
    assert_int_equal(src.head_bytes, MFU_STORE_HASH_BYTES);
    assert_true(src.complete);
    assert_int_equal(src.path[0], '/');
    assert_non_null(strstr(src.path, "/train.log"));

    /* another file whose name gives the same run name is refused */
    char other[400];
    snprintf(other, sizeof other, "%s/sub", f->dir);
    assert_int_equal(mkdir(other, 0700), 0);
    snprintf(other, sizeof other, "%s/sub/train.log", f->dir);
    write_log(other, "w", 1, 20);
    mfu_store_ingest_result r2;
    assert_int_equal(mfu_store_ingest_path(s, other, NULL, &r2, &e), MFU_E_INVALID);
    assert_non_null(strstr(e.message, "--run"));
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM steps"), 500); /* untouched */
    r = ingest(s, other, "train-2");
    assert_int_equal(r.action, MFU_STORE_CREATED);
    assert_int_equal(r.rows, 20);

    /* a missing file and an empty log are errors, and store nothing */
    char missing[400];
    snprintf(missing, sizeof missing, "%s/nope.log", f->dir);
    assert_int_equal(mfu_store_ingest_path(s, missing, NULL, &r2, &e), MFU_E_IO);
    assert_non_null(strstr(e.message, "cannot open"));
    FILE *fp = fopen(missing, "w");
    fputs("hello\nnothing to see\n", fp);
    fclose(fp);
    assert_int_equal(mfu_store_ingest_path(s, missing, NULL, &r2, &e), MFU_E_EMPTY);
    assert_int_equal(mfu_store_find_run(s, "nope", &id, &e), MFU_E_UNKNOWN);
    mfu_run_free(fresh);
    mfu_store_close(s);
    assert_integrity(f->db);
}

static void ingest_resumes_after_growth(void **state)
{
    fx *f = *state;
    write_log(f->log, "w", 1, 300);
    /* end with half a line, as a log being written often does */
    char line[512];
    int n = megatron_line(line, sizeof line, 301);
    FILE *fp = fopen(f->log, "a");
    fwrite(line, 1, (size_t)n / 2, fp);
    fclose(fp);
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_store_ingest_result r = ingest(s, f->log, "grow");
    assert_int_equal(r.action, MFU_STORE_CREATED);
    size_t first_rows = r.rows;
    assert_true(first_rows == 300 || first_rows == 301); /* the half line may give a row */
    assert_true(r.stats.truncated_last_line);

    /* the rest of the line, and 200 more */
    fp = fopen(f->log, "a");
    fputs(line + n / 2, fp);
    fclose(fp);
    write_log(f->log, "a", 302, 501);
    r = ingest(s, f->log, "grow");
    assert_int_equal(r.action, MFU_STORE_RESUMED);
    assert_int_equal(r.rows, 501);
    assert_int_equal(r.rows_written, 501 - (first_rows - MFU_STORE_RESUME_OVERLAP));
    mfu_run *fresh = parse(f->log), *back = get_run(s, "grow");
    assert_runs_equal(fresh, back);
    mfu_run_free(back);
    mfu_run_free(fresh);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM steps"), 501);
    assert_int_equal(sql_int(f->db, "SELECT max(row_no) FROM steps"), 500);
    assert_int_equal(sql_int(f->db, "SELECT last_step FROM runs"), 501);
    mfu_store_close(s);
}

static void ingest_restarts_when_replaced(void **state)
{
    fx *f = *state;
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_error e;
    memset(&e, 0, sizeof e);
    write_log(f->log, "w", 1, 400);
    ingest(s, f->log, NULL);
    int64_t id = 0;
    assert_int_equal(mfu_store_find_run(s, "train", &id, &e), MFU_OK);
    mfu_store_finding fd = {"stall", "info", 1, 2, NULL, NULL};
    assert_int_equal(mfu_store_replace_findings(s, id, &fd, 1, &e), MFU_OK);
    assert_int_equal(mfu_store_set_tag(s, id, "arm", "a", &e), MFU_OK);

    /* truncated in place (same inode), then rewritten shorter */
    write_log(f->log, "w", 1, 150);
    mfu_store_ingest_result r = ingest(s, f->log, NULL);
    assert_int_equal(r.action, MFU_STORE_RESTARTED);
    assert_non_null(strstr(r.reason, "truncated"));
    assert_int_equal(r.rows, 150);
    assert_int_equal(r.rows_written, 150);
    mfu_run *fresh = parse(f->log), *back = get_run(s, "train");
    assert_runs_equal(fresh, back);
    mfu_run_free(back);
    mfu_run_free(fresh);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM steps"), 150);
    /* tags stay; findings about the old rows go */
    char v[16];
    assert_int_equal(mfu_store_get_tag(s, id, "arm", v, sizeof v, &e), MFU_OK);
    mfu_store_findings *fs = NULL;
    assert_int_equal(mfu_store_get_findings(s, id, &fs, &e), MFU_OK);
    assert_int_equal(mfu_store_findings_count(fs), 0);
    mfu_store_findings_free(fs);

    /* replaced by another file (new inode) with more lines */
    char tmp[400];
    snprintf(tmp, sizeof tmp, "%s/new.log", f->dir);
    write_log(tmp, "w", 1, 200);
    assert_int_equal(rename(tmp, f->log), 0);
    r = ingest(s, f->log, NULL);
    assert_int_equal(r.action, MFU_STORE_RESTARTED);
    assert_non_null(strstr(r.reason, "replaced"));
    assert_int_equal(r.rows, 200);

    /* same inode, grown, but the start changed */
    FILE *fp = fopen(f->log, "r+");
    assert_non_null(fp);
    fputs("USING", fp); /* overwrite the first bytes */
    fclose(fp);
    write_log(f->log, "a", 201, 210);
    r = ingest(s, f->log, NULL);
    assert_int_equal(r.action, MFU_STORE_RESTARTED);
    assert_non_null(strstr(r.reason, "first"));
    assert_int_equal(r.rows, 210);

    /* same inode and start, grown, but a byte just before the old end changed */
    struct stat sb;
    assert_int_equal(stat(f->log, &sb), 0);
    fp = fopen(f->log, "r+");
    assert_int_equal(fseek(fp, sb.st_size - 40, SEEK_SET), 0);
    fputc('#', fp);
    fclose(fp);
    write_log(f->log, "a", 211, 220);
    r = ingest(s, f->log, NULL);
    assert_int_equal(r.action, MFU_STORE_RESTARTED);
    assert_non_null(strstr(r.reason, "before byte"));
    fresh = parse(f->log);
    back = get_run(s, "train");
    assert_runs_equal(fresh, back);
    mfu_run_free(back);
    mfu_run_free(fresh);
    mfu_store_close(s);
    assert_integrity(f->db);
}

static void ingest_stdin_needs_a_name(void **state)
{
    fx *f = *state;
    write_log(f->log, "w", 1, 40);
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_error e;
    memset(&e, 0, sizeof e);
    FILE *fp = fopen(f->log, "rb");
    mfu_store_ingest_result r;
    assert_int_equal(mfu_store_ingest_file(s, fp, "-", NULL, &r, &e), MFU_E_INVALID);
    assert_non_null(strstr(e.message, "--run"));
    mfu_store_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.run_name = "piped";
    assert_int_equal(mfu_store_ingest_file(s, fp, "-", &o, &r, &e), MFU_OK);
    assert_int_equal(r.action, MFU_STORE_CREATED);
    assert_int_equal(r.rows, 40);
    rewind(fp);
    assert_int_equal(mfu_store_ingest_file(s, fp, "-", &o, &r, &e), MFU_OK);
    assert_int_equal(r.action, MFU_STORE_RESTARTED); /* no identity: rewritten */
    assert_int_equal(r.rows_written, 40);
    fclose(fp);
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM steps"), 40);
    /* a file cannot take over the stdin run */
    o.run_name = "piped";
    assert_int_equal(mfu_store_ingest_path(s, f->log, &o, &r, &e), MFU_E_INVALID);
    mfu_store_close(s);
}

/* ---- concurrency ------------------------------------------------------------------------ */

typedef struct watch {
    mfu_store *reader;
    int64_t id;
    const mfu_run *expected;
    size_t calls;
    size_t last_done;
} watch;

/* Called by the writer after each commit: another connection sees exactly that prefix. */
static void check_prefix(void *ctx, size_t done, size_t total)
{
    watch *w = ctx;
    w->calls++;
    assert_int_equal(total, mfu_run_count(w->expected));
    assert_true(done > w->last_done || done == total);
    w->last_done = done;
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (w->id == 0)
        assert_int_equal(mfu_store_find_run(w->reader, "big", &w->id, &e), MFU_OK);
    mfu_run *seen = NULL;
    assert_int_equal(mfu_store_get_run(w->reader, w->id, &seen, &e), MFU_OK);
    assert_int_equal(mfu_run_count(seen), done);
    for (size_t i = 0; i < done; i++) {
        mfu_step a, b;
        mfu_run_get(seen, i, &a);
        mfu_run_get(w->expected, i, &b);
        assert_true(mfu__step_equal(&a, &b));
    }
    mfu_store_list *l = NULL;
    assert_int_equal(mfu_store_list_runs(w->reader, &l, &e), MFU_OK);
    assert_int_equal(mfu_store_list_at(l, 0)->steps, (int64_t)done);
    assert_int_equal(mfu_store_list_at(l, 0)->complete, done == total);
    mfu_store_list_free(l);
    mfu_run_free(seen);
}

static void concurrent_reader_and_writers(void **state)
{
    fx *f = *state;
    mfu_store *w = open_store(f->db, MFU_STORE_CREATE);
    mfu_store *rd = open_store(f->db, MFU_STORE_READONLY);
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_run *run = odd_run(120);
    watch wt = {rd, 0, run, 0, 0};
    assert_int_equal(mfu_store_set_batch_rows(w, 25, &e), MFU_OK);
    mfu_store_set_progress(w, check_prefix, &wt);
    assert_int_equal(mfu_store_put_run(w, "big", run, NULL, &e), MFU_OK);
    assert_int_equal(wt.calls, 5); /* 25+25+25+25+20 */
    mfu_store_set_progress(w, NULL, NULL);

    /* another process holds the write lock with an uncommitted change */
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(f->db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h,
                                  "BEGIN IMMEDIATE; UPDATE runs SET name='renamed';"
                                  "DELETE FROM steps WHERE row_no >= 60;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    /* readers go on, seeing the last commit */
    mfu_run *seen = get_run(rd, "big");
    assert_runs_equal(run, seen);
    mfu_run_free(seen);
    /* a writer waits, then fails with an error that says why */
    assert_int_equal(mfu_store_set_busy_timeout(w, 50, &e), MFU_OK);
    assert_int_equal(mfu_store_put_run(w, "big", run, NULL, &e), MFU_E_IO);
    assert_non_null(strstr(e.message, "locked"));
    assert_non_null(strstr(e.message, "--wait"));
    int64_t id = 0;
    assert_int_equal(mfu_store_find_run(w, "big", &id, &e), MFU_OK);
    assert_int_equal(mfu_store_set_tag(w, id, "k", "v", &e), MFU_E_IO);
    assert_int_equal(sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    /* and succeeds once the lock is gone */
    assert_int_equal(mfu_store_set_tag(w, id, "k", "v", &e), MFU_OK);

    /* a second handle changing the run between an ingest's read and its write is caught */
    mfu_store *w2 = open_store(f->db, 0);
    write_log(f->log, "w", 1, 30);
    ingest(w, f->log, "live");
    int64_t live = 0;
    assert_int_equal(mfu_store_find_run(w, "live", &live, &e), MFU_OK);
    size_t nrows = 0;
    int64_t gen = 0;
    assert_int_equal(mfu__store_run_state(w, live, &nrows, &gen, &e), MFU_OK);
    mfu_step extra;
    mfu_step_init(&extra);
    extra.step = 999;
    assert_int_equal(mfu_store_append_steps(w2, live, &extra, 1, &e), MFU_OK);
    mfu__store_write wr;
    memset(&wr, 0, sizeof wr);
    wr.id = live;
    wr.from = 0;
    wr.total = 0;
    wr.check_gen = true;
    wr.gen = gen;
    assert_int_equal(mfu__store_write_rows(w, &wr, &e), MFU_E_IO);
    assert_non_null(strstr(e.message, "changed"));
    assert_int_equal(sql_int(f->db, "SELECT nrows FROM runs WHERE name='live'"), 31);
    mfu_store_close(w2);

    mfu_run_free(run);
    mfu_store_close(rd);
    mfu_store_close(w);
    assert_integrity(f->db);
}

/* ---- a writer killed in the middle ------------------------------------------------------ */

#define KILL_STEPS 20000L
#define KILL_BATCH 200

typedef struct child_ctx {
    int fd;
    bool told;
} child_ctx;

/* In the child, after each commit: tell the parent once 5 batches are in and go on at full
 * speed, so that the kill lands inside the next batch's transaction; at 50 batches stop and
 * wait for the kill, so that a slow parent still kills an unfinished ingest. */
static void tell_parent(void *ctx, size_t done, size_t total)
{
    child_ctx *c = ctx;
    (void)total;
    if (!c->told && done >= 5 * KILL_BATCH) {
        c->told = true;
        char b = 'x';
        if (write(c->fd, &b, 1) != 1)
            _exit(3);
    }
    if (done >= 50 * KILL_BATCH)
        for (;;)
            pause();
}

static void killed_mid_ingest(void **state)
{
    fx *f = *state;
    write_log(f->log, "w", 1, KILL_STEPS);
    /* create the store first so that parent and child agree on the schema */
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_store_close(s);
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        mfu_store *cs = NULL;
        mfu_error ce;
        memset(&ce, 0, sizeof ce);
        if (mfu_store_open(f->db, 0, &cs, &ce) != MFU_OK ||
            mfu_store_set_batch_rows(cs, KILL_BATCH, &ce) != MFU_OK)
            _exit(2);
        child_ctx c = {p[1], false};
        mfu_store_set_progress(cs, tell_parent, &c);
        mfu_store_ingest_result r;
        mfu_store_ingest_path(cs, f->log, NULL, &r, &ce);
        _exit(4); /* finished before the kill: the test could not interrupt it */
    }
    close(p[1]);
    char b = 0;
    assert_int_equal(read(p[0], &b, 1), 1);
    kill(pid, SIGKILL);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    close(p[0]);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);

    /* the store is sound, and holds a committed prefix of the run */
    assert_integrity(f->db);
    s = open_store(f->db, 0);
    mfu_store_list *l = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_store_list_runs(s, &l, &e), MFU_OK);
    assert_int_equal(mfu_store_list_count(l), 1);
    const mfu_store_run_info *info = mfu_store_list_at(l, 0);
    int64_t n = info->steps;
    assert_false(info->complete);
    assert_true(n >= 5 * KILL_BATCH && n <= 50 * KILL_BATCH);
    assert_int_equal(n % KILL_BATCH, 0); /* whole batches only */
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM steps"), n);
    assert_int_equal(sql_int(f->db, "SELECT coalesce(max(row_no), -1) FROM steps"), n - 1);
    assert_int_equal(info->last_step, n);
    mfu_store_list_free(l);
    mfu_run *fresh = parse(f->log), *back = get_run(s, "train");
    assert_int_equal(mfu_run_count(back), (size_t)n);
    for (size_t i = 0; i < (size_t)n; i++) {
        mfu_step a, c;
        mfu_run_get(back, i, &a);
        mfu_run_get(fresh, i, &c);
        assert_true(mfu__step_equal(&a, &c));
    }
    mfu_run_free(back);

    /* ingesting again completes it to exactly the log's rows */
    mfu_store_ingest_result r = ingest(s, f->log, NULL);
    assert_int_equal(r.action, MFU_STORE_RESUMED);
    assert_int_equal(r.rows, KILL_STEPS);
    assert_int_equal(r.rows_written, KILL_STEPS - (n - MFU_STORE_RESUME_OVERLAP));
    assert_int_equal(sql_int(f->db, "SELECT count(*) FROM steps"), KILL_STEPS);
    assert_int_equal(sql_int(f->db, "SELECT complete FROM runs"), 1);
    back = get_run(s, "train");
    assert_runs_equal(fresh, back);
    mfu_run_free(back);
    mfu_run_free(fresh);
    r = ingest(s, f->log, NULL);
    assert_int_equal(r.action, MFU_STORE_UNCHANGED);
    mfu_store_close(s);
    assert_integrity(f->db);
}

/* An append to a run whose ingest was interrupted leaves it incomplete, so the next ingest
 * still finishes it. */
static void append_keeps_incomplete(void **state)
{
    fx *f = *state;
    write_log(f->log, "w", 1, 100);
    mfu_store *s = open_store(f->db, MFU_STORE_CREATE);
    mfu_store_ingest_result r = ingest(s, f->log, NULL);
    assert_int_equal(r.rows, 100);
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(f->db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "UPDATE runs SET complete=0", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_step extra;
    mfu_step_init(&extra);
    extra.step = 5000;
    assert_int_equal(mfu_store_append_steps(s, r.run_id, &extra, 1, &e), MFU_OK);
    assert_int_equal(sql_int(f->db, "SELECT complete FROM runs"), 0);
    r = ingest(s, f->log, NULL);
    assert_int_equal(r.action, MFU_STORE_RESUMED);
    assert_int_equal(r.rows, 100); /* the log's rows again: the appended one is gone */
    assert_int_equal(sql_int(f->db, "SELECT complete FROM runs"), 1);
    mfu_store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(open_create_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(open_refuses_other_files, setup, teardown),
        cmocka_unit_test_setup_teardown(damaged_store, setup, teardown),
        cmocka_unit_test_setup_teardown(round_trip_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(names_and_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(append_and_list, setup, teardown),
        cmocka_unit_test_setup_teardown(tags, setup, teardown),
        cmocka_unit_test_setup_teardown(context, setup, teardown),
        cmocka_unit_test_setup_teardown(findings, setup, teardown),
        cmocka_unit_test_setup_teardown(delete_cascades, setup, teardown),
        cmocka_unit_test_setup_teardown(ingest_idempotent, setup, teardown),
        cmocka_unit_test_setup_teardown(ingest_resumes_after_growth, setup, teardown),
        cmocka_unit_test_setup_teardown(ingest_restarts_when_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(ingest_stdin_needs_a_name, setup, teardown),
        cmocka_unit_test_setup_teardown(concurrent_reader_and_writers, setup, teardown),
        cmocka_unit_test_setup_teardown(killed_mid_ingest, setup, teardown),
        cmocka_unit_test_setup_teardown(append_keeps_incomplete, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
