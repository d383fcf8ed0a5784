/*
 * ingest.c - an ingest session: read inputs, detect the format, hand lines to it, count.
 *
 * Detection. Until a format is chosen, each cleaned line is scored by every format's detect()
 * and kept (its raw bytes) in a bounded hold buffer. The format is chosen
 *   - at once when forced (opts->format);
 *   - early, when the leader has at least 5 step lines' worth of score and leads the
 *     runner-up by 2 step lines (a plain log decides within its first step lines);
 *   - at the end of the window (MFU_INGEST_DETECT_LINES lines or MFU_INGEST_DETECT_BYTES
 *     held), for the highest score above zero (ties go to the earlier registry entry);
 *   - a generic reader (jsonl, csv: mfu__format.generic) competes only while no specific
 *     format has scored a step line, so Lightning's metrics.csv header wins over its rows;
 *   - otherwise at the first later line that any format scores (lines past the window that
 *     no format scored are not held, so they are not replayed).
 * The held lines are then replayed through the chosen format in order, and reading goes on
 * line by line. Memory: the hold buffer, one line buffer and the format's state.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/fieldmap.h"
#include "ingest/internal.h"
#include "run/internal.h"
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
    long *scores; /* per registry entry, while detecting */
    long scored_lines;
    bool window_over;

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
    if (!ing->run || !ing->clean_buf || !ing->scores) {
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
    free(ing->hold);
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

static mfu_status hold_line(mfu_ingest *ing, const char *text, size_t len, long lineno)
{
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
    memcpy(ing->hold + ing->hold_n, &hd, sizeof hd);
    memcpy(ing->hold + ing->hold_n + sizeof hd, text, len);
    ing->hold_n += need;
    return MFU_OK;
}

/* Choose the format with the best score (index best) and replay the held lines. */
static mfu_status choose(mfu_ingest *ing, size_t best, mfu_error *err)
{
    mfu_status st = start_format(ing, mfu__format_at(best), err);
    if (st != MFU_OK)
        return st;
    size_t off = 0;
    while (off < ing->hold_n) {
        held hd;
        memcpy(&hd, ing->hold + off, sizeof hd);
        /* the cleaner reads len bytes of the held text and writes only into clean_buf */
        const char *text = (const char *)ing->hold + off + sizeof hd;
        off += sizeof hd + hd.len;
        mfu__line ln;
        mfu__clean_line(text, hd.len, hd.lineno, ing->clean_buf, &ln);
        st = dispatch(ing, &ln, err);
        if (st != MFU_OK)
            break;
    }
    free(ing->hold);
    ing->hold = NULL;
    ing->hold_n = ing->hold_cap = 0;
    return st;
}

static long best_index(const mfu_ingest *ing, long *best_score, long *second)
{
    /* Generic readers count only while no specific format has a step line's worth of score. */
    bool specific_step = false;
    for (size_t i = 0; i < mfu__format_count(); i++)
        if (!mfu__format_at(i)->generic && ing->scores[i] >= MFU__DETECT_STEP)
            specific_step = true;
    long bi = -1, bs = 0, s2 = 0;
    for (size_t i = 0; i < mfu__format_count(); i++) {
        long s = ing->scores[i];
        if (specific_step && mfu__format_at(i)->generic)
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

/* One logical line while detecting. */
static mfu_status detect_line(mfu_ingest *ing, const mfu__rline *rl, mfu_error *err)
{
    mfu__line ln;
    mfu__clean_line(rl->text, rl->len, rl->lineno, ing->clean_buf, &ln);
    long line_score = 0;
    for (size_t i = 0; i < mfu__format_count(); i++) {
        int s = ln.len ? mfu__format_at(i)->detect(&ln) : 0;
        ing->scores[i] += s;
        line_score += s;
    }
    ing->scored_lines++;
    if (!ing->window_over || line_score > 0) {
        if (hold_line(ing, rl->text, rl->len, rl->lineno) != MFU_OK)
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory holding lines for detection");
    }
    long bs, s2;
    long bi = best_index(ing, &bs, &s2);
    if (ing->scored_lines >= (long)ing->detect_lines ||
        ing->hold_n >= (size_t)MFU_INGEST_DETECT_BYTES)
        ing->window_over = true;
    bool early = bs >= 5 * MFU__DETECT_STEP && bs - s2 >= 2 * MFU__DETECT_STEP;
    if (bi >= 0 && (early || ing->window_over))
        return choose(ing, (size_t)bi, err);
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
        if (!ing->fmt) {
            st = detect_line(ing, &rl, err);
        } else {
            mfu__line ln;
            if (rl.clean && rl.wtext) /* nothing to remove: no copy */
                mfu__clean_line_inplace(rl.wtext, rl.len, rl.lineno, &ln);
            else
                mfu__clean_line(rl.text, rl.len, rl.lineno, ing->clean_buf, &ln);
            st = dispatch(ing, &ln, err);
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
    if (!ing->fmt) {
        long bs, s2;
        long bi = best_index(ing, &bs, &s2);
        if (bi < 0) {
            ing->failed = true;
            return mfu__fail(err, MFU_E_EMPTY, 0,
                             "%s: no known training-log format in %ld lines; if it is one, force "
                             "it with --format NAME (list: mfu convert --list-formats)",
                             src, ing->stats.lines);
        }
        mfu_status st = choose(ing, (size_t)bi, err);
        if (st != MFU_OK) {
            ing->failed = true;
            return st;
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
