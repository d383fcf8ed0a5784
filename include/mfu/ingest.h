/*
 * mfu/ingest.h - read training logs of any supported framework into a run (mfu/run.h).
 *
 * Input is streamed: a file, stdin ("-"), an open FILE or a memory buffer, transparently
 * decompressed when it starts with the gzip or zstd magic bytes. Memory stays bounded: lines
 * are read one at a time and a line longer than the line limit is skipped and counted, never
 * held whole.
 *
 * Each line is cleaned before a format sees it: ANSI escapes are removed, carriage returns
 * split a line into the progress redraws it holds, and launcher / logging prefixes
 * ([rank0]:, "0: ", Python logging, absl, [titan], "> " quoting, indentation) are stripped
 * (docs/internals/ingest.md lists them). The format is detected by scoring the first lines
 * against every known format, or forced by name. A log of a stack no format knows is read by
 * the generic reader from the repeated shape of its step lines, and stats.note says how.
 *
 * Several inputs can be fed one after another into one session (rotated or resumed logs):
 * they form one run.
 *
 * Ownership and errors follow common.h. The error of a failed read names the input and the
 * 1-based line (mfu_error.line) when one is concerned.
 */
#ifndef MFU_INGEST_H
#define MFU_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "mfu/common.h"
#include "mfu/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Named limits. */
#define MFU_INGEST_MAX_LINE_BYTES (1024L * 1024L)    /* a longer line is skipped and counted */
#define MFU_INGEST_DETECT_LINES 2000                 /* lines scored for auto-detection, at most */
#define MFU_INGEST_DETECT_BYTES (4L * 1024L * 1024L) /* bytes held back for detection, at most */
#define MFU_INGEST_MAX_MAP 32                        /* --map entries */
#define MFU_INGEST_SKIP_SAMPLES 8 /* skipped lines remembered with their reason */
#define MFU_INGEST_NOTE_MAX 512   /* bytes of stats.note */

/* Options of an ingest session. Zero-initialise, then set what you need. */
typedef struct mfu_ingest_opts {
    const char *format;     /* force a format by name (see mfu_ingest_format_name); NULL
                               or "" or "auto" = detect */
    const char *const *map; /* nmap "field=column" strings for the jsonl / csv formats and
                               the generic reader (e.g. "step=iter", "step_time_s=dt"); each
                               may hold several comma-separated pairs */
    size_t nmap;
    size_t max_line_bytes; /* 0 = MFU_INGEST_MAX_LINE_BYTES; smaller values are for tests
                              and at least 64 */
    size_t detect_lines;   /* 0 = MFU_INGEST_DETECT_LINES */
    size_t max_steps;      /* 0 = MFU_RUN_MAX_STEPS */
    /* Told of every skipped line (also past the MFU_INGEST_SKIP_SAMPLES the stats keep): its
     * 1-based physical line and the reason, valid during the call. NULL: not told. */
    void (*on_skip)(void *ctx, long line, const char *reason);
    void *on_skip_ctx;
} mfu_ingest_opts;

/* One skipped line kept for the report. */
typedef struct mfu_ingest_skip {
    long line;        /* 1-based physical line */
    char reason[120]; /* what was expected, one line */
} mfu_ingest_skip;

/* What a session did with its input. Counts are of logical lines (a carriage-return redraw
 * counts as one). */
typedef struct mfu_ingest_stats {
    char format[32];          /* the format used ("" before detection) */
    bool detected;            /* true when auto-detected, false when forced */
    long lines;               /* physical lines read (\n-terminated, and a last one without) */
    long used;                /* lines that gave a step or run metadata */
    long ignored;             /* lines that are not this format's (other output, blank) */
    long skipped;             /* lines of this format that could not be read (see samples) */
    long too_long;            /* lines over the line limit (skipped, never buffered whole).
                                 lines = used + ignored + skipped + too_long: a line cut into
                                 pieces by \r (tqdm redraws) counts once, used when any piece
                                 was used */
    long merged;              /* step lines merged into a row with the same step number */
    long steps;               /* rows in the run */
    bool truncated_last_line; /* the input ended without a newline (the partial line was
                                 still read) */
    size_t peak_line_bytes;   /* largest line buffer held, bytes (<= the line limit + 1) */
    size_t nskip_samples;     /* entries used in skip_samples */
    mfu_ingest_skip skip_samples[MFU_INGEST_SKIP_SAMPLES]; /* the first skipped lines */
    char note[MFU_INGEST_NOTE_MAX]; /* what the format assumed, one line, "" for none: the
                                       generic reader's mapping of keys to fields and what it
                                       left (correct it with --map) */
} mfu_ingest_stats;

typedef struct mfu_ingest mfu_ingest;

/* Start a session. opts may be NULL (all defaults). Errors: MFU_E_UNKNOWN (no format of that
 * name; the message lists them), MFU_E_INVALID (a malformed --map entry or limit), MFU_E_NOMEM.
 * *out is set to NULL on failure. */
MFU_API mfu_status mfu_ingest_new(const mfu_ingest_opts *opts, mfu_ingest **out, mfu_error *err);

/* Free a session (and its run, unless taken by mfu_ingest_finish). NULL is allowed. */
MFU_API void mfu_ingest_free(mfu_ingest *ing);

/* Feed a file by path; "-" reads stdin. Errors: MFU_E_IO (cannot open/read, or corrupt
 * compressed data), MFU_E_PARSE (binary data, or a line the forced or detected format rejects
 * as fatal), MFU_E_LIMIT (row limit), MFU_E_NOMEM. After an error the session only accepts
 * mfu_ingest_free. */
MFU_API mfu_status mfu_ingest_feed_path(mfu_ingest *ing, const char *path, mfu_error *err);

/* Feed an open stream (not closed; read to its end). name is used in messages. */
MFU_API mfu_status mfu_ingest_feed_file(mfu_ingest *ing, FILE *f, const char *name, mfu_error *err);

/* Feed n bytes from memory (copied as read, not kept). name is used in messages. */
MFU_API mfu_status mfu_ingest_feed_buffer(mfu_ingest *ing, const void *data, size_t n,
                                          const char *name, mfu_error *err);

/* End the input and take the run: *out receives it (the caller frees it with mfu_run_free).
 * Errors: MFU_E_EMPTY (no format reads the log: the message names the input once, the
 * closest formats and why each failed, and the --format / --map that would help; or the
 * chosen format found no step), MFU_E_MISSING (the jsonl / csv formats lack a step column: the
 * message names --map step=COLUMN). *out is NULL on failure. */
MFU_API mfu_status mfu_ingest_finish(mfu_ingest *ing, mfu_run **out, mfu_error *err);

/* The run as read so far, for following a growing log: feed the new complete lines, peek,
 * repeat. Rows appear once the format is known (stats.format non-empty): while detecting, the
 * first lines are held back (at most MFU_INGEST_DETECT_LINES). Owned by the session, valid
 * until the next feed, finish or free; NULL for NULL. */
MFU_API const mfu_run *mfu_ingest_peek(const mfu_ingest *ing);

/* The session's counters so far (never NULL for a non-NULL session). */
MFU_API const mfu_ingest_stats *mfu_ingest_get_stats(const mfu_ingest *ing);

/* One-call form: ingest one path ("-" = stdin) into *out. stats may be NULL. */
MFU_API mfu_status mfu_ingest_path(const char *path, const mfu_ingest_opts *opts, mfu_run **out,
                                   mfu_ingest_stats *stats, mfu_error *err);

/* Write run as canonical JSON-lines (docs/formats.md): one header object with the metadata,
 * then one object per row; absent values are left out. Reading the output back with format
 * "mfu" gives the same run. Errors: MFU_E_INVALID (NULL), MFU_E_IO (a write failed). */
MFU_API mfu_status mfu_run_write_jsonl(const mfu_run *run, FILE *out, mfu_error *err);

/* Append rows [from, mfu_run_count(run)) of run to out in the same form (each with its
 * per-rank observations), after the header object when header is true. The header written so
 * has no "steps" (a file written a few rows at a time does not know its length). For a writer
 * that follows a growing run (mfu_monitor): the header once, then the new rows after each
 * append; a row changed by a merge after it was written is not written again. from past the
 * end writes no row. Errors: MFU_E_INVALID (NULL), MFU_E_NOMEM, MFU_E_IO. */
MFU_API mfu_status mfu_run_write_jsonl_rows(const mfu_run *run, size_t from, bool header, FILE *out,
                                            mfu_error *err);

/* The known formats, in detection-priority order: name and a one-line summary of i-th format,
 * NULL when i is past the end. */
MFU_API const char *mfu_ingest_format_name(size_t i);
MFU_API const char *mfu_ingest_format_summary(size_t i);

#ifdef __cplusplus
}
#endif
#endif /* MFU_INGEST_H */
