/*
 * util.c - error filling, bounded string helpers, strict number parsing.
 */
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void vfill(mfu_error *err, mfu_status code, long line, const char *fmt, va_list ap)
    MFU__PRINTF(4, 0);

static void vfill(mfu_error *err, mfu_status code, long line, const char *fmt, va_list ap)
{
    err->code = code;
    err->line = line;
    err->column = 0;
    err->field[0] = '\0';
    vsnprintf(err->message, sizeof err->message, fmt, ap);
}

mfu_status mfu__fail(mfu_error *err, mfu_status code, long line, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vfill(err, code, line, fmt, ap);
        va_end(ap);
    }
    return code;
}

mfu_status mfu__fail_field(mfu_error *err, mfu_status code, const char *field, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vfill(err, code, 0, fmt, ap);
        va_end(ap);
        mfu__strlcpy(err->field, field ? field : "", sizeof err->field);
    }
    return code;
}

size_t mfu__strlcpy(char *dst, const char *src, size_t n)
{
    size_t len = strlen(src);
    if (n > 0) {
        size_t c = len < n - 1 ? len : n - 1;
        memcpy(dst, src, c);
        dst[c] = '\0';
    }
    return len;
}

bool mfu__appendf(char *dst, size_t n, const char *fmt, ...)
{
    size_t used = strnlen(dst, n);
    if (used >= n)
        return false;
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(dst + used, n - used, fmt, ap);
    va_end(ap);
    return r >= 0 && (size_t)r < n - used;
}

static int lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

int mfu__strcasecmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        int d = lower((unsigned char)*a) - lower((unsigned char)*b);
        if (d != 0 || *a == '\0')
            return d;
    }
}

int mfu__strncasecmp(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int d = lower((unsigned char)a[i]) - lower((unsigned char)b[i]);
        if (d != 0 || a[i] == '\0')
            return d;
    }
    return 0;
}

const char *mfu__strcasestr(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0)
        return hay;
    for (; *hay; hay++)
        if (mfu__strncasecmp(hay, needle, n) == 0)
            return hay;
    return NULL;
}

size_t mfu__edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > MFU__EDIT_DISTANCE_MAX || lb > MFU__EDIT_DISTANCE_MAX)
        return SIZE_MAX;
    /* optimal string alignment: insert, delete, substitute, swap two neighbours; three rows */
    size_t rows[3][MFU__EDIT_DISTANCE_MAX + 1];
    size_t *two = rows[0], *one = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++)
        one[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        int ca = lower((unsigned char)a[i - 1]);
        for (size_t j = 1; j <= lb; j++) {
            int cb = lower((unsigned char)b[j - 1]);
            size_t best = one[j - 1] + (ca == cb ? 0 : 1);
            if (one[j] + 1 < best)
                best = one[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && ca == lower((unsigned char)b[j - 2]) &&
                lower((unsigned char)a[i - 2]) == cb && two[j - 2] + 1 < best)
                best = two[j - 2] + 1;
            cur[j] = best;
        }
        size_t *t = two;
        two = one;
        one = cur;
        cur = t;
    }
    return one[lb];
}

/* s without what is not a letter or a digit, into buf (size MFU__EDIT_DISTANCE_MAX + 1). */
static void alnum_only(const char *s, char *buf)
{
    size_t k = 0;
    for (; *s && k < MFU__EDIT_DISTANCE_MAX; s++)
        if (isalnum((unsigned char)*s))
            buf[k++] = *s;
    buf[k] = '\0';
}

size_t mfu__did_you_mean(const char *query, const char *const *names, size_t n, char *buf,
                         size_t bufn)
{
    if (bufn > 0)
        buf[0] = '\0';
    if (!query || !names || bufn == 0)
        return 0;
    char q[MFU__EDIT_DISTANCE_MAX + 1], c[MFU__EDIT_DISTANCE_MAX + 1];
    alnum_only(query, q);
    size_t limit = strlen(q) / 3 > 1 ? strlen(q) / 3 : 1;
    size_t best = SIZE_MAX, pick[3], npick = 0;
    for (size_t i = 0; i < n; i++) {
        if (!names[i])
            continue;
        alnum_only(names[i], c);
        size_t d = mfu__edit_distance(query, names[i]);
        size_t d2 = q[0] ? mfu__edit_distance(q, c) : SIZE_MAX;
        if (d2 < d)
            d = d2;
        /* the start of a longer name ("qwen3-30b" of qwen3-30b-a3b) is as near as one typo */
        if (d > 1 && strlen(query) >= 3 && mfu__strncasecmp(names[i], query, strlen(query)) == 0)
            d = 1;
        if (d > limit || d > best)
            continue;
        if (d < best) {
            best = d;
            npick = 0;
        }
        if (npick < 3)
            pick[npick++] = i;
    }
    for (size_t k = 0; k < npick; k++)
        mfu__appendf(buf, bufn, "%s%s",
                     k == 0           ? ""
                     : k + 1 == npick ? " or "
                                      : ", ",
                     names[pick[k]]);
    return npick;
}

static const char *skip_blank(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return s;
}

bool mfu__parse_double(const char *s, double *out)
{
    if (!s)
        return false;
    s = skip_blank(s);
    if (*s == '\0')
        return false;
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v))
        return false;
    if (*skip_blank(end) != '\0')
        return false;
    *out = v;
    return true;
}

bool mfu__parse_int64(const char *s, int64_t *out)
{
    if (!s)
        return false;
    s = skip_blank(s);
    if (*s == '\0')
        return false;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno == ERANGE)
        return false;
    if (*skip_blank(end) != '\0')
        return false;
    *out = (int64_t)v;
    return true;
}

char *mfu__strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

/* Hoare quickselect of v[lo..hi] (inclusive) for position k. Median-of-three pivot keeps
 * sorted and constant inputs linear on average. */
static double hoare_select(double *v, size_t lo, size_t hi, size_t k)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        double a = v[lo], b = v[mid], c = v[hi];
        double pivot = (a < b) ? ((b < c) ? b : (a < c ? c : a)) : ((a < c) ? a : (b < c ? c : b));
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double tmp = v[i];
                v[i] = v[j];
                v[j] = tmp;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break;
    }
    return v[k];
}

/* Move the values of v[0..n) (n >= 1) that are below p (le: at most p) to the front, keeping
 * the rest after them; returns how many. Without branches on the data (Lomuto's scheme with a
 * moving gap: each step writes the first not-below value into the gap and the new value at the
 * boundary), so random data costs no mispredictions. */
static size_t part_below(double *v, size_t n, double p, bool le)
{
    double held = v[0];
    size_t lt = 0;
    if (le) {
        for (size_t r = 1; r < n; r++) {
            double x = v[r];
            v[r - 1] = v[lt];
            v[lt] = x;
            lt += x <= p;
        }
        v[n - 1] = v[lt];
        v[lt] = held;
        lt += held <= p;
    } else {
        for (size_t r = 1; r < n; r++) {
            double x = v[r];
            v[r - 1] = v[lt];
            v[lt] = x;
            lt += x < p;
        }
        v[n - 1] = v[lt];
        v[lt] = held;
        lt += held < p;
    }
    return lt;
}

#define SELECT_SMALL 256

/* Selection (util.h) in the manner of Floyd and Rivest: a strided sample of about m^(2/3)
 * values brackets the k-th with two of its order statistics p1 <= p2 (about √(s ln m) apart in
 * the sample); two branch-free passes leave v[lo..a) < p1 <= v[a..b) <= p2 < v[b..hi), and the
 * search goes on in the part holding k, almost always the short middle. All of the middle
 * equal (p1 = p2): v[k] is found. A pass that shrinks the range by less than a quarter (an
 * unlucky sample) hands the range to quickselect; so do short ranges. */
double mfu__select_kth(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* k in [lo, hi) */
    while (hi - lo > SELECT_SMALL) {
        size_t m = hi - lo;
        double lm = log((double)m);
        size_t s = (size_t)(0.5 * exp(2.0 * lm / 3.0));
        if (s < 32)
            s = 32;
        size_t stride = m / s;
        for (size_t i = 1; i < s; i++) {
            double t = v[lo + i];
            v[lo + i] = v[lo + i * stride];
            v[lo + i * stride] = t;
        }
        double pos = (double)(k - lo) * (double)s / (double)m;
        double gap = 0.5 * sqrt(lm * (double)s);
        size_t kl = pos - gap > 0 ? (size_t)(pos - gap) : 0;
        size_t kh = pos + gap < (double)(s - 1) ? (size_t)(pos + gap) : s - 1;
        if (kh < kl)
            kh = kl;
        double p1 = mfu__select_kth(v + lo, s, kl);
        double p2 = kh > kl ? mfu__select_kth(v + lo + kl + 1, s - kl - 1, kh - kl - 1) : p1;
        size_t a = lo + part_below(v + lo, m, p1, false);
        size_t b = a < hi ? a + part_below(v + a, hi - a, p2, true) : a;
        size_t nlo, nhi;
        if (k < a) {
            nlo = lo;
            nhi = a;
        } else if (k < b) {
            if (p1 == p2)
                return v[k]; /* the whole middle is one value */
            nlo = a;
            nhi = b;
        } else {
            nlo = b;
            nhi = hi;
        }
        if (nhi - nlo > m - m / 4)
            return hoare_select(v, nlo, nhi - 1, k);
        lo = nlo;
        hi = nhi;
    }
    return hoare_select(v, lo, hi - 1, k);
}

size_t mfu__fmt_roundtrip(char *buf, size_t n, double v)
{
    int len = 0;
    for (int prec = 15; prec <= 17; prec++) {
        len = snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return len > 0 ? (size_t)len : 0;
}

size_t mfu__fmt_si_g(char *buf, size_t n, double v, const char *unit, int digits)
{
    size_t len = mfu__fmt_si_digits(buf, n, v, unit, digits);
    if (len >= n || !isfinite(v) || fabs(v) < 1)
        return len; /* %g below 1 already; cut or not a number: as it is */
    char *dot = strchr(buf, '.');
    if (!dot)
        return len;
    char *end = dot + strspn(dot + 1, "0123456789") + 1, *z = end;
    while (z > dot + 1 && z[-1] == '0')
        z--;
    if (z == dot + 1)
        z = dot; /* "500.0" -> "500" */
    memmove(z, end, strlen(end) + 1);
    return len - (size_t)(end - z);
}

size_t mfu__fmt_si(char *buf, size_t n, double v, const char *unit)
{
    return mfu__fmt_si_digits(buf, n, v, unit, 3);
}

size_t mfu__fmt_si_digits(char *buf, size_t n, double v, const char *unit, int digits)
{
    static const char *const prefix[] = {"", "k", "M", "G", "T", "P", "E"};
    int len;
    if (!unit)
        unit = "";
    digits = digits < 1 ? 1 : digits > 9 ? 9 : digits;
    const char *sp = unit[0] ? " " : "";
    if (isnan(v))
        len = snprintf(buf, n, "-");
    else if (isinf(v))
        len = snprintf(buf, n, "%sinf%s%s", v < 0 ? "-" : "", sp, unit);
    else if (v == 0)
        len = snprintf(buf, n, "0%s%s", sp, unit);
    else if (fabs(v) < 1)
        len = snprintf(buf, n, "%.*g%s%s", digits, v, sp, unit);
    else {
        const char *sign = v < 0 ? "-" : "";
        double a = fabs(v);
        size_t k = 0;
        while (a >= 1000 && k + 1 < MFU__ARRAY_LEN(prefix)) {
            a /= 1000;
            k++;
        }
        /* `digits` significant digits; rounding may carry into the next decade (9.996 -> 10.0)
         * or the next prefix (999.96 -> 1.00 of the next) */
        char num[48];
        for (;;) {
            int e = a < 10 ? 0 : a < 100 ? 1 : 2;
            int dec = digits - 1 - e > 0 ? digits - 1 - e : 0;
            snprintf(num, sizeof num, "%.*f", dec, a);
            double r = strtod(num, NULL);
            int er = r < 10 ? 0 : r < 100 ? 1 : 2;
            if (r >= 1000 && k + 1 < MFU__ARRAY_LEN(prefix)) {
                a = r / 1000;
                k++;
            } else if (er > e && dec > 0)
                a = r; /* print the rounded value with one decimal less */
            else
                break;
        }
        len = snprintf(buf, n, "%s%s%s%s%s", sign, num, unit[0] || prefix[k][0] ? " " : "",
                       prefix[k], unit);
    }
    return len > 0 ? (size_t)len : 0;
}

double mfu__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool mfu__cols_grow(double **cols, const bool *present, int n, double **nan, size_t old_cap,
                    size_t cap)
{
    for (int k = 0; k < n; k++) {
        if (!present[k])
            continue;
        double *p = realloc(cols[k], cap * sizeof *p);
        if (!p)
            return false;
        cols[k] = p;
    }
    double *z = realloc(*nan, cap * sizeof *z);
    if (!z)
        return false;
    for (size_t i = old_cap; i < cap; i++)
        z[i] = NAN;
    *nan = z;
    for (int k = 0; k < n; k++)
        if (!present[k])
            cols[k] = z;
    return true;
}
