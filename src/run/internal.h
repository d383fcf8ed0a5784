/*
 * run/internal.h - what other modules of the library may use of run.c beyond mfu/run.h.
 */
#ifndef MFU_RUN_INTERNAL_H
#define MFU_RUN_INTERNAL_H

#include "mfu/run.h"

/* The field of s that double column c holds (time_s for MFU_COL_TIME_S, ...). c must be a
 * column (below MFU_COL_COUNT_); s must not be NULL. */
double *mfu__step_field(mfu_step *s, mfu_column c);

#endif
