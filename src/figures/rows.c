/*
 * rows.c - the figures of a step by the rule of figures/figures.h, and the columns of a run.
 *
 * A step's own configuration (its sequence length, recomputation, devices, dtype, useful
 * tokens) wins over the run's for that step. FLOPs per token depend on the sequence length and
 * the recomputation only, so the few distinct pairs a run has are counted once and cached.
 * Where the context check (implied.c) found that the given context stops matching the log, the
 * stretch it covers takes the sequence length and tokens per step the log implies.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "figures/figures.h"
#include "run/step.h"
#include "util/pages.h"
#include "util/util.h"

static bool pos(double v)
{
    return isfinite(v) && v > 0;
}

/* Model, hardware and framework FLOPs per token at (seq, rec): cached. */
static void flops_at(mfu__fctx *f, double seq, int rec, double out[3])
{
    for (size_t k = 0; k < f->ncache; k++)
        if (f->cache[k].seq == seq && f->cache[k].rec == rec) {
            memcpy(out, f->cache[k].f, sizeof f->cache[k].f);
            return;
        }
    out[0] = out[1] = out[2] = NAN;
    mfu_workload wl = f->wl;
    wl.seq = (int64_t)seq;
    wl.recompute = (mfu_recompute)rec;
    mfu_flops fl;
    if (seq >= 1 && seq < 9e15 &&
        mfu_flops_compute(&f->in.arch, &wl, &f->in.flops, &fl, NULL) == MFU_OK) {
        out[0] = fl.model_flops;
        out[1] = fl.hardware_flops;
    }
    if (f->stack_flops_ok && isfinite(out[0]) &&
        mfu_flops_compute(&f->in.arch, &wl, &f->sopt, &fl, NULL) == MFU_OK)
        out[2] = f->c.stack.counts_recompute ? fl.hardware_flops : fl.model_flops;
    size_t k = f->ncache < MFU__FIG_CACHE ? f->ncache++ : f->cache_next++ % MFU__FIG_CACHE;
    f->cache[k].seq = seq;
    f->cache[k].rec = rec;
    memcpy(f->cache[k].f, out, sizeof f->cache[k].f);
}

/* The tokens of step s at sequence length seq, and where they came from. */
static double tokens_of(const mfu__fctx *f, const mfu_step *s, double seq, uint8_t *src)
{
    if (f->override_tokens > 0) {
        *src = MFU__TOK_INPUT_TOKENS;
        return f->override_tokens;
    }
    if (f->override_batch > 0 && isfinite(seq)) {
        *src = MFU__TOK_INPUT_BATCH;
        return f->override_batch * seq;
    }
    bool derived = (s->flags & MFU_STEP_TOKENS_DERIVED) != 0; /* batch x the header's seq */
    if (pos(s->tokens) && !derived) {
        *src = MFU__TOK_STEP;
        return s->tokens;
    }
    if (pos(s->samples) && isfinite(seq)) {
        *src = MFU__TOK_SAMPLES;
        return s->samples * seq;
    }
    if (pos(s->tokens) && derived) { /* the ingest's batch x seq, no samples kept: the header's */
        *src = MFU__TOK_HEADER;
        return s->tokens;
    }
    if (isfinite(f->fallback_tokens)) {
        *src = MFU__TOK_HEADER;
        return f->fallback_tokens;
    }
    if (f->fallback_batch > 0 && isfinite(seq)) {
        *src = MFU__TOK_HEADER_BATCH;
        return f->fallback_batch * seq;
    }
    *src = MFU__TOK_NONE;
    return NAN;
}

void mfu__figures_row(mfu__fctx *f, const mfu_step *s, const mfu_step *prev, size_t row,
                      mfu__frow *out)
{
    mfu_report_context *c = &f->c;
    /* out is written, never read (cppcheck's cross-file check takes the address for a read) */
    /* cppcheck-suppress ctuuninitvar */
    double *v = out->v;
    for (int k = 0; k < MFU__FC_COUNT; k++)
        v[k] = NAN;
    out->flags = 0;

    /* the step's configuration */
    const mfu__frun *fr = mfu__figures_run_at(f, row);
    bool seq_printed = s->seq_len >= 1 && s->seq_len < 9e15;
    double seq_base = seq_printed ? floor(s->seq_len) : f->seq0;
    double seq = seq_base;
    if (fr && isfinite(fr->seq) && !seq_printed) {
        seq = fr->seq;
        out->flags |= MFU__FR_SEQ_INFERRED;
    }
    int rec = s->recompute >= 0 && s->recompute <= MFU_RECOMPUTE_FULL ? s->recompute : f->rec0;
    out->recompute = (int8_t)rec;
    out->dtype = (int8_t)(s->dtype >= 0 && s->dtype < (int32_t)MFU_DTYPE_COUNT ? s->dtype
                                                                               : (int32_t)c->dtype);
    /* model, hardware and the framework's FLOPs per token, written where they go (a local
     * array, stored by halves and read back as one vector, stalled the row's store
     * forwarding: a quarter of this function's time) */
    double *fpt = &v[MFU__FC_MODEL_FPT];
    _Static_assert(MFU__FC_HARDWARE_FPT == MFU__FC_MODEL_FPT + 1 &&
                       MFU__FC_STACK_FPT == MFU__FC_MODEL_FPT + 2,
                   "the three FLOPs per token are consecutive columns");
    if (c->has_model) {
        if (seq == f->seq0 && rec == f->rec0) {
            fpt[0] = c->model_flops_per_token;
            fpt[1] = c->hardware_flops_per_token;
            fpt[2] = c->stack_flops_per_token;
        } else {
            flops_at(f, seq, rec, fpt);
        }
        if (fr && fr->fpt_scale != 1 && isfinite(fr->fpt_scale))
            for (int k = 0; k < 3; k++)
                fpt[k] *= fr->fpt_scale;
    }
    double dev = s->devices >= 1 && s->devices < 1e9 ? floor(s->devices) : c->devices;
    double peak = c->peak_flops_per_s;
    if (out->dtype != (int8_t)c->dtype && !(f->in.peak_flops_per_s > 0) && c->device) {
        double p = NAN;
        peak =
            mfu_device_peak_flops_per_s(c->device, (mfu_dtype)out->dtype, false, &p, NULL) == MFU_OK
                ? p
                : NAN;
    }
    v[MFU__FC_SEQ] = seq;
    v[MFU__FC_DEVICES] = dev;
    v[MFU__FC_PEAK] = peak;
    v[MFU__FC_BATCH] = pos(s->samples) ? s->samples : f->batch0;
    v[MFU__FC_LOG_TOKENS] = pos(s->tokens)                          ? s->tokens
                            : pos(s->samples) && isfinite(seq_base) ? s->samples * seq_base
                                                                    : NAN;

    /* tokens: the context's; where the tokens check found the given tokens per step stop
     * matching the log's, the log's; where the FLOPs check found a new workload, the tokens
     * per step it implies (batch x sequence forms follow the sequence by themselves) */
    double tok_base = tokens_of(f, s, seq_base, &out->tok_source);
    const mfu__trun *tr = mfu__figures_trun_at(f, row);
    if (tr && tr->scale != 1 && isfinite(tr->scale) &&
        (out->tok_source == MFU__TOK_INPUT_TOKENS || out->tok_source == MFU__TOK_INPUT_BATCH)) {
        tok_base *= tr->scale;
        out->flags |= MFU__FR_TOKENS_INFERRED;
    }
    double tokens = tok_base;
    bool by_seq = out->tok_source == MFU__TOK_INPUT_BATCH || out->tok_source == MFU__TOK_SAMPLES ||
                  out->tok_source == MFU__TOK_HEADER_BATCH;
    if ((out->flags & MFU__FR_SEQ_INFERRED) && by_seq) {
        tokens = tok_base * seq / seq_base;
    } else if (fr && fr->tokens_scale != 1 && isfinite(fr->tokens_scale) &&
               out->tok_source != MFU__TOK_STEP && out->tok_source != MFU__TOK_NONE) {
        tokens = tok_base * fr->tokens_scale;
        out->flags |= MFU__FR_TOKENS_INFERRED;
    }

    /* step time and tokens/s */
    double st = pos(s->step_time_s) ? s->step_time_s : NAN;
    double rg = NAN, rd = NAN; /* the framework's tokens/s, whole job and per device */
    if (pos(s->tokens_per_s)) {
        if (s->tokens_per_s_scope == MFU_SCOPE_DEVICE) {
            rd = s->tokens_per_s;
            rg = rd * dev;
        } else {
            rg = s->tokens_per_s;
            rd = rg / dev;
        }
    }
    double dt = NAN; /* the step time from time deltas */
    if (prev && isfinite(s->time_s) && isfinite(prev->time_s) && s->step > prev->step)
        dt = (s->time_s - prev->time_s) / (double)(s->step - prev->step);
    double tps = NAN, tpd = NAN;
    uint8_t src = MFU__TPS_NONE;
    if (pos(tokens) && isfinite(st)) {
        tps = tokens / st;
        src = MFU__TPS_TOKENS_TIME;
        v[MFU__FC_DERIVED_TPS] = tps;
    } else if (isfinite(rg) || isfinite(rd)) {
        tps = rg;
        if (!isfinite(tps))
            tpd = rd;
        src = MFU__TPS_FRAMEWORK;
    } else if (pos(s->samples_per_s) && isfinite(seq)) {
        double x = s->samples_per_s * seq;
        if (s->samples_per_s_scope == MFU_SCOPE_DEVICE) {
            rd = x;
            tps = x * dev;
            if (!isfinite(tps))
                tpd = x;
        } else {
            tps = x;
        }
        src = MFU__TPS_SAMPLES;
    } else if (pos(tokens) && pos(dt)) {
        tps = tokens / dt;
        src = MFU__TPS_TIME_DELTA;
    }
    out->tps_source = src;
    if (isfinite(tps))
        tpd = isfinite(dev) ? tps / dev : rd;
    /* tokens/s per device as the context alone gives them (the FLOPs check compares those) */
    double g = 1;
    if (src == MFU__TPS_TOKENS_TIME || src == MFU__TPS_TIME_DELTA)
        g = tokens / tok_base;
    else if (src == MFU__TPS_SAMPLES)
        g = seq / seq_base;
    v[MFU__FC_BASE_TPS] = pos(g) ? tps / g : tps;
    v[MFU__FC_OWN_TPD] = pos(rd) ? rd : NAN;
    if (!isfinite(st) && pos(tokens) && pos(tps))
        st = tokens / tps;
    if (!isfinite(st) && pos(s->samples) && s->samples_per_s_scope != MFU_SCOPE_DEVICE &&
        pos(s->samples_per_s))
        st = s->samples / s->samples_per_s;
    if (!isfinite(st) && pos(dt)) /* equal timestamps (a coarse clock) give no step time */
        st = dt;

    /* the real (non-padding) share: the step's useful tokens, else --real-tokens-per-step */
    double rho = c->real_fraction;
    if (isfinite(s->useful_tokens) && s->useful_tokens >= 0 && pos(tokens))
        rho = s->useful_tokens >= tokens ? 1.0 : s->useful_tokens / tokens;
    v[MFU__FC_USEFUL] = rho;

    v[MFU__FC_STEP_TIME_S] = st;
    v[MFU__FC_TOKENS] = pos(tokens) ? tokens : NAN;
    v[MFU__FC_TOKENS_PER_S] = tps;
    v[MFU__FC_TOKENS_PER_S_PER_DEVICE] = tpd;
    if (isfinite(s->flops_per_s))
        v[MFU__FC_REPORTED_FLOPS_PER_S_PER_DEVICE] =
            s->flops_per_s_scope == MFU_SCOPE_GLOBAL ? s->flops_per_s / dev : s->flops_per_s;
    v[MFU__FC_REPORTED_MFU] = isfinite(s->mfu) ? s->mfu : NAN;
    v[MFU__FC_REPORTED_TOKENS_PER_S] = rg;
    v[MFU__FC_LOSS] = s->loss;
    double mf = fpt[0] * tpd * rho;
    double hf = fpt[1] * tpd;
    v[MFU__FC_MODEL_FLOPS_PER_S_PER_DEVICE] = mf;
    v[MFU__FC_HARDWARE_FLOPS_PER_S_PER_DEVICE] = hf;
    v[MFU__FC_MFU] = mf / peak;
    v[MFU__FC_HFU] = hf / peak;
    double sf = fpt[2] * tpd * (c->stack.counts_padding ? 1.0 : rho);
    v[MFU__FC_STACK_FLOPS_PER_S_PER_DEVICE] = sf;
    v[MFU__FC_STACK_MFU] = sf / c->stack_peak_flops_per_s;
    /* a figure that overflowed (a garbled 1e308 token count, a step time of 1e-320 s) is not
     * a value: absent, so the step is unusable rather than infinite */
    for (int k = 0; k < MFU__FC_COUNT; k++) { /* a select, not a branch: it vectorizes */
        double x = v[k];
        v[k] = fabs(x) == INFINITY ? NAN : x;
    }
}

/* ---- columns ------------------------------------------------------------------------------ */

/* Whether column k of c holds rows of its own (stored, and not another column's). */
static bool owns(const mfu__fcols *c, int k)
{
    return c->present[k] && !c->same[k];
}

/* Grow column *p, of `mapped` bytes mapped (0: allocated), from old to cap rows, keeping its
 * rows: a mapped one becomes an allocated copy. false when out of memory (*p as it was). */
static bool grow_one(double **p, size_t *mapped, size_t old, size_t cap)
{
    if (!*mapped) {
        double *q = realloc(*p, cap * sizeof *q);
        if (!q)
            return false;
        *p = q;
        return true;
    }
    double *q = malloc(cap * sizeof *q);
    if (!q)
        return false;
    memcpy(q, *p, old * sizeof *q);
    mfu__pages_free(*p, *mapped);
    *p = q;
    *mapped = 0;
    return true;
}

/* The columns that share column k's rows follow it to its array (c->v[k]). */
static void follow(mfu__fcols *c, int k)
{
    for (int j = k + 1; j < MFU__FC_COUNT; j++)
        if (c->same[j] == k + 1)
            c->v[j] = c->v[k];
}

static bool unshare(mfu__fcols *c, int k, size_t keep, size_t to);

/* Column k of c (lent by the run) gets rows of its own, as unshare makes them, and the columns
 * that shared the run's array follow it. */
static bool unlend(mfu__fcols *c, int k, size_t keep, size_t to)
{
    if (!unshare(c, k, keep, to))
        return false;
    c->lent[k] = 0;
    follow(c, k);
    return true;
}

void mfu__fcols_drop_codes(mfu__fcols *c)
{
    free(c->recompute);
    free(c->dtype);
    free(c->tps_source);
    free(c->tok_source);
    free(c->flags);
    c->recompute = c->dtype = NULL;
    c->tps_source = c->tok_source = c->flags = NULL;
}

void mfu__fcols_free(mfu__fcols *c)
{
    if (!c)
        return;
    for (int k = 0; k < MFU__FC_COUNT; k++)
        if (owns(c, k) && !c->lent[k])
            mfu__pages_free(c->v[k], c->mapped[k]);
    mfu__pages_free(c->nan, c->nan_mapped);
    mfu__fcols_drop_codes(c);
    memset(c, 0, sizeof *c);
}

/* Grow the columns of c to cap rows (cap > c->cap): the stored ones keep their rows (and the
 * columns that share them follow), the shared NaN column is grown and filled, every absent
 * column points to it. false when out of memory: what grew stays valid and every pointer
 * usable at c->cap rows. */
static bool grow_cols(mfu__fcols *c, size_t cap)
{
    for (int k = 0; k < MFU__FC_COUNT; k++)
        if (owns(c, k)) {
            if (c->lent[k] && !unlend(c, k, c->cap, c->cap)) /* the run's array never grows */
                return false;
            if (!grow_one(&c->v[k], &c->mapped[k], c->cap, cap))
                return false;
            c->whole[k] = false; /* an allocated copy now, its new rows to be written */
            follow(c, k);
        }
    /* the NaN column of a long run is mapped (one block of NaN, however many rows) */
    double *z = c->nan ? NULL : mfu__const_map(NAN, cap, &c->nan_mapped);
    if (z) {
        c->nan = z;
    } else {
        if (!grow_one(&c->nan, &c->nan_mapped, c->cap, cap))
            return false;
        z = c->nan;
        for (size_t i = c->cap; i < cap; i++)
            z[i] = NAN;
    }
    for (int k = 0; k < MFU__FC_COUNT; k++)
        if (!c->present[k])
            c->v[k] = z;
    return true;
}

static bool reserve(mfu__fcols *c, size_t n)
{
    if (n <= c->cap)
        return true;
    /* the first build takes the run's rows exactly (a report's run does not grow; doubling
     * from 64 would leave up to n spare rows in every column); a live run's appends double */
    size_t cap = c->cap ? c->cap : n > 64 ? n : 64;
    while (cap < n)
        cap = cap > SIZE_MAX / 4 ? n : cap * 2;
    if (!grow_cols(c, cap))
        return false;
    int8_t *a = realloc(c->recompute, cap);
    if (!a)
        return false;
    c->recompute = a;
    a = realloc(c->dtype, cap);
    if (!a)
        return false;
    c->dtype = a;
    uint8_t *b = realloc(c->tps_source, cap);
    if (!b)
        return false;
    c->tps_source = b;
    b = realloc(c->tok_source, cap);
    if (!b)
        return false;
    c->tok_source = b;
    b = realloc(c->flags, cap);
    if (!b)
        return false;
    c->flags = b;
    c->cap = cap;
    return true;
}

/* Whether x is the NaN an absent column holds (mfu__figures_row's NAN, bit for bit). */
static bool absent_nan(double x)
{
    static const double absent = NAN;
    return memcmp(&x, &absent, sizeof x) == 0;
}

/* Store column k of c (absent so far) from now on: NaN in rows [0, from) and [to, cap); the
 * rows between are the caller's to write (the builder writes every row it builds, a put one). */
static bool own(mfu__fcols *c, int k, size_t from, size_t to)
{
    double *p = malloc((c->cap ? c->cap : 1) * sizeof *p);
    if (!p)
        return false;
    for (size_t i = 0; i < from; i++)
        p[i] = NAN;
    for (size_t i = to; i < c->cap; i++)
        p[i] = NAN;
    c->v[k] = p;
    c->present[k] = true;
    c->same[k] = 0;
    c->mapped[k] = 0;
    c->whole[k] = false;
    return true;
}

/* Column k of c (sharing column j's rows) gets rows of its own: a copy of the first `keep`
 * rows, NaN in [to, cap) (the rows between the caller's to write). */
static bool unshare(mfu__fcols *c, int k, size_t keep, size_t to)
{
    const double *from = c->v[k];
    double *p = malloc((c->cap ? c->cap : 1) * sizeof *p);
    if (!p)
        return false;
    memcpy(p, from, keep * sizeof *p);
    for (size_t i = to; i < c->cap; i++)
        p[i] = NAN;
    c->v[k] = p;
    c->same[k] = 0;
    return true;
}

bool mfu__fcols_own(mfu__fcols *c, int k)
{
    if (c->same[k]) {
        c->whole[k] = false;
        return unshare(c, k, c->cap, c->cap);
    }
    /* the columns that shared k's rows keep them, the first of them as theirs */
    int lead = -1;
    for (int j = k + 1; j < MFU__FC_COUNT; j++)
        if (c->same[j] == k + 1) {
            lead = j;
            break;
        }
    if (lead < 0) { /* a lent column is the run's: written, it is copied first */
        c->whole[k] = false;
        return !c->lent[k] || unlend(c, k, c->cap, c->cap);
    }
    if (!unshare(c, k, c->cap, c->cap))
        return false;
    c->same[lead] = 0; /* the others still point to the rows k had, now lead's */
    c->mapped[lead] = c->mapped[k];
    c->mapped[k] = 0;
    c->lent[lead] = c->lent[k];
    c->lent[k] = 0;
    c->whole[lead] = c->whole[k];
    c->whole[k] = false;
    for (int j = lead + 1; j < MFU__FC_COUNT; j++)
        if (c->same[j] == k + 1)
            c->same[j] = (uint8_t)(lead + 1);
    return true;
}

bool mfu__fcols_put(mfu__fcols *c, int k, size_t i, double x)
{
    if (!c->present[k]) {
        if (absent_nan(x))
            return true;
        if (!own(c, k, i, i + 1))
            return false;
    } else if (memcmp(&c->v[k][i], &x, sizeof x) == 0) {
        return true; /* nothing changes, and a shared column stays shared */
    } else if (!mfu__fcols_own(c, k)) {
        return false;
    }
    c->v[k][i] = x;
    return true;
}

/* The framework's printed MFU as it would print it: an EMA over log lines (nanoGPT), replayed
 * from row first on, seeded with the last value before it. */
static bool replay_ema(mfu__fcols *c, size_t first, double ema)
{
    if (!c->present[MFU__FC_STACK_MFU])
        return true; /* NaN in every row: nothing to replay */
    if (!mfu__fcols_own(c, MFU__FC_STACK_MFU))
        return false;
    double *x = c->v[MFU__FC_STACK_MFU];
    double state = NAN;
    for (size_t i = first; i-- > 0;)
        if (isfinite(x[i])) {
            state = x[i];
            break;
        }
    for (size_t i = first; i < c->n; i++) {
        if (!isfinite(x[i]))
            continue;
        state = isfinite(state) ? ema * state + (1 - ema) * x[i] : x[i];
        x[i] = state;
    }
    return true;
}

/* The log's own figures of row i (mfu__fcols_build has a shortcut of this for a log that
 * prints neither MFU nor FLOP/s: keep the two alike): its MFU of this step (an EMA the framework
 * prints undone: x_i = (m_i − ema m_{i−1}) / (1 − ema)), its peak (TFLOP/s ÷ MFU) and its FLOPs per
 * counted token (TFLOP/s ÷ tokens/s per device; without TFLOP/s, MFU x the framework's peak ÷
 * tokens/s per device). The tokens/s are the framework's own where it prints them (its FLOP/s count
 * those), else the context's before any verdict; per job where the device count is unknown. */
static bool log_figures(mfu__fcols *c, const mfu__fctx *f, size_t i)
{
    double tpd = c->v[MFU__FC_OWN_TPD][i];
    c->flags[i] &= (uint8_t) ~(MFU__FR_LOG_OWN_TPS | MFU__FR_LOG_PER_JOB | MFU__FR_LOG_NO_PEAK);
    if (pos(tpd)) {
        c->flags[i] |= MFU__FR_LOG_OWN_TPS;
    } else {
        double dev = c->v[MFU__FC_DEVICES][i];
        tpd = c->v[MFU__FC_BASE_TPS][i];
        if (pos(dev))
            tpd /= dev;
        else
            c->flags[i] |= MFU__FR_LOG_PER_JOB;
    }
    double ema = f->prof ? f->prof->mfu_ema : 0;
    double m = c->v[MFU__FC_REPORTED_MFU][i];
    if (ema > 0 && isfinite(m) && i > 0 && isfinite(c->v[MFU__FC_REPORTED_MFU][i - 1]))
        m = (m - ema * c->v[MFU__FC_REPORTED_MFU][i - 1]) / (1 - ema);
    double fl = c->v[MFU__FC_REPORTED_FLOPS_PER_S_PER_DEVICE][i];
    double peak = pos(fl) && pos(m) ? fl / m : NAN;
    double fpt = NAN;
    if (pos(fl) && pos(tpd))
        fpt = fl / tpd;
    else if (pos(m) && pos(tpd)) {
        /* the framework's own peak for the device, else units of its (unknown) peak */
        double p = f->c.stack_peak_flops_per_s;
        fpt = m * (pos(p) ? p : 1.0) / tpd;
        if (!pos(p))
            c->flags[i] |= MFU__FR_LOG_NO_PEAK;
    }
    return mfu__fcols_put(c, MFU__FC_LOG_MFU, i, pos(m) ? m : NAN) &&
           mfu__fcols_put(c, MFU__FC_LOG_PEAK, i, peak) &&
           mfu__fcols_put(c, MFU__FC_LOG_FPT, i, fpt);
}

/* The members of a run's rows that the per-step rule reads (mfu__figures_row: these and no
 * others), each the run's own array (mfu__run_member; NULL: every row holds the absent value,
 * which mfu_step_init gave the step it is read into). */
typedef struct rows_src {
    const int64_t *step;
    const double *time_s, *step_time_s, *tokens, *samples, *loss, *tokens_per_s, *flops_per_s, *mfu,
        *samples_per_s, *seq_len, *devices, *useful_tokens;
    const uint8_t *tokens_per_s_scope, *flops_per_s_scope, *samples_per_s_scope;
    const uint32_t *flags;
    const int8_t *recompute, *dtype;
} rows_src;

static void src_init(rows_src *r, const mfu_run *run)
{
#define SRC_MEMBER(name, NAME) r->name = mfu__run_member(run, MFU__MEMBER_##NAME)
    SRC_MEMBER(step, STEP);
    SRC_MEMBER(time_s, TIME_S);
    SRC_MEMBER(step_time_s, STEP_TIME_S);
    SRC_MEMBER(tokens, TOKENS);
    SRC_MEMBER(samples, SAMPLES);
    SRC_MEMBER(loss, LOSS);
    SRC_MEMBER(tokens_per_s, TOKENS_PER_S);
    SRC_MEMBER(flops_per_s, FLOPS_PER_S);
    SRC_MEMBER(mfu, MFU);
    SRC_MEMBER(samples_per_s, SAMPLES_PER_S);
    SRC_MEMBER(seq_len, SEQ_LEN);
    SRC_MEMBER(devices, DEVICES);
    SRC_MEMBER(useful_tokens, USEFUL_TOKENS);
    SRC_MEMBER(tokens_per_s_scope, TOKENS_PER_S_SCOPE);
    SRC_MEMBER(flops_per_s_scope, FLOPS_PER_S_SCOPE);
    SRC_MEMBER(samples_per_s_scope, SAMPLES_PER_S_SCOPE);
    SRC_MEMBER(flags, FLAGS);
    SRC_MEMBER(recompute, RECOMPUTE);
    SRC_MEMBER(dtype, DTYPE);
#undef SRC_MEMBER
}

/* Row i's members that the rule reads into *s (the others stay as they were: absent in a step
 * mfu_step_init made): the values mfu_run_get gives them. */
static void src_get(const rows_src *r, size_t i, mfu_step *s)
{
    s->step = r->step[i];
#define SRC_D(name)                                                                                \
    if (r->name)                                                                                   \
        s->name = r->name[i];
    SRC_D(time_s)
    SRC_D(step_time_s)
    SRC_D(tokens)
    SRC_D(samples)
    SRC_D(loss)
    SRC_D(tokens_per_s)
    SRC_D(flops_per_s)
    SRC_D(mfu)
    SRC_D(samples_per_s)
    SRC_D(seq_len)
    SRC_D(devices)
    SRC_D(useful_tokens)
#undef SRC_D
    if (r->tokens_per_s_scope)
        s->tokens_per_s_scope = (mfu_scope)r->tokens_per_s_scope[i];
    if (r->flops_per_s_scope)
        s->flops_per_s_scope = (mfu_scope)r->flops_per_s_scope[i];
    if (r->samples_per_s_scope)
        s->samples_per_s_scope = (mfu_scope)r->samples_per_s_scope[i];
    if (r->flags)
        s->flags = r->flags[i];
    if (r->recompute)
        s->recompute = r->recompute[i];
    if (r->dtype)
        s->dtype = r->dtype[i];
}

/* Rows are built a block at a time into a buffer by column, then each column's block is
 * stored: an absent column stays absent while the block is its NaN, a shared one shared while
 * the block equals its owner's (a comparison, no store), and a column whose first block equals
 * an earlier column's shares that column's rows from the first build on. */
#define BUILD_BLOCK 1024

/* Store block [a, b) of column k in c, whose rows are n: buf holds the block by column, bs
 * values a column (column q at buf + q * bs), and after the last column bs NaN (the absent
 * value, compared with a block at once); rcol: the run's double columns when c->lend (a
 * column whose first block is one of them is that array), else NULL. false when out of
 * memory. */
static bool store_block(mfu__fcols *c, int k, const double *buf, size_t bs, size_t a, size_t b,
                        size_t n, const double *const *rcol)
{
    const double *x = buf + (size_t)k * bs;
    size_t m = b - a;
    if (!c->present[k]) {
        if (memcmp(x, buf + (size_t)MFU__FC_COUNT * bs, m * sizeof *x) == 0)
            return true; /* NaN in every row still */
        if (a == 0)      /* a first block: an earlier column with the same rows shares them */
            for (int q = 0; q < k; q++)
                if (owns(c, q) && memcmp(buf + (size_t)q * bs, x, m * sizeof *x) == 0) {
                    c->v[k] = c->v[q];
                    c->present[k] = true;
                    c->same[k] = (uint8_t)(q + 1);
                    return true;
                }
        /* a long column whose first block is one value: mapped, and its rows are that value
         * (before the run's columns: a constant one of the run's is freed with the run, and
         * readers that know the value read none of its rows, mfu__fcols_const) */
        size_t eq = 1;
        while (a == 0 && eq < m && memcmp(&x[eq], &x[0], sizeof *x) == 0)
            eq++;
        if (a == 0 && eq == m && (c->v[k] = mfu__const_map(x[0], c->cap, &c->mapped[k])) != NULL) {
            c->present[k] = true;
            c->same[k] = 0;
            c->whole[k] = true;
            return true;
        }
        /* a first block that is the run's column: its rows are the run's, until one differs */
        for (int q = 0; a == 0 && rcol && q < MFU_COL_COUNT_; q++)
            if (rcol[q] && memcmp(rcol[q], x, m * sizeof *x) == 0) {
                c->v[k] = (double *)(uintptr_t)rcol[q];
                c->present[k] = true;
                c->same[k] = 0;
                c->mapped[k] = 0;
                c->lent[k] = (uint8_t)(q + 1);
                return true;
            }
        if (!own(c, k, a, n)) /* the rows before NaN; this block and the rest are written */
            return false;
    } else if (c->same[k]) {
        if (memcmp(buf + (size_t)(c->same[k] - 1) * bs, x, m * sizeof *x) == 0)
            return true; /* its owner stores them */
        if (!unshare(c, k, a, n))
            return false;
    } else if (c->whole[k]) {
        /* one value in every row: the block is compared with it, and the mapped rows stay
         * unread (read, each page of the mapping would count as resident memory) */
        size_t j = 0;
        while (j < m && memcmp(&x[j], c->v[k], sizeof *x) == 0)
            j++;
        if (j == m)
            return true;
        c->whole[k] = false; /* the block is written below */
    } else if ((c->mapped[k] || c->lent[k]) && memcmp(c->v[k] + a, x, m * sizeof *x) == 0) {
        return true; /* rows a mapped column holds already (a write would copy their pages), or
                        the run's that it lends */
    } else if (c->lent[k] && !unlend(c, k, a, n)) {
        return false;
    }
    memcpy(c->v[k] + a, x, m * sizeof *x);
    return true;
}

mfu_status mfu__fcols_build(mfu__fcols *c, mfu__fctx *f, const mfu_run *run, size_t first,
                            mfu_error *err)
{
    size_t n = mfu_run_count(run);
    if (first > c->n)
        first = c->n;
    /* a live run's update builds a few rows: its buffer is as small */
    size_t rows = n - first < BUILD_BLOCK ? n - first : BUILD_BLOCK;
    /* a column's values 8 rows more apart than the block: at 8 KiB (a power of two) apart, a
     * row's 29 stores went to one cache set and the build spent half its time there */
    size_t bs = rows ? rows + 8 : 0;
    double *buf = NULL;
    if (!reserve(c, n) || (bs && !(buf = malloc((MFU__FC_COUNT + 1) * bs * sizeof *buf)))) {
        c->n = first;
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for the figures of %zu steps", n);
    }
    /* the rows are read from the run's columns, the members the rule reads and no others, into
     * two steps that take turns as the row and the one before it */
    for (size_t i = 0; i < bs; i++)
        buf[(size_t)MFU__FC_COUNT * bs + i] = NAN; /* the absent value's block (store_block) */
    rows_src src;
    src_init(&src, run);
    const double *rcol[MFU_COL_COUNT_];
    for (int q = 0; q < MFU_COL_COUNT_; q++)
        rcol[q] = c->lend ? mfu_run_column(run, (mfu_column)q) : NULL;
    mfu_step st[2];
    mfu_step_init(&st[0]);
    mfu_step_init(&st[1]);
    mfu_step *s = &st[0], *prev = &st[1];
    bool has_prev = first > 0;
    if (has_prev)
        src_get(&src, first - 1, prev);
    mfu__frow r;
    for (size_t a = first; a < n; a += rows) {
        size_t b = n - a < rows ? n : a + rows;
        for (size_t i = a; i < b; i++) {
            src_get(&src, i, s);
            mfu__figures_row(f, s, has_prev ? prev : NULL, i, &r);
            for (int k = 0; k < MFU__FC_COUNT; k++)
                buf[(size_t)k * bs + (i - a)] = r.v[k];
            c->recompute[i] = r.recompute;
            c->dtype[i] = r.dtype;
            c->tps_source[i] = r.tps_source;
            c->tok_source[i] = r.tok_source;
            c->flags[i] = r.flags;
            mfu_step *t = prev;
            prev = s;
            s = t;
            has_prev = true;
        }
        for (int k = 0; k < MFU__FC_COUNT; k++)
            if (!store_block(c, k, buf, bs, a, b, n, c->lend ? rcol : NULL)) {
                free(buf);
                c->n = first;
                return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for the figures of %zu steps",
                                 n);
            }
    }
    free(buf);
    c->n = n;
    if (f->prof && f->prof->mfu_ema > 0 && !replay_ema(c, first, f->prof->mfu_ema)) {
        c->n = first;
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for the figures of %zu steps", n);
    }
    if (!c->present[MFU__FC_REPORTED_MFU] && !c->present[MFU__FC_REPORTED_FLOPS_PER_S_PER_DEVICE] &&
        !c->present[MFU__FC_LOG_MFU] && !c->present[MFU__FC_LOG_PEAK] &&
        !c->present[MFU__FC_LOG_FPT]) {
        /* the log prints no MFU and no FLOP/s: log_figures would store NaN (nothing) in every
         * row and set the flags alone; the absent columns (NaN) are not read */
        const double *tpd = c->present[MFU__FC_OWN_TPD] ? c->v[MFU__FC_OWN_TPD] : NULL;
        const double *dev = c->present[MFU__FC_DEVICES] ? c->v[MFU__FC_DEVICES] : NULL;
        for (size_t i = first; i < n; i++) {
            uint8_t fl = c->flags[i] & (uint8_t) ~(MFU__FR_LOG_OWN_TPS | MFU__FR_LOG_PER_JOB |
                                                   MFU__FR_LOG_NO_PEAK);
            if (tpd && pos(tpd[i]))
                fl |= MFU__FR_LOG_OWN_TPS;
            else if (!dev || !pos(dev[i]))
                fl |= MFU__FR_LOG_PER_JOB;
            c->flags[i] = fl;
        }
        return MFU_OK;
    }
    for (size_t i = first; i < n; i++)
        if (!log_figures(c, f, i)) {
            c->n = first;
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for the figures of %zu steps", n);
        }
    return MFU_OK;
}

bool mfu__fcols_const(const mfu__fcols *c, int k, double *x)
{
    if (!c || k < 0 || k >= MFU__FC_COUNT || !c->n || !c->present[k])
        return false;
    int o = c->same[k] ? c->same[k] - 1 : k; /* a column that shares another's rows is it */
    if (!c->whole[o])
        return false;
    *x = c->v[o][0];
    return true;
}

bool mfu__fcols_adopt(mfu__fcols *c, mfu_run *run)
{
    for (int k = 0; k < MFU__FC_COUNT; k++) {
        if (!owns(c, k) || !c->lent[k])
            continue;
        size_t len;
        double *p = mfu__run_take_column(run, (mfu_column)(c->lent[k] - 1), &len);
        if (p == c->v[k]) {
            c->lent[k] = 0; /* c's now: freed with c (a mapping of the run's: util/pages.h) */
            c->mapped[k] = len;
            continue;
        }
        /* not the array lent (the run changed while it lent: against the contract): c's copy
         * of the rows instead, and what was taken is freed (the run keeps it no more) */
        bool ok = unlend(c, k, c->n, c->n);
        mfu__pages_free(p, len);
        if (!ok)
            return false;
    }
    c->lend = false;
    return true;
}

/* Whether every row of c with tokens has the same count; *t gets it (NaN when none). */
static bool constant_tokens(const mfu__fcols *c, double *t)
{
    double t0 = NAN;
    if (c->n && mfu__fcols_const(c, MFU__FC_TOKENS, &t0)) { /* its mapped rows stay unread */
        *t = isfinite(t0) ? t0 : NAN;
        return true;
    }
    bool same = true;
    for (size_t i = 0; i < c->n; i++) {
        double x = c->v[MFU__FC_TOKENS][i];
        if (!isfinite(x))
            continue;
        if (!isfinite(t0))
            t0 = x;
        else if (x != t0)
            same = false;
    }
    *t = t0;
    return same;
}

/* The median of the finite num[i] / den[i] with den[i] > 0, in row order (mfu__median_finite's),
 * fin room for n (NULL: none, NaN). */
static double ratio_median(const double *num, const double *den, size_t n, double *fin)
{
    size_t k = 0;
    for (size_t i = 0; fin && i < n; i++) {
        double t = den[i] > 0 ? num[i] / den[i] : NAN;
        if (isfinite(t))
            fin[k++] = t;
    }
    return mfu__median_inplace(fin, k);
}

/* The run-level figures of the context: tokens per step when constant, the log's implied peak
 * and FLOPs per token (medians over every row). */
static mfu_status run_level(mfu__fctx *f, const mfu__fcols *c, mfu_error *err)
{
    mfu_report_context *x = &f->c;
    double t0;
    bool same = constant_tokens(c, &t0);
    x->tokens_per_step = same ? t0 : NAN;
    if (isfinite(t0) && x->tokens_source == MFU_SRC_NONE)
        x->tokens_source = MFU_SRC_LOG;
    if (c->n == 0)
        return MFU_OK;
    /* the medians of the finite ratios in row order (mfu__median_finite's); without the log's
     * FLOP/s (NaN in every row) there are none, and no row is read */
    double *fin = NULL;
    const double *rf = c->v[MFU__FC_REPORTED_FLOPS_PER_S_PER_DEVICE];
    if (c->present[MFU__FC_REPORTED_FLOPS_PER_S_PER_DEVICE]) {
        fin = malloc(c->n * sizeof *fin);
        if (!fin)
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for the figures");
    }
    x->implied_peak_flops_per_s = ratio_median(rf, c->v[MFU__FC_REPORTED_MFU], c->n, fin);
    x->implied_flops_per_token = ratio_median(rf, c->v[MFU__FC_TOKENS_PER_S_PER_DEVICE], c->n, fin);
    free(fin);
    return MFU_OK;
}

/* Rows [first, n) of c again, then everything that depends on all rows: the real share (from
 * --real-tokens-per-step and a constant tokens per step; all rows again when it moves), the
 * context check (again until its verdicts stand: a tokens verdict changes the FLOPs check's
 * evidence; twice is the most a run needs), the run-level figures. *changed: the first row
 * whose figures may differ from before. */
static mfu_status settle(mfu__fctx *f, mfu__fcols *c, const mfu_run *run, size_t first,
                         size_t *changed, mfu_error *err)
{
    mfu_status st = mfu__fcols_build(c, f, run, first, err);
    if (st != MFU_OK)
        return st;
    size_t k = first;
    mfu_report_context *x = &f->c;
    if (f->in.real_tokens_per_step > 0) {
        double t0, rf = 1;
        bool same = constant_tokens(c, &t0);
        if (same && isfinite(t0) && f->in.real_tokens_per_step > t0)
            return mfu__fail_field(err, MFU_E_INVALID, "--real-tokens-per-step",
                                   "--real-tokens-per-step (%.0f) exceeds the tokens per step "
                                   "(%.0f): give the non-padding tokens of one step",
                                   f->in.real_tokens_per_step, t0);
        if (same && isfinite(t0))
            rf = f->in.real_tokens_per_step / t0;
        if (rf != x->real_fraction) {
            x->real_fraction = rf;
            k = 0;
            if ((st = mfu__fcols_build(c, f, run, 0, err)) != MFU_OK)
                return st;
        }
    }
    for (int pass = 0; pass < 4; pass++) {
        size_t ch = mfu__figures_check(f, c);
        if (ch == SIZE_MAX)
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for the context check");
        if (ch >= c->n)
            break;
        if (ch < k)
            k = ch;
        if ((st = mfu__fcols_build(c, f, run, ch, err)) != MFU_OK)
            return st;
    }
    *changed = k;
    return run_level(f, c, err);
}

mfu_status mfu__figures_compute(mfu__fctx *f, mfu__fcols *c, const mfu_run *run, mfu_error *err)
{
    size_t changed;
    mfu_status st = settle(f, c, run, 0, &changed, err);
    if (st == MFU_OK && f->in.real_tokens_per_step > 0 && f->c.real_fraction == 1 &&
        !isfinite(f->c.tokens_per_step))
        mfu__fctx_note(f, "--real-tokens-per-step needs a constant number of tokens per step: "
                          "give --tokens-per-step too; padding is not accounted");
    return st;
}

mfu_status mfu__figures_update(mfu__fctx *f, mfu__fcols *c, const mfu_run *run, size_t first,
                               size_t *changed, mfu_error *err)
{
    return settle(f, c, run, first, changed, err);
}
