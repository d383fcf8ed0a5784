/*
 * mfu/store.h - the run store: runs, their step rows, tags and findings in one SQLite file.
 *
 * A store keeps any number of named runs. Each run has its metadata (mfu_run_meta), its step
 * rows in order (every field of mfu_step; an absent value is SQL NULL and comes back as NaN,
 * an unknown code as -1), its per-rank observations (mfu_rank_obs, in the order the run holds
 * them), tags (key = value), findings written by the analysis, and, when it came from a log
 * file, the identity of that file and how far it was read, so that ingesting the file again
 * only adds what is new (mfu_store_ingest_path).
 *
 * Consistency: rows are written in transactions of a batch of rows (mfu_store_set_batch_rows);
 * each transaction also records the run's row count and ingest position. A process killed at
 * any point leaves every run holding rows 0..n-1 of one read of its source, never a gap, and
 * readers (other connections, other processes) see only committed batches. One writer per
 * run at a time: a writer that finds the run changed under it fails rather than interleave.
 *
 * The file is opened in WAL mode with a busy timeout, so readers never block the writer and a
 * second writer waits up to the timeout. docs/internals/store.md has the schema and the rules.
 *
 * Ownership and errors follow common.h. A store handle is used by one thread at a time; open
 * one handle per thread (or process) that needs the store.
 */
#ifndef MFU_STORE_H
#define MFU_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mfu/common.h"
#include "mfu/ingest.h"
#include "mfu/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Schema version this library writes. A store with a higher version is refused (open it with a
 * newer mfu); a lower one is migrated forward when opened for writing, and refused when opened
 * with MFU_STORE_READONLY (open it once for writing first). Version 3 added the per-step
 * fields seq_len .. dtype of mfu_step and the per-rank observations; rows stored before read
 * them as absent. Version 4 adds the step's energy_j and tensor_active (absent in older rows)
 * and keeps each 16384 rows again as one compressed blob of columns (read back at once;
 * nothing a caller sees changes). */
#define MFU_STORE_SCHEMA_VERSION 4

/* Named limits and defaults. */
#define MFU_STORE_NAME_MAX 128             /* run name, bytes including the NUL */
#define MFU_STORE_TAG_KEY_MAX 64           /* tag key, bytes including the NUL */
#define MFU_STORE_TAG_VALUE_MAX 256        /* tag value, bytes including the NUL */
#define MFU_STORE_PATH_MAX 4096            /* source path, bytes including the NUL */
#define MFU_STORE_CONTEXT_MAX (256 * 1024) /* run context JSON, bytes including the NUL */
#define MFU_STORE_BATCH_ROWS 1000          /* default rows per write transaction */
#define MFU_STORE_MAX_BATCH_ROWS 1000000   /* the most rows one transaction may hold */
#define MFU_STORE_BUSY_TIMEOUT_MS 5000     /* default wait for another writer, milliseconds */
/* Bytes hashed at the start of a source file, and before its resume point, to recognise it. */
#define MFU_STORE_HASH_BYTES 1024
/* Rows before the resume point that are written again when a grown file is ingested: a new
 * line can still merge into one of the last MFU_RUN_DEDUP_WINDOW rows, and the last row may
 * have come from a partial line. */
#define MFU_STORE_RESUME_OVERLAP (MFU_RUN_DEDUP_WINDOW + 1)

/* mfu_store_open() flags. */
enum {
    MFU_STORE_CREATE = 1u << 0,  /* create the file and the schema when the file is absent */
    MFU_STORE_READONLY = 1u << 1 /* read only: no migration, every write fails */
};

typedef struct mfu_store mfu_store;

/* Open the store at path (":memory:" for a private in-memory store). flags: MFU_STORE_*.
 * An existing file must be an mfu store (or an empty SQLite file, which becomes one); its
 * schema is migrated forward unless MFU_STORE_READONLY. *out is NULL on failure.
 * Errors: MFU_E_INVALID (NULL path/out, unknown flag, READONLY with CREATE), MFU_E_IO (absent
 * file without MFU_STORE_CREATE, not an SQLite file, damaged, locked past the busy timeout,
 * not an mfu store), MFU_E_UNSUPPORTED (schema newer than MFU_STORE_SCHEMA_VERSION, or older
 * with MFU_STORE_READONLY), MFU_E_NOMEM. Every message names the path and what to do. */
MFU_API mfu_status mfu_store_open(const char *path, unsigned flags, mfu_store **out,
                                  mfu_error *err);

/* Close a store opened by mfu_store_open(). NULL is allowed. */
MFU_API void mfu_store_close(mfu_store *s);

/* The path the store was opened with; owned by s. */
MFU_API const char *mfu_store_path(const mfu_store *s);

/* How long a write waits for another writer to finish, in milliseconds (0 = fail at once;
 * default MFU_STORE_BUSY_TIMEOUT_MS). Errors: MFU_E_INVALID (NULL s, negative ms). */
MFU_API mfu_status mfu_store_set_busy_timeout(mfu_store *s, int ms, mfu_error *err);

/* Rows per write transaction, 1..MFU_STORE_MAX_BATCH_ROWS (default MFU_STORE_BATCH_ROWS).
 * Errors: MFU_E_INVALID (NULL s, rows out of range). */
MFU_API mfu_status mfu_store_set_batch_rows(mfu_store *s, size_t rows, mfu_error *err);

/* Called after each committed write transaction of rows with the rows committed so far by the
 * current call and the rows that call will write in all. It must not use s. fn NULL removes
 * it. */
typedef void (*mfu_store_progress_fn)(void *ctx, size_t rows_done, size_t rows_total);
MFU_API void mfu_store_set_progress(mfu_store *s, mfu_store_progress_fn fn, void *ctx);

/* ---- runs and rows ---------------------------------------------------------------------- */

/* The id of the run called name. Errors: MFU_E_INVALID (NULL argument), MFU_E_UNKNOWN (no run
 * of that name; *id is left), MFU_E_IO. */
MFU_API mfu_status mfu_store_find_run(mfu_store *s, const char *name, int64_t *id, mfu_error *err);

/* Create an empty run called name with metadata meta (NULL = unknown), for mfu_store_append_
 * steps(). *id (may be NULL) receives its id. A name is 1..MFU_STORE_NAME_MAX-1 bytes of valid
 * UTF-8, not starting with '-', without control characters. Errors: MFU_E_INVALID (bad name, or a
 * run of that name exists), MFU_E_IO. */
MFU_API mfu_status mfu_store_create_run(mfu_store *s, const char *name, const mfu_run_meta *meta,
                                        int64_t *id, mfu_error *err);

/* Store every row, the per-rank observations and the metadata of run under name, creating the
 * run or replacing the rows, observations, metadata and source record of the run of that name
 * (its tags and findings stay). Written in batches, each observation with its row; see the file
 * comment for what an interrupted call leaves. *id may be NULL.
 * Errors: MFU_E_INVALID, MFU_E_IO, MFU_E_NOMEM. */
MFU_API mfu_status mfu_store_put_run(mfu_store *s, const char *name, const mfu_run *run,
                                     int64_t *id, mfu_error *err);

/* Append n rows after the last row of run id, in batches (no per-rank observations: a row
 * that repeats a step of another rank makes one when read back, as in any run). The run's
 * `complete` flag is left as it was (an interrupted ingest stays incomplete). steps may be NULL
 * when n is 0.
 * Errors: MFU_E_INVALID (NULL argument, no run id), MFU_E_IO (including a run changed by
 * another writer meanwhile). */
MFU_API mfu_status mfu_store_append_steps(mfu_store *s, int64_t id, const mfu_step *steps, size_t n,
                                          mfu_error *err);

/* Read run id back into a new mfu_run (*out; free with mfu_run_free). Values round-trip
 * exactly (NULL <-> NaN), per-rank observations included (mfu_run_rank_obs_append, in their
 * stored order). The rows are taken by mfu_run_append()'s rule: stored chunks whose step
 * numbers rise are read as whole columns, other rows one by one through mfu_run_append(), so
 * rows written by mfu_store_append_steps() whose step numbers repeat within
 * MFU_RUN_DEDUP_WINDOW merge as they would in any run (a stored observation goes to the row its
 * row merged into); a run that was stored whole comes back row for row. As in any run, a double
 * column that no row fills has no array (mfu_run_column() is NULL; mfu_run_get() gives NaN). *out
 * is NULL on failure. Errors: MFU_E_INVALID (no run id), MFU_E_LIMIT (more than MFU_RUN_MAX_STEPS
 * rows), MFU_E_IO, MFU_E_NOMEM.
 */
MFU_API mfu_status mfu_store_get_run(mfu_store *s, int64_t id, mfu_run **out, mfu_error *err);

/* Delete run id with its rows, tags, findings and source record. Errors: MFU_E_INVALID (no run
 * id), MFU_E_IO. */
MFU_API mfu_status mfu_store_delete_run(mfu_store *s, int64_t id, mfu_error *err);

/* MFU_OK when name is a valid run name (see mfu_store_create_run), else MFU_E_INVALID with a
 * message naming --run. */
MFU_API mfu_status mfu_store_check_name(const char *name, mfu_error *err);

/* ---- listing ---------------------------------------------------------------------------- */

typedef struct mfu_store_tag {
    const char *key;
    const char *value;
} mfu_store_tag;

/* One run as listed. Strings are owned by the list; never NULL ("" when unknown). */
typedef struct mfu_store_run_info {
    int64_t id;
    const char *name;
    const char *format; /* ingest format, "" when unknown */
    int64_t created_s;  /* when the run was created, seconds since 1970 */
    int64_t updated_s;  /* last write, seconds since 1970 */
    int64_t steps;      /* rows stored */
    int64_t first_step; /* step number of the first and of the last row (0 when no rows) */
    int64_t last_step;
    bool complete;        /* false: an ingest or put was interrupted; ingest again */
    const char *source;   /* absolute path of the source log, "" when none */
    int64_t source_bytes; /* bytes of the source read (the resume position) */
    int64_t source_lines; /* lines of the source read */
    size_t ntags;
    const mfu_store_tag *tags; /* sorted by key */
    const char *context;       /* the run context (mfu_store_set_context), "" when none */
} mfu_store_run_info;

typedef struct mfu_store_list mfu_store_list;

/* Every run, sorted by name, with tags and row counts. *out: free with mfu_store_list_free.
 * Errors: MFU_E_INVALID, MFU_E_IO, MFU_E_NOMEM. */
MFU_API mfu_status mfu_store_list_runs(mfu_store *s, mfu_store_list **out, mfu_error *err);
/* The number of runs in l (0 for NULL); run i, owned by l (NULL when i is out of range);
 * free l (NULL allowed). */
MFU_API size_t mfu_store_list_count(const mfu_store_list *l);
MFU_API const mfu_store_run_info *mfu_store_list_at(const mfu_store_list *l, size_t i);
MFU_API void mfu_store_list_free(mfu_store_list *l);

/* ---- tags ------------------------------------------------------------------------------- */

/* Set tag key of run id to value; value NULL removes the tag. key: 1..MFU_STORE_TAG_KEY_MAX-1
 * bytes of [A-Za-z0-9_.:-]; value: under MFU_STORE_TAG_VALUE_MAX bytes of valid UTF-8, no
 * control characters. Errors: MFU_E_INVALID (bad key or value, no run id), MFU_E_IO. */
MFU_API mfu_status mfu_store_set_tag(mfu_store *s, int64_t id, const char *key, const char *value,
                                     mfu_error *err);

/* MFU_OK when key (and value, unless NULL) are a valid tag (see mfu_store_set_tag), else
 * MFU_E_INVALID with a message naming --tag. */
MFU_API mfu_status mfu_store_check_tag(const char *key, const char *value, mfu_error *err);

/* Copy tag key of run id into value (size n). Errors: MFU_E_MISSING (no such tag; value is
 * left), MFU_E_LIMIT (n too small; value holds the truncated text), MFU_E_INVALID, MFU_E_IO. */
MFU_API mfu_status mfu_store_get_tag(mfu_store *s, int64_t id, const char *key, char *value,
                                     size_t n, mfu_error *err);

/* ---- context ---------------------------------------------------------------------------- */

/* The run context is what a report of the run needs besides its log (model, device, job
 * size): the caller's command-line arguments, stored as a JSON array of strings, for example
 * ["--model","llama3-8b","--seq","8192","--device","h100-sxm"], so that the same option parser
 * reads them back. The store checks only the shape; what the arguments mean is the caller's.
 * put_run and ingest leave it as it is. */

/* Set the context of run id to context_json (NULL or "" clears it): a JSON array of strings,
 * under MFU_STORE_CONTEXT_MAX bytes. Updates the run's updated_s when the context changes (the
 * same context again writes nothing). Errors: MFU_E_INVALID (no run
 * id, read-only store), MFU_E_PARSE (not a JSON array of strings), MFU_E_LIMIT (too long),
 * MFU_E_IO. */
MFU_API mfu_status mfu_store_set_context(mfu_store *s, int64_t id, const char *context_json,
                                         mfu_error *err);

/* The context of run id: *out is a malloc'd copy (free() it), or NULL when the run has none.
 * Errors: MFU_E_INVALID (NULL argument, no run id), MFU_E_IO, MFU_E_NOMEM. */
MFU_API mfu_status mfu_store_get_context(mfu_store *s, int64_t id, char **out, mfu_error *err);

/* MFU_OK when context_json is a JSON array of strings under MFU_STORE_CONTEXT_MAX bytes, else
 * MFU_E_PARSE or MFU_E_LIMIT with a message. NULL is invalid. */
MFU_API mfu_status mfu_store_check_context(const char *context_json, mfu_error *err);

/* ---- findings --------------------------------------------------------------------------- */

/* One finding of the analysis, as stored. */
typedef struct mfu_store_finding {
    const char *kind;     /* what was found ("stall", "throttle", ...), required */
    const char *severity; /* how bad ("info", "warning", "error", ...), required */
    int64_t first_step;   /* the steps it concerns */
    int64_t last_step;
    const char *evidence_json; /* a JSON object with the numbers behind it; NULL = {} */
    const char *next_step;     /* what to do about it, one line; NULL = "" */
} mfu_store_finding;

/* Replace every finding of run id by f[0..n) in one transaction (n = 0 clears them).
 * Errors: MFU_E_INVALID (no run id, missing kind/severity), MFU_E_PARSE (evidence_json is not
 * a JSON object), MFU_E_IO. */
MFU_API mfu_status mfu_store_replace_findings(mfu_store *s, int64_t id, const mfu_store_finding *f,
                                              size_t n, mfu_error *err);

typedef struct mfu_store_findings mfu_store_findings;

/* The findings of run id in the order they were stored. *out: free with
 * mfu_store_findings_free; its strings are owned by it. Errors: MFU_E_INVALID, MFU_E_IO,
 * MFU_E_NOMEM. */
MFU_API mfu_status mfu_store_get_findings(mfu_store *s, int64_t id, mfu_store_findings **out,
                                          mfu_error *err);
/* The number of findings in f (0 for NULL); finding i, owned by f (NULL when i is out of
 * range); free f (NULL allowed). */
MFU_API size_t mfu_store_findings_count(const mfu_store_findings *f);
MFU_API const mfu_store_finding *mfu_store_findings_at(const mfu_store_findings *f, size_t i);
MFU_API void mfu_store_findings_free(mfu_store_findings *f);

/* ---- sources and ingest ----------------------------------------------------------------- */

/* Which file a run came from and how far it was read. */
typedef struct mfu_store_source {
    char path[MFU_STORE_PATH_MAX]; /* absolute path, "" when the run has no source file */
    int64_t dev;                   /* st_dev and st_ino of the file when read */
    int64_t inode;
    int64_t mtime_ns;   /* its modification time before reading, ns since 1970 */
    int64_t head_bytes; /* bytes hashed at the start: min(bytes, HASH_BYTES) */
    uint64_t head_hash; /* FNV-1a 64 of those bytes */
    uint64_t tail_hash; /* FNV-1a 64 of the head_bytes bytes before `bytes` */
    int64_t bytes;      /* bytes read: the resume position */
    int64_t lines;      /* physical lines read up to `bytes` */
    bool complete;      /* every row of that read is stored */
} mfu_store_source;

/* Read the source record of run id into *out (path "" when it has none). Errors:
 * MFU_E_INVALID (no run id), MFU_E_IO. */
MFU_API mfu_status mfu_store_get_source(mfu_store *s, int64_t id, mfu_store_source *out,
                                        mfu_error *err);

/* Record *src as the source of run id (NULL clears it); src->complete is ignored (it follows
 * the rows). mfu_store_ingest_path() does this itself, in the transaction that starts writing
 * the rows. Errors: MFU_E_INVALID, MFU_E_IO. */
MFU_API mfu_status mfu_store_set_source(mfu_store *s, int64_t id, const mfu_store_source *src,
                                        mfu_error *err);

/* What mfu_store_ingest_path() did. */
typedef enum mfu_store_action {
    MFU_STORE_CREATED = 1,   /* a new run */
    MFU_STORE_UNCHANGED = 2, /* the file is as it was when read: nothing read or written */
    MFU_STORE_RESUMED = 3,   /* the file grew (or the last ingest was interrupted): rows from
                                the resume point on were written */
    MFU_STORE_RESTARTED = 4  /* the file was truncated or replaced: every row was rewritten */
} mfu_store_action;

/* "created", "unchanged", "resumed", "restarted"; "?" otherwise. Never NULL. */
MFU_API const char *mfu_store_action_name(mfu_store_action a);

typedef struct mfu_store_ingest_opts {
    const char *run_name;   /* NULL or "": derived from the file name (mfu_store_default_name) */
    mfu_ingest_opts ingest; /* format, --map, limits, as for mfu_ingest_new() */
} mfu_store_ingest_opts;

typedef struct mfu_store_ingest_result {
    int64_t run_id;
    char run_name[MFU_STORE_NAME_MAX];
    mfu_store_action action;
    char reason[160];    /* why it restarted, "" otherwise */
    size_t rows;         /* rows the run holds now */
    size_t rows_written; /* rows written by this call (overlap included) */
    int64_t bytes;       /* the recorded position */
    int64_t lines;
    mfu_ingest_stats stats; /* of the read; zeroed when unchanged */
    size_t text_repaired;   /* bytes of the log's header text (model, device, ...) that were
                               not UTF-8, stored as U+FFFD (the store holds only UTF-8) */
} mfu_store_ingest_result;

/* Ingest the log at path ("-" = stdin) into the run o->run_name and record where it stopped.
 * Ingesting the same file again is idempotent; see docs/internals/store.md for the rule:
 *   - same file (device, inode), same size and mtime, same first bytes: unchanged, no read;
 *   - same file, grown, the first bytes and the bytes before the old end unchanged:
 *     resumed; the log is read from its start (the ingest API cannot start mid-file) and only
 *     rows from MFU_STORE_RESUME_OVERLAP before the stored end are written;
 *   - anything else (truncated, replaced, other format): restarted, every row rewritten.
 * A run of that name made from another path is an error (pick another --run). stdin has no
 * identity: its run is rewritten each time. o may be NULL; res may be NULL.
 * Errors: those of mfu_ingest_* (MFU_E_IO for an unreadable file, MFU_E_EMPTY, ...), and
 * MFU_E_INVALID (no name for stdin, a name held by another source), MFU_E_IO (store). */
MFU_API mfu_status mfu_store_ingest_path(mfu_store *s, const char *path,
                                         const mfu_store_ingest_opts *o,
                                         mfu_store_ingest_result *res, mfu_error *err);

/* As mfu_store_ingest_path() for an open file f positioned at its start (not closed; read to
 * its end). path names it: the source record keeps its absolute form. Lets a caller watch
 * fileno(f)'s offset to show progress while the log is read. */
MFU_API mfu_status mfu_store_ingest_file(mfu_store *s, FILE *f, const char *path,
                                         const mfu_store_ingest_opts *o,
                                         mfu_store_ingest_result *res, mfu_error *err);

/* The run name a path gets by default: its file name without directories, without a .gz or
 * .zst suffix and then without its last extension ("logs/train.log.gz" -> "train"), cut to
 * fit, control characters replaced by '_' and a leading '-' by '_'. Writes at least "run". */
MFU_API void mfu_store_default_name(const char *path, char *name, size_t n);

/* ---- attached traces -------------------------------------------------------------------- */

/* The most bytes of trace views one run keeps. */
#define MFU_STORE_TRACE_MAX (16 * 1024 * 1024)

/* Attach the views of a profiler trace (the JSON of `mfu trace --json`, made by the caller) to
 * run id, replacing what was attached before; removed with the run. Errors: MFU_E_INVALID
 * (NULL, read-only store, no run id), MFU_E_LIMIT (past MFU_STORE_TRACE_MAX), MFU_E_IO. */
MFU_API mfu_status mfu_store_put_trace(mfu_store *s, int64_t id, const char *json, mfu_error *err);

/* The views attached to run id: *out a malloc'd copy (free() it), NULL when none is attached.
 * Errors: MFU_E_INVALID (NULL argument), MFU_E_IO, MFU_E_NOMEM. */
MFU_API mfu_status mfu_store_get_trace(mfu_store *s, int64_t id, char **out, mfu_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MFU_STORE_H */
