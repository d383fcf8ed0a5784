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
 * %.15g prints D's digits; we lay them out as %g would. Anything else declines. First of all
 * (fmt_one): one product gives v's 17-18 leading digits and 64 bits of the rest, from which
 * each of the 15, 16, 17-digit roundings and whether it reads back are decided (see there).
 */
#include "ingest/fast.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
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

static const uint64_t pow10_u64[20] = {1ull,
                                       10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};

/* The 8 decimal digits of x < 10^8 (leading zeros included) as 8 bytes of 0..9, the first
 * digit in the lowest byte, in registers: x = a x 10^4 + b puts a and b in two 32-bit lanes,
 * each lane splits into two 2-digit lanes of 16 bits (y / 100 = y x 5243 >> 19 for y <
 * 10^4), and each of those into two digits of 8 bits (y / 10 = y x 103 >> 10 for y < 100).
 * No lane's product reaches the next lane, and the masks keep only the quotients. */
static inline uint64_t digits8(uint32_t x)
{
    uint64_t v = (uint64_t)(x / 10000) | (uint64_t)(x % 10000) << 32;
    uint64_t hi = ((v * 5243) >> 19) & 0x0000007f0000007full;
    v = hi | (v - hi * 100) << 16;
    uint64_t tens = ((v * 103) >> 10) & 0x000f000f000f000full;
    return tens | (v - tens * 10) << 8;
}

/* The number of decimal digits of m > 0: floor(log10(m)) + 1 from its bit length
 * (1233 / 4096 is log10(2) a little low), one comparison correcting the guess. */
static inline int u64_ndigits(uint64_t m)
{
    int t = ((64 - __builtin_clzll(m)) * 1233) >> 12;
    return t + (m >= pow10_u64[t]);
}

/* The decimal digits of m (0 < m < 10^18) as a string of digit values 0..9 in w[0..3) (w[0]
 * holds the first 8 bytes, the bytes after the last digit are 0), w[3] = 0; returns their
 * count. From digits8, the leading zeros shifted out in registers. */
static inline int digit_words(uint64_t m, uint64_t w[4])
{
    int n = u64_ndigits(m);
    w[1] = w[2] = w[3] = 0;
    if (n <= 8) {
        w[0] = digits8((uint32_t)m) >> (8 * (8 - n));
        return n;
    }
    uint64_t lo = digits8((uint32_t)(m % 100000000));
    if (n <= 16) {
        int h = n - 8; /* digits before the last 8: 1..8 */
        uint64_t hi = digits8((uint32_t)(m / 100000000)) >> (8 * (8 - h));
        w[0] = h == 8 ? hi : hi | lo << (8 * h);
        w[1] = h == 8 ? lo : lo >> (64 - 8 * h);
        return n;
    }
    int t = n - 16; /* 17 or 18 digits: the first one or two, then 8 and 8 */
    uint64_t top = m / 10000000000000000ull;
    uint64_t mid = digits8((uint32_t)(m / 100000000 % 100000000));
    uint64_t head = t == 2 ? (top / 10) | (top % 10) << 8 : top;
    w[0] = head | mid << (8 * t);
    w[1] = mid >> (64 - 8 * t) | lo << (8 * t);
    w[2] = lo >> (64 - 8 * t);
    return n;
}

/* The index of the last nonzero digit of digit_words' w (m > 0: there is one). On a
 * little-endian machine a word's last byte is its highest. */
static inline int last_nonzero(const uint64_t w[4])
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    int i = w[2] ? 2 : w[1] ? 1 : 0;
    return 8 * i + (63 - __builtin_clzll(w[i])) / 8;
#else
    int j = 23;
    while (!((w[j / 8] >> (8 * (j % 8))) & 0xff))
        j--;
    return j;
#endif
}

/* Store word w at p (8 bytes). */
static inline void put_word(char *p, uint64_t w)
{
    memcpy(p, &w, 8);
}

/* w[0..3) shifted down by b bytes (0 <= b <= 16): the string from its byte b on. */
static inline uint64_t word_from(const uint64_t w[4], int b, int i)
{
    int q = b / 8 + i, r = 8 * (b % 8);
    return r ? w[q] >> r | w[q + 1] << (64 - r) : w[q];
}

/* "e+05", "e-123": %g's exponent x10 after buf[0..k); the new length. */
static inline size_t put_exp(char *buf, size_t k, int x10)
{
    buf[k++] = 'e';
    buf[k++] = x10 < 0 ? '-' : '+';
    int ax = x10 < 0 ? -x10 : x10;
    if (ax >= 100)
        buf[k++] = (char)('0' + ax / 100);
    buf[k++] = (char)('0' + ax / 10 % 10);
    buf[k++] = (char)('0' + ax % 10);
    return k;
}

/* r x 10^s (0 < r < 10^18) laid out as "%.{prec}g" prints it after buf[0..k) (k <= 1: a sign
 * perhaps), when r rounded to prec digits is r: trailing zeros dropped, the exponent form for
 * an exponent below -4 or at least prec. Returns the length. The digits are words in registers
 * (digit_words; the trailing zeros found in them, not by dividing) stored whole: the text is
 * at most 24 bytes, and a word stored past its end stays within buf's 32 bytes. On a
 * big-endian machine, byte by byte. */
static size_t layout_g(char *buf, size_t k, uint64_t r, int s, int prec)
{
    uint64_t w[4];
    int nd = digit_words(r, w);
    int x10 = nd - 1 + s;     /* the exponent %e would print */
    nd = last_nonzero(w) + 1; /* %g drops trailing zeros */
    for (int i = 0; i < 3; i++)
        w[i] += 0x3030303030303030ull; /* the digits as text (the bytes after them '0') */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (x10 < -4 || x10 >= prec) {
        buf[k] = (char)w[0];
        buf[k + 1] = '.';
        for (int i = 0; i < 3; i++)
            put_word(buf + k + 2 + 8 * i, word_from(w, 1, i));
        k += nd > 1 ? (size_t)nd + 1 : 1;
        k = put_exp(buf, k, x10);
    } else if (x10 >= 0) {
        int ip = x10 + 1; /* digits before the point, 1..17 */
        for (int i = 0; i < 3; i++)
            put_word(buf + k + 8 * i, w[i]);
        if (nd <= ip) { /* zeros up to the point (ip <= 17): one word, or two after 8 digits */
            put_word(buf + k + nd, 0x3030303030303030ull);
            if (ip - nd > 8)
                put_word(buf + k + nd + 8, 0x3030303030303030ull);
            k += (size_t)ip;
        } else { /* the point, then nd - ip <= 16 digits */
            buf[k + ip] = '.';
            put_word(buf + k + ip + 1, word_from(w, ip, 0));
            if (nd - ip > 8)
                put_word(buf + k + ip + 9, word_from(w, ip, 1));
            k += (size_t)nd + 1;
        }
    } else {                                      /* 0.d, 0.0d, 0.00d, 0.000d */
        put_word(buf + k, 0x3030303030302e30ull); /* "0.000000" */
        size_t at = k + 1 + (size_t)-x10;
        for (int i = 0; i < 3; i++)
            put_word(buf + at + 8 * i, w[i]);
        k = at + (size_t)nd;
    }
#else
    char d[32];
    for (int i = 0; i < nd; i++)
        d[i] = (char)(w[i / 8] >> (8 * (i % 8)));
    if (x10 < -4 || x10 >= prec) {
        buf[k++] = d[0];
        if (nd > 1) {
            buf[k++] = '.';
            for (int i = 1; i < nd; i++)
                buf[k++] = d[i];
        }
        k = put_exp(buf, k, x10);
    } else if (x10 >= 0) {
        int ip = x10 + 1;
        for (int i = 0; i < ip; i++)
            buf[k++] = i < nd ? d[i] : '0';
        if (nd > ip) {
            buf[k++] = '.';
            for (int i = ip; i < nd; i++)
                buf[k++] = d[i];
        }
    } else {
        buf[k++] = '0';
        buf[k++] = '.';
        for (int i = 0; i < -x10 - 1; i++)
            buf[k++] = '0';
        for (int i = 0; i < nd; i++)
            buf[k++] = d[i];
    }
#endif
    buf[k] = '\0';
    return k;
}

size_t mfu__fmt_u64(char *buf, uint64_t v)
{
    if (v == 0 || v >= 1000000000000000000ull) {
        char tmp[24];
        size_t n = sizeof tmp;
        do {
            tmp[--n] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        size_t len = sizeof tmp - n;
        memcpy(buf, tmp + n, len);
        buf[len] = '\0';
        return len;
    }
    uint64_t w[4];
    int nd = digit_words(v, w);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (int i = 0; i < 3; i++)
        put_word(buf + 8 * i, w[i] + 0x3030303030303030ull);
#else
    for (int i = 0; i < nd; i++)
        buf[i] = (char)('0' + (w[i / 8] >> (8 * (i % 8)) & 0xff));
#endif
    buf[nd] = '\0';
    return (size_t)nd;
}

#if defined(__SIZEOF_INT128__)
typedef unsigned __int128 mfu__u128;

/* Which way a rest r (in units where half is one half of the last digit) rounds: 1 up, 0
 * down, -1 undecided. exact: r is the rest itself, a tie rounds up when tie_up (a sticky bit
 * below r, or an odd digit: ties to even); else the true rest lies in [r, r + slack) and only
 * r >= half (up) or r + slack <= half (down) decide. */
static int round_dir(mfu__u128 r, mfu__u128 half, bool exact, bool tie_up, mfu__u128 slack)
{
    if (exact)
        return r > half || (r == half && tie_up);
    return r >= half ? 1 : r + slack <= half ? 0 : -1;
}

/* D rounded up or not (dir of round_dir) into *d, *x10 (a carry to 10^prec becomes
 * 10^(prec-1) one decade up); false when dir is undecided. */
static bool rounded(uint64_t D, int dir, uint64_t p10, int x, uint64_t *d, int *x10)
{
    if (dir < 0)
        return false;
    if (dir && ++D == p10 * 10) {
        D = p10;
        x++;
    }
    *d = D;
    *x10 = x;
    return true;
}

/* The decimal of prec significant digits that "%.{prec}g" prints for a (finite, > 0) as
 * (*d, *x10): a rounded to prec digits is *d x 10^(*x10 - prec + 1), *d in
 * [10^(prec-1), 10^prec), by the exact value of a, ties to even (glibc's printf). a = m x 2^e2
 * (m < 2^53) times 5^q x 2^q for q = prec - 1 - x10 is the 181-bit product of m and q's
 * 128-bit power of five (pow5.c), below the exact one by less than m units of its last bit (0
 * when 0 <= q <= 55); false when that error could change the rounding, or q is out of the
 * table. */
static bool digits_of(double a, int prec, uint64_t *d, int *x10)
{
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    int be = (int)(bits >> 52 & 0x7ff);
    if (be == 0 || be == 0x7ff)
        return false; /* subnormal (or not finite) */
    uint64_t m = (bits & (((uint64_t)1 << 52) - 1)) | (uint64_t)1 << 52;
    int e2 = be - 1075; /* a = m x 2^e2 */
    /* floor(log10(a)) is floor(log2(a) x log10(2)) or one more: 78913 / 2^18 is log10(2) to
     * within 2^-20, exact enough for |log2(a)| < 1100; a wrong guess is corrected below */
    int l2 = be - 1023;
    int x = l2 >= 0 ? (l2 * 78913) >> 18 : -((-l2 * 78913 + (1 << 18) - 1) >> 18);
    if (x + 1 >= 0 && x + 1 <= 22 && a >= pow10_exact[x + 1])
        x++;
    uint64_t p10 = pow10_u64[prec - 1]; /* 10^(prec-1) */
    for (int tries = 0; tries < 3; tries++) {
        int q = prec - 1 - x;
        if (q < MFU__POW5_QMIN || q > MFU__POW5_QMAX)
            return false;
        bool exact = q >= 0 && q <= 55; /* the product is a * 10^q itself */
        const mfu__pow5 *t = &mfu__pow5_128[q - MFU__POW5_QMIN];
        /* M = m x (hi, lo) = (w2, w1, w0); a x 10^q = M x 2^(e2 + q + t->f) */
        mfu__u128 ph = (mfu__u128)m * t->hi, pl = (mfu__u128)m * t->lo;
        mfu__u128 mid = (pl >> 64) + (uint64_t)ph;
        uint64_t w0 = (uint64_t)pl, w1 = (uint64_t)mid;
        uint64_t w2 = (uint64_t)(ph >> 64) + (uint64_t)(mid >> 64);
        int k = -(e2 + q + t->f); /* bits below the point */
        if (k < 65 || k > 191)
            return false;
        /* integer part D = M >> k; rest R = M mod 2^k, compared as (rh, rl) = R >> (k - 128)
         * or R << (128 - k) with the bits shifted out kept in sticky */
        uint64_t D;
        mfu__u128 rest, half;
        bool sticky;
        mfu__u128 top = (mfu__u128)w2 << 64 | w1;
        if (k >= 128) {
            int j = k - 128; /* bits of w2 below the point: 0..63 */
            D = w2 >> j;
            mfu__u128 mask = ((mfu__u128)1 << (64 + j)) - 1;
            rest = top & mask; /* R's top 64 + j bits, with w0 below them */
            half = (mfu__u128)1 << (63 + j);
            sticky = w0 != 0;
            /* the error (< m < 2^53 units of w0) stays within w0 or carries one into rest */
            if (D >= p10 * 10 || D < p10) {
                x += D >= p10 * 10 ? 1 : -1;
                continue;
            }
            /* inexact: the true rest is in [rest.w0, rest.w0 + m): above half when rest >=
             * half (rounding up then gives D + 1 even if the true value carries into D + 1);
             * at or below it when rest + 2 <= half (w0 + m carries at most one) */
            return rounded(D, round_dir(rest, half, exact, sticky || (D & 1), 2), p10, x, d, x10);
        }
        /* 65 <= k < 128: D = top >> (k - 64), rest = the low k - 64 bits of top, and w0 */
        int j = k - 64; /* 1..63 */
        mfu__u128 Dw = top >> j;
        if (Dw >> 64) {
            x++;
            continue;
        }
        D = (uint64_t)Dw;
        if (D >= p10 * 10 || D < p10) {
            x += D >= p10 * 10 ? 1 : -1;
            continue;
        }
        mfu__u128 r2 = (top & (((mfu__u128)1 << j) - 1)) << 64 | w0; /* R, k bits, exact */
        half = (mfu__u128)1 << (k - 1);
        /* inexact: the true R is in [r2, r2 + m) */
        return rounded(D, round_dir(r2, half, exact, D & 1, m), p10, x, d, x10);
    }
    return false;
}
#endif

/* The 16-17 digit values (and those out of the 15-digit search's range): "%.Pg" for the first
 * P of 15, 16, 17 whose decimal reads back as a (mfu__dec_to_double_wide: exact or
 * declining), from digits_of. 0 when either declines (the caller's snprintf loop then). */
static size_t fmt_wide(char *buf, size_t k, double a)
{
#if defined(__SIZEOF_INT128__)
    /* 17 digits once; 15 and 16 from them: v = D17 x 10^s + e with |e| <= 10^s / 2, so
     * rounding D17's dropped digits t gives v's own rounding unless t is exactly half (50 or
     * 5), where e decides: digits_of then */
    uint64_t d17;
    int x17;
    if (!digits_of(a, 17, &d17, &x17))
        return 0;
    for (int prec = 15; prec <= 17; prec++) {
        uint64_t d = d17, div = prec == 15 ? 100 : prec == 16 ? 10 : 1;
        int x10 = x17;
        if (div > 1) {
            uint64_t t = d17 % div;
            if (t == div / 2) {
                if (!digits_of(a, prec, &d, &x10))
                    return 0;
            } else {
                d = d17 / div + (t > div / 2);
                if (d == (div == 100 ? 1000000000000000ull : 10000000000000000ull)) {
                    d /= 10;
                    x10++;
                }
            }
        }
        double back;
        if (!mfu__dec_to_double_wide(d, x10 - prec + 1, false, &back))
            return 0;
        if (back == a)
            return layout_g(buf, k, d, x10 - prec + 1, prec);
    }
    return 0;
#else
    (void)buf;
    (void)k;
    (void)a;
    return 0;
#endif
}

#if defined(__SIZEOF_INT128__)
/* One p-digit rounding of V = D + F x 2^-64 (fmt_one below): the rounded decimal *A (D / pw,
 * plus one when V rounds up) and whether it reads back as a. pw = 10^j for the j digits
 * dropped; hl, hh: the half-gaps below and above a in V's units x 2^64, cut (the true one is
 * above: cl, ch) or exact. exact: F is V's whole fraction (else within 2 units below it, and
 * each half-gap within 2 below the true one); a tie then rounds to an even A, and a decimal
 * exactly half a gap away reads back when a's mantissa is even (even_m). check false: only *A.
 * Returns 1: it reads back, 0: it does not, -1: too near a boundary to say (the caller declines).
 */
static inline int one_rounding(uint64_t D, uint64_t F, uint64_t pw, mfu__u128 hl, bool cl,
                               mfu__u128 hh, bool ch, bool exact, bool even_m, bool check,
                               uint64_t *A)
{
    uint64_t q = D / pw, r = D % pw; /* pw is a constant at each call: multiplies */
    mfu__u128 dd = (mfu__u128)r << 64 | F, half = (mfu__u128)pw << 63;
    bool up;
    if (exact)
        up = dd > half || (dd == half && (q & 1));
    else if (dd + 2 <= half)
        up = false;
    else if (dd > half)
        up = true;
    else
        return -1; /* too near a tie */
    *A = q + up;
    if (!check)
        return 1;
    /* the distance from a to the decimal, and the half-gap on that side */
    mfu__u128 dist = up ? ((mfu__u128)pw << 64) - dd : dd, h = up ? hh : hl;
    if (exact)
        return dist < h || (dist == h && ((up ? ch : cl) || even_m));
    /* the true distance is in [dist, dist + 2) below, (dist - 2, dist] above; the true
     * half-gap in [h, h + 2) */
    if (up)
        return dist < h ? 1 : dist >= h + 4 ? 0 : -1;
    return dist + 2 <= h ? 1 : dist >= h + 2 ? 0 : -1;
}

/* The first of "%.15g", "%.16g", "%.17g" of a (finite, > 0, normal) that reads back, from
 * one product. V = a x 10^q for q = 16 - floor(log10(a)), so that V has 17 or 18 digits before
 * the point, is m x (q's 128-bit power of five T) >> k (a = m x 2^e): its integer part D and
 * 64 bits of its fraction F, below the true fraction by less than 2 units (T is rounded down
 * by less than one unit of its last bit, which m times is below 2^-8 units of F here, and F
 * is cut); both exact when T is (0 <= q <= 55) and no bit below F is set. A p-digit rounding
 * drops the last j = digits(D) - p digits of D; it reads back as a exactly when it lies within
 * half the gap to a's neighbour on its side, or exactly half of it with a's mantissa even
 * (strtod rounds a tie to even), and that half-gap is 2^(e - 1) x 10^q = T >> (k + 1) in V's
 * units (half of that below a power of two). Inexact decisions are taken only when the errors
 * cannot move them; else 0 (the caller's slower exact paths decide). */
static size_t fmt_one(char *buf, size_t k, double a)
{
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    int be = (int)(bits >> 52 & 0x7ff);
    if (be == 0 || be == 0x7ff)
        return 0;
    uint64_t m = (bits & (((uint64_t)1 << 52) - 1)) | (uint64_t)1 << 52;
    int e2 = be - 1075;
    int l2 = be - 1023;
    int x = l2 >= 0 ? (l2 * 78913) >> 18 : -((-l2 * 78913 + (1 << 18) - 1) >> 18);
    for (int tries = 0; tries < 3; tries++) {
        int q = 16 - x;
        if (q < MFU__POW5_QMIN || q > MFU__POW5_QMAX)
            return 0;
        const mfu__pow5 *t = &mfu__pow5_128[q - MFU__POW5_QMIN];
        mfu__u128 ph = (mfu__u128)m * t->hi, pl = (mfu__u128)m * t->lo;
        mfu__u128 mid = (pl >> 64) + (uint64_t)ph;
        uint64_t w0 = (uint64_t)pl, w1 = (uint64_t)mid;
        uint64_t w2 = (uint64_t)(ph >> 64) + (uint64_t)(mid >> 64);
        int kk = -(e2 + q + t->f); /* bits below V's point */
        if (kk < 118 || kk > 160)
            return 0;
        int b = kk - 64;
        uint64_t D = (uint64_t)(((mfu__u128)w2 << 64 | w1) >> b);
        if (D < 10000000000000000ull) {
            x--;
            continue;
        }
        if (D >= 1000000000000000000ull) {
            x++;
            continue;
        }
        if (b > 63)
            return 0;
        uint64_t F = (uint64_t)((((mfu__u128)w1 << 64) | w0) >> b);
        bool exact = q >= 0 && q <= 55 && (w0 & (((uint64_t)1 << b) - 1)) == 0;
        mfu__u128 T = (mfu__u128)t->hi << 64 | t->lo;
        int sh = kk - 63; /* 55..63 */
        mfu__u128 hh = T >> sh, hl = hh;
        bool ch = (T & (((mfu__u128)1 << sh) - 1)) != 0, cl = ch;
        if (m == (uint64_t)1 << 52 && be > 1) { /* a power of two: the gap below is half */
            hl = T >> (sh + 1);
            cl = (T & (((mfu__u128)1 << (sh + 1)) - 1)) != 0;
        }
        bool even = (m & 1) == 0, n18 = D >= 100000000000000000ull;
        uint64_t A;
        /* 15 digits, then 16, then 17 (which always read back) */
        int r = n18 ? one_rounding(D, F, 1000, hl, cl, hh, ch, exact, even, true, &A)
                    : one_rounding(D, F, 100, hl, cl, hh, ch, exact, even, true, &A);
        if (r)
            return r < 0 ? 0 : layout_g(buf, k, A, (n18 ? 3 : 2) - q, 15);
        r = n18 ? one_rounding(D, F, 100, hl, cl, hh, ch, exact, even, true, &A)
                : one_rounding(D, F, 10, hl, cl, hh, ch, exact, even, true, &A);
        if (r)
            return r < 0 ? 0 : layout_g(buf, k, A, (n18 ? 2 : 1) - q, 16);
        r = n18 ? one_rounding(D, F, 10, hl, cl, hh, ch, exact, even, false, &A)
                : one_rounding(D, F, 1, hl, cl, hh, ch, exact, even, false, &A);
        return r < 0 ? 0 : layout_g(buf, k, A, (n18 ? 1 : 0) - q, 17);
    }
    return 0;
}
#endif

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
    /* an integer below 10^15: %.15g prints its digits */
    if (a < 1e15 && a == (double)(uint64_t)a) {
        return layout_g(buf, k, (uint64_t)a, 0, 15);
    }
#if defined(__SIZEOF_INT128__)
    size_t one = fmt_one(buf, k, a);
    if (one)
        return one;
#endif
    /* the 17 digits of a, and the first of 15, 16, 17 that reads back (fmt_wide): one 128-bit
     * product for any decimal, faster than the search below for all but the shortest */
    size_t w = fmt_wide(buf, k, a);
    if (w)
        return w;
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
    return layout_g(buf, k, r, s, 15);
}
size_t mfu__fmt_g(char *buf, double v, int prec)
{
#if defined(__SIZEOF_INT128__)
    if (MFU__EXACT_DOUBLES && prec >= 1 && prec <= 17 && isfinite(v) && v != 0) {
        size_t k = 0;
        if (signbit(v))
            buf[k++] = '-';
        uint64_t d;
        int x10;
        /* d: the prec digits, d x 10^(x10 - prec + 1) the rounded value */
        if (digits_of(fabs(v), prec, &d, &x10))
            return layout_g(buf, k, d, x10 - prec + 1, prec);
    }
#endif
    return (size_t)snprintf(buf, 32, "%.*g", prec, v);
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
