/*
 * cli/run_context.h - the run context options: what MFU needs besides the log (the model of
 * model_args, the device, the job's size and batch). One parser for every command that takes
 * them: `mfu report` (flags), `mfu ingest` (flags, stored with the run), `mfu serve` (flags for
 * runs without a stored context, and each run's stored context).
 *
 * Stored form (mfu_store_set_context): the options as a JSON array of strings, one element per
 * option in command-line order, "--name=value" or "--name" (a flag); --config's path made
 * absolute. run_context_from_json() parses it back with the same option table and the same
 * checks, so a stored context means exactly what the flags meant.
 */
#ifndef MFU_CLI_RUN_CONTEXT_H
#define MFU_CLI_RUN_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/model_args.h"
#include "mfu/mfu.h"

#define RUN_CONTEXT_DEVICE_OPTSPECS                                                                \
    {"device", true}, {"dtype", true}, {"devices", true}, {"peak-tflops", true},                   \
        {"global-batch", true}, {"tokens-per-step", true},                                         \
    {                                                                                              \
        "real-tokens-per-step", true                                                               \
    }

#define RUN_CONTEXT_OPTSPECS MODEL_ARGS_OPTSPECS, RUN_CONTEXT_DEVICE_OPTSPECS

#define RUN_CONTEXT_DEVICE_HELP                                                                    \
    "Device and job (override what the log says):\n"                                               \
    "  --device NAME            a device of 'mfu devices' (id or reported name)\n"                 \
    "  --dtype D                precision of the matmuls (default: the log's, else bf16)\n"        \
    "  --peak-tflops X          dense peak per device in TFLOP/s (instead of the table)\n"         \
    "  --devices N              devices in the job (GPUs, not nodes)\n"                            \
    "  --global-batch N         sequences per optimizer step, whole job (with --seq)\n"            \
    "  --tokens-per-step N      tokens per optimizer step, whole job\n"                            \
    "  --real-tokens-per-step N non-padding tokens per step: MFU counts only these\n"

typedef struct run_context {
    model_args model;    /* the model options (owned arrays) */
    bool has_model;      /* the model options describe a model */
    mfu_report_input in; /* the report's input: every field but stack and tolerance; its
                            strings point into the parsed arguments (see args) */
    json_t *args;        /* owned: the stored arguments when read by run_context_from_json */
} run_context;

/* True when any run context option was given. */
bool run_context_given(const cli_args *a);

/* Build *out from the parsed options of cmd (which must include RUN_CONTEXT_OPTSPECS). Returns
 * CLI_EXIT_OK, or prints one line "mfu CMD: ..." and returns CLI_EXIT_USAGE / CLI_EXIT_FAIL.
 * out->in.device points into a's argv. run_context_free() after CLI_EXIT_OK only. */
int run_context_build(const char *cmd, const cli_args *a, run_context *out);

/* The stored form of the context options in a (see the file comment): a malloc'd JSON text,
 * "[]" when none was given; NULL when out of memory or a --config path cannot be resolved
 * (printed, naming cmd). */
char *run_context_to_json(const char *cmd, const cli_args *a);

/* Parse a stored context back into *out (owning what it points into), with the checks of
 * run_context_build; a problem is printed as "mfu CMD: stored context: ...". */
int run_context_from_json(const char *cmd, const char *json, run_context *out);

/* A short one-line form of a stored context for tables ("model=gpt2 device=h100-sxm"), at
 * most n-1 bytes ("..." when cut); "-" when there is none. */
void run_context_short(const char *json, char *buf, size_t n);

/* Free what run_context_build/_from_json allocated; NULL allowed. */
void run_context_free(run_context *c);

#endif /* MFU_CLI_RUN_CONTEXT_H */
