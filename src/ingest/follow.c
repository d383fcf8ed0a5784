/*
 * follow.c - following a growing log file like `tail -F` (contract in ingest/follow.h; the
 * rules in docs/internals/ingest.md, "Following a log").
 *
 * State: the file as the last poll saw it (stat: device, inode, size, modification time), and
 * the session with what it has read: its file's identity, the bytes consumed (fed, or skipped
 * as part of a line over the limit), the bytes of a partial last line carried in buf, and the
 * first bytes of the file. A poll whose stat matches the last one reads nothing. Otherwise
 * the file is opened and either the bytes after what was read are read (pread from the
 * consumed offset plus the carried bytes), or, when it is no longer the file read, it is read
 * from its start into a fresh session, which takes the old one's place only once it has read
 * everything (a failed fresh read leaves the old one in place). A read that failed on the
 * file or on memory sets a time to try again (retry_at), with a wait that doubles.
 */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "ingest/follow.h"
#include "ingest/reader.h"
#include "util/file.h"
#include "util/util.h"

/* What a session has read of its file. */
typedef struct cursor {
    int64_t offset;   /* bytes consumed: fed, or skipped inside a line over the limit */
    size_t carry;     /* bytes after offset held in buf[0..carry): a line without its newline */
    bool skipping;    /* inside a line over the limit: skip to its newline */
    bool partial_fed; /* a last line without a newline was fed */
} cursor;

struct mfu__follow {
    const char *path;
    mfu__follow_opts o;
    size_t max_line; /* the sessions' line limit */
    /* the file as the last poll saw it */
    bool have_sig;
    int64_t dev, ino, size, mtime_ns;
    double changed_at; /* monotonic seconds of the last change seen */
    /* the session and what it read */
    mfu_ingest *ing;
    int64_t fdev, fino;
    cursor cur;
    bool compressed;   /* gzip / zstd: read whole */
    bool broken;       /* the session failed: the next change starts afresh */
    bool stopped;      /* the last read was abandoned (opts.stop) */
    double retry_at;   /* > 0: monotonic seconds from which a failed read is tried again */
    double retry_wait; /* the wait before the next try after a failure (0: none failed) */
    unsigned char head[MFU__FOLLOW_HEAD_BYTES];
    size_t head_len;
    mfu_run *preview; /* the file read whole while the session detects (opt-in) */
    char *buf;        /* cap + 1 bytes: carried partial line + one chunk (+ a newline) */
    size_t cap;
};

mfu_status mfu__follow_new(const char *path, const mfu__follow_opts *opts, mfu__follow **out,
                           mfu_error *err)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu__follow_new: NULL argument");
    mfu__follow *f = calloc(1, sizeof *f);
    if (!f)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    f->path = path;
    if (opts)
        f->o = *opts;
    /* the options are checked now (a bad --format or --map fails before the file exists) */
    mfu_ingest *probe = NULL;
    mfu_status st = mfu_ingest_new(&f->o.ingest, &probe, err);
    mfu_ingest_free(probe);
    if (st != MFU_OK) {
        free(f);
        return st;
    }
    f->max_line =
        f->o.ingest.max_line_bytes ? f->o.ingest.max_line_bytes : (size_t)MFU_INGEST_MAX_LINE_BYTES;
    f->cap = f->max_line + 1 + (size_t)MFU__FOLLOW_CHUNK_BYTES;
    f->buf = malloc(f->cap + 1);
    if (!f->buf) {
        free(f);
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    }
    *out = f;
    return MFU_OK;
}

void mfu__follow_free(mfu__follow *f)
{
    if (!f)
        return;
    mfu_ingest_free(f->ing);
    mfu_run_free(f->preview);
    free(f->buf);
    free(f);
}

mfu_ingest *mfu__follow_session(const mfu__follow *f)
{
    return f ? f->ing : NULL;
}

const mfu_run *mfu__follow_run(const mfu__follow *f)
{
    if (!f)
        return NULL;
    if (f->preview)
        return f->preview;
    return f->ing ? mfu_ingest_peek(f->ing) : NULL;
}

const char *mfu__follow_path(const mfu__follow *f)
{
    return f ? f->path : NULL;
}

/* Hand n bytes of lines to ing: through the caller's feed for the served session. */
static mfu_status feed(mfu__follow *f, mfu_ingest *ing, bool served, const char *p, size_t n,
                       mfu_error *err)
{
    if (served && f->o.feed)
        return f->o.feed(f->o.ctx, ing, p, n, f->path, err);
    return mfu_ingest_feed_buffer(ing, p, n, f->path, err);
}

/* Read fd from what c consumed (and carries) to its end and feed ing every run of complete
 * lines; whole: a last line without a newline too. *fed: bytes reached ing. */
static mfu_status read_lines(mfu__follow *f, int fd, mfu_ingest *ing, bool served, cursor *c,
                             bool whole, bool *fed, mfu_error *err)
{
    char *buf = f->buf;
    int64_t pos = c->offset + (int64_t)c->carry;
    mfu_status st;
    for (;;) {
        if (f->o.stop && f->o.stop(f->o.ctx)) {
            f->stopped = true;
            return mfu__fail(err, MFU_E_INVALID, 0, "%s: reading stopped", f->path);
        }
        ssize_t got = pread(fd, buf + c->carry, (size_t)MFU__FOLLOW_CHUNK_BYTES, (off_t)pos);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return mfu__fail(err, MFU_E_IO, 0, "%s: cannot read (%s)", f->path, strerror(errno));
        if (got == 0)
            break;
        pos += got;
        size_t have = c->carry + (size_t)got, start = 0;
        c->carry = 0;
        if (c->skipping) { /* the rest of a line over the limit, up to its newline */
            const char *nl = memchr(buf, '\n', have);
            if (!nl) {
                c->offset += (int64_t)have;
                continue;
            }
            start = (size_t)(nl - buf) + 1;
            c->offset += (int64_t)start;
            c->skipping = false;
        }
        size_t end = have;
        while (end > start && buf[end - 1] != '\n')
            end--;
        if (end > start) {
            st = feed(f, ing, served, buf + start, end - start, err);
            if (st != MFU_OK)
                return st;
            c->offset += (int64_t)(end - start);
            *fed = true;
        } else {
            end = start;
        }
        size_t rest = have - end;
        if (rest > f->max_line) {
            /* a line over the limit: one byte past the limit and a newline make the session
             * count it as too long, once; the rest of it is skipped */
            buf[end + f->max_line + 1] = '\n';
            st = feed(f, ing, served, buf + end, f->max_line + 2, err);
            if (st != MFU_OK)
                return st;
            *fed = true;
            c->offset += (int64_t)rest;
            c->skipping = true;
            rest = 0;
        }
        memmove(buf, buf + end, rest);
        c->carry = rest;
    }
    if (whole && c->carry > 0) {
        st = feed(f, ing, served, buf, c->carry, err);
        if (st != MFU_OK)
            return st;
        c->offset += (int64_t)c->carry;
        c->carry = 0;
        c->partial_fed = true;
        *fed = true;
    }
    return MFU_OK;
}

/* Keep the first bytes the session read (up to MFU__FOLLOW_HEAD_BYTES). */
static void remember_head(mfu__follow *f, int fd)
{
    size_t want = sizeof f->head;
    if ((int64_t)want > f->cur.offset)
        want = (size_t)f->cur.offset;
    if (f->head_len >= want)
        return;
    ssize_t got = pread(fd, f->head, want, 0);
    f->head_len = got > 0 ? (size_t)got : 0;
}

/* Is fd still the file the session read: same identity, not shorter, same first bytes, and
 * nothing in the way of reading on? */
static bool same_file(mfu__follow *f, int fd, const struct stat *sb)
{
    if (!f->ing || f->broken || f->compressed || f->cur.partial_fed ||
        (int64_t)sb->st_dev != f->fdev || (int64_t)sb->st_ino != f->fino ||
        (int64_t)sb->st_size < f->cur.offset + (int64_t)f->cur.carry)
        return false;
    unsigned char now[MFU__FOLLOW_HEAD_BYTES];
    if (f->head_len == 0)
        return true;
    ssize_t got = pread(fd, now, f->head_len, 0);
    return got == (ssize_t)f->head_len && memcmp(now, f->head, f->head_len) == 0;
}

/* Read the file from its start into a fresh session; it replaces the current one. */
static mfu_status fresh(mfu__follow *f, FILE *fp, const struct stat *sb, bool whole,
                        mfu__follow_event *ev, mfu_error *err)
{
    int fd = fileno(fp);
    unsigned char magic[4] = {0};
    ssize_t m = pread(fd, magic, sizeof magic, 0);
    bool zipped = m > 0 && mfu__reader_compression(magic, (size_t)m) != NULL;
    mfu_ingest *ing = NULL;
    mfu_status st = mfu_ingest_new(&f->o.ingest, &ing, err);
    cursor c;
    memset(&c, 0, sizeof c);
    bool fed = false;
    if (st == MFU_OK && zipped) {
        st = mfu_ingest_feed_file(ing, fp, f->path, err); /* from its start: nothing read fp */
        c.offset = (int64_t)sb->st_size;
    } else if (st == MFU_OK) {
        st = read_lines(f, fd, ing, false, &c, whole, &fed, err);
    }
    if (st != MFU_OK) {
        mfu_ingest_free(ing);
        f->cur.carry = 0; /* buf was overwritten: the old session reads those bytes again */
        return st;
    }
    if (f->o.on_fresh)
        f->o.on_fresh(f->o.ctx, ing, f->ing);
    mfu_ingest_free(f->ing);
    f->ing = ing;
    f->cur = c;
    f->fdev = (int64_t)sb->st_dev;
    f->fino = (int64_t)sb->st_ino;
    f->compressed = zipped;
    f->broken = false;
    f->head_len = 0;
    remember_head(f, fd);
    ev->fresh = true;
    ev->fed = true;
    return MFU_OK;
}

/* The preview: the file read whole while the session still detects the format. */
static mfu_status update_preview(mfu__follow *f, mfu_error *err)
{
    if (mfu_ingest_get_stats(f->ing)->format[0] != '\0') {
        mfu_run_free(f->preview);
        f->preview = NULL;
        return MFU_OK;
    }
    mfu_run *run = NULL;
    mfu_status st = mfu_ingest_path(f->path, &f->o.ingest, &run, NULL, err);
    if (st == MFU_E_EMPTY) { /* no step yet: an empty run rather than a failure */
        run = mfu_run_new();
        st = run ? MFU_OK : mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    }
    if (st != MFU_OK)
        return st;
    mfu_run_free(f->preview);
    f->preview = run;
    return MFU_OK;
}

static mfu_status not_regular(const mfu__follow *f, mfu_error *err)
{
    return mfu__fail(err, MFU_E_IO, 0,
                     "%s: not a regular file; follow a log file (for a stream, write it to a "
                     "file with tee and follow that)",
                     f->path);
}

/* Open the file and read on, or afresh when it is not the file read (mfu__follow_poll's
 * rules); whole: a last line without a newline too. */
static mfu_status read_file(mfu__follow *f, bool whole, mfu__follow_event *ev, mfu_error *err)
{
    FILE *fp = mfu__open_log(f->path, err); /* a directory is refused here */
    if (!fp)
        return MFU_E_IO;
    int fd = fileno(fp);
    struct stat sb;
    mfu_status st;
    if (fstat(fd, &sb) != 0) {
        st = mfu__fail(err, MFU_E_IO, 0, "%s: cannot read (%s)", f->path, strerror(errno));
    } else if (!S_ISREG(sb.st_mode)) {
        st = not_regular(f, err);
    } else {
        ev->read = true;
        f->stopped = false;
        if (!same_file(f, fd, &sb)) {
            st = fresh(f, fp, &sb, whole, ev, err);
        } else {
            st = read_lines(f, fd, f->ing, true, &f->cur, whole, &ev->fed, err);
            if (st == MFU_OK)
                remember_head(f, fd);
            else
                f->broken = !f->stopped; /* a stopped read left the session as it was */
        }
        if (st == MFU_OK && ev->fed && f->o.preview_while_detecting)
            st = update_preview(f, err);
    }
    fclose(fp);
    return st;
}

/* After a read that ended with st at now: a failure of the file or of memory is tried again
 * after a wait that doubles; anything else waits for the file to change. */
static void retry_after(mfu__follow *f, mfu_status st, double now)
{
    if ((st != MFU_E_IO && st != MFU_E_NOMEM) || f->stopped) {
        f->retry_at = 0;
        f->retry_wait = 0;
        return;
    }
    double first = f->o.retry_s > 0 ? f->o.retry_s : MFU__FOLLOW_RETRY_S;
    f->retry_wait = f->retry_wait > 0 ? 2 * f->retry_wait : first;
    if (f->retry_wait > MFU__FOLLOW_RETRY_MAX_S)
        f->retry_wait = MFU__FOLLOW_RETRY_MAX_S;
    f->retry_at = now + f->retry_wait;
}

mfu_status mfu__follow_poll(mfu__follow *f, bool flush, mfu__follow_event *ev, mfu_error *err)
{
    if (!f || !ev)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu__follow_poll: NULL argument");
    memset(ev, 0, sizeof *ev);
    struct stat ps;
    if (stat(f->path, &ps) != 0) {
        if (errno != ENOENT && errno != ENOTDIR)
            return mfu__fail(err, MFU_E_IO, 0, "%s: cannot look at it (%s); check the path",
                             f->path, strerror(errno));
        ev->missing = true; /* not there (yet, or any more): wait, like tail -F */
        ev->partial = f->cur.carry > 0;
        return MFU_OK;
    }
    if (!S_ISREG(ps.st_mode) && !S_ISDIR(ps.st_mode)) /* a pipe would block the open */
        return not_regular(f, err);
    double now = mfu__now();
    int64_t mt = (int64_t)ps.st_mtim.tv_sec * 1000000000 + (int64_t)ps.st_mtim.tv_nsec;
    bool changed = !f->have_sig || f->dev != (int64_t)ps.st_dev || f->ino != (int64_t)ps.st_ino ||
                   f->size != (int64_t)ps.st_size || f->mtime_ns != mt;
    if (changed) {
        f->have_sig = true;
        f->dev = (int64_t)ps.st_dev;
        f->ino = (int64_t)ps.st_ino;
        f->size = (int64_t)ps.st_size;
        f->mtime_ns = mt;
        f->changed_at = now;
    }
    bool settled =
        !changed && f->cur.carry > 0 && f->o.settle_s > 0 && now - f->changed_at >= f->o.settle_s;
    bool retry = f->retry_at > 0 && now >= f->retry_at;
    if (!changed && !settled && !flush && !retry) {
        ev->partial = f->cur.carry > 0;
        return MFU_OK;
    }
    mfu_status st = read_file(f, flush || settled, ev, err);
    retry_after(f, st, now);
    ev->partial = f->cur.carry > 0;
    return st;
}
