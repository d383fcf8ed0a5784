/*
 * set.c - the traces of one run's ranks together: are they ranks of one run, who is the
 * straggler, the run of their steps (for the report's MFU), the MFU waterfall.
 *
 * The straggler is found from the traces alone. In data-parallel training every rank waits in
 * the step's collectives for the slowest one, so the slow rank is the one whose compute is
 * longest, and the wait shows on the others as exposed communication beyond the straggler's
 * own (it arrives last and waits least). Both are means per step over the steps every rank has.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/internal.h"

mfu_status mfu_trace_check_ranks(const mfu_trace *const *t, size_t n, mfu_trace_ranks *out,
                                 mfu_error *err)
{
    if (!t || !out || n == 0)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_trace_check_ranks: give at least one trace");
    memset(out, 0, sizeof *out);
    out->world_size = -1;
    if (n > MFU_TRACE_MAX_RANKS)
        return mfu__fail(err, MFU_E_LIMIT, 0,
                         "more than %d traces in one set (MFU_TRACE_MAX_RANKS)",
                         MFU_TRACE_MAX_RANKS);
    for (size_t i = 0; i < n; i++) {
        int64_t w = mfu_trace_world_size(t[i]);
        if (w < 0)
            continue;
        if (out->world_size >= 0 && w != out->world_size)
            return mfu__fail(err, MFU_E_INVALID, 0,
                             "%s says world size %lld, %s says %lld: traces of one run share "
                             "one world size; compare two runs with mfu trace --compare A B",
                             mfu_trace_name(t[i]), (long long)w, mfu_trace_name(t[0]),
                             (long long)out->world_size);
        out->world_size = w;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t r = mfu_trace_rank(t[i]);
        if (r < 0 && n > 1)
            return mfu__fail(err, MFU_E_INVALID, 0,
                             "%s does not name its rank (no distributedInfo.rank): expected "
                             "the traces of one run's ranks, each naming its rank; pass it "
                             "alone, or the traces torch.distributed writes",
                             mfu_trace_name(t[i]));
        if (out->world_size >= 0 && r >= out->world_size)
            return mfu__fail(err, MFU_E_INVALID, 0, "%s is rank %lld of a world of %lld",
                             mfu_trace_name(t[i]), (long long)r, (long long)out->world_size);
        for (size_t k = 0; k < i; k++)
            if (r >= 0 && mfu_trace_rank(t[k]) == r)
                return mfu__fail(err, MFU_E_INVALID, 0,
                                 "%s and %s are both rank %lld: expected one trace per rank; "
                                 "to compare two runs use mfu trace --compare A B",
                                 mfu_trace_name(t[k]), mfu_trace_name(t[i]), (long long)r);
    }
    if (out->world_size > 0 && (size_t)out->world_size > n) {
        for (int64_t r = 0; r < out->world_size; r++) {
            bool have = false;
            for (size_t i = 0; i < n && !have; i++)
                have = mfu_trace_rank(t[i]) == r;
            if (have)
                continue;
            if (out->missing < MFU_TRACE_MISSING_LISTED)
                out->missing_rank[out->missing] = r;
            out->missing++;
        }
    }
    return MFU_OK;
}

mfu_trace_breakdown mfu_trace_set_total(const mfu_trace *const *t, size_t n, size_t *rank_steps)
{
    mfu_trace_breakdown sum;
    memset(&sum, 0, sizeof sum);
    size_t k = 0;
    for (size_t i = 0; t && i < n; i++) {
        mfu_trace_breakdown b = mfu_trace_total(t[i]);
        mfu__trace_add(&sum, &b);
        for (size_t s = 0; s < mfu_trace_step_count(t[i]); s++)
            k += mfu_trace_step_at(t[i], s)->activities > 0;
    }
    if (rank_steps)
        *rank_steps = k;
    return sum;
}

/* The step of t numbered step with activity; NULL when none. */
static const mfu_trace_step *step_of(const mfu_trace *t, int64_t step)
{
    size_t lo = 0, hi = mfu_trace_step_count(t);
    while (lo < hi) { /* steps are sorted by number */
        size_t mid = lo + (hi - lo) / 2;
        if (mfu_trace_step_at(t, mid)->step < step)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < mfu_trace_step_count(t); lo++) {
        const mfu_trace_step *s = mfu_trace_step_at(t, lo);
        if (s->step != step)
            break;
        if (s->activities > 0)
            return s;
    }
    return NULL;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void mfu_trace_find_straggler(const mfu_trace *const *t, size_t n, mfu_trace_straggler *out)
{
    memset(out, 0, sizeof *out);
    out->rank = -1;
    if (!t || n < 2)
        return;
    double *compute = calloc(n, sizeof *compute), *comm = calloc(n, sizeof *comm);
    double *span = calloc(n, sizeof *span), *sorted = calloc(n, sizeof *sorted);
    if (!compute || !comm || !span || !sorted)
        goto done;
    /* steps every rank has (with activity), taken from the first rank's list */
    size_t common = 0;
    for (size_t s = 0; s < mfu_trace_step_count(t[0]); s++) {
        const mfu_trace_step *s0 = mfu_trace_step_at(t[0], s);
        if (s0->activities == 0 || (s > 0 && mfu_trace_step_at(t[0], s - 1)->step == s0->step))
            continue;
        bool all = true;
        for (size_t i = 1; i < n && all; i++)
            all = step_of(t[i], s0->step) != NULL;
        if (!all)
            continue;
        common++;
        for (size_t i = 0; i < n; i++) {
            const mfu_trace_step *si = step_of(t[i], s0->step);
            compute[i] += si->breakdown.compute_s;
            comm[i] += si->breakdown.part_s[MFU_TRACE_COMM_EXPOSED];
            span[i] += si->breakdown.span_s;
        }
    }
    if (common == 0)
        goto done;
    size_t worst = 0;
    for (size_t i = 0; i < n; i++) {
        compute[i] /= (double)common;
        comm[i] /= (double)common;
        span[i] /= (double)common;
        sorted[i] = compute[i];
        if (compute[i] > compute[worst])
            worst = i;
    }
    qsort(sorted, n, sizeof *sorted, dbl_cmp);
    double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    double wait = 0, others_span = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == worst)
            continue;
        double w = comm[i] - comm[worst];
        wait += w > 0 ? w : 0;
        others_span += span[i];
    }
    wait /= (double)(n - 1);
    others_span /= (double)(n - 1);
    out->found = true;
    out->rank = mfu_trace_rank(t[worst]);
    out->index = worst;
    out->steps = common;
    out->compute_s = compute[worst];
    out->median_compute_s = median;
    out->excess = median > 0 ? compute[worst] / median - 1 : NAN;
    out->wait_s = wait;
    out->wait_points = others_span > 0 ? 100 * wait / others_span : NAN;
done:
    free(compute);
    free(comm);
    free(span);
    free(sorted);
}

typedef struct row {
    int64_t step;
    double sum;
    size_t n;
} row;

static int row_cmp(const void *a, const void *b)
{
    const row *x = a, *y = b;
    return (x->step > y->step) - (x->step < y->step);
}

mfu_status mfu_trace_to_run(const mfu_trace *const *t, size_t n, mfu_run **out, mfu_error *err)
{
    if (!t || !out || n == 0)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_trace_to_run: give at least one trace");
    *out = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < n; i++)
        cap += mfu_trace_step_count(t[i]);
    row *rows = calloc(cap ? cap : 1, sizeof *rows);
    if (!rows)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    size_t nr = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t s = 0; s < mfu_trace_step_count(t[i]); s++) {
            const mfu_trace_step *st = mfu_trace_step_at(t[i], s);
            if (st->activities > 0)
                rows[nr++] = (row){st->step, st->interval_s, 1};
        }
    if (nr == 0) {
        free(rows);
        return mfu__fail(err, MFU_E_EMPTY, 0, "no step with GPU activity in the traces");
    }
    qsort(rows, nr, sizeof *rows, row_cmp);
    size_t k = 0; /* merge equal step numbers: the mean over the ranks */
    for (size_t i = 1; i < nr; i++) {
        if (rows[i].step == rows[k].step) {
            rows[k].sum += rows[i].sum;
            rows[k].n++;
        } else {
            rows[++k] = rows[i];
        }
    }
    nr = k + 1;
    mfu_run *run = mfu_run_new();
    if (!run) {
        free(rows);
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    }
    mfu_run_meta *m = mfu_run_meta_mut(run);
    mfu__strlcpy(m->format, "kineto", sizeof m->format);
    for (size_t i = 0; i < n && !m->device[0]; i++)
        mfu__strlcpy(m->device, mfu_trace_device(t[i]), sizeof m->device);
    int64_t w = -1;
    for (size_t i = 0; i < n; i++)
        if (mfu_trace_world_size(t[i]) > 0)
            w = mfu_trace_world_size(t[i]);
    m->world_size = w > 0 ? w : (int64_t)n;
    mfu_status st = MFU_OK;
    for (size_t i = 0; i < nr && st == MFU_OK; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = rows[i].step;
        s.step_time_s = rows[i].sum / (double)rows[i].n;
        st = mfu_run_append(run, &s, NULL, err);
    }
    free(rows);
    if (st != MFU_OK) {
        mfu_run_free(run);
        return st;
    }
    *out = run;
    return MFU_OK;
}

mfu_status mfu_trace_waterfall_compute(const mfu_trace_breakdown *b, size_t rank_steps, double mfu,
                                       mfu_trace_waterfall *out, mfu_error *err)
{
    if (!b || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_trace_waterfall_compute: NULL argument");
    if (!isfinite(mfu) || mfu <= 0)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "the waterfall needs an achieved MFU above 0 (a model, a device and the "
                         "tokens of a step: see mfu trace --help)");
    if (!(b->span_s > 0))
        return mfu__fail(err, MFU_E_INVALID, 0, "the traces have no GPU time to break down");
    memset(out, 0, sizeof *out);
    double s = b->span_s;
    out->mfu = mfu;
    out->idle = 100 * b->part_s[MFU_TRACE_IDLE] / s;
    out->communication = 100 * b->part_s[MFU_TRACE_COMM_EXPOSED] / s;
    out->memcpy = 100 * b->part_s[MFU_TRACE_MEMCPY] / s;
    out->non_matmul = 100 * b->part_s[MFU_TRACE_OTHER] / s;
    out->matmul_share = (b->part_s[MFU_TRACE_MATMUL] + b->part_s[MFU_TRACE_ATTENTION]) / s;
    out->matmul_below_peak = 100 * out->matmul_share - 100 * mfu;
    out->step_time_s = rank_steps ? s / (double)rank_steps : NAN;
    return MFU_OK;
}

mfu_status mfu_trace_view_make(const mfu_trace *const *t, size_t n, const mfu_report *report,
                               const char *source, mfu_trace_view *out, mfu_error *err)
{
    if (!out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_trace_view_make: out is NULL");
    memset(out, 0, sizeof *out);
    out->peak_flops_per_s = NAN;
    mfu_status st = mfu_trace_check_ranks(t, n, &out->ranks, err);
    if (st != MFU_OK)
        return st;
    out->traces = t;
    out->n = n;
    mfu_trace_find_straggler(t, n, &out->straggler);
    if (!report) {
        mfu__strlcpy(out->missing,
                     "the MFU waterfall needs the run's MFU: add a model, a device and the "
                     "tokens of a step (--model, --device, --tokens-per-step), or --log LOG",
                     sizeof out->missing);
        return MFU_OK;
    }
    const mfu_report_context *c = mfu_report_get_context(report);
    out->peak_flops_per_s = c->peak_flops_per_s;
    double mfu = mfu_report_summary(report, MFU_RS_MFU).median;
    if (!(isfinite(mfu) && mfu > 0)) {
        /* the report says what is missing and which option adds it */
        mfu__strlcpy(out->missing, "no MFU for the waterfall", sizeof out->missing);
        for (size_t i = 0; i < mfu_report_missing_count(report); i++) {
            const mfu_report_missing *m = mfu_report_missing_at(report, i);
            mfu__appendf(out->missing, sizeof out->missing, "%s %s (%s)", i ? ";" : ": missing",
                         m->what, m->option);
        }
        if (mfu_report_missing_count(report) == 0)
            mfu__appendf(out->missing, sizeof out->missing,
                         ": the report of the run has no steady step with an MFU");
        return MFU_OK;
    }
    size_t rank_steps = 0;
    mfu_trace_breakdown tot = mfu_trace_set_total(t, n, &rank_steps);
    if (mfu_trace_waterfall_compute(&tot, rank_steps, mfu, &out->waterfall, NULL) == MFU_OK) {
        out->has_waterfall = true;
        mfu__strlcpy(out->mfu_source, source ? source : "", sizeof out->mfu_source);
    }
    return MFU_OK;
}
