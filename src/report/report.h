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
 * long run without the report's per-step columns (the server's cache). NULL when r is NULL or
 * has none. */
mfu_analysis *mfu__report_take_analysis(mfu_report *r);

#endif /* MFU_REPORT_REPORT_H */
