/*
 * ingest/fast.h - fast paths of the ingest hot loop, each exact or declining (never
 * approximate): the caller falls back to the general code (strtod, snprintf, jansson) whenever
 * a fast path says no, so behaviour is the same as without them. docs/internals/ingest.md
 * "Performance" says why each exists and what it measured.
 *
 *   mfu__dec_to_double   decimal (mantissa, exponent) -> double, Clinger's exact cases
 *   mfu__dec_scan        a plain decimal in text -> double through it
 *   mfu__fmt_shortest    double -> the shortest "%.{15,16,17}g" that reads back, ≤ 15 digits
 *   mfu__has_ctrl        does a byte range hold a control byte (the cleaner's quick reject);
 *                        mfu__copy_no_ctrl copies while it checks
 */
#ifndef MFU_INGEST_FAST_H
#define MFU_INGEST_FAST_H

#include <float.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Decimal mantissas up to this many significant digits are gathered exactly (< 2^64). */
#define MFU__DEC_DIGITS 19

/* The double nearest to (neg ? -1 : 1) x m x 10^e10 into *out, when that can be computed
 * exactly with one correctly rounded IEEE operation (Clinger 1990: m <= 2^53 and
 * |e10| <= 22, or a larger e10 whose excess power of ten keeps m x 10^excess <= 2^53), which is
 * then bit-for-bit what strtod gives for the decimal. Returns false otherwise (and on a
 * platform that evaluates doubles in extended precision); the caller uses strtod. Assumes the
 * default rounding mode (round to nearest), which the library never changes. */
static inline bool mfu__dec_to_double(uint64_t m, int e10, bool neg, double *out);

/* The double nearest to (neg ? -1 : 1) x m x 10^e10 for any m below 2^64: Clinger's exact
 * cases (mfu__dec_to_double), else the Eisel-Lemire method (Lemire, "Number Parsing at a
 * Gigabyte per Second", 2021): m times a 128-bit power of five rounded down (pow5.c), which
 * is kept only when that rounding cannot change the double's (then it is strtod's, bit for
 * bit). Returns false for m = 0 outside Clinger's cases, a result that is not a normal double
 * (subnormal, overflow), e10 outside [MFU__POW5_QMIN, MFU__POW5_QMAX], a product too near a
 * rounding boundary (about 2^-54 of the cases) and without a 128-bit integer type; the caller
 * uses strtod then. For the 16-17 significant digits of Python's float repr. */
bool mfu__dec_to_double_wide(uint64_t m, int e10, bool neg, double *out);

/* 5^q = (hi x 2^64 + lo) x 2^f with hi's top bit set, the 128 bits rounded down (pow5.c). */
typedef struct mfu__pow5 {
    uint64_t hi, lo;
    int f;
} mfu__pow5;
#define MFU__POW5_QMIN (-128)
#define MFU__POW5_QMAX 127
extern const mfu__pow5 mfu__pow5_128[MFU__POW5_QMAX - MFU__POW5_QMIN + 1];

/* Read a plain decimal [+-]digits[.digits][(e|E)[+-]digits] at p (before end) and return
 * the byte after it, with *value = the decimal x 10^shift and *printed = the decimal, both
 * exact through mfu__dec_to_double. Returns NULL, touching nothing, when there is no such
 * decimal at p, it has more than MFU__DEC_DIGITS significant digits, or a value would not be
 * exact: the caller then uses the general reader (mfu__num_parse_shift), which reads every
 * decimal this accepts to the same doubles. */
const char *mfu__dec_scan(const char *p, const char *end, int shift, double *value,
                          double *printed);

/* mfu__dec_scan without *printed: the same result (it declines the same decimals), without
 * converting the decimal itself when shift is not 0 (mfu__dec_exact decides instead). */
const char *mfu__dec_scan_value(const char *p, const char *end, int shift, double *value);

/* true exactly when mfu__dec_to_double(m, e10, ...) succeeds, without the division. */
static inline bool mfu__dec_exact(uint64_t m, int e10);

/* Write v (finite) into buf (at least 32 bytes: whole words are stored past the text) exactly
 * as the first of snprintf "%.15g", "%.16g", "%.17g" that strtod reads back as v would, and
 * return the length. Returns 0 for what no exact path here decides (subnormals, decimal
 * exponents outside the power-of-five table, a few ties too near to call): the caller runs
 * the snprintf loop then. */
size_t mfu__fmt_shortest(char *buf, double v);

/* v as snprintf "%.{prec}g" writes it (1 <= prec <= 17), the same bytes, into buf (at least 32
 * bytes: whole words are stored past the text), NUL-terminated; returns the length. The exact
 * 128-bit digits of mfu__fmt_shortest (a few times faster than snprintf); snprintf itself for
 * 0, what is not finite, subnormals and exponents outside the power-of-five table. For the
 * series API's 17-digit numbers. */
size_t mfu__fmt_g(char *buf, double v, int prec);

/* v in decimal into buf (at least 32 bytes: whole words are stored), NUL-terminated; returns
 * the length. For the canonical writer's integers (step numbers, ranks). */
size_t mfu__fmt_u64(char *buf, uint64_t v);

/* true when bytes p[0..n) hold a byte below 0x20 other than tab, or 0x7f: the bytes the
 * cleaner removes. Reads 16 bytes at a time. */
bool mfu__has_ctrl(const char *p, size_t n);

/* Index of the first such byte in p[0..n), or n when there is none: the reader's line scan
 * (a line's \n or \r is the first such byte of a line the cleaner leaves alone). SSE2 where
 * the compiler targets it (x86-64), 8 bytes at a time otherwise; the portable version is
 * exported so that the tests compare the two. */
size_t mfu__ctrl_find(const char *p, size_t n);
size_t mfu__ctrl_find_portable(const char *p, size_t n);

/* Copy src[0..n) to dst and return true when it holds no such byte (one pass; on false dst
 * holds some prefix of src and is to be rewritten). */
bool mfu__copy_no_ctrl(char *dst, const char *src, size_t n);

/* ---- inline definitions (the number readers call this for every number) ----------------- */

/* Doubles must be evaluated in double precision for one operation to round once. */
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#define MFU__EXACT_DOUBLES 1
#else
#define MFU__EXACT_DOUBLES 0
#endif

static const double mfu__pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                            1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                            1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static inline bool mfu__dec_to_double(uint64_t m, int e10, bool neg, double *out)
{
    const uint64_t two53 = (uint64_t)1 << 53;
    if (!MFU__EXACT_DOUBLES || m > two53)
        return false;
    double v;
    if (e10 >= 0 && e10 <= 22) {
        v = (double)m * mfu__pow10_exact[e10];
    } else if (e10 < 0 && e10 >= -22) {
        v = (double)m / mfu__pow10_exact[-e10];
    } else if (e10 > 22 && e10 <= 22 + 16) {
        /* move the excess powers of ten into the mantissa while it stays exact */
        for (int i = 22; i < e10; i++) {
            if (m > two53 / 10)
                return false;
            m *= 10;
        }
        v = (double)m * 1e22;
    } else {
        return false;
    }
    *out = neg ? -v : v;
    return true;
}

static inline bool mfu__dec_exact(uint64_t m, int e10)
{
    const uint64_t two53 = (uint64_t)1 << 53;
    if (!MFU__EXACT_DOUBLES || m > two53)
        return false;
    if (e10 >= -22 && e10 <= 22)
        return true;
    if (e10 <= 22 || e10 > 22 + 16)
        return false;
    for (int i = 22; i < e10; i++) { /* as mfu__dec_to_double moves the excess into m */
        if (m > two53 / 10)
            return false;
        m *= 10;
    }
    return true;
}

/* a[0..n) == b[0..n): 8 bytes at a time, the last 8 overlapping the loop's; short pieces
 * byte by byte (a call to memcmp costs more than the comparison). The shapes of jflat.c and
 * fmt_megatron.c compare their remembered text with each line this way. */
static inline bool mfu__same_bytes(const char *a, const char *b, size_t n)
{
    uint64_t x, y;
    if (n < 8) {
        for (size_t i = 0; i < n; i++)
            if (a[i] != b[i])
                return false;
        return true;
    }
    for (size_t i = 0; i + 8 < n; i += 8) {
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y)
            return false;
    }
    memcpy(&x, a + n - 8, 8);
    memcpy(&y, b + n - 8, 8);
    return x == y;
}

#endif /* MFU_INGEST_FAST_H */
