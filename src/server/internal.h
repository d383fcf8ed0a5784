/*
 * server/internal.h - the pieces of the server shared between its files (not for other modules).
 *
 *   buf.c       growable byte buffer with a limit; a JSON writer whose strings are HTML-safe
 *   route.c     strict request-path parsing, percent-decoding, the bearer-token check
 *   lttb.c      largest-triangle-three-buckets downsampling
 *   prom.c      Prometheus text exposition (escaping, HELP/TYPE)
 *   registry.c  the runs served: rows, their figures (src/figures), context, metric windows
 *   insight.c   summaries (report module), segments, findings, compare (analysis module)
 *   sse.c       the event hub: one bounded queue per client
 *   follow.c    one thread per followed log (`tail -F`)
 *   api.c       the JSON endpoints and /metrics
 *   server.c    libmicrohttpd, request state, limits, lifecycle
 *   assets.c    the embedded dashboard files
 */
#ifndef MFU_SERVER_INTERNAL_H
#define MFU_SERVER_INTERNAL_H

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "figures/figures.h"
#include "server/server.h"
#include "util/util.h"

/* ---- buf.c ------------------------------------------------------------------------------ */

/* A growable buffer. limit 0 = no limit beyond memory. After a failed append (limit or memory)
 * `failed` is set and every later append is a no-op. p is NUL-terminated when not NULL. */
typedef struct mfu__sb {
    char *p;
    size_t len, cap, limit;
    bool failed;
} mfu__sb;

void mfu__sb_init(mfu__sb *b, size_t limit);
void mfu__sb_free(mfu__sb *b);
/* Take the bytes (the caller frees them); b is reset. NULL when nothing was written. */
char *mfu__sb_take(mfu__sb *b, size_t *len);
bool mfu__sb_put(mfu__sb *b, const void *data, size_t n);
bool mfu__sb_puts(mfu__sb *b, const char *s);
bool mfu__sb_printf(mfu__sb *b, const char *fmt, ...) MFU__PRINTF(2, 3);

/* Append s[0..n) with every invalid UTF-8 sequence replaced by U+FFFD (so the output is valid
 * UTF-8, as JSON and Prometheus require). */
void mfu__sb_utf8(mfu__sb *b, const char *s, size_t n);

/* A streaming JSON writer over an mfu__sb. Strings are escaped so that the output can be
 * embedded in HTML: <, >, &, ' and U+2028/2029 become \u escapes, invalid UTF-8 becomes
 * U+FFFD. Non-finite numbers are written as null. */
#define MFU__JW_DEPTH 16
typedef struct mfu__jw {
    mfu__sb *b;
    int depth;
    bool need_comma[MFU__JW_DEPTH];
} mfu__jw;

void mfu__jw_init(mfu__jw *w, mfu__sb *b);
void mfu__jw_obj(mfu__jw *w);     /* { */
void mfu__jw_arr(mfu__jw *w);     /* [ */
void mfu__jw_end_obj(mfu__jw *w); /* } */
void mfu__jw_end_arr(mfu__jw *w); /* ] */
void mfu__jw_key(mfu__jw *w, const char *k);
void mfu__jw_str(mfu__jw *w, const char *s);
void mfu__jw_strn(mfu__jw *w, const char *s, size_t n);
void mfu__jw_num(mfu__jw *w, double v); /* shortest form that reads back; null if not finite */
/* As mfu__jw_num in 17 significant digits: reads back exactly too, about 3x faster (for the
 * long arrays of the series API), but 0.1 prints as 0.10000000000000001. */
void mfu__jw_num17(mfu__jw *w, double v);
void mfu__jw_int(mfu__jw *w, int64_t v);
void mfu__jw_bool(mfu__jw *w, bool v);
void mfu__jw_null(mfu__jw *w);
/* A jansson value written through w (strings HTML-safe as above; nesting past MFU__JW_DEPTH
 * is the writer's limit). For JSON made elsewhere (the store's attached traces). */
struct json_t;
void mfu__jw_json(mfu__jw *w, const struct json_t *v);
/* Append a JSON string (quotes included) for s[0..n) to b, HTML-safe as above. */
void mfu__json_escape(mfu__sb *b, const char *s, size_t n);

/* ---- route.c ---------------------------------------------------------------------------- */

/* Percent-decode in[0..n) into out (capacity cap, NUL-terminated). plus_space: '+' means ' '
 * (query strings). Fails on a malformed escape, a decoded NUL byte, or when out is too small. */
bool mfu__pct_decode(const char *in, size_t n, bool plus_space, char *out, size_t cap,
                     size_t *outlen);

typedef enum mfu__route_kind {
    MFU__R_NONE = 0, /* refused: status/message say why */
    MFU__R_INDEX,    /* GET / */
    MFU__R_ASSET,    /* GET /assets/NAME */
    MFU__R_RUNS,     /* GET /api/runs */
    MFU__R_RUN,      /* GET /api/runs/{run} */
    MFU__R_SERIES,   /* GET /api/runs/{run}/series */
    MFU__R_SEGMENTS, /* GET /api/runs/{run}/segments */
    MFU__R_FINDINGS, /* GET /api/runs/{run}/findings */
    MFU__R_STEPS,    /* POST /api/runs/{run}/steps */
    MFU__R_COMPARE,  /* GET /api/compare */
    MFU__R_EVENTS,   /* GET /api/events */
    MFU__R_TRACE,    /* GET /api/runs/{run}/trace (api_trace.c) */
    MFU__R_METRICS   /* GET /metrics */
} mfu__route_kind;

#define MFU__NAME_BYTES 128 /* run and asset names, NUL included (= MFU_STORE_NAME_MAX) */

typedef struct mfu__route {
    mfu__route_kind kind;
    char run[MFU__NAME_BYTES];   /* decoded run name (run routes) */
    char asset[MFU__NAME_BYTES]; /* decoded asset name (MFU__R_ASSET) */
    unsigned status;             /* MFU__R_NONE: 400, 404, 405 or 414 */
    const char *allow;           /* 405: the Allow header */
    char message[160];           /* MFU__R_NONE: why, one line */
} mfu__route;

/* Parse method and raw (not yet percent-decoded) path into *r. Strict: the path starts with
 * '/', has no empty segment except the root, and every segment decodes to 1..127 bytes
 * without '/', NUL or control characters and is not "." or "..". Returns r->kind. */
mfu__route_kind mfu__route_parse(const char *method, const char *path, mfu__route *r);

/* Constant-time comparison of a presented token (n bytes) with the expected one: the time
 * depends on the lengths only, never on where the bytes differ. */
bool mfu__token_equal(const char *expected, const char *presented, size_t n);

/* The token of an "Authorization: Bearer TOKEN" header value (scheme case-insensitive,
 * blanks around the token allowed). false when value is NULL or not a bearer credential. */
bool mfu__bearer_token(const char *value, const char **tok, size_t *len);

/* ---- lttb.c ----------------------------------------------------------------------------- */

/* Largest-triangle-three-buckets (Steinarsson 2013) over y[0..n) with x = the index: writes
 * m' <= m ascending indices into out (capacity m) and returns m'. The first and last points are
 * always kept; every bucket contributes the point forming the largest triangle with the
 * previous choice and the next bucket's mean, so isolated peaks and dips survive. NaN points
 * are never chosen while a bucket has a finite one (a bucket of NaN keeps its first point so a
 * gap stays a gap). m >= n returns every index; m < 3 keeps the first and last. */
size_t mfu__lttb(const double *y, size_t n, size_t m, size_t *out);
/* The same with the x of point i given as xs[i] (ascending; NULL: i). */
size_t mfu__lttb_xy(const double *y, const size_t *xs, size_t n, size_t m, size_t *out);

/* Rows per block of the min/max preselection. */
#define MFU__BLOCK 64
/* A range is preselected when each of its LTTB buckets spans at least this many blocks. */
#define MFU__PRESELECT_BLOCKS 4
/* For every block from b0 on of col[0..n): the offsets of its smallest and largest number
 * (its first row when it has none) into lo[] and hi[] (one byte each per block). col NULL
 * stands for a column with no number (mfu_run_column's absent column). */
void mfu__blocks_update(const double *col, size_t n, size_t b0, unsigned char *lo,
                        unsigned char *hi);

/* The min/max pyramid of one column: level 0 is the blocks of MFU__BLOCK rows above (offsets,
 * one byte each), level k >= 1 blocks of MFU__BLOCK * MFU__MM_FACTOR^k rows whose smallest and
 * largest number are the rows lo[k-1][b], hi[k-1][b] (the first such row; the block's first row
 * when it holds no number), made from the blocks of level k - 1. A range then gathers its
 * candidates from blocks of the level whose blocks are about a quarter of an LTTB bucket. */
#define MFU__MM_FACTOR 4
#define MFU__MM_LEVELS 8 /* levels above 0: the top blocks hold 64 * 4^8 = 4,194,304 rows */
typedef struct mfu__mm {
    size_t n; /* rows covered */
    unsigned char *lo0, *hi0;
    size_t cap0;
    uint32_t *lo[MFU__MM_LEVELS], *hi[MFU__MM_LEVELS];
    double *vlo[MFU__MM_LEVELS], *vhi[MFU__MM_LEVELS]; /* the numbers of those rows */
    size_t cap[MFU__MM_LEVELS];
} mfu__mm;
/* Rows per block of level (0 .. MFU__MM_LEVELS). */
size_t mfu__mm_block_rows(int level);
/* Bring p up to date with col[0..n) (NULL: no number in any row) whose rows before from are
 * the ones p covers already (from 0: everything is new). Work: the blocks from `from` on, at
 * every level. false when out of memory or n > UINT32_MAX (p is then to be freed). */
bool mfu__mm_update(mfu__mm *p, const double *col, size_t n, size_t from);
void mfu__mm_free(mfu__mm *p);
/* The level to gather a range of total rows at m points from: the highest whose blocks still
 * fit MFU__PRESELECT_BLOCKS times in a bucket of total / m rows; -1 when level 0 does not
 * (exact LTTB over every row). */
int mfu__mm_level(size_t total, size_t m);
/* Entries mfu__mm_candidates may write for a range of total rows at level. */
size_t mfu__mm_cap(int level, size_t total);
/* The candidate rows of [from, to) at level (0 .. MFU__MM_LEVELS) into out: the first and last
 * row, and the two extremes of each block of the range's canonical cover (the largest aligned
 * block of level <= level that starts at a row and fits, from left to right: whole blocks of
 * the level in the middle, smaller ones towards the ends, single rows where no level-0 block
 * fits), ascending without repeats. At level 0: its first and last row, every row of the
 * partial blocks at both ends and the extremes of each whole block. Returns the
 * count. */
size_t mfu__mm_candidates(const mfu__mm *p, int level, size_t from, size_t to, size_t *out);
/* The same, with each candidate's number into vals[i] (col[out[i]], col the column p was last
 * updated from; NaN where col is NULL): the extremes of blocks of level 1 up come from the
 * pyramid, which keeps them beside their rows, so that a range of a long run does not load its
 * candidates from all over the column. */
size_t mfu__mm_candidates_v(const mfu__mm *p, int level, size_t from, size_t to, const double *col,
                            size_t *out, double *vals);

/* ---- prom.c ----------------------------------------------------------------------------- */

typedef struct mfu__label {
    const char *name;  /* a valid label name */
    const char *value; /* any bytes: escaped, invalid UTF-8 replaced */
} mfu__label;

/* "# HELP name help\n# TYPE name type\n" with help escaped (\\ and \n). */
void mfu__prom_family(mfu__sb *b, const char *name, const char *type, const char *help);
/* "name{l1="v1",...} value\n": label values escaped (\\, \", \n), labels with a NULL value
 * left out; value as Go's ParseFloat reads it (NaN, +Inf, -Inf). */
void mfu__prom_sample(mfu__sb *b, const char *name, const mfu__label *labels, size_t nlabels,
                      double value);
/* Escape a label value into b (no quotes). */
void mfu__prom_escape_label(mfu__sb *b, const char *v);

/* ---- registry.c ------------------------------------------------------------------------- */

/* What the API says about a run's context: the figures module's context of the run
 * (fig.c) in the API's words and labels. NaN when unknown; `why` says what to give. */
typedef struct mfu__ctx {
    double model_flops_per_token;
    double hardware_flops_per_token;
    double devices;             /* whole job (NaN: unknown, figures per device) */
    const char *devices_source; /* "--devices", "log world_size", "ranks posted", "unknown" */
    double local_devices;       /* devices the /metrics series of this server stand for */
    double peak_flops_per_s;    /* one device, dense, for the dtype */
    int64_t seq;
    char dtype[16];
    char device_id[48];
    char model_name_label[MFU__NAME_BYTES]; /* modelName label (DCGM's form), "" unknown */
    char model[80];                         /* model preset/config name, "" unknown */
    char convention[32];
    bool mfu_from_log;  /* no model: MFU and FLOPs are the framework's own, from the log */
    const char *source; /* where the model/device came from: "stored", "flags", "none" */
    char why[200];      /* why MFU is unknown, "" when known */
} mfu__ctx;

/* One series field of the API: which figures column it is. */
typedef enum mfu__field {
    MFU__F_MFU = 0,
    MFU__F_HFU,
    MFU__F_TOKENS_PER_S,
    MFU__F_TOKENS_PER_S_PER_DEVICE,
    MFU__F_STEP_TIME_S,
    MFU__F_MODEL_FLOPS_PER_S_PER_DEVICE,
    MFU__F_HW_FLOPS_PER_S_PER_DEVICE,
    MFU__F_LOSS,
    MFU__F_COUNT_
} mfu__field;

/* "mfu", "hfu", "tokens_per_second", ... (the API's names); NULL out of range. */
const char *mfu__field_name(mfu__field f);
/* The field called name, or -1. */
int mfu__field_parse(const char *name, size_t n);

typedef struct mfu__tag {
    char *key, *value;
} mfu__tag;

/* Steady-state medians of a run (mfu/report.h: warm-up and timing artifacts left out). NaN
 * when unknown. */
typedef struct mfu__summary {
    double mfu, hfu, tokens_per_s, model_flops_per_s_per_device, step_time_s;
} mfu__summary;

/* Per-rank window of posted steps, for /metrics: each posted object's own figures (the
 * figures module's rule, with the run's context). */
typedef struct mfu__rankwin {
    int32_t rank;
    size_t n, head;                        /* entries used, next slot */
    double tps[MFU_SERVER_METRICS_WINDOW]; /* tokens/s (whole job) */
    double st[MFU_SERVER_METRICS_WINDOW];  /* step time */
    double mfu[MFU_SERVER_METRICS_WINDOW];
    double hfu[MFU_SERVER_METRICS_WINDOW];
    double mf[MFU_SERVER_METRICS_WINDOW]; /* model FLOP/s per device */
    double hf[MFU_SERVER_METRICS_WINDOW]; /* hardware FLOP/s per device */
    int64_t last_step;
    mfu_step prev; /* the rank's previous object, for Δtime */
    bool has_prev;
} mfu__rankwin;

/* One cached series answer: the query it answers (mfu__series_key), the run's version when it
 * was made (every change of rows or derived columns bumps it), its body. */
#define MFU__SCACHE_ENTRIES 8
#define MFU__SCACHE_MAX_BYTES (4u << 20) /* a larger answer is not kept */
typedef struct mfu__scache {
    char key[160];
    uint64_t version, used;
    char *body;
    size_t len;
} mfu__scache;

/* axes=1 of the series: add row i to the running sums of step time (el) and tokens (tok) from
 * the columns of step time, tokens/s and tokens/s per device (used where the job's tokens/s is
 * unknown); a row without a positive step time adds nothing. */
static inline void mfu__axes_add(const double *stc, const double *tpc, const double *tdc, size_t i,
                                 double *el, double *tok)
{
    double st = stc ? stc[i] : NAN, tps = tpc ? tpc[i] : NAN;
    if (!isfinite(tps) && tdc)
        tps = tdc[i];
    if (isfinite(st) && st > 0) {
        *el += st;
        if (isfinite(tps) && tps > 0)
            *tok += tps * st;
    }
}

/* One run served. name is fixed; the rest is guarded by rw (refs/in_registry by the
 * registry mutex). */
typedef struct mfu__srun {
    char name[MFU__NAME_BYTES];
    int refs;
    bool in_registry;
    pthread_rwlock_t rw;
    /* guarded by rw */
    bool loaded;             /* run and the derived columns hold every row */
    bool stale;              /* the store changed under a loaded, not live run: reload */
    bool live;               /* followed or posted to by this server */
    bool followed;           /* a follower owns its rows */
    bool posted;             /* rows came by POST: ranks are devices in /metrics */
    const mfu_run *run;      /* rows; NULL while not loaded: run_own, or borrowed from the
                                ingest session of the run's follower */
    mfu_run *run_own;        /* the rows when this entry owns them (store, POST) */
    mfu__fctx *fig;          /* the figures context of the run (NULL until derived) */
    mfu_report_input fig_in; /* the input fig was made from */
    bool fig_dirty;          /* fig must be made again (context or metadata changed) */
    mfu__fcols cols;         /* every row's figures (the report's, step for step) */
    /* the min/max pyramid of a series field's column, made by the first request that needs
     * it (mfu__srun_mm) and kept up to date by every derive from then on: mm_made[] is read
     * and set under mm_mu by readers, which share rw, and by writers holding rw alone */
    mfu__mm mm[MFU__F_COUNT_];
    bool mm_made[MFU__F_COUNT_];
    pthread_mutex_t mm_mu;
    double *ax_el, *ax_tok; /* axes=1: elapsed_s and tokens_cum before each MFU__BLOCK rows */
    size_t ax_cap;
    bool monotonic; /* step numbers never go down: ranges by binary search */
    mfu__ctx ctx;
    char *context_json;    /* the run's stored context, NULL when none */
    bool own_resolved;     /* own below matches context_json */
    bool own_ok;           /* own holds the stored context's model */
    mfu__server_model own; /* the stored context's model (own_ok) */
    char own_error[160];   /* why the stored context could not be used */
    uint64_t version;      /* bumps on every change of rows, metadata or observations */
    double changed_at;     /* monotonic seconds of the last change */
    /* from the store listing while not loaded */
    char format[32];
    int64_t steps, first_step, last_step, lines;
    mfu__tag *tags;
    size_t ntags;
    int64_t updated_s;    /* the store's last write, as listed */
    int64_t listed_steps; /* the store's rows of the run, as listed (steps counts the run's) */
    /* summary and analysis caches (their own mutexes: readers share rw) */
    pthread_mutex_t sum_mu;
    pthread_mutex_t post_mu; /* one POST at a time per run: memory and store in one order */
    uint64_t sum_version;
    double sum_time; /* monotonic seconds when computed */
    double sum_cost; /* seconds computing it took */
    bool sum_valid;
    mfu__summary sum;
    pthread_mutex_t ana_mu;
    struct mfu_analysis *ana; /* NULL until asked for, or when it failed (ana_error): the
                                 analysis of the run's report (insight.c) */
    char ana_unit[24];        /* mfu_report_analysis_unit of that report, "" none */
    uint64_t ana_version;
    double ana_time, ana_cost; /* when computed, seconds it took */
    char ana_error[MFU_ERROR_MESSAGE_MAX + 64];
    /* posted per-rank windows */
    mfu__rankwin *ranks;
    size_t nranks;
    /* the last series answers (api.c), valid for the version they name; freed when the rows
     * are dropped */
    pthread_mutex_t cache_mu;
    mfu__scache cache[MFU__SCACHE_ENTRIES];
    uint64_t cache_tick;
} mfu__srun;

typedef struct mfu__registry {
    pthread_mutex_t mu;
    mfu__srun **runs; /* sorted by name */
    size_t n, cap;
    double last_refresh;
    pthread_mutex_t store_mu; /* one store handle, one user at a time */
    mfu_store *store;
    const mfu__server_model *model;
    mfu__server_context_fn context_fn; /* stored contexts -> models (NULL: not used) */
    void *context_ctx;
    bool flags_given; /* model holds a model or device option: followed logs use it */
} mfu__registry;

mfu_status mfu__reg_init(mfu__registry *g, mfu_store *store, const mfu__server_model *model,
                         mfu_error *err);
void mfu__reg_destroy(mfu__registry *g);
/* Re-read the store's run list (at most once a second unless force). */
void mfu__reg_refresh(mfu__registry *g, bool force);
/* A reference to run name (refresh first when absent), NULL when unknown. Release it with
 * mfu__reg_put. create: make an empty live entry when absent. */
mfu__srun *mfu__reg_get(mfu__registry *g, const char *name, bool create);
void mfu__reg_put(mfu__registry *g, mfu__srun *r);
/* References to every run, sorted by name (*n of them); release each and free the array. */
mfu__srun **mfu__reg_all(mfu__registry *g, size_t *n);

/* Take r's read lock with every row loaded (from the store when needed). false (no lock held)
 * when loading failed: err says why. */
bool mfu__srun_read(mfu__registry *g, mfu__srun *r, mfu_error *err);
void mfu__srun_unlock(mfu__srun *r);

/* Make run r's rows, under r's write lock: taken (freed with r) unless borrowed (it stays its
 * owner's, who calls mfu__srun_unset before freeing it). *first: the first row that differs
 * from what r held (n when none did); *old_n: the rows r held. Anything a row keeps counts
 * (every field of mfu_step: recompute and dtype too), and so do the metadata and the per-rank
 * observations. Returns true, with the version bumped, when anything changed. */
bool mfu__srun_set(mfu__registry *g, mfu__srun *r, const mfu_run *run, bool borrowed, size_t *first,
                   size_t *old_n);
/* Forget the borrowed run (r unloads; the next read takes the store's rows). */
void mfu__srun_unset(mfu__srun *r, const mfu_run *run);

/* Rows at the end of a run that a later append may still change (mfu_run_append merges a
 * repeated step into one of the last MFU_RUN_DEDUP_WINDOW rows), plus one. */
#define MFU__TAIL (MFU_RUN_DEDUP_WINDOW + 1)
/* Copy the last MFU__TAIL rows of r into tail (capacity MFU__TAIL); returns how many. */
size_t mfu__srun_tail(const mfu__srun *r, mfu_step *tail);
/* The borrowed run of r grew in place (its owner fed it, holding r's write lock): old_n rows
 * before, whose last ntail were tail, old_meta, and old_obs per-rank observations. Derives what
 * changed; returns the first changed row (the row count when no row did). The version is
 * bumped when anything changed, new observations alone included (a lagging rank's lines that
 * merge into rows already read). */
size_t mfu__srun_grew(mfu__registry *g, mfu__srun *r, size_t old_n, const mfu_step *tail,
                      size_t ntail, const mfu_run_meta *old_meta, size_t old_obs);
/* The steps a posted body stands for, in order: each row of rows followed by its per-rank
 * observations as the steps their ranks posted (step, rank, own step time and tokens/s in the
 * row's scope). Appended to a run with mfu_run_append, or stored with mfu_store_append_steps and
 * read back, each of those merges into its row and is kept as an observation again, so a
 * straggler in one body is not lost. *out (free it) has *n steps; *is_obs (NULL: not wanted;
 * free it) says which of them are observations. Errors: MFU_E_NOMEM. */
mfu_status mfu__posted_steps(const mfu_run *rows, mfu_step **out, bool **is_obs, size_t *n,
                             mfu_error *err);
/* Append the rows of rows (posted) to r, under r's write lock (loaded first), with their
 * per-rank observations (mfu__posted_steps); lite[0..nlite)
 * are the posted objects before merging (step, rank, times, tokens), for the per-rank windows
 * of /metrics. *first: the first row that changed. Errors: MFU_E_LIMIT (the run is full; r is
 * unchanged), MFU_E_NOMEM. */
mfu_status mfu__srun_append(mfu__registry *g, mfu__srun *r, const mfu_run *rows,
                            const mfu_step *lite, size_t nlite, size_t *first, mfu_error *err);

/* Value of field f at row i of a read-locked run (NaN when unknown). */
double mfu__srun_value(const mfu__srun *r, mfu__field f, size_t i);
/* The figures column field f reads, of a read-locked run (NULL when empty or not derived). Its
 * min/max blocks are r->blo[f], r->bhi[f]. */
const double *mfu__srun_column(const mfu__srun *r, mfu__field f);
/* The min/max pyramid of field f of r (read-locked: mfu__srun_read), made now from the whole
 * column when no request needed it before (a first request makes the one pyramid it needs:
 * 0.15 s for every field of a 10M-step run at load). NULL when out of memory. */
const mfu__mm *mfu__srun_mm(mfu__srun *r, mfu__field f);

/* ---- insight.c: summaries, segments, findings and compare (report and analysis modules) --- */

/* Steady-state medians of a read-locked run from mfu_report_compute() (cached per version;
 * a live run's for up to 5 s, or 4x what computing them took). false when neither tokens/s nor
 * step time is known. */
bool mfu__srun_summary(const mfu__registry *g, mfu__srun *r, mfu__summary *out);
/* The analysis of a read-locked run (mfu_report_analysis of the report mfu_report_compute()
 * makes with the run's context, as `mfu report` does; cached per version, a live run's for up
 * to 5 s or 4x what computing it took) as the API's JSON into b: {"method", "steps",
 * "warmup", "steady", "segments", "decomposition", "unit"}, or with findings {"findings":
 * [...]}. false with why filled when the run cannot be analysed. */
bool mfu__insight_json(const mfu__registry *g, mfu__srun *r, bool findings, mfu__sb *b, char *why,
                       size_t n);
/* Compare window wa of ra with wb of rb (both read-locked; their analyses as above) into b:
 * {"a", "b", "decomposition", "verdict"}. false with why filled when it cannot be done. */
bool mfu__compare_json(const mfu__registry *g, mfu__srun *ra, mfu_window wa, mfu__srun *rb,
                       mfu_window wb, mfu__sb *b, char *why, size_t n);

/* The figures of the last MFU_SERVER_METRICS_WINDOW rows of a read-locked, not posted run
 * (mfu__figures_window: medians, and the total). false when none has a throughput. */
bool mfu__srun_window(const mfu__srun *r, mfu__fwindow *w);

/* The report input of run r under model m: the same context `mfu report` and `mfu ingest`
 * use, with the device count of the posted ranks when nothing else gives one. */
void mfu__srun_report_input(const mfu__server_model *m, const mfu__srun *r, mfu_report_input *in);

/* The model of run r: its stored context when it has one (a followed run uses the server's
 * flags when any was given), else the server's. r locked (read or write). */
const mfu__server_model *mfu__srun_model(const mfu__registry *g, const mfu__srun *r);

/* ---- sse.c ------------------------------------------------------------------------------ */

typedef struct mfu__sse_client mfu__sse_client;

typedef struct mfu__hub {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    mfu__sse_client *clients;
    size_t nclients, max_clients, queue_limit;
    int ping_s;
    bool stopping;
    uint64_t dropped_total;
} mfu__hub;

bool mfu__hub_init(mfu__hub *h, size_t max_clients, size_t queue_limit, int ping_s);
void mfu__hub_destroy(mfu__hub *h);
/* A new client with greeting queued, or NULL when max_clients are open or the hub stops. */
mfu__sse_client *mfu__hub_join(mfu__hub *h, const char *greeting);
void mfu__hub_leave(mfu__hub *h, mfu__sse_client *c);
/* Queue "event: EVENT\ndata: DATA\n\n" for every client; a client whose queue would pass
 * queue_limit is dropped instead (its stream ends). */
void mfu__hub_broadcast(mfu__hub *h, const char *event, const char *data, size_t n);
/* Wake every reader and make them end their streams. */
void mfu__hub_stop(mfu__hub *h);
/* Block until c has bytes (or a ping is due, or the hub stops); copy at most max into buf.
 * Returns the bytes copied, or -1 when the stream should end. */
long mfu__hub_read(mfu__hub *h, mfu__sse_client *c, char *buf, size_t max);
size_t mfu__hub_clients(mfu__hub *h);

/* ---- assets.c --------------------------------------------------------------------------- */

typedef struct mfu__asset {
    const char *name;
    const unsigned char *bytes;
    size_t size;
    const char *content_type;
} mfu__asset;

/* The embedded file called name ("index.html", "app.js", ...), false when there is none. */
bool mfu__asset_find(const char *name, mfu__asset *out);

/* ---- server.c / api.c / follow.c -------------------------------------------------------- */

struct mfu__server {
    mfu__server_opts opts; /* strings copied below */
    char *db_path, *token, *hostname, *run_name, *fmt_copy;
    char **logs;
    mfu__server_model model; /* a copy (mfu__server_model_copy) */
    char **map;              /* copy of opts.ingest.map */
    size_t points_limit;
    int poll_ms;
    bool loopback;
    unsigned port;
    char url[96];
    char host_allow[3][64]; /* Host header values accepted on loopback */
    struct MHD_Daemon *mhd;
    mfu__registry reg;
    bool reg_ok;
    mfu__hub hub;
    bool hub_ok;
    /* followers */
    struct mfu__follower **followers;
    size_t nfollowers;
    pthread_mutex_t stop_mu;
    pthread_cond_t stop_cv;
    bool stopping;
    /* counters (under stop_mu) */
    uint64_t posted_steps_total;
    /* per-connection deadlines (server.c): the watch thread and its list */
    struct mfu__connwatch *watch;
};

/* A diagnostic line through opts.log. */
void mfu__srv_log(mfu__server *s, const char *fmt, ...) MFU__PRINTF(2, 3);

/* Broadcast rows [first, n) of a read-locked run as a "steps" event, or a "run" reset event
 * when there are more than MFU_SERVER_SSE_MAX_STEPS. */
void mfu__api_broadcast_rows(mfu__server *s, mfu__srun *r, size_t first);
/* Broadcast a "run" event for r (reset: the rows were replaced). */
void mfu__api_broadcast_run(mfu__server *s, mfu__srun *r, bool reset);

/* An HTTP answer being built: status, content type, body (malloc'd). */
typedef struct mfu__reply {
    unsigned status;
    const char *content_type;
    char *body;
    size_t len;
    const char *cache; /* Cache-Control value */
    const char *allow; /* Allow header (405) */
} mfu__reply;

/* Query-argument lookup (raw, not decoded) for the handlers. */
typedef const char *(*mfu__arg_fn)(void *ctx, const char *key);

/* GET endpoints (everything but the page, assets and events). */
void mfu__api_get(mfu__server *s, const mfu__route *rt, mfu__arg_fn arg, void *arg_ctx,
                  mfu__reply *out);
/* POST /api/runs/{run}/steps with a body already read and the token already checked. */
void mfu__api_post_steps(mfu__server *s, const char *run, const char *body, size_t len,
                         mfu__reply *out);
/* Fill out with {"error": message} and status. */
void mfu__api_error(mfu__reply *out, unsigned status, const char *fmt, ...) MFU__PRINTF(3, 4);
/* GET /api/runs/{name}/trace: the trace views attached to the stored run (api_trace.c). */
void mfu__api_get_trace(mfu__server *s, const char *name, mfu__reply *out);

/* Start one follower thread per log (after the registry). */
mfu_status mfu__followers_start(mfu__server *s, mfu_error *err);
/* Stop and join them; each writes what it holds into the store first. */
void mfu__followers_stop(mfu__server *s);

#endif /* MFU_SERVER_INTERNAL_H */
