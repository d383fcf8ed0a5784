/*
 * ingest/kvline.h - the numbers of a log line as key/value pairs, and what a key means.
 *
 * The generic reader (fmt_generic.c) reads logs of stacks no format knows. It sees a line as a
 * list of pairs: a key as printed ("Train loss", "tokens_per_sec", "It/sec", "" for a value
 * without a name) and a number with what followed it (a unit, "/M" of a counter, a duration).
 * Three layouts are read:
 *   - a dict or JSON object:   {'loss': 1.2, 'lr': '3e-4'}   {"step": 5, "dt_ms": 412}
 *   - a tqdm bar:              Epoch 0:  40%|####  | 4/10 [00:03<00:05,  1.2it/s, loss=2.1]
 *   - text, with pieces separated by ",", "|", ";", a tab or two blanks, and in each piece
 *     "key: value", "key=value", "key value", "value key" (tinygrad's "11.87 loss"), a value
 *     alone ("412.1ms"), "N/M" counters, "H:MM:SS" durations; a number in brackets right
 *     after another ("1.27 (1.50)", a running mean) is passed over.
 * mfu__kv_meaning() then says what a pair is, from the key's words and the value's unit:
 * the step counter, loss, lr, grad norm, step time, elapsed time, rates, memory, ... (the
 * table is in kvline.c and docs/formats.md, "generic").
 *
 * Pure functions over a cleaned line (format.h); the pairs point into the line. Limits:
 * MFU__KV_MAX_PAIRS pairs a line (later ones are dropped), keys of MFU__KV_KEY_MAX bytes.
 */
#ifndef MFU_INGEST_KVLINE_H
#define MFU_INGEST_KVLINE_H

#include "ingest/format.h"

#define MFU__KV_MAX_PAIRS 40
#define MFU__KV_KEY_MAX 64 /* a longer key is kept cut (its meaning is read from the cut key) */

typedef enum mfu__kvkind {
    MFU__KV_NUMBER = 0, /* a number (value), maybe with a unit */
    MFU__KV_FRACTION,   /* "N/M": value N, total M */
    MFU__KV_DURATION,   /* "H:MM:SS" / "MM:SS" (value in seconds) */
    MFU__KV_SENTINEL    /* nan, inf, N/A, None (value NaN or inf) */
} mfu__kvkind;

typedef struct mfu__kvpair {
    mfu__span key;  /* as printed (quotes removed); empty: a value without a name */
    mfu__span unit; /* the unit text after the number ("ms", "samples/s", "GB"), may be empty */
    double value;   /* the number as printed (the unit not applied) */
    double total;   /* the M of "N/M", else NaN */
    mfu__kvkind kind;
    bool integer; /* value is a whole number written without a fraction or exponent */
    bool leading; /* the first token of the line, without a key (a step number "490 | ...") */
} mfu__kvpair;

typedef struct mfu__kvline {
    mfu__kvpair p[MFU__KV_MAX_PAIRS];
    int n;
    bool dict;       /* read as a dict / JSON object */
    bool bar;        /* read as a tqdm bar (its count is a pair with key "" and leading set) */
    double bar_s_it; /* the bar's seconds per iteration, NaN when none */
} mfu__kvline;

/* Read the pairs of a cleaned line into *out. Returns out->n. */
int mfu__kv_read(mfu__span line, mfu__kvline *out);

/* One dict item as a pair: key as given, val a number, a numeric string (quotes allowed) or a
 * sentinel. False for text, lists and objects. */
bool mfu__kv_item(mfu__span key, mfu__span val, mfu__kvpair *out);

/* What a pair is. */
typedef enum mfu__kvrole {
    MFU__KR_NONE = 0,
    MFU__KR_COUNTER,       /* the step counter (step, iter, update, batch, a leading number) */
    MFU__KR_EPOCH,         /* the epoch (a counter of last resort) */
    MFU__KR_LOSS,          /* training loss */
    MFU__KR_LR,            /* learning rate */
    MFU__KR_GNORM,         /* gradient norm */
    MFU__KR_STEP_TIME,     /* seconds of one step (or of the logging interval's steps, each) */
    MFU__KR_ELAPSED,       /* seconds since the start (cumulative) */
    MFU__KR_RATE_IT,       /* steps per second (it/s, ups) */
    MFU__KR_TOKENS_PER_S,  /* tokens (words) per second */
    MFU__KR_SAMPLES_PER_S, /* samples (sequences, images) per second */
    MFU__KR_FLOPS_PER_S,   /* FLOP/s */
    MFU__KR_MFU,           /* model FLOPs utilization, fraction */
    MFU__KR_MEMORY,        /* device memory, bytes */
    MFU__KR_TOKENS,        /* tokens in this step */
    MFU__KR_TOKENS_CUM,    /* tokens since the start (cumulative) */
    MFU__KR_SAMPLES,       /* samples in this step (the batch size) */
    MFU__KR_SEQ_LEN,       /* tokens per sequence */
    MFU__KR_COUNT_
} mfu__kvrole;

typedef struct mfu__kvmeaning {
    mfu__kvrole role;
    double value;    /* in base units: seconds, bytes, FLOP/s, fractions; counters as printed */
    mfu_scope scope; /* rates and FLOP/s: per device when the key says so (gpu, device) */
    int prio;        /* how sure the name is (3 exact, 2 usual, 1 guessed from a word or unit) */
} mfu__kvmeaning;

/* The meaning of pair p. Returns false (role NONE) for a pair whose name and unit say nothing
 * the run keeps (accuracy, epoch fractions of nothing, percentages of something else). */
bool mfu__kv_meaning(const mfu__kvpair *p, mfu__kvmeaning *m);

/* The name of a role as a --map field ("step", "step_time_s", ...; "elapsed" and
 * "tokens_total" for the cumulative roles, which are differenced into per-step values). */
const char *mfu__kv_role_name(mfu__kvrole r);

/* key lower-cased, blanks and '-' made '_', into buf (size n > 0); the length. */
size_t mfu__kv_norm_key(mfu__span key, char *buf, size_t n);

#endif /* MFU_INGEST_KVLINE_H */
