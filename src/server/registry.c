/*
 * registry.c - the runs the server knows: every run of the store, plus the runs it follows or
 * receives by POST ("live").
 *
 * A run's rows are loaded from the store the first time something needs them and then kept:
 * the mfu_run itself (so that posted rows merge with mfu_run_append's rules) and the figures of
 * every row from the figures module (src/figures: the same context, the same per-step rule and
 * the same context check as `mfu report`, so a step shows one MFU in the report, the series,
 * the live events and /metrics). Rows that arrive later are added to the figures incrementally
 * (mfu__figures_update); a new context or new header metadata makes them again.
 *
 * Locks: the registry mutex guards the list and the reference counts; each run has a
 * read-write lock over its rows (requests read, followers and POSTs write); the store has a
 * mutex of its own (one handle, one user at a time). Order: registry -> run -> store; nothing
 * takes the registry mutex while holding a run's lock.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/step.h"
#include "server/internal.h"

static bool pos(double v)
{
    return isfinite(v) && v > 0;
}

/* ---- fields ----------------------------------------------------------------------------- */

static const char *const field_names[MFU__F_COUNT_] = {
    "mfu",
    "hfu",
    "tokens_per_second",
    "tokens_per_second_per_device",
    "step_time_s",
    "model_flops_per_second_per_device",
    "hardware_flops_per_second_per_device",
    "loss",
};

const char *mfu__field_name(mfu__field f)
{
    return (unsigned)f < MFU__F_COUNT_ ? field_names[f] : NULL;
}

int mfu__field_parse(const char *name, size_t n)
{
    for (int i = 0; i < MFU__F_COUNT_; i++)
        if (strlen(field_names[i]) == n && memcmp(field_names[i], name, n) == 0)
            return i;
    return -1;
}

/* The figures column of each field. */
static const mfu__fcol field_cols[MFU__F_COUNT_] = {
    MFU__FC_MFU,
    MFU__FC_HFU,
    MFU__FC_TOKENS_PER_S,
    MFU__FC_TOKENS_PER_S_PER_DEVICE,
    MFU__FC_STEP_TIME_S,
    MFU__FC_MODEL_FLOPS_PER_S_PER_DEVICE,
    MFU__FC_HARDWARE_FLOPS_PER_S_PER_DEVICE,
    MFU__FC_LOSS,
};

const double *mfu__srun_column(const mfu__srun *r, mfu__field f)
{
    if (!r->run || mfu_run_count(r->run) == 0 || !r->fig || r->cols.n == 0 ||
        (unsigned)f >= MFU__F_COUNT_)
        return NULL;
    return r->cols.v[field_cols[f]];
}

double mfu__srun_value(const mfu__srun *r, mfu__field f, size_t i)
{
    const double *c = mfu__srun_column(r, f);
    return c && i < r->cols.n ? c[i] : NAN;
}

/* ---- context ---------------------------------------------------------------------------- */

/* The modelName label DCGM would print for dev: the name as given when it is one the driver
 * reports, else the entry's first reported name (nvidia-smi's for NVIDIA), else its name. */
static void model_name_label(const mfu_device_info *dev, const char *given, char *out, size_t n)
{
    out[0] = '\0';
    if (!dev)
        return;
    for (const char *const *p = dev->reported_names; p && *p; p++) {
        if (given && mfu__strcasecmp(*p, given) == 0) {
            mfu__strlcpy(out, *p, n);
            return;
        }
    }
    if (dev->reported_names && dev->reported_names[0])
        mfu__strlcpy(out, dev->reported_names[0], n);
    else
        mfu__strlcpy(out, dev->name, n);
}

/* The API's words for the figures context f of a run under model (f NULL: not derived). */
static void ctx_fill(const mfu__server_model *model, const mfu__fctx *f, bool posted, mfu__ctx *c)
{
    memset(c, 0, sizeof *c);
    c->model_flops_per_token = c->hardware_flops_per_token = NAN;
    c->peak_flops_per_s = c->devices = NAN;
    c->source = "flags";
    c->devices_source = "unknown";
    if (!f) {
        c->local_devices = pos(model->local_devices) ? model->local_devices : NAN;
        return;
    }
    const mfu_report_context *x = &f->c;
    c->devices = x->devices;
    if (x->devices_source == MFU_SRC_INPUT)
        c->devices_source = posted && !pos(model->devices) ? "ranks posted" : "--devices";
    else if (x->devices_source == MFU_SRC_LOG)
        c->devices_source = "log world_size";
    c->local_devices = pos(model->local_devices) ? model->local_devices : c->devices;
    mfu__strlcpy(c->dtype, mfu_dtype_name(x->dtype), sizeof c->dtype);
    if (x->device) {
        mfu__strlcpy(c->device_id, x->device->id, sizeof c->device_id);
        model_name_label(x->device, f->in.device ? f->in.device : x->device_name,
                         c->model_name_label, sizeof c->model_name_label);
    }
    c->peak_flops_per_s = x->peak_flops_per_s;
    c->seq = x->seq;
    c->mfu_from_log = x->mfu_from_log;
    c->model_flops_per_token = x->model_flops_per_token;
    c->hardware_flops_per_token = x->hardware_flops_per_token;
    if (x->has_model) {
        mfu__strlcpy(c->model, x->model, sizeof c->model);
        mfu__strlcpy(c->convention, mfu_convention_name(x->convention), sizeof c->convention);
    } else if (x->mfu_from_log && x->stack.name[0]) {
        mfu__strlcpy(c->convention, mfu_convention_name(x->stack.convention), sizeof c->convention);
    }
    if (!isfinite(x->peak_flops_per_s) && !x->mfu_from_log)
        mfu__strlcpy(c->why, "no peak: start mfu serve with --device NAME or --peak-tflops X",
                     sizeof c->why);
    else if (!model->has_model && !x->mfu_from_log)
        mfu__strlcpy(c->why, "no model: start mfu serve with --model NAME or --config config.json",
                     sizeof c->why);
    else if (model->has_model && x->seq <= 0)
        mfu__strlcpy(c->why,
                     "the log does not give the sequence length: start mfu serve with --seq N",
                     sizeof c->why);
    else if (!isfinite(c->devices) && !x->mfu_from_log)
        mfu__strlcpy(c->why,
                     "the device count is unknown: figures are per device (start mfu serve with "
                     "--devices N)",
                     sizeof c->why);
}

void mfu__srun_report_input(const mfu__server_model *m, const mfu__srun *r, mfu_report_input *in)
{
    memset(in, 0, sizeof *in);
    in->has_arch = m->has_model;
    if (m->has_model) {
        in->arch = m->arch;
        in->workload = m->workload;
        in->flops = m->options;
    }
    if (m->device)
        in->device = m->device_as_given ? m->device_as_given : m->device->id;
    in->dtype_given = m->dtype_given;
    in->dtype = m->dtype;
    if (pos(m->peak_flops_per_s))
        in->peak_flops_per_s = m->peak_flops_per_s;
    if (pos(m->devices))
        in->devices = (int64_t)m->devices;
    else if (r->posted && r->run && mfu_run_meta_get(r->run)->world_size <= 0) {
        size_t ranks = 0; /* the ranks that posted are the devices when nothing else says */
        for (size_t i = 0; i < r->nranks; i++)
            ranks += r->ranks[i].rank >= 0;
        in->devices = (int64_t)ranks;
    }
    in->global_batch = m->global_batch;
    if (pos(m->tokens_per_step))
        in->tokens_per_step = m->tokens_per_step;
    if (pos(m->real_tokens_per_step))
        in->real_tokens_per_step = m->real_tokens_per_step;
}

/* ---- per-run models (stored contexts) ---------------------------------------------------- */

mfu_status mfu__server_model_copy(const mfu__server_model *src, mfu__server_model *dst,
                                  mfu_error *err)
{
    *dst = *src;
    dst->workload.doc_lengths = NULL;
    dst->device_as_given = NULL;
    if (src->workload.doc_count) {
        int64_t *d = malloc(src->workload.doc_count * sizeof *d);
        if (!d)
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory copying a run context");
        memcpy(d, src->workload.doc_lengths, src->workload.doc_count * sizeof *d);
        dst->workload.doc_lengths = d;
    }
    if (src->device_as_given && !(dst->device_as_given = mfu__strdup(src->device_as_given))) {
        free((void *)(uintptr_t)dst->workload.doc_lengths);
        dst->workload.doc_lengths = NULL;
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory copying a run context");
    }
    return MFU_OK;
}

void mfu__server_model_free(mfu__server_model *m)
{
    if (!m)
        return;
    free((void *)(uintptr_t)m->workload.doc_lengths);
    free((void *)(uintptr_t)m->device_as_given);
    m->workload.doc_lengths = NULL;
    m->workload.doc_count = 0;
    m->device_as_given = NULL;
}

/* A followed run takes the server's flags when any was given (they are what the command line
 * says about the log it names). */
static bool uses_flags(const mfu__registry *g, const mfu__srun *r)
{
    return !r->context_json || !g->context_fn || (r->followed && g->flags_given);
}

const mfu__server_model *mfu__srun_model(const mfu__registry *g, const mfu__srun *r)
{
    if (uses_flags(g, r) || !r->own_resolved)
        return g->model;
    return &r->own; /* own_ok false: a zeroed model (MFU unknown, own_error says why) */
}

/* Replace r's stored context (r write-locked); text NULL or "" = none. True when it changed. */
static bool set_context(mfu__srun *r, const char *text)
{
    if (text && !text[0])
        text = NULL;
    bool same = (!text && !r->context_json) ||
                (text && r->context_json && strcmp(text, r->context_json) == 0);
    if (same)
        return false;
    free(r->context_json);
    r->context_json = text ? mfu__strdup(text) : NULL;
    r->own_resolved = false;
    return true;
}

/* Resolve r's stored context into r->own when it changed (r write-locked). */
static void resolve_own(mfu__registry *g, mfu__srun *r)
{
    if (uses_flags(g, r) || r->own_resolved)
        return;
    if (r->own_ok)
        mfu__server_model_free(&r->own);
    memset(&r->own, 0, sizeof r->own);
    r->own.peak_flops_per_s = r->own.devices = NAN;
    r->own.local_devices = g->model->local_devices;
    r->own_ok = false;
    r->own_error[0] = '\0';
    mfu__server_model m;
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (g->context_fn(g->context_ctx, r->context_json, &m, &e) == MFU_OK) {
        r->own = m;
        r->own.local_devices = g->model->local_devices; /* a property of this server */
        r->own_ok = true;
    } else {
        snprintf(r->own_error, sizeof r->own_error,
                 "the stored run context cannot be used (%.80s): ingest the log again with "
                 "its options",
                 e.message[0] ? e.message : mfu_strerror(e.code));
    }
    r->own_resolved = true;
}

/* Work out r's report input (r write-locked, r->run set): when it differs from the one its
 * figures were made from, they are made again at the next derivation. */
static void ctx_of(mfu__registry *g, mfu__srun *r)
{
    resolve_own(g, r);
    const mfu__server_model *m = mfu__srun_model(g, r);
    mfu_report_input in;
    mfu__srun_report_input(m, r, &in);
    if (!r->fig || memcmp(&in, &r->fig_in, sizeof in) != 0)
        r->fig_dirty = true;
    r->fig_in = in;
}

/* r's API context from its figures (after a derivation). */
static void ctx_words(mfu__registry *g, mfu__srun *r)
{
    const mfu__server_model *m = mfu__srun_model(g, r);
    ctx_fill(m, r->fig, r->posted, &r->ctx);
    if (m != g->model) {
        r->ctx.source = "stored";
        if (!r->own_ok)
            mfu__strlcpy(r->ctx.why, r->own_error, sizeof r->ctx.why);
    } else if (!g->flags_given) {
        r->ctx.source = "none";
    }
}

/* ---- runs ------------------------------------------------------------------------------- */

static void tags_free(mfu__srun *r)
{
    for (size_t i = 0; i < r->ntags; i++) {
        free(r->tags[i].key);
        free(r->tags[i].value);
    }
    free(r->tags);
    r->tags = NULL;
    r->ntags = 0;
}

static mfu__srun *srun_new(const char *name)
{
    mfu__srun *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    pthread_mutex_t *mu[] = {&r->sum_mu, &r->post_mu, &r->ana_mu, &r->cache_mu, &r->mm_mu};
    size_t made = 0;
    if (pthread_rwlock_init(&r->rw, NULL) != 0) {
        free(r);
        return NULL;
    }
    while (made < MFU__ARRAY_LEN(mu) && pthread_mutex_init(mu[made], NULL) == 0)
        made++;
    if (made < MFU__ARRAY_LEN(mu)) { /* undo what was made, last first */
        while (made > 0)
            pthread_mutex_destroy(mu[--made]);
        pthread_rwlock_destroy(&r->rw);
        free(r);
        return NULL;
    }
    mfu__strlcpy(r->name, name, sizeof r->name);
    r->monotonic = true;
    return r;
}

static void drop_rows(mfu__srun *r)
{
    mfu_run_free(r->run_own);
    r->run_own = NULL;
    r->run = NULL; /* a borrowed run belongs to its follower's ingest session */
    if (r->fig) {
        mfu__fctx_free(r->fig);
        free(r->fig);
        r->fig = NULL;
    }
    mfu__fcols_free(&r->cols);
    r->fig_dirty = true;
    for (int c = 0; c < MFU__F_COUNT_; c++) {
        mfu__mm_free(&r->mm[c]);
        r->mm_made[c] = false; /* write-locked: no reader makes one now */
    }
    free(r->ax_el);
    free(r->ax_tok);
    r->ax_el = r->ax_tok = NULL;
    r->ax_cap = 0;
    /* the cached answers are of these rows: their memory goes with them (write-locked; a
     * reader holding the cache's mutex holds the read lock too) */
    pthread_mutex_lock(&r->cache_mu);
    for (int i = 0; i < MFU__SCACHE_ENTRIES; i++) {
        free(r->cache[i].body);
        r->cache[i].body = NULL;
    }
    pthread_mutex_unlock(&r->cache_mu);
    r->loaded = false;
}

static void srun_free(mfu__srun *r)
{
    drop_rows(r);
    tags_free(r);
    free(r->context_json);
    if (r->own_ok)
        mfu__server_model_free(&r->own);
    free(r->ranks);
    mfu_analysis_free(r->ana); /* the cached answers went with drop_rows */
    pthread_mutex_destroy(&r->mm_mu);
    pthread_mutex_destroy(&r->cache_mu);
    pthread_mutex_destroy(&r->ana_mu);
    pthread_mutex_destroy(&r->post_mu);
    pthread_mutex_destroy(&r->sum_mu);
    pthread_rwlock_destroy(&r->rw);
    free(r);
}

/* The running sums of axes=1 before every block of MFU__BLOCK rows, from the block of row from
 * on (the ones before stand): the series adds at most a block's rows to one of them, in the
 * same order as a sum from the run's first row, so the sums are the same to the bit. */
static bool axes_update(mfu__srun *r, size_t n, size_t from)
{
    size_t nb = (n + MFU__BLOCK - 1) / MFU__BLOCK;
    if (nb > r->ax_cap || !r->ax_el) {
        size_t cap = r->ax_cap ? r->ax_cap : 16;
        while (cap < nb)
            cap *= 2;
        double *el = realloc(r->ax_el, cap * sizeof *el);
        if (!el)
            return false;
        r->ax_el = el;
        double *tok = realloc(r->ax_tok, cap * sizeof *tok);
        if (!tok)
            return false;
        r->ax_tok = tok;
        r->ax_cap = cap;
    }
    const double *stc = mfu__srun_column(r, MFU__F_STEP_TIME_S);
    const double *tpc = mfu__srun_column(r, MFU__F_TOKENS_PER_S);
    const double *tdc = mfu__srun_column(r, MFU__F_TOKENS_PER_S_PER_DEVICE);
    size_t b = from / MFU__BLOCK;
    double el = b ? r->ax_el[b] : 0, tok = b ? r->ax_tok[b] : 0;
    for (size_t i = b * MFU__BLOCK; i < n; i++) {
        if (i % MFU__BLOCK == 0) {
            r->ax_el[i / MFU__BLOCK] = el;
            r->ax_tok[i / MFU__BLOCK] = tok;
        }
        mfu__axes_add(stc, tpc, tdc, i, &el, &tok);
    }
    return true;
}

/* The figures of rows [first, n) of r (write-locked) and everything that follows from them (a
 * new context makes them all again), the blocks and the listing figures. *changed (may be
 * NULL) gets the first row whose figures changed. false when out of memory. */
static bool derive_from(mfu__registry *g, mfu__srun *r, size_t first, size_t *changed)
{
    size_t n = mfu_run_count(r->run);
    size_t from = first;
    mfu_status st = MFU_OK;
    if (r->fig_dirty || !r->fig) {
        if (r->fig) {
            mfu__fctx_free(r->fig);
            free(r->fig);
            r->fig = NULL;
        }
        mfu__fcols_free(&r->cols);
        r->fig = calloc(1, sizeof *r->fig);
        if (!r->fig)
            return false;
        mfu_error e;
        memset(&e, 0, sizeof e);
        st = mfu__fctx_init(r->fig, r->run, &r->fig_in, &e);
        if (st == MFU_OK)
            st = mfu__figures_compute(r->fig, &r->cols, r->run, &e);
        if (st != MFU_OK) {
            /* the context cannot be used (a stored device the table lost): no figures */
            mfu__fctx_free(r->fig);
            free(r->fig);
            r->fig = NULL;
            mfu__fcols_free(&r->cols);
            ctx_words(g, r);
            mfu__strlcpy(r->ctx.why, e.message, sizeof r->ctx.why);
            if (st == MFU_E_NOMEM)
                return false;
        }
        r->fig_dirty = false;
        from = 0;
    } else {
        size_t ch = n;
        mfu_error e;
        if (mfu__figures_update(r->fig, &r->cols, r->run, first, &ch, &e) != MFU_OK)
            return false;
        from = ch < first ? ch : first;
    }
    if (r->fig)
        ctx_words(g, r);
    if (changed)
        *changed = from;
    for (int k = 0; k < MFU__F_COUNT_; k++) /* the pyramids a request made; the rest wait */
        if (r->mm_made[k] &&
            !mfu__mm_update(&r->mm[k], mfu__srun_column(r, (mfu__field)k), n, from))
            return false;
    if (!axes_update(r, n, from))
        return false;
    const int64_t *steps = mfu_run_steps(r->run);
    const mfu_run_meta *m = mfu_run_meta_get(r->run);
    if (from == 0)
        r->monotonic = true;
    for (size_t i = from ? from : 1; i < n; i++)
        if (steps[i] < steps[i - 1])
            r->monotonic = false;
    r->steps = (int64_t)n;
    r->first_step = n ? steps[0] : 0;
    r->last_step = n ? steps[n - 1] : 0;
    mfu__strlcpy(r->format, m->format, sizeof r->format);
    return true;
}

/* Load r's rows from the store (write-locked). A run the store does not hold (a live run not
 * written yet) starts empty. */
static mfu_status load(mfu__registry *g, mfu__srun *r, mfu_error *err)
{
    mfu_run *run = NULL;
    int64_t id = 0;
    mfu_error e;
    memset(&e, 0, sizeof e);
    char *context = NULL;
    pthread_mutex_lock(&g->store_mu);
    mfu_status st = mfu_store_find_run(g->store, r->name, &id, &e);
    if (st == MFU_OK)
        st = mfu_store_get_run(g->store, id, &run, &e);
    if (st == MFU_OK && mfu_store_get_context(g->store, id, &context, NULL) != MFU_OK)
        context = NULL;
    pthread_mutex_unlock(&g->store_mu);
    if (st == MFU_OK)
        set_context(r, context);
    free(context);
    if (st == MFU_E_UNKNOWN && r->live) {
        run = mfu_run_new();
        st = run ? MFU_OK : MFU_E_NOMEM;
    }
    if (st != MFU_OK) {
        if (err)
            *err = e;
        if (st == MFU_E_NOMEM && err)
            mfu__fail(err, st, 0, "out of memory loading run '%s'", r->name);
        return st;
    }
    drop_rows(r);
    r->run = r->run_own = run;
    ctx_of(g, r);
    if (!derive_from(g, r, 0, NULL)) {
        drop_rows(r);
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory deriving run '%s'", r->name);
    }
    r->loaded = true;
    r->stale = false;
    r->version++;
    r->changed_at = mfu__now();
    return MFU_OK;
}

const mfu__mm *mfu__srun_mm(mfu__srun *r, mfu__field f)
{
    /* readers share rw: one makes it, the others wait on mm_mu; no writer runs meanwhile */
    pthread_mutex_lock(&r->mm_mu);
    bool ok = r->mm_made[f];
    if (!ok) {
        ok = mfu__mm_update(&r->mm[f], mfu__srun_column(r, f), mfu_run_count(r->run), 0);
        if (ok)
            r->mm_made[f] = true;
        else
            mfu__mm_free(&r->mm[f]); /* made again by the next request */
    }
    pthread_mutex_unlock(&r->mm_mu);
    return ok ? &r->mm[f] : NULL;
}

bool mfu__srun_read(mfu__registry *g, mfu__srun *r, mfu_error *err)
{
    for (;;) {
        pthread_rwlock_rdlock(&r->rw);
        if (r->loaded && !r->stale)
            return true;
        pthread_rwlock_unlock(&r->rw);
        pthread_rwlock_wrlock(&r->rw);
        if (!r->loaded || r->stale) {
            if (load(g, r, err) != MFU_OK) {
                pthread_rwlock_unlock(&r->rw);
                return false;
            }
        }
        pthread_rwlock_unlock(&r->rw);
    }
}

void mfu__srun_unlock(mfu__srun *r)
{
    pthread_rwlock_unlock(&r->rw);
}

/* True when the two steps differ in anything a row keeps: every double bit for bit (so NaN
 * equals NaN), flags, rank, scopes, recompute and dtype. */
/* The first row where a and b differ (the shorter count when one extends the other). Step
 * numbers and the double columns are compared first (fast), then every row before that one in
 * whole (flags, ranks, scopes, recompute and dtype are not columns; a re-read file may change
 * them anywhere). */
static size_t first_difference(const mfu_run *a, const mfu_run *b)
{
    size_t na = mfu_run_count(a), nb = mfu_run_count(b);
    size_t n = na < nb ? na : nb;
    size_t k = n;
    const int64_t *sa = mfu_run_steps(a), *sb = mfu_run_steps(b);
    for (size_t i = 0; i < n; i++)
        if (sa[i] != sb[i]) {
            k = i;
            break;
        }
    for (int c = 0; c < MFU_COL_COUNT_ && k > 0; c++) {
        const double *ca = mfu_run_column(a, (mfu_column)c), *cb = mfu_run_column(b, (mfu_column)c);
        const double nan = NAN; /* a column without an array is NaN in every row */
        for (size_t i = 0; i < k; i++)
            if (memcmp(ca ? &ca[i] : &nan, cb ? &cb[i] : &nan, sizeof(double)) != 0) {
                k = i;
                break;
            }
    }
    for (size_t i = 0; i < k; i++) {
        mfu_step x, y;
        mfu_run_get(a, i, &x);
        mfu_run_get(b, i, &y);
        if (!mfu__step_equal(&x, &y))
            return i;
    }
    return k;
}

/* True when a and b hold different per-rank observations (count, or any one of them: row,
 * step, rank, step time, tokens/s bit for bit). */
static bool obs_differ(const mfu_run *a, const mfu_run *b)
{
    size_t n = mfu_run_rank_obs_count(a);
    if (n != mfu_run_rank_obs_count(b))
        return true;
    for (size_t i = 0; i < n; i++) {
        mfu_rank_obs x, y;
        mfu_run_rank_obs_get(a, i, &x);
        mfu_run_rank_obs_get(b, i, &y);
        if (!mfu__rank_obs_equal(&x, &y))
            return true;
    }
    return false;
}

/* Only what the analysis reads beside the rows changed (per-rank observations): a new version,
 * so that summaries and the analysis are worked out again; the derived columns stand. */
static void touch(mfu__srun *r)
{
    r->version++;
    r->changed_at = mfu__now();
}

/* Work out the context again and derive rows from first on (r write-locked, r->run set).
 * Returns the first row whose figures changed. */
static size_t rederive(mfu__registry *g, mfu__srun *r, size_t first, bool meta_changed)
{
    ctx_of(g, r);
    if (meta_changed)
        r->fig_dirty = true; /* the header is part of the context */
    size_t changed = first;
    if (!derive_from(g, r, first, &changed)) {
        drop_rows(r); /* out of memory: the next read loads it from the store */
        changed = 0;
    } else {
        r->loaded = true;
        r->stale = false;
    }
    r->version++;
    r->changed_at = mfu__now();
    return changed;
}

/* What differs between the rows r holds and run (r locked, read or write): the first row, the
 * metadata, the observations. Nothing is held yet: everything differs. */
static void compare_rows(const mfu__srun *r, const mfu_run *run, size_t *k, bool *meta_changed,
                         bool *obs_changed)
{
    *k = 0;
    *meta_changed = *obs_changed = true;
    if (!r->loaded || !r->run)
        return;
    *k = first_difference(r->run, run);
    *meta_changed =
        memcmp(mfu_run_meta_get(r->run), mfu_run_meta_get(run), sizeof(mfu_run_meta)) != 0;
    *obs_changed = obs_differ(r->run, run);
}

bool mfu__srun_set(mfu__registry *g, mfu__srun *r, const mfu_run *run, bool borrowed, size_t *first,
                   size_t *old_n)
{
    /* Compare under the read lock (every row is read: requests go on meanwhile), then apply
     * under the write lock, comparing again only if the rows changed in between. */
    size_t k;
    bool meta_changed, obs_changed;
    pthread_rwlock_rdlock(&r->rw);
    const mfu_run *held = r->loaded ? r->run : NULL;
    uint64_t version = r->version;
    compare_rows(r, run, &k, &meta_changed, &obs_changed);
    pthread_rwlock_unlock(&r->rw);
    pthread_rwlock_wrlock(&r->rw);
    if (r->version != version || (r->loaded ? r->run : NULL) != held)
        compare_rows(r, run, &k, &meta_changed, &obs_changed);
    size_t n = mfu_run_count(run);
    *old_n = r->loaded && r->run ? mfu_run_count(r->run) : 0;
    mfu_run_free(r->run_own);
    r->run_own = borrowed ? NULL : (mfu_run *)(uintptr_t)run;
    r->run = run;
    bool changed = true;
    if (k == n && k == *old_n && !meta_changed) {
        *first = n; /* same rows: only the owner changed, or the observations */
        if (obs_changed)
            touch(r);
        changed = obs_changed;
    } else {
        size_t ch = rederive(g, r, k, meta_changed);
        *first = r->loaded ? ch : 0;
    }
    pthread_rwlock_unlock(&r->rw);
    return changed;
}

void mfu__srun_unset(mfu__srun *r, const mfu_run *run)
{
    pthread_rwlock_wrlock(&r->rw);
    if (r->run == run && !r->run_own)
        drop_rows(r);
    pthread_rwlock_unlock(&r->rw);
}

size_t mfu__srun_tail(const mfu__srun *r, mfu_step *tail)
{
    size_t n = r->run ? mfu_run_count(r->run) : 0;
    size_t from = n > MFU__TAIL ? n - MFU__TAIL : 0;
    for (size_t i = from; i < n; i++)
        mfu_run_get(r->run, i, &tail[i - from]);
    return n - from;
}

size_t mfu__srun_grew(mfu__registry *g, mfu__srun *r, size_t old_n, const mfu_step *tail,
                      size_t ntail, const mfu_run_meta *old_meta, size_t old_obs)
{
    size_t n = r->run ? mfu_run_count(r->run) : 0;
    size_t k = old_n < n ? old_n : n;
    for (size_t i = 0; i < ntail; i++) {
        size_t row = old_n - ntail + i;
        mfu_step now;
        if (!mfu_run_get(r->run, row, &now) || !mfu__step_equal(&now, &tail[i])) {
            k = row;
            break;
        }
    }
    bool meta_changed = memcmp(old_meta, mfu_run_meta_get(r->run), sizeof *old_meta) != 0;
    if (k == n && n == old_n && !meta_changed) {
        /* a lagging rank's line merges into a row as an observation only */
        if (mfu_run_rank_obs_count(r->run) != old_obs)
            touch(r);
        return n;
    }
    size_t ch = rederive(g, r, k, meta_changed);
    return r->loaded ? ch : 0;
}

/* The window of rank (created when absent); NULL past MFU_SERVER_MAX_RANKS. */
static mfu__rankwin *rank_window(mfu__srun *r, int32_t rank)
{
    for (size_t i = 0; i < r->nranks; i++)
        if (r->ranks[i].rank == rank)
            return &r->ranks[i];
    if (r->nranks >= MFU_SERVER_MAX_RANKS)
        return NULL;
    mfu__rankwin *w = realloc(r->ranks, (r->nranks + 1) * sizeof *w);
    if (!w)
        return NULL;
    r->ranks = w;
    mfu__rankwin *x = &r->ranks[r->nranks++];
    memset(x, 0, sizeof *x);
    x->rank = rank;
    return x;
}

/* Push the figures of one posted object into its rank's window (the figures module's rule
 * under the run's context; the context check's verdict of the run's last rows applies). */
static void rank_push(mfu__srun *r, const mfu_step *s)
{
    mfu__rankwin *w = rank_window(r, s->rank < 0 ? -1 : s->rank);
    if (!w || !r->fig)
        return; /* a rank beyond MFU_SERVER_MAX_RANKS, or no context: no window */
    mfu__frow f;
    size_t row = r->cols.n ? r->cols.n - 1 : 0;
    mfu__figures_row(r->fig, s, w->has_prev ? &w->prev : NULL, row, &f);
    size_t h = w->head;
    w->tps[h] = f.v[MFU__FC_TOKENS_PER_S];
    w->st[h] = f.v[MFU__FC_STEP_TIME_S];
    w->mfu[h] = f.v[MFU__FC_MFU];
    w->hfu[h] = f.v[MFU__FC_HFU];
    w->mf[h] = f.v[MFU__FC_MODEL_FLOPS_PER_S_PER_DEVICE];
    w->hf[h] = f.v[MFU__FC_HARDWARE_FLOPS_PER_S_PER_DEVICE];
    w->head = (w->head + 1) % MFU_SERVER_METRICS_WINDOW;
    if (w->n < MFU_SERVER_METRICS_WINDOW)
        w->n++;
    w->last_step = s->step;
    w->prev = *s;
    w->has_prev = true;
}

mfu_status mfu__posted_steps(const mfu_run *rows, mfu_step **out, bool **is_obs, size_t *n,
                             mfu_error *err)
{
    size_t nr = mfu_run_count(rows), no = mfu_run_rank_obs_count(rows);
    *out = NULL;
    if (is_obs)
        *is_obs = NULL;
    *n = 0;
    mfu_step *v = malloc((nr + no ? nr + no : 1) * sizeof *v);
    bool *obs = calloc(nr + no ? nr + no : 1, sizeof *obs);
    size_t *at = calloc(nr + 1, sizeof *at); /* row i's observations: order[at[i]..at[i+1]) */
    size_t *fill = calloc(nr ? nr : 1, sizeof *fill);
    size_t *order = malloc((no ? no : 1) * sizeof *order);
    if (!v || !obs || !at || !fill || !order) {
        free(v);
        free(obs);
        free(at);
        free(fill);
        free(order);
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory reading posted steps");
    }
    mfu_rank_obs o;
    for (size_t i = 0; i < no; i++) /* a run's observations name rows it holds */
        if (mfu_run_rank_obs_get(rows, i, &o) && o.row < nr)
            at[o.row + 1]++;
    for (size_t i = 0; i < nr; i++)
        at[i + 1] += at[i];
    for (size_t i = 0; i < no; i++) /* each row's in the order they were kept */
        if (mfu_run_rank_obs_get(rows, i, &o) && o.row < nr)
            order[at[o.row] + fill[o.row]++] = i;
    size_t k = 0;
    for (size_t i = 0; i < nr; i++) {
        mfu_run_get(rows, i, &v[k]);
        mfu_scope scope = v[k++].tokens_per_s_scope;
        for (size_t j = at[i]; j < at[i + 1]; j++) {
            mfu_run_rank_obs_get(rows, order[j], &o);
            mfu_step_init(&v[k]);
            v[k].step = o.step;
            v[k].rank = o.rank;
            v[k].step_time_s = o.step_time_s;
            v[k].tokens_per_s = o.tokens_per_s;
            v[k].tokens_per_s_scope = isnan(o.tokens_per_s) ? MFU_SCOPE_UNKNOWN : scope;
            obs[k++] = true;
        }
    }
    free(at);
    free(fill);
    free(order);
    *out = v;
    if (is_obs)
        *is_obs = obs;
    else
        free(obs);
    *n = k;
    return MFU_OK;
}

mfu_status mfu__srun_append(mfu__registry *g, mfu__srun *r, const mfu_run *rows,
                            const mfu_step *lite, size_t nlite, size_t *first, mfu_error *err)
{
    pthread_rwlock_wrlock(&r->rw);
    mfu_status st = MFU_OK;
    if (!r->loaded || r->stale)
        st = load(g, r, err);
    if (st != MFU_OK) {
        pthread_rwlock_unlock(&r->rw);
        return st;
    }
    if (!r->run_own) { /* a followed run's rows belong to its log */
        pthread_rwlock_unlock(&r->rw);
        return mfu__fail(err, MFU_E_INVALID, 0, "run '%s' follows a log file", r->name);
    }
    size_t old = mfu_run_count(r->run), add = mfu_run_count(rows);
    if (old + add > (size_t)MFU_RUN_MAX_STEPS) {
        pthread_rwlock_unlock(&r->rw);
        return mfu__fail(err, MFU_E_LIMIT, 0,
                         "run '%s' holds %zu rows and would pass its limit of %ld; post to a "
                         "new run name",
                         r->name, old, (long)MFU_RUN_MAX_STEPS);
    }
    mfu_step *steps = NULL;
    bool *is_obs = NULL;
    size_t nsteps = 0;
    st = mfu__posted_steps(rows, &steps, &is_obs, &nsteps, err);
    if (st != MFU_OK) {
        pthread_rwlock_unlock(&r->rw);
        return st;
    }
    bool any_merged = false;
    size_t before_ranks = r->nranks;
    r->posted = true;
    for (size_t i = 0; i < nsteps && st == MFU_OK; i++) {
        bool merged = false;
        st = mfu_run_append(r->run_own, &steps[i], &merged, err);
        /* an observation's step merges into the row just appended and changes none */
        any_merged = any_merged || (merged && !is_obs[i]);
    }
    free(steps);
    free(is_obs);
    if (st == MFU_OK) {
        for (size_t i = 0; i < nlite; i++) /* windows first: the device count may follow */
            rank_window(r, lite[i].rank < 0 ? -1 : lite[i].rank);
        if (r->nranks != before_ranks)
            ctx_of(g, r);
    }
    size_t k = any_merged ? (old > MFU_RUN_DEDUP_WINDOW ? old - MFU_RUN_DEDUP_WINDOW : 0) : old;
    size_t changed = k;
    if (!derive_from(g, r, k, &changed)) {
        drop_rows(r);
        st = mfu__fail(err, MFU_E_NOMEM, 0, "out of memory deriving run '%s'", r->name);
    } else {
        for (size_t i = 0; i < nlite; i++) /* with the figures context of the rows */
            rank_push(r, &lite[i]);
    }
    r->version++;
    r->changed_at = mfu__now();
    *first = changed;
    pthread_rwlock_unlock(&r->rw);
    return st;
}

/* ---- the /metrics window ---------------------------------------------------------------- */

bool mfu__srun_window(const mfu__srun *r, mfu__fwindow *w)
{
    size_t n = r->fig ? r->cols.n : 0;
    memset(w, 0, sizeof *w);
    if (n == 0)
        return false;
    size_t first = n > MFU_SERVER_METRICS_WINDOW ? n - MFU_SERVER_METRICS_WINDOW : 0;
    double *scratch = malloc((n - first) * sizeof *scratch);
    if (!scratch)
        return false;
    mfu__figures_window(&r->cols, first, n - 1, scratch, w);
    free(scratch);
    return w->rows > 0;
}

/* ---- the registry ----------------------------------------------------------------------- */

mfu_status mfu__reg_init(mfu__registry *g, mfu_store *store, const mfu__server_model *model,
                         mfu_error *err)
{
    memset(g, 0, sizeof *g);
    if (pthread_mutex_init(&g->mu, NULL) != 0)
        return mfu__fail(err, MFU_E_NOMEM, 0, "cannot create a mutex");
    if (pthread_mutex_init(&g->store_mu, NULL) != 0) {
        pthread_mutex_destroy(&g->mu);
        return mfu__fail(err, MFU_E_NOMEM, 0, "cannot create a mutex");
    }
    g->store = store;
    g->model = model;
    g->last_refresh = -1e9;
    return MFU_OK;
}

void mfu__reg_destroy(mfu__registry *g)
{
    for (size_t i = 0; i < g->n; i++) {
        g->runs[i]->in_registry = false;
        if (--g->runs[i]->refs == 0)
            srun_free(g->runs[i]);
    }
    free(g->runs);
    pthread_mutex_destroy(&g->store_mu);
    pthread_mutex_destroy(&g->mu);
}

/* Index of name in g->runs, or where it would go (*found false). g->mu held. */
static size_t find_pos(const mfu__registry *g, const char *name, bool *found)
{
    size_t lo = 0, hi = g->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(g->runs[mid]->name, name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

/* Insert a new entry at i (g->mu held); NULL when out of memory. */
static mfu__srun *insert_at(mfu__registry *g, size_t i, const char *name)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 16;
        mfu__srun **p = realloc(g->runs, cap * sizeof *p);
        if (!p)
            return NULL;
        g->runs = p;
        g->cap = cap;
    }
    mfu__srun *r = srun_new(name);
    if (!r)
        return NULL;
    memmove(&g->runs[i + 1], &g->runs[i], (g->n - i) * sizeof *g->runs);
    g->runs[i] = r;
    g->n++;
    r->refs = 1; /* the registry's */
    r->in_registry = true;
    return r;
}

static void remove_at(mfu__registry *g, size_t i)
{
    mfu__srun *r = g->runs[i];
    memmove(&g->runs[i], &g->runs[i + 1], (g->n - i - 1) * sizeof *g->runs);
    g->n--;
    r->in_registry = false;
    if (--r->refs == 0)
        srun_free(r);
}

/* Copy the listing's figures into r (r write-locked). */
static void take_listing(mfu__srun *r, const mfu_store_run_info *info)
{
    /* the store's row count, not the run's: stored rows may merge on reading (posted ranks) */
    if (r->loaded && !r->live &&
        (info->steps != r->listed_steps || info->updated_s != r->updated_s))
        r->stale = true;
    r->listed_steps = info->steps;
    r->updated_s = info->updated_s;
    r->lines = info->source_lines;
    if (set_context(r, info->context) && r->loaded && !r->live)
        r->stale = true; /* a new context: work the run out again */
    if (!r->loaded) {
        mfu__strlcpy(r->format, info->format, sizeof r->format);
        r->steps = info->steps;
        r->first_step = info->first_step;
        r->last_step = info->last_step;
    }
    tags_free(r);
    if (info->ntags) {
        r->tags = calloc(info->ntags, sizeof *r->tags);
        for (size_t i = 0; r->tags && i < info->ntags; i++) {
            r->tags[i].key = mfu__strdup(info->tags[i].key);
            r->tags[i].value = mfu__strdup(info->tags[i].value);
            if (r->tags[i].key && r->tags[i].value)
                r->ntags = i + 1;
            else
                break;
        }
    }
}

void mfu__reg_refresh(mfu__registry *g, bool force)
{
    double now = mfu__now();
    pthread_mutex_lock(&g->mu);
    if (!force && now - g->last_refresh < 1.0) {
        pthread_mutex_unlock(&g->mu);
        return;
    }
    g->last_refresh = now;
    pthread_mutex_unlock(&g->mu);

    mfu_store_list *l = NULL;
    pthread_mutex_lock(&g->store_mu);
    mfu_status st = mfu_store_list_runs(g->store, &l, NULL);
    pthread_mutex_unlock(&g->store_mu);
    if (st != MFU_OK)
        return;
    size_t nl = mfu_store_list_count(l);
    pthread_mutex_lock(&g->mu);
    bool *seen = calloc(g->n + nl + 1, sizeof *seen);
    if (!seen) {
        pthread_mutex_unlock(&g->mu);
        mfu_store_list_free(l);
        return;
    }
    for (size_t i = 0; i < nl; i++) {
        const mfu_store_run_info *info = mfu_store_list_at(l, i);
        bool found;
        size_t at = find_pos(g, info->name, &found);
        mfu__srun *r = found ? g->runs[at] : NULL;
        if (!found) {
            r = insert_at(g, at, info->name);
            if (!r)
                continue;
            memmove(&seen[at + 1], &seen[at], (g->n - 1 - at) * sizeof *seen);
        }
        seen[at] = true;
        if (pthread_rwlock_trywrlock(&r->rw) == 0) {
            take_listing(r, info);
            pthread_rwlock_unlock(&r->rw);
        }
    }
    for (size_t i = g->n; i > 0; i--) {
        mfu__srun *r = g->runs[i - 1];
        if (seen[i - 1])
            continue;
        bool live = false;
        if (pthread_rwlock_tryrdlock(&r->rw) == 0) {
            live = r->live;
            pthread_rwlock_unlock(&r->rw);
        } else {
            live = true; /* busy: decide next time */
        }
        if (!live)
            remove_at(g, i - 1);
    }
    free(seen);
    pthread_mutex_unlock(&g->mu);
    mfu_store_list_free(l);
}

mfu__srun *mfu__reg_get(mfu__registry *g, const char *name, bool create)
{
    for (int pass = 0; pass < 2; pass++) {
        pthread_mutex_lock(&g->mu);
        bool found;
        size_t at = find_pos(g, name, &found);
        if (found) {
            mfu__srun *r = g->runs[at];
            r->refs++;
            pthread_mutex_unlock(&g->mu);
            return r;
        }
        if (pass == 1 && create) {
            mfu__srun *r = insert_at(g, at, name);
            if (r) {
                r->live = true; /* set before anyone else can see it */
                r->refs++;
            }
            pthread_mutex_unlock(&g->mu);
            return r;
        }
        pthread_mutex_unlock(&g->mu);
        if (pass == 0)
            mfu__reg_refresh(g, create);
    }
    return NULL;
}

void mfu__reg_put(mfu__registry *g, mfu__srun *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&g->mu);
    bool last = --r->refs == 0;
    pthread_mutex_unlock(&g->mu);
    if (last)
        srun_free(r);
}

mfu__srun **mfu__reg_all(mfu__registry *g, size_t *n)
{
    pthread_mutex_lock(&g->mu);
    mfu__srun **v = malloc((g->n + 1) * sizeof *v);
    *n = 0;
    if (v) {
        for (size_t i = 0; i < g->n; i++) {
            v[i] = g->runs[i];
            v[i]->refs++;
        }
        *n = g->n;
    }
    pthread_mutex_unlock(&g->mu);
    return v;
}
