/*
 * plausible.c - what a step must be to enter a run: mfu_run_append's own invariants.
 *
 * Readers of logs, the canonical reader, the store, the server's POST and the in-process
 * monitor all fill runs through mfu_run_append, so the rules live here, once, and every
 * filler gets the same answer (docs/internals/plausible.md). A step is refused, never
 * patched, when a value it carries cannot be a measurement:
 *   - a step number below 0 or above MFU__RUN_MAX_STEP_NUMBER (10^18);
 *   - a step time that is negative, infinite (a number too large to read, 1e309) or longer
 *     than MFU__RUN_MAX_STEP_TIME_S;
 *   - a count, duration or rate that is negative: the doubles marked NONNEG in
 *     mfu/step_fields.h (tokens, samples, memory, tokens/s, FLOP/s, samples/s, sequence
 *     length, devices, useful tokens, clock, power, the timers).
 * What stays: the loss (negative losses exist), the learning rate and the gradient norm as
 * printed, an MFU above 1 (the analysis reports it as an impossible value), steps that go
 * back (a restarted job counts again from its checkpoint: run.h). Any other infinite figure is
 * dropped (made absent), as it always was: a framework's tokens/s of a zero-time step, a
 * "global batch size: inf".
 */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "run/step.h"
#include "util/util.h"

/* "-0.5", "5.61e+49": the value as the message shows it. */
static const char *num(char *buf, size_t n, double v)
{
    snprintf(buf, n, "%.6g", v);
    return buf;
}

static mfu_status refuse(mfu_error *err, const char *what, double v, const char *why)
{
    char b[40];
    return mfu__fail(err, MFU_E_RANGE, 0, "%s %s %s", what, num(b, sizeof b, v), why);
}

/* mfu__step_plain: the rules of plausible() without a message, read in place, and no
 * infinite double (so that nothing would be dropped). It runs for every step of every log and
 * every monitor record: building plausible()'s table of the counts and copying the step twice
 * were a fifth of a JSON-lines ingest and of a record (docs/internals/plausible.md). */
#define PLAIN_NONNEG(name) bad |= (s->name < 0) | (fabs(s->name) > DBL_MAX);
#define PLAIN_ANY(name) bad |= fabs(s->name) > DBL_MAX;
#define PLAIN_1(arg, name) PLAIN_##arg(name)
#define PLAIN(kind, name, NAME, arg, map, since, unit, what, help)                                 \
    MFU__STEP_IF_DOUBLE_##kind(PLAIN_1(arg, name))
bool mfu__step_plain(const mfu_step *s)
{
    bool bad = s->step < 0 || s->step > MFU__RUN_MAX_STEP_NUMBER ||
               s->step_time_s > MFU__RUN_MAX_STEP_TIME_S;
    MFU_STEP_FIELDS(PLAIN)
    return !bad;
}
#undef PLAIN

/* The rules with the message of the first that fails (only asked when one does). */
static mfu_status plausible(const mfu_step *in, mfu_step *out, mfu_error *err)
{
    mfu_step c = *in; /* out may be in */
    if (in->step < 0)
        return mfu__fail(err, MFU_E_RANGE, 0, "step number %lld is negative", (long long)in->step);
    if (in->step > MFU__RUN_MAX_STEP_NUMBER)
        return mfu__fail(err, MFU_E_RANGE, 0,
                         "step number %lld is beyond %lld, the largest step number kept",
                         (long long)in->step, (long long)MFU__RUN_MAX_STEP_NUMBER);
    double st = in->step_time_s;
    if (isinf(st))
        return refuse(err, "step time", st, "is not finite");
    if (st > MFU__RUN_MAX_STEP_TIME_S)
        return refuse(err, "step time", st, "s is longer than a step can take (7 days)");
    mfu__step_drop_inf(&c); /* then an infinite count is absent, not negative */
    /* the doubles marked NONNEG in mfu/step_fields.h, in struct order */
#define NONNEG_NONNEG(name, unit, what) {what, unit, c.name},
#define NONNEG_ANY(name, unit, what)
#define NONNEG(kind, name, NAME, arg, map, since, unit, what, help)                                \
    MFU__STEP_IF_DOUBLE_##kind(NONNEG_1(arg, name, unit, what))
#define NONNEG_1(arg, name, unit, what) NONNEG_##arg(name, unit, what)
    const struct {
        const char *what, *unit;
        double v;
    } counts[] = {MFU_STEP_FIELDS(NONNEG)};
#undef NONNEG
    for (size_t i = 0; i < MFU__ARRAY_LEN(counts); i++) {
        if (counts[i].v < 0) {
            char b[40];
            return mfu__fail(err, MFU_E_RANGE, 0, "%s %s%s%s is negative", counts[i].what,
                             num(b, sizeof b, counts[i].v), counts[i].unit[0] ? " " : "",
                             counts[i].unit);
        }
    }
    *out = c;
    return MFU_OK;
}

mfu_status mfu__step_plausible(const mfu_step *in, mfu_step *out, mfu_error *err)
{
    if (!mfu__step_plain(in))
        return plausible(in, out, err); /* decides, drops infinities, or says why not */
    if (out != in)
        *out = *in;
    return MFU_OK;
}
