/*
 * figures/energy.h - energy beside utilization: the one place where joules, useful FLOPs and
 * tokens are put together (src/figures/energy.c, docs/internals/figures.md "Energy").
 *
 * Units: a step's energy is one device's, J (energy_j of mfu/step_fields.h, or power_w, W,
 * times the step time, s); FLOPs are useful model FLOPs (the MFU numerator, padding excluded);
 * joules per PFLOP = J / (FLOPs / 1e15); tokens per kWh = tokens / (J / 3.6e6). Pure
 * functions, no state.
 */
#ifndef MFU_FIGURES_ENERGY_H
#define MFU_FIGURES_ENERGY_H

#include <stdbool.h>
#include <stddef.h>

#include "mfu/report.h"

#define MFU__JOULES_PER_KWH 3.6e6
#define MFU__FLOPS_PER_PFLOP 1e15

/* The energy one device used in a step, J: energy_j when it is finite and >= 0; else power_w x
 * step_time_s when both are finite, power >= 0 and time > 0; else NaN. *from_power (may be
 * NULL) says which. */
double mfu__energy_step_j(double energy_j, double power_w, double step_time_s, bool *from_power);

/* joules / (flops / 1e15); NaN unless joules >= 0 and flops > 0 (both finite). */
double mfu__joules_per_pflop(double joules, double flops);

/* tokens / (joules / 3.6e6); NaN unless tokens >= 0 and joules > 0 (both finite). */
double mfu__tokens_per_kwh(double tokens, double joules);

/* The cross-check of an MFU with a tensor activity (fractions): NONE when either is not finite
 * or the activity is not in [0, 1]; MFU_ABOVE when mfu > activity + MFU_TENSOR_ABOVE_MARGIN;
 * FAR_BELOW when mfu < MFU_TENSOR_FAR_BELOW x activity; else CONSISTENT. buf (size n, may be
 * NULL) gets one line with both figures and what the verdict means ("" for NONE). */
mfu_tensor_check mfu__tensor_check(double mfu, double tensor_active, char *buf, size_t n);

/* The columns the run's energy figures are made of, n rows each. The first three come from the
 * run (mfu_run_column: per device; NULL = the run has no such column), the rest from the
 * figures (figures/figures.h: step time, counted tokens of the whole job, useful model FLOP/s
 * of one device, devices in the job, MFU). */
typedef struct mfu__energy_cols {
    const double *energy_j, *power_w, *tensor_active;
    const double *step_time_s, *tokens, *model_flops_per_s_per_device, *devices, *mfu;
} mfu__energy_cols;

/* Fill *out (mfu/report.h mfu_energy) over the rows i < n with keep[i] (NULL: every row):
 * ratios of sums for the energy (joules and useful FLOPs of the job, each step's device figure
 * x its devices; a step without a device count counts as one device for joules per PFLOP and
 * is left out of tokens per kWh), medians for the tensor activity and MFU, and their check.
 * scratch holds 2n doubles (NULL with n > 0: nothing computed). */
void mfu__energy_compute(const mfu__energy_cols *c, const uint8_t *keep, size_t n, double *scratch,
                         mfu_energy *out);

#endif
