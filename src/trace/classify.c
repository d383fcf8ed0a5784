/*
 * classify.c - what a GPU activity is, by its category and kernel name, and how many FLOPs a
 * matmul op did by its recorded input shapes.
 *
 * The name rules (mfu/trace.h, mfu_trace_classify) are substring tests, ASCII
 * case-insensitive, checked in order: memory, communication, attention, matmul, other. The
 * order matters: CUTLASS's fused attention kernels (fmha_cutlassF...) hold "cutlass" and are
 * attention; cuBLAS's split-K reduction kernels hold "cublas" and are matmul work. The names
 * they come from are in docs/internals/trace.md with the traces that show them.
 */
#include <math.h>
#include <string.h>

#include "trace/internal.h"

/* Does word occur in s[0..n), ASCII case-insensitive? */
static bool has_in(const char *s, size_t n, const char *word)
{
    size_t k = strlen(word);
    for (size_t i = 0; i + k <= n; i++)
        if (mfu__strncasecmp(s + i, word, k) == 0)
            return true;
    return false;
}

static bool has_any(const char *s, size_t n, const char *const *words, size_t nw)
{
    for (size_t i = 0; i < nw; i++)
        if (has_in(s, n, words[i]))
            return true;
    return false;
}

/* "gemm" that is not FBGEMM's (fbgemm_gpu:: embedding kernels are table lookups). */
static bool has_gemm(const char *s, size_t n)
{
    for (size_t i = 0; i + 4 <= n; i++)
        if (mfu__strncasecmp(s + i, "gemm", 4) == 0 &&
            !(i >= 2 && mfu__strncasecmp(s + i - 2, "fb", 2) == 0))
            return true;
    return false;
}

static bool starts(const char *s, const char *prefix)
{
    return mfu__strncasecmp(s, prefix, strlen(prefix)) == 0;
}

/* The length of the kernel's name without its parameter list: up to the first '(' outside
 * template brackets that does not open "(anonymous namespace)". Parameter types (a tensor
 * accessor of fbgemm_gpu, an attention mask type) say nothing of what the kernel does. */
static size_t head_len(const char *name)
{
    int angle = 0;
    for (size_t i = 0; name[i]; i++) {
        char c = name[i];
        if (c == '<')
            angle++;
        else if (c == '>' && angle > 0)
            angle--;
        else if (c == '(' && angle == 0 && strncmp(name + i, "(anonymous namespace)", 21) != 0)
            return i;
    }
    return strlen(name);
}

mfu_trace_class mfu_trace_classify(const char *cat, const char *name)
{
    static const char *const comm[] = {"nccl", "rccl", "msccl", "hccl"};
    static const char *const attn[] = {"flash", "fmha", "attention", "attn", "sdpa"};
    static const char *const mm[] = {
        "gemv",      "cublas",    "cutlass", "xmma", "wgmma", "Cijk_", "triton_tem_fused_mm",
        "triton_mm", "_mm_kernel"};
    if (!name)
        name = "";
    if (cat && (strcmp(cat, "gpu_memcpy") == 0 || strcmp(cat, "gpu_memset") == 0))
        return MFU_TRACE_CLASS_MEMCPY;
    if (starts(name, "Memcpy") || starts(name, "Memset") || starts(name, "hipMemcpy") ||
        starts(name, "hipMemset") || starts(name, "dma"))
        return MFU_TRACE_CLASS_MEMCPY;
    size_t n = head_len(name);
    if (has_any(name, n, comm, MFU__ARRAY_LEN(comm)))
        return MFU_TRACE_CLASS_COMMUNICATION;
    if (has_any(name, n, attn, MFU__ARRAY_LEN(attn)))
        return MFU_TRACE_CLASS_ATTENTION;
    if (has_gemm(name, n) || has_any(name, n, mm, MFU__ARRAY_LEN(mm)))
        return MFU_TRACE_CLASS_MATMUL;
    return MFU_TRACE_CLASS_OTHER;
}

const char *mfu_trace_class_name(mfu_trace_class c)
{
    static const char *const names[] = {"matmul", "attention", "other", "communication", "memcpy"};
    return (unsigned)c < MFU__ARRAY_LEN(names) ? names[c] : "?";
}

const char *mfu_trace_part_name(mfu_trace_part p)
{
    static const char *const names[] = {
        "matmul_s", "attention_s", "other_s", "communication_exposed_s", "memcpy_s", "idle_s"};
    return (unsigned)p < MFU__ARRAY_LEN(names) ? names[p] : "?";
}

/* ---- FLOPs of matmul ops ------------------------------------------------------------------- */

bool mfu__trace_is_matmul_op(const char *op)
{
    return strcmp(op, "aten::mm") == 0 || strcmp(op, "aten::addmm") == 0 ||
           strcmp(op, "aten::bmm") == 0 || strcmp(op, "aten::baddbmm") == 0 ||
           strcmp(op, "aten::_scaled_mm") == 0;
}

/* 2 x m x k x n for a [m,k] x [k,n] pair (inner dimensions must agree); NaN otherwise. */
static double mm2(const int64_t *a, int na, const int64_t *b, int nb)
{
    if (na != 2 || nb != 2 || a[1] != b[0] || a[0] <= 0 || a[1] <= 0 || b[1] <= 0)
        return NAN;
    return 2.0 * (double)a[0] * (double)a[1] * (double)b[1];
}

static double bmm2(const int64_t *a, int na, const int64_t *b, int nb)
{
    if (na != 3 || nb != 3 || a[0] != b[0] || a[2] != b[1] || a[0] <= 0 || a[1] <= 0 || a[2] <= 0 ||
        b[2] <= 0)
        return NAN;
    return 2.0 * (double)a[0] * (double)a[1] * (double)a[2] * (double)b[2];
}

double mfu__trace_matmul_flops(const char *op, const int64_t dims[][MFU__TRACE_DIMS_RANK],
                               const int ndim[], int n)
{
    if (strcmp(op, "aten::mm") == 0 || strcmp(op, "aten::_scaled_mm") == 0)
        return n >= 2 ? mm2(dims[0], ndim[0], dims[1], ndim[1]) : NAN;
    if (strcmp(op, "aten::addmm") == 0)
        return n >= 3 ? mm2(dims[1], ndim[1], dims[2], ndim[2]) : NAN;
    if (strcmp(op, "aten::bmm") == 0)
        return n >= 2 ? bmm2(dims[0], ndim[0], dims[1], ndim[1]) : NAN;
    if (strcmp(op, "aten::baddbmm") == 0)
        return n >= 3 ? bmm2(dims[1], ndim[1], dims[2], ndim[2]) : NAN;
    return NAN;
}
