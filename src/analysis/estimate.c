/*
 * estimate.c - MFU/HFU from FLOPs per token, peak, device count and a throughput.
 *
 * Everything reduces to global tokens/s first; the other figures follow from the identity
 * tokens/s = MFU × devices × peak / FLOPs per token.
 */
#include "mfu/estimate.h"

#include <math.h>

#include "util/util.h"

static bool positive(double v)
{
    return isfinite(v) && v > 0;
}

static mfu_status check_input(const mfu_estimate_input *in, mfu_error *err)
{
    if (!in)
        return mfu__fail(err, MFU_E_INVALID, 0, "no estimate input given");
    if (!positive(in->model_flops_per_token))
        return mfu__fail_field(err, MFU_E_INVALID, "model_flops_per_token",
                               "model FLOPs per token must be > 0: give a model (--model, "
                               "--config or the size flags)");
    if (!positive(in->hardware_flops_per_token) ||
        in->hardware_flops_per_token < in->model_flops_per_token * (1 - 1e-12))
        return mfu__fail_field(err, MFU_E_INVALID, "hardware_flops_per_token",
                               "hardware FLOPs per token must be >= model FLOPs per token");
    if (!positive(in->peak_flops_per_s))
        return mfu__fail_field(err, MFU_E_INVALID, "peak_flops_per_s",
                               "the device peak must be > 0: give --device or --peak-tflops");
    if (!positive(in->devices))
        return mfu__fail_field(err, MFU_E_INVALID, "devices",
                               "the device count must be > 0: give --devices N");
    return MFU_OK;
}

static void fill(const mfu_estimate_input *in, double tokens_per_s, mfu_estimate *out)
{
    double per_dev = tokens_per_s / in->devices;
    out->tokens_per_s = tokens_per_s;
    out->tokens_per_s_per_device = per_dev;
    out->model_flops_per_s_per_device = per_dev * in->model_flops_per_token;
    out->hardware_flops_per_s_per_device = per_dev * in->hardware_flops_per_token;
    out->mfu = out->model_flops_per_s_per_device / in->peak_flops_per_s;
    out->hfu = out->hardware_flops_per_s_per_device / in->peak_flops_per_s;
}

mfu_status mfu_estimate_compute(const mfu_estimate_input *in, const mfu_throughput *tput,
                                mfu_estimate *out, mfu_error *err)
{
    mfu_status st = check_input(in, err);
    if (st != MFU_OK)
        return st;
    if (!tput || !positive(tput->value))
        return mfu__fail_field(err, MFU_E_INVALID, "throughput",
                               "the throughput must be > 0: give --tokens-per-sec, "
                               "--tokens-per-sec-per-device, --step-time or --tflops-per-device");
    double tps;
    switch (tput->kind) {
    case MFU_TPUT_TOKENS_PER_S: tps = tput->value; break;
    case MFU_TPUT_TOKENS_PER_S_PER_DEVICE: tps = tput->value * in->devices; break;
    case MFU_TPUT_STEP_TIME:
        if (!positive(tput->tokens_per_step))
            return mfu__fail_field(err, MFU_E_INVALID, "tokens_per_step",
                                   "--step-time needs the tokens in one step: give "
                                   "--batch-tokens, or --batch-size with --seq");
        tps = tput->tokens_per_step / tput->value;
        break;
    case MFU_TPUT_MODEL_FLOPS_PER_DEVICE:
        tps = tput->value / in->model_flops_per_token * in->devices;
        break;
    default:
        return mfu__fail_field(err, MFU_E_INVALID, "throughput", "unknown throughput kind %d",
                               (int)tput->kind);
    }
    if (!positive(tps))
        return mfu__fail_field(err, MFU_E_RANGE, "throughput",
                               "the throughput works out to a non-finite tokens/s");
    fill(in, tps, out);
    return MFU_OK;
}

mfu_status mfu_estimate_for_target(const mfu_estimate_input *in, double target_mfu,
                                   mfu_estimate *out, mfu_error *err)
{
    mfu_status st = check_input(in, err);
    if (st != MFU_OK)
        return st;
    if (!(isfinite(target_mfu) && target_mfu > 0 && target_mfu <= 1))
        return mfu__fail_field(err, MFU_E_INVALID, "target_mfu",
                               "--target-mfu must be a fraction in (0, 1], e.g. 0.45 (or 45%%)");
    double tps = target_mfu * in->devices * in->peak_flops_per_s / in->model_flops_per_token;
    fill(in, tps, out);
    return MFU_OK;
}
