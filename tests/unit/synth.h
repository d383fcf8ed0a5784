/*
 * synth.h - synthetic training runs with known ground truth for the analysis tests.
 *
 * A run is a list of phases (each holds from a row on: step time, tokens, FLOPs per token,
 * devices, peak, labels, clock, power) and a per-row noise multiplier on the step time:
 * lognormal (sd on the log) with AR(1) correlation, rare spikes, and an optional warm-up
 * (the first rows slower by given factors). Everything is seeded; no global state.
 */
#ifndef MFU_TEST_SYNTH_H
#define MFU_TEST_SYNTH_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mfu/analysis.h"

typedef struct syn_rng {
    uint64_t s;
} syn_rng;

static inline uint64_t syn_next(syn_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline double syn_uniform(syn_rng *r)
{
    return ((double)(syn_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static inline double syn_normal(syn_rng *r)
{
    double u1 = syn_uniform(r), u2 = syn_uniform(r);
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

typedef struct syn_noise {
    double sd;                 /* lognormal sd of the step time (0.02 = 2 %) */
    double rho;                /* AR(1) correlation of the log noise */
    double spike_p;            /* probability of a spike per row */
    double spike_lo, spike_hi; /* spike multiplies the step time by U(lo, hi) */
    const double *warmup;      /* multipliers of the first rows (NULL: none) */
    size_t nwarmup;
} syn_noise;

/* Fill mult[0..n) with step-time multipliers. */
static inline void syn_multipliers(uint64_t seed, size_t n, const syn_noise *nz, double *mult)
{
    syn_rng r = {seed * 0x2545F4914F6CDD1Dull + 12345};
    double e = 0, innov = nz->sd * sqrt(1 - nz->rho * nz->rho);
    for (size_t i = 0; i < n; i++) {
        e = nz->rho * e + innov * syn_normal(&r);
        if (i == 0)
            e = nz->sd * syn_normal(&r);
        double m = exp(e);
        if (nz->spike_p > 0 && syn_uniform(&r) < nz->spike_p)
            m *= nz->spike_lo + (nz->spike_hi - nz->spike_lo) * syn_uniform(&r);
        if (nz->warmup && i < nz->nwarmup)
            m *= nz->warmup[i];
        mult[i] = m;
    }
}

typedef struct syn_phase {
    size_t from;                  /* first row of the phase */
    double step_time_s;           /* before noise */
    double tokens, useful_tokens; /* useful NaN: no padding column */
    double fpt, hw_fpt;           /* model / hardware FLOPs per token (hw NaN: = model) */
    double devices, peak;
    double seq_len, global_batch;
    double clock_mhz, max_clock_mhz, power_w, power_limit_w; /* NaN: absent */
    const char *dtype, *recompute;
} syn_phase;

/* A phase with the usual defaults: 64 devices at 989 TFLOP/s, 1 Mi tokens, 1e10 FLOPs/token,
 * seq 4096 × batch 256, bf16, no recompute, no clock/power, step time for the given MFU. */
static inline syn_phase syn_default_phase(size_t from, double mfu)
{
    syn_phase p;
    memset(&p, 0, sizeof p);
    p.from = from;
    p.tokens = 1048576;
    p.useful_tokens = NAN;
    p.fpt = 1e10;
    p.hw_fpt = NAN;
    p.devices = 64;
    p.peak = 989e12;
    p.seq_len = 4096;
    p.global_batch = 256;
    p.clock_mhz = p.max_clock_mhz = p.power_w = p.power_limit_w = NAN;
    p.dtype = "bf16";
    p.recompute = "none";
    p.step_time_s = p.tokens * p.fpt / (mfu * p.devices * p.peak);
    return p;
}

/* The step time that gives mfu for phase p's tokens, FLOPs and capacity (useful tokens when
 * given). */
static inline double syn_step_time_for(const syn_phase *p, double mfu)
{
    double tok = isnan(p->useful_tokens) ? p->tokens : p->useful_tokens;
    return tok * p->fpt / (mfu * p->devices * p->peak);
}

/* A series of n rows (steps first_step, first_step+1, ...) from phases (sorted by from) and
 * multipliers. loss (may be NULL) gives the loss per row. NULL on failure. */
static inline mfu_series *syn_series(size_t n, int64_t first_step, const syn_phase *ph, size_t nph,
                                     const double *mult, const double *loss)
{
    mfu_series *s = mfu_series_new();
    if (!s)
        return NULL;
    size_t q = 0;
    for (size_t i = 0; i < n; i++) {
        while (q + 1 < nph && ph[q + 1].from <= i)
            q++;
        const syn_phase *p = &ph[q];
        mfu_series_row r;
        mfu_series_row_init(&r);
        r.step = first_step + (int64_t)i;
        r.step_time_s = p->step_time_s * mult[i];
        r.tokens = p->tokens;
        r.useful_tokens = p->useful_tokens;
        r.model_flops_per_token = p->fpt;
        r.hardware_flops_per_token = p->hw_fpt;
        r.devices = p->devices;
        r.peak_flops_per_s = p->peak;
        r.seq_len = p->seq_len;
        r.global_batch = p->global_batch;
        r.clock_mhz = p->clock_mhz;
        r.max_clock_mhz = p->max_clock_mhz;
        r.power_w = p->power_w;
        r.power_limit_w = p->power_limit_w;
        r.dtype = p->dtype;
        r.recompute = p->recompute;
        r.loss = loss ? loss[i] : NAN;
        if (mfu_series_append(s, &r, NULL) != MFU_OK) {
            mfu_series_free(s);
            return NULL;
        }
    }
    return s;
}

/* Index of the finding of kind in a, or -1. */
static inline int syn_find(const mfu_analysis *a, const char *kind)
{
    for (size_t i = 0; i < mfu_analysis_finding_count(a); i++)
        if (strcmp(mfu_analysis_finding(a, i)->kind, kind) == 0)
            return (int)i;
    return -1;
}

/* The evidence value called name in f, NaN when absent. */
static inline double syn_evidence(const mfu_finding *f, const char *name)
{
    for (size_t i = 0; i < f->nevidence; i++)
        if (strcmp(f->evidence[i].name, name) == 0)
            return f->evidence[i].value;
    return NAN;
}

#endif
