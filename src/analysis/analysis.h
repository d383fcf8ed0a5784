/*
 * analysis/analysis.h - what other parts of mfu use from src/analysis beyond the public
 * mfu/analysis.h and analysis/json.h (cross-module header: the report's SVG charts; not
 * installed): sorted-sample statistics (stats.c) and the wording of a relative change
 * (levels.c). What only the analysis's own files share is in analysis/internal.h.
 */
#ifndef MFU_ANALYSIS_ANALYSIS_H
#define MFU_ANALYSIS_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>

#include "mfu/analysis.h"

/* q-quantile (0..1, linear interpolation) of sorted v[0..n); NaN for n == 0. */
double mfu__quantile_sorted(const double *v, size_t n, double q);
/* Sort v ascending (NaN-free input). */
void mfu__sort_doubles(double *v, size_t n);
/* Format a relative change (fraction) as "+25 %" / "−8 %" / "+1.4 %" (U+2212 minus). */
void mfu__fmt_pct(char *buf, size_t n, double frac);

/* mfu_analyze for a caller that frees the series next (the report): a series whose rows are
 * all the job's (no per-rank row) hands its columns to the analysis instead of a copy, so
 * the two are not held at once. Afterwards series is only for mfu_series_free. Errors: those
 * of mfu_analyze. */
mfu_status mfu__analyze_take(mfu_series *series, const mfu_analysis_options *opts,
                             mfu_analysis **out, mfu_error *err);
/* Make room in s for rows rows (at most its row limit), exactly, so that a caller that knows
 * how many rows come (the report: one a step) does not leave the doubling's spare rows in
 * every column. A capacity hint: nothing readers see changes. false when out of memory (s
 * unchanged and usable). */
bool mfu__series_reserve(mfu_series *s, size_t rows);

#endif /* MFU_ANALYSIS_ANALYSIS_H */
