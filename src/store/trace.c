/*
 * trace.c - a profiler trace's views attached to a stored run (mfu trace --attach RUN): one
 * row per run in a table of its own, made on the first attach, so that stores written before
 * it (and their schema migrations) are untouched. The text is the JSON of mfu trace --json
 * (src/trace/json.c); the dashboard reads it back through GET /api/runs/{run}/trace.
 */
#include "store/internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static const char TABLE[] = "CREATE TABLE IF NOT EXISTS run_traces("
                            " run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,"
                            " attached_s INTEGER NOT NULL,"
                            " json TEXT NOT NULL)";

mfu_status mfu_store_put_trace(mfu_store *s, int64_t id, const char *json, mfu_error *err)
{
    if (!s || !json)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_put_trace: NULL argument");
    if (strlen(json) > MFU_STORE_TRACE_MAX)
        return mfu__fail(err, MFU_E_LIMIT, 0,
                         "the trace views are %zu bytes, above MFU_STORE_TRACE_MAX (%d); attach "
                         "fewer ranks or list fewer kernels (--kernels)",
                         strlen(json), MFU_STORE_TRACE_MAX);
    mfu_status rs = mfu__store_writable(s, err);
    if (rs == MFU_OK)
        rs = mfu__store_begin(s, err);
    if (rs != MFU_OK)
        return rs;
    rs = mfu__store_exec(s, TABLE, err);
    sqlite3_stmt *st = NULL;
    if (rs == MFU_OK)
        rs = mfu__store_prepare(s,
                                "INSERT OR REPLACE INTO run_traces(run_id, attached_s, json) "
                                "SELECT id, ?, ? FROM runs WHERE id=?",
                                &st, err);
    if (rs == MFU_OK) {
        sqlite3_bind_int64(st, 1, mfu__store_now_s());
        sqlite3_bind_text(st, 2, json, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, id);
        int rc = sqlite3_step(st);
        if (rc != SQLITE_DONE)
            rs = mfu__store_fail(s, err, rc, "attaching the trace");
        else if (sqlite3_changes(s->db) == 0)
            rs = mfu__fail(err, MFU_E_INVALID, 0,
                           "no run with id %lld; list the runs with "
                           "'mfu runs'",
                           (long long)id);
    }
    sqlite3_finalize(st);
    if (rs == MFU_OK)
        return mfu__store_commit(s, err);
    mfu__store_rollback(s);
    return rs;
}

mfu_status mfu_store_get_trace(mfu_store *s, int64_t id, char **out, mfu_error *err)
{
    if (out)
        *out = NULL;
    if (!s || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_get_trace: NULL argument");
    sqlite3_stmt *st = NULL;
    /* a store that never had a trace attached has no table: nothing attached */
    int rc = sqlite3_prepare_v2(s->db, "SELECT json FROM run_traces WHERE run_id=?", -1, &st, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(st);
        return strstr(sqlite3_errmsg(s->db), "no such table")
                   ? MFU_OK
                   : mfu__store_fail(s, err, rc, "reading the attached trace");
    }
    sqlite3_bind_int64(st, 1, id);
    mfu_status rs = MFU_OK;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        if (v && !(*out = mfu__strdup(v)))
            rs = mfu__fail(err, MFU_E_NOMEM, 0, "out of memory reading the attached trace");
    } else if (rc != SQLITE_DONE) {
        rs = mfu__store_fail(s, err, rc, "reading the attached trace");
    }
    sqlite3_finalize(st);
    return rs;
}
