/*
 * api.c - the JSON endpoints, /metrics and POST ingestion. The contract (paths, keys, units,
 * status codes) is in docs/cli.md, section "mfu serve"; every answer is written by the HTML-safe
 * JSON writer of buf.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "figures/energy.h"
#include "server/internal.h"

/* ---- replies ---------------------------------------------------------------------------- */

static void reply_sb(mfu__reply *out, unsigned status, mfu__sb *b)
{
    if (b->failed) {
        mfu__sb_free(b);
        mfu__api_error(out, 500, "the answer could not be built (out of memory)");
        return;
    }
    out->status = status;
    out->content_type = "application/json; charset=utf-8";
    out->body = mfu__sb_take(b, &out->len);
    if (!out->body) {
        out->body = mfu__strdup("{}");
        out->len = out->body ? 2 : 0;
    }
}

void mfu__api_error(mfu__reply *out, unsigned status, const char *fmt, ...)
{
    char msg[MFU_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mfu__sb b;
    mfu__sb_init(&b, 0);
    mfu__jw w;
    mfu__jw_init(&w, &b);
    mfu__jw_obj(&w);
    mfu__jw_key(&w, "error");
    mfu__jw_str(&w, msg);
    mfu__jw_end_obj(&w);
    free(out->body);
    out->body = NULL;
    out->status = status;
    out->content_type = "application/json; charset=utf-8";
    out->body = mfu__sb_take(&b, &out->len);
}

/* A query argument, percent-decoded into buf; NULL when absent; *bad set when malformed. */
static const char *get_arg(mfu__arg_fn arg, void *ctx, const char *key, char *buf, size_t n,
                           bool *bad)
{
    const char *raw = arg ? arg(ctx, key) : NULL;
    if (!raw)
        return NULL;
    if (!mfu__pct_decode(raw, strlen(raw), true, buf, n, NULL)) {
        *bad = true;
        return NULL;
    }
    return buf;
}

/* ---- run objects ------------------------------------------------------------------------ */

static void str_or_null(mfu__jw *w, const char *s)
{
    if (s && s[0])
        mfu__jw_str(w, s);
    else
        mfu__jw_null(w);
}

static void int_or_null(mfu__jw *w, int64_t v)
{
    if (v > 0)
        mfu__jw_int(w, v);
    else
        mfu__jw_null(w);
}

/* The fields every run object has (r read-locked, or not loaded and locked for reading). */
static void run_fields(mfu__jw *w, const mfu__registry *g, mfu__srun *r)
{
    mfu__jw_key(w, "name");
    mfu__jw_str(w, r->name);
    mfu__jw_key(w, "format");
    str_or_null(w, r->format);
    mfu__jw_key(w, "steps");
    mfu__jw_int(w, r->steps);
    mfu__jw_key(w, "first_step");
    mfu__jw_int(w, r->first_step);
    mfu__jw_key(w, "last_step");
    mfu__jw_int(w, r->last_step);
    mfu__jw_key(w, "live");
    mfu__jw_bool(w, r->live);
    mfu__jw_key(w, "tags");
    mfu__jw_obj(w);
    for (size_t i = 0; i < r->ntags; i++) {
        mfu__jw_key(w, r->tags[i].key);
        mfu__jw_str(w, r->tags[i].value);
    }
    mfu__jw_end_obj(w);

    const mfu__ctx *c = &r->ctx;
    mfu__jw_key(w, "device");
    if (r->loaded && (c->device_id[0] || isfinite(c->peak_flops_per_s))) {
        mfu__jw_obj(w);
        mfu__jw_key(w, "id");
        str_or_null(w, c->device_id);
        mfu__jw_key(w, "count");
        mfu__jw_num(w, c->devices);
        mfu__jw_key(w, "peak_flops");
        mfu__jw_num(w, c->peak_flops_per_s);
        mfu__jw_end_obj(w);
    } else {
        mfu__jw_null(w);
    }

    mfu__summary sm;
    mfu__jw_key(w, "summary");
    if (r->loaded && mfu__srun_summary(g, r, &sm)) {
        mfu__jw_obj(w);
        mfu__jw_key(w, "mfu");
        mfu__jw_num(w, sm.mfu);
        mfu__jw_key(w, "hfu");
        mfu__jw_num(w, sm.hfu);
        mfu__jw_key(w, "tokens_per_second");
        mfu__jw_num(w, sm.tokens_per_s);
        mfu__jw_key(w, "model_flops_per_second_per_device");
        mfu__jw_num(w, sm.model_flops_per_s_per_device);
        mfu__jw_key(w, "step_time_s");
        mfu__jw_num(w, sm.step_time_s);
        mfu__jw_end_obj(w);
    } else {
        mfu__jw_null(w);
    }
}

static void get_runs(mfu__server *s, mfu__reply *out)
{
    mfu__reg_refresh(&s->reg, false);
    size_t n = 0;
    mfu__srun **v = mfu__reg_all(&s->reg, &n);
    if (!v) {
        mfu__api_error(out, 500, "out of memory listing runs");
        return;
    }
    mfu__sb b;
    mfu__sb_init(&b, 0);
    mfu__jw w;
    mfu__jw_init(&w, &b);
    mfu__jw_obj(&w);
    mfu__jw_key(&w, "runs");
    mfu__jw_arr(&w);
    for (size_t i = 0; i < n; i++) {
        mfu__srun *r = v[i];
        /* small runs are read to summarise them; a large one once it is opened */
        pthread_rwlock_rdlock(&r->rw);
        bool want = !r->loaded && r->steps <= MFU_SERVER_LIST_LOAD_ROWS;
        pthread_rwlock_unlock(&r->rw);
        if (!want || !mfu__srun_read(&s->reg, r, NULL))
            pthread_rwlock_rdlock(&r->rw);
        mfu__jw_obj(&w);
        run_fields(&w, &s->reg, r);
        mfu__jw_end_obj(&w);
        mfu__srun_unlock(r);
        mfu__reg_put(&s->reg, r);
    }
    free(v);
    mfu__jw_end_arr(&w);
    mfu__jw_end_obj(&w);
    reply_sb(out, 200, &b);
}

static void meta_json(mfu__jw *w, const mfu_run_meta *m)
{
    mfu__jw_obj(w);
    mfu__jw_key(w, "format");
    str_or_null(w, m->format);
    mfu__jw_key(w, "model");
    str_or_null(w, m->model);
    mfu__jw_key(w, "model_params");
    mfu__jw_num(w, m->model_params);
    mfu__jw_key(w, "global_batch");
    int_or_null(w, m->global_batch);
    mfu__jw_key(w, "micro_batch");
    int_or_null(w, m->micro_batch);
    mfu__jw_key(w, "seq_len");
    int_or_null(w, m->seq_len);
    mfu__jw_key(w, "world_size");
    int_or_null(w, m->world_size);
    mfu__jw_key(w, "grad_accum");
    int_or_null(w, m->grad_accum);
    mfu__jw_key(w, "device");
    str_or_null(w, m->device);
    mfu__jw_key(w, "dtype");
    str_or_null(w, m->dtype);
    mfu__jw_key(w, "tokens_per_step");
    mfu__jw_num(w, m->tokens_per_step);
    mfu__jw_key(w, "convention");
    str_or_null(w, m->convention);
    mfu__jw_key(w, "reported_peak_flops_per_s");
    mfu__jw_num(w, m->reported_peak_flops_per_s);
    mfu__jw_end_obj(w);
}

static void context_json(mfu__jw *w, const mfu__ctx *c)
{
    mfu__jw_obj(w);
    mfu__jw_key(w, "model");
    str_or_null(w, c->model);
    mfu__jw_key(w, "convention");
    str_or_null(w, c->convention);
    mfu__jw_key(w, "seq");
    int_or_null(w, c->seq);
    mfu__jw_key(w, "model_flops_per_token");
    mfu__jw_num(w, c->model_flops_per_token);
    mfu__jw_key(w, "hardware_flops_per_token");
    mfu__jw_num(w, c->hardware_flops_per_token);
    mfu__jw_key(w, "device");
    str_or_null(w, c->device_id);
    mfu__jw_key(w, "model_name");
    str_or_null(w, c->model_name_label);
    mfu__jw_key(w, "dtype");
    str_or_null(w, c->dtype);
    mfu__jw_key(w, "devices");
    mfu__jw_num(w, c->devices);
    mfu__jw_key(w, "devices_source");
    str_or_null(w, c->devices_source);
    mfu__jw_key(w, "local_devices");
    mfu__jw_num(w, c->local_devices);
    mfu__jw_key(w, "peak_flops");
    mfu__jw_num(w, c->peak_flops_per_s);
    mfu__jw_key(w, "source");
    str_or_null(w, c->source);
    mfu__jw_key(w, "mfu_from_log");
    mfu__jw_bool(w, c->mfu_from_log);
    mfu__jw_key(w, "mfu_known");
    mfu__jw_bool(w, !c->why[0] || c->mfu_from_log);
    mfu__jw_key(w, "why");
    str_or_null(w, c->why);
    mfu__jw_end_obj(w);
}

/* The run named by rt, read-locked and loaded; NULL after filling out with the error. */
static mfu__srun *open_run(mfu__server *s, const char *name, mfu__reply *out)
{
    mfu__srun *r = mfu__reg_get(&s->reg, name, false);
    if (!r) {
        mfu__api_error(out, 404, "no run named '%s' (GET /api/runs lists them)", name);
        return NULL;
    }
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (!mfu__srun_read(&s->reg, r, &e)) {
        if (e.code == MFU_E_UNKNOWN)
            mfu__api_error(out, 404, "no run named '%s' (it was removed)", name);
        else
            mfu__api_error(out, 500, "run '%s' could not be read: %s", name, e.message);
        mfu__reg_put(&s->reg, r);
        return NULL;
    }
    return r;
}

static void close_run(mfu__server *s, mfu__srun *r)
{
    mfu__srun_unlock(r);
    mfu__reg_put(&s->reg, r);
}

static void get_run(mfu__server *s, const char *name, mfu__reply *out)
{
    mfu__srun *r = open_run(s, name, out);
    if (!r)
        return;
    mfu__sb b;
    mfu__sb_init(&b, 0);
    mfu__jw w;
    mfu__jw_init(&w, &b);
    mfu__jw_obj(&w);
    run_fields(&w, &s->reg, r);
    mfu__jw_key(&w, "meta");
    meta_json(&w, mfu_run_meta_get(r->run));
    mfu__jw_key(&w, "context");
    context_json(&w, &r->ctx);
    mfu__jw_key(&w, "lines");
    if (r->lines > 0)
        mfu__jw_int(&w, r->lines);
    else
        mfu__jw_null(&w);
    mfu__jw_end_obj(&w);
    close_run(s, r);
    reply_sb(out, 200, &b);
}

/* ---- series ----------------------------------------------------------------------------- */

typedef struct series_req {
    int fields[MFU_SERVER_MAX_FIELDS];
    size_t nfields;
    size_t max_points;
    bool has_from, has_to;
    int64_t from, to;
    bool axes; /* axes=1: also elapsed_s and tokens_cum per point (the dashboard's x axes) */
} series_req;

static bool parse_series(mfu__server *s, mfu__arg_fn arg, void *ctx, series_req *q, mfu__reply *out)
{
    memset(q, 0, sizeof *q);
    char buf[512];
    bool bad = false;
    const char *f = get_arg(arg, ctx, "fields", buf, sizeof buf, &bad);
    if (bad) {
        mfu__api_error(out, 400, "fields: malformed or too long");
        return false;
    }
    if (!f)
        f = "mfu,tokens_per_second,step_time_s,loss";
    for (const char *p = f;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int id = mfu__field_parse(p, n);
        if (id < 0) {
            mfu__api_error(out, 400,
                           "fields: unknown field '%.*s'; use mfu, hfu, tokens_per_second, "
                           "tokens_per_second_per_device, step_time_s, "
                           "model_flops_per_second_per_device, "
                           "hardware_flops_per_second_per_device, loss",
                           (int)(n > 64 ? 64 : n), p);
            return false;
        }
        for (size_t i = 0; i < q->nfields; i++)
            if (q->fields[i] == id) {
                mfu__api_error(out, 400, "fields: '%s' is given twice", mfu__field_name(id));
                return false;
            }
        if (q->nfields == MFU_SERVER_MAX_FIELDS) {
            mfu__api_error(out, 400, "fields: at most %d", MFU_SERVER_MAX_FIELDS);
            return false;
        }
        q->fields[q->nfields++] = id;
        if (!e)
            break;
        p = e + 1;
    }
    int64_t v = MFU_SERVER_POINTS_DEFAULT;
    const char *mp = get_arg(arg, ctx, "max_points", buf, sizeof buf, &bad);
    if (bad || (mp && (!mfu__parse_int64(mp, &v) || v < 2 || (size_t)v > s->points_limit))) {
        mfu__api_error(out, 400, "max_points: an integer from 2 to %zu", s->points_limit);
        return false;
    }
    q->max_points = (size_t)v;
    const char *fr = get_arg(arg, ctx, "from", buf, sizeof buf, &bad);
    if (bad || (fr && !mfu__parse_int64(fr, &q->from))) {
        mfu__api_error(out, 400, "from: a step number");
        return false;
    }
    q->has_from = fr != NULL;
    const char *to = get_arg(arg, ctx, "to", buf, sizeof buf, &bad);
    if (bad || (to && !mfu__parse_int64(to, &q->to))) {
        mfu__api_error(out, 400, "to: a step number");
        return false;
    }
    q->has_to = to != NULL;
    const char *ax = get_arg(arg, ctx, "axes", buf, sizeof buf, &bad);
    if (bad || (ax && strcmp(ax, "0") != 0 && strcmp(ax, "1") != 0)) {
        mfu__api_error(out, 400, "axes: 0 or 1");
        return false;
    }
    q->axes = ax && strcmp(ax, "1") == 0;
    if (q->has_from && q->has_to && q->from > q->to) {
        mfu__api_error(out, 400, "from must not be after to");
        return false;
    }
    return true;
}

/* First index with steps[i] >= v (steps ascending). */
static size_t lower_bound(const int64_t *steps, size_t n, int64_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (steps[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The cache key of a parsed query: everything the answer depends on besides the run. */
static void series_key(const series_req *q, char *key, size_t n)
{
    size_t k = 0;
    for (size_t f = 0; f < q->nfields && k < n; f++)
        k += (size_t)snprintf(key + k, n - k, "%d,", q->fields[f]);
    if (k < n)
        snprintf(key + k, n - k, ";%zu;%d:%lld;%d:%lld;%d", q->max_points, (int)q->has_from,
                 (long long)(q->has_from ? q->from : 0), (int)q->has_to,
                 (long long)(q->has_to ? q->to : 0), (int)q->axes);
}

/* A copy of the cached answer to key for r's present rows (read-locked), or NULL. */
static char *cache_get(mfu__srun *r, const char *key, size_t *len)
{
    char *body = NULL;
    pthread_mutex_lock(&r->cache_mu);
    for (int i = 0; i < MFU__SCACHE_ENTRIES; i++) {
        mfu__scache *c = &r->cache[i];
        if (c->body && c->version == r->version && strcmp(c->key, key) == 0) {
            body = malloc(c->len ? c->len : 1);
            if (body) {
                memcpy(body, c->body, c->len);
                *len = c->len;
                c->used = ++r->cache_tick;
            }
            break;
        }
    }
    pthread_mutex_unlock(&r->cache_mu);
    return body;
}

/* Keep a copy of the answer body[0..len) to key for r's present rows (read-locked), in place
 * of an entry for older rows or else of the least recently used one; the other entries for
 * older rows are freed on the way (a growing run keeps no dead answers). */
static void cache_put(mfu__srun *r, const char *key, const char *body, size_t len)
{
    if (len > MFU__SCACHE_MAX_BYTES || strlen(key) >= sizeof r->cache[0].key)
        return;
    char *copy = malloc(len ? len : 1);
    if (!copy)
        return;
    memcpy(copy, body, len);
    pthread_mutex_lock(&r->cache_mu);
    mfu__scache *v = NULL, *lru = &r->cache[0];
    for (int i = 0; i < MFU__SCACHE_ENTRIES; i++) {
        mfu__scache *c = &r->cache[i];
        if (c->body && c->version != r->version) { /* an answer for older rows */
            free(c->body);
            c->body = NULL;
        }
        if (!v && (!c->body || strcmp(c->key, key) == 0))
            v = c;
        if (c->body && c->used < lru->used)
            lru = c;
    }
    if (!v)
        v = lru;
    free(v->body);
    mfu__strlcpy(v->key, key, sizeof v->key);
    v->version = r->version;
    v->body = copy;
    v->len = len;
    v->used = ++r->cache_tick;
    pthread_mutex_unlock(&r->cache_mu);
}

/* How many candidates ahead of its load the gather of the first field asks for a row. */
#define GATHER_AHEAD 16

static void get_series(mfu__server *s, const char *name, mfu__arg_fn arg, void *ctx,
                       mfu__reply *out)
{
    series_req q;
    if (!parse_series(s, arg, ctx, &q, out))
        return;
    mfu__srun *r = open_run(s, name, out);
    if (!r)
        return;
    char key[sizeof r->cache[0].key];
    series_key(&q, key, sizeof key);
    size_t clen = 0;
    char *cached = cache_get(r, key, &clen);
    if (cached) {
        close_run(s, r);
        out->status = 200;
        out->content_type = "application/json; charset=utf-8";
        out->body = cached;
        out->len = clen;
        return;
    }
    size_t n = mfu_run_count(r->run);
    const int64_t *steps = mfu_run_steps(r->run);
    int64_t from = q.has_from ? q.from : INT64_MIN, to = q.has_to ? q.to : INT64_MAX;

    /* The rows in range: a contiguous [lo, hi) when steps ascend, else an index list. */
    size_t lo = 0, hi = n, *idx = NULL, total = 0;
    if (r->monotonic || n == 0) {
        lo = q.has_from ? lower_bound(steps, n, from) : 0;
        hi = q.has_to ? (to == INT64_MAX ? n : lower_bound(steps, n, to + 1)) : n;
        if (hi < lo)
            hi = lo;
        total = hi - lo;
    } else {
        idx = malloc((n ? n : 1) * sizeof *idx);
        if (!idx) {
            close_run(s, r);
            mfu__api_error(out, 500, "out of memory");
            return;
        }
        for (size_t i = 0; i < n; i++)
            if (steps[i] >= from && steps[i] <= to)
                idx[total++] = i;
    }

    /* Which of them to send: all, or LTTB on the first field's column; over a long contiguous
     * range, LTTB over the min/max candidates of the blocks of the pyramid level that fits the
     * range (lttb.c). keep[] holds positions in the range [lo, hi) or in idx[]. */
    size_t *keep = NULL, nkeep = total;
    bool down = total > q.max_points;
    int level = down && !idx ? mfu__mm_level(total, q.max_points) : -1;
    bool preselect = level >= 0;
    if (down) {
        mfu__field f0 = (mfu__field)q.fields[0];
        const double *base = mfu__srun_column(r, f0);
        keep = malloc(q.max_points * sizeof *keep);
        size_t *cand = NULL, ncand = total;
        double *gather = NULL;
        if (keep && preselect)
            cand = malloc(mfu__mm_cap(level, total) * sizeof *cand);
        const mfu__mm *mm = cand ? mfu__srun_mm(r, f0) : NULL;
        if (!mm) { /* out of memory for the pyramid: no candidates */
            free(cand);
            cand = NULL;
        }
        const size_t *rows = cand ? cand : idx;
        if (keep && rows) {
            gather = malloc((cand ? mfu__mm_cap(level, total) : ncand) * sizeof *gather);
            if (gather && cand) /* the candidates' numbers come with them */
                ncand = mfu__mm_candidates_v(mm, level, lo, hi, base, cand, gather);
            else if (gather && base) /* rows far apart in a long column: fetch ahead */
                for (size_t i = 0; i < ncand; i++) {
                    if (i + GATHER_AHEAD < ncand)
                        __builtin_prefetch(&base[rows[i + GATHER_AHEAD]]);
                    gather[i] = base[rows[i]];
                }
            else if (gather)
                for (size_t i = 0; i < ncand; i++)
                    gather[i] = NAN;
        }
        if (!keep || (preselect && !cand) || (rows && !gather)) {
            free(keep);
            free(cand);
            free(gather);
            free(idx);
            close_run(s, r);
            mfu__api_error(out, 500, "out of memory");
            return;
        }
        nkeep = mfu__lttb_xy(gather ? gather : base + lo, cand, ncand, q.max_points, keep);
        if (cand) /* candidate positions -> positions in [lo, hi) */
            for (size_t j = 0; j < nkeep; j++)
                keep[j] = cand[keep[j]] - lo;
        free(cand);
        free(gather);
    }

    mfu__sb b;
    mfu__sb_init(&b, 0);
    mfu__jw w;
    mfu__jw_init(&w, &b);
    mfu__jw_obj(&w);
    mfu__jw_key(&w, "run");
    mfu__jw_str(&w, r->name);
    mfu__jw_key(&w, "fields");
    mfu__jw_arr(&w);
    for (size_t f = 0; f < q.nfields; f++)
        mfu__jw_str(&w, mfu__field_name((mfu__field)q.fields[f]));
    mfu__jw_end_arr(&w);
    mfu__jw_key(&w, "total");
    mfu__jw_int(&w, (int64_t)total);
    mfu__jw_key(&w, "downsampled");
    mfu__jw_bool(&w, down);
    mfu__jw_key(&w, "method");
    mfu__jw_str(&w, down ? "lttb" : "none");
    mfu__jw_key(&w, "preselection");
    if (preselect)
        mfu__jw_str(&w, "minmax");
    else
        mfu__jw_null(&w);
#define ROW(j) (idx ? idx[keep ? keep[j] : (j)] : lo + (keep ? keep[j] : (j)))
    /* The values of the rows sent, read in a loop of loads alone before they are printed: the
     * rows lie far apart in columns of millions, and loads between the printing calls wait for
     * memory one at a time. */
    double *vals = malloc((nkeep ? nkeep : 1) * sizeof *vals);
    int64_t *srow = malloc((nkeep ? nkeep : 1) * sizeof *srow);
    if (srow)
        for (size_t j = 0; j < nkeep; j++)
            srow[j] = steps[ROW(j)];
    mfu__jw_key(&w, "step");
    mfu__jw_arr(&w);
    for (size_t j = 0; j < nkeep; j++)
        mfu__jw_int(&w, srow ? srow[j] : steps[ROW(j)]);
    mfu__jw_end_arr(&w);
    free(srow);
    if (q.axes) {
        /* Running sums from the run's first row to each point (rows kept ascend): seconds of
         * steps (step times) and tokens (tokens/s x step time of each row; rows without
         * either add 0). A live page extends both from the steps events the same way. */
        double el = 0, tok = 0;
        size_t i = 0;
        mfu__jw_key(&w, "elapsed_s");
        mfu__jw_arr(&w);
        double *tc = malloc((nkeep ? nkeep : 1) * sizeof *tc);
        const double *stc = mfu__srun_column(r, MFU__F_STEP_TIME_S);
        const double *tpc = mfu__srun_column(r, MFU__F_TOKENS_PER_S);
        const double *tdc = mfu__srun_column(r, MFU__F_TOKENS_PER_S_PER_DEVICE);
        for (size_t j = 0; j < nkeep; j++) {
            size_t row = ROW(j), blk = row / MFU__BLOCK;
            if (r->ax_el && blk * MFU__BLOCK > i) { /* the sums before row's block (registry.c) */
                i = blk * MFU__BLOCK;
                el = r->ax_el[blk];
                tok = r->ax_tok[blk];
            }
            /* the figures of each row (tokens per device where the job's are unknown) */
            for (; i <= row; i++)
                mfu__axes_add(stc, tpc, tdc, i, &el, &tok);
            mfu__jw_num17(&w, el);
            if (tc)
                tc[j] = tok;
        }
        mfu__jw_end_arr(&w);
        mfu__jw_key(&w, "tokens_cum");
        mfu__jw_arr(&w);
        for (size_t j = 0; j < nkeep; j++)
            mfu__jw_num17(&w, tc ? tc[j] : NAN);
        mfu__jw_end_arr(&w);
        free(tc);
    }
    mfu__jw_key(&w, "columns");
    mfu__jw_obj(&w);
    for (size_t f = 0; f < q.nfields; f++) {
        mfu__field fld = (mfu__field)q.fields[f];
        const double *base = mfu__srun_column(r, fld);
        mfu__jw_key(&w, mfu__field_name(fld));
        mfu__jw_arr(&w);
        if (vals && base)
            for (size_t j = 0; j < nkeep; j++)
                vals[j] = base[ROW(j)];
        for (size_t j = 0; j < nkeep; j++)
            mfu__jw_num17(&w, !base ? NAN : vals ? vals[j] : base[ROW(j)]);
        mfu__jw_end_arr(&w);
    }
#undef ROW
    free(vals);
    mfu__jw_end_obj(&w);
    mfu__jw_end_obj(&w);
    free(keep);
    free(idx);
    if (!b.failed)
        cache_put(r, key, b.p, b.len);
    close_run(s, r);
    reply_sb(out, 200, &b);
}

/* ---- /metrics --------------------------------------------------------------------------- */

enum {
    M_DEVICES,
    M_TPS,
    M_MFLOPS,
    M_HFLOPS,
    M_PEAK,
    M_MFU,
    M_HFU,
    M_STEP,
    M_LAST,
    M_JPP,
    M_TPK,
    M_TENSOR,
    M_COUNT_
};

static const struct {
    const char *name, *help;
} metric_info[M_COUNT_] = {
    {"mfu_devices", "Devices the series stands for (its share of the job)."},
    {"mfu_tokens_per_second", "Tokens per second processed by those devices: the median of the "
                              "last steps' figures (the headline's definition)."},
    {"mfu_model_flops_per_second", "Model FLOP/s achieved by those devices (MFU numerator), median "
                                   "of the last steps."},
    {"mfu_hardware_flops_per_second", "Hardware FLOP/s executed by those devices, recomputation "
                                      "included (HFU numerator), median of the last steps."},
    {"mfu_peak_flops_per_second", "Dense peak FLOP/s of those devices for the dtype in use."},
    {"mfu_ratio", "Model FLOPs utilization, 0..1: the median of the last steps' MFU."},
    {"mfu_hfu_ratio", "Hardware FLOPs utilization, 0..1: the median of the last steps' HFU."},
    {"mfu_step_duration_seconds", "Median wall time of a step over the last steps."},
    {"mfu_last_step", "The last step number seen."},
    {"mfu_joules_per_pflop", "Energy per useful PFLOP over the last steps, J: their energy "
                             "(energy_j, else power x step time) over their useful model FLOPs."},
    {"mfu_tokens_per_kwh", "Tokens processed per kWh of the devices' energy over the last steps."},
    {"mfu_tensor_active_ratio", "Tensor-pipe activity, 0..1 (NVML GPM), median of the last "
                                "steps: MFU above it is a counting error."},
};

typedef struct mseries {
    char run[MFU__NAME_BYTES];
    char rank[16], gpu[16];
    bool has_rank, has_gpu;
    char model_name[MFU__NAME_BYTES];
    double v[M_COUNT_];
} mseries;

/* The figures of a window as one series of d devices (of the job's D): medians of the steps'
 * own figures (the headline's definition), tokens/s and FLOP/s scaled to the d devices. */
typedef struct wfig {
    double tps; /* whole job, or per device (per_device) */
    bool per_device;
    double mfu, hfu, mf, hf, step; /* mf, hf per device */
} wfig;

static void fill_series(mseries *m, const mfu__ctx *c, const wfig *f, double d, int64_t last)
{
    double D = c->devices;
    m->v[M_DEVICES] = d;
    m->v[M_TPS] = f->per_device ? f->tps * d : f->tps * d / D;
    m->v[M_MFLOPS] = f->mf * d;
    m->v[M_HFLOPS] = f->hf * d;
    m->v[M_PEAK] = c->peak_flops_per_s * d;
    m->v[M_MFU] = f->mfu;
    m->v[M_HFU] = f->hfu;
    m->v[M_STEP] = f->step;
    m->v[M_LAST] = (double)last;
    m->v[M_JPP] = m->v[M_TPK] = m->v[M_TENSOR] = NAN; /* energy_series sets them */
}

/* Energy beside utilization over the window's rows (figures/energy.c), the run's whole job:
 * set only where the rows carry an energy, power or tensor activity. */
static void energy_series(mseries *m, const mfu__srun *r)
{
    size_t n = r->fig ? r->cols.n : 0;
    if (n == 0 || !r->run)
        return;
    size_t first = n > MFU_SERVER_METRICS_WINDOW ? n - MFU_SERVER_METRICS_WINDOW : 0;
    const double *ej = mfu_run_column(r->run, MFU_COL_ENERGY_J);
    const double *pw = mfu_run_column(r->run, MFU_COL_POWER_W);
    const double *ta = mfu_run_column(r->run, MFU_COL_TENSOR_ACTIVE);
    if ((!ej && !pw && !ta) || mfu_run_count(r->run) < n)
        return;
    double scratch[2 * MFU_SERVER_METRICS_WINDOW];
    mfu__energy_cols c = {ej ? ej + first : NULL,
                          pw ? pw + first : NULL,
                          ta ? ta + first : NULL,
                          r->cols.v[MFU__FC_STEP_TIME_S] + first,
                          r->cols.v[MFU__FC_TOKENS] + first,
                          r->cols.v[MFU__FC_MODEL_FLOPS_PER_S_PER_DEVICE] + first,
                          r->cols.v[MFU__FC_DEVICES] + first,
                          r->cols.v[MFU__FC_MFU] + first};
    mfu_energy e;
    mfu__energy_compute(&c, NULL, n - first, scratch, &e);
    m->v[M_JPP] = e.joules_per_pflop;
    m->v[M_TPK] = e.tokens_per_kwh;
    m->v[M_TENSOR] = e.tensor_active;
}

/* Median of the finite values of v[0..n) (n <= MFU_SERVER_METRICS_WINDOW). */
static double wmedian(const double *v, size_t n)
{
    double tmp[MFU_SERVER_METRICS_WINDOW];
    return mfu__median_finite(v, n, tmp);
}

static void get_metrics(mfu__server *s, mfu__reply *out)
{
    size_t n = 0;
    mfu__srun **v = mfu__reg_all(&s->reg, &n);
    mseries *ms = NULL;
    size_t nm = 0, cap = 0, nlive = 0;
    double now = mfu__now();
    for (size_t i = 0; v && i < n; i++) {
        mfu__srun *r = v[i];
        pthread_rwlock_rdlock(&r->rw);
        if (r->live && r->loaded && now - r->changed_at <= MFU_SERVER_METRICS_IDLE_S) {
            nlive++;
            size_t want = r->posted ? r->nranks : 1;
            if (nm + want > cap) {
                size_t nc = (nm + want) * 2;
                mseries *p = realloc(ms, nc * sizeof *p);
                if (p) {
                    ms = p;
                    cap = nc;
                }
            }
            if (nm + want <= cap) {
                if (!r->posted) {
                    mfu__fwindow fw;
                    if (mfu__srun_window(r, &fw)) {
                        mseries *m = &ms[nm++];
                        memset(m, 0, sizeof *m);
                        mfu__strlcpy(m->run, r->name, sizeof m->run);
                        mfu__strlcpy(m->model_name, r->ctx.model_name_label, sizeof m->model_name);
                        wfig f = {fw.median_tokens_per_s,
                                  fw.per_device,
                                  fw.median_mfu,
                                  fw.median_hfu,
                                  fw.median_model_flops_per_s_per_device,
                                  fw.median_hardware_flops_per_s_per_device,
                                  fw.median_step_time_s};
                        double d = isfinite(r->ctx.local_devices) ? r->ctx.local_devices
                                   : fw.per_device                ? 1
                                                                  : NAN;
                        fill_series(m, &r->ctx, &f, d, r->last_step);
                        energy_series(m, r);
                    }
                } else {
                    for (size_t k = 0; k < r->nranks; k++) {
                        const mfu__rankwin *rw = &r->ranks[k];
                        size_t cnt = 0;
                        for (size_t j = 0; j < rw->n; j++)
                            cnt += isfinite(rw->tps[j]) && rw->tps[j] > 0;
                        if (cnt == 0)
                            continue;
                        mseries *m = &ms[nm++];
                        memset(m, 0, sizeof *m);
                        mfu__strlcpy(m->run, r->name, sizeof m->run);
                        mfu__strlcpy(m->model_name, r->ctx.model_name_label, sizeof m->model_name);
                        double d = rw->rank >= 0 ? 1 : r->ctx.local_devices;
                        wfig f = {wmedian(rw->tps, rw->n), false,
                                  wmedian(rw->mfu, rw->n), wmedian(rw->hfu, rw->n),
                                  wmedian(rw->mf, rw->n),  wmedian(rw->hf, rw->n),
                                  wmedian(rw->st, rw->n)};
                        fill_series(m, &r->ctx, &f, d, rw->last_step);
                        if (rw->rank >= 0) {
                            m->has_rank = true;
                            snprintf(m->rank, sizeof m->rank, "%d", (int)rw->rank);
                            if (s->opts.gpus_per_node > 0) {
                                m->has_gpu = true;
                                snprintf(m->gpu, sizeof m->gpu, "%d",
                                         (int)(rw->rank % s->opts.gpus_per_node));
                            }
                        }
                    }
                }
            }
        }
        pthread_rwlock_unlock(&r->rw);
        mfu__reg_put(&s->reg, r);
    }
    free(v);

    mfu__sb b;
    mfu__sb_init(&b, 0);
    for (int k = 0; k < M_COUNT_; k++) {
        bool any = false;
        for (size_t i = 0; i < nm; i++)
            any = any || isfinite(ms[i].v[k]);
        if (!any)
            continue;
        mfu__prom_family(&b, metric_info[k].name, "gauge", metric_info[k].help);
        for (size_t i = 0; i < nm; i++) {
            if (!isfinite(ms[i].v[k]))
                continue;
            mfu__label l[] = {{"run", ms[i].run},
                              {"rank", ms[i].has_rank ? ms[i].rank : NULL},
                              {"hostname", s->hostname},
                              {"model_name", ms[i].model_name[0] ? ms[i].model_name : NULL},
                              {"gpu", ms[i].has_gpu ? ms[i].gpu : NULL}};
            mfu__prom_sample(&b, metric_info[k].name, l, MFU__ARRAY_LEN(l), ms[i].v[k]);
        }
    }
    free(ms);

    pthread_mutex_lock(&s->stop_mu);
    uint64_t posted = s->posted_steps_total;
    pthread_mutex_unlock(&s->stop_mu);
    pthread_mutex_lock(&s->hub.mu);
    uint64_t dropped = s->hub.dropped_total;
    size_t clients = s->hub.nclients;
    pthread_mutex_unlock(&s->hub.mu);
    mfu__label host[] = {{"hostname", s->hostname}};
    mfu__prom_family(&b, "mfu_server_runs", "gauge", "Runs the server holds (store and live).");
    mfu__prom_sample(&b, "mfu_server_runs", host, 1, (double)n);
    mfu__prom_family(&b, "mfu_server_live_runs", "gauge", "Runs followed or posted to.");
    mfu__prom_sample(&b, "mfu_server_live_runs", host, 1, (double)nlive);
    mfu__prom_family(&b, "mfu_server_event_clients", "gauge", "Open /api/events streams.");
    mfu__prom_sample(&b, "mfu_server_event_clients", host, 1, (double)clients);
    mfu__prom_family(&b, "mfu_server_event_clients_dropped_total", "counter",
                     "Event streams ended because the client fell too far behind.");
    mfu__prom_sample(&b, "mfu_server_event_clients_dropped_total", host, 1, (double)dropped);
    mfu__prom_family(&b, "mfu_server_posted_steps_total", "counter",
                     "Step objects accepted by POST /api/runs/{run}/steps.");
    mfu__prom_sample(&b, "mfu_server_posted_steps_total", host, 1, (double)posted);
    if (b.failed) {
        mfu__sb_free(&b);
        mfu__api_error(out, 500, "out of memory");
        return;
    }
    out->status = 200;
    out->content_type = "text/plain; version=0.0.4; charset=utf-8";
    out->body = mfu__sb_take(&b, &out->len);
}

/* ---- segments, findings, compare -------------------------------------------------------- */

static void get_insight(mfu__server *s, const char *name, bool findings, mfu__reply *out)
{
    mfu__srun *r = open_run(s, name, out);
    if (!r)
        return;
    mfu__sb b;
    mfu__sb_init(&b, 0);
    char why[MFU_ERROR_MESSAGE_MAX + 64] = "";
    bool ok = mfu__insight_json(&s->reg, r, findings, &b, why, sizeof why);
    close_run(s, r);
    if (!ok) {
        mfu__sb_free(&b);
        mfu__api_error(out, 422, "%s", why);
        return;
    }
    reply_sb(out, 200, &b);
}

/* "RUN" or "RUN:FROM-TO" (a name may hold ':'; only a trailing ":N-N" is a range). */
static bool parse_side(const char *v, char *name, size_t n, mfu_window *w)
{
    w->first_step = INT64_MIN;
    w->last_step = INT64_MAX;
    const char *colon = strrchr(v, ':');
    size_t len = strlen(v);
    if (colon) {
        const char *dash = strchr(colon + 1, '-');
        char a[32], b[32];
        int64_t x, y;
        size_t la = dash ? (size_t)(dash - colon - 1) : 0;
        if (dash && la > 0 && la < sizeof a && strlen(dash + 1) < sizeof b) {
            memcpy(a, colon + 1, la);
            a[la] = '\0';
            mfu__strlcpy(b, dash + 1, sizeof b);
            if (mfu__parse_int64(a, &x) && mfu__parse_int64(b, &y) && x <= y) {
                w->first_step = x;
                w->last_step = y;
                len = (size_t)(colon - v);
            }
        }
    }
    if (len == 0 || len >= n)
        return false;
    memcpy(name, v, len);
    name[len] = '\0';
    return true;
}

static void get_compare(mfu__server *s, mfu__arg_fn arg, void *ctx, mfu__reply *out)
{
    char va[512], vb[512], na[MFU__NAME_BYTES], nb[MFU__NAME_BYTES];
    bool bad = false;
    const char *pa = get_arg(arg, ctx, "a", va, sizeof va, &bad);
    const char *pb = get_arg(arg, ctx, "b", vb, sizeof vb, &bad);
    mfu_window wa, wb;
    if (bad || !pa || !pb || !parse_side(pa, na, sizeof na, &wa) ||
        !parse_side(pb, nb, sizeof nb, &wb)) {
        mfu__api_error(out, 400, "give a=RUN and b=RUN, each optionally with :FROM-TO steps");
        return;
    }
    mfu__srun *ra = open_run(s, na, out);
    if (!ra)
        return;
    mfu__srun *rb = ra;
    if (strcmp(na, nb) != 0) {
        /* read locks of two runs: in name order, like every other taker of two */
        mfu__srun_unlock(ra);
        mfu__srun *x = mfu__reg_get(&s->reg, nb, false);
        if (!x) {
            mfu__reg_put(&s->reg, ra);
            mfu__api_error(out, 404, "no run named '%s' (GET /api/runs lists them)", nb);
            return;
        }
        mfu__srun *lo = strcmp(na, nb) < 0 ? ra : x, *hi = lo == ra ? x : ra;
        bool ok = mfu__srun_read(&s->reg, lo, NULL);
        if (ok && !mfu__srun_read(&s->reg, hi, NULL)) {
            mfu__srun_unlock(lo);
            ok = false;
        }
        if (!ok) {
            mfu__reg_put(&s->reg, ra);
            mfu__reg_put(&s->reg, x);
            mfu__api_error(out, 500, "the runs could not be read");
            return;
        }
        rb = x;
    }
    mfu__sb b;
    mfu__sb_init(&b, 0);
    char why[MFU_ERROR_MESSAGE_MAX + 64] = "";
    bool ok = mfu__compare_json(&s->reg, ra, wa, rb, wb, &b, why, sizeof why);
    if (rb != ra)
        close_run(s, rb);
    close_run(s, ra);
    if (!ok) {
        mfu__sb_free(&b);
        mfu__api_error(out, 422, "%s", why);
        return;
    }
    reply_sb(out, 200, &b);
}

/* ---- dispatch --------------------------------------------------------------------------- */

void mfu__api_get(mfu__server *s, const mfu__route *rt, mfu__arg_fn arg, void *arg_ctx,
                  mfu__reply *out)
{
    switch (rt->kind) {
    case MFU__R_RUNS: get_runs(s, out); return;
    case MFU__R_RUN: get_run(s, rt->run, out); return;
    case MFU__R_SERIES: get_series(s, rt->run, arg, arg_ctx, out); return;
    case MFU__R_METRICS: get_metrics(s, out); return;
    case MFU__R_SEGMENTS: get_insight(s, rt->run, false, out); return;
    case MFU__R_FINDINGS: get_insight(s, rt->run, true, out); return;
    case MFU__R_COMPARE: get_compare(s, arg, arg_ctx, out); return;
    case MFU__R_TRACE: mfu__api_get_trace(s, rt->run, out); return;
    default: break;
    }
    mfu__api_error(out, 404, "no such endpoint");
}

/* ---- server-sent events ----------------------------------------------------------------- */

static void step_object(mfu__jw *w, const mfu__srun *r, size_t i)
{
    mfu__jw_obj(w);
    mfu__jw_key(w, "step");
    mfu__jw_int(w, mfu_run_steps(r->run)[i]);
    for (int f = 0; f < MFU__F_COUNT_; f++) {
        mfu__jw_key(w, mfu__field_name((mfu__field)f));
        mfu__jw_num(w, mfu__srun_value(r, (mfu__field)f, i));
    }
    mfu__jw_end_obj(w);
}

void mfu__api_broadcast_run(mfu__server *s, mfu__srun *r, bool reset)
{
    if (mfu__hub_clients(&s->hub) == 0)
        return;
    mfu__sb b;
    mfu__sb_init(&b, 0);
    mfu__jw w;
    mfu__jw_init(&w, &b);
    pthread_rwlock_rdlock(&r->rw);
    mfu__jw_obj(&w);
    mfu__jw_key(&w, "name");
    mfu__jw_str(&w, r->name);
    mfu__jw_key(&w, "steps");
    mfu__jw_int(&w, r->steps);
    mfu__jw_key(&w, "live");
    mfu__jw_bool(&w, r->live);
    mfu__jw_key(&w, "reset");
    mfu__jw_bool(&w, reset);
    mfu__jw_end_obj(&w);
    pthread_rwlock_unlock(&r->rw);
    if (!b.failed)
        mfu__hub_broadcast(&s->hub, "run", b.p, b.len);
    mfu__sb_free(&b);
}

void mfu__api_broadcast_rows(mfu__server *s, mfu__srun *r, size_t first)
{
    if (mfu__hub_clients(&s->hub) == 0)
        return;
    pthread_rwlock_rdlock(&r->rw);
    size_t n = r->run ? mfu_run_count(r->run) : 0;
    if (!r->loaded || first >= n) {
        pthread_rwlock_unlock(&r->rw);
        return;
    }
    if (n - first > MFU_SERVER_SSE_MAX_STEPS) {
        pthread_rwlock_unlock(&r->rw);
        mfu__api_broadcast_run(s, r, true);
        return;
    }
    mfu__sb b;
    mfu__sb_init(&b, 0);
    mfu__jw w;
    mfu__jw_init(&w, &b);
    mfu__jw_obj(&w);
    mfu__jw_key(&w, "run");
    mfu__jw_str(&w, r->name);
    mfu__jw_key(&w, "steps");
    mfu__jw_arr(&w);
    for (size_t i = first; i < n; i++)
        step_object(&w, r, i);
    mfu__jw_end_arr(&w);
    mfu__jw_end_obj(&w);
    pthread_rwlock_unlock(&r->rw);
    if (!b.failed)
        mfu__hub_broadcast(&s->hub, "steps", b.p, b.len);
    mfu__sb_free(&b);
}

/* ---- POST /api/runs/{run}/steps --------------------------------------------------------- */

/* What /metrics needs of one posted object, before rows of the same step merge. */
static bool lite_step(json_t *o, mfu_step *s)
{
    mfu_step_init(s);
    json_t *st = json_object_get(o, "step");
    if (!json_is_integer(st))
        return false;
    s->step = (int64_t)json_integer_value(st);
    json_t *rk = json_object_get(o, "rank");
    if (json_is_integer(rk) && json_integer_value(rk) >= 0 && json_integer_value(rk) <= INT32_MAX)
        s->rank = (int32_t)json_integer_value(rk);
    struct {
        const char *k;
        double *v;
    } nums[] = {{"time_s", &s->time_s},
                {"step_time_s", &s->step_time_s},
                {"tokens", &s->tokens},
                {"tokens_per_s", &s->tokens_per_s}};
    for (size_t i = 0; i < MFU__ARRAY_LEN(nums); i++) {
        json_t *v = json_object_get(o, nums[i].k);
        if (json_is_number(v))
            *nums[i].v = json_number_value(v);
    }
    const char *sc = json_string_value(json_object_get(o, "tokens_per_s_scope"));
    if (sc && strcmp(sc, "device") == 0)
        s->tokens_per_s_scope = MFU_SCOPE_DEVICE;
    else if (sc && strcmp(sc, "global") == 0)
        s->tokens_per_s_scope = MFU_SCOPE_GLOBAL;
    if (!isfinite(s->time_s))
        s->time_s = NAN;
    return true;
}

typedef struct posted {
    mfu__sb lines;  /* a canonical header line, then one object per line */
    mfu_step *lite; /* one per object, in order */
    size_t n, cap;
    bool array;
} posted;

static bool add_object(posted *p, json_t *o, long no, mfu__reply *out)
{
    const char *what = p->array ? "element" : "line";
    if (!json_is_object(o)) {
        mfu__api_error(out, 400, "%s %ld: not a JSON step object", what, no);
        return false;
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 256;
        mfu_step *v = realloc(p->lite, cap * sizeof *v);
        if (!v) {
            mfu__api_error(out, 500, "out of memory");
            return false;
        }
        p->lite = v;
        p->cap = cap;
    }
    if (!lite_step(o, &p->lite[p->n])) {
        mfu__api_error(out, 400, "%s %ld: a step object needs an integer \"step\"", what, no);
        return false;
    }
    p->n++;
    return true;
}

/* Check the body (a JSON array of step objects, or JSON lines of them) and lay it out for the
 * canonical reader. false (out filled) when it is not step objects. */
static bool read_body(const char *body, size_t len, posted *p, mfu__reply *out)
{
    mfu__sb_puts(&p->lines, "{\"mfu_run\":1}\n");
    size_t i = 0;
    while (i < len && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n'))
        i++;
    p->array = i < len && body[i] == '[';
    json_error_t je;
    if (p->array) {
        json_t *a = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
        if (!a) {
            mfu__api_error(out, 400, "malformed JSON at line %d, column %d: %s", je.line, je.column,
                           je.text);
            return false;
        }
        size_t k;
        json_t *el;
        bool ok = json_is_array(a);
        if (!ok)
            mfu__api_error(out, 400, "the body must be a JSON array of step objects");
        json_array_foreach(a, k, el)
        {
            if (!ok || !(ok = add_object(p, el, (long)k + 1, out)))
                break;
            char *t = json_dumps(el, JSON_COMPACT);
            if (!t) {
                mfu__api_error(out, 500, "out of memory");
                ok = false;
                break;
            }
            mfu__sb_puts(&p->lines, t);
            mfu__sb_put(&p->lines, "\n", 1);
            free(t);
        }
        json_decref(a);
        return ok;
    }
    long lineno = 0;
    const char *q = body, *end = body + len;
    while (q < end) {
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        const char *e = nl ? nl : end;
        lineno++;
        const char *t = q;
        while (t < e && (*t == ' ' || *t == '\t' || *t == '\r'))
            t++;
        if (t < e) {
            json_t *o = json_loadb(q, (size_t)(e - q), JSON_REJECT_DUPLICATES, &je);
            if (!o) {
                mfu__api_error(out, 400, "line %ld: malformed JSON at column %d: %s", lineno,
                               je.column, je.text);
                return false;
            }
            bool ok = add_object(p, o, lineno, out);
            json_decref(o);
            if (!ok)
                return false;
        }
        /* blank lines stay, so the reader's line numbers are the body's plus one */
        mfu__sb_put(&p->lines, q, (size_t)(e - q));
        mfu__sb_put(&p->lines, "\n", 1);
        q = nl ? nl + 1 : end;
    }
    return true;
}

/* Parse the body into a run of steps with the canonical reader; NULL (out filled) on error. */
static mfu_run *parse_steps(const char *body, size_t len, posted *p, mfu__reply *out)
{
    if (!read_body(body, len, p, out))
        return NULL;
    if (p->lines.failed) {
        mfu__api_error(out, 500, "out of memory");
        return NULL;
    }
    if (p->n == 0) {
        mfu__api_error(out, 400, "no step objects in the body");
        return NULL;
    }
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = "mfu";
    mfu_ingest *ing = NULL;
    mfu_run *run = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    const char *what = p->array ? "element" : "line";
    mfu_status st = mfu_ingest_new(&o, &ing, &e);
    if (st == MFU_OK)
        st = mfu_ingest_feed_buffer(ing, p->lines.p, p->lines.len, "body", &e);
    const mfu_ingest_stats *stats = ing ? mfu_ingest_get_stats(ing) : NULL;
    if (st == MFU_OK && stats && stats->skipped > 0) {
        const mfu_ingest_skip *k = &stats->skip_samples[0];
        mfu__api_error(out, 400, "%s %ld: %s", what, k->line - 1, k->reason);
    } else if (st != MFU_OK) {
        mfu__api_error(out, 400, "%s %ld: %s", what, e.line > 1 ? e.line - 1 : 1, e.message);
    } else if (mfu_ingest_finish(ing, &run, &e) != MFU_OK) {
        mfu__api_error(out, 400, "no step objects in the body (each needs an integer \"step\")");
    }
    mfu_ingest_free(ing);
    if (out->body) {
        mfu_run_free(run);
        return NULL;
    }
    return run;
}

/* Append rows to run name in the store (created when absent). store_mu held by the caller. */
static mfu_status store_rows(mfu_store *st, const char *name, const mfu_run *rows, mfu_error *e)
{
    int64_t id = 0;
    mfu_error ign;
    memset(&ign, 0, sizeof ign);
    mfu_status rc = mfu_store_find_run(st, name, &id, &ign);
    if (rc == MFU_E_UNKNOWN)
        rc = mfu_store_create_run(st, name, mfu_run_meta_get(rows), &id, e);
    else if (rc != MFU_OK && e)
        *e = ign;
    if (rc != MFU_OK)
        return rc;
    mfu_step *v = NULL;
    size_t n = 0;
    rc = mfu__posted_steps(rows, &v, NULL, &n, e); /* the rows with their per-rank observations */
    if (rc != MFU_OK)
        return rc;
    rc = mfu_store_append_steps(st, id, v, n, e);
    free(v);
    return rc;
}

void mfu__api_post_steps(mfu__server *s, const char *name, const char *body, size_t len,
                         mfu__reply *out)
{
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (mfu_store_check_name(name, &e) != MFU_OK) {
        mfu__api_error(out, 400,
                       "the run name must be 1 to 127 bytes, not start with '-', and hold no "
                       "control characters");
        return;
    }
    posted p;
    memset(&p, 0, sizeof p);
    mfu__sb_init(&p.lines, 0);
    mfu_run *rows = parse_steps(body, len, &p, out);
    mfu__sb_free(&p.lines);
    if (!rows) {
        free(p.lite);
        return;
    }
    mfu__srun *r = mfu__reg_get(&s->reg, name, true);
    if (!r) {
        mfu_run_free(rows);
        free(p.lite);
        mfu__api_error(out, 500, "out of memory");
        return;
    }
    pthread_rwlock_rdlock(&r->rw);
    bool followed = r->followed;
    pthread_rwlock_unlock(&r->rw);
    if (followed) {
        mfu__reg_put(&s->reg, r);
        mfu_run_free(rows);
        free(p.lite);
        mfu__api_error(
            out, 409, "run '%s' follows a log file on this server; post to another run name", name);
        return;
    }
    size_t n = p.n, first = 0;
    /* One POST of a run at a time: its rows reach memory and the store in the same order. */
    pthread_mutex_lock(&r->post_mu);
    pthread_rwlock_wrlock(&r->rw);
    r->live = true;
    pthread_rwlock_unlock(&r->rw);
    mfu_status st = mfu__srun_append(&s->reg, r, rows, p.lite, p.n, &first, &e);
    if (st == MFU_OK) {
        pthread_mutex_lock(&s->reg.store_mu);
        st = store_rows(s->reg.store, name, rows, &e);
        pthread_mutex_unlock(&s->reg.store_mu);
        if (st != MFU_OK) {
            mfu__srv_log(s, "run '%s': %zu posted step objects are served but not stored: %s", name,
                         n, e.message);
            mfu__api_error(out, 500, "the steps are served but could not be stored: %s", e.message);
        }
    } else if (st == MFU_E_LIMIT) {
        mfu__api_error(out, 413, "%s", e.message);
    } else {
        mfu__api_error(out, 500, "%s", e.message);
    }
    pthread_mutex_unlock(&r->post_mu);
    if (st == MFU_OK) {
        pthread_mutex_lock(&s->stop_mu);
        s->posted_steps_total += n;
        pthread_mutex_unlock(&s->stop_mu);
        mfu__sb b;
        mfu__sb_init(&b, 0);
        mfu__sb_printf(&b, "{\"accepted\":%zu}", n);
        reply_sb(out, 201, &b);
        if (first == 0)
            mfu__api_broadcast_run(s, r, false);
        mfu__api_broadcast_rows(s, r, first);
    }
    mfu__reg_put(&s->reg, r);
    mfu_run_free(rows);
    free(p.lite);
}
