/*
 * cmd_watch.c - `mfu watch LOG`: the dashboard's live view in a terminal. Follows a training
 * log like `tail -F` (one ingest session; new complete lines are fed as they arrive, see
 * mfu_ingest_peek) and redraws a compact frame: Unicode sparklines of MFU and tokens/s over the
 * whole run, the newest figures and the headline (the steady median), step time, model and
 * hardware TFLOP/s per device.
 *
 * Output: on a terminal, the frame is redrawn in place (ANSI cursor moves) at most every
 * --interval seconds; otherwise (a pipe, a file) one plain line is printed whenever steps
 * arrived. --once prints one frame of what the log holds now and exits.
 *
 * Figures: every step's come from the figures module (src/figures), under the run context the
 * options give (the same options and the same figures as `mfu report`), extended as rows
 * arrive; without a model, MFU is the log's own under its framework's convention, said so. The
 * medians are the report's headline: mfu_report_compute on the run read so far (warm-up and
 * settling steps left out), with its findings, at most every WATCH_ANALYSIS_EVERY_S (or 10 x
 * its last duration) while steps arrive (plain mode: one line per new finding).
 *
 * Following: the ingest module's follower (ingest/follow.h), the one `mfu serve LOG` uses: a
 * truncated or rewritten file, or a new file at the path (rotation), starts the run again; a
 * partial last line waits for its newline (--once reads the file as it is); compressed logs
 * are read whole again whenever they change; while the format is still being detected, the
 * file is read whole so that a small log's few steps show.
 */
#define _DEFAULT_SOURCE /* nanosleep, sigaction, fileno, ioctl(TIOCGWINSZ) */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/run_context.h"
#include "figures/figures.h"
#include "ingest/follow.h"
#include "mfu/analysis.h"
#include "util/util.h"

/* Named limits. */
#define WATCH_MIN_INTERVAL_S 0.05
#define WATCH_MAX_WIDTH 400 /* terminal columns used, at most */
/* The headline and findings are recomputed at most this often, and at most every 10 x the
 * last report's duration (a run of millions of steps takes seconds to analyse). */
#define WATCH_ANALYSIS_EVERY_S 5.0
#define WATCH_SHOW_FINDINGS 4   /* findings listed in the terminal view, newest first */
#define WATCH_SEEN_FINDINGS 256 /* plain mode: findings remembered as printed */

static const cli_optspec specs[] = {
    RUN_CONTEXT_OPTSPECS, {"format", true}, {"map", true},   {"interval", true},
    {"once", false},      {"plain", false}, {"width", true},
};

static void help(void)
{
    printf("usage: mfu watch LOG [MODEL] [--device NAME --devices N] [--once] [OPTIONS]\n\n"
           "Follow a training log as it grows (like tail -F) and show MFU and tokens/s live:\n"
           "sparklines over the whole run, the newest figures and the steady medians (the\n"
           "headline of 'mfu report'), step time, model and hardware FLOP/s per device. On a\n"
           "terminal the view is redrawn in place; otherwise one line is printed whenever\n"
           "steps arrive. Ctrl-C ends it. The figures are those of 'mfu report' with the same\n"
           "options; without a model, MFU is the log's own (its framework's convention).\n\n"
           "%s%s"
           "Log:\n"
           "  --format NAME            read as this format instead of detecting it\n"
           "  --map FIELD=COLUMN       column mapping for the jsonl / csv formats\n"
           "View:\n"
           "  --once                   print one view of the log as it is now and exit\n"
           "  --interval S             seconds between reads of the log (default 1)\n"
           "  --plain                  plain lines even on a terminal\n"
           "  --width N                columns to use (default: the terminal's, else 80)\n\n"
           "Examples:\n"
           "  mfu watch train.log --model llama3-8b --seq 8192 --device h100-sxm --devices 8\n"
           "  mfu watch logs/gpt2.log --once\n"
           "  mfu watch run.log --plain --interval 5 >> mfu-live.txt\n\n"
           "exit status: 0 ok (also after Ctrl-C), 1 the log could not be read or a device is\n"
           "unknown, 2 bad usage.\n",
           MODEL_ARGS_HELP, RUN_CONTEXT_DEVICE_HELP);
}

/* ---- what to compute with ----------------------------------------------------------------- */

typedef struct watch_cfg {
    const char *path;
    run_context ctx; /* the run context options: the report's input */
    int width;       /* terminal columns */
    bool tty;        /* redraw in place */
    double interval_s;
} watch_cfg;

/* ---- per-step figures (the figures module's) ----------------------------------------------- */

typedef struct figures {
    const mfu_run *run; /* the run the figures are of (the session's; NULL none) */
    mfu__fctx *fig;     /* NULL before the first row */
    mfu__fcols cols;
    mfu_run_meta meta; /* the header the context was made from */
    size_t rows;
    char error[MFU_ERROR_MESSAGE_MAX]; /* why there are no figures ("" when there are) */
} figures;

static void figures_free(figures *f)
{
    if (f->fig) {
        mfu__fctx_free(f->fig);
        free(f->fig);
    }
    mfu__fcols_free(&f->cols);
    memset(f, 0, sizeof *f);
}

/* Bring the figures up to run: extended from the rows that may have changed (a repeated step
 * merges into one of the last MFU_RUN_DEDUP_WINDOW rows), made again when the run is another
 * one or its header changed. false when out of memory. */
static bool figures_update(figures *f, const mfu_run *run, const watch_cfg *c)
{
    size_t n = mfu_run_count(run);
    const mfu_run_meta *m = mfu_run_meta_get(run);
    bool fresh = !f->fig || run != f->run || n < f->rows || memcmp(m, &f->meta, sizeof *m) != 0;
    if (n == 0) {
        figures_free(f);
        return true;
    }
    mfu_error e = {0};
    mfu_status st;
    if (fresh) {
        figures_free(f);
        f->fig = calloc(1, sizeof *f->fig);
        if (!f->fig)
            return false;
        st = mfu__fctx_init(f->fig, run, &c->ctx.in, &e);
        if (st == MFU_OK)
            st = mfu__figures_compute(f->fig, &f->cols, run, &e);
    } else {
        size_t from = f->rows > MFU_RUN_DEDUP_WINDOW ? f->rows - MFU_RUN_DEDUP_WINDOW : 0, ch;
        st = mfu__figures_update(f->fig, &f->cols, run, from, &ch, &e);
    }
    f->run = run;
    f->meta = *m;
    f->rows = n;
    if (st == MFU_E_NOMEM)
        return false;
    if (st != MFU_OK) {
        mfu__strlcpy(f->error, e.message, sizeof f->error);
        mfu__fcols_free(&f->cols);
    } else {
        f->error[0] = '\0';
    }
    return true;
}

/* The newest finite value of column k; NaN when none. */
static double newest(const figures *f, mfu__fcol k)
{
    for (size_t i = f->cols.n; i-- > 0;)
        if (isfinite(f->cols.v[k][i]))
            return f->cols.v[k][i];
    return NAN;
}

/* ---- the headline and findings (the report of the run read so far) -------------------------- */

typedef struct watch_analysis {
    mfu_report *r;  /* NULL before the first report, or when it failed */
    size_t rows;    /* rows it saw */
    double at_s;    /* monotonic time it ran */
    double cost_s;  /* how long it took */
    char note[600]; /* why there are no medians or findings, "" otherwise */
    size_t nseen;   /* plain mode: findings printed, by kind and first step */
    struct {
        char kind[MFU_FINDING_KIND_MAX];
        int64_t first;
    } seen[WATCH_SEEN_FINDINGS];
} watch_analysis;

/* The report again when the run changed, at most every WATCH_ANALYSIS_EVERY_S (force: now). */
static void analyse(watch_analysis *w, const watch_cfg *c, const figures *f, const mfu_run *run,
                    bool force)
{
    if (!run || f->rows == 0 || f->rows == w->rows)
        return;
    double now = mfu__now();
    /* a long run takes long to analyse: then wait ten times as long as it took */
    double every =
        10 * w->cost_s > WATCH_ANALYSIS_EVERY_S ? 10 * w->cost_s : WATCH_ANALYSIS_EVERY_S;
    if (!force && w->r && now - w->at_s < every)
        return;
    w->rows = f->rows;
    w->at_s = now;
    w->note[0] = '\0';
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    o.intervals = false; /* the view shows medians and findings only */
    mfu_report_input in = c->ctx.in;
    in.analysis = &o;
    mfu_error err = {0};
    mfu_report *r = NULL;
    mfu_status st = mfu_report_compute(run, &in, &r, &err);
    w->cost_s = mfu__now() - now;
    if (st != MFU_OK) {
        snprintf(w->note, sizeof w->note, "findings: %s", err.message);
        return;
    }
    mfu_report_free(w->r);
    w->r = r;
}

static const mfu_analysis *analysis_of(const watch_analysis *w)
{
    return w && w->r ? mfu_report_analysis(w->r) : NULL;
}

/* The headline (steady median) of series s, NaN before the first report. */
static double median_of(const watch_analysis *w, mfu_report_series s)
{
    return w && w->r ? mfu_report_summary(w->r, s).median : NAN;
}

/* Indices of up to max findings, newest (by last step) first. */
static size_t newest_findings(const mfu_analysis *a, size_t *idx, size_t max)
{
    size_t n = mfu_analysis_finding_count(a), k = 0;
    for (size_t i = 0; i < n; i++) {
        const mfu_finding *fi = mfu_analysis_finding(a, i);
        size_t pos = k < max ? k++ : max;
        while (pos > 0 && mfu_analysis_finding(a, idx[pos - 1])->last_step < fi->last_step) {
            if (pos < max)
                idx[pos] = idx[pos - 1];
            pos--;
        }
        if (pos < max)
            idx[pos] = i;
    }
    return k;
}

/* Copy s into buf (size n), cut to at most cols characters, "..." marking a cut. UTF-8 aware:
 * a character is never split. */
static void fit(char *buf, size_t n, const char *s, int cols)
{
    size_t chars = 0;
    for (const unsigned char *q = (const unsigned char *)s; *q; q++)
        chars += (*q & 0xc0) != 0x80;
    size_t keep = chars <= (size_t)cols ? chars : (size_t)(cols > 3 ? cols - 3 : 0);
    size_t len = 0, seen = 0;
    for (const unsigned char *q = (const unsigned char *)s; *q; q++) {
        if ((*q & 0xc0) != 0x80 && seen++ == keep)
            break;
        if (len + 4 >= n)
            break;
        buf[len++] = (char)*q;
    }
    while (len > 0 && ((unsigned char)buf[len - 1] & 0xc0) == 0xc0)
        len--; /* a lead byte whose continuation did not fit */
    if (keep < chars && len + 3 < n) {
        memcpy(buf + len, "...", 3);
        len += 3;
    }
    buf[len] = '\0';
}

/* ---- drawing -------------------------------------------------------------------------------- */

static const char *const bars[8] = {"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83",
                                    "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86",
                                    "\xe2\x96\x87", "\xe2\x96\x88"}; /* U+2581..U+2588 */

/* A sparkline of column k over the whole run in `cols` characters into buf: each character
 * is the mean of its share of the steps; the bars span the smallest to the largest mean, but
 * never less than a quarter of the largest (so a 1 % ripple stays flat while a 10 % dip
 * shows); a space where a share has no value. */
static void sparkline(const figures *f, mfu__fcol k, int cols, char *buf, size_t n)
{
    buf[0] = '\0';
    size_t rows = f->cols.n;
    if (cols < 1 || rows == 0)
        return;
    size_t nb = rows < (size_t)cols ? rows : (size_t)cols;
    double means[WATCH_MAX_WIDTH], top = 0, bottom = INFINITY;
    for (size_t b = 0; b < nb; b++) {
        size_t lo = b * rows / nb, hi = (b + 1) * rows / nb;
        double sum = 0;
        size_t m = 0;
        for (size_t i = lo; i < hi; i++)
            if (isfinite(f->cols.v[k][i])) {
                sum += f->cols.v[k][i];
                m++;
            }
        means[b] = m ? sum / (double)m : NAN;
        if (isfinite(means[b]) && means[b] > top)
            top = means[b];
        if (isfinite(means[b]) && means[b] < bottom)
            bottom = means[b];
    }
    if (top - bottom < 0.25 * top)
        bottom = 0.75 * top;
    size_t len = 0;
    for (size_t b = 0; b < nb && len + 4 < n; b++) {
        const char *g = " ";
        if (isfinite(means[b]) && top > 0) {
            double r = (means[b] - bottom) / (top - bottom);
            int lvl = (int)(r * 7 + 0.5);
            g = bars[lvl < 0 ? 0 : lvl > 7 ? 7 : lvl];
        }
        size_t gl = strlen(g);
        memcpy(buf + len, g, gl);
        len += gl;
    }
    buf[len] = '\0';
}

static void fmt_pct(char *b, size_t n, double v)
{
    if (isfinite(v))
        snprintf(b, n, "%.1f%%", 100 * v);
    else
        snprintf(b, n, "-");
}

static void fmt_rate(char *b, size_t n, double v)
{
    if (isfinite(v))
        cli_fmt_si(b, n, v, "");
    else
        snprintf(b, n, "-");
}

static void fmt_secs(char *b, size_t n, double v)
{
    if (!isfinite(v))
        snprintf(b, n, "-");
    else if (v < 1)
        snprintf(b, n, "%.1f ms", v * 1e3);
    else
        snprintf(b, n, "%.3f s", v);
}

static void fmt_flops(char *b, size_t n, double v)
{
    mfu__fmt_si(b, n, v, "FLOP/s"); /* "312 TFLOP/s", "3.20 GFLOP/s"; "-" unknown */
}

/* The frame, one line per call of emit (no newline in the text). */
typedef struct frame_out {
    FILE *out;
    bool ansi; /* clear each line's rest (redraw in place) */
} frame_out;

static void emit(const frame_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(const frame_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(o->out, fmt, ap);
    va_end(ap);
    fputs(o->ansi ? "\033[K\n" : "\n", o->out);
}

/* The context line: devices, device and peak, where MFU comes from. */
static void context_lines(const frame_out *o, const watch_cfg *c, const figures *f)
{
    if (!f->fig) {
        if (f->error[0])
            emit(o, "context    %s", f->error);
        return;
    }
    const mfu_report_context *x = &f->fig->c;
    char a[32], peak[32] = "-";
    if (x->has_model) {
        cli_fmt_si(a, sizeof a, x->model_flops_per_token, "FLOP");
        emit(o, "model      %s, seq %lld: %s per token (%s)", x->model[0] ? x->model : "(flags)",
             (long long)x->seq, a, mfu_convention_name(x->convention));
    } else if (c->ctx.has_model) {
        emit(o, "model      no FLOPs per token: the log gives no sequence length; give --seq");
    }
    if (isfinite(x->peak_flops_per_s))
        mfu__fmt_si_digits(peak, sizeof peak, x->peak_flops_per_s, "FLOP/s", 4);
    char dev[64] = "unknown (figures per device; give --devices N)";
    if (isfinite(x->devices))
        snprintf(dev, sizeof dev, "%g", x->devices);
    emit(o, "devices    %s%s%s, peak %s per device%s", dev, x->device ? " x " : "",
         x->device ? x->device->id : "", peak,
         x->mfu_from_log ? "  (MFU: the log's own, its framework's convention)" : "");
    if (!x->has_model && !x->mfu_from_log)
        emit(o, "           MFU needs a model and a device (or a log that prints its own)");
}

static void draw_frame(const frame_out *o, watch_cfg *c, figures *f, const mfu_run *run,
                       const watch_analysis *wa, const char *status)
{
    const mfu_run_meta *meta = mfu_run_meta_get(run);
    const int64_t *steps = mfu_run_steps(run);
    char now[16] = "";
    time_t t = time(NULL);
    struct tm tmv;
    if (localtime_r(&t, &tmv))
        strftime(now, sizeof now, "%H:%M:%S", &tmv);
    if (f->rows)
        emit(o, "mfu watch  %s  %s, %zu steps (%lld-%lld)  %s", c->path,
             meta->format[0] ? meta->format : "?", f->rows, (long long)steps[0],
             (long long)steps[f->rows - 1], now);
    else
        emit(o, "mfu watch  %s  %s  %s", c->path, status ? status : "waiting for steps", now);
    context_lines(o, c, f);
    emit(o, "%s", "");
    int spark_cols = c->width - 11 - 34;
    if (spark_cols < 8)
        spark_cols = 8;
    if (spark_cols > WATCH_MAX_WIDTH - 1)
        spark_cols = WATCH_MAX_WIDTH - 1;
    char sp[WATCH_MAX_WIDTH * 4 + 1], a[32], b[32];
    bool per_dev = isnan(newest(f, MFU__FC_TOKENS_PER_S));
    mfu__fcol tcol = per_dev ? MFU__FC_TOKENS_PER_S_PER_DEVICE : MFU__FC_TOKENS_PER_S;
    mfu_report_series tser = per_dev ? MFU_RS_TOKENS_PER_S_PER_DEVICE : MFU_RS_TOKENS_PER_S;
    sparkline(f, MFU__FC_MFU, spark_cols, sp, sizeof sp);
    fmt_pct(a, sizeof a, newest(f, MFU__FC_MFU));
    fmt_pct(b, sizeof b, median_of(wa, MFU_RS_MFU));
    emit(o, "MFU        %s  now %-8s median %s", sp, a, b);
    sparkline(f, tcol, spark_cols, sp, sizeof sp);
    fmt_rate(a, sizeof a, newest(f, tcol));
    fmt_rate(b, sizeof b, median_of(wa, tser));
    emit(o, "%s %s  now %-8s median %s", per_dev ? "tok/s/dev " : "tokens/s  ", sp, a, b);
    fmt_secs(a, sizeof a, newest(f, MFU__FC_STEP_TIME_S));
    fmt_secs(b, sizeof b, median_of(wa, MFU_RS_STEP_TIME_S));
    emit(o, "step time  now %-10s median %s", a, b);
    fmt_flops(a, sizeof a, median_of(wa, MFU_RS_MODEL_FLOPS_PER_S_PER_DEVICE));
    fmt_flops(b, sizeof b, median_of(wa, MFU_RS_HARDWARE_FLOPS_PER_S_PER_DEVICE));
    emit(o, "FLOP/s     model %s, hardware %s per device (median)", a, b);
    double loss = newest(f, MFU__FC_LOSS);
    if (isfinite(loss))
        emit(o, "loss       %.4g", loss);
    if (wa && wa->r)
        emit(o, "           (medians: the steady steps of the %zu steps read, as 'mfu report')",
             wa->rows);
    const mfu_analysis *an = analysis_of(wa);
    if (wa && wa->note[0]) {
        emit(o, "%s", "");
        emit(o, "%s", wa->note);
    } else if (an) {
        size_t idx[WATCH_SHOW_FINDINGS];
        size_t k = newest_findings(an, idx, WATCH_SHOW_FINDINGS);
        size_t total = mfu_analysis_finding_count(an);
        emit(o, "%s", "");
        if (total == 0)
            emit(o, "findings   none so far (%zu steps analysed)", wa->rows);
        else
            emit(o, "findings   %zu, newest first (%zu steps analysed)", total, wa->rows);
        char line[1024], text[1024];
        for (size_t i = 0; i < k; i++) {
            const mfu_finding *fi = mfu_analysis_finding(an, idx[i]);
            snprintf(text, sizeof text, "%-7s %s, steps %lld-%lld: %s",
                     mfu_severity_name(fi->severity), fi->kind, (long long)fi->first_step,
                     (long long)fi->last_step, fi->summary);
            fit(line, sizeof line, text, c->width - 11);
            emit(o, "           %s", line);
            if (fi->next_step[0]) {
                snprintf(text, sizeof text, "next: %s", fi->next_step);
                fit(line, sizeof line, text, c->width - 19);
                emit(o, "                   %s", line);
            }
        }
    }
    if (status && f->rows)
        emit(o, "%s", status);
}

/* One plain line: the newest step and its figures. */
static void draw_line(FILE *out, figures *f, const watch_analysis *wa, const mfu_run *run)
{
    if (!f->rows)
        return;
    char a[32], b[32], c1[32], d[32], e[32];
    bool per_dev = isnan(newest(f, MFU__FC_TOKENS_PER_S));
    fmt_pct(a, sizeof a, newest(f, MFU__FC_MFU));
    fmt_pct(b, sizeof b, median_of(wa, MFU_RS_MFU));
    fmt_rate(c1, sizeof c1,
             newest(f, per_dev ? MFU__FC_TOKENS_PER_S_PER_DEVICE : MFU__FC_TOKENS_PER_S));
    fmt_rate(d, sizeof d,
             median_of(wa, per_dev ? MFU_RS_TOKENS_PER_S_PER_DEVICE : MFU_RS_TOKENS_PER_S));
    fmt_secs(e, sizeof e, newest(f, MFU__FC_STEP_TIME_S));
    fprintf(out, "step %lld: MFU %s (median %s), tokens/s%s %s (median %s), step time %s\n",
            (long long)mfu_run_steps(run)[f->rows - 1], a, b, per_dev ? " per device" : "", c1, d,
            e);
    fflush(out);
}

/* Plain mode: one line for each finding not printed before (by kind and first step). */
static void print_new_findings(FILE *out, watch_analysis *wa)
{
    const mfu_analysis *an = analysis_of(wa);
    if (!an)
        return;
    for (size_t i = 0; i < mfu_analysis_finding_count(an); i++) {
        const mfu_finding *fi = mfu_analysis_finding(an, i);
        bool seen = false;
        for (size_t j = 0; j < wa->nseen && !seen; j++)
            seen = wa->seen[j].first == fi->first_step && strcmp(wa->seen[j].kind, fi->kind) == 0;
        if (seen)
            continue;
        if (wa->nseen < WATCH_SEEN_FINDINGS) {
            mfu__strlcpy(wa->seen[wa->nseen].kind, fi->kind, sizeof wa->seen[0].kind);
            wa->seen[wa->nseen++].first = fi->first_step;
        }
        fprintf(out, "finding: %s %s, steps %lld-%lld: %s (next: %s)\n",
                mfu_severity_name(fi->severity), fi->kind, (long long)fi->first_step,
                (long long)fi->last_step, fi->summary, fi->next_step);
    }
    fflush(out);
}

/* ---- the command --------------------------------------------------------------------------- */

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !stop_requested)
        ;
}

static int terminal_width(const cli_args *a, bool tty)
{
    int64_t w = 0;
    bool has = false;
    if (!cli_get_pos_int64("watch", a, "width", &w, &has))
        return -1;
    if (!has && tty) {
        struct winsize ws;
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
            w = ws.ws_col;
    }
    if (!has && w <= 0) {
        const char *cols = getenv("COLUMNS");
        if (!cols || !mfu__parse_int64(cols, &w) || w <= 0)
            w = 80;
    }
    if (w < 40)
        w = 40;
    if (w > WATCH_MAX_WIDTH)
        w = WATCH_MAX_WIDTH;
    return (int)w;
}

static int run_watch(watch_cfg *c, mfu__follow *w, bool once)
{
    figures f;
    memset(&f, 0, sizeof f);
    watch_analysis *wa = calloc(1, sizeof *wa);
    if (!wa)
        return cli_failf("watch", CLI_EXIT_FAIL, "out of memory");
    mfu_error err = {0};
    int rc = CLI_EXIT_OK;
    frame_out o = {stdout, c->tty && !once};
    if (o.ansi)
        fputs("\033[?25l\033[H\033[2J", stdout); /* hide the cursor, clear */
    bool first = true;
    for (;;) {
        mfu__follow_event ev;
        mfu_status st = mfu__follow_poll(w, once, &ev, &err);
        if (st != MFU_OK) {
            rc = cli_fail("watch", &err, CLI_EXIT_FAIL);
            break;
        }
        bool changed = ev.fed || ev.fresh;
        if (ev.fresh)
            figures_free(&f); /* the run is another one (its address may be the old one's) */
        const mfu_run *run = mfu__follow_run(w);
        size_t before = f.rows;
        if (run && (changed || first) && !figures_update(&f, run, c)) {
            rc = cli_failf("watch", CLI_EXIT_FAIL, "out of memory holding %zu steps",
                           mfu_run_count(run));
            break;
        }
        if (once) {
            if (!run || f.rows == 0) {
                rc = cli_failf("watch", CLI_EXIT_FAIL,
                               "%s: no steps%s; check the log, or force its format with --format",
                               c->path, run ? "" : " (no such file)");
                break;
            }
            analyse(wa, c, &f, run, true);
            draw_frame(&o, c, &f, run, wa, NULL);
            break;
        }
        size_t seen_rows = wa->rows;
        if (run)
            analyse(wa, c, &f, run, false);
        bool reanalysed = wa->rows != seen_rows;
        if (o.ansi) {
            if (changed || first || reanalysed) {
                fputs("\033[H", stdout);
                mfu_run *empty = run ? NULL : mfu_run_new();
                draw_frame(&o, c, &f, run ? run : empty, run ? wa : NULL,
                           run ? NULL : "waiting for the file to appear");
                mfu_run_free(empty);
                fputs("\033[J", stdout);
                fflush(stdout);
            }
        } else if (run && f.rows != before) {
            analyse(wa, c, &f, run, false);
            draw_line(stdout, &f, wa, run);
        }
        if (!o.ansi && reanalysed)
            print_new_findings(stdout, wa);
        first = false;
        if (stop_requested)
            break;
        sleep_s(c->interval_s);
        if (stop_requested)
            break;
    }
    if (o.ansi)
        fputs("\033[?25h\n", stdout); /* show the cursor again */
    fflush(stdout);
    figures_free(&f);
    mfu_report_free(wa->r);
    free(wa);
    return rc;
}

int cmd_watch(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse("watch", argc, argv, specs, MFU__ARRAY_LEN(specs), &a))
        return CLI_EXIT_USAGE;
    if (a.help) {
        help();
        return CLI_EXIT_OK;
    }
    if (a.npos != 1)
        return cli_failf("watch", CLI_EXIT_USAGE,
                         a.npos ? "one LOG at a time (see 'mfu watch --help')"
                                : "no LOG given; pass the log file to follow (see 'mfu watch "
                                  "--help')");
    if (strcmp(a.pos[0], "-") == 0)
        return cli_failf("watch", CLI_EXIT_USAGE,
                         "watch follows a file; for a stream, write it to a file with tee and "
                         "watch that");
    watch_cfg c;
    memset(&c, 0, sizeof c);
    c.path = a.pos[0];
    c.interval_s = 1;
    bool has_iv = false;
    if (!cli_get_pos_double("watch", &a, "interval", &c.interval_s, &has_iv))
        return CLI_EXIT_USAGE;
    if (c.interval_s < WATCH_MIN_INTERVAL_S)
        return cli_failf("watch", CLI_EXIT_USAGE, "--interval must be at least %g s",
                         WATCH_MIN_INTERVAL_S);
    bool once = cli_has(&a, "once");
    c.tty = isatty(STDOUT_FILENO) && !cli_has(&a, "plain");
    c.width = terminal_width(&a, c.tty);
    if (c.width < 0)
        return CLI_EXIT_USAGE;
    /* run_context_build owns nothing yet when it fails; everything after goes through done */
    int rc = run_context_build("watch", &a, &c.ctx);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (c.ctx.in.device) { /* an unknown device is an error now, before the log exists */
        mfu_device_slot slot;
        const mfu_device_info *dev = NULL;
        mfu_error e = {0};
        if (mfu_device_resolve(c.ctx.in.device, &slot, &dev, &e) != MFU_OK) {
            rc = cli_fail("watch", &e, CLI_EXIT_FAIL);
            goto done;
        }
    }
    cli_maps maps;
    if (!cli_get_maps("watch", &a, &maps)) {
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    /* a live view waits for a last line's newline; --once reads the file as it is */
    mfu__follow_opts fo;
    memset(&fo, 0, sizeof fo);
    fo.ingest.format = cli_get(&a, "format");
    fo.ingest.map = maps.v;
    fo.ingest.nmap = maps.n;
    fo.preview_while_detecting = true; /* a small log's few steps show */
    mfu__follow *w = NULL;
    mfu_error err = {0};
    mfu_status st = mfu__follow_new(c.path, &fo, &w, &err); /* checks --format and --map now */
    if (st != MFU_OK) {
        rc = cli_fail("watch", &err, st == MFU_E_NOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE);
        goto done;
    }
    if (!once) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }
    rc = run_watch(&c, w, once);
    mfu__follow_free(w);
done:
    run_context_free(&c.ctx);
    return rc;
}
