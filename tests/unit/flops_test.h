/*
 * flops_test.h - the tests' one way to ask the model module for a preset's FLOPs per token.
 */
#ifndef MFU_TEST_FLOPS_H
#define MFU_TEST_FLOPS_H

#include <string.h>

#include "mfu/model.h"

/* Model FLOPs per token of preset at sequence length seq under convention conv (cmocka fails
 * the test when the preset or the count is refused). */
static inline double test_flops_per_token(const char *preset, int64_t seq, mfu_convention conv)
{
    mfu_arch a;
    assert_int_equal(mfu_preset_find(preset, &a, NULL), MFU_OK);
    mfu_workload wl;
    memset(&wl, 0, sizeof wl);
    wl.seq = seq;
    mfu_flops_options o;
    memset(&o, 0, sizeof o);
    o.convention = conv;
    mfu_flops f;
    assert_int_equal(mfu_flops_compute(&a, &wl, &o, &f, NULL), MFU_OK);
    return f.model_flops;
}

#endif
