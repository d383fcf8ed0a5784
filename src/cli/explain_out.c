/*
 * explain_out.c - an analysis as text and JSON (explain_out.h). Text tables use ASCII signs so
 * that columns align; sentences keep the analysis module's UTF-8 (−, →).
 */
#include "cli/explain_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/json.h"
#include "util/util.h"

/* "+25.1%" / "-8.0%" / "0%" */
static void pct(char *buf, size_t n, double frac)
{
    if (!isfinite(frac))
        snprintf(buf, n, "-");
    else if (fabs(frac) < 0.00005)
        snprintf(buf, n, "0%%");
    else
        snprintf(buf, n, "%+.*f%%", fabs(frac) < 0.1 ? 2 : 1, 100 * frac);
}

/* A rate with an SI suffix and 4 significant digits: "377.2k", "1.234M", "12.5". */
static void rate(char *buf, size_t n, double v)
{
    static const struct {
        double f;
        const char *p;
    } pre[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
    if (!isfinite(v)) {
        snprintf(buf, n, "-");
        return;
    }
    for (size_t i = 0; i < MFU__ARRAY_LEN(pre); i++)
        if (fabs(v) >= pre[i].f) {
            snprintf(buf, n, "%.4g%s", v / pre[i].f, pre[i].p);
            return;
        }
    snprintf(buf, n, "%.4g", v);
}

/* "MFU 35.75% [35.67, 35.79]"; an interval that reaches above 100 % is not a statement about
 * MFU (too few or too scattered steps): it is flagged, not printed bare. */
void explain_out_mfu(char *buf, size_t n, mfu_interval m)
{
    buf[0] = '\0';
    if (!isfinite(m.value))
        return;
    mfu__appendf(buf, n, "MFU %.2f%%", 100 * m.value);
    if (isfinite(m.lo) && m.hi > 1)
        mfu__appendf(buf, n, " [interval not meaningful: it reaches %.0f%%]", 100 * m.hi);
    else if (isfinite(m.lo))
        mfu__appendf(buf, n, " [%.2f, %.2f]", 100 * m.lo, 100 * m.hi);
}

const char *explain_out_rate(const char *unit)
{
    if (!unit || strcmp(unit, "tokens") == 0)
        return "tokens/s";
    return strcmp(unit, "steps") == 0 ? "steps/s" : "tokens/s per device";
}

void explain_out_level(char *buf, size_t n, const mfu_level *l, const char *unit)
{
    char a[32], lo[32], hi[32];
    buf[0] = '\0';
    rate(a, sizeof a, l->tokens_per_s.value);
    mfu__appendf(buf, n, "%s %s", explain_out_rate(unit), a);
    if (isfinite(l->tokens_per_s.lo)) {
        rate(lo, sizeof lo, l->tokens_per_s.lo);
        rate(hi, sizeof hi, l->tokens_per_s.hi);
        mfu__appendf(buf, n, " [%s, %s]", lo, hi);
    }
    char m[96];
    explain_out_mfu(m, sizeof m, l->mfu);
    if (m[0])
        mfu__appendf(buf, n, ", %s", m);
}

void explain_out_total(char *buf, size_t n, const mfu_level *l, const char *unit)
{
    char a[32];
    buf[0] = '\0';
    if (!(l->total_time_s > 0) || !isfinite(l->stall_time_s))
        return;
    rate(a, sizeof a, l->total_tokens_per_s);
    mfu__appendf(buf, n, "total (stalls included): %s %s", explain_out_rate(unit), a);
    if (isfinite(l->total_mfu))
        mfu__appendf(buf, n, ", MFU %.2f%%", 100 * l->total_mfu);
    mfu__appendf(buf, n, "; steps slower than the typical one cost %.4g s of %.4g s (%.0f%%)",
                 l->stall_time_s, l->total_time_s, 100 * l->stall_time_s / l->total_time_s);
}

/* The label of term t of d: without a peak the MFU term is the change of achieved FLOP/s. */
static const char *term_label(const mfu_decomposition *d, mfu_term t)
{
    static const char *const names[MFU_TERM_COUNT_] = {"tokens/s (all terms)", "utilization (MFU)",
                                                       "capacity (devices x peak)",
                                                       "workload (FLOPs/token)", "padding"};
    if (t == MFU_TERM_MFU && d->capacity_unknown)
        return "FLOP/s per device (no peak)";
    return (int)t >= 0 && t < MFU_TERM_COUNT_ ? names[t] : "?";
}

void explain_out_terms(FILE *out, const mfu_decomposition *d, const char *indent)
{
    cli_table *t = cli_table_new();
    if (!t)
        return;
    const char *head[] = {"term", "change", "95% interval", "share", "direction", "size"};
    cli_table_row(t, 6, head);
    for (int k = 0; k < MFU_TERM_COUNT_; k++) {
        const mfu_term_change *c = &d->term[k];
        if (k != MFU_TERM_TOKENS_PER_S && !isfinite(c->dln))
            continue;
        char ch[32], iv[80] = "-", sh[32] = "-", lo[32], hi[32];
        pct(ch, sizeof ch, c->pct);
        if (isfinite(c->lo_pct)) {
            pct(lo, sizeof lo, c->lo_pct);
            pct(hi, sizeof hi, c->hi_pct);
            snprintf(iv, sizeof iv, "[%s, %s]", lo, hi);
        }
        if (isfinite(c->share))
            snprintf(sh, sizeof sh, "%.2f", c->share);
        bool has_iv = isfinite(c->lo_pct);
        const char *cells[] = {term_label(d, (mfu_term)k),
                               ch,
                               iv,
                               sh,
                               !has_iv                ? "-"
                               : c->direction_certain ? "certain"
                                                      : "not certain",
                               !has_iv         ? "-"
                               : c->size_known ? "known"
                                               : "not known"};
        cli_table_row(t, 6, cells);
        if (k == MFU_TERM_TOKENS_PER_S)
            cli_table_rule(t);
    }
    cli_table_print(t, out, indent);
    free(t);
}

void explain_out_findings(FILE *out, const mfu_analysis *a)
{
    size_t nf = mfu_analysis_finding_count(a);
    if (nf == 0) {
        fprintf(out, "findings: none\n");
        return;
    }
    fprintf(out, "findings (%zu):\n", nf);
    for (size_t i = 0; i < nf; i++) {
        const mfu_finding *f = mfu_analysis_finding(a, i);
        fprintf(out, "  [%s] %s, steps %lld-%lld: %s\n", mfu_severity_name(f->severity), f->kind,
                (long long)f->first_step, (long long)f->last_step, f->summary);
        if (f->nevidence) {
            fprintf(out, "      evidence:");
            for (size_t k = 0; k < f->nevidence && k < MFU_FINDING_EVIDENCE_MAX; k++)
                fprintf(out, "%s %s=%.4g", k ? "," : "", f->evidence[k].name, f->evidence[k].value);
            fputc('\n', out);
        }
        fprintf(out, "      next: %s\n", f->next_step);
    }
}

/* A level's total is printed beside its medians when stalls cost this share of the time. */
#define STALL_NOTE_SHARE 0.05

static void print_segments(FILE *out, const mfu_analysis *a, const char *unit)
{
    size_t ns = mfu_analysis_segment_count(a);
    const mfu_warmup *w = mfu_analysis_warmup(a);
    fprintf(out, "segments: %zu", ns);
    if (ns == 1) {
        const mfu_segment *g = mfu_analysis_segment(a, 0);
        fprintf(out, " (steps %lld-%lld)", (long long)g->start_step, (long long)g->end_step);
    }
    if (w->steps)
        fprintf(out, "%s warm-up %lld-%lld excluded", ns == 1 ? "," : ";", (long long)w->first_step,
                (long long)w->last_step);
    if (ns == 1) { /* one line is enough */
        const mfu_level *l = &mfu_analysis_segment(a, 0)->level;
        char lev[256];
        explain_out_level(lev, sizeof lev, l, unit);
        fprintf(out, ": median %s\n", lev);
        /* the medians are the typical step; when stalls cost real time, the total says so */
        if (l->total_time_s > 0 && l->stall_time_s >= STALL_NOTE_SHARE * l->total_time_s) {
            explain_out_total(lev, sizeof lev, l, unit);
            fprintf(out, "  (%s)\n", lev);
        }
        return;
    }
    fputc('\n', out);
    if (ns == 0)
        return;
    cli_table *t = cli_table_new();
    if (!t)
        return;
    char med[48];
    snprintf(med, sizeof med, "median %s", explain_out_rate(unit));
    const char *head[] = {"#",   "steps",        "cause",          "settle", med, "95% interval",
                          "MFU", "95% interval", "median step (s)"};
    cli_table_row(t, 9, head);
    for (size_t i = 0; i < ns; i++) {
        const mfu_segment *g = mfu_analysis_segment(a, i);
        const mfu_level *l = &g->level;
        char c[9][64];
        snprintf(c[0], sizeof c[0], "%zu", i);
        snprintf(c[1], sizeof c[1], "%lld-%lld", (long long)g->start_step, (long long)g->end_step);
        snprintf(c[2], sizeof c[2], "%s", mfu_cause_name(g->cause));
        snprintf(c[3], sizeof c[3], "%zu", g->settle_steps);
        rate(c[4], sizeof c[4], l->tokens_per_s.value);
        snprintf(c[5], sizeof c[5], "-");
        if (isfinite(l->tokens_per_s.lo)) {
            char lo[24], hi[24];
            rate(lo, sizeof lo, l->tokens_per_s.lo);
            rate(hi, sizeof hi, l->tokens_per_s.hi);
            snprintf(c[5], sizeof c[5], "[%s, %s]", lo, hi);
        }
        snprintf(c[6], sizeof c[6], "-");
        snprintf(c[7], sizeof c[7], "-");
        if (isfinite(l->mfu.value)) {
            snprintf(c[6], sizeof c[6], "%.2f%%", 100 * l->mfu.value);
            if (isfinite(l->mfu.lo) && l->mfu.hi > 1)
                snprintf(c[7], sizeof c[7], "not meaningful");
            else if (isfinite(l->mfu.lo))
                snprintf(c[7], sizeof c[7], "[%.2f, %.2f]", 100 * l->mfu.lo, 100 * l->mfu.hi);
        }
        snprintf(c[8], sizeof c[8], isfinite(l->step_time_s.value) ? "%.4g" : "-",
                 l->step_time_s.value);
        const char *cells[9];
        for (int k = 0; k < 9; k++)
            cells[k] = c[k];
        cli_table_row(t, 9, cells);
    }
    cli_table_print(t, out, "  ");
    free(t);
}

void explain_out_text(FILE *out, const mfu_analysis *a, const char *unit)
{
    if (!a)
        return;
    fputc('\n', out);
    print_segments(out, a, unit);
    size_t ns = mfu_analysis_segment_count(a);
    for (size_t i = 0; i + 1 < ns; i++) {
        const mfu_decomposition *d = mfu_analysis_boundary(a, i);
        const mfu_segment *g = mfu_analysis_segment(a, i + 1);
        fprintf(out, "\nat step %lld (%s): %s\n", (long long)g->start_step,
                d->config_change[0] ? d->config_change : "level shift", d->sentence);
        explain_out_terms(out, d, "  ");
    }
    if (ns > 1)
        fputc('\n', out);
    explain_out_findings(out, a);
    size_t ni = mfu_analysis_invariant_count(a);
    if (ni) {
        fprintf(out, "\nexpectations:\n");
        for (size_t i = 0; i < ni; i++) {
            const mfu_invariant_result *v = mfu_analysis_invariant(a, i);
            fprintf(out, "  %-4s %s: %s\n", v->passed ? "ok" : "FAIL", v->expression, v->message);
        }
    }
}

bool explain_out_json(json_t *o, const mfu_analysis *a, const char *unit)
{
    json_t *x = mfu__analysis_json(a);
    if (!x)
        return false;
    static const char *const hoist[] = {"segments", "decomposition", "findings", "invariants"};
    for (size_t i = 0; i < MFU__ARRAY_LEN(hoist); i++) {
        json_t *v = json_object_get(x, hoist[i]);
        json_object_set(o, hoist[i], v ? v : json_null());
        json_object_del(x, hoist[i]);
    }
    cli_json_set(x, "unit", unit ? cli_json_str(unit) : json_null());
    cli_json_set(o, "analysis", x);
    return true;
}
