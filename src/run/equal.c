/*
 * equal.c - whether two steps (or per-rank observations) are the same (run/step.h): the
 * store's resume check and the server's change detection. Apart from run.c, whose append is
 * an ingest's hot path: in the same file these functions moved its code enough to cost 6 % of
 * a Megatron ingest.
 */
#include <math.h>
#include <string.h>

#include "run/step.h"

static bool same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* Field by field (mfu/step_fields.h): a double as same_double says, any other member by ==
 * (the bits are in flags). */
#define EQ_STEP(name) a->name == b->name &&
#define EQ_DOUBLE(name) same_double(a->name, b->name) &&
#define EQ_SCOPE(name) a->name == b->name &&
#define EQ_FLAGS(name) a->name == b->name &&
#define EQ_RANK(name) a->name == b->name &&
#define EQ_CODE(name) a->name == b->name &&
#define EQ_BIT(name)
#define EQ_NANBIT(name)
#define EQ(kind, name, NAME, arg, map, since, unit, what, help) EQ_##kind(name)

bool mfu__step_equal(const mfu_step *a, const mfu_step *b)
{
    return MFU_STEP_FIELDS(EQ) true;
}

bool mfu__rank_obs_equal(const mfu_rank_obs *a, const mfu_rank_obs *b)
{
    return a->row == b->row && a->step == b->step && a->rank == b->rank &&
           same_double(a->step_time_s, b->step_time_s) &&
           same_double(a->tokens_per_s, b->tokens_per_s);
}
