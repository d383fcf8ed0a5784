/*
 * window.c - the figures of a window of steps (figures/figures.h): the typical step (medians,
 * the headline's definition) and the total (ratio of sums: what the window achieved with its
 * stalls, and the time they cost).
 */
#include <math.h>

#include "figures/figures.h"

static bool pos(double v)
{
    return isfinite(v) && v > 0;
}

void mfu__figures_window(const mfu__fcols *c, size_t first, size_t last, double *scratch,
                         mfu__fwindow *w)
{
    w->rows = 0;
    w->per_device = false;
    w->tokens_per_s = w->mfu = w->step_time_s = w->time_s = w->stall_s = NAN;
    w->median_tokens_per_s = w->median_mfu = w->median_hfu = w->median_step_time_s = NAN;
    w->median_model_flops_per_s_per_device = w->median_hardware_flops_per_s_per_device = NAN;
    if (!c || c->n == 0 || first > last || last >= c->n)
        return;
    const double *tps = c->v[MFU__FC_TOKENS_PER_S], *tpd = c->v[MFU__FC_TOKENS_PER_S_PER_DEVICE];
    const double *st = c->v[MFU__FC_STEP_TIME_S], *tok = c->v[MFU__FC_TOKENS];
    const double *mf = c->v[MFU__FC_MODEL_FLOPS_PER_S_PER_DEVICE], *pk = c->v[MFU__FC_PEAK];
    const double *mfu = c->v[MFU__FC_MFU];
    /* whole job when the window has it, else per device */
    bool job = false;
    for (size_t i = first; i <= last && !job; i++)
        job = pos(tps[i]);
    const double *rate = job ? tps : tpd;
    w->per_device = !job;
    double T = 0, K = 0, F = 0, C = 0;
    bool flops = true;
    size_t m = 0;
    for (size_t i = first; i <= last; i++) {
        if (!pos(rate[i]) || !pos(st[i]))
            continue;
        /* tokens over the step's time: the printed count, else the rate times the time */
        double k = pos(tok[i]) && job ? tok[i] : rate[i] * st[i];
        double dev = job ? c->v[MFU__FC_DEVICES][i] : 1;
        T += st[i];
        K += k;
        if (pos(mf[i]) && pos(pk[i]) && pos(dev)) {
            F += mf[i] * dev * st[i]; /* useful model FLOPs of the step */
            C += pk[i] * dev * st[i];
        } else {
            flops = false;
        }
        scratch[m++] = rate[i];
    }
    w->rows = m;
    if (m == 0)
        return;
    w->time_s = T;
    w->tokens_per_s = K / T;
    w->step_time_s = T / (double)m;
    w->mfu = flops && C > 0 ? F / C : NAN;
    w->median_tokens_per_s = mfu__median_inplace(scratch, m);
    double stall = T - K / w->median_tokens_per_s;
    w->stall_s = stall > 0 ? stall : 0;
    const double *cols[5] = {mfu, c->v[MFU__FC_HFU], mf,
                             c->v[MFU__FC_HARDWARE_FLOPS_PER_S_PER_DEVICE], st};
    double *out[5] = {&w->median_mfu, &w->median_hfu, &w->median_model_flops_per_s_per_device,
                      &w->median_hardware_flops_per_s_per_device, &w->median_step_time_s};
    for (int q = 0; q < 5; q++) {
        size_t k = 0;
        for (size_t i = first; i <= last; i++)
            if (pos(rate[i]) && pos(st[i]) && isfinite(cols[q][i]))
                scratch[k++] = cols[q][i];
        *out[q] = mfu__median_inplace(scratch, k);
    }
}
