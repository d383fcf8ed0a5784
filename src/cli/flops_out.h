/*
 * cli/flops_out.h - printing FLOPs per token (text and JSON), shared by `mfu flops`,
 * `mfu estimate` and `mfu report` so that every command shows a model the same way.
 */
#ifndef MFU_CLI_FLOPS_OUT_H
#define MFU_CLI_FLOPS_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/cli.h"
#include "cli/model_args.h"

/* The components of a breakdown in display order: label, JSON key, offset in
 * mfu_flops_breakdown. */
struct flops_out_component {
    const char *label;
    const char *key;
    size_t offset;
};
#define FLOPS_OUT_NCOMPONENTS 8
extern const struct flops_out_component flops_out_components[FLOPS_OUT_NCOMPONENTS];

/* The value of one component (offset from flops_out_components) of b. */
double flops_out_part(const mfu_flops_breakdown *b, size_t offset);
/* 4 significant digits with an SI prefix: "48.25 GFLOP". */
void flops_out_fmt(char *buf, size_t n, double v);
/* part / whole as "12.5%", or "-" when whole is not > 0. */
void flops_out_fmt_pct(char *buf, size_t n, double part, double whole);
/* {component key: FLOPs per token} for every component. New reference. */
json_t *flops_out_breakdown_json(const mfu_flops_breakdown *b);
/* An integer, or null when !known. New reference. */
json_t *flops_out_count_json(int64_t v, bool known);
/* The full JSON of one result: convention, flops_per_token{model, hardware, forward, recompute,
 * breakdown, forward_breakdown}, model{name, params_*}, workload{seq, ...}. New reference. */
json_t *flops_out_json(const model_args *m, const mfu_flops *f);
/* "model ... / workload ..." header lines. */
void flops_out_print_model(const model_args *m);
/* "parameters total ..., active ..." line(s). */
void flops_out_print_params(const model_args *m, const mfu_flops *f);

#endif
