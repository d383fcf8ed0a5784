/*
 * pyrepr.c - Python dict reprs and tqdm bars in log lines (ingest/pyrepr.h).
 *
 * Dict reprs follow Python's str(dict): quoted keys, ": ", values separated by ", ". Values are
 * scanned, not interpreted: nesting of ([{ and quoted strings (with backslash escapes) is
 * tracked so that "'mom': [0.9, 0.999]" is one item.
 *
 * tqdm bars follow tqdm's default bar format "{l_bar}{bar}| {n_fmt}/{total_fmt}
 * [{elapsed}<{remaining}, {rate_fmt}{postfix}]", where l_bar is "{desc}: {percentage:3.0f}%|"
 * and rate_fmt is "{rate:5.2f}{unit}/s" or, below one iteration per second, "{1/rate:5.2f}s/
 * {unit}" ("?{unit}/s" before the first rate is known).
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "ingest/pyrepr.h"

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

bool mfu__pydict_like(mfu__span s)
{
    s = mfu__span_trim(s);
    return s.n >= 2 && s.p[0] == '{' && (s.p[1] == '\'' || s.p[1] == '"');
}

bool mfu__pydict_open(mfu__span s, mfu__span *body)
{
    s = mfu__span_trim(s);
    if (s.n < 4 || !mfu__pydict_like(s) || s.p[s.n - 1] != '}')
        return false;
    body->p = s.p + 1;
    body->n = s.n - 2;
    return true;
}

bool mfu__pydict_next(mfu__span *body, mfu__span *key, mfu__span *val)
{
    const char *p = body->p, *end = body->p + body->n;
    while (p < end && is_blank(*p))
        p++;
    if (p < end && *p == ',') /* the separator left by the previous item */
        p++;
    while (p < end && is_blank(*p))
        p++;
    if (p >= end)
        goto done;
    char q = *p;
    if (q != '\'' && q != '"')
        goto done;
    const char *ks = ++p;
    while (p < end && *p != q) {
        if (*p == '\\' && p + 1 < end)
            p++;
        p++;
    }
    if (p >= end)
        goto done;
    key->p = ks;
    key->n = (size_t)(p - ks);
    p++;
    while (p < end && is_blank(*p))
        p++;
    if (p >= end || *p != ':')
        goto done;
    p++;
    const char *vs = p;
    int depth = 0;
    char inq = 0;
    for (; p < end; p++) {
        char ch = *p;
        if (inq) {
            if (ch == '\\' && p + 1 < end)
                p++;
            else if (ch == inq)
                inq = 0;
        } else if (ch == '\'' || ch == '"') {
            inq = ch;
        } else if (ch == '(' || ch == '[' || ch == '{') {
            depth++;
        } else if (ch == ')' || ch == ']' || ch == '}') {
            if (depth > 0)
                depth--;
        } else if (ch == ',' && depth == 0) {
            break;
        }
    }
    *val = mfu__span_trim((mfu__span){vs, (size_t)(p - vs)});
    body->p = p;
    body->n = (size_t)(end - p);
    return true;
done:
    body->p = end;
    body->n = 0;
    return false;
}

/* Digits at *p (at most 18) into *v; advances *p. False when there is no digit. */
static bool scan_uint(const char **p, const char *end, int64_t *v)
{
    const char *q = *p;
    int64_t x = 0;
    int k = 0;
    while (q < end && isdigit((unsigned char)*q) && k < 18) {
        x = x * 10 + (*q - '0');
        q++;
        k++;
    }
    if (k == 0 || (q < end && isdigit((unsigned char)*q)))
        return false;
    *v = x;
    *p = q;
    return true;
}

/* The rate field "  1.72it/s", "2.15s/it", "?it/s" -> seconds per iteration or NaN. */
static double rate_seconds(mfu__span r)
{
    r = mfu__span_trim(r);
    char buf[40];
    size_t k = 0;
    size_t i = 0;
    while (i < r.n && (isdigit((unsigned char)r.p[i]) || r.p[i] == '.') && k + 1 < sizeof buf)
        buf[k++] = r.p[i++];
    buf[k] = '\0';
    double v;
    if (k == 0 || !mfu__parse_double(buf, &v) || v <= 0)
        return NAN; /* "?it/s" and unknown layouts */
    mfu__span unit = {r.p + i, r.n - i};
    if (mfu__span_starts(unit, "s/"))
        return v;
    if (unit.n > 2 && memcmp(unit.p + unit.n - 2, "/s", 2) == 0)
        return 1.0 / v;
    return NAN;
}

bool mfu__tqdm_parse(mfu__span s, mfu__tqdm *out)
{
    long at = mfu__span_find(s, "%|");
    if (at < 1)
        return false;
    size_t pct = (size_t)at, j = pct;
    while (j > 0 && isdigit((unsigned char)s.p[j - 1]))
        j--;
    if (j == pct || pct - j > 3)
        return false;
    mfu__span desc = mfu__span_trim((mfu__span){s.p, j});
    if (desc.n && desc.p[desc.n - 1] == ':')
        desc = mfu__span_trim((mfu__span){desc.p, desc.n - 1});
    mfu__span r = {s.p + pct + 2, s.n - pct - 2};
    long bar_end = mfu__span_find(r, "| ");
    if (bar_end < 0)
        return false;
    const char *p = r.p + bar_end + 2, *end = s.p + s.n;
    while (p < end && is_blank(*p))
        p++;
    int64_t n, total;
    if (!scan_uint(&p, end, &n) || p >= end || *p != '/')
        return false;
    p++;
    if (!scan_uint(&p, end, &total))
        return false;
    while (p < end && is_blank(*p))
        p++;
    if (p >= end || *p != '[')
        return false;
    const char *close = memchr(p, ']', (size_t)(end - p));
    if (!close)
        return false;
    mfu__span inside = {p + 1, (size_t)(close - p - 1)};
    double spi = NAN;
    long lt = mfu__span_find(inside, "<");
    long comma = lt >= 0 ? mfu__span_find(inside, ",") : -1;
    if (comma > lt) {
        mfu__span rate = {inside.p + comma + 1, inside.n - (size_t)comma - 1};
        long c2 = mfu__span_find(rate, ",");
        if (c2 >= 0)
            rate.n = (size_t)c2;
        spi = rate_seconds(rate);
    }
    out->desc = desc;
    out->n = n;
    out->total = total;
    out->s_per_it = spi;
    out->rest = mfu__span_trim((mfu__span){close + 1, (size_t)(end - close - 1)});
    return true;
}
