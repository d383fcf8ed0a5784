/*
 * ingest/format.h - the contract between the ingest framework and one log format.
 *
 * A format is one file src/ingest/fmt_NAME.c that defines `const mfu__format mfu__fmt_NAME`
 * and one line in the table of src/ingest/registry.c. The framework reads, decompresses and
 * cleans lines (format.h never sees ANSI escapes, carriage returns, launcher or logging
 * prefixes, quoting or indentation), detects the format, and hands each cleaned line to the
 * format's `line` callback. The format turns lines into mfu_step records (mfu__emit) and
 * run metadata (mfu__meta), and says what it did with each line:
 *   - nothing (default): the line is not this format's (counted as ignored);
 *   - mfu__used(c): the line gave a step or metadata;
 *   - mfu__skip(c, fmt, ...): the line is this format's but could not be read (counted, and
 *     the first few are kept with their line number and the reason for the report).
 * A callback returns MFU_OK, or an error that ends the whole session (limit, memory, or a
 * malformed input the format cannot go past). See docs/internals/ingest.md "Adding a format".
 *
 * Helpers for the text of a line (spans, key/value splitting, numbers with units and
 * sentinels, timestamps) are declared here too; all are pure functions.
 */
#ifndef MFU_INGEST_FORMAT_H
#define MFU_INGEST_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mfu/ingest.h"
#include "mfu/run.h"
#include "util/util.h"

/* ---- lines ------------------------------------------------------------------------------ */

/* One cleaned logical line. text is NUL-terminated and has no trailing blank. */
typedef struct mfu__line {
    const char *text; /* cleaned text */
    size_t len;       /* strlen(text) */
    const char *raw;  /* the line with only ANSI escapes removed (prefixes kept) */
    size_t raw_len;
    long lineno;          /* 1-based physical line number */
    double prefix_time_s; /* timestamp read from a stripped prefix (s since 1970, UTC), or NaN */
    int rank;             /* rank read from a stripped launcher prefix, or -1 */
} mfu__line;

/* Detection scores a format's detect() gives one line. The session sums them over the first
 * lines; the format with the highest sum wins (ties: earlier in the registry). */
enum {
    MFU__DETECT_NONE = 0, /* not this format */
    MFU__DETECT_HINT = 1, /* a header or side line typical of this format */
    MFU__DETECT_STEP = 10 /* a step line of this format */
};

/* The session as a format sees it (opaque). */
typedef struct mfu__ictx mfu__ictx;

/* One format. Callbacks other than detect and line may be NULL. */
typedef struct mfu__format {
    const char *name;    /* --format NAME: lower case, [a-z0-9_-] */
    const char *summary; /* one line for `mfu convert --list-formats` and the docs */
    /* Score one cleaned line (MFU__DETECT_*); must be fast and side-effect free. */
    int (*detect)(const mfu__line *ln);
    size_t state_size; /* bytes of parser state, zeroed before init */
    /* Prepare state; opts are the session's (the generic formats read opts->map). */
    mfu_status (*init)(void *state, const mfu_ingest_opts *opts, mfu_error *err);
    /* Optional: see the lines held for detection (at most MFU_INGEST_DETECT_LINES /
     * MFU_INGEST_DETECT_BYTES), in order, before they are replayed through line(). For a
     * format that learns the layout of a log from its first lines (generic). When such a
     * format is forced, the session holds that window for it too. */
    void (*prescan)(void *state, const mfu__line *ln);
    /* Read one cleaned line. */
    mfu_status (*line)(void *state, mfu__ictx *c, const mfu__line *ln);
    /* End of all input: emit what is pending (multi-line records). */
    mfu_status (*finish)(void *state, mfu__ictx *c);
    /* Release what state owns. */
    void (*cleanup)(void *state);
    /* true: mfu__emit stores steps exactly as given (no tokens from the header, no sentinel
     * conversion, no rank/time from the prefix); for formats that are already normalised. */
    bool raw_emit;
    /* true: a generic reader (jsonl, csv) whose lines many logs also match. During detection
     * its score counts only while no specific format has scored a step line, so a specific
     * format's header (Lightning's metrics.csv) beats thousands of plain CSV rows. */
    bool generic;
    /* true: the last resort of detection (generic): its score counts only for lines no other
     * format scores, and it is chosen only when no specific format has a step line and every
     * format that scored hints read no step from the held lines (docs/internals/ingest.md,
     * "Detection"). */
    bool last_resort;
} mfu__format;

/* ---- what a format calls -------------------------------------------------------------- */

/* Mark the current line as used. */
void mfu__used(mfu__ictx *c);

/* Mark the current line as skipped with a one-line reason (what was expected). */
void mfu__skip(mfu__ictx *c, const char *fmt, ...) MFU__PRINTF(2, 3);

/* Set the session's note (stats.note, at most MFU_INGEST_NOTE_MAX - 1 bytes): what the format
 * assumed about the log, for the CLI to print (the generic reader's mapping). Replaces an
 * earlier note. */
void mfu__note(mfu__ictx *c, const char *fmt, ...) MFU__PRINTF(2, 3);

/* Append a step to the run (merging a repeated step number, see mfu/run.h) and mark the line
 * used. Fills rank from the line prefix and time_s from the prefix timestamp when s leaves
 * them unset, and normalises sentinels: a negative mfu becomes NaN with MFU_STEP_MFU_SENTINEL,
 * an infinite value becomes NaN (an infinite loss also sets MFU_STEP_LOSS_NAN), and tokens come
 * from the header (MFU_STEP_TOKENS_DERIVED) when the step lacks them. Errors (MFU_E_LIMIT,
 * MFU_E_NOMEM) end the session: return them. */
mfu_status mfu__emit(mfu__ictx *c, const mfu_step *s);
/* Keep a per-rank observation of the run's last row (mfu_run_rank_obs_append; the canonical
 * reader restores them so). Fails the line on MFU_E_NOMEM; a run without rows skips it. */
mfu_status mfu__emit_rank_obs(mfu__ictx *c, const mfu_rank_obs *o);

/* A fatal error from a format: records "SOURCE:LINE: message" as the session's error and
 * returns code, so a callback ends with `return mfu__fail_line(c, MFU_E_PARSE, "...");`.
 * The message names what was expected and the fix. */
mfu_status mfu__fail_line(mfu__ictx *c, mfu_status code, const char *fmt, ...) MFU__PRINTF(3, 4);

/* The run's metadata, for the format to fill. meta->format is set by the session. */
mfu_run_meta *mfu__meta(mfu__ictx *c);

/* Record how the framework computes its own figures (meta->convention), unless a line already
 * did: a format calls it with each step it emits. */
void mfu__convention(mfu__ictx *c, const char *text);

/* The run as filled so far (read-only), e.g. to look at the last row with mfu_run_count()
 * and mfu_run_get() before attaching a side line to it. */
const mfu_run *mfu__run(const mfu__ictx *c);

/* The current line's number (for messages). */
long mfu__lineno(const mfu__ictx *c);

/* The name of the input being read ("-" for stdin), for messages. */
const char *mfu__source_name(const mfu__ictx *c);

/* ---- text helpers ----------------------------------------------------------------------- */

/* A slice of a line (not NUL-terminated). */
typedef struct mfu__span {
    const char *p;
    size_t n;
} mfu__span;

mfu__span mfu__span_of(const char *s); /* the whole C string */
/* The trim and the three comparisons below are C11 inline functions (defined at the end of
 * this header, with their one external definition in text.c): they run for every piece of
 * every line, and strlen of a literal folds away. */
inline mfu__span mfu__span_trim(mfu__span s);               /* without leading/trailing blanks */
inline bool mfu__span_eq(mfu__span s, const char *lit);     /* exact match */
inline bool mfu__span_ieq(mfu__span s, const char *lit);    /* ASCII case-insensitive match */
inline bool mfu__span_starts(mfu__span s, const char *lit); /* s begins with lit */
/* Position of the first occurrence of lit in s, or -1. */
long mfu__span_find(mfu__span s, const char *lit);
/* Copy s into dst (size n > 0), NUL-terminated, truncated to fit. */
void mfu__span_copy(mfu__span s, char *dst, size_t n);

/* Cut the next piece off *rest at the first occurrence of sep (sep is consumed; the last
 * piece is what remains). Returns false when *rest is empty. Pieces are not trimmed. */
bool mfu__split_next(mfu__span *rest, const char *sep, mfu__span *piece);

/* Split piece at the first occurrence of kvsep into trimmed key and value. False when kvsep
 * does not occur. */
bool mfu__kv(mfu__span piece, const char *kvsep, mfu__span *key, mfu__span *val);

/* What a number's unit suffix made of it. Values are normalised to the base unit. */
typedef enum mfu__unit {
    MFU__UNIT_NONE = 0,    /* plain number */
    MFU__UNIT_SECONDS,     /* s, ms, us, µs, ns, min, h -> seconds */
    MFU__UNIT_BYTES,       /* B, KB, MB, GB, TB (10^3 steps), KiB, MiB, GiB, TiB -> bytes */
    MFU__UNIT_FLOPS_PER_S, /* FLOPS, GFLOPS, TFLOPS, PFLOPS, TFLOP/s, ... -> FLOP/s */
    MFU__UNIT_FLOPS,       /* FLOP counts: GFLOP, TFLOP, PFLOP (no "/s") -> FLOPs */
    MFU__UNIT_FRACTION     /* % -> value / 100 */
} mfu__unit;

/* What kind of value a number token was. */
typedef enum mfu__numkind {
    MFU__NUM_FINITE = 0, /* a finite number */
    MFU__NUM_NAN,        /* nan, -nan (value NaN) */
    MFU__NUM_INF,        /* inf, -inf, infinity (value +-inf) */
    MFU__NUM_NA          /* N/A, NA, None, null, "-" (value NaN: not available) */
} mfu__numkind;

typedef struct mfu__num {
    double value;   /* normalised to the base unit of `unit` */
    double printed; /* the number as printed, before the unit scaled it */
    mfu__unit unit;
    mfu__numkind kind;
} mfu__num;

/* Read a number at *p (before end): optional blanks and one quote ('"' or '\''), sign,
 * digits with optional thousands separators ("10,050": a comma followed by exactly three
 * digits), fraction, exponent (e/E), optional blank and unit suffix, closing quote; or a
 * sentinel word. On success advances *p past what was read and returns true; otherwise
 * leaves *p and returns false. */
bool mfu__num_scan(const char **p, const char *end, mfu__num *out);

/* As mfu__num_scan, but the whole span (trimmed) must be the number. */
bool mfu__num_parse(mfu__span s, mfu__num *out);

/* As mfu__num_parse, with the value also multiplied by 10^shift in decimal (exact for what was
 * printed): ms -> s is mfu__num_parse_shift(s, -3, &n). */
bool mfu__num_parse_shift(mfu__span s, int shift, mfu__num *out);

/* Convenience: the value of span s as a finite plain or unit number, or NaN when s is not a
 * number or is a sentinel. */
double mfu__num_value(mfu__span s);

/* Store n as the step's loss: a nan or inf loss is kept as NaN with MFU_STEP_LOSS_NAN. */
void mfu__set_loss(mfu_step *s, const mfu__num *n);

/* v x 10^k, rounded as if v's shortest decimal had been written with that exponent, so that
 * 15210.6 ms gives 15.2106 s exactly (v * 1e-3 would give 15.210600000000001). */
double mfu__scale10(double v, int k);

/* Read an integer (optional thousands separators, optional quotes) covering span s. */
bool mfu__int_parse(mfu__span s, int64_t *out);

/* Read "YYYY-MM-DD[ T]HH:MM:SS[.,fraction]" at the start of s; *used gets the bytes read
 * (may be NULL). The time is taken as UTC. Returns false when s does not start with one. */
bool mfu__datetime_scan(mfu__span s, double *unix_s, size_t *used);

/* ---- the registry (registry.c) ---------------------------------------------------------- */

size_t mfu__format_count(void);
const mfu__format *mfu__format_at(size_t i);
/* The format called name (exact, case-insensitive), or NULL. */
const mfu__format *mfu__format_find(const char *name);

/* ---- inline definitions ----------------------------------------------------------------- */

/* blank = space, \t, \r, \n, \f, \v */
inline mfu__span mfu__span_trim(mfu__span s)
{
    while (s.n && (s.p[0] == ' ' || (s.p[0] >= '\t' && s.p[0] <= '\r'))) {
        s.p++;
        s.n--;
    }
    while (s.n && (s.p[s.n - 1] == ' ' || (s.p[s.n - 1] >= '\t' && s.p[s.n - 1] <= '\r')))
        s.n--;
    return s;
}

inline bool mfu__span_eq(mfu__span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

inline bool mfu__span_ieq(mfu__span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && mfu__strncasecmp(s.p, lit, n) == 0;
}

inline bool mfu__span_starts(mfu__span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n >= n && memcmp(s.p, lit, n) == 0;
}

#endif /* MFU_INGEST_FORMAT_H */
