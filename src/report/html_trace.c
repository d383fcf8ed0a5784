/*
 * html_trace.c - the "where the GPU time went" section of the HTML report: the views of
 * mfu/trace.h (a set of ranks' profiler traces and, with the run's MFU, the waterfall) as
 * tables and inline SVG, in the page's own classes and colours. No script; every text that
 * comes from a trace is escaped (mfu__rbuf_esc).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/html_trace.h"
#include "util/util.h"

/* The parts in the order of the bars, with their colours and labels. */
static const struct {
    mfu_trace_part part;
    const char *label;
    const char *colour;
} PARTS[] = {
    {MFU_TRACE_MATMUL, "matmul", "#1f618d"},
    {MFU_TRACE_ATTENTION, "attention", "#5dade2"},
    {MFU_TRACE_OTHER, "other compute", "#a9cce3"},
    {MFU_TRACE_COMM_EXPOSED, "exposed communication", "#b9770e"},
    {MFU_TRACE_MEMCPY, "memory copies", "#7d3c98"},
    {MFU_TRACE_IDLE, "idle", "#d5dbdb"},
};

static void pct_cell(mfu__rbuf *b, double part, double whole)
{
    if (whole > 0 && isfinite(part))
        mfu__rbuf_printf(b, "<td class=\"num\">%.1f %%</td>", 100 * part / whole);
    else
        mfu__rbuf_puts(b, "<td class=\"num\">–</td>");
}

static void rank_label(mfu__rbuf *b, const mfu_trace *t)
{
    int64_t r = mfu_trace_rank(t);
    if (r >= 0)
        mfu__rbuf_printf(b, "rank %lld", (long long)r);
    else
        mfu__rbuf_puts(b, "rank ?");
}

/* One horizontal stacked bar of a breakdown's parts, 100 % wide. */
static void bar(mfu__rbuf *b, const mfu_trace_breakdown *bd, const mfu_trace *t)
{
    const int W = 960, H = 26, L = 90;
    mfu__rbuf_printf(b,
                     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                     "viewBox=\"0 0 %d %d\" role=\"img\" class=\"mfu-trace-bar\">",
                     W, H, W, H);
    mfu__rbuf_puts(b, "<text x=\"0\" y=\"17\" font-size=\"12\" fill=\"#5d6d7e\">");
    rank_label(b, t);
    mfu__rbuf_puts(b, "</text>");
    double x = L;
    for (size_t i = 0; i < MFU__ARRAY_LEN(PARTS); i++) {
        double w = bd->span_s > 0 ? (W - L) * bd->part_s[PARTS[i].part] / bd->span_s : 0;
        if (w <= 0)
            continue;
        mfu__rbuf_printf(b,
                         "<rect x=\"%.2f\" y=\"3\" width=\"%.2f\" height=\"20\" fill=\"%s\">"
                         "<title>%s %.1f %%</title></rect>",
                         x, w, PARTS[i].colour, PARTS[i].label,
                         100 * bd->part_s[PARTS[i].part] / bd->span_s);
        x += w;
    }
    mfu__rbuf_puts(b, "</svg>");
}

static void legend(mfu__rbuf *b)
{
    mfu__rbuf_puts(b, "<p class=\"legend\">");
    for (size_t i = 0; i < MFU__ARRAY_LEN(PARTS); i++)
        mfu__rbuf_printf(b, "<span style=\"color:%s\">■</span> %s &nbsp; ", PARTS[i].colour,
                         PARTS[i].label);
    mfu__rbuf_puts(b, "</p>");
}

static void head_row(mfu__rbuf *b, const char *first)
{
    mfu__rbuf_printf(b,
                     "<tr><th>%s</th><th>GPU span (s)</th><th>compute</th><th>matmul</th>"
                     "<th>attention</th><th>other</th><th>comm. exposed</th>"
                     "<th>comm. overlapped</th><th>memcpy</th><th>idle</th></tr>",
                     first);
}

static void bd_cells(mfu__rbuf *b, const mfu_trace_breakdown *bd)
{
    mfu__rbuf_printf(b, "<td class=\"num\">%.6f</td>", bd->span_s);
    pct_cell(b, bd->compute_s, bd->span_s);
    pct_cell(b, bd->part_s[MFU_TRACE_MATMUL], bd->span_s);
    pct_cell(b, bd->part_s[MFU_TRACE_ATTENTION], bd->span_s);
    pct_cell(b, bd->part_s[MFU_TRACE_OTHER], bd->span_s);
    pct_cell(b, bd->part_s[MFU_TRACE_COMM_EXPOSED], bd->span_s);
    pct_cell(b, bd->communication_overlapped_s, bd->span_s);
    pct_cell(b, bd->part_s[MFU_TRACE_MEMCPY], bd->span_s);
    pct_cell(b, bd->part_s[MFU_TRACE_IDLE], bd->span_s);
}

/* The waterfall as floating bars: peak, each loss, the achieved MFU. */
static void waterfall_svg(mfu__rbuf *b, const mfu_trace_waterfall *w)
{
    const struct {
        const char *label;
        double pts;
    } rows[] = {{"idle", w->idle},
                {"exposed comm.", w->communication},
                {"memory copies", w->memcpy},
                {"non-matmul compute", w->non_matmul},
                {"matmul below peak", w->matmul_below_peak}};
    const int W = 960, H = 260, top = 16, bottom = 40, left = 50;
    const int n = (int)MFU__ARRAY_LEN(rows) + 2;
    double lo = 0, level = 100;
    for (size_t i = 0; i < MFU__ARRAY_LEN(rows); i++) {
        level -= rows[i].pts;
        if (level < lo)
            lo = level;
    }
    double span = 100 - lo, ph = H - top - bottom, slot = (double)(W - left) / n;
#define YOF(v) (top + ph * (100 - (v)) / span)
    mfu__rbuf_printf(b,
                     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                     "viewBox=\"0 0 %d %d\" role=\"img\" class=\"mfu-trace-waterfall\">",
                     W, H, W, H);
    for (int g = 0; g <= 100; g += 25)
        if (g >= lo)
            mfu__rbuf_printf(b,
                             "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
                             "stroke=\"#eaeded\"/><text x=\"4\" y=\"%.1f\" font-size=\"11\" "
                             "fill=\"#5d6d7e\">%d</text>",
                             left, W, YOF(g), YOF(g), YOF(g) + 4, g);
    level = 100;
    for (int i = 0; i < n; i++) {
        double from, to;
        const char *label, *colour;
        if (i == 0) {
            from = 0, to = 100, label = "peak", colour = "#1f618d";
        } else if (i == n - 1) {
            from = 0, to = 100 * w->mfu, label = "achieved MFU", colour = "#1e8449";
        } else {
            from = level - rows[i - 1].pts, to = level;
            level = from;
            label = rows[i - 1].label;
            colour = rows[i - 1].pts >= 0 ? "#c0392b" : "#1e8449";
        }
        double y0 = YOF(to > from ? to : from), y1 = YOF(to > from ? from : to);
        double x = left + i * slot + slot * 0.15;
        mfu__rbuf_printf(b,
                         "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                         "fill=\"%s\"><title>%s %.1f</title></rect>",
                         x, y0, slot * 0.7, y1 - y0 > 0.5 ? y1 - y0 : 0.5, colour, label,
                         i == 0 || i == n - 1 ? to : -(to - from));
        mfu__rbuf_printf(b,
                         "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" "
                         "fill=\"#1c2833\">%s%.1f</text>",
                         x + slot * 0.35, y0 - 4, i == 0 || i == n - 1 ? "" : "−",
                         i == 0 || i == n - 1 ? to : fabs(to - from));
        mfu__rbuf_printf(b,
                         "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\" "
                         "fill=\"#5d6d7e\">%s</text>",
                         x + slot * 0.35, H - bottom + 16, label);
    }
#undef YOF
    mfu__rbuf_puts(b, "</svg>");
}

static void kernels(mfu__rbuf *b, const mfu_trace *t, double peak)
{
    mfu_trace_breakdown tot = mfu_trace_total(t);
    size_t shown = 0;
    for (size_t i = 0; i < mfu_trace_kernel_count(t) && shown < 8; i++) {
        const mfu_trace_kernel *k = mfu_trace_kernel_at(t, i);
        if (k->cls != MFU_TRACE_CLASS_MATMUL)
            continue;
        if (shown++ == 0) {
            mfu__rbuf_puts(b, "<p class=\"muted\">Main matmul kernels of ");
            rank_label(b, t);
            mfu__rbuf_puts(b, " (FLOP/s from the shapes the trace recorded):</p><table><tr>"
                              "<th>kernel</th><th>count</th><th>time share</th><th>FLOP/s</th>"
                              "<th>% of peak</th></tr>");
        }
        mfu__rbuf_puts(b, "<tr><td><code>");
        char name[161];
        mfu__strlcpy(name, k->name, sizeof name);
        mfu__rbuf_esc(b, name);
        mfu__rbuf_printf(b, "%s</code></td><td class=\"num\">%zu</td>",
                         strlen(k->name) >= sizeof name ? "…" : "", k->count);
        pct_cell(b, k->time_s, tot.span_s);
        if (isfinite(k->flops_per_s)) {
            char x[32];
            mfu__fmt_si(x, sizeof x, k->flops_per_s, "FLOP/s");
            mfu__rbuf_printf(b, "<td class=\"num\">%s</td>", x);
        } else
            mfu__rbuf_puts(b, "<td class=\"num\">–</td>");
        pct_cell(b, k->flops_per_s, peak);
        mfu__rbuf_puts(b, "</tr>");
    }
    if (shown)
        mfu__rbuf_puts(b, "</table>");
}

void mfu__html_trace(mfu__rbuf *b, const mfu_trace_view *v)
{
    mfu__rbuf_printf(b, "<h3>Where the GPU time went (profiler trace, %zu rank%s)</h3>", v->n,
                     v->n == 1 ? "" : "s");
    mfu__rbuf_puts(b, "<p class=\"muted\">Each rank's profiled window, from its first step's "
                      "first GPU activity to its last step's last one: at every instant the "
                      "highest of matmul, attention, other compute, communication, memory copy "
                      "that runs; idle when nothing does. Communication under compute is "
                      "overlapped.</p><div class=\"charts\">");
    for (size_t i = 0; i < v->n; i++) {
        mfu_trace_breakdown tot = mfu_trace_total(v->traces[i]);
        bar(b, &tot, v->traces[i]);
    }
    mfu__rbuf_puts(b, "</div>");
    legend(b);
    mfu__rbuf_puts(b, "<table>");
    head_row(b, "rank (file)");
    for (size_t i = 0; i < v->n; i++) {
        const mfu_trace *t = v->traces[i];
        mfu_trace_breakdown tot = mfu_trace_total(t);
        mfu__rbuf_puts(b, "<tr><td>");
        rank_label(b, t);
        mfu__rbuf_puts(b, " <span class=\"muted\">");
        mfu__rbuf_esc(b, mfu_trace_name(t));
        mfu__rbuf_puts(b, "</span></td>");
        bd_cells(b, &tot);
        mfu__rbuf_puts(b, "</tr>");
    }
    mfu__rbuf_puts(b, "</table>");
    for (size_t i = 0; i < v->n; i++) {
        const mfu_trace *t = v->traces[i];
        mfu__rbuf_puts(b, "<p class=\"muted\">Steps of ");
        rank_label(b, t);
        mfu__rbuf_puts(b, " (a step's span: its first activity's start to its last one's "
                          "end):</p><table>");
        head_row(b, "step");
        for (size_t s = 0; s < mfu_trace_step_count(t) && s < 200; s++) {
            const mfu_trace_step *st = mfu_trace_step_at(t, s);
            mfu__rbuf_printf(b, "<tr><td>%lld</td>", (long long)st->step);
            bd_cells(b, &st->breakdown);
            mfu__rbuf_puts(b, "</tr>");
        }
        mfu__rbuf_puts(b, "</table>");
    }
    if (v->n > 1 && v->ranks.missing > 0)
        mfu__rbuf_printf(b,
                         "<p>%zu of the world's %lld ranks have no trace: the straggler is of "
                         "the ranks given.</p>",
                         v->ranks.missing, (long long)v->ranks.world_size);
    const mfu_trace_straggler *sg = &v->straggler;
    if (sg->found) {
        mfu__rbuf_printf(b,
                         "<p class=\"sentence\">Straggler: rank %lld, compute %.4f s per step "
                         "(%+.1f %% against the ranks' median); the others wait %.4f s per "
                         "step for it in collectives, %.1f points of their step.</p>",
                         (long long)sg->rank, sg->compute_s, 100 * sg->excess, sg->wait_s,
                         sg->wait_points);
    }
    mfu__rbuf_puts(b, "<h3>MFU waterfall</h3>");
    if (!v->has_waterfall) {
        mfu__rbuf_puts(b, "<p class=\"muted\">");
        mfu__rbuf_esc(b, v->missing);
        mfu__rbuf_puts(b, "</p>");
    } else {
        const mfu_trace_waterfall *w = &v->waterfall;
        mfu__rbuf_puts(b, "<p class=\"muted\">Points of peak lost on the way to the achieved "
                          "MFU (");
        mfu__rbuf_esc(b, v->mfu_source);
        mfu__rbuf_puts(b, "); matmul time is when matmul or attention kernels run.</p>"
                          "<div class=\"charts\">");
        waterfall_svg(b, w);
        mfu__rbuf_printf(b,
                         "</div><table><tr><th>from peak</th><th>points</th></tr>"
                         "<tr><td>peak</td><td class=\"num\">100.0</td></tr>"
                         "<tr><td>lost to idle</td><td class=\"num\">−%.1f</td></tr>"
                         "<tr><td>lost to exposed communication</td><td class=\"num\">−%.1f"
                         "</td></tr><tr><td>lost to memory copies</td><td class=\"num\">−%.1f"
                         "</td></tr><tr><td>lost to non-matmul compute</td><td class=\"num\">"
                         "−%.1f</td></tr><tr><td>lost to matmul kernels below peak</td>"
                         "<td class=\"num\">%s%.1f</td></tr><tr><td><b>achieved MFU</b></td>"
                         "<td class=\"num\"><b>%.1f</b></td></tr></table>",
                         w->idle, w->communication, w->memcpy, w->non_matmul,
                         w->matmul_below_peak >= 0 ? "−" : "+", fabs(w->matmul_below_peak),
                         100 * w->mfu);
    }
    for (size_t i = 0; i < v->n; i++)
        kernels(b, v->traces[i], v->peak_flops_per_s);
}
