/*
 * warmup.c - which leading steps are warm-up, and which steps are timing artifacts.
 *
 * A small, documented rule (docs/internals/report.md) until the analysis module's detector
 * replaces it. On the throughput x of each usable step (tokens/s, or 1 / step time):
 *
 *   1. Fewer than MFU__WARMUP_MIN_STEPS usable steps, or a log that starts in the middle of
 *      training (its first step number is above MFU__WARMUP_MAX_FIRST_STEP and above twice
 *      the interval between its first two steps): nothing is looked for.
 *   2. The reference level m is the median of the second half of the usable steps (the part
 *      least likely to hold warm-up), and its noise the relative median absolute deviation.
 *   3. Artifacts: any step faster than MFU__ARTIFACT_FACTOR x m (asynchronous dispatch or a
 *      profiler boundary shows as an impossibly short step).
 *   4. Warm-up: from the first usable step, every step slower than m by more than
 *      max(MFU__WARMUP_MIN_SLOWDOWN, MFU__WARMUP_NOISE_K x noise), skipping artifacts; it stops
 *      at the first step that is not, and never takes more than half of the usable steps.
 */
#include <math.h>
#include <string.h>

#include "report/internal.h"

void mfu__warmup(const double *x, size_t n, const int64_t *steps, mfu_report_step_state *state,
                 mfu_report_warmup *w, double *scratch)
{
    memset(w, 0, sizeof *w);
    size_t usable = 0;
    for (size_t i = 0; i < n; i++) {
        bool ok = isfinite(x[i]) && x[i] > 0;
        state[i] = ok ? MFU_STEP_STEADY : MFU_STEP_UNUSABLE;
        usable += ok;
    }
    w->unusable = n - usable;
    if (usable < MFU__WARMUP_MIN_STEPS) {
        w->steady = usable;
        return;
    }
    if (n >= 2) {
        int64_t first = steps[0], gap = steps[1] - steps[0];
        if (first > MFU__WARMUP_MAX_FIRST_STEP && (gap <= 0 || first > 2 * gap)) {
            w->mid_run = true;
            w->steady = usable;
            return;
        }
    }
    w->checked = true;
    /* the second half of the usable steps */
    size_t half = usable / 2, seen = 0, k = 0;
    for (size_t i = 0; i < n; i++) {
        if (state[i] != MFU_STEP_STEADY)
            continue;
        if (seen++ >= half)
            scratch[k++] = x[i];
    }
    double m = mfu__median(scratch, k, scratch + k);
    for (size_t i = 0; i < k; i++)
        scratch[i] = fabs(scratch[i] - m);
    double mad = mfu__median(scratch, k, scratch + k);
    double tol = MFU__WARMUP_NOISE_K * mad / m;
    if (tol < MFU__WARMUP_MIN_SLOWDOWN)
        tol = MFU__WARMUP_MIN_SLOWDOWN;

    for (size_t i = 0; i < n; i++)
        if (state[i] == MFU_STEP_STEADY && x[i] > MFU__ARTIFACT_FACTOR * m) {
            state[i] = MFU_STEP_ARTIFACT;
            w->artifacts++;
        }
    double sum = 0;
    for (size_t i = 0; i < n && w->steps < half; i++) {
        if (state[i] == MFU_STEP_UNUSABLE || state[i] == MFU_STEP_ARTIFACT)
            continue;
        if (x[i] >= m * (1 - tol))
            break;
        state[i] = MFU_STEP_WARMUP;
        if (w->steps == 0)
            w->first_step = steps[i];
        w->last_step = steps[i];
        w->steps++;
        sum += x[i];
    }
    if (w->steps)
        w->slowdown = sum / (double)w->steps / m - 1;
    w->steady = usable - w->steps - w->artifacts;
}
