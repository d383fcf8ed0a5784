/*
 * mfu/report.h - what a training log says about MFU, recomputed and checked.
 *
 * A report joins a run (mfu/run.h, read by mfu/ingest.h) with its context - the model
 * (mfu/model.h), the device (mfu/device.h), the device count and the tokens in a step, taken
 * from the log's header and overridden by the caller - and gives:
 *
 *   - a per-step series: tokens/s (global and per device), model and hardware FLOP/s per
 *     device, MFU and HFU under the report's convention (default `exact`) and the device's
 *     DENSE peak, beside the figures the framework printed itself;
 *   - which steps are steady: a warm-up at the start and timing artifacts are detected and
 *     left out (docs/internals/report.md gives the rule and its thresholds);
 *   - median, mean, p10 and p90 of every series over the steady steps;
 *   - comparisons: each figure the framework printed (its TFLOP/s, its MFU, its tokens/s) beside
 *     the value recomputed "as that framework computes it" (its counting convention, its peak
 *     table, its quirks: nanoGPT's hard-coded A100 peak and EMA, torchtitan's A100 fallback,
 *     llm.c's name table), and beside the device's real dense peak. A disagreement beyond the
 *     tolerance is explained, when one explains it, by a named cause (sparse peak, hard-coded
 *     or fallback A100 peak, a formula that ignores GQA / SwiGLU / MoE, causal halving,
 *     embeddings, recomputation, padding);
 *   - the analysis of the run (mfu/analysis.h) on those per-step figures, each step with its own
 *     sequence length, device count, dtype and recomputation when the log prints them: segments,
 *     the decomposition of every change with intervals and verdicts, findings (with the
 *     disagreements above and a roofline ceiling among them), invariants (mfu_report_expect);
 *   - one self-contained HTML page of one or more reports (mfu_report_html).
 *
 * A missing piece of context is not a failure: without a model there are no FLOPs, without a
 * device no MFU, and the report lists what is missing with the option that supplies it
 * (mfu_report_missing). Everything it can compute from the log (tokens/s, step time, the
 * framework's own figures, the peak and FLOPs per token the log implies) is still there.
 *
 * Units: seconds, tokens, FLOP/s; MFU, HFU and ratios are fractions (0..1). Every double that
 * cannot be computed is NaN.
 *
 * Ownership and errors follow common.h. A report does not keep the run or the input it was made
 * from. Thread safety: re-entrant; a report is used by one thread at a time.
 */
#ifndef MFU_REPORT_H
#define MFU_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mfu/analysis.h"
#include "mfu/common.h"
#include "mfu/device.h"
#include "mfu/model.h"
#include "mfu/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- limits and defaults ------------------------------------------------------------------ */

#define MFU_REPORT_TOLERANCE 0.01    /* default: figures within 1 % agree */
#define MFU_REPORT_TEXT_MAX 320      /* bytes of every explanation / note, NUL included */
#define MFU_REPORT_MAX_COMPARISONS 8 /* comparisons a report holds */
#define MFU_REPORT_MAX_NOTES 16      /* notes a report holds (later ones are dropped) */
#define MFU_REPORT_MAX_MISSING 6     /* missing pieces of context listed */

/* ---- input -------------------------------------------------------------------------------- */

/* The run's context as the caller knows it. Zero-initialise, then set what is known; every
 * zero / NULL field means "take it from the log's header, or leave it unknown". */
typedef struct mfu_report_input {
    bool has_arch;           /* false: no model (no FLOPs, MFU or HFU) */
    mfu_arch arch;           /* the model; need not be resolved */
    mfu_workload workload;   /* seq 0 = the log's seq_len; doc_lengths is borrowed for the
                                call of mfu_report_compute() only */
    mfu_flops_options flops; /* the report's own convention (zeroed = exact) */
    const char *device;      /* device name or id (mfu_device_find); NULL = the log's */
    bool dtype_given;        /* dtype below is set; else the log's precision, else bf16 */
    mfu_dtype dtype;
    double peak_flops_per_s;     /* > 0: dense peak of one device, instead of the table */
    int64_t devices;             /* devices in the job; 0 = the log's world size */
    int64_t global_batch;        /* sequences per step, whole job; 0 = the log's */
    double tokens_per_step;      /* tokens per step, whole job; 0 = the log's (wins over
                                    global_batch) */
    double real_tokens_per_step; /* non-padding tokens per step, whole job; 0 = every counted
                                    token is real. MFU and HFU count only real tokens. */
    const char *stack;           /* framework profile by log format name ("torchtitan"); NULL
                                    = the run's format */
    double tolerance;            /* relative tolerance of agreement; 0 = MFU_REPORT_TOLERANCE */
    const mfu_analysis_options *analysis; /* options of the analysis (segments, decomposition,
                                             findings); NULL = mfu_analysis_options_init()'s;
                                             borrowed for the call only */
    bool no_analysis;                     /* true: no analysis (mfu_report_analysis is NULL) */
    int64_t micro_batch; /* sequences per device per micro-step, for the roofline finding;
                            0 = the log's (no roofline when neither gives it) */
    int64_t tp;          /* tensor-parallel size for the roofline; 0 = 1 */
    bool per_device;     /* the analysis counts tokens per device even when the device count is
                            known (to compare with a run whose device count is unknown) */
} mfu_report_input;

/* ---- output -------------------------------------------------------------------------------- */

typedef struct mfu_report mfu_report;

/* Where a piece of context came from. */
typedef enum mfu_report_source {
    MFU_SRC_NONE = 0,    /* unknown */
    MFU_SRC_LOG = 1,     /* the log's header or step lines */
    MFU_SRC_INPUT = 2,   /* the caller (command-line flags) */
    MFU_SRC_INFERRED = 3 /* worked out from the log's own figures (its peak names one device of
                            the framework's table; its FLOPs per token imply a sequence length) */
} mfu_report_source;

/* The framework profile used to recompute the log's own figures (see docs/conventions.md,
 * "Which convention each log format uses"). */
typedef struct mfu_report_stack {
    char name[32];       /* the profile's format name ("torchtitan"); "" = none (generic) */
    char framework[48];  /* display name ("torchtitan", "Megatron-LM") */
    bool has_convention; /* the framework computes FLOPs with a formula mfu knows */
    mfu_convention convention;
    mfu_attention attention;           /* as resolved for this log (never DEFAULT) */
    bool counts_recompute;             /* its FLOP/s are hardware FLOPs (recompute included) */
    bool approximate;                  /* its FLOPs are measured: the recomputation is indicative */
    bool counts_padding;               /* it counts padding tokens as tokens */
    char figures[MFU_REPORT_TEXT_MAX]; /* what its printed figures mean (scope, units) */
    char rule[MFU_REPORT_TEXT_MAX];    /* the convention / date rule applied, in words */
} mfu_report_stack;

/* The context the report used, resolved. */
typedef struct mfu_report_context {
    mfu_report_stack stack;
    bool has_model;                /* FLOPs per token are known */
    char model[MFU_ARCH_NAME_MAX]; /* preset / config name; "" when unnamed or unknown */
    int64_t seq;                   /* tokens per sequence; 0 unknown */
    mfu_report_source seq_source;
    mfu_convention convention;       /* the report's own convention */
    mfu_attention attention;         /* as counted (never DEFAULT when has_model) */
    double model_flops_per_token;    /* training model FLOPs per token (NaN without model) */
    double hardware_flops_per_token; /* with recomputation */
    double stack_flops_per_token;    /* as the framework counts them (NaN when unknown) */
    const mfu_device_info *device;   /* NULL when unknown (or only --peak-tflops) */
    char device_name[MFU_META_STR];  /* as given or printed; "" unknown */
    mfu_report_source device_source;
    mfu_dtype dtype;
    double peak_flops_per_s;                   /* dense peak of one device (NaN unknown) */
    mfu_report_source peak_source;             /* INPUT: --peak-tflops; LOG: the device table,
                                                  or the peak a canonical file states for a
                                                  device the table does not know */
    double stack_peak_flops_per_s;             /* the peak the framework divides by (NaN unknown) */
    char stack_peak_rule[MFU_REPORT_TEXT_MAX]; /* where that peak comes from, in words */
    double devices;                            /* devices in the job (NaN unknown) */
    mfu_report_source devices_source;
    double tokens_per_step; /* global tokens per step (NaN unknown or varying) */
    mfu_report_source tokens_source;
    double real_fraction;            /* real / counted tokens (1 without padding info) */
    double implied_peak_flops_per_s; /* the log's TFLOP/s ÷ its MFU (NaN unless both) */
    double implied_flops_per_token;  /* the log's FLOP/s ÷ tokens/s per device (NaN) */
    int64_t start_time_s;            /* first timestamp of the log (s since 1970), 0 none */
    bool mfu_from_log;     /* no model: the MFU and FLOP/s series are the log's own figures,
                              under the framework's convention (stack.name), not mfu's count */
    size_t context_breaks; /* stretches of steps where the given context does not match the
                              log's own figures (the notes say where and what they imply) */
    bool flops_relative;   /* mfu_from_log, and the log's FLOPs per token are known only up to a
                              factor: it prints MFU without FLOP/s and names no device (units of
                              its unknown peak), or no device count (per job): the analysis
                              states no FLOP/s, capacity or FLOPs per token, only their ratios */
} mfu_report_context;

/* One piece of context that is missing, and the option that supplies it. */
typedef struct mfu_report_missing {
    char what[32];       /* "model", "sequence length", "device", "device count", "tokens" */
    char option[96];     /* "--model NAME or --config config.json" */
    char needed_for[64]; /* "MFU, HFU and FLOP/s" */
} mfu_report_missing;

/* Per-step series (columns). Each has mfu_report_step_count() entries, NaN where unknown. */
typedef enum mfu_report_series {
    MFU_RS_STEP_TIME_S = 0, /* wall time of the step */
    MFU_RS_TOKENS,          /* counted tokens in the step, whole job */
    MFU_RS_TOKENS_PER_S,    /* counted tokens/s, whole job */
    MFU_RS_TOKENS_PER_S_PER_DEVICE,
    MFU_RS_MODEL_FLOPS_PER_S_PER_DEVICE,    /* report convention, real tokens */
    MFU_RS_HARDWARE_FLOPS_PER_S_PER_DEVICE, /* with recomputation */
    MFU_RS_MFU,                             /* fraction, device's dense peak */
    MFU_RS_HFU,
    MFU_RS_STACK_FLOPS_PER_S_PER_DEVICE,    /* as the framework would have printed it */
    MFU_RS_STACK_MFU,                       /* as the framework would have printed it */
    MFU_RS_REPORTED_FLOPS_PER_S_PER_DEVICE, /* printed by the framework */
    MFU_RS_REPORTED_MFU,                    /* printed by the framework (per device) */
    MFU_RS_REPORTED_TOKENS_PER_S,           /* printed by the framework, whole job */
    MFU_RS_LOSS,
    MFU_RS_COUNT_ /* number of series; not a series */
} mfu_report_series;

/* What a step is to the summaries. */
typedef enum mfu_report_step_state {
    MFU_STEP_STEADY = 0,     /* counted in the summaries */
    MFU_STEP_WARMUP = 1,     /* leading slow step */
    MFU_STEP_ARTIFACT = 2,   /* far faster than the steady median: a timing artifact */
    MFU_STEP_IMPOSSIBLE = 3, /* MFU above 100 % */
    MFU_STEP_UNUSABLE = 4,   /* no throughput could be derived */
    MFU_STEP_SETTLE = 5      /* leading slow step after a configuration change */
} mfu_report_step_state;

/* Robust summary of one series over the steady steps. */
typedef struct mfu_report_stat {
    size_t n;      /* steady steps with a value */
    double median; /* NaN when n == 0 */
    double mean;
    double p10; /* 10th / 90th percentiles, linear interpolation between order statistics */
    double p90;
} mfu_report_stat;

/* The warm-up and exclusions. */
typedef struct mfu_report_warmup {
    bool checked;       /* a warm-up was looked for (see the docs) */
    bool mid_run;       /* not looked for: the log starts in the middle of training */
    size_t steps;       /* leading warm-up steps excluded */
    int64_t first_step; /* meaningful when steps > 0 */
    int64_t last_step;
    double slowdown;   /* mean throughput of the warm-up ÷ steady median − 1 (< 0) */
    size_t artifacts;  /* steps excluded as timing artifacts */
    size_t impossible; /* steps excluded for MFU above 100 % */
    size_t unusable;   /* steps without a throughput */
    size_t settle;     /* steps excluded as settling after a configuration change */
    size_t steady;     /* steps counted in the summaries */
} mfu_report_warmup;

/* Which printed figure a comparison is about. */
typedef enum mfu_figure {
    MFU_FIGURE_FLOPS_PER_S = 0, /* model FLOP/s per device (printed as TFLOP/s) */
    MFU_FIGURE_MFU = 1,         /* MFU per device */
    MFU_FIGURE_TOKENS_PER_S = 2 /* tokens/s, whole job */
} mfu_figure;

/* Why a printed figure disagrees. Only ever appended to. */
typedef enum mfu_mismatch {
    MFU_MISMATCH_NONE = 0,            /* agrees within the tolerance */
    MFU_MISMATCH_UNEXPLAINED = 1,     /* disagrees; no rule explains it */
    MFU_MISMATCH_SPARSE_PEAK = 2,     /* divided by the 2:4 sparse peak (2 x dense) */
    MFU_MISMATCH_HALF_PEAK = 3,       /* divided by half the dense peak */
    MFU_MISMATCH_A100_HARDCODED = 4,  /* a constant 312 TFLOP/s (nanoGPT) on another device */
    MFU_MISMATCH_A100_FALLBACK = 5,   /* the framework's A100 fallback for a device it lacks */
    MFU_MISMATCH_STACK_PEAK = 6,      /* the framework's table gives another peak for the device */
    MFU_MISMATCH_NO_GQA = 7,          /* its formula treats GQA/MQA as full multi-head attention */
    MFU_MISMATCH_NO_SWIGLU = 8,       /* its formula counts 2 MLP matrices instead of 3 */
    MFU_MISMATCH_MLP_4H = 9,          /* its formula assumes a plain 4h MLP */
    MFU_MISMATCH_MHA_4H = 10,         /* assumes multi-head attention and a 4h MLP */
    MFU_MISMATCH_ALL_EXPERTS = 11,    /* counts every expert, not the top-k */
    MFU_MISMATCH_NO_MOE = 12,         /* counts one expert per token (MoE ignored) */
    MFU_MISMATCH_FULL_ATTENTION = 13, /* counts the whole score matrix (not causal-halved) */
    MFU_MISMATCH_CAUSAL_ATTENTION = 14, /* halves the score matrix */
    MFU_MISMATCH_EMBEDDINGS = 15,       /* counts the input embedding as a matmul */
    MFU_MISMATCH_RECOMPUTE = 16,        /* counts activation recomputation (hardware FLOPs) */
    MFU_MISMATCH_PADDING = 17,          /* counts padding tokens as real */
    MFU_MISMATCH_COUNT_ = 18
} mfu_mismatch;

/* One printed figure beside its recomputations (medians over the steady steps). */
typedef struct mfu_report_comparison {
    mfu_figure figure;
    char label[160];    /* "MFU as torchtitan computes it (peak 989 TFLOP/s)" */
    double reported;    /* median of the printed figure (MFU fraction, FLOP/s, tokens/s) */
    double recomputed;  /* median of mfu's recomputation of the same figure */
    double ratio;       /* median over steps of reported / recomputed */
    size_t steps;       /* steady steps with both values */
    bool agrees;        /* |ratio − 1| <= tolerance */
    mfu_mismatch cause; /* NONE when it agrees */
    char explanation[MFU_REPORT_TEXT_MAX]; /* one line: the cause with its figures, or "" */
    double peak_flops_per_s;               /* MFU comparisons: the peak of the recomputation */
} mfu_report_comparison;

/* Compute the report of run with the context in *in (NULL = everything from the log). *out is
 * NULL on error. Errors: MFU_E_INVALID (NULL run or out; an input field out of its domain:
 * negative counts, tolerance not in (0, 0.5)), MFU_E_EMPTY (the run has no step),
 * MFU_E_UNKNOWN / MFU_E_AMBIGUOUS (in->device or in->stack is not known: the message lists
 * the choices), MFU_E_UNSUPPORTED (in->dtype has no peak on that device), the statuses of
 * mfu_flops_compute() for a model the caller gave that cannot be counted (field names the
 * option), MFU_E_NOMEM. A device name that only the LOG gives and that mfu does not know is
 * not an error: it becomes a missing piece. */
MFU_API mfu_status mfu_report_compute(const mfu_run *run, const mfu_report_input *in,
                                      mfu_report **out, mfu_error *err);

/* Free a report. NULL is allowed. */
MFU_API void mfu_report_free(mfu_report *r);

/* The resolved context (never NULL for a non-NULL report). */
MFU_API const mfu_report_context *mfu_report_get_context(const mfu_report *r);

/* Missing pieces: count, and entry i (NULL when out of range). */
MFU_API size_t mfu_report_missing_count(const mfu_report *r);
MFU_API const mfu_report_missing *mfu_report_missing_at(const mfu_report *r, size_t i);

/* Steps in the series (the run's rows); 0 for NULL. */
MFU_API size_t mfu_report_step_count(const mfu_report *r);
/* Step numbers (owned by r); NULL when empty. */
MFU_API const int64_t *mfu_report_steps(const mfu_report *r);
/* One series (owned by r); NULL when empty or out of range. */
MFU_API const double *mfu_report_column(const mfu_report *r, mfu_report_series s);
/* State of step i; MFU_STEP_UNUSABLE when out of range. */
MFU_API mfu_report_step_state mfu_report_step_state_at(const mfu_report *r, size_t i);
/* Summary of a series over the steady steps (all NaN, n 0 for NULL or out of range). */
MFU_API mfu_report_stat mfu_report_summary(const mfu_report *r, mfu_report_series s);
/* Warm-up and exclusions (never NULL for a non-NULL report). */
MFU_API const mfu_report_warmup *mfu_report_get_warmup(const mfu_report *r);

/* Comparisons: count, and entry i (NULL when out of range). */
MFU_API size_t mfu_report_comparison_count(const mfu_report *r);
MFU_API const mfu_report_comparison *mfu_report_comparison_at(const mfu_report *r, size_t i);

/* Notes: one line each, about the log and the context ("nanoGPT prints an EMA ..."). */
MFU_API size_t mfu_report_note_count(const mfu_report *r);
MFU_API const char *mfu_report_note_at(const mfu_report *r, size_t i);

/* ---- energy beside utilization (src/figures/energy.c) ---------------------------------------- */

/* How MFU compares with the tensor pipes' activity (NVML GPM's "any tensor" utilization: the
 * fraction of the time some tensor pipe of the device was busy). A device cannot deliver more
 * matrix FLOPs than its busy tensor pipes do, so MFU above the activity means the FLOPs or the
 * peak are counted wrong; MFU far below it means the pipes were busy with work MFU does not
 * count (recomputation, padding, work the model's count misses) or ran far below their rate. */
typedef enum mfu_tensor_check {
    MFU_TENSOR_CHECK_NONE = 0,       /* no tensor activity or no MFU: nothing to compare */
    MFU_TENSOR_CHECK_CONSISTENT = 1, /* MFU at or below the activity, not far below it */
    MFU_TENSOR_CHECK_MFU_ABOVE = 2,  /* MFU > activity + MFU_TENSOR_ABOVE_MARGIN: counting error */
    MFU_TENSOR_CHECK_FAR_BELOW = 3   /* MFU < MFU_TENSOR_FAR_BELOW x activity: wasted tensor work */
} mfu_tensor_check;

#define MFU_TENSOR_ABOVE_MARGIN 0.02 /* MFU may exceed the activity by 2 points (sampling) */
#define MFU_TENSOR_FAR_BELOW 0.5     /* MFU under half the activity is "far below" */

/* Energy per useful work over the steady steps, where the log or NVML gave an energy: a
 * step's energy_j (J, one device), else its power_w x its step time. Whole-job figures: a
 * device's energy x the step's devices. NaN / 0 where nothing is known. */
typedef struct mfu_energy {
    size_t steps;            /* steady steps with an energy and useful model FLOPs */
    size_t power_steps;      /* of those, the energy from power x step time */
    double joules;           /* energy of the whole job over those steps, J */
    double useful_pflop;     /* useful model FLOPs of the whole job over them, PFLOP (1e15) */
    double joules_per_pflop; /* joules / useful_pflop */
    double tokens;           /* counted tokens over the steady steps with an energy and a device
                                count (useful FLOPs not needed), whole job */
    double tokens_per_kwh;   /* tokens / kWh over those steps (1 kWh = 3.6e6 J) */
    size_t tensor_steps;     /* steady steps with a tensor activity and an MFU */
    double tensor_active;    /* median tensor activity over them, fraction 0..1 */
    double mfu;              /* median MFU over the same steps */
    mfu_tensor_check check;  /* the cross-check of the two medians */
    char check_text[MFU_REPORT_TEXT_MAX]; /* one line saying what it means; "" for NONE */
} mfu_energy;

/* The energy figures of r (never NULL for a non-NULL report). Nothing is known, and nothing
 * is shown, when steps == 0, tensor_steps == 0 and tokens_per_kwh is NaN (no energy, power or
 * tensor activity; or an energy with neither model FLOPs nor tokens and devices). */
MFU_API const mfu_energy *mfu_report_get_energy(const mfu_report *r);

/* The name of a check: "none", "consistent", "mfu_above", "far_below"; NULL outside the enum. */
MFU_API const char *mfu_tensor_check_name(mfu_tensor_check c);

/* ---- the analysis: segments, the decomposition at every boundary, findings ------------------ */

/* The analysis of the run (mfu/analysis.h), owned by r: NULL when input->no_analysis, or when
 * no step has a throughput (a note says so). Its series is the report's, step by step: tokens,
 * tokens/s, and per step the FLOPs per token of that step's sequence length and recomputation,
 * its device count and its dtype's peak (a per-step value the log prints wins over the run's
 * header and the caller's flags for that step), clock, power, timers, loss; and one row per
 * rank for the steps that several ranks printed (mfu_run_rank_obs_get). Findings of the
 * analysis module are followed by one "reported_mismatch" finding per comparison that
 * disagrees, and by a "roofline" finding (mfu/roofline.h: the MFU ceiling the matrix shapes
 * allow on the device) when the model, the sequence length, a device with a memory bandwidth
 * and the micro-batch (input->micro_batch or the log's) are known. */
MFU_API const mfu_analysis *mfu_report_analysis(const mfu_report *r);

/* What the analysis's "tokens" are: "tokens" (whole job), "tokens per device" (the device count
 * is unknown; levels are per device, MFU is unchanged) or "steps" (no tokens per step: tokens/s
 * is steps/s and there is no MFU). NULL when there is no analysis. */
MFU_API const char *mfu_report_analysis_unit(const mfu_report *r);

/* Check an invariant (mfu_analysis_expect's grammar, docs/analysis.md) against the steady state
 * of the run and record it in the analysis. A violated invariant is MFU_OK with out->passed
 * false. Errors: MFU_E_INVALID (NULL r or expr), MFU_E_MISSING (the report has no analysis;
 * the message says why), and those of mfu_analysis_expect (MFU_E_PARSE with the column). */
MFU_API mfu_status mfu_report_expect(mfu_report *r, const char *expr, mfu_invariant_result *out,
                                     mfu_error *err);

/* Add a finding made elsewhere (a roofline ceiling, ...) to the report's analysis
 * (mfu_analysis_add_finding). Errors: MFU_E_INVALID (NULL, or the finding's fields),
 * MFU_E_MISSING (no analysis), MFU_E_LIMIT. */
MFU_API mfu_status mfu_report_add_finding(mfu_report *r, const mfu_finding *f, mfu_error *err);

/* ---- HTML --------------------------------------------------------------------------------- */

/* One run of an HTML page. */
typedef struct mfu_report_html_run {
    const mfu_report *report; /* required */
    const char *name;         /* heading: the log's path or the run's name (NULL: "run") */
    const char *detail;       /* one line under it (format, lines read); NULL for none */
    const struct mfu_trace_view *trace; /* profiler traces of the run (mfu/trace.h); NULL none */
} mfu_report_html_run;

/* One self-contained HTML page for runs[0..n) (n >= 1) with the title given (NULL: "mfu
 * report"): per run a context card with the key figures and their intervals, MFU and tokens/s
 * (and the loss) over steps as inline SVG on aligned x axes with segment boundaries and findings
 * marked, the segments, each boundary's sentence with a waterfall of its terms and their
 * verdicts, the step-time histogram, the findings with evidence and next step, the framework's
 * figures beside mfu's recomputation, expectations and notes. No script and no external
 * resource; every text from the log or the caller is escaped. The same reports give the same
 * bytes. *out gets a NUL-terminated string the caller free()s (NULL on error). Errors:
 * MFU_E_INVALID (NULL out, n == 0, a run without a report), MFU_E_NOMEM (also past 256 MiB). */
MFU_API mfu_status mfu_report_html(const mfu_report_html_run *runs, size_t n, const char *title,
                                   char **out, mfu_error *err);

/* ---- export ------------------------------------------------------------------------------- */

/* The per-step series as CSV on out: one row per step, columns run (the given name, "" for
 * NULL), step, state (mfu_report_step_state_name), then step_time_s, tokens,
 * tokens_per_second, tokens_per_second_per_device, model_flops_per_second_per_device,
 * hardware_flops_per_second_per_device, mfu, hfu, reported_mfu,
 * reported_flops_per_second_per_device, reported_tokens_per_second, loss (the series names;
 * numbers in the fewest of 15-17 significant digits that read back exactly, an absent value as
 * an empty field, a loss the log printed as nan or inf as "nan", an infinite figure as "inf" or
 * "-inf"). header: write the
 * header line first (once per file when several runs share it). Errors: MFU_E_INVALID (NULL),
 * MFU_E_IO. */
MFU_API mfu_status mfu_report_write_csv(const mfu_report *r, const char *run, bool header,
                                        FILE *out, mfu_error *err);

/* Write the per-step series as a TensorBoard event file in dir (created when absent, with every
 * missing folder above it, as mkdir -p):
 * "events.out.tfevents.<the first step's start>.<host>.mfu", scalars tagged mfu/mfu, mfu/hfu,
 * mfu/tokens_per_second, mfu/model_flops_per_second_per_device, mfu/step_time_s,
 * mfu/reported_mfu, mfu/loss, mfu/seq_len and mfu/model_flops_per_token at each step (absent
 * values left out, a loss printed as nan written as NaN; float32 as TensorBoard keeps them).
 * Each event carries its step's wall time: the log's timestamp where the step has one, else the
 * step before's plus the step time x the steps between the two rows (before the first
 * timestamp: the one after less its step time); for a log without any timestamp, the last step
 * ends at wall_time_s (<= 0: now) and each earlier one a step time before the next. path (may
 * be NULL) gets the file's path. Errors: MFU_E_INVALID (NULL report, no dir), MFU_E_NOMEM,
 * MFU_E_IO (a folder that cannot be made, named in the message, or the file; a half-written
 * file is removed). */
MFU_API mfu_status mfu_report_write_tfevents(const mfu_report *r, const char *dir,
                                             double wall_time_s, char *path, size_t npath,
                                             mfu_error *err);

/* Stable names: "step_time_s", "tokens", "tokens_per_second", ... (docs/cli.md); "?" when out
 * of range. */
MFU_API const char *mfu_report_series_name(mfu_report_series s);
/* "steady", "warmup", "artifact", "impossible", "unusable". */
MFU_API const char *mfu_report_step_state_name(mfu_report_step_state s);
/* "flops_per_second_per_device", "mfu", "tokens_per_second". */
MFU_API const char *mfu_figure_name(mfu_figure f);
/* "none", "unexplained", "sparse_peak", ... (docs/cli.md). */
MFU_API const char *mfu_mismatch_name(mfu_mismatch m);
/* "none", "log", "input". */
MFU_API const char *mfu_report_source_name(mfu_report_source s);

/* The framework profiles mfu knows, by log format name (NULL past the end), including those of
 * formats this build cannot read yet. */
MFU_API const char *mfu_report_stack_name(size_t i);

#ifdef __cplusplus
}
#endif
#endif /* MFU_REPORT_H */
