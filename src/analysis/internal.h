/*
 * analysis/internal.h - what the files of src/analysis share (not part of the public API).
 *
 * series.c    the input columns            stats.c     medians, robust spread, ranks, ACF
 * analysis.c  mfu_analyze and accessors    segment.c   warm-up, config runs, change points
 * levels.c    window levels, compare       findings.c  the detectors
 * invariant.c --expect expressions         json.c      mfu__analysis_json (jansson)
 */
#ifndef MFU_ANALYSIS_INTERNAL_H
#define MFU_ANALYSIS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "mfu/analysis.h"

struct mfu_series {
    size_t n, cap, max_rows;
    /* A column every row of which so far is NaN (bit for bit mfu_series_row_init's) is not
     * stored: col[c] points to nan, cap NaNs that all such columns share, until a row brings a
     * value (present[c] then). Readers index every column alike; only series.c writes. */
    double *col[MFU_SC_COUNT_];
    bool present[MFU_SC_COUNT_];
    double *nan;
    int64_t *step;
    int32_t *rank;
    uint32_t *flags;
    uint8_t *dtype, *recompute; /* label ids, 0 = absent */
    int nlabels;
    char labels[MFU_SERIES_MAX_LABELS][MFU_SERIES_LABEL_MAX];
};

/* Label text of id (1-based) in s; "" for 0 or out of range. */
const char *mfu__series_label(const mfu_series *s, int id);

/* Most per-row arrays an analysis frees (mfu_analysis_free). */
#define MFU__ANALYSIS_MAX_OWN 64

enum { MFU__WORK = 4, MFU__WORK_PAD = 64 };

/* A per-row column as a pass reads it: row i is MFU__AT(v, i), v.p[i & v.m]. The NaN column
 * (a->nan: every absent input, and every derived column no row has) reads as a->nan1 (mask 0),
 * and a column of one value the caller gave (a->konst) as that value, so that their pages are
 * never touched: each page of a mapped column that is read counts as resident (the report's
 * NaN and constant columns are mapped: 76 MB each at 10M steps, docs/internals/analysis.md
 * "Memory"). */
typedef struct mfu__view {
    const double *p;
    size_t m;
} mfu__view;

struct mfu_analysis {
    mfu_analysis_options opt;
    size_t n; /* rows of the job's step series */
    /* The per-row arrays below are read-only once derive() has written them. Each is one of
     * own[] or a column of the caller's (mfu__analyze_cols borrows the report's figures;
     * mfu_analyze reads a series of job rows in place until mfu__analysis_own copies it);
     * several may be one array (a derived column equal to an input to the bit is that input:
     * analysis.c, "lazy"). */
    void *own[MFU__ANALYSIS_MAX_OWN];
    size_t nown;
    const int64_t *step;
    const double *in[MFU_SC_COUNT_]; /* the job's input columns; those the series lacks (all
                                        NaN) are nan, one shared column of n NaNs */
    const double *nan;
    /* the caller's columns of one value (mfu__analysis_cols.whole): p, and its value */
    struct {
        const double *p;
        double v;
    } konst[MFU_SC_COUNT_];
    int nkonst;
    const uint32_t *flags;
    const uint8_t *dtype, *recompute;
    int nlabels;
    char labels[MFU_SERIES_MAX_LABELS][MFU_SERIES_LABEL_MAX];
    const double *d[MFU_D_COUNT_]; /* derived columns */
    /* Per-row terms of the ratio estimators (NaN where the row is not usable):
     * t step time, k counted tokens, u useful tokens, f model FLOPs per useful token,
     * h hardware FLOPs per counted token, c capacity (devices × peak). */
    const double *t, *k, *u, *f, *h, *c;
    /* k, u, f, h, c as the passes read them (derive sets them): a term that is a column of one
     * value, or the NaN column, is read as that value (mfu__view) */
    mfu__view kv, uv, fv, hv, cv;
    mfu__view tpsv;  /* in[MFU_SC_TOKENS_PER_S]: t of a usable row is k / this when t is NULL */
    double nan1;     /* a->nan[0] (derive sets it): the NaN the views of the NaN column read */
    uint8_t *usable; /* t and k valid (and f, c when the series has them) */
    uint8_t *steady; /* usable, not warm-up, not settle */
    uint8_t *state;  /* mfu_row_state of each row */
    bool has_flops;  /* some row has model FLOPs per token and capacity */
    bool capacity_unknown; /* FLOPs per token without any peak: capacity is taken as 1 (the
                              MFU columns are NaN, the MFU term is the FLOP/s change) */
    mfu_warmup warmup;
    mfu_level steady_level;
    size_t nseg;
    mfu_segment *seg;
    mfu_decomposition *bnd; /* nseg - 1 entries */
    size_t nfind;
    mfu_finding *find; /* MFU_ANALYSIS_MAX_FINDINGS slots */
    size_t ninv;
    mfu_invariant_result *inv; /* MFU_ANALYSIS_MAX_INVARIANTS slots */
    /* per-row scratch the passes of the analysis share (mfu__work): a pass reuses the pages
     * the one before it wrote, not fresh ones the kernel zeroes */
    void *work[MFU__WORK];
    bool keep_work; /* finish keeps work[] (mfu__analysis_take_work) */
};

/* Scratch slot k (< MFU__WORK) of a: room for n + MFU__WORK_PAD doubles, or as many size_t
 * (never larger), made on first use and kept until mfu__work_free (mfu_analysis_free too). Its
 * contents are what the pass before left, in that pass's type: a pass writes before it reads.
 * Slots 2k and 2k + 1 are one block, the odd one right after the even: mfu__work(a, 2k) has
 * room for 2 (n + MFU__WORK_PAD) doubles for a pass that uses both (only the pages written
 * count). The slots by pass: segment 0 (the rate's logarithms), 1 (its scratch, the level-shift
 * pruning's too), 2 (the padding share's), 3 (the usable rows' index); levels 0 and 1 (rows of
 * two segments), 1 also mfu__level_of's scratch before the boundaries (2 and 3 where it needs
 * more than n); detectors 0, 1 (values, scratch) and 2 (rows). NULL when out of memory. */
void *mfu__work(mfu_analysis *a, int k);
/* Free a's scratch (the analysis is done with it). */
void mfu__work_free(mfu_analysis *a);

/* The view of column col of a (above); from derive on (a->nan1 set). */
static inline mfu__view mfu__view_of(const mfu_analysis *a, const double *col)
{
    if (col == a->nan)
        return (mfu__view){&a->nan1, 0};
    for (int q = 0; q < a->nkonst; q++)
        if (col == a->konst[q].p)
            return (mfu__view){&a->konst[q].v, 0};
    return (mfu__view){col, SIZE_MAX};
}
#define MFU__AT(v, i) ((v).p[(i) & (v).m])

/* The step time term t of usable row i (a->t[i] where stored; else k / tokens/s, the division
 * derive made: the same bits). Rows that are not usable hold NaN in a stored t and are not
 * read through this. */
static inline double mfu__t(const mfu_analysis *a, size_t i)
{
    return a->t ? a->t[i] : MFU__AT(a->kv, i) / MFU__AT(a->tpsv, i);
}

/* ---- stats.c ------------------------------------------------------------------------------ */

/* The median of v[0..n) (NaN when n == 0), v untouched: copied into tmp (n doubles) first. */
double mfu__median_copy(const double *v, size_t n, double *tmp);
/* Robust standard deviation of v (1.4826 × MAD); reorders nothing (copies into tmp, which
 * must hold n). 0 for n < 2. */
double mfu__robust_sd(const double *v, size_t n, double *tmp);
/* Average ranks (1..n, ties averaged) of v into r; *ties (may be NULL) gets Σ (t³ − t) over
 * groups of t equal values (the tie correction of rank statistics). false on allocation
 * failure. */
bool mfu__ranks(const double *v, size_t n, double *r, double *ties);
/* The order of v[0..n) (NaN-free): indices into ord (room for n) such that v[ord[0]] <=
 * v[ord[1]] <= ..., equal values in index order. A radix sort on the values' bits (linear in
 * n, no comparison callback); work (8-byte aligned, 5 n uint32) is its scratch. false when
 * n > UINT32_MAX. */
bool mfu__order_doubles(const double *v, size_t n, uint32_t *ord, uint32_t *work);
/* Lag-k autocorrelation of v[0..n) about its mean; 0 when undefined. */
double mfu__acf(const double *v, size_t n, size_t lag);

/* ---- levels.c ----------------------------------------------------------------------------- */

/* Levels of rows idx[0..m) of a (m >= 0), with intervals when opt->intervals. tmp: scratch of
 * mfu__level_scratch(m) doubles (NULL: its own, allocated and freed here). Returns false on
 * allocation failure. */
bool mfu__level_of(const mfu_analysis *a, const size_t *idx, size_t m,
                   const mfu_analysis_options *opt, mfu_level *out, double *tmp);
/* The doubles of scratch mfu__level_of reads and writes for m rows: m, or twice the rows the
 * correlation estimate reads (at most 65536) where that is more. */
size_t mfu__level_scratch(size_t m);
/* Decomposition from rows ia of analysis a to rows ib of analysis b, with intervals. The
 * levels from/to are copied from la/lb when given (already computed with the same options),
 * else computed. false on allocation failure. */
bool mfu__decompose(const mfu_analysis *a, const size_t *ia, size_t ma, const mfu_level *la,
                    const mfu_analysis *b, const size_t *ib, size_t mb, const mfu_level *lb,
                    const mfu_analysis_options *opt, mfu_decomposition *out);
/* The lag-1 autocorrelation of ln tokens/s of rows idx[0..m) that the intervals allow for
 * (winsorised at 5 robust sd, plus one standard error 1/√m, clamped to [0, 0.95]); tmp holds
 * 2 min(m, 65536) doubles. */
double mfu__level_rho(const mfu_analysis *a, const size_t *idx, size_t m, double *tmp);
/* The variance factor of the count of steps below the median for a Gaussian AR(1) process of
 * lag-1 correlation rho: 1 + 2 Σ_k (2/π) asin(rho^k) (>= 1). */
double mfu__median_vif(double rho);

/* ---- segment.c ---------------------------------------------------------------------------- */

/* Warm-up, settle steps and segments of a (fills a->warmup, a->steady, a->seg, a->nseg).
 * false on allocation failure. */
bool mfu__segment(mfu_analysis *a);

/* What the level-shift search of one config run takes (segment.c's file comment, step 3). */
typedef struct mfu__shift_params {
    size_t min_segment_steps;
    double alpha;           /* changepoint_alpha */
    double min_level_shift; /* pruning: adjacent medians closer than ln(1 + this) merge */
    double vif[2];          /* variance inflation of each signal (AR(1) correlation) */
    /* m doubles (NULL: the search's own): the signals' group ids (nsig x m uint32) until the
     * search is done, then the pruning's medians; the segment search gives its work slot 1,
     * whose pages are written already */
    double *scratch;
} mfu__shift_params;

/* Level shifts of the signals sig[0..nsig) (nsig 1 or 2, m values each, NaN-free): binary
 * segmentation with the rank CUSUM and the epidemic test, then pruning. The cut positions
 * (ascending, at most 256) go into cuts (room for 257); returns their count, or SIZE_MAX on
 * allocation failure (or m > 2^31 − 1). Each signal's values get group ids once (hashing, or
 * mfu__order_doubles); an interval is ranked by counting its groups or from its value order
 * (split in O(m) at a cut), so an interval of m values costs O(m) (docs/internals/analysis.md
 * "Cost"; the same cuts as the straightforward form that sorts every interval again, which
 * test_analysis_shifts holds). */
size_t mfu__level_shifts(const double *const *sig, int nsig, size_t m, const mfu__shift_params *p,
                         size_t *cuts);

/* ---- findings.c --------------------------------------------------------------------------- */

/* Run every detector; series is the input (for per-rank rows). false on allocation failure. */
bool mfu__detect(mfu_analysis *a, const mfu_series *series);
/* Append a finding (no validation); false when full. */
bool mfu__push_finding(mfu_analysis *a, const mfu_finding *f);
/* Add evidence name=value to f (ignored when full). */
void mfu__evidence(mfu_finding *f, const char *name, double value);

/* ---- shared helpers ----------------------------------------------------------------------- */

/* Steady rows of a whose step lies in w, in row order, into idx (room for a->n); returns the
 * count. */
size_t mfu__window_index(const mfu_analysis *a, mfu_window w, size_t *idx);

/* Rows a settling check compares each row with (segment.c). */
#define MFU__SETTLE_REF_ROWS 30
/* Number of leading entries of x[0..m) (log throughput of the usable rows of a config run) that
 * are settling: the warm-up of a run, the settle rows after a config change (segment.c's file
 * comment has the rule). tmp holds at least max(m, MFU__SETTLE_REF_ROWS) doubles; slow holds m
 * bytes. */
size_t mfu__settle_rows(const double *x, size_t m, double *tmp, uint8_t *slow);

#endif /* MFU_ANALYSIS_INTERNAL_H */
