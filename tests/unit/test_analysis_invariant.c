/*
 * test_analysis_invariant.c - `--expect` expressions: parse, evaluate against the steady
 * state, pass and fail with a message that says why, and clear errors for bad expressions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mfu/analysis.h"
#include "synth.h"

static const double WARMUP3[] = {5, 2, 1.2};

/* MFU 0.45 at 64 devices, then seq 1024 at MFU 0.414 (FLOPs per token change). */
static mfu_analysis *two_segment_run(bool with_flops)
{
    size_t n = 600;
    double mult[600];
    syn_noise nz = {0.02, 0.3, 0, 1, 1, WARMUP3, 3};
    syn_multipliers(3, n, &nz, mult);
    syn_phase ph[2] = {syn_default_phase(0, 0.45), syn_default_phase(300, 0.414)};
    ph[1].fpt = 1e10 / 1.36;
    ph[1].seq_len = 1024;
    ph[1].step_time_s = syn_step_time_for(&ph[1], 0.414);
    if (!with_flops)
        for (int q = 0; q < 2; q++)
            ph[q].fpt = ph[q].devices = ph[q].peak = NAN;
    mfu_series *s = syn_series(n, 1, ph, 2, mult, NULL);
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    o.intervals = false;
    mfu_analysis *a = NULL;
    assert_int_equal(mfu_analyze(s, &o, &a, NULL), MFU_OK);
    mfu_series_free(s);
    return a;
}

static mfu_invariant_result check(mfu_analysis *a, const char *expr)
{
    mfu_invariant_result r;
    mfu_error err = {0};
    if (mfu_analysis_expect(a, expr, &r, &err) != MFU_OK)
        fail_msg("'%s' did not parse: %s", expr, err.message);
    return r;
}

static void evaluate(void **state)
{
    (void)state;
    mfu_analysis *a = two_segment_run(true);
    double mfu = mfu_analysis_steady(a)->mfu.value;
    assert_true(mfu > 0.42 && mfu < 0.44);
    mfu_invariant_result r = check(a, "mfu>=0.40");
    assert_true(r.passed);
    assert_true(r.value == mfu && r.threshold == 0.40);
    assert_non_null(strstr(r.message, "level over steady steps 4..600"));
    r = check(a, "mfu >= 45%"); /* percent: 0.45 */
    assert_false(r.passed);
    assert_true(r.threshold == 0.45);
    assert_non_null(strstr(r.message, "violates >= 0.45"));
    assert_true(check(a, "hfu<0.9").passed);
    /* tokens/s: 3.16 M on this run */
    double tps = mfu_analysis_steady(a)->tokens_per_s.value;
    char expr[64];
    snprintf(expr, sizeof expr, "tokens_per_second>=%.6g", tps * 0.99);
    assert_true(check(a, expr).passed);
    snprintf(expr, sizeof expr, "tokens_per_s>=%.6g", tps * 1.01);
    assert_false(check(a, expr).passed);
    /* step_time_s is the median: the first half's 0.368 s and the second's 0.294 s */
    r = check(a, "step_time_s<=2.5");
    assert_true(r.passed);
    assert_true(r.value > 0.29 && r.value < 0.37);
    assert_non_null(strstr(r.message, "median of steady steps"));
    r = check(a, "step_time_s.max<0.3");
    assert_false(r.passed);
    assert_true(check(a, "step_time_s.p5 > 0.28").passed);
    /* The FLOPs per token changed: not constant. seq_len changed too; devices did not. */
    r = check(a, "flops_per_token=const");
    assert_false(r.passed);
    assert_non_null(strstr(r.message, "not constant"));
    assert_true(r.value < r.threshold);
    assert_true(check(a, "devices == const").passed);
    assert_true(check(a, "devices==64").passed);
    assert_true(check(a, "devices!=128").passed);
    assert_false(check(a, "seq_len=const").passed);
    assert_true(check(a, "seq_len.min == 1024").passed);
    assert_true(check(a, "padding_fraction<=0").passed);
    assert_true(check(a, "findings==1").passed); /* throughput up while MFU down */
    assert_true(mfu_analysis_invariant_count(a) == 16);
    assert_false(mfu_analysis_invariant(a, 1)->passed);
    assert_null(mfu_analysis_invariant(a, 16));
    /* Boundaries: >= passes at equality, > does not. */
    snprintf(expr, sizeof expr, "mfu>=%.17g", mfu);
    assert_true(check(a, expr).passed);
    snprintf(expr, sizeof expr, "mfu>%.17g", mfu);
    assert_false(check(a, expr).passed);
    mfu_analysis_free(a);

    /* Without FLOPs per token MFU is unknown: the invariant fails and says why. */
    a = two_segment_run(false);
    r = check(a, "mfu>=0.4");
    assert_false(r.passed);
    assert_true(isnan(r.value));
    assert_non_null(strstr(r.message, "unknown"));
    assert_true(check(a, "loss<1e9").passed == false); /* no loss column either */
    mfu_analysis_free(a);
}

static void bad_expressions(void **state)
{
    (void)state;
    static const struct {
        const char *expr;
        mfu_status st;
        long column;
        const char *says;
    } cases[] = {
        {"", MFU_E_PARSE, 1, "empty expression"},
        {"   ", MFU_E_PARSE, 1, "empty expression"},
        {"mfuu>=0.4", MFU_E_PARSE, 1, "unknown name 'mfuu'; use one of mfu, hfu"},
        {"MFU>=0.4", MFU_E_PARSE, 1, "expected a name"},
        {"mfu", MFU_E_PARSE, 4, "expected an operator after 'mfu'"},
        {"mfu=>0.4", MFU_E_PARSE, 5, "'>0.4' is not a number"},
        {"mfu>=", MFU_E_PARSE, 6, "missing value"},
        {"mfu>=abc", MFU_E_PARSE, 6, "'abc' is not a number"},
        {"mfu>=0.4x", MFU_E_PARSE, 6, "is not a number"},
        {"mfu>=nan", MFU_E_PARSE, 6, "is not a number"},
        {"mfu>=const", MFU_E_PARSE, 6, "'const' needs = or =="},
        {"mfu.avg>=0.4", MFU_E_PARSE, 5, "unknown statistic 'avg'"},
        {"findings.max==0", MFU_E_PARSE, 10, "unknown statistic"},
        {"mfu ~ 0.4", MFU_E_PARSE, 5, "expected an operator"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mfu_invariant inv;
        memset(&inv, 0x5a, sizeof inv);
        mfu_error err = {0};
        mfu_status st = mfu_invariant_parse(cases[i].expr, &inv, &err);
        if (st != cases[i].st || !strstr(err.message, cases[i].says) ||
            err.column != cases[i].column)
            fail_msg("'%s': status %d column %ld message '%s'", cases[i].expr, st, err.column,
                     err.message);
        assert_string_equal(err.field, "expect");
        assert_int_equal(inv.op, 0x5a5a5a5a); /* untouched */
    }
    char longx[300];
    memset(longx, 'm', sizeof longx - 1);
    longx[sizeof longx - 1] = 0;
    mfu_invariant inv;
    mfu_error err = {0};
    assert_int_equal(mfu_invariant_parse(longx, &inv, &err), MFU_E_LIMIT);
    assert_int_equal(mfu_invariant_parse(NULL, &inv, &err), MFU_E_INVALID);

    /* Good forms, spaces and all. */
    assert_int_equal(mfu_invariant_parse(" mfu >= 0.40 ", &inv, &err), MFU_OK);
    assert_int_equal(inv.op, MFU_OP_GE);
    assert_true(inv.value == 0.40);
    assert_int_equal(mfu_invariant_parse("tokens_per_second>=1.2e6", &inv, &err), MFU_OK);
    assert_true(inv.value == 1.2e6);
    assert_int_equal(mfu_invariant_parse("flops_per_token=const", &inv, &err), MFU_OK);
    assert_int_equal(inv.op, MFU_OP_CONST);
    assert_int_equal(mfu_invariant_parse("hfu<90%", &inv, &err), MFU_OK);
    assert_true(fabs(inv.value - 0.9) < 1e-15);

    /* The analysis keeps at most MFU_ANALYSIS_MAX_INVARIANTS results. */
    mfu_analysis *a = two_segment_run(true);
    mfu_status st = MFU_OK;
    size_t n = 0;
    while (st == MFU_OK && n < 1000) {
        st = mfu_analysis_expect(a, "mfu>0", NULL, &err);
        n++;
    }
    assert_int_equal(st, MFU_E_LIMIT);
    assert_int_equal(mfu_analysis_invariant_count(a), MFU_ANALYSIS_MAX_INVARIANTS);
    assert_int_equal(mfu_analysis_expect(a, "bogus", NULL, &err), MFU_E_PARSE);
    mfu_analysis_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(evaluate),
        cmocka_unit_test(bad_expressions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
