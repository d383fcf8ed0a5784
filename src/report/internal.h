/*
 * report/internal.h - what the files of src/report share: the framework profiles (stacks.c),
 * the warm-up rule (warmup.c), robust statistics (stats.c) and the comparisons (compare.c).
 */
#ifndef MFU_REPORT_INTERNAL_H
#define MFU_REPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mfu/report.h"
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

/* Per-step context (report.c): what each step's figures were computed with. */
typedef enum mfu__px {
    MFU__PX_SEQ = 0,  /* tokens per sequence (the step's, else the run's; NaN unknown) */
    MFU__PX_MODEL,    /* model FLOPs per token at that sequence length */
    MFU__PX_HARDWARE, /* hardware FLOPs per token (the step's recomputation) */
    MFU__PX_STACK,    /* FLOPs per token as the framework counts them */
    MFU__PX_DEVICES,  /* devices in the job */
    MFU__PX_PEAK,     /* dense peak per device (the step's dtype) */
    MFU__PX_REAL,     /* real (non-padding) / counted tokens */
    MFU__PX_BATCH,    /* sequences per step (config label of the analysis) */
    MFU__PX_COUNT
} mfu__px;

/* What the analysis's tokens are (mfu_report_analysis_unit). */
typedef enum mfu__unit { MFU__UNIT_TOKENS = 0, MFU__UNIT_DEVICE, MFU__UNIT_STEPS } mfu__unit;

struct mfu_report {
    mfu_report_context ctx;
    size_t nmissing;
    mfu_report_missing missing[MFU_REPORT_MAX_MISSING];
    size_t n;       /* steps */
    int64_t *steps; /* n */
    double *col[MFU_RS_COUNT_];
    mfu_report_step_state *state;
    mfu_report_stat stat[MFU_RS_COUNT_];
    mfu_report_warmup warmup;
    size_t ncomparisons;
    mfu_report_comparison comparisons[MFU_REPORT_MAX_COMPARISONS];
    size_t nnotes;
    char notes[MFU_REPORT_MAX_NOTES][MFU_REPORT_TEXT_MAX];
    double *px[MFU__PX_COUNT]; /* per-step context, n each */
    int8_t *recompute;         /* per-step recompute code (mfu_recompute; -1 unknown) */
    int8_t *dtype;             /* per-step dtype code (mfu_dtype) */
    mfu_analysis *analysis;    /* NULL: none */
    mfu__unit unit;
    mfu_device_slot cpu; /* --device cpu: this machine's CPU; ctx.device points into it */
};

/* Build the analysis of r from its columns and the run (explain.c): sets r->analysis and
 * r->unit, adds the reported_mismatch findings. opts NULL = defaults. A run without any usable
 * step gets no analysis and a note. Errors: MFU_E_NOMEM, MFU_E_INVALID (opts out of range,
 * field names the option). */
mfu_status mfu__report_explain(mfu_report *r, const mfu_run *run, const mfu_report_input *in,
                               const mfu_workload *wl, mfu_error *err);

/* Take r's analysis out of r (explain.c): the caller owns it (mfu_analysis_free); r keeps
 * everything else and has no analysis from then on. For a holder that keeps the analysis of a
 * long run without the report's per-step columns (the server's cache). NULL when r is NULL or
 * has none. */
mfu_analysis *mfu__report_take_analysis(mfu_report *r);

/* What the comparisons need beside the report (compare.c). */
typedef struct mfu__cmp_ctx {
    const mfu_report_input *in; /* the caller's input (arch, options) */
    const mfu__stack *prof;     /* NULL: generic format (mfu's own convention is the stack) */
    mfu_workload wl;            /* the workload with seq resolved */
    mfu_flops_options sopt;     /* how the framework counts (convention, attention, params) */
    bool stack_flops_ok;        /* ctx.stack_flops_per_token is known */
    double tol;
    double rho;            /* real / counted tokens (1 without padding information) */
    double p_true;         /* the device's dense peak (NaN unknown) */
    bool p_stack_fallback; /* the framework's peak (ctx.stack_peak_flops_per_s) is its
                              fallback for a device it lacks */
    const mfu_device_info *dev;
    double *scratch;           /* 2n doubles */
    const double *derived_tps; /* tokens/s from tokens and step time, NaN elsewhere (n) */
} mfu__cmp_ctx;

/* Fill r->comparisons (and notes) from the series; r's columns, states and context are set. */
void mfu__report_compare(mfu_report *r, const mfu__cmp_ctx *c);

/* true for the conventions whose count is 6N + something (they accept an explicit N). */
bool mfu__convention_n_based(mfu_convention c);

/* Append a note (dropped when the report holds MFU_REPORT_MAX_NOTES). */
void mfu__report_note(mfu_report *r, const char *fmt, ...) MFU__PRINTF(2, 3);

/* CRC-32C (Castagnoli) of data[0..n), as TensorBoard's record format checks it (export.c). */
uint32_t mfu__crc32c(const void *data, size_t n);

#endif
