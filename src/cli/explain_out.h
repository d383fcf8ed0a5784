/*
 * cli/explain_out.h - text and JSON of an analysis (mfu/analysis.h) for `mfu report` and
 * `mfu compare`: the segments table, each boundary's sentence and terms with their intervals
 * and verdicts, findings with evidence and next steps, invariants.
 */
#ifndef MFU_CLI_EXPLAIN_OUT_H
#define MFU_CLI_EXPLAIN_OUT_H

#include <stdio.h>

#include "cli/cli.h"
#include "mfu/mfu.h"

/* Segments, boundaries, findings and invariants of a (NULL: nothing). unit names what the
 * analysis's tokens are ("tokens", "tokens per device", "steps"). */
void explain_out_text(FILE *out, const mfu_analysis *a, const char *unit);

/* The terms of d as a table (term, change, interval, share, direction, size), indented. */
void explain_out_terms(FILE *out, const mfu_decomposition *d, const char *indent);

/* What tokens/s are under unit (mfu_report_analysis_unit; NULL: "tokens"): "tokens/s",
 * "tokens/s per device" or "steps/s". */
const char *explain_out_rate(const char *unit);
/* One level (medians of the steady steps) as "tokens/s 1.234M [1.23M, 1.24M], MFU 45.00%
 * [44.80, 45.20]" (the rate named for unit); an MFU interval that reaches above 100 % is
 * flagged as not meaningful. */
void explain_out_level(char *buf, size_t n, const mfu_level *l, const char *unit);
/* An MFU median and its interval as "MFU 45.00% [44.80, 45.20]" ("" when NaN). */
void explain_out_mfu(char *buf, size_t n, mfu_interval m);
/* A level's total, stalls included: "total (stalls included): tokens/s 18.33k, MFU 11.70%;
 * steps slower than the typical one cost 34.4 s of 50.3 s (68%)" ("" without a total). */
void explain_out_total(char *buf, size_t n, const mfu_level *l, const char *unit);

/* The findings of a, one block each (severity, kind, steps, summary, evidence, next step). */
void explain_out_findings(FILE *out, const mfu_analysis *a);

/* Add the analysis keys to the report object o: "segments", "decomposition", "findings",
 * "invariants" at the top, and "analysis" {unit, method, steps, warmup, steady}. Returns false
 * when out of memory. */
bool explain_out_json(json_t *o, const mfu_analysis *a, const char *unit);

#endif
