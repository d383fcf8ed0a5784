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

#ifdef __cplusplus
}
#endif
#endif /* MFU_DEVICE_H */
