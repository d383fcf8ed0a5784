/*
 * analysis.c - mfu_analyze(): the job's step series, derived per-step figures, which rows count,
 * then segments, levels, boundaries and findings; and the accessors of mfu/analysis.h.
 *
 * Per row (see mfu/analysis.h for the input columns):
 *   step time  = step_time_s, else tokens / tokens_per_s, else Δtime_s / Δstep
 *   tokens/s   = tokens_per_s when given (the caller's figure wins, to the bit), else tokens /
 *                step time; useful tokens/s = tokens/s × useful / counted
 *   MFU, HFU   = mfu / hfu when given, else useful tokens/s × model FLOPs per token ÷ capacity
 *                (counted tokens/s × hardware FLOPs per token ÷ capacity), capacity = devices ×
 *                peak
 *   the ratio-estimator pair (t, k) of the totals: with tokens_per_s given, k = tokens (or
 *   tokens_per_s × step time, or 1 when neither is known) and t = k / tokens_per_s; otherwise
 *   k = tokens and t = step time.
 * A row is usable when t, k (and, when the series has FLOPs per token and capacity anywhere,
 * those too) are finite and > 0 and no step time it has is <= 0. Of the usable rows, those
 * more than 5x faster than their median are timing artifacts (again after each removal), and
 * those with MFU or HFU above 100 % impossible: neither counts in a level (the detectors still
 * see them). FLOPs per token without any peak (a log that prints its TFLOP/s and no MFU, and
 * no device) is capacity-unknown: capacity is taken as the devices alone (a unit peak), MFU is
 * not shown, and the MFU term of a change is the change of achieved FLOP/s per device.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "util/util.h"

void mfu_analysis_options_init(mfu_analysis_options *o)
{
    memset(o, 0, sizeof *o);
    o->intervals = true;
    o->confidence = 0.95;
    o->size_threshold = 0.01;
    o->min_segment_steps = 10;
    o->changepoint_alpha = 1e-4;
    o->min_level_shift = 0.02;
    o->stall_min_share = 0.01;
    o->timer_min_share = 0.05;
    o->throttle_min_drop = 0.05;
    o->straggler_min = 0.03;
    o->detect_warmup = true;
    snprintf(o->rate_name, sizeof o->rate_name, "tokens/s");
}

/* Of the usable rows, those this many times faster than their median are timing artifacts. */
#define ARTIFACT_FACTOR 5.0
static mfu_status check_options(const mfu_analysis_options *o, mfu_error *err)
{
#define BAD(field, ...) return mfu__fail_field(err, MFU_E_INVALID, field, __VA_ARGS__)
    if (!(o->confidence > 0.5 && o->confidence < 1))
        BAD("confidence", "confidence must be in (0.5, 1), e.g. 0.95");
    if (!(o->size_threshold > 0 && o->size_threshold < 1))
        BAD("size_threshold", "size threshold must be a fraction in (0, 1), e.g. 0.01");
    if (o->min_segment_steps < 2 || o->min_segment_steps > 1000000)
        BAD("min_segment_steps", "minimum segment length must be 2..1000000 steps");
    if (!(o->changepoint_alpha > 0 && o->changepoint_alpha <= 0.5))
        BAD("changepoint_alpha", "change-point significance must be in (0, 0.5], e.g. 1e-4");
    if (!(o->min_level_shift >= 0 && o->min_level_shift < 1))
        BAD("min_level_shift", "minimum level shift must be a fraction in [0, 1), e.g. 0.02");
    if (!(o->stall_min_share > 0 && o->stall_min_share < 1))
        BAD("stall_min_share", "stall share must be a fraction in (0, 1), e.g. 0.01");
    if (!(o->timer_min_share > 0 && o->timer_min_share < 1))
        BAD("timer_min_share", "timer share must be a fraction in (0, 1), e.g. 0.05");
    if (!(o->throttle_min_drop > 0 && o->throttle_min_drop < 1))
        BAD("throttle_min_drop", "throttle drop must be a fraction in (0, 1), e.g. 0.05");
    if (!(o->straggler_min > 0 && o->straggler_min < 10))
        BAD("straggler_min", "straggler threshold must be a fraction > 0, e.g. 0.03");
#undef BAD
    return MFU_OK;
}

void mfu_analysis_free(mfu_analysis *a)
{
    if (!a)
        return;
    free(a->step);
    for (int c = 0; c < MFU_SC_COUNT_; c++)
        if (a->in_owned[c])
            free(a->in[c]);
    free(a->nan);
    for (int c = 0; c < MFU_D_COUNT_; c++)
        if (a->d[c] != a->nan)
            free(a->d[c]);
    free(a->flags);
    free(a->dtype);
    free(a->recompute);
    free(a->t);
    free(a->k);
    free(a->u);
    if (a->f != a->nan)
        free(a->f);
    if (a->h != a->nan)
        free(a->h);
    if (a->c != a->nan)
        free(a->c);
    free(a->usable);
    free(a->steady);
    free(a->state);
    free(a->seg);
    free(a->bnd);
    free(a->find);
    free(a->inv);
    free(a);
}

/* ---- the job's step series ---------------------------------------------------------------- */

typedef struct keyed {
    int64_t step;
    int32_t rank;
    size_t i;
} keyed;

static int cmp_keyed(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    if (a->step != b->step)
        return (a->step > b->step) - (a->step < b->step);
    if (a->rank != b->rank)
        return (a->rank > b->rank) - (a->rank < b->rank);
    return (a->i > b->i) - (a->i < b->i);
}

/* Rows for n steps; the input columns the series lacks share one column of NaNs (the step
 * time is always stored: the per-rank collapse writes it). */
static bool alloc_rows(mfu_analysis *a, mfu_series *s, size_t n, bool take)
{
    size_t m = n ? n : 1;
    bool ok = true;
    if (take) { /* the series's rows are the job's, in order: its arrays become the analysis's */
        a->step = s->step;
        a->flags = s->flags;
        a->dtype = s->dtype;
        a->recompute = s->recompute;
        s->step = NULL;
        s->flags = NULL;
        s->dtype = s->recompute = NULL;
    } else {
        ok = (a->step = malloc(m * sizeof *a->step)) && ok;
        ok = (a->flags = malloc(m * sizeof *a->flags)) && ok;
        ok = (a->dtype = malloc(m)) && ok;
        ok = (a->recompute = malloc(m)) && ok;
    }
    /* Without model FLOPs per token in the series no row has FLOPs (derive: has_flops), so
     * the FLOP columns are NaN in every row; without hardware FLOPs per token either and
     * without devices or peak, the FLOPs terms and the capacity are NaN too. Those share the
     * NaN column (derive writes NaN, the same bits, into it). */
    bool no_f = !s->present[MFU_SC_MODEL_FLOPS_PER_TOKEN];
    bool no_c = no_f && !s->present[MFU_SC_HARDWARE_FLOPS_PER_TOKEN] &&
                (!s->present[MFU_SC_DEVICES] || !s->present[MFU_SC_PEAK_FLOPS_PER_S]);
    if (take) { /* the series's NaN column too (n NaNs at least: it holds the rows); its
                 * ranks, all -1, are not needed (detect_straggler reads none) */
        a->nan = s->nan;
        s->nan = NULL;
        free(s->rank);
        s->rank = NULL;
    } else {
        a->nan = malloc(m * sizeof *a->nan);
        for (size_t i = 0; a->nan && i < m; i++)
            a->nan[i] = NAN;
    }
    ok = a->nan && ok;
    for (int c = 0; c < MFU_SC_COUNT_; c++) {
        a->in_owned[c] = s->present[c] || c == MFU_SC_STEP_TIME_S;
        if (take && s->present[c]) {
            a->in[c] = s->col[c];
            s->present[c] = false; /* the series no longer frees it */
        } else if (a->in_owned[c]) {
            ok = (a->in[c] = malloc(m * sizeof(double))) && ok;
            if (take && a->in[c] && a->nan) /* the step time no row has: NaN */
                memcpy(a->in[c], a->nan, n * sizeof(double));
        } else {
            a->in[c] = a->nan;
        }
    }
    for (int c = 0; c < MFU_D_COUNT_; c++) {
        bool flop_col = c == MFU_D_MFU || c == MFU_D_HFU ||
                        c == MFU_D_MODEL_FLOPS_PER_S_PER_DEVICE ||
                        c == MFU_D_HARDWARE_FLOPS_PER_S_PER_DEVICE;
        if ((flop_col && no_f) || (c == MFU_D_CAPACITY_FLOPS_PER_S && no_c))
            a->d[c] = a->nan;
        else
            ok = (a->d[c] = malloc(m * sizeof(double))) && ok;
    }
    ok = (a->t = malloc(m * sizeof(double))) && ok;
    ok = (a->k = malloc(m * sizeof(double))) && ok;
    ok = (a->u = malloc(m * sizeof(double))) && ok;
    if (no_c) {
        a->f = a->h = a->c = a->nan;
    } else {
        ok = (a->f = malloc(m * sizeof(double))) && ok;
        ok = (a->h = malloc(m * sizeof(double))) && ok;
        ok = (a->c = malloc(m * sizeof(double))) && ok;
    }
    ok = (a->usable = calloc(m, 1)) && ok;
    ok = (a->steady = calloc(m, 1)) && ok;
    ok = (a->state = calloc(m, 1)) && ok;
    a->n = n;
    return ok;
}

static void copy_row(mfu_analysis *a, size_t dst, const mfu_series *s, size_t src)
{
    for (int c = 0; c < MFU_SC_COUNT_; c++)
        if (a->in_owned[c])
            a->in[c][dst] = s->col[c][src];
    a->step[dst] = s->step[src];
    a->flags[dst] = s->flags[src];
    a->dtype[dst] = s->dtype[src];
    a->recompute[dst] = s->recompute[src];
}

/* Whole-job rows in order; or, without any, per-rank rows collapsed per step number. take:
 * a series of job rows only gives its columns to the analysis instead of a copy (s is then
 * left for mfu_series_free, and its per-rank reader, detect_straggler, which finds no rank
 * row). */
static bool build_rows(mfu_analysis *a, mfu_series *s, bool take)
{
    size_t njob = 0;
    for (size_t i = 0; i < s->n; i++)
        njob += s->rank[i] < 0;
    if (take && njob == s->n)
        return alloc_rows(a, s, njob, true);
    if (njob > 0) {
        if (!alloc_rows(a, s, njob, false))
            return false;
        size_t j = 0;
        for (size_t i = 0; i < s->n; i++)
            if (s->rank[i] < 0)
                copy_row(a, j++, s, i);
        return true;
    }
    keyed *kv = malloc((s->n ? s->n : 1) * sizeof *kv);
    if (!kv)
        return false;
    for (size_t i = 0; i < s->n; i++) {
        kv[i].step = s->step[i];
        kv[i].rank = s->rank[i];
        kv[i].i = i;
    }
    qsort(kv, s->n, sizeof *kv, cmp_keyed);
    size_t groups = 0;
    for (size_t i = 0; i < s->n; i++)
        groups += i == 0 || kv[i].step != kv[i - 1].step;
    if (!alloc_rows(a, s, groups, false)) {
        free(kv);
        return false;
    }
    size_t g = 0;
    for (size_t i = 0; i < s->n;) {
        size_t j = i;
        copy_row(a, g, s, kv[i].i); /* lowest rank's columns */
        double tmax = NAN;
        for (; j < s->n && kv[j].step == kv[i].step; j++) {
            double t = s->col[MFU_SC_STEP_TIME_S][kv[j].i];
            if (isfinite(t) && (isnan(tmax) || t > tmax))
                tmax = t;
            a->flags[g] |= s->flags[kv[j].i];
        }
        a->in[MFU_SC_STEP_TIME_S][g] = tmax;
        g++;
        i = j;
    }
    free(kv);
    return true;
}

static bool pos(double v)
{
    return isfinite(v) && v > 0;
}

static void derive(mfu_analysis *a)
{
    const double *T = a->in[MFU_SC_STEP_TIME_S], *TOK = a->in[MFU_SC_TOKENS];
    const double *TPS = a->in[MFU_SC_TOKENS_PER_S], *UT = a->in[MFU_SC_USEFUL_TOKENS];
    const double *F = a->in[MFU_SC_MODEL_FLOPS_PER_TOKEN];
    const double *H = a->in[MFU_SC_HARDWARE_FLOPS_PER_TOKEN];
    const double *DEV = a->in[MFU_SC_DEVICES], *PEAK = a->in[MFU_SC_PEAK_FLOPS_PER_S];
    const double *TIME = a->in[MFU_SC_TIME_S];
    const double *GM = a->in[MFU_SC_MFU], *GH = a->in[MFU_SC_HFU];
    bool any_f = false, any_c = false;
    for (size_t i = 0; i < a->n; i++) {
        if (pos(F[i])) {
            any_f = true;
            any_c = any_c || (pos(DEV[i]) && pos(PEAK[i])) || pos(GM[i]);
        }
    }
    a->has_flops = any_f;
    a->capacity_unknown = any_f && !any_c;
    for (size_t i = 0; i < a->n; i++) {
        double step_time = T[i];
        if (isnan(step_time) && isfinite(TOK[i]) && pos(TPS[i]))
            step_time = TOK[i] / TPS[i];
        /* from timestamps; equal ones (a coarse clock) give none, not a zero */
        if (isnan(step_time) && i > 0 && isfinite(TIME[i]) && isfinite(TIME[i - 1]) &&
            a->step[i] > a->step[i - 1] && TIME[i] > TIME[i - 1])
            step_time = (TIME[i] - TIME[i - 1]) / (double)(a->step[i] - a->step[i - 1]);
        double t = NAN, k = NAN;
        bool real_tokens = pos(TOK[i]);
        if (pos(TPS[i])) {
            if (real_tokens)
                k = TOK[i];
            else if (pos(step_time))
                k = TPS[i] * step_time;
            else
                k = 1;
            t = k / TPS[i];
        } else if (real_tokens && pos(step_time)) {
            k = TOK[i];
            t = step_time;
        }
        double u = (real_tokens && isfinite(UT[i])) ? UT[i] : k;
        double f = F[i];
        double dev = pos(DEV[i]) ? DEV[i] : a->capacity_unknown ? 1 : DEV[i];
        double c = a->capacity_unknown ? dev : DEV[i] * PEAK[i];
        /* no devices x peak but a given MFU: the capacity that MFU was measured against */
        if (!a->capacity_unknown && !pos(c) && pos(GM[i]) && pos(f) && pos(t) && pos(k))
            c = (isfinite(UT[i]) && real_tokens ? UT[i] : k) / t * f / GM[i];
        double h = isfinite(H[i]) ? H[i] : f;
        bool bad_time = isfinite(step_time) && step_time <= 0;
        bool ok = !bad_time && pos(t) && pos(k) && pos(u);
        if (a->has_flops)
            ok = ok && pos(f) && pos(c) && pos(h);
        a->usable[i] = ok;
        a->state[i] = ok ? MFU_ROW_STEADY : MFU_ROW_UNUSABLE;
        a->t[i] = ok ? t : NAN;
        a->k[i] = ok ? k : NAN;
        a->u[i] = ok ? u : NAN;
        a->f[i] = ok ? f : NAN;
        a->h[i] = ok ? h : NAN;
        a->c[i] = ok ? c : NAN;
        a->d[MFU_D_STEP_TIME_S][i] = step_time;
        bool rel = a->opt.flops_relative; /* FLOPs in units of an unknown peak: no FLOP/s */
        a->d[MFU_D_CAPACITY_FLOPS_PER_S][i] = pos(c) && !a->capacity_unknown && !rel ? c : NAN;
        if (ok) {
            double tps = pos(TPS[i]) ? TPS[i] : k / t;
            double utps = u == k ? tps : tps * (u / k);
            a->d[MFU_D_TOKENS_PER_S][i] = tps;
            a->d[MFU_D_USEFUL_TOKENS_PER_S][i] = utps;
            bool fl = a->has_flops, mf = fl && !a->capacity_unknown;
            a->d[MFU_D_MFU][i] = !mf ? NAN : isfinite(GM[i]) ? GM[i] : utps * f / c;
            a->d[MFU_D_HFU][i] = !mf ? NAN : isfinite(GH[i]) ? GH[i] : tps * h / c;
            a->d[MFU_D_MODEL_FLOPS_PER_S_PER_DEVICE][i] = fl && !rel ? utps * f / dev : NAN;
            a->d[MFU_D_HARDWARE_FLOPS_PER_S_PER_DEVICE][i] = fl && !rel ? tps * h / dev : NAN;
        } else {
            for (int col = MFU_D_TOKENS_PER_S; col <= MFU_D_HARDWARE_FLOPS_PER_S_PER_DEVICE; col++)
                a->d[col][i] = NAN;
        }
    }
    /* timing artifacts against the median of the usable rows, again after each removal (in a
     * short log one artifact moves the median); then impossible values */
    double *v = malloc((a->n ? a->n : 1) * sizeof *v);
    if (v) {
        for (size_t removed = 1; removed > 0;) {
            size_t m = 0;
            for (size_t i = 0; i < a->n; i++)
                if (a->usable[i])
                    v[m++] = a->d[MFU_D_TOKENS_PER_S][i];
            double med = mfu__median_inplace(v, m);
            removed = 0;
            for (size_t i = 0; i < a->n; i++)
                if (a->usable[i] && a->d[MFU_D_TOKENS_PER_S][i] > ARTIFACT_FACTOR * med) {
                    a->usable[i] = 0;
                    a->state[i] = MFU_ROW_ARTIFACT;
                    a->warmup.artifacts++;
                    removed++;
                }
        }
        free(v);
    }
    for (size_t i = 0; i < a->n; i++)
        if (a->usable[i] && (a->d[MFU_D_MFU][i] > 1 || a->d[MFU_D_HFU][i] > 1)) {
            a->usable[i] = 0;
            a->state[i] = MFU_ROW_IMPOSSIBLE;
            a->warmup.impossible++;
        }
}

size_t mfu__window_index(const mfu_analysis *a, mfu_window w, size_t *idx)
{
    size_t m = 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->steady[i] && a->step[i] >= w.first_step && a->step[i] <= w.last_step)
            idx[m++] = i;
    return m;
}

static bool levels_and_boundaries(mfu_analysis *a)
{
    size_t *idx = malloc((a->n ? a->n : 1) * sizeof *idx);
    size_t *jdx = malloc((a->n ? a->n : 1) * sizeof *jdx);
    bool ok = idx && jdx;
    mfu_window all = {INT64_MIN, INT64_MAX};
    size_t m = ok ? mfu__window_index(a, all, idx) : 0;
    memset(&a->steady_level, 0, sizeof a->steady_level);
    if (ok && m)
        ok = mfu__level_of(a, idx, m, &a->opt, &a->steady_level);
    if (ok && a->nseg > 1) {
        a->bnd = calloc(a->nseg - 1, sizeof *a->bnd);
        ok = a->bnd != NULL;
    }
    /* Segment levels first, then every boundary from the same levels (so a boundary's
     * from/to intervals are its segments' intervals). */
    for (size_t q = 0; ok && q < a->nseg; q++) {
        mfu_segment *g = &a->seg[q];
        size_t mi = 0;
        for (size_t i = g->first; i <= g->last; i++)
            if (a->steady[i])
                idx[mi++] = i;
        /* a segment that holds every steady row (one segment) has the steady rows' level:
         * the same rows, options and arithmetic */
        if (mi == m && m > 0)
            g->level = a->steady_level;
        else
            ok = mfu__level_of(a, idx, mi, &a->opt, &g->level);
    }
    for (size_t q = 0; ok && q + 1 < a->nseg; q++) {
        const mfu_segment *g = &a->seg[q], *h = &a->seg[q + 1];
        size_t mi = 0, mj = 0;
        for (size_t i = g->first; i <= g->last; i++)
            if (a->steady[i])
                idx[mi++] = i;
        for (size_t i = h->first; i <= h->last; i++)
            if (a->steady[i])
                jdx[mj++] = i;
        ok = mfu__decompose(a, idx, mi, &g->level, a, jdx, mj, &h->level, &a->opt, &a->bnd[q]);
    }
    free(idx);
    free(jdx);
    return ok;
}

static mfu_status analyze(mfu_series *series, bool take, const mfu_analysis_options *opts,
                          mfu_analysis **out, mfu_error *err)
{
    if (!series || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_analyze: series or out is NULL");
    *out = NULL;
    mfu_analysis_options o;
    if (opts)
        o = *opts;
    else
        mfu_analysis_options_init(&o);
    mfu_status st = check_options(&o, err);
    if (st != MFU_OK)
        return st;
    if (series->n == 0)
        return mfu__fail(err, MFU_E_EMPTY, 0,
                         "the series has no steps; give a log with step records");
    mfu_analysis *a = calloc(1, sizeof *a);
    if (!a)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory starting the analysis");
    a->opt = o;
    a->nlabels = series->nlabels;
    memcpy(a->labels, series->labels, sizeof a->labels);
    a->find = calloc(MFU_ANALYSIS_MAX_FINDINGS, sizeof *a->find);
    a->inv = calloc(MFU_ANALYSIS_MAX_INVARIANTS, sizeof *a->inv);
    bool ok = a->find && a->inv && build_rows(a, series, take);
    if (ok) {
        derive(a);
        ok = mfu__segment(a) && levels_and_boundaries(a) &&
             (a->opt.steady_only || mfu__detect(a, series));
    }
    if (!ok) {
        mfu_analysis_free(a);
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory analysing %zu steps", series->n);
    }
    if (a->warmup.steps) {
        double sum = 0;
        size_t c = 0;
        for (size_t i = 0; i < a->warmup.steps; i++)
            if (pos(a->d[MFU_D_STEP_TIME_S][i])) {
                sum += a->d[MFU_D_STEP_TIME_S][i];
                c++;
            }
        double ref = a->nseg ? a->seg[0].level.step_time_s.value : NAN;
        a->warmup.slowdown = (c && pos(ref)) ? sum / (double)c / ref - 1 : NAN;
    }
    *out = a;
    return MFU_OK;
}

mfu_status mfu_analyze(const mfu_series *series, const mfu_analysis_options *opts,
                       mfu_analysis **out, mfu_error *err)
{
    /* take = false reads the series only */
    return analyze((mfu_series *)(uintptr_t)series, false, opts, out, err);
}

mfu_status mfu__analyze_take(mfu_series *series, const mfu_analysis_options *opts,
                             mfu_analysis **out, mfu_error *err)
{
    return analyze(series, true, opts, out, err);
}

/* ---- accessors ---------------------------------------------------------------------------- */

size_t mfu_analysis_steps(const mfu_analysis *a)
{
    return a ? a->n : 0;
}

const int64_t *mfu_analysis_step_numbers(const mfu_analysis *a)
{
    return (a && a->n) ? a->step : NULL;
}

const double *mfu_analysis_derived(const mfu_analysis *a, mfu_derived col)
{
    if (!a || !a->n || (int)col < 0 || col >= MFU_D_COUNT_)
        return NULL;
    return a->d[col];
}

const double *mfu_analysis_input(const mfu_analysis *a, mfu_series_col col)
{
    if (!a || !a->n || (int)col < 0 || col >= MFU_SC_COUNT_)
        return NULL;
    return a->in[col];
}

const mfu_warmup *mfu_analysis_warmup(const mfu_analysis *a)
{
    return a ? &a->warmup : NULL;
}

const mfu_level *mfu_analysis_steady(const mfu_analysis *a)
{
    return a ? &a->steady_level : NULL;
}

bool mfu_analysis_is_steady(const mfu_analysis *a, size_t row)
{
    return a && row < a->n && a->steady[row];
}

mfu_row_state mfu_analysis_row_state(const mfu_analysis *a, size_t row)
{
    return a && row < a->n ? (mfu_row_state)a->state[row] : MFU_ROW_UNUSABLE;
}

const char *mfu_row_state_name(mfu_row_state s)
{
    static const char *const names[] = {"steady",   "warmup",     "settle",
                                        "artifact", "impossible", "unusable"};
    return (int)s >= 0 && (size_t)s < MFU__ARRAY_LEN(names) ? names[s] : "?";
}

size_t mfu_analysis_segment_count(const mfu_analysis *a)
{
    return a ? a->nseg : 0;
}

const mfu_segment *mfu_analysis_segment(const mfu_analysis *a, size_t i)
{
    return (a && i < a->nseg) ? &a->seg[i] : NULL;
}

const mfu_decomposition *mfu_analysis_boundary(const mfu_analysis *a, size_t i)
{
    return (a && a->nseg > 1 && i < a->nseg - 1) ? &a->bnd[i] : NULL;
}

size_t mfu_analysis_finding_count(const mfu_analysis *a)
{
    return a ? a->nfind : 0;
}

const mfu_finding *mfu_analysis_finding(const mfu_analysis *a, size_t i)
{
    return (a && i < a->nfind) ? &a->find[i] : NULL;
}

static bool kind_ok(const char *k)
{
    size_t n = 0;
    for (; k[n]; n++) {
        char c = k[n];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return n >= 1 && n < MFU_FINDING_KIND_MAX;
}

mfu_status mfu_analysis_add_finding(mfu_analysis *a, const mfu_finding *f, mfu_error *err)
{
    if (!a || !f)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_analysis_add_finding: NULL argument");
    if (!memchr(f->kind, 0, sizeof f->kind) || !kind_ok(f->kind))
        return mfu__fail_field(err, MFU_E_INVALID, "kind",
                               "finding kind must be 1..%d characters of a-z, 0-9 and _",
                               MFU_FINDING_KIND_MAX - 1);
    if (!memchr(f->summary, 0, sizeof f->summary) || !f->summary[0])
        return mfu__fail_field(err, MFU_E_INVALID, "summary",
                               "a finding needs a one-line summary (terminated string)");
    if (!memchr(f->next_step, 0, sizeof f->next_step) || !f->next_step[0])
        return mfu__fail_field(err, MFU_E_INVALID, "next_step",
                               "a finding needs a next step saying what to look at");
    if ((int)f->severity < MFU_SEV_INFO || f->severity > MFU_SEV_ERROR)
        return mfu__fail_field(err, MFU_E_INVALID, "severity",
                               "finding severity must be info, warning or error");
    mfu_finding copy = *f;
    if (copy.nevidence > MFU_FINDING_EVIDENCE_MAX)
        copy.nevidence = MFU_FINDING_EVIDENCE_MAX;
    for (size_t i = 0; i < copy.nevidence; i++)
        copy.evidence[i].name[sizeof copy.evidence[i].name - 1] = 0;
    if (!mfu__push_finding(a, &copy))
        return mfu__fail(err, MFU_E_LIMIT, 0,
                         "the analysis holds its limit of %d findings; add fewer",
                         MFU_ANALYSIS_MAX_FINDINGS);
    return MFU_OK;
}

mfu_status mfu_analysis_window_level(const mfu_analysis *a, mfu_window w,
                                     const mfu_analysis_options *opts, mfu_level *out,
                                     mfu_error *err)
{
    if (!a || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_analysis_window_level: NULL argument");
    const mfu_analysis_options *o = opts ? opts : &a->opt;
    mfu_status st = check_options(o, err);
    if (st != MFU_OK)
        return st;
    size_t *idx = malloc((a->n ? a->n : 1) * sizeof *idx);
    if (!idx)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    size_t m = mfu__window_index(a, w, idx);
    if (m == 0) {
        free(idx);
        return mfu__fail(err, MFU_E_EMPTY, 0,
                         "no steady step in steps %lld..%lld; choose a window after the warm-up",
                         (long long)w.first_step, (long long)w.last_step);
    }
    mfu_level lv;
    bool ok = mfu__level_of(a, idx, m, o, &lv);
    free(idx);
    if (!ok)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory computing levels");
    *out = lv;
    return MFU_OK;
}

mfu_status mfu_compare(const mfu_analysis *a, mfu_window wa, const mfu_analysis *b, mfu_window wb,
                       const mfu_analysis_options *opts, mfu_decomposition *out, mfu_error *err)
{
    if (!a || !b || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_compare: NULL argument");
    const mfu_analysis_options *o = opts ? opts : &a->opt;
    mfu_status st = check_options(o, err);
    if (st != MFU_OK)
        return st;
    size_t *ia = malloc((a->n ? a->n : 1) * sizeof *ia);
    size_t *ib = malloc((b->n ? b->n : 1) * sizeof *ib);
    if (!ia || !ib) {
        free(ia);
        free(ib);
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    }
    size_t ma = mfu__window_index(a, wa, ia), mb = mfu__window_index(b, wb, ib);
    if (ma == 0 || mb == 0) {
        free(ia);
        free(ib);
        return mfu__fail(err, MFU_E_EMPTY, 0,
                         "no steady step in the %s window (steps %lld..%lld); choose a window "
                         "after the warm-up",
                         ma == 0 ? "first" : "second",
                         (long long)(ma == 0 ? wa.first_step : wb.first_step),
                         (long long)(ma == 0 ? wa.last_step : wb.last_step));
    }
    mfu_decomposition d;
    bool ok = mfu__decompose(a, ia, ma, NULL, b, ib, mb, NULL, o, &d);
    free(ia);
    free(ib);
    if (!ok)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory comparing windows");
    *out = d;
    return MFU_OK;
}

const char *mfu_term_name(mfu_term t)
{
    static const char *const names[MFU_TERM_COUNT_] = {"tokens_per_second", "mfu", "capacity",
                                                       "flops_per_token", "padding"};
    return ((int)t >= 0 && t < MFU_TERM_COUNT_) ? names[t] : "unknown";
}

const char *mfu_severity_name(mfu_severity s)
{
    switch (s) {
    case MFU_SEV_INFO: return "info";
    case MFU_SEV_WARNING: return "warning";
    case MFU_SEV_ERROR: return "error";
    }
    return "unknown";
}

const char *mfu_cause_name(mfu_segment_cause c)
{
    switch (c) {
    case MFU_CAUSE_START: return "start";
    case MFU_CAUSE_CONFIG: return "config";
    case MFU_CAUSE_LEVEL: return "level";
    }
    return "unknown";
}
