/*
 * cli/report_args.h - what `mfu report` and `mfu compare` share: the run-context options
 * (parsed by run_context.c, as for ingest and serve), the log and analysis options, and reading
 * one log into a report.
 *
 *     static const cli_optspec specs[] = {REPORT_ARGS_OPTSPECS, {"json", false}};
 *     ...
 *     report_args ra;
 *     int rc = report_args_build("compare", &args, &ra);   // prints its own errors
 *     ... report_args_compute("compare", &ra, path, &report, &stats, NULL) ...
 *     report_args_free(&ra);
 */
#ifndef MFU_CLI_REPORT_ARGS_H
#define MFU_CLI_REPORT_ARGS_H

#include "cli/cli.h"
#include "cli/model_args.h"
#include "cli/report_out.h"
#include "cli/run_context.h"
#include "mfu/mfu.h"

/* The context options of run_context.h (model, device, job) plus the log and analysis options. */
#define REPORT_ARGS_OPTSPECS                                                                       \
    RUN_CONTEXT_OPTSPECS, {"format", true}, {"map", true}, {"stack", true}, {"tolerance", true},   \
        {"size-threshold", true}, {"no-intervals", false}, {"micro-batch", true},                  \
    {                                                                                              \
        "tp", true                                                                                 \
    }

/* The help lines of those options (device, job, log, analysis), after MODEL_ARGS_HELP. */
#define REPORT_ARGS_HELP                                                                           \
    RUN_CONTEXT_DEVICE_HELP                                                                        \
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
    "  --no-intervals           medians without their 95% intervals (and no verdicts)\n"

typedef struct report_args {
    run_context ctx;     /* the run context (run_context.c: the one parser of those options) */
    mfu_report_input in; /* ctx.in plus the report's own options */
    mfu_analysis_options analysis; /* in.analysis points here */
    mfu_ingest_opts ingest;
    cli_maps maps; /* the --map values ingest.map points at */
} report_args;

/* Build everything from parsed arguments; prints the error and returns its exit status
 * (CLI_EXIT_USAGE, ...) or CLI_EXIT_OK. On success free with report_args_free(). The struct
 * must not move after this call (in.analysis and ingest.map point into it). */
int report_args_build(const char *cmd, const cli_args *a, report_args *ra);
void report_args_free(report_args *ra);

/* Read the log at path (plain, .gz, .zst, "-") and compute its report. On failure the error
 * ("mfu CMD: PATH: ...") is printed and the exit status returned; *out is NULL. stats (may be
 * NULL) gets what ingest did; skips (may be NULL) every skipped line (the caller frees it). */
int report_args_compute(const char *cmd, const report_args *ra, const char *path, mfu_report **out,
                        mfu_ingest_stats *stats, report_skips *skips);

/* The two halves of report_args_compute: read the log at path into *run (free it with
 * mfu_run_free; errors printed, exit status returned; skips as above), and compute the report of
 * run with ra's input (per_device: its analysis counts tokens per device even when the device count
 * is known, as mfu_report_input.per_device). */
int report_args_read(const char *cmd, const report_args *ra, const char *path, mfu_run **run,
                     mfu_ingest_stats *stats, report_skips *skips);
int report_args_report(const char *cmd, const report_args *ra, const char *path, const mfu_run *run,
                       bool per_device, mfu_report **out);

#endif
