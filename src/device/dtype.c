/*
 * dtype.c - names of the numeric formats a peak is stated for, and a parser that accepts the
 * spellings frameworks and people use (bfloat16, half, e4m3, torch.float16, ...).
 */
#include "device/device_internal.h"
#include "mfu/device.h"
#include "util/util.h"

static const char *const canonical[MFU_DTYPE_COUNT] = {
    [MFU_DTYPE_FP64] = "fp64", [MFU_DTYPE_FP32] = "fp32", [MFU_DTYPE_TF32] = "tf32",
    [MFU_DTYPE_BF16] = "bf16", [MFU_DTYPE_FP16] = "fp16", [MFU_DTYPE_FP8] = "fp8",
    [MFU_DTYPE_INT8] = "int8",
};

/* Every accepted spelling (compared case-insensitively, after an optional "torch." prefix). */
static const struct {
    const char *spelling;
    mfu_dtype dtype;
} spellings[] = {
    {"fp64", MFU_DTYPE_FP64},
    {"float64", MFU_DTYPE_FP64},
    {"double", MFU_DTYPE_FP64},
    {"f64", MFU_DTYPE_FP64},
    {"fp32", MFU_DTYPE_FP32},
    {"float32", MFU_DTYPE_FP32},
    {"float", MFU_DTYPE_FP32},
    {"f32", MFU_DTYPE_FP32},
    {"tf32", MFU_DTYPE_TF32},
    {"tfloat32", MFU_DTYPE_TF32},
    {"tensorfloat32", MFU_DTYPE_TF32},
    {"bf16", MFU_DTYPE_BF16},
    {"bfloat16", MFU_DTYPE_BF16},
    {"fp16", MFU_DTYPE_FP16},
    {"float16", MFU_DTYPE_FP16},
    {"half", MFU_DTYPE_FP16},
    {"f16", MFU_DTYPE_FP16},
    {"fp8", MFU_DTYPE_FP8},
    {"float8", MFU_DTYPE_FP8},
    {"e4m3", MFU_DTYPE_FP8},
    {"e5m2", MFU_DTYPE_FP8},
    {"fp8_e4m3", MFU_DTYPE_FP8},
    {"fp8_e5m2", MFU_DTYPE_FP8},
    {"float8_e4m3fn", MFU_DTYPE_FP8},
    {"float8_e5m2", MFU_DTYPE_FP8},
    {"int8", MFU_DTYPE_INT8},
    {"i8", MFU_DTYPE_INT8},
};

const char *mfu_dtype_name(mfu_dtype dtype)
{
    if ((int)dtype < 0 || dtype >= MFU_DTYPE_COUNT)
        return "?";
    return canonical[dtype];
}

mfu_status mfu_dtype_parse(const char *s, mfu_dtype *out, mfu_error *err)
{
    if (!s || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_dtype_parse: NULL argument");
    const char *v = s;
    if (mfu__strncasecmp(v, "torch.", 6) == 0)
        v += 6;
    for (size_t i = 0; i < MFU__ARRAY_LEN(spellings); i++) {
        if (mfu__strcasecmp(v, spellings[i].spelling) == 0) {
            *out = spellings[i].dtype;
            return MFU_OK;
        }
    }
    char q[MFU__DEVICE_QUOTE_MAX + 4];
    mfu__device_quote(q, sizeof q, s);
    return mfu__fail_field(err, MFU_E_UNKNOWN, "dtype",
                           "unknown dtype '%s'; use one of fp64, fp32, tf32, bf16, fp16, fp8, "
                           "int8 (--dtype)",
                           q);
}
