/*
 * segment.c - warm-up, configuration runs and level shifts.
 *
 * 1. Config runs: a new run starts where a configuration key changes (model or hardware FLOPs
 *    per token, devices, peak, sequence length, global batch, dtype, recompute). A value that
 *    is absent (NaN, no label) means "unchanged". Runs shorter than min_segment_steps rows are
 *    merged into the run before them (into the next for the first): a configuration that
 *    flips every few steps is a mixed workload, not a change.
 * 2. Settle: the leading rows of every config run that are clearly slower than the rows that
 *    follow them (the run's first config run: the warm-up) are left out of every level.
 *    Row j is slow when ln(tokens/s) < median(ln tokens/s of rows j+1..j+30) − tol, with
 *    tol = max(4 σ, ln 1.05) and σ the robust noise (MAD of first differences / √2). The
 *    settle ends at the first row that is not slow and is followed, in the next 9 rows, by at
 *    most one slow row (so a spike just after the warm-up does not extend it); it is at most
 *    half the config run and at most MAX_SETTLE rows.
 * 3. Level shifts inside each config run (after its settle): binary segmentation on
 *    ln(tokens/s) (and on ln(useful/counted) when padding varies) with a rank CUSUM: at every
 *    split k (min_segment_steps from either end) the standardised Mann-Whitney statistic
 *    z_k = U_k / sqrt(k (m−k)(m+1)/12 · VIF), VIF = (1+ρ)/(1−ρ) with ρ the AR(1) coefficient
 *    estimated from the lag-1 autocorrelation of first differences (short-range correlation
 *    that would otherwise fake shifts; see vif_of). The best split is kept when its Bonferroni
 * p-value, (number of splits) · erfc(|z|/√2), is below changepoint_alpha; both halves are searched
 *    again. A stretch in the middle that differs (a throttled period) is also tested as one
 *    change: the range of the same rank CUSUM, standardised as a Brownian bridge, against
 *    Kuiper's distribution; when its p-value is the smaller, the cut is the stretch's left
 *    end (the best single split before the CUSUM's later extreme), and the recursion finds
 *    the other end.
 *    Ranks bound the weight of any one step, so spikes and stalls do not split.
 *    Finally adjacent segments whose median ln(tokens/s) differ by less than
 *    ln(1 + min_level_shift) are merged, smallest difference first.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "util/util.h"

#define MAX_SETTLE 1000
/* A log whose first step number is above this and above twice its first interval starts in the
 * middle of training: no warm-up is looked for (settle steps after a change still are). */
#define MID_RUN_FIRST_STEP 100
#define SETTLE_REF_ROWS MFU__SETTLE_REF_ROWS
#define SETTLE_WINDOW 10 /* a settled row starts 10 rows ... */
#define SETTLE_SPIKES 1  /* ... of which at most 1 more is slow */
#define MAX_SEGMENTS 256
#define RHO_MAX_ROWS 65536
#define RHO_MAX 0.95
#define GROUP_HASH_MIN 1024 /* runs of 16 × this many steps and more group by hashing */
#define SCAN_BLOCK 64       /* splits the rank CUSUM scan bounds at once (best_split) */

/* ---- config runs -------------------------------------------------------------------------- */

static bool differs(double cur, double x)
{
    return isfinite(cur) && isfinite(x) && fabs(x - cur) > 1e-9 * fabs(cur);
}

/* Start rows of config runs into starts (room for n); returns how many (>= 1 when n > 0). */
static size_t config_runs(const mfu_analysis *a, size_t *starts)
{
    static const mfu_series_col keys[] = {MFU_SC_MODEL_FLOPS_PER_TOKEN,
                                          MFU_SC_HARDWARE_FLOPS_PER_TOKEN,
                                          MFU_SC_DEVICES,
                                          MFU_SC_PEAK_FLOPS_PER_S,
                                          MFU_SC_SEQ_LEN,
                                          MFU_SC_GLOBAL_BATCH};
    enum { NK = sizeof keys / sizeof keys[0] };
    /* the keys some row has: an absent one (the NaN column) never changes, and its pages stay
     * unread (docs/internals/analysis.md "Memory") */
    const double *col[NK] = {NULL};
    size_t nk = 0;
    for (size_t q = 0; q < NK; q++)
        if (a->in[keys[q]] != a->nan)
            col[nk++] = a->in[keys[q]];
    double cur[NK];
    int cur_d = 0, cur_r = 0;
    for (size_t q = 0; q < NK; q++)
        cur[q] = NAN;
    size_t ns = 0;
    for (size_t i = 0; i < a->n; i++) {
        bool change = false;
        for (size_t q = 0; q < nk; q++) {
            double x = col[q][i];
            if (differs(cur[q], x))
                change = true;
        }
        if ((cur_d && a->dtype[i] && a->dtype[i] != cur_d) ||
            (cur_r && a->recompute[i] && a->recompute[i] != cur_r))
            change = true;
        if (i == 0 || change)
            starts[ns++] = i;
        for (size_t q = 0; q < nk; q++) {
            double x = col[q][i];
            if (isfinite(x))
                cur[q] = x;
        }
        if (a->dtype[i])
            cur_d = a->dtype[i];
        if (a->recompute[i])
            cur_r = a->recompute[i];
    }
    /* Merge short runs: drop the start of a short run (it joins the run before), or for a
     * short first run the start of the second. Repeat until stable. */
    size_t minlen = a->opt.min_segment_steps;
    bool merged = true;
    while (merged && ns > 1) {
        merged = false;
        for (size_t r = 0; r < ns; r++) {
            size_t end = r + 1 < ns ? starts[r + 1] : a->n;
            if (end - starts[r] >= minlen)
                continue;
            size_t drop = r == 0 ? 1 : r;
            memmove(starts + drop, starts + drop + 1, (ns - drop - 1) * sizeof *starts);
            ns--;
            merged = true;
            break;
        }
    }
    return ns;
}

/* ---- settle / warm-up --------------------------------------------------------------------- */

size_t mfu__settle_rows(const double *x, size_t m, double *tmp, uint8_t *slow)
{
    if (m < 2)
        return 0;
    /* the noise of the rows after the first (the first is the one on trial); a short run has too
     * few differences for it, and the 5 % floor decides alone */
    double sigma = m >= 2 * SETTLE_WINDOW ? mfu__robust_noise(x, m, tmp)
                                          : mfu__robust_noise(x + 1, m - 1, tmp);
    double tol = 4 * sigma;
    if (tol < log(1.05))
        tol = log(1.05);
    size_t cap = m / 2 < MAX_SETTLE ? m / 2 : MAX_SETTLE;
    size_t lim = cap + SETTLE_WINDOW < m ? cap + SETTLE_WINDOW : m;
    for (size_t j = 0; j < lim; j++) {
        size_t lo = j + 1, hi = j + 1 + SETTLE_REF_ROWS;
        if (hi > m)
            hi = m;
        slow[j] = 0;
        if (lo < hi) {
            memcpy(tmp, x + lo, (hi - lo) * sizeof *tmp);
            slow[j] = x[j] < mfu__median_inplace(tmp, hi - lo) - tol;
        }
    }
    for (size_t k = 0; k <= cap; k++) {
        if (k < lim && slow[k])
            continue;
        size_t nslow = 0;
        for (size_t j = k + 1; j < k + SETTLE_WINDOW && j < lim; j++)
            nslow += slow[j];
        if (nslow <= SETTLE_SPIKES)
            return k;
    }
    return cap;
}

/* ---- change points ------------------------------------------------------------------------ */

typedef struct cp_ctx {
    const double *sig[2];
    int nsig;
    size_t minseg;
    double alpha, vif[2];
    uint64_t *ord[2];   /* per signal: an interval in value order (see binseg) */
    uint32_t *gid[2];   /* per signal and position: its group of equal values (ascending) */
    uint32_t ngroup[2]; /* per signal: how many groups (distinct values) */
    uint64_t *spill;    /* scratch for splitting ord, m */
    uint32_t *r2;       /* twice the ranks (integers: ties average to halves), m */
    uint32_t *cnt[2];   /* per signal and group: its count in the interval searched */
    uint32_t *tab;      /* per group: twice its rank; or a counting sort's offsets */
    uint32_t *snap[2];  /* per signal: a stack of counts kept for a right half (binseg) */
    size_t nsnap[2], capsnap[2];
    size_t *cuts; /* found cuts (positions into the compact arrays) */
    size_t ncuts, maxcuts;
} cp_ctx;

/* log P(R > x) for the range R of a standard Brownian bridge (Kuiper's distribution):
 * 2 Σ_j (4 j² x² − 1) exp(−2 j² x²); 0 (p = 1) for small x. */
static double kuiper_logp(double x)
{
    if (!(x > 0.5))
        return 0;
    if (x > 6) /* the first term only; exp would underflow past x ≈ 19 */
        return log(2 * (4 * x * x - 1)) - 2 * x * x;
    double p = 0;
    for (int j = 1; j <= 100; j++) {
        double jj = (double)j * (double)j;
        double t = 2 * (4 * jj * x * x - 1) * exp(-2 * jj * x * x);
        p += t;
        if (t < 1e-17 * p)
            break;
    }
    return p >= 1 ? 0 : log(p);
}

/* An entry of the value order: the group of equal values it belongs to (ascending with the
 * value) in the high 32 bits, its position in the low 32, so that ranking an interval reads one
 * array in sequence. */
#define ORD_POS(e) ((uint32_t)(e))
#define ORD_GROUP(e) ((uint32_t)((e) >> 32))

/* The value order of x[0..m) (m <= UINT32_MAX, at most 2^32 distinct values) into ord: entries
 * as ORD_POS / ORD_GROUP; each position's group into gid; returns the number of groups (0 when
 * m is 0). work holds 5 m uint32 (mfu__order_doubles's scratch). The order is written into the
 * upper half of ord's bytes first and widened in place, entry q only overwriting order entries
 * before q + 1. */
static uint32_t value_order(const double *x, size_t m, uint64_t *ord, uint32_t *gid, uint32_t *work)
{
    uint32_t *o = (uint32_t *)(void *)ord + m;
    if (m == 0 || !mfu__order_doubles(x, m, o, work))
        return 0;
    /* byte copies: the same bytes are read as order entries and written as value-order ones */
    const unsigned char *ob = (const unsigned char *)o;
    unsigned char *wb = (unsigned char *)ord;
    uint64_t g = 0;
    uint32_t prev = 0;
    for (size_t q = 0; q < m; q++) {
        uint32_t cur;
        memcpy(&cur, ob + q * sizeof cur, sizeof cur);
        if (q > 0 && x[cur] != x[prev])
            g++;
        uint64_t e = g << 32 | cur;
        memcpy(wb + q * sizeof e, &e, sizeof e);
        gid[cur] = (uint32_t)g;
        prev = cur;
    }
    return (uint32_t)(g + 1);
}

/* A double's bits as a hash key, +0 for −0 (they are equal, so one group). */
static uint64_t value_bits(double x)
{
    uint64_t b;
    if (x == 0)
        x = 0;
    memcpy(&b, &x, sizeof b);
    return b;
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

/* The groups of equal values of x[0..m) without sorting x, when it has at most limit distinct
 * values (a log's times printed to a few digits: a few thousand in a million steps): a hash
 * table of the values (grown by doubling), their distinct values sorted, and each position's
 * group id renamed to its value's rank. gid gets the groups as value_order's; returns their
 * number, or 0 when there are more than limit (or on allocation failure: the caller sorts). */
static uint32_t groups_by_hash(const double *x, size_t m, uint32_t *gid, size_t limit)
{
    size_t cap = 1024, used = 0;
    uint64_t *key = malloc(cap * sizeof *key);
    uint32_t *id = malloc(cap * sizeof *id);
    double *val = malloc((limit + 1) * sizeof *val);
    bool ok = key && id && val && m > 0;
    for (size_t q = 0; ok && q < cap; q++)
        id[q] = UINT32_MAX;
    for (size_t i = 0; ok && i < m; i++) {
        uint64_t b = value_bits(x[i]), h = b * 0x9E3779B97F4A7C15u >> 32;
        size_t q = (size_t)h & (cap - 1);
        while (id[q] != UINT32_MAX && key[q] != b)
            q = (q + 1) & (cap - 1);
        if (id[q] == UINT32_MAX) {
            if (used == limit) {
                ok = false;
                break;
            }
            key[q] = b;
            id[q] = (uint32_t)used;
            val[used++] = x[i] == 0 ? 0.0 : x[i];
            if (2 * used > cap) { /* grow: the same ids in a table twice the size */
                size_t ncap = 2 * cap;
                uint64_t *nk = malloc(ncap * sizeof *nk);
                uint32_t *ni = malloc(ncap * sizeof *ni);
                ok = nk && ni;
                for (size_t r = 0; ok && r < ncap; r++)
                    ni[r] = UINT32_MAX;
                for (size_t r = 0; ok && r < cap; r++) {
                    if (id[r] == UINT32_MAX)
                        continue;
                    size_t t = (size_t)(key[r] * 0x9E3779B97F4A7C15u >> 32) & (ncap - 1);
                    while (ni[t] != UINT32_MAX)
                        t = (t + 1) & (ncap - 1);
                    nk[t] = key[r];
                    ni[t] = id[r];
                }
                if (!ok) {
                    free(nk);
                    free(ni);
                    break;
                }
                free(key);
                free(id);
                key = nk;
                id = ni;
                cap = ncap;
            }
            gid[i] = (uint32_t)(used - 1);
            continue;
        }
        gid[i] = id[q];
    }
    free(key);
    free(id);
    /* the distinct values in ascending order, each with its id: (order key, id) pairs */
    uint64_t *pair = ok ? malloc(2 * used * sizeof *pair) : NULL;
    uint32_t *rank = ok ? malloc(used * sizeof *rank) : NULL;
    ok = ok && pair && rank;
    if (ok) {
        for (size_t q = 0; q < used; q++) {
            uint64_t b = value_bits(val[q]);
            pair[2 * q] = (b >> 63) ? ~b : b | (uint64_t)1 << 63; /* unsigned order = numeric */
            pair[2 * q + 1] = q;
        }
        qsort(pair, used, 2 * sizeof *pair, cmp_u64);
        for (size_t q = 0; q < used; q++)
            rank[pair[2 * q + 1]] = (uint32_t)q;
        for (size_t i = 0; i < m; i++)
            gid[i] = rank[gid[i]];
    }
    free(val);
    free(pair);
    free(rank);
    return ok ? (uint32_t)used : 0;
}

/* Twice the average ranks (1-based, ties averaged: 2 r = first + last position of the group,
 * an integer) of the interval [lo, hi) into r2[0..m) from ord[lo..hi), its entries in value
 * order; returns Σ (t³ − t) over groups of t equal values, summed in ascending value as
 * mfu__ranks does. O(m). */
static double ranks_from_order(const uint64_t *ord, size_t lo, size_t hi, uint32_t *r2)
{
    size_t m = hi - lo, i = 0;
    const uint64_t *o = ord + lo;
    uint32_t lo32 = (uint32_t)lo;
    double ties = 0;
    while (i < m) {
        uint64_t g = o[i] >> 32;
        size_t j = i + 1;
        while (j < m && o[j] >> 32 == g)
            j++;
        if (j == i + 1) { /* most groups are one value */
            r2[ORD_POS(o[i]) - lo32] = (uint32_t)(2 * i + 2);
            i = j;
            continue;
        }
        double t = (double)(j - i);
        ties += t * t * t - t;
        uint32_t avg2 = (uint32_t)(i + 1 + j);
        for (size_t q = i; q < j; q++)
            r2[ORD_POS(o[q]) - lo32] = avg2;
        i = j;
    }
    return ties;
}

/* The same ranks as ranks_from_order from the groups of the positions when the interval holds
 * more values than there are groups: a count per group (unless have: cnt holds them already),
 * their running sum in ascending value: twice the average rank of group g is 2 · below +
 * count + 1, into tab, which the scan reads through the positions' groups (twice the rank of
 * position i is tab[gid[i]]). One pass in position order and one over the groups, without the
 * value order. */
static double ranks_by_count(const uint32_t *gid, uint32_t ngroup, size_t lo, size_t hi,
                             uint32_t *cnt, bool have, uint32_t *tab)
{
    const uint32_t *g = gid + lo;
    size_t m = hi - lo;
    if (!have) {
        memset(cnt, 0, ngroup * sizeof *cnt);
        for (size_t i = 0; i < m; i++)
            cnt[g[i]]++;
    }
    double ties = 0;
    uint32_t below = 0;
    for (uint32_t q = 0; q < ngroup; q++) {
        uint32_t t = cnt[q];
        if (t > 1) {
            double td = (double)t;
            ties += td * td * td - td;
        }
        tab[q] = 2 * below + t + 1;
        below += t;
    }
    return ties;
}

/* Twice the rank of the interval's i-th value: r2[i] from the value order, or the table of its
 * group (the two ways best_split ranks). */
#define RANK2(tab, g, i) ((g) ? (tab)[(g)[i]] : (tab)[i])

/* Σ (2 r − (m+1)) over i in [a, b), added to u, with the extremes of the running sum into
 * *bmax, *bmin; returns the sum. One loop per form, so the inner loop has no test of it. */
static int64_t block_sums(const uint32_t *tab, const uint32_t *g, size_t a, size_t b, int64_t u,
                          int64_t mean2, int64_t *bmax, int64_t *bmin)
{
    int64_t hi = INT64_MIN, lo = INT64_MAX;
    if (g)
        for (size_t i = a; i < b; i++) {
            u += (int64_t)tab[g[i]] - mean2;
            hi = u > hi ? u : hi;
            lo = u < lo ? u : lo;
        }
    else
        for (size_t i = a; i < b; i++) {
            u += (int64_t)tab[i] - mean2;
            hi = u > hi ? u : hi;
            lo = u < lo ? u : lo;
        }
    *bmax = hi;
    *bmin = lo;
    return u;
}

/* The counts of the groups of [lo, hi) taken off cnt. */
static void uncount(const uint32_t *gid, size_t lo, size_t hi, uint32_t *cnt)
{
    for (size_t i = lo; i < hi; i++)
        cnt[gid[i]]--;
}

/* ord[lo..hi) made the interval's value order again (equal values in position order) from the
 * groups of its positions: a counting sort, O(m + groups). Done once where a search that ranked
 * by counting (and left ord unsplit) reaches intervals shorter than the number of groups. */
static void order_by_count(const uint32_t *gid, uint32_t ngroup, size_t lo, size_t hi,
                           uint32_t *cnt, uint64_t *ord)
{
    memset(cnt, 0, ngroup * sizeof *cnt);
    for (size_t i = lo; i < hi; i++)
        cnt[gid[i]]++;
    uint32_t sum = 0;
    for (uint32_t q = 0; q < ngroup; q++) {
        uint32_t t = cnt[q];
        cnt[q] = sum;
        sum += t;
    }
    for (size_t i = lo; i < hi; i++) {
        uint64_t g = gid[i];
        ord[lo + cnt[g]++] = g << 32 | i;
    }
}

/* Split ord[lo..hi) (the interval [lo, hi) in value order) at pos: afterwards ord[lo..pos)
 * holds the positions below pos and ord[pos..hi) the others, each still in value order (a
 * stable partition), so each half is ranked without sorting again. O(m), without branches on
 * the data. */
static void split_order(uint64_t *ord, size_t lo, size_t hi, size_t pos, uint64_t *spill)
{
    size_t a = lo, b = 0;
    for (size_t q = lo; q < hi; q++) {
        uint64_t v = ord[q];
        size_t below = ORD_POS(v) < pos;
        ord[a] = v;
        spill[b] = v;
        a += below;
        b += 1 - below;
    }
    memcpy(ord + a, spill, b * sizeof *spill);
}

/* The epidemic cut: the best single split of r[0..kb), which holds one change only, kb being
 * the CUSUM's later extreme; r is twice the ranks. S and its tests in the order of operations
 * of the statistic's definition (segment.c's file comment). 0 when none qualifies. */
static size_t epidemic_cut(const uint32_t *tab, const uint32_t *g, size_t kb, size_t minseg,
                           double sum)
{
    double sub = sum / (double)kb, S = 0, best = -1, thr = -1;
    size_t best_k = 0;
    for (size_t k = 1; k < kb; k++) {
        S += 0.5 * (double)RANK2(tab, g, k - 1) - sub;
        if (k < minseg || kb - k < minseg)
            continue;
        double kk = (double)k * (double)(kb - k);
        if (S * S < thr * kk)
            continue;
        double z = fabs(S) / sqrt(kk);
        if (z > best) {
            best = z;
            best_k = k;
            thr = best * best * (1 - 1e-9);
        }
    }
    return best_k;
}

/* Best split of sig[lo..hi): position (absolute) and log p-value.
 *
 * The single split: the standardised Mann-Whitney statistic at every k, U_k = Σ_{i<k} (r_i −
 * (m+1)/2). An "epidemic" change (a stretch in the middle that differs, then the level returns)
 * splits the data so that no single split separates it well: the range of the same CUSUM, as a
 * Brownian bridge (S_k / (m √((m+1)/12)) → B(k/m)), has Kuiper's distribution (over k at least
 * minseg from either end, argmax and argmin at least minseg apart; the variance inflated by
 * ties × VIF as the single split's). When that is the stronger evidence the cut is the
 * stretch's left end: the extremes of a noisy CUSUM lie a few (correlated) steps off the true
 * ends, so it is found again as the best single split before the later extreme (epidemic_cut);
 * the recursion then finds the right end the same way.
 *
 * U is a sum of halves far below 2^53, so it is exact: twice it is summed in integers, one
 * pass gives the single split and the CUSUM's extremes, and the epidemic cut is only searched
 * when the epidemic test wins. */
static bool best_split(cp_ctx *c, int s, size_t lo, size_t hi, unsigned *ordok, unsigned *cntok,
                       size_t *pos, double *logp)
{
    size_t m = hi - lo, minseg = c->minseg;
    const uint32_t *tab = c->r2, *g = NULL; /* twice the ranks: RANK2(tab, g, i) */
    double ties;
    if (c->ngroup[s] <= m) {
        ties = ranks_by_count(c->gid[s], c->ngroup[s], lo, hi, c->cnt[s], *cntok & 1u << s, c->tab);
        tab = c->tab;
        g = c->gid[s] + lo;
        *cntok |= 1u << s;
        *ordok &= ~(1u << s); /* not split at a cut from here on */
    } else {
        if (!(*ordok & 1u << s))
            order_by_count(c->gid[s], c->ngroup[s], lo, hi, c->tab, c->ord[s]);
        *ordok |= 1u << s;
        *cntok &= ~(1u << s);
        ties = ranks_from_order(c->ord[s], lo, hi, c->r2);
    }
    /* Tie-corrected variance of the Mann-Whitney statistic; all values equal: no split. */
    double mm = (double)m, tiefac = 1 - ties / (mm * mm * mm - mm);
    if (!(tiefac > 1e-12))
        return false;
    /* U² < thr · k (m−k) cannot beat best (thr is best² · var / (k (m−k)) less a margin far
     * wider than rounding), so the square root and division are only taken where it might:
     * the same best, without them at most k. */
    double per_kk = (double)(m + 1) / 12.0 * tiefac * c->vif[s], thr = -1, best = -1;
    int64_t U2 = 0, mean2 = (int64_t)m + 1, smax = INT64_MIN, smin = INT64_MAX;
    size_t bk = 0, kmax = 0, kmin = 0;
    size_t kend = m > minseg ? m - minseg : 0; /* k in [minseg, kend] count */
    if (kend > m - 1)
        kend = m - 1;
    size_t k = 1;
    for (; k < minseg && k < m; k++)
        U2 += (int64_t)RANK2(tab, g, k - 1) - mean2;
    /* Blocks of SCAN_BLOCK splits: first only the sums and their extremes; a block that holds
     * no new extreme and whose largest |U| cannot pass the test even where k (m−k) is least
     * (at an end of the block: it is concave) is done. Rounding is monotone, so fl(Umax²) <
     * fl(thr · kkmin) implies fl(U²) < fl(thr · kk) for each of them: the same outcome as the
     * full test, which every other block takes. */
    while (k <= kend) {
        size_t kb = k + SCAN_BLOCK - 1 < kend ? k + SCAN_BLOCK - 1 : kend;
        if (thr > 0) {
            int64_t bmax, bmin, u = block_sums(tab, g, k - 1, kb, U2, mean2, &bmax, &bmin);
            if (bmax <= smax && bmin >= smin) {
                int64_t a = bmax > -bmin ? bmax : -bmin; /* max |U2| over the block */
                double umax = 0.5 * (double)a;
                double k0 = (double)k * (double)(m - k), k1 = (double)kb * (double)(m - kb);
                if (umax * umax < thr * (k0 < k1 ? k0 : k1)) {
                    U2 = u;
                    k = kb + 1;
                    continue;
                }
            }
        }
        for (; k <= kb; k++) {
            U2 += (int64_t)RANK2(tab, g, k - 1) - mean2;
            if (U2 > smax) {
                smax = U2;
                kmax = k;
            }
            if (U2 < smin) {
                smin = U2;
                kmin = k;
            }
            double U = 0.5 * (double)U2, kk = (double)k * (double)(m - k);
            if (U * U < thr * kk)
                continue;
            double var = kk * (double)(m + 1) / 12.0 * tiefac * c->vif[s];
            double z = fabs(U) / sqrt(var);
            if (z > best) {
                best = z;
                bk = k;
                thr = best * best * per_kk * (1 - 1e-9);
            }
        }
    }
    if (best < 0)
        return false;
    double nsplit = (double)(m - 2 * minseg + 1);
    double tail = erfc(best / sqrt(2.0));
    /* erfc underflows past z ≈ 38: use its asymptote there. */
    *logp =
        log(nsplit) +
        (tail > 0 ? log(tail) : -best * best / 2 - log(best * 1.2533141373155003 /* sqrt(pi/2) */));
    *pos = lo + bk;
    double infl = tiefac * c->vif[s];
    if (m < 3 * minseg || !(infl > 0) || !(smax > smin) ||
        (kmax > kmin ? kmax - kmin : kmin - kmax) < minseg)
        return true;
    double scale = (double)m * sqrt((double)(m + 1) / 12.0 * infl);
    double lr = kuiper_logp(0.5 * (double)(smax - smin) / scale);
    if (lr < *logp) {
        size_t kb = kmax > kmin ? kmax : kmin;
        /* Σ r over [0, kb): S_kb + kb (m+1)/2, exact as every partial sum of halves */
        int64_t S2 = kmax > kmin ? smax : smin;
        double sum = 0.5 * (double)(S2 + (int64_t)kb * mean2);
        size_t kcut = epidemic_cut(tab, g, kb, minseg, sum);
        *logp = lr;
        *pos = lo + (kcut ? kcut : (kmax < kmin ? kmax : kmin));
    }
    return true;
}

/* Binary segmentation of [lo, hi). Where bit s of ordok is set, ord[s][lo..hi) holds the
 * positions of the interval in the value order of signal s (the whole signal sorted once); a
 * found cut splits them in O(m) before both halves are searched. An interval with more values
 * than the signal has groups is ranked by counting instead (ranks_by_count), and its order is
 * left as it is: an interval below that length sorts itself again by counting (order_by_count,
 * O(m + groups), at most the cost of its parent's search). Where bit s of cntok is set,
 * c->cnt[s] holds the group counts of [lo, hi): after a cut the larger half gets its counts
 * by taking the smaller half's off (the smaller half counts itself), so that a search cutting
 * stretch by stretch off one end does not count the rest again; the right half's are kept on
 * a stack while the left is searched (only where it has 16 values a group, so the stack stays
 * small: each push is in a left half below half the size of the push before). */
static void binseg(cp_ctx *c, size_t lo, size_t hi, unsigned ordok, unsigned cntok)
{
    if (hi - lo < 2 * c->minseg || c->ncuts >= c->maxcuts)
        return;
    size_t pos = 0;
    double lp = 0;
    bool found = false;
    for (int s = 0; s < c->nsig; s++) {
        size_t p;
        double l;
        if (best_split(c, s, lo, hi, &ordok, &cntok, &p, &l) && l < log(c->alpha) &&
            (!found || l < lp)) {
            found = true;
            pos = p;
            lp = l;
        }
    }
    if (!found)
        return;
    c->cuts[c->ncuts++] = pos;
    unsigned lok = 0, rok = 0;
    bool pushed[2] = {false, false};
    for (int s = 0; s < c->nsig; s++) {
        if (ordok & 1u << s)
            split_order(c->ord[s], lo, hi, pos, c->spill);
        if (!(cntok & 1u << s))
            continue;
        size_t ng = c->ngroup[s];
        if (pos - lo >= hi - pos) {
            uncount(c->gid[s], pos, hi, c->cnt[s]);
            lok |= 1u << s;
        } else if (hi - pos >= 16 * ng && c->nsnap[s] < c->capsnap[s]) {
            uint32_t *sn = c->snap[s] + c->nsnap[s]++ * ng;
            memcpy(sn, c->cnt[s], ng * sizeof *sn);
            uncount(c->gid[s], lo, pos, sn);
            pushed[s] = true;
        }
    }
    binseg(c, lo, pos, ordok, lok);
    for (int s = 0; s < c->nsig; s++)
        if (pushed[s]) {
            size_t ng = c->ngroup[s];
            memcpy(c->cnt[s], c->snap[s] + --c->nsnap[s] * ng, ng * sizeof *c->cnt[s]);
            rok |= 1u << s;
        }
    binseg(c, pos, hi, ordok, rok);
}

/* Variance inflation of the rank CUSUM from short-range correlation: for AR(1) noise the
 * lag-1 autocorrelation of first differences is −(1−ρ)/2, so ρ = 1 + 2·r1(Δx). Differences
 * are blind to level shifts (one difference per shift) and clipped at 4 robust sd so that
 * spikes do not count. ρ is clamped to [0, RHO_MAX]; VIF = (1+ρ)/(1−ρ). */
static double vif_of(const double *x, size_t m, double *tmp, double *res)
{
    size_t mm = m < RHO_MAX_ROWS ? m : RHO_MAX_ROWS;
    if (mm < 8)
        return 1;
    for (size_t i = 0; i + 1 < mm; i++)
        res[i] = x[i + 1] - x[i];
    double sd = mfu__robust_sd(res, mm - 1, tmp);
    if (!(sd > 0)) /* mostly constant (a config-like signal): no noise to correct for */
        return 1;
    for (size_t i = 0; i + 1 < mm; i++) {
        if (res[i] > 4 * sd)
            res[i] = 4 * sd;
        if (res[i] < -4 * sd)
            res[i] = -4 * sd;
    }
    double rho = 1 + 2 * mfu__acf(res, mm - 1, 1);
    if (!(rho > 0))
        rho = 0;
    if (rho > RHO_MAX)
        rho = RHO_MAX;
    return (1 + rho) / (1 - rho);
}

/* The median of x over piece q of [0, m) (the pieces lie between the cuts). */
static double piece_median(const double *x, const size_t *cuts, size_t ncuts, size_t m, size_t q,
                           double *tmp)
{
    size_t a = q == 0 ? 0 : cuts[q - 1], b = q < ncuts ? cuts[q] : m;
    return mfu__median_copy(x + a, b - a, tmp);
}

/* Merge adjacent pieces whose medians (of either signal) differ by less than the shift,
 * smallest difference first. Each piece's median is computed once and again only when the
 * piece grows by a merge (the same numbers as computing every median again at every merge,
 * since a median depends on the values only). */
static size_t prune(const double *const *sig, int nsig, size_t *cuts, size_t ncuts, size_t m,
                    double minshift, double *tmp)
{
    enum { W = MAX_SEGMENTS + 1 };
    _Static_assert(MAX_SEGMENTS <= 256, "the piece medians live on the stack");
    double med[2][W];
    double thr = log(1 + minshift);
    for (int s = 0; s < nsig; s++)
        for (size_t q = 0; q <= ncuts; q++)
            med[s][q] = piece_median(sig[s], cuts, ncuts, m, q, tmp);
    while (ncuts > 0) {
        double bestd = INFINITY;
        size_t bi = 0;
        for (size_t q = 0; q < ncuts; q++) {
            double d = 0;
            for (int s = 0; s < nsig; s++) {
                double ds = fabs(med[s][q + 1] - med[s][q]);
                if (ds > d)
                    d = ds;
            }
            if (d < bestd) {
                bestd = d;
                bi = q;
            }
        }
        if (bestd >= thr)
            break;
        memmove(cuts + bi, cuts + bi + 1, (ncuts - bi - 1) * sizeof *cuts);
        ncuts--;
        for (int s = 0; s < nsig; s++) {
            memmove(&med[s][bi + 1], &med[s][bi + 2], (ncuts - bi) * sizeof med[s][0]);
            med[s][bi] = piece_median(sig[s], cuts, ncuts, m, bi, tmp);
        }
    }
    return ncuts;
}

size_t mfu__level_shifts(const double *const *sig, int nsig, size_t m, const mfu__shift_params *p,
                         size_t *cuts)
{
    if (nsig < 1 || nsig > 2)
        return 0;
    if (m > UINT32_MAX / 2) /* twice a rank must fit 32 bits */
        return SIZE_MAX;
    cp_ctx c = {0};
    c.nsig = nsig;
    c.minseg = p->min_segment_steps;
    c.alpha = p->alpha;
    c.cuts = cuts;
    c.maxcuts = MAX_SEGMENTS;
    /* Two allocations: the value orders and groups, and one scratch of 3 m words that is the
     * sort's scratch first, then the spill, the ranks and the group counts of the search, then
     * the pruning's copy. */
    size_t mm = m ? m : 1;
    uint64_t *work = malloc(3 * mm * sizeof *work);
    uint64_t *ords = malloc((size_t)nsig * mm * (sizeof *ords + sizeof(uint32_t)));
    bool ok = work && ords;
    unsigned ordok = 3u; /* the signals whose ord holds the whole run's value order */
    for (int s = 0; s < nsig; s++) {
        c.sig[s] = sig[s];
        c.vif[s] = p->vif[s];
        c.ord[s] = ords ? ords + (size_t)s * mm : NULL;
        c.gid[s] = p->scratch ? (uint32_t *)(void *)p->scratch + (size_t)s * mm
                   : ords     ? (uint32_t *)(void *)(ords + (size_t)nsig * mm) + (size_t)s * mm
                              : NULL;
        /* few distinct values: their groups by hashing, the value order only where an interval
         * needs it (order_by_count); else the groups from the sorted order */
        if (ok && m >= 16 * GROUP_HASH_MIN)
            c.ngroup[s] = groups_by_hash(sig[s], m, c.gid[s], m / 16);
        if (ok && c.ngroup[s] == 0)
            c.ngroup[s] = value_order(sig[s], m, c.ord[s], c.gid[s], (uint32_t *)(void *)work);
        else
            ordok &= ~(1u << s);
    }
    size_t nc = SIZE_MAX;
    if (ok) {
        c.spill = work;
        c.r2 = (uint32_t *)(void *)(work + mm);
        /* the rest of the scratch, 3 m uint32: each signal's counts, the table */
        c.cnt[0] = c.r2 + mm;
        c.cnt[1] = c.cnt[0] + c.ngroup[0];
        c.tab = c.cnt[1] + (nsig > 1 ? c.ngroup[1] : 0);
        /* the stacks of kept counts: floor(log2(m / groups)) + 2 deep where 16 groups fit */
        size_t nsnapw = 0;
        for (int s = 0; s < nsig; s++) {
            size_t ng = c.ngroup[s];
            if (ng > 0 && 16 * ng <= m) {
                size_t d = 2;
                for (size_t q = m / ng; q > 1; q /= 2)
                    d++;
                c.capsnap[s] = d;
                nsnapw += d * ng;
            }
        }
        uint32_t *snaps = nsnapw ? malloc(nsnapw * sizeof *snaps) : NULL;
        if (!snaps)
            c.capsnap[0] = c.capsnap[1] = 0; /* none: the right halves count themselves */
        c.snap[0] = snaps;
        c.snap[1] = snaps ? snaps + c.capsnap[0] * c.ngroup[0] : NULL;
        binseg(&c, 0, m, ordok, 0u);
        free(snaps);
        free(ords);
        ords = NULL;
        /* insertion sort: at most MAX_SEGMENTS cuts */
        for (size_t i = 1; i < c.ncuts; i++) {
            size_t v = cuts[i], j = i;
            for (; j > 0 && cuts[j - 1] > v; j--)
                cuts[j] = cuts[j - 1];
            cuts[j] = v;
        }
        _Static_assert(sizeof(double) == sizeof(uint64_t), "the scratch holds doubles");
        nc = prune(sig, nsig, cuts, c.ncuts, m, p->min_level_shift,
                   p->scratch ? p->scratch : (double *)(void *)work);
    }
    free(ords);
    free(work);
    return nc;
}

/* ---- putting it together ------------------------------------------------------------------ */

bool mfu__segment(mfu_analysis *a)
{
    size_t n = a->n;
    a->nseg = 0;
    size_t artifacts = a->warmup.artifacts, impossible = a->warmup.impossible;
    memset(&a->warmup, 0, sizeof a->warmup);
    a->warmup.slowdown = NAN;
    a->warmup.artifacts = artifacts;
    a->warmup.impossible = impossible;
    if (n == 0)
        return true;
    if (n >= 2) {
        int64_t first = a->step[0], gap = a->step[1] - a->step[0];
        a->warmup.mid_run = first > MID_RUN_FIRST_STEP && (gap <= 0 || first > 2 * gap);
    }
    size_t usable_rows = 0;
    for (size_t i = 0; i < n; i++)
        usable_rows += a->usable[i];
    a->warmup.checked = a->opt.detect_warmup && !a->warmup.mid_run && usable_rows >= 2;
    /* Scratch of n rows each; only the pages a run's rows write are ever the process's: the
     * index of the usable rows is written only for a config run with unusable rows in it (else
     * row j of the run is s + j), the padding share's logarithms only where the share moves. */
    _Static_assert(SETTLE_REF_ROWS <= MFU__WORK_PAD, "the settle's scratch is a work slot");
    size_t *starts = malloc(n * sizeof *starts);
    size_t *idx = mfu__work(a, 3);
    size_t *cuts = malloc((MAX_SEGMENTS + 1) * sizeof *cuts);
    size_t *segstart = malloc((MAX_SEGMENTS + 1) * sizeof *segstart);
    double *x0 = mfu__work(a, 0), *x1 = mfu__work(a, 2);
    double *tmp = mfu__work(a, 1);
    double *res = malloc(n * sizeof *res);
    uint8_t *slowflag = malloc(n);
    bool ok = starts && idx && cuts && segstart && x0 && x1 && tmp && res && slowflag;
    size_t nstart = 0, nruns = 0;
    if (ok) {
        nruns = config_runs(a, starts);
        for (size_t run = 0; run < nruns && ok; run++) {
            size_t s = starts[run], e = run + 1 < nruns ? starts[run + 1] : n;
            size_t m = 0, first_u = e;
            /* x0: the rate's logarithm; whether the padding share's (u / k) bits ever differ
             * from the first usable row's (if not, x1 is one value and padvar false) */
            bool moves = false, gaps = false;
            for (size_t i = s; i < e; i++)
                if (a->usable[i]) {
                    x0[m] = log(MFU__AT(a->kv, i) / mfu__t(a, i));
                    if (first_u == e)
                        first_u = i;
                    else if (memcmp(&MFU__AT(a->uv, i), &MFU__AT(a->uv, first_u), sizeof(double)) !=
                                 0 ||
                             memcmp(&MFU__AT(a->kv, i), &MFU__AT(a->kv, first_u), sizeof(double)) !=
                                 0)
                        moves = true;
                    m++;
                } else {
                    gaps = true;
                }
                /* row j of the run's usable rows */
#define ROW_OF(j) (gaps ? idx[(j)] : s + (j))
            if (gaps)
                for (size_t i = s, j = 0; i < e; i++)
                    if (a->usable[i])
                        idx[j++] = i;
            bool padvar = false;
            for (size_t i = s, j = 0; moves && i < e; i++)
                if (a->usable[i]) {
                    x1[j] = log(MFU__AT(a->uv, i) / MFU__AT(a->kv, i));
                    if (j && fabs(x1[j] - x1[0]) > 1e-12)
                        padvar = true;
                    j++;
                }
            bool look = a->opt.detect_warmup && !(run == 0 && a->warmup.mid_run);
            size_t settle = look ? mfu__settle_rows(x0, m, tmp, slowflag) : 0;
            size_t first_row = settle < m ? ROW_OF(settle) : e; /* first steady row */
            if (run == 0) {
                a->warmup.steps = settle ? first_row - s : 0;
                if (a->warmup.steps) {
                    a->warmup.first_step = a->step[s];
                    a->warmup.last_step = a->step[first_row - 1];
                }
            }
            for (size_t i = s; i < e; i++) {
                a->steady[i] = a->usable[i] && i >= first_row;
                if (i < first_row && a->usable[i])
                    a->state[i] = run == 0 ? MFU_ROW_WARMUP : MFU_ROW_SETTLE;
            }
            /* The run's first segment starts at its first row, except that the warm-up
             * belongs to no segment. */
            size_t seg0 = run == 0 ? s + a->warmup.steps : s;
            if (nstart < MAX_SEGMENTS && seg0 < e)
                segstart[nstart++] = seg0;
            size_t mm = m - settle;
            if (mm < 2 * a->opt.min_segment_steps || a->opt.steady_only)
                continue;
            const double *sig[2] = {x0 + settle, x1 + settle};
            mfu__shift_params sp = {.min_segment_steps = a->opt.min_segment_steps,
                                    .alpha = a->opt.changepoint_alpha,
                                    .min_level_shift = a->opt.min_level_shift,
                                    .scratch = tmp};
            sp.vif[0] = vif_of(sig[0], mm, tmp, res);
            sp.vif[1] = padvar ? vif_of(sig[1], mm, tmp, res) : 1;
            size_t nc = mfu__level_shifts(sig, padvar ? 2 : 1, mm, &sp, cuts);
            if (nc == SIZE_MAX) {
                ok = false;
                break;
            }
            for (size_t q = 0; q < nc && nstart < MAX_SEGMENTS; q++)
                segstart[nstart++] = ROW_OF(settle + cuts[q]);
#undef ROW_OF
        }
    }
    size_t total_steady = 0;
    for (size_t i = 0; i < n; i++)
        total_steady += a->steady[i];
    if (ok && total_steady == 0)
        nstart = 0; /* nothing to segment: no segments */
    if (ok) {
        /* Segments from their starts; one without a steady row joins the one before it. */
        a->seg = calloc(nstart ? nstart : 1, sizeof *a->seg);
        ok = a->seg != NULL;
        for (size_t q = 0; ok && q < nstart; q++) {
            size_t first = segstart[q], last = q + 1 < nstart ? segstart[q + 1] - 1 : n - 1;
            size_t nsteady = 0;
            for (size_t i = first; i <= last; i++)
                nsteady += a->steady[i];
            if (nsteady == 0 && a->nseg > 0) {
                a->seg[a->nseg - 1].last = last;
                continue;
            }
            mfu_segment *g = &a->seg[a->nseg];
            if (nsteady == 0 && q + 1 < nstart) { /* empty first: joins the next */
                segstart[q + 1] = first;
                continue;
            }
            g->first = first;
            g->last = last;
            g->cause = a->nseg == 0 ? MFU_CAUSE_START : MFU_CAUSE_LEVEL;
            a->nseg++;
        }
    }
    if (ok) {
        /* Causes and settle counts: a segment that starts a config run is a config change
         * (starts[] still holds the config runs found above). */
        for (size_t q = 0; q < a->nseg; q++) {
            mfu_segment *g = &a->seg[q];
            g->start_step = a->step[g->first];
            g->end_step = a->step[g->last];
            for (size_t run = 1; run < nruns; run++)
                if (q > 0 && starts[run] >= g->first && starts[run] <= g->last)
                    g->cause = MFU_CAUSE_CONFIG;
            size_t settle = 0;
            for (size_t i = g->first; i <= g->last && !a->steady[i]; i++)
                settle += a->usable[i];
            g->settle_steps = q == 0 ? 0 : settle;
        }
    }
    free(starts);
    free(cuts);
    free(segstart);
    free(res);
    free(slowflag);
    return ok;
}
