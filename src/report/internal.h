/*
 * report/internal.h - what the files of src/report share: the warm-up rule (warmup.c), robust
 * statistics (stats.c) and the comparisons (compare.c).
 */
#ifndef MFU_REPORT_INTERNAL_H
#define MFU_REPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "figures/figures.h"
#include "mfu/report.h"
#include "util/util.h"

/* ---- statistics (stats.c) ---------------------------------------------------------------- */

/* Summary of the values x[i] with keep[i] true and x[i] finite. scratch has room for n
 * doubles (it is overwritten). */
mfu_report_stat mfu__stat(const double *x, const bool *keep, size_t n, double *scratch);

/* ---- warm-up (warmup.c) ------------------------------------------------------------------ */

/* Thresholds of the report's rules around the analysis module's warm-up detector
 * (docs/internals/report.md). */
#define MFU__ARTIFACT_FACTOR 5.0 /* a step this many times faster than the median */
#define MFU__WARMUP_MIN_STEPS 4  /* fewer usable steps: no warm-up is looked for */
#define MFU__WARMUP_ANALYSIS_STEPS                                                                 \
    20                                /* the analysis detector's minimum (2 x its 10-row           \
                                         settle window); shorter logs use the short rule */
#define MFU__WARMUP_MIN_SLOWDOWN 0.05 /* short rule: a leading step this much slower ... */
#define MFU__WARMUP_NOISE_K 3.0       /* ... or k x the relative MAD, whichever is larger */
#define MFU__WARMUP_MAX_FIRST_STEP                                                                 \
    100 /* a log whose first step is above this and above twice                                    \
           its first step interval starts mid-run */

/* Classify steps from their throughput x[i] (tokens/s or 1/step time; NaN = unusable):
 * state[i] is set to STEADY, WARMUP, ARTIFACT or UNUSABLE and *w is filled (impossible stays
 * 0: the caller marks those). scratch: 2n doubles. Errors: MFU_E_NOMEM (state and *w are then
 * partly filled: the caller fails). */
mfu_status mfu__warmup(const double *x, size_t n, const int64_t *steps,
                       mfu_report_step_state *state, mfu_report_warmup *w, double *scratch,
                       mfu_error *err);

/* ---- the report object ------------------------------------------------------------------- */

/* What the analysis's tokens are (mfu_report_analysis_unit). */
typedef enum mfu__unit { MFU__UNIT_TOKENS = 0, MFU__UNIT_DEVICE, MFU__UNIT_STEPS } mfu__unit;

struct mfu_report {
    mfu__fctx fig;   /* the context (fig.c is the public mfu_report_context) */
    mfu__fcols cols; /* every step's figures (src/figures); the public series are its first
                        MFU_RS_COUNT_ columns */
    size_t nmissing;
    mfu_report_missing missing[MFU_REPORT_MAX_MISSING];
    size_t n;       /* steps */
    int64_t *steps; /* n */
    mfu_report_step_state *state;
    mfu_report_stat stat[MFU_RS_COUNT_];
    mfu_report_warmup warmup;
    size_t ncomparisons;
    mfu_report_comparison comparisons[MFU_REPORT_MAX_COMPARISONS];
    size_t nnotes;
    char notes[MFU_REPORT_MAX_NOTES][MFU_REPORT_TEXT_MAX];
    mfu_analysis *analysis; /* NULL: none */
    mfu__unit unit;
};

/* The findings the report adds to its analysis after the comparisons (explain.c): one
 * "reported_mismatch" per printed figure that disagrees, the roofline. No-op without an
 * analysis. Errors: MFU_E_NOMEM. */
mfu_status mfu__report_findings(mfu_report *r, const mfu_run *run, const mfu_report_input *in,
                                const mfu_workload *wl, mfu_error *err);

/* Build the analysis of r from its columns and the run (explain.c): sets r->unit, the step
 * states and warm-up (r->state, r->warmup: the analysis's rule), and r->analysis (NULL when
 * in->no_analysis: only the states are kept). Errors: MFU_E_NOMEM, MFU_E_INVALID (the analysis
 * options out of range, field names the option). */
mfu_status mfu__report_explain(mfu_report *r, const mfu_run *run, const mfu_report_input *in,
                               mfu_error *err);

/* Take r's analysis out of r (explain.c): the caller owns it (mfu_analysis_free); r keeps
 * everything else and has no analysis from then on. For a holder that keeps the analysis of a
 * long run without the report's per-step columns (the server's cache). NULL when r is NULL or
 * has none. */
mfu_analysis *mfu__report_take_analysis(mfu_report *r);

/* What the comparisons need beside the report (compare.c). */
typedef struct mfu__cmp_ctx {
    mfu__fctx *fig; /* the report's context (input, framework profile, counts, peaks) */
    double tol;
    double *scratch; /* 2n doubles */
} mfu__cmp_ctx;

/* Fill r->comparisons (and notes) from the series; r's columns, states and context are set. */
void mfu__report_compare(mfu_report *r, const mfu__cmp_ctx *c);

/* Append a note (dropped when the report holds MFU_REPORT_MAX_NOTES). */
void mfu__report_note(mfu_report *r, const char *fmt, ...) MFU__PRINTF(2, 3);

/* CRC-32C (Castagnoli) of data[0..n), as TensorBoard's record format checks it (export.c). */
uint32_t mfu__crc32c(const void *data, size_t n);

#endif
