/*
 * test_energy.c - energy beside utilization (src/figures/energy.c): a step's energy, joules per
 * useful PFLOP and tokens per kWh against arithmetic done here, the tensor-activity cross-check
 * both ways and at its edges, the column rule (ratio of sums, devices, steps left out), and the
 * report of a run whose steps carry energy_j, power_w and tensor_active (the Megatron
 * --log-energy line included), and of one that carries none (nothing to show).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "figures/energy.h"
#include "mfu/mfu.h"

static void step_energy(void **state)
{
    (void)state;
    bool p = true;
    /* energy_j wins over power x time */
    assert_true(mfu__energy_step_j(812.5, 400, 2, &p) == 812.5);
    assert_false(p);
    assert_true(mfu__energy_step_j(0, 400, 2, &p) == 0);
    /* else power x time, exactly */
    assert_true(mfu__energy_step_j(NAN, 437.5, 1.25, &p) == 546.875);
    assert_true(p);
    assert_true(mfu__energy_step_j(-1, 437.5, 1.25, NULL) == 546.875);
    /* nothing */
    assert_true(isnan(mfu__energy_step_j(NAN, NAN, 1.25, &p)));
    assert_false(p);
    assert_true(isnan(mfu__energy_step_j(NAN, 400, 0, NULL)));
    assert_true(isnan(mfu__energy_step_j(NAN, -3, 1, NULL)));
    assert_true(isnan(mfu__energy_step_j(INFINITY, NAN, 1, NULL)));
}

static void ratios(void **state)
{
    (void)state;
    /* 700 J for 2.5e15 FLOPs: 280 J/PFLOP */
    assert_true(mfu__joules_per_pflop(700, 2.5e15) == 280);
    assert_true(mfu__joules_per_pflop(0, 1e15) == 0);
    assert_true(isnan(mfu__joules_per_pflop(700, 0)));
    assert_true(isnan(mfu__joules_per_pflop(-1, 1e15)));
    assert_true(isnan(mfu__joules_per_pflop(NAN, 1e15)));
    /* 1.8e6 J = 0.5 kWh for 1e6 tokens: 2e6 tokens/kWh */
    assert_true(mfu__tokens_per_kwh(1e6, 1.8e6) == 2e6);
    assert_true(isnan(mfu__tokens_per_kwh(1e6, 0)));
    assert_true(isnan(mfu__tokens_per_kwh(-1, 1)));
    assert_true(isnan(mfu__tokens_per_kwh(1, INFINITY)));
}

static void tensor_check(void **state)
{
    (void)state;
    char b[MFU_REPORT_TEXT_MAX];
    assert_int_equal(mfu__tensor_check(0.45, 0.60, b, sizeof b), MFU_TENSOR_CHECK_CONSISTENT);
    assert_non_null(strstr(b, "consistent"));
    assert_non_null(strstr(b, "45.0 %"));
    assert_non_null(strstr(b, "60.0 %"));
    /* MFU above the activity: a counting error */
    assert_int_equal(mfu__tensor_check(0.70, 0.60, b, sizeof b), MFU_TENSOR_CHECK_MFU_ABOVE);
    assert_non_null(strstr(b, "above the tensor pipes' activity 60.0 %"));
    assert_non_null(strstr(b, "counted wrong"));
    /* within the margin it is not */
    assert_int_equal(mfu__tensor_check(0.615, 0.60, NULL, 0), MFU_TENSOR_CHECK_CONSISTENT);
    assert_int_equal(mfu__tensor_check(0.625, 0.60, NULL, 0), MFU_TENSOR_CHECK_MFU_ABOVE);
    /* far below: wasted tensor work */
    assert_int_equal(mfu__tensor_check(0.20, 0.60, b, sizeof b), MFU_TENSOR_CHECK_FAR_BELOW);
    assert_non_null(strstr(b, "far below"));
    assert_non_null(strstr(b, "does not count"));
    assert_int_equal(mfu__tensor_check(0.30, 0.60, NULL, 0), MFU_TENSOR_CHECK_CONSISTENT);
    assert_int_equal(mfu__tensor_check(0.29, 0.60, NULL, 0), MFU_TENSOR_CHECK_FAR_BELOW);
    /* nothing to compare */
    assert_int_equal(mfu__tensor_check(NAN, 0.6, b, sizeof b), MFU_TENSOR_CHECK_NONE);
    assert_string_equal(b, "");
    assert_int_equal(mfu__tensor_check(0.4, NAN, NULL, 0), MFU_TENSOR_CHECK_NONE);
    assert_int_equal(mfu__tensor_check(0.4, 1.5, NULL, 0), MFU_TENSOR_CHECK_NONE);
    assert_string_equal(mfu_tensor_check_name(MFU_TENSOR_CHECK_MFU_ABOVE), "mfu_above");
    assert_string_equal(mfu_tensor_check_name(MFU_TENSOR_CHECK_FAR_BELOW), "far_below");
    assert_null(mfu_tensor_check_name((mfu_tensor_check)9));
}

/* Four steps: energy_j given, power only, nothing, and one the keep mask drops. */
static void columns(void **state)
{
    (void)state;
    const double ej[4] = {1000, NAN, NAN, 5};
    const double pw[4] = {NAN, 400, NAN, 400};
    const double ta[4] = {0.5, 0.7, 0.6, 0.1};
    const double st[4] = {2, 2.5, 2, 2};
    const double tok[4] = {4096, 4096, 4096, 4096};
    const double mf[4] = {2e14, 2e14, 2e14, 2e14}; /* useful FLOP/s of one device */
    const double dev[4] = {8, NAN, 8, 8};
    const double mfu[4] = {0.20, 0.21, 0.22, 0.9};
    mfu__energy_cols c = {ej, pw, ta, st, tok, mf, dev, mfu};
    const uint8_t keep[4] = {1, 1, 1, 0};
    double scratch[8];
    mfu_energy e;
    mfu__energy_compute(&c, keep, 4, scratch, &e);
    /* step 0: 1000 J x 8 devices, 4e14 x 8 FLOPs; step 1: 400 x 2.5 = 1000 J, one device (its
     * count unknown), 5e14 FLOPs; step 2: no energy */
    assert_int_equal(e.steps, 2);
    assert_int_equal(e.power_steps, 1);
    assert_true(e.joules == 9000);
    assert_true(e.useful_pflop == (32e14 + 5e14) / 1e15);
    assert_true(e.joules_per_pflop == 9000 / ((32e14 + 5e14) / 1e15));
    /* tokens per kWh only from the step with a device count */
    assert_true(e.tokens == 4096);
    assert_true(e.tokens_per_kwh == 4096 / (8000 / 3.6e6));
    /* the medians of the three kept steps: activity 0.6, MFU 0.21 */
    assert_int_equal(e.tensor_steps, 3);
    assert_true(e.tensor_active == 0.6);
    assert_true(e.mfu == 0.21);
    assert_int_equal(e.check, MFU_TENSOR_CHECK_FAR_BELOW);
    assert_non_null(strstr(e.check_text, "21.0 %"));

    /* no energy, power or activity columns: nothing */
    mfu__energy_cols none = {NULL, NULL, NULL, st, tok, mf, dev, mfu};
    mfu__energy_compute(&none, NULL, 4, scratch, &e);
    assert_int_equal(e.steps, 0);
    assert_int_equal(e.tensor_steps, 0);
    assert_true(isnan(e.joules_per_pflop) && isnan(e.tokens_per_kwh) && isnan(e.tensor_active));
    assert_int_equal(e.check, MFU_TENSOR_CHECK_NONE);
    mfu__energy_compute(&c, NULL, 4, NULL, &e); /* no scratch: nothing computed */
    assert_int_equal(e.steps, 0);
}

/* The report of a run: energy over the steady steps, from the steps' own fields. */
static mfu_report_input gpt2_input(void)
{
    mfu_report_input in;
    memset(&in, 0, sizeof in);
    assert_int_equal(mfu_preset_find("gpt2", &in.arch, NULL), MFU_OK);
    in.has_arch = true;
    in.workload.seq = 1024;
    in.peak_flops_per_s = 100e12;
    in.devices = 2;
    return in;
}

static void report_figures(void **state)
{
    (void)state;
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    for (int i = 1; i <= 40; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = i;
        s.tokens = 65536;
        s.step_time_s = 0.5;
        s.energy_j = i % 2 ? 150 : NAN; /* odd steps: 150 J; even: 320 W x 0.5 s = 160 J */
        s.power_w = 320;
        s.tensor_active = 0.4;
        assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    }
    mfu_report_input in = gpt2_input();
    mfu_report *r = NULL;
    assert_int_equal(mfu_report_compute(run, &in, &r, NULL), MFU_OK);
    const mfu_energy *e = mfu_report_get_energy(r);
    assert_non_null(e);
    const mfu_report_warmup *w = mfu_report_get_warmup(r);
    assert_int_equal(e->steps, w->steady);
    assert_true(e->steps > 30);
    /* recompute from the report's own columns: Σ device J x 2 / Σ useful FLOPs x 2 */
    const double *mf = mfu_report_column(r, MFU_RS_MODEL_FLOPS_PER_S_PER_DEVICE);
    const int64_t *steps = mfu_report_steps(r);
    double J = 0, F = 0, K = 0;
    size_t np = 0;
    for (size_t i = 0; i < mfu_report_step_count(r); i++) {
        if (mfu_report_step_state_at(r, i) != MFU_STEP_STEADY)
            continue;
        double ej = steps[i] % 2 ? 150 : 320 * 0.5;
        np += steps[i] % 2 == 0;
        J += ej * 2;
        F += mf[i] * 0.5 * 2;
        K += 65536;
    }
    assert_int_equal(e->power_steps, np);
    assert_true(fabs(e->joules - J) <= 1e-9 * J);
    assert_true(fabs(e->joules_per_pflop - J / (F / 1e15)) <= 1e-12 * e->joules_per_pflop);
    assert_true(fabs(e->tokens_per_kwh - K / (J / 3.6e6)) <= 1e-12 * e->tokens_per_kwh);
    /* MFU of GPT-2 at 65536 tokens per 0.5 s on 2 x 100 TFLOP/s: the activity 40 % is the
     * check's other figure */
    assert_true(e->tensor_active == 0.4);
    assert_true(e->mfu == mfu_report_summary(r, MFU_RS_MFU).median);
    assert_int_not_equal(e->check, MFU_TENSOR_CHECK_NONE);
    mfu_report_free(r);
    mfu_run_free(run);

    /* no energy anywhere: nothing */
    run = mfu_run_new();
    for (int i = 1; i <= 10; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = i;
        s.tokens = 65536;
        s.step_time_s = 0.5;
        assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    }
    assert_int_equal(mfu_report_compute(run, &in, &r, NULL), MFU_OK);
    e = mfu_report_get_energy(r);
    assert_int_equal(e->steps, 0);
    assert_int_equal(e->tensor_steps, 0);
    assert_int_equal(e->check, MFU_TENSOR_CHECK_NONE);
    mfu_report_free(r);
    mfu_run_free(run);
    assert_null(mfu_report_get_energy(NULL));
}

/* Megatron's --log-energy pieces become energy_j and power_w. */
static void megatron_energy(void **state)
{
    (void)state;
    char path[] = "/tmp/mfu-energy-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (int i = 1; i <= 3; i++)
        fprintf(f,
                " [2025-06-10 10:00:0%d] iteration %8d/     100 | consumed samples: %12d | "
                "elapsed time per iteration (ms): 1250.0 | energy per GPU (J/iter/GPU): 812.5 | "
                "power per GPU (W/GPU): 650.0 | learning rate: 1.000000E-04 | global batch "
                "size:    32 | lm loss: 2.500000E+00 | loss scale: 1.0 | number of skipped "
                "iterations:   0 | number of nan iterations:   0 |\n",
                i, i, 32 * i);
    fclose(f);
    mfu_run *run = NULL;
    mfu_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(mfu_ingest_path(path, NULL, &run, NULL, &err), MFU_OK);
    remove(path);
    assert_int_equal(mfu_run_count(run), 3);
    mfu_step s;
    assert_true(mfu_run_get(run, 2, &s));
    assert_true(s.energy_j == 812.5);
    assert_true(s.power_w == 650);
    mfu_run_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(step_energy),    cmocka_unit_test(ratios),
        cmocka_unit_test(tensor_check),   cmocka_unit_test(columns),
        cmocka_unit_test(report_figures), cmocka_unit_test(megatron_energy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
