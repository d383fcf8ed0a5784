/*
 * fmt_mfu.c - mfu's own canonical JSON-lines: the writer (mfu_run_write_jsonl) and the
 * reader (format "mfu"). Specified in docs/formats.md; the key tables below are the spec.
 *
 *   {"mfu_run":1,"format":"megatron","seq_len":4096,"global_batch":1024,...,"steps":10}
 *   {"step":10,"step_time_s":15.2106,"samples":1024,"flops_per_s":7.483e+14,
 *    "flops_per_s_scope":"device","skipped":true,"time_s":1725381519}
 *   {"step":10,"rank":3,"rank_obs":true,"step_time_s":15.9}      (a per-rank observation)
 *
 * One header object first, then one object per row. Absent values are left out; flags are
 * booleans present only when true; a loss printed as nan has no "loss" and "loss_nan":true.
 * Doubles are written in the shortest form that reads back to the same double, so a run
 * survives write -> read unchanged. The reader accepts the header anywhere before the first
 * step (or none), ignores unknown keys (forward compatible), rejects a newer version.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ingest/canonical.h"
#include "ingest/fast.h"
#include "ingest/format.h"
#include "ingest/jflat.h"
#include "mfu/device.h"
#include "mfu/model.h"

#define MFU_CANONICAL_VERSION 1

/* ---- writer ----------------------------------------------------------------------------- */

/* Shortest %.Ng (N = 15..17) that reads back exactly: mfu__fmt_shortest (fast.h) for the
 * usual values, else the snprintf loop it stands in for. */
static size_t fmt_double(char *buf, size_t n, double v)
{
    if (v == 0 && signbit(v)) /* "-0" would read back as the integer 0: keep the sign */
        return (size_t)snprintf(buf, n, "-0.0");
    size_t k = mfu__fmt_shortest(buf, v);
    return k ? k : mfu__fmt_roundtrip(buf, n, v);
}

/* Rows are assembled in one buffer and written with one fwrite per few dozen rows. */
#define WRITER_BUF 8192

typedef struct writer {
    FILE *f;        /* NULL: into mem */
    mfu__wbuf *mem; /* with f NULL: the buffer the rows are appended to */
    bool first;
    bool failed; /* a write failed (f), or out of memory (mem) */
    size_t n;
    char buf[WRITER_BUF];
} writer;

bool mfu__wbuf_room(mfu__wbuf *b, size_t need)
{
    if (b->cap - b->n >= need)
        return true;
    size_t cap = b->cap ? b->cap : 64 * 1024;
    while (cap - b->n < need)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p)
        return false;
    b->p = p;
    b->cap = cap;
    return true;
}

/* Into mem (mfu__wbuf_room); false when out of memory. */
static bool mem_put(mfu__wbuf *b, const char *s, size_t n)
{
    if (!mfu__wbuf_room(b, n))
        return false;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    return true;
}

static void flush_buf(writer *w)
{
    if (w->n && (w->f ? fwrite(w->buf, 1, w->n, w->f) != w->n : !mem_put(w->mem, w->buf, w->n)))
        w->failed = true;
    w->n = 0;
}

static void put(writer *w, const char *s, size_t n)
{
    if (w->n + n > sizeof w->buf) {
        flush_buf(w);
        if (n > sizeof w->buf) { /* longer than the buffer (never for a row): directly */
            if (w->f ? fwrite(s, 1, n, w->f) != n : !mem_put(w->mem, s, n))
                w->failed = true;
            return;
        }
    }
    char *d = w->buf + w->n;
    for (size_t i = 0; i < n; i++) /* keys and numbers are short: no memcpy call */
        d[i] = s[i];
    w->n += n;
}

static void put_c(writer *w, char c)
{
    put(w, &c, 1);
}

static void put_str(writer *w, const char *s)
{
    put_c(w, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char esc[2] = {'\\', (char)*p};
            put(w, esc, 2);
        } else if (*p < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            put(w, esc, 6);
        } else {
            put_c(w, (char)*p);
        }
    }
    put_c(w, '"');
}

static void key(writer *w, const char *k)
{
    put(w, w->first ? "{\"" : ",\"", 2);
    put(w, k, strlen(k));
    put(w, "\":", 2);
    w->first = false;
}

static void kv_num(writer *w, const char *k, double v)
{
    if (isnan(v) || isinf(v))
        return;
    char buf[40];
    size_t n = fmt_double(buf, sizeof buf, v);
    key(w, k);
    put(w, buf, n);
}

static void kv_int(writer *w, const char *k, int64_t v)
{
    char tmp[24];
    size_t n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; /* INT64_MIN too */
    do {
        tmp[sizeof tmp - 1 - n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[sizeof tmp - 1 - n++] = '-';
    key(w, k);
    put(w, tmp + sizeof tmp - n, n);
}

static void kv_str(writer *w, const char *k, const char *v)
{
    if (!v || !v[0])
        return;
    key(w, k);
    put_str(w, v);
}

/* A scope is written whenever it is known, even without its value (an MFU printed as a
 * sentinel keeps its "device" scope). */
static void kv_scope(writer *w, const char *k, mfu_scope s)
{
    if (s == MFU_SCOPE_UNKNOWN)
        return;
    key(w, k);
    put_str(w, mfu_scope_name(s));
}

static void kv_true(writer *w, const char *k, bool b)
{
    if (!b)
        return;
    key(w, k);
    put(w, "true", 4);
}

/* The header object: the run's metadata; "steps" only when steps >= 0. */
static void write_header(writer *w, const mfu_run_meta *m, long long steps)
{
    w->first = true;
    kv_int(w, "mfu_run", MFU_CANONICAL_VERSION);
    kv_str(w, "format", m->format);
    kv_str(w, "model", m->model);
    kv_num(w, "model_params", m->model_params);
    if (m->global_batch > 0)
        kv_int(w, "global_batch", m->global_batch);
    if (m->micro_batch > 0)
        kv_int(w, "micro_batch", m->micro_batch);
    if (m->seq_len > 0)
        kv_int(w, "seq_len", m->seq_len);
    if (m->world_size > 0)
        kv_int(w, "world_size", m->world_size);
    if (m->grad_accum > 0)
        kv_int(w, "grad_accum", m->grad_accum);
    kv_str(w, "device", m->device);
    kv_str(w, "dtype", m->dtype);
    kv_num(w, "tokens_per_step", m->tokens_per_step);
    kv_str(w, "convention", m->convention);
    kv_num(w, "reported_peak_flops_per_s", m->reported_peak_flops_per_s);
    if (steps >= 0)
        kv_int(w, "steps", steps);
    put(w, "}\n", 2);
}

/* A code's name (recompute, dtype), NULL for a code mfu has no name for. */
static const char *code_name_recompute(int32_t v)
{
    return v >= 0 && v <= MFU_RECOMPUTE_FULL ? mfu_recompute_name((mfu_recompute)v) : NULL;
}

static const char *code_name_dtype(int32_t v)
{
    return v >= 0 && v < (int32_t)MFU_DTYPE_COUNT ? mfu_dtype_name((mfu_dtype)v) : NULL;
}

/* One row object: every field of mfu/step_fields.h under its name, in list order, absent ones
 * left out: a double when finite, a scope when known, the rank when >= 0, a bit as true when
 * set, a code as its name. */
#define W_STEP(name, NAME, arg) kv_int(w, #name, s.name);
#define W_DOUBLE(name, NAME, arg) kv_num(w, #name, s.name);
#define W_SCOPE(name, NAME, arg) kv_scope(w, #name, s.name);
#define W_FLAGS(name, NAME, arg) /* as its bits */
#define W_RANK(name, NAME, arg)                                                                    \
    if (s.name >= 0)                                                                               \
        kv_int(w, #name, s.name);
#define W_BIT(name, NAME, arg) kv_true(w, #name, (s.flags & MFU_STEP_##NAME) != 0);
#define W_NANBIT(name, NAME, arg) W_BIT(name, NAME, arg)
#define W_CODE(name, NAME, arg) kv_str(w, #name, code_name_##arg(s.name));
#define W(kind, name, NAME, arg, map, since, unit, what, help) W_##kind(name, NAME, arg)

static void write_row(writer *w, const mfu_step *sp)
{
    mfu_step s = *sp;
    w->first = true;
    MFU_STEP_FIELDS(W)
    put(w, "}\n", 2);
}

/* Rows [from, count) with their per-rank observations (each right after its row). */
static mfu_status write_rows(writer *w, const mfu_run *run, size_t from, mfu_error *err)
{
    size_t n = mfu_run_count(run);
    if (from >= n)
        return MFU_OK;
    size_t span = n - from;
    /* per-rank observations of those rows grouped by row (a counting sort): the observations
     * of row from + i are order[first[i] .. first[i + 1]) */
    size_t nobs = mfu_run_rank_obs_count(run), *order = NULL, *first = NULL;
    if (nobs) {
        order = malloc(nobs * sizeof *order);
        first = calloc(span + 2, sizeof *first);
        if (!order || !first) {
            free(order);
            free(first);
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory writing per-rank observations");
        }
        for (size_t k = 0; k < nobs; k++) {
            mfu_rank_obs o;
            mfu_run_rank_obs_get(run, k, &o);
            if (o.row >= from)
                first[o.row - from + 2]++;
        }
        for (size_t i = 2; i < span + 2; i++)
            first[i] += first[i - 1];
        for (size_t k = 0; k < nobs; k++) {
            mfu_rank_obs o;
            mfu_run_rank_obs_get(run, k, &o);
            if (o.row >= from)
                order[first[o.row - from + 1]++] = k;
        }
    }
    for (size_t i = 0; i < span; i++) {
        mfu_step s;
        mfu_run_get(run, from + i, &s);
        write_row(w, &s);
        for (size_t k = order ? first[i] : 0; order && k < first[i + 1]; k++) {
            mfu_rank_obs o;
            mfu_run_rank_obs_get(run, order[k], &o);
            w->first = true;
            kv_int(w, "step", o.step);
            kv_int(w, "rank", o.rank);
            kv_true(w, "rank_obs", true);
            kv_num(w, "step_time_s", o.step_time_s);
            kv_num(w, "tokens_per_s", o.tokens_per_s);
            put(w, "}\n", 2);
        }
        if (w->failed)
            break;
    }
    free(order);
    free(first);
    return MFU_OK;
}

static void writer_init(writer *w, FILE *out)
{
    w->f = out;
    w->mem = NULL;
    w->first = true;
    w->failed = false;
    w->n = 0;
}

static mfu_status writer_end(writer *w, mfu_status st, mfu_error *err)
{
    flush_buf(w);
    if (st != MFU_OK)
        return st;
    if (w->failed || fflush(w->f) != 0 || ferror(w->f))
        return mfu__fail(err, MFU_E_IO, 0,
                         "writing the JSON-lines output failed; check the disk "
                         "or the output path");
    return MFU_OK;
}

mfu_status mfu_run_write_jsonl(const mfu_run *run, FILE *out, mfu_error *err)
{
    if (!run || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_run_write_jsonl: run and out are required");
    writer wr; /* on the stack: no allocation, so no new error */
    writer_init(&wr, out);
    write_header(&wr, mfu_run_meta_get(run), (long long)mfu_run_count(run));
    return writer_end(&wr, write_rows(&wr, run, 0, err), err);
}

mfu_status mfu_run_write_jsonl_rows(const mfu_run *run, size_t from, bool header, FILE *out,
                                    mfu_error *err)
{
    if (!run || !out)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "mfu_run_write_jsonl_rows: run and out are required");
    writer wr;
    writer_init(&wr, out);
    if (header)
        write_header(&wr, mfu_run_meta_get(run), -1);
    return writer_end(&wr, write_rows(&wr, run, from, err), err);
}

mfu_status mfu__run_jsonl_rows_to_mem(const mfu_run *run, size_t from, mfu__wbuf *b, mfu_error *err)
{
    if (!run || !b)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "mfu__run_jsonl_rows_to_mem: run and buffer are required");
    writer wr;
    writer_init(&wr, NULL);
    wr.mem = b;
    size_t had = b->n;
    mfu_status st = write_rows(&wr, run, from, err);
    flush_buf(&wr);
    if (st == MFU_OK && wr.failed)
        st = mfu__fail(err, MFU_E_NOMEM, 0, "out of memory buffering the JSON-lines rows");
    if (st != MFU_OK)
        b->n = had; /* no partial row */
    return st;
}

/* ---- one row from the step in hand (mfu__jsonl_row) ------------------------------------- */

/* The longest row: every field's key with its punctuation and 40 bytes for its value (a
 * number of at most 25 characters printed into 32 bytes of scratch, a scope or code name in
 * quotes, "true"), "{", "}\n". */
#define ROW_LEN_1(kind, name, NAME, arg, map, since, unit, what, help)                             \
    +sizeof(",\"" #name "\":") + 40
enum { ROW_LEN = 3 MFU_STEP_FIELDS(ROW_LEN_1) };
_Static_assert(ROW_LEN <= MFU__JSONL_ROW_MAX, "MFU__JSONL_ROW_MAX is below the longest row");

/* v in decimal at d (kv_int's digits): a count or rank through mfu__fmt_u64 (whole words
 * stored: d has 32 bytes of room), a negative one as kv_int writes it. */
static size_t row_int(char *d, int64_t v)
{
    if (v >= 0)
        return mfu__fmt_u64(d, (uint64_t)v);
    char tmp[24];
    size_t n = sizeof tmp;
    uint64_t u = (uint64_t)0 - (uint64_t)v; /* INT64_MIN too */
    do {
        tmp[--n] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    tmp[--n] = '-';
    memcpy(d, tmp + n, sizeof tmp - n);
    return sizeof tmp - n;
}

/* s in quotes with put_str's escapes (the names written here never need them). */
static size_t row_str(char *d, const char *s)
{
    size_t k = 0;
    d[k++] = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            d[k++] = '\\';
            d[k++] = (char)*p;
        } else if (*p < 0x20) {
            k += (size_t)snprintf(d + k, 8, "\\u%04x", *p);
        } else {
            d[k++] = (char)*p;
        }
    }
    d[k++] = '"';
    return k;
}

/* Each field as write_row writes it, its key with the comma before it (the first, the step,
 * gets "{" instead at the end): a key of constant length is a few stores. */
#define R_KEY(name)                                                                                \
    (memcpy(d, ",\"" #name "\":", sizeof(",\"" #name "\":") - 1),                                  \
     d += sizeof(",\"" #name "\":") - 1)
#define R_STEP(name, NAME, arg)                                                                    \
    R_KEY(name);                                                                                   \
    d += row_int(d, s->name);
#define R_DOUBLE(name, NAME, arg)                                                                  \
    if (!isnan(s->name) && !isinf(s->name)) {                                                      \
        R_KEY(name);                                                                               \
        d += fmt_double(d, 40, s->name);                                                           \
    }
#define R_SCOPE(name, NAME, arg)                                                                   \
    if (s->name != MFU_SCOPE_UNKNOWN) {                                                            \
        R_KEY(name);                                                                               \
        d += row_str(d, mfu_scope_name(s->name));                                                  \
    }
#define R_FLAGS(name, NAME, arg)
#define R_RANK(name, NAME, arg)                                                                    \
    if (s->name >= 0) {                                                                            \
        R_KEY(name);                                                                               \
        d += row_int(d, s->name);                                                                  \
    }
#define R_BIT(name, NAME, arg)                                                                     \
    if (s->flags & MFU_STEP_##NAME) {                                                              \
        R_KEY(name);                                                                               \
        memcpy(d, "true", 4);                                                                      \
        d += 4;                                                                                    \
    }
#define R_NANBIT(name, NAME, arg) R_BIT(name, NAME, arg)
#define R_CODE(name, NAME, arg)                                                                    \
    {                                                                                              \
        const char *cn = code_name_##arg(s->name);                                                 \
        if (cn && cn[0]) {                                                                         \
            R_KEY(name);                                                                           \
            d += row_str(d, cn);                                                                   \
        }                                                                                          \
    }
#define R(kind, name, NAME, arg, map, since, unit, what, help) R_##kind(name, NAME, arg)

size_t mfu__jsonl_row(char *d0, const mfu_step *s)
{
    char *d = d0;
    MFU_STEP_FIELDS(R)
    d[0] = '}';
    d[1] = '\n';
    d += 2;
    d0[0] = '{'; /* the first key's comma (a row always has its step) */
    return (size_t)(d - d0);
}

/* ---- reader ----------------------------------------------------------------------------- */

typedef struct mfu_state {
    bool header_seen, step_seen;
    mfu__jflat obj; /* the fast path's object (kept here, not on the stack) */
} mfu_state;

static int mfu_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    /* Only the header identifies the format: step objects alone look like any metrics JSONL
     * and are left to the generic jsonl reader, which reads the same key names. */
    if (mfu__span_starts(s, "{\"mfu_run\":"))
        return 5 * MFU__DETECT_STEP;
    return MFU__DETECT_NONE;
}

static bool get_scope(json_t *o, const char *k, mfu_scope *out)
{
    json_t *v = json_object_get(o, k);
    if (!v)
        return true;
    const char *s = json_string_value(v);
    if (!s)
        return false;
    if (strcmp(s, "device") == 0)
        *out = MFU_SCOPE_DEVICE;
    else if (strcmp(s, "global") == 0)
        *out = MFU_SCOPE_GLOBAL;
    else if (strcmp(s, "unknown") == 0)
        *out = MFU_SCOPE_UNKNOWN;
    else
        return false;
    return true;
}

/* A number key: absent leaves *out; present must be a JSON number. */
static bool get_num(json_t *o, const char *k, double *out)
{
    json_t *v = json_object_get(o, k);
    if (!v || json_is_null(v))
        return true;
    if (!json_is_number(v))
        return false;
    *out = json_number_value(v);
    return true;
}

static bool get_int(json_t *o, const char *k, int64_t *out)
{
    json_t *v = json_object_get(o, k);
    if (!v)
        return true;
    if (!json_is_integer(v))
        return false;
    *out = (int64_t)json_integer_value(v);
    return true;
}

static bool get_str(json_t *o, const char *k, char *dst, size_t n)
{
    json_t *v = json_object_get(o, k);
    if (!v)
        return true;
    if (!json_is_string(v))
        return false;
    mfu__strlcpy(dst, json_string_value(v), n);
    return true;
}

/* A flag bit: true sets it; anything else (absent, false, another type) leaves it. */
static bool get_flag(json_t *o, const char *k, uint32_t bit, uint32_t *flags)
{
    if (json_is_true(json_object_get(o, k)))
        *flags |= bit;
    return true;
}

/* A recompute ("none", "selective", "full") or dtype ("bf16", ...) name as its code; false
 * for a name mfu does not know. */
static bool code_parse_recompute(const char *name, int32_t *out)
{
    mfu_recompute r;
    if (mfu_recompute_parse(name, &r, NULL) != MFU_OK)
        return false;
    *out = (int32_t)r;
    return true;
}

static bool code_parse_dtype(const char *name, int32_t *out)
{
    mfu_dtype d;
    if (mfu_dtype_parse(name, &d, NULL) != MFU_OK)
        return false;
    *out = (int32_t)d;
    return true;
}

typedef bool (*code_parse_fn)(const char *name, int32_t *out);

static bool get_code(json_t *o, const char *k, code_parse_fn parse, int32_t *out)
{
    json_t *v = json_object_get(o, k);
    if (!v)
        return true;
    const char *s = json_string_value(v);
    return s && parse(s, out);
}

/* A rank: absent leaves *out; present must be an integer, kept when it is 0..INT32_MAX. */
static bool get_rank(json_t *o, const char *k, int32_t *out)
{
    int64_t v = -1;
    if (!get_int(o, k, &v))
        return false;
    if (v >= 0 && v <= INT32_MAX)
        *out = (int32_t)v;
    return true;
}

/* {"step":N,"rank":R,"rank_obs":true,...}: one rank's own figures for the row just read. ok
 * false: a value of the wrong type. */
static mfu_status rank_obs(mfu__ictx *c, int64_t step, int64_t rank, double step_time_s,
                           double tokens_per_s, bool ok)
{
    const mfu_run *run = mfu__run(c);
    size_t n = mfu_run_count(run);
    if (!ok || rank < 0 || rank > INT32_MAX) {
        mfu__skip(c,
                  "canonical per-rank observation of step %lld without a rank >= 0 or with "
                  "a value of the wrong type",
                  (long long)step);
        return MFU_OK;
    }
    if (n == 0 || mfu_run_steps(run)[n - 1] != step) {
        mfu__skip(c, "canonical per-rank observation of step %lld does not follow that step",
                  (long long)step);
        return MFU_OK;
    }
    mfu_rank_obs ob;
    memset(&ob, 0, sizeof ob);
    ob.rank = (int32_t)rank;
    ob.step_time_s = step_time_s;
    ob.tokens_per_s = tokens_per_s;
    return mfu__emit_rank_obs(c, &ob);
}

static mfu_status header(mfu_state *st, mfu__ictx *c, json_t *o)
{
    json_int_t ver = json_integer_value(json_object_get(o, "mfu_run"));
    if (ver < 1 || ver > MFU_CANONICAL_VERSION)
        return mfu__fail_line(c, MFU_E_UNSUPPORTED,
                              "canonical JSON-lines version %lld is not supported (this mfu "
                              "reads version %d); convert the log again with this mfu",
                              (long long)ver, MFU_CANONICAL_VERSION);
    mfu_run_meta *m = mfu__meta(c);
    char fmt[sizeof m->format] = "";
    bool ok =
        get_str(o, "format", fmt, sizeof fmt) && get_str(o, "model", m->model, sizeof m->model) &&
        get_num(o, "model_params", &m->model_params) &&
        get_int(o, "global_batch", &m->global_batch) &&
        get_int(o, "micro_batch", &m->micro_batch) && get_int(o, "seq_len", &m->seq_len) &&
        get_int(o, "world_size", &m->world_size) && get_int(o, "grad_accum", &m->grad_accum) &&
        get_str(o, "device", m->device, sizeof m->device) &&
        get_str(o, "dtype", m->dtype, sizeof m->dtype) &&
        get_num(o, "tokens_per_step", &m->tokens_per_step) &&
        get_str(o, "convention", m->convention, sizeof m->convention) &&
        get_num(o, "reported_peak_flops_per_s", &m->reported_peak_flops_per_s);
    if (!ok)
        return mfu__fail_line(c, MFU_E_PARSE,
                              "canonical header has a value of the wrong type (see "
                              "docs/formats.md); regenerate it with mfu convert");
    /* the run keeps the original format's name: "mfu" is only the container */
    if (fmt[0])
        mfu__strlcpy(m->format, fmt, sizeof m->format);
    st->header_seen = true;
    mfu__used(c);
    return MFU_OK;
}

/* ---- the step objects through the fast reader (ingest/jflat.h) ---------------------------- */

/* The keys the fast reader looks for: every field's (C_STEP, C_TIME_S, ...), then the two
 * that are not fields: "mfu_run" (a header) and "rank_obs" (a per-rank observation). */
#define CKEY(kind, name, NAME, arg, map, since, unit, what, help) C_##NAME,
#define CKEY_NAME(kind, name, NAME, arg, map, since, unit, what, help) #name,
typedef enum ckey { MFU_STEP_FIELDS(CKEY) C_MFU_RUN, C_RANK_OBS, C_COUNT } ckey;

/* The same names as the writer above and the jansson reader below. */
static const char *const ckey_names[C_COUNT] = {MFU_STEP_FIELDS(CKEY_NAME) "mfu_run", "rank_obs"};

static int ckey_of(const mfu__jmember *m)
{
    for (int k = 0; k < C_COUNT; k++) {
        const char *name = ckey_names[k];
        if (m->key_len && name[0] == m->key[0] && strlen(name) == m->key_len &&
            memcmp(name, m->key, m->key_len) == 0)
            return k;
    }
    return -1; /* unknown keys are ignored (forward compatible) */
}

/* get_num / get_scope / get_int / get_flag on a member (NULL = absent). */
static bool jf_num(const mfu__jmember *m, double *out)
{
    if (!m || m->type == MFU__J_NULL)
        return true;
    if (m->type != MFU__J_INT && m->type != MFU__J_REAL)
        return false;
    *out = m->num;
    return true;
}

static bool jf_scope(const mfu__jmember *m, mfu_scope *out)
{
    if (!m)
        return true;
    if (m->type != MFU__J_STRING)
        return false;
    mfu__span v = {m->str, m->str_len};
    if (mfu__span_eq(v, "device"))
        *out = MFU_SCOPE_DEVICE;
    else if (mfu__span_eq(v, "global"))
        *out = MFU_SCOPE_GLOBAL;
    else if (mfu__span_eq(v, "unknown"))
        *out = MFU_SCOPE_UNKNOWN;
    else
        return false;
    return true;
}

/* A recompute or dtype name (code_parse_*); absent leaves *out. */
static bool jf_code(const mfu__jmember *m, code_parse_fn parse, int32_t *out)
{
    if (!m)
        return true;
    char name[32];
    if (m->type != MFU__J_STRING || m->str_len >= sizeof name)
        return false;
    memcpy(name, m->str, m->str_len);
    name[m->str_len] = '\0';
    return parse(name, out);
}

/* get_rank on a member. */
static bool jf_rank(const mfu__jmember *m, int32_t *out)
{
    if (!m)
        return true;
    if (m->type != MFU__J_INT)
        return false;
    if (m->ival >= 0 && m->ival <= INT32_MAX)
        *out = (int32_t)m->ival;
    return true;
}

static bool jf_flag(const mfu__jmember *m, uint32_t bit, uint32_t *flags)
{
    if (m && m->type == MFU__J_TRUE)
        *flags |= bit;
    return true;
}

/* Every field of a step object but the step number (read first), by kind, as one && chain:
 * FAST_* on the fast reader's members, SLOW_* on a jansson object. */
#define FAST_STEP(name, NAME, arg)
#define FAST_DOUBLE(name, NAME, arg) jf_num(at[C_##NAME], &s.name) &&
#define FAST_SCOPE(name, NAME, arg) jf_scope(at[C_##NAME], &s.name) &&
#define FAST_FLAGS(name, NAME, arg)
#define FAST_RANK(name, NAME, arg) jf_rank(at[C_##NAME], &s.name) &&
#define FAST_BIT(name, NAME, arg) jf_flag(at[C_##NAME], MFU_STEP_##NAME, &s.flags) &&
#define FAST_NANBIT(name, NAME, arg) FAST_BIT(name, NAME, arg)
#define FAST_CODE(name, NAME, arg) jf_code(at[C_##NAME], code_parse_##arg, &s.name) &&
#define FAST(kind, name, NAME, arg, map, since, unit, what, help) FAST_##kind(name, NAME, arg)
#define SLOW_STEP(name, NAME, arg)
#define SLOW_DOUBLE(name, NAME, arg) get_num(o, #name, &s.name) &&
#define SLOW_SCOPE(name, NAME, arg) get_scope(o, #name, &s.name) &&
#define SLOW_FLAGS(name, NAME, arg)
#define SLOW_RANK(name, NAME, arg) get_rank(o, #name, &s.name) &&
#define SLOW_BIT(name, NAME, arg) get_flag(o, #name, MFU_STEP_##NAME, &s.flags) &&
#define SLOW_NANBIT(name, NAME, arg) SLOW_BIT(name, NAME, arg)
#define SLOW_CODE(name, NAME, arg) get_code(o, #name, code_parse_##arg, &s.name) &&
#define SLOW(kind, name, NAME, arg, map, since, unit, what, help) SLOW_##kind(name, NAME, arg)

/* A step object through the fast reader, exactly as mfu_line reads it with jansson. Returns
 * false (nothing done) when the reader declines or the object is a header. */
static bool mfu_fast(mfu_state *st, mfu__ictx *c, const mfu__line *ln, mfu_status *rc)
{
    mfu__jflat *o = &st->obj;
    if (!mfu__jflat_parse(ln->text, ln->len, o))
        return false;
    const mfu__jmember *at[C_COUNT] = {NULL};
    for (size_t i = 0; i < o->n; i++) { /* a repeated key keeps its last member */
        int k = ckey_of(&o->m[i]);
        if (k >= 0)
            at[k] = &o->m[i];
    }
    if (at[C_MFU_RUN])
        return false; /* a header: once per file, jansson reads it */
    *rc = MFU_OK;
    if (!at[C_STEP] || at[C_STEP]->type != MFU__J_INT) {
        mfu__skip(c, "canonical step object without an integer \"step\"");
        return true;
    }
    if (at[C_RANK_OBS] && at[C_RANK_OBS]->type == MFU__J_TRUE) {
        double t = NAN, tps = NAN;
        bool ok = jf_num(at[C_STEP_TIME_S], &t) && jf_num(at[C_TOKENS_PER_S], &tps) && at[C_RANK] &&
                  at[C_RANK]->type == MFU__J_INT;
        *rc = rank_obs(c, at[C_STEP]->ival, ok ? at[C_RANK]->ival : -1, t, tps, ok);
        return true;
    }
    mfu_step s;
    mfu_step_init(&s);
    s.step = at[C_STEP]->ival;
    bool ok = MFU_STEP_FIELDS(FAST) true;
    if (!ok) {
        mfu__skip(c,
                  "canonical step %lld has a value of the wrong type (numbers, scope "
                  "\"device\"/\"global\")",
                  (long long)s.step);
        return true;
    }
    st->step_seen = true;
    *rc = mfu__emit(c, &s);
    return true;
}

static mfu_status mfu_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    mfu_state *st = state;
    if (ln->len == 0 || ln->text[0] != '{')
        return MFU_OK;
    mfu_status fast_rc;
    if (mfu_fast(st, c, ln, &fast_rc))
        return fast_rc;
    json_error_t je;
    json_t *o = json_loadb(ln->text, ln->len, 0, &je);
    if (!o) {
        mfu__skip(c, "invalid JSON (%s at column %d)", je.text, je.column);
        return MFU_OK;
    }
    mfu_status rc = MFU_OK;
    if (json_object_get(o, "mfu_run")) {
        rc = st->step_seen ? mfu__fail_line(c, MFU_E_PARSE,
                                            "a canonical header after the first step; write one "
                                            "run per file")
                           : header(st, c, o);
        json_decref(o);
        return rc;
    }
    json_t *jstep = json_object_get(o, "step");
    if (!json_is_integer(jstep)) {
        mfu__skip(c, "canonical step object without an integer \"step\"");
        json_decref(o);
        return MFU_OK;
    }
    if (json_is_true(json_object_get(o, "rank_obs"))) {
        double t = NAN, tps = NAN;
        int64_t rank = -1;
        bool ok = json_is_integer(json_object_get(o, "rank")) && get_int(o, "rank", &rank) &&
                  get_num(o, "step_time_s", &t) && get_num(o, "tokens_per_s", &tps);
        rc = rank_obs(c, (int64_t)json_integer_value(jstep), rank, t, tps, ok);
        json_decref(o);
        return rc;
    }
    mfu_step s;
    mfu_step_init(&s);
    s.step = (int64_t)json_integer_value(jstep);
    bool ok = MFU_STEP_FIELDS(SLOW) true;
    json_decref(o);
    if (!ok) {
        mfu__skip(c,
                  "canonical step %lld has a value of the wrong type (numbers, scope "
                  "\"device\"/\"global\")",
                  (long long)s.step);
        return MFU_OK;
    }
    st->step_seen = true;
    return mfu__emit(c, &s);
}

const mfu__format mfu__fmt_mfu = {
    .name = "mfu",
    .summary = "mfu's canonical JSON-lines (mfu convert output; docs/formats.md)",
    .detect = mfu_detect,
    .state_size = sizeof(mfu_state),
    .line = mfu_line,
    .raw_emit = true,
};
