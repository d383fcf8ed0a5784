/*
 * follow.c - one thread per log named on the command line, following it like `tail -F`.
 *
 * The follower keeps an ingest session open on its file and feeds it the complete lines that
 * were appended since the last look (every MFU_SERVER_FOLLOW_POLL_MS); the run being read
 * (mfu_ingest_peek) is the run the server serves, borrowed, so following costs only the new
 * bytes. Each block of new lines is parsed under the run's write lock, then the rows from the
 * first one that changed (a new line can still merge into the last MFU_RUN_DEDUP_WINDOW rows)
 * go to open pages as a "steps" event.
 *
 * The file is read again from its start, into a fresh session, when it is no longer the file
 * the session read: another inode (rotated), fewer bytes than read (truncated), other first
 * bytes (rewritten in place), a compressed file that changed (it cannot be read from the
 * middle), or after a last line without a newline was read (a log that ended without one is
 * read once it has been still for a second; if it grows after all, the line may have been
 * cut). The fresh run replaces the served one and pages get a "run" event with "reset" when rows
 * far behind its end changed. A missing file is waited for.
 *
 * Rows reach the store through mfu_store_ingest_path() at most every MFU_SERVER_STORE_SYNC_MS
 * (or 10x the last write's duration, so the store is free most of the time) and once more at
 * shutdown; the store's own rules (resumed / restarted) keep it equal to the file.
 */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "server/internal.h"

#define READ_BLOCK (4L * 1024 * 1024) /* bytes read at a time; also the longest line kept */
#define HEAD_BYTES 1024               /* first bytes compared to recognise the file */

typedef struct mfu__follower {
    mfu__server *s;
    const char *path;
    char name[MFU__NAME_BYTES];
    mfu__srun *run;
    pthread_t th;
    bool started;
    /* the file as last seen by stat */
    bool have_sig;
    int64_t dev, ino, size, mtime_ns;
    bool pending, partial, dirty, missing;
    double changed_at, next_read, next_sync, read_cost;
    /* the session reading the file, and what it has read */
    mfu_ingest *ing;
    int64_t fdev, fino, offset;
    bool partial_fed, compressed;
    unsigned char head[HEAD_BYTES];
    size_t head_len;
    char *buf; /* READ_BLOCK bytes */
    char last_error[MFU_ERROR_MESSAGE_MAX + MFU__NAME_BYTES + 64];
} mfu__follower;

/* Log msg unless it repeats the last one logged by this follower. */
static void note(mfu__follower *f, const char *msg)
{
    if (strcmp(f->last_error, msg) == 0)
        return;
    mfu__strlcpy(f->last_error, msg, sizeof f->last_error);
    mfu__srv_log(f->s, "%s", msg);
}

static bool stopping(mfu__server *s)
{
    pthread_mutex_lock(&s->stop_mu);
    bool v = s->stopping;
    pthread_mutex_unlock(&s->stop_mu);
    return v;
}

/* Where the complete lines read go: straight into a session nobody sees yet, or, for the
 * served session, under the run's write lock with the changed rows sent to pages. */
typedef mfu_status (*chunk_fn)(mfu__follower *f, mfu_ingest *ing, const char *p, size_t n,
                               mfu_error *err);

static mfu_status feed_plain(mfu__follower *f, mfu_ingest *ing, const char *p, size_t n,
                             mfu_error *err)
{
    return mfu_ingest_feed_buffer(ing, p, n, f->path, err);
}

static mfu_status feed_served(mfu__follower *f, mfu_ingest *ing, const char *p, size_t n,
                              mfu_error *err)
{
    mfu__srun *r = f->run;
    mfu_step tail[MFU__TAIL];
    pthread_rwlock_wrlock(&r->rw);
    bool served = r->loaded && r->run == mfu_ingest_peek(ing);
    size_t old_n = served ? mfu_run_count(r->run) : 0;
    size_t ntail = served ? mfu__srun_tail(r, tail) : 0;
    mfu_run_meta meta;
    memset(&meta, 0, sizeof meta);
    size_t old_obs = 0;
    uint64_t version = r->version;
    if (served) {
        meta = *mfu_run_meta_get(r->run);
        old_obs = mfu_run_rank_obs_count(r->run);
    }
    mfu_status st = mfu_ingest_feed_buffer(ing, p, n, f->path, err);
    size_t first = 0, rows = 0;
    if (served) {
        r->run = mfu_ingest_peek(ing); /* the same run; the API promises it only till a feed */
        rows = mfu_run_count(r->run);
        first = mfu__srun_grew(&f->s->reg, r, old_n, tail, ntail, &meta, old_obs);
    }
    bool changed = served && r->version != version;
    pthread_rwlock_unlock(&r->rw);
    if (changed)
        f->dirty = true; /* observations alone too: the store keeps them */
    if (served && first < rows) {
        if (old_n == 0)
            mfu__api_broadcast_run(f->s, r, false);
        mfu__api_broadcast_rows(f->s, r, first);
    }
    return st;
}

/* Read fp from *offset to its end and hand every run of complete lines to fn (all of it when
 * whole). *partial: bytes after the last newline were left for later. A line longer than
 * READ_BLOCK is dropped (the ingest limit is shorter anyway). */
static mfu_status read_lines(mfu__follower *f, FILE *fp, mfu_ingest *ing, int64_t *offset,
                             bool whole, bool *partial, chunk_fn fn, mfu_error *err)
{
    char *buf = f->buf;
    size_t have = 0;
    bool skipping = false;
    mfu_status st = MFU_OK;
    *partial = false;
    if (fseeko(fp, (off_t)*offset, SEEK_SET) != 0)
        return mfu__fail(err, MFU_E_IO, 0, "%s: cannot seek (%s)", f->path, strerror(errno));
    for (;;) {
        if (stopping(f->s))
            return MFU_E_INVALID; /* abandoned */
        size_t got = fread(buf + have, 1, (size_t)READ_BLOCK - have, fp);
        have += got;
        if (got == 0) {
            if (ferror(fp))
                st = mfu__fail(err, MFU_E_IO, 0, "%s: read error (%s)", f->path, strerror(errno));
            break;
        }
        char *nl = NULL;
        for (size_t i = have; i > 0; i--)
            if (buf[i - 1] == '\n') {
                nl = buf + i - 1;
                break;
            }
        if (!nl) {
            if (have == (size_t)READ_BLOCK) { /* one line fills the block: drop it */
                *offset += (int64_t)have;
                have = 0;
                skipping = true;
            }
            continue;
        }
        size_t upto = (size_t)(nl - buf) + 1, start = 0;
        if (skipping) {
            start = (size_t)((char *)memchr(buf, '\n', upto) - buf) + 1;
            skipping = false;
        }
        if (upto > start)
            st = fn(f, ing, buf + start, upto - start, err);
        if (st != MFU_OK)
            return st;
        *offset += (int64_t)upto;
        memmove(buf, buf + upto, have - upto);
        have -= upto;
    }
    if (st == MFU_OK && have > 0 && !skipping) {
        if (whole) {
            st = fn(f, ing, buf, have, err);
            if (st == MFU_OK) {
                *offset += (int64_t)have;
                f->partial_fed = true;
            }
        } else {
            *partial = true;
        }
    }
    return st;
}

/* Is fp still the file the session read (same identity and first bytes, not shorter)? */
static bool same_file(mfu__follower *f, FILE *fp, const struct stat *sb)
{
    if (!f->ing || f->partial_fed || f->compressed || (int64_t)sb->st_dev != f->fdev ||
        (int64_t)sb->st_ino != f->fino || (int64_t)sb->st_size < f->offset)
        return false;
    unsigned char now[HEAD_BYTES];
    rewind(fp);
    size_t got = fread(now, 1, f->head_len, fp);
    return got == f->head_len && memcmp(now, f->head, f->head_len) == 0;
}

static void remember_head(mfu__follower *f, FILE *fp)
{
    rewind(fp);
    f->head_len = fread(f->head, 1, sizeof f->head, fp);
    if ((int64_t)f->head_len > f->offset)
        f->head_len = (size_t)f->offset; /* only what the session has read */
}

static void report(mfu__follower *f, const mfu_error *e)
{
    if (stopping(f->s))
        return;
    char msg[MFU_ERROR_MESSAGE_MAX + 64];
    snprintf(msg, sizeof msg, "%s: %s; still following", f->path, e->message);
    note(f, msg);
}

/* Read the file from its start into a fresh session and serve its run. */
static void restart(mfu__follower *f, FILE *fp, const struct stat *sb, bool whole)
{
    mfu__server *s = f->s;
    mfu_ingest *ing = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    int64_t offset = 0;
    bool partial = false;
    f->partial_fed = false;
    unsigned char magic[4] = {0};
    size_t m = fread(magic, 1, sizeof magic, fp);
    rewind(fp);
    bool zipped =
        (m >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) ||
        (m >= 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd);
    mfu_status st = mfu_ingest_new(&s->opts.ingest, &ing, &e);
    if (st == MFU_OK && zipped) {
        st = mfu_ingest_feed_file(ing, fp, f->path, &e); /* whole: not cut at a line */
        offset = (int64_t)sb->st_size;
    } else if (st == MFU_OK) {
        st = read_lines(f, fp, ing, &offset, whole, &partial, feed_plain, &e);
    }
    if (st != MFU_OK) {
        if (st != MFU_E_INVALID || !stopping(s))
            report(f, &e);
        mfu_ingest_free(ing);
        return;
    }
    f->last_error[0] = '\0';
    size_t first = 0, old_n = 0;
    const mfu_run *run = mfu_ingest_peek(ing);
    bool changed = mfu__srun_set(&s->reg, f->run, run, true, &first, &old_n);
    mfu_ingest *old = f->ing; /* the served run is the new session's now */
    f->ing = ing;
    mfu_ingest_free(old);
    f->fdev = (int64_t)sb->st_dev;
    f->fino = (int64_t)sb->st_ino;
    f->offset = offset;
    f->compressed = zipped;
    f->partial = partial;
    remember_head(f, fp);
    pthread_rwlock_wrlock(&f->run->rw);
    f->run->lines = mfu_ingest_get_stats(ing)->lines;
    pthread_rwlock_unlock(&f->run->rw);
    size_t n = mfu_run_count(run);
    if (!changed)
        return;
    f->dirty = true;
    if (first >= n && n == old_n)
        return; /* no row changed (the metadata or the observations did): nothing to send */
    bool reset = old_n > 0 && first + MFU__TAIL < old_n;
    if (old_n == 0 || reset)
        mfu__api_broadcast_run(s, f->run, reset);
    if (!reset)
        mfu__api_broadcast_rows(s, f->run, first);
}

/* Look at the file: read what was appended, or read it again when it is another file. */
static void update(mfu__follower *f, bool whole)
{
    double t0 = mfu__now();
    FILE *fp = fopen(f->path, "rb");
    struct stat sb;
    if (!fp || fstat(fileno(fp), &sb) != 0) {
        char msg[MFU_ERROR_MESSAGE_MAX];
        snprintf(msg, sizeof msg, "%s: cannot open (%s); still following", f->path,
                 strerror(errno));
        note(f, msg);
        if (fp)
            fclose(fp);
        return;
    }
    if (!same_file(f, fp, &sb)) {
        restart(f, fp, &sb, whole);
    } else {
        mfu_error e;
        memset(&e, 0, sizeof e);
        bool partial = false;
        mfu_status st = read_lines(f, fp, f->ing, &f->offset, whole, &partial, feed_served, &e);
        f->partial = partial;
        if (st == MFU_OK) {
            remember_head(f, fp);
            pthread_rwlock_wrlock(&f->run->rw);
            f->run->lines = mfu_ingest_get_stats(f->ing)->lines;
            pthread_rwlock_unlock(&f->run->rw);
        } else if (st != MFU_E_INVALID || !stopping(f->s)) {
            report(f, &e);
            f->partial_fed = true; /* the session failed: the next change starts afresh */
        }
    }
    fclose(fp);
    f->read_cost = mfu__now() - t0;
}

static void sync_store(mfu__follower *f)
{
    mfu__server *s = f->s;
    mfu_store_ingest_opts so;
    memset(&so, 0, sizeof so);
    so.run_name = f->name;
    so.ingest = s->opts.ingest;
    mfu_store_ingest_result res;
    mfu_error e;
    memset(&e, 0, sizeof e);
    double t0 = mfu__now();
    pthread_mutex_lock(&s->reg.store_mu);
    mfu_status st = mfu_store_ingest_path(s->reg.store, f->path, &so, &res, &e);
    pthread_mutex_unlock(&s->reg.store_mu);
    double now = mfu__now(), cost = now - t0;
    /* The store re-reads the whole log: keep it from holding the store most of the time. */
    f->next_sync =
        now + (10 * cost > MFU_SERVER_STORE_SYNC_MS / 1000.0 ? 10 * cost
                                                             : MFU_SERVER_STORE_SYNC_MS / 1000.0);
    f->dirty = false;
    if (st != MFU_OK && st != MFU_E_EMPTY) {
        char msg[MFU_ERROR_MESSAGE_MAX + MFU__NAME_BYTES + 64];
        snprintf(msg, sizeof msg, "run '%s' is served but not stored: %s", f->name, e.message);
        note(f, msg);
    }
}

/* Wait up to ms or until the server stops. */
static void nap(mfu__server *s, int ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&s->stop_mu);
    if (!s->stopping)
        pthread_cond_timedwait(&s->stop_cv, &s->stop_mu, &ts);
    pthread_mutex_unlock(&s->stop_mu);
}

static void *follow_main(void *arg)
{
    mfu__follower *f = arg;
    mfu__server *s = f->s;
    while (!stopping(s)) {
        double now = mfu__now();
        struct stat sb;
        if (stat(f->path, &sb) != 0) {
            if (!f->missing) {
                char msg[MFU_ERROR_MESSAGE_MAX];
                snprintf(msg, sizeof msg, "%s: not there (%s); waiting for it", f->path,
                         strerror(errno));
                note(f, msg);
            }
            f->missing = true;
            nap(s, s->poll_ms);
            continue;
        }
        f->missing = false;
        int64_t mt = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
        if (!f->have_sig || f->dev != (int64_t)sb.st_dev || f->ino != (int64_t)sb.st_ino ||
            f->size != (int64_t)sb.st_size || f->mtime_ns != mt) {
            f->have_sig = true;
            f->dev = (int64_t)sb.st_dev;
            f->ino = (int64_t)sb.st_ino;
            f->size = (int64_t)sb.st_size;
            f->mtime_ns = mt;
            f->pending = true;
            f->changed_at = now;
        }
        if (f->pending && now >= f->next_read) {
            f->pending = false;
            update(f, false);
            double wait = 4 * f->read_cost;
            f->next_read = mfu__now() + (wait > s->poll_ms / 1000.0 ? wait : 0);
        } else if (f->partial && !f->pending && now - f->changed_at >= 1.0) {
            update(f, true);
            f->partial = false;
        }
        if (f->dirty && now >= f->next_sync)
            sync_store(f);
        nap(s, s->poll_ms);
    }
    if (f->dirty)
        sync_store(f);
    return NULL;
}

mfu_status mfu__follow_start(mfu__server *s, mfu_error *err)
{
    size_t n = s->opts.nlogs;
    if (n == 0)
        return MFU_OK;
    s->followers = calloc(n, sizeof *s->followers);
    if (!s->followers)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    for (size_t i = 0; i < n; i++) {
        mfu__follower *f = calloc(1, sizeof *f);
        if (!f)
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
        s->followers[s->nfollowers++] = f;
        f->s = s;
        f->path = s->logs[i];
        f->buf = malloc(READ_BLOCK);
        if (!f->buf)
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
        if (n == 1 && s->run_name)
            mfu__strlcpy(f->name, s->run_name, sizeof f->name);
        else
            mfu_store_default_name(f->path, f->name, sizeof f->name);
        mfu_status st = mfu_store_check_name(f->name, err);
        if (st != MFU_OK)
            return st;
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->followers[j]->name, f->name) == 0)
                return mfu__fail_field(err, MFU_E_INVALID, "LOG",
                                       "%s and %s both make run '%s': give the logs distinct "
                                       "file names, or serve one of them with --run NAME",
                                       s->followers[j]->path, f->path, f->name);
    }
    for (size_t i = 0; i < n; i++) {
        mfu__follower *f = s->followers[i];
        f->run = mfu__reg_get(&s->reg, f->name, true);
        if (!f->run)
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
        pthread_rwlock_wrlock(&f->run->rw);
        f->run->live = true;
        f->run->followed = true;
        pthread_rwlock_unlock(&f->run->rw);
    }
    for (size_t i = 0; i < n; i++) {
        mfu__follower *f = s->followers[i];
        if (pthread_create(&f->th, NULL, follow_main, f) != 0)
            return mfu__fail(err, MFU_E_NOMEM, 0, "cannot start a follower thread");
        f->started = true;
    }
    return MFU_OK;
}

void mfu__follow_stop(mfu__server *s)
{
    for (size_t i = 0; i < s->nfollowers; i++) {
        mfu__follower *f = s->followers[i];
        if (f->started)
            pthread_join(f->th, NULL);
        if (f->run) {
            if (f->ing) /* the run stops borrowing the session's rows before they go */
                mfu__srun_unset(f->run, mfu_ingest_peek(f->ing));
            mfu__reg_put(&s->reg, f->run);
        }
        mfu_ingest_free(f->ing);
        free(f->buf);
        free(f);
    }
    free(s->followers);
    s->followers = NULL;
    s->nfollowers = 0;
}
