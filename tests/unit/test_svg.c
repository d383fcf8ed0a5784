/*
 * test_svg.c - the report's SVG building blocks (src/report/svg.c): well-formed output,
 * escaped text, bounded vertices with peaks kept, aligned x axes, nice ticks, waterfall and
 * histogram contents.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg.h"
#include "synth.h"

/* A small XML checker: tags balance, attribute values are quoted, every '&' starts a known
 * entity, text holds no '<' or '>'. Returns NULL when well-formed, else what is wrong. */
static const char *xml_check(const char *s)
{
    static char why[128];
    char stack[64][32];
    int depth = 0, roots = 0;
    const char *p = s;
    while (*p) {
        if (*p == '&') {
            static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
            bool ok = false;
            for (int i = 0; i < 5; i++)
                ok = ok || strncmp(p, ents[i], strlen(ents[i])) == 0;
            if (!ok) {
                snprintf(why, sizeof why, "bare & at %ld", (long)(p - s));
                return why;
            }
            p++;
            continue;
        }
        if (*p == '>') {
            snprintf(why, sizeof why, "bare > at %ld", (long)(p - s));
            return why;
        }
        if (*p != '<') {
            p++;
            continue;
        }
        p++;
        bool closing = *p == '/';
        if (closing)
            p++;
        char name[32];
        size_t n = 0;
        while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
            if (n < sizeof name - 1)
                name[n++] = *p++;
            else
                return "tag name too long";
        name[n] = 0;
        if (!n) {
            snprintf(why, sizeof why, "'<' without a tag name at %ld", (long)(p - s));
            return why;
        }
        bool self = false;
        while (*p && *p != '>') {
            if (*p == '"') {
                p++;
                while (*p && *p != '"') {
                    if (*p == '<')
                        return "'<' inside an attribute value";
                    p++;
                }
                if (!*p)
                    return "unterminated attribute";
            } else if (*p == '/' && p[1] == '>')
                self = true;
            else if (*p == '=' && p[1] != '"')
                return "unquoted attribute value";
            p++;
        }
        if (!*p)
            return "unterminated tag";
        p++;
        if (closing) {
            if (depth == 0 || strcmp(stack[depth - 1], name) != 0) {
                snprintf(why, sizeof why, "</%s> closes %s", name,
                         depth ? stack[depth - 1] : "nothing");
                return why;
            }
            depth--;
        } else if (!self) {
            if (depth == 0)
                roots++;
            if (depth == 64)
                return "too deep";
            snprintf(stack[depth++], sizeof stack[0], "%s", name);
        } else if (depth == 0)
            roots++;
    }
    if (depth)
        return "unclosed tags";
    if (roots != 1)
        return "not exactly one root element";
    return NULL;
}

static void assert_well_formed(const char *svg)
{
    assert_non_null(svg);
    const char *why = xml_check(svg);
    if (why)
        fail_msg("SVG not well-formed: %s", why);
    assert_true(strncmp(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0);
    /* The namespace is the only URL: nothing is fetched. */
    const char *ns = strstr(svg, "http");
    assert_non_null(ns);
    assert_null(strstr(ns + 1, "http"));
    assert_null(strstr(svg, "<script"));
    assert_null(strstr(svg, "@import"));
    assert_null(strstr(svg, "url("));
}

/* The vertices of the first path with class mfu-line: counts of M and L, min and max y. */
static void path_stats(const char *svg, size_t *moves, size_t *lines, double *ymin, double *ymax)
{
    const char *p = strstr(svg, "class=\"mfu-line\"");
    assert_non_null(p);
    p = strstr(p, " d=\"");
    assert_non_null(p);
    p += 4;
    *moves = *lines = 0;
    *ymin = INFINITY;
    *ymax = -INFINITY;
    while (*p && *p != '"') {
        char cmd = *p++;
        assert_true(cmd == 'M' || cmd == 'L');
        *moves += cmd == 'M';
        *lines += cmd == 'L';
        char *end;
        strtod(p, &end);
        double y = strtod(end, &end);
        *ymin = fmin(*ymin, y);
        *ymax = fmax(*ymax, y);
        p = end;
    }
}

static void line_chart_escapes_and_is_well_formed(void **state)
{
    (void)state;
    double x[50], y[50];
    for (int i = 0; i < 50; i++) {
        x[i] = i + 1;
        y[i] = i == 20 ? NAN : 0.4 + 0.01 * sin(i);
    }
    mfu__svg_marker mk[2] = {{10, "<img src=x onerror=alert(1)> & more", MFU_SEV_ERROR},
                             {30, NULL, MFU_SEV_INFO}};
    double bnd[1] = {25};
    mfu__svg_line c = {0};
    c.title = "run <script>alert('x')</script> & \"quoted\"\x01";
    c.y_label = "MFU (%)";
    c.x = x;
    c.y = y;
    c.n = 50;
    c.y_scale = 100;
    c.xmin = c.xmax = c.ymin = c.ymax = NAN;
    c.boundaries = bnd;
    c.nboundaries = 1;
    c.markers = mk;
    c.nmarkers = 2;
    char *svg = mfu__svg_line_chart(&c);
    assert_well_formed(svg);
    assert_non_null(strstr(svg, "run &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; "
                                "&quot;quoted&quot;?"));
    assert_null(strstr(svg, "<img"));
    assert_non_null(strstr(svg, "&lt;img src=x onerror=alert(1)&gt; &amp; more"));
    assert_non_null(strstr(svg, "mfu-marker sev-error"));
    assert_non_null(strstr(svg, "class=\"mfu-boundary\""));
    /* The NaN breaks the line: two sub-paths. */
    size_t moves, lines;
    double y0, y1;
    path_stats(svg, &moves, &lines, &y0, &y1);
    assert_int_equal(moves, 2);
    assert_int_equal(moves + lines, 49);
    free(svg);

    /* Bad arguments. */
    assert_null(mfu__svg_line_chart(NULL));
    c.width = 50; /* no room for a plot */
    assert_null(mfu__svg_line_chart(&c));
    c.width = 0;
    c.x = NULL;
    assert_null(mfu__svg_line_chart(&c));
    /* An empty series is a valid empty chart. */
    c.n = 0;
    svg = mfu__svg_line_chart(&c);
    assert_well_formed(svg);
    free(svg);
}

/* The text of the n-th (0-based) <title> inside an element with class cls, or "" (static). */
static const char *nth_title(const char *svg, const char *cls, size_t n)
{
    static char buf[256];
    buf[0] = '\0';
    const char *p = svg;
    for (size_t k = 0; (p = strstr(p, cls)); p++, k++) {
        if (k < n)
            continue;
        const char *t = strstr(p, "<title>");
        const char *e = t ? strstr(t, "</title>") : NULL;
        if (!e || (size_t)(e - t - 7) >= sizeof buf)
            return buf;
        memcpy(buf, t + 7, (size_t)(e - t - 7));
        buf[e - t - 7] = '\0';
        return buf;
    }
    return buf;
}

static size_t count_of(const char *svg, const char *needle)
{
    size_t k = 0;
    for (const char *p = svg; (p = strstr(p, needle)); p++)
        k++;
    return k;
}

/* Hover values: a <title> per point (few points) or per band of pixels (many), without script;
 * the label is escaped; bars say their value. */
static void hover_titles(void **state)
{
    (void)state;
    double x[5] = {10, 20, 30, 40, 50}, y[5] = {0.41, 0.425, NAN, 0.43, 0.4};
    mfu__svg_line c = {0};
    c.y_label = "MFU <%>";
    c.x = x;
    c.y = y;
    c.n = 5;
    c.y_scale = 100;
    c.xmin = c.xmax = c.ymin = c.ymax = NAN;
    char *svg = mfu__svg_line_chart(&c);
    assert_well_formed(svg);
    assert_int_equal(count_of(svg, "class=\"mfu-hover\""), 4); /* the NaN has none */
    assert_string_equal(nth_title(svg, "class=\"mfu-hover\"", 0), "MFU &lt;%&gt; at step 10: 41");
    assert_string_equal(nth_title(svg, "class=\"mfu-hover\"", 1), "MFU &lt;%&gt; at step 20: 42.5");
    assert_string_equal(nth_title(svg, "class=\"mfu-hover\"", 2), "MFU &lt;%&gt; at step 40: 43");
    /* the rectangles tile the plot from its left edge to its right edge */
    const char *h = strstr(svg, "class=\"mfu-hover\" x=\"");
    assert_true(strtod(h + strlen("class=\"mfu-hover\" x=\""), NULL) == MFU__SVG_MARGIN_LEFT);
    free(svg);

    /* 100000 points: one title per band of MFU__SVG_HOVER_PX pixels, with the range */
    size_t n = 100000;
    double *bx = malloc(n * sizeof *bx), *by = malloc(n * sizeof *by);
    assert_true(bx && by);
    for (size_t i = 0; i < n; i++) {
        bx[i] = (double)i;
        by[i] = i == 150 ? 9e6 : 1e6 + (double)(i % 7);
    }
    c.y_label = "tokens/s";
    c.x = bx;
    c.y = by;
    c.n = n;
    c.y_scale = 1;
    svg = mfu__svg_line_chart(&c);
    assert_well_formed(svg);
    size_t bands = count_of(svg, "class=\"mfu-hover\"");
    assert_int_equal(bands,
                     (720 - MFU__SVG_MARGIN_LEFT - MFU__SVG_MARGIN_RIGHT) / MFU__SVG_HOVER_PX);
    /* the first of 160 bands holds steps 0..624 and the spike at 150 */
    assert_string_equal(nth_title(svg, "class=\"mfu-hover\"", 0),
                        "tokens/s at steps 0–624: 1.000M to 9.000M (625 steps)");
    free(svg);
    free(bx);
    free(by);

    mfu_decomposition d;
    memset(&d, 0, sizeof d);
    d.term[MFU_TERM_MFU].dln = log(0.92);
    d.term[MFU_TERM_FLOPS_PER_TOKEN].dln = log(1.36);
    d.term[MFU_TERM_TOKENS_PER_S].dln = log(0.92 * 1.36);
    d.term[MFU_TERM_PADDING].dln = NAN;
    svg = mfu__svg_waterfall(&d, NULL, 0, 0);
    assert_well_formed(svg);
    assert_non_null(strstr(svg, "<title>workload: +36 % (Δln +0.3075)</title>"));
    assert_non_null(strstr(svg, "<title>padding: "));
    assert_non_null(strstr(svg, "(not known)</title>"));
    free(svg);

    double v[6] = {1.0, 1.0, 1.1, 1.2, 1.2, 1.2};
    svg = mfu__svg_histogram(v, 6, 2, NULL, 0, 0);
    assert_well_formed(svg);
    assert_non_null(strstr(svg, "<title>1–1.1 s: 2 steps</title>"));
    assert_non_null(strstr(svg, "<title>1.1–1.2 s: 4 steps</title>"));
    free(svg);
}

static void million_points_bounded_peaks_kept(void **state)
{
    (void)state;
    size_t n = 1000000;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    assert_true(x && y);
    syn_rng r = {1};
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)i;
        y[i] = 1 + 0.01 * syn_normal(&r);
    }
    y[500000] = 10;  /* one spike */
    y[700001] = -5;  /* one dip */
    size_t px = 656; /* 720 − margins */
    size_t *keep = malloc((5 * px + 1) * sizeof *keep);
    size_t nk = mfu__svg_downsample(x, y, n, 0, (double)(n - 1), (int)px, keep);
    assert_true(nk <= 4 * px);
    assert_true(nk >= 2 * px); /* first and last of every column at least */
    bool spike = false, dip = false;
    for (size_t j = 0; j < nk; j++) {
        spike = spike || keep[j] == 500000;
        dip = dip || keep[j] == 700001;
        if (j)
            assert_true(keep[j] > keep[j - 1]); /* in order */
    }
    assert_true(spike && dip);
    free(keep);

    mfu__svg_line c = {0};
    c.title = "tokens/s";
    c.x = x;
    c.y = y;
    c.n = n;
    c.xmin = c.xmax = c.ymin = c.ymax = NAN;
    char *svg = mfu__svg_line_chart(&c);
    assert_well_formed(svg);
    size_t moves, lines;
    double ylo, yhi;
    path_stats(svg, &moves, &lines, &ylo, &yhi);
    assert_int_equal(moves, 1);
    assert_true(moves + lines <= 4 * px);
    /* The spike reaches the top of the plot and the dip the bottom: the y axis is 'nice'
     * around [-5, 10] and both extremes are drawn. */
    assert_true(ylo <= MFU__SVG_MARGIN_TOP + 0.5);
    assert_true(yhi >= 220 - MFU__SVG_MARGIN_BOTTOM - 0.5);
    assert_true(strlen(svg) < 200000);
    free(svg);

    /* Unsorted x (a restarted run) is sorted first; NaN everywhere but two points. */
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)((i * 7919) % n);
        y[i] = i % 1000 ? NAN : 1.0;
    }
    svg = mfu__svg_line_chart(&c);
    assert_well_formed(svg);
    path_stats(svg, &moves, &lines, &ylo, &yhi);
    assert_true(moves + lines <= 5 * px + 1);
    free(svg);
    free(x);
    free(y);
}

/* x positions of the x-axis ticks of an SVG, into out (max 32). */
static size_t xtick_positions(const char *svg, double *out)
{
    size_t n = 0;
    const char *p = svg;
    while ((p = strstr(p, "class=\"mfu-xtick\" x1=\"")) && n < 32) {
        p += strlen("class=\"mfu-xtick\" x1=\"");
        out[n++] = strtod(p, NULL);
    }
    return n;
}

static void aligned_x_axes(void **state)
{
    (void)state;
    double x1[100], y1[100], x2[40], y2[40];
    for (int i = 0; i < 100; i++) {
        x1[i] = 100 + i * 10;
        y1[i] = 0.4;
    }
    for (int i = 0; i < 40; i++) {
        x2[i] = 500 + i * 5;
        y2[i] = 3e6 + i * 1e4;
    }
    mfu__svg_line a = {0}, b = {0};
    a.x = x1;
    a.y = y1;
    a.n = 100;
    b.x = x2;
    b.y = y2;
    b.n = 40;
    a.xmin = b.xmin = 100;
    a.xmax = b.xmax = 1090;
    a.ymin = a.ymax = b.ymin = b.ymax = NAN;
    b.y_label = "tokens/s";
    char *sa = mfu__svg_line_chart(&a), *sb = mfu__svg_line_chart(&b);
    double ta[32], tb[32];
    size_t na = xtick_positions(sa, ta), nb = xtick_positions(sb, tb);
    assert_true(na >= 3);
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++)
        assert_true(ta[i] == tb[i]);
    /* Ticks every 200 steps from 200: step 200 is 100/990 of the plot width from the left. */
    double pw = 720 - MFU__SVG_MARGIN_LEFT - MFU__SVG_MARGIN_RIGHT;
    assert_true(fabs(ta[0] - (MFU__SVG_MARGIN_LEFT + 100.0 / 990 * pw)) < 0.06);
    assert_true(fabs(ta[1] - ta[0] - 200.0 / 990 * pw) < 0.11);
    /* tokens/s ticks are written with an SI suffix. */
    assert_non_null(strstr(sb, "M</text>"));
    free(sa);
    free(sb);
}

static void nice_ticks(void **state)
{
    (void)state;
    double t[16], step;
    size_t n = mfu__svg_nice_ticks(0, 0.97, 6, t, &step);
    assert_true(fabs(step - 0.2) < 1e-12);
    assert_int_equal(n, 6);
    assert_true(t[0] == 0 && fabs(t[5] - 1.0) < 1e-12);
    n = mfu__svg_nice_ticks(3.13e6, 3.58e6, 6, t, &step);
    assert_true(fabs(step - 1e5) < 1e-3);
    assert_true(fabs(t[0] - 3.1e6) < 1e-3 && fabs(t[n - 1] - 3.6e6) < 1e-3);
    n = mfu__svg_nice_ticks(-8, 36, 6, t, &step);
    assert_true(step == 10 && t[0] == -10 && t[n - 1] == 40);
    for (size_t i = 0; i + 1 < n; i++)
        assert_true(t[i + 1] > t[i]);
    n = mfu__svg_nice_ticks(5, 5, 6, t, &step); /* one value */
    assert_true(n >= 2 && t[0] <= 5 && t[n - 1] >= 5);
    assert_int_equal(mfu__svg_nice_ticks(NAN, 1, 6, t, &step), 0);
    assert_int_equal(mfu__svg_nice_ticks(0, 1, 1, t, &step), 0);
    for (double hi = 0.001; hi < 1e9; hi *= 3.7) { /* never more than asked */
        n = mfu__svg_nice_ticks(0, hi, 6, t, &step);
        assert_true(n >= 2 && n <= 6);
        assert_true(t[0] <= 0 && t[n - 1] >= hi * (1 - 1e-12));
    }
}

static void waterfall(void **state)
{
    (void)state;
    mfu_decomposition d;
    memset(&d, 0, sizeof d);
    d.term[MFU_TERM_MFU].dln = log(0.92);
    d.term[MFU_TERM_FLOPS_PER_TOKEN].dln = log(1.36);
    d.term[MFU_TERM_TOKENS_PER_S].dln = log(0.92 * 1.36);
    char *svg = mfu__svg_waterfall(&d, "seq 4096 <-> 1024", 0, 0);
    assert_well_formed(svg);
    assert_non_null(strstr(svg, "seq 4096 &lt;-&gt; 1024"));
    assert_non_null(strstr(svg, ">+36 %</text>"));
    assert_non_null(strstr(svg, ">\xe2\x88\x92"
                                "8 %</text>"));
    assert_non_null(strstr(svg, ">+25 %</text>"));
    size_t bars = 0;
    for (const char *p = svg; (p = strstr(p, "class=\"mfu-bar ")); p++)
        bars++;
    assert_int_equal(bars, 5);
    assert_non_null(strstr(svg, "mfu-bar neg"));
    assert_non_null(strstr(svg, "mfu-bar pos"));
    assert_non_null(strstr(svg, "mfu-bar total"));
    assert_non_null(strstr(svg, ">0%</text>")); /* the zero line is labelled */
    free(svg);
    /* Without FLOPs per token only the total is known. */
    d.term[MFU_TERM_MFU].dln = NAN;
    d.term[MFU_TERM_CAPACITY].dln = NAN;
    d.term[MFU_TERM_FLOPS_PER_TOKEN].dln = NAN;
    svg = mfu__svg_waterfall(&d, NULL, 0, 0);
    assert_well_formed(svg);
    assert_non_null(strstr(svg, "mfu-bar none"));
    free(svg);
    assert_null(mfu__svg_waterfall(NULL, "x", 0, 0));
}

static void histogram(void **state)
{
    (void)state;
    size_t n = 1005;
    double *v = malloc((n + 3) * sizeof *v);
    syn_rng r = {5};
    for (size_t i = 0; i < 1000; i++)
        v[i] = 0.37 * exp(0.02 * syn_normal(&r));
    for (size_t i = 1000; i < n; i++)
        v[i] = 10; /* five stalls */
    v[n] = NAN;    /* ignored */
    v[n + 1] = -1;
    v[n + 2] = 0;
    char *svg = mfu__svg_histogram(v, n + 3, 0, "step times <b>", 0, 0);
    assert_well_formed(svg);
    size_t total = 0, bars = 0, overflow = 0;
    for (const char *p = svg; (p = strstr(p, "data-count=\"")); p++) {
        size_t c = (size_t)strtoul(p + strlen("data-count=\""), NULL, 10);
        total += c;
        bars++;
        if (strncmp(p - strlen("mfu-bar overflow\" "), "mfu-bar overflow", 16) == 0)
            overflow = c;
    }
    assert_int_equal(total, 1005);
    assert_int_equal(overflow, 5);
    assert_true(bars >= 6 && bars <= 61);
    assert_non_null(strstr(svg, "step times &lt;b&gt;"));
    free(svg);
    svg = mfu__svg_histogram(v, 1000, 12, NULL, 0, 0);
    bars = 0;
    for (const char *p = svg; (p = strstr(p, "data-count=\"")); p++)
        bars++;
    assert_int_equal(bars, 12);
    free(svg);
    svg = mfu__svg_histogram(NULL, 0, 0, "empty", 0, 0);
    assert_well_formed(svg);
    free(svg);
    assert_null(mfu__svg_histogram(v, n, -1, NULL, 0, 0));
    free(v);
}

/* One step time 1e49 typical widths away from the others (a nanoGPT line "time 561e50ms"):
 * the automatic bin count is clamped before it becomes an int (UBSan caught the cast). */
static void histogram_of_a_huge_spread(void **state)
{
    (void)state;
    const double v[] = {1.0999, 1.1, 1.1001, 1.1002, 1.0998, 5.61e49};
    char *svg = mfu__svg_histogram(v, MFU__ARRAY_LEN(v), 0, NULL, 0, 0);
    assert_well_formed(svg);
    size_t total = 0, bars = 0;
    for (const char *p = svg; (p = strstr(p, "data-count=\"")); p++) {
        total += (size_t)strtoul(p + strlen("data-count=\""), NULL, 10);
        bars++;
    }
    assert_int_equal(total, MFU__ARRAY_LEN(v));
    assert_true(bars >= 5 && bars <= 62);
    free(svg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(line_chart_escapes_and_is_well_formed),
        cmocka_unit_test(million_points_bounded_peaks_kept),
        cmocka_unit_test(aligned_x_axes),
        cmocka_unit_test(nice_ticks),
        cmocka_unit_test(waterfall),
        cmocka_unit_test(histogram),
        cmocka_unit_test(hover_titles),
        cmocka_unit_test(histogram_of_a_huge_spread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
