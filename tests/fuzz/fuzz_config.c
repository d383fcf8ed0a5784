/*
 * fuzz_config.c - the Hugging Face config.json reader (src/model/config.c).
 *
 * Each input is a config.json text. When it reads, the architecture is counted
 * (mfu_flops_compute at a small sequence length): a model that reads must either count or
 * fail with a status, never crash or give a count that is not finite or is negative. Seeds:
 * tests/data/model.
 */
#include "fuzz.h"

#include <math.h>
#include <string.h>

#include "mfu/mfu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MFU_FUZZ_MAX_INPUT)
        return 0;
    mfu_arch a;
    if (mfu_arch_from_config_text((const char *)data, size, NULL, &a, NULL) != MFU_OK)
        return 0;
    mfu_workload w;
    memset(&w, 0, sizeof w);
    w.seq = 512;
    mfu_flops f;
    if (mfu_flops_compute(&a, &w, NULL, &f, NULL) == MFU_OK)
        MFU_FUZZ_CHECK(isfinite(f.model_flops) && f.model_flops >= 0);
    return 0;
}
