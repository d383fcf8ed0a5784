/*
 * test_ingest_fast.c - the ingest fast paths (ingest/fast.h) against the general code they
 * stand in for, on large seeded corpora: decimal -> double must be bit-for-bit strtod (long
 * mantissas, exponents, subnormals, signs, overflow), the number scanner with shifts and units
 * likewise, the shortest-double formatter must print exactly what the snprintf loop prints,
 * and the control-byte check must agree with a byte loop. Each also asserts that the fast
 * path is taken where it is documented to be, so a fast path that always declined would fail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/fast.h"
#include "ingest/format.h"

/* xorshift64*: a seeded generator, so a failure is reproducible. */
typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

static int below(rng *r, int n)
{
    return (int)(next(r) % (uint64_t)n);
}

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* A random decimal string: sign, 0-25 integer digits, optional fraction of 0-25 digits (at
 * least one digit in all), optional exponent from a mix of small, large and absurd. */
static void random_decimal(rng *r, char *buf, size_t n)
{
    size_t k = 0;
    int sign = below(r, 4);
    if (sign == 1)
        buf[k++] = '-';
    else if (sign == 2)
        buf[k++] = '+';
    int id = below(r, 4) == 0 ? below(r, 26) : below(r, 8);
    int fd = below(r, 3) == 0 ? -1 : (below(r, 4) == 0 ? below(r, 26) : below(r, 8));
    if (id == 0 && fd <= 0)
        id = 1;
    for (int i = 0; i < id; i++)
        buf[k++] = (char)('0' + (i == 0 && below(r, 3) ? 1 + below(r, 9) : below(r, 10)));
    if (fd >= 0) {
        buf[k++] = '.';
        for (int i = 0; i < fd; i++)
            buf[k++] = (char)('0' + below(r, 10));
    }
    int ek = below(r, 6);
    if (ek >= 2) {
        buf[k++] = below(r, 2) ? 'e' : 'E';
        int e = ek == 2   ? below(r, 61) - 30
                : ek == 3 ? below(r, 661) - 330
                : ek == 4 ? below(r, 45) - 22
                          : (below(r, 2) ? 400 : -400) + below(r, 100000);
        k += (size_t)snprintf(buf + k, n - k, below(r, 4) == 0 && e >= 0 ? "+%d" : "%d", e);
    }
    buf[k] = '\0';
}

static const char *const edge_decimals[] = {
    "0", "-0", "+0", "0.0", "-0.0", "0e-999", "0e999", "1e400", "-1e400", "1e308", "1.7976931348623157e308",
    "1.7976931348623158e308", "1.7976931348623159e308", "2.2250738585072014e-308",
    "2.2250738585072011e-308", "4.9e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
    "1e-400", "9007199254740992", "9007199254740993", "9007199254740994", "9007199254740995",
    "18446744073709551615", "18446744073709551616", "123456789012345678901234567890",
    "0.1", "0.2", "0.3", "1e22", "1e23", "1e-22", "1e-23", "9007199254740993e22",
    "4503599627370497.5", "1.000000000000000000000000001", "7.2057594037927933e16",
    "0.000000000000000000000000000001", "100000000000000000000000", "1e+0", "1E-0",
    "6.976744E-07", "1.062389E+01", "912.3", "3.000000E-04", "71202000000", "1048576",
    "0.9999999999999999", "0.99999999999999999", ".5", "5.", "-.5e3"};

/* What mfu__num_parse must say for decimal s: strtod's double, or failure when strtod
 * reports a range error or an infinity. */
static bool reference(const char *s, double *out)
{
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(v))
        return false;
    *out = v;
    return true;
}

static void check_parse(const char *s)
{
    double want;
    bool ok = reference(s, &want);
    mfu__num n;
    bool got = mfu__num_parse(mfu__span_of(s), &n);
    if (got != ok)
        fail_msg("'%s': mfu__num_parse says %d, strtod %d", s, got, ok);
    if (ok && (!same_bits(n.value, want) || !same_bits(n.printed, want)))
        fail_msg("'%s': %.17g, strtod %.17g", s, n.value, want);
}

/* The value of decimal s with its exponent moved by shift, as strtod reads it. */
static double shifted(const char *s, int shift)
{
    char buf[128];
    const char *e = strpbrk(s, "eE");
    size_t mlen = e ? (size_t)(e - s) : strlen(s);
    long ex = e ? strtol(e + 1, NULL, 10) : 0;
    snprintf(buf, sizeof buf, "%.*se%ld", (int)mlen, s, ex + shift);
    return strtod(buf, NULL);
}

static void check_shift(const char *s, int shift)
{
    double first;
    bool ok = reference(s, &first);
    double want = ok ? shifted(s, shift) : NAN;
    if (ok && !isfinite(want))
        ok = false;
    mfu__num n;
    bool got = mfu__num_parse_shift(mfu__span_of(s), shift, &n);
    if (got != ok)
        fail_msg("'%s' shift %d: mfu says %d, strtod %d", s, shift, got, ok);
    if (ok && !same_bits(n.value, want))
        fail_msg("'%s' shift %d: %.17g, strtod %.17g", s, shift, n.value, want);
    if (ok && !same_bits(n.printed, first))
        fail_msg("'%s' shift %d: printed %.17g, strtod %.17g", s, shift, n.printed, first);
}

static void decimal_corpus_matches_strtod(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof edge_decimals / sizeof edge_decimals[0]; i++) {
        check_parse(edge_decimals[i]);
        check_shift(edge_decimals[i], -3);
        check_shift(edge_decimals[i], 12);
    }
    rng r = {0x9E3779B97F4A7C15ull};
    static const int shifts[] = {-9, -6, -3, -2, 3, 6, 9, 12, 15, 300, -300};
    char buf[128];
    for (int i = 0; i < 200000; i++) {
        random_decimal(&r, buf, sizeof buf);
        check_parse(buf);
        if (i % 4 == 0)
            check_shift(buf, shifts[below(&r, (int)(sizeof shifts / sizeof shifts[0]))]);
    }
}

/* Numbers with unit suffixes: powers of ten move the exponent, others multiply. */
static void units_match_strtod(void **state)
{
    (void)state;
    static const struct {
        const char *suffix;
        int p10;       /* or 1000: multiply by factor */
        double factor;
    } units[] = {{" ms", -3, 0}, {"us", -6, 0}, {" ns", -9, 0}, {"TFLOPS", 12, 0},
                 {" TFLOP/s", 12, 0}, {"GB", 9, 0}, {"%", -2, 0}, {" s", 0, 0},
                 {"KiB", 1000, 1024.0}, {" GiB", 1000, 1073741824.0}, {" min", 1000, 60.0}};
    rng r = {12345};
    char num[96], text[128];
    for (int i = 0; i < 50000; i++) {
        snprintf(num, sizeof num, "%d.%0*d", below(&r, 100000), 1 + below(&r, 6),
                 below(&r, 1000000));
        size_t u = (size_t)below(&r, (int)(sizeof units / sizeof units[0]));
        snprintf(text, sizeof text, "%s%s", num, units[u].suffix);
        double want = units[u].p10 == 1000 ? strtod(num, NULL) * units[u].factor
                                           : shifted(num, units[u].p10);
        mfu__num n;
        if (!mfu__num_parse(mfu__span_of(text), &n))
            fail_msg("'%s' did not parse", text);
        if (!same_bits(n.value, want))
            fail_msg("'%s': %.17g, want %.17g", text, n.value, want);
        if (!same_bits(n.printed, strtod(num, NULL)))
            fail_msg("'%s': printed %.17g", text, n.printed);
    }
}

/* mfu__dec_to_double: exact where Clinger's conditions hold, declines elsewhere. */
static void clinger_cases_are_exact(void **state)
{
    (void)state;
    rng r = {777};
    char buf[64];
    long accepted = 0;
    for (int i = 0; i < 200000; i++) {
        int bits = 1 + below(&r, 56);
        uint64_t m = next(&r) >> (64 - bits);
        int e = below(&r, 101) - 50;
        bool neg = below(&r, 2);
        double got;
        bool ok = mfu__dec_to_double(m, e, neg, &got);
        bool must = m <= ((uint64_t)1 << 53) && e >= -22 && e <= 22;
        if (must && !ok)
            fail_msg("%llu e%d declined", (unsigned long long)m, e);
        if (m > ((uint64_t)1 << 53) && ok)
            fail_msg("%llu e%d accepted with a mantissa over 2^53", (unsigned long long)m, e);
        if (!ok)
            continue;
        accepted++;
        snprintf(buf, sizeof buf, "%s%llue%d", neg ? "-" : "", (unsigned long long)m, e);
        double want = strtod(buf, NULL);
        if (!same_bits(got, want))
            fail_msg("%s: %.17g, strtod %.17g", buf, got, want);
    }
    assert_true(accepted > 50000);
    /* the extended case: a large exponent folded into a small mantissa */
    double v;
    assert_true(mfu__dec_to_double(3, 30, false, &v));
    assert_true(same_bits(v, 3e30));
    assert_false(mfu__dec_to_double(9007199254740993ull, 0, false, &v));
    assert_false(mfu__dec_to_double(1, -23, false, &v));
    assert_false(mfu__dec_to_double(1, 400, false, &v));
}

/* The reference: the writer's loop before the fast path. */
static void shortest_ref(char *buf, size_t n, double v)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static bool check_shortest(double v)
{
    char got[40], want[40];
    size_t n = mfu__fmt_shortest(got, v);
    if (n == 0)
        return false;
    shortest_ref(want, sizeof want, v);
    if (strcmp(got, want) != 0 || n != strlen(got))
        fail_msg("%a: fast '%s', snprintf '%s'", v, got, want);
    return true;
}

static void shortest_matches_snprintf(void **state)
{
    (void)state;
    static const double edges[] = {0.0, -0.0, 1.0, -1.0, 0.1, 0.3, 2.0 / 3.0, 1e15, 1e-5, 1e-4,
                                   9.99999999999999e14, 123456789012345.0, 1e14, 1e16, 1e22,
                                   1e23, 1e37, 1e38, 1e-22, 1e-23, 5e-324, DBL_MAX, DBL_MIN,
                                   0.0001, 0.00001234, 15.2106, 802600000000000.0, 71202e6,
                                   1048576.0, 6.976744e-07, 4.0e-4, 100.0, 1e100, -1e-7};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        check_shortest(edges[i]);
    assert_true(check_shortest(0.0) && check_shortest(-0.0) && check_shortest(15.2106));
    rng r = {4242};
    /* r x 10^s with r < 10^15 and |s| <= 22: documented to take the fast path */
    for (int i = 0; i < 100000; i++) {
        int digits = 1 + below(&r, 15);
        uint64_t m = next(&r) % 1000000000000000ull;
        uint64_t lim = 1;
        for (int d = 0; d < digits; d++)
            lim *= 10;
        m %= lim;
        int s = below(&r, 45) - 22;
        char text[64];
        snprintf(text, sizeof text, "%s%llue%d", below(&r, 2) ? "-" : "", (unsigned long long)m,
                 s);
        double v = strtod(text, NULL);
        if (!check_shortest(v))
            fail_msg("%s (%.17g) declined", text, v);
    }
    /* arbitrary doubles: whatever is accepted must match */
    long accepted = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t bits = next(&r);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (isfinite(v))
            accepted += check_shortest(v);
        double w = (double)(next(&r) % 100000) * 1024.0 * 1024.0 / 1000.0;
        check_shortest(w);
        check_shortest((double)below(&r, 1000000) / 1e4 * 1e-3);
    }
    (void)accepted;
}

static bool ctrl_ref(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return true;
    }
    return false;
}

static void control_bytes(void **state)
{
    (void)state;
    static const unsigned char alphabet[] = {'a', ' ', '\t', 0x1b, 0x7f, 0x80, 0xff, 0x1f,
                                             0x20, 0x7e, 0x00, 0x0a, 0xc2, 0x21, 0x3f};
    rng r = {99};
    char buf[64];
    long hits = 0;
    for (int i = 0; i < 200000; i++) {
        size_t n = (size_t)below(&r, 48);
        for (size_t k = 0; k < n; k++)
            buf[k] = (char)(below(&r, 4) ? 'a' + below(&r, 26)
                                          : alphabet[below(&r, (int)sizeof alphabet)]);
        size_t off = (size_t)below(&r, 8);
        if (off > n)
            off = n;
        bool want = ctrl_ref(buf + off, n - off);
        assert_int_equal(mfu__has_ctrl(buf + off, n - off), want);
        hits += want;
    }
    assert_true(hits > 1000);
    assert_false(mfu__has_ctrl("iteration 10/ 100 |\ttab", 23));
    assert_true(mfu__has_ctrl("0123456789abcdef\x1b[0m", 20));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clinger_cases_are_exact),
        cmocka_unit_test(decimal_corpus_matches_strtod),
        cmocka_unit_test(units_match_strtod),
        cmocka_unit_test(shortest_matches_snprintf),
        cmocka_unit_test(control_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
