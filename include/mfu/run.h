/*
 * mfu/run.h - a training run: a columnar table of step records plus run metadata.
 *
 * A run is what every later stage (analysis, report, store) reads. Ingest fills it from a log;
 * the in-process API can fill it directly. Each record keeps what the log said, normalised to
 * base units: seconds, FLOP/s, bytes, ratios as fractions 0..1. A double that the log did not
 * give is NaN ("absent"); the flags say when a value was printed but is not a number
 * (MFU_STEP_LOSS_NAN) or was a sentinel (MFU_STEP_MFU_SENTINEL).
 *
 * Figures the framework printed about itself (its tokens/s, TFLOP/s and MFU) are kept raw,
 * each with its scope (per device or global), so that a report can compare them with its own
 * recomputation later. Nothing here recomputes anything.
 *
 * Repeated steps: several ranks often print the same step. mfu_run_append() merges a record
 * whose step number repeats a recent one (see MFU_RUN_DEDUP_WINDOW) into the existing row
 * instead of adding a row, filling only the fields that row lacks. It looks back past rows
 * with higher step numbers only as far as a lagging rank explains them: any number of rows of
 * other known ranks, or a single row when ranks are unknown. Any other step number that goes
 * back (a restarted run) is never merged: it starts a new row. Limit: without rank prefixes, a
 * restart that goes back exactly one logged step merges its first record into that step.
 *
 * Ownership and errors follow common.h. A run is used by one thread at a time.
 */
#ifndef MFU_RUN_H
#define MFU_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mfu/common.h"
#include "mfu/step_fields.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most rows a run holds (a named limit: appending beyond it fails with MFU_E_LIMIT).
 * 10 million steps is ~1.9 GB of columns; a run may set a lower limit. */
#define MFU_RUN_MAX_STEPS 10000000L

/* How many of the most recent rows mfu_run_append() searches for a repeated step number. */
#define MFU_RUN_DEDUP_WINDOW 64

/* Who a figure is about: one device, or the whole job. */
typedef enum mfu_scope {
    MFU_SCOPE_UNKNOWN = 0,
    MFU_SCOPE_DEVICE = 1, /* per GPU / per chip / per rank */
    MFU_SCOPE_GLOBAL = 2  /* all devices together */
} mfu_scope;

/* Step flags (bit set; MFU_STEP_SKIPPED, MFU_STEP_LOSS_NAN, MFU_STEP_MFU_SENTINEL,
 * MFU_STEP_TOKENS_DERIVED, ...: the BIT entries of mfu/step_fields.h, each with its meaning).
 * Only ever appended to. */
enum { MFU_STEP_FIELDS(MFU__STEP_BITNO) MFU__STEP_BITS_ };
enum { MFU_STEP_FIELDS(MFU__STEP_BIT) MFU__STEP_BITS_END_ };

/* One step record. Its members are the fields of MFU_STEP_FIELDS (mfu/step_fields.h), in that
 * order, each with its type, units and meaning there: step (int64_t), the doubles time_s,
 * step_time_s, tokens, ... (NaN when absent), the scopes of the framework's own figures
 * (tokens_per_s_scope, ...), flags, rank (-1 unknown), then the per-step configuration and
 * telemetry (seq_len, devices, ..., recompute and dtype codes, -1 unknown).
 *
 * Figures the framework printed about itself (tokens_per_s, flops_per_s, mfu, samples_per_s)
 * keep their scope (per device or global). The per-step configuration and telemetry are what
 * the log prints per step (canonical JSON-lines, Megatron's timers and power,
 * Megatron-DeepSpeed's actual seqlen): they let the analysis see a change inside a run; NaN
 * (codes -1) = not printed for this step, the run's header (and the caller's flags) apply. */
typedef struct mfu_step {
    MFU_STEP_FIELDS(MFU__STEP_MEMBER)
} mfu_step;

/* Set every double of *s to NaN, scopes to unknown, flags to 0, step to 0, and rank,
 * recompute and dtype to -1. s must not be NULL. */
MFU_API void mfu_step_init(mfu_step *s);

/* What the log's header (argument dump, banner, config) said about the run. Integers are 0
 * and strings "" when unknown; doubles are NaN when unknown. */
#define MFU_META_STR 128
typedef struct mfu_run_meta {
    char format[32];                  /* ingest format name ("megatron", "nanogpt", ...) */
    char model[MFU_META_STR];         /* model description as printed ("GPT-2 1558M", ...) */
    double model_params;              /* parameter count as printed */
    int64_t global_batch;             /* sequences per step, whole job */
    int64_t micro_batch;              /* sequences per device per micro-step */
    int64_t seq_len;                  /* tokens per sequence */
    int64_t world_size;               /* devices (ranks) in the job */
    int64_t grad_accum;               /* micro-steps per step */
    char device[MFU_META_STR];        /* GPU / accelerator name as printed */
    char dtype[32];                   /* precision ("bf16", "fp16", "fp8", ...) */
    double tokens_per_step;           /* tokens per step, whole job, as printed or batch x seq */
    char convention[MFU_META_STR];    /* how the framework computes its own figures, in words */
    double reported_peak_flops_per_s; /* the peak the framework divides by for its MFU */
} mfu_run_meta;

/* Counters a run keeps about what was appended to it. */
typedef struct mfu_run_counts {
    size_t rows;             /* rows in the table */
    size_t merged;           /* appends merged into an existing row (repeated steps) */
    size_t rank_obs;         /* per-rank observations kept (mfu_run_rank_obs_get) */
    size_t rank_obs_dropped; /* per-rank observations beyond MFU_RUN_MAX_RANK_OBS */
} mfu_run_counts;

/* Per-rank observations. When a step printed by one rank merges into a row that another known
 * rank printed first, the row keeps the first rank's values; the second rank's own step time
 * and tokens/s are kept here, so that a slow rank (a straggler) can still be seen. At most
 * MFU_RUN_MAX_RANK_OBS are kept; later ones are counted in rank_obs_dropped. */
#define MFU_RUN_MAX_RANK_OBS 10000000L
typedef struct mfu_rank_obs {
    size_t row;          /* the row of the run it belongs to */
    int64_t step;        /* that row's step number */
    int32_t rank;        /* the rank that printed it (>= 0) */
    double step_time_s;  /* that rank's step time (NaN absent) */
    double tokens_per_s; /* that rank's tokens/s as printed (scope of the row's figure) */
} mfu_rank_obs;

typedef struct mfu_run mfu_run;

/* Column selectors for mfu_run_column(): one per double of mfu_step, in struct order
 * (MFU_COL_TIME_S = 0, MFU_COL_STEP_TIME_S, ..., MFU_COL_OPTIMIZER_S). */
typedef enum mfu_column {
    MFU_STEP_FIELDS(MFU__STEP_COLUMN) MFU_COL_COUNT_ /* number of double columns; not a column */
} mfu_column;

/* A new empty run (metadata unknown, limit MFU_RUN_MAX_STEPS). NULL when out of memory.
 * Free with mfu_run_free(). */
MFU_API mfu_run *mfu_run_new(void);

/* Free a run and everything it owns. NULL is allowed. */
MFU_API void mfu_run_free(mfu_run *run);

/* Lower the row limit of run to max_steps (1..MFU_RUN_MAX_STEPS). Returns MFU_E_INVALID when
 * max_steps is out of that range or below the rows already held. */
MFU_API mfu_status mfu_run_set_max_steps(mfu_run *run, size_t max_steps, mfu_error *err);

/* Append a copy of *s, or merge it into a recent row with the same step number (see the file
 * comment). *merged (may be NULL) says which happened. Infinite figures are kept as absent.
 * Errors: MFU_E_INVALID (NULL run or s), MFU_E_RANGE (a value no measurement can have: a
 * negative or huge step number, a negative, infinite or week-long step time, a negative count
 * or rate; docs/internals/plausible.md; the message names it; the run is unchanged),
 * MFU_E_LIMIT (the row limit is reached; the run is unchanged), MFU_E_NOMEM (the run is
 * unchanged). */
MFU_API mfu_status mfu_run_append(mfu_run *run, const mfu_step *s, bool *merged, mfu_error *err);

/* Make room for rows rows (at most the row limit) so that appending up to that many does not
 * reallocate the columns: for a filler that knows about how many steps are coming (ingest
 * estimates it from the size of the file). A capacity hint only: rows below the capacity
 * already held do nothing, and nothing readers see changes. Errors: MFU_E_INVALID (NULL run),
 * MFU_E_NOMEM (the run is unchanged and still usable). */
MFU_API mfu_status mfu_run_reserve(mfu_run *run, size_t rows, mfu_error *err);

/* Number of rows. 0 for NULL. */
MFU_API size_t mfu_run_count(const mfu_run *run);

/* Copy row i into *out. Returns false (and leaves *out) when run is NULL or i is out of range. */
MFU_API bool mfu_run_get(const mfu_run *run, size_t i, mfu_step *out);

/* The step numbers, one per row (mfu_run_count() entries), owned by run; valid until the next
 * append. NULL for an empty run. */
MFU_API const int64_t *mfu_run_steps(const mfu_run *run);

/* One double column (mfu_run_count() entries), owned by run, valid until the next append.
 * NULL for an empty run, an out-of-range column, or a column that no row has a value in (every
 * row NaN: the log never printed that field; the run keeps no array for it). Callers read
 * NULL as "NaN in every row". */
MFU_API const double *mfu_run_column(const mfu_run *run, mfu_column col);

/* The run's metadata, owned by run (never NULL for a non-NULL run). The mutable form is for
 * whoever fills the run (ingest, in-process API). */
MFU_API const mfu_run_meta *mfu_run_meta_get(const mfu_run *run);
MFU_API mfu_run_meta *mfu_run_meta_mut(mfu_run *run);

/* Number of per-rank observations kept; 0 for NULL. */
MFU_API size_t mfu_run_rank_obs_count(const mfu_run *run);

/* Copy observation i (in the order appended) into *out. false (and *out untouched) when run or
 * out is NULL or i is out of range. */
MFU_API bool mfu_run_rank_obs_get(const mfu_run *run, size_t i, mfu_rank_obs *out);

/* Append a per-rank observation of an existing row directly (readers of mfu's canonical
 * JSON-lines restore them so; obs->step is taken from the row). Errors: MFU_E_INVALID (NULL run
 * or obs, rank < 0, row out of range), MFU_E_NOMEM. Past MFU_RUN_MAX_RANK_OBS the observation
 * is dropped and counted, and MFU_OK returned. */
MFU_API mfu_status mfu_run_rank_obs_append(mfu_run *run, const mfu_rank_obs *obs, mfu_error *err);

/* Counters of appends and merges. Zeroes for NULL. */
MFU_API mfu_run_counts mfu_run_get_counts(const mfu_run *run);

/* "device", "global" or "unknown". Never NULL. */
MFU_API const char *mfu_scope_name(mfu_scope s);

/* The kinds of the fields of mfu_step (the kind column of mfu/step_fields.h). */
typedef enum mfu_step_kind {
    MFU_STEP_KIND_STEP = 0, /* int64_t step number */
    MFU_STEP_KIND_DOUBLE,   /* double, NaN when absent */
    MFU_STEP_KIND_SCOPE,    /* mfu_scope (an int) of the double before it */
    MFU_STEP_KIND_FLAGS,    /* uint32_t, MFU_STEP_* bits */
    MFU_STEP_KIND_RANK,     /* int32_t, -1 unknown */
    MFU_STEP_KIND_CODE,     /* int32_t code, -1 unknown */
    MFU_STEP_KIND_BIT,      /* one bit of flags; no member of its own */
    MFU_STEP_KIND_NANBIT    /* a bit of flags that marks a double printed as nan or inf */
} mfu_step_kind;

/* One field of mfu_step, for bindings and tools that read the struct without its header (the
 * Python binding lays its mirror out from these). Strings are static. */
typedef struct mfu_step_field_info {
    const char *name;   /* member, canonical JSON key, store column, --map field ("tokens") */
    mfu_step_kind kind; /* what it is */
    size_t offset;      /* offsetof(mfu_step, member); for a bit, that of flags */
    size_t size;        /* sizeof the member; for a bit, that of flags */
    uint32_t bit;       /* for a bit, its MFU_STEP_* value; else 0 */
    const char *unit;   /* the unit a message prints after a value ("s", "W", "" for none) */
    const char *what;   /* the value in words ("token count") */
    const char *help;   /* what it is, with its units */
} mfu_step_field_info;

/* Number of fields of mfu_step (members and flag bits), the entries of MFU_STEP_FIELDS. */
MFU_API size_t mfu_step_field_count(void);

/* Field i (0 .. mfu_step_field_count() - 1, in struct order, the bits after rank), static;
 * NULL out of range. Thread-safe. */
MFU_API const mfu_step_field_info *mfu_step_field_at(size_t i);

#ifdef __cplusplus
}
#endif
#endif /* MFU_RUN_H */
