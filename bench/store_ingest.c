/*
 * store_ingest.c - how fast the run store writes step rows, against the naive way.
 *
 * Builds a synthetic run of N steps (default 1e6) with every field set (schema 3's per-step
 * configuration and telemetry included), then times
 *   store:    mfu_store_put_run(): batched transactions (MFU_STORE_BATCH_ROWS rows each),
 *             one prepared statement reused;
 *   baseline: the same rows into the same schema and connection settings (WAL,
 *             synchronous=NORMAL), one INSERT per transaction (autocommit), statement
 *             prepared once - the naive loop, batching being the only difference.
 * The baseline writes its first B rows only (default 50 000: at one commit per row the full
 * million takes minutes on a real disk); rates are compared in rows/s. Prints both rates and
 * their ratio. Not a test: numbers depend on the disk.
 *
 * With --get DB: times mfu_store_get_run() of run NAME (--run, default "big") of the store DB
 * instead, ROUNDS times (--rounds, default 5), in CPU seconds of this process, and prints each
 * round and the median (the rows of a stored run read back: column chunks, then rows).
 *
 * usage: bench_store_ingest [--rows N] [--baseline-rows B] [--dir DIR]
 *        bench_store_ingest --get DB [--run NAME] [--rounds ROUNDS]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "mfu/mfu.h"
#include "util/util.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what, const mfu_error *e)
{
    fprintf(stderr, "bench_store_ingest: %s: %s\n", what, e ? e->message : "");
    exit(1);
}

static void fill_step(mfu_step *s, int64_t i)
{
    mfu_step_init(s);
    s->step = i + 1;
    s->rank = 0;
    s->time_s = 1.7e9 + (double)i * 0.5;
    s->step_time_s = 0.5 + 1e-4 * (double)(i % 100);
    s->tokens = 4194304;
    s->samples = 1024;
    s->loss = 10.0 / (1.0 + (double)i * 1e-4);
    s->lr = 3e-4;
    s->grad_norm = 1.0 + 0.01 * (double)(i % 7);
    s->memory_bytes = 7.0e10;
    s->tokens_per_s = s->tokens / s->step_time_s;
    s->tokens_per_s_scope = MFU_SCOPE_GLOBAL;
    s->flops_per_s = 4.0e14;
    s->flops_per_s_scope = MFU_SCOPE_DEVICE;
    s->mfu = 0.41;
    s->mfu_scope = MFU_SCOPE_DEVICE;
    /* the per-step configuration and telemetry of schema 3 */
    s->seq_len = 4096;
    s->devices = 1024;
    s->useful_tokens = 0.97 * s->tokens;
    s->clock_mhz = 1980 - (double)(i % 13);
    s->power_w = 690 + (double)(i % 11);
    s->power_limit_w = 700;
    s->data_loading_s = 0.004;
    s->comm_s = 0.03;
    s->optimizer_s = 0.01;
    s->recompute = 1;
    s->dtype = 3;
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* --get: mfu_store_get_run of run name in db, rounds times. */
static int time_get(const char *db, const char *name, int64_t rounds)
{
    mfu_error e;
    mfu_store *s = NULL;
    if (mfu_store_open(db, MFU_STORE_READONLY, &s, &e) != MFU_OK)
        die("opening the store", &e);
    int64_t id = 0;
    if (mfu_store_find_run(s, name, &id, &e) != MFU_OK)
        die("finding the run", &e);
    double t[64];
    if (rounds > 64)
        rounds = 64;
    size_t n = 0;
    for (int64_t r = 0; r < rounds; r++) {
        mfu_run *run = NULL;
        double t0 = cpu_s();
        if (mfu_store_get_run(s, id, &run, &e) != MFU_OK)
            die("reading the run", &e);
        t[r] = cpu_s() - t0;
        n = mfu_run_count(run);
        mfu_run_free(run);
        printf("round %lld: mfu_store_get_run %zu rows %.3f s CPU\n", (long long)r + 1, n, t[r]);
    }
    qsort(t, (size_t)rounds, sizeof *t, cmp_double);
    printf("median of %lld: %.3f s CPU (%.1f ns/row)\n", (long long)rounds, t[rounds / 2],
           n ? t[rounds / 2] * 1e9 / (double)n : 0.0);
    mfu_store_close(s);
    return 0;
}

int main(int argc, char **argv)
{
    int64_t rows = 1000000, base_rows = 50000, rounds = 5;
    const char *dir = NULL, *get = NULL, *run_name = "big";
    for (int i = 1; i + 1 < argc; i += 2) {
        int64_t v = 0;
        if (strcmp(argv[i], "--rows") == 0 && mfu__parse_int64(argv[i + 1], &v) && v > 0)
            rows = v;
        else if (strcmp(argv[i], "--baseline-rows") == 0 && mfu__parse_int64(argv[i + 1], &v) &&
                 v > 0)
            base_rows = v;
        else if (strcmp(argv[i], "--dir") == 0)
            dir = argv[i + 1];
        else if (strcmp(argv[i], "--get") == 0)
            get = argv[i + 1];
        else if (strcmp(argv[i], "--run") == 0)
            run_name = argv[i + 1];
        else if (strcmp(argv[i], "--rounds") == 0 && mfu__parse_int64(argv[i + 1], &v) && v > 0)
            rounds = v;
        else {
            fprintf(stderr, "usage: bench_store_ingest [--rows N] [--baseline-rows B] [--dir DIR]\n"
                            "       bench_store_ingest --get DB [--run NAME] [--rounds N]\n");
            return 2;
        }
    }
    if (get)
        return time_get(get, run_name, rounds);
    if (base_rows > rows)
        base_rows = rows;
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/mfu-bench-XXXXXX", dir ? dir : "/tmp");
    if (!mkdtemp(tmpl)) {
        perror("mkdtemp");
        return 1;
    }
    char db1[600], db2[600];
    snprintf(db1, sizeof db1, "%s/store.db", tmpl);
    snprintf(db2, sizeof db2, "%s/naive.db", tmpl);

    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_run *run = mfu_run_new();
    if (!run)
        die("out of memory", NULL);
    for (int64_t i = 0; i < rows; i++) {
        mfu_step s;
        fill_step(&s, i);
        if (mfu_run_append(run, &s, NULL, &e) != MFU_OK)
            die("building the run", &e);
    }
    mfu__strlcpy(mfu_run_meta_mut(run)->format, "synthetic", sizeof mfu_run_meta_mut(run)->format);

    /* The store. */
    mfu_store *st = NULL;
    if (mfu_store_open(db1, MFU_STORE_CREATE, &st, &e) != MFU_OK)
        die("open", &e);
    double t0 = now_s();
    if (mfu_store_put_run(st, "bench", run, NULL, &e) != MFU_OK)
        die("put_run", &e);
    double t_store = now_s() - t0;
    mfu_store_close(st);

    /* The baseline: same schema (made by the store), one transaction per row. */
    if (mfu_store_open(db2, MFU_STORE_CREATE, &st, &e) != MFU_OK)
        die("open", &e);
    mfu_run *empty = mfu_run_new();
    int64_t id = 0;
    if (!empty || mfu_store_put_run(st, "naive", empty, &id, &e) != MFU_OK)
        die("put_run", &e);
    mfu_run_free(empty);
    mfu_store_close(st);
    sqlite3 *db = NULL;
    if (sqlite3_open(db2, &db) != SQLITE_OK ||
        sqlite3_exec(db,
                     "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON",
                     NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(stderr, "bench_store_ingest: %s\n", sqlite3_errmsg(db));
        return 1;
    }
    sqlite3_stmt *ins = NULL;
    if (sqlite3_prepare_v2(
            db,
            "INSERT INTO steps(run_id, row_no, step, rank, flags, time_s, "
            "step_time_s, tokens, samples, loss, lr, grad_norm, memory_bytes, "
            "tokens_per_s, tokens_per_s_scope, flops_per_s, flops_per_s_scope, mfu, "
            "mfu_scope, samples_per_s, samples_per_s_scope, seq_len, devices, "
            "useful_tokens, clock_mhz, power_w, power_limit_w, data_loading_s, "
            "comm_s, optimizer_s, recompute, dtype) "
            "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            -1, &ins, NULL) != SQLITE_OK) {
        fprintf(stderr, "bench_store_ingest: %s\n", sqlite3_errmsg(db));
        return 1;
    }
    t0 = now_s();
    for (int64_t i = 0; i < base_rows; i++) {
        mfu_step s;
        mfu_run_get(run, (size_t)i, &s);
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, id);
        sqlite3_bind_int64(ins, 2, i);
        sqlite3_bind_int64(ins, 3, s.step);
        sqlite3_bind_int(ins, 4, s.rank);
        sqlite3_bind_int64(ins, 5, s.flags);
        const double v[] = {s.time_s, s.step_time_s, s.tokens,    s.samples,
                            s.loss,   s.lr,          s.grad_norm, s.memory_bytes};
        for (int k = 0; k < 8; k++)
            sqlite3_bind_double(ins, 6 + k, v[k]);
        sqlite3_bind_double(ins, 14, s.tokens_per_s);
        sqlite3_bind_int(ins, 15, s.tokens_per_s_scope);
        sqlite3_bind_double(ins, 16, s.flops_per_s);
        sqlite3_bind_int(ins, 17, s.flops_per_s_scope);
        sqlite3_bind_double(ins, 18, s.mfu);
        sqlite3_bind_int(ins, 19, s.mfu_scope);
        sqlite3_bind_null(ins, 20);
        sqlite3_bind_int(ins, 21, s.samples_per_s_scope);
        const double w[] = {s.seq_len,        s.devices, s.useful_tokens,
                            s.clock_mhz,      s.power_w, s.power_limit_w,
                            s.data_loading_s, s.comm_s,  s.optimizer_s};
        for (int k = 0; k < 9; k++)
            sqlite3_bind_double(ins, 22 + k, w[k]);
        sqlite3_bind_int(ins, 31, s.recompute);
        sqlite3_bind_int(ins, 32, s.dtype);
        if (sqlite3_step(ins) != SQLITE_DONE) {
            fprintf(stderr, "bench_store_ingest: %s\n", sqlite3_errmsg(db));
            return 1;
        }
    }
    double t_base = now_s() - t0;
    sqlite3_finalize(ins);
    sqlite3_close(db);

    double r_store = (double)rows / t_store, r_base = (double)base_rows / t_base;
    printf("store    (batches of %d rows): %lld rows in %.3f s = %.0f rows/s\n",
           MFU_STORE_BATCH_ROWS, (long long)rows, t_store, r_store);
    printf("baseline (one row per commit): %lld rows in %.3f s = %.0f rows/s\n",
           (long long)base_rows, t_base, r_base);
    printf("ratio store/baseline: %.1fx\n", r_store / r_base);

    mfu_run_free(run);
    const char *files[] = {"store.db", "store.db-wal", "store.db-shm",
                           "naive.db", "naive.db-wal", "naive.db-shm"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[700];
        snprintf(p, sizeof p, "%s/%s", tmpl, files[i]);
        unlink(p);
    }
    rmdir(tmpl);
    return 0;
}
