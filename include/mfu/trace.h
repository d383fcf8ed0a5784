/*
 * mfu/trace.h - profiler traces: where each step's GPU time went, and what it cost in MFU.
 *
 * A trace is a PyTorch profiler (Kineto) Chrome-trace JSON file of one rank, plain, gzip or
 * zstd. It is read in one streaming pass with bounded memory: the document is never held; what
 * is kept is a compact record per GPU activity (about 48 bytes), one per runtime launch (16
 * bytes), the ProfilerStep windows, and the distinct kernel names (docs/internals/trace.md).
 *
 *   - Steps are the `ProfilerStep#N` windows of the CPU timeline. A GPU activity (kernel,
 *     gpu_memcpy, gpu_memset) belongs to the step whose window contains the runtime call that
 *     launched it (args.correlation of the activity = args.correlation of the cuda_runtime /
 *     cuda_driver event, or the id of an ac2g flow start); one without a launch event in the
 *     trace goes to the step whose GPU span it starts in (mfu_trace_options.launched_only
 *     leaves it out). A step's GPU span runs from its first activity's start to its last
 *     activity's end; its step time is that span.
 *   - Each step's span, and the rank's profiled window (first step's first activity to last
 *     step's last one: the totals), is split into disjoint parts that sum to it exactly
 *     (integer nanoseconds): at every instant the highest of compute > communication > memory
 *     copy > idle that a step activity of the rank is running decides the part (so idle is
 *     GPU idle, also where two steps' spans overlap); compute is split into matmul >
 *     attention > other the same way. Communication that runs while compute runs is
 *     "overlapped" (a part of compute's time, reported beside); the rest is "exposed". Kernel
 *     classes come from names (mfu_trace_classify; rules in docs/internals/trace.md).
 *   - Across ranks: rank checks (duplicates, missing ranks of the world size), the straggler
 *     (the rank whose compute is longest and the collective wait it causes on the others).
 *   - The MFU waterfall: 100 points of peak, less the points lost to idle, exposed
 *     communication, memory copies, non-matmul compute and matmul kernels running below peak,
 *     is the achieved MFU. The MFU itself comes from a report (mfu/report.h) of the same run:
 *     of its log, or of the run mfu_trace_to_run() makes from the traces' steps.
 *
 * Units: seconds, FLOPs, FLOP/s; shares are fractions; waterfall figures are points (0..100).
 * Ownership and errors follow common.h. Thread safety: re-entrant; a trace is used by one
 * thread at a time (reading it from several threads at once is safe once it is made).
 */
#ifndef MFU_TRACE_H
#define MFU_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mfu/common.h"
#include "mfu/report.h"
#include "mfu/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- limits ------------------------------------------------------------------------------- */

#define MFU_TRACE_MAX_ACTIVITIES 16000000L /* GPU activities one trace may hold (~770 MB) */
#define MFU_TRACE_MAX_LAUNCHES 32000000L   /* runtime launches (correlation ids) */
#define MFU_TRACE_MAX_STEPS 1000000L       /* ProfilerStep windows */
#define MFU_TRACE_MAX_NAMES 1000000L       /* distinct kernel names */
#define MFU_TRACE_MAX_STRING 65536         /* bytes of one JSON string kept (longer: cut) */
#define MFU_TRACE_MAX_DEPTH 64             /* nesting of JSON arrays and objects */
#define MFU_TRACE_MAX_RANKS 4096           /* traces in one set */

/* ---- classes and parts ---------------------------------------------------------------------- */

/* What a GPU activity is, from its category and kernel name (mfu_trace_classify). */
typedef enum mfu_trace_class {
    MFU_TRACE_CLASS_MATMUL = 0,        /* GEMM / GEMV kernels: cuBLAS, CUTLASS, Tensile, ... */
    MFU_TRACE_CLASS_ATTENTION = 1,     /* fused attention: flash, fmha, efficient attention */
    MFU_TRACE_CLASS_OTHER = 2,         /* every other compute kernel (elementwise, norms, ...) */
    MFU_TRACE_CLASS_COMMUNICATION = 3, /* collectives: NCCL, RCCL, MSCCL, HCCL kernels */
    MFU_TRACE_CLASS_MEMCPY = 4,        /* gpu_memcpy, gpu_memset, Memcpy/Memset/dma kernels */
    MFU_TRACE_CLASS_COUNT_ = 5
} mfu_trace_class;

/* The disjoint parts of a step's span (they sum to it). */
typedef enum mfu_trace_part {
    MFU_TRACE_MATMUL = 0,       /* a matmul kernel runs */
    MFU_TRACE_ATTENTION = 1,    /* no matmul; an attention kernel runs */
    MFU_TRACE_OTHER = 2,        /* no matmul or attention; another compute kernel runs */
    MFU_TRACE_COMM_EXPOSED = 3, /* no compute; a communication kernel runs */
    MFU_TRACE_MEMCPY = 4,       /* no compute or communication; a copy or memset runs */
    MFU_TRACE_IDLE = 5,         /* nothing of the step runs */
    MFU_TRACE_PARTS_ = 6
} mfu_trace_part;

/* A span and its parts, seconds. */
typedef struct mfu_trace_breakdown {
    double span_s;                     /* first activity's start to last activity's end */
    double part_s[MFU_TRACE_PARTS_];   /* disjoint; sum == span_s */
    double compute_s;                  /* matmul + attention + other */
    double communication_overlapped_s; /* communication under compute (inside compute_s) */
} mfu_trace_breakdown;

/* One ProfilerStep window of one rank. */
typedef struct mfu_trace_step {
    int64_t step;        /* N of ProfilerStep#N */
    double cpu_start_s;  /* the window on the CPU timeline: start (trace clock, s) */
    double cpu_s;        /* and duration */
    double gpu_start_s;  /* first activity's start (trace clock, s); NaN without activity */
    double gpu_offset_s; /* the same from the rank's first step activity (exact); NaN without */
    double step_time_s;  /* the GPU span (0 without activity) */
    double interval_s;   /* from its first activity's start to the next step's (in GPU time
                            order); the last step's: its span. What a training log's step time
                            measures; the intervals of a rank tile its window. 0 without
                            activity */
    size_t activities;   /* GPU activities launched in the window */
    mfu_trace_breakdown breakdown;
} mfu_trace_step;

/* One kernel name of a trace, summed over the activities attributed to steps. */
typedef struct mfu_trace_kernel {
    const char *name; /* owned by the trace (cut at MFU_TRACE_MAX_STRING bytes) */
    mfu_trace_class cls;
    size_t count;
    double time_s;       /* sum of durations */
    double flops;        /* FLOPs of the launching ops' recorded shapes; NaN when none */
    double flops_time_s; /* time of the activities those FLOPs belong to */
    double flops_per_s;  /* flops / flops_time_s; NaN when no shape was recorded */
} mfu_trace_kernel;

/* What reading saw. */
typedef struct mfu_trace_counts {
    size_t events;         /* trace events read */
    size_t activities;     /* GPU activities (kernel, gpu_memcpy, gpu_memset) */
    size_t attributed;     /* activities that belong to a step */
    size_t placed_by_time; /* of those, without a launch event in the trace (CUDA graphs,
                              launches the profiler left out): placed in the step whose GPU
                              span they start in */
    size_t no_launch;      /* activities without a launch event, outside every step's span */
    size_t outside;        /* activities launched outside every ProfilerStep window */
    size_t launches;       /* runtime launches seen (correlation ids) */
    size_t shaped_ops;     /* matmul ops with recorded shapes (aten::mm, addmm, bmm, ...) */
    size_t cut_strings;    /* strings longer than MFU_TRACE_MAX_STRING (cut) */
    size_t bytes;          /* decoded bytes of the document */
    size_t held_bytes;     /* the most memory the reader held at once (its own structures) */
} mfu_trace_counts;

/* ---- reading -------------------------------------------------------------------------------- */

typedef struct mfu_trace mfu_trace;

/* Options of reading; zero-initialised = the defaults. */
typedef struct mfu_trace_options {
    size_t max_activities; /* 0 = MFU_TRACE_MAX_ACTIVITIES (a lower limit for tests) */
    bool launched_only;    /* leave out the activities without a launch event instead of
                              placing them by GPU time (what Holistic Trace Analysis does) */
} mfu_trace_options;

/* Read one rank's trace from path ("-" = stdin), f (not closed) or data[0..n) (not kept).
 * name (may be NULL) is what the trace is called in its notes. opts may be NULL. *out is NULL
 * on error. Errors (message says what was expected, with the JSON line and column in err):
 * MFU_E_IO (cannot open or read; corrupt or truncated gzip/zstd), MFU_E_PARSE (not JSON, JSON
 * that ends early, not a Chrome trace: neither an object with "traceEvents" nor an array of
 * events), MFU_E_EMPTY (no trace event at all; no ProfilerStep#N window; CPU-only: no GPU
 * activity; no activity launched inside a window), MFU_E_LIMIT (a limit above, named),
 * MFU_E_NOMEM. */
MFU_API mfu_status mfu_trace_read_path(const char *path, const mfu_trace_options *opts,
                                       mfu_trace **out, mfu_error *err);
MFU_API mfu_status mfu_trace_read_file(FILE *f, const char *name, const mfu_trace_options *opts,
                                       mfu_trace **out, mfu_error *err);
MFU_API mfu_status mfu_trace_read_mem(const void *data, size_t n, const char *name,
                                      const mfu_trace_options *opts, mfu_trace **out,
                                      mfu_error *err);

/* Free a trace; NULL is allowed. */
MFU_API void mfu_trace_free(mfu_trace *t);

/* The name it was read with ("" when none). */
MFU_API const char *mfu_trace_name(const mfu_trace *t);
/* distributedInfo.rank and .world_size; -1 when the trace does not say. */
MFU_API int64_t mfu_trace_rank(const mfu_trace *t);
MFU_API int64_t mfu_trace_world_size(const mfu_trace *t);
/* deviceProperties' name of the device the activities ran on ("" when unknown). */
MFU_API const char *mfu_trace_device(const mfu_trace *t);
/* Steps in step-number order: count, and step i (NULL out of range). */
MFU_API size_t mfu_trace_step_count(const mfu_trace *t);
MFU_API const mfu_trace_step *mfu_trace_step_at(const mfu_trace *t, size_t i);
/* The breakdown of the rank's profiled window, from its first step's first activity to its
 * last step's last one, each instant counted once (zeroes for NULL). */
MFU_API mfu_trace_breakdown mfu_trace_total(const mfu_trace *t);
/* Kernel names by time, longest first: count, and entry i (NULL out of range). */
MFU_API size_t mfu_trace_kernel_count(const mfu_trace *t);
MFU_API const mfu_trace_kernel *mfu_trace_kernel_at(const mfu_trace *t, size_t i);
/* What reading saw (zeroes for NULL). */
MFU_API mfu_trace_counts mfu_trace_get_counts(const mfu_trace *t);

/* The class of an activity of category cat ("kernel", "gpu_memcpy", "gpu_memset") named name.
 * The rules, in order, on the name without its parameter list (ASCII case-insensitive): a
 * copy category or a name starting Memcpy/Memset/dma is MEMCPY; a name holding nccl, rccl,
 * msccl or hccl is COMMUNICATION; flash, fmha, attention, attn or sdpa is ATTENTION; gemm
 * (not FBGEMM's), gemv, cublas, cutlass, xmma, wgmma, Cijk_ (Tensile) or a Triton matmul
 * template (triton_tem_fused_mm, triton_mm, _mm_kernel) is MATMUL; anything else is OTHER. */
MFU_API mfu_trace_class mfu_trace_classify(const char *cat, const char *name);

/* Stable names: "matmul", "attention", "other", "communication", "memcpy"; "?" out of range. */
MFU_API const char *mfu_trace_class_name(mfu_trace_class c);
/* JSON keys of the parts: "matmul_s", "attention_s", "other_s", "communication_exposed_s",
 * "memcpy_s", "idle_s"; "?" out of range. */
MFU_API const char *mfu_trace_part_name(mfu_trace_part p);

/* ---- sets of ranks -------------------------------------------------------------------------- */

#define MFU_TRACE_MISSING_LISTED 8

/* What the ranks of a set say about each other. */
typedef struct mfu_trace_ranks {
    int64_t world_size;                             /* the traces' world size; -1 when none says */
    size_t missing;                                 /* ranks below world_size without a trace */
    int64_t missing_rank[MFU_TRACE_MISSING_LISTED]; /* the first of them */
} mfu_trace_ranks;

/* Check that traces[0..n) can be ranks of one run: every trace names its rank when n > 1,
 * no rank twice, one world size, ranks below it. Missing ranks are not an error: *out lists
 * them (the straggler and waterfall are then of the ranks given). Errors: MFU_E_INVALID
 * (n == 0, NULL; a trace without a rank in a set; a rank twice: the message names both files
 * and says that two runs are compared with `mfu trace --compare A B`; two world sizes; a rank
 * outside the world size). */
MFU_API mfu_status mfu_trace_check_ranks(const mfu_trace *const *traces, size_t n,
                                         mfu_trace_ranks *out, mfu_error *err);

/* The straggler of a set: over the steps every rank has, the rank whose mean compute per step
 * is longest, and the wait it causes: the others' exposed communication beyond its own. */
typedef struct mfu_trace_straggler {
    bool found;              /* n >= 2 and at least one step is common to every rank */
    int64_t rank;            /* the straggler's rank */
    size_t index;            /* its index in the set */
    size_t steps;            /* steps common to every rank */
    double compute_s;        /* its mean compute per step */
    double median_compute_s; /* median over the ranks of their mean compute per step */
    double excess;           /* compute_s / median_compute_s - 1 */
    double wait_s;           /* mean over the other ranks of (their exposed communication per
                                step - the straggler's), at least 0 */
    double wait_points;      /* wait_s over the others' mean step time, in points (0..100) */
} mfu_trace_straggler;

/* Find the straggler of traces[0..n) (which mfu_trace_check_ranks accepted). Never fails:
 * out->found is false when there is none to find. */
MFU_API void mfu_trace_find_straggler(const mfu_trace *const *traces, size_t n,
                                      mfu_trace_straggler *out);

/* The sum over the ranks of their totals, and the steps (rank-steps) it covers. */
MFU_API mfu_trace_breakdown mfu_trace_set_total(const mfu_trace *const *traces, size_t n,
                                                size_t *rank_steps);

/* A run (mfu/run.h) of the set's steps, for mfu_report_compute: one row per step number, its
 * step time the mean interval_s over the ranks that have it (steps without activity are left
 * out), so that the run's time is the windows' the waterfall's shares are of; metadata: format
 * "kineto", the device of the first trace that names one, the world size (else n). Errors:
 * MFU_E_INVALID, MFU_E_EMPTY (no step with activity), MFU_E_NOMEM. */
MFU_API mfu_status mfu_trace_to_run(const mfu_trace *const *traces, size_t n, mfu_run **out,
                                    mfu_error *err);

/* ---- the MFU waterfall ---------------------------------------------------------------------- */

/* Where the missing MFU went, in points of peak. Matmul time is the time matmul and attention
 * kernels run (both do the model's matrix math); non-matmul compute is the other compute. */
typedef struct mfu_trace_waterfall {
    double mfu;               /* the achieved MFU given (fraction) */
    double idle;              /* points lost: idle share x 100 */
    double communication;     /* exposed communication */
    double memcpy;            /* memory copies and sets */
    double non_matmul;        /* other compute */
    double matmul_below_peak; /* matmul time share x 100 - MFU x 100 (negative when the MFU
                                 given is above what the matmul time allows: see notes) */
    double matmul_share;      /* (matmul + attention) / span */
    double step_time_s;       /* mean GPU span per rank-step */
} mfu_trace_waterfall;

/* The waterfall of a total (mfu_trace_set_total over rank_steps) at achieved MFU mfu
 * (0 < mfu, finite). idle + communication + memcpy + non_matmul + matmul_below_peak equals
 * 100 - 100 x mfu (rounding only). Errors: MFU_E_INVALID (NULL, mfu not finite or <= 0, a
 * total without span). */
MFU_API mfu_status mfu_trace_waterfall_compute(const mfu_trace_breakdown *total, size_t rank_steps,
                                               double mfu, mfu_trace_waterfall *out,
                                               mfu_error *err);

/* ---- the views ------------------------------------------------------------------------------ */

/* Everything the views of a set show (mfu trace's table and JSON, the HTML report's trace
 * section, the dashboard's panel), computed once by mfu_trace_view_make. */
typedef struct mfu_trace_view {
    const mfu_trace *const *traces; /* borrowed: must outlive the view */
    size_t n;
    mfu_trace_ranks ranks;
    mfu_trace_straggler straggler;
    bool has_waterfall;                /* an MFU was known */
    mfu_trace_waterfall waterfall;     /* when has_waterfall */
    char mfu_source[160];              /* where the MFU came from, in words ("" without) */
    double peak_flops_per_s;           /* the device's dense peak (NaN unknown): kernels' share */
    char missing[MFU_REPORT_TEXT_MAX]; /* without a waterfall: what would add it */
} mfu_trace_view;

/* Check the ranks of traces[0..n), find the straggler, and, when report (may be NULL) has a
 * steady median MFU, the waterfall at that MFU; source says where the report came from ("mfu
 * report of run.log"). The view borrows traces. Errors: those of mfu_trace_check_ranks. */
MFU_API mfu_status mfu_trace_view_make(const mfu_trace *const *traces, size_t n,
                                       const mfu_report *report, const char *source,
                                       mfu_trace_view *out, mfu_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MFU_TRACE_H */
