/*
 * test_ingest_fast.c - the ingest fast paths (ingest/fast.h) against the general code they
 * stand in for, on large seeded corpora: decimal -> double must be bit-for-bit strtod (long
 * mantissas, exponents, subnormals, signs, overflow), the number scanner with shifts and units
 * likewise, the shortest-double formatter must print exactly what the snprintf loop prints,
 * and the control-byte check must agree with a byte loop. Each also asserts that the fast
 * path is taken where it is documented to be, so a fast path that always declined would fail.
 * The reader (lines handed out in place) is compared with a splitter written from its
 * contract, and the cleaner with its own version from before the fast paths (ref_clean.h).
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

#include "run/step.h"
#include "ingest/fast.h"
#include "ingest/format.h"
#include "ingest/internal.h"
#include "ingest/jflat.h"
#include "ingest_test.h"
#include "ref_clean.h"
#include "sameness.h"
#include "ref_megatron.h"

#include <jansson.h>

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

static const char *const edge_decimals[] = {"0",
                                            "-0",
                                            "+0",
                                            "0.0",
                                            "-0.0",
                                            "0e-999",
                                            "0e999",
                                            "1e400",
                                            "-1e400",
                                            "1e308",
                                            "1.7976931348623157e308",
                                            "1.7976931348623158e308",
                                            "1.7976931348623159e308",
                                            "2.2250738585072014e-308",
                                            "2.2250738585072011e-308",
                                            "4.9e-324",
                                            "2.4703282292062327e-324",
                                            "2.4703282292062328e-324",
                                            "1e-400",
                                            "9007199254740992",
                                            "9007199254740993",
                                            "9007199254740994",
                                            "9007199254740995",
                                            "18446744073709551615",
                                            "18446744073709551616",
                                            "123456789012345678901234567890",
                                            "0.1",
                                            "0.2",
                                            "0.3",
                                            "1e22",
                                            "1e23",
                                            "1e-22",
                                            "1e-23",
                                            "9007199254740993e22",
                                            "4503599627370497.5",
                                            "1.000000000000000000000000001",
                                            "7.2057594037927933e16",
                                            "0.000000000000000000000000000001",
                                            "100000000000000000000000",
                                            "1e+0",
                                            "1E-0",
                                            "6.976744E-07",
                                            "1.062389E+01",
                                            "912.3",
                                            "3.000000E-04",
                                            "71202000000",
                                            "1048576",
                                            "0.9999999999999999",
                                            "0.99999999999999999",
                                            ".5",
                                            "5.",
                                            "-.5e3"};

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

/* mfu__dec_scan: where it reads a number, the general reader gives the same doubles; it stops
 * right after the decimal. */

/* mfu__dec_scan over the whole of the string t. */
static const char *dec_scan_all(const char *t, double *v, double *pr)
{
    return mfu__dec_scan(t, t + strlen(t), 0, v, pr);
}
static void dec_scan_matches_general_reader(void **state)
{
    (void)state;
    rng r = {2718};
    char buf[128], text[160];
    long accepted = 0;
    for (int i = 0; i < 100000; i++) {
        random_decimal(&r, buf, sizeof buf);
        int shift = below(&r, 3) == 0 ? below(&r, 31) - 15 : 0;
        snprintf(text, sizeof text, "%s |x", buf);
        double v = 0, pr = 0;
        const char *end = text + strlen(text);
        const char *after = mfu__dec_scan(text, end, shift, &v, &pr);
        if (!after)
            continue;
        accepted++;
        if (after != text + strlen(buf))
            fail_msg("'%s': stopped at '%s'", buf, after);
        mfu__num n;
        if (!mfu__num_parse_shift(mfu__span_of(buf), shift, &n))
            fail_msg("'%s' shift %d: fast path read it, the general reader did not", buf, shift);
        if (!same_bits(n.value, v) || !same_bits(n.printed, pr))
            fail_msg("'%s' shift %d: %.17g/%.17g, general %.17g/%.17g", buf, shift, v, pr, n.value,
                     n.printed);
    }
    assert_true(accepted > 30000);
    double v, pr;
    assert_null(dec_scan_all("5e", &v, &pr));
    assert_null(dec_scan_all("1234567890123456789012", &v, &pr));
    assert_null(dec_scan_all("1e400", &v, &pr));
    assert_null(dec_scan_all("abc", &v, &pr));
}

/* Numbers with unit suffixes: powers of ten move the exponent, others multiply. */
static void units_match_strtod(void **state)
{
    (void)state;
    static const struct {
        const char *suffix;
        int p10; /* or 1000: multiply by factor */
        double factor;
    } units[] = {{" ms", -3, 0},        {"us", -6, 0},
                 {" ns", -9, 0},        {"TFLOPS", 12, 0},
                 {" TFLOP/s", 12, 0},   {"GB", 9, 0},
                 {"%", -2, 0},          {" s", 0, 0},
                 {"KiB", 1000, 1024.0}, {" GiB", 1000, 1073741824.0},
                 {" min", 1000, 60.0}};
    rng r = {12345};
    char num[96], text[128];
    for (int i = 0; i < 50000; i++) {
        snprintf(num, sizeof num, "%d.%0*d", below(&r, 100000), 1 + below(&r, 6),
                 below(&r, 1000000));
        size_t u = (size_t)below(&r, (int)(sizeof units / sizeof units[0]));
        snprintf(text, sizeof text, "%s%s", num, units[u].suffix);
        double want =
            units[u].p10 == 1000 ? strtod(num, NULL) * units[u].factor : shifted(num, units[u].p10);
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
        double got = 0.0;
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
    double v = 0.0;
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
    static const double edges[] = {0.0,
                                   -0.0,
                                   1.0,
                                   -1.0,
                                   0.1,
                                   0.3,
                                   2.0 / 3.0,
                                   1e15,
                                   1e-5,
                                   1e-4,
                                   9.99999999999999e14,
                                   123456789012345.0,
                                   1e14,
                                   1e16,
                                   1e22,
                                   1e23,
                                   1e37,
                                   1e38,
                                   1e-22,
                                   1e-23,
                                   5e-324,
                                   DBL_MAX,
                                   DBL_MIN,
                                   0.0001,
                                   0.00001234,
                                   15.2106,
                                   802600000000000.0,
                                   71202e6,
                                   1048576.0,
                                   6.976744e-07,
                                   4.0e-4,
                                   100.0,
                                   1e100,
                                   -1e-7};
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
        snprintf(text, sizeof text, "%s%llue%d", below(&r, 2) ? "-" : "", (unsigned long long)m, s);
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

/* The 16-17 digit values (Python's repr of a float32 loss, a ratio of measurements) and those
 * out of the 15-digit search's range: the wide path (digits_of in fast.c) must take nearly all
 * of them, and match the snprintf loop on each one it takes: random values over 200 decades,
 * float32 values widened, 17-digit integers, half-integers (ties to even at 16 digits), the
 * neighbours of powers of ten and of 10^k - 1. */
static void shortest_wide_matches_snprintf(void **state)
{
    (void)state;
    rng r = {777};
    long tried = 0, taken = 0;
    for (int i = 0; i < 300000; i++) {
        double v = ldexp((double)(next(&r) >> 11) / 9007199254740992.0 + 0.5,
                         (int)below(&r, 660) - 330); /* 1e-100 .. 1e98 */
        tried++;
        taken += check_shortest(below(&r, 2) ? -v : v);
        float f = (float)((double)(next(&r) >> 11) / 9007199254740992.0 * 12.0);
        tried++;
        taken += check_shortest((double)f);
        tried++;
        taken += check_shortest((double)(1e16 + (double)(next(&r) % 90000000000000000ull)));
        /* n + 0.5 with n in [1e15, 2^52): 17 significant digits, ends in 5, a tie at 16 */
        double h = (double)(1000000000000000ull + next(&r) % 3503599627370496ull) + 0.5;
        tried++;
        taken += check_shortest(h);
    }
    for (int e = -99; e <= 98; e++) {
        double p = pow(10.0, e);
        double n[] = {p,
                      nextafter(p, 0),
                      nextafter(p, INFINITY),
                      nextafter(nextafter(p, 0), 0),
                      p * (1 - 1e-16),
                      9.999999999999999 * p};
        for (size_t k = 0; k < sizeof n / sizeof n[0]; k++) {
            tried++;
            taken += check_shortest(n[k]);
        }
    }
    /* declining is allowed (the loop runs then), but it must be rare: a broken wide path that
     * declines everything fails here */
    if (taken < tried - tried / 1000)
        fail_msg("the wide path took %ld of %ld values", taken, tried);
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
    static const unsigned char alphabet[] = {'a',  ' ',  '\t', 0x1b, 0x7f, 0x80, 0xff, 0x1f,
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
        char copy[64];
        assert_int_equal(mfu__copy_no_ctrl(copy, buf + off, n - off), !want);
        if (!want && n > off)
            assert_memory_equal(copy, buf + off, n - off);
        hits += want;
    }
    assert_true(hits > 1000);
    assert_false(mfu__has_ctrl("iteration 10/ 100 |\ttab", 23));
    assert_true(mfu__has_ctrl("0123456789abcdef\x1b[0m", 20));
}

/* ---- reader: lines in place vs the contract ------------------------------------------------ */

typedef struct ref_line {
    size_t off, len; /* in the input */
    long lineno;
    bool too_long;
} ref_line;

/* The reader's contract (internal.h): pieces between \n and \r, empty ones dropped, a piece
 * over max_line reported as too long, line numbers counting \n. */
static size_t ref_split(const char *in, size_t n, size_t max_line, ref_line *out, long *lines,
                        bool *truncated)
{
    size_t k = 0, start = 0;
    long lineno = 1;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && in[i] != '\n' && in[i] != '\r')
            continue;
        if (i > start) {
            out[k].off = start;
            out[k].len = i - start > max_line ? 0 : i - start;
            out[k].too_long = i - start > max_line;
            out[k].lineno = lineno;
            k++;
        }
        if (i < n && in[i] == '\n')
            lineno++;
        start = i + 1;
    }
    const char *last_nl = NULL;
    for (size_t i = n; i-- > 0;)
        if (in[i] == '\n') {
            last_nl = in + i;
            break;
        }
    size_t tail = last_nl ? n - (size_t)(last_nl - in) - 1 : n;
    *truncated = tail > 0;
    *lines = (lineno - 1) + (tail > 0);
    return k;
}

static void check_reader(mfu__reader *r, const char *in, const ref_line *want, size_t nwant,
                         long lines, bool truncated)
{
    size_t k = 0;
    for (;;) {
        mfu__rline rl;
        bool eof = false;
        mfu_error e;
        assert_int_equal(mfu__reader_next(r, &rl, &eof, &e), MFU_OK);
        if (eof)
            break;
        if (k >= nwant)
            fail_msg("reader gave more than %zu lines", nwant);
        assert_int_equal(rl.too_long, want[k].too_long);
        assert_int_equal(rl.lineno, want[k].lineno);
        assert_int_equal(rl.len, want[k].len);
        if (rl.len && memcmp(rl.text, in + want[k].off, rl.len) != 0)
            fail_msg("line %zu (physical %ld) differs", k, want[k].lineno);
        k++;
    }
    assert_int_equal(k, nwant);
    assert_int_equal(mfu__reader_lines(r), lines);
    assert_int_equal(mfu__reader_truncated(r), truncated);
}

static void reader_matches_contract(void **state)
{
    (void)state;
    rng r = {2024};
    size_t cap = 3 * MFU__READER_CHUNK + 1000;
    char *in = malloc(cap);
    ref_line *want = malloc(cap * sizeof *want);
    assert_non_null(in);
    assert_non_null(want);
    for (int round = 0; round < 12; round++) {
        size_t n = round < 4 ? (size_t)below(&r, 300) : cap - (size_t)below(&r, 2000);
        int maxlen = round % 3 == 0 ? 400 : 120;
        for (size_t i = 0; i < n;) {
            size_t len = (size_t)below(&r, maxlen);
            for (size_t j = 0; j < len && i < n; j++)
                in[i++] = (char)(' ' + below(&r, 95));
            if (i < n) {
                int sep = below(&r, 10);
                in[i++] = sep < 7 ? '\n' : '\r';
                if (sep == 9 && i < n)
                    in[i++] = '\n';
            }
        }
        long lines;
        bool truncated;
        size_t max_line = 200;
        size_t nwant = ref_split(in, n, max_line, want, &lines, &truncated);
        mfu__reader *mr = mfu__reader_mem(in, n, max_line);
        assert_non_null(mr);
        check_reader(mr, in, want, nwant, lines, truncated);
        mfu__reader_free(mr);
        if (n == 0)
            continue; /* fmemopen needs a byte */
        FILE *f = fmemopen(in, n, "rb");
        assert_non_null(f);
        mfu__reader *fr = mfu__reader_file(f, max_line);
        assert_non_null(fr);
        check_reader(fr, in, want, nwant, lines, truncated);
        mfu__reader_free(fr);
        fclose(f);
    }
    free(in);
    free(want);
}

/* ---- cleaner: fast paths vs the cleaner before them ---------------------------------------- */

static const char *const clean_pieces[] = {"[rank3]:",
                                           "3: ",
                                           "12: ",
                                           "stdout: ",
                                           "stderr: ",
                                           "rank0[73][MainThread]: ",
                                           "[titan] ",
                                           "[2024-01-02 03:04:05,678] ",
                                           "[2024-09-03 16:38:39]",
                                           "2023-03-22 09:30:39 ",
                                           "2024-01-01 10:00:00,5,7",
                                           " - root - INFO - ",
                                           " | INFO | root | ",
                                           "[INFO] [file.py:12:f] ",
                                           "[WARNING] ",
                                           "INFO:torchtune.utils:",
                                           "WARN:x:",
                                           "I0811 21:54:55.531340  514 file.py:226] ",
                                           "E0811 21:54:55.531340 514 a.py:2] ",
                                           "> ",
                                           ">",
                                           "  ",
                                           "\t",
                                           " ",
                                           "iteration 10/ 100 |",
                                           "step 5 loss 2.3",
                                           "{\"step\": 1}",
                                           "[Rank 0] step=40",
                                           "Rank",
                                           "DEBUG",
                                           "CRITICAL:",
                                           "F",
                                           "\x1b[31m",
                                           "\x1b[0m",
                                           "\x1b]0;title\x07",
                                           "\x1b]8;;x\x1b\\",
                                           "\x1b",
                                           "\x7f",
                                           "\x01",
                                           "\x1f",
                                           "\xc2\xb5s",
                                           "rank",
                                           "r",
                                           "s",
                                           "[",
                                           "]",
                                           ":",
                                           "0",
                                           "99999",
                                           "Drank",
                                           "stdoutx"};

static void cleaner_matches_reference(void **state)
{
    (void)state;
    rng r = {31337};
    char text[600], b1[601], b2[601];
    size_t nonempty = 0;
    for (int i = 0; i < 100000; i++) {
        size_t n = 0;
        int parts = below(&r, 7);
        for (int p = 0; p < parts; p++) {
            const char *piece = clean_pieces[below(&r, (int)MFU__ARRAY_LEN(clean_pieces))];
            size_t k = strlen(piece);
            if (n + k >= sizeof text)
                break;
            memcpy(text + n, piece, k);
            n += k;
        }
        for (int t = below(&r, 40); t > 0 && n < sizeof text; t--)
            text[n++] = (char)(' ' + below(&r, 95));
        mfu__line got, want;
        mfu__clean_line(text, n, i, b1, &got);
        ref_clean_line(text, n, i, b2, &want);
        if (got.len != want.len || memcmp(got.text, want.text, got.len + 1) != 0 ||
            got.raw_len != want.raw_len || memcmp(got.raw, want.raw, got.raw_len + 1) != 0 ||
            got.rank != want.rank || got.lineno != want.lineno ||
            !(same_bits(got.prefix_time_s, want.prefix_time_s)))
            fail_msg("cleaning '%.*s': got '%s' (rank %d), want '%s' (rank %d)", (int)n, text,
                     got.text, got.rank, want.text, want.rank);
        nonempty += got.len > 0;
    }
    assert_true(nonempty > 50000);
}

/* ---- Megatron step lines: the hot loop vs the generic helpers -------------------------------- */

/* The step line as fmt_megatron.c read it before its hot loop: mfu__split_next on "|",
 * mfu__kv on ": ", the keys compared one by one, every value parsed. Returns false for a line
 * the format skips (no elapsed time). The step is normalised as mfu__emit does. */
static bool ref_megatron_step(const char *text, mfu_step *out)
{
    mfu_step s;
    mfu_step_init(&s);
    mfu__span rest = mfu__span_of(text), piece;
    mfu__split_next(&rest, "|", &piece);
    if (!ref_megatron_pieces(rest, &s))
        return false;
    *out = s;
    return true;
}

static const char *const meg_keys[] = {"elapsed time per iteration (ms)",
                                       "throughput per GPU (TFLOP/s/GPU)",
                                       "TFLOPs",
                                       "tokens per gpu per second (tgs)",
                                       "samples per second",
                                       "actual seqlen",
                                       "learning rate",
                                       "global batch size",
                                       "grad norm",
                                       "number of skipped iterations",
                                       "number of nan iterations",
                                       "lm loss",
                                       "mtp loss",
                                       "load balancing loss",
                                       "consumed samples",
                                       "loss scale",
                                       "lm  loss",
                                       "Lm loss",
                                       "elapsed time per iteration",
                                       "x"};
static const char *const meg_values[] = {"912.3",
                                         "1.062389E+01",
                                         "6.976744E-07",
                                         "0",
                                         "-0",
                                         "3",
                                         "nan",
                                         "-nan",
                                         "inf",
                                         "-inf",
                                         "N/A",
                                         "-",
                                         "1,024",
                                         "12.5 ms",
                                         "'3.41'",
                                         "abc",
                                         "1e400",
                                         "1e-400",
                                         "123456789012345678901",
                                         "0.30000000000000004",
                                         "   7   ",
                                         "5 GiB",
                                         "",
                                         "13.99%",
                                         "+4.5e+2",
                                         ".5",
                                         "5.",
                                         "1e",
                                         "2x"};

static void megatron_hot_loop_matches_helpers(void **state)
{
    (void)state;
    rng r = {8080};
    enum { LINES = 4000 };
    size_t cap = (size_t)LINES * 700;
    char *log = malloc(cap), *line = malloc(700);
    char(*texts)[700] = malloc((size_t)LINES * 700);
    assert_non_null(log);
    assert_non_null(line);
    assert_non_null(texts);
    size_t n = 0;
    for (int i = 0; i < LINES; i++) {
        size_t k = (size_t)snprintf(line, 700, "iteration %8d/ 1000000 |", i + 1);
        int pieces = below(&r, 14);
        for (int p = 0; p < pieces && k < 560; p++) {
            const char *key = meg_keys[below(&r, (int)MFU__ARRAY_LEN(meg_keys))];
            const char *val = meg_values[below(&r, (int)MFU__ARRAY_LEN(meg_values))];
            static const char *const seps[] = {": ", ":  ", ":", " : ", ": :", ""};
            const char *sep = below(&r, 5) ? seps[0] : seps[below(&r, 6)];
            k += (size_t)snprintf(line + k, 700 - k, "%s%s%s%s|", below(&r, 3) ? " " : "", key, sep,
                                  val);
        }
        if (below(&r, 2)) /* usually the real elapsed time too */
            k += (size_t)snprintf(line + k, 700 - k, " elapsed time per iteration (ms): %d.%d |",
                                  below(&r, 100000), below(&r, 10));
        if (below(&r, 4) == 0 && k > 0)
            k--; /* no closing bar */
        memcpy(texts[i], line, k + 1);
        memcpy(log + n, line, k);
        n += k;
        log[n++] = '\n';
    }
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = "megatron";
    mfu_ingest *ing = NULL;
    mfu_error e;
    assert_int_equal(mfu_ingest_new(&o, &ing, &e), MFU_OK);
    assert_int_equal(mfu_ingest_feed_buffer(ing, log, n, "fuzz", &e), MFU_OK);
    mfu_run *run = NULL;
    assert_int_equal(mfu_ingest_finish(ing, &run, &e), MFU_OK);
    size_t row = 0;
    for (int i = 0; i < LINES; i++) {
        mfu__line ln;
        char clean[701];
        mfu__clean_line(texts[i], strlen(texts[i]), i + 1, clean, &ln);
        mfu_step want, got;
        if (!ref_megatron_step(ln.text, &want) || mfu__step_plausible(&want, &want, NULL) != MFU_OK)
            continue; /* not a step line, or one mfu_run_append refuses */
        if (!mfu_run_get(run, row++, &got))
            fail_msg("line %d: no row", i + 1);
        if (got.step != i + 1)
            fail_msg("line %d: the row is of step %lld: %s", i + 1, (long long)got.step, texts[i]);
        const double w[] = {want.step_time_s,  want.tokens,      want.samples,
                            want.loss,         want.lr,          want.grad_norm,
                            want.tokens_per_s, want.flops_per_s, want.samples_per_s};
        const double g[] = {got.step_time_s,  got.tokens,      got.samples,
                            got.loss,         got.lr,          got.grad_norm,
                            got.tokens_per_s, got.flops_per_s, got.samples_per_s};
        for (size_t f = 0; f < MFU__ARRAY_LEN(w); f++)
            if (!same_bits(w[f], g[f]) && !(isnan(w[f]) && isnan(g[f])))
                fail_msg("line %d field %zu: %.17g, helpers %.17g: %s", i + 1, f, g[f], w[f],
                         texts[i]);
        assert_int_equal(got.flags, want.flags);
        assert_int_equal(got.flops_per_s_scope, want.flops_per_s_scope);
        assert_int_equal(got.tokens_per_s_scope, want.tokens_per_s_scope);
        assert_int_equal(got.samples_per_s_scope, want.samples_per_s_scope);
    }
    assert_int_equal(row, mfu_run_count(run));
    assert_true(row > LINES / 3);
    mfu_run_free(run);
    mfu_ingest_free(ing);
    free(texts);
    free(line);
    free(log);
}

/* ---- the fast JSON reader vs jansson ------------------------------------------------------- */

static const char *const json_keys[] = {
    "step",   "loss",   "lr", "iter", "train.loss", "train/loss", "step_time_s",
    "tokens", "time_s", "",   "a b",  "k\\u00e9",   "k\\\"q",     "\xc3\xa9t\xc3\xa9",
    "mfu",    "rank",   "x"};
static const char *const json_values[] = {
    "0",
    "-0",
    "1",
    "-1",
    "10050",
    "01",
    "-01",
    "1.",
    ".5",
    "+1",
    "1e",
    "1e+",
    "1e5",
    "1E-5",
    "-0.0",
    "0e999",
    "1e400",
    "-1e400",
    "1e-400",
    "4.9e-324",
    "123456789012345678",
    "1234567890123456789",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "0.30000000000000004",
    "2.5",
    "3e-4",
    "\"3e-4\"",
    "\"250 ms\"",
    "\"2024-01-01 00:00:10\"",
    "\"a\\nb\"",
    "\"\xc2\xb5s\"",
    "\"\\u0000\"",
    "\"tab\there\"",
    "true",
    "false",
    "null",
    "truex",
    "nul",
    "NaN",
    "-Infinity",
    "Infinity",
    "[]",
    "[1, 2.5, \"x\"]",
    "[1,]",
    "{}",
    "{\"a\": {\"b\": 1}}",
    "{\"loss\": 1.5}",
    "{\"a\" 1}",
    "[[[[[[[[[[1]]]]]]]]]]",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    "\"",
    "-",
    "--1",
    "1x",
    "0x10",
    "1 2"};

/* Values that are valid JSON, for lines that should mostly parse. */
static const char *const json_good_values[] = {"0",
                                               "-0",
                                               "7",
                                               "-12",
                                               "10050",
                                               "1e5",
                                               "1E-5",
                                               "-0.0",
                                               "2.5",
                                               "3e-4",
                                               "0.30000000000000004",
                                               "1234567890123456789",
                                               "1e-400",
                                               "\"3e-4\"",
                                               "\"250 ms\"",
                                               "\"2024-01-01 00:00:10\"",
                                               "\"a\\nb\"",
                                               "\"13.99%\"",
                                               "\"nan\"",
                                               "\"N/A\"",
                                               "true",
                                               "null",
                                               "[1, 2.5]",
                                               "{\"loss\": 1.5}",
                                               "912.3",
                                               "6.976744E-07",
                                               "71202000000",
                                               "1048576",
                                               "\"x\""};

static void random_json_opt(rng *r, char *buf, size_t n, bool good)
{
    size_t k = 0;
    if (below(r, 8) == 0)
        buf[k++] = ' ';
    buf[k++] = '{';
    int members = below(r, 10);
    static const char *const ws[] = {"", " ", "  ", "\t"};
    for (int i = 0; i < members && k + 200 < n; i++) {
        if (i)
            k += (size_t)snprintf(buf + k, n - k, "%s,%s", ws[below(r, 4)], ws[below(r, 4)]);
        const char *key = json_keys[below(r, (int)MFU__ARRAY_LEN(json_keys))];
        const char *val;
        char num[64];
        if (good) {
            val = json_good_values[below(r, (int)MFU__ARRAY_LEN(json_good_values))];
        } else if (below(r, 3) == 0) {
            random_decimal(r, num, sizeof num);
            val = num;
        } else {
            val = json_values[below(r, (int)MFU__ARRAY_LEN(json_values))];
        }
        k += (size_t)snprintf(buf + k, n - k, "\"%s\"%s:%s%s", key, ws[below(r, 4)],
                              ws[below(r, 4)], val);
    }
    int tail = good ? 3 : below(r, 20);
    k += (size_t)snprintf(buf + k, n - k, "%s",
                          tail == 0   ? ",}"
                          : tail == 1 ? "} x"
                          : tail == 2 ? ""
                                      : "}");
    if (below(r, 8) == 0 && k + 2 < n)
        buf[k++] = ' ';
    buf[k] = '\0';
}

static void random_json(rng *r, char *buf, size_t n)
{
    random_json_opt(r, buf, n, below(r, 2));
}

static void jflat_matches_jansson(void **state)
{
    (void)state;
    rng r = {5150};
    char line[4096];
    long accepted = 0, valid = 0;
    for (int i = 0; i < 60000; i++) {
        random_json(&r, line, sizeof line);
        size_t len = strlen(line);
        mfu__jflat o;
        bool fast = mfu__jflat_parse(line, len, &o);
        json_error_t je;
        json_t *root = json_loadb(line, len, 0, &je);
        valid += root != NULL;
        if (fast && !root)
            fail_msg("fast reader accepted what jansson rejects (%s): %s", je.text, line);
        if (!fast) {
            json_decref(root);
            continue;
        }
        accepted++;
        assert_true(json_is_object(root));
        /* every jansson member is the fast reader's last member of that key, same value */
        const char *key;
        json_t *v;
        size_t distinct = 0;
        json_object_foreach(root, key, v)
        {
            distinct++;
            const mfu__jmember *m = mfu__jflat_get(&o, key, strlen(key));
            if (!m)
                fail_msg("key '%s' missing: %s", key, line);
            switch (m->type) {
            case MFU__J_INT:
                assert_true(json_is_integer(v));
                assert_int_equal(m->ival, json_integer_value(v));
                assert_true(same_bits(m->num, json_number_value(v)));
                break;
            case MFU__J_REAL:
                assert_true(json_is_real(v));
                if (!same_bits(m->num, json_real_value(v)))
                    fail_msg("'%s': %.17g, jansson %.17g: %s", key, m->num, json_real_value(v),
                             line);
                break;
            case MFU__J_STRING:
                assert_true(json_is_string(v));
                assert_int_equal(m->str_len, json_string_length(v));
                assert_memory_equal(m->str, json_string_value(v), m->str_len);
                break;
            case MFU__J_TRUE: assert_true(json_is_true(v)); break;
            case MFU__J_FALSE: assert_true(json_is_false(v)); break;
            case MFU__J_NULL: assert_true(json_is_null(v)); break;
            case MFU__J_OBJECT: assert_true(json_is_object(v)); break;
            case MFU__J_ARRAY: assert_true(json_is_array(v)); break;
            }
        }
        /* and the fast reader has no key jansson lacks */
        for (size_t j = 0; j < o.n; j++) {
            char k[64];
            snprintf(k, sizeof k, "%.*s", (int)o.m[j].key_len, o.m[j].key);
            assert_non_null(json_object_get(root, k));
        }
        assert_true(distinct <= o.n);
        json_decref(root);
    }
    /* the corpus exercises both sides, and most valid lines take the fast path */
    assert_true(accepted > 8000);
    assert_true(valid > accepted);
}

/* One generic-jsonl session over text; the rows it gives (NULL when ingest fails). */
static mfu_run *jsonl_session(const char *text, mfu_status *st)
{
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = "jsonl";
    o.max_line_bytes = 8192; /* small buffers: thousands of sessions, fast under ASan too */
    mfu_run *run = NULL;
    mfu_error e;
    *st = ingest_buffer_opts(text, strlen(text), &o, &run, NULL, &e);
    return run;
}

/* A line of the generic jsonl format read through the fast reader gives the row jansson's
 * path gives: the first object of a session always takes jansson's path (it names the keys
 * for messages), so each line is read once alone (jansson) and once after a first object
 * (the fast path when it accepts). */
static void jsonl_fast_path_matches_jansson_path(void **state)
{
    (void)state;
    rng r = {6502};
    char line[4096], two[4200];
    long rows = 0;
    for (int i = 0; i < 3000; i++) {
        random_json(&r, line, sizeof line);
        if (below(&r, 2)) { /* most lines of a real log have a step */
            char *brace = strchr(line, '{');
            char rest[4096];
            snprintf(rest, sizeof rest, "%s", brace + 1);
            snprintf(brace, sizeof line - (size_t)(brace - line), "{\"step\": %d,%s", i, rest);
        }
        snprintf(two, sizeof two, "{\"step\": 9000000000000000}\n%s\n", line);
        char one[4200];
        snprintf(one, sizeof one, "%s\n", line);
        mfu_status sa, sb;
        mfu_run *a = jsonl_session(one, &sa);
        mfu_run *b = jsonl_session(two, &sb);
        assert_int_equal(sb, MFU_OK);
        size_t na = a ? mfu_run_count(a) : 0;
        assert_int_equal(mfu_run_count(b), na + 1);
        if (na) {
            mfu_step x, y;
            assert_true(mfu_run_get(a, 0, &x));
            assert_true(mfu_run_get(b, 1, &y));
            if (!same_step(&x, &y))
                fail_msg("rows differ for: %s", line);
            rows++;
        }
        mfu_run_free(a);
        mfu_run_free(b);
    }
    assert_true(rows > 300);
}

/* ---- the canonical reader: fast path vs jansson ------------------------------------------- */

static bool ref_num(json_t *o, const char *k, double *out)
{
    json_t *v = json_object_get(o, k);
    if (!v || json_is_null(v))
        return true;
    if (!json_is_number(v))
        return false;
    *out = json_number_value(v);
    return true;
}

static bool ref_scope(json_t *o, const char *k, mfu_scope *out)
{
    json_t *v = json_object_get(o, k);
    if (!v)
        return true;
    const char *s = json_string_value(v);
    if (!s)
        return false;
    if (strcmp(s, "device") == 0)
        *out = MFU_SCOPE_DEVICE;
    else if (strcmp(s, "global") == 0)
        *out = MFU_SCOPE_GLOBAL;
    else if (strcmp(s, "unknown") == 0)
        *out = MFU_SCOPE_UNKNOWN;
    else
        return false;
    return true;
}

/* A canonical step object as fmt_mfu.c reads it with jansson; false when it gives no row. */
static bool ref_canonical_step(const char *line, mfu_step *out)
{
    json_error_t je;
    json_t *o = json_loads(line, 0, &je);
    if (!o)
        return false;
    json_t *jstep = json_object_get(o, "step");
    bool ok = json_is_integer(jstep);
    mfu_step s;
    mfu_step_init(&s);
    if (ok) {
        s.step = (int64_t)json_integer_value(jstep);
        json_t *jr = json_object_get(o, "rank");
        ok = ref_num(o, "time_s", &s.time_s) && ref_num(o, "step_time_s", &s.step_time_s) &&
             ref_num(o, "tokens", &s.tokens) && ref_num(o, "samples", &s.samples) &&
             ref_num(o, "loss", &s.loss) && ref_num(o, "lr", &s.lr) &&
             ref_num(o, "grad_norm", &s.grad_norm) && ref_num(o, "memory_bytes", &s.memory_bytes) &&
             ref_num(o, "tokens_per_s", &s.tokens_per_s) &&
             ref_scope(o, "tokens_per_s_scope", &s.tokens_per_s_scope) &&
             ref_num(o, "flops_per_s", &s.flops_per_s) &&
             ref_scope(o, "flops_per_s_scope", &s.flops_per_s_scope) && ref_num(o, "mfu", &s.mfu) &&
             ref_scope(o, "mfu_scope", &s.mfu_scope) &&
             ref_num(o, "samples_per_s", &s.samples_per_s) &&
             ref_scope(o, "samples_per_s_scope", &s.samples_per_s_scope) &&
             (!jr || json_is_integer(jr));
        if (ok && jr && json_integer_value(jr) >= 0 && json_integer_value(jr) <= INT32_MAX)
            s.rank = (int32_t)json_integer_value(jr);
        static const struct {
            const char *k;
            uint32_t bit;
        } flags[] = {{"skipped", MFU_STEP_SKIPPED},
                     {"loss_nan", MFU_STEP_LOSS_NAN},
                     {"mfu_sentinel", MFU_STEP_MFU_SENTINEL},
                     {"tokens_derived", MFU_STEP_TOKENS_DERIVED}};
        for (size_t i = 0; i < MFU__ARRAY_LEN(flags); i++)
            if (json_is_true(json_object_get(o, flags[i].k)))
                s.flags |= flags[i].bit;
    }
    json_decref(o);
    *out = s;
    return ok;
}

static const char *const canon_keys[] = {"step",
                                         "time_s",
                                         "step_time_s",
                                         "tokens",
                                         "samples",
                                         "loss",
                                         "lr",
                                         "grad_norm",
                                         "memory_bytes",
                                         "tokens_per_s",
                                         "tokens_per_s_scope",
                                         "flops_per_s",
                                         "flops_per_s_scope",
                                         "mfu",
                                         "mfu_scope",
                                         "samples_per_s",
                                         "samples_per_s_scope",
                                         "rank",
                                         "skipped",
                                         "loss_nan",
                                         "mfu_sentinel",
                                         "tokens_derived",
                                         "future_key",
                                         "ste",
                                         "steps",
                                         "Step"};
static const char *const canon_values[] = {
    "1",          "-3",     "0",          "2147483648",          "-1",
    "12.5",       "1e3",    "-0.0",       "0.30000000000000004", "null",
    "true",       "false",  "\"device\"", "\"global\"",          "\"unknown\"",
    "\"Device\"", "\"\"",   "[1]",        "{\"a\": 1}",          "802600000000000",
    "15.2106",    "1e-400", "7.2e-05"};

static void canonical_fast_path_matches_jansson(void **state)
{
    (void)state;
    rng r = {1984};
    char line[2048], text[2200];
    long rows = 0;
    for (int i = 0; i < 4000; i++) {
        size_t k = (size_t)snprintf(line, sizeof line, "{\"step\":%d", i);
        int members = below(&r, 12);
        for (int m = 0; m < members; m++)
            k += (size_t)snprintf(line + k, sizeof line - k, ",\"%s\":%s",
                                  canon_keys[below(&r, (int)MFU__ARRAY_LEN(canon_keys))],
                                  canon_values[below(&r, (int)MFU__ARRAY_LEN(canon_values))]);
        snprintf(line + k, sizeof line - k, "}");
        snprintf(text, sizeof text, "{\"mfu_run\":1,\"format\":\"megatron\"}\n%s\n", line);
        mfu_step want;
        /* a step mfu_run_append refuses is skipped like one the reader refuses */
        bool has =
            ref_canonical_step(line, &want) && mfu__step_plausible(&want, &want, NULL) == MFU_OK;
        mfu_ingest_opts o;
        memset(&o, 0, sizeof o);
        o.format = "mfu";
        o.max_line_bytes = 8192;
        mfu_run *run = NULL;
        mfu_error e;
        mfu_status st = ingest_buffer_opts(text, strlen(text), &o, &run, NULL, &e);
        if (!has) {
            assert_int_equal(st, MFU_E_EMPTY); /* the line was skipped */
            continue;
        }
        assert_int_equal(st, MFU_OK);
        mfu_step got;
        assert_true(mfu_run_get(run, 0, &got));
        if (!same_step(&got, &want))
            fail_msg("rows differ for: %s", line);
        rows++;
        mfu_run_free(run);
    }
    assert_true(rows > 400);
}

/* ---- the canonical writer: random runs survive write -> read bit for bit ------------------- */

static double random_value(rng *r)
{
    switch (below(r, 6)) {
    case 0: return NAN; /* absent */
    case 1: {           /* any finite double */
        double v;
        do {
            uint64_t b = next(r);
            memcpy(&v, &b, sizeof v);
        } while (!isfinite(v));
        return v;
    }
    case 2: return (double)below(r, 1000000) / 1e4; /* short decimals */
    case 3: return (below(r, 2) ? -1 : 1) * (double)(next(r) >> 11);
    case 4: return 2.0 / (1 + below(r, 1000)); /* 16-17 digits */
    default: return (double)below(r, 100000) * 1024.0 * 1024.0;
    }
}

static void writer_round_trip_random(void **state)
{
    (void)state;
    rng r = {777777};
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    mfu_run_meta *m = mfu_run_meta_mut(run);
    snprintf(m->format, sizeof m->format, "megatron");
    snprintf(m->model, sizeof m->model, "quote \" backslash \\ tab \t bell \x07 end");
    m->model_params = 6.7e9;
    for (int i = 0; i < 5000; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = i == 0 ? MFU__RUN_MAX_STEP_NUMBER : i;
        double *d[] = {&s.time_s,       &s.step_time_s, &s.tokens,    &s.samples,
                       &s.loss,         &s.lr,          &s.grad_norm, &s.memory_bytes,
                       &s.tokens_per_s, &s.flops_per_s, &s.mfu,       &s.samples_per_s};
        for (size_t k = 0; k < MFU__ARRAY_LEN(d); k++)
            *d[k] = random_value(&r);
        s.tokens_per_s_scope = (mfu_scope)below(&r, 3);
        s.flops_per_s_scope = (mfu_scope)below(&r, 3);
        s.mfu_scope = (mfu_scope)below(&r, 3);
        s.samples_per_s_scope = (mfu_scope)below(&r, 3);
        s.flags = (uint32_t)below(&r, 16);
        s.rank = below(&r, 3) - 1;
        if (mfu__step_plausible(&s, &s, NULL) != MFU_OK)
            continue; /* random values mfu_run_append refuses (a negative count) */
        assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(mfu_run_write_jsonl(run, f, NULL), MFU_OK);
    fclose(f);
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    mfu_run *back = NULL;
    mfu_error e;
    mfu_status st = ingest_buffer_opts(text, len, &o, &back, NULL, &e);
    if (st != MFU_OK)
        fail_msg("reading back: %s", e.message);
    assert_int_equal(mfu_run_count(back), mfu_run_count(run));
    for (size_t i = 0; i < mfu_run_count(run); i++) {
        mfu_step x, y;
        assert_true(mfu_run_get(run, i, &x));
        assert_true(mfu_run_get(back, i, &y));
        if (!same_step(&x, &y))
            fail_msg("row %zu differs after the round trip", i);
    }
    assert_string_equal(mfu_run_meta_get(back)->model, m->model);
    /* the text is the snprintf loop's: every number as the first %.15g..%.17g that reads back */
    assert_non_null(strstr(text, "\"model_params\":6700000000,"));
    mfu_run_free(back);
    mfu_run_free(run);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clinger_cases_are_exact),
        cmocka_unit_test(decimal_corpus_matches_strtod),
        cmocka_unit_test(dec_scan_matches_general_reader),
        cmocka_unit_test(units_match_strtod),
        cmocka_unit_test(shortest_matches_snprintf),
        cmocka_unit_test(shortest_wide_matches_snprintf),
        cmocka_unit_test(control_bytes),
        cmocka_unit_test(reader_matches_contract),
        cmocka_unit_test(cleaner_matches_reference),
        cmocka_unit_test(megatron_hot_loop_matches_helpers),
        cmocka_unit_test(jflat_matches_jansson),
        cmocka_unit_test(jsonl_fast_path_matches_jansson_path),
        cmocka_unit_test(canonical_fast_path_matches_jansson),
        cmocka_unit_test(writer_round_trip_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
