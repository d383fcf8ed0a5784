/*
 * mfu/model.h - what one token costs.
 *
 * An architecture (mfu_arch: from a Hugging Face config.json, a bundled preset, or filled in by
 * hand) plus a workload (mfu_workload: sequence length, packed documents, recomputation) gives
 * the training FLOPs per token under a named counting convention (mfu_convention), as a
 * breakdown by component, forward and training, model and hardware counts, together with the
 * parameter counts.
 *
 * Conventions exist because training stacks disagree on what a token costs (causal halving,
 * embeddings, MoE active parameters, recomputation). Each convention reproduces the published
 * figures of its source; docs/conventions.md gives every formula and source.
 *
 * Units: every FLOPs figure is a count of floating-point operations (a multiply-add is 2) per
 * token, as a double. Parameter counts are exact int64 values.
 *
 * The "0 means unset" rule: every numeric field of mfu_arch is 0 when unknown, and every
 * yes/no field is MFU_FLAG_UNSET; mfu_arch_resolve() fills the documented defaults. This lets
 * command-line flags override a config file field by field (mfu_arch_apply()).
 *
 * Thread safety: every function here is re-entrant; none keeps state between calls.
 */
#ifndef MFU_MODEL_H
#define MFU_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mfu/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- limits ------------------------------------------------------------------------------- */

#define MFU_ARCH_NAME_MAX 64     /* bytes of mfu_arch.name, NUL included */
#define MFU_ARCH_SOURCE_MAX 320  /* bytes of mfu_arch.source, NUL included */
#define MFU_DIM_MAX 2147483647LL /* the largest accepted dimension (layers, hidden, seq, ...) */
#define MFU_CONFIG_MAX_BYTES (4L * 1024 * 1024) /* the largest config.json read */
/* The largest parameter count (2^53): counts stay exact in a double up to here. */
#define MFU_PARAMS_MAX 9007199254740992LL

/* ---- architecture ------------------------------------------------------------------------- */

/* A yes/no field that can also be unset (so that a flag can override a config either way). */
typedef enum mfu_flag { MFU_FLAG_UNSET = 0, MFU_FLAG_NO = 1, MFU_FLAG_YES = 2 } mfu_flag;

/* Normalisation layers (they only change the parameter count, never the FLOPs). */
typedef enum mfu_norm {
    MFU_NORM_UNSET = 0,
    MFU_NORM_RMS = 1,          /* RMSNorm: one weight vector (Llama, Mistral, Qwen, Gemma, ...) */
    MFU_NORM_LAYER = 2,        /* LayerNorm: weight and bias (GPT-2/3, GPT-NeoX, MPT) */
    MFU_NORM_NONPARAMETRIC = 3 /* no learned parameters (OLMo 1) */
} mfu_norm;

/*
 * A decoder-only transformer. Plain data: zero-initialise (`mfu_arch a = {0};`), set what is
 * known, and let mfu_arch_resolve() fill the rest. Every count is per model (not per device).
 * Defaults applied by mfu_arch_resolve() are given after each field.
 */
typedef struct mfu_arch {
    char name[MFU_ARCH_NAME_MAX];     /* preset name or config's model name; "" when unnamed */
    char source[MFU_ARCH_SOURCE_MAX]; /* where the numbers came from; "" when unknown */
    int64_t published_params;         /* the total its source publishes, 0 when none */
    int64_t published_active_params;  /* the active (MoE) total its source publishes, 0 = none */

    /* core dimensions */
    int64_t layers;            /* transformer blocks (required) */
    int64_t hidden;            /* model width d_model (required) */
    int64_t heads;             /* query heads (required) */
    int64_t kv_heads;          /* key/value heads (GQA; 1 = MQA); default heads */
    int64_t head_dim;          /* per-head width; default hidden / heads (must divide) */
    int64_t ffn;               /* MLP hidden size of a dense layer; default 4 * hidden */
    int64_t vocab;             /* vocabulary (logits) size (required by most conventions) */
    mfu_flag gated_mlp;        /* SwiGLU/GeGLU (3 matrices) or plain (2); default plain */
    mfu_flag tied_embeddings;  /* output projection shares the input embedding; default no */
    int64_t learned_positions; /* rows of a learned position embedding (GPT-2/3, MPT); 0 none */
    mfu_flag qkv_bias;         /* biases on the Q, K, V projections; default no */
    mfu_flag out_bias;         /* bias on the attention output projection; default no */
    mfu_flag mlp_bias;         /* biases on the MLP matrices; default no */
    mfu_norm norm;             /* default MFU_NORM_RMS */
    int64_t norms_per_layer;   /* normalisation layers per block; default 2 (Gemma 2/3: 4) */

    /* mixture of experts (experts == 0: dense model) */
    int64_t experts;            /* routed experts per MoE layer */
    int64_t experts_per_token;  /* top-k routed experts per token (required with experts) */
    int64_t shared_experts;     /* always-active experts per MoE layer; default 0 */
    int64_t moe_ffn;            /* hidden size of one routed expert; default ffn */
    int64_t shared_ffn;         /* hidden size of one shared expert; default moe_ffn */
    int64_t first_dense_layers; /* leading blocks with a dense MLP (DeepSeek); default 0 */
    int64_t moe_layer_freq;     /* block i >= first_dense is MoE iff i % freq == 0; default 1 */
    int64_t moe_layers;         /* explicit count of MoE blocks (overrides the two above) */

    /* DeepSeek multi-head latent attention (kv_lora_rank > 0 turns it on) */
    int64_t q_lora_rank;      /* query low-rank; 0 = full-rank query projection */
    int64_t kv_lora_rank;     /* compressed key/value width */
    int64_t qk_nope_head_dim; /* per-head query/key width without rotary part */
    int64_t qk_rope_head_dim; /* per-head rotary query/key width (key part shared by heads) */
    int64_t v_head_dim;       /* per-head value width */

    /* sliding-window attention (window == 0: every layer attends to the whole sequence) */
    int64_t window;        /* window size in tokens */
    int64_t global_every;  /* every n-th block is global ((i + 1) % n == 0); 0 = all windowed */
    int64_t window_layers; /* explicit count of windowed blocks (overrides global_every) */

    /* What the model was trained on, as its source publishes it: not part of the architecture
     * and never read by a FLOPs count. A caller may take it as the default of
     * mfu_workload.seq and must then say so (the CLI's flops, estimate and roofline do; a log's
     * own sequence length comes first where there is a log). */
    int64_t trained_seq; /* tokens per sequence of the main pre-training stage; 0 = unknown */
    char trained_seq_source[MFU_ARCH_SOURCE_MAX]; /* where trained_seq comes from; "" when 0 */
} mfu_arch;

/* Copy into *arch every field of *overrides that is set (non-zero, non-UNSET, non-empty name
 * or source). Neither may be NULL. Use it to lay command-line flags over a config or preset.
 * Setting a pattern field (first_dense_layers, moe_layer_freq, global_every) also clears the
 * explicit count it would otherwise be hidden by (moe_layers, window_layers). */
MFU_API void mfu_arch_apply(mfu_arch *arch, const mfu_arch *overrides);

/* Check *in and write it to *out with every default filled in (see the field comments).
 * in and out may be the same object. Returns MFU_OK; MFU_E_MISSING when a required field is
 * 0 (err->field and the message name the flag that supplies it, e.g. "--layers");
 * MFU_E_INVALID for a negative or inconsistent value (heads not dividing hidden without a
 * head_dim, kv_heads not dividing heads, experts_per_token > experts, ...); MFU_E_RANGE for a
 * dimension above MFU_DIM_MAX. On failure *out is unchanged. vocab may stay 0 here: the
 * conventions that need it report it. */
MFU_API mfu_status mfu_arch_resolve(const mfu_arch *in, mfu_arch *out, mfu_error *err);

/* Parameter counts of a model. */
typedef struct mfu_param_counts {
    int64_t total;     /* every parameter: embeddings, norms, biases, all experts */
    int64_t active;    /* total with only the top-k routed experts of each MoE layer */
    int64_t matmul;    /* active minus what is only gathered, never multiplied: the input
                          embedding when untied and the learned position embedding */
    int64_t embedding; /* input token embedding + learned position embedding */
} mfu_param_counts;

/* Count the parameters of arch (resolved internally; arch is not modified). vocab is required.
 * Returns MFU_OK, or the status of mfu_arch_resolve(), or MFU_E_RANGE when a count would pass
 * MFU_PARAMS_MAX. On failure *out is zeroed. */
MFU_API mfu_status mfu_arch_params(const mfu_arch *arch, mfu_param_counts *out, mfu_error *err);

/* ---- workload ----------------------------------------------------------------------------- */

typedef enum mfu_recompute {
    MFU_RECOMPUTE_NONE = 0,      /* every activation is kept */
    MFU_RECOMPUTE_SELECTIVE = 1, /* the attention core (QK^T, softmax, AV) is re-run */
    MFU_RECOMPUTE_FULL = 2       /* the whole forward of each block is re-run */
} mfu_recompute;

/* The name ("none", "selective", "full") of a recompute mode; "?" when out of range. */
MFU_API const char *mfu_recompute_name(mfu_recompute r);
/* Parse a recompute name (ASCII case-insensitive). MFU_E_UNKNOWN names --recompute. */
MFU_API mfu_status mfu_recompute_parse(const char *name, mfu_recompute *out, mfu_error *err);

/*
 * What the model is trained on. Plain data; zero-initialise. doc_lengths is borrowed for the
 * duration of a call only. When documents are given (doc_lengths or mean_doc_len), attention
 * is masked per document (packed sequences): the core cost follows sum(L_i^2) over documents
 * instead of seq^2; mean_doc_len treats every document as having the mean length (a lower
 * bound on sum(L_i^2) for the same token count). Each document must be <= seq.
 */
typedef struct mfu_workload {
    int64_t seq;                /* tokens per sequence (the attention span); required */
    const int64_t *doc_lengths; /* lengths of packed documents, each > 0; NULL when none */
    size_t doc_count;           /* entries in doc_lengths */
    double mean_doc_len;        /* mean packed-document length; 0 = not given */
    mfu_recompute recompute;    /* changes hardware FLOPs only, never model FLOPs */
} mfu_workload;

/* ---- conventions -------------------------------------------------------------------------- */

/* How a stack counts the FLOPs of one token. Numbers are part of the ABI: only appended to. */
typedef enum mfu_convention {
    MFU_CONV_EXACT = 0,          /* 3 x every forward matmul, causal halved (default) */
    MFU_CONV_MEGATRON_2025 = 1,  /* exact without the MoE router, no sliding window */
    MFU_CONV_MAXTEXT_2025 = 2,   /* MaxText calculate_tflops_training_per_device (= exact) */
    MFU_CONV_PALM = 3,           /* 6N + 12 L H Q T */
    MFU_CONV_6N = 4,             /* 6N */
    MFU_CONV_NANOGPT = 5,        /* PaLM with N minus the position embedding */
    MFU_CONV_LLMC = 6,           /* 6N + 6 L C T, N = every parameter */
    MFU_CONV_TORCHTITAN = 7,     /* 6 N_matmul + 6 L H (d_qk + d_v) T */
    MFU_CONV_LLM_FOUNDRY = 8,    /* MosaicML: 6N + 12 L d s; HFU 8N + 16 L d s */
    MFU_CONV_NEMO_2024 = 9,      /* NeMo 24.07 closed forms, attention not halved */
    MFU_CONV_MAXTEXT_2023 = 10,  /* 6N + 6 L H Q s (halved), N = every parameter */
    MFU_CONV_MEGATRON_2021 = 11, /* Narayanan et al. 2021 Eq. 3 (includes full recompute) */
    MFU_CONV_KORTHIKANTI = 12,   /* Korthikanti et al. 2022 model / hardware FLOPs */
    MFU_CONV_COUNT = 13
} mfu_convention;

/* The canonical name ("exact", "palm", "6n", ...) of a convention; "?" when out of range. */
MFU_API const char *mfu_convention_name(mfu_convention c);
/* One line saying what the convention counts. Never NULL. */
MFU_API const char *mfu_convention_description(mfu_convention c);
/* true for the conventions whose count is 6N + something (palm, 6n, nanogpt, llmc, torchtitan,
 * llm-foundry, maxtext-2023): they accept an explicit parameter count N
 * (mfu_flops_options.params); false for the others and out-of-range values. */
MFU_API bool mfu_convention_n_based(mfu_convention c);
/* The source (paper, repository and file) whose published figures it reproduces. Never NULL. */
MFU_API const char *mfu_convention_source(mfu_convention c);
/* Parse a convention name, ASCII case-insensitive; aliases: "mosaic" (llm-foundry), "megatron"
 * (megatron-2025), "maxtext" (maxtext-2025), "nemo" (nemo-2024), "kaplan" (llmc),
 * "narayanan" (megatron-2021). "all" is not a convention (MFU_E_UNKNOWN). MFU_E_UNKNOWN names
 * --convention and lists the names. */
MFU_API mfu_status mfu_convention_parse(const char *name, mfu_convention *out, mfu_error *err);

/* How the attention core is counted. */
typedef enum mfu_attention {
    MFU_ATTENTION_DEFAULT = 0, /* as the convention's source does */
    MFU_ATTENTION_CAUSAL = 1,  /* half of the score matrix (causal mask) */
    MFU_ATTENTION_FULL = 2     /* the whole score matrix */
} mfu_attention;

/* The name ("default", "causal", "full") of an attention mode; "?" when out of range. */
MFU_API const char *mfu_attention_name(mfu_attention a);
/* Parse "causal" or "full" (ASCII case-insensitive). MFU_E_UNKNOWN names --attention. */
MFU_API mfu_status mfu_attention_parse(const char *name, mfu_attention *out, mfu_error *err);

/* Options of a FLOPs count. Zero-initialised = the exact convention with its defaults. */
typedef struct mfu_flops_options {
    mfu_convention convention;
    mfu_attention attention; /* override the convention's causal halving */
    bool count_embeddings;   /* exact family: count the input embedding as a matmul (2 V h per
                                token forward); N-based: put the input and position embeddings
                                in N (torchtitan before 2024-04, Mosaic's NumParams) */
    int64_t params;          /* N for the N-based conventions (palm, 6n, nanogpt, llmc,
                                torchtitan, llm-foundry, maxtext-2023); 0 = count it from the
                                architecture. Rejected by the others. */
} mfu_flops_options;

/* FLOPs per token by component. For N-based conventions the 6N term is split by the
 * parameters of each component (norms in `other`); with an explicit N it is all in `other`. */
typedef struct mfu_flops_breakdown {
    double attention_projections; /* Q, K, V, O (or the MLA projections) */
    double attention_core;        /* QK^T and AV, after masking, window and packing */
    double mlp;                   /* MLPs of dense blocks */
    double experts;               /* routed top-k and shared experts of MoE blocks */
    double router;                /* MoE gate h x E */
    double logits;                /* output projection h x V */
    double embedding;             /* input/position embeddings when counted */
    double other;                 /* norms, biases, or an explicit N not split by component */
} mfu_flops_breakdown;

/* The sum of every component of b (NULL gives 0). */
MFU_API double mfu_flops_breakdown_total(const mfu_flops_breakdown *b);

/* The answer of mfu_flops_compute(). Every FLOPs figure is per token. */
typedef struct mfu_flops {
    mfu_convention convention;
    mfu_attention attention;      /* the attention mode used (never DEFAULT) */
    mfu_flops_breakdown forward;  /* forward pass only */
    mfu_flops_breakdown training; /* forward + backward, no recomputation (model FLOPs) */
    double forward_flops;         /* sum of forward */
    double model_flops;           /* sum of training: the MFU numerator per token */
    double hardware_flops;        /* model_flops + recomputation: the HFU numerator */
    double attention_context;     /* keys each query attends to, averaged over tokens and
                                     attention layers, as this convention counts them */
    int64_t n_params;             /* N in the 6N term (N-based conventions), else 0 */
    bool has_param_counts;        /* params below were counted from the architecture */
    mfu_param_counts params;
} mfu_flops;

/*
 * Count the FLOPs per token of arch on workload wl under opt (NULL = defaults). arch and wl
 * must not be NULL; arch is resolved internally and not modified. Only what the convention
 * needs is required: 6n with opt->params needs nothing else; palm/nanogpt/torchtitan/
 * maxtext-2023 with opt->params need layers, heads x head_dim (or hidden) and seq;
 * llmc/llm-foundry with opt->params need layers, hidden and seq; megatron-2021/korthikanti
 * need layers, hidden, vocab, seq; the rest need a full architecture and seq.
 * Returns MFU_OK; MFU_E_MISSING / MFU_E_INVALID / MFU_E_RANGE naming the flag to fix;
 * MFU_E_UNSUPPORTED when the convention has no form for the architecture (nemo-2024 with MoE
 * or MLA). On failure *out is zeroed.
 */
MFU_API mfu_status mfu_flops_compute(const mfu_arch *arch, const mfu_workload *wl,
                                     const mfu_flops_options *opt, mfu_flops *out, mfu_error *err);

/* ---- inputs: Hugging Face config.json and bundled presets --------------------------------- */

/*
 * Read an architecture from a Hugging Face config.json. Families (model_type): llama, mistral,
 * mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, gemma3 (text_config nesting),
 * gemma3_text, phi3, gpt2, gpt_neox, olmo, olmo2, deepseek_v2, deepseek_v3, mpt.
 * overrides (may be NULL) is applied first, so a field it sets need not be in the file.
 * The result is resolved (mfu_arch_resolve). Returns MFU_OK; MFU_E_IO (path) when the file
 * cannot be read; MFU_E_LIMIT beyond MFU_CONFIG_MAX_BYTES; MFU_E_PARSE for malformed JSON
 * (err->line and err->column set) or a field of the wrong type; MFU_E_MISSING for a missing
 * field (the message names the field and the flag that supplies it); MFU_E_UNKNOWN for an
 * unsupported model_type. On failure *out is unchanged.
 * trained_seq is read from the mfu keys "_trained_seq" (a whole number > 0) and
 * "_trained_seq_source" (a string), never from max_position_embeddings: a model's longest
 * context is often not the length most of its training ran at.
 */
MFU_API mfu_status mfu_arch_from_config_json(const char *path, const mfu_arch *overrides,
                                             mfu_arch *out, mfu_error *err);
/* As mfu_arch_from_config_json, from len bytes of text (need not be NUL-terminated). */
MFU_API mfu_status mfu_arch_from_config_text(const char *text, size_t len,
                                             const mfu_arch *overrides, mfu_arch *out,
                                             mfu_error *err);

/* Number of bundled presets (data files compiled into the library). */
MFU_API size_t mfu_preset_count(void);
/* Name of preset i in alphabetical order ("llama3-8b"), NULL when i >= mfu_preset_count().
 * The string is static. */
MFU_API const char *mfu_preset_name(size_t i);
/* Load the preset called name (ASCII case-insensitive) into *out, resolved, with name, source,
 * published totals and the trained sequence length (trained_seq, trained_seq_source) filled.
 * MFU_E_UNKNOWN (field "--model") when there is no such preset; its message names the closest
 * presets ("did you mean llama3-70b?"). On failure *out is unchanged. */
MFU_API mfu_status mfu_preset_find(const char *name, mfu_arch *out, mfu_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MFU_MODEL_H */
