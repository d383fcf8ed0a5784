/*
 * run.c - the columnar table of step records (mfu/run.h).
 *
 * Each field is its own growable array so that analysis can walk one series without touching
 * the others. Columns grow together by doubling, up to the run's row limit; a failed growth
 * leaves every column as it was (all reallocations succeed before any is committed).
 */
#define _DEFAULT_SOURCE /* madvise */
#include "mfu/run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "util/util.h"

struct mfu_run {
    size_t n, cap, max_rows, merged;
    int64_t *step;
    double *col[MFU_COL_COUNT_];
    uint8_t *tps_scope, *flops_scope, *mfu_scope, *sps_scope;
    uint32_t *flags;
    int32_t *rank;
    int8_t *recompute, *dtype; /* codes, -1 unknown */
    mfu_run_meta meta;
    mfu_rank_obs *obs; /* per-rank observations (mfu_run_rank_obs_get) */
    size_t nobs, obs_cap, obs_dropped;
};

void mfu_step_init(mfu_step *s)
{
    memset(s, 0, sizeof *s);
    s->time_s = s->step_time_s = s->tokens = s->samples = NAN;
    s->loss = s->lr = s->grad_norm = s->memory_bytes = NAN;
    s->tokens_per_s = s->flops_per_s = s->mfu = s->samples_per_s = NAN;
    s->seq_len = s->devices = s->useful_tokens = s->clock_mhz = s->power_w = NAN;
    s->power_limit_w = s->data_loading_s = s->comm_s = s->optimizer_s = NAN;
    s->rank = -1;
    s->recompute = -1;
    s->dtype = -1;
}

/* A code that fits the int8_t column: -1 (unknown) for anything outside 0..127. */
static int8_t code8(int32_t v)
{
    return v >= 0 && v <= 127 ? (int8_t)v : (int8_t)-1;
}

static void meta_init(mfu_run_meta *m)
{
    memset(m, 0, sizeof *m);
    m->model_params = NAN;
    m->tokens_per_step = NAN;
    m->reported_peak_flops_per_s = NAN;
}

mfu_run *mfu_run_new(void)
{
    mfu_run *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->max_rows = (size_t)MFU_RUN_MAX_STEPS;
    meta_init(&r->meta);
    return r;
}

void mfu_run_free(mfu_run *run)
{
    if (!run)
        return;
    free(run->step);
    for (int i = 0; i < MFU_COL_COUNT_; i++)
        free(run->col[i]);
    free(run->tps_scope);
    free(run->flops_scope);
    free(run->mfu_scope);
    free(run->sps_scope);
    free(run->flags);
    free(run->rank);
    free(run->recompute);
    free(run->dtype);
    free(run->obs);
    free(run);
}

mfu_status mfu_run_set_max_steps(mfu_run *run, size_t max_steps, mfu_error *err)
{
    if (!run)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_run_set_max_steps: run is NULL");
    if (max_steps < 1 || max_steps > (size_t)MFU_RUN_MAX_STEPS || max_steps < run->n)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "step limit %zu is outside 1..%ld or below the %zu rows held; pass a "
                         "limit in that range",
                         max_steps, (long)MFU_RUN_MAX_STEPS, run->n);
    run->max_rows = max_steps;
    return MFU_OK;
}

/* Large columns are laid out in 2 MiB pages: a block of at least HUGE_MIN bytes is allocated
 * 2 MiB-aligned, in whole 2 MiB, and (Linux) marked for transparent huge pages, so that the
 * kernel maps it with one fault per 2 MiB instead of one per 4 KiB. The page faults of a
 * column filled row by row cost about a sixth of a whole ingest otherwise (200k rows: 5800
 * faults; docs/internals/ingest.md "Performance"). From 1.5 MiB up, a column holds at most a
 * third more memory than its rows need (none where huge pages are off: untouched pages of the
 * rounded block are never mapped). */
#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_MIN ((size_t)3 << 19)

/* Resize one array to ncap elements of size sz, keeping its first keep elements; on failure
 * the old block is kept. */
static bool grow_one(void **p, size_t keep, size_t ncap, size_t sz)
{
    size_t bytes = ncap * sz;
    if (bytes < HUGE_MIN) {
        void *q = realloc(*p, bytes);
        if (!q)
            return false;
        *p = q;
        return true;
    }
    size_t whole = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *q = aligned_alloc(HUGE_PAGE, whole);
    if (!q)
        return false;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    (void)madvise(q, whole, MADV_HUGEPAGE); /* a hint: without it the pages are small */
#endif
    if (keep)
        memcpy(q, *p, keep * sz);
    free(*p);
    *p = q;
    return true;
}

static mfu_status grow_to(mfu_run *r, size_t ncap, mfu_error *err)
{
    /* Grow every array; each keeps the old rows, so a failure part-way leaves larger blocks
     * that still hold the old rows: the run is unchanged as far as readers can see, and cap is
     * only raised when all succeeded. */
    size_t n = r->n;
    bool ok = grow_one((void **)&r->step, n, ncap, sizeof *r->step);
    for (int i = 0; ok && i < MFU_COL_COUNT_; i++)
        ok = grow_one((void **)&r->col[i], n, ncap, sizeof(double));
    ok = ok && grow_one((void **)&r->tps_scope, n, ncap, 1);
    ok = ok && grow_one((void **)&r->flops_scope, n, ncap, 1);
    ok = ok && grow_one((void **)&r->mfu_scope, n, ncap, 1);
    ok = ok && grow_one((void **)&r->sps_scope, n, ncap, 1);
    ok = ok && grow_one((void **)&r->flags, n, ncap, sizeof *r->flags);
    ok = ok && grow_one((void **)&r->rank, n, ncap, sizeof *r->rank);
    ok = ok && grow_one((void **)&r->recompute, n, ncap, 1);
    ok = ok && grow_one((void **)&r->dtype, n, ncap, 1);
    if (!ok)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory growing the run to %zu steps", ncap);
    r->cap = ncap;
    return MFU_OK;
}

static mfu_status grow(mfu_run *r, mfu_error *err)
{
    size_t ncap = r->cap ? r->cap * 2 : 256;
    if (ncap > r->max_rows)
        ncap = r->max_rows;
    return grow_to(r, ncap, err);
}

mfu_status mfu_run_reserve(mfu_run *run, size_t rows, mfu_error *err)
{
    if (!run)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_run_reserve: run is NULL");
    if (rows > run->max_rows)
        rows = run->max_rows;
    return rows > run->cap ? grow_to(run, rows, err) : MFU_OK;
}

static void step_values(const mfu_step *s, double v[MFU_COL_COUNT_])
{
    v[MFU_COL_TIME_S] = s->time_s;
    v[MFU_COL_STEP_TIME_S] = s->step_time_s;
    v[MFU_COL_TOKENS] = s->tokens;
    v[MFU_COL_SAMPLES] = s->samples;
    v[MFU_COL_LOSS] = s->loss;
    v[MFU_COL_LR] = s->lr;
    v[MFU_COL_GRAD_NORM] = s->grad_norm;
    v[MFU_COL_MEMORY_BYTES] = s->memory_bytes;
    v[MFU_COL_TOKENS_PER_S] = s->tokens_per_s;
    v[MFU_COL_FLOPS_PER_S] = s->flops_per_s;
    v[MFU_COL_MFU] = s->mfu;
    v[MFU_COL_SAMPLES_PER_S] = s->samples_per_s;
    v[MFU_COL_SEQ_LEN] = s->seq_len;
    v[MFU_COL_DEVICES] = s->devices;
    v[MFU_COL_USEFUL_TOKENS] = s->useful_tokens;
    v[MFU_COL_CLOCK_MHZ] = s->clock_mhz;
    v[MFU_COL_POWER_W] = s->power_w;
    v[MFU_COL_POWER_LIMIT_W] = s->power_limit_w;
    v[MFU_COL_DATA_LOADING_S] = s->data_loading_s;
    v[MFU_COL_COMM_S] = s->comm_s;
    v[MFU_COL_OPTIMIZER_S] = s->optimizer_s;
}

/* Row index holding a repeat of step number `step` printed by `rank`, or -1. A repeat is a row
 * among the last MFU_RUN_DEDUP_WINDOW with the same number. Walking back, rows with higher
 * numbers are passed over only as a lagging rank explains them: any number of rows printed by
 * other known ranks, or one row when a rank is unknown (interleaved ranks without prefixes are
 * at most a line apart). Otherwise a number below the last row's is a restarted run and never
 * merges with the rows before the restart. */
static long find_repeat(const mfu_run *r, int64_t step, int32_t rank)
{
    size_t lo = r->n > MFU_RUN_DEDUP_WINDOW ? r->n - MFU_RUN_DEDUP_WINDOW : 0;
    size_t passed_unknown = 0;
    for (size_t i = r->n; i-- > lo;) {
        if (r->step[i] == step)
            return (long)i;
        if (r->step[i] < step)
            return -1;
        if (rank >= 0 && r->rank[i] >= 0) {
            if (r->rank[i] == rank)
                return -1; /* the same rank went back: a restart */
        } else if (++passed_unknown > 1) {
            return -1;
        }
    }
    return -1;
}

/* Fill the absent fields of row i from s (a repeat of the same step). */
static void merge_into(mfu_run *r, size_t i, const mfu_step *s)
{
    double v[MFU_COL_COUNT_];
    step_values(s, v);
    for (int c = 0; c < MFU_COL_COUNT_; c++)
        if (isnan(r->col[c][i]) && !isnan(v[c]))
            r->col[c][i] = v[c];
    if (r->tps_scope[i] == MFU_SCOPE_UNKNOWN)
        r->tps_scope[i] = (uint8_t)s->tokens_per_s_scope;
    if (r->flops_scope[i] == MFU_SCOPE_UNKNOWN)
        r->flops_scope[i] = (uint8_t)s->flops_per_s_scope;
    if (r->mfu_scope[i] == MFU_SCOPE_UNKNOWN)
        r->mfu_scope[i] = (uint8_t)s->mfu_scope;
    if (r->sps_scope[i] == MFU_SCOPE_UNKNOWN)
        r->sps_scope[i] = (uint8_t)s->samples_per_s_scope;
    r->flags[i] |= s->flags;
    if (r->rank[i] < 0)
        r->rank[i] = s->rank;
    if (r->recompute[i] < 0)
        r->recompute[i] = code8(s->recompute);
    if (r->dtype[i] < 0)
        r->dtype[i] = code8(s->dtype);
}

/* Keep one observation (dropped and counted past the limit). false when out of memory. */
static bool keep_obs(mfu_run *r, const mfu_rank_obs *o)
{
    if (r->nobs >= (size_t)MFU_RUN_MAX_RANK_OBS) {
        r->obs_dropped++;
        return true;
    }
    if (r->nobs == r->obs_cap) {
        size_t ncap = r->obs_cap ? r->obs_cap * 2 : 64;
        if (ncap > (size_t)MFU_RUN_MAX_RANK_OBS)
            ncap = (size_t)MFU_RUN_MAX_RANK_OBS;
        if (!grow_one((void **)&r->obs, r->nobs, ncap, sizeof *r->obs))
            return false;
        r->obs_cap = ncap;
    }
    r->obs[r->nobs++] = *o;
    return true;
}

mfu_status mfu_run_append(mfu_run *run, const mfu_step *s, bool *merged, mfu_error *err)
{
    if (merged)
        *merged = false;
    if (!run || !s)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_run_append: run and step must not be NULL");
    long rep = find_repeat(run, s->step, s->rank);
    if (rep >= 0) {
        /* another known rank's copy of a step: its own figures are kept aside */
        if (s->rank >= 0 && run->rank[rep] >= 0 && s->rank != run->rank[rep] &&
            (!isnan(s->step_time_s) || !isnan(s->tokens_per_s))) {
            mfu_rank_obs o = {(size_t)rep, s->step, s->rank, s->step_time_s, s->tokens_per_s};
            if (!keep_obs(run, &o))
                return mfu__fail(err, MFU_E_NOMEM, 0,
                                 "out of memory keeping a per-rank observation of step %lld",
                                 (long long)s->step);
        }
        merge_into(run, (size_t)rep, s);
        run->merged++;
        if (merged)
            *merged = true;
        return MFU_OK;
    }
    if (run->n >= run->max_rows)
        return mfu__fail(err, MFU_E_LIMIT, 0,
                         "the run already holds %zu steps (limit MFU_RUN_MAX_STEPS or the "
                         "caller's --max-steps); split the log or raise the limit",
                         run->n);
    if (run->n == run->cap) {
        mfu_status st = grow(run, err);
        if (st != MFU_OK)
            return st;
    }
    size_t i = run->n;
    double v[MFU_COL_COUNT_];
    step_values(s, v);
    run->step[i] = s->step;
    for (int c = 0; c < MFU_COL_COUNT_; c++)
        run->col[c][i] = v[c];
    run->tps_scope[i] = (uint8_t)s->tokens_per_s_scope;
    run->flops_scope[i] = (uint8_t)s->flops_per_s_scope;
    run->mfu_scope[i] = (uint8_t)s->mfu_scope;
    run->sps_scope[i] = (uint8_t)s->samples_per_s_scope;
    run->flags[i] = s->flags;
    run->rank[i] = s->rank;
    run->recompute[i] = code8(s->recompute);
    run->dtype[i] = code8(s->dtype);
    run->n++;
    return MFU_OK;
}

size_t mfu_run_count(const mfu_run *run)
{
    return run ? run->n : 0;
}

bool mfu_run_get(const mfu_run *run, size_t i, mfu_step *out)
{
    if (!run || !out || i >= run->n)
        return false;
    mfu_step s;
    mfu_step_init(&s);
    s.step = run->step[i];
    s.time_s = run->col[MFU_COL_TIME_S][i];
    s.step_time_s = run->col[MFU_COL_STEP_TIME_S][i];
    s.tokens = run->col[MFU_COL_TOKENS][i];
    s.samples = run->col[MFU_COL_SAMPLES][i];
    s.loss = run->col[MFU_COL_LOSS][i];
    s.lr = run->col[MFU_COL_LR][i];
    s.grad_norm = run->col[MFU_COL_GRAD_NORM][i];
    s.memory_bytes = run->col[MFU_COL_MEMORY_BYTES][i];
    s.tokens_per_s = run->col[MFU_COL_TOKENS_PER_S][i];
    s.tokens_per_s_scope = (mfu_scope)run->tps_scope[i];
    s.flops_per_s = run->col[MFU_COL_FLOPS_PER_S][i];
    s.flops_per_s_scope = (mfu_scope)run->flops_scope[i];
    s.mfu = run->col[MFU_COL_MFU][i];
    s.mfu_scope = (mfu_scope)run->mfu_scope[i];
    s.samples_per_s = run->col[MFU_COL_SAMPLES_PER_S][i];
    s.samples_per_s_scope = (mfu_scope)run->sps_scope[i];
    s.flags = run->flags[i];
    s.rank = run->rank[i];
    s.seq_len = run->col[MFU_COL_SEQ_LEN][i];
    s.devices = run->col[MFU_COL_DEVICES][i];
    s.useful_tokens = run->col[MFU_COL_USEFUL_TOKENS][i];
    s.clock_mhz = run->col[MFU_COL_CLOCK_MHZ][i];
    s.power_w = run->col[MFU_COL_POWER_W][i];
    s.power_limit_w = run->col[MFU_COL_POWER_LIMIT_W][i];
    s.data_loading_s = run->col[MFU_COL_DATA_LOADING_S][i];
    s.comm_s = run->col[MFU_COL_COMM_S][i];
    s.optimizer_s = run->col[MFU_COL_OPTIMIZER_S][i];
    s.recompute = run->recompute[i];
    s.dtype = run->dtype[i];
    *out = s;
    return true;
}

const int64_t *mfu_run_steps(const mfu_run *run)
{
    return run && run->n ? run->step : NULL;
}

const double *mfu_run_column(const mfu_run *run, mfu_column col)
{
    if (!run || !run->n || (int)col < 0 || col >= MFU_COL_COUNT_)
        return NULL;
    return run->col[col];
}

const mfu_run_meta *mfu_run_meta_get(const mfu_run *run)
{
    return run ? &run->meta : NULL;
}

mfu_run_meta *mfu_run_meta_mut(mfu_run *run)
{
    return run ? &run->meta : NULL;
}

mfu_run_counts mfu_run_get_counts(const mfu_run *run)
{
    mfu_run_counts c = {0, 0, 0, 0};
    if (run) {
        c.rows = run->n;
        c.merged = run->merged;
        c.rank_obs = run->nobs;
        c.rank_obs_dropped = run->obs_dropped;
    }
    return c;
}

size_t mfu_run_rank_obs_count(const mfu_run *run)
{
    return run ? run->nobs : 0;
}

bool mfu_run_rank_obs_get(const mfu_run *run, size_t i, mfu_rank_obs *out)
{
    if (!run || !out || i >= run->nobs)
        return false;
    *out = run->obs[i];
    return true;
}

mfu_status mfu_run_rank_obs_append(mfu_run *run, const mfu_rank_obs *obs, mfu_error *err)
{
    if (!run || !obs || obs->rank < 0 || obs->row >= run->n)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "mfu_run_rank_obs_append: run and obs are required, obs->rank must be "
                         ">= 0 and obs->row an existing row");
    mfu_rank_obs o = *obs;
    o.step = run->step[o.row];
    if (!keep_obs(run, &o))
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory keeping a per-rank observation");
    return MFU_OK;
}

const char *mfu_scope_name(mfu_scope s)
{
    switch (s) {
    case MFU_SCOPE_DEVICE: return "device";
    case MFU_SCOPE_GLOBAL: return "global";
    case MFU_SCOPE_UNKNOWN: break;
    }
    return "unknown";
}
