/*
 * gemm.c - the matrix product the CPU probe times: C = A x B, blocked the way BLAS libraries
 * block it, small enough to read.
 *
 * A is packed into panels of MR rows and B into panels of NR columns, each stored k-major and
 * padded with zeros to whole panels, so the micro-kernel always computes a full MR x NR tile
 * of C in registers: per step of k it loads NR/lanes vectors of B, broadcasts MR values of A
 * and issues MR x NR/lanes FMAs. Edge tiles are computed whole and only their valid part is
 * written. There is no blocking over k: the probe's matrices are small enough (n = 128) that a
 * panel of B stays in L1 and the packed A in L2, which is what keeps the FMA units fed.
 *
 * Kernels: portable C (any CPU), AVX2+FMA and AVX-512F (x86 with GCC or Clang, chosen at run
 * time with __builtin_cpu_supports, which also checks that the OS saves the registers). The
 * vector kernels use intrinsics, not the compiler's contraction of a*b+c, because strict C11
 * mode does not contract (-ffp-contract=off).
 */
#include <stdint.h>
#include <string.h>

#include "device/cpu_internal.h"

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define MFU__GEMM_X86 1
#endif

/* Register tile of each kernel: {MR, NR} for f32 and for f64. */
static const struct {
    size_t mr, nr;
} tile[MFU__GEMM_COUNT][2] = {
    [MFU__GEMM_PORTABLE] = {{4, 8}, {4, 8}},
    [MFU__GEMM_AVX2] = {{6, 16}, {6, 8}},    /* 12 ymm accumulators */
    [MFU__GEMM_AVX512] = {{8, 32}, {8, 16}}, /* 16 zmm accumulators */
};

bool mfu__gemm_supported(mfu__gemm_kernel kernel)
{
    switch (kernel) {
    case MFU__GEMM_PORTABLE: return true;
#ifdef MFU__GEMM_X86
    case MFU__GEMM_AVX2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case MFU__GEMM_AVX512: return __builtin_cpu_supports("avx512f");
#else
    case MFU__GEMM_AVX2:
    case MFU__GEMM_AVX512: return false;
#endif
    case MFU__GEMM_COUNT: break;
    }
    return false;
}

mfu__gemm_kernel mfu__gemm_best(void)
{
    if (mfu__gemm_supported(MFU__GEMM_AVX512))
        return MFU__GEMM_AVX512;
    if (mfu__gemm_supported(MFU__GEMM_AVX2))
        return MFU__GEMM_AVX2;
    return MFU__GEMM_PORTABLE;
}

const char *mfu__gemm_kernel_name(mfu__gemm_kernel kernel)
{
    switch (kernel) {
    case MFU__GEMM_PORTABLE: return "portable C";
    case MFU__GEMM_AVX2: return "avx2+fma";
    case MFU__GEMM_AVX512: return "avx512f";
    case MFU__GEMM_COUNT: break;
    }
    return "?";
}

static size_t round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

size_t mfu__gemm_work_elems(mfu__gemm_kernel kernel, size_t m, size_t n, size_t k, size_t elem_size)
{
    if ((unsigned)kernel >= MFU__GEMM_COUNT)
        kernel = MFU__GEMM_PORTABLE;
    int t = elem_size == 8;
    return (round_up(m, tile[kernel][t].mr) + round_up(n, tile[kernel][t].nr)) * k;
}

/* ---- packing (the same code for both element types) --------------------------------------- */

/* ap[panel][p][i] = A[panel*mr + i][p], 0 past row m. */
#define DEFINE_PACK(T, SUFFIX)                                                                     \
    static void pack_a_##SUFFIX(T *ap, const T *a, size_t lda, size_t m, size_t k, size_t mr)      \
    {                                                                                              \
        for (size_t i0 = 0; i0 < m; i0 += mr)                                                      \
            for (size_t p = 0; p < k; p++)                                                         \
                for (size_t i = 0; i < mr; i++)                                                    \
                    *ap++ = i0 + i < m ? a[(i0 + i) * lda + p] : (T)0;                             \
    }                                                                                              \
    /* bp[panel][p][j] = B[p][panel*nr + j], 0 past column n. */                                   \
    static void pack_b_##SUFFIX(T *bp, const T *b, size_t ldb, size_t k, size_t n, size_t nr)      \
    {                                                                                              \
        for (size_t j0 = 0; j0 < n; j0 += nr)                                                      \
            for (size_t p = 0; p < k; p++) {                                                       \
                const T *row = b + p * ldb + j0;                                                   \
                size_t valid = n - j0 < nr ? n - j0 : nr;                                          \
                memcpy(bp, row, valid * sizeof(T));                                                \
                for (size_t j = valid; j < nr; j++)                                                \
                    bp[j] = (T)0;                                                                  \
                bp += nr;                                                                          \
            }                                                                                      \
    }                                                                                              \
    /* Write the valid mv x nv corner of an mr x nr tile (row stride nr) into C. */                \
    static void store_tile_##SUFFIX(const T *t, size_t nr, T *c, size_t ldc, size_t mv, size_t nv) \
    {                                                                                              \
        for (size_t i = 0; i < mv; i++)                                                            \
            memcpy(c + i * ldc, t + i * nr, nv * sizeof(T));                                       \
    }

DEFINE_PACK(float, f32)
DEFINE_PACK(double, f64)

/* ---- micro-kernels: C[0..mv, 0..nv) = Ap panel x Bp panel --------------------------------- */

/* Portable: a 4 x 8 tile in plain C (the compiler may vectorise it with the baseline ISA). */
#define DEFINE_PORTABLE(T, SUFFIX)                                                                 \
    static void uk_portable_##SUFFIX(size_t k, const T *ap, const T *bp, T *c, size_t ldc,         \
                                     size_t mv, size_t nv)                                         \
    {                                                                                              \
        T acc[4][8] = {{0}};                                                                       \
        for (size_t p = 0; p < k; p++, ap += 4, bp += 8)                                           \
            for (int i = 0; i < 4; i++)                                                            \
                for (int j = 0; j < 8; j++)                                                        \
                    acc[i][j] += ap[i] * bp[j];                                                    \
        store_tile_##SUFFIX(&acc[0][0], 8, c, ldc, mv, nv);                                        \
    }

DEFINE_PORTABLE(float, f32)
DEFINE_PORTABLE(double, f64)

#ifdef MFU__GEMM_X86

/* AVX2 f32: 6 x 16, acc[i][v] holds C[i][8v .. 8v+8). */
__attribute__((target("avx2,fma"))) static void
uk_avx2_f32(size_t k, const float *ap, const float *bp, float *c, size_t ldc, size_t mv, size_t nv)
{
    __m256 acc[6][2];
#pragma GCC unroll 6
    for (int i = 0; i < 6; i++)
        acc[i][0] = acc[i][1] = _mm256_setzero_ps();
    for (size_t p = 0; p < k; p++, ap += 6, bp += 16) {
        __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
#pragma GCC unroll 6
        for (int i = 0; i < 6; i++) {
            __m256 a = _mm256_broadcast_ss(ap + i);
            acc[i][0] = _mm256_fmadd_ps(a, b0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_ps(a, b1, acc[i][1]);
        }
    }
    float t[6 * 16];
    bool full = mv == 6 && nv == 16;
    float *dst = full ? c : t;
    size_t ld = full ? ldc : 16;
#pragma GCC unroll 6
    for (int i = 0; i < 6; i++) {
        _mm256_storeu_ps(dst + i * ld, acc[i][0]);
        _mm256_storeu_ps(dst + i * ld + 8, acc[i][1]);
    }
    if (!full)
        store_tile_f32(t, 16, c, ldc, mv, nv);
}

/* AVX2 f64: 6 x 8. */
__attribute__((target("avx2,fma"))) static void uk_avx2_f64(size_t k, const double *ap,
                                                            const double *bp, double *c, size_t ldc,
                                                            size_t mv, size_t nv)
{
    __m256d acc[6][2];
#pragma GCC unroll 6
    for (int i = 0; i < 6; i++)
        acc[i][0] = acc[i][1] = _mm256_setzero_pd();
    for (size_t p = 0; p < k; p++, ap += 6, bp += 8) {
        __m256d b0 = _mm256_loadu_pd(bp), b1 = _mm256_loadu_pd(bp + 4);
#pragma GCC unroll 6
        for (int i = 0; i < 6; i++) {
            __m256d a = _mm256_broadcast_sd(ap + i);
            acc[i][0] = _mm256_fmadd_pd(a, b0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_pd(a, b1, acc[i][1]);
        }
    }
    double t[6 * 8];
    bool full = mv == 6 && nv == 8;
    double *dst = full ? c : t;
    size_t ld = full ? ldc : 8;
#pragma GCC unroll 6
    for (int i = 0; i < 6; i++) {
        _mm256_storeu_pd(dst + i * ld, acc[i][0]);
        _mm256_storeu_pd(dst + i * ld + 4, acc[i][1]);
    }
    if (!full)
        store_tile_f64(t, 8, c, ldc, mv, nv);
}

/* AVX-512 f32: 8 x 32. */
__attribute__((target("avx512f"))) static void uk_avx512_f32(size_t k, const float *ap,
                                                             const float *bp, float *c, size_t ldc,
                                                             size_t mv, size_t nv)
{
    __m512 acc[8][2];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (size_t p = 0; p < k; p++, ap += 8, bp += 32) {
        __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) {
            __m512 a = _mm512_set1_ps(ap[i]);
            acc[i][0] = _mm512_fmadd_ps(a, b0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(a, b1, acc[i][1]);
        }
    }
    float t[8 * 32];
    bool full = mv == 8 && nv == 32;
    float *dst = full ? c : t;
    size_t ld = full ? ldc : 32;
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
        _mm512_storeu_ps(dst + i * ld, acc[i][0]);
        _mm512_storeu_ps(dst + i * ld + 16, acc[i][1]);
    }
    if (!full)
        store_tile_f32(t, 32, c, ldc, mv, nv);
}

/* AVX-512 f64: 8 x 16. */
__attribute__((target("avx512f"))) static void uk_avx512_f64(size_t k, const double *ap,
                                                             const double *bp, double *c,
                                                             size_t ldc, size_t mv, size_t nv)
{
    __m512d acc[8][2];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        acc[i][0] = acc[i][1] = _mm512_setzero_pd();
    for (size_t p = 0; p < k; p++, ap += 8, bp += 16) {
        __m512d b0 = _mm512_loadu_pd(bp), b1 = _mm512_loadu_pd(bp + 8);
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) {
            __m512d a = _mm512_set1_pd(ap[i]);
            acc[i][0] = _mm512_fmadd_pd(a, b0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_pd(a, b1, acc[i][1]);
        }
    }
    double t[8 * 16];
    bool full = mv == 8 && nv == 16;
    double *dst = full ? c : t;
    size_t ld = full ? ldc : 16;
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
        _mm512_storeu_pd(dst + i * ld, acc[i][0]);
        _mm512_storeu_pd(dst + i * ld + 8, acc[i][1]);
    }
    if (!full)
        store_tile_f64(t, 16, c, ldc, mv, nv);
}

#endif /* MFU__GEMM_X86 */

/* ---- the drivers --------------------------------------------------------------------------- */

typedef void (*uk_f32)(size_t, const float *, const float *, float *, size_t, size_t, size_t);
typedef void (*uk_f64)(size_t, const double *, const double *, double *, size_t, size_t, size_t);

static uk_f32 pick_f32(mfu__gemm_kernel kernel)
{
    switch (kernel) {
#ifdef MFU__GEMM_X86
    case MFU__GEMM_AVX2: return uk_avx2_f32;
    case MFU__GEMM_AVX512: return uk_avx512_f32;
#endif
    default: return uk_portable_f32;
    }
}

static uk_f64 pick_f64(mfu__gemm_kernel kernel)
{
    switch (kernel) {
#ifdef MFU__GEMM_X86
    case MFU__GEMM_AVX2: return uk_avx2_f64;
    case MFU__GEMM_AVX512: return uk_avx512_f64;
#endif
    default: return uk_portable_f64;
    }
}

#define DEFINE_DRIVER(T, SUFFIX, T_INDEX)                                                          \
    void mfu__gemm_##SUFFIX(mfu__gemm_kernel kernel, size_t m, size_t n, size_t k, const T *a,     \
                            size_t lda, const T *b, size_t ldb, T *c, size_t ldc, T *work)         \
    {                                                                                              \
        if ((unsigned)kernel >= MFU__GEMM_COUNT)                                                   \
            kernel = MFU__GEMM_PORTABLE;                                                           \
        size_t mr = tile[kernel][T_INDEX].mr, nr = tile[kernel][T_INDEX].nr;                       \
        T *ap = work, *bp = work + round_up(m, mr) * k;                                            \
        pack_a_##SUFFIX(ap, a, lda, m, k, mr);                                                     \
        pack_b_##SUFFIX(bp, b, ldb, k, n, nr);                                                     \
        uk_##SUFFIX uk = pick_##SUFFIX(kernel);                                                    \
        for (size_t j0 = 0; j0 < n; j0 += nr)                                                      \
            for (size_t i0 = 0; i0 < m; i0 += mr)                                                  \
                uk(k, ap + i0 * k, bp + j0 * k, c + i0 * ldc + j0, ldc, m - i0 < mr ? m - i0 : mr, \
                   n - j0 < nr ? n - j0 : nr);                                                     \
    }

DEFINE_DRIVER(float, f32, 0)
DEFINE_DRIVER(double, f64, 1)

#define DEFINE_NAIVE(T, SUFFIX)                                                                    \
    void mfu__gemm_naive_##SUFFIX(size_t m, size_t n, size_t k, const T *a, size_t lda,            \
                                  const T *b, size_t ldb, T *c, size_t ldc)                        \
    {                                                                                              \
        for (size_t i = 0; i < m; i++)                                                             \
            for (size_t j = 0; j < n; j++) {                                                       \
                double s = 0;                                                                      \
                for (size_t p = 0; p < k; p++)                                                     \
                    s += (double)a[i * lda + p] * (double)b[p * ldb + j];                          \
                c[i * ldc + j] = (T)s;                                                             \
            }                                                                                      \
    }

DEFINE_NAIVE(float, f32)
DEFINE_NAIVE(double, f64)
