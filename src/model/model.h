/*
 * model/model.h - what other parts of mfu use from src/model beyond the public mfu/model.h
 * (cross-module header: the roofline of src/analysis, the model options of the CLI; not
 * installed). What only the model's own files share is in model_internal.h.
 *
 * mfu__arch_shape() turns a resolved architecture into per-component parameter counts and
 * layer counts, the single place where the architecture is read; arch.c builds the public
 * parameter counts from it, flops.c every convention's FLOPs, and the roofline
 * (src/analysis/roofline.c) its layer counts, so that both count the same layers.
 */
#ifndef MFU_MODEL_MODEL_H
#define MFU_MODEL_MODEL_H

#include <stdint.h>

#include "mfu/common.h"
#include "mfu/model.h"

/* Per-component parameter counts (as doubles: exact below 2^53) and layer counts of a resolved
 * architecture. "w" = matmul weights only, "b" = biases, per block unless it says total. */
typedef struct mfu__shape {
    double attn_w;     /* attention projection weights per block (Q, K, V, O or MLA) */
    double attn_extra; /* attention biases and MLA's internal norms per block */
    double d_qk, d_v;  /* per-head width of the scores (QK^T) and of the values (AV) */
    double mlp_w;      /* dense MLP weights per dense block */
    double mlp_b;      /* dense MLP biases per dense block */
    double expert_w;   /* one routed expert's weights */
    double shared_w;   /* all shared experts' weights of one MoE block */
    double router_w;   /* gate h x E of one MoE block */
    double norms;      /* every norm parameter in the model (blocks + final) */
    double embed_in;   /* input token embedding V x h */
    double positions;  /* learned position embedding */
    double lm_head;    /* output projection V x h when untied, else 0 (shared with embed_in) */
    int64_t n_moe;     /* MoE blocks */
    int64_t n_dense;   /* blocks with a dense MLP */
    int64_t n_local;   /* sliding-window blocks */
    int64_t n_global;  /* full-attention blocks */
    int mlp_mats;      /* matrices per MLP: 3 gated, 2 plain */
} mfu__shape;

/* Fill *s from a resolved arch (mfu_arch_resolve succeeded on it). */
void mfu__arch_shape(const mfu_arch *a, mfu__shape *s);

/* Keys per query under a causal mask with window w (0 = none), averaged over the tokens of
 * the workload: per packed document when wl lists them or gives a mean length, else over one
 * sequence of wl->seq tokens. wl must be valid (checked by the caller). */
double mfu__causal_keys_per_query(const mfu_workload *wl, double w);

/* mfu_preset_find with overrides applied before the architecture is resolved, as
 * mfu_arch_from_config_json applies them: a flag that changes a dimension (--hidden) changes
 * what is derived from it (head_dim, ffn) and is checked with the rest. */
mfu_status mfu__preset_find_with(const char *name, const mfu_arch *overrides, mfu_arch *out,
                                 mfu_error *err);

#endif /* MFU_MODEL_MODEL_H */
