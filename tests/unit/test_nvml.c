/*
 * test_nvml.c - mfu_nvml_* (src/device/nvml.c) against the fake NVML the tests build
 * (tests/fake/nvml_fake.c, env MFU_FAKE_NVML and MFU_FAKE_NVML_OLD): every reason bit decoded,
 * two GPUs (one the table knows, one it does not), the units (mW to W, % to fractions), the
 * per-call sequences, NVML's errors (init, count, a failing function named with its error
 * string, NOT_SUPPORTED as an unknown figure), a library that is missing or is not NVML, an
 * old driver's library without the optional entry points.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mfu/mfu.h"

static const char *fake(void)
{
    const char *p = getenv("MFU_FAKE_NVML");
    if (!p || !p[0])
        fail_msg("MFU_FAKE_NVML is not set: run through ctest");
    return p;
}

/* Write a script for the fake and point it there; returns the path (static buffer). */
static const char *script(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/mfu-nvml-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
    setenv("MFU_FAKE_NVML_SCRIPT", path, 1);
    return path;
}

static void done_script(const char *path)
{
    unlink(path);
    unsetenv("MFU_FAKE_NVML_SCRIPT");
}

static mfu_nvml *open_fake(void)
{
    mfu_nvml *n = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status st = mfu_nvml_new(fake(), &n, &e);
    if (st != MFU_OK)
        fail_msg("mfu_nvml_new: %s", e.message);
    return n;
}

/* The fake's defaults: one H100 at 1980 of 1980 MHz, 500 of 700 W, 55 C, 97 % / 40 %. */
static void default_gpu(void **state)
{
    (void)state;
    unsetenv("MFU_FAKE_NVML_SCRIPT");
    mfu_nvml *n = open_fake();
    assert_int_equal(mfu_nvml_count(n), 1);
    assert_int_equal(mfu_nvml_count_reported(n), 1);
    assert_string_equal(mfu_nvml_library(n), fake());
    mfu_nvml_sample s;
    assert_int_equal(mfu_nvml_sample_device(n, 0, &s, NULL), MFU_OK);
    assert_int_equal(s.index, 0);
    assert_string_equal(s.name, "NVIDIA H100 80GB HBM3");
    assert_string_equal(s.uuid, "GPU-00000000-fake-0000-0000-000000000000");
    assert_non_null(s.device);
    const mfu_device_info *want = NULL;
    assert_int_equal(mfu_device_find("NVIDIA H100 80GB HBM3", &want, NULL), MFU_OK);
    assert_ptr_equal(s.device, want);
    assert_string_equal(s.device->id, "h100-sxm");
    assert_true(s.match != MFU_DEVICE_MATCH_NONE);
    assert_true(s.sm_clock_mhz == 1980);
    assert_true(s.max_sm_clock_mhz == 1980);
    assert_true(s.power_w == 500);
    assert_true(s.power_limit_w == 700);
    assert_true(s.reasons_known);
    assert_true(s.reasons == 0);
    assert_true(s.temperature_c == 55);
    assert_true(s.gpu_utilization == 0.97);
    assert_true(s.memory_utilization == 0.40);
    /* the energy counter: 1000 J, then 250 J more each call (mJ made J) */
    assert_true(s.energy_j == 1000);
    assert_int_equal(mfu_nvml_sample_device(n, 0, &s, NULL), MFU_OK);
    assert_true(s.energy_j == 1250);
    /* GPM: nothing on the first call, then the tensor pipes' 60 % */
    assert_true(mfu_nvml_has_gpm(n, 0));
    double t = 0;
    assert_int_equal(mfu_nvml_tensor_activity(n, 0, &t, NULL), MFU_OK);
    assert_true(isnan(t));
    assert_int_equal(mfu_nvml_tensor_activity(n, 0, &t, NULL), MFU_OK);
    assert_true(t == 0.60);
    mfu_nvml_free(n);
    mfu_nvml_free(NULL);
}

/* The energy counter and GPM from a script: exact values, per-call sequences, two GPUs each
 * with its own samples, a GPU without GPM, the errors. */
static void energy_and_gpm(void **state)
{
    (void)state;
    const char *path = script("device NVIDIA H100 80GB HBM3\n"
                              "energy 5000000 5612500 6000000\n"
                              "tensor 62 48 101\n"
                              "device NVIDIA A100-SXM4-80GB\n"
                              "gpm 0\n"
                              "fail nvmlDeviceGetTotalEnergyConsumption 3\n");
    mfu_nvml *n = open_fake();
    mfu_nvml_sample s;
    double want_j[] = {5000, 5612.5, 6000, 6000};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(mfu_nvml_sample_device(n, 0, &s, NULL), MFU_OK);
        assert_true(s.energy_j == want_j[i]);
    }
    /* GPU 1: NOT_SUPPORTED leaves the counter unknown, the rest is there */
    assert_int_equal(mfu_nvml_sample_device(n, 1, &s, NULL), MFU_OK);
    assert_true(isnan(s.energy_j));
    assert_true(s.power_w == 500);
    /* GPU 0: 62 %, 48 %, then 101 % which is not believed */
    double t = 0;
    assert_int_equal(mfu_nvml_tensor_activity(n, 0, &t, NULL), MFU_OK);
    assert_true(isnan(t));
    assert_int_equal(mfu_nvml_tensor_activity(n, 0, &t, NULL), MFU_OK);
    assert_true(t == 0.62);
    assert_int_equal(mfu_nvml_tensor_activity(n, 0, &t, NULL), MFU_OK);
    assert_true(t == 0.48);
    assert_int_equal(mfu_nvml_tensor_activity(n, 0, &t, NULL), MFU_OK);
    assert_true(isnan(t));
    /* GPU 1 has no GPM: NaN every time, never an error */
    assert_false(mfu_nvml_has_gpm(n, 1));
    for (int i = 0; i < 3; i++) {
        assert_int_equal(mfu_nvml_tensor_activity(n, 1, &t, NULL), MFU_OK);
        assert_true(isnan(t));
    }
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_nvml_tensor_activity(n, 2, &t, &e), MFU_E_INVALID);
    assert_string_equal(e.field, "nvml_index");
    assert_int_equal(mfu_nvml_tensor_activity(NULL, 0, &t, NULL), MFU_E_INVALID);
    assert_int_equal(mfu_nvml_tensor_activity(n, 0, NULL, NULL), MFU_E_INVALID);
    assert_false(mfu_nvml_has_gpm(NULL, 0));
    assert_false(mfu_nvml_has_gpm(n, 7));
    mfu_nvml_free(n);
    done_script(path);

    /* a failing GPM call and a failing counter: MFU_E_IO naming the function */
    path = script("device NVIDIA H100 80GB HBM3\nfail nvmlGpmMetricsGet 15\n"
                  "device NVIDIA H100 80GB HBM3\nfail nvmlDeviceGetTotalEnergyConsumption 15\n");
    n = open_fake();
    assert_int_equal(mfu_nvml_tensor_activity(n, 0, &t, NULL), MFU_OK);
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_nvml_tensor_activity(n, 0, &t, &e), MFU_E_IO);
    assert_true(isnan(t));
    assert_non_null(strstr(e.message, "nvmlGpmMetricsGet failed for GPU 0: GPU is lost"));
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_nvml_sample_device(n, 1, &s, &e), MFU_E_IO);
    assert_non_null(
        strstr(e.message, "nvmlDeviceGetTotalEnergyConsumption failed for GPU 1: GPU is lost"));
    assert_true(isnan(s.energy_j) && isnan(s.power_w));
    mfu_nvml_free(n);
    done_script(path);
}

/* Each documented bit, alone, then together, then one NVML may add later. */
static void every_reason_bit(void **state)
{
    (void)state;
    static const struct {
        uint64_t bit;
        const char *name;
    } bits[] = {
        {MFU_NVML_REASON_GPU_IDLE, "gpu_idle"},
        {MFU_NVML_REASON_APP_CLOCKS, "app_clocks"},
        {MFU_NVML_REASON_SW_POWER_CAP, "sw_power_cap"},
        {MFU_NVML_REASON_HW_SLOWDOWN, "hw_slowdown"},
        {MFU_NVML_REASON_SYNC_BOOST, "sync_boost"},
        {MFU_NVML_REASON_SW_THERMAL, "sw_thermal"},
        {MFU_NVML_REASON_HW_THERMAL, "hw_thermal"},
        {MFU_NVML_REASON_HW_POWER_BRAKE, "hw_power_brake"},
        {MFU_NVML_REASON_DISPLAY_CLOCKS, "display_clocks"},
    };
    /* NVML's documented values, written out here independently of the header */
    static const uint64_t nvml_values[] = {0x1, 0x2, 0x4, 0x8, 0x10, 0x20, 0x40, 0x80, 0x100};
    const char *path = script("device NVIDIA H100 80GB HBM3\n"
                              "reasons 0x1 0x2 0x4 0x8 0x10 0x20 0x40 0x80 0x100 0x1ff 0x204 0\n");
    mfu_nvml *n = open_fake();
    mfu_nvml_sample s;
    char buf[256];
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        assert_true(bits[i].bit == nvml_values[i]);
        assert_string_equal(mfu_nvml_reason_name(bits[i].bit), bits[i].name);
        assert_int_equal(mfu_nvml_sample_device(n, 0, &s, NULL), MFU_OK);
        assert_true(s.reasons == bits[i].bit);
        assert_true(mfu_nvml_reasons_text(s.reasons, NULL, buf, sizeof buf));
        assert_string_equal(buf, bits[i].name);
        bool slow = (s.reasons & MFU_NVML_REASONS_SLOWDOWN) != 0;
        bool want_slow = bits[i].bit >= 0x4 && bits[i].bit <= 0x80 && bits[i].bit != 0x10;
        assert_int_equal(slow, want_slow);
    }
    assert_int_equal(mfu_nvml_sample_device(n, 0, &s, NULL), MFU_OK);
    assert_true(s.reasons == 0x1ff);
    assert_true(mfu_nvml_reasons_text(s.reasons, " ", buf, sizeof buf));
    assert_string_equal(buf, "gpu_idle app_clocks sw_power_cap hw_slowdown sync_boost sw_thermal "
                             "hw_thermal hw_power_brake display_clocks");
    assert_int_equal(mfu_nvml_sample_device(n, 0, &s, NULL), MFU_OK);
    assert_true(s.reasons == 0x204);
    assert_true(mfu_nvml_reasons_text(s.reasons, ",", buf, sizeof buf));
    assert_string_equal(buf, "sw_power_cap,0x200");
    assert_int_equal(mfu_nvml_sample_device(n, 0, &s, NULL), MFU_OK);
    assert_true(s.reasons == 0 && s.reasons_known);
    assert_true(mfu_nvml_reasons_text(0, ",", buf, sizeof buf));
    assert_string_equal(buf, "");
    /* the last value repeats */
    assert_int_equal(mfu_nvml_sample_device(n, 0, &s, NULL), MFU_OK);
    assert_true(s.reasons == 0);
    /* names of non-bits; a buffer too small */
    assert_null(mfu_nvml_reason_name(0));
    assert_null(mfu_nvml_reason_name(0x3));
    assert_null(mfu_nvml_reason_name(0x200));
    char small[8];
    assert_false(mfu_nvml_reasons_text(0x4, ",", small, sizeof small));
    assert_string_equal(small, "sw_powe");
    assert_false(mfu_nvml_reasons_text(0x4, ",", NULL, 10));
    mfu_nvml_free(n);
    done_script(path);
}

/* Two GPUs: one the table knows, one it does not; sequences per GPU and per call. */
static void two_gpus(void **state)
{
    (void)state;
    const char *path = script("# two GPUs\n"
                              "device NVIDIA H100 80GB HBM3\n"
                              "uuid GPU-aaaa\n"
                              "clock 1980 1755*2 1410\n"
                              "power 650500 699000\n"
                              "limit 700000\n"
                              "reasons 0 0x4\n"
                              "temp 71\n"
                              "util 100 55\n"
                              "device Fake Accelerator 9000\n"
                              "clock 1200\n"
                              "max_clock 1500\n"
                              "power 100000\n"
                              "limit 150000\n");
    mfu_nvml *n = open_fake();
    assert_int_equal(mfu_nvml_count(n), 2);
    mfu_nvml_sample s[4];
    size_t got = 99;
    assert_int_equal(mfu_nvml_sample_all(n, s, 4, &got, NULL), MFU_OK);
    assert_int_equal(got, 2);
    assert_string_equal(s[0].name, "NVIDIA H100 80GB HBM3");
    assert_string_equal(s[0].uuid, "GPU-aaaa");
    assert_string_equal(s[0].device->id, "h100-sxm");
    assert_true(s[0].sm_clock_mhz == 1980);
    assert_true(s[0].power_w == 650.5);
    assert_true(s[0].power_limit_w == 700);
    assert_true(s[0].reasons == 0);
    assert_true(s[0].temperature_c == 71);
    assert_true(s[0].gpu_utilization == 1.0 && s[0].memory_utilization == 0.55);
    assert_int_equal(s[1].index, 1);
    assert_string_equal(s[1].name, "Fake Accelerator 9000");
    assert_null(s[1].device);
    assert_int_equal(s[1].match, MFU_DEVICE_MATCH_NONE);
    assert_true(s[1].sm_clock_mhz == 1200 && s[1].max_sm_clock_mhz == 1500);
    assert_true(s[1].power_w == 100 && s[1].power_limit_w == 150);
    /* GPU 0's second, third and fourth calls; GPU 1 untouched by them */
    static const double clocks[] = {1755, 1755, 1410, 1410};
    for (int k = 0; k < 4; k++) {
        assert_int_equal(mfu_nvml_sample_device(n, 0, &s[0], NULL), MFU_OK);
        assert_true(s[0].sm_clock_mhz == clocks[k]);
        assert_true(s[0].power_w == 699);
        assert_true(s[0].reasons == MFU_NVML_REASON_SW_POWER_CAP);
    }
    /* cap smaller than the GPUs */
    assert_int_equal(mfu_nvml_sample_all(n, s, 1, &got, NULL), MFU_OK);
    assert_int_equal(got, 1);
    assert_int_equal(mfu_nvml_sample_all(n, NULL, 0, &got, NULL), MFU_OK);
    assert_int_equal(got, 0);
    /* no such GPU */
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_nvml_sample_device(n, 2, &s[0], &e), MFU_E_INVALID);
    assert_string_equal(e.field, "nvml_index");
    assert_non_null(strstr(e.message, "2 GPU(s)"));
    assert_true(isnan(s[0].sm_clock_mhz));
    assert_int_equal(mfu_nvml_sample_device(NULL, 0, &s[0], NULL), MFU_E_INVALID);
    assert_int_equal(mfu_nvml_sample_device(n, 0, NULL, NULL), MFU_E_INVALID);
    assert_int_equal(mfu_nvml_sample_all(n, NULL, 1, &got, NULL), MFU_E_INVALID);
    assert_int_equal(mfu_nvml_sample_all(n, s, 1, NULL, NULL), MFU_E_INVALID);
    assert_int_equal(mfu_nvml_count(NULL), 0);
    assert_string_equal(mfu_nvml_library(NULL), "");
    mfu_nvml_free(n);
    done_script(path);
}

static void expect_open_error(const char *lib, mfu_status want, const char *const *texts)
{
    mfu_nvml *n = (mfu_nvml *)1;
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status st = mfu_nvml_new(lib, &n, &e);
    if (st != want)
        fail_msg("status %d, want %d (%s)", st, want, e.message);
    assert_null(n);
    assert_null(strchr(e.message, '\n'));
    for (; *texts; texts++)
        if (!strstr(e.message, *texts))
            fail_msg("message '%s' lacks '%s'", e.message, *texts);
}

/* NVML's own errors: init, count, a function failing, NOT_SUPPORTED. */
static void nvml_errors(void **state)
{
    (void)state;
    const char *path = script("init 9\n");
    expect_open_error(fake(), MFU_E_UNSUPPORTED,
                      (const char *const[]){"nvmlInit_v2 failed", "Driver Not Loaded",
                                            "NVML error 9", "--peak-tflops", NULL});
    done_script(path);
    path = script("count 4\ndevice NVIDIA H100 80GB HBM3\n");
    expect_open_error(
        fake(), MFU_E_UNSUPPORTED,
        (const char *const[]){"nvmlDeviceGetCount_v2 failed", "Insufficient Permissions", NULL});
    done_script(path);
    path = script("device NVIDIA H100 80GB HBM3\nfail nvmlDeviceGetName 15\n");
    expect_open_error(
        fake(), MFU_E_IO,
        (const char *const[]){"nvmlDeviceGetName failed for GPU 0", "GPU is lost", NULL});
    done_script(path);

    /* a sampled function fails: named, with NVML's string; the sample is all unknown */
    path = script("device NVIDIA H100 80GB HBM3\n"
                  "device NVIDIA H100 80GB HBM3\nfail nvmlDeviceGetPowerUsage 15\n");
    mfu_nvml *n = open_fake();
    mfu_nvml_sample s;
    assert_int_equal(mfu_nvml_sample_device(n, 0, &s, NULL), MFU_OK);
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_nvml_sample_device(n, 1, &s, &e), MFU_E_IO);
    assert_non_null(strstr(e.message, "nvmlDeviceGetPowerUsage failed for GPU 1"));
    assert_non_null(strstr(e.message, "GPU is lost (NVML error 15)"));
    assert_true(isnan(s.sm_clock_mhz) && isnan(s.power_w) && !s.reasons_known);
    size_t got = 9;
    mfu_nvml_sample all[2];
    assert_int_equal(mfu_nvml_sample_all(n, all, 2, &got, NULL), MFU_E_IO);
    assert_int_equal(got, 1);
    assert_true(all[0].sm_clock_mhz == 1980);
    mfu_nvml_free(n);
    done_script(path);

    /* NOT_SUPPORTED (3): that figure unknown, the rest read */
    path = script("device NVIDIA GeForce RTX 4090\n"
                  "fail nvmlDeviceGetEnforcedPowerLimit 3\n"
                  "fail nvmlDeviceGetCurrentClocksEventReasons 3\n"
                  "fail nvmlDeviceGetTemperature 3\n"
                  "fail nvmlDeviceGetUtilizationRates 3\n"
                  "fail nvmlDeviceGetUUID 3\n");
    n = open_fake();
    assert_int_equal(mfu_nvml_sample_device(n, 0, &s, NULL), MFU_OK);
    assert_true(s.sm_clock_mhz == 1980 && s.power_w == 500);
    assert_true(isnan(s.power_limit_w));
    assert_false(s.reasons_known);
    assert_true(isnan(s.temperature_c) && isnan(s.gpu_utilization));
    assert_string_equal(s.uuid, "");
    mfu_nvml_free(n);
    done_script(path);
}

/* No library, a library that is not NVML, the environment's choice. */
static void missing_library(void **state)
{
    (void)state;
    expect_open_error("/nonexistent/libnvidia-ml.so.1", MFU_E_UNSUPPORTED,
                      (const char *const[]){"NVML not found (/nonexistent/libnvidia-ml.so.1)",
                                            "MFU_NVML_LIBRARY", "--device/--peak-tflops", NULL});
    expect_open_error(
        "libm.so.6", MFU_E_UNSUPPORTED,
        (const char *const[]){"libm.so.6 is not a usable NVML", "it lacks nvmlInit_v2", NULL});
    assert_int_equal(mfu_nvml_new(fake(), NULL, NULL), MFU_E_INVALID);
    char longpath[700];
    memset(longpath, 'x', sizeof longpath - 1);
    longpath[sizeof longpath - 1] = '\0';
    expect_open_error(longpath, MFU_E_LIMIT, (const char *const[]){"MFU_NVML_LIBRARY", NULL});

    /* NULL: MFU_NVML_LIBRARY when set */
    setenv("MFU_NVML_LIBRARY", fake(), 1);
    mfu_nvml *n = NULL;
    assert_int_equal(mfu_nvml_new(NULL, &n, NULL), MFU_OK);
    assert_string_equal(mfu_nvml_library(n), fake());
    mfu_nvml_free(n);
    setenv("MFU_NVML_LIBRARY", "/nonexistent/nvml.so", 1);
    expect_open_error(NULL, MFU_E_UNSUPPORTED,
                      (const char *const[]){"NVML not found (/nonexistent/nvml.so)", NULL});
    /* unset (or empty): the driver's library, which this machine may or may not have */
    setenv("MFU_NVML_LIBRARY", "", 1);
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status st = mfu_nvml_new(NULL, &n, &e);
    if (st == MFU_OK) {
        assert_string_equal(mfu_nvml_library(n), "libnvidia-ml.so.1");
        mfu_nvml_free(n);
    } else if (st == MFU_E_UNSUPPORTED && strncmp(e.message, "NVML not found", 14) == 0) {
        assert_string_equal(e.message, "NVML not found (libnvidia-ml.so.1): no NVIDIA driver on "
                                       "this machine; pass --device/--peak-tflops instead");
        assert_string_equal(e.field, "MFU_NVML_LIBRARY");
    }
    unsetenv("MFU_NVML_LIBRARY");
}

/* An old driver's library: throttle reasons under their old name, no optional entry points. */
static void old_driver(void **state)
{
    (void)state;
    const char *old = getenv("MFU_FAKE_NVML_OLD");
    assert_non_null(old);
    const char *path = script("device NVIDIA A100-SXM4-80GB\nclock 1410\nmax_clock 1410\n"
                              "reasons 0x48\n");
    mfu_nvml *n = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_nvml_new(old, &n, &e), MFU_OK);
    mfu_nvml_sample s;
    assert_int_equal(mfu_nvml_sample_device(n, 0, &s, NULL), MFU_OK);
    assert_string_equal(s.device->id, "a100-sxm4-80gb");
    assert_string_equal(s.uuid, "");
    assert_true(s.reasons_known);
    assert_true(s.reasons == (MFU_NVML_REASON_HW_SLOWDOWN | MFU_NVML_REASON_HW_THERMAL));
    assert_true(isnan(s.temperature_c));
    assert_true(isnan(s.gpu_utilization) && isnan(s.memory_utilization));
    /* no energy counter and no GPM entry points: unknown, never an error */
    assert_true(isnan(s.energy_j));
    assert_false(mfu_nvml_has_gpm(n, 0));
    double t = 0;
    assert_int_equal(mfu_nvml_tensor_activity(n, 0, &t, NULL), MFU_OK);
    assert_int_equal(mfu_nvml_tensor_activity(n, 0, &t, NULL), MFU_OK);
    assert_true(isnan(t));
    mfu_nvml_free(n);
    done_script(path);
}

/* Several sessions at once: NVML's initialisation is counted, each session its own. */
static void two_sessions(void **state)
{
    (void)state;
    unsetenv("MFU_FAKE_NVML_SCRIPT");
    mfu_nvml *a = open_fake(), *b = open_fake();
    mfu_nvml_free(a);
    mfu_nvml_sample s;
    assert_int_equal(mfu_nvml_sample_device(b, 0, &s, NULL), MFU_OK);
    assert_true(s.sm_clock_mhz == 1980);
    mfu_nvml_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_gpu),     cmocka_unit_test(every_reason_bit),
        cmocka_unit_test(two_gpus),        cmocka_unit_test(nvml_errors),
        cmocka_unit_test(missing_library), cmocka_unit_test(old_driver),
        cmocka_unit_test(two_sessions),    cmocka_unit_test(energy_and_gpm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
