/*
 * fast.c - exact fast paths for the ingest hot loop (ingest/fast.h).
 *
 * Decimal -> double (Clinger, "How to read floating point numbers accurately", PLDI 1990):
 * when the decimal's mantissa m fits in 53 bits and its power of ten 10^|e| is itself a double
 * (|e| <= 22), m and 10^|e| are both exact, so one IEEE multiplication or division rounds the
 * exact quotient or product once: the result is the correctly rounded value, the same double
 * strtod returns. Log numbers ("912.3", "2.134567E+00", "3.000000E-04") nearly always qualify;
 * anything else goes to strtod.
 *
 * Double -> text: the canonical writer prints the first of %.15g, %.16g, %.17g that reads
 * back (three snprintf + strtod rounds). When a decimal D = r x 10^-k with r < 10^15 reads
 * back as v (checked exactly, as above), D is the only decimal of at most 15 significant
 * digits that does (such decimals are at least 10^-15 apart relative, doubles 2^-52), so
 * %.15g prints D's digits; we lay them out as %g would. Anything else declines.
 */
#include "ingest/fast.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define pow10_exact mfu__pow10_exact

/* mfu__dec_scan, and mfu__dec_scan_value when printed is NULL (the decimal itself is then
 * not converted unless it is the value). */
static inline const char *dec_scan(const char *p, const char *end, int shift, double *value,
                                   double *printed)
{
    bool neg = false;
    if (p < end && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    /* byte loops: measured faster here than 8-digit SWAR for the 1-8 digit numbers of logs.
     * Leading zeros are passed over first, so that the loops gathering the significant digits
     * test nothing else (m may wrap past 19 digits: sig says so, and the decimal declines). */
    const char *d0 = p;
    while (p < end && *p == '0')
        p++;
    const char *s0 = p;
    uint64_t m = 0;
    for (; p < end && (unsigned)(*p - '0') < 10; p++)
        m = m * 10 + (uint64_t)(*p - '0');
    size_t sig = (size_t)(p - s0), digits = (size_t)(p - d0);
    long frac = 0;
    if (p < end && *p == '.') {
        const char *f0 = ++p;
        if (m == 0) /* 0.000123: the zeros after the point lead too */
            while (p < end && *p == '0')
                p++;
        const char *fs = p;
        for (; p < end && (unsigned)(*p - '0') < 10; p++)
            m = m * 10 + (uint64_t)(*p - '0');
        sig += (size_t)(p - fs);
        frac = (long)(p - f0);
        digits += (size_t)frac;
    }
    if (digits == 0 || sig > MFU__DEC_DIGITS)
        return NULL;
    long e10 = 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        const char *q = p + 1;
        bool eneg = false;
        if (q < end && (*q == '-' || *q == '+'))
            eneg = *q++ == '-';
        if (q == end || (unsigned)(*q - '0') >= 10)
            return NULL; /* "5e", "5e+x": the general reader decides what that is */
        for (; q < end && (unsigned)(*q - '0') < 10; q++)
            if (e10 < 100000)
                e10 = e10 * 10 + (*q - '0');
        if (eneg)
            e10 = -e10;
        p = q;
    }
    long e = e10 - frac;
    if (e < -400 || e > 400 || (m == 0 && (e + shift < -22 || e + shift > 22 || e < -22 || e > 22)))
        return NULL;
    double pr = 0.0, v;
    if (printed || shift == 0 ? !mfu__dec_to_double(m, (int)e, neg, &pr)
                              : !mfu__dec_exact(m, (int)e)) /* the value alone: no division */
        return NULL;
    if (shift == 0)
        v = pr;
    else if (!mfu__dec_to_double(m, (int)(e + shift), neg, &v))
        return NULL;
    *value = v;
    if (printed)
        *printed = pr;
    return p;
}

const char *mfu__dec_scan(const char *p, const char *end, int shift, double *value, double *printed)
{
    return dec_scan(p, end, shift, value, printed);
}

const char *mfu__dec_scan_value(const char *p, const char *end, int shift, double *value)
{
    return dec_scan(p, end, shift, value, NULL);
}

bool mfu__dec_to_double_wide(uint64_t m, int e10, bool neg, double *out)
{
    if (mfu__dec_to_double(m, e10, neg, out))
        return true;
#if defined(__SIZEOF_INT128__)
    if (!MFU__EXACT_DOUBLES || m == 0 || e10 < MFU__POW5_QMIN || e10 > MFU__POW5_QMAX)
        return false;
    /* m x 10^e10 = m x 5^e10 x 2^e10 = (m << lz) x T x 2^(f + e10 - lz), T = 5^e10's 128-bit
     * mantissa. P = (m << lz) x T (192 bits, from 2^190 up) is the exact product V less
     * delta, 0 <= delta < 2^64 (delta = 0 when T is exact: 0 <= e10 <= 55). */
    typedef unsigned __int128 u128;
    const mfu__pow5 *t = &mfu__pow5_128[e10 - MFU__POW5_QMIN];
    int lz = __builtin_clzll(m);
    uint64_t w = m << lz;
    u128 a = (u128)w * t->hi, b = (u128)w * t->lo;
    u128 mid = (b >> 64) + (uint64_t)a;
    uint64_t p1 = (uint64_t)mid, p2 = (uint64_t)(a >> 64) + (uint64_t)(mid >> 64);
    uint64_t p0 = (uint64_t)b;
    bool exact = e10 >= 0 && e10 <= 55;
    /* With p1 below its maximum, adding delta carries out of neither the low 128 bits nor
     * into the bit length, so V's rounding reads off p2 alone. p1 at its maximum means V may
     * be a rounding boundary itself (P just below it): that is when m / 5^-e10 is an integer
     * (5^-e10 < 2^64: e10 >= -27), a double's worth of bits that a conversion rounds as
     * strtod does; otherwise (2^-64 of the cases) give up. */
    if (!exact && p1 == UINT64_MAX) {
        if (e10 < -27 || e10 > 0)
            return false;
        uint64_t p5 = 1;
        for (int i = 0; i < -e10; i++)
            p5 *= 5;
        if (m % p5 != 0)
            return false;
        double d = ldexp((double)(m / p5), e10); /* rounded once, then scaled exactly */
        *out = neg ? -d : d;
        return true;
    }
    int r = p2 >> 63 ? 11 : 10; /* the 53-bit mantissa is p2 >> r */
    uint64_t mant = p2 >> r, rem = p2 & (((uint64_t)1 << r) - 1), half = (uint64_t)1 << (r - 1);
    bool up;
    if (exact) /* V = P: round half to even */
        up = rem > half || (rem == half && (p1 | p0 || (mant & 1)));
    else /* V = P + delta, delta > 0: V is never a midpoint here, and above it iff P is */
        up = rem >= half;
    int e2 = 128 + r + t->f + e10 - lz; /* V's mantissa bit 0 is worth 2^e2 in the value */
    if (up && ++mant == (uint64_t)1 << 53) {
        mant >>= 1;
        e2++;
    }
    int exp = e2 + 52; /* unbiased exponent of mant x 2^e2, mant in [2^52, 2^53) */
    if (exp < -1022 || exp > 1023)
        return false; /* subnormal or overflow: strtod decides (and says ERANGE) */
    uint64_t bits = (uint64_t)(exp + 1023) << 52 | (mant & (((uint64_t)1 << 52) - 1));
    if (neg)
        bits |= (uint64_t)1 << 63;
    memcpy(out, &bits, sizeof *out);
    return true;
#else
    return false;
#endif
}

/* Decimal digits of m (m > 0) into d; returns the count. */
static size_t u64_digits(uint64_t m, char *d)
{
    char tmp[24];
    size_t n = 0;
    while (m) {
        tmp[n++] = (char)('0' + m % 10);
        m /= 10;
    }
    for (size_t i = 0; i < n; i++)
        d[i] = tmp[n - 1 - i];
    return n;
}

size_t mfu__fmt_shortest(char *buf, double v)
{
    if (!MFU__EXACT_DOUBLES || !isfinite(v))
        return 0;
    size_t k = 0;
    if (signbit(v))
        buf[k++] = '-';
    double a = fabs(v);
    if (a == 0.0) {
        buf[k++] = '0';
        buf[k] = '\0';
        return k;
    }
    /* find r < 10^15 and scale s with r x 10^s == a after one correctly rounded operation */
    uint64_t r = 0;
    int s = 0;
    bool found = false;
    if (a < 1e15) {
        for (int j = 0; j <= 22 && !found; j++) {
            double y = a * pow10_exact[j];
            if (y >= 1e15)
                return 0;                           /* needs more than 15 digits */
            double x = (double)(uint64_t)(y + 0.5); /* y < 2^50: y + 0.5 is exact */
            /* only a near-integer y can be the one (its error is < 3 ulp): the exact check
             * (a division) runs for those alone */
            if (x > 0 && fabs(y - x) <= y * 1e-15 && x / pow10_exact[j] == a) {
                r = (uint64_t)x;
                s = -j;
                found = true;
            }
        }
    } else if (a <= 1e37) {
        for (int j = 1; j <= 22 && !found; j++) {
            double x = round(a / pow10_exact[j]);
            if (x < 1e15 && x > 0 && x * pow10_exact[j] == a) {
                r = (uint64_t)x;
                s = j;
                found = true;
            }
        }
    }
    if (!found)
        return 0;
    while (r % 10 == 0) { /* %g drops trailing zeros */
        r /= 10;
        s++;
    }
    char d[24] = {0};
    size_t nd = u64_digits(r, d);
    int x10 = (int)nd - 1 + s; /* the exponent %e would print */
    if (x10 < -4 || x10 >= 15) {
        buf[k++] = d[0];
        if (nd > 1) {
            buf[k++] = '.';
            memcpy(buf + k, d + 1, nd - 1);
            k += nd - 1;
        }
        buf[k++] = 'e';
        buf[k++] = x10 < 0 ? '-' : '+';
        int ax = x10 < 0 ? -x10 : x10;
        if (ax >= 100)
            buf[k++] = (char)('0' + ax / 100);
        buf[k++] = (char)('0' + ax / 10 % 10);
        buf[k++] = (char)('0' + ax % 10);
    } else if (x10 >= 0) {
        size_t ip = (size_t)x10 + 1; /* digits before the point */
        if (nd <= ip) {
            memcpy(buf + k, d, nd);
            k += nd;
            for (size_t i = nd; i < ip; i++)
                buf[k++] = '0';
        } else {
            memcpy(buf + k, d, ip);
            k += ip;
            buf[k++] = '.';
            memcpy(buf + k, d + ip, nd - ip);
            k += nd - ip;
        }
    } else {
        buf[k++] = '0';
        buf[k++] = '.';
        for (int i = 0; i < -x10 - 1; i++)
            buf[k++] = '0';
        memcpy(buf + k, d, nd);
        k += nd;
    }
    buf[k] = '\0';
    return k;
}

static bool ctrl_byte(unsigned char c)
{
    return (c < 0x20 && c != '\t') || c == 0x7f;
}

#if defined(__GNUC__)
/* 16 bytes at a time with the compiler's vector extension (SSE2 / NEON, or scalar code where
 * there is neither): no branch per block, one test at the end. */
typedef unsigned char mfu__v16 __attribute__((vector_size(16)));

static bool copy_check(char *dst, const char *src, size_t n)
{
    mfu__v16 acc = {0};
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        mfu__v16 v;
        memcpy(&v, src + i, 16);
        if (dst)
            memcpy(dst + i, &v, 16);
        acc |= (mfu__v16)((v < 0x20) & (v != '\t')) | (mfu__v16)(v == 0x7f);
    }
    uint64_t w[2];
    memcpy(w, &acc, 16);
    if (w[0] | w[1])
        return true;
    for (; i < n; i++) {
        if (dst)
            dst[i] = src[i];
        if (ctrl_byte((unsigned char)src[i]))
            return true;
    }
    return false;
}
#else
static bool copy_check(char *dst, const char *src, size_t n)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, src + i, 8);
        if (dst)
            memcpy(dst + i, &x, 8);
        uint64_t del = x ^ (0x7f * ones);
        /* a byte < 0x20 (Mycroft's "has less than"), or a byte equal to 0x7f: look closer
         * (a tab is allowed) */
        if (((x - 0x20 * ones) & ~x & highs) | ((del - ones) & ~del & highs))
            for (size_t j = 0; j < 8; j++)
                if (ctrl_byte((unsigned char)src[i + j]))
                    return true;
    }
    for (; i < n; i++) {
        if (dst)
            dst[i] = src[i];
        if (ctrl_byte((unsigned char)src[i]))
            return true;
    }
    return false;
}
#endif

/* ---- the first control byte ------------------------------------------------------------- */

/* 8 bytes at a time: a byte below 0x20 (Mycroft's "has less than") or equal to 0x7f marks the
 * word; the byte loop then finds which (a tab is allowed). */
size_t mfu__ctrl_find_portable(const char *p, size_t n)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        uint64_t del = x ^ (0x7f * ones);
        if (((x - 0x20 * ones) & ~x & highs) | ((del - ones) & ~del & highs))
            for (size_t j = i; j < i + 8; j++)
                if (ctrl_byte((unsigned char)p[j]))
                    return j;
    }
    for (; i < n; i++)
        if (ctrl_byte((unsigned char)p[i]))
            return i;
    return n;
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* 16 bytes at a time (SSE2, baseline on x86-64): unsigned v <= 0x1f is min(v, 0x1f) == v. */
size_t mfu__ctrl_find(const char *p, size_t n)
{
    const __m128i c1f = _mm_set1_epi8(0x1f), tab = _mm_set1_epi8('\t'), del = _mm_set1_epi8(0x7f);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        __m128i low =
            _mm_andnot_si128(_mm_cmpeq_epi8(v, tab), _mm_cmpeq_epi8(_mm_min_epu8(v, c1f), v));
        int m = _mm_movemask_epi8(_mm_or_si128(low, _mm_cmpeq_epi8(v, del)));
        if (m)
            return i + (size_t)__builtin_ctz((unsigned)m);
    }
    return i + mfu__ctrl_find_portable(p + i, n - i);
}
#else
size_t mfu__ctrl_find(const char *p, size_t n)
{
    return mfu__ctrl_find_portable(p, n);
}
#endif

bool mfu__has_ctrl(const char *p, size_t n)
{
    return copy_check(NULL, p, n);
}

bool mfu__copy_no_ctrl(char *dst, const char *src, size_t n)
{
    return !copy_check(dst, src, n);
}
