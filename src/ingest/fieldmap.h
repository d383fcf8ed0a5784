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

/* The fields a map names: those of mfu_step whose map column (mfu/step_fields.h) is not NO,
 * in struct order, under their own names (MFU__F_STEP, ...); a SCOPED one twice, as the whole
 * job's (MFU__F_TOKENS_PER_S) and as one device's (MFU__F_TOKENS_PER_S_DEVICE, named
 * "tokens_per_s_device"); a DEVICE one (mfu) is per device. */
#define MFU__FIELDMAP_ENUM_PLAIN(NAME) MFU__F_##NAME,
#define MFU__FIELDMAP_ENUM_WHOLE(NAME) MFU__F_##NAME,
#define MFU__FIELDMAP_ENUM_SCOPED(NAME) MFU__F_##NAME, MFU__F_##NAME##_DEVICE,
#define MFU__FIELDMAP_ENUM_DEVICE(NAME) MFU__F_##NAME,
#define MFU__FIELDMAP_ENUM_NO(NAME)
#define MFU__FIELDMAP_ENUM(kind, name, NAME, arg, map, since, unit, what, help)                    \
    MFU__FIELDMAP_ENUM_##map(NAME)
typedef enum mfu__field { MFU_STEP_FIELDS(MFU__FIELDMAP_ENUM) MFU__F_COUNT } mfu__field;

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
