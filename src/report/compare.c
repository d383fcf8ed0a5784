/*
 * compare.c - the framework's printed figures beside mfu's recomputation of them, and the
 * causes of a disagreement.
 *
 * Every comparison is a median over the steady steps of reported / recomputed, per step. When
 * it is off by more than the tolerance, candidate causes are tried, each a small change to how
 * the recomputation counts (another peak, a simplified architecture, the other attention
 * mode, recomputation, padding). Because FLOP/s and MFU are proportional to FLOPs per token and
 * inversely proportional to the peak, each candidate is a factor on the ratio:
 *
 *     ratio' = ratio x (peak' / peak) x (FLOPs per token / FLOPs per token')
 *
 * and the first candidate that brings ratio' within the tolerance is the cause. Order: one
 * change at a time (formula first for FLOP/s; for MFU the formula with the framework's peak,
 * then the peak with its formula), then one peak change with one formula change.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
#include "util/util.h"

#define MAX_CANDS 16

typedef struct cand {
    mfu_mismatch code;
    double factor; /* ratio' = ratio x factor */
    char what[200];
} cand;

typedef struct pair_stat {
    size_t k;
    double ratio, rep, rec;
} pair_stat;

/* Medians of rep, rec and rep/rec over the steady steps where both are finite and > 0. */
static pair_stat pair(const mfu_report *r, const double *rep, const double *rec, double *scratch)
{
    pair_stat p = {0, NAN, NAN, NAN};
    size_t n = r->n;
    double *v = scratch; /* the finite values in row order, selected in place (the median of
                            the finite ones of the pairs: a ratio can overflow) */
    for (int which = 0; which < 3; which++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (r->state[i] != MFU_STEP_STEADY || !(rep[i] > 0) || !(rec[i] > 0) ||
                !isfinite(rep[i]) || !isfinite(rec[i]))
                continue;
            double x = which == 0 ? rep[i] / rec[i] : which == 1 ? rep[i] : rec[i];
            if (isfinite(x))
                v[k++] = x;
        }
        double med = mfu__median_inplace(v, k);
        if (which == 0) {
            p.k = k;
            p.ratio = med;
        } else if (which == 1) {
            p.rep = med;
        } else {
            p.rec = med;
        }
    }
    return p;
}

/* snprintf into a fixed field; truncation of a label or explanation is acceptable. */
static void setf(char *dst, size_t n, const char *fmt, ...) MFU__PRINTF(3, 4);
static void setf(char *dst, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, n, fmt, ap);
    va_end(ap);
}

static bool within(double ratio, double tol)
{
    return isfinite(ratio) && fabs(ratio - 1) <= tol;
}

/* A peak in SI units, 4 significant digits (matched against a table: "989.5 TFLOP/s"). */
static void fmt_tf(char *buf, size_t n, double flops_per_s)
{
    mfu__fmt_si_digits(buf, n, flops_per_s, "FLOP/s", 4);
}

static const char *attention_word(mfu_attention a)
{
    return a == MFU_ATTENTION_CAUSAL ? "causal" : a == MFU_ATTENTION_FULL ? "full" : "default";
}

/* FLOPs per token under options o and workload wl for arch a (the framework's count: hardware
 * when it counts recomputation). false when the model module cannot count it. */
static bool count(const mfu_report *r, const mfu_arch *a, const mfu_workload *wl,
                  const mfu_flops_options *o, bool hardware, double *out)
{
    mfu_flops f;
    if (mfu_flops_compute(a, wl, o, &f, NULL) != MFU_OK)
        return false;
    *out = hardware || r->fig.c.stack.counts_recompute ? f.hardware_flops : f.model_flops;
    return *out > 0;
}

static void add(cand *c, size_t *n, mfu_mismatch code, double factor, const char *fmt, ...)
    MFU__PRINTF(5, 6);
static void add(cand *c, size_t *n, mfu_mismatch code, double factor, const char *fmt, ...)
{
    if (*n >= MAX_CANDS || !isfinite(factor) || !(factor > 0) || fabs(factor - 1) < 1e-9)
        return;
    c[*n].code = code;
    c[*n].factor = factor;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c[*n].what, sizeof c[*n].what, fmt, ap);
    va_end(ap);
    (*n)++;
}

/* Candidate formulas: the framework's formula applied to a simplified architecture, the other
 * attention mode, embeddings, recomputation, padding. */
static size_t formula_cands(const mfu_report *r, const mfu__cmp_ctx *c, cand *out)
{
    size_t n = 0;
    double fs = r->fig.c.stack_flops_per_token;
    if (!c->fig->stack_flops_ok || !c->fig->in.has_arch || !(fs > 0))
        return 0;
    const mfu_arch *in = &c->fig->in.arch;
    mfu_arch a;
    double f;
    mfu_flops_options o = c->fig->sopt;
    if (o.attention == MFU_ATTENTION_CAUSAL || o.attention == MFU_ATTENTION_FULL) {
        bool causal = o.attention == MFU_ATTENTION_CAUSAL;
        o.attention = causal ? MFU_ATTENTION_FULL : MFU_ATTENTION_CAUSAL;
        if (count(r, in, &c->fig->wl, &o, false, &f))
            add(out, &n, causal ? MFU_MISMATCH_FULL_ATTENTION : MFU_MISMATCH_CAUSAL_ATTENTION,
                fs / f, "counts the %s score matrix (%s attention)",
                causal ? "whole" : "causal half of the", causal ? "full" : "causal");
    }
    if (mfu_arch_resolve(in, &a, NULL) == MFU_OK) {
        bool gqa = a.kv_heads < a.heads && a.kv_lora_rank == 0;
        bool gated = a.gated_mlp == MFU_FLAG_YES;
        bool not4h = a.experts == 0 && (gated || a.ffn != 4 * a.hidden);
        mfu_arch b = a;
        if (gqa) {
            b.kv_heads = b.heads;
            if (count(r, &b, &c->fig->wl, &c->fig->sopt, false, &f))
                add(out, &n, MFU_MISMATCH_NO_GQA, fs / f,
                    "treats the %lld KV heads as %lld (multi-head attention, GQA ignored)",
                    (long long)a.kv_heads, (long long)a.heads);
        }
        if (gated) {
            b = a;
            b.gated_mlp = MFU_FLAG_NO;
            if (count(r, &b, &c->fig->wl, &c->fig->sopt, false, &f))
                add(out, &n, MFU_MISMATCH_NO_SWIGLU, fs / f,
                    "counts 2 MLP matrices instead of the gated MLP's 3 (SwiGLU ignored)");
        }
        if (not4h) {
            b = a;
            b.gated_mlp = MFU_FLAG_NO;
            b.ffn = 4 * a.hidden;
            if (count(r, &b, &c->fig->wl, &c->fig->sopt, false, &f))
                add(out, &n, MFU_MISMATCH_MLP_4H, fs / f,
                    "assumes a plain 4h MLP (%lld wide, 2 matrices) instead of %s %lld",
                    (long long)(4 * a.hidden), gated ? "a gated" : "a plain", (long long)a.ffn);
            if (gqa) {
                b.kv_heads = b.heads;
                if (count(r, &b, &c->fig->wl, &c->fig->sopt, false, &f))
                    add(out, &n, MFU_MISMATCH_MHA_4H, fs / f,
                        "assumes multi-head attention and a plain 4h MLP (GQA and the MLP "
                        "shape ignored)");
            }
        }
        if (a.experts > 0 && a.experts_per_token < a.experts) {
            b = a;
            b.experts_per_token = a.experts;
            if (count(r, &b, &c->fig->wl, &c->fig->sopt, false, &f))
                add(out, &n, MFU_MISMATCH_ALL_EXPERTS, fs / f,
                    "counts all %lld experts per token instead of the top %lld",
                    (long long)a.experts, (long long)a.experts_per_token);
        }
        if (a.experts > 0 && (a.experts_per_token > 1 || a.shared_experts > 0)) {
            b = a;
            b.experts_per_token = 1;
            b.shared_experts = 0;
            if (count(r, &b, &c->fig->wl, &c->fig->sopt, false, &f))
                add(out, &n, MFU_MISMATCH_NO_MOE, fs / f,
                    "counts one expert per token (top-%lld routing ignored)",
                    (long long)a.experts_per_token);
        }
    }
    o = c->fig->sopt;
    if (!o.count_embeddings && o.params == 0) {
        o.count_embeddings = true;
        if (count(r, in, &c->fig->wl, &o, false, &f))
            add(out, &n, MFU_MISMATCH_EMBEDDINGS, fs / f,
                "counts the input embedding as a matmul (or inside N)");
    }
    if (!r->fig.c.stack.counts_recompute) {
        mfu_workload wl = c->fig->wl;
        wl.recompute = MFU_RECOMPUTE_FULL;
        if (count(r, in, &wl, &c->fig->sopt, true, &f))
            add(out, &n, MFU_MISMATCH_RECOMPUTE, fs / f,
                "counts full activation recomputation (hardware FLOPs, an HFU)");
    }
    if (!r->fig.c.stack.counts_padding && c->fig->c.real_fraction < 1)
        add(out, &n, MFU_MISMATCH_PADDING, c->fig->c.real_fraction,
            "counts padding tokens as real (%.1f%% of the tokens are real)",
            100 * c->fig->c.real_fraction);
    return n;
}

static bool is_a100(const mfu_device_info *d)
{
    return d && strncmp(d->id, "a100", 4) == 0;
}

/* Candidate peaks instead of p_used (factor p / p_used). */
static size_t peak_cands(const mfu_report *r, const mfu__cmp_ctx *c, double p_used, cand *out)
{
    size_t n = 0;
    double pt = c->fig->c.peak_flops_per_s;
    char a[48], b[48];
    if (!(p_used > 0) || !(pt > 0))
        return 0;
    const char *dev = c->fig->c.device ? c->fig->c.device->id : "this device";
    if (!is_a100(c->fig->c.device) && fabs(312e12 / pt - 1) > c->tol) {
        bool fixed = c->fig->prof && c->fig->prof->peak_rule == MFU__PEAK_FIXED;
        fmt_tf(b, sizeof b, pt);
        if (fixed)
            add(out, &n, MFU_MISMATCH_A100_HARDCODED, 312e12 / p_used,
                "%s divides by a hard-coded 312 TFLOP/s (A100 bf16) whatever the GPU; %s's "
                "dense %s peak is %s",
                c->fig->prof->framework, dev, mfu_dtype_name(r->fig.c.dtype), b);
        else
            add(out, &n, MFU_MISMATCH_A100_FALLBACK, 312e12 / p_used,
                "%s divides by the A100's 312 TFLOP/s, its fallback for a device its table "
                "lacks; %s's dense %s peak is %s",
                c->fig->prof ? c->fig->prof->framework : "the framework", dev,
                mfu_dtype_name(r->fig.c.dtype), b);
    }
    bool fb = false;
    char why[MFU_REPORT_TEXT_MAX];
    double ps =
        mfu__stack_peak(c->fig->prof, c->fig->c.device, r->fig.c.dtype, &fb, why, sizeof why);
    bool fixed =
        c->fig->prof && c->fig->prof->peak_rule == MFU__PEAK_FIXED; /* named above already */
    if (ps > 0 && !fb && !fixed && fabs(ps / pt - 1) > c->tol) {
        fmt_tf(a, sizeof a, ps);
        add(out, &n, MFU_MISMATCH_STACK_PEAK, ps / p_used,
            "%s; mfu's table has %s (dense datasheet figure)", why, b);
    }
    fmt_tf(a, sizeof a, 2 * pt);
    fmt_tf(b, sizeof b, pt);
    add(out, &n, MFU_MISMATCH_SPARSE_PEAK, 2 * pt / p_used,
        "the peak used is %s, the 2:4 sparse figure: twice %s's dense %s", a, dev, b);
    fmt_tf(a, sizeof a, pt / 2);
    add(out, &n, MFU_MISMATCH_HALF_PEAK, pt / 2 / p_used,
        "the peak used is %s, half of %s's dense %s", a, dev, b);
    if (fabs(pt / p_used - 1) > c->tol)
        add(out, &n, MFU_MISMATCH_STACK_PEAK, pt / p_used,
            "the log divides by %s's dense datasheet peak %s", dev, b);
    return n;
}

static mfu_report_comparison *new_cmp(mfu_report *r, mfu_figure fig, const pair_stat *p, double tol)
{
    if (r->ncomparisons >= MFU_REPORT_MAX_COMPARISONS || p->k == 0)
        return NULL;
    mfu_report_comparison *x = &r->comparisons[r->ncomparisons++];
    memset(x, 0, sizeof *x);
    x->figure = fig;
    x->reported = p->rep;
    x->recomputed = p->rec;
    x->ratio = p->ratio;
    x->steps = p->k;
    x->agrees = within(p->ratio, tol);
    x->cause = x->agrees ? MFU_MISMATCH_NONE : MFU_MISMATCH_UNEXPLAINED;
    x->peak_flops_per_s = NAN;
    return x;
}

static void explain(mfu_report_comparison *x, const cand *best1, const cand *best2, double ratio)
{
    if (!best1) {
        setf(x->explanation, sizeof x->explanation,
             "off by %.3fx; no single cause mfu knows explains it (check the model, the "
             "device, --devices and the tokens per step)",
             ratio);
        return;
    }
    x->cause = best2 ? best2->code : best1->code;
    if (best2)
        setf(x->explanation, sizeof x->explanation, "%s, and its formula %s", best1->what,
             best2->what);
    else if (best1->code >= MFU_MISMATCH_NO_GQA && best1->code <= MFU_MISMATCH_RECOMPUTE)
        setf(x->explanation, sizeof x->explanation, "the log's formula %s", best1->what);
    else
        setf(x->explanation, sizeof x->explanation, "%s", best1->what);
}

/* Name the other single causes that would explain ratio r as well (not those that are the
 * same change as the chosen one, factor f). */
static void also(mfu_report_comparison *x, const cand *c, size_t n, double r, double f, double tol)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!within(r * c[i].factor, tol) || c[i].code == x->cause ||
            fabs(c[i].factor / f - 1) < 1e-9)
            continue;
        mfu__appendf(x->explanation, sizeof x->explanation, "%s%s",
                     k ? ", " : " (also consistent with: ", mfu_mismatch_name(c[i].code));
        k++;
    }
    if (k)
        mfu__appendf(x->explanation, sizeof x->explanation, ")");
}

/* Search single causes in order, then one peak with one formula. */
static void search(mfu_report_comparison *x, const cand *f, size_t nf, const cand *p, size_t np,
                   bool peaks_first, double tol, const char *suffix)
{
    double r = x->ratio;
    for (int pass = 0; pass < 2; pass++) {
        bool peaks = peaks_first ? pass == 0 : pass == 1;
        const cand *c = peaks ? p : f;
        size_t nc = peaks ? np : nf;
        for (size_t i = 0; i < nc; i++)
            if (within(r * c[i].factor, tol)) {
                explain(x, &c[i], NULL, r);
                mfu__appendf(x->explanation, sizeof x->explanation, "%s", suffix);
                also(x, c + i + 1, nc - i - 1, r, c[i].factor, tol);
                return;
            }
    }
    for (size_t i = 0; i < np; i++)
        for (size_t j = 0; j < nf; j++)
            if (within(r * p[i].factor * f[j].factor, tol)) {
                explain(x, &p[i], &f[j], r);
                mfu__appendf(x->explanation, sizeof x->explanation, "%s", suffix);
                return;
            }
    explain(x, NULL, NULL, r);
}

static const char *formula_name(const mfu_report *r, char *buf, size_t n)
{
    const mfu_report_stack *s = &r->fig.c.stack;
    if (s->name[0] && s->has_convention) {
        const char *conv = mfu_convention_name(s->convention);
        const char *att = s->convention == MFU_CONV_6N ? "no" : attention_word(s->attention);
        if (strcmp(conv, s->name) == 0)
            setf(buf, n, "%s formula, %s attention", s->framework, att);
        else
            setf(buf, n, "%s formula = %s, %s attention", s->framework, conv, att);
    } else {
        setf(buf, n, "mfu's %s convention, %s attention", mfu_convention_name(r->fig.c.convention),
             attention_word(r->fig.c.attention));
    }
    return buf;
}

void mfu__report_compare(mfu_report *r, const mfu__cmp_ctx *c)
{
    mfu_report_context *ctx = &r->fig.c;
    double tol = c->tol;
    cand fc[MAX_CANDS], pc[MAX_CANDS];
    size_t nf = formula_cands(r, c, fc);
    char form[160], a[48], b[48];
    formula_name(r, form, sizeof form);
    const char *fw = ctx->stack.name[0] ? ctx->stack.framework : "the framework";
    bool rep_flops = r->stat[MFU_RS_REPORTED_FLOPS_PER_S_PER_DEVICE].n > 0;
    bool rep_mfu = r->stat[MFU_RS_REPORTED_MFU].n > 0;

    /* 1. the printed FLOP/s */
    if (rep_flops && c->fig->stack_flops_ok) {
        pair_stat p = pair(r, r->cols.v[MFU_RS_REPORTED_FLOPS_PER_S_PER_DEVICE],
                           r->cols.v[MFU_RS_STACK_FLOPS_PER_S_PER_DEVICE], c->scratch);
        mfu_report_comparison *x = new_cmp(r, MFU_FIGURE_FLOPS_PER_S, &p, tol);
        if (x) {
            setf(x->label, sizeof x->label, "%s FLOP/s per device (%s)",
                 ctx->stack.counts_recompute ? "hardware" : "model", form);
            if (!x->agrees)
                search(x, fc, nf, pc, 0, false, tol, "");
        }
    }

    /* 2. the printed MFU, recomputed with the framework's formula and its peak */
    double ps = ctx->stack_peak_flops_per_s;
    if (rep_mfu && c->fig->stack_flops_ok && ps > 0) {
        pair_stat p =
            pair(r, r->cols.v[MFU_RS_REPORTED_MFU], r->cols.v[MFU_RS_STACK_MFU], c->scratch);
        mfu_report_comparison *x = new_cmp(r, MFU_FIGURE_MFU, &p, tol);
        if (x) {
            fmt_tf(a, sizeof a, ps);
            if (ctx->stack.name[0])
                setf(x->label, sizeof x->label, "MFU as %s computes it (peak %s)", fw, a);
            else
                setf(x->label, sizeof x->label, "MFU (%s, peak %s)", form, a);
            x->peak_flops_per_s = ps;
            if (!x->agrees) {
                size_t np = peak_cands(r, c, ps, pc);
                search(x, fc, nf, pc, np, false, tol, "");
            }
        }
    }

    /* 3. the printed MFU on the device's real dense peak, when the framework uses another */
    double pt = c->fig->c.peak_flops_per_s;
    if (rep_mfu && c->fig->stack_flops_ok && ps > 0 && pt > 0 && fabs(ps / pt - 1) > tol) {
        double *rec = calloc(r->n, sizeof *rec);
        if (rec) {
            for (size_t i = 0; i < r->n; i++)
                rec[i] = r->cols.v[MFU_RS_STACK_MFU][i] * ps / pt;
            pair_stat p = pair(r, r->cols.v[MFU_RS_REPORTED_MFU], rec, c->scratch);
            free(rec);
            mfu_report_comparison *x = new_cmp(r, MFU_FIGURE_MFU, &p, tol);
            if (x) {
                fmt_tf(b, sizeof b, pt);
                setf(x->label, sizeof x->label, "MFU on %s's dense %s peak (%s), %s formula",
                     c->fig->c.device ? c->fig->c.device->id : "the device",
                     mfu_dtype_name(ctx->dtype), b, ctx->stack.name[0] ? fw : "mfu's");
                x->peak_flops_per_s = pt;
                if (!x->agrees) {
                    size_t np = peak_cands(r, c, pt, pc);
                    char reads[64];
                    snprintf(reads, sizeof reads, ": the log's MFU reads %.2fx %s", x->ratio,
                             x->ratio > 1 ? "too high" : "too low");
                    search(x, fc, nf, pc, np, true, tol, reads);
                }
            }
        }
    }

    /* 4. the printed tokens/s against tokens / step time */
    if (r->stat[MFU_RS_REPORTED_TOKENS_PER_S].n > 0) {
        pair_stat p = pair(r, r->cols.v[MFU_RS_REPORTED_TOKENS_PER_S],
                           r->cols.v[MFU__FC_DERIVED_TPS], c->scratch);
        mfu_report_comparison *x = new_cmp(r, MFU_FIGURE_TOKENS_PER_S, &p, tol);
        if (x) {
            setf(x->label, sizeof x->label, "tokens/s, whole job (tokens / step time)");
            if (!x->agrees && x->ratio > 1 && ctx->stack.counts_padding) {
                x->cause = MFU_MISMATCH_PADDING;
                setf(x->explanation, sizeof x->explanation,
                     "%s's tokens/s count padding: the log's tokens per step here hold only "
                     "%.1f%% of the token slots it counts",
                     fw, 100 / x->ratio);
            } else if (!x->agrees) {
                explain(x, NULL, NULL, x->ratio);
            }
        }
    }

    /* what the log implies on its own */
    char list[200];
    bool mfu_checked = false;
    for (size_t i = 0; i < r->ncomparisons; i++)
        mfu_checked = mfu_checked || r->comparisons[i].figure == MFU_FIGURE_MFU;
    if (isfinite(ctx->implied_peak_flops_per_s) && !mfu_checked) {
        fmt_tf(a, sizeof a, ctx->implied_peak_flops_per_s);
        if (mfu__stack_devices_with_peak(c->fig->prof, ctx->implied_peak_flops_per_s, tol, list,
                                         sizeof list))
            mfu__report_note(r,
                             "the log's TFLOP/s / MFU imply a peak of %s per device: %s's "
                             "figure for %s",
                             a, fw, list);
        else
            mfu__report_note(r, "the log's TFLOP/s / MFU imply a peak of %s per device", a);
    } else if (rep_mfu && c->fig->stack_flops_ok && !(ps > 0)) {
        double *v = c->scratch, *tmp = c->scratch + r->n;
        size_t k = 0;
        for (size_t i = 0; i < r->n; i++) {
            double x = r->cols.v[MFU_RS_STACK_FLOPS_PER_S_PER_DEVICE][i] /
                       r->cols.v[MFU_RS_REPORTED_MFU][i];
            if (r->state[i] == MFU_STEP_STEADY && isfinite(x) && x > 0)
                v[k++] = x;
        }
        double imp = mfu__median_finite(v, k, tmp);
        if (isfinite(imp)) {
            fmt_tf(a, sizeof a, imp);
            if (mfu__stack_devices_with_peak(c->fig->prof, imp, tol, list, sizeof list))
                mfu__report_note(r,
                                 "under %s the log's MFU implies a peak of %s per device: "
                                 "%s's figure for %s (give --device to check it)",
                                 form, a, fw, list);
            else
                mfu__report_note(r,
                                 "under %s the log's MFU implies a peak of %s per device "
                                 "(give --device to check it)",
                                 form, a);
        }
    }
    if (!ctx->has_model && isfinite(ctx->implied_flops_per_token) && c->fig->nruns < 2) {
        mfu__fmt_si_digits(a, sizeof a, ctx->implied_flops_per_token, "FLOP", 4);
        mfu__report_note(r, "the log's TFLOP/s / tokens/s imply %s per token as %s counts them", a,
                         fw);
    }
    if (rep_mfu && c->fig->prof && c->fig->prof->peak_rule == MFU__PEAK_FIXED &&
        !c->fig->c.device) {
        fmt_tf(a, sizeof a, c->fig->prof->fixed_peak);
        mfu__report_note(r,
                         "%s's MFU divides by %s whatever the GPU: it is right only on an A100 "
                         "(give --device to see the real MFU)",
                         fw, a);
    }
    if (c->fig->p_stack_fallback && c->fig->c.device)
        mfu__report_note(r,
                         "%s has no %s in its peak table and falls back to the A100's "
                         "312 TFLOP/s",
                         fw, c->fig->c.device->id);
    if (c->fig->prof && c->fig->prof->mfu_ema > 0 && rep_mfu && c->fig->stack_flops_ok && ps > 0)
        mfu__report_note(r,
                         "%s prints an EMA of its MFU (%.1f x previous + %.1f x new, per "
                         "log line); mfu replays it from its own first value",
                         fw, c->fig->prof->mfu_ema, 1 - c->fig->prof->mfu_ema);
    if (ctx->stack.approximate && c->fig->stack_flops_ok && (rep_flops || rep_mfu))
        mfu__report_note(r,
                         "%s measures its FLOPs rather than using a formula: %s is the "
                         "nearest convention, so its figures are compared approximately",
                         fw, mfu_convention_name(ctx->stack.convention));
}
