/*
 * kvline.c - key/value pairs of a log line and what their keys mean (ingest/kvline.h).
 *
 * Text lines are read in two passes: a tokenizer (words, numbers with what follows them,
 * separators, ':' / '=', brackets), then a pairing pass that gives each number the words just
 * before it ("Train loss 4.040", "loss: 3.2", "lr=1e-4"), or, when a piece ends in words that no
 * number followed, the number before them ("11.8750 loss"). A number in brackets right after a
 * value is a side value (a running mean) and is passed over; a word after "label:" starts a new
 * key ("train: epoch 0" is the epoch). Nothing is allocated; the pairs point into the line.
 */
#include "ingest/kvline.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

#include "ingest/pyrepr.h"

/* ---- tokens ------------------------------------------------------------------------------ */

enum { T_WORD = 1, T_NUM, T_SEP, T_ASSIGN, T_OPEN, T_CLOSE };

#define MAX_TOKENS 160

typedef struct tok {
    int type;
    mfu__span s;    /* the token's text (a number: its digits; the unit is apart) */
    int gap;        /* blanks before it (0, 1; 2 means two or more, which is a separator) */
    mfu__kvpair np; /* T_NUM: the number read */
    bool multi;     /* T_NUM: "a/b/c" of non-integers: several values, not kept */
} tok;

static bool is_word_start(unsigned char c)
{
    return isalpha(c) || c == '_';
}

static bool is_word_char(unsigned char c)
{
    return isalnum(c) || c == '_' || c == '.' || c == '/' || c == '-' || c == '#' || c == '%' ||
           c == '@' || c == '\'' || c == '^';
}

/* Units a number may be followed by after one blank ("5.094 GB", "53.79 samples/s"). An
 * attached suffix ("412ms", "11.5K") may be any run of letters. */
static const char *const spaced_units[] = {
    "s",          "ms",      "us",      "ns",          "sec",         "secs",       "min",
    "h",          "B",       "KB",      "MB",          "GB",          "TB",         "KiB",
    "MiB",        "GiB",     "TiB",     "samples/s",   "samples/sec", "tok/s",      "tokens/s",
    "tokens/sec", "tok/sec", "it/s",    "s/it",        "img/s",       "images/s",   "TFLOPS",
    "GFLOPS",     "PFLOPS",  "TFLOP/s", "GFLOP/s",     "FLOPS",       "FLOP/s",     "steps/s",
    "s/iter",     "s/step",  "seq/s",   "sequences/s", "ex/s",        "examples/s", "words/s",
    "wps"};

/* Length of a unit at p (letters, '%', 'µ', and '/' between letters), 0 when none. */
static size_t unit_len(const char *p, const char *end)
{
    const char *q = p;
    while (q < end) {
        unsigned char c = (unsigned char)*q;
        if (isalpha(c) || c == '%')
            q++;
        else if (c == 0xc2 && q + 1 < end && (unsigned char)q[1] == 0xb5) /* µ */
            q += 2;
        else if (c == '/' && q > p && q + 1 < end && isalpha((unsigned char)q[1]))
            q++;
        else
            break;
        if (c == '%')
            break; /* "%" ends a unit */
    }
    return (size_t)(q - p);
}

static bool spaced_unit(mfu__span u)
{
    for (size_t i = 0; i < MFU__ARRAY_LEN(spaced_units); i++)
        if (mfu__span_eq(u, spaced_units[i]))
            return true;
    return false;
}

/* Digits at p (thousands separators allowed); the value; bytes read (0: none). */
static size_t scan_digits(const char *p, const char *end, double *v, int *ndig)
{
    const char *q = p;
    double x = 0;
    int n = 0, run = 0;
    bool grouped = false;
    while (q < end) {
        if (isdigit((unsigned char)*q)) {
            x = x * 10 + (*q - '0');
            q++;
            n++;
            run++;
            continue;
        }
        if (*q == ',' && n && run >= 1 && run <= 3 && (!grouped || run == 3) && end - q >= 4 &&
            isdigit((unsigned char)q[1]) && isdigit((unsigned char)q[2]) &&
            isdigit((unsigned char)q[3]) && (end - q == 4 || !isdigit((unsigned char)q[4]))) {
            grouped = true;
            run = 0;
            q++;
            continue;
        }
        break;
    }
    *v = x;
    *ndig = n;
    return (size_t)(q - p);
}

/* "H:MM:SS", "MM:SS", "H:MM:SS.ff" at p: seconds; bytes read, 0 when not a duration. */
static size_t scan_duration(const char *p, const char *end, double *secs)
{
    const char *q = p;
    double parts[3];
    int np = 0;
    while (np < 3) {
        double v;
        int nd;
        size_t k = scan_digits(q, end, &v, &nd);
        if (k == 0 || k != (size_t)nd || (np > 0 && nd != 2) || (np == 0 && nd > 3))
            break;
        parts[np++] = v;
        q += k;
        if (q < end && *q == ':' && q + 2 < end + 0 && end - q >= 3 &&
            isdigit((unsigned char)q[1]) && isdigit((unsigned char)q[2]) && np < 3)
            q++;
        else
            break;
    }
    if (np < 2)
        return 0;
    double frac = 0;
    if (q < end && *q == '.' && q + 1 < end && isdigit((unsigned char)q[1])) {
        double scale = 0.1;
        q++;
        while (q < end && isdigit((unsigned char)*q)) {
            frac += (*q - '0') * scale;
            scale /= 10;
            q++;
        }
    }
    if (q < end && (isalnum((unsigned char)*q) || *q == ':'))
        return 0;
    *secs =
        (np == 3 ? parts[0] * 3600 + parts[1] * 60 + parts[2] : parts[0] * 60 + parts[1]) + frac;
    return (size_t)(q - p);
}

/* A number at p (sign, digits, fraction, exponent), then "/M", a unit. Fills t->np. */
static size_t scan_number(const char *p, const char *end, tok *t)
{
    mfu__kvpair *np = &t->np;
    memset(np, 0, sizeof *np);
    t->multi = false;
    np->total = NAN;
    const char *q = p;
    double dur;
    size_t dk = scan_duration(q, end, &dur);
    if (dk) {
        np->kind = MFU__KV_DURATION;
        np->value = dur;
        q += dk;
    } else {
        if (q < end && (*q == '-' || *q == '+'))
            q++;
        const char *m = q;
        double iv;
        int nd;
        q += scan_digits(q, end, &iv, &nd);
        bool frac = false, expo = false;
        if (q < end && *q == '.' && q + 1 < end && isdigit((unsigned char)q[1])) {
            frac = true;
            q++;
            while (q < end && isdigit((unsigned char)*q))
                q++;
        }
        if (q == m)
            return 0;
        if (q + 1 < end && (*q == 'e' || *q == 'E') &&
            (isdigit((unsigned char)q[1]) ||
             ((q[1] == '-' || q[1] == '+') && q + 2 < end && isdigit((unsigned char)q[2])))) {
            expo = true;
            q += 2;
            while (q < end && isdigit((unsigned char)*q))
                q++;
        }
        mfu__num n;
        if (!mfu__num_parse((mfu__span){p, (size_t)(q - p)}, &n) || n.kind != MFU__NUM_FINITE)
            return 0;
        np->value = n.value;
        np->integer = !frac && !expo;
    }
    t->s = (mfu__span){p, (size_t)(q - p)};
    /* "N/M" or "N / M" of integers, "a/b" of durations; "a/b/c" of numbers is several values */
    const char *r = q;
    while (r < end && *r == ' ' && r - q < 2)
        r++;
    if (r < end && *r == '/' && r + 1 < end) {
        const char *s2 = r + 1;
        while (s2 < end && *s2 == ' ' && s2 - r < 3)
            s2++;
        tok t2;
        size_t k2 =
            s2 < end && (isdigit((unsigned char)*s2) || *s2 == '-') ? scan_number(s2, end, &t2) : 0;
        if (k2) {
            bool both_int = np->integer && t2.np.integer && np->kind == MFU__KV_NUMBER;
            bool both_dur = np->kind == MFU__KV_DURATION && t2.np.kind == MFU__KV_DURATION;
            if ((both_int || both_dur) && !t2.multi && isnan(t2.np.total)) {
                np->kind = both_int ? MFU__KV_FRACTION : MFU__KV_DURATION;
                np->total = t2.np.value;
                return (size_t)(s2 + k2 - p);
            }
            t->multi = true;
            return (size_t)(s2 + k2 - p);
        }
    }
    /* a unit: attached, or after one blank when it is a known one */
    if (np->kind == MFU__KV_NUMBER) {
        size_t ul = unit_len(q, end);
        if (ul && (q + ul >= end || !isdigit((unsigned char)q[ul]))) {
            np->unit = (mfu__span){q, ul};
            q += ul;
        } else if (q + 1 < end && *q == ' ') {
            ul = unit_len(q + 1, end);
            mfu__span u = {q + 1, ul};
            if (ul && spaced_unit(u) && (q + 1 + ul >= end || !isalnum((unsigned char)q[1 + ul]))) {
                np->unit = u;
                q += 1 + ul;
            }
        }
    }
    return (size_t)(q - p);
}

/* The tokens of s; returns their count. */
static int tokenize(mfu__span s, tok *out, int max)
{
    int n = 0;
    int gap = 0;
    const char *p = s.p, *end = s.p + s.n;
    while (p < end && n < max) {
        unsigned char c = (unsigned char)*p;
        tok *t = &out[n];
        memset(t, 0, sizeof *t);
        if (c == ' ') {
            const char *q = p;
            while (q < end && *q == ' ')
                q++;
            gap = (int)(q - p) >= 2 ? 2 : 1;
            p = q;
            continue;
        }
        t->gap = gap;
        gap = 0;
        if (t->gap == 2 && n > 0 && out[n - 1].type == T_ASSIGN)
            t->gap = 1; /* "Train:    1/3": blanks after a colon align the value */
        if (t->gap == 2 || c == '\t' || c == ',' || c == ';' || c == '|') {
            if (n == 0 || out[n - 1].type != T_SEP) {
                t->type = T_SEP;
                t->s = (mfu__span){p, 1};
                n++;
            }
            if (t->gap == 2) /* two blanks: the separator; read this byte again */
                continue;
            p++;
            continue;
        }
        if (c == ':' || c == '=') {
            t->type = T_ASSIGN;
            t->s = (mfu__span){p, 1};
            n++;
            p++;
            continue;
        }
        if (c == '[' || c == '(' || c == '{' || c == ']' || c == ')' || c == '}') {
            t->type = (c == '[' || c == '(' || c == '{') ? T_OPEN : T_CLOSE;
            t->s = (mfu__span){p, 1};
            n++;
            p++;
            continue;
        }
        if (c == '"' || c == '\'' || c == '`') {
            p++;
            gap = t->gap;
            continue;
        }
        bool num_start = isdigit(c) || ((c == '-' || c == '+' || c == '.') && p + 1 < end &&
                                        isdigit((unsigned char)p[1]));
        if (num_start && c == '-' && n > 0 && out[n - 1].type == T_WORD && t->gap == 0)
            num_start = false; /* "lr-1" stays a word */
        if (num_start) {
            size_t k = scan_number(p, end, t);
            if (k) {
                t->type = T_NUM;
                n++;
                p += k;
                continue;
            }
        }
        if (is_word_start(c) || c >= 0x80) {
            const char *q = p;
            while (q < end) {
                unsigned char d = (unsigned char)*q;
                if (is_word_char(d) || d >= 0x80) {
                    q++;
                } else if (d == '(' && q > p) { /* "max_mem_active(gib)": no blank inside */
                    const char *r = q + 1;
                    while (r < end && r - q < 12 && isalnum((unsigned char)*r))
                        r++;
                    if (r < end && *r == ')' && r > q + 1)
                        q = r + 1;
                    else
                        break;
                } else {
                    break;
                }
            }
            while (q > p + 1 && (q[-1] == '.' || q[-1] == '\''))
                q--; /* a sentence's full stop, a closing quote */
            t->type = T_WORD;
            t->s = (mfu__span){p, (size_t)(q - p)};
            n++;
            p = q;
            continue;
        }
        if (c == '.' && n > 0 && out[n - 1].type == T_NUM) { /* "33.4706. Time" */
            t->type = T_SEP;
            t->s = (mfu__span){p, 1};
            n++;
            p++;
            continue;
        }
        /* anything else (>, *, #, a bar's blocks) separates */
        if (n == 0 || out[n - 1].type != T_SEP) {
            t->type = T_SEP;
            t->s = (mfu__span){p, 1};
            n++;
        }
        p++;
    }
    return n;
}

static bool sentinel_word(mfu__span w, double *v)
{
    if (mfu__span_ieq(w, "nan") || mfu__span_ieq(w, "-nan")) {
        *v = NAN;
        return true;
    }
    if (mfu__span_ieq(w, "inf") || mfu__span_ieq(w, "infinity")) {
        *v = INFINITY;
        return true;
    }
    if (mfu__span_eq(w, "None") || mfu__span_eq(w, "N/A") || mfu__span_eq(w, "null") ||
        mfu__span_ieq(w, "n/a")) {
        *v = NAN;
        return true;
    }
    return false;
}

static void add(mfu__kvline *out, const mfu__kvpair *p)
{
    if (out->n < MFU__KV_MAX_PAIRS)
        out->p[out->n++] = *p;
}

/* The pairs of a text (not a dict, not a bar), appended to out. */
static void read_text(mfu__span s, mfu__kvline *out, bool first_is_line_start)
{
    tok toks[MAX_TOKENS];
    int nt = tokenize(s, toks, MAX_TOKENS);
    const char *key0 = NULL, *key1 = NULL; /* the pending key's first and last byte + 1 */
    bool assigned = false;
    int orphan = -1;        /* the last pair without a key in this piece */
    int side_depth = 0;     /* inside brackets right after a value */
    int last_pair_tok = -2; /* the token that made the last pair */
    int piece_start_pair = out->n;
    for (int i = 0; i <= nt; i++) {
        tok *t = i < nt ? &toks[i] : NULL;
        if (side_depth > 0) {
            if (t && t->type == T_OPEN)
                side_depth++;
            else if (t && t->type == T_CLOSE)
                side_depth--;
            else if (!t || t->type == T_SEP) {
                if (t && (t->s.p[0] == ',' || t->s.p[0] == '|' || t->s.p[0] == ';'))
                    side_depth = 0; /* an unclosed bracket does not swallow the line */
            }
            if (t)
                continue;
        }
        if (!t || t->type == T_SEP) {
            /* "11.8750 loss": dangling key words after a number of this piece */
            if (key0 && !assigned && orphan >= piece_start_pair && orphan == out->n - 1)
                out->p[orphan].key = (mfu__span){key0, (size_t)(key1 - key0)};
            key0 = key1 = NULL;
            assigned = false;
            orphan = -1;
            piece_start_pair = out->n;
            continue;
        }
        double sv;
        if (t->type == T_WORD && key0 && assigned && sentinel_word(t->s, &sv)) {
            mfu__kvpair p;
            memset(&p, 0, sizeof p);
            p.key = (mfu__span){key0, (size_t)(key1 - key0)};
            p.value = sv;
            p.total = NAN;
            p.kind = MFU__KV_SENTINEL;
            add(out, &p);
            key0 = key1 = NULL;
            assigned = false;
            last_pair_tok = i;
            continue;
        }
        switch (t->type) {
        case T_WORD:
            if (key0 && !assigned && t->gap == 1 && i > 0 && toks[i - 1].type == T_WORD) {
                key1 = t->s.p + t->s.n; /* "Train loss" */
            } else {
                key0 = t->s.p;
                key1 = t->s.p + t->s.n;
                assigned = false;
            }
            break;
        case T_ASSIGN:
            if (key0)
                assigned = true;
            break;
        case T_OPEN:
            if (key0 && assigned && i + 1 < nt && toks[i + 1].type == T_NUM)
                break; /* "Epoch:[844/1500]": the bracket holds the value */
            if (last_pair_tok == i - 1 && t->gap <= 1) {
                side_depth = 1; /* "516.7 (517.)": a running mean after the value */
                break;
            }
            key0 = key1 = NULL;
            assigned = false;
            break;
        case T_CLOSE: break;
        case T_NUM: {
            if (t->multi) { /* "0.5251/0.1104/0.6355": which one is the loss is not said */
                key0 = key1 = NULL;
                assigned = false;
                break;
            }
            mfu__kvpair p = t->np;
            bool keyed = key0 && (assigned || (t->gap <= 1 && toks[i - 1].type == T_WORD));
            if (keyed) {
                p.key = (mfu__span){key0, (size_t)(key1 - key0)};
            } else {
                p.key = (mfu__span){t->s.p, 0};
                p.leading = first_is_line_start && i == 0;
            }
            add(out, &p);
            if (!keyed)
                orphan = out->n - 1;
            key0 = key1 = NULL;
            assigned = false;
            last_pair_tok = i;
            break;
        }
        default: break;
        }
    }
}

bool mfu__kv_item(mfu__span k, mfu__span v, mfu__kvpair *out)
{
    v = mfu__span_trim(v);
    if (v.n >= 2 && (v.p[0] == '\'' || v.p[0] == '"') && v.p[v.n - 1] == v.p[0])
        v = (mfu__span){v.p + 1, v.n - 2};
    v = mfu__span_trim(v);
    if (v.n == 0)
        return false;
    double sv;
    if (sentinel_word(v, &sv) || mfu__span_eq(v, "NaN") || mfu__span_eq(v, "Infinity")) {
        memset(out, 0, sizeof *out);
        out->value = mfu__span_eq(v, "Infinity") ? INFINITY : sv;
        out->total = NAN;
        out->kind = MFU__KV_SENTINEL;
    } else {
        tok t;
        memset(&t, 0, sizeof t);
        size_t used = scan_number(v.p, v.p + v.n, &t);
        if (!used || used != v.n || t.multi)
            return false; /* text, lists, nested objects */
        *out = t.np;
    }
    out->key = k;
    return true;
}

/* A dict / JSON object: its items whose value is a number or a numeric string. */
static bool read_dict(mfu__span s, mfu__kvline *out)
{
    mfu__span body, k, v;
    if (!mfu__pydict_open(s, &body))
        return false;
    while (mfu__pydict_next(&body, &k, &v)) {
        mfu__kvpair p;
        if (mfu__kv_item(k, v, &p))
            add(out, &p);
    }
    out->dict = true;
    return true;
}

int mfu__kv_read(mfu__span line, mfu__kvline *out)
{
    out->n = 0;
    out->dict = out->bar = false;
    out->bar_s_it = NAN;
    line = mfu__span_trim(line);
    if (line.n == 0)
        return 0;
    if (mfu__pydict_like(line) && read_dict(line, out))
        return out->n;
    mfu__tqdm bar;
    if (mfu__tqdm_parse(line, &bar)) {
        out->bar = true;
        out->bar_s_it = bar.s_per_it;
        mfu__kvpair p;
        memset(&p, 0, sizeof p);
        p.key = (mfu__span){line.p, 0};
        p.value = (double)bar.n;
        p.total = (double)bar.total;
        p.kind = MFU__KV_FRACTION;
        p.integer = true;
        p.leading = true;
        add(out, &p);
        if (bar.desc.n)
            read_text(bar.desc, out, false); /* "Epoch 3" */
        /* the postfix: what follows the rate inside the brackets */
        long pct = mfu__span_find(line, "%|");
        mfu__span r = mfu__span_from(line, pct > 0 ? (size_t)pct : 0);
        long open = mfu__span_find(r, "[");
        if (open >= 0) {
            mfu__span in = mfu__span_from(r, (size_t)open + 1);
            long close = mfu__span_find(in, "]");
            if (close >= 0)
                in.n = (size_t)close;
            long lt = mfu__span_find(in, "<");
            long c1 = lt >= 0 ? mfu__span_find(mfu__span_from(in, (size_t)lt), ",") : -1;
            if (c1 >= 0) {
                mfu__span rate = mfu__span_from(in, (size_t)lt + (size_t)c1 + 1);
                long c2 = mfu__span_find(rate, ",");
                if (c2 >= 0)
                    read_text(mfu__span_from(rate, (size_t)c2 + 1), out, false);
            }
        }
        return out->n;
    }
    read_text(line, out, true);
    return out->n;
}

/* ---- meanings ----------------------------------------------------------------------------- */

size_t mfu__kv_norm_key(mfu__span key, char *buf, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < key.n && k + 1 < n; i++) {
        unsigned char c = (unsigned char)key.p[i];
        if (c == '"' || c == '\'')
            continue;
        buf[k++] = (c == ' ' || c == '-') ? '_' : (char)tolower(c);
    }
    buf[k] = '\0';
    return k;
}

static bool in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, list[i]) == 0)
            return true;
    return false;
}
#define IN(s, list) in_list(s, list, MFU__ARRAY_LEN(list))

static bool has(const char *s, const char *w)
{
    return strstr(s, w) != NULL;
}

static bool ends(const char *s, const char *w)
{
    size_t a = strlen(s), b = strlen(w);
    return a >= b && strcmp(s + a - b, w) == 0;
}

static const char *const counters3[] = {"step",
                                        "steps",
                                        "global_step",
                                        "iter",
                                        "iters",
                                        "iteration",
                                        "iterations",
                                        "num_updates",
                                        "update",
                                        "updates",
                                        "current_steps",
                                        "current_step",
                                        "acc_iter",
                                        "optimizer_step",
                                        "step_num",
                                        "n_iter",
                                        "trainer/global_step",
                                        "train/global_step",
                                        "global_steps"};
static const char *const counters2[] = {"it",         "training_iteration", "train_iter",
                                        "train_step", "batch_idx",          "iter_num"};
static const char *const losses3[] = {"loss",       "train_loss",    "train/loss",   "lm_loss",
                                      "loss/train", "train/lm_loss", "training_loss"};
static const char *const lrs[] = {
    "lr", "learning_rate", "train/lr", "train/learning_rate", "optim/lr", "lr0"};
static const char *const gnorms[] = {"grad_norm", "gnorm",           "gradnorm",
                                     "norm",      "grad_norm_total", "global_norm",
                                     "grad/norm", "train/grad_norm", "gradient_norm"};
static const char *const tok_rates[] = {"tps",
                                        "tok/s",
                                        "toks/s",
                                        "tokens/s",
                                        "tok/sec",
                                        "tokens/sec",
                                        "tokens_per_sec",
                                        "tokens_per_second",
                                        "tokens_per_s",
                                        "token/s",
                                        "tokens_sec",
                                        "wps",
                                        "words/s",
                                        "words_per_second",
                                        "tgs",
                                        "tok_per_sec",
                                        "tokens/second",
                                        "throughput/tokens_per_sec"};
static const char *const sample_rates[] = {
    "sps",          "samples/s", "samples/sec", "samples_per_sec", "samples_per_second", "img/s",
    "images/s",     "imgs/s",    "ex/s",        "examples/s",      "sequences/s",        "seq/s",
    "samples_per_s"};
static const char *const it_rates[] = {
    "it/s",          "it/sec", "its",       "iter/s",      "iters/s", "steps/s", "steps_per_second",
    "steps_per_sec", "ups",    "updates/s", "iterations/s"};
static const char *const sec_per[] = {"s/it",   "sec/it",   "s/iter", "sec/iter",
                                      "s/step", "sec/step", "s/batch"};
static const char *const ms_per[] = {"ms/step", "ms/it", "ms/iter", "ms/batch"};
static const char *const step_times[] = {"step_time",
                                         "time_per_step",
                                         "iter_time",
                                         "iteration_time",
                                         "time_per_iter",
                                         "time_per_iteration",
                                         "elapsed_time_per_iteration",
                                         "batch_time",
                                         "step_duration",
                                         "iter_duration",
                                         "train_step_time",
                                         "train_step_timing",
                                         "time_step",
                                         "epoch_time",
                                         "time_cost",
                                         "batch_duration",
                                         "step_time_s",
                                         "train/step_time"};
static const char *const step_time_exact[] = {"dt", "time", "t", "duration", "step_s", "dt_s"};
static const char *const elapsed[] = {
    "elapsed",     "elapsed_time",    "elapsed_s",    "wall",      "wall_time",     "walltime",
    "train_time",  "training_time",   "time_elapsed", "runtime",   "train_runtime", "total_time",
    "time_so_far", "elapsed_seconds", "time/total",   "train/time"};
static const char *const tokens_step[] = {"tokens",   "num_tokens",       "ntokens",
                                          "toks",     "batch_tokens",     "tokens_per_step",
                                          "n_tokens", "tokens_per_batch", "num_tokens_in_batch"};
static const char *const tokens_cum[] = {
    "consumed_tokens", "tokens_seen", "trained_tokens",   "total_tokens", "num_input_tokens_seen",
    "tokens_so_far",   "seen_tokens", "processed_tokens", "train/tokens", "tokens_total"};
static const char *const samples_step[] = {"bsz", "batch_size", "global_batch_size", "gbs"};
static const char *const seqlens[] = {"seq_len",         "seqlen",      "seq_length",
                                      "sequence_length", "max_seq_len", "block_size"};

/* What a unit is: 1 time, 2 bytes, 3 FLOP/s, 4 tokens/s, 5 samples/s, 6 it/s, 7 s/it,
 * 8 percent, 9 a magnitude (K, M, G, T); 0 none or unknown. *f: the factor to base units,
 * *p10: the same as a power of ten (exact scaling) or 99 when it is not one. */
static int unit_class(mfu__span u, double *f, int *p10)
{
    static const struct {
        const char *u;
        int cls;
        double f;
        int p10;
    } t[] = {
        {"ns", 1, 1e-9, -9},
        {"us", 1, 1e-6, -6},
        {"\xc2\xb5s", 1, 1e-6, -6},
        {"ms", 1, 1e-3, -3},
        {"s", 1, 1, 0},
        {"sec", 1, 1, 0},
        {"secs", 1, 1, 0},
        {"min", 1, 60, 99},
        {"h", 1, 3600, 99},
        {"B", 2, 1, 0},
        {"KB", 2, 1e3, 3},
        {"kB", 2, 1e3, 3},
        {"MB", 2, 1e6, 6},
        {"GB", 2, 1e9, 9},
        {"TB", 2, 1e12, 12},
        {"KiB", 2, 1024.0, 99},
        {"MiB", 2, 1048576.0, 99},
        {"GiB", 2, 1073741824.0, 99},
        {"TiB", 2, 1099511627776.0, 99},
        {"FLOPS", 3, 1, 0},
        {"FLOP/s", 3, 1, 0},
        {"GFLOPS", 3, 1e9, 9},
        {"GFLOP/s", 3, 1e9, 9},
        {"TFLOPS", 3, 1e12, 12},
        {"TFLOP/s", 3, 1e12, 12},
        {"TFLOPs", 3, 1e12, 12},
        {"PFLOPS", 3, 1e15, 15},
        {"PFLOP/s", 3, 1e15, 15},
        {"tok/s", 4, 1, 0},
        {"tokens/s", 4, 1, 0},
        {"tokens/sec", 4, 1, 0},
        {"tok/sec", 4, 1, 0},
        {"words/s", 4, 1, 0},
        {"wps", 4, 1, 0},
        {"samples/s", 5, 1, 0},
        {"samples/sec", 5, 1, 0},
        {"img/s", 5, 1, 0},
        {"images/s", 5, 1, 0},
        {"seq/s", 5, 1, 0},
        {"sequences/s", 5, 1, 0},
        {"ex/s", 5, 1, 0},
        {"examples/s", 5, 1, 0},
        {"it/s", 6, 1, 0},
        {"steps/s", 6, 1, 0},
        {"s/it", 7, 1, 0},
        {"s/iter", 7, 1, 0},
        {"s/step", 7, 1, 0},
        {"it/sec", 6, 1, 0},
        {"%", 8, 0.01, -2},
        {"K", 9, 1e3, 3},
        {"k", 9, 1e3, 3},
        {"M", 9, 1e6, 6},
        {"G", 9, 1e9, 9},
        {"T", 9, 1e12, 12},
    };
    *f = 1;
    *p10 = 0;
    if (u.n == 0)
        return 0;
    for (size_t i = 0; i < MFU__ARRAY_LEN(t); i++)
        if (mfu__span_eq(u, t[i].u)) {
            *f = t[i].f;
            *p10 = t[i].p10;
            return t[i].cls;
        }
    return 0;
}

static double scaled(double v, double f, int p10)
{
    if (!isfinite(v))
        return v;
    return p10 == 99 ? v * f : mfu__scale10(v, p10);
}

/* Seconds per unit named in a key: "dt_ms", "time (ms)", "elapsed_time_per_iteration_ms". */
static int key_time_p10(const char *nk)
{
    if (ends(nk, "_ms") || ends(nk, "(ms)") || ends(nk, "_in_ms") || ends(nk, "/ms") ||
        has(nk, "_ms_") || ends(nk, "ms)"))
        return -3;
    if (ends(nk, "_us") || ends(nk, "(us)"))
        return -6;
    return 0;
}

/* Bytes per unit named in a key: "memory/max_active (GiB)", "mem_gb". 0 when none. */
static double key_bytes(const char *nk)
{
    if (has(nk, "(gib)") || ends(nk, "_gib") || has(nk, "gib)"))
        return 1073741824.0;
    if (has(nk, "(mib)") || ends(nk, "_mib"))
        return 1048576.0;
    if (has(nk, "(gb)") || ends(nk, "_gb"))
        return 1e9;
    if (has(nk, "(mb)") || ends(nk, "_mb"))
        return 1e6;
    return 0;
}

static mfu_scope scope_of(const char *nk)
{
    if (has(nk, "gpu") || has(nk, "device") || has(nk, "per_dev") || has(nk, "/dev") ||
        has(nk, "per_rank") || has(nk, "per_chip"))
        return MFU_SCOPE_DEVICE;
    return MFU_SCOPE_GLOBAL;
}

static bool set(mfu__kvmeaning *m, mfu__kvrole r, double v, int prio)
{
    m->role = r;
    m->value = v;
    m->prio = prio;
    return true;
}

bool mfu__kv_meaning(const mfu__kvpair *p, mfu__kvmeaning *m)
{
    char nk[MFU__KV_KEY_MAX];
    mfu__kv_norm_key(p->key, nk, sizeof nk);
    m->role = MFU__KR_NONE;
    m->value = NAN;
    m->scope = MFU_SCOPE_GLOBAL;
    m->prio = 0;
    double f;
    int p10;
    int uc = unit_class(p->unit, &f, &p10);
    double v = p->value;
    bool whole = p->kind == MFU__KV_FRACTION || (p->kind == MFU__KV_NUMBER && p->integer);
    bool avg = has(nk, "avg") || has(nk, "mean") || has(nk, "running") || has(nk, "ema");
    bool eval = has(nk, "val") || has(nk, "eval") || has(nk, "test");
    bool remaining = has(nk, "remain") || has(nk, "eta") || has(nk, "left");
    /* the step counter */
    if (whole && v >= 0 && uc == 0) {
        if (IN(nk, counters3))
            return set(m, MFU__KR_COUNTER, v, 3);
        if (IN(nk, counters2) || ends(nk, "_iteration") || ends(nk, "_iter"))
            return set(m, MFU__KR_COUNTER, v, 2);
        if (nk[0] == '\0') /* the line's first number; else "[50/7330]" before "[1]" */
            return set(m, MFU__KR_COUNTER, v, p->leading ? 2 : p->kind == MFU__KV_FRACTION ? 1 : 0);
        if (strcmp(nk, "batch") == 0)
            return set(m, MFU__KR_COUNTER, v, 1);
        if (has(nk, "epoch") && !has(nk, "time") && !has(nk, "epochs"))
            return set(m, MFU__KR_EPOCH, v, 1);
    }
    if (p->kind == MFU__KV_FRACTION)
        return false; /* "micro=7/10" and other counts out of a total */
    /* cumulative time (before the step-time names: "train_time" is elapsed) */
    if (!remaining && (IN(nk, elapsed) || (p->kind == MFU__KV_DURATION && has(nk, "elapsed")))) {
        if (p->kind == MFU__KV_DURATION)
            return set(m, MFU__KR_ELAPSED, v, 3);
        int kp = key_time_p10(nk);
        return set(m, MFU__KR_ELAPSED, uc == 1 ? scaled(v, f, p10) : mfu__scale10(v, kp), 3);
    }
    if (p->kind == MFU__KV_DURATION)
        return false; /* remaining time, ETA */
    /* loss */
    if (has(nk, "loss") && !eval && !has(nk, "scale") && !has(nk, "weight") && uc == 0)
        return set(m, MFU__KR_LOSS, v, IN(nk, losses3) ? 3 : avg ? 1 : 2);
    if (IN(nk, lrs) || strncmp(nk, "lr_", 3) == 0 || strncmp(nk, "lr/", 3) == 0 ||
        ends(nk, "/lr") || ends(nk, "_lr") || (p->key.n && strcmp(nk, "learning_rate") == 0))
        return uc == 0 ? set(m, MFU__KR_LR, v, 3) : false;
    if (IN(nk, gnorms) || has(nk, "grad_norm"))
        return uc == 0 ? set(m, MFU__KR_GNORM, v, IN(nk, gnorms) ? 3 : 2) : false;
    /* the framework's MFU */
    if (strcmp(nk, "mfu") == 0 || ends(nk, "/mfu") || strncmp(nk, "mfu_", 4) == 0 ||
        ends(nk, "_mfu")) {
        m->scope = MFU_SCOPE_DEVICE;
        if (uc == 8)
            return set(m, MFU__KR_MFU, mfu__scale10(v, -2), 3);
        if (uc == 0)
            return set(m, MFU__KR_MFU, fabs(v) <= 1.0 ? v : mfu__scale10(v, -2), 2);
        return false;
    }
    if (has(nk, "hfu"))
        return false;
    /* FLOP/s */
    if (has(nk, "flop") || uc == 3) {
        if (uc != 3 && uc != 0 && uc != 9)
            return false;
        if (has(nk, "flops") && !has(nk, "/s") && !has(nk, "per_s") && !has(nk, "tflop") &&
            !has(nk, "gflop") && !has(nk, "pflop") && uc == 0 &&
            (has(nk, "total") || strcmp(nk, "flops") == 0 || has(nk, "flos")))
            return false; /* a FLOP count ("total_flos") */
        m->scope = scope_of(nk);
        double x = uc == 3 || uc == 9 ? scaled(v, f, p10)
                   : has(nk, "tflop") ? mfu__scale10(v, 12)
                   : has(nk, "gflop") ? mfu__scale10(v, 9)
                   : has(nk, "pflop") ? mfu__scale10(v, 15)
                                      : v;
        bool hw = has(nk, "hardware") || has(nk, "hw_");
        return set(m, MFU__KR_FLOPS_PER_S, x, hw ? 1 : has(nk, "model") ? 3 : 2);
    }
    /* rates: by name, then by the unit after the number */
    double mag = uc == 9 ? f : 1.0;
    int magp = uc == 9 ? p10 : 0;
    bool plain = uc == 0 || uc == 9;
    if (plain &&
        (IN(nk, tok_rates) || (has(nk, "token") && (has(nk, "/s") || has(nk, "per_s") ||
                                                    has(nk, "per_sec") || has(nk, "/sec"))))) {
        m->scope = scope_of(nk);
        return set(m, MFU__KR_TOKENS_PER_S, scaled(v, mag, magp), IN(nk, tok_rates) ? 3 : 2);
    }
    if (plain &&
        (IN(nk, sample_rates) ||
         (has(nk, "sample") && (has(nk, "/s") || has(nk, "per_s") || has(nk, "per_sec"))))) {
        m->scope = scope_of(nk);
        return set(m, MFU__KR_SAMPLES_PER_S, scaled(v, mag, magp), IN(nk, sample_rates) ? 3 : 2);
    }
    if (plain && IN(nk, it_rates))
        return set(m, MFU__KR_RATE_IT, scaled(v, mag, magp), 3);
    if (uc == 4 || uc == 5) {
        m->scope = scope_of(nk);
        return set(m, uc == 4 ? MFU__KR_TOKENS_PER_S : MFU__KR_SAMPLES_PER_S, v, 2);
    }
    if (uc == 6)
        return set(m, MFU__KR_RATE_IT, v, 2);
    if (uc == 7 || (uc == 0 && IN(nk, sec_per)))
        return set(m, MFU__KR_STEP_TIME, v, 3);
    if (uc == 0 && IN(nk, ms_per))
        return set(m, MFU__KR_STEP_TIME, mfu__scale10(v, -3), 3);
    /* step time by name: the unit after the number, else the one in the key, else seconds */
    bool per = has(nk, "time") && (has(nk, "per_iter") || has(nk, "per_step") || has(nk, "/step"));
    char base[MFU__KV_KEY_MAX]; /* the key without a unit at its end: "dt_ms" -> "dt" */
    mfu__strlcpy(base, nk, sizeof base);
    static const char *const unit_tails[] = {"_ms",  "_s",  "_sec", "_secs",  "_seconds",
                                             "(ms)", "(s)", "_us",  "_in_ms", "_in_s"};
    for (size_t i = 0; i < MFU__ARRAY_LEN(unit_tails); i++)
        if (ends(base, unit_tails[i]) && strlen(base) > strlen(unit_tails[i])) {
            base[strlen(base) - strlen(unit_tails[i])] = '\0';
            while (base[0] && base[strlen(base) - 1] == '_')
                base[strlen(base) - 1] = '\0';
            break;
        }
    if (!remaining &&
        (IN(nk, step_times) || IN(nk, step_time_exact) || IN(base, step_times) ||
         IN(base, step_time_exact) || per || ends(base, "_time") || ends(nk, "_timing"))) {
        if (uc != 0 && uc != 1)
            return false;
        double x = uc == 1 ? scaled(v, f, p10) : mfu__scale10(v, key_time_p10(nk));
        bool named = IN(nk, step_times) || IN(nk, step_time_exact) || IN(base, step_times) ||
                     IN(base, step_time_exact) || per;
        bool part = has(nk, "data") || has(nk, "forward") || has(nk, "backward") ||
                    has(nk, "optim") || has(nk, "comm") || has(nk, "fwd") || has(nk, "bwd");
        if (part)
            return false; /* a part of the step (data loading, forward) */
        return set(m, MFU__KR_STEP_TIME, x, avg ? 0 : named ? 3 : 1);
    }
    /* memory */
    if (has(nk, "mem") || has(nk, "reserved") || has(nk, "allocated") || uc == 2) {
        double kb = key_bytes(nk);
        /* a bare magnitude after a memory figure ("max_mem: 9630M", detectron2) is binary */
        double bin = p10 == 3   ? 1024.0
                     : p10 == 6 ? 1048576.0
                     : p10 == 9 ? 1073741824.0
                                : 1099511627776.0;
        double x = uc == 2 ? scaled(v, f, p10) : uc == 9 ? v * bin : kb > 0 ? v * kb : NAN;
        if (isnan(x) || (uc != 0 && uc != 2 && uc != 9))
            return false;
        int pr = has(nk, "reserved") || has(nk, "peak") || has(nk, "max") ? 3
                 : has(nk, "alloc")                                       ? 2
                                                                          : 1;
        return set(m, MFU__KR_MEMORY, x, pr);
    }
    if (plain && IN(nk, tokens_step))
        return set(m, MFU__KR_TOKENS, scaled(v, mag, magp), 3);
    if (plain && IN(nk, tokens_cum))
        return set(m, MFU__KR_TOKENS_CUM, scaled(v, mag, magp), 3);
    if (uc == 0 && IN(nk, samples_step))
        return set(m, MFU__KR_SAMPLES, v, 2);
    if (uc == 0 && IN(nk, seqlens))
        return set(m, MFU__KR_SEQ_LEN, v, 3);
    /* a time with no known name ("93.44 s run", "8060.78ms"): a step time, unsure */
    if (uc == 1 && !remaining)
        return set(m, MFU__KR_STEP_TIME, scaled(v, f, p10), nk[0] ? 1 : 2);
    return false;
}

const char *mfu__kv_role_name(mfu__kvrole r)
{
    static const char *const names[MFU__KR_COUNT_] = {
        [MFU__KR_NONE] = "",
        [MFU__KR_COUNTER] = "step",
        [MFU__KR_EPOCH] = "epoch",
        [MFU__KR_LOSS] = "loss",
        [MFU__KR_LR] = "lr",
        [MFU__KR_GNORM] = "grad_norm",
        [MFU__KR_STEP_TIME] = "step_time_s",
        [MFU__KR_ELAPSED] = "elapsed",
        [MFU__KR_RATE_IT] = "step_time_s",
        [MFU__KR_TOKENS_PER_S] = "tokens_per_s",
        [MFU__KR_SAMPLES_PER_S] = "samples_per_s",
        [MFU__KR_FLOPS_PER_S] = "flops_per_s",
        [MFU__KR_MFU] = "mfu",
        [MFU__KR_MEMORY] = "memory_bytes",
        [MFU__KR_TOKENS] = "tokens",
        [MFU__KR_TOKENS_CUM] = "tokens_total",
        [MFU__KR_SAMPLES] = "samples",
        [MFU__KR_SEQ_LEN] = "seq_len",
    };
    return (int)r >= 0 && r < MFU__KR_COUNT_ ? names[r] : "";
}
