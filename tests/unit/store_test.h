/*
 * store_test.h - helpers shared by the run-store test programs (test_store.c,
 * test_store_fields.c), header-only: open a store, read a run back by name, parse a log, read
 * an integer through a separate raw SQLite connection. Each fails the test (cmocka) on error.
 */
#ifndef MFU_STORE_TEST_H
#define MFU_STORE_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "mfu/mfu.h"

static inline mfu_store *open_store(const char *path, unsigned flags)
{
    mfu_store *s = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (mfu_store_open(path, flags, &s, &e) != MFU_OK)
        fail_msg("open %s: %s", path, e.message);
    return s;
}

/* The run called name, read back from the store. */
static inline mfu_run *get_run(mfu_store *s, const char *name)
{
    mfu_error e;
    memset(&e, 0, sizeof e);
    int64_t id = 0;
    if (mfu_store_find_run(s, name, &id, &e) != MFU_OK)
        fail_msg("find %s: %s", name, e.message);
    mfu_run *run = NULL;
    if (mfu_store_get_run(s, id, &run, &e) != MFU_OK)
        fail_msg("get %s: %s", name, e.message);
    return run;
}

/* The run a fresh parse of path gives. */
static inline mfu_run *parse(const char *path)
{
    mfu_run *run = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (mfu_ingest_path(path, NULL, &run, NULL, &e) != MFU_OK)
        fail_msg("parse %s: %s", path, e.message);
    return run;
}

/* A fresh store path in /tmp (the file not made yet) in buf (at least 32 bytes). */
static inline void temp_store_path(char *buf, size_t n)
{
    snprintf(buf, n, "/tmp/mfu-store-test-XXXXXX");
    int fd = mkstemp(buf);
    assert_true(fd >= 0);
    close(fd);
    unlink(buf);
}

/* Remove a store file and the WAL files beside it. */
static inline void remove_store_files(const char *db)
{
    char p[4200];
    unlink(db);
    snprintf(p, sizeof p, "%s-wal", db);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", db);
    unlink(p);
}

/* An integer from SQL on a separate raw connection (-1 when no row). */
static inline int64_t sql_int(const char *db, const char *sql)
{
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(h));
    int64_t v = -1;
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

#endif
