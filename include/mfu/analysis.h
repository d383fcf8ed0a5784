/*
 * mfu/analysis.h - what changed in a run, which term of the MFU identity moved, how sure we
 * are, and what to look at next.
 *
 *     tokens/s = MFU × (devices × peak FLOP/s per device) / (model FLOPs per token)
 *
 * so between any two windows of steps
 *
 *     Δln(tokens/s) = Δln(MFU) + Δln(capacity) − Δln(FLOPs per token) + Δln(counted/useful)
 *
 * (the last term is padding: tokens that were counted but carry no model math). The input is a
 * per-step series (mfu_series) that the report layer derives from a run, a model and a device;
 * this module needs nothing from model/ or device/ and is tested on synthetic series.
 *
 * Pipeline of mfu_analyze(): derived per-step series (MFU, HFU, FLOP/s per device) → which
 * rows count (warm-up, settle steps after a configuration change, timing artifacts, impossible
 * values) → segments (configuration changes, then level shifts inside each configuration) →
 * levels (medians, the headline's definition, with order-statistic intervals; totals) →
 * decomposition at every boundary → findings. Methods,
 * defaults and limits are in docs/internals/analysis.md; what the results mean for a user is
 * in docs/analysis.md.
 *
 * Ownership and errors follow common.h. Structs returned by accessors belong to the analysis
 * and live as long as it does. Everything is deterministic: the same series and options give
 * the same bytes.
 */
#ifndef MFU_ANALYSIS_H
#define MFU_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mfu/common.h"
#include "mfu/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the input series ---------------------------------------------------------------------- */

/* Named limits. Appending past MFU_SERIES_MAX_ROWS (or a lower limit set on the series) fails
 * with MFU_E_LIMIT; so does a config label longer than MFU_SERIES_LABEL_MAX - 1 bytes or the
 * (MFU_SERIES_MAX_LABELS + 1)-th distinct label. */
#define MFU_SERIES_MAX_ROWS 20000000L
#define MFU_SERIES_LABEL_MAX 32
#define MFU_SERIES_MAX_LABELS 64

/* One step of the series. Every double is NaN when absent (mfu_series_row_init() sets that).
 *
 * Rows with rank < 0 describe the whole job. Rows with rank >= 0 are per-rank observations:
 * they feed the straggler detector (step_time_s = that rank's own time for the step, before it
 * waits for the others). When a series holds no whole-job rows, the job's step series is built
 * from the per-rank rows: per step number, the slowest rank's step_time_s and the other columns
 * of the lowest rank.
 *
 * Rows are analysed in the order appended (time order); step numbers label them. */
typedef struct mfu_series_row {
    int64_t step;
    double time_s;                   /* wall-clock timestamp, s (used when step_time_s is absent) */
    double step_time_s;              /* wall time of one step, s */
    double tokens;                   /* tokens counted in the step, whole job (padding included) */
    double useful_tokens;            /* non-padding tokens in the step (optional; default tokens) */
    double tokens_per_s;             /* whole-job counted tokens/s (optional when tokens and
                                      * step_time_s are given; wins when all three are) */
    double model_flops_per_token;    /* training model FLOPs per useful token */
    double hardware_flops_per_token; /* FLOPs executed per counted token (recompute included);
                                      * default model_flops_per_token */
    double devices;                  /* devices sharing the work */
    double peak_flops_per_s;         /* dense peak of ONE device for the dtype in use */
    double seq_len;                  /* tokens per sequence (config label, may be absent) */
    double global_batch;             /* sequences per step, whole job (config label) */
    double clock_mhz;                /* SM / core clock during the step */
    double power_w;                  /* board power during the step */
    double max_clock_mhz;            /* the clock the device may reach (optional) */
    double power_limit_w;            /* the enforced power limit (optional) */
    double loss;                     /* training loss (NaN absent; see flags for printed nan) */
    double data_loading_s;           /* time in the step spent waiting for data (optional) */
    double comm_s;                   /* exposed (not overlapped) communication time (optional) */
    double optimizer_s;              /* optimizer step time (optional) */
    double mfu;                      /* the step's MFU as its caller computed it (optional: the
                                      * report passes its own, so both show one number); NaN:
                                      * derived from the columns above */
    double hfu;                      /* likewise */
    int32_t rank;                    /* -1 whole job, >= 0 one rank */
    uint32_t flags;                  /* MFU_STEP_* from run.h (MFU_STEP_LOSS_NAN: the loss was
                                      * printed as nan/inf) */
    const char *dtype;     /* config label ("bf16", ...), NULL or "" when absent; copied */
    const char *recompute; /* config label ("none", "selective", "full"), copied */
} mfu_series_row;

typedef struct mfu_series mfu_series;

/* Columns of a series, for mfu_series_column(). */
typedef enum mfu_series_col {
    MFU_SC_TIME_S = 0,
    MFU_SC_STEP_TIME_S,
    MFU_SC_TOKENS,
    MFU_SC_USEFUL_TOKENS,
    MFU_SC_TOKENS_PER_S,
    MFU_SC_MODEL_FLOPS_PER_TOKEN,
    MFU_SC_HARDWARE_FLOPS_PER_TOKEN,
    MFU_SC_DEVICES,
    MFU_SC_PEAK_FLOPS_PER_S,
    MFU_SC_SEQ_LEN,
    MFU_SC_GLOBAL_BATCH,
    MFU_SC_CLOCK_MHZ,
    MFU_SC_POWER_W,
    MFU_SC_MAX_CLOCK_MHZ,
    MFU_SC_POWER_LIMIT_W,
    MFU_SC_LOSS,
    MFU_SC_DATA_LOADING_S,
    MFU_SC_COMM_S,
    MFU_SC_OPTIMIZER_S,
    MFU_SC_MFU,
    MFU_SC_HFU,
    MFU_SC_COUNT_ /* number of double columns; not a column */
} mfu_series_col;

/* Set every double of *row to NaN, step 0, rank -1, flags 0, labels NULL. row must not be NULL. */
MFU_API void mfu_series_row_init(mfu_series_row *row);

/* A new empty series (limit MFU_SERIES_MAX_ROWS). NULL when out of memory. Free with
 * mfu_series_free(). */
MFU_API mfu_series *mfu_series_new(void);

/* Free a series. NULL is allowed. */
MFU_API void mfu_series_free(mfu_series *s);

/* Lower the row limit (1..MFU_SERIES_MAX_ROWS, not below the rows held): MFU_E_INVALID. */
MFU_API mfu_status mfu_series_set_max_rows(mfu_series *s, size_t max_rows, mfu_error *err);

/* Append a copy of *row (labels are copied). Values are not judged here: impossible values
 * (negative step times, MFU above 1) become findings of the analysis. Errors: MFU_E_INVALID
 * (NULL s or row), MFU_E_LIMIT (row limit, label too long, too many distinct labels; field
 * names which), MFU_E_NOMEM. On error the series is unchanged. */
MFU_API mfu_status mfu_series_append(mfu_series *s, const mfu_series_row *row, mfu_error *err);

/* Number of rows; 0 for NULL. */
MFU_API size_t mfu_series_count(const mfu_series *s);

/* Copy row i into *out (labels point into s). false when s is NULL or i out of range. */
MFU_API bool mfu_series_get(const mfu_series *s, size_t i, mfu_series_row *out);

/* One double column (mfu_series_count() entries), owned by s, valid until the next append.
 * NULL for an empty series or an out-of-range column. */
MFU_API const double *mfu_series_column(const mfu_series *s, mfu_series_col col);

/* ---- options ------------------------------------------------------------------------------- */

typedef struct mfu_analysis_options {
    bool intervals;           /* confidence intervals of levels and terms (default true) */
    double confidence;        /* interval coverage, in (0.5, 1) (default 0.95) */
    double size_threshold;    /* "size known" when the interval half-width of a relative
                               * change is below this, as a fraction (default 0.01 = 1 point) */
    size_t min_segment_steps; /* shortest level segment and shortest config run (default 10) */
    double changepoint_alpha; /* significance of a level shift, after the autocorrelation
                               * correction: the method's penalty (default 1e-4) */
    double min_level_shift;   /* smallest relative level shift that makes a segment (0.02) */
    double stall_min_share;   /* periodic slow steps are reported when they cost this share
                               * of time; isolated ones at 3× it (default 0.01) */
    double timer_min_share;   /* data loading / comm / optimizer share reported (0.05) */
    double throttle_min_drop; /* a clock this far below reference is throttled (0.05) */
    double straggler_min;     /* a rank this much slower than the median rank (0.03) */
    bool detect_warmup;       /* false: no warm-up and no settle steps (default true) */
    bool steady_only;         /* only which rows count and the steady level: no level shifts,
                               * boundaries or findings (cheaper; default false) */
    bool flops_relative;      /* the FLOPs per token are known only up to one constant factor
                               * (a framework's MFU without its peak or device): the terms stand,
                               * but no FLOP/s, capacity or FLOPs per token is stated (levels
                               * keep them in those units, flagged; default false) */
    char rate_name[24];       /* what the series' tokens/s are, for the sentences: "tokens/s"
                               * (the default), "tokens/s per device", "steps/s" */
} mfu_analysis_options;

/* Fill *o with the defaults above. o must not be NULL. */
MFU_API void mfu_analysis_options_init(mfu_analysis_options *o);

/* ---- results ------------------------------------------------------------------------------- */

/* A point estimate with its confidence interval (lo/hi NaN when not computed). */
typedef struct mfu_interval {
    double value, lo, hi;
} mfu_interval;

/* Levels of one window of steady steps. The level of a figure is the median over the
 * window's steady steps of that step's figure (the headline's definition: the typical step;
 * stalls do not move it), with a distribution-free confidence interval for the median (order
 * statistics, widened for the correlation between neighbouring steps; see docs). The totals
 * are what the window achieved as a whole, stalls included: total tokens ÷ total time, and
 * the time the steps slower than typical cost. */
typedef struct mfu_level {
    int64_t first_step, last_step;
    size_t steps;                           /* steady, usable steps in the window */
    mfu_interval tokens_per_s;              /* median counted tokens per second, whole job */
    mfu_interval useful_tokens_per_s;       /* median non-padding tokens per second */
    mfu_interval mfu;                       /* median MFU, fraction; NaN without FLOPs per token or
                                               capacity */
    mfu_interval hfu;                       /* median HFU */
    mfu_interval step_time_s;               /* median step time */
    double model_flops_per_s_per_device;    /* median */
    double hardware_flops_per_s_per_device; /* median */
    double capacity_flops_per_s;            /* devices × peak, median over the steps */
    double model_flops_per_token;           /* median over the steps */
    double hardware_flops_per_token;
    double useful_fraction;    /* useful / counted tokens, median (1 without padding) */
    double total_tokens_per_s; /* Σ tokens / Σ step time: the window's total, stalls in it */
    double total_mfu;          /* Σ useful model FLOPs / Σ (step time × capacity) */
    double total_time_s;       /* Σ step time */
    double mean_step_time_s;   /* Σ step time / steps */
    double stall_time_s;       /* Σ step time − Σ tokens ÷ the median tokens/s: the time the
                                  steps slower than the typical one cost (>= 0) */
    double devices, peak_flops_per_s, seq_len, global_batch; /* NaN when mixed or absent */
    char dtype[MFU_SERIES_LABEL_MAX]; /* "" when absent, "mixed" when it varies */
    char recompute[MFU_SERIES_LABEL_MAX];
    double rho; /* lag-1 autocorrelation of ln tokens/s the intervals allow for (NaN: none) */
    double vif; /* how much that widens them: the variance factor of the median (>= 1) */
    bool flops_relative; /* capacity and FLOPs per token are in units of an unknown peak:
                            only their ratios mean anything (options.flops_relative) */
} mfu_level;

/* The terms of the decomposition of Δln(tokens/s). */
typedef enum mfu_term {
    MFU_TERM_TOKENS_PER_S = 0, /* the total: Δln(tokens/s) */
    MFU_TERM_MFU,              /* + Δln(MFU) */
    MFU_TERM_CAPACITY,         /* + Δln(devices × peak) */
    MFU_TERM_FLOPS_PER_TOKEN,  /* − Δln(model FLOPs per token) */
    MFU_TERM_PADDING,          /* + Δln(counted / useful tokens) */
    MFU_TERM_COUNT_
} mfu_term;

typedef struct mfu_term_change {
    double dln;   /* contribution to Δln(tokens/s); the four parts sum to the total */
    double pct;   /* exp(dln) − 1: how much this term alone changed tokens/s (fraction) */
    double share; /* dln / Δln(tokens/s); NaN when tokens/s did not move (|Δln| < 1e-9) */
    double lo_pct, hi_pct;  /* confidence interval of pct (NaN without intervals) */
    bool direction_certain; /* the interval excludes 0 */
    bool size_known;        /* (hi_pct − lo_pct)/2 < options.size_threshold */
} mfu_term_change;

#define MFU_SENTENCE_MAX 256

/* The change from one window to another. */
typedef struct mfu_decomposition {
    mfu_level from, to;
    mfu_term_change term[MFU_TERM_COUNT_];
    double mfu_points;               /* MFU(to) − MFU(from), fraction */
    bool capacity_unknown;           /* no peak: the capacity term is 0 by assumption and the
                                        MFU term is the change of achieved FLOP/s per device */
    bool flops_units_differ;         /* two runs, one (or both) with FLOPs per token known only
                                        as ratios in its own units: the MFU term is the change
                                        of the MFUs; capacity and FLOPs per token are NaN (only
                                        their sum, the rest of Δln tokens/s, is known) */
    char config_change[160];         /* "sequence 4096 → 1024, devices 8 → 16", "" if none */
    char sentence[MFU_SENTENCE_MAX]; /* see mfu_decomposition_sentence() */
    char rate_name[24];              /* what tokens/s are (options.rate_name) */
} mfu_decomposition;

typedef enum mfu_segment_cause {
    MFU_CAUSE_START = 0, /* the first segment */
    MFU_CAUSE_CONFIG,    /* a configuration label or FLOPs per token / capacity changed */
    MFU_CAUSE_LEVEL      /* the tokens/s (or useful fraction) level shifted */
} mfu_segment_cause;

typedef struct mfu_segment {
    size_t first, last; /* row range in the job's step series (inclusive) */
    int64_t start_step, end_step;
    size_t settle_steps; /* leading slow steps after a config change, excluded */
    mfu_segment_cause cause;
    mfu_level level;
} mfu_segment;

typedef struct mfu_warmup {
    size_t steps;                  /* leading rows excluded from every level (0: none) */
    int64_t first_step, last_step; /* meaningful when steps > 0 */
    double slowdown;               /* mean step time of the warm-up ÷ steady median, − 1 */
    bool checked;                  /* a warm-up was looked for */
    bool mid_run;                  /* not looked for: the first step number is above 100 and
                                      twice the step interval (the log starts mid-run) */
    size_t artifacts;              /* rows left out as timing artifacts (> 5x the median
                                      throughput of the usable rows) */
    size_t impossible;             /* rows left out for MFU or HFU above 100 % */
} mfu_warmup;

/* What a row of the job's step series is to the levels. */
typedef enum mfu_row_state {
    MFU_ROW_STEADY = 0,     /* counted in the levels */
    MFU_ROW_WARMUP = 1,     /* the leading slow rows of the run */
    MFU_ROW_SETTLE = 2,     /* the leading slow rows after a configuration change */
    MFU_ROW_ARTIFACT = 3,   /* far faster than the median: a timing artifact */
    MFU_ROW_IMPOSSIBLE = 4, /* MFU or HFU above 100 % */
    MFU_ROW_UNUSABLE = 5    /* no throughput */
} mfu_row_state;

typedef enum mfu_severity { MFU_SEV_INFO = 0, MFU_SEV_WARNING = 1, MFU_SEV_ERROR = 2 } mfu_severity;

#define MFU_FINDING_KIND_MAX 32
#define MFU_FINDING_TEXT_MAX 320
#define MFU_FINDING_EVIDENCE_MAX 8
#define MFU_ANALYSIS_MAX_FINDINGS 256

typedef struct mfu_evidence {
    char name[32]; /* snake_case with its unit: "lost_share", "period_steps", "rank" */
    double value;
} mfu_evidence;

/* One finding. Kinds (stable strings): throughput_up_mfu_down, throughput_down_mfu_up, stall,
 * data_loading, communication, optimizer, throttling, power_cap, padding, recompute,
 * impossible_value, loss_nan, loss_diverging, straggler; external ones any [a-z0-9_] name. */
typedef struct mfu_finding {
    char kind[MFU_FINDING_KIND_MAX];
    mfu_severity severity;
    int64_t first_step, last_step;
    size_t nevidence;
    mfu_evidence evidence[MFU_FINDING_EVIDENCE_MAX];
    char summary[MFU_FINDING_TEXT_MAX];   /* one line: what was seen, with figures */
    char next_step[MFU_FINDING_TEXT_MAX]; /* one line: what to look at next */
} mfu_finding;

typedef struct mfu_analysis mfu_analysis;

/* Analyse a series. opts NULL means defaults. *out is NULL on error. Errors: MFU_E_INVALID
 * (NULL series/out, options out of range: field names the option), MFU_E_EMPTY (no rows),
 * MFU_E_NOMEM. A series whose every row is unusable (no step time) still analyses: it has no
 * segments, and its impossible values are findings. */
MFU_API mfu_status mfu_analyze(const mfu_series *series, const mfu_analysis_options *opts,
                               mfu_analysis **out, mfu_error *err);

/* Free an analysis. NULL is allowed. */
MFU_API void mfu_analysis_free(mfu_analysis *a);

/* Derived per-step columns of the job's step series (one per row; NaN where not computable). */
typedef enum mfu_derived {
    MFU_D_STEP_TIME_S = 0, /* given, or tokens / tokens_per_s, or Δtime_s / Δstep */
    MFU_D_TOKENS_PER_S,    /* counted */
    MFU_D_USEFUL_TOKENS_PER_S,
    MFU_D_MFU, /* useful tokens/s × model FLOPs per token ÷ capacity */
    MFU_D_HFU, /* counted tokens/s × hardware FLOPs per token ÷ capacity */
    MFU_D_MODEL_FLOPS_PER_S_PER_DEVICE,
    MFU_D_HARDWARE_FLOPS_PER_S_PER_DEVICE,
    MFU_D_CAPACITY_FLOPS_PER_S, /* devices × peak */
    MFU_D_COUNT_
} mfu_derived;

/* Rows of the job's step series; 0 for NULL. */
MFU_API size_t mfu_analysis_steps(const mfu_analysis *a);
/* Step numbers of those rows (owned by a); NULL when empty. */
MFU_API const int64_t *mfu_analysis_step_numbers(const mfu_analysis *a);
/* One derived column (owned by a); NULL when empty or out of range. */
MFU_API const double *mfu_analysis_derived(const mfu_analysis *a, mfu_derived col);
/* The job's step series's column of the input (loss, clock_mhz, ...), owned by a. */
MFU_API const double *mfu_analysis_input(const mfu_analysis *a, mfu_series_col col);

/* The warm-up (never NULL for a non-NULL a). */
MFU_API const mfu_warmup *mfu_analysis_warmup(const mfu_analysis *a);
/* Levels of every steady step (after warm-up and settle steps, across segments). */
MFU_API const mfu_level *mfu_analysis_steady(const mfu_analysis *a);
/* true when row i is steady (counted in levels): not warm-up, not settle, usable. */
MFU_API bool mfu_analysis_is_steady(const mfu_analysis *a, size_t row);
/* What row i is to the levels; MFU_ROW_UNUSABLE when out of range. */
MFU_API mfu_row_state mfu_analysis_row_state(const mfu_analysis *a, size_t row);

MFU_API size_t mfu_analysis_segment_count(const mfu_analysis *a);
/* Segment i, NULL when out of range. */
MFU_API const mfu_segment *mfu_analysis_segment(const mfu_analysis *a, size_t i);
/* The decomposition from segment i to segment i+1, NULL when out of range. */
MFU_API const mfu_decomposition *mfu_analysis_boundary(const mfu_analysis *a, size_t i);

MFU_API size_t mfu_analysis_finding_count(const mfu_analysis *a);
MFU_API const mfu_finding *mfu_analysis_finding(const mfu_analysis *a, size_t i);

/* Append a finding made elsewhere (e.g. the report's "reported vs recomputed" check). kind
 * must be 1..31 characters of [a-z0-9_]; summary and next_step must be non-empty. The copy is
 * kept in the order added after the built-in ones. Errors: MFU_E_INVALID (field "kind",
 * "summary" or "next_step"), MFU_E_LIMIT (MFU_ANALYSIS_MAX_FINDINGS). */
MFU_API mfu_status mfu_analysis_add_finding(mfu_analysis *a, const mfu_finding *f, mfu_error *err);

/* A window of the job's step series, by step number, both ends included. Warm-up and settle
 * steps inside it are always left out. INT64_MIN..INT64_MAX is the whole steady state. */
typedef struct mfu_window {
    int64_t first_step, last_step;
} mfu_window;

/* Levels of a window, with intervals per opts (NULL = the analysis's options).
 * Errors: MFU_E_INVALID, MFU_E_EMPTY (no steady usable step in the window), MFU_E_NOMEM. */
MFU_API mfu_status mfu_analysis_window_level(const mfu_analysis *a, mfu_window w,
                                             const mfu_analysis_options *opts, mfu_level *out,
                                             mfu_error *err);

/* Decompose the change from window wa of analysis a to window wb of analysis b (a and b may be
 * the same analysis), with intervals and verdicts for every term. opts NULL = a's options.
 * The terms are Δln of the windows' medians: tokens/s, capacity, FLOPs per token and useful
 * share; the MFU term is what is left (it is Δln of the median MFU when each window's FLOPs
 * per token, capacity and useful share are constant, as a segment's are). Errors as
 * mfu_analysis_window_level(). *out untouched on error. */
MFU_API mfu_status mfu_compare(const mfu_analysis *a, mfu_window wa, const mfu_analysis *b,
                               mfu_window wb, const mfu_analysis_options *opts,
                               mfu_decomposition *out, mfu_error *err);

/* Write the human sentence of d into buf (size n > 0), e.g. "tokens/s +25 %: utilization
 * −8 %, workload 36 % easier (sequence 4096 → 1024)". Terms are listed by size, those below
 * 0.5 % left out; "(within noise)" follows tokens/s when its direction is not certain. UTF-8.
 * Returns false when it was truncated. */
MFU_API bool mfu_decomposition_sentence(const mfu_decomposition *d, char *buf, size_t n);

/* ---- invariants ---------------------------------------------------------------------------- */

#define MFU_INVARIANT_EXPR_MAX 128
#define MFU_ANALYSIS_MAX_INVARIANTS 64

typedef enum mfu_cmp_op {
    MFU_OP_GE = 0,
    MFU_OP_LE,
    MFU_OP_GT,
    MFU_OP_LT,
    MFU_OP_EQ,
    MFU_OP_NE,
    MFU_OP_CONST
} mfu_cmp_op;

/* A parsed invariant: NAME[.STAT] OP VALUE (grammar in docs/analysis.md). */
typedef struct mfu_invariant {
    char expression[MFU_INVARIANT_EXPR_MAX];
    int name; /* index into the table of names (internal) */
    int stat; /* the statistic (internal index; the name's default when not written) */
    mfu_cmp_op op;
    double value; /* threshold (unused for MFU_OP_CONST) */
} mfu_invariant;

typedef struct mfu_invariant_result {
    char expression[MFU_INVARIANT_EXPR_MAX];
    bool passed;
    double value; /* the statistic's value (NaN when unknown) */
    double threshold;
    char
        message[MFU_FINDING_TEXT_MAX]; /* "mfu = 0.352 (level of steady steps 3-999), not >= 0.4" */
} mfu_invariant_result;

/* Parse expr. Errors: MFU_E_INVALID (NULL), MFU_E_LIMIT (longer than
 * MFU_INVARIANT_EXPR_MAX − 1), MFU_E_PARSE (column in err, message names the names, operators
 * or value form to use; field "expect"). *out untouched on error. */
MFU_API mfu_status mfu_invariant_parse(const char *expr, mfu_invariant *out, mfu_error *err);

/* Evaluate inv against a's steady state into *out (never fails for valid pointers; an
 * unknown value fails the invariant with a message saying why). */
MFU_API void mfu_invariant_eval(const mfu_analysis *a, const mfu_invariant *inv,
                                mfu_invariant_result *out);

/* Parse, evaluate and record expr in a (it appears in the JSON). *out (may be NULL) gets the
 * result. A violated invariant is MFU_OK with out->passed false. Errors: those of
 * mfu_invariant_parse, MFU_E_LIMIT (MFU_ANALYSIS_MAX_INVARIANTS). */
MFU_API mfu_status mfu_analysis_expect(mfu_analysis *a, const char *expr, mfu_invariant_result *out,
                                       mfu_error *err);

MFU_API size_t mfu_analysis_invariant_count(const mfu_analysis *a);
MFU_API const mfu_invariant_result *mfu_analysis_invariant(const mfu_analysis *a, size_t i);

/* ---- names --------------------------------------------------------------------------------- */

/* "steady", "warmup", "settle", "artifact", "impossible", "unusable". */
MFU_API const char *mfu_row_state_name(mfu_row_state s);
/* Stable names: "tokens_per_second", "mfu", "capacity", "flops_per_token", "padding". */
MFU_API const char *mfu_term_name(mfu_term t);
/* "info", "warning", "error". */
MFU_API const char *mfu_severity_name(mfu_severity s);
/* "start", "config", "level". */
MFU_API const char *mfu_cause_name(mfu_segment_cause c);

#ifdef __cplusplus
}
#endif
#endif /* MFU_ANALYSIS_H */
