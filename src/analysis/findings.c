/*
 * findings.c - the detectors. Each looks at the steady steps (after warm-up and settle; the
 * impossible-value and loss checks look at every row), decides with a documented rule and
 * threshold (docs/internals/analysis.md), and adds at most one finding of its kind (the
 * throughput-versus-MFU detector one per boundary). A finding carries its figures as evidence
 * and a next step: what to look at.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "util/util.h"

/* Slow-step rule: a step slower than max(1 + STALL_MIN_EXCESS, exp(5 σ)) × the segment median. */
#define STALL_MIN_EXCESS 0.20
#define STALL_SIGMAS 5.0
/* Periodic when at least this many slow steps have, among their next PERIOD_NEIGHBOURS slow
 * steps, one a period later (±1 step), and they are at least PERIODIC_SHARE of the slow steps.
 * Above PERIOD_MAX_SLOW slow steps the period is not searched (they are not stalls). */
#define PERIODIC_MIN_GAPS 4
#define PERIODIC_SHARE 0.5
#define PERIOD_NEIGHBOURS 5
#define PERIOD_MAX_SLOW 100000
/* Padding, recompute, loss thresholds. */
#define PADDING_MIN 0.02
#define RECOMPUTE_MIN 0.01
#define LOSS_RISE 1.5
#define POWER_AT_LIMIT 0.97

bool mfu__push_finding(mfu_analysis *a, const mfu_finding *f)
{
    if (a->nfind >= MFU_ANALYSIS_MAX_FINDINGS)
        return false;
    a->find[a->nfind++] = *f;
    return true;
}

void mfu__evidence(mfu_finding *f, const char *name, double value)
{
    if (f->nevidence >= MFU_FINDING_EVIDENCE_MAX)
        return;
    mfu_evidence *e = &f->evidence[f->nevidence++];
    mfu__strlcpy(e->name, name, sizeof e->name);
    e->value = value;
}

static void init_finding(mfu_finding *f, const char *kind, mfu_severity sev, int64_t first,
                         int64_t last)
{
    memset(f, 0, sizeof *f);
    mfu__strlcpy(f->kind, kind, sizeof f->kind);
    f->severity = sev;
    f->first_step = first;
    f->last_step = last;
}

/* Scratch shared by the detectors: two arrays of n doubles and one of n indices. */
typedef struct scratch {
    double *x, *y;
    size_t *idx;
} scratch;

/* ---- throughput versus MFU ---------------------------------------------------------------- */

static void detect_tput_vs_mfu(mfu_analysis *a)
{
    for (size_t q = 0; q + 1 < a->nseg; q++) {
        const mfu_decomposition *d = &a->bnd[q];
        const mfu_term_change *tp = &d->term[MFU_TERM_TOKENS_PER_S], *mf = &d->term[MFU_TERM_MFU];
        if (!isfinite(mf->dln) || !isfinite(tp->dln))
            continue;
        if (!((tp->dln > 0 && mf->dln < 0) || (tp->dln < 0 && mf->dln > 0)))
            continue;
        if (fabs(tp->pct) < 0.01 || fabs(mf->pct) < 0.01)
            continue;
        if (a->opt.intervals && !(tp->direction_certain && mf->direction_certain))
            continue;
        /* The term that moved tokens/s the other way from MFU. */
        int best = MFU_TERM_FLOPS_PER_TOKEN;
        double bestv = 0;
        for (int t = MFU_TERM_CAPACITY; t <= MFU_TERM_PADDING; t++) {
            double v = d->term[t].dln * (tp->dln > 0 ? 1 : -1);
            if (v > bestv) {
                bestv = v;
                best = t;
            }
        }
        bool up = tp->dln > 0;
        mfu_finding f;
        init_finding(&f, up ? "throughput_up_mfu_down" : "throughput_down_mfu_up",
                     up ? MFU_SEV_WARNING : MFU_SEV_INFO, a->seg[q].end_step,
                     a->seg[q + 1].start_step);
        mfu__evidence(&f, "tokens_per_s_pct", tp->pct);
        mfu__evidence(&f, "mfu_pct", mf->pct);
        char name[32];
        snprintf(name, sizeof name, "%s_pct", mfu_term_name((mfu_term)best));
        mfu__evidence(&f, name, d->term[best].pct);
        snprintf(name, sizeof name, "%s_share", mfu_term_name((mfu_term)best));
        mfu__evidence(&f, name, d->term[best].share);
        mfu__evidence(&f, "mfu_from", d->from.mfu.value);
        mfu__evidence(&f, "mfu_to", d->to.mfu.value);
        snprintf(f.summary, sizeof f.summary, "at step %lld %s", (long long)f.last_step,
                 d->sentence);
        const char *next;
        if (best == MFU_TERM_FLOPS_PER_TOKEN)
            next = up ? "Judge this change by MFU, not tokens/s: each token is cheaper now, and "
                        "the hardware is less busy; keep matrices large (micro-batch, packing) to "
                        "win utilization back"
                      : "Each token costs more FLOPs now: the lower tokens/s is the workload, "
                        "not a regression; compare MFU across the change";
        else if (best == MFU_TERM_CAPACITY)
            next = up ? "Capacity grew faster than throughput: check scaling efficiency at the "
                        "new size (exposed communication, data-parallel overlap, batch per "
                        "device)"
                      : "Capacity shrank and utilization rose: compare per-device throughput, "
                        "not job tokens/s";
        else
            next = up ? "The gain is counted padding: report useful tokens/s and pack sequences"
                      : "Less padding is counted now: compare useful tokens/s";
        mfu__strlcpy(f.next_step, next, sizeof f.next_step);
        mfu__push_finding(a, &f);
    }
}

/* ---- stalls ------------------------------------------------------------------------------- */

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a > b) - (a < b);
}

static bool detect_stall(mfu_analysis *a, scratch *s)
{
    double lost = 0, total = 0;
    size_t nslow = 0;
    int64_t *slow = malloc((a->n ? a->n : 1) * sizeof *slow);
    double *excess = malloc((a->n ? a->n : 1) * sizeof *excess);
    if (!slow || !excess) {
        free(slow);
        free(excess);
        return false;
    }
    for (size_t q = 0; q < a->nseg; q++) {
        const mfu_segment *g = &a->seg[q];
        size_t m = 0;
        for (size_t i = g->first; i <= g->last; i++)
            if (a->steady[i])
                s->x[m++] = log(mfu__t(a, i));
        if (m < 3)
            continue;
        double base = mfu__median_copy(s->x, m, s->y);
        double sd = mfu__robust_sd(s->x, m, s->y);
        double thr = STALL_SIGMAS * sd;
        if (thr < log(1 + STALL_MIN_EXCESS))
            thr = log(1 + STALL_MIN_EXCESS);
        double bt = exp(base);
        /* the steady rows again, in order: x[j] is the j-th (no index of them written) */
        for (size_t i = g->first, j = 0; i <= g->last; i++) {
            if (!a->steady[i])
                continue;
            double xj = s->x[j++], t = mfu__t(a, i);
            total += t;
            if (xj - base > thr) {
                lost += t - bt;
                excess[nslow] = t / bt - 1;
                slow[nslow++] = a->step[i];
            }
        }
    }
    double share = total > 0 ? lost / total : 0;
    /* Period: the most common distance (±1 step) from each slow step to its next
     * PERIOD_NEIGHBOURS slow steps, so that random spikes between two stalls do not hide the
     * period. Periodic when at least PERIODIC_MIN_GAPS slow steps link to one a period later
     * and they are at least PERIODIC_SHARE of the slow steps. */
    int64_t period = 0;
    size_t matched = 0;
    size_t npairs = 0;
    if (nslow > PERIODIC_MIN_GAPS && nslow <= PERIOD_MAX_SLOW) {
        int64_t *gaps = malloc(nslow * PERIOD_NEIGHBOURS * sizeof *gaps);
        if (!gaps) {
            free(slow);
            free(excess);
            return false;
        }
        for (size_t j = 0; j < nslow; j++)
            for (size_t q = j + 1; q < nslow && q <= j + PERIOD_NEIGHBOURS; q++)
                if (slow[q] > slow[j])
                    gaps[npairs++] = slow[q] - slow[j];
        qsort(gaps, npairs, sizeof *gaps, cmp_i64);
        size_t lo = 0, hi = 0, best_exact = 0;
        for (size_t j = 0; j < npairs; j++) {
            /* pairs within [gaps[j] − 1, gaps[j] + 1]: a sliding window over sorted gaps */
            while (gaps[lo] < gaps[j] - 1)
                lo++;
            if (hi < j)
                hi = j;
            while (hi + 1 < npairs && gaps[hi + 1] <= gaps[j] + 1)
                hi++;
            size_t cl = hi - lo + 1, ex = 0;
            for (size_t q = lo; q <= hi; q++)
                ex += gaps[q] == gaps[j];
            if (cl > matched || (cl == matched && ex > best_exact)) {
                matched = cl;
                best_exact = ex;
                period = gaps[j];
            }
        }
        free(gaps);
        /* Links: slow steps followed (among their next neighbours) by one a period later. */
        matched = 0;
        for (size_t j = 0; period > 0 && j < nslow; j++)
            for (size_t q = j + 1; q < nslow && q <= j + PERIOD_NEIGHBOURS; q++) {
                int64_t dg = slow[q] - slow[j] - period;
                if (dg >= -1 && dg <= 1) {
                    matched++;
                    break;
                }
            }
    }
    bool periodic =
        matched >= PERIODIC_MIN_GAPS && (double)matched >= PERIODIC_SHARE * (double)(nslow - 1);
    double min_share = a->opt.stall_min_share * (periodic ? 1 : 3);
    if (nslow > 0 && share >= min_share) {
        mfu_finding f;
        init_finding(&f, "stall", share >= 0.05 ? MFU_SEV_WARNING : MFU_SEV_INFO, slow[0],
                     slow[nslow - 1]);
        double med_excess = mfu__median_inplace(excess, nslow);
        mfu__evidence(&f, "lost_share", share);
        mfu__evidence(&f, "slow_steps", (double)nslow);
        mfu__evidence(&f, "excess_ratio", med_excess);
        char pct[32];
        mfu__fmt_pct(pct, sizeof pct, share);
        if (periodic) {
            mfu__evidence(&f, "period_steps", (double)period);
            snprintf(f.summary, sizeof f.summary,
                     "every %lld steps a step takes %.1f\xc3\x97 the typical time: %zu slow "
                     "steps cost %s of the time",
                     (long long)period, 1 + med_excess, nslow, pct + (pct[0] == '+'));
            snprintf(f.next_step, sizeof f.next_step,
                     "Look for work scheduled every %lld steps (checkpointing, evaluation, "
                     "logging, garbage collection): make it asynchronous or less frequent",
                     (long long)period);
        } else {
            if (nslow == 1)
                snprintf(f.summary, sizeof f.summary,
                         "1 isolated slow step (%.1f\xc3\x97 the typical time) cost %s of the time",
                         1 + med_excess, pct + (pct[0] == '+'));
            else
                snprintf(f.summary, sizeof f.summary,
                         "%zu isolated slow steps (median %.1f\xc3\x97 the typical time) cost %s "
                         "of the time",
                         nslow, 1 + med_excess, pct + (pct[0] == '+'));
            mfu__strlcpy(f.next_step,
                         "Look at what ran at those steps: checkpoint writes, evaluation, data "
                         "shard boundaries, host or network contention",
                         sizeof f.next_step);
        }
        mfu__push_finding(a, &f);
    }
    free(slow);
    free(excess);
    return true;
}

/* ---- timers ------------------------------------------------------------------------------- */

static void detect_timers(mfu_analysis *a)
{
    static const struct {
        mfu_series_col col;
        const char *kind, *what, *next;
    } timers[] = {
        {MFU_SC_DATA_LOADING_S, "data_loading", "waiting for data",
         "Feed the step ahead of time: more data-loader workers, prefetching, pinned memory; "
         "check storage throughput and preprocessing on the host"},
        {MFU_SC_COMM_S, "communication", "in exposed communication",
         "Overlap communication with compute (gradient bucketing, overlap options), check the "
         "interconnect and topology, or give each device more work per step"},
        {MFU_SC_OPTIMIZER_S, "optimizer", "in the optimizer step",
         "Use a fused or sharded (distributed) optimizer and check optimizer state placement "
         "(offload, precision)"},
    };
    const double *st = a->d[MFU_D_STEP_TIME_S];
    for (size_t q = 0; q < MFU__ARRAY_LEN(timers); q++) {
        const double *v = a->in[timers[q].col];
        if (v == a->nan)
            continue; /* no row has it (and its pages stay unread) */
        double sum = 0, tot = 0;
        size_t cnt = 0, steady = 0;
        int64_t first = 0, last = 0;
        for (size_t i = 0; i < a->n; i++) {
            if (!a->steady[i])
                continue;
            steady++;
            if (!isfinite(v[i]) || v[i] < 0 || !(st[i] > 0))
                continue;
            if (!cnt)
                first = a->step[i];
            last = a->step[i];
            sum += v[i];
            tot += st[i];
            cnt++;
        }
        if (cnt < 3 || tot <= 0)
            continue;
        double share = sum / tot;
        if (share < a->opt.timer_min_share)
            continue;
        mfu_finding f;
        init_finding(&f, timers[q].kind,
                     share >= 3 * a->opt.timer_min_share ? MFU_SEV_WARNING : MFU_SEV_INFO, first,
                     last);
        mfu__evidence(&f, "share", share);
        mfu__evidence(&f, "mean_s", sum / (double)cnt);
        mfu__evidence(&f, "steps", (double)cnt);
        char pct[32];
        mfu__fmt_pct(pct, sizeof pct, share);
        snprintf(f.summary, sizeof f.summary, "%s of step time is spent %s (%.3g s per step)",
                 pct + (pct[0] == '+'), timers[q].what, sum / (double)cnt);
        mfu__strlcpy(f.next_step, timers[q].next, sizeof f.next_step);
        mfu__push_finding(a, &f);
        (void)steady;
    }
}

/* ---- clocks and power --------------------------------------------------------------------- */

static bool detect_throttle(mfu_analysis *a, scratch *s)
{
    const double *clk = a->in[MFU_SC_CLOCK_MHZ], *maxc = a->in[MFU_SC_MAX_CLOCK_MHZ];
    const double *pw = a->in[MFU_SC_POWER_W], *lim = a->in[MFU_SC_POWER_LIMIT_W];
    size_t m = 0, nmax = 0;
    /* (an absent column is the NaN column: no row of it counts, and its pages stay unread) */
    for (size_t i = 0; clk != a->nan && i < a->n; i++)
        if (a->steady[i] && clk[i] > 0 && isfinite(clk[i])) {
            s->idx[m] = i;
            s->x[m++] = clk[i];
        }
    size_t minrows = a->opt.min_segment_steps > 5 ? a->opt.min_segment_steps : 5;
    bool by_clock = m >= minrows;
    double ref = NAN, thr = NAN;
    if (by_clock) {
        for (size_t j = 0; maxc != a->nan && j < m; j++)
            if (maxc[s->idx[j]] > 0 && isfinite(maxc[s->idx[j]]))
                s->y[nmax++] = maxc[s->idx[j]];
        if (nmax)
            ref = mfu__median_inplace(s->y, nmax);
        else {
            memcpy(s->y, s->x, m * sizeof *s->y);
            mfu__sort_doubles(s->y, m);
            ref = mfu__quantile_sorted(s->y, m, 0.95);
        }
        thr = (1 - a->opt.throttle_min_drop) * ref;
    } else {
        /* Power only: rows at the limit. */
        m = 0;
        for (size_t i = 0; pw != a->nan && lim != a->nan && i < a->n; i++)
            if (a->steady[i] && isfinite(pw[i]) && lim[i] > 0 && isfinite(lim[i]))
                s->idx[m++] = i;
        if (m < minrows)
            return true;
    }
    /* Split rows into affected / not affected, comparing ln tokens/s. */
    size_t na = 0, nb = 0, atlimit = 0;
    double *pa = s->x, *pb = s->y; /* reused: clocks no longer needed after thr */
    double clk_aff = 0, pw_aff = 0, lim_aff = 0;
    int64_t first = 0, last = 0;
    double *clks = malloc(m * sizeof *clks), *pws = malloc(m * sizeof *pws);
    double *lims = malloc(m * sizeof *lims);
    if (!clks || !pws || !lims) {
        free(clks);
        free(pws);
        free(lims);
        return false;
    }
    size_t npw = 0;
    for (size_t j = 0; j < m; j++) {
        size_t i = s->idx[j];
        double pace = log(MFU__AT(a->kv, i) / mfu__t(a, i));
        bool limit_hit = isfinite(pw[i]) && lim[i] > 0 && pw[i] >= POWER_AT_LIMIT * lim[i];
        bool aff = by_clock ? clk[i] < thr : (isfinite(pw[i]) && pw[i] >= 0.98 * lim[i]);
        if (aff) {
            if (!na)
                first = a->step[i];
            last = a->step[i];
            clks[na] = clk[i];
            if (isfinite(pw[i]) && lim[i] > 0) {
                pws[npw] = pw[i];
                lims[npw++] = lim[i];
            }
            atlimit += limit_hit;
            pa[na++] = pace;
        } else {
            pb[nb++] = pace;
        }
    }
    double share = (double)na / (double)m;
    bool enough = by_clock ? (na >= 3 && share >= 0.02) : (share >= 0.2 && nb >= 3);
    double drop = NAN;
    if (na && nb) {
        double ma = mfu__median_inplace(pa, na), mb = mfu__median_inplace(pb, nb);
        drop = 1 - exp(ma - mb);
    }
    if (!by_clock && !(drop >= 0.02))
        enough = false;
    if (enough) {
        if (by_clock)
            clk_aff = mfu__median_inplace(clks, na);
        if (npw) {
            pw_aff = mfu__median_inplace(pws, npw);
            lim_aff = mfu__median_inplace(lims, npw);
        }
        bool power = !by_clock || (npw && (double)atlimit >= 0.5 * (double)na);
        bool material = (isnan(drop) || drop >= 0.02) && share >= 0.05;
        mfu_finding f;
        init_finding(&f, power ? "power_cap" : "throttling",
                     material ? MFU_SEV_WARNING : MFU_SEV_INFO, first, last);
        mfu__evidence(&f, "affected_steps", (double)na);
        mfu__evidence(&f, "affected_share", share);
        if (by_clock) {
            mfu__evidence(&f, "clock_mhz", clk_aff);
            mfu__evidence(&f, "reference_clock_mhz", ref);
        }
        if (isfinite(drop))
            mfu__evidence(&f, "tokens_per_s_drop", drop);
        if (npw) {
            mfu__evidence(&f, "power_w", pw_aff);
            mfu__evidence(&f, "power_limit_w", lim_aff);
        }
        char drops[48] = "";
        if (isfinite(drop)) {
            char p[32];
            mfu__fmt_pct(p, sizeof p, drop);
            snprintf(drops, sizeof drops, "; tokens/s %s lower there", p + (p[0] == '+'));
        }
        if (by_clock)
            snprintf(f.summary, sizeof f.summary,
                     "clock at %.0f MHz (%.0f %% of %.0f MHz) in %zu of %zu steps%s%s", clk_aff,
                     100 * clk_aff / ref, ref, na, m, power ? ", at the power limit" : "", drops);
        else
            snprintf(f.summary, sizeof f.summary,
                     "power at its limit (%.0f of %.0f W) in %zu of %zu steps%s", pw_aff, lim_aff,
                     na, m, drops);
        mfu__strlcpy(f.next_step,
                     power ? "The power limit holds the clock down: check the enforced limit and "
                             "cooling (nvidia-smi -q -d POWER,PERFORMANCE shows the reasons)"
                           : "The clock dropped below its reference: check temperatures, "
                             "cooling and throttle reasons (nvidia-smi -q -d PERFORMANCE) on "
                             "the affected nodes",
                     sizeof f.next_step);
        mfu__push_finding(a, &f);
    }
    free(clks);
    free(pws);
    free(lims);
    return true;
}

/* ---- padding and recomputation ------------------------------------------------------------ */

static void detect_padding(mfu_analysis *a)
{
    const mfu_level *L = &a->steady_level;
    /* the share of all counted tokens of the steady steps that are padding (a total) */
    double K = 0, U = 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->steady[i]) {
            K += MFU__AT(a->kv, i);
            U += MFU__AT(a->uv, i);
        }
    double waste = K > 0 ? 1 - U / K : NAN;
    if (!(L->steps > 0 && waste >= PADDING_MIN))
        return;
    mfu_finding f;
    init_finding(&f, "padding", waste >= 0.10 ? MFU_SEV_WARNING : MFU_SEV_INFO, L->first_step,
                 L->last_step);
    mfu__evidence(&f, "padding_share", waste);
    mfu__evidence(&f, "tokens_per_s", L->tokens_per_s.value);
    mfu__evidence(&f, "useful_tokens_per_s", L->useful_tokens_per_s.value);
    char p[32];
    mfu__fmt_pct(p, sizeof p, waste);
    snprintf(f.summary, sizeof f.summary,
             "%s of counted tokens are padding: useful tokens/s is %.3g, not %.3g",
             p + (p[0] == '+'), L->useful_tokens_per_s.value, L->tokens_per_s.value);
    mfu__strlcpy(f.next_step,
                 "Pack sequences (several documents per sequence with a block-diagonal mask) or "
                 "bucket batches by length; report useful tokens/s",
                 sizeof f.next_step);
    mfu__push_finding(a, &f);
}

static void detect_recompute(mfu_analysis *a)
{
    if (!a->has_flops)
        return;
    double kh = 0, kf = 0, uf = 0, tc = 0;
    size_t cnt = 0;
    int64_t first = 0, last = 0;
    for (size_t i = 0; i < a->n; i++) {
        if (!a->steady[i] || !(MFU__AT(a->hv, i) > MFU__AT(a->fv, i) * (1 + 1e-9)))
            continue;
        if (!cnt)
            first = a->step[i];
        last = a->step[i];
        cnt++;
        kh += MFU__AT(a->kv, i) * MFU__AT(a->hv, i);
        kf += MFU__AT(a->kv, i) * MFU__AT(a->fv, i);
        uf += MFU__AT(a->uv, i) * MFU__AT(a->fv, i);
        tc += mfu__t(a, i) * MFU__AT(a->cv, i);
    }
    if (!cnt || !(kf > 0) || !(tc > 0))
        return;
    double overhead = kh / kf - 1;
    if (overhead < RECOMPUTE_MIN)
        return;
    double hfu = kh / tc, mfu = uf / tc;
    mfu_finding f;
    init_finding(&f, "recompute", overhead >= 0.30 ? MFU_SEV_WARNING : MFU_SEV_INFO, first, last);
    mfu__evidence(&f, "recompute_overhead", overhead);
    mfu__evidence(&f, "hfu_minus_mfu", hfu - mfu);
    mfu__evidence(&f, "hfu", hfu);
    mfu__evidence(&f, "mfu", mfu);
    mfu__evidence(&f, "steps", (double)cnt);
    char p[32];
    mfu__fmt_pct(p, sizeof p, overhead);
    snprintf(f.summary, sizeof f.summary,
             "recomputation executes %s more FLOPs than the model needs: HFU %.1f %% vs MFU "
             "%.1f %% (%.1f points)",
             p + (p[0] == '+'), 100 * hfu, 100 * mfu, 100 * (hfu - mfu));
    mfu__strlcpy(f.next_step,
                 "If memory allows, recompute less: selective (attention only) instead of full, "
                 "fewer layers, or trade it for a smaller micro-batch",
                 sizeof f.next_step);
    mfu__push_finding(a, &f);
}

/* ---- impossible values -------------------------------------------------------------------- */

static void detect_impossible(mfu_analysis *a)
{
    size_t n_mfu = 0, n_hfu = 0, n_time = 0, n_tok = 0, n_useful = 0, n_hw = 0;
    double max_mfu = NAN, max_hfu = NAN;
    int64_t first = 0, last = 0;
    bool any = false;
    /* absent and constant columns read by value, not their pages (internal.h) */
    mfu__view vm = mfu__view_of(a, a->d[MFU_D_MFU]), vh = mfu__view_of(a, a->d[MFU_D_HFU]);
    mfu__view vst = mfu__view_of(a, a->d[MFU_D_STEP_TIME_S]);
    mfu__view vtok = mfu__view_of(a, a->in[MFU_SC_TOKENS]);
    mfu__view vtps = mfu__view_of(a, a->in[MFU_SC_TOKENS_PER_S]);
    mfu__view vut = mfu__view_of(a, a->in[MFU_SC_USEFUL_TOKENS]);
    mfu__view vF = mfu__view_of(a, a->in[MFU_SC_MODEL_FLOPS_PER_TOKEN]);
    mfu__view vH = mfu__view_of(a, a->in[MFU_SC_HARDWARE_FLOPS_PER_TOKEN]);
    for (size_t i = 0; i < a->n; i++) {
        double mfu = MFU__AT(vm, i), hfu = MFU__AT(vh, i);
        double st = MFU__AT(vst, i);
        double tok = MFU__AT(vtok, i), tps = MFU__AT(vtps, i);
        double ut = MFU__AT(vut, i);
        double F = MFU__AT(vF, i);
        double H = MFU__AT(vH, i);
        bool bad = false;
        if (mfu > 1) {
            n_mfu++;
            max_mfu = isnan(max_mfu) || mfu > max_mfu ? mfu : max_mfu;
            bad = true;
        }
        if (hfu > 1) {
            n_hfu++;
            max_hfu = isnan(max_hfu) || hfu > max_hfu ? hfu : max_hfu;
            bad = true;
        }
        if (isfinite(st) && st <= 0) {
            n_time++;
            bad = true;
        }
        if ((isfinite(tok) && tok < 0) || (isfinite(tps) && tps < 0) || (isfinite(ut) && ut < 0)) {
            n_tok++;
            bad = true;
        }
        if (isfinite(ut) && isfinite(tok) && ut > tok * (1 + 1e-9)) {
            n_useful++;
            bad = true;
        }
        if (isfinite(F) && isfinite(H) && H < F * (1 - 1e-9)) {
            n_hw++;
            bad = true;
        }
        if (bad) {
            if (!any)
                first = a->step[i];
            last = a->step[i];
            any = true;
        }
    }
    if (!any)
        return;
    mfu_finding f;
    init_finding(&f, "impossible_value", MFU_SEV_ERROR, first, last);
    char what[MFU_FINDING_TEXT_MAX] = "";
    if (n_mfu) {
        mfu__evidence(&f, "mfu_above_1_steps", (double)n_mfu);
        mfu__evidence(&f, "max_mfu", max_mfu);
        mfu__appendf(what, sizeof what, "%sMFU above 100 %% in %zu steps (max %.0f %%)",
                     what[0] ? "; " : "", n_mfu, 100 * max_mfu);
    }
    if (n_hfu) {
        mfu__evidence(&f, "above_peak_steps", (double)n_hfu);
        mfu__evidence(&f, "max_hfu", max_hfu);
        mfu__appendf(what, sizeof what,
                     "%stokens/s above what the peak allows in %zu steps (HFU max %.0f %%)",
                     what[0] ? "; " : "", n_hfu, 100 * max_hfu);
    }
    if (n_time) {
        mfu__evidence(&f, "nonpositive_step_time_steps", (double)n_time);
        mfu__appendf(what, sizeof what, "%sstep time <= 0 in %zu steps", what[0] ? "; " : "",
                     n_time);
    }
    if (n_tok) {
        mfu__evidence(&f, "negative_tokens_steps", (double)n_tok);
        mfu__appendf(what, sizeof what, "%snegative tokens or tokens/s in %zu steps",
                     what[0] ? "; " : "", n_tok);
    }
    if (n_useful) {
        mfu__evidence(&f, "useful_above_counted_steps", (double)n_useful);
        mfu__appendf(what, sizeof what, "%smore useful than counted tokens in %zu steps",
                     what[0] ? "; " : "", n_useful);
    }
    if (n_hw) {
        mfu__evidence(&f, "hardware_below_model_steps", (double)n_hw);
        mfu__appendf(what, sizeof what,
                     "%shardware FLOPs per token below model FLOPs per token in %zu steps",
                     what[0] ? "; " : "", n_hw);
    }
    mfu__strlcpy(f.summary, what, sizeof f.summary);
    mfu__strlcpy(f.next_step,
                 (n_mfu || n_hfu)
                     ? "Check the inputs: the peak (dtype, dense not sparse), the device count, "
                       "tokens per step counted for the whole job, and the FLOPs convention"
                     : "Check the log's step records: clock resets, averaged intervals or a "
                       "parser reading the wrong field",
                 sizeof f.next_step);
    mfu__push_finding(a, &f);
}

/* ---- loss --------------------------------------------------------------------------------- */

/* Median tokens/s of the usable rows among idx over steady_med (the median of the steady
 * steps): a ratio of typical steps to typical steps, which a stall elsewhere does not move (the
 * steady level, total tokens over total time, would: a 30x stall in a short log made a healthy
 * pace read as 330 %). NaN when no row is usable. */
static double pace_ratio(const mfu_analysis *a, const size_t *idx, size_t m, double *tmp,
                         double steady_med)
{
    size_t c = 0;
    for (size_t j = 0; j < m; j++)
        if (a->usable[idx[j]])
            tmp[c++] = MFU__AT(a->kv, idx[j]) / mfu__t(a, idx[j]);
    if (!c || !(steady_med > 0))
        return NAN;
    return mfu__median_inplace(tmp, c) / steady_med;
}

/* Median tokens/s of the usable steps after the warm-up (NaN when none); tmp holds a->n. */
static double steady_median_pace(const mfu_analysis *a, double *tmp)
{
    size_t c = 0;
    for (size_t i = a->warmup.steps; i < a->n; i++)
        if (a->usable[i])
            tmp[c++] = MFU__AT(a->kv, i) / mfu__t(a, i);
    return c ? mfu__median_inplace(tmp, c) : NAN;
}

static void detect_loss(mfu_analysis *a, scratch *s)
{
    const double *loss = a->in[MFU_SC_LOSS];
    double steady_med = steady_median_pace(a, s->x);
    size_t nn = 0;
    for (size_t i = 0; i < a->n; i++)
        if ((a->flags[i] & MFU_STEP_LOSS_NAN) || isinf(loss[i]))
            s->idx[nn++] = i;
    if (nn) {
        mfu_finding f;
        init_finding(&f, "loss_nan", MFU_SEV_ERROR, a->step[s->idx[0]], a->step[s->idx[nn - 1]]);
        double ratio = pace_ratio(a, s->idx, nn, s->x, steady_med);
        mfu__evidence(&f, "nan_steps", (double)nn);
        mfu__evidence(&f, "first_nan_step", (double)a->step[s->idx[0]]);
        if (isfinite(ratio))
            mfu__evidence(&f, "tokens_per_s_ratio", ratio);
        snprintf(f.summary, sizeof f.summary, "loss is not a number in %zu steps from step %lld%s",
                 nn, (long long)a->step[s->idx[0]],
                 ratio >= 0.95 ? " while tokens/s looks healthy" : "");
        if (isfinite(ratio))
            mfu__appendf(f.summary, sizeof f.summary, " (%.0f %% of the typical steady step's)",
                         100 * ratio);
        mfu__strlcpy(f.next_step,
                     "Training is broken, whatever the throughput says: restart from the last "
                     "good checkpoint and check learning rate, loss scaling, gradient norms and "
                     "the data at that step",
                     sizeof f.next_step);
        mfu__push_finding(a, &f);
    }
    /* Divergence: block medians of the finite loss after the warm-up (their rows' index only
     * for a rise found: its pages are not written otherwise) */
    size_t m = 0;
    for (size_t i = a->warmup.steps; i < a->n; i++)
        if (isfinite(loss[i]))
            s->x[m++] = loss[i];
    size_t w = m / 50 > 5 ? m / 50 : 5;
    size_t nb = m / w;
    if (nb < 4)
        return;
    double run_min = INFINITY, peak = NAN, min_at_peak = NAN, last_ratio = NAN, best = 0;
    size_t b_first = 0, b_last = 0;
    bool hit = false;
    for (size_t b = 0; b < nb; b++) {
        double med = mfu__median_copy(s->x + b * w, w, s->y);
        if (b > 0 && run_min > 0) {
            double r = med / run_min;
            last_ratio = r;
            if (r >= LOSS_RISE) {
                if (!hit)
                    b_first = b;
                b_last = b;
                hit = true;
                if (r > best) {
                    best = r;
                    peak = med;
                    min_at_peak = run_min;
                }
            }
        }
        if (med < run_min)
            run_min = med;
    }
    if (!hit)
        return;
    for (size_t i = a->warmup.steps, j = 0; i < a->n; i++)
        if (isfinite(loss[i]))
            s->idx[j++] = i;
    size_t r0 = b_first * w, r1 = b_last * w + w - 1;
    mfu_finding f;
    bool still = last_ratio >= LOSS_RISE;
    init_finding(&f, "loss_diverging", still ? MFU_SEV_ERROR : MFU_SEV_WARNING, a->step[s->idx[r0]],
                 a->step[s->idx[r1]]);
    double ratio = pace_ratio(a, s->idx + r0, r1 - r0 + 1, s->y, steady_med);
    mfu__evidence(&f, "loss_min", min_at_peak);
    mfu__evidence(&f, "loss_peak", peak);
    mfu__evidence(&f, "rise_ratio", best);
    if (isfinite(ratio))
        mfu__evidence(&f, "tokens_per_s_ratio", ratio);
    snprintf(f.summary, sizeof f.summary,
             "loss rose from %.4g to %.4g (%.1f\xc3\x97, block medians of %zu steps)%s%s",
             min_at_peak, peak, best, w, still ? " and has not come back" : " then recovered",
             ratio >= 0.95 ? " while tokens/s looks healthy" : "");
    mfu__strlcpy(f.next_step,
                 still ? "The run is diverging: stop it, restart from a checkpoint before the "
                         "rise with a lower learning rate or stronger clipping, and check the data"
                       : "A loss spike: check gradient norms and the data at those steps; "
                         "frequent spikes call for a lower learning rate or clipping",
                 sizeof f.next_step);
    mfu__push_finding(a, &f);
}

/* ---- stragglers --------------------------------------------------------------------------- */

typedef struct rk {
    int64_t step;
    int32_t rank;
    double t;
} rk;

static int cmp_rk_step(const void *pa, const void *pb)
{
    const rk *a = pa, *b = pb;
    if (a->step != b->step)
        return (a->step > b->step) - (a->step < b->step);
    return (a->rank > b->rank) - (a->rank < b->rank);
}

static int cmp_rk_rank(const void *pa, const void *pb)
{
    const rk *a = pa, *b = pb;
    if (a->rank != b->rank)
        return (a->rank > b->rank) - (a->rank < b->rank);
    return (a->t > b->t) - (a->t < b->t);
}

static bool detect_straggler(mfu_analysis *a, const mfu_series *s)
{
    size_t m = 0;
    if (!s->rank) /* no series of per-rank rows (finish's no_ranks): nothing to compare */
        return true;
    for (size_t i = 0; i < s->n; i++)
        m += s->rank[i] >= 0 && isfinite(s->col[MFU_SC_STEP_TIME_S][i]) &&
             s->col[MFU_SC_STEP_TIME_S][i] > 0;
    if (m < 10)
        return true;
    rk *v = malloc(m * sizeof *v);
    double *tmp = malloc(m * sizeof *tmp);
    double *rmed = malloc(m * sizeof *rmed);
    if (!v || !tmp || !rmed) {
        free(v);
        free(tmp);
        free(rmed);
        return false;
    }
    size_t j = 0;
    int64_t first = INT64_MAX, last = INT64_MIN;
    /* Warm-up steps are left out when the job's series knows them. */
    int64_t skip_to = a->warmup.steps ? a->warmup.last_step : INT64_MIN;
    for (size_t i = 0; i < s->n; i++) {
        double t = s->col[MFU_SC_STEP_TIME_S][i];
        if (s->rank[i] < 0 || !isfinite(t) || t <= 0)
            continue;
        if (a->warmup.steps && s->step[i] <= skip_to)
            continue;
        v[j].step = s->step[i];
        v[j].rank = s->rank[i];
        v[j].t = t;
        j++;
    }
    m = j;
    qsort(v, m, sizeof *v, cmp_rk_step);
    /* Replace each t by its ratio to the step's median across ranks (single-rank steps: NaN). */
    for (size_t i = 0; i < m;) {
        size_t e = i;
        while (e < m && v[e].step == v[i].step)
            e++;
        if (e - i >= 2) {
            for (size_t q = i; q < e; q++)
                tmp[q - i] = v[q].t;
            double med = mfu__median_inplace(tmp, e - i);
            for (size_t q = i; q < e; q++) {
                v[q].t /= med;
                if (v[q].step < first)
                    first = v[q].step;
                if (v[q].step > last)
                    last = v[q].step;
            }
        } else
            v[i].t = NAN;
        i = e;
    }
    /* Per rank: the median ratio. NaN ratios sort last within a rank; skip them. */
    qsort(v, m, sizeof *v, cmp_rk_rank);
    size_t nranks = 0, worst_n = 0;
    int32_t worst = -1;
    double worst_med = -1;
    {
        for (size_t i = 0; i < m;) {
            size_t e = i, c = 0;
            while (e < m && v[e].rank == v[i].rank) {
                if (isfinite(v[e].t))
                    tmp[c++] = v[e].t;
                e++;
            }
            if (c >= 5) {
                double med = mfu__median_inplace(tmp, c);
                rmed[nranks++] = med;
                if (med > worst_med) {
                    worst_med = med;
                    worst = v[i].rank;
                    worst_n = c;
                }
            }
            i = e;
        }
    }
    if (nranks >= 2) {
        memcpy(tmp, rmed, nranks * sizeof *tmp);
        double typical = mfu__median_inplace(tmp, nranks);
        double slowdown = worst_med / typical - 1;
        size_t nslow = 0;
        for (size_t r = 0; r < nranks; r++)
            nslow += rmed[r] / typical - 1 >= a->opt.straggler_min;
        if (slowdown >= a->opt.straggler_min) {
            mfu_finding f;
            init_finding(&f, "straggler", MFU_SEV_WARNING, first, last);
            mfu__evidence(&f, "rank", (double)worst);
            mfu__evidence(&f, "slowdown", slowdown);
            mfu__evidence(&f, "ranks", (double)nranks);
            mfu__evidence(&f, "slow_ranks", (double)nslow);
            mfu__evidence(&f, "steps", (double)worst_n);
            mfu__evidence(&f, "lost_share", 1 - 1 / (1 + slowdown));
            char p[32];
            mfu__fmt_pct(p, sizeof p, slowdown);
            snprintf(f.summary, sizeof f.summary,
                     "rank %d is %s slower than the median rank over %zu steps (%zu of %zu ranks "
                     "slow); synchronous steps wait for it",
                     (int)worst, p + (p[0] == '+'), worst_n, nslow, nranks);
            snprintf(f.next_step, sizeof f.next_step,
                     "Check rank %d's device and host: clocks and temperature, PCIe/NVLink "
                     "errors, CPU or data-loader contention; drain or replace the node",
                     (int)worst);
            mfu__push_finding(a, &f);
        }
    }
    free(rmed);
    free(v);
    free(tmp);
    return true;
}

bool mfu__detect(mfu_analysis *a, const mfu_series *series)
{
    scratch s; /* the analysis's work slots: the pages the segment search wrote */
    s.x = mfu__work(a, 0);
    s.y = mfu__work(a, 1);
    s.idx = mfu__work(a, 2);
    bool ok = s.x && s.y && s.idx;
    if (ok) {
        detect_impossible(a);
        detect_tput_vs_mfu(a);
        ok = detect_stall(a, &s);
        detect_timers(a);
        ok = ok && detect_throttle(a, &s);
        detect_padding(a);
        detect_recompute(a);
        detect_loss(a, &s);
        ok = ok && detect_straggler(a, series);
    }
    return ok;
}
