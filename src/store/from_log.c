/*
 * from_log.c - ingest a log file into a run of the store, and ingest it again idempotently.
 *
 * A run made from a file records the file's identity (device, inode, mtime, a hash of its
 * first KiB) and the position read (bytes, lines), plus a hash of the KiB before that
 * position. The next ingest of the same path compares:
 *
 *   unchanged  same device and inode, size == bytes read, same mtime, same hashes, the last
 *              ingest completed, no other --format asked: nothing is read or written;
 *   resumed    same device and inode, size >= bytes read, same hashes (the file only grew,
 *              or the last ingest was interrupted): the log is read again from its start
 *              (the ingest API cannot start mid-file: a format needs the header and its
 *              state), and rows from MFU_STORE_RESUME_OVERLAP before the stored end on are
 *              written, after checking that the row before them is unchanged and that the
 *              per-rank observations kept (all of rows before them) are those of this read;
 *   restarted  anything else (truncated, replaced, rewritten, another format came out, the
 *              check row differs): every row is rewritten from row 0.
 *
 * Reading the whole log again costs the parse (about 100 MB/s), not the writes; the result
 * is the same rows a fresh ingest would store. The writes go through the batched writer, so
 * a kill at any point leaves rows 0..n-1 of one read and the record saying it is incomplete;
 * the next ingest resumes from there.
 */
#define _XOPEN_SOURCE 700 /* realpath (XSI) */
#include "store/internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/step.h"
#include "util/file.h"
#include "util/utf8.h"
#include "util/util.h"

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

/* FNV-1a 64 of n bytes of fd at off (pread: the file offset does not move). false when the
 * file holds fewer bytes there. */
static bool hash_range(int fd, int64_t off, int64_t n, uint64_t *out)
{
    unsigned char buf[MFU_STORE_HASH_BYTES];
    uint64_t h = FNV_OFFSET;
    while (n > 0) {
        size_t want = n > (int64_t)sizeof buf ? sizeof buf : (size_t)n;
        ssize_t got = pread(fd, buf, want, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        for (ssize_t i = 0; i < got; i++) {
            h ^= buf[i];
            h *= FNV_PRIME;
        }
        off += got;
        n -= got;
    }
    *out = h;
    return true;
}

/* Hash the start of the file and the bytes before `bytes` into src (bytes, fd given). */
static bool hash_source(int fd, mfu_store_source *src)
{
    int64_t n = src->bytes < MFU_STORE_HASH_BYTES ? src->bytes : MFU_STORE_HASH_BYTES;
    src->head_bytes = n;
    return hash_range(fd, 0, n, &src->head_hash) &&
           hash_range(fd, src->bytes - n, n, &src->tail_hash);
}

void mfu_store_default_name(const char *path, char *name, size_t n)
{
    if (!name || n == 0)
        return;
    const char *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : (path ? path : "");
    char tmp[MFU_STORE_NAME_MAX];
    mfu__strlcpy(tmp, base, sizeof tmp);
    size_t len = strlen(tmp);
    static const char *const zip[] = {".gz", ".zst"};
    for (size_t i = 0; i < MFU__ARRAY_LEN(zip); i++) {
        size_t zl = strlen(zip[i]);
        if (len > zl && strcmp(tmp + len - zl, zip[i]) == 0) {
            tmp[len - zl] = '\0';
            len -= zl;
            break;
        }
    }
    char *dot = strrchr(tmp, '.');
    if (dot && dot != tmp)
        *dot = '\0';
    /* control characters, and bytes that are not UTF-8 (a Latin-1 file name, a character cut
     * by the length limit), become '_': a run name is valid UTF-8 */
    size_t tl = strlen(tmp);
    for (size_t i = 0; i < tl;) {
        unsigned cp;
        size_t k = mfu__utf8_seq((const unsigned char *)tmp + i, tl - i, &cp);
        if (k == 0 || cp < 0x20 || cp == 0x7f) {
            tmp[i++] = '_';
            continue;
        }
        i += k;
    }
    if (tmp[0] == '-')
        tmp[0] = '_';
    mfu__strlcpy(name, tmp[0] ? tmp : "run", n);
}

const char *mfu_store_action_name(mfu_store_action a)
{
    switch (a) {
    case MFU_STORE_CREATED: return "created";
    case MFU_STORE_UNCHANGED: return "unchanged";
    case MFU_STORE_RESUMED: return "resumed";
    case MFU_STORE_RESTARTED: return "restarted";
    }
    return "?";
}

static mfu_status stored_format(mfu_store *s, int64_t id, char *buf, size_t n, mfu_error *err)
{
    sqlite3_stmt *st = NULL;
    mfu_status rs = mfu__store_prepare(s, "SELECT format FROM runs WHERE id=?", &st, err);
    if (rs != MFU_OK)
        return rs;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    buf[0] = '\0';
    if (rc == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        mfu__strlcpy(buf, t ? (const char *)t : "", n);
    } else if (rc != SQLITE_DONE) {
        rs = mfu__store_fail(s, err, rc, "reading a run");
    }
    sqlite3_finalize(st);
    return rs;
}

/* What is known before reading: the file now, the run as stored. */
typedef struct plan {
    bool has_identity; /* a regular file (not stdin) */
    mfu_store_source cur;
    struct stat sb;
    bool exists;
    int64_t id, gen;
    size_t nrows;
    mfu_store_source old;
    char old_format[32];
    mfu_store_action action;
    size_t from;
    char reason[160];
} plan;

/* Compare the stored source with the file as it is now; fills p->action/from/reason. */
static void decide(plan *p, int fd, const mfu_store_ingest_opts *o)
{
    const mfu_store_source *old = &p->old;
    if (!p->exists) {
        p->action = MFU_STORE_CREATED;
        return;
    }
    p->action = MFU_STORE_RESTARTED;
    if (!p->has_identity) {
        snprintf(p->reason, sizeof p->reason,
                 "not a regular file (stdin, a pipe): the run is rewritten");
        return;
    }
    if ((int64_t)p->sb.st_dev != old->dev || (int64_t)p->sb.st_ino != old->inode) {
        snprintf(p->reason, sizeof p->reason, "the file was replaced (another inode)");
        return;
    }
    if ((int64_t)p->sb.st_size < old->bytes) {
        snprintf(p->reason, sizeof p->reason,
                 "the file is shorter (%lld bytes) than what was read before (%lld): truncated",
                 (long long)p->sb.st_size, (long long)old->bytes);
        return;
    }
    uint64_t h = 0;
    if (!hash_range(fd, 0, old->head_bytes, &h) || h != old->head_hash) {
        snprintf(p->reason, sizeof p->reason, "its first %lld bytes changed",
                 (long long)old->head_bytes);
        return;
    }
    if (!hash_range(fd, old->bytes - old->head_bytes, old->head_bytes, &h) || h != old->tail_hash) {
        snprintf(p->reason, sizeof p->reason, "the %lld bytes before byte %lld changed",
                 (long long)old->head_bytes, (long long)old->bytes);
        return;
    }
    const char *fmt = o->ingest.format;
    bool other_format = fmt && fmt[0] && mfu__strcasecmp(fmt, "auto") != 0 &&
                        mfu__strcasecmp(fmt, p->old_format) != 0;
    if ((int64_t)p->sb.st_size == old->bytes && p->cur.mtime_ns == old->mtime_ns && old->complete &&
        !other_format) {
        p->action = MFU_STORE_UNCHANGED;
        return;
    }
    p->action = MFU_STORE_RESUMED;
    p->from = p->nrows > MFU_STORE_RESUME_OVERLAP ? p->nrows - MFU_STORE_RESUME_OVERLAP : 0;
}

/* After the read: can the resume stand? Falls back to a restart with the reason. */
static mfu_status confirm_resume(mfu_store *s, plan *p, const mfu_run *run, mfu_error *err)
{
    const char *fmt = mfu_run_meta_get(run)->format;
    if (strcmp(fmt, p->old_format) != 0) {
        snprintf(p->reason, sizeof p->reason, "the log now reads as format '%s', not '%s'", fmt,
                 p->old_format);
        goto restart;
    }
    if (mfu_run_count(run) < p->from) {
        snprintf(p->reason, sizeof p->reason, "the log now gives %zu rows, fewer than stored",
                 mfu_run_count(run));
        goto restart;
    }
    if (p->from > 0) {
        mfu_step stored, fresh;
        bool found = false;
        mfu_status rs = mfu__store_get_row(s, p->id, p->from - 1, &stored, &found, err);
        if (rs != MFU_OK)
            return rs;
        mfu_run_get(run, p->from - 1, &fresh);
        if (!found || !mfu__step_equal(&stored, &fresh)) {
            snprintf(p->reason, sizeof p->reason, "row %zu differs from the stored one",
                     p->from - 1);
            goto restart;
        }
    }
    /* The per-rank observations kept (numbered below first_seq, all of rows before the resume
     * point) must be those of the fresh read: as many, and the last one the same. */
    size_t first_seq = mfu__store_obs_first_seq(run, p->from), kept = 0;
    mfu_rank_obs stored_obs, fresh_obs;
    bool found_obs = false;
    mfu_status rs =
        mfu__store_obs_prefix(s, p->id, first_seq, p->from, &kept, &stored_obs, &found_obs, err);
    if (rs != MFU_OK)
        return rs;
    if (kept != first_seq ||
        (first_seq > 0 && (!found_obs || !mfu_run_rank_obs_get(run, first_seq - 1, &fresh_obs) ||
                           !mfu__rank_obs_equal(&stored_obs, &fresh_obs)))) {
        snprintf(p->reason, sizeof p->reason,
                 "the per-rank observations before row %zu differ from the stored ones", p->from);
        goto restart;
    }
    return MFU_OK;
restart:
    p->action = MFU_STORE_RESTARTED;
    p->from = 0;
    return MFU_OK;
}

/* Look the run up and check that this source may write it. */
static mfu_status load_run(mfu_store *s, const char *name, plan *p, mfu_error *err)
{
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status rs = mfu_store_find_run(s, name, &p->id, &e);
    if (rs == MFU_E_UNKNOWN)
        return MFU_OK;
    if (rs != MFU_OK) {
        if (err)
            *err = e;
        return rs;
    }
    p->exists = true;
    rs = mfu__store_run_state(s, p->id, &p->nrows, &p->gen, err);
    if (rs == MFU_OK)
        rs = mfu_store_get_source(s, p->id, &p->old, err);
    if (rs == MFU_OK)
        rs = stored_format(s, p->id, p->old_format, sizeof p->old_format, err);
    if (rs != MFU_OK)
        return rs;
    if (strcmp(p->old.path, p->cur.path) != 0)
        return mfu__fail_field(
            err, MFU_E_INVALID, "--run",
            "%s: run '%s' was made from %s, not from %s; name this log's run with --run NAME, "
            "or remove the other first (mfu rm %s)",
            s->path, name, p->old.path[0] ? p->old.path : "stdin or the API",
            p->cur.path[0] ? p->cur.path : "stdin", name);
    return MFU_OK;
}

static void fill_result(mfu_store_ingest_result *res, const plan *p, const char *name)
{
    res->run_id = p->id;
    mfu__strlcpy(res->run_name, name, sizeof res->run_name);
    res->action = p->action;
    mfu__strlcpy(res->reason, p->reason, sizeof res->reason);
}

/* One read of f into run `name`. *raced is set when the run did not exist when planned and
 * another writer created it before this one could (two ingests of one new run at once). */
static mfu_status ingest_once(mfu_store *s, FILE *f, const char *path, bool is_stdin,
                              const char *name, const mfu_store_ingest_opts *o,
                              mfu_store_ingest_result *res, bool *raced, mfu_error *err)
{
    mfu_status rs;
    plan *p = calloc(1, sizeof *p);
    if (!p)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    int fd = fileno(f);
    if (!is_stdin) {
        char *abs = realpath(path, NULL);
        mfu__strlcpy(p->cur.path, abs ? abs : path, sizeof p->cur.path);
        free(abs);
    }
    if (!is_stdin && fd >= 0 && fstat(fd, &p->sb) == 0 && S_ISREG(p->sb.st_mode)) {
        p->has_identity = true;
        p->cur.dev = (int64_t)p->sb.st_dev;
        p->cur.inode = (int64_t)p->sb.st_ino;
        p->cur.mtime_ns = (int64_t)p->sb.st_mtim.tv_sec * 1000000000 + p->sb.st_mtim.tv_nsec;
    }
    mfu_run *run = NULL;
    mfu_ingest *ing = NULL;
    rs = load_run(s, name, p, err);
    if (rs != MFU_OK)
        goto done;
    decide(p, fd, o);
    fill_result(res, p, name);
    if (p->action == MFU_STORE_UNCHANGED) {
        res->rows = p->nrows;
        res->bytes = p->old.bytes;
        res->lines = p->old.lines;
        mfu__strlcpy(res->stats.format, p->old_format, sizeof res->stats.format);
        goto done;
    }

    /* Read the whole log. */
    rs = mfu_ingest_new(&o->ingest, &ing, err);
    if (rs == MFU_OK)
        rs = mfu_ingest_feed_file(ing, f, is_stdin ? "stdin" : path, err);
    if (ing)
        res->stats = *mfu_ingest_get_stats(ing);
    if (rs == MFU_OK)
        rs = mfu_ingest_finish(ing, &run, err);
    if (ing)
        res->stats = *mfu_ingest_get_stats(ing);
    if (rs != MFU_OK)
        goto done;
    if (p->has_identity) {
        long end = ftell(f);
        p->cur.bytes = end > 0 ? (int64_t)end : 0;
        p->cur.lines = res->stats.lines;
        if (!hash_source(fd, &p->cur)) {
            rs = mfu__fail(err, MFU_E_IO, 0,
                           "%s: the file shrank while it was read; ingest it again", path);
            goto done;
        }
    } else {
        p->cur.lines = res->stats.lines;
    }
    res->text_repaired = mfu__store_meta_repairs(mfu_run_meta_get(run));
    if (p->action == MFU_STORE_RESUMED) {
        rs = confirm_resume(s, p, run, err);
        if (rs != MFU_OK)
            goto done;
    }

    mfu__store_write w;
    memset(&w, 0, sizeof w);
    w.id = p->id;
    w.create_name = p->exists ? NULL : name;
    w.from = p->from;
    w.total = mfu_run_count(run);
    w.get = mfu__store_run_row;
    w.ctx = run;
    w.meta = mfu_run_meta_get(run);
    w.obs_src = run;
    w.src_mode = MFU__SRC_SET;
    w.src = &p->cur;
    w.check_gen = p->exists;
    w.gen = p->gen;
    rs = mfu__store_write_rows(s, &w, err);
    if (rs != MFU_OK) {
        int64_t other = 0;
        if (!p->exists && mfu_store_find_run(s, name, &other, NULL) == MFU_OK)
            *raced = true;
        goto done;
    }
    p->id = w.id;
    if (p->action == MFU_STORE_RESTARTED) /* findings were about rows that are gone */
        rs = mfu_store_replace_findings(s, p->id, NULL, 0, err);
    fill_result(res, p, name);
    res->rows = w.total;
    res->rows_written = w.rows_written;
    res->bytes = p->cur.bytes;
    res->lines = p->cur.lines;
done:
    mfu_ingest_free(ing);
    mfu_run_free(run);
    free(p);
    return rs;
}

mfu_status mfu_store_ingest_file(mfu_store *s, FILE *f, const char *path,
                                 const mfu_store_ingest_opts *o, mfu_store_ingest_result *res,
                                 mfu_error *err)
{
    mfu_store_ingest_result dummy;
    if (!res)
        res = &dummy;
    memset(res, 0, sizeof *res);
    if (!s || !f || !path)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_ingest_file: NULL argument");
    mfu_store_ingest_opts none;
    memset(&none, 0, sizeof none);
    if (!o)
        o = &none;
    mfu_status rs = mfu__store_writable(s, err);
    if (rs != MFU_OK)
        return rs;
    bool is_stdin = strcmp(path, "-") == 0;
    char name[MFU_STORE_NAME_MAX];
    if (o->run_name && o->run_name[0]) {
        rs = mfu_store_check_name(o->run_name, err);
        if (rs != MFU_OK)
            return rs;
        mfu__strlcpy(name, o->run_name, sizeof name);
    } else if (is_stdin) {
        return mfu__fail_field(err, MFU_E_INVALID, "--run",
                               "a log read from stdin needs a run name; give one with --run NAME");
    } else {
        mfu_store_default_name(path, name, sizeof name);
    }
    bool raced = false;
    rs = ingest_once(s, f, path, is_stdin, name, o, res, &raced, err);
    if (!raced)
        return rs;
    /* Another ingest created the run while this one read the log. A file can be planned
     * again against what it wrote (unchanged, or resumed from its rows); a stream cannot be
     * read twice. */
    if (!is_stdin && fseek(f, 0, SEEK_SET) == 0) {
        memset(res, 0, sizeof *res);
        raced = false;
        rs = ingest_once(s, f, path, is_stdin, name, o, res, &raced, err);
        if (!raced)
            return rs;
    }
    return mfu__fail_field(err, MFU_E_IO, "--run",
                           "%s: run '%s' was created by another ingest while this one read %s; "
                           "ingest again when it is done",
                           mfu_store_path(s), name, is_stdin ? "stdin" : path);
}

mfu_status mfu_store_ingest_path(mfu_store *s, const char *path, const mfu_store_ingest_opts *o,
                                 mfu_store_ingest_result *res, mfu_error *err)
{
    if (res)
        memset(res, 0, sizeof *res);
    if (!s || !path)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_store_ingest_path: NULL argument");
    if (strcmp(path, "-") == 0)
        return mfu_store_ingest_file(s, stdin, path, o, res, err);
    FILE *f = mfu__open_log(path, err);
    if (!f)
        return MFU_E_IO;
    mfu_status rs = mfu_store_ingest_file(s, f, path, o, res, err);
    fclose(f);
    return rs;
}
