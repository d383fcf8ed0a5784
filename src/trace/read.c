/*
 * read.c - one rank's Kineto trace, in one streaming pass: the document's tokens (jtok.c over
 * the ingest reader's decoded blocks, so gzip and zstd come for free) -> compact records, then
 * the attribution of GPU activities to ProfilerStep windows and each step's breakdown.
 *
 * What is kept while reading, and nothing else: per GPU activity its start, end, correlation
 * id, external id, name id and class (48 bytes); per runtime launch its correlation id, CPU
 * time and thread (a hash map and two arrays, about 48 bytes); the ProfilerStep windows; each
 * distinct kernel name once; per matmul op with recorded shapes its external id, thread, time
 * and FLOPs. Events are not kept, so the
 * memory follows the GPU activities, not the document (docs/internals/trace.md measures it).
 *
 * Event fields read: ph, cat, name, ts, dur, id and args.correlation, args["External id"],
 * args.device, args["Input Dims"]; top-level distributedInfo.rank / world_size and
 * deviceProperties[].id / name. Key order does not matter; unknown keys are skipped.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/reader.h"
#include "trace/internal.h"

/* ---- the trace object -------------------------------------------------------------------- */

#define DEVPROPS_MAX 64

struct mfu_trace {
    char *name;
    int64_t rank, world;
    char device[128];
    mfu_trace_step *steps;
    size_t nsteps;
    mfu_trace_kernel *kernels;
    size_t nkernels;
    char **names;      /* kernel names (the kernels point at them) */
    uint8_t *name_cls; /* each name's class as a kernel (mfu_trace_classify) */
    size_t nnames;
    mfu_trace_breakdown total;
    mfu_trace_counts counts;
};

const char *mfu_trace_name(const mfu_trace *t)
{
    return t && t->name ? t->name : "";
}
int64_t mfu_trace_rank(const mfu_trace *t)
{
    return t ? t->rank : -1;
}
int64_t mfu_trace_world_size(const mfu_trace *t)
{
    return t ? t->world : -1;
}
const char *mfu_trace_device(const mfu_trace *t)
{
    return t ? t->device : "";
}
size_t mfu_trace_step_count(const mfu_trace *t)
{
    return t ? t->nsteps : 0;
}
const mfu_trace_step *mfu_trace_step_at(const mfu_trace *t, size_t i)
{
    return t && i < t->nsteps ? &t->steps[i] : NULL;
}
mfu_trace_breakdown mfu_trace_total(const mfu_trace *t)
{
    mfu_trace_breakdown z;
    memset(&z, 0, sizeof z);
    return t ? t->total : z;
}
size_t mfu_trace_kernel_count(const mfu_trace *t)
{
    return t ? t->nkernels : 0;
}
const mfu_trace_kernel *mfu_trace_kernel_at(const mfu_trace *t, size_t i)
{
    return t && i < t->nkernels ? &t->kernels[i] : NULL;
}
mfu_trace_counts mfu_trace_get_counts(const mfu_trace *t)
{
    mfu_trace_counts z;
    memset(&z, 0, sizeof z);
    return t ? t->counts : z;
}

void mfu_trace_free(mfu_trace *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nnames; i++)
        free(t->names[i]);
    free(t->names);
    free(t->name_cls);
    free(t->steps);
    free(t->kernels);
    free(t->name);
    free(t);
}

/* ---- an int64 -> int64 hash map (open addressing, linear probing) ------------------------- */

#define EMPTY_KEY INT64_MIN

typedef struct i64map {
    int64_t *key, *val;
    size_t cap, n; /* cap a power of two, n < cap / 2 */
} i64map;

static size_t mix(int64_t k)
{
    uint64_t x = (uint64_t)k;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static bool map_grow(i64map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    int64_t *k = malloc(cap * sizeof *k), *v = malloc(cap * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return false;
    }
    for (size_t i = 0; i < cap; i++)
        k[i] = EMPTY_KEY;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->key[i] == EMPTY_KEY)
            continue;
        size_t h = mix(m->key[i]) & (cap - 1);
        while (k[h] != EMPTY_KEY)
            h = (h + 1) & (cap - 1);
        k[h] = m->key[i];
        v[h] = m->val[i];
    }
    free(m->key);
    free(m->val);
    m->key = k;
    m->val = v;
    m->cap = cap;
    return true;
}

/* Insert k -> v unless k is there. false when out of memory. */
static bool map_put_new(i64map *m, int64_t k, int64_t v)
{
    if (k == EMPTY_KEY)
        return true;
    if ((m->n + 1) * 2 > m->cap && !map_grow(m))
        return false;
    size_t h = mix(k) & (m->cap - 1);
    while (m->key[h] != EMPTY_KEY) {
        if (m->key[h] == k)
            return true;
        h = (h + 1) & (m->cap - 1);
    }
    m->key[h] = k;
    m->val[h] = v;
    m->n++;
    return true;
}

static bool map_get(const i64map *m, int64_t k, int64_t *v)
{
    if (!m->cap || k == EMPTY_KEY)
        return false;
    size_t h = mix(k) & (m->cap - 1);
    while (m->key[h] != EMPTY_KEY) {
        if (m->key[h] == k) {
            *v = m->val[h];
            return true;
        }
        h = (h + 1) & (m->cap - 1);
    }
    return false;
}

static void map_free(i64map *m)
{
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof *m);
}

/* ---- reading state ------------------------------------------------------------------------- */

typedef struct act {
    int64_t start_ns, end_ns;
    int64_t corr, ext; /* EMPTY_KEY when absent */
    uint32_t name;
    uint8_t cls;
    int32_t step; /* index into the windows; -1 none */
} act;

typedef struct window {
    int64_t step, ts, dur;
} window;

typedef struct shape {
    double flops;
    int64_t tid, ts, end; /* the op on the CPU timeline */
    uint32_t nk;          /* matmul activities of this op (its FLOPs are shared among them) */
} shape;

enum key {
    K_NONE = 0,
    K_OTHER,
    K_TRACEEVENTS,
    K_DISTINFO,
    K_DEVPROPS,
    K_RANK,
    K_WORLD,
    K_ID,
    K_TID,
    K_NAME,
    K_PH,
    K_CAT,
    K_TS,
    K_DUR,
    K_ARGS,
    K_CORR,
    K_EXT,
    K_DEVICE,
    K_DIMS
};

typedef struct rd {
    mfu_trace *t;
    const mfu_trace_options *opt;
    size_t max_acts;
    int top; /* 0, 'o' or 'a': the top-level value */
    int ed;  /* depth of event objects; -1 until the events array is found */
    bool events_found;
    unsigned char key_at[MFU_TRACE_MAX_DEPTH + 2];

    /* the event being read */
    bool in_ev, in_args, in_dims;
    char ph;
    char cat[40];
    char *ename; /* MFU_TRACE_MAX_STRING + 1 */
    size_t ename_len;
    bool has_ts, has_dur, has_id, has_corr, has_ext, has_dev;
    int64_t ts, dur, id, corr, ext, dev, tid;
    int64_t dims[MFU__TRACE_DIMS_INPUTS][MFU__TRACE_DIMS_RANK];
    int ndim[MFU__TRACE_DIMS_INPUTS];
    int ninputs;

    /* deviceProperties entry being read */
    int64_t dp_id;
    char dp_name[128];
    struct {
        int64_t id;
        char name[128];
    } dp[DEVPROPS_MAX];
    size_t ndp;
    int64_t first_dev; /* args.device of the first activity; -1 */

    /* what is kept */
    act *acts;
    size_t nacts, acap;
    window *win;
    size_t nwin, wcap;
    i64map launch;       /* correlation -> index into lts / ltid */
    int64_t *lts, *ltid; /* each launch's CPU time (ns) and thread */
    size_t nl, lcap;
    i64map opmap; /* external id -> index into shapes */
    shape *shapes;
    size_t nshapes, scap;
    /* kernel names: an open-addressing table of ids into t->names */
    uint32_t *ntab; /* id + 1; 0 empty */
    size_t ncap;
    size_t ncapnames;
    size_t name_bytes;
    size_t held_max;
    mfu__jtok j;
} rd;

static size_t held_now(const rd *r)
{
    return r->acap * sizeof(act) + r->wcap * sizeof(window) + r->launch.cap * 2 * sizeof(int64_t) +
           r->lcap * 2 * sizeof(int64_t) + r->opmap.cap * 2 * sizeof(int64_t) +
           r->scap * sizeof(shape) + r->ncap * sizeof(uint32_t) +
           r->ncapnames * (sizeof(char *) + 1) + r->name_bytes + mfu__jtok_bytes(&r->j) +
           MFU_TRACE_MAX_STRING + MFU__READER_CHUNK * 2;
}

static void note_held(rd *r)
{
    size_t h = held_now(r);
    if (h > r->held_max)
        r->held_max = h;
}

static mfu_status nomem(mfu_error *err)
{
    return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory reading the trace");
}

/* Grow *p (of *cap elements of size sz) to hold one more past n, up to max elements. */
static int grow(void **p, size_t *cap, size_t n, size_t sz, size_t max)
{
    if (n < *cap)
        return 0;
    if (n >= max)
        return 1; /* the limit */
    size_t c = *cap ? *cap * 2 : 256;
    if (c > max)
        c = max;
    void *q = realloc(*p, c * sz);
    if (!q)
        return 2;
    *p = q;
    *cap = c;
    return 0;
}

/* FNV-1a */
static uint32_t hash_str(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

static bool ntab_grow(rd *r)
{
    size_t cap = r->ncap ? r->ncap * 2 : 1024;
    uint32_t *tab = calloc(cap, sizeof *tab);
    if (!tab)
        return false;
    for (size_t i = 0; i < r->ncap; i++) {
        uint32_t id = r->ntab[i];
        if (!id)
            continue;
        const char *s = r->t->names[id - 1];
        size_t h = hash_str(s, strlen(s)) & (cap - 1);
        while (tab[h])
            h = (h + 1) & (cap - 1);
        tab[h] = id;
    }
    free(r->ntab);
    r->ntab = tab;
    r->ncap = cap;
    return true;
}

/* The id of kernel name s[0..n) (added when new). */
static mfu_status intern(rd *r, const char *s, size_t n, uint32_t *id, mfu_error *err)
{
    mfu_trace *t = r->t;
    if ((t->nnames + 1) * 2 > r->ncap && !ntab_grow(r))
        return nomem(err);
    size_t h = hash_str(s, n) & (r->ncap - 1);
    while (r->ntab[h]) {
        const char *x = t->names[r->ntab[h] - 1];
        if (strlen(x) == n && memcmp(x, s, n) == 0) {
            *id = r->ntab[h] - 1;
            return MFU_OK;
        }
        h = (h + 1) & (r->ncap - 1);
    }
    size_t capnames = r->ncapnames;
    int g = grow((void **)&t->names, &r->ncapnames, t->nnames, sizeof(char *), MFU_TRACE_MAX_NAMES);
    if (g == 0 && r->ncapnames != capnames) {
        uint8_t *c = realloc(t->name_cls, r->ncapnames);
        if (!c)
            return nomem(err);
        t->name_cls = c;
    }
    if (g == 1)
        return mfu__fail(err, MFU_E_LIMIT, 0,
                         "more than %ld distinct kernel names (MFU_TRACE_MAX_NAMES): not a "
                         "profiler trace of a training loop?",
                         (long)MFU_TRACE_MAX_NAMES);
    if (g == 2)
        return nomem(err);
    char *c = malloc(n + 1);
    if (!c)
        return nomem(err);
    memcpy(c, s, n);
    c[n] = '\0';
    t->names[t->nnames] = c;
    t->name_cls[t->nnames] = (uint8_t)mfu_trace_classify("kernel", c);
    r->name_bytes += n + 1;
    r->ntab[h] = (uint32_t)(++t->nnames);
    *id = (uint32_t)(t->nnames - 1);
    return MFU_OK;
}

static enum key key_of(const char *k, size_t n)
{
    switch (k[0]) {
    case 'p': return n == 2 && k[1] == 'h' ? K_PH : K_OTHER;
    case 'c':
        if (n == 3 && strcmp(k, "cat") == 0)
            return K_CAT;
        return n == 11 && strcmp(k, "correlation") == 0 ? K_CORR : K_OTHER;
    case 'n': return n == 4 && strcmp(k, "name") == 0 ? K_NAME : K_OTHER;
    case 't':
        if (n == 2 && k[1] == 's')
            return K_TS;
        if (n == 3 && k[1] == 'i' && k[2] == 'd')
            return K_TID;
        return n == 11 && strcmp(k, "traceEvents") == 0 ? K_TRACEEVENTS : K_OTHER;
    case 'd':
        if (n == 3 && strcmp(k, "dur") == 0)
            return K_DUR;
        if (n == 6 && strcmp(k, "device") == 0)
            return K_DEVICE;
        if (n == 15 && strcmp(k, "distributedInfo") == 0)
            return K_DISTINFO;
        return n == 16 && strcmp(k, "deviceProperties") == 0 ? K_DEVPROPS : K_OTHER;
    case 'a': return n == 4 && strcmp(k, "args") == 0 ? K_ARGS : K_OTHER;
    case 'i': return n == 2 && k[1] == 'd' ? K_ID : K_OTHER;
    case 'r': return n == 4 && strcmp(k, "rank") == 0 ? K_RANK : K_OTHER;
    case 'w': return n == 10 && strcmp(k, "world_size") == 0 ? K_WORLD : K_OTHER;
    case 'E': return n == 11 && strcmp(k, "External id") == 0 ? K_EXT : K_OTHER;
    case 'I': return n == 10 && strcmp(k, "Input Dims") == 0 ? K_DIMS : K_OTHER;
    default: return K_OTHER;
    }
}

static void ev_reset(rd *r)
{
    r->in_args = r->in_dims = false;
    r->ph = 0;
    r->cat[0] = '\0';
    r->ename_len = 0;
    r->ename[0] = '\0';
    r->has_ts = r->has_dur = r->has_id = r->has_corr = r->has_ext = r->has_dev = false;
    r->tid = 0;
    r->ninputs = 0;
}

static bool cat_is(const rd *r, const char *c)
{
    return strcmp(r->cat, c) == 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* "ProfilerStep#123" (blanks around '#' allowed) -> 123. */
static bool profiler_step(const char *name, int64_t *n)
{
    if (strncmp(name, "ProfilerStep", 12) != 0)
        return false;
    const char *p = name + 12;
    while (*p == ' ')
        p++;
    if (*p++ != '#')
        return false;
    while (*p == ' ')
        p++;
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || errno || v < 0)
        return false;
    *n = v;
    return true;
}

static mfu_status limit(const char *what, long max, const char *named, mfu_error *err)
{
    return mfu__fail(err, MFU_E_LIMIT, 0,
                     "more than %ld %s in one trace (%s); split the profile into shorter "
                     "windows (fewer active steps in torch.profiler.schedule)",
                     max, what, named);
}

/* A runtime launch (or an ac2g flow start) of correlation id corr at the event's time and
 * thread; the first one seen of an id wins. */
static mfu_status add_launch(rd *r, int64_t corr, mfu_error *err)
{
    int64_t have;
    if (map_get(&r->launch, corr, &have))
        return MFU_OK;
    if (r->nl >= (size_t)MFU_TRACE_MAX_LAUNCHES)
        return limit("runtime launches", MFU_TRACE_MAX_LAUNCHES, "MFU_TRACE_MAX_LAUNCHES", err);
    if (r->nl == r->lcap) {
        size_t cap = r->lcap ? r->lcap * 2 : 1024;
        int64_t *a = realloc(r->lts, cap * sizeof *a);
        if (!a)
            return nomem(err);
        r->lts = a;
        int64_t *b = realloc(r->ltid, cap * sizeof *b);
        if (!b)
            return nomem(err);
        r->ltid = b;
        r->lcap = cap;
    }
    if (!map_put_new(&r->launch, corr, (int64_t)r->nl))
        return nomem(err);
    r->lts[r->nl] = r->ts;
    r->ltid[r->nl] = r->tid;
    r->nl++;
    note_held(r);
    return MFU_OK;
}

/* The CPU time of the launch of correlation id corr. */
static bool launch_ts(const rd *r, int64_t corr, int64_t *ts)
{
    int64_t i;
    if (corr == EMPTY_KEY || !map_get(&r->launch, corr, &i))
        return false;
    *ts = r->lts[i];
    return true;
}

/* One complete event. */
static mfu_status event_done(rd *r, mfu_error *err)
{
    mfu_trace *t = r->t;
    t->counts.events++;
    if (r->ph == 'X') {
        bool gpu = cat_is(r, "kernel") || cat_is(r, "gpu_memcpy") || cat_is(r, "gpu_memset");
        if (gpu) {
            if (!r->has_ts || !r->has_dur || r->dur < 0)
                return MFU_OK; /* an activity without a time cannot be placed */
            int g = grow((void **)&r->acts, &r->acap, r->nacts, sizeof(act), r->max_acts);
            if (g == 1)
                return limit("GPU activities", (long)r->max_acts, "MFU_TRACE_MAX_ACTIVITIES", err);
            if (g == 2)
                return nomem(err);
            act *a = &r->acts[r->nacts];
            a->start_ns = r->ts;
            a->end_ns = r->ts + r->dur;
            a->corr = r->has_corr ? r->corr : EMPTY_KEY;
            a->ext = r->has_ext ? r->ext : EMPTY_KEY;
            a->step = -1;
            mfu_status st = intern(r, r->ename, r->ename_len, &a->name, err);
            if (st != MFU_OK)
                return st;
            /* the name's class, classified once per name; copies by their category */
            a->cls = cat_is(r, "kernel") ? t->name_cls[a->name] : MFU_TRACE_CLASS_MEMCPY;
            if (r->first_dev < 0 && r->has_dev)
                r->first_dev = r->dev;
            r->nacts++;
            t->counts.activities++;
            note_held(r);
            return MFU_OK;
        }
        int64_t n;
        if (!cat_is(r, "gpu_user_annotation") && profiler_step(r->ename, &n)) {
            if (!r->has_ts || !r->has_dur || r->dur < 0)
                return MFU_OK;
            int g = grow((void **)&r->win, &r->wcap, r->nwin, sizeof(window), MFU_TRACE_MAX_STEPS);
            if (g == 1)
                return limit("ProfilerStep windows", MFU_TRACE_MAX_STEPS, "MFU_TRACE_MAX_STEPS",
                             err);
            if (g == 2)
                return nomem(err);
            r->win[r->nwin++] = (window){n, r->ts, r->dur};
            return MFU_OK;
        }
        if ((ends_with(r->cat, "_runtime") || ends_with(r->cat, "_driver")) && r->has_corr &&
            r->has_ts) {
            return add_launch(r, r->corr, err);
        }
        if (cat_is(r, "cpu_op") && r->has_ext && r->ninputs > 0 &&
            mfu__trace_is_matmul_op(r->ename)) {
            int n_in = r->ninputs < MFU__TRACE_DIMS_INPUTS ? r->ninputs : MFU__TRACE_DIMS_INPUTS;
            double f = mfu__trace_matmul_flops(
                r->ename, (const int64_t(*)[MFU__TRACE_DIMS_RANK])r->dims, r->ndim, n_in);
            if (!isfinite(f))
                return MFU_OK;
            int g = grow((void **)&r->shapes, &r->scap, r->nshapes, sizeof(shape),
                         (size_t)MFU_TRACE_MAX_ACTIVITIES);
            if (g == 1)
                return limit("matmul ops with shapes", MFU_TRACE_MAX_ACTIVITIES,
                             "MFU_TRACE_MAX_ACTIVITIES", err);
            if (g == 2)
                return nomem(err);
            r->shapes[r->nshapes] = (shape){f, r->tid, r->ts, r->ts + (r->has_dur ? r->dur : 0), 0};
            if (!map_put_new(&r->opmap, r->ext, (int64_t)r->nshapes))
                return nomem(err);
            r->nshapes++;
            t->counts.shaped_ops++;
            note_held(r);
        }
        return MFU_OK;
    }
    if (r->ph == 's' && cat_is(r, "ac2g") && r->has_id && r->has_ts) {
        return add_launch(r, r->id, err);
    }
    return MFU_OK;
}

static bool num_or_str(const mfu__jt *t)
{
    return t->kind == MFU__JT_NUM || t->kind == MFU__JT_STR;
}

/* The tokenizer's consumer. */
static mfu_status on_token(void *ctx, const mfu__jt *tk, mfu_error *err)
{
    rd *r = ctx;
    int d = tk->depth;
    if (tk->cut)
        r->t->counts.cut_strings++;
    if (d > MFU_TRACE_MAX_DEPTH)
        return MFU_OK;
    if (tk->kind == MFU__JT_KEY) {
        r->key_at[d] = (unsigned char)key_of(tk->text, tk->len);
        return MFU_OK;
    }
    if (tk->kind == MFU__JT_OBJ || tk->kind == MFU__JT_ARR)
        r->key_at[d + 1] = K_NONE; /* array elements have no key */
    int key = d > 0 ? r->key_at[d] : K_NONE;

    if (d == 0) {
        if (tk->kind == MFU__JT_OBJ)
            r->top = 'o';
        else if (tk->kind == MFU__JT_ARR) {
            r->top = 'a';
            r->ed = 1;
            r->events_found = true;
        } else if (tk->kind != MFU__JT_END_OBJ && tk->kind != MFU__JT_END_ARR) {
            return mfu__fail(err, MFU_E_PARSE, tk->line,
                             "not a Chrome trace: the JSON is a single %s; expected an object "
                             "with \"traceEvents\" (a PyTorch profiler trace)",
                             tk->kind == MFU__JT_STR ? "string" : "value");
        }
        return MFU_OK;
    }

    /* the top object's keys */
    if (r->top == 'o' && d == 1) {
        if (key == K_TRACEEVENTS && tk->kind != MFU__JT_END_ARR && tk->kind != MFU__JT_END_OBJ) {
            if (tk->kind != MFU__JT_ARR)
                return mfu__fail(err, MFU_E_PARSE, tk->line,
                                 "\"traceEvents\" is not an array; expected [ {event}, ... ]");
            r->ed = 2;
            r->events_found = true;
        }
        return MFU_OK;
    }
    if (r->top == 'o' && r->key_at[1] == K_DISTINFO && d == 2 && !r->in_ev) {
        int64_t v;
        if (num_or_str(tk) && mfu__jt_int(tk->text, &v) && v >= 0) {
            if (key == K_RANK)
                r->t->rank = v;
            else if (key == K_WORLD)
                r->t->world = v;
        }
        return MFU_OK;
    }
    if (r->top == 'o' && r->key_at[1] == K_DEVPROPS && !r->in_ev) {
        if (d == 2 && tk->kind == MFU__JT_OBJ) {
            r->dp_id = -1;
            r->dp_name[0] = '\0';
        } else if (d == 3 && key == K_ID && tk->kind == MFU__JT_NUM) {
            mfu__jt_int(tk->text, &r->dp_id);
        } else if (d == 3 && key == K_NAME && tk->kind == MFU__JT_STR) {
            mfu__strlcpy(r->dp_name, tk->text, sizeof r->dp_name);
        } else if (d == 2 && tk->kind == MFU__JT_END_OBJ && r->ndp < DEVPROPS_MAX &&
                   r->dp_name[0]) {
            r->dp[r->ndp].id = r->dp_id;
            mfu__strlcpy(r->dp[r->ndp].name, r->dp_name, sizeof r->dp[r->ndp].name);
            r->ndp++;
        }
        return MFU_OK;
    }

    /* events */
    if (!r->events_found || d < r->ed)
        return MFU_OK;
    if (d == r->ed) {
        if (tk->kind == MFU__JT_OBJ) {
            r->in_ev = true;
            ev_reset(r);
        } else if (tk->kind == MFU__JT_END_OBJ && r->in_ev) {
            r->in_ev = false;
            return event_done(r, err);
        }
        return MFU_OK;
    }
    if (!r->in_ev)
        return MFU_OK;
    if (d == r->ed + 1) {
        switch (key) {
        case K_PH:
            if (tk->kind == MFU__JT_STR)
                r->ph = tk->text[0];
            break;
        case K_CAT:
            if (tk->kind == MFU__JT_STR)
                mfu__strlcpy(r->cat, tk->text, sizeof r->cat);
            break;
        case K_NAME:
            if (tk->kind == MFU__JT_STR) {
                memcpy(r->ename, tk->text, tk->len + 1);
                r->ename_len = tk->len;
            }
            break;
        case K_TS: r->has_ts = num_or_str(tk) && mfu__jt_us_to_ns(tk->text, &r->ts); break;
        case K_DUR: r->has_dur = num_or_str(tk) && mfu__jt_us_to_ns(tk->text, &r->dur); break;
        case K_ID: r->has_id = num_or_str(tk) && mfu__jt_int(tk->text, &r->id); break;
        case K_TID:
            /* a thread id, or a name ("PyTorch Profiler"): only equality matters */
            if (tk->kind == MFU__JT_NUM && mfu__jt_int(tk->text, &r->tid))
                break;
            r->tid =
                tk->kind == MFU__JT_STR ? (int64_t)hash_str(tk->text, tk->len) - (1LL << 40) : 0;
            break;
        case K_ARGS:
            if (tk->kind == MFU__JT_OBJ)
                r->in_args = true;
            else if (tk->kind == MFU__JT_END_OBJ)
                r->in_args = false;
            break;
        default: break;
        }
        return MFU_OK;
    }
    if (!r->in_args)
        return MFU_OK;
    if (d == r->ed + 2) {
        switch (key) {
        case K_CORR: r->has_corr = num_or_str(tk) && mfu__jt_int(tk->text, &r->corr); break;
        case K_EXT: r->has_ext = num_or_str(tk) && mfu__jt_int(tk->text, &r->ext); break;
        case K_DEVICE: r->has_dev = num_or_str(tk) && mfu__jt_int(tk->text, &r->dev); break;
        case K_DIMS:
            if (tk->kind == MFU__JT_ARR) {
                r->in_dims = true;
                r->ninputs = 0;
            } else if (tk->kind == MFU__JT_END_ARR) {
                r->in_dims = false;
            }
            break;
        default: break;
        }
        return MFU_OK;
    }
    if (!r->in_dims)
        return MFU_OK;
    /* "Input Dims": [[m, k], [k, n], [], ...] */
    if (d == r->ed + 3) {
        if (tk->kind == MFU__JT_ARR || tk->kind == MFU__JT_NUM) {
            if (r->ninputs < MFU__TRACE_DIMS_INPUTS)
                r->ndim[r->ninputs] = tk->kind == MFU__JT_ARR ? 0 : -1;
            r->ninputs++;
        }
        return MFU_OK;
    }
    int in = r->ninputs - 1;
    if (in < 0 || in >= MFU__TRACE_DIMS_INPUTS || r->ndim[in] < 0)
        return MFU_OK;
    int64_t v;
    if (d == r->ed + 4 && tk->kind == MFU__JT_NUM && r->ndim[in] < MFU__TRACE_DIMS_RANK &&
        mfu__jt_int(tk->text, &v))
        r->dims[in][r->ndim[in]++] = v;
    else if (tk->kind != MFU__JT_END_ARR)
        r->ndim[in] = -1; /* a list of tensors, a rank too high: no shape */
    return MFU_OK;
}

/* ---- after the last byte: steps, attribution, breakdowns, kernels --------------------------- */

static int win_cmp(const void *a, const void *b)
{
    const window *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

static int step_cmp(const void *a, const void *b)
{
    const mfu_trace_step *x = a, *y = b;
    if (x->step != y->step)
        return (x->step > y->step) - (x->step < y->step);
    return (x->cpu_start_s > y->cpu_start_s) - (x->cpu_start_s < y->cpu_start_s);
}

static int kern_cmp(const void *a, const void *b)
{
    const mfu_trace_kernel *x = a, *y = b;
    if (x->time_s != y->time_s)
        return x->time_s < y->time_s ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* The window (index) whose [ts, ts + dur) holds CPU time ts, latest start first; -1 none. */
static int32_t window_of(const window *w, size_t n, int64_t ts)
{
    size_t lo = 0, hi = n; /* first window starting after ts */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w[mid].ts <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo, tries = 0; k > 0 && tries < 8; k--, tries++)
        if (ts < w[k - 1].ts + w[k - 1].dur)
            return (int32_t)(k - 1);
    return -1;
}

static int i64_cmp(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Place the activities without a launch by their start in the steps' GPU spans (see
 * finish()); count[] and the counters follow. Out of memory leaves them unplaced. */
static void place_by_gpu_time(rd *r, size_t *count)
{
    mfu_trace *t = r->t;
    int64_t *lo = malloc(r->nwin * sizeof *lo), *hi = malloc(r->nwin * sizeof *hi);
    int64_t *ord = malloc(2 * r->nwin * sizeof *ord); /* (gpu start, window) pairs */
    if (!lo || !hi || !ord) {
        free(lo);
        free(hi);
        free(ord);
        return;
    }
    for (size_t w = 0; w < r->nwin; w++) {
        lo[w] = INT64_MAX;
        hi[w] = INT64_MIN;
    }
    for (size_t i = 0; i < r->nacts; i++) {
        const act *a = &r->acts[i];
        if (a->step < 0)
            continue;
        if (a->start_ns < lo[a->step])
            lo[a->step] = a->start_ns;
        if (a->end_ns > hi[a->step])
            hi[a->step] = a->end_ns;
    }
    size_t k = 0;
    for (size_t w = 0; w < r->nwin; w++)
        if (count[w] > 0) {
            ord[2 * k] = lo[w];
            ord[2 * k + 1] = (int64_t)w;
            k++;
        }
    qsort(ord, k, 2 * sizeof *ord, i64_cmp);
    for (size_t i = 0; i < r->nacts; i++) {
        act *a = &r->acts[i];
        if (a->step >= 0)
            continue;
        int64_t ts;
        if (launch_ts(r, a->corr, &ts))
            continue;              /* launched outside every window: stays out */
        size_t lo_i = 0, hi_i = k; /* last span starting at or before the activity */
        while (lo_i < hi_i) {
            size_t mid = lo_i + (hi_i - lo_i) / 2;
            if (ord[2 * mid] <= a->start_ns)
                lo_i = mid + 1;
            else
                hi_i = mid;
        }
        if (lo_i == 0)
            continue;
        size_t j = lo_i - 1;
        int64_t w = ord[2 * j + 1];
        int64_t end = j + 1 < k ? ord[2 * (j + 1)] : hi[w];
        if (a->start_ns >= end)
            continue;
        a->step = (int32_t)w;
        count[w]++;
        t->counts.attributed++;
        t->counts.no_launch--;
        t->counts.placed_by_time++;
    }
    free(lo);
    free(hi);
    free(ord);
}

/* A matmul op on the CPU timeline, for finding the one that made a launch. */
typedef struct opt {
    int64_t tid, ts, end, idx;
} opt;

static int opt_cmp(const void *a, const void *b)
{
    const opt *x = a, *y = b;
    if (x->tid != y->tid)
        return (x->tid > y->tid) - (x->tid < y->tid);
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The matmul op (index into shapes) that launched activity a: the op whose External id the
 * activity carries (Kineto since 2022), else the op running on the launching thread when the
 * launch was made (older traces give kernels their correlation id as External id); -1 none.
 * ops holds the shapes' ops ordered by (thread, start). */
static int64_t op_of(const rd *r, const act *a, const opt *ops)
{
    int64_t k;
    if (!r->nshapes)
        return -1;
    if (map_get(&r->opmap, a->ext, &k))
        return k;
    int64_t li;
    if (a->corr == EMPTY_KEY || !map_get(&r->launch, a->corr, &li))
        return -1;
    int64_t tid = r->ltid[li], ts = r->lts[li];
    size_t lo = 0, hi = r->nshapes; /* the first op after (tid, ts) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const opt *s = &ops[mid];
        if (s->tid < tid || (s->tid == tid && s->ts <= ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    const opt *s = &ops[lo - 1];
    return s->tid == tid && ts < s->end ? s->idx : -1;
}

static mfu_status finish(rd *r, mfu_error *err, size_t *held)
{
    size_t held_extra = 0;
    mfu_trace *t = r->t;
    const char *nm = t->name ? t->name : "the trace";
    if (!r->events_found)
        return mfu__fail(err, MFU_E_PARSE, 0,
                         "not a Chrome trace: %s is a JSON object without a \"traceEvents\" "
                         "array; expected a PyTorch profiler (Kineto) trace, as "
                         "prof.export_chrome_trace() or tensorboard_trace_handler writes it",
                         nm);
    if (t->counts.events == 0)
        return mfu__fail(err, MFU_E_EMPTY, 0,
                         "no trace event: %s has an empty \"traceEvents\" array; expected the "
                         "events of at least one profiled step",
                         nm);
    if (r->nacts == 0)
        return mfu__fail(err, MFU_E_EMPTY, 0,
                         "CPU-only trace: %s has %zu events and %zu ProfilerStep windows but no "
                         "GPU activity (kernel, gpu_memcpy, gpu_memset); profile on the GPU "
                         "with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]",
                         nm, t->counts.events, r->nwin);
    if (r->nwin == 0)
        return mfu__fail(err, MFU_E_EMPTY, 0,
                         "no ProfilerStep#N window in %s (%zu events, %zu GPU activities): "
                         "expected the step annotations that torch.profiler.profile(schedule="
                         "...) writes when the loop calls prof.step() once per step",
                         nm, t->counts.events, r->nacts);
    qsort(r->win, r->nwin, sizeof *r->win, win_cmp);
    size_t *count = calloc(r->nwin + 1, sizeof *count);
    if (!count)
        return nomem(err);
    for (size_t i = 0; i < r->nacts; i++) {
        act *a = &r->acts[i];
        int64_t ts;
        if (!launch_ts(r, a->corr, &ts)) {
            t->counts.no_launch++;
            continue;
        }
        a->step = window_of(r->win, r->nwin, ts);
        if (a->step < 0) {
            t->counts.outside++;
            continue;
        }
        count[a->step]++;
        t->counts.attributed++;
    }
    /* activities without a launch event (CUDA graphs, launches Kineto left out): the step in
     * whose GPU span they start, a span running from the first launched activity's start to
     * the next step's (the last step's: to its last launched activity's end) */
    if (t->counts.no_launch > 0 && t->counts.attributed > 0 && !(r->opt && r->opt->launched_only))
        place_by_gpu_time(r, count);
    if (t->counts.attributed == 0) {
        free(count);
        return mfu__fail(err, MFU_E_EMPTY, 0,
                         "none of the %zu GPU activities of %s was launched inside a "
                         "ProfilerStep window (%zu have no launch event with their correlation "
                         "id, %zu were launched outside the %zu windows); expected a trace "
                         "recorded with prof.step() around the profiled steps",
                         r->nacts, nm, t->counts.no_launch, t->counts.outside, r->nwin);
    }
    /* each step's span from its own activities; the parts of every span, and of the whole
     * profiled window, from one timeline of all the step activities of the rank: a time two
     * steps' spans share (a late kernel of one beside the first of the next) is what the GPU
     * ran then, and idle is the GPU idle */
    size_t na = t->counts.attributed;
    mfu__tspan *sp = malloc(na * sizeof *sp);
    mfu__sweep_pt *pt = malloc(2 * na * sizeof *pt);
    mfu__seg *seg = malloc(2 * na * sizeof *seg);
    int64_t *lo = malloc(r->nwin * sizeof *lo), *hi = malloc(r->nwin * sizeof *hi);
    t->steps = calloc(r->nwin, sizeof *t->steps);
    if (!sp || !pt || !seg || !lo || !hi || !t->steps) {
        free(count);
        free(sp);
        free(pt);
        free(seg);
        free(lo);
        free(hi);
        return nomem(err);
    }
    for (size_t w = 0; w < r->nwin; w++) {
        lo[w] = INT64_MAX;
        hi[w] = INT64_MIN;
    }
    size_t nsp = 0;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (size_t i = 0; i < r->nacts; i++) {
        const act *a = &r->acts[i];
        if (a->step < 0)
            continue;
        sp[nsp++] = (mfu__tspan){a->start_ns, a->end_ns, a->cls};
        if (a->start_ns < lo[a->step])
            lo[a->step] = a->start_ns;
        if (a->end_ns > hi[a->step])
            hi[a->step] = a->end_ns;
        if (a->start_ns < first)
            first = a->start_ns;
        if (a->end_ns > last)
            last = a->end_ns;
    }
    size_t nseg = mfu__trace_timeline(sp, nsp, pt, seg);
    held_extra = na * (sizeof *sp + 2 * sizeof *pt + 2 * sizeof *seg);
    t->nsteps = r->nwin;
    for (size_t w = 0; w < r->nwin; w++) {
        mfu_trace_step *s = &t->steps[w];
        s->step = r->win[w].step;
        s->cpu_start_s = (double)r->win[w].ts * 1e-9;
        s->cpu_s = (double)r->win[w].dur * 1e-9;
        s->activities = count[w];
        s->gpu_start_s = s->gpu_offset_s = NAN;
        if (count[w] == 0)
            continue;
        mfu__trace_window(seg, nseg, lo[w], hi[w], &s->breakdown);
        s->gpu_start_s = (double)lo[w] * 1e-9;
        s->gpu_offset_s = (double)(lo[w] - first) * 1e-9;
        s->step_time_s = s->breakdown.span_s;
    }
    /* each step's interval: to the next step's first activity in GPU time order */
    int64_t *ord = malloc(2 * r->nwin * sizeof *ord); /* (gpu start, window) pairs */
    if (!ord) {
        free(sp);
        free(pt);
        free(seg);
        free(lo);
        free(hi);
        free(count);
        return nomem(err);
    }
    size_t no = 0;
    for (size_t w = 0; w < r->nwin; w++)
        if (count[w] > 0) {
            ord[2 * no] = lo[w];
            ord[2 * no + 1] = (int64_t)w;
            no++;
        }
    qsort(ord, no, 2 * sizeof *ord, i64_cmp);
    for (size_t j = 0; j < no; j++) {
        mfu_trace_step *s = &t->steps[ord[2 * j + 1]];
        size_t k = j + 1;
        while (k < no && ord[2 * k] == ord[2 * j])
            k++;
        s->interval_s = k < no ? (double)(ord[2 * k] - ord[2 * j]) * 1e-9 : s->step_time_s;
    }
    free(ord);
    mfu__trace_window(seg, nseg, first, last, &t->total);
    free(sp);
    free(pt);
    free(seg);
    free(lo);
    free(hi);
    free(count);
    qsort(t->steps, t->nsteps, sizeof *t->steps, step_cmp);

    /* kernels: per name, over the attributed activities; a matmul op's FLOPs are shared by
     * the matmul activities it launched */
    t->kernels = calloc(t->nnames ? t->nnames : 1, sizeof *t->kernels);
    if (!t->kernels)
        return nomem(err);
    opt *opi = NULL; /* the shapes' ops by (thread, start), for ops found by time */
    if (r->nshapes) {
        opi = malloc(r->nshapes * sizeof *opi);
        if (!opi)
            return nomem(err);
        for (size_t i = 0; i < r->nshapes; i++)
            opi[i] = (opt){r->shapes[i].tid, r->shapes[i].ts, r->shapes[i].end, (int64_t)i};
        qsort(opi, r->nshapes, sizeof *opi, opt_cmp);
    }
    for (size_t i = 0; i < r->nacts; i++) {
        const act *a = &r->acts[i];
        int64_t k = a->step >= 0 && a->cls == MFU_TRACE_CLASS_MATMUL ? op_of(r, a, opi) : -1;
        if (k >= 0)
            r->shapes[k].nk++;
    }
    for (size_t i = 0; i < t->nnames; i++) {
        t->kernels[i].name = t->names[i];
        t->kernels[i].flops = NAN;
        t->kernels[i].flops_per_s = NAN;
    }
    for (size_t i = 0; i < r->nacts; i++) {
        const act *a = &r->acts[i];
        if (a->step < 0)
            continue;
        mfu_trace_kernel *k = &t->kernels[a->name];
        double dur = (double)(a->end_ns - a->start_ns) * 1e-9;
        k->cls = (mfu_trace_class)a->cls;
        k->count++;
        k->time_s += dur;
        int64_t s = a->cls == MFU_TRACE_CLASS_MATMUL ? op_of(r, a, opi) : -1;
        if (s >= 0) {
            double f = r->shapes[s].flops / r->shapes[s].nk;
            k->flops = isfinite(k->flops) ? k->flops + f : f;
            k->flops_time_s += dur;
        }
    }
    free(opi);
    size_t nk = 0;
    for (size_t i = 0; i < t->nnames; i++) {
        mfu_trace_kernel *k = &t->kernels[i];
        if (k->count == 0)
            continue;
        if (isfinite(k->flops) && k->flops_time_s > 0)
            k->flops_per_s = k->flops / k->flops_time_s;
        t->kernels[nk++] = *k;
    }
    t->nkernels = nk;
    qsort(t->kernels, nk, sizeof *t->kernels, kern_cmp);

    /* the device of the activities */
    for (size_t i = 0; i < r->ndp; i++)
        if (r->first_dev < 0 ? i == 0 : r->dp[i].id == r->first_dev) {
            mfu__strlcpy(t->device, r->dp[i].name, sizeof t->device);
            break;
        }
    t->counts.launches = r->launch.n;
    *held = held_now(r) + held_extra;
    return MFU_OK;
}

static void rd_free(rd *r)
{
    free(r->acts);
    free(r->win);
    free(r->shapes);
    free(r->ntab);
    free(r->ename);
    map_free(&r->launch);
    free(r->lts);
    free(r->ltid);
    map_free(&r->opmap);
    mfu__jtok_free(&r->j);
}

/* Read from a reader made by the caller. */
static mfu_status read_all(mfu__reader *reader, const char *name, const mfu_trace_options *opts,
                           mfu_trace **out, mfu_error *err)
{
    *out = NULL;
    mfu_trace *t = calloc(1, sizeof *t);
    rd *r = calloc(1, sizeof *r);
    if (!t || !r || !reader) {
        free(t);
        free(r);
        return nomem(err);
    }
    t->rank = t->world = -1;
    t->name = mfu__strdup(name ? name : "");
    r->t = t;
    r->opt = opts;
    r->max_acts = opts && opts->max_activities ? opts->max_activities : MFU_TRACE_MAX_ACTIVITIES;
    if (r->max_acts > (size_t)MFU_TRACE_MAX_ACTIVITIES)
        r->max_acts = MFU_TRACE_MAX_ACTIVITIES;
    r->ed = -1;
    r->first_dev = -1;
    r->ename = malloc(MFU_TRACE_MAX_STRING + 1);
    mfu_status st = MFU_OK;
    if (!t->name || !r->ename || !mfu__jtok_init(&r->j, on_token, r))
        st = nomem(err);
    note_held(r);
    while (st == MFU_OK) {
        const char *p;
        size_t n;
        bool eof;
        st = mfu__reader_block(reader, &p, &n, &eof, err);
        if (st == MFU_E_PARSE) /* the reader's binary-data check speaks of logs */
            st = mfu__fail(err, MFU_E_PARSE, 0,
                           "binary data, not JSON: expected a PyTorch profiler trace (.json, "
                           ".json.gz)");
        if (st != MFU_OK || eof)
            break;
        t->counts.bytes += n;
        st = mfu__jtok_feed(&r->j, p, n, err);
    }
    if (st == MFU_OK)
        st = mfu__jtok_end(&r->j, err);
    size_t held_end = 0;
    if (st == MFU_OK)
        st = finish(r, err, &held_end);
    t->counts.held_bytes = held_end > r->held_max ? held_end : r->held_max;
    rd_free(r);
    free(r);
    if (st != MFU_OK) {
        mfu_trace_free(t);
        return st;
    }
    *out = t;
    return MFU_OK;
}

mfu_status mfu_trace_read_file(FILE *f, const char *name, const mfu_trace_options *opts,
                               mfu_trace **out, mfu_error *err)
{
    if (!out || !f)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_trace_read_file: NULL argument");
    mfu__reader *reader = mfu__reader_file(f, 1);
    mfu_status st = read_all(reader, name, opts, out, err);
    mfu__reader_free(reader);
    return st;
}

mfu_status mfu_trace_read_mem(const void *data, size_t n, const char *name,
                              const mfu_trace_options *opts, mfu_trace **out, mfu_error *err)
{
    if (!out || (!data && n))
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_trace_read_mem: NULL argument");
    mfu__reader *reader = mfu__reader_mem(data ? data : "", n, 1);
    mfu_status st = read_all(reader, name, opts, out, err);
    mfu__reader_free(reader);
    return st;
}

mfu_status mfu_trace_read_path(const char *path, const mfu_trace_options *opts, mfu_trace **out,
                               mfu_error *err)
{
    if (!out || !path)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_trace_read_path: NULL argument");
    *out = NULL;
    bool std_in = strcmp(path, "-") == 0;
    FILE *f = std_in ? stdin : fopen(path, "rb");
    if (!f)
        return mfu__fail(err, MFU_E_IO, 0, "cannot open it: %s", strerror(errno));
    mfu_status st = mfu_trace_read_file(f, std_in ? "stdin" : path, opts, out, err);
    if (!std_in)
        fclose(f);
    return st;
}
