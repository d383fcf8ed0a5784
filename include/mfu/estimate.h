/*
 * mfu/estimate.h - the identity that everything in mfu rests on, for one steady throughput:
 *
 *     tokens/s = MFU × (devices × peak FLOP/s per device) / (model FLOPs per token)
 *
 * Given FLOPs per token (from mfu/model.h), a device peak (from mfu/device.h or a user's
 * --peak-tflops) and a throughput in any of the forms that logs and people use, compute MFU,
 * HFU, tokens/s globally and per device, and model and hardware FLOP/s per device; or the
 * reverse: the tokens/s needed for a target MFU.
 */
#ifndef MFU_ESTIMATE_H
#define MFU_ESTIMATE_H

#include "mfu/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the throughput was given. */
typedef enum mfu_throughput_kind {
    MFU_TPUT_TOKENS_PER_S = 0,            /* global tokens per second (all devices) */
    MFU_TPUT_TOKENS_PER_S_PER_DEVICE = 1, /* tokens per second on one device */
    MFU_TPUT_STEP_TIME = 2,               /* seconds per step, with tokens per step (global) */
    MFU_TPUT_MODEL_FLOPS_PER_DEVICE =
        3 /* achieved model FLOP/s per device (e.g. a log's TFLOP/s) */
} mfu_throughput_kind;

typedef struct mfu_throughput {
    mfu_throughput_kind kind;
    double value;           /* tokens/s, tokens/s/device, step seconds, or FLOP/s per device */
    double tokens_per_step; /* MFU_TPUT_STEP_TIME only: global tokens in one step (> 0) */
} mfu_throughput;

/* Inputs of one estimate. All must be finite and > 0 (hardware >= model). */
typedef struct mfu_estimate_input {
    double model_flops_per_token;    /* training model FLOPs per token (no recomputation) */
    double hardware_flops_per_token; /* training FLOPs actually executed per token (>= model) */
    double peak_flops_per_s;         /* dense peak of ONE device for the dtype in use */
    double devices;                  /* number of devices that share the throughput */
} mfu_estimate_input;

typedef struct mfu_estimate {
    double tokens_per_s; /* global */
    double tokens_per_s_per_device;
    double model_flops_per_s_per_device;
    double hardware_flops_per_s_per_device;
    double mfu; /* fraction 0..1 (may exceed 1 for bad inputs) */
    double hfu; /* fraction, >= mfu */
} mfu_estimate;

/* Compute *out from in and a throughput. Returns MFU_E_INVALID (field names the input, message
 * names the flag) when any input is missing, non-finite, zero or negative, or when hardware
 * FLOPs per token are below model FLOPs per token. *out is untouched on error. An MFU above 1 is
 * returned as computed: judging it impossible is the caller's job. */
MFU_API mfu_status mfu_estimate_compute(const mfu_estimate_input *in, const mfu_throughput *tput,
                                        mfu_estimate *out, mfu_error *err);

/* The reverse question: the global tokens/s at which MFU equals target_mfu (0 < target <= 1),
 * written with the rest of the figures at that point into *out. Same errors as above, and
 * MFU_E_INVALID for a target outside (0, 1]. */
MFU_API mfu_status mfu_estimate_for_target(const mfu_estimate_input *in, double target_mfu,
                                           mfu_estimate *out, mfu_error *err);

#ifdef __cplusplus
}
#endif
#endif /* MFU_ESTIMATE_H */
