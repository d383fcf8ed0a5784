/*
 * report_out.c - `mfu report` output. Text: one block per run, labels with units, the
 * conventions named, only rows that have values. JSON: stable keys (docs/cli.md), base units
 * (seconds, FLOP/s, fractions) except the reported_tflops_per_device key, which is in TFLOP/s
 * as frameworks print it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/explain_out.h"
#include "cli/flops_out.h"
#include "cli/report_out.h"
#include "util/util.h"

static const char *src_word(mfu_report_source s)
{
    return s == MFU_SRC_INPUT ? "given" : s == MFU_SRC_LOG ? "from the log" : "unknown";
}

static const char *att_word(mfu_attention a)
{
    return a == MFU_ATTENTION_CAUSAL ? "causal" : a == MFU_ATTENTION_FULL ? "full" : "default";
}

typedef enum { F_COUNT, F_RATE, F_TFLOPS, F_PCT, F_SECONDS } fmt_kind;

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
    case F_TFLOPS: snprintf(buf, n, "%.1f", v / 1e12); break;
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
        fprintf(out, "; too few steps with a throughput to look for a warm-up (fewer than 4)");
    else if (w->steps == 0)
        fprintf(out, "; no warm-up found");
    else if (w->steps == 1)
        fprintf(out, "; warm-up excluded: step %lld (%.0f%% slower)", (long long)w->first_step,
                -100 * w->slowdown);
    else
        fprintf(out, "; warm-up excluded: steps %lld-%lld (%zu steps, %.0f%% slower)",
                (long long)w->first_step, (long long)w->last_step, w->steps, -100 * w->slowdown);
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
        fmt(a, sizeof a, c->peak_flops_per_s, F_TFLOPS);
        if (c->device)
            fprintf(out, "device     %s (%s), %s dense peak %s TFLOP/s%s", c->device->id,
                    c->device->name, mfu_dtype_name(c->dtype), a,
                    c->peak_source == MFU_SRC_INPUT ? " (--peak-tflops)" : "");
        else
            fprintf(out, "device     peak %s TFLOP/s (--peak-tflops)", a);
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
        {MFU_RS_MODEL_FLOPS_PER_S_PER_DEVICE, "model TFLOP/s per device", F_TFLOPS},
        {MFU_RS_HARDWARE_FLOPS_PER_S_PER_DEVICE, "hardware TFLOP/s per device", F_TFLOPS},
        {MFU_RS_MFU, "MFU", F_PCT},
        {MFU_RS_HFU, "HFU", F_PCT},
        {MFU_RS_REPORTED_TOKENS_PER_S, "printed tokens/s (whole job)", F_RATE},
        {MFU_RS_REPORTED_FLOPS_PER_S_PER_DEVICE, "printed TFLOP/s per device", F_TFLOPS},
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
            same_hw)
            continue;
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
        char c[4][32];
        fmt(c[0], sizeof c[0], s.median, rows[i].k);
        fmt(c[1], sizeof c[1], s.mean, rows[i].k);
        fmt(c[2], sizeof c[2], s.p10, rows[i].k);
        fmt(c[3], sizeof c[3], s.p90, rows[i].k);
        const char *cells[] = {rows[i].label, c[0], c[1], c[2], c[3]};
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
    fmt(buf, n, v, f == MFU_FIGURE_MFU ? F_PCT : f == MFU_FIGURE_FLOPS_PER_S ? F_TFLOPS : F_RATE);
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
    if (m.n && (n || rm.n)) {
        char a[32], b[32];
        fmt(a, sizeof a, m.median, F_PCT);
        fmt(b, sizeof b, c->peak_flops_per_s, F_TFLOPS);
        fprintf(out,
                "like for like: MFU %s under mfu's %s convention (%s attention) on the %s "
                "TFLOP/s dense peak",
                a, mfu_convention_name(c->convention), att_word(c->attention), b);
        if (rm.n) {
            fmt(b, sizeof b, rm.median, F_PCT);
            fprintf(out, "; %s printed %s", c->stack.name[0] ? c->stack.framework : "the log", b);
        }
        fputc('\n', out);
    }
}

void report_out_text(FILE *out, const report_origin *o, const mfu_report *r)
{
    print_context(out, o, r);
    print_summary(out, r);
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
    json_object_set_new(o, "median", num(s.median));
    json_object_set_new(o, "mean", num(s.mean));
    json_object_set_new(o, "p10", num(s.p10));
    json_object_set_new(o, "p90", num(s.p90));
    json_object_set_new(o, "n", json_integer((json_int_t)s.n));
    return o;
}

/* A JSON string of s; bytes that are not valid UTF-8 (a log can hold anything) become '?'. */
static json_t *jstr(const char *s)
{
    json_t *v = json_string(s);
    if (v)
        return v;
    size_t n = strlen(s);
    char *t = malloc(n + 1);
    if (!t)
        return json_null();
    for (size_t i = 0; i <= n; i++)
        t[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
    v = json_string(t);
    free(t);
    return v ? v : json_null();
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
    json_object_set_new(s, "name", str_or_null(c->stack.name));
    json_object_set_new(s, "framework", str_or_null(c->stack.framework));
    json_object_set_new(s, "convention",
                        c->stack.has_convention && c->stack.name[0]
                            ? json_string(mfu_convention_name(c->stack.convention))
                            : json_null());
    json_object_set_new(s, "attention",
                        c->stack.has_convention && c->stack.name[0]
                            ? json_string(att_word(c->stack.attention))
                            : json_null());
    json_object_set_new(s, "counts_recompute", json_boolean(c->stack.counts_recompute));
    json_object_set_new(s, "counts_padding", json_boolean(c->stack.counts_padding));
    json_object_set_new(s, "approximate", json_boolean(c->stack.approximate));
    json_object_set_new(s, "figures", str_or_null(c->stack.figures));
    json_object_set_new(s, "rule", str_or_null(c->stack.rule));
    json_object_set_new(s, "flops_per_token", num(c->stack_flops_per_token));
    json_object_set_new(s, "peak_flops", num(c->stack_peak_flops_per_s));
    json_object_set_new(s, "peak_rule", str_or_null(c->stack_peak_rule));
    json_object_set_new(o, "stack", s);

    json_t *m = json_object();
    json_object_set_new(m, "known", json_boolean(c->has_model));
    json_object_set_new(m, "name", str_or_null(c->model));
    json_object_set_new(m, "convention", json_string(mfu_convention_name(c->convention)));
    json_object_set_new(m, "attention",
                        c->has_model ? json_string(att_word(c->attention)) : json_null());
    json_object_set_new(m, "model_flops_per_token", num(c->model_flops_per_token));
    json_object_set_new(m, "hardware_flops_per_token", num(c->hardware_flops_per_token));
    json_object_set_new(o, "model", m);
    json_object_set_new(o, "seq", c->seq > 0 ? json_integer((json_int_t)c->seq) : json_null());
    json_object_set_new(o, "seq_source", json_string(mfu_report_source_name(c->seq_source)));

    json_t *d = json_object();
    json_object_set_new(d, "id", c->device ? json_string(c->device->id) : json_null());
    json_object_set_new(d, "name", str_or_null(c->device_name));
    json_object_set_new(d, "source", json_string(mfu_report_source_name(c->device_source)));
    json_object_set_new(d, "dtype", json_string(mfu_dtype_name(c->dtype)));
    json_object_set_new(d, "peak_flops", num(c->peak_flops_per_s));
    json_object_set_new(d, "peak_source", json_string(mfu_report_source_name(c->peak_source)));
    json_object_set_new(o, "device", d);
    json_object_set_new(o, "devices", num(c->devices));
    json_object_set_new(o, "devices_source",
                        json_string(mfu_report_source_name(c->devices_source)));
    json_object_set_new(o, "tokens_per_step", num(c->tokens_per_step));
    json_object_set_new(o, "tokens_source", json_string(mfu_report_source_name(c->tokens_source)));
    json_object_set_new(o, "real_token_fraction", num(c->real_fraction));
    json_object_set_new(o, "implied_peak_flops", num(c->implied_peak_flops_per_s));
    json_object_set_new(o, "implied_flops_per_token", num(c->implied_flops_per_token));
    json_object_set_new(o, "start_time_s",
                        c->start_time_s ? json_integer((json_int_t)c->start_time_s) : json_null());
    return o;
}

static json_t *series_json(const mfu_report *r)
{
    json_t *a = json_array();
    const int64_t *steps = mfu_report_steps(r);
    const double *col[MFU_RS_COUNT_];
    for (size_t k = 0; k < MFU_RS_COUNT_; k++)
        col[k] = mfu_report_column(r, (mfu_report_series)k);
    for (size_t i = 0; i < mfu_report_step_count(r); i++) {
        json_t *o = json_object();
        json_object_set_new(o, "step", json_integer((json_int_t)steps[i]));
        json_object_set_new(
            o, "state", json_string(mfu_report_step_state_name(mfu_report_step_state_at(r, i))));
        for (size_t k = 0; k < MFU_RS_COUNT_; k++) {
            const char *name = mfu_report_series_name((mfu_report_series)k);
            /* the two figures a framework prints in TFLOP/s are given in TFLOP/s */
            if (k == MFU_RS_REPORTED_FLOPS_PER_S_PER_DEVICE) {
                json_object_set_new(o, "reported_tflops_per_device", num(col[k][i] / 1e12));
                continue;
            }
            if (k == MFU_RS_STACK_FLOPS_PER_S_PER_DEVICE) {
                json_object_set_new(o, "recomputed_tflops_per_device", num(col[k][i] / 1e12));
                continue;
            }
            json_object_set_new(o, name, num(col[k][i]));
        }
        json_array_append_new(a, o);
    }
    return a;
}

json_t *report_out_json(const report_origin *origin, const mfu_report *r, bool series)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    const mfu_report_warmup *w = mfu_report_get_warmup(r);
    const mfu_ingest_stats *st = origin->stats;
    if (st) {
        json_object_set_new(o, "file", jstr(origin->path));
        json_object_set_new(o, "format", jstr(st->format));
        json_object_set_new(o, "format_detected", json_boolean(st->detected));
        json_t *l = json_object();
        json_object_set_new(l, "read", json_integer(st->lines));
        json_object_set_new(l, "used", json_integer(st->used));
        json_object_set_new(l, "ignored", json_integer(st->ignored));
        json_object_set_new(l, "skipped", json_integer(st->skipped));
        json_object_set_new(l, "too_long", json_integer(st->too_long));
        json_object_set_new(l, "merged", json_integer(st->merged));
        json_t *sk = json_array();
        size_t nk;
        const mfu_ingest_skip *k = named_skips(origin, &nk);
        for (size_t i = 0; sk && i < nk; i++) {
            json_t *e = json_object();
            json_object_set_new(e, "line", json_integer(k[i].line));
            json_object_set_new(e, "reason", jstr(k[i].reason));
            json_array_append_new(sk, e);
        }
        json_object_set_new(l, "skipped_lines", sk);
        json_object_set_new(o, "lines", l);
    } else {
        json_object_set_new(o, "run", jstr(origin->path));
        json_object_set_new(o, "store", jstr(origin->store));
        json_object_set_new(
            o, "file", origin->source && origin->source[0] ? jstr(origin->source) : json_null());
        json_object_set_new(o, "format", jstr(origin->format));
        json_object_set_new(o, "format_detected", json_null());
        json_object_set_new(o, "lines", json_null());
    }
    json_object_set_new(o, "steps", json_integer((json_int_t)mfu_report_step_count(r)));
    json_object_set_new(o, "steady_steps", json_integer((json_int_t)w->steady));
    json_t *wj = json_object();
    json_object_set_new(wj, "checked", json_boolean(w->checked));
    json_object_set_new(wj, "mid_run", json_boolean(w->mid_run));
    json_object_set_new(wj, "steps", json_integer((json_int_t)w->steps));
    json_object_set_new(wj, "first_step", w->steps ? json_integer(w->first_step) : json_null());
    json_object_set_new(wj, "last_step", w->steps ? json_integer(w->last_step) : json_null());
    json_object_set_new(wj, "slowdown", w->steps ? num(w->slowdown) : json_null());
    json_object_set_new(wj, "artifacts", json_integer((json_int_t)w->artifacts));
    json_object_set_new(wj, "impossible", json_integer((json_int_t)w->impossible));
    json_object_set_new(wj, "unusable", json_integer((json_int_t)w->unusable));
    json_object_set_new(o, "warmup", wj);
    json_object_set_new(o, "context", context_json(r));

    json_t *sm = json_object();
    for (size_t k = 0; k < MFU_RS_COUNT_; k++) {
        mfu_report_series s = (mfu_report_series)k;
        if (s == MFU_RS_LOSS || s == MFU_RS_TOKENS)
            continue;
        const char *name = mfu_report_series_name(s);
        json_object_set_new(sm, name, stat_json(mfu_report_summary(r, s)));
    }
    json_object_set_new(o, "summary", sm);

    json_t *cs = json_array();
    for (size_t i = 0; i < mfu_report_comparison_count(r); i++) {
        const mfu_report_comparison *x = mfu_report_comparison_at(r, i);
        json_t *c = json_object();
        json_object_set_new(c, "figure", json_string(mfu_figure_name(x->figure)));
        json_object_set_new(c, "label", jstr(x->label));
        json_object_set_new(c, "reported", num(x->reported));
        json_object_set_new(c, "recomputed", num(x->recomputed));
        json_object_set_new(c, "ratio", num(x->ratio));
        json_object_set_new(c, "steps", json_integer((json_int_t)x->steps));
        json_object_set_new(c, "agrees", json_boolean(x->agrees));
        json_object_set_new(c, "cause", json_string(mfu_mismatch_name(x->cause)));
        json_object_set_new(c, "explanation", str_or_null(x->explanation));
        json_object_set_new(c, "peak_flops", num(x->peak_flops_per_s));
        json_array_append_new(cs, c);
    }
    json_object_set_new(o, "comparisons", cs);

    json_t *ms = json_array();
    for (size_t i = 0; i < mfu_report_missing_count(r); i++) {
        const mfu_report_missing *m = mfu_report_missing_at(r, i);
        json_t *x = json_object();
        json_object_set_new(x, "what", json_string(m->what));
        json_object_set_new(x, "option", json_string(m->option));
        json_object_set_new(x, "needed_for", json_string(m->needed_for));
        json_array_append_new(ms, x);
    }
    json_object_set_new(o, "missing", ms);
    json_t *ns = json_array();
    for (size_t i = 0; i < mfu_report_note_count(r); i++)
        json_array_append_new(ns, jstr(mfu_report_note_at(r, i)));
    json_object_set_new(o, "notes", ns);
    const mfu_analysis *an = mfu_report_analysis(r);
    if (an) {
        if (!explain_out_json(o, an, mfu_report_analysis_unit(r))) {
            json_decref(o);
            return NULL;
        }
    } else {
        json_object_set_new(o, "segments", json_array());
        json_object_set_new(o, "decomposition", json_array());
        json_object_set_new(o, "findings", json_array());
        json_object_set_new(o, "invariants", json_array());
        json_object_set_new(o, "analysis", json_null());
    }
    if (series)
        json_object_set_new(o, "series", series_json(r));
    return o;
}
