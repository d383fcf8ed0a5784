/*
 * ingest.c - an ingest session: read inputs, detect the format, hand lines to it, count.
 *
 * Detection. Until a format is chosen, each cleaned line is scored by every format's detect()
 * and kept (its raw bytes) in a bounded hold buffer. The format is chosen
 *   - at once when forced (opts->format; a forced format with a prescan hook gets the window
 *     held for it first);
 *   - early, when the leader has scored a step line, has at least 5 step lines' worth of score
 *     and leads the runner-up by 2 step lines (a plain log decides within its first step
 *     lines); the last resort (generic) early only when no other format scored anything in
 *     GENERIC_EARLY_LINES of its step lines;
 *   - at the end of the window (MFU_INGEST_DETECT_LINES lines or MFU_INGEST_DETECT_BYTES
 *     held) or of the input: the best format that scored a step line; else each format that
 *     scored hints, best first, is tried on the held lines (a trial: a scratch session) and
 *     the first that reads a step wins; else the last resort if it has step lines; else, past
 *     the window, the hint leader (its steps may come later), and at the end of the input an
 *     error that names the closest formats and why each failed (diagnose());
 *   - a generic reader (jsonl, csv: mfu__format.generic) competes only while no specific
 *     format has scored a step line, so Lightning's metrics.csv header wins over its rows; the
 *     last resort scores only lines that no specific format scores;
 *   - past the window, at the first later line that any format scores (lines past the window
 *     that no format scored are not held, so they are not replayed).
 * The held lines are then replayed through the chosen format in order, and reading goes on
 * line by line. Memory: the hold buffer, one line buffer and the format's state; a trial
 * holds one more state and a scratch run of the window's rows.
 *
 * Lines whose carriage returns were pasted as the two characters "^M" are cut there as at a
 * real '\r' once such a line is seen among the first MFU_INGEST_DETECT_LINES.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/fieldmap.h"
#include "ingest/internal.h"
#include "run/step.h"
#include "util/file.h"

/* A held line: bytes follow the header in the hold buffer. */
typedef struct held {
    long lineno;
    size_t len;
} held;

struct mfu__ictx {
    struct mfu_ingest *ing;
    const mfu__line *ln;
    int verdict; /* 0 ignored, 1 used, 2 skipped */
};

struct mfu_ingest {
    mfu_ingest_opts opts;
    char *map_store; /* copies of the --map strings */
    const char *map_ptrs[MFU_INGEST_MAX_MAP];
    size_t max_line, detect_lines;

    const mfu__format *fmt; /* chosen format, NULL while detecting */
    void *state;
    bool state_live;
    long *scores;     /* per registry entry, while detecting */
    long *step_lines; /* per registry entry: lines it scored MFU__DETECT_STEP */
    long scored_lines;
    bool other_scored;   /* a format other than the last resort has scored a line */
    size_t *lr_off;      /* hold offsets of the lines whose last-resort score is not counted yet */
    size_t lr_n, lr_cap; /* (lr_flush) */
    bool window_over;
    bool holding; /* a forced format with a prescan hook: its window is being held */
    bool decided; /* the end-of-window decision (with its trials) was made */
    bool caret_m; /* carriage returns pasted as "^M": lines are cut there */
    long caret_checks;
    char diag[MFU_ERROR_MESSAGE_MAX]; /* why no format read the held lines, "" when unknown */

    unsigned char *hold; /* held lines while detecting */
    size_t hold_n, hold_cap;

    char *clean_buf; /* cleaned text of the current line (max_line + 1) */
    mfu_run *run;
    mfu_ingest_stats stats;
    const char *source; /* current input name */
    long size_hint;     /* bytes of the current input when known (a plain file), else 0 */
    mfu_error pending;  /* detail of a format's fatal error (mfu__fail_line) */
    bool failed;
    /* The physical line the last used / skipped piece belonged to, and which it was: a line
     * cut into pieces by \r (tqdm redraws) counts once, used when any piece was used. */
    long counted_lineno;
    int counted_verdict;
};

/* ---- calls for formats ------------------------------------------------------------------ */

void mfu__used(mfu__ictx *c)
{
    if (c->verdict == 0)
        c->verdict = 1;
}

/* Keep a skipped line's reason in the stats (the first few) and tell opts.on_skip. */
static void note_skip(mfu_ingest *ing, long line, const char *reason)
{
    mfu_ingest_stats *st = &ing->stats;
    if (st->nskip_samples < MFU_INGEST_SKIP_SAMPLES) {
        mfu_ingest_skip *k = &st->skip_samples[st->nskip_samples++];
        k->line = line;
        mfu__strlcpy(k->reason, reason, sizeof k->reason);
    }
    if (ing->opts.on_skip)
        ing->opts.on_skip(ing->opts.on_skip_ctx, line, reason);
}

void mfu__skip(mfu__ictx *c, const char *fmt, ...)
{
    c->verdict = 2;
    mfu_ingest_stats *st = &c->ing->stats;
    if (st->nskip_samples < MFU_INGEST_SKIP_SAMPLES || c->ing->opts.on_skip) {
        char reason[sizeof st->skip_samples[0].reason];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(reason, sizeof reason, fmt, ap);
        va_end(ap);
        note_skip(c->ing, c->ln ? c->ln->lineno : 0, reason);
    }
}

void mfu__note(mfu__ictx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->ing->stats.note, sizeof c->ing->stats.note, fmt, ap);
    va_end(ap);
}

mfu_status mfu__fail_line(mfu__ictx *c, mfu_status code, const char *fmt, ...)
{
    mfu_error *e = &c->ing->pending;
    char msg[MFU_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    long line = mfu__lineno(c);
    if (line > 0)
        mfu__fail(e, code, line, "%s:%ld: %s", mfu__source_name(c), line, msg);
    else
        mfu__fail(e, code, 0, "%s: %s", mfu__source_name(c), msg);
    return code;
}

mfu_run_meta *mfu__meta(mfu__ictx *c)
{
    return mfu_run_meta_mut(c->ing->run);
}

void mfu__convention(mfu__ictx *c, const char *text)
{
    mfu_run_meta *m = mfu_run_meta_mut(c->ing->run);
    if (!m->convention[0])
        mfu__strlcpy(m->convention, text, sizeof m->convention);
}

const mfu_run *mfu__run(const mfu__ictx *c)
{
    return c->ing->run;
}

long mfu__lineno(const mfu__ictx *c)
{
    return c->ln ? c->ln->lineno : 0;
}

const char *mfu__source_name(const mfu__ictx *c)
{
    return c->ing->source ? c->ing->source : "-";
}

mfu_status mfu__emit(mfu__ictx *c, const mfu_step *in)
{
    mfu_step s = *in;
    const mfu__line *ln = c->ln;
    const mfu_run_meta *m = mfu_run_meta_get(c->ing->run);
    /* mfu_run_append refuses implausible values (plausible.c) and drops other infinities */
    if (c->ing->fmt->raw_emit)
        goto append;
    if (ln) {
        if (s.rank < 0)
            s.rank = ln->rank;
        if (isnan(s.time_s))
            s.time_s = ln->prefix_time_s;
    }
    if (!isnan(s.mfu) && s.mfu < 0) { /* -100%: "peak unknown" / not measured yet */
        s.mfu = NAN;
        s.flags |= MFU_STEP_MFU_SENTINEL;
    }
    if (isnan(s.tokens)) {
        double seqs = !isnan(s.samples)     ? s.samples
                      : m->global_batch > 0 ? (double)m->global_batch
                                            : NAN;
        if (m->seq_len > 0 && !isnan(seqs)) {
            s.tokens = seqs * (double)m->seq_len;
            s.flags |= MFU_STEP_TOKENS_DERIVED;
        } else if (!isnan(m->tokens_per_step)) {
            s.tokens = m->tokens_per_step;
            s.flags |= MFU_STEP_TOKENS_DERIVED;
        }
    }
append:;
    bool merged = false;
    mfu_error e; /* filled by mfu_run_append when it fails, read only then */
    mfu_status st = mfu_run_append(c->ing->run, &s, &merged, &e);
    if (st == MFU_E_RANGE) { /* not a measurement: the line is skipped with the reason */
        mfu__skip(c, "%s", e.message);
        return MFU_OK;
    }
    if (st == MFU_E_LIMIT)
        return mfu__fail_line(c, st,
                              "the run reached its step limit (%zu steps); split the log or "
                              "raise the limit (max_steps)",
                              mfu_run_count(c->ing->run));
    if (st != MFU_OK)
        return mfu__fail_line(c, st, "%s", e.message);
    if (merged)
        c->ing->stats.merged++;
    mfu__used(c);
    return MFU_OK;
}

mfu_status mfu__emit_rank_obs(mfu__ictx *c, const mfu_rank_obs *in)
{
    size_t n = mfu_run_count(c->ing->run);
    if (n == 0) {
        mfu__skip(c, "a per-rank observation before any step");
        return MFU_OK;
    }
    mfu_rank_obs o = *in;
    o.row = n - 1;
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status st = mfu_run_rank_obs_append(c->ing->run, &o, &e);
    if (st != MFU_OK)
        return mfu__fail_line(c, st, "%s", e.message);
    mfu__used(c);
    return MFU_OK;
}

/* ---- session ---------------------------------------------------------------------------- */

static mfu_status copy_map(mfu_ingest *ing, const mfu_ingest_opts *o, mfu_error *err)
{
    if (o->nmap == 0)
        return MFU_OK;
    if (!o->map || o->nmap > MFU_INGEST_MAX_MAP)
        return mfu__fail_field(err, MFU_E_INVALID, "--map",
                               "at most %d --map entries are allowed; put several pairs in one "
                               "entry separated by commas",
                               MFU_INGEST_MAX_MAP);
    size_t total = 0;
    for (size_t i = 0; i < o->nmap; i++) {
        if (!o->map[i])
            return mfu__fail_field(err, MFU_E_INVALID, "--map", "--map entry %zu is NULL", i);
        total += strlen(o->map[i]) + 1;
    }
    ing->map_store = malloc(total);
    if (!ing->map_store)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    char *p = ing->map_store;
    for (size_t i = 0; i < o->nmap; i++) {
        size_t n = strlen(o->map[i]) + 1;
        memcpy(p, o->map[i], n);
        ing->map_ptrs[i] = p;
        p += n;
    }
    ing->opts.map = ing->map_ptrs;
    ing->opts.nmap = o->nmap;
    return MFU_OK;
}

static mfu_status start_format(mfu_ingest *ing, const mfu__format *f, mfu_error *err)
{
    ing->fmt = f;
    if (f->state_size) {
        ing->state = calloc(1, f->state_size);
        if (!ing->state)
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    }
    if (f->init) {
        mfu_status st = f->init(ing->state, &ing->opts, err);
        if (st != MFU_OK)
            return st;
    }
    ing->state_live = true;
    mfu_run_meta *m = mfu_run_meta_mut(ing->run);
    mfu__strlcpy(m->format, f->name, sizeof m->format);
    mfu__strlcpy(ing->stats.format, f->name, sizeof ing->stats.format);
    return MFU_OK;
}

static void list_formats(char *buf, size_t n)
{
    buf[0] = '\0';
    for (size_t i = 0; i < mfu__format_count(); i++)
        mfu__appendf(buf, n, "%s%s", i ? ", " : "", mfu__format_at(i)->name);
}

mfu_status mfu_ingest_new(const mfu_ingest_opts *opts, mfu_ingest **out, mfu_error *err)
{
    if (!out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_ingest_new: out must not be NULL");
    *out = NULL;
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    if (opts)
        o = *opts;
    if (o.max_line_bytes != 0 && o.max_line_bytes < 64)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "line limit %zu is below 64 bytes; pass 0 for the default (%ld)",
                         o.max_line_bytes, (long)MFU_INGEST_MAX_LINE_BYTES);
    mfu_ingest *ing = calloc(1, sizeof *ing);
    if (!ing)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    ing->opts = o;
    ing->opts.map = NULL;
    ing->opts.nmap = 0;
    ing->opts.format = NULL; /* not kept: the chosen format is */
    ing->max_line = o.max_line_bytes ? o.max_line_bytes : (size_t)MFU_INGEST_MAX_LINE_BYTES;
    ing->detect_lines = o.detect_lines ? o.detect_lines : MFU_INGEST_DETECT_LINES;
    mfu_status st = copy_map(ing, &o, err);
    if (st != MFU_OK)
        goto fail;
    if (ing->opts.nmap) { /* check the map now: usage errors before any input is read */
        mfu__fieldmap fm;
        st = mfu__fieldmap_parse(&fm, ing->opts.map, ing->opts.nmap, err);
        if (st != MFU_OK)
            goto fail;
    }
    ing->run = mfu_run_new();
    ing->clean_buf = malloc(ing->max_line + 1);
    ing->scores = calloc(mfu__format_count(), sizeof *ing->scores);
    ing->step_lines = calloc(mfu__format_count(), sizeof *ing->step_lines);
    if (!ing->run || !ing->clean_buf || !ing->scores || !ing->step_lines) {
        st = mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
        goto fail;
    }
    if (o.max_steps) {
        st = mfu_run_set_max_steps(ing->run, o.max_steps, err);
        if (st != MFU_OK)
            goto fail;
    }
    if (o.format && o.format[0] && mfu__strcasecmp(o.format, "auto") != 0) {
        const mfu__format *f = mfu__format_find(o.format);
        if (!f) {
            char names[512];
            list_formats(names, sizeof names);
            st = mfu__fail_field(err, MFU_E_UNKNOWN, "--format",
                                 "unknown format '%s'; use one of: auto, %s", o.format, names);
            goto fail;
        }
        st = start_format(ing, f, err);
        if (st != MFU_OK)
            goto fail;
        ing->stats.detected = false;
        ing->holding = f->prescan != NULL; /* it learns the log from the first lines */
    } else {
        ing->stats.detected = true;
    }
    *out = ing;
    return MFU_OK;
fail:
    mfu_ingest_free(ing);
    return st;
}

void mfu_ingest_free(mfu_ingest *ing)
{
    if (!ing)
        return;
    if (ing->fmt && ing->state_live && ing->fmt->cleanup)
        ing->fmt->cleanup(ing->state);
    free(ing->state);
    free(ing->scores);
    free(ing->step_lines);
    free(ing->hold);
    free(ing->lr_off);
    free(ing->clean_buf);
    free(ing->map_store);
    mfu_run_free(ing->run);
    free(ing);
}

/* Count what a piece of physical line lineno did (verdict 1 used, 2 skipped, 0 ignored). Each
 * physical line counts once in used or skipped, used when any of its pieces was; ignored is
 * what is left of the lines read (settle_counts), so blank lines and lines of other output
 * are ignored, and read = used + ignored + skipped + too_long always holds. */
static void count_line(mfu_ingest *ing, long lineno, int verdict)
{
    if (verdict == 0)
        return;
    if (lineno == ing->counted_lineno && ing->counted_verdict) {
        if (verdict == 1 && ing->counted_verdict == 2) { /* used wins over skipped */
            ing->stats.skipped--;
            ing->stats.used++;
            ing->counted_verdict = 1;
        }
        return;
    }
    if (verdict == 1)
        ing->stats.used++;
    else
        ing->stats.skipped++;
    ing->counted_lineno = lineno;
    ing->counted_verdict = verdict;
}

/* ignored = the lines read that were neither used, skipped nor too long. */
static void settle_counts(mfu_ingest *ing)
{
    mfu_ingest_stats *st = &ing->stats;
    long rest = st->lines - st->used - st->skipped - st->too_long;
    st->ignored = rest > 0 ? rest : 0;
}

/* Hand one cleaned line to the chosen format and count what it did. */
static mfu_status dispatch(mfu_ingest *ing, const mfu__line *ln, mfu_error *err)
{
    mfu__ictx c = {ing, ln, 0};
    ing->pending.code = MFU_OK; /* mfu__fail_line fills every field when it is used */
    mfu_status st = ln->len ? ing->fmt->line(ing->state, &c, ln) : MFU_OK;
    if (st != MFU_OK) {
        ing->failed = true;
        if (ing->pending.code == st) {
            if (err)
                *err = ing->pending;
            return st;
        }
        return mfu__fail(err, st, ln->lineno, "%s:%ld: %s line could not be read (%s)", ing->source,
                         ln->lineno, ing->fmt->name, mfu_strerror(st));
    }
    count_line(ing, ln->lineno, c.verdict);
    return MFU_OK;
}

static mfu_status hold_line(mfu_ingest *ing, const char *text, size_t len, long lineno,
                            bool lr_pending)
{
    if (lr_pending && ing->lr_n == ing->lr_cap) { /* its last-resort score: lr_flush() */
        size_t cap = ing->lr_cap ? ing->lr_cap * 2 : 256;
        size_t *o = realloc(ing->lr_off, cap * sizeof *o);
        if (!o)
            return MFU_E_NOMEM;
        ing->lr_off = o;
        ing->lr_cap = cap;
    }
    size_t need = sizeof(held) + len;
    if (ing->hold_n + need > ing->hold_cap) {
        size_t cap = ing->hold_cap ? ing->hold_cap : 64 * 1024;
        while (cap < ing->hold_n + need)
            cap *= 2;
        unsigned char *h = realloc(ing->hold, cap);
        if (!h)
            return MFU_E_NOMEM;
        ing->hold = h;
        ing->hold_cap = cap;
    }
    held hd = {lineno, len};
    if (lr_pending)
        ing->lr_off[ing->lr_n++] = ing->hold_n;
    memcpy(ing->hold + ing->hold_n, &hd, sizeof hd);
    memcpy(ing->hold + ing->hold_n + sizeof hd, text, len);
    ing->hold_n += need;
    return MFU_OK;
}

/* Hand the lines held in src's hold buffer to dst's format, in order: its prescan hook first
 * (when it has one), then line() through dispatch(). src and dst may be the same session. */
static mfu_status replay(mfu_ingest *src, mfu_ingest *dst, mfu_error *err)
{
    for (int pass = dst->fmt->prescan ? 0 : 1; pass < 2; pass++) {
        size_t off = 0;
        while (off < src->hold_n) {
            held hd;
            memcpy(&hd, src->hold + off, sizeof hd);
            /* the cleaner reads len bytes of the held text and writes only into clean_buf */
            const char *text = (const char *)src->hold + off + sizeof hd;
            off += sizeof hd + hd.len;
            mfu__line ln;
            mfu__clean_line(text, hd.len, hd.lineno, dst->clean_buf, &ln);
            if (pass == 0) {
                if (ln.len)
                    dst->fmt->prescan(dst->state, &ln);
                continue;
            }
            mfu_status st = dispatch(dst, &ln, err);
            if (st != MFU_OK)
                return st;
        }
    }
    return MFU_OK;
}

static void drop_hold(mfu_ingest *ing)
{
    free(ing->hold);
    ing->hold = NULL;
    ing->hold_n = ing->hold_cap = 0;
    free(ing->lr_off);
    ing->lr_off = NULL;
    ing->lr_n = ing->lr_cap = 0;
}

/* Choose the format at registry index best (or keep the forced one: best < 0) and replay the
 * held lines through it. */
static mfu_status choose(mfu_ingest *ing, long best, mfu_error *err)
{
    mfu_status st = MFU_OK;
    if (best >= 0)
        st = start_format(ing, mfu__format_at((size_t)best), err);
    ing->holding = false;
    if (st == MFU_OK)
        st = replay(ing, ing, err);
    drop_hold(ing);
    return st;
}

/* The formats a decision tries at most (the registry holds fewer; registry.c checks it). */
#define TRIAL_MAX 64

/* What a trial of one format on the held lines gave. */
typedef struct trial_result {
    bool done;
    long steps;   /* rows of the scratch run */
    long used;    /* lines it used (steps or side lines) */
    long skipped; /* lines it recognised but could not read */
    long first_skip_line;
    char first_skip[120];
} trial_result;

/* Read the held lines with format f in a scratch session (its own state and run; the line
 * buffer is shared, the hold buffer only read) and say what it found. A fatal error of the
 * format counts as no step. */
static void trial(mfu_ingest *ing, const mfu__format *f, trial_result *r)
{
    memset(r, 0, sizeof *r);
    r->done = true;
    mfu_ingest *t = calloc(1, sizeof *t);
    if (!t)
        return;
    t->opts = ing->opts;
    t->max_line = ing->max_line;
    t->detect_lines = ing->detect_lines;
    t->source = ing->source;
    t->clean_buf = ing->clean_buf;
    t->run = mfu_run_new();
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (t->run && start_format(t, f, &e) == MFU_OK && replay(ing, t, &e) == MFU_OK && f->finish) {
        mfu__ictx c = {t, NULL, 0};
        (void)f->finish(t->state, &c);
    }
    r->steps = (long)mfu_run_count(t->run);
    r->used = t->stats.used;
    r->skipped = t->stats.skipped;
    if (t->stats.nskip_samples) {
        r->first_skip_line = t->stats.skip_samples[0].line;
        mfu__strlcpy(r->first_skip, t->stats.skip_samples[0].reason, sizeof r->first_skip);
    }
    t->clean_buf = NULL; /* the session's */
    t->opts.map = NULL;
    mfu_ingest_free(t);
}

static long last_resort_index(void)
{
    for (size_t i = 0; i < mfu__format_count(); i++)
        if (mfu__format_at(i)->last_resort)
            return (long)i;
    return -1;
}

/* Count the last resort's scores of the held lines that detect_line left to it (lr_pending):
 * before anything reads scores[lr] or step_lines[lr]. Cleaning is a function of the bytes and
 * the line number, so each line is scored as detect_line would have scored it. */
static void lr_flush(mfu_ingest *ing)
{
    long lr = last_resort_index();
    for (size_t k = 0; lr >= 0 && k < ing->lr_n; k++) {
        size_t off = ing->lr_off[k];
        held hd;
        memcpy(&hd, ing->hold + off, sizeof hd);
        mfu__line ln;
        mfu__clean_line((const char *)ing->hold + off + sizeof hd, hd.len, hd.lineno,
                        ing->clean_buf, &ln);
        int sc = mfu__format_at((size_t)lr)->detect(&ln);
        if (sc > 0) {
            ing->scores[lr] += sc;
            ing->step_lines[lr] += sc >= MFU__DETECT_STEP;
        }
    }
    ing->lr_n = 0;
}

static long best_index(const mfu_ingest *ing, long *best_score, long *second)
{
    /* Generic readers count only while no specific format has a step line's worth of score;
     * the last resort is never the leader here (see decide()). */
    bool specific_step = false;
    for (size_t i = 0; i < mfu__format_count(); i++)
        if (!mfu__format_at(i)->generic && ing->scores[i] >= MFU__DETECT_STEP)
            specific_step = true;
    long bi = -1, bs = 0, s2 = 0;
    for (size_t i = 0; i < mfu__format_count(); i++) {
        long s = ing->scores[i];
        const mfu__format *f = mfu__format_at(i);
        if (f->last_resort || (specific_step && f->generic))
            continue;
        if (s > bs) {
            s2 = bs;
            bs = s;
            bi = (long)i;
        } else if (s > s2) {
            s2 = s;
        }
    }
    *best_score = bs;
    *second = s2;
    return bi;
}

/* The message of diagnose(): the closest formats from their trials and what would help. */
static void write_diag(mfu_ingest *ing, const trial_result *tr)
{
    size_t n = mfu__format_count();
    char *d = ing->diag;
    size_t cap = sizeof ing->diag;
    snprintf(d, cap, "no known training-log format in %ld lines", ing->scored_lines);
    int shown = 0;
    bool taken[TRIAL_MAX] = {false};
    long lr = last_resort_index();
    for (int k = 0; k < 2; k++) { /* the two that recognised most of the log */
        long bi = -1, bv = 0;
        for (size_t i = 0; i < n && i < TRIAL_MAX; i++) {
            if (taken[i] || !tr[i].done || (long)i == lr)
                continue;
            long v = tr[i].skipped * 4 + tr[i].used * 2 + ing->scores[i];
            if (v > bv) {
                bv = v;
                bi = (long)i;
            }
        }
        if (bi < 0)
            break;
        taken[bi] = true;
        const trial_result *r = &tr[bi];
        const char *name = mfu__format_at((size_t)bi)->name;
        mfu__appendf(d, cap, "%s %s: ", shown ? ";" : ". Closest:", name);
        if (r->skipped)
            mfu__appendf(d, cap, "%ld line%s of its shape unread (line %ld: %.90s)", r->skipped,
                         r->skipped == 1 ? "" : "s", r->first_skip_line, r->first_skip);
        else if (r->used)
            mfu__appendf(d, cap, "%ld of its side lines (timers, banner, arguments), no step line",
                         r->used);
        else
            mfu__appendf(d, cap, "some lines look like it but none is a step it reads");
        shown++;
    }
    if (lr >= 0 && tr[lr].done && tr[lr].steps > 0)
        mfu__appendf(d, cap,
                     "%s generic: %ld lines with a step counter but no step time, rate or "
                     "timestamp (--format generic reads them as they are)",
                     shown ? ";" : ". Closest:", tr[lr].steps);
    mfu__appendf(d, cap,
                 ". %s with --format NAME (mfu convert --list-formats); for a trainer mfu does "
                 "not know, name its keys: --format generic --map step=KEY,step_time_s=KEY (or "
                 "tokens_per_s=KEY)",
                 shown ? "If it is one of them, check those lines or force it" : "Force a format");
}

/* Nothing read the held lines: try every format on them (this is rare and only on failure)
 * and keep the message of write_diag(). */
static void diagnose(mfu_ingest *ing, trial_result *tr)
{
    size_t n = mfu__format_count();
    for (size_t i = 0; i < n && i < TRIAL_MAX; i++)
        if (!tr[i].done)
            trial(ing, mfu__format_at(i), &tr[i]);
    write_diag(ing, tr);
}

/* The decision at the end of the window (at_end false: it is over, reading goes on) or of the
 * input (at_end true). Returns MFU_OK with a format chosen, or none chosen (*none true: no
 * format reads the held lines; ing->diag says why). */
static mfu_status decide(mfu_ingest *ing, bool at_end, bool *none, mfu_error *err)
{
    *none = false;
    ing->decided = true;
    long bs, s2;
    long bi = best_index(ing, &bs, &s2);
    if (bi >= 0 && ing->step_lines[bi] > 0)
        return choose(ing, bi, err);
    /* hint-only candidates, best first */
    size_t n = mfu__format_count();
    trial_result tr[TRIAL_MAX];
    memset(tr, 0, sizeof tr);
    for (;;) {
        long ci = -1, cs = 0;
        for (size_t i = 0; i < n && i < TRIAL_MAX; i++) {
            const mfu__format *f = mfu__format_at(i);
            if (!tr[i].done && !f->last_resort && ing->scores[i] > cs) {
                cs = ing->scores[i];
                ci = (long)i;
            }
        }
        if (ci < 0)
            break;
        trial(ing, mfu__format_at((size_t)ci), &tr[ci]);
        if (tr[ci].steps > 0)
            return choose(ing, ci, err);
    }
    lr_flush(ing);
    long lr = last_resort_index();
    if (lr >= 0 && ing->step_lines[lr] > 0)
        return choose(ing, lr, err);
    if (!at_end && bi >= 0) {
        diagnose(ing, tr); /* kept in case the run ends empty */
        return choose(ing, bi, err);
    }
    if (at_end && bi >= 0 && mfu__format_at((size_t)bi)->generic)
        return choose(ing, bi, err); /* jsonl / csv: their own error names the keys */
    if (at_end) {
        diagnose(ing, tr);
        *none = true;
    }
    return MFU_OK;
}

/* The early choice, while the window lasts. */
#define GENERIC_EARLY_LINES 50

static mfu_status maybe_early(mfu_ingest *ing, mfu_error *err)
{
    long bs, s2;
    long bi = best_index(ing, &bs, &s2);
    if (bi >= 0 && ing->step_lines[bi] > 0 && bs >= 5 * MFU__DETECT_STEP &&
        bs - s2 >= 2 * MFU__DETECT_STEP)
        return choose(ing, bi, err);
    long lr = last_resort_index();
    if (lr >= 0 && bi < 0 && ing->step_lines[lr] >= GENERIC_EARLY_LINES)
        return choose(ing, lr, err);
    return MFU_OK;
}

/* One logical line while detecting (or while holding the window of a forced format). */
static mfu_status detect_line(mfu_ingest *ing, const mfu__rline *rl, mfu_error *err)
{
    long line_score = 0;
    bool lr_pending = false;
    if (!ing->holding) {
        mfu__line ln;
        mfu__clean_line(rl->text, rl->len, rl->lineno, ing->clean_buf, &ln);
        long specific = 0;
        size_t lr = (size_t)-1;
        for (size_t i = 0; i < mfu__format_count(); i++) {
            const mfu__format *f = mfu__format_at(i);
            if (!ln.len)
                break;
            if (f->last_resort) {
                lr = i;
                continue;
            }
            int sc = f->detect(&ln);
            ing->scores[i] += sc;
            ing->step_lines[i] += sc >= MFU__DETECT_STEP;
            line_score += sc;
            if (!f->generic)
                specific += sc;
        }
        ing->other_scored = ing->other_scored || line_score > 0;
        if (lr != (size_t)-1 && specific == 0) { /* a line nobody else reads */
            /* The last resort's score counts only where another format has not scored (the
             * early choice of maybe_early) or in decide() after the trials; its detect() is
             * the costly one (a JSON-lines log: a tenth of the ingest for its first 2000
             * lines), so once another format has scored, a held line is left for lr_flush(),
             * which those readers call first. Past the window the score decides at once. */
            if (ing->other_scored && !ing->window_over) {
                lr_pending = true;
            } else {
                int lr_score = mfu__format_at(lr)->detect(&ln);
                if (lr_score > 0) {
                    ing->scores[lr] += lr_score;
                    ing->step_lines[lr] += lr_score >= MFU__DETECT_STEP;
                    line_score += lr_score;
                }
            }
        }
    }
    ing->scored_lines++;
    if (!ing->window_over || line_score > 0) {
        if (hold_line(ing, rl->text, rl->len, rl->lineno, lr_pending) != MFU_OK)
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory holding lines for detection");
    }
    if (ing->scored_lines >= (long)ing->detect_lines ||
        ing->hold_n >= (size_t)MFU_INGEST_DETECT_BYTES)
        ing->window_over = true;
    if (ing->holding)
        return ing->window_over ? choose(ing, -1, err) : MFU_OK;
    if (!ing->window_over)
        return maybe_early(ing, err);
    if (!ing->decided) {
        bool none;
        return decide(ing, false, &none, err);
    }
    /* past the window: the first line that any format scores decides */
    long bs, s2;
    long bi = best_index(ing, &bs, &s2);
    if (line_score <= 0)
        return MFU_OK;
    if (bi >= 0)
        return choose(ing, bi, err);
    long lr = last_resort_index();
    return lr >= 0 && ing->step_lines[lr] > 0 ? choose(ing, lr, err) : MFU_OK;
}

/* Carriage returns pasted as the two characters "^M" (cat -v, vim). */
static bool has_caret_m(const char *p, size_t n)
{
    const char *end = p + n;
    while (p < end && (p = memchr(p, '^', (size_t)(end - p))) != NULL) {
        if (p + 1 < end && p[1] == 'M')
            return true;
        p++;
    }
    return false;
}

/* One logical line: detection or the chosen format. */
static mfu_status one_line(mfu_ingest *ing, const mfu__rline *rl, mfu_error *err)
{
    if (!ing->fmt || ing->holding)
        return detect_line(ing, rl, err);
    mfu__line ln;
    if (rl->clean && rl->wtext) /* nothing to remove: no copy */
        mfu__clean_line_inplace(rl->wtext, rl->len, rl->lineno, &ln);
    else
        mfu__clean_line(rl->text, rl->len, rl->lineno, ing->clean_buf, &ln);
    return dispatch(ing, &ln, err);
}

/* A line from the reader: cut at each "^M" when the log shows its carriage returns so (the
 * first MFU_INGEST_DETECT_LINES lines decide), as the reader cuts at '\r'. */
static mfu_status take_line(mfu_ingest *ing, const mfu__rline *rl, mfu_error *err)
{
    if (ing->caret_checks < (long)ing->detect_lines) {
        ing->caret_checks++;
        if (!ing->caret_m && has_caret_m(rl->text, rl->len))
            ing->caret_m = true;
    }
    if (!ing->caret_m || !has_caret_m(rl->text, rl->len))
        return one_line(ing, rl, err);
    const char *p = rl->text, *end = rl->text + rl->len;
    while (p <= end) {
        const char *q = p;
        while (q < end && !(q[0] == '^' && q + 1 < end && q[1] == 'M'))
            q++;
        mfu__rline piece = {p, (size_t)(q - p), rl->lineno, false, false, NULL};
        if (piece.len) {
            mfu_status st = one_line(ing, &piece, err);
            if (st != MFU_OK)
                return st;
        }
        p = q + 2;
    }
    return MFU_OK;
}

/* Rows a plain input of known size is estimated to give, once HINT_ROWS rows of it are read:
 * the run reserves them at once instead of doubling its columns up to there (each doubling
 * copies every column). A hint only: a failure to reserve changes nothing. */
#define HINT_ROWS 1024

static void reserve_rows(mfu_ingest *ing, const mfu__reader *r, size_t rows0)
{
    size_t rows = mfu_run_count(ing->run) - rows0;
    size_t used = mfu__reader_consumed(r);
    if (mfu__reader_codec(r)[0] || used == 0 || (double)used >= (double)ing->size_hint)
        return; /* compressed (the size is not the text's) or read to the end */
    double est = (double)rows * (double)ing->size_hint / (double)used;
    est += est / 8 + 1024; /* the rest of a log may be denser than its start */
    if (est < (double)MFU_RUN_MAX_STEPS)
        (void)mfu_run_reserve(ing->run, rows0 + (size_t)est, NULL);
}

static mfu_status feed(mfu_ingest *ing, mfu__reader *r, const char *name, mfu_error *err)
{
    if (ing->failed)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "this ingest session already failed; start a new one");
    ing->source = name ? name : "-";
    mfu_status st = MFU_OK;
    mfu_error e;
    memset(&e, 0, sizeof e);
    size_t rows0 = mfu_run_count(ing->run);
    bool hint = ing->size_hint > 0;
    unsigned since_hint = 0;
    for (;;) {
        mfu__rline rl;
        bool eof = false;
        st = mfu__reader_next(r, &rl, &eof, &e);
        if (st != MFU_OK) {
            long line = mfu__reader_lines(r) + 1;
            st = mfu__fail(err, st, line, "%s: %s", ing->source, e.message);
            break;
        }
        if (eof)
            break;
        if (rl.too_long) {
            ing->stats.too_long++;
            char reason[64];
            snprintf(reason, sizeof reason, "line longer than %zu bytes (skipped)", ing->max_line);
            note_skip(ing, rl.lineno, reason);
            continue;
        }
        if (ing->fmt && !ing->holding && !ing->caret_m &&
            ing->caret_checks >= (long)ing->detect_lines) { /* the hot path, as take_line */
            mfu__line ln;
            if (rl.clean && rl.wtext) /* nothing to remove: no copy */
                mfu__clean_line_inplace(rl.wtext, rl.len, rl.lineno, &ln);
            else
                mfu__clean_line(rl.text, rl.len, rl.lineno, ing->clean_buf, &ln);
            st = dispatch(ing, &ln, err);
        } else {
            st = take_line(ing, &rl, err);
        }
        if (st != MFU_OK)
            break;
        if (hint && ++since_hint == HINT_ROWS) { /* look at the row count now and then */
            since_hint = 0;
            if (mfu_run_count(ing->run) - rows0 >= HINT_ROWS) {
                reserve_rows(ing, r, rows0);
                hint = false;
            }
        }
    }
    ing->stats.lines += mfu__reader_lines(r);
    settle_counts(ing);
    ing->counted_verdict = 0; /* the next input numbers its lines from 1 again */
    ing->stats.truncated_last_line = mfu__reader_truncated(r);
    if (mfu__reader_peak_line(r) > ing->stats.peak_line_bytes)
        ing->stats.peak_line_bytes = mfu__reader_peak_line(r);
    ing->stats.steps = (long)mfu_run_count(ing->run);
    if (st != MFU_OK)
        ing->failed = true;
    return st;
}

mfu_status mfu_ingest_feed_file(mfu_ingest *ing, FILE *f, const char *name, mfu_error *err)
{
    if (!ing || !f)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_ingest_feed_file: NULL argument");
    mfu__reader *r = mfu__reader_file(f, ing->max_line);
    if (!r)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    mfu_status st = feed(ing, r, name, err);
    mfu__reader_free(r);
    return st;
}

mfu_status mfu_ingest_feed_buffer(mfu_ingest *ing, const void *data, size_t n, const char *name,
                                  mfu_error *err)
{
    if (!ing || (!data && n))
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_ingest_feed_buffer: NULL argument");
    mfu__reader *r = mfu__reader_mem(data, n, ing->max_line);
    if (!r)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    mfu_status st = feed(ing, r, name, err);
    mfu__reader_free(r);
    return st;
}

mfu_status mfu_ingest_feed_path(mfu_ingest *ing, const char *path, mfu_error *err)
{
    if (!ing || !path)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_ingest_feed_path: NULL argument");
    if (strcmp(path, "-") == 0)
        return mfu_ingest_feed_file(ing, stdin, "-", err);
    FILE *f = mfu__open_log(path, err); /* a directory is refused here, not read */
    if (!f)
        return MFU_E_IO;
    /* the size of a regular file (a pipe cannot seek): a hint for the run's capacity */
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) {
        size = ftell(f);
        if (fseek(f, 0, SEEK_SET) != 0) {
            fclose(f);
            return mfu__fail(err, MFU_E_IO, 0,
                             "%s: cannot seek back to its start (%s); pass it on stdin (-)", path,
                             strerror(errno));
        }
    }
    ing->size_hint = size > 0 ? size : 0;
    mfu_status st = mfu_ingest_feed_file(ing, f, path, err);
    ing->size_hint = 0;
    fclose(f);
    return st;
}

mfu_status mfu_ingest_finish(mfu_ingest *ing, mfu_run **out, mfu_error *err)
{
    if (out)
        *out = NULL;
    if (!ing || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_ingest_finish: NULL argument");
    if (ing->failed)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "this ingest session already failed; start a new one");
    const char *src = ing->source ? ing->source : "input";
    if (!ing->fmt || ing->holding) {
        mfu_status st = MFU_OK;
        bool none = false;
        if (ing->holding) {
            st = choose(ing, -1, err);
        } else if (!ing->decided) {
            st = decide(ing, true, &none, err);
        } else { /* past the window: as detect_line decides */
            lr_flush(ing);
            long bs, s2;
            long bi = best_index(ing, &bs, &s2), lr = last_resort_index();
            if (bi < 0 && lr >= 0 && ing->step_lines[lr] > 0)
                bi = lr;
            if (bi >= 0)
                st = choose(ing, bi, err);
            else
                none = true;
        }
        if (st != MFU_OK) {
            ing->failed = true;
            return st;
        }
        if (none) {
            ing->failed = true;
            if (ing->diag[0])
                return mfu__fail(err, MFU_E_EMPTY, 0, "%s: %s", src, ing->diag);
            return mfu__fail(err, MFU_E_EMPTY, 0,
                             "%s: no known training-log format in %ld lines; if it is one, force "
                             "it with --format NAME (list: mfu convert --list-formats), or name "
                             "its keys: --format generic --map step=KEY,step_time_s=KEY",
                             src, ing->stats.lines);
        }
    }
    if (ing->fmt->finish) {
        mfu__ictx c = {ing, NULL, 0};
        memset(&ing->pending, 0, sizeof ing->pending);
        mfu_status st = ing->fmt->finish(ing->state, &c);
        if (st != MFU_OK) {
            ing->failed = true;
            if (ing->pending.code == st) {
                if (err)
                    *err = ing->pending;
                return st;
            }
            return mfu__fail(err, st, 0, "%s: %s: %s", src, ing->fmt->name, mfu_strerror(st));
        }
        /* what the format did at the end (a last buffered record) belongs to lines already
         * counted */
    }
    settle_counts(ing); /* the held lines of a short input were read just now */
    ing->stats.steps = (long)mfu_run_count(ing->run);
    if (mfu_run_count(ing->run) == 0) {
        ing->failed = true;
        if (ing->diag[0]) /* chosen from side lines past the window; nothing read the window */
            return mfu__fail(err, MFU_E_EMPTY, 0, "%s: %s (format '%s' was tried on the rest)", src,
                             ing->diag, ing->fmt->name);
        char why[200] = "";
        if (ing->stats.nskip_samples)
            snprintf(why, sizeof why, "; first problem at line %ld: %s",
                     ing->stats.skip_samples[0].line, ing->stats.skip_samples[0].reason);
        return mfu__fail(err, MFU_E_EMPTY, 0,
                         "%s: no step lines of format '%s' in %ld lines (%ld skipped)%s; check "
                         "the log or force another with --format NAME",
                         src, ing->fmt->name, ing->stats.lines, ing->stats.skipped, why);
    }
    *out = ing->run;
    ing->run = mfu_run_new(); /* the session stays freeable; it is spent now */
    ing->failed = true;
    return MFU_OK;
}

const mfu_run *mfu_ingest_peek(const mfu_ingest *ing)
{
    return ing ? ing->run : NULL;
}

const mfu_ingest_stats *mfu_ingest_get_stats(const mfu_ingest *ing)
{
    return ing ? &ing->stats : NULL;
}

mfu_status mfu_ingest_path(const char *path, const mfu_ingest_opts *opts, mfu_run **out,
                           mfu_ingest_stats *stats, mfu_error *err)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_ingest_path: path and out are required");
    mfu_ingest *ing = NULL;
    mfu_status st = mfu_ingest_new(opts, &ing, err);
    if (st != MFU_OK)
        return st;
    st = mfu_ingest_feed_path(ing, path, err);
    if (st == MFU_OK)
        st = mfu_ingest_finish(ing, out, err);
    if (stats)
        *stats = ing->stats;
    mfu_ingest_free(ing);
    return st;
}

const char *mfu_ingest_format_name(size_t i)
{
    const mfu__format *f = mfu__format_at(i);
    return f ? f->name : NULL;
}

const char *mfu_ingest_format_summary(size_t i)
{
    const mfu__format *f = mfu__format_at(i);
    return f ? f->summary : NULL;
}
