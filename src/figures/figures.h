/*
 * figures/figures.h - the figures of a step, computed in one place (docs/internals/figures.md).
 *
 * Every view of a run (report, HTML, compare, watch, the monitor, the server's series,
 * summaries and /metrics) asks this module for a step's tokens/s, step time, FLOP/s, MFU and
 * HFU, so a step has one MFU wherever it is shown. The module sits between the run (mfu/run.h)
 * and its readers:
 *
 *   context  (context.c) what a run's figures are computed with: the caller's input over the
 *            log's header (model and FLOPs per token, device and peak, devices, tokens per
 *            step, the framework's profile and its peak);
 *   rows     (rows.c)    the per-step rule (below) and a column builder over a range of rows,
 *            incremental for live runs;
 *   implied  (implied.c) what the log's own figures imply per step (the framework's FLOPs per
 *            token and peak) and the context check: where the given context stops matching
 *            them, which sequence length or tokens per step the log implies from there on;
 *   window   (window.c)  the total of a window of rows (ratio of sums: stalls included);
 *   stacks   (stacks.c)  the framework profiles (how each framework computes what it prints).
 *
 * The per-step rule (the precedence, also in docs/internals/figures.md):
 *   tokens      the caller's tokens per step; else the caller's global batch x the step's
 *               sequence length; else the step's tokens; else its samples x sequence length;
 *               else the header's tokens per step; else the header's global batch x sequence
 *   tokens/s    tokens / the printed step time; else the framework's tokens/s (either scope:
 *               per device x devices); else the framework's samples/s x sequence length; else
 *               tokens / the step time from time deltas (Δ timestamp / Δ step)
 *   step time   printed; else tokens / tokens/s; else Δ timestamp / Δ step
 *   per device  / the step's devices (its own, else the run's); else the framework's
 *               per-device figure as printed
 *   MFU, HFU    model (hardware) FLOPs per token of the step's sequence length and
 *               recomputation x tokens/s per device x the step's useful (non-padding) share /
 *               the dense peak of the step's dtype
 *
 * Not part of the public API: the report, server, monitor and CLI use it; the public faces are
 * mfu/report.h, mfu/monitor.h and the server's JSON. One thread at a time per context.
 */
#ifndef MFU_FIGURES_H
#define MFU_FIGURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mfu/report.h"
#include "mfu/run.h"
#include "util/util.h"

/* ---- framework profiles (stacks.c) ------------------------------------------------------- */

/* How a framework finds the peak it divides by. */
typedef enum mfu__peak_rule {
    MFU__PEAK_NONE = 0,       /* it prints no MFU */
    MFU__PEAK_FIXED,          /* one constant whatever the device (nanoGPT: 312e12) */
    MFU__PEAK_TABLE,          /* its own table; a device it lacks gets no MFU */
    MFU__PEAK_TABLE_FALLBACK, /* its own table; a device it lacks gets the A100's 312e12 */
    MFU__PEAK_USER            /* a peak the user configures (read back from the log) */
} mfu__peak_rule;

/* One row of a framework's peak table, keyed by mfu's device id. 0 = no figure there. */
typedef struct mfu__peak_row {
    const char *id;
    double bf16; /* dense figures the framework uses, FLOP/s */
    double fp16;
    double fp8;
} mfu__peak_row;

/* A framework as its logs show it. Facts come from shared/reference/flops-and-peaks.md and
 * log-formats.md (sections named in stacks.c). */
typedef struct mfu__stack {
    const char *format;    /* ingest format name */
    const char *framework; /* display name */
    bool has_convention;
    mfu_convention convention;
    mfu_attention attention; /* DEFAULT: as the convention counts it */
    bool counts_recompute;   /* its FLOP/s include recomputation */
    bool approximate;        /* measured FLOPs: the convention is the nearest one */
    bool params_from_log;    /* the N its formula uses is the parameter count it prints */
    mfu__peak_rule peak_rule;
    double fixed_peak; /* FIXED value, or the FALLBACK value */
    const mfu__peak_row *peaks;
    size_t npeaks;
    bool peak_bf16_only; /* its table is used whatever the training dtype */
    double mfu_ema;      /* printed MFU is EMA: m = ema * m + (1 - ema) * x; 0 = none */
    const char *figures; /* what its printed figures mean */
    const char *source;  /* reference section */
} mfu__stack;

/* The profile for a format name (ASCII case-insensitive); NULL when none (generic formats). */
const mfu__stack *mfu__stack_find(const char *format);

/* Resolve the date- and version-dependent parts of a profile for one run into *out (name,
 * framework, convention, attention, flags, figures, rule). start_time_s is the log's first
 * timestamp (0 unknown). */
void mfu__stack_resolve(const mfu__stack *p, const mfu_run *run, int64_t start_time_s,
                        mfu_report_stack *out);

/* The peak the framework divides by on dev for dtype: > 0, or 0 when it has none (prints no
 * MFU, or lacks the device and has no fallback). *fallback is set when the value is the
 * framework's fallback for a device it lacks. why (size n) gets the rule in words. dev may be
 * NULL (then only FIXED rules give a value). */
double mfu__stack_peak(const mfu__stack *p, const mfu_device_info *dev, mfu_dtype dtype,
                       bool *fallback, char *why, size_t n);

/* Device ids in p's table whose bf16 figure is within tol of peak, comma-separated into buf.
 * Returns how many. */
size_t mfu__stack_devices_with_peak(const mfu__stack *p, double peak, double tol, char *buf,
                                    size_t n);

/* The one device id of p's table whose bf16 figure is within tol of peak, or NULL when none or
 * several are (a name shared by several entries is no inference). */
const char *mfu__stack_device_for_peak(const mfu__stack *p, double peak, double tol);

/* ---- columns ------------------------------------------------------------------------------ */

/* The figures of a step, by column. The first MFU_RS_COUNT_ are the report's public series
 * (mfu_report_series, same numbering); the rest is what they were computed with and what the
 * log implies. NaN where unknown. */
typedef enum mfu__fcol {
    MFU__FC_STEP_TIME_S = MFU_RS_STEP_TIME_S,
    MFU__FC_TOKENS = MFU_RS_TOKENS,
    MFU__FC_TOKENS_PER_S = MFU_RS_TOKENS_PER_S,
    MFU__FC_TOKENS_PER_S_PER_DEVICE = MFU_RS_TOKENS_PER_S_PER_DEVICE,
    MFU__FC_MODEL_FLOPS_PER_S_PER_DEVICE = MFU_RS_MODEL_FLOPS_PER_S_PER_DEVICE,
    MFU__FC_HARDWARE_FLOPS_PER_S_PER_DEVICE = MFU_RS_HARDWARE_FLOPS_PER_S_PER_DEVICE,
    MFU__FC_MFU = MFU_RS_MFU,
    MFU__FC_HFU = MFU_RS_HFU,
    MFU__FC_STACK_FLOPS_PER_S_PER_DEVICE = MFU_RS_STACK_FLOPS_PER_S_PER_DEVICE,
    MFU__FC_STACK_MFU = MFU_RS_STACK_MFU,
    MFU__FC_REPORTED_FLOPS_PER_S_PER_DEVICE = MFU_RS_REPORTED_FLOPS_PER_S_PER_DEVICE,
    MFU__FC_REPORTED_MFU = MFU_RS_REPORTED_MFU,
    MFU__FC_REPORTED_TOKENS_PER_S = MFU_RS_REPORTED_TOKENS_PER_S,
    MFU__FC_LOSS = MFU_RS_LOSS,
    MFU__FC_SEQ = MFU_RS_COUNT_, /* tokens per sequence of the step (NaN unknown) */
    MFU__FC_MODEL_FPT,           /* model FLOPs per useful token (the log's, see below) */
    MFU__FC_HARDWARE_FPT,        /* hardware FLOPs per counted token */
    MFU__FC_STACK_FPT,           /* FLOPs per token as the framework counts them */
    MFU__FC_DEVICES,             /* devices in the job */
    MFU__FC_PEAK,                /* dense peak of one device for the step's dtype */
    MFU__FC_USEFUL,              /* useful (non-padding) / counted tokens, 0..1 */
    MFU__FC_BATCH,               /* sequences per step (a configuration label) */
    MFU__FC_DERIVED_TPS,         /* tokens / printed step time (NaN otherwise) */
    MFU__FC_LOG_FPT,             /* the log's FLOPs per counted token (implied.c) */
    MFU__FC_LOG_PEAK,            /* the log's peak per device: its TFLOP/s / its MFU */
    MFU__FC_LOG_MFU,             /* the log's own MFU of this step (an EMA undone) */
    MFU__FC_LOG_TOKENS,          /* tokens the step printed (or its samples x sequence) */
    MFU__FC_BASE_TPS,            /* tokens/s of the job before the FLOPs check's verdict */
    MFU__FC_OWN_TPD,             /* the framework's printed tokens/s per device (NaN: none) */
    MFU__FC_COUNT
} mfu__fcol;

/* Where a step's tokens/s came from (the precedence rule above). */
typedef enum mfu__tps_source {
    MFU__TPS_NONE = 0,
    MFU__TPS_TOKENS_TIME, /* tokens / the printed step time */
    MFU__TPS_FRAMEWORK,   /* the framework's own tokens/s */
    MFU__TPS_SAMPLES,     /* the framework's samples/s x sequence length */
    MFU__TPS_TIME_DELTA   /* tokens / (Δ timestamp / Δ step) */
} mfu__tps_source;

/* Where a step's tokens came from. */
typedef enum mfu__tok_source {
    MFU__TOK_NONE = 0,
    MFU__TOK_INPUT_TOKENS, /* the caller's tokens per step */
    MFU__TOK_INPUT_BATCH,  /* the caller's global batch x sequence length */
    MFU__TOK_STEP,         /* the step's own tokens */
    MFU__TOK_SAMPLES,      /* the step's samples x sequence length */
    MFU__TOK_HEADER,       /* the header's tokens per step */
    MFU__TOK_HEADER_BATCH  /* the header's global batch x sequence length */
} mfu__tok_source;

/* Row flags. */
enum {
    MFU__FR_SEQ_INFERRED = 1u << 0,    /* the sequence length is the one the log implies */
    MFU__FR_TOKENS_INFERRED = 1u << 1, /* tokens per step follow the log, not the context */
    MFU__FR_LOG_OWN_TPS = 1u << 2,     /* the log's FLOPs per token are per its own tokens/s */
    MFU__FR_LOG_PER_JOB = 1u << 3,     /* ... per the job's tokens/s (the device count unknown) */
    MFU__FR_LOG_NO_PEAK = 1u << 4      /* ... in units of the framework's unknown peak */
};

/* ---- context (context.c) ------------------------------------------------------------------ */

#define MFU__FIG_MAX_NOTES 8
#define MFU__FIG_CACHE 8
#define MFU__FIG_MAX_BREAKS 16

/* One stretch of rows over which the log's own FLOPs per counted token hold still
 * (implied.c), and what the context check says of it. */
typedef struct mfu__frun {
    size_t first, last;  /* rows, inclusive */
    size_t evidence;     /* rows in it with the log's FLOPs per token */
    double log_fpt;      /* median of the log's FLOPs per counted token */
    double log_peak;     /* median of the log's implied peak (NaN: it prints no pair) */
    double ctx_fpt;      /* median of the context's count of the same, as the framework counts
                            (NaN without a model) */
    double ratio;        /* log_fpt / ctx_fpt (NaN without a model) */
    bool holds;          /* the given context matches the log here */
    bool tracks;         /* the counted tokens follow the context's sequence length */
    bool given;          /* the counted tokens are the caller's or the header's, not the log's */
    bool batch_printed;  /* the log prints its sequences per step (or samples/s) here */
    double seq;          /* the sequence length the log implies here (NaN: the context's) */
    double tokens_scale; /* tokens per step x this (1: the context's) */
    double fpt_scale;    /* FLOPs per token x this where no sequence length explains it (1) */
} mfu__frun;

/* One stretch over which the tokens per step the caller gave stand in a constant ratio to the
 * tokens (or sequences) the log prints per step. */
typedef struct mfu__trun {
    size_t first, last;
    double ratio; /* given / printed, median */
    bool holds;
    double scale; /* tokens x this (1 where the context holds) */
} mfu__trun;

/* A run's context, resolved once (context.c). c.device may point into cpu: never copy a
 * context. The caller's input is copied, its pointers (arch strings, workload.doc_lengths,
 * device and stack names) borrowed for as long as the context lives. */
typedef struct mfu__fctx {
    mfu_report_context c;
    mfu_device_slot cpu; /* --device cpu: this machine's CPU; c.device points into it */
    const mfu__stack *prof;
    mfu_report_input in;
    mfu_workload wl;        /* in.workload with the sequence length resolved */
    mfu_flops_options sopt; /* how the framework counts (convention, attention, params) */
    bool stack_flops_ok;    /* c.stack_flops_per_token is known */
    bool p_stack_fallback;  /* c.stack_peak_flops_per_s is the framework's A100 fallback */
    double override_tokens; /* the caller's tokens per step (NaN) */
    double override_batch;  /* the caller's global batch, x each step's sequence (NaN) */
    double fallback_tokens; /* the header's tokens per step (NaN) */
    double fallback_batch;  /* the header's global batch (NaN) */
    double batch0;          /* sequences per step, the configuration label (NaN) */
    double seq0;            /* the run's sequence length (NaN) */
    int rec0;               /* the run's recomputation */
    struct {
        double seq;
        int rec;
        double f[3]; /* model, hardware, stack FLOPs per token */
    } cache[MFU__FIG_CACHE];
    size_t ncache, cache_next;
    size_t nnotes;
    char notes[MFU__FIG_MAX_NOTES][MFU_REPORT_TEXT_MAX];
    /* the context check (implied.c); NULL / 0 before it ran */
    mfu__frun *runs;
    size_t nruns;
    mfu__trun *truns;
    size_t ntruns;
    bool log_mode; /* no model: MFU and FLOPs are the log's own (c.mfu_source) */
} mfu__fctx;

/* Resolve the context of run under in (NULL: everything from the log) into *f (which the
 * caller allocates, never copies, and frees with mfu__fctx_free). Errors: those of
 * mfu_report_compute for the input (MFU_E_INVALID, MFU_E_UNKNOWN, MFU_E_AMBIGUOUS,
 * MFU_E_UNSUPPORTED, the model's), MFU_E_NOMEM. A device only the log names that mfu does not
 * know is a note, not an error. *f is freed and zeroed on error. */
mfu_status mfu__fctx_init(mfu__fctx *f, const mfu_run *run, const mfu_report_input *in,
                          mfu_error *err);
/* Free what f owns (NULL allowed); f is zeroed. */
void mfu__fctx_free(mfu__fctx *f);
/* Append a note to f (dropped past MFU__FIG_MAX_NOTES). */
void mfu__fctx_note(mfu__fctx *f, const char *fmt, ...) MFU__PRINTF(2, 3);

/* ---- rows (rows.c) ------------------------------------------------------------------------ */

/* The figures of one step. */
typedef struct mfu__frow {
    double v[MFU__FC_COUNT];
    int8_t recompute;   /* mfu_recompute of the step (the run's when it printed none) */
    int8_t dtype;       /* mfu_dtype of the step */
    uint8_t tps_source; /* mfu__tps_source */
    uint8_t tok_source; /* mfu__tok_source */
    uint8_t flags;      /* MFU__FR_* */
} mfu__frow;

/* The figures of step s, row `row` of its run, by the rule above; prev is the row before it
 * (NULL for the first: no time delta). The context check's verdicts (f->runs) apply to the row
 * they cover. The log's own figures (MFU__FC_LOG_*) are left to the column builder (they need
 * the rows around a step). f's FLOPs cache is updated. */
void mfu__figures_row(mfu__fctx *f, const mfu_step *s, const mfu_step *prev, size_t row,
                      mfu__frow *out);

/* The figures of every row of a run, as columns. A column no row has a value in (every row
 * the NaN of mfu__figures_row's start, bit for bit) is not stored: v[k] points to nan, cap
 * NaNs that every such column shares, until a row brings a value (present[k] from then on,
 * NaN in the rows before). A column equal bit for bit, row for row, to an earlier one from
 * the first build on (tokens/s and the derived tokens/s, MFU and HFU without recomputation)
 * shares its rows: v[k] is the earlier column's array and same[k] is that column's number + 1
 * (0: its own rows), until a row or a write makes them differ. A column whose first block is
 * one value in every row (tokens per step, devices, peak; at 10M rows 80 MB each) and the NaN
 * column are mapped (mfu__const_map, util/pages.h) where the column is long. With lend set
 * (a report whose run is freed next: mfu__report_compute_consume), a column equal bit for bit, row
 * for row, to one of the run's double columns (the printed step time, tokens/s and loss are) is the
 * run's array itself, lent[k] its column number + 1, until a row makes them differ; the run must
 * not change or go while any is lent, and mfu__fcols_adopt makes them c's own. Readers index every
 * column alike (v[k][i], i < n) and never write; only rows.c and implied.c write, through
 * mfu__fcols_put and mfu__fcols_own. An 8-field log has about 11 of the 29. */
typedef struct mfu__fcols {
    size_t n, cap;
    double *v[MFU__FC_COUNT];
    bool present[MFU__FC_COUNT];
    uint8_t same[MFU__FC_COUNT];
    size_t mapped[MFU__FC_COUNT]; /* bytes of a column mapped (0: malloc'd): mfu__const_map's,
                                     or a run's reserved one adopted (util/pages.h) */
    size_t nan_mapped;            /* the same for nan */
    bool whole[MFU__FC_COUNT];    /* a mapped column not written since: one value, every row */
    bool lend;                    /* the caller's, before the first build: run columns lend */
    uint8_t lent[MFU__FC_COUNT];  /* the run's double column (MFU_COL_* + 1) v[k] is (0: none) */
    double *nan;
    int8_t *recompute, *dtype;
    uint8_t *tps_source, *tok_source, *flags;
} mfu__fcols;

/* Compute rows [first, mfu_run_count(run)) of c (rows before first are kept): the per-row
 * figures, the framework's printed MFU replayed as it would print it (an EMA), the log's own
 * FLOPs per token, peak and MFU. Errors: MFU_E_NOMEM (c keeps its rows before first, and n is
 * first). */
mfu_status mfu__fcols_build(mfu__fcols *c, mfu__fctx *f, const mfu_run *run, size_t first,
                            mfu_error *err);
/* Free c's columns (NULL allowed; a lent one is the run's and stays); c is zeroed. */
void mfu__fcols_free(mfu__fcols *c);
/* Whether column k of c is known to hold one value in every row, without reading them (a
 * mapped column no write changed since): *x gets it. false says nothing about the rows. */
bool mfu__fcols_const(const mfu__fcols *c, int k, double *x);
/* Free c's per-row codes (recompute, dtype, tps_source, tok_source, flags: NULL afterwards),
 * for a reader done with them whose rows are complete (mfu report, once the analysis's input
 * is made); c must not be built or grown again. */
void mfu__fcols_drop_codes(mfu__fcols *c);
/* Make every column c borrows from run (lent) c's own, taking the run's array
 * (mfu__run_take_column: run keeps none for that column and refuses appends from now on) or,
 * where run no longer holds it, a copy. false when out of memory for a copy (the columns
 * adopted so far are c's, the rest still lent). */
bool mfu__fcols_adopt(mfu__fcols *c, mfu_run *run);
/* Write x into row i (< c->cap) of column k of c: a column not stored so far is stored from
 * now on (NaN in every other row) unless x is the shared NaN itself. false when out of memory
 * for it (c unchanged). */
bool mfu__fcols_put(mfu__fcols *c, int k, size_t i, double x);
/* Make column k of c (present) hold rows of its own, shared with no other column, for a
 * writer that changes its rows in place (c->v[k][i] = ...): a column that shared another's
 * rows gets a copy, and the columns that shared k's keep the rows k had. false when out of
 * memory (c unchanged). */
bool mfu__fcols_own(mfu__fcols *c, int k);

/* Everything for a whole run: build every row, fix the real (non-padding) share when the
 * caller gave --real-tokens-per-step, run the context check and rebuild the rows it changed,
 * and fill the context's run-level figures (constant tokens per step, what the log implies).
 * Errors: MFU_E_INVALID (field "--real-tokens-per-step": more than the tokens per step),
 * MFU_E_NOMEM. */
mfu_status mfu__figures_compute(mfu__fctx *f, mfu__fcols *c, const mfu_run *run, mfu_error *err);

/* The same for a run that grew or changed from row first on (the server's live runs): rows
 * [first, n) are rebuilt, the context check runs again, and the rows whose verdict changed
 * are rebuilt too. *changed gets the first row whose figures may differ from before (n when
 * none). Errors: MFU_E_NOMEM. */
mfu_status mfu__figures_update(mfu__fctx *f, mfu__fcols *c, const mfu_run *run, size_t first,
                               size_t *changed, mfu_error *err);

/* ---- the log's own figures and the context check (implied.c) ----------------------------- */

/* Split the rows of c into stretches where the log's own FLOPs per token hold still, judge
 * the context against each, and for a stretch where the context no longer holds work out the
 * sequence length (the model known) and tokens per step the log implies. Fills f->runs and the
 * log-mode columns (no model: FLOPs per token and peak of the log). Returns the first row whose
 * verdict differs from what f->runs held before (mfu_run_count when none); SIZE_MAX when out
 * of memory (f keeps its old verdicts). */
size_t mfu__figures_check(mfu__fctx *f, mfu__fcols *c);

/* The stretch that covers row, NULL when none. */
const mfu__frun *mfu__figures_run_at(const mfu__fctx *f, size_t row);
/* The tokens stretch that covers row, NULL when none. */
const mfu__trun *mfu__figures_trun_at(const mfu__fctx *f, size_t row);

/* One line per context break into f's notes ("the context holds until step N: ..."), for
 * steps[] the run's step numbers. */
void mfu__figures_explain(mfu__fctx *f, const int64_t *steps, const mfu__fcols *c);

/* ---- windows (window.c) ------------------------------------------------------------------- */

/* The total over rows [first, last] of c: counted tokens / time (ratio of sums, stalls
 * included), MFU = Σ useful tokens x FLOPs / Σ time x devices x peak, and the time the steps
 * slower than typical cost (Σ time − Σ tokens / median tokens/s). NaN where unknown. */
typedef struct mfu__fwindow {
    size_t rows;         /* rows with a throughput */
    bool per_device;     /* tokens/s are per device (the device count is unknown) */
    double tokens_per_s; /* Σ tokens / Σ time */
    double mfu;          /* NaN without FLOPs or peak */
    double step_time_s;  /* mean step time */
    double time_s;       /* Σ time */
    double stall_s;      /* Σ time − Σ tokens / median tokens/s (>= 0) */
    double median_tokens_per_s;
    double median_mfu, median_hfu;
    double median_model_flops_per_s_per_device, median_hardware_flops_per_s_per_device;
    double median_step_time_s;
} mfu__fwindow;

/* Fill *w for rows [first, last] of c (both < c->n); scratch holds last - first + 1 doubles.
 * Rows without a throughput are left out. */
void mfu__figures_window(const mfu__fcols *c, size_t first, size_t last, double *scratch,
                         mfu__fwindow *w);

#endif /* MFU_FIGURES_H */
