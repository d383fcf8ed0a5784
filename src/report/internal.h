/*
 * report/internal.h - what the files of src/report share: robust statistics (stats.c), the
 * report object, the analysis and findings (explain.c) and the comparisons (compare.c). What
 * other modules use is in report/report.h.
 */
#ifndef MFU_REPORT_INTERNAL_H
#define MFU_REPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "figures/figures.h"
#include "mfu/report.h"
#include "report/report.h"
#include "util/util.h"

/* ---- statistics (stats.c) ---------------------------------------------------------------- */

/* Summary of the values x[i] with keep[i] non-zero (NULL: every row) and x[i] finite. scratch has
 * room for n doubles (it is overwritten). */
mfu_report_stat mfu__stat(const double *x, const uint8_t *keep, size_t n, double *scratch);
/* mfu__stat of a column whose every row is x0, without reading it: the same figures (the mean
 * summed row by row, as mfu__stat sums it). */
mfu_report_stat mfu__stat_one(double x0, const uint8_t *keep, size_t n);

/* ---- the report object ------------------------------------------------------------------- */

/* What the analysis's tokens are (mfu_report_analysis_unit). */
typedef enum mfu__unit { MFU__UNIT_TOKENS = 0, MFU__UNIT_DEVICE, MFU__UNIT_STEPS } mfu__unit;

struct mfu_report {
    mfu__fctx fig;   /* the context (fig.c is the public mfu_report_context) */
    mfu__fcols cols; /* every step's figures (src/figures); the public series are its first
                        MFU_RS_COUNT_ columns */
    size_t nmissing;
    mfu_report_missing missing[MFU_REPORT_MAX_MISSING];
    size_t n;         /* steps */
    int64_t *steps;   /* n */
    size_t steps_len; /* its reserved mapping's length (util/pages.h; 0: malloc'd) */
    double *time_s;   /* n: the log's timestamp of each step (s since 1970; NaN none), for the
                         exports' wall times (export.c); NULL when no step has one */
    bool *loss_nan;   /* n: the step printed its loss as nan or inf (the run's loss_nan flag):
                         the exports write nan, not "not logged" */
    uint8_t *state;   /* n: each step's mfu_report_step_state */
    mfu_report_stat stat[MFU_RS_COUNT_];
    mfu_report_warmup warmup;
    size_t ncomparisons;
    mfu_report_comparison comparisons[MFU_REPORT_MAX_COMPARISONS];
    size_t nnotes;
    char notes[MFU_REPORT_MAX_NOTES][MFU_REPORT_TEXT_MAX];
    mfu_analysis *analysis; /* NULL: none */
    mfu__unit unit;
    mfu_energy energy; /* energy beside utilization over the steady steps (figures/energy.c) */
};

/* The findings the report adds to its analysis after the comparisons (explain.c): one
 * "reported_mismatch" per printed figure that disagrees, the roofline. No-op without an
 * analysis. Errors: MFU_E_NOMEM. */
mfu_status mfu__report_findings(mfu_report *r, const mfu_run *run, const mfu_report_input *in,
                                const mfu_workload *wl, mfu_error *err);

/* *copy: a malloc'ed copy of run's column c (report.c), NULL when the run has none; for what
 * must outlive the run's columns (mfu__run_drop_columns) or its growth. false when out of
 * memory. */
bool mfu__report_run_copy(const mfu_run *run, mfu_column c, double **copy);

/* Build the analysis of r from its columns and the run (explain.c): sets r->unit, the step
 * states and warm-up (r->state, r->warmup: the analysis's rule), and r->analysis (NULL when
 * in->no_analysis: only the states are kept). drop (NULL, or run itself): once the analysis's
 * input is taken from it, the columns r->cols borrowed are made r's (mfu__fcols_adopt) and the
 * rest freed (mfu__run_drop_columns), before the analysis runs. Errors: MFU_E_NOMEM, MFU_E_INVALID
 * (the analysis options out of range, field names the option). */
mfu_status mfu__report_explain(mfu_report *r, const mfu_run *run, mfu_run *drop,
                               const mfu_report_input *in, mfu_error *err);

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
