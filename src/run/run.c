/*
 * run.c - the columnar table of step records (mfu/run.h).
 *
 * Each field is its own growable array so that analysis can walk one series without touching
 * the others. Columns grow together by doubling, up to the run's row limit; a failed growth
 * leaves every column as it was (all reallocations succeed before any is committed).
 *
 * Columns are allocated lazily: an array stays NULL while every row holds its absent value
 * (NaN for the doubles, MFU_SCOPE_UNKNOWN for scopes, 0 for flags, -1 for rank, recompute and
 * dtype) and is created, filled with that value for the rows before, at the first row that
 * holds something else. A log prints 5-10 of the 21 double fields, so most columns are never
 * written: at 400k rows a JSON-lines log of 8 fields fills 26 MB of columns instead of 76 MB,
 * and the fresh pages the kernel zeroes were a quarter of the ingest time
 * (docs/internals/ingest.md "Performance"). Only the step numbers are always allocated.
 */
#define _DEFAULT_SOURCE /* madvise */
#include "mfu/run.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "run/step.h"
#include "util/pages.h"
#include "util/util.h"

/* The aux arrays: one per member of mfu_step that is neither the step number nor a double
 * (mfu/step_fields.h), each with its element type, the value every absent row holds, how a
 * step's value is kept (a code as int8_t: -1 for anything outside 0..127) and read back, and
 * how a repeat of the step merges into it (flags: OR-ed; the others: filled when absent). */
#define AUX_IF_STEP(x)
#define AUX_IF_DOUBLE(x)
#define AUX_IF_SCOPE(x) x
#define AUX_IF_FLAGS(x) x
#define AUX_IF_RANK(x) x
#define AUX_IF_CODE(x) x
#define AUX_IF_BIT(x)
#define AUX_IF_NANBIT(x)
#define AUX_TYPE_SCOPE uint8_t
#define AUX_TYPE_FLAGS uint32_t
#define AUX_TYPE_RANK int32_t
#define AUX_TYPE_CODE int8_t
#define AUX_ABSENT_SCOPE 0
#define AUX_ABSENT_FLAGS 0
#define AUX_ABSENT_RANK (-1)
#define AUX_ABSENT_CODE (-1)
#define AUX_OF_SCOPE(v) ((uint8_t)(v))
#define AUX_OF_FLAGS(v) (v)
#define AUX_OF_RANK(v) (v)
#define AUX_OF_CODE(v) code8(v)
#define AUX_TO_SCOPE(v) ((mfu_scope)(v))
#define AUX_TO_FLAGS(v) ((uint32_t)(v))
#define AUX_TO_RANK(v) ((int32_t)(v))
#define AUX_TO_CODE(v) ((int32_t)(v))
#define AUX_OR_SCOPE 0
#define AUX_OR_FLAGS 1
#define AUX_OR_RANK 0
#define AUX_OR_CODE 0

#define AUX_MEMBER(kind, name, NAME, arg, map, since, unit, what, help)                            \
    AUX_IF_##kind(AUX_TYPE_##kind *a_##name;)

/* The aux arrays by number (AUX_TOKENS_PER_S_SCOPE, ..., AUX_DTYPE). */
#define AUX_ENUM(kind, name, NAME, arg, map, since, unit, what, help)                              \
    AUX_IF_##kind(AUX_ENUM_1(NAME))
#define AUX_ENUM_1(NAME) AUX_##NAME,
enum { MFU_STEP_FIELDS(AUX_ENUM) AUX_COUNT };

struct mfu_run {
    size_t n, cap, max_rows, merged;
    bool dropped;     /* mfu__run_drop_columns: every append is refused */
    bool plain_pages; /* no 2 MiB layout (mfu__run_plain_pages) */
    int64_t *step;
    double *col[MFU_COL_COUNT_];
    MFU_STEP_FIELDS(AUX_MEMBER) /* a_tokens_per_s_scope, ..., a_flags, a_rank, a_dtype */
    /* each array's reserved mapping, in bytes (util/pages.h; 0: from malloc) */
    size_t step_len, col_len[MFU_COL_COUNT_], aux_len[AUX_COUNT];
    /* Columns of one value. umask bit c: every row of double column c holds the bits ubits[c]
     * so far (made at row 0, not differed since). cmask bit c: the column is mfu__const_map's
     * mapping of ubits[c] (made so at 8 MiB while uniform, grow_col): a row not written reads
     * that value, so a row that holds it is not written (no page copied). */
    uint32_t umask, cmask;
    uint64_t ubits[MFU_COL_COUNT_];
    mfu_run_meta meta;
    mfu_rank_obs *obs; /* per-rank observations (mfu_run_rank_obs_get) */
    size_t nobs, obs_cap, obs_dropped;
};

/* Every field its absent value: zero bytes (step 0, scopes unknown, flags 0), then the
 * doubles NaN and rank and codes -1. */
#define INIT_STEP(name)
#define INIT_DOUBLE(name) s->name = NAN;
#define INIT_SCOPE(name)
#define INIT_FLAGS(name)
#define INIT_RANK(name) s->name = -1;
#define INIT_CODE(name) s->name = -1;
#define INIT_BIT(name)
#define INIT_NANBIT(name)
#define INIT(kind, name, NAME, arg, map, since, unit, what, help) INIT_##kind(name)

void mfu_step_init(mfu_step *s)
{
    memset(s, 0, sizeof *s);
    MFU_STEP_FIELDS(INIT)
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
    mfu__pages_free(run->step, run->step_len);
    for (int i = 0; i < MFU_COL_COUNT_; i++)
        mfu__pages_free(run->col[i], run->col_len[i]);
#define FREE_AUX(kind, name, NAME, arg, map, since, unit, what, help)                              \
    AUX_IF_##kind(mfu__pages_free(run->a_##name, run->aux_len[AUX_##NAME]);)
    MFU_STEP_FIELDS(FREE_AUX)
    free(run->obs);
    free(run);
}

void mfu__run_drop_columns(mfu_run *run)
{
    if (!run)
        return;
    for (int i = 0; i < MFU_COL_COUNT_; i++) {
        mfu__pages_free(run->col[i], run->col_len[i]);
        run->col[i] = NULL;
        run->col_len[i] = 0;
    }
    run->umask = run->cmask = 0;
#define DROP_AUX(kind, name, NAME, arg, map, since, unit, what, help)                              \
    AUX_IF_##kind(mfu__pages_free(run->a_##name, run->aux_len[AUX_##NAME]); run->a_##name = NULL;  \
                  run->aux_len[AUX_##NAME] = 0;)
    MFU_STEP_FIELDS(DROP_AUX)
    run->max_rows = run->n; /* full: nothing more is appended to what is left */
    run->dropped = true;    /* a repeat too (a merge would make columns again) */
}

double *mfu__run_take_column(mfu_run *run, mfu_column col, size_t *len)
{
    *len = 0;
    if (!run || (int)col < 0 || col >= MFU_COL_COUNT_)
        return NULL;
    double *p = run->col[col];
    *len = run->col_len[col];
    run->col[col] = NULL;
    run->col_len[col] = 0;
    run->umask &= ~(1u << col);
    run->cmask &= ~(1u << col);
    run->max_rows = run->n; /* as after mfu__run_drop_columns: nothing more is appended */
    run->dropped = true;
    return p;
}

int64_t *mfu__run_take_steps(mfu_run *run, size_t *len)
{
    *len = 0;
    if (!run)
        return NULL;
    int64_t *p = run->step;
    *len = run->step_len;
    mfu__run_drop_columns(run);
    run->step = NULL;
    run->step_len = 0;
    run->n = run->cap = run->max_rows = 0;
    return p;
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

/* Large columns are laid out in 2 MiB pages: a block of at least HUGE_MIN bytes is 2 MiB-aligned,
 * in whole 2 MiB, and (Linux) marked for transparent huge pages, so that the kernel maps it
 * with one fault per 2 MiB instead of one per 4 KiB (the page faults of a column filled row by
 * row cost about a sixth of a whole ingest otherwise: 200k rows, 5800 faults;
 * docs/internals/ingest.md "Performance"). From RESERVE_MIN on, the block is a mapping of its
 * own reserved for the run's most rows at once (util/pages.h), so that later growth neither
 * moves nor copies it (at 10M rows the blocks of the doublings, zeroed and copied into, were
 * half the CPU time of a JSON-lines ingest); only the pages the rows write cost memory. Below
 * it, a block is malloc's: freed, glibc keeps it for the next run of the process (a monitor's
 * record of 200k steps took 10 ns longer a record with a fresh mapping for each run). */
#define HUGE_MIN ((size_t)3 << 19)
#define RESERVE_MIN ((size_t)8 << 20)

/* Resize one array to ncap elements of size sz, keeping its first keep elements; on failure
 * the old block is kept. *len is the length of the array's reserved mapping (0: malloc'd);
 * most is the most elements it may come to hold (reserved at once). plain: malloc, whatever
 * the size. */
static bool grow_one(void **p, size_t *len, size_t keep, size_t ncap, size_t sz, bool plain,
                     size_t most)
{
    size_t bytes = ncap * sz;
    if (*len >= bytes)
        return true; /* reserved already */
    if (!plain && bytes >= RESERVE_MIN) {
        size_t nlen;
        void *q = mfu__pages_reserve((most > ncap ? most : ncap) * sz, &nlen);
        if (q) {
            if (keep)
                memcpy(q, *p, keep * sz);
            mfu__pages_free(*p, *len);
            *p = q;
            *len = nlen;
            return true;
        }
    }
    if (*len) { /* a reservation too small (the row limit was raised), none to be had */
        void *q = malloc(bytes);
        if (!q)
            return false;
        memcpy(q, *p, keep * sz);
        mfu__pages_free(*p, *len);
        *p = q;
        *len = 0;
        return true;
    }
    if (!plain && bytes >= HUGE_MIN) { /* 2 MiB-aligned, whole 2 MiB, the rows copied */
        size_t whole = (bytes + MFU__HUGE_PAGE - 1) / MFU__HUGE_PAGE * MFU__HUGE_PAGE;
        void *q = aligned_alloc(MFU__HUGE_PAGE, whole);
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
    void *q = realloc(*p, bytes);
    if (!q)
        return false;
    *p = q;
    return true;
}

/* grow_one for double column c of r: a column of one value so far (umask) that reaches
 * mfu__const_map_min (8 MiB: a million rows) becomes mfu__const_map's mapping of it (its rows
 * need no copy: the mapping reads the value), reserved for the row limit; before that it is an
 * ordinary array (making the mapping costs 1 - 2 ms: a tenth of a 200k-line ingest). A mapping
 * that must move (a raised row limit) is no longer one. */
static bool grow_col(mfu_run *r, int c, size_t keep, size_t ncap, size_t most)
{
    uint32_t bit = 1u << c;
    size_t bytes = ncap * sizeof(double);
    if ((r->umask & bit) && !(r->cmask & bit) && !r->plain_pages && bytes >= mfu__const_map_min) {
        double x;
        memcpy(&x, &r->ubits[c], sizeof x);
        size_t nlen;
        double *q = mfu__const_map(x, most > ncap ? most : ncap, &nlen);
        if (q) {
            mfu__pages_free(r->col[c], r->col_len[c]);
            r->col[c] = q;
            r->col_len[c] = nlen;
            r->cmask |= bit;
            return true;
        }
    }
    void *p = r->col[c];
    if (!grow_one(&p, &r->col_len[c], keep, ncap, sizeof(double), r->plain_pages, most))
        return false;
    if (p != r->col[c])
        r->cmask &= ~bit; /* moved: an array of its own now */
    r->col[c] = p;
    return true;
}

/* Row i of double column c (allocated, umask or cmask set) gets v: an equal value is not
 * written to a mapping of it; one that differs ends the column's uniformity. */
static inline void put_uniform(mfu_run *r, int c, size_t i, double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    uint32_t bit = 1u << c;
    bool same = b == r->ubits[c];
    if (!same || !(r->cmask & bit))
        r->col[c][i] = v;
    if (!same)
        r->umask &= ~bit;
}

/* The aux arrays' absent values and whether a merge OR-s them. */
#define AUX_ABSENT(kind, name, NAME, arg, map, since, unit, what, help)                            \
    AUX_IF_##kind(AUX_ABSENT_1(kind))
#define AUX_ABSENT_1(kind) AUX_ABSENT_##kind,
#define AUX_OR(kind, name, NAME, arg, map, since, unit, what, help) AUX_IF_##kind(AUX_OR_1(kind))
#define AUX_OR_1(kind) AUX_OR_##kind,
static const long long aux_absent[AUX_COUNT] = {MFU_STEP_FIELDS(AUX_ABSENT)};
static const bool aux_or[AUX_COUNT] = {MFU_STEP_FIELDS(AUX_OR)};

/* The address of aux array k's pointer and its element size. */
#define AUX_PTR(kind, name, NAME, arg, map, since, unit, what, help)                               \
    AUX_IF_##kind(case AUX_##NAME : *sz = sizeof *r->a_##name; return (void **)&r->a_##name;)
static void **aux_ptr(mfu_run *r, int k, size_t *sz)
{
    switch (k) {
        MFU_STEP_FIELDS(AUX_PTR)
    default: break;
    }
    *sz = 0; /* not an aux array: never asked */
    return NULL;
}

/* Row i of aux array k, its absent value when the array is not allocated. */
#define AUX_GET(kind, name, NAME, arg, map, since, unit, what, help)                               \
    AUX_IF_##kind(case AUX_##NAME : return r->a_##name ? r->a_##name[i] : AUX_ABSENT_##kind;)
static long long aux_get(const mfu_run *r, int k, size_t i)
{
    switch (k) {
        MFU_STEP_FIELDS(AUX_GET)
    default: return 0;
    }
}

/* Store v in row i of aux array k, which is allocated. */
#define AUX_SET(kind, name, NAME, arg, map, since, unit, what, help)                               \
    AUX_IF_##kind(case AUX_##NAME : r->a_##name[i] = (AUX_TYPE_##kind)v; break;)
static void aux_set(mfu_run *r, int k, size_t i, long long v)
{
    switch (k) {
        MFU_STEP_FIELDS(AUX_SET)
    default: break;
    }
}

/* The aux values of step s, in aux order (codes as their int8_t codes). */
#define STEP_AUX(kind, name, NAME, arg, map, since, unit, what, help)                              \
    AUX_IF_##kind(a[AUX_##NAME] = AUX_OF_##kind(s->name);)
static void step_aux(const mfu_step *s, long long a[AUX_COUNT])
{
    MFU_STEP_FIELDS(STEP_AUX)
}

/* Whether step s holds a value for an aux array the run has not made yet. */
#define AUX_MISSING(kind, name, NAME, arg, map, since, unit, what, help)                           \
    AUX_IF_##kind((!r->a_##name && AUX_OF_##kind(s->name) != AUX_ABSENT_##kind) ||)
static bool aux_missing(const mfu_run *r, const mfu_step *s)
{
    return MFU_STEP_FIELDS(AUX_MISSING) false;
}

/* Allocate double column c (not yet allocated) at the run's capacity, its rows so far NaN.
 * false when out of memory (nothing changed). A column made and then not written is still
 * right: it holds what the rows held. */
static bool make_col(mfu_run *r, int c)
{
    void *p = NULL;
    size_t len = 0;
    if (!grow_one(&p, &len, 0, r->cap, sizeof(double), r->plain_pages, r->max_rows))
        return false;
    r->col[c] = p;
    r->col_len[c] = len;
    for (size_t i = 0; i < r->n; i++)
        r->col[c][i] = NAN;
    return true;
}

/* The same for aux array k: its rows so far hold the absent value (all-zero or all-one bytes). */
static bool make_aux(mfu_run *r, int k)
{
    size_t sz;
    void **pp = aux_ptr(r, k, &sz);
    void *p = NULL;
    size_t len = 0;
    if (!grow_one(&p, &len, 0, r->cap, sz, r->plain_pages, r->max_rows))
        return false;
    memset(p, aux_absent[k] ? 0xff : 0, r->n * sz);
    *pp = p;
    r->aux_len[k] = len;
    return true;
}

/* Allocate every column that row values v / a would be the first to fill. false when out of
 * memory; the columns made before the failure are kept (they are right, above). */
static bool make_needed(mfu_run *r, const double v[MFU_COL_COUNT_], const long long a[AUX_COUNT])
{
    for (int c = 0; c < MFU_COL_COUNT_; c++)
        if (!r->col[c] && !isnan(v[c]) && !make_col(r, c))
            return false;
    for (int k = 0; k < AUX_COUNT; k++) {
        size_t sz;
        if (!*aux_ptr(r, k, &sz) && a[k] != aux_absent[k] && !make_aux(r, k))
            return false;
    }
    return true;
}

static mfu_status grow_to(mfu_run *r, size_t ncap, mfu_error *err)
{
    /* Grow every allocated array; each keeps the old rows, so a failure part-way leaves larger
     * blocks that still hold the old rows: the run is unchanged as far as readers can see, and
     * cap is only raised when all succeeded. */
    size_t n = r->n;
    /* the step numbers keep the 2 MiB layout (mfu__run_plain_pages) */
    size_t most = r->max_rows;
    bool ok = grow_one((void **)&r->step, &r->step_len, n, ncap, sizeof *r->step, false, most);
    for (int i = 0; ok && i < MFU_COL_COUNT_; i++)
        ok = !r->col[i] || grow_col(r, i, n, ncap, most);
    for (int k = 0; ok && k < AUX_COUNT; k++) {
        size_t sz;
        void **pp = aux_ptr(r, k, &sz);
        ok = !*pp || grow_one(pp, &r->aux_len[k], n, ncap, sz, r->plain_pages, most);
    }
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

void mfu__run_plain_pages(mfu_run *run)
{
    if (run)
        run->plain_pages = true;
}

mfu_status mfu_run_reserve(mfu_run *run, size_t rows, mfu_error *err)
{
    if (!run)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_run_reserve: run is NULL");
    if (rows > run->max_rows)
        rows = run->max_rows;
    return rows > run->cap ? grow_to(run, rows, err) : MFU_OK;
}

/* ---- bulk load: rows of a stored run, column by column (mfu__run_load, run/step.h) ------- */

/* Value i of member m of c into dst (any alignment: a move, not a call). */
#define LOAD_AT(c, m, i, dst)                                                                      \
    memcpy(&(dst), (const char *)(c)->at[m] + (i) * (c)->stride[m], sizeof(dst))

/* Whether the values of double member m (n rows) are ones mfu_run_append keeps as they are:
 * none infinite, none negative where nonneg, none above max. */
static bool load_double_ok(const mfu__run_cols *c, int m, size_t n, bool nonneg, double max)
{
    size_t rows = c->stride[m] ? n : 1;
    bool bad = false;
    for (size_t i = 0; i < rows; i++) {
        double v;
        LOAD_AT(c, m, i, v);
        bad |= isinf(v) || (nonneg && v < 0) || v > max;
    }
    return !bad;
}

/* The first of the n rows of double member m that is not NaN; n when none is. */
static size_t load_double_first(const mfu__run_cols *c, int m, size_t n)
{
    size_t rows = c->stride[m] ? n : 1;
    for (size_t i = 0; i < rows; i++) {
        double v;
        LOAD_AT(c, m, i, v);
        if (!isnan(v))
            return i;
    }
    return n;
}

/* Rows [from, n) of member m into dst[from..n) (dst: the column at the first loaded row), the
 * rows before from NaN: the rows before a column is made read as NaN, whatever NaN they held. */
static void load_double(double *dst, const mfu__run_cols *c, int m, size_t n, size_t from)
{
    for (size_t i = 0; i < from; i++)
        dst[i] = NAN;
    if (c->stride[m] == sizeof(double)) {
        memcpy(dst + from, (const char *)c->at[m] + from * sizeof(double),
               (n - from) * sizeof(double));
        return;
    }
    for (size_t i = from; i < n; i++)
        LOAD_AT(c, m, i, dst[i]);
}

/* Per aux kind: whether a value of member m (n rows, of the member's type) is not the array's
 * absent value, and the n values into dst as the array keeps them. */
#define LOAD_AUX_FNS(KIND)                                                                         \
    static bool load_any_##KIND(const mfu__run_cols *c, int m, size_t n)                           \
    {                                                                                              \
        size_t rows = c->stride[m] ? n : 1;                                                        \
        for (size_t i = 0; i < rows; i++) {                                                        \
            MFU__STEP_CTYPE_##KIND v;                                                              \
            LOAD_AT(c, m, i, v);                                                                   \
            if (AUX_OF_##KIND(v) != AUX_ABSENT_##KIND)                                             \
                return true;                                                                       \
        }                                                                                          \
        return false;                                                                              \
    }                                                                                              \
    static void load_put_##KIND(AUX_TYPE_##KIND *dst, const mfu__run_cols *c, int m, size_t n)     \
    {                                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            MFU__STEP_CTYPE_##KIND v;                                                              \
            LOAD_AT(c, m, i, v);                                                                   \
            dst[i] = (AUX_TYPE_##KIND)AUX_OF_##KIND(v);                                            \
        }                                                                                          \
    }
LOAD_AUX_FNS(SCOPE)
LOAD_AUX_FNS(FLAGS)
LOAD_AUX_FNS(RANK)
LOAD_AUX_FNS(CODE)

/* Whether rows of *c may be loaded whole (mfu__run_load's conditions). */
#define LOAD_MAX_ANY INFINITY
#define LOAD_MAX_NONNEG INFINITY
#define LOAD_NONNEG_ANY false
#define LOAD_NONNEG_NONNEG true
#define LOAD_CHECK(kind, name, NAME, arg, map, since, unit, what, help)                            \
    MFU__STEP_IF_DOUBLE_##kind(LOAD_CHECK_1(NAME, arg))
#define LOAD_CHECK_1(NAME, arg)                                                                    \
    if (!load_double_ok(c, MFU__MEMBER_##NAME, n, LOAD_NONNEG_##arg,                               \
                        MFU__MEMBER_##NAME == MFU__MEMBER_STEP_TIME_S ? MFU__RUN_MAX_STEP_TIME_S   \
                                                                      : LOAD_MAX_##arg))           \
        return false;
static bool load_ok(const mfu_run *r, const mfu__run_cols *c, size_t n)
{
    if (n > r->max_rows - r->n || (n > 1 && c->stride[MFU__MEMBER_STEP] == 0))
        return false;
    int64_t prev = r->n ? r->step[r->n - 1] : -1; /* numbers that rise: no row finds a repeat */
    for (size_t i = 0; i < n; i++) {
        int64_t s;
        LOAD_AT(c, MFU__MEMBER_STEP, i, s);
        if (s <= prev || s > MFU__RUN_MAX_STEP_NUMBER)
            return false;
        prev = s;
    }
    MFU_STEP_FIELDS(LOAD_CHECK)
    return true;
}

/* The columns the rows fill that the run has not made yet, made (their rows so far absent);
 * from[c] = the first loaded row that fills double column c when it is made here, else 0. */
#define LOAD_MAKE(kind, name, NAME, arg, map, since, unit, what, help)                             \
    MFU__STEP_IF_DOUBLE_##kind(LOAD_MAKE_D(NAME)) AUX_IF_##kind(LOAD_MAKE_A(kind, name, NAME))
#define LOAD_MAKE_D(NAME)                                                                          \
    if (!r->col[MFU_COL_##NAME]) {                                                                 \
        from[MFU_COL_##NAME] = load_double_first(c, MFU__MEMBER_##NAME, n);                        \
        if (from[MFU_COL_##NAME] < n && !make_col(r, MFU_COL_##NAME))                              \
            return false;                                                                          \
    }
#define LOAD_MAKE_A(kind, name, NAME)                                                              \
    if (!r->a_##name && load_any_##kind(c, MFU__MEMBER_##NAME, n) && !make_aux(r, AUX_##NAME))     \
        return false;
static bool load_make(mfu_run *r, const mfu__run_cols *c, size_t n, size_t from[MFU_COL_COUNT_])
{
    MFU_STEP_FIELDS(LOAD_MAKE)
    return true;
}

mfu_status mfu__run_load(mfu_run *run, const mfu__run_cols *cols, size_t n, bool *taken,
                         mfu_error *err)
{
    if (taken)
        *taken = false;
    if (!run || !cols || !taken)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu__run_load: run, cols and taken are required");
    if (!load_ok(run, cols, n))
        return MFU_OK;
    size_t need = run->n + n;
    if (need > run->cap) {
        size_t ncap = run->cap * 2 > need ? run->cap * 2 : need;
        mfu_status st = grow_to(run, ncap < run->max_rows ? ncap : run->max_rows, err);
        if (st != MFU_OK)
            return st;
    }
    size_t from[MFU_COL_COUNT_] = {0};
    if (!load_make(run, cols, n, from))
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory adding a column to the run");
    /* every column is made: the rows are written and counted last */
    size_t i0 = run->n;
    for (size_t i = 0; i < n; i++)
        LOAD_AT(cols, MFU__MEMBER_STEP, i, run->step[i0 + i]);
#define LOAD_PUT(kind, name, NAME, arg, map, since, unit, what, help)                              \
    MFU__STEP_IF_DOUBLE_##kind(LOAD_PUT_D(NAME)) AUX_IF_##kind(LOAD_PUT_A(kind, name, NAME))
#define LOAD_PUT_D(NAME)                                                                           \
    if (run->col[MFU_COL_##NAME])                                                                  \
        load_double(run->col[MFU_COL_##NAME] + i0, cols, MFU__MEMBER_##NAME, n,                    \
                    from[MFU_COL_##NAME]);
#define LOAD_PUT_A(kind, name, NAME)                                                               \
    if (run->a_##name)                                                                             \
        load_put_##kind(run->a_##name + i0, cols, MFU__MEMBER_##NAME, n);
    MFU_STEP_FIELDS(LOAD_PUT)
    run->umask = 0; /* the rows loaded are not compared: no column is known one value now */
    run->n = need;
    *taken = true;
    return MFU_OK;
}

/* Where each double column's field lies in mfu_step, in column order. */
#define COL_OFF(kind, name, NAME, arg, map, since, unit, what, help)                               \
    MFU__STEP_IF_DOUBLE_##kind(COL_OFF_1(name, NAME))
#define COL_OFF_1(name, NAME) [MFU_COL_##NAME] = offsetof(mfu_step, name),
static const size_t col_off[MFU_COL_COUNT_] = {MFU_STEP_FIELDS(COL_OFF)};

_Static_assert(MFU_COL_COUNT_ <= 32, "mfu_run_append keeps the columns to make in 32 bits");

double *mfu__step_field(mfu_step *s, mfu_column c)
{
    return (double *)(void *)((char *)s + col_off[c]);
}

static void step_values(const mfu_step *s, double v[MFU_COL_COUNT_])
{
    for (int c = 0; c < MFU_COL_COUNT_; c++)
        memcpy(&v[c], (const char *)s + col_off[c], sizeof(double));
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
        int32_t ri = r->a_rank ? r->a_rank[i] : -1;
        if (rank >= 0 && ri >= 0) {
            if (ri == rank)
                return -1; /* the same rank went back: a restart */
        } else if (++passed_unknown > 1) {
            return -1;
        }
    }
    return -1;
}

/* Fill the absent fields of row i from s (a repeat of the same step). false when out of
 * memory making a column the row did not have yet (the row is unchanged). */
static bool merge_into(mfu_run *r, size_t i, const mfu_step *s)
{
    double v[MFU_COL_COUNT_];
    long long a[AUX_COUNT];
    step_values(s, v);
    step_aux(s, a);
    if (!make_needed(r, v, a))
        return false;
    for (int c = 0; c < MFU_COL_COUNT_; c++)
        if (r->col[c] && isnan(r->col[c][i]) && !isnan(v[c]))
            r->col[c][i] = v[c];
    for (int k = 0; k < AUX_COUNT; k++) {
        long long cur = aux_get(r, k, i);
        if (aux_or[k]) {
            if (a[k])
                aux_set(r, k, i, cur | a[k]);
        } else if (cur == aux_absent[k] && a[k] != aux_absent[k]) {
            aux_set(r, k, i, a[k]);
        }
    }
    return true;
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
        size_t none = 0; /* kept in malloc's blocks: a realloc of a large one moves no rows */
        if (!grow_one((void **)&r->obs, &none, r->nobs, ncap, sizeof *r->obs, true, ncap))
            return false;
        r->obs_cap = ncap;
    }
    r->obs[r->nobs++] = *o;
    return true;
}

/* mfu_run_append; with row, *row and *at get the row the step went to as mfu_run_get reads
 * it after the append (the new last row, or the row a repeat merged into). */
static mfu_status append(mfu_run *run, const mfu_step *in, mfu_step *row, size_t *at, bool *merged,
                         mfu_error *err)
{
    if (merged)
        *merged = false;
    if (!run || !in)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_run_append: run and step must not be NULL");
    if (run->dropped)
        return mfu__fail(err, MFU_E_LIMIT, 0,
                         "the run's columns were freed (mfu__run_drop_columns): it takes no step; "
                         "append to a new run");
    mfu_step checked; /* the run's invariants: plausible.c */
    const mfu_step *s = in;
    if (!mfu__step_plain(in)) { /* the plain case needs no copy */
        mfu_status pst = mfu__step_plausible(in, &checked, err);
        if (pst != MFU_OK)
            return pst;
        s = &checked;
    }
    long rep = find_repeat(run, s->step, s->rank);
    if (rep >= 0) {
        /* another known rank's copy of a step: its own figures are kept aside */
        int32_t rrank = run->a_rank ? run->a_rank[rep] : -1;
        if (s->rank >= 0 && rrank >= 0 && s->rank != rrank &&
            (!isnan(s->step_time_s) || !isnan(s->tokens_per_s))) {
            mfu_rank_obs o = {(size_t)rep, s->step, s->rank, s->step_time_s, s->tokens_per_s};
            if (!keep_obs(run, &o))
                return mfu__fail(err, MFU_E_NOMEM, 0,
                                 "out of memory keeping a per-rank observation of step %lld",
                                 (long long)s->step);
        }
        if (!merge_into(run, (size_t)rep, s))
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory merging a repeat of step %lld",
                             (long long)s->step);
        run->merged++;
        if (merged)
            *merged = true;
        if (row) {
            mfu_run_get(run, (size_t)rep, row);
            *at = (size_t)rep;
        }
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
    /* Row i is written in place and counted last: a failure part-way leaves it unseen. */
    size_t i = run->n;
    run->step[i] = s->step;
    if (row) /* then made what the columns hold */
        *row = *s;
    uint32_t missing = 0; /* columns this row is the first to fill */
    /* the columns of one value (put_uniform), read once: a bit it clears for a later column
     * of this row only sends that one to put_uniform, which reads the run's own */
    uint32_t watched = run->umask | run->cmask;
    /* each double by name (constant offsets, no loop); a row given back gets NAN where the
     * run has no column (mfu_run_get reads NAN there, whatever NaN the step held) */
#define PUT_COL_1(name, NAME)                                                                      \
    if (run->col[MFU_COL_##NAME]) {                                                                \
        if (!(watched & (1u << MFU_COL_##NAME)))                                                   \
            run->col[MFU_COL_##NAME][i] = s->name;                                                 \
        else                                                                                       \
            put_uniform(run, MFU_COL_##NAME, i, s->name);                                          \
    } else if (!isnan(s->name))                                                                    \
        missing |= 1u << MFU_COL_##NAME;                                                           \
    else if (row)                                                                                  \
        row->name = NAN;
#define PUT_COL(kind, name, NAME, arg, map, since, unit, what, help)                               \
    MFU__STEP_IF_DOUBLE_##kind(PUT_COL_1(name, NAME))
    MFU_STEP_FIELDS(PUT_COL)
    if (missing || aux_missing(run, s)) {
        double v[MFU_COL_COUNT_];
        long long a[AUX_COUNT];
        step_values(s, v);
        step_aux(s, a);
        if (!make_needed(run, v, a)) {
            /* row i stays unseen; a mapped column's row is its value again (an append that
             * holds the value there writes nothing) */
            for (int c = 0; c < MFU_COL_COUNT_; c++)
                if ((run->cmask & (1u << c)) &&
                    memcmp(&run->col[c][i], &run->ubits[c], sizeof(double)) != 0)
                    memcpy(&run->col[c][i], &run->ubits[c], sizeof(double));
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory adding a column to the run");
        }
        for (int c = 0; c < MFU_COL_COUNT_; c++)
            if (missing & (1u << c)) {
                run->col[c][i] = v[c];
                if (i == 0) { /* a column from the first row: one value so far */
                    run->umask |= 1u << c;
                    memcpy(&run->ubits[c], &v[c], sizeof(double));
                }
            }
    }
#define PUT_AUX(kind, name, NAME, arg, map, since, unit, what, help)                               \
    AUX_IF_##kind(if (run->a_##name) run->a_##name[i] = (AUX_TYPE_##kind)AUX_OF_##kind(s->name);)
    MFU_STEP_FIELDS(PUT_AUX)
    if (row) {
        /* an aux array is allocated once a row holds something else than its absent value,
         * so the row holds what the step's value becomes in it (a code outside 0..127: -1) */
#define ROW_AUX(kind, name, NAME, arg, map, since, unit, what, help)                               \
    AUX_IF_##kind(row->name = AUX_TO_##kind((AUX_TYPE_##kind)AUX_OF_##kind(s->name));)
        MFU_STEP_FIELDS(ROW_AUX)
        *at = i;
    }
    run->n++;
    return MFU_OK;
}

mfu_status mfu_run_append(mfu_run *run, const mfu_step *in, bool *merged, mfu_error *err)
{
    return append(run, in, NULL, NULL, merged, err);
}

mfu_status mfu__run_append_row(mfu_run *run, const mfu_step *in, mfu_step *row, size_t *at,
                               bool *merged, mfu_error *err)
{
    if (!row || !at)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu__run_append_row: row and at are required");
    return append(run, in, row, at, merged, err);
}

size_t mfu_run_count(const mfu_run *run)
{
    return run ? run->n : 0;
}

/* Row i of double column c, NaN when the column is not allocated. */
static double col_at(const mfu_run *r, mfu_column c, size_t i)
{
    return r->col[c] ? r->col[c][i] : NAN;
}

bool mfu_run_get(const mfu_run *run, size_t i, mfu_step *out)
{
    if (!run || !out || i >= run->n)
        return false;
    mfu_step s;
    mfu_step_init(&s);
    s.step = run->step[i];
    for (int c = 0; c < MFU_COL_COUNT_; c++)
        *mfu__step_field(&s, (mfu_column)c) = col_at(run, (mfu_column)c, i);
#define GET_AUX(kind, name, NAME, arg, map, since, unit, what, help)                               \
    AUX_IF_##kind(s.name = AUX_TO_##kind(aux_get(run, AUX_##NAME, i));)
    MFU_STEP_FIELDS(GET_AUX)
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

const uint32_t *mfu__run_flags(const mfu_run *run)
{
    return run && run->n ? run->a_flags : NULL;
}

/* The array of member m (run/step.h): the step numbers, a double column, an aux array. */
#define MEMBER_D(NAME) MEMBER_CASE(NAME, run->col[MFU_COL_##NAME])
#define MEMBER_A(name, NAME) MEMBER_CASE(NAME, run->a_##name)
#define MEMBER_CASE(NAME, array)                                                                   \
    case MFU__MEMBER_##NAME:                                                                       \
        return array;
#define MEMBER_AT(kind, name, NAME, arg, map, since, unit, what, help)                             \
    MFU__STEP_IF_DOUBLE_##kind(MEMBER_D(NAME)) AUX_IF_##kind(MEMBER_A(name, NAME))
/* clang-format off */
const void *mfu__run_member(const mfu_run *run, int m)
{
    if (!run || !run->n)
        return NULL;
    switch (m) {
    case MFU__MEMBER_STEP: return run->step;
    MFU_STEP_FIELDS(MEMBER_AT)
    default: return NULL;
    }
}
/* clang-format on */

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
