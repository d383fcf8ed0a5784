/*
 * implied.c - what the log's own figures say about the workload, and the context check
 * (figures/figures.h; the method is in docs/internals/figures.md).
 *
 * A framework that prints two of tokens/s, TFLOP/s and MFU tells, step by step, its FLOPs per
 * token and its peak under its own convention: FLOPs per counted token = TFLOP/s ÷ tokens/s
 * per device (or MFU x its peak ÷ tokens/s), peak = TFLOP/s ÷ MFU. These hold still while the
 * workload does; a step where they move is a workload (or capacity) change, never a change of
 * utilization. Two checks follow from that:
 *
 *   tokens  where the caller gave tokens per step (or a global batch) and the log prints its
 *           own tokens (or sequences) per step, the ratio of the two is constant while the
 *           given context holds; from a step where it moves, the log's count (times the ratio
 *           where it held) is used;
 *   FLOPs   the log's FLOPs per counted token over mfu's count of the same under the
 *           framework's convention is constant while the given context holds (1 when it is
 *           right); from a step where it moves, the context no longer describes the run: with
 *           the model known, the sequence length whose count gives the new ratio is solved
 *           for (with the counted tokens following it when they were batch x sequence); when
 *           no length gives it, the FLOPs per token are scaled by the log's change (so MFU
 *           follows the log's FLOP/s and the change lands in the workload term).
 *
 * Stretches: the rows with evidence are split where ln(value) leaves the running stretch's
 * reference (median of its first rows) by more than tol = max(2 %, 6 x the robust noise of
 * ln(value)) for 3 evidence rows in a row (so a spike is not a stretch); stretches of fewer
 * than 3 evidence rows join the one before. A row without evidence belongs to the stretch
 * before it. Without a model (log mode), the stretches' medians are the FLOPs per token and
 * peak of the analysis, and the MFU of a step is the log's own.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures/figures.h"

#define MIN_TOL 0.02   /* smallest relative move that makes a stretch */
#define NOISE_K 6.0    /* ... or this many times the noise of ln(value) */
#define CONFIRM 3      /* evidence rows in a row that confirm a move */
#define MIN_ROWS 3     /* shorter stretches join the one before */
#define REF_ROWS 5     /* rows of a stretch its reference is the median of */
#define CTX_TOL 0.03   /* the context holds where the log is within 3 % of it */
#define APPROX_TOL 0.1 /* ... or 10 % for a framework whose FLOPs are measured */
#define SEQ_MIN 8.0
#define SEQ_MAX 16777216.0

static bool pos(double v)
{
    return isfinite(v) && v > 0;
}

const mfu__frun *mfu__figures_run_at(const mfu__fctx *f, size_t row)
{
    size_t lo = 0, hi = f->nruns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->runs[mid].last < row)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->nruns && f->runs[lo].first <= row ? &f->runs[lo] : NULL;
}

const mfu__trun *mfu__figures_trun_at(const mfu__fctx *f, size_t row)
{
    size_t lo = 0, hi = f->ntruns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->truns[mid].last < row)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->ntruns && f->truns[lo].first <= row ? &f->truns[lo] : NULL;
}

/* Stretches of the series lx[0..m) (logs of the evidence rows, in row order): the starting
 * positions into starts (room for m); returns how many (>= 1 when m > 0). tmp: m doubles. */
static size_t stretches(const double *lx, size_t m, double *tmp, size_t *starts)
{
    if (m == 0)
        return 0;
    double tol = NOISE_K * mfu__robust_noise(lx, m, tmp);
    if (tol < MIN_TOL)
        tol = MIN_TOL;
    size_t ns = 0;
    starts[ns++] = 0;
    size_t s0 = 0;
    double ref = lx[0];
    for (size_t j = 1; j < m; j++) {
        size_t have = j - s0;
        if (have <= REF_ROWS) { /* the reference: median of the stretch's first rows */
            memcpy(tmp, lx + s0, have * sizeof *tmp);
            ref = mfu__median_inplace(tmp, have);
        }
        if (fabs(lx[j] - ref) <= tol)
            continue;
        /* a move: confirmed when the next rows are off the reference too, and near lx[j] */
        size_t k = 1, need = m - j < CONFIRM ? m - j : CONFIRM;
        while (k < need && fabs(lx[j + k] - ref) > tol && fabs(lx[j + k] - lx[j]) <= tol)
            k++;
        if (k < need)
            continue;
        starts[ns++] = j;
        s0 = j;
        ref = lx[j];
    }
    /* short stretches join the one before (the first one, the one after) */
    bool merged = true;
    while (merged && ns > 1) {
        merged = false;
        for (size_t r = 0; r < ns; r++) {
            size_t end = r + 1 < ns ? starts[r + 1] : m;
            if (end - starts[r] >= MIN_ROWS)
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

/* Median of col over the evidence rows idx[a..b). */
static double median_at(const double *col, const size_t *idx, size_t a, size_t b, double *tmp)
{
    size_t k = 0;
    for (size_t j = a; j < b; j++)
        if (isfinite(col[idx[j]]))
            tmp[k++] = col[idx[j]];
    return mfu__median_inplace(tmp, k);
}

/* The framework's count of FLOPs per token at sequence length seq (and the run's
 * recomputation), as the context would give it; NaN when it cannot be counted. */
static double stack_fpt_at(mfu__fctx *f, double seq)
{
    mfu_workload wl = f->wl;
    wl.seq = (int64_t)seq;
    mfu_flops fl;
    if (!(seq >= 1 && seq < 9e15) ||
        mfu_flops_compute(&f->in.arch, &wl, &f->sopt, &fl, NULL) != MFU_OK)
        return NAN;
    return f->c.stack.counts_recompute ? fl.hardware_flops : fl.model_flops;
}

/* g(seq) = the framework's count at seq, times seq / seq_c when the counted tokens follow the
 * sequence length: what the log's FLOPs per counted token would be at seq. */
static double implied_at(mfu__fctx *f, double seq, double seq_c, bool tracks)
{
    double v = stack_fpt_at(f, seq);
    return tracks ? v * seq / seq_c : v;
}

/* How round a solved sequence length is. */
enum { SEQ_NONE = 0, SEQ_ROUND, SEQ_POW2 };

/* The sequence length whose count gives target (see the file comment): a power of two, else 3
 * or 5 times one, when one is within tol / 2 of it (*kind SEQ_POW2, SEQ_ROUND); else NaN
 * (SEQ_NONE): a length that is not round is not read as one. */
static double solve_seq(mfu__fctx *f, double target, double seq_c, bool tracks, double tol,
                        int *kind)
{
    *kind = SEQ_NONE;
    double lo = SEQ_MIN, hi = SEQ_MAX;
    double glo = implied_at(f, lo, seq_c, tracks), ghi = implied_at(f, hi, seq_c, tracks);
    if (!pos(glo) || !pos(ghi) || target < glo || target > ghi)
        return NAN;
    for (int it = 0; it < 80 && hi - lo > 0.5; it++) {
        double mid = 0.5 * (lo + hi);
        if (implied_at(f, mid, seq_c, tracks) < target)
            lo = mid;
        else
            hi = mid;
    }
    double s = 0.5 * (lo + hi);
    /* the round lengths near s: a power of two, else 3 or 5 times one (1536, 2560, 6144: the
     * lengths runs use); a length like 14976 is no one's sequence, it is another model */
    double p2 = exp2(round(log2(s)));
    double cand[3] = {p2, 3 * exp2(round(log2(s / 3))), 5 * exp2(round(log2(s / 5)))};
    int kinds[3] = {SEQ_POW2, SEQ_ROUND, SEQ_ROUND};
    for (int k = 0; k < 3; k++) {
        double g = implied_at(f, cand[k], seq_c, tracks);
        if (cand[k] >= 64 && pos(g) && fabs(log(g / target)) <= tol / 2) {
            *kind = kinds[k];
            return cand[k];
        }
    }
    return NAN;
}

/* A stretch's verdict as three numbers: sequence length (NaN: the context's), tokens scale,
 * FLOPs scale. Rows no stretch covers have the context's verdict. */
typedef struct verdict {
    double seq, tokens, fpt;
} verdict;

static bool verdict_same(verdict a, verdict b)
{
    bool seq = (isnan(a.seq) && isnan(b.seq)) || a.seq == b.seq;
    return seq && a.tokens == b.tokens && a.fpt == b.fpt;
}

/* Stretches of either check as rows and verdicts: the form first_change compares. */
typedef struct span {
    size_t first, last;
    verdict v;
} span;

static span *spans_of_runs(const mfu__frun *r, size_t n)
{
    span *s = malloc((n ? n : 1) * sizeof *s);
    for (size_t i = 0; s && i < n; i++)
        s[i] = (span){r[i].first, r[i].last, {r[i].seq, r[i].tokens_scale, r[i].fpt_scale}};
    return s;
}

static span *spans_of_truns(const mfu__trun *t, size_t n)
{
    span *s = malloc((n ? n : 1) * sizeof *s);
    for (size_t i = 0; s && i < n; i++)
        s[i] = (span){t[i].first, t[i].last, {NAN, t[i].scale, 1}};
    return s;
}

/* The first row of [0, n) whose verdict under old[0..no) differs from cur[0..nc) (n: none;
 * a row no span covers has the context's verdict): the rows are walked range by range, so a
 * stretch that only grew changes nothing. 0 when either list is NULL (out of memory: every row
 * may have changed). */
static size_t first_change(const span *old, size_t no, const span *cur, size_t nc, size_t n)
{
    if (!old || !cur)
        return 0;
    const verdict ctx = {NAN, 1, 1};
    size_t i = 0, a = 0, b = 0;
    while (i < n) {
        while (a < no && old[a].last < i)
            a++;
        while (b < nc && cur[b].last < i)
            b++;
        const span *u = a < no && old[a].first <= i ? &old[a] : NULL;
        const span *w = b < nc && cur[b].first <= i ? &cur[b] : NULL;
        if (!verdict_same(u ? u->v : ctx, w ? w->v : ctx))
            return i;
        /* the next row where either side's stretch ends or begins */
        size_t next = n;
        if (u && u->last + 1 < next)
            next = u->last + 1;
        if (!u && a < no && old[a].first < next)
            next = old[a].first;
        if (w && w->last + 1 < next)
            next = w->last + 1;
        if (!w && b < nc && cur[b].first < next)
            next = cur[b].first;
        i = next > i ? next : i + 1;
    }
    return n;
}

/* first_change of two lists of stretches of the FLOPs check, or of the tokens check. */
static size_t first_run_change(const mfu__frun *old, size_t no, const mfu__frun *cur, size_t nc,
                               size_t n)
{
    span *a = spans_of_runs(old, no), *b = spans_of_runs(cur, nc);
    size_t k = first_change(a, no, b, nc, n);
    free(a);
    free(b);
    return k;
}

static size_t first_trun_change(const mfu__trun *old, size_t no, const mfu__trun *cur, size_t nc,
                                size_t n)
{
    span *a = spans_of_truns(old, no), *b = spans_of_truns(cur, nc);
    size_t k = first_change(a, no, b, nc, n);
    free(a);
    free(b);
    return k;
}

/* The tokens check: stretches of given / printed tokens per step. Rows whose tokens are the
 * caller's and whose log prints its own count are the evidence. */
static bool tokens_check(mfu__fctx *f, const mfu__fcols *c, size_t *idx, double *lx, double *tmp,
                         size_t *starts, mfu__trun **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (!(f->override_tokens > 0) && !(f->override_batch > 0))
        return true;
    size_t m = 0;
    for (size_t i = 0; i < c->n; i++) {
        uint8_t ts = c->tok_source[i];
        double given = c->v[MFU__FC_TOKENS][i], printed = c->v[MFU__FC_LOG_TOKENS][i];
        if ((c->flags[i] & MFU__FR_TOKENS_INFERRED) || (c->flags[i] & MFU__FR_SEQ_INFERRED))
            given = ts == MFU__TOK_INPUT_TOKENS ? f->override_tokens
                                                : f->override_batch * c->v[MFU__FC_SEQ][i];
        if ((ts == MFU__TOK_INPUT_TOKENS || ts == MFU__TOK_INPUT_BATCH) && pos(given) &&
            pos(printed)) {
            idx[m] = i;
            lx[m++] = log(given / printed);
        }
    }
    if (m < 2 * MIN_ROWS)
        return true;
    size_t ns = stretches(lx, m, tmp, starts);
    if (ns < 2)
        return true;
    mfu__trun *t = calloc(ns, sizeof *t);
    if (!t)
        return false;
    for (size_t r = 0; r < ns; r++) {
        size_t a = starts[r], b = r + 1 < ns ? starts[r + 1] : m;
        t[r].first = r == 0 ? 0 : idx[a];
        t[r].last = r + 1 < ns ? idx[b] - 1 : c->n - 1;
        for (size_t j = a; j < b; j++)
            tmp[j - a] = lx[j];
        t[r].ratio = exp(mfu__median_inplace(tmp, b - a));
    }
    /* the context holds in the first stretch (it describes the start of the run) or where the
     * given and printed counts agree */
    size_t ref = 0;
    for (size_t r = 0; r < ns; r++)
        if (fabs(log(t[r].ratio)) <= CTX_TOL) {
            ref = r;
            break;
        }
    for (size_t r = 0; r < ns; r++) {
        t[r].holds = r == ref || fabs(log(t[r].ratio / t[ref].ratio)) <= CTX_TOL;
        t[r].scale = t[r].holds ? 1 : t[ref].ratio / t[r].ratio;
    }
    *out = t;
    *nout = ns;
    return true;
}

/* What the log's FLOPs per counted token of row i were counted against. tracks: tokens that
 * follow the context's sequence length (batch x sequence: a new length moves them too);
 * given: tokens the caller or the header gave, not the log's own count (they go stale when
 * the batch changes unprinted); printed: the log prints its sequences per step (or its
 * samples/s) on the row, so its batch is known. */
static void row_basis(const mfu__fcols *c, size_t i, bool *tracks, bool *given, bool *printed)
{
    uint8_t s = c->tps_source[i], t = c->tok_source[i];
    *tracks = *given = *printed = false;
    if (c->flags[i] & MFU__FR_LOG_OWN_TPS)
        return; /* the framework's own tokens/s: its count, whatever the context says */
    if (s == MFU__TPS_SAMPLES) {
        *tracks = *printed = true;
        return;
    }
    if (s != MFU__TPS_TOKENS_TIME && s != MFU__TPS_TIME_DELTA)
        return;
    *tracks = t == MFU__TOK_INPUT_BATCH || t == MFU__TOK_SAMPLES || t == MFU__TOK_HEADER_BATCH;
    *given = t == MFU__TOK_INPUT_TOKENS || t == MFU__TOK_INPUT_BATCH || t == MFU__TOK_HEADER ||
             t == MFU__TOK_HEADER_BATCH;
    *printed = t == MFU__TOK_SAMPLES;
}

/* The context's count (framework convention) at row i, as if the check had not spoken. */
static double ctx_fpt_of(mfu__fctx *f, const mfu__fcols *c, size_t i)
{
    if (!(c->flags[i] & MFU__FR_SEQ_INFERRED)) {
        double v = c->v[MFU__FC_STACK_FPT][i];
        const mfu__frun *fr = mfu__figures_run_at(f, i);
        return fr && fr->fpt_scale != 1 && isfinite(fr->fpt_scale) ? v / fr->fpt_scale : v;
    }
    return f->c.stack_flops_per_token;
}

/* Scratch of one check: n entries each. */
typedef struct scratch {
    size_t *idx, *starts;
    double *lx, *tmp, *cf;
} scratch;

static void scratch_free(scratch *w)
{
    free(w->idx);
    free(w->starts);
    free(w->lx);
    free(w->tmp);
    free(w->cf);
}

static bool scratch_alloc(scratch *w, size_t n)
{
    w->idx = malloc(n * sizeof *w->idx);
    w->starts = malloc(n * sizeof *w->starts);
    w->lx = malloc(n * sizeof *w->lx);
    w->tmp = malloc(n * sizeof *w->tmp);
    w->cf = malloc(n * sizeof *w->cf);
    if (w->idx && w->starts && w->lx && w->tmp && w->cf)
        return true;
    scratch_free(w);
    return false;
}

/* The stretches of the log's FLOPs per counted token over the rows of c, with what each was
 * counted against and the context's count of the same (with a model): *out (NULL and 0 when
 * no row has the figure). w->idx[0..*m) are the evidence rows. false when out of memory. */
static bool flops_stretches(mfu__fctx *f, const mfu__fcols *c, bool model, scratch *w, size_t *m,
                            mfu__frun **out, size_t *nout)
{
    size_t n = c->n, k = 0;
    size_t scan = c->present[MFU__FC_LOG_FPT] ? n : 0; /* absent: NaN in every row, unread */
    for (size_t i = 0; i < scan; i++) {
        double x = c->v[MFU__FC_LOG_FPT][i];
        if (pos(x)) {
            w->idx[k] = i;
            w->lx[k++] = log(x);
        }
    }
    *m = k;
    size_t ns = k ? stretches(w->lx, k, w->tmp, w->starts) : 0;
    mfu__frun *runs = ns ? calloc(ns, sizeof *runs) : NULL;
    *out = runs;
    *nout = ns;
    if (ns && !runs)
        return false;
    for (size_t j = 0; j < k; j++)
        w->cf[j] = model ? ctx_fpt_of(f, c, w->idx[j]) : NAN;
    for (size_t r = 0; r < ns; r++) {
        mfu__frun *u = &runs[r];
        size_t a = w->starts[r], b = r + 1 < ns ? w->starts[r + 1] : k;
        u->first = r == 0 ? 0 : w->idx[a];
        u->last = r + 1 < ns ? w->idx[b] - 1 : n - 1;
        u->evidence = b - a;
        u->log_fpt = median_at(c->v[MFU__FC_LOG_FPT], w->idx, a, b, w->tmp);
        const double *pk = c->v[MFU__FC_LOG_PEAK];
        size_t q = 0;
        for (size_t i = u->first; i <= u->last; i++)
            if (pos(pk[i]))
                w->tmp[q++] = pk[i];
        u->log_peak = mfu__median_inplace(w->tmp, q);
        q = 0;
        for (size_t j = a; j < b; j++)
            if (pos(w->cf[j]))
                w->tmp[q++] = w->cf[j];
        u->ctx_fpt = mfu__median_inplace(w->tmp, q);
        u->ratio = u->log_fpt / u->ctx_fpt;
        size_t tracked = 0, given = 0, printed = 0;
        for (size_t j = a; j < b; j++) {
            bool t, g, p;
            row_basis(c, w->idx[j], &t, &g, &p);
            tracked += t;
            given += g;
            printed += p;
        }
        u->tracks = 2 * tracked > b - a;
        u->given = 2 * given > b - a;
        u->batch_printed = printed > 0;
        u->holds = true;
        u->seq = NAN;
        u->tokens_scale = u->fpt_scale = 1;
    }
    return true;
}

/* The verdicts with a model: the reference stretch is the first whose ratio is 1 (the context
 * is right there), else the first; a stretch whose ratio moved from it gets a sequence length,
 * a tokens scale or a FLOPs scale (the rule is in docs/internals/figures.md). */
static void judge_with_model(mfu__fctx *f, mfu__frun *runs, size_t ns)
{
    double ctol = f->c.stack.approximate ? APPROX_TOL : CTX_TOL;
    size_t ref = 0;
    for (size_t r = 0; r < ns; r++)
        if (pos(runs[r].ratio) && fabs(log(runs[r].ratio)) <= ctol) {
            ref = r;
            break;
        }
    double rref = runs[ref].ratio;
    for (size_t r = 0; r < ns && pos(rref); r++) {
        mfu__frun *u = &runs[r];
        if (r == ref || !pos(u->ratio) || fabs(log(u->ratio / rref)) <= MIN_TOL)
            continue;
        u->holds = false;
        double seq_c = f->seq0;
        int kind = SEQ_NONE;
        double target = u->ratio / rref * stack_fpt_at(f, seq_c);
        double s = isfinite(seq_c) ? solve_seq(f, target, seq_c, u->tracks, MIN_TOL, &kind) : NAN;
        /* Counted tokens the caller or the header gave move with an unprinted batch as well
         * as with the sequence length, and the FLOPs alone cannot tell the two apart: there a
         * new batch is the reading unless the length the log implies is a power of two. Where
         * the log prints its batch, or counts its tokens itself, only a length (or a new
         * model) explains the move. */
        bool stale = u->given && !u->batch_printed;
        if (isfinite(s) && s != seq_c && (kind == SEQ_POW2 || !stale))
            u->seq = s; /* batch x sequence tokens follow it row by row (rows.c) */
        else if (stale)
            u->tokens_scale = u->ratio / rref;
        else
            u->fpt_scale = u->ratio / rref;
    }
}

/* The verdicts without a model (nothing to solve for a length): where the counted tokens were
 * given and the log prints no batch, a move is a new batch; else it stays a workload change. */
static void judge_log_mode(mfu__frun *runs, size_t ns)
{
    for (size_t r = 1; r < ns; r++) {
        mfu__frun *u = &runs[r];
        double q = u->log_fpt / runs[0].log_fpt;
        if (pos(q) && fabs(log(q)) > MIN_TOL && u->given && !u->batch_printed) {
            u->tokens_scale = q;
            u->holds = false;
        }
    }
}

/* Log mode: the FLOPs per token, peak and MFU of every row are the log's own. One peak serves
 * the whole run unless the stretches' differ (a capacity change): the printed figures'
 * rounding must not look like a change of hardware. tmp: c->n doubles. false when out of
 * memory for a column. */
static bool log_mode_columns(const mfu__fctx *f, mfu__fcols *c, mfu__frun *runs, size_t ns,
                             double *tmp)
{
    double sp = f->c.stack_peak_flops_per_s, p0 = NAN;
    bool one_peak = true;
    for (size_t r = 0; r < ns; r++) {
        if (!pos(runs[r].log_peak))
            continue;
        if (!pos(p0))
            p0 = runs[r].log_peak;
        else if (fabs(log(runs[r].log_peak / p0)) > MIN_TOL)
            one_peak = false;
    }
    if (one_peak && pos(p0)) {
        size_t k = 0;
        for (size_t i = 0; i < c->n; i++)
            if (pos(c->v[MFU__FC_LOG_PEAK][i]))
                tmp[k++] = c->v[MFU__FC_LOG_PEAK][i];
        p0 = mfu__median_inplace(tmp, k);
        for (size_t r = 0; r < ns; r++)
            if (pos(runs[r].log_peak))
                runs[r].log_peak = p0;
    }
    for (size_t r = 0; r < ns; r++) {
        const mfu__frun *u = &runs[r];
        double peak = pos(u->log_peak) ? u->log_peak : pos(sp) ? sp : NAN;
        /* a stretch read as a new batch keeps the FLOPs per token of the first */
        double fpt = u->tokens_scale != 1 ? runs[0].log_fpt : u->log_fpt;
        for (size_t i = u->first; i <= u->last; i++) {
            double lm = c->v[MFU__FC_LOG_MFU][i];
            double fl = c->v[MFU__FC_REPORTED_FLOPS_PER_S_PER_DEVICE][i];
            double mfu = pos(lm) ? lm : pos(fl) ? fl / peak : NAN;
            double fls = pos(fl) ? fl : pos(lm) && pos(peak) ? lm * peak : NAN;
            if (!mfu__fcols_put(c, MFU__FC_MODEL_FPT, i, fpt) ||
                !mfu__fcols_put(c, MFU__FC_HARDWARE_FPT, i, fpt) ||
                !mfu__fcols_put(c, MFU__FC_PEAK, i, peak) ||
                !mfu__fcols_put(c, MFU__FC_MFU, i, mfu) ||
                !mfu__fcols_put(c, MFU__FC_HFU, i, mfu) ||
                !mfu__fcols_put(c, MFU__FC_MODEL_FLOPS_PER_S_PER_DEVICE, i, fls) ||
                !mfu__fcols_put(c, MFU__FC_HARDWARE_FLOPS_PER_S_PER_DEVICE, i, fls))
                return false;
        }
    }
    return true;
}

size_t mfu__figures_check(mfu__fctx *f, mfu__fcols *c)
{
    size_t n = c->n;
    if (n == 0)
        return n;
    scratch w;
    if (!scratch_alloc(&w, n))
        return SIZE_MAX;
    /* the tokens check */
    mfu__trun *tr = NULL;
    size_t ntr = 0;
    if (!tokens_check(f, c, w.idx, w.lx, w.tmp, w.starts, &tr, &ntr)) {
        scratch_free(&w);
        return SIZE_MAX;
    }
    size_t tchange = first_trun_change(f->truns, f->ntruns, tr, ntr, n);
    free(f->truns);
    f->truns = tr;
    f->ntruns = ntr;

    /* the FLOPs check */
    const mfu_report_context *x = &f->c;
    bool model = x->has_model && f->stack_flops_ok;
    size_t m = 0, ns = 0;
    mfu__frun *runs = NULL;
    if (!flops_stretches(f, c, model, &w, &m, &runs, &ns)) {
        scratch_free(&w);
        return SIZE_MAX;
    }
    if (model && ns > 1)
        judge_with_model(f, runs, ns);
    if (!x->has_model && ns > 1)
        judge_log_mode(runs, ns);
    size_t change = first_run_change(f->runs, f->nruns, runs, ns, n);
    free(f->runs);
    f->runs = runs;
    f->nruns = ns;

    /* log mode: without a model, the FLOPs per token, peak and MFU are the log's own */
    f->log_mode = !x->has_model && ns > 0;
    f->c.mfu_from_log = f->log_mode;
    f->c.flops_relative = false;
    for (size_t j = 0; j < m && f->log_mode; j++)
        if (c->flags[w.idx[j]] & (MFU__FR_LOG_PER_JOB | MFU__FR_LOG_NO_PEAK))
            f->c.flops_relative = true;
    if (f->log_mode && !log_mode_columns(f, c, runs, ns, w.tmp)) {
        scratch_free(&w);
        return SIZE_MAX;
    }
    scratch_free(&w);
    return change < tchange ? change : tchange;
}

static void fmt_g(char *buf, size_t n, double flops)
{
    snprintf(buf, n, "%.4g GFLOP", flops / 1e9);
}

void mfu__figures_explain(mfu__fctx *f, const int64_t *steps, const mfu__fcols *c)
{
    const mfu_report_context *x = &f->c;
    const char *fw = x->stack.name[0] ? x->stack.framework : "the framework";
    f->c.context_breaks = 0;
    for (size_t r = 0; r < f->ntruns; r++) {
        const mfu__trun *t = &f->truns[r];
        if (t->holds)
            continue;
        f->c.context_breaks++;
        char when[64] = "";
        if (r > 0)
            snprintf(when, sizeof when, "until step %lld", (long long)steps[t->first - 1]);
        mfu__fctx_note(f,
                       "the tokens per step the log prints move by %+.1f %% at step %lld: the "
                       "given tokens per step hold %s; steps %lld-%lld are counted with the "
                       "log's own",
                       100 * (t->scale - 1), (long long)steps[t->first],
                       when[0] ? when : "before it", (long long)steps[t->first],
                       (long long)steps[t->last]);
    }
    size_t ref = 0;
    while (ref < f->nruns && !f->runs[ref].holds)
        ref++;
    for (size_t r = 1; r < f->nruns; r++) {
        const mfu__frun *u = &f->runs[r], *p = &f->runs[r - 1];
        char a[32], b[32];
        fmt_g(a, sizeof a, p->log_fpt);
        fmt_g(b, sizeof b, u->log_fpt);
        double pct = 100 * (u->log_fpt / p->log_fpt - 1);
        if ((f->log_mode || !x->has_model) && u->tokens_scale != 1) {
            f->c.context_breaks++;
            mfu__fctx_note(f,
                           "the log's FLOPs per counted token move by %+.1f %% at step %lld while "
                           "its tokens per step are the header's: read as a new global batch "
                           "(x %.3g tokens per step), not a workload change; give --model to "
                           "tell a new sequence length apart",
                           pct, (long long)steps[u->first], u->tokens_scale);
            continue;
        }
        if (f->log_mode || !x->has_model) {
            char figs[160] = "";
            if (!x->flops_relative)
                snprintf(figs, sizeof figs, " (%s → %s as %s counts them)", a, b, fw);
            char seq[128] = "";
            if (u->tracks && x->seq > 0)
                snprintf(seq, sizeof seq,
                         "; its tokens are its sequences x seq %lld, which a new sequence length "
                         "would move too (give --model to tell)",
                         (long long)x->seq);
            mfu__fctx_note(f,
                           "the log's FLOPs per counted token move by %+.1f %% at step %lld%s: a "
                           "workload change, not utilization%s",
                           pct, (long long)steps[u->first], figs, seq);
            continue;
        }
        if (u->holds)
            continue;
        f->c.context_breaks++;
        size_t steps_n = u->last - u->first + 1;
        char what[MFU_REPORT_TEXT_MAX];
        long long s0 = (long long)steps[u->first], s1 = (long long)steps[u->last];
        const char *model = x->model[0] ? x->model : "the model";
        if (isfinite(u->seq))
            snprintf(what, sizeof what,
                     "they imply seq %.0f for %s under %s's count: steps %lld-%lld (%zu "
                     "row%s) counted with it%s",
                     u->seq, model, fw, s0, s1, steps_n, steps_n == 1 ? "" : "s",
                     u->tracks ? " and its tokens per step" : "");
        else if (u->tokens_scale != 1)
            snprintf(what, sizeof what,
                     "the FLOPs per token are unchanged and the tokens per step are not the "
                     "given ones (x %.3g: the global batch changed): steps %lld-%lld (%zu row%s) "
                     "counted with the log's",
                     u->tokens_scale, s0, s1, steps_n, steps_n == 1 ? "" : "s");
        else
            snprintf(what, sizeof what,
                     "no sequence length of %s gives them (the model or the counted tokens "
                     "changed): steps %lld-%lld (%zu row%s) counted with the log's FLOPs per "
                     "token",
                     model, s0, s1, steps_n, steps_n == 1 ? "" : "s");
        char held[128] = "";
        if (ref < f->nruns) {
            const mfu__frun *h = &f->runs[ref];
            char ctx[32] = "";
            if (x->seq > 0)
                snprintf(ctx, sizeof ctx, " (seq %lld)", (long long)x->seq);
            snprintf(held, sizeof held, "the context%s holds for steps %lld-%lld", ctx,
                     (long long)steps[h->first], (long long)steps[h->last]);
        }
        mfu__fctx_note(f,
                       "the log's FLOPs per counted token move by %+.1f %% at step %lld (%s → %s "
                       "as %s counts them): %s%s%s",
                       pct, (long long)steps[u->first], a, b, fw, held, held[0] ? "; " : "", what);
    }
    if (f->log_mode) {
        double pk = NAN;
        for (size_t r = 0; r < f->nruns && !pos(pk); r++)
            pk = f->runs[r].log_peak;
        if (!pos(pk))
            pk = x->stack_peak_flops_per_s;
        bool has_mfu = false;
        for (size_t i = 0; i < c->n && !has_mfu; i++)
            has_mfu = pos(c->v[MFU__FC_LOG_MFU][i]);
        bool per_job = false;
        for (size_t i = 0; i < c->n && !per_job; i++)
            per_job = (c->flags[i] & MFU__FR_LOG_PER_JOB) && pos(c->v[MFU__FC_LOG_FPT][i]);
        if (x->flops_relative && has_mfu)
            mfu__fctx_note(f,
                           "no model given: MFU is %s's own, from the log (its convention); %s: "
                           "its FLOPs per token are known only as ratios (give %s for them, "
                           "--model for mfu's count)",
                           fw,
                           per_job ? "the log gives no device count"
                                   : "the log names no device (so no peak)",
                           per_job ? "--devices N" : "--device");
        else if (pos(pk))
            mfu__fctx_note(f,
                           "no model given: MFU, FLOP/s and FLOPs per token are %s's own, from "
                           "the log (its convention, its peak %.5g TFLOP/s); give --model for "
                           "mfu's count",
                           fw, pk / 1e12);
        else
            mfu__fctx_note(f,
                           "no model given: FLOP/s and FLOPs per token are %s's own, from the "
                           "log; the log gives no peak, so no MFU (give --device, or --model for "
                           "mfu's count)",
                           fw);
    }
    (void)c;
}
