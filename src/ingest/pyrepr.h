/*
 * ingest/pyrepr.h - reading what Python training scripts print: dict reprs and tqdm bars.
 *
 * Used by the formats of Python frameworks (hf, axolotl, maxtext, torchtune, ...). Both
 * readers are pure functions over spans of a cleaned line (format.h); nothing is copied.
 *
 * A dict repr is what str(dict) prints: {'loss': 1.23, 'lr': '2e-05', 'mom': [0.9, 0.99]}.
 * Keys are quoted strings; values are anything (numbers, quoted strings, lists, nested dicts,
 * object reprs) and are returned as raw spans for mfu__num_parse.
 *
 * A tqdm bar is what tqdm redraws (each redraw is its own logical line, see
 * docs/internals/ingest.md):  "desc:  10%|█         | 20/200 [00:11<01:44,  1.72it/s, k=v]"
 * Text may follow the closing ']' (a dict printed without a newline after the bar).
 */
#ifndef MFU_INGEST_PYREPR_H
#define MFU_INGEST_PYREPR_H

#include "ingest/format.h"

/* Bytes of a string literal. */
#define MFU__LIT_LEN(lit) (sizeof(lit) - 1)

/* s without its first k bytes (empty when k >= s.n). */
static inline mfu__span mfu__span_from(mfu__span s, size_t k)
{
    if (k >= s.n)
        return (mfu__span){s.p + s.n, 0};
    return (mfu__span){s.p + k, s.n - k};
}

/* If s (trimmed) is a dict repr "{...}" with a quoted first key, set *body to the text between
 * the braces and return true. "{}" is not accepted (there is nothing to read). */
bool mfu__pydict_open(mfu__span s, mfu__span *body);

/* Cut the next "'key': value" item off *body: *key gets the key without its quotes, *val the
 * value trimmed (quotes kept, so that mfu__num_parse reads '3.41'). Commas inside brackets,
 * parentheses, braces and quotes do not end a value. Returns false at the end of the body or
 * when the next item is malformed (then *body is emptied). */
bool mfu__pydict_next(mfu__span *body, mfu__span *key, mfu__span *val);

/* Whether s (trimmed) looks like the start of a dict repr line: "{'" or "{\"". */
bool mfu__pydict_like(mfu__span s);

/* One tqdm bar. */
typedef struct mfu__tqdm {
    mfu__span desc;  /* text before the percentage, without a trailing ':' (may be empty) */
    int64_t n;       /* iterations done */
    int64_t total;   /* iterations in all */
    double s_per_it; /* seconds per iteration from the rate ("1.72it/s" or "2.15s/it"); NaN
                        when the rate is '?' or missing */
    mfu__span rest;  /* the text after the closing ']' (trimmed, may be empty) */
} mfu__tqdm;

/* Read a tqdm bar with a total ("NN%|bar| n/total [elapsed<left, rate...]") anywhere in s.
 * Returns false when s holds none. */
bool mfu__tqdm_parse(mfu__span s, mfu__tqdm *out);

#endif /* MFU_INGEST_PYREPR_H */
