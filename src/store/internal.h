/*
 * store/internal.h - the pieces of the run store shared by its files (not public).
 *
 *   store.c    open, pragmas, schema and migrations, error mapping, transactions
 *   rows.c     step rows and metadata: the batched writer, put / append / get, delete
 *   catalog.c  listing, tags, findings, source records
 *   from_log.c ingest a log file into a run: identity, the resume rule
 *   chunks.c   the rows again as compressed column chunks (step_chunks): encode, decode
 */
#ifndef MFU_STORE_INTERNAL_H
#define MFU_STORE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>
#include <zstd.h>

#include "mfu/store.h"
#include "run/step.h"

struct mfu_store {
    sqlite3 *db;
    char *path;
    bool readonly;
    size_t batch_rows;
    mfu_store_progress_fn progress;
    void *progress_ctx;
    sqlite3_stmt *insert_step; /* prepared once, reused for every row */
    sqlite3_stmt *insert_obs;  /* likewise for per-rank observations */
};

/* Fill err from the SQLite result rc of the last call on s (what = what was being done, for
 * the message) and return the mfu_status it maps to. Messages name the store path and a fix. */
mfu_status mfu__store_fail(mfu_store *s, mfu_error *err, int rc, const char *what);

/* Run one or more SQL statements without results. */
mfu_status mfu__store_exec(mfu_store *s, const char *sql, mfu_error *err);

/* Prepare sql; on failure fill err. */
mfu_status mfu__store_prepare(mfu_store *s, const char *sql, sqlite3_stmt **st, mfu_error *err);

/* BEGIN IMMEDIATE (takes the write lock, waiting up to the busy timeout) / COMMIT / ROLLBACK.
 * rollback never fails visibly (it is the cleanup path). */
mfu_status mfu__store_begin(mfu_store *s, mfu_error *err);
mfu_status mfu__store_commit(mfu_store *s, mfu_error *err);
void mfu__store_rollback(mfu_store *s);

/* MFU_E_INVALID when s is read-only (names the fix). */
mfu_status mfu__store_writable(mfu_store *s, mfu_error *err);

/* Seconds since 1970, now. */
int64_t mfu__store_now_s(void);

/* ---- the batched row writer (rows.c) ---------------------------------------------------- */

/* Rows come from a getter so that a whole run and an array of steps share the writer: it
 * copies row i (absolute row number, from..total-1) into *out. */
typedef void (*mfu__store_row_fn)(const void *ctx, size_t i, mfu_step *out);

typedef enum { MFU__SRC_KEEP = 0, MFU__SRC_SET, MFU__SRC_CLEAR } mfu__src_mode;

typedef struct mfu__store_write {
    int64_t id;              /* the run; set by the first transaction when create_name */
    const char *create_name; /* not NULL: create the run (with meta) in the first transaction */
    size_t from;             /* first row to write: rows >= from are deleted first */
    size_t total;            /* rows when done (rows from..total-1 come from get) */
    bool append;             /* from = the run's row count, read inside the transaction;
                                total = from + n_append */
    size_t n_append;
    mfu__store_row_fn get;
    const void *ctx;
    const mfu_run_meta *meta; /* not NULL: store this metadata */
    mfu__src_mode src_mode;
    const mfu_store_source *src; /* for MFU__SRC_SET (its complete flag is ignored) */
    bool check_gen;              /* fail unless the run's generation is still gen */
    int64_t gen;
    /* Not NULL: the run whose per-rank observations go with the rows (put, ingest). Stored
     * observations numbered from first_seq on, or of rows >= from, are deleted by the first
     * transaction; the run's observations from first_seq on are written in their order, each
     * in the first transaction whose rows hold its row and those of the observations before it
     * (so the store always holds a prefix of the numbering, every one of a stored row).
     * first_seq = mfu__store_obs_first_seq(obs_src, from): numbers below it are the same in
     * the run and the store (an ingest that resumes checks it). NULL: stored observations of
     * rows >= from are deleted, none written. */
    const mfu_run *obs_src;
    size_t rows_written; /* out */
    /* the writer's own */
    size_t first_seq, obs_next; /* the next observation to write */
    mfu_step *chunk;            /* rows of the chunk being filled (NULL: none will be) */
    size_t chunk_start;         /* the row number of chunk[0] */
    bool chunk_bad;             /* a row before from could not be read: no chunk this time */
} mfu__store_write;

/* The number of the first observation of run (in the order it holds them) whose row is >=
 * from; mfu_run_rank_obs_count(run) when none is. */
size_t mfu__store_obs_first_seq(const mfu_run *run, size_t from);

/* Observations of run id: *n = how many have seq < before and row_no < rows; *last = the one
 * numbered before - 1 (*found false when there is none). */
mfu_status mfu__store_obs_prefix(mfu_store *s, int64_t id, size_t before, size_t rows, size_t *n,
                                 mfu_rank_obs *last, bool *found, mfu_error *err);

/* Write rows in transactions of s->batch_rows, recording the row count, first/last step,
 * completeness (and metadata / source in the first one) with each. */
mfu_status mfu__store_write_rows(mfu_store *s, mfu__store_write *w, mfu_error *err);

/* The run's row count and generation. MFU_E_INVALID when there is no run id. */
mfu_status mfu__store_run_state(mfu_store *s, int64_t id, size_t *nrows, int64_t *gen,
                                mfu_error *err);

/* Read row i of run id into *out. *found false when the run has no such row. */
mfu_status mfu__store_get_row(mfu_store *s, int64_t id, size_t i, mfu_step *out, bool *found,
                              mfu_error *err);

/* Insert a run row with name and meta (no rows), returning its id. */
mfu_status mfu__store_insert_run(mfu_store *s, const char *name, const mfu_run_meta *meta,
                                 int64_t *id, mfu_error *err);

/* Write *src (NULL = none) as the source record of run id, inside the caller's transaction. */
mfu_status mfu__store_put_source(mfu_store *s, int64_t id, const mfu_store_source *src,
                                 mfu_error *err);

/* Metadata <-> JSON text (absent values left out). to_json returns a malloc'd string or NULL
 * when out of memory; from_json fills *m (unknown keys are ignored) and fails on bad JSON. */
char *mfu__store_meta_to_json(const mfu_run_meta *m);
/* The bytes of m's strings that are not UTF-8: to_json stores each as U+FFFD. */
size_t mfu__store_meta_repairs(const mfu_run_meta *m);
mfu_status mfu__store_meta_from_json(const char *text, mfu_run_meta *m, mfu_error *err);

/* Row i of the mfu_run ctx (the row source of a write from a run); an absent row reads as
 * mfu_step_init's step. */
void mfu__store_run_row(const void *ctx, size_t i, mfu_step *out);

/* ---- column chunks (chunks.c) ----------------------------------------------------------- */

/* Rows per chunk: rows [c * MFU__CHUNK_ROWS, (c + 1) * MFU__CHUNK_ROWS) of a run are chunk c,
 * stored once the run holds all of them. */
#define MFU__CHUNK_ROWS 16384

/* rows[0..n) (made as the steps table would give them back: NaN one NaN, a scope outside the
 * enum unknown) as a compressed blob: *blob malloc'd, *len bytes. Errors: MFU_E_NOMEM. */
mfu_status mfu__chunk_encode(mfu_step *rows, size_t n, void **blob, size_t *len, mfu_error *err);
/* The n rows of blob into rows[0..n); false when it is not a chunk of n rows (damaged). */
bool mfu__chunk_decode(const void *blob, size_t len, size_t n, mfu_step *rows);

/* A chunk read as columns: its bytes after decompression (raw, cap bytes, reused from chunk
 * to chunk with the decompression context) and where each member's values lie in them (cols,
 * as mfu__run_load takes them). Zero it before the first open; close it once. */
typedef struct mfu__chunk_view {
    unsigned char *raw;
    size_t cap;
    ZSTD_DCtx *dctx;
    mfu__run_cols cols;
} mfu__chunk_view;
/* Decompress blob, a chunk of n rows, into v: its values made as the steps table gives them
 * back (NaN one NaN, a scope outside the enum unknown). false when it is not a chunk of n rows
 * (damaged) or memory ran out; v->cols then means nothing, v can still be opened again. */
bool mfu__chunk_open(mfu__chunk_view *v, const void *blob, size_t len, size_t n);
/* The n rows of an opened chunk into rows[0..n). */
void mfu__chunk_rows(const mfu__chunk_view *v, size_t n, mfu_step *rows);
/* Free what v holds (a zeroed view too). */
void mfu__chunk_close(mfu__chunk_view *v);
/* Store rows[0..MFU__CHUNK_ROWS) as chunk `chunk` of run id, in the caller's transaction. */
mfu_status mfu__chunk_put(mfu_store *s, int64_t id, size_t chunk, mfu_step *rows, mfu_error *err);
/* Delete the chunks of run id that hold a row >= from_row, in the caller's transaction. */
mfu_status mfu__chunk_delete_from(mfu_store *s, int64_t id, size_t from_row, mfu_error *err);

#endif /* MFU_STORE_INTERNAL_H */
