/*
 * buf.c - a growable byte buffer with a limit, and the JSON writer every server answer goes
 * through.
 *
 * One writer means one escaping rule for every string the server sends: besides JSON's own
 * escapes, <, >, &, ' and U+2028/2029 are written as \u escapes, so a run name or a log line
 * holding HTML or script can be placed in a page by any means and stays text; and invalid
 * UTF-8 (a run name is any bytes but control characters) becomes U+FFFD, so the output is
 * always valid JSON.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ingest/fast.h"
#include "server/internal.h"
#include "util/utf8.h"

void mfu__sb_init(mfu__sb *b, size_t limit)
{
    memset(b, 0, sizeof *b);
    b->limit = limit;
}

void mfu__sb_free(mfu__sb *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

char *mfu__sb_take(mfu__sb *b, size_t *len)
{
    char *p = b->p;
    if (len)
        *len = b->len;
    b->p = NULL;
    b->len = b->cap = 0;
    return p;
}

static bool grow(mfu__sb *b, size_t need)
{
    if (b->failed)
        return false;
    if (need < b->len || (b->limit && need > b->limit)) {
        b->failed = true;
        return false;
    }
    if (need + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need + 1) {
        if (cap > ((size_t)-1) / 2) {
            b->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

bool mfu__sb_put(mfu__sb *b, const void *data, size_t n)
{
    if (!grow(b, b->len + n))
        return false;
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
    return true;
}

bool mfu__sb_puts(mfu__sb *b, const char *s)
{
    return mfu__sb_put(b, s, strlen(s));
}

bool mfu__sb_printf(mfu__sb *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return false;
    }
    if ((size_t)n < sizeof small)
        return mfu__sb_put(b, small, (size_t)n);
    if (!grow(b, b->len + (size_t)n))
        return false;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return true;
}

static const char REPLACEMENT[] = "\xef\xbf\xbd"; /* U+FFFD */

void mfu__sb_utf8(mfu__sb *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, run = 0; /* run: start of the pending valid bytes */
    while (i < n) {
        unsigned cp;
        size_t k = mfu__utf8_seq(p + i, n - i, &cp);
        if (k) {
            i += k;
            continue;
        }
        mfu__sb_put(b, s + run, i - run);
        mfu__sb_put(b, REPLACEMENT, 3);
        i++;
        run = i;
    }
    mfu__sb_put(b, s + run, n - run);
}

void mfu__json_escape(mfu__sb *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    mfu__sb_put(b, "\"", 1);
    size_t i = 0, run = 0;
    while (i < n) {
        unsigned cp = 0;
        size_t k = mfu__utf8_seq(p + i, n - i, &cp);
        const char *esc = NULL;
        char u[8];
        if (k == 0) {
            esc = "\\ufffd";
            k = 1;
        } else if (cp == '"') {
            esc = "\\\"";
        } else if (cp == '\\') {
            esc = "\\\\";
        } else if (cp == '\n') {
            esc = "\\n";
        } else if (cp == '\r') {
            esc = "\\r";
        } else if (cp == '\t') {
            esc = "\\t";
        } else if (cp < 0x20 || cp == 0x7f || cp == '<' || cp == '>' || cp == '&' || cp == '\'' ||
                   cp == 0x2028 || cp == 0x2029) {
            u[0] = '\\';
            u[1] = 'u';
            u[2] = hex[(cp >> 12) & 15];
            u[3] = hex[(cp >> 8) & 15];
            u[4] = hex[(cp >> 4) & 15];
            u[5] = hex[cp & 15];
            u[6] = '\0';
            esc = u;
        }
        if (esc) {
            mfu__sb_put(b, s + run, i - run);
            mfu__sb_puts(b, esc);
            i += k;
            run = i;
        } else {
            i += k;
        }
    }
    mfu__sb_put(b, s + run, n - run);
    mfu__sb_put(b, "\"", 1);
}

/* ---- JSON writer ------------------------------------------------------------------------ */

void mfu__jw_init(mfu__jw *w, mfu__sb *b)
{
    memset(w, 0, sizeof *w);
    w->b = b;
}

/* Before a value: a comma unless it is the first in its container (or follows a key). */
static void sep(mfu__jw *w)
{
    if (w->depth <= 0 || w->depth > MFU__JW_DEPTH)
        return;
    if (w->need_comma[w->depth - 1])
        mfu__sb_put(w->b, ",", 1);
    w->need_comma[w->depth - 1] = true;
}

static void open_(mfu__jw *w, char c)
{
    sep(w);
    mfu__sb_put(w->b, &c, 1);
    if (w->depth < MFU__JW_DEPTH)
        w->need_comma[w->depth] = false;
    w->depth++;
}

static void close_(mfu__jw *w, char c)
{
    mfu__sb_put(w->b, &c, 1);
    if (w->depth > 0)
        w->depth--;
}

void mfu__jw_obj(mfu__jw *w)
{
    open_(w, '{');
}

void mfu__jw_arr(mfu__jw *w)
{
    open_(w, '[');
}

void mfu__jw_end_obj(mfu__jw *w)
{
    close_(w, '}');
}

void mfu__jw_end_arr(mfu__jw *w)
{
    close_(w, ']');
}

void mfu__jw_key(mfu__jw *w, const char *k)
{
    sep(w);
    mfu__json_escape(w->b, k, strlen(k));
    mfu__sb_put(w->b, ":", 1);
    /* the value that follows takes no comma */
    if (w->depth > 0 && w->depth <= MFU__JW_DEPTH)
        w->need_comma[w->depth - 1] = false;
}

/* After a key the value must not write a comma but must leave one owed for the next member. */
static void value_begin(mfu__jw *w)
{
    sep(w);
}

void mfu__jw_strn(mfu__jw *w, const char *s, size_t n)
{
    value_begin(w);
    mfu__json_escape(w->b, s ? s : "", s ? n : 0);
}

void mfu__jw_str(mfu__jw *w, const char *s)
{
    mfu__jw_strn(w, s, s ? strlen(s) : 0);
}

/* Decimal digits of v into the end of buf (size 24), returning where they start. */
static char *int_digits(int64_t v, char *end)
{
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    *--end = '\0';
    do {
        *--end = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--end = '-';
    return end;
}

/* A finite double with no fraction and |v| < 2^53 as an integer; false otherwise. */
static bool put_integral(mfu__sb *b, double v)
{
    if (v != floor(v) || fabs(v) >= 9007199254740992.0)
        return false;
    char buf[24];
    mfu__sb_puts(b, int_digits((int64_t)v, buf + sizeof buf));
    return true;
}

void mfu__jw_num(mfu__jw *w, double v)
{
    value_begin(w);
    if (!isfinite(v)) {
        mfu__sb_put(w->b, "null", 4);
        return;
    }
    if (fabs(v) < 1e15 && put_integral(w->b, v))
        return;
    char buf[40];
    mfu__fmt_roundtrip(buf, sizeof buf, v);
    mfu__sb_puts(w->b, buf);
}

void mfu__jw_num17(mfu__jw *w, double v)
{
    value_begin(w);
    if (!isfinite(v)) {
        mfu__sb_put(w->b, "null", 4);
        return;
    }
    if (fabs(v) < 1e15 && put_integral(w->b, v))
        return;
    char buf[40];
    mfu__sb_put(w->b, buf, mfu__fmt_g(buf, v, 17));
}

void mfu__jw_int(mfu__jw *w, int64_t v)
{
    value_begin(w);
    char buf[24];
    mfu__sb_puts(w->b, int_digits(v, buf + sizeof buf));
}

void mfu__jw_bool(mfu__jw *w, bool v)
{
    value_begin(w);
    mfu__sb_puts(w->b, v ? "true" : "false");
}

void mfu__jw_null(mfu__jw *w)
{
    value_begin(w);
    mfu__sb_put(w->b, "null", 4);
}

void mfu__jw_json(mfu__jw *w, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *x;
        mfu__jw_obj(w);
        json_object_foreach((json_t *)v, k, x)
        {
            mfu__jw_key(w, k);
            mfu__jw_json(w, x);
        }
        mfu__jw_end_obj(w);
        break;
    }
    case JSON_ARRAY: {
        mfu__jw_arr(w);
        for (size_t i = 0; i < json_array_size(v); i++)
            mfu__jw_json(w, json_array_get(v, i));
        mfu__jw_end_arr(w);
        break;
    }
    case JSON_STRING: mfu__jw_strn(w, json_string_value(v), json_string_length(v)); break;
    case JSON_INTEGER: mfu__jw_int(w, (int64_t)json_integer_value(v)); break;
    case JSON_REAL: mfu__jw_num(w, json_real_value(v)); break;
    case JSON_TRUE: mfu__jw_bool(w, true); break;
    case JSON_FALSE: mfu__jw_bool(w, false); break;
    case JSON_NULL: mfu__jw_null(w); break;
    }
}
