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

#include "mfu/mfu.h"

/* As mfu_device_find(), plus "cpu" (ASCII case-insensitive): this machine's CPU. On success
 * *out lives until the program exits. Errors: those of mfu_device_find and mfu_cpu_device. */
mfu_status cli_device_find(const char *name, const mfu_device_info **out, mfu_error *err);

#endif
