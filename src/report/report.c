/*
 * report.c - mfu_report_compute(): a run's figures (src/figures: the context, every step's
 * figures, the context check), which steps are steady, their summaries, what is missing, the
 * framework's figures against mfu's recomputation (compare.c) and the analysis (explain.c).
 *
 * The report computes no figure of its own: its series are the figures module's columns.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "figures/energy.h"
#include "report/internal.h"
#include "run/step.h"
#include "util/pages.h"
#include "util/util.h"

void mfu__report_note(mfu_report *r, const char *fmt, ...)
{
    if (r->nnotes >= MFU_REPORT_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->notes[r->nnotes], MFU_REPORT_TEXT_MAX, fmt, ap);
    va_end(ap);
    r->nnotes++;
}

static void add_missing(mfu_report *r, const char *what, const char *option, const char *needed_for)
{
    if (r->nmissing >= MFU_REPORT_MAX_MISSING)
        return;
    mfu_report_missing *m = &r->missing[r->nmissing++];
    mfu__strlcpy(m->what, what, sizeof m->what);
    mfu__strlcpy(m->option, option, sizeof m->option);
    mfu__strlcpy(m->needed_for, needed_for, sizeof m->needed_for);
}

void mfu_report_free(mfu_report *r)
{
    if (!r)
        return;
    mfu__pages_free(r->steps, r->steps_len);
    free(r->time_s);
    free(r->loss_nan);
    free(r->state);
    mfu__fcols_free(&r->cols);
    mfu__fctx_free(&r->fig);
    mfu_analysis_free(r->analysis);
    free(r);
}

/* What the report reads of the run's rows after the analysis, read before it (the run's
 * columns may be gone by then: mfu__report_compute_consume). */
typedef struct run_facts {
    bool sequences;                     /* some step has a sample count or samples/s */
    size_t sentinel, nan_loss, skipped; /* steps flagged so (r->loss_nan gets each step's) */
    const double *energy_j, *power_w, *tensor_active; /* the run's columns, or copies */
    double *copy[3];
    bool log_mfu, no_peak; /* the MFU shown is the framework's own; its peak is unknown (it
                              names no device): read before the figures' per-row codes go */
} run_facts;

bool mfu__report_run_copy(const mfu_run *run, mfu_column c, double **copy)
{
    const double *p = mfu_run_column(run, c);
    *copy = NULL;
    if (!p)
        return true;
    size_t n = mfu_run_count(run);
    *copy = malloc(n * sizeof **copy);
    if (*copy)
        memcpy(*copy, p, n * sizeof **copy);
    return *copy != NULL;
}

/* Column c of run in place, or a copy when copy is true (into *owned, freed by the caller);
 * NULL when the run has none. false when out of memory. */
static bool fact_col(const mfu_run *run, mfu_column c, bool copy, const double **out,
                     double **owned)
{
    *owned = NULL;
    *out = mfu_run_column(run, c);
    if (!copy)
        return true;
    bool ok = mfu__report_run_copy(run, c, owned);
    *out = *owned;
    return ok;
}

/* *f of run (r->loss_nan too); copy: the columns are copies. false when out of memory. */
static bool run_facts_of(mfu_report *r, const mfu_run *run, bool copy, run_facts *f)
{
    memset(f, 0, sizeof *f);
    size_t n = r->n;
    const double *smp = mfu_run_column(run, MFU_COL_SAMPLES);
    const double *sps = mfu_run_column(run, MFU_COL_SAMPLES_PER_S);
    for (size_t i = 0; i < n && !f->sequences && (smp || sps); i++)
        f->sequences =
            (smp && isfinite(smp[i]) && smp[i] > 0) || (sps && isfinite(sps[i]) && sps[i] > 0);
    const uint32_t *flags = mfu__run_flags(run); /* NULL: no step has a flag */
    for (size_t i = 0; flags && i < n; i++) {
        f->sentinel += (flags[i] & MFU_STEP_MFU_SENTINEL) != 0;
        r->loss_nan[i] = (flags[i] & MFU_STEP_LOSS_NAN) != 0;
        f->nan_loss += r->loss_nan[i];
        f->skipped += (flags[i] & MFU_STEP_SKIPPED) != 0;
    }
    return fact_col(run, MFU_COL_ENERGY_J, copy, &f->energy_j, &f->copy[0]) &&
           fact_col(run, MFU_COL_POWER_W, copy, &f->power_w, &f->copy[1]) &&
           fact_col(run, MFU_COL_TENSOR_ACTIVE, copy, &f->tensor_active, &f->copy[2]);
}

/* Whether a row of column k of c holds a finite value (an absent column, NaN in every row, is
 * not read: the pages of a mapped one would count as resident). */
static bool any_finite(const mfu__fcols *c, int k)
{
    for (size_t i = 0; c->present[k] && i < c->n; i++)
        if (isfinite(c->v[k][i]))
            return true;
    return false;
}

/* What is missing, with the option that supplies it. */
static void list_missing(mfu_report *r, const mfu_run *run, const run_facts *facts)
{
    const mfu_report_context *c = &r->fig.c;
    const mfu_report_input *in = &r->fig.in;
    const mfu_run_meta *m = mfu_run_meta_get(run);
    bool any_tps = any_finite(&r->cols, MFU__FC_TOKENS_PER_S);
    bool any_tpd = any_finite(&r->cols, MFU__FC_TOKENS_PER_S_PER_DEVICE);
    bool any_time = any_finite(&r->cols, MFU__FC_STEP_TIME_S);
    bool any_tokens = any_finite(&r->cols, MFU__FC_TOKENS);
    if (!in->has_arch && c->mfu_from_log)
        add_missing(r, "model", "--model NAME or --config config.json",
                    "mfu's own FLOPs per token and MFU (the log's are shown)");
    else if (!in->has_arch)
        add_missing(r, "model", "--model NAME or --config config.json",
                    "FLOPs per token, model TFLOP/s, MFU and HFU");
    else if (in->has_arch && c->seq <= 0)
        add_missing(r, "sequence length", "--seq N", "FLOPs per token, MFU and HFU");
    bool log_mfu = facts->log_mfu, no_peak = facts->no_peak;
    if (!isfinite(c->peak_flops_per_s))
        add_missing(r, "device", "--device NAME (see 'mfu devices') or --peak-tflops X",
                    !log_mfu  ? "MFU and HFU"
                    : no_peak ? "the framework's peak, FLOP/s and FLOPs per token"
                              : "mfu's dense peak (MFU under mfu's count, with --model)");
    bool sequences = m->global_batch > 0 || facts->sequences;
    if (!any_tps && !any_tpd && sequences && c->seq <= 0 && in->has_arch)
        ; /* "sequence length" is listed above already */
    else if (!any_tps && !any_tpd && sequences && c->seq <= 0)
        add_missing(r, "sequence length", "--seq N",
                    "tokens/s (the log counts sequences), FLOP/s, MFU and HFU");
    else if (!any_tps && !any_tpd && any_tokens && !any_time)
        add_missing(r, "step time", "a log that prints the time of a step (or timestamps)",
                    "tokens/s, FLOP/s, MFU and HFU");
    else if (!any_tps && !any_tpd)
        add_missing(r, "tokens per step",
                    "--global-batch N (sequences, with --seq) or --tokens-per-step N",
                    "tokens/s, FLOP/s, MFU and HFU");
    else if (!isfinite(c->devices) && !any_tpd)
        add_missing(r, "device count", "--devices N",
                    log_mfu ? "per-device figures and FLOPs per token"
                            : "per-device figures, MFU and HFU");
}

/* Disagreements between the log's own figures that decide which one a step's tokens/s is
 * (the precedence rule): said once, with both values. v: room for r->n doubles (the
 * summaries' scratch, its pages in use already). */
static void precedence_notes(mfu_report *r, double *v)
{
    const double *rep = r->cols.v[MFU__FC_REPORTED_TOKENS_PER_S];
    const double *der = r->cols.v[MFU__FC_DERIVED_TPS];
    if (rep == der) /* one column (the figures share equal ones; or both absent): they agree */
        return;
    size_t k = 0;
    double a = NAN, b = NAN;
    for (size_t i = 0; i < r->n; i++)
        if (rep[i] > 0 && der[i] > 0 && isfinite(rep[i]) && isfinite(der[i]))
            v[k++] = rep[i] / der[i];
    double ratio = mfu__median_inplace(v, k);
    if (k && fabs(ratio - 1) > MFU_REPORT_TOLERANCE) {
        a = mfu__median_finite(rep, r->n, v);
        b = mfu__median_finite(der, r->n, v);
        mfu__report_note(r,
                         "the log's own tokens/s (%.6g) and its tokens / step time (%.6g) "
                         "disagree (ratio %.3f): every view uses tokens / step time, the first "
                         "rule of the precedence (docs/internals/figures.md)",
                         a, b, ratio);
    }
}

/* Notes about what the log itself shows (sentinels, nan losses, skipped steps: run_facts_of
 * counted them and set r->loss_nan, which the exports write as nan). */
static void log_notes(mfu_report *r, const run_facts *f, const mfu__stack *prof)
{
    size_t sentinel = f->sentinel, nan_loss = f->nan_loss, skipped = f->skipped;
    if (sentinel) {
        const char *why = "it did not know its peak";
        if (prof && strcmp(prof->format, "llmc") == 0)
            why = "llm.c's table (llmc/mfu.h) has no entry for this GPU's name, so it printed "
                  "-100%";
        else if (prof && strcmp(prof->format, "torchtitan") == 0)
            why = "torchtitan prints N/A under FP8/MX quantization (PR #2451)";
        else if (prof && strcmp(prof->format, "nanogpt") == 0)
            why = "nanoGPT prints -100% for the first 5 iterations, before its EMA starts";
        mfu__report_note(r, "the log's MFU is a sentinel on %zu step%s: %s", sentinel,
                         sentinel == 1 ? "" : "s", why);
    }
    if (nan_loss)
        mfu__report_note(r,
                         "the loss is nan on %zu step%s while the throughput goes on: "
                         "those steps are counted as throughput but learn nothing",
                         nan_loss, nan_loss == 1 ? "" : "s");
    if (skipped)
        mfu__report_note(r,
                         "%zu step%s report%s skipped optimizer steps (fp16 loss-scale "
                         "overflow): the time is counted, the update did not happen",
                         skipped, skipped == 1 ? "" : "s", skipped == 1 ? "s" : "");
}

/* The run's columns the report never reads (the figures' rule, the notes, the analysis, the
 * outputs): training state it has no figure for. */
static const mfu_column unread[] = {MFU_COL_LR, MFU_COL_GRAD_NORM, MFU_COL_MEMORY_BYTES};

/* mfu_report_compute; drop (NULL, or run itself): the run's columns are freed once the report
 * has read them, before the analysis (mfu__report_compute_consume). */
static mfu_status compute(const mfu_run *run, mfu_run *drop, const mfu_report_input *in_,
                          mfu_report **out, mfu_error *err)
{
    if (!out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_report_compute: out is NULL");
    *out = NULL;
    if (!run)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_report_compute: run is NULL");
    mfu_report_input zero;
    memset(&zero, 0, sizeof zero);
    const mfu_report_input *in = in_ ? in_ : &zero;
    size_t n = mfu_run_count(run);
    mfu_report *r = calloc(1, sizeof *r);
    if (!r)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for a report of %zu steps", n);
    mfu_status st = mfu__fctx_init(&r->fig, run, in, err);
    if (st != MFU_OK) {
        free(r);
        return st;
    }
    if (n == 0) {
        mfu_report_free(r);
        return mfu__fail(err, MFU_E_EMPTY, 0,
                         "the log has no training step: check the file, or force the format "
                         "with --format NAME");
    }
    r->n = n;
    if (drop) /* the run's columns no figure, note or finding reads go first: at 10M steps of
                 the 8-field log, 228 MB less in the figures' pass */
        for (size_t k = 0; k < MFU__ARRAY_LEN(unread); k++) {
            size_t len;
            double *p = mfu__run_take_column(drop, unread[k], &len);
            mfu__pages_free(p, len);
        }
    /* a run freed next lends its step numbers, then hands them over (at done) */
    r->steps = drop ? (int64_t *)(uintptr_t)mfu_run_steps(run) : malloc(n * sizeof *r->steps);
    const double *t = mfu_run_column(run, MFU_COL_TIME_S);
    r->time_s = t ? malloc(n * sizeof *r->time_s) : NULL;
    r->loss_nan = calloc(n, sizeof *r->loss_nan);
    r->state = calloc(n, sizeof *r->state);
    double *scratch = NULL; /* 2 n doubles for the summaries: after the analysis, whose peak
                               it would add to, and its scratch where it kept one */
    if (!r->steps || (t && !r->time_s) || !r->loss_nan || !r->state) {
        if (drop)
            r->steps = NULL; /* the run's */
        mfu_report_free(r);
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for a report of %zu steps", n);
    }
    if (!drop)
        memcpy(r->steps, mfu_run_steps(run), n * sizeof *r->steps);
    for (size_t i = 0; t && i < n; i++)
        r->time_s[i] = isfinite(t[i]) && t[i] > 0 ? t[i] : NAN;
    run_facts facts;
    memset(&facts, 0, sizeof facts);
    r->cols.lend = drop != NULL; /* the figures' columns that are the run's are its arrays */
    st = mfu__figures_compute(&r->fig, &r->cols, run, err);
    if (st != MFU_OK)
        goto done;
    if (!run_facts_of(r, run, drop != NULL, &facts)) {
        st = mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for a report of %zu steps", n);
        goto done;
    }
    mfu__figures_explain(&r->fig, r->steps, &r->cols);
    for (size_t i = 0; i < n && r->fig.c.mfu_from_log; i++) {
        facts.log_mfu = facts.log_mfu || isfinite(r->cols.v[MFU__FC_LOG_MFU][i]);
        facts.no_peak = facts.no_peak || (r->cols.flags[i] & MFU__FR_LOG_NO_PEAK);
    }
    for (size_t i = 0; i < r->fig.nnotes; i++)
        mfu__report_note(r, "%s", r->fig.notes[i]);

    /* which steps count: the analysis's rule (warm-up, settling after a change, artifacts,
     * impossible values), so that the summaries and the segments' levels are one */
    st = mfu__report_explain(r, run, drop, in, err);
    if (st != MFU_OK)
        goto done;
    {
        /* 2 n doubles: the analysis's scratch, pages its passes wrote (no fresh ones), where
         * it kept one; the steps that count are its steady rows (the report's state
         * MFU_STEP_STEADY is the analysis's), else flags of the report's states */
        size_t room = 0;
        scratch = mfu__analysis_take_work(r->analysis, &room);
        if (room < 2 * n) {
            free(scratch);
            scratch = malloc(2 * n * sizeof *scratch);
        }
        const uint8_t *keep = mfu__analysis_steady_rows(r->analysis);
        uint8_t *own = keep ? NULL : malloc(n);
        if (!scratch || (!keep && !own)) {
            free(own);
            st = mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for a report of %zu steps", n);
            goto done;
        }
        for (size_t i = 0; own && i < n; i++)
            own[i] = r->state[i] == MFU_STEP_STEADY;
        if (own)
            keep = own;
        for (size_t k = 0; k < MFU_RS_COUNT_; k++) {
            size_t j = 0; /* a column that is another (the figures share equal ones, and
                             every absent one is their NaN column) has its summary */
            while (j < k && r->cols.v[j] != r->cols.v[k])
                j++;
            double x0; /* a column of one value: its rows stay unread (mapped: resident once
                          read) */
            r->stat[k] = j < k                 ? r->stat[j]
                         : !r->cols.present[k] ? mfu__stat(NULL, NULL, 0, NULL) /* NaN: none */
                         : mfu__fcols_const(&r->cols, (int)k, &x0)
                             ? mfu__stat_one(x0, keep, n)
                             : mfu__stat(r->cols.v[k], keep, n, scratch);
        }
        mfu__energy_cols ec = {
            facts.energy_j,
            facts.power_w,
            facts.tensor_active,
            r->cols.v[MFU__FC_STEP_TIME_S],
            r->cols.v[MFU__FC_TOKENS],
            r->cols.v[MFU__FC_MODEL_FLOPS_PER_S_PER_DEVICE],
            r->cols.v[MFU__FC_DEVICES],
            r->cols.v[MFU__FC_MFU],
        };
        mfu__energy_compute(&ec, keep, n, scratch, &r->energy);
        free(own);
    }
    list_missing(r, run, &facts);
    precedence_notes(r, scratch);

    mfu__cmp_ctx cc;
    memset(&cc, 0, sizeof cc);
    cc.fig = &r->fig;
    cc.tol = in->tolerance > 0 ? in->tolerance : MFU_REPORT_TOLERANCE;
    cc.scratch = scratch;
    mfu__report_compare(r, &cc);
    log_notes(r, &facts, r->fig.prof);
    st = mfu__report_findings(r, run, in, &r->fig.wl, err);
done:
    if (drop) /* the step numbers lent are the report's now (a column still lent on an error
                 goes with the run: the report is freed below without it) */
        r->steps = mfu__run_take_steps(drop, &r->steps_len);
    free(scratch);
    for (size_t i = 0; i < MFU__ARRAY_LEN(facts.copy); i++)
        free(facts.copy[i]);
    if (st != MFU_OK) {
        mfu_report_free(r);
        return st;
    }
    *out = r;
    return MFU_OK;
}

mfu_status mfu_report_compute(const mfu_run *run, const mfu_report_input *in, mfu_report **out,
                              mfu_error *err)
{
    return compute(run, NULL, in, out, err);
}

mfu_status mfu__report_compute_consume(mfu_run *run, const mfu_report_input *in, mfu_report **out,
                                       mfu_error *err)
{
    return compute(run, run, in, out, err);
}

/* ---- accessors ---------------------------------------------------------------------------- */

const mfu_report_context *mfu_report_get_context(const mfu_report *r)
{
    return r ? &r->fig.c : NULL;
}

size_t mfu_report_missing_count(const mfu_report *r)
{
    return r ? r->nmissing : 0;
}

const mfu_report_missing *mfu_report_missing_at(const mfu_report *r, size_t i)
{
    return r && i < r->nmissing ? &r->missing[i] : NULL;
}

size_t mfu_report_step_count(const mfu_report *r)
{
    return r ? r->n : 0;
}

const int64_t *mfu_report_steps(const mfu_report *r)
{
    return r && r->n ? r->steps : NULL;
}

const double *mfu_report_column(const mfu_report *r, mfu_report_series s)
{
    if (!r || !r->n || (int)s < 0 || s >= MFU_RS_COUNT_)
        return NULL;
    return r->cols.v[s];
}

mfu_report_step_state mfu_report_step_state_at(const mfu_report *r, size_t i)
{
    return r && i < r->n ? (mfu_report_step_state)r->state[i] : MFU_STEP_UNUSABLE;
}

mfu_report_stat mfu_report_summary(const mfu_report *r, mfu_report_series s)
{
    mfu_report_stat none = {0, NAN, NAN, NAN, NAN};
    if (!r || (int)s < 0 || s >= MFU_RS_COUNT_)
        return none;
    return r->stat[s];
}

const mfu_energy *mfu_report_get_energy(const mfu_report *r)
{
    return r ? &r->energy : NULL;
}

const mfu_report_warmup *mfu_report_get_warmup(const mfu_report *r)
{
    return r ? &r->warmup : NULL;
}

size_t mfu_report_comparison_count(const mfu_report *r)
{
    return r ? r->ncomparisons : 0;
}

const mfu_report_comparison *mfu_report_comparison_at(const mfu_report *r, size_t i)
{
    return r && i < r->ncomparisons ? &r->comparisons[i] : NULL;
}

size_t mfu_report_note_count(const mfu_report *r)
{
    return r ? r->nnotes : 0;
}

const char *mfu_report_note_at(const mfu_report *r, size_t i)
{
    return r && i < r->nnotes ? r->notes[i] : NULL;
}

const char *mfu_report_series_name(mfu_report_series s)
{
    static const char *const names[MFU_RS_COUNT_] = {
        "step_time_s",
        "tokens",
        "tokens_per_second",
        "tokens_per_second_per_device",
        "model_flops_per_second_per_device",
        "hardware_flops_per_second_per_device",
        "mfu",
        "hfu",
        "recomputed_flops_per_second_per_device",
        "recomputed_mfu",
        "reported_flops_per_second_per_device",
        "reported_mfu",
        "reported_tokens_per_second",
        "loss",
    };
    return (int)s >= 0 && s < MFU_RS_COUNT_ ? names[s] : "?";
}

const char *mfu_report_step_state_name(mfu_report_step_state s)
{
    static const char *const names[] = {"steady",     "warmup",   "artifact",
                                        "impossible", "unusable", "settle"};
    return (int)s >= 0 && (size_t)s < MFU__ARRAY_LEN(names) ? names[s] : "?";
}

const char *mfu_figure_name(mfu_figure f)
{
    static const char *const names[] = {"flops_per_second_per_device", "mfu", "tokens_per_second"};
    return (int)f >= 0 && (size_t)f < MFU__ARRAY_LEN(names) ? names[f] : "?";
}

const char *mfu_mismatch_name(mfu_mismatch m)
{
    static const char *const names[MFU_MISMATCH_COUNT_] = {
        "none",          "unexplained", "sparse_peak", "half_peak",      "a100_hardcoded",
        "a100_fallback", "stack_peak",  "no_gqa",      "no_swiglu",      "mlp_4h",
        "mha_4h",        "all_experts", "no_moe",      "full_attention", "causal_attention",
        "embeddings",    "recompute",   "padding",
    };
    return (int)m >= 0 && m < MFU_MISMATCH_COUNT_ ? names[m] : "?";
}

const char *mfu_report_source_name(mfu_report_source s)
{
    static const char *const names[] = {"none", "log", "input", "inferred"};
    return (int)s >= 0 && (size_t)s < MFU__ARRAY_LEN(names) ? names[s] : "?";
}
