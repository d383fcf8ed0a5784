/*
 * follow.c - one thread per log named on the command line, following it like `tail -F` with
 * the ingest module's follower (ingest/follow.h, the one `mfu watch` uses).
 *
 * The follower keeps an ingest session open on its file and feeds it the complete lines that
 * were appended since the last look (every MFU_SERVER_FOLLOW_POLL_MS, and no more often than
 * every 4x the last read's duration); the run being read (mfu_ingest_peek) is the run the
 * server serves, borrowed, so following costs only the new bytes. Each block of new lines is
 * parsed under the run's write lock (the follower's feed hook), then the rows from the first
 * one that changed (a new line can still merge into the last MFU_RUN_DEDUP_WINDOW rows) go to
 * open pages as a "steps" event.
 *
 * When the file is no longer the file the session read (rotated, truncated, rewritten, a
 * compressed file that changed, or after a last line without a newline was read: a log that
 * ended without one is read once it has been still for MFU__FOLLOW_SETTLE_S) the follower
 * reads it again from its start into a fresh session; its run replaces the served one (the
 * follower's on_fresh hook) and pages get a "run" event with "reset" when rows far behind its
 * end changed. A missing file is waited for; errors are logged once and following goes on (a
 * read that failed on the file is tried again by the follower, with a wait that doubles), and
 * the first read after an error is logged too.
 *
 * Rows reach the store through mfu_store_ingest_path() at most every MFU_SERVER_STORE_SYNC_MS
 * (or 10x the last write's duration, so the store is free most of the time) and once more at
 * shutdown; the store's own rules (resumed / restarted) keep it equal to the file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ingest/follow.h"
#include "server/internal.h"

typedef struct mfu__follower {
    mfu__server *s;
    const char *path;
    char name[MFU__NAME_BYTES];
    mfu__srun *run;
    pthread_t th;
    bool started;
    mfu__follow *fl; /* the file and the session reading it */
    bool dirty, missing;
    bool read_failed; /* the last read failed (the next one that works is logged) */
    double next_read, next_sync;
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

static bool stop_hook(void *ctx)
{
    mfu__follower *f = ctx;
    return stopping(f->s);
}

/* The follower's feed hook: new lines for the served session, under the run's write lock,
 * with the changed rows sent to pages. */
static mfu_status feed_served(void *ctx, mfu_ingest *ing, const char *p, size_t n, const char *name,
                              mfu_error *err)
{
    mfu__follower *f = ctx;
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
    mfu_status st = mfu_ingest_feed_buffer(ing, p, n, name, err);
    size_t first = 0, rows = 0;
    if (served) {
        r->run = mfu_ingest_peek(ing); /* the same run; the API promises it only till a feed */
        rows = mfu_run_count(r->run);
        first = mfu__srun_grew(&f->s->reg, r, old_n, tail, ntail, &meta, old_obs);
    }
    r->lines = mfu_ingest_get_stats(ing)->lines;
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

/* The follower's on_fresh hook: the fresh session's run, read from the file's start, is
 * served instead of the old session's (still alive: it is freed after this returns). */
static void serve_fresh(void *ctx, mfu_ingest *fresh, mfu_ingest *old)
{
    (void)old;
    mfu__follower *f = ctx;
    mfu__server *s = f->s;
    f->last_error[0] = '\0';
    size_t first = 0, old_n = 0;
    const mfu_run *run = mfu_ingest_peek(fresh);
    bool changed = mfu__srun_set(&s->reg, f->run, run, true, &first, &old_n);
    pthread_rwlock_wrlock(&f->run->rw);
    f->run->lines = mfu_ingest_get_stats(fresh)->lines;
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

/* Look at the file once: what the follower read went to the served run through its hooks. */
static void update(mfu__follower *f)
{
    double t0 = mfu__now();
    mfu__follow_event ev;
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status st = mfu__follow_poll(f->fl, false, &ev, &e);
    if (ev.read) { /* a long read: wait 4x as long before the next (the log is busy) */
        double cost = mfu__now() - t0, wait = 4 * cost;
        f->next_read = mfu__now() + (wait > f->s->poll_ms / 1000.0 ? wait : 0);
    }
    if (st != MFU_OK) {
        if (stopping(f->s))
            return; /* abandoned */
        char msg[MFU_ERROR_MESSAGE_MAX + 64];
        snprintf(msg, sizeof msg, "%s; still following", e.message);
        note(f, msg);
        f->read_failed = true;
        return;
    }
    if (ev.missing) {
        if (!f->missing) {
            char msg[MFU_ERROR_MESSAGE_MAX];
            snprintf(msg, sizeof msg, "%s: not there; waiting for it", f->path);
            note(f, msg);
        }
        f->missing = true;
        return;
    }
    f->missing = false;
    if (ev.read && f->read_failed) { /* read again after an error: say so */
        mfu__srv_log(f->s, "%s: read again after the error above", f->path);
        f->read_failed = false;
    }
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
        if (mfu__now() >= f->next_read)
            update(f);
        if (f->dirty && mfu__now() >= f->next_sync)
            sync_store(f);
        nap(s, s->poll_ms);
    }
    if (f->dirty)
        sync_store(f);
    return NULL;
}

mfu_status mfu__followers_start(mfu__server *s, mfu_error *err)
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
        mfu__follow_opts fo;
        memset(&fo, 0, sizeof fo);
        fo.ingest = s->opts.ingest;
        fo.settle_s = MFU__FOLLOW_SETTLE_S;
        fo.feed = feed_served;
        fo.on_fresh = serve_fresh;
        fo.stop = stop_hook;
        fo.ctx = f;
        mfu_status st = mfu__follow_new(f->path, &fo, &f->fl, err);
        if (st != MFU_OK)
            return st;
        if (n == 1 && s->run_name)
            mfu__strlcpy(f->name, s->run_name, sizeof f->name);
        else
            mfu_store_default_name(f->path, f->name, sizeof f->name);
        st = mfu_store_check_name(f->name, err);
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

void mfu__followers_stop(mfu__server *s)
{
    for (size_t i = 0; i < s->nfollowers; i++) {
        mfu__follower *f = s->followers[i];
        if (f->started)
            pthread_join(f->th, NULL);
        if (f->run) {
            mfu_ingest *ing = mfu__follow_session(f->fl);
            if (ing) /* the run stops borrowing the session's rows before they go */
                mfu__srun_unset(f->run, mfu_ingest_peek(ing));
            mfu__reg_put(&s->reg, f->run);
        }
        mfu__follow_free(f->fl);
        free(f);
    }
    free(s->followers);
    s->followers = NULL;
    s->nfollowers = 0;
}
