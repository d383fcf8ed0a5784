/*
 * chunks.c - step rows kept a second time as columns: each MFU__CHUNK_ROWS rows of a run as
 * one zstd-compressed blob (table step_chunks, schema version 4), so that reading a long run
 * back is a few hundred blob reads instead of millions of SQLite rows.
 *
 * The steps table stays the truth: a chunk is a copy of rows [c * C, (c + 1) * C) as the
 * steps table gives them back (an absent double NaN, a scope outside the enum unknown), made
 * by the writer in the transaction that writes the chunk's last row and deleted with them.
 *
 * A blob is the zstd frame of: "MFC1", the row count (u32, little-endian as on every machine
 * mfu builds for), the layout (u32: the member count times 65536 plus their bytes, so a blob
 * written before a step field was added reads as no chunk, never as shifted columns), then per
 * member of mfu_step in MFU_STEP_FIELDS order one tag byte and
 * either its one value (tag 0: every row holds it) or its n values (tag 1), each the member's
 * own bytes. A column the log never printed costs nine bytes before compression.
 *
 * Read back, a chunk is opened as columns (mfu__chunk_open: decompressed into a buffer reused
 * from chunk to chunk, each member's values found in it) that mfu__run_load copies into the
 * run whole, or turned into rows (mfu__chunk_rows) when they must be appended one by one.
 */
#include "store/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "util/util.h"

#define CHUNK_MAGIC "MFC1"

#define CF_ENTRY(kind, name) {offsetof(mfu_step, name), sizeof(((mfu_step *)0)->name), CF_##kind},
#define CF(kind, name, NAME, arg, map, since, unit, what, help)                                    \
    MFU__STEP_IF_MEMBER_##kind(CF_ENTRY(kind, name))
enum { CF_STEP, CF_DOUBLE, CF_SCOPE, CF_FLAGS, CF_RANK, CF_CODE };
static const struct {
    size_t off, size;
    int kind;
} fields[] = {MFU_STEP_FIELDS(CF)};
#define NFIELDS MFU__ARRAY_LEN(fields)

/* What the steps table gives back for s: NaN as the one NaN, a scope outside the enum
 * unknown (rows.c, col_real and col_scope). */
static void as_stored(mfu_step *s)
{
    for (size_t f = 0; f < NFIELDS; f++) {
        char *p = (char *)s + fields[f].off;
        if (fields[f].kind == CF_DOUBLE) {
            double v;
            memcpy(&v, p, sizeof v);
            if (isnan(v)) {
                v = NAN;
                memcpy(p, &v, sizeof v);
            }
        } else if (fields[f].kind == CF_SCOPE) {
            mfu_scope v;
            memcpy(&v, p, sizeof v);
            if (v != MFU_SCOPE_DEVICE && v != MFU_SCOPE_GLOBAL) {
                v = MFU_SCOPE_UNKNOWN;
                memcpy(p, &v, sizeof v);
            }
        }
    }
}

/* The member count and bytes of mfu_step's fields, as the header records them. */
static uint32_t layout(void)
{
    uint32_t bytes = 0;
    for (size_t f = 0; f < NFIELDS; f++)
        bytes += (uint32_t)fields[f].size;
    return (uint32_t)NFIELDS << 16 | (bytes & 0xffffu);
}

/* Bytes of a chunk of n rows before compression, at most. */
static size_t raw_max(size_t n)
{
    size_t r = 12;
    for (size_t f = 0; f < NFIELDS; f++)
        r += 1 + fields[f].size * (n ? n : 1);
    return r;
}

mfu_status mfu__chunk_encode(mfu_step *rows, size_t n, void **blob, size_t *len, mfu_error *err)
{
    *blob = NULL;
    *len = 0;
    for (size_t i = 0; i < n; i++)
        as_stored(&rows[i]);
    size_t cap = raw_max(n);
    unsigned char *raw = malloc(cap);
    size_t bound = ZSTD_compressBound(cap);
    void *out = malloc(bound);
    if (!raw || !out) {
        free(raw);
        free(out);
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory writing a chunk of rows");
    }
    size_t k = 0;
    memcpy(raw, CHUNK_MAGIC, 4);
    uint32_t n32 = (uint32_t)n;
    memcpy(raw + 4, &n32, 4);
    uint32_t lay = layout();
    memcpy(raw + 8, &lay, 4);
    k = 12;
    for (size_t f = 0; f < NFIELDS; f++) {
        size_t off = fields[f].off, sz = fields[f].size;
        bool same = true;
        for (size_t i = 1; i < n && same; i++)
            same = memcmp((const char *)&rows[i] + off, (const char *)&rows[0] + off, sz) == 0;
        raw[k++] = same ? 0 : 1;
        for (size_t i = 0; i < (same ? 1 : n); i++) {
            memcpy(raw + k, (const char *)&rows[i] + off, sz);
            k += sz;
        }
    }
    size_t z = ZSTD_compress(out, bound, raw, k, 1);
    free(raw);
    if (ZSTD_isError(z)) {
        free(out);
        return mfu__fail(err, MFU_E_INVALID, 0, "compressing a chunk of rows: %s",
                         ZSTD_getErrorName(z));
    }
    *blob = out;
    *len = z;
    return MFU_OK;
}

_Static_assert(MFU__ARRAY_LEN(fields) == MFU__MEMBERS_, "a chunk holds every member of mfu_step");

bool mfu__chunk_open(mfu__chunk_view *v, const void *blob, size_t len, size_t n)
{
    size_t cap = raw_max(n);
    unsigned long long size = ZSTD_getFrameContentSize(blob, len);
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > cap ||
        size < 12)
        return false;
    if (!v->dctx && !(v->dctx = ZSTD_createDCtx()))
        return false;
    if (v->cap < (size_t)size) {
        unsigned char *raw = realloc(v->raw, (size_t)size);
        if (!raw)
            return false;
        v->raw = raw;
        v->cap = (size_t)size;
    }
    unsigned char *raw = v->raw;
    size_t got = ZSTD_decompressDCtx(v->dctx, raw, (size_t)size, blob, len);
    bool ok = !ZSTD_isError(got) && got == size && memcmp(raw, CHUNK_MAGIC, 4) == 0;
    uint32_t n32 = 0, lay = 0;
    if (ok) {
        memcpy(&n32, raw + 4, 4);
        memcpy(&lay, raw + 8, 4);
    }
    ok = ok && n32 == n && lay == layout();
    size_t k = 12;
    for (size_t f = 0; ok && f < NFIELDS; f++) {
        size_t sz = fields[f].size;
        if (k >= got) {
            ok = false;
            break;
        }
        unsigned char tag = raw[k++];
        size_t need = tag == 0 ? sz : tag == 1 ? sz * n : SIZE_MAX;
        if (need == SIZE_MAX || got - k < need) {
            ok = false;
            break;
        }
        unsigned char *src = raw + k;
        size_t rows = tag ? n : 1;
        /* the values as the steps table gives them back (a damaged blob too): NaN one NaN, a
         * scope outside the enum unknown, in place */
        if (fields[f].kind == CF_DOUBLE && sz == sizeof(double)) {
            const double nan = NAN;
            for (size_t i = 0; i < rows; i++) {
                double x;
                memcpy(&x, src + i * sz, sizeof x);
                if (x != x)
                    memcpy(src + i * sz, &nan, sizeof nan);
            }
        } else if (fields[f].kind == CF_SCOPE && sz == sizeof(mfu_scope)) {
            const mfu_scope unknown = MFU_SCOPE_UNKNOWN;
            for (size_t i = 0; i < rows; i++) {
                mfu_scope x;
                memcpy(&x, src + i * sz, sizeof x);
                if (x != MFU_SCOPE_DEVICE && x != MFU_SCOPE_GLOBAL)
                    memcpy(src + i * sz, &unknown, sizeof unknown);
            }
        }
        v->cols.at[f] = src;
        v->cols.stride[f] = tag ? sz : 0;
        k += need;
    }
    return ok && k == got;
}

void mfu__chunk_rows(const mfu__chunk_view *v, size_t n, mfu_step *rows)
{
    for (size_t f = 0; f < NFIELDS; f++) {
        size_t off = fields[f].off, sz = fields[f].size, step = v->cols.stride[f];
        const unsigned char *src = v->cols.at[f];
        /* fixed sizes, so the copies are moves, not calls */
        if (sz == 8) {
            for (size_t i = 0; i < n; i++)
                memcpy((char *)&rows[i] + off, src + i * step, 8);
        } else if (sz == 4) {
            for (size_t i = 0; i < n; i++)
                memcpy((char *)&rows[i] + off, src + i * step, 4);
        } else {
            for (size_t i = 0; i < n; i++)
                memcpy((char *)&rows[i] + off, src + i * step, sz);
        }
    }
}

void mfu__chunk_close(mfu__chunk_view *v)
{
    ZSTD_freeDCtx(v->dctx);
    free(v->raw);
    memset(v, 0, sizeof *v);
}

bool mfu__chunk_decode(const void *blob, size_t len, size_t n, mfu_step *rows)
{
    mfu__chunk_view v;
    memset(&v, 0, sizeof v);
    bool ok = mfu__chunk_open(&v, blob, len, n);
    if (ok)
        mfu__chunk_rows(&v, n, rows);
    mfu__chunk_close(&v);
    return ok;
}

mfu_status mfu__chunk_put(mfu_store *s, int64_t id, size_t chunk, mfu_step *rows, mfu_error *err)
{
    void *blob = NULL;
    size_t len = 0;
    mfu_status rs = mfu__chunk_encode(rows, MFU__CHUNK_ROWS, &blob, &len, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_stmt *st = NULL;
    rs = mfu__store_prepare(
        s, "INSERT OR REPLACE INTO step_chunks(run_id, chunk, nrows, data) VALUES(?,?,?,?)", &st,
        err);
    if (rs == MFU_OK) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)chunk);
        sqlite3_bind_int64(st, 3, MFU__CHUNK_ROWS);
        sqlite3_bind_blob(st, 4, blob, (int)len, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        if (rc != SQLITE_DONE)
            rs = mfu__store_fail(s, err, rc, "writing a chunk of rows");
        sqlite3_finalize(st);
    }
    free(blob);
    return rs;
}

mfu_status mfu__chunk_delete_from(mfu_store *s, int64_t id, size_t from_row, mfu_error *err)
{
    sqlite3_stmt *st = NULL;
    mfu_status rs =
        mfu__store_prepare(s, "DELETE FROM step_chunks WHERE run_id=? AND chunk>=?", &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)(from_row / MFU__CHUNK_ROWS));
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? MFU_OK : mfu__store_fail(s, err, rc, "deleting chunks of rows");
}
