/*
 * cli/model_args.h - the model, workload and counting options every command that takes a model
 * shares (`mfu flops`, `mfu estimate`, `mfu report`).
 *
 * A command concatenates MODEL_ARGS_OPTSPECS with its own options, prints MODEL_ARGS_HELP in
 * its --help, and calls model_args_build() after cli_parse():
 *
 *     static const cli_optspec specs[] = {MODEL_ARGS_OPTSPECS, {"json", false}};
 *     ...
 *     model_args m;
 *     int rc = model_args_build("estimate", &args, false, &m);
 *     if (rc != CLI_EXIT_OK) return rc;          // the message is already printed
 *     ... mfu_flops_compute(&m.arch, &m.workload, &m.options, &f, &err) ...
 *     model_args_free(&m);
 *
 * Sources of the architecture: --model PRESET or --config config.json (not both), then every
 * dimension flag overrides the field it names; without either, the flags alone describe the
 * model. A missing dimension is reported by mfu_flops_compute(), naming the flag.
 */
#ifndef MFU_CLI_MODEL_ARGS_H
#define MFU_CLI_MODEL_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/cli.h"
#include "mfu/mfu.h"

/* The most documents --doc-lengths accepts (one argument holds at most 128 KiB on Linux). */
#define MODEL_ARGS_MAX_DOCS 16384

#define MODEL_ARGS_OPTSPECS                                                                        \
    {"model", true}, {"config", true}, {"layers", true}, {"hidden", true}, {"heads", true},        \
        {"kv-heads", true}, {"head-dim", true}, {"ffn", true}, {"gated", false},                   \
        {"no-gated", false}, {"vocab", true}, {"tied", false}, {"untied", false},                  \
        {"learned-positions", true}, {"norms-per-layer", true}, {"experts", true},                 \
        {"experts-per-token", true}, {"shared-experts", true}, {"moe-ffn", true},                  \
        {"shared-ffn", true}, {"first-dense", true}, {"moe-layer-freq", true},                     \
        {"moe-layers", true}, {"q-lora-rank", true}, {"kv-lora-rank", true},                       \
        {"qk-nope-dim", true}, {"qk-rope-dim", true}, {"v-head-dim", true}, {"window", true},      \
        {"global-every", true}, {"window-layers", true}, {"seq", true}, {"doc-lengths", true},     \
        {"mean-doc-len", true}, {"recompute", true}, {"params", true}, {"convention", true},       \
        {"attention", true},                                                                       \
    {                                                                                              \
        "count-embeddings", false                                                                  \
    }

#define MODEL_ARGS_HELP                                                                            \
    "Model (flags override the fields of --model or --config):\n"                                  \
    "  --model NAME             a bundled preset (see --list-presets of 'mfu flops')\n"            \
    "  --config PATH            a Hugging Face config.json\n"                                      \
    "  --layers N --hidden N --heads N --kv-heads N --head-dim N --ffn N --vocab N\n"              \
    "  --gated | --no-gated     gated MLP (SwiGLU/GeGLU, 3 matrices) or plain (2)\n"               \
    "  --tied | --untied        the output projection shares the input embedding or not\n"         \
    "  --learned-positions N    rows of a learned position embedding (GPT-2/3, MPT)\n"             \
    "  --norms-per-layer N      normalisation layers per block (parameters only)\n"                \
    "  --experts N --experts-per-token K --shared-experts N --moe-ffn N --shared-ffn N\n"          \
    "  --first-dense N --moe-layer-freq N --moe-layers N      mixture of experts\n"                \
    "  --q-lora-rank N --kv-lora-rank N --qk-nope-dim N --qk-rope-dim N --v-head-dim N\n"          \
    "                           DeepSeek multi-head latent attention\n"                            \
    "  --window N|none --global-every N --window-layers N     sliding-window attention\n"          \
    "                           (--global-every 2: Gemma 2; 6: Gemma 3, 5 local : 1 global)\n"     \
    "Workload:\n"                                                                                  \
    "  --seq N                  tokens per sequence\n"                                             \
    "  --doc-lengths L1,L2,...  packed documents: attention follows sum L_i^2\n"                   \
    "  --mean-doc-len N         packed documents of this mean length\n"                            \
    "  --recompute MODE         none | selective | full (changes hardware FLOPs only)\n"           \
    "Counting:\n"                                                                                  \
    "  --convention NAME        exact (default), megatron-2025, maxtext-2025, palm, 6n,\n"         \
    "                           nanogpt, llmc, torchtitan, llm-foundry, nemo-2024,\n"              \
    "                           maxtext-2023, megatron-2021, korthikanti\n"                        \
    "  --attention causal|full  override the convention's causal halving\n"                        \
    "  --count-embeddings       count the input embedding (as a matmul, or inside N)\n"            \
    "  --params N               N of the 6N conventions (540e9, 8.03B)\n"

typedef struct model_args {
    mfu_arch arch;             /* merged: preset/config, then flags; not resolved */
    bool from_file;            /* --model or --config was given */
    mfu_workload workload;     /* doc_lengths points into this object's own array */
    mfu_flops_options options; /* convention is EXACT when all_conventions */
    bool all_conventions;      /* --convention all (only when the command allows it) */
    bool seq_from_arch;        /* workload.seq is arch.trained_seq (model_args_default_seq) */
    int64_t *docs;             /* owned: the parsed --doc-lengths */
} model_args;

/* Fill *out from the parsed options of cmd. allow_all: accept --convention all. Returns
 * CLI_EXIT_OK, or prints one line "mfu CMD: ..." and returns CLI_EXIT_USAGE (bad flag value,
 * unknown preset) or CLI_EXIT_FAIL (a config.json that cannot be read). *out needs
 * model_args_free() after CLI_EXIT_OK only. */
int model_args_build(const char *cmd, const cli_args *a, bool allow_all, model_args *out);

/* For the commands without a log (flops, estimate, roofline): when --seq was not given and
 * the preset states the length it was trained at (arch.trained_seq), make it the workload's
 * sequence length and set seq_from_arch, so that the output says so (model_args_print_seq_note,
 * model_args_seq_json). Commands that read a log never call this: there --seq comes first, then
 * the log's own length, then the preset's. */
void model_args_default_seq(model_args *m);

/* The note "seq N, the length MODEL was trained at: SOURCE. --seq N overrides it" on stdout,
 * prefixed by label (e.g. "note        "); nothing unless seq_from_arch. */
void model_args_print_seq_note(const model_args *m, const char *label);

/* Add "seq_source" ("--seq", "trained_seq" or null), "trained_seq" and "trained_seq_source"
 * (null when the preset states none) to the workload object w. */
void model_args_seq_json(const model_args *m, json_t *w);

/* Free what model_args_build() allocated; accepts NULL. */
void model_args_free(model_args *m);

/* The exit status for a library failure on user input: CLI_EXIT_USAGE for a missing, invalid,
 * unknown or out-of-range value (fix a flag), CLI_EXIT_FAIL otherwise. */
int model_args_exit_status(mfu_status st);

#endif /* MFU_CLI_MODEL_ARGS_H */
