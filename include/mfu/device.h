/*
 * mfu/device.h - what the hardware can do: a read-only table of accelerators with the dense
 * peak FLOP/s of each dtype, memory size and bandwidth, clocks and the source of every number,
 * and name matching for the strings drivers and frameworks report.
 *
 * Dense, never sparse: MFU divides by the DENSE peak. Vendors headline the 2:4 structured
 * sparsity figure (exactly 2x dense on NVIDIA tensor cores); the table keeps it apart and
 * nothing in mfu uses it unless asked to (sparse == true below).
 *
 * Per what: every entry is the unit a framework counts as one device by default (one GPU; one
 * GCD of an MI250X; one TensorCore of a TPU v7 chip, as JAX shows it). `unit` says which.
 *
 * Numbers: FLOP/s (int8 entries are OP/s), bytes, bytes/s, MHz. A peak of 0 means "no figure
 * in the table" (the dtype is not supported, or no source states it): asking for it is an
 * error, never a silent 0 or a fallback to another device.
 *
 * The table is static data: entries live for the whole program and must not be freed.
 * Thread safety: every function here is re-entrant; nothing is cached.
 */
#ifndef MFU_DEVICE_H
#define MFU_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "mfu/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Numeric formats a peak is stated for. Appended to only; MFU_DTYPE_COUNT is not a dtype. */
typedef enum mfu_dtype {
    MFU_DTYPE_FP64 = 0,
    MFU_DTYPE_FP32 = 1, /* plain FP32 (no TF32 rounding) */
    MFU_DTYPE_TF32 = 2,
    MFU_DTYPE_BF16 = 3,
    MFU_DTYPE_FP16 = 4,
    MFU_DTYPE_FP8 = 5,  /* E4M3/E5M2 */
    MFU_DTYPE_INT8 = 6, /* OP/s, not FLOP/s */
    MFU_DTYPE_COUNT = 7
} mfu_dtype;

/* Canonical short name of a dtype: "fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8".
 * Returns "?" for a value outside the enum. Never NULL; the string is static. */
MFU_API const char *mfu_dtype_name(mfu_dtype dtype);

/* Parse a dtype name, ASCII case-insensitive, whole string: bf16 bfloat16, fp16 float16 half
 * f16, fp8 float8 e4m3 e5m2 float8_e4m3fn float8_e5m2, fp32 float32 float f32, tf32 tfloat32
 * tensorfloat32, fp64 float64 double f64, int8 i8; a "torch." prefix is accepted.
 * On success stores the dtype in *out and returns MFU_OK. NULL s or out: MFU_E_INVALID.
 * Anything else: MFU_E_UNKNOWN, *out untouched, and a message listing the choices. */
MFU_API mfu_status mfu_dtype_parse(const char *s, mfu_dtype *out, mfu_error *err);

/* What the vendor's "with sparsity" figures mean for an entry. */
typedef enum mfu_sparsity {
    MFU_SPARSITY_NONE = 0, /* no sparse figure in the table */
    MFU_SPARSITY_2_4 = 1,  /* 2:4 structured sparsity: sparse == 2 x dense for every dtype that
                              has a sparse figure */
    MFU_SPARSITY_OTHER = 2 /* a vendor sparse figure that is not 2 x dense (see notes) */
} mfu_sparsity;

/* One accelerator. Read-only; fields are only ever appended to. */
typedef struct mfu_device_info {
    const char *id;     /* stable lower-case id, e.g. "h100-sxm", "tpu-v5p", "mi300x" */
    const char *name;   /* display name, e.g. "NVIDIA H100 SXM5 80GB" */
    const char *vendor; /* "NVIDIA", "AMD", "Google", "Intel", "AWS" */
    const char *unit;   /* what one entry counts, e.g. "GPU", "GCD (half an MI250X)" */
    double dense_flops_per_s[MFU_DTYPE_COUNT];  /* dense peak per dtype; 0 = no figure */
    double sparse_flops_per_s[MFU_DTYPE_COUNT]; /* vendor sparse figure; 0 = none. Never a
                                                   default. */
    mfu_sparsity sparsity;
    double memory_bytes;                 /* device memory as the vendor states it (GB = 1e9,
                                            GiB = 2^30) */
    double memory_bandwidth_bytes_per_s; /* peak memory bandwidth */
    int boost_clock_mhz;                 /* maximum boost clock; 0 = not meaningful/not sourced */
    int peak_clock_mhz;                  /* clock the dense peaks are quoted at; 0 = unknown */
    const char *const *reported_names;   /* NULL-terminated: what drivers and frameworks
                                            report (nvidia-smi, torch, JAX, ROCm) and other
                                            accepted aliases */
    const char *source;                  /* where the numbers come from */
    const char *notes;                   /* disagreements between stacks and the choice made;
                                            "" when none */
} mfu_device_info;

/* Number of entries in the table (> 0). */
MFU_API size_t mfu_device_count(void);

/* Entry i (0-based, table order), or NULL when i >= mfu_device_count(). */
MFU_API const mfu_device_info *mfu_device_at(size_t i);

/* Limits of name matching (see docs/internals/device.md). */
#define MFU_DEVICE_NAME_MAX 256      /* bytes in a name, without the NUL */
#define MFU_DEVICE_NAME_WORDS_MAX 16 /* words (runs of letters/digits) in a name */
#define MFU_DEVICE_CANDIDATES_MAX 8  /* candidates kept in a mfu_device_match */

/* How a name was matched. */
typedef enum mfu_device_match_kind {
    MFU_DEVICE_MATCH_NONE = 0,       /* no match (an error was returned) */
    MFU_DEVICE_MATCH_EXACT = 1,      /* the name is an id, display name or reported name */
    MFU_DEVICE_MATCH_WORDS = 2,      /* its words select exactly one entry */
    MFU_DEVICE_MATCH_EQUAL_PEAKS = 3 /* its words select several entries whose dense peaks are
                                        equal for every dtype; the first in table order is
                                        returned (memory and bandwidth may differ) */
} mfu_device_match_kind;

typedef struct mfu_device_match {
    const mfu_device_info *device; /* the entry matched; NULL on failure */
    mfu_device_match_kind kind;
    /* EQUAL_PEAKS and MFU_E_AMBIGUOUS: the entries the name selected (table order);
     * MFU_E_UNKNOWN: up to 3 closest entries. ncandidates counts all of them, candidates holds
     * the first MFU_DEVICE_CANDIDATES_MAX. */
    size_t ncandidates;
    const mfu_device_info *candidates[MFU_DEVICE_CANDIDATES_MAX];
} mfu_device_match;

/* Match a device name: an id ("h100-sxm"), a display name, or what a driver or framework
 * reports ("NVIDIA H100 80GB HBM3", "AMD Instinct MI300X", "TPU v5 lite", "v5litepod-8").
 * Rules (docs/devices.md): ASCII case-insensitive; words are runs of letters and digits;
 * vendor words (nvidia, amd, tesla, geforce, ...) are ignored; a word matches only a whole
 * word, never part of one ("gb200" never matches b200, "h200" never h20, "l40s" never l40).
 * 1. The words, joined, equal the joined words of an id/name/reported name: that entry.
 * 2. Else every word must occur in an entry's names: one entry -> it; several with equal dense
 *    peaks -> the first (kind EQUAL_PEAKS); several with different peaks -> MFU_E_AMBIGUOUS.
 * 3. Else MFU_E_UNKNOWN, with up to 3 closest ids (edit distance) in out->candidates and in
 *    the message, which also names --peak-tflops for a device not in the table.
 * Errors: NULL name or out, or a name with no words: MFU_E_INVALID; a name longer than
 * MFU_DEVICE_NAME_MAX bytes or with more than MFU_DEVICE_NAME_WORDS_MAX words: MFU_E_LIMIT.
 * out is always written (device NULL, kind NONE on failure). Never falls back silently. */
MFU_API mfu_status mfu_device_match_name(const char *name, mfu_device_match *out, mfu_error *err);

/* mfu_device_match_name() reduced to the entry: on success *out is the entry (static, not to
 * be freed) and MFU_OK is returned; on failure *out is NULL and the status and message are
 * those of mfu_device_match_name(). NULL out: MFU_E_INVALID. */
MFU_API mfu_status mfu_device_find(const char *name, const mfu_device_info **out, mfu_error *err);

/* The peak FLOP/s of dev for dtype: the dense figure, or the vendor sparse one when sparse is
 * true (never use sparse for MFU unless you know why). On success stores it (> 0) in *out.
 * NULL dev or out, or dtype outside the enum: MFU_E_INVALID. No figure for that dtype:
 * MFU_E_UNSUPPORTED with a message naming the dtypes the entry has, *out untouched. */
MFU_API mfu_status mfu_device_peak_flops_per_s(const mfu_device_info *dev, mfu_dtype dtype,
                                               bool sparse, double *out, mfu_error *err);

/* ---- the CPU mfu runs on ---------------------------------------------------------------
 *
 * The table above holds accelerators. A CPU's peak is computed instead (src/device/cpu.c):
 *
 *     dense peak FLOP/s = cores x clock x FLOPs per cycle per core
 *     FLOPs per cycle   = FMA units x lanes x 2      (lanes = datapath bits / element bits)
 *
 * The number and width of the FMA units per core come from a small table keyed by vendor,
 * family and model, with sources (docs/devices.md "CPU"); a core the table does not know gets
 * a conservative default, and the peak's `rule` says so. A probe (mfu_cpu_probe) measures what
 * a blocked matrix product written in C reaches, so a peak can be checked on the machine.
 *
 * Structs here are plain values: no pointers to free. The `*_source` and `core` strings are
 * static. Thread safety: re-entrant; nothing is cached (detection reads /proc and /sys again on
 * every call). */

/* Limits (docs/internals/device.md). */
#define MFU_CPU_TEXT_MAX 128      /* bytes kept of a vendor or model name, NUL included */
#define MFU_CPU_LINE_MAX 65536    /* a longer /proc/cpuinfo line is skipped, not parsed */
#define MFU_CPU_LOGICAL_MAX 8192  /* logical CPUs counted; more: MFU_E_LIMIT */
#define MFU_CPU_RULE_MAX 768      /* bytes of mfu_cpu_peak.rule, NUL included */
#define MFU_CPU_CLOCK_MIN_HZ 1e8  /* a clock outside [0.1, 10] GHz is not believed: */
#define MFU_CPU_CLOCK_MAX_HZ 1e10 /* mfu_cpu_peak_compute() returns MFU_E_RANGE */

typedef enum mfu_cpu_arch {
    MFU_CPU_ARCH_UNKNOWN = 0,
    MFU_CPU_ARCH_X86_64 = 1,
    MFU_CPU_ARCH_AARCH64 = 2
} mfu_cpu_arch;

/* Instruction-set features: bits of mfu_cpu_info.features. Appended to only. On x86 a vector
 * feature counts only when the OS saves its registers (XCR0), as Linux's flags do. */
#define MFU_CPU_SSE2 (1u << 0)
#define MFU_CPU_AVX (1u << 1)
#define MFU_CPU_AVX2 (1u << 2)
#define MFU_CPU_FMA (1u << 3) /* FMA3 */
#define MFU_CPU_AVX512F (1u << 4)
#define MFU_CPU_AVX512_BF16 (1u << 5) /* VDPBF16PS: bf16 pairs dot-accumulated into fp32 */
#define MFU_CPU_AMX_TILE (1u << 6)
#define MFU_CPU_AMX_BF16 (1u << 7)
#define MFU_CPU_AMX_INT8 (1u << 8)
#define MFU_CPU_NEON (1u << 9) /* aarch64 Advanced SIMD ("asimd") */
#define MFU_CPU_SVE (1u << 10)
#define MFU_CPU_FEATURE_COUNT 11

/* Short lower-case name of one feature bit ("avx512f", "amx_bf16", "neon", ...), as
 * /proc/cpuinfo spells it where it has one; NULL for anything but a single known bit. */
MFU_API const char *mfu_cpu_feature_name(uint32_t bit);

/* What mfu knows about a CPU. A field that could not be found is 0 / -1 / "" with its source
 * "none"; nothing is guessed here (the guessing, stated, is in mfu_cpu_peak_compute). */
typedef struct mfu_cpu_info {
    mfu_cpu_arch arch;
    char vendor[MFU_CPU_TEXT_MAX];     /* "GenuineIntel", "AuthenticAMD", "ARM", "Ampere",
                                          ...; "" unknown */
    char model_name[MFU_CPU_TEXT_MAX]; /* brand string or the core's name; "" unknown */
    int family, model, stepping;       /* x86 CPUID display family/model/stepping; -1 unknown */
    int implementer, part;             /* aarch64 MIDR implementer and part number; -1 unknown */
    uint32_t features;                 /* MFU_CPU_* bits */
    const char *features_source;       /* "cpuid", "/proc/cpuinfo flags", "/proc/cpuinfo
                                          Features", or "none": features unknown */
    int logical_cpus;                  /* logical CPUs this process may use; 0 unknown */
    const char *logical_source;        /* "sched_getaffinity", "sysconf", "/proc/cpuinfo", "none" */
    int physical_cores;                /* cores (SMT threads of a core counted once) among
                                          them; 0 unknown */
    const char *cores_source;          /* "/proc/cpuinfo core ids", "sysfs thread siblings",
                                          "none" */
    bool hybrid;                       /* cores of different kinds (Intel P- and E-cores) */
    double clock_hz;                   /* nominal or maximum clock; 0 unknown */
    const char *clock_source;          /* "cpuinfo_max_freq", "cpu MHz", "model name", "none" */
} mfu_cpu_info;

/* Describe the CPU this process runs on: /proc/cpuinfo (vendor, model, core ids, flags, "cpu
 * MHz"), CPUID where the compiler offers <cpuid.h> (vendor, family/model, brand string, the
 * features, masked by what the OS enables), sched_getaffinity() for the CPUs this process may
 * use (else sysconf), /sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq for the clock
 * (else "cpu MHz", else the model name's "@ X GHz"). Physical cores are counted among the
 * allowed CPUs only. Missing sources leave fields unknown; that is not an error.
 * NULL out: MFU_E_INVALID. More than MFU_CPU_LOGICAL_MAX CPUs: MFU_E_LIMIT. *out is always
 * written (cleared to unknowns first). */
MFU_API mfu_status mfu_cpu_detect(mfu_cpu_info *out, mfu_error *err);

/* Read /proc/cpuinfo text (x86 or aarch64 style) of any machine: len bytes of text, which
 * need not be NUL-terminated. Logical CPUs are the "processor" entries; physical cores the
 * distinct (physical id, core id) pairs when the text has them, else unknown; the clock is
 * "cpu MHz" of the first entry, else the model name's "@ X GHz". Sources name /proc/cpuinfo.
 * NULL text or out: MFU_E_INVALID. No "processor" line: MFU_E_EMPTY. More than
 * MFU_CPU_LOGICAL_MAX entries: MFU_E_LIMIT. *out is always written. */
MFU_API mfu_status mfu_cpu_info_parse(const char *text, size_t len, mfu_cpu_info *out,
                                      mfu_error *err);

/* The dense peak of a whole CPU. */
typedef struct mfu_cpu_peak {
    double dense_flops_per_s[MFU_DTYPE_COUNT];        /* whole CPU; 0 = no figure (int8 is
                                                         OP/s, AMX only) */
    double flops_per_cycle_per_core[MFU_DTYPE_COUNT]; /* 0 = no figure */
    int cores;          /* cores counted: physical, else logical (the rule says which) */
    double clock_hz;    /* the clock the peak is computed at */
    int fma_units;      /* FMA units per core ... */
    int fma_bits;       /* ... each this wide (datapath bits) */
    int isa_bits;       /* widest vector registers the ISA offers (128, 256, 512); a 512-bit
                           instruction on two 256-bit units counts once per two units */
    const char *core;   /* static: "AMD Zen 4", "Intel Skylake-SP (2 FMA units)", ...,
                           "unknown x86-64 core" */
    bool known_core;    /* false: the conservative default of its ISA */
    const char *source; /* static: where the unit count comes from */
    char rule[MFU_CPU_RULE_MAX]; /* one line: the arithmetic, the sources of cores and clock,
                                    and every assumption (the default, SMT, turbo, hybrid) */
} mfu_cpu_peak;

/* Compute the peak of the CPU info describes (from mfu_cpu_detect, mfu_cpu_info_parse, or
 * filled by hand). fp64 and fp32 always; bf16 only where the ISA has a bf16 dot product
 * (AVX512_BF16: counted at the FMA rate, 2 products per fp32 lane; AMX: 1024 FLOP/cycle per
 * core); int8 only with AMX (2048 OP/cycle per core); others 0.
 * NULL info or out: MFU_E_INVALID. No core count or no clock: MFU_E_MISSING (field names
 * it, message names --peak-tflops). A clock outside [MFU_CPU_CLOCK_MIN_HZ,
 * MFU_CPU_CLOCK_MAX_HZ] or not finite, or more than MFU_CPU_LOGICAL_MAX cores: MFU_E_RANGE.
 * On failure *out is cleared (every peak 0, rule ""). */
MFU_API mfu_status mfu_cpu_peak_compute(const mfu_cpu_info *info, mfu_cpu_peak *out,
                                        mfu_error *err);

/* Storage for a device entry made at run time: this machine's CPU as an mfu_device_info, so
 * that everything that takes a device takes it. Caller-owned; `info` points into the slot's
 * own arrays, so the slot must stay where it is (not copied, not moved) while the entry is
 * used. Nothing in it needs freeing. */
typedef struct mfu_device_slot {
    mfu_device_info info;
    char name[MFU_CPU_TEXT_MAX + 32];
    char vendor[MFU_CPU_TEXT_MAX];
    char unit[96];
    char source[MFU_CPU_RULE_MAX + 256];
    char notes[256];
    const char *reported_names[2];
} mfu_device_slot;

/* This machine's CPU as a device entry: id "cpu", name the model name, unit "CPU (N cores)",
 * dense peaks of mfu_cpu_peak_compute(mfu_cpu_detect()), the clock in boost/peak_clock_mhz,
 * no memory size or bandwidth (0), source = the rule and the sources. On success *out points
 * into slot. Errors: NULL slot or out: MFU_E_INVALID; otherwise those of mfu_cpu_detect and
 * mfu_cpu_peak_compute, with *out NULL. */
MFU_API mfu_status mfu_cpu_device(mfu_device_slot *slot, const mfu_device_info **out,
                                  mfu_error *err);

/* mfu_device_find(), plus the name "cpu" (ASCII case-insensitive, the whole name): this
 * machine's CPU, made in slot by mfu_cpu_device(). slot NULL: the table only, exactly as
 * mfu_device_find (use that for names a log gives: "cpu" in another machine's log is not this
 * CPU). Statuses and *out as mfu_device_find / mfu_cpu_device. */
MFU_API mfu_status mfu_device_resolve(const char *name, mfu_device_slot *slot,
                                      const mfu_device_info **out, mfu_error *err);

/* ---- the probe: the matrix rate this CPU achieves ------------------------------------------ */

#define MFU_CPU_PROBE_SECONDS_MIN 0.05 /* whole probe (fp32 + fp64) */
#define MFU_CPU_PROBE_SECONDS_MAX 60.0
#define MFU_CPU_PROBE_SECONDS_DEFAULT 1.0
#define MFU_CPU_PROBE_THREADS_MAX 256

typedef struct mfu_cpu_probe_options {
    double seconds;           /* wall time of the timed part, split evenly between fp32 and
                                 fp64; 0 = MFU_CPU_PROBE_SECONDS_DEFAULT */
    int threads;              /* 0 = one per core of the peak (else per logical CPU, else
                                 1); else 1..MFU_CPU_PROBE_THREADS_MAX */
    const mfu_cpu_peak *peak; /* the peak to compare with; NULL = this machine's
                                 (mfu_cpu_detect + mfu_cpu_peak_compute); ratios are NaN
                                 when it cannot be computed */
} mfu_cpu_probe_options;

typedef struct mfu_cpu_probe_rate {
    double flops_per_s;      /* achieved by all threads together */
    double flops;            /* FLOPs of the products finished in the timed window */
    double seconds;          /* the timed window: first thread's start to last one's end */
    int64_t products;        /* n x n products finished, all threads */
    double peak_flops_per_s; /* the peak compared with; NaN none */
    double ratio;            /* flops_per_s / peak_flops_per_s (a fraction; NaN none) */
    double max_rel_error;    /* of the kernel against a naive product, checked first */
} mfu_cpu_probe_rate;

typedef struct mfu_cpu_probe_result {
    int threads;
    int matrix_n;       /* each thread multiplies its own n x n matrices, again and again */
    const char *kernel; /* static: "avx512f", "avx2+fma", "portable C" */
    mfu_cpu_probe_rate fp32, fp64;
} mfu_cpu_probe_result;

/* Measure the fp32 and fp64 matrix rate of this CPU with the blocked GEMM of
 * src/device/gemm.c (packed panels, a register-blocked micro-kernel, the widest vector ISA
 * the CPU and OS offer), each thread on its own matrices, for opt->seconds in all. The kernel
 * is first checked against a naive product; a wrong result is MFU_E_UNSUPPORTED. The rate is
 * a lower bound of what the CPU can do (a tuned BLAS may reach more), not a peak.
 * opt NULL: all defaults. NULL out: MFU_E_INVALID. seconds outside
 * [MFU_CPU_PROBE_SECONDS_MIN, MFU_CPU_PROBE_SECONDS_MAX] or threads outside
 * [0, MFU_CPU_PROBE_THREADS_MAX]: MFU_E_LIMIT (field "--probe" / "--threads"). A thread that
 * cannot start: MFU_E_UNSUPPORTED; memory: MFU_E_NOMEM. *out is always written (rates NaN on
 * failure). Blocks the caller for about opt->seconds plus setup. */
MFU_API mfu_status mfu_cpu_probe(const mfu_cpu_probe_options *opt, mfu_cpu_probe_result *out,
                                 mfu_error *err);

/* ---- live GPU data: NVML, loaded at run time ------------------------------------------------
 *
 * NVIDIA's management library (NVML, libnvidia-ml.so.1, installed with the driver) reports each
 * GPU's name, SM clock, board power, enforced power limit, clock event ("throttle") reasons,
 * temperature and utilization. mfu has no build-time dependency on it: a session dlopen()s the
 * library and looks up the few entry points it uses (src/device/nvml.c,
 * docs/internals/device.md). No library, no driver, or a library without those entry points is
 * MFU_E_UNSUPPORTED with a message that names the fix, never a crash.
 *
 * A session owns its library handle and NVML's initialisation (NVML counts initialisations, so
 * several sessions may be open at once). Samples are plain values. Thread safety: a session is
 * used by one thread at a time; NVML itself is thread-safe. */

#define MFU_NVML_LIBRARY_DEFAULT "libnvidia-ml.so.1"
#define MFU_NVML_DEVICES_MAX 64 /* GPUs a session enumerates; more are not sampled */
#define MFU_NVML_NAME_MAX 96    /* bytes of a GPU name, NUL included (NVML's name buffer) */
#define MFU_NVML_UUID_MAX 96    /* bytes of a GPU UUID, NUL included */

/* Why the clock is below its maximum: bits of mfu_nvml_sample.reasons. The values are NVML's
 * own clock event (throttle) reason masks (docs/devices.md "Live data" cites them), so an
 * NVML mask is kept as it came; a bit NVML adds later stays in the mask, unnamed. */
#define MFU_NVML_REASON_GPU_IDLE 0x1ull         /* nothing runs: clocks drop to idle */
#define MFU_NVML_REASON_APP_CLOCKS 0x2ull       /* limited by the applications clock setting */
#define MFU_NVML_REASON_SW_POWER_CAP 0x4ull     /* software power scaling: at the power limit */
#define MFU_NVML_REASON_HW_SLOWDOWN 0x8ull      /* hardware slowdown (thermal, power brake) */
#define MFU_NVML_REASON_SYNC_BOOST 0x10ull      /* held to a sync-boost group's clock */
#define MFU_NVML_REASON_SW_THERMAL 0x20ull      /* software thermal slowdown */
#define MFU_NVML_REASON_HW_THERMAL 0x40ull      /* hardware thermal slowdown */
#define MFU_NVML_REASON_HW_POWER_BRAKE 0x80ull  /* external power brake assertion */
#define MFU_NVML_REASON_DISPLAY_CLOCKS 0x100ull /* limited by the display clock setting */
/* The reasons that mean lost speed under load (not idle, not a clock someone set). */
#define MFU_NVML_REASONS_SLOWDOWN                                                                  \
    (MFU_NVML_REASON_SW_POWER_CAP | MFU_NVML_REASON_HW_SLOWDOWN | MFU_NVML_REASON_SW_THERMAL |     \
     MFU_NVML_REASON_HW_THERMAL | MFU_NVML_REASON_HW_POWER_BRAKE)

/* Short lower-case name of one reason bit: "gpu_idle", "app_clocks", "sw_power_cap",
 * "hw_slowdown", "sync_boost", "sw_thermal", "hw_thermal", "hw_power_brake",
 * "display_clocks"; NULL for anything but a single known bit. Static. */
MFU_API const char *mfu_nvml_reason_name(uint64_t bit);

/* The names of every known bit set in mask, joined by sep (NULL = ","), into buf (size n > 0,
 * always NUL-terminated; "" for no known bit). Unknown bits are written as one hex mask at the
 * end ("0x200"). Returns false when buf was too small (the text is truncated). NULL buf or n 0:
 * false, nothing written. */
MFU_API bool mfu_nvml_reasons_text(uint64_t mask, const char *sep, char *buf, size_t n);

/* One GPU at one moment. A figure NVML does not support on this GPU (NVML_ERROR_NOT_SUPPORTED)
 * is NaN, or reasons_known false; every other NVML error fails the sample instead. */
typedef struct mfu_nvml_sample {
    unsigned index;                /* NVML's index of the GPU (0-based) */
    char name[MFU_NVML_NAME_MAX];  /* as NVML reports it, e.g. "NVIDIA H100 80GB HBM3" */
    char uuid[MFU_NVML_UUID_MAX];  /* "GPU-..."; "" when the library has no nvmlDeviceGetUUID */
    const mfu_device_info *device; /* the table entry name matches (mfu_device_match_name),
                                      NULL when it matches none or several */
    mfu_device_match_kind match;   /* how; MFU_DEVICE_MATCH_NONE with device NULL */
    double sm_clock_mhz;           /* current SM clock, MHz */
    double max_sm_clock_mhz;       /* the SM clock's maximum, MHz */
    double power_w;                /* board power draw, W (NVML reports mW) */
    double power_limit_w;          /* the enforced power limit, W */
    uint64_t reasons;              /* MFU_NVML_REASON_* bits set now; 0 = none */
    bool reasons_known;            /* false: the GPU does not report reasons */
    double temperature_c;          /* GPU die temperature, degrees C */
    double gpu_utilization;        /* fraction 0..1 of the last sample period a kernel ran */
    double memory_utilization;     /* fraction 0..1 of it device memory was read or written */
    double energy_j;               /* the GPU's energy counter: J used since the driver was
                                      loaded (NVML reports mJ; Volta and newer); NaN when the
                                      library or GPU has none. The difference of two samples is
                                      the energy used between them */
} mfu_nvml_sample;

typedef struct mfu_nvml mfu_nvml;

/* Open a session: dlopen the library, look up its entry points, nvmlInit_v2(), count the GPUs
 * and get their handles and names. library: a file name or path for dlopen; NULL = the
 * environment's MFU_NVML_LIBRARY when set and not empty, else MFU_NVML_LIBRARY_DEFAULT.
 * Errors (*out NULL, nothing left open): NULL out: MFU_E_INVALID. The library cannot be loaded:
 * MFU_E_UNSUPPORTED, "NVML not found (...)" naming the library and --device/--peak-tflops. It
 * lacks a required entry point: MFU_E_UNSUPPORTED naming the entry point. nvmlInit_v2 or
 * nvmlDeviceGetCount_v2 fails: MFU_E_UNSUPPORTED naming the function and NVML's error string.
 * Getting a GPU's handle or name fails: MFU_E_IO naming the function, the GPU and the error
 * string. MFU_E_NOMEM. Zero GPUs is a session with mfu_nvml_count() == 0, not an error. */
MFU_API mfu_status mfu_nvml_new(const char *library, mfu_nvml **out, mfu_error *err);

/* nvmlShutdown(), dlclose() and free. NULL is allowed. */
MFU_API void mfu_nvml_free(mfu_nvml *n);

/* GPUs in the session (at most MFU_NVML_DEVICES_MAX); 0 for NULL. */
MFU_API size_t mfu_nvml_count(const mfu_nvml *n);

/* GPUs NVML reported, which may exceed mfu_nvml_count(); 0 for NULL. */
MFU_API size_t mfu_nvml_count_reported(const mfu_nvml *n);

/* The library file the session loaded, as given or defaulted (owned by the session). "" for
 * NULL. */
MFU_API const char *mfu_nvml_library(const mfu_nvml *n);

/* Sample GPU index now: its clocks, power, limit, reasons, temperature, utilization and energy
 * counter (the name, UUID and table match were read when the session opened). Errors: NULL n or
 * out: MFU_E_INVALID; index >= mfu_nvml_count(): MFU_E_INVALID (field "nvml_index"); an NVML call
 * that fails with anything but NVML_ERROR_NOT_SUPPORTED: MFU_E_IO, the message naming the NVML
 * function, the GPU and NVML's error string. *out is always written (figures NaN on failure). */
MFU_API mfu_status mfu_nvml_sample_device(mfu_nvml *n, size_t index, mfu_nvml_sample *out,
                                          mfu_error *err);

/* Whether GPU index has NVML GPM (GPU Performance Monitoring: Hopper and newer GPUs, R520 and
 * later drivers): the library exports the five GPM entry points and nvmlGpmQueryDeviceSupport
 * says so. false for NULL, an index out of range, or any error. Asks NVML the first time only. */
MFU_API bool mfu_nvml_has_gpm(mfu_nvml *n, size_t index);

/* The tensor pipes' activity of GPU index (NVML GPM's NVML_GPM_METRIC_ANY_TENSOR_UTIL: the
 * fraction 0..1 of the time any tensor pipe was active) between this call and the previous one
 * for that GPU: each call takes a GPM sample and compares it with the last. *out is NaN on the
 * first call, when the GPU or library has no GPM (never an error: mfu_nvml_has_gpm), and when
 * NVML does not give the metric. Errors: NULL n or out: MFU_E_INVALID; index out of range:
 * MFU_E_INVALID (field "nvml_index"); a GPM call failing with anything but
 * NVML_ERROR_NOT_SUPPORTED: MFU_E_IO naming the function, the GPU and NVML's error string;
 * MFU_E_NOMEM. */
MFU_API mfu_status mfu_nvml_tensor_activity(mfu_nvml *n, size_t index, double *out, mfu_error *err);

/* Sample every GPU of the session into out[0..cap): *count gets the number written
 * (min(count, cap)). Errors: NULL n, out (with cap > 0) or count: MFU_E_INVALID; the first
 * failing GPU's error (as mfu_nvml_sample_device), *count then the GPUs sampled before it. */
MFU_API mfu_status mfu_nvml_sample_all(mfu_nvml *n, mfu_nvml_sample *out, size_t cap, size_t *count,
                                       mfu_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MFU_DEVICE_H */
