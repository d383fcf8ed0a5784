/*
 * run/step.h - what other modules of the library may use of the run module beyond mfu/run.h:
 * the step operations that ingest, the store, the server and the monitor share.
 */
#ifndef MFU_RUN_STEP_H
#define MFU_RUN_STEP_H

#include <math.h>
#include <stddef.h>

#include "mfu/run.h"

/* The field of s that double column c holds (time_s for MFU_COL_TIME_S, ...). c must be a
 * column (below MFU_COL_COUNT_); s must not be NULL. */
double *mfu__step_field(mfu_step *s, mfu_column c);

/* Whether a and b hold the same step: every field equal, a double equal to the bit except that
 * NaN (absent) equals NaN (so -0 and +0 differ). The store's resume check and the server's
 * change detection both ask this. */
bool mfu__step_equal(const mfu_step *a, const mfu_step *b);
/* The same for two per-rank observations. */
bool mfu__rank_obs_equal(const mfu_rank_obs *a, const mfu_rank_obs *b);

/* Named limits of plausible.c: the largest step number a run keeps (10^18: a step a
 * microsecond for 30,000 years) and the longest step time, seconds (7 days). */
#define MFU__RUN_MAX_STEP_NUMBER 1000000000000000000LL
#define MFU__RUN_MAX_STEP_TIME_S (7.0 * 86400.0)

/* The members of mfu_step (every field but the flag bits) by number, in MFU_STEP_FIELDS order:
 * MFU__MEMBER_STEP, MFU__MEMBER_TIME_S, ..., MFU__MEMBERS_ (how many). */
#define MFU__MEMBER_ENUM(kind, name, NAME, arg, map, since, unit, what, help)                      \
    MFU__STEP_IF_MEMBER_##kind(MFU__MEMBER_ENUM_1(NAME))
#define MFU__MEMBER_ENUM_1(NAME) MFU__MEMBER_##NAME,
enum { MFU_STEP_FIELDS(MFU__MEMBER_ENUM) MFU__MEMBERS_ };

/* n rows given as columns, for mfu__run_load: member m of row i is the value at
 * (const char *)at[m] + i * stride[m], in the member's own type and bytes (any alignment);
 * stride[m] 0 means every row holds the one value at at[m]. */
typedef struct mfu__run_cols {
    const void *at[MFU__MEMBERS_];
    size_t stride[MFU__MEMBERS_];
} mfu__run_cols;

/* Append rows 0..n-1 of *cols to run as whole columns: for the rows of a run that was stored
 * (mfu_store_get_run reads its column chunks so), which were checked and merged when they were
 * appended the first time. *taken true (MFU_OK): the run is what mfu_run_append of each row in
 * order would have made of it, every row a new one (no merge, no observation, the merge
 * counter as it was), each value's bits as given (the caller makes NaN the one NaN if it
 * wants) except, as in an append, that the rows before a column's first value read NaN, and
 * columns made when a row is the first to fill them. *taken false (MFU_OK): the rows
 * are not such rows and the run is unchanged; append them one by one. They are not when a
 * step number is not above the one before it (the run's last row's, then the previous
 * row's: a row could merge), when a value is one mfu_run_append refuses or changes (a step
 * number out of 0..10^18, an infinite double, a negative count, a step time over 7 days), or
 * when the run has no room for n more rows. Every column is checked before anything is
 * written. Errors: MFU_E_INVALID (run, cols or taken NULL), MFU_E_NOMEM (the rows are not
 * added; a column may have been made, holding absent values: readers see the run as it was). */
mfu_status mfu__run_load(mfu_run *run, const mfu__run_cols *cols, size_t n, bool *taken,
                         mfu_error *err);

/* The array of run that holds member m (an MFU__MEMBER_*) of every row, for a pass over all
 * rows that reads a few members of each (the figures: mfu_run_get would copy every member):
 * mfu_run_count(run) values of the member's kind as the run keeps them: int64_t (the step
 * number), double (the doubles), uint8_t (a scope: an mfu_scope), uint32_t (the flags),
 * int32_t (the rank), int8_t (a code: -1 unknown). NULL when the run keeps no array for it
 * (every row holds the member's absent value: NaN, scope unknown, flags 0, rank and codes -1),
 * for an empty run, and for m out of range. Owned by run, valid until the next append. */
const void *mfu__run_member(const mfu_run *run, int m);

/* Lay run's arrays but the step numbers out in ordinary pages from now on, however large
 * (arrays grown or made later; none of the 2 MiB layout above 1.5 MiB): for a run filled whole
 * at once from the store, where the kernel's zeroing of fresh 2 MiB pages cost a first series
 * request of the server 0.2 - 0.9 s on 10 million rows of one VM (docs/internals/store.md).
 * The step numbers keep the layout: a series request reads them at rows all over the run, and
 * in 4 KiB pages random half-run ranges at 20000 points took 15 - 35 % longer. NULL allowed. */
void mfu__run_plain_pages(mfu_run *run);

/* Whether *in may enter a run (plausible.c has the rules; mfu_run_append asks, once per
 * append). MFU_OK: *out is *in with its infinite optional figures made absent (NaN; an
 * infinite loss flagged MFU_STEP_LOSS_NAN). MFU_E_RANGE: the step is refused and err says
 * which value and why, in a phrase ("step number -1 is negative") a reader can append to a
 * file and line; *out is then untouched. in and out must not be NULL and may be equal. */
mfu_status mfu__step_plausible(const mfu_step *in, mfu_step *out, mfu_error *err);

/* Whether mfu__step_plausible would take *s as it is: every rule holds and no double is
 * infinite (nothing to drop). The cheap question, asked first by mfu__step_plausible and by
 * mfu_run_append (which then skips the copy); false says nothing about refusal. s must not be
 * NULL. */
bool mfu__step_plain(const mfu_step *s);

/* mfu_run_append, giving back the row the step went to: *at its index (the new last row, or
 * the row a repeat merged into) and *row that row as mfu_run_get reads it after the append
 * (the monitor writes and counts it without reading the run again). row and at must not be
 * NULL (MFU_E_INVALID); the other arguments and the errors are mfu_run_append's. */
mfu_status mfu__run_append_row(mfu_run *run, const mfu_step *in, mfu_step *row, size_t *at,
                               bool *merged, mfu_error *err);

/* The flags of run's rows (MFU_STEP_* bits, mfu_run_count entries), read in place: valid until
 * the run changes. NULL when no row has a flag (every row's are 0) or the run is empty. */
const uint32_t *mfu__run_flags(const mfu_run *run);

/* Free every column of run but the step numbers, for a reader that has taken what it needs
 * from them and frees the run next (mfu__report_compute_consume): afterwards every row reads
 * absent but its step number, the meta and per-rank observations are kept, and every append
 * is refused with MFU_E_LIMIT (a repeated step number too). NULL is ignored. */
void mfu__run_drop_columns(mfu_run *run);

/* Hand double column col of run (its array, mfu_run_count(run) rows valid, the caller's to
 * free with mfu__pages_free(p, *len): *len is its reserved mapping's length, 0 for a malloc'd
 * one, util/pages.h) to a reader that frees the run next and keeps what it read
 * (mfu__fcols_adopt): the run keeps no array for col afterwards (every row reads absent there),
 * and, as after mfu__run_drop_columns, every append is refused. NULL (and *len 0) when the run
 * has none (or run is NULL or col out of range). len must not be NULL. */
double *mfu__run_take_column(mfu_run *run, mfu_column col, size_t *len);

/* Hand run's step numbers (mfu_run_count(run) of them, the caller's to free with
 * mfu__pages_free(p, *len), as mfu__run_take_column) to a reader that frees the run next
 * (mfu__report_compute_consume): every column is dropped too and the run is left empty (no
 * rows; its meta and per-rank observations kept), only for mfu_run_free. NULL (and *len 0)
 * when run is NULL or holds no array. len must not be NULL. */
int64_t *mfu__run_take_steps(mfu_run *run, size_t *len);

static inline void mfu__inf_to_nan(double *v)
{
    if (isinf(*v))
        *v = NAN;
}

/* Infinities are not values a run keeps: every infinite double column of s becomes absent
 * (NaN), and an infinite double that a NANBIT marks (the loss) sets that bit
 * (MFU_STEP_LOSS_NAN; ingest and the monitor both). Inline and made of the fields by name
 * (mfu/step_fields.h): it runs for every step line, and a loop through the offset table in
 * run.c cost a tenth of a JSON-lines ingest. */
#define MFU__STEP_NANBIT_MARK_NANBIT(NAME, arg)                                                    \
    if (isinf(s->arg))                                                                             \
        s->flags |= MFU_STEP_##NAME;
#define MFU__STEP_NANBIT_MARK(kind, name, NAME, arg, map, since, unit, what, help)                 \
    MFU__STEP_IF_BIT_##kind(MFU__STEP_NANBIT_MARK_##kind(NAME, arg))
#define MFU__STEP_NANBIT_MARK_BIT(NAME, arg)
#define MFU__STEP_DROP_INF(kind, name, NAME, arg, map, since, unit, what, help)                    \
    MFU__STEP_IF_DOUBLE_##kind(mfu__inf_to_nan(&s->name);)
static inline void mfu__step_drop_inf(mfu_step *s)
{
    MFU_STEP_FIELDS(MFU__STEP_NANBIT_MARK)
    MFU_STEP_FIELDS(MFU__STEP_DROP_INF)
}

/* d, a double of s, was printed as nan or inf (and is made NaN by the caller): set the bit that
 * marks that double (a NANBIT of mfu/step_fields.h: the loss's MFU_STEP_LOSS_NAN), if one
 * does. For readers that see "nan" as text (the --map readers). */
#define MFU__STEP_MARK_NAN_NANBIT(NAME, arg)                                                       \
    if (d == &s->arg)                                                                              \
        s->flags |= MFU_STEP_##NAME;
#define MFU__STEP_MARK_NAN_BIT(NAME, arg)
#define MFU__STEP_MARK_NAN(kind, name, NAME, arg, map, since, unit, what, help)                    \
    MFU__STEP_IF_BIT_##kind(MFU__STEP_MARK_NAN_##kind(NAME, arg))
static inline void mfu__step_mark_nan(mfu_step *s, const double *d)
{
    MFU_STEP_FIELDS(MFU__STEP_MARK_NAN)
}

#endif
