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

/* The doubles of one block of two slots. */
static size_t work_doubles(const mfu_analysis *a)
{
    return 2 * (a->n + MFU__WORK_PAD);
}

void *mfu__work(mfu_analysis *a, int k)
{
    _Static_assert(sizeof(size_t) <= sizeof(double), "a slot holds either");
    _Static_assert(MFU__WORK % 2 == 0, "slots come in pairs");
    int even = k & ~1;
    if (!a->work[even]) {
        double *p = malloc(work_doubles(a) * sizeof(double));
        a->work[even] = p;
        a->work[even + 1] = p ? p + a->n + MFU__WORK_PAD : NULL;
    }
    return a->work[k];
}

const uint8_t *mfu__analysis_steady_rows(const mfu_analysis *a)
{
    return a && a->n ? a->steady : NULL;
}

double *mfu__analysis_take_work(mfu_analysis *a, size_t *doubles)
{
    *doubles = 0;
    if (!a)
        return NULL;
    double *p = a->work[0];
    a->work[0] = a->work[1] = NULL;
    mfu__work_free(a); /* the other pair goes */
    if (p)
        *doubles = work_doubles(a);
    return p;
}

void mfu__work_free(mfu_analysis *a)
{
    for (int k = 0; k < MFU__WORK; k += 2)
        free(a->work[k]);
    for (int k = 0; k < MFU__WORK; k++)
        a->work[k] = NULL;
}

void mfu_analysis_free(mfu_analysis *a)
{
    if (!a)
        return;
    mfu__work_free(a);
    for (size_t i = 0; i < a->nown; i++)
        free(a->own[i]);
    free(a->seg);
    free(a->bnd);
    free(a->find);
    free(a->inv);
    free(a);
}

/* ---- the per-row arrays: the analysis's own, or the caller's ------------------------------ */

/* p (malloc'ed, may be NULL) becomes a's to free; false (p freed) when a's list is full. */
static bool own_take(mfu_analysis *a, void *p)
{
    if (!p)
        return false;
    if (a->nown == MFU__ANALYSIS_MAX_OWN) {
        free(p);
        return false;
    }
    a->own[a->nown++] = p;
    return true;
}

/* bytes (at least 1) that a frees; NULL when out of memory. */
static void *own_alloc(mfu_analysis *a, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    return own_take(a, p) ? p : NULL;
}

/* Zeroed bytes that a frees. calloc: the pages of a large one stay the kernel's zero page
 * until written, so a column of zeros that is only read costs no memory. */
static void *own_zeros(mfu_analysis *a, size_t bytes)
{
    void *p = calloc(bytes ? bytes : 1, 1);
    return own_take(a, p) ? p : NULL;
}

static bool owns(const mfu_analysis *a, const void *p)
{
    for (size_t i = 0; i < a->nown; i++)
        if (a->own[i] == p)
            return true;
    return false;
}

/* *field (size bytes), when it is the caller's, replaced by a's own copy. */
static bool own_copy(mfu_analysis *a, const void **field, size_t size)
{
    if (!*field || owns(a, *field))
        return true;
    void *q = own_alloc(a, size);
    if (!q)
        return false;
    memcpy(q, *field, size);
    *field = q;
    return true;
}

/* The views of a's terms (internal.h, mfu__view): after derive, and after the columns move. */
static void set_views(mfu_analysis *a)
{
    a->kv = mfu__view_of(a, a->k);
    a->uv = mfu__view_of(a, a->u);
    a->fv = mfu__view_of(a, a->f);
    a->hv = mfu__view_of(a, a->h);
    a->cv = mfu__view_of(a, a->c);
    a->tpsv = mfu__view_of(a, a->in[MFU_SC_TOKENS_PER_S]);
}

bool mfu__analysis_own(mfu_analysis *a)
{
    if (!a || a->n == 0)
        return true;
    size_t n = a->n;
    /* every double column, so that columns that are one (an alias) stay one */
    const double **dc[MFU_SC_COUNT_ + MFU_D_COUNT_ + 7];
    size_t k = 0;
    dc[k++] = &a->nan; /* the caller's NaN column (mfu__analyze_cols), or a's own */
    for (int c = 0; c < MFU_SC_COUNT_; c++)
        dc[k++] = &a->in[c];
    for (int c = 0; c < MFU_D_COUNT_; c++)
        dc[k++] = &a->d[c];
    dc[k++] = &a->t;
    dc[k++] = &a->k;
    dc[k++] = &a->u;
    dc[k++] = &a->f;
    dc[k++] = &a->h;
    dc[k++] = &a->c;
    for (size_t i = 0; i < k; i++) {
        const double *p = *dc[i];
        if (!p || owns(a, p))
            continue;
        double *q = own_alloc(a, n * sizeof *q);
        if (!q)
            return false;
        memcpy(q, p, n * sizeof *q);
        for (size_t j = i; j < k; j++)
            if (*dc[j] == p)
                *dc[j] = q;
    }
    const void *step = a->step, *flags = a->flags, *dt = a->dtype, *rc = a->recompute;
    bool ok = own_copy(a, &step, n * sizeof *a->step) &&
              own_copy(a, &flags, n * sizeof *a->flags) && own_copy(a, &dt, n) &&
              own_copy(a, &rc, n);
    a->step = step;
    a->flags = flags;
    a->dtype = dt;
    a->recompute = rc;
    a->nkonst = 0; /* the copies are a's own columns: read as any */
    set_views(a);
    return ok;
}

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

/* The arrays a copy of rows writes (build_rows), a's own. */
typedef struct rows_w {
    double *in[MFU_SC_COUNT_]; /* NULL: the column is absent (a->nan) */
    int64_t *step;
    uint32_t *flags;
    uint8_t *dtype, *recompute;
} rows_w;

/* a's input columns for n rows, its own: those the series has, and the step time (the
 * per-rank collapse writes it); the rest are a->nan. */
static bool alloc_rows(mfu_analysis *a, const mfu_series *s, size_t n, rows_w *w)
{
    size_t m = n ? n : 1;
    memset(w, 0, sizeof *w);
    w->step = own_alloc(a, m * sizeof *w->step);
    w->flags = own_alloc(a, m * sizeof *w->flags);
    w->dtype = own_alloc(a, m);
    w->recompute = own_alloc(a, m);
    bool ok = w->step && w->flags && w->dtype && w->recompute;
    a->step = w->step;
    a->flags = w->flags;
    a->dtype = w->dtype;
    a->recompute = w->recompute;
    for (int c = 0; c < MFU_SC_COUNT_; c++) {
        if (s->present[c] || c == MFU_SC_STEP_TIME_S) {
            w->in[c] = own_alloc(a, m * sizeof(double));
            ok = w->in[c] && ok;
        }
        a->in[c] = w->in[c] ? w->in[c] : a->nan;
    }
    a->n = n;
    return ok;
}

static void copy_row(rows_w *w, size_t dst, const mfu_series *s, size_t src)
{
    for (int c = 0; c < MFU_SC_COUNT_; c++)
        if (w->in[c])
            w->in[c][dst] = s->col[c][src];
    w->step[dst] = s->step[src];
    w->flags[dst] = s->flags[src];
    w->dtype[dst] = s->dtype[src];
    w->recompute[dst] = s->recompute[src];
}

/* a->nan: n NaNs (at least one), the column of every absent input. */
static bool alloc_nan(mfu_analysis *a, size_t n)
{
    size_t m = n ? n : 1;
    double *nan = own_alloc(a, m * sizeof *nan);
    for (size_t i = 0; nan && i < m; i++)
        nan[i] = NAN;
    a->nan = nan;
    return nan != NULL;
}

/* The input rows of a from series s: whole-job rows in order, read where they are (a series
 * of job rows only: its columns, copied by mfu__analysis_own when the analysis is done) or
 * copied; or, without any, per-rank rows collapsed per step number. */
static bool build_rows(mfu_analysis *a, const mfu_series *s)
{
    size_t njob = 0;
    for (size_t i = 0; i < s->n; i++)
        njob += s->rank[i] < 0;
    if (!alloc_nan(a, njob ? njob : s->n))
        return false;
    if (njob == s->n) {
        a->n = s->n;
        a->step = s->step;
        a->flags = s->flags;
        a->dtype = s->dtype;
        a->recompute = s->recompute;
        for (int c = 0; c < MFU_SC_COUNT_; c++)
            a->in[c] = s->present[c] ? s->col[c] : a->nan;
        return true;
    }
    rows_w w;
    if (njob > 0) {
        if (!alloc_rows(a, s, njob, &w))
            return false;
        size_t j = 0;
        for (size_t i = 0; i < s->n; i++)
            if (s->rank[i] < 0)
                copy_row(&w, j++, s, i);
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
    if (!alloc_rows(a, s, groups, &w)) {
        free(kv);
        return false;
    }
    size_t g = 0;
    for (size_t i = 0; i < s->n;) {
        size_t j = i;
        copy_row(&w, g, s, kv[i].i); /* lowest rank's columns */
        double tmax = NAN;
        for (; j < s->n && kv[j].step == kv[i].step; j++) {
            double t = s->col[MFU_SC_STEP_TIME_S][kv[j].i];
            if (isfinite(t) && (isnan(tmax) || t > tmax))
                tmax = t;
            w.flags[g] |= s->flags[kv[j].i];
        }
        w.in[MFU_SC_STEP_TIME_S][g] = tmax;
        g++;
        i = j;
    }
    free(kv);
    return true;
}

/* A derived column written row by row (derive) that stays the column it is expected to equal
 * (an input, the caller's hint, or a->nan) while every value written is that column's, to the
 * bit; at the first that is not, it becomes a column of a's own, the rows before copied. So a
 * figure the caller already holds costs no memory. */
typedef struct lazy {
    const double **field; /* where the column goes */
    const double *alias;  /* NULL once it is a's own */
    mfu__view view;       /* alias's rows as read (internal.h: not the NaN column's pages) */
    double *buf;
} lazy;

static bool lazy_start(mfu_analysis *a, lazy *l, const double **field, const double *alias)
{
    l->field = field;
    l->alias = alias;
    l->buf = NULL;
    l->view = mfu__view_of(a, alias);
    if (!alias) {
        l->buf = own_alloc(a, (a->n ? a->n : 1) * sizeof *l->buf);
        *field = l->buf;
        return l->buf != NULL;
    }
    *field = alias;
    return true;
}

static bool lazy_own(mfu_analysis *a, lazy *l, size_t rows)
{
    l->buf = own_alloc(a, (a->n ? a->n : 1) * sizeof *l->buf);
    if (!l->buf)
        return false;
    for (size_t i = 0; i < rows; i++)
        l->buf[i] = MFU__AT(l->view, i);
    l->alias = NULL;
    *l->field = l->buf;
    return true;
}

/* Row i of l is v; false when out of memory. */
static inline bool lazy_put(mfu_analysis *a, lazy *l, size_t i, double v)
{
    if (l->buf) {
        l->buf[i] = v;
        return true;
    }
    uint64_t x, y;
    memcpy(&x, &v, sizeof x);
    memcpy(&y, &MFU__AT(l->view, i), sizeof y);
    if (x == y)
        return true;
    if (!lazy_own(a, l, i))
        return false;
    l->buf[i] = v;
    return true;
}

static bool pos(double v)
{
    return isfinite(v) && v > 0;
}

/* The derived columns of a: the per-row loop of the file comment. hint (NULL, or
 * MFU_D_COUNT_ columns, NULL entries) gives columns the caller expects derived ones to equal
 * (lazy). false when out of memory. */
static bool derive(mfu_analysis *a, const double *const *hint)
{
    /* every input read through a view: an absent one is one NaN, not the NaN column, and a
     * column of one value is that value */
    a->nan1 = a->n ? a->nan[0] : NAN; /* the one NaN every view of the NaN column reads */
    mfu__view T = mfu__view_of(a, a->in[MFU_SC_STEP_TIME_S]);
    mfu__view TOK = mfu__view_of(a, a->in[MFU_SC_TOKENS]);
    mfu__view TPS = mfu__view_of(a, a->in[MFU_SC_TOKENS_PER_S]);
    mfu__view UT = mfu__view_of(a, a->in[MFU_SC_USEFUL_TOKENS]);
    mfu__view F = mfu__view_of(a, a->in[MFU_SC_MODEL_FLOPS_PER_TOKEN]);
    mfu__view H = mfu__view_of(a, a->in[MFU_SC_HARDWARE_FLOPS_PER_TOKEN]);
    mfu__view DEV = mfu__view_of(a, a->in[MFU_SC_DEVICES]);
    mfu__view PEAK = mfu__view_of(a, a->in[MFU_SC_PEAK_FLOPS_PER_S]);
    mfu__view TIME = mfu__view_of(a, a->in[MFU_SC_TIME_S]);
    mfu__view GM = mfu__view_of(a, a->in[MFU_SC_MFU]);
    mfu__view GH = mfu__view_of(a, a->in[MFU_SC_HFU]);
    bool any_f = false, any_c = false;
    for (size_t i = 0; i < a->n; i++) {
        if (pos(MFU__AT(F, i))) {
            any_f = true;
            any_c = any_c || (pos(MFU__AT(DEV, i)) && pos(MFU__AT(PEAK, i))) || pos(MFU__AT(GM, i));
        }
    }
    a->has_flops = any_f;
    a->capacity_unknown = any_f && !any_c;
    /* each column starts as the one it most often equals */
    const double *like[MFU_D_COUNT_];
    for (int c = 0; c < MFU_D_COUNT_; c++)
        like[c] = a->nan;
    like[MFU_D_STEP_TIME_S] = a->in[MFU_SC_STEP_TIME_S];
    like[MFU_D_TOKENS_PER_S] = like[MFU_D_USEFUL_TOKENS_PER_S] = a->in[MFU_SC_TOKENS_PER_S];
    like[MFU_D_MFU] = a->in[MFU_SC_MFU];
    like[MFU_D_HFU] = a->in[MFU_SC_HFU];
    lazy D[MFU_D_COUNT_], Lk, Lu, Lf, Lh, Lc;
    bool ok = true;
    for (int c = 0; c < MFU_D_COUNT_; c++)
        ok = lazy_start(a, &D[c], &a->d[c], hint && hint[c] ? hint[c] : like[c]) && ok;
    const double *iTOK = a->in[MFU_SC_TOKENS];
    const double *iUT = a->in[MFU_SC_USEFUL_TOKENS], *iF = a->in[MFU_SC_MODEL_FLOPS_PER_TOKEN];
    const double *iH = a->in[MFU_SC_HARDWARE_FLOPS_PER_TOKEN];
    /* t is k / tokens/s in every usable row where the tokens/s is positive: while all usable
     * rows so far are such, it is not stored (a->t NULL: mfu__t computes it, the same division
     * to the bit), and it is stored from the first that is not (the rows before computed) */
    double *tbuf = NULL; /* t's array, from the first usable row without a tokens/s */
    ok = lazy_start(a, &Lk, &a->k, iTOK) && ok;
    ok = lazy_start(a, &Lu, &a->u, iUT != a->nan ? iUT : iTOK) && ok;
    ok = lazy_start(a, &Lf, &a->f, iF) && ok;
    ok = lazy_start(a, &Lh, &a->h, iH != a->nan ? iH : iF) && ok;
    ok = lazy_start(a, &Lc, &a->c, a->nan) && ok;
    uint8_t *usable = own_zeros(a, a->n), *state = own_zeros(a, a->n);
    a->usable = usable;
    a->state = state;
    if (!ok || !usable || !state)
        return false;
    for (size_t i = 0; i < a->n && ok; i++) {
        double step_time = MFU__AT(T, i);
        if (isnan(step_time) && isfinite(MFU__AT(TOK, i)) && pos(MFU__AT(TPS, i)))
            step_time = MFU__AT(TOK, i) / MFU__AT(TPS, i);
        /* from timestamps; equal ones (a coarse clock) give none, not a zero */
        if (isnan(step_time) && i > 0 && isfinite(MFU__AT(TIME, i)) &&
            isfinite(MFU__AT(TIME, i - 1)) && a->step[i] > a->step[i - 1] &&
            MFU__AT(TIME, i) > MFU__AT(TIME, i - 1))
            step_time =
                (MFU__AT(TIME, i) - MFU__AT(TIME, i - 1)) / (double)(a->step[i] - a->step[i - 1]);
        double t = NAN, k = NAN;
        bool real_tokens = pos(MFU__AT(TOK, i));
        if (pos(MFU__AT(TPS, i))) {
            if (real_tokens)
                k = MFU__AT(TOK, i);
            else if (pos(step_time))
                k = MFU__AT(TPS, i) * step_time;
            else
                k = 1;
            t = k / MFU__AT(TPS, i);
        } else if (real_tokens && pos(step_time)) {
            k = MFU__AT(TOK, i);
            t = step_time;
        }
        double u = (real_tokens && isfinite(MFU__AT(UT, i))) ? MFU__AT(UT, i) : k;
        double f = MFU__AT(F, i);
        double dev = pos(MFU__AT(DEV, i))  ? MFU__AT(DEV, i)
                     : a->capacity_unknown ? 1
                                           : MFU__AT(DEV, i);
        double c = a->capacity_unknown ? dev : MFU__AT(DEV, i) * MFU__AT(PEAK, i);
        /* no devices x peak but a given MFU: the capacity that MFU was measured against */
        if (!a->capacity_unknown && !pos(c) && pos(MFU__AT(GM, i)) && pos(f) && pos(t) && pos(k))
            c = (isfinite(MFU__AT(UT, i)) && real_tokens ? MFU__AT(UT, i) : k) / t * f /
                MFU__AT(GM, i);
        double h = isfinite(MFU__AT(H, i)) ? MFU__AT(H, i) : f;
        bool bad_time = isfinite(step_time) && step_time <= 0;
        bool use = !bad_time && pos(t) && pos(k) && pos(u);
        if (a->has_flops)
            use = use && pos(f) && pos(c) && pos(h);
        usable[i] = use;
        state[i] = use ? MFU_ROW_STEADY : MFU_ROW_UNUSABLE;
        if (!tbuf && use && !pos(MFU__AT(TPS, i))) {
            tbuf = own_alloc(a, a->n * sizeof *tbuf);
            if (!tbuf)
                return false;
            for (size_t j = 0; j < i; j++)
                tbuf[j] =
                    usable[j] ? (Lk.buf ? Lk.buf[j] : MFU__AT(Lk.view, j)) / MFU__AT(TPS, j) : NAN;
        }
        if (tbuf)
            tbuf[i] = use ? t : NAN;
        ok = lazy_put(a, &Lk, i, use ? k : NAN) && lazy_put(a, &Lu, i, use ? u : NAN) &&
             lazy_put(a, &Lf, i, use ? f : NAN) && lazy_put(a, &Lh, i, use ? h : NAN) &&
             lazy_put(a, &Lc, i, use ? c : NAN);
        bool rel = a->opt.flops_relative; /* FLOPs in units of an unknown peak: no FLOP/s */
        double v[MFU_D_COUNT_];
        v[MFU_D_STEP_TIME_S] = step_time;
        v[MFU_D_CAPACITY_FLOPS_PER_S] = pos(c) && !a->capacity_unknown && !rel ? c : NAN;
        if (use) {
            double tps = pos(MFU__AT(TPS, i)) ? MFU__AT(TPS, i) : k / t;
            double utps = u == k ? tps : tps * (u / k);
            v[MFU_D_TOKENS_PER_S] = tps;
            v[MFU_D_USEFUL_TOKENS_PER_S] = utps;
            bool fl = a->has_flops, mf = fl && !a->capacity_unknown;
            v[MFU_D_MFU] = !mf ? NAN : isfinite(MFU__AT(GM, i)) ? MFU__AT(GM, i) : utps * f / c;
            v[MFU_D_HFU] = !mf ? NAN : isfinite(MFU__AT(GH, i)) ? MFU__AT(GH, i) : tps * h / c;
            v[MFU_D_MODEL_FLOPS_PER_S_PER_DEVICE] = fl && !rel ? utps * f / dev : NAN;
            v[MFU_D_HARDWARE_FLOPS_PER_S_PER_DEVICE] = fl && !rel ? tps * h / dev : NAN;
        } else {
            for (int col = MFU_D_TOKENS_PER_S; col <= MFU_D_HARDWARE_FLOPS_PER_S_PER_DEVICE; col++)
                v[col] = NAN;
        }
        for (int col = 0; col < MFU_D_COUNT_ && ok; col++)
            ok = lazy_put(a, &D[col], i, v[col]);
    }
    if (!ok)
        return false;
    a->t = tbuf; /* NULL: k / tokens/s (mfu__t) */
    set_views(a);
    /* timing artifacts against the median of the usable rows, again after each removal (in a
     * short log one artifact moves the median); then impossible values */
    double *v = malloc((a->n ? a->n : 1) * sizeof *v);
    a->steady = own_zeros(a, a->n);
    if (!v || !a->steady) {
        free(v);
        return false;
    }
    {
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
    /* (an absent MFU and HFU are the NaN column: no row is over 1, and its pages stay unread) */
    bool any_mfu = a->d[MFU_D_MFU] != a->nan || a->d[MFU_D_HFU] != a->nan;
    for (size_t i = 0; any_mfu && i < a->n; i++)
        if (a->usable[i] && (a->d[MFU_D_MFU][i] > 1 || a->d[MFU_D_HFU][i] > 1)) {
            a->usable[i] = 0;
            a->state[i] = MFU_ROW_IMPOSSIBLE;
            a->warmup.impossible++;
        }
    return true;
}

size_t mfu__window_index(const mfu_analysis *a, mfu_window w, size_t *idx)
{
    size_t m = 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->steady[i] && a->step[i] >= w.first_step && a->step[i] <= w.last_step)
            idx[m++] = i;
    return m;
}

/* Scratch for mfu__level_of of m rows while the levels' rows are in slot 0: slot 1 (which the
 * segment search wrote: no fresh pages) where it is large enough, else slots 2-3 (one block of
 * 2 n), else NULL (level_of's own). */
static double *level_tmp(mfu_analysis *a, size_t m)
{
    size_t need = mfu__level_scratch(m), slot = a->n + MFU__WORK_PAD;
    return need <= slot ? mfu__work(a, 1) : need <= 2 * slot ? mfu__work(a, 2) : NULL;
}

static bool levels_and_boundaries(mfu_analysis *a)
{
    size_t *idx = mfu__work(a, 0);
    size_t *jdx = mfu__work(a, 1);
    bool ok = idx && jdx;
    mfu_window all = {INT64_MIN, INT64_MAX};
    size_t m = ok ? mfu__window_index(a, all, idx) : 0;
    memset(&a->steady_level, 0, sizeof a->steady_level);
    if (ok && m)
        ok = mfu__level_of(a, idx, m, &a->opt, &a->steady_level, level_tmp(a, m));
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
            ok = mfu__level_of(a, idx, mi, &a->opt, &g->level, level_tmp(a, mi));
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
    return ok;
}

/* *out: a new analysis with options opts (NULL = defaults), checked. */
static mfu_status start(const mfu_analysis_options *opts, mfu_analysis **out, mfu_error *err)
{
    *out = NULL;
    mfu_analysis_options o;
    if (opts)
        o = *opts;
    else
        mfu_analysis_options_init(&o);
    mfu_status st = check_options(&o, err);
    if (st != MFU_OK)
        return st;
    mfu_analysis *a = calloc(1, sizeof *a);
    if (a) {
        a->opt = o;
        a->find = calloc(MFU_ANALYSIS_MAX_FINDINGS, sizeof *a->find);
        a->inv = calloc(MFU_ANALYSIS_MAX_INVARIANTS, sizeof *a->inv);
    }
    if (!a || !a->find || !a->inv) {
        mfu_analysis_free(a);
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory starting the analysis");
    }
    *out = a;
    return MFU_OK;
}

/* Everything after the input rows: derived columns, segments, levels, boundaries, findings
 * (ranks: the per-rank rows for the straggler detector, NULL for none). */
static bool finish(mfu_analysis *a, const double *const *hint, const mfu_series *ranks)
{
    static const mfu_series no_ranks; /* no rows: detect_straggler finds none */
    bool ok = derive(a, hint) && mfu__segment(a) && levels_and_boundaries(a) &&
              (a->opt.steady_only || mfu__detect(a, ranks ? ranks : &no_ranks));
    if (!ok || !a->keep_work)
        mfu__work_free(a);
    if (!ok)
        return false;
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
    return true;
}

mfu_status mfu_analyze(const mfu_series *series, const mfu_analysis_options *opts,
                       mfu_analysis **out, mfu_error *err)
{
    if (!series || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_analyze: series or out is NULL");
    *out = NULL;
    mfu_analysis *a;
    mfu_status st = start(opts, &a, err);
    if (st != MFU_OK)
        return st;
    if (series->n == 0) {
        mfu_analysis_free(a);
        return mfu__fail(err, MFU_E_EMPTY, 0,
                         "the series has no steps; give a log with step records");
    }
    a->nlabels = series->nlabels;
    memcpy(a->labels, series->labels, sizeof a->labels);
    /* the series stays the caller's: what the analysis reads of it in place is copied last */
    if (!build_rows(a, series) || !finish(a, NULL, series) || !mfu__analysis_own(a)) {
        mfu_analysis_free(a);
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory analysing %zu steps", series->n);
    }
    *out = a;
    return MFU_OK;
}

mfu_status mfu__analyze_cols(mfu__analysis_cols *in, const mfu_series *ranks,
                             const mfu_analysis_options *opts, mfu_analysis **out, mfu_error *err)
{
    mfu_analysis *a = NULL;
    mfu_status st = MFU_OK;
    size_t ngive = in ? in->ngive : 0;
    if (ngive > MFU__ARRAY_LEN(in->give)) {
        ngive = MFU__ARRAY_LEN(in->give);
        st = mfu__fail(err, MFU_E_INVALID, 0, "mfu__analyze_cols: ngive is over %zu", ngive);
    } else if (!in || !out || (in->n && !in->step))
        st = mfu__fail(err, MFU_E_INVALID, 0, "mfu__analyze_cols: in, in->step or out is NULL");
    else
        st = start(opts, &a, err);
    for (size_t i = 0; i < ngive; i++) /* a's from now on, whatever happens */
        if (in->give[i] && (!a || !own_take(a, in->give[i]))) {
            if (a)
                st = mfu__fail(err, MFU_E_LIMIT, 0, "mfu__analyze_cols: too many columns given");
            else
                free(in->give[i]);
        }
    if (in)
        in->ngive = 0;
    if (out)
        *out = NULL;
    if (st == MFU_OK && in->n == 0)
        st =
            mfu__fail(err, MFU_E_EMPTY, 0, "the series has no steps; give a log with step records");
    if (st != MFU_OK) {
        mfu_analysis_free(a);
        return st;
    }
    size_t n = in->n;
    a->nlabels = in->nlabels < 0                       ? 0
                 : in->nlabels > MFU_SERIES_MAX_LABELS ? MFU_SERIES_MAX_LABELS
                                                       : in->nlabels;
    memcpy(a->labels, in->labels, sizeof a->labels);
    bool ok = in->nan && n ? (a->nan = in->nan) != NULL : alloc_nan(a, n);
    a->n = n;
    a->step = in->step;
    a->keep_work = in->keep_work;
    a->flags = in->flags ? in->flags : own_zeros(a, n * sizeof *a->flags);
    a->dtype = in->dtype ? in->dtype : own_zeros(a, n);
    a->recompute = in->recompute ? in->recompute : own_zeros(a, n);
    for (int c = 0; c < MFU_SC_COUNT_; c++)
        a->in[c] = in->col[c] ? in->col[c] : a->nan;
    a->nkonst = 0;
    for (int c = 0; ok && n && c < MFU_SC_COUNT_; c++) {
        const double *p = in->col[c];
        if (!p || !in->whole[c] || p == a->nan || mfu__view_of(a, p).m == 0)
            continue; /* not one value, or listed already */
        a->konst[a->nkonst].p = p;
        a->konst[a->nkonst++].v = p[0];
    }
    ok = ok && a->flags && a->dtype && a->recompute && finish(a, in->hint, ranks);
    if (!ok) {
        mfu_analysis_free(a);
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory analysing %zu steps", n);
    }
    *out = a;
    return MFU_OK;
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
    bool ok = mfu__level_of(a, idx, m, o, &lv, NULL);
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
