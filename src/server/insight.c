/*
 * insight.c - what the report module says about a run, for the API: steady-state summaries,
 * segments, findings and compare (mfu/report.h, mfu/analysis.h).
 *
 * The analysis is the one `mfu report` runs: mfu_report_analysis() of the report computed with
 * the run's context (its stored context or the server's flags, and the device count the server
 * counts), so it sees what the report sees: each step's sequence length, recomputation, dtype
 * and device count, the clock, power and timers, and the per-rank observations (stragglers),
 * and it carries the report's own findings (figures the framework printed that disagree, the
 * roofline). The server keeps only the analysis (mfu__report_take_analysis), not the report's
 * per-step columns.
 *
 * Both are computed on demand from a read-locked run and cached per run: a summary while the
 * run's version is unchanged, an analysis likewise. A live run's cache is reused for up to
 * INSIGHT_LIVE_S seconds after it changed, so a run that gets a step a second is not analysed
 * a second, or for INSIGHT_COST_FACTOR times what computing it took when that is longer, so
 * that a large live run (10 s for a million steps of 8 ranks) is not analysed without pause.
 * Computing the analysis refreshes the summary from the same report, and a run whose analysis
 * is kept (it was asked for) gets its summary that way; other runs' summaries (the run list)
 * come from a report without the analysis, which costs less. The analysis's JSON
 * (src/analysis/json.c, the keys `mfu report --json` uses) goes out through the server's
 * HTML-safe writer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analysis/json.h"
#include "mfu/analysis.h"
#include "mfu/report.h"
#include "report/report.h"
#include "server/internal.h"

#define INSIGHT_LIVE_S 5.0    /* a live run's summary and analysis are reused this long ... */
#define INSIGHT_COST_FACTOR 4 /* ... or this many times what computing them took, if longer */

/* Is a cache computed at `at` for `version`, in cost_s seconds, still good for r? */
static bool fresh(const mfu__srun *r, uint64_t version, double at, double cost_s, bool valid)
{
    if (!valid)
        return false;
    if (version == r->version)
        return true;
    double keep = INSIGHT_COST_FACTOR * cost_s > INSIGHT_LIVE_S ? INSIGHT_COST_FACTOR * cost_s
                                                                : INSIGHT_LIVE_S;
    return r->live && mfu__now() - at < keep;
}

/* The report's input for run r: the one its figures are made from (mfu__srun_report_input),
 * so that summaries, series and the analysis count the same; analysis false: the summaries
 * only. */
static void report_input(const mfu__server_model *m, const mfu__srun *r, bool analysis,
                         mfu_report_input *in)
{
    mfu__srun_report_input(m, r, in);
    in->no_analysis = !analysis;
}

/* The steady-state medians of report rep (NaN where unknown; all NaN for NULL). */
static mfu__summary summary_of(const mfu_report *rep)
{
    mfu__summary s;
    s.mfu = mfu_report_summary(rep, MFU_RS_MFU).median;
    s.hfu = mfu_report_summary(rep, MFU_RS_HFU).median;
    s.tokens_per_s = mfu_report_summary(rep, MFU_RS_TOKENS_PER_S).median;
    s.model_flops_per_s_per_device =
        mfu_report_summary(rep, MFU_RS_MODEL_FLOPS_PER_S_PER_DEVICE).median;
    s.step_time_s = mfu_report_summary(rep, MFU_RS_STEP_TIME_S).median;
    return s;
}

/* Keep s as r's summary of its current version, computed from t0 on (sum_mu held). */
static void keep_summary(mfu__srun *r, const mfu__summary *s, double t0)
{
    r->sum = *s;
    r->sum_version = r->version;
    r->sum_time = mfu__now();
    r->sum_cost = r->sum_time - t0;
    r->sum_valid = true;
}

static const mfu_analysis *analysis_of(const mfu__registry *g, mfu__srun *r, char *why, size_t n);

bool mfu__srun_summary(const mfu__registry *g, mfu__srun *r, mfu__summary *out)
{
    size_t n = r->run ? mfu_run_count(r->run) : 0;
    if (n == 0)
        return false;
    pthread_mutex_lock(&r->sum_mu);
    bool stale = !fresh(r, r->sum_version, r->sum_time, r->sum_cost, r->sum_valid);
    pthread_mutex_unlock(&r->sum_mu);
    if (stale) {
        /* a run whose analysis is kept gets both from one report (the analysis refreshes the
         * summary); locks in the order ana_mu -> sum_mu */
        pthread_mutex_lock(&r->ana_mu);
        if (r->ana || r->ana_error[0]) {
            char why[8];
            analysis_of(g, r, why, sizeof why);
        }
        pthread_mutex_unlock(&r->ana_mu);
    }
    pthread_mutex_lock(&r->sum_mu);
    if (!fresh(r, r->sum_version, r->sum_time, r->sum_cost, r->sum_valid)) {
        double t0 = mfu__now();
        mfu_report_input in;
        report_input(mfu__srun_model(g, r), r, false, &in);
        mfu_report *rep = NULL;
        if (mfu_report_compute(r->run, &in, &rep, NULL) != MFU_OK)
            rep = NULL;
        mfu__summary s = summary_of(rep);
        mfu_report_free(rep);
        keep_summary(r, &s, t0);
    }
    *out = r->sum;
    pthread_mutex_unlock(&r->sum_mu);
    return isfinite(out->tokens_per_s) || isfinite(out->step_time_s);
}

/* r's analysis (cached), r read-locked: the analysis of r's report (see the file comment); NULL
 * with *why filled when there is none. The analysis belongs to r: use it while holding ana_mu
 * (the caller locks it). */
static const mfu_analysis *analysis_of(const mfu__registry *g, mfu__srun *r, char *why, size_t n)
{
    if (fresh(r, r->ana_version, r->ana_time, r->ana_cost, r->ana != NULL || r->ana_error[0]))
        goto out;
    double t0 = mfu__now();
    mfu_analysis_free(r->ana);
    r->ana = NULL;
    r->ana_error[0] = '\0';
    r->ana_unit[0] = '\0';
    if (r->run && mfu_run_count(r->run) > 0) {
        mfu_report_input in;
        report_input(mfu__srun_model(g, r), r, true, &in);
        mfu_report *rep = NULL;
        mfu_error e;
        memset(&e, 0, sizeof e);
        if (mfu_report_compute(r->run, &in, &rep, &e) != MFU_OK) {
            snprintf(r->ana_error, sizeof r->ana_error, "the run cannot be analysed: %s",
                     e.message[0] ? e.message : mfu_strerror(e.code));
        } else {
            const char *unit = mfu_report_analysis_unit(rep);
            mfu__strlcpy(r->ana_unit, unit ? unit : "", sizeof r->ana_unit);
            bool had = mfu_report_analysis(rep) != NULL;
            r->ana = mfu__report_take_analysis(rep);
            if (!r->ana && had)
                mfu__strlcpy(r->ana_error,
                             "the run cannot be analysed: out of memory keeping its analysis",
                             sizeof r->ana_error);
            else if (!r->ana)
                mfu__strlcpy(r->ana_error,
                             "the run cannot be analysed: no step has a throughput; serve it "
                             "with --tokens-per-step N, or --global-batch N with --seq N",
                             sizeof r->ana_error);
            /* the same report gives the summary of this version */
            mfu__summary s = summary_of(rep);
            pthread_mutex_lock(&r->sum_mu);
            keep_summary(r, &s, t0);
            pthread_mutex_unlock(&r->sum_mu);
        }
        mfu_report_free(rep);
    }
    r->ana_version = r->version;
    r->ana_time = mfu__now();
    r->ana_cost = r->ana_time - t0;
out:
    if (!r->ana)
        mfu__strlcpy(why, r->ana_error[0] ? r->ana_error : "the run has no steps", n);
    return r->ana;
}

/* Write key k of object o (null when absent). */
static void put_member(mfu__jw *w, const json_t *o, const char *k)
{
    mfu__jw_key(w, k);
    const json_t *v = json_object_get(o, k);
    if (v)
        mfu__jw_json(w, v);
    else
        mfu__jw_null(w);
}

bool mfu__insight_json(const mfu__registry *g, mfu__srun *r, bool findings, mfu__sb *b, char *why,
                       size_t n)
{
    pthread_mutex_lock(&r->ana_mu);
    const mfu_analysis *a = analysis_of(g, r, why, n);
    json_t *j = a ? mfu__analysis_json(a) : NULL;
    char unit[sizeof r->ana_unit];
    mfu__strlcpy(unit, r->ana_unit, sizeof unit);
    pthread_mutex_unlock(&r->ana_mu);
    if (!j) {
        if (a)
            mfu__strlcpy(why, "out of memory", n);
        return false;
    }
    mfu__jw w;
    mfu__jw_init(&w, b);
    mfu__jw_obj(&w);
    if (findings) {
        /* the contract's "message" is the analysis's summary line */
        mfu__jw_key(&w, "findings");
        mfu__jw_arr(&w);
        size_t i;
        json_t *f;
        json_array_foreach(json_object_get(j, "findings"), i, f)
        {
            json_t *copy = json_copy(f);
            if (!copy)
                continue;
            json_object_set(copy, "message", json_object_get(f, "summary"));
            mfu__jw_json(&w, copy);
            json_decref(copy);
        }
        mfu__jw_end_arr(&w);
    } else {
        static const char *const keys[] = {"method", "steps",    "warmup",
                                           "steady", "segments", "decomposition"};
        for (size_t k = 0; k < MFU__ARRAY_LEN(keys); k++)
            put_member(&w, j, keys[k]);
        /* what the levels' tokens are, as `mfu report --json` says under analysis.unit */
        mfu__jw_key(&w, "unit");
        if (unit[0])
            mfu__jw_str(&w, unit);
        else
            mfu__jw_null(&w);
    }
    mfu__jw_end_obj(&w);
    json_decref(j);
    return true;
}

/* A level as the page reads it: the analysis's keys, plus its config flattened (devices,
 * seq_len, dtype) and the API's name for model FLOP/s per device. */
static void put_level(mfu__jw *w, const mfu_level *l)
{
    json_t *j = mfu__level_json(l);
    if (!j) {
        mfu__jw_null(w);
        return;
    }
    json_t *cfg = json_object_get(j, "config");
    if (json_is_object(cfg)) {
        json_object_set(j, "devices", json_object_get(cfg, "devices"));
        json_object_set(j, "seq_len", json_object_get(cfg, "seq_len"));
        json_object_set(j, "dtype", json_object_get(cfg, "dtype"));
    }
    json_object_set(j, "model_flops_per_second_per_device",
                    json_object_get(j, "model_flops_per_s_per_device"));
    mfu__jw_json(w, j);
    json_decref(j);
}

bool mfu__compare_json(const mfu__registry *g, mfu__srun *ra, mfu_window wa, mfu__srun *rb,
                       mfu_window wb, mfu__sb *b, char *why, size_t n)
{
    /* one analysis lock at a time, in name order, so two compares cannot deadlock */
    mfu__srun *first = strcmp(ra->name, rb->name) <= 0 ? ra : rb;
    mfu__srun *second = first == ra ? rb : ra;
    pthread_mutex_lock(&first->ana_mu);
    if (second != first)
        pthread_mutex_lock(&second->ana_mu);
    const mfu_analysis *a = analysis_of(g, ra, why, n);
    const mfu_analysis *c = a ? analysis_of(g, rb, why, n) : NULL;
    mfu_decomposition d;
    mfu_error e;
    memset(&e, 0, sizeof e);
    bool ok = a && c && mfu_compare(a, wa, c, wb, NULL, &d, &e) == MFU_OK;
    if (a && c && !ok)
        snprintf(why, n, "%s", e.message);
    if (second != first)
        pthread_mutex_unlock(&second->ana_mu);
    pthread_mutex_unlock(&first->ana_mu);
    if (!ok)
        return false;
    json_t *dec = mfu__decomposition_json(&d);
    if (!dec) {
        mfu__strlcpy(why, "out of memory", n);
        return false;
    }
    mfu__jw w;
    mfu__jw_init(&w, b);
    mfu__jw_obj(&w);
    mfu__jw_key(&w, "a");
    put_level(&w, &d.from);
    mfu__jw_key(&w, "b");
    put_level(&w, &d.to);
    mfu__jw_key(&w, "decomposition");
    mfu__jw_json(&w, dec);
    mfu__jw_key(&w, "verdict");
    mfu__jw_obj(&w);
    const mfu_term_change *t = &d.term[MFU_TERM_TOKENS_PER_S];
    mfu__jw_key(&w, "direction_certain");
    mfu__jw_bool(&w, t->direction_certain);
    mfu__jw_key(&w, "size_known");
    mfu__jw_bool(&w, t->size_known);
    mfu__jw_end_obj(&w);
    mfu__jw_end_obj(&w);
    json_decref(dec);
    return true;
}
