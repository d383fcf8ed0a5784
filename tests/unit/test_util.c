/*
 * test_util.c - unit tests of src/util: strict number parsing, bounded strings, errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static void parse_double_strict(void **state)
{
    (void)state;
    double v = -1;
    assert_true(mfu__parse_double("  4096 ", &v));
    assert_true(v == 4096.0);
    assert_true(mfu__parse_double("1.5e3", &v));
    assert_true(v == 1500.0);
    v = 7;
    assert_false(mfu__parse_double("12abc", &v));
    assert_false(mfu__parse_double("", &v));
    assert_false(mfu__parse_double("nan", &v));
    assert_false(mfu__parse_double("inf", &v));
    assert_false(mfu__parse_double("1e999", &v));
    assert_false(mfu__parse_double(NULL, &v));
    assert_true(v == 7.0); /* untouched on failure */
}

static void parse_int64_strict(void **state)
{
    (void)state;
    int64_t v = 0;
    assert_true(mfu__parse_int64("-32", &v));
    assert_int_equal(v, -32);
    assert_false(mfu__parse_int64("3.5", &v));
    assert_false(mfu__parse_int64("99999999999999999999", &v));
    assert_false(mfu__parse_int64("0x10", &v));
    assert_int_equal(v, -32);
}

static void strlcpy_truncates_and_terminates(void **state)
{
    (void)state;
    char buf[4];
    assert_int_equal(mfu__strlcpy(buf, "abcdef", sizeof buf), 6);
    assert_string_equal(buf, "abc");
    assert_true(mfu__appendf(buf, sizeof buf, "%s", ""));
    char b2[8] = "ab";
    assert_true(mfu__appendf(b2, sizeof b2, "%d", 12));
    assert_string_equal(b2, "ab12");
    assert_false(mfu__appendf(b2, sizeof b2, "%s", "xyzw"));
    assert_string_equal(b2, "ab12xyz");
}

static void case_insensitive(void **state)
{
    (void)state;
    assert_int_equal(mfu__strcasecmp("NVIDIA H100", "nvidia h100"), 0);
    assert_true(mfu__strcasecmp("a", "b") < 0);
    assert_non_null(mfu__strcasestr("NVIDIA H100 80GB HBM3", "hbm3"));
    assert_null(mfu__strcasestr("NVIDIA H100", "h200"));
}

static void edit_distance_and_did_you_mean(void **state)
{
    (void)state;
    assert_int_equal(mfu__edit_distance("", ""), 0);
    assert_int_equal(mfu__edit_distance("model", "MODEL"), 0);
    assert_int_equal(mfu__edit_distance("modle", "model"), 1); /* a swap is one edit */
    assert_int_equal(mfu__edit_distance("kitten", "sitting"), 3);
    assert_int_equal(mfu__edit_distance("", "abc"), 3);
    char big[MFU__EDIT_DISTANCE_MAX + 2];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_true(mfu__edit_distance(big, "a") == SIZE_MAX); /* the named limit */
    big[MFU__EDIT_DISTANCE_MAX] = '\0';
    assert_int_equal(mfu__edit_distance(big, big), 0);

    const char *names[] = {"llama3-8b", "llama3-70b", NULL,           "llama3-405b",
                           "gpt2",      "qwen3-8b",   "qwen3-30b-a3b"};
    size_t n = sizeof names / sizeof names[0];
    char buf[128];
    assert_int_equal(mfu__did_you_mean("llama-3-70b", names, n, buf, sizeof buf), 1);
    assert_string_equal(buf, "llama3-70b");
    assert_int_equal(mfu__did_you_mean("llama3", names, n, buf, sizeof buf), 3);
    assert_string_equal(buf, "llama3-8b, llama3-70b or llama3-405b");
    assert_int_equal(mfu__did_you_mean("qwen3-30b", names, n, buf, sizeof buf), 1);
    assert_string_equal(buf, "qwen3-30b-a3b");
    assert_int_equal(mfu__did_you_mean("GPT-2", names, n, buf, sizeof buf), 1);
    assert_string_equal(buf, "gpt2");
    assert_int_equal(mfu__did_you_mean("bert", names, n, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    /* a buffer too small is cut, never overrun */
    char tiny[6];
    assert_int_equal(mfu__did_you_mean("llama3", names, n, tiny, sizeof tiny), 3);
    assert_int_equal(strlen(tiny), 5);
    assert_int_equal(mfu__did_you_mean(NULL, names, n, buf, sizeof buf), 0);
}

static void fail_fills_error(void **state)
{
    (void)state;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu__fail(&e, MFU_E_PARSE, 12, "expected %s", "a number"), MFU_E_PARSE);
    assert_int_equal(e.code, MFU_E_PARSE);
    assert_int_equal(e.line, 12);
    assert_string_equal(e.message, "expected a number");
    assert_int_equal(mfu__fail_field(&e, MFU_E_MISSING, "num_hidden_layers", "missing"),
                     MFU_E_MISSING);
    assert_string_equal(e.field, "num_hidden_layers");
    assert_int_equal(e.line, 0);
    /* NULL error is allowed */
    assert_int_equal(mfu__fail(NULL, MFU_E_IO, 0, "x"), MFU_E_IO);
    assert_string_equal(mfu_strerror(MFU_E_LIMIT), "size limit exceeded");
}

/* A double out of int64_t's range saturates instead of an undefined cast (a fuzzed Megatron
 * line printed "global batch size: 10888888888888888824"). */
static void int64_saturates(void **state)
{
    (void)state;
    assert_true(mfu__int64_sat(1.0888888888888889e19) == INT64_MAX);
    assert_true(mfu__int64_sat(-1e300) == INT64_MIN);
    assert_true(mfu__int64_sat(9223372036854775807.0) == INT64_MAX); /* 2^63 */
    assert_true(mfu__int64_sat(NAN) == 0);
    assert_true(mfu__int64_sat(-2.9) == -2);
    assert_true(mfu__int64_sat(4096.0) == 4096);
}

/* One SI formatter for FLOP/s: three significant digits, the prefix chosen after rounding
 * (a carry moves to the next decade or prefix), zero, negatives, NaN and infinities. */
static void si_format(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {312e12, "312 TFLOP/s"},
        {1.234e15, "1.23 PFLOP/s"},
        {45.6e9, "45.6 GFLOP/s"},
        {820e6, "820 MFLOP/s"},
        {3.2e9, "3.20 GFLOP/s"},
        {1e12, "1.00 TFLOP/s"},
        {999.4e12, "999 TFLOP/s"},
        {999.96e12, "1.00 PFLOP/s"}, /* rounding carries into the next prefix */
        {999.5e9, "1.00 TFLOP/s"},
        {9.996e9, "10.0 GFLOP/s"}, /* ... into the next decade */
        {99.96e9, "100 GFLOP/s"},
        {9.994e9, "9.99 GFLOP/s"},
        {1000, "1.00 kFLOP/s"},
        {999, "999 FLOP/s"},
        {1, "1.00 FLOP/s"},
        {0.5, "0.5 FLOP/s"},
        {0, "0 FLOP/s"},
        {-2.5e12, "-2.50 TFLOP/s"},
        {-999.96e12, "-1.00 PFLOP/s"},
        {5e21, "5000 EFLOP/s"}, /* past the last prefix */
        {NAN, "-"},
        {INFINITY, "inf FLOP/s"},
        {-INFINITY, "-inf FLOP/s"},
    };
    for (size_t i = 0; i < MFU__ARRAY_LEN(cases); i++) {
        char buf[32];
        size_t len = mfu__fmt_si(buf, sizeof buf, cases[i].v, "FLOP/s");
        assert_string_equal(buf, cases[i].want);
        assert_int_equal(len, strlen(cases[i].want));
    }
    char buf[32];
    mfu__fmt_si(buf, sizeof buf, 1.5e9, "");
    assert_string_equal(buf, "1.50 G"); /* no unit: the prefix alone */
    mfu__fmt_si(buf, sizeof buf, 12, NULL);
    assert_string_equal(buf, "12.0");
    mfu__fmt_si_digits(buf, sizeof buf, 989.5e12, "FLOP/s", 4);
    assert_string_equal(buf, "989.5 TFLOP/s");
    mfu__fmt_si_digits(buf, sizeof buf, 999.94e12, "FLOP/s", 4);
    assert_string_equal(buf, "999.9 TFLOP/s");
    mfu__fmt_si_digits(buf, sizeof buf, 999.96e12, "FLOP/s", 4);
    assert_string_equal(buf, "1.000 PFLOP/s");
    mfu__fmt_si_digits(buf, sizeof buf, 99.996e9, "FLOP/s", 4);
    assert_string_equal(buf, "100.0 GFLOP/s");
    mfu__fmt_si_digits(buf, sizeof buf, 614.4e9, "FLOP/s", 4);
    assert_string_equal(buf, "614.4 GFLOP/s");
    mfu__fmt_si(buf, 6, 312e12, "FLOP/s"); /* truncated, terminated */
    assert_string_equal(buf, "312 T");
    /* the %g-like form: trailing zeros dropped, the same carry rule */
    static const struct {
        double v;
        const char *unit, *want;
    } g[] = {
        {500e9, "FLOP", "500 GFLOP"},
        {51.47e9, "FLOP", "51.47 GFLOP"},
        {1.5e3, "B", "1.5 kB"},
        {999.96e12, "FLOP", "1 PFLOP"},
        {999.94e12, "FLOP", "999.9 TFLOP"},
        {12.5, "", "12.5"},
        {1.2e6, "", "1.2 M"},
        {1, "J", "1 J"},
        {0.25, "J", "0.25 J"},
        {-2.0e9, "FLOP", "-2 GFLOP"},
        {0, "B", "0 B"},
        {NAN, "J", "-"},
    };
    for (size_t i = 0; i < MFU__ARRAY_LEN(g); i++) {
        size_t len = mfu__fmt_si_g(buf, sizeof buf, g[i].v, g[i].unit, 4);
        assert_string_equal(buf, g[i].want);
        assert_int_equal(len, strlen(g[i].want));
    }
}

static int cmp_dbl(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static uint64_t sel_rng = 12345;

static double sel_uni(void)
{
    sel_rng = sel_rng * 6364136223846793005u + 1442695040888963407u;
    return (double)(sel_rng >> 11) * 0x1.0p-53;
}

/* x[0..n) of kind: 0 random, 1 few values (ties), 2 sorted, 3 reversed, 4 constant, 5 levels
 * that change every 2000 (a time series with shifts), 6 organ pipe, 7 two values. */
static void sel_fill(double *x, size_t n, int kind)
{
    for (size_t i = 0; i < n; i++) {
        double u = sel_uni();
        switch (kind) {
        case 0: x[i] = u; break;
        case 1: x[i] = floor(u * 7); break;
        case 2: x[i] = (double)i; break;
        case 3: x[i] = (double)(n - i); break;
        case 4: x[i] = 3.5; break;
        case 5: x[i] = ((i / 2000) % 2 ? 1.12 : 1.0) + 0.01 * round(u * 40); break;
        case 6: x[i] = (double)(i < n / 2 ? i : n - i); break;
        default: x[i] = u < 0.3 ? -1.0 : 2.0; break;
        }
    }
}

/* mfu__select_kth returns the k-th order statistic and leaves v partitioned about it, on sizes
 * on either side of the sampled path's threshold and on inputs that defeat naive pivots. */
static void select_kth_partitions(void **state)
{
    (void)state;
    static const size_t sizes[] = {1, 2, 3, 10, 255, 256, 257, 1000, 4097, 30000, 200000};
    enum { NMAX = 200000 };
    double *x = malloc(NMAX * sizeof *x), *v = malloc(NMAX * sizeof *v),
           *sorted = malloc(NMAX * sizeof *sorted);
    assert_non_null(x);
    assert_non_null(v);
    assert_non_null(sorted);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        for (int kind = 0; kind < 8; kind++) {
            sel_fill(x, n, kind);
            memcpy(sorted, x, n * sizeof *x);
            qsort(sorted, n, sizeof *sorted, cmp_dbl);
            size_t ks[] = {0,
                           n / 10,
                           n / 2,
                           (n - 1) / 2,
                           n - 1 - n / 10,
                           n - 1,
                           (size_t)(sel_uni() * (double)n)};
            for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++) {
                size_t k = ks[q] < n ? ks[q] : n - 1;
                memcpy(v, x, n * sizeof *x);
                double got = mfu__select_kth(v, n, k);
                assert_true(got == sorted[k]);
                assert_true(v[k] == got);
                for (size_t i = 0; i < n; i++)
                    assert_true(i < k ? v[i] <= got : i > k ? v[i] >= got : 1);
                /* the same values, only reordered */
                qsort(v, n, sizeof *v, cmp_dbl);
                assert_memory_equal(v, sorted, n * sizeof *v);
            }
            /* the quantiles built on it: type 7, as numpy.percentile */
            memcpy(v, x, n * sizeof *x);
            double pos = 0.9 * (double)(n - 1), f = pos - floor(pos);
            size_t j = (size_t)pos;
            double want = j + 1 < n ? sorted[j] + f * (sorted[j + 1] - sorted[j]) : sorted[j];
            if (f == 0)
                want = sorted[j];
            assert_true(mfu__quantile_inplace(v, n, 0.9) == want);
        }
    }
    free(x);
    free(v);
    free(sorted);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_double_strict),
        cmocka_unit_test(parse_int64_strict),
        cmocka_unit_test(strlcpy_truncates_and_terminates),
        cmocka_unit_test(case_insensitive),
        cmocka_unit_test(fail_fills_error),
        cmocka_unit_test(edit_distance_and_did_you_mean),
        cmocka_unit_test(int64_saturates),
        cmocka_unit_test(si_format),
        cmocka_unit_test(select_kth_partitions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
