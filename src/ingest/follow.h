/*
 * ingest/follow.h - following a growing log file like `tail -F`: the one follower of
 * `mfu watch` (src/cli/cmd_watch.c) and `mfu serve LOG` (src/server/follow.c). Cross-module
 * header of the ingest module (docs/internals/ingest.md, "Following a log").
 *
 * A follower keeps one ingest session (mfu_ingest) on its path and, at each mfu__follow_poll,
 * feeds it the complete lines appended since the last poll; the session's run
 * (mfu_ingest_peek) grows in place, so following costs only the new bytes. The file is read
 * again from its start, into a fresh session that takes the old one's place, when it is no
 * longer the file the session read:
 *   - another file at the path (rotation: another device or inode);
 *   - fewer bytes than were read (truncation);
 *   - other first bytes than were read (rewritten in place);
 *   - a compressed file (gzip, zstd) that changed: it cannot be read from the middle;
 *   - after a last line without a newline was fed (flush, or settle_s): if the file grew after
 *     all, that line may have been cut;
 *   - after the session failed on a line (the next change of the file starts afresh).
 * A last line without a newline waits for its newline. A path that names no file (yet) is
 * waited for: the poll says so and keeps the session it has. A line longer than the session's
 * line limit is handed over cut to one byte past the limit, so that the session counts it as
 * too long once, and the rest of it is skipped.
 *
 * Not thread-safe: one thread polls a follower. Errors name the file, and the line when the
 * session's format rejected one (mfu_error.line).
 */
#ifndef MFU_INGEST_FOLLOW_H
#define MFU_INGEST_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>

#include "mfu/ingest.h"

/* Named limits. */
#define MFU__FOLLOW_CHUNK_BYTES (1L << 20) /* bytes read from the file per read call, at most */
#define MFU__FOLLOW_HEAD_BYTES 1024        /* first bytes compared to recognise the file */
#define MFU__FOLLOW_SETTLE_S 1.0 /* a still file's last line without newline: read after this */
#define MFU__FOLLOW_RETRY_S 1.0  /* first wait before a read that failed on I/O is tried again */
#define MFU__FOLLOW_RETRY_MAX_S 60.0 /* the wait doubles after each failure up to this */

typedef struct mfu__follow mfu__follow;

/* How a follower feeds and tells. Zero-initialise, then set what you need. */
typedef struct mfu__follow_opts {
    mfu_ingest_opts ingest; /* the sessions' options (copied; what it points to is borrowed
                               for the follower's life) */
    /* > 0: a last line without a newline is fed once the file has not changed for this many
     * seconds (a log that ended without one); 0: only mfu__follow_poll's flush feeds it. */
    double settle_s;
    /* Rows while the session is still detecting the format: the session holds its first lines
     * back (mfu_ingest_peek is empty until the format is known), so when set, the follower
     * also reads the whole file into a run of its own after each change and
     * mfu__follow_run() returns that run until the session knows the format. */
    bool preview_while_detecting;
    /* Feeds n bytes of complete lines to the follower's current session ing (name: the path,
     * for messages), instead of mfu_ingest_feed_buffer: for a caller that serves the session's
     * run to other threads and must lock around the feed. Must feed them (or fail). A fresh
     * session is read without it (nobody sees it yet). NULL: mfu_ingest_feed_buffer. */
    mfu_status (*feed)(void *ctx, mfu_ingest *ing, const char *p, size_t n, const char *name,
                       mfu_error *err);
    /* Told that fresh, which has read the file from its start, takes the place of old (NULL
     * the first time). Called before old is freed: a caller that serves old's run switches
     * to fresh's here. NULL: not told (the poll's event says fresh too). */
    void (*on_fresh)(void *ctx, mfu_ingest *fresh, mfu_ingest *old);
    /* Asked between blocks of a long read: true abandons the read (the poll fails with
     * MFU_E_INVALID; the follower stays usable). NULL: never. */
    bool (*stop)(void *ctx);
    /* > 0: the first wait, in seconds, before a read that failed on I/O or memory is tried
     * again although the file did not change (doubling after each failure up to
     * MFU__FOLLOW_RETRY_MAX_S); 0: MFU__FOLLOW_RETRY_S. */
    double retry_s;
    void *ctx;
} mfu__follow_opts;

/* What one poll did. */
typedef struct mfu__follow_event {
    bool missing; /* the path names no file now (the follower keeps what it had) */
    bool read;    /* the file was opened and read (it had changed, or settled, or flush) */
    bool fresh;   /* a fresh session read the file from its start and replaced the old one */
    bool fed;     /* lines reached the session (complete ones, or a settled last line) */
    bool partial; /* a last line without a newline is waiting */
} mfu__follow_event;

/* A follower of path (borrowed: it must outlive the follower). Reads nothing yet. opts may be
 * NULL (all defaults). Errors: the ingest options' (MFU_E_UNKNOWN format, MFU_E_INVALID map
 * or limit, checked now by starting a session), MFU_E_NOMEM. *out is NULL on failure. */
mfu_status mfu__follow_new(const char *path, const mfu__follow_opts *opts, mfu__follow **out,
                           mfu_error *err);

/* Free the follower and its session (NULL is fine). */
void mfu__follow_free(mfu__follow *f);

/* Look at the file once: when it changed since the last poll (identity, size or modification
 * time), read what was appended, or read it again from its start (above); when it did not,
 * read nothing (a settled last line aside). flush: read now even when nothing changed, and
 * feed a last line without a newline too (a one-shot view of the file as it is). *ev says
 * what happened (zeroed first). Errors: MFU_E_IO (cannot open or read; a directory), the
 * session's (MFU_E_PARSE with the line, MFU_E_LIMIT, MFU_E_NOMEM), MFU_E_INVALID (stopped).
 * After an error the follower stays usable: a failed fresh read keeps the session it had,
 * a session that failed is replaced at the next read. A failure of the file (MFU_E_IO: it
 * cannot be opened or read, as a network file system can fail for a while) or of memory
 * (MFU_E_NOMEM) is tried again at a later poll even when the file does not change, after
 * opts.retry_s, then twice as long after each further failure (up to
 * MFU__FOLLOW_RETRY_MAX_S); a failure of the content (MFU_E_PARSE, MFU_E_LIMIT) waits for
 * the file to change, and a stopped read for the next change or flush. */
mfu_status mfu__follow_poll(mfu__follow *f, bool flush, mfu__follow_event *ev, mfu_error *err);

/* The current session (NULL before the first successful read). Owned by the follower; valid
 * until a poll replaces it (on_fresh tells) or the follower is freed. */
mfu_ingest *mfu__follow_session(const mfu__follow *f);

/* The run read so far: the preview while the session is detecting (preview_while_detecting),
 * else the session's run (mfu_ingest_peek); NULL before the first read. Valid until the next
 * poll or free. */
const mfu_run *mfu__follow_run(const mfu__follow *f);

/* The path followed. */
const char *mfu__follow_path(const mfu__follow *f);

#endif /* MFU_INGEST_FOLLOW_H */
