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

/* Hoare quickselect (util.h). Median-of-three pivot keeps sorted and constant inputs linear on
 * average. */
double mfu__select_kth(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
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
