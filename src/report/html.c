/*
 * html.c - mfu_report_html(): one self-contained HTML page for one or more reports.
 *
 * Per run: a context card (framework, model, device, job, steady steps) with the key figures
 * (MFU, tokens/s, HFU, typical step time, each with its interval), MFU and tokens/s over steps
 * on aligned x axes (svg.h: same width and x domain put a step at the same pixel in both) with
 * segment boundaries dashed and findings marked, the loss on the same axis when the log has
 * one, the segments table, each boundary's sentence with its waterfall and terms (interval,
 * share, both verdicts), the step-time histogram of the steady steps, the findings with
 * evidence and next step, the framework's figures beside mfu's recomputation, expectations,
 * notes.
 *
 * Self-contained: inline CSS, inline SVG, no script, no external font, image or link; the only
 * URL is the SVG namespace. Every text that comes from a log, a file name or a finding is
 * escaped (& < > " ', control characters -> '?'). Deterministic: no timestamp.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_trace.h"
#include "report/internal.h"
#include "report/svg.h"
#include "util/util.h"

/* Largest page mfu_report_html writes. */
#define HTML_MAX_BYTES (256u << 20)
/* Width of the charts on aligned axes (pixels; the page scales them down on narrow screens). */
#define CHART_W 960
#define CHART_H 230

/* ---- output: svg.h's bounded buffer, at most HTML_MAX_BYTES -------------------------------- */

typedef mfu__rbuf hb;

/* An SVG string from svg.c (already escaped): appended and freed; a note when NULL. */
static void hb_svg(hb *b, char *svg)
{
    if (svg)
        mfu__rbuf_puts(b, svg);
    else
        mfu__rbuf_puts(b, "<p class=\"muted\">(chart unavailable)</p>");
    free(svg);
}

/* ---- number formats --------------------------------------------------------------------- */

static void si(char *buf, size_t n, double v)
{
    if (!isfinite(v))
        snprintf(buf, n, "–");
    else
        mfu__fmt_si_g(buf, n, v, "", 4);
}

static void pct(char *buf, size_t n, double frac, int digits)
{
    if (!isfinite(frac))
        snprintf(buf, n, "–");
    else
        snprintf(buf, n, "%.*f %%", digits, 100 * frac);
}

/* "+12.1 %" with a real minus sign */
static void spct(char *buf, size_t n, double frac)
{
    if (!isfinite(frac))
        snprintf(buf, n, "–");
    else if (fabs(frac) < 0.00005)
        snprintf(buf, n, "0 %%");
    else
        snprintf(buf, n, "%s%.*f %%", frac < 0 ? "−" : "+", fabs(frac) < 0.1 ? 2 : 1,
                 fabs(100 * frac));
}

/* ---- the page --------------------------------------------------------------------------- */

static const char CSS[] =
    ":root{--fg:#1c2833;--muted:#5d6d7e;--line:#d5dbdb;--bg:#f4f6f7;--card:#fff;"
    "--accent:#1f618d;--info:#2e86c1;--warning:#b9770e;--error:#c0392b;--ok:#1e8449}"
    "*{box-sizing:border-box}"
    "body{margin:0;background:var(--bg);color:var(--fg);"
    "font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}"
    "main{max-width:1040px;margin:0 auto;padding:24px 20px 48px}"
    "h1{font-size:22px;margin:0 0 4px}h1 small{font-weight:400;color:var(--muted);font-size:14px}"
    "h2{font-size:18px;margin:0 0 4px;word-break:break-all}"
    "h3{font-size:15px;margin:28px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}"
    ".card{background:var(--card);border:1px solid var(--line);border-radius:8px;"
    "padding:16px 18px;margin:16px 0}"
    ".run{margin-top:28px}"
    ".muted{color:var(--muted)}"
    "dl.ctx{display:grid;grid-template-columns:110px 1fr;gap:3px 12px;margin:12px 0 0}"
    "dl.ctx dt{color:var(--muted)}dl.ctx dd{margin:0}"
    ".tiles{display:flex;flex-wrap:wrap;gap:10px;margin-top:14px}"
    ".tile{flex:1 1 180px;border:1px solid var(--line);border-radius:6px;padding:8px 12px;"
    "background:#fbfcfc}"
    ".tile b{display:block;font-size:21px;font-weight:600;color:var(--accent)}"
    ".tile span{color:var(--muted);font-size:12px}"
    "svg{max-width:100%;height:auto;display:block;margin:6px 0}"
    ".charts{background:var(--card);border:1px solid var(--line);border-radius:8px;"
    "padding:6px 8px}"
    "table{border-collapse:collapse;width:100%;background:var(--card);font-size:13px;"
    "border:1px solid var(--line)}"
    "th,td{padding:5px 8px;border-bottom:1px solid #eaeded;text-align:left;vertical-align:top}"
    "th{background:#eef2f3;font-weight:600}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".boundary{background:var(--card);border:1px solid var(--line);border-radius:8px;"
    "padding:12px 14px;margin:12px 0}"
    ".sentence{font-size:15px;font-weight:600;margin:0 0 6px}"
    ".badge{display:inline-block;border-radius:10px;padding:1px 8px;font-size:12px;"
    "font-weight:600;color:#fff}"
    ".sev-info{background:var(--info)}.sev-warning{background:var(--warning)}"
    ".sev-error{background:var(--error)}.ok{background:var(--ok)}.bad{background:var(--error)}"
    ".yes{color:var(--ok);font-weight:600}.no{color:var(--warning);font-weight:600}"
    "ul.findings{list-style:none;padding:0;margin:0}"
    "ul.findings li{background:var(--card);border:1px solid var(--line);border-left:4px solid "
    "var(--info);border-radius:6px;padding:10px 14px;margin:10px 0}"
    "ul.findings li.sev-warning{border-left-color:var(--warning);background:var(--card)}"
    "ul.findings li.sev-error{border-left-color:var(--error);background:var(--card)}"
    "ul.findings li.sev-info{background:var(--card)}"
    ".kind{font-weight:600;margin:0 6px}.steps{color:var(--muted);font-size:12px}"
    ".summary{margin:4px 0}.next{margin:4px 0 0;color:#145a32}"
    ".chips{margin:4px 0}.chip{display:inline-block;background:#eef2f3;border-radius:4px;"
    "padding:0 6px;margin:2px 4px 2px 0;font-size:12px;font-variant-numeric:tabular-nums}"
    ".legend{font-size:12px;color:var(--muted);margin:2px 8px 6px}"
    ".split{display:grid;grid-template-columns:minmax(0,430px) minmax(0,1fr);gap:14px;"
    "align-items:start}"
    ".split table{font-size:12.5px}.split th,.split td{padding:4px 6px}"
    "@media (max-width:760px){.split{grid-template-columns:1fr}}"
    "footer{margin-top:36px;color:var(--muted);font-size:12px}";

static const char *src_word(mfu_report_source s)
{
    return s == MFU_SRC_INPUT ? "given" : s == MFU_SRC_LOG ? "from the log" : "unknown";
}

static void tile(hb *b, const char *label, const char *value, const char *sub)
{
    mfu__rbuf_puts(b, "<div class=\"tile\"><span>");
    mfu__rbuf_esc(b, label);
    mfu__rbuf_puts(b, "</span><b>");
    mfu__rbuf_esc(b, value);
    mfu__rbuf_puts(b, "</b><span>");
    mfu__rbuf_esc(b, sub);
    mfu__rbuf_puts(b, "</span></div>");
}

static void dd_row(hb *b, const char *k, const char *v)
{
    mfu__rbuf_puts(b, "<dt>");
    mfu__rbuf_esc(b, k);
    mfu__rbuf_puts(b, "</dt><dd>");
    mfu__rbuf_esc(b, v);
    mfu__rbuf_puts(b, "</dd>");
}

static void context_card(hb *b, const mfu_report_html_run *run)
{
    const mfu_report *r = run->report;
    const mfu_report_context *c = mfu_report_get_context(r);
    const mfu_report_warmup *w = mfu_report_get_warmup(r);
    const mfu_analysis *a = mfu_report_analysis(r);
    char v[600], x[64], y[64];
    mfu__rbuf_puts(b, "<header class=\"card\"><h2>");
    mfu__rbuf_esc(b, run->name ? run->name : "run");
    mfu__rbuf_puts(b, "</h2>");
    if (run->detail && *run->detail) {
        mfu__rbuf_puts(b, "<div class=\"muted\">");
        mfu__rbuf_esc(b, run->detail);
        mfu__rbuf_puts(b, "</div>");
    }
    mfu__rbuf_puts(b, "<dl class=\"ctx\">");
    if (c->stack.name[0]) {
        snprintf(v, sizeof v, "%s", c->stack.framework);
        if (c->stack.has_convention)
            mfu__appendf(
                v, sizeof v, ": counts FLOPs as %s (%s attention)",
                mfu_convention_name(c->stack.convention),
                c->stack.convention == MFU_CONV_6N ? "no" : mfu_attention_name(c->stack.attention));
        if (c->stack_peak_rule[0])
            mfu__appendf(v, sizeof v, "; peak: %s", c->stack_peak_rule);
        if (c->stack.rule[0])
            mfu__appendf(v, sizeof v, "; %s", c->stack.rule);
        dd_row(b, "framework", v);
    }
    if (c->has_model) {
        si(x, sizeof x, c->model_flops_per_token);
        snprintf(v, sizeof v, "%s, sequence %lld (%s): %sFLOP per token (%s convention)",
                 c->model[0] ? c->model : "from flags", (long long)c->seq, src_word(c->seq_source),
                 x, mfu_convention_name(c->convention));
    } else if (c->mfu_from_log) {
        snprintf(v, sizeof v,
                 "not given: MFU and FLOPs are %s's own, from the log (give --model for mfu's "
                 "count)",
                 c->stack.name[0] ? c->stack.framework : "the framework");
    } else {
        snprintf(v, sizeof v, "unknown: no FLOPs, MFU or HFU (give --model and --seq)");
    }
    dd_row(b, "model", v);
    if (isfinite(c->peak_flops_per_s)) {
        mfu__fmt_si_digits(x, sizeof x, c->peak_flops_per_s, "FLOP/s", 4);
        snprintf(v, sizeof v, "%s, %s dense peak %s%s", c->device ? c->device->name : "peak",
                 mfu_dtype_name(c->dtype), x,
                 c->peak_source == MFU_SRC_INPUT ? " (--peak-tflops)" : "");
    } else {
        snprintf(v, sizeof v, "%s", c->device_name[0] ? c->device_name : "unknown (no peak)");
    }
    dd_row(b, "device", v);
    v[0] = '\0';
    if (isfinite(c->devices))
        mfu__appendf(v, sizeof v, "%.0f device%s (%s)", c->devices, c->devices == 1 ? "" : "s",
                     src_word(c->devices_source));
    if (isfinite(c->tokens_per_step)) {
        si(x, sizeof x, c->tokens_per_step);
        mfu__appendf(v, sizeof v, "%s%s tokens per step (%s)", v[0] ? ", " : "", x,
                     src_word(c->tokens_source));
    }
    if (v[0])
        dd_row(b, "job", v);
    snprintf(v, sizeof v, "%zu of %zu steps", w->steady, mfu_report_step_count(r));
    if (w->steps == 1)
        mfu__appendf(v, sizeof v, "; warm-up step %lld excluded (%.3g× the steady step time)",
                     (long long)w->first_step, 1 / (1 + w->slowdown));
    else if (w->steps)
        mfu__appendf(v, sizeof v, "; warm-up %lld–%lld excluded (%.3g× the steady step time)",
                     (long long)w->first_step, (long long)w->last_step, 1 / (1 + w->slowdown));
    if (w->artifacts)
        mfu__appendf(v, sizeof v, "; %zu timing artifact%s excluded", w->artifacts,
                     w->artifacts == 1 ? "" : "s");
    dd_row(b, "steady", v);
    mfu__rbuf_puts(b, "</dl><div class=\"tiles\">");
    /* the headline: the median of the steady steps, the same number as in the text and JSON
     * report, the dashboard and /metrics; its interval is the analysis's of the same median */
    const mfu_level *L = a ? mfu_analysis_steady(a) : NULL;
    bool lev = L && L->steps > 0;
    mfu_report_stat sm = mfu_report_summary(r, MFU_RS_MFU);
    mfu_report_stat st = mfu_report_summary(r, MFU_RS_TOKENS_PER_S);
    mfu_report_stat sd = mfu_report_summary(r, MFU_RS_TOKENS_PER_S_PER_DEVICE);
    mfu_report_stat sh = mfu_report_summary(r, MFU_RS_HFU);
    mfu_report_stat stt = mfu_report_summary(r, MFU_RS_STEP_TIME_S);
    if (sm.n) {
        pct(x, sizeof x, sm.median, 2);
        if (lev && isfinite(L->mfu.lo) && L->mfu.hi > 1)
            snprintf(v, sizeof v,
                     "median of %zu steady steps; interval not meaningful (reaches "
                     "%.0f %%)",
                     sm.n, 100 * L->mfu.hi);
        else if (lev && isfinite(L->mfu.lo))
            snprintf(v, sizeof v, "median of %zu steady steps; 95 %%: %.2f – %.2f %%", sm.n,
                     100 * L->mfu.lo, 100 * L->mfu.hi);
        else
            snprintf(v, sizeof v, "median of %zu steady steps", sm.n);
        if (c->mfu_from_log)
            mfu__appendf(v, sizeof v, "; %s's own figure, from the log",
                         c->stack.name[0] ? c->stack.framework : "the framework");
        tile(b, "MFU", x, v);
    } else {
        tile(b, "MFU", "–", "needs a model and a device");
    }
    const char *unit = mfu_report_analysis_unit(r);
    bool per_dev = !st.n || (unit && strcmp(unit, "tokens per device") == 0);
    mfu_report_stat rt = per_dev ? sd : st;
    if (rt.n) {
        si(x, sizeof x, rt.median);
        if (lev && isfinite(L->tokens_per_s.lo)) {
            char lo[32], hi[32];
            si(lo, sizeof lo, L->tokens_per_s.lo);
            si(hi, sizeof hi, L->tokens_per_s.hi);
            snprintf(v, sizeof v, "median; 95 %%: %s – %s", lo, hi);
        } else {
            snprintf(v, sizeof v, "median of the steady steps");
        }
        tile(b, per_dev ? "tokens/s per device" : "tokens/s", x, v);
    } else if (lev && unit && strcmp(unit, "steps") == 0) {
        snprintf(x, sizeof x, "%.4g", L->tokens_per_s.value);
        tile(b, "steps/s", x, "median (no tokens per step)");
    }
    mfu_report_stat sf = mfu_report_summary(r, MFU_RS_MODEL_FLOPS_PER_S_PER_DEVICE);
    if (sf.n) { /* SI-scaled: "312 TFLOP/s" on a GPU, "45.6 GFLOP/s" on a CPU */
        mfu__fmt_si(x, sizeof x, sf.median, "FLOP/s");
        char lo[32], hi[32];
        mfu__fmt_si(lo, sizeof lo, sf.p10, "FLOP/s");
        mfu__fmt_si(hi, sizeof hi, sf.p90, "FLOP/s");
        snprintf(v, sizeof v, "median; p10 %s, p90 %s%s", lo, hi,
                 c->mfu_from_log ? "; the framework's own figure" : "");
        tile(b, "model FLOP/s per device", x, v);
    }
    if (sh.n && sh.median != sm.median) {
        pct(x, sizeof x, sh.median, 2);
        tile(b, "HFU", x, "median; recomputation and padding counted");
    }
    if (stt.n) {
        snprintf(x, sizeof x, "%.4g s", stt.median);
        snprintf(y, sizeof y, "p10 %.4g s, p90 %.4g s", stt.p10, stt.p90);
        tile(b, "typical step", x, y);
    }
    if (lev && L->total_time_s > 0 && L->stall_time_s >= 0.05 * L->total_time_s) {
        si(x, sizeof x, L->total_tokens_per_s);
        snprintf(v, sizeof v, "total tokens ÷ total time; stalls cost %.0f %% of the time (%.4g s)",
                 100 * L->stall_time_s / L->total_time_s, L->stall_time_s);
        if (isfinite(L->total_mfu))
            mfu__appendf(v, sizeof v, "; MFU %.2f %%", 100 * L->total_mfu);
        tile(b, "total, stalls included", x, v);
    }
    mfu__rbuf_puts(b, "</div></header>");
}

/* The step numbers and one series to plot: the analysis's when there is one. */
typedef struct plot {
    double *x, *mfu, *tps, *loss, *steady_t;
    size_t n, nsteady;
    double xmin, xmax;
    bool any_mfu, any_loss;
} plot;

static void plot_free(plot *p)
{
    free(p->x);
    free(p->mfu);
    free(p->tps);
    free(p->loss);
    free(p->steady_t);
}

static bool plot_make(const mfu_report *r, plot *p)
{
    memset(p, 0, sizeof *p);
    const mfu_analysis *a = mfu_report_analysis(r);
    size_t n = a ? mfu_analysis_steps(a) : mfu_report_step_count(r);
    size_t m = n ? n : 1;
    p->x = malloc(m * sizeof *p->x);
    p->mfu = malloc(m * sizeof *p->mfu);
    p->tps = malloc(m * sizeof *p->tps);
    p->loss = malloc(m * sizeof *p->loss);
    p->steady_t = malloc(m * sizeof *p->steady_t);
    if (!p->x || !p->mfu || !p->tps || !p->loss || !p->steady_t) {
        plot_free(p);
        return false;
    }
    p->n = n;
    const int64_t *steps = a ? mfu_analysis_step_numbers(a) : mfu_report_steps(r);
    const double *mfu = a ? mfu_analysis_derived(a, MFU_D_MFU) : mfu_report_column(r, MFU_RS_MFU);
    const double *tps =
        a ? mfu_analysis_derived(a, MFU_D_TOKENS_PER_S) : mfu_report_column(r, MFU_RS_TOKENS_PER_S);
    const double *st =
        a ? mfu_analysis_derived(a, MFU_D_STEP_TIME_S) : mfu_report_column(r, MFU_RS_STEP_TIME_S);
    const double *loss = a ? mfu_analysis_input(a, MFU_SC_LOSS) : mfu_report_column(r, MFU_RS_LOSS);
    p->xmin = INFINITY;
    p->xmax = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        p->x[i] = (double)steps[i];
        p->xmin = fmin(p->xmin, p->x[i]);
        p->xmax = fmax(p->xmax, p->x[i]);
        p->mfu[i] = mfu ? mfu[i] : NAN;
        p->tps[i] = tps ? tps[i] : NAN;
        p->loss[i] = loss ? loss[i] : NAN;
        p->any_mfu = p->any_mfu || isfinite(p->mfu[i]);
        p->any_loss = p->any_loss || isfinite(p->loss[i]);
        bool steady =
            a ? mfu_analysis_is_steady(a, i) : mfu_report_step_state_at(r, i) == MFU_STEP_STEADY;
        if (steady && st && isfinite(st[i]) && st[i] > 0)
            p->steady_t[p->nsteady++] = st[i];
    }
    if (!(p->xmax > p->xmin)) {
        p->xmin = n ? p->xmin - 1 : 0;
        p->xmax = n ? p->xmax + 1 : 1;
    }
    return true;
}

static void charts(hb *b, const mfu_report *r)
{
    const mfu_analysis *a = mfu_report_analysis(r);
    plot p;
    if (!plot_make(r, &p)) {
        b->failed = true;
        return;
    }
    size_t ns = a ? mfu_analysis_segment_count(a) : 0;
    size_t nf = a ? mfu_analysis_finding_count(a) : 0;
    double *bounds = malloc((ns ? ns : 1) * sizeof *bounds);
    mfu__svg_marker *marks = malloc((nf ? nf : 1) * sizeof *marks);
    char(*labels)[MFU_FINDING_KIND_MAX + MFU_FINDING_TEXT_MAX + 2] =
        malloc((nf ? nf : 1) * sizeof *labels);
    if (!bounds || !marks || !labels) {
        free(bounds);
        free(marks);
        free(labels);
        plot_free(&p);
        b->failed = true;
        return;
    }
    size_t nb = 0;
    for (size_t i = 1; i < ns; i++)
        bounds[nb++] = (double)mfu_analysis_segment(a, i)->start_step;
    for (size_t i = 0; i < nf; i++) {
        const mfu_finding *f = mfu_analysis_finding(a, i);
        snprintf(labels[i], sizeof labels[i], "%s: %s", f->kind, f->summary);
        marks[i].x = (double)f->first_step;
        marks[i].label = labels[i];
        marks[i].severity = f->severity;
    }
    const char *unit = mfu_report_analysis_unit(r);
    bool steps_unit = unit && strcmp(unit, "steps") == 0;
    mfu__svg_line c;
    memset(&c, 0, sizeof c);
    c.x = p.x;
    c.n = p.n;
    c.xmin = p.xmin;
    c.xmax = p.xmax;
    c.ymin = c.ymax = NAN;
    c.boundaries = bounds;
    c.nboundaries = nb;
    c.markers = marks;
    c.nmarkers = nf;
    c.width = CHART_W;
    c.height = CHART_H;
    mfu__rbuf_puts(b, "<h3>Utilization and throughput over steps</h3><div class=\"charts\">");
    if (p.any_mfu) {
        c.title = "MFU";
        c.y_label = "MFU (%)";
        c.y = p.mfu;
        c.y_scale = 100;
        c.ymin = 0;
        hb_svg(b, mfu__svg_line_chart(&c));
        c.ymin = NAN;
    }
    c.title = steps_unit ? "Steps per second" : "Tokens per second";
    c.y_label = steps_unit                                       ? "steps/s"
                : unit && strcmp(unit, "tokens per device") == 0 ? "tokens/s per device"
                                                                 : "tokens/s";
    c.y = p.tps;
    c.y_scale = 1;
    hb_svg(b, mfu__svg_line_chart(&c));
    if (p.any_loss) {
        c.title = "Loss";
        c.y_label = "loss";
        c.y = p.loss;
        c.height = 180;
        c.nmarkers = 0;
        hb_svg(b, mfu__svg_line_chart(&c));
    }
    mfu__rbuf_printf(b, "<div class=\"legend\">Steps %.0f–%.0f on one axis in every chart. ",
                     p.xmin, p.xmax);
    if (nb)
        mfu__rbuf_puts(b, "Dashed lines: segment boundaries. ");
    if (nf)
        mfu__rbuf_puts(b, "Triangles: where a finding starts (hover for its text). ");
    if (!p.any_mfu)
        mfu__rbuf_puts(b, "No MFU: the model or the device is unknown. ");
    mfu__rbuf_puts(b, "</div></div>");
    if (p.nsteady) {
        mfu__rbuf_puts(b, "<h3>Step times (steady steps)</h3><div class=\"charts\">");
        hb_svg(b, mfu__svg_histogram(p.steady_t, p.nsteady, 0, "Step time distribution", CHART_W,
                                     200));
        mfu__rbuf_puts(b,
                       "<div class=\"legend\">Freedman–Diaconis bins; the last bar collects steps "
                       "beyond 1.5 × the 99th percentile (stalls).</div></div>");
    }
    free(bounds);
    free(marks);
    free(labels);
    plot_free(&p);
}

static void interval_cell(hb *b, mfu_interval v, bool percent)
{
    char x[48], lo[48], hi[48];
    if (percent) {
        pct(x, sizeof x, v.value, 2);
        snprintf(lo, sizeof lo, "%.2f", 100 * v.lo);
        snprintf(hi, sizeof hi, "%.2f", 100 * v.hi);
    } else {
        si(x, sizeof x, v.value);
        si(lo, sizeof lo, v.lo);
        si(hi, sizeof hi, v.hi);
    }
    mfu__rbuf_puts(b, "<td class=\"num\">");
    mfu__rbuf_esc(b, x);
    if (percent && isfinite(v.lo) && v.hi > 1) {
        mfu__rbuf_puts(b, " <span class=\"muted\">[interval not meaningful]</span>");
    } else if (isfinite(v.lo)) {
        mfu__rbuf_puts(b, " <span class=\"muted\">[");
        mfu__rbuf_esc(b, lo);
        mfu__rbuf_puts(b, ", ");
        mfu__rbuf_esc(b, hi);
        mfu__rbuf_puts(b, "]</span>");
    }
    mfu__rbuf_puts(b, "</td>");
}

static void segments(hb *b, const mfu_analysis *a)
{
    size_t ns = mfu_analysis_segment_count(a);
    if (!ns)
        return;
    mfu__rbuf_printf(b,
                     "<h3>Segments (%zu)</h3><table><tr><th>#</th><th>steps</th><th>cause</th>"
                     "<th>settle</th><th>tokens/s [95 %%]</th><th>MFU [95 %%]</th><th>median "
                     "step</th><th>configuration</th></tr>",
                     ns);
    for (size_t i = 0; i < ns; i++) {
        const mfu_segment *g = mfu_analysis_segment(a, i);
        const mfu_level *l = &g->level;
        mfu__rbuf_printf(b,
                         "<tr><td>%zu</td><td class=\"num\">%lld–%lld</td><td>%s</td>"
                         "<td class=\"num\">%zu</td>",
                         i, (long long)g->start_step, (long long)g->end_step,
                         mfu_cause_name(g->cause), g->settle_steps);
        interval_cell(b, l->tokens_per_s, false);
        interval_cell(b, l->mfu, true);
        mfu__rbuf_printf(b, "<td class=\"num\">%.4g s</td><td>", l->step_time_s.value);
        char cfg[200] = "";
        if (isfinite(l->seq_len))
            mfu__appendf(cfg, sizeof cfg, "seq %.0f", l->seq_len);
        if (isfinite(l->global_batch))
            mfu__appendf(cfg, sizeof cfg, "%sbatch %.0f", cfg[0] ? ", " : "", l->global_batch);
        if (isfinite(l->devices))
            mfu__appendf(cfg, sizeof cfg, "%s%.0f device%s", cfg[0] ? ", " : "", l->devices,
                         l->devices == 1 ? "" : "s");
        if (l->recompute[0] && strcmp(l->recompute, "none") != 0)
            mfu__appendf(cfg, sizeof cfg, "%srecompute %s", cfg[0] ? ", " : "", l->recompute);
        mfu__rbuf_esc(b, cfg);
        mfu__rbuf_puts(b, "</td></tr>");
    }
    mfu__rbuf_puts(b, "</table>");
}

/* The label of term t of d: without a peak the MFU term is the change of achieved FLOP/s. */
static const char *term_label(const mfu_decomposition *d, mfu_term t)
{
    static const char *const names[MFU_TERM_COUNT_] = {"tokens/s (all terms)", "utilization (MFU)",
                                                       "capacity (devices × peak)",
                                                       "workload (FLOPs per token)", "padding"};
    if (t == MFU_TERM_MFU && d->capacity_unknown)
        return "FLOP/s per device (no peak)";
    return (int)t >= 0 && t < MFU_TERM_COUNT_ ? names[t] : "?";
}

static void terms_table(hb *b, const mfu_decomposition *d)
{
    mfu__rbuf_puts(b, "<table><tr><th>term</th><th>change</th><th>95 % interval</th><th>share</th>"
                      "<th>direction</th><th>size</th></tr>");
    for (int k = 0; k < MFU_TERM_COUNT_; k++) {
        const mfu_term_change *c = &d->term[k];
        if (k != MFU_TERM_TOKENS_PER_S && !isfinite(c->dln))
            continue;
        char ch[48], lo[48], hi[48];
        spct(ch, sizeof ch, c->pct);
        mfu__rbuf_puts(b, k == MFU_TERM_TOKENS_PER_S ? "<tr><th>" : "<tr><td>");
        mfu__rbuf_esc(b, term_label(d, (mfu_term)k));
        mfu__rbuf_puts(b, k == MFU_TERM_TOKENS_PER_S ? "</th>" : "</td>");
        mfu__rbuf_puts(b, "<td class=\"num\">");
        mfu__rbuf_esc(b, ch);
        mfu__rbuf_puts(b, "</td><td class=\"num\">");
        if (isfinite(c->lo_pct)) {
            spct(lo, sizeof lo, c->lo_pct);
            spct(hi, sizeof hi, c->hi_pct);
            mfu__rbuf_puts(b, "[");
            mfu__rbuf_esc(b, lo);
            mfu__rbuf_puts(b, ", ");
            mfu__rbuf_esc(b, hi);
            mfu__rbuf_puts(b, "]");
        } else {
            mfu__rbuf_puts(b, "–");
        }
        mfu__rbuf_puts(b, "</td><td class=\"num\">");
        if (isfinite(c->share))
            mfu__rbuf_printf(b, "%.2f", c->share);
        else
            mfu__rbuf_puts(b, "–");
        bool iv = isfinite(c->lo_pct);
        mfu__rbuf_printf(b, "</td><td>%s</td><td>%s</td></tr>",
                         !iv                    ? "–"
                         : c->direction_certain ? "<span class=\"yes\">certain</span>"
                                                : "<span class=\"no\">not certain</span>",
                         !iv             ? "–"
                         : c->size_known ? "<span class=\"yes\">known</span>"
                                         : "<span class=\"no\">not known</span>");
    }
    mfu__rbuf_puts(b, "</table>");
}

static void boundaries(hb *b, const mfu_analysis *a)
{
    size_t ns = mfu_analysis_segment_count(a);
    if (ns < 2)
        return;
    mfu__rbuf_puts(b, "<h3>What changed at each boundary</h3>");
    for (size_t i = 0; i + 1 < ns; i++) {
        const mfu_decomposition *d = mfu_analysis_boundary(a, i);
        const mfu_segment *g = mfu_analysis_segment(a, i + 1);
        char title[200];
        snprintf(title, sizeof title, "Step %lld: Δ ln tokens/s by term", (long long)g->start_step);
        mfu__rbuf_printf(b, "<div class=\"boundary\"><div class=\"muted\">step %lld · ",
                         (long long)g->start_step);
        mfu__rbuf_esc(b, d->config_change[0] ? d->config_change
                                             : "level shift (no configuration change)");
        mfu__rbuf_puts(b, "</div><p class=\"sentence\">");
        mfu__rbuf_esc(b, d->sentence);
        mfu__rbuf_puts(b, "</p><div class=\"split\"><div>");
        hb_svg(b, mfu__svg_waterfall(d, title, 430, 250));
        mfu__rbuf_puts(b, "</div><div>");
        terms_table(b, d);
        mfu__rbuf_puts(b, "</div></div></div>");
    }
}

static void findings(hb *b, const mfu_analysis *a)
{
    size_t nf = mfu_analysis_finding_count(a);
    mfu__rbuf_printf(b, "<h3>Findings (%zu)</h3>", nf);
    if (!nf) {
        mfu__rbuf_puts(b, "<p class=\"muted\">None: no stall, throttling, padding, recomputation, "
                          "impossible value, loss problem or straggler was found in the steady "
                          "steps.</p>");
        return;
    }
    mfu__rbuf_puts(b, "<ul class=\"findings\">");
    for (size_t i = 0; i < nf; i++) {
        const mfu_finding *f = mfu_analysis_finding(a, i);
        const char *sev = mfu_severity_name(f->severity);
        mfu__rbuf_printf(b, "<li class=\"sev-%s\"><span class=\"badge sev-%s\">%s</span>", sev, sev,
                         sev);
        mfu__rbuf_puts(b, "<span class=\"kind\">");
        mfu__rbuf_esc(b, f->kind);
        mfu__rbuf_printf(b,
                         "</span><span class=\"steps\">steps %lld–%lld</span><p class=\"summary\">",
                         (long long)f->first_step, (long long)f->last_step);
        mfu__rbuf_esc(b, f->summary);
        mfu__rbuf_puts(b, "</p>");
        if (f->nevidence) {
            mfu__rbuf_puts(b, "<div class=\"chips\">");
            for (size_t k = 0; k < f->nevidence && k < MFU_FINDING_EVIDENCE_MAX; k++) {
                mfu__rbuf_puts(b, "<span class=\"chip\">");
                mfu__rbuf_esc(b, f->evidence[k].name);
                mfu__rbuf_printf(b, " = %.4g</span>", f->evidence[k].value);
            }
            mfu__rbuf_puts(b, "</div>");
        }
        mfu__rbuf_puts(b, "<p class=\"next\">Next: ");
        mfu__rbuf_esc(b, f->next_step);
        mfu__rbuf_puts(b, "</p></li>");
    }
    mfu__rbuf_puts(b, "</ul>");
}

static void fig(char *buf, size_t n, mfu_figure f, double v)
{
    if (f == MFU_FIGURE_MFU)
        pct(buf, n, v, 2);
    else if (f == MFU_FIGURE_FLOPS_PER_S)
        mfu__fmt_si(buf, n, v, "FLOP/s");
    else
        si(buf, n, v);
}

static void comparisons(hb *b, const mfu_report *r)
{
    size_t n = mfu_report_comparison_count(r);
    if (!n)
        return;
    mfu__rbuf_puts(
        b, "<h3>Reported vs recomputed (steady medians)</h3><table><tr><th>figure</th>"
           "<th>reported</th><th>recomputed</th><th>ratio</th><th></th><th>cause</th></tr>");
    for (size_t i = 0; i < n; i++) {
        const mfu_report_comparison *x = mfu_report_comparison_at(r, i);
        char rep[48], rec[48];
        fig(rep, sizeof rep, x->figure, x->reported);
        fig(rec, sizeof rec, x->figure, x->recomputed);
        mfu__rbuf_puts(b, "<tr><td>");
        mfu__rbuf_esc(b, x->label);
        mfu__rbuf_puts(b, "</td><td class=\"num\">");
        mfu__rbuf_esc(b, rep);
        mfu__rbuf_puts(b, "</td><td class=\"num\">");
        mfu__rbuf_esc(b, rec);
        mfu__rbuf_printf(b, "</td><td class=\"num\">%.3f</td><td>%s</td><td>", x->ratio,
                         x->agrees ? "<span class=\"badge ok\">agrees</span>"
                                   : "<span class=\"badge bad\">differs</span>");
        if (!x->agrees) {
            mfu__rbuf_esc(b, mfu_mismatch_name(x->cause));
            if (x->explanation[0]) {
                mfu__rbuf_puts(b, ": ");
                mfu__rbuf_esc(b, x->explanation);
            }
        }
        mfu__rbuf_puts(b, "</td></tr>");
    }
    mfu__rbuf_puts(b, "</table>");
}

static void invariants(hb *b, const mfu_analysis *a)
{
    size_t n = mfu_analysis_invariant_count(a);
    if (!n)
        return;
    mfu__rbuf_puts(b,
                   "<h3>Expectations</h3><table><tr><th></th><th>expression</th><th>measured</th>"
                   "</tr>");
    for (size_t i = 0; i < n; i++) {
        const mfu_invariant_result *v = mfu_analysis_invariant(a, i);
        mfu__rbuf_printf(b, "<tr><td>%s</td><td><code>",
                         v->passed ? "<span class=\"badge ok\">ok</span>"
                                   : "<span class=\"badge bad\">violated</span>");
        mfu__rbuf_esc(b, v->expression);
        mfu__rbuf_puts(b, "</code></td><td>");
        mfu__rbuf_esc(b, v->message);
        mfu__rbuf_puts(b, "</td></tr>");
    }
    mfu__rbuf_puts(b, "</table>");
}

static void notes(hb *b, const mfu_report *r)
{
    size_t nn = mfu_report_note_count(r), nm = mfu_report_missing_count(r);
    if (!nn && !nm)
        return;
    mfu__rbuf_puts(b, "<h3>Notes</h3><ul>");
    for (size_t i = 0; i < nn; i++) {
        mfu__rbuf_puts(b, "<li>");
        mfu__rbuf_esc(b, mfu_report_note_at(r, i));
        mfu__rbuf_puts(b, "</li>");
    }
    for (size_t i = 0; i < nm; i++) {
        const mfu_report_missing *m = mfu_report_missing_at(r, i);
        mfu__rbuf_puts(b, "<li>missing ");
        mfu__rbuf_esc(b, m->what);
        mfu__rbuf_puts(b, ": <code>");
        mfu__rbuf_esc(b, m->option);
        mfu__rbuf_puts(b, "</code> adds ");
        mfu__rbuf_esc(b, m->needed_for);
        mfu__rbuf_puts(b, "</li>");
    }
    mfu__rbuf_puts(b, "</ul>");
}

mfu_status mfu_report_html(const mfu_report_html_run *runs, size_t n, const char *title, char **out,
                           mfu_error *err)
{
    if (!out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_report_html: out is NULL");
    *out = NULL;
    if ((n && !runs) || n == 0)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_report_html: give at least one report");
    for (size_t i = 0; i < n; i++)
        if (!runs[i].report)
            return mfu__fail(err, MFU_E_INVALID, 0, "mfu_report_html: run %zu has no report", i);
    hb b;
    memset(&b, 0, sizeof b);
    b.max = HTML_MAX_BYTES;
    const char *t = title && *title ? title : "mfu report";
    mfu__rbuf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                       "<title>");
    mfu__rbuf_esc(&b, t);
    mfu__rbuf_puts(&b, "</title><style>");
    mfu__rbuf_puts(&b, CSS);
    mfu__rbuf_puts(&b, "</style></head><body><main><h1>");
    mfu__rbuf_esc(&b, t);
    mfu__rbuf_printf(&b,
                     " <small>%zu run%s · MFU = useful model FLOP/s ÷ (devices × dense peak)"
                     "</small></h1>",
                     n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n && !b.failed; i++) {
        const mfu_report *r = runs[i].report;
        const mfu_analysis *a = mfu_report_analysis(r);
        mfu__rbuf_puts(&b, "<section class=\"run\">");
        context_card(&b, &runs[i]);
        charts(&b, r);
        if (runs[i].trace)
            mfu__html_trace(&b, runs[i].trace);
        if (a) {
            segments(&b, a);
            boundaries(&b, a);
            findings(&b, a);
        }
        comparisons(&b, r);
        if (a)
            invariants(&b, a);
        notes(&b, r);
        mfu__rbuf_puts(&b, "</section>");
    }
    mfu__rbuf_puts(
        &b, "<footer>Written by mfu. Levels are medians over the steady steps (the typical "
            "step; totals with stalls are shown as such); intervals are 95 % intervals of "
            "those medians from order statistics, widened for correlated steps; “direction "
            "certain” means the interval excludes zero, “size known” that it is narrower "
            "than the size threshold. See docs/analysis.md.</footer></main></body></html>\n");
    if (b.failed) {
        free(b.p);
        return mfu__fail(err, MFU_E_NOMEM, 0,
                         "out of memory (or past %u MiB) writing the HTML report; report fewer "
                         "runs per page",
                         HTML_MAX_BYTES >> 20);
    }
    *out = b.p;
    return MFU_OK;
}
