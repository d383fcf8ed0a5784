/*
 * report_out.c - `mfu report` output. Text: one block per run, labels with units, the
 * conventions named, only rows that have values. JSON: stable keys (docs/cli.md), base units
 * (seconds, FLOP/s, fractions) except the reported_tflops_per_device key, which is in TFLOP/s
 * as frameworks print it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/explain_out.h"
#include "cli/flops_out.h"
#include "cli/report_out.h"
#include "ingest/fast.h"
#include "util/util.h"

static const char *src_word(mfu_report_source s)
{
    return s == MFU_SRC_INPUT ? "given" : s == MFU_SRC_LOG ? "from the log" : "unknown";
}

static const char *att_word(mfu_attention a)
{
    return a == MFU_ATTENTION_CAUSAL ? "causal" : a == MFU_ATTENTION_FULL ? "full" : "default";
}

typedef enum { F_COUNT, F_RATE, F_FLOPS, F_PEAK, F_PCT, F_SECONDS } fmt_kind;

static void fmt(char *buf, size_t n, double v, fmt_kind k)
{
    if (!isfinite(v)) {
        snprintf(buf, n, "-");
        return;
    }
    switch (k) {
    case F_COUNT: snprintf(buf, n, "%.0f", v); break;
    case F_RATE:
        snprintf(buf, n, fabs(v) >= 1e3 ? "%.0f" : fabs(v) >= 10 ? "%.1f" : "%.3g", v);
        break;
    case F_FLOPS: mfu__fmt_si(buf, n, v, "FLOP/s"); break; /* "312 TFLOP/s", "45.6 GFLOP/s" */
    case F_PEAK: mfu__fmt_si_digits(buf, n, v, "FLOP/s", 4); break; /* "989.5 TFLOP/s" */
    case F_PCT: snprintf(buf, n, "%.2f%%", 100 * v); break;
    case F_SECONDS: snprintf(buf, n, "%.4g", v); break;
    }
}

/* First and last steady step numbers. */
static bool steady_range(const mfu_report *r, int64_t *first, int64_t *last)
{
    const int64_t *steps = mfu_report_steps(r);
    bool any = false;
    for (size_t i = 0; i < mfu_report_step_count(r); i++) {
        if (mfu_report_step_state_at(r, i) != MFU_STEP_STEADY)
            continue;
        if (!any)
            *first = steps[i];
        *last = steps[i];
        any = true;
    }
    return any;
}

static void print_steady(FILE *out, const mfu_report *r)
{
    const mfu_report_warmup *w = mfu_report_get_warmup(r);
    int64_t a = 0, b = 0;
    size_t n = mfu_report_step_count(r);
    fprintf(out, "steady     %zu of %zu step%s", w->steady, n, n == 1 ? "" : "s");
    if (steady_range(r, &a, &b) && a != b)
        fprintf(out, " (%lld-%lld)", (long long)a, (long long)b);
    else if (steady_range(r, &a, &b))
        fprintf(out, " (%lld)", (long long)a);
    if (w->mid_run)
        fprintf(out, "; the log starts mid-run: no warm-up looked for");
    else if (!w->checked)
        fprintf(out, "; too few steps with a throughput to look for a warm-up (fewer than 2)");
    else if (w->steps == 0)
        fprintf(out, "; no warm-up found");
    else if (w->steps == 1)
        fprintf(out, "; warm-up excluded: step %lld (%.3g× the steady step time)",
                (long long)w->first_step, 1 / (1 + w->slowdown));
    else
        fprintf(out, "; warm-up excluded: steps %lld-%lld (%zu steps, %.3g× the steady step time)",
                (long long)w->first_step, (long long)w->last_step, w->steps, 1 / (1 + w->slowdown));
    if (w->artifacts)
        fprintf(out, "; %zu timing artifact%s excluded (>5x faster than the median)", w->artifacts,
                w->artifacts == 1 ? "" : "s");
    if (w->impossible)
        fprintf(out, "; %zu step%s excluded for MFU above 100%%", w->impossible,
                w->impossible == 1 ? "" : "s");
    if (w->unusable)
        fprintf(out, "; %zu without throughput", w->unusable);
    fputc('\n', out);
}

void report_skips_note(void *ctx, long line, const char *reason)
{
    report_skips *k = ctx;
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 64;
        mfu_ingest_skip *v = k->n < REPORT_SKIPS_MAX ? realloc(k->v, cap * sizeof *v) : NULL;
        if (!v) { /* past the limit, or out of memory: counted, not kept */
            k->more++;
            return;
        }
        k->v = v;
        k->cap = cap;
    }
    k->v[k->n].line = line;
    mfu__strlcpy(k->v[k->n].reason, reason, sizeof k->v[k->n].reason);
    k->n++;
}

void report_skips_free(report_skips *k)
{
    free(k->v);
    memset(k, 0, sizeof *k);
}

/* The skipped lines a report names: all of --verbose's list, else the first kept in stats. */
static const mfu_ingest_skip *named_skips(const report_origin *o, size_t *n)
{
    if (o->skips) {
        *n = o->skips->n;
        return o->skips->v;
    }
    *n = o->stats ? o->stats->nskip_samples : 0;
    return o->stats ? o->stats->skip_samples : NULL;
}

/* "skipped    line 12: step time -0.1 s is negative", the first few (all with --verbose). */
static void print_skips(FILE *out, const report_origin *o)
{
    const mfu_ingest_stats *st = o->stats;
    long total = st->skipped + st->too_long;
    if (total <= 0)
        return;
    size_t n;
    const mfu_ingest_skip *k = named_skips(o, &n);
    size_t shown = o->skips ? n : (n < REPORT_SKIPS_SHOWN ? n : REPORT_SKIPS_SHOWN);
    for (size_t i = 0; i < shown; i++)
        fprintf(out, "%s line %ld: %s\n", i == 0 ? "skipped   " : "          ", k[i].line,
                k[i].reason);
    if ((long)shown < total)
        fprintf(out, "           ... %ld more skipped line%s%s\n", total - (long)shown,
                total - (long)shown == 1 ? "" : "s",
                o->skips ? " (past the list's limit)" : "; --verbose names them all");
}

static void print_context(FILE *out, const report_origin *o, const mfu_report *r)
{
    const mfu_report_context *c = mfu_report_get_context(r);
    const mfu_ingest_stats *st = o->stats;
    char a[64], b[64];
    size_t n = mfu_report_step_count(r);
    if (st) {
        fprintf(out, "== %s\n", o->path);
        fprintf(out,
                "log        %s (%s), %zu step%s; lines: %ld read, %ld used, %ld ignored, %ld "
                "skipped\n",
                st->format, st->detected ? "detected" : "forced", n, n == 1 ? "" : "s", st->lines,
                st->used, st->ignored, st->skipped);
        print_skips(out, o);
    } else {
        fprintf(out, "== run %s (store %s)\n", o->path, o->store);
        fprintf(out, "log        %s, %zu step%s stored", o->format[0] ? o->format : "unknown", n,
                n == 1 ? "" : "s");
        if (o->source && o->source[0]) {
            fprintf(out, "; ingested from %s", o->source);
            if (o->source_lines >= 0)
                fprintf(out, " (%ld lines read)", o->source_lines);
        }
        fputc('\n', out);
    }
    if (c->stack.name[0]) {
        fprintf(out, "framework  %s", c->stack.framework);
        if (c->stack.has_convention)
            fprintf(out, ": counts FLOPs as %s (%s attention)%s",
                    mfu_convention_name(c->stack.convention),
                    c->stack.convention == MFU_CONV_6N ? "no" : att_word(c->stack.attention),
                    c->stack.approximate ? ", approximately" : "");
        if (c->stack_peak_rule[0])
            fprintf(out, "; peak: %s", c->stack_peak_rule);
        if (c->stack.rule[0])
            fprintf(out, "; %s", c->stack.rule);
        fputc('\n', out);
    }
    if (c->has_model) {
        flops_out_fmt(a, sizeof a, c->model_flops_per_token);
        flops_out_fmt(b, sizeof b, c->hardware_flops_per_token);
        fprintf(out, "model      %s, seq %lld (%s): %s per token under %s (%s attention)",
                c->model[0] ? c->model : "(from flags)", (long long)c->seq, src_word(c->seq_source),
                a, mfu_convention_name(c->convention), att_word(c->attention));
        if (c->hardware_flops_per_token > c->model_flops_per_token * (1 + 1e-12))
            fprintf(out, ", %s with recompute", b);
        fputc('\n', out);
    }
    if (isfinite(c->peak_flops_per_s)) {
        fmt(a, sizeof a, c->peak_flops_per_s, F_PEAK);
        if (c->device)
            fprintf(out, "device     %s (%s), %s dense peak %s%s", c->device->id, c->device->name,
                    mfu_dtype_name(c->dtype), a,
                    c->peak_source == MFU_SRC_INPUT ? " (--peak-tflops)" : "");
        else if (c->peak_source == MFU_SRC_LOG) /* a device only the log knows, its peak */
            fprintf(out, "device     '%s' (from the log), peak %s (from the log)", c->device_name,
                    a);
        else
            fprintf(out, "device     peak %s (--peak-tflops)", a);
    } else if (c->device_name[0]) {
        fprintf(out, "device     '%s' (%s): no peak", c->device_name, src_word(c->device_source));
    } else {
        fprintf(out, "device     unknown");
    }
    if (isfinite(c->devices))
        fprintf(out, "; %.0f device%s (%s)", c->devices, c->devices == 1 ? "" : "s",
                src_word(c->devices_source));
    if (isfinite(c->tokens_per_step)) {
        cli_fmt_count(a, sizeof a, c->tokens_per_step);
        fprintf(out, "; %s tokens per step (%s)", a, src_word(c->tokens_source));
        if (c->real_fraction < 1)
            fprintf(out, ", %.1f%% real (not padding)", 100 * c->real_fraction);
    }
    fputc('\n', out);
    print_steady(out, r);
}

static void print_summary(FILE *out, const mfu_report *r)
{
    static const struct {
        mfu_report_series s;
        const char *label;
        fmt_kind k;
    } rows[] = {
        {MFU_RS_STEP_TIME_S, "step time (s)", F_SECONDS},
        {MFU_RS_TOKENS_PER_S, "tokens/s (whole job)", F_RATE},
        {MFU_RS_TOKENS_PER_S_PER_DEVICE, "tokens/s per device", F_RATE},
        {MFU_RS_MODEL_FLOPS_PER_S_PER_DEVICE, "model FLOP/s per device", F_FLOPS},
        {MFU_RS_HARDWARE_FLOPS_PER_S_PER_DEVICE, "hardware FLOP/s per device", F_FLOPS},
        {MFU_RS_MFU, "MFU", F_PCT},
        {MFU_RS_HFU, "HFU", F_PCT},
        {MFU_RS_REPORTED_TOKENS_PER_S, "printed tokens/s (whole job)", F_RATE},
        {MFU_RS_REPORTED_FLOPS_PER_S_PER_DEVICE, "printed FLOP/s per device", F_FLOPS},
        {MFU_RS_REPORTED_MFU, "printed MFU", F_PCT},
    };
    cli_table *t = cli_table_new();
    if (!t)
        return;
    const char *head[] = {"steady steps", "median", "mean", "p10", "p90"};
    cli_table_row(t, 5, head);
    size_t nrows = 0;
    const mfu_report_context *ctx = mfu_report_get_context(r);
    bool same_hw =
        ctx->hardware_flops_per_token == ctx->model_flops_per_token && ctx->real_fraction == 1;
    for (size_t i = 0; i < MFU__ARRAY_LEN(rows); i++) {
        mfu_report_stat s = mfu_report_summary(r, rows[i].s);
        if (s.n == 0)
            continue;
        /* rows that would repeat the one above: one device, or no recomputation */
        if (rows[i].s == MFU_RS_TOKENS_PER_S_PER_DEVICE && ctx->devices == 1 &&
            mfu_report_summary(r, MFU_RS_TOKENS_PER_S).n == s.n)
            continue;
        if ((rows[i].s == MFU_RS_HARDWARE_FLOPS_PER_S_PER_DEVICE || rows[i].s == MFU_RS_HFU) &&
            (same_hw || ctx->mfu_from_log))
            continue;
        /* the log's own figures shown as MFU and FLOP/s (no model): their printed rows repeat
         * them unless they differ (an EMA the framework printed) */
        if (ctx->mfu_from_log && (rows[i].s == MFU_RS_REPORTED_MFU ||
                                  rows[i].s == MFU_RS_REPORTED_FLOPS_PER_S_PER_DEVICE)) {
            mfu_report_stat g = mfu_report_summary(r, rows[i].s == MFU_RS_REPORTED_MFU
                                                          ? MFU_RS_MFU
                                                          : MFU_RS_MODEL_FLOPS_PER_S_PER_DEVICE);
            if (g.n == s.n && fabs(g.median - s.median) <= 1e-9 * fabs(s.median))
                continue;
        }
        /* a printed figure that a comparison below shows already */
        bool compared = false;
        for (size_t k = 0; k < mfu_report_comparison_count(r); k++) {
            mfu_figure f = mfu_report_comparison_at(r, k)->figure;
            compared = compared || (f == MFU_FIGURE_MFU && rows[i].s == MFU_RS_REPORTED_MFU) ||
                       (f == MFU_FIGURE_FLOPS_PER_S &&
                        rows[i].s == MFU_RS_REPORTED_FLOPS_PER_S_PER_DEVICE) ||
                       (f == MFU_FIGURE_TOKENS_PER_S && rows[i].s == MFU_RS_REPORTED_TOKENS_PER_S);
        }
        if (compared)
            continue;
        /* the printed tokens/s when they are the tokens/s above (no step time to derive them) */
        if (rows[i].s == MFU_RS_REPORTED_TOKENS_PER_S) {
            mfu_report_stat g = mfu_report_summary(r, MFU_RS_TOKENS_PER_S);
            if (g.n == s.n && g.median == s.median && g.mean == s.mean)
                continue;
        }
        char c[4][32], label[128];
        const char *lab = rows[i].label;
        if (ctx->mfu_from_log &&
            (rows[i].s == MFU_RS_MFU || rows[i].s == MFU_RS_MODEL_FLOPS_PER_S_PER_DEVICE)) {
            snprintf(label, sizeof label, "%s (%s's)",
                     rows[i].s == MFU_RS_MFU ? "MFU" : "FLOP/s per device",
                     ctx->stack.name[0] ? ctx->stack.framework : "the log");
            lab = label;
        }
        fmt(c[0], sizeof c[0], s.median, rows[i].k);
        fmt(c[1], sizeof c[1], s.mean, rows[i].k);
        fmt(c[2], sizeof c[2], s.p10, rows[i].k);
        fmt(c[3], sizeof c[3], s.p90, rows[i].k);
        const char *cells[] = {lab, c[0], c[1], c[2], c[3]};
        cli_table_row(t, 5, cells);
        nrows++;
    }
    if (nrows) {
        fputc('\n', out);
        cli_table_print(t, out, "");
    }
    free(t);
}

static void fmt_figure(char *buf, size_t n, mfu_figure f, double v)
{
    fmt(buf, n, v, f == MFU_FIGURE_MFU ? F_PCT : f == MFU_FIGURE_FLOPS_PER_S ? F_FLOPS : F_RATE);
}

static void print_comparisons(FILE *out, const mfu_report *r)
{
    const mfu_report_context *c = mfu_report_get_context(r);
    size_t n = mfu_report_comparison_count(r);
    if (n) {
        cli_table *t = cli_table_new();
        if (!t)
            return;
        const char *head[] = {"reported vs recomputed (steady medians)", "reported", "recomputed",
                              "ratio", ""};
        cli_table_row(t, 5, head);
        for (size_t i = 0; i < n; i++) {
            const mfu_report_comparison *x = mfu_report_comparison_at(r, i);
            char a[32], b[32], q[32];
            fmt_figure(a, sizeof a, x->figure, x->reported);
            fmt_figure(b, sizeof b, x->figure, x->recomputed);
            snprintf(q, sizeof q, "%.3f", x->ratio);
            const char *cells[] = {x->label, a, b, q, x->agrees ? "agrees" : "DIFFERS"};
            cli_table_row(t, 5, cells);
        }
        fputc('\n', out);
        cli_table_print(t, out, "");
        free(t);
        for (size_t i = 0; i < n; i++) {
            const mfu_report_comparison *x = mfu_report_comparison_at(r, i);
            if (!x->agrees)
                fprintf(out, "  ! %s: %s [%s]\n", mfu_figure_name(x->figure), x->explanation,
                        mfu_mismatch_name(x->cause));
        }
    }
    mfu_report_stat m = mfu_report_summary(r, MFU_RS_MFU);
    mfu_report_stat rm = mfu_report_summary(r, MFU_RS_REPORTED_MFU);
    if (m.n && (n || rm.n) && !c->mfu_from_log) { /* the log's own MFU is no recount */
        char a[32], b[32];
        fmt(a, sizeof a, m.median, F_PCT);
        fmt(b, sizeof b, c->peak_flops_per_s, F_PEAK);
        fprintf(out,
                "like for like: MFU %s under mfu's %s convention (%s attention) on the %s "
                "dense peak",
                a, mfu_convention_name(c->convention), att_word(c->attention), b);
        if (rm.n) {
            fmt(b, sizeof b, rm.median, F_PCT);
            fprintf(out, "; %s printed %s", c->stack.name[0] ? c->stack.framework : "the log", b);
        }
        fputc('\n', out);
    }
}

/* Whether the report has energy figures to show (report.h's contract; text and JSON alike). */
static bool energy_known(const mfu_energy *e)
{
    return e && (e->steps || e->tensor_steps || isfinite(e->tokens_per_kwh));
}

/* Energy beside utilization (src/figures/energy.c): printed only where the log or NVML gave an
 * energy, a power or a tensor activity. */
static void print_energy(FILE *out, const mfu_report *r)
{
    const mfu_energy *e = mfu_report_get_energy(r);
    if (!energy_known(e))
        return;
    fputc('\n', out);
    if (!e->steps && isfinite(e->tokens_per_kwh)) {
        char k[32];
        cli_fmt_count(k, sizeof k, e->tokens_per_kwh);
        fprintf(out, "energy     %s tokens per kWh (J per useful PFLOP needs the model's FLOPs)\n",
                k);
    }
    if (e->steps) {
        char j[32], k[32], p[32];
        cli_fmt_si(j, sizeof j, e->joules, "J");
        cli_fmt_si(p, sizeof p, e->joules_per_pflop, "J");
        fprintf(out, "energy     %s per useful PFLOP", p);
        if (isfinite(e->tokens_per_kwh)) {
            cli_fmt_count(k, sizeof k, e->tokens_per_kwh);
            fprintf(out, ", %s tokens per kWh", k);
        }
        fprintf(out, " (%s over %zu steady step%s, whole job", j, e->steps,
                e->steps == 1 ? "" : "s");
        if (e->power_steps)
            fprintf(out, "; %zu from power x step time", e->power_steps);
        fputs(")\n", out);
    }
    if (e->check != MFU_TENSOR_CHECK_NONE)
        fprintf(out, "tensor     %s (medians of %zu steady step%s)\n", e->check_text,
                e->tensor_steps, e->tensor_steps == 1 ? "" : "s");
}

void report_out_text(FILE *out, const report_origin *o, const mfu_report *r)
{
    print_context(out, o, r);
    print_summary(out, r);
    print_energy(out, r);
    print_comparisons(out, r);
    explain_out_text(out, mfu_report_analysis(r), mfu_report_analysis_unit(r));
    for (size_t i = 0; i < mfu_report_note_count(r); i++)
        fprintf(out, "note: %s\n", mfu_report_note_at(r, i));
    for (size_t i = 0; i < mfu_report_missing_count(r); i++) {
        const mfu_report_missing *m = mfu_report_missing_at(r, i);
        fprintf(out, "missing: %s: %s adds %s\n", m->what, m->option, m->needed_for);
    }
}

/* ---- JSON ----------------------------------------------------------------------------------- */

static json_t *num(double v)
{
    return cli_json_num(v);
}

static json_t *stat_json(mfu_report_stat s)
{
    json_t *o = json_object();
    cli_json_set(o, "median", num(s.median));
    cli_json_set(o, "mean", num(s.mean));
    cli_json_set(o, "p10", num(s.p10));
    cli_json_set(o, "p90", num(s.p90));
    cli_json_set(o, "n", json_integer((json_int_t)s.n));
    return o;
}

/* A JSON string of s (invalid UTF-8 repaired: cli_json_str). */
static json_t *jstr(const char *s)
{
    return cli_json_str(s);
}

static json_t *str_or_null(const char *s)
{
    return s && *s ? jstr(s) : json_null();
}

static json_t *context_json(const mfu_report *r)
{
    const mfu_report_context *c = mfu_report_get_context(r);
    json_t *o = json_object();
    json_t *s = json_object();
    cli_json_set(s, "name", str_or_null(c->stack.name));
    cli_json_set(s, "framework", str_or_null(c->stack.framework));
    cli_json_set(s, "convention",
                 c->stack.has_convention && c->stack.name[0]
                     ? cli_json_str(mfu_convention_name(c->stack.convention))
                     : json_null());
    cli_json_set(s, "attention",
                 c->stack.has_convention && c->stack.name[0]
                     ? cli_json_str(att_word(c->stack.attention))
                     : json_null());
    cli_json_set(s, "counts_recompute", json_boolean(c->stack.counts_recompute));
    cli_json_set(s, "counts_padding", json_boolean(c->stack.counts_padding));
    cli_json_set(s, "approximate", json_boolean(c->stack.approximate));
    cli_json_set(s, "figures", str_or_null(c->stack.figures));
    cli_json_set(s, "rule", str_or_null(c->stack.rule));
    cli_json_set(s, "flops_per_token", num(c->stack_flops_per_token));
    cli_json_set(s, "peak_flops", num(c->stack_peak_flops_per_s));
    cli_json_set(s, "peak_rule", str_or_null(c->stack_peak_rule));
    cli_json_set(o, "stack", s);

    json_t *m = json_object();
    cli_json_set(m, "known", json_boolean(c->has_model));
    cli_json_set(m, "name", str_or_null(c->model));
    cli_json_set(m, "convention", cli_json_str(mfu_convention_name(c->convention)));
    cli_json_set(m, "attention", c->has_model ? cli_json_str(att_word(c->attention)) : json_null());
    cli_json_set(m, "model_flops_per_token", num(c->model_flops_per_token));
    cli_json_set(m, "hardware_flops_per_token", num(c->hardware_flops_per_token));
    cli_json_set(o, "model", m);
    cli_json_set(o, "seq", c->seq > 0 ? json_integer((json_int_t)c->seq) : json_null());
    cli_json_set(o, "seq_source", cli_json_str(mfu_report_source_name(c->seq_source)));

    json_t *d = json_object();
    cli_json_set(d, "id", c->device ? cli_json_str(c->device->id) : json_null());
    cli_json_set(d, "name", str_or_null(c->device_name));
    cli_json_set(d, "source", cli_json_str(mfu_report_source_name(c->device_source)));
    cli_json_set(d, "dtype", cli_json_str(mfu_dtype_name(c->dtype)));
    cli_json_set(d, "peak_flops", num(c->peak_flops_per_s));
    cli_json_set(d, "peak_source", cli_json_str(mfu_report_source_name(c->peak_source)));
    cli_json_set(o, "device", d);
    cli_json_set(o, "devices", num(c->devices));
    cli_json_set(o, "devices_source", cli_json_str(mfu_report_source_name(c->devices_source)));
    cli_json_set(o, "tokens_per_step", num(c->tokens_per_step));
    cli_json_set(o, "tokens_source", cli_json_str(mfu_report_source_name(c->tokens_source)));
    cli_json_set(o, "real_token_fraction", num(c->real_fraction));
    cli_json_set(o, "implied_peak_flops", num(c->implied_peak_flops_per_s));
    cli_json_set(o, "implied_flops_per_token", num(c->implied_flops_per_token));
    cli_json_set(o, "mfu_from_log", json_boolean(c->mfu_from_log));
    cli_json_set(o, "flops_relative", json_boolean(c->flops_relative));
    cli_json_set(o, "context_breaks", json_integer((json_int_t)c->context_breaks));
    cli_json_set(o, "start_time_s",
                 c->start_time_s ? json_integer((json_int_t)c->start_time_s) : json_null());
    return o;
}

/* The series object of step i (col: the report's columns). */
static json_t *step_json(const mfu_report *r, const int64_t *steps, const double *const *col,
                         size_t i)
{
    json_t *o = json_object();
    cli_json_set(o, "step", json_integer((json_int_t)steps[i]));
    cli_json_set(o, "state",
                 cli_json_str(mfu_report_step_state_name(mfu_report_step_state_at(r, i))));
    for (size_t k = 0; k < MFU_RS_COUNT_; k++) {
        const char *name = mfu_report_series_name((mfu_report_series)k);
        /* the two figures a framework prints in TFLOP/s are given in TFLOP/s */
        if (k == MFU_RS_REPORTED_FLOPS_PER_S_PER_DEVICE) {
            cli_json_set(o, "reported_tflops_per_device", num(col[k][i] / 1e12));
            continue;
        }
        if (k == MFU_RS_STACK_FLOPS_PER_S_PER_DEVICE) {
            cli_json_set(o, "recomputed_tflops_per_device", num(col[k][i] / 1e12));
            continue;
        }
        cli_json_set(o, name, num(col[k][i]));
    }
    return o;
}

/* A real as jansson dumps it at JSON_REAL_PRECISION(10) (CLI_JSON_FLAGS): "%.10g", ".0" added
 * where neither '.' nor 'e' is there, the exponent without '+' or leading zeros. Its length
 * (no NUL counted), or 0 when it does not fit. */
static size_t real_text(char *buf, size_t n, double v)
{
    if (n < 32)
        return 0;
    size_t len = mfu__fmt_g(buf, v, 10); /* snprintf's "%.10g" bytes, exact digits */
    if (len + 3 >= n)
        return 0;
    if (!memchr(buf, '.', len) && !memchr(buf, 'e', len)) {
        buf[len++] = '.';
        buf[len++] = '0';
        buf[len] = 0;
    }
    char *start = memchr(buf, 'e', len);
    if (start) {
        start++;
        char *end = start + 1;
        if (*start == '-')
            start++;
        while (*end == '0')
            end++;
        if (end != start) {
            memmove(start, end, len - (size_t)(end - buf) + 1);
            len -= (size_t)(end - start);
        }
    }
    return len;
}

/* The fixed bytes of step_text's objects at one indent, made once per series: each member's
 * ",\n", indent and "\"name\": ", and the object's opening and closing. */
typedef struct step_layout {
    char open[96], key[MFU_RS_COUNT_][80], state[64], close[64];
    size_t open_len, key_len[MFU_RS_COUNT_], state_len, close_len;
} step_layout;

/* The name step_text writes for series k (FLOP/s per device in TFLOP/s under their own name). */
static const char *step_key(size_t k)
{
    if (k == MFU_RS_REPORTED_FLOPS_PER_S_PER_DEVICE)
        return "reported_tflops_per_device";
    if (k == MFU_RS_STACK_FLOPS_PER_S_PER_DEVICE)
        return "recomputed_tflops_per_device";
    return mfu_report_series_name((mfu_report_series)k);
}

/* *l for objects indented to ind spaces (members at ind + 2); false when a piece does not fit
 * (an indent beyond any depth the CLI nests to). */
static bool step_layout_init(step_layout *l, int ind)
{
    int w = snprintf(l->open, sizeof l->open, "{\n%*s\"step\": ", ind + 2, "");
    bool ok = w > 0 && (size_t)w < sizeof l->open;
    l->open_len = ok ? (size_t)w : 0;
    w = snprintf(l->state, sizeof l->state, ",\n%*s\"state\": \"", ind + 2, "");
    ok = ok && w > 0 && (size_t)w < sizeof l->state;
    l->state_len = ok ? (size_t)w : 0;
    for (size_t k = 0; ok && k < MFU_RS_COUNT_; k++) {
        w = snprintf(l->key[k], sizeof l->key[k], ",\n%*s\"%s\": ", ind + 2, "", step_key(k));
        ok = w > 0 && (size_t)w < sizeof l->key[k];
        l->key_len[k] = ok ? (size_t)w : 0;
    }
    w = snprintf(l->close, sizeof l->close, "\n%*s}", ind, "");
    ok = ok && w > 0 && (size_t)w < sizeof l->close;
    l->close_len = ok ? (size_t)w : 0;
    return ok;
}

/* Decimal digits of v into buf (room for 21): their count. */
static size_t i64_text(char *buf, int64_t v)
{
    char tmp[24];
    size_t n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t len = 0;
    if (v < 0)
        buf[len++] = '-';
    while (n)
        buf[len++] = tmp[--n];
    return len;
}

/* Step i's series object as step_json dumped at CLI_JSON_FLAGS and indented as l says, the
 * same bytes, written straight into buf (room for n): its length, 0 when it does not fit.
 * Names and state names are plain ASCII identifiers, which JSON writes as they are. */
static size_t step_text(char *buf, size_t n, const step_layout *l, const mfu_report *r,
                        const int64_t *steps, const double *const *col, size_t i)
{
    const char *state = mfu_report_step_state_name(mfu_report_step_state_at(r, i));
    size_t sl = strlen(state);
    size_t need = l->open_len + 21 + l->state_len + sl + 1 + l->close_len;
    for (size_t k = 0; k < MFU_RS_COUNT_; k++)
        need += l->key_len[k] + 32;
    if (need >= n)
        return 0;
    size_t len = 0;
    memcpy(buf, l->open, l->open_len);
    len = l->open_len;
    len += i64_text(buf + len, steps[i]);
    memcpy(buf + len, l->state, l->state_len);
    len += l->state_len;
    memcpy(buf + len, state, sl);
    len += sl;
    buf[len++] = '"';
    for (size_t k = 0; k < MFU_RS_COUNT_; k++) {
        double v = col[k][i];
        if (k == MFU_RS_REPORTED_FLOPS_PER_S_PER_DEVICE || k == MFU_RS_STACK_FLOPS_PER_S_PER_DEVICE)
            v /= 1e12;
        memcpy(buf + len, l->key[k], l->key_len[k]);
        len += l->key_len[k];
        if (!isfinite(v)) {
            memcpy(buf + len, "null", 4);
            len += 4;
        } else {
            size_t t = real_text(buf + len, n - len, v);
            if (!t)
                return 0;
            len += t;
        }
    }
    memcpy(buf + len, l->close, l->close_len);
    return len + l->close_len;
}

/* Whether the series names and step state names are plain identifiers ([a-z0-9_]): then
 * step_text writes them as JSON would. */
static bool plain_names(void)
{
    const char *names[MFU_RS_COUNT_ + 8];
    size_t m = 0;
    for (size_t k = 0; k < MFU_RS_COUNT_; k++)
        names[m++] = mfu_report_series_name((mfu_report_series)k);
    for (int st = 0; st <= (int)MFU_STEP_SETTLE && m < MFU__ARRAY_LEN(names); st++)
        names[m++] = mfu_report_step_state_name((mfu_report_step_state)st);
    for (size_t q = 0; q < m; q++)
        for (const char *c = names[q]; c && *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
                return false;
    return true;
}

static void report_columns(const mfu_report *r, const double **col)
{
    for (size_t k = 0; k < MFU_RS_COUNT_; k++)
        col[k] = mfu_report_column(r, (mfu_report_series)k);
}

/* Write text (a value jansson dumped at depth 0) as if dumped at depth: every line after the
 * first indented 2 × depth more (a dump's newlines are all its own: strings escape theirs). */
static void put_at_depth(FILE *out, const char *text, size_t len, int depth)
{
    size_t from = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n') {
            fwrite(text + from, 1, i + 1 - from, out);
            fprintf(out, "%*s", 2 * depth, "");
            from = i + 1;
        }
    fwrite(text + from, 1, len - from, out);
}

int report_out_json_write(FILE *out, const char *before, const report_origin *origin,
                          const mfu_report *r, bool series, int depth, bool *started)
{
    *started = false;
    json_t *o = report_out_json(origin, r);
    char *head = o && !cli_json_take_failures() ? json_dumps(o, CLI_JSON_FLAGS) : NULL;
    json_decref(o);
    size_t hl = head ? strlen(head) : 0;
    if (!head || hl < 2 || head[hl - 1] != '}') {
        free(head);
        cli_json_take_failures();
        return cli_failf("json", CLI_EXIT_FAIL,
                         "out of memory building the JSON output; nothing was written");
    }
    errno = 0;
    fputs(before, out); /* only once the head is built: a run that fails leaves no piece */
    *started = true;
    if (!series) {
        put_at_depth(out, head, hl, depth);
    } else {
        /* the object less its closing "\n}", then "series" as jansson would add it last: at
         * the members' depth, an array of one object per step at the depth below */
        put_at_depth(out, head, hl - 2, depth);
        fprintf(out, ",\n%*s\"series\": ", 2 * (depth + 1), "");
        size_t n = mfu_report_step_count(r);
        const int64_t *steps = mfu_report_steps(r);
        const double *col[MFU_RS_COUNT_];
        report_columns(r, col);
        if (n == 0)
            fputs("[]", out);
        else
            fputc('[', out);
        size_t cap = 4096;
        char *buf = malloc(cap);
        step_layout lay;
        memset(&lay, 0, sizeof lay);
        bool ok = buf != NULL;
        bool direct = plain_names() && step_layout_init(&lay, 2 * (depth + 2));
        /* the separator before each step object: ",\n" and its indent (none before the first) */
        char sep[80];
        int sw = snprintf(sep, sizeof sep, ",\n%*s", 2 * (depth + 2), "");
        size_t sep_len = sw > 0 && (size_t)sw < sizeof sep ? (size_t)sw : 0;
        direct = direct && sep_len > 0;
        for (size_t i = 0; ok && i < n; i++) {
            /* the bytes jansson would give, written directly (the object and its dump were
             * most of the time of a --json report); jansson where a step does not fit */
            size_t skip = i ? 0 : 1, pre = sep_len - skip;
            size_t dl = direct ? step_text(buf + pre, cap - pre, &lay, r, steps, col, i) : 0;
            if (dl) {
                memcpy(buf, sep + skip, pre);
                fwrite(buf, 1, pre + dl, out);
                continue;
            }
            json_t *e = step_json(r, steps, col, i);
            size_t need =
                e && !cli_json_take_failures() ? json_dumpb(e, buf, cap, CLI_JSON_FLAGS) : 0;
            if (need > cap) {
                char *nb = realloc(buf, need);
                ok = nb != NULL;
                if (ok) {
                    buf = nb;
                    cap = need;
                    need = json_dumpb(e, buf, cap, CLI_JSON_FLAGS);
                }
            }
            json_decref(e);
            ok = ok && need > 0;
            if (ok) {
                fprintf(out, "%s\n%*s", i ? "," : "", 2 * (depth + 2), "");
                put_at_depth(out, buf, need, depth + 2);
            }
        }
        free(buf);
        if (!ok) {
            free(head);
            cli_json_take_failures();
            return cli_failf("json", CLI_EXIT_FAIL,
                             "out of memory writing the JSON series; the output is cut short");
        }
        if (n)
            fprintf(out, "\n%*s]", 2 * (depth + 1), "");
        fprintf(out, "\n%*s}", 2 * depth, "");
    }
    free(head);
    if (ferror(out))
        return cli_failf("json", CLI_EXIT_FAIL, "writing the JSON output failed (%s)",
                         errno ? strerror(errno) : "write error");
    return CLI_EXIT_OK;
}

json_t *report_out_json(const report_origin *origin, const mfu_report *r)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    const mfu_report_warmup *w = mfu_report_get_warmup(r);
    const mfu_ingest_stats *st = origin->stats;
    if (st) {
        cli_json_set(o, "file", jstr(origin->path));
        cli_json_set(o, "format", jstr(st->format));
        cli_json_set(o, "format_detected", json_boolean(st->detected));
        json_t *l = json_object();
        cli_json_set(l, "read", json_integer(st->lines));
        cli_json_set(l, "used", json_integer(st->used));
        cli_json_set(l, "ignored", json_integer(st->ignored));
        cli_json_set(l, "skipped", json_integer(st->skipped));
        cli_json_set(l, "too_long", json_integer(st->too_long));
        cli_json_set(l, "merged", json_integer(st->merged));
        json_t *sk = json_array();
        size_t nk;
        const mfu_ingest_skip *k = named_skips(origin, &nk);
        for (size_t i = 0; sk && i < nk; i++) {
            json_t *e = json_object();
            cli_json_set(e, "line", json_integer(k[i].line));
            cli_json_set(e, "reason", jstr(k[i].reason));
            cli_json_append(sk, e);
        }
        cli_json_set(l, "skipped_lines", sk);
        cli_json_set(o, "lines", l);
    } else {
        cli_json_set(o, "run", jstr(origin->path));
        cli_json_set(o, "store", jstr(origin->store));
        cli_json_set(o, "file",
                     origin->source && origin->source[0] ? jstr(origin->source) : json_null());
        cli_json_set(o, "format", jstr(origin->format));
        cli_json_set(o, "format_detected", json_null());
        cli_json_set(o, "lines", json_null());
    }
    cli_json_set(o, "steps", json_integer((json_int_t)mfu_report_step_count(r)));
    cli_json_set(o, "steady_steps", json_integer((json_int_t)w->steady));
    json_t *wj = json_object();
    cli_json_set(wj, "checked", json_boolean(w->checked));
    cli_json_set(wj, "mid_run", json_boolean(w->mid_run));
    cli_json_set(wj, "steps", json_integer((json_int_t)w->steps));
    cli_json_set(wj, "first_step", w->steps ? json_integer(w->first_step) : json_null());
    cli_json_set(wj, "last_step", w->steps ? json_integer(w->last_step) : json_null());
    cli_json_set(wj, "slowdown", w->steps ? num(w->slowdown) : json_null());
    cli_json_set(wj, "artifacts", json_integer((json_int_t)w->artifacts));
    cli_json_set(wj, "impossible", json_integer((json_int_t)w->impossible));
    cli_json_set(wj, "unusable", json_integer((json_int_t)w->unusable));
    cli_json_set(o, "warmup", wj);
    cli_json_set(o, "context", context_json(r));

    json_t *sm = json_object();
    for (size_t k = 0; k < MFU_RS_COUNT_; k++) {
        mfu_report_series s = (mfu_report_series)k;
        if (s == MFU_RS_LOSS || s == MFU_RS_TOKENS)
            continue;
        const char *name = mfu_report_series_name(s);
        cli_json_set(sm, name, stat_json(mfu_report_summary(r, s)));
    }
    cli_json_set(o, "summary", sm);
    /* energy beside utilization: only where the log or NVML gave an energy, power or tensor
     * activity (src/figures/energy.c) */
    const mfu_energy *en = mfu_report_get_energy(r);
    if (energy_known(en)) {
        json_t *ej = json_object();
        cli_json_set(ej, "steps", json_integer((json_int_t)en->steps));
        cli_json_set(ej, "power_steps", json_integer((json_int_t)en->power_steps));
        cli_json_set(ej, "joules", num(en->joules));
        cli_json_set(ej, "useful_pflop", num(en->useful_pflop));
        cli_json_set(ej, "joules_per_pflop", num(en->joules_per_pflop));
        cli_json_set(ej, "tokens", num(en->tokens));
        cli_json_set(ej, "tokens_per_kwh", num(en->tokens_per_kwh));
        cli_json_set(ej, "tensor_steps", json_integer((json_int_t)en->tensor_steps));
        cli_json_set(ej, "tensor_active", num(en->tensor_active));
        cli_json_set(ej, "tensor_mfu", num(en->mfu));
        cli_json_set(ej, "tensor_check", cli_json_str(mfu_tensor_check_name(en->check)));
        cli_json_set(ej, "tensor_check_text", str_or_null(en->check_text));
        cli_json_set(o, "energy", ej);
    }

    json_t *cs = json_array();
    for (size_t i = 0; i < mfu_report_comparison_count(r); i++) {
        const mfu_report_comparison *x = mfu_report_comparison_at(r, i);
        json_t *c = json_object();
        cli_json_set(c, "figure", cli_json_str(mfu_figure_name(x->figure)));
        cli_json_set(c, "label", jstr(x->label));
        cli_json_set(c, "reported", num(x->reported));
        cli_json_set(c, "recomputed", num(x->recomputed));
        cli_json_set(c, "ratio", num(x->ratio));
        cli_json_set(c, "steps", json_integer((json_int_t)x->steps));
        cli_json_set(c, "agrees", json_boolean(x->agrees));
        cli_json_set(c, "cause", cli_json_str(mfu_mismatch_name(x->cause)));
        cli_json_set(c, "explanation", str_or_null(x->explanation));
        cli_json_set(c, "peak_flops", num(x->peak_flops_per_s));
        cli_json_append(cs, c);
    }
    cli_json_set(o, "comparisons", cs);

    json_t *ms = json_array();
    for (size_t i = 0; i < mfu_report_missing_count(r); i++) {
        const mfu_report_missing *m = mfu_report_missing_at(r, i);
        json_t *x = json_object();
        cli_json_set(x, "what", cli_json_str(m->what));
        cli_json_set(x, "option", cli_json_str(m->option));
        cli_json_set(x, "needed_for", cli_json_str(m->needed_for));
        cli_json_append(ms, x);
    }
    cli_json_set(o, "missing", ms);
    json_t *ns = json_array();
    for (size_t i = 0; i < mfu_report_note_count(r); i++)
        cli_json_append(ns, jstr(mfu_report_note_at(r, i)));
    cli_json_set(o, "notes", ns);
    const mfu_analysis *an = mfu_report_analysis(r);
    if (an) {
        if (!explain_out_json(o, an, mfu_report_analysis_unit(r))) {
            json_decref(o);
            return NULL;
        }
    } else {
        cli_json_set(o, "segments", json_array());
        cli_json_set(o, "decomposition", json_array());
        cli_json_set(o, "findings", json_array());
        cli_json_set(o, "invariants", json_array());
        cli_json_set(o, "analysis", json_null());
    }
    return o;
}
