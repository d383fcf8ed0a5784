/*
 * analysis/analysis.h - what other parts of mfu use from src/analysis beyond the public
 * mfu/analysis.h and analysis/json.h (cross-module header: the report's SVG charts; not
 * installed): sorted-sample statistics (stats.c) and the wording of a relative change
 * (levels.c). What only the analysis's own files share is in analysis/internal.h.
 */
#ifndef MFU_ANALYSIS_ANALYSIS_H
#define MFU_ANALYSIS_ANALYSIS_H

#include <stddef.h>

/* q-quantile (0..1, linear interpolation) of sorted v[0..n); NaN for n == 0. */
double mfu__quantile_sorted(const double *v, size_t n, double q);
/* Sort v ascending (NaN-free input). */
void mfu__sort_doubles(double *v, size_t n);
/* Format a relative change (fraction) as "+25 %" / "−8 %" / "+1.4 %" (U+2212 minus). */
void mfu__fmt_pct(char *buf, size_t n, double frac);

#endif /* MFU_ANALYSIS_ANALYSIS_H */
