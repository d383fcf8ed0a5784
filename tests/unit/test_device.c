/*
 * test_device.c - unit tests of src/device: dtype names, the accelerator table (sanity of every
 * entry, the published peaks, peaks recomputed from unit counts and clocks), name matching
 * (every reported name, the known traps, ambiguity, unknown names, limits) and peak lookup.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mfu/mfu.h"

/* |a - b| <= rel * |b| */
static int near(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fabs(b);
}

static const mfu_device_info *must_find(const char *name)
{
    const mfu_device_info *d = NULL;
    mfu_error err = {0};
    mfu_status st = mfu_device_find(name, &d, &err);
    if (st != MFU_OK)
        fail_msg("'%s': status %d: %s", name, (int)st, err.message);
    assert_non_null(d);
    return d;
}

static double dense(const char *id, mfu_dtype t)
{
    return must_find(id)->dense_flops_per_s[t];
}

/* One line, printable ASCII: what every error message must be. */
static void assert_one_line(const char *msg)
{
    assert_true(msg[0] != '\0');
    for (const char *p = msg; *p; p++)
        assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
}

/* ---- dtypes ----------------------------------------------------------------------------- */

static void dtype_names_round_trip(void **state)
{
    (void)state;
    for (int t = 0; t < MFU_DTYPE_COUNT; t++) {
        mfu_dtype out = MFU_DTYPE_COUNT;
        assert_int_equal(mfu_dtype_parse(mfu_dtype_name((mfu_dtype)t), &out, NULL), MFU_OK);
        assert_int_equal(out, t);
    }
    assert_string_equal(mfu_dtype_name(MFU_DTYPE_BF16), "bf16");
    assert_string_equal(mfu_dtype_name(MFU_DTYPE_INT8), "int8");
    assert_string_equal(mfu_dtype_name(MFU_DTYPE_COUNT), "?");
    assert_string_equal(mfu_dtype_name((mfu_dtype)-1), "?");
}

static void dtype_parse_spellings(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        mfu_dtype t;
    } cases[] = {
        {"bf16", MFU_DTYPE_BF16},
        {"BFloat16", MFU_DTYPE_BF16},
        {"torch.bfloat16", MFU_DTYPE_BF16},
        {"fp16", MFU_DTYPE_FP16},
        {"float16", MFU_DTYPE_FP16},
        {"HALF", MFU_DTYPE_FP16},
        {"fp8", MFU_DTYPE_FP8},
        {"float8", MFU_DTYPE_FP8},
        {"E4M3", MFU_DTYPE_FP8},
        {"float8_e4m3fn", MFU_DTYPE_FP8},
        {"fp32", MFU_DTYPE_FP32},
        {"Float32", MFU_DTYPE_FP32},
        {"tf32", MFU_DTYPE_TF32},
        {"fp64", MFU_DTYPE_FP64},
        {"double", MFU_DTYPE_FP64},
        {"int8", MFU_DTYPE_INT8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mfu_dtype out = MFU_DTYPE_COUNT;
        assert_int_equal(mfu_dtype_parse(cases[i].s, &out, NULL), MFU_OK);
        assert_int_equal(out, cases[i].t);
    }
}

static void dtype_parse_rejects(void **state)
{
    (void)state;
    mfu_dtype out = MFU_DTYPE_FP64;
    mfu_error err = {0};
    assert_int_equal(mfu_dtype_parse("fp4", &out, &err), MFU_E_UNKNOWN);
    assert_int_equal(out, MFU_DTYPE_FP64); /* untouched */
    assert_non_null(strstr(err.message, "'fp4'"));
    assert_non_null(strstr(err.message, "bf16"));
    assert_non_null(strstr(err.message, "--dtype"));
    assert_string_equal(err.field, "dtype");
    assert_int_equal(mfu_dtype_parse(" bf16", &out, &err), MFU_E_UNKNOWN); /* whole string */
    assert_int_equal(mfu_dtype_parse("bf16x", &out, &err), MFU_E_UNKNOWN);
    assert_int_equal(mfu_dtype_parse("", &out, &err), MFU_E_UNKNOWN);
    assert_int_equal(mfu_dtype_parse("torch.", &out, &err), MFU_E_UNKNOWN);
    assert_int_equal(mfu_dtype_parse("b\nf16", &out, &err), MFU_E_UNKNOWN);
    assert_one_line(err.message);
    assert_int_equal(mfu_dtype_parse(NULL, &out, &err), MFU_E_INVALID);
    assert_int_equal(mfu_dtype_parse("bf16", NULL, &err), MFU_E_INVALID);
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(mfu_dtype_parse(longname, &out, &err), MFU_E_UNKNOWN);
    assert_non_null(strstr(err.message, "...")); /* quoted input is cut */
    assert_true(strlen(err.message) < 200);
}

/* ---- the table -------------------------------------------------------------------------- */

static void enumeration(void **state)
{
    (void)state;
    size_t n = mfu_device_count();
    assert_true(n >= 40);
    for (size_t i = 0; i < n; i++)
        assert_non_null(mfu_device_at(i));
    assert_null(mfu_device_at(n));
    assert_null(mfu_device_at((size_t)-1));
}

static void ids_unique_and_well_formed(void **state)
{
    (void)state;
    size_t n = mfu_device_count();
    for (size_t i = 0; i < n; i++) {
        const char *id = mfu_device_at(i)->id;
        assert_true(strlen(id) >= 2 && strlen(id) < 32);
        for (const char *p = id; *p; p++)
            assert_true((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-');
        for (size_t j = i + 1; j < n; j++)
            assert_string_not_equal(id, mfu_device_at(j)->id);
    }
}

/* Every id, display name and reported name finds its own entry, exactly; so no two entries
 * share a name after normalisation. */
static void every_name_finds_its_entry(void **state)
{
    (void)state;
    size_t names = 0;
    for (size_t i = 0; i < mfu_device_count(); i++) {
        const mfu_device_info *d = mfu_device_at(i);
        const char *own[2] = {d->id, d->name};
        for (int k = 0; k < 2; k++) {
            mfu_device_match m;
            assert_int_equal(mfu_device_match_name(own[k], &m, NULL), MFU_OK);
            if (m.device != d)
                fail_msg("'%s' found %s, not %s", own[k], m.device->id, d->id);
            assert_int_equal(m.kind, MFU_DEVICE_MATCH_EXACT);
            names++;
        }
        assert_non_null(d->reported_names);
        for (const char *const *r = d->reported_names; *r; r++) {
            mfu_device_match m;
            mfu_error err = {0};
            if (mfu_device_match_name(*r, &m, &err) != MFU_OK)
                fail_msg("'%s': %s", *r, err.message);
            if (m.device != d)
                fail_msg("'%s' found %s, not %s", *r, m.device->id, d->id);
            assert_int_equal(m.kind, MFU_DEVICE_MATCH_EXACT);
            names++;
        }
    }
    assert_true(names > 150);
}

static void every_entry_sane(void **state)
{
    (void)state;
    for (size_t i = 0; i < mfu_device_count(); i++) {
        const mfu_device_info *d = mfu_device_at(i);
        const char *id = d->id;
        assert_true(d->name && d->name[0]);
        assert_true(d->vendor && d->vendor[0]);
        assert_true(d->unit && d->unit[0]);
        if (!d->source || strlen(d->source) < 20)
            fail_msg("%s: no source", id);
        assert_non_null(d->notes);
        /* the main dtype: bf16, or fp16 where there is no bf16 (Volta) */
        double main = d->dense_flops_per_s[MFU_DTYPE_BF16] > 0
                          ? d->dense_flops_per_s[MFU_DTYPE_BF16]
                          : d->dense_flops_per_s[MFU_DTYPE_FP16];
        if (!(main >= 1e13 && main <= 1e16))
            fail_msg("%s: main dense peak %g out of 10 TFLOP/s..10 PFLOP/s", id, main);
        int nsparse = 0;
        for (int t = 0; t < MFU_DTYPE_COUNT; t++) {
            double dn = d->dense_flops_per_s[t], sp = d->sparse_flops_per_s[t];
            assert_true(isfinite(dn) && dn >= 0 && isfinite(sp) && sp >= 0);
            if (sp > 0) {
                nsparse++;
                if (!(dn > 0))
                    fail_msg("%s %s: sparse figure without a dense one", id,
                             mfu_dtype_name((mfu_dtype)t));
                /* 0.3%: datasheets round each figure to 3-4 digits (RTX 3090 35.6 vs 71) */
                if (d->sparsity == MFU_SPARSITY_2_4 && !near(sp, 2 * dn, 0.003))
                    fail_msg("%s %s: sparse %g is not 2 x dense %g", id,
                             mfu_dtype_name((mfu_dtype)t), sp, dn);
            }
        }
        switch (d->sparsity) {
        case MFU_SPARSITY_NONE: assert_int_equal(nsparse, 0); break;
        case MFU_SPARSITY_2_4: assert_true(nsparse > 0); break;
        case MFU_SPARSITY_OTHER:
            assert_true(nsparse > 0);
            assert_true(strlen(d->notes) > 20); /* says what the figure means */
            break;
        default: fail_msg("%s: bad sparsity %d", id, (int)d->sparsity);
        }
        /* lower precision never has a lower peak than higher precision on the same unit */
        const double *p = d->dense_flops_per_s;
        if (p[MFU_DTYPE_FP8] > 0 && p[MFU_DTYPE_BF16] > 0)
            assert_true(p[MFU_DTYPE_FP8] >= p[MFU_DTYPE_BF16]);
        if (p[MFU_DTYPE_BF16] > 0 && p[MFU_DTYPE_TF32] > 0)
            assert_true(p[MFU_DTYPE_BF16] >= p[MFU_DTYPE_TF32]);
        if (p[MFU_DTYPE_TF32] > 0 && p[MFU_DTYPE_FP32] > 0)
            assert_true(p[MFU_DTYPE_TF32] >= p[MFU_DTYPE_FP32]);
        if (p[MFU_DTYPE_FP32] > 0 && p[MFU_DTYPE_FP64] > 0)
            assert_true(p[MFU_DTYPE_FP32] >= p[MFU_DTYPE_FP64]);
        if (p[MFU_DTYPE_BF16] > 0 && p[MFU_DTYPE_FP16] > 0)
            assert_true(p[MFU_DTYPE_BF16] == p[MFU_DTYPE_FP16]);
        /* memory 8 GB..400 GB, bandwidth 100 GB/s..20 TB/s */
        if (!(d->memory_bytes >= 8e9 && d->memory_bytes <= 4e11))
            fail_msg("%s: memory %g bytes", id, d->memory_bytes);
        if (!(d->memory_bandwidth_bytes_per_s >= 1e11 && d->memory_bandwidth_bytes_per_s <= 2e13))
            fail_msg("%s: bandwidth %g bytes/s", id, d->memory_bandwidth_bytes_per_s);
        assert_true(d->boost_clock_mhz >= 0 && d->boost_clock_mhz < 4000);
        assert_true(d->peak_clock_mhz >= 0 && d->peak_clock_mhz < 4000);
        if (d->boost_clock_mhz > 0 && d->peak_clock_mhz > 0)
            assert_true(d->peak_clock_mhz <= d->boost_clock_mhz);
    }
}

/* The figures the published cases and the stacks divide by. */
static void published_peaks(void **state)
{
    (void)state;
    /* exact: the vendors' own figures */
    assert_true(dense("a100-sxm4-80gb", MFU_DTYPE_BF16) == 312e12);
    assert_true(dense("a100-pcie-40gb", MFU_DTYPE_BF16) == 312e12);
    assert_true(dense("tpu-v4", MFU_DTYPE_BF16) == 275e12);
    assert_true(dense("tpu-v5e", MFU_DTYPE_BF16) == 197e12);
    assert_true(dense("tpu-v5p", MFU_DTYPE_BF16) == 459e12);
    assert_true(dense("tpu-v6e", MFU_DTYPE_BF16) == 918e12);
    assert_true(dense("v100-sxm2", MFU_DTYPE_FP16) == 125e12);
    assert_true(dense("mi300x", MFU_DTYPE_BF16) == 1307.4e12);
    assert_true(dense("h100-sxm", MFU_DTYPE_FP8) == 1979e12);
    /* H100 SXM: 989.5 = datasheet 1979 / 2; torchtitan's 989 and llm.c's 988.8 are within
     * 0.1% of it */
    assert_true(dense("h100-sxm", MFU_DTYPE_BF16) == 989.5e12);
    assert_true(near(dense("h100-sxm", MFU_DTYPE_BF16), 989e12, 0.001));
    assert_true(near(dense("h100-sxm", MFU_DTYPE_BF16), 988.8e12, 0.001));
    /* PCIe 756 and NVL 835 (torchtitan) vs datasheet halves 756.5 and 835.5 */
    assert_true(dense("h100-pcie", MFU_DTYPE_BF16) == 756.5e12);
    assert_true(near(dense("h100-pcie", MFU_DTYPE_BF16), 756e12, 0.001));
    assert_true(dense("h100-nvl", MFU_DTYPE_BF16) == 835.5e12);
    assert_true(near(dense("h100-nvl", MFU_DTYPE_BF16), 835e12, 0.001));
    assert_true(near(dense("h100-nvl", MFU_DTYPE_FP8), 1670e12, 0.001));
    /* torchtitan's other BF16 figures, within 1% (it rounds MI300X to 1300, MI355X to 2500) */
    assert_true(near(dense("b200", MFU_DTYPE_BF16), 2.25e15, 0.001));
    assert_true(near(dense("gb200", MFU_DTYPE_BF16), 2.5e15, 0.001));
    assert_true(near(dense("mi250x", MFU_DTYPE_BF16), 191.5e12, 0.001));
    assert_true(near(dense("mi300x", MFU_DTYPE_BF16), 1300e12, 0.006));
    assert_true(near(dense("mi355x", MFU_DTYPE_BF16), 2500e12, 0.007));
    assert_true(near(dense("h20", MFU_DTYPE_BF16), 148e12, 0.001));
    assert_true(near(dense("rtx-a6000", MFU_DTYPE_BF16), 154.85e12, 0.001));
    /* T4 and V100S: the datasheet figures exactly, no sparse figure on Turing/Volta; the
     * same 65/130/8.1 and 130/16.4/8.2 that Composer and Lightning use */
    assert_true(dense("t4", MFU_DTYPE_FP16) == 65e12);
    assert_true(dense("t4", MFU_DTYPE_INT8) == 130e12);
    assert_true(near(dense("t4", MFU_DTYPE_FP32), 8.1e12, 1e-12));
    assert_true(dense("t4", MFU_DTYPE_BF16) == 0 && dense("t4", MFU_DTYPE_TF32) == 0);
    assert_true(must_find("t4")->memory_bandwidth_bytes_per_s == 320e9);
    assert_true(dense("v100s-pcie", MFU_DTYPE_FP16) == 130e12);
    assert_true(near(dense("v100s-pcie", MFU_DTYPE_FP32), 16.4e12, 1e-12));
    assert_true(near(dense("v100s-pcie", MFU_DTYPE_FP64), 8.2e12, 1e-12));
    assert_true(must_find("v100s-pcie")->memory_bandwidth_bytes_per_s == 1134e9);
    for (int t = 0; t < MFU_DTYPE_COUNT; t++) {
        assert_true(must_find("t4")->sparse_flops_per_s[t] == 0);
        assert_true(must_find("v100s-pcie")->sparse_flops_per_s[t] == 0);
        assert_true(must_find("mi350x")->sparse_flops_per_s[t] == 0);
    }
    /* V100S is faster than either V100 on every dtype it shares with them */
    static const mfu_dtype volta[] = {MFU_DTYPE_FP64, MFU_DTYPE_FP32, MFU_DTYPE_FP16};
    for (size_t i = 0; i < sizeof volta / sizeof volta[0]; i++) {
        assert_true(dense("v100s-pcie", volta[i]) > dense("v100-sxm2", volta[i]));
        assert_true(dense("v100-sxm2", volta[i]) > dense("v100-pcie", volta[i]));
    }
    /* MI350X: AMD's 2.3 PFLOP/s dense BF16 (torchtitan 2300e12) within 0.3%; fp64/fp32/int8
     * have no sourced figure */
    assert_true(near(dense("mi350x", MFU_DTYPE_BF16), 2300e12, 0.003));
    assert_true(near(dense("mi350x", MFU_DTYPE_FP8), 2 * dense("mi350x", MFU_DTYPE_BF16), 1e-4));
    assert_true(dense("mi350x", MFU_DTYPE_FP64) == 0 && dense("mi350x", MFU_DTYPE_INT8) == 0);
    /* MI350X is the MI355X die at 2200 instead of 2400 MHz */
    assert_true(near(dense("mi350x", MFU_DTYPE_BF16) / dense("mi355x", MFU_DTYPE_BF16),
                     2200.0 / 2400.0, 1e-4));
    assert_true(must_find("mi350x")->memory_bytes == must_find("mi355x")->memory_bytes);
    /* H200 SXM has H100 SXM's compute; the NVL parts share theirs */
    for (int t = 0; t < MFU_DTYPE_COUNT; t++) {
        assert_true(dense("h200-sxm", (mfu_dtype)t) == dense("h100-sxm", (mfu_dtype)t));
        assert_true(dense("h200-nvl", (mfu_dtype)t) == dense("h100-nvl", (mfu_dtype)t));
    }
    /* TPU v7: the per-device entry is half the chip */
    const mfu_device_info *core = must_find("tpu-v7"), *chip = must_find("tpu-v7-chip");
    assert_true(2 * core->dense_flops_per_s[MFU_DTYPE_BF16] ==
                chip->dense_flops_per_s[MFU_DTYPE_BF16]);
    assert_true(2 * core->dense_flops_per_s[MFU_DTYPE_FP8] ==
                chip->dense_flops_per_s[MFU_DTYPE_FP8]);
    assert_true(2 * core->memory_bytes == chip->memory_bytes);
    assert_true(
        near(2 * core->memory_bandwidth_bytes_per_s, chip->memory_bandwidth_bytes_per_s, 0.001));
    assert_true(chip->dense_flops_per_s[MFU_DTYPE_BF16] == 2307e12);
}

/* Peaks recomputed from the unit count x FLOP per clock per unit x clock that the vendors
 * publish: catches a transcription error in the table. */
static void peaks_from_units_and_clocks(void **state)
{
    (void)state;
    static const struct {
        const char *id;
        mfu_dtype t;
        double units, flop_per_clk, mhz, rel;
    } c[] = {
        {"a100-sxm4-80gb", MFU_DTYPE_BF16, 432, 512, 1410, 0.001}, /* 108 SM x 4 TC */
        {"h100-sxm", MFU_DTYPE_BF16, 528, 1024, 1830, 0.001},      /* 132 SM x 4 TC */
        {"h100-pcie", MFU_DTYPE_BF16, 456, 1024, 1620, 0.001},     /* 114 SM x 4 TC */
        {"l40s", MFU_DTYPE_BF16, 568, 256, 2520, 0.001},
        {"l40", MFU_DTYPE_BF16, 568, 128, 2490, 0.001},
        {"rtx-4090", MFU_DTYPE_BF16, 512, 128, 2520, 0.001}, /* FP32 accumulate */
        {"rtx-3090", MFU_DTYPE_BF16, 328, 128, 1695, 0.003}, /* whitepaper rounds to 71 */
        {"rtx-a6000", MFU_DTYPE_BF16, 336, 256, 1800, 0.001},
        {"rtx-6000-ada", MFU_DTYPE_BF16, 568, 256, 2505, 0.001},
        {"rtx-5000-ada", MFU_DTYPE_BF16, 400, 256, 2550, 0.001},
        {"rtx-a5000", MFU_DTYPE_BF16, 256, 256, 1695, 0.001},
        {"rtx-a4000", MFU_DTYPE_BF16, 192, 256, 1560, 0.001},
        {"mi250x", MFU_DTYPE_BF16, 110, 1024, 1700, 0.001}, /* CUs per GCD */
        {"mi250x", MFU_DTYPE_FP64, 110, 256, 1700, 0.001},
        {"mi300x", MFU_DTYPE_BF16, 304, 2048, 2100, 0.001},
        {"mi300x", MFU_DTYPE_FP8, 304, 4096, 2100, 0.001},
        {"mi300x", MFU_DTYPE_TF32, 304, 1024, 2100, 0.001},
        {"mi355x", MFU_DTYPE_FP8, 256, 8192, 2400, 0.001},
        {"mi355x", MFU_DTYPE_FP64, 256, 128, 2400, 0.001},
        {"mi350x", MFU_DTYPE_BF16, 256, 4096, 2200, 0.001},
        {"mi350x", MFU_DTYPE_FP8, 256, 8192, 2200, 0.001},
        {"t4", MFU_DTYPE_FP16, 320, 128, 1590, 0.003}, /* 40 SM x 8 TC; datasheet rounds 65.1 */
        {"t4", MFU_DTYPE_INT8, 320, 256, 1590, 0.003},
        {"t4", MFU_DTYPE_FP32, 2560, 2, 1590, 0.006}, /* CUDA cores x FMA: 8.14 printed 8.1 */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        double want = c[i].units * c[i].flop_per_clk * c[i].mhz * 1e6;
        double got = dense(c[i].id, c[i].t);
        if (!near(got, want, c[i].rel))
            fail_msg("%s %s: table %g, units x clock %g", c[i].id, mfu_dtype_name(c[i].t), got,
                     want);
    }
}

/* ---- matching --------------------------------------------------------------------------- */

static void reported_names(void **state)
{
    (void)state;
    static const struct {
        const char *name, *id;
    } c[] = {
        /* torch.cuda.get_device_name / nvidia-smi --query-gpu=name */
        {"NVIDIA H100 80GB HBM3", "h100-sxm"},
        {"NVIDIA H100 PCIe", "h100-pcie"},
        {"NVIDIA H100 NVL", "h100-nvl"},
        {"NVIDIA H200", "h200-sxm"},
        {"NVIDIA H200 NVL", "h200-nvl"},
        {"NVIDIA H20", "h20"},
        {"NVIDIA L40S", "l40s"},
        {"NVIDIA L40", "l40"},
        {"NVIDIA L4", "l4"},
        {"NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"},
        {"NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"},
        {"NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"},
        {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"},
        {"NVIDIA A10", "a10"},
        {"NVIDIA A10G", "a10g"},
        {"NVIDIA A40", "a40"},
        {"Tesla V100-SXM2-16GB", "v100-sxm2"},
        {"Tesla V100-PCIE-32GB", "v100-pcie"},
        {"Tesla V100S-PCIE-32GB", "v100s-pcie"},
        {"Tesla T4", "t4"},
        {"NVIDIA GeForce RTX 4090", "rtx-4090"},
        {"NVIDIA GeForce RTX 3090", "rtx-3090"},
        {"NVIDIA RTX A6000", "rtx-a6000"},
        {"NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"},
        {"NVIDIA GH200 480GB", "gh200"},
        {"NVIDIA B200", "b200"},
        {"NVIDIA GB200", "gb200"},
        {"NVIDIA B300 SXM6 AC", "b300"},
        {"NVIDIA GB300", "gb300"},
        /* ROCm */
        {"AMD Instinct MI300X", "mi300x"},
        {"AMD Instinct MI325X", "mi325x"},
        {"AMD Instinct MI355X", "mi355x"},
        {"AMD Instinct MI250X", "mi250x"},
        {"AMD Instinct MI350X", "mi350x"},
        /* JAX device_kind, torch_xla / Lightning accelerator types, slice names */
        {"TPU v4", "tpu-v4"},
        {"TPU v5 lite", "tpu-v5e"},
        {"TPU v5", "tpu-v5p"},
        {"TPU v5p", "tpu-v5p"},
        {"TPU v6 lite", "tpu-v6e"},
        {"TPU7x", "tpu-v7"},
        {"v5litepod", "tpu-v5e"},
        {"v5litepod-8", "tpu-v5e"},
        {"v4-8", "tpu-v4"},
        {"v5p-128", "tpu-v5p"},
        {"v6e-256", "tpu-v6e"},
        {"tpu7x-64", "tpu-v7"},
        /* others */
        {"Intel Gaudi 2", "gaudi2"},
        {"HL-225", "gaudi2"},
        {"gaudi3", "gaudi3"},
        {"trn1", "trainium1"},
        {"Trainium2", "trainium2"},
        /* case, separators and spacing do not matter */
        {"nvidia h100 80gb hbm3", "h100-sxm"},
        {"H100_SXM", "h100-sxm"},
        {"h100sxm", "h100-sxm"},
        {"  NVIDIA   L40S  ", "l40s"},
        {"rtx4090", "rtx-4090"},
        {"MI300X", "mi300x"},
        {"NVIDIA T4", "t4"},
        {"t4", "t4"},
        {"v100s_pcie", "v100s-pcie"},
        {"mi350x", "mi350x"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const mfu_device_info *d = must_find(c[i].name);
        if (strcmp(d->id, c[i].id) != 0)
            fail_msg("'%s' found %s, want %s", c[i].name, d->id, c[i].id);
    }
}

static void expect_id(const char *name, const char *id, mfu_device_match_kind kind)
{
    mfu_device_match m;
    mfu_error err = {0};
    if (mfu_device_match_name(name, &m, &err) != MFU_OK)
        fail_msg("'%s': %s", name, err.message);
    if (strcmp(m.device->id, id) != 0)
        fail_msg("'%s' found %s, want %s", name, m.device->id, id);
    assert_int_equal(m.kind, kind);
}

/* The traps that other stacks fell into: substrings and missing form factors. */
static void traps(void **state)
{
    (void)state;
    expect_id("GB200", "gb200", MFU_DEVICE_MATCH_EXACT);
    expect_id("B200", "b200", MFU_DEVICE_MATCH_EXACT);
    expect_id("GB300", "gb300", MFU_DEVICE_MATCH_EXACT);
    expect_id("B300", "b300", MFU_DEVICE_MATCH_EXACT);
    expect_id("H200", "h200-sxm", MFU_DEVICE_MATCH_EXACT);
    expect_id("H20", "h20", MFU_DEVICE_MATCH_EXACT);
    expect_id("H100 NVL", "h100-nvl", MFU_DEVICE_MATCH_EXACT);
    expect_id("H100 PCIe", "h100-pcie", MFU_DEVICE_MATCH_EXACT);
    expect_id("PCIe H100", "h100-pcie", MFU_DEVICE_MATCH_WORDS); /* word order is free */
    expect_id("H100 HBM3", "h100-sxm", MFU_DEVICE_MATCH_WORDS);
    expect_id("L4", "l4", MFU_DEVICE_MATCH_EXACT);
    expect_id("L40", "l40", MFU_DEVICE_MATCH_EXACT);
    expect_id("L40S", "l40s", MFU_DEVICE_MATCH_EXACT);
    expect_id("A10", "a10", MFU_DEVICE_MATCH_EXACT);
    expect_id("A10G", "a10g", MFU_DEVICE_MATCH_EXACT);
    expect_id("V100 SXM2", "v100-sxm2", MFU_DEVICE_MATCH_EXACT);
    expect_id("MI300X VF", "mi300x", MFU_DEVICE_MATCH_EXACT);
    expect_id("TPU v7 chip", "tpu-v7-chip", MFU_DEVICE_MATCH_EXACT);
    /* look-alikes of the entries added later: V100S is its own word, so is each MI35x */
    expect_id("V100S", "v100s-pcie", MFU_DEVICE_MATCH_WORDS);
    expect_id("V100S PCIe", "v100s-pcie", MFU_DEVICE_MATCH_EXACT);
    expect_id("V100 PCIe", "v100-pcie", MFU_DEVICE_MATCH_EXACT);
    expect_id("Tesla V100-PCIE-16GB", "v100-pcie", MFU_DEVICE_MATCH_EXACT);
    expect_id("MI350X", "mi350x", MFU_DEVICE_MATCH_EXACT);
    expect_id("MI355X", "mi355x", MFU_DEVICE_MATCH_EXACT);
    expect_id("T4", "t4", MFU_DEVICE_MATCH_EXACT);
    expect_id("TPU v4", "tpu-v4", MFU_DEVICE_MATCH_EXACT); /* T4 is not v4 */
    expect_id("v4", "tpu-v4", MFU_DEVICE_MATCH_EXACT);
    expect_id("L4", "l4", MFU_DEVICE_MATCH_EXACT);
    expect_id("RTX 6000 Ada", "rtx-6000-ada", MFU_DEVICE_MATCH_EXACT);

    /* "H100" alone: SXM, PCIe and NVL differ -> ambiguous, never H200/H20/GH200 */
    mfu_device_match m;
    mfu_error err = {0};
    assert_int_equal(mfu_device_match_name("H100", &m, &err), MFU_E_AMBIGUOUS);
    assert_null(m.device);
    assert_int_equal(m.ncandidates, 3);
    assert_string_equal(m.candidates[0]->id, "h100-sxm");
    assert_string_equal(m.candidates[1]->id, "h100-pcie");
    assert_string_equal(m.candidates[2]->id, "h100-nvl");
    assert_non_null(strstr(err.message, "h100-sxm, h100-pcie, h100-nvl"));
    assert_non_null(strstr(err.message, "--peak-tflops"));
    assert_null(strstr(err.message, "h200"));
    assert_one_line(err.message);
    assert_int_equal(err.code, MFU_E_AMBIGUOUS);

    /* "V100": SXM2 125 vs PCIe 112 -> ambiguous; never the V100S (130) */
    assert_int_equal(mfu_device_match_name("V100", &m, &err), MFU_E_AMBIGUOUS);
    assert_int_equal(m.ncandidates, 2);
    assert_string_equal(m.candidates[0]->id, "v100-sxm2");
    assert_string_equal(m.candidates[1]->id, "v100-pcie");
    assert_null(strstr(err.message, "v100s"));

    /* "A100": four entries, equal peaks -> resolved to the first, candidates listed */
    assert_int_equal(mfu_device_match_name("A100", &m, &err), MFU_OK);
    assert_int_equal(m.kind, MFU_DEVICE_MATCH_EQUAL_PEAKS);
    assert_string_equal(m.device->id, "a100-sxm4-80gb");
    assert_int_equal(m.ncandidates, 4);
    for (size_t i = 0; i < 4; i++)
        assert_non_null(strstr(m.candidates[i]->id, "a100-"));
    assert_int_equal(mfu_device_match_name("A100 PCIe", &m, &err), MFU_OK);
    assert_int_equal(m.kind, MFU_DEVICE_MATCH_EQUAL_PEAKS);
    assert_string_equal(m.device->id, "a100-pcie-80gb");
    assert_int_equal(m.ncandidates, 2);
    assert_int_equal(mfu_device_match_name("a100 80gb", &m, &err), MFU_OK);
    assert_int_equal(m.kind, MFU_DEVICE_MATCH_EQUAL_PEAKS);
    assert_string_equal(m.device->id, "a100-sxm4-80gb");
    assert_int_equal(m.ncandidates, 2);
    assert_string_equal(m.candidates[1]->id, "a100-pcie-80gb");

    /* a name may leave out form factor and memory words, never model words: "RTX 6000" is
     * not the RTX 6000 Ada (the Quadro RTX 6000 and RTX PRO 6000 are other cards) */
    assert_int_equal(mfu_device_match_name("RTX 6000", &m, &err), MFU_E_UNKNOWN);
    assert_string_equal(m.candidates[0]->id, "rtx-6000-ada");
    assert_int_equal(mfu_device_match_name("RTX", &m, &err), MFU_E_UNKNOWN);
    assert_int_equal(mfu_device_match_name("4090", &m, &err), MFU_E_UNKNOWN);
    assert_string_equal(m.candidates[0]->id, "rtx-4090");
    assert_int_equal(mfu_device_match_name("v5", &m, &err), MFU_E_UNKNOWN); /* v5e or v5p? */
    assert_string_equal(m.candidates[0]->id, "tpu-v5e");
    assert_string_equal(m.candidates[1]->id, "tpu-v5p");
    /* ...and the query may not add words the name lacks */
    assert_int_equal(mfu_device_match_name("H100 NVL PCIe", &m, &err), MFU_E_UNKNOWN);
}

static void unknown_names(void **state)
{
    (void)state;
    mfu_device_match m;
    mfu_error err = {0};
    assert_int_equal(mfu_device_match_name("MI300", &m, &err), MFU_E_UNKNOWN);
    assert_null(m.device);
    assert_int_equal(m.kind, MFU_DEVICE_MATCH_NONE);
    assert_int_equal(m.ncandidates, 3);
    assert_string_equal(m.candidates[0]->id, "mi300x"); /* one edit away */
    assert_non_null(strstr(err.message, "unknown device 'MI300'"));
    assert_non_null(strstr(err.message, "closest: mi300x"));
    assert_non_null(strstr(err.message, "--peak-tflops"));
    assert_string_equal(err.field, "device");
    assert_one_line(err.message);

    assert_int_equal(mfu_device_match_name("NVIDIA H900", &m, &err), MFU_E_UNKNOWN);
    assert_non_null(strstr(err.message, "closest: h"));
    assert_true(m.candidates[0]->id[0] == 'h');
    assert_int_equal(mfu_device_match_name("MI250", &m, &err), MFU_E_UNKNOWN); /* not MI250X */
    assert_string_equal(m.candidates[0]->id, "mi250x");
    assert_int_equal(mfu_device_match_name("Apple M3 Max", &m, &err), MFU_E_UNKNOWN);
    /* names next to the entries added later, never silently read as them */
    assert_int_equal(mfu_device_match_name("T40", &m, &err), MFU_E_UNKNOWN);
    assert_null(m.device);
    assert_int_equal(mfu_device_match_name("NVIDIA T4G", &m, &err), MFU_E_UNKNOWN);
    assert_string_equal(m.candidates[0]->id, "t4");
    assert_int_equal(mfu_device_match_name("MI350", &m, &err), MFU_E_UNKNOWN);
    assert_string_equal(m.candidates[0]->id, "mi350x");
    assert_int_equal(mfu_device_match_name("V100SXM", &m, &err), MFU_E_UNKNOWN);
    /* the RTX PRO 6000 Blackwell is not in the table (no per-dtype NVIDIA figure found): its
     * driver names are unknown, not the RTX 6000 Ada */
    assert_int_equal(
        mfu_device_match_name("NVIDIA RTX PRO 6000 Blackwell Server Edition", &m, &err),
        MFU_E_UNKNOWN);
    assert_null(m.device);
    assert_non_null(strstr(err.message, "--peak-tflops"));
    assert_one_line(err.message);
    assert_int_equal(
        mfu_device_match_name("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", &m, &err),
        MFU_E_UNKNOWN);
    assert_int_equal(mfu_device_match_name("RTX PRO 6000", &m, &err), MFU_E_UNKNOWN);

    /* find() reduces to the entry and clears *out on failure */
    const mfu_device_info *d = mfu_device_at(0);
    assert_int_equal(mfu_device_find("MI300", &d, &err), MFU_E_UNKNOWN);
    assert_null(d);
    assert_int_equal(mfu_device_find("H100", &d, NULL), MFU_E_AMBIGUOUS);
    assert_null(d);
}

static void bad_names_and_limits(void **state)
{
    (void)state;
    mfu_device_match m;
    mfu_error err = {0};
    const mfu_device_info *d = NULL;
    assert_int_equal(mfu_device_match_name(NULL, &m, &err), MFU_E_INVALID);
    assert_null(m.device);
    assert_int_equal(mfu_device_match_name("h100-sxm", NULL, &err), MFU_E_INVALID);
    assert_int_equal(mfu_device_find("h100-sxm", NULL, &err), MFU_E_INVALID);
    assert_int_equal(mfu_device_match_name("", &m, &err), MFU_E_INVALID);
    assert_int_equal(mfu_device_match_name(" -_/ ", &m, &err), MFU_E_INVALID);
    assert_int_equal(mfu_device_match_name("NVIDIA GeForce", &m, &err), MFU_E_INVALID);
    assert_non_null(strstr(err.message, "names no model"));
    assert_int_equal(mfu_device_match_name("\x01\xff\n\t", &m, &err), MFU_E_INVALID);
    assert_one_line(err.message);

    /* MFU_DEVICE_NAME_MAX bytes pass the limit; one more does not */
    char name[MFU_DEVICE_NAME_MAX + 2];
    memset(name, 'z', MFU_DEVICE_NAME_MAX);
    name[MFU_DEVICE_NAME_MAX] = '\0';
    assert_int_equal(mfu_device_match_name(name, &m, &err), MFU_E_UNKNOWN);
    assert_one_line(err.message);
    assert_true(strlen(err.message) < MFU_ERROR_MESSAGE_MAX - 1); /* not truncated */
    name[MFU_DEVICE_NAME_MAX] = 'z';
    name[MFU_DEVICE_NAME_MAX + 1] = '\0';
    assert_int_equal(mfu_device_match_name(name, &m, &err), MFU_E_LIMIT);
    assert_non_null(strstr(err.message, "256 bytes"));
    assert_one_line(err.message);

    /* MFU_DEVICE_NAME_WORDS_MAX words pass; one more does not (vendor words do not count) */
    char many[512] = "NVIDIA";
    for (int i = 0; i < MFU_DEVICE_NAME_WORDS_MAX; i++)
        strncat(many, " h100", sizeof many - strlen(many) - 1);
    assert_int_equal(mfu_device_match_name(many, &m, &err), MFU_E_AMBIGUOUS);
    strncat(many, " h100", sizeof many - strlen(many) - 1);
    assert_int_equal(mfu_device_match_name(many, &m, &err), MFU_E_LIMIT);

    /* digits-only names are words like any other */
    assert_int_equal(mfu_device_find("8", &d, &err), MFU_E_UNKNOWN);
    assert_null(d);
}

/* ---- peak lookup ------------------------------------------------------------------------ */

static void peak_lookup(void **state)
{
    (void)state;
    const mfu_device_info *h100 = must_find("h100-sxm");
    double v = -1;
    assert_int_equal(mfu_device_peak_flops_per_s(h100, MFU_DTYPE_BF16, false, &v, NULL), MFU_OK);
    assert_true(v == 989.5e12);
    assert_int_equal(mfu_device_peak_flops_per_s(h100, MFU_DTYPE_BF16, true, &v, NULL), MFU_OK);
    assert_true(v == 1979e12);

    /* no bf16 on Volta: the message names what the entry has and the flags to use */
    mfu_error err = {0};
    v = -1;
    const mfu_device_info *v100 = must_find("v100-sxm2");
    assert_int_equal(mfu_device_peak_flops_per_s(v100, MFU_DTYPE_BF16, false, &v, &err),
                     MFU_E_UNSUPPORTED);
    assert_true(v == -1);
    assert_non_null(strstr(err.message, "v100-sxm2 has no dense bf16"));
    assert_non_null(strstr(err.message, "fp64, fp32, fp16"));
    assert_non_null(strstr(err.message, "--dtype"));
    assert_non_null(strstr(err.message, "--peak-tflops"));
    assert_one_line(err.message);

    /* no bf16 on Turing either: the T4 names fp16 */
    assert_int_equal(mfu_device_peak_flops_per_s(must_find("t4"), MFU_DTYPE_BF16, false, &v, &err),
                     MFU_E_UNSUPPORTED);
    assert_non_null(strstr(err.message, "t4 has no dense bf16"));
    assert_non_null(strstr(err.message, "fp32, fp16, int8"));
    assert_int_equal(mfu_device_peak_flops_per_s(must_find("t4"), MFU_DTYPE_FP16, false, &v, &err),
                     MFU_OK);
    assert_true(v == 65e12);
    assert_int_equal(
        mfu_device_peak_flops_per_s(must_find("mi350x"), MFU_DTYPE_FP32, false, &v, &err),
        MFU_E_UNSUPPORTED);
    assert_non_null(strstr(err.message, "bf16, fp16, fp8"));

    /* no sparse figure on a TPU */
    assert_int_equal(
        mfu_device_peak_flops_per_s(must_find("tpu-v5p"), MFU_DTYPE_BF16, true, &v, &err),
        MFU_E_UNSUPPORTED);
    assert_non_null(strstr(err.message, "sparse figures: none"));
    /* no sparse fp64 on H100 */
    assert_int_equal(mfu_device_peak_flops_per_s(h100, MFU_DTYPE_FP64, true, &v, &err),
                     MFU_E_UNSUPPORTED);
    assert_non_null(strstr(err.message, "tf32, bf16, fp16, fp8, int8"));

    assert_int_equal(mfu_device_peak_flops_per_s(NULL, MFU_DTYPE_BF16, false, &v, &err),
                     MFU_E_INVALID);
    assert_int_equal(mfu_device_peak_flops_per_s(h100, MFU_DTYPE_BF16, false, NULL, &err),
                     MFU_E_INVALID);
    assert_int_equal(mfu_device_peak_flops_per_s(h100, MFU_DTYPE_COUNT, false, &v, &err),
                     MFU_E_INVALID);
    assert_int_equal(mfu_device_peak_flops_per_s(h100, (mfu_dtype)-3, false, &v, &err),
                     MFU_E_INVALID);

    /* every entry answers its own main dtype, dense */
    for (size_t i = 0; i < mfu_device_count(); i++) {
        const mfu_device_info *d = mfu_device_at(i);
        mfu_dtype t = d->dense_flops_per_s[MFU_DTYPE_BF16] > 0 ? MFU_DTYPE_BF16 : MFU_DTYPE_FP16;
        assert_int_equal(mfu_device_peak_flops_per_s(d, t, false, &v, NULL), MFU_OK);
        assert_true(v > 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dtype_names_round_trip),
        cmocka_unit_test(dtype_parse_spellings),
        cmocka_unit_test(dtype_parse_rejects),
        cmocka_unit_test(enumeration),
        cmocka_unit_test(ids_unique_and_well_formed),
        cmocka_unit_test(every_name_finds_its_entry),
        cmocka_unit_test(every_entry_sane),
        cmocka_unit_test(published_peaks),
        cmocka_unit_test(peaks_from_units_and_clocks),
        cmocka_unit_test(reported_names),
        cmocka_unit_test(traps),
        cmocka_unit_test(unknown_names),
        cmocka_unit_test(bad_names_and_limits),
        cmocka_unit_test(peak_lookup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
