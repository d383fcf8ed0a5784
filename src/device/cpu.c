/*
 * cpu.c - the CPU mfu runs on: what it is (/proc/cpuinfo, CPUID, sysfs, the affinity mask),
 * and its dense peak from the cores, the clock and the FMA units of its microarchitecture.
 *
 *     peak FLOP/s = cores x clock x FMA units x lanes x 2
 *
 * The FMA units per core are not in CPUID: they come from the small table below, keyed by
 * vendor, family and model (x86) or implementer and part (aarch64), each row with its source.
 * A core the table lacks gets the narrowest rate its vector ISA allows, and the rule says so.
 * Nothing is cached: every call reads /proc and /sys again (about a millisecond).
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT (Linux) */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__)
#include <sched.h>
#endif
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <cpuid.h>
#define MFU__HAVE_CPUID 1
#endif

#include "device/cpu_internal.h"
#include "device/device.h"
#include "mfu/device.h"
#include "util/util.h"

/* ---- feature names ------------------------------------------------------------------------ */

/* Index = bit number. Spelled as /proc/cpuinfo spells them, "neon" for aarch64's "asimd". */
static const char *const feature_names[MFU_CPU_FEATURE_COUNT] = {
    "sse2",     "avx",      "avx2",     "fma",  "avx512f", "avx512_bf16",
    "amx_tile", "amx_bf16", "amx_int8", "neon", "sve",
};

const char *mfu_cpu_feature_name(uint32_t bit)
{
    for (int i = 0; i < MFU_CPU_FEATURE_COUNT; i++)
        if (bit == (1u << i))
            return feature_names[i];
    return NULL;
}

static void info_clear(mfu_cpu_info *out)
{
    memset(out, 0, sizeof *out);
    out->family = out->model = out->stepping = -1;
    out->implementer = out->part = -1;
    out->features_source = "none";
    out->logical_source = "none";
    out->cores_source = "none";
    out->clock_source = "none";
}

/* ---- /proc/cpuinfo, one line at a time ---------------------------------------------------- */

/* Slices of the text, never NUL-terminated: a line is parsed where it lies. */
typedef struct slice {
    const char *p;
    size_t n;
} slice;

static slice trim(slice s)
{
    while (s.n && isspace((unsigned char)s.p[0])) {
        s.p++;
        s.n--;
    }
    while (s.n && isspace((unsigned char)s.p[s.n - 1]))
        s.n--;
    return s;
}

static bool slice_is(slice s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* Copy s into a NUL-terminated buffer of size n, cut to fit. */
static void slice_copy(char *dst, size_t n, slice s)
{
    size_t len = s.n < n - 1 ? s.n : n - 1;
    memcpy(dst, s.p, len);
    dst[len] = '\0';
}

static bool slice_int(slice s, int base, long *out)
{
    char buf[32];
    if (s.n == 0 || s.n >= sizeof buf)
        return false;
    slice_copy(buf, sizeof buf, s);
    if (memchr(buf, '\0', s.n)) /* an embedded NUL: not a number */
        return false;
    errno = 0;
    char *end = NULL;
    long v = strtol(buf, &end, base);
    if (end == buf || *end != '\0' || errno == ERANGE || v < 0 || v > INT32_MAX)
        return false;
    *out = v;
    return true;
}

static bool slice_double(slice s, double *out)
{
    char buf[64];
    if (s.n == 0 || s.n >= sizeof buf)
        return false;
    slice_copy(buf, sizeof buf, s);
    return mfu__parse_double(buf, out);
}

/* Logical CPUs a parse keeps the core ids of: all of them, or those of a bitmap. */
#define ALLOWED_BITS 1024 /* CPU_SETSIZE of glibc */

typedef struct cpuinfo_parse {
    mfu_cpu_info *out;
    const uint64_t *allowed; /* ALLOWED_BITS bits; NULL = every CPU */
    int nproc;               /* "processor" entries seen */
    long cur_proc, cur_pkg, cur_core;
    bool in_entry;
    bool seen_flags, seen_features, seen_vendor, seen_part, seen_family, seen_model, seen_stepping,
        seen_mhz;
    long cpu_arch;   /* "CPU architecture": 8 for aarch64, 7 for 32-bit ARM; -1 none */
    double mhz;      /* "cpu MHz" of the first entry; 0 none */
    uint64_t *pairs; /* (package << 32 | core) of the allowed entries with core ids */
    size_t npairs;
    bool pairs_nomem;
    bool core_ids; /* some entry had a "core id" */
} cpuinfo_parse;

static bool cpu_allowed(const cpuinfo_parse *st, long cpu)
{
    if (!st->allowed)
        return true;
    if (cpu < 0 || cpu >= ALLOWED_BITS)
        return false;
    return (st->allowed[cpu / 64] >> (cpu % 64)) & 1u;
}

/* The entry that just ended: keep its (package, core) when it may be used. */
static void end_entry(cpuinfo_parse *st)
{
    if (!st->in_entry)
        return;
    st->in_entry = false;
    if (st->cur_core < 0 || !cpu_allowed(st, st->cur_proc))
        return;
    if (st->npairs >= MFU_CPU_LOGICAL_MAX) /* counted as a limit by the caller */
        return;
    if (!st->pairs) {
        st->pairs = malloc(MFU_CPU_LOGICAL_MAX * sizeof *st->pairs);
        if (!st->pairs) {
            st->pairs_nomem = true;
            return;
        }
    }
    uint64_t pkg = st->cur_pkg < 0 ? 0 : (uint64_t)st->cur_pkg;
    st->pairs[st->npairs++] = pkg << 32 | (uint64_t)st->cur_core;
}

/* Each word of a flags/Features line that names a feature mfu uses. */
static uint32_t parse_features(slice v, bool aarch64)
{
    uint32_t f = 0;
    size_t i = 0;
    while (i < v.n) {
        while (i < v.n && isspace((unsigned char)v.p[i]))
            i++;
        size_t start = i;
        while (i < v.n && !isspace((unsigned char)v.p[i]))
            i++;
        slice w = {v.p + start, i - start};
        if (w.n == 0)
            break;
        if (aarch64) {
            if (slice_is(w, "asimd"))
                f |= MFU_CPU_NEON;
            else if (slice_is(w, "sve"))
                f |= MFU_CPU_SVE;
            continue;
        }
        for (int b = 0; b < MFU_CPU_FEATURE_COUNT; b++)
            if (slice_is(w, feature_names[b]) && (1u << b) != MFU_CPU_NEON &&
                (1u << b) != MFU_CPU_SVE)
                f |= 1u << b;
    }
    return f;
}

static void parse_line(cpuinfo_parse *st, slice line)
{
    const char *colon = memchr(line.p, ':', line.n);
    if (!colon)
        return;
    slice key = trim((slice){line.p, (size_t)(colon - line.p)});
    slice val = trim((slice){colon + 1, line.n - (size_t)(colon - line.p) - 1});
    mfu_cpu_info *o = st->out;
    long v;
    if (slice_is(key, "processor")) {
        /* "Processor : AArch64 Processor rev 4" of old arm64 kernels is another key */
        end_entry(st);
        st->in_entry = true;
        st->nproc++;
        st->cur_proc = slice_int(val, 10, &v) ? v : -1;
        st->cur_pkg = st->cur_core = -1;
        return;
    }
    /* The first value of each key speaks for every entry (old arm64 kernels print the
     * "processor" lines first and one block of fields after them). */
    if (slice_is(key, "physical id")) {
        st->cur_pkg = slice_int(val, 10, &v) ? v : -1;
    } else if (slice_is(key, "core id")) {
        st->cur_core = slice_int(val, 10, &v) ? v : -1;
        st->core_ids |= st->cur_core >= 0;
    } else if (slice_is(key, "CPU part")) {
        long part = slice_int(val, 0, &v) ? v : -1;
        if (!st->seen_part) {
            st->seen_part = true;
            o->part = (int)part;
        } else if (part != o->part) {
            o->hybrid = true; /* big.LITTLE: cores of two kinds */
        }
    } else if (slice_is(key, "vendor_id")) {
        if (!st->seen_vendor)
            slice_copy(o->vendor, sizeof o->vendor, val);
        st->seen_vendor = true;
    } else if (slice_is(key, "model name")) {
        if (!o->model_name[0])
            slice_copy(o->model_name, sizeof o->model_name, val);
    } else if (slice_is(key, "cpu family")) {
        if (!st->seen_family)
            o->family = slice_int(val, 10, &v) ? (int)v : -1;
        st->seen_family = true;
    } else if (slice_is(key, "model")) {
        if (!st->seen_model)
            o->model = slice_int(val, 10, &v) ? (int)v : -1;
        st->seen_model = true;
    } else if (slice_is(key, "stepping")) {
        if (!st->seen_stepping)
            o->stepping = slice_int(val, 10, &v) ? (int)v : -1;
        st->seen_stepping = true;
    } else if (slice_is(key, "cpu MHz")) {
        double mhz;
        if (!st->seen_mhz && slice_double(val, &mhz) && mhz > 0)
            st->mhz = mhz;
        st->seen_mhz = true;
    } else if (slice_is(key, "flags")) {
        if (!st->seen_flags)
            o->features = parse_features(val, false);
        st->seen_flags = true;
    } else if (slice_is(key, "Features")) {
        if (!st->seen_features)
            o->features = parse_features(val, true);
        st->seen_features = true;
    } else if (slice_is(key, "CPU implementer")) {
        if (o->implementer < 0)
            o->implementer = slice_int(val, 0, &v) ? (int)v : -1;
    } else if (slice_is(key, "CPU architecture")) {
        if (st->cpu_arch < 0)
            st->cpu_arch = slice_int(val, 10, &v) ? v : (slice_is(val, "AArch64") ? 8 : -1);
    }
}

static void parse_begin(cpuinfo_parse *st, mfu_cpu_info *out, const uint64_t *allowed)
{
    memset(st, 0, sizeof *st);
    st->out = out;
    st->allowed = allowed;
    st->cur_proc = st->cur_pkg = st->cur_core = -1;
    st->cpu_arch = -1;
}

/* Who made an aarch64 core, by MIDR implementer code (Arm ARM, "MIDR_EL1"). */
static const char *implementer_name(int code)
{
    switch (code) {
    case 0x41: return "ARM";
    case 0x42: return "Broadcom";
    case 0x43: return "Cavium";
    case 0x46: return "Fujitsu";
    case 0x48: return "HiSilicon";
    case 0x4e: return "NVIDIA";
    case 0x50: return "APM";
    case 0x51: return "Qualcomm";
    case 0x61: return "Apple";
    case 0xc0: return "Ampere";
    default: return NULL;
    }
}

/* "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz": 2.4e9; 0 when there is no "@ X GHz|MHz". */
static double clock_from_model_name(const char *name)
{
    const char *at = strrchr(name, '@');
    if (!at)
        return 0;
    at++;
    while (*at == ' ')
        at++;
    char num[32];
    size_t n = 0;
    while (n < sizeof num - 1 && ((at[n] >= '0' && at[n] <= '9') || at[n] == '.')) {
        num[n] = at[n];
        n++;
    }
    num[n] = '\0';
    double v;
    if (n == 0 || !mfu__parse_double(num, &v) || !(v > 0))
        return 0;
    const char *unit = at + n;
    while (*unit == ' ')
        unit++;
    if (mfu__strncasecmp(unit, "GHz", 3) == 0)
        return v * 1e9;
    if (mfu__strncasecmp(unit, "MHz", 3) == 0)
        return v * 1e6;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Finish a parse: counts, arch, the aarch64 names, the clock. Frees the pair list. */
static mfu_status parse_end(cpuinfo_parse *st, mfu_error *err)
{
    end_entry(st);
    mfu_cpu_info *o = st->out;
    mfu_status st_code = MFU_OK;
    if (st->nproc > MFU_CPU_LOGICAL_MAX)
        st_code = mfu__fail(err, MFU_E_LIMIT, 0,
                            "/proc/cpuinfo lists %d CPUs, more than the %d mfu counts: give "
                            "--peak-tflops X",
                            st->nproc, MFU_CPU_LOGICAL_MAX);
    else if (st->pairs_nomem)
        st_code = mfu__fail(err, MFU_E_NOMEM, 0, "out of memory counting the CPU's cores");
    if (st->nproc > 0) {
        o->logical_cpus = st->nproc;
        o->logical_source = "/proc/cpuinfo";
    }
    if (st_code == MFU_OK && st->core_ids && st->npairs > 0) {
        qsort(st->pairs, st->npairs, sizeof *st->pairs, cmp_u64);
        int distinct = 0;
        for (size_t i = 0; i < st->npairs; i++)
            distinct += i == 0 || st->pairs[i] != st->pairs[i - 1];
        o->physical_cores = distinct;
        o->cores_source = "/proc/cpuinfo core ids";
    }
    free(st->pairs);
    st->pairs = NULL;

    if (st->seen_flags || st->seen_vendor) {
        o->arch = MFU_CPU_ARCH_X86_64;
        if (st->seen_flags)
            o->features_source = "/proc/cpuinfo flags";
    } else if (st->cpu_arch >= 8 ||
               (st->seen_features && o->implementer >= 0 && st->cpu_arch < 0)) {
        o->arch = MFU_CPU_ARCH_AARCH64;
        if (st->seen_features)
            o->features_source = "/proc/cpuinfo Features";
        const char *who = implementer_name(o->implementer);
        if (!o->vendor[0] && who)
            mfu__strlcpy(o->vendor, who, sizeof o->vendor);
    }
    if (o->arch == MFU_CPU_ARCH_AARCH64 && !o->model_name[0] && o->implementer >= 0) {
        const char *who = implementer_name(o->implementer);
        snprintf(o->model_name, sizeof o->model_name, "%s core (implementer 0x%02x, part 0x%03x)",
                 who ? who : "aarch64", (unsigned)o->implementer,
                 (unsigned)(o->part < 0 ? 0 : o->part));
    }
    if (st->mhz > 0) {
        o->clock_hz = st->mhz * 1e6;
        o->clock_source = "cpu MHz";
    } else if (o->model_name[0]) {
        double hz = clock_from_model_name(o->model_name);
        if (hz > 0) {
            o->clock_hz = hz;
            o->clock_source = "model name";
        }
    }
    return st_code;
}

mfu_status mfu_cpu_info_parse(const char *text, size_t len, mfu_cpu_info *out, mfu_error *err)
{
    if (out)
        info_clear(out);
    if (!text || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "no cpuinfo text to read: pass /proc/cpuinfo");
    cpuinfo_parse st;
    parse_begin(&st, out, NULL);
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
        if (n <= MFU_CPU_LINE_MAX)
            parse_line(&st, (slice){text + i, n});
        i += n + 1;
        if (st.nproc > MFU_CPU_LOGICAL_MAX)
            break;
    }
    mfu_status s = parse_end(&st, err);
    if (s != MFU_OK)
        return s;
    if (st.nproc == 0)
        return mfu__fail(err, MFU_E_EMPTY, 0,
                         "no 'processor' line in the cpuinfo text: pass the whole of "
                         "/proc/cpuinfo");
    return MFU_OK;
}

/* ---- this machine -------------------------------------------------------------------------- */

/* Read a small text file (sysfs) into buf; false when it cannot be read. */
static bool read_small(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t got = fread(buf, 1, n - 1, f);
    fclose(f);
    buf[got] = '\0';
    return got > 0;
}

/* The CPUs this process may use, as a bitmap; the count in *count. False when unknown. */
static bool affinity(uint64_t *bits, int *count)
{
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return false;
    memset(bits, 0, ALLOWED_BITS / 8);
    for (int c = 0; c < ALLOWED_BITS && c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            bits[c / 64] |= (uint64_t)1 << (c % 64);
    *count = CPU_COUNT(&set);
    return *count > 0;
#else
    (void)bits;
    (void)count;
    return false;
#endif
}

/* Physical cores among the allowed CPUs from sysfs: distinct first entries of each CPU's
 * thread_siblings_list ("0,64", "2-3"). 0 when sysfs does not say. */
static int cores_from_sysfs(const uint64_t *bits)
{
    int firsts[ALLOWED_BITS];
    int nf = 0;
    for (int c = 0; c < ALLOWED_BITS; c++) {
        if (!((bits[c / 64] >> (c % 64)) & 1u))
            continue;
        char path[96], buf[256];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
                 c);
        long first;
        char *end = NULL;
        if (!read_small(path, buf, sizeof buf))
            return 0;
        errno = 0;
        first = strtol(buf, &end, 10);
        if (end == buf || errno || first < 0)
            return 0;
        bool seen = false;
        for (int i = 0; i < nf && !seen; i++)
            seen = firsts[i] == first;
        if (!seen)
            firsts[nf++] = (int)first;
    }
    return nf;
}

#ifdef MFU__HAVE_CPUID
/* Vendor, family/model/stepping, brand string and features from CPUID, with the vector
 * features masked by what the OS saves (XCR0), as Linux masks its flags. */
static void from_cpuid(mfu_cpu_info *o)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return;
    unsigned max_leaf = a;
    char vendor[13];
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    vendor[12] = '\0';
    mfu__strlcpy(o->vendor, vendor, sizeof o->vendor);
    o->arch = MFU_CPU_ARCH_X86_64;
    if (max_leaf < 1 || !__get_cpuid(1, &a, &b, &c, &d))
        return;
    unsigned base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
    unsigned family = base_family, model = base_model;
    if (base_family == 0xf)
        family += (a >> 20) & 0xff;
    if (base_family == 0x6 || base_family == 0xf)
        model |= ((a >> 16) & 0xf) << 4;
    o->family = (int)family;
    o->model = (int)model;
    o->stepping = (int)(a & 0xf);
    uint32_t f = 0;
    if (d & (1u << 26))
        f |= MFU_CPU_SSE2;
    uint64_t xcr0 = 0;
    if (c & (1u << 27)) { /* OSXSAVE: XGETBV may be used */
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = (uint64_t)hi << 32 | lo;
    }
    bool os_avx = (xcr0 & 0x6) == 0x6;         /* SSE and AVX state */
    bool os_avx512 = (xcr0 & 0xe6) == 0xe6;    /* and opmask, ZMM upper halves, ZMM16-31 */
    bool os_amx = (xcr0 & 0x60000) == 0x60000; /* XTILECFG, XTILEDATA */
    if (os_avx && (c & (1u << 28)))
        f |= MFU_CPU_AVX;
    if (os_avx && (c & (1u << 12)))
        f |= MFU_CPU_FMA;
    if (max_leaf >= 7 && __get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        unsigned sub = a;
        if (os_avx && (b & (1u << 5)))
            f |= MFU_CPU_AVX2;
        if (os_avx512 && (b & (1u << 16)))
            f |= MFU_CPU_AVX512F;
        if (os_amx && (d & (1u << 24)))
            f |= MFU_CPU_AMX_TILE;
        if (os_amx && (d & (1u << 22)))
            f |= MFU_CPU_AMX_BF16;
        if (os_amx && (d & (1u << 25)))
            f |= MFU_CPU_AMX_INT8;
        o->hybrid = (d & (1u << 15)) != 0;
        if (sub >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d) && os_avx512 && (a & (1u << 5)))
            f |= MFU_CPU_AVX512_BF16;
    }
    o->features = f;
    o->features_source = "cpuid";
    unsigned ext = __get_cpuid_max(0x80000000u, NULL);
    if (ext >= 0x80000004u) {
        unsigned r[12];
        for (unsigned i = 0; i < 3; i++)
            __get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
        char brand[49];
        memcpy(brand, r, 48);
        brand[48] = '\0';
        slice s = trim((slice){brand, strlen(brand)});
        if (s.n)
            slice_copy(o->model_name, sizeof o->model_name, s);
    }
}
#endif

mfu_status mfu_cpu_detect(mfu_cpu_info *out, mfu_error *err)
{
    if (!out)
        return mfu__fail(err, MFU_E_INVALID, 0, "no place for the CPU description");
    info_clear(out);
    uint64_t bits[ALLOWED_BITS / 64];
    int allowed = 0;
    bool have_mask = affinity(bits, &allowed);

    mfu_status st = MFU_OK;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        cpuinfo_parse p;
        parse_begin(&p, out, have_mask ? bits : NULL);
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        while ((n = getline(&line, &cap, f)) >= 0 && p.nproc <= MFU_CPU_LOGICAL_MAX)
            if ((size_t)n <= MFU_CPU_LINE_MAX)
                parse_line(&p, (slice){line, (size_t)n});
        free(line);
        fclose(f);
        st = parse_end(&p, err);
    }
    if (st != MFU_OK)
        return st;
#ifdef MFU__HAVE_CPUID
    from_cpuid(out);
#endif
    if (have_mask) {
        out->logical_cpus = allowed;
        out->logical_source = "sched_getaffinity";
    } else {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        if (n > MFU_CPU_LOGICAL_MAX)
            return mfu__fail(err, MFU_E_LIMIT, 0,
                             "%ld CPUs, more than the %d mfu counts: give --peak-tflops X", n,
                             MFU_CPU_LOGICAL_MAX);
        if (n > 0) {
            out->logical_cpus = (int)n;
            out->logical_source = "sysconf";
        }
    }
    if (out->physical_cores == 0 && have_mask) {
        int cores = cores_from_sysfs(bits);
        if (cores > 0) {
            out->physical_cores = cores;
            out->cores_source = "sysfs thread siblings";
        }
    }
    char buf[64];
    double khz;
    if (read_small("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", buf, sizeof buf) &&
        mfu__parse_double(buf, &khz) && khz > 0) {
        out->clock_hz = khz * 1e3;
        out->clock_source = "cpuinfo_max_freq";
    } else if (out->clock_hz <= 0 && out->model_name[0]) {
        double hz = clock_from_model_name(out->model_name); /* the CPUID brand string */
        if (hz > 0) {
            out->clock_hz = hz;
            out->clock_source = "model name";
        }
    }
    return MFU_OK;
}

/* ---- FMA units per core -------------------------------------------------------------------- */

#define SRC_INTEL                                                                                  \
    "Intel 64 and IA-32 Architectures Optimization Reference Manual (execution ports of each "     \
    "microarchitecture); Agner Fog, The microarchitecture of Intel, AMD and VIA CPUs"
#define SRC_INTEL_SKX                                                                              \
    "Intel ARK, '# of AVX-512 FMA Units' of each Xeon Scalable SKU; Intel Optimization "           \
    "Reference Manual, Skylake Server (the second FMA unit on port 5)"
#define SRC_AMD_17                                                                                 \
    "AMD Software Optimization Guide for AMD Family 17h Processors (floating-point unit); Agner "  \
    "Fog, The microarchitecture of Intel, AMD and VIA CPUs"
#define SRC_AMD_19                                                                                 \
    "AMD Software Optimization Guide for AMD Family 19h Processors (floating-point unit); Agner "  \
    "Fog, The microarchitecture of Intel, AMD and VIA CPUs"
#define SRC_AMD_1A "AMD Software Optimization Guide for AMD Family 1Ah Processors (Zen 5)"
#define SRC_ARM "Arm Neoverse Software Optimization Guide of the core (FP/ASIMD pipelines)"
#define SRC_DEFAULT "no source: the narrowest FMA rate of the vector ISA (mfu's default)"
#define SRC_AMX                                                                                    \
    "Intel Optimization Reference Manual, AMX: 1024 BF16 and 2048 INT8 operations per cycle per "  \
    "core (4th Gen Xeon Scalable)"

typedef struct core_row {
    const char *name;
    int units, bits;  /* FMA units per core, datapath bits each */
    const char *note; /* assumption the rule must carry; "" none */
    const char *source;
} core_row;

/* Assumptions some rows carry into the rule. */
#define NOTE_SNB "no FMA: one 256-bit add and one 256-bit multiply"
#define NOTE_ICL "AVX-512 on ports 0+1 fused: one 512-bit FMA"
#define NOTE_HYBRID                                                                                \
    "hybrid: every core counted at the E-core rate (2 x 128-bit FMA); P-cores have 2 x "           \
    "256-bit, so the peak is a lower bound"

#define ROW(name, units, bits, note)                                                               \
    {                                                                                              \
        name, units, bits, note, SRC_INTEL                                                         \
    }

/* Intel family 6 models (Intel SDM vol. 4's model list; the names of Linux's intel-family.h). */
static const struct {
    int model;
    core_row row;
} intel_models[] = {
    {0x2A, ROW("Intel Sandy Bridge", 1, 256, NOTE_SNB)},
    {0x2D, ROW("Intel Sandy Bridge-E", 1, 256, NOTE_SNB)},
    {0x3A, ROW("Intel Ivy Bridge", 1, 256, NOTE_SNB)},
    {0x3E, ROW("Intel Ivy Bridge-E", 1, 256, NOTE_SNB)},
    {0x3C, ROW("Intel Haswell", 2, 256, "")},
    {0x3F, ROW("Intel Haswell-E", 2, 256, "")},
    {0x45, ROW("Intel Haswell", 2, 256, "")},
    {0x46, ROW("Intel Haswell", 2, 256, "")},
    {0x3D, ROW("Intel Broadwell", 2, 256, "")},
    {0x47, ROW("Intel Broadwell", 2, 256, "")},
    {0x4F, ROW("Intel Broadwell-E", 2, 256, "")},
    {0x56, ROW("Intel Broadwell-DE", 2, 256, "")},
    {0x4E, ROW("Intel Skylake (client)", 2, 256, "")},
    {0x5E, ROW("Intel Skylake (client)", 2, 256, "")},
    {0x8E, ROW("Intel Kaby/Coffee/Whiskey/Comet Lake", 2, 256, "")},
    {0x9E, ROW("Intel Kaby/Coffee Lake", 2, 256, "")},
    {0xA5, ROW("Intel Comet Lake", 2, 256, "")},
    {0xA6, ROW("Intel Comet Lake", 2, 256, "")},
    {0x7D, ROW("Intel Ice Lake (client)", 2, 256, NOTE_ICL)},
    {0x7E, ROW("Intel Ice Lake (client)", 2, 256, NOTE_ICL)},
    {0x8C, ROW("Intel Tiger Lake", 2, 256, NOTE_ICL)},
    {0x8D, ROW("Intel Tiger Lake", 2, 256, NOTE_ICL)},
    {0xA7, ROW("Intel Rocket Lake", 2, 256, NOTE_ICL)},
    {0x6A, ROW("Intel Ice Lake-SP", 2, 512, "")},
    {0x6C, ROW("Intel Ice Lake-D", 2, 512, "")},
    {0x8F, ROW("Intel Sapphire Rapids", 2, 512, "")},
    {0xCF, ROW("Intel Emerald Rapids", 2, 512, "")},
    {0xAD, ROW("Intel Granite Rapids", 2, 512, "")},
    {0xAE, ROW("Intel Granite Rapids-D", 2, 512, "")},
    {0x97, ROW("Intel Alder Lake (hybrid)", 2, 128, NOTE_HYBRID)},
    {0x9A, ROW("Intel Alder Lake (hybrid)", 2, 128, NOTE_HYBRID)},
    {0xB7, ROW("Intel Raptor Lake (hybrid)", 2, 128, NOTE_HYBRID)},
    {0xBA, ROW("Intel Raptor Lake (hybrid)", 2, 128, NOTE_HYBRID)},
    {0xBF, ROW("Intel Raptor Lake (hybrid)", 2, 128, NOTE_HYBRID)},
};
#undef ROW

/* Arm Ltd (implementer 0x41) cores by part number. */
static const struct {
    int part;
    core_row row;
} arm_parts[] = {
    {0xd0c, {"Arm Neoverse N1", 2, 128, "", SRC_ARM}},
    {0xd49, {"Arm Neoverse N2", 2, 128, "", SRC_ARM}},
    {0xd40,
     {"Arm Neoverse V1", 4, 128, "SVE 256-bit runs on the same pipes (2 x 256-bit)", SRC_ARM}},
    {0xd4f, {"Arm Neoverse V2", 4, 128, "", SRC_ARM}},
};

/* Skylake-SP / Cascade Lake / Cooper Lake (family 6 model 0x55) have one or two 512-bit FMA
 * units by SKU, which only the brand string tells: Platinum and Gold 6xxx (and Gold 5122,
 * 5222) two, other Gold 5xxx, Silver and Bronze one. Returns 0 (unknown) when the string names
 * none of these, and for Cooper Lake's Gold 53xxH (the model with AVX512_BF16), for which mfu
 * has no source: the caller then takes the unknown-core default, and the rule says so. */
static int skx_units(const char *brand, bool cooper_lake)
{
    if (cooper_lake && mfu__strcasestr(brand, "Gold 5"))
        return 0;
    if (mfu__strcasestr(brand, "Platinum") || mfu__strcasestr(brand, "Gold 6") ||
        mfu__strcasestr(brand, "Gold 5122") || mfu__strcasestr(brand, "Gold 5222"))
        return 2;
    if (mfu__strcasestr(brand, "Gold 5") || mfu__strcasestr(brand, "Silver") ||
        mfu__strcasestr(brand, "Bronze"))
        return 1;
    return 0;
}

/* The row for info's core, or false (the caller takes the default). */
static bool lookup_core(const mfu_cpu_info *in, core_row *row)
{
    bool intel = strcmp(in->vendor, "GenuineIntel") == 0;
    bool amd = strcmp(in->vendor, "AuthenticAMD") == 0;
    bool hygon = strcmp(in->vendor, "HygonGenuine") == 0;
    if (in->arch == MFU_CPU_ARCH_X86_64 && intel && in->family == 6) {
        if (in->model == 0x55) {
            int u = skx_units(in->model_name, (in->features & MFU_CPU_AVX512_BF16) != 0);
            if (u == 0)
                return false;
            *row = (core_row){u == 2 ? "Intel Skylake-SP/Cascade Lake (2 FMA units)"
                                     : "Intel Skylake-SP/Cascade Lake (1 FMA unit)",
                              u, 512, "FMA units by SKU (brand string)", SRC_INTEL_SKX};
            return true;
        }
        for (size_t i = 0; i < MFU__ARRAY_LEN(intel_models); i++)
            if (intel_models[i].model == in->model) {
                *row = intel_models[i].row;
                return true;
            }
        return false;
    }
    if (in->arch == MFU_CPU_ARCH_X86_64 && (amd || hygon)) {
        if ((amd && in->family == 0x17 && in->model >= 0 && in->model < 0x30) ||
            (hygon && in->family == 0x18)) {
            *row = (core_row){hygon ? "Hygon Dhyana (Zen)" : "AMD Zen/Zen+", 2, 128,
                              "256-bit AVX instructions split over the 128-bit units", SRC_AMD_17};
            return true;
        }
        if (amd && in->family == 0x17 && in->model >= 0x30) {
            *row = (core_row){"AMD Zen 2", 2, 256, "", SRC_AMD_17};
            return true;
        }
        if (amd && in->family == 0x19) {
            if (in->features & MFU_CPU_AVX512F)
                *row = (core_row){"AMD Zen 4", 2, 256, "AVX-512 runs on the 256-bit datapaths",
                                  SRC_AMD_19};
            else
                *row = (core_row){"AMD Zen 3", 2, 256, "", SRC_AMD_19};
            return true;
        }
        if (amd && in->family == 0x1A) {
            /* the mobile parts (Ryzen AI, Ryzen Z) have 256-bit datapaths; desktop and server
             * parts 512-bit ones (a VM's "AMD EPYC" is a server part) */
            if (mfu__strcasestr(in->model_name, "Ryzen AI") ||
                mfu__strcasestr(in->model_name, "Ryzen Z"))
                *row = (core_row){"AMD Zen 5", 2, 256,
                                  "a mobile part: AVX-512 runs on 256-bit datapaths (desktop and "
                                  "server parts have 512-bit ones)",
                                  SRC_AMD_1A};
            else
                *row = (core_row){"AMD Zen 5", 2, 512,
                                  "a desktop or server part: 512-bit datapaths (mobile Ryzen AI "
                                  "parts have 256-bit ones, half this)",
                                  SRC_AMD_1A};
            return true;
        }
        return false;
    }
    if (in->arch == MFU_CPU_ARCH_AARCH64 && in->implementer == 0x41 && !in->hybrid)
        for (size_t i = 0; i < MFU__ARRAY_LEN(arm_parts); i++)
            if (arm_parts[i].part == in->part) {
                *row = arm_parts[i].row;
                return true;
            }
    return false;
}

/* The default for a core not in the table: one FMA unit as wide as the widest vector ISA,
 * the least any core with that ISA does (an AVX-512 core with one 512-bit unit, an AVX2 core
 * with two 128-bit ones, a NEON core with one 128-bit pipe). bits 0: scalar. */
static core_row default_row(const mfu_cpu_info *in)
{
    uint32_t f = in->features;
    if (in->arch == MFU_CPU_ARCH_X86_64) {
        if (f & MFU_CPU_AVX512F)
            return (core_row){"unknown x86-64 core (AVX-512)", 1, 512, "", SRC_DEFAULT};
        if (f & (MFU_CPU_AVX2 | MFU_CPU_FMA | MFU_CPU_AVX))
            return (core_row){"unknown x86-64 core (AVX)", 1, 256, "", SRC_DEFAULT};
        /* SSE2 is part of x86-64 itself */
        return (core_row){"unknown x86-64 core (SSE2)", 1, 128, "", SRC_DEFAULT};
    }
    if (in->arch == MFU_CPU_ARCH_AARCH64) /* Advanced SIMD is part of AArch64 */
        return (core_row){"unknown aarch64 core (NEON)", 1, 128, "", SRC_DEFAULT};
    return (core_row){"unknown core (scalar)", 1, 0, "", SRC_DEFAULT};
}

static int isa_bits(const mfu_cpu_info *in)
{
    uint32_t f = in->features;
    if (in->arch == MFU_CPU_ARCH_X86_64)
        return (f & MFU_CPU_AVX512F) ? 512 : (f & (MFU_CPU_AVX | MFU_CPU_AVX2)) ? 256 : 128;
    if (in->arch == MFU_CPU_ARCH_AARCH64)
        return 128; /* SVE widths vary by core; the table's rows state the pipes */
    return 0;
}

static const char *clock_note(const char *source)
{
    if (strcmp(source, "cpuinfo_max_freq") == 0)
        return "the maximum (turbo) clock: all-core and AVX-512 clocks are lower, so the peak "
               "is an upper bound";
    if (strcmp(source, "cpu MHz") == 0)
        return "'cpu MHz' is the current clock, or the host's nominal one in a VM: turbo may "
               "exceed it";
    if (strcmp(source, "model name") == 0)
        return "the model name's base clock: turbo may exceed it";
    return "a clock given by the caller";
}

static void peak_clear(mfu_cpu_peak *out)
{
    memset(out, 0, sizeof *out);
    out->core = "";
    out->source = "";
}

mfu_status mfu_cpu_peak_compute(const mfu_cpu_info *info, mfu_cpu_peak *out, mfu_error *err)
{
    if (out)
        peak_clear(out);
    if (!info || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "no CPU description or no place for its peak");
    int cores = info->physical_cores > 0 ? info->physical_cores : info->logical_cpus;
    if (cores <= 0)
        return mfu__fail_field(err, MFU_E_MISSING, "cores",
                               "the CPU's core count is unknown: give --peak-tflops X");
    if (cores > MFU_CPU_LOGICAL_MAX)
        return mfu__fail_field(err, MFU_E_RANGE, "cores",
                               "%d cores, more than the %d mfu counts: give --peak-tflops X", cores,
                               MFU_CPU_LOGICAL_MAX);
    double hz = info->clock_hz;
    if (hz == 0)
        return mfu__fail_field(err, MFU_E_MISSING, "clock",
                               "the CPU's clock is unknown (no cpufreq, no 'cpu MHz', no '@ X "
                               "GHz' in the model name): give --peak-tflops X");
    if (!isfinite(hz) || hz < MFU_CPU_CLOCK_MIN_HZ || hz > MFU_CPU_CLOCK_MAX_HZ)
        return mfu__fail_field(err, MFU_E_RANGE, "clock",
                               "a CPU clock of %g Hz is outside 0.1-10 GHz: check the clock's "
                               "source or give --peak-tflops X",
                               hz);

    core_row row;
    bool known = lookup_core(info, &row);
    if (!known)
        row = default_row(info);
    out->cores = cores;
    out->clock_hz = hz;
    out->fma_units = row.units;
    out->fma_bits = row.bits;
    out->isa_bits = isa_bits(info);
    out->core = row.name;
    out->known_core = known;
    out->source = row.source;

    double *fpc = out->flops_per_cycle_per_core;
    static const int elem_bits[2] = {64, 32}; /* fp64, fp32 */
    for (int t = 0; t < 2; t++) {
        int lanes = row.bits >= elem_bits[t] ? row.bits / elem_bits[t] : 1;
        fpc[t == 0 ? MFU_DTYPE_FP64 : MFU_DTYPE_FP32] = (double)row.units * lanes * 2;
    }
    const char *bf16_how = NULL;
    bool amx = (info->features & (MFU_CPU_AMX_TILE | MFU_CPU_AMX_BF16)) ==
               (MFU_CPU_AMX_TILE | MFU_CPU_AMX_BF16);
    if (amx) {
        fpc[MFU_DTYPE_BF16] = 1024;
        bf16_how = "bf16: AMX, 1024 FLOP/cycle per core";
        if (info->features & MFU_CPU_AMX_INT8)
            fpc[MFU_DTYPE_INT8] = 2048;
    } else if ((info->features & MFU_CPU_AVX512_BF16) && row.bits >= 128) {
        /* VDPBF16PS: per fp32 lane, two bf16 products added to the accumulator */
        fpc[MFU_DTYPE_BF16] = 2 * fpc[MFU_DTYPE_FP32];
        bf16_how = "bf16: AVX512_BF16 dot products counted at the FMA rate (2 products per fp32 "
                   "lane)";
    }
    for (int t = 0; t < MFU_DTYPE_COUNT; t++)
        out->dense_flops_per_s[t] = fpc[t] * cores * hz;

    /* the rule: one line with the arithmetic and every assumption */
    char *r = out->rule;
    size_t n = sizeof out->rule;
    bool physical = info->physical_cores > 0;
    mfu__appendf(r, n, "%d %s (%s) x %.4g GHz (%s) x FLOP/cycle/core fp64 %g, fp32 %g", cores,
                 physical ? "cores" : "logical CPUs",
                 physical ? info->cores_source : info->logical_source, hz / 1e9, info->clock_source,
                 fpc[MFU_DTYPE_FP64], fpc[MFU_DTYPE_FP32]);
    if (fpc[MFU_DTYPE_BF16] > 0)
        mfu__appendf(r, n, ", bf16 %g", fpc[MFU_DTYPE_BF16]);
    if (fpc[MFU_DTYPE_INT8] > 0)
        mfu__appendf(r, n, ", int8 %g", fpc[MFU_DTYPE_INT8]);
    if (row.bits > 0)
        mfu__appendf(r, n, "; = %d FMA unit%s x %d-bit x 2 (%s%s%s)", row.units,
                     row.units == 1 ? "" : "s", row.bits, row.name, row.note[0] ? ": " : "",
                     row.note);
    else
        mfu__appendf(r, n, "; = 1 scalar FMA x 2 (%s)", row.name);
    if (!known)
        mfu__appendf(r, n,
                     "; core not in mfu's table: the narrowest FMA rate of its ISA, may "
                     "be 2x low: check with 'mfu devices cpu --probe'");
    if (bf16_how)
        mfu__appendf(r, n, "; %s", bf16_how);
    if (!physical)
        mfu__appendf(r, n, "; physical cores unknown: SMT threads may be counted twice");
    if (info->hybrid && !(known && strstr(row.name, "hybrid")))
        mfu__appendf(r, n, "; hybrid CPU: cores of two kinds, all counted at this rate");
    mfu__appendf(r, n, "; clock: %s", clock_note(info->clock_source));
    return MFU_OK;
}

/* ---- this CPU as a device entry ------------------------------------------------------------ */

mfu_status mfu_cpu_device(mfu_device_slot *slot, const mfu_device_info **out, mfu_error *err)
{
    if (out)
        *out = NULL;
    if (!slot || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "no place for the CPU's device entry");
    mfu_cpu_info info;
    mfu_status st = mfu_cpu_detect(&info, err);
    if (st != MFU_OK)
        return st;
    mfu_cpu_peak pk;
    st = mfu_cpu_peak_compute(&info, &pk, err);
    if (st != MFU_OK)
        return st;
    mfu__cpu_device_from(slot, &info, &pk, out);
    return MFU_OK;
}

void mfu__cpu_device_from(mfu_device_slot *slot, const mfu_cpu_info *in, const mfu_cpu_peak *peak,
                          const mfu_device_info **out)
{
    const mfu_cpu_info info = *in;
    memset(slot, 0, sizeof *slot);
    mfu_device_info *d = &slot->info;
    snprintf(slot->name, sizeof slot->name, "%s", info.model_name[0] ? info.model_name : "CPU");
    mfu__strlcpy(slot->vendor, info.vendor[0] ? info.vendor : "unknown", sizeof slot->vendor);
    snprintf(slot->unit, sizeof slot->unit, "CPU (%d %s, this machine)", peak->cores,
             info.physical_cores > 0 ? "cores" : "logical CPUs");
    snprintf(slot->source, sizeof slot->source, "computed by mfu: %s. FMA units: %s", peak->rule,
             peak->source);
    snprintf(slot->notes, sizeof slot->notes,
             "%s; a measured rate: 'mfu devices cpu --probe'. 'cpu' is the CPU of the machine "
             "running mfu.",
             peak->known_core ? peak->core : "core not in mfu's table (default rate)");
    slot->reported_names[0] = "cpu";
    slot->reported_names[1] = NULL;
    d->id = "cpu";
    d->name = slot->name;
    d->vendor = slot->vendor;
    d->unit = slot->unit;
    memcpy(d->dense_flops_per_s, peak->dense_flops_per_s, sizeof d->dense_flops_per_s);
    d->sparsity = MFU_SPARSITY_NONE;
    double mhz = peak->clock_hz / 1e6;
    d->boost_clock_mhz = d->peak_clock_mhz = (int)lround(mhz);
    d->reported_names = slot->reported_names;
    d->source = slot->source;
    d->notes = slot->notes;
    *out = d;
}

mfu_status mfu_device_resolve(const char *name, mfu_device_slot *slot, const mfu_device_info **out,
                              mfu_error *err)
{
    if (slot && name && mfu__strcasecmp(name, "cpu") == 0)
        return mfu_cpu_device(slot, out, err);
    return mfu_device_find(name, out, err);
}
