/*
 * svg.c - line chart, waterfall and histogram as self-contained SVG (see svg.h).
 *
 * Output goes through a small bounded buffer; every piece of caller text goes through
 * mfu__rbuf_esc(). Numbers are written with "%.1f" for coordinates (sub-pixel precision is noise).
 */
#include "report/svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h" /* sort, quantile, percent format */
#include "util/util.h"

/* ---- a bounded growable buffer (svg.h) ---------------------------------------------------- */

static bool rbuf_grow(mfu__rbuf *b, size_t need)
{
    size_t max = b->max ? b->max : MFU__SVG_MAX_BYTES;
    if (b->failed)
        return false;
    if (b->len + need + 1 <= b->cap)
        return true;
    if (b->len + need + 1 > max) {
        b->failed = true;
        return false;
    }
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + need + 1)
        cap *= 2;
    if (cap > max)
        cap = max;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void mfu__rbuf_put(mfu__rbuf *b, const char *s, size_t k)
{
    if (!rbuf_grow(b, k))
        return;
    memcpy(b->p + b->len, s, k);
    b->len += k;
    b->p[b->len] = '\0';
}

void mfu__rbuf_puts(mfu__rbuf *b, const char *s)
{
    if (s)
        mfu__rbuf_put(b, s, strlen(s));
}

void mfu__rbuf_printf(mfu__rbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)k < sizeof tmp) {
        mfu__rbuf_put(b, tmp, (size_t)k);
        return;
    }
    if (!rbuf_grow(b, (size_t)k)) /* longer than tmp: formatted again in place */
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)k;
}

void mfu__rbuf_esc(mfu__rbuf *b, const char *s)
{
    if (!s)
        return;
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        const char *rep = c == '&'                                            ? "&amp;"
                          : c == '<'                                          ? "&lt;"
                          : c == '>'                                          ? "&gt;"
                          : c == '"'                                          ? "&quot;"
                          : c == '\''                                         ? "&#39;"
                          : (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f ? "?"
                                                                              : NULL;
        if (!rep)
            continue;
        mfu__rbuf_put(b, run, (size_t)(s - run));
        mfu__rbuf_puts(b, rep);
        run = s + 1;
    }
    mfu__rbuf_put(b, run, (size_t)(s - run));
}

char *mfu__rbuf_finish(mfu__rbuf *b)
{
    if (b->failed || !b->p) {
        free(b->p);
        return NULL;
    }
    return b->p;
}

/* ---- ticks and number formatting --------------------------------------------------------- */

static double nicenum(double x, bool round_it)
{
    double e = floor(log10(x)), f = x / pow(10, e), nf;
    if (round_it)
        nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
    else
        nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    return nf * pow(10, e);
}

size_t mfu__svg_nice_ticks(double lo, double hi, size_t max_ticks, double *out, double *step)
{
    if (!isfinite(lo) || !isfinite(hi) || max_ticks < 2)
        return 0;
    if (hi < lo) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    if (hi - lo < 1e-12 * fmax(1, fabs(hi))) { /* one value: a small range around it */
        double d = fabs(hi) > 0 ? fabs(hi) * 0.05 : 1;
        lo -= d;
        hi += d;
    }
    double range = nicenum(hi - lo, false);
    double d = nicenum(range / (double)(max_ticks - 1), true);
    double g0 = floor(lo / d) * d, g1 = ceil(hi / d) * d;
    size_t n = 0;
    for (double v = g0; v <= g1 + 0.5 * d && n < max_ticks + 2; v += d)
        n++;
    while (n > max_ticks) { /* rounding gave one too many: widen the step */
        d = nicenum(d * 1.5, true);
        g0 = floor(lo / d) * d;
        g1 = ceil(hi / d) * d;
        n = (size_t)floor((g1 - g0) / d + 0.5) + 1;
    }
    for (size_t i = 0; i < n; i++) {
        double v = g0 + (double)i * d;
        out[i] = fabs(v) < 1e-9 * d ? 0 : v;
    }
    if (step)
        *step = d;
    return n;
}

/* A tick label: an SI suffix chosen for the whole axis (ref = the largest |tick|; none below
 * 10000, so step numbers read plainly), enough decimals for the step. */
static void fmt_tick(char *buf, size_t n, double v, double step, double ref)
{
    static const char *const si[] = {"", "k", "M", "G", "T", "P", "E"};
    double a = fmax(fabs(ref), step);
    int k = 0;
    if (fabs(v) < 1e-9 * step) { /* zero is zero on every axis */
        snprintf(buf, n, "0");
        return;
    }
    while (a >= (k == 0 ? 10000 : 1000) && k < 6) { /* 1000..9999 stay plain (step numbers) */
        a /= 1000;
        v /= 1000;
        step /= 1000;
        k++;
    }
    /* decimals for the step, at most 6 (a zero or NaN step would make the cast undefined) */
    int dec = !(step < 1) ? 0 : !(step > 1e-6) ? 6 : (int)ceil(-log10(step) - 1e-9);
    if (dec > 6)
        dec = 6;
    snprintf(buf, n, "%.*f%s", dec, v, si[k]);
}

static double tick_ref(const double *t, size_t n)
{
    return n ? fmax(fabs(t[0]), fabs(t[n - 1])) : 0;
}

/* ---- downsampling ------------------------------------------------------------------------ */

size_t mfu__svg_downsample(const double *x, const double *y, size_t n, double xmin, double xmax,
                           int px, size_t *keep)
{
    if (px < 1 || !(xmax > xmin))
        return 0;
    /* Per column at most a break marker and 4 points; the guard keeps unsorted input (whose
     * columns repeat) inside the caller's 5 × px + 1 entries too. */
    size_t cap = (size_t)px * 5 + 1, nk = 0;
    long cur = -1;
    size_t first = SIZE_MAX, last = 0, imin = 0, imax = 0;
    bool gap = false, pending_gap = false;
    double scale = (double)px / (xmax - xmin);
    for (size_t i = 0; i <= n; i++) {
        long col = -1;
        bool fin = false;
        if (i < n) {
            if (!isfinite(x[i]) || x[i] < xmin || x[i] > xmax)
                continue;
            col = (long)floor((x[i] - xmin) * scale);
            if (col >= px)
                col = px - 1;
            fin = isfinite(y[i]);
        }
        if (i == n || col != cur) { /* flush the column */
            if (first != SIZE_MAX && nk + 5 <= cap) {
                if (pending_gap && nk)
                    keep[nk++] = SIZE_MAX;
                pending_gap = false;
                size_t c[4] = {first, imin, imax, last};
                for (int a = 1; a < 4; a++) /* index order */
                    for (int b = a; b > 0 && c[b] < c[b - 1]; b--) {
                        size_t t = c[b];
                        c[b] = c[b - 1];
                        c[b - 1] = t;
                    }
                for (int a = 0; a < 4; a++)
                    if (a == 0 || c[a] != c[a - 1])
                        keep[nk++] = c[a];
            }
            if (gap)
                pending_gap = true;
            first = SIZE_MAX;
            gap = false;
            cur = col;
            if (i == n)
                break;
        }
        if (!fin) { /* a gap: break the line after this column (or before its first point) */
            if (first != SIZE_MAX)
                gap = true;
            else if (nk)
                pending_gap = true;
            continue;
        }
        if (first == SIZE_MAX)
            first = imin = imax = i;
        last = i;
        if (y[i] < y[imin])
            imin = i;
        if (y[i] > y[imax])
            imax = i;
    }
    return nk;
}

typedef struct xy {
    double x, y;
} xy;

static int cmp_xy(const void *pa, const void *pb)
{
    const xy *a = pa, *b = pb;
    return (a->x > b->x) - (a->x < b->x);
}

/* ---- the line chart ---------------------------------------------------------------------- */

static const char *sev_class(mfu_severity s)
{
    return s == MFU_SEV_ERROR ? "sev-error" : s == MFU_SEV_WARNING ? "sev-warning" : "sev-info";
}

static const char *sev_colour(mfu_severity s)
{
    return s == MFU_SEV_ERROR ? "#c0392b" : s == MFU_SEV_WARNING ? "#d68910" : "#2e86c1";
}

static void open_svg(mfu__rbuf *b, int w, int h, const char *title, const char *cls)
{
    mfu__rbuf_printf(b,
                     "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"%s\" width=\"%d\" "
                     "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
                     cls, w, h, w, h);
    mfu__rbuf_esc(b, title ? title : "chart");
    mfu__rbuf_printf(b, "\" font-family=\"system-ui, -apple-system, 'Segoe UI', sans-serif\" "
                        "font-size=\"11\">");
    mfu__rbuf_printf(b, "<title>");
    mfu__rbuf_esc(b, title ? title : "chart");
    mfu__rbuf_printf(b, "</title>");
    if (title && *title) {
        mfu__rbuf_printf(b,
                         "<text class=\"mfu-title\" x=\"%d\" y=\"16\" font-size=\"13\" "
                         "font-weight=\"600\">",
                         MFU__SVG_MARGIN_LEFT);
        mfu__rbuf_esc(b, title);
        mfu__rbuf_printf(b, "</text>");
    }
}

/* A value for a hover title: 4 significant digits, plain below 10000 (step numbers), with the
 * axis's SI suffix above. */
static void fmt_value(char *buf, size_t n, double v)
{
    if (fabs(v) < 10000 && v == floor(v))
        snprintf(buf, n, "%.0f", v);
    else if (fabs(v) < 10000)
        snprintf(buf, n, "%.4g", v);
    else
        fmt_tick(buf, n, v, fabs(v) / 1000, fabs(v));
}

/* One hover rectangle from pixel x0 to x1 over the plot, titled "WHAT at step S: V" or, for
 * several points, "WHAT at steps S0–S1: V0 to V1 (N steps)". */
static void hover_rect(mfu__rbuf *b, double x0, double x1, double T, int ph, const char *what,
                       double s0, double s1, double v0, double v1, size_t count)
{
    char a[32], z[32], lo[32], hi[32];
    fmt_value(a, sizeof a, s0);
    fmt_value(z, sizeof z, s1);
    fmt_value(lo, sizeof lo, v0);
    fmt_value(hi, sizeof hi, v1);
    mfu__rbuf_printf(b,
                     "<rect class=\"mfu-hover\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                     "height=\"%d\" fill=\"#000\" fill-opacity=\"0\"><title>",
                     x0, T, x1 - x0, ph);
    mfu__rbuf_esc(b, what);
    if (count == 1)
        mfu__rbuf_printf(b, " at step %s: %s", a, lo);
    else if (v0 == v1)
        mfu__rbuf_printf(b, " at steps %s–%s: %s (%zu steps)", a, z, lo, count);
    else
        mfu__rbuf_printf(b, " at steps %s–%s: %s to %s (%zu steps)", a, z, lo, hi, count);
    mfu__rbuf_printf(b, "</title></rect>");
}

/* Hover values without script: invisible rectangles over the plot whose <title> a browser
 * shows as a tooltip. With fewer points than bands of MFU__SVG_HOVER_PX pixels, one per point,
 * reaching halfway to its neighbours; else one per band that has points, with their range.
 * X is sorted; points outside [xmin, xmax] or without a value are skipped. */
static void hover_bands(mfu__rbuf *b, const double *X, const double *Y, size_t n, double ys,
                        double xmin, double xmax, double L, double T, int pw, int ph,
                        const char *what)
{
    size_t nb = (size_t)pw / MFU__SVG_HOVER_PX, nf = 0;
    if (nb < 1)
        nb = 1;
    for (size_t i = 0; i < n; i++)
        nf += X[i] >= xmin && X[i] <= xmax && isfinite(Y[i]);
#define HX(v) (L + ((v)-xmin) / (xmax - xmin) * pw)
    if (nf <= nb) {
        double left = L;
        for (size_t i = 0; i < n; i++) {
            if (!(X[i] >= xmin && X[i] <= xmax && isfinite(Y[i])))
                continue;
            size_t j = i + 1;
            while (j < n && !(X[j] >= xmin && X[j] <= xmax && isfinite(Y[j])))
                j++;
            double right = j < n ? (HX(X[i]) + HX(X[j])) / 2 : L + pw;
            if (right > left)
                hover_rect(b, left, right, T, ph, what, X[i], X[i], Y[i] * ys, Y[i] * ys, 1);
            left = right;
        }
        return;
    }
#undef HX
    double bw = (double)pw / (double)nb;
    size_t i = 0;
    while (i < n && !(X[i] >= xmin))
        i++;
    for (size_t k = 0; k < nb && i < n; k++) {
        double hi = xmin + (xmax - xmin) * (double)(k + 1) / (double)nb;
        size_t count = 0;
        double x0 = NAN, x1 = NAN, y0 = INFINITY, y1 = -INFINITY;
        for (; i < n && (X[i] < hi || (k + 1 == nb && X[i] <= xmax)); i++) {
            if (!isfinite(Y[i]))
                continue;
            if (count == 0)
                x0 = X[i];
            x1 = X[i];
            y0 = fmin(y0, Y[i] * ys);
            y1 = fmax(y1, Y[i] * ys);
            count++;
        }
        if (count)
            hover_rect(b, L + bw * (double)k, L + bw * (double)(k + 1), T, ph, what, x0, x1, y0, y1,
                       count);
    }
}

char *mfu__svg_line_chart(const mfu__svg_line *c)
{
    if (!c || (c->n && (!c->x || !c->y)) || (c->nboundaries && !c->boundaries) ||
        (c->nmarkers && !c->markers))
        return NULL;
    int W = c->width > 0 ? c->width : 720, H = c->height > 0 ? c->height : 220;
    int pw = W - MFU__SVG_MARGIN_LEFT - MFU__SVG_MARGIN_RIGHT;
    int ph = H - MFU__SVG_MARGIN_TOP - MFU__SVG_MARGIN_BOTTOM;
    if (pw < 10 || ph < 10 || W > 20000 || H > 20000)
        return NULL;
    double ys = c->y_scale != 0 ? c->y_scale : 1;
    /* Sort by x when the caller's x goes back (restarted runs). */
    const double *X = c->x, *Y = c->y;
    double *sx = NULL, *sy = NULL;
    bool sorted = true;
    for (size_t i = 1; i < c->n && sorted; i++)
        if (X[i] < X[i - 1])
            sorted = false;
    if (!sorted) {
        xy *p = malloc(c->n * sizeof *p);
        sx = malloc(c->n * sizeof *sx);
        sy = malloc(c->n * sizeof *sy);
        if (!p || !sx || !sy) {
            free(p);
            free(sx);
            free(sy);
            return NULL;
        }
        for (size_t i = 0; i < c->n; i++) {
            p[i].x = X[i];
            p[i].y = Y[i];
        }
        qsort(p, c->n, sizeof *p, cmp_xy);
        for (size_t i = 0; i < c->n; i++) {
            sx[i] = p[i].x;
            sy[i] = p[i].y;
        }
        free(p);
        X = sx;
        Y = sy;
    }
    /* Domains. */
    double xmin = c->xmin, xmax = c->xmax, dy0 = INFINITY, dy1 = -INFINITY;
    double dx0 = INFINITY, dx1 = -INFINITY;
    for (size_t i = 0; i < c->n; i++) {
        if (!isfinite(X[i]))
            continue;
        dx0 = fmin(dx0, X[i]);
        dx1 = fmax(dx1, X[i]);
        if (isfinite(Y[i])) {
            dy0 = fmin(dy0, Y[i] * ys);
            dy1 = fmax(dy1, Y[i] * ys);
        }
    }
    if (!isfinite(xmin))
        xmin = isfinite(dx0) ? dx0 : 0;
    if (!isfinite(xmax))
        xmax = isfinite(dx1) ? dx1 : 1;
    if (!(xmax > xmin))
        xmax = xmin + 1;
    double yt[16], ystep = 1, xt[16], xstep = 1;
    double ymin = c->ymin, ymax = c->ymax;
    size_t nyt = 0;
    if (!isfinite(ymin) || !isfinite(ymax)) {
        double lo = isfinite(ymin) ? ymin : (isfinite(dy0) ? dy0 : 0);
        double hi = isfinite(ymax) ? ymax : (isfinite(dy1) ? dy1 : 1);
        nyt = mfu__svg_nice_ticks(lo, hi, 6, yt, &ystep);
        if (nyt >= 2) {
            if (!isfinite(ymin))
                ymin = yt[0];
            if (!isfinite(ymax))
                ymax = yt[nyt - 1];
        }
    }
    if (!(ymax > ymin))
        ymax = ymin + 1;
    nyt = mfu__svg_nice_ticks(ymin, ymax, 6, yt, &ystep);
    size_t nxt = mfu__svg_nice_ticks(xmin, xmax, 8, xt, &xstep);
    double L = MFU__SVG_MARGIN_LEFT, T = MFU__SVG_MARGIN_TOP;
#define PX(v) (L + ((v)-xmin) / (xmax - xmin) * pw)
#define PY(v) (T + ph - ((v)-ymin) / (ymax - ymin) * ph)

    mfu__rbuf b = {0};
    open_svg(&b, W, H, c->title, "mfu-chart mfu-line-chart");
    mfu__rbuf_printf(&b,
                     "<rect class=\"mfu-plot\" x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" "
                     "fill=\"none\" stroke=\"#ccc\"/>",
                     L, T, pw, ph);
    for (size_t i = 0; i < nyt; i++) {
        if (yt[i] < ymin - 1e-9 * ystep || yt[i] > ymax + 1e-9 * ystep)
            continue;
        char lab[32];
        fmt_tick(lab, sizeof lab, yt[i], ystep, tick_ref(yt, nyt));
        double py = PY(yt[i]);
        mfu__rbuf_printf(&b,
                         "<line class=\"mfu-grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                         "stroke=\"#eee\"/><text class=\"mfu-tick\" x=\"%.1f\" y=\"%.1f\" "
                         "text-anchor=\"end\">%s</text>",
                         L, L + pw, py, py, L - 4, py + 4, lab);
    }
    for (size_t i = 0; i < nxt; i++) {
        if (xt[i] < xmin - 1e-9 * xstep || xt[i] > xmax + 1e-9 * xstep)
            continue;
        char lab[32];
        fmt_tick(lab, sizeof lab, xt[i], xstep, tick_ref(xt, nxt));
        double px = PX(xt[i]);
        mfu__rbuf_printf(
            &b,
            "<line class=\"mfu-xtick\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"#999\"/><text class=\"mfu-tick\" x=\"%.1f\" y=\"%.1f\" "
            "text-anchor=\"middle\">%s</text>",
            px, px, T + ph, T + ph + 4, px, T + ph + 16, lab);
    }
    mfu__rbuf_printf(
        &b, "<text class=\"mfu-axis\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">step</text>",
        L + pw / 2.0, H - 4);
    if (c->y_label) {
        mfu__rbuf_printf(&b,
                         "<text class=\"mfu-axis\" transform=\"translate(12 %.1f) rotate(-90)\" "
                         "text-anchor=\"middle\">",
                         T + ph / 2.0);
        mfu__rbuf_esc(&b, c->y_label);
        mfu__rbuf_printf(&b, "</text>");
    }
    for (size_t i = 0; i < c->nboundaries; i++) {
        double x = c->boundaries[i];
        if (!(x >= xmin && x <= xmax))
            continue;
        mfu__rbuf_printf(&b,
                         "<line class=\"mfu-boundary\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                         "y2=\"%.1f\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>",
                         PX(x), PX(x), T, T + ph);
    }
    /* The series: one path, downsampled per pixel column. */
    size_t *keep = malloc(((size_t)pw * 5 + 1) * sizeof *keep);
    if (!keep)
        b.failed = true;
    size_t nk = keep ? mfu__svg_downsample(X, Y, c->n, xmin, xmax, pw, keep) : 0;
    if (nk) {
        mfu__rbuf_printf(&b, "<path class=\"mfu-line\" fill=\"none\" stroke=\"#1f618d\" "
                             "stroke-width=\"1.2\" d=\"");
        bool pen = false;
        for (size_t j = 0; j < nk; j++) {
            if (keep[j] == SIZE_MAX) {
                pen = false;
                continue;
            }
            double yv = Y[keep[j]] * ys;
            yv = fmin(fmax(yv, ymin), ymax); /* clip to the plot */
            mfu__rbuf_printf(&b, "%s%.1f %.1f", pen ? "L" : "M", PX(X[keep[j]]), PY(yv));
            pen = true;
        }
        mfu__rbuf_printf(&b, "\"/>");
    }
    free(keep);
    hover_bands(&b, X, Y, c->n, ys, xmin, xmax, L, T, pw, ph,
                c->y_label ? c->y_label
                : c->title ? c->title
                           : "value");
    for (size_t i = 0; i < c->nmarkers; i++) {
        const mfu__svg_marker *m = &c->markers[i];
        if (!(m->x >= xmin && m->x <= xmax))
            continue;
        double px = PX(m->x);
        mfu__rbuf_printf(
            &b, "<g class=\"mfu-marker %s\"><path d=\"M%.1f %.1fl-5 -8h10z\" fill=\"%s\"/>",
            sev_class(m->severity), px, T, sev_colour(m->severity));
        if (m->label) {
            mfu__rbuf_printf(&b, "<title>");
            mfu__rbuf_esc(&b, m->label);
            mfu__rbuf_printf(&b, "</title>");
        }
        mfu__rbuf_printf(&b, "</g>");
    }
    mfu__rbuf_printf(&b, "</svg>");
#undef PX
#undef PY
    free(sx);
    free(sy);
    return mfu__rbuf_finish(&b);
}

/* ---- waterfall --------------------------------------------------------------------------- */

char *mfu__svg_waterfall(const mfu_decomposition *d, const char *title, int width, int height)
{
    if (!d)
        return NULL;
    int W = width > 0 ? width : 520, H = height > 0 ? height : 240;
    int pw = W - MFU__SVG_MARGIN_LEFT - MFU__SVG_MARGIN_RIGHT;
    int ph = H - MFU__SVG_MARGIN_TOP - MFU__SVG_MARGIN_BOTTOM;
    if (pw < 40 || ph < 20 || W > 20000 || H > 20000)
        return NULL;
    static const struct {
        mfu_term t;
        const char *label;
    } bars[] = {{MFU_TERM_CAPACITY, "capacity"},
                {MFU_TERM_FLOPS_PER_TOKEN, "workload"},
                {MFU_TERM_MFU, "utilization"},
                {MFU_TERM_PADDING, "padding"},
                {MFU_TERM_TOKENS_PER_S, "tokens/s"}};
    enum { NB = sizeof bars / sizeof bars[0] };
    double lo[NB], hi[NB], val[NB];
    bool ok[NB];
    double cum = 0, vmin = 0, vmax = 0;
    for (int i = 0; i < NB; i++) {
        double v = d->term[bars[i].t].dln;
        ok[i] = isfinite(v);
        val[i] = v;
        if (!ok[i]) {
            lo[i] = hi[i] = cum;
            continue;
        }
        if (bars[i].t == MFU_TERM_TOKENS_PER_S) { /* the total, from 0 */
            lo[i] = fmin(0, v);
            hi[i] = fmax(0, v);
        } else {
            lo[i] = fmin(cum, cum + v);
            hi[i] = fmax(cum, cum + v);
            cum += v;
        }
        vmin = fmin(vmin, lo[i]);
        vmax = fmax(vmax, hi[i]);
    }
    /* Ticks in % (what people read), placed at ln(1 + p). */
    double pt[16] = {0}, pstep = 1; /* zeroed: gcc -O3 cannot see that npt bounds the reads */
    size_t npt = mfu__svg_nice_ticks(expm1(vmin) * 100, expm1(vmax) * 100, 6, pt, &pstep);
    double ymin = vmin, ymax = vmax;
    for (size_t i = 0; i < npt; i++)
        if (pt[i] > -100) {
            double v = log1p(pt[i] / 100);
            ymin = fmin(ymin, v);
            ymax = fmax(ymax, v);
        }
    if (!(ymax > ymin))
        ymax = ymin + 0.01;
    double L = MFU__SVG_MARGIN_LEFT, T = MFU__SVG_MARGIN_TOP;
#define PY(v) (T + ph - ((v)-ymin) / (ymax - ymin) * ph)
    mfu__rbuf b = {0};
    open_svg(&b, W, H, title, "mfu-chart mfu-waterfall");
    for (size_t i = 0; i < npt; i++) {
        if (pt[i] <= -100)
            continue;
        double py = PY(log1p(pt[i] / 100));
        char lab[32];
        fmt_tick(lab, sizeof lab, pt[i], pstep, tick_ref(pt, npt));
        mfu__rbuf_printf(&b,
                         "<line class=\"mfu-grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                         "stroke=\"%s\"/><text class=\"mfu-tick\" x=\"%.1f\" y=\"%.1f\" "
                         "text-anchor=\"end\">%s%%</text>",
                         L, L + pw, py, py, pt[i] == 0 ? "#999" : "#eee", L - 4, py + 4, lab);
    }
    double slot = (double)pw / NB, bw = slot * 0.6;
    for (int i = 0; i < NB; i++) {
        double x = L + slot * i + (slot - bw) / 2;
        bool total = bars[i].t == MFU_TERM_TOKENS_PER_S;
        const char *cls = !ok[i] ? "none" : total ? "total" : val[i] >= 0 ? "pos" : "neg";
        const char *fill = !ok[i]        ? "#ddd"
                           : total       ? "#566573"
                           : val[i] >= 0 ? "#27ae60"
                                         : "#c0392b";
        double y0 = PY(hi[i]), y1 = PY(lo[i]);
        if (y1 - y0 < 1)
            y1 = y0 + 1;
        char pct[40];
        mfu__fmt_pct(pct, sizeof pct, ok[i] ? expm1(val[i]) : NAN);
        mfu__rbuf_printf(&b,
                         "<rect class=\"mfu-bar %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                         "height=\"%.1f\" fill=\"%s\"><title>%s: %s",
                         cls, x, y0, bw, y1 - y0, fill, bars[i].label, pct);
        if (ok[i])
            mfu__rbuf_printf(&b, " (Δln %+.4f)", val[i]);
        else
            mfu__rbuf_printf(&b, " (not known)");
        mfu__rbuf_printf(&b, "</title></rect>");
        mfu__rbuf_printf(&b,
                         "<text class=\"mfu-bar-label\" x=\"%.1f\" y=\"%.1f\" "
                         "text-anchor=\"middle\">%s</text>",
                         x + bw / 2, y0 - 3, pct);
        mfu__rbuf_printf(&b,
                         "<text class=\"mfu-tick\" x=\"%.1f\" y=\"%.1f\" "
                         "text-anchor=\"middle\">%s</text>",
                         x + bw / 2, T + ph + 16, bars[i].label);
    }
#undef PY
    mfu__rbuf_printf(&b, "</svg>");
    return mfu__rbuf_finish(&b);
}

/* ---- histogram --------------------------------------------------------------------------- */

char *mfu__svg_histogram(const double *v, size_t n, int bins, const char *title, int width,
                         int height)
{
    if ((n && !v) || bins < 0 || bins > 1000)
        return NULL;
    int W = width > 0 ? width : 520, H = height > 0 ? height : 220;
    int pw = W - MFU__SVG_MARGIN_LEFT - MFU__SVG_MARGIN_RIGHT;
    int ph = H - MFU__SVG_MARGIN_TOP - MFU__SVG_MARGIN_BOTTOM;
    if (pw < 40 || ph < 20 || W > 20000 || H > 20000)
        return NULL;
    double *s = malloc((n ? n : 1) * sizeof *s);
    if (!s)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]) && v[i] > 0)
            s[m++] = v[i];
    mfu__sort_doubles(s, m);
    double lo = m ? s[0] : 0, hi = m ? s[m - 1] : 1;
    double cut = m ? mfu__quantile_sorted(s, m, 0.99) * 1.5 : hi;
    bool overflow = m && hi > cut;
    if (overflow)
        hi = cut;
    if (!(hi > lo))
        hi = lo + (lo > 0 ? lo * 0.01 : 1);
    int nb = bins;
    if (nb == 0) {
        double iqr = m ? mfu__quantile_sorted(s, m, 0.75) - mfu__quantile_sorted(s, m, 0.25) : 0;
        double bwid = iqr > 0 ? 2 * iqr / cbrt((double)m) : (hi - lo) / 10;
        /* clamped as a double: a spread of 1e49 typical widths does not fit an int */
        double want = ceil((hi - lo) / bwid);
        nb = !(want >= 5) ? 5 : want > 60 ? 60 : (int)want;
    }
    size_t *cnt = calloc((size_t)nb + 1, sizeof *cnt);
    if (!cnt) {
        free(s);
        return NULL;
    }
    for (size_t i = 0; i < m; i++) {
        if (s[i] > hi) {
            cnt[nb]++;
            continue;
        }
        int k = (int)floor((s[i] - lo) / (hi - lo) * nb);
        if (k >= nb)
            k = nb - 1;
        if (k < 0)
            k = 0;
        cnt[k]++;
    }
    size_t cmax = 1;
    for (int k = 0; k <= nb; k++)
        if (cnt[k] > cmax)
            cmax = cnt[k];
    double L = MFU__SVG_MARGIN_LEFT, T = MFU__SVG_MARGIN_TOP;
    int slots = nb + (overflow ? 2 : 0); /* a one-slot gap before the overflow bar */
    double bw = (double)pw / slots;
    mfu__rbuf b = {0};
    open_svg(&b, W, H, title, "mfu-chart mfu-histogram");
    double ct[16], cstep = 1;
    size_t nct = mfu__svg_nice_ticks(0, (double)cmax, 5, ct, &cstep);
    double cmaxp = nct ? fmax(ct[nct - 1], (double)cmax) : (double)cmax;
    for (size_t i = 0; i < nct; i++) {
        double py = T + ph - ct[i] / cmaxp * ph;
        char lab[32];
        fmt_tick(lab, sizeof lab, ct[i], cstep, tick_ref(ct, nct));
        mfu__rbuf_printf(&b,
                         "<line class=\"mfu-grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                         "stroke=\"#eee\"/><text class=\"mfu-tick\" x=\"%.1f\" y=\"%.1f\" "
                         "text-anchor=\"end\">%s</text>",
                         L, L + pw, py, py, L - 4, py + 4, lab);
    }
    for (int k = 0; k <= nb; k++) {
        if (k == nb && !overflow)
            break;
        double x = L + bw * (k == nb ? nb + 1 : k);
        double h = (double)cnt[k] / cmaxp * ph;
        char e0[32], e1[32];
        fmt_value(e0, sizeof e0, lo + (hi - lo) * k / nb);
        fmt_value(e1, sizeof e1, lo + (hi - lo) * (k + 1) / nb);
        mfu__rbuf_printf(&b,
                         "<rect class=\"mfu-bar%s\" data-count=\"%zu\" x=\"%.1f\" y=\"%.1f\" "
                         "width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                         k == nb ? " overflow" : "", cnt[k], x + 0.5, T + ph - h, bw - 1, h,
                         k == nb ? "#c0392b" : "#1f618d");
        if (k == nb)
            mfu__rbuf_printf(&b, "above %s s: %zu step%s</title></rect>", e0, cnt[k],
                             cnt[k] == 1 ? "" : "s");
        else
            mfu__rbuf_printf(&b, "%s–%s s: %zu step%s</title></rect>", e0, e1, cnt[k],
                             cnt[k] == 1 ? "" : "s");
    }
    double xt[16], xstep = 1;
    size_t nxt = mfu__svg_nice_ticks(lo, hi, 6, xt, &xstep);
    for (size_t i = 0; i < nxt; i++) {
        if (xt[i] < lo - 1e-9 * xstep || xt[i] > hi + 1e-9 * xstep)
            continue;
        double px = L + (xt[i] - lo) / (hi - lo) * bw * nb;
        char lab[32];
        fmt_tick(lab, sizeof lab, xt[i], xstep, tick_ref(xt, nxt));
        mfu__rbuf_printf(
            &b, "<text class=\"mfu-tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
            px, T + ph + 16, lab);
    }
    if (overflow)
        mfu__rbuf_printf(
            &b,
            "<text class=\"mfu-tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">&gt; "
            "%.3g</text>",
            L + bw * (nb + 1.5), T + ph + 16, hi);
    mfu__rbuf_printf(&b,
                     "<text class=\"mfu-axis\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">step "
                     "time (s)</text></svg>",
                     L + pw / 2.0, H - 4);
    free(cnt);
    free(s);
    return mfu__rbuf_finish(&b);
}
