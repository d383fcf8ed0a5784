/*
 * cpu_internal.h - what the CPU files of src/device share (not part of the public API): the
 * blocked matrix product the probe times (gemm.c), and its naive reference.
 *
 * mfu__gemm_f32/_f64 compute C = A x B (C overwritten, not accumulated) for row-major
 * matrices: A is m x k with row stride lda, B is k x n with stride ldb, C is m x n with stride
 * ldc (strides in elements, each >= the row length). work holds the packed panels:
 * mfu__gemm_work_elems(kernel, m, n, k, elem_size) elements, 64-byte aligned for speed (any
 * alignment is correct). m, n, k >= 1. The kernel must be one mfu__gemm_supported() accepts.
 */
#ifndef MFU_DEVICE_CPU_INTERNAL_H
#define MFU_DEVICE_CPU_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "mfu/device.h"

typedef enum mfu__gemm_kernel {
    MFU__GEMM_PORTABLE = 0, /* plain C, any CPU */
    MFU__GEMM_AVX2 = 1,     /* x86 AVX2 + FMA3 intrinsics */
    MFU__GEMM_AVX512 = 2,   /* x86 AVX-512F intrinsics */
    MFU__GEMM_COUNT = 3
} mfu__gemm_kernel;

/* True when this build has the kernel and this CPU (and OS) can run it. */
bool mfu__gemm_supported(mfu__gemm_kernel kernel);

/* The widest supported kernel: AVX512, else AVX2, else PORTABLE. */
mfu__gemm_kernel mfu__gemm_best(void);

/* "avx512f", "avx2+fma", "portable C"; "?" outside the enum. Static. */
const char *mfu__gemm_kernel_name(mfu__gemm_kernel kernel);

/* Elements of work the product of an m x k by a k x n matrix needs (elem_size 4 or 8). */
size_t mfu__gemm_work_elems(mfu__gemm_kernel kernel, size_t m, size_t n, size_t k,
                            size_t elem_size);

void mfu__gemm_f32(mfu__gemm_kernel kernel, size_t m, size_t n, size_t k, const float *a,
                   size_t lda, const float *b, size_t ldb, float *c, size_t ldc, float *work);
void mfu__gemm_f64(mfu__gemm_kernel kernel, size_t m, size_t n, size_t k, const double *a,
                   size_t lda, const double *b, size_t ldb, double *c, size_t ldc, double *work);

/* The reference: the triple loop, accumulated in double (for f32 too). */
void mfu__gemm_naive_f32(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *b,
                         size_t ldb, float *c, size_t ldc);
void mfu__gemm_naive_f64(size_t m, size_t n, size_t k, const double *a, size_t lda, const double *b,
                         size_t ldb, double *c, size_t ldc);

#endif
