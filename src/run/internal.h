/*
 * run/internal.h - what other modules of the library may use of run.c beyond mfu/run.h.
 */
#ifndef MFU_RUN_INTERNAL_H
#define MFU_RUN_INTERNAL_H

#include "mfu/run.h"

/* The field of s that double column c holds (time_s for MFU_COL_TIME_S, ...). c must be a
 * column (below MFU_COL_COUNT_); s must not be NULL. */
double *mfu__step_field(mfu_step *s, mfu_column c);

/* Infinities are not values a run keeps: every infinite double column of s becomes absent
 * (NaN), and an infinite loss is flagged MFU_STEP_LOSS_NAN (ingest and the monitor both). */
void mfu__step_drop_inf(mfu_step *s);

#endif
