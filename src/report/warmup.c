/*
 * warmup.c - which steps are steady: the warm-up at the start, and two rules of the report
 * around it (docs/internals/report.md):
 *
 *   - the warm-up: the analysis module's detector (docs/internals/analysis.md, "Warm-up and
 *     settle steps") on logs of at least MFU__WARMUP_ANALYSIS_STEPS usable steps, the fewest it
 *     looks at; on shorter logs (excerpts, sparse logging) the report's own short rule below;
 *   - a log that starts in the middle of training (its first step number is above
 *     MFU__WARMUP_MAX_FIRST_STEP and above twice the interval between its first two steps) has
 *     no warm-up in it: nothing is looked for;
 *   - after the warm-up, a step faster than MFU__ARTIFACT_FACTOR x the median of the steady
 *     steps is a timing artifact (asynchronous dispatch, a profiler boundary): no training step
 *     runs 5x faster than the typical one, while a stall can be any length and stays counted.
 *     The median is taken again after each removal, until none is left.
 *
 * The throughput of a step (x) is tokens/s, or 1 / step time; NaN marks an unusable step.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "mfu/analysis.h"
#include "report/internal.h"
#include "util/util.h"

/* The short rule, for 4 .. MFU__WARMUP_ANALYSIS_STEPS - 1 usable steps: the reference m is the
 * median of the second half of the usable steps, its noise the relative median absolute
 * deviation; from the first step on, every step slower than m by more than
 * max(MFU__WARMUP_MIN_SLOWDOWN, MFU__WARMUP_NOISE_K x noise) is warm-up (steps faster than
 * MFU__ARTIFACT_FACTOR x m are stepped over); it stops at the first other step and takes at
 * most half of the usable steps. */
static void short_rule(const double *x, size_t n, size_t usable, mfu_report_step_state *state,
                       double *scratch)
{
    size_t half = usable / 2, seen = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        if (state[i] == MFU_STEP_STEADY && seen++ >= half)
            scratch[k++] = x[i];
    double m = mfu__median_finite(scratch, k, scratch + k);
    for (size_t i = 0; i < k; i++)
        scratch[i] = fabs(scratch[i] - m);
    double tol = MFU__WARMUP_NOISE_K * mfu__median_finite(scratch, k, scratch + k) / m;
    if (tol < MFU__WARMUP_MIN_SLOWDOWN)
        tol = MFU__WARMUP_MIN_SLOWDOWN;
    size_t taken = 0;
    for (size_t i = 0; i < n && taken < half; i++) {
        if (state[i] != MFU_STEP_STEADY || x[i] > MFU__ARTIFACT_FACTOR * m)
            continue;
        if (x[i] >= m * (1 - tol))
            break;
        state[i] = MFU_STEP_WARMUP;
        taken++;
    }
}

/* The analysis module's warm-up rule on the steps' throughput: the settling rows of the
 * usable steps' log throughput (mfu__settle_rows), which is all mfu_analyze decides about a
 * series of throughputs alone (one config run, usable = finite and positive). Calling the rule
 * itself spares the report a whole analysis (change points, levels, detectors: 23 % of `mfu
 * report`) before the one it runs for its findings. */
static mfu_status analysis_rule(const double *x, size_t n, mfu_report_step_state *state,
                                mfu_error *err)
{
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    double *lx = malloc((n ? n : 1) * sizeof *lx);
    double *tmp = malloc((n + MFU__SETTLE_REF_ROWS) * sizeof *tmp);
    uint8_t *slow = malloc(n ? n : 1);
    mfu_status st = MFU_OK;
    if (!idx || !lx || !tmp || !slow) {
        st = mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for the warm-up");
    } else {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (state[i] == MFU_STEP_STEADY) {
                idx[m] = i;
                lx[m++] = log(x[i]);
            }
        size_t settle = mfu__settle_rows(lx, m, tmp, slow);
        size_t first = settle < m ? idx[settle] : n;
        for (size_t i = 0; i < first; i++)
            if (state[i] == MFU_STEP_STEADY)
                state[i] = MFU_STEP_WARMUP;
    }
    free(idx);
    free(lx);
    free(tmp);
    free(slow);
    return st;
}

mfu_status mfu__warmup(const double *x, size_t n, const int64_t *steps,
                       mfu_report_step_state *state, mfu_report_warmup *w, double *scratch,
                       mfu_error *err)
{
    memset(w, 0, sizeof *w);
    size_t usable = 0;
    for (size_t i = 0; i < n; i++) {
        bool ok = isfinite(x[i]) && x[i] > 0;
        state[i] = ok ? MFU_STEP_STEADY : MFU_STEP_UNUSABLE;
        usable += ok;
    }
    w->unusable = n - usable;
    if (n >= 2) {
        int64_t first = steps[0], gap = steps[1] - steps[0];
        w->mid_run = first > MFU__WARMUP_MAX_FIRST_STEP && (gap <= 0 || first > 2 * gap);
    }
    w->checked = !w->mid_run && usable >= MFU__WARMUP_MIN_STEPS;
    if (w->checked && usable >= MFU__WARMUP_ANALYSIS_STEPS) {
        mfu_status st = analysis_rule(x, n, state, err);
        if (st != MFU_OK)
            return st;
    } else if (w->checked) {
        short_rule(x, n, usable, state, scratch);
    }
    for (size_t i = 0; i < n; i++) {
        if (state[i] != MFU_STEP_WARMUP)
            continue;
        if (w->steps == 0)
            w->first_step = steps[i];
        w->last_step = steps[i];
        w->steps++;
    }

    /* timing artifacts against the median of the steady steps, again after each removal (in
     * a short log one artifact moves the median), and how slow the warm-up was */
    double m = NAN;
    for (size_t removed = 1; removed > 0;) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (state[i] == MFU_STEP_STEADY)
                scratch[k++] = x[i];
        m = mfu__median_finite(scratch, k, scratch + k);
        removed = 0;
        for (size_t i = 0; i < n; i++)
            if (state[i] == MFU_STEP_STEADY && x[i] > MFU__ARTIFACT_FACTOR * m) {
                state[i] = MFU_STEP_ARTIFACT;
                w->artifacts++;
                removed++;
            }
    }
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        if (state[i] == MFU_STEP_WARMUP)
            sum += x[i];
    if (w->steps)
        w->slowdown = sum / (double)w->steps / m - 1;
    w->steady = usable - w->steps - w->artifacts;
    return MFU_OK;
}
