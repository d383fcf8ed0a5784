/*
 * fmt_generic.c - the last resort of detection: a log of a stack no format knows, read from
 * the repeated shape of its step lines (docs/formats.md "generic", docs/internals/ingest.md).
 *
 *   Iter 36: Train loss 4.040, Learning Rate 2.000e-08, It/sec 1.472, Tokens/sec 67.707, ...
 *   2020-07-11 01:18:24,537 - root - INFO - Epoch: 2, Batch: 4134/8164, ..., Time cost=89.23
 *   {"current_steps": 3, "loss": 1.59, "elapsed_time": "0:00:35", ...}
 *
 * Each line is read into key/value pairs (ingest/kvline.h); its shape is the sequence of its
 * keys. Before the first row the format looks at the held lines (prescan: the session's
 * detection window, or the same window when --format generic is forced) and takes the shape
 * that has a step counter and the most lines, shapes with a time or a rate first. Only lines
 * of that shape give rows; the others are left, and the note (stats.note) says what was
 * mapped, from which key, and what was left, so --map FIELD=KEY can correct it.
 *
 * A row takes, per field, the pair whose key means it best (kvline.c's table): the counter
 * (with an epoch before a per-epoch counter N/M: epoch x M + N), loss, lr, grad norm, memory,
 * the framework's tokens/s, samples/s, FLOP/s and MFU, tokens, samples, seq_len, and the step
 * time from, in that order: a step-time key (divided by the steps since the previous row when
 * its value is the wall time between the two lines: the log's interval), 1 / it/s, a
 * progress bar's s/it, the growth of a cumulative elapsed time per step, the growth of the
 * lines' timestamps per step. Cumulative tokens give tokens per step the same way. The first
 * row waits for the second (or the end) so that both are read the same way.
 *
 * --map: a mapped field takes the pair whose key is the column as printed (or lower-cased,
 * blanks as '_'), with its factor; step=KEY names the counter.
 *
 * Named limits: GENERIC_SHAPES shapes are told apart (later ones count as "other");
 * GENERIC_NOTE_KEYS keys of the chosen shape appear in the note.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "ingest/fieldmap.h"
#include "ingest/kvline.h"

#define GENERIC_SHAPES 16
#define GENERIC_NOTE_KEYS 24
#define GENERIC_KEY_NOTE 40 /* bytes of a key kept for the note */

typedef struct gshape {
    uint64_t sig;
    long lines;
    bool counter, figure; /* has a step counter; has a time, rate, FLOP/s or MFU */
    int mapped;           /* pairs with a meaning */
} gshape;

/* What one line gave: the row and where its values came from. */
typedef struct grow {
    mfu_step s;
    bool have;         /* a row (a counter was read) */
    double elapsed;    /* cumulative seconds, NaN */
    double tokens_cum; /* cumulative tokens, NaN */
    double time_s;     /* the line's timestamp, NaN */
    double step_time;  /* from a step-time key (before the interval test), NaN */
    bool time_keyed;   /* step_time came from a step-time key */
} grow;

typedef struct generic_state {
    mfu__fieldmap fm;
    bool mapped_any; /* the user gave --map */
    gshape shapes[GENERIC_SHAPES];
    int nshapes;
    long other_lines; /* lines of shapes past the table */
    bool prescanned;
    uint64_t chosen; /* 0: none yet */
    bool chose;
    grow pending; /* the first row, waiting for the second */
    bool pending_set;
    grow prev;
    bool prev_set;
    int interval; /* step-time key: 0 undecided, 1 per step, 2 the interval's time */
    long rows;
    /* the chosen shape's mapping, for the note: role of each key */
    char keys[GENERIC_NOTE_KEYS][GENERIC_KEY_NOTE];
    mfu__kvrole roles[GENERIC_NOTE_KEYS];
    int nkeys;
    int time_source; /* where step times came from: 0 nowhere, 1 a key, 3 1/it/s, 4 a bar's
                        s/it, 5 an elapsed time, 6 the timestamps (the note says so) */
    mfu__kvline kv;  /* scratch for one line (kept here, not on the stack) */
} generic_state;

static uint64_t shape_sig(const mfu__kvline *kv)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < kv->n; i++) {
        char nk[MFU__KV_KEY_MAX];
        size_t n = mfu__kv_norm_key(kv->p[i].key, nk, sizeof nk);
        for (size_t j = 0; j < n; j++)
            h = (h ^ (unsigned char)nk[j]) * 1099511628211ull;
        h = (h ^ (unsigned char)(kv->p[i].leading ? 1 : 2)) * 1099511628211ull;
        h = (h ^ 0xff) * 1099511628211ull;
    }
    return h | 1; /* never 0 */
}

/* Data-preparation bars (datasets' Map, shard loading) are not training steps. */
static bool prep_bar(const mfu__kvline *kv, mfu__span line)
{
    if (!kv->bar)
        return false;
    static const char *const words[] = {"Map",     "Loading",   "Download", "Tokeniz",
                                        "Generat", "Filter",    "Fetching", "Resolving",
                                        "Saving",  "Uploading", "Evaluat",  "Validat",
                                        "Predict", "Sanity",    "Creating", "Processing"};
    long pct = mfu__span_find(line, "%|");
    mfu__span desc = {line.p, pct > 0 ? (size_t)pct : 0};
    for (size_t i = 0; i < MFU__ARRAY_LEN(words); i++)
        if (mfu__span_find(desc, words[i]) >= 0)
            return true;
    return false;
}

/* The best pair (index) of each role in kv; -1 when none. */
static void best_pairs(const mfu__kvline *kv, int best[MFU__KR_COUNT_], mfu__kvmeaning *mean)
{
    int prio[MFU__KR_COUNT_];
    for (int r = 0; r < MFU__KR_COUNT_; r++) {
        best[r] = -1;
        prio[r] = -1;
    }
    for (int i = 0; i < kv->n; i++) {
        if (!mfu__kv_meaning(&kv->p[i], &mean[i]))
            continue;
        mfu__kvrole r = mean[i].role;
        bool better = mean[i].prio > prio[r];
        /* a rate: the global figure before the per-device one at equal confidence */
        if (mean[i].prio == prio[r] && mean[i].scope == MFU_SCOPE_GLOBAL &&
            mean[best[r]].scope == MFU_SCOPE_DEVICE)
            better = true;
        if (better) {
            best[r] = i;
            prio[r] = mean[i].prio;
        }
    }
}

/* Does kv have a step counter (or an epoch to stand for it), and a figure? */
static void line_class(const mfu__kvline *kv, bool *counter, bool *figure, int *mapped)
{
    int best[MFU__KR_COUNT_];
    mfu__kvmeaning mean[MFU__KV_MAX_PAIRS];
    best_pairs(kv, best, mean);
    *counter = best[MFU__KR_COUNTER] >= 0 || best[MFU__KR_EPOCH] >= 0;
    static const mfu__kvrole figs[] = {
        MFU__KR_STEP_TIME,     MFU__KR_ELAPSED,     MFU__KR_RATE_IT, MFU__KR_TOKENS_PER_S,
        MFU__KR_SAMPLES_PER_S, MFU__KR_FLOPS_PER_S, MFU__KR_MFU};
    *figure = kv->bar && !isnan(kv->bar_s_it);
    for (size_t i = 0; i < MFU__ARRAY_LEN(figs); i++)
        *figure = *figure || best[figs[i]] >= 0;
    *mapped = 0;
    for (int r = MFU__KR_LOSS; r < MFU__KR_COUNT_; r++)
        *mapped += best[r] >= 0;
}

static int generic_detect(const mfu__line *ln)
{
    mfu__kvline kv; /* about 3 KB: detection reads one line at a time */
    mfu__span s = {ln->text, ln->len};
    if (mfu__kv_read(s, &kv) < 2 || prep_bar(&kv, s))
        return MFU__DETECT_NONE;
    bool counter, figure;
    int mapped;
    line_class(&kv, &counter, &figure, &mapped);
    /* a step line needs evidence of time: a time or rate, or the line's timestamp; a counter
     * with a loss alone is a hint (forced, --format generic reads it) */
    if (counter && (figure || (mapped >= 1 && isfinite(ln->prefix_time_s))))
        return MFU__DETECT_STEP;
    return counter && (mapped >= 1 || kv.n >= 3) ? MFU__DETECT_HINT : MFU__DETECT_NONE;
}

static mfu_status generic_init(void *state, const mfu_ingest_opts *opts, mfu_error *err)
{
    generic_state *st = state;
    mfu_status rc = mfu__fieldmap_parse(&st->fm, opts->map, opts->nmap, err);
    if (rc != MFU_OK)
        return rc;
    for (int f = 0; f < MFU__F_COUNT; f++)
        st->mapped_any = st->mapped_any || st->fm.column[f][0];
    return MFU_OK;
}

static gshape *shape_of(generic_state *st, uint64_t sig, bool add)
{
    for (int i = 0; i < st->nshapes; i++)
        if (st->shapes[i].sig == sig)
            return &st->shapes[i];
    if (!add || st->nshapes == GENERIC_SHAPES)
        return NULL;
    gshape *g = &st->shapes[st->nshapes++];
    memset(g, 0, sizeof *g);
    g->sig = sig;
    return g;
}

/* Count the line's shape (prescan, and lines read before a shape is chosen). */
static void count_shape(generic_state *st, const mfu__kvline *kv, uint64_t sig)
{
    gshape *g = shape_of(st, sig, true);
    if (!g) {
        st->other_lines++;
        return;
    }
    if (g->lines++ == 0)
        line_class(kv, &g->counter, &g->figure, &g->mapped);
}

static void generic_prescan(void *state, const mfu__line *ln)
{
    generic_state *st = state;
    mfu__span s = {ln->text, ln->len};
    st->prescanned = true;
    if (mfu__kv_read(s, &st->kv) < 2 || prep_bar(&st->kv, s))
        return;
    count_shape(st, &st->kv, shape_sig(&st->kv));
}

/* The shape with a counter and a time or rate (else a counter and a mapped field) that has the
 * most lines; 0 when none. A user's --map step=KEY admits any shape that holds KEY. */
static uint64_t best_shape(const generic_state *st)
{
    const gshape *b = NULL;
    for (int i = 0; i < st->nshapes; i++) {
        const gshape *g = &st->shapes[i];
        if (!g->counter || (!g->figure && g->mapped == 0 && !st->mapped_any))
            continue;
        if (!b || (g->figure && !b->figure) || (g->figure == b->figure && g->lines > b->lines))
            b = g;
    }
    return b ? b->sig : 0;
}

/* The pair whose key is column (as printed, case-insensitive, or normalised); -1. */
static int pair_named(const mfu__kvline *kv, const char *column)
{
    char nc[MFU__KV_KEY_MAX];
    mfu__kv_norm_key(mfu__span_of(column), nc, sizeof nc);
    for (int i = 0; i < kv->n; i++) {
        char nk[MFU__KV_KEY_MAX];
        mfu__kv_norm_key(kv->p[i].key, nk, sizeof nk);
        if (mfu__span_ieq(kv->p[i].key, column) || strcmp(nk, nc) == 0)
            return i;
    }
    return -1;
}

static void set_scoped(double *dst, mfu_scope *scope, const mfu__kvmeaning *m)
{
    *dst = m->value;
    *scope = m->scope;
}

/* Forget what the automatic mapping put in field f (and its scope), before the user's column
 * is stored there. */
static void clear_field(mfu_step *s, mfu__field f)
{
    switch (f) {
    case MFU__F_TOKENS_PER_S:
    case MFU__F_TOKENS_PER_S_DEVICE:
        s->tokens_per_s = NAN;
        s->tokens_per_s_scope = MFU_SCOPE_UNKNOWN;
        break;
    case MFU__F_FLOPS_PER_S:
    case MFU__F_FLOPS_PER_S_DEVICE:
        s->flops_per_s = NAN;
        s->flops_per_s_scope = MFU_SCOPE_UNKNOWN;
        break;
    case MFU__F_SAMPLES_PER_S:
    case MFU__F_SAMPLES_PER_S_DEVICE:
        s->samples_per_s = NAN;
        s->samples_per_s_scope = MFU_SCOPE_UNKNOWN;
        break;
    case MFU__F_STEP_TIME_S: s->step_time_s = NAN; break;
    case MFU__F_LOSS:
        s->loss = NAN;
        s->flags &= ~(uint32_t)MFU_STEP_LOSS_NAN;
        break;
    case MFU__F_LR: s->lr = NAN; break;
    case MFU__F_GRAD_NORM: s->grad_norm = NAN; break;
    case MFU__F_MEMORY_BYTES: s->memory_bytes = NAN; break;
    case MFU__F_TOKENS: s->tokens = NAN; break;
    case MFU__F_SAMPLES: s->samples = NAN; break;
    case MFU__F_MFU: s->mfu = NAN; break;
    default: break; /* the others are not guessed */
    }
}

/* Read kv (a line of the chosen shape) into *g. */
static void read_row(generic_state *st, const mfu__kvline *kv, const mfu__line *ln, grow *g)
{
    memset(g, 0, sizeof *g);
    mfu_step_init(&g->s);
    g->elapsed = g->tokens_cum = g->step_time = NAN;
    g->time_s = ln ? ln->prefix_time_s : NAN;
    g->s.time_s = g->time_s;
    g->s.rank = ln ? ln->rank : -1;
    int best[MFU__KR_COUNT_];
    mfu__kvmeaning mean[MFU__KV_MAX_PAIRS];
    best_pairs(kv, best, mean);
    /* the user's step=KEY names the counter */
    if (st->fm.column[MFU__F_STEP][0]) {
        int i = pair_named(kv, st->fm.column[MFU__F_STEP]);
        best[MFU__KR_COUNTER] = -1;
        if (i >= 0 && kv->p[i].integer && kv->p[i].value >= 0) {
            best[MFU__KR_COUNTER] = i;
            mean[i].role = MFU__KR_COUNTER;
            mean[i].value = kv->p[i].value;
        }
        best[MFU__KR_EPOCH] = best[MFU__KR_COUNTER] >= 0 ? best[MFU__KR_EPOCH] : -1;
    }
    int c = best[MFU__KR_COUNTER] >= 0 ? best[MFU__KR_COUNTER] : best[MFU__KR_EPOCH];
    if (c < 0)
        return;
    double step = kv->p[c].value;
    int e = best[MFU__KR_EPOCH];
    if (c != e && e >= 0 && !isnan(kv->p[c].total) && kv->p[c].total > 0)
        step = kv->p[e].value * kv->p[c].total + step; /* a per-epoch counter N/M */
    if (!(step >= 0 && step < 9e15))
        return;
    g->s.step = (int64_t)step;
    g->have = true;
#define PAIR(r) (best[r] >= 0 ? &mean[best[r]] : NULL)
    const mfu__kvmeaning *m;
    if ((m = PAIR(MFU__KR_LOSS))) {
        g->s.loss = isfinite(m->value) ? m->value : NAN;
        if (!isfinite(m->value))
            g->s.flags |= MFU_STEP_LOSS_NAN;
    }
    if ((m = PAIR(MFU__KR_LR)))
        g->s.lr = m->value;
    if ((m = PAIR(MFU__KR_GNORM)))
        g->s.grad_norm = m->value;
    if ((m = PAIR(MFU__KR_MEMORY)))
        g->s.memory_bytes = m->value;
    if ((m = PAIR(MFU__KR_TOKENS_PER_S)))
        set_scoped(&g->s.tokens_per_s, &g->s.tokens_per_s_scope, m);
    if ((m = PAIR(MFU__KR_SAMPLES_PER_S)))
        set_scoped(&g->s.samples_per_s, &g->s.samples_per_s_scope, m);
    if ((m = PAIR(MFU__KR_FLOPS_PER_S)))
        set_scoped(&g->s.flops_per_s, &g->s.flops_per_s_scope, m);
    if ((m = PAIR(MFU__KR_MFU)))
        set_scoped(&g->s.mfu, &g->s.mfu_scope, m);
    if ((m = PAIR(MFU__KR_TOKENS)))
        g->s.tokens = m->value;
    if ((m = PAIR(MFU__KR_SAMPLES)))
        g->s.samples = m->value;
    if ((m = PAIR(MFU__KR_SEQ_LEN)))
        g->s.seq_len = m->value;
    if ((m = PAIR(MFU__KR_ELAPSED)))
        g->elapsed = m->value;
    if ((m = PAIR(MFU__KR_TOKENS_CUM)))
        g->tokens_cum = m->value;
    if ((m = PAIR(MFU__KR_STEP_TIME)) && m->value > 0) {
        g->step_time = m->value;
        g->time_keyed = true;
    } else if ((m = PAIR(MFU__KR_RATE_IT)) && m->value > 0) {
        g->s.step_time_s = 1.0 / m->value;
    } else if (kv->bar && kv->bar_s_it > 0) {
        g->s.step_time_s = kv->bar_s_it;
    }
#undef PAIR
    /* the user's other columns */
    for (int f = 0; f < MFU__F_COUNT; f++) {
        if (f == MFU__F_STEP || !st->fm.column[f][0])
            continue;
        int i = pair_named(kv, st->fm.column[f]);
        if (i < 0)
            continue;
        mfu__kvmeaning mm;
        bool known = mfu__kv_meaning(&kv->p[i], &mm);
        mfu__num n = {known ? mm.value : kv->p[i].value, kv->p[i].value, MFU__UNIT_NONE,
                      kv->p[i].kind == MFU__KV_SENTINEL ? MFU__NUM_NAN : MFU__NUM_FINITE};
        if (f == MFU__F_STEP_TIME_S)
            g->time_keyed = false;         /* the user said what it is: no interval test */
        clear_field(&g->s, (mfu__field)f); /* the user's column wins over the guess */
        mfu__fieldmap_store(&st->fm, (mfu__field)f, &n, &g->s);
    }
}

/* The step time (and tokens) of row g after row p (or of the first row, p NULL), by the
 * sources in the order of the file comment. */
static void step_time_of(generic_state *st, grow *g, const grow *p)
{
    double ds = p ? (double)(g->s.step - p->s.step) : NAN;
    if (p && ds > 0 && isnan(g->s.tokens) && isfinite(g->tokens_cum) && isfinite(p->tokens_cum) &&
        g->tokens_cum >= p->tokens_cum)
        g->s.tokens = (g->tokens_cum - p->tokens_cum) / ds;
    if (g->time_keyed && isnan(g->s.step_time_s)) {
        if (st->interval == 0 && ds > 1 && isfinite(g->time_s) && isfinite(p->time_s)) {
            double wall = g->time_s - p->time_s;
            st->interval = wall > 0 && fabs(g->step_time - wall) <= 0.3 * wall ? 2 : 1;
        }
        g->s.step_time_s = st->interval == 2 ? (ds > 0 ? g->step_time / ds : NAN) : g->step_time;
        if (!st->time_source)
            st->time_source = 1;
        return;
    }
    if (!isnan(g->s.step_time_s) || !(ds > 0))
        return;
    if (isfinite(g->elapsed) && isfinite(p->elapsed) && g->elapsed >= p->elapsed) {
        g->s.step_time_s = (g->elapsed - p->elapsed) / ds;
        st->time_source = st->time_source ? st->time_source : 5;
    } else if (isfinite(g->time_s) && isfinite(p->time_s) && g->time_s > p->time_s) {
        g->s.step_time_s = (g->time_s - p->time_s) / ds;
        st->time_source = st->time_source ? st->time_source : 6;
    }
}

static mfu_status emit_row(generic_state *st, mfu__ictx *c, grow *g)
{
    st->rows++;
    return mfu__emit(c, &g->s);
}

/* Remember the chosen shape's keys and what they mean, for the note. */
static void learn_keys(generic_state *st, const mfu__kvline *kv)
{
    int best[MFU__KR_COUNT_];
    mfu__kvmeaning mean[MFU__KV_MAX_PAIRS];
    best_pairs(kv, best, mean);
    st->nkeys = 0;
    for (int i = 0; i < kv->n && st->nkeys < GENERIC_NOTE_KEYS; i++) {
        mfu__kvrole r = MFU__KR_NONE;
        for (int k = 0; k < MFU__KR_COUNT_; k++)
            if (best[k] == i)
                r = (mfu__kvrole)k;
        if (kv->p[i].key.n == 0 && r == MFU__KR_NONE)
            continue;
        if (r == MFU__KR_EPOCH && best[MFU__KR_COUNTER] < 0)
            r = MFU__KR_COUNTER; /* the epoch is the step */
        mfu__span_copy(kv->p[i].key.n ? kv->p[i].key : mfu__span_of("(a number alone)"),
                       st->keys[st->nkeys], GENERIC_KEY_NOTE);
        if (kv->p[i].key.n == 0 && r == MFU__KR_COUNTER)
            mfu__strlcpy(st->keys[st->nkeys], "(the line's first number)", GENERIC_KEY_NOTE);
        else if (kv->p[i].key.n == 0)
            snprintf(st->keys[st->nkeys], GENERIC_KEY_NOTE, "(a number in %.*s)",
                     (int)(kv->p[i].unit.n < 16 ? kv->p[i].unit.n : 16), kv->p[i].unit.p);
        st->roles[st->nkeys++] = r;
    }
    if (best[MFU__KR_STEP_TIME] < 0 && best[MFU__KR_RATE_IT] >= 0)
        st->time_source = 3;
    else if (best[MFU__KR_STEP_TIME] < 0 && kv->bar && !isnan(kv->bar_s_it))
        st->time_source = 4;
}

static mfu_status generic_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    generic_state *st = state;
    mfu__span s = {ln->text, ln->len};
    if (mfu__kv_read(s, &st->kv) < 2 || prep_bar(&st->kv, s))
        return MFU_OK;
    uint64_t sig = shape_sig(&st->kv);
    if (!st->chose && st->prescanned) {
        st->chose = true;
        st->chosen = best_shape(st);
    }
    if (!st->chosen) {
        /* none chosen from the first lines: take the first later shape that qualifies */
        bool counter, figure;
        int mapped;
        line_class(&st->kv, &counter, &figure, &mapped);
        if (counter && (figure || mapped >= 1 || st->mapped_any)) {
            st->chosen = sig;
            st->chose = true;
            if (!shape_of(st, sig, false))
                count_shape(st, &st->kv, sig);
        } else {
            if (!counter) {
                char keys[80] = "";
                for (int i = 0; i < st->kv.n && i < 4; i++)
                    if (st->kv.p[i].key.n)
                        mfu__appendf(keys, sizeof keys, "%s%.*s", keys[0] ? ", " : "",
                                     (int)(st->kv.p[i].key.n < 20 ? st->kv.p[i].key.n : 20),
                                     st->kv.p[i].key.p);
                if (keys[0])
                    mfu__skip(c, "generic: numbers (%s) but no step counter; --map step=KEY", keys);
            }
            return MFU_OK;
        }
    }
    if (sig != st->chosen)
        return MFU_OK;
    if (st->nkeys == 0)
        learn_keys(st, &st->kv);
    grow g;
    read_row(st, &st->kv, ln, &g);
    if (!g.have) {
        mfu__skip(c, "generic: a line of the chosen shape without a whole step number");
        return MFU_OK;
    }
    if (!st->pending_set && !st->prev_set) {
        st->pending = g; /* the first row waits for the second */
        st->pending_set = true;
        mfu__used(c);
        return MFU_OK;
    }
    mfu_status rc = MFU_OK;
    if (st->pending_set) {
        grow first = st->pending;
        st->pending_set = false;
        step_time_of(st, &g, &first);
        step_time_of(st, &first, NULL);
        rc = emit_row(st, c, &first);
    } else {
        step_time_of(st, &g, &st->prev);
    }
    if (rc == MFU_OK)
        rc = emit_row(st, c, &g);
    st->prev = g;
    st->prev_set = true;
    return rc;
}

static void write_note(generic_state *st, mfu__ictx *c)
{
    if (!st->chosen) {
        mfu__note(c, "generic: no repeated line with a step counter and a number was found");
        return;
    }
    const gshape *g = shape_of(st, st->chosen, false);
    long other = st->other_lines;
    for (int i = 0; i < st->nshapes; i++)
        if (st->shapes[i].sig != st->chosen)
            other += st->shapes[i].lines;
    char note[MFU_INGEST_NOTE_MAX], left[200] = "";
    snprintf(note, sizeof note, "generic: %ld row%s from lines of one shape", st->rows,
             st->rows == 1 ? "" : "s");
    if (g && other)
        mfu__appendf(note, sizeof note, " (%ld other numeric line%s left)", other,
                     other == 1 ? "" : "s");
    mfu__appendf(note, sizeof note, ":");
    for (int i = 0; i < st->nkeys; i++) {
        mfu__kvrole r = st->roles[i];
        if (r == MFU__KR_NONE) {
            mfu__appendf(left, sizeof left, "%s'%s'", left[0] ? ", " : "", st->keys[i]);
            continue;
        }
        const char *how = r == MFU__KR_RATE_IT      ? "1/"
                          : r == MFU__KR_ELAPSED    ? "growth per step of "
                          : r == MFU__KR_TOKENS_CUM ? "growth per step of "
                                                    : "";
        const char *field = mfu__kv_role_name(r);
        if (r == MFU__KR_ELAPSED)
            field = "step_time_s";
        if (r == MFU__KR_TOKENS_CUM)
            field = "tokens";
        if (r == MFU__KR_STEP_TIME && st->interval == 2)
            how = "per step of the interval ";
        mfu__appendf(note, sizeof note, " %s <- %s'%s';", field, how, st->keys[i]);
    }
    if (st->time_source == 4)
        mfu__appendf(note, sizeof note, " step_time_s <- the bar's s/it;");
    if (st->time_source == 6)
        mfu__appendf(note, sizeof note, " step_time_s <- the line timestamps per step;");
    if (!st->time_source)
        mfu__appendf(note, sizeof note, " no step time found;");
    if (left[0])
        mfu__appendf(note, sizeof note, " left: %s;", left);
    mfu__appendf(note, sizeof note, " correct with --map FIELD=KEY");
    mfu__note(c, "%s", note);
}

static mfu_status generic_finish(void *state, mfu__ictx *c)
{
    generic_state *st = state;
    mfu_status rc = MFU_OK;
    if (st->pending_set) { /* a single row */
        st->pending_set = false;
        step_time_of(st, &st->pending, NULL);
        rc = emit_row(st, c, &st->pending);
    }
    if (st->chosen)
        mfu__convention(c, "generic reader: fields from the keys' names and units (the ingest "
                           "note); rates global unless a key says per GPU");
    write_note(st, c);
    return rc;
}

const mfu__format mfu__fmt_generic = {
    .name = "generic",
    .summary = "last resort: the repeated line shape with a step counter and named numbers "
               "(key: value, key=value, dicts, progress bars); --map corrects it",
    .detect = generic_detect,
    .state_size = sizeof(generic_state),
    .init = generic_init,
    .prescan = generic_prescan,
    .line = generic_line,
    .finish = generic_finish,
    .generic = true,
    .last_resort = true,
};
