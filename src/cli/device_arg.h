/*
 * cli/device_arg.h - turn a --device NAME into a device entry: the table's (mfu_device_find),
 * or, for the name "cpu", the CPU of the machine running mfu (mfu_cpu_device).
 *
 * The library keeps no state, so a run-time entry needs storage that outlives its use; in the
 * CLI that is one slot per process, made on first use (thread-safe: `mfu serve` resolves
 * stored contexts on its threads) and kept until exit, so the entry lives as long as the
 * table's do.
 */
#ifndef MFU_CLI_DEVICE_ARG_H
#define MFU_CLI_DEVICE_ARG_H

#include "cli/cli.h"
#include "mfu/mfu.h"

/* As mfu_device_find(), plus "cpu" (ASCII case-insensitive): this machine's CPU. On success
 * *out lives until the program exits. Errors: those of mfu_device_find and mfu_cpu_device. */
mfu_status cli_device_find(const char *name, const mfu_device_info **out, mfu_error *err);

/* What --device, --dtype and --peak-tflops say (estimate, roofline and watch share them). */
typedef struct cli_device_choice {
    const mfu_device_info *dev; /* NULL without --device */
    mfu_dtype dtype;            /* --dtype, else bf16 */
    bool dtype_given;
    double peak;     /* FLOP/s per device, dense: --peak-tflops, else the device's for dtype,
                        else NaN */
    bool peak_given; /* --peak-tflops */
} cli_device_choice;

/* Read those options of cmd's arguments into *out. Prints one line "mfu CMD: ..." and returns
 * CLI_EXIT_USAGE for a malformed --dtype or --peak-tflops, CLI_EXIT_FAIL for a device that is
 * not known or has no peak for the dtype (and no --peak-tflops); CLI_EXIT_OK otherwise. */
int cli_device_choose(const char *cmd, const cli_args *a, cli_device_choice *out);

#endif
