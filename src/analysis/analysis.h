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

/* The input of mfu__analyze_cols: the job's rows as columns the caller holds (the report's
 * figures), each read in place, none copied. */
typedef struct mfu__analysis_cols {
    size_t n;                         /* rows (steps), in step order */
    const int64_t *step;              /* n step numbers */
    const double *col[MFU_SC_COUNT_]; /* mfu_series_col's columns; NULL: absent (NaN) */
    /* col[c] holds its row 0 in every row (the report's mapped constant columns, whose rows
     * would count as resident once read): the analysis reads that row only (mfu__view) */
    bool whole[MFU_SC_COUNT_];
    /* Columns the caller expects derived ones to equal (NULL: none): a derived column equal
     * to its hint in every row, to the bit, is the hint (no memory); else a's own. */
    const double *hint[MFU_D_COUNT_];
    const double *nan;     /* n NaN (the canonical NaN's bits) the caller holds, the column of every
                              absent input (NULL: the analysis makes its own) */
    const uint32_t *flags; /* MFU_STEP_* bits; NULL: 0 in every row */
    const uint8_t *dtype, *recompute; /* label ids (1-based into labels; 0 unknown); NULL: 0 */
    int nlabels;
    char labels[MFU_SERIES_MAX_LABELS][MFU_SERIES_LABEL_MAX];
    void *give[16]; /* malloc'ed buffers among the above that the analysis frees */
    size_t ngive;
    /* the passes' scratch outlives them, for mfu__analysis_take_work (the report's summaries
     * then write pages the passes wrote, not fresh ones the kernel zeroes) */
    bool keep_work;
} mfu__analysis_cols;

/* mfu_analyze of the rows *in (job rows; ranks, NULL or a series of per-rank rows only, for
 * the straggler detector), reading in's columns where they are: they must stay unchanged as
 * long as *out lives, unless mfu__analysis_own(*out) is called. The buffers in->give[0..ngive)
 * (NULL entries skipped) are the analysis's (freed with it, or at once on an error) and
 * in->ngive is set to 0. Errors: those of mfu_analyze (MFU_E_EMPTY for n == 0), MFU_E_INVALID
 * (in or out NULL, in->step NULL with n > 0, ngive over the room of give[]: only that many are
 * freed), MFU_E_LIMIT (the analysis's own list of arrays full, MFU__ANALYSIS_MAX_OWN). */
mfu_status mfu__analyze_cols(mfu__analysis_cols *in, const mfu_series *ranks,
                             const mfu_analysis_options *opts, mfu_analysis **out, mfu_error *err);
/* Copy into a every array it reads in place (the caller's columns of mfu__analyze_cols), so
 * that it outlives them; arrays that are one stay one. false when out of memory (a is then
 * still the caller's to free, and still reads in place what was not copied). */
bool mfu__analysis_own(mfu_analysis *a);
/* The scratch of a's passes, kept by mfu__analysis_cols.keep_work: one block of *doubles
 * doubles (at least 2 n), the caller's to free(); a keeps none afterwards. NULL (*doubles 0)
 * when a kept none (a NULL, no pass made one, or keep_work unset). */
double *mfu__analysis_take_work(mfu_analysis *a, size_t *doubles);
/* a's steady rows: 1 where mfu_analysis_row_state is MFU_ROW_STEADY, else 0 (n bytes, a's);
 * NULL for a NULL or empty analysis. */
const uint8_t *mfu__analysis_steady_rows(const mfu_analysis *a);
/* The id of label text among labels[0..*nlabels) (1-based; 0 for NULL or ""), added at the end
 * when new and add is true (else *added says it would be). Negative: -1 text longer than
 * MFU_SERIES_LABEL_MAX - 1 bytes, -2 no room (MFU_SERIES_MAX_LABELS). */
int mfu__label_intern(char (*labels)[MFU_SERIES_LABEL_MAX], int *nlabels, const char *text,
                      bool add, int *added);

#endif /* MFU_ANALYSIS_ANALYSIS_H */
