/*
 * levels.c - levels of a window of steps, the decomposition between two windows, their
 * confidence intervals, and the sentence that says it in words.
 *
 * The level of a figure is the median over the window's steady rows of the row's figure:
 * tokens/s, useful tokens/s, MFU, HFU, step time, FLOP/s per device, and the configuration
 * figures (capacity, FLOPs per token, useful share). That is the headline's definition (the
 * typical step: a stall does not move it), so a segment's level and the report's steady median
 * are one number. The totals keep what a ratio estimator says (total tokens ÷ total time,
 * total useful FLOPs ÷ total time × capacity) and the time the slower-than-typical steps cost.
 *
 * Intervals. The median's interval comes from order statistics: with the count of steps below
 * the median ~ Binomial(m, 1/2), the interval [x_(j), x_(k)] with j, k = m/2 ∓ z √(m V)/2 covers
 * it with the given confidence. V is the variance factor of that count for correlated steps:
 * for a Gaussian AR(1) process of lag-1 correlation ρ (of ln tokens/s, winsorised, plus one
 * standard error 1/√m so that erring low does not make intervals too narrow), the indicator
 * of "below the median" has lag-k correlation (2/π) asin(ρ^k), so V = 1 + 2 Σ_k (2/π) asin(ρ^k).
 * This needs a few selections per window, not resamples: linear in the window's rows.
 *
 * Decomposition. Between windows A and B: Δln of the median tokens/s (the total), of the median
 * capacity (capacity term), of the median FLOPs per token (workload term, sign flipped), of the
 * median useful share (padding term, flipped); the MFU term is what is left, so the terms add
 * up to the total exactly. It is Δln of the median MFU when each window's FLOPs per token,
 * capacity and useful share are constant (segments are cut where they change). The total's
 * interval combines both windows' intervals of ln median tokens/s (independent windows, in
 * quadrature on each side); the MFU term takes the same half-widths (the configuration terms
 * are known, not estimated).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "util/util.h"

/* Lags and rows the dependence estimate looks at. */
#define RHO_MAX 0.95
#define ACF_MAX_ROWS 65536

static bool pos(double v)
{
    return isfinite(v) && v > 0;
}

/* ---- dependence ---------------------------------------------------------------------------- */

size_t mfu__level_scratch(size_t m)
{
    size_t mm = m < ACF_MAX_ROWS ? m : ACF_MAX_ROWS;
    return 2 * mm > m ? 2 * mm : m;
}

double mfu__level_rho(const mfu_analysis *a, const size_t *idx, size_t m, double *tmp)
{
    size_t mm = m < ACF_MAX_ROWS ? m : ACF_MAX_ROWS;
    if (mm < 8)
        return 0;
    double *y = tmp, *t2 = tmp + mm;
    for (size_t j = 0; j < mm; j++)
        y[j] = log(a->d[MFU_D_TOKENS_PER_S][idx[j]]);
    memcpy(t2, y, mm * sizeof *t2);
    double med = mfu__median_inplace(t2, mm);
    double sd = mfu__robust_sd(y, mm, t2);
    if (sd > 0) /* winsorise so that one stall does not fake a correlation */
        for (size_t j = 0; j < mm; j++) {
            if (y[j] > med + 5 * sd)
                y[j] = med + 5 * sd;
            if (y[j] < med - 5 * sd)
                y[j] = med - 5 * sd;
        }
    double rho = mfu__acf(y, mm, 1) + 1 / sqrt((double)mm);
    if (!(rho > 0))
        rho = 0;
    return rho > RHO_MAX ? RHO_MAX : rho;
}

double mfu__median_vif(double rho)
{
    if (!(rho > 0))
        return 1;
    double v = 1, pk = 1;
    for (int k = 1; k < 2000; k++) {
        pk *= rho;
        double c = 0.6366197723675814 /* 2 / pi */ * asin(pk);
        v += 2 * c;
        if (c < 1e-9)
            break;
    }
    return v;
}

/* The standard normal quantile at p in (0.5, 1), by bisection on erfc. */
static double z_of(double p)
{
    double lo = 0, hi = 40;
    for (int it = 0; it < 100; it++) {
        double mid = 0.5 * (lo + hi);
        if (0.5 * erfc(mid / sqrt(2.0)) > 1 - p)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* The order statistic at q of v[0..m) partitioned about mid (v[0..mid) <= med <= v[mid +
 * 1..m), as the median's selection leaves it): a selection within the part that holds it,
 * which leaves the other part and med as they were. */
static double stat_after_median(double *v, size_t m, size_t mid, double med, size_t q)
{
    if (q < mid)
        return mfu__select_kth(v, mid, q);
    if (q == mid)
        return med;
    return mfu__select_kth(v + mid + 1, m - mid - 1, q - mid - 1);
}

/* Median of v[0..m) and its interval (m > 0; v is reordered). */
static mfu_interval median_ci(double *v, size_t m, double vif, double conf, bool intervals)
{
    mfu_interval r = {mfu__median_inplace(v, m), NAN, NAN};
    if (!intervals || m < 2)
        return r;
    double half = z_of((1 + conf) / 2) * sqrt((double)m * vif) / 2;
    double j = floor((double)m / 2 - half), k = ceil((double)m / 2 + half);
    if (j < 1)
        j = 1;
    if (k > (double)m)
        k = (double)m;
    /* The median's selection left v[0..mid) <= v[mid] <= v[mid + 1..m): the bounds select
     * within one part each (j - 1 <= mid <= k - 1), the same order statistics as a
     * selection over the whole. */
    size_t mid = (size_t)(0.5 * (double)(m - 1));
    double med = v[mid];
    r.lo = stat_after_median(v, m, mid, med, (size_t)j - 1);
    r.hi = stat_after_median(v, m, mid, med, (size_t)k - 1);
    if (r.lo > r.value)
        r.lo = r.value;
    if (r.hi < r.value)
        r.hi = r.value;
    return r;
}

/* ---- levels ------------------------------------------------------------------------------- */

/* The value shared by every row of a's column col (NaN when absent in all, or mixed). The NaN
 * column (every absent input) is not read: its pages would count as resident. */
static double constant_of(const mfu_analysis *a, const double *col, const size_t *idx, size_t m)
{
    double v = NAN;
    mfu__view cv = mfu__view_of(a, col); /* the NaN column reads one NaN: v stays NaN */
    if (!cv.m && m)                      /* one value in every row: its first row is every row */
        m = 1;
    for (size_t j = 0; j < m; j++) {
        double x = MFU__AT(cv, idx[j]);
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

/* Derived column c of a as a view (its NaN column read as one NaN). */
static mfu__view dv(const mfu_analysis *a, int c)
{
    return mfu__view_of(a, a->d[c]);
}

/* The median of a column (as a view: mfu__view) over rows idx (finite values only) with its
 * interval. */
static mfu_interval col_median(mfu__view col, const size_t *idx, size_t m, double *tmp, double vif,
                               const mfu_analysis_options *opt, bool with_ci)
{
    size_t k = 0;
    for (size_t j = 0; j < m; j++)
        if (isfinite(MFU__AT(col, idx[j])))
            tmp[k++] = MFU__AT(col, idx[j]);
    if (k == 0) {
        mfu_interval none = {NAN, NAN, NAN};
        return none;
    }
    return median_ci(tmp, k, vif, opt->confidence, with_ci && opt->intervals);
}

bool mfu__level_of(const mfu_analysis *a, const size_t *idx, size_t m,
                   const mfu_analysis_options *opt, mfu_level *out, double *scratch)
{
    memset(out, 0, sizeof *out);
    out->steps = m;
    out->rho = NAN;
    out->vif = 1;
    mfu_interval none = {NAN, NAN, NAN};
    out->tokens_per_s = out->useful_tokens_per_s = out->mfu = out->hfu = out->step_time_s = none;
    out->model_flops_per_s_per_device = out->hardware_flops_per_s_per_device = NAN;
    out->capacity_flops_per_s = out->model_flops_per_token = out->hardware_flops_per_token = NAN;
    out->useful_fraction = out->total_tokens_per_s = out->total_mfu = NAN;
    out->total_time_s = out->mean_step_time_s = out->stall_time_s = NAN;
    out->devices = out->peak_flops_per_s = out->seq_len = out->global_batch = NAN;
    if (m == 0)
        return true;
    double *tmp = scratch ? scratch : malloc(mfu__level_scratch(m) * sizeof *tmp);
    if (!tmp)
        return false;
    out->first_step = a->step[idx[0]];
    out->last_step = a->step[idx[m - 1]];
    double rho = opt->intervals ? mfu__level_rho(a, idx, m, tmp) : NAN;
    double vif = opt->intervals ? mfu__median_vif(rho) : 1;
    out->rho = rho;
    out->vif = vif;
    out->flops_relative = a->opt.flops_relative; /* the data's own units, not the caller's */
    bool fl = a->has_flops;
    bool mf = fl && !a->capacity_unknown;
    /* a derived column that is another (no padding: the useful tokens/s are the tokens/s; no
     * recomputation: HFU is MFU) has that one's median, the same numbers */
    const double *const *d = a->d;
    out->tokens_per_s = col_median(dv(a, MFU_D_TOKENS_PER_S), idx, m, tmp, vif, opt, true);
    out->useful_tokens_per_s =
        d[MFU_D_USEFUL_TOKENS_PER_S] == d[MFU_D_TOKENS_PER_S]
            ? out->tokens_per_s
            : col_median(dv(a, MFU_D_USEFUL_TOKENS_PER_S), idx, m, tmp, vif, opt, true);
    out->step_time_s = col_median(dv(a, MFU_D_STEP_TIME_S), idx, m, tmp, vif, opt, true);
    if (mf) {
        out->mfu = col_median(dv(a, MFU_D_MFU), idx, m, tmp, vif, opt, true);
        out->hfu = d[MFU_D_HFU] == d[MFU_D_MFU]
                       ? out->mfu
                       : col_median(dv(a, MFU_D_HFU), idx, m, tmp, vif, opt, true);
        out->capacity_flops_per_s = col_median(a->cv, idx, m, tmp, vif, opt, false).value;
    }
    if (fl) {
        out->model_flops_per_s_per_device =
            col_median(dv(a, MFU_D_MODEL_FLOPS_PER_S_PER_DEVICE), idx, m, tmp, vif, opt, false)
                .value;
        out->hardware_flops_per_s_per_device =
            col_median(dv(a, MFU_D_HARDWARE_FLOPS_PER_S_PER_DEVICE), idx, m, tmp, vif, opt, false)
                .value;
        out->model_flops_per_token = col_median(a->fv, idx, m, tmp, vif, opt, false).value;
        out->hardware_flops_per_token = col_median(a->hv, idx, m, tmp, vif, opt, false).value;
    }
    for (size_t j = 0; j < m; j++)
        tmp[j] = MFU__AT(a->uv, idx[j]) / MFU__AT(a->kv, idx[j]);
    out->useful_fraction = mfu__median_inplace(tmp, m);
    /* totals: ratio of sums over the window */
    double T = 0, K = 0, UF = 0, TC = 0;
    for (size_t j = 0; j < m; j++) {
        size_t i = idx[j];
        double t = mfu__t(a, i);
        T += t;
        K += MFU__AT(a->kv, i);
        if (mf) {
            UF += MFU__AT(a->uv, i) * MFU__AT(a->fv, i);
            TC += t * MFU__AT(a->cv, i);
        }
    }
    out->total_time_s = T;
    out->total_tokens_per_s = T > 0 ? K / T : NAN;
    out->mean_step_time_s = T / (double)m;
    out->total_mfu = mf && TC > 0 ? UF / TC : NAN;
    double stall = T - K / out->tokens_per_s.value;
    out->stall_time_s = isfinite(stall) ? (stall > 0 ? stall : 0) : NAN;
    out->devices = constant_of(a, a->in[MFU_SC_DEVICES], idx, m);
    out->peak_flops_per_s = constant_of(a, a->in[MFU_SC_PEAK_FLOPS_PER_S], idx, m);
    out->seq_len = constant_of(a, a->in[MFU_SC_SEQ_LEN], idx, m);
    out->global_batch = constant_of(a, a->in[MFU_SC_GLOBAL_BATCH], idx, m);
    label_of(a, a->dtype, idx, m, out->dtype);
    label_of(a, a->recompute, idx, m, out->recompute);
    if (!scratch)
        free(tmp);
    return true;
}

/* ---- decomposition ------------------------------------------------------------------------ */

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
        double fa = A->model_flops_per_token, fb = B->model_flops_per_token;
        if (!buf[0] && isfinite(fa) && isfinite(fb) && fabs(log(fb / fa)) > 1e-6) {
            if (A->flops_relative || B->flops_relative) { /* units unknown: the ratio only */
                char q[32];
                mfu__fmt_pct(q, sizeof q, fb / fa - 1);
                mfu__appendf(buf, n, "FLOPs/token %s", q);
            } else {
                mfu__appendf(buf, n, "FLOPs/token %.4g \xe2\x86\x92 %.4g GFLOP", fa / 1e9,
                             fb / 1e9);
            }
        }
    }
    if (which & CFG_CAPACITY) {
        append_change(buf, n, "devices", A->devices, B->devices);
        append_label(buf, n, "dtype", A->dtype, B->dtype);
        if (isfinite(A->peak_flops_per_s) && isfinite(B->peak_flops_per_s) &&
            fabs(A->peak_flops_per_s - B->peak_flops_per_s) > 1e-9 * A->peak_flops_per_s) {
            char pa[32], pb[32]; /* SI-scaled: a CPU's peak is GFLOP/s, not 0.59 TFLOP/s */
            mfu__fmt_si_digits(pa, sizeof pa, A->peak_flops_per_s, "FLOP/s", 4);
            mfu__fmt_si_digits(pb, sizeof pb, B->peak_flops_per_s, "FLOP/s", 4);
            mfu__appendf(buf, n, "%speak %s \xe2\x86\x92 %s", buf[0] ? ", " : "", pa, pb);
        }
    }
    if (which & CFG_UTIL)
        append_label(buf, n, "recompute", A->recompute, B->recompute);
}

/* Δln b/a, 0 when equal (rounding of equal medians is not a change), NaN when either is not a
 * positive number. */
static double dln_of(double a, double b)
{
    if (!pos(a) || !pos(b))
        return NAN;
    double d = log(b) - log(a);
    return fabs(d) < 1e-12 ? 0 : d;
}

bool mfu__decompose(const mfu_analysis *a, const size_t *ia, size_t ma, const mfu_level *la,
                    const mfu_analysis *b, const size_t *ib, size_t mb, const mfu_level *lb,
                    const mfu_analysis_options *opt, mfu_decomposition *out)
{
    memset(out, 0, sizeof *out);
    if (la)
        out->from = *la;
    else if (!mfu__level_of(a, ia, ma, opt, &out->from, NULL))
        return false;
    if (lb)
        out->to = *lb;
    else if (!mfu__level_of(b, ib, mb, opt, &out->to, NULL))
        return false;
    const mfu_level *A = &out->from, *B = &out->to;
    bool flops = a->has_flops && b->has_flops;
    out->capacity_unknown = flops && (a->capacity_unknown || b->capacity_unknown);
    /* Two analyses whose FLOPs per token are known only as ratios (each in units of its own
     * unknown peak): their capacities and FLOPs per token are in different units, so only
     * the MFU, a pure ratio in each, and the two terms together are known. */
    out->flops_units_differ =
        flops && a != b && (A->flops_relative || B->flops_relative) && !out->capacity_unknown;
    double d[MFU_TERM_COUNT_];
    d[MFU_TERM_TOKENS_PER_S] = dln_of(A->tokens_per_s.value, B->tokens_per_s.value);
    d[MFU_TERM_PADDING] = -dln_of(A->useful_fraction, B->useful_fraction);
    if (out->flops_units_differ) {
        d[MFU_TERM_CAPACITY] = d[MFU_TERM_FLOPS_PER_TOKEN] = NAN;
        d[MFU_TERM_MFU] = dln_of(A->mfu.value, B->mfu.value);
    } else if (flops) {
        d[MFU_TERM_CAPACITY] =
            out->capacity_unknown ? 0 : dln_of(A->capacity_flops_per_s, B->capacity_flops_per_s);
        d[MFU_TERM_FLOPS_PER_TOKEN] = -dln_of(A->model_flops_per_token, B->model_flops_per_token);
        d[MFU_TERM_MFU] = d[MFU_TERM_TOKENS_PER_S] - d[MFU_TERM_CAPACITY] -
                          d[MFU_TERM_FLOPS_PER_TOKEN] - d[MFU_TERM_PADDING];
        if (fabs(d[MFU_TERM_MFU]) < 1e-12)
            d[MFU_TERM_MFU] = 0;
    } else {
        d[MFU_TERM_CAPACITY] = d[MFU_TERM_FLOPS_PER_TOKEN] = d[MFU_TERM_MFU] = NAN;
    }
    for (int t = 0; t < MFU_TERM_COUNT_; t++) {
        mfu_term_change *tc = &out->term[t];
        tc->dln = d[t];
        tc->pct = expm1(d[t]);
        tc->share = fabs(d[MFU_TERM_TOKENS_PER_S]) >= 1e-9 ? d[t] / d[MFU_TERM_TOKENS_PER_S] : NAN;
        tc->lo_pct = tc->hi_pct = NAN;
    }
    out->mfu_points = out->capacity_unknown ? NAN : B->mfu.value - A->mfu.value;
    config_text(A, B, CFG_ALL, out->config_change, sizeof out->config_change);

    if (opt->intervals && isfinite(A->tokens_per_s.lo) && isfinite(B->tokens_per_s.lo)) {
        /* ln-scale half-widths of each window's median tokens/s, combined in quadrature */
        double al = log(A->tokens_per_s.value / A->tokens_per_s.lo);
        double ah = log(A->tokens_per_s.hi / A->tokens_per_s.value);
        double bl = log(B->tokens_per_s.value / B->tokens_per_s.lo);
        double bh = log(B->tokens_per_s.hi / B->tokens_per_s.value);
        double down = sqrt(bl * bl + ah * ah), up = sqrt(bh * bh + al * al);
        for (int t = 0; t < MFU_TERM_COUNT_; t++) {
            mfu_term_change *tc = &out->term[t];
            if (!isfinite(tc->dln))
                continue;
            bool estimated = t == MFU_TERM_TOKENS_PER_S || t == MFU_TERM_MFU;
            double lo = estimated ? tc->dln - down : tc->dln;
            double hi = estimated ? tc->dln + up : tc->dln;
            tc->lo_pct = expm1(lo);
            tc->hi_pct = expm1(hi);
            tc->direction_certain = tc->lo_pct > 0 || tc->hi_pct < 0;
            tc->size_known = (tc->hi_pct - tc->lo_pct) / 2 < opt->size_threshold;
        }
    }
    snprintf(out->rate_name, sizeof out->rate_name, "%s",
             opt->rate_name[0] ? opt->rate_name : "tokens/s");
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
    bool ok = mfu__appendf(buf, n, "%s %s", d->rate_name[0] ? d->rate_name : "tokens/s", p);
    if (isfinite(T[MFU_TERM_TOKENS_PER_S].lo_pct) && !T[MFU_TERM_TOKENS_PER_S].direction_certain)
        ok = mfu__appendf(buf, n, " (within noise)") && ok;
    if (!isfinite(T[MFU_TERM_MFU].dln)) {
        ok = mfu__appendf(buf, n, ": split unknown without FLOPs per token and peak") && ok;
        return ok;
    }
    if (d->flops_units_differ) { /* MFU and padding apart; capacity and workload together */
        const mfu_term_change *tc = &T[MFU_TERM_MFU];
        mfu__fmt_pct(p, sizeof p, tc->pct);
        ok = mfu__appendf(buf, n, ": utilization %s", p) && ok;
        if (fabs(T[MFU_TERM_PADDING].pct) >= 0.005) {
            mfu__fmt_pct(p, sizeof p, T[MFU_TERM_PADDING].pct);
            ok = mfu__appendf(buf, n, ", padding %s", p) && ok;
        }
        mfu__fmt_pct(p, sizeof p,
                     expm1(T[MFU_TERM_TOKENS_PER_S].dln - tc->dln - T[MFU_TERM_PADDING].dln));
        ok = mfu__appendf(buf, n,
                          ", capacity and workload together %s (not apart: %s FLOPs per "
                          "token are known only as ratios; give --device)",
                          p,
                          d->from.flops_relative && d->to.flops_relative ? "both logs'"
                          : d->from.flops_relative                       ? "A's"
                                                                         : "B's") &&
             ok;
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
            ok = mfu__appendf(buf, n, "%s %s",
                              d->capacity_unknown ? "FLOP/s per device" : "utilization", p) &&
                 ok;
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
    if (d->capacity_unknown) /* name what is missing: a peak, or (peak known) the devices */
        ok = mfu__appendf(buf, n, "; %s: MFU unknown, capacity taken as unchanged",
                          isfinite(d->from.peak_flops_per_s) && isfinite(d->to.peak_flops_per_s)
                              ? "devices unknown (give --devices)"
                              : "no peak") &&
             ok;
    return ok;
}
