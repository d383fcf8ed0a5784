/*
 * test_estimate.c - the MFU identity (src/analysis/estimate.c) on published inputs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "mfu/estimate.h"

/* PaLM 540B, Chowdhery et al. 2022 App. B: 6N only, 6144 TPU v4 at 275 TFLOP/s, 238.3K tok/s
 * -> 45.7 %. */
static void palm_6n_throughput_forms_agree(void **state)
{
    (void)state;
    mfu_estimate_input in = {6 * 540e9, 6 * 540e9, 275e12, 6144};
    mfu_throughput t = {MFU_TPUT_TOKENS_PER_S, 238.3e3, 0};
    mfu_estimate e;
    assert_int_equal(mfu_estimate_compute(&in, &t, &e, NULL), MFU_OK);
    assert_true(fabs(e.mfu * 100 - 45.70) < 0.005);
    assert_true(fabs(e.hfu - e.mfu) < 1e-15);
    assert_true(fabs(e.tokens_per_s_per_device - 238.3e3 / 6144) < 1e-9);

    /* The same throughput per device, and as model FLOP/s per device, gives the same MFU. */
    mfu_estimate e2, e3;
    mfu_throughput t2 = {MFU_TPUT_TOKENS_PER_S_PER_DEVICE, 238.3e3 / 6144, 0};
    mfu_throughput t3 = {MFU_TPUT_MODEL_FLOPS_PER_DEVICE, e.model_flops_per_s_per_device, 0};
    assert_int_equal(mfu_estimate_compute(&in, &t2, &e2, NULL), MFU_OK);
    assert_int_equal(mfu_estimate_compute(&in, &t3, &e3, NULL), MFU_OK);
    assert_true(fabs(e2.mfu - e.mfu) < 1e-12);
    assert_true(fabs(e3.tokens_per_s - e.tokens_per_s) < 1e-6);
}

/* MT-NLG 530B as PaLM Table 3 computed it: 1920 x 2048 tokens per 60.1 s step on 2240 A100
 * (312 TFLOP/s), PaLM formula with L=105, h=20480, T=2048 -> 30.2 % (30.26 recomputed). */
static void mtnlg_step_time(void **state)
{
    (void)state;
    double f = 6 * 530e9 + 12.0 * 105 * 20480 * 2048;
    mfu_estimate_input in = {f, f, 312e12, 2240};
    mfu_throughput t = {MFU_TPUT_STEP_TIME, 60.1, 1920.0 * 2048};
    mfu_estimate e;
    assert_int_equal(mfu_estimate_compute(&in, &t, &e, NULL), MFU_OK);
    assert_true(fabs(e.mfu * 100 - 30.26) < 0.01);
}

static void target_is_the_inverse(void **state)
{
    (void)state;
    mfu_estimate_input in = {48e9, 64e9, 989e12, 8};
    mfu_estimate e, back;
    assert_int_equal(mfu_estimate_for_target(&in, 0.40, &e, NULL), MFU_OK);
    assert_true(fabs(e.mfu - 0.40) < 1e-12);
    assert_true(fabs(e.hfu - 0.40 * 64 / 48) < 1e-12);
    mfu_throughput t = {MFU_TPUT_TOKENS_PER_S, e.tokens_per_s, 0};
    assert_int_equal(mfu_estimate_compute(&in, &t, &back, NULL), MFU_OK);
    assert_true(fabs(back.mfu - 0.40) < 1e-12);
}

static void bad_inputs_are_refused_and_output_untouched(void **state)
{
    (void)state;
    mfu_estimate e;
    memset(&e, 0x5a, sizeof e);
    mfu_estimate before = e;
    mfu_error err;
    memset(&err, 0, sizeof err);
    mfu_estimate_input in = {48e9, 48e9, 989e12, 8};
    mfu_throughput zero = {MFU_TPUT_TOKENS_PER_S, 0, 0};
    assert_int_equal(mfu_estimate_compute(&in, &zero, &e, &err), MFU_E_INVALID);
    assert_non_null(strstr(err.message, "--tokens-per-sec"));
    mfu_throughput st = {MFU_TPUT_STEP_TIME, 1.5, 0};
    assert_int_equal(mfu_estimate_compute(&in, &st, &e, &err), MFU_E_INVALID);
    assert_non_null(strstr(err.message, "--batch-tokens"));
    mfu_estimate_input nopeak = {48e9, 48e9, 0, 8};
    mfu_throughput ok = {MFU_TPUT_TOKENS_PER_S, 1000, 0};
    assert_int_equal(mfu_estimate_compute(&nopeak, &ok, &e, &err), MFU_E_INVALID);
    assert_string_equal(err.field, "peak_flops_per_s");
    mfu_estimate_input hw_low = {48e9, 40e9, 989e12, 8};
    assert_int_equal(mfu_estimate_compute(&hw_low, &ok, &e, &err), MFU_E_INVALID);
    mfu_estimate_input nan_in = {NAN, 48e9, 989e12, 8};
    assert_int_equal(mfu_estimate_compute(&nan_in, &ok, &e, &err), MFU_E_INVALID);
    assert_int_equal(mfu_estimate_for_target(&in, 1.5, &e, &err), MFU_E_INVALID);
    assert_int_equal(mfu_estimate_for_target(&in, -0.1, &e, &err), MFU_E_INVALID);
    assert_memory_equal(&e, &before, sizeof e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(palm_6n_throughput_forms_agree),
        cmocka_unit_test(mtnlg_step_time),
        cmocka_unit_test(target_is_the_inverse),
        cmocka_unit_test(bad_inputs_are_refused_and_output_untouched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
