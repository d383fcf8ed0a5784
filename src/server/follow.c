/*
 * follow.c - one thread per log named on the command line, following it like `tail -F`.
 *
 * Every MFU_SERVER_FOLLOW_POLL_MS the thread stats the path. When the file named there changed
 * (device, inode, size or modification time), it is read again from its start through the
 * ingest API, up to its last complete line, and the new run replaces the run in memory: the
 * first row that differs says what changed, so growth sends the new steps to open pages, and a
 * truncated, rotated or rewritten file (another inode, fewer bytes, other rows) resets the run.
 * A last line without its newline is read once the file has stayed the same for a second (a
 * log that ends without one). A missing file is waited for.
 *
 * Reading from the start is what the ingest API allows today (a format needs the header and its
 * state; mfu_ingest cannot resume mid-file or hand out rows before finishing), so a re-read
 * costs the whole file: the thread waits at least 4x the last read's duration before the next
 * one, which bounds it to about a fifth of a core on a huge log. Rows reach the store through
 * mfu_store_ingest_path() at most every MFU_SERVER_STORE_SYNC_MS and once more at shutdown; the
 * store's own rules (resumed / restarted) keep it equal to the file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "server/internal.h"

#define READ_BLOCK (4L * 1024 * 1024) /* bytes read at a time; also the longest line kept */

typedef struct mfu__follower {
    mfu__server *s;
    const char *path;
    char name[MFU__NAME_BYTES];
    mfu__srun *run;
    pthread_t th;
    bool started;
    /* the file as last seen */
    bool have_sig;
    int64_t dev, ino, size, mtime_ns;
    bool pending, partial, dirty, missing;
    double changed_at, next_read, last_sync, read_cost;
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

/* Feed the file's complete lines (all of it when whole) to ing. *partial: bytes after the last
 * newline were held back. Compressed files are fed whole (they cannot be cut at a line). */
static mfu_status feed_lines(mfu__follower *f, FILE *fp, mfu_ingest *ing, bool whole, bool *partial,
                             mfu_error *err)
{
    unsigned char magic[4] = {0};
    size_t m = fread(magic, 1, sizeof magic, fp);
    rewind(fp);
    bool gz = m >= 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    bool zst =
        m >= 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd;
    *partial = false;
    if (gz || zst)
        return mfu_ingest_feed_file(ing, fp, f->path, err);
    char *buf = malloc(READ_BLOCK);
    if (!buf)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory reading %s", f->path);
    size_t have = 0;
    bool skipping = false; /* inside a line longer than READ_BLOCK: dropped */
    mfu_status st = MFU_OK;
    for (;;) {
        if (stopping(f->s)) {
            st = MFU_E_INVALID; /* abandoned: nothing is replaced */
            break;
        }
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
                have = 0;
                skipping = true;
            }
            continue;
        }
        size_t upto = (size_t)(nl - buf) + 1, start = 0;
        if (skipping) {
            char *first = memchr(buf, '\n', upto);
            start = (size_t)(first - buf) + 1;
            skipping = false;
        }
        if (upto > start)
            st = mfu_ingest_feed_buffer(ing, buf + start, upto - start, f->path, err);
        if (st != MFU_OK)
            break;
        memmove(buf, buf + upto, have - upto);
        have -= upto;
    }
    if (st == MFU_OK && have > 0 && !skipping) {
        if (whole)
            st = mfu_ingest_feed_buffer(ing, buf, have, f->path, err);
        else
            *partial = true;
    }
    free(buf);
    return st;
}

/* Read the file again and replace the run in memory; whole: include a last partial line. */
static void reread(mfu__follower *f, bool whole)
{
    mfu__server *s = f->s;
    double t0 = mfu__now();
    FILE *fp = fopen(f->path, "rb");
    if (!fp) {
        char msg[MFU_ERROR_MESSAGE_MAX];
        snprintf(msg, sizeof msg, "%s: cannot open (%s); still following", f->path,
                 strerror(errno));
        note(f, msg);
        return;
    }
    mfu_ingest *ing = NULL;
    mfu_run *run = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    bool partial = false;
    mfu_status st = mfu_ingest_new(&s->opts.ingest, &ing, &e);
    if (st == MFU_OK)
        st = feed_lines(f, fp, ing, whole, &partial, &e);
    fclose(fp);
    long lines = ing ? mfu_ingest_get_stats(ing)->lines : 0;
    if (st == MFU_OK)
        st = mfu_ingest_finish(ing, &run, &e);
    mfu_ingest_free(ing);
    f->read_cost = mfu__now() - t0;
    f->partial = partial;
    if (st != MFU_OK) {
        if (st == MFU_E_EMPTY) /* no step yet (a log that is starting): keep waiting */
            return;
        if (!stopping(s)) {
            char msg[MFU_ERROR_MESSAGE_MAX + 64];
            snprintf(msg, sizeof msg, "%s: %s; still following", f->path, e.message);
            note(f, msg);
        }
        return;
    }
    f->last_error[0] = '\0';
    size_t first = 0, old_n = 0;
    size_t n = mfu_run_count(run);
    mfu__srun_replace(&s->reg, f->run, run, &first, &old_n);
    pthread_rwlock_wrlock(&f->run->rw);
    f->run->lines = lines;
    pthread_rwlock_unlock(&f->run->rw);
    if (first >= n && n == old_n)
        return; /* nothing changed */
    f->dirty = true;
    /* Rows far behind the end changed: the file was truncated, rotated or rewritten. */
    bool reset = old_n > 0 && first + MFU_RUN_DEDUP_WINDOW + 1 < old_n;
    if (old_n == 0 || reset)
        mfu__api_broadcast_run(s, f->run, reset);
    if (!reset)
        mfu__api_broadcast_rows(s, f->run, first);
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
    pthread_mutex_lock(&s->reg.store_mu);
    mfu_status st = mfu_store_ingest_path(s->reg.store, f->path, &so, &res, &e);
    pthread_mutex_unlock(&s->reg.store_mu);
    f->last_sync = mfu__now();
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
            reread(f, false);
            double wait = 4 * f->read_cost;
            f->next_read = mfu__now() + (wait > s->poll_ms / 1000.0 ? wait : 0);
        } else if (f->partial && !f->pending && now - f->changed_at >= 1.0) {
            reread(f, true);
            f->partial = false;
        }
        if (f->dirty && now - f->last_sync >= MFU_SERVER_STORE_SYNC_MS / 1000.0)
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
        f->last_sync = -1e9;
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
        if (f->run)
            mfu__reg_put(&s->reg, f->run);
        free(f);
    }
    free(s->followers);
    s->followers = NULL;
    s->nfollowers = 0;
}
