/*
 * rows.c - step rows and run metadata: the batched writer, put / append / get, delete.
 *
 * Rows are keyed by (run_id, row_no), row_no = the row's index in the run, 0-based. A run
 * table may repeat a step number (a restarted job counts again from its checkpoint), so the
 * step number alone is not a key; the row number is, and it gives the rows back in order.
 *
 * The writer's invariant: after every commit, run r holds exactly rows 0..nrows-1, where
 * runs.nrows is written in the same transaction as the rows. The first transaction of a write
 * deletes rows >= from, so a reader never sees a gap or rows of two different reads.
 *
 * Per-rank observations (table rank_obs) are keyed by (run_id, seq), seq = the observation's
 * index in the run, and name their row (row_no). They are written in their order, each once
 * its row is written, and deleted with the rows: after every commit the store holds a prefix
 * of the numbering and none names a row the run does not hold.
 */
#include "store/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/utf8.h"
#include "util/util.h"

/* The columns of a step row: one per member of mfu_step (mfu/step_fields.h; the flag bits are
 * the flags column), under the member's name, in struct order: "step, time_s, ...". INSERT,
 * SELECT, bind_step and read_step all expand the same list, so they stay in step. */
#define COLS_STEP(name) #name
#define COLS_OTHER(name) ", " #name
#define COLS(kind, name, NAME, arg, map, since, unit, what, help)                                  \
    MFU__STEP_IF_MEMBER_##kind(COLS_##kind(name))
#define COLS_DOUBLE COLS_OTHER
#define COLS_SCOPE COLS_OTHER
#define COLS_FLAGS COLS_OTHER
#define COLS_RANK COLS_OTHER
#define COLS_CODE COLS_OTHER
#define STEP_COLUMNS MFU_STEP_FIELDS(COLS)
#define QMARK(kind, name, NAME, arg, map, since, unit, what, help) MFU__STEP_IF_MEMBER_##kind(",?")

static const char insert_sql[] = "INSERT OR REPLACE INTO steps(run_id, row_no, " STEP_COLUMNS
                                 ") VALUES(?,?" MFU_STEP_FIELDS(QMARK) ")";

static const char insert_obs_sql[] = "INSERT OR REPLACE INTO rank_obs(run_id, seq, row_no, step, "
                                     "rank, step_time_s, tokens_per_s) VALUES(?,?,?,?,?,?,?)";

static void bind_real(sqlite3_stmt *st, int i, double v)
{
    if (isnan(v))
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_double(st, i, v);
}

static double col_real(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* A code column (recompute, dtype): -1 (unknown) for NULL or a value outside int32. */
static int32_t col_code(sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return -1;
    sqlite3_int64 v = sqlite3_column_int64(st, i);
    return v >= INT32_MIN && v <= INT32_MAX ? (int32_t)v : -1;
}

static mfu_scope col_scope(sqlite3_stmt *st, int i)
{
    int v = sqlite3_column_int(st, i);
    return v == MFU_SCOPE_DEVICE   ? MFU_SCOPE_DEVICE
           : v == MFU_SCOPE_GLOBAL ? MFU_SCOPE_GLOBAL
                                   : MFU_SCOPE_UNKNOWN;
}

/* Bind the fields of *s from parameter `first` on (STEP_COLUMNS order): doubles NULL when
 * absent, the rest as integers. */
#define BIND_STEP(name) sqlite3_bind_int64(st, i++, s->name);
#define BIND_DOUBLE(name) bind_real(st, i++, s->name);
#define BIND_SCOPE(name) sqlite3_bind_int(st, i++, (int)s->name);
#define BIND_FLAGS(name) sqlite3_bind_int64(st, i++, (sqlite3_int64)s->name);
#define BIND_RANK(name) sqlite3_bind_int(st, i++, s->name);
#define BIND_CODE(name) sqlite3_bind_int(st, i++, s->name);
#define BIND_BIT(name)
#define BIND_NANBIT(name)
#define BIND(kind, name, NAME, arg, map, since, unit, what, help) BIND_##kind(name)
static void bind_step(sqlite3_stmt *st, int first, const mfu_step *s)
{
    int i = first;
    MFU_STEP_FIELDS(BIND)
}

/* Read the fields of a step from column `first` on (STEP_COLUMNS order). */
#define READ_STEP(name) s->name = sqlite3_column_int64(st, i++);
#define READ_DOUBLE(name) s->name = col_real(st, i++);
#define READ_SCOPE(name) s->name = col_scope(st, i++);
#define READ_FLAGS(name) s->name = (uint32_t)sqlite3_column_int64(st, i++);
#define READ_RANK(name) s->name = (int32_t)sqlite3_column_int(st, i++);
#define READ_CODE(name) s->name = col_code(st, i++);
#define READ_BIT(name)
#define READ_NANBIT(name)
#define READ(kind, name, NAME, arg, map, since, unit, what, help) READ_##kind(name)
static void read_step(sqlite3_stmt *st, int first, mfu_step *s)
{
    int i = first;
    mfu_step_init(s);
    MFU_STEP_FIELDS(READ)
}

/* ---- metadata as JSON ------------------------------------------------------------------- */

/* A string of the log's header: bytes that are not UTF-8 are stored as U+FFFD (jansson refuses
 * them, and the store keeps only valid UTF-8; mfu__store_meta_repairs counts them). */
static int put_str(json_t *o, const char *k, const char *v)
{
    if (!v[0])
        return 0;
    char fixed[3 * MFU_META_STR + 1];
    if (!mfu__utf8_valid(v, strlen(v), NULL)) {
        mfu__utf8_repair(v, fixed, sizeof fixed);
        v = fixed;
    }
    return json_object_set_new(o, k, json_string(v));
}

/* Bytes of s that start no valid UTF-8 sequence. */
static size_t bad_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), bad = 0;
    for (size_t i = 0; i < n;) {
        unsigned cp;
        size_t k = mfu__utf8_seq(p + i, n - i, &cp);
        bad += k == 0;
        i += k ? k : 1;
    }
    return bad;
}

size_t mfu__store_meta_repairs(const mfu_run_meta *m)
{
    return bad_utf8(m->format) + bad_utf8(m->model) + bad_utf8(m->device) + bad_utf8(m->dtype) +
           bad_utf8(m->convention);
}

static int put_real(json_t *o, const char *k, double v)
{
    return isnan(v) ? 0 : json_object_set_new(o, k, json_real(v));
}

static int put_int(json_t *o, const char *k, int64_t v)
{
    return v ? json_object_set_new(o, k, json_integer((json_int_t)v)) : 0;
}

char *mfu__store_meta_to_json(const mfu_run_meta *m)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = put_str(o, "format", m->format) | put_str(o, "model", m->model) |
              put_real(o, "model_params", m->model_params) |
              put_int(o, "global_batch", m->global_batch) |
              put_int(o, "micro_batch", m->micro_batch) | put_int(o, "seq_len", m->seq_len) |
              put_int(o, "world_size", m->world_size) | put_int(o, "grad_accum", m->grad_accum) |
              put_str(o, "device", m->device) | put_str(o, "dtype", m->dtype) |
              put_real(o, "tokens_per_step", m->tokens_per_step) |
              put_str(o, "convention", m->convention) |
              put_real(o, "reported_peak_flops_per_s", m->reported_peak_flops_per_s);
    /* 17 significant digits: every double prints back to itself. */
    char *text =
        bad ? NULL : json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(o);
    return text;
}

static void get_str(json_t *o, const char *k, char *dst, size_t n)
{
    json_t *v = json_object_get(o, k);
    if (json_is_string(v))
        mfu__strlcpy(dst, json_string_value(v), n);
}

static void get_real(json_t *o, const char *k, double *dst)
{
    json_t *v = json_object_get(o, k);
    if (json_is_number(v))
        *dst = json_number_value(v);
}

static void get_int(json_t *o, const char *k, int64_t *dst)
{
    json_t *v = json_object_get(o, k);
    if (json_is_integer(v))
        *dst = (int64_t)json_integer_value(v);
}

mfu_status mfu__store_meta_from_json(const char *text, mfu_run_meta *m, mfu_error *err)
{
    json_error_t je;
    json_t *o = json_loads(text ? text : "{}", 0, &je);
    if (!json_is_object(o)) {
        json_decref(o);
        return mfu__fail(err, MFU_E_PARSE, 0,
                         "run metadata in the store is not a JSON object (%s); ingest the run "
                         "again",
                         je.text);
    }
    get_str(o, "format", m->format, sizeof m->format);
    get_str(o, "model", m->model, sizeof m->model);
    get_real(o, "model_params", &m->model_params);
    get_int(o, "global_batch", &m->global_batch);
    get_int(o, "micro_batch", &m->micro_batch);
    get_int(o, "seq_len", &m->seq_len);
    get_int(o, "world_size", &m->world_size);
    get_int(o, "grad_accum", &m->grad_accum);
    get_str(o, "device", m->device, sizeof m->device);
    get_str(o, "dtype", m->dtype, sizeof m->dtype);
    get_real(o, "tokens_per_step", &m->tokens_per_step);
    get_str(o, "convention", m->convention, sizeof m->convention);
    get_real(o, "reported_peak_flops_per_s", &m->reported_peak_flops_per_s);
    json_decref(o);
    return MFU_OK;
}

/* ---- run rows --------------------------------------------------------------------------- */

mfu_status mfu__store_run_state(mfu_store *s, int64_t id, size_t *nrows, int64_t *gen,
                                mfu_error *err)
{
    sqlite3_stmt *st = NULL;
    mfu_status rs = mfu__store_prepare(s, "SELECT nrows, gen FROM runs WHERE id=?", &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        int64_t n = sqlite3_column_int64(st, 0);
        if (nrows)
            *nrows = n > 0 ? (size_t)n : 0;
        if (gen)
            *gen = sqlite3_column_int64(st, 1);
    } else if (rc == SQLITE_DONE) {
        rs = mfu__fail(err, MFU_E_INVALID, 0,
                       "%s: no run with id %lld; list the runs with 'mfu runs'", s->path,
                       (long long)id);
    } else {
        rs = mfu__store_fail(s, err, rc, "reading a run");
    }
    sqlite3_finalize(st);
    return rs;
}

mfu_status mfu__store_insert_run(mfu_store *s, const char *name, const mfu_run_meta *meta,
                                 int64_t *id, mfu_error *err)
{
    mfu_run_meta empty;
    if (!meta) {
        mfu_run *tmp = mfu_run_new();
        if (!tmp)
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
        empty = *mfu_run_meta_get(tmp);
        mfu_run_free(tmp);
        meta = &empty;
    }
    char *json = mfu__store_meta_to_json(meta);
    if (!json)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    sqlite3_stmt *st = NULL;
    mfu_status rs = mfu__store_prepare(
        s, "INSERT INTO runs(name, created_s, updated_s, format, meta_json) VALUES(?,?,?,?,?)", &st,
        err);
    if (rs == MFU_OK) {
        int64_t now = mfu__store_now_s();
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, now);
        sqlite3_bind_int64(st, 3, now);
        sqlite3_bind_text(st, 4, meta->format, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, json, -1, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_CONSTRAINT_UNIQUE)
            rs = mfu__fail_field(err, MFU_E_INVALID, "--run",
                                 "%s: a run called '%s' exists; pick another name, or remove it "
                                 "first (mfu rm %s)",
                                 s->path, name, name);
        else if (rc != SQLITE_DONE)
            rs = mfu__store_fail(s, err, rc, "creating a run");
        else if (id)
            *id = sqlite3_last_insert_rowid(s->db);
    }
    sqlite3_finalize(st);
    free(json);
    return rs;
}

mfu_status mfu__store_put_source(mfu_store *s, int64_t id, const mfu_store_source *src,
                                 mfu_error *err)
{
    mfu_store_source none;
    memset(&none, 0, sizeof none);
    if (!src)
        src = &none;
    sqlite3_stmt *st = NULL;
    mfu_status rs = mfu__store_prepare(s,
                                       "UPDATE runs SET src_path=?, src_dev=?, src_inode=?, "
                                       "src_mtime_ns=?, src_head_bytes=?, src_head_hash=?, "
                                       "src_tail_hash=?, src_bytes=?, src_lines=? WHERE id=?",
                                       &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_text(st, 1, src->path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, src->dev);
    sqlite3_bind_int64(st, 3, src->inode);
    sqlite3_bind_int64(st, 4, src->mtime_ns);
    sqlite3_bind_int64(st, 5, src->head_bytes);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)src->head_hash);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)src->tail_hash);
    sqlite3_bind_int64(st, 8, src->bytes);
    sqlite3_bind_int64(st, 9, src->lines);
    sqlite3_bind_int64(st, 10, id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? MFU_OK : mfu__store_fail(s, err, rc, "writing the source record");
}

/* Delete rows >= from, and store metadata / source, at the start of a write. */
static mfu_status write_head(mfu_store *s, const mfu__store_write *w, size_t from, mfu_error *err)
{
    sqlite3_stmt *st = NULL;
    mfu_status rs =
        mfu__store_prepare(s, "DELETE FROM steps WHERE run_id=? AND row_no>=?", &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_int64(st, 1, w->id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)from);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return mfu__store_fail(s, err, rc, "deleting rows");
    rs = mfu__chunk_delete_from(s, w->id, from, err);
    if (rs != MFU_OK)
        return rs;
    rs = mfu__store_prepare(s, "DELETE FROM rank_obs WHERE run_id=?1 AND (row_no>=?2 OR seq>=?3)",
                            &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_int64(st, 1, w->id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)from);
    sqlite3_bind_int64(st, 3, w->obs_src ? (sqlite3_int64)w->first_seq : INT64_MAX);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return mfu__store_fail(s, err, rc, "deleting per-rank observations");
    if (w->meta) {
        char *json = mfu__store_meta_to_json(w->meta);
        if (!json)
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
        rs = mfu__store_prepare(s, "UPDATE runs SET format=?, meta_json=? WHERE id=?", &st, err);
        if (rs == MFU_OK) {
            sqlite3_bind_text(st, 1, w->meta->format, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 2, json, -1, SQLITE_STATIC);
            sqlite3_bind_int64(st, 3, w->id);
            rc = sqlite3_step(st);
            sqlite3_finalize(st);
            if (rc != SQLITE_DONE)
                rs = mfu__store_fail(s, err, rc, "writing run metadata");
        }
        free(json);
        if (rs != MFU_OK)
            return rs;
    }
    if (w->src_mode != MFU__SRC_KEEP)
        return mfu__store_put_source(s, w->id, w->src_mode == MFU__SRC_SET ? w->src : NULL, err);
    return MFU_OK;
}

/* Record the state after rows [.., end) are in: row count, first/last step, completeness. */
static mfu_status write_tail(mfu_store *s, const mfu__store_write *w, size_t end,
                             const mfu_step *first, const mfu_step *last, bool complete,
                             mfu_error *err)
{
    sqlite3_stmt *st = NULL;
    mfu_status rs = mfu__store_prepare(
        s,
        "UPDATE runs SET nrows=?1, first_step=CASE WHEN ?1=0 THEN NULL WHEN ?2 IS NULL THEN "
        "first_step ELSE ?2 END, last_step=?3, complete=CASE WHEN ?7 THEN complete ELSE ?4 END, "
        "gen=gen+1, updated_s=?5 WHERE id=?6",
        &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_int64(st, 1, (sqlite3_int64)end);
    if (first)
        sqlite3_bind_int64(st, 2, first->step);
    else
        sqlite3_bind_null(st, 2);
    if (last)
        sqlite3_bind_int64(st, 3, last->step);
    else
        sqlite3_bind_null(st, 3);
    sqlite3_bind_int(st, 4, complete ? 1 : 0);
    sqlite3_bind_int64(st, 5, mfu__store_now_s());
    sqlite3_bind_int64(st, 6, w->id);
    /* An append adds rows after whatever is there: an interrupted ingest stays incomplete. */
    sqlite3_bind_int(st, 7, w->append ? 1 : 0);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? MFU_OK : mfu__store_fail(s, err, rc, "recording the row count");
}

static mfu_status insert_stmt(mfu_store *s, mfu_error *err)
{
    int rc = SQLITE_OK;
    if (!s->insert_step) {
        rc = sqlite3_prepare_v3(s->db, insert_sql, -1, SQLITE_PREPARE_PERSISTENT, &s->insert_step,
                                NULL);
        if (rc != SQLITE_OK)
            s->insert_step = NULL;
    }
    if (rc == SQLITE_OK && !s->insert_obs) {
        rc = sqlite3_prepare_v3(s->db, insert_obs_sql, -1, SQLITE_PREPARE_PERSISTENT,
                                &s->insert_obs, NULL);
        if (rc != SQLITE_OK)
            s->insert_obs = NULL;
    }
    return rc == SQLITE_OK ? MFU_OK : mfu__store_fail(s, err, rc, "preparing the row insert");
}

/* ---- per-rank observations -------------------------------------------------------------- */

size_t mfu__store_obs_first_seq(const mfu_run *run, size_t from)
{
    size_t n = mfu_run_rank_obs_count(run);
    for (size_t k = 0; k < n; k++) {
        mfu_rank_obs o;
        if (mfu_run_rank_obs_get(run, k, &o) && o.row >= from)
            return k;
    }
    return n;
}

/* Where this write's observations start (w->from is final). */
static void plan_obs(mfu__store_write *w)
{
    w->first_seq = w->obs_src ? mfu__store_obs_first_seq(w->obs_src, w->from) : 0;
    w->obs_next = w->first_seq;
}

/* Insert the next observations, in their order, while their rows are < end (inside the
 * batch's transaction). An observation of a later row holds back those after it until its
 * row is written: they are nearly in row order (a lagging rank is a few rows behind). */
static mfu_status write_obs(mfu_store *s, mfu__store_write *w, size_t end, mfu_error *err)
{
    if (!w->obs_src)
        return MFU_OK;
    sqlite3_stmt *ins = s->insert_obs;
    size_t n = mfu_run_rank_obs_count(w->obs_src);
    mfu_rank_obs o;
    for (; w->obs_next < n && mfu_run_rank_obs_get(w->obs_src, w->obs_next, &o) && o.row < end;
         w->obs_next++) {
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, w->id);
        sqlite3_bind_int64(ins, 2, (sqlite3_int64)w->obs_next);
        sqlite3_bind_int64(ins, 3, (sqlite3_int64)o.row);
        sqlite3_bind_int64(ins, 4, o.step);
        sqlite3_bind_int(ins, 5, o.rank);
        bind_real(ins, 6, o.step_time_s);
        bind_real(ins, 7, o.tokens_per_s);
        int rc = sqlite3_step(ins);
        sqlite3_reset(ins);
        if (rc != SQLITE_DONE)
            return mfu__store_fail(s, err, rc, "writing per-rank observations");
    }
    return MFU_OK;
}

mfu_status mfu__store_obs_prefix(mfu_store *s, int64_t id, size_t before, size_t rows, size_t *n,
                                 mfu_rank_obs *last, bool *found, mfu_error *err)
{
    *n = 0;
    *found = false;
    sqlite3_stmt *st = NULL;
    mfu_status rs = mfu__store_prepare(
        s, "SELECT count(*) FROM rank_obs WHERE run_id=? AND seq<? AND row_no<?", &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)before);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)rows);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *n = (size_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        return mfu__store_fail(s, err, rc, "counting per-rank observations");
    if (before == 0)
        return MFU_OK;
    rs = mfu__store_prepare(s,
                            "SELECT row_no, step, rank, step_time_s, tokens_per_s FROM rank_obs "
                            "WHERE run_id=? AND seq=?",
                            &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)(before - 1));
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *found = true;
        sqlite3_int64 row = sqlite3_column_int64(st, 0);
        last->row = row > 0 ? (size_t)row : 0;
        last->step = sqlite3_column_int64(st, 1);
        last->rank = (int32_t)sqlite3_column_int(st, 2);
        last->step_time_s = col_real(st, 3);
        last->tokens_per_s = col_real(st, 4);
    } else if (rc != SQLITE_DONE) {
        rs = mfu__store_fail(s, err, rc, "reading a per-rank observation");
    }
    sqlite3_finalize(st);
    return rs;
}

/* Rows [a, b) of run id as stored into rows[0..b-a); *complete false when one is missing. */
static mfu_status read_rows(mfu_store *s, int64_t id, size_t a, size_t b, mfu_step *rows,
                            bool *complete, mfu_error *err)
{
    sqlite3_stmt *st = NULL;
    *complete = false;
    mfu_status rs = mfu__store_prepare(s,
                                       "SELECT row_no, " STEP_COLUMNS " FROM steps WHERE "
                                       "run_id=? AND row_no>=? AND row_no<? ORDER BY row_no",
                                       &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)a);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)b);
    size_t next = a;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((size_t)sqlite3_column_int64(st, 0) != next)
            break;
        read_step(st, 1, &rows[next - a]);
        next++;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        rs = mfu__store_fail(s, err, rc, "reading step rows");
    sqlite3_finalize(st);
    *complete = rs == MFU_OK && next == b;
    return rs;
}

/* Before the rows of a write: the chunk its first row falls in, filled with the stored rows
 * before `from` when a chunk will be complete by the end of the write (else none is kept). */
static mfu_status chunk_begin(mfu_store *s, mfu__store_write *w, mfu_error *err)
{
    size_t c0 = w->from / MFU__CHUNK_ROWS;
    w->chunk_start = c0 * MFU__CHUNK_ROWS;
    w->chunk_bad = false;
    free(w->chunk);
    w->chunk = NULL;
    if ((c0 + 1) * MFU__CHUNK_ROWS > w->total)
        return MFU_OK;
    w->chunk = malloc(MFU__CHUNK_ROWS * sizeof *w->chunk);
    if (!w->chunk)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory writing rows");
    if (w->chunk_start == w->from)
        return MFU_OK;
    bool complete = false;
    mfu_status rs = read_rows(s, w->id, w->chunk_start, w->from, w->chunk, &complete, err);
    w->chunk_bad = !complete;
    return rs;
}

/* Row i (just written) into the chunk being filled; the chunk is stored when it is full. */
static mfu_status chunk_row(mfu_store *s, mfu__store_write *w, size_t i, const mfu_step *row,
                            mfu_error *err)
{
    if (!w->chunk || i < w->chunk_start)
        return MFU_OK;
    w->chunk[i - w->chunk_start] = *row;
    if (i - w->chunk_start + 1 < MFU__CHUNK_ROWS)
        return MFU_OK;
    mfu_status rs = MFU_OK;
    if (!w->chunk_bad)
        rs = mfu__chunk_put(s, w->id, i / MFU__CHUNK_ROWS, w->chunk, err);
    w->chunk_bad = false;
    w->chunk_start += MFU__CHUNK_ROWS;
    return rs;
}

/* One transaction: (the head, when it is the first) + rows [pos, pos + batch) + the tail.
 * *pos is the first row to write and becomes the end of what was written; *gen is the run's
 * generation after the previous transaction (set by the first). */
static mfu_status write_batch(mfu_store *s, mfu__store_write *w, bool first_tx, size_t *pos,
                              int64_t *gen, mfu_error *err)
{
    mfu_status rs = mfu__store_begin(s, err);
    if (rs != MFU_OK)
        return rs;
    size_t nrows = 0;
    int64_t g = 0;
    if (first_tx && w->create_name) {
        rs = mfu__store_insert_run(s, w->create_name, w->meta, &w->id, err);
        if (rs != MFU_OK)
            goto fail;
    }
    rs = mfu__store_run_state(s, w->id, &nrows, &g, err);
    if (rs != MFU_OK)
        goto fail;
    if (first_tx) {
        if (w->append) {
            w->from = nrows;
            w->total = nrows + w->n_append;
        } else if (w->check_gen && g != w->gen) {
            rs = mfu__fail(err, MFU_E_IO, 0,
                           "%s: the run changed while its log was read (another mfu is writing "
                           "it); run the command again",
                           s->path);
            goto fail;
        }
        if (w->from > nrows)
            w->from = nrows;
        plan_obs(w);
        rs = write_head(s, w, w->from, err);
        if (rs == MFU_OK)
            rs = chunk_begin(s, w, err);
        if (rs != MFU_OK)
            goto fail;
        *pos = w->from;
    } else if (g != *gen || nrows != *pos) {
        rs = mfu__fail(err, MFU_E_IO, 0,
                       "%s: the run changed while it was being written (another mfu is writing "
                       "it); write it again when that one is done",
                       s->path);
        goto fail;
    }
    size_t start = *pos;
    size_t end = w->total - start > s->batch_rows ? start + s->batch_rows : w->total;
    sqlite3_stmt *ins = s->insert_step;
    mfu_step row, first, last;
    bool have_first = false, have_last = false;
    for (size_t i = start; i < end; i++) {
        w->get(w->ctx, i, &row);
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, w->id);
        sqlite3_bind_int64(ins, 2, (sqlite3_int64)i);
        bind_step(ins, 3, &row);
        int rc = sqlite3_step(ins);
        if (rc != SQLITE_DONE) {
            rs = mfu__store_fail(s, err, rc, "writing step rows");
            sqlite3_reset(ins);
            goto fail;
        }
        rs = chunk_row(s, w, i, &row, err);
        if (rs != MFU_OK) {
            sqlite3_reset(ins);
            goto fail;
        }
        if (i == 0) {
            first = row;
            have_first = true;
        }
        if (i + 1 == end) {
            last = row;
            have_last = true;
        }
    }
    sqlite3_reset(ins);
    rs = write_obs(s, w, end, err);
    if (rs != MFU_OK)
        goto fail;
    if (!have_last && end > 0) { /* nothing written here: the last row is an older one */
        w->get(w->ctx, end - 1, &last);
        have_last = true;
    }
    rs = write_tail(s, w, end, have_first ? &first : NULL, have_last ? &last : NULL,
                    end == w->total, err);
    if (rs != MFU_OK)
        goto fail;
    rs = mfu__store_commit(s, err);
    if (rs != MFU_OK)
        return rs;
    w->rows_written += end - start;
    *pos = end;
    *gen = g + 1;
    return MFU_OK;
fail:
    mfu__store_rollback(s);
    return rs;
}

mfu_status mfu__store_write_rows(mfu_store *s, mfu__store_write *w, mfu_error *err)
{
    mfu_status rs = mfu__store_writable(s, err);
    if (rs == MFU_OK)
        rs = insert_stmt(s, err);
    if (rs != MFU_OK)
        return rs;
    size_t pos = 0;
    int64_t gen = 0;
    w->rows_written = 0;
    w->chunk = NULL;
    rs = write_batch(s, w, true, &pos, &gen, err);
    while (rs == MFU_OK) {
        if (s->progress)
            s->progress(s->progress_ctx, pos - w->from, w->total - w->from);
        if (pos >= w->total)
            break;
        rs = write_batch(s, w, false, &pos, &gen, err);
    }
    free(w->chunk);
    w->chunk = NULL;
    return rs;
}

/* Row getters. */
void mfu__store_run_row(const void *ctx, size_t i, mfu_step *out)
{
    if (!mfu_run_get((const mfu_run *)ctx, i, out))
        mfu_step_init(out);
}

typedef struct array_src {
    const mfu_step *steps;
    const size_t *from; /* row number of steps[0]: known once the first transaction ran */
} array_src;

static void get_from_array(const void *ctx, size_t i, mfu_step *out)
{
    const array_src *a = ctx;
    *out = a->steps[i - *a->from];
}

mfu_status mfu_store_find_run(mfu_store *s, const char *name, int64_t *id, mfu_error *err)
{
    if (!s || !name || !id)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_find_run: NULL argument");
    sqlite3_stmt *st = NULL;
    mfu_status rs = mfu__store_prepare(s, "SELECT id FROM runs WHERE name=?", &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *id = sqlite3_column_int64(st, 0);
    else if (rc == SQLITE_DONE)
        rs = mfu__fail(err, MFU_E_UNKNOWN, 0,
                       "%s: no run called '%s'; list the runs with 'mfu runs --db %s'", s->path,
                       name, s->path);
    else
        rs = mfu__store_fail(s, err, rc, "looking up a run");
    sqlite3_finalize(st);
    return rs;
}

mfu_status mfu_store_create_run(mfu_store *s, const char *name, const mfu_run_meta *meta,
                                int64_t *id, mfu_error *err)
{
    if (!s)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_create_run: store is NULL");
    mfu_status rs = mfu__store_writable(s, err);
    if (rs == MFU_OK)
        rs = mfu_store_check_name(name, err);
    if (rs != MFU_OK)
        return rs;
    return mfu__store_insert_run(s, name, meta, id, err);
}

mfu_status mfu_store_put_run(mfu_store *s, const char *name, const mfu_run *run, int64_t *id,
                             mfu_error *err)
{
    if (!s || !run)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_put_run: store and run are required");
    mfu_status rs = mfu__store_writable(s, err);
    if (rs == MFU_OK)
        rs = mfu_store_check_name(name, err);
    if (rs != MFU_OK)
        return rs;
    int64_t rid = 0;
    mfu_error e;
    memset(&e, 0, sizeof e);
    rs = mfu_store_find_run(s, name, &rid, &e);
    if (rs != MFU_OK && rs != MFU_E_UNKNOWN) {
        if (err)
            *err = e;
        return rs;
    }
    mfu__store_write w;
    memset(&w, 0, sizeof w);
    w.id = rid;
    w.create_name = rs == MFU_E_UNKNOWN ? name : NULL;
    w.from = 0;
    w.total = mfu_run_count(run);
    w.get = mfu__store_run_row;
    w.ctx = run;
    w.meta = mfu_run_meta_get(run);
    w.obs_src = run;
    w.src_mode = MFU__SRC_CLEAR;
    rs = mfu__store_write_rows(s, &w, err);
    if (rs == MFU_OK && id)
        *id = w.id;
    return rs;
}

mfu_status mfu_store_append_steps(mfu_store *s, int64_t id, const mfu_step *steps, size_t n,
                                  mfu_error *err)
{
    if (!s || (!steps && n))
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_append_steps: NULL argument");
    if (n == 0)
        return mfu__store_run_state(s, id, NULL, NULL, err);
    mfu__store_write w;
    memset(&w, 0, sizeof w);
    array_src a = {steps, &w.from};
    w.id = id;
    w.append = true;
    w.n_append = n;
    w.get = get_from_array;
    w.ctx = &a;
    return mfu__store_write_rows(s, &w, err);
}

mfu_status mfu__store_get_row(mfu_store *s, int64_t id, size_t i, mfu_step *out, bool *found,
                              mfu_error *err)
{
    sqlite3_stmt *st = NULL;
    mfu_status rs = mfu__store_prepare(
        s, "SELECT " STEP_COLUMNS " FROM steps WHERE run_id=? AND row_no=?", &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
    int rc = sqlite3_step(st);
    *found = rc == SQLITE_ROW;
    if (rc == SQLITE_ROW)
        read_step(st, 0, out);
    else if (rc != SQLITE_DONE)
        rs = mfu__store_fail(s, err, rc, "reading a row");
    sqlite3_finalize(st);
    return rs;
}

/* The row a step that merged on the way back went to: the latest of the last
 * MFU_RUN_DEDUP_WINDOW rows with its step number (the row mfu_run_append merges into). */
static size_t merged_row(const mfu_run *run, int64_t step)
{
    size_t n = mfu_run_count(run);
    const int64_t *steps = mfu_run_steps(run);
    size_t lo = n > MFU_RUN_DEDUP_WINDOW ? n - MFU_RUN_DEDUP_WINDOW : 0;
    for (size_t i = n; i-- > lo;)
        if (steps[i] == step)
            return i;
    return n - 1;
}

/* Restore the per-rank observations of run id into run, in their stored order, rows mapped
 * through map (NULL: stored row i is run row i). An observation whose row is not in run (a
 * damaged store) is left out. */
static mfu_status read_obs(mfu_store *s, int64_t id, mfu_run *run, const size_t *map, size_t nrows,
                           mfu_error *err)
{
    sqlite3_stmt *st = NULL;
    mfu_status rs = mfu__store_prepare(s,
                                       "SELECT row_no, rank, step_time_s, tokens_per_s FROM "
                                       "rank_obs WHERE run_id=? ORDER BY seq",
                                       &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_int64(st, 1, id);
    size_t n = mfu_run_count(run);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        sqlite3_int64 r = sqlite3_column_int64(st, 0);
        sqlite3_int64 rank = sqlite3_column_int64(st, 1);
        if (r < 0 || (uint64_t)r >= nrows || rank < 0 || rank > INT32_MAX)
            continue;
        size_t row = map ? map[r] : (size_t)r;
        if (row >= n)
            continue;
        mfu_rank_obs o = {row, 0, (int32_t)rank, col_real(st, 2), col_real(st, 3)};
        rs = mfu_run_rank_obs_append(run, &o, err);
        if (rs != MFU_OK)
            break;
    }
    if (rs == MFU_OK && rc != SQLITE_DONE)
        rs = mfu__store_fail(s, err, rc, "reading per-rank observations");
    sqlite3_finalize(st);
    return rs;
}

/* Stored row row_no of a run of nrows rows into run, by mfu_run_append's rule. Stored row i
 * is run row i unless rows merged on the way back (see store.h) or a row is missing (a
 * damaged store); then (*map)[i] is the run row it went to, SIZE_MAX for none. */
static mfu_status take_row(mfu_run *run, const mfu_step *row, size_t row_no, size_t nrows,
                           size_t **map, mfu_error *err)
{
    size_t before = mfu_run_count(run);
    bool merged = false;
    mfu_status rs = mfu_run_append(run, row, &merged, err);
    /* A row no run accepts today (a negative step an older mfu stored, a tampered file) is
     * left out like a missing one: the rest of the run still reads. */
    bool refused = rs == MFU_E_RANGE;
    if (rs != MFU_OK && !refused)
        return rs;
    size_t to = refused ? SIZE_MAX : merged ? merged_row(run, row->step) : before;
    if (!*map && to != row_no) {
        *map = malloc(nrows * sizeof **map);
        if (!*map)
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory reading a run");
        for (size_t i = 0; i < nrows; i++)
            (*map)[i] = i < row_no ? i : SIZE_MAX;
    }
    if (*map)
        (*map)[row_no] = to;
    return MFU_OK;
}

/* The rows of chunk view v (stored rows row_no..row_no + MFU__CHUNK_ROWS - 1) into run: as
 * whole columns when they are rows a run kept as they are (mfu__run_load: numbers that rise,
 * values appended unchanged), else one by one by mfu_run_append's rule (take_row). */
static mfu_status take_chunk(mfu_run *run, const mfu__chunk_view *v, mfu_step *rows, size_t row_no,
                             size_t nrows, size_t **map, mfu_error *err)
{
    size_t before = mfu_run_count(run);
    bool taken = false;
    mfu_status rs = mfu__run_load(run, &v->cols, MFU__CHUNK_ROWS, &taken, err);
    if (rs != MFU_OK)
        return rs;
    if (taken) {
        if (*map) /* an earlier row merged or was left out: these go on from where it left */
            for (size_t j = 0; j < MFU__CHUNK_ROWS; j++)
                (*map)[row_no + j] = before + j;
        return MFU_OK;
    }
    mfu__chunk_rows(v, MFU__CHUNK_ROWS, rows);
    for (size_t j = 0; j < MFU__CHUNK_ROWS && rs == MFU_OK; j++)
        rs = take_row(run, &rows[j], row_no + j, nrows, map, err);
    return rs;
}

/* The rows of run id held in whole chunks from row 0 on into run: *covered = the rows read
 * (a multiple of MFU__CHUNK_ROWS; stops at a missing or damaged chunk: the rows table has the
 * rest). */
static mfu_status read_chunks(mfu_store *s, int64_t id, size_t nrows, mfu_run *run, size_t **map,
                              size_t *covered, mfu_error *err)
{
    *covered = 0;
    if (nrows < MFU__CHUNK_ROWS)
        return MFU_OK;
    sqlite3_stmt *st = NULL;
    mfu_status rs = mfu__store_prepare(
        s, "SELECT chunk, nrows, data FROM step_chunks WHERE run_id=? AND chunk<? ORDER BY chunk",
        &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)(nrows / MFU__CHUNK_ROWS));
    mfu_step *rows = malloc(MFU__CHUNK_ROWS * sizeof *rows);
    if (!rows) {
        sqlite3_finalize(st);
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory reading a run");
    }
    mfu__chunk_view v;
    memset(&v, 0, sizeof v);
    int rc;
    while (rs == MFU_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((size_t)sqlite3_column_int64(st, 0) != *covered / MFU__CHUNK_ROWS ||
            sqlite3_column_int64(st, 1) != MFU__CHUNK_ROWS ||
            !mfu__chunk_open(&v, sqlite3_column_blob(st, 2), (size_t)sqlite3_column_bytes(st, 2),
                             MFU__CHUNK_ROWS))
            break;
        rs = take_chunk(run, &v, rows, *covered, nrows, map, err);
        *covered += MFU__CHUNK_ROWS;
    }
    mfu__chunk_close(&v);
    free(rows);
    sqlite3_finalize(st);
    return rs;
}

mfu_status mfu_store_get_run(mfu_store *s, int64_t id, mfu_run **out, mfu_error *err)
{
    if (out)
        *out = NULL;
    if (!s || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_get_run: NULL argument");
    sqlite3_stmt *st = NULL;
    mfu_run *run = NULL;
    size_t *map = NULL;
    /* One read transaction: the metadata, rows and observations come from the same snapshot. */
    mfu_status rs = mfu__store_exec(s, "BEGIN", err);
    if (rs != MFU_OK)
        return rs;
    rs = mfu__store_prepare(s, "SELECT meta_json, nrows FROM runs WHERE id=?", &st, err);
    if (rs != MFU_OK)
        goto done;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        rs = rc == SQLITE_DONE ? mfu__fail(err, MFU_E_INVALID, 0,
                                           "%s: no run with id %lld; list the runs with 'mfu "
                                           "runs'",
                                           s->path, (long long)id)
                               : mfu__store_fail(s, err, rc, "reading a run");
        goto done;
    }
    int64_t nrows = sqlite3_column_int64(st, 1);
    if (nrows < 0)
        nrows = 0;
    if (nrows > MFU_RUN_MAX_STEPS) {
        rs = mfu__fail(err, MFU_E_LIMIT, 0,
                       "%s: run %lld holds %lld rows, more than a run can (%ld); read it in "
                       "parts with SQL",
                       s->path, (long long)id, (long long)nrows, (long)MFU_RUN_MAX_STEPS);
        goto done;
    }
    run = mfu_run_new();
    if (!run) {
        rs = mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
        goto done;
    }
    rs = mfu__store_meta_from_json((const char *)sqlite3_column_text(st, 0), mfu_run_meta_mut(run),
                                   err);
    sqlite3_finalize(st);
    st = NULL;
    if (rs != MFU_OK)
        goto done;
    /* whole chunks first (the same rows, read as columns), the rest row by row; in ordinary
     * pages (filled at once, fresh 2 MiB pages cost more than they save) */
    size_t covered = 0;
    mfu__run_plain_pages(run);
    rs = mfu_run_reserve(run, (size_t)nrows, err);
    if (rs == MFU_OK)
        rs = read_chunks(s, id, (size_t)nrows, run, &map, &covered, err);
    if (rs != MFU_OK)
        goto done;
    rs = mfu__store_prepare(s,
                            "SELECT row_no, " STEP_COLUMNS
                            " FROM steps WHERE run_id=? AND row_no>=? AND row_no<? ORDER BY row_no",
                            &st, err);
    if (rs != MFU_OK)
        goto done;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)covered);
    sqlite3_bind_int64(st, 3, nrows);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        size_t row_no = (size_t)sqlite3_column_int64(st, 0);
        mfu_step row;
        read_step(st, 1, &row);
        rs = take_row(run, &row, row_no, (size_t)nrows, &map, err);
        if (rs != MFU_OK)
            goto done;
    }
    if (rc != SQLITE_DONE) {
        rs = mfu__store_fail(s, err, rc, "reading step rows");
        goto done;
    }
    sqlite3_finalize(st);
    st = NULL;
    rs = read_obs(s, id, run, map, (size_t)nrows, err);
done:
    free(map);
    sqlite3_finalize(st);
    mfu__store_exec(s, "COMMIT", NULL);
    if (rs != MFU_OK) {
        mfu_run_free(run);
        return rs;
    }
    *out = run;
    return MFU_OK;
}

mfu_status mfu_store_delete_run(mfu_store *s, int64_t id, mfu_error *err)
{
    if (!s)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_delete_run: store is NULL");
    mfu_status rs = mfu__store_writable(s, err);
    if (rs != MFU_OK)
        return rs;
    rs = mfu__store_begin(s, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_stmt *st = NULL;
    rs = mfu__store_prepare(s, "DELETE FROM runs WHERE id=?", &st, err);
    if (rs == MFU_OK) {
        sqlite3_bind_int64(st, 1, id);
        int rc = sqlite3_step(st);
        if (rc != SQLITE_DONE)
            rs = mfu__store_fail(s, err, rc, "deleting a run");
        else if (sqlite3_changes(s->db) == 0)
            rs = mfu__fail(err, MFU_E_INVALID, 0,
                           "%s: no run with id %lld; list the runs with 'mfu runs'", s->path,
                           (long long)id);
        sqlite3_finalize(st);
    }
    if (rs != MFU_OK) {
        mfu__store_rollback(s);
        return rs;
    }
    return mfu__store_commit(s, err);
}
