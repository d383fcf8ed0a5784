/*
 * convention.c - names, one-line descriptions and sources of the counting conventions, and the
 * names of the attention and recompute modes. docs/conventions.md is the long form.
 */
#include <string.h>

#include "model/model_internal.h"
#include "util/util.h"

static const struct convention_info {
    const char *name;
    const char *description;
    const char *source;
} conventions[MFU_CONV_COUNT] = {
    [MFU_CONV_EXACT] = {"exact",
                        "3 x every forward matmul of the architecture: Q/K/V/O (GQA, MLA), "
                        "attention core causal-halved (sum L_i^2 when packed, causal band "
                        "with a window), MLP, MoE router + top-k + shared experts, logits; "
                        "embedding gather 0",
                        "Megatron-LM num_floating_point_operations (since 2025-03, MR !2789) "
                        "and MaxText calculate_tflops_training_per_device (since 2025-07, "
                        "PR #1988)"},
    [MFU_CONV_MEGATRON_2025] = {"megatron-2025",
                                "exact without the MoE router and without sliding windows "
                                "(full causal attention on every layer)",
                                "NVIDIA/Megatron-LM megatron/training/training.py "
                                "transformer_flops (2025-03 on; sum L_i^2 for THD since "
                                "2026-05)"},
    [MFU_CONV_MAXTEXT_2025] = {"maxtext-2025",
                               "sum of forward matmuls x 3 with the MoE gate, causal attention "
                               "halved, sliding-window band 4(SW - W^2/2)HDh; equals exact",
                               "AI-Hypercomputer/maxtext maxtext_utils.py "
                               "calculate_tflops_training_per_device (halving since PR #1988, "
                               "2025-07)"},
    [MFU_CONV_PALM] = {"palm",
                       "6N + 12 L H Q T: N = matmul parameters (MoE: active), attention over "
                       "the full T x T matrix",
                       "Chowdhery et al. 2022 (PaLM) Appendix B: 540B on 6144 TPU v4 at 238.3K "
                       "tokens/s = 46.2% MFU"},
    [MFU_CONV_6N] = {"6n", "6N: parameters only, no attention term",
                     "Kaplan et al. 2020; PaLM Appendix B 'without self-attention' (45.7%)"},
    [MFU_CONV_NANOGPT] = {"nanogpt",
                          "6N + 12 L H Q T with N = every parameter but the position "
                          "embedding (the tied token embedding stays in), T = block size",
                          "karpathy/nanoGPT model.py GPT.estimate_mfu"},
    [MFU_CONV_LLMC] = {"llmc",
                       "6N + 6 L C T with N = every parameter and C = d_model (Kaplan's "
                       "attention term, numerically the causal half)",
                       "karpathy/llm.c train_gpt2.cu gpt2_estimate_mfu (since 2024-06-05, "
                       "commit 9a07817)"},
    [MFU_CONV_TORCHTITAN] = {"torchtitan",
                             "6 N_matmul + 6 L H (d_qk + d_v) T: N_matmul = parameters minus "
                             "the input embedding unless tied, MoE active = router + shared + "
                             "routed k/E; full attention",
                             "pytorch/torchtitan get_dense_model_nparams_and_flops / "
                             "get_moe_model_nparams_and_flops (before PR #280, 2024-04, N "
                             "included embeddings: --count-embeddings)"},
    [MFU_CONV_LLM_FOUNDRY] = {"llm-foundry",
                              "6N + 12 L d s (full attention, d = d_model), N = active "
                              "parameters minus wte unless tied; HFU 8N + 16 L d s with "
                              "activation checkpointing",
                              "mosaicml/llm-foundry modeling_mpt.py flops_per_batch and "
                              "scripts/train/benchmarking/README.md"},
    [MFU_CONV_NEMO_2024] = {"nemo-2024",
                            "GPT-3 (plain MLP): (24h^2 + 4sh) 3L + 6hV; Llama (gated): "
                            "L h^2 (12 + 12g/a + 18F/h + 12s/h + 6V/(L h)); attention not "
                            "halved",
                            "NVIDIA NeMo 24.07 docs/source/performance/performance_summary.md "
                            "(halving arrived in 6251117f, 2025-08-09)"},
    [MFU_CONV_MAXTEXT_2023] = {"maxtext-2023",
                               "6N + 6 L H Q s (attention halved for causality), N = every "
                               "parameter of the model's parameter tree",
                               "AI-Hypercomputer/maxtext MaxText/train.py "
                               "calculate_training_tflops (@76bd53b0f)"},
    [MFU_CONV_MEGATRON_2021] = {"megatron-2021",
                                "96 B s l h^2 (1 + s/6h + V/(16 l h)) per iteration / (B s): "
                                "MHA, 4h MLP, and full recomputation included (a hardware "
                                "count)",
                                "Narayanan et al. 2021, Efficient Large-Scale Language Model "
                                "Training on GPU Clusters, Eq. 3"},
    [MFU_CONV_KORTHIKANTI] = {"korthikanti",
                              "model 72 l h^2 (1 + s/6h + V/(12 l h)); hardware: selective "
                              "72 l h^2 (1 + s/3h + V/(12 l h)), full 96 l h^2 (1 + s/6h + "
                              "V/(16 l h))",
                              "Korthikanti et al. 2022, Reducing Activation Recomputation in "
                              "Large Transformer Models"},
};

static const struct {
    const char *alias;
    mfu_convention conv;
} aliases[] = {
    {"mosaic", MFU_CONV_LLM_FOUNDRY},   {"megatron", MFU_CONV_MEGATRON_2025},
    {"maxtext", MFU_CONV_MAXTEXT_2025}, {"nemo", MFU_CONV_NEMO_2024},
    {"kaplan", MFU_CONV_LLMC},          {"narayanan", MFU_CONV_MEGATRON_2021},
    {"llm.c", MFU_CONV_LLMC},           {"llmfoundry", MFU_CONV_LLM_FOUNDRY},
};

const char *mfu_convention_name(mfu_convention c)
{
    return (unsigned)c < MFU_CONV_COUNT ? conventions[c].name : "?";
}

const char *mfu_convention_description(mfu_convention c)
{
    return (unsigned)c < MFU_CONV_COUNT ? conventions[c].description : "unknown convention";
}

const char *mfu_convention_source(mfu_convention c)
{
    return (unsigned)c < MFU_CONV_COUNT ? conventions[c].source : "unknown convention";
}

mfu_status mfu_convention_parse(const char *name, mfu_convention *out, mfu_error *err)
{
    if (name && out) {
        for (int i = 0; i < MFU_CONV_COUNT; i++)
            if (mfu__strcasecmp(name, conventions[i].name) == 0) {
                *out = (mfu_convention)i;
                return MFU_OK;
            }
        for (size_t i = 0; i < MFU__ARRAY_LEN(aliases); i++)
            if (mfu__strcasecmp(name, aliases[i].alias) == 0) {
                *out = aliases[i].conv;
                return MFU_OK;
            }
    }
    char list[400] = "";
    for (int i = 0; i < MFU_CONV_COUNT; i++)
        mfu__appendf(list, sizeof list, "%s%s", i ? ", " : "", conventions[i].name);
    return mfu__fail_field(err, MFU_E_UNKNOWN, "--convention",
                           "unknown convention '%s': pass --convention with one of %s",
                           name ? name : "(null)", list);
}

static const char *const recompute_names[] = {"none", "selective", "full"};
static const char *const attention_names[] = {"default", "causal", "full"};

const char *mfu_recompute_name(mfu_recompute r)
{
    return (unsigned)r < MFU__ARRAY_LEN(recompute_names) ? recompute_names[r] : "?";
}

mfu_status mfu_recompute_parse(const char *name, mfu_recompute *out, mfu_error *err)
{
    for (size_t i = 0; name && out && i < MFU__ARRAY_LEN(recompute_names); i++)
        if (mfu__strcasecmp(name, recompute_names[i]) == 0) {
            *out = (mfu_recompute)i;
            return MFU_OK;
        }
    return mfu__fail_field(err, MFU_E_UNKNOWN, "--recompute",
                           "unknown recompute mode '%s': pass --recompute none, selective or "
                           "full",
                           name ? name : "(null)");
}

const char *mfu_attention_name(mfu_attention a)
{
    return (unsigned)a < MFU__ARRAY_LEN(attention_names) ? attention_names[a] : "?";
}

mfu_status mfu_attention_parse(const char *name, mfu_attention *out, mfu_error *err)
{
    for (size_t i = 1; name && out && i < MFU__ARRAY_LEN(attention_names); i++)
        if (mfu__strcasecmp(name, attention_names[i]) == 0) {
            *out = (mfu_attention)i;
            return MFU_OK;
        }
    return mfu__fail_field(err, MFU_E_UNKNOWN, "--attention",
                           "unknown attention mode '%s': pass --attention causal or full",
                           name ? name : "(null)");
}
