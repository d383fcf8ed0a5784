/*
 * report/svg.h - SVG building blocks for the HTML report (internal).
 *
 * Three charts, each returned as one self-contained <svg> element (a NUL-terminated string
 * the caller free()s; NULL when out of memory, when the output would pass MFU__SVG_MAX_BYTES,
 * or for invalid arguments):
 *   - a line chart of a series over steps, with segment boundaries and finding markers;
 *   - a waterfall of a decomposition (the terms of Δln tokens/s, labelled in %);
 *   - a histogram of step times.
 *
 * Every text that reaches the SVG (titles, labels, marker text) is escaped (& < > " ' and
 * control characters), so run names and log text cannot inject markup or script. No network,
 * no external fonts (font-family is a system stack), no script. Elements carry classes
 * (mfu-line, mfu-boundary, mfu-marker sev-warning, mfu-bar pos/neg, ...) so the page's CSS can
 * restyle them; colours are also given as attributes so a chart stands alone.
 *
 * Aligned x axes: charts with the same width and the same [xmin, xmax] put every step at the
 * same horizontal pixel (the plot area has fixed margins). Long series are downsampled per
 * pixel column keeping the first, minimum, maximum and last point of each column, so peaks
 * survive and a path never has more than 4 vertices per plot pixel (+ gap moves).
 */
#ifndef MFU_REPORT_SVG_H
#define MFU_REPORT_SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "mfu/analysis.h"
#include "util/util.h"

/* Hover values: the line chart cuts its plot into bands this many pixels wide, each with an
 * invisible <rect class="mfu-hover"> whose <title> ("MFU (%) at steps 1200–1210: 44.8 to 45.3
 * (11 steps)") a browser shows as a tooltip; waterfall and histogram bars carry a <title> of
 * their own value. No script. */
#define MFU__SVG_HOVER_PX 4

/* Largest SVG one call produces. */
#define MFU__SVG_MAX_BYTES (16u << 20)
/* Fixed plot margins (pixels) that keep x axes aligned across charts of one width. */
#define MFU__SVG_MARGIN_LEFT 64
#define MFU__SVG_MARGIN_RIGHT 16
#define MFU__SVG_MARGIN_TOP 28
#define MFU__SVG_MARGIN_BOTTOM 34

/* A bounded growable text buffer (the SVG charts and the HTML page): appends past max bytes
 * (0 = MFU__SVG_MAX_BYTES) or a failed allocation set failed and are dropped. */
typedef struct mfu__rbuf {
    char *p; /* NUL-terminated once anything was appended */
    size_t len, cap, max;
    bool failed;
} mfu__rbuf;

void mfu__rbuf_put(mfu__rbuf *b, const char *s, size_t k);
void mfu__rbuf_puts(mfu__rbuf *b, const char *s); /* NULL appends nothing */
void mfu__rbuf_printf(mfu__rbuf *b, const char *fmt, ...) MFU__PRINTF(2, 3);
/* s escaped for XML/HTML text and attribute values: & < > " ' as entities, control bytes
 * (but tab and newline) and DEL as '?'. NULL appends nothing. */
void mfu__rbuf_esc(mfu__rbuf *b, const char *s);
/* The text (the caller free()s it), or NULL after a failure (the buffer is freed). */
char *mfu__rbuf_finish(mfu__rbuf *b);

typedef struct mfu__svg_marker {
    double x;          /* step */
    const char *label; /* tooltip text (escaped); NULL for none */
    mfu_severity severity;
} mfu__svg_marker;

typedef struct mfu__svg_line {
    const char *title;   /* chart title (escaped); NULL for none */
    const char *y_label; /* axis label, e.g. "MFU (%)" */
    const double *x, *y; /* n points; y NaN = gap; x need not be sorted */
    size_t n;
    double y_scale;           /* values are multiplied by this for display (100 for %); 0 = 1 */
    double xmin, xmax;        /* x domain; NaN = from the data. Same for aligned charts. */
    double ymin, ymax;        /* y domain (after scaling); NaN = from the data, with nice ends */
    const double *boundaries; /* x of segment boundaries (dashed vertical lines) */
    size_t nboundaries;
    const mfu__svg_marker *markers;
    size_t nmarkers;
    int width, height; /* pixels; 0 = 720 × 220 */
} mfu__svg_line;

/* The line chart. NULL on error (see the file comment). */
char *mfu__svg_line_chart(const mfu__svg_line *c);

/* A waterfall of d: capacity, FLOPs per token, utilization and padding as floating bars in log
 * space, then the total change of tokens/s; every bar labelled in % (exp(Δln) − 1). */
char *mfu__svg_waterfall(const mfu_decomposition *d, const char *title, int width, int height);

/* A histogram of step times in seconds (non-finite and non-positive values ignored). bins 0
 * = automatic (Freedman-Diaconis, 5..60). Values above the 99th percentile × 1.5 go to one
 * overflow bar at the right, so one stall does not flatten the rest. Each bar carries
 * data-count="N". */
char *mfu__svg_histogram(const double *v, size_t n, int bins, const char *title, int width,
                         int height);

/* "Nice" ticks covering [lo, hi] (Heckbert): at most max_ticks values, written to out,
 * returned count; *step gets the spacing. 0 when lo/hi are not finite or max_ticks < 2. */
size_t mfu__svg_nice_ticks(double lo, double hi, size_t max_ticks, double *out, double *step);

/* Downsample for a plot px columns wide: indices into x/y of the points kept, in order: per
 * pixel column the first, minimum, maximum and last point. A break in the line (NaN y) is an
 * entry SIZE_MAX before the next kept point. x should be sorted; the result never has more
 * than 5 × px + 1 entries (unsorted input is cut there). keep must hold that many. */
size_t mfu__svg_downsample(const double *x, const double *y, size_t n, double xmin, double xmax,
                           int px, size_t *keep);

#endif
