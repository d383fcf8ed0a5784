/*
 * cli/report_out.h - rendering of `mfu report`: aligned text (one block per run) and the JSON
 * object whose keys docs/cli.md documents.
 */
#ifndef MFU_CLI_REPORT_OUT_H
#define MFU_CLI_REPORT_OUT_H

#include <stdio.h>

#include "cli/cli.h"
#include "mfu/mfu.h"

/* One run as text on out. path names the log; st is what ingest did with it. */
void report_out_text(FILE *out, const char *path, const mfu_ingest_stats *st, const mfu_report *r);

/* One run as a JSON object (new reference; NULL when out of memory). series: include the
 * per-step array. */
json_t *report_out_json(const char *path, const mfu_ingest_stats *st, const mfu_report *r,
                        bool series);

#endif
