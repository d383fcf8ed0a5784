/*
 * equal.c - whether two steps (or per-rank observations) are the same (run/step.h): the
 * store's resume check and the server's change detection. Apart from run.c, whose append is
 * an ingest's hot path: in the same file these functions moved its code enough to cost 6 % of
 * a Megatron ingest.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "run/step.h"

static bool same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

bool mfu__step_equal(const mfu_step *a, const mfu_step *b)
{
    if (a->step != b->step || a->rank != b->rank || a->flags != b->flags ||
        a->tokens_per_s_scope != b->tokens_per_s_scope ||
        a->flops_per_s_scope != b->flops_per_s_scope || a->mfu_scope != b->mfu_scope ||
        a->samples_per_s_scope != b->samples_per_s_scope || a->recompute != b->recompute ||
        a->dtype != b->dtype)
        return false;
    for (int c = 0; c < MFU_COL_COUNT_; c++)
        if (!same_double(*mfu__step_field((mfu_step *)(uintptr_t)a, (mfu_column)c),
                         *mfu__step_field((mfu_step *)(uintptr_t)b, (mfu_column)c)))
            return false;
    return true;
}

bool mfu__rank_obs_equal(const mfu_rank_obs *a, const mfu_rank_obs *b)
{
    return a->row == b->row && a->step == b->step && a->rank == b->rank &&
           same_double(a->step_time_s, b->step_time_s) &&
           same_double(a->tokens_per_s, b->tokens_per_s);
}
