/*
 * energy.c - energy beside utilization (figures/energy.h): a step's energy, joules per useful
 * PFLOP, tokens per kWh, and the cross-check of MFU with the tensor pipes' activity. Every view
 * (the monitor's records, the report's text and JSON, /metrics, Python) takes these figures
 * from here, so a run has one energy figure wherever it is shown.
 */
#include "figures/energy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

double mfu__energy_step_j(double energy_j, double power_w, double step_time_s, bool *from_power)
{
    if (from_power)
        *from_power = false;
    if (isfinite(energy_j) && energy_j >= 0)
        return energy_j;
    if (isfinite(power_w) && power_w >= 0 && isfinite(step_time_s) && step_time_s > 0) {
        if (from_power)
            *from_power = true;
        return power_w * step_time_s;
    }
    return NAN;
}

double mfu__joules_per_pflop(double joules, double flops)
{
    if (!(isfinite(joules) && joules >= 0 && isfinite(flops) && flops > 0))
        return NAN;
    return joules / (flops / MFU__FLOPS_PER_PFLOP);
}

double mfu__tokens_per_kwh(double tokens, double joules)
{
    if (!(isfinite(tokens) && tokens >= 0 && isfinite(joules) && joules > 0))
        return NAN;
    return tokens / (joules / MFU__JOULES_PER_KWH);
}

mfu_tensor_check mfu__tensor_check(double mfu, double tensor_active, char *buf, size_t n)
{
    if (buf && n)
        buf[0] = '\0';
    if (!isfinite(mfu) || !isfinite(tensor_active) || tensor_active < 0 || tensor_active > 1)
        return MFU_TENSOR_CHECK_NONE;
    double m = 100 * mfu, a = 100 * tensor_active;
    if (mfu > tensor_active + MFU_TENSOR_ABOVE_MARGIN) {
        if (buf && n)
            snprintf(buf, n,
                     "MFU %.1f %% is above the tensor pipes' activity %.1f %% (NVML GPM): no "
                     "device does more matrix work than its busy pipes, so the FLOPs or the peak "
                     "are counted wrong (model, devices, dtype, tokens per step)",
                     m, a);
        return MFU_TENSOR_CHECK_MFU_ABOVE;
    }
    if (mfu < MFU_TENSOR_FAR_BELOW * tensor_active) {
        if (buf && n)
            snprintf(buf, n,
                     "MFU %.1f %% is far below the tensor pipes' activity %.1f %% (NVML GPM): the "
                     "pipes were busy with work MFU does not count (recomputation, padding, "
                     "wasted or low-rate matrix work), or the model's count misses some",
                     m, a);
        return MFU_TENSOR_CHECK_FAR_BELOW;
    }
    if (buf && n)
        snprintf(buf, n,
                 "MFU %.1f %% is consistent with the tensor pipes' activity %.1f %% (NVML GPM)", m,
                 a);
    return MFU_TENSOR_CHECK_CONSISTENT;
}

static double at(const double *col, size_t i)
{
    return col ? col[i] : NAN;
}

void mfu__energy_compute(const mfu__energy_cols *c, const uint8_t *keep, size_t n, double *scratch,
                         mfu_energy *out)
{
    memset(out, 0, sizeof *out);
    out->joules = out->useful_pflop = out->joules_per_pflop = NAN;
    out->tokens = out->tokens_per_kwh = out->tensor_active = out->mfu = NAN;
    if (!c || (n > 0 && !scratch))
        return;
    if (!c->energy_j && !c->power_w && !c->tensor_active)
        return; /* every figure below needs a step's energy or its tensor activity */
    double J = 0, F = 0, Jt = 0, K = 0;
    size_t nt = 0, nk = 0;
    double *ta = scratch, *mf = scratch + n;
    for (size_t i = 0; i < n; i++) {
        if (keep && !keep[i])
            continue;
        double st = at(c->step_time_s, i), dev = at(c->devices, i);
        bool from_power;
        double e = mfu__energy_step_j(at(c->energy_j, i), at(c->power_w, i), st, &from_power);
        double fl = at(c->model_flops_per_s_per_device, i) * st; /* one device's useful FLOPs */
        if (isfinite(e) && isfinite(fl) && fl > 0) {
            double d = isfinite(dev) && dev > 0 ? dev : 1;
            J += e * d;
            F += fl * d;
            out->steps++;
            out->power_steps += from_power;
        }
        /* tokens per kWh needs no model: the tokens and the devices' energy (as the monitor's
         * per-step figure) */
        double tok = at(c->tokens, i);
        if (isfinite(e) && isfinite(dev) && dev > 0 && isfinite(tok) && tok >= 0) {
            Jt += e * dev;
            K += tok;
            nk++;
        }
        double a = at(c->tensor_active, i), m = at(c->mfu, i);
        if (isfinite(a) && a >= 0 && a <= 1 && isfinite(m)) {
            ta[nt] = a;
            mf[nt] = m;
            nt++;
        }
    }
    if (out->steps) {
        out->joules = J;
        out->useful_pflop = F / MFU__FLOPS_PER_PFLOP;
        out->joules_per_pflop = mfu__joules_per_pflop(J, F);
    }
    if (nk) {
        out->tokens = K;
        out->tokens_per_kwh = mfu__tokens_per_kwh(K, Jt);
    }
    out->tensor_steps = nt;
    if (nt) {
        out->tensor_active = mfu__median_inplace(ta, nt);
        out->mfu = mfu__median_inplace(mf, nt);
        out->check = mfu__tensor_check(out->mfu, out->tensor_active, out->check_text,
                                       sizeof out->check_text);
    }
}

const char *mfu_tensor_check_name(mfu_tensor_check c)
{
    switch (c) {
    case MFU_TENSOR_CHECK_NONE: return "none";
    case MFU_TENSOR_CHECK_CONSISTENT: return "consistent";
    case MFU_TENSOR_CHECK_MFU_ABOVE: return "mfu_above";
    case MFU_TENSOR_CHECK_FAR_BELOW: return "far_below";
    }
    return NULL;
}
