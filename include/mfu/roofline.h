/*
 * mfu/roofline.h - the roofline view of a training step: the shapes of its main matrix
 * products, their arithmetic intensity against the device's ridge point, and the MFU ceiling
 * that those shapes allow.
 *
 * From an architecture (mfu/model.h), a workload (sequence length, packed documents,
 * recomputation), a micro-batch, tensor- and expert-parallel sizes, a dtype and a device's
 * dense peak and memory bandwidth, mfu_roofline_compute() lists every main matrix product of
 * one micro-step on one device, forward and backward:
 *
 *     attention projections  Q, K, V, O (GQA) or MLA's low-rank q/kv down and up projections
 *     attention core         scores (Q K^T) and values (P V) per (sequence, head), causal and
 *                            sliding-window aware through a mask fraction
 *     MLP                    up, gate (gated MLPs), down of dense blocks
 *     MoE                    router; per-expert up/gate/down at the average tokens per expert;
 *                            shared experts
 *     logits                 the output projection
 *
 * Each product is C[m x n] = A[m x k] B[k x n], run `count` times: FLOPs = 2 m n k x count x
 * mask fraction; bytes moved = A, B and C once each at the dtype's size (the model is stated in
 * docs/internals/roofline.md with its adjustments: fused attention keeps the score matrix on
 * chip; grouped key/value heads are read once per group; optionally an fp32 weight-gradient
 * accumulator is read and written); intensity = FLOPs / bytes; the product is memory-bound
 * when its intensity is below the ridge point peak / bandwidth, and attains
 * min(peak, intensity x bandwidth).
 *
 * The ceiling: the step's model FLOPs divided by (peak x the sum over products of FLOPs /
 * attainable FLOP/s), recomputed forward products included in the time: the FLOP-weighted
 * harmonic mean of the attainable fractions of peak. It is an UPPER BOUND on MFU set by the
 * matrix shapes alone (perfect kernels, no communication, no non-matmul work), never a
 * prediction. FLOPs follow the exact convention (mfu_flops_compute with MFU_CONV_EXACT):
 * with tp = ep = 1 the forward products sum to its forward FLOPs per token times the tokens.
 *
 * Units: FLOPs are counts, FLOP/s rates, bytes bytes, intensities FLOP/byte, time seconds,
 * shares and the ceiling fractions 0..1. Shapes are doubles: tokens per expert is an average
 * and may be fractional.
 *
 * Thread safety: every function is re-entrant; nothing is kept between calls. mfu_roofline is
 * plain data owned by the caller (a few kilobytes; no allocation, nothing to free).
 */
#ifndef MFU_ROOFLINE_H
#define MFU_ROOFLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mfu/analysis.h"
#include "mfu/common.h"
#include "mfu/device.h"
#include "mfu/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- limits -------------------------------------------------------------------------------- */

#define MFU_ROOFLINE_MAX_PRODUCTS 64 /* products of one roofline (at most 20 forward x 3) */
#define MFU_ROOFLINE_NAME_MAX 24     /* bytes of a product name, NUL included */
#define MFU_ROOFLINE_WARN_BELOW 0.60 /* default: a ceiling below this is a warning finding */

/* ---- what is computed ---------------------------------------------------------------------- */

/* Which part of the model a product belongs to. Numbers are only appended to. */
typedef enum mfu_roofline_group {
    MFU_RL_ATTN_PROJ = 0, /* Q, K, V, O or the MLA projections */
    MFU_RL_ATTN_CORE = 1, /* scores and values */
    MFU_RL_MLP = 2,       /* dense-block MLP */
    MFU_RL_ROUTER = 3,    /* MoE gate */
    MFU_RL_EXPERTS = 4,   /* routed and shared experts */
    MFU_RL_LOGITS = 5,    /* output projection */
    MFU_RL_GROUP_COUNT = 6
} mfu_roofline_group;

/* Which pass. For C = A B: fwd computes C; dgrad computes dA = dC B^T (the activation
 * gradient; in attention dQ or dP); wgrad computes dB = A^T dC (the weight gradient; in
 * attention dK or dV). The three touch the same three matrices with transposed shapes. */
typedef enum mfu_roofline_pass {
    MFU_RL_FWD = 0,
    MFU_RL_DGRAD = 1,
    MFU_RL_WGRAD = 2
} mfu_roofline_pass;

/* One matrix product of the step: C[m x n] = A[m x k] B[k x n], as run in its pass. */
typedef struct mfu_roofline_product {
    char name[MFU_ROOFLINE_NAME_MAX]; /* "attn.q", "mla.kv_up", "attn.scores", "mlp.up",
                                         "moe.router", "moe.expert.down", "moe.shared.gate",
                                         "logits"; windowed-layer attention ends ".window";
                                         fused: "attn.qkv", "mlp.up_gate", ... */
    mfu_roofline_group group;
    mfu_roofline_pass pass;
    double m, n, k;       /* the shape in this pass (per device, after tp/ep splits) */
    double count;         /* times it runs per micro-step on one device */
    double mask_fraction; /* fraction of m n k computed: 1, or the causal/window share of
                             the score matrix (attention core) */
    double flops;         /* 2 m n k x mask_fraction x count */
    double bytes;         /* bytes moved by all `count` runs */
    double intensity_flops_per_byte;
    bool memory_bound;             /* intensity < the ridge point */
    double attainable_flops_per_s; /* min(peak, intensity x bandwidth) */
    double time_s;                 /* flops / attainable, all runs */
    double flops_share;            /* flops / the step's model FLOPs */
    bool recomputed;               /* a forward product that runs again in the backward */
} mfu_roofline_product;

/* The inputs besides the model and workload. Start from mfu_roofline_config_init(). */
typedef struct mfu_roofline_config {
    int64_t micro_batch;     /* sequences per device per micro-step, >= 1 (default 1) */
    int64_t tp;              /* tensor-parallel size: splits heads, FFN and vocabulary
                                (column/row parallel); must divide heads; 0 = 1 */
    int64_t ep;              /* expert-parallel size: experts per device = experts / ep (must
                                divide); each expert sees the tokens of ep devices; 0 = 1 */
    int64_t etp;             /* expert tensor-parallel size: splits a routed expert's FFN;
                                0 = tp (Megatron-LM's default) */
    mfu_dtype dtype;         /* element size of every operand (bf16 default) */
    double peak_flops_per_s; /* dense peak of one device for dtype, > 0 */
    double memory_bandwidth_bytes_per_s; /* of one device, > 0 */
    bool unfused_attention; /* true: the score matrix is written to and read from memory
                               (eager attention); false (default): fused (flash) attention
                               keeps it on chip */
    bool fp32_weight_grad;  /* true: weight gradients accumulate into an fp32 buffer that is
                               read and written (Megatron-LM's gradient-accumulation fusion);
                               false (default): the weight gradient is written once at dtype */
    bool fused_projections; /* true: Q, K, V run as one GEMM ("attn.qkv") and an MLP's up and
                               gate as one ("*.up_gate"), as Megatron-LM's linear_qkv and
                               linear_fc1 do; false (default): one GEMM per matrix (Hugging
                               Face, torchtitan). MLA's projections are never fused. */
} mfu_roofline_config;

/* The roofline of one micro-step on one device. */
typedef struct mfu_roofline {
    /* inputs, resolved */
    int64_t micro_batch, seq, tp, ep, etp;
    double tokens;            /* micro_batch x seq */
    double tokens_per_expert; /* average tokens one routed expert sees: tokens x top-k x ep /
                                 experts; 0 for a dense model */
    mfu_dtype dtype;
    double bytes_per_element;
    double peak_flops_per_s;
    double memory_bandwidth_bytes_per_s;
    double ridge_flops_per_byte; /* peak / bandwidth */
    bool unfused_attention, fp32_weight_grad, fused_projections;
    mfu_recompute recompute;

    /* the products: fwd, dgrad, wgrad of each forward product in model order */
    size_t nproducts;
    mfu_roofline_product products[MFU_ROOFLINE_MAX_PRODUCTS];

    /* totals */
    double flops;              /* model FLOPs of the micro-step on this device */
    double recompute_flops;    /* extra FLOPs of recomputed forward products */
    double time_s;             /* sum of product times, recomputation included */
    double ceiling;            /* flops / (peak x time_s): the MFU ceiling, 0..1 */
    double memory_bound_share; /* share of flops in memory-bound products */
    double group_flops_share[MFU_RL_GROUP_COUNT];        /* share of flops per group */
    double group_memory_bound_share[MFU_RL_GROUP_COUNT]; /* share of the group's flops that
                                                            are memory-bound (0 when empty) */
} mfu_roofline;

/* ---- functions ----------------------------------------------------------------------------- */

/* Fill *cfg with the defaults: micro_batch 1, tp 1, ep 1, etp 0 (= tp), bf16, fused attention,
 * no fp32 weight gradient, one GEMM per projection matrix, and no peak or bandwidth (0: the caller
 * must set both, or call mfu_roofline_config_set_device()). cfg must not be NULL. */
MFU_API void mfu_roofline_config_init(mfu_roofline_config *cfg);

/* Set cfg's peak (the dense figure for cfg->dtype) and memory bandwidth from a table entry.
 * Errors: MFU_E_INVALID (NULL cfg or dev); MFU_E_UNSUPPORTED when the entry has no peak for the
 * dtype (the message names the dtypes it has) or no bandwidth (the message names
 * --bandwidth-tbs). cfg is unchanged on error. */
MFU_API mfu_status mfu_roofline_config_set_device(mfu_roofline_config *cfg,
                                                  const mfu_device_info *dev, mfu_error *err);

/* Bytes per element of dtype: 8 fp64; 4 fp32, tf32; 2 bf16, fp16; 1 fp8, int8; 0 for a value
 * outside the enum. */
MFU_API double mfu_roofline_dtype_bytes(mfu_dtype dtype);

/* The roofline of one forward product C[m x n] = A[m x k] B[k x n] run once, under cfg (its
 * dtype, peak and bandwidth; the parallel sizes are not used): out->name is "gemm", group
 * MFU_RL_MLP, pass fwd, share 1. m, n, k must be finite and > 0. Errors: MFU_E_INVALID (NULL,
 * a bad shape, or a cfg field as mfu_roofline_compute() checks them). *out is zeroed on
 * error. */
MFU_API mfu_status mfu_roofline_gemm(const mfu_roofline_config *cfg, double m, double n, double k,
                                     mfu_roofline_product *out, mfu_error *err);

/* The roofline of a training micro-step of arch on wl under cfg. arch and wl are validated as
 * mfu_flops_compute() does under the exact convention (a full architecture with vocab, and
 * seq, are required); attention is causal; wl->recompute adds the time of recomputed forward
 * products (selective: the attention core; full: every block product). None of arch, wl, cfg,
 * out may be NULL. Errors: those of mfu_flops_compute() (naming the model flag to fix);
 * MFU_E_INVALID with err->field naming the option: "--micro-batch" (< 1), "--tp" (negative,
 * not dividing --heads, or not dividing / divided by --kv-heads), "--ep" (negative, > 1 for a
 * dense model, not dividing --experts), "--etp" (negative, > 1 for a dense model), "--dtype"
 * (outside the enum), "--peak-tflops" / "--bandwidth-tbs" (not finite and > 0); MFU_E_RANGE
 * ("--micro-batch", "--tp", "--ep", "--etp") above MFU_DIM_MAX. On error *out is zeroed. */
MFU_API mfu_status mfu_roofline_compute(const mfu_arch *arch, const mfu_workload *wl,
                                        const mfu_roofline_config *cfg, mfu_roofline *out,
                                        mfu_error *err);

/* Stable names: "attention_projections", "attention_core", "mlp", "router", "experts",
 * "logits"; "?" out of range. */
MFU_API const char *mfu_roofline_group_name(mfu_roofline_group g);
/* Stable names: "fwd", "dgrad", "wgrad"; "?" out of range. */
MFU_API const char *mfu_roofline_pass_name(mfu_roofline_pass p);

/* Write the one-line finding sentence of r into buf (size n > 0), UTF-8, e.g.
 * "at micro-batch 1 × 512 tokens the MLP products are memory-bound; expect MFU at most 43 %
 * (a roofline ceiling, not a prediction)". A group is named when at least half of its FLOPs
 * are in memory-bound products (largest share first, at most three); with none it says the
 * main products are compute-bound. A ceiling of 90 % or more gets no number (it would tell
 * nothing): "...compute-bound: their shapes do not limit MFU", or, with memory-bound groups,
 * "..., yet the shapes allow MFU above 90 %". TP and EP above 1 are named. Returns false when r or
 * buf is NULL, n is 0, or the text was truncated. */
MFU_API bool mfu_roofline_sentence(const mfu_roofline *r, char *buf, size_t n);

/* Turn r into an analysis finding for mfu_analysis_add_finding(): kind "roofline", severity
 * warning when r->ceiling < warn_below (MFU_ROOFLINE_WARN_BELOW is the suggested value), else
 * info; first_step/last_step as given (the steps the roofline's workload describes); summary =
 * mfu_roofline_sentence(); next_step says how to raise the intensity (or, when nothing is
 * memory-bound, to look outside the matrix products); evidence: ceiling_fraction,
 * ridge_flops_per_byte, memory_bound_share, micro_batch, seq_tokens, tp, ep,
 * tokens_per_expert. Errors: MFU_E_INVALID (NULL r or out, warn_below not in [0, 1]); *out is
 * zeroed on error. */
MFU_API mfu_status mfu_roofline_finding(const mfu_roofline *r, double warn_below,
                                        int64_t first_step, int64_t last_step, mfu_finding *out,
                                        mfu_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MFU_ROOFLINE_H */
