/*
 * text.c - pure helpers for reading log lines: spans, key/value pieces, numbers with unit
 * suffixes and sentinels, timestamps (ingest/format.h).
 *
 * Numbers follow log-formats.md §1: plain decimals, C %E exponents, thousands separators
 * ("10,050"), quoted values ('3.41'), unit suffixes (66.91GiB, 150.3TFLOPS, 76.67 ms,
 * 34.09 us, 13.99%) and sentinels (nan, inf, N/A). Values are normalised to base units.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/fast.h"
#include "ingest/format.h"

mfu__span mfu__span_of(const char *s)
{
    mfu__span r = {s, s ? strlen(s) : 0};
    return r;
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/* The external definitions of the inline comparisons in format.h (C11 6.7.4). */
extern inline mfu__span mfu__span_trim(mfu__span s);
extern inline bool mfu__span_eq(mfu__span s, const char *lit);
extern inline bool mfu__span_ieq(mfu__span s, const char *lit);
extern inline bool mfu__span_starts(mfu__span s, const char *lit);

long mfu__span_find(mfu__span s, const char *lit)
{
    size_t n = strlen(lit);
    if (n == 0)
        return 0;
    if (n > s.n)
        return -1;
    /* memchr for the first byte (vectorised in libc), then compare the rest */
    const char *p = s.p, *last = s.p + (s.n - n);
    while (p <= last) {
        const char *hit = memchr(p, lit[0], (size_t)(last - p) + 1);
        if (!hit)
            return -1;
        size_t i = 1;
        while (i < n && hit[i] == lit[i])
            i++;
        if (i == n)
            return (long)(hit - s.p);
        p = hit + 1;
    }
    return -1;
}

void mfu__span_copy(mfu__span s, char *dst, size_t n)
{
    if (n == 0)
        return;
    size_t c = s.n < n - 1 ? s.n : n - 1;
    if (c)
        memcpy(dst, s.p, c);
    dst[c] = '\0';
}

bool mfu__split_next(mfu__span *rest, const char *sep, mfu__span *piece)
{
    if (rest->n == 0)
        return false;
    size_t k = strlen(sep);
    long at;
    if (k == 1) { /* the usual "|" or ",": memchr */
        const char *hit = memchr(rest->p, sep[0], rest->n);
        at = hit ? (long)(hit - rest->p) : -1;
    } else {
        at = mfu__span_find(*rest, sep);
    }
    if (at < 0) {
        *piece = *rest;
        rest->p += rest->n;
        rest->n = 0;
        return true;
    }
    piece->p = rest->p;
    piece->n = (size_t)at;
    rest->p += (size_t)at + k;
    rest->n -= (size_t)at + k;
    return true;
}

bool mfu__kv(mfu__span piece, const char *kvsep, mfu__span *key, mfu__span *val)
{
    long at = mfu__span_find(piece, kvsep);
    if (at < 0)
        return false;
    mfu__span k = {piece.p, (size_t)at};
    size_t skip = (size_t)at + strlen(kvsep);
    mfu__span v = {piece.p + skip, piece.n - skip};
    *key = mfu__span_trim(k);
    *val = mfu__span_trim(v);
    return true;
}

/* ---- numbers ---------------------------------------------------------------------------- */

double mfu__scale10(double v, int k)
{
    if (!isfinite(v) || k == 0)
        return v;
    char buf[64];
    mfu__fmt_roundtrip(buf, sizeof buf, v); /* the shortest decimal that is v */
    /* fold k into the exponent of that decimal */
    char *e = strchr(buf, 'e');
    int exp10 = k;
    if (e) {
        exp10 += (int)strtol(e + 1, NULL, 10);
        *e = '\0';
    }
    char out[80];
    snprintf(out, sizeof out, "%se%d", buf, exp10);
    return strtod(out, NULL);
}

static bool word_at(const char *p, const char *end, const char *w, bool case_fold)
{
    size_t n = strlen(w);
    if ((size_t)(end - p) < n)
        return false;
    if (case_fold ? mfu__strncasecmp(p, w, n) != 0 : memcmp(p, w, n) != 0)
        return false;
    /* the word must end here: not followed by a letter or digit */
    return p + n == end || !isalnum((unsigned char)p[n]);
}

/* Unit suffixes, longest first within a family. factor converts to the base unit. */
/* p10 of a factor that is not a power of ten */
#define MFU__NOT_P10 1000
#define U(t, u, f, p)                                                                              \
    {                                                                                              \
        t, sizeof(t) - 1, u, f, p                                                                  \
    }
static const struct {
    const char *text;
    size_t len;
    mfu__unit unit;
    double factor; /* a power of ten moves the decimal's exponent (exact) */
    int p10;       /* factor = 10^p10, or MFU__NOT_P10 */
} units[] = {
    U("TFLOP/s", MFU__UNIT_FLOPS_PER_S, 1e12, 12),
    U("GFLOP/s", MFU__UNIT_FLOPS_PER_S, 1e9, 9),
    U("PFLOP/s", MFU__UNIT_FLOPS_PER_S, 1e15, 15),
    U("MFLOP/s", MFU__UNIT_FLOPS_PER_S, 1e6, 6),
    U("FLOP/s", MFU__UNIT_FLOPS_PER_S, 1.0, 0),
    U("TFLOPS", MFU__UNIT_FLOPS_PER_S, 1e12, 12),
    U("GFLOPS", MFU__UNIT_FLOPS_PER_S, 1e9, 9),
    U("PFLOPS", MFU__UNIT_FLOPS_PER_S, 1e15, 15),
    U("MFLOPS", MFU__UNIT_FLOPS_PER_S, 1e6, 6),
    U("FLOPS", MFU__UNIT_FLOPS_PER_S, 1.0, 0),
    U("TFLOP", MFU__UNIT_FLOPS, 1e12, 12),
    U("GFLOP", MFU__UNIT_FLOPS, 1e9, 9),
    U("PFLOP", MFU__UNIT_FLOPS, 1e15, 15),
    U("FLOP", MFU__UNIT_FLOPS, 1.0, 0),
    U("KiB", MFU__UNIT_BYTES, 1024.0, MFU__NOT_P10),
    U("MiB", MFU__UNIT_BYTES, 1048576.0, MFU__NOT_P10),
    U("GiB", MFU__UNIT_BYTES, 1073741824.0, MFU__NOT_P10),
    U("TiB", MFU__UNIT_BYTES, 1099511627776.0, MFU__NOT_P10),
    U("KB", MFU__UNIT_BYTES, 1e3, 3),
    U("kB", MFU__UNIT_BYTES, 1e3, 3),
    U("MB", MFU__UNIT_BYTES, 1e6, 6),
    U("GB", MFU__UNIT_BYTES, 1e9, 9),
    U("TB", MFU__UNIT_BYTES, 1e12, 12),
    U("ms", MFU__UNIT_SECONDS, 1e-3, -3),
    U("us", MFU__UNIT_SECONDS, 1e-6, -6),
    U("\xc2\xb5s", MFU__UNIT_SECONDS, 1e-6, -6),
    U("ns", MFU__UNIT_SECONDS, 1e-9, -9),
    U("min", MFU__UNIT_SECONDS, 60.0, MFU__NOT_P10),
    U("sec", MFU__UNIT_SECONDS, 1.0, 0),
    U("s", MFU__UNIT_SECONDS, 1.0, 0),
    U("h", MFU__UNIT_SECONDS, 3600.0, MFU__NOT_P10),
    U("B", MFU__UNIT_BYTES, 1.0, 0),
    U("%", MFU__UNIT_FRACTION, 0.01, -2),
};

/* The exact decimal a scan read: value = m x 10^e10 when exact (at most MFU__DEC_DIGITS
 * significant digits and a modest exponent), for the fast path (ingest/fast.h). */
typedef struct decimal {
    uint64_t m;
    long e10;
    bool exact;
} decimal;

/* Read an unsigned decimal mantissa with optional thousands separators into buf (separators
 * removed) and into *dec. Returns bytes consumed, 0 when no digit. */
static size_t scan_mantissa(const char *p, const char *end, char *buf, size_t bufn, size_t *blen,
                            decimal *dec)
{
    const char *s = p;
    size_t k = *blen;
    size_t run = 0; /* digits in the current group */
    bool any = false, grouped = false;
    uint64_t m = 0;
    int sig = 0; /* significant digits gathered into m (leading zeros do not count) */
    long frac = 0;
    while (p < end) {
        if ((unsigned)(*p - '0') < 10) {
            if (k + 1 < bufn)
                buf[k++] = *p;
            if (m || *p != '0') {
                m = m * 10 + (uint64_t)(*p - '0');
                sig++;
            }
            p++;
            run++;
            any = true;
            if (sig > MFU__DEC_DIGITS)
                break;
            continue;
        }
        /* "10,050": a comma after 1-3 leading digits (or a full group) followed by exactly
         * three digits and then no further digit */
        if (*p == ',' && any && run >= 1 && run <= 3 && (!grouped || run == 3) && end - p >= 4 &&
            isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) &&
            isdigit((unsigned char)p[3]) && (end - p == 4 || !isdigit((unsigned char)p[4]))) {
            grouped = true;
            run = 0;
            p++;
            continue;
        }
        break;
    }
    if (sig > MFU__DEC_DIGITS) { /* too long for the fast path: the general scan */
        dec->exact = false;
        p = s;
        k = *blen;
        run = 0;
        any = grouped = false;
        while (p < end) {
            if (isdigit((unsigned char)*p)) {
                if (k + 1 < bufn)
                    buf[k++] = *p;
                p++;
                run++;
                any = true;
                continue;
            }
            if (*p == ',' && any && run >= 1 && run <= 3 && (!grouped || run == 3) &&
                end - p >= 4 && isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) &&
                isdigit((unsigned char)p[3]) && (end - p == 4 || !isdigit((unsigned char)p[4]))) {
                grouped = true;
                run = 0;
                p++;
                continue;
            }
            break;
        }
    }
    if (p < end && *p == '.') {
        const char *q = p + 1;
        if (k + 1 < bufn)
            buf[k++] = '.';
        while (q < end && isdigit((unsigned char)*q)) {
            if (k + 1 < bufn)
                buf[k++] = *q;
            if (m || *q != '0') {
                if (sig < MFU__DEC_DIGITS)
                    m = m * 10 + (uint64_t)(*q - '0');
                sig++;
            }
            frac++;
            q++;
            any = true;
        }
        p = q;
    }
    if (!any)
        return 0;
    long exp10 = 0;
    /* exponent: e/E, optional sign, at least one digit */
    if (p < end && (*p == 'e' || *p == 'E')) {
        const char *q = p + 1;
        if (q < end && (*q == '+' || *q == '-'))
            q++;
        if (q < end && isdigit((unsigned char)*q)) {
            if (k + 1 < bufn)
                buf[k++] = 'e';
            if (p[1] == '-' && k + 1 < bufn)
                buf[k++] = '-';
            while (q < end && isdigit((unsigned char)*q)) {
                if (k + 1 < bufn)
                    buf[k++] = *q;
                if (exp10 < 100000)
                    exp10 = exp10 * 10 + (*q - '0');
                q++;
            }
            if (p[1] == '-')
                exp10 = -exp10;
            p = q;
        }
    }
    buf[k] = '\0';
    *blen = k;
    dec->m = m;
    dec->e10 = exp10 - frac;
    dec->exact = sig <= MFU__DEC_DIGITS && k + 1 < bufn;
    return (size_t)(p - s);
}

/* The value of dec x 10^shift through the fast path, when it is exact. */
static bool dec_fast(const decimal *dec, bool neg, long shift, double *out)
{
    long e = dec->e10 + shift;
    if (!dec->exact || e < -400 || e > 400)
        return false;
    if (dec->m == 0 && (e < -22 || e > 22))
        return false; /* strtod's errno for 0e-999 is its own business: ask it */
    return mfu__dec_to_double(dec->m, (int)e, neg, out) || /* inline: the usual case */
           mfu__dec_to_double_wide(dec->m, (int)e, neg, out);
}

/* strtod of the decimal in buf (blen bytes, may end in an exponent) times 10^shift, done in
 * the decimal: the exponent is rewritten, so the result is correctly rounded. */
static double strtod_shift(char *buf, size_t blen, size_t cap, int shift)
{
    if (shift == 0)
        return strtod(buf, NULL);
    long e10 = shift;
    char *e = memchr(buf, 'e', blen);
    if (e) {
        e10 += strtol(e + 1, NULL, 10);
        blen = (size_t)(e - buf);
    }
    snprintf(buf + blen, cap - blen, "e%ld", e10);
    return strtod(buf, NULL);
}

/* Scan a number at *pp; its value is multiplied by 10^shift (in decimal) as well as by its
 * unit's factor. */
static bool scan(const char **pp, const char *end, int shift, mfu__num *out)
{
    const char *p = *pp;
    char buf[96];
    size_t blen = 0;
    decimal dec = {0, 0, false};
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    char quote = 0;
    if (p < end && (*p == '\'' || *p == '"'))
        quote = *p++;
    mfu__num r = {0.0, 0.0, MFU__UNIT_NONE, MFU__NUM_FINITE};
    bool neg = false;
    const char *q = p;
    if (q < end && (*q == '-' || *q == '+')) {
        neg = *q == '-';
        q++;
    }
    /* sentinels */
    static const struct {
        const char *w;
        mfu__numkind kind;
    } sentinels[] = {{"nan", MFU__NUM_NAN}, {"infinity", MFU__NUM_INF}, {"inf", MFU__NUM_INF},
                     {"N/A", MFU__NUM_NA},  {"NA", MFU__NUM_NA},        {"None", MFU__NUM_NA},
                     {"null", MFU__NUM_NA}};
    bool maybe_word = q < end && isalpha((unsigned char)*q);
    for (size_t i = 0; maybe_word && i < MFU__ARRAY_LEN(sentinels); i++) {
        bool fold = sentinels[i].kind != MFU__NUM_NA;
        if (word_at(q, end, sentinels[i].w, fold)) {
            r.kind = sentinels[i].kind;
            r.value = r.kind == MFU__NUM_INF ? (neg ? -INFINITY : INFINITY) : NAN;
            r.printed = r.value;
            q += strlen(sentinels[i].w);
            goto unit;
        }
    }
    {
        if (neg)
            buf[blen++] = '-';
        size_t used = scan_mantissa(q, end, buf, 80, &blen, &dec);
        if (used == 0)
            return false;
        q += used;
        double v;
        if (!dec_fast(&dec, neg, 0, &v)) {
            errno = 0;
            char *e = NULL;
            v = strtod(buf, &e);
            if (e == buf || errno == ERANGE || !isfinite(v))
                return false;
        }
        r.value = r.printed = v;
    }
unit:;
    double unit_factor = 1.0;
    int unit_p10 = 0; /* unit_factor = 10^unit_p10, or MFU__NOT_P10 */
    /* unit suffix, optionally after one blank; a suffix must not run into a letter */
    const char *u = q;
    if (u < end && *u == ' ')
        u++;
    /* a suffix starts with a letter, '%' or the first byte of 'µ' */
    bool maybe_unit = u < end && (isalpha((unsigned char)*u) || *u == '%' || *u == '\xc2');
    for (size_t i = 0; maybe_unit && i < MFU__ARRAY_LEN(units); i++) {
        size_t n = units[i].len;
        if ((size_t)(end - u) < n || memcmp(u, units[i].text, n) != 0)
            continue;
        const char *after = u + n;
        if (after < end && isalpha((unsigned char)*after) && units[i].unit != MFU__UNIT_FRACTION)
            continue;
        if (units[i].unit == MFU__UNIT_FRACTION && u != q)
            continue; /* "13.99%" only, not "13.99 %" of something else */
        r.unit = units[i].unit;
        unit_factor = units[i].factor;
        unit_p10 = units[i].p10;
        q = after;
        break;
    }
    if (r.kind == MFU__NUM_FINITE && (unit_factor != 1.0 || shift != 0)) {
        /* powers of ten move the decimal's exponent; others multiply */
        long p10 = unit_p10 == MFU__NOT_P10 ? shift : shift + unit_p10;
        double v;
        if (!dec_fast(&dec, neg, p10, &v))
            v = strtod_shift(buf, blen, sizeof buf, (int)p10);
        r.value = unit_p10 == MFU__NOT_P10 ? v * unit_factor : v;
        if (!isfinite(r.value))
            return false;
    }
    if (quote) {
        if (q < end && *q == quote)
            q++;
        else
            return false;
    }
    *out = r;
    *pp = q;
    return true;
}

bool mfu__num_scan(const char **pp, const char *end, mfu__num *out)
{
    return scan(pp, end, 0, out);
}

static bool parse_shift(mfu__span s, int shift, mfu__num *out);

bool mfu__num_parse(mfu__span s, mfu__num *out)
{
    return parse_shift(s, 0, out);
}

bool mfu__num_parse_shift(mfu__span s, int shift, mfu__num *out)
{
    return parse_shift(s, shift, out);
}

/* The fast path of parse_shift: s (trimmed) is exactly a plain decimal
 * [+-]digits[.digits][(e|E)[+-]digits] whose value and value x 10^shift are exact through
 * mfu__dec_to_double. Anything else (separators, units, quotes, sentinels, long mantissas)
 * returns false and goes through scan(), which reads the same plain decimals the same way. */
static bool plain_decimal(mfu__span s, int shift, mfu__num *out)
{
    double value, printed;
    if (mfu__dec_scan(s.p, s.p + s.n, shift, &value, &printed) != s.p + s.n)
        return false;
    out->value = value;
    out->printed = printed;
    out->unit = MFU__UNIT_NONE;
    out->kind = MFU__NUM_FINITE;
    return true;
}

static bool parse_shift(mfu__span s, int shift, mfu__num *out)
{
    s = mfu__span_trim(s);
    if (s.n == 0)
        return false;
    if (plain_decimal(s, shift, out))
        return true;
    /* "-" alone means "not measured" in several loggers */
    if (mfu__span_eq(s, "-")) {
        mfu__num r = {NAN, NAN, MFU__UNIT_NONE, MFU__NUM_NA};
        *out = r;
        return true;
    }
    const char *p = s.p, *end = s.p + s.n;
    mfu__num r;
    if (!scan(&p, end, shift, &r))
        return false;
    while (p < end && blank(*p))
        p++;
    if (p != end)
        return false;
    *out = r;
    return true;
}

double mfu__num_value(mfu__span s)
{
    mfu__num r;
    if (!mfu__num_parse(s, &r) || r.kind != MFU__NUM_FINITE)
        return NAN;
    return r.value;
}

void mfu__set_loss(mfu_step *s, const mfu__num *n)
{
    bool bad = n->kind == MFU__NUM_NAN || n->kind == MFU__NUM_INF;
    s->loss = bad ? NAN : n->value;
    if (bad)
        s->flags |= MFU_STEP_LOSS_NAN;
}

bool mfu__int_parse(mfu__span s, int64_t *out)
{
    mfu__num r;
    if (!mfu__num_parse(s, &r) || r.kind != MFU__NUM_FINITE || r.unit != MFU__UNIT_NONE)
        return false;
    if (r.value != floor(r.value) || fabs(r.value) > 9.007199254740992e15)
        return false;
    *out = (int64_t)r.value;
    return true;
}

/* ---- timestamps ------------------------------------------------------------------------- */

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static long days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

bool mfu__datetime_scan(mfu__span s, double *unix_s, size_t *used)
{
    /* YYYY-MM-DD?HH:MM:SS = 19 bytes */
    if (s.n < 19)
        return false;
    const char *p = s.p;
    /* every digit and separator checked with one branch (a prefix timestamp on every line) */
    const unsigned char *u = (const unsigned char *)p;
#define DIGIT_(i) ((unsigned)u[i] - '0')
    unsigned y0 = DIGIT_(0), y1 = DIGIT_(1), y2 = DIGIT_(2), y3 = DIGIT_(3), m0 = DIGIT_(5),
             m1 = DIGIT_(6), d0 = DIGIT_(8), d1 = DIGIT_(9), h0 = DIGIT_(11), h1 = DIGIT_(12),
             n0 = DIGIT_(14), n1 = DIGIT_(15), s0 = DIGIT_(17), s1 = DIGIT_(18);
#undef DIGIT_
    unsigned bad = (y0 > 9) | (y1 > 9) | (y2 > 9) | (y3 > 9) | (m0 > 9) | (m1 > 9) | (d0 > 9) |
                   (d1 > 9) | (h0 > 9) | (h1 > 9) | (n0 > 9) | (n1 > 9) | (s0 > 9) | (s1 > 9) |
                   (p[4] != '-') | (p[7] != '-') | ((p[10] != ' ') & (p[10] != 'T')) |
                   (p[13] != ':') | (p[16] != ':');
    if (bad)
        return false;
    int y = (int)(((y0 * 10 + y1) * 10 + y2) * 10 + y3), mo = (int)(m0 * 10 + m1),
        d = (int)(d0 * 10 + d1), h = (int)(h0 * 10 + h1), mi = (int)(n0 * 10 + n1),
        se = (int)(s0 * 10 + s1);
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return false;
    size_t k = 19;
    double frac = 0.0, scale = 0.1;
    if (k < s.n && (p[k] == '.' || p[k] == ',') && k + 1 < s.n &&
        isdigit((unsigned char)p[k + 1])) {
        k++;
        while (k < s.n && isdigit((unsigned char)p[k])) {
            frac += (p[k] - '0') * scale;
            scale /= 10;
            k++;
        }
    }
    if (k < s.n && p[k] == 'Z')
        k++;
    /* the whole seconds are an integer below 2^53: summed exactly, as the doubles were */
    double t = (double)(days_from_civil(y, mo, d) * 86400L + h * 3600L + mi * 60L + se) + frac;
    if (unix_s)
        *unix_s = t;
    if (used)
        *used = k;
    return true;
}
