/*
 * store.c - open a run store: recognise the file, set the connection up, migrate the schema.
 *
 * A store is an SQLite file whose header carries MFU_APP_ID (PRAGMA application_id) and whose
 * mfu_schema table lists the migrations applied. Opening it:
 *   1. refuses an absent file unless MFU_STORE_CREATE (a typo in --db should not quietly make
 *      an empty store and list nothing);
 *   2. reads the header: a file that is not SQLite fails here (SQLITE_NOTADB), one that is
 *      SQLite but someone else's (other application id, or tables but no id) is refused;
 *   3. sets WAL (readers never block the writer), synchronous=NORMAL (durable at each
 *      checkpoint, never corrupt; a power cut may drop the last commits, which a re-ingest
 *      restores), foreign keys (deletes cascade), and the busy timeout;
 *   4. applies the missing migrations, each in its own write transaction that re-reads the
 *      version first, so two processes opening a new store at once apply each step once.
 * Migrations are only ever appended to `migrations[]`: migration i takes version i to i+1.
 */
#include "store/internal.h"

#include <errno.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "util/utf8.h"
#include "util/util.h"

#define MFU_APP_ID 0x6d667530 /* "mfu0" */

/* Schema version 1: runs, their step rows, tags, findings. */
static const char migration_1[] =
    "CREATE TABLE runs("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " name TEXT NOT NULL UNIQUE,"
    " created_s INTEGER NOT NULL,"
    " updated_s INTEGER NOT NULL,"
    " format TEXT NOT NULL DEFAULT '',"
    " meta_json TEXT NOT NULL DEFAULT '{}',"
    " nrows INTEGER NOT NULL DEFAULT 0,"
    " first_step INTEGER,"
    " last_step INTEGER,"
    " complete INTEGER NOT NULL DEFAULT 1,"
    " gen INTEGER NOT NULL DEFAULT 0,"
    " src_path TEXT NOT NULL DEFAULT '',"
    " src_dev INTEGER NOT NULL DEFAULT 0,"
    " src_inode INTEGER NOT NULL DEFAULT 0,"
    " src_mtime_ns INTEGER NOT NULL DEFAULT 0,"
    " src_head_bytes INTEGER NOT NULL DEFAULT 0,"
    " src_head_hash INTEGER NOT NULL DEFAULT 0,"
    " src_tail_hash INTEGER NOT NULL DEFAULT 0,"
    " src_bytes INTEGER NOT NULL DEFAULT 0,"
    " src_lines INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE steps("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " row_no INTEGER NOT NULL,"
    " step INTEGER NOT NULL,"
    " rank INTEGER NOT NULL,"
    " flags INTEGER NOT NULL,"
    /* Doubles have no declared type (no affinity): a REAL column would store an integral
     * value as an integer and lose the sign of -0.0; these keep every double as written.
     * NULL = absent (NaN). */
    " time_s, step_time_s, tokens, samples, loss, lr, grad_norm, memory_bytes,"
    " tokens_per_s, tokens_per_s_scope INTEGER NOT NULL,"
    " flops_per_s, flops_per_s_scope INTEGER NOT NULL,"
    " mfu, mfu_scope INTEGER NOT NULL,"
    " samples_per_s, samples_per_s_scope INTEGER NOT NULL,"
    " PRIMARY KEY(run_id, row_no)) WITHOUT ROWID;"
    "CREATE TABLE tags("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " key TEXT NOT NULL,"
    " value TEXT NOT NULL,"
    " PRIMARY KEY(run_id, key)) WITHOUT ROWID;"
    "CREATE TABLE findings("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL,"
    " kind TEXT NOT NULL,"
    " severity TEXT NOT NULL,"
    " first_step INTEGER NOT NULL,"
    " last_step INTEGER NOT NULL,"
    " evidence_json TEXT NOT NULL,"
    " next_step TEXT NOT NULL,"
    " PRIMARY KEY(run_id, seq)) WITHOUT ROWID;";

/* Schema version 2: the run's context (what `mfu report` needs besides the log: model, device,
 * job size) as a JSON array of command-line arguments; '' when none was given. */
static const char migration_2[] =
    "ALTER TABLE runs ADD COLUMN context_json TEXT NOT NULL DEFAULT '';";

/* Schema version 3: the per-step configuration and telemetry of mfu_step (doubles without a
 * declared type, as in version 1; codes -1 = unknown), and the run's per-rank observations
 * (mfu_rank_obs), numbered in the order the run holds them; row_no is the row they belong to.
 * Rows stored before read the new fields as absent. A run read from a file before this version
 * forgets its recorded mtime, so that its next ingest reads the file again instead of finding
 * it unchanged, and stores what the old rows lack. */
static const char migration_3[] =
    /* (first the step columns of version 3: step_columns below) */
    "CREATE TABLE rank_obs("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL,"
    " row_no INTEGER NOT NULL,"
    " step INTEGER NOT NULL,"
    " rank INTEGER NOT NULL,"
    " step_time_s, tokens_per_s,"
    " PRIMARY KEY(run_id, seq)) WITHOUT ROWID;"
    "UPDATE runs SET src_mtime_ns = -1 WHERE src_path <> '';";

/* Schema version 4: the step's energy_j and tensor_active (their ALTER TABLEs are made from the
 * step list), and each MFU__CHUNK_ROWS rows of a run again as one compressed blob of
 * columns (store/chunks.c), so that a long run reads back in a few hundred blob reads. Runs
 * stored before have none: they read from their rows as before until they are written
 * again. */
static const char migration_4[] = "CREATE TABLE step_chunks("
                                  " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                                  " chunk INTEGER NOT NULL,"
                                  " nrows INTEGER NOT NULL,"
                                  " data BLOB NOT NULL,"
                                  " PRIMARY KEY(run_id, chunk));";

static const char *const migrations[] = {migration_1, migration_2, migration_3, migration_4};

_Static_assert(MFU__ARRAY_LEN(migrations) == MFU_STORE_SCHEMA_VERSION,
               "one migration per schema version");

/* The step columns: one per member of mfu_step (mfu/step_fields.h), each made by the schema
 * version of its since column. Version 1's are in migration_1's CREATE TABLE; a later
 * version's are added by ALTER TABLE before the rest of its migration runs, in list order:
 * doubles without a declared type (as in version 1), a scope 0 (unknown) and a code -1
 * (unknown) in the rows stored before. */
#define ADD_DECL_STEP " INTEGER NOT NULL DEFAULT 0"
#define ADD_DECL_DOUBLE ""
#define ADD_DECL_SCOPE " INTEGER NOT NULL DEFAULT 0"
#define ADD_DECL_FLAGS " INTEGER NOT NULL DEFAULT 0"
#define ADD_DECL_RANK " INTEGER NOT NULL DEFAULT -1"
#define ADD_DECL_CODE " INTEGER NOT NULL DEFAULT -1"
#define STEP_COLUMN(kind, name, NAME, arg, map, since, unit, what, help)                           \
    MFU__STEP_IF_MEMBER_##kind(STEP_COLUMN_1(kind, name, since))
#define STEP_COLUMN_1(kind, name, since)                                                           \
    {since, "ALTER TABLE steps ADD COLUMN " #name ADD_DECL_##kind ";"},
static const struct {
    int since;
    const char *add;
} step_columns[] = {MFU_STEP_FIELDS(STEP_COLUMN)};

/* A released version's columns never change (stores of that version exist): a new field
 * takes a new version. Version 1 made 19, version 2 none, version 3 eleven, version 4 two. */
#define SINCE_IS(v, since) +((since) == (v))
#define SINCE_1(kind, name, NAME, arg, map, since, unit, what, help)                               \
    MFU__STEP_IF_MEMBER_##kind(SINCE_IS(1, since))
#define SINCE_2(kind, name, NAME, arg, map, since, unit, what, help)                               \
    MFU__STEP_IF_MEMBER_##kind(SINCE_IS(2, since))
#define SINCE_3(kind, name, NAME, arg, map, since, unit, what, help)                               \
    MFU__STEP_IF_MEMBER_##kind(SINCE_IS(3, since))
#define SINCE_4(kind, name, NAME, arg, map, since, unit, what, help)                               \
    MFU__STEP_IF_MEMBER_##kind(SINCE_IS(4, since))
#define SINCE_OK(kind, name, NAME, arg, map, since, unit, what, help)                              \
    MFU__STEP_IF_MEMBER_##kind(&&(since) >= 1 && (since) <= MFU_STORE_SCHEMA_VERSION)
_Static_assert(0 MFU_STEP_FIELDS(SINCE_1) == 19 && 0 MFU_STEP_FIELDS(SINCE_2) == 0 &&
                   0 MFU_STEP_FIELDS(SINCE_3) == 11 && 0 MFU_STEP_FIELDS(SINCE_4) == 2,
               "a released schema version's step columns changed: give the new field a new "
               "version (docs/internals/run.md)");
_Static_assert(1 MFU_STEP_FIELDS(SINCE_OK), "a step field's since is not a schema version");

/* Add the step columns of schema version v (> 1). */
static mfu_status add_step_columns(mfu_store *s, int64_t v, mfu_error *err)
{
    for (size_t i = 0; i < MFU__ARRAY_LEN(step_columns); i++) {
        if (v > 1 && step_columns[i].since == v) {
            mfu_status st = mfu__store_exec(s, step_columns[i].add, err);
            if (st != MFU_OK)
                return st;
        }
    }
    return MFU_OK;
}

/* ---- errors ----------------------------------------------------------------------------- */

mfu_status mfu__store_fail(mfu_store *s, mfu_error *err, int rc, const char *what)
{
    const char *path = s && s->path ? s->path : "store";
    const char *msg = s && s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return mfu__fail(err, MFU_E_IO, 0,
                         "%s: %s: the store is locked by another process (%s); wait for it to "
                         "finish, or wait longer (--wait SECONDS)",
                         path, what, msg);
    case SQLITE_NOTADB:
        return mfu__fail(err, MFU_E_IO, 0,
                         "%s: not an SQLite database (%s); pass --db with the path of an mfu run "
                         "store, or move this file away",
                         path, msg);
    case SQLITE_CORRUPT:
        return mfu__fail(err, MFU_E_IO, 0,
                         "%s: %s: the store is damaged (%s); restore it from a copy, or ingest "
                         "the logs again into a new --db",
                         path, what, msg);
    case SQLITE_NOMEM: return mfu__fail(err, MFU_E_NOMEM, 0, "%s: %s: out of memory", path, what);
    case SQLITE_FULL:
        return mfu__fail(err, MFU_E_IO, 0, "%s: %s: the disk is full (%s); free some space", path,
                         what, msg);
    case SQLITE_READONLY:
    case SQLITE_PERM:
        return mfu__fail(err, MFU_E_IO, 0,
                         "%s: %s: the store cannot be written (%s); check the permissions of the "
                         "file and its directory",
                         path, what, msg);
    case SQLITE_CANTOPEN:
        return mfu__fail(err, MFU_E_IO, 0,
                         "%s: cannot open the store (%s); check the path and the permissions of "
                         "its directory",
                         path, msg);
    case SQLITE_IOERR: {
        /* SQLite keeps the errno of some failures only; a write past `ulimit -f` (EFBIG) is
         * told by the limit itself when it is not kept */
        int se = s && s->db ? sqlite3_system_errno(s->db) : 0;
        struct rlimit rl;
        bool limited = getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
        if (se == EFBIG || (se == 0 && limited && rc == SQLITE_IOERR_WRITE))
            return mfu__fail(err, MFU_E_IO, 0,
                             "%s: %s: a write failed at this process's file-size limit (%lld "
                             "bytes); raise it (ulimit -f) or use another --db",
                             path, what, limited ? (long long)rl.rlim_cur : -1LL);
        return mfu__fail(err, MFU_E_IO, 0, "%s: %s: I/O error (%s%s%s); check the disk", path, what,
                         msg, se ? ": " : "", se ? strerror(se) : "");
    }
    default:
        return mfu__fail(err, MFU_E_IO, 0, "%s: %s: %s (SQLite error %d)", path, what, msg, rc);
    }
}

mfu_status mfu__store_exec(mfu_store *s, const char *sql, mfu_error *err)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? MFU_OK : mfu__store_fail(s, err, rc, "executing a statement");
}

mfu_status mfu__store_prepare(mfu_store *s, const char *sql, sqlite3_stmt **st, mfu_error *err)
{
    int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
    if (rc != SQLITE_OK) {
        *st = NULL;
        return mfu__store_fail(s, err, rc, "preparing a statement");
    }
    return MFU_OK;
}

mfu_status mfu__store_begin(mfu_store *s, mfu_error *err)
{
    int rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    return rc == SQLITE_OK ? MFU_OK : mfu__store_fail(s, err, rc, "starting a write");
}

mfu_status mfu__store_commit(mfu_store *s, mfu_error *err)
{
    int rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        return MFU_OK;
    mfu_status st = mfu__store_fail(s, err, rc, "committing");
    mfu__store_rollback(s);
    return st;
}

void mfu__store_rollback(mfu_store *s)
{
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

mfu_status mfu__store_writable(mfu_store *s, mfu_error *err)
{
    if (s->readonly)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "%s: the store was opened read-only; open it without "
                         "MFU_STORE_READONLY to write",
                         s->path);
    return MFU_OK;
}

mfu_status mfu_store_check_name(const char *name, mfu_error *err)
{
    if (!name || !name[0])
        return mfu__fail_field(err, MFU_E_INVALID, "--run",
                               "the run name is empty; give one with --run NAME");
    size_t n = strlen(name);
    if (n >= MFU_STORE_NAME_MAX)
        return mfu__fail_field(err, MFU_E_INVALID, "--run",
                               "run name of %zu bytes is too long (at most %d); give a shorter "
                               "one with --run NAME",
                               n, MFU_STORE_NAME_MAX - 1);
    if (name[0] == '-')
        return mfu__fail_field(err, MFU_E_INVALID, "--run",
                               "run name '%s' starts with '-'; give another with --run NAME", name);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c == 0x7f)
            return mfu__fail_field(err, MFU_E_INVALID, "--run",
                                   "run name holds a control character (byte %zu); give "
                                   "another with --run NAME",
                                   i + 1);
    }
    size_t bad = 0;
    if (!mfu__utf8_valid(name, n, &bad))
        return mfu__fail_field(err, MFU_E_INVALID, "--run",
                               "run name is not valid UTF-8 (byte %zu, 0x%02x); give another "
                               "with --run NAME",
                               bad + 1, (unsigned char)name[bad]);
    return MFU_OK;
}

int64_t mfu__store_now_s(void)
{
    return (int64_t)time(NULL);
}

/* ---- open ------------------------------------------------------------------------------- */

/* One integer from a query (first column of the first row); *v = 0 when no row. */
static mfu_status query_int(mfu_store *s, const char *sql, int64_t *v, mfu_error *err)
{
    sqlite3_stmt *st = NULL;
    mfu_status rs = mfu__store_prepare(s, sql, &st, err);
    if (rs != MFU_OK)
        return rs;
    *v = 0;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *v = sqlite3_column_int64(st, 0);
    else if (rc != SQLITE_DONE)
        rs = mfu__store_fail(s, err, rc, "reading the store header");
    sqlite3_finalize(st);
    return rs;
}

static mfu_status schema_version(mfu_store *s, int64_t *v, mfu_error *err)
{
    int64_t has = 0;
    mfu_status st =
        query_int(s, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='mfu_schema'",
                  &has, err);
    if (st != MFU_OK)
        return st;
    *v = 0;
    if (!has)
        return MFU_OK;
    return query_int(s, "SELECT coalesce(max(version), 0) FROM mfu_schema", v, err);
}

static mfu_status migrate(mfu_store *s, mfu_error *err)
{
    int64_t v = 0;
    mfu_status st = schema_version(s, &v, err);
    if (st != MFU_OK)
        return st;
    if (v > MFU_STORE_SCHEMA_VERSION)
        return mfu__fail(err, MFU_E_UNSUPPORTED, 0,
                         "%s: the store has schema version %lld, newer than this mfu reads (%d); "
                         "upgrade mfu, or use another --db",
                         s->path, (long long)v, MFU_STORE_SCHEMA_VERSION);
    if (v == MFU_STORE_SCHEMA_VERSION)
        return MFU_OK;
    if (s->readonly)
        return mfu__fail(err, MFU_E_UNSUPPORTED, 0,
                         "%s: the store has schema version %lld and needs an upgrade to %d; open "
                         "it once for writing (for example with 'mfu runs --db %s')",
                         s->path, (long long)v, MFU_STORE_SCHEMA_VERSION, s->path);
    for (;;) {
        st = mfu__store_begin(s, err);
        if (st != MFU_OK)
            return st;
        st = schema_version(s, &v, err); /* another process may have migrated meanwhile */
        if (st != MFU_OK || v >= MFU_STORE_SCHEMA_VERSION) {
            mfu__store_rollback(s);
            return st;
        }
        if (v == 0) {
            char sql[128];
            snprintf(sql, sizeof sql,
                     "PRAGMA application_id=%d; CREATE TABLE mfu_schema(version INTEGER "
                     "PRIMARY KEY, applied_s INTEGER NOT NULL);",
                     MFU_APP_ID);
            st = mfu__store_exec(s, sql, err);
        }
        if (st == MFU_OK)
            st = add_step_columns(s, v + 1, err);
        if (st == MFU_OK)
            st = mfu__store_exec(s, migrations[v], err);
        if (st == MFU_OK) {
            char sql[160];
            snprintf(sql, sizeof sql,
                     "INSERT INTO mfu_schema(version, applied_s) VALUES(%lld, %lld);"
                     "PRAGMA user_version=%lld;",
                     (long long)(v + 1), (long long)mfu__store_now_s(), (long long)(v + 1));
            st = mfu__store_exec(s, sql, err);
        }
        if (st != MFU_OK) {
            mfu__store_rollback(s);
            return st;
        }
        st = mfu__store_commit(s, err);
        if (st != MFU_OK)
            return st;
    }
}

static mfu_status read_identity(mfu_store *s, int64_t *app, int64_t *tables, mfu_error *err)
{
    mfu_status st = query_int(s, "PRAGMA application_id", app, err);
    if (st == MFU_OK)
        st = query_int(s, "SELECT count(*) FROM sqlite_master", tables, err);
    return st;
}

/* Is this file ours (or an empty database that may become ours)? */
static mfu_status check_identity(mfu_store *s, mfu_error *err)
{
    int64_t app = 0, tables = 0;
    mfu_status st = read_identity(s, &app, &tables, err);
    if (st != MFU_OK)
        return st;
    if (!(app == MFU_APP_ID || (app == 0 && tables == 0)) && !s->readonly) {
        /* Another mfu may be creating this store right now (two ingests into a new --db): look
         * again once its write is over (BEGIN IMMEDIATE waits for it, up to the timeout). */
        if (mfu__store_begin(s, NULL) == MFU_OK) {
            st = read_identity(s, &app, &tables, err);
            mfu__store_rollback(s);
            if (st != MFU_OK)
                return st;
        }
    }
    if (app == MFU_APP_ID || (app == 0 && tables == 0))
        return MFU_OK;
    return mfu__fail(err, MFU_E_IO, 0,
                     "%s: an SQLite database, but not an mfu run store (application id %lld, "
                     "%lld tables); pass --db with another path",
                     s->path, (long long)app, (long long)tables);
}

static mfu_status set_pragmas(mfu_store *s, mfu_error *err)
{
    if (s->readonly)
        return mfu__store_exec(s, "PRAGMA foreign_keys=ON", err);
    /* journal_mode answers with a row; run it as a query so that a lock shows as an error. The
     * switch needs the file to itself, and SQLite does not always wait for it (the busy handler
     * is not asked when another connection is opening the same new file): retry for as long
     * as the busy timeout, unless another mfu has switched it meanwhile. */
    mfu_status rs = MFU_OK;
    for (int waited_ms = 0;; waited_ms += 20) {
        sqlite3_stmt *st = NULL;
        rs = mfu__store_prepare(s, "PRAGMA journal_mode=WAL", &st, err);
        if (rs != MFU_OK)
            return rs;
        int rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc == SQLITE_ROW || rc == SQLITE_DONE)
            break;
        if ((rc & 0xff) != SQLITE_BUSY || waited_ms >= MFU_STORE_BUSY_TIMEOUT_MS)
            return mfu__store_fail(s, err, rc, "switching to WAL mode");
        sqlite3_sleep(20);
    }
    return mfu__store_exec(s,
                           "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
                           "PRAGMA temp_store=MEMORY; PRAGMA cache_size=-16384;",
                           err);
}

mfu_status mfu_store_open(const char *path, unsigned flags, mfu_store **out, mfu_error *err)
{
    if (out)
        *out = NULL;
    if (!path || !out || !path[0])
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_open: path and out are required");
    if ((flags & ~(unsigned)(MFU_STORE_CREATE | MFU_STORE_READONLY)) != 0 ||
        ((flags & MFU_STORE_CREATE) && (flags & MFU_STORE_READONLY)))
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "mfu_store_open: flags 0x%x are not a valid combination; use "
                         "MFU_STORE_CREATE or MFU_STORE_READONLY",
                         flags);
    bool memory = strcmp(path, ":memory:") == 0;
    if (!memory && !(flags & MFU_STORE_CREATE)) {
        struct stat sb;
        if (stat(path, &sb) != 0)
            return mfu__fail(err, MFU_E_IO, 0,
                             "%s: no run store there (%s); ingest a log first (mfu ingest LOG "
                             "--db %s) or pass --db with the path of a store",
                             path, strerror(errno), path);
    }
    mfu_store *s = calloc(1, sizeof *s);
    if (!s)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    s->path = mfu__strdup(path);
    s->readonly = (flags & MFU_STORE_READONLY) != 0;
    s->batch_rows = MFU_STORE_BATCH_ROWS;
    if (!s->path) {
        free(s);
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    }
    int oflags = SQLITE_OPEN_NOMUTEX |
                 (s->readonly ? SQLITE_OPEN_READONLY
                              : SQLITE_OPEN_READWRITE |
                                    ((flags & MFU_STORE_CREATE) ? SQLITE_OPEN_CREATE : 0));
    int rc = sqlite3_open_v2(path, &s->db, oflags, NULL);
    mfu_status st = MFU_OK;
    if (rc != SQLITE_OK) {
        st = mfu__store_fail(s, err, rc, "opening");
        goto fail;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, MFU_STORE_BUSY_TIMEOUT_MS);
    st = check_identity(s, err);
    if (st == MFU_OK)
        st = set_pragmas(s, err);
    if (st == MFU_OK)
        st = migrate(s, err);
    if (st != MFU_OK)
        goto fail;
    *out = s;
    return MFU_OK;
fail:
    mfu_store_close(s);
    return st;
}

void mfu_store_close(mfu_store *s)
{
    if (!s)
        return;
    if (s->insert_step)
        sqlite3_finalize(s->insert_step);
    if (s->insert_obs)
        sqlite3_finalize(s->insert_obs);
    if (s->db) {
        if (!s->readonly)
            sqlite3_exec(s->db, "PRAGMA optimize", NULL, NULL, NULL);
        sqlite3_close_v2(s->db);
    }
    free(s->path);
    free(s);
}

const char *mfu_store_path(const mfu_store *s)
{
    return s ? s->path : "";
}

mfu_status mfu_store_set_busy_timeout(mfu_store *s, int ms, mfu_error *err)
{
    if (!s || ms < 0)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "mfu_store_set_busy_timeout: need a store and a wait of 0 ms or more");
    sqlite3_busy_timeout(s->db, ms);
    return MFU_OK;
}

mfu_status mfu_store_set_batch_rows(mfu_store *s, size_t rows, mfu_error *err)
{
    if (!s || rows < 1 || rows > MFU_STORE_MAX_BATCH_ROWS)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "batch of %zu rows is outside 1..%d; pass a size in that range", rows,
                         MFU_STORE_MAX_BATCH_ROWS);
    s->batch_rows = rows;
    return MFU_OK;
}

void mfu_store_set_progress(mfu_store *s, mfu_store_progress_fn fn, void *ctx)
{
    if (!s)
        return;
    s->progress = fn;
    s->progress_ctx = ctx;
}
