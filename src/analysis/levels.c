/*
 * levels.c - levels of a window of steps, the decomposition between two windows, their
 * moving-block bootstrap intervals, and the sentence that says it in words.
 *
 * Levels are ratio estimators over the window's rows (t step time, k counted tokens, u useful
 * tokens, f model FLOPs per useful token, h hardware FLOPs per counted token, c capacity):
 *
 *   tokens/s = Σk/Σt   MFU = Σuf/Σtc   capacity = Σtc/Σt   FLOPs/token = Σuf/Σu   useful = Σu/Σk
 *
 * so tokens/s = MFU × capacity / FLOPs per token × counted/useful holds exactly for every
 * window, and the four log terms of a change add up to Δln(tokens/s) (to rounding). These are
 * the real averages over the window (total tokens over total time): a stall lowers them, as it
 * lowered the run's throughput.
 *
 * Bootstrap: rows are resampled in moving blocks (length from mfu__block_len) with replacement;
 * each resample recomputes the sums, so every figure and every term gets a percentile interval
 * from the same resamples. Blocks of a practical length miss part of the autocorrelation, so
 * each resample's log deviation from the point estimate is stretched by mfu__boot_kappa (the
 * AR(1) long-run variance over the variance the blocks keep, times m/(m−L)). Block sums come from
 * prefix sums; windows longer than BOOT_GRID_ROWS rows place block starts on a coarser grid so
 * memory stays bounded.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "util/util.h"

/* Most prefix-sum points one bootstrap keeps (memory: 7 doubles each). */
#define BOOT_GRID_ROWS 262144
/* Fewest blocks a resample is made of when the window is long (bounds the work per resample). */
#define BOOT_MAX_BLOCKS 2000
/* Lags and rows the block-length rule looks at. */
#define RHO_MAX 0.95
#define ACF_MAX_ROWS 65536

static void sums_add_row(const mfu_analysis *a, size_t i, mfu__sums *s)
{
    s->t += a->t[i];
    s->k += a->k[i];
    s->u += a->u[i];
    if (a->has_flops) {
        s->uf += a->u[i] * a->f[i];
        s->kh += a->k[i] * a->h[i];
        s->tc += a->t[i] * a->c[i];
    }
    s->n += 1;
}

static void sums_diff(const mfu__sums *hi, const mfu__sums *lo, mfu__sums *out)
{
    out->t = hi->t - lo->t;
    out->k = hi->k - lo->k;
    out->u = hi->u - lo->u;
    out->uf = hi->uf - lo->uf;
    out->kh = hi->kh - lo->kh;
    out->tc = hi->tc - lo->tc;
    out->n = hi->n - lo->n;
}

static void sums_acc(mfu__sums *acc, const mfu__sums *d)
{
    acc->t += d->t;
    acc->k += d->k;
    acc->u += d->u;
    acc->uf += d->uf;
    acc->kh += d->kh;
    acc->tc += d->tc;
    acc->n += d->n;
}

/* The statistics of one set of sums. */
typedef struct stats {
    double tps, utps, mfu, hfu, step, cap, fpt, hfpt, useful;
} stats;

static double ratio(double num, double den)
{
    return (den > 0 && isfinite(num)) ? num / den : NAN;
}

static stats stats_of(const mfu__sums *s, bool has_flops)
{
    stats r;
    r.tps = ratio(s->k, s->t);
    r.utps = ratio(s->u, s->t);
    r.step = ratio(s->t, s->n);
    r.useful = ratio(s->u, s->k);
    if (has_flops) {
        r.mfu = ratio(s->uf, s->tc);
        r.hfu = ratio(s->kh, s->tc);
        r.cap = ratio(s->tc, s->t);
        r.fpt = ratio(s->uf, s->u);
        r.hfpt = ratio(s->kh, s->k);
    } else {
        r.mfu = r.hfu = r.cap = r.fpt = r.hfpt = NAN;
    }
    return r;
}

/* Stretch a resample's figures away from the point estimate by kappa, in log space. */
static double stretch(double r, double point, double kappa)
{
    if (!(r > 0) || !(point > 0))
        return r;
    return point * exp(kappa * log(r / point));
}

static void stats_stretch(stats *r, const stats *p, double kappa)
{
    r->tps = stretch(r->tps, p->tps, kappa);
    r->utps = stretch(r->utps, p->utps, kappa);
    r->mfu = stretch(r->mfu, p->mfu, kappa);
    r->hfu = stretch(r->hfu, p->hfu, kappa);
    r->step = stretch(r->step, p->step, kappa);
    r->cap = stretch(r->cap, p->cap, kappa);
    r->fpt = stretch(r->fpt, p->fpt, kappa);
    r->hfpt = stretch(r->hfpt, p->hfpt, kappa);
    r->useful = stretch(r->useful, p->useful, kappa);
}

/* ---- block length ------------------------------------------------------------------------- */

size_t mfu__block_len(const mfu_analysis *a, const size_t *idx, size_t m, double *rho_out)
{
    size_t L = 1;
    double rho = 0;
    size_t mm = m < ACF_MAX_ROWS ? m : ACF_MAX_ROWS;
    if (mm >= 8) {
        double *y = malloc(2 * mm * sizeof *y);
        if (y) {
            double *tmp = y + mm;
            for (size_t j = 0; j < mm; j++)
                y[j] = log(a->k[idx[j]] / a->t[idx[j]]);
            memcpy(tmp, y, mm * sizeof *tmp);
            double med = mfu__median_inplace(tmp, mm);
            double sd = mfu__robust_sd(y, mm, tmp);
            if (sd > 0) /* winsorise so that one stall does not fake a correlation */
                for (size_t j = 0; j < mm; j++) {
                    if (y[j] > med + 5 * sd)
                        y[j] = med + 5 * sd;
                    if (y[j] < med - 5 * sd)
                        y[j] = med - 5 * sd;
                }
            /* One standard error up: ρ̂ is uncertain by about 1/√m and erring low makes the
             * intervals too narrow. */
            rho = mfu__acf(y, mm, 1) + 1 / sqrt((double)mm);
            free(y);
        }
    }
    if (!(rho > 0))
        rho = 0;
    if (rho > RHO_MAX)
        rho = RHO_MAX;
    /* AR(1) plug-in of the MSE-optimal block length for the mean (Lahiri; Politis & White):
     * L = (2ρ/(1−ρ²))^(2/3) · (3m/2)^(1/3), where 2ρ/(1−ρ²) = Σ|k|γ(k) / Σγ(k). */
    double Lr = pow(2 * rho / (1 - rho * rho), 2.0 / 3.0) * cbrt(1.5 * (double)m);
    L = Lr < 1 ? 1 : (size_t)ceil(Lr);
    size_t floor_blocks = (m + BOOT_MAX_BLOCKS - 1) / BOOT_MAX_BLOCKS;
    if (L < floor_blocks)
        L = floor_blocks;
    /* Long blocks in a short window leave few distinct resamples (the bootstrap variance then
     * shrinks by about (m − L)/m): cap at √m and let kappa carry the rest. */
    size_t cap = (size_t)sqrt((double)m);
    if (L > cap && cap >= floor_blocks)
        L = cap;
    if (rho_out)
        *rho_out = rho;
    return L ? L : 1;
}

double mfu__boot_kappa(double rho, size_t L, size_t m)
{
    /* Blocks of L rows keep the autocovariances below lag L, weighted 1 − k/L; AR(1) has
     * long-run variance (1+ρ)/(1−ρ). The ratio is what the resamples miss; m/(m−L) undoes
     * the shrinkage of the moving-block variance in a finite window. */
    double kept = 1, pk = 1;
    for (size_t k = 1; k < L && k < 1000; k++) {
        pk *= rho;
        kept += 2 * (1 - (double)k / (double)L) * pk;
    }
    double full = (1 + rho) / (1 - rho);
    double kappa2 = full / kept;
    if (m > L)
        kappa2 *= (double)m / (double)(m - L);
    return kappa2 > 1 ? sqrt(kappa2) : 1;
}

/* ---- the bootstrap machinery -------------------------------------------------------------- */

typedef struct boot {
    size_t m, g, npts, Lg; /* rows, grid step, grid points, block length in grid steps */
    mfu__sums *P;          /* P[j] = sums of rows idx[0 .. min(j g, m)) */
    size_t nblocks;
} boot;

static bool boot_prepare(const mfu_analysis *a, const size_t *idx, size_t m, size_t L, boot *b)
{
    memset(b, 0, sizeof *b);
    b->m = m;
    b->g = (m + BOOT_GRID_ROWS - 1) / BOOT_GRID_ROWS;
    if (b->g < 1)
        b->g = 1;
    b->npts = (m + b->g - 1) / b->g + 1;
    b->Lg = (L + b->g - 1) / b->g;
    if (b->Lg < 1)
        b->Lg = 1;
    if (b->Lg > b->npts - 1)
        b->Lg = b->npts - 1;
    size_t rows_per_block = b->Lg * b->g;
    b->nblocks = (m + rows_per_block - 1) / rows_per_block;
    b->P = calloc(b->npts, sizeof *b->P);
    if (!b->P)
        return false;
    mfu__sums acc = {0};
    size_t j = 1;
    for (size_t r = 0; r < m; r++) {
        sums_add_row(a, idx[r], &acc);
        if ((r + 1) % b->g == 0 || r + 1 == m)
            b->P[j++] = acc;
    }
    return true;
}

static void boot_draw(const boot *b, mfu__rng *rng, mfu__sums *out)
{
    memset(out, 0, sizeof *out);
    size_t starts = b->npts - b->Lg; /* block start grid points 0 .. npts-1-Lg */
    for (size_t q = 0; q < b->nblocks; q++) {
        size_t s = (size_t)mfu__rng_below(rng, starts);
        mfu__sums d;
        sums_diff(&b->P[s + b->Lg], &b->P[s], &d);
        sums_acc(out, &d);
    }
}

/* Percentile interval of v[0..R) (sorts v). */
static void interval(double *v, size_t R, double conf, double *lo, double *hi)
{
    size_t n = 0;
    for (size_t i = 0; i < R; i++)
        if (isfinite(v[i]))
            v[n++] = v[i];
    if (n < R || n == 0) { /* a resample without a value means no honest interval */
        *lo = *hi = NAN;
        return;
    }
    mfu__sort_doubles(v, n);
    *lo = mfu__quantile_sorted(v, n, (1 - conf) / 2);
    *hi = mfu__quantile_sorted(v, n, (1 + conf) / 2);
}

/* ---- levels ------------------------------------------------------------------------------- */

/* The value shared by every row (NaN when absent in all, or mixed). */
static double constant_of(const double *col, const size_t *idx, size_t m)
{
    double v = NAN;
    for (size_t j = 0; j < m; j++) {
        double x = col[idx[j]];
        if (!isfinite(x))
            continue;
        if (isnan(v))
            v = x;
        else if (fabs(x - v) > 1e-9 * fabs(v))
            return NAN;
    }
    return v;
}

static void label_of(const mfu_analysis *a, const uint8_t *ids, const size_t *idx, size_t m,
                     char *out)
{
    int id = -1;
    for (size_t j = 0; j < m; j++) {
        int x = ids[idx[j]];
        if (id < 0)
            id = x;
        else if (x != id) {
            mfu__strlcpy(out, "mixed", MFU_SERIES_LABEL_MAX);
            return;
        }
    }
    out[0] = 0;
    if (id > 0 && id <= a->nlabels)
        mfu__strlcpy(out, a->labels[id - 1], MFU_SERIES_LABEL_MAX);
}

static mfu_interval point(double v)
{
    mfu_interval r = {v, NAN, NAN};
    return r;
}

/* Point estimates (no intervals) of rows idx. */
static bool level_point(const mfu_analysis *a, const size_t *idx, size_t m, mfu_level *out)
{
    memset(out, 0, sizeof *out);
    mfu__sums s = {0};
    for (size_t j = 0; j < m; j++)
        sums_add_row(a, idx[j], &s);
    stats st = stats_of(&s, a->has_flops);
    out->steps = m;
    out->first_step = m ? a->step[idx[0]] : 0;
    out->last_step = m ? a->step[idx[m - 1]] : 0;
    out->tokens_per_s = point(st.tps);
    out->useful_tokens_per_s = point(st.utps);
    out->mfu = point(st.mfu);
    out->hfu = point(st.hfu);
    out->step_time_s = point(st.step);
    out->capacity_flops_per_s = st.cap;
    out->model_flops_per_token = st.fpt;
    out->hardware_flops_per_token = st.hfpt;
    out->useful_fraction = st.useful;
    out->devices = constant_of(a->in[MFU_SC_DEVICES], idx, m);
    out->peak_flops_per_s = constant_of(a->in[MFU_SC_PEAK_FLOPS_PER_S], idx, m);
    out->seq_len = constant_of(a->in[MFU_SC_SEQ_LEN], idx, m);
    out->global_batch = constant_of(a->in[MFU_SC_GLOBAL_BATCH], idx, m);
    out->model_flops_per_s_per_device = (out->devices > 0) ? ratio(s.uf, s.t) / out->devices : NAN;
    out->hardware_flops_per_s_per_device =
        (out->devices > 0) ? ratio(s.kh, s.t) / out->devices : NAN;
    if (!a->has_flops)
        out->model_flops_per_s_per_device = out->hardware_flops_per_s_per_device = NAN;
    label_of(a, a->dtype, idx, m, out->dtype);
    label_of(a, a->recompute, idx, m, out->recompute);
    out->block_len = 0;
    out->rho = NAN;
    out->median_step_time_s = NAN;
    if (m) {
        double *tmp = malloc(m * sizeof *tmp);
        if (!tmp)
            return false;
        for (size_t j = 0; j < m; j++)
            tmp[j] = a->t[idx[j]];
        out->median_step_time_s = mfu__median_inplace(tmp, m);
        free(tmp);
    }
    return true;
}

bool mfu__level_of(const mfu_analysis *a, const size_t *idx, size_t m,
                   const mfu_analysis_options *opt, uint64_t seed, mfu_level *out)
{
    if (!level_point(a, idx, m, out))
        return false;
    if (opt->resamples <= 0 || m < 2)
        return true;
    size_t R = (size_t)opt->resamples;
    double rho;
    size_t L = mfu__block_len(a, idx, m, &rho);
    out->block_len = L;
    out->rho = rho;
    double kappa = mfu__boot_kappa(rho, L, m);
    mfu__sums s0 = {0};
    for (size_t j = 0; j < m; j++)
        sums_add_row(a, idx[j], &s0);
    stats p0 = stats_of(&s0, a->has_flops);
    boot b;
    double *v = malloc(5 * R * sizeof *v);
    if (!v || !boot_prepare(a, idx, m, L, &b)) {
        free(v);
        return false;
    }
    mfu__rng rng;
    mfu__rng_seed(&rng, seed);
    for (size_t r = 0; r < R; r++) {
        mfu__sums s;
        boot_draw(&b, &rng, &s);
        stats st = stats_of(&s, a->has_flops);
        stats_stretch(&st, &p0, kappa);
        v[r] = st.tps;
        v[R + r] = st.utps;
        v[2 * R + r] = st.mfu;
        v[3 * R + r] = st.hfu;
        v[4 * R + r] = st.step;
    }
    interval(v, R, opt->confidence, &out->tokens_per_s.lo, &out->tokens_per_s.hi);
    interval(v + R, R, opt->confidence, &out->useful_tokens_per_s.lo, &out->useful_tokens_per_s.hi);
    if (a->has_flops) {
        interval(v + 2 * R, R, opt->confidence, &out->mfu.lo, &out->mfu.hi);
        interval(v + 3 * R, R, opt->confidence, &out->hfu.lo, &out->hfu.hi);
    }
    interval(v + 4 * R, R, opt->confidence, &out->step_time_s.lo, &out->step_time_s.hi);
    free(b.P);
    free(v);
    return true;
}

/* ---- decomposition ------------------------------------------------------------------------ */

static void terms_of(const stats *A, const stats *B, double dln[MFU_TERM_COUNT_])
{
    dln[MFU_TERM_TOKENS_PER_S] = log(B->tps) - log(A->tps);
    dln[MFU_TERM_MFU] = log(B->mfu) - log(A->mfu);
    dln[MFU_TERM_CAPACITY] = log(B->cap) - log(A->cap);
    dln[MFU_TERM_FLOPS_PER_TOKEN] = -(log(B->fpt) - log(A->fpt));
    dln[MFU_TERM_PADDING] = -(log(B->useful) - log(A->useful));
    for (int t = 0; t < MFU_TERM_COUNT_; t++) /* rounding of equal sums is not a change */
        if (fabs(dln[t]) < 1e-12)
            dln[t] = 0;
}

static void append_change(char *buf, size_t n, const char *what, double from, double to)
{
    if (!isfinite(from) || !isfinite(to) || fabs(from - to) <= 1e-9 * fabs(from))
        return;
    mfu__appendf(buf, n, "%s%s %.6g \xe2\x86\x92 %.6g", buf[0] ? ", " : "", what, from, to);
}

static void append_label(char *buf, size_t n, const char *what, const char *from, const char *to)
{
    if (!from[0] || !to[0] || strcmp(from, to) == 0 || !strcmp(from, "mixed") ||
        !strcmp(to, "mixed"))
        return;
    mfu__appendf(buf, n, "%s%s %s \xe2\x86\x92 %s", buf[0] ? ", " : "", what, from, to);
}

/* What changed in the configuration, per term: workload (FLOPs per token), capacity,
 * utilization (recompute), or all together. */
enum { CFG_WORKLOAD = 1, CFG_CAPACITY = 2, CFG_UTIL = 4, CFG_ALL = 7 };

static void config_text(const mfu_level *A, const mfu_level *B, int which, char *buf, size_t n)
{
    buf[0] = 0;
    if (which & CFG_WORKLOAD) {
        append_change(buf, n, "sequence", A->seq_len, B->seq_len);
        append_change(buf, n, "global batch", A->global_batch, B->global_batch);
        if (!buf[0]) {
            char tmp[96] = "";
            append_change(tmp, sizeof tmp, "model FLOPs/token", A->model_flops_per_token,
                          B->model_flops_per_token);
            if (tmp[0] && fabs(log(B->model_flops_per_token / A->model_flops_per_token)) > 1e-6)
                mfu__appendf(buf, n, "%s", tmp);
        }
    }
    if (which & CFG_CAPACITY) {
        append_change(buf, n, "devices", A->devices, B->devices);
        append_label(buf, n, "dtype", A->dtype, B->dtype);
        if (isfinite(A->peak_flops_per_s) && isfinite(B->peak_flops_per_s) &&
            fabs(A->peak_flops_per_s - B->peak_flops_per_s) > 1e-9 * A->peak_flops_per_s)
            mfu__appendf(buf, n, "%speak %.4g \xe2\x86\x92 %.4g TFLOP/s", buf[0] ? ", " : "",
                         A->peak_flops_per_s / 1e12, B->peak_flops_per_s / 1e12);
    }
    if (which & CFG_UTIL)
        append_label(buf, n, "recompute", A->recompute, B->recompute);
}

bool mfu__decompose(const mfu_analysis *a, const size_t *ia, size_t ma, const mfu_level *la,
                    const mfu_analysis *b, const size_t *ib, size_t mb, const mfu_level *lb,
                    const mfu_analysis_options *opt, uint64_t seed, mfu_decomposition *out)
{
    memset(out, 0, sizeof *out);
    if (la)
        out->from = *la;
    else if (!mfu__level_of(a, ia, ma, opt, seed ^ 0x5151, &out->from))
        return false;
    if (lb)
        out->to = *lb;
    else if (!mfu__level_of(b, ib, mb, opt, seed ^ 0xa2a2, &out->to))
        return false;
    mfu__sums sa = {0}, sb = {0};
    for (size_t j = 0; j < ma; j++)
        sums_add_row(a, ia[j], &sa);
    for (size_t j = 0; j < mb; j++)
        sums_add_row(b, ib[j], &sb);
    stats A = stats_of(&sa, a->has_flops), B = stats_of(&sb, b->has_flops);
    double dln[MFU_TERM_COUNT_];
    terms_of(&A, &B, dln);
    for (int t = 0; t < MFU_TERM_COUNT_; t++) {
        mfu_term_change *tc = &out->term[t];
        tc->dln = dln[t];
        tc->pct = expm1(dln[t]);
        tc->share =
            fabs(dln[MFU_TERM_TOKENS_PER_S]) >= 1e-9 ? dln[t] / dln[MFU_TERM_TOKENS_PER_S] : NAN;
        tc->lo_pct = tc->hi_pct = NAN;
    }
    out->mfu_points = B.mfu - A.mfu;
    config_text(&out->from, &out->to, CFG_ALL, out->config_change, sizeof out->config_change);

    if (opt->resamples > 0 && ma >= 2 && mb >= 2) {
        size_t R = (size_t)opt->resamples;
        boot ba, bb;
        double *v = malloc(MFU_TERM_COUNT_ * R * sizeof *v);
        bool ok = v != NULL;
        bool pa = ok && boot_prepare(a, ia, ma, out->from.block_len ? out->from.block_len : 1, &ba);
        bool pb = pa && boot_prepare(b, ib, mb, out->to.block_len ? out->to.block_len : 1, &bb);
        if (!pb) {
            if (pa)
                free(ba.P);
            free(v);
            return false;
        }
        double ka = mfu__boot_kappa(out->from.rho, ba.Lg * ba.g, ma);
        double kb = mfu__boot_kappa(out->to.rho, bb.Lg * bb.g, mb);
        mfu__rng ra, rb;
        mfu__rng_seed(&ra, seed ^ 0x1111);
        mfu__rng_seed(&rb, seed ^ 0x2222);
        for (size_t r = 0; r < R; r++) {
            mfu__sums xa, xb;
            boot_draw(&ba, &ra, &xa);
            boot_draw(&bb, &rb, &xb);
            stats SA = stats_of(&xa, a->has_flops), SB = stats_of(&xb, b->has_flops);
            stats_stretch(&SA, &A, ka);
            stats_stretch(&SB, &B, kb);
            double d[MFU_TERM_COUNT_];
            terms_of(&SA, &SB, d);
            for (int t = 0; t < MFU_TERM_COUNT_; t++)
                v[(size_t)t * R + r] = d[t];
        }
        for (int t = 0; t < MFU_TERM_COUNT_; t++) {
            mfu_term_change *tc = &out->term[t];
            double lo, hi;
            interval(v + (size_t)t * R, R, opt->confidence, &lo, &hi);
            if (!isfinite(lo))
                continue;
            tc->lo_pct = expm1(lo);
            tc->hi_pct = expm1(hi);
            tc->direction_certain = tc->lo_pct > 0 || tc->hi_pct < 0;
            tc->size_known = (tc->hi_pct - tc->lo_pct) / 2 < opt->size_threshold;
        }
        free(ba.P);
        free(bb.P);
        free(v);
    }
    mfu_decomposition_sentence(out, out->sentence, sizeof out->sentence);
    return true;
}

/* ---- words -------------------------------------------------------------------------------- */

#define MINUS "\xe2\x88\x92" /* U+2212 */

static void fmt_abs(char *buf, size_t n, double frac)
{
    double v = fabs(frac) * 100;
    if (v >= 1.95)
        snprintf(buf, n, "%.0f %%", v);
    else
        snprintf(buf, n, "%.1f %%", v);
}

void mfu__fmt_pct(char *buf, size_t n, double frac)
{
    if (!isfinite(frac)) {
        snprintf(buf, n, "?");
        return;
    }
    char a[32];
    fmt_abs(a, sizeof a, frac);
    if (fabs(frac) < 0.0005)
        snprintf(buf, n, "%s", a);
    else
        snprintf(buf, n, "%s%s", frac < 0 ? MINUS : "+", a);
}

bool mfu_decomposition_sentence(const mfu_decomposition *d, char *buf, size_t n)
{
    if (!buf || n == 0)
        return false;
    buf[0] = 0;
    if (!d)
        return false;
    char p[40];
    const mfu_term_change *T = d->term;
    mfu__fmt_pct(p, sizeof p, T[MFU_TERM_TOKENS_PER_S].pct);
    bool ok = mfu__appendf(buf, n, "tokens/s %s", p);
    if (isfinite(T[MFU_TERM_TOKENS_PER_S].lo_pct) && !T[MFU_TERM_TOKENS_PER_S].direction_certain)
        ok = mfu__appendf(buf, n, " (within noise)") && ok;
    if (!isfinite(T[MFU_TERM_MFU].dln)) {
        ok = mfu__appendf(buf, n, ": split unknown without FLOPs per token and peak") && ok;
        return ok;
    }
    /* Terms by size. */
    int order[4] = {MFU_TERM_MFU, MFU_TERM_CAPACITY, MFU_TERM_FLOPS_PER_TOKEN, MFU_TERM_PADDING};
    for (int i = 1; i < 4; i++)
        for (int j = i; j > 0 && fabs(T[order[j]].dln) > fabs(T[order[j - 1]].dln); j--) {
            int x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    int listed = 0;
    for (int i = 0; i < 4; i++) {
        const mfu_term_change *tc = &T[order[i]];
        if (!(fabs(tc->pct) >= 0.005))
            continue;
        char cfg[160];
        ok = mfu__appendf(buf, n, "%s", listed ? ", " : ": ") && ok;
        listed++;
        switch (order[i]) {
        case MFU_TERM_MFU:
            mfu__fmt_pct(p, sizeof p, tc->pct);
            ok = mfu__appendf(buf, n, "utilization %s", p) && ok;
            config_text(&d->from, &d->to, CFG_UTIL, cfg, sizeof cfg);
            break;
        case MFU_TERM_CAPACITY:
            mfu__fmt_pct(p, sizeof p, tc->pct);
            ok = mfu__appendf(buf, n, "capacity %s", p) && ok;
            config_text(&d->from, &d->to, CFG_CAPACITY, cfg, sizeof cfg);
            break;
        case MFU_TERM_FLOPS_PER_TOKEN:
            fmt_abs(p, sizeof p, expm1(fabs(tc->dln)));
            ok = mfu__appendf(buf, n, "workload %s %s", p, tc->dln > 0 ? "easier" : "harder") && ok;
            config_text(&d->from, &d->to, CFG_WORKLOAD, cfg, sizeof cfg);
            break;
        default:
            mfu__fmt_pct(p, sizeof p, tc->pct);
            ok = mfu__appendf(buf, n, "padding %s", p) && ok;
            cfg[0] = 0;
            break;
        }
        if (cfg[0])
            ok = mfu__appendf(buf, n, " (%s)", cfg) && ok;
    }
    if (!listed)
        ok = mfu__appendf(buf, n, ": no term moved by 0.5 %% or more") && ok;
    return ok;
}
