/*
 * cli/report_args.h - what `mfu report` and `mfu compare` share: the run-context options
 * (model, device, job, log format), the analysis options, and reading one log into a report.
 *
 *     static const cli_optspec specs[] = {REPORT_ARGS_OPTSPECS, {"json", false}};
 *     ...
 *     report_args ra;
 *     int rc = report_args_build("compare", &args, specs, &ra);   // prints its own errors
 *     ... report_args_compute("compare", &ra, path, &report, &stats) ...
 *     report_args_free(&ra);
 */
#ifndef MFU_CLI_REPORT_ARGS_H
#define MFU_CLI_REPORT_ARGS_H

#include "cli/cli.h"
#include "cli/model_args.h"
#include "mfu/mfu.h"

/* The context options (MODEL_ARGS_OPTSPECS plus device, job, log and analysis options). */
#define REPORT_ARGS_OPTSPECS                                                                       \
    MODEL_ARGS_OPTSPECS, {"device", true}, {"dtype", true}, {"devices", true},                     \
        {"peak-tflops", true}, {"global-batch", true}, {"tokens-per-step", true},                  \
        {"real-tokens-per-step", true}, {"format", true}, {"map", true}, {"stack", true},          \
        {"tolerance", true}, {"size-threshold", true}, {"seed", true}, {"resamples", true},        \
        {"micro-batch", true},                                                                     \
    {                                                                                              \
        "tp", true                                                                                 \
    }

/* The help lines of those options (device, job, log, analysis), after MODEL_ARGS_HELP. */
#define REPORT_ARGS_HELP                                                                           \
    "Device and job (override what the log says):\n"                                               \
    "  --device NAME            a device of 'mfu devices' (id or reported name)\n"                 \
    "  --dtype D                precision of the matmuls (default: the log's, else bf16)\n"        \
    "  --peak-tflops X          dense peak per device in TFLOP/s (instead of the table)\n"         \
    "  --devices N              devices in the job (GPUs, not nodes)\n"                            \
    "  --global-batch N         sequences per optimizer step, whole job (with --seq)\n"            \
    "  --tokens-per-step N      tokens per optimizer step, whole job\n"                            \
    "  --real-tokens-per-step N non-padding tokens per step: MFU counts only these\n"              \
    "  --micro-batch N, --tp N  sequences per device per micro-step, tensor-parallel size:\n"      \
    "                           the roofline finding (micro-batch default: the log's)\n"           \
    "Log:\n"                                                                                       \
    "  --format NAME            read as this format instead of detecting it\n"                     \
    "  --map FIELD=COLUMN       jsonl / csv field mapping (see 'mfu convert --help')\n"            \
    "  --stack NAME             recompute as this framework does (default: the log's\n"            \
    "                           format; --list-stacks lists the profiles)\n"                       \
    "  --tolerance F            relative agreement tolerance (default 0.01 = 1%)\n"                \
    "Analysis (docs/analysis.md):\n"                                                               \
    "  --size-threshold F       'size known' when a change's 95% interval is narrower\n"           \
    "                           than +-F (fraction; default 0.01 = 1 point)\n"                     \
    "  --seed N, --resamples N  bootstrap seed (1) and resamples (1000; 0 = none)\n"

typedef struct report_args {
    model_args model;
    mfu_report_input in;
    mfu_analysis_options analysis; /* in.analysis points here */
    mfu_ingest_opts ingest;
    const char *maps[MFU_INGEST_MAX_MAP];
} report_args;

/* Build everything from parsed arguments; prints the error and returns its exit status
 * (CLI_EXIT_USAGE, ...) or CLI_EXIT_OK. On success free with report_args_free(). The struct
 * must not move after this call (in.analysis and ingest.map point into it). */
int report_args_build(const char *cmd, const cli_args *a, const cli_optspec *specs,
                      report_args *ra);
void report_args_free(report_args *ra);

/* Read the log at path (plain, .gz, .zst, "-") and compute its report. On failure the error
 * ("mfu CMD: PATH: ...") is printed and the exit status returned; *out is NULL. stats (may be
 * NULL) gets what ingest did. */
int report_args_compute(const char *cmd, const report_args *ra, const char *path, mfu_report **out,
                        mfu_ingest_stats *stats);

#endif
