/*
 * trace/trace.h - what other parts of mfu use from src/trace beyond the public mfu/trace.h
 * (cross-module header: `mfu trace --json` in the CLI; not installed): the JSON of a trace
 * view (json.c), whose keys docs/cli.md lists under `mfu trace --json`.
 */
#ifndef MFU_TRACE_TRACE_H
#define MFU_TRACE_TRACE_H

#include <stddef.h>

#include <jansson.h>

#include "mfu/trace.h"

/* {"ranks": [{"rank", "file", "device", "world_size", "steps": [{"step", "step_time_s",
 * "cpu_s", "activities", "breakdown"}], "totals", "kernels", "counts"}], "totals",
 * "ranks_check", "straggler", "waterfall", "peak_flops_per_s"}, the nkern longest kernels per
 * rank. A new reference (the caller json_decref()s it); NULL when out of memory. */
json_t *mfu__trace_json(const mfu_trace_view *v, size_t nkern);

#endif /* MFU_TRACE_TRACE_H */
