/*
 * cli/report_out.h - rendering of `mfu report`: aligned text (one block per run) and the JSON
 * object whose keys docs/cli.md documents.
 */
#ifndef MFU_CLI_REPORT_OUT_H
#define MFU_CLI_REPORT_OUT_H

#include <stdio.h>

#include "cli/cli.h"
#include "mfu/mfu.h"

/* Every skipped line of a log, for `mfu report --verbose` (mfu_ingest_opts.on_skip fills it
 * through report_skips_note). At most REPORT_SKIPS_MAX are kept; `more` counts the rest. */
#define REPORT_SKIPS_MAX 100000
/* How many skipped lines the text report names without --verbose. */
#define REPORT_SKIPS_SHOWN 3
typedef struct report_skips {
    mfu_ingest_skip *v;
    size_t n, cap;
    long more;
} report_skips;
/* on_skip callback: ctx is a report_skips. */
void report_skips_note(void *ctx, long line, const char *reason);
void report_skips_free(report_skips *k);

/* Where a report's run came from: a log read now, or a run of the store (`--run NAME`). */
typedef struct report_origin {
    const char *path;              /* the log's path; for a stored run, the run's name */
    const mfu_ingest_stats *stats; /* what ingest did with the log; NULL for a stored run */
    const char *store;             /* stored run: the store's path; NULL for a log */
    const char *format;            /* stored run: the format it was read as */
    const char *source;            /* stored run: the log it was ingested from ("" unknown) */
    long source_lines;             /* stored run: lines of that log read (-1 unknown) */
    const report_skips *skips;     /* --verbose: every skipped line; NULL: the first few of
                                      stats (skip_samples) are named */
} report_origin;

/* One run as text on out. */
void report_out_text(FILE *out, const report_origin *o, const mfu_report *r);

/* One run as a JSON object without its per-step series (new reference; NULL when out of
 * memory; report_out_json_write adds the series a step at a time). A stored run has "run" and
 * "store", "file" is its source log (null when unknown) and "lines" is null: the log's lines were
 * counted when it was ingested. */
json_t *report_out_json(const report_origin *o, const mfu_report *r);

/* before (e.g. "[\n  " or ",\n  " between the elements of an array), then the same object
 * written to out, byte for byte what cli_print_json would print of it at
 * nesting depth (0: the document itself; 1: an element of the top-level array; no newline
 * after it), with the per-step series written a step at a time instead of built as one tree:
 * memory for one step, not for the run. Returns CLI_EXIT_OK; CLI_EXIT_FAIL with the error on
 * stderr when out of memory (a field could not be added: nothing is written, not even before)
 * or when writing fails. *started: whether anything was written (then the document holds this
 * element, whole or cut short, and the next one needs its separator). */
int report_out_json_write(FILE *out, const char *before, const report_origin *o,
                          const mfu_report *r, bool series, int depth, bool *started);

#endif
