/*
 * ingest/jflat.h - a fast reader for the JSON objects of JSON-lines logs, in front of jansson.
 *
 * mfu__jflat_parse() reads one line that holds one JSON object and lists its top-level members
 * with their values already converted, without allocating. It handles the shape metrics logs
 * have (ASCII keys and strings without escapes, numbers, true/false/null, nested objects and
 * arrays, which are checked but not converted) and declines everything else: escapes, non-ASCII
 * bytes, more than MFU__JFLAT_MAX_MEMBERS members, nesting deeper than MFU__JFLAT_MAX_DEPTH,
 * integers of 19 digits or more, a real that overflows, and any text that is not valid JSON.
 * The caller then reads the line with jansson as before, so a decline never changes a result.
 * What it accepts, it reads as jansson would: the same members, the same values
 * (json_number_value: an integer token is an int64 converted to double, a real is strtod's
 * double), and for a repeated key the last value (mfu__jflat_get).
 */
#ifndef MFU_INGEST_JFLAT_H
#define MFU_INGEST_JFLAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MFU__JFLAT_MAX_MEMBERS 64
#define MFU__JFLAT_MAX_DEPTH 32

typedef enum mfu__jtype {
    MFU__J_NULL = 0,
    MFU__J_TRUE,
    MFU__J_FALSE,
    MFU__J_INT,    /* a number token without fraction or exponent (json_is_integer) */
    MFU__J_REAL,   /* any other number */
    MFU__J_STRING, /* str/str_len: the bytes between the quotes (no escapes in them) */
    MFU__J_OBJECT, /* nested values are checked but not read: the caller uses jansson */
    MFU__J_ARRAY
} mfu__jtype;

typedef struct mfu__jmember {
    const char *key; /* the key's bytes (no escapes), not NUL-terminated */
    size_t key_len;
    const char *val, *val_end; /* the value's text [val, val_end) (for mfu__jshape_learn) */
    mfu__jtype type;
    const char *str; /* MFU__J_STRING */
    size_t str_len;
    double num;   /* MFU__J_INT and MFU__J_REAL: what json_number_value() gives */
    int64_t ival; /* MFU__J_INT: json_integer_value() */
} mfu__jmember;

typedef struct mfu__jflat {
    size_t n; /* members, in the order of the text (repeats included) */
    mfu__jmember m[MFU__JFLAT_MAX_MEMBERS];
} mfu__jflat;

/* Read text[0..len) (one object, blanks around it allowed) into *out; text[len] must be the
 * NUL that ends the text (an mfu__line's text is; it saves a bounds check per byte). Returns
 * false when the fast path declines (see above) or text[len] is not NUL; *out is then
 * undefined. */
bool mfu__jflat_parse(const char *text, size_t len, mfu__jflat *out);

/* ---- shapes ---------------------------------------------------------------------------- */

/* The lines of a metrics log repeat one shape: the same keys, in the same order, with the
 * same blanks between them; only the values change. A shape keeps the text between the values
 * of one parsed line ("{\"step\": ", ", \"loss\": ", ..., "}"), so that a later line is read by
 * comparing that text and reading only the values: no key is scanned, and the caller can keep
 * what it derived from the keys (fmt_jsonl.c: which member gives which field). */
#define MFU__JSHAPE_TEXT 1024 /* bytes of text between values a shape keeps, at most */

typedef struct mfu__jshape {
    size_t n;                                 /* members; 0 = no shape */
    uint16_t lit[MFU__JFLAT_MAX_MEMBERS + 1]; /* text[lit[i]..lit[i+1]) precedes value i */
    uint16_t key_at[MFU__JFLAT_MAX_MEMBERS];  /* member i's key: offset in its text piece */
    uint16_t key_len[MFU__JFLAT_MAX_MEMBERS];
    /* text[lit[n]..lit_end) follows the last value */
    uint16_t lit_end;
    char text[MFU__JSHAPE_TEXT];
} mfu__jshape;

/* Learn the shape of text[0..len), which mfu__jflat_parse() just read into *o. Returns false
 * (and sh->n = 0) for an empty object or when the text between values exceeds
 * MFU__JSHAPE_TEXT. */
bool mfu__jshape_learn(mfu__jshape *sh, const char *text, size_t len, const mfu__jflat *o);

/* mfu__jflat_parse() for a line of shape sh: the same result (the same members, keys pointing
 * into text, values) when it returns true. Returns false when the line is not of that shape
 * (its text between values differs), or mfu__jflat_parse() would decline it; the caller then
 * calls mfu__jflat_parse(). text[len] must be NUL, as there. */
bool mfu__jflat_parse_shaped(const char *text, size_t len, const mfu__jshape *sh, mfu__jflat *out);

/* The member called key (key_len bytes), the last one when the key repeats (as jansson keeps
 * it), or NULL. */
const mfu__jmember *mfu__jflat_get(const mfu__jflat *o, const char *key, size_t key_len);

#endif /* MFU_INGEST_JFLAT_H */
