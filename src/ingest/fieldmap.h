/*
 * ingest/fieldmap.h - the user's mapping from step fields to columns / keys, shared by the
 * generic jsonl and csv formats (`--map step=iter,step_time_s=dt_ms*0.001`).
 *
 * A map entry is "FIELD=COLUMN" or "FIELD=COLUMN*FACTOR" (the value is multiplied by FACTOR,
 * e.g. ms -> s with *0.001); an entry may hold several pairs separated by commas. FIELD is
 * one of the names in mfu__fieldmap_field_name(). A field the user did not map is looked up
 * under its own name and a few common aliases (step: iter, iteration, global_step, ...).
 */
#ifndef MFU_INGEST_FIELDMAP_H
#define MFU_INGEST_FIELDMAP_H

#include "ingest/format.h"

typedef enum mfu__field {
    MFU__F_STEP = 0,
    MFU__F_TIME_S,
    MFU__F_STEP_TIME_S,
    MFU__F_TOKENS,
    MFU__F_SAMPLES,
    MFU__F_LOSS,
    MFU__F_LR,
    MFU__F_GRAD_NORM,
    MFU__F_MEMORY_BYTES,
    MFU__F_TOKENS_PER_S,        /* global */
    MFU__F_TOKENS_PER_S_DEVICE, /* per device */
    MFU__F_FLOPS_PER_S,
    MFU__F_FLOPS_PER_S_DEVICE,
    MFU__F_MFU, /* per device, fraction */
    MFU__F_SAMPLES_PER_S,
    MFU__F_SAMPLES_PER_S_DEVICE,
    MFU__F_RANK,
    MFU__F_SEQ_LEN, /* per-step configuration and telemetry (mfu_step) */
    MFU__F_DEVICES,
    MFU__F_USEFUL_TOKENS,
    MFU__F_CLOCK_MHZ,
    MFU__F_POWER_W,
    MFU__F_POWER_LIMIT_W,
    MFU__F_DATA_LOADING_S,
    MFU__F_COMM_S,
    MFU__F_OPTIMIZER_S,
    MFU__F_COUNT
} mfu__field;

#define MFU__FIELDMAP_COLUMN 128
#define MFU__FIELDMAP_MAX_ALIASES 8

typedef struct mfu__fieldmap {
    char column[MFU__F_COUNT][MFU__FIELDMAP_COLUMN]; /* "" = not mapped by the user */
    double factor[MFU__F_COUNT];                     /* 1 unless "*FACTOR" was given */
} mfu__fieldmap;

/* Parse the map entries into fm. Errors: MFU_E_INVALID with the bad entry named and the list
 * of fields. */
mfu_status mfu__fieldmap_parse(mfu__fieldmap *fm, const char *const *map, size_t n, mfu_error *err);

/* The field's name as written in a map ("step_time_s"). */
const char *mfu__fieldmap_field_name(mfu__field f);

/* The keys to try for field f, best first: the user's column, or the field's own name and its
 * aliases. Returns how many were written to out (at most max). */
size_t mfu__fieldmap_candidates(const mfu__fieldmap *fm, mfu__field f, const char **out,
                                size_t max);

/* Store number n (already normalised by its unit suffix, if any) of field f into *s, applying
 * the factor and the field's scope; a nan/inf loss sets MFU_STEP_LOSS_NAN. Returns false (and
 * stores nothing) for N/A, and for a step or rank that is not a finite integer in range. */
bool mfu__fieldmap_store(const mfu__fieldmap *fm, mfu__field f, const mfu__num *n, mfu_step *s);

#endif
