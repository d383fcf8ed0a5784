/*
 * report/report.h - what other parts of mfu use from src/report beyond the public
 * mfu/report.h (cross-module header: the server's insight cache; not installed). What only
 * the report's own files share is in report/internal.h.
 */
#ifndef MFU_REPORT_REPORT_H
#define MFU_REPORT_REPORT_H

#include "mfu/analysis.h"
#include "mfu/report.h"

/* Take r's analysis out of r (explain.c): the caller owns it (mfu_analysis_free); r keeps
 * everything else and has no analysis from then on. For a holder that keeps the analysis of a
 * long run without the report's per-step columns (the server's cache): what the analysis read
 * of r's columns is copied into it first (mfu__analysis_own). NULL when r is NULL or has none,
 * or when that copy runs out of memory (the analysis is then freed; mfu_report_analysis(r)
 * before the call tells the two apart). */
mfu_analysis *mfu__report_take_analysis(mfu_report *r);

/* mfu_report_compute of run for a caller that frees the run next (`mfu report`): the figures'
 * columns equal to the run's are the run's arrays (lent, then adopted: mfu__fcols_adopt), the
 * report's step numbers are the run's (mfu__run_take_steps), and the other columns are freed
 * (mfu__run_drop_columns) once the report has taken what it needs of them, before the
 * analysis, so the two are not held at once. The report is the same, to the byte. Afterwards
 * run is empty (no rows; its meta and per-rank observations kept), only for mfu_run_free. */
mfu_status mfu__report_compute_consume(mfu_run *run, const mfu_report_input *in, mfu_report **out,
                                       mfu_error *err);

#endif /* MFU_REPORT_REPORT_H */
