/*
 * test_cpu.c - unit tests of the CPU peak (src/device/cpu.c), the matrix kernels
 * (src/device/gemm.c) and the probe (src/device/probe.c).
 *
 * The peak tests feed fixed inputs - /proc/cpuinfo samples in tests/data/cpuinfo (written for
 * these tests in the kernel's layout) and hand-filled mfu_cpu_info structs standing for CPUID
 * feature sets - so their results never depend on the machine running them. Only the last
 * group touches this machine (detection, the device entry, the probe), with loose bounds and
 * never a wall-time assertion.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/cpu_internal.h"
#include "mfu/mfu.h"

static int near(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fabs(b);
}

static void assert_one_line(const char *msg)
{
    assert_true(msg[0] != '\0');
    for (const char *p = msg; *p; p++)
        assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
}

/* The whole of tests/data/cpuinfo/NAME (malloc'd, *len bytes). */
static char *load(const char *name, size_t *len)
{
    const char *dir = getenv("MFU_TEST_DATA");
    char path[512];
    snprintf(path, sizeof path, "%s/cpuinfo/%s", dir ? dir : "tests/data", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    char *buf = malloc(1 << 16);
    assert_non_null(buf);
    *len = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    buf[*len] = '\0';
    return buf;
}

static mfu_cpu_info parse_file(const char *name)
{
    size_t len;
    char *text = load(name, &len);
    mfu_cpu_info info;
    mfu_error err = {0};
    if (mfu_cpu_info_parse(text, len, &info, &err) != MFU_OK)
        fail_msg("%s: %s", name, err.message);
    free(text);
    return info;
}

static mfu_cpu_peak must_peak(const mfu_cpu_info *info)
{
    mfu_cpu_peak p;
    mfu_error err = {0};
    if (mfu_cpu_peak_compute(info, &p, &err) != MFU_OK)
        fail_msg("peak: %s", err.message);
    assert_one_line(p.rule);
    return p;
}

/* An x86 core as CPUID would describe it. */
static mfu_cpu_info x86(const char *vendor, int family, int model, const char *name,
                        uint32_t features, int cores, double hz)
{
    mfu_cpu_info i;
    memset(&i, 0, sizeof i);
    i.arch = MFU_CPU_ARCH_X86_64;
    snprintf(i.vendor, sizeof i.vendor, "%s", vendor);
    snprintf(i.model_name, sizeof i.model_name, "%s", name);
    i.family = family;
    i.model = model;
    i.stepping = 0;
    i.implementer = i.part = -1;
    i.features = features;
    i.features_source = "cpuid";
    i.logical_cpus = cores;
    i.logical_source = "sysconf";
    i.physical_cores = cores;
    i.cores_source = "/proc/cpuinfo core ids";
    i.clock_hz = hz;
    i.clock_source = "cpuinfo_max_freq";
    return i;
}

#define AVX2_FMA (MFU_CPU_SSE2 | MFU_CPU_AVX | MFU_CPU_AVX2 | MFU_CPU_FMA)
#define AVX512 (AVX2_FMA | MFU_CPU_AVX512F)

/* ---- /proc/cpuinfo samples ---------------------------------------------------------------- */

/* A 2-CPU slice of a Zen 4 (Ryzen 7600X) at 3.7 GHz: 2 cores x 3.7e9 x 32 fp32 FLOP/cycle. */
static void zen4_sample(void **state)
{
    (void)state;
    mfu_cpu_info i = parse_file("zen4_2core.txt");
    assert_int_equal(i.arch, MFU_CPU_ARCH_X86_64);
    assert_string_equal(i.vendor, "AuthenticAMD");
    assert_string_equal(i.model_name, "AMD Ryzen 5 7600X 6-Core Processor");
    assert_int_equal(i.family, 25);
    assert_int_equal(i.model, 97);
    assert_int_equal(i.stepping, 2);
    assert_int_equal(i.logical_cpus, 2);
    assert_string_equal(i.logical_source, "/proc/cpuinfo");
    assert_int_equal(i.physical_cores, 2);
    assert_string_equal(i.cores_source, "/proc/cpuinfo core ids");
    assert_true(near(i.clock_hz, 3.7e9, 1e-12));
    assert_string_equal(i.clock_source, "cpu MHz");
    assert_string_equal(i.features_source, "/proc/cpuinfo flags");
    uint32_t want = MFU_CPU_SSE2 | MFU_CPU_AVX | MFU_CPU_AVX2 | MFU_CPU_FMA | MFU_CPU_AVX512F |
                    MFU_CPU_AVX512_BF16;
    assert_int_equal(i.features, want); /* no AMX, no NEON/SVE from x86 flags */
    assert_false(i.hybrid);

    mfu_cpu_peak p = must_peak(&i);
    assert_string_equal(p.core, "AMD Zen 4");
    assert_true(p.known_core);
    assert_int_equal(p.cores, 2);
    assert_int_equal(p.fma_units, 2);
    assert_int_equal(p.fma_bits, 256);
    assert_int_equal(p.isa_bits, 512);
    assert_true(near(p.flops_per_cycle_per_core[MFU_DTYPE_FP32], 32, 0));
    assert_true(near(p.flops_per_cycle_per_core[MFU_DTYPE_FP64], 16, 0));
    assert_true(near(p.dense_flops_per_s[MFU_DTYPE_FP32], 2 * 3.7e9 * 32, 1e-12));
    assert_true(near(p.dense_flops_per_s[MFU_DTYPE_FP64], 2 * 3.7e9 * 16, 1e-12));
    /* AVX512_BF16: two bf16 products per fp32 lane at the FMA rate */
    assert_true(near(p.dense_flops_per_s[MFU_DTYPE_BF16], 2 * 3.7e9 * 64, 1e-12));
    assert_true(p.dense_flops_per_s[MFU_DTYPE_INT8] == 0);
    assert_true(p.dense_flops_per_s[MFU_DTYPE_FP16] == 0);
    assert_true(p.dense_flops_per_s[MFU_DTYPE_TF32] == 0);
    assert_non_null(strstr(p.rule, "Zen 4"));
    assert_non_null(strstr(p.rule, "cpu MHz"));
    assert_non_null(strstr(p.rule, "AVX512_BF16"));
    assert_null(strstr(p.rule, "not in mfu's table"));
    assert_non_null(strstr(p.source, "Family 19h"));
}

/* Skylake-SP Gold 6148 (2 FMA units), 2 cores with 2 threads each, at 2.4 GHz. */
static void skx_sample(void **state)
{
    (void)state;
    mfu_cpu_info i = parse_file("skx_gold6148_2c4t.txt");
    assert_string_equal(i.vendor, "GenuineIntel");
    assert_int_equal(i.family, 6);
    assert_int_equal(i.model, 85);
    assert_int_equal(i.logical_cpus, 4);
    assert_int_equal(i.physical_cores, 2); /* hyperthreads counted once */
    assert_true((i.features & AVX512) == AVX512);
    assert_false(i.features & MFU_CPU_AVX512_BF16);
    mfu_cpu_peak p = must_peak(&i);
    assert_true(p.known_core);
    assert_non_null(strstr(p.core, "2 FMA units"));
    assert_int_equal(p.fma_units, 2);
    assert_int_equal(p.fma_bits, 512);
    /* 2 cores x 2.4 GHz x 2 units x 16 lanes x 2 */
    assert_true(near(p.dense_flops_per_s[MFU_DTYPE_FP32], 2 * 2.4e9 * 64, 1e-12));
    assert_true(near(p.dense_flops_per_s[MFU_DTYPE_FP64], 2 * 2.4e9 * 32, 1e-12));
    assert_true(p.dense_flops_per_s[MFU_DTYPE_BF16] == 0); /* no bf16 instruction */
    assert_non_null(strstr(p.source, "ARK"));
}

/* Graviton2-like: Neoverse N1, 4 CPUs, no core ids, no clock in /proc/cpuinfo. */
static void neoverse_n1_sample(void **state)
{
    (void)state;
    mfu_cpu_info i = parse_file("neoverse_n1_4cpu.txt");
    assert_int_equal(i.arch, MFU_CPU_ARCH_AARCH64);
    assert_string_equal(i.vendor, "ARM");
    assert_int_equal(i.implementer, 0x41);
    assert_int_equal(i.part, 0xd0c);
    assert_int_equal(i.family, -1);
    assert_int_equal(i.features, MFU_CPU_NEON);
    assert_string_equal(i.features_source, "/proc/cpuinfo Features");
    assert_int_equal(i.logical_cpus, 4);
    assert_int_equal(i.physical_cores, 0);
    assert_string_equal(i.cores_source, "none");
    assert_true(i.clock_hz == 0);
    assert_string_equal(i.clock_source, "none");
    assert_non_null(strstr(i.model_name, "part 0xd0c"));

    /* no clock: a named error, never a silent number */
    mfu_cpu_peak p;
    mfu_error err = {0};
    assert_int_equal(mfu_cpu_peak_compute(&i, &p, &err), MFU_E_MISSING);
    assert_string_equal(err.field, "clock");
    assert_non_null(strstr(err.message, "--peak-tflops"));
    assert_one_line(err.message);
    assert_true(p.dense_flops_per_s[MFU_DTYPE_FP32] == 0 && p.rule[0] == '\0');

    /* the caller supplies the clock: 4 logical CPUs x 2.5 GHz x 2 x 4 lanes x 2 */
    i.clock_hz = 2.5e9;
    i.clock_source = "given";
    p = must_peak(&i);
    assert_string_equal(p.core, "Arm Neoverse N1");
    assert_int_equal(p.cores, 4);
    assert_true(near(p.dense_flops_per_s[MFU_DTYPE_FP32], 4 * 2.5e9 * 16, 1e-12));
    assert_true(near(p.dense_flops_per_s[MFU_DTYPE_FP64], 4 * 2.5e9 * 8, 1e-12));
    assert_true(p.dense_flops_per_s[MFU_DTYPE_BF16] == 0);
    assert_non_null(strstr(p.rule, "logical CPUs"));
    assert_non_null(strstr(p.rule, "SMT"));
    assert_non_null(strstr(p.rule, "given by the caller"));
}

/* Graviton3-like: Neoverse V1 with SVE, four 128-bit pipes. */
static void neoverse_v1_sample(void **state)
{
    (void)state;
    mfu_cpu_info i = parse_file("neoverse_v1_2cpu.txt");
    assert_int_equal(i.features, MFU_CPU_NEON | MFU_CPU_SVE);
    assert_int_equal(i.part, 0xd40);
    i.clock_hz = 2.6e9;
    mfu_cpu_peak p = must_peak(&i);
    assert_string_equal(p.core, "Arm Neoverse V1");
    assert_true(near(p.flops_per_cycle_per_core[MFU_DTYPE_FP32], 32, 0));
    assert_true(near(p.dense_flops_per_s[MFU_DTYPE_FP64], 2 * 2.6e9 * 16, 1e-12));
}

/* Old arm64 kernels print "Processor : ..." before the entries; big.LITTLE mixes parts. */
static void arm_layouts(void **state)
{
    (void)state;
    const char *text = "Processor\t: AArch64 Processor rev 4 (aarch64)\n"
                       "processor\t: 0\nprocessor\t: 1\n"
                       "Features\t: fp asimd evtstrm\nCPU implementer\t: 0x41\n"
                       "CPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd03\n"
                       "CPU revision\t: 4\n\n"
                       "processor\t: 2\nFeatures\t: fp asimd evtstrm\nCPU implementer\t: 0x41\n"
                       "CPU architecture: 8\nCPU part\t: 0xd09\n\nHardware\t: Vendor SoC\n";
    mfu_cpu_info i;
    assert_int_equal(mfu_cpu_info_parse(text, strlen(text), &i, NULL), MFU_OK);
    assert_int_equal(i.logical_cpus, 3);
    assert_int_equal(i.arch, MFU_CPU_ARCH_AARCH64);
    assert_int_equal(i.part, 0xd03);
    assert_true(i.hybrid); /* parts 0xd03 and 0xd09: two kinds of core */
    i.clock_hz = 2e9;
    mfu_cpu_peak p = must_peak(&i);
    assert_false(p.known_core);
    assert_non_null(strstr(p.rule, "hybrid"));
    assert_non_null(strstr(p.rule, "not in mfu's table"));
    assert_true(near(p.flops_per_cycle_per_core[MFU_DTYPE_FP32], 8, 0)); /* 1 x 128-bit */

    /* 32-bit ARM is not aarch64 */
    const char *arm32 = "processor\t: 0\nFeatures\t: half thumb fastmult vfp edsp neon\n"
                        "CPU implementer\t: 0x41\nCPU architecture: 7\nCPU part\t: 0xc07\n";
    assert_int_equal(mfu_cpu_info_parse(arm32, strlen(arm32), &i, NULL), MFU_OK);
    assert_int_equal(i.arch, MFU_CPU_ARCH_UNKNOWN);
}

/* The clock from the model name when there is no "cpu MHz". */
static void clock_from_model_name(void **state)
{
    (void)state;
    const char *ghz = "processor : 0\nvendor_id : GenuineIntel\n"
                      "model name : Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz\n";
    mfu_cpu_info i;
    assert_int_equal(mfu_cpu_info_parse(ghz, strlen(ghz), &i, NULL), MFU_OK);
    assert_true(near(i.clock_hz, 2.4e9, 1e-12));
    assert_string_equal(i.clock_source, "model name");
    const char *mhz = "processor : 0\nmodel name : Some CPU @ 800MHz\n";
    assert_int_equal(mfu_cpu_info_parse(mhz, strlen(mhz), &i, NULL), MFU_OK);
    assert_true(near(i.clock_hz, 8e8, 1e-12));
    const char *none = "processor : 0\nmodel name : Some CPU @ fast\n";
    assert_int_equal(mfu_cpu_info_parse(none, strlen(none), &i, NULL), MFU_OK);
    assert_true(i.clock_hz == 0);
    assert_string_equal(i.clock_source, "none");
    /* "cpu MHz" wins over the model name */
    const char *both = "processor : 0\nmodel name : X @ 2.00GHz\ncpu MHz : 3000.5\n";
    assert_int_equal(mfu_cpu_info_parse(both, strlen(both), &i, NULL), MFU_OK);
    assert_true(near(i.clock_hz, 3.0005e9, 1e-12));
    assert_string_equal(i.clock_source, "cpu MHz");
}

/* ---- fixed feature sets: the table and the default ----------------------------------------- */

static void skylake_sp_by_sku(void **state)
{
    (void)state;
    struct {
        const char *name;
        int units; /* 0: not decided by the name -> default */
    } cases[] = {
        {"Intel(R) Xeon(R) Platinum 8180 CPU @ 2.50GHz", 2},
        {"Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz", 2},
        {"Intel(R) Xeon(R) Gold 5122 CPU @ 3.60GHz", 2},
        {"Intel(R) Xeon(R) Gold 5120 CPU @ 2.20GHz", 1},
        {"Intel(R) Xeon(R) Silver 4114 CPU @ 2.20GHz", 1},
        {"Intel(R) Xeon(R) Bronze 3104 CPU @ 1.70GHz", 1},
        {"Intel Xeon Processor (Skylake, IBRS)", 0},
    };
    for (size_t k = 0; k <= sizeof cases / sizeof cases[0]; k++) {
        bool cpl = k == sizeof cases / sizeof cases[0]; /* a Cooper Lake Gold 5: no source */
        mfu_cpu_info i = x86("GenuineIntel", 6, 0x55,
                             cpl ? "Intel(R) Xeon(R) Gold 5318H CPU @ 2.50GHz" : cases[k].name,
                             cpl ? AVX512 | MFU_CPU_AVX512_BF16 : AVX512, 4, 2e9);
        if (cpl) {
            mfu_cpu_peak p = must_peak(&i);
            assert_false(p.known_core);
            assert_true(p.flops_per_cycle_per_core[MFU_DTYPE_FP32] == 32);
            continue;
        }
        mfu_cpu_peak p = must_peak(&i);
        /* one 512-bit unit: 32 fp32 FLOP/cycle; two: 64. The default for an unknown AVX-512
         * core is the one-unit rate, stated. */
        double want = cases[k].units == 2 ? 64 : 32;
        if (!near(p.flops_per_cycle_per_core[MFU_DTYPE_FP32], want, 0))
            fail_msg("%s: %g FLOP/cycle", cases[k].name,
                     p.flops_per_cycle_per_core[MFU_DTYPE_FP32]);
        assert_int_equal(p.known_core, cases[k].units != 0);
        if (cases[k].units == 0)
            assert_non_null(strstr(p.rule, "not in mfu's table"));
    }
}

static void known_cores(void **state)
{
    (void)state;
    struct {
        mfu_cpu_info info;
        const char *core;
        double fp32, fp64, bf16, int8; /* FLOP/cycle per core */
    } cases[] = {
        {x86("GenuineIntel", 6, 0x3F, "Xeon E5-2699 v3", AVX2_FMA, 1, 2e9), "Intel Haswell-E", 32,
         16, 0, 0},
        {x86("GenuineIntel", 6, 0x9E, "Core i7-8700K", AVX2_FMA, 1, 2e9), "Intel Kaby/Coffee Lake",
         32, 16, 0, 0},
        {x86("GenuineIntel", 6, 0x2A, "Core i7-2600", MFU_CPU_SSE2 | MFU_CPU_AVX, 1, 2e9),
         "Intel Sandy Bridge", 16, 8, 0, 0},
        {x86("GenuineIntel", 6, 0x8C, "Core i7-1165G7", AVX512, 1, 2e9), "Intel Tiger Lake", 32, 16,
         0, 0},
        {x86("GenuineIntel", 6, 0x6A, "Xeon Platinum 8380", AVX512, 1, 2e9), "Intel Ice Lake-SP",
         64, 32, 0, 0},
        {x86("GenuineIntel", 6, 0x8F, "Xeon Platinum 8480+",
             AVX512 | MFU_CPU_AVX512_BF16 | MFU_CPU_AMX_TILE | MFU_CPU_AMX_BF16 | MFU_CPU_AMX_INT8,
             1, 2e9),
         "Intel Sapphire Rapids", 64, 32, 1024, 2048},
        {x86("AuthenticAMD", 0x17, 0x08, "Ryzen 7 2700X", AVX2_FMA, 1, 2e9), "AMD Zen/Zen+", 16, 8,
         0, 0},
        {x86("AuthenticAMD", 0x17, 0x31, "EPYC 7742", AVX2_FMA, 1, 2e9), "AMD Zen 2", 32, 16, 0, 0},
        {x86("AuthenticAMD", 0x19, 0x01, "EPYC 7763", AVX2_FMA, 1, 2e9), "AMD Zen 3", 32, 16, 0, 0},
        {x86("AuthenticAMD", 0x19, 0x11, "EPYC 9654", AVX512 | MFU_CPU_AVX512_BF16, 1, 2e9),
         "AMD Zen 4", 32, 16, 64, 0},
        {x86("AuthenticAMD", 0x1A, 0x02, "EPYC 9755", AVX512 | MFU_CPU_AVX512_BF16, 1, 2e9),
         "AMD Zen 5", 64, 32, 128, 0},
        {x86("AuthenticAMD", 0x1A, 0x02, "AMD EPYC", AVX512 | MFU_CPU_AVX512_BF16, 1, 2e9),
         "AMD Zen 5", 64, 32, 128, 0},
        {x86("AuthenticAMD", 0x1A, 0x44, "Ryzen 9 9950X", AVX512 | MFU_CPU_AVX512_BF16, 1, 2e9),
         "AMD Zen 5", 64, 32, 128, 0},
        {x86("AuthenticAMD", 0x1A, 0x24, "AMD Ryzen AI 9 HX 370", AVX512 | MFU_CPU_AVX512_BF16, 1,
             2e9),
         "AMD Zen 5", 32, 16, 64, 0},
        {x86("GenuineIntel", 6, 0x97, "Core i9-12900K", AVX2_FMA, 1, 2e9),
         "Intel Alder Lake (hybrid)", 16, 8, 0, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mfu_cpu_peak p = must_peak(&cases[k].info);
        const double *f = p.flops_per_cycle_per_core;
        if (strcmp(p.core, cases[k].core) != 0 || !p.known_core ||
            f[MFU_DTYPE_FP32] != cases[k].fp32 || f[MFU_DTYPE_FP64] != cases[k].fp64 ||
            f[MFU_DTYPE_BF16] != cases[k].bf16 || f[MFU_DTYPE_INT8] != cases[k].int8)
            fail_msg("%s: got %s fp32 %g fp64 %g bf16 %g int8 %g", cases[k].core, p.core,
                     f[MFU_DTYPE_FP32], f[MFU_DTYPE_FP64], f[MFU_DTYPE_BF16], f[MFU_DTYPE_INT8]);
        /* one core at 2 GHz: the whole-CPU figure is 2e9 x FLOP/cycle */
        assert_true(near(p.dense_flops_per_s[MFU_DTYPE_FP32], 2e9 * cases[k].fp32, 1e-12));
    }
    /* the rules carry the assumptions */
    mfu_cpu_peak p = must_peak(&cases[14].info);
    assert_non_null(strstr(p.rule, "E-core"));
    p = must_peak(&cases[11].info); /* Zen 5 in a VM ("AMD EPYC"): a server part */
    assert_non_null(strstr(p.rule, "desktop or server part: 512-bit"));
    p = must_peak(&cases[13].info); /* Zen 5 mobile */
    assert_non_null(strstr(p.rule, "mobile part: AVX-512 runs on 256-bit"));
    p = must_peak(&cases[5].info);
    assert_non_null(strstr(p.rule, "AMX"));
    assert_non_null(strstr(p.rule, "maximum (turbo) clock"));
}

static void unknown_core_default(void **state)
{
    (void)state;
    struct {
        mfu_cpu_info info;
        double fp32, fp64;
    } cases[] = {
        {x86("GenuineIntel", 6, 0x99, "Future Core", AVX512, 8, 3e9), 32, 16},
        {x86("GenuineIntel", 6, 0x99, "Future Core", AVX2_FMA, 8, 3e9), 16, 8},
        {x86("CentaurHauls", 7, 0x1b, "Zhaoxin", AVX2_FMA, 8, 3e9), 16, 8},
        {x86("AuthenticAMD", 0x15, 0x02, "Opteron 6380", MFU_CPU_SSE2, 8, 3e9), 8, 4},
        {x86("GenuineIntel", 6, 0x3F, "no features known", 0, 8, 3e9), 32, 16}, /* table wins */
    };
    cases[4].info.features_source = "none";
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mfu_cpu_peak p = must_peak(&cases[k].info);
        assert_true(near(p.flops_per_cycle_per_core[MFU_DTYPE_FP32], cases[k].fp32, 0));
        assert_true(near(p.flops_per_cycle_per_core[MFU_DTYPE_FP64], cases[k].fp64, 0));
        assert_true(near(p.dense_flops_per_s[MFU_DTYPE_FP32], 8 * 3e9 * cases[k].fp32, 1e-12));
        if (k < 4) {
            assert_false(p.known_core);
            assert_non_null(strstr(p.core, "unknown x86-64 core"));
            assert_non_null(strstr(p.rule, "not in mfu's table"));
            assert_non_null(strstr(p.rule, "--probe"));
            assert_non_null(strstr(p.source, "no source"));
        }
    }
    /* an architecture mfu does not know: one scalar FMA per cycle */
    mfu_cpu_info i = x86("", -1, -1, "", 0, 2, 1e9);
    i.arch = MFU_CPU_ARCH_UNKNOWN;
    mfu_cpu_peak p = must_peak(&i);
    assert_true(p.flops_per_cycle_per_core[MFU_DTYPE_FP32] == 2);
    assert_true(p.flops_per_cycle_per_core[MFU_DTYPE_FP64] == 2);
    assert_non_null(strstr(p.rule, "scalar"));
    /* an aarch64 core not in the table: one 128-bit pipe */
    i.arch = MFU_CPU_ARCH_AARCH64;
    i.implementer = 0x61; /* Apple */
    i.part = 0x22;
    p = must_peak(&i);
    assert_false(p.known_core);
    assert_true(p.flops_per_cycle_per_core[MFU_DTYPE_FP32] == 8);
}

static void peak_errors(void **state)
{
    (void)state;
    mfu_cpu_peak p;
    mfu_error err = {0};
    mfu_cpu_info i = x86("GenuineIntel", 6, 0x55, "Xeon Gold 6148", AVX512, 2, 2.4e9);
    assert_int_equal(mfu_cpu_peak_compute(NULL, &p, &err), MFU_E_INVALID);
    assert_true(p.rule[0] == '\0');
    assert_int_equal(mfu_cpu_peak_compute(&i, NULL, NULL), MFU_E_INVALID);

    mfu_cpu_info c = i;
    c.physical_cores = c.logical_cpus = 0;
    assert_int_equal(mfu_cpu_peak_compute(&c, &p, &err), MFU_E_MISSING);
    assert_string_equal(err.field, "cores");
    assert_one_line(err.message);

    double bad[] = {NAN, INFINITY, -1, 5e7, 2e10};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        c = i;
        c.clock_hz = bad[k];
        memset(&err, 0, sizeof err);
        assert_int_equal(mfu_cpu_peak_compute(&c, &p, &err), MFU_E_RANGE);
        assert_string_equal(err.field, "clock");
        assert_one_line(err.message);
        assert_true(p.dense_flops_per_s[MFU_DTYPE_FP32] == 0);
    }
    /* the limits themselves are accepted */
    c = i;
    c.clock_hz = MFU_CPU_CLOCK_MIN_HZ;
    assert_int_equal(mfu_cpu_peak_compute(&c, &p, NULL), MFU_OK);
    c.clock_hz = MFU_CPU_CLOCK_MAX_HZ;
    assert_int_equal(mfu_cpu_peak_compute(&c, &p, NULL), MFU_OK);
    c.physical_cores = MFU_CPU_LOGICAL_MAX;
    assert_int_equal(mfu_cpu_peak_compute(&c, &p, NULL), MFU_OK);
    c.physical_cores = MFU_CPU_LOGICAL_MAX + 1;
    assert_int_equal(mfu_cpu_peak_compute(&c, &p, &err), MFU_E_RANGE);
    assert_string_equal(err.field, "cores");
}

/* ---- parser limits and hostile text --------------------------------------------------------- */

static void parse_errors_and_limits(void **state)
{
    (void)state;
    mfu_cpu_info i;
    mfu_error err = {0};
    assert_int_equal(mfu_cpu_info_parse(NULL, 0, &i, &err), MFU_E_INVALID);
    assert_int_equal(mfu_cpu_info_parse("x", 1, NULL, &err), MFU_E_INVALID);
    assert_int_equal(mfu_cpu_info_parse("", 0, &i, &err), MFU_E_EMPTY);
    assert_one_line(err.message);
    assert_int_equal(i.logical_cpus, 0); /* cleared */
    assert_string_equal(i.clock_source, "none");
    const char *noproc = "vendor_id : GenuineIntel\nflags : avx\n";
    assert_int_equal(mfu_cpu_info_parse(noproc, strlen(noproc), &i, NULL), MFU_E_EMPTY);

    /* MFU_CPU_LOGICAL_MAX entries are counted, one more is the limit */
    size_t cap = (MFU_CPU_LOGICAL_MAX + 1) * 40 + 64;
    char *big = malloc(cap);
    assert_non_null(big);
    size_t len = 0;
    for (int k = 0; k < MFU_CPU_LOGICAL_MAX; k++)
        len += (size_t)snprintf(big + len, cap - len, "processor : %d\ncore id : %d\n", k, k);
    assert_int_equal(mfu_cpu_info_parse(big, len, &i, &err), MFU_OK);
    assert_int_equal(i.logical_cpus, MFU_CPU_LOGICAL_MAX);
    assert_int_equal(i.physical_cores, MFU_CPU_LOGICAL_MAX);
    len += (size_t)snprintf(big + len, cap - len, "processor : %d\n", MFU_CPU_LOGICAL_MAX);
    assert_int_equal(mfu_cpu_info_parse(big, len, &i, &err), MFU_E_LIMIT);
    assert_one_line(err.message);
    free(big);

    /* a line longer than MFU_CPU_LINE_MAX is skipped, the rest is read */
    size_t n = MFU_CPU_LINE_MAX + 64;
    char *longline = malloc(n + 64);
    assert_non_null(longline);
    len = (size_t)snprintf(longline, n + 64, "processor : 0\nflags : avx2");
    while (len < MFU_CPU_LINE_MAX + 20)
        longline[len++] = ' ';
    len += (size_t)snprintf(longline + len, n + 64 - len, "fma\ncpu MHz : 1000\n");
    assert_int_equal(mfu_cpu_info_parse(longline, len, &i, NULL), MFU_OK);
    assert_int_equal(i.features, 0);
    assert_string_equal(i.features_source, "none");
    assert_true(near(i.clock_hz, 1e9, 1e-12));
    free(longline);

    /* embedded NULs, no final newline, bad numbers, a huge model name */
    const char odd[] = "processor : 0\ncpu family : 6\0x\nmodel : -3\nstepping : 99999999999\n"
                       "cpu MHz : nan\ncore id : 1e3\nflags : avx\0512f fma";
    assert_int_equal(mfu_cpu_info_parse(odd, sizeof odd - 1, &i, NULL), MFU_OK);
    assert_int_equal(i.model, -1);
    assert_int_equal(i.stepping, -1);
    assert_true(i.clock_hz == 0);
    assert_int_equal(i.physical_cores, 0);
    assert_true(i.features & MFU_CPU_FMA);
    char name[400] = "processor : 0\nmodel name : ";
    size_t at = strlen(name);
    memset(name + at, 'A', 300);
    name[at + 300] = '\0';
    assert_int_equal(mfu_cpu_info_parse(name, strlen(name), &i, NULL), MFU_OK);
    assert_int_equal(strlen(i.model_name), MFU_CPU_TEXT_MAX - 1);
}

/* Every prefix of every sample, and random bytes: parsed without a crash (ASan/UBSan). */
static void parse_survives_anything(void **state)
{
    (void)state;
    const char *files[] = {"zen4_2core.txt", "skx_gold6148_2c4t.txt", "neoverse_n1_4cpu.txt",
                           "neoverse_v1_2cpu.txt"};
    mfu_cpu_info i;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        size_t len;
        char *text = load(files[f], &len);
        for (size_t cut = 0; cut <= len; cut += 7) {
            mfu_status st = mfu_cpu_info_parse(text, cut, &i, NULL);
            assert_true(st == MFU_OK || st == MFU_E_EMPTY);
            mfu_cpu_peak p;
            if (st == MFU_OK)
                (void)mfu_cpu_peak_compute(&i, &p, NULL);
        }
        free(text);
    }
    uint32_t s = 99;
    char buf[512];
    for (int round = 0; round < 300; round++) {
        for (size_t k = 0; k < sizeof buf; k++) {
            s = s * 1103515245u + 12345u;
            static const char alphabet[] = "processor:0123456789 \n\tflagsavxcore id@GHzMHz";
            buf[k] = (round % 2) ? (char)(s >> 24) : alphabet[(s >> 16) % (sizeof alphabet - 1)];
        }
        (void)mfu_cpu_info_parse(buf, sizeof buf, &i, NULL);
    }
}

static void feature_names(void **state)
{
    (void)state;
    assert_string_equal(mfu_cpu_feature_name(MFU_CPU_AVX512F), "avx512f");
    assert_string_equal(mfu_cpu_feature_name(MFU_CPU_AMX_BF16), "amx_bf16");
    assert_string_equal(mfu_cpu_feature_name(MFU_CPU_NEON), "neon");
    assert_null(mfu_cpu_feature_name(0));
    assert_null(mfu_cpu_feature_name(MFU_CPU_SSE2 | MFU_CPU_AVX));
    assert_null(mfu_cpu_feature_name(1u << MFU_CPU_FEATURE_COUNT));
}

/* ---- the kernels ---------------------------------------------------------------------------- */

/* Fill with values in [-1, 1). */
static void fill(double *d, float *f, size_t n, uint32_t *s)
{
    for (size_t k = 0; k < n; k++) {
        *s = *s * 1664525u + 1013904223u;
        double v = (double)(*s >> 8) / (double)(1u << 23) - 1.0;
        if (d)
            d[k] = v;
        if (f)
            f[k] = (float)v;
    }
}

/* C = A x B by every kernel this machine runs, against the naive product, with strides wider
 * than the rows and a sentinel in C's gap that must survive. */
static void gemm_matches_naive(void **state)
{
    (void)state;
    static const size_t shapes[][3] = {{1, 1, 1},    {5, 7, 3},    {6, 16, 1},   {8, 32, 9},
                                       {37, 45, 29}, {64, 64, 64}, {130, 33, 17}};
    int kernels_run = 0;
    for (int kern = 0; kern < MFU__GEMM_COUNT; kern++) {
        if (!mfu__gemm_supported((mfu__gemm_kernel)kern))
            continue;
        kernels_run++;
        for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
            size_t m = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2];
            size_t lda = k + 3, ldb = n + 2, ldc = n + 5;
            double *a = calloc(m * lda, 8), *b = calloc(k * ldb, 8), *c = malloc(m * ldc * 8),
                   *r = calloc(m * ldc, 8);
            float *af = calloc(m * lda, 4), *bf = calloc(k * ldb, 4), *cf = malloc(m * ldc * 4),
                  *rf = calloc(m * ldc, 4);
            double *w = malloc(mfu__gemm_work_elems(kern, m, n, k, 8) * 8);
            float *wf = malloc(mfu__gemm_work_elems(kern, m, n, k, 4) * 4);
            assert_true(a && b && c && r && af && bf && cf && rf && w && wf);
            uint32_t s = (uint32_t)(sh * 31 + 7);
            fill(a, af, m * lda, &s);
            fill(b, bf, k * ldb, &s);
            for (size_t x = 0; x < m * ldc; x++) {
                c[x] = -777.0;
                cf[x] = -777.0f;
            }
            mfu__gemm_f64((mfu__gemm_kernel)kern, m, n, k, a, lda, b, ldb, c, ldc, w);
            mfu__gemm_f32((mfu__gemm_kernel)kern, m, n, k, af, lda, bf, ldb, cf, ldc, wf);
            mfu__gemm_naive_f64(m, n, k, a, lda, b, ldb, r, ldc);
            mfu__gemm_naive_f32(m, n, k, af, lda, bf, ldb, rf, ldc);
            for (size_t i = 0; i < m; i++) {
                for (size_t j = 0; j < n; j++) {
                    /* rounding of k products in [-1, 1]: at most about k x epsilon */
                    double e64 = fabs(c[i * ldc + j] - r[i * ldc + j]);
                    double e32 = fabs((double)cf[i * ldc + j] - (double)rf[i * ldc + j]);
                    if (e64 > 4 * (double)k * 2.3e-16 || e32 > 4 * (double)k * 1.2e-7)
                        fail_msg("%s %zux%zux%zu at (%zu,%zu): f64 err %g, f32 err %g",
                                 mfu__gemm_kernel_name(kern), m, n, k, i, j, e64, e32);
                }
                for (size_t j = n; j < ldc; j++) /* the gap between rows is not written */
                    assert_true(c[i * ldc + j] == -777.0 && cf[i * ldc + j] == -777.0f);
            }
            free(a), free(b), free(c), free(r), free(af), free(bf), free(cf), free(rf);
            free(w), free(wf);
        }
    }
    assert_true(kernels_run >= 1);
    assert_true(mfu__gemm_supported(mfu__gemm_best()));
    assert_string_equal(mfu__gemm_kernel_name(MFU__GEMM_AVX2), "avx2+fma");
    assert_string_equal(mfu__gemm_kernel_name(MFU__GEMM_COUNT), "?");
    /* a known product: [1 2; 3 4] x [5 6; 7 8] = [19 22; 43 50] */
    double a2[4] = {1, 2, 3, 4}, b2[4] = {5, 6, 7, 8}, c2[4];
    double *w2 = malloc(mfu__gemm_work_elems(mfu__gemm_best(), 2, 2, 2, 8) * 8);
    assert_non_null(w2);
    mfu__gemm_f64(mfu__gemm_best(), 2, 2, 2, a2, 2, b2, 2, c2, 2, w2);
    assert_true(c2[0] == 19 && c2[1] == 22 && c2[2] == 43 && c2[3] == 50);
    free(w2);
}

/* ---- this machine --------------------------------------------------------------------------- */

static void detect_this_machine(void **state)
{
    (void)state;
    mfu_cpu_info i;
    mfu_error err = {0};
    assert_int_equal(mfu_cpu_detect(NULL, &err), MFU_E_INVALID);
    assert_int_equal(mfu_cpu_detect(&i, &err), MFU_OK);
    assert_true(i.logical_cpus >= 1);
    assert_true(i.physical_cores >= 0 && i.physical_cores <= i.logical_cpus);
    assert_true((i.clock_hz > 0) == (strcmp(i.clock_source, "none") != 0));
#if defined(__x86_64__)
    assert_int_equal(i.arch, MFU_CPU_ARCH_X86_64);
    assert_true(i.features & MFU_CPU_SSE2); /* part of x86-64 */
    assert_true(i.family > 0);
#endif
}

static void cpu_device_entry(void **state)
{
    (void)state;
    mfu_cpu_info i;
    mfu_cpu_peak p;
    assert_int_equal(mfu_cpu_detect(&i, NULL), MFU_OK);
    mfu_device_slot *slot = malloc(sizeof *slot);
    assert_non_null(slot);
    const mfu_device_info *d = (const mfu_device_info *)1;
    mfu_error err = {0};
    assert_int_equal(mfu_cpu_device(NULL, &d, &err), MFU_E_INVALID);
    assert_null(d);
    if (mfu_cpu_peak_compute(&i, &p, NULL) != MFU_OK) {
        /* no clock on this machine: the entry fails the same way */
        assert_int_not_equal(mfu_cpu_device(slot, &d, &err), MFU_OK);
        assert_null(d);
        free(slot);
        skip();
    }
    assert_int_equal(mfu_cpu_device(slot, &d, &err), MFU_OK);
    assert_ptr_equal(d, &slot->info);
    assert_string_equal(d->id, "cpu");
    assert_string_equal(d->reported_names[0], "cpu");
    assert_null(d->reported_names[1]);
    assert_non_null(strstr(d->source, "FLOP/cycle/core"));
    for (int t = 0; t < MFU_DTYPE_COUNT; t++)
        assert_true(d->dense_flops_per_s[t] == p.dense_flops_per_s[t]);
    double peak = 0;
    assert_int_equal(mfu_device_peak_flops_per_s(d, MFU_DTYPE_FP32, false, &peak, NULL), MFU_OK);
    assert_true(peak == p.dense_flops_per_s[MFU_DTYPE_FP32]);
    assert_int_equal(mfu_device_peak_flops_per_s(d, MFU_DTYPE_FP8, false, &peak, &err),
                     MFU_E_UNSUPPORTED);
    assert_true(d->memory_bandwidth_bytes_per_s == 0);

    /* resolve: "cpu" with a slot is this CPU; without one the table only */
    const mfu_device_info *r = NULL;
    assert_int_equal(mfu_device_resolve("CPU", slot, &r, NULL), MFU_OK);
    assert_ptr_equal(r, &slot->info);
    assert_int_equal(mfu_device_resolve("cpu", NULL, &r, &err), MFU_E_UNKNOWN);
    assert_null(r);
    assert_int_equal(mfu_device_resolve("h100-sxm", slot, &r, NULL), MFU_OK);
    assert_string_equal(r->id, "h100-sxm");
    assert_int_equal(mfu_device_resolve(NULL, slot, &r, NULL), MFU_E_INVALID);
    free(slot);
}

static void probe_limits(void **state)
{
    (void)state;
    mfu_cpu_probe_result r;
    mfu_error err = {0};
    assert_int_equal(mfu_cpu_probe(NULL, NULL, &err), MFU_E_INVALID);
    double bad_s[] = {MFU_CPU_PROBE_SECONDS_MIN / 2, MFU_CPU_PROBE_SECONDS_MAX * 1.01, -1, NAN,
                      INFINITY};
    for (size_t k = 0; k < sizeof bad_s / sizeof bad_s[0]; k++) {
        mfu_cpu_probe_options o = {.seconds = bad_s[k]};
        memset(&err, 0, sizeof err);
        assert_int_equal(mfu_cpu_probe(&o, &r, &err), MFU_E_LIMIT);
        assert_string_equal(err.field, "--probe");
        assert_one_line(err.message);
        assert_true(isnan(r.fp32.flops_per_s) && isnan(r.fp64.ratio));
    }
    int bad_t[] = {-1, MFU_CPU_PROBE_THREADS_MAX + 1};
    for (size_t k = 0; k < sizeof bad_t / sizeof bad_t[0]; k++) {
        mfu_cpu_probe_options o = {.seconds = 0.1, .threads = bad_t[k]};
        assert_int_equal(mfu_cpu_probe(&o, &r, &err), MFU_E_LIMIT);
        assert_string_equal(err.field, "--threads");
    }
}

/* The probe on this machine: a finite positive rate below 1.5x the computed peak (the
 * turbo clock may exceed the clock of the rule; 1.5x would be a wrong kernel or peak). */
static void probe_measures(void **state)
{
    (void)state;
    mfu_cpu_probe_result r;
    mfu_error err = {0};
    mfu_cpu_probe_options o = {.seconds = MFU_CPU_PROBE_SECONDS_MIN * 2, .threads = 1};
    if (mfu_cpu_probe(&o, &r, &err) != MFU_OK)
        fail_msg("probe: %s", err.message);
    assert_int_equal(r.threads, 1);
    assert_int_equal(r.matrix_n, 128);
    assert_true(strlen(r.kernel) > 0);
    const mfu_cpu_probe_rate *rates[2] = {&r.fp32, &r.fp64};
    for (int k = 0; k < 2; k++) {
        const mfu_cpu_probe_rate *x = rates[k];
        assert_true(isfinite(x->flops_per_s) && x->flops_per_s > 0);
        assert_true(x->products >= 1);
        assert_true(near(x->flops, 2.0 * 128 * 128 * 128 * (double)x->products, 1e-12));
        assert_true(near(x->flops_per_s, x->flops / x->seconds, 1e-12));
        assert_true(x->max_rel_error >= 0 && x->max_rel_error < 1e-5);
        if (isfinite(x->peak_flops_per_s)) {
            assert_true(x->ratio > 0 && x->ratio < 1.5);
            assert_true(near(x->ratio, x->flops_per_s / x->peak_flops_per_s, 1e-12));
        }
    }
    /* a peak given by the caller is the one compared with */
    mfu_cpu_peak fake;
    memset(&fake, 0, sizeof fake);
    fake.dense_flops_per_s[MFU_DTYPE_FP32] = 1e9;
    fake.cores = 1;
    o.peak = &fake;
    o.threads = 0; /* one per core of that peak */
    assert_int_equal(mfu_cpu_probe(&o, &r, NULL), MFU_OK);
    assert_int_equal(r.threads, 1);
    assert_true(r.fp32.peak_flops_per_s == 1e9);
    assert_true(near(r.fp32.ratio, r.fp32.flops_per_s / 1e9, 1e-12));
    assert_true(isnan(r.fp64.peak_flops_per_s) && isnan(r.fp64.ratio)); /* no fp64 figure */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zen4_sample),
        cmocka_unit_test(skx_sample),
        cmocka_unit_test(neoverse_n1_sample),
        cmocka_unit_test(neoverse_v1_sample),
        cmocka_unit_test(arm_layouts),
        cmocka_unit_test(clock_from_model_name),
        cmocka_unit_test(skylake_sp_by_sku),
        cmocka_unit_test(known_cores),
        cmocka_unit_test(unknown_core_default),
        cmocka_unit_test(peak_errors),
        cmocka_unit_test(parse_errors_and_limits),
        cmocka_unit_test(parse_survives_anything),
        cmocka_unit_test(feature_names),
        cmocka_unit_test(gemm_matches_naive),
        cmocka_unit_test(detect_this_machine),
        cmocka_unit_test(cpu_device_entry),
        cmocka_unit_test(probe_limits),
        cmocka_unit_test(probe_measures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
