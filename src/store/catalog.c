/*
 * catalog.c - what the store knows about its runs besides their rows: the listing, tags,
 * findings and source records.
 */
#include "store/internal.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/utf8.h"
#include "util/util.h"

/* ---- listing ---------------------------------------------------------------------------- */

struct mfu_store_list {
    size_t n;
    mfu_store_run_info *runs;
    size_t ntags;
    mfu_store_tag *tags; /* all tags, grouped by run in list order */
    char **strings;      /* every string the list owns */
    size_t nstrings, capstrings;
};

/* Keep a copy of text (NULL = "") in the list; NULL when out of memory. */
static const char *own(mfu_store_list *l, const unsigned char *text)
{
    if (l->nstrings == l->capstrings) {
        size_t cap = l->capstrings ? l->capstrings * 2 : 64;
        char **p = realloc(l->strings, cap * sizeof *p);
        if (!p)
            return NULL;
        l->strings = p;
        l->capstrings = cap;
    }
    char *c = mfu__strdup(text ? (const char *)text : "");
    if (c)
        l->strings[l->nstrings++] = c;
    return c;
}

void mfu_store_list_free(mfu_store_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->nstrings; i++)
        free(l->strings[i]);
    free(l->strings);
    free(l->runs);
    free(l->tags);
    free(l);
}

size_t mfu_store_list_count(const mfu_store_list *l)
{
    return l ? l->n : 0;
}

const mfu_store_run_info *mfu_store_list_at(const mfu_store_list *l, size_t i)
{
    return l && i < l->n ? &l->runs[i] : NULL;
}

static int64_t count_rows(mfu_store *s, const char *table, mfu_error *err, mfu_status *rs)
{
    char sql[64];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    sqlite3_stmt *st = NULL;
    *rs = mfu__store_prepare(s, sql, &st, err);
    if (*rs != MFU_OK)
        return 0;
    int64_t n = 0;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    else
        *rs = mfu__store_fail(s, err, rc, "counting runs");
    sqlite3_finalize(st);
    return n;
}

static mfu_status list_fill(mfu_store *s, mfu_store_list *l, mfu_error *err)
{
    mfu_status rs = MFU_OK;
    int64_t nruns = count_rows(s, "runs", err, &rs);
    if (rs != MFU_OK)
        return rs;
    int64_t ntags = count_rows(s, "tags", err, &rs);
    if (rs != MFU_OK)
        return rs;
    l->runs = calloc(nruns ? (size_t)nruns : 1, sizeof *l->runs);
    l->tags = calloc(ntags ? (size_t)ntags : 1, sizeof *l->tags);
    if (!l->runs || !l->tags)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory listing runs");
    sqlite3_stmt *st = NULL;
    rs = mfu__store_prepare(
        s,
        "SELECT id, name, format, created_s, updated_s, nrows, first_step, "
        "last_step, complete, src_path, src_bytes, src_lines, context_json FROM runs "
        "ORDER BY name",
        &st, err);
    if (rs != MFU_OK)
        return rs;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && l->n < (size_t)nruns) {
        mfu_store_run_info *r = &l->runs[l->n];
        r->id = sqlite3_column_int64(st, 0);
        r->name = own(l, sqlite3_column_text(st, 1));
        r->format = own(l, sqlite3_column_text(st, 2));
        r->created_s = sqlite3_column_int64(st, 3);
        r->updated_s = sqlite3_column_int64(st, 4);
        r->steps = sqlite3_column_int64(st, 5);
        r->first_step = sqlite3_column_int64(st, 6);
        r->last_step = sqlite3_column_int64(st, 7);
        r->complete = sqlite3_column_int(st, 8) != 0;
        r->source = own(l, sqlite3_column_text(st, 9));
        r->source_bytes = sqlite3_column_int64(st, 10);
        r->source_lines = sqlite3_column_int64(st, 11);
        r->context = own(l, sqlite3_column_text(st, 12));
        r->tags = l->tags; /* fixed below */
        if (!r->name || !r->format || !r->source || !r->context) {
            sqlite3_finalize(st);
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory listing runs");
        }
        l->n++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return mfu__store_fail(s, err, rc, "listing runs");
    /* Tags: grouped per run in list order, each group sorted by key. */
    rs = mfu__store_prepare(s, "SELECT key, value FROM tags WHERE run_id=? ORDER BY key", &st, err);
    if (rs != MFU_OK)
        return rs;
    for (size_t i = 0; i < l->n; i++) {
        mfu_store_run_info *r = &l->runs[i];
        r->tags = l->tags + l->ntags;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, r->id);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW && l->ntags < (size_t)ntags) {
            mfu_store_tag *t = &l->tags[l->ntags];
            t->key = own(l, sqlite3_column_text(st, 0));
            t->value = own(l, sqlite3_column_text(st, 1));
            if (!t->key || !t->value) {
                sqlite3_finalize(st);
                return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory listing runs");
            }
            l->ntags++;
            r->ntags++;
        }
        if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
            rs = mfu__store_fail(s, err, rc, "listing tags");
            break;
        }
    }
    sqlite3_finalize(st);
    return rs;
}

mfu_status mfu_store_list_runs(mfu_store *s, mfu_store_list **out, mfu_error *err)
{
    if (out)
        *out = NULL;
    if (!s || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_list_runs: NULL argument");
    mfu_store_list *l = calloc(1, sizeof *l);
    if (!l)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    /* One read transaction: counts, runs and tags from the same snapshot. */
    mfu_status rs = mfu__store_exec(s, "BEGIN", err);
    if (rs == MFU_OK) {
        rs = list_fill(s, l, err);
        mfu__store_exec(s, "COMMIT", NULL);
    }
    if (rs != MFU_OK) {
        mfu_store_list_free(l);
        return rs;
    }
    *out = l;
    return MFU_OK;
}

/* ---- tags ------------------------------------------------------------------------------- */

static mfu_status check_key(const char *key, mfu_error *err)
{
    size_t n = key ? strlen(key) : 0;
    if (n == 0 || n >= MFU_STORE_TAG_KEY_MAX)
        return mfu__fail_field(err, MFU_E_INVALID, "--tag",
                               "tag key must be 1 to %d bytes; write --tag KEY=VALUE",
                               MFU_STORE_TAG_KEY_MAX - 1);
    for (size_t i = 0; i < n; i++) {
        char c = key[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == ':' || c == '-';
        if (!ok)
            return mfu__fail_field(err, MFU_E_INVALID, "--tag",
                                   "tag key '%s' holds '%c'; use letters, digits and _ . : - "
                                   "(--tag KEY=VALUE)",
                                   key, c);
    }
    return MFU_OK;
}

static mfu_status check_value(const char *v, mfu_error *err)
{
    size_t n = strlen(v);
    if (n >= MFU_STORE_TAG_VALUE_MAX)
        return mfu__fail_field(err, MFU_E_INVALID, "--tag",
                               "tag value of %zu bytes is too long (at most %d); shorten it", n,
                               MFU_STORE_TAG_VALUE_MAX - 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c < 0x20 || c == 0x7f)
            return mfu__fail_field(err, MFU_E_INVALID, "--tag",
                                   "tag value holds a control character (byte %zu); remove it",
                                   i + 1);
    }
    size_t bad = 0;
    if (!mfu__utf8_valid(v, n, &bad))
        return mfu__fail_field(err, MFU_E_INVALID, "--tag",
                               "tag value is not valid UTF-8 (byte %zu, 0x%02x); give it in UTF-8",
                               bad + 1, (unsigned char)v[bad]);
    return MFU_OK;
}

mfu_status mfu_store_check_tag(const char *key, const char *value, mfu_error *err)
{
    mfu_status rs = check_key(key, err);
    if (rs == MFU_OK && value)
        rs = check_value(value, err);
    return rs;
}

mfu_status mfu_store_set_tag(mfu_store *s, int64_t id, const char *key, const char *value,
                             mfu_error *err)
{
    if (!s)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_set_tag: store is NULL");
    mfu_status rs = mfu__store_writable(s, err);
    if (rs == MFU_OK)
        rs = mfu_store_check_tag(key, value, err);
    if (rs != MFU_OK)
        return rs;
    rs = mfu__store_begin(s, err);
    if (rs != MFU_OK)
        return rs;
    rs = mfu__store_run_state(s, id, NULL, NULL, err);
    sqlite3_stmt *st = NULL;
    if (rs == MFU_OK)
        rs = mfu__store_prepare(s,
                                value ? "INSERT INTO tags(run_id, key, value) VALUES(?,?,?) ON "
                                        "CONFLICT(run_id, key) DO UPDATE SET value=excluded.value"
                                      : "DELETE FROM tags WHERE run_id=? AND key=?",
                                &st, err);
    if (rs == MFU_OK) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
        if (value)
            sqlite3_bind_text(st, 3, value, -1, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        if (rc != SQLITE_DONE)
            rs = mfu__store_fail(s, err, rc, "writing a tag");
    }
    sqlite3_finalize(st);
    if (rs != MFU_OK) {
        mfu__store_rollback(s);
        return rs;
    }
    return mfu__store_commit(s, err);
}

mfu_status mfu_store_get_tag(mfu_store *s, int64_t id, const char *key, char *value, size_t n,
                             mfu_error *err)
{
    if (!s || !key || !value || n == 0)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_get_tag: NULL argument or size 0");
    sqlite3_stmt *st = NULL;
    mfu_status rs =
        mfu__store_prepare(s, "SELECT value FROM tags WHERE run_id=? AND key=?", &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        if (mfu__strlcpy(value, v ? v : "", n) >= n)
            rs = mfu__fail(err, MFU_E_LIMIT, 0,
                           "tag '%s' is longer than the %zu-byte buffer; pass a buffer of %d "
                           "bytes",
                           key, n, MFU_STORE_TAG_VALUE_MAX);
    } else if (rc == SQLITE_DONE) {
        rs = mfu__fail_field(err, MFU_E_MISSING, key,
                             "run %lld has no tag '%s'; set it with "
                             "--tag %s=VALUE",
                             (long long)id, key, key);
    } else {
        rs = mfu__store_fail(s, err, rc, "reading a tag");
    }
    sqlite3_finalize(st);
    return rs;
}

/* ---- context ---------------------------------------------------------------------------- */

mfu_status mfu_store_check_context(const char *context_json, mfu_error *err)
{
    if (!context_json)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_check_context: NULL context");
    size_t n = strlen(context_json);
    if (n >= MFU_STORE_CONTEXT_MAX)
        return mfu__fail(err, MFU_E_LIMIT, 0,
                         "run context of %zu bytes is longer than the limit of %d; pass fewer "
                         "options (--doc-lengths: use --mean-doc-len)",
                         n, MFU_STORE_CONTEXT_MAX - 1);
    json_error_t je;
    json_t *v = json_loadb(context_json, n, JSON_REJECT_DUPLICATES, &je);
    bool ok = v && json_is_array(v);
    for (size_t i = 0; ok && i < json_array_size(v); i++)
        ok = json_is_string(json_array_get(v, i));
    json_decref(v);
    if (!ok)
        return mfu__fail(err, MFU_E_PARSE, 0,
                         "run context is not a JSON array of strings (the command-line "
                         "arguments); write it as [\"--model\",\"NAME\",...]");
    return MFU_OK;
}

mfu_status mfu_store_set_context(mfu_store *s, int64_t id, const char *context_json, mfu_error *err)
{
    if (!s)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_set_context: store is NULL");
    mfu_status rs = mfu__store_writable(s, err);
    if (rs == MFU_OK && context_json && context_json[0])
        rs = mfu_store_check_context(context_json, err);
    if (rs != MFU_OK)
        return rs;
    rs = mfu__store_begin(s, err);
    if (rs != MFU_OK)
        return rs;
    rs = mfu__store_run_state(s, id, NULL, NULL, err);
    sqlite3_stmt *st = NULL;
    if (rs == MFU_OK)
        rs = mfu__store_prepare(
            s, "UPDATE runs SET context_json=?, updated_s=? WHERE id=? AND context_json IS NOT ?1",
            &st, err);
    if (rs == MFU_OK) {
        sqlite3_bind_text(st, 1, context_json ? context_json : "", -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, mfu__store_now_s());
        sqlite3_bind_int64(st, 3, id);
        int rc = sqlite3_step(st);
        if (rc != SQLITE_DONE)
            rs = mfu__store_fail(s, err, rc, "writing the run context");
    }
    sqlite3_finalize(st);
    if (rs != MFU_OK) {
        mfu__store_rollback(s);
        return rs;
    }
    return mfu__store_commit(s, err);
}

mfu_status mfu_store_get_context(mfu_store *s, int64_t id, char **out, mfu_error *err)
{
    if (out)
        *out = NULL;
    if (!s || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_get_context: NULL argument");
    sqlite3_stmt *st = NULL;
    mfu_status rs = mfu__store_prepare(s, "SELECT context_json FROM runs WHERE id=?", &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        if (v && v[0] && !(*out = mfu__strdup(v)))
            rs = mfu__fail(err, MFU_E_NOMEM, 0, "out of memory reading the run context");
    } else if (rc == SQLITE_DONE) {
        rs = mfu__fail(err, MFU_E_INVALID, 0, "no run with id %lld; list the runs with 'mfu runs'",
                       (long long)id);
    } else {
        rs = mfu__store_fail(s, err, rc, "reading the run context");
    }
    sqlite3_finalize(st);
    return rs;
}

/* ---- findings --------------------------------------------------------------------------- */

struct mfu_store_findings {
    size_t n;
    mfu_store_finding *f;
    char **strings; /* 4 per finding */
};

size_t mfu_store_findings_count(const mfu_store_findings *f)
{
    return f ? f->n : 0;
}

const mfu_store_finding *mfu_store_findings_at(const mfu_store_findings *f, size_t i)
{
    return f && i < f->n ? &f->f[i] : NULL;
}

void mfu_store_findings_free(mfu_store_findings *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < 4 * f->n; i++)
        free(f->strings[i]);
    free(f->strings);
    free(f->f);
    free(f);
}

static mfu_status check_finding(const mfu_store_finding *f, size_t i, mfu_error *err)
{
    if (!f->kind || !f->kind[0] || !f->severity || !f->severity[0])
        return mfu__fail(err, MFU_E_INVALID, 0, "finding %zu has no kind or severity; set both", i);
    if (f->evidence_json) {
        json_error_t je;
        json_t *o = json_loads(f->evidence_json, 0, &je);
        bool ok = json_is_object(o);
        json_decref(o);
        if (!ok)
            return mfu__fail(err, MFU_E_PARSE, 0,
                             "finding %zu: evidence is not a JSON object (%s); pass an object "
                             "such as {\"x\": 1}",
                             i, o ? "another JSON value" : je.text);
    }
    return MFU_OK;
}

mfu_status mfu_store_replace_findings(mfu_store *s, int64_t id, const mfu_store_finding *f,
                                      size_t n, mfu_error *err)
{
    if (!s || (!f && n))
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_replace_findings: NULL argument");
    mfu_status rs = mfu__store_writable(s, err);
    for (size_t i = 0; rs == MFU_OK && i < n; i++)
        rs = check_finding(&f[i], i, err);
    if (rs != MFU_OK)
        return rs;
    rs = mfu__store_begin(s, err);
    if (rs != MFU_OK)
        return rs;
    rs = mfu__store_run_state(s, id, NULL, NULL, err);
    sqlite3_stmt *st = NULL;
    if (rs == MFU_OK)
        rs = mfu__store_prepare(s, "DELETE FROM findings WHERE run_id=?", &st, err);
    if (rs == MFU_OK) {
        sqlite3_bind_int64(st, 1, id);
        int rc = sqlite3_step(st);
        if (rc != SQLITE_DONE)
            rs = mfu__store_fail(s, err, rc, "clearing findings");
        sqlite3_finalize(st);
        st = NULL;
    }
    if (rs == MFU_OK)
        rs = mfu__store_prepare(s,
                                "INSERT INTO findings(run_id, seq, kind, severity, first_step, "
                                "last_step, evidence_json, next_step) VALUES(?,?,?,?,?,?,?,?)",
                                &st, err);
    for (size_t i = 0; rs == MFU_OK && i < n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
        sqlite3_bind_text(st, 3, f[i].kind, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, f[i].severity, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, f[i].first_step);
        sqlite3_bind_int64(st, 6, f[i].last_step);
        sqlite3_bind_text(st, 7, f[i].evidence_json ? f[i].evidence_json : "{}", -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 8, f[i].next_step ? f[i].next_step : "", -1, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        if (rc != SQLITE_DONE)
            rs = mfu__store_fail(s, err, rc, "writing findings");
    }
    sqlite3_finalize(st);
    if (rs != MFU_OK) {
        mfu__store_rollback(s);
        return rs;
    }
    return mfu__store_commit(s, err);
}

mfu_status mfu_store_get_findings(mfu_store *s, int64_t id, mfu_store_findings **out,
                                  mfu_error *err)
{
    if (out)
        *out = NULL;
    if (!s || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_get_findings: NULL argument");
    mfu_status rs = mfu__store_exec(s, "BEGIN", err);
    if (rs != MFU_OK)
        return rs;
    mfu_store_findings *fs = calloc(1, sizeof *fs);
    sqlite3_stmt *st = NULL;
    int64_t count = 0;
    rs = fs ? mfu__store_run_state(s, id, NULL, NULL, err)
            : mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    if (rs == MFU_OK)
        rs = mfu__store_prepare(s, "SELECT count(*) FROM findings WHERE run_id=?", &st, err);
    if (rs == MFU_OK) {
        sqlite3_bind_int64(st, 1, id);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            count = sqlite3_column_int64(st, 0);
        else
            rs = mfu__store_fail(s, err, rc, "counting findings");
        sqlite3_finalize(st);
        st = NULL;
    }
    if (rs == MFU_OK) {
        fs->f = calloc(count ? (size_t)count : 1, sizeof *fs->f);
        fs->strings = calloc(count ? 4 * (size_t)count : 1, sizeof *fs->strings);
        if (!fs->f || !fs->strings)
            rs = mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    }
    if (rs == MFU_OK)
        rs = mfu__store_prepare(s,
                                "SELECT kind, severity, first_step, last_step, evidence_json, "
                                "next_step FROM findings WHERE run_id=? ORDER BY seq",
                                &st, err);
    if (rs == MFU_OK) {
        sqlite3_bind_int64(st, 1, id);
        int rc;
        while (rs == MFU_OK && fs->n < (size_t)count && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            char **str = &fs->strings[4 * fs->n];
            int cols[4] = {0, 1, 4, 5};
            for (int k = 0; k < 4; k++) {
                const unsigned char *t = sqlite3_column_text(st, cols[k]);
                str[k] = mfu__strdup(t ? (const char *)t : "");
                if (!str[k])
                    rs = mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
            }
            mfu_store_finding *f = &fs->f[fs->n++];
            f->kind = str[0];
            f->severity = str[1];
            f->first_step = sqlite3_column_int64(st, 2);
            f->last_step = sqlite3_column_int64(st, 3);
            f->evidence_json = str[2];
            f->next_step = str[3];
        }
    }
    sqlite3_finalize(st);
    mfu__store_exec(s, "COMMIT", NULL);
    if (rs != MFU_OK) {
        mfu_store_findings_free(fs);
        return rs;
    }
    *out = fs;
    return MFU_OK;
}

/* ---- source records --------------------------------------------------------------------- */

mfu_status mfu_store_get_source(mfu_store *s, int64_t id, mfu_store_source *out, mfu_error *err)
{
    if (!s || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_get_source: NULL argument");
    sqlite3_stmt *st = NULL;
    mfu_status rs = mfu__store_prepare(s,
                                       "SELECT src_path, src_dev, src_inode, src_mtime_ns, "
                                       "src_head_bytes, src_head_hash, src_tail_hash, src_bytes, "
                                       "src_lines, complete FROM runs WHERE id=?",
                                       &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        memset(out, 0, sizeof *out);
        const unsigned char *p = sqlite3_column_text(st, 0);
        mfu__strlcpy(out->path, p ? (const char *)p : "", sizeof out->path);
        out->dev = sqlite3_column_int64(st, 1);
        out->inode = sqlite3_column_int64(st, 2);
        out->mtime_ns = sqlite3_column_int64(st, 3);
        out->head_bytes = sqlite3_column_int64(st, 4);
        out->head_hash = (uint64_t)sqlite3_column_int64(st, 5);
        out->tail_hash = (uint64_t)sqlite3_column_int64(st, 6);
        out->bytes = sqlite3_column_int64(st, 7);
        out->lines = sqlite3_column_int64(st, 8);
        out->complete = sqlite3_column_int(st, 9) != 0;
    } else if (rc == SQLITE_DONE) {
        rs = mfu__fail(err, MFU_E_INVALID, 0,
                       "%s: no run with id %lld; list the runs with 'mfu runs'", s->path,
                       (long long)id);
    } else {
        rs = mfu__store_fail(s, err, rc, "reading a source record");
    }
    sqlite3_finalize(st);
    return rs;
}

mfu_status mfu_store_set_source(mfu_store *s, int64_t id, const mfu_store_source *src,
                                mfu_error *err)
{
    if (!s)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_set_source: store is NULL");
    mfu_status rs = mfu__store_writable(s, err);
    if (rs == MFU_OK)
        rs = mfu__store_begin(s, err);
    if (rs != MFU_OK)
        return rs;
    rs = mfu__store_run_state(s, id, NULL, NULL, err);
    if (rs == MFU_OK)
        rs = mfu__store_put_source(s, id, src, err);
    if (rs != MFU_OK) {
        mfu__store_rollback(s);
        return rs;
    }
    return mfu__store_commit(s, err);
}
